"""The PankRAG workflow's turn-level nodes: plan, review_plan, dispatch (fan-out), fuse, answer.

Each sub-question runs through its own subgraph (agent/subquestion.py), sent by ``dispatch``. Nodes read the
run's knobs and resources from the runtime's context (agent/context.py).
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import Send, interrupt

from agent import answers
from agent.context import Context
from agent.offline.planner import resolve_follow_up, rule_based_plan, small_talk_reply
from agent.plans import parse_plan, plan_event, plan_records, single_question_plan, validate_plan
from agent.prompting import history_of, numbered, read_question, resolved, text_of
from agent.records import NOT_FOUND, EvidenceItem, SubQuestionRecord, evidence_item, is_not_found
from agent.resources import Resources
from agent.state import AgentState, SubQuestionInput
from agent.validation import check_llm_plan, says_not_found
from prompts import render_prompt

DONE = ("answered", "not_found", "failed")
RRF_CONSTANT = 2  # rank fusion of short lists (5-10 items): the first ranks count most


# --- plan -------------------------------------------------------------------------------------------


def _llm_plan(
    res: Resources, ctx: Context, question: str, history: str, config: RunnableConfig
) -> tuple[list[dict], str, list[str]]:
    """The planner's DAG; an unusable reply falls back to the offline planner, with the reason noted."""
    model = res.model_for("plan")
    assert model is not None
    raw = text_of(
        model.invoke(
            [
                HumanMessage(
                    render_prompt("plan", question=question, history=history, max_subquestions=ctx.max_subquestions)
                )
            ],
            config,
            task="plan",
        )
    )
    try:
        items, notes = validate_plan(parse_plan(raw), question, ctx.max_subquestions)
        check_llm_plan(items, question)
        return items, "llm", notes
    except ValueError as exc:
        items, notes = rule_based_plan(question, ctx.max_subquestions)
        return items, "fallback", [f"planner reply rejected ({exc}); rule-based plan used"] + notes


