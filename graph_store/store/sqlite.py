"""The SQLite store: one file per index (index.sqlite), and each generation's read-only snapshot.

Documents, chunks and per-chunk extraction results are the source of truth;
entities, mentions, facts, relations, synonyms, communities and reports are
derived from them (and rebuilt when the source changed), so every step can be
re-run after a crash and lands on the same content. Every write method is one
transaction: that is what makes each step of a build crash-safe.
"""

from __future__ import annotations

import fcntl
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from graph_store.errors import IndexStoreError, machine_problem, unavailable
from graph_store.store.base import (
    JOB_COLUMNS,
    Alias,
    Community,
    Decision,
    Entity,
    Fact,
    Proposal,
    Relation,
    Report,
    digest,
    document_digest,
    source_digest,
)
from graph_store.store.queries import SOURCE_CHUNKS, SOURCE_DOCUMENTS, RecordQueries

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, source TEXT NOT NULL, hash TEXT NOT NULL,
    digest TEXT NOT NULL DEFAULT '');  -- base.document_digest, of the row and its chunks
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, text TEXT NOT NULL, n_tokens INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS extractions (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    extractor TEXT NOT NULL, status TEXT NOT NULL, error TEXT, payload TEXT NOT NULL, payload_hash TEXT NOT NULL,
    digest TEXT NOT NULL DEFAULT '');  -- base.digest of the row's other values

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
-- a report reads its children's summaries: without it, every report scans every community
CREATE INDEX IF NOT EXISTS communities_parent ON communities(parent_id);
CREATE TABLE IF NOT EXISTS community_members (
    community_id TEXT NOT NULL, entity_id TEXT NOT NULL, PRIMARY KEY (community_id, entity_id));
CREATE INDEX IF NOT EXISTS members_entity ON community_members(entity_id);
CREATE TABLE IF NOT EXISTS reports (
    community_id TEXT PRIMARY KEY, title TEXT NOT NULL, summary TEXT NOT NULL, findings TEXT NOT NULL,
    rating REAL NOT NULL, text TEXT NOT NULL, generator TEXT NOT NULL, digest TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- documents deleted whose derived state is not rebuilt yet (an interrupted delete finishes by itself)
CREATE TABLE IF NOT EXISTS pending_deletes (id TEXT PRIMARY KEY);
-- background requests (base.Job): payload and detail are JSON; IF NOT EXISTS adds it to indexes made before
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, index_name TEXT NOT NULL, owner TEXT NOT NULL, action TEXT NOT NULL, payload TEXT NOT NULL,
    status TEXT NOT NULL, detail TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
-- a person's verdicts on merging two names (base.Decision): part of the record, applied on every build
CREATE TABLE IF NOT EXISTS entity_decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, verdict TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL,
    who TEXT NOT NULL, why TEXT NOT NULL, created REAL NOT NULL, undone REAL);
