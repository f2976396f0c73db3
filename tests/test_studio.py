"""`langgraph dev` serves the graphs offline on 127.0.0.1, as LangGraph Studio uses them: schemas for its forms,
every sub-question step in the streamed updates, a paused sub-question's state, a plan edited and resumed, proposed
entity merges reviewed one interrupt at a time."""

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import free_port, wait_for_http

LANGGRAPH = Path(sys.executable).parent / "langgraph"
DEMO = "Which river flows through the city where the founder of Halvard Instruments was born?"


def _post(url, body, timeout=120):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def _get(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def _stream(url, body):
    """Server-sent events of a streamed run: (event, data) pairs."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    events, name = [], None
    with urllib.request.urlopen(request, timeout=120) as response:
        for raw in response:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name:
                events.append((name, json.loads(line[6:])))
    return events


def _work_copy(folder):
    """The project as langgraph dev loads it (its .langgraph_api, where it keeps threads, goes in there too)."""
    shutil.copytree(
        ROOT, folder, ignore=shutil.ignore_patterns(".venv", ".git", "benchmarks", "tests", ".kgrag", "*.egg-info")
    )
    return folder


@contextmanager
def _langgraph_dev(work, index_dir, port):
    """``langgraph dev`` serving ``work`` on 127.0.0.1:``port``; stopped as Ctrl-C stops it (it saves its threads)."""
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "KGRAG_INDEX_DIR": str(index_dir),
        "PYTHONPATH": str(work),
    }
    server = subprocess.Popen(
        [str(LANGGRAPH), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_for_http(f"{base}/ok", server, seconds=120)
        except AssertionError:
            server.kill()
            raise AssertionError("langgraph dev did not start:\n" + server.stdout.read().decode()[-3000:]) from None
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


@pytest.fixture(scope="module")
def studio(sample_index, tmp_path_factory):
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed (the dev extra)")
    with _langgraph_dev(
        _work_copy(tmp_path_factory.mktemp("studio") / "server"), sample_index.dir, free_port()
    ) as base:
        yield base


def test_the_graphs_have_schemas_for_studio_forms(studio):
    assistants = {a["graph_id"]: a["assistant_id"] for a in _post(f"{studio}/assistants/search", {})}
    assert set(assistants) == {"pankrag", "propex", "entity_review"}
    review = _get(f"{studio}/assistants/{assistants.pop('entity_review')}/schemas")
    assert review["input_schema"]["properties"].keys() == {"limit", "min_score", "who"}
    assert review["output_schema"]["properties"].keys() >= {"decisions", "summary"}
    assert set(review["config_schema"]["properties"]) == {"index_dir"}
    for assistant_id in assistants.values():
        schemas = _get(f"{studio}/assistants/{assistant_id}/schemas")
        assert schemas["input_schema"]["properties"].keys() >= {"question", "messages"}
        assert schemas["output_schema"]["properties"].keys() >= {"answer", "citations", "confidence"}
        knobs = schemas["config_schema"]["properties"]
        assert knobs["mode"]["default"] == "full" and knobs["alpha_specific"]["description"]
        assert (knobs["alpha_specific"]["minimum"], knobs["alpha_specific"]["maximum"]) == (
            0,
            1,
        )  # as every door checks
        for internal in ("record", "dependencies", "siblings"):
            assert internal not in schemas["state_schema"]["properties"]


def test_a_streamed_run_carries_every_sub_question_step(studio):
    thread = _post(f"{studio}/threads", {})["thread_id"]
    events = _stream(
        f"{studio}/threads/{thread}/runs/stream",
        {"assistant_id": "pankrag", "input": {"question": DEMO}, "stream_mode": ["updates"], "stream_subgraphs": True},
    )
    steps = [
        (name, update) for event, data in events if event.startswith("updates|solve") for name, update in data.items()
    ]
    for step in ("rephrase", "route", "retrieve_ppr", "rerank", "sub_answer"):
        assert any(name == step and update and update.get("record") for name, update in steps), step
    state = _get(f"{studio}/threads/{thread}/state")["values"]
    assert "Selva" in state["answer"] and state["messages"][-1]["type"] == "ai"
    assert [r["answer"] for r in state["subquestions"].values()] == ["Edda Morlund", "Tarnholm", "Selva"]
    propex = _post(
        f"{studio}/runs/wait", {"assistant_id": "propex", "input": {"question": "Where was Ana Keldor born?"}}
    )
    assert propex["short_answer"] == "Ludvik"


def test_a_paused_sub_question_shows_its_state(studio):
    thread = _post(f"{studio}/threads", {})["thread_id"]
    _post(
        f"{studio}/threads/{thread}/runs/wait",
        {
            "assistant_id": "pankrag",
            "input": {"question": "Where was Ana Keldor born?"},
            "config": {"configurable": {"pause_before": ["rerank"]}},
        },
    )
    state = _get(f"{studio}/threads/{thread}/state?subgraphs=true")
    running = state["tasks"][0]["state"]
    assert running["next"] == ["rerank"]
    assert running["values"]["record"]["evidence"] and running["values"]["record"]["answer"] is None


def test_an_interrupted_run_resumes_with_an_edited_plan(studio):
    thread = _post(f"{studio}/threads", {})["thread_id"]
    _post(
        f"{studio}/threads/{thread}/runs/wait",
        {"assistant_id": "pankrag", "input": {"question": DEMO}, "config": {"configurable": {"review_plan": True}}},
    )
    paused = _get(f"{studio}/threads/{thread}/state")
    assert paused["next"] == ["review_plan"]
    assert len(paused["tasks"][0]["interrupts"][0]["value"]["sub_questions"]) == 3
    edited = [
        {"id": "q1", "question": "Who founded Halvard Instruments?"},
        {"id": "q2", "question": "Where was #q1 born?"},
    ]
    out = _post(
        f"{studio}/threads/{thread}/runs/wait",
        {"assistant_id": "pankrag", "command": {"resume": edited}, "config": {"configurable": {"review_plan": True}}},
    )
    assert out["short_answer"] == "Tarnholm"
    assert [r["status"] for r in out["subquestions"].values()] == ["answered", "answered", "dropped"]


def test_a_paused_run_with_parallel_branches_resumes_step_by_step_and_finishes(studio):
    """Two sub-questions paused at once would need a resume per interrupt; paused runs send one at a time, so
    Studio's plain resume (same config) goes on, pause after pause, to the answer."""
    thread = _post(f"{studio}/threads", {})["thread_id"]
    config = {"configurable": {"pause_before": ["rerank"]}}
    question = "Which is older, Halvard Instruments or Nordlys Records?"
    _post(
        f"{studio}/threads/{thread}/runs/wait",
        {"assistant_id": "pankrag", "input": {"question": question}, "config": config},
    )
    for _ in range(6):
        state = _get(f"{studio}/threads/{thread}/state")
        if not state["next"]:
            break
        assert len(state["tasks"]) == 1  # one paused sub-question at a time
        _post(
            f"{studio}/threads/{thread}/runs/wait",
            {"assistant_id": "pankrag", "command": {"resume": True}, "config": config},
        )
    assert not state["next"] and state["values"]["short_answer"] == "Halvard Instruments"


def test_a_bad_knob_says_which_and_the_fused_ranking_streams(studio):
    bad = _post(
        f"{studio}/runs/wait",
        {
            "assistant_id": "pankrag",
            "input": {"question": "Where was Ana Keldor born?"},
            "config": {"configurable": {"mode": "bogus"}},
        },
    )
    message = json.dumps(bad)
    assert "mode" in message and "no_planning" in message and "internal error" not in message.lower()
    thread = _post(f"{studio}/threads", {})["thread_id"]
    events = _stream(
        f"{studio}/threads/{thread}/runs/stream",
        {"assistant_id": "pankrag", "input": {"question": "Where was Ana Keldor born?"}, "stream_mode": ["updates"]},
    )
    fused = [data["fuse"] for event, data in events if event == "updates" and "fuse" in data]
    kept = _get(f"{studio}/threads/{thread}/state")["values"]["evidence"]
    assert kept and fused and fused[0]["evidence"] == kept  # the update carries the ranking the state holds


def test_proposed_merges_are_reviewed_one_interrupt_at_a_time_across_a_server_restart(sample_index, tmp_path):
    """Studio's review: each proposal an interrupt, each verdict a resume; the verdicts so far outlive the server."""
    from graph_store.index import KnowledgeIndex
    from graph_store.settings import load_settings

    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed (the dev extra)")
    copy = tmp_path / "idx"  # decisions change an index: a copy of the sample one
    shutil.copytree(sample_index.dir, copy)
    work, port = _work_copy(tmp_path / "server"), free_port()

    def run(studio, thread, body):
        _post(f"{studio}/threads/{thread}/runs/wait", {"assistant_id": "entity_review", **body})
        state = _get(f"{studio}/threads/{thread}/state")
        return state["tasks"][0]["interrupts"][0]["value"] if state["next"] else state["values"]

    with _langgraph_dev(work, copy, port) as studio:
        thread = _post(f"{studio}/threads", {})["thread_id"]
        first = run(studio, thread, {"input": {"limit": 2, "who": "studio"}})
        assert first["proposal"] == "1 of 2" and first["evidence"]["a"] and first["why"] and "types" in first
        again = run(studio, thread, {"command": {"resume": "maybe"}})  # not a verdict: asked again, with the reason
        assert (again["a"], again["b"]) == (first["a"], first["b"]) and "not a verdict" in again["problem"]
        second = run(studio, thread, {"command": {"resume": {"verdict": "merge", "why": "same firm"}}})
        assert second["proposal"] == "2 of 2" and second["problem"] is None
    with _langgraph_dev(work, copy, port) as studio:  # restarted between two questions
        assert _get(f"{studio}/threads/{thread}/state")["values"]["verdicts"][0]["verdict"] == "merge"
        done = run(studio, thread, {"command": {"resume": "reject"}})
    expected = [("merge", first["a"], first["b"], "same firm"), ("reject", second["a"], second["b"], "review")]
    assert [(d["verdict"], d["a"], d["b"], d["why"]) for d in done["decisions"]] == expected
    assert "1 merged, 1 rejected, 0 skipped" in done["summary"]
    stored = KnowledgeIndex(load_settings(environ={}, index_dir=copy), progress=False, create=False).store.decisions()
    assert [(d.verdict, d.a, d.b, d.who) for d in stored] == [(v, a, b, "studio") for v, a, b, _ in expected]
