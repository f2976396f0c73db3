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

import dataclasses
import os
import tomllib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from graph_store.errors import ConfigError

ENV_PREFIX = "KGRAG_"
DEFAULT_CONFIG_FILE = Path("kgrag.toml")
DEFAULT_AUTO_MERGE = 0.7  # entity_auto_merge


class Secret:
    """A credential that never shows itself in a repr, a log line or a traceback."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


# What a chat model may do; a task left out of ``llm_tasks`` is done offline (extractor, rule-based planner, reader).
LLMTask = Literal["extract", "reports", "plan", "rephrase", "filter", "sub_answer", "answer"]
LLM_TASKS: tuple[str, ...] = typing.get_args(LLMTask)


def setting(
    default: Any = None,
    description: str = "",
    *,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    factory: Any = None,
) -> Any:
    """A settings field: its default, what it means (shown by --help and docs) and the bounds it must keep."""
    meta = {"description": description, "ge": ge, "gt": gt, "le": le}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


# The stdlib, not pydantic: `kgrag config` and the first plan of `kgrag ask` start without importing it (~0.3 s).
@dataclass(frozen=True)
class Settings:
    index_dir: Path = setting(Path("kgrag-index"), "Directory of the index to build or query.")
    generations_dir: Path | None = setting(
        None,
        "Where the derived generations queries answer from are published and read: unset = derived/ in the index "
        "directory; a folder every machine mounts (NFS), so that serving processes elsewhere answer from it with no "
        "index directory of their own.",
    )
    generation_grace_seconds: float = setting(
        600.0,
        "With generations_dir set: a generation replaced by a newer one is kept this long for readers still "
        "answering from it on other machines, then removed by a later build (in the index directory, at once).",
        ge=0,
    )

    # Chat model: any OpenAI-compatible endpoint. No model means offline mode.
    chat_model: str | None = setting(None, "Chat model name; unset = offline mode (no LLM).")
    chat_base_url: str | None = setting(None, "OpenAI-compatible base URL (vLLM, Ollama, llama.cpp...).")
    chat_api_key: Secret | None = setting(None, "API key; optional for a custom base URL.")
    chat_temperature: float = setting(0.0, ge=0.0, le=2.0)
    chat_timeout: float = setting(120.0, "Seconds per request.", gt=0)
    chat_max_retries: int = setting(3, "Retries with backoff on transient errors.", ge=0)
    llm_tasks: list[LLMTask] = setting(
        description="The tasks the chat model does (the others are done offline): extract, reports, plan, "
        "rephrase, filter, sub_answer, answer. Default: all of them.",
        factory=lambda: list(LLM_TASKS),
    )
    max_concurrency: int = setting(4, "Concurrent LLM calls / parallel branches.", ge=1)

    # Embeddings: the embedded int8 MiniLM by default, or an OpenAI-compatible endpoint.
    embedding_provider: Literal["minilm-onnx", "minilm-static", "openai"] = setting(
        "minilm-onnx",
        "minilm-onnx (the int8 MiniLM, offline), minilm-static (every collection, chunks and questions included, "
        "with static vectors: no model run at all, for very large corpora at a cost in recall), or openai.",
    )
    embedding_model: str | None = setting(None, "Model name for the openai provider.")
    embedding_base_url: str | None = setting(None)
    embedding_api_key: Secret | None = setting(None)
    embedding_batch_size: int = setting(64, "Texts per request to an embedding endpoint.", ge=1)
    static_vectors: str = setting(
        "auto",
        "Collections embedded with static token vectors distilled from MiniLM (microseconds "
        "per text, no model run) instead of the embedding model: a comma-separated subset of entities, facts, "
        "reports, or none; auto = entities,reports with minilm-onnx, none with openai. Chunks use the "
        "model (unless embedding_provider is minilm-static). Static facts build faster but cost PPR recall (benchmarks/RESULTS.md).",
    )

    # Indexing.
    max_document_chars: int = setting(
        2_000_000, "Longer documents are skipped with a notice (split them, or raise this).", ge=1
    )
    record: str | None = setting(
        None,
        "Where the system of record lives: unset = index.sqlite in the index directory; a postgresql:// URL = that "
        "database (one index per database; needs the postgres extra), shared by writers on several machines.",
    )
    write_lock_timeout: float = setting(
        60.0,
        "Seconds a writer (a documents job, `kgrag index`, the library) waits while another process writes the "
        "same index, before it gives up with that reason (0: at once).",
        ge=0,
    )
    engine: Literal["local", "ray"] = setting(
        "local",
        "Where a build's per-chunk work runs (extraction, and embedding by the model): local = this process; ray = "
        "actor pools on Ray (needs the ray extra). The record, Chroma and the derived state are written by this "
        "process either way.",
    )
    ray_address: str | None = setting(
        None,
        "With engine=ray: the Ray cluster to join (auto, or ray://host:10001); unset = start a local Ray instance.",
    )
    ray_workers: int | None = setting(
        None, "With engine=ray: actors per pool (extraction, embedding); unset = the CPUs Ray reports.", ge=1
    )
    chunk_tokens: int = setting(240, "Chunk size in MiniLM tokens (embedder limit: 256).", ge=16)
    chunk_overlap: int = setting(40, "Tokens shared by consecutive chunks.", ge=0)
    extraction: Literal["auto", "offline", "llm"] = setting(
        "auto", "Entity/fact extraction: llm needs a chat model; auto = llm when one is configured."
    )
    gleaning_rounds: int = setting(0, "Extra LLM passes asking for missed entities.", ge=0, le=5)
    max_cluster_size: int = setting(12, "Communities larger than this are split one level down.", ge=2)
    community_seed: int = setting(42)
    synonymy_threshold: float | None = setting(
        None,
        "Cosine for a synonymy edge; unset = the entity vectors' own calibrated value (0.8 for MiniLM as "
        "HippoRAG 2, 0.88 for static vectors).",
        ge=0.0,
        le=1.0,
    )
    synonymy_top_k: int = setting(10, ge=1)
    synonymy_exact_max: int = setting(
        200_000,
        "Up to this many entities, synonymy compares every pair of entity vectors; above it, each entity's "
        "neighbours come from an HNSW graph (faiss, approximate), as comparing every pair grows with the square of "
        "the entities (benchmarks/RESULTS.md, Scale). 0: always the graph.",
        ge=0,
    )
    entity_auto_merge: float = setting(
        DEFAULT_AUTO_MERGE,
        'Two names of one thing are merged without review when a document introduces one for the other ("Halvard '
        'Instruments (HI)") and their score is above this (0-1; 1: never); `kgrag entities review` shows the rest.',
        ge=0.0,
        le=1.0,
    )
    ann_min_vectors: int = setting(
        20_000,
        "Collections this large also get an HNSW graph (faiss) for fast approximate search at query time; "
        "smaller ones are searched exactly.",
        ge=0,
    )

    # Personalized PageRank at query time (graph_store/ppr.py).
    ppr_local_min_nodes: int = setting(
        1_000_000,
        "Graphs with this many nodes (entities + passages) or more rank passages by local PPR (forward push: its "
        "cost depends on ppr_push_threshold, not on the graph's size; the graph is memory-mapped); smaller ones by "
        "exact power iteration. 0: always local.",
        ge=0,
    )
    ppr_push_threshold: float = setting(
        1e-5,
        "Local PPR stops when every node's unspread mass is below this x its weighted degree; its L1 error is the "
        "mass left. Lower: closer to exact PPR, slower (the work grows as 1 / threshold). 1e-5 ranks the top 5 "
        "passages as exact PPR does on 99% of seed sets at 10M nodes (benchmarks/RESULTS.md).",
        gt=0,
        le=1,
    )

    # Vectors in a Chroma server instead of the index directory (shared by several processes).
    chroma_host: str | None = setting(None, "Chroma server host; unset = embedded Chroma in the index.")
    chroma_port: int = setting(8000)

    # Serving (kgrag serve).
    api_keys: list[Secret] = setting(
        description="Keys accepted by the HTTP API (comma-separated in the environment).", factory=list
    )
    allowed_hosts: list[str] = setting(
        description="Names (name or name:port; * for any) the service answers to and whose pages may call it, beside "
        "its own address (and localhost forms of a loopback one); comma-separated in the environment.",
        factory=list,
    )
    max_request_bytes: int = setting(1_000_000, "Larger requests get 413, checked as they arrive.", ge=1_000)
    max_question_chars: int = setting(4_000, ge=10)
    request_timeout: float = setting(30.0, "Seconds a client has to send its request body.", gt=0)
    max_connections: int = setting(1000, "Open connections the service keeps (a request beyond them gets 503).", ge=1)
    max_connections_per_client: int = setting(
        64, "Open connections one client address may keep; more are closed (0: no cap, e.g. behind a proxy).", ge=0
    )
    header_timeout: float = setting(
        10.0, "Seconds a client has to send a request's line and headers; slower connections are closed.", gt=0
    )
    turn_wait: float = setting(
        30.0, "Seconds a question waits for its conversation's previous turn to finish (then 409).", ge=0
    )
    thread_retention_days: float = setting(30.0, "Conversations idle longer are deleted (0 keeps them forever).", ge=0)
    expose_source_paths: bool = setting(False, "Show documents' server-side paths in the service's citations.")

    # Where LangGraph checkpoints go: a SQLite path or a postgresql:// URL.
    # Unset: <index_dir>/checkpoints.sqlite.
    checkpointer: str | None = setting(None)

    def __post_init__(self) -> None:
        problems = []
        for f in dataclasses.fields(self):
            try:
                value = _coerce(getattr(self, f.name), _FIELD_TYPES[f.name])
                _check_bounds(value, f.metadata)
                if f.name == "static_vectors":
                    _check_static_vectors(value)
                if f.name == "record" and value and not value.startswith(("postgresql://", "postgres://")):
                    raise ValueError("a postgresql:// URL, or unset for index.sqlite in the index directory")
                object.__setattr__(self, f.name, value)
            except (TypeError, ValueError) as exc:
                problems.append(f"{f.name}: {exc}")
        if problems:
            raise ConfigError("invalid settings: " + "; ".join(problems))

    def replace(self, **changes: Any) -> Settings:
        """These settings with some fields changed, validated again."""
        return dataclasses.replace(self, **_known(changes))

    @property
    def static_collections(self) -> tuple[str, ...]:
        """The collections embedded with static vectors (``static_vectors`` resolved)."""
        if self.embedding_provider == "minilm-static":  # no model: every collection is static
            return ("chunks", "entities", "facts", "reports")
        names = {n.strip() for n in self.static_vectors.split(",") if n.strip()} - {"none"}
        if names == {"auto"}:
            return ("entities", "reports") if self.embedding_provider == "minilm-onnx" else ()
        return tuple(sorted(names))

    @property
    def offline(self) -> bool:
        return not self.chat_model

    def uses_model(self, task: str) -> bool:
        """Whether the chat model does ``task`` (one of LLM_TASKS): a model is configured and the task is on."""
        return not self.offline and task in self.llm_tasks

    @property
    def checkpointer_url(self) -> str:
        return self.checkpointer or str(self.index_dir / "checkpoints.sqlite")

    @property
    def generations_path(self) -> Path:
        """The folder of the generations (graph_store/generations.py)."""
        return self.generations_dir or self.index_dir / "derived"

    @property
    def llm_cache_path(self) -> Path:
        return self.index_dir / "llm_cache.sqlite"

    def redacted(self) -> dict[str, Any]:
        """Settings as plain values, keys and the credentials inside URLs masked: safe to print or log."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = str(value) if isinstance(value, Path) else value
        for name in ("chat_api_key", "embedding_api_key"):
            if out.get(name):
                out[name] = "***"
        for name in ("chat_base_url", "embedding_base_url", "checkpointer", "record"):
            if out.get(name):
                out[name] = redact_url(out[name])
        out["api_keys"] = ["***"] * len(self.api_keys)
        out["offline"] = self.offline
        return out


