"""The compiled graphs. This module only wires nodes.

PankRAG:  plan -> [review_plan] -> solve (one subgraph per ready sub-question, sent together) -> schedule
          -> solve ... -> fuse -> answer
          solve = rephrase -> route -> retrieve_local | retrieve_community | retrieve_ppr | retrieve_dense
                  -> rerank -> sub_answer
ProPEX:   retrieve_facts -> filter_facts -> rank_passages -> answer
Entity review:  load -> review (an interrupt per proposed merge, looping) -> record

``build_*_graph(checkpointer)`` give graphs for the CLI, the library and the service; kgrag/studio.py
exports them for LangGraph Server / Studio with a context schema that finds its own resources. A run passes
``context=Context(...)`` (agent/context.py).
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from agent import entity_review, nodes, propex, subquestion
from agent.context import Context, ReviewContext
from agent.state import (
    AgentState,
    InputState,
    OutputState,
    ProPEXOutput,
    ProPEXState,
    ReviewInput,
    ReviewOutput,
    ReviewState,
    SubQuestionInput,
    SubQuestionState,
)


def build_subquestion_graph(context_schema: type[Context] = Context):
    builder = StateGraph(SubQuestionState, context_schema=context_schema, input_schema=SubQuestionInput)
    builder.add_node("rephrase", subquestion.rephrase)
    builder.add_node("route", subquestion.route)
    retrievers = {f"retrieve_{name}": getattr(subquestion, f"retrieve_{name}") for name in subquestion.ROUTES}
    for name, step in retrievers.items():
        builder.add_node(name, step)
        builder.add_edge(name, "rerank")
    builder.add_node("rerank", subquestion.rerank)
    builder.add_node("sub_answer", subquestion.sub_answer)
    builder.add_edge(START, "rephrase")
    builder.add_edge("rephrase", "route")
    builder.add_conditional_edges("route", subquestion.pick_retriever, [*retrievers, "sub_answer"])
    builder.add_edge("rerank", "sub_answer")
    builder.add_edge("sub_answer", END)
    return builder.compile(name="solve")


def build_pankrag_graph(checkpointer=None, context_schema: type[Context] = Context):
    builder = StateGraph(AgentState, context_schema=context_schema, input_schema=InputState, output_schema=OutputState)
    builder.add_node("plan", nodes.plan)
    builder.add_node("review_plan", nodes.review_plan)
    builder.add_node("solve", build_subquestion_graph(context_schema))
    builder.add_node("schedule", nodes.schedule)
    builder.add_node("fuse", nodes.fuse)
    builder.add_node("answer", nodes.answer)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", nodes.after_plan, ["review_plan", "solve", "fuse"])
    builder.add_conditional_edges("review_plan", nodes.dispatch, ["solve", "fuse"])
    builder.add_conditional_edges("schedule", nodes.dispatch, ["solve", "fuse"])
    builder.add_edge("solve", "schedule")
    builder.add_edge("fuse", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer, name="pankrag")


def build_propex_graph(checkpointer=None, context_schema: type[Context] = Context):
    builder = StateGraph(
        ProPEXState, context_schema=context_schema, input_schema=InputState, output_schema=ProPEXOutput
    )
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


def build_entity_review_graph(checkpointer=None, context_schema: type[ReviewContext] = ReviewContext):
    builder = StateGraph(
        ReviewState, context_schema=context_schema, input_schema=ReviewInput, output_schema=ReviewOutput
    )
    builder.add_node("load", entity_review.load)
    builder.add_node("review", entity_review.review)
    builder.add_node("record", entity_review.record)
    builder.add_edge(START, "load")
    builder.add_conditional_edges("load", entity_review.next_step, ["review", "record"])
    builder.add_conditional_edges("review", entity_review.next_step, ["review", "record"])
    builder.add_edge("record", END)
    return builder.compile(checkpointer=checkpointer, name="entity_review")
