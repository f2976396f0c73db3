"""The app: its lifespan (the checkpointer, the pruning of old conversations, the documents writers), the body
size limit, the error format, and the routers; ``serve`` runs it with uvicorn."""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager, nullcontext
from datetime import UTC
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.requests import ClientDisconnect

from agent.checkpoint import open_async_checkpointer
from graph_store.errors import ConfigError, InputError, KGRagError, ModelError
from graph_store.settings import Settings
from kgrag.api import KGRag
from kgrag.server import ask, chat, documents, entities, graph, web
from kgrag.server.connections import server_config
from kgrag.server.deps import ServiceState, error_response, public_error
from kgrag.server.jobs import Writers
from kgrag.server.sites import is_address, refusal

log = logging.getLogger("kgrag.server")
PRUNE_EVERY = 3600  # seconds


def create_app(settings: Settings, indexes: dict[str, KGRag], checkpointer: Any = None) -> FastAPI:
    """The service over named indexes. Without ``checkpointer``, the settings' one is opened (async)."""
    if not indexes:
        raise ConfigError("the service needs at least one index")
    app = FastAPI(title="kgrag", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = ServiceState(settings, indexes, Writers(indexes), checkpointer)
    app.middleware("http")(limit_size)
    app.middleware("http")(own_sites_only)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid_parameter)
    # Handlers for an exception class answer and are done; the one for Exception answers, then Starlette raises
    # the exception again for the server to log with its trace: only what nobody expected goes there.
    app.add_exception_handler(KGRagError, library_error)
    app.add_exception_handler(ClientDisconnect, client_left)
    app.add_exception_handler(Exception, server_error)
    for module in (web, chat, documents, entities, ask, graph):
        app.include_router(module.router)
    return app


def opened_checkpointer(state: ServiceState):
    """The checkpointer given to create_app (its owner closes it), or the settings' one, open while the app runs."""
    if state.checkpointer is not None:
        return nullcontext(state.checkpointer)
    return open_async_checkpointer(state.settings.checkpointer_url)


@asynccontextmanager
async def lifespan(app: FastAPI):
    """Open the checkpointer and hand it to every index, start the documents writers (they first finish the jobs
    an earlier run left), prune old conversations while the app runs, and on the way out let the writers finish
    the build they run (queued jobs stay recorded for the next start)."""
    state: ServiceState = app.state.service
    async with opened_checkpointer(state) as saver:
        state.saver = saver
        for rag in state.indexes.values():
            rag.use_checkpointer(saver)
        pruner = asyncio.create_task(prune_threads(saver, state.settings.thread_retention_days))
        state.writers.start()
        try:
            yield
        finally:
            pruner.cancel()
            state.writers.close()


async def prune_threads(saver: Any, days: float) -> None:
    """Conversations older than ``thread_retention_days`` go (run at start and every hour)."""
    while True:
        try:
            await prune(saver, days)
        except Exception:  # noqa: BLE001 - pruning must never take the service down
            log.exception("pruning old conversations failed")
        await asyncio.sleep(PRUNE_EVERY)


async def prune(saver: Any, days: float) -> int:
    """Delete conversations whose newest checkpoint is older than ``days``."""
    if days <= 0:
        return 0
    from datetime import datetime, timedelta

    cutoff = (datetime.now(UTC) - timedelta(days=days)).isoformat()
    newest: dict[str, str] = {}
    async for item in saver.alist(None):
        thread = item.config["configurable"]["thread_id"]
        newest[thread] = max(newest.get(thread, ""), item.checkpoint["ts"])
    old = [t for t, ts in newest.items() if ts < cutoff]
    for thread in old:
        await saver.adelete_thread(thread)
    return len(old)


async def limit_size(request: Request, call_next):
    """A body announced larger than the limit is refused before it is read (read_body checks the rest)."""
    settings = request.app.state.service.settings
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > settings.max_request_bytes:
        return error_response(413, f"request larger than {settings.max_request_bytes} bytes")
    return await call_next(request)


async def own_sites_only(request: Request, call_next):
    """A request naming another host (DNS rebinding), or sent by another site's page, is refused (sites.py)."""
    state: ServiceState = request.app.state.service
    refused = refusal(request.headers, request.url.scheme, request.scope.get("server"), state.settings.allowed_hosts)
    if refused is not None:
        return error_response(*refused)
    return await call_next(request)


async def http_error(request: Request, exc: Exception):
    assert isinstance(exc, HTTPException)
    return error_response(
        exc.status_code, str(exc.detail), "authentication_error" if exc.status_code == 401 else "invalid_request_error"
    )


async def invalid_parameter(request: Request, exc: Exception):
    """A path or query parameter of the wrong type: 400 naming it (FastAPI's default is a 422 of its own shape)."""
    assert isinstance(exc, RequestValidationError)
    problems = "; ".join(f"'{e['loc'][-1]}': {e['msg']}" for e in exc.errors())
    return error_response(400, problems or "invalid request")


async def library_error(request: Request, exc: Exception):
    """The library's own errors say what went wrong: 400 for the request's fault, 502 for the model endpoint's
    (logged in one line, without a trace: a timed-out endpoint is not a bug of the service)."""
    assert isinstance(exc, KGRagError)
    if isinstance(exc, ModelError):
        log.warning("%s %s: %s", request.method, request.url.path, exc.public)
        return error_response(502, public_error(exc), "upstream_error")
    return error_response(400, public_error(exc))


async def client_left(request: Request, exc: Exception):
    log.info("client left before its request was read: %s %s", request.method, request.url.path)
    return Response(status_code=499)


async def server_error(request: Request, exc: Exception):
    """Anything else is an "internal error" whose trace stays in the server log, never in the response."""
    log.error("request failed: %s %s", request.method, request.url.path)
    return error_response(500, "internal error", "server_error")


def serve(settings: Settings, named: list[str] | None, host: str, port: int) -> None:
    """``kgrag serve``: open the indexes (each must exist), then run uvicorn."""
    import sys

    if named and any("=" not in item for item in named):
        raise InputError("--index takes NAME=PATH")
    pairs = dict(item.split("=", 1) for item in named) if named else {"kgrag": str(settings.index_dir)}
    indexes = {}
    for name, path in pairs.items():
        # an index that cannot be opened stops the start, with its reason
        indexes[name] = KGRag(settings=settings.replace(index_dir=Path(path))).open()
    if not is_address(host):  # the name it was told to listen on (e.g. localhost) is the service's own
        settings = settings.replace(allowed_hosts=[*settings.allowed_hosts, f"{host}:{port}"])
    if not settings.api_keys:
        print(
            "kgrag serve: warning: no api_keys configured, the API is open to anyone who can reach it", file=sys.stderr
        )
    from graph_store.llm import unlisted_model

    if warning := unlisted_model(settings):
        print(f"kgrag serve: warning: {warning}", file=sys.stderr)
    print(f"serving {', '.join(indexes)} on http://{host}:{port} (web page: /, OpenAI base URL: /v1)")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = create_app(settings, indexes)
    StoppingServer(server_config(app, settings, host, port, log_level="warning"), app.state.service.writers).run()


class StoppingServer(uvicorn.Server):
    """uvicorn's server, telling the documents writers to take no new job as soon as a stop signal arrives (the
    requests still in flight are answered; a documents request among them gets 503)."""

    def __init__(self, config, writers: Writers):
        super().__init__(config)
        self.writers = writers

    def handle_exit(self, sig, frame) -> None:
        self.writers.stop_taking()
        super().handle_exit(sig, frame)
