"""The system of record in PostgreSQL (setting ``record``: a postgresql:// URL), for writers on several machines.

``PostgresRecord`` implements ``base.Record`` on one database: documents, chunks, extractions, meta, pending
deletes, jobs and entity decisions, every row with the digest SQLite's record keeps. Every write method is one
transaction (row locks: the HTTP service's workers record jobs while a writer builds), and a build's steps stay
separate transactions, so a writer killed at any point leaves the record as SQLite's would. One writer builds at
a time: ``try_lock_writer`` takes a session-level advisory lock, which PostgreSQL drops with the connection when
the process dies.

The graph tables stay derived on the machine that builds: ``SharedRecordStore`` is the SQLite store of the index
directory (index.sqlite, holding only the derived tables and a copy of the passages), with every record method
answered by PostgreSQL. Generations are written from it as from any index.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graph_store.errors import ConfigError, IndexStoreError, UnavailableError
from graph_store.settings import redact_url
from graph_store.store.base import (
    Alias,
    ChunkRow,
    Decision,
    DocumentRow,
    Entity,
    ExtractionRow,
    Fact,
    Job,
    Relation,
    digest,
    document_digest,
    source_digest,
)
from graph_store.store.queries import SOURCE_CHUNKS, SOURCE_DOCUMENTS, RecordQueries
from graph_store.store.sqlite import RECORD_TABLES, Store, connect_read_only

TEXT = 'TEXT COLLATE "C"'  # byte order, as SQLite sorts: ids and titles list in the same order on both
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS documents (
    id {TEXT} PRIMARY KEY, title {TEXT} NOT NULL, source {TEXT} NOT NULL, hash {TEXT} NOT NULL,
    digest {TEXT} NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS chunks (
    id {TEXT} PRIMARY KEY, doc_id {TEXT} NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, text {TEXT} NOT NULL, n_tokens INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS extractions (
    chunk_id {TEXT} PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    extractor {TEXT} NOT NULL, status {TEXT} NOT NULL, error {TEXT}, payload {TEXT} NOT NULL,
    payload_hash {TEXT} NOT NULL, digest {TEXT} NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS meta (key {TEXT} PRIMARY KEY, value {TEXT} NOT NULL);
CREATE TABLE IF NOT EXISTS pending_deletes (id {TEXT} PRIMARY KEY);
CREATE TABLE IF NOT EXISTS jobs (
    id {TEXT} PRIMARY KEY, index_name {TEXT} NOT NULL, owner {TEXT} NOT NULL, action {TEXT} NOT NULL,
    payload {TEXT} NOT NULL, status {TEXT} NOT NULL, detail {TEXT} NOT NULL, created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE TABLE IF NOT EXISTS entity_decisions (
    id BIGSERIAL PRIMARY KEY, verdict {TEXT} NOT NULL, a {TEXT} NOT NULL, b {TEXT} NOT NULL, who {TEXT} NOT NULL,
    why {TEXT} NOT NULL, created DOUBLE PRECISION NOT NULL, undone DOUBLE PRECISION);
"""
TABLES = ("documents", "chunks", "extractions", "meta", "pending_deletes", "jobs", "entity_decisions")
# Advisory lock keys (one namespace per database): the single writer, and schema creation by two processes at once.
WRITER_LOCK = int.from_bytes(hashlib.sha256(b"kgrag record writer").digest()[:8], "big", signed=True)
SCHEMA_LOCK = WRITER_LOCK ^ 1


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigError(
            "record is a postgresql:// URL, but psycopg is not installed: pip install 'kgrag[postgres]'"
        ) from None
    return psycopg


