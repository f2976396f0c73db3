"""The run's context: the knobs of one run and the resources it answers from.

Every door builds one ``Context`` per run (the library from its keywords, the service from a request, LangGraph
Server from a run's ``context`` JSON, which Studio's form edits) and passes it as ``context=``; nodes read it
from LangGraph's runtime (``runtime.context``), never from ``config["configurable"]``. Values are checked once,
when the context is made (a pydantic dataclass): a bad value is the same error at every door.
"""

from __future__ import annotations

from dataclasses import field, fields
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass
from pydantic.json_schema import SkipJsonSchema

from agent.plans import DEFAULT_MAX_SUBQUESTIONS
from agent.resources import Resources
from graph_store.errors import ConfigError

Mode = Literal["full", "no_planning", "no_rerank", "naive"]
RoutePolicy = Literal["plan", "local", "community", "ppr", "dense"]


def _knob(description: str, **limits: Any) -> Any:
    return Field(description=description, **limits)


@dataclass(kw_only=True, config=ConfigDict(arbitrary_types_allowed=True, extra="forbid"))
class Context:
    """A run's knobs (shown in Studio's form) and, outside the schema, the resources it answers from."""

    mode: Annotated[
        Mode,
        _knob(
            "full PankRAG; no_planning: the question is the only sub-question; "
            "no_rerank: no dependency-aware reranking; naive: dense RAG"
        ),
    ] = "full"
    route_policy: Annotated[RoutePolicy, _knob("each sub-question's route as planned, or one route for all")] = "plan"
    # Dependency-aware reranking, score = alpha * R + beta * M (PankRAG's defaults): weights from 0 to 1, a pair
    # normalised to sum 1.
    alpha_specific: Annotated[float, _knob("weight of the retrieval score R for specific questions", ge=0, le=1)] = 0.6
    beta_specific: Annotated[
        float, _knob("weight of the dependency similarity M for specific questions", ge=0, le=1)
    ] = 0.4
    alpha_abstract: Annotated[float, _knob("weight of R for abstract questions", ge=0, le=1)] = 0.75
    beta_abstract: Annotated[float, _knob("weight of M for abstract questions", ge=0, le=1)] = 0.25
    top_k_local: Annotated[int, _knob("evidence items kept by local entity search", ge=1, le=50)] = 5
    top_k_community: Annotated[int, _knob("community reports kept", ge=1, le=50)] = 5
    top_k_ppr: Annotated[int, _knob("passages kept by Personalized PageRank", ge=1, le=50)] = 5
    top_k_dense: Annotated[int, _knob("passages kept by dense search", ge=1, le=50)] = 5
    max_subquestions: Annotated[int, _knob("most sub-questions a plan may have", ge=1, le=12)] = (
        DEFAULT_MAX_SUBQUESTIONS
    )
    candidates: Annotated[
        int,
        _knob(
            "answers a sub-question keeps; a dependent sub-question retrieves for "
            "each and the best-scoring chain wins (1 = one guess)",
            ge=1,
            le=5,
        ),
    ] = 3
    fact_filter: Annotated[bool, _knob("ProPEX's LLM fact filter on the ppr route (needs a chat model)")] = True
    review_plan: Annotated[
        bool, _knob("stop after planning so the plan can be edited, then resume with the edited plan")
    ] = False
    pause_before: Annotated[
        list[str],
        _knob(
            "sub-question steps to stop before, for a debugger (rephrase, route, "
            "retrieve, rerank, sub_answer); resume to go on"
        ),
    ] = field(default_factory=list)
    index_dir: Annotated[str | None, _knob("index directory (default: the one in the settings)")] = None
    chat_model: Annotated[str | None, _knob("chat model on the configured endpoint (default: the settings' one)")] = (
        None
    )
    # Not a knob: the opened index and model, set by the door (LangGraph pickles configs, so objects go here).
    resources: SkipJsonSchema[Resources | None] = field(default=None, repr=False, compare=False)

    @classmethod
    def knobs(cls) -> list[str]:
        """The names a run may set."""
        return [f.name for f in fields(cls) if f.name != "resources"]

    @classmethod
    def of(cls, resources: Resources | None = None, **knobs: Any) -> Context:
        """A context from a door's values, with a bad or unknown value as one ConfigError naming it."""
        try:
            return cls(resources=resources, **knobs)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise ConfigError(f"invalid run configuration: {problems}") from None

    def answering_from(self) -> Resources:
        """The resources of this run; a clear error when the door gave none."""
        if self.resources is None:
            raise ConfigError(
                "no index to answer from: pass context=Context(resources=Resources.open(settings)), "
                "or use the library (kgrag.KGRag)"
            )
        return self.resources

    def weights(self, kind: str) -> tuple[float, float]:
        """(alpha, beta) for a specific or abstract sub-question, normalised to sum 1."""
        alpha, beta = (
            (self.alpha_abstract, self.beta_abstract)
            if kind == "abstract"
            else (self.alpha_specific, self.beta_specific)
        )
        total = alpha + beta
        if total <= 0:
            raise ValueError(f"alpha and beta must have a positive sum, got {alpha}, {beta}")
        return alpha / total, beta / total

    def top_k(self, route: str) -> int:
        return int(getattr(self, f"top_k_{route}"))

    def as_dict(self) -> dict[str, Any]:
        """The knobs' values."""
        return {name: getattr(self, name) for name in self.knobs()}


@dataclass(kw_only=True, config=ConfigDict(arbitrary_types_allowed=True, extra="forbid"))
class ReviewContext:
    """The entity review flow's context (agent/entity_review.py): which index, and the door's opened writer."""

    index_dir: Annotated[str | None, _knob("index directory (default: the one in the settings)")] = None
    # Not a knob: the index the decisions are written to (a graph_store.index.KnowledgeIndex opened for writing).
    index: SkipJsonSchema[Any] = field(default=None, repr=False, compare=False)

    def reviewing(self) -> Any:
        """The index whose proposals are reviewed; a clear error when the door gave none."""
        if self.index is None:
            raise ConfigError("no index to review: pass context=ReviewContext(index=KnowledgeIndex(settings))")
        return self.index
