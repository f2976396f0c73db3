"""Scale benchmarks (issue 28), one sub-command per part.

    .venv/bin/python benchmarks/scale.py ppr [--nodes 1000000 10000000] [--thresholds 1e-6 3e-7 1e-7]
        [--seed-sets 50] [--exact-sets 10] [--reference power|certified]
    .venv/bin/python benchmarks/scale.py graph --nodes N     (what `ppr` runs in a child process when needed)
    .venv/bin/python benchmarks/scale.py retrieval --index-dir benchmarks/out/indexes/2wiki-decisions [--queries 100]
    .venv/bin/python benchmarks/scale.py corpus --passages 100000 --out benchmarks/out/scale/corpus-100k [--seed 0]
    .venv/bin/python benchmarks/scale.py index --corpus benchmarks/out/scale/corpus-100k --index-dir IDX
    .venv/bin/python benchmarks/scale.py ask --index-dir IDX --questions benchmarks/out/scale/corpus-100k/questions.jsonl
    .venv/bin/python benchmarks/scale.py synonymy [--index-dir IDX] [--sizes 25000 50000 100000 200000]

ppr: Personalized PageRank on a synthetic passage-entity graph of N nodes (half entities, half passages; each
passage mentions 1 + Poisson(6) entities drawn with Zipf popularity, so entity degrees follow a power law; a
relation edge between two entities of a passage for 3 of them on average, weighted 0.5-3; synonymy edges for 2%
of the entities), saved once as a generation's CSR files in benchmarks/out/scale/graph-<N>/ (a child process
writes them, so the measuring process holds only the memory-mapped files). Per size: p50/p95 latency of local
PPR (forward push, graph_store/ppr_push.py) at each threshold and of the exact power iteration retrieval uses
(float32, tolerance 1e-3) on ``--exact-sets`` of the seed sets (wall time, and CPU time, which a machine shared
with other work inflates less); top-5 agreement (the 5 passages of largest mass)
of push with exact PPR on every seed set, the exact top 5 from a float64 power iteration to an L1 change of 1e-9
(``--reference power``, slow at 10M on a shared machine) or certified by a push at 1e-8 and its per-node error
bound (``certified``: the seed sets where the bound decides the top 5; see certified_top_passages); the process's
memory (VmRSS, and of it file-backed pages of the mapping vs its own) after the push queries, before the exact
matrices are built. A seed set: 1-4 entities (weights 1 / their degree, as retrieval's specificity, times a random
factor) and the 10 passages mentioning the first of them with weight 0.05 each (retrieval's dense prior).

retrieval: PPR retrieval on a real index with local PPR forced (ppr_local_min_nodes 0) at each threshold against
exact: the share of questions whose top-5 passages (in order) and top-5 documents are the same as exact's, and the
p50 of a retrieval (question vector given).
Questions: 2Wiki-style ones naming titles of the corpus (as benchmarks/ppr_latency.py) and MuSiQue dev's.

corpus: the synthetic corpus of benchmarks/scale_corpus.py (one document per made-up entity, its facts stated in
sentences the offline extractor reads, Zipf popularity) and its multi-hop questions with their answers.

index: `kgrag index` of a corpus, single process, through the library (KGRag.index, what the CLI runs), offline,
with embedding_provider=minilm-static: every collection, chunks included, gets static vectors (no model run; the
int8 MiniLM would embed 100k passages in hours on this shared machine). Per stage: seconds (reading and chunking
into the record, extraction, then the build's own steps, IndexSummary.step_seconds), peak RSS, and the counts.

synonymy: synonymy edges among an index's entities (or a synthetic corpus's) (static vectors, threshold 0.88, top 10) by comparing every pair
and from the HNSW graph (synonymy_exact_max), at growing numbers of entities: seconds and the share of pairs alike.

ask: offline `ask` through the library (KGRag.ask: the CLI's path), the pankrag and propex workflows, each after
one warm-up question, over --count questions: p50/p95 latency (and the p50 of CPU time, all threads: less inflated
by a shared machine), exact match against the generated answers (informative) and the serving process's memory
(VmRSS, anonymous vs file-backed) after the questions.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _common import OUT_DIR, data_dir, machine, peak_rss_mib, print_table, write_result

from graph_store.generations import CSR_FILES
from graph_store.graph import load_csr, save_csr

SCALE_DIR = OUT_DIR / "scale"


def synthetic_graph(nodes: int, seed: int = 0) -> tuple[sp.csr_matrix, int]:
    """The symmetric adjacency (entities first, then passages) and the number of entities."""
    rng = np.random.default_rng(seed)
    entities = nodes // 2
    passages = nodes - entities
    popularity = 1.0 / np.arange(1, entities + 1) ** 0.9
    popularity /= popularity.sum()
    mentions = 1 + rng.poisson(6, passages)
    passage = np.repeat(np.arange(passages, dtype=np.int64), mentions)
    entity = rng.choice(entities, len(passage), p=popularity).astype(np.int64)
    rng.shuffle(entity)  # popularity by rank, ranks in no particular order of id
    # relations: three pairs per passage on average, among its own entities
    starts = np.concatenate([[0], np.cumsum(mentions)[:-1]])
    pick = rng.integers(0, passages, 3 * passages)
    a = entity[starts[pick] + rng.integers(0, mentions[pick])]
    b = entity[starts[pick] + rng.integers(0, mentions[pick])]
    a, b = a[a != b], b[a != b]
    s = rng.choice(entities, entities // 50)
    t = rng.choice(entities, entities // 50)
    rows = np.concatenate([entity, a, s])
    cols = np.concatenate([entities + passage, b, t])
    weights = np.concatenate([np.ones(len(entity)), rng.uniform(0.5, 3, len(a)), rng.uniform(0.8, 1, len(s))])
    upper = sp.coo_matrix((weights.astype(np.float32), (rows, cols)), shape=(nodes, nodes)).tocsr()
    del rows, cols, weights
    return (upper + upper.T).tocsr(), entities


def graph_folder(nodes: int) -> Path:
    return SCALE_DIR / f"graph-{nodes}"


def cmd_graph(args) -> None:
    folder = graph_folder(args.nodes)
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    adjacency, entities = synthetic_graph(args.nodes)
    save_csr(folder, adjacency)
    meta = {"nodes": args.nodes, "entities": entities, "entries": int(adjacency.nnz)}
    (folder / "meta.json").write_text(json.dumps(meta))
    print(f"graph of {args.nodes:,} nodes, {adjacency.nnz:,} entries in {time.perf_counter() - start:.0f} s")


def memory() -> dict[str, float]:
    """This process's resident memory (MiB): all, its own (anonymous), and file pages (the memory-mapped CSR)."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {k: round(int(status[k].split()[0]) / 1024, 1) for k in ("VmRSS", "RssAnon", "RssFile")}


