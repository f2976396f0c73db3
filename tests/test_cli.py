"""The CLI as users run it (subprocesses): text for people, pure JSON with --json, one clear line for every
mistake, nothing created by a command that fails its own checks, hints that are complete commands."""

import json
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT


def _run(*args, env=None, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli", *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd
    )


def test_help_lists_subcommands():
    out = _run("--help")
    assert out.returncode == 0
    assert "config" in out.stdout and "offline" in out.stdout.lower()


def test_config_shows_effective_settings_and_masks_secrets(tmp_path):
    out = _run(
        "config",
        "--json",
        "--chat-model",
        "m",
        "--chat-api-key",
        "secret",
        "--index-dir",
        tmp_path,
        "--chat-base-url",
        "https://user:sk-inurl@host/v1",
        "--checkpointer",
        "postgresql://kg:pw@db/kg",
    )
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)  # nothing but JSON
    assert shown["chat_model"] == "m" and shown["chat_api_key"] == "***" and not shown["offline"]
    assert shown["chat_base_url"] == "https://***@host/v1" and shown["checkpointer"] == "postgresql://***@db/kg"
    text = _run("config", "--chat-base-url", "https://user:sk-inurl@host/v1", "--chat-model", "m")
    assert "chat_model: m" in text.stdout and "sk-inurl" not in text.stdout + out.stdout and "secret" not in out.stdout


def test_bad_setting_is_reported_without_traceback():
    out = _run("config", "--max-concurrency", "zero")
    assert out.returncode == 2
    assert "max_concurrency" in out.stderr and "Traceback" not in out.stderr


@pytest.fixture(scope="module")
def index_dir(sample_index, tmp_path_factory):
    """A copy of the sample index, which the run builds once (asks write their threads to the folder). `kgrag index`
    itself is run below (a corpus with a bad document) and by test_readme."""
    folder = tmp_path_factory.mktemp("cli") / "idx"
    shutil.copytree(sample_index.dir, folder)
    return folder


def test_stats_is_text_or_pure_json_and_survives_a_closed_pipe(index_dir):
    text = _run("stats", "--documents", "--index-dir", index_dir)
    n = len(list(EXAMPLES.glob("*.md")))
    assert text.stdout.startswith(f"documents: {n}\n") and "Edda Morlund" in text.stdout
    data = json.loads(_run("stats", "--documents", "--json", "--index-dir", index_dir).stdout)
    assert data["documents"] == n and len(data["documents_list"]) == n
    piped = subprocess.run(
        f"{shlex.quote(sys.executable)} -m kgrag.cli stats --documents --index-dir "
        f"{shlex.quote(str(index_dir))} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert piped.stdout == f"documents: {n}\n" and "Traceback" not in piped.stderr and "Broken" not in piped.stderr


def test_ask_hints_are_complete_commands(index_dir, tmp_path):
    out = _run("ask", "Where was Ana Keldor born?", "--index-dir", index_dir, cwd=tmp_path)
    assert out.returncode == 0 and "answer: Ludvik" in out.stdout and "confidence: 0." in out.stdout
    assert out.stdout.count("Plan (rule-based)") == 1  # shown before the graph loads, not again by the run
    assert out.stdout.split("confidence: ")[1].split(" (")[0].split(", ")[1] in (
        "high",
        "medium",
        "low: check the sources",
    )
    hint = out.stdout.split("details: ")[1].split(")")[0]
    shown = _run(*shlex.split(hint)[1:], cwd=tmp_path)  # run from elsewhere, exactly as printed
    assert shown.returncode == 0 and "final answer: Ludvik" in shown.stdout
    assert not (tmp_path / "kgrag-index").exists()
    follow = out.stdout.split("follow up: ")[1].split(";")[0].replace('"..."', '"And when was she born?"')
    again = _run(*shlex.split(follow)[1:], cwd=tmp_path)
    assert again.returncode == 0 and "answer: 1931" in again.stdout  # she: Ana Keldor, from the previous turn
    assert again.stdout.count("Plan (rule-based)") == 1 and "follow-up read as" in again.stdout
    assert "notice:" not in out.stdout + again.stdout
    unseen = _run("ask", "And when was she born?", "--thread", "never-seen", "--index-dir", index_dir, cwd=tmp_path)
    assert "notice: conversation 'never-seen' had no earlier turns: answered as a new conversation" in unseen.stdout
    assert "== turn 2" in _run(*shlex.split(hint)[1:], cwd=tmp_path).stdout
    hello = _run("ask", "hello", "--index-dir", index_dir, cwd=tmp_path)  # small talk: the reply, no plan or score
    assert hello.stdout.startswith("answer: Hello!") and "Plan" not in hello.stdout and "confidence" not in hello.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["ask", ""], "the question is empty"),
        (["ask", "   "], "the question is empty"),
        (["ask", "x" * 5000], "over the limit of 4,000"),
        (["ask", "q", "--graph", "propex", "--thread", "../../etc"], None),
        (
            ["ask", "Where was Ana Keldor born?", "--alpha", "7"],
            "alpha_specific: Input should be less than or equal to 1",
        ),
    ],
)
def test_bad_questions_get_one_line(index_dir, args, message):
    out = _run(*args, "--index-dir", index_dir)
    if message:
        assert out.returncode == 2 and message in out.stderr
    assert "Traceback" not in out.stderr and out.stderr.count("\n") <= 1


