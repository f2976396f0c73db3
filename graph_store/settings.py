"""One typed settings object for the whole system.

Precedence, highest first:
  1. explicit overrides (CLI flags, or keyword arguments of ``load_settings``)
  2. environment variables ``KGRAG_<FIELD>`` (e.g. ``KGRAG_CHAT_MODEL``);
     ``OPENAI_API_KEY`` is used for the chat key when nothing else sets one
  3. a TOML config file with the same field names at top level: the path given
     by ``--config`` / ``KGRAG_CONFIG``, else ``./kgrag.toml`` when it exists
  4. the defaults below: offline (no chat endpoint), embedded MiniLM embeddings.
"""

from __future__ import annotations

import os
import tomllib
from urllib.parse import urlsplit, urlunsplit
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from graph_store.errors import ConfigError

ENV_PREFIX = "KGRAG_"
DEFAULT_CONFIG_FILE = Path("kgrag.toml")


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    index_dir: Path = Field(Path("kgrag-index"), description="Directory of the index to build or query.")

    # Chat model: any OpenAI-compatible endpoint. No model means offline mode.
    chat_model: str | None = Field(None, description="Chat model name; unset = offline mode (no LLM).")
    chat_base_url: str | None = Field(None, description="OpenAI-compatible base URL (vLLM, Ollama, llama.cpp...).")
    chat_api_key: SecretStr | None = Field(None, description="API key; optional for a custom base URL.")
    chat_temperature: float = Field(0.0, ge=0.0, le=2.0)
    chat_timeout: float = Field(120.0, gt=0, description="Seconds per request.")
    chat_max_retries: int = Field(3, ge=0, description="Retries with backoff on transient errors.")
    max_concurrency: int = Field(4, ge=1, description="Concurrent LLM calls / parallel branches.")

    # Embeddings: the embedded int8 MiniLM by default, or an OpenAI-compatible endpoint.
    embedding_provider: Literal["minilm-onnx", "openai"] = "minilm-onnx"
    embedding_model: str | None = Field(None, description="Model name for the openai provider.")
    embedding_base_url: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_batch_size: int = Field(64, ge=1, description="Texts per request to an embedding endpoint.")
    static_vectors: str = Field(
        "auto", description="Collections embedded with static token vectors distilled from MiniLM (microseconds "
        "per text, no model run) instead of the embedding model: a comma-separated subset of entities, facts, "
        "reports, or none; auto = entities,reports with minilm-onnx, none with openai. Chunks always use the "
        "model. Static facts build faster but cost PPR recall (benchmarks/RESULTS.md).")

    # Indexing.
    max_document_chars: int = Field(
        2_000_000, ge=1, description="Longer documents are skipped with a notice (split them, or raise this).")
    chunk_tokens: int = Field(240, ge=16, description="Chunk size in MiniLM tokens (embedder limit: 256).")
    chunk_overlap: int = Field(40, ge=0, description="Tokens shared by consecutive chunks.")
    extraction: Literal["auto", "offline", "llm"] = Field(
        "auto", description="Entity/fact extraction: llm needs a chat model; auto = llm when one is configured.")
    gleaning_rounds: int = Field(0, ge=0, le=5, description="Extra LLM passes asking for missed entities.")
    max_cluster_size: int = Field(12, ge=2, description="Communities larger than this are split one level down.")
    community_seed: int = 42
    synonymy_threshold: float | None = Field(
        None, ge=0.0, le=1.0, description="Cosine for a synonymy edge; unset = the entity vectors' own "
        "calibrated value (0.8 for MiniLM as HippoRAG 2, 0.88 for static vectors).")
    synonymy_top_k: int = Field(10, ge=1)
    ann_min_vectors: int = Field(
        20_000, ge=0, description="Collections this large also get an HNSW graph (faiss) for fast approximate "
        "search at query time; smaller ones are searched exactly.")

    # Vectors in a Chroma server instead of the index directory (shared by several processes).
    chroma_host: str | None = Field(None, description="Chroma server host; unset = embedded Chroma in the index.")
    chroma_port: int = 8000

    # Serving (kgrag serve).
    api_keys: list[SecretStr] = Field(default_factory=list,
                                      description="Keys accepted by the HTTP API (comma-separated in the environment).")
    max_request_bytes: int = Field(1_000_000, ge=1_000, description="Larger requests get 413, checked as they arrive.")
    max_question_chars: int = Field(4_000, ge=10)
    request_timeout: float = Field(30.0, gt=0, description="Seconds a client has to send its request body.")
    max_connections: int = Field(200, ge=1, description="Concurrent connections the service accepts (more get 503).")
    thread_retention_days: float = Field(
        30.0, ge=0, description="Conversations idle longer are deleted (0 keeps them forever).")
    expose_source_paths: bool = Field(
        False, description="Show documents' server-side paths in the service's citations.")

    # Where LangGraph checkpoints go: a SQLite path or a postgresql:// URL.
    # Unset: <index_dir>/checkpoints.sqlite.
    checkpointer: str | None = None

    @field_validator("static_vectors")
    @classmethod
    def _known_collections(cls, value: str) -> str:
        names = {n.strip() for n in value.split(",") if n.strip()}
        if names <= {"auto"} or names <= {"none"} or names <= {"entities", "facts", "reports"}:
            return value
        raise ValueError("a comma-separated subset of entities, facts, reports; or auto, or none")

    @property
    def static_collections(self) -> tuple[str, ...]:
        """The collections embedded with static vectors (``static_vectors`` resolved)."""
        names = {n.strip() for n in self.static_vectors.split(",") if n.strip()} - {"none"}
        if names == {"auto"}:
            return ("entities", "reports") if self.embedding_provider == "minilm-onnx" else ()
        return tuple(sorted(names))

    @property
    def offline(self) -> bool:
        return not self.chat_model

    @property
    def checkpointer_url(self) -> str:
        return self.checkpointer or str(self.index_dir / "checkpoints.sqlite")

    @property
    def llm_cache_path(self) -> Path:
        return self.index_dir / "llm_cache.sqlite"

    def redacted(self) -> dict[str, Any]:
        """Settings as plain values, keys and the credentials inside URLs masked: safe to print or log."""
        out = self.model_dump(mode="json")
        for name in ("chat_api_key", "embedding_api_key"):
            if out.get(name):
                out[name] = "***"
        for name in ("chat_base_url", "embedding_base_url", "checkpointer"):
            if out.get(name):
                out[name] = redact_url(out[name])
        out["api_keys"] = ["***"] * len(self.api_keys)
        out["offline"] = self.offline
        return out


