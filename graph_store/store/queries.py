"""The record's read queries, written once for both backends (SQLite's ``Store`` and ``PostgresRecord``).

The SQL is the same on both; only the parameter placeholder differs (``?`` in SQLite, ``%s`` in psycopg), so each
backend says its own in ``PARAM`` and runs the queries with its ``rows``. Writes stay in each backend: their
upserts, locks and transaction settings differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from graph_store.store.base import JOB_COLUMNS, UNFINISHED, Decision, Job, job_from_row

DECISION_COLUMNS = "verdict, a, b, who, why, id, created, undone"  # Decision's fields, in order
# What Record.source_state digests (base.source_digest): documents by id, each chunk with its extraction's hash.
SOURCE_DOCUMENTS = "SELECT id, title FROM documents ORDER BY id"
SOURCE_CHUNKS = (
    "SELECT c.id, COALESCE(e.payload_hash, '') FROM chunks c LEFT JOIN extractions e ON e.chunk_id = c.id ORDER BY c.id"
)


class RecordQueries:
    """The read half of ``base.Record`` on top of a backend's ``rows``."""

    PARAM = "?"

    def rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
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

    def successful_extractions(self) -> list[tuple[str, str]]:
        return self.rows("SELECT chunk_id, payload FROM extractions WHERE status = 'ok' ORDER BY chunk_id")

    def failed_chunks(self) -> list[tuple[str, str]]:
        return self.rows("SELECT chunk_id, error FROM extractions WHERE status = 'failed' ORDER BY chunk_id")

    def extractor_counts(self) -> dict[str, int]:
        return dict(self.rows("SELECT extractor, COUNT(*) FROM extractions GROUP BY extractor ORDER BY extractor"))

    # jobs

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

    def decisions(self, in_force: bool = True) -> list[Decision]:
        where = " WHERE undone IS NULL" if in_force else ""
        return [Decision(*r) for r in self.rows(f"SELECT {DECISION_COLUMNS} FROM entity_decisions{where} ORDER BY id")]

    def get_meta(self, key: str) -> str | None:
        found = self.rows(f"SELECT value FROM meta WHERE key = {self.PARAM}", (key,))
        return found[0][0] if found else None
