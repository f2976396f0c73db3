"""Static token vectors (StaticEmbedder) against the all-MiniLM vectors they replace for entities,
facts and community reports, on MuSiQue dev and HotpotQA dev (and 2Wiki for timing).

    .venv/bin/python benchmarks/static_vectors.py [--data DIR] [--datasets musique hotpotqa]
        [--end-recall] [--distill] [--2wiki]

Per dataset, on the offline index retrieval_recall.py builds (and, for MuSiQue, the graph of the
recorded GPT-3.5 triples):
- fact search: top-5 facts of each dev question, overlap between the two spaces, and the share of
  the top 5 whose source passage is a gold passage (what PPR seeding needs) in each space;
- entity linking: each capitalised mention of a dev question, its nearest entity in each space
  (agreement), and the links above each space's name threshold;
- community search: top-5 reports per question, overlap;
- synonymy: edge counts and overlap at several static thresholds against MiniLM's 0.8; the
  calibrated static threshold is the one that gives as many edges as MiniLM at 0.8;
- timing: embedding every text both ways.
--end-recall [SCHEME ...]: Recall@2/5 and p50 latency of every retrieval_recall.py system on indexes
built with each static_vectors value (default: auto and none), in one run, the schemes taking turns
on each question.
--distill: the one-off distillation of the token table, timed in a temporary cache.
--2wiki: embedding time of the 2Wiki entities, facts and reports (static; MiniLM on a sample).
MiniLM vectors of the texts are cached in benchmarks/out/static_vectors/.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import OUT_DIR, data_dir, median, print_table, skip, write_result
from retrieval_recall import LOADERS, build

from graph_store.embeddings import MiniLMEmbedder, StaticEmbedder, shared_static_embedder
from graph_store.extraction import find_entity_mentions
from graph_store.graph import synonym_pairs
from graph_store.index import KnowledgeIndex
from graph_store.retrieval import Retrievers, doc_ranking
from graph_store.settings import load_settings
from kgrag.evaluation.datasets import RecordedExtractor
from kgrag.evaluation.metrics import recall_at

CACHE = OUT_DIR / "static_vectors"
THRESHOLDS = (0.8, 0.85, 0.875, 0.9, 0.925)


def minilm_vectors(embedder, texts: list[str]) -> np.ndarray:
    """MiniLM vectors of ``texts``, cached on disk by the texts' hash (they take minutes)."""
    key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"{key}.npy"
    if path.exists():
        return np.load(path)
    vectors = embedder.embed(texts)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def top(matrix: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    scores = queries @ matrix.T
    k = min(k, matrix.shape[0])
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    order = np.take_along_axis(scores, part, axis=1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(part, order, axis=1)


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean([len(set(x) & set(y)) / len(x) for x, y in zip(a, b)])) if len(a) else 0.0


def compare(name: str, index, questions, minilm, static: StaticEmbedder) -> dict:
    store = index.store
    facts = store.rows("SELECT id, text FROM facts ORDER BY id")
    entities = store.rows("SELECT id, name FROM entities ORDER BY id")
    reports = store.rows("SELECT community_id, text FROM reports ORDER BY community_id")
    fact_docs: dict[str, set[str]] = {}
    for fact, doc in store.rows("SELECT s.fact_id, c.doc_id FROM fact_sources s JOIN chunks c ON c.id = s.chunk_id"):
        fact_docs.setdefault(fact, set()).add(doc)
    asked = [q.question for q in questions]
    mentions = [m[2] for q in asked for m in find_entity_mentions(q)]
    row: dict = {"index": name, "facts": len(facts), "entities": len(entities), "reports": len(reports)}
    spaces = {}
    for space, embedder in (("minilm", minilm), ("static", static)):
        start = time.perf_counter()
        vectors = {
            kind: (
                minilm_vectors(embedder, [t for _, t in rows])
                if space == "minilm"
                else embedder.embed([t for _, t in rows])
            )
            for kind, rows in (("facts", facts), ("entities", entities), ("reports", reports))
        }
        seconds = time.perf_counter() - start
        if space == "static":
            row["static_embed_s"] = round(seconds, 2)
        spaces[space] = (vectors, embedder.embed(asked), embedder.embed(mentions) if mentions else None)
    (mf, mq, mm), (sf, sq, sm) = spaces["minilm"], spaces["static"]
    fact_top = {space: top(v["facts"], q, 5) for space, (v, q, _) in spaces.items()}
    row["fact_top5_overlap"] = round(overlap(fact_top["minilm"], fact_top["static"]), 3)
    for space, tops in fact_top.items():
        hits = [
            np.mean([bool(fact_docs.get(facts[j][0], set()) & set(q.gold_doc_ids)) for j in t])
            for t, q in zip(tops, questions)
        ]
        row[f"fact_gold@5_{space}"] = round(float(np.mean(hits)), 3)
    if reports:
        row["report_top5_overlap"] = round(overlap(top(mf["reports"], mq, 5), top(sf["reports"], sq, 5)), 3)
    if mentions:
        m_top, s_top = top(mf["entities"], mm, 1)[:, 0], top(sf["entities"], sm, 1)[:, 0]
        row["mentions"] = len(mentions)
        row["link_top1_agree"] = round(float(np.mean(m_top == s_top)), 3)
        m_sim = (mm * mf["entities"][m_top]).sum(1) >= minilm.name_similarity
        s_sim = (sm * sf["entities"][s_top]).sum(1) >= static.name_similarity
        row["linked_minilm"], row["linked_static"] = int(m_sim.sum()), int(s_sim.sum())
        row["linked_same_entity"] = int((m_sim & s_sim & (m_top == s_top)).sum())
    ids = [i for i, _ in entities]
    reference = {(a, b) for a, b, _ in synonym_pairs(ids, mf["entities"], minilm.name_similarity, 10)}
    candidates = synonym_pairs(ids, sf["entities"], min(THRESHOLDS), 10)
    row["syn_edges_minilm@0.8"] = len(reference)
    for threshold in THRESHOLDS:
        got = {(a, b) for a, b, s in candidates if s >= threshold}
        row[f"syn_static@{threshold}"] = f"{len(got)} ({len(got & reference) / max(1, len(reference)):.2f} of minilm's)"
    similarities = sorted((s for _, _, s in candidates), reverse=True)
    row["syn_threshold_same_count"] = similarities[len(reference) - 1] if len(similarities) >= len(reference) else None
    return row


class MemoEmbedder:
    """MiniLM with every vector kept in memory: indexes of several schemes embed each chunk once."""

    def __init__(self, embedder: MiniLMEmbedder):
        self.embedder, self.memo = embedder, {}
        self.dimension, self.name_similarity = embedder.dimension, embedder.name_similarity

    def identity(self) -> dict:
        return self.embedder.identity()

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.memo))
        self.memo.update(zip(missing, self.embedder.embed(missing)))
        return np.asarray([self.memo[t] for t in texts], dtype=np.float32).reshape(len(texts), self.dimension)


