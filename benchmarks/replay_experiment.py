"""Offline replay of PankRAG's mechanisms on MuSiQue dev, with no LLM: an ORACLE-PLAN UPPER BOUND.

    .venv/bin/python benchmarks/replay_experiment.py [--data DIR]

The plan is each question's gold decomposition (a progress chain; "#k" refers to hop k's answer),
the graph is built from the recorded GPT-3.5 triples, retrieval is PPR. Sub-answers are the gold hop
answers (oracle) or spans extracted from each hop's evidence (the realistic offline case). Measured:
per-hop and overall Recall@2/5 with and without rephrasing (substituting "#k") and dependency-aware
reranking, and a sweep of alpha (beta = 1 - alpha) from 0 to 1, as PankRAG's Figures 3-4.
Overall Recall@k: the share of a question's gold passages in the top k of the hop that retrieves them.
"""

from __future__ import annotations

import argparse
import re

import numpy as np
from _common import OUT_DIR, data_dir, print_table, skip, write_result

from agent.offline.reader import extractive_answer
from agent.records import is_not_found
from agent.reranking import evidence_vectors, rerank_by_dependencies
from graph_store.embeddings import MiniLMEmbedder
from graph_store.index import KnowledgeIndex
from graph_store.retrieval import Evidence, Retrievers, doc_ranking
from graph_store.settings import load_settings
from kgrag.evaluation.datasets import RecordedExtractor, musique

ALPHAS = [round(a / 10, 1) for a in range(11)]


def hop_text(question: str, answers: dict[int, str], rephrase: bool) -> str:
    """A hop as a query: "#k" replaced by hop k's answer (rephrasing) or dropped; ">>" read as "of"."""
    text = re.sub(r"#(\d+)", lambda m: answers.get(int(m.group(1)), "") if rephrase else "", question)
    return " ".join(text.replace(">>", "").split())


def run_chain(
    retrievers: Retrievers, embedder, q, rephrase: bool, alpha: float | None, oracle: bool
) -> list[list[str]]:
    """Each hop's ranked documents for one setting (alpha None = no reranking)."""
    answers: dict[int, str] = {}
    rankings = []
    for n, hop in enumerate(q.hops, 1):
        query = hop_text(hop["question"], answers, rephrase)
        evidence = retrievers.ppr(query, 10).evidence
        deps = [int(k) for k in re.findall(r"#(\d+)", hop["question"]) if int(k) in answers]
        if alpha is not None and deps and evidence:
            dep_texts = [answers[k] for k in deps if not is_not_found(answers[k])]
            dep_vecs = embedder.embed(dep_texts) if dep_texts else None
            ranked = rerank_by_dependencies(
                evidence, evidence_vectors(evidence, retrievers, embedder), dep_vecs, alpha, 1 - alpha
            )
            evidence = [Evidence(**{k: e[k] for k in Evidence.model_fields}) for e in ranked]
        rankings.append(doc_ranking(evidence))
        answers[n] = hop["answer"] if oracle else extractive_answer(query, evidence, embedder).answer
    return rankings


def score(questions, chains, k: int) -> tuple[float, float]:
    """(per-hop Recall@k, overall Recall@k) in percent."""
    hop_hits, overall = [], []
    for q, rankings in zip(questions, chains):
        hits = [float(h["doc_id"] in r[:k]) for h, r in zip(q.hops, rankings)]
        hop_hits += hits
        found = {h["doc_id"] for h, r in zip(q.hops, rankings) if h["doc_id"] in r[:k]}
        overall.append(len(found & set(q.gold_doc_ids)) / len(q.gold_doc_ids))
    return round(100 * float(np.mean(hop_hits)), 1), round(100 * float(np.mean(overall)), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data")
    args = parser.parse_args()
    folder = data_dir(args.data)
    if folder is None or not (folder / "musique_corpus_openie_gpt35.json").exists():
        skip("../shared/data with MuSiQue and the recorded GPT-3.5 OpenIE not found")
    docs, questions = musique(folder)
    questions = [q for q in questions if q.hops and all(h["doc_id"] for h in q.hops)]
    embedder = MiniLMEmbedder()
    index = KnowledgeIndex(
        load_settings(environ={}, index_dir=OUT_DIR / "indexes" / "musique-gpt35"),
        embedder=embedder,
        extractor=RecordedExtractor(folder / "musique_corpus_openie_gpt35.json"),
    )
    index.add_documents(docs)  # a no-op when retrieval_recall.py built it already
    retrievers = Retrievers(index)

    rows, sweep = [], []
    for oracle in (True, False):
        label = "gold sub-answers (oracle)" if oracle else "extractive sub-answers"
        for rephrase, rerank in ((False, False), (True, False), (False, True), (True, True)):
            chains = [run_chain(retrievers, embedder, q, rephrase, 0.6 if rerank else None, oracle) for q in questions]
            (h2, o2), (h5, o5) = score(questions, chains, 2), score(questions, chains, 5)
            rows.append(
                {
                    "sub-answers": label,
                    "rephrase": rephrase,
                    "rerank (0.6/0.4)": rerank,
                    "hop R@2": h2,
                    "hop R@5": h5,
                    "overall R@2": o2,
                    "overall R@5": o5,
                }
            )
            print_table(rows[-1:], list(rows[-1]))
        for alpha in ALPHAS:
            chains = [run_chain(retrievers, embedder, q, True, alpha, oracle) for q in questions]
            (h2, o2), (h5, o5) = score(questions, chains, 2), score(questions, chains, 5)
            sweep.append(
                {
                    "sub-answers": label,
                    "alpha": alpha,
                    "hop R@2": h2,
                    "hop R@5": h5,
                    "overall R@2": o2,
                    "overall R@5": o5,
                }
            )
    print(f"\nORACLE-PLAN UPPER BOUND, MuSiQue dev ({len(questions)} questions, GPT-3.5 triples graph, PPR)")
    print_table(rows, list(rows[0]))
    print_table(sweep, list(sweep[0]))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for label in dict.fromkeys(s["sub-answers"] for s in sweep):
        points = [s for s in sweep if s["sub-answers"] == label]
        for metric, style in (("hop R@2", "--"), ("hop R@5", "-")):
            ax.plot(
                [p["alpha"] for p in points], [p[metric] for p in points], style, marker="o", label=f"{metric}, {label}"
            )
    ax.set_xlabel("alpha (retrieval score weight; beta = 1 - alpha)")
    ax.set_ylabel("per-hop recall (%)")
    ax.set_title("Dependency-aware reranking on MuSiQue dev (oracle plan)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT_DIR / "replay_alpha_sweep.png", dpi=100)
    print(
        f"wrote {OUT_DIR / 'replay_alpha_sweep.png'} and "
        f"{write_result('replay_experiment', {'questions': len(questions), 'rows': rows, 'sweep': sweep})}"
    )


if __name__ == "__main__":
    main()
