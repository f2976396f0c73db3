"""Offline embedding throughput: int8 MiniLM on 1,000 2WikiMultihopQA passages (2 cores).

Also runs the bundled model's own float graph on the same batches, the reference the int8 graph
(graph_store/minilm_int8.py) is built from, and reports the cosine between the two graphs' vectors.

    .venv/bin/python benchmarks/embedding_throughput.py [--data DIR] [--n 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from _common import bundled_graph_embedder, data_dir, median, print_table, skip, write_result

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
    bundled = bundled_graph_embedder()

    def timed(model: MiniLMEmbedder, texts: list[str]) -> tuple[float, object]:
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            vectors = model.embed(texts)
            times.append(time.perf_counter() - start)
        return median(times), vectors

    rows, vectors = [], {}
    sentences = [p.split(". ")[0][:120] for p in passages]
    for label, model, texts in [
        ("passages, bundled float graph", bundled, passages),
        ("passages, int8 graph", embedder, passages),
        ("short sentences, int8 graph", embedder, sentences),
    ]:
        seconds, vectors[label] = timed(model, texts)
        count = sum(len(e.ids) for e in minilm_tokenizer().encode_batch(texts))
        rows.append(
            {
                "input": label,
                "n": len(texts),
                "median_s": round(seconds, 2),
                "per_s": round(len(texts) / seconds, 1),
                "tokens_per_s": round(count / seconds),
            }
        )
    cosines = (vectors["passages, bundled float graph"] * vectors["passages, int8 graph"]).sum(axis=1)

    # The cost of padding: the same passages in random batches of 32 (one embed call per batch).
    shuffled = passages[:]
    random.Random(0).shuffle(shuffled)
    start = time.perf_counter()
    for i in range(0, len(shuffled), 32):
        embedder.embed(shuffled[i : i + 32])
    unsorted = time.perf_counter() - start
    rows.append(
        {
            "input": "passages, unsorted batches of 32",
            "n": len(shuffled),
            "median_s": round(unsorted, 2),
            "per_s": round(len(shuffled) / unsorted, 1),
        }
    )

    print(f"mean passage length: {sum(tokens) / len(tokens):.0f} tokens")
    print_table(rows, ["input", "n", "median_s", "per_s", "tokens_per_s"])
    print(f"cosine, int8 graph vs bundled float graph: mean {cosines.mean():.4f}, min {cosines.min():.4f}")
    path = write_result(
        "embedding_throughput",
        {
            "mean_tokens": sum(tokens) / len(tokens),
            "rows": rows,
            "cosine_mean": float(cosines.mean()),
            "cosine_min": float(cosines.min()),
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