def seed_sets(adjacency: sp.csr_matrix, entities: int, count: int) -> list[dict[int, float]]:
    rng = np.random.default_rng(7)
    degree = np.diff(adjacency.indptr[: entities + 1])
    candidates = np.flatnonzero(degree >= 2)
    sets = []
    for _ in range(count):
        chosen = rng.choice(candidates, rng.integers(1, 5), replace=False)
        reset = {int(e): float(rng.uniform(0.5, 1) / degree[e]) for e in chosen}
        total = sum(reset.values())
        reset = {e: w / total for e, w in reset.items()}
        row = adjacency.indices[adjacency.indptr[chosen[0]] : adjacency.indptr[chosen[0] + 1]]
        for p in row[row >= entities][:10]:
            reset[int(p)] = reset.get(int(p), 0.0) + 0.05
        sets.append(reset)
    return sets


def top_passages(nodes: np.ndarray, mass: np.ndarray, entities: int, k: int = 5) -> set[int]:
    passages = nodes >= entities
    nodes, mass = nodes[passages], mass[passages]
    return set(nodes[np.argsort(-mass, kind="stable")[:k]].tolist())


def exact_top_passages(
    adjacency: sp.csr_matrix, out_weight: np.ndarray, sets: list[dict[int, float]], entities: int, batch: int = 10
) -> list[set[int]]:
    """The top 5 passages of each seed set by exact PPR: float64 power iteration to an L1 change of 1e-9,
    ``batch`` seed sets per sparse-dense product (the adjacency is symmetric: W P = A (P / out-weight))."""
    n = adjacency.shape[0]
    inverse = np.where(out_weight > 0, 1.0 / np.where(out_weight > 0, out_weight, 1.0), 0.0)[:, None]
    dangling = np.flatnonzero(out_weight == 0)
    found = []
    for first in range(0, len(sets), batch):
        group = sets[first : first + batch]
        r = np.zeros((n, len(group)))
        for j, reset in enumerate(group):
            r[list(reset), j] = list(reset.values())
        r /= r.sum(axis=0)
        p = r.copy()
        for _ in range(200):
            nxt = adjacency @ (p * inverse)
            nxt *= 0.5
            nxt += r * (0.5 + 0.5 * p[dangling].sum(axis=0))
            change = np.abs(nxt - p).sum(axis=0).max()
            p = nxt
            if change < 1e-9:
                break
        found += [top_passages(np.arange(n), p[:, j], entities) for j in range(len(group))]
    return found


