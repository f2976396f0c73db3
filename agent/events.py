"""The workflow's streamed events as readable text (the CLI, the chat API's steps, the library).

Nodes emit dict events on LangGraph's ``custom`` stream: plan, subquestion_started, _rephrased, _retrieved,
_reranked, _answered, evidence_fused, facts_retrieved, facts_filtered, passages_ranked, final_answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: object) -> str:
    """Text safe for a terminal or a log: control characters (escape sequences, bells, NUL) shown as \\xNN."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", str(text))


def _confidence(event: dict) -> str:
    value = event.get("confidence")
    return f" (confidence {value:.2f})" if isinstance(value, (int, float)) else ""


def _plan(event: dict) -> str | None:
    if not event["subquestions"]:  # small talk: the reply says it all
        return None
    lines = [f"Plan ({event['planner']}):"]
    for s in event["subquestions"]:
        after = f" (after {', '.join(s['depends_on'])})" if s["depends_on"] else ""
        lines.append(f"- {s['id']} [{s['route']}, {s['kind']}]: {s['question']}{after}")
    fallback = [f"  fallback: {event['fallback']}"] if event.get("fallback") else []
    return "\n".join(lines + fallback + [f"  note: {n}" for n in event["notes"]]) + "\n"


def _rephrased(event: dict) -> str:
    alternatives = event.get("alternatives") or []
    return f"{event['id']} rephrased: {event['rephrased']}\n" + "".join(
        f"{event['id']}   also tried: {a}\n" for a in alternatives
    )


def _answered(event: dict) -> str:
    others = [c["answer"] for c in event.get("candidates", [])[1:]]
    return (
        f"{event['id']} answer: {event['answer']}{_confidence(event)}"
        + (f"  (alternatives: {', '.join(others)})" if others else "")
        + "\n"
    )


def _ranked(event: dict) -> str:
    return (
        f"passages ranked by Personalized PageRank from {len(event['seeds'])} seed entities"
        if not event.get("fallback")
        else f"passages: {event['fallback']}"
    ) + "\n"


DESCRIBE: dict[str, Callable[[dict], str | None]] = {
    "plan": _plan,
    "subquestion_rephrased": _rephrased,
    "subquestion_retrieved": lambda e: f"{e['id']} retrieved {len(e['evidence'])} items by {e['route']}\n",
    "subquestion_reranked": lambda e: (
        f"{e['id']} reranked by its dependencies (alpha {e['alpha']:.2f}, beta {e['beta']:.2f})\n"
    ),
    "subquestion_answered": _answered,
    "evidence_fused": lambda e: f"evidence: {e['count']} items from the sub-questions and the whole question\n",
    "facts_retrieved": lambda e: "facts retrieved:\n" + "".join(f"  {n}. {f}\n" for n, f in enumerate(e["facts"], 1)),
    "facts_filtered": lambda e: f"facts kept ({e['filter']}):\n" + "".join(f"  - {f}\n" for f in e["kept"]),
    "final_answer": lambda e: "",  # the answer itself is shown by its reader; here only the fallbacks it took
    "passages_ranked": _ranked,
}


def describe_event(event: dict) -> str | None:
    """One streamed step as readable lines, or None for events not shown."""
    describe = DESCRIBE.get(event.get("event") or "")
    text = describe(event) if describe else None
    if text is None:
        return None
    notes = event.get("notes")
    if isinstance(notes, dict):  # fallbacks taken by this step
        text += "".join(f"  fallback: {n}\n" for n in notes.values())
    return printable(text) if text else None
