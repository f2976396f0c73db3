"""The PankRAG workflow as a node of your own LangGraph app.

    from kgrag.integrations.langgraph import pankrag_node

    builder = StateGraph(MyState)                      # MyState has "question", "answer", "citations" ...
    builder.add_node("research", pankrag_node("my-index"))
    ...
    app = builder.compile(checkpointer=InMemorySaver())

The node runs the compiled PankRAG graph as a subgraph: ``inputs`` maps your state to its input (default
``{"question": state["question"]}``), ``outputs`` maps its output back (default: ``answer``, ``short_answer``,
``confidence`` and ``citations``). The subgraph is compiled without a checkpointer of its own, so your graph's
checkpointer keeps its state (under the node's namespace), ``app.stream(..., subgraphs=True)`` yields its steps
(the plan, each sub-question as it is rephrased, retrieved and answered) and an interrupt inside it (a plan
review, ``pause_before``) stops your graph. With ``per_thread=True`` (the default) the subgraph keeps its state
from one run of your graph to the next in the same thread, so a follow-up question is planned with the earlier
ones (one such node may run at a time in a thread; pass ``per_thread=False`` to run several in parallel).

Why a node that invokes the graph rather than the compiled graph itself as the node: LangGraph gives a subgraph
added as a node its parent's run context, and the workflow needs its own (agent/context.py: the opened index
and the knobs), which this node passes as ``context=``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig, RunnableLambda

from kgrag.api import KGRag

ANSWER_KEYS = ("answer", "short_answer", "confidence", "citations")


def question_input(state: dict) -> dict:
    """The default input mapping: your state's ``question``."""
    return {"question": state["question"]}


def answer_output(result: dict) -> dict:
    """The default output mapping: the answer (with [n] marks), the answer alone, its confidence, its citations."""
    return {key: result[key] for key in ANSWER_KEYS if key in result}


def pankrag_node(
    index_dir: str | Path | None = None,
    *,
    rag: KGRag | None = None,
    inputs: Callable[[Any], dict] = question_input,
    outputs: Callable[[dict], dict] = answer_output,
    per_thread: bool = True,
    **knobs: Any,
) -> RunnableLambda:
    """A node (sync and async) that answers from ``index_dir`` (or an opened ``rag``) with the PankRAG workflow
    as its subgraph. ``knobs``: run settings as for ``KGRag.ask`` (mode, route_policy, candidates ...)."""
    from agent.graph import build_pankrag_graph

    rag = rag or KGRag(index_dir)  # settings resolved once, here
    rag.run_context(**knobs)  # a missing index or a bad knob fails now, not at the first run
    # True: the parent's checkpointer keeps the subgraph's state across runs in a thread; None: within one run
    workflow = build_pankrag_graph(checkpointer=True if per_thread else None)

    def run(state: Any, config: RunnableConfig) -> dict:
        return outputs(workflow.invoke(inputs(state), config, context=rag.run_context(**knobs)))

    async def arun(state: Any, config: RunnableConfig) -> dict:
        return outputs(await workflow.ainvoke(inputs(state), config, context=rag.run_context(**knobs)))

    return RunnableLambda(run, afunc=arun, name="pankrag")
