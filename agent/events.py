"""The workflow's streamed events as readable text (the CLI, the chat API's steps, the library).

Nodes emit dict events on LangGraph's ``custom`` stream: plan, subquestion_started, _rephrased, _retrieved,
_reranked, _answered, evidence_fused, facts_retrieved, facts_filtered, passages_ranked, final_answer.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: object) -> str:
    """Text safe for a terminal or a log: control characters (escape sequences, bells, NUL) shown as \\xNN."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", str(text))


def _confidence(event: dict) -> str:
    value = event.get("confidence")
    return f" (confidence {value:.2f})" if isinstance(value, (int, float)) else ""


def describe_event(event: dict) -> str | None:
    """One streamed step as readable lines, or None for events not shown."""
    kind = event.get("event")
    text: str | None = None
    if kind == "plan" and not event["subquestions"]:  # small talk: the reply says it all
        return None
    if kind == "plan":
        lines = [f"Plan ({event['planner']}):"]
        for s in event["subquestions"]:
            after = f" (after {', '.join(s['depends_on'])})" if s["depends_on"] else ""
            lines.append(f"- {s['id']} [{s['route']}, {s['kind']}]: {s['question']}{after}")
        fallback = [f"  fallback: {event['fallback']}"] if event.get("fallback") else []
        text = "\n".join(lines + fallback + [f"  note: {n}" for n in event["notes"]]) + "\n"
    elif kind == "subquestion_rephrased":
        alternatives = event.get("alternatives") or []
        text = f"{event['id']} rephrased: {event['rephrased']}\n" + "".join(
            f"{event['id']}   also tried: {a}\n" for a in alternatives)
    elif kind == "subquestion_retrieved":
        text = f"{event['id']} retrieved {len(event['evidence'])} items by {event['route']}\n"
    elif kind == "subquestion_reranked":
        text = f"{event['id']} reranked by its dependencies (alpha {event['alpha']:.2f}, beta {event['beta']:.2f})\n"
    elif kind == "subquestion_answered":
        others = [c["answer"] for c in event.get("candidates", [])[1:]]
        text = (f"{event['id']} answer: {event['answer']}{_confidence(event)}"
                + (f"  (alternatives: {', '.join(others)})" if others else "") + "\n")
    elif kind == "evidence_fused":
        text = f"evidence: {event['count']} items from the sub-questions and the whole question\n"
    elif kind == "facts_retrieved":
        text = "facts retrieved:\n" + "".join(f"  {n}. {f}\n" for n, f in enumerate(event["facts"], 1))
    elif kind == "facts_filtered":
        text = f"facts kept ({event['filter']}):\n" + "".join(f"  - {f}\n" for f in event["kept"])
    elif kind == "final_answer":  # the answer itself is shown by its reader; here only the fallbacks it took
        text = ""
    elif kind == "passages_ranked":
        text = (f"passages ranked by Personalized PageRank from {len(event['seeds'])} seed entities"
                if not event.get("fallback") else f"passages: {event['fallback']}") + "\n"
    if text is None:
        return None
    notes = event.get("notes")
    if isinstance(notes, dict):  # fallbacks taken by this step
        text += "".join(f"  fallback: {n}\n" for n in notes.values())
    return printable(text) if text else None
