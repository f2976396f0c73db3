"""Retrievers over one index: dense, BM25, local entity search, community search, fact-filtered PPR.

Every retriever returns ``Evidence`` with a score in [0, 1] (divided by the best
score of its list, so it is the ``R_i`` that dependency-aware reranking mixes).
Retrievers keep no per-query state: parallel branches may call one at once.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from graph_store.errors import IndexStoreError
from graph_store.extraction import find_entity_mentions
from graph_store.graph import KnowledgeGraph, document_subjects, normalize_name
from graph_store.index import KnowledgeIndex
from graph_store.llm import ChatClient, json_in_reply
from graph_store.store import STORE_ERRORS, GraphReader, Store
from graph_store.vectors import COLLECTIONS, AnnGraph, Exported
from prompts import render_prompt

_PRONOUN = re.compile(r"\b(?:he|his|him|himself|she|her|hers|herself)\b")

EvidenceKind = Literal["chunk", "entity", "fact", "report"]


class Evidence(BaseModel):
    id: str
    kind: EvidenceKind
    text: str
    score: float = Field(ge=0.0, le=1.0)
    doc_ids: list[str] = []
    chunk_ids: list[str] = []
    titles: list[str] = []
    retriever: str
    details: dict[str, Any] = {}


def _scaled(items: Sequence[tuple[Any, float]]) -> list[tuple[Any, float]]:
    """Scores divided by the best one (negatives clipped): comparable within one list, in [0, 1]."""
    best = max((s for _, s in items), default=0.0)
    return [(x, float(max(0.0, s) / best) if best > 0 else 0.0) for x, s in items]


def approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


@dataclass(frozen=True)
class RetrievalSettings:
    top_k: int = 5
    # PPR (HippoRAG 2 defaults where they exist)
    damping: float = 0.5
    # Power iteration stops below this L1 change: dev-set recall is the same from 1e-2 to 1e-7.
    ppr_tolerance: float = 1e-3
    fact_top_k: int = 5
    fact_keep: int = 4
    passage_node_weight: float = 0.05
    dense_prior_k: int = 100
    # Mention -> entity name cosine to link; None: the entity vectors' own (Embedder.name_similarity).
    link_threshold: float | None = None
    overlap_bonus: float = 0.1
    # Offline (no LLM filter) facts are noisy: their entities seed with this weight
    # beside entities named in the question (weight 1).
    unfiltered_fact_weight: float = 0.5
    # Final passage score = PPR mass (relative to the best) + overlap bonus + this x dense score (min-max).
    dense_rerank_weight: float = 0.5
    # ... + this when the passage's document is titled after a seed entity (the passage is about it).
    title_bonus: float = 0.3
    # Second hop: passages about entities named by the top passages score parent x this x cosine.
    bridge_weight: float = 1.0
    bridge_parents: int = 2
    # local search
    local_entities: int = 8
    local_token_budget: int = 2000
    # community search: an int, or "auto" (leaf for specific questions, top level for abstract ones)
    community_level: int | Literal["auto"] = "auto"


@dataclass
class PPRResult:
    evidence: list[Evidence]
    facts: list[Evidence]  # candidate facts, best first
    kept_facts: list[Evidence]
    seeds: dict[str, float]  # entity id -> reset weight
    fallback: str | None = None  # why dense retrieval answered instead, if it did
    filter_error: str | None = None


FactFilter = Callable[[str, list[Evidence]], list[Evidence]]


class LLMFactFilter:
    """ProPEX-RAG's prompt-driven filter: the LLM keeps the facts that help answer the query."""

    def __init__(self, client: ChatClient, keep: int = 4):
        self.client = client
        self.keep = keep

    def __call__(self, query: str, facts: list[Evidence]) -> list[Evidence]:
        """The facts the model keeps; ValueError (the caller falls back) when its reply is not a choice among them."""
        listing = "\n".join(f"{i + 1}. {f.text}" for i, f in enumerate(facts))
        reply = self.client.invoke(
            [HumanMessage(render_prompt("fact_filter", question=query, facts=listing, keep=self.keep))],
            task="fact_filter",
        )
        raw = str(reply.content)
        data = json_in_reply(raw)
        if not isinstance(data, dict) or not isinstance(data.get("keep"), list):
            raise ValueError(f"no 'keep' list in the reply {raw[:60]!r}")
        numbers = [int(n) if isinstance(n, (int, float)) or str(n).strip().isdigit() else None for n in data["keep"]]
        outside = [str(n) for n, v in zip(data["keep"], numbers) if v is None or not 1 <= v <= len(facts)]
        if outside:
            raise ValueError(f"it chose {', '.join(outside)}, not fact numbers 1-{len(facts)}")
        return [facts[v - 1] for v in dict.fromkeys(numbers) if v is not None][: self.keep]


