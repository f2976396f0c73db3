"""The offline reader and planner, measured on their own and as the wired workflow would use them.

    .venv/bin/python benchmarks/reader_accuracy.py [--data DIR] [--parts examples hops hotpotqa]

- examples: examples/questions.json over examples/corpus, answered two ways: by the compiled graph as
  it is, and by a reference of the wiring this reader is built for (rule_based_plan with history,
  PPR per sub-question with "#k" substituted, read_answer, combine() for compare/choose/both/same
  items, extractive_summary for summarize items). Right = exact match on the answer or an alias;
  summaries: the answer or an alias appears in the summary.
- hops: MuSiQue dev's gold decompositions with the gold answers substituted (an oracle chain), each
  hop read from its own top-5 PPR passages (the offline index of retrieval_recall.py): reader EM/F1,
  whether the gold is among the 3 candidates, whether it is written in the passages at all (what retrieval
  left the reader), per answer type. Isolates the reader from the planner.
  Then each whole question through its gold decomposition with the reader's own answers substituted (the
  workflow without its planner). Both per half of the dev set (by question id, as benchmarks/dev_halves.py):
  where the half not developed on falls behind, these say whether the planner or the reader does.
- hotpotqa: HotpotQA dev questions read whole from their top-5 PPR passages.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from _common import OUT_DIR, ROOT, data_dir, dev_halves, print_table, skip, write_result

from agent.context import Context
from agent.offline.planner import rule_based_plan
from agent.offline.questions import question_type
from agent.offline.reader import combine, extractive_summary, read_answer
from agent.plans import substitute_references
from graph_store.documents import load_documents
from graph_store.embeddings import MiniLMEmbedder
from graph_store.index import KnowledgeIndex
from graph_store.retrieval import Retrievers
from graph_store.settings import load_settings
from kgrag.evaluation.datasets import hotpotqa, musique
from kgrag.evaluation.metrics import exact_match, normalize_answer, token_f1

TOP_K = 5


def wired_answer(question: str, retrievers: Retrievers, embedder, history=None) -> str:
    """The answer the workflow gives once operations, summaries and follow-ups are wired (a reference)."""
    plan, _ = rule_based_plan(question, 6, history)
    ids = [p["id"] for p in plan]
    answers, readings = {}, {}
    for item in plan:
        query = substitute_references(item["question"], answers, ids)
        operation = item.get("operation")
        if operation and operation["op"] == "summarize":
            evidence = retrievers.community(query, TOP_K, "abstract") + retrievers.ppr(query, TOP_K).evidence
            answers[item["id"]] = extractive_summary(query, evidence, embedder)[0]
        elif operation:
            inputs = [(label, readings[dep]) for label, dep in zip(operation["labels"], item["depends_on"])]
            answers[item["id"]] = combine(operation, query, inputs)[0]
        else:
            readings[item["id"]] = read_answer(query, retrievers.ppr(query, TOP_K).evidence, embedder)
            answers[item["id"]] = readings[item["id"]].answer
    return answers[plan[-1]["id"]]


def graph_answer(question: str, resources, thread: str) -> str:
    from langgraph.checkpoint.memory import InMemorySaver

    from agent.graph import build_pankrag_graph

    config = {"configurable": {"thread_id": thread}}
    return build_pankrag_graph(InMemorySaver()).invoke(
        {"question": question}, config, context=Context(resources=resources)
    )["short_answer"]


def is_right(answer: str, q: dict) -> bool:
    golds = [q["answer"], *q["aliases"]]
    if q["type"] == "summary":
        return any(normalize_answer(g) in normalize_answer(answer) for g in golds)
    return bool(exact_match(answer, golds))


def examples(embedder) -> list[dict]:
    from agent.resources import Resources

    index = KnowledgeIndex(
        load_settings(environ={}, index_dir=OUT_DIR / "indexes" / "examples-offline"), embedder=embedder, progress=False
    )
    index.add_documents(load_documents(ROOT / "examples" / "corpus"))
    retrievers = Retrievers(index)
    resources = Resources(index, retrievers, None)
    questions = json.loads((ROOT / "examples" / "questions.json").read_text())
    by_id = {q["id"]: q for q in questions}
    score: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    misses = []
    for q in questions:
        history = None
        if q.get("follow_up_of"):
            previous = by_id[q["follow_up_of"]]["question"]
            history = [(previous, wired_answer(previous, retrievers, embedder))]
        wired = wired_answer(q["question"], retrievers, embedder, history)
        # the graph as it is has no history offline: a follow-up is asked as written
        current = graph_answer(q["question"], resources, q["id"])
        for kind in (q["type"], "all"):
            score[kind][0] += 1
            score[kind][1] += is_right(current, q)
            score[kind][2] += is_right(wired, q)
        if not is_right(wired, q):
            misses.append(f"  wired miss: {q['question']} -> {wired[:80]!r} (gold {q['answer']!r})")
    print("\n".join(misses))
    return [
        {"type": kind, "n": n, "graph today %": round(100 * a / n, 1), "wired %": round(100 * b / n, 1)}
        for kind, (n, a, b) in sorted(score.items(), key=lambda kv: (kv[0] == "all", kv[0]))
    ]


def read_rows(name: str, rows: list[tuple[str, list[str]]], retrievers: Retrievers, embedder) -> list[dict]:
    score: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
    for question, golds in rows:
        evidence = retrievers.ppr(question, TOP_K).evidence
        reading = read_answer(question, evidence, embedder)
        passages = f" {normalize_answer(' '.join(e.text for e in evidence))} "
        for kind in (question_type(question).type, "all"):
            s = score[kind]
            s[0] += 1
            s[1] += exact_match(reading.answer, golds)
            s[2] += token_f1(reading.answer, golds)
            s[3] += any(exact_match(c.answer, golds) for c in reading.candidates)
            s[4] += any(f" {normalize_answer(g)} " in passages for g in golds)
    return [
        {
            "set": name,
            "answer type": kind,
            "n": int(n),
            "EM": round(100 * em / n, 1),
            "F1": round(100 * f1 / n, 1),
            "gold in top 3": round(100 * hit / n, 1),
            "gold in passages": round(100 * written / n, 1),
        }
        for kind, (n, em, f1, hit, written) in sorted(score.items(), key=lambda kv: (kv[0] == "all", kv[0]))
    ]


def hop_question(q, n: int, answers: list[str]) -> str:
    """Hop ``n`` of a MuSiQue question as a question, "#k" replaced by the k-th of ``answers``; a hop written
    "Hello Love >> performer" (a relation of a subject) asked as "What is the performer of Hello Love?"."""
    ids = [str(i) for i in range(1, len(q.hops) + 1)]
    text = substitute_references(q.hops[n]["question"], dict(zip(ids, answers)), ids)
    if ">>" in text:
        subject, relation = (s.strip() for s in text.split(">>", 1))
        text = f"What is the {relation} of {subject}?"
    return text


def gold_plan_row(name: str, questions: list, retrievers: Retrievers, embedder) -> dict:
    """Whole questions answered through their gold decomposition, each hop read by the reader from its top-5 PPR
    passages with the reader's own earlier answers substituted: the workflow without its planner."""
    em = f1 = 0.0
    for q in questions:
        answers: list[str] = []
        for n in range(len(q.hops)):
            text = hop_question(q, n, answers)
            answers.append(read_answer(text, retrievers.ppr(text, TOP_K).evidence, embedder).answer)
        golds = [q.answer, *q.aliases]
        em += exact_match(answers[-1], golds)
        f1 += token_f1(answers[-1], golds)
    n = len(questions)
    return {
        "set": name,
        "answer type": "all",
        "n": n,
        "EM": round(100 * em / n, 1),
        "F1": round(100 * f1 / n, 1),
        "gold in top 3": "-",
        "gold in passages": "-",
    }


