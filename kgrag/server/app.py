"""The service's app: ``create_app`` and ``serve``."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from starlette.requests import ClientDisconnect

from agent.checkpoint import open_async_checkpointer
from agent.validation import MAX_ANSWER_CHARS
from graph_store.errors import ConfigError, InputError, KGRagError, ModelError
from graph_store.settings import Settings
from kgrag.api import Answer, KGRag, Step, Token

log = logging.getLogger("kgrag.server")
MODES = ("full", "no_planning", "no_rerank", "naive", "propex")
CONVERSATION_ID = re.compile(r"^[A-Za-z0-9._:@-]{1,128}$")
ROLES = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage, "developer": SystemMessage}
WEB_DIR = Path(__file__).parent.parent / "web"
OFFLINE_NOTE = "Answered offline: the answer was extracted from the documents, no language model was used."


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)


def public_error(exc: Exception) -> str:
    """What a client may read about a failure: no endpoint addresses, paths or stack traces."""
    if isinstance(exc, ModelError):
        return exc.public
    if isinstance(exc, (InputError, ConfigError)):
        return str(exc)
    return "internal error"


def citations_for(answer: Answer, expose_paths: bool) -> list[dict]:
    return [{"n": c.n, "title": c.title, "text": c.text, "doc_ids": c.doc_ids, "evidence_id": c.evidence_id,
             "kind": c.kind, **({"sources": c.sources} if expose_paths else {})} for c in answer.citations]


def chat_content(answer: Answer, expose_paths: bool) -> str:
    """The answer as a chat front end renders it: text with [n] marks, then a short Markdown list of sources."""
    lines = [answer.answer.strip()]
    if answer.citations:
        lines.append("\n**Sources**")
        for c in answer.citations:
            where = f" — `{', '.join(s for s in c.sources if s)}`" if expose_paths and any(c.sources) else ""
            lines.append(f"{c.n}. {c.title}{where}")
    return "\n".join(lines)


@dataclass
class Job:
    """A documents request, run in the background by the index's single writer."""
    id: str
    index: str
    owner: str
    action: str  # add | delete
    status: str = "queued"  # queued | running | done | failed
    detail: dict = field(default_factory=dict)
    created: float = field(default_factory=time.time)


class Writers:
    """One writer thread per index: documents jobs to an index run one after another, never interleaved,
    while queries go on answering from the last complete state."""

    def __init__(self):
        self.jobs: dict[str, Job] = {}
        self._pools: dict[str, ThreadPoolExecutor] = {}
        self._lock = threading.Lock()

    def submit(self, job: Job, work) -> Job:
        with self._lock:
            self.jobs[job.id] = job
            pool = self._pools.setdefault(job.index, ThreadPoolExecutor(max_workers=1, thread_name_prefix=job.index))

        def run() -> None:
            job.status = "running"
            try:
                job.detail.update(work())
                job.status = "done"
            except Exception as exc:  # noqa: BLE001 - the job's status says why; the trace goes to the log
                if not isinstance(exc, KGRagError):
                    log.exception("documents job %s failed", job.id)
                job.status, job.detail["error"] = "failed", public_error(exc)
        pool.submit(run)
        return job

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)


