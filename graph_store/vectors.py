"""Vector collections: chunks, entities, facts and community reports.

Vectors are derived data: ``sync`` makes a collection hold exactly the wanted ids,
embedding only what is missing, so a killed run resumes without duplicates.
Collections embedded by the model live in Chroma. Collections with static vectors
(``StaticEmbedder``: microseconds per text) are not stored: they are computed from
their texts at every export into the generation, which costs less than storing 55k
vectors in Chroma.

The export (``VectorStore.export``, read by ``Exported``) writes each collection into the
generation folder as files that readers memory-map, so a serving process holds only the
pages its queries touch (shared by every process serving the generation):
``vectors.<name>.ids.npy``, ``vectors.<name>.npy`` (float32 rows, normalised) and, for a
large collection, ``vectors.<name>.hnsw.faiss`` (its faiss HNSW graph) with
``vectors.<name>.hnsw_rows.npy`` once the graph was extended. A generation from before
them holds all of it in one ``vectors.npz``, read whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from graph_store.embeddings import Embedder
from graph_store.errors import IndexStoreError

T = TypeVar("T")
COLLECTIONS = ("chunks", "entities", "facts", "reports")
# Chroma's own HNSW graph is never searched (queries run on the exported matrices and faiss
# graphs), so it is built as cheaply as Chroma allows: 20k inserts 8.1 s -> 3.1 s on 2 cores.
# Collections made before keep the configuration they were made with.
CHROMA_HNSW = {
    "space": "cosine",
    "ef_construction": 8,
    "ef_search": 8,
    "max_neighbors": 4,
    "batch_size": 10_000,
    "sync_threshold": 1_000_000,
}
# Our own HNSW graphs (faiss) for query-time search of large collections: top-5 facts of the
# 2Wiki index agree 95% with exact search, at 0.7 ms instead of 9 ms.
HNSW_NEIGHBOURS, HNSW_BUILD_DEPTH, HNSW_SEARCH_DEPTH = 32, 80, 64


def hnsw_graph(vectors: np.ndarray):
    """A faiss HNSW graph over normalised rows (inner product = cosine)."""
    import faiss

    index = faiss.IndexHNSWFlat(vectors.shape[1], HNSW_NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_BUILD_DEPTH
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


# An export after a small change (decisions) extends the previous HNSW graph instead of building it again: the
# nodes of removed or changed rows stay in it, dead (never returned), and the new rows are added. Once the dead
# and added nodes together pass this share of the rows, the graph is built again.
MAX_GRAPH_CHANGE = 0.1


def exported_files(name: str) -> tuple[str, str, str, str]:
    """Collection ``name``'s files in a generation: ids, vectors, HNSW graph, the graph's node -> row map."""
    return (
        f"vectors.{name}.ids.npy",
        f"vectors.{name}.npy",
        f"vectors.{name}.hnsw.faiss",
        f"vectors.{name}.hnsw_rows.npy",
    )


class Exported:
    """The vectors a generation folder holds: memory-mapped .npy files and faiss graphs, or the vectors.npz of a
    generation from before them (read whole). Reading a missing or damaged file raises OSError or ValueError
    (faiss: RuntimeError)."""

    def __init__(self, folder: Path):
        self.folder = folder
        old = folder / "vectors.npz"
        self._npz = np.load(old) if old.exists() and not (folder / exported_files(COLLECTIONS[0])[0]).exists() else None

    def close(self) -> None:
        if self._npz is not None:
            self._npz.close()

    def __enter__(self) -> Exported:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _array(self, name: str, kind: int, old_key: str) -> np.ndarray | None:
        if self._npz is not None:
            return self._npz[old_key] if kind < 2 or old_key in self._npz.files else None
        path = self.folder / exported_files(name)[kind]
        return np.load(path, mmap_mode="r") if kind < 2 or path.exists() else None

    def ids(self, name: str) -> np.ndarray:
        return np.asarray(self._array(name, 0, f"{name}_ids"))

    def matrix(self, name: str) -> np.ndarray:
        """Its vectors, one row per id: memory-mapped read-only (pages are read as queries touch them)."""
        return self._array(name, 1, f"{name}_vectors")  # type: ignore[return-value]  # (never None: kind < 2)

    def graph_rows(self, name: str) -> np.ndarray | None:
        return self._array(name, 3, f"{name}_hnsw_rows")

    def has_graph(self, name: str) -> bool:
        if self._npz is not None:
            return f"{name}_hnsw" in self._npz.files
        return (self.folder / exported_files(name)[2]).exists()

    def graph(self, name: str, mapped: bool = True):
        """Its faiss HNSW graph, None when it has none. ``mapped``: its stored vectors memory-mapped, for search
        only; otherwise read into memory, to be extended."""
        import faiss

        if not self.has_graph(name):
            return None
        if self._npz is not None:
            return faiss.deserialize_index(self._npz[f"{name}_hnsw"])
        path = str(self.folder / exported_files(name)[2])
        return faiss.read_index(path, faiss.IO_FLAG_MMAP_IFC) if mapped else faiss.read_index(path)


class AnnGraph:
    """A collection's HNSW graph (a faiss index): ``rows`` maps its nodes to the rows of the collection's matrix (-1:
    dead), None when they are the rows themselves (a graph built whole)."""

    def __init__(self, index, rows: np.ndarray | None = None):
        import faiss

        self.index = index
        index.hnsw.efSearch = HNSW_SEARCH_DEPTH
        self.rows = rows
        self.params = None
        if rows is not None and (rows < 0).any():
            # The selectors are kept with the parameters: faiss holds only pointers to them.
            self._dead = faiss.IDSelectorBatch(np.nonzero(rows < 0)[0].astype(np.int64))
            self._alive = faiss.IDSelectorNot(self._dead)
            self.params = faiss.SearchParametersHNSW(sel=self._alive, efSearch=HNSW_SEARCH_DEPTH)  # type: ignore[attr-defined]

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k nearest rows (row, cosine), best first."""
        scores, nodes = self.index.search(vector.reshape(1, -1).astype(np.float32, copy=False), k, params=self.params)
        rows = self.rows
        return [(int(rows[n]) if rows is not None else int(n), float(s)) for s, n in zip(scores[0], nodes[0]) if n >= 0]


