"""What the nodes work with: the opened index, its retrievers and the chat model.

Settings are resolved once, where a request enters: the CLI, the library and the service open the
``Resources`` of a run (from a ``ResourcePool``) and pass them in the run's context (agent/context.py); the
Studio module (kgrag/studio.py) resolves its settings when LangGraph Server imports it. Nodes never read the
environment or a config file.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from agent.records import Kind
from graph_store.embeddings import RememberingEmbedder
from graph_store.settings import Settings

if TYPE_CHECKING:
    from graph_store.embeddings import Embedder
    from graph_store.index import KnowledgeIndex
    from graph_store.llm import ChatClient
    from graph_store.retrieval import Evidence, LLMFactFilter, Retrievers


class Resources:
    """An opened index with its chat model. The retrievers (graph, matrices, tables: a second or more on a large
    index) load on first use, so a run can plan while they load; they read one generation for their life."""

    def __init__(self, index: KnowledgeIndex, retrievers: Retrievers | None, chat: ChatClient | None):
        self.index = index
        self.chat = chat
        self._retrievers = retrievers
        self._embedder = RememberingEmbedder(index.embedder)
        self._lock = threading.Lock()
        if retrievers is None:
            index.generation()  # fail now, with the reason, when the index has no usable derived state

    @property
    def retrievers(self) -> Retrievers:
        if self._retrievers is None:
            with self._lock:
                if self._retrievers is None:
                    from graph_store.retrieval import Retrievers

                    self._retrievers = Retrievers(self.index)
        return self._retrievers

    def generation_number(self) -> int:
        """The generation these resources read (or will read, once loaded)."""
        if self._retrievers is not None:
            return self._retrievers.generation.number
        return self.index.generation().number

    def load_in_background(self) -> None:
        """Start loading the retrievers now, on a thread, so they are ready by the first retrieval."""

        def load() -> None:
            try:
                _ = self.retrievers
            except Exception:  # noqa: BLE001 - the same error is raised, with its reason, on first use
                pass

        threading.Thread(target=load, daemon=True).start()

    @property
    def embedder(self) -> Embedder:
        """The index's embedder, keeping the vectors of the run's texts (evidence is read again and again)."""
        return self._embedder

    @property
    def offline(self) -> bool:
        return self.chat is None

    def model_for(self, task: str) -> ChatClient | None:
        """The chat model when it does ``task`` (settings.llm_tasks), else None: the task is done offline."""
        return self.chat if self.chat is not None and task in self.index.settings.llm_tasks else None

    def fact_filter(self, wanted: bool = True) -> LLMFactFilter | None:
        """ProPEX's LLM fact filter for the ppr route: with a chat model doing "filter", unless the run turns it off."""
        model = self.model_for("filter")
        if model is None or not wanted:
            return None
        from graph_store.retrieval import LLMFactFilter

        return LLMFactFilter(model, self.retrievers.settings.fact_keep)

    def retrieve(
        self, route: str, query: str, kind: Kind, k: int, fact_filter: bool = True
    ) -> tuple[list[Evidence], dict]:
        """Evidence for one query by one route, and the route's details (PPR seeds, facts kept, fallbacks)."""
        r = self.retrievers
        if route == "local":
            return r.local(query, k), {}
        if route == "community":
            return r.community(query, k, kind), {"level": r.community_level(kind)}
        if route == "dense":
            return r.dense(query, k), {}
        result = r.ppr(query, k, self.fact_filter(fact_filter))
        return result.evidence, {
            "seeds": {e: round(w, 6) for e, w in result.seeds.items()},
            "facts": [f.text for f in result.facts],
            "kept_facts": [f.text for f in result.kept_facts],
            "fallback": result.fallback,
            "filter_error": result.filter_error,
        }

    @classmethod
    def open(cls, settings: Settings, embedder: Embedder | None = None) -> Resources:
        """An existing index for reading, with the chat model the settings name (checked before anything is written)."""
        from graph_store.index import KnowledgeIndex

        index = KnowledgeIndex.open(settings, embedder=embedder)
        return cls(index, None, index.chat)


class ResourcePool:
    """Opened indexes for one entry point, by (index directory, chat model), built from its settings."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._opened: dict[tuple[str, str | None], Resources] = {}
        self._lock = threading.Lock()

    def settings_for(self, index_dir: str | None = None, chat_model: str | None = None) -> Settings:
        """The pool's settings with a run's overrides (index directory, chat model on the same endpoint)."""
        update = {k: v for k, v in (("index_dir", index_dir), ("chat_model", chat_model)) if v}
        return self.settings.replace(**update) if update else self.settings

    def get(self, index_dir: str | None = None, chat_model: str | None = None) -> Resources:
        """The resources of an index (the pool's, or ``index_dir``) with a chat model, opened once."""
        settings = self.settings_for(index_dir, chat_model)
        key = (str(settings.index_dir.resolve()), settings.chat_model)
        with self._lock:
            if key not in self._opened:
                self._opened[key] = Resources.open(settings)
            return self._opened[key]

    def latest(self, index_dir: str | None = None, chat_model: str | None = None) -> Resources:
        """``get``, moved to the newest complete generation of the index when a build has finished since.

        Entry points call it once per run and pass the result down, so one run never mixes two states.
        """
        from graph_store import generations

        resources = self.get(index_dir, chat_model)
        current = generations.current(resources.index.settings)
        if current is None or current.number == resources.generation_number():
            return resources
        fresh = Resources(resources.index, None, resources.chat)
        settings = self.settings_for(index_dir, chat_model)
        with self._lock:
            self._opened[(str(settings.index_dir.resolve()), settings.chat_model)] = fresh
        return fresh

    def close(self) -> None:
        with self._lock:
            for resources in self._opened.values():
                resources.index.close()
            self._opened.clear()
