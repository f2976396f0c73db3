"""Evaluate systems on a dataset: per-question results (resumable), a markdown summary and plots.

Each system's results are appended to ``<out>/<system>.jsonl`` one question at a time, so a
killed evaluation continues where it stopped and gives the same file as an uninterrupted one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from tqdm import tqdm

from agent.context import Context
from agent.graph import build_pankrag_graph, build_propex_graph
from agent.resources import Resources
from graph_store.llm import ChatClient
from graph_store.retrieval import doc_ranking
from kgrag.evaluation.datasets import Question
from kgrag.evaluation.metrics import (
    DIMENSIONS,
    answer_relevance,
    context_precision,
    context_recall,
    exact_match,
    faithfulness,
    pairwise_win_rate,
    recall_at,
    token_f1,
)

RECALL_KS = (1, 2, 5, 10)
CONTEXTS = 5  # evidence texts the judges see
JUDGED = ("faithfulness", "answer_relevance", "context_precision", "context_recall")


@dataclass
class Answered:
    answer: str
    ranked_docs: list[str]
    hop_docs: list[list[str]]  # per sub-question, its ranked documents (PankRAG only)
    contexts: list[str] = field(default_factory=list)  # the evidence texts, best first (for the judges)


def _documents(evidence: list[dict]) -> list[str]:
    """The distinct documents of evidence dicts, in evidence order (doc_ranking for checkpointed state)."""
    return list(dict.fromkeys(d for e in evidence for d in e["doc_ids"]))


def _pankrag(mode: str) -> Callable[[Resources, Question], Answered]:
    def run(resources: Resources, q: Question) -> Answered:
        graph = build_pankrag_graph(InMemorySaver())  # the full state, not only the output keys
        config = {"configurable": {"thread_id": q.id}}
        graph.invoke({"question": q.question}, config, context=Context.of(resources, mode=mode))
        state = graph.get_state(config).values
        records = [state["subquestions"][sid] for sid in state["plan"]]
        evidence = state["evidence"]  # the workflow's final ranking (fuse), as the answer cites it
        return Answered(
            state["short_answer"],
            _documents(evidence),
            [_documents(r["evidence"]) for r in records],
            [e["text"] for e in evidence[:CONTEXTS]],
        )

    return run


def _propex(resources: Resources, q: Question) -> Answered:
    state = build_propex_graph().invoke({"question": q.question}, context=Context(resources=resources))
    passages = state["passages"]
    return Answered(state["short_answer"], _documents(passages), [], [p["text"] for p in passages[:CONTEXTS]])


def _bm25(resources: Resources, q: Question) -> Answered:
    from agent.offline.reader import extractive_answer

    evidence = resources.retrievers.bm25(q.question, 10)
    return Answered(
        extractive_answer(q.question, evidence, resources.embedder).answer,
        doc_ranking(evidence),
        [],
        [e.text for e in evidence[:CONTEXTS]],
    )


SYSTEMS: dict[str, Callable[[], Callable[[Resources, Question], Answered]]] = {
    "bm25": lambda: _bm25,
    "naive_dense": lambda: _pankrag("naive"),
    "propex_ppr": lambda: _propex,
    "pankrag_full": lambda: _pankrag("full"),
    "pankrag_no_planning": lambda: _pankrag("no_planning"),
    "pankrag_no_rerank": lambda: _pankrag("no_rerank"),
}


def score(q: Question, answered: Answered) -> dict:
    golds = [q.answer, *q.aliases] if q.answer else []
    row: dict[str, Any] = {
        "em": exact_match(answered.answer, golds) if golds else None,
        "f1": token_f1(answered.answer, golds) if golds else None,
    }
    for k in RECALL_KS:
        row[f"recall@{k}"] = recall_at(answered.ranked_docs, q.gold_doc_ids, k) if q.gold_doc_ids else None
    if q.hops and all(h.get("doc_id") for h in q.hops):
        # per hop: is that hop's gold passage among the top 5 of the whole ranking
        row["hop_recall@5"] = [float(h["doc_id"] in answered.ranked_docs[:5]) for h in q.hops]
    return row


def judged(judge: ChatClient, q: Question, answered: Answered) -> dict:
    """The Ragas-style scores of one answer; a malformed verdict scores None, never stops the run."""
    calls = {
        "faithfulness": lambda: faithfulness(judge, q.question, answered.answer, answered.contexts),
        "answer_relevance": lambda: answer_relevance(judge, q.question, answered.answer),
        "context_precision": lambda: (
            context_precision(judge, q.question, q.answer, answered.contexts) if q.answer else None
        ),
        "context_recall": lambda: context_recall(judge, q.answer, answered.contexts) if q.answer else None,
    }
    row = {}
    for name, call in calls.items():
        try:
            row[name] = call()
        except ValueError:
            row[name] = None
    return row


def _read_done(path: Path) -> dict[str, dict]:
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
                done[row["id"]] = row
            except (json.JSONDecodeError, KeyError):
                continue  # a line cut by a kill: that question runs again
        path.write_text("".join(json.dumps(r) + "\n" for r in done.values()))
    return done


def evaluate(
    resources: Resources,
    questions: list[Question],
    systems: list[str],
    out_dir: Path,
    progress: bool = True,
    judge: ChatClient | None = None,
) -> dict[str, list[dict]]:
    """Run every system on every question (skipping those already in the output files).

    With a ``judge``, each answer also gets the LLM-judged scores (its calls are not counted as the system's).
    """
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        raise ValueError(f"unknown system(s) {unknown}; known: {', '.join(SYSTEMS)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict]] = {}
    for system in systems:
        path = out_dir / f"{system}.jsonl"
        done = _read_done(path)
        run = SYSTEMS[system]()
        todo = [q for q in questions if q.id not in done]
        bar = tqdm(
            total=len(questions),
            initial=len(questions) - len(todo),
            desc=system,
            unit="q",
            disable=not progress or None,
        )
        with path.open("a") as out:
            for q in todo:
                usage_before = _usage(resources.chat)
                start = time.perf_counter()
                answered = run(resources, q)
                seconds = time.perf_counter() - start
                usage = {k: v - usage_before[k] for k, v in _usage(resources.chat).items()}
                row = {
                    "id": q.id,
                    "question": q.question,
                    "gold": q.answer,
                    "answer": answered.answer,
                    **score(q, answered),
                    # what was retrieved, so two runs can be compared on retrieval as well as on answers
                    "docs": answered.ranked_docs[: max(RECALL_KS)],
                    "seconds": round(seconds, 3),
                    **usage,
                    **(judged(judge, q, answered) if judge else {}),
                }
                out.write(json.dumps(row) + "\n")
                out.flush()
                done[q.id] = row
                bar.update(1)
        bar.close()
        results[system] = [done[q.id] for q in questions if q.id in done]
    return results


def _usage(chat: ChatClient | None) -> dict[str, int]:
    usage = chat.usage if chat else None
    return {
        "llm_calls": usage.calls if usage else 0,
        "tokens": (usage.input_tokens + usage.output_tokens) if usage else 0,
    }


def summarise(results: dict[str, list[dict]]) -> list[dict]:
    rows = []
    for system, items in results.items():
        row = {"system": system, "questions": len(items)}
        judged_keys = [k for k in JUDGED if any(k in i for i in items)]
        for key in ("em", "f1", *(f"recall@{k}" for k in RECALL_KS), *judged_keys):
            values = [i[key] for i in items if i.get(key) is not None]
            row[key] = round(100 * sum(values) / len(values), 1) if values else None
        for key in ("seconds", "llm_calls", "tokens"):
            row[f"{key}/q"] = round(sum(i[key] for i in items) / max(len(items), 1), 3)
        rows.append(row)
    return rows


def write_report(rows: list[dict], out_dir: Path, title: str) -> None:
    """summary.md (a markdown table) and recall.png / answers.png (bar charts)."""
    columns = list(rows[0])
    lines = [f"# {title}", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join("" if r[c] is None else str(r[c]) for c in columns) + " |" for r in rows]
    (out_dir / "summary.md").write_text("\n".join(lines) + "\n")
    (out_dir / "summary.json").write_text(json.dumps(rows, indent=2))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for name, keys in (("recall", [f"recall@{k}" for k in RECALL_KS]), ("answers", ["em", "f1"])):
        if all(r[k] is None for r in rows for k in keys):
            continue
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(rows)
        for i, r in enumerate(rows):
            ax.bar([x + i * width for x in range(len(keys))], [r[k] or 0 for k in keys], width, label=r["system"])
        ax.set_xticks([x + width * (len(rows) - 1) / 2 for x in range(len(keys))], keys)
        ax.set_ylabel("%")
        ax.set_title(title)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out_dir / f"{name}.png", dpi=100)
        plt.close(fig)


def pairwise(
    judge: ChatClient, results: dict[str, list[dict]], system_a: str, system_b: str
) -> dict[str, float | None]:
    """PankRAG's abstract-question evaluation: A's mean win rate over B per dimension (both orders averaged)."""
    b_answers = {r["id"]: r["answer"] for r in results[system_b]}
    per_dimension: dict[str, list[float]] = {d: [] for d in DIMENSIONS}
    for row in results[system_a]:
        if row["id"] in b_answers:
            for dimension, value in pairwise_win_rate(
                judge, row["question"], row["answer"], b_answers[row["id"]]
            ).items():
                if value is not None:
                    per_dimension[dimension].append(value)
    return {d: (round(100 * sum(v) / len(v), 1) if v else None) for d, v in per_dimension.items()}
