"""The ``kgrag`` command line, over the library API (kgrag/api.py).

Settings flags are shared by every subcommand; they override environment variables and the config
file (see graph_store/settings.py). Imports happen inside the commands, so ``kgrag --help`` starts at once.
Human output is text; ``--json`` output is JSON and nothing else. Errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

# Settings flags by what they are about, group -> flag -> (Settings field, help); a command shows the groups it
# uses, after its own options. Flags left unset fall through to env / file / defaults.
SETTINGS_GROUPS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "index": (
        "index (override KGRAG_* variables and the config file)",
        {
            "--index-dir": ("index_dir", "directory of the index to build or query (default ./kgrag-index)"),
            "--record": (
                "record",
                "postgresql:// URL of the database holding the index's record (default: index.sqlite in --index-dir)",
            ),
            "--generations-dir": (
                "generations_dir",
                "folder the derived generations are published to and answered from, e.g. on a mount every machine "
                "shares (default: derived/ in --index-dir)",
            ),
        },
    ),
    "model": (
        "chat model (unset: offline; override KGRAG_CHAT_* variables)",
        {
            "--chat-model": ("chat_model", "chat model name; unset = offline mode (no LLM)"),
            "--chat-base-url": ("chat_base_url", "OpenAI-compatible base URL (vLLM, Ollama, llama.cpp server ...)"),
            "--chat-api-key": ("chat_api_key", "API key; optional for a custom base URL"),
            "--chat-temperature": ("chat_temperature", "sampling temperature (default 0)"),
            "--chat-timeout": ("chat_timeout", "seconds per model request (default 120)"),
            "--max-concurrency": (
                "max_concurrency",
                "concurrent model calls / parallel branches (default 4; 1 for a server that handles one request "
                "at a time)",
            ),
        },
    ),
    "embedding": (
        "embeddings (only for an index built with other ones than the offline default)",
        {
            "--embedding-provider": (
                "embedding_provider",
                "minilm-onnx (default, offline), minilm-static (no model run) or openai",
            ),
            "--embedding-model": ("embedding_model", "embedding model name for the openai provider"),
            "--embedding-base-url": ("embedding_base_url", "base URL of the embedding endpoint"),
        },
    ),
    "engine": (
        "where extraction and embedding run (override KGRAG_ENGINE, KGRAG_RAY_*)",
        {
            "--engine": ("engine", "local (default: this process) or ray (actor pools on Ray; needs the ray extra)"),
            "--address": (
                "ray_address",
                "with --engine ray: the cluster to join (auto, or ray://host:10001); default: start Ray here",
            ),
            "--ray-workers": ("ray_workers", "with --engine ray: actors per pool (default: the CPUs Ray reports)"),
        },
    ),
    "conversations": (
        "conversations",
        {
            "--checkpointer": (
                "checkpointer",
                "SQLite path or postgresql:// URL for conversations (default <index-dir>/checkpoints.sqlite)",
            )
        },
    ),
}
SETTINGS_FLAGS = {flag: spec for _, flags in SETTINGS_GROUPS.values() for flag, spec in flags.items()}
ALL_GROUPS = tuple(SETTINGS_GROUPS)


def _add_settings(cmd: argparse.ArgumentParser, groups: tuple[str, ...]) -> None:
    """The settings flags of ``groups`` (and --config), after the command's own options."""
    for n, name in enumerate(groups):
        title, flags = SETTINGS_GROUPS[name]
        group = cmd.add_argument_group(title)
        if n == 0:
            group.add_argument("--config", help="TOML config file (default: ./kgrag.toml if present)")
        for flag, (field, help_text) in flags.items():
            group.add_argument(flag, dest=field, default=None, help=help_text)


def settings_from_args(args: argparse.Namespace):
    from graph_store.settings import load_settings

    overrides = {field: getattr(args, field, None) for field, _ in SETTINGS_FLAGS.values()}
    return load_settings(config_file=getattr(args, "config", None), **overrides)


def _library(args: argparse.Namespace):
    from kgrag import KGRag

    return KGRag(settings=settings_from_args(args))


def _print_json(data) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _text(value) -> str:
    from agent.events import printable

    return printable(value)


# --- commands ---------------------------------------------------------------------------------------


