"""The graphs as LangGraph Server / Studio load them (see langgraph.json): compiled without a checkpointer
(the server brings its own), with settings resolved once, here, when the server imports this module.

The server makes each run's context from the run's JSON (Studio's form); ``StudioContext`` adds the resources
of the index it names (or the settings' one) when the run's first node asks for them (in a worker thread: the
server makes contexts on its event loop, where opening an index would block), opened once per index and moved
to its newest generation, then kept for the rest of the run.

``entity_review`` (agent/entity_review.py) writes decisions: ``StudioReviewContext`` opens the index it names for
writing, with the pool's embedder (a decision re-embeds the entities it changes)."""

from __future__ import annotations

from pydantic import ConfigDict
from pydantic.dataclasses import dataclass

from agent.context import Context, ReviewContext
from agent.graph import build_entity_review_graph, build_pankrag_graph, build_propex_graph
from agent.resources import ResourcePool, Resources
from graph_store.settings import load_settings

POOL = ResourcePool(load_settings())


@dataclass(kw_only=True, config=ConfigDict(arbitrary_types_allowed=True, extra="forbid"))
class StudioContext(Context):
    """A run's context whose resources come from this server's settings."""

    def answering_from(self) -> Resources:
        if self.resources is None:
            self.resources = POOL.latest(self.index_dir, self.chat_model)
        return self.resources


@dataclass(kw_only=True, config=ConfigDict(arbitrary_types_allowed=True, extra="forbid"))
class StudioReviewContext(ReviewContext):
    """A review run's context whose index comes from this server's settings, opened for writing."""

    def reviewing(self):
        if self.index is None:
            from graph_store.index import KnowledgeIndex

            reader = POOL.get(self.index_dir)  # checks the index and loads the embedder, once per server
            self.index = KnowledgeIndex(POOL.settings_for(self.index_dir), embedder=reader.embedder, progress=False)
        return self.index


pankrag = build_pankrag_graph(context_schema=StudioContext)
propex = build_propex_graph(context_schema=StudioContext)
entity_review = build_entity_review_graph(context_schema=StudioReviewContext)
