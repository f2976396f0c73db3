"""The graph state. Every sub-question is a plain-dict record, so checkpoints, Studio and JSON all show it as is.

Sub-question record keys (each written by the step that produces it):
  plan:       id ("<turn>:<local id>"), local_id, turn, question, depends_on (record ids), relation
              (parallel/progress), route, kind (specific/abstract), rephrase (bool), operation (None, or
              a combination of dependency answers, see agent/planning.py), status ("pending")
  rephrase:   rephrased (the query retrieved, or None), queries ([{text, weight, assumes}]: one per
              combination of dependency candidates, weighted by their confidence)
  route:      route (the one actually used)
  retrieve_*: evidence (Evidence dicts with retrieval_score), retrieval (route details: seeds, facts kept,
              fallbacks)
  rerank:     evidence with dependency_similarity and the final score, best first
  sub_answer: answer, confidence, sources (evidence ids), supporting_sentence, candidates
              ([{answer, confidence, sentence, evidence_id, assumes}]), used_answers ({dep id: answer}:
              what it was computed from, so an edited dependency makes it stale), status
              (answered/not_found/failed), error
  notes: {step: reason} for every fallback taken, shown by ask, inspect and the chat API.

``typing_extensions.TypedDict`` everywhere: on Python < 3.12 pydantic (and so LangGraph Server's
schema endpoint, which Studio's forms use) refuses ``typing.TypedDict``.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


def merge_records(left: dict[str, dict] | None, right: dict[str, dict] | None) -> dict[str, dict]:
    """Parallel branches each return their own records; merging by id keeps all of them."""
    merged = dict(left or {})
    for sid, record in (right or {}).items():
        merged[sid] = {**merged.get(sid, {}), **record}
    return merged


def merge_fields(left: dict | None, right: dict | None) -> dict:
    """A sub-question's record as its steps fill it in: each step adds or replaces its own fields."""
    return {**(left or {}), **(right or {})}


class InputState(TypedDict, total=False):
    """A question, or a chat whose last message is the user's question."""

    question: str
    messages: Annotated[list[AnyMessage], add_messages]


class OutputState(TypedDict, total=False):
    answer: str  # the answer as shown: text with numbered citations [n]
    short_answer: str  # the answer alone, for scoring and compact displays
    confidence: float  # 0-1; offline, how well the evidence supports the extracted answer
    offline: bool  # answered without a language model (extractive)
    citations: list[dict[str, Any]]  # [{n, evidence_id, kind, titles, doc_ids, sources, text}]
    subquestions: Annotated[dict[str, dict[str, Any]], merge_records]  # every turn's records, by id
    messages: Annotated[list[AnyMessage], add_messages]


class AgentState(InputState, OutputState, total=False):
    asked: str  # this turn's question as answered (``question`` is input only and cleared once read)
    turn: int
    plan: list[str]  # this turn's sub-question ids, in plan order
    planner: str  # llm | rule-based | single | reviewed | small-talk | fallback
    plan_notes: list[str]
    evidence: list[dict[str, Any]]  # the final ranking: sub-questions' evidence fused with the whole question's
    notes: dict[str, str]  # turn-level fallbacks (final answer)
    chosen: dict[str, str]  # sub-answers the best-scoring chain took from a sub-question's alternatives


class SubQuestionInput(TypedDict):
    """What one fan-out branch gets: its record, the records it depends on, the plan's local ids."""

    record: dict[str, Any]
    dependencies: list[dict[str, Any]]
    siblings: list[str]


class SubQuestionState(TypedDict, total=False):
    """One sub-question's own state inside its subgraph; only ``subquestions`` goes back to the parent."""

    record: Annotated[dict[str, Any], merge_fields]
    dependencies: list[dict[str, Any]]
    siblings: list[str]
    subquestions: Annotated[dict[str, dict[str, Any]], merge_records]
