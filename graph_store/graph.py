"""The knowledge graph: entity resolution, derived tables, synonymy edges, the sparse matrix PPR walks.

Nodes are entities and passages (chunks). Edges: mentioned-in (entity-passage),
relation (entity-entity, weighted by repeated evidence) and synonymy
(entity-entity, weighted by embedding similarity).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from graph_store import resolution
from graph_store.extraction import ChunkExtraction
from graph_store.generations import CSR_FILES
from graph_store.resolution import NameForm
from graph_store.store import Alias, Entity, Fact, GraphReader, GraphTables, Proposal, Relation, Store

if TYPE_CHECKING:
    import scipy.sparse as sp

_PUNCT = re.compile(r"[^\w\s]")


@functools.lru_cache(maxsize=65536)  # the reader normalises each name of each sentence it reads
def normalize_name(name: str) -> str:
    """The resolution key: case, accents, punctuation, whitespace, a leading "the", a trailing "'s"."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower().replace("&", " and ")
    text = re.sub(r"['’]s\b", "", text)
    text = " ".join(_PUNCT.sub(" ", text).split())
    return text[4:] if text.startswith("the ") and len(text) > 4 else text


def document_subjects(title: str) -> list[str]:
    """Names a document is about, from its title: "Lilu (mythology)" -> Lilu; "Leland, North Carolina"
    -> that and Leland (one comma only: a place and its region, not a title that is a list)."""
    subject = title.split(" (")[0].strip()
    names = [subject] if subject else []
    head, _, tail = subject.partition(", ")
    if tail and "," not in tail and head and len(head.split()) <= 3:
        names.append(head)
    return names


_WORD = re.compile(r"\w+")


def _capitalised(token: str) -> bool:
    return token[:1].isupper() or token[:1].isdigit()


def title_mentions(titles: dict[str, str], chunks: list[tuple[str, str, str]]) -> set[tuple[str, str]]:
    """(name, chunk id) pairs linking chunks to the documents they name, as Wikipedia links do.

    ``titles`` maps document id -> title; ``chunks`` are (chunk id, document id, text). A chunk is
    about its own document's subjects, and mentions another document's subject where its words
    appear with the same case (longest match first). A one-word name next to another capitalised
    word is part of a longer name ("Young" in "Neil Young"), so it does not count.
    """
    surface: dict[tuple[str, ...], str] = {}  # word tuple -> the name
    # first word -> the word counts of the names it starts, longest first: a token is tried against a few lengths,
    # not against every name sharing its first word (thousands of people share a first name in a large corpus)
    lengths: dict[str, set[int]] = defaultdict(set)
    for title in titles.values():
        for name in document_subjects(title):
            words = tuple(_WORD.findall(name))
            if words and _capitalised(words[0]) and (len(words) > 1 or len(words[0]) > 2) and words not in surface:
                surface[words] = name
                lengths[words[0]].add(len(words))
    longest_first = {word: sorted(n, reverse=True) for word, n in lengths.items()}
    found: set[tuple[str, str]] = set()
    for chunk_id, doc_id, text in chunks:
        found.update((name, chunk_id) for name in document_subjects(titles.get(doc_id, "")))
        tokens = _WORD.findall(text)
        i = 0
        while i < len(tokens):
            match = next(
                (w for n in longest_first.get(tokens[i], ()) if (w := tuple(tokens[i : i + n])) in surface), None
            )
            if match is None:
                i += 1
                continue
            end = i + len(match)
            alone = len(match) > 1 or not (
                (i > 0 and _capitalised(tokens[i - 1])) or (end < len(tokens) and _capitalised(tokens[end]))
            )
            if alone:
                found.add((surface[match], chunk_id))
            i = end
    return found