def cmd_config(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    shown = settings.redacted()
    if args.json:
        _print_json(shown)
        return 0
    for key, value in shown.items():
        print(f"{key}: {value}")
    print(
        "mode: "
        + (
            "offline (no chat model configured; extractive answers, rule-based planning)"
            if settings.offline
            else f"LLM {settings.chat_model} at {shown['chat_base_url'] or 'OpenAI'}"
        )
    )
    return 0


def _warn_unlisted_model(settings) -> None:
    from graph_store.llm import unlisted_model

    warning = unlisted_model(settings)
    if warning:
        print(f"warning: {_text(warning)}", file=sys.stderr)


def cmd_index(args: argparse.Namespace) -> int:
    rag = _library(args)
    _warn_unlisted_model(rag.settings)
    summary = rag.index(args.path, progress=not args.quiet, reextract=args.reextract)
    print(_text(summary.format()))
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    print(_text(_library(args).delete(args.doc_ids).format()))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from graph_store.index import KnowledgeIndex

    index = KnowledgeIndex(settings_from_args(args), progress=False, create=False)
    stats = index.stats()
    documents = [{"id": i, "title": t, "source": s} for i, t, s in index.store.documents()] if args.documents else []
    failed = [{"chunk_id": c, "error": e} for c, e in index.store.failed_chunks()] if args.failed else []
    reports = [{"community_id": c, "title": t} for c, t in index.store.fallback_reports()] if args.failed else []
    if args.json:
        _print_json(
            {
                **stats,
                **({"documents_list": documents} if args.documents else {}),
                **({"failed_list": failed, "failed_reports_list": reports} if args.failed else {}),
            }
        )
        return 0
    for key, value in stats.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items()) or "none"
        print(f"{key.replace('_', ' ')}: {value}")
    for d in documents:
        print(_text(f"{d['id']}  {d['title']}  ({d['source']})"))
    for f in failed:
        print(_text(f"failed chunk {f['chunk_id']}: {f['error']}"))
    for r in reports:
        print(
            _text(
                f"failed report {r['community_id']} ({r['title']}): the model's report failed, an extractive one "
                "stands in; `kgrag index` with the model tries it again"
            )
        )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from graph_store.export import write_graphml, write_neighbourhood_html
    from graph_store.index import KnowledgeIndex

    if not (args.html or args.graphml):
        raise _usage("export: give --graphml FILE and/or --html FILE --entity NAME")
    if args.html and not args.entity:
        raise _usage("export: --html needs --entity NAME")
    index = KnowledgeIndex(settings_from_args(args), progress=False, create=False)
    if args.html:
        n = write_neighbourhood_html(index.store, args.entity, Path(args.html), hops=args.hops)
        print(_text(f"wrote {args.html}: {n} entities around {args.entity!r}"))
    if args.graphml:
        graph = write_graphml(index.store, Path(args.graphml), with_chunks=args.with_passages)
        print(f"wrote {args.graphml}: {graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges")
    return 0


def cmd_entities(args: argparse.Namespace) -> int:
    from kgrag import cli_entities

    return cli_entities.run(args, settings_from_args(args))


def confidence_word(confidence: float) -> str:
    """How sure, in a word: a wrong answer should not look as sure as a right one."""
    if confidence >= 0.75:
        return "high"
    return "medium" if confidence >= 0.5 else "low: check the sources"


def _print_answer(answer, settings, with_text: bool) -> None:
    from agent.records import is_not_found
    from kgrag.api import Answer

    assert isinstance(answer, Answer)
    if with_text:
        print(f"answer: {_text(answer.answer)}")
    if answer.planner != "small-talk":
        how = "extracted from the documents" if answer.extractive else "from the language model"
        if is_not_found(answer.short_answer):
            print(f"confidence: none, not found in the documents ({how})")
        else:
            print(f"confidence: {answer.confidence:.2f}, {confidence_word(answer.confidence)} ({how})")
    for fallback in answer.fallbacks:
        print(f"fallback: {_text(fallback)}")
    for notice in answer.notices:
        print(f"notice: {_text(notice)}")
    calls = answer.usage.get("model_calls", 0)
    if calls:
        tokens = (
            f"{answer.usage['input_tokens']} input + {answer.usage['output_tokens']} output tokens"
            if answer.usage.get("reported", True)
            else "tokens not reported by the endpoint"
        )
        print(f"model: {calls} call{'s' if calls != 1 else ''}, {tokens}")
    cited, retrieved = answer.sources()
    for heading, citations in (("sources:", cited), ("also retrieved (not cited):", retrieved)):
        if citations:
            print(heading)
        for c in citations:
            where = ", ".join(s for s in c.sources if s)
            print(_text(f"  [{c.n}] {c.title}" + (f" ({where})" if where else "")))
    index = f" --index-dir {settings.index_dir}"
    print(
        f'thread: {answer.thread_id}  (follow up: kgrag ask "..." --thread {answer.thread_id}{index}; '
        f"details: kgrag inspect {answer.thread_id}{index})"
    )