def create_app(settings: Settings, indexes: dict[str, KGRag], checkpointer: Any = None) -> FastAPI:
    """The service over named indexes. Without ``checkpointer``, the settings' one is opened (async)."""
    if not indexes:
        raise ConfigError("the service needs at least one index")
    writers = Writers()
    saver_holder: dict[str, Any] = {}

    async def prune_threads() -> None:
        """Conversations older than ``thread_retention_days`` go (run at start and every hour)."""
        while True:
            try:
                await _prune(saver_holder["saver"], settings.thread_retention_days)
            except Exception:  # noqa: BLE001 - pruning must never take the service down
                log.exception("pruning old conversations failed")
            await asyncio.sleep(3600)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        async def run_with(saver):
            saver_holder["saver"] = saver
            for rag in indexes.values():
                rag.use_checkpointer(saver)
            pruner = asyncio.create_task(prune_threads())
            try:
                yield
            finally:
                pruner.cancel()
                writers.close()

        if checkpointer is not None:
            async for _ in run_with(checkpointer):
                yield
            return
        async with open_async_checkpointer(settings.checkpointer_url) as saver:
            async for _ in run_with(saver):
                yield

    app = FastAPI(title="kgrag", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    keys = [k.get_secret_value().encode() for k in settings.api_keys]

    def owner_of(request: Request) -> str:
        """The caller's identity: a fingerprint of its API key (never the key), or "open" without keys."""
        if not keys:
            return "open"
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip().encode()
        # every key compared in constant time, all of them, so timing tells nothing
        if not any([hmac.compare_digest(given, k) for k in keys]):
            raise HTTPException(401, "missing or wrong API key")
        return hashlib.sha256(b"kgrag-owner:" + given).hexdigest()[:16]

    @app.middleware("http")
    async def limit_size(request: Request, call_next):
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > settings.max_request_bytes:
            return _error(413, f"request larger than {settings.max_request_bytes} bytes")
        return await call_next(request)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        return _error(exc.status_code, str(exc.detail), "authentication_error" if exc.status_code == 401 else
                      "invalid_request_error")

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception):
        if isinstance(exc, ClientDisconnect):
            log.info("client left before its request was read: %s %s", request.method, request.url.path)
            return Response(status_code=499)
        if isinstance(exc, KGRagError):
            status = 502 if isinstance(exc, ModelError) else 400
            return _error(status, public_error(exc), "upstream_error" if status == 502 else "invalid_request_error")
        log.exception("request failed")  # the trace stays in the server log, never in the response
        return _error(500, "internal error", "server_error")

    async def read_body(request: Request) -> bytes:
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
        except asyncio.TimeoutError:
            raise HTTPException(408, f"the request body did not arrive within {settings.request_timeout} s") from None
        return b"".join(chunks)

    async def read_json(request: Request) -> dict:
        body = await read_body(request)
        try:
            data = json.loads(body or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise HTTPException(400, "body is not valid JSON") from None
        if not isinstance(data, dict):
            raise HTTPException(400, "body must be a JSON object")
        return data

    def field_of(body: dict, name: str, kind: type | tuple, default: Any = None) -> Any:
        value = body.get(name, default)
        if value is not None and not isinstance(value, kind) or (kind is str and isinstance(value, bool)):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise HTTPException(400, f"'{name}' must be a {names.replace('str', 'string').replace('bool', 'boolean')}")
        return value

    def pick(model: str | None) -> tuple[str, KGRag, str]:
        name, _, mode = (model or next(iter(indexes))).partition(":")
        if name not in indexes or (mode and mode not in MODES):
            models = ", ".join(f"{n}[:{'|'.join(MODES)}]" for n in indexes)
            raise HTTPException(404, f"unknown model {model!r}; available: {models}")
        return name, indexes[name], mode or "full"

    def conversation(value: Any) -> str | None:
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

    async def run(rag: KGRag, mode: str, inputs: Any, thread: str, owner: str, temporary: bool,
                  extra: dict | None = None) -> AsyncIterator[Step | Token | Answer]:
        graph = "propex" if mode == "propex" else "pankrag"
        knobs = {} if mode == "propex" else {"mode": mode}
        knobs.update(extra or {})
        try:
            async for item in rag.astream(inputs, thread=thread, graph=graph, metadata={"owner": owner}, **knobs):
                yield item
        finally:
            if temporary:  # a request without a conversation keeps nothing
                await saver_holder["saver"].adelete_thread(thread)

    def chat_inputs(body: dict) -> tuple[list, str | None]:
        messages = field_of(body, "messages", list)
        if not messages:
            raise HTTPException(400, "'messages' must be a non-empty list")
        turns = []
        for n, m in enumerate(messages):
            if not isinstance(m, dict) or m.get("role") not in ROLES:
                raise HTTPException(400, f"messages[{n}]: 'role' must be one of {', '.join(ROLES)}")
            content = m.get("content")
            if isinstance(content, list):  # OpenAI content parts: only text parts are read
                if not all(isinstance(p, dict) and isinstance(p.get("text", ""), str) for p in content):
                    raise HTTPException(400, f"messages[{n}]: every content part needs a 'text' string")
                content = " ".join(p.get("text", "") for p in content if p.get("type", "text") == "text")
            if not isinstance(content, str):
                raise HTTPException(400, f"messages[{n}]: 'content' must be text")
            turns.append(ROLES[m["role"]](content))
        if not isinstance(turns[-1], HumanMessage):
            raise HTTPException(400, "the last message must be the user's")
        return turns, conversation(body.get("conversation_id"))

    def check_question(text: str) -> None:
        if not text.strip():
            raise HTTPException(400, "the question is empty")
        if len(text) > settings.max_question_chars:
            raise HTTPException(413, f"question longer than {settings.max_question_chars} characters")

    @app.get("/health")
    async def health():
        return {"status": "ok", "indexes": list(indexes)}

    @app.get("/v1/models")
    async def models(owner: str = Depends(owner_of)):
        names = [n if m == "full" else f"{n}:{m}" for n in indexes for m in MODES]
        return {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "kgrag"} for n in names]}

    @app.get("/v1/indexes")
    async def list_indexes(owner: str = Depends(owner_of)):
        out = []
        for name, rag in indexes.items():
            stats = await asyncio.to_thread(rag.stats)
            out.append({"name": name, "offline": rag.settings.offline, **stats})
        return {"indexes": out}

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request, owner: str = Depends(owner_of)):
        body = await read_json(request)
        if request.headers.get("x-conversation-id") and "conversation_id" not in body:
            body["conversation_id"] = request.headers["x-conversation-id"]
        name, rag, mode = pick(field_of(body, "model", str))
        stream = field_of(body, "stream", bool, False)
        turns, conv = chat_inputs(body)
        check_question(turns[-1].content)
        if conv is not None:
            await owned_thread(rag, conv, owner)
            inputs, thread = [turns[-1]], conv  # the thread holds the history: send only the new turn
        else:
            inputs, thread = [t for t in turns if not isinstance(t, SystemMessage)], f"req-{uuid.uuid4().hex}"
        model = body.get("model") or name
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        expose = settings.expose_source_paths

        def kgrag_fields(answer: Answer) -> dict:
            return {"thread_id": thread if conv else None, "conversation_id": conv, "offline": answer.offline,
                    "confidence": answer.confidence, "citations": citations_for(answer, expose),
                    "fallbacks": answer.fallbacks}

        def usage_of(answer: Answer) -> dict:
            prompt, completion = answer.usage.get("input_tokens", 0), answer.usage.get("output_tokens", 0)
            return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

        if not stream:
            steps, answer = [OFFLINE_NOTE + "\n"] if rag.settings.offline else [], None
            async for item in run(rag, mode, inputs, thread, owner, conv is None):
                if isinstance(item, Step) and item.text:
                    steps.append(item.text)
                elif isinstance(item, Answer):
                    answer = item
            message = {"role": "assistant", "content": chat_content(answer, expose), "reasoning_content": "".join(steps)}
            return {"id": completion_id, "object": "chat.completion", "created": created, "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": usage_of(answer), "kgrag": kgrag_fields(answer)}

        def chunk(delta: dict, finish: str | None = None, extra: dict | None = None) -> str:
            data = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **(extra or {})}
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

        async def events():
            yield chunk({"role": "assistant", "content": ""})
            if rag.settings.offline:
                yield chunk({"reasoning_content": OFFLINE_NOTE + "\n"})
            streamed = ""
            try:
                async for item in run(rag, mode, inputs, thread, owner, conv is None):
                    if isinstance(item, Step) and item.text:
                        yield chunk({"reasoning_content": item.text})
                    elif isinstance(item, Token):
                        if len(streamed) < MAX_ANSWER_CHARS:  # a runaway reply is not forwarded (it is rejected)
                            yield chunk({"content": item.text[: MAX_ANSWER_CHARS - len(streamed)]})
                        streamed += item.text
                    elif isinstance(item, Answer):
                        text = chat_content(item, expose)
                        if streamed.strip() == item.answer.strip():  # the answer streamed already: add the sources
                            text = text[len(item.answer.strip()):]
                        elif streamed:  # the model's streamed answer was rejected: the one that stands follows
                            text = "\n\n" + text
                        yield chunk({"content": text})
                        yield chunk({}, "stop", {"usage": usage_of(item), "kgrag": kgrag_fields(item)})
            except Exception as exc:  # noqa: BLE001 - the client gets a clean end and the reason, the log the trace
                if not isinstance(exc, KGRagError):
                    log.exception("streamed request failed")
                yield chunk({"content": f"[error: {public_error(exc)}]"}, "stop", {"error": public_error(exc)})
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    @app.post("/v1/ask")
    async def ask(request: Request, owner: str = Depends(owner_of)):
        """Native: {"question", "conversation_id"?, "model"?, "graph"?, knobs?}; structured events as SSE,
        or JSON lines with ?format=jsonl. The last event is always an answer or an error."""
        body = await read_json(request)
        question = field_of(body, "question", str)
        if question is None:
            raise HTTPException(400, "'question' must be a string")
        check_question(question)
        name, rag, mode = pick(field_of(body, "model", str))
        if field_of(body, "graph", str) == "propex":
            mode = "propex"
        conv = conversation(body.get("conversation_id"))
        if conv is not None:
            await owned_thread(rag, conv, owner)
        thread = conv or f"req-{uuid.uuid4().hex}"
        jsonl = request.query_params.get("format") == "jsonl"
        extra = _ask_knobs(body)

        def line(event: dict) -> str:
            text = json.dumps(event, ensure_ascii=False, default=str)
            return f"{text}\n" if jsonl else f"data: {text}\n\n"

        async def events():
            try:
                async for item in run(rag, mode, question, thread, owner, conv is None, extra):
                    if isinstance(item, Step):
                        yield line({"type": "step", "event": item.event, "text": item.text, "data": item.data})
                    elif isinstance(item, Token):
                        yield line({"type": "token", "text": item.text})
                    else:
                        yield line({"type": "answer", "answer": item.answer, "short_answer": item.short_answer,
                                    "confidence": item.confidence, "offline": item.offline,
                                    "citations": citations_for(item, settings.expose_source_paths),
                                    "fallbacks": item.fallbacks, "conversation_id": conv})
            except Exception as exc:  # noqa: BLE001 - every stream ends with an answer or an error event
                if not isinstance(exc, KGRagError):
                    log.exception("ask failed")
                yield line({"type": "error", "error": public_error(exc)})

        return StreamingResponse(events(), media_type="application/x-ndjson" if jsonl else "text/event-stream")

    @app.get("/v1/threads/{thread_id}")
    async def thread(thread_id: str, model: str | None = None, owner: str = Depends(owner_of)):
        _, rag, _ = pick(model)
        values = await owned_thread(rag, conversation(thread_id), owner)
        if values is None:
            raise HTTPException(404, f"no conversation {thread_id!r}")
        return {"thread_id": thread_id, "turn": values.get("turn"), "plan": values.get("plan", []),
                "planner": values.get("planner"), "plan_notes": values.get("plan_notes", []),
                "subquestions": list(values.get("subquestions", {}).values()), "question": values.get("asked"),
                "answer": values.get("answer"), "short_answer": values.get("short_answer"),
                "confidence": values.get("confidence"), "offline": values.get("offline"),
                "evidence": values.get("evidence", []),
                "citations": [{k: v for k, v in c.items() if k != "sources" or settings.expose_source_paths}
                              for c in values.get("citations", [])],
                "messages": [{"role": m.type, "content": m.content} for m in values.get("messages", [])]}

    # --- documents ------------------------------------------------------------------------------------

    def index_named(name: str) -> KGRag:
        if name not in indexes:
            raise HTTPException(404, f"no index {name!r}; available: {', '.join(indexes)}")
        return indexes[name]

    @app.get("/v1/indexes/{name}/documents")
    async def list_documents(name: str, owner: str = Depends(owner_of)):
        return {"documents": await asyncio.to_thread(index_named(name).documents)}

    @app.post("/v1/indexes/{name}/documents", status_code=202)
    async def add_documents(name: str, request: Request, owner: str = Depends(owner_of)):
        """JSON {"documents": [{"text", "title"?, "id"?}]} or a multipart upload of .txt/.md files."""
        rag = index_named(name)
        records = await _documents_in(request, read_body)
        job = Job(uuid.uuid4().hex[:16], name, owner, "add", detail={"documents": len(records)})

        def progress(step: str, done: int, total: int) -> None:  # shown by GET /v1/jobs/{id} while it runs
            job.detail["progress"] = {"step": step, "done": done, "total": total}

        def work() -> dict:
            summary = rag.insert(records, progress=progress)
            job.detail.pop("progress", None)
            return {"added": summary.added, "replaced": summary.replaced, "unchanged": summary.unchanged,
                    "failed_chunks": summary.stats.get("failed_chunks", 0), "notices": summary.notices}
        writers.submit(job, work)
        return job_view(job)

    @app.delete("/v1/indexes/{name}/documents/{doc_id}", status_code=202)
    async def delete_document(name: str, doc_id: str, owner: str = Depends(owner_of)):
        rag = index_named(name)
        job = Job(uuid.uuid4().hex[:16], name, owner, "delete", detail={"document": doc_id})
        writers.submit(job, lambda: {"deleted": rag.delete([doc_id]).deleted})
        return job_view(job)

    def job_view(job: Job) -> dict:
        return {"job_id": job.id, "index": job.index, "action": job.action, "status": job.status, **job.detail,
                "status_url": f"/v1/jobs/{job.id}"}

    @app.get("/v1/jobs/{job_id}")
    async def job_status(job_id: str, owner: str = Depends(owner_of)):
        job = writers.jobs.get(job_id)
        if job is None or job.owner != owner:
            raise HTTPException(404, f"no job {job_id!r}")
        return job_view(job)

    # --- the graph around an answer (the web page's viewer) ----------------------------------------------

    @app.get("/v1/indexes/{name}/graph")
    async def answer_graph(name: str, entities: str = "", chunks: str = "", limit: int = 40,
                           owner: str = Depends(owner_of)):
        """The entities (ids or names) and passages (chunk ids) given, comma-separated, with the entities those
        passages mention most, up to ``limit`` nodes: positions in the unit square, facts and passages."""
        store = await asyncio.to_thread(index_named(name).graph_snapshot_store)
        from graph_store.neighbourhood import answer_subgraph

        return await asyncio.to_thread(answer_subgraph, store, _id_list(entities), _id_list(chunks),
                                       max(1, min(limit, 150)))

    @app.get("/v1/indexes/{name}/graph/expand")
    async def expand_graph(name: str, entity: str, shown: str = "", x: float = 0.5, y: float = 0.5,
                           limit: int = 12, owner: str = Depends(owner_of)):
        """An entity's neighbours that are not ``shown`` yet, placed around (x, y), with their edges to what is."""
        store = await asyncio.to_thread(index_named(name).graph_snapshot_store)
        from graph_store.neighbourhood import expand_entity

        result = await asyncio.to_thread(expand_entity, store, entity, _id_list(shown), (x, y), max(1, min(limit, 50)))
        if result["entity"] is None:
            raise HTTPException(404, f"no entity {entity!r} in index {name!r}")
        return result

    # --- the web page ---------------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def page():
        index = WEB_DIR / "index.html"
        if not index.exists():
            return JSONResponse({"service": "kgrag", "api": "/v1"})
        return FileResponse(index)

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str):
        path = (WEB_DIR / name).resolve()
        if path.parent != WEB_DIR.resolve() or not path.is_file():
            raise HTTPException(404, "not found")
        return FileResponse(path)

    return app


