"""Offline indexing of 2WikiMultihopQA's 6,119 passages from empty, then a re-run with nothing new.

    .venv/bin/python benchmarks/index_build.py [--data DIR] [--limit N] [--index-dir DIR] [--static-vectors S]
    .venv/bin/python benchmarks/index_build.py --scripted-latency 0.2 [--limit 1000] [--concurrency 1 4 8]

Targets (issue 3, 2 cores): full build <= 120 s and <= 2 GiB peak RSS; no-op re-run <= 5 s.
With --scripted-latency S the extractor is a model: a local OpenAI-compatible endpoint that answers every
request after S seconds (extraction: the chunk's first capitalised names and a relation between them;
reports: a short report), served concurrently. One build per --concurrency value (the max_concurrency
setting) shows extraction throughput against the limit, and how much of the build is waiting for the model.
The embedding throughput of the same run (chunk tokens per second) is printed beside the time: on a
shared machine it says how busy the cores were (about 10,700 tokens/s when idle, the int8 graph in
benchmarks/embedding_throughput.py).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import threading
import time
from pathlib import Path

from _common import OUT_DIR, data_dir, peak_rss_mib, print_table, skip, write_result

from graph_store.documents import load_documents
from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings
from tests.helpers import FakeOpenAIServer

_NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*")


def scripted_reply(prompt: str) -> dict:
    """What the scripted model says: a report for a report prompt, else an extraction naming the chunk's names."""
    if prompt.startswith("You write a report"):
        return {"title": "Community", "summary": "Related entities.", "findings": [], "rating": 5}
    text = prompt.rsplit("Document title:", 1)[-1]
    names = list(dict.fromkeys(n for n in _NAME.findall(text) if len(n) > 3))[:4]
    entities = [{"name": n, "type": "other", "description": f"{n} as the text names it."} for n in names]
    relations = [
        {"subject": a, "predicate": "related to", "object": b, "description": f"{a} and {b}.", "strength": 5}
        for a, b in zip(names, names[1:])
    ]
    return {"entities": entities, "relations": relations}


def scripted_model(latency: float):
    """A concurrent scripted model answering after ``latency`` seconds, counting the requests in flight."""
    counts = {"in_flight": 0, "max_in_flight": 0}
    lock = threading.Lock()

    def reply(model: str, messages: list[dict]) -> str:
        with lock:
            counts["in_flight"] += 1
            counts["max_in_flight"] = max(counts["max_in_flight"], counts["in_flight"])
        time.sleep(latency)
        with lock:
            counts["in_flight"] -= 1
        prompt = messages[-1]["content"]
        return json.dumps(scripted_reply(prompt if isinstance(prompt, str) else json.dumps(prompt)))

    return FakeOpenAIServer(reply, models=("scripted",)), counts


