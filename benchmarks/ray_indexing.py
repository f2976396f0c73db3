"""Indexing throughput on Ray (issue 28): chunks/s of one offline build in one process (engine=local) against the
same build with engine=ray, on 2 workers of one local Ray instance and on 2 simulated nodes of 1 CPU each
(``ray.cluster_utils.Cluster``); same corpus, embedder (int8 MiniLM) and extractor (offline).

    .venv/bin/python benchmarks/ray_indexing.py [--data DIR] [--limit 2000] [--runs local ray nodes]
    .venv/bin/python benchmarks/ray_indexing.py --pipelines 1000    # actor pool against Ray Data (needs ray[data])

Default corpus: the first 2,000 passages of 2WikiMultihopQA in ../shared/data (skipped cleanly without it).
Ray's start-up (ray.init, or the simulated cluster) is timed on its own and included in the Ray runs' chunks/s.
Target: engine=ray on 2 workers >= 85% of the single process's chunks/s. The load average is printed beside the
numbers: the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time

from _common import OUT_DIR, data_dir, print_table, skip, write_result

from graph_store.documents import load_documents
from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings


def build(docs, folder, engine: str) -> dict:
    """One build from empty; its seconds, chunks and steps."""
    shutil.rmtree(folder, ignore_errors=True)
    settings = load_settings(environ={}, index_dir=folder, engine=engine, ray_workers=2 if engine == "ray" else None)
    start = time.perf_counter()
    index = KnowledgeIndex(settings, progress=False)
    try:
        summary = index.add_documents(docs)
    finally:
        index.close()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "chunks": summary.stats["chunks"], "steps": summary.step_seconds}


def ray_run(docs, folder, nodes: int) -> dict:
    """engine=ray on a local instance of 2 CPUs (nodes=1) or on ``nodes`` simulated nodes of 1 CPU each."""
    import ray

    start = time.perf_counter()
    cluster = None
    if nodes == 1:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    else:
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
    startup = time.perf_counter() - start
    try:
        run = build(docs, folder, "ray")
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
    return {**run, "startup": startup}


def pipelines(texts: list[str]) -> list[dict]:
    """The same texts embedded by 2 MiniLM actors on a local Ray of 2 CPUs (started beforehand): through the actor
    pool engine=ray uses, and through a Ray Data pipeline (``map_batches`` with an actor pool of 2; needs ray[data])."""
    import ray

    from graph_store.embeddings import MiniLMEmbedder
    from graph_store.ray_engine import RayEngine

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    rows = []
    try:
        engine = RayEngine(load_settings(environ={}, engine="ray", ray_workers=2))
        start = time.perf_counter()
        for _ in engine.embed(MiniLMEmbedder(), [texts[s : s + 5000] for s in range(0, len(texts), 5000)]):
            pass
        rows.append({"pipeline": "actor pool (engine=ray)", "seconds": round(time.perf_counter() - start, 1)})
        engine.close()
        try:
            import ray.data
        except ImportError:
            print("Ray Data is not installed (pip install 'ray[data]'): its pipeline is not measured")
            return rows

        class Embed:
            def __init__(self):
                self.embedder = MiniLMEmbedder(workers=1)

            def __call__(self, batch):
                return {"vector": self.embedder.embed(list(batch["text"]))}

        start = time.perf_counter()
        data = ray.data.from_items([{"text": t} for t in texts])
        for _ in data.map_batches(Embed, batch_size=256, concurrency=2, num_cpus=1).iter_batches(batch_size=None):
            pass
        rows.append({"pipeline": "Ray Data map_batches", "seconds": round(time.perf_counter() - start, 1)})
    finally:
        ray.shutdown()
    return rows


def _locals(results: dict) -> list[dict]:
    return [run for key, run in results.items() if key.startswith("local")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data")
    parser.add_argument("--limit", type=int, default=2000, help="index the first N passages (default 2000)")
    parser.add_argument(
        "--runs",
        nargs="+",
        default=["local", "ray", "nodes"],
        choices=["local", "ray", "nodes"],
        help="in this order; repeat one to bracket the others on a shared machine (local ray local)",
    )
    parser.add_argument(
        "--pipelines", type=int, metavar="N", help="instead: embed N passages through the actor pool and Ray Data"
    )
    args = parser.parse_args()
    folder = data_dir(args.data)
    if folder is None or not (folder / "2wikimultihopqa_corpus.json").exists():
        skip("2wikimultihopqa_corpus.json not found")
    # No usage reports over the internet; the loopback only (Ray's switch, read at import).
    os.environ.update({"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"})
    try:
        import ray  # noqa: F401
    except ImportError:
        skip("Ray is not installed (the ray extra)")
    docs = load_documents(folder / "2wikimultihopqa_corpus.json")[: args.limit]
    if args.pipelines:
        table = pipelines([f"{d.title}\n{d.text}" for d in docs[: args.pipelines]])
        print_table(table, ["pipeline", "seconds"])
        print(f"wrote {write_result('ray_pipelines', {'passages': args.pipelines, 'runs': table})}")
        return
    work = OUT_DIR / "indexes" / "ray-indexing"
    rows, results = [], {}
    for name in args.runs:
        load = os.getloadavg()[0]
        # A folder per run: Chroma keeps a client per path in the process, which would outlive a folder removed.
        folder = work / f"{name}-{len(results) + 1}"
        if name == "local":
            run = {**build(docs, folder, "local"), "startup": 0.0}
        else:
            run = ray_run(docs, folder, nodes=1 if name == "ray" else 2)
        run["load_before"] = load
        run["load_after"] = os.getloadavg()[0]
        results[f"{name} {len(results) + 1}"] = run  # a run may be repeated (--runs local ray local)
        total = run["seconds"] + run["startup"]
        rows.append(
            {
                "run": {"local": "one process", "ray": "ray, 2 workers", "nodes": "ray, 2 nodes x 1 CPU"}[name],
                "start-up s": round(run["startup"], 1),
                "build s": round(run["seconds"], 1),
                "chunks/s (start-up included)": round(run["chunks"] / total, 2),
                # against the first single-process run
                "vs one process": round(local[0]["seconds"] / total, 3) if (local := _locals(results)) else "",
                "load (1 min) before/after": f"{run['load_before']:.1f}/{run['load_after']:.1f}",
            }
        )
        print(f"[{name}] {total:.1f} s; steps: " + ", ".join(f"{k} {v:.1f}" for k, v in run["steps"].items()))
    print_table(rows, list(rows[0]))
    print(f"wrote {write_result('ray_indexing', {'passages': len(docs), 'runs': results, 'table': rows})}")


if __name__ == "__main__":
    main()