def _short_hash(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


@dataclass
class _Extracted:
    """What the chunk extractions say, by the resolution key of each name (before merges)."""

    forms: dict[str, NameForm] = field(default_factory=dict)
    descriptions: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    facts: dict[str, dict] = field(
        default_factory=dict
    )  # fact id -> subject, predicate, object, description, strengths
    fact_sources: set[tuple[str, str]] = field(default_factory=set)

    def note_entity(self, name: str, chunk_id: str, type_: str = "unknown", description: str = "") -> str | None:
        key = normalize_name(name)
        if not key:
            return None
        form = self.forms.setdefault(key, NameForm(key))
        form.names[name] += 1
        form.types[type_.lower() or "unknown"] += 1
        if description and description not in self.descriptions[key] and len(self.descriptions[key]) < 8:
            self.descriptions[key].append(description)
        form.chunks.add(chunk_id)
        return key

    def note_fact(self, s: str, predicate: str, o: str, description: str, strength: float, chunk_id: str) -> None:
        fact_id = _short_hash(s, predicate, o)
        row = self.facts.setdefault(fact_id, {"s": s, "p": predicate, "o": o, "d": description, "strengths": []})
        row["strengths"].append(strength)
        self.fact_sources.add((fact_id, chunk_id))


def _extracted(store: Store, titles: dict[str, str], chunks: list[tuple[str, str, str]]) -> _Extracted:
    found = _Extracted()
    for chunk_id, payload in store.successful_extractions():
        extraction = ChunkExtraction.model_validate_json(payload)
        for e in extraction.entities:
            found.note_entity(e.name, chunk_id, e.type, e.description)
        for r in extraction.relations:
            s, o = found.note_entity(r.subject, chunk_id), found.note_entity(r.object, chunk_id)
            predicate = " ".join(r.predicate.lower().split()) or "related to"
            if s and o and s != o:
                found.note_fact(s, predicate, o, r.description, r.strength, chunk_id)
    # Links to the documents a chunk names: the hyperlinks of an entity-centric corpus, without an LLM.
    for name, chunk_id in sorted(title_mentions(titles, chunks)):
        found.note_entity(name, chunk_id)
    for row in found.facts.values():  # what resolution weighs: neighbours, and dated facts that may conflict
        found.forms[row["s"]].neighbours.add(row["o"])
        found.forms[row["o"]].neighbours.add(row["s"])
        found.forms[row["s"]].dates[row["p"]].update(_YEARS.findall(row["o"]))
    return found


_YEARS = re.compile(r"\b(?:1\d{3}|20\d{2})\b")


@dataclass
class Resolution:
    """The names of the record's extractions and the merges they suggest: what the decisions are applied to. It
    depends on the extractions and the entity embedder only, so a refresh that applies only decisions reuses the one
    its previous generation kept (``save``/``load``) instead of resolving every name again."""

    found: _Extracted
    candidates: list[resolution.Candidate]
    source: Path | None = None  # the file it was loaded from

    def save(self, path: Path) -> None:
        if self.source is not None:  # unchanged: a copy of the file is faster than writing it again
            shutil.copyfile(self.source, path)
            return
        forms = [
            [f.key, dict(f.names), dict(f.types), sorted(f.chunks), sorted(f.neighbours)]
            + [{p: sorted(y) for p, y in f.dates.items()}]
            for f in self.found.forms.values()
        ]
        data = {
            "forms": forms,
            "descriptions": self.found.descriptions,
            "facts": self.found.facts,
            "fact_sources": sorted(self.found.fact_sources),
            "candidates": [asdict(c) for c in self.candidates],
        }
        path.write_text(json.dumps(data, ensure_ascii=False))

    @classmethod
    def load(cls, path: Path) -> Resolution:
        data = json.loads(path.read_text())
        found = _Extracted(facts=data["facts"], fact_sources={tuple(p) for p in data["fact_sources"]})
        found.descriptions.update(data["descriptions"])
        for key, names, types, chunks, neighbours, dates in data["forms"]:
            found.forms[key] = NameForm(key, Counter(names), Counter(types), set(chunks), set(neighbours))
            found.forms[key].dates.update({p: set(y) for p, y in dates.items()})
        return cls(found, [resolution.Candidate(**c) for c in data["candidates"]], path)


def resolve_names(store: Store, embed: Callable[[list[str]], np.ndarray] | None = None) -> Resolution:
    """Every name form of the successful chunk extractions and the candidate merges between them; ``embed`` (the
    entity embedder) adds the vector similarity of their names."""
    titles, chunks = store.document_titles(), store.chunks()
    found = _extracted(store, titles, chunks)
    passages = {c: (d, titles.get(d, ""), text) for c, d, text in chunks}
    candidates = resolution.candidates(
        found.forms, passages, resolution.vector_similarity(embed) if embed is not None else None
    )
    return Resolution(found, candidates)


def derive_graph_tables(
    store: Store,
    auto_merge: float | None = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    resolved: Resolution | None = None,
) -> list[Proposal]:
    """Rebuild entities, mentions, facts, relations and aliases from every successful chunk extraction (``resolved``:
    their resolution, made here when not given), with the merges in force (the record's decisions, and those above
    ``auto_merge``: graph_store/resolution.py). Returns the merges proposed and not decided."""
    resolved = resolved or resolve_names(store, embed)
    found, candidates = resolved.found, resolved.candidates
    decisions = [(d.verdict, normalize_name(d.a), normalize_name(d.b)) for d in store.decisions()]
    canonical, merged = resolution.merge_groups(found.forms, decisions, candidates, auto_merge)
    _write_graph_tables(store, found, canonical, merged)
    return resolution.open_proposals(found.forms, candidates, canonical, decisions)


def _write_graph_tables(
    store: Store, found: _Extracted, canonical: dict[str, str], merged: dict[tuple[str, str], str]
) -> None:
    """The tables with every group of merged names as one entity (named by its fullest form), in one transaction."""
    forms = found.forms
    names: dict[str, Counter] = defaultdict(Counter)
    types: dict[str, Counter] = defaultdict(Counter)
    descriptions: dict[str, list[str]] = defaultdict(list)
    mentions: set[tuple[str, str]] = set()
    for key, form in forms.items():
        head = canonical[key]
        names[head].update(form.names)
        types[head].update(form.types)
        descriptions[head] += [d for d in found.descriptions.get(key, ()) if d not in descriptions[head]]
        mentions.update((head, c) for c in form.chunks)
    sources_of: dict[str, list[str]] = defaultdict(list)
    for fact_id, chunk_id in found.fact_sources:
        sources_of[fact_id].append(chunk_id)
    fact_rows: dict[str, dict] = {}
    fact_sources: set[tuple[str, str]] = set()
    for fact_id, row in found.facts.items():
        s, o = canonical[row["s"]], canonical[row["o"]]
        if s == o:  # a fact between two names of one thing says nothing
            continue
        new_id = _short_hash(s, row["p"], o)
        target = fact_rows.setdefault(new_id, {**row, "s": s, "o": o, "strengths": []})
        target["strengths"] += row["strengths"]
        fact_sources.update((new_id, c) for c in sources_of[fact_id])

    def display(key: str) -> str:
        return forms[key].display

    def best_type(key: str) -> str:
        known = [(n, t) for t, n in types[key].items() if t != "unknown"]
        return min(known, key=lambda x: (-x[0], x[1]))[1] if known else "unknown"

    how: dict[str, str] = {}
    for pair, reason in merged.items():
        for key in pair:
            how.setdefault(key, reason)
    chunk_counts = Counter(key for key, _ in mentions)
    fact_counts = Counter(f for f, _ in fact_sources)
    relations: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
    for row in fact_rows.values():
        pair = tuple(sorted((row["s"], row["o"])))
        relations[pair][0] += sum(row["strengths"])
        relations[pair][1] += 1

    store.replace_graph_tables(  # one transaction
        [Entity(k, display(k), best_type(k), "\n".join(descriptions[k][:8]), chunk_counts[k]) for k in sorted(names)],
        sorted(mentions),
        [
            Fact(
                f,
                r["s"],
                r["p"],
                r["o"],
                f"{display(r['s'])} {r['p']} {display(r['o'])}",
                r["d"],
                round(float(np.mean(r["strengths"])), 4),
                fact_counts[f],
            )
            for f, r in sorted(fact_rows.items())
        ],
        sorted(fact_sources),
        [Relation(a, b, round(w, 4), int(n)) for (a, b), (w, n) in sorted(relations.items())],
        [Alias(k, canonical[k], forms[k].display, "" if canonical[k] == k else how.get(k, "")) for k in sorted(forms)],
    )


# Cosines are compared with the threshold and ranked in float64, from the float32 products' candidates within this
# margin: a product's float32 rounding depends on how the rows were blocked, so an update and a full computation
# would otherwise disagree on a pair at the threshold or in the 4th decimal.
_MARGIN = 1e-4


def _cosines(vectors: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosines of the row pairs (a[i], b[i]), summed the same way wherever they are computed."""
    return (vectors[a].astype(np.float64) * vectors[b].astype(np.float64)).sum(axis=1)


def synonym_pairs(
    ids: list[str],
    vectors: np.ndarray,
    threshold: float,
    top_k: int,
    block: int = 512,
    exact_max: int | None = None,
) -> list[tuple[str, str, float]]:
    """Pairs of distinct entities among each other's nearest neighbours with cosine >= threshold.

    A pair is kept when it is among the top_k + 1 neighbours (ties: lower row first) of either entity,
    as the blocked top-k search this replaces did. Only pairs above the threshold can be kept, so a
    block of rows is compared with the rows from its own start on (the similarity is symmetric: half
    the products) and the top neighbours are taken among the few pairs above the threshold instead of
    sorting every row: 46 s -> 12 s for 41k entities of 2Wiki on a busy machine.

    Comparing every pair grows with the square of the entities (hours at a million, and a block of
    products of 2 GB), so above ``exact_max`` entities the candidates are each entity's nearest
    neighbours on an HNSW graph instead (faiss, approximate: a neighbour it misses is a pair lost).
    """
    k = top_k + 1
    if exact_max is not None and len(ids) > exact_max:
        a, b = _hnsw_candidates(vectors, threshold, k)
    else:
        a, b = _blocked_candidates(vectors, threshold, block)
    sim = _cosines(vectors, a, b)
    a, b, sim = a[sim >= threshold], b[sim >= threshold], sim[sim >= threshold]
    node, other, both = np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([sim, sim])
    order = np.lexsort((other, -both, node))  # per entity: most similar first
    node, other, both = node[order], other[order], both[order]
    starts = np.searchsorted(node, node, side="left")
    kept = (np.arange(len(node)) - starts) < k
    pairs: dict[tuple[str, str], float] = {}
    for x, y, score in zip(node[kept].tolist(), other[kept].tolist(), both[kept].tolist()):
        key = (ids[x], ids[y]) if ids[x] < ids[y] else (ids[y], ids[x])
        pairs[key] = round(score, 4)
    return [(x, y, score) for (x, y), score in sorted(pairs.items())]


def _blocked_candidates(vectors: np.ndarray, threshold: float, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (row, col), row < col, whose float32 product is within _MARGIN of the threshold or above."""
    first, second = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for start in range(0, len(vectors), block):
        products = vectors[start : start + block] @ vectors[start:].T
        rows, cols = np.nonzero(products >= threshold - _MARGIN)
        upper = cols > rows  # cols count from ``start``: the pair (row, col) with row < col, once
        first.append(start + rows[upper])
        second.append(start + cols[upper])
    return np.concatenate(first), np.concatenate(second)


def _hnsw_candidates(
    vectors: np.ndarray, threshold: float, k: int, batch: int = 65_536
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (row, col), row < col, of each row and its k nearest other rows on an HNSW graph, above the
    threshold (within _MARGIN). The graph has the parameters of the query-time ones (graph_store/vectors.py)."""
    import faiss

    from graph_store.vectors import HNSW_BUILD_DEPTH, HNSW_NEIGHBOURS, HNSW_SEARCH_DEPTH

    rows32 = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexHNSWFlat(rows32.shape[1], HNSW_NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_BUILD_DEPTH
    index.add(rows32)
    index.hnsw.efSearch = max(HNSW_SEARCH_DEPTH, 2 * k)
    first, second = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for start in range(0, len(rows32), batch):
        sims, near = index.search(rows32[start : start + batch], k + 1)  # +1: a row finds itself
        rows = np.repeat(np.arange(start, start + len(near), dtype=np.int64), k + 1)
        near, sims = near.ravel(), sims.ravel()
        keep = (near >= 0) & (near != rows) & (sims >= threshold - _MARGIN)
        first.append(np.minimum(rows[keep], near[keep]))
        second.append(np.maximum(rows[keep], near[keep]))
    pairs = np.unique(np.stack([np.concatenate(first), np.concatenate(second)], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


def _nearest_above(rows: np.ndarray, vectors: np.ndarray, threshold: float, k: int, block: int = 512):
    """(row, other row, cosine) for the k nearest other rows of each of ``rows`` with cosine >= threshold
    (ties: lower row first), as ``synonym_pairs`` ranks them."""
    for start in range(0, len(rows), block):
        part = rows[start : start + block]
        products = vectors[part] @ vectors.T
        for row, near in zip(part.tolist(), products >= threshold - _MARGIN):
            others = np.nonzero(near)[0]
            others = others[others != row]
            sims = _cosines(vectors, np.full(len(others), row), others)
            others, sims = others[sims >= threshold], sims[sims >= threshold]
            for i in np.lexsort((others, -sims))[:k].tolist():
                yield row, int(others[i]), float(sims[i])


def _changed_rows(before: tuple[list[str], np.ndarray], after: tuple[list[str], np.ndarray]) -> np.ndarray:
    """The vectors of the entities added, removed or moved between ``before`` and ``after`` (ids, vectors): new
    vectors of the added and moved ones, old vectors of the removed and moved ones."""
    (old_ids, old_vectors), (ids, vectors) = before, after
    old_row, row = {e: i for i, e in enumerate(old_ids)}, {e: i for i, e in enumerate(ids)}
    kept_new = np.array([row[e] for e in ids if e in old_row], dtype=np.int64)
    kept_old = np.array([old_row[e] for e in ids if e in old_row], dtype=np.int64)
    moved = np.any(vectors[kept_new] != old_vectors[kept_old], axis=1) if len(kept_new) else np.zeros(0, bool)
    added = [row[e] for e in ids if e not in old_row] + kept_new[moved].tolist()
    gone = [old_row[e] for e in old_ids if e not in row] + kept_old[moved].tolist()
    return np.vstack([vectors[added], old_vectors[gone]]).astype(np.float32)


def _rows_near(probes: np.ndarray, vectors: np.ndarray, floor: float) -> set[int]:
    """Rows of ``vectors`` with a cosine of at least ``floor`` to one of ``probes``."""
    near: set[int] = set()
    for start in range(0, len(probes), 512):
        near.update(np.nonzero((probes[start : start + 512] @ vectors.T >= floor).any(axis=0))[0].tolist())
    return near


def updated_synonym_pairs(
    before: tuple[list[str], np.ndarray],
    pairs: list[tuple[str, str, float]],
    after: tuple[list[str], np.ndarray],
    threshold: float,
    top_k: int,
    max_ranked: float = 0.5,
) -> list[tuple[str, str, float]] | None:
    """What ``synonym_pairs`` gives for ``after`` (sorted ids, vectors), from its ``pairs`` for ``before``: only the
    entities near a changed one are ranked again. None when that is more than ``max_ranked`` of them (a full
    computation compares half the pairs).

    An entity's nearest neighbours can change only if an entity added, removed or moved lies above the threshold
    from it (with its old or new vector): those are the affected ones (the added and moved ones among them). A pair
    of two unaffected entities is kept as it was; a pair touching an affected one is decided again from both
    entities' rankings, so every entity above the threshold from an affected one is ranked again too."""
    ids, vectors = after
    probes = _changed_rows(before, after)
    if len(probes) > max_ranked * len(ids):
        return None
    affected = _rows_near(probes, vectors, threshold - _MARGIN)  # (a changed row is near its own vector)
    if len(affected) > max_ranked * len(ids):
        return None
    ranked = affected | _rows_near(vectors[sorted(affected)], vectors, threshold - _MARGIN)
    if len(ranked) > max_ranked * len(ids):
        return None
    affected_ids = {ids[i] for i in affected}
    present = set(ids)
    result = {
        (a, b): score
        for a, b, score in pairs
        if a in present and b in present and a not in affected_ids and b not in affected_ids
    }
    for x, y, score in _nearest_above(np.array(sorted(ranked), dtype=np.int64), vectors, threshold, top_k + 1):
        if x in affected or y in affected:
            result[(ids[x], ids[y]) if ids[x] < ids[y] else (ids[y], ids[x])] = round(score, 4)
    return [(a, b, score) for (a, b), score in sorted(result.items())]


def store_synonyms(store: GraphTables, pairs: list[tuple[str, str, float]]) -> None:
    store.replace_synonyms(pairs)


@dataclass
class KnowledgeGraph:
    """The graph as PPR needs it: node ids (entities first, then chunks) and a symmetric weighted adjacency."""

    entity_ids: list[str]
    chunk_ids: list[str]
    adjacency: sp.csr_matrix  # (n, n), symmetric
    specificity: np.ndarray  # per entity: 1 / number of passages mentioning it
    out_weight: np.ndarray | None = None  # per node: its row sum (saved with the CSR; None: not saved, as before)

    @property
    def n_entities(self) -> int:
        return len(self.entity_ids)

    def node_index(self) -> dict[str, int]:
        index = {e: i for i, e in enumerate(self.entity_ids)}
        index.update({c: self.n_entities + i for i, c in enumerate(self.chunk_ids)})
        return index

    @classmethod
    def from_store(cls, store: GraphReader) -> KnowledgeGraph:
        import scipy.sparse as sp  # imported where used: the answering path needs only the helpers above

        entity_rows = store.entities()
        entity_ids = [e.id for e in entity_rows]
        chunk_ids = store.chunk_ids()
        graph = cls(
            entity_ids, chunk_ids, sp.csr_matrix((0, 0)), np.array([1.0 / max(e.n_chunks, 1) for e in entity_rows])
        )
        index = graph.node_index()
        rows, cols, weights = [], [], []
        edges = [(e, c, 1.0) for e, c in store.mentions()]
        edges += [(r.source_id, r.target_id, r.weight) for r in store.relations()]
        edges += store.synonyms()
        for a, b, w in edges:
            if a in index and b in index:
                rows.append(index[a])
                cols.append(index[b])
                weights.append(w)
        n = len(index)
        upper = sp.coo_matrix((weights, (rows, cols)), shape=(n, n)).tocsr()
        graph.adjacency = (upper + upper.T).tocsr()
        return graph

    def save(self, folder: Path) -> None:
        """The adjacency as CSR arrays in .npy files (memory-mapped by ``load``) and the node ids in graph.json."""
        save_csr(folder, self.adjacency)
        meta = {"entity_ids": self.entity_ids, "chunk_ids": self.chunk_ids, "specificity": self.specificity.tolist()}
        (folder / "graph.json").write_text(json.dumps(meta))

    @classmethod
    def load(cls, folder: Path) -> KnowledgeGraph:
        """The graph of a generation folder: its CSR memory-mapped, or a generation's graph.npz from before the
        CSR files (read whole into memory; PPR works the same)."""
        meta = json.loads((folder / "graph.json").read_text())
        if (folder / "graph.npz").exists() and not (folder / CSR_FILES[0]).exists():
            import scipy.sparse as sp

            adjacency, out_weight = sp.load_npz(folder / "graph.npz").tocsr(), None
        else:
            adjacency, out_weight = load_csr(folder)
        return cls(meta["entity_ids"], meta["chunk_ids"], adjacency, np.asarray(meta["specificity"]), out_weight)


def save_csr(folder: Path, adjacency: sp.csr_matrix) -> None:
    """Write ``adjacency`` as the CSR_FILES: float32 weights, int32 positions while they fit (scipy keeps
    memory-mapped arrays of one index type as they are, without a copy)."""
    index_type = np.int32 if max(adjacency.nnz, adjacency.shape[0]) < 2**31 else np.int64
    arrays = (
        adjacency.indptr.astype(index_type),
        adjacency.indices.astype(index_type),
        adjacency.data.astype(np.float32),
        np.asarray(adjacency.sum(axis=1), dtype=np.float64).ravel(),
    )
    for name, array in zip(CSR_FILES, arrays):
        np.save(folder / name, array)


def load_csr(folder: Path) -> tuple[sp.csr_matrix, np.ndarray]:
    """The adjacency and out-weights of ``folder``'s CSR_FILES, memory-mapped read-only: pages are read from the
    file as a query touches them and shared by every process serving the same generation."""
    import scipy.sparse as sp

    indptr, indices, weights, out_weight = (np.load(folder / name, mmap_mode="r") for name in CSR_FILES)
    n = len(indptr) - 1
    return sp.csr_matrix((weights, indices, indptr), shape=(n, n), copy=False), out_weight
