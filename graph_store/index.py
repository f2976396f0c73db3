"""One index = one directory: add and delete documents, keep every derived artefact in step.

Layout of an index directory:
  manifest.json     schema version, index id, embedder, chunking, extractor(s), where the vectors live
  index.sqlite      the system of record (graph_store/store/), and the derived tables being built; with the
                    record in PostgreSQL (setting record), only the derived tables and a copy of the passages
  chroma/           vectors the embedding model made (chunks and facts by default; all four collections with
                    static_vectors=none), or on a Chroma server; static vectors are computed at export
  derived/          generations of what queries read, the complete one named by CURRENT
                    (graph_store/generations.py): readers answer from it while a writer builds the next; with
                    the setting generations_dir they live there instead (a folder every machine mounts), and a
                    process reading them needs no index directory
  llm_cache.sqlite  every LLM response, so a re-run pays for no call twice
  index.lock        held while writing, so two writers cannot interleave (the next one waits up to
                    write_lock_timeout); a record in PostgreSQL is locked there instead (an advisory lock)

Every writer applies the documents jobs recorded in the record (the HTTP service's) before its own change:
graph_store/jobs.py says why and how.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph_store import generations, jobs
from graph_store import store as record_schema
from graph_store.documents import Document, LoadReport, chunk_document, content_hash, dedupe, load_documents
from graph_store.embeddings import Embedder, make_embedder, static_embedders
from graph_store.engine import Engine, LocalEngine, make_engine
from graph_store.errors import ConfigError, IndexBusyError, IndexStoreError, InputError, ModelError, UnavailableError
from graph_store.llm import ChatClient, Usage, make_chat_client
from graph_store.manifest import read_manifest, require_index
from graph_store.settings import DEFAULT_AUTO_MERGE, Settings
from graph_store.store import (
    SCHEMA_VERSION,
    ChunkRow,
    Decision,
    DocumentRow,
    ExtractionRow,
    GraphReader,
    Job,
    Store,
    damaged_record,
    open_store,
)

EXTRACTION_COMMIT_SECONDS = 2.0  # extracted chunks are committed at least this often (and every 32)
EXTRACTION_COMMIT_EVERY = 32
# Meta values of the record: a copy of manifest.json, and the documents a salvage lost (id -> title and source)
# until they are indexed again or deleted.
MANIFEST_COPY = "manifest"
LOST_DOCUMENTS = "lost_documents"
# Meta value: a token each writer sets when it takes the write lock, so that a process can tell whether anyone else
# has written (to Chroma too) since it last held the lock.
WRITER_TOKEN = "writer_token"
MAX_ENDPOINT_FAILURES_IN_A_ROW = 5  # then the endpoint is down, not one chunk hard: stop, resume later
LOCK_POLL_SECONDS = 0.1  # how often a writer waiting for another one tries the lock again
Progress = Callable[[str, int, int], None]  # (step, done, total)


@dataclass
class IndexSummary:
    added: int = 0
    unchanged: int = 0
    replaced: int = 0
    deleted: int = 0
    chunks_extracted: int = 0
    chunks_failed: int = 0
    failure_reasons: dict = field(default_factory=dict)  # reason -> chunks, for this run's failures
    report_failures: int = 0
    refreshed: bool = False
    seconds: float = 0.0
    notices: list[str] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    usage: dict = field(default_factory=dict)
    step_seconds: dict = field(default_factory=dict)

    def format(self) -> str:
        s = self.stats
        lines = [
            f"documents: {self.added} added, {self.replaced} replaced, {self.unchanged} unchanged, {self.deleted} deleted"
            f" ({s.get('documents', 0)} in the index)",
            f"chunks: {s.get('chunks', 0)} ({self.chunks_extracted} extracted now, {s.get('failed_chunks', 0)} failed)",
            f"entities: {s.get('entities', 0)}, relations: {s.get('relations', 0)}, facts: {s.get('facts', 0)},"
            f" synonym edges: {s.get('synonyms', 0)}",
            "communities per level: "
            + (", ".join(f"L{k}: {v}" for k, v in s.get("communities_per_level", {}).items()) or "none"),
            f"LLM: {self.usage.get('calls', 0)} calls, {self.usage.get('cache_hits', 0)} cache hits, "
            + Usage(**{k: v for k, v in self.usage.items() if k != "llm"}).tokens()
            + ("" if self.usage.get("llm") else " (offline: no LLM)"),
            f"time: {self.seconds:.1f} s"
            + ("" if self.refreshed else " (graph already up to date)")
            + (
                " (" + ", ".join(f"{k} {v:.1f}" for k, v in self.step_seconds.items()) + ")"
                if self.step_seconds
                else ""
            ),
        ]
        if self.report_failures:
            lines.append(
                f"warning: {self.report_failures} community reports failed with the LLM; extractive reports stand in"
            )
        if s.get("failed_chunks"):
            reasons = "; ".join(f"{n} {r}" for r, n in self.failure_reasons.items())
            lines.append(
                f"warning: {s['failed_chunks']} chunks could not be extracted"
                + (f" (this run: {reasons})" if reasons else "")
                + "; `kgrag stats --failed` lists them and the next `kgrag index` retries them"
            )
        return "\n".join(lines + [f"note: {n}" for n in self.notices])


# --- entity decisions, checked against the names an index holds (its record, or a served generation) --------


def check_decision(names: GraphReader, decision: Decision) -> None:
    """InputError, with the reason, for a decision no index could apply: a verdict other than merge or reject,
    a name that is no entity's, a merge of two names of one entity."""
    from graph_store.graph import normalize_name

    if decision.verdict not in ("merge", "reject"):
        raise InputError(f"a decision is merge or reject, not {decision.verdict!r}")
    entity_of = names.aliases()
    for name in (decision.a, decision.b):
        if normalize_name(name) not in entity_of:
            raise InputError(f"no entity named {name!r} in this index (`kgrag entities list` shows them)")
    a, b = (entity_of[normalize_name(n)] for n in (decision.a, decision.b))
    if decision.verdict == "merge" and a == b:
        raise InputError(f"{decision.a!r} and {decision.b!r} are already one entity")


