"""Offline embedding throughput: int8 MiniLM on 1,000 2WikiMultihopQA passages (2 cores).

    .venv/bin/python benchmarks/embedding_throughput.py [--data DIR] [--n 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from _common import data_dir, median, print_table, skip, write_result

from graph_store.embeddings import MiniLMEmbedder, minilm_tokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = data_dir(args.data)
    if folder is None or not (folder / "2wikimultihopqa_corpus.json").exists():
        skip("../shared/data/2wikimultihopqa_corpus.json not found")
    corpus = json.loads((folder / "2wikimultihopqa_corpus.json").read_text())
    passages = [f"{p['title']}\n{p['text']}" for p in corpus[: args.n]]
    tokens = [len(e.ids) for e in minilm_tokenizer().encode_batch(passages)]
    embedder = MiniLMEmbedder()
    embedder.embed(passages[:8])  # load the model outside the timing

    rows = []
    for label, texts in [("passages (length-sorted batches of 8)", passages),
                         ("short sentences", [p.split(". ")[0][:120] for p in passages])]:
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            embedder.embed(texts)
            times.append(time.perf_counter() - start)
        rows.append({"input": label, "n": len(texts), "median_s": round(median(times), 2),
                     "per_s": round(len(texts) / median(times), 1)})

    # The cost of padding: the same passages in random batches of 32 (one embed call per batch).
    shuffled = passages[:]
    random.Random(0).shuffle(shuffled)
    start = time.perf_counter()
    for i in range(0, len(shuffled), 32):
        embedder.embed(shuffled[i : i + 32])
    unsorted = time.perf_counter() - start
    rows.append({"input": "passages, unsorted batches of 32", "n": len(shuffled),
                 "median_s": round(unsorted, 2), "per_s": round(len(shuffled) / unsorted, 1)})

    print(f"mean passage length: {sum(tokens) / len(tokens):.0f} tokens")
    print_table(rows, ["input", "n", "median_s", "per_s"])
    path = write_result("embedding_throughput", {"mean_tokens": sum(tokens) / len(tokens), "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
