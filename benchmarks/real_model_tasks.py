"""Per-task comparison for `benchmarks/real_model.py --per-task`: which of the model's tasks (``llm_tasks``) a small
model does better than its offline counterpart, on the same questions, scored strictly.

One run per row: ``llm_tasks`` = none (offline), each task alone, plan+rephrase and all of them. A task left out is done
offline (extractor, rule-based planner, reader), so a single-task row differs from the offline row in that task
only. The index a row asks is said in the row:

- ``offline``: built without the model; what every question-side row (plan, rephrase, filter, sub_answer,
  answer) asks by default, so that the task is the only difference from ``none``. ``--task-index model``
  asks the model-built index instead (then the baseline is its own ``none`` row).
- ``extract``: extraction by the model, community reports offline (the ``extract`` row).
- ``reports``: offline extraction, reports by the model (the ``reports`` row).
- ``model``: extraction and reports by the model (the ``all`` row). Its extraction replays the ``extract``
  index's responses from a copy of its response cache (the same prompts to the same model), so its own build
  time is the reports'; the row's index cost is both builds' model time together.

Every run asks every question with both graphs (PankRAG and ProPEX) through the Python library in one process,
on its own copy of the index with an empty response cache and no checkpoints: a row pays for each of its model
calls, none is replayed from another row. Model calls are counted in the model server's log.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from _common import print_table, write_result
from real_model import (
    KGRAG_TIMEOUT,
    MODEL,
    QUESTIONS,
    SUBSET,
    ServerLog,
    corpus_path,
    log,
    minutes,
    model_server,
    scores,
)

from graph_store.settings import LLM_TASKS, Settings

# More questions over the same 8 documents, in shapes the three of the default run do not have: a year, two
# bridges to a place or an institution, a comparison of things and one of people, an event. Each answer is in
# SUBSET (examples/corpus).
MORE_QUESTIONS = [
    ("In which year was Halvard Instruments founded?", "1921"),
    ("Which mountain rises above the city where Ana Keldor was born?", "Mount Kael"),
    ("Where was the architect of the Tarnholm Opera House born?", "Kessel"),
    ("Which is older, the Tarnholm Opera House or Halvard Instruments?", "Tarnholm Opera House"),
    ("Which company did Halvard Instruments acquire in 1998?", "Brask Optics"),
    ("Where did the founder of Halvard Instruments study physics?", "University of Kessel"),
    ("Who was born first, Edda Morlund or Oskar Brenn?", "Oskar Brenn"),
]
TASK_QUESTIONS = QUESTIONS + MORE_QUESTIONS
QUESTION_TASKS = ("plan", "rephrase", "filter", "sub_answer", "answer")
GRAPHS = ("pankrag", "propex")
# index name -> the tasks the model does while building it
INDEXES = {"offline": (), "extract": ("extract",), "reports": ("reports",), "model": ("extract", "reports")}


@dataclass(frozen=True)
class Run:
    label: str
    tasks: tuple[str, ...]  # llm_tasks while asking (and building, for the index rows)
    index: str  # a key of INDEXES


def runs(task_index: str) -> list[Run]:
    question_index = "offline" if task_index == "offline" else "model"
    rows = [Run("none", (), "offline")]
    if task_index == "model":
        rows.append(Run("none (model-built index)", (), "model"))
    rows += [Run("extract", ("extract",), "extract"), Run("reports", ("reports",), "reports")]
    rows += [Run(t, (t,), question_index) for t in QUESTION_TASKS]
    # rephrase rewrites a sub-question whose dependency the plan left implicit: rule-based plans never do, so
    # alone it makes no call; measured on top of the model's plan instead (compare with the plan row)
    rows.append(Run("plan+rephrase", ("plan", "rephrase"), question_index))
    return rows + [Run("all", tuple(LLM_TASKS), "model")]


class TaskBench:
    """The model server's settings, the corpus, the indexes built so far and where each run's rows are kept."""

    def __init__(self, base_url: str, workdir: Path, server_log: ServerLog):
        self.base_url, self.workdir, self.server_log = base_url, workdir / "per-task", server_log
        self.corpus = corpus_path("subset", workdir)
        self.indexes: dict[str, dict] = {}

    def settings(self, index_dir: Path, tasks: tuple[str, ...]) -> Settings:
        """Settings built directly (no KGRAG_* variable or kgrag.toml can change a row): offline for no task."""
        if not tasks:
            return Settings(index_dir=index_dir)
        return Settings(
            index_dir=index_dir,
            chat_model=MODEL["alias"],
            chat_base_url=self.base_url,
            chat_timeout=KGRAG_TIMEOUT,
            max_concurrency=1,
            llm_tasks=list(tasks),
        )

    def index(self, name: str) -> dict:
        """The index ``name`` (built once; a kept folder's is reused) and what building it cost."""
        if name in self.indexes:
            return self.indexes[name]
        from kgrag import KGRag

        folder = self.workdir / "indexes" / name
        record_file = folder.parent / f"{name}.json"
        if record_file.exists() and (folder / "manifest.json").exists():
            self.indexes[name] = json.loads(record_file.read_text())
            log(f"index {name}: reusing {folder}")
            return self.indexes[name]
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        settings = self.settings(folder, INDEXES[name])
        if name == "model":  # the extract index's extractions, replayed from its responses (see the docstring)
            from graph_store.index import KnowledgeIndex

            KnowledgeIndex(settings, progress=False, create=True).close()  # an empty index: a folder it accepts
            shutil.copyfile(Path(self.index("extract")["dir"]) / "llm_cache.sqlite", settings.llm_cache_path)
        log(f"index {name}: building with llm_tasks={list(INDEXES[name]) or 'none (offline)'}")
        start_mark, start = self.server_log.mark(), time.monotonic()
        with KGRag(settings=settings) as rag:
            summary = rag.index(self.corpus)
            stats = rag.stats()
        seconds, end_mark = time.monotonic() - start, self.server_log.mark()
        record = {
            "dir": str(folder),
            "built_with": list(INDEXES[name]),
            "seconds": round(seconds, 1),
            "model_calls": self.server_log.calls(start_mark, end_mark),
            "model_seconds": ServerLog.timings(self.server_log.between(start_mark, end_mark))["model_seconds"],
            "summary": summary.format(),
            "stats": stats,
        }
        log(f"index {name}: {minutes(seconds)}, {record['model_calls']} model calls\n{record['summary']}")
        record_file.write_text(json.dumps(record, indent=2, default=str))
        self.indexes[name] = record
        return record

    def ask_all(self, run: Run, questions: list) -> dict:
        """Every question with both graphs, on a fresh copy of the run's index."""
        from kgrag import KGRag

        saved = self.workdir / "runs" / f"{run.label}.json"
        if saved.exists():
            log(f"run {run.label}: reusing {saved}")
            return json.loads(saved.read_text())
        source = Path(self.index(run.index)["dir"])
        folder = self.workdir / "runs" / run.label / "index"
        shutil.rmtree(folder.parent, ignore_errors=True)
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns("llm_cache.sqlite*", "checkpoints.sqlite*"))
        rows = []
        with KGRag(settings=self.settings(folder, run.tasks)) as rag:
            for question, expected in questions:
                for graph in GRAPHS:
                    rows.append(self.ask_one(rag, run, question, expected, graph))
        record = {"label": run.label, "llm_tasks": list(run.tasks), "index": run.index, "answers": rows}
        saved.write_text(json.dumps(record, indent=2, default=str))
        return record

    def ask_one(self, rag, run: Run, question: str, expected: str, graph: str) -> dict:
        log(f"run {run.label} ({graph}): {question!r}")
        start_mark, start = self.server_log.mark(), time.monotonic()
        try:
            answer, error = rag.ask(question, graph=graph), None
        except Exception as exc:  # noqa: BLE001 - a row records the failure; the comparison goes on
            answer, error = None, f"{exc.__class__.__name__}: {exc}"
        seconds, end_mark = time.monotonic() - start, self.server_log.mark()
        short = answer.short_answer if answer else ""
        row = {
            "question": question,
            "graph": graph,
            "expected": expected,
            "short_answer": short,
            "answer": answer.answer if answer else "",
            **scores(short, expected),
            "extractive": answer.extractive if answer else None,
            "fallbacks": answer.fallbacks if answer else [],
            "model_calls": self.server_log.calls(start_mark, end_mark),
            "seconds": round(seconds, 1),
            "error": error,
        }
        log(
            f"  -> EM {row['em']:.0f} F1 {row['f1']:.2f} {short!r}; {row['model_calls']} model calls, {seconds:.1f} s"
            + (f"; {len(row['fallbacks'])} fallbacks" if row["fallbacks"] else "")
            + (f"; ERROR {error}" if error else "")
        )
        return row


