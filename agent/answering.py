"""Answers: extractive offline answers, and the LLM sub-answer parser.

Offline there is no reader model, so a sub-answer is a span picked from the
evidence: candidate names (or dates, or numbers, by question type) in the
sentences closest to the question, preferring spans near the question's own
words and never a name the question already contains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graph_store.embeddings import Embedder
from graph_store.extraction import find_entity_mentions
from graph_store.graph import normalize_name
from graph_store.llm import json_in_reply
from graph_store.retrieval import Evidence

NOT_FOUND = "not found"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_YEAR = re.compile(r"\b(?:(?:\d{1,2} )?(?:January|February|March|April|May|June|July|August|September|October|"
                   r"November|December) (?:\d{1,2}, )?)?\d{3,4}\b")
_NUMBER = re.compile(r"\b\d[\d,.]*\b")
_WORD = re.compile(r"[a-z]+")
_QUESTION_STOP = set("""what which who whom whose where when why how is was are were did does do the a an of in on at
to for by with from and or as that this it its be been has have had name named""".split())


@dataclass
class ExtractiveAnswer:
    answer: str
    evidence_ids: list[str]
    sentence: str
    score: float


def _answer_type(question: str) -> str:
    q = question.lower()
    if re.match(r"\s*(when|what year|in what year|in which year|what date)", q) or "what year" in q:
        return "date"
    if re.match(r"\s*how (many|much|long|old|tall|big)", q):
        return "number"
    return "name"


_PRONOUN = re.compile(r"\b(he|she|they|it|his|her|its|their)\b", re.I)


def _candidates(sentence: str, answer_type: str, title: str) -> list[tuple[int, str]]:
    if answer_type == "date":
        return [(m.start(), m.group(0)) for m in _YEAR.finditer(sentence)]
    if answer_type == "number":
        return [(m.start(), m.group(0)) for m in _NUMBER.finditer(sentence)]
    found = [(start, name) for start, _, name in find_entity_mentions(sentence)]
    pronoun = _PRONOUN.search(sentence[:40])
    if pronoun and title:  # "In 1921 she founded ...": in an article, she is its subject
        found.append((pronoun.start(), title))
    return found


def extractive_answer(question: str, evidence: list[Evidence], embedder: Embedder,
                      max_items: int = 6) -> ExtractiveAnswer:
    """The best-supported span for ``question`` in ``evidence``, or NOT_FOUND."""
    sentences: list[tuple[str, Evidence]] = []
    for item in [e for e in evidence if e.kind in ("chunk", "fact", "report")][:max_items]:
        sentences += [(s.strip(), item) for s in _SENTENCE.split(item.text) if len(s.strip()) > 3]
    if not sentences:
        return ExtractiveAnswer(NOT_FOUND, [], "", 0.0)
    vectors = embedder.embed([question] + [s for s, _ in sentences])
    similarity = vectors[1:] @ vectors[0]
    answer_type = _answer_type(question)
    asked = normalize_name(question)
    # Keyword stems ("founder" finds "founded") locate the part of a sentence the question is about.
    keywords = {w[:5] for w in _WORD.findall(question.lower()) if w not in _QUESTION_STOP and len(w) > 2}
    wh = question.strip().split()[0].lower() if question.strip() else ""
    best: ExtractiveAnswer | None = None
    for (sentence, item), sim in zip(sentences, similarity):
        base = float(sim) * (0.6 + 0.4 * item.score)
        lowered = sentence.lower()
        keyword_positions = [m.start() for w in keywords for m in re.finditer(rf"\b{re.escape(w)}", lowered)]
        for position, candidate in _candidates(sentence, answer_type, item.titles[0] if item.titles else ""):
            key = normalize_name(candidate)
            if not key or key in asked:
                continue
            near = min((abs(position - p) for p in keyword_positions), default=999)
            score = base + (0.1 if near < 25 else 0.05 if near < 60 else 0.0)
            before = lowered[max(0, position - 12):position]
            if wh == "where" and re.search(r"\b(in|at|from|near|on|of)\s+(the\s+)?(\w+\s+){0,3}$", before):
                score += 0.05
            if wh == "who" and (len(candidate.split()) >= 2 or re.search(r"\bby\s+$", before)):
                score += 0.05
            if best is None or score > best.score:
                best = ExtractiveAnswer(candidate, [item.id], sentence, score)
    if best is None or best.score < 0.15:
        return ExtractiveAnswer(NOT_FOUND, [], "", 0.0 if best is None else best.score)
    return best


def parse_sub_answer(raw: str, evidence: list[Evidence]) -> tuple[str, list[str]]:
    """An LLM sub-answer: {"answer": ..., "evidence": [numbers]}; plain text is accepted as the answer."""
    text = (raw or "").strip()
    data = json_in_reply(text)
    if isinstance(data, dict) and "answer" in data:
        answer = str(data.get("answer") or "").strip() or NOT_FOUND
        numbers = data.get("evidence") or []
        ids = [evidence[int(n) - 1].id for n in numbers
               if str(n).strip().isdigit() and 1 <= int(n) <= len(evidence)]
        return answer, ids
    return (text or NOT_FOUND), []


def is_not_found(answer: str | None) -> bool:
    return not answer or answer.strip().lower().rstrip(".") in {NOT_FOUND, "unknown", "none", "n/a"}


# --- interface used by the graph (the typed reader replaces these) -----------------------------------

@dataclass
class Candidate:
    answer: str
    confidence: float
    sentence: str
    evidence_id: str
    answer_type: str = "name"


@dataclass
class Reading:
    answer_type: str
    candidates: list[Candidate]
    reason: str | None = None


def read_answer(question: str, evidence: list[Evidence], embedder: Embedder, k: int = 3) -> Reading:
    found = extractive_answer(question, evidence, embedder)
    if is_not_found(found.answer):
        return Reading(_answer_type(question), [], "no candidate answer in the evidence")
    return Reading(_answer_type(question), [Candidate(found.answer, round(min(1.0, found.score), 3), found.sentence,
                                                      found.evidence_ids[0], _answer_type(question))])


def combine(operation: dict, question: str, inputs: list[tuple[str, str]]) -> tuple[str, str, float]:
    return " / ".join(a for _, a in inputs), "", 0.5


def extractive_summary(question: str, evidence: list[Evidence], embedder: Embedder,
                       max_sentences: int = 4) -> tuple[str, list[str]]:
    return " ".join(e.text.split(". ")[0] + f" [{n}]" for n, e in enumerate(evidence[:max_sentences], 1)), \
        [e.id for e in evidence[:max_sentences]]


def resolve_follow_up(question: str, previous_question: str, previous_answer: str) -> str:
    return question


def small_talk_reply(question: str) -> str | None:
    return None
