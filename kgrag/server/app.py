"""The app: its lifespan (the checkpointer, the pruning of old conversations, the documents writers), the body
size limit, the error format, and the routers; ``serve`` runs it with uvicorn."""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager, nullcontext
from datetime import UTC
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import Response
from starlette.requests import ClientDisconnect

from agent.checkpoint import open_async_checkpointer
from graph_store.errors import ConfigError, InputError, KGRagError, ModelError
from graph_store.settings import Settings
from kgrag.api import KGRag
from kgrag.server import ask, chat, documents, graph, web
from kgrag.server.deps import ServiceState, error_response, public_error
from kgrag.server.jobs import Writers

log = logging.getLogger("kgrag.server")
PRUNE_EVERY = 3600  # seconds


def create_app(settings: Settings, indexes: dict[str, KGRag], checkpointer: Any = None) -> FastAPI:
    """The service over named indexes. Without ``checkpointer``, the settings' one is opened (async)."""
    if not indexes:
        raise ConfigError("the service needs at least one index")
    app = FastAPI(title="kgrag", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = ServiceState(settings, indexes, Writers(), checkpointer)
    app.middleware("http")(limit_size)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, server_error)
    for module in (web, chat, documents, ask, graph):
        app.include_router(module.router)
    return app


def opened_checkpointer(state: ServiceState):
    """The checkpointer given to create_app (its owner closes it), or the settings' one, open while the app runs."""
    if state.checkpointer is not None:
        return nullcontext(state.checkpointer)
    return open_async_checkpointer(state.settings.checkpointer_url)


@asynccontextmanager
async def lifespan(app: FastAPI):
    """Open the checkpointer and hand it to every index, prune old conversations while the app runs, and wait
    for the running documents jobs before the checkpointer closes."""
    state: ServiceState = app.state.service
    async with opened_checkpointer(state) as saver:
        state.saver = saver
        for rag in state.indexes.values():
            rag.use_checkpointer(saver)
        pruner = asyncio.create_task(prune_threads(saver, state.settings.thread_retention_days))
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


async def http_error(request: Request, exc: Exception):
    assert isinstance(exc, HTTPException)
    return error_response(
        exc.status_code, str(exc.detail), "authentication_error" if exc.status_code == 401 else "invalid_request_error"
    )


async def server_error(request: Request, exc: Exception):
    """Any other failure: the library's own errors say what went wrong, the rest is an "internal error" whose
    trace stays in the server log, never in the response."""
    if isinstance(exc, ClientDisconnect):
        log.info("client left before its request was read: %s %s", request.method, request.url.path)
        return Response(status_code=499)
    if isinstance(exc, KGRagError):
        status = 502 if isinstance(exc, ModelError) else 400
        return error_response(status, public_error(exc), "upstream_error" if status == 502 else "invalid_request_error")
    log.exception("request failed")
    return error_response(500, "internal error", "server_error")


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
        print(
            "kgrag serve: warning: no api_keys configured, the API is open to anyone who can reach it", file=sys.stderr
        )
    from graph_store.llm import unlisted_model

    if warning := unlisted_model(settings):
        print(f"kgrag serve: warning: {warning}", file=sys.stderr)
    print(f"serving {', '.join(indexes)} on http://{host}:{port} (web page: /, OpenAI base URL: /v1)")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    uvicorn.run(
        create_app(settings, indexes),
        host=host,
        port=port,
        log_level="warning",
        timeout_keep_alive=5,
        limit_concurrency=settings.max_connections,
    )
