"""What the routers share: the service's state, the caller's identity, bounded request bodies, field checks,
models and conversations, the error format, and the run of a question."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from fastapi import Depends, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse

from graph_store.errors import public_message
from graph_store.settings import Settings
from kgrag.api import Answer, KGRag, Step, Token
from kgrag.api import check_question as check_text

if TYPE_CHECKING:
    from kgrag.server.jobs import Writers

MODES = ("full", "no_planning", "no_rerank", "naive", "propex")
CONVERSATION_ID = re.compile(r"[A-Za-z0-9._:@-]{1,128}")


@dataclass
class ServiceState:
    """What one app shares between its requests (``app.state.service``)."""

    settings: Settings
    indexes: dict[str, KGRag]  # by the name clients give, never a path
    writers: Writers
    checkpointer: Any = None  # the one given to create_app; None: opened from the settings when the app starts
    saver: Any = None  # the checkpointer in use, set when the app starts
    api_keys: list[bytes] = field(init=False)
    conversations: Conversations = field(init=False)

    def __post_init__(self):
        self.api_keys = [k.get_secret_value().encode() for k in self.settings.api_keys]
        self.conversations = Conversations(self.settings.turn_wait)


async def service(request: Request) -> ServiceState:
    """Dependency: the app's shared state."""
    return request.app.state.service


Service = Annotated[ServiceState, Depends(service)]


def key_owner(authorization: str | None, api_keys: list[bytes]) -> str | None:
    """The identity an ``Authorization: Bearer KEY`` header gives: a fingerprint of the key (never the key), "open"
    when no keys are configured, None for a missing or wrong key. The HTTP service and ``kgrag mcp`` share it, so
    a key owns the same conversations at both."""
    if not api_keys:
        return "open"
    given = (authorization or "").removeprefix("Bearer ").strip().encode()
    # every key compared in constant time, all of them, so timing tells nothing
    if not any([hmac.compare_digest(given, k) for k in api_keys]):
        return None
    return hashlib.sha256(b"kgrag-owner:" + given).hexdigest()[:16]


def owner_of(request: Request, state: Service) -> str:
    """Dependency: the caller's identity (``key_owner``); a 401 for a missing or wrong key."""
    owner = key_owner(request.headers.get("authorization"), state.api_keys)
    if owner is None:
        raise HTTPException(401, "missing or wrong API key")
    return owner


Owner = Annotated[str, Depends(owner_of)]


# --- errors -------------------------------------------------------------------------------------------


def error_response(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    """An error as OpenAI clients read it: {"error": {"message", "type"}}."""
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)


def public_error(exc: Exception) -> str:
    """What a client may read about a failure: no endpoint addresses, paths or stack traces."""
    return public_message(exc)


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


def is_json(content_type: str) -> bool:
    """Whether a Content-Type names JSON (application/json, or a +json type)."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def parse_json(body: bytes, content_type: str) -> Any:
    """A request's JSON body (an empty one is {}). It must be sent as JSON: a browser sends a text/plain body
    across sites without asking, a JSON one only when the service allows it. Too deep a nesting and text that
    is not valid Unicode (a lone surrogate such as \\ud800, which JSON can spell) are refused here, not
    discovered halfway through an answer."""
    if body and not is_json(content_type):
        raise HTTPException(415, "send the body as JSON, with Content-Type: application/json")
    try:
        data = json.loads(body or b"{}")
        json.dumps(data, ensure_ascii=False).encode("utf-8")  # a lone surrogate cannot be encoded
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise HTTPException(400, "body is not valid JSON") from None
    except RecursionError:
        raise HTTPException(400, "body is nested too deeply") from None
    except UnicodeEncodeError:
        raise HTTPException(400, "body holds text that is not valid Unicode (a lone surrogate)") from None
    return data


async def json_body(request: Request, state: Service) -> dict:
    """Dependency: the body as a JSON object (an empty body is {})."""
    data = parse_json(await read_body(request, state.settings), request.headers.get("content-type", ""))
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
    """The library's check of a question (400 with its reason), except that one too long is a 413."""
    if len(text) > settings.max_question_chars:
        raise HTTPException(413, f"question longer than {settings.max_question_chars} characters")
    check_text(text, settings.max_question_chars)  # InputError: 400


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
    if not isinstance(value, str) or not CONVERSATION_ID.fullmatch(value):  # match() let "abc\n" through
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


