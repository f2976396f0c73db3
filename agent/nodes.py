"""The PankRAG workflow's nodes: plan, dispatch (fan-out), solve one sub-question, final answer."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.types import Send

from agent.answering import NOT_FOUND, extractive_answer, is_not_found, parse_sub_answer
from agent.configuration import AgentConfig
from agent.planning import (parse_plan, rule_based_plan, single_question_plan, substitute_references,
                            validate_plan)
from agent.reranking import evidence_vectors, rerank_by_dependencies
from agent.resources import Resources, resources_for
from agent.state import AgentState, SolveInput
from graph_store.retrieval import Evidence
from prompts import render_prompt

OFFLINE_LABEL = "[offline: extractive answer, no language model]"
DONE = ("answered", "not_found", "failed")
EVIDENCE_IN_PROMPT = 8


def describe_event(event: dict) -> str | None:
    """One streamed step as readable lines (for the CLI and the chat API), or None for events not shown."""
    kind = event.get("event")
    if kind == "plan":
        lines = [f"Plan ({event['planner']}):"]
        for s in event["subquestions"]:
            after = f" (after {', '.join(s['depends_on'])})" if s["depends_on"] else ""
            lines.append(f"- {s['id']} [{s['route']}, {s['kind']}]: {s['question']}{after}")
        return "\n".join(lines + [f"  note: {n}" for n in event["notes"]]) + "\n"
    if kind == "subquestion_rephrased":
        return f"{event['id']} rephrased: {event['rephrased']}\n"
    if kind == "subquestion_retrieved":
        return (f"{event['id']} retrieved {len(event['evidence'])} items by {event['route']}"
                + (", reranked by dependencies" if event["reranked"] else "") + "\n")
    if kind == "subquestion_answered":
        return f"{event['id']} answer: {event['answer']}\n"
    if kind in ("facts_retrieved", "facts_filtered", "passages_ranked"):
        details = json.dumps({k: v for k, v in event.items() if k != "event"}, ensure_ascii=False)[:300]
        return f"{kind.replace('_', ' ')}: {details}\n"
    return None


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _history(messages: list[BaseMessage], limit: int = 6) -> str:
    lines = [f"{'user' if isinstance(m, HumanMessage) else 'assistant'}: {_text(m)[:500]}"
             for m in messages if isinstance(m, (HumanMessage, AIMessage))]
    return "\n".join(lines[-limit:]) or "(none)"


def _asked(record: dict) -> str:
    """A sub-question as it was retrieved: rephrased when it was."""
    return record.get("rephrased") or record["question"]


def _resolved(records: list[dict]) -> str:
    """Sub-questions with their answers, one "- question -> answer" line each."""
    return "\n".join(f"- {_asked(r)} -> {r['answer']}" for r in records)


def _numbered(evidence: list[dict], limit: int = EVIDENCE_IN_PROMPT) -> str:
    lines = []
    for n, item in enumerate(evidence[:limit], 1):
        source = f" (from {', '.join(item['titles'])})" if item.get("titles") else ""
        lines.append(f"[{n}]{source} {item['text'][:1200]}")
    return "\n".join(lines) or "(no evidence)"


def read_question(state: dict) -> tuple[str, list[BaseMessage]]:
    """This turn's question, from ``question`` (then also recorded as a user message) or the last user message.

    Returns the question and the messages to append.
    """
    question = (state.get("question") or "").strip()
    if question:
        return question, [HumanMessage(question)]
    messages = state.get("messages") or []
    if messages and isinstance(messages[-1], HumanMessage) and _text(messages[-1]).strip():
        return _text(messages[-1]).strip(), []
    raise ValueError("no question: pass {'question': ...} or chat 'messages' ending with a user message")


# --- plan -------------------------------------------------------------------------------------------

def plan(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
    """One globally-aware planning call (or the offline planner) turns the question into a DAG."""
    knobs = AgentConfig.from_runnable_config(config)
    res = resources_for(config)
    question, new_messages = read_question(state)
    messages = list(state.get("messages") or [])
    history = _history(messages if new_messages else messages[:-1])  # the turns before this question
    turn = int(state.get("turn") or 0) + 1

    notes: list[str] = []
    if knobs.mode in ("no_planning", "naive"):
        items, planner = single_question_plan(question, "dense" if knobs.mode == "naive" else None), "single"
        notes.append(f"mode {knobs.mode}: the question is the only sub-question")
    elif res.chat is None:
        items, notes = rule_based_plan(question, knobs.max_subquestions)
        planner = "rule-based"
    else:
        try:
            raw = _text(res.chat.invoke([HumanMessage(render_prompt(
                "plan", question=question, history=history, max_subquestions=knobs.max_subquestions))], config))
            items, notes = validate_plan(parse_plan(raw), question, knobs.max_subquestions)
            planner = "llm"
        except Exception as exc:  # noqa: BLE001 - any planning failure degrades to the question itself
            items, planner = single_question_plan(question), "fallback"
            notes = [f"planning failed ({exc.__class__.__name__}: {exc}); the question is the only sub-question"]
    if knobs.route_policy != "plan" and knobs.mode != "naive":
        for item in items:
            item["route"] = knobs.route_policy

    records = {}
    for item in items:
        sid = f"{turn}:{item['id']}"
        records[sid] = {**item, "id": sid, "local_id": item["id"], "turn": turn,
                        "depends_on": [f"{turn}:{d}" for d in item["depends_on"]],
                        "rephrased": None, "status": "pending", "evidence": [], "answer": None, "sources": [],
                        "notes": {}}
    get_stream_writer()({"event": "plan", "planner": planner, "notes": notes,
                         "subquestions": [{k: r[k] for k in ("id", "question", "depends_on", "relation", "route", "kind")}
                                          for r in records.values()]})
    return {"messages": new_messages, "asked": question, "question": None, "turn": turn, "plan": list(records),
            "planner": planner, "plan_notes": notes, "subquestions": records, "offline": res.offline,
            "answer": None, "citations": []}


# --- dispatch ----------------------------------------------------------------------------------------

def schedule(state: AgentState) -> dict[str, Any]:
    """A join point: runs once after every wave of sub-questions, so dispatch sees all their answers."""
    return {}


def dispatch(state: AgentState) -> list[Send] | str:
    """Send every pending sub-question whose dependencies are all answered; the final answer when none is left."""
    records = state["subquestions"]
    current = [records[sid] for sid in state["plan"]]
    siblings = [r["local_id"] for r in current]
    ready = [r for r in current if r["status"] == "pending"
             and all(records[d]["status"] in DONE for d in r["depends_on"])]
    if not ready:
        return "answer"  # validated plans are acyclic, so nothing pending is left here
    return [Send("solve", SolveInput(record=r, dependencies=[records[d] for d in r["depends_on"]], siblings=siblings))
            for r in ready]


# --- solve one sub-question ----------------------------------------------------------------------------

def _retrieve(res: Resources, knobs: AgentConfig, route: str, query: str, kind: str) -> tuple[list[Evidence], dict]:
    r = res.retrievers
    k = knobs.top_k(route)
    if route == "local":
        return r.local(query, k), {}
    if route == "community":
        return r.community(query, k, kind), {"level": r.community_level(kind)}
    if route == "dense":
        return r.dense(query, k), {}
    result = r.ppr(query, k, res.fact_filter(knobs))
    return result.evidence, {"seeds": {e: round(w, 6) for e, w in result.seeds.items()},
                             "facts": [f.text for f in result.facts], "kept_facts": [f.text for f in result.kept_facts],
                             "fallback": result.fallback, "filter_error": result.filter_error}


def solve(payload: SolveInput, config: RunnableConfig) -> dict[str, Any]:
    """Rephrase with the answers it depends on, retrieve by route, rerank by dependencies, answer."""
    knobs = AgentConfig.from_runnable_config(config)
    res = resources_for(config)
    write = get_stream_writer()
    record = dict(payload["record"])
    sid = record["id"]
    write({"event": "subquestion_started", "id": sid, "question": record["question"]})
    try:
        deps = payload["dependencies"]
        known = {d["local_id"]: d["answer"] for d in deps if not is_not_found(d["answer"])}
        # An unanswered dependency is described by its own question instead of a missing name.
        unknown = {d["local_id"]: f"(the answer to: {_asked(d)})" for d in deps if is_not_found(d["answer"])}
        query = substitute_references(record["question"], {**unknown, **known}, payload["siblings"])
        # Written references are resolved by substitution; the LLM rewrites only implicit dependencies.
        implicit = query == record["question"]
        if record["rephrase"] and implicit and known and res.chat is not None:
            query = _text(res.chat.invoke([HumanMessage(render_prompt(
                "rephrase", question=query, dependencies=_resolved(deps)))], config)).strip().splitlines()[0] or query
        record["rephrased"] = query if query != record["question"] else None
        if record["rephrased"]:
            write({"event": "subquestion_rephrased", "id": sid, "rephrased": query})

        route = "dense" if knobs.mode == "naive" else record["route"]
        evidence, notes = _retrieve(res, knobs, route, query, record["kind"])
        dependency_texts = [f"{_asked(d)} {d['answer']}" for d in deps if not is_not_found(d["answer"])]
        rerank = knobs.mode == "full" and dependency_texts and evidence
        if rerank:
            alpha, beta = knobs.weights(record["kind"])
            ranked = rerank_by_dependencies(evidence, evidence_vectors(evidence, res.retrievers, res.embedder),
                                            res.embedder.embed(dependency_texts), alpha, beta)
            notes["rerank"] = {"alpha": alpha, "beta": beta}
        else:
            ranked = rerank_by_dependencies(evidence, None, None, 0.0, 0.0)
        write({"event": "subquestion_retrieved", "id": sid, "route": route, "reranked": bool(rerank),
               "evidence": [{"id": e["id"], "kind": e["kind"], "score": e["score"]} for e in ranked]})

        if res.chat is None:
            found = extractive_answer(query, [Evidence.model_validate(e) for e in ranked], res.embedder)
            answer, sources = found.answer, found.evidence_ids
            notes["supporting_sentence"] = found.sentence
        else:
            raw = _text(res.chat.invoke([HumanMessage(render_prompt(
                "sub_answer", question=query, dependencies=_resolved(deps) or "(none)", evidence=_numbered(ranked)))],
                config))
            answer, sources = parse_sub_answer(raw, [Evidence.model_validate(e) for e in ranked[:EVIDENCE_IN_PROMPT]])
        record.update(route=route, evidence=ranked, answer=answer, sources=sources, notes=notes,
                      status="not_found" if is_not_found(answer) else "answered")
    except Exception as exc:  # noqa: BLE001 - one failed branch must not sink the others; the state says why
        record.update(status="failed", answer=NOT_FOUND, error=f"{exc.__class__.__name__}: {exc}")
    write({"event": "subquestion_answered", "id": sid, "answer": record["answer"], "status": record["status"]})
    return {"subquestions": {sid: record}}


# --- final answer -------------------------------------------------------------------------------------

def _citations(res: Resources, records: list[dict]) -> tuple[list[dict], dict[str, int]]:
    """Numbered sources: the evidence the sub-answers rest on first, then the best remaining evidence."""
    chosen: list[dict] = []
    seen: set[str] = set()
    for r in records:
        for e in r["evidence"]:
            if e["id"] in r["sources"] and e["id"] not in seen:
                chosen.append(e)
                seen.add(e["id"])
    for r in records:
        for e in r["evidence"][:3]:
            if e["id"] not in seen:
                chosen.append(e)
                seen.add(e["id"])
    sources = dict(res.index.store.rows("SELECT id, source FROM documents"))
    citations = [{"n": n, "evidence_id": e["id"], "kind": e["kind"], "doc_ids": e["doc_ids"], "titles": e["titles"],
                  "sources": [sources.get(d, "") for d in e["doc_ids"]], "text": e["text"][:300]}
                 for n, e in enumerate(chosen, 1)]
    return citations, {c["evidence_id"]: c["n"] for c in citations}


def answer(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
    """The final answer from the question, the resolved sub-answers and the reranked evidence, with citations."""
    res = resources_for(config)
    records = [state["subquestions"][sid] for sid in state["plan"]]
    citations, number_of = _citations(res, records)
    if res.chat is None:
        depended_on = {d for r in records for d in r["depends_on"]}
        finals = [r for r in records if r["id"] not in depended_on]
        parts = []
        for r in finals:
            marks = "".join(f"[{number_of[s]}]" for s in r["sources"] if s in number_of)
            parts.append(f"{r['answer']} {marks}".strip())
        steps = "; ".join(f"{_asked(r)} -> {r['answer']}" for r in records)
        text = f"{OFFLINE_LABEL} {' / '.join(parts)}" + (f"\n(Steps: {steps})" if len(records) > 1 else "")
        short = " / ".join(r["answer"] for r in finals)
        message = AIMessage(text)
    else:
        subanswers = _resolved(records)
        message = res.chat.invoke([HumanMessage(render_prompt(
            "final_answer", question=state["asked"], history=_history(list(state.get("messages") or [])[:-1]),
            subanswers=subanswers, evidence=_numbered([{"text": c["text"], "titles": c["titles"]} for c in citations],
                                                      limit=len(citations))))], config)
        text = short = _text(message)
    get_stream_writer()({"event": "final_answer", "answer": text})
    return {"answer": text, "short_answer": short, "citations": citations,
            "messages": [AIMessage(text, id=getattr(message, "id", None))]}