def _review(rag, answer, args):
    """Show the plan of a run stopped for review; resume with it kept or edited (JSON on stdin or in $EDITOR)."""
    print("plan to review:")
    _print_json(answer.review["sub_questions"])
    if answer.review.get("problem"):
        print(f"note: {answer.review['problem']}")
    edited = None
    if sys.stdin.isatty():
        reply = input("Enter keeps this plan; 'e' edits it in $EDITOR: ").strip().lower()
        if reply == "e":
            import subprocess
            import tempfile

            with tempfile.NamedTemporaryFile("w+", suffix=".json", delete=False) as fh:
                json.dump(answer.review["sub_questions"], fh, indent=2)
            subprocess.run([os.environ.get("EDITOR", "vi"), fh.name], check=False)
            edited = Path(fh.name).read_text()
    else:
        edited = sys.stdin.read().strip() or None  # scripted: the edited plan as JSON, or nothing to keep it
    if edited is not None:
        try:
            edited = json.loads(edited)
        except json.JSONDecodeError as exc:
            raise _usage(f"ask --review: the edited plan is not JSON ({exc.msg})") from None
    return rag.stream("", thread=answer.thread_id, graph=args.graph, resume={"plan": edited})


def _looks_answerable(settings) -> bool:
    """Cheap signs that opening the index will succeed (a readable manifest, a complete generation), so a plan
    shown early is not followed by an error about the index."""
    from graph_store import generations
    from graph_store.errors import IndexStoreError
    from graph_store.manifest import read_manifest, require_index

    try:
        if not settings.generations_dir or (settings.index_dir / "manifest.json").exists():
            require_index(settings.index_dir)
            read_manifest(settings.index_dir)
        return generations.current(settings) is not None
    except (OSError, IndexStoreError):
        return False


def _plan_preview(args: argparse.Namespace, settings) -> str | None:
    """Offline, a new conversation's plan is the rule-based planner's, which needs neither the index nor the
    graph stack: shown at once instead of after the ~3 s LangGraph takes to import (the run's own plan event,
    the same text, is then not printed again)."""
    question = args.question.strip()
    if (
        not settings.offline
        or args.thread
        or args.review
        or args.graph != "pankrag"
        or args.mode not in ("full", "no_rerank")
        or not 0 < len(question) <= settings.max_question_chars
        or not _looks_answerable(settings)
    ):
        return None
    from agent.events import describe_event
    from agent.offline.planner import offline_first_plan_event, small_talk_reply

    if small_talk_reply(question) is not None:
        return None
    return describe_event(offline_first_plan_event(question))


