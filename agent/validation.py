"""Checks on what a language model returned, before the workflow trusts it.

A rejected reply is never an error for the user: the caller falls back (offline planner, extractive
answer) and records the reason, which ask, inspect and the chat API show.
"""

from __future__ import annotations

import re
from functools import cache

from prompts import load_prompt

_WORD = re.compile(r"[a-z0-9]+")
_STOP = set(
    """a an the of in on at to for by with from and or as is was are were be been being did does do
has have had what which who whom whose where when why how that this these those it its their there
name named sub question questions answer""".split()
)
_CITATION = re.compile(r"\[\s*\d+(?:\s*[,-]\s*\d+)*\s*\]")
MAX_ANSWER_CHARS = 4000


def content_stems(text: str) -> set[str]:
    """Content words cut to 5 letters, so "founder" meets "founded"."""
    return {w[:5] for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def check_llm_plan(items: list[dict], question: str) -> None:
    """Raise ValueError when a plan echoes the prompt's template instead of decomposing the question."""
    wanted = content_stems(question)
    for item in items:
        text = item["question"]
        if "..." in text or "…" in text or not _WORD.search(text):
            raise ValueError(f"{item['id']} is placeholder text: {text[:60]!r}")
        if wanted and not content_stems(text) & wanted:
            raise ValueError(f"{item['id']} shares no word with the question: {text[:60]!r}")


def unusable_answer(text: str) -> str | None:
    """Why a model's answer cannot be shown as one, or None when it can."""
    stripped = (text or "").strip()
    if not stripped:
        return "empty answer"
    if len(stripped) > MAX_ANSWER_CHARS:
        return f"answer of {len(stripped):,} characters"
    if stripped.lower().startswith(("<!doctype", "<html")):
        return "an HTML page, not an answer"
    if not _WORD.search(_CITATION.sub("", stripped).lower()):
        return "only a citation, no answer"
    return None


_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
_NOT_NAMES = {"Example", "Evidence", "Question", "Answer", "For", "She", "He", "They"}


@cache
def example_names(prompt: str) -> frozenset[str]:
    """The capitalised words of a prompt's worked example (its paragraphs that start with "Example"): names
    made up for the prompt, which a small model copies into its reply ("born in Lindau", seen from a 0.5B)."""
    names: set[str] = set()
    for paragraph in re.split(r"\n\s*\n", load_prompt(prompt).template):
        if paragraph.lstrip().startswith("Example"):
            names |= {w for w in _NAME.findall(paragraph) if w.lower() not in _STOP and w not in _NOT_NAMES}
    return frozenset(names)


def copied_example(text: str, prompt: str, context: str) -> str | None:
    """Why an answer is a copy of the prompt's example: it names what the example names and the context
    (question, evidence, sub-answers, history) does not; None when it is not."""
    copied = sorted(
        n for n in example_names(prompt) if re.search(rf"\b{n}\b", text) and not re.search(rf"\b{n}\b", context, re.I)
    )
    return f"it names {', '.join(copied)} from the prompt's example, not from the evidence" if copied else None