class PostgresRecord(RecordQueries):
    """The record in one PostgreSQL database: one connection (autocommit; each write method one transaction),
    thread-safe. Methods are documented where they are declared (base.Record); reads and writes are queries.py's."""

    PARAM = "%s"
    LOCK_ROW = " FOR UPDATE"

    def __init__(self, url: str):
        self.url = url
        self.where = redact_url(url)  # what messages name: never the password
        self._lock = threading.RLock()
        self._writer = False
        psycopg = _psycopg()
        self._errors = (psycopg.OperationalError, psycopg.InterfaceError)  # the server is gone, not a bug
        with self._translated():
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=10)
            with self._db.transaction():
                self._db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                self._db.execute(SCHEMA)

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """A server that cannot be reached (or went away) as the user's one line, never a traceback."""
        try:
            yield
        except self._errors as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UnavailableError(f"cannot use the record at {self.where}: {first}") from None

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._lock, self._translated(), self._db.transaction():
            yield self._db

    def rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        with self._lock, self._translated():
            return self._db.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: Sequence = ()) -> Any:
        found = self.rows(sql, params)
        return found[0][0] if found else None

    def check(self, full: bool = False) -> list[str]:
        """Every row's digest (PostgreSQL checks its own pages: a damaged one is an error when read)."""
        problems = []
        chunks: dict[str, list[tuple]] = {}
        for chunk in self.rows("SELECT id, doc_id, idx, text, n_tokens FROM chunks"):
            chunks.setdefault(chunk[1], []).append(chunk)
        for doc in self.rows("SELECT id, title, source, hash, digest FROM documents ORDER BY id"):
            if doc[4] != document_digest(doc, chunks.get(doc[0], [])):
                problems.append(f"document {doc[1]!r} ({doc[0]}) does not match its digest in {self.where}")
        extractions = self.rows(
            "SELECT chunk_id, extractor, status, error, payload, payload_hash, digest FROM extractions"
        )
        bad = sum(row[6] != digest(*row[:6]) for row in extractions)
        return problems + ([f"{bad} extraction results do not match their digests in {self.where}"] if bad else [])

    def try_lock_writer(self) -> bool:
        with self._lock:
            if not self._writer:
                self._writer = bool(self.scalar("SELECT pg_try_advisory_lock(%s)", (WRITER_LOCK,)))
            return self._writer

    def unlock_writer(self) -> None:
        with self._lock:
            if self._writer and not self._db.closed:
                self.scalar("SELECT pg_advisory_unlock(%s)", (WRITER_LOCK,))
            self._writer = False

    def close(self) -> None:
        with self._lock:
            self._db.close()  # a writer's lock goes with its session
            self._writer = False

    # --- what queries.py's writes need of PostgreSQL --------------------------------------------------------

    def _executemany(self, db: Any, sql: str, rows: Iterable[Sequence]) -> None:
        with db.cursor() as cursor:
            cursor.executemany(sql, rows)

    def _insert_id(self, db: Any, sql: str, params: Sequence) -> int:
        return int(db.execute(f"{sql} RETURNING id", params).fetchone()[0])

    # --- documents and chunks -------------------------------------------------------------------------------

    def passage_rows(self) -> tuple[list[tuple], list[tuple]]:
        """Every document row (with its digest) and chunk row, from one consistent state: what a build copies into
        the local store its graph tables are derived in."""
        with self._transaction() as db:
            db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            documents = db.execute("SELECT id, title, source, hash, digest FROM documents ORDER BY id").fetchall()
            chunks = db.execute("SELECT id, doc_id, idx, text, n_tokens FROM chunks ORDER BY id").fetchall()
        return documents, chunks

    # --- meta, counts, state --------------------------------------------------------------------------------

    def count(self, table: str) -> int:
        if table not in TABLES:
            raise ValueError(f"no table {table!r} in the record")
        return int(self.scalar(f"SELECT COUNT(*) FROM {table}"))

    def source_state(self, derivation: int, decisions: bool = True) -> str:
        with self._transaction() as db:  # one consistent state, while writers go on
            db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            documents = db.execute(SOURCE_DOCUMENTS).fetchall()
            chunks = db.execute(SOURCE_CHUNKS).fetchall()
            in_force = self.decisions() if decisions else []
        return source_digest(derivation, documents, chunks, in_force)

    def content_dump(self) -> dict[str, list[tuple]]:
        """The record's content tables, sorted, as ``Store.content_dump`` gives them (tests)."""
        return {t: sorted(self.rows(f"SELECT * FROM {t}")) for t in RECORD_TABLES}


