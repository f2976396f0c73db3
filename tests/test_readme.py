"""The README's Python and HTTP examples run as written, against a served copy of the sample index."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import free_port, wait_for_http

README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


@pytest.fixture(scope="module")
def workdir(sample_index, tmp_path_factory):
    """A folder as a user has it: the examples, and the sample corpus indexed as my-index."""
    folder = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "examples", folder / "examples")
    shutil.copytree(sample_index.dir, folder / "my-index")
    return folder


def _env():
    return {**{k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}, "PYTHONPATH": str(ROOT)}


def test_the_python_api_examples_run(workdir):
    first, second = _blocks(_section("Python API"), "python")
    out = subprocess.run([sys.executable, "-c", first], cwd=workdir, env=_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "Selva" in out.stdout and "Mira Holt" in out.stdout and "\nStep " in out.stdout and "\nAnswer " in out.stdout
    assert "\nToken " not in out.stdout  # offline: no model writes a draft
    corpus = len(list((workdir / "examples" / "corpus").glob("*.md")))
    assert out.stdout.splitlines()[-1] == str(corpus)  # the inserted record was deleted again
    out = subprocess.run([sys.executable, "-c", second], cwd=workdir, env=_env(), capture_output=True, text=True)
    assert out.returncode == 0 and "Oskar Brenn" in out.stdout, out.stderr


def test_the_http_examples_run(workdir):
    port = free_port()
    section = (
        _section("The HTTP service")
        .replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        .replace("--port 8000", f"--port {port}")
    )
    serve = next(line for line in _blocks(section, "bash")[0].splitlines() if line.startswith("KGRAG_API_KEYS"))
    keys, command = serve.split(" ", 1)
    server = subprocess.Popen(
        [sys.executable, "-m", "kgrag.cli", *command.split()[1:]],
        cwd=workdir,
        env={**_env(), keys.split("=")[0]: keys.split("=")[1]},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        try:
            wait_for_http(f"http://127.0.0.1:{port}/health", server, seconds=120)
        except AssertionError:
            server.kill()
            raise AssertionError(server.stdout.read().decode()[-3000:]) from None
        client = _blocks(section, "python")[0]
        out = subprocess.run([sys.executable, "-c", client], cwd=workdir, env=_env(), capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert "Edda Morlund" in out.stdout and "**Sources**" in out.stdout and "Tarnholm" in out.stdout
        curls = _blocks(section, "bash")[1].replace("\\\n", " ").splitlines()
        for line in curls:
            result = subprocess.run(["bash", "-c", line], cwd=workdir, capture_output=True, text=True, timeout=120)
            assert result.returncode == 0 and result.stdout and '"error"' not in result.stdout, (line, result.stdout)
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_the_mcp_langchain_and_langgraph_examples_run(workdir):
    section = _section("In your assistant, chain or graph: MCP, LangChain, LangGraph")
    mcp_client, retriever, subgraph = _blocks(section, "python")
    # the MCP client starts `kgrag mcp` itself, as an assistant does: the venv's kgrag first on PATH
    env = {**_env(), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    out = subprocess.run([sys.executable, "-c", mcp_client], cwd=workdir, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "'ask', 'search', 'inspect_thread', 'add_documents', 'document_status'" in out.stdout
    assert "3/3 1:q3 answer: Selva" in out.stdout and "Selva ['Tarnholm'" in out.stdout
    assert "['Tarnholm Opera House'" in out.stdout
    out = subprocess.run([sys.executable, "-c", retriever], cwd=workdir, env=_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "\nTarnholm 0." in out.stdout and "<- Which river flows through Tarnholm?" in out.stdout
    assert out.stdout.splitlines()[-1] == "Selva"
    out = subprocess.run([sys.executable, "-c", subgraph], cwd=workdir, env=_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "1:q3 Selva" in out.stdout and out.stdout.splitlines()[-1].startswith("Selva")


def test_no_file_holds_merge_conflict_markers():
    folders = ["agent", "graph_store", "kgrag", "prompts", "tests", "benchmarks", "examples", "docs"]
    files = [ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml"]
    files += [
        p
        for f in folders
        for p in (ROOT / f).rglob("*")
        if p.is_file() and p.suffix in (".py", ".md", ".txt", ".js", ".html", ".css", ".json", ".toml")
    ]
    marked = [str(p) for p in files if re.search(r"^(<{7}|>{7}) ", p.read_text(errors="replace"), re.M)]
    assert not marked
