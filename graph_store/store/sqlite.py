"""The SQLite store: one file per index (index.sqlite), and each generation's read-only snapshot.

Documents, chunks and per-chunk extraction results are the source of truth;
entities, mentions, facts, relations, synonyms, communities and reports are
derived from them (and rebuilt when the source changed), so every step can be
re-run after a crash and lands on the same content. Every write method is one
transaction: that is what makes each step of a build crash-safe.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, source TEXT NOT NULL, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, text TEXT NOT NULL, n_tokens INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS extractions (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    extractor TEXT NOT NULL, status TEXT NOT NULL, error TEXT, payload TEXT NOT NULL, payload_hash TEXT NOT NULL);

-- derived from the tables above
CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, description TEXT NOT NULL, n_chunks INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS mentions (
    entity_id TEXT NOT NULL, chunk_id TEXT NOT NULL, PRIMARY KEY (entity_id, chunk_id));
CREATE INDEX IF NOT EXISTS mentions_chunk ON mentions(chunk_id);
CREATE TABLE IF NOT EXISTS facts (
    id TEXT PRIMARY KEY, subject_id TEXT NOT NULL, predicate TEXT NOT NULL, object_id TEXT NOT NULL,
    text TEXT NOT NULL, description TEXT NOT NULL, strength REAL NOT NULL, n_chunks INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS facts_subject ON facts(subject_id);
CREATE TABLE IF NOT EXISTS fact_sources (
    fact_id TEXT NOT NULL, chunk_id TEXT NOT NULL, PRIMARY KEY (fact_id, chunk_id));
CREATE TABLE IF NOT EXISTS relations (
    source_id TEXT NOT NULL, target_id TEXT NOT NULL, weight REAL NOT NULL, n_facts INTEGER NOT NULL,
    PRIMARY KEY (source_id, target_id));
CREATE TABLE IF NOT EXISTS synonyms (
    source_id TEXT NOT NULL, target_id TEXT NOT NULL, similarity REAL NOT NULL, PRIMARY KEY (source_id, target_id));
CREATE TABLE IF NOT EXISTS communities (
    id TEXT PRIMARY KEY, level INTEGER NOT NULL, parent_id TEXT, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS community_members (
    community_id TEXT NOT NULL, entity_id TEXT NOT NULL, PRIMARY KEY (community_id, entity_id));
CREATE INDEX IF NOT EXISTS members_entity ON community_members(entity_id);
CREATE TABLE IF NOT EXISTS reports (
    community_id TEXT PRIMARY KEY, title TEXT NOT NULL, summary TEXT NOT NULL, findings TEXT NOT NULL,
    rating REAL NOT NULL, text TEXT NOT NULL, generator TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- documents deleted whose derived state is not rebuilt yet (an interrupted delete finishes by itself)
CREATE TABLE IF NOT EXISTS pending_deletes (id TEXT PRIMARY KEY);
"""
RECORD_TABLES = ("documents", "chunks", "extractions")

DERIVED_TABLES = ("entities", "mentions", "facts", "fact_sources", "relations", "synonyms",
                  "communities", "community_members")
CONTENT_TABLES = ("documents", "chunks", "extractions", *DERIVED_TABLES, "reports")


class Store:
    """A thread-safe SQLite connection with explicit transactions (or a read-only snapshot's connection)."""

    def __init__(self, path: Path, connection: sqlite3.Connection | None = None):
        self.path = path
        self._lock = threading.RLock()
        self.read_only = connection is not None
        if connection is not None:
            self.db = connection
            return
        try:
            self.db = sqlite3.connect(path, check_same_thread=False, timeout=60, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise damaged_record(path, exc) from None

    def check(self, full: bool = False) -> list[str]:
        """SQLite's own consistency check (quick: structure; full: also every index against its table)."""
        try:
            rows = self.rows("PRAGMA integrity_check" if full else "PRAGMA quick_check")
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        return [r[0] for r in rows if r[0] != "ok"]

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._lock:
            return self.db.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: tuple = ()):
        row = self.rows(sql, params)
        return row[0][0] if row else None

    def get_meta(self, key: str) -> str | None:
        return self.scalar("SELECT value FROM meta WHERE key = ?", (key,))

    def set_meta(self, db: sqlite3.Connection, key: str, value: str) -> None:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def source_state(self, derivation: int) -> str:
        """A hash of the derivation version and everything the derived tables depend on."""
        digest = hashlib.sha256(f"derivation {derivation};".encode())
        for doc_id, title in self.rows("SELECT id, title FROM documents ORDER BY id"):  # titles become links
            digest.update(f"{doc_id}:{title};".encode())
        for chunk_id, payload_hash in self.rows(
            "SELECT c.id, COALESCE(e.payload_hash, '') FROM chunks c LEFT JOIN extractions e ON e.chunk_id = c.id ORDER BY c.id"
        ):
            digest.update(f"{chunk_id}:{payload_hash};".encode())
        return digest.hexdigest()

    def content_dump(self) -> dict[str, list[tuple]]:
        """Every content table, sorted: two indexes with equal dumps hold the same content."""
        return {t: sorted(self.rows(f"SELECT * FROM {t}")) for t in CONTENT_TABLES}

    def close(self) -> None:
        self.db.close()


def damaged_record(path: Path, exc: Exception) -> Exception:
    from graph_store.errors import IndexStoreError

    return IndexStoreError(f"{path} (the index's system of record) is damaged ({exc}); nothing was changed. "
                           f"`kgrag check --index-dir {path.parent}` says what can be saved, "
                           f"`kgrag repair --index-dir {path.parent}` rebuilds from it")