def split_decisions(names: GraphReader, name: str, who: str = "", why: str = "") -> list[Decision]:
    """The rejections that take ``name`` out of the entity it was merged into (decide them to split)."""
    from graph_store.graph import normalize_name

    key = normalize_name(name)
    entity = names.aliases().get(key)
    if entity is None:
        raise InputError(f"no entity named {name!r} in this index")
    others = [a.name for a in names.aliases_of([entity]) if a.key != key]
    if not others:
        raise InputError(f"{name!r} is not merged with another name: nothing to split")
    return [Decision("reject", name, other, who, why or "split") for other in others]


def no_decision_to_undo(decision_id: int | None) -> str:
    return "no decision in force to undo" if decision_id is None else f"no decision {decision_id} in force"


def _extractor_name(settings: Settings) -> str:
    if settings.extraction == "llm" and not settings.uses_model("extract"):
        raise ConfigError("extraction=llm needs a chat model (KGRAG_CHAT_MODEL) with extract in llm_tasks")
    if settings.extraction == "offline" or not settings.uses_model("extract"):
        return "offline-regex"
    return f"llm:{settings.chat_model}"


class KnowledgeIndex:
    """An index directory, opened for writing (``create``: made if missing) or, with ``open``, for reading."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        chat: ChatClient | None = None,
        extractor=None,
        progress: bool | Progress = True,
        create: bool = True,
    ):
        self.settings = settings
        self.dir = Path(settings.index_dir)
        self.progress = progress
        if self.dir.exists() and not self.dir.is_dir():
            raise IndexStoreError(f"{self.dir} is a file, not an index directory")
        # Reading shared generations (generations_dir) with no index directory here: the manifest is the one published
        # with the generations, and the record belongs to the machine that builds the index.
        self.shared_reader = (
            not create and settings.generations_dir is not None and not (self.dir / "manifest.json").exists()
        )
        if not create and not self.shared_reader:
            require_index(self.dir)
        self.embedder = embedder or make_embedder(settings)
        # Collections embedded with static vectors instead (settings.static_vectors; loaded on first use).
        self.static_embedders = static_embedders(settings)
        self._writer = create
        # Where a build's extraction and embedding run (settings.engine); readers embed only queries, here.
        self.engine: Engine = make_engine(settings) if create else LocalEngine(settings)
        if create and self.dir.exists() and not os.access(self.dir, os.W_OK):
            raise UnavailableError(
                f"cannot write to {self.dir}: permission denied or a read-only folder; `kgrag ask` and `kgrag "
                "inspect` still answer from it"
            )
        self._store: Store | None = None
        self.manifest = self._check_manifest(extractor.name if extractor is not None else _extractor_name(settings))
        # Writers open the record now (and check it); readers when they first need it, read-only: answering reads
        # the generation's snapshot, never the record.
        if create:
            self._check_generations_owner()
        self._store = self._open_record() if create else None
        if create:
            self._mirror_manifest(self.manifest)
        # The chat model comes after the folder is known to be an index: its cache file lives there.
        self.chat = chat if chat is not None else make_chat_client(settings)
        self._extractor = extractor
        self._vectors: Any = None  # graph_store.vectors.VectorStore, opened on first use (Chroma is slow to load)
        self._writer_token: str | None = None  # the token this process set when it last took the write lock
        self._job_progress: jobs.ProgressRecorder | None = None  # while recorded jobs are built

    @classmethod
    def open(cls, settings: Settings, embedder: Embedder | None = None) -> KnowledgeIndex:
        """An existing index, for reading."""
        return cls(settings, embedder=embedder, progress=False, create=False)

    # --- set-up -------------------------------------------------------------------------------

    @property
    def extractor(self):
        if self._extractor is None:
            from graph_store.extraction import LLMExtractor, OfflineExtractor

            name = _extractor_name(self.settings)
            if name == "offline-regex" or self.chat is None:
                self._extractor = OfflineExtractor()
            else:
                self._extractor = LLMExtractor(self.chat, self.settings.gleaning_rounds)
        return self._extractor

    @property
    def vectors(self):
        """The Chroma collections (writers and stats only: queries read the generation's matrices)."""
        if self._vectors is None:
            from graph_store.vectors import VectorStore, chroma_client

            # A Chroma server may hold many indexes: their collections carry the index's own id.
            prefix = f"kg{self.manifest['index_id']}" if self.settings.chroma_host else "kg"
            self._vectors = VectorStore(
                chroma_client(self.dir / "chroma", self.settings.chroma_host, self.settings.chroma_port),
                self.embedder,
                prefix,
                self.static_embedders,
                self.engine.embed,
                f"run `kgrag repair --index-dir {self.dir}`",
            )
        return self._vectors

    def _wanted_manifest(self, extractor: str) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "embedder": self.embedder.identity(),  # chunks, queries, and every collection not static
            "static_vectors": self.static_identity(),
            "chunk_tokens": self.settings.chunk_tokens,
            "chunk_overlap": self.settings.chunk_overlap,
            "extractor": extractor,
            "record": record_schema.record_location(self.settings.record),
            "vector_store": (
                f"chroma://{self.settings.chroma_host}:{self.settings.chroma_port}"
                if self.settings.chroma_host
                else "embedded"
            ),
        }

    @property
    def store(self) -> Store:
        """The system of record (a reader's is opened read-only on first use)."""
        if self._store is None:
            if self.shared_reader:
                raise IndexStoreError(
                    f"no index at {self.dir}: this process answers from the generations in "
                    f"{self.settings.generations_path}; documents, jobs and decisions go to the machine that indexes"
                )
            self._store = open_store(self.settings.record, self.dir / "index.sqlite", read_only=True)
        return self._store

    def _write_manifest(self, manifest: dict) -> None:
        tmp = self.dir / "manifest.json.tmp"
        tmp.write_text(json.dumps(manifest, indent=2))
        tmp.replace(self.dir / "manifest.json")
        if self._store is not None:
            self._mirror_manifest(manifest)

    def _mirror_manifest(self, manifest: dict) -> None:
        """A copy of the manifest in the record, so that ``kgrag repair`` can rebuild a lost or damaged manifest.json."""
        text = json.dumps(manifest, sort_keys=True)
        if self.store.get_meta(MANIFEST_COPY) != text:
            self.store.set_meta(MANIFEST_COPY, text)

    def _check_manifest(self, extractor: str) -> dict:
        wanted = self._wanted_manifest(extractor)
        if self.shared_reader:
            return self._checked(self._published_manifest(), wanted, self.settings.generations_path)
        if not (self.dir / "manifest.json").exists():
            if self.dir.exists() and any(self.dir.iterdir()):
                raise IndexStoreError(f"{self.dir} is not empty and has no manifest.json: not a kgrag index")
            self.dir.mkdir(parents=True, exist_ok=True)
            manifest = {**wanted, "index_id": uuid.uuid4().hex[:12], "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
            self._write_manifest(manifest)
            return manifest
        recorded = self._checked(read_manifest(self.dir), wanted, self.dir)
        if recorded.get("static_vectors") != wanted["static_vectors"] and self._writer:  # made before, or a new recipe
            recorded["static_vectors"] = wanted["static_vectors"]  # the next refresh derives the vectors again
            self._write_manifest(recorded)
        if "index_id" not in recorded and self._writer:  # indexes made before ids existed
            recorded["index_id"] = uuid.uuid4().hex[:12]
            self._write_manifest(recorded)
        return recorded

    def _check_generations_owner(self) -> None:
        """A writer publishes into a shared generations_dir only the generations of its own index: another index's
        there would be replaced under the processes serving it."""
        if self.settings.generations_dir is None:
            return
        try:
            current = generations.current(self.settings)
        except IndexStoreError:  # damaged: the next build replaces it
            return
        other = current.manifest.get("index_id") if current is not None else None
        if other and other != self.manifest.get("index_id"):
            raise IndexStoreError(
                f"{self.settings.generations_path} holds the generations of another index (id {other}), not of "
                f"{self.dir}: give each index its own generations_dir"
            )

    def _published_manifest(self) -> dict:
        """The manifest published with the current shared generation (a process with no index directory here)."""
        root = self.settings.generations_path
        current = generations.current(self.settings)
        if current is None:
            raise IndexStoreError(
                f"nothing is published in {root} (generations_dir) and there is no index at {self.dir}: build one "
                f"with `kgrag index PATH --index-dir DIR --generations-dir {root}` on the machine that indexes"
            )
        if not current.manifest:
            raise IndexStoreError(
                f"{current.dir} was published by an older kgrag, without the index's manifest: run `kgrag index` on "
                "the machine that indexes to publish a new generation"
            )
        return dict(current.manifest)

    def _checked(self, recorded: dict, wanted: dict, where: Path) -> dict:
        """The manifest ``recorded`` at ``where``, when these settings can open the index it describes."""
        if recorded.get("schema_version") != SCHEMA_VERSION:
            raise IndexStoreError(
                f"{where} has index schema {recorded.get('schema_version')}, this kgrag reads "
                f"{SCHEMA_VERSION}: rebuild the index"
            )
        got_embedder, want_embedder = recorded.get("embedder", {}), wanted["embedder"]
        if any(got_embedder.get(k) != v for k, v in want_embedder.items() if k != "dimension"):
            raise IndexStoreError(
                f"{where} was built with embeddings {got_embedder}, but the settings ask for {want_embedder}; "
                "use the same embedding settings or another --index-dir"
            )
        want_static = wanted["static_vectors"]
        got_static = recorded.get("static_vectors", want_static)  # an index made before: re-derived on refresh
        if sorted(got_static) != sorted(want_static):
            raise IndexStoreError(
                f"{where} was built with static vectors for {', '.join(sorted(got_static)) or 'no collection'}, "
                f"but the settings ask for {', '.join(sorted(want_static)) or 'none'} (static_vectors); use the same "
                "setting or another --index-dir"
            )
        for key in ("chunk_tokens", "chunk_overlap"):
            if recorded.get(key) != wanted[key]:
                raise IndexStoreError(
                    f"{where} was chunked with {key}={recorded.get(key)}, the settings say "
                    f"{wanted[key]}; use the same chunking or another --index-dir"
                )
        if self.shared_reader:  # it opens neither the record nor the vector store
            return recorded
        if recorded.get("record", "index.sqlite") != wanted["record"]:
            raise IndexStoreError(
                f"{where} keeps its record in {recorded.get('record', 'index.sqlite')}, the settings say "
                f"{wanted['record']}; use the same record setting (KGRAG_RECORD, --record) or another --index-dir"
            )
        if recorded.get("vector_store", "embedded") != wanted["vector_store"]:
            raise IndexStoreError(
                f"{where} keeps its vectors in {recorded.get('vector_store', 'embedded')}, the "
                f"settings say {wanted['vector_store']}; use the same chroma_host or another --index-dir"
            )
        return recorded

    def _open_record(self) -> Store:
        """The system of record; an index whose record is missing, empty or damaged is reported, never recreated."""
        path = self.dir / "index.sqlite"
        if self.settings.record:  # in PostgreSQL; index.sqlite holds only what a build derives
            return open_store(self.settings.record, path)
        # Never built: no record yet, or an empty file from a run killed as it started.
        fresh = not (self.settings.generations_path / "CURRENT").exists() and (
            not path.exists() or path.stat().st_size == 0
        )
        if not fresh and (not path.exists() or path.stat().st_size == 0):
            raise damaged_record(path, OSError("missing" if not path.exists() else "empty file"))
        store = Store(path)
        problems = store.check() if not fresh else []  # (readers read the generation's snapshot, checked on use)
        if problems:
            store.close()
            raise damaged_record(path, ValueError("; ".join(problems[:3])))
        return store

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        """The record's write lock, waited for up to ``write_lock_timeout`` while another process holds it."""
        wait = self.settings.write_lock_timeout
        deadline = time.monotonic() + wait
        while not self.store.try_lock_writer():
            if time.monotonic() >= deadline:
                raise IndexBusyError(
                    f"another process is writing this index (waited {wait:g} s, write_lock_timeout); "
                    "try again when it has finished"
                )
            time.sleep(LOCK_POLL_SECONDS)
        # The vectors this process opened before are out of date if another writer has held the lock since (one
        # killed right after a Chroma upsert included): embedded Chroma would not show its writes, so they are opened
        # again on first use and read as they are now. Reopening costs seconds on a large collection: only then.
        try:
            if self._writer_token is None or self.store.get_meta(WRITER_TOKEN) != self._writer_token:
                self._close_vectors()
                self._writer_token = uuid.uuid4().hex
                self.store.set_meta(WRITER_TOKEN, self._writer_token)  # (a full disk: the lock is let go below)
            yield
        finally:
            self.store.unlock_writer()

    @contextmanager
    def _writing(self, summary: IndexSummary) -> Iterator[None]:
        """The write lock, with the documents jobs recorded in the index applied and built first."""
        with self._write_lock():
            built = self._run_recorded_jobs()
            if built is not None:
                summary.notices += built.notices
            yield

    def run_jobs(self) -> IndexSummary:
        """Apply and build the documents jobs recorded in the index (what every writer does first; the HTTP
        service's writer does only this). A summary of their build (nothing done: no jobs were recorded)."""
        start = time.perf_counter()
        with self._write_lock():
            summary = self._run_recorded_jobs() or IndexSummary()
        return self._finish(summary, start)

    def _run_recorded_jobs(self) -> IndexSummary | None:
        """Apply the recorded jobs, oldest first, build once for them all and end each done or failed
        (graph_store/jobs.py); the caller holds the lock. The summary of their build, or None without jobs."""
        building = []
        for job in self.store.unfinished_jobs():
            if job.status == "running":  # its process stopped during the build: only the build is left
                self.store.update_job(job.id, "running", {**job.detail, "recovered": jobs.RECOVERED})
                building.append(job)
                continue
            try:
                self._record_job(job)
            except InputError as exc:  # this job's own change cannot be made: it fails alone
                self.store.update_job(job.id, "failed", {**job.detail, "error": str(exc)})
                continue
            except KeyError:  # no longer queued: failed meanwhile by a service that gave up waiting for the lock
                continue
            building.append(job)
        if not building:
            return None
        summary = IndexSummary(notices=[f"applied {len(building)} documents job(s) the HTTP service had recorded"])
        self._job_progress = jobs.ProgressRecorder(self.store, building)
        try:
            self._update(summary)
        except Exception as exc:  # the jobs fail with the reason; the caller sees the error
            jobs.finish(self.store, building, exc)
            raise
        finally:
            self._job_progress = None
        jobs.finish(self.store, building)
        return summary

    def _record_job(self, job: Job) -> None:
        """A queued job's change into the record, the job set running in the same transaction."""
        if job.action == "add":
            self._record_documents(jobs.documents_of(job), IndexSummary(), job)
        elif job.action == "delete":
            self._record_delete(job.payload["ids"], IndexSummary(), job)
        elif job.action == "decide":
            self._record_decisions(jobs.decisions_of(job), job)
        else:
            self._record_undo(job.payload["decision"], job)

    def _bar(self, desc: str, total: int, unit: str):
        """A progress bar, or the caller's progress callback behind the same update()/close() calls; the progress
        of recorded jobs being built goes to their records too."""
        from tqdm import tqdm

        bar = (
            None
            if callable(self.progress)
            else tqdm(total=total, desc=desc, unit=unit, disable=not self.progress or None)
        )
        callbacks = [c for c in (self.progress if callable(self.progress) else None, self._job_progress) if c]
        done = [0]

        class Bar:
            def update(self, n: int = 1) -> None:
                done[0] += n
                if bar is not None:
                    bar.update(n)
                for callback in callbacks:
                    callback(desc, done[0], total)

            def close(self) -> None:
                if bar is not None:
                    bar.close()

        for callback in callbacks:
            callback(desc, 0, total)
        return Bar()

    # --- writing ------------------------------------------------------------------------------

    def add_path(self, path: str | Path) -> IndexSummary:
        report = LoadReport()
        docs = load_documents(path, report)
        summary = self.add_documents(docs)
        summary.notices = [f"skipped {s}" for s in report.skipped] + report.notices + summary.notices
        return summary

    def add_documents(self, docs: Iterable[Document], reextract: bool = False) -> IndexSummary:
        start = time.perf_counter()
        summary = IndexSummary()
        docs = dedupe(docs)
        with self._writing(summary):
            self._record_documents(docs, summary)
            self._update(summary, reextract=reextract)
        return self._finish(summary, start)

    def _record_documents(self, docs: list[Document], summary: IndexSummary, job: Job | None = None) -> None:
        """The new and changed documents into the record with their chunks, in one transaction (the caller holds
        the lock); ``job``: the recorded job they come from, set running with its counts in that transaction."""
        limit = self.settings.max_document_chars
        notices = [
            f"skipped {d.title or d.source or d.id!r}: {len(d.text):,} characters, over the limit of "
            f"{limit:,} (max_document_chars); split it or raise the limit"
            for d in docs
            if len(d.text) > limit
        ]
        docs = [d for d in docs if len(d.text) <= limit]
        known = self.store.document_hashes()
        new = [d for d in docs if known.get(d.id) != d.hash]
        replaced = sum(d.id in known for d in new)
        counts = {"added": len(new) - replaced, "replaced": replaced, "unchanged": len(docs) - len(new)}
        # One transaction; each document is chunked as the store takes it.
        self.store.add_documents(
            (
                (
                    DocumentRow(doc.id, doc.title, doc.source, doc.hash),
                    [
                        ChunkRow(c.id, c.doc_id, c.index, c.text, c.n_tokens)
                        for c in chunk_document(doc, self.settings.chunk_tokens, self.settings.chunk_overlap)
                    ],
                )
                for doc in new
            ),
            job=(job.id, {**job.detail, **counts, "notices": notices}) if job else None,
        )
        summary.added, summary.replaced, summary.unchanged = counts["added"], replaced, counts["unchanged"]
        summary.notices += notices
        self._forget_lost({d.id for d in docs})

    def delete_documents(self, doc_ids: Iterable[str]) -> IndexSummary:
        """Delete documents and what only they supported. Ids deleted by an interrupted earlier delete are
        finished, not refused."""
        start = time.perf_counter()
        summary = IndexSummary()
        with self._writing(summary):
            self._record_delete(list(doc_ids), summary)
            self._update(summary)
        return self._finish(summary, start)

    def _record_delete(self, doc_ids: list[str], summary: IndexSummary, job: Job | None = None) -> None:
        """The documents deleted from the record, in one transaction (the caller holds the lock); ``job`` as for
        ``_record_documents``."""
        doc_ids = list(dict.fromkeys(doc_ids))
        known = set(self.store.document_hashes())
        pending = self.store.pending_deletes()
        lost = self.lost_documents()
        unknown = [d for d in doc_ids if d not in known and d not in pending and d not in lost]
        if unknown:
            raise InputError(
                f"no document with id {', '.join(unknown)} in this index (`kgrag stats --documents` lists them)"
            )
        finishing = [d for d in doc_ids if d in pending]
        if finishing:
            summary.notices.append(f"{', '.join(finishing)} already deleted by an interrupted run; finished now")
        summary.deleted = len(doc_ids) - len(finishing)
        self.store.delete_documents(
            doc_ids,
            job=(job.id, {**job.detail, "deleted": summary.deleted, "notices": summary.notices}) if job else None,
        )
        self._forget_lost(set(doc_ids))

    # --- entity decisions (graph_store/resolution.py) -------------------------------------------

    def decide(self, decisions: list[Decision]) -> tuple[list[Decision], IndexSummary]:
        """Record a person's merge decisions and rebuild the derived state with them (reports and vectors are made
        again only for the communities and entities that changed). Names must be names of entities in the index."""
        start = time.perf_counter()
        summary = IndexSummary()
        with self._writing(summary):
            stored = self._record_decisions(decisions)
            self._update(summary)
        return stored, self._finish(summary, start)

    def _record_decisions(self, decisions: list[Decision], job: Job | None = None) -> list[Decision]:
        """Check the decisions and store them (the caller holds the lock); ``job`` as for ``_record_documents``."""
        for decision in decisions:
            check_decision(self.store, decision)
        return self.store.add_decisions(decisions, job=(job.id, job.detail) if job else None)

    def split_decisions(self, name: str, who: str = "", why: str = "") -> list[Decision]:
        """The rejections that take ``name`` out of the entity it was merged into (decide them to split)."""
        return split_decisions(self.store, name, who, why)

    def undo_decision(self, decision_id: int | None = None) -> tuple[Decision, IndexSummary]:
        """Undo one decision (the latest in force by default) and rebuild without it."""
        start = time.perf_counter()
        summary = IndexSummary()
        with self._writing(summary):
            undone = self._record_undo(decision_id)
            self._update(summary)
        return undone, self._finish(summary, start)

    def _record_undo(self, decision_id: int | None, job: Job | None = None) -> Decision:
        """Mark the decision undone in the record (the caller holds the lock); ``job`` as for ``_record_documents``."""
        undone = self.store.undo_decision(decision_id, job=(job.id, job.detail) if job else None)
        if undone is None:
            raise InputError(no_decision_to_undo(decision_id))
        return undone

    def lost_documents(self) -> dict[str, str]:
        """Documents a salvage could not recover whole (id -> title and source), until indexed again or deleted."""
        try:
            lost = json.loads(self.store.get_meta(LOST_DOCUMENTS) or "{}")
        except ValueError:  # a damaged value: `kgrag check` reports the record's damage itself
            return {}
        return lost if isinstance(lost, dict) else {}

    def _forget_lost(self, doc_ids: set[str]) -> None:
        lost = self.lost_documents()
        if lost.keys() & doc_ids:
            self.store.set_meta(LOST_DOCUMENTS, json.dumps({k: v for k, v in lost.items() if k not in doc_ids}))

    def refresh(self, force: bool = False, reextract: bool = False) -> IndexSummary:
        """Finish whatever the record says is pending: chunks to extract (failed ones again), a derived state to
        rebuild (after a change, an interrupted run, damage to a derived file, or ``force``)."""
        start = time.perf_counter()
        summary = IndexSummary()
        with self._writing(summary):
            self._update(summary, force, reextract)
        return self._finish(summary, start)

    def _update(self, summary: IndexSummary, force: bool = False, reextract: bool = False) -> None:
        self._check_extractor(summary, reextract)
        # With a model, extraction waits on the endpoint: the chunk vectors (which need no extraction) are
        # embedded meanwhile, on this machine's cores.
        embedding = ThreadPoolExecutor(max_workers=1) if self.extractor.uses_llm else None
        chunks = embedding.submit(self.vectors.sync, "chunks", self._chunk_texts(), False) if embedding else None
        try:
            try:
                extracted = self._extract_pending(reextract)
                summary.chunks_extracted, summary.chunks_failed, summary.failure_reasons = extracted
            finally:
                if embedding and chunks:
                    chunks.result()
                    embedding.shutdown()
            summary.report_failures = self._refresh(summary, force)
        finally:
            self.engine.close()  # Ray's actors are not kept between builds

    def _chunk_texts(self) -> dict[str, str]:
        """What a chunk's vector embeds: its document's title and its text."""
        return {i: f"{title}\n{text}".strip() for i, title, text in self.store.chunks_with_titles()}

    def _check_extractor(self, summary: IndexSummary, reextract: bool) -> None:
        """The manifest records the extractors really used; mixing them is said, and --reextract unifies."""
        name = self.extractor.name
        used = self.store.extractor_counts()
        others = {k: v for k, v in used.items() if k != name}
        if others and not reextract:
            summary.notices.append(
                f"this index was extracted with {', '.join(f'{k} ({v} chunks)' for k, v in others.items())}; new "
                f"chunks use {name}. `kgrag index --reextract` redoes every chunk with {name}"
            )

    def _finish(self, summary: IndexSummary, start: float) -> IndexSummary:
        used = self.store.extractor_counts()
        if used and used != self.manifest.get("extractors"):
            label = next(iter(used)) if len(used) == 1 else "mixed: " + ", ".join(sorted(used))
            self.manifest = {**self.manifest, "extractor": label, "extractors": used}
            self._write_manifest(self.manifest)
        summary.seconds = time.perf_counter() - start
        summary.stats = self.stats(vectors=False)
        summary.usage = {**(self.chat.usage if self.chat else Usage()).as_dict(), "llm": self.extractor.uses_llm}
        return summary

    def _extract_pending(self, reextract: bool = False) -> tuple[int, int, dict]:
        """Extract every chunk without a successful extraction by the current extractor; results are committed as
        they arrive, so an interrupted or failing run keeps what it extracted."""
        from graph_store.extraction import dump_extraction

        pending = self.store.chunks_to_extract(self.extractor.name if reextract else None)
        if not pending:
            return 0, 0, {}
        reasons: Counter = Counter()
        in_a_row = 0
        bar = self._bar("extracting", len(pending), "chunk")
        rows: list[ExtractionRow] = []
        last_commit = time.monotonic()

        def flush() -> None:
            nonlocal last_commit
            self.store.save_extractions(rows)  # one transaction per batch
            rows.clear()
            last_commit = time.monotonic()

        # The engine maps the chunks (here or on Ray); every result is recorded here, in batches.
        with closing(self.engine.map_extract(self.extractor, pending)) as results:
            try:
                for chunk_id, extraction in results:
                    payload = dump_extraction(extraction)
                    if extraction.status == "failed":
                        reasons[extraction.error.split(":")[0]] += 1
                    in_a_row = in_a_row + 1 if extraction.endpoint_failure else 0
                    rows.append(
                        ExtractionRow(
                            chunk_id,
                            self.extractor.name,
                            extraction.status,
                            extraction.error,
                            payload,
                            content_hash(payload),
                        )
                    )
                    if (
                        len(rows) >= EXTRACTION_COMMIT_EVERY
                        or time.monotonic() - last_commit > EXTRACTION_COMMIT_SECONDS
                    ):
                        flush()
                    bar.update(1)
                    if in_a_row >= MAX_ENDPOINT_FAILURES_IN_A_ROW:
                        raise ModelError(
                            f"{in_a_row} chunks in a row failed at the model endpoint (last: "
                            f"{extraction.error}); what was extracted is saved, `kgrag index` resumes"
                        )
            finally:
                if rows:
                    flush()
                bar.close()
        return len(pending), sum(reasons.values()), dict(reasons)

    def static_identity(self) -> dict[str, dict]:
        """Collection -> identity of its static embedder (recorded in the manifest and in each generation)."""
        return {name: e.identity() for name, e in sorted(self.static_embedders.items())}

    def vector_problems(self) -> list[str]:
        """Chroma collections whose vector count differs from the record's items (a deleted or damaged chroma/), or
        whose vectors Chroma cannot all give back. Static collections have no stored vectors: they are checked with
        the generation's files."""
        found = []
        for collection in self.vectors.collections:  # each named after its table in the record
            have, want = self.vectors.count(collection), self.store.count(collection)
            if have != want:
                found.append(f"the {collection} collection holds {have} vectors, the record {want} items")
            elif unreadable := self.vectors.unreadable(collection):
                found.append(unreadable)
        return found

    def _vectors_present(self) -> bool:
        """A cheap check before saying "up to date": the embedded vector folder still exists."""
        return bool(self.settings.chroma_host) or (self.dir / "chroma" / "chroma.sqlite3").exists()

    def _refresh(self, summary: IndexSummary, force: bool = False) -> int:
        """Rebuild every derived artefact if the source changed since the current generation, or it is damaged."""
        from graph_store.communities import detect_communities, write_reports
        from graph_store.graph import KnowledgeGraph, derive_graph_tables, resolve_names, store_synonyms
        from graph_store.reuse import Previous

        state = self.source_state()
        try:
            current = generations.current(self.settings)
        except IndexStoreError:  # a damaged generation: this refresh replaces it
            current = None
        if (
            not force
            and current is not None
            and current.source_state == state
            and not current.problems()
            and current.static_vectors == self.static_identity()
            and self._vectors_present()
            and not self.store.derived_lost  # the record in PostgreSQL, the graph tables' file deleted
            and not (self.settings.uses_model("reports") and self.store.fallback_reports())  # reports to retry
        ):
            return 0
        summary.refreshed = True
        s = self.settings
        clock = time.perf_counter()

        def step(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            summary.step_seconds[name] = now - clock
            clock = now

        progress = bool(self.progress) and not callable(self.progress)
        record = self.store.source_state(record_schema.DERIVATION_VERSION, decisions=False)
        recipe = self._recipe()
        # Forced: everything made again from the record. Otherwise what did not change is taken from the current
        # generation (graph_store/reuse.py).
        base = (
            None
            if force
            else Previous.of(current, record_schema.DERIVATION_VERSION, self.static_identity(), recipe, record)
        )
        resolved = (base.resolution() if base else None) or resolve_names(
            self.store, self.static_embedders.get("entities", self.embedder).embed
        )
        self.store.replace_proposals(derive_graph_tables(self.store, s.entity_auto_merge, resolved=resolved))
        step("graph tables")
        self.vectors.sync("chunks", self._chunk_texts(), progress)
        step("chunk vectors")
        entities = self.store.entity_names()
        self.vectors.sync("entities", entities, progress)
        step("entity vectors")
        facts = self.store.fact_texts()
        # With a model writing the reports, the fact vectors (needed by nothing before the export) are embedded
        # while it answers; offline the reports need the same cores, so one after the other.
        overlap = ThreadPoolExecutor(max_workers=1) if self.chat is not None else None
        embedded_facts = overlap.submit(self.vectors.sync, "facts", facts, False) if overlap else None
        if not overlap:
            self.vectors.sync("facts", facts, progress)
            step("fact vectors")
        try:
            store_synonyms(self.store, self._synonyms(list(entities), base))
            step("synonymy")
            detect_communities(
                self.store, s.max_cluster_size, s.community_seed, base.communities(self.store) if base else None
            )
            step("communities")
            failures = write_reports(
                self.store, self.chat if s.uses_model("reports") else None, s.max_concurrency, progress
            )
            self.vectors.sync("reports", self.store.report_texts(), progress)
            step("reports")
        finally:
            if overlap and embedded_facts:
                embedded_facts.result()
                overlap.shutdown()
                step("fact vectors (after the reports)")
        folder = generations.start(self.settings)
        try:
            KnowledgeGraph.from_store(self.store).save(folder)
            self.vectors.export(folder, s.ann_min_vectors, base.folder if base else None)
            resolved.save(folder / "resolution.json")
            self.store.clear_pending_deletes()
            self.store.write_snapshot(folder / "snapshot.sqlite")
            generations.publish(
                self.settings,
                folder,
                state,
                record_schema.DERIVATION_VERSION,
                self.static_identity(),
                record,
                recipe,
                self.manifest,
            )
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)  # a failed build (a full disk) leaves no half generation
            raise
        step("PPR matrix, vector export and snapshot")
        return failures

    def _synonymy_threshold(self) -> float:
        s = self.settings
        return (
            s.synonymy_threshold
            if s.synonymy_threshold is not None
            else self.vectors.embedders["entities"].name_similarity
        )

    def _recipe(self) -> dict:
        """The settings a generation is derived with beyond the record: a refresh builds on the current generation
        only when they are the same."""
        s = self.settings
        return {
            "synonymy": [self._synonymy_threshold(), s.synonymy_top_k],
            "communities": [s.max_cluster_size, s.community_seed],
            "ann_min_vectors": s.ann_min_vectors,
        }

    def _synonyms(self, ids: list[str], base) -> list[tuple[str, str, float]]:
        """Synonymy edges between the entities ``ids`` (sorted): updated from ``base``'s (graph_store/reuse.py) where
        few entities changed, else computed over every pair."""
        from graph_store.graph import synonym_pairs

        if not ids:
            return []
        vectors = self.vectors.vectors("entities", ids)
        threshold, top_k = self._synonymy_threshold(), self.settings.synonymy_top_k
        updated = base.synonyms((ids, vectors), threshold, top_k) if base else None
        if updated is not None:
            return updated
        return synonym_pairs(ids, vectors, threshold, top_k, exact_max=self.settings.synonymy_exact_max)

    # --- reading ------------------------------------------------------------------------------

    def generation(self) -> generations.Generation:
        """The complete derived state queries read; a clear error when there is none or it is damaged."""
        current = generations.current(self.settings)
        if current is None:
            raise IndexStoreError(
                f"{self.dir} has no complete derived state yet (a first build was interrupted, or it "
                f"was made by an older kgrag); run `kgrag index --index-dir {self.dir}` to finish it"
            )
        if current.derivation != record_schema.DERIVATION_VERSION:
            raise IndexStoreError(
                f"{self.dir} was derived by an older kgrag; run `kgrag index --index-dir {self.dir}` "
                "to bring it up to date"
            )
        if current.static_vectors != self.static_identity():  # vectors of another static recipe
            raise IndexStoreError(
                f"{self.dir} holds static vectors of an older recipe; run `kgrag index --index-dir "
                f"{self.dir}` to bring it up to date"
            )
        problems = current.problems()
        if problems:
            raise IndexStoreError(f"{self.dir}: {problems[0]}; run `kgrag repair --index-dir {self.dir}`")
        return current

    def graph(self):
        """The PPR graph of the current generation."""
        from graph_store.graph import KnowledgeGraph

        return KnowledgeGraph.load(self.generation().dir)

    def pending_changes(self, generation: generations.Generation) -> bool:
        """Whether the record holds changes the generation does not (a build running or interrupted); a reader of
        shared generations does not see the record: False."""
        return not self.shared_reader and generation.source_state != self.source_state()

    def source_state(self) -> str:
        """What the derived state is built from: the record (decisions included) and the auto-merge threshold."""
        state = self.store.source_state(record_schema.DERIVATION_VERSION)
        if self.settings.entity_auto_merge == DEFAULT_AUTO_MERGE:  # the state of indexes made before the setting
            return state
        return f"{state}:auto-merge {self.settings.entity_auto_merge:g}"

    def stats(self, vectors: bool = True) -> dict:
        """Counts from the record (and the vector collections, unless ``vectors`` is False: opening Chroma is slow)."""
        count = self.store.count
        failed = len(self.store.failed_chunks())
        return {
            "documents": count("documents"),
            "chunks": count("chunks"),
            "extracted_chunks": sum(self.store.extractor_counts().values()) - failed,  # kept by an interrupted build
            "failed_chunks": failed,
            "failed_reports": len(self.store.fallback_reports()),
            "entities": count("entities"),
            "relations": count("relations"),
            "facts": count("facts"),
            "synonyms": count("synonyms"),
            "communities_per_level": self.store.communities_per_level(),
            "reports": count("reports"),
            **({"vectors": self._vector_counts()} if vectors else {}),
        }

    def _vector_counts(self) -> dict[str, int]:
        """Vectors per collection: Chroma's, and for static collections the current generation's export."""
        from graph_store.vectors import COLLECTIONS

        counts = {name: self.vectors.count(name) for name in self.vectors.collections}
        static = [name for name in COLLECTIONS if name not in counts]
        try:
            current = generations.current(self.settings) if static else None
        except IndexStoreError:
            current = None
        exported: dict[str, int] = {}
        if current is not None:
            import zipfile

            from graph_store.vectors import Exported

            try:
                with Exported(current.dir) as data:  # reads only the ids
                    exported = {name: len(data.ids(name)) for name in static}
            except (OSError, ValueError, KeyError, zipfile.BadZipFile):  # damaged: `kgrag check` says so
                pass
        return {name: counts.get(name, exported.get(name, 0)) for name in COLLECTIONS}

    def _close_vectors(self) -> None:
        if self._vectors is not None:
            self._vectors.close()
            self._vectors = None

    def close(self) -> None:
        self.engine.close()  # (each build closes it too: this is for a build that failed to)
        self._close_vectors()
        if self._store is not None:
            self._store.close()
        if self.chat is not None:
            cache = getattr(self.chat.model, "cache", None)
            if cache is not None and hasattr(cache, "close"):
                cache.close()