def cmd_ask(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if not settings.offline:
        print(
            f"model: {settings.chat_model}"
            + (f" at {settings.redacted()['chat_base_url']}" if settings.chat_base_url else "")
        )
        _warn_unlisted_model(settings)
    preview = _plan_preview(args, settings)
    if preview:
        print(preview, end="", flush=True)
    from kgrag.api import Answer, KGRag, Step, Token

    rag = KGRag(settings=settings)
    knobs = {"mode": args.mode, "route_policy": args.route, "review_plan": args.review}
    if args.alpha is not None:
        knobs.update(alpha_specific=args.alpha, beta_specific=1 - args.alpha)
    events: Iterator[Step | Token | Answer] | None = rag.stream(
        args.question, thread=args.thread, graph=args.graph, **knobs
    )
    answer: Answer | None = None
    drafting = False
    while events is not None:
        answer = None
        for item in events:
            if isinstance(item, Step) and item.event == "plan" and item.text == preview:
                continue  # shown already
            if isinstance(item, Step) and item.event != "final_answer" and item.text:
                print(item.text, end="", flush=True)
            elif isinstance(item, Token):
                # The model's answer is a draft until the workflow has checked it: it is shown once it stands
                # (a rejected draft never appears as the answer; the fallback line says why it was rejected).
                if not drafting:
                    print("writing the answer (it is checked before it is shown)...", flush=True)
                drafting = True
            elif isinstance(item, Answer):
                answer = item
        assert answer is not None, "every stream ends with an answer"
        events = _review(rag, answer, args) if answer.review is not None else None
    assert answer is not None
    _print_answer(answer, settings, with_text=True)
    rag.close()
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from graph_store.manifest import require_index

    settings = settings_from_args(args)
    if not settings.checkpointer:
        require_index(settings.index_dir)  # the default checkpoints live in the index: never create a stray one
        if not Path(settings.checkpointer_url).exists():
            raise _not_found(f"no conversations in {settings.index_dir} yet")
    from kgrag import KGRag

    rag = KGRag(settings=settings)
    values = rag.thread(args.thread) or rag.thread(f"conv-{args.thread}")
    if not values:
        raise _not_found(
            f"no thread {args.thread!r} in {settings.redacted()['checkpointer'] or settings.checkpointer_url}"
        )
    if args.history:
        _print_history(rag, args.thread if rag.thread(args.thread) else f"conv-{args.thread}")
        return 0
    if args.json:
        from kgrag.api import conversation_view

        _print_json(conversation_view(args.thread, values))
        return 0
    records = values.get("subquestions", {})
    for turn in sorted({r["turn"] for r in records.values()}):
        print(f"== turn {turn}")
        for r in (r for r in records.values() if r["turn"] == turn):
            _print_record(r, args.evidence)
    print(_text(f"final answer: {values.get('answer')}"))
    for c in values.get("citations", []):
        print(_text(f"  [{c['n']}] {', '.join(c['titles'])} ({c['kind']} {c['evidence_id']})"))
    return 0


def _print_record(r: dict, evidence: int) -> None:
    """One sub-question as `kgrag inspect` shows it: plan, rephrasing, evidence scores, answer, alternatives."""
    deps = f" (after {', '.join(r['depends_on'])})" if r["depends_on"] else ""
    print(_text(f"{r['id']} [{r['route']}, {r['kind']}, {r['status']}]{deps}: {r['question']}"))
    if r.get("rephrased"):
        print(_text(f"    rephrased: {r['rephrased']}"))
    for e in r.get("evidence", [])[:evidence]:
        dep = e.get("dependency_similarity")
        scores = f"R={e['retrieval_score']:.3f}" + (f" M={dep:.3f} -> {e['score']:.3f}" if dep is not None else "")
        print(_text(f"    {scores}  {e['kind']} {', '.join(e['titles'])}: {e['text'][:90]!r}"))
    confidence = f" (confidence {r['confidence']:.2f})" if r.get("confidence") is not None else ""
    print(_text(f"    answer: {r['answer']}{confidence}" + (f"  (error: {r['error']})" if r.get("error") else "")))
    if r.get("supporting_sentence"):
        print(_text(f"    because: {r['supporting_sentence']}"))
    for c in (r.get("candidates") or [])[1:]:
        print(_text(f"    alternative: {c['answer']} ({c['confidence']:.2f})"))
    for step, note in (r.get("notes") or {}).items():
        print(_text(f"    fallback ({step}): {note}"))


def _print_history(rag, thread: str) -> None:
    """Every checkpoint of the thread, the turn's and each sub-question's, oldest first, with the steps that made it
    (the nodes whose versions_seen moved: LangGraph records what each node has read when it runs)."""
    by_namespace: dict[str, list] = {}
    for item in rag._saver().list({"configurable": {"thread_id": thread}}):
        by_namespace.setdefault(item.config["configurable"].get("checkpoint_ns", ""), []).append(item)
    rows = []
    for ns, items in by_namespace.items():
        items.sort(key=lambda i: i.checkpoint["ts"])
        record_ids = [(i.checkpoint["channel_values"].get("record") or {}).get("id") for i in items]
        sid = next((r for r in record_ids if r), "")  # a sub-question's input checkpoint holds no record yet
        seen_before: dict = {}
        for item in items:
            seen = item.checkpoint.get("versions_seen", {})
            ran = sorted(n.strip("_") for n, v in seen.items() if v != seen_before.get(n))  # __start__: "start"
            seen_before = seen
            made = "input" if item.metadata.get("source") == "input" else ", ".join(ran) or "-"
            where = f"{ns.split(':')[0]} {sid}" if ns else "turn"
            rows.append((item.checkpoint["ts"], where, item.metadata.get("step"), made))
    for ts, where, step, made in sorted(rows):
        print(_text(f"{ts}  {where:<14} step {step:>2}  {made}"))


def cmd_check(args: argparse.Namespace) -> int:
    from graph_store.integrity import check_index

    problems = check_index(settings_from_args(args))
    for line in problems:
        print(_text(line))
    if not problems:
        print("ok: manifest, system of record, vectors and the current derived state are intact")
    return 1 if problems else 0


def cmd_repair(args: argparse.Namespace) -> int:
    from graph_store.integrity import repair_index

    print(_text(repair_index(settings_from_args(args), salvage=args.salvage, progress=not args.quiet)))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from agent.resources import Resources
    from graph_store.errors import InputError
    from graph_store.index import KnowledgeIndex
    from kgrag.evaluation import datasets
    from kgrag.evaluation.runner import evaluate, pairwise, summarise, write_report

    if args.dataset == "generic":
        if not (args.questions and args.corpus):
            raise InputError("--dataset generic needs --questions FILE and --corpus FILE")
        docs, questions = datasets.generic(Path(args.questions), Path(args.corpus))
    else:
        if not args.data or not Path(args.data).is_dir():
            raise InputError(f"--dataset {args.dataset} needs --data DIR, the folder holding its files")
        docs, questions = datasets.LOADERS[args.dataset](Path(args.data))
    questions = questions[: args.limit] if args.limit else questions
    settings = settings_from_args(args)
    writer = KnowledgeIndex(settings, progress=not args.quiet, create=True)
    print(writer.add_documents(docs).format().splitlines()[0])
    writer.close()
    resources = Resources.open(settings)
    out = Path(args.out or f"eval-results/{args.dataset}")
    if args.pairwise and resources.offline:
        raise InputError("--pairwise needs a chat endpoint for the judge (KGRAG_CHAT_MODEL)")
    # LLM-judged metrics only when an endpoint is configured.
    results = evaluate(
        resources, questions, args.systems or list(SYSTEM_NAMES), out, progress=not args.quiet, judge=resources.chat
    )
    rows = summarise(results)
    mode = "offline" if resources.chat is None else f"LLM {resources.chat.model_name}"
    write_report(rows, out, f"{args.dataset}: {len(questions)} questions ({mode})")
    print((out / "summary.md").read_text())
    if args.pairwise and resources.chat is not None:
        a, b = args.pairwise
        wins = pairwise(resources.chat, results, a, b)
        (out / f"pairwise_{a}_vs_{b}.json").write_text(json.dumps(wins, indent=2))
        print(f"win rate of {a} over {b} (%): " + ", ".join(f"{d} {v}" for d, v in wins.items()))
    print(f"per-question results: {out}/<system>.jsonl; plots: {out}/*.png")
    return 0


SYSTEM_NAMES = ("bm25", "naive_dense", "propex_ppr", "pankrag_full", "pankrag_no_planning", "pankrag_no_rerank")


def cmd_serve(args: argparse.Namespace) -> int:
    from kgrag.server import serve

    serve(settings_from_args(args), args.index, args.host, args.port)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        from graph_store.errors import ConfigError

        raise ConfigError("kgrag mcp needs the MCP SDK: pip install 'kgrag[mcp]'")
    from kgrag.mcp_server import run

    run(settings_from_args(args), args.transport, args.host, args.port, args.read_only)
    return 0


# --- arguments --------------------------------------------------------------------------------------


def _evaluate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", choices=["musique", "hotpotqa", "ultradomain", "generic"], required=True)
    p.add_argument("--data", help="folder with the dataset's files (e.g. ../shared/data)")
    p.add_argument("--questions", help="generic: questions file (JSON list or JSONL)")
    p.add_argument("--corpus", help="generic: corpus file (JSON list of {title, text} or JSONL)")
    p.add_argument("--systems", nargs="+", choices=list(SYSTEM_NAMES), help="default: all")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument(
        "--pairwise",
        nargs=2,
        metavar=("SYSTEM_A", "SYSTEM_B"),
        help="also judge A against B on six dimensions, both orders averaged (needs an LLM)",
    )
    p.add_argument("--out", help="output folder (default eval-results/DATASET); a re-run resumes there")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument(
        "--index",
        action="append",
        metavar="NAME=PATH",
        help="an index to serve under a model name (repeatable; default: kgrag=--index-dir)",
    )


def _mcp_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default: the assistant starts kgrag mcp itself) or streamable HTTP at http://HOST:PORT/mcp",
    )
    p.add_argument("--host", default="127.0.0.1", help="HTTP: the address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="HTTP: the port (default 8000)")
    p.add_argument("--read-only", action="store_true", help="expose no tool that changes the index")


def _ask_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("question")
    p.add_argument("--thread", help="continue a conversation (thread id printed by an earlier ask)")
    p.add_argument(
        "--graph",
        choices=["pankrag", "propex"],
        default="pankrag",
        help="the PankRAG workflow (default) or the ProPEX-RAG pipeline",
    )
    p.add_argument(
        "--mode",
        choices=["full", "no_planning", "no_rerank", "naive"],
        default="full",
        help="full PankRAG (default); no_planning: the question is the only sub-question; no_rerank: no "
        "dependency-aware reranking; naive: dense RAG",
    )
    p.add_argument(
        "--route",
        choices=["plan", "local", "community", "ppr", "dense"],
        default="plan",
        help="route every sub-question one way (default: the plan's choice)",
    )
    p.add_argument(
        "--alpha",
        type=float,
        help="reranking weight of the retrieval score for specific questions (beta = 1 - alpha; default 0.6)",
    )
    p.add_argument(
        "--review",
        action="store_true",
        help="stop after planning to keep or edit the plan (an edited plan as JSON on stdin when not at a terminal)",
    )


def _inspect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("thread", help="a thread id printed by ask, or a conversation id of the chat API")
    p.add_argument("--evidence", type=int, default=3, help="evidence items shown per sub-question (default 3)")
    p.add_argument("--history", action="store_true", help="list every checkpoint of the thread instead")
    p.add_argument("--json", action="store_true", help="print the whole state as JSON")


def _index_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "path",
        nargs="?",
        help="a .txt/.md file, a folder of them, or a .json/.jsonl corpus file; "
        "without it, finish what is pending (an interrupted build or delete, failed chunks)",
    )
    p.add_argument("--reextract", action="store_true", help="extract every chunk again with the current extractor")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _delete_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("doc_ids", nargs="+", metavar="DOC_ID", help="document ids (kgrag stats --documents)")


