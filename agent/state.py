"""The graph state. Every sub-question is a plain-dict record, so checkpoints, Studio and JSON all show it as is.

Sub-question record keys: id ("<turn>:<local id>"), local_id, turn, question,
rephrased, depends_on (record ids), relation (parallel/progress), route, kind
(specific/abstract), rephrase (bool), status (pending/answered/not_found/failed),
evidence (list of Evidence dicts, each with retrieval_score, dependency_similarity
and the final score), answer, sources (evidence ids the answer rests on), notes.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages


def merge_records(left: dict[str, dict] | None, right: dict[str, dict] | None) -> dict[str, dict]:
    """Parallel branches each return their own finished records; merging by id keeps all of them."""
    merged = dict(left or {})
    for sid, record in (right or {}).items():
        merged[sid] = {**merged.get(sid, {}), **record}
    return merged


class InputState(TypedDict, total=False):
    question: str
    messages: Annotated[list[AnyMessage], add_messages]


class OutputState(TypedDict, total=False):
    answer: str
    short_answer: str  # the answer alone (offline: the extracted span), for scoring and compact displays
    citations: list[dict[str, Any]]
    messages: Annotated[list[AnyMessage], add_messages]


class AgentState(InputState, OutputState, total=False):
    asked: str  # this turn's question (``question`` is input only and cleared once read)
    turn: int
    plan: list[str]  # this turn's sub-question ids, in plan order
    planner: str  # llm | rule-based | single | fallback
    plan_notes: list[str]
    subquestions: Annotated[dict[str, dict[str, Any]], merge_records]  # every turn's records, by id
    offline: bool


class SolveInput(TypedDict):
    """What one fan-out branch gets: its record and the records it depends on."""

    record: dict[str, Any]
    dependencies: list[dict[str, Any]]
    siblings: list[str]  # local ids of the turn's plan, in order (for "#k" references)
