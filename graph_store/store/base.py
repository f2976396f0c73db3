"""What an index's store does, as two interfaces: the record and the graph tables.

The *record* (``Record``) is the system of record: documents, their chunks, each chunk's extraction result,
meta values, the deletes not derived yet, and background jobs. It is the only state that cannot be rebuilt,
and the part a backend shared by several machines (PostgreSQL, in a later change) would hold for all of them.

The *graph tables* (``GraphTables``) are derived from the record by a build: entities, mentions, facts and
their sources, relations, synonyms, communities with their members, and reports. A build rebuilds them, then
copies them with the documents and chunks into a generation's read-only snapshot; queries read that snapshot
through ``GraphReader`` (the read half of ``GraphTables``), never the tables being rebuilt.

Today one SQLite class (sqlite.py: ``Store``) implements both on index.sqlite, and ``GraphReader`` on a
generation's snapshot.sqlite. A second backend plugs in by implementing ``Record`` (and ``GraphTables``, or
leaving the graph tables and the snapshots in local SQLite files) and being opened where the index opens its
record today (``KnowledgeIndex._open_record``). It keeps the transaction boundaries: every write method here
is one transaction, and a build's steps are separate transactions, so a build killed at any point re-runs
to the same content. Methods take and return plain values (tuples in the column order their docstrings
give, dicts, the named tuples and dataclasses below); no caller sees a connection, a cursor or SQL, and no
module outside this package writes SQL (tests/test_architecture.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol


class DocumentRow(NamedTuple):
    id: str
    title: str
    source: str
    hash: str  # of title and text: the same document added again is recognised


class ChunkRow(NamedTuple):
    id: str
    doc_id: str
    position: int  # the chunk's place in its document (column idx)
    text: str
    n_tokens: int


class ExtractionRow(NamedTuple):
    chunk_id: str
    extractor: str  # "offline-regex" or "llm:<model>"
    status: str  # ok | failed
    error: str | None
    payload: str  # the ChunkExtraction as JSON
    payload_hash: str


class Entity(NamedTuple):
    id: str  # the resolution key of its name (graph_store.graph.normalize_name)
    name: str
    type: str
    description: str
    n_chunks: int  # passages mentioning it


class Fact(NamedTuple):
    id: str
    subject_id: str
    predicate: str
    object_id: str
    text: str  # "subject predicate object", with the entities' names
    description: str
    strength: float
    n_chunks: int  # passages stating it


class Relation(NamedTuple):
    source_id: str  # source_id < target_id: one row per pair of entities
    target_id: str
    weight: float
    n_facts: int


class Alias(NamedTuple):
    key: str  # the resolution key of one name form (graph_store.graph.normalize_name)
    entity_id: str  # the entity it resolves to: itself, or the group it was merged into
    name: str  # the form as the documents write it most often
    how: str = ""  # why it was merged ("" for an entity's own name)


class Proposal(NamedTuple):
    """A candidate merge of two entities (graph_store/resolution.py), with what speaks for it."""

    a_id: str  # entity ids (a < b)
    b_id: str
    a_name: str  # the two name forms that matched
    b_name: str
    score: float  # 0-1
    reasons: str  # JSON list of short strings ("acronym", "introduced in doc X", ...)
    evidence: str  # JSON {"a": [passage...], "b": [...]}: where each form appears


@dataclass(frozen=True)
class Decision:
    """A person's verdict on merging two names: part of the record, applied on every build."""

    verdict: str  # merge | reject (a split is recorded as rejects)
    a: str  # the names as given
    b: str
    who: str = ""
    why: str = ""
    id: int = 0  # set by add_decision: the order decisions are applied in
    created: float = 0.0  # seconds since the epoch; set by add_decision
    undone: float | None = None  # when it was undone (it stays in the record, no longer in force)


class Community(NamedTuple):
    id: str  # hashes its content: an unchanged community keeps its id and its report
    level: int  # 0 is the coarsest
    parent_id: str | None
    size: int


class Report(NamedTuple):
    community_id: str
    title: str
    summary: str
    findings: str  # JSON list of {"summary", "explanation"}
    rating: float
    text: str  # what is embedded and searched
    generator: str  # "offline", "llm:<model>" or "offline-fallback"


def digest(*values: object) -> str:
    """The sha256 of a row's values: every row the record keeps (a document with its chunks, an extraction, a
    report) carries one, so ``kgrag check`` finds content changed under it (flipped bytes, invalid UTF-8, an edit)
    and a salvage keeps only what it can prove whole."""
    return hashlib.sha256(json.dumps(values, default=str).encode()).hexdigest()


def document_digest(doc: Sequence, chunks: Iterable[Sequence]) -> str:
    """A document row (id, title, source, hash) with its chunk rows (id, doc id, position, text, tokens)."""
    return digest(*doc[:4], sorted(([c[0], c[2], c[3], c[4]] for c in chunks), key=str))


