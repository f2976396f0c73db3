"""Per-run knobs, read from ``config["configurable"]`` (LangGraph Studio shows them as the configuration form)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig

Mode = Literal["full", "no_planning", "no_rerank", "naive"]
RoutePolicy = Literal["plan", "local", "community", "ppr", "dense"]


@dataclass(kw_only=True)
class AgentConfig:
    mode: Mode = "full"  # full | no_planning (one sub-question) | no_rerank | naive (dense RAG)
    route_policy: RoutePolicy = "plan"  # the plan's route per sub-question, or one route for all
    # Dependency-aware reranking, score = alpha * R + beta * M (PankRAG's defaults); pairs are normalised to sum 1.
    alpha_specific: float = 0.6
    beta_specific: float = 0.4
    alpha_abstract: float = 0.75
    beta_abstract: float = 0.25
    top_k_local: int = 5
    top_k_community: int = 5
    top_k_ppr: int = 5
    top_k_dense: int = 5
    max_subquestions: int = 6
    fact_filter: bool = True  # ProPEX's LLM fact filter on the ppr route (needs a chat model)
    index_dir: str | None = None  # overrides the settings' index directory
    chat_model: str | None = None  # overrides the settings' chat model (same endpoint)

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
        return cls(**values)

    def weights(self, kind: str) -> tuple[float, float]:
        alpha, beta = ((self.alpha_abstract, self.beta_abstract) if kind == "abstract"
                       else (self.alpha_specific, self.beta_specific))
        total = alpha + beta
        if alpha < 0 or beta < 0 or total <= 0:
            raise ValueError(f"alpha and beta must be >= 0 with a positive sum, got {alpha}, {beta}")
        return alpha / total, beta / total

    def top_k(self, route: str) -> int:
        return int(getattr(self, f"top_k_{route}"))

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
