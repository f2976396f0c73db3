"""Chat models: a factory for any OpenAI-compatible endpoint, a disk cache of responses, accounting.

The cache plugs into LangChain's own cache hook (``BaseChatModel.cache``), so every
call through the model, streamed or not, is cached and a re-run pays for no call
twice. Because the cache is the one place that sees both hits and real calls, it
also keeps the call and token counts.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sqlite3
import threading
import time
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
from graph_store.settings import Settings, redact_url


@dataclass
class Usage:
    calls: int = 0  # requests that reached the model
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


# Output budget (max_tokens) of every LLM task, in one place: a small model left without one can generate
# until its context is full. A reply cut by its budget comes back with finish_reason "length".
OUTPUT_BUDGETS = {
    "plan": 700, "rephrase": 80, "fact_filter": 60, "sub_answer": 250, "final_answer": 500,
    "extract": 1500, "report": 800, "judge": 600, "answer": 500,
}
MAX_CACHED_CHARS = 100_000  # a reply larger than any budget allows is not an answer; never cached
# Keys of the model's identity that change what it answers (connection settings such as the timeout,
# retries or the base URL do not, so changing them reuses the cache).
_IDENTITY_KEYS = ("model_name", "model", "temperature", "top_p", "seed", "stop", "max_tokens", "max_completion_tokens",
                  "extra_body", "_type")


class LLMCache(BaseCache):
    """SQLite cache of chat generations keyed by sha256(model + generation parameters, messages)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.usage = Usage()
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    @property
    def _db(self) -> sqlite3.Connection:
        """Opened on first use: no file appears before a call is made (the index folder is checked by then)."""
        if self._connection is None:
            self._connection = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute(
                "CREATE TABLE IF NOT EXISTS llm_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._connection.commit()
        return self._connection

    @staticmethod
    def _identity(llm_string: str) -> str:
        """The parts of LangChain's model description that change the answer."""
        serialized, _, params = llm_string.partition("---")
        try:
            kwargs = json.loads(serialized).get("kwargs", {})
            kept = {k: v for k, v in kwargs.items() if k in _IDENTITY_KEYS}
        except (json.JSONDecodeError, AttributeError):
            kept = {"raw": serialized}
        try:
            extra = {k: v for k, v in ast.literal_eval(params) if k in _IDENTITY_KEYS}
        except (ValueError, SyntaxError, TypeError):
            extra = {"raw": params}
        return json.dumps({**kept, **extra}, sort_keys=True, default=str)

    @classmethod
    def _key(cls, prompt: str, llm_string: str) -> str:
        return hashlib.sha256(f"{cls._identity(llm_string)}\x00{prompt}".encode()).hexdigest()

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
            if len(value) > MAX_CACHED_CHARS:
                return
            self._db.execute(
                "INSERT OR REPLACE INTO llm_cache (key, value) VALUES (?, ?)",
                (self._key(prompt, llm_string), value),
            )
            self._db.commit()

    def clear(self, **kwargs: Any) -> None:
        with self._lock:
            self._db.execute("DELETE FROM llm_cache")
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]


# An object's members without its braces: a key, a colon, then a comma and a second quoted key. Seen from
# Qwen2.5-Coder-0.5B copying the prompt's 'Answer: {...}' line: 'answer: Selva, "evidence": [1, 2], ...'.
_BARE_MEMBERS = re.compile(r'^\s*"?[A-Za-z_]\w*"?\s*:[^\n]*?,\s*"[A-Za-z_]\w*"\s*:')


def json_in_reply(raw: str) -> Any:
    """The JSON value starting at the first "{" of a model's reply (chatter around it ignored,
    broken JSON repaired), an object's members written without their braces as that object,
    or None otherwise."""
    if "{" in raw:
        return json_repair.loads(raw[raw.find("{"):])
    if _BARE_MEMBERS.match(raw):
        return json_repair.loads("{" + raw.strip() + "}")
    return None


