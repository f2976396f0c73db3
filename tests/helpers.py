"""Test doubles shared by tests and benchmarks: a scripted chat model and a local OpenAI-compatible server."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field, PrivateAttr

from graph_store.retrieval import Evidence

Responder = Callable[[list[BaseMessage]], str]


class ScriptedChatModel(BaseChatModel):
    """Answers from a function of the messages (or a fixed list, in order); records every call.

    Streams its answer word by word so LangGraph's ``messages`` mode sees tokens.
    """

    responder: Any = Field(default=None)
    script: list[str] = Field(default_factory=list)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        return self._calls

    def _answer(self, messages: list[BaseMessage]) -> str:
        with self._lock:
            self._calls.append(list(messages))
            if self.responder is not None:
                return self.responder(messages)
            if not self.script:
                raise AssertionError("scripted model ran out of answers")
            return self.script.pop(0)

    @staticmethod
    def _usage(messages: list[BaseMessage], text: str) -> dict[str, int]:
        prompt_tokens = sum(len(str(m.content).split()) for m in messages)
        out = len(text.split())
        return {"input_tokens": prompt_tokens, "output_tokens": out, "total_tokens": prompt_tokens + out}

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        text = self._answer(messages)
        message = AIMessage(content=text, usage_metadata=self._usage(messages, text))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs) -> Iterator[ChatGenerationChunk]:
        text = self._answer(messages)
        words = text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == len(words) - 1 else word + " "
            usage = self._usage(messages, text) if i == len(words) - 1 else None
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece, usage_metadata=usage))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


@dataclass
class Reply:
    """A scripted endpoint's reply: text with a finish reason, after a delay; or a raw body (garbage)."""

    text: str = ""
    finish_reason: str = "stop"
    delay: float = 0.0
    chunk_delay: float = 0.0  # between the pieces of a streamed reply
    raw: bytes | None = None
    status: int = 200
    content_type: str = "application/json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeOpenAIServer:
    """A tiny OpenAI-compatible server on 127.0.0.1 for tests.

    ``reply(model, messages)`` gives the assistant text, or a ``Reply`` (finish reason, delay, garbage body);
    ``fail_first`` makes the first N chat requests answer HTTP 500 (to exercise retries); only the models
    in ``models`` exist, others get 404 like a real endpoint (``any_model``: every name is answered, as
    llama.cpp's server does, while GET /models lists only ``models``); ``serial`` handles one request at a time
    and finishes a request whose client gave up, as llama.cpp's server does; ``reports_usage`` False sends no
    token counts, even when a stream asks for them.
    """

    def __init__(
        self,
        reply: Callable[[str, list[dict]], str | Reply] = lambda m, msgs: "pong",
        models: tuple[str, ...] = ("tiny",),
        fail_first: int = 0,
        api_key: str | None = None,
        serial: bool = False,
        any_model: bool = False,
        reports_usage: bool = True,
    ):
        self.reply, self.models, self.fail_first, self.api_key = reply, models, fail_first, api_key
        self.any_model, self.reports_usage = any_model, reports_usage
        self.requests: list[dict] = []
        self.port = free_port()
        self._one_at_a_time = threading.Lock() if serial else None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _json(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    listed = [{"id": m, "object": "model", "owned_by": "test"} for m in server.models]
                    return self._json(200, {"object": "list", "data": listed})
                return self._json(404, {"error": {"message": "not found"}})

            def do_POST(self):
                if server._one_at_a_time is None:
                    return self._post()
                with server._one_at_a_time:
                    return self._post()

            def _post(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.requests.append(
                    {"path": self.path, "body": body, "authorization": self.headers.get("Authorization")}
                )
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    return self._json(401, {"error": {"message": "invalid api key", "type": "auth"}})
                if body.get("model") not in server.models and not server.any_model:
                    return self._json(404, {"error": {"message": f"model {body.get('model')} not found"}})
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [
                        {"object": "embedding", "index": i, "embedding": [float(len(str(t))), 1.0, 0.0]}
                        for i, t in enumerate(inputs)
                    ]
                    return self._json(
                        200,
                        {
                            "object": "list",
                            "data": data,
                            "model": body["model"],
                            "usage": {"prompt_tokens": 1, "total_tokens": 1},
                        },
                    )
                if server.fail_first > 0:
                    server.fail_first -= 1
                    return self._json(500, {"error": {"message": "transient failure"}})
                reply = server.reply(body["model"], body["messages"])
                reply = reply if isinstance(reply, Reply) else Reply(reply)
                time.sleep(reply.delay)
                if reply.raw is not None:
                    try:
                        self.send_response(reply.status)
                        self.send_header("Content-Type", reply.content_type)
                        self.send_header("Content-Length", str(len(reply.raw)))
                        self.end_headers()
                        self.wfile.write(reply.raw)
                    except OSError:
                        pass  # the client gave up
                    return
                text = reply.text
                usage = (
                    {"prompt_tokens": 7, "completion_tokens": len(text.split()), "total_tokens": 7 + len(text.split())}
                    if server.reports_usage
                    else None
                )
                if not body.get("stream"):
                    try:
                        return self._json(
                            200,
                            {
                                "id": "c1",
                                "object": "chat.completion",
                                "created": 0,
                                "model": body["model"],
                                "choices": [
                                    {
                                        "index": 0,
                                        "finish_reason": reply.finish_reason,
                                        "message": {"role": "assistant", "content": text},
                                    }
                                ],
                                **({"usage": usage} if usage else {}),
                            },
                        )
                    except OSError:
                        return  # the client gave up
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                pieces = (
                    [w + " " for w in text.split()]
                    if len(text) < 10_000
                    else [text[i : i + 65_536] for i in range(0, len(text), 65_536)]
                )  # a huge reply in large pieces
                chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": p}}]} for p in pieces]
                chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]})
                if usage and (body.get("stream_options") or {}).get("include_usage"):
                    chunks.append({"choices": [], "usage": usage})
                try:
                    for c in chunks:
                        c.update({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"]})
                        self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(reply.chunk_delay)
                    self.wfile.write(b"data: [DONE]\n\n")
                except OSError:
                    pass  # the client gave up

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def wait_for_http(url: str, process=None, seconds: float = 90) -> None:
    """Poll ``url`` until it answers; fail early if ``process`` (the server) has exited."""
    import time
    import urllib.request

    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if (process is not None and process.poll() is not None) or time.monotonic() > deadline:
                raise AssertionError(f"{url} did not come up") from None
            time.sleep(0.3)


def serve_in_thread(app):
    """Run the service's app with uvicorn as ``kgrag serve`` does (its connection limits too) on a free 127.0.0.1
    port; returns (server, base URL). Stop: should_exit."""
    import time

    import uvicorn

    from kgrag.server.connections import server_config

    port = free_port()
    server = uvicorn.Server(server_config(app, app.state.service.settings, "127.0.0.1", port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def chunk(n: int, title: str, text: str, score: float = 1.0) -> Evidence:
    """Evidence of one passage titled ``title``, as the retrievers give it (id c<n>, document d<n>)."""
    return Evidence(
        id=f"c{n}",
        kind="chunk",
        text=f"{title}\n\n{text}",
        score=score,
        titles=[title],
        doc_ids=[f"d{n}"],
        retriever="test",
    )
