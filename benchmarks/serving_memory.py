"""Memory and latency of a serving process: vectors read whole from vectors.npz vs memory-mapped (issue 28).

    .venv/bin/python benchmarks/serving_memory.py [--source /work/wt-entities/benchmarks/out/indexes/2wiki-decisions]
        [--questions 20] [--runs 2]

The source index is copied (never modified) to benchmarks/out/indexes/serving-npz and serving-mapped, and their
current generation rewritten in place: both get the graph as the memory-mapped CSR files; serving-npz keeps its
vectors in one vectors.npz (read whole into memory, as before issue 28), serving-mapped has them as the
per-collection .npy files and faiss graphs that readers memory-map. So only the vectors differ. Each copy is then
opened by a fresh process that answers the questions (benchmarks/data/own_2wiki_questions.json) through the library
as a server does (offline `KGRag.ask`), times the retrievers (ppr, dense, local) on each, and reports its memory from
/proc/self/status: VmRSS, RssAnon (its own pages) and RssFile (pages of mapped files: shared by every process
serving the same generation, and dropped by the kernel under pressure).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import OUT_DIR, ROOT, median, print_table, write_result

SOURCE = Path("/work/wt-entities/benchmarks/out/indexes/2wiki-decisions")
QUESTIONS = ROOT / "benchmarks" / "data" / "own_2wiki_questions.json"


def _memory() -> dict[str, float]:
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {k: round(int(status[k].split()[0]) / 1024, 1) for k in ("VmRSS", "RssAnon", "RssFile")}


def _reseal(folder: Path) -> None:
    """generation.json lists the files the folder now holds (sizes and checksums)."""
    from graph_store.generations import _sha256

    meta = json.loads((folder / "generation.json").read_text())
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name != "generation.json")
    meta["files"] = {n: {"bytes": (folder / n).stat().st_size, "sha256": _sha256(folder / n)} for n in names}
    (folder / "generation.json").write_text(json.dumps(meta, indent=2))


def prepare(source: Path, target: Path, mapped: bool) -> None:
    """A copy of ``source`` whose generation has the CSR files, and its vectors in the format asked for."""
    import faiss

    from graph_store.graph import KnowledgeGraph, save_csr
    from graph_store.vectors import COLLECTIONS, Exported, exported_files

    if target.exists():
        return
    tmp = target.with_name(target.name + ".copying")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp)
    folder = tmp / "derived" / (tmp / "derived" / "CURRENT").read_text().strip()
    if (folder / "graph.npz").exists():
        save_csr(folder, KnowledgeGraph.load(folder).adjacency)
        (folder / "graph.npz").unlink()
    if mapped and (folder / "vectors.npz").exists():
        with Exported(folder) as old:  # (the vectors.npz branch: it reads the npz)
            for name in COLLECTIONS:
                ids_file, matrix_file, graph_file, rows_file = (folder / f for f in exported_files(name))
                np.save(ids_file, np.array(old.ids(name)))
                np.save(matrix_file, np.ascontiguousarray(old.matrix(name), dtype=np.float32))
                if old.has_graph(name):
                    faiss.write_index(old.graph(name), str(graph_file))
                    if old.graph_rows(name) is not None:
                        np.save(rows_file, old.graph_rows(name))
        (folder / "vectors.npz").unlink()
    _reseal(folder)
    tmp.rename(target)


def serve(index_dir: Path, n_questions: int) -> dict:
    """In this process: open the index, answer the questions, time the retrievers, report memory."""
    from graph_store.settings import load_settings
    from kgrag.api import KGRag

    questions = [q["question"] for q in json.loads(QUESTIONS.read_text())["questions"]][:n_questions]
    start = time.perf_counter()
    rag = KGRag(settings=load_settings(environ={}, index_dir=index_dir)).open()
    retrievers = rag._resources().retrievers
    opened = time.perf_counter() - start
    after_open = _memory()
    for question in questions:
        rag.ask(question)
    after_answers = _memory()
    timings: dict[str, list[float]] = {"ppr": [], "dense": [], "local": []}
    for _ in range(3):
        for question in questions:
            vector = retrievers.embed(question)
            for name, run in (
                ("ppr", lambda: retrievers.ppr(question, vector=vector)),
                ("dense", lambda: retrievers.dense(question, vector=vector)),
                ("local", lambda: retrievers.local(question, vector=vector)),
            ):
                clock = time.perf_counter()
                run()
                timings[name].append(time.perf_counter() - clock)
    mapped = isinstance(retrievers.matrices["facts"][1], np.memmap)
    return {
        "vectors": "memory-mapped .npy + faiss" if mapped else "vectors.npz (read whole)",
        "open_s": round(opened, 2),
        **{f"{k}_after_open_mib": v for k, v in after_open.items()},
        **{f"{k}_mib": v for k, v in after_answers.items()},
        **{f"{name}_p50_ms": round(1000 * median(t), 2) for name, t in timings.items()},
        "questions": len(questions),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", default=str(SOURCE))
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--runs", type=int, default=2, help="processes per format, alternating")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # the child process: an index folder
    args = parser.parse_args()
    if args.serve:
        print(json.dumps(serve(Path(args.serve), args.questions)))
        return
    rows = []
    variants = (("serving-npz", False), ("serving-mapped", True))
    for name, mapped in variants:
        prepare(Path(args.source), OUT_DIR / "indexes" / name, mapped)
    for run in range(args.runs):  # alternating, so that the machine's drift falls on both
        for name, _ in variants if run % 2 == 0 else variants[::-1]:
            target = OUT_DIR / "indexes" / name
            child = [sys.executable, __file__, "--serve", str(target), "--questions", str(args.questions)]
            done = subprocess.run(child, capture_output=True, text=True, check=True)
            rows.append({"run": run + 1, **json.loads(done.stdout.strip().splitlines()[-1])})
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[0]
    print(f"load average at the end: {load}")
    print_table(rows, list(rows[0]))
    print(f"wrote {write_result('serving_memory', {'rows': rows, 'load_average': load})}")


if __name__ == "__main__":
    main()
