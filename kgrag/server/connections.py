"""The HTTP server's connection limits: uvicorn's own settings, and the two it lacks, added through its
protocol-class option (``Config(http=...)``).

uvicorn (0.54) waits for a connection's first request without limit (its keep-alive timeout starts only after a
response), and its ``limit_concurrency`` counts such silent connections, so a few hundred of them make every
request a 503. The protocol below closes a connection whose request line and headers are not complete within
``header_timeout`` seconds (from connecting, or from the first byte of a later request on a kept-alive
connection), and closes at once a connection beyond ``max_connections_per_client`` from one address. h11 (not
httptools) parses, because it bounds a request's head (``h11_max_incomplete_event_size``, 16 KB).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from graph_store.settings import Settings

KEEP_ALIVE = 5  # seconds an idle kept-alive connection stays open after a response
HEAD_BYTES = 16 * 1024  # the largest request line and headers accepted (more: 400)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's head and a cap on one client's connections."""

    header_timeout: float = 10.0
    per_client: int = 0  # 0: no cap

    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self.per_client and self.client and self._connections_from(self.client[0]) > self.per_client:
            transport.close()
            return
        self._head_deadline = self.loop.call_later(self.header_timeout, self._head_too_slow)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        waiting_for_head = self.conn.their_state is h11.IDLE
        if waiting_for_head and self._head_deadline is None:  # a later request on a kept-alive connection began
            self._head_deadline = self.loop.call_later(self.header_timeout, self._head_too_slow)
        elif not waiting_for_head:
            self._cancel_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_deadline()
        super().connection_lost(exc)

    def _connections_from(self, address: str) -> int:
        peers = (getattr(c, "client", None) for c in self.connections)
        return sum(1 for peer in peers if peer and peer[0] == address)

    def _cancel_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if self.conn.their_state is h11.IDLE:
            self.timeout_keep_alive_handler()  # uvicorn's own way to close an idle connection


def server_config(app: Any, settings: Settings, host: str, port: int, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration for the service: h11 with the limits above, at most ``max_connections`` open
    connections (a request arriving beyond them gets 503), no websockets (the service has none)."""
    protocol = type(
        "ServiceProtocol",
        (GuardedH11Protocol,),
        {"header_timeout": settings.header_timeout, "per_client": settings.max_connections_per_client},
    )
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        ws="none",
        h11_max_incomplete_event_size=HEAD_BYTES,
        timeout_keep_alive=KEEP_ALIVE,
        limit_concurrency=settings.max_connections,
        **options,
    )
