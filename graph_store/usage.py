"""The call and token counts of a chat model (kept by ``graph_store.llm_cache.LLMCache``), in a module of their
own: reading them must not import LangChain."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Usage:
    calls: int = 0  # requests that reached the model
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    unreported: int = 0  # calls whose reply carried no token counts (some servers never send them)

    def tokens(self) -> str:
        """The token counts as a reader should see them: "not reported" rather than a false 0."""
        if self.calls and self.unreported == self.calls:
            return "tokens not reported by the endpoint"
        return f"{self.input_tokens} input + {self.output_tokens} output tokens"

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
