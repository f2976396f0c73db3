"""What the routers share: the service's state, the caller's identity, bounded request bodies, field checks,
models and conversations, the error format, and the run of a question."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from graph_store.errors import ConfigError, InputError, ModelError
from graph_store.settings import Settings
from kgrag.api import Answer, KGRag, Step, Token

if TYPE_CHECKING:
    from kgrag.server.jobs import Writers

MODES = ("full", "no_planning", "no_rerank", "naive", "propex")
CONVERSATION_ID = re.compile(r"^[A-Za-z0-9._:@-]{1,128}$")


@dataclass
class ServiceState:
    """What one app shares between its requests (``app.state.service``)."""

    settings: Settings
    indexes: dict[str, KGRag]  # by the name clients give, never a path
    writers: Writers
    checkpointer: Any = None  # the one given to create_app; None: opened from the settings when the app starts
    saver: Any = None  # the checkpointer in use, set when the app starts
    api_keys: list[bytes] = field(init=False)

    def __post_init__(self):
        self.api_keys = [k.get_secret_value().encode() for k in self.settings.api_keys]


async def service(request: Request) -> ServiceState:
    """Dependency: the app's shared state."""
    return request.app.state.service


Service = Annotated[ServiceState, Depends(service)]


def owner_of(request: Request, state: Service) -> str:
    """Dependency: the caller's identity, a fingerprint of its API key (never the key), or "open" without keys."""
    if not state.api_keys:
        return "open"
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip().encode()
    # every key compared in constant time, all of them, so timing tells nothing
    if not any([hmac.compare_digest(given, k) for k in state.api_keys]):
        raise HTTPException(401, "missing or wrong API key")
    return hashlib.sha256(b"kgrag-owner:" + given).hexdigest()[:16]


Owner = Annotated[str, Depends(owner_of)]


# --- errors -------------------------------------------------------------------------------------------


def error_response(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    """An error as OpenAI clients read it: {"error": {"message", "type"}}."""
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)


def public_error(exc: Exception) -> str:
    """What a client may read about a failure: no endpoint addresses, paths or stack traces."""
    if isinstance(exc, ModelError):
        return exc.public
    if isinstance(exc, (InputError, ConfigError)):
        return str(exc)
    return "internal error"


# --- request bodies -----------------------------------------------------------------------------------


async def read_body(request: Request, settings: Settings) -> bytes:
    """The body, refused as soon as it grows past the limit (a chunked upload has no length to check),
    and only as long as the client keeps sending (slow clients time out)."""
    chunks, size = [], 0

    async def receive() -> None:
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > settings.max_request_bytes:
                raise HTTPException(413, f"request larger than {settings.max_request_bytes} bytes")
            chunks.append(chunk)

    try:
        await asyncio.wait_for(receive(), timeout=settings.request_timeout)
    except TimeoutError:
        raise HTTPException(408, f"the request body did not arrive within {settings.request_timeout} s") from None
    return b"".join(chunks)


async def json_body(request: Request, state: Service) -> dict:
    """Dependency: the body as a JSON object (an empty body is {})."""
    body = await read_body(request, state.settings)
    try:
        data = json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise HTTPException(400, "body is not valid JSON") from None
    if not isinstance(data, dict):
        raise HTTPException(400, "body must be a JSON object")
    return data


JsonBody = Annotated[dict, Depends(json_body)]


def field_of(body: dict, name: str, kind: type | tuple, default: Any = None) -> Any:
    """``body[name]`` if it is absent, None or of ``kind``; else a 400 naming the field and the type."""
    value = body.get(name, default)
    if value is not None and not isinstance(value, kind) or (kind is str and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise HTTPException(400, f"'{name}' must be a {names.replace('str', 'string').replace('bool', 'boolean')}")
    return value


def check_question(text: str, settings: Settings) -> None:
    """A question is not empty and not longer than ``max_question_chars`` (413)."""
    if not re.sub(r"[\x00-\x1f\x7f-\x9f\s]+", "", text):  # control characters only: nothing is asked
        raise HTTPException(400, "the question is empty")
    if len(text) > settings.max_question_chars:
        raise HTTPException(413, f"question longer than {settings.max_question_chars} characters")


# --- indexes, models and conversations ----------------------------------------------------------------


def pick_model(state: ServiceState, model: str | None) -> tuple[str, KGRag, str]:
    """The index name, the index and the mode a model name ("INDEX" or "INDEX:MODE") picks; none is the first."""
    name, _, mode = (model or next(iter(state.indexes))).partition(":")
    if name not in state.indexes or (mode and mode not in MODES):
        models = ", ".join(f"{n}[:{'|'.join(MODES)}]" for n in state.indexes)
        raise HTTPException(404, f"unknown model {model!r}; available: {models}")
    return name, state.indexes[name], mode or "full"


def index_named(state: ServiceState, name: str) -> KGRag:
    """The index a path names, or a 404 listing the names there are."""
    if name not in state.indexes:
        raise HTTPException(404, f"no index {name!r}; available: {', '.join(state.indexes)}")
    return state.indexes[name]


def conversation_id(value: Any) -> str | None:
    """A client's conversation id, checked (None when the request has none)."""
    if value is None:
        return None
    if not isinstance(value, str) or not CONVERSATION_ID.match(value):
        raise HTTPException(400, "a conversation id is 1-128 letters, digits or . _ : @ -")
    return value


async def owned_thread(rag: KGRag, thread: str, owner: str) -> dict | None:
    """The thread's state if it exists and belongs to ``owner``; another owner's thread does not exist."""
    state = await rag.athread_state(thread)
    if not state.values:
        return None
    if (state.metadata or {}).get("owner") != owner:
        raise HTTPException(404, f"no conversation {thread!r}")
    return state.values


# --- answering ----------------------------------------------------------------------------------------


async def run_question(
    state: ServiceState,
    rag: KGRag,
    mode: str,
    inputs: Any,
    thread: str,
    owner: str,
    temporary: bool,
    extra: dict | None = None,
) -> AsyncIterator[Step | Token | Answer]:
    """The workflow's events for one question in ``thread``, stored as ``owner``'s; a ``temporary`` thread (a
    request without a conversation) is deleted afterwards, so such a request keeps nothing."""
    graph = "propex" if mode == "propex" else "pankrag"
    knobs = {} if mode == "propex" else {"mode": mode}
    knobs.update(extra or {})
    try:
        async for item in rag.astream(inputs, thread=thread, graph=graph, metadata={"owner": owner}, **knobs):
            yield item
    finally:
        if temporary:
            await state.saver.adelete_thread(thread)


def citations_for(answer: Answer, expose_paths: bool) -> list[dict]:
    """An answer's citations as JSON; server-side paths only when the settings expose them."""
    return [
        {
            "n": c.n,
            "title": c.title,
            "text": c.text,
            "doc_ids": c.doc_ids,
            "evidence_id": c.evidence_id,
            "kind": c.kind,
            **({"sources": c.sources} if expose_paths else {}),
        }
        for c in answer.citations
    ]