def _extended_graph(before: Exported | None, name: str, ids: list[str], vectors: np.ndarray):
    """The HNSW graph of the previous export ``before`` extended to ``ids``/``vectors``, and its node -> row map; None
    when it has none or too much changed (MAX_GRAPH_CHANGE)."""
    if before is None or not before.has_graph(name):
        return None
    old_ids, old_vectors = before.ids(name), before.matrix(name)
    old_rows = before.graph_rows(name)
    old_rows = np.arange(len(old_ids)) if old_rows is None else np.asarray(old_rows)
    if old_vectors.shape[1:] != vectors.shape[1:]:
        return None
    position = {i: n for n, i in enumerate(ids)}
    rows = np.array([position.get(old_ids[r], -1) if r >= 0 else -1 for r in old_rows.tolist()], dtype=np.int64)
    live = np.nonzero(rows >= 0)[0]
    moved = np.any(vectors[rows[live]] != old_vectors[old_rows[live]], axis=1)
    rows[live[moved]] = -1  # a row with another vector is added again
    added = np.setdiff1d(np.arange(len(ids)), rows[rows >= 0])
    if (rows < 0).sum() + len(added) > MAX_GRAPH_CHANGE * len(ids):
        return None
    index = before.graph(name, mapped=False)
    index.hnsw.efConstruction = HNSW_BUILD_DEPTH
    if len(added):
        index.add(np.ascontiguousarray(vectors[added], dtype=np.float32))
    return index, np.concatenate([rows, added])


