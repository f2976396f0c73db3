"""Checkpointers: SQLite by default, PostgreSQL for servers (optional extra ``kgrag[postgres]``).

One URL picks the saver: a postgresql:// connection string, else a SQLite file path. The CLI
opens the sync savers, the HTTP service the async ones.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from graph_store.errors import ConfigError

_POSTGRES_EXTRA = "a PostgreSQL checkpointer needs the extra: pip install 'kgrag[postgres]'"


def _is_postgres(url: str) -> bool:
    return url.startswith(("postgres://", "postgresql://"))


def _sqlite_path(url: str) -> Path:
    path = Path(url.removeprefix("sqlite:///"))
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def open_checkpointer(url: str) -> Iterator[Any]:
    """A sync checkpointer for ``url``."""
    if _is_postgres(url):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
        except ImportError:
            raise ConfigError(_POSTGRES_EXTRA) from None
        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    connection = sqlite3.connect(_sqlite_path(url), check_same_thread=False)
    try:
        yield SqliteSaver(connection)
    finally:
        connection.close()


@asynccontextmanager
async def open_async_checkpointer(url: str) -> AsyncIterator[Any]:
    """An async checkpointer for ``url`` (the service)."""
    if _is_postgres(url):
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError:
            raise ConfigError(_POSTGRES_EXTRA) from None
        async with AsyncPostgresSaver.from_conn_string(url) as saver:
            await saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(str(_sqlite_path(url))) as saver:
        yield saver