def certified_top_passages(
    push, sets: list[dict[int, float]], entities: int, out_weight: np.ndarray, threshold: float = 1e-8
) -> list[set[int] | None]:
    """The top 5 passages of each seed set by exact PPR, from a push at a small threshold and its error bound,
    without a power iteration over the whole graph: on an undirected graph each node's exact value lies in
    [estimate, estimate + threshold x its out-weight] (tests/test_local_ppr.py checks the bound against exact), so
    when the 5th estimate is at or above every other passage's upper end the exact top 5 is known. None for a
    seed set where the bound leaves it open."""
    found: list[set[int] | None] = []
    passage_weight = float(np.max(out_weight[entities:]))  # an untouched passage's upper end: threshold x this
    for reset in sets:
        nodes, mass, _ = push.scores(
            np.fromiter(reset, np.int64), np.fromiter(reset.values(), np.float64), 0.5, threshold
        )
        passages = nodes >= entities
        nodes, mass = nodes[passages], mass[passages]
        order = np.argsort(-mass, kind="stable")
        top, rest = order[:5], order[5:]
        upper = mass[rest] + threshold * out_weight[nodes[rest]]
        fifth = mass[top[-1]]
        certain = fifth >= max(float(upper.max(initial=0.0)), threshold * passage_weight)
        found.append(set(nodes[top].tolist()) if certain else None)
    return found


def percentile_ms(times: list[float], q: float) -> float:
    return round(1000 * float(np.percentile(times, q)), 2)


