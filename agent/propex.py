"""ProPEX-RAG as its own graph: retrieve facts, let the LLM keep the relevant ones, PPR, answer from passages.

It shares the retrieval code of the ``ppr`` route (graph_store.retrieval) and the answer composition of
the PankRAG graph (numbered citations; offline, the extracted answer with its supporting sentence).
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from agent import answering
from agent.nodes import extractive_text, knobs_and_resources, numbered, read_question, resources_for, text_of
from agent.validation import unusable_answer
from prompts import render_prompt


class ProPEXOutput(TypedDict, total=False):
    answer: str
    short_answer: str
    confidence: float
    offline: bool
    citations: list[dict[str, Any]]
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
    notes: dict[str, str]


def retrieve_facts(state: ProPEXState, config: RunnableConfig) -> dict[str, Any]:
    """The facts (triples) nearest the question."""
    res = resources_for(config)
    question, new = read_question(state)
    r = res.retrievers
    facts = r.facts(question, r.embed(question), r.settings.fact_top_k)
    get_stream_writer()({"event": "facts_retrieved", "facts": [f.text for f in facts]})
    return {"asked": question, "question": None, "messages": new, "facts": [f.model_dump() for f in facts],
            "offline": res.offline, "notes": {}}


def filter_facts(state: ProPEXState, config: RunnableConfig) -> dict[str, Any]:
    """The LLM keeps the facts that help (offline, or when its reply is unusable: the top facts by score)."""
    from graph_store.retrieval import Evidence

    knobs, res = knobs_and_resources(config)
    facts = [Evidence(**f) for f in state["facts"]]
    fact_filter = res.fact_filter(knobs)
    kept, error = res.retrievers.filter_facts(state["asked"], facts, fact_filter)
    how = "LLM filter" if fact_filter and not error else "top facts by score"
    notes = {"filter_facts": error} if error else {}
    get_stream_writer()({"event": "facts_filtered", "kept": [f.text for f in kept], "filter": how, "notes": notes})
    return {"kept_facts": [f.model_dump() for f in kept], "filter_error": error, "notes": notes}


def rank_passages(state: ProPEXState, config: RunnableConfig) -> dict[str, Any]:
    """Personalized PageRank from the kept facts' entities ranks the passages."""
    from graph_store.retrieval import Evidence

    knobs, res = knobs_and_resources(config)
    filtered = res.fact_filter(knobs) is not None
    result = res.retrievers.rank_passages(
        state["asked"], [Evidence(**f) for f in state["facts"]], [Evidence(**f) for f in state["kept_facts"]],
        filtered=filtered, filter_error=state.get("filter_error"), k=knobs.top_k_ppr)
    names = res.retrievers.entity_names
    get_stream_writer()({"event": "passages_ranked", "fallback": result.fallback,
                         "seeds": [names.get(e, e) for e in result.seeds],
                         "passages": [{"id": e.id, "titles": e.titles, "score": e.score} for e in result.evidence]})
    return {"passages": [e.model_dump() for e in result.evidence], "seeds": result.seeds, "fallback": result.fallback}


def _citations(res, passages: list[dict]) -> list[dict]:
    sources = res.index.store.document_sources()
    return [{"n": n, "evidence_id": p["id"], "kind": p["kind"], "doc_ids": p["doc_ids"], "titles": p["titles"],
             "sources": [sources.get(d, "") for d in p["doc_ids"]], "text": p["text"][:600]}
            for n, p in enumerate(passages, 1)]


def answer(state: ProPEXState, config: RunnableConfig) -> dict[str, Any]:
    """The answer from the ranked passages, with numbered citations."""
    from graph_store.retrieval import Evidence

    res = resources_for(config)
    passages = state["passages"]
    citations = _citations(res, passages)
    number_of = {c["evidence_id"]: c["n"] for c in citations}
    reading = answering.read_answer(state["asked"], [Evidence(**p) for p in passages], res.embedder)
    best = reading.candidates[0] if reading.candidates else None
    record = {"question": state["asked"], "answer": best.answer if best else answering.NOT_FOUND,
              "supporting_sentence": best.sentence if best else "", "sources": [best.evidence_id] if best else []}
    text, short = extractive_text([record], number_of), record["answer"]
    confidence = round(best.confidence, 3) if best else 0.0
    notes = dict(state.get("notes") or {})
    message = None
    if res.chat is not None:
        names = res.retrievers.entity_names
        message = res.chat.invoke([HumanMessage(render_prompt(
            "propex_answer", question=state["asked"], passages=numbered(passages),
            facts="\n".join(f"- {f['text']}" for f in state["kept_facts"]) or "(none)",
            seeds=", ".join(names.get(e, e) for e in state.get("seeds", {})) or "(none)"))], config,
            task="final_answer")
        problem = unusable_answer(text_of(message))
        if problem:
            notes["answer"] = f"model answer rejected ({problem}); extractive answer shown"
        else:
            text = short = text_of(message).strip()
    get_stream_writer()({"event": "final_answer", "answer": text, "confidence": confidence, "notes": notes,
                         "citations": [c["n"] for c in citations]})
    return {"answer": text, "short_answer": short, "confidence": confidence, "citations": citations, "notes": notes,
            "messages": [AIMessage(text, id=getattr(message, "id", None))]}
