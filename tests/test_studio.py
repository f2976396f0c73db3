"""`langgraph dev` serves both graphs offline on 127.0.0.1 (as LangGraph Studio uses them)."""

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import free_port, wait_for_http

LANGGRAPH = Path(sys.executable).parent / "langgraph"


def _post(url, body, timeout=120):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


@pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli is not installed (the dev extra)")
def test_langgraph_dev_answers_a_question(make_index, sample_docs, tmp_path):
    index = make_index()
    index.add_documents(sample_docs)
    index.close()
    port = free_port()
    work = tmp_path / "server"
    shutil.copytree(ROOT, work, ignore=shutil.ignore_patterns(".venv", ".git", "benchmarks", "tests", ".kgrag", "*.egg-info"))
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "KGRAG_INDEX_DIR": str(index.dir),
           "PYTHONPATH": str(work)}
    server = subprocess.Popen([str(LANGGRAPH), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser",
                               "--no-reload"], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_for_http(f"{base}/ok", server, seconds=120)
        except AssertionError:
            server.kill()
            raise AssertionError("langgraph dev did not start:\n" + server.stdout.read().decode()[-3000:]) from None
        thread = _post(f"{base}/threads", {})
        output = _post(f"{base}/threads/{thread['thread_id']}/runs/wait", {
            "assistant_id": "pankrag",
            "input": {"question": "Which river flows through the city where the founder of Halvard Instruments was born?"}})
        assert "Selva" in output["answer"] and output["messages"][-1]["type"] == "ai"
        state = urllib.request.urlopen(f"{base}/threads/{thread['thread_id']}/state", timeout=30)
        values = json.loads(state.read())["values"]
        assert [r["answer"] for r in values["subquestions"].values()] == ["Edda Morlund", "Tarnholm", "Selva"]
        propex = _post(f"{base}/runs/wait", {"assistant_id": "propex", "input": {"question": "Where was Ana Keldor born?"}})
        assert "Ludvik" in propex["answer"]
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
