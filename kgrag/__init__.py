"""kgrag: answer complex questions over your documents with a knowledge graph (PankRAG planning and
ProPEX-RAG Personalized PageRank in one LangGraph workflow), offline by default.

    >>> from kgrag import KGRag
    >>> rag = KGRag("my-index")
    >>> summary = rag.index("examples/corpus")
    >>> answer = rag.ask("Which river flows through the city where the founder of Halvard Instruments was born?")
    >>> answer.short_answer
    'Selva'

See kgrag/api.py and the README's "Python API" section.
"""

from kgrag.api import GRAPHS, Answer, Citation, KGRag, Step, SubQuestion, Token  # noqa: F401

__all__ = ["KGRag", "Answer", "Citation", "SubQuestion", "Step", "Token", "GRAPHS"]
