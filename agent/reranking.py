"""PankRAG's dependency-aware reranking: score = alpha * R + beta * M.

R is the retriever's own score (already in [0, 1], relative to the best of its
list); M is the cosine similarity between a piece of evidence and the resolved
answers it depends on (the best over those answers, clipped to [0, 1]).
"""

from __future__ import annotations

import numpy as np

from graph_store.retrieval import Evidence

COLLECTION_OF = {"chunk": "chunks", "entity": "entities", "fact": "facts", "report": "reports"}


def evidence_vectors(evidence: list[Evidence], retrievers, embedder) -> np.ndarray:
    """Stored vectors of the evidence where they are ``embedder``'s (no re-embedding); embeds the rest.

    Static vectors (entities and reports by default) live in another space than the dependency answers'
    vectors: that evidence is embedded by ``embedder`` too, so M is one cosine scale for every kind.
    """
    found: dict[int, np.ndarray] = {}
    model = getattr(embedder, "inner", embedder)  # a RememberingEmbedder's vectors are its inner model's
    for kind, collection in COLLECTION_OF.items():
        if retrievers.embedders[collection] is not model:
            continue
        positions = [i for i, e in enumerate(evidence) if e.kind == kind]
        stored = retrievers.vectors_of(collection, [evidence[i].id for i in positions])
        found.update({i: stored[evidence[i].id] for i in positions if evidence[i].id in stored})
    missing = [i for i in range(len(evidence)) if i not in found]
    if missing:
        found.update(zip(missing, embedder.embed([evidence[i].text for i in missing])))
    return np.asarray([found[i] for i in range(len(evidence))], dtype=np.float32).reshape(len(evidence), -1)


def rerank_by_dependencies(
    evidence: list[Evidence],
    evidence_vecs: np.ndarray | None,
    dependency_vecs: np.ndarray | None,
    alpha: float,
    beta: float,
) -> list[dict]:
    """Evidence dicts with retrieval_score, dependency_similarity and the final score, best first.

    No dependency vectors means no reranking: the final score is the retrieval score.
    """
    if dependency_vecs is None or len(dependency_vecs) == 0:
        return [{**e.model_dump(), "retrieval_score": e.score, "dependency_similarity": None} for e in evidence]
    similarity = np.clip((evidence_vecs @ dependency_vecs.T).max(axis=1), 0.0, 1.0)
    ranked = []
    for item, m in zip(evidence, similarity):
        ranked.append(
            {
                **item.model_dump(),
                "retrieval_score": item.score,
                "dependency_similarity": round(float(m), 6),
                "score": round(alpha * item.score + beta * float(m), 6),
            }
        )
    return sorted(ranked, key=lambda e: -e["score"])