def ppr_one_size(nodes: int, thresholds: list[float], n_sets: int, n_exact: int, reference_kind: str) -> list[dict]:
    from graph_store.ppr import PageRankMatrix, personalized_pagerank
    from graph_store.ppr_push import ForwardPush

    folder = graph_folder(nodes)
    if not (folder / "meta.json").exists() or not all((folder / n).exists() for n in CSR_FILES):
        subprocess.run([sys.executable, __file__, "graph", "--nodes", str(nodes)], check=True)
    meta = json.loads((folder / "meta.json").read_text())
    entities = meta["entities"]
    before = memory()
    adjacency, out_weight = load_csr(folder)
    push = ForwardPush(adjacency.indptr, adjacency.indices, adjacency.data, out_weight)
    sets = seed_sets(adjacency, entities, n_sets)
    start = time.perf_counter()
    push.scores(np.array([0]), np.array([1.0]), 0.5, 1e-3)  # the first call loads the compiled kernel
    first_call = time.perf_counter() - start
    rows: list[dict] = []
    tops: dict[float, list[set[int]]] = {}
    for threshold in thresholds:
        times, cpu, found = [], [], []
        for reset in sets:
            seeds = np.fromiter(reset, np.int64)
            weights = np.fromiter(reset.values(), np.float64)
            start, start_cpu = time.perf_counter(), time.thread_time()
            touched, mass, _ = push.scores(seeds, weights, 0.5, threshold)
            times.append(time.perf_counter() - start)
            cpu.append(time.thread_time() - start_cpu)
            found.append(top_passages(touched, mass, entities))
        tops[threshold] = found
        ppr = f"push {threshold:g}"
        rows.append({"nodes": nodes, "entries": meta["entries"], "ppr": ppr, "times": times, "cpu": cpu})
    held = memory()
    print(f"{nodes:,} nodes: memory before loading {before}, after the push queries {held} (MiB)", flush=True)
    reference: list[set[int] | None]
    if reference_kind == "certified":
        reference = certified_top_passages(push, sets, entities, out_weight)
    else:
        reference = list(exact_top_passages(adjacency, out_weight, sets, entities))
    known = {i: r for i, r in enumerate(reference) if r is not None}
    print(f"reference ({reference_kind}): the exact top 5 of {len(known)} of {len(sets)} seed sets", flush=True)
    if n_exact:  # the exact PPR retrieval runs today: float32, tolerance 1e-3
        matrix = PageRankMatrix(adjacency, dtype=np.float32)
        times, cpu = [], []
        for reset in sets[:n_exact]:
            start, start_cpu = time.perf_counter(), time.process_time()  # process: its row blocks run in threads
            vector = np.zeros(matrix.n)
            vector[list(reset)] = list(reset.values())
            personalized_pagerank(matrix, vector, 0.5, tol=1e-3)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        ppr = "exact (float32, tol 1e-3)"
        rows.append({"nodes": nodes, "entries": meta["entries"], "ppr": ppr, "times": times, "cpu": cpu})
    for row in rows:
        found = tops.get(float(row["ppr"].split()[1]), []) if row["ppr"].startswith("push") else []
        agreement = sum(len(found[i] & r) for i, r in known.items()) / (5 * len(known)) if found and known else None
        row.update(
            p50_ms=percentile_ms(row["times"], 50),
            p95_ms=percentile_ms(row["times"], 95),
            p50_cpu_ms=percentile_ms(row.pop("cpu"), 50),
            top5_agreement=round(100 * agreement, 1) if agreement is not None else None,
            reference=f"{reference_kind} ({len(known)} sets)",
            queries=len(row.pop("times")),
            rss_mib=held["VmRSS"],
            rss_file_mib=held["RssFile"],
            rss_anon_mib=held["RssAnon"],
            peak_rss_mib=round(peak_rss_mib(), 1),
            first_call_s=round(first_call, 2),
        )
    return rows


