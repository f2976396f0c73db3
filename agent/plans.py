"""Plans, whoever made them (a model, the offline planner, a user's edit): parsing a model's plan tolerantly,
validating it into a DAG, references to earlier answers, and the plan's sub-question records.

A plan item: id, question, depends_on, relation (parallel/progress), route (local/community/ppr/dense), kind
(specific/abstract), rephrase (bool), and, on the item that combines others, an ``operation``
(see agent/offline/questions.py).
"""

from __future__ import annotations

import re
from typing import Any

import json_repair

ROUTES = ("local", "community", "ppr", "dense")


KINDS = ("specific", "abstract")


DEFAULT_MAX_SUBQUESTIONS = 6


OPERATIONS = ("compare", "choose", "both", "same", "yes_no", "summarize")


# "#1", "#q2", "[A1.1]", "<A1-1>", "{q3}", "[q3]": references to an earlier sub-question's answer.
REFERENCE = re.compile(
    r"#(?P<hash>[A-Za-z]?\d+(?:[.-]\d+)*)|[\[<{]\s*(?:A|Q|q|a)?(?P<bracket>\d+(?:[.-]\d+)*|q\d+)\s*[\]>}]"
)


_ABSTRACT_CUES = re.compile(
    r"\b(main|major|key|overall|common|recurring)\s+(themes?|topics?|ideas?|trends?|points?|issues?)\b|"
    r"\b(summari[sz]e|overview|in general|across (the|all)|what do .* have in common|how do .* relate)\b",
    re.I,
)


def looks_abstract(question: str) -> bool:
    return bool(_ABSTRACT_CUES.search(question))


def _reference_keys(token: str) -> list[str]:
    token = token.strip()
    bare = token.lstrip("qQaA")
    return [token, f"q{bare}", bare, bare.replace("-", "."), bare.replace(".", "-"), f"q{bare.replace('.', '-')}"]


def resolve_reference(token: str, ids: list[str]) -> str | None:
    """The sub-question id a reference token means: by id first, then "#k" as the k-th sub-question."""
    for key in _reference_keys(token):
        if key in ids:
            return key
    bare = token.lstrip("qQaA")
    if bare.isdigit() and 1 <= int(bare) <= len(ids):
        return ids[int(bare) - 1]
    return None


def references(text: str, ids: list[str]) -> list[str]:
    """Ids referenced in a sub-question's text, in order, without repeats."""
    found = []
    for match in REFERENCE.finditer(text):
        resolved = resolve_reference(match.group("hash") or match.group("bracket"), ids)
        if resolved and resolved not in found:
            found.append(resolved)
    return found


def substitute_references(text: str, answers: dict[str, str], ids: list[str]) -> str:
    """Replace every reference to an answered sub-question with its answer; others stay as written."""

    def replace(match: re.Match) -> str:
        resolved = resolve_reference(match.group("hash") or match.group("bracket"), ids)
        return answers[resolved] if resolved in answers else match.group(0)

    return REFERENCE.sub(replace, text)


def parse_plan(raw: str) -> list[dict[str, Any]]:
    """The sub-question list in an LLM's output (fences, chatter and broken JSON tolerated)."""
    text = (raw or "").strip()
    if not text:
        raise ValueError("empty planner output")
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ValueError(f"no JSON in planner output: {text[:80]!r}")
    data = json_repair.loads(text[start:])
    if isinstance(data, dict):
        data = data.get("sub_questions") or data.get("subquestions") or data.get("plan") or data.get("questions")
    if not isinstance(data, list) or not data:
        raise ValueError("planner output has no sub-question list")
    return [item if isinstance(item, dict) else {"question": str(item)} for item in data]


def _plan_item(item: dict[str, Any], sid: str, text: str, default_route: str, notes: list[str]) -> dict[str, Any]:
    """One raw item with its kind, route and operation checked; its dependencies still as written."""
    kind = str(item.get("kind", "")).lower()
    kind = kind if kind in KINDS else ("abstract" if looks_abstract(text) else "specific")
    route = str(item.get("route", "")).lower()
    if route not in ROUTES:
        route = "community" if kind == "abstract" else default_route
    deps = item.get("depends_on") or item.get("dependencies") or []
    record = {
        "id": sid,
        "question": text,
        "raw_depends_on": deps if isinstance(deps, list) else [deps],
        "route": route,
        "kind": kind,
        "rephrase": bool(item.get("rephrase", item.get("needs_rephrase", False))),
    }
    operation = item.get("operation")
    if isinstance(operation, dict) and operation.get("op") in OPERATIONS:
        record["operation"] = operation
    elif operation is not None:
        notes.append(f"{sid}: dropped an unknown operation {operation!r}")
    return record