async def _documents_in(request: Request, read_body) -> list[dict]:
    """Documents of a request: JSON records, or uploaded .txt/.md files (UTF-8)."""
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        body = await read_body(request)
        from starlette.datastructures import UploadFile
        from starlette.formparsers import MultiPartParser

        async def replay():
            yield body
            yield b""
        form = await MultiPartParser(request.headers, replay()).parse()
        records = []
        for key, value in form.multi_items():
            if not isinstance(value, UploadFile):
                continue
            suffix = Path(value.filename or "").suffix.lower()
            if suffix not in (".txt", ".md", ".markdown"):
                raise HTTPException(400, f"{value.filename}: only .txt and .md files are indexed")
            data = await value.read()
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise HTTPException(400, f"{value.filename}: not UTF-8 text") from None
            if not text.strip():
                raise HTTPException(400, f"{value.filename}: empty file")
            title = next((ln.lstrip("#").strip() for ln in text.splitlines()[:5] if ln.startswith("#")),
                         Path(value.filename).stem.replace("_", " "))
            records.append({"text": text, "title": title, "source": f"upload:{Path(value.filename).name}"})
    else:
        try:
            data = json.loads(await read_body(request) or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise HTTPException(400, "body is not valid JSON") from None
        records = data.get("documents") if isinstance(data, dict) else None
        if not isinstance(records, list):
            raise HTTPException(400, "send {\"documents\": [{\"text\": ..., \"title\"?: ..., \"id\"?: ...}]} "
                                     "or upload .txt/.md files as multipart/form-data")
        for n, r in enumerate(records):
            if not isinstance(r, dict) or not isinstance(r.get("text"), str) or not r["text"].strip():
                raise HTTPException(400, f"documents[{n}] needs a non-empty 'text' string")
            for key in ("title", "id"):
                if r.get(key) is not None and not isinstance(r[key], str):
                    raise HTTPException(400, f"documents[{n}].{key} must be a string")
            r["source"] = f"api:{r.get('id') or n}"
    if not records:
        raise HTTPException(400, "no documents in the request")
    return records


def _ask_knobs(body: dict) -> dict:
    """The web page's advanced knobs of /v1/ask: "route" (plan|local|community|ppr|dense) and "alpha" (the weight
    of R for specific questions, beta = 1 - alpha); checked here, so a bad one is a 400 before the stream starts."""
    knobs: dict = {}
    route = body.get("route")
    if route is not None:
        if route not in ("plan", "local", "community", "ppr", "dense"):
            raise HTTPException(400, "'route' must be one of plan, local, community, ppr, dense")
        knobs["route_policy"] = route
    alpha = body.get("alpha")
    if alpha is not None:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
            raise HTTPException(400, "'alpha' must be a number from 0 to 1")
        knobs.update(alpha_specific=float(alpha), beta_specific=round(1 - float(alpha), 6))
    return knobs


def _id_list(value: str, limit: int = 200) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()][:limit]


