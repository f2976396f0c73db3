"""ProPEX-RAG as its own graph: retrieve facts, let the LLM keep the relevant ones, PPR, answer from passages.

It shares the retrieval code of the ``ppr`` route (graph_store.retrieval).
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph.message import add_messages

from agent.answering import extractive_answer
from agent.configuration import AgentConfig
from agent.nodes import OFFLINE_LABEL, _numbered, _text, read_question
from agent.resources import resources_for
from graph_store.retrieval import Evidence
from prompts import render_prompt


class ProPEXOutput(TypedDict, total=False):
    answer: str
    short_answer: str
    passages: list[dict[str, Any]]
    messages: Annotated[list[AnyMessage], add_messages]


class ProPEXState(ProPEXOutput, total=False):
    question: str
    asked: str
    facts: list[dict[str, Any]]
    kept_facts: list[dict[str, Any]]
    filter_error: str | None
    seeds: dict[str, float]
    fallback: str | None


def retrieve_facts(state: ProPEXState, config: RunnableConfig) -> dict[str, Any]:
    res = resources_for(config)
    question, new = read_question(state)
    r = res.retrievers
    facts = r.facts(question, r.embed(question), r.settings.fact_top_k)
    get_stream_writer()({"event": "facts_retrieved", "facts": [f.text for f in facts]})
    return {"asked": question, "question": None, "messages": new, "facts": [f.model_dump() for f in facts]}


def filter_facts(state: ProPEXState, config: RunnableConfig) -> dict[str, Any]:
    res, knobs = resources_for(config), AgentConfig.from_runnable_config(config)
    facts = [Evidence(**f) for f in state["facts"]]
    kept, error = res.retrievers.filter_facts(state["asked"], facts, res.fact_filter(knobs))
    get_stream_writer()({"event": "facts_filtered", "kept": [f.text for f in kept], "error": error})
    return {"kept_facts": [f.model_dump() for f in kept], "filter_error": error}


def rank_passages(state: ProPEXState, config: RunnableConfig) -> dict[str, Any]:
    res, knobs = resources_for(config), AgentConfig.from_runnable_config(config)
    filtered = res.fact_filter(knobs) is not None
    result = res.retrievers.rank_passages(
        state["asked"], [Evidence(**f) for f in state["facts"]], [Evidence(**f) for f in state["kept_facts"]],
        filtered=filtered, filter_error=state.get("filter_error"), k=knobs.top_k_ppr)
    get_stream_writer()({"event": "passages_ranked", "fallback": result.fallback,
                         "passages": [e.id for e in result.evidence]})
    return {"passages": [e.model_dump() for e in result.evidence], "seeds": result.seeds, "fallback": result.fallback}


def answer(state: ProPEXState, config: RunnableConfig) -> dict[str, Any]:
    res = resources_for(config)
    passages = [Evidence(**p) for p in state["passages"]]
    if res.chat is None:
        found = extractive_answer(state["asked"], passages, res.embedder)
        marks = "".join(f"[{n}]" for n, p in enumerate(passages, 1) if p.id in found.evidence_ids)
        text, short = f"{OFFLINE_LABEL} {found.answer} {marks}".strip(), found.answer
    else:
        names = res.retrievers.entity_names
        text = _text(res.chat.invoke([HumanMessage(render_prompt(
            "propex_answer", question=state["asked"], passages=_numbered(state["passages"]),
            facts="\n".join(f"- {f['text']}" for f in state["kept_facts"]) or "(none)",
            seeds=", ".join(names.get(e, e) for e in state.get("seeds", {})) or "(none)"))], config))
        short = text
    return {"answer": text, "short_answer": short, "messages": [AIMessage(text)]}
