"""The records the workflow keeps in its state: sub-questions, their queries, evidence and candidate answers,
citations. They are TypedDicts, so a checkpoint, LangGraph Studio and the service's JSON show them as they are,
and old checkpoints load unchanged; the type checker holds the code to the keys documented here.

A sub-question record is filled in step by step: the planner writes the plan's fields, then ``rephrase``,
``route``, ``retrieve_*``, ``rerank`` and ``sub_answer`` each add theirs (``total=False``: a record that has
only been planned has no evidence yet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from graph_store.retrieval import Evidence

NOT_FOUND = "not found"

Status = Literal["pending", "running", "answered", "not_found", "failed", "dropped"]
Kind = Literal["specific", "abstract"]


def is_not_found(answer: str | None) -> bool:
    """An answer that says nothing was found (or is empty)."""
    return not answer or answer.strip().lower().rstrip(".") in {NOT_FOUND, "unknown", "none", "n/a"}


class PlanItem(TypedDict, total=False):
    """One sub-question of a plan, as a planner (or a user's edit) gives it, validated by agent/plans.py."""

    id: str
    """The plan's local id ("q1")."""
    question: str
    """The sub-question; may refer to earlier answers ("#1")."""
    depends_on: list[str]
    """Local ids of the sub-questions whose answers it needs."""
    relation: Literal["parallel", "progress"]
    """progress when it depends on others, else parallel."""
    route: str
    """Where it is retrieved from: local, community, ppr or dense."""
    kind: Kind
    """specific (a fact) or abstract (themes, summaries): picks the reranking weights and community level."""
    rephrase: bool
    """Rewrite it with its dependencies' answers before retrieval."""
    operation: dict[str, Any] | None
    """A combination of its dependencies' answers (compare, choose, both, same, yes_no) or a summary."""


class Query(TypedDict):
    """One way of asking a sub-question: its text with one combination of dependency candidates filled in."""

    text: str
    """The query retrieved."""
    weight: float
    """The combination's confidence relative to the best one (1.0 for the best)."""
    assumes: dict[str, str]
    """Dependency record id -> the candidate answer this query assumed."""


class EvidenceItem(TypedDict, total=False):
    """A piece of retrieved evidence as the state keeps it: the retriever's Evidence and the workflow's scores."""

    id: str
    """Chunk, entity, fact or report id."""
    kind: str
    """chunk, entity, fact or report."""
    text: str
    """What the evidence says (a passage, a fact, a report)."""
    score: float
    """The score it is ranked by: the reranked score after ``rerank``, else the retrieval score."""
    doc_ids: list[str]
    """The documents it comes from."""
    chunk_ids: list[str]
    """The chunks it comes from."""
    titles: list[str]
    """Those documents' titles."""
    retriever: str
    """The retriever that found it."""
    details: dict[str, Any]
    """The retriever's own details (PPR mass, matched entities ...)."""
    retrieval_score: float
    """R: the retriever's score in [0, 1], weighted by the query's weight."""
    found_by: dict[str, float]
    """Query number (as a string) -> the retriever's score for that query."""
    dependency_similarity: float | None
    """M: cosine to the dependency answers its query assumed; None when not reranked."""
    fused_score: float
    """In the final ranking: the reciprocal-rank-fused score relative to the best."""


class CandidateAnswer(TypedDict, total=False):
    """One answer a sub-question considered."""

    answer: str
    confidence: float
    """0-1."""
    sentence: str
    """The sentence it was read from (offline)."""
    evidence_id: str | None
    """The evidence it was read from."""
    answer_type: str
    """The type the reader found it to be (person, place, date ...)."""
    assumes: dict[str, str]
    """The dependency answers of the query it was read from."""
    cited: list[str]
    """Evidence ids a model's answer cited."""


class SubQuestionRecord(TypedDict, total=False):
    """A sub-question in the state, keyed by its id: the plan's fields, then each step's."""

    id: str
    """"<turn>:<local id>", unique in a conversation."""
    local_id: str
    turn: int
    question: str
    depends_on: list[str]
    """Record ids (with the turn) of its dependencies."""
    relation: Literal["parallel", "progress"]
    route: str
    """The planned route; after ``route``, the one used ("none" for a combination of answers)."""
    kind: Kind
    rephrase: bool
    operation: dict[str, Any] | None
    status: Status
    rephrased: str | None
    """The query retrieved when it differs from the question (``rephrase``)."""
    queries: list[Query]
    """One per combination of dependency candidates, best first (``rephrase``)."""
    evidence: list[EvidenceItem]
    """Retrieved (``retrieve_*``), then reranked (``rerank``), best first."""
    retrieval: list[dict[str, Any]]
    """Per query, the route's details: PPR seeds, facts kept, fallbacks."""
    rerank: dict[str, float]
    """The alpha and beta used."""
    answer: str | None
    confidence: float | None
    sources: list[str]
    """Evidence ids the answer rests on."""
    supporting_sentence: str | None
    candidates: list[CandidateAnswer]
    used_answers: dict[str, str | None] | None
    """Dependency id -> the answer it was computed from, so an edited dependency makes it stale."""
    not_found_reason: str | None
    error: str
    """Why it failed."""
    notes: dict[str, str]
    """Step -> the reason of every fallback it took."""


class Citation(TypedDict):
    """A numbered source of an answer."""

    n: int
    evidence_id: str
    kind: str
    doc_ids: list[str]
    titles: list[str]
    sources: list[str]
    """The documents' sources (file paths, upload names)."""
    text: str
    """The cited text (at most 600 characters)."""


def asked(record: SubQuestionRecord) -> str:
    """A sub-question as it was retrieved: rephrased when it was."""
    return record.get("rephrased") or record["question"]


def evidence_item(evidence: Evidence, **scores: Any) -> EvidenceItem:
    """The state's form of a retriever's Evidence, with the workflow's scores added."""
    return EvidenceItem(**evidence.model_dump(), **scores)  # type: ignore[typeddict-item]


def as_evidence(item: EvidenceItem, score: float | None = None) -> Evidence:
    """A state item as the retriever's Evidence again (for the reader and the reranker), optionally rescored."""
    from graph_store.retrieval import Evidence  # pydantic and numpy: not needed to plan

    return Evidence.model_validate({**item, **({"score": score} if score is not None else {})})
