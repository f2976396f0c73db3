"""Agent cost: LLM calls and tokens per question and orchestration overhead with a zero-latency scripted model
(MuSiQue dev, plans from the gold decompositions), and offline end-to-end answer latency on the 2Wiki index.

    .venv/bin/python benchmarks/agent_overhead.py [--data DIR] [--questions 50]

Needs benchmarks/out/indexes/musique-offline (retrieval_recall.py builds it) and, for the second part,
benchmarks/out/indexes/2wiki-offline (index_build.py). Targets (issue 5): overhead <= 100 ms per question,
calls <= 2 + 2 x sub-questions.
"""

from __future__ import annotations

import argparse
import json
import re
import time

import numpy as np
from _common import OUT_DIR, data_dir, median, print_table, skip, write_result

from agent.context import Context
from agent.graph import build_pankrag_graph
from agent.resources import Resources
from graph_store.index import KnowledgeIndex
from graph_store.llm import ChatClient, LLMCache
from graph_store.retrieval import Retrievers
from graph_store.settings import load_settings
from kgrag.evaluation.datasets import musique
from tests.helpers import ScriptedChatModel


class Timed:
    """Wraps the retrievers to add up the time spent retrieving."""

    def __init__(self, inner: Retrievers):
        self.inner, self.seconds = inner, 0.0

    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        if name not in ("ppr", "local", "community", "dense"):
            return attr

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed


def gold_plan(question) -> str:
    items = []
    for n, hop in enumerate(question.hops, 1):
        text = re.sub(r"#(\d+)", r"#q\1", hop["question"])
        deps = [f"q{d}" for d in re.findall(r"#(\d+)", hop["question"])]
        items.append({"id": f"q{n}", "question": text, "depends_on": deps, "route": "ppr", "kind": "specific"})
    return json.dumps({"sub_questions": items})


def scripted(question) -> ScriptedChatModel:
    answers = [h["answer"] for h in question.hops]
    state = {"answered": 0}

    def respond(messages):
        prompt = messages[-1].content
        if prompt.startswith("You plan how"):
            return gold_plan(question)
        if prompt.startswith("You select facts"):
            return '{"keep": [1, 2]}'
        if prompt.startswith("Answer the question using only"):
            answer = answers[min(state["answered"], len(answers) - 1)]
            state["answered"] += 1
            return json.dumps({"answer": answer, "evidence": [1]})
        if prompt.startswith("Rewrite"):
            return prompt.split("Sub-question:")[-1].splitlines()[0].strip()
        return f"{question.answer} [1]"

    return ScriptedChatModel(responder=respond)