def _env_values(environ: dict[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {
        name: environ[ENV_PREFIX + name.upper()]
        for name in Settings.model_fields
        if ENV_PREFIX + name.upper() in environ
    }
    if isinstance(values.get("api_keys"), str):
        values["api_keys"] = [k.strip() for k in values["api_keys"].split(",") if k.strip()]
    return values


def _file_values(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(
            f"config file {path}: unknown setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(Settings.model_fields)}"
        )
    return data


def load_settings(
    config_file: str | Path | None = None,
    environ: dict[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Resolve settings from overrides > environment > config file > defaults.

    ``None`` overrides are ignored, so CLI flags that were not given fall through.
    """
    environ = dict(os.environ if environ is None else environ)
    path = config_file or environ.get(ENV_PREFIX + "CONFIG")
    if path is None and DEFAULT_CONFIG_FILE.exists():
        path = DEFAULT_CONFIG_FILE
    merged: dict[str, Any] = _file_values(Path(path)) if path else {}
    merged.update(_env_values(environ))
    merged.update({k: v for k, v in overrides.items() if v is not None})
    if not merged.get("chat_api_key") and environ.get("OPENAI_API_KEY"):
        merged["chat_api_key"] = environ["OPENAI_API_KEY"]
    try:
        return Settings(**merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"invalid settings: {problems}") from None


def redact_url(url: str) -> str:
    """A URL without the credentials it may carry (user:password@host)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
