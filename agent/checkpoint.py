"""Checkpointers: SQLite by default, PostgreSQL for servers (optional extra ``kgrag[postgres]``)."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from graph_store.errors import ConfigError


@contextmanager
def open_checkpointer(url: str) -> Iterator[object]:
    """A sync checkpointer for ``url``: a SQLite file path, or a postgresql:// connection string."""
    if url.startswith(("postgres://", "postgresql://")):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
        except ImportError:
            raise ConfigError("a PostgreSQL checkpointer needs the extra: pip install 'kgrag[postgres]'") from None
        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(url.removeprefix("sqlite:///"))
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, check_same_thread=False)
    try:
        yield SqliteSaver(connection)
    finally:
        connection.close()
