"""The compiled graphs. This module only wires nodes.

``pankrag`` and ``propex`` are compiled without a checkpointer, for LangGraph
Server / Studio (which bring their own); ``build_*_graph(checkpointer)`` give
checkpointed graphs for the CLI and applications.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from agent import nodes, propex
from agent.configuration import AgentConfig
from agent.state import AgentState, InputState, OutputState


def build_pankrag_graph(checkpointer=None):
    builder = StateGraph(AgentState, context_schema=AgentConfig, input_schema=InputState, output_schema=OutputState)
    builder.add_node("plan", nodes.plan)
    builder.add_node("schedule", nodes.schedule)
    builder.add_node("solve", nodes.solve)
    builder.add_node("answer", nodes.answer)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", nodes.dispatch, ["solve", "answer"])
    builder.add_edge("solve", "schedule")
    builder.add_conditional_edges("schedule", nodes.dispatch, ["solve", "answer"])
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer, name="pankrag")


def build_propex_graph(checkpointer=None):
    builder = StateGraph(propex.ProPEXState, context_schema=AgentConfig, input_schema=InputState,
                         output_schema=propex.ProPEXOutput)
    builder.add_node("retrieve_facts", propex.retrieve_facts)
    builder.add_node("filter_facts", propex.filter_facts)
    builder.add_node("rank_passages", propex.rank_passages)
    builder.add_node("answer", propex.answer)
    builder.add_edge(START, "retrieve_facts")
    builder.add_edge("retrieve_facts", "filter_facts")
    builder.add_edge("filter_facts", "rank_passages")
    builder.add_edge("rank_passages", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer, name="propex")


# For `langgraph dev` / LangGraph Server: no checkpointer of our own.
pankrag = build_pankrag_graph()
propex_graph = build_propex_graph()