def summary(record: dict, indexes: dict) -> dict:
    """One table row: strict scores per graph, the questions' model calls and wall time, fallbacks, errors."""
    rows = record["answers"]
    out = {"run": record["label"], "index": record["index"]}
    for graph in GRAPHS:
        mine = [r for r in rows if r["graph"] == graph]
        n = len(mine) or 1
        out[f"{graph} EM"] = f"{sum(r['em'] for r in mine) / n:.2f}"
        out[f"{graph} F1"] = f"{sum(r['f1'] for r in mine) / n:.2f}"
    out["calls"] = sum(r["model_calls"] for r in rows)
    out["ask s"] = round(sum(r["seconds"] for r in rows), 1)
    out["fallbacks"] = sum(len(r["fallbacks"]) for r in rows)
    out["errors"] = sum(1 for r in rows if r["error"])
    # the model's part of building the row's index: extract and reports rows their own build, all both of them
    built = {"extract": ["extract"], "reports": ["reports"], "all": ["extract", "model"]}.get(record["label"], [])
    out["index calls"] = sum(indexes[name]["model_calls"] for name in built)
    out["index s"] = round(sum(indexes[name]["seconds"] for name in built), 1) if built else ""
    return out


def per_task(args, workdir: Path, logdir: Path, model_path: Path, result: dict) -> int:
    """Run the comparison (the model server already set up), print its table, write real_model_tasks.json."""
    start = time.monotonic()
    questions = TASK_QUESTIONS[: args.questions] if args.questions else TASK_QUESTIONS
    chosen = [r for r in runs(args.task_index) if not args.tasks or r.label.split(" ")[0] in args.tasks]
    result.update(
        questions=[{"question": q, "expected": e} for q, e in questions],
        corpus=list(SUBSET),
        task_index=args.task_index,
        runs={},
        indexes={},
    )
    with model_server(model_path, logdir / "llama-server.log", workdir) as server:
        result["server_start_s"] = round(server.started_s, 1)
        bench = TaskBench(f"{server.url}/v1", workdir, ServerLog(logdir / "llama-server.log"))
        for run in chosen:
            record = bench.ask_all(run, questions)
            result["runs"][run.label] = record
            bench.index(run.index)
            if run.label == "all":
                bench.index("extract")
            result["runs"][run.label]["summary"] = summary(record, bench.indexes)
        result["indexes"] = bench.indexes
    result["per_task_s"] = round(time.monotonic() - start, 1)
    report(result)
    path = write_result("real_model_tasks", result)
    print(f"\nJSON: {path}")
    return 0 if not any(r["summary"]["errors"] for r in result["runs"].values()) else 1