def _dependencies(item: dict[str, Any], ids: list[str], notes: list[str]) -> list[str]:
    """An item's dependencies as plan ids: the ones it lists that exist, and the ones its text refers to."""
    deps: list[str] = []
    for dep in item.pop("raw_depends_on"):
        resolved = resolve_reference(str(dep), ids)
        if resolved is None or resolved == item["id"]:
            notes.append(f"{item['id']}: dropped unknown dependency {dep!r}")
        elif resolved not in deps:
            deps.append(resolved)
    for ref in references(item["question"], ids):
        if ref not in deps and ref != item["id"]:
            notes.append(f"{item['id']}: its text refers to {ref}, added as a dependency")
            deps.append(ref)
    return deps


def validate_plan(
    items: list[dict[str, Any]],
    question: str,
    max_subquestions: int = DEFAULT_MAX_SUBQUESTIONS,
    default_route: str = "ppr",
) -> tuple[list[dict[str, Any]], list[str]]:
    """A DAG of sub-questions from raw items, and notes on every repair made.

    Unknown dependencies are dropped, references in the text become dependencies,
    cycles are broken by dropping the edge that closes them, the count is bounded.
    """
    notes: list[str] = []
    plan: list[dict[str, Any]] = []
    for n, item in enumerate(items, 1):
        text = str(item.get("question") or item.get("text") or item.get("sub_question") or "").strip()
        if not text:
            notes.append(f"dropped item {n}: no question text")
            continue
        sid = str(item.get("id") or "").strip() or f"q{n}"
        if sid in {p["id"] for p in plan}:
            notes.append(f"duplicate id {sid!r} renamed to q{n}")
            sid = f"q{n}"
        plan.append(_plan_item(item, sid, text, default_route, notes))
    if len(plan) > max_subquestions:
        notes.append(f"plan cut from {len(plan)} to {max_subquestions} sub-questions")
        plan = plan[:max_subquestions]
    ids = [p["id"] for p in plan]
    for p in plan:
        p["depends_on"] = _dependencies(p, ids, notes)
    _break_cycles(plan, notes)
    for p in plan:
        p["relation"] = "progress" if p["depends_on"] else "parallel"
        p["rephrase"] = bool(p["depends_on"]) and (p["rephrase"] or bool(references(p["question"], ids)))
    if not plan:
        raise ValueError("the plan has no usable sub-question")
    return plan, notes


def _break_cycles(plan: list[dict[str, Any]], notes: list[str]) -> None:
    by_id = {p["id"]: p for p in plan}
    state: dict[str, int] = {}  # 1 = on the DFS path, 2 = done

    def visit(sid: str) -> None:
        state[sid] = 1
        for dep in list(by_id[sid]["depends_on"]):
            if state.get(dep) == 1:
                by_id[sid]["depends_on"].remove(dep)
                notes.append(f"{sid}: dropped dependency on {dep} (it closed a cycle)")
            elif dep not in state:
                visit(dep)
        state[sid] = 2

    for p in plan:
        if p["id"] not in state:
            visit(p["id"])


def single_question_plan(question: str, route: str | None = None) -> list[dict[str, Any]]:
    kind = "abstract" if looks_abstract(question) else "specific"
    return [
        {
            "id": "q1",
            "question": question,
            "depends_on": [],
            "relation": "parallel",
            "route": route or ("community" if kind == "abstract" else "ppr"),
            "kind": kind,
            "rephrase": False,
        }
    ]


def plan_records(items: list[dict], turn: int) -> dict[str, dict]:
    """A plan's items as this turn's sub-question records (ids "<turn>:<local id>"), nothing answered yet."""
    return {
        f"{turn}:{item['id']}": {
            **item,
            "id": f"{turn}:{item['id']}",
            "local_id": item["id"],
            "turn": turn,
            "depends_on": [f"{turn}:{d}" for d in item["depends_on"]],
            "operation": item.get("operation"),
            "rephrased": None,
            "queries": [],
            "status": "pending",
            "evidence": [],
            "answer": None,
            "confidence": None,
            "sources": [],
            "candidates": [],
            "used_answers": None,
            "notes": {},
        }
        for item in items
    }


def plan_event(planner: str, notes: list[str], records: dict[str, dict]) -> dict:
    """The streamed "plan" event: who planned, the notes (a fallback's reason apart) and the sub-questions."""
    fallback = notes[0] if planner == "fallback" and notes else None
    return {
        "event": "plan",
        "planner": planner,
        "notes": notes[1:] if fallback else notes,
        "fallback": fallback,
        "subquestions": [
            {k: r[k] for k in ("id", "question", "depends_on", "relation", "route", "kind", "operation")}
            for r in records.values()
        ],
    }