UNFINISHED = ("queued", "running")  # the statuses of a job not done or failed yet


@dataclass(frozen=True)
class Job:
    """A background request on an index (the HTTP service's documents and entity decision jobs), where every
    worker can see it."""

    id: str
    index: str  # the name the index is served under
    owner: str
    action: str  # add | delete (documents) | decide | undo (entity decisions)
    payload: dict = field(default_factory=dict)  # what the job works on (JSON-serialisable), until it is applied
    status: str = "queued"  # queued | running (its change is in the record, the build runs) | done | failed
    detail: dict = field(default_factory=dict)  # progress, result or error (JSON-serialisable)
    created: float = 0.0  # seconds since the epoch; set by create_job when 0
    updated: float = 0.0


# The columns of a job as the record keeps it (payload and detail as JSON), in this order.
JOB_COLUMNS = "id, index_name, owner, action, payload, status, detail, created, updated"


def job_row(job: Job) -> tuple:
    """A job as a row of the record (JOB_COLUMNS)."""
    payload, detail = json.dumps(job.payload), json.dumps(job.detail)
    return (job.id, job.index, job.owner, job.action, payload, job.status, detail, job.created, job.updated)


def job_from_row(row: Sequence) -> Job:
    id_, index, owner, action, payload, status, detail, created, updated = row
    return Job(id_, index, owner, action, json.loads(payload), status, json.loads(detail), created, updated)


def source_digest(
    derivation: int,
    documents: Iterable[tuple[str, str]],
    chunk_extractions: Iterable[tuple[str, str]],
    decisions: Iterable[Decision],
) -> str:
    """``Record.source_state`` from what it reads: (id, title) of every document by id, (chunk id, its extraction's
    payload hash or "") of every chunk by id, and the decisions in force, oldest first."""
    state = hashlib.sha256(f"derivation {derivation};".encode())
    for doc_id, title in documents:  # titles become links
        state.update(f"{doc_id}:{title};".encode())
    for chunk_id, payload_hash in chunk_extractions:
        state.update(f"{chunk_id}:{payload_hash};".encode())
    for decision in decisions:  # a decision changes the graph as a document does
        state.update(f"{decision.id}:{decision.verdict}:{decision.a}\x1f{decision.b};".encode())
    return state.hexdigest()


