"""The PankRAG workflow's turn-level nodes: plan, review_plan, dispatch (fan-out), fuse, answer.

Each sub-question runs through its own subgraph (agent/subquestion.py), sent by ``dispatch``.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.types import Send, interrupt

from agent import answering
from agent.configuration import AgentConfig
from agent.planning import (parse_plan, plan_event, plan_records, resolve_follow_up, rule_based_plan,
                            single_question_plan, small_talk_reply, validate_plan)
from agent.validation import check_llm_plan, copied_example, unusable_answer
from agent.resources import Resources, resources_for
from agent.state import AgentState, SubQuestionInput
from prompts import render_prompt

DONE = ("answered", "not_found", "failed")
EVIDENCE_IN_PROMPT = 8
RRF_CONSTANT = 2  # rank fusion of short lists (5-10 items): the first ranks count most


def text_of(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def history_of(messages: list[BaseMessage], limit: int = 6) -> str:
    lines = [f"{'user' if isinstance(m, HumanMessage) else 'assistant'}: {text_of(m)[:500]}"
             for m in messages if isinstance(m, (HumanMessage, AIMessage))]
    return "\n".join(lines[-limit:]) or "(none)"


def asked(record: dict) -> str:
    """A sub-question as it was retrieved: rephrased when it was."""
    return record.get("rephrased") or record["question"]


def resolved(records: list[dict]) -> str:
    """Sub-questions with their answers, one "- question -> answer" line each."""
    return "\n".join(f"- {asked(r)} -> {r['answer']}" for r in records)


def numbered(evidence: list[dict], limit: int = EVIDENCE_IN_PROMPT) -> str:
    """Evidence for a prompt: numbered, quoted as data (a document cannot close the quote)."""
    lines = []
    for n, item in enumerate(evidence[:limit], 1):
        source = f" (from {', '.join(item['titles'])})" if item.get("titles") else ""
        lines.append(f"[{n}]{source} {json.dumps(item['text'][:1200], ensure_ascii=False)}")
    return "\n".join(lines) or "(no evidence)"


def read_question(state: dict) -> tuple[str, list[BaseMessage]]:
    """This turn's question, from ``question`` (then also recorded as a user message) or the last user message.

    Returns the question and the messages to append.
    """
    question = (state.get("question") or "").strip()
    if question:
        return question, [HumanMessage(question)]
    messages = state.get("messages") or []
    if messages and isinstance(messages[-1], HumanMessage) and text_of(messages[-1]).strip():
        return text_of(messages[-1]).strip(), []
    raise ValueError("no question: pass {'question': ...} or chat 'messages' ending with a user message")


def knobs_and_resources(config: RunnableConfig) -> tuple[AgentConfig, Resources]:
    return AgentConfig.from_runnable_config(config), resources_for(config)


# --- plan -------------------------------------------------------------------------------------------

def _llm_plan(res: Resources, knobs: AgentConfig, question: str, history: str,
              config: RunnableConfig) -> tuple[list[dict], str, list[str]]:
    """The planner's DAG; an unusable reply falls back to the offline planner, with the reason noted."""
    raw = text_of(res.chat.invoke([HumanMessage(render_prompt(
        "plan", question=question, history=history, max_subquestions=knobs.max_subquestions))], config,
        task="plan"))
    try:
        items, notes = validate_plan(parse_plan(raw), question, knobs.max_subquestions)
        check_llm_plan(items, question)
        return items, "llm", notes
    except ValueError as exc:
        items, notes = rule_based_plan(question, knobs.max_subquestions)
        return items, "fallback", [f"planner reply rejected ({exc}); rule-based plan used"] + notes