def end_recall(dataset: str, docs, questions, folder: Path, memo: MemoEmbedder, schemes: list[str]) -> list[dict]:
    """Recall@2/5 and p50 of each system on each scheme; the schemes answer each question in turn, so
    a busy machine slows them alike. Indexes are built with the memo (each text embedded once), then
    reopened with the plain model, so every query pays its own embedding."""
    recorded = folder / f"{dataset}_corpus_openie_gpt35.json"
    systems: dict[tuple[str, str], object] = {}

    def reopened(name: str, scheme: str, extractor=None) -> KnowledgeIndex:
        build(name, docs, memo, extractor, static_vectors=scheme).close()
        return KnowledgeIndex(
            load_settings(environ={}, index_dir=OUT_DIR / "indexes" / name, static_vectors=scheme),
            embedder=memo.embedder,
            extractor=extractor,
            create=False,
            progress=False,
        )

    for scheme in schemes:
        suffix = "" if scheme == "auto" else "-static-" + scheme.replace(",", "-")  # as retrieval_recall.py
        graphs = {"offline graph": reopened(f"{dataset}-offline{suffix}", scheme)}
        if recorded.exists():
            graphs["GPT-3.5 triples graph"] = reopened(f"{dataset}-gpt35{suffix}", scheme, RecordedExtractor(recorded))
        offline = Retrievers(graphs["offline graph"])
        k = 10
        systems[(scheme, "BM25")] = lambda q, r=offline: r.bm25(q, k)
        systems[(scheme, "dense")] = lambda q, r=offline: r.dense(q, k)
        for graph, index in graphs.items():
            r = offline if graph == "offline graph" else Retrievers(index)
            systems[(scheme, f"PPR, {graph}")] = lambda q, r=r: r.ppr(q, k).evidence
    for search in systems.values():
        search(questions[0].question)  # warm-up (BM25 builds its index lazily)
    scores = {key: ([], [], []) for key in systems}
    for q in questions:
        for key, search in systems.items():
            start = time.perf_counter()
            ranked = doc_ranking(search(q.question))
            scores[key][2].append(time.perf_counter() - start)
            scores[key][0].append(recall_at(ranked, q.gold_doc_ids, 2))
            scores[key][1].append(recall_at(ranked, q.gold_doc_ids, 5))
    rows = [
        {
            "dataset": dataset,
            "static_vectors": scheme,
            "system": system,
            "R@2": round(100 * float(np.mean(r2)), 1),
            "R@5": round(100 * float(np.mean(r5)), 1),
            "p50_ms": round(1000 * median(t), 1),
        }
        for (scheme, system), (r2, r5, t) in sorted(scores.items(), key=lambda x: (x[0][1], schemes.index(x[0][0])))
    ]
    print_table(rows, list(rows[0]))
    return rows


