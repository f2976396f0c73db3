"""Chat models: a factory for any OpenAI-compatible endpoint, a disk cache of responses, accounting.

The cache plugs into LangChain's own cache hook (``BaseChatModel.cache``), so every
call through the model, streamed or not, is cached and a re-run pays for no call
twice. Because the cache is the one place that sees both hits and real calls, it
also keeps the call and token counts.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import json_repair
from langchain_core.caches import BaseCache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict
from langchain_core.outputs import ChatGeneration
from langchain_core.runnables import RunnableConfig

from graph_store.errors import ConfigError, ModelError
from graph_store.settings import Settings


@dataclass
class Usage:
    calls: int = 0  # requests that reached the model
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class LLMCache(BaseCache):
    """SQLite cache of chat generations keyed by sha256(model + parameters, messages)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.usage = Usage()
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS llm_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.commit()

    @staticmethod
    def _key(prompt: str, llm_string: str) -> str:
        return hashlib.sha256(f"{llm_string}\x00{prompt}".encode()).hexdigest()

    def lookup(self, prompt: str, llm_string: str) -> Any:
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM llm_cache WHERE key = ?", (self._key(prompt, llm_string),)
            ).fetchone()
            if row is None:
                return None
            self.usage.cache_hits += 1
        return [ChatGeneration(message=m) for m in messages_from_dict(json.loads(row[0]))]

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Any]) -> None:
        value = json.dumps([message_to_dict(g.message) for g in return_val])
        with self._lock:
            self.usage.calls += 1
            for generation in return_val:
                meta = getattr(getattr(generation, "message", None), "usage_metadata", None) or {}
                self.usage.input_tokens += meta.get("input_tokens", 0)
                self.usage.output_tokens += meta.get("output_tokens", 0)
            self._db.execute(
                "INSERT OR REPLACE INTO llm_cache (key, value) VALUES (?, ?)",
                (self._key(prompt, llm_string), value),
            )
            self._db.commit()

    def clear(self, **kwargs: Any) -> None:
        with self._lock:
            self._db.execute("DELETE FROM llm_cache")
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]


def json_in_reply(raw: str) -> Any:
    """The JSON value starting at the first "{" of a model's reply (chatter around it ignored,
    broken JSON repaired), or None when there is no "{"."""
    return json_repair.loads(raw[raw.find("{"):]) if "{" in raw else None


def explain_model_error(exc: Exception, what: str, model: str | None, base_url: str | None) -> Exception:
    """Turn an openai client error into a ModelError that says what to check."""
    import openai

    where = base_url or "the default OpenAI endpoint"
    if isinstance(exc, (openai.APIConnectionError, openai.APITimeoutError)):
        return ModelError(
            f"cannot reach the {what} endpoint at {where} ({exc.__class__.__name__}: {exc}); "
            "is the server running and is the base URL right?"
        )
    if isinstance(exc, openai.NotFoundError):
        return ModelError(f"the {what} endpoint at {where} does not know model {model!r}: {exc.message}")
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ModelError(f"the {what} endpoint at {where} rejected the API key: {exc.message}")
    if isinstance(exc, openai.APIStatusError):
        return ModelError(f"the {what} endpoint at {where} answered HTTP {exc.status_code}: {exc.message}")
    return exc


class ChatClient:
    """A chat model with bounded concurrency and readable errors.

    Nodes call ``invoke`` with their RunnableConfig so LangGraph can stream the tokens.
    """

    def __init__(self, model: BaseChatModel, max_concurrency: int = 4, base_url: str | None = None):
        self.model = model
        self.base_url = base_url
        self._slots = threading.BoundedSemaphore(max_concurrency)

    @property
    def model_name(self) -> str:
        return getattr(self.model, "model_name", None) or type(self.model).__name__

    @property
    def usage(self) -> Usage:
        cache = self.model.cache
        return cache.usage if isinstance(cache, LLMCache) else Usage()

    def invoke(self, messages: list[BaseMessage], config: RunnableConfig | None = None) -> AIMessage:
        import openai

        with self._slots:
            try:
                return self.model.invoke(messages, config)
            except openai.OpenAIError as exc:
                raise explain_model_error(exc, "chat", self.model_name, self.base_url) from exc


def make_chat_client(settings: Settings) -> ChatClient | None:
    """The configured chat model, or None in offline mode (no ``chat_model`` set)."""
    if settings.offline:
        return None
    from langchain_openai import ChatOpenAI

    if settings.chat_api_key is None and not settings.chat_base_url:
        raise ConfigError(
            f"chat_model={settings.chat_model!r} needs an API key for the default OpenAI endpoint: "
            "set KGRAG_CHAT_API_KEY (or OPENAI_API_KEY), or point KGRAG_CHAT_BASE_URL at a local server"
        )
    key = settings.chat_api_key.get_secret_value() if settings.chat_api_key else "not-needed"
    model = ChatOpenAI(
        model=settings.chat_model,
        base_url=settings.chat_base_url,
        api_key=key,
        temperature=settings.chat_temperature,
        timeout=settings.chat_timeout,
        max_retries=settings.chat_max_retries,  # the openai client backs off exponentially
        stream_usage=True,
        cache=LLMCache(settings.llm_cache_path),
    )
    return ChatClient(model, settings.max_concurrency, settings.chat_base_url)