-- derived: every name form of every entity, and the merges proposed and not decided (graph_store/resolution.py)
CREATE TABLE IF NOT EXISTS aliases (
    key TEXT PRIMARY KEY, entity_id TEXT NOT NULL, name TEXT NOT NULL, how TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_entity ON aliases(entity_id);
CREATE TABLE IF NOT EXISTS proposals (
    a_id TEXT NOT NULL, b_id TEXT NOT NULL, a_name TEXT NOT NULL, b_name TEXT NOT NULL, score REAL NOT NULL,
    reasons TEXT NOT NULL, evidence TEXT NOT NULL, PRIMARY KEY (a_id, b_id));
"""
RECORD_TABLES = ("documents", "chunks", "extractions")  # what cannot be rebuilt (and what a salvage saves)
EXTRACTION_COLUMNS = ("chunk_id", "extractor", "status", "error", "payload", "payload_hash")  # digested, in order
REPORT_COLUMNS = ("community_id", "title", "summary", "findings", "rating", "text", "generator")
DERIVED_TABLES = (
    "entities",
    "mentions",
    "facts",
    "fact_sources",
    "relations",
    "synonyms",
    "communities",
    "community_members",
    "aliases",
    "proposals",
)
CONTENT_TABLES = ("documents", "chunks", "extractions", *DERIVED_TABLES, "reports")
TABLES = (*CONTENT_TABLES, "meta", "pending_deletes", "jobs", "entity_decisions")
# What a generation's snapshot holds: the tables queries read (extraction payloads, the bulk of the record, stay out).
SNAPSHOT_TABLES = (
    "documents",
    "chunks",
    "entities",
    "mentions",
    "facts",
    "fact_sources",
    "relations",
    "synonyms",
    "communities",
    "community_members",
    "aliases",
    "proposals",
    "reports",
    "meta",
)
ERRORS = (sqlite3.DatabaseError,)  # what reading a damaged file raises
DIGESTED = ("documents", "extractions", "reports")  # tables whose rows carry a digest (base.digest)


class Store(RecordQueries):
    """The record and the graph tables in one SQLite file (or a generation's read-only snapshot): a thread-safe
    connection, one transaction per write method. Methods are documented where they are declared (base.py).

    On the record, SQLite's errors reach callers as the user's errors: damage (``damaged_record``) or a problem of
    the machine (``errors.UnavailableError``: permission denied, disk full), never as an internal error."""

    def __init__(self, path: Path, connection: sqlite3.Connection | None = None, record: bool = True):
        self.path = path
        self.record = record
        self._lock = threading.RLock()
        self._writer_lock: IO | None = None  # index.lock while this process is the writer (try_lock_writer)
        # The graph tables are gone while the record is not (they live in this file, the record elsewhere): the
        # next build rebuilds them, even for an unchanged record. Never for a file holding its record.
        self.derived_lost = False
        self.read_only = connection is not None
        if connection is not None:
            self._db = connection
            return
        with self._translated():
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=60, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
            self._add_digests()

    @classmethod
    def open_snapshot(cls, path: Path) -> Store:
        """A generation's snapshot, read-only (immutable: no journal, no lock, safe while a writer builds the next
        one)."""
        return cls(path, sqlite3.connect(f"{_uri(path)}?mode=ro&immutable=1", uri=True, check_same_thread=False), False)

    @classmethod
    def open_read_only(cls, path: Path) -> Store:
        """The record for readers: nothing is written (no schema, no upgrade), so it reads in a read-only folder
        and on a full disk."""
        try:
            return cls(path, connect_read_only(path), True)
        except (OSError, sqlite3.Error) as exc:
            raise record_error(path, exc) or exc from None

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """SQLite's errors on the record as the user's errors: damage, or a problem of the machine."""
        try:
            yield
        except sqlite3.Error as exc:
            error = record_error(self.path, exc) if self.record else None
            if error is None:
                raise
            raise error from None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._translated():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")  # may fail too (a full disk): then nothing of it was written
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def _add_digests(self) -> None:
        """A record made before its rows carried digests gets them, computed from its content as it is now."""
        missing = [t for t in DIGESTED if "digest" not in {r[1] for r in self.rows(f"PRAGMA table_info({t})")}]
        if not missing:
            return
        with self._transaction() as db:
            for table in missing:
                db.execute(f"ALTER TABLE {table} ADD COLUMN digest TEXT NOT NULL DEFAULT ''")
            chunks: dict[str, list[tuple]] = {}
            for chunk in db.execute("SELECT * FROM chunks"):
                chunks.setdefault(chunk[1], []).append(chunk)
            for doc in db.execute("SELECT id, title, source, hash FROM documents").fetchall():
                db.execute(
                    "UPDATE documents SET digest = ? WHERE id = ?",
                    (document_digest(doc, chunks.get(doc[0], [])), doc[0]),
                )
            for row in db.execute(f"SELECT {', '.join(EXTRACTION_COLUMNS)} FROM extractions").fetchall():
                db.execute("UPDATE extractions SET digest = ? WHERE chunk_id = ?", (digest(*row), row[0]))
            for row in db.execute(f"SELECT {', '.join(REPORT_COLUMNS)} FROM reports").fetchall():
                db.execute("UPDATE reports SET digest = ? WHERE community_id = ?", (digest(*row), row[0]))

    def rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        """Ad-hoc SQL for tests, benchmarks and debugging (not part of the interface: kgrag calls the methods)."""
        with self._lock, self._translated():
            return self._db.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: Sequence = ()):
        """The first value of ad-hoc SQL's first row (tests, benchmarks), or None."""
        row = self.rows(sql, params)
        return row[0][0] if row else None

    def check(self, full: bool = False) -> list[str]:
        """SQLite's own consistency check (quick: structure; full: also every index against its table)."""
        try:
            with self._lock:
                rows = self._db.execute("PRAGMA integrity_check" if full else "PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            problem = unavailable(self.path, exc, "read")
            if problem is not None:
                raise problem from None
            return [str(exc)]
        return [r[0] for r in rows if r[0] != "ok"]

    def try_lock_writer(self) -> bool:
        # A lock on index.lock beside the file: the kernel drops it when the process ends, however it ends.
        if self._writer_lock is not None:
            return True
        lock = open(self.path.with_name("index.lock"), "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            return False
        self._writer_lock = lock
        return True

    def unlock_writer(self) -> None:
        if self._writer_lock is not None:
            self._writer_lock.close()
            self._writer_lock = None

    def close(self) -> None:
        self.unlock_writer()
        self._db.close()

    # --- the record: what queries.py's writes need of SQLite ------------------------------------------------

    def _executemany(self, db: sqlite3.Connection, sql: str, rows: Iterable[Sequence]) -> None:
        db.executemany(sql, rows)

    def _insert_id(self, db: sqlite3.Connection, sql: str, params: Sequence) -> int:
        return int(db.execute(sql, params).lastrowid or 0)

    # --- the record: entity decisions -----------------------------------------------------------------------

    def _has_table(self, name: str) -> bool:
        """A record made before a table existed lacks it when opened read-only (no schema is written then)."""
        return bool(self.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    def decisions(self, in_force: bool = True) -> list[Decision]:
        return super().decisions(in_force) if self._has_table("entity_decisions") else []

    # --- the record: meta, counts, state --------------------------------------------------------------------

    def count(self, table: str) -> int:
        if table not in TABLES:
            raise ValueError(f"no table {table!r} in the store")
        return self.scalar(f"SELECT COUNT(*) FROM {table}")

    def source_state(self, derivation: int, decisions: bool = True) -> str:
        return source_digest(
            derivation,
            self.rows(SOURCE_DOCUMENTS),
            self.rows(SOURCE_CHUNKS),
            self.decisions() if decisions else (),
        )

    # --- graph tables: a build's writes (and the reads it writes reports from) ------------------------------

    def replace_graph_tables(
        self,
        entities: list[Entity],
        mentions: list[tuple[str, str]],
        facts: list[Fact],
        fact_sources: list[tuple[str, str]],
        relations: list[Relation],
        aliases: Sequence[Alias] = (),
    ) -> None:
        with self._transaction() as db:
            for table in ("entities", "mentions", "facts", "fact_sources", "relations", "aliases"):
                db.execute(f"DELETE FROM {table}")
            # Inserted in the order given (sorted by the caller): unordered scans of these tables return that order.
            db.executemany("INSERT INTO entities VALUES (?, ?, ?, ?, ?)", entities)
            db.executemany("INSERT INTO mentions VALUES (?, ?)", mentions)
            db.executemany("INSERT INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?)", facts)
            db.executemany("INSERT INTO fact_sources VALUES (?, ?)", fact_sources)
            db.executemany("INSERT INTO relations VALUES (?, ?, ?, ?)", relations)
            db.executemany("INSERT INTO aliases VALUES (?, ?, ?, ?)", aliases)

    def replace_proposals(self, proposals: list[Proposal]) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM proposals")
            db.executemany("INSERT INTO proposals VALUES (?, ?, ?, ?, ?, ?, ?)", proposals)

    def replace_synonyms(self, pairs: list[tuple[str, str, float]]) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM synonyms")
            db.executemany("INSERT INTO synonyms VALUES (?, ?, ?)", pairs)

    def replace_communities(self, communities: list[tuple[Community, list[str]]]) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM communities")
            db.execute("DELETE FROM community_members")
            for community, members in communities:
                db.execute("INSERT INTO communities VALUES (?, ?, ?, ?)", community)
                db.executemany("INSERT INTO community_members VALUES (?, ?)", [(community.id, m) for m in members])
            # Reports of communities that no longer exist go; the others are kept as they are.
            db.execute("DELETE FROM reports WHERE community_id NOT IN (SELECT id FROM communities)")

    def save_report(self, report: Report) -> None:
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO reports VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*report, digest(*report)))

    def write_snapshot(self, path: Path) -> None:
        target = sqlite3.connect(path)
        target.executescript(SCHEMA)
        target.close()
        with self._lock:
            self._db.execute("ATTACH DATABASE ? AS snap", (str(path),))
            try:
                self._db.execute("BEGIN")  # one transaction of the record: the snapshot is one consistent state
                for table in SNAPSHOT_TABLES:
                    self._db.execute(f"INSERT INTO snap.{table} SELECT * FROM main.{table}")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            finally:
                self._db.execute("DETACH DATABASE snap")

    def communities_needing_report(self, redo_fallbacks: bool) -> list[tuple[str, int]]:
        return self.rows(
            """SELECT id, level FROM communities WHERE id NOT IN (SELECT community_id FROM reports)
               OR id IN (SELECT community_id FROM reports WHERE ? AND generator = 'offline-fallback')
               ORDER BY level DESC, id""",
            (redo_fallbacks,),
        )

    def fallback_reports(self) -> list[tuple[str, str]]:
        return self.rows("SELECT community_id, title FROM reports WHERE generator = 'offline-fallback' ORDER BY 1")

    def community_entities(self, community_id: str) -> list[tuple[str, str, str]]:
        return self.rows(
            """SELECT e.name, e.type, e.description FROM community_members m JOIN entities e ON e.id = m.entity_id
               WHERE m.community_id = ? ORDER BY e.n_chunks DESC, e.id""",
            (community_id,),
        )

    def community_facts(self, community_id: str, limit: int) -> list[str]:
        return [
            r[0]
            for r in self.rows(
                """SELECT f.text FROM community_members a JOIN facts f ON f.subject_id = a.entity_id
               JOIN community_members b ON b.community_id = a.community_id AND b.entity_id = f.object_id
               WHERE a.community_id = ?1 ORDER BY f.strength * f.n_chunks DESC, f.id LIMIT ?2""",
                (community_id, limit),
            )
        ]

    def community_central_chunk(self, community_id: str) -> str | None:
        return self.scalar(
            # counted on the mentions' index alone; only the winner's text is read
            """SELECT text FROM chunks WHERE id = (
                 SELECT mm.chunk_id FROM community_members m JOIN mentions mm ON mm.entity_id = m.entity_id
                 WHERE m.community_id = ? GROUP BY mm.chunk_id ORDER BY COUNT(*) DESC, mm.chunk_id LIMIT 1)""",
            (community_id,),
        )

    def child_summaries(self, community_id: str) -> list[str]:
        return [
            r[0]
            for r in self.rows(
                "SELECT r.summary FROM communities c JOIN reports r ON r.community_id = c.id WHERE c.parent_id = ? "
                "ORDER BY c.size DESC",
                (community_id,),
            )
        ]

    # --- graph tables: reads (a generation's snapshot, or the tables a build wrote) -------------------------

    def chunk_ids(self) -> list[str]:
        return [r[0] for r in self.rows("SELECT id FROM chunks ORDER BY id")]

    def chunk_documents(self) -> dict[str, tuple[str, str]]:
        return {
            c: (d, t)
            for c, d, t in self.rows("SELECT c.id, d.id, d.title FROM chunks c JOIN documents d ON d.id = c.doc_id")
        }

    def chunk_texts(self) -> dict[str, str]:
        return dict(self.rows("SELECT id, text FROM chunks"))

    def passages(self, chunk_ids: list[str]) -> list[tuple[str, str, str, str]]:
        return self._rows_in(
            "SELECT c.id, c.doc_id, d.title, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id "
            "WHERE c.id IN ({ids})",
            chunk_ids,
        )

    def entities(self) -> list[Entity]:
        return [Entity(*r) for r in self.rows("SELECT id, name, type, description, n_chunks FROM entities ORDER BY id")]

    def entity_names(self) -> dict[str, str]:
        return dict(self.rows("SELECT id, name FROM entities ORDER BY id"))

    def entities_by_id(self, ids: list[str]) -> list[Entity]:
        return [
            Entity(*r)
            for r in self._rows_in(
                "SELECT id, name, type, description, n_chunks FROM entities WHERE id IN ({ids})", ids
            )
        ]

    def aliases(self) -> dict[str, str]:
        return dict(self.rows("SELECT key, entity_id FROM aliases"))

    def aliases_of(self, entity_ids: list[str]) -> list[Alias]:
        return [
            Alias(*r)
            for r in self._rows_in(
                "SELECT key, entity_id, name, how FROM aliases WHERE entity_id IN ({ids})", entity_ids
            )
        ]

    def proposals(self) -> list[Proposal]:
        return [
            Proposal(*r)
            for r in self.rows(
                "SELECT a_id, b_id, a_name, b_name, score, reasons, evidence FROM proposals ORDER BY score DESC, a_id, b_id"
            )
        ]

    def mentions(self) -> list[tuple[str, str]]:
        return self.rows("SELECT entity_id, chunk_id FROM mentions ORDER BY entity_id, chunk_id")

    def mentions_of(self, entity_ids: list[str]) -> list[tuple[str, str]]:
        return self._rows_in("SELECT entity_id, chunk_id FROM mentions WHERE entity_id IN ({ids})", entity_ids)

    def mentions_in(self, chunk_ids: list[str]) -> list[tuple[str, str]]:
        return self._rows_in("SELECT entity_id, chunk_id FROM mentions WHERE chunk_id IN ({ids})", chunk_ids)

    def chunks_mentioning(self, entity_id: str) -> list[str]:
        return [
            r[0] for r in self.rows("SELECT chunk_id FROM mentions WHERE entity_id = ? ORDER BY chunk_id", (entity_id,))
        ]

    def facts(self) -> list[Fact]:
        return [
            Fact(*r)
            for r in self.rows(
                "SELECT id, subject_id, predicate, object_id, text, description, strength, n_chunks FROM facts ORDER BY id"
            )
        ]

    def fact_texts(self) -> dict[str, str]:
        return dict(self.rows("SELECT id, text FROM facts"))

    def fact_entities(self) -> dict[str, tuple[str, str]]:
        return {f: (s, o) for f, s, o in self.rows("SELECT id, subject_id, object_id FROM facts")}

    def facts_from(self, entity_ids: list[str]) -> list[Fact]:
        return [
            Fact(*r)
            for r in self._rows_in(
                "SELECT id, subject_id, predicate, object_id, text, description, strength, n_chunks FROM facts "
                "WHERE subject_id IN ({ids})",
                entity_ids,
            )
        ]

    def facts_touching(self, entity_ids: list[str]) -> list[Fact]:
        marks = ",".join("?" * len(entity_ids))
        return [
            Fact(*r)
            for r in self.rows(
                f"""SELECT id, subject_id, predicate, object_id, text, description, strength, n_chunks FROM facts
                WHERE subject_id IN ({marks}) OR object_id IN ({marks})""",
                tuple(entity_ids) * 2,
            )
        ]

    def fact_sources_of(self, fact_ids: list[str]) -> list[tuple[str, str]]:
        return self._rows_in("SELECT fact_id, chunk_id FROM fact_sources WHERE fact_id IN ({ids})", fact_ids)

    def strongest_facts_of(self, entity_id: str, limit: int) -> list[str]:
        return [
            r[0]
            for r in self.rows(
                "SELECT text FROM facts WHERE subject_id = ?1 OR object_id = ?1 ORDER BY strength * n_chunks DESC LIMIT ?2",
                (entity_id, limit),
            )
        ]

    def relations(self) -> list[Relation]:
        return [
            Relation(*r)
            for r in self.rows(
                "SELECT source_id, target_id, weight, n_facts FROM relations ORDER BY source_id, target_id"
            )
        ]

    def relations_from(self, entity_ids: list[str]) -> list[Relation]:
        return [
            Relation(*r)
            for r in self._rows_in(
                "SELECT source_id, target_id, weight, n_facts FROM relations WHERE source_id IN ({ids})", entity_ids
            )
        ]

    def synonyms(self) -> list[tuple[str, str, float]]:
        return self.rows("SELECT source_id, target_id, similarity FROM synonyms ORDER BY source_id, target_id")

    def synonyms_from(self, entity_ids: list[str]) -> list[tuple[str, str, float]]:
        return self._rows_in(
            "SELECT source_id, target_id, similarity FROM synonyms WHERE source_id IN ({ids})", entity_ids
        )

    def neighbours(self, entity_id: str) -> list[tuple[str, float]]:
        return self.rows(
            "SELECT target_id, weight FROM relations WHERE source_id = ? UNION ALL "
            "SELECT source_id, weight FROM relations WHERE target_id = ? UNION ALL "
            "SELECT target_id, similarity FROM synonyms WHERE source_id = ?",
            (entity_id,) * 3,
        )

    def communities_per_level(self) -> dict[int, int]:
        return dict(self.rows("SELECT level, COUNT(*) FROM communities GROUP BY level ORDER BY level"))

    def community_members(self, level: int) -> list[tuple[str, str]]:
        return self.rows(
            "SELECT community_id, entity_id FROM community_members m JOIN communities c "
            "ON c.id = m.community_id WHERE c.level = ?",
            (level,),
        )

    def community_tree(self) -> list[tuple[Community, list[str]]]:
        members: dict[str, list[str]] = defaultdict(list)
        for community_id, entity_id in self.rows(
            "SELECT community_id, entity_id FROM community_members ORDER BY community_id, entity_id"
        ):
            members[community_id].append(entity_id)
        return [
            (Community(*row), members[row[0]])
            for row in self.rows("SELECT id, level, parent_id, size FROM communities ORDER BY level, id")
        ]

    def report_texts(self) -> dict[str, str]:
        return dict(self.rows("SELECT community_id, text FROM reports"))

    def leaf_reports_of(self, entity_ids: list[str], limit: int) -> list[tuple[str, str, str, int]]:
        marks = ",".join("?" * len(entity_ids))
        return self.rows(
            f"""SELECT r.community_id, r.title, r.summary, COUNT(*) AS hits FROM community_members m
                JOIN communities c ON c.id = m.community_id
                JOIN reports r ON r.community_id = c.id
                WHERE m.entity_id IN ({marks}) AND c.id NOT IN (SELECT parent_id FROM communities WHERE parent_id IS NOT NULL)
                GROUP BY r.community_id ORDER BY hits DESC LIMIT ?""",
            (*entity_ids, limit),
        )

    def reports_covering_level(self, level: int) -> list[tuple[str, float, str, str, str]]:
        return self.rows(
            """SELECT c.id, r.rating, r.title, r.summary, r.findings FROM communities c JOIN reports r ON r.community_id = c.id
               WHERE c.level = ?1 OR (c.level < ?1 AND c.id NOT IN
                     (SELECT parent_id FROM communities WHERE parent_id IS NOT NULL))""",
            (level,),
        )

    def _rows_in(self, sql: str, ids: list[str]) -> list[tuple]:
        """``sql`` with one ``{ids}`` placeholder list, run in batches under SQLite's variable limit."""
        out: list[tuple] = []
        for start in range(0, len(ids), 400):
            part = ids[start : start + 400]
            out += self.rows(sql.format(ids=",".join("?" * len(part))), tuple(part))
        return out

    # --- for tests ------------------------------------------------------------------------------------------

    def content_dump(self) -> dict[str, list[tuple]]:
        """Every content table, sorted: two indexes with equal dumps hold the same content."""
        return {t: sorted(self.rows(f"SELECT * FROM {t}")) for t in CONTENT_TABLES}


def damaged_record(path: Path, exc: BaseException) -> IndexStoreError:
    return IndexStoreError(
        f"{path} (the index's system of record) is damaged ({exc}). "
        f"`kgrag check --index-dir {path.parent}` says what can be saved, "
        f"`kgrag repair --salvage --index-dir {path.parent}` rebuilds the index from it"
    )


def record_error(path: Path, exc: BaseException) -> IndexStoreError | None:
    """The user's error for an SQLite (or OS) error met on the record: a problem of the machine (permission denied,
    disk full), damage (a malformed file, text that is not UTF-8), or None for anything else (a bug)."""
    problem = unavailable(path, exc, "use")
    if problem is not None:
        return problem
    name = getattr(exc, "sqlite_errorname", None)
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or (name is None and "decode" in str(exc)):
        return damaged_record(path, exc)
    return None


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


def connect_read_only(path: Path, lenient: bool = False) -> sqlite3.Connection:
    """A read-only connection to a record file. A WAL database is read with its -shm file, which neither a read-only
    folder nor a full disk can hold: there it is opened immutable (no writer can be at work in such a folder; what
    a killed writer left in a -wal file is not seen until the next write folds it in). ``lenient``: text that is
    not UTF-8 reads with replacement characters (its digest then tells), instead of raising."""
    with path.open("rb"):  # "permission denied" is said here, not as SQLite's "unable to open database file"
        pass
    try:
        db = sqlite3.connect(f"{_uri(path)}?mode=ro", uri=True, check_same_thread=False)
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # SQLite opens the file at the first read
    except sqlite3.OperationalError as exc:
        if machine_problem(exc) is None:
            raise
        db = sqlite3.connect(f"{_uri(path)}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    if lenient:
        db.text_factory = lambda data: data.decode("utf-8", "replace")
    return db


# --- checking and salvaging a record file (kgrag check, kgrag repair --salvage) -----------------------------

# The columns read from each table a salvage keeps or a check verifies (a digest column a record made before
# digests lacks reads as NULL).
READ_COLUMNS = {
    "documents": ("id", "title", "source", "hash", "digest"),
    "chunks": ("id", "doc_id", "idx", "text", "n_tokens"),
    "extractions": (*EXTRACTION_COLUMNS, "digest"),
    "reports": (*REPORT_COLUMNS, "digest"),
    "meta": ("key", "value"),
    "pending_deletes": ("id",),
    "jobs": ("id", "index_name", "owner", "action", "payload", "status", "detail", "created", "updated"),
    "entity_decisions": ("id", "verdict", "a", "b", "who", "why", "created", "undone"),
}
MOST_ROWS = 5_000_000  # a damaged table's rows are read by rowid up to its largest, at most this many


def record_file_problems(path: Path) -> list[str]:
    """What is wrong with a record file's structure (missing, empty, damaged, lacking a table), read-only:
    ``kgrag check``. A file that cannot be read (permission, I/O) raises ``errors.UnavailableError``: not damage."""
    if not path.exists():
        return [f"{path} (the system of record) is missing"]
    if path.stat().st_size == 0:
        return [f"{path} (the system of record) is empty"]
    try:
        with closing(connect_read_only(path)) as db:
            rows = db.execute("PRAGMA integrity_check").fetchall()
            missing = [
                t
                for t in RECORD_TABLES
                if not db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (t,)).fetchone()
            ]
    except (OSError, sqlite3.DatabaseError) as exc:
        problem = unavailable(path, exc, "read")
        if problem is not None:
            raise problem from None
        return [f"{path} (the system of record) is damaged: {exc}"]
    problems = [f"{path}: {r[0]}" for r in rows if r[0] != "ok"][:5]
    return problems + [f"{path} has no {t} table" for t in missing]


@dataclass
class RecordContent:
    """What a record file holds that can be proven whole: each document with all its chunks (its digest matches),
    each extraction and report whose digest matches. ``kgrag check`` reports the rest, a salvage keeps only this."""

    documents: list[tuple] = field(default_factory=list)  # READ_COLUMNS order
    chunks: list[tuple] = field(default_factory=list)
    extractions: list[tuple] = field(default_factory=list)
    meta: list[tuple] = field(default_factory=list)
    pending_deletes: set[str] = field(default_factory=set)
    jobs: list[tuple] = field(default_factory=list)  # as read: a job whose payload is damaged fails when it runs
    decisions: list[tuple] = field(default_factory=list)  # entity decisions, as read (READ_COLUMNS order)
    lost: dict[str, str] = field(default_factory=dict)  # id -> title ("" when unreadable) of documents not whole
    damaged_extractions: int = 0  # extraction results to make again (their chunk is whole)
    damaged_reports: int = 0
    digests: bool = True  # False: a record made before rows carried digests (its rows could not be proven)

    def counts(self) -> str:
        return f"{len(self.documents)} documents, {len(self.chunks)} chunks, {len(self.extractions)} extractions"


def read_record(path: Path) -> RecordContent:
    """Every row of a record file that can be read (a table at once, else by rowid), checked against its digest.
    A file that cannot be opened at all holds nothing readable; one that cannot be read for a reason of the machine
    raises ``errors.UnavailableError``."""
    try:
        db = connect_read_only(path, lenient=True)
    except OSError as exc:
        raise unavailable(path, exc, "read") or exc from None
    except sqlite3.DatabaseError as exc:
        problem = unavailable(path, exc, "read")
        if problem is not None:
            raise problem from None
        return RecordContent(lost={}, digests=True)
    with closing(db):
        rows = {table: _readable(db, table, columns) for table, columns in READ_COLUMNS.items()}
    return _verified(rows)


def _readable(db: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> list[tuple]:
    try:
        present = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
    except sqlite3.DatabaseError:
        present = set()
    if not present:
        return []
    select = "SELECT " + ", ".join(c if c in present else "NULL" for c in columns) + f" FROM {table}"
    try:
        return db.execute(select).fetchall()
    except sqlite3.DatabaseError:
        pass
    last = _largest_rowid(db, table)
    rows: list[tuple] = []
    for start in range(1, last + 1, 256):  # blocks, then the rows of a block that fails one by one
        try:
            rows += db.execute(f"{select} WHERE rowid BETWEEN ? AND ?", (start, start + 255)).fetchall()
            continue
        except sqlite3.DatabaseError:
            pass
        for rowid in range(start, min(start + 256, last + 1)):
            try:
                rows += db.execute(f"{select} WHERE rowid = ?", (rowid,)).fetchall()
            except sqlite3.DatabaseError:
                continue
    return rows


def _largest_rowid(db: sqlite3.Connection, table: str) -> int:
    """The table's largest rowid, from its own pages or, when they are damaged, from one of its indexes (an index
    holds each row's rowid): probing up to MOST_ROWS rowids one by one took minutes on a small damaged record."""
    try:
        indexes = [
            r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", (table,))
        ]
    except sqlite3.DatabaseError:
        indexes = []
    quoted = ('"' + name.replace('"', '""') + '"' for name in indexes)  # names as the file holds them
    for source in (table, *(f"{table} INDEXED BY {name}" for name in quoted)):
        try:
            return min(db.execute(f"SELECT max(rowid) FROM {source}").fetchone()[0] or 0, MOST_ROWS)
        except sqlite3.DatabaseError:
            continue
    return MOST_ROWS


def _verified(rows: dict[str, list[tuple]]) -> RecordContent:
    content = RecordContent(
        meta=rows["meta"],
        pending_deletes={r[0] for r in rows["pending_deletes"]},
        jobs=[r for r in rows["jobs"] if r[0] is not None],
        decisions=[r for r in rows["entity_decisions"] if None not in r[:7]],
    )
    content.digests = all(r[-1] is not None for r in rows["documents"])
    chunks_of: dict[object, list[tuple]] = {}
    for chunk in rows["chunks"]:
        chunks_of.setdefault(chunk[1], []).append(chunk)
    seen: set[object] = set()
    for doc in rows["documents"]:
        whole = doc[-1] is None or doc[-1] == document_digest(doc, chunks_of.get(doc[0], []))
        if whole and doc[0] not in seen:
            content.documents.append(doc)
        elif not whole:
            content.lost[str(doc[0])] = str(doc[1])
        seen.add(doc[0])
    kept = {d[0] for d in content.documents}
    for doc_id in chunks_of.keys() - kept:  # chunks whose document's row is gone or not whole
        content.lost.setdefault(str(doc_id), "")
    content.chunks = [c for doc_id in kept for c in chunks_of.get(doc_id, [])]
    chunk_ids = {c[0] for c in content.chunks}
    for row in rows["extractions"]:
        if row[0] not in chunk_ids:
            continue
        if row[-1] is None or row[-1] == digest(*row[:-1]):
            content.extractions.append(row)
        else:
            content.damaged_extractions += 1
    content.damaged_reports = sum(r[-1] is not None and r[-1] != digest(*r[:-1]) for r in rows["reports"])
    return content


def create_record(path: Path, content: RecordContent) -> None:
    """A new record file holding the rows proven whole (salvaged from a damaged one), in one transaction."""
    store = Store(path)
    with store._transaction() as db:
        db.executemany("INSERT OR IGNORE INTO documents VALUES (?, ?, ?, ?, ?)", content.documents)
        db.executemany("INSERT OR IGNORE INTO chunks VALUES (?, ?, ?, ?, ?)", content.chunks)
        db.executemany("INSERT OR IGNORE INTO extractions VALUES (?, ?, ?, ?, ?, ?, ?)", content.extractions)
        db.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", content.meta)
        db.executemany(
            f"INSERT OR IGNORE INTO jobs ({JOB_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", content.jobs
        )  # queued documents jobs survive a salvage
        db.executemany(
            "INSERT OR IGNORE INTO entity_decisions (id, verdict, a, b, who, why, created, undone) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            content.decisions,
        )  # and so do a person's merge decisions
    store.close()