class Record(Protocol):
    """The system of record: documents, chunks, extractions, jobs, meta, pending deletes."""

    # documents and chunks
    def document_hashes(self) -> dict[str, str]:
        """Document id -> content hash, for every document."""

    def documents(self) -> list[tuple[str, str, str]]:
        """(id, title, source) of every document, by title then id."""

    def document_sources(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        """Document id -> source (the file or corpus it came from), of every document or of ``ids`` (a question's
        citations: not a read of every document per answer)."""

    def add_documents(
        self, docs_with_chunks: Iterable[tuple[DocumentRow, Iterable[ChunkRow]]], job: tuple[str, dict] | None = None
    ) -> None:
        """In one transaction, store each document with its chunks, replacing one with the same id (and its chunks
        and extractions) and cancelling a pending delete of that id. ``job`` (id, detail): the queued job whose
        change this is becomes running with that detail, its payload dropped, in the same transaction (KeyError,
        and nothing written, when it is not queued)."""

    def delete_documents(self, doc_ids: list[str], job: tuple[str, dict] | None = None) -> None:
        """In one transaction, delete the documents (with their chunks and extractions) and record them as pending
        deletes until the graph tables are rebuilt; ``job`` as for ``add_documents``."""

    def pending_deletes(self) -> set[str]:
        """Ids of documents deleted since the last complete build."""

    def clear_pending_deletes(self) -> None:
        """Forget the pending deletes (one transaction): the build about to be published contains them."""

    def chunks_with_titles(self) -> list[tuple[str, str, str]]:
        """(chunk id, its document's title, chunk text) of every chunk."""

    def document_titles(self) -> dict[str, str]:
        """Document id -> title."""

    def chunks(self) -> list[tuple[str, str, str]]:
        """(chunk id, document id, text) of every chunk."""

    # extractions
    def chunks_to_extract(self, extractor: str | None = None) -> list[tuple[str, str, str]]:
        """(chunk id, text, document title) of chunks not extracted yet or failed, by chunk id; given an
        ``extractor``, also those it did not extract successfully (a re-extraction)."""

    def save_extractions(self, rows: list[ExtractionRow]) -> None:
        """Store a batch of extraction results, replacing earlier ones of the same chunks (one transaction)."""

    def extractor_counts(self) -> dict[str, int]:
        """Extractor name -> chunks it extracted (successfully or not)."""

    def successful_extractions(self) -> list[tuple[str, str]]:
        """(chunk id, payload) of every successful extraction, by chunk id."""

    def failed_chunks(self) -> list[tuple[str, str]]:
        """(chunk id, error) of every failed extraction, by chunk id."""

    # jobs
    def create_job(self, job: Job) -> Job:
        """Store a new job (one transaction; its id must be new) and return it with its timestamps."""

    def update_job(self, job_id: str, status: str, detail: dict | None = None, if_status: str | None = None) -> bool:
        """Set a job's status (and its detail, when given), one transaction; a job done or failed drops its payload.
        With ``if_status``, only a job in that status changes. Whether it changed; KeyError for an unknown id."""

    def get_job(self, job_id: str) -> Job | None:
        """One job, or None."""

    def unfinished_jobs(self, index: str | None = None) -> list[Job]:
        """Jobs queued or running (of one index, if given), oldest first."""

    # entity decisions
    def add_decisions(self, decisions: list[Decision], job: tuple[str, dict] | None = None) -> list[Decision]:
        """Store decisions (one transaction) and return them with their ids and time; ``job`` as for
        ``add_documents`` (its detail gains ``decision_ids``)."""

    def decisions(self, in_force: bool = True) -> list[Decision]:
        """Decisions in the order they were made (``in_force``: only those not undone)."""

    def undo_decision(self, decision_id: int | None = None, job: tuple[str, dict] | None = None) -> Decision | None:
        """Mark one decision (the latest in force when no id is given) undone, one transaction; it, or None.
        ``job`` as for ``add_documents`` (its detail gains ``undone``, the decision's id), when there is one."""

    # meta and state
    def get_meta(self, key: str) -> str | None:
        """A meta value, or None."""

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value (one transaction)."""

    def count(self, table: str) -> int:
        """Rows in one of the record's tables (documents, chunks, extractions)."""

    def source_state(self, derivation: int, decisions: bool = True) -> str:
        """A hash of the derivation version and everything the graph tables are derived from (the decisions in force
        included, unless ``decisions`` is False: what a refresh that applies only decisions may reuse)."""

    def check(self, full: bool = False) -> list[str]:
        """Problems the backend finds in its own storage (empty when it is sound; ``full``: a slower, deeper look)."""

    def try_lock_writer(self) -> bool:
        """Become the record's only writer, at once or not at all (False: another process writes it); held until
        ``unlock_writer`` or the process ends, however it ends (a kill -9 included)."""

    def unlock_writer(self) -> None:
        """Let the next writer in."""

    def close(self) -> None:
        """Release the connection."""


class GraphReader(Protocol):
    """What queries read: the passages and the graph tables, in a generation's read-only snapshot (or in the store
    a build wrote them to)."""

    # passages
    def document_sources(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        """Document id -> source (the file or corpus it came from), of every document or of ``ids`` (a question's
        citations: not a read of every document per answer)."""

    def chunk_ids(self) -> list[str]:
        """Every chunk id, sorted."""

    def chunk_documents(self) -> dict[str, tuple[str, str]]:
        """Chunk id -> (document id, document title)."""

    def chunk_texts(self) -> dict[str, str]:
        """Chunk id -> text."""

    def passages(self, chunk_ids: list[str]) -> list[tuple[str, str, str, str]]:
        """(chunk id, document id, document title, text) of these chunks (unknown ids skipped)."""

    # entities and mentions
    def entities(self) -> list[Entity]:
        """Every entity, by id."""

    def entity_names(self) -> dict[str, str]:
        """Entity id -> name, by id."""

    def entities_by_id(self, ids: list[str]) -> list[Entity]:
        """The entities with these ids (unknown ids skipped)."""

    def mentions(self) -> list[tuple[str, str]]:
        """(entity id, chunk id) of every mention, sorted."""

    def mentions_of(self, entity_ids: list[str]) -> list[tuple[str, str]]:
        """(entity id, chunk id) of the mentions of these entities."""

    def mentions_in(self, chunk_ids: list[str]) -> list[tuple[str, str]]:
        """(entity id, chunk id) of the mentions in these chunks."""

    def chunks_mentioning(self, entity_id: str) -> list[str]:
        """Ids of the chunks mentioning an entity, sorted."""

    def aliases(self) -> dict[str, str]:
        """Name key -> entity id, for every name form (an entity's own key included)."""

    def aliases_of(self, entity_ids: list[str]) -> list[Alias]:
        """The name forms of these entities."""

    def proposals(self) -> list[Proposal]:
        """The merges proposed by the last build and not decided, best first."""

    # facts
    def facts(self) -> list[Fact]:
        """Every fact, by id."""

    def fact_texts(self) -> dict[str, str]:
        """Fact id -> text."""

    def fact_entities(self) -> dict[str, tuple[str, str]]:
        """Fact id -> (subject id, object id)."""

    def facts_from(self, entity_ids: list[str]) -> list[Fact]:
        """Facts whose subject is one of these entities."""

    def facts_touching(self, entity_ids: list[str]) -> list[Fact]:
        """Facts whose subject or object is one of these entities."""

    def fact_sources_of(self, fact_ids: list[str]) -> list[tuple[str, str]]:
        """(fact id, chunk id) of the chunks stating these facts."""

    def strongest_facts_of(self, entity_id: str, limit: int) -> list[str]:
        """Texts of the facts about an entity (as subject or object), strongest first, at most ``limit``."""

    # edges between entities
    def relations(self) -> list[Relation]:
        """Every relation, by source then target."""

    def relations_from(self, entity_ids: list[str]) -> list[Relation]:
        """Relations whose source is one of these entities."""

    def synonyms(self) -> list[tuple[str, str, float]]:
        """(source id, target id, similarity) of every synonymy edge, by source then target."""

    def synonyms_from(self, entity_ids: list[str]) -> list[tuple[str, str, float]]:
        """(source id, target id, similarity) of the synonymy edges from these entities."""

    def neighbours(self, entity_id: str) -> list[tuple[str, float]]:
        """(entity id, weight) of an entity's relations (either direction) and synonyms; an entity may repeat."""

    # communities and reports
    def communities_per_level(self) -> dict[int, int]:
        """Level -> number of communities, by level."""

    def community_members(self, level: int) -> list[tuple[str, str]]:
        """(community id, entity id) of the members of every community at ``level``."""

    def community_tree(self) -> list[tuple[Community, list[str]]]:
        """Every community with its members (entity ids, sorted), coarsest level first."""

    def report_texts(self) -> dict[str, str]:
        """Community id -> the text its report is searched by."""

    def leaf_reports_of(self, entity_ids: list[str], limit: int) -> list[tuple[str, str, str, int]]:
        """(community id, title, summary, members among the entities) of the reports of leaf communities holding
        these entities, most members first, at most ``limit``."""

    def reports_covering_level(self, level: int) -> list[tuple[str, float, str, str, str]]:
        """(community id, rating, title, summary, findings) of the reports at ``level`` and of the leaves above it:
        together they cover the whole graph."""

    def count(self, table: str) -> int:
        """Rows in one of the graph tables (entities, relations, facts, synonyms, reports, ...)."""


class GraphTables(GraphReader, Protocol):
    """The graph tables as a build rebuilds them from the record, each step in one transaction."""

    def replace_graph_tables(
        self,
        entities: list[Entity],
        mentions: list[tuple[str, str]],
        facts: list[Fact],
        fact_sources: list[tuple[str, str]],
        relations: list[Relation],
        aliases: Sequence[Alias] = (),
    ) -> None:
        """Replace entities, mentions, facts, fact sources (fact id, chunk id), relations and aliases, in one
        transaction."""

    def replace_proposals(self, proposals: list[Proposal]) -> None:
        """Replace the proposed merges, in one transaction."""

    def replace_synonyms(self, pairs: list[tuple[str, str, float]]) -> None:
        """Replace the synonymy edges (source id, target id, similarity), in one transaction."""

    def replace_communities(self, communities: list[tuple[Community, list[str]]]) -> None:
        """Replace the communities with their member entity ids and drop the reports of communities gone, in one
        transaction (reports of communities kept stay)."""

    def fallback_reports(self) -> list[tuple[str, str]]:
        """(community id, title) of the reports the model failed to write (an extractive one stands in)."""
        ...

    def communities_needing_report(self, redo_fallbacks: bool) -> list[tuple[str, int]]:
        """(community id, level) of communities without a report (or, ``redo_fallbacks``, with an extractive one
        standing in for a failed LLM report), deepest level first, then by id."""

    def community_entities(self, community_id: str) -> list[tuple[str, str, str]]:
        """(name, type, description) of a community's members, most mentioned first."""

    def community_facts(self, community_id: str, limit: int) -> list[str]:
        """Texts of the facts between a community's members, strongest first."""

    def community_central_chunk(self, community_id: str) -> str | None:
        """The text of the chunk mentioning most of a community's members, or None."""

    def child_summaries(self, community_id: str) -> list[str]:
        """Report summaries of a community's children, largest child first."""

    def save_report(self, report: Report) -> None:
        """Store (or replace) one community's report, in one transaction."""

    def write_snapshot(self, path: Path) -> None:
        """Copy what queries read (documents, chunks, the graph tables) into a new SQLite file at ``path``, from one
        consistent state; ``Store.open_snapshot`` opens it read-only, as a ``GraphReader``."""