async def _prune(saver: Any, days: float) -> int:
    """Delete conversations whose newest checkpoint is older than ``days``."""
    if days <= 0:
        return 0
    from datetime import datetime, timedelta, timezone

    cutoff = (datetime.now(timezone.utc) - timedelta(days=days)).isoformat()
    newest: dict[str, str] = {}
    async for item in saver.alist(None):
        thread = item.config["configurable"]["thread_id"]
        newest[thread] = max(newest.get(thread, ""), item.checkpoint["ts"])
    old = [t for t, ts in newest.items() if ts < cutoff]
    for thread in old:
        await saver.adelete_thread(thread)
    return len(old)


def serve(settings: Settings, named: list[str] | None, host: str, port: int) -> None:
    """``kgrag serve``: open the indexes (each must exist), then run uvicorn."""
    import sys

    import uvicorn

    if named and any("=" not in item for item in named):
        raise InputError("--index takes NAME=PATH")
    pairs = dict(item.split("=", 1) for item in named) if named else {"kgrag": str(settings.index_dir)}
    indexes = {}
    for name, path in pairs.items():
        # an index that cannot be opened stops the start, with its reason
        indexes[name] = KGRag(settings=settings.replace(index_dir=Path(path))).open()
    if not settings.api_keys:
        print("kgrag serve: warning: no api_keys configured, the API is open to anyone who can reach it",
              file=sys.stderr)
    print(f"serving {', '.join(indexes)} on http://{host}:{port} (web page: /, OpenAI base URL: /v1)")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    uvicorn.run(create_app(settings, indexes), host=host, port=port, log_level="warning",
                timeout_keep_alive=5, limit_concurrency=settings.max_connections)
