"""The graphs as LangGraph Server / Studio load them (see langgraph.json): compiled without a checkpointer
(the server brings its own), with settings resolved once, here, when the server imports this module."""

from __future__ import annotations

from agent.graph import build_pankrag_graph, build_propex_graph
from agent.resources import ResourcePool, use_default_pool
from graph_store.settings import load_settings

use_default_pool(ResourcePool(load_settings()))
pankrag = build_pankrag_graph()
propex = build_propex_graph()
