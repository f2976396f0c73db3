"""The entity review flow: a person decides the proposed merges (graph_store/resolution.py) one by one.

load -> review (one interrupt per proposal, looping until each has a verdict) -> record. Each verdict is a step
of its own, so the verdicts so far are in the checkpointed state (a server restarted between two questions loses
none); the decisions are recorded together at the end, in one ``decide`` (one rebuild of the derived state).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agent.context import ReviewContext
from agent.state import ReviewState
from graph_store.errors import InputError
from graph_store.store import Decision

VERDICTS = {"merge": "merge", "accept": "merge", "reject": "reject", "skip": "skip"}
HOW = 'resume with "merge", "reject" or "skip", or {"verdict": ..., "why": ...}'


def load(state: ReviewState, runtime: Runtime[ReviewContext]) -> dict[str, Any]:
    """The open proposals to review, best first, each with what a person needs to judge it."""
    limit, min_score = state.get("limit"), state.get("min_score", 0.0)
    if (limit is not None and (not isinstance(limit, int) or limit < 1)) or not isinstance(min_score, (int, float)):
        raise InputError(
            f"entity review takes a limit of 1 or more and a numeric min_score, not {limit!r}, {min_score!r}"
        )
    store = runtime.context.reviewing().store
    proposals = [p for p in store.proposals() if p.score >= min_score][:limit]
    types = {e.id: e.type for e in store.entities_by_id(sorted({i for p in proposals for i in (p.a_id, p.b_id)}))}
    shown = [
        {
            "a": p.a_name,
            "b": p.b_name,
            "score": round(p.score, 3),
            "why": json.loads(p.reasons),
            "types": {"a": types.get(p.a_id, ""), "b": types.get(p.b_id, "")},
            "evidence": json.loads(p.evidence),
        }
        for p in proposals
    ]
    return {"proposals": shown, "verdicts": [], "problem": None}


def review(state: ReviewState) -> dict[str, Any]:
    """Ask about the next proposal; a resume that is not a verdict is asked again, with the reason."""
    done, proposals = state["verdicts"], state["proposals"]
    proposal = proposals[len(done)]
    answer = interrupt(
        {"proposal": f"{len(done) + 1} of {len(proposals)}", **proposal, "how": HOW, "problem": state.get("problem")}
    )
    verdict, why = _verdict(answer)
    if verdict is None:
        return {"problem": f"not a verdict: {json.dumps(answer, default=str)[:200]}; {HOW}"}
    return {
        "verdicts": [*done, {"a": proposal["a"], "b": proposal["b"], "verdict": verdict, "why": why}],
        "problem": None,
    }


def _verdict(answer: Any) -> tuple[str | None, str]:
    """(merge | reject | skip, why) from a plain string or {"verdict": ..., "why": ...}; (None, "") otherwise."""
    why: Any = ""
    if isinstance(answer, dict):
        answer, why = answer.get("verdict"), answer.get("why") or ""
    if not isinstance(answer, str) or not isinstance(why, str):
        return None, ""
    return VERDICTS.get(answer.strip().lower()), why


def next_step(state: ReviewState) -> str:
    return "review" if len(state["verdicts"]) < len(state["proposals"]) else "record"


def record(state: ReviewState, runtime: Runtime[ReviewContext]) -> dict[str, Any]:
    """All the verdicts but the skips, as decisions in one call (one rebuild)."""
    who = state.get("who", "")
    decisions = [
        Decision(v["verdict"], v["a"], v["b"], who, v["why"] or "review")
        for v in state["verdicts"]
        if v["verdict"] != "skip"
    ]
    counts = {v: sum(d["verdict"] == v for d in state["verdicts"]) for v in ("merge", "reject", "skip")}
    tally = f"{counts['merge']} merged, {counts['reject']} rejected, {counts['skip']} skipped"
    if not state["proposals"]:
        floor = state.get("min_score")
        return {
            "decisions": [],
            "summary": "no open proposal to review" + (f" scoring {floor} or more" if floor else ""),
        }
    if not decisions:
        return {"decisions": [], "summary": f"nothing recorded: {tally}"}
    try:
        stored, built = runtime.context.reviewing().decide(decisions)
    except InputError as exc:  # the index changed since the proposals were loaded (another person's decision)
        return {"decisions": [], "summary": f"nothing recorded: {exc}"}
    return {
        "decisions": [dataclasses.asdict(d) for d in stored],
        "summary": f"{len(stored)} decisions recorded ({tally}); rebuilt in {built.seconds:.1f} s",
    }
