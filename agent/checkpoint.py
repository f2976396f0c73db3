"""Checkpointers: SQLite by default, PostgreSQL for servers (optional extra ``kgrag[postgres]``).

One URL picks the saver: a postgresql:// connection string, else a SQLite file path. The CLI
opens the sync savers, the HTTP service the async ones.

Answering never depends on the SQLite file being writable: a saver that cannot be written (a read-only index
folder, a full disk) keeps conversations in memory from then on (``FallbackSaver``), says so once, and still
reads the conversations the file holds.
"""

from __future__ import annotations

import copy
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from graph_store.errors import ConfigError, machine_problem

log = logging.getLogger(__name__)
WRITE_ERRORS = (sqlite3.Error, OSError)  # what writing a checkpoint file can raise (aiosqlite raises sqlite3's)

_POSTGRES_EXTRA = "a PostgreSQL checkpointer needs the extra: pip install 'kgrag[postgres]'"


def _is_postgres(url: str) -> bool:
    return url.startswith(("postgres://", "postgresql://"))


def _sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


def _read_only_uri(path: Path) -> str:
    """A URI that reads ``path`` without writing anything (immutable: its folder cannot be written anyway)."""
    return f"{path.resolve().as_uri()}?mode=ro&immutable=1"


class FallbackSaver(BaseCheckpointSaver):
    """A checkpointer whose writes never stop an answer: when ``primary`` cannot be written (``notice`` says why),
    new checkpoints go to memory, and reads look there first, then in ``primary`` (None: it could not be opened)."""

    def __init__(self, primary: BaseCheckpointSaver | None, notice: str | None = None):
        super().__init__(serde=primary.serde if primary is not None else None)
        self.primary = primary
        self.memory: BaseCheckpointSaver = InMemorySaver()
        self._state: dict[str, str] = {}  # shared with the clones LangGraph makes (with_allowlist)
        if notice:
            self._fall_back(notice)

    @property
    def notice(self) -> str | None:
        """Why conversations are kept in memory only (None while the primary takes them)."""
        return self._state.get("notice")

    def _fall_back(self, reason: str) -> None:
        if "notice" not in self._state:
            self._state["notice"] = f"conversations are kept in memory only, until this process ends: {reason}"
            log.warning(self._state["notice"])

    def with_allowlist(self, extra_allowlist):
        clone = copy.copy(self)
        clone.primary = self.primary.with_allowlist(extra_allowlist) if self.primary is not None else None
        clone.memory = self.memory.with_allowlist(extra_allowlist)
        return clone

    def _failed(self, exc: BaseException) -> None:
        problem = machine_problem(exc)
        if problem is None:
            raise exc
        self._fall_back(f"the checkpoint file cannot be written ({problem}); set `checkpointer` to keep them")

    # writes: the primary until it fails, memory from then on
    def put(self, config, checkpoint, metadata, new_versions):
        if self.notice is None and self.primary is not None:
            try:
                return self.primary.put(config, checkpoint, metadata, new_versions)
            except WRITE_ERRORS as exc:
                self._failed(exc)
        return self.memory.put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config, writes, task_id, task_path=""):
        if self.notice is None and self.primary is not None:
            try:
                return self.primary.put_writes(config, writes, task_id, task_path)
            except WRITE_ERRORS as exc:
                self._failed(exc)
        return self.memory.put_writes(config, writes, task_id, task_path)

    async def aput(self, config, checkpoint, metadata, new_versions):
        if self.notice is None and self.primary is not None:
            try:
                return await self.primary.aput(config, checkpoint, metadata, new_versions)
            except WRITE_ERRORS as exc:
                self._failed(exc)
        return await self.memory.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config, writes, task_id, task_path=""):
        if self.notice is None and self.primary is not None:
            try:
                return await self.primary.aput_writes(config, writes, task_id, task_path)
            except WRITE_ERRORS as exc:
                self._failed(exc)
        return await self.memory.aput_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id):
        self.memory.delete_thread(thread_id)
        if self.notice is None and self.primary is not None:
            self.primary.delete_thread(thread_id)

    async def adelete_thread(self, thread_id):
        await self.memory.adelete_thread(thread_id)
        if self.notice is None and self.primary is not None:
            await self.primary.adelete_thread(thread_id)

    # reads: memory first (what was written since the fall-back), then the primary
    def get_tuple(self, config):
        found = self.memory.get_tuple(config)
        return found if found is not None or self.primary is None else self.primary.get_tuple(config)

    async def aget_tuple(self, config):
        found = await self.memory.aget_tuple(config)
        return found if found is not None or self.primary is None else await self.primary.aget_tuple(config)

    def list(self, config, *, filter=None, before=None, limit=None):
        yield from self.memory.list(config, filter=filter, before=before, limit=limit)
        if self.primary is not None:
            yield from self.primary.list(config, filter=filter, before=before, limit=limit)

    async def alist(self, config, *, filter=None, before=None, limit=None):
        async for item in self.memory.alist(config, filter=filter, before=before, limit=limit):
            yield item
        if self.primary is not None:
            async for item in self.primary.alist(config, filter=filter, before=before, limit=limit):
                yield item

    def get_next_version(self, current, channel):
        return (self.primary or self.memory).get_next_version(current, channel)


def _unwritable(path: Path, exc: BaseException) -> str:
    problem = machine_problem(exc)
    if problem is None:
        raise exc
    return f"{path} cannot be written ({problem}); set `checkpointer` (KGRAG_CHECKPOINTER) to keep them elsewhere"


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

    path = _sqlite_path(url)
    existed, connection = path.exists(), None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, check_same_thread=False)
        opened = SqliteSaver(connection)
        opened.setup()  # writes (its tables, WAL): fails here on a read-only folder or a full disk
        primary: SqliteSaver | None = opened
        notice = None
    except WRITE_ERRORS as exc:
        if connection is not None:
            connection.close()
        notice = _unwritable(path, exc)
        if not existed:  # an empty file made just now (a full disk still has inodes)
            path.unlink(missing_ok=True)
        # The conversations the file holds stay readable (``kgrag inspect``); new ones are kept in memory.
        connection = sqlite3.connect(_read_only_uri(path), uri=True, check_same_thread=False) if existed else None
        primary = SqliteSaver(connection) if connection is not None else None
        if primary is not None:
            primary.is_setup = True
    try:
        yield FallbackSaver(primary, notice)
    finally:
        if connection is not None:
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
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = _sqlite_path(url)
    existed, connection = path.exists(), None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = await aiosqlite.connect(str(path))
        opened = AsyncSqliteSaver(connection)
        await opened.setup()  # writes (its tables, WAL): fails here on a read-only folder or a full disk
        reader: AsyncSqliteSaver | None = opened
        notice = None
    except WRITE_ERRORS as exc:
        if connection is not None:
            await connection.close()
        notice = _unwritable(path, exc)
        if not existed:
            path.unlink(missing_ok=True)
        # The conversations the file holds stay readable; new ones are kept in memory.
        connection = await aiosqlite.connect(_read_only_uri(path), uri=True) if existed else None
        reader = AsyncSqliteSaver(connection) if connection is not None else None
        if reader is not None:
            reader.is_setup = True
    try:
        yield FallbackSaver(reader, notice)
    finally:
        if connection is not None:
            await connection.close()
