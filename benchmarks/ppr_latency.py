"""PPR latency: the power iteration on a synthetic 100k-node / 1M-edge graph, and full PPR retrieval on the 2Wiki index.

    .venv/bin/python benchmarks/ppr_latency.py [--index-dir benchmarks/out/indexes/2wiki-offline] [--queries 50] [--passes 3]

Targets (issue 4, 2 cores): power iteration <= 50 ms; PPR retrieval p50 <= 20 ms per query on the 2Wiki index
(build it first with benchmarks/index_build.py). Medians over repeated runs. The synthetic graph runs at the
tolerance retrieval uses and at 1e-7.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _common import OUT_DIR, data_dir, median, print_table, write_result

from graph_store.index import KnowledgeIndex
from graph_store.ppr import PageRankMatrix, personalized_pagerank
from graph_store.retrieval import RetrievalSettings, Retrievers
from graph_store.settings import load_settings


def synthetic(n: int = 100_000, edges: int = 1_000_000, repeats: int = 20) -> list[dict]:
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, n, edges), rng.integers(0, n, edges)
    adjacency = sp.coo_matrix((rng.random(edges), (rows, cols)), shape=(n, n)).tocsr()
    adjacency = adjacency + adjacency.T  # undirected, as the knowledge graph
    start = time.perf_counter()
    matrix = PageRankMatrix(adjacency, dtype=np.float32)  # as retrieval builds it
    build = time.perf_counter() - start
    out = []
    for tol in (RetrievalSettings.ppr_tolerance, 1e-7):
        times = []
        for _ in range(repeats):
            reset = np.zeros(n)
            reset[rng.integers(0, n, 10)] = rng.random(10)
            start = time.perf_counter()
            personalized_pagerank(matrix, reset, 0.5, tol=tol)
            times.append(time.perf_counter() - start)
        out.append(
            {
                "nodes": n,
                "edges": edges,
                "stored_entries": int(matrix.transition.nnz),
                "tolerance": tol,
                "row_blocks": len(matrix.blocks),
                "matrix_build_ms": 1000 * build,
                "p50_ms": 1000 * median(times),
                "max_ms": 1000 * max(times),
            }
        )
    return out


def _timed(retrievers: Retrievers, questions: list[str], passes: int) -> dict:
    """Medians over every question in every pass (the machine's timings drift between passes)."""
    total, given = [], []
    for q in questions * passes:
        start = time.perf_counter()
        vector = retrievers.embed(q)
        middle = time.perf_counter()
        retrievers.ppr(q, k=5, vector=vector)
        end = time.perf_counter()
        total.append(end - start)
        given.append(end - middle)
    return {
        "queries": len(questions),
        "passes": passes,
        "p50_ms": 1000 * median(total),
        "p95_ms": 1000 * float(np.percentile(total, 95)),
        "p50_vector_given_ms": 1000 * median(given),
    }


def on_index(path: Path, n_queries: int, passes: int) -> list[dict] | None:
    if not (path / "manifest.json").exists():
        return None
    index = KnowledgeIndex(load_settings(environ={}, index_dir=path), progress=False, create=False)
    retrievers = Retrievers(index)
    titles = [t for (t,) in index.store.rows("SELECT title FROM documents ORDER BY id")]
    # 2Wiki-style questions about this corpus: every k-th title, so the sample spreads over it.
    sets = {
        "2Wiki-style, naming a title of this corpus": [
            f"Where was the director of the film {t} born?"
            for t in titles[:: max(1, len(titles) // n_queries)][:n_queries]
        ]
    }
    folder = data_dir()
    if folder and (folder / "musique_dev.json").exists():  # another corpus's questions: names rarely match
        sets["MuSiQue dev (other corpus)"] = [
            q["question"] for q in json.loads((folder / "musique_dev.json").read_text())
        ][:n_queries]
    retrievers.ppr(titles[0])  # warm-up
    rows = [{"questions": name, **_timed(retrievers, questions, passes)} for name, questions in sets.items()]
    pagerank = []
    n = retrievers.pagerank.n
    for seed in range(20):
        nodes = np.unique(np.random.default_rng(seed).integers(0, n, 8))
        start = time.perf_counter()
        retrievers.pagerank.scores(dict.fromkeys(nodes.tolist(), 1.0), 0.5, retrievers.settings.ppr_tolerance)
        pagerank.append(time.perf_counter() - start)
    for row in rows:
        row.update(
            nodes=n,
            stored_entries=int(retrievers.graph.adjacency.nnz),
            power_iteration_p50_ms=1000 * median(pagerank),
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index-dir", default=str(OUT_DIR / "indexes" / "2wiki-offline"))
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--passes", type=int, default=3, help="times each question set is run")
    args = parser.parse_args()
    synth = synthetic()
    print_table(
        [{k: round(v, 1) if isinstance(v, float) and v > 1e-3 else v for k, v in row.items()} for row in synth],
        list(synth[0]),
    )
    real = on_index(Path(args.index_dir), args.queries, args.passes)
    if real is None:
        print(f"SKIPPED the index part: no index at {args.index_dir} (run benchmarks/index_build.py first)")
    else:
        print_table(
            [{k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()} for row in real], list(real[0])
        )
    print(f"wrote {write_result('ppr_latency', {'synthetic': synth, '2wiki_index': real})}")


if __name__ == "__main__":
    main()