def scripted_builds(docs, latency: float, concurrencies: list[int], target: Path) -> None:
    rows = []
    for concurrency in concurrencies:
        server, counts = scripted_model(latency)
        folder = target.with_name(f"{target.name}-scripted-c{concurrency}")
        shutil.rmtree(folder, ignore_errors=True)
        with server:
            settings = load_settings(
                environ={},
                index_dir=folder,
                chat_model="scripted",
                chat_base_url=server.base_url,
                chat_api_key="none",
                max_concurrency=concurrency,
            )
            start = time.perf_counter()
            summary = KnowledgeIndex(settings, progress=False).add_documents(docs)
            seconds = time.perf_counter() - start
        chunks = summary.stats.get("chunks", len(docs))
        # Before the derivation steps: reading, chunking, extraction (chunk vectors are embedded meanwhile).
        extraction = seconds - sum(summary.step_seconds.values())
        rows.append(
            {
                "concurrency": concurrency,
                "model calls": len(server.requests),
                "max in flight": counts["max_in_flight"],
                "build s": round(seconds, 1),
                "extraction s": round(extraction, 1),
                "reports s": round(summary.step_seconds.get("reports", 0), 1),
                "chunks/s": round(chunks / extraction, 1) if extraction else None,
                "ideal chunks/s": round(concurrency / latency, 1),
                # the rest of the build beside the two steps that wait on the model
                "build / (extraction + reports)": round(
                    seconds / (extraction + summary.step_seconds.get("reports", 0)), 3
                ),
                "failed chunks": summary.stats.get("failed_chunks", 0),
            }
        )
        print(f"[concurrency {concurrency}] {seconds:.1f} s; " + summary.format().replace("\n", "; "))
    print_table(rows, list(rows[0]))
    print(f"wrote {write_result('index_build_scripted', {'latency_s': latency, 'passages': len(docs), 'runs': rows})}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data")
    parser.add_argument("--limit", type=int, default=0, help="index only the first N passages")
    parser.add_argument(
        "--index-dir",
        default=str(OUT_DIR / "indexes" / "2wiki-offline"),
        help="where to build (emptied first; kept afterwards for ppr_latency.py)",
    )
    parser.add_argument("--static-vectors", help="the static_vectors setting (default: the settings' default)")
    parser.add_argument(
        "--scripted-latency",
        type=float,
        help="extract with a local scripted model answering after this many seconds (default passages: 1000)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        nargs="+",
        default=[1, 4, 8],
        help="with --scripted-latency: the max_concurrency values to build with",
    )
    args = parser.parse_args()
    folder = data_dir(args.data)
    if folder is None or not (folder / "2wikimultihopqa_corpus.json").exists():
        skip("2wikimultihopqa_corpus.json not found")
    target = Path(args.index_dir)
    docs = load_documents(folder / "2wikimultihopqa_corpus.json")
    if args.scripted_latency:  # builds in folders of their own beside the target, which stays as it is
        scripted_builds(docs[: args.limit or 1000], args.scripted_latency, args.concurrency, target)
        return
    shutil.rmtree(target, ignore_errors=True)
    if args.limit:
        docs = docs[: args.limit]
    settings = load_settings(environ={}, index_dir=target, static_vectors=args.static_vectors)

    start = time.perf_counter()
    index = KnowledgeIndex(settings)
    first = index.add_documents(docs)
    full = time.perf_counter() - start
    print(first.format())
    start = time.perf_counter()
    again = KnowledgeIndex(settings, progress=False).add_documents(
        load_documents(folder / "2wikimultihopqa_corpus.json")[: len(docs)]
    )
    noop = time.perf_counter() - start
    assert again.added == 0 and not again.refreshed, "the re-run should find nothing to do"

    rows = [{"run": "full build", "seconds": round(full, 1)}, {"run": "no-op re-run", "seconds": round(noop, 2)}]
    print_table(rows, ["run", "seconds"])
    result = {
        "passages": len(docs),
        "full_build_s": full,
        "noop_rerun_s": noop,
        "peak_rss_mib": peak_rss_mib(),
        "steps_s": first.step_seconds,
        "stats": first.stats,
        "index_dir": str(target),
    }
    from graph_store.embeddings import minilm_tokenizer

    texts = [
        f"{t}\n{x}".strip()
        for t, x in index.store.rows("SELECT d.title, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id")
    ]
    tokens = sum(min(len(e.ids), 256) for e in minilm_tokenizer().encode_batch(texts))
    result["chunk_tokens_per_s"] = tokens / max(first.step_seconds.get("chunk vectors", 0.0), 1e-9)
    result["static_vectors"] = list(settings.static_collections)
    print(
        f"peak RSS: {result['peak_rss_mib']:.0f} MiB; chunk embedding {result['chunk_tokens_per_s']:,.0f} tokens/s "
        f"(about 10,700 on idle cores); static vectors: {', '.join(settings.static_collections) or 'none'}"
    )
    print(f"wrote {write_result('index_build', result)}")


if __name__ == "__main__":
    main()
