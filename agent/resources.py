"""What the nodes work with: the opened index, its retrievers and the chat model, loaded once per process.

Nodes find them through ``config["configurable"]["resources"]`` when the caller
passes its own (tests, embedding applications), else through a cache keyed by
index directory and chat model, built from the settings on first use.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from langchain_core.runnables import RunnableConfig

from agent.configuration import AgentConfig
from graph_store.embeddings import Embedder
from graph_store.index import KnowledgeIndex
from graph_store.llm import ChatClient, make_chat_client
from graph_store.retrieval import LLMFactFilter, Retrievers
from graph_store.settings import Settings, load_settings


@dataclass
class Resources:
    index: KnowledgeIndex
    retrievers: Retrievers
    chat: ChatClient | None

    @property
    def embedder(self) -> Embedder:
        return self.index.embedder

    @property
    def offline(self) -> bool:
        return self.chat is None

    def fact_filter(self, knobs: AgentConfig) -> LLMFactFilter | None:
        """ProPEX's LLM fact filter for the ppr route: with a chat model, unless the run turns it off."""
        if self.chat is None or not knobs.fact_filter:
            return None
        return LLMFactFilter(self.chat, self.retrievers.settings.fact_keep)

    @classmethod
    def open(cls, settings: Settings, chat: ChatClient | None = None, embedder: Embedder | None = None) -> "Resources":
        chat = chat if chat is not None else make_chat_client(settings)
        index = KnowledgeIndex(settings, embedder=embedder, chat=chat, create=False, progress=False)
        return cls(index, Retrievers(index), chat)


_cache: dict[tuple, Resources] = {}
_lock = threading.Lock()


def resources_for(config: RunnableConfig | None) -> Resources:
    configurable = (config or {}).get("configurable", {}) or {}
    if isinstance(configurable.get("resources"), Resources):
        return configurable["resources"]
    knobs = AgentConfig.from_runnable_config(config)
    settings = load_settings(index_dir=knobs.index_dir, chat_model=knobs.chat_model)
    key = (str(settings.index_dir.resolve()), settings.chat_model, settings.chat_base_url)
    with _lock:
        if key not in _cache:
            _cache[key] = Resources.open(settings)
        return _cache[key]
