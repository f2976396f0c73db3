"""One index = one directory: add and delete documents, keep every derived artefact in step.

Layout of an index directory:
  manifest.json     schema version, index id, embedder, chunking, extractor, where the vectors live
  index.sqlite      the system of record (graph_store/store.py)
  chroma/           vectors of chunks, entities, facts and community reports (or on a Chroma server)
  graph.npz/.json   the sparse entity-passage matrix PPR walks (derived)
  vectors.npz       every collection's vectors as matrices, plus HNSW graphs for large ones (derived)
  llm_cache.sqlite  every LLM response, so a re-run pays for no call twice
  index.lock        held while writing, so two writers cannot interleave
"""

from __future__ import annotations

import fcntl
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from tqdm import tqdm

from graph_store.communities import detect_communities, write_reports
from graph_store.documents import Document, LoadReport, chunk_document, content_hash, dedupe, load_documents
from graph_store.embeddings import Embedder, make_embedder
from graph_store.errors import ConfigError, IndexStoreError, InputError
from graph_store.extraction import Extractor, LLMExtractor, OfflineExtractor, dump_extraction
from graph_store.graph import KnowledgeGraph, derive_graph_tables, store_synonyms, synonym_pairs
from graph_store.llm import ChatClient, Usage, make_chat_client
from graph_store.settings import Settings
from graph_store.store import SCHEMA_VERSION, Store
from graph_store.vectors import VectorStore, chroma_client

EXTRACTION_COMMIT_EVERY = 32


@dataclass
class IndexSummary:
    added: int = 0
    unchanged: int = 0
    replaced: int = 0
    deleted: int = 0
    chunks_extracted: int = 0
    chunks_failed: int = 0
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
            "communities per level: " + (", ".join(f"L{k}: {v}" for k, v in s.get("communities_per_level", {}).items()) or "none"),
            f"LLM: {self.usage.get('calls', 0)} calls, {self.usage.get('cache_hits', 0)} cache hits, "
            f"{self.usage.get('input_tokens', 0)} input + {self.usage.get('output_tokens', 0)} output tokens"
            + ("" if self.usage.get("llm") else " (offline: no LLM)"),
            f"time: {self.seconds:.1f} s" + ("" if self.refreshed else " (graph already up to date)")
            + (" (" + ", ".join(f"{k} {v:.1f}" for k, v in self.step_seconds.items()) + ")" if self.step_seconds else ""),
        ]
        if self.report_failures:
            lines.append(f"warning: {self.report_failures} community reports failed with the LLM; extractive reports stand in")
        if s.get("failed_chunks"):
            lines.append(f"warning: {s['failed_chunks']} chunks could not be extracted; `kgrag stats --failed` lists them")
        return "\n".join(lines + [f"note: {n}" for n in self.notices])


def require_index(path: Path) -> None:
    """Fail with what to do unless ``path`` holds an index (its manifest is the mark)."""
    if not (path / "manifest.json").exists():
        raise IndexStoreError(f"no index at {path}; build one with `kgrag index PATH --index-dir {path}`")