def report(result: dict) -> None:
    n = len(result["questions"])
    print(f"\n== per task: {n} questions x 2 graphs, {MODEL['alias']}, strict EM / F1 of the short answer")
    columns = ["run", "index", "pankrag EM", "pankrag F1", "propex EM", "propex F1", "calls", "ask s", "fallbacks"]
    print_table([r["summary"] for r in result["runs"].values()], columns + ["errors", "index calls", "index s"])
    print("\nindexes (built once each; 'model' replays the extract index's extractions from its response cache):")
    for name, record in result["indexes"].items():
        stats = record.get("stats", {})
        print(
            f"  {name}: built with {record['built_with'] or 'no model'}, {record['seconds']} s, "
            f"{record['model_calls']} model calls ({record['model_seconds']} s of model time); "
            f"{stats.get('entities')} entities, {stats.get('facts')} facts, communities per level "
            f"{stats.get('communities_per_level') or 'none'}"
        )
    print("\n== answers per question (EM; short answer when not right)")
    labels = list(result["runs"])
    for q in result["questions"]:
        for graph in GRAPHS:
            cells = []
            for label in labels:
                row = next(
                    r
                    for r in result["runs"][label]["answers"]
                    if r["question"] == q["question"] and r["graph"] == graph
                )
                cells.append(f"{label}={row['em']:.0f}" + ("" if row["em"] else f"({row['short_answer'][:30]!r})"))
            print(f"  {q['question'][:50]} [{graph}] ({q['expected']}): " + "; ".join(cells))
    print(f"\nper-task comparison: {minutes(result['per_task_s'])} (after set-up)")