def plan(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
    """One globally-aware planning call (or the offline planner) turns the question into a DAG."""
    knobs, res = knobs_and_resources(config)
    question, new_messages = read_question(state)
    messages = list(state.get("messages") or [])
    history = history_of(messages if new_messages else messages[:-1])  # the turns before this question
    turn = int(state.get("turn") or 0) + 1
    notes: list[str] = []
    reply = small_talk_reply(question)
    if reply is not None:
        items, planner = [], "small-talk"
    elif knobs.mode in ("no_planning", "naive"):
        items, planner = single_question_plan(question, "dense" if knobs.mode == "naive" else None), "single"
        notes.append(f"mode {knobs.mode}: the question is the only sub-question")
    elif res.chat is None:
        if state.get("asked") and state.get("short_answer"):  # a follow-up: "she", "there", "and when ...?"
            resolved_question = resolve_follow_up(question, state["asked"], state["short_answer"])
            if resolved_question != question:
                notes.append(f"follow-up read as: {resolved_question}")
                question = resolved_question
        items, plan_notes = rule_based_plan(question, knobs.max_subquestions)
        planner, notes = "rule-based", notes + plan_notes
    else:
        items, planner, notes = _llm_plan(res, knobs, question, history, config)
    records = plan_records(items, turn)
    get_stream_writer()(plan_event(planner, notes, records))
    return {"messages": new_messages, "asked": question, "question": None, "turn": turn, "plan": list(records),
            "planner": planner, "plan_notes": notes, "subquestions": records, "offline": res.offline,
            "answer": reply, "short_answer": reply, "confidence": None, "citations": [], "evidence": [], "notes": {},
            "chosen": {}}


def after_plan(state: AgentState, config: RunnableConfig) -> list[Send] | str:
    """Stop for a review of the plan when the run asks for one, else send out the first sub-questions."""
    if AgentConfig.from_runnable_config(config).review_plan and state["plan"]:
        return "review_plan"
    return dispatch(state)


def _editable(record: dict) -> dict:
    return {"id": record["local_id"], "question": record["question"],
            "depends_on": [d.split(":", 1)[1] for d in record["depends_on"]], "route": record["route"],
            "kind": record["kind"], "rephrase": record["rephrase"], "operation": record.get("operation")}


def review_plan(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
    """Human in the loop: stop with the plan; resume with ``Command(resume=...)``: None or true keeps it,
    an edited sub-question list (or {"sub_questions": [...]}, or its JSON) replaces it, validated as an LLM plan."""
    knobs = AgentConfig.from_runnable_config(config)
    current = [state["subquestions"][sid] for sid in state["plan"]]
    problem = None
    while True:  # an edit that is not a plan is refused with the reason, and asked for again
        edited = interrupt({"question": state["asked"], "sub_questions": [_editable(r) for r in current],
                            "how": "resume with null to keep this plan, or with an edited sub_questions list",
                            "problem": problem})
        if edited is None or edited is True:
            return {"plan_notes": state["plan_notes"] + ["plan reviewed: kept as planned"]}
        try:
            items, notes = validate_plan(parse_plan(edited if isinstance(edited, str) else json.dumps(edited)),
                                         state["asked"], knobs.max_subquestions)
            break
        except ValueError as exc:
            problem = f"the edited plan was refused: {exc}"
    turn = state["turn"]
    records = plan_records(items, turn)
    dropped = {r["id"]: {"status": "dropped"} for r in current if r["id"] not in records}
    get_stream_writer()(plan_event("reviewed", notes, records))
    return {"plan": list(records), "planner": "reviewed", "subquestions": {**dropped, **records},
            "plan_notes": ["plan edited by the user"] + notes}


# --- dispatch ----------------------------------------------------------------------------------------

def _stale(record: dict, records: dict[str, dict]) -> bool:
    """Answered from dependency answers that have changed since (an edited sub-answer, a fork)."""
    used = record.get("used_answers")
    return used is not None and any(records[d].get("answer") != used.get(d) for d in record["depends_on"])


def dispatch(state: AgentState) -> list[Send] | str:
    """Send every sub-question that is pending (or stale) and whose dependencies are settled; fuse when none is left."""
    records = state["subquestions"]
    current = [records[sid] for sid in state["plan"]]
    settled: set[str] = set()
    for _ in current:  # settle in dependency order (plans are acyclic and small)
        for r in current:
            if r["id"] not in settled and r["status"] in DONE and not _stale(r, records) \
                    and all(d in settled for d in r["depends_on"]):
                settled.add(r["id"])
    ready = [r for r in current if r["id"] not in settled and all(d in settled for d in r["depends_on"])]
    if not ready:
        return "fuse"
    siblings = [r["local_id"] for r in current]
    return [Send("solve", SubQuestionInput(record=r, dependencies=[records[d] for d in r["depends_on"]],
                                           siblings=siblings)) for r in ready]


def schedule(state: AgentState) -> dict[str, Any]:
    """A join point: runs once after every wave of sub-questions, so dispatch sees all their answers."""
    return {}


# --- the final evidence ranking ------------------------------------------------------------------------

def fuse_rankings(lists: list[list[dict]]) -> list[dict]:
    """Reciprocal rank fusion: an item's score adds 1 / (c + rank) over the lists it appears in."""
    scores: dict[str, float] = {}
    items: dict[str, dict] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, 1):
            scores[item["id"]] = scores.get(item["id"], 0.0) + 1.0 / (RRF_CONSTANT + rank)
            items.setdefault(item["id"], item)
    best = max(scores.values(), default=1.0)
    return [{**items[i], "fused_score": round(s / best, 6)} for i, s in sorted(scores.items(), key=lambda x: -x[1])]


def chain_first(evidence: list[dict], records: list[dict]) -> list[dict]:
    """The passages the best-scoring chain's answers were read from first, in plan order, then the rest.

    Rank fusion rewards what many sub-questions retrieve, but the answer rests on the passage each hop read
    its answer from: for a right two-hop chain those are its two supporting passages, for a comparison one
    passage per compared entity. A summary's sources are not a chain, so only read candidates count.
    """
    read = [s for r in best_chain(records) if r.get("candidates") for s in r["sources"]]
    rank = {s: n for n, s in enumerate(dict.fromkeys(read))}
    return sorted(evidence, key=lambda e: rank.get(e["id"], len(rank)))  # stable: the rest keep fused order


def fuse(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
    """The final ranking: every sub-question's evidence fused with retrieval on the whole question, so planning
    never loses what a single retrieval finds, and the passages the best chain's answers rest on first."""
    knobs, res = knobs_and_resources(config)
    records = [state["subquestions"][sid] for sid in state["plan"]]
    lists = [r["evidence"] for r in records if r["evidence"]]
    whole_is_planned = len(records) == 1 and records[0]["question"] == state["asked"]
    if records and not whole_is_planned and knobs.mode != "naive":
        route = knobs.route_policy if knobs.route_policy != "plan" else "ppr"
        if all(r["kind"] == "abstract" for r in records):
            route = "community"
        from dataclasses import replace

        from agent.subquestion import retrieve_for

        # No LLM fact filter here: the whole question is a safety net for recall, not worth another model call.
        whole, _ = retrieve_for(res, replace(knobs, fact_filter=False), route, state["asked"], "specific")
        lists.insert(0, [{**e.model_dump(), "retrieval_score": e.score} for e in whole])
    evidence = chain_first(fuse_rankings(lists), records)
    if not records:  # small talk: nothing was asked of the documents
        return {"evidence": evidence}
    get_stream_writer()({"event": "evidence_fused", "count": len(evidence),
                         "evidence": [{"id": e["id"], "titles": e["titles"], "score": e["fused_score"]}
                                      for e in evidence[:10]]})
    return {"evidence": evidence}


# --- final answer -------------------------------------------------------------------------------------

def best_chain(records: list[dict]) -> list[dict]:
    """The records the answer rests on, each with the candidate that the best-scoring chain assumed.

    The final sub-questions' best candidates name the dependency answers they assumed; following those back
    picks, for every earlier sub-question, the candidate its dependents' best chain was built on.
    """
    by_id = {r["id"]: r for r in records}
    depended_on = {d for r in records for d in r["depends_on"]}
    chosen: dict[str, dict] = {}
    stack = [(r["id"], None) for r in records if r["id"] not in depended_on]
    while stack:
        sid, wanted = stack.pop()
        record = by_id[sid]
        candidates = record.get("candidates") or []
        pick = next((c for c in candidates if wanted is not None and c["answer"] == wanted), None)
        pick = pick or (candidates[0] if candidates else None)
        chosen[sid] = {**record, "answer": pick["answer"], "confidence": pick["confidence"],
                       "supporting_sentence": pick.get("sentence"),
                       "sources": [pick["evidence_id"]] if pick.get("evidence_id") else record["sources"]} \
            if pick else record
        for dep in record["depends_on"]:
            if dep not in chosen:
                stack.append((dep, (pick or {}).get("assumes", {}).get(dep)))
    return [chosen.get(r["id"], r) for r in records]


def _citations(res: Resources, records: list[dict], evidence: list[dict], finals: list[dict]
               ) -> tuple[list[dict], dict[str, int]]:
    """Numbered sources: what the final answers rest on, then the other sub-answers', then the best evidence."""
    by_id = {e["id"]: e for r in records for e in r["evidence"]} | {e["id"]: e for e in evidence}
    chosen = list(dict.fromkeys([s for r in finals for s in r["sources"]]
                                + [s for r in records for s in r["sources"]]
                                + [e["id"] for e in evidence[:3]]))
    sources = res.index.store.document_sources()
    citations = [{"n": n, "evidence_id": e["id"], "kind": e["kind"], "doc_ids": e["doc_ids"], "titles": e["titles"],
                  "sources": [sources.get(d, "") for d in e["doc_ids"]], "text": e["text"][:600]}
                 for n, e in enumerate((by_id[i] for i in chosen if i in by_id), 1)]
    return citations, {c["evidence_id"]: c["n"] for c in citations}


def _marks(record: dict, number_of: dict[str, int]) -> str:
    return "".join(f"[{number_of[s]}]" for s in record["sources"] if s in number_of)


def extractive_text(finals: list[dict], number_of: dict[str, int]) -> str:
    """Offline: each final answer with the sentence it rests on and its citation, or what was not found."""
    parts = []
    for r in finals:
        if answering.is_not_found(r["answer"]):
            parts.append(f"Not found: the documents do not answer \"{asked(r)}\".")
            continue
        sentence = (r.get("supporting_sentence") or "").strip()
        support = f" — \"{sentence}\"" if sentence and sentence != r["answer"] else ""
        parts.append(f"{r['answer']}{support} {_marks(r, number_of)}".strip())
    return "\n".join(parts)


def answer(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
    """The final answer from the question, the resolved sub-answers and the fused evidence, with citations."""
    res = resources_for(config)
    if state.get("planner") == "small-talk":
        return {"messages": [AIMessage(state["answer"])], "confidence": 1.0}
    records = best_chain([state["subquestions"][sid] for sid in state["plan"]])
    depended_on = {d for r in records for d in r["depends_on"]}
    finals = [r for r in records if r["id"] not in depended_on]
    citations, number_of = _citations(res, records, state.get("evidence") or [], finals)
    found = [r for r in finals if not answering.is_not_found(r["answer"])]
    confidence = round(min((r.get("confidence") or 0.0) for r in found), 3) if found else 0.0
    short = " / ".join(r["answer"] for r in finals) if found else answering.NOT_FOUND
    notes: dict[str, str] = {}
    text = extractive_text(finals, number_of)
    message = None
    if res.chat is not None:
        variables = {"question": state["asked"], "history": history_of(list(state.get("messages") or [])[:-1]),
                     "subanswers": resolved(records),
                     "evidence": numbered([{"text": c["text"], "titles": c["titles"]} for c in citations],
                                          limit=len(citations))}
        message = res.chat.invoke([HumanMessage(render_prompt("final_answer", **variables))], config,
                                  task="final_answer")
        problem = unusable_answer(text_of(message)) or copied_example(
            text_of(message), "final_answer", "\n".join(variables.values()))
        if problem:
            notes["final_answer"] = f"model answer rejected ({problem}); extractive answer shown"
        else:
            text = short = text_of(message).strip()
    get_stream_writer()({"event": "final_answer", "answer": text, "confidence": confidence, "notes": notes,
                         "citations": [c["n"] for c in citations]})
    return {"answer": text, "short_answer": short, "confidence": confidence, "citations": citations, "notes": notes,
            "chosen": {r["id"]: r["answer"] for r in records if r["answer"] != state["subquestions"][r["id"]]["answer"]},
            "messages": [AIMessage(text, id=getattr(message, "id", None))]}


