"""``kgrag mcp`` driven by the MCP SDK's own client, as an assistant drives it: a subprocess over stdio and over
streamable HTTP on 127.0.0.1, against a copy of the sample index."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import asynccontextmanager

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import ROOT
from tests.helpers import free_port, wait_for_http

DEMO = "Which river flows through the city where the founder of Halvard Instruments was born?"
KEY, OTHER_KEY = "mcp-key-1", "mcp-key-2"
LAKE_VELL = {
    "id": "lake-vell",
    "title": "Lake Vell",
    "text": "Lake Vell lies north of Hallin. The lake was mapped by the surveyor Oskar Lind in 1921.",
}


def _env(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}, "PYTHONPATH": str(ROOT), **extra}


@pytest.fixture
def index_dir(sample_index, tmp_path):
    """A copy of the sample index the server may write to."""
    shutil.copytree(sample_index.dir, tmp_path / "idx")
    return tmp_path / "idx"


@asynccontextmanager
async def over_stdio(index_dir, *flags: str):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kgrag.cli", "mcp", "--index-dir", str(index_dir), *flags], env=_env()
    )
    async with Client(params) as client:
        yield client


@asynccontextmanager
async def http_server(index_dir, log_path, *flags: str, **settings: str):
    """``kgrag mcp --transport http`` with two API keys (and other KGRAG_* settings); yields its /mcp URL."""
    port = free_port()
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "kgrag.cli", "mcp", "--transport", "http", "--port", str(port)]
            + ["--index-dir", str(index_dir), *flags],
            env=_env(KGRAG_API_KEYS=f"{KEY},{OTHER_KEY}", **settings),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            try:
                wait_for_http(f"http://127.0.0.1:{port}/health", server, seconds=120)
            except AssertionError:
                raise AssertionError(open(log_path).read()[-3000:]) from None
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.terminate()
            server.wait(timeout=30)


@asynccontextmanager
async def over_http(url: str, key: str = KEY):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


async def ask_demo(client) -> tuple[dict, list]:
    progress: list = []

    async def on_progress(done, total, message):
        progress.append((done, total, message))

    result = await client.call_tool("ask", {"question": DEMO}, progress_callback=on_progress)
    assert not result.is_error, result.content
    return result.structured_content, progress


async def error_of(client, tool: str, arguments: dict) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error and len(result.content) == 1
    return result.content[0].text


async def assistant_session(client) -> None:
    """What the acceptance asks of each transport: tools with their schemas, the demo question answered with
    citations and progress, a search, a document added and answered from, one clear error for bad input."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"ask", "search", "add_documents", "document_status", "inspect_thread"}
    assert tools["ask"].input_schema["required"] == ["question"]
    assert set(tools["ask"].input_schema["properties"]) == {"question", "thread", "graph"}
    assert tools["search"].input_schema["properties"]["k"]["maximum"] == 50
    assert "short_answer" in tools["ask"].output_schema["properties"]

    answer, progress = await ask_demo(client)
    assert answer["short_answer"] == "Selva" and answer["confidence"] > 0.5
    assert any("Selva" in c["text"] and c["title"] == "Tarnholm" for c in answer["citations"])
    assert [s["answer"] for s in answer["subquestions"]] == ["Edda Morlund", "Tarnholm", "Selva"]
    # the plan (0 of 3), then each sub-question as it is answered
    assert [(done, total) for done, total, _ in progress] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert progress[0][2].startswith("Plan (") and "Selva" in progress[-1][2]

    state = (await client.call_tool("inspect_thread", {"thread": answer["thread"]})).structured_content
    assert state["short_answer"] == "Selva" and len(state["subquestions"]) == 3
    assert state["subquestions"][1]["rephrased"] == "In which city was Edda Morlund born?"

    found = await client.call_tool("search", {"query": "the river of Tarnholm", "route": "dense", "k": 3})
    passages = found.structured_content["passages"]
    assert len(passages) == 3 and passages[0]["title"] == "Tarnholm" and passages[0]["score"] == 1.0
    assert [p["score"] for p in passages] == sorted((p["score"] for p in passages), reverse=True)

    job = (await client.call_tool("add_documents", {"documents": [LAKE_VELL]})).structured_content
    assert job["status"] in ("queued", "running", "done") and job["documents"] == 1
    done = (await client.call_tool("document_status", {"job_id": job["job_id"], "wait": 60})).structured_content
    assert done["status"] == "done" and done["added"] == 1, done
    follow = (await client.call_tool("ask", {"question": "Who mapped Lake Vell?"})).structured_content
    assert follow["short_answer"] == "Oskar Lind" and follow["citations"][0]["doc_ids"] == ["lake-vell"]

    stats = await client.read_resource("kgrag://stats")
    sample = len(list((ROOT / "examples" / "corpus").glob("*.md")))
    assert f'"documents": {sample + 1}' in stats.contents[0].text  # the sample documents and Lake Vell

    assert await error_of(client, "ask", {"question": "   "}) == "Error executing tool ask: the question is empty"
    assert "k: Input should be greater than or equal to 1" in await error_of(client, "search", {"query": "x", "k": 0})
    assert (
        await error_of(client, "inspect_thread", {"thread": "nope"})
        == "Error executing tool inspect_thread: no thread 'nope'"
    )