def test_failed_argument_checks_create_nothing(tmp_path):
    missing = _run("index", tmp_path / "nonexistent", "--index-dir", tmp_path / "x")
    assert missing.returncode == 2 and "no such file" in missing.stderr and not (tmp_path / "x").exists()
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a folder")
    for command in (["index", EXAMPLES, "--quiet"], ["inspect", "t1"], ["ask", "q"], ["stats"]):
        out = _run(*command, "--index-dir", a_file)
        assert out.returncode == 2 and "is a file" in out.stderr and "Traceback" not in out.stderr
    out = _run("inspect", "t1", "--index-dir", tmp_path / "nowhere")
    assert out.returncode == 2 and "no index" in out.stderr and not (tmp_path / "nowhere").exists()


def test_control_characters_in_titles_never_reach_the_terminal(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"title": "Evil\x1b[31m\x07Title\x00", "text": "Mira Holt founded Brotzeit\x1b[2J."}))
    folder = tmp_path / "idx"
    assert _run("index", corpus, "--index-dir", folder, "--quiet").returncode == 0
    listed = _run("stats", "--documents", "--index-dir", folder)
    assert "\x1b" not in listed.stdout and "\x07" not in listed.stdout and "Evil [31m Title" in listed.stdout
    asked = _run("ask", "Who founded Brotzeit?", "--index-dir", folder)
    assert "\x1b" not in asked.stdout and "Mira Holt" in asked.stdout
    exported = _run("export", "--graphml", tmp_path / "g.graphml", "--with-passages", "--index-dir", folder)
    assert exported.returncode == 0
    import xml.dom.minidom

    xml.dom.minidom.parse(str(tmp_path / "g.graphml"))  # parses


def test_a_damaged_index_gets_its_error_without_a_plan_first(index_dir, tmp_path):

    for damage in ("manifest", "derived"):
        copy = tmp_path / damage
        shutil.copytree(index_dir, copy)
        if damage == "manifest":
            (copy / "manifest.json").write_text("garbage")
        else:
            shutil.rmtree(copy / "derived")
        out = _run("ask", "Who founded Halvard Instruments?", "--index-dir", copy)
        assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1, (damage, out.stdout)