def cmd_retrieval(args) -> None:
    from graph_store.index import KnowledgeIndex
    from graph_store.retrieval import Retrievers, doc_ranking
    from graph_store.settings import load_settings

    exact, push = (
        Retrievers(
            KnowledgeIndex(
                load_settings(environ={}, index_dir=args.index_dir, ppr_local_min_nodes=local_min_nodes),
                progress=False,
                create=False,
            )
        )
        for local_min_nodes in (10**12, 0)
    )
    assert push.pagerank.local and not exact.pagerank.local
    titles = [t for (t,) in exact.index.store.rows("SELECT title FROM documents ORDER BY id")]
    questions = [
        f"Where was the director of the film {t} born?" for t in titles[:: max(1, len(titles) // args.queries)]
    ]
    folder = data_dir()
    if folder and (folder / "musique_dev.json").exists():
        questions += [q["question"] for q in json.loads((folder / "musique_dev.json").read_text())][: args.queries]
    vectors = [exact.embed(q) for q in questions]
    rows: list[dict] = []
    reference: list = []
    for threshold in [None, *args.thresholds]:  # None: exact PPR, timed on its own
        retrievers = exact if threshold is None else push
        if threshold is not None:
            push.pagerank.push_threshold = threshold
        found, times = [], []
        for question, vector in zip(questions, vectors):
            start = time.perf_counter()
            found.append(retrievers.ppr(question, k=5, vector=vector).evidence)
            times.append(time.perf_counter() - start)
        if threshold is None:
            reference = found
        rows.append(
            {
                "index": args.index_dir.name,
                "nodes": push.pagerank.n,
                "ppr": "exact" if threshold is None else f"push {threshold:g}",
                "questions": len(questions),
                "same_top5_passages_pct": round(
                    100 * sum([e.id for e in x] == [e.id for e in y] for x, y in zip(found, reference)) / len(found), 1
                ),
                "same_top5_documents_pct": round(
                    100 * sum(doc_ranking(x)[:5] == doc_ranking(y)[:5] for x, y in zip(found, reference)) / len(found),
                    1,
                ),
                "p50_ms": percentile_ms(times, 50),
            }
        )
        print_table(rows[-1:], list(rows[-1]))
    print()
    print_table(rows, list(rows[0]))
    print(f"wrote {write_result('scale_retrieval', {'machine': machine(), 'rows': rows})}")


def cmd_ppr(args) -> None:
    rows = []
    for nodes in args.nodes:
        rows += ppr_one_size(nodes, args.thresholds, args.seed_sets, args.exact_sets, args.reference)
        print_table([r for r in rows if r["nodes"] == nodes], list(rows[-1]))
    print()
    print_table(rows, list(rows[0]))
    result = {"machine": machine(), "seed_sets": args.seed_sets, "rows": rows}
    print(f"wrote {write_result('scale_ppr', result)}")


def cmd_corpus(args) -> None:
    from scale_corpus import write_corpus

    start = time.perf_counter()
    meta = write_corpus(args.out, args.passages, args.seed, args.questions)
    size = (args.out / "corpus.jsonl").stat().st_size / 2**20
    print(
        f"{meta['passages']:,} documents ({size:.0f} MiB), {meta['questions']} questions in "
        f"{time.perf_counter() - start:.0f} s: {args.out}"
    )


def offline_static_settings(index_dir: Path):
    """Offline, every collection with static vectors, whatever KGRAG_* variables or kgrag.toml say."""
    from graph_store.settings import load_settings

    return load_settings(
        config_file=None, environ={}, index_dir=index_dir, embedding_provider="minilm-static", extraction="offline"
    )


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class LoggedSteps(dict):
    """IndexSummary.step_seconds that also logs each step as it ends (a long build's log shows where it is)."""

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        print(f"{time.strftime('%H:%M:%S')} step done: {key} {value:.1f} s, {memory()} MiB", flush=True)


def log_build_steps() -> None:
    import dataclasses

    import graph_store.index

    @dataclasses.dataclass
    class Summary(graph_store.index.IndexSummary):
        def __post_init__(self) -> None:
            self.step_seconds = LoggedSteps()

    graph_store.index.IndexSummary = Summary  # type: ignore[misc]  # what add_documents makes


def cmd_index(args) -> None:
    from kgrag.api import KGRag

    seen: dict[str, list[float]] = {}  # progress step -> [first, last] time

    def progress(step: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if step not in seen:
            print(f"{time.strftime('%H:%M:%S')} {step}: {total:,}", flush=True)
        seen.setdefault(step, [now, now])[1] = now

    log_build_steps()
    rag = KGRag(settings=offline_static_settings(args.index_dir))
    loads = [load_average()]
    start = time.perf_counter()
    done = threading.Event()
    # (wall, CPU) every 2 s: the CPU seconds of each stage, as the wall time of a shared machine is inflated
    samples = [(start, time.process_time())]

    def sample() -> None:  # a long build's log also says it is alive, and how big it is
        while not done.wait(2):
            samples.append((time.perf_counter(), time.process_time()))
            if len(samples) % 30 == 0:
                print(f"{time.strftime('%H:%M:%S')} {samples[-1][0] - start:.0f} s, {memory()} MiB", flush=True)

    threading.Thread(target=sample, daemon=True).start()
    summary = rag.index(args.corpus / "corpus.jsonl", progress=progress)
    total = time.perf_counter() - start
    done.set()
    samples.append((time.perf_counter(), time.process_time()))
    loads.append(load_average())
    extracting = seen.get("extracting", [start, start])
    stages = {
        "read, chunk and record": extracting[0] - start,
        "extraction": extracting[1] - extracting[0],
        **summary.step_seconds,
    }
    # the build's steps follow the extraction (step_seconds from its end): their CPU from the samples
    ends = extracting[1] + np.cumsum(list(stages.values())[2:])
    bounds = np.concatenate([[start], extracting, ends])
    wall, cpu = np.array(samples).T
    stage_cpu = dict(zip(stages, np.diff(np.interp(bounds, wall, cpu))))
    stats = summary.stats
    result = {
        "corpus": str(args.corpus),
        "passages": stats.get("documents"),
        "embedding": "minilm-static (every collection static)",
        "total_s": round(total, 1),
        "stages_s": {k: round(v, 1) for k, v in stages.items()},
        "stages_cpu_s": {k: round(float(v), 1) for k, v in stage_cpu.items()},
        "cpu_s": round(samples[-1][1] - samples[0][1], 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "stats": stats,
        "load_average_before_after": loads,
        "index_bytes": sum(f.stat().st_size for f in Path(args.index_dir).rglob("*") if f.is_file()),
    }
    print(summary.format())
    print(json.dumps(result, indent=2))
    name = f"scale_index_{stats.get('documents')}"
    print(f"wrote {write_result(name, {'machine': machine(), **result})}")


def cmd_synonymy(args) -> None:
    """Synonymy on the entities of an index (their static vectors), all pairs against the HNSW graph, at growing
    sizes: the all-pairs cost grows with the square of the entities, the graph's about linearly."""
    from graph_store.embeddings import shared_static_embedder
    from graph_store.graph import synonym_pairs
    from graph_store.store import Store

    if args.index_dir:
        names = Store.open_snapshot(generation_dir(args.index_dir) / "snapshot.sqlite").entity_names()
    else:  # the entities of a synthetic corpus of as many passages as the largest size, no index needed
        from scale_corpus import make_world

        names = {f"e{i:07d}": name for i, name in enumerate(make_world(max(args.sizes)).names)}
    ids = sorted(names)
    rng = np.random.default_rng(0)
    vectors_all = shared_static_embedder().embed([names[i] for i in ids])
    rows = []
    for size in args.sizes:
        pick = np.sort(rng.choice(len(ids), min(size, len(ids)), replace=False))
        part, vectors = [ids[i] for i in pick], vectors_all[pick]
        found = {}
        for kind, exact_max in (("all pairs", None), ("hnsw", 0)):
            if kind == "all pairs" and size > args.exact_up_to:
                continue
            start, cpu = time.perf_counter(), time.process_time()
            found[kind] = set(synonym_pairs(part, vectors, 0.88, 10, exact_max=exact_max))
            rows.append(
                {
                    "entities": len(part),
                    "synonymy": kind,
                    "seconds": round(time.perf_counter() - start, 1),
                    "cpu_s": round(time.process_time() - cpu, 1),
                    "pairs": len(found[kind]),
                }
            )
        if len(found) == 2:
            same = len(found["all pairs"] & found["hnsw"]) / max(1, len(found["all pairs"] | found["hnsw"]))
            rows[-1]["same_pairs_pct"] = round(100 * same, 2)
        rows[-1]["load"] = load_average()
        print_table(rows[-len(found) :], list(rows[-1]))
    print()
    print_table(rows, ["entities", "synonymy", "seconds", "cpu_s", "pairs", "same_pairs_pct", "load"])
    print(f"wrote {write_result('scale_synonymy', {'machine': machine(), 'rows': rows})}")


def generation_dir(index_dir: Path) -> Path:
    from graph_store import generations

    current = generations.current(index_dir)
    assert current is not None, f"{index_dir} has no generation"
    return current.dir


def read_questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def cmd_ask(args) -> None:
    from kgrag.api import KGRag
    from kgrag.evaluation.metrics import exact_match

    questions = read_questions(args.questions)[: args.count + 1]
    rag = KGRag(settings=offline_static_settings(args.index_dir))
    rows = []
    loads = [load_average()]
    for graph in args.graphs:
        warm = time.perf_counter()
        rag.ask(questions[0]["question"], graph=graph)  # the first question loads the generation and the models
        warm_s = time.perf_counter() - warm
        times, cpu, correct = [], [], []
        for q in questions[1:]:
            start, start_cpu = time.perf_counter(), time.process_time()
            answer = rag.ask(q["question"], graph=graph)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            correct.append(exact_match(answer.short_answer, [q["answer"]]))
        held = memory()
        rows.append(
            {
                "graph": graph,
                "questions": len(times),
                "warm_up_s": round(warm_s, 2),
                "p50_ms": percentile_ms(times, 50),
                "p95_ms": percentile_ms(times, 95),
                "p50_cpu_ms": percentile_ms(cpu, 50),
                "em": round(float(np.mean(correct)), 3),
                "rss_mib": held["VmRSS"],
                "rss_anon_mib": held["RssAnon"],
                "rss_file_mib": held["RssFile"],
            }
        )
        print_table(
            rows[-1:],
            list(rows[-1]),
        )
    loads.append(load_average())
    rag.close()
    print()
    print_table(rows, list(rows[0]))
    result = {
        "index": str(args.index_dir),
        "rows": rows,
        "load_average_before_after": loads,
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }
    print(f"wrote {write_result(f'scale_ask_{Path(args.index_dir).name}', {'machine': machine(), **result})}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    ppr = commands.add_parser("ppr", help="local PPR vs exact on synthetic graphs")
    ppr.add_argument("--nodes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ppr.add_argument("--thresholds", type=float, nargs="+", default=[1e-6, 3e-7, 1e-7])
    ppr.add_argument("--seed-sets", type=int, default=50)
    ppr.add_argument("--exact-sets", type=int, default=10, help="seed sets timed with exact PPR (slow at 10M)")
    ppr.add_argument(
        "--reference",
        choices=["power", "certified"],
        default="power",
        help="exact top 5 by float64 power iteration, or certified from a push at 1e-8 and its error bound",
    )
    ppr.set_defaults(run=cmd_ppr)
    graph = commands.add_parser("graph", help="write the synthetic graph of --nodes nodes")
    graph.add_argument("--nodes", type=int, required=True)
    graph.set_defaults(run=cmd_graph)
    retrieval = commands.add_parser("retrieval", help="PPR retrieval with local PPR forced vs exact on an index")
    retrieval.add_argument("--index-dir", type=Path, required=True)
    retrieval.add_argument("--queries", type=int, default=100, help="of each kind")
    retrieval.add_argument("--thresholds", type=float, nargs="+", default=[1e-5, 1e-6, 1e-7])
    retrieval.set_defaults(run=cmd_retrieval)
    corpus = commands.add_parser("corpus", help="write a synthetic corpus and its questions")
    corpus.add_argument("--passages", type=int, required=True)
    corpus.add_argument("--out", type=Path, required=True)
    corpus.add_argument("--seed", type=int, default=0)
    corpus.add_argument("--questions", type=int, default=100)
    corpus.set_defaults(run=cmd_corpus)
    index = commands.add_parser("index", help="index a synthetic corpus (static vectors), per-stage seconds")
    index.add_argument("--corpus", type=Path, required=True)
    index.add_argument("--index-dir", type=Path, required=True)
    index.set_defaults(run=cmd_index)
    ask = commands.add_parser("ask", help="offline ask latency and memory on an index of a synthetic corpus")
    ask.add_argument("--index-dir", type=Path, required=True)
    ask.add_argument("--questions", type=Path, required=True)
    ask.add_argument("--count", type=int, default=30)
    ask.add_argument("--graphs", nargs="+", default=["pankrag", "propex"])
    ask.set_defaults(run=cmd_ask)
    synonymy = commands.add_parser("synonymy", help="synonymy all pairs vs HNSW on an index's entities")
    synonymy.add_argument("--index-dir", type=Path, help="its entities; without: a synthetic corpus's names")
    synonymy.add_argument("--sizes", type=int, nargs="+", default=[25_000, 50_000, 100_000, 200_000])
    synonymy.add_argument("--exact-up-to", type=int, default=200_000, help="all pairs only up to this size")
    synonymy.set_defaults(run=cmd_synonymy)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
