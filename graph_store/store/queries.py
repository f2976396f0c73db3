"""The record's queries and write transactions, written once for both backends (SQLite's ``Store`` and
``PostgresRecord``).

The SQL is the same on both (SQLite 3.24+ reads PostgreSQL's ``ON CONFLICT`` upserts); the parameter placeholder
differs (``?`` in SQLite, ``%s`` in psycopg), so each backend says its own in ``PARAM``. What else differs is a
hook each backend gives: ``rows`` (a read), ``_transaction`` (how one is opened and committed), ``_executemany``,
``_insert_id`` (``lastrowid`` or ``RETURNING id``) and ``LOCK_ROW`` (PostgreSQL's ``FOR UPDATE``; SQLite's
``BEGIN IMMEDIATE`` already holds the whole file).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from graph_store.store.base import (
    JOB_COLUMNS,
    UNFINISHED,
    ChunkRow,
    Decision,
    DocumentRow,
    ExtractionRow,
    Job,
    digest,
    document_digest,
    job_from_row,
    job_row,
)

DECISION_COLUMNS = "verdict, a, b, who, why, id, created, undone"  # Decision's fields, in order
# What Record.source_state digests (base.source_digest): documents by id, each chunk with its extraction's hash.
SOURCE_DOCUMENTS = "SELECT id, title FROM documents ORDER BY id"
SOURCE_CHUNKS = (
    "SELECT c.id, COALESCE(e.payload_hash, '') FROM chunks c LEFT JOIN extractions e ON e.chunk_id = c.id ORDER BY c.id"
)


class RecordQueries:
    """``base.Record``'s reads and writes on top of a backend's hooks; every write method is one transaction."""

    PARAM = "?"
    LOCK_ROW = ""  # appended to a SELECT whose row the transaction then changes

    def rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        raise NotImplementedError

    def _transaction(self) -> AbstractContextManager[Any]:
        """One transaction: yields the connection (``execute(sql, params)`` gives a cursor), commits on leaving."""
        raise NotImplementedError

    def _executemany(self, db: Any, sql: str, rows: Iterable[Sequence]) -> None:
        raise NotImplementedError

    def _insert_id(self, db: Any, sql: str, params: Sequence) -> int:
        """Runs an INSERT of one row into a table with an ``id`` counter: the id given to that row."""
        raise NotImplementedError

    def _params(self, n: int) -> str:
        return ", ".join([self.PARAM] * n)

    # documents and chunks

    def pending_deletes(self) -> set[str]:
        return {r[0] for r in self.rows("SELECT id FROM pending_deletes")}

    def document_hashes(self) -> dict[str, str]:
        return dict(self.rows("SELECT id, hash FROM documents"))

    def documents(self) -> list[tuple[str, str, str]]:
        return self.rows("SELECT id, title, source FROM documents ORDER BY title, id")

    def document_sources(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        if ids is None:
            return dict(self.rows("SELECT id, source FROM documents"))
        wanted = sorted(set(ids))
        found: dict[str, str] = {}
        for start in range(0, len(wanted), 500):  # (a bound on the parameters of one statement)
            part = wanted[start : start + 500]
            found.update(self.rows(f"SELECT id, source FROM documents WHERE id IN ({self._params(len(part))})", part))
        return found

    def add_documents(
        self, docs_with_chunks: Iterable[tuple[DocumentRow, Iterable[ChunkRow]]], job: tuple[str, dict] | None = None
    ) -> None:
        p = self.PARAM
        with self._transaction() as db:
            for doc, chunks in docs_with_chunks:
                rows = list(chunks)
                db.execute(f"DELETE FROM documents WHERE id = {p}", (doc.id,))  # a replaced version (chunks cascade)
                db.execute(f"DELETE FROM pending_deletes WHERE id = {p}", (doc.id,))
                db.execute(f"INSERT INTO documents VALUES ({self._params(5)})", (*doc, document_digest(doc, rows)))
                self._executemany(db, f"INSERT INTO chunks VALUES ({self._params(5)})", rows)
            if job is not None:
                self._apply_job(db, *job)

    def delete_documents(self, doc_ids: list[str], job: tuple[str, dict] | None = None) -> None:
        with self._transaction() as db:
            self._executemany(db, f"DELETE FROM documents WHERE id = {self.PARAM}", [(d,) for d in doc_ids])
            self._executemany(
                db, f"INSERT INTO pending_deletes VALUES ({self.PARAM}) ON CONFLICT DO NOTHING", [(d,) for d in doc_ids]
            )
            if job is not None:
                self._apply_job(db, *job)

    def clear_pending_deletes(self) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM pending_deletes")

    def document_titles(self) -> dict[str, str]:
        return dict(self.rows("SELECT id, title FROM documents"))

    def chunks(self) -> list[tuple[str, str, str]]:
        return self.rows("SELECT id, doc_id, text FROM chunks ORDER BY id")

    def chunks_with_titles(self) -> list[tuple[str, str, str]]:
        return self.rows("SELECT c.id, d.title, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY c.id")

    # extractions

    def chunks_to_extract(self, extractor: str | None = None) -> list[tuple[str, str, str]]:
        condition = f"e.extractor != {self.PARAM} OR e.status != 'ok'" if extractor else "e.status = 'failed'"
        return self.rows(
            f"""SELECT c.id, c.text, d.title FROM chunks c JOIN documents d ON d.id = c.doc_id
               LEFT JOIN extractions e ON e.chunk_id = c.id WHERE e.chunk_id IS NULL OR {condition}
               ORDER BY c.id""",
            (extractor,) if extractor else (),
        )

    def save_extractions(self, rows: list[ExtractionRow]) -> None:
        with self._transaction() as db:
            self._executemany(
                db,
                f"INSERT INTO extractions VALUES ({self._params(7)}) ON CONFLICT (chunk_id) DO UPDATE SET "
                "extractor = EXCLUDED.extractor, status = EXCLUDED.status, error = EXCLUDED.error, "
                "payload = EXCLUDED.payload, payload_hash = EXCLUDED.payload_hash, digest = EXCLUDED.digest",
                [(*r, digest(*r)) for r in rows],
            )

    def successful_extractions(self) -> list[tuple[str, str]]:
        return self.rows("SELECT chunk_id, payload FROM extractions WHERE status = 'ok' ORDER BY chunk_id")

    def failed_chunks(self) -> list[tuple[str, str]]:
        return self.rows("SELECT chunk_id, error FROM extractions WHERE status = 'failed' ORDER BY chunk_id")

    def extractor_counts(self) -> dict[str, int]:
        return dict(self.rows("SELECT extractor, COUNT(*) FROM extractions GROUP BY extractor ORDER BY extractor"))

    # jobs

    def create_job(self, job: Job) -> Job:
        now = time.time()
        stored = dataclasses.replace(job, created=job.created or now, updated=now)
        with self._transaction() as db:
            db.execute(f"INSERT INTO jobs ({JOB_COLUMNS}) VALUES ({self._params(9)})", job_row(stored))
        return stored

    def update_job(self, job_id: str, status: str, detail: dict | None = None, if_status: str | None = None) -> bool:
        p = self.PARAM
        with self._transaction() as db:
            changed = db.execute(
                # a finished job keeps no payload: what it changed is in the record, or it changed nothing
                f"UPDATE jobs SET status = {p}, detail = COALESCE({p}, detail), updated = {p}, "
                f"payload = CASE WHEN {p} IN ('done', 'failed') THEN '{{}}' ELSE payload END "
                f"WHERE id = {p} AND status = COALESCE({p}, status)",
                (status, None if detail is None else json.dumps(detail), time.time(), status, job_id, if_status),
            ).rowcount
            if not changed and not db.execute(f"SELECT 1 FROM jobs WHERE id = {p}", (job_id,)).fetchone():
                raise KeyError(f"no job {job_id!r}")
        return bool(changed)

    def _apply_job(self, db: Any, job_id: str, detail: dict) -> None:
        """In the transaction writing a queued job's change: the job is running from now on, with this detail, and
        its payload is dropped (the record holds the change), so no writer ever applies it twice."""
        p = self.PARAM
        changed = db.execute(
            f"UPDATE jobs SET status = 'running', payload = '{{}}', detail = {p}, updated = {p} "
            f"WHERE id = {p} AND status = 'queued'",
            (json.dumps(detail), time.time(), job_id),
        ).rowcount
        if not changed:
            raise KeyError(f"no queued job {job_id!r}")  # the transaction rolls back: nothing written

    def get_job(self, job_id: str) -> Job | None:
        found = self.rows(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = {self.PARAM}", (job_id,))
        return job_from_row(found[0]) if found else None

    def unfinished_jobs(self, index: str | None = None) -> list[Job]:
        where, params = f"status IN ({self._params(len(UNFINISHED))})", list(UNFINISHED)
        if index is not None:
            where, params = f"{where} AND index_name = {self.PARAM}", [*params, index]
        found = self.rows(f"SELECT {JOB_COLUMNS} FROM jobs WHERE {where} ORDER BY created, id", params)
        return [job_from_row(r) for r in found]

    # entity decisions and meta

    def add_decisions(self, decisions: list[Decision], job: tuple[str, dict] | None = None) -> list[Decision]:
        stored = []
        with self._transaction() as db:
            for decision in decisions:
                created = decision.created or time.time()
                row_id = self._insert_id(
                    db,
                    f"INSERT INTO entity_decisions (verdict, a, b, who, why, created) VALUES ({self._params(6)})",
                    (decision.verdict, decision.a, decision.b, decision.who, decision.why, created),
                )
                stored.append(dataclasses.replace(decision, id=row_id, created=created, undone=None))
            if job is not None:
                self._apply_job(db, job[0], {**job[1], "decision_ids": [d.id for d in stored]})
        return stored

    def undo_decision(self, decision_id: int | None = None, job: tuple[str, dict] | None = None) -> Decision | None:
        p = self.PARAM
        with self._transaction() as db:
            row = db.execute(
                f"SELECT {DECISION_COLUMNS} FROM entity_decisions WHERE undone IS NULL AND id = COALESCE({p}, "
                f"(SELECT MAX(id) FROM entity_decisions WHERE undone IS NULL)){self.LOCK_ROW}",
                (decision_id,),
            ).fetchone()
            if row is None:
                return None
            undone = time.time()
            db.execute(f"UPDATE entity_decisions SET undone = {p} WHERE id = {p}", (undone, row[5]))
            if job is not None:
                self._apply_job(db, job[0], {**job[1], "undone": row[5]})
        return dataclasses.replace(Decision(*row), undone=undone)

    def decisions(self, in_force: bool = True) -> list[Decision]:
        where = " WHERE undone IS NULL" if in_force else ""
        return [Decision(*r) for r in self.rows(f"SELECT {DECISION_COLUMNS} FROM entity_decisions{where} ORDER BY id")]

    def get_meta(self, key: str) -> str | None:
        found = self.rows(f"SELECT value FROM meta WHERE key = {self.PARAM}", (key,))
        return found[0][0] if found else None

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction() as db:
            db.execute(
                f"INSERT INTO meta (key, value) VALUES ({self._params(2)}) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (key, value),
            )
