"""HTTP service: an OpenAI-compatible chat-completions endpoint (streamed or not) and a native API.

Chat front ends work by changing their base URL. In a stream, the workflow's steps (plan,
sub-questions, sub-answers) come first as ``reasoning_content`` deltas, which front ends show as
"thinking" or ignore, then the answer as ``content`` deltas. A conversation id (``conversation_id``
in the body, or the ``X-Conversation-Id`` header) is a checkpoint thread, so follow-ups see earlier
turns; without one, each request is its own thread and the messages it carries are the history.
The model name picks the index and mode: ``INDEX`` or ``INDEX:MODE`` (MODE: full, no_planning,
no_rerank, naive, propex).
"""

from __future__ import annotations

import hmac
import json
import logging
import time
import uuid
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from agent.checkpoint import open_async_checkpointer
from agent.graph import build_pankrag_graph, build_propex_graph
from agent.nodes import describe_event
from agent.resources import Resources
from graph_store.errors import ConfigError, KGRagError
from graph_store.settings import Settings

log = logging.getLogger("kgrag.server")
MODES = ("full", "no_planning", "no_rerank", "naive", "propex")


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)


def create_app(settings: Settings, indexes: dict[str, Resources], checkpointer: Any = None) -> FastAPI:
    """The service over named, opened indexes. Without ``checkpointer``, the settings' one is opened."""
    if not indexes:
        raise ConfigError("the service needs at least one index")
    graphs: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if checkpointer is not None:
            graphs.update(pankrag=build_pankrag_graph(checkpointer), propex=build_propex_graph(checkpointer))
            yield
            return
        async with open_async_checkpointer(settings.checkpointer_url) as saver:
            graphs.update(pankrag=build_pankrag_graph(saver), propex=build_propex_graph(saver))
            yield

    app = FastAPI(title="kgrag", lifespan=lifespan, docs_url=None, redoc_url=None)
    keys = [k.get_secret_value().encode() for k in settings.api_keys]

    def authorised(request: Request) -> None:
        if not keys:
            return
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip().encode()
        # every key compared in constant time, all of them, so timing tells nothing
        if not any([hmac.compare_digest(given, k) for k in keys]):
            raise HTTPException(401, "missing or wrong API key")

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
        log.exception("request failed")  # the trace stays in the server log, never in the response
        return _error(500, "internal error", "server_error")

    async def read_json(request: Request) -> dict:
        body = await request.body()
        if len(body) > settings.max_request_bytes:
            raise HTTPException(413, f"request larger than {settings.max_request_bytes} bytes")
        try:
            data = json.loads(body or b"{}")
        except json.JSONDecodeError:
            raise HTTPException(400, "body is not valid JSON") from None
        if not isinstance(data, dict):
            raise HTTPException(400, "body must be a JSON object")
        return data

    def pick(model: str | None) -> tuple[Resources, str]:
        name, _, mode = (model or next(iter(indexes))).partition(":")
        if name not in indexes or (mode and mode not in MODES):
            models = ", ".join(f"{n}[:{'|'.join(MODES)}]" for n in indexes)
            raise HTTPException(404, f"unknown model {model!r}; available: {models}")
        return indexes[name], mode or "full"

    def check_question(text: str) -> str:
        text = text.strip()
        if not text:
            raise HTTPException(400, "the question is empty")
        if len(text) > settings.max_question_chars:
            raise HTTPException(413, f"question longer than {settings.max_question_chars} characters")
        return text

    async def run(resources: Resources, mode: str, inputs: dict, thread: str) -> AsyncIterator[tuple[str, Any]]:
        """("step", text) and ("token", text) while the graph runs, then ("done", final state values)."""
        graph = graphs["propex" if mode == "propex" else "pankrag"]
        config = {"configurable": {"thread_id": thread, "resources": resources,
                                   "mode": "full" if mode == "propex" else mode},
                  "max_concurrency": settings.max_concurrency}
        async for kind, chunk in graph.astream(inputs, config, stream_mode=["custom", "messages"]):
            if kind == "custom" and (text := describe_event(chunk)):
                yield "step", text
            elif kind == "messages" and chunk[1].get("langgraph_node") == "answer" and chunk[0].content:
                yield "token", chunk[0].content
        yield "done", (await graph.aget_state(config)).values

    def chat_inputs(body: dict) -> tuple[dict, str]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict) \
                or messages[-1].get("role") != "user":
            raise HTTPException(400, "'messages' must be a list ending with a user message")
        conversation = body.get("conversation_id")
        turns = []
        for m in messages:
            content = m.get("content") if isinstance(m, dict) else None
            if isinstance(content, list):  # OpenAI content parts
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            if not isinstance(content, str):
                raise HTTPException(400, "every message needs text content")
            role = m.get("role")
            turns.append(HumanMessage(content) if role == "user" else AIMessage(content) if role == "assistant"
                         else SystemMessage(content))
        check_question(turns[-1].content)
        if conversation:  # the thread has the history: send only the new turn
            return {"messages": [turns[-1]]}, f"conv-{conversation}"
        return {"messages": [t for t in turns if not isinstance(t, SystemMessage)]}, f"req-{uuid.uuid4().hex}"

    @app.get("/health")
    async def health():
        return {"status": "ok", "indexes": list(indexes)}

    @app.get("/v1/models", dependencies=[Depends(authorised)])
    async def models():
        names = [n if m == "full" else f"{n}:{m}" for n in indexes for m in MODES]
        return {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "kgrag"} for n in names]}

    @app.get("/v1/indexes", dependencies=[Depends(authorised)])
    async def list_indexes():
        return {"indexes": [{"name": n, "offline": r.offline, **r.index.stats()} for n, r in indexes.items()]}

    @app.post("/v1/chat/completions", dependencies=[Depends(authorised)])
    async def chat_completions(request: Request):
        body = await read_json(request)
        if request.headers.get("x-conversation-id"):
            body.setdefault("conversation_id", request.headers["x-conversation-id"])
        resources, mode = pick(body.get("model"))
        inputs, thread = chat_inputs(body)
        model = body.get("model") or next(iter(indexes))
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())

        if not body.get("stream"):
            steps, final = [], {}
            async for kind, value in run(resources, mode, inputs, thread):
                if kind == "step":
                    steps.append(value)
                elif kind == "done":
                    final = value
            message = {"role": "assistant", "content": final.get("answer", ""), "reasoning_content": "".join(steps)}
            return {"id": completion_id, "object": "chat.completion", "created": created, "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                    "kgrag": {"thread_id": thread, "citations": final.get("citations", [])}}

        def chunk(delta: dict, finish: str | None = None, extra: dict | None = None) -> str:
            data = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **(extra or {})}
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

        async def stream():
            yield chunk({"role": "assistant", "content": ""})
            tokens = False
            try:
                async for kind, value in run(resources, mode, inputs, thread):
                    if kind == "step":
                        yield chunk({"reasoning_content": value})
                    elif kind == "token":
                        tokens = True
                        yield chunk({"content": value})
                    elif kind == "done" and not tokens:  # offline: the extracted answer in one piece
                        yield chunk({"content": value.get("answer", "")})
                    if kind == "done":
                        yield chunk({}, "stop", {"kgrag": {"thread_id": thread, "citations": value.get("citations", [])}})
            except KGRagError as exc:
                yield chunk({"content": f"[error: {exc}]"}, "stop")
            except Exception:  # noqa: BLE001 - the client gets a clean end, the log gets the trace
                log.exception("streamed request failed")
                yield chunk({"content": "[error: internal error]"}, "stop")
            yield "data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    @app.post("/v1/ask", dependencies=[Depends(authorised)])
    async def ask(request: Request):
        """Native: {"question", "conversation_id"?, "model"?}; events as SSE, or JSON lines with ?format=jsonl."""
        body = await read_json(request)
        resources, mode = pick(body.get("model"))
        question = check_question(str(body.get("question", "")))
        thread = f"conv-{body['conversation_id']}" if body.get("conversation_id") else f"req-{uuid.uuid4().hex}"
        jsonl = request.query_params.get("format") == "jsonl"

        async def events():
            async for kind, value in run(resources, mode, {"question": question}, thread):
                event = ({"type": kind, "text": value} if kind != "done" else
                         {"type": "answer", "answer": value.get("answer"), "citations": value.get("citations", []),
                          "thread_id": thread})
                line = json.dumps(event, ensure_ascii=False)
                yield f"{line}\n" if jsonl else f"data: {line}\n\n"

        return StreamingResponse(events(), media_type="application/x-ndjson" if jsonl else "text/event-stream")

    @app.get("/v1/threads/{thread_id}", dependencies=[Depends(authorised)])
    async def thread(thread_id: str):
        state = await graphs["pankrag"].aget_state({"configurable": {"thread_id": thread_id}})
        if not state.values:
            raise HTTPException(404, f"no thread {thread_id!r}")
        values = state.values
        return {"thread_id": thread_id, "turn": values.get("turn"), "plan": values.get("plan", []),
                "subquestions": list(values.get("subquestions", {}).values()), "answer": values.get("answer"),
                "citations": values.get("citations", []),
                "messages": [{"role": m.type, "content": m.content} for m in values.get("messages", [])]}

    return app
