"""kgrag: answer complex questions over your documents with a knowledge graph (PankRAG planning and
ProPEX-RAG Personalized PageRank in one LangGraph workflow), offline by default.

    >>> from kgrag import KGRag
    >>> rag = KGRag("my-index")
    >>> summary = rag.index("examples/corpus")
    >>> answer = rag.ask("Which river flows through the city where the founder of Halvard Instruments was born?")
    >>> answer.short_answer
    'Selva'

This package holds the doors: the library (kgrag/api.py), the CLI (kgrag/cli.py), the HTTP service and its
web page (kgrag/server/, kgrag/web/), the MCP server (kgrag/mcp_server.py), the LangChain retriever and the
workflow as a subgraph of your own graph (kgrag/integrations/), LangGraph Server's entry (kgrag/studio.py) and
evaluation. The names below load on first use, so ``kgrag --help`` does not import the workflow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["KGRag", "Answer", "Citation", "SubQuestion", "Step", "Token", "GRAPHS"]

if TYPE_CHECKING:
    from kgrag.api import GRAPHS, Answer, Citation, KGRag, Step, SubQuestion, Token  # noqa: F401


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kgrag import api

        return getattr(api, name)
    raise AttributeError(f"module 'kgrag' has no attribute {name!r}")