class Retrievers:
    """All retrievers over one opened index; load once, share across threads."""

    def __init__(self, index: KnowledgeIndex, settings: RetrievalSettings | None = None):
        self.index = index
        self.settings = settings or RetrievalSettings()
        # Each collection is searched with a query vector from its own embedder (static or the model).
        self.embedders = {name: index.static_embedders.get(name, index.embedder) for name in COLLECTIONS}
        if self.settings.link_threshold is None:
            self.settings = dataclasses.replace(
                self.settings, link_threshold=self.embedders["entities"].name_similarity
            )
        # Everything is read from one complete generation, so a build running meanwhile changes nothing here.
        self.generation = index.generation()
        self.store: GraphReader = Store.open_snapshot(self.generation.path("snapshot.sqlite"))
        try:
            self.graph = KnowledgeGraph.load(self.generation.dir)
            # The matrices and graphs are memory-mapped: the process holds the pages its queries touch.
            with Exported(self.generation.dir) as exported:
                self.matrices = {name: (exported.ids(name).tolist(), exported.matrix(name)) for name in COLLECTIONS}
                self.hnsw = {
                    name: AnnGraph(exported.graph(name), exported.graph_rows(name))
                    for name in COLLECTIONS
                    if exported.has_graph(name)
                }
            self._load_tables()
        except (OSError, ValueError, KeyError, RuntimeError, zipfile.BadZipFile, *STORE_ERRORS) as exc:
            raise IndexStoreError(
                f"{index.dir}: the derived state cannot be read ({exc.__class__.__name__}: {exc}); "
                f"run `kgrag repair --index-dir {index.dir}`"
            ) from None

    @property
    def pending_changes(self) -> bool:
        """The record holds changes this generation lacks (a build is running, or was interrupted)."""
        return self.index.pending_changes(self.generation)

    def _load_tables(self) -> None:
        store = self.store
        from graph_store.ppr import PersonalizedPageRank  # scipy loads with the retrievers, not with Evidence

        self.pagerank = PersonalizedPageRank(
            self.graph.adjacency,
            self.graph.out_weight,
            local_min_nodes=self.index.settings.ppr_local_min_nodes,
            push_threshold=self.index.settings.ppr_push_threshold,
        )
        self.node_index = self.graph.node_index()
        self.chunk_docs = store.chunk_documents()
        self.chunk_text = store.chunk_texts()
        self.entity_names = store.entity_names()
        self.entity_of = store.aliases()  # every name form -> its entity: merged names resolve to one node
        self.fact_entities = store.fact_entities()
        # "Lilu (mythology)" is about "lilu": entities a chunk is about, and chunks about an entity
        self.chunk_subjects = {
            c: {self.entity_of.get(k, k) for k in map(normalize_name, document_subjects(t))}
            for c, (_, t) in self.chunk_docs.items()
        }
        self.about_chunks: dict[str, list[str]] = {}
        for chunk_id, subjects in self.chunk_subjects.items():
            for entity in subjects:
                self.about_chunks.setdefault(entity, []).append(chunk_id)
        self.chunk_entities: dict[str, set[str]] = {}
        for entity, chunk in store.mentions():
            self.chunk_entities.setdefault(chunk, set()).add(entity)
        self.positions = {name: {i: n for n, i in enumerate(ids)} for name, (ids, _) in self.matrices.items()}
        self.text_of = {
            "facts": store.fact_texts(),
            "chunks": self.chunk_text,
            "entities": self.entity_names,
            "reports": store.report_texts(),
        }
        self._bm25: tuple[list[str], Any] | None = None  # chunk ids and their BM25 index, built on first use
        self._bm25_lock = threading.Lock()

    # --- helpers --------------------------------------------------------------------------------

    def embed(self, text: str) -> np.ndarray:
        """The query in the model's space (chunks; the ``vector`` the retrievers take)."""
        return self.index.embedder.embed([text])[0]

    def query_vector(self, name: str, query: str, vector: np.ndarray | None = None) -> np.ndarray:
        """The query in collection ``name``'s space: ``vector`` (the model's) when the collection shares it."""
        embedder = self.embedders[name]
        if embedder is self.index.embedder:
            return self.embed(query) if vector is None else vector
        return embedder.embed([query])[0]

    def search(
        self, name: str, vector: np.ndarray, k: int, allowed: set[str] | None = None
    ) -> list[tuple[str, float, str]]:
        """Top-k (id, cosine, text) in collection ``name`` (optionally among ``allowed`` ids): on its
        HNSW graph when it has one, else exact."""
        ids, matrix = self.matrices[name]
        if not ids or k <= 0:
            return []
        if name in self.hnsw and allowed is None:
            found = self.hnsw[name].search(vector, k)
            self._check_finite(name, np.array([score for _, score in found], dtype=np.float32))
            return [(ids[i], score, self.text_of[name][ids[i]]) for i, score in found]
        with np.errstate(invalid="ignore", over="ignore"):  # damaged rows: _check_finite says so in one line
            scores = self._check_finite(name, matrix @ vector)
        if allowed is not None:
            scores = np.where([i in allowed for i in ids], scores, -np.inf)
        k = min(k, len(ids))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        texts = self.text_of[name]
        return [
            (ids[i], score, texts[ids[i]]) for i, score in zip(top.tolist(), scores[top].tolist()) if score != -np.inf
        ]

    def vectors_of(self, name: str, wanted: list[str]) -> dict[str, np.ndarray]:
        """Stored vectors of the ``wanted`` ids that have one."""
        matrix, position = self.matrices[name][1], self.positions[name]
        found = {i: matrix[position[i]] for i in wanted if i in position}
        if found:
            self._check_finite(name, np.stack(list(found.values())))
        return found

    def _check_finite(self, name: str, values: np.ndarray) -> np.ndarray:
        """``values`` computed from collection ``name``'s stored vectors, when they are all numbers. The files are
        checked by size only when a reader opens them (a checksum would read them whole): bytes overwritten with
        garbage show up here as NaN, and must not rank evidence."""
        if not np.isfinite(values).all():
            raise IndexStoreError(
                f"{self.index.dir}: the stored {name} vectors hold values that are not numbers (a damaged file); "
                f"run `kgrag check --index-dir {self.index.dir}`, then `kgrag repair --index-dir {self.index.dir}`"
            )
        return values

    def _chunk_evidence(self, scored: list[tuple[str, float]], retriever: str, details=None) -> list[Evidence]:
        out = []
        for chunk_id, score in _scaled(scored):
            doc_id, title = self.chunk_docs[chunk_id]
            out.append(
                Evidence(
                    id=chunk_id,
                    kind="chunk",
                    text=self.chunk_text[chunk_id],
                    score=round(score, 6),
                    doc_ids=[doc_id],
                    chunk_ids=[chunk_id],
                    titles=[title],
                    retriever=retriever,
                    details=(details or {}).get(chunk_id, {}),
                )
            )
        return out

    def link_entities(self, query: str) -> dict[str, float]:
        """Entities named in the query by their exact (normalised) names; when none is, the nearest
        entity to each mention above the link threshold. (Embedding every unmatched mention costs as
        much as embedding the query, and on the dev sets it changed no Recall@5.)"""
        mentions = [m[2] for m in find_entity_mentions(query)]
        keys = [self.entity_of.get(normalize_name(m)) for m in mentions]
        linked = {k: 1.0 for k in keys if k in self.entity_names}
        if linked or not mentions:
            return linked
        threshold = self.settings.link_threshold or 0.0  # set from the entity vectors' own in __init__
        for mention_vector in self.embedders["entities"].embed(mentions):
            for entity, similarity, _ in self.search("entities", mention_vector, 1):
                if similarity >= threshold:
                    linked[entity] = max(linked.get(entity, 0.0), similarity)
        return linked

    def pronoun_of(self, name: str) -> str | None:
        """ "he" or "she" when the article about ``name`` (its document's title) calls its subject so, by a clear
        majority of its pronouns; None when the corpus has no such article or its pronouns do not say. The offline
        reader uses it for relations that name a sex: the man named with Clara in "the son of A and B" is not
        the mother."""
        key = normalize_name(name)
        chunks = self.about_chunks.get(self.entity_of.get(key, key), [])
        if not chunks:
            return None
        words = _PRONOUN.findall(self.chunk_text[chunks[0]].lower())
        he = sum(w in ("he", "his", "him", "himself") for w in words)
        she = len(words) - he
        return "he" if he > 2 * she else "she" if she > 2 * he else None

    # --- baselines ------------------------------------------------------------------------------

    def dense(self, query: str, k: int | None = None, vector: np.ndarray | None = None) -> list[Evidence]:
        vector = self.embed(query) if vector is None else vector
        hits = self.search("chunks", vector, k or self.settings.top_k)
        return self._chunk_evidence([(i, s) for i, s, _ in hits], "dense")

    def bm25(self, query: str, k: int | None = None) -> list[Evidence]:
        import bm25s

        with self._bm25_lock:
            if self._bm25 is None:
                ids = sorted(self.chunk_text)
                corpus = [f"{self.chunk_docs[i][1]} {self.chunk_text[i]}" for i in ids]
                retriever = bm25s.BM25()
                retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
                self._bm25 = (ids, retriever)
        ids, retriever = self._bm25
        k = min(k or self.settings.top_k, len(ids))
        docs, scores = retriever.retrieve(
            bm25s.tokenize([query], stopwords="en", show_progress=False), k=k, show_progress=False, n_threads=1
        )
        return self._chunk_evidence([(ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0]) if s > 0], "bm25")

    # --- PPR (ProPEX-RAG / HippoRAG 2) ------------------------------------------------------------

    def facts(self, query: str, vector: np.ndarray | None, k: int) -> list[Evidence]:
        hits = self.search("facts", self.query_vector("facts", query, vector), k)
        scaled = _scaled([(i, s) for i, s, _ in hits])
        return [
            Evidence(
                id=fact_id,
                kind="fact",
                text=text,
                score=round(score, 6),
                retriever="fact-search",
                details={"cosine": round(cosine, 4), "entities": list(self.fact_entities.get(fact_id, ()))},
            )
            for (fact_id, cosine, text), (_, score) in zip(hits, scaled)
        ]

    def ppr(
        self, query: str, k: int | None = None, fact_filter: FactFilter | None = None, vector: np.ndarray | None = None
    ) -> PPRResult:
        """Facts -> (filter) -> entity seeds + dense passage prior -> PPR -> passages reranked by overlap."""
        vector = self.embed(query) if vector is None else vector
        facts = self.facts(query, vector, self.settings.fact_top_k)
        kept, error = self.filter_facts(query, facts, fact_filter)
        return self.rank_passages(
            query, facts, kept, filtered=fact_filter is not None, filter_error=error, k=k, vector=vector
        )

    def filter_facts(
        self, query: str, facts: list[Evidence], fact_filter: FactFilter | None
    ) -> tuple[list[Evidence], str | None]:
        """The facts kept: the filter's choice; the top facts by score without a filter or when it fails."""
        top = facts[: self.settings.fact_keep]
        if fact_filter is None or not facts:
            return top, None
        try:
            return fact_filter(query, facts), None
        except Exception as exc:  # noqa: BLE001 - the filter is an LLM; keep the best facts instead
            return top, f"fact filter failed ({exc}); kept the top facts by score"

    def rank_passages(
        self,
        query: str,
        facts: list[Evidence],
        kept: list[Evidence],
        filtered: bool,
        filter_error: str | None = None,
        k: int | None = None,
        vector: np.ndarray | None = None,
    ) -> PPRResult:
        s = self.settings
        k = k or s.top_k
        vector = self.embed(query) if vector is None else vector
        if filtered and facts and not kept and filter_error is None:
            return PPRResult(
                self.dense(query, k, vector), facts, [], {}, "no fact survived the filter: dense retrieval"
            )
        seeds: dict[str, float] = {}
        fact_weight = 1.0 if filtered else s.unfiltered_fact_weight
        for fact in kept:
            for entity in fact.details["entities"]:
                seeds[entity] = seeds.get(entity, 0.0) + fact_weight * fact.details["cosine"]
        if not filtered or not facts:  # offline (or no fact to filter): the question's own entities seed too
            for entity, sim in self.link_entities(query).items():
                seeds[entity] = seeds.get(entity, 0.0) + sim
        seeds = {
            e: float(w * self.graph.specificity[self.node_index[e]]) for e, w in seeds.items() if e in self.node_index
        }
        if not seeds:
            return PPRResult(
                self.dense(query, k, vector), facts, kept, {}, "no seed entity: dense retrieval", filter_error
            )

        total_seed = sum(seeds.values())
        reset = {self.node_index[entity]: weight / total_seed for entity, weight in seeds.items()}  # they sum to 1
        prior = self.search("chunks", vector, s.dense_prior_k)
        dense_score: dict[str, float] = {}
        if prior:
            scores = np.array([sim for _, sim, _ in prior])
            low, span = scores.min(), max(scores.max() - scores.min(), 1e-9)
            for (chunk_id, _, _), score in zip(prior, (scores - low) / span):
                # HippoRAG 2's passage_node_weight: a small dense prior on passage nodes (min-max scaled)
                node = self.node_index[chunk_id]
                reset[node] = reset.get(node, 0.0) + s.passage_node_weight * score
                dense_score[chunk_id] = float(score)
        nodes, mass = self.pagerank.scores(reset, s.damping, s.ppr_tolerance)
        passages = nodes >= self.graph.n_entities  # every node (exact PPR) or those the local push reached
        passage_index, passage_mass = nodes[passages] - self.graph.n_entities, mass[passages]
        n_top = min(max(k * 4, 20), len(passage_mass))
        top = np.argpartition(-passage_mass, n_top - 1)[:n_top] if n_top else np.array([], dtype=int)
        top = top[np.argsort(-passage_mass[top], kind="stable")]
        best = passage_mass[top[0]] if len(top) else 1.0
        scored, details = [], {}
        seed_set = set(seeds)
        for i in top:
            chunk_id = self.graph.chunk_ids[passage_index[i]]
            overlap = len(self.chunk_entities.get(chunk_id, set()) & seed_set) / len(seed_set)
            about_seed = bool(self.chunk_subjects.get(chunk_id, set()) & seed_set)
            scored.append(
                (
                    chunk_id,
                    float(passage_mass[i] / best)
                    + s.overlap_bonus * overlap
                    + s.dense_rerank_weight * dense_score.get(chunk_id, 0.0)
                    + s.title_bonus * about_seed,
                )
            )
            details[chunk_id] = {"ppr_mass": float(passage_mass[i]), "seed_overlap": round(overlap, 3)}
        scored.sort(key=lambda x: -x[1])
        scored = self.follow_links(scored, vector, details)
        return PPRResult(self._chunk_evidence(scored[:k], "ppr", details), facts, kept, seeds, None, filter_error)

    def follow_links(
        self, scored: list[tuple[str, float]], vector: np.ndarray, details: dict
    ) -> list[tuple[str, float]]:
        """The second hop: passages about an entity that a top passage names, scored by the
        parent's score times their own similarity to the query."""
        s = self.settings
        if s.bridge_weight <= 0 or not scored:
            return scored
        best = dict(scored)
        matrix, position = self.matrices["chunks"][1], self.positions["chunks"]
        for parent, parent_score in scored[: s.bridge_parents]:
            for entity in self.chunk_entities.get(parent, ()):
                for chunk in self.about_chunks.get(entity, ()):
                    if chunk == parent or chunk not in position:
                        continue
                    score = parent_score * s.bridge_weight * max(0.0, float(matrix[position[chunk]] @ vector))
                    if score > best.get(chunk, 0.0):
                        best[chunk] = score
                        details.setdefault(chunk, {})["linked_from"] = parent
        return sorted(best.items(), key=lambda x: -x[1])

    # --- local search (GraphRAG / PankRAG "local") -------------------------------------------------

    def local(self, query: str, k: int | None = None, vector: np.ndarray | None = None) -> list[Evidence]:
        """Matched entities, their relations, their communities' reports and their source chunks, in a token budget."""
        s, store = self.settings, self.store
        matched = {
            e: sim
            for e, sim, _ in self.search("entities", self.query_vector("entities", query, vector), s.local_entities)
        }
        for entity, sim in self.link_entities(query).items():
            matched[entity] = max(matched.get(entity, 0.0), sim)
        if not matched:
            return []
        ids = list(matched)
        entities = [
            (
                Evidence(
                    id=e.id,
                    kind="entity",
                    score=1.0,
                    retriever="local",
                    text=f"{e.name} ({e.type}): {e.description.splitlines()[0] if e.description else ''}".strip(": "),
                    details={"similarity": round(matched[e.id], 4)},
                ),
                matched[e.id],
            )
            for e in store.entities_by_id(ids)
        ]
        facts = [
            (
                Evidence(
                    id=f.id,
                    kind="fact",
                    text=f.text,
                    score=1.0,
                    retriever="local",
                    details={"entities": [f.subject_id, f.object_id]},
                ),
                (matched.get(f.subject_id, 0) + matched.get(f.object_id, 0)) * f.strength * (1 + np.log1p(f.n_chunks)),
            )
            for f in store.facts_touching(ids)
        ]
        chunk_hits: dict[str, float] = {}
        for e, c in store.mentions_of(ids):
            chunk_hits[c] = chunk_hits.get(c, 0.0) + matched[e] * self.graph.specificity[self.node_index[e]] ** 0.5
        chunks = [(c, score) for c, score in chunk_hits.items()]
        reports = [
            (Evidence(id=cid, kind="report", text=f"{title}: {summary}", score=1.0, retriever="local"), hits)
            for cid, title, summary, hits in store.leaf_reports_of(ids, 3)
        ]
        # Budget shares as GraphRAG's local search: source text first, then graph context.
        budget = s.local_token_budget
        picked: list[Evidence] = []
        chunk_evidence = self._chunk_evidence(sorted(chunks, key=lambda x: -x[1]), "local")
        for share, items in (
            (0.5, [(e, e.score) for e in chunk_evidence]),
            (0.25, _scaled(facts)),
            (0.15, _scaled(entities)),
            (0.10, _scaled(reports)),
        ):
            spent = 0
            for item, score in sorted(items, key=lambda x: -x[1]):
                cost = approx_tokens(item.text)
                if spent + cost > share * budget:
                    continue
                spent += cost
                picked.append(item.model_copy(update={"score": round(score, 6)}))
        return sorted(picked, key=lambda e: -e.score)[: max(k or s.top_k, 1) * 4]

    # --- community search --------------------------------------------------------------------------

    def community_level(self, kind: Literal["specific", "abstract"]) -> int:
        configured = self.settings.community_level
        levels = list(self.store.communities_per_level())
        if not levels:
            return 0
        if configured != "auto":
            return min(int(configured), levels[-1])
        return levels[0] if kind == "abstract" else levels[-1]

    def community(
        self,
        query: str,
        k: int | None = None,
        kind: Literal["specific", "abstract"] = "abstract",
        vector: np.ndarray | None = None,
    ) -> list[Evidence]:
        """Reports at one level of the hierarchy (plus leaves above it, so the whole graph is covered),
        ranked by similarity weighted by importance."""
        level = self.community_level(kind)
        vector = self.query_vector("reports", query, vector)
        allowed = {
            cid: (rating, title, summary, findings)
            for cid, rating, title, summary, findings in self.store.reports_covering_level(level)
        }
        hits = self.search("reports", vector, len(allowed), set(allowed)) if allowed else []
        scored = [(cid, sim * (0.75 + 0.25 * allowed[cid][0] / 10)) for cid, sim, _ in hits if cid in allowed]
        scored.sort(key=lambda x: -x[1])
        out = []
        for cid, score in _scaled(scored[: k or self.settings.top_k]):
            rating, title, summary, findings = allowed[cid]
            points = "; ".join(f.get("summary", "") for f in json.loads(findings)[:5])
            out.append(
                Evidence(
                    id=cid,
                    kind="report",
                    text=f"{title}\n{summary}\n{points}".strip(),
                    score=round(score, 6),
                    retriever="community",
                    details={"level": level, "rating": rating},
                )
            )
        return out


def doc_ranking(evidence: list[Evidence]) -> list[str]:
    """Distinct documents in evidence order (for passage recall)."""
    return list(dict.fromkeys(d for e in evidence for d in e.doc_ids))
