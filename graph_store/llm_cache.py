"""The disk cache of LLM responses: a SQLite file in the index folder (llm_cache.sqlite), apart from the record.

It plugs into LangChain's own cache hook (``BaseChatModel.cache``), so every call through the model, streamed
or not, is cached and a re-run pays for no call twice. Because the cache is the one place that sees both hits
and real calls, it also keeps the call and token counts (``Usage``).
"""

from __future__ import annotations

import ast
import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.messages import message_to_dict, messages_from_dict
from langchain_core.outputs import ChatGeneration

from graph_store.usage import Usage

MAX_CACHED_CHARS = 100_000  # a reply larger than any budget allows is not an answer; never cached
# Keys of the model's identity that change what it answers (connection settings such as the timeout,
# retries or the base URL do not, so changing them reuses the cache).
_IDENTITY_KEYS = (
    "model_name",
    "model",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "max_tokens",
    "max_completion_tokens",
    "extra_body",
    "_type",
)


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
            self._connection.execute("CREATE TABLE IF NOT EXISTS llm_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
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
            metas = [getattr(getattr(g, "message", None), "usage_metadata", None) or {} for g in return_val]
            self.usage.unreported += not any(metas)
            for meta in metas:
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
