"""A LangChain retriever over an index, for RAG chains that expect one.

    from kgrag.integrations.langchain import KGRagRetriever

    retriever = KGRagRetriever(index_dir="my-index", mode="ppr", k=4)
    docs = retriever.invoke("Which river flows through Tarnholm?")   # or await retriever.ainvoke(...)

``mode``: ``ppr`` (ProPEX-RAG's Personalized PageRank over entities and passages), ``dense`` (the passages
nearest the query) or ``pankrag`` (the workflow plans sub-questions, answers them one hop after another and
fuses their evidence: each document names the sub-question that retrieved it). Every document's metadata has
``id``, ``kind`` (chunk, entity, fact, report), ``title``, ``source``, ``doc_ids``, ``score`` (0-1) and ``route``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr

from kgrag.api import KGRag


class KGRagRetriever(BaseRetriever):
    """Documents from a kgrag index for a query (see the module's docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index_dir: str | Path | None = None
    """The index (default: the settings' ``index_dir``, from KGRAG_INDEX_DIR or kgrag.toml)."""
    mode: Literal["ppr", "pankrag", "dense"] = "ppr"
    k: int = Field(default=5, ge=1, le=50)
    """Documents returned."""
    rag: KGRag | None = Field(default=None, exclude=True)
    """An opened ``KGRag`` to use instead of ``index_dir`` (its settings, its opened index)."""
    _rag: KGRag = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._rag = self.rag or KGRag(self.index_dir)  # settings resolved once, here

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if self.mode == "pankrag":
            return self._from_workflow(self._rag.retrieve(query))
        return [self._document(hit) for hit in self._rag.search(query, route=self.mode, k=self.k)]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.mode == "pankrag":
            return self._from_workflow(await self._rag.aretrieve(query))
        hits = await asyncio.to_thread(self._rag.search, query, route=self.mode, k=self.k)
        return [self._document(hit) for hit in hits]

    @staticmethod
    def _document(hit: dict, **extra: Any) -> Document:
        return Document(
            page_content=hit["text"],
            metadata={
                "id": hit["id"],
                "kind": hit["kind"],
                "title": ", ".join(hit["titles"]),
                "source": ", ".join(s for s in hit["sources"] if s),
                "doc_ids": hit["doc_ids"],
                "score": hit["score"],
                "route": hit["route"],
                **extra,
            },
        )

    def _from_workflow(self, values: dict) -> list[Document]:
        """The workflow's final ranking (the passages the answers were read from first), each item with the
        sub-question that retrieved it; None for what only the retrieval on the whole question found."""
        records = [values["subquestions"][sid] for sid in values.get("plan", [])]
        sources = {d["id"]: d["source"] for d in self._rag.documents()}
        documents = []
        for item in values.get("evidence", [])[: self.k]:
            finder = self._finder(item["id"], records)
            hit = {
                **item,
                "score": item.get("fused_score", item.get("score", 0.0)),
                "route": finder["route"] if finder else item.get("retriever", ""),
                "sources": [sources.get(d, "") for d in item.get("doc_ids", [])],
            }
            subquestion = (finder.get("rephrased") or finder["question"]) if finder else None
            documents.append(
                self._document(hit, subquestion_id=finder["id"] if finder else None, subquestion=subquestion)
            )
        return documents

    @staticmethod
    def _finder(evidence_id: str, records: list[dict]) -> dict | None:
        """The sub-question whose answer was read from this evidence, else the one that ranked it highest."""
        read = [r for r in records if evidence_id in (r.get("sources") or [])]
        if read:
            return read[0]
        scored = [(e["score"], r) for r in records for e in r.get("evidence", []) if e["id"] == evidence_id]
        return max(scored, key=lambda pair: pair[0])[1] if scored else None
