"""The graphs' states. Records inside them (sub-questions, evidence, citations) are the TypedDicts of
agent/records.py, so checkpoints, Studio and JSON show them as they are.

``typing_extensions.TypedDict`` everywhere: on Python < 3.12 pydantic (and so LangGraph Server's
schema endpoint, which Studio's forms use) refuses ``typing.TypedDict``.
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from agent.records import Citation, EvidenceItem, SubQuestionRecord


def merge_records(
    left: dict[str, SubQuestionRecord] | None, right: dict[str, SubQuestionRecord] | None
) -> dict[str, SubQuestionRecord]:
    """Parallel branches each return their own records; merging by id keeps all of them."""
    merged = dict(left or {})
    for sid, record in (right or {}).items():
        merged[sid] = {**merged.get(sid, {}), **record}
    return merged


def merge_fields(left: SubQuestionRecord | None, right: SubQuestionRecord | None) -> SubQuestionRecord:
    """A sub-question's record as its steps fill it in: each step adds or replaces its own fields."""
    return {**(left or {}), **(right or {})}


class InputState(TypedDict, total=False):
    """A question, or a chat whose last message is the user's question."""

    question: str
    messages: Annotated[list[AnyMessage], add_messages]


class OutputState(TypedDict, total=False):
    answer: str
    """The answer as shown: text with numbered citations [n]."""
    short_answer: str
    """The answer alone, for scoring and compact displays."""
    confidence: float
    """0-1; offline, how well the evidence supports the extracted answer."""
    offline: bool
    """Answered without a language model (none configured)."""
    extractive: bool
    """The answer was extracted from the documents: no model wrote it (offline, or not one of its llm_tasks), or
    its answer was rejected."""
    citations: list[Citation]
    subquestions: Annotated[dict[str, SubQuestionRecord], merge_records]
    """Every turn's sub-question records, by id."""
    evidence: list[EvidenceItem]
    """The final ranking: the sub-questions' evidence fused with the whole question's (what the answer cites)."""
    messages: Annotated[list[AnyMessage], add_messages]


class AgentState(InputState, OutputState, total=False):
    asked: str
    """This turn's question as answered (``question`` is input only and cleared once read)."""
    turn: int
    plan: list[str]
    """This turn's sub-question ids, in plan order."""
    planner: str
    """llm | rule-based | single | reviewed | small-talk | fallback."""
    plan_notes: list[str]
    notes: dict[str, str]
    """Turn-level fallbacks (final answer)."""
    chosen: dict[str, str]
    """Sub-answers the best-scoring chain took from a sub-question's alternatives."""
    stepwise: bool
    """Sub-questions are sent one at a time: the run pauses before their steps (a debugger's)."""


class SubQuestionInput(TypedDict):
    """What one fan-out branch gets: its record, the records it depends on, the plan's local ids."""

    record: SubQuestionRecord
    dependencies: list[SubQuestionRecord]
    siblings: list[str]


class SubQuestionState(TypedDict, total=False):
    """One sub-question's own state inside its subgraph; only ``subquestions`` goes back to the parent."""

    record: Annotated[SubQuestionRecord, merge_fields]
    dependencies: list[SubQuestionRecord]
    siblings: list[str]
    subquestions: Annotated[dict[str, SubQuestionRecord], merge_records]


class ProPEXOutput(TypedDict, total=False):
    answer: str
    short_answer: str
    confidence: float
    offline: bool
    extractive: bool
    citations: list[Citation]
    passages: list[EvidenceItem]
    """The passages PPR ranked, best first."""
    messages: Annotated[list[AnyMessage], add_messages]


class ProPEXState(ProPEXOutput, total=False):
    question: str
    asked: str
    facts: list[EvidenceItem]
    """The facts nearest the question."""
    kept_facts: list[EvidenceItem]
    """The facts the filter kept."""
    filter_error: str | None
    seeds: dict[str, float]
    """Entity id -> PPR reset weight."""
    fallback: str | None
    """Why dense retrieval answered instead, if it did."""
    notes: dict[str, str]


# --- entity review (agent/entity_review.py) ------------------------------------------------------------------------


class ReviewInput(TypedDict, total=False):
    """Which proposed merges to review: the best ``limit`` (all by default) scoring at least ``min_score``."""

    limit: int
    min_score: float
    who: str
    """Who reviews, kept with each decision."""


class ReviewOutput(TypedDict, total=False):
    verdicts: list[dict]
    """One per proposal reviewed so far, in order: {"a", "b", "verdict": merge | reject | skip, "why"}."""
    decisions: list[dict]
    """The decisions stored at the end (skips are not decisions), with their ids."""
    summary: str


class ReviewState(ReviewInput, ReviewOutput, total=False):
    proposals: list[dict]
    """The open proposals as loaded, each as a person reads it: the names, score, why, types and evidence."""
    problem: str | None
    """Why the last resume was not a verdict (shown when the same proposal is asked again)."""
