"""Passage Recall@2/5 on MuSiQue dev and HotpotQA dev: BM25, dense, PPR (offline graph), PPR (GPT-3.5 triples).

    .venv/bin/python benchmarks/retrieval_recall.py [--data DIR] [--datasets musique hotpotqa] [--rebuild]
        [--bridge-weight W] [--ppr-tolerance T] [--damping D] [--overlap-bonus B] [--passage-node-weight P]
        [--static-vectors S] [--embedder int8|bundled] [--perturb SEED] [--entity-auto-merge T]

Indexes are kept in benchmarks/out/indexes/ and reused (an unchanged corpus re-indexes as a no-op);
with --static-vectors other than the default, in folders named after that setting.
All systems run in one process on the same embedder; latencies are medians per query. `--embedder bundled`
runs the bundled model's float graph (the embedder before the int8 graph), and `--perturb SEED` adds a fixed
random perturbation of the int8 graph's size to its vectors: how far recall moves for a change that carries no
information. Both keep their indexes in folders of their own. `--entity-auto-merge T` builds with that automatic
merge threshold (1: no automatic merges; indexes in folders named after it): PPR with merges against without.
"""

from __future__ import annotations

import argparse
import shutil
import time

from _common import OUT_DIR, bundled_graph_embedder, data_dir, median, print_table, skip, write_result

from graph_store.embeddings import MiniLMEmbedder
from graph_store.index import KnowledgeIndex
from graph_store.retrieval import RetrievalSettings, Retrievers, doc_ranking
from graph_store.settings import load_settings
from kgrag.evaluation.datasets import RecordedExtractor, hotpotqa, musique
from kgrag.evaluation.metrics import recall_at

LOADERS = {"musique": musique, "hotpotqa": hotpotqa}


def build(name: str, docs, embedder, extractor=None, rebuild=False, **settings) -> KnowledgeIndex:
    path = OUT_DIR / "indexes" / name
    if rebuild:
        shutil.rmtree(path, ignore_errors=True)
    index = KnowledgeIndex(
        load_settings(environ={}, index_dir=path, **settings), embedder=embedder, extractor=extractor
    )
    start = time.perf_counter()
    summary = index.add_documents(docs)
    print(f"[{name}] {time.perf_counter() - start:.0f} s; " + summary.format().replace("\n", "; "))
    return index


def evaluate(system: str, search, questions, k_max=5) -> dict:
    r2, r5, times = [], [], []
    for q in questions:
        start = time.perf_counter()
        ranked = doc_ranking(search(q.question))
        times.append(time.perf_counter() - start)
        r2.append(recall_at(ranked, q.gold_doc_ids, 2))
        r5.append(recall_at(ranked, q.gold_doc_ids, 5))
    return {
        "system": system,
        "R@2": round(100 * sum(r2) / len(r2), 1),
        "R@5": round(100 * sum(r5) / len(r5), 1),
        "p50_ms": round(1000 * median(times), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data")
    parser.add_argument("--datasets", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    parser.add_argument("--rebuild", action="store_true", help="rebuild the indexes from scratch")
    parser.add_argument("--overlap-bonus", type=float, default=RetrievalSettings.overlap_bonus)
    parser.add_argument("--passage-node-weight", type=float, default=RetrievalSettings.passage_node_weight)
    parser.add_argument("--damping", type=float, default=RetrievalSettings.damping)
    parser.add_argument(
        "--bridge-weight",
        type=float,
        default=RetrievalSettings.bridge_weight,
        help="weight of the second hop along title links (0: none)",
    )
    parser.add_argument("--ppr-tolerance", type=float, default=RetrievalSettings.ppr_tolerance)
    parser.add_argument("--static-vectors", help="the static_vectors setting of the indexes (default: the settings')")
    parser.add_argument("--embedder", choices=["int8", "bundled"], default="int8")
    parser.add_argument("--perturb", metavar="SEED", help="with --embedder bundled: perturb its vectors (see above)")
    parser.add_argument(
        "--entity-auto-merge", type=float, help="the entity_auto_merge setting (default: the settings')"
    )
    args = parser.parse_args()
    if args.perturb and args.embedder != "bundled":
        parser.error("--perturb goes with --embedder bundled")
    folder = data_dir(args.data)
    if folder is None:
        skip("../shared/data not found")
    embedder = MiniLMEmbedder() if args.embedder == "int8" else bundled_graph_embedder(args.perturb)
    settings = RetrievalSettings(
        overlap_bonus=args.overlap_bonus,
        passage_node_weight=args.passage_node_weight,
        damping=args.damping,
        bridge_weight=args.bridge_weight,
        ppr_tolerance=args.ppr_tolerance,
    )
    index_settings = {"static_vectors": args.static_vectors} if args.static_vectors else {}
    suffix = "-static-" + args.static_vectors.replace(",", "-") if args.static_vectors else ""
    if args.entity_auto_merge is not None:
        index_settings["entity_auto_merge"] = args.entity_auto_merge
        suffix += f"-auto-merge-{args.entity_auto_merge:g}"
    if args.embedder == "bundled":
        suffix += f"-bundled-perturbed-{args.perturb}" if args.perturb else "-bundled"
    rows = []
    for dataset in args.datasets:
        docs, questions = LOADERS[dataset](folder)
        offline = Retrievers(
            build(f"{dataset}-offline{suffix}", docs, embedder, rebuild=args.rebuild, **index_settings), settings
        )
        k = 10  # enough chunks for 5 distinct documents
        systems = {
            "BM25": lambda q: offline.bm25(q, k),
            "dense": lambda q: offline.dense(q, k),
            "PPR, offline graph": lambda q: offline.ppr(q, k).evidence,
        }
        recorded = folder / f"{dataset}_corpus_openie_gpt35.json"
        if recorded.exists():
            gpt = Retrievers(
                build(
                    f"{dataset}-gpt35{suffix}",
                    docs,
                    embedder,
                    RecordedExtractor(recorded),
                    args.rebuild,
                    **index_settings,
                ),
                settings,
            )
            systems["PPR, GPT-3.5 triples graph"] = lambda q, r=gpt: r.ppr(q, k).evidence
        for system, search in systems.items():
            search(questions[0].question)  # warm-up (BM25 builds its index lazily)
            rows.append({"dataset": dataset, **evaluate(system, search, questions)})
            print_table(rows[-1:], list(rows[-1]))
    print()
    print_table(rows, ["dataset", "system", "R@2", "R@5", "p50_ms"])
    static_vectors = load_settings(environ={}, **index_settings).static_collections
    print(f"static vectors: {', '.join(static_vectors) or 'none'}")
    result = {"settings": settings.__dict__, "static_vectors": static_vectors, "rows": rows}
    print(f"wrote {write_result('retrieval_recall', result)}")


if __name__ == "__main__":
    main()