def superstep_cost(index, retrievers, slow: float = 0.6, step: float = 0.2, chain: int = 3) -> dict:
    """A chain of `chain` sub-questions (each answered in `step` s) beside one slow parallel branch (`slow` s).

    LangGraph runs in synchronous supersteps, so the chain's second step waits for the slow branch.
    """
    items = [{"id": "slow", "question": "What are the main themes?", "route": "dense"}]
    items += [
        {
            "id": f"c{i}",
            "question": f"Chain step {i} about #c{i - 1}?" if i > 1 else "Chain step 1?",
            "depends_on": [f"c{i - 1}"] if i > 1 else [],
            "route": "dense",
        }
        for i in range(1, chain + 1)
    ]

    def respond(messages):
        prompt = messages[-1].content
        if prompt.startswith("You plan how"):
            return json.dumps({"sub_questions": items})
        if prompt.startswith("Answer the question using only"):
            time.sleep(slow if "main themes" in prompt.split("Question:")[-1] else step)
            return '{"answer": "x", "evidence": [1]}'
        return "done"

    resources = Resources(index, retrievers, ChatClient(ScriptedChatModel(responder=respond)))
    start = time.perf_counter()
    build_pankrag_graph().invoke({"question": "q"}, context=Context(resources=resources))
    measured = time.perf_counter() - start
    return {
        "slow_branch_s": slow,
        "chain": f"{chain} x {step} s",
        "measured_s": round(measured, 2),
        "ideal_s": round(max(slow, chain * step), 2),
        "superstep_bound_s": round(max(slow, step) + (chain - 1) * step, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data")
    parser.add_argument("--questions", type=int, default=50)
    args = parser.parse_args()
    folder = data_dir(args.data)
    musique_index = OUT_DIR / "indexes" / "musique-offline"
    if folder is None or not (musique_index / "manifest.json").exists():
        skip("needs ../shared/data and benchmarks/out/indexes/musique-offline (run retrieval_recall.py)")
    _, questions = musique(folder)
    questions = questions[: args.questions]
    index = KnowledgeIndex(load_settings(environ={}, index_dir=musique_index), progress=False, create=False)
    retrievers = Timed(Retrievers(index))
    graph = build_pankrag_graph()
    rows = []
    for q in questions:
        model = scripted(q)
        cache = LLMCache(OUT_DIR / "agent_bench_cache.sqlite")
        cache.clear()
        model.cache = cache
        chat = ChatClient(model)
        resources = Resources(index, retrievers, chat)
        retrievers.seconds = 0.0
        start = time.perf_counter()
        graph.invoke({"question": q.question}, context=Context(resources=resources))
        total = time.perf_counter() - start
        rows.append(
            {
                "subquestions": len(q.hops),
                "calls": chat.usage.calls,
                "tokens": chat.usage.input_tokens + chat.usage.output_tokens,
                "total_ms": 1000 * total,
                "retrieval_ms": 1000 * retrievers.seconds,
                "overhead_ms": 1000 * (total - retrievers.seconds),
            }
        )
    over_budget = sum(r["calls"] > 2 + 2 * r["subquestions"] for r in rows)
    summary = {
        "questions": len(rows),
        "mean_subquestions": round(float(np.mean([r["subquestions"] for r in rows])), 2),
        "mean_calls": round(float(np.mean([r["calls"] for r in rows])), 2),
        "max_calls_minus_budget": max(r["calls"] - (2 + 2 * r["subquestions"]) for r in rows),
        "questions_over_call_budget": over_budget,
        "mean_tokens": round(float(np.mean([r["tokens"] for r in rows]))),
        "p50_total_ms": round(median([r["total_ms"] for r in rows]), 1),
        "p50_retrieval_ms": round(median([r["retrieval_ms"] for r in rows]), 1),
        "p50_overhead_excl_retrieval_ms": round(median([r["overhead_ms"] for r in rows]), 1),
        "p95_overhead_excl_retrieval_ms": round(float(np.percentile([r["overhead_ms"] for r in rows], 95)), 1),
    }
    print_table([summary], list(summary))

    steps = superstep_cost(index, retrievers)
    print("synchronous supersteps: a chain beside a slow parallel branch")
    print_table([steps], list(steps))

    offline = {}
    wiki = OUT_DIR / "indexes" / "2wiki-offline"
    if (wiki / "manifest.json").exists():
        resources = Resources.open(load_settings(environ={}, index_dir=wiki))
        times = []
        for q in questions:
            start = time.perf_counter()
            graph.invoke({"question": q.question}, context=Context(resources=resources))
            times.append(time.perf_counter() - start)
        offline = {
            "questions": len(times),
            "p50_s": round(median(times), 3),
            "p95_s": round(float(np.percentile(times, 95)), 3),
        }
        print("offline end-to-end on the 2Wiki index (MuSiQue dev questions):")
        print_table([offline], list(offline))
    else:
        print("SKIPPED the offline latency part: no 2Wiki index (run benchmarks/index_build.py)")
    result = {"scripted": summary, "supersteps": steps, "offline_2wiki": offline, "rows": rows}
    print(f"wrote {write_result('agent_overhead', result)}")


if __name__ == "__main__":
    main()
