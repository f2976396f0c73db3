"""Our own question sets through the workflow, offline: EM / F1 per question type and the time per question.

    .venv/bin/python benchmarks/own_questions.py QUESTIONS.json --index-dir DIR [--show] [--answers OUT.jsonl]

QUESTIONS.json: examples/questions.json (a list) or benchmarks/data/own_2wiki_questions.json ({"questions": [...]}),
items {id, question, answer, aliases, type[, part]}; follow-ups are skipped. --part PART keeps the questions of that
part only (benchmarks/data/own_multihop_questions.json: "development" or "held-out"). --show prints each question, its plan and
answer; --answers writes one line {id, question, plan, answer} per question, to diff two versions of the planner/reader.
The index is built beforehand (`kgrag index examples/corpus --index-dir DIR`, or the 2Wiki corpus).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

from _common import print_table

from kgrag.api import KGRag
from kgrag.evaluation.metrics import exact_match, token_f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions")
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--part", help="only the questions whose 'part' is this")
    parser.add_argument("--answers", type=Path, help="write each question's answer to this file (JSON lines)")
    args = parser.parse_args()
    data = json.loads(Path(args.questions).read_text())
    questions = [q for q in (data["questions"] if isinstance(data, dict) else data) if q["type"] != "follow-up"]
    if args.part:
        questions = [q for q in questions if q.get("part") == args.part]
    rag = KGRag(args.index_dir)
    scores: dict[str, list[tuple[float, float]]] = defaultdict(list)
    times = []
    answers = []
    for q in questions:
        started = time.perf_counter()
        answer = rag.ask(q["question"])
        times.append(time.perf_counter() - started)
        plan = [s.question for s in answer.subquestions]
        answers.append(
            json.dumps({"id": q["id"], "question": q["question"], "plan": plan, "answer": answer.short_answer})
        )
        golds = [q["answer"], *q["aliases"]]
        em, f1 = exact_match(answer.short_answer, golds), token_f1(answer.short_answer, golds)
        scores[q["type"]].append((em, f1))
        scores["all"].append((em, f1))
        if args.show:
            plan = " | ".join(f"{s.question} -> {s.answer}" for s in answer.subquestions)
            print(
                f"{'OK ' if em else 'BAD'} {q['id']}: {q['question']}\n    plan: {plan}\n    -> {answer.short_answer!r}"
                f" (gold {q['answer']!r})"
            )
    rows = [
        {
            "type": kind,
            "questions": len(v),
            "EM": round(100 * statistics.mean(e for e, _ in v), 1),
            "F1": round(100 * statistics.mean(f for _, f in v), 1),
        }
        for kind, v in sorted(scores.items())
    ]
    if args.answers:
        args.answers.write_text("".join(line + "\n" for line in answers))
    print_table(rows, ["type", "questions", "EM", "F1"])
    print(f"seconds/question: p50 {statistics.median(times):.2f}, max {max(times):.2f}")


if __name__ == "__main__":
    main()
