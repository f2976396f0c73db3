"""ProPEX-RAG as its own graph: retrieve facts, let the LLM keep the relevant ones, PPR, answer from passages.

It shares the retrieval code of the ``ppr`` route (graph_store.retrieval) and the final answer of the PankRAG
graph (agent/answers.py: numbered citations; offline, the extracted answer with its supporting sentence).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from agent import answers
from agent.context import Context
from agent.offline.reader import read_answer
from agent.prompting import numbered, read_question, text_of
from agent.records import NOT_FOUND, SubQuestionRecord, as_evidence, evidence_item
from agent.state import ProPEXState
from agent.validation import says_not_found


def retrieve_facts(state: ProPEXState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The facts (triples) nearest the question."""
    res = runtime.context.answering_from()
    question, new = read_question(state)
    r = res.retrievers
    facts = r.facts(question, r.embed(question), r.settings.fact_top_k)
    runtime.stream_writer({"event": "facts_retrieved", "facts": [f.text for f in facts]})
    return {
        "asked": question,
        "question": None,
        "messages": new,
        "facts": [evidence_item(f) for f in facts],
        "offline": res.offline,
        "notes": {},
    }


def filter_facts(state: ProPEXState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The LLM keeps the facts that help (offline, or when its reply is unusable: the top facts by score)."""
    res = runtime.context.answering_from()
    facts = [as_evidence(f) for f in state["facts"]]
    fact_filter = res.fact_filter(runtime.context.fact_filter)
    kept, error = res.retrievers.filter_facts(state["asked"], facts, fact_filter)
    how = "LLM filter" if fact_filter and not error else "top facts by score"
    notes = {"filter_facts": error} if error else {}
    runtime.stream_writer({"event": "facts_filtered", "kept": [f.text for f in kept], "filter": how, "notes": notes})
    return {"kept_facts": [evidence_item(f) for f in kept], "filter_error": error, "notes": notes}


def rank_passages(state: ProPEXState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Personalized PageRank from the kept facts' entities ranks the passages."""
    ctx = runtime.context
    res = ctx.answering_from()
    filtered = res.fact_filter(ctx.fact_filter) is not None
    result = res.retrievers.rank_passages(
        state["asked"],
        [as_evidence(f) for f in state["facts"]],
        [as_evidence(f) for f in state["kept_facts"]],
        filtered=filtered,
        filter_error=state.get("filter_error"),
        k=ctx.top_k_ppr,
    )
    names = res.retrievers.entity_names
    runtime.stream_writer(
        {
            "event": "passages_ranked",
            "fallback": result.fallback,
            "seeds": [names.get(e, e) for e in result.seeds],
            "passages": [{"id": e.id, "titles": e.titles, "score": e.score} for e in result.evidence],
        }
    )
    return {"passages": [evidence_item(e) for e in result.evidence], "seeds": result.seeds, "fallback": result.fallback}


def answer(state: ProPEXState, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    """The answer from the ranked passages, with numbered citations."""
    res = runtime.context.answering_from()
    passages = state["passages"]
    cited = answers.citations(res, passages)
    number_of = {c["evidence_id"]: c["n"] for c in cited}
    reading = read_answer(
        state["asked"], [as_evidence(p) for p in passages], res.embedder, 3, res.retrievers.pronoun_of
    )
    best = reading.candidates[0] if reading.candidates else None
    record = SubQuestionRecord(
        question=state["asked"],
        answer=best.answer if best else NOT_FOUND,
        supporting_sentence=best.sentence if best else "",
        sources=[best.evidence_id] if best else [],
    )
    text, short = answers.extractive_text([record], number_of), record["answer"] or NOT_FOUND
    confidence = round(best.confidence, 3) if best else 0.0
    notes = dict(state.get("notes") or {})
    message = None
    if res.model_for("answer") is not None:
        names = res.retrievers.entity_names
        message, problem = answers.model_answer(
            res,
            "propex_answer",
            {
                "question": state["asked"],
                "passages": numbered(passages),
                "facts": "\n".join(f"- {f['text']}" for f in state["kept_facts"]) or "(none)",
                "seeds": ", ".join(names.get(e, e) for e in state.get("seeds", {})) or "(none)",
            },
            config,
        )
        if problem:
            notes["answer"] = f"model answer rejected ({problem}); extractive answer shown"
        elif says_not_found(text_of(message)):  # its own words for "not found": it is not found, however sure
            text, short, confidence = text_of(message).strip(), NOT_FOUND, 0.0
        else:
            short = answers.short_of(text_of(message))
            text = answers.with_marks(text_of(message).strip(), [record], number_of)
    update = answers.final_update(
        runtime.stream_writer, text=text, short=short, confidence=confidence, cited=cited, notes=notes, message=message
    )
    update["extractive"] = message is None or "answer" in notes  # no model wrote it, or its answer was rejected
    return update