def _stats_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--documents", action="store_true", help="also list every document with its id")
    p.add_argument(
        "--failed",
        action="store_true",
        help="also list chunks whose extraction failed (and why) and community reports the model failed to write",
    )
    p.add_argument("--json", action="store_true", help="JSON output")


def _config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="JSON output")


def _repair_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--salvage",
        action="store_true",
        help="when the system of record itself is damaged: rebuild "
        "it from the rows that can still be read (the damaged file is kept beside it)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _entities_args(p: argparse.ArgumentParser) -> None:
    from kgrag import cli_entities

    cli_entities.add_arguments(p)


def _export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--graphml", help="write the entity graph as GraphML (opens in Gephi)")
    p.add_argument("--with-passages", action="store_true", help="include passage nodes in the GraphML")
    p.add_argument("--html", help="write a self-contained HTML view of one entity's neighbourhood")
    p.add_argument("--entity", help="the entity for --html")
    p.add_argument("--hops", type=int, default=1, help="neighbourhood radius for --html (default 1)")


INDEX_ONLY = ("index", "embedding")
WITH_MODEL = ("index", "model", "embedding")
# name -> (handler, help, its own arguments, the settings groups it uses)
COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str, Callable | None, tuple[str, ...]]] = {
    "ask": (
        cmd_ask,
        "Answer a question against an index, streaming the plan, each sub-answer and the final "
        "answer with its confidence and sources.",
        _ask_args,
        (*WITH_MODEL, "conversations"),
    ),
    "inspect": (
        cmd_inspect,
        "Show a thread: the plan, each sub-question with its rephrasing, evidence scores, "
        "answer and alternatives, and the final answer.",
        _inspect_args,
        ("index", "conversations"),
    ),
    "index": (
        cmd_index,
        "Index documents (a folder of .txt/.md, or a JSON/JSONL corpus) into --index-dir. "
        "Only new or changed documents are processed; re-running after a crash completes the index.",
        _index_args,
        (*WITH_MODEL, "engine"),
    ),
    "delete": (
        cmd_delete,
        "Delete documents by id, with the entities, facts and vectors only they supported.",
        _delete_args,
        WITH_MODEL,
    ),
    "evaluate": (
        cmd_evaluate,
        "Evaluate systems (BM25, dense RAG, ProPEX PPR, PankRAG and its ablations) on a "
        "dataset: per-question JSONL, a markdown summary and plots; a killed run resumes.",
        _evaluate_args,
        WITH_MODEL,
    ),
    "stats": (
        cmd_stats,
        "Show counts of the index: documents, chunks, entities, facts, communities, vectors.",
        _stats_args,
        INDEX_ONLY,
    ),
    "check": (
        cmd_check,
        "Check an index for damage: manifest, system of record (SQLite integrity check), "
        "vectors, and the checksums of the derived files.",
        None,
        INDEX_ONLY,
    ),
    "repair": (
        cmd_repair,
        "Rebuild every derived artefact of an index from its system of record.",
        _repair_args,
        INDEX_ONLY,
    ),
    "export": (
        cmd_export,
        "Export the graph as GraphML, or an entity's neighbourhood as a self-contained HTML page.",
        _export_args,
        INDEX_ONLY,
    ),
    "entities": (
        cmd_entities,
        "Review entity merges: proposed merges with their evidence (accept, reject, skip), merge, split and undo; "
        "decisions are kept in the index and applied on every rebuild.",
        _entities_args,
        INDEX_ONLY,
    ),
    "serve": (
        cmd_serve,
        "Serve a web page, an OpenAI-compatible chat API (streamed steps, then the answer) and "
        "a native API over one or more indexes.",
        _serve_args,
        (*WITH_MODEL, "conversations"),
    ),
    "mcp": (
        cmd_mcp,
        "Serve the index to assistants over the Model Context Protocol (stdio or streamable HTTP): tools ask, "
        "search, add_documents, document_status, inspect_thread; needs kgrag[mcp].",
        _mcp_args,
        (*WITH_MODEL, "conversations"),
    ),
    "config": (
        cmd_config,
        "Show the effective settings (secrets masked) and whether the system runs offline.",
        _config_args,
        ALL_GROUPS,
    ),
}


class _UsageError(Exception):
    pass


def _usage(message: str) -> Exception:
    return _UsageError(message)


def _not_found(message: str) -> Exception:
    from graph_store.errors import InputError

    return InputError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kgrag",
        description="Answer complex questions over a document corpus with a knowledge graph "
        "(PankRAG planning + ProPEX-RAG Personalized PageRank). Offline by default.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (handler, help_text, add_arguments, groups) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if add_arguments:
            add_arguments(cmd)
        _add_settings(cmd, groups)
        cmd.set_defaults(handler=handler)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except _UsageError as exc:
        print(f"kgrag: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `kgrag stats | head`: the reader left, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("kgrag: interrupted; finished work is saved, re-run to continue", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - one clear line for the user, never a traceback
        from graph_store.errors import KGRagError, machine_error

        exc = machine_error(exc) or exc  # "database or disk is full" is a full disk, not an internal error
        if isinstance(exc, KGRagError):
            from agent.events import printable

            print(f"kgrag: error: {printable(exc)}", file=sys.stderr)
            return 2
        if os.environ.get("KGRAG_DEBUG"):
            raise
        print(
            f"kgrag: internal error ({exc.__class__.__name__}: {str(exc)[:200]}); set KGRAG_DEBUG=1 for the traceback",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