class SharedRecordStore(Store):
    """An index whose record is in PostgreSQL: the record's methods go to ``PostgresRecord``, the graph tables a build
    derives (and a copy of the passages they join) stay in the index directory's index.sqlite."""

    def __init__(self, path: Path, record: PostgresRecord, read_only: bool = False):
        self.shared = record
        lost = not path.exists()  # deleted (or never built here): made empty, to be derived again
        super().__init__(path, connect_read_only(path) if read_only else None, record=False)
        self.derived_lost = lost

    def replace_graph_tables(
        self,
        entities: list[Entity],
        mentions: list[tuple[str, str]],
        facts: list[Fact],
        fact_sources: list[tuple[str, str]],
        relations: list[Relation],
        aliases: Sequence[Alias] = (),
    ) -> None:
        # The first step of a build: the passages the graph tables join (and a generation's snapshot copies) as the
        # record has them now (chunks cascade), then the tables, each in one transaction of the local file.
        documents, chunks = self.shared.passage_rows()
        with self._transaction() as db:
            db.execute("DELETE FROM documents")
            db.executemany("INSERT INTO documents VALUES (?, ?, ?, ?, ?)", documents)
            db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)", chunks)
        super().replace_graph_tables(entities, mentions, facts, fact_sources, relations, aliases)
        self.derived_lost = False

    def count(self, table: str) -> int:
        return self.shared.count(table) if table in TABLES else super().count(table)

    def check(self, full: bool = False) -> list[str]:
        return self.shared.check(full) + super().check(full)

    def content_dump(self) -> dict[str, list[tuple]]:
        return {**super().content_dump(), **self.shared.content_dump()}

    def close(self) -> None:
        self.shared.close()
        super().close()

    # --- the record's methods, answered by PostgreSQL ------------------------------------------------------

    def try_lock_writer(self) -> bool:
        return self.shared.try_lock_writer()

    def unlock_writer(self) -> None:
        self.shared.unlock_writer()

    def add_documents(
        self, docs_with_chunks: Iterable[tuple[DocumentRow, Iterable[ChunkRow]]], job: tuple[str, dict] | None = None
    ) -> None:
        self.shared.add_documents(docs_with_chunks, job)

    def delete_documents(self, doc_ids: list[str], job: tuple[str, dict] | None = None) -> None:
        self.shared.delete_documents(doc_ids, job)

    def pending_deletes(self) -> set[str]:
        return self.shared.pending_deletes()

    def clear_pending_deletes(self) -> None:
        self.shared.clear_pending_deletes()

    def document_hashes(self) -> dict[str, str]:
        return self.shared.document_hashes()

    def documents(self) -> list[tuple[str, str, str]]:
        return self.shared.documents()

    def document_sources(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        return self.shared.document_sources(ids)

    def document_titles(self) -> dict[str, str]:
        return self.shared.document_titles()

    def chunks(self) -> list[tuple[str, str, str]]:
        return self.shared.chunks()

    def chunks_with_titles(self) -> list[tuple[str, str, str]]:
        return self.shared.chunks_with_titles()

    def chunks_to_extract(self, extractor: str | None = None) -> list[tuple[str, str, str]]:
        return self.shared.chunks_to_extract(extractor)

    def save_extractions(self, rows: list[ExtractionRow]) -> None:
        self.shared.save_extractions(rows)

    def successful_extractions(self) -> list[tuple[str, str]]:
        return self.shared.successful_extractions()

    def failed_chunks(self) -> list[tuple[str, str]]:
        return self.shared.failed_chunks()

    def extractor_counts(self) -> dict[str, int]:
        return self.shared.extractor_counts()

    def create_job(self, job: Job) -> Job:
        return self.shared.create_job(job)

    def update_job(self, job_id: str, status: str, detail: dict | None = None, if_status: str | None = None) -> bool:
        return self.shared.update_job(job_id, status, detail, if_status)

    def get_job(self, job_id: str) -> Job | None:
        return self.shared.get_job(job_id)

    def unfinished_jobs(self, index: str | None = None) -> list[Job]:
        return self.shared.unfinished_jobs(index)

    def add_decisions(self, decisions: list[Decision], job: tuple[str, dict] | None = None) -> list[Decision]:
        return self.shared.add_decisions(decisions, job)

    def decisions(self, in_force: bool = True) -> list[Decision]:
        return self.shared.decisions(in_force)

    def undo_decision(self, decision_id: int | None = None, job: tuple[str, dict] | None = None) -> Decision | None:
        return self.shared.undo_decision(decision_id, job)

    def get_meta(self, key: str) -> str | None:
        return self.shared.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self.shared.set_meta(key, value)

    def source_state(self, derivation: int, decisions: bool = True) -> str:
        return self.shared.source_state(derivation, decisions)


def open_shared_record(url: str, path: Path, read_only: bool = False) -> SharedRecordStore:
    """An index's store with its record at ``url``; ``path``: the local file its graph tables are derived in."""
    if read_only and not path.exists():
        raise IndexStoreError(
            f"{path} (the graph tables derived from the record in PostgreSQL) is missing: `kgrag index --index-dir "
            f"{path.parent}` with this record derives them again"
        )
    record = PostgresRecord(url)
    try:
        return SharedRecordStore(path, record, read_only)
    except BaseException:
        record.close()
        raise