def two_wiki(folder: Path, minilm: MiniLMEmbedder, static: StaticEmbedder) -> dict:
    """Embedding time of the 2Wiki index's entities, facts and reports, static vs MiniLM (on a sample)."""
    from graph_store.store import Store

    path = OUT_DIR / "indexes" / "2wiki-offline" / "index.sqlite"
    if not path.exists():
        return {"skipped": "build benchmarks/out/indexes/2wiki-offline with index_build.py first"}
    store = Store(path)
    out = {}
    rng = np.random.default_rng(0)
    for kind, sql in (
        ("entities", "SELECT name FROM entities"),
        ("facts", "SELECT text FROM facts"),
        ("reports", "SELECT text FROM reports"),
    ):
        texts = [r[0] for r in store.rows(sql)]
        start = time.perf_counter()
        static.embed(texts)
        static_s = time.perf_counter() - start
        sample = [texts[i] for i in rng.choice(len(texts), min(1000, len(texts)), replace=False)]
        start = time.perf_counter()
        minilm.embed(sample)
        minilm_s = (time.perf_counter() - start) * len(texts) / len(sample)
        out[kind] = {"texts": len(texts), "static_s": round(static_s, 2), "minilm_s_estimated": round(minilm_s, 1)}
    store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data")
    parser.add_argument("--datasets", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    parser.add_argument(
        "--end-recall",
        nargs="*",
        metavar="SCHEME",
        help="Recall@2/5 of retrieval_recall.py's systems on indexes built with these static_vectors "
        "values (default: auto none)",
    )
    parser.add_argument("--distill", action="store_true", help="time the distillation (about half a minute)")
    parser.add_argument("--2wiki", dest="two_wiki", action="store_true", help="time embedding the 2Wiki texts")
    args = parser.parse_args()
    folder = data_dir(args.data)
    if folder is None:
        skip("../shared/data not found")
    minilm, static = MiniLMEmbedder(), shared_static_embedder()
    memo = MemoEmbedder(minilm)
    result: dict = {"name_similarity": {"minilm": minilm.name_similarity, "static": static.name_similarity}}
    if args.distill:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            StaticEmbedder(cache=Path(tmp)).table()
            result["distill_s"] = round(time.perf_counter() - start, 1)
            start = time.perf_counter()
            StaticEmbedder(cache=Path(tmp)).table()
            result["cached_load_s"] = round(time.perf_counter() - start, 3)
        print(f"distillation {result['distill_s']} s, cached load {result['cached_load_s']} s")
    comparisons, recall = [], []
    for dataset in args.datasets:
        docs, questions = LOADERS[dataset](folder)
        indexes = {f"{dataset}-offline": build(f"{dataset}-offline", docs, memo)}
        recorded = folder / f"{dataset}_corpus_openie_gpt35.json"
        if recorded.exists():
            indexes[f"{dataset}-gpt35"] = build(f"{dataset}-gpt35", docs, memo, RecordedExtractor(recorded))
        for name, index in indexes.items():
            comparisons.append(compare(name, index, questions, memo, static))
            print("\n".join(f"  {k}: {v}" for k, v in comparisons[-1].items()))
        if args.end_recall is not None:
            recall += end_recall(dataset, docs, questions, folder, memo, args.end_recall or ["auto", "none"])
    if args.two_wiki:
        result["2wiki"] = two_wiki(folder, minilm, static)
        print(result["2wiki"])
    if recall:
        print()
        print_table(recall, ["dataset", "static_vectors", "system", "R@2", "R@5", "p50_ms"])
    result.update({"comparisons": comparisons, "end_recall": recall})
    print(f"wrote {write_result('static_vectors', result)}")


if __name__ == "__main__":
    main()
