"""Answers: the offline answer as the graph takes it, and the LLM sub-answer parser.

Offline there is no reader model: ``agent.reader.read_answer`` types the answer the question asks
for and ranks typed candidates from the evidence. ``extractive_answer`` is its best candidate in the
shape the graph stores (answer, evidence ids, supporting sentence, score), or NOT_FOUND.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.reader import NOT_FOUND, Reading, is_not_found, read_answer
from graph_store.embeddings import Embedder
from graph_store.llm import json_in_reply
from graph_store.retrieval import Evidence

__all__ = ["NOT_FOUND", "ExtractiveAnswer", "extractive_answer", "is_not_found", "parse_sub_answer"]


@dataclass
class ExtractiveAnswer:
    answer: str
    evidence_ids: list[str]
    sentence: str
    score: float  # the reader's confidence (0..1)
    reading: Reading | None = None  # every candidate, the answer type, and why none when none


def extractive_answer(question: str, evidence: list[Evidence], embedder: Embedder) -> ExtractiveAnswer:
    """The best-supported answer for ``question`` in ``evidence``, or NOT_FOUND."""
    reading = read_answer(question, evidence, embedder)
    best = reading.best
    if best is None:
        return ExtractiveAnswer(NOT_FOUND, [], "", 0.0, reading)
    return ExtractiveAnswer(best.answer, [best.evidence_id] if best.evidence_id else [], best.sentence,
                            best.confidence, reading)


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
