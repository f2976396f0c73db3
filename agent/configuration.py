"""Per-run knobs, read from ``config["configurable"]`` or a run's ``context`` (LangGraph Studio's form)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field, TypeAdapter, ValidationError

from agent.planning import DEFAULT_MAX_SUBQUESTIONS

Mode = Literal["full", "no_planning", "no_rerank", "naive"]
RoutePolicy = Literal["plan", "local", "community", "ppr", "dense"]


def _knob(description: str, **limits: Any) -> Any:
    return Field(description=description, **limits)


@dataclass(kw_only=True)
class AgentConfig:
    mode: Annotated[Mode, _knob("full PankRAG; no_planning: the question is the only sub-question; "
                                "no_rerank: no dependency-aware reranking; naive: dense RAG")] = "full"
    route_policy: Annotated[RoutePolicy, _knob("each sub-question's route as planned, or one route for "
                                               "all")] = "plan"
    # Dependency-aware reranking, score = alpha * R + beta * M (PankRAG's defaults); pairs are normalised to sum 1.
    alpha_specific: Annotated[float, _knob("weight of the retrieval score R for specific questions", ge=0)] = 0.6
    beta_specific: Annotated[float, _knob("weight of the dependency similarity M for specific questions",
                                          ge=0)] = 0.4
    alpha_abstract: Annotated[float, _knob("weight of R for abstract questions", ge=0)] = 0.75
    beta_abstract: Annotated[float, _knob("weight of M for abstract questions", ge=0)] = 0.25
    top_k_local: Annotated[int, _knob("evidence items kept by local entity search", ge=1, le=50)] = 5
    top_k_community: Annotated[int, _knob("community reports kept", ge=1, le=50)] = 5
    top_k_ppr: Annotated[int, _knob("passages kept by Personalized PageRank", ge=1, le=50)] = 5
    top_k_dense: Annotated[int, _knob("passages kept by dense search", ge=1, le=50)] = 5
    max_subquestions: Annotated[int, _knob("most sub-questions a plan may have", ge=1, le=12)] = DEFAULT_MAX_SUBQUESTIONS
    candidates: Annotated[int, _knob("answers a sub-question keeps; a dependent sub-question retrieves for "
                                     "each and the best-scoring chain wins (1 = one guess)", ge=1, le=5)] = 3
    fact_filter: Annotated[bool, _knob("ProPEX's LLM fact filter on the ppr route (needs a chat "
                                       "model)")] = True
    review_plan: Annotated[bool, _knob("stop after planning so the plan can be edited, then resume "
                                       "with the edited plan")] = False
    pause_before: Annotated[list[str], _knob("sub-question steps to stop before, for a debugger (rephrase, route, "
                                             "retrieve, rerank, sub_answer); resume to go on")] = field(
        default_factory=list)
    index_dir: Annotated[str | None, _knob("index directory (default: the one in the settings)")] = None
    chat_model: Annotated[str | None, _knob("chat model on the configured endpoint (default: the "
                                            "settings' one)")] = None

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> "AgentConfig":
        """Knobs from ``configurable``, overridden by a run's ``context`` (what Studio's form sends)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in ((config or {}).get("configurable", {}) or {}).items()
                  if k in known and v is not None}
        try:
            from langgraph.runtime import get_runtime

            context = get_runtime().context
        except Exception:  # noqa: BLE001 - outside a graph run there is no context
            context = None
        if isinstance(context, cls):
            values.update(context.as_dict())
        elif isinstance(context, dict):
            values.update({k: v for k, v in context.items() if k in known and v is not None})
        try:
            return _ADAPTER.validate_python(values)
        except ValidationError as exc:
            from graph_store.errors import ConfigError

            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise ConfigError(f"invalid run configuration: {problems}") from None

    def weights(self, kind: str) -> tuple[float, float]:
        alpha, beta = ((self.alpha_abstract, self.beta_abstract) if kind == "abstract"
                       else (self.alpha_specific, self.beta_specific))
        total = alpha + beta
        if total <= 0:
            raise ValueError(f"alpha and beta must have a positive sum, got {alpha}, {beta}")
        return alpha / total, beta / total

    def top_k(self, route: str) -> int:
        return int(getattr(self, f"top_k_{route}"))

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


_ADAPTER = TypeAdapter(AgentConfig)