class KnowledgeIndex:
    """An index directory, opened for reading and writing."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None, chat: ChatClient | None = None,
                 extractor: Extractor | None = None, progress: bool = True, create: bool = True):
        self.settings = settings
        self.dir = Path(settings.index_dir)
        if not create:
            require_index(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.progress = progress
        self.embedder = embedder or make_embedder(settings)
        self.chat = chat if chat is not None else make_chat_client(settings)
        self.extractor = extractor or self._default_extractor()
        manifest = self._check_manifest()
        self.store = Store(self.dir / "index.sqlite")
        # A Chroma server may hold many indexes: their collections carry the index's own id.
        prefix = f"kg{manifest['index_id']}" if settings.chroma_host else "kg"
        self.vectors = VectorStore(chroma_client(self.dir / "chroma", settings.chroma_host, settings.chroma_port),
                                   self.embedder, prefix)
        self._graph: KnowledgeGraph | None = None

    # --- set-up -------------------------------------------------------------------------------

    def _default_extractor(self) -> Extractor:
        mode = self.settings.extraction
        if mode == "llm" and self.chat is None:
            raise ConfigError("extraction=llm needs a chat model (KGRAG_CHAT_MODEL)")
        if mode == "offline" or self.chat is None:
            return OfflineExtractor()
        return LLMExtractor(self.chat, self.settings.gleaning_rounds)

    def _manifest(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "embedder": self.embedder.identity(),
            "chunk_tokens": self.settings.chunk_tokens,
            "chunk_overlap": self.settings.chunk_overlap,
            "extractor": self.extractor.name,
            "vector_store": (f"chroma://{self.settings.chroma_host}:{self.settings.chroma_port}"
                             if self.settings.chroma_host else "embedded"),
        }

    def _check_manifest(self) -> dict:
        path = self.dir / "manifest.json"
        wanted = self._manifest()
        if not path.exists():
            if any(self.dir.iterdir()):
                raise IndexStoreError(f"{self.dir} is not empty and has no manifest.json: not a kgrag index")
            manifest = {**wanted, "index_id": uuid.uuid4().hex[:12], "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
            path.write_text(json.dumps(manifest, indent=2))
            return manifest
        recorded = json.loads(path.read_text())
        if recorded.get("schema_version") != SCHEMA_VERSION:
            raise IndexStoreError(f"{self.dir} has index schema {recorded.get('schema_version')}, this kgrag reads "
                                  f"{SCHEMA_VERSION}: rebuild the index")
        got_embedder, want_embedder = recorded.get("embedder", {}), wanted["embedder"]
        if any(got_embedder.get(k) != v for k, v in want_embedder.items() if k != "dimension"):
            raise IndexStoreError(
                f"{self.dir} was built with embeddings {got_embedder}, but the settings ask for {want_embedder}; "
                "use the same embedding settings or another --index-dir")
        for key in ("chunk_tokens", "chunk_overlap"):
            if recorded.get(key) != wanted[key]:
                raise IndexStoreError(f"{self.dir} was chunked with {key}={recorded.get(key)}, the settings say "
                                      f"{wanted[key]}; use the same chunking or another --index-dir")
        if recorded.get("vector_store", "embedded") != wanted["vector_store"]:
            raise IndexStoreError(f"{self.dir} keeps its vectors in {recorded.get('vector_store', 'embedded')}, the "
                                  f"settings say {wanted['vector_store']}; use the same chroma_host or another --index-dir")
        if "index_id" not in recorded:  # indexes made before ids existed
            recorded["index_id"] = uuid.uuid4().hex[:12]
            path.write_text(json.dumps(recorded, indent=2))
        return recorded

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with open(self.dir / "index.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise IndexStoreError(f"another process is writing to {self.dir}; wait for it to finish") from None
            yield

    # --- writing ------------------------------------------------------------------------------

    def add_path(self, path: str | Path) -> IndexSummary:
        report = LoadReport()
        docs = load_documents(path, report)
        summary = self.add_documents(docs)
        summary.notices = [f"skipped {s}" for s in report.skipped] + report.notices + summary.notices
        return summary

    def add_documents(self, docs: Iterable[Document]) -> IndexSummary:
        start = time.perf_counter()
        summary = IndexSummary()
        docs = dedupe(docs)
        limit = self.settings.max_document_chars
        summary.notices += [f"skipped {d.title or d.source or d.id!r}: {len(d.text):,} characters, over the limit of "
                            f"{limit:,} (max_document_chars); split it or raise the limit" for d in docs if len(d.text) > limit]
        docs = [d for d in docs if len(d.text) <= limit]
        with self._writing():
            known = dict(self.store.rows("SELECT id, hash FROM documents"))
            new = [d for d in docs if known.get(d.id) != d.hash]
            summary.unchanged = len(docs) - len(new)
            summary.replaced = sum(d.id in known for d in new)
            summary.added = len(new) - summary.replaced
            with self.store.transaction() as db:
                for doc in new:
                    db.execute("DELETE FROM documents WHERE id = ?", (doc.id,))  # a replaced version
                    db.execute("INSERT INTO documents VALUES (?, ?, ?, ?)", (doc.id, doc.title, doc.source, doc.hash))
                    db.executemany(
                        "INSERT INTO chunks VALUES (?, ?, ?, ?, ?)",
                        [(c.id, c.doc_id, c.index, c.text, c.n_tokens) for c in
                         chunk_document(doc, self.settings.chunk_tokens, self.settings.chunk_overlap)])
            summary.chunks_extracted, summary.chunks_failed = self._extract_pending()
            summary.report_failures = self._refresh(summary)
        return self._finish(summary, start)

    def delete_documents(self, doc_ids: Iterable[str]) -> IndexSummary:
        start = time.perf_counter()
        doc_ids = list(doc_ids)
        summary = IndexSummary()
        with self._writing():
            known = {r[0] for r in self.store.rows("SELECT id FROM documents")}
            unknown = [d for d in doc_ids if d not in known]
            if unknown:
                raise InputError(f"no document with id {', '.join(unknown)} in {self.dir} (`kgrag stats --documents` lists them)")
            with self.store.transaction() as db:
                db.executemany("DELETE FROM documents WHERE id = ?", [(d,) for d in doc_ids])
            summary.deleted = len(doc_ids)
            summary.report_failures = self._refresh(summary)
        return self._finish(summary, start)

    def refresh(self, force: bool = False) -> IndexSummary:
        start = time.perf_counter()
        summary = IndexSummary()
        with self._writing():
            summary.chunks_extracted, summary.chunks_failed = self._extract_pending()
            summary.report_failures = self._refresh(summary, force)
        return self._finish(summary, start)

    def _finish(self, summary: IndexSummary, start: float) -> IndexSummary:
        summary.seconds = time.perf_counter() - start
        summary.stats = self.stats()
        summary.usage = {**(self.chat.usage if self.chat else Usage()).as_dict(), "llm": self.extractor.uses_llm}
        return summary

    def _extract_pending(self) -> tuple[int, int]:
        pending = self.store.rows(
            """SELECT c.id, c.text, d.title FROM chunks c JOIN documents d ON d.id = c.doc_id
               LEFT JOIN extractions e ON e.chunk_id = c.id WHERE e.chunk_id IS NULL ORDER BY c.id""")
        if not pending:
            return 0, 0
        failed = 0
        workers = self.settings.max_concurrency if self.extractor.uses_llm else 1
        bar = tqdm(total=len(pending), desc="extracting", unit="chunk", disable=not self.progress or None)
        rows: list[tuple] = []

        def flush() -> None:
            with self.store.transaction() as db:
                db.executemany("INSERT OR REPLACE INTO extractions VALUES (?, ?, ?, ?, ?, ?)", rows)
            rows.clear()

        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = pool.map(lambda row: (row[0], self.extractor.extract(row[1], row[2])), pending)
            for chunk_id, extraction in results:
                payload = dump_extraction(extraction)
                failed += extraction.status == "failed"
                rows.append((chunk_id, self.extractor.name, extraction.status, extraction.error, payload,
                             content_hash(payload)))
                if len(rows) >= EXTRACTION_COMMIT_EVERY:
                    flush()
                bar.update(1)
        if rows:
            flush()
        bar.close()
        return len(pending), failed

    def _refresh(self, summary: IndexSummary, force: bool = False) -> int:
        """Rebuild every derived artefact if the source changed since the last complete refresh."""
        state = self.store.source_state()
        derived_files = all((self.dir / f).exists() for f in ("graph.npz", "vectors.npz"))
        if not force and state == self.store.get_meta("derived_state") and derived_files:
            return 0
        summary.refreshed = True
        s = self.settings
        clock = time.perf_counter()

        def step(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            summary.step_seconds[name] = now - clock
            clock = now

        derive_graph_tables(self.store)
        step("graph tables")
        chunk_texts = {i: f"{title}\n{text}".strip() for i, title, text in self.store.rows(
            "SELECT c.id, d.title, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id")}
        self.vectors.sync("chunks", chunk_texts, self.progress)
        step("chunk vectors")
        entities = dict(self.store.rows("SELECT id, name FROM entities ORDER BY id"))
        self.vectors.sync("entities", entities, self.progress)
        step("entity vectors")
        self.vectors.sync("facts", dict(self.store.rows("SELECT id, text FROM facts")), self.progress)
        step("fact vectors")
        ids = list(entities)
        store_synonyms(self.store, synonym_pairs(ids, self.vectors.vectors("entities", ids),
                                                 s.synonymy_threshold, s.synonymy_top_k) if ids else [])
        step("synonymy")
        detect_communities(self.store, s.max_cluster_size, s.community_seed)
        step("communities")
        failures = write_reports(self.store, self.chat, s.max_concurrency, self.progress)
        self.vectors.sync("reports", dict(self.store.rows("SELECT community_id, text FROM reports")), self.progress)
        step("reports")
        KnowledgeGraph.from_store(self.store).save(self.dir / "graph.npz")
        self.vectors.export(self.dir / "vectors.npz", s.ann_min_vectors)
        self._graph = None
        step("PPR matrix and vector export")
        with self.store.transaction() as db:
            self.store.set_meta(db, "derived_state", state)
        return failures

    # --- reading ------------------------------------------------------------------------------

    def graph(self) -> KnowledgeGraph:
        if self._graph is None:
            if self.store.source_state() != self.store.get_meta("derived_state"):
                raise IndexStoreError(f"{self.dir} was not finished (interrupted?) or was derived by an older "
                                     "kgrag; run `kgrag index` again to complete it")
            self._graph = KnowledgeGraph.load(self.dir / "graph.npz")
        return self._graph

    def stats(self) -> dict:
        count = lambda table: self.store.scalar(f"SELECT COUNT(*) FROM {table}")  # noqa: E731
        return {
            "documents": count("documents"),
            "chunks": count("chunks"),
            "failed_chunks": self.store.scalar("SELECT COUNT(*) FROM extractions WHERE status = 'failed'"),
            "entities": count("entities"),
            "relations": count("relations"),
            "facts": count("facts"),
            "synonyms": count("synonyms"),
            "communities_per_level": dict(self.store.rows("SELECT level, COUNT(*) FROM communities GROUP BY level ORDER BY level")),
            "reports": count("reports"),
            "vectors": {name: self.vectors.count(name) for name in self.vectors.collections},
        }

    def close(self) -> None:
        self.store.close()