def explain_model_error(exc: Exception, what: str, model: str | None, base_url: str | None,
                        timeout: float | None = None) -> ModelError:
    """An openai client error as a ModelError that says what to check. ``public`` is the same without the
    endpoint's address, for replies to users of a service."""
    import openai

    where = redact_url(base_url) if base_url else "the default OpenAI endpoint"
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(f"the {what} endpoint at {where} did not answer within {timeout or '?'} s (chat_timeout); "
                          "a server that handles one request at a time may still be busy with an earlier one",
                          public=f"the model endpoint timed out after {timeout or '?'} s")
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(f"cannot reach the {what} endpoint at {where} ({exc.__class__.__name__}); is the server "
                          "running and is the base URL right?", public="the model endpoint is unreachable")
    if isinstance(exc, openai.NotFoundError):
        return ModelError(f"the {what} endpoint at {where} does not know model {model!r}: {exc.message}",
                          public=f"the model endpoint does not know model {model!r}")
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ModelError(f"the {what} endpoint at {where} rejected the API key: {exc.message}",
                          public="the model endpoint rejected the service's API key")
    if isinstance(exc, openai.APIStatusError):
        return ModelError(f"the {what} endpoint at {where} answered HTTP {exc.status_code}: {exc.message}",
                          public=f"the model endpoint failed (HTTP {exc.status_code})")
    return ModelError(f"the {what} endpoint at {where} failed: {exc.__class__.__name__}: {str(exc)[:200]}",
                      public="the model endpoint failed")


def truncated(message: BaseMessage) -> bool:
    """A reply cut by its output budget (max_tokens)."""
    return (getattr(message, "response_metadata", None) or {}).get("finish_reason") == "length"


TRANSIENT_STATUS = (408, 409, 429, 500, 502, 503, 504)


class ChatClient:
    """A chat model with an output budget per task, bounded concurrency, retries and readable errors.

    Transient failures (HTTP 429/5xx, a dropped connection) are retried with exponential backoff; a timeout
    is not: a server that handles one request at a time is still generating the abandoned request.
    A reply that is not an OpenAI chat completion (an HTML error page, JSON of another shape) is a ModelError.
    Nodes call ``invoke`` with their RunnableConfig so LangGraph can stream the tokens.
    """

    def __init__(self, model: BaseChatModel, max_concurrency: int = 4, base_url: str | None = None,
                 max_retries: int = 0, timeout: float | None = None):
        self.model = model
        self.base_url = base_url
        self.max_retries = max_retries
        self.timeout = timeout
        self._slots = threading.BoundedSemaphore(max_concurrency)

    @property
    def model_name(self) -> str:
        return getattr(self.model, "model_name", None) or type(self.model).__name__

    @property
    def usage(self) -> Usage:
        cache = self.model.cache
        return cache.usage if isinstance(cache, LLMCache) else Usage()

    def _fail(self, exc: Exception) -> ModelError:
        return explain_model_error(exc, "chat", self.model_name, self.base_url, self.timeout)

    def invoke(self, messages: list[BaseMessage], config: RunnableConfig | None = None,
               task: str = "answer") -> AIMessage:
        import openai

        budget = OUTPUT_BUDGETS[task]
        # OpenAI takes max_completion_tokens (what langchain-openai sends for max_tokens); OpenAI-compatible
        # servers (llama.cpp, vLLM, Ollama) read max_tokens, so a custom endpoint gets that name.
        model = self.model.bind(extra_body={"max_tokens": budget}) if self.base_url else self.model.bind(max_tokens=budget)
        with self._slots:
            for attempt in range(self.max_retries + 1):
                try:
                    return model.invoke(messages, config)
                except openai.APITimeoutError as exc:
                    raise self._fail(exc) from exc
                except (openai.APIConnectionError, openai.APIStatusError) as exc:
                    transient = isinstance(exc, openai.APIConnectionError) or exc.status_code in TRANSIENT_STATUS
                    if not transient or attempt == self.max_retries:
                        raise self._fail(exc) from exc
                    time.sleep(min(8.0, 0.5 * 2 ** attempt))
                except openai.OpenAIError as exc:
                    raise self._fail(exc) from exc
                except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
                    # langchain-openai's own errors on a reply of the wrong shape
                    raise ModelError(
                        f"the chat endpoint at {redact_url(self.base_url or 'OpenAI')} returned a reply that is not "
                        f"an OpenAI chat completion ({exc.__class__.__name__}: {str(exc)[:120]})",
                        public="the model endpoint returned an unreadable reply") from exc
        raise AssertionError("unreachable")


def make_chat_client(settings: Settings) -> ChatClient | None:
    """The configured chat model, or None in offline mode (no ``chat_model`` set).

    Its response cache lives in the index folder and is opened on the first call.
    """
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
        max_retries=0,  # ChatClient retries what is worth retrying
        stream_usage=True,
        cache=LLMCache(settings.llm_cache_path),
    )
    return ChatClient(model, settings.max_concurrency, settings.chat_base_url, settings.chat_max_retries,
                      settings.chat_timeout)