def test_an_assistant_session_over_stdio(index_dir):
    async def session():
        async with over_stdio(index_dir) as client:
            await assistant_session(client)

    asyncio.run(session())


def test_an_assistant_session_over_http(index_dir, tmp_path):
    async def session():
        async with http_server(index_dir, tmp_path / "mcp.log") as url, over_http(url) as client:
            await assistant_session(client)

    asyncio.run(session())


def _refusal(url: str, body: bytes, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json", **headers})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    return refused.value.code, json.loads(refused.value.read())["error"]["message"]


def _slow_body_status(url: str) -> bytes:
    """The status line the server answers a client that announces a body and stops sending it."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as client:
        client.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {KEY}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode()
        )
        return client.recv(100).split(b"\r\n")[0]  # waits for the server's answer


def test_over_http_the_services_keys_and_limits_hold_and_read_only_exposes_no_writing_tool(index_dir, tmp_path):
    limits = {"KGRAG_MAX_REQUEST_BYTES": "20000", "KGRAG_REQUEST_TIMEOUT": "1", "KGRAG_MAX_QUESTION_CHARS": "200"}

    async def session():
        async with http_server(index_dir, tmp_path / "mcp.log", "--read-only", **limits) as url:
            assert _refusal(url, b"{}") == (401, "missing or wrong API key")
            assert _refusal(url, b"{}", Authorization="Bearer wrong") == (401, "missing or wrong API key")
            too_large = b'{"padding": "' + b"x" * 30_000 + b'"}'
            assert _refusal(url, too_large, Authorization=f"Bearer {KEY}") == (413, "request larger than 20000 bytes")
            assert _slow_body_status(url) == b"HTTP/1.1 408 Request Timeout"
            async with over_http(url) as client:
                assert {t.name for t in (await client.list_tools()).tools} == {"ask", "search", "inspect_thread"}
                message = await error_of(client, "add_documents", {"documents": ["Lake Vell lies north of Hallin."]})
                assert message == (
                    "Error executing tool add_documents: this server is read-only (kgrag mcp --read-only): "
                    "it does not add documents"
                )
                assert await error_of(client, "ask", {"question": "why? " * 50}) == (
                    "Error executing tool ask: the question has 250 characters, over the limit of 200 "
                    "(max_question_chars)"
                )
                answer, progress = await ask_demo(client)
                assert answer["short_answer"] == "Selva" and len(progress) == 4
            async with over_http(url, OTHER_KEY) as other:  # a thread belongs to the key that started it
                thread = answer["thread"]
                assert await error_of(other, "inspect_thread", {"thread": thread}) == (
                    f"Error executing tool inspect_thread: no thread {thread!r}"
                )

    asyncio.run(session())


def test_a_missing_index_stops_kgrag_mcp_with_its_reason_and_creates_nothing(tmp_path):
    missing = tmp_path / "nowhere"
    out = subprocess.run(
        [sys.executable, "-m", "kgrag.cli", "mcp", "--index-dir", str(missing)],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert out.returncode == 2 and out.stdout == "" and not missing.exists()
    assert (
        out.stderr.strip()
        == f"kgrag: error: no index at {missing}; build one with `kgrag index PATH --index-dir {missing}`"
    )


def test_without_the_sdk_kgrag_mcp_says_which_extra_to_install(monkeypatch, capsys):
    import importlib.util

    from kgrag import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    assert cli.main(["mcp", "--index-dir", "nowhere"]) == 2
    assert capsys.readouterr().err.strip() == "kgrag: error: kgrag mcp needs the MCP SDK: pip install 'kgrag[mcp]'"


def test_kgrag_help_imports_neither_the_sdk_nor_the_workflow():
    code = (
        "import sys; from kgrag import cli; cli.build_parser().format_help(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'langchain_core', 'langgraph', 'pydantic'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), check=True)
    assert out.stdout.strip() == "[]"