FIELD_NAMES = tuple(f.name for f in dataclasses.fields(Settings))
_FIELD_TYPES = typing.get_type_hints(Settings)  # resolved once: every Settings() checks against them
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def _as_secret(value: Any) -> Secret:
    if isinstance(value, Secret):
        return value
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return Secret(value)


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    if value in (0, 1):
        return bool(value)
    raise ValueError(f"must be true or false, not {value!r}")


def _as_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise ValueError(f"must be a whole number, not {value!r}")
    try:
        number = float(value) if not isinstance(value, int) else value
    except ValueError:
        raise ValueError(f"must be a whole number, not {value!r}") from None
    if number != int(number):
        raise ValueError(f"must be a whole number, not {value!r}")
    return int(number)


def _as_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"must be a number, not {value!r}")
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"must be a number, not {value!r}") from None


def _as_path(value: Any) -> Path:
    if not isinstance(value, (str, Path)):
        raise ValueError(f"must be a path, not {value!r}")
    return Path(value)


def _as_str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string, not {value!r}")
    return value


_SCALARS: dict[Any, Callable[[Any], Any]] = {
    Secret: _as_secret,
    bool: _as_bool,
    int: _as_int,
    float: _as_float,
    Path: _as_path,
    str: _as_str,
}


def _coerce(value: Any, hint: Any) -> Any:
    """``value`` (from TOML, the environment or a caller) as the field's type, or ValueError saying what was wanted."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (hint,) = [a for a in args if a is not type(None)]
        return _coerce(value, hint)
    if origin is Literal:
        if value not in args:
            raise ValueError(f"must be one of {', '.join(map(repr, args))}, not {value!r}")
        return value
    if origin is list:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"must be a list, not {value!r}")
        return [_coerce(v, args[0]) for v in value]
    if hint in _SCALARS:
        return _SCALARS[hint](value)
    raise TypeError(f"no rule for {hint!r}")  # a new field type: teach _coerce about it


def _check_bounds(value: Any, meta: Any) -> None:
    if value is None or isinstance(value, (bool, list)) or not isinstance(value, (int, float)):
        return
    if meta.get("ge") is not None and value < meta["ge"]:
        raise ValueError(f"must be at least {meta['ge']}, not {value}")
    if meta.get("gt") is not None and value <= meta["gt"]:
        raise ValueError(f"must be greater than {meta['gt']}, not {value}")
    if meta.get("le") is not None and value > meta["le"]:
        raise ValueError(f"must be at most {meta['le']}, not {value}")


def _check_static_vectors(value: str) -> None:
    names = {n.strip() for n in value.split(",") if n.strip()}
    if not (names <= {"auto"} or names <= {"none"} or names <= {"entities", "facts", "reports"}):
        raise ValueError("a comma-separated subset of entities, facts, reports; or auto, or none")


def _env_values(environ: dict[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {
        name: environ[ENV_PREFIX + name.upper()] for name in FIELD_NAMES if ENV_PREFIX + name.upper() in environ
    }
    return values


def _file_values(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    return _known(data, f"config file {path}: ")


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
    return Settings(**_known(merged))


def _known(values: dict[str, Any], where: str = "") -> dict[str, Any]:
    unknown = sorted(set(values) - set(FIELD_NAMES))
    if unknown:
        raise ConfigError(f"{where}unknown setting(s) {', '.join(unknown)}; known: {', '.join(FIELD_NAMES)}")
    return values


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