def plan(state: AgentState, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    """One globally-aware planning call (or the offline planner) turns the question into a DAG."""
    ctx = runtime.context
    res = ctx.answering_from()
    question, new_messages = read_question(state)
    messages = list(state.get("messages") or [])
    history = history_of(messages if new_messages else messages[:-1])  # the turns before this question
    turn = int(state.get("turn") or 0) + 1
    notes: list[str] = []
    reply = small_talk_reply(question)
    if reply is not None:
        items, planner = [], "small-talk"
    elif ctx.mode in ("no_planning", "naive"):
        items, planner = single_question_plan(question, "dense" if ctx.mode == "naive" else None), "single"
        notes.append(f"mode {ctx.mode}: the question is the only sub-question")
    elif res.model_for("plan") is None:
        if state.get("asked") and state.get("short_answer"):  # a follow-up: "she", "there", "and when ...?"
            resolved_question = resolve_follow_up(question, state["asked"], state["short_answer"])
            if resolved_question != question:
                notes.append(f"follow-up read as: {resolved_question}")
                question = resolved_question
        items, plan_notes = rule_based_plan(question, ctx.max_subquestions)
        planner, notes = "rule-based", notes + plan_notes
    else:
        items, planner, notes = _llm_plan(res, ctx, question, history, config)
    records = plan_records(items, turn)
    runtime.stream_writer(plan_event(planner, notes, records))
    return {
        "messages": new_messages,
        "asked": question,
        "question": None,
        "turn": turn,
        "plan": list(records),
        "planner": planner,
        "plan_notes": notes,
        "subquestions": records,
        "offline": res.offline,
        "answer": reply,
        "short_answer": reply,
        "confidence": None,
        "citations": [],
        "evidence": [],
        "notes": {},
        "chosen": {},
        "stepwise": bool(ctx.pause_before),
    }


def after_plan(state: AgentState, runtime: Runtime[Context]) -> list[Send] | str:
    """Stop for a review of the plan when the run asks for one, else send out the first sub-questions."""
    if runtime.context.review_plan and state["plan"]:
        return "review_plan"
    return dispatch(state)


def _editable(record: SubQuestionRecord) -> dict:
    return {
        "id": record["local_id"],
        "question": record["question"],
        "depends_on": [d.split(":", 1)[1] for d in record["depends_on"]],
        "route": record["route"],
        "kind": record["kind"],
        "rephrase": record["rephrase"],
        "operation": record.get("operation"),
    }


def review_plan(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Human in the loop: stop with the plan; resume with ``Command(resume=...)``: None or true keeps it,
    an edited sub-question list (or {"sub_questions": [...]}, or its JSON) replaces it, validated as an LLM plan."""
    current = [state["subquestions"][sid] for sid in state["plan"]]
    problem = None
    while True:  # an edit that is not a plan is refused with the reason, and asked for again
        edited = interrupt(
            {
                "question": state["asked"],
                "sub_questions": [_editable(r) for r in current],
                "how": "resume with null to keep this plan, or with an edited sub_questions list",
                "problem": problem,
            }
        )
        if edited is None or edited is True:
            return {"plan_notes": state["plan_notes"] + ["plan reviewed: kept as planned"]}
        try:
            items, notes = validate_plan(
                parse_plan(edited if isinstance(edited, str) else json.dumps(edited)),
                state["asked"],
                runtime.context.max_subquestions,
            )
            break
        except ValueError as exc:
            problem = f"the edited plan was refused: {exc}"
    records = plan_records(items, state["turn"])
    dropped = {r["id"]: {"status": "dropped"} for r in current if r["id"] not in records}
    runtime.stream_writer(plan_event("reviewed", notes, records))
    return {
        "plan": list(records),
        "planner": "reviewed",
        "subquestions": {**dropped, **records},
        "plan_notes": ["plan edited by the user"] + notes,
    }


# --- dispatch ----------------------------------------------------------------------------------------


def _stale(record: SubQuestionRecord, records: dict[str, SubQuestionRecord]) -> bool:
    """Answered from dependency answers that have changed since (an edited sub-answer, a fork)."""
    used = record.get("used_answers")
    return used is not None and any(records[d].get("answer") != used.get(d) for d in record["depends_on"])


def dispatch(state: AgentState) -> list[Send] | str:
    """Send every sub-question that is pending (or stale) and whose dependencies are settled; fuse when none is left.

    A run that pauses before sub-question steps (a debugger's) sends them one at a time: two branches paused at once
    would be two interrupts, which one plain resume (Studio's) cannot answer. The plan says so in the state (an
    edge has no runtime when a state update, ``update_state(..., as_node=...)``, routes it).
    """
    records = state["subquestions"]
    current = [records[sid] for sid in state["plan"]]
    settled: set[str] = set()
    for _ in current:  # settle in dependency order (plans are acyclic and small)
        for r in current:
            if (
                r["id"] not in settled
                and r["status"] in DONE
                and not _stale(r, records)
                and all(d in settled for d in r["depends_on"])
            ):
                settled.add(r["id"])
    ready = [r for r in current if r["id"] not in settled and all(d in settled for d in r["depends_on"])]
    if not ready:
        return "fuse"
    siblings = [r["local_id"] for r in current]
    if state.get("stepwise"):
        ready = ready[:1]
    return [
        Send("solve", SubQuestionInput(record=r, dependencies=[records[d] for d in r["depends_on"]], siblings=siblings))
        for r in ready
    ]


def schedule(state: AgentState) -> dict[str, Any]:
    """A join point: runs once after every wave of sub-questions, so dispatch sees all their answers."""
    return {}


# --- the final evidence ranking ------------------------------------------------------------------------


def fuse_rankings(lists: list[list[EvidenceItem]]) -> list[EvidenceItem]:
    """Reciprocal rank fusion: an item's score adds 1 / (c + rank) over the lists it appears in."""
    scores: dict[str, float] = {}
    items: dict[str, EvidenceItem] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, 1):
            scores[item["id"]] = scores.get(item["id"], 0.0) + 1.0 / (RRF_CONSTANT + rank)
            items.setdefault(item["id"], item)
    best = max(scores.values(), default=1.0)
    return [{**items[i], "fused_score": round(s / best, 6)} for i, s in sorted(scores.items(), key=lambda x: -x[1])]


def chain_first(evidence: list[EvidenceItem], records: list[SubQuestionRecord]) -> list[EvidenceItem]:
    """The passages the best-scoring chain's answers were read from first, in plan order, then the rest.

    Rank fusion rewards what many sub-questions retrieve, but the answer rests on the passage each hop read
    its answer from: for a right two-hop chain those are its two supporting passages, for a comparison one
    passage per compared entity. A summary's sources are not a chain, so only read candidates count.
    """
    read = [s for r in best_chain(records) if r.get("candidates") for s in r["sources"]]
    rank = {s: n for n, s in enumerate(dict.fromkeys(read))}
    return sorted(evidence, key=lambda e: rank.get(e["id"], len(rank)))  # stable: the rest keep fused order


def fuse(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The final ranking: every sub-question's evidence fused with retrieval on the whole question, so planning
    never loses what a single retrieval finds, and the passages the best chain's answers rest on first."""
    ctx = runtime.context
    res = ctx.answering_from()
    records = [state["subquestions"][sid] for sid in state["plan"]]
    lists = [r["evidence"] for r in records if r["evidence"]]
    whole_is_planned = len(records) == 1 and records[0]["question"] == state["asked"]
    if records and not whole_is_planned and ctx.mode != "naive":
        route = ctx.route_policy if ctx.route_policy != "plan" else "ppr"
        if all(r["kind"] == "abstract" for r in records):
            route = "community"
        # No LLM fact filter here: the whole question is a safety net for recall, not worth another model call.
        whole, _ = res.retrieve(route, state["asked"], "specific", ctx.top_k(route), fact_filter=False)
        lists.insert(0, [evidence_item(e, retrieval_score=e.score) for e in whole])
    evidence = chain_first(fuse_rankings(lists), records)
    if not records:  # small talk: nothing was asked of the documents
        return {"evidence": evidence}
    runtime.stream_writer(
        {
            "event": "evidence_fused",
            "count": len(evidence),
            "evidence": [{"id": e["id"], "titles": e["titles"], "score": e["fused_score"]} for e in evidence[:10]],
        }
    )
    return {"evidence": evidence}


# --- final answer -------------------------------------------------------------------------------------


def best_chain(records: list[SubQuestionRecord]) -> list[SubQuestionRecord]:
    """The records the answer rests on, each with the candidate that the best-scoring chain assumed.

    The final sub-questions' best candidates name the dependency answers they assumed; following those back
    picks, for every earlier sub-question, the candidate its dependents' best chain was built on.
    """
    by_id = {r["id"]: r for r in records}
    depended_on = {d for r in records for d in r["depends_on"]}
    chosen: dict[str, SubQuestionRecord] = {}
    stack: list[tuple[str, str | None]] = [(r["id"], None) for r in records if r["id"] not in depended_on]
    while stack:
        sid, wanted = stack.pop()
        record = by_id[sid]
        candidates = record.get("candidates") or []
        pick = next((c for c in candidates if wanted is not None and c["answer"] == wanted), None)
        pick = pick or (candidates[0] if candidates else None)
        if pick:
            read_from = pick.get("evidence_id")
            chosen[sid] = {
                **record,
                "answer": pick["answer"],
                "confidence": pick["confidence"],
                "supporting_sentence": pick.get("sentence"),
                "sources": [read_from] if read_from else record["sources"],
            }
        else:
            chosen[sid] = record
        for dep in record["depends_on"]:
            if dep not in chosen:
                stack.append((dep, (pick or {}).get("assumes", {}).get(dep)))
    return [chosen.get(r["id"], r) for r in records]


def _cited_evidence(
    records: list[SubQuestionRecord], evidence: list[EvidenceItem], finals: list[SubQuestionRecord]
) -> list[EvidenceItem]:
    """What the final answers rest on, then the other sub-answers' sources, then the best evidence."""
    by_id = {e["id"]: e for r in records for e in r["evidence"]} | {e["id"]: e for e in evidence}
    chosen = list(
        dict.fromkeys(
            [s for r in finals for s in r["sources"]]
            + [s for r in records for s in r["sources"]]
            + [e["id"] for e in evidence[:3]]
        )
    )
    return [by_id[i] for i in chosen if i in by_id]


def answer(state: AgentState, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    """The final answer from the question, the resolved sub-answers and the fused evidence, with citations."""
    res = runtime.context.answering_from()
    if state.get("planner") == "small-talk":
        return {"messages": [AIMessage(state["answer"])], "confidence": 1.0}
    records = best_chain([state["subquestions"][sid] for sid in state["plan"]])
    depended_on = {d for r in records for d in r["depends_on"]}
    finals = [r for r in records if r["id"] not in depended_on]
    cited = answers.citations(res, _cited_evidence(records, state.get("evidence") or [], finals))
    number_of = {c["evidence_id"]: c["n"] for c in cited}
    found = [r for r in finals if not is_not_found(r["answer"])]
    confidence = round(min((r.get("confidence") or 0.0) for r in found), 3) if found else 0.0
    short = " / ".join(r["answer"] or "" for r in finals) if found else NOT_FOUND
    notes: dict[str, str] = {}
    text = answers.extractive_text(finals, number_of)
    message = None
    if res.model_for("answer") is not None:
        variables = {
            "question": state["asked"],
            "history": history_of(list(state.get("messages") or [])[:-1]),
            "subanswers": resolved(records),
            "evidence": numbered([{"text": c["text"], "titles": c["titles"]} for c in cited], limit=len(cited)),
        }
        message, problem = answers.model_answer(res, "final_answer", variables, config)
        if problem:
            notes["final_answer"] = f"model answer rejected ({problem}); extractive answer shown"
        elif says_not_found(text_of(message)):  # its own words for "not found": it is not found, however sure
            text, short, confidence = text_of(message).strip(), NOT_FOUND, 0.0
        else:
            short = answers.short_of(text_of(message))
            text = answers.with_marks(text_of(message).strip(), finals, number_of)
    update = answers.final_update(
        runtime.stream_writer, text=text, short=short, confidence=confidence, cited=cited, notes=notes, message=message
    )
    update["extractive"] = message is None or "final_answer" in notes  # no model wrote it, or its answer was rejected
    update["chosen"] = {
        r["id"]: r["answer"] for r in records if r["answer"] != state["subquestions"][r["id"]]["answer"]
    }
    return update