@dataclass
class Turns:
    """The turns of one conversation under way in this process: the one running holds ``lock``."""

    owner: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    count: int = 0  # running and waiting


class Conversations:
    """One turn at a time per conversation, within this process: a turn waits up to ``wait`` seconds for the one
    before it (then 409). A conversation whose turns are under way belongs to their key, even before its first
    checkpoint is written: a second key sending the same new id gets 404, as for any conversation of another key.
    (Processes that share a PostgreSQL checkpointer do not see each other's turns: send a conversation's turns
    to one process.)"""

    def __init__(self, wait: float):
        self.wait = wait
        self._under_way: dict[str, Turns] = {}

    async def begin(self, rag: KGRag, thread: str, owner: str) -> Callable[[], None]:
        """Wait for the conversation's turn; returns the function that ends it (it may be called again)."""
        turns = self._under_way.setdefault(thread, Turns(owner))
        if turns.owner != owner:
            raise HTTPException(404, f"no conversation {thread!r}")
        turns.count += 1
        try:
            async with asyncio.timeout(self.wait):
                await turns.lock.acquire()
        except BaseException as exc:
            self._leave(thread, turns)
            if isinstance(exc, TimeoutError):
                message = (
                    f"conversation {thread!r} is still answering an earlier question; send this one when it is done"
                )
                raise HTTPException(409, message) from None
            raise
        ended = False

        def end() -> None:
            nonlocal ended
            if not ended:
                ended = True
                turns.lock.release()
                self._leave(thread, turns)

        try:
            await owned_thread(rag, thread, owner)  # started by another key before this process saw it
        except BaseException:
            end()
            raise
        return end

    def _leave(self, thread: str, turns: Turns) -> None:
        turns.count -= 1
        if turns.count == 0:
            self._under_way.pop(thread, None)


class EventStream(StreamingResponse):
    """A streamed reply whose events are closed however it ends (sent, the client gone, failed), then ``on_close``
    is called: Starlette leaves an unfinished generator to the garbage collector, which would keep a
    conversation's turn (and a request's temporary thread) until it runs."""

    def __init__(self, events: AsyncGenerator[str, None], media_type: str, on_close: Callable[[], None]):
        super().__init__(events, media_type=media_type)
        self.events, self.on_close = events, on_close

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            try:
                with anyio.CancelScope(shield=True):  # a cancelled request still closes its run
                    await self.events.aclose()
            finally:
                self.on_close()


def no_turn() -> None:
    """What ends the turn of a request without a conversation: nothing."""


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
    end_turn: Callable[[], None] = no_turn,
) -> AsyncGenerator[Step | Token | Answer, None]:
    """The workflow's events for one question in ``thread``, stored as ``owner``'s; a ``temporary`` thread (a
    request without a conversation) is deleted afterwards, so such a request keeps nothing. ``end_turn`` (from
    Conversations.begin) lets the conversation's next turn in when this one is over."""
    graph = "propex" if mode == "propex" else "pankrag"
    knobs = {} if mode == "propex" else {"mode": mode}
    knobs.update(extra or {})
    try:
        run = rag.astream(inputs, thread=thread, graph=graph, metadata={"owner": owner}, **knobs)
        async with aclosing(run):
            async for item in run:
                yield item
    finally:
        try:
            if temporary:
                await state.saver.adelete_thread(thread)
        finally:
            end_turn()


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
