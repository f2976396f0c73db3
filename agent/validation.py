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


def _normalised(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


# "What is the name of Corvane Robotics?": a hop that asks for a name the question already gives
_NAME_HOP = re.compile(
    r"^\s*(?:what|which) (?:is|was) the (?:full |official |real )?name of (?P<thing>.+?)\s*\??\s*$", re.I
)


def check_llm_plan(items: list[dict], question: str) -> None:
    """Raise ValueError when a plan echoes the prompt's template instead of decomposing the question, repeats a
    sub-question, asks the whole question as one step of several, or asks for a name the question gives."""
    wanted = content_stems(question)
    seen: dict[str, str] = {}
    for item in items:
        text = item["question"]
        if "..." in text or "…" in text or not _WORD.search(text):
            raise ValueError(f"{item['id']} is placeholder text: {text[:60]!r}")
        if wanted and not content_stems(text) & wanted:
            raise ValueError(f"{item['id']} shares no word with the question: {text[:60]!r}")
        same = seen.setdefault(_normalised(text), item["id"])
        if same != item["id"]:
            raise ValueError(f"{item['id']} repeats {same}: {text[:60]!r}")
        if len(items) > 1 and _normalised(text) == _normalised(question):
            raise ValueError(f"{item['id']} is the whole question, in a plan of {len(items)} steps")
        hop = _NAME_HOP.match(text)
        if hop and _normalised(hop.group("thing")) in _normalised(question):
            raise ValueError(f"{item['id']} asks for a name the question already gives: {text[:60]!r}")


def repeats_question(answer: str, question: str) -> str | None:
    """Why an answer only restates its question (nothing in it that the question does not say), or None."""
    said = content_stems(_CITATION.sub("", answer))
    if said and not said - content_stems(question):
        return "it repeats the question instead of answering it"
    return None


def offers_choice(question: str) -> bool:
    """The question names its possible answers ("A or B", "both", "the same")."""
    return bool(re.search(r"\b(?:or|both|same|either|neither)\b", question, re.I))


def repeats_subject(answer: str, question: str) -> str | None:
    """Why a sub-answer is only a name its question holds ("Who founded Corvane Robotics?" -> "Corvane
    Robotics"), or None; a question that offers a choice is answered by one of its names."""
    said = _normalised(_CITATION.sub("", answer))
    if said and not offers_choice(question) and f" {said} " in f" {_normalised(question)} ":
        return f"it answers with {answer.strip()!r}, which the question itself names"
    return None


def names_an_option(answer: str, options: list[str]) -> str | None:
    """Why an answer to "Which is older, A or B?" names neither option (a made-up year, say), or None."""
    said = _normalised(answer)
    if options and not any(_normalised(o) and _normalised(o) in said for o in options):
        return f"it names neither {' nor '.join(repr(o) for o in options)}"
    return None


_NOT_FOUND_PHRASE = re.compile(
    r"\b(?:not found|no information|(?:do|does|did) not (?:say|mention|contain|state|answer|give)|"
    r"cannot be (?:found|determined|answered)|(?:is|are) not (?:mentioned|given|stated)|unknown)\b",
    re.I,
)


def says_not_found(answer: str) -> bool:
    """A model's answer that says the documents do not answer (in its own words)."""
    return bool(_NOT_FOUND_PHRASE.search(answer)) and len(answer) < 300


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


_NAME = re.compile(r"\b[A-Z][a-z]{2,}(?:\s+[A-Z][a-z]+)*\b")  # "Ilse Varn": one name, however many words
_NOT_NAMES = {"Example", "Evidence", "Question", "Answer", "For", "She", "He", "They"}


@cache
def example_names(prompt: str) -> frozenset[str]:
    """The capitalised words of a prompt's worked example (its paragraphs that start with "Example"): names
    made up for the prompt, which a small model copies into its reply ("born in Lindau", seen from a 0.5B)."""
    names: set[str] = set()
    for paragraph in re.split(r"\n\s*\n", load_prompt(prompt).template):
        if paragraph.lstrip().startswith("Example"):
            for name in _NAME.findall(paragraph):
                words = [w for w in name.split() if w not in _NOT_NAMES and w.lower() not in _STOP]
                if words:
                    names.add(" ".join(words))
    return frozenset(names)


def copied_example(text: str, prompt: str, context: str) -> str | None:
    """Why an answer is a copy of the prompt's example: it names what the example names and the context
    (question, evidence, sub-answers, history) does not; None when it is not."""
    copied = sorted(
        n for n in example_names(prompt) if re.search(rf"\b{n}\b", text) and not re.search(rf"\b{n}\b", context, re.I)
    )
    return f"it names {', '.join(copied)} from the prompt's example, not from the evidence" if copied else None