def test_a_damaged_cached_embedding_graph_is_rebuilt_and_the_question_answered(index_dir, tmp_path):
    import os

    from graph_store.embeddings import StaticEmbedder

    cache = tmp_path / "cache"
    (cache / "kgrag").mkdir(parents=True)
    static = StaticEmbedder().cache_path()
    shutil.copy(static, cache / "kgrag" / static.name)  # the distilled table, so only the int8 graph is at stake
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    question = ("Who founded Halvard Instruments?", "--index-dir", index_dir)
    first = _run("ask", *question, env=env)
    assert first.returncode == 0, first.stderr
    (graph,) = (cache / "kgrag").glob("minilm-int8-*.onnx")  # built on first use, in the user's cache
    graph.write_bytes(b"truncated")
    again = _run("ask", *question, env=env)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    answer = [line for line in first.stdout.splitlines() if line.startswith("answer:")]
    assert "Edda Morlund" in answer[0]
    assert answer == [line for line in again.stdout.splitlines() if line.startswith("answer:")]
    assert graph.stat().st_size > 1_000_000  # written again, whole


def test_each_command_shows_its_own_options_first_and_only_the_settings_it_uses():
    stats, ask, serve = (_run(c, "--help").stdout for c in ("stats", "ask", "serve"))
    assert "--chat-model" not in stats and "--checkpointer" not in stats and "--index-dir" in stats
    assert ask.index("--review") < ask.index("--index-dir") < ask.index("--chat-model")
    assert "naive: dense RAG" in ask  # --mode says what each mode is
    assert "address to listen on" in serve and "port to listen on" in serve


def test_inspect_json_is_valid_and_history_names_every_step(index_dir, tmp_path):
    out = _run(
        "ask",
        "Where was the founder of Halvard Instruments born?",
        "--index-dir",
        index_dir,
        "--thread",
        "insp",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    shown = json.loads(_run("inspect", "insp", "--index-dir", index_dir, "--json").stdout)
    assert shown["question"] == "Where was the founder of Halvard Instruments born?"
    assert shown["messages"][0] == {"role": "human", "content": shown["question"]}
    assert shown["messages"][1]["role"] == "ai" and shown["messages"][1]["content"].startswith("Tarnholm")
    history = _run("inspect", "insp", "--index-dir", index_dir, "--history").stdout.splitlines()
    assert not any("None" in row for row in history)
    steps = [row.split()[-1] for row in history]
    assert {"input", "plan", "rephrase", "retrieve_ppr", "rerank", "sub_answer", "fuse", "answer"} <= set(steps)
    assert any("solve 1:q1" in row and row.endswith("sub_answer") for row in history)


def test_sources_not_cited_are_listed_apart_and_wrong_or_empty_questions_are_not_guessed(index_dir, tmp_path):
    out = _run("ask", "Which is older, Halvard Instruments or Nordlys Records?", "--index-dir", index_dir, cwd=tmp_path)
    cited = out.stdout.split("sources:\n")[1].split("also retrieved")[0]
    assert "Halvard Instruments" in cited and "Nordlys Records" in cited and "Mara Quist" not in cited
    assert "also retrieved (not cited):" in out.stdout
    wrong_kind = _run("ask", "What is the population of Tarnholm?", "--index-dir", index_dir, cwd=tmp_path)
    assert "answer: Not found" in wrong_kind.stdout and "412" not in wrong_kind.stdout.split("answer:")[1]
    assert "confidence: none, not found in the documents" in wrong_kind.stdout
    blank = _run("ask", "\x01\x02 \x7f", "--index-dir", index_dir, cwd=tmp_path)
    assert blank.returncode == 2 and blank.stderr.strip() == "kgrag: error: the question is empty"


def test_a_summary_cites_community_reports_by_their_titles(index_dir, tmp_path):
    out = _run("ask", "What are the main themes of these documents?", "--index-dir", index_dir, cwd=tmp_path)
    lines = [line for line in out.stdout.splitlines() if line.startswith("  [")]
    assert lines and all(line.split("] ", 1)[1].startswith("community report: ") for line in lines), out.stdout
    assert not any(line.endswith("()") for line in lines)  # no empty list of documents
    local = _run("ask", "Who founded Halvard Instruments?", "--route", "local", "--index-dir", index_dir, cwd=tmp_path)
    lines = [line for line in local.stdout.splitlines() if line.startswith("  [")]
    assert lines and not any(line.endswith("()") or line.endswith("] ") for line in lines), local.stdout
