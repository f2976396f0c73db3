"""The ``kgrag`` command line.

Settings flags are shared by every subcommand; they override environment
variables and the config file (see graph_store/settings.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable

from graph_store.errors import InputError, KGRagError
from graph_store.settings import Settings, load_settings

# flag -> Settings field; flags left unset fall through to env / file / defaults
SETTINGS_FLAGS = {
    "--index-dir": "index_dir",
    "--chat-model": "chat_model",
    "--chat-base-url": "chat_base_url",
    "--chat-api-key": "chat_api_key",
    "--chat-temperature": "chat_temperature",
    "--chat-timeout": "chat_timeout",
    "--max-concurrency": "max_concurrency",
    "--embedding-provider": "embedding_provider",
    "--embedding-model": "embedding_model",
    "--embedding-base-url": "embedding_base_url",
    "--checkpointer": "checkpointer",
}


def _settings_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("settings (override KGRAG_* variables and the config file)")
    group.add_argument("--config", help="TOML config file (default: ./kgrag.toml if present)")
    for flag, field in SETTINGS_FLAGS.items():
        info = Settings.model_fields[field]
        group.add_argument(flag, dest=field, default=None, help=info.description or f"sets {field}")
    return parent


def settings_from_args(args: argparse.Namespace) -> Settings:
    overrides = {field: getattr(args, field, None) for field in SETTINGS_FLAGS.values()}
    return load_settings(config_file=args.config, **overrides)


def cmd_config(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    print(json.dumps(settings.redacted(), indent=2))
    if settings.offline:
        print("mode: offline (no chat model configured; extractive answers, rule-based planning)")
    return 0


def _open_index(args: argparse.Namespace, create: bool = False):
    from graph_store.index import KnowledgeIndex

    return KnowledgeIndex(settings_from_args(args), create=create, progress=not getattr(args, "quiet", False))


def cmd_index(args: argparse.Namespace) -> int:
    index = _open_index(args, create=True)
    summary = index.add_path(args.path)
    print(summary.format())
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    print(_open_index(args).delete_documents(args.doc_ids).format())
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    index = _open_index(args)
    print(json.dumps(index.stats(), indent=2))
    if args.documents:
        for doc_id, title, source in index.store.rows("SELECT id, title, source FROM documents ORDER BY title"):
            print(f"{doc_id}  {title}  ({source})")
    if args.failed:
        for chunk_id, error in index.store.rows("SELECT chunk_id, error FROM extractions WHERE status = 'failed'"):
            print(f"failed chunk {chunk_id}: {error}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from graph_store.export import write_graphml, write_neighbourhood_html

    index = _open_index(args)
    if args.html:
        if not args.entity:
            raise SystemExit("kgrag export: --html needs --entity NAME")
        n = write_neighbourhood_html(index.store, args.entity, Path(args.html), hops=args.hops)
        print(f"wrote {args.html}: {n} entities around {args.entity!r}")
    if args.graphml:
        graph = write_graphml(index.store, Path(args.graphml), with_chunks=args.with_passages)
        print(f"wrote {args.graphml}: {graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges")
    if not (args.html or args.graphml):
        raise SystemExit("kgrag export: give --graphml FILE and/or --html FILE --entity NAME")
    return 0


def _print_citations(citations: list[dict]) -> None:
    if citations:
        print("sources:")
    for c in citations:
        print(f"  [{c['n']}] {', '.join(c['titles'])} ({c['kind']} {c['evidence_id']}; {', '.join(c['sources'])})")


def cmd_ask(args: argparse.Namespace) -> int:
    import uuid

    from agent.checkpoint import open_checkpointer
    from graph_store.index import require_index
    from agent.graph import build_pankrag_graph, build_propex_graph
    from agent.nodes import describe_event

    settings = settings_from_args(args)
    require_index(settings.index_dir)  # before a thread is checkpointed: the graph opens the index lazily
    thread = args.thread or uuid.uuid4().hex[:12]
    configurable = {"thread_id": thread, "index_dir": str(settings.index_dir), "mode": args.mode,
                    "route_policy": args.route}
    if args.alpha is not None:
        configurable.update(alpha_specific=args.alpha, beta_specific=1 - args.alpha)
    config = {"configurable": configurable, "max_concurrency": settings.max_concurrency}
    with open_checkpointer(settings.checkpointer_url) as saver:
        graph = (build_propex_graph if args.graph == "propex" else build_pankrag_graph)(saver)
        streamed_tokens = False
        for mode, chunk in graph.stream({"question": args.question}, config, stream_mode=["custom", "messages"]):
            if mode == "custom" and (step := describe_event(chunk)):
                print(step, end="")
            elif mode == "messages" and chunk[1].get("langgraph_node") == "answer" and chunk[0].content:
                if not streamed_tokens:
                    print("answer: ", end="")
                streamed_tokens = True
                print(chunk[0].content, end="", flush=True)
        values = graph.get_state(config).values
    if streamed_tokens:
        print()
    else:
        print(f"answer: {values['answer']}")
    _print_citations(values.get("citations", []))
    print(f"thread: {thread}  (follow up with --thread {thread}; details: kgrag inspect {thread})")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from agent.checkpoint import open_checkpointer
    from agent.graph import build_pankrag_graph

    settings = settings_from_args(args)
    with open_checkpointer(settings.checkpointer_url) as saver:
        graph = build_pankrag_graph(saver)
        config = {"configurable": {"thread_id": args.thread}}
        state = graph.get_state(config)
        if not state.values:
            raise InputError(f"no thread {args.thread!r} in {settings.checkpointer_url}")
        if args.history:
            for snapshot in graph.get_state_history(config):
                records = snapshot.values.get("subquestions", {})
                answered = [sid for sid, r in records.items() if r.get("status") != "pending"]
                print(f"step {snapshot.metadata.get('step')}: next={list(snapshot.next)} answered={answered}")
            return 0
    values = state.values
    if args.json:
        print(json.dumps(values, default=str, indent=2, ensure_ascii=False))
        return 0
    records = values.get("subquestions", {})
    for turn in sorted({r["turn"] for r in records.values()}):
        turn_records = [r for r in records.values() if r["turn"] == turn]
        print(f"== turn {turn}")
        for r in turn_records:
            deps = f" (after {', '.join(r['depends_on'])})" if r["depends_on"] else ""
            print(f"{r['id']} [{r['route']}, {r['kind']}, {r['status']}]{deps}: {r['question']}")
            if r.get("rephrased"):
                print(f"    rephrased: {r['rephrased']}")
            for e in r["evidence"][: args.evidence]:
                dep = e.get("dependency_similarity")
                scores = f"R={e['retrieval_score']:.3f}" + (f" M={dep:.3f} -> {e['score']:.3f}" if dep is not None else "")
                print(f"    {scores}  {e['kind']} {', '.join(e['titles'])}: {e['text'][:90]!r}")
            print(f"    answer: {r['answer']}" + (f"  (error: {r['error']})" if r.get("error") else ""))
    print(f"final answer: {values.get('answer')}")
    _print_citations(values.get("citations", []))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from agent.evaluation import datasets
    from agent.evaluation.runner import SYSTEMS, evaluate, pairwise, summarise, write_report
    from agent.resources import Resources
    from graph_store.retrieval import Retrievers

    if args.dataset == "generic":
        if not (args.questions and args.corpus):
            raise InputError("--dataset generic needs --questions FILE and --corpus FILE")
        docs, questions = datasets.generic(Path(args.questions), Path(args.corpus))
    else:
        if not args.data or not Path(args.data).is_dir():
            raise InputError(f"--dataset {args.dataset} needs --data DIR, the folder holding its files")
        docs, questions = datasets.LOADERS[args.dataset](Path(args.data))
    questions = questions[: args.limit] if args.limit else questions
    index = _open_index(args, create=True)
    print(index.add_documents(docs).format().splitlines()[0])
    resources = Resources(index, Retrievers(index), index.chat)
    systems = args.systems or [s for s in SYSTEMS]
    out = Path(args.out or f"eval-results/{args.dataset}")
    if args.pairwise and resources.offline:
        raise InputError("--pairwise needs a chat endpoint for the judge (KGRAG_CHAT_MODEL)")
    # LLM-judged metrics only when an endpoint is configured.
    results = evaluate(resources, questions, systems, out, progress=not args.quiet, judge=index.chat)
    rows = summarise(results)
    mode = "offline" if resources.offline else f"LLM {index.chat.model_name}"
    write_report(rows, out, f"{args.dataset}: {len(questions)} questions ({mode})")
    print((out / "summary.md").read_text())
    if args.pairwise:
        a, b = args.pairwise
        wins = pairwise(index.chat, results, a, b)
        (out / f"pairwise_{a}_vs_{b}.json").write_text(json.dumps(wins, indent=2))
        print(f"win rate of {a} over {b} (%): " + ", ".join(f"{d} {v}" for d, v in wins.items()))
    print(f"per-question results: {out}/<system>.jsonl; plots: {out}/*.png")
    return 0


def _evaluate_args(p: argparse.ArgumentParser) -> None:
    from agent.evaluation.runner import SYSTEMS

    p.add_argument("--dataset", choices=["musique", "hotpotqa", "ultradomain", "generic"], required=True)
    p.add_argument("--data", help="folder with the dataset's files (e.g. ../shared/data)")
    p.add_argument("--questions", help="generic: questions file (JSON list or JSONL)")
    p.add_argument("--corpus", help="generic: corpus file (JSON list of {title, text} or JSONL)")
    p.add_argument("--systems", nargs="+", choices=list(SYSTEMS), help="default: all")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--pairwise", nargs=2, metavar=("SYSTEM_A", "SYSTEM_B"),
                   help="also judge A against B on six dimensions, both orders averaged (needs an LLM)")
    p.add_argument("--out", help="output folder (default eval-results/DATASET); a re-run resumes there")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from agent.resources import Resources
    from agent.server import create_app

    settings = settings_from_args(args)
    named = dict(item.split("=", 1) for item in args.index) if args.index else {"kgrag": str(settings.index_dir)}
    indexes = {}
    for name, path in named.items():
        indexes[name] = Resources.open(settings.model_copy(update={"index_dir": Path(path)}))
    if not settings.api_keys:
        print("kgrag serve: warning: no api_keys configured, the API is open to anyone who can reach it",
              file=sys.stderr)
    print(f"serving {', '.join(indexes)} on http://{args.host}:{args.port} (OpenAI base URL: /v1)")
    uvicorn.run(create_app(settings, indexes), host=args.host, port=args.port, log_level="warning")
    return 0


def _serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--index", action="append", metavar="NAME=PATH",
                   help="an index to serve under a model name (repeatable; default: kgrag=--index-dir)")


def _ask_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("question")
    p.add_argument("--thread", help="continue a conversation (thread id printed by an earlier ask)")
    p.add_argument("--graph", choices=["pankrag", "propex"], default="pankrag",
                   help="the PankRAG workflow (default) or the ProPEX-RAG pipeline")
    p.add_argument("--mode", choices=["full", "no_planning", "no_rerank", "naive"], default="full")
    p.add_argument("--route", choices=["plan", "local", "community", "ppr", "dense"], default="plan",
                   help="route every sub-question one way (default: the plan's choice)")
    p.add_argument("--alpha", type=float, help="reranking weight of the retrieval score for specific questions "
                   "(beta = 1 - alpha; default 0.6)")


def _inspect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("thread")
    p.add_argument("--evidence", type=int, default=3, help="evidence items shown per sub-question (default 3)")
    p.add_argument("--history", action="store_true", help="list every checkpoint of the thread instead")
    p.add_argument("--json", action="store_true", help="print the whole state as JSON")


def _index_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="a .txt/.md file, a folder of them, or a .json/.jsonl corpus file")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _delete_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("doc_ids", nargs="+", metavar="DOC_ID", help="document ids (kgrag stats --documents)")


def _stats_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--documents", action="store_true", help="also list every document with its id")
    p.add_argument("--failed", action="store_true", help="also list chunks whose extraction failed")


def _export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--graphml", help="write the entity graph as GraphML (opens in Gephi)")
    p.add_argument("--with-passages", action="store_true", help="include passage nodes in the GraphML")
    p.add_argument("--html", help="write a self-contained HTML view of one entity's neighbourhood")
    p.add_argument("--entity", help="the entity for --html")
    p.add_argument("--hops", type=int, default=1, help="neighbourhood radius for --html (default 1)")


COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str, Callable | None]] = {
    "ask": (cmd_ask, "Answer a question against an index, streaming the plan, each sub-answer and the final "
            "answer with citations.", _ask_args),
    "inspect": (cmd_inspect, "Show a thread: the plan, each sub-question with its rephrasing, evidence scores "
                "and answer, and the final answer.", _inspect_args),
    "index": (cmd_index, "Index documents (a folder of .txt/.md, or a JSON/JSONL corpus) into --index-dir. "
              "Only new or changed documents are processed; re-running after a crash completes the index.", _index_args),
    "delete": (cmd_delete, "Delete documents by id, with the entities, facts and vectors only they supported.", _delete_args),
    "evaluate": (cmd_evaluate, "Evaluate systems (BM25, dense RAG, ProPEX PPR, PankRAG and its ablations) on a "
                 "dataset: per-question JSONL, a markdown summary and plots; a killed run resumes.", _evaluate_args),
    "stats": (cmd_stats, "Show counts of the index: documents, chunks, entities, facts, communities, vectors.", _stats_args),
    "export": (cmd_export, "Export the graph as GraphML, or an entity's neighbourhood as a self-contained HTML page.", _export_args),
    "serve": (cmd_serve, "Serve an OpenAI-compatible chat API (streamed steps, then the answer) and a native "
              "API over one or more indexes.", _serve_args),
    "config": (cmd_config, "Show the effective settings (keys masked) and whether the system runs offline.", None),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kgrag",
        description="Answer complex questions over a document corpus with a knowledge graph "
        "(PankRAG planning + ProPEX-RAG Personalized PageRank). Offline by default.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parent = _settings_parent()
    for name, (handler, help_text, add_arguments) in COMMANDS.items():
        cmd = sub.add_parser(name, parents=[parent], help=help_text, description=help_text)
        if add_arguments:
            add_arguments(cmd)
        cmd.set_defaults(handler=handler)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KGRagError as exc:
        print(f"kgrag: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kgrag: interrupted; finished work is saved, re-run to continue", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