@lru_cache(maxsize=1)
def _embedding_function_class():
    """Our embedder as Chroma's embedding function, so Chroma never loads its downloading default.
    (Defined on first use: importing chromadb takes seconds, and queries never need it.)"""
    from chromadb import Documents, EmbeddingFunction

    class ChromaEmbeddingFunction(EmbeddingFunction[Documents]):
        def __init__(self, embedder: Embedder):
            self.embedder = embedder

        def __call__(self, input: Documents) -> list[np.ndarray]:
            return list(self.embedder.embed(list(input)))

        @staticmethod
        def name() -> str:
            return "kgrag"

        def get_config(self) -> dict[str, Any]:
            return dict(self.embedder.identity())

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> ChromaEmbeddingFunction:
            # Chroma rebuilds the function from the stored config; only the offline model needs no secrets.
            from graph_store.embeddings import MiniLMEmbedder

            if config.get("provider") != "minilm-onnx":
                raise ValueError("open kgrag collections through kgrag, which brings the configured embedder")
            return ChromaEmbeddingFunction(MiniLMEmbedder())

    return ChromaEmbeddingFunction


def chroma_client(path: Path, host: str | None = None, port: int = 8000):
    """Embedded Chroma in ``path``, or the Chroma server at ``host:port``."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)  # telemetry would try to reach the internet
    if host:
        try:
            return chromadb.HttpClient(host=host, port=port, settings=settings)
        except Exception as exc:  # noqa: BLE001 - chromadb raises ValueError or connection errors
            raise IndexStoreError(f"cannot reach the Chroma server at {host}:{port}: {exc}") from None
    return chromadb.PersistentClient(path=str(path), settings=settings)


def embed_here(embedder: Embedder, blocks: Sequence[list[str]]) -> Iterator[np.ndarray]:
    for texts in blocks:
        yield embedder.embed(texts)


class VectorStore:
    """``embedder`` embeds every collection but those in ``static`` (name -> static embedder); ``embed_blocks`` runs
    it over blocks of texts (graph_store/engine.py: in this process, or on Ray); ``repair``: what to run when
    Chroma's vectors are damaged."""

    def __init__(
        self,
        client,
        embedder: Embedder,
        prefix: str = "kg",
        static: dict[str, Embedder] | None = None,
        embed_blocks: Callable[[Embedder, Sequence[list[str]]], Iterator[np.ndarray]] = embed_here,
        repair: str = "run `kgrag repair`",
    ):
        self.client = client
        self.repair = repair
        self.embedder = embedder
        self.embed_blocks = embed_blocks
        self.static = dict(static or {})
        self.embedders = {name: self.static.get(name, embedder) for name in COLLECTIONS}
        self.prefix = prefix
        self._texts: dict[str, dict[str, str]] = {}  # static collections: id -> text, as last synced
        # Model collections synced in this process: their ids and the vectors embedded here, so that the export
        # after a build reads neither back from Chroma (2Wiki's 55k facts: 7 s). Cleared by the export.
        self._synced: dict[str, tuple[set[str], dict[str, np.ndarray]]] = {}
        self._open()
        self.batch = client.get_max_batch_size()

    def _open(self) -> None:
        function = _embedding_function_class()(self.embedder)
        self.collections = {  # in Chroma: the collections the model embeds
            name: self.client.get_or_create_collection(
                f"{self.prefix}_{name}", embedding_function=function, configuration={"hnsw": CHROMA_HNSW}
            )
            for name in COLLECTIONS
            if name not in self.static
        }

    def close(self) -> None:
        """Release the Chroma client. Embedded Chroma keeps a folder's collections in memory, shared by every client
        of that folder in this process, and reads its files again only once the last client is closed: until then
        this process does not see what another process wrote meanwhile (reading such a vector fails with "Error
        finding id"), and what it writes could overwrite it."""
        self.client.close()

    def reset(self) -> None:
        """Drop every collection (damaged vectors): the next sync embeds everything again."""
        for collection in self.collections.values():
            self.client.delete_collection(collection.name)
        self._synced.clear()
        self._open()

    def ids(self, name: str) -> set[str]:
        if name in self.static:
            return set(self._static_texts(name))
        if name in self._synced:
            return set(self._synced[name][0])
        return set(self.collections[name].get(include=[])["ids"])

    def _static_texts(self, name: str) -> dict[str, str]:
        if name not in self._texts:
            raise IndexStoreError(f"static collection {name!r} has not been synced in this process")
        return self._texts[name]

    def sync(self, name: str, wanted: dict[str, str], progress: bool = True) -> tuple[int, int]:
        """Make collection ``name`` hold exactly ``wanted`` (id -> text). Returns (added, removed)."""
        if name in self.static:
            # Embedded at export; vectors an older index kept in Chroma for it are dropped.
            if any(c.name == f"{self.prefix}_{name}" for c in self.client.list_collections()):
                self.client.delete_collection(f"{self.prefix}_{name}")
            self._texts[name] = dict(wanted)
            return len(wanted), 0
        collection = self.collections[name]
        present = self.ids(name)
        stale = sorted(present - wanted.keys())
        for start in range(0, len(stale), self.batch):
            collection.delete(ids=stale[start : start + self.batch])
        # Similar lengths together: each embedding run pads less.
        missing = sorted(wanted.keys() - present, key=lambda i: (len(wanted[i]), i))
        # Blocks of up to 5,000: Chroma takes 2.7x as long for 20k vectors upserted 512 at a time, and each
        # embedding call ends waiting for its slowest worker (12k 2Wiki facts: 877/s in one call, 753/s in 512s).
        step = min(self.batch, 5000)
        from tqdm import tqdm

        bar = tqdm(total=len(missing), desc=f"embedding {name}", unit="vec", disable=not progress or None)
        fresh = self._synced.pop(name, (set(), {}))[1]
        for i in stale:
            fresh.pop(i, None)
        blocks = [missing[start : start + step] for start in range(0, len(missing), step)]
        embedded = self.embed_blocks(self.embedder, [[wanted[i] for i in ids] for ids in blocks])
        for ids, vectors in zip(blocks, embedded):
            # Vectors only: the texts live in the record, and Chroma's full-text index of them doubled the upsert time.
            collection.upsert(ids=ids, embeddings=vectors)
            fresh.update(zip(ids, vectors))
            bar.update(len(ids))
        self._synced[name] = (set(wanted), fresh)
        bar.close()
        return len(missing), len(stale)

    def export(self, folder: Path, ann_min_vectors: int = 20_000, previous: Path | None = None) -> None:
        """Every collection as files of generation ``folder`` (``exported_files``), memory-mapped at query time.

        Small collections are searched exactly on the matrix; one with ``ann_min_vectors`` rows or
        more also gets an HNSW graph (Chroma's own HNSW can return different neighbours after a
        reload; a saved faiss graph always answers the same). ``previous``: the generation folder
        of the last export (either format), whose model vectors are taken instead of read from
        Chroma and whose HNSW graphs are extended (MAX_GRAPH_CHANGE).
        """
        import faiss

        before = _opened(previous)
        try:
            for name in COLLECTIONS:
                ids_file, matrix_file, graph_file, rows_file = (folder / f for f in exported_files(name))
                ids = sorted(self.ids(name))
                vectors = self._export_vectors(name, ids, before) if ids else np.zeros((0, 0), np.float32)
                np.save(ids_file, np.array(ids, dtype=str))
                np.save(matrix_file, np.ascontiguousarray(vectors, dtype=np.float32))
                if len(ids) >= max(ann_min_vectors, 1):
                    extended = _previous_part(lambda: _extended_graph(before, name, ids, vectors))
                    if extended is None:
                        faiss.write_index(hnsw_graph(vectors), str(graph_file))
                    else:
                        faiss.write_index(extended[0], str(graph_file))
                        np.save(rows_file, extended[1])
        finally:
            if before is not None:
                before.close()
        self._synced.clear()

    def _export_vectors(self, name: str, ids: list[str], before) -> np.ndarray:
        """The vectors of ``ids``: those the model embedded before are taken from the previous export ``before``
        (the same model made them for the same ids), the rest embedded in this process or read from Chroma."""
        old_ids = None if name in self.static or before is None else _previous_part(lambda: before.ids(name).tolist())
        if old_ids is None:
            return self.vectors(name, ids)  # (Chroma's in batches: one get() of 55k held 1.5 GB of Python lists)
        old = {i: n for n, i in enumerate(old_ids)}
        fresh = self._synced.get(name, (set(), {}))[1]
        reused = [n for n, i in enumerate(ids) if i in old and i not in fresh]
        if not reused:  # (an empty collection is exported as a 0x0 matrix)
            return self.vectors(name, ids)
        other = [n for n, i in enumerate(ids) if i not in old or i in fresh]
        old_vectors = _previous_part(lambda: before.matrix(name)) if before else None
        if old_vectors is None:
            return self.vectors(name, ids)
        vectors = np.empty((len(ids), old_vectors.shape[1]), np.float32)
        vectors[reused] = old_vectors[[old[ids[n]] for n in reused]]
        if other:
            vectors[other] = self.vectors(name, [ids[n] for n in other])
        return vectors

    def vectors(self, name: str, ids: list[str]) -> np.ndarray:
        """Stored vectors for ``ids``, in that order (static ones computed from their texts)."""
        if name in self.static:
            texts = self._static_texts(name)
            missing = [i for i in ids if i not in texts]
            if missing:
                raise KeyError(f"{len(missing)} ids have no text in collection {name!r}")
            return self.static[name].embed([texts[i] for i in ids]) if ids else np.zeros((0, 0), np.float32)
        found = dict(self._synced.get(name, (set(), {}))[1])
        wanted = [i for i in ids if i not in found]
        for start in range(0, len(wanted), self.batch):
            got = self._read(name, wanted[start : start + self.batch])
            found.update(zip(got["ids"], np.asarray(got["embeddings"], dtype=np.float32)))
        unknown = sum(i not in found for i in ids)
        if unknown:
            raise KeyError(f"{unknown} ids have no vector in collection {name!r}")
        return np.vstack([found[i] for i in ids]) if ids else np.zeros((0, 0), np.float32)

    def _read(self, name: str, ids: list[str]) -> dict:
        from chromadb.errors import ChromaError

        try:
            return self.collections[name].get(ids=ids, include=["embeddings"])
        except ChromaError as exc:  # its metadata lists ids its vector segment has not got ("Error finding id")
            raise IndexStoreError(f"the {name} vectors in Chroma are damaged ({exc}); {self.repair}") from None

    def unreadable(self, name: str) -> str | None:
        """Why Chroma cannot give back every vector of collection ``name`` (None: it can). Reads them all."""
        ids = sorted(self.ids(name))
        try:
            for start in range(0, len(ids), self.batch):
                self._read(name, ids[start : start + self.batch])
        except IndexStoreError as exc:
            return str(exc)
        return None

    def count(self, name: str) -> int:
        """Vectors in Chroma collection ``name`` (static collections are counted in the generation's export)."""
        return self.collections[name].count()


def _opened(previous: Path | None) -> Exported | None:
    """The previous export, or None when there is none or it cannot be opened (everything from Chroma)."""
    return _previous_part(lambda: Exported(previous)) if previous is not None else None


def _previous_part(read: Callable[[], T]) -> T | None:
    """What ``read`` takes from the previous export; None when it is damaged (made again instead)."""
    import zipfile

    try:
        return read()
    except (OSError, ValueError, KeyError, RuntimeError, zipfile.BadZipFile):  # faiss raises RuntimeError
        return None