def offline_index(name: str, embedder) -> Retrievers | None:
    path = OUT_DIR / "indexes" / f"{name}-offline"
    if not (path / "manifest.json").exists():
        print(f"[{name}] no index at {path}: run benchmarks/retrieval_recall.py first; skipped")
        return None
    return Retrievers(KnowledgeIndex(load_settings(environ={}, index_dir=path), embedder=embedder, progress=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data")
    parser.add_argument("--parts", nargs="+", default=["examples", "hops", "hotpotqa"])
    args = parser.parse_args()
    embedder = MiniLMEmbedder()
    result = {}
    if "examples" in args.parts:
        rows = examples(embedder)
        print("\nexamples/questions.json, offline: share right")
        print_table(rows, list(rows[0]))
        result["examples"] = rows
    folder = data_dir(args.data)
    if folder is None and len(args.parts) > 1:
        skip("../shared/data not found: only the examples were measured")
    reading_rows = []
    if "hops" in args.parts and folder and (retrievers := offline_index("musique", embedder)):
        _, questions = musique(folder)
        for half, part in dev_halves(questions, key=lambda q: q.id):
            hops = [
                (hop_question(q, n, [h["answer"] for h in q.hops]), [hop["answer"]])
                for q in part
                for n, hop in enumerate(q.hops)
            ]
            reading_rows += read_rows(f"MuSiQue hops (oracle chain), {half} half", hops, retrievers, embedder)
            reading_rows.append(gold_plan_row(f"MuSiQue, gold plan, {half} half", part, retrievers, embedder))
    if "hotpotqa" in args.parts and folder and (retrievers := offline_index("hotpotqa", embedder)):
        _, questions = hotpotqa(folder)
        reading_rows += read_rows(
            "HotpotQA whole questions", [(q.question, [q.answer]) for q in questions], retrievers, embedder
        )
    if reading_rows:
        print("\nreader on its own: top-5 PPR passages per question")
        print_table(reading_rows, list(reading_rows[0]))
        result["reader"] = reading_rows
    print(f"wrote {write_result('reader_accuracy', result)}")


if __name__ == "__main__":
    main()
