"""Offline indexing of 2WikiMultihopQA's 6,119 passages from empty, then a re-run with nothing new.

    .venv/bin/python benchmarks/index_build.py [--data DIR] [--limit N] [--index-dir DIR] [--static-vectors S]

Targets (issue 3, 2 cores): full build <= 120 s and <= 2 GiB peak RSS; no-op re-run <= 5 s.
The embedding throughput of the same run (chunk tokens per second) is printed beside the time: on a
shared machine it says how busy the cores were (about 6,300 tokens/s when idle).
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from _common import OUT_DIR, data_dir, peak_rss_mib, print_table, skip, write_result

from graph_store.documents import load_documents
from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data")
    parser.add_argument("--limit", type=int, default=0, help="index only the first N passages")
    parser.add_argument("--index-dir", default=str(OUT_DIR / "indexes" / "2wiki-offline"),
                        help="where to build (emptied first; kept afterwards for ppr_latency.py)")
    parser.add_argument("--static-vectors", help="the static_vectors setting (default: the settings' default)")
    args = parser.parse_args()
    folder = data_dir(args.data)
    if folder is None or not (folder / "2wikimultihopqa_corpus.json").exists():
        skip("2wikimultihopqa_corpus.json not found")
    target = Path(args.index_dir)
    shutil.rmtree(target, ignore_errors=True)
    docs = load_documents(folder / "2wikimultihopqa_corpus.json")
    if args.limit:
        docs = docs[: args.limit]
    settings = load_settings(environ={}, index_dir=target, static_vectors=args.static_vectors)

    start = time.perf_counter()
    index = KnowledgeIndex(settings)
    first = index.add_documents(docs)
    full = time.perf_counter() - start
    print(first.format())
    start = time.perf_counter()
    again = KnowledgeIndex(settings, progress=False).add_documents(load_documents(folder / "2wikimultihopqa_corpus.json")[: len(docs)])
    noop = time.perf_counter() - start
    assert again.added == 0 and not again.refreshed, "the re-run should find nothing to do"

    rows = [{"run": "full build", "seconds": round(full, 1)}, {"run": "no-op re-run", "seconds": round(noop, 2)}]
    print_table(rows, ["run", "seconds"])
    result = {"passages": len(docs), "full_build_s": full, "noop_rerun_s": noop, "peak_rss_mib": peak_rss_mib(),
              "steps_s": first.step_seconds, "stats": first.stats, "index_dir": str(target)}
    from graph_store.embeddings import minilm_tokenizer

    texts = [f"{t}\n{x}".strip() for t, x in index.store.rows(
        "SELECT d.title, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id")]
    tokens = sum(min(len(e.ids), 256) for e in minilm_tokenizer().encode_batch(texts))
    result["chunk_tokens_per_s"] = tokens / max(first.step_seconds.get("chunk vectors", 0.0), 1e-9)
    result["static_vectors"] = list(settings.static_collections)
    print(f"peak RSS: {result['peak_rss_mib']:.0f} MiB; chunk embedding {result['chunk_tokens_per_s']:,.0f} tokens/s "
          f"(about 6,300 on idle cores); static vectors: {', '.join(settings.static_collections) or 'none'}")
    print(f"wrote {write_result('index_build', result)}")


if __name__ == "__main__":
    main()
