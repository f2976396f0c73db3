"""Load test of `kgrag serve` on 127.0.0.1: 50 concurrent conversations of 3 turns each.

    .venv/bin/python benchmarks/load_test.py [--conversations 50] [--turns 3]

Setup A (scale-out): 2 service processes sharing a PostgreSQL checkpointer (a server started here as
user postgres) and a Chroma server (`chroma run`). Setup B (default): 1 process, embedded SQLite and
Chroma. Both use the project's sample corpus and a scripted, instant OpenAI-compatible chat endpoint
(tests.helpers.FakeOpenAIServer), so the numbers measure the service, not a model. Checked: no error,
every thread holds exactly its own turns. Requests are bounded in number and time; loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
from _common import ROOT, print_table, skip, write_result

from tests.helpers import FakeOpenAIServer, free_port

PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)), None)


def reply(model: str, messages: list[dict]) -> str:
    """The instant 'LLM': a one-step plan, a sub-answer, a final answer naming the question."""
    prompt = messages[-1]["content"]
    question = prompt.rsplit("Question:", 1)[-1].strip().splitlines()[0] if "Question:" in prompt else ""
    if prompt.startswith("You plan how"):
        return json.dumps({"sub_questions": [{"id": "q1", "question": question, "route": "ppr"}]})
    if prompt.startswith("You select facts"):
        return '{"keep": [1, 2]}'
    if prompt.startswith("Answer the question using only"):
        return json.dumps({"answer": f"about {question[:40]}", "evidence": [1]})
    return f"Answer to: {question} [1]"


def wait_http(url: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not come up") from None
            time.sleep(0.3)


def start_workers(env: dict, count: int, index_dir: Path) -> tuple[list[subprocess.Popen], list[str]]:
    procs, urls = [], []
    for _ in range(count):
        port = free_port()
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "kgrag.cli", "serve", "--index-dir", str(index_dir), "--port", str(port)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        urls.append(f"http://127.0.0.1:{port}")
    for url in urls:
        wait_http(f"{url}/health")
    return procs, urls


async def conversation(
    client: httpx.AsyncClient, urls: list[str], n: int, turns: int, latencies: list[float]
) -> list[str]:
    asked = []
    for turn in range(turns):
        question = f"Conversation {n} turn {turn}: who founded Halvard Instruments?"
        asked.append(question)
        url = urls[(n + turn) % len(urls)]  # turns of one conversation land on different workers
        start = time.perf_counter()
        response = await client.post(
            f"{url}/v1/chat/completions",
            json={
                "model": "kgrag",
                "conversation_id": f"load-{n}",
                "messages": [{"role": "user", "content": question}],
            },
        )
        latencies.append(time.perf_counter() - start)
        response.raise_for_status()
        if question not in response.json()["choices"][0]["message"]["content"]:
            raise AssertionError(f"conversation {n} got another conversation's answer")
    return asked


async def load(urls: list[str], conversations: int, turns: int) -> dict:
    latencies: list[float] = []
    start = time.perf_counter()
    async with httpx.AsyncClient(timeout=300, headers={"Authorization": "Bearer load-key"}) as client:
        asked = await asyncio.gather(*(conversation(client, urls, n, turns, latencies) for n in range(conversations)))
        for n, questions in enumerate(asked):  # every thread holds exactly its own turns, in order
            thread = (await client.get(f"{urls[0]}/v1/threads/conv-load-{n}")).json()
            humans = [m["content"] for m in thread["messages"] if m["role"] == "human"]
            if humans != questions or thread["turn"] != turns:
                raise AssertionError(f"thread load-{n} is lost or mixed: {humans}")
    wall = time.perf_counter() - start
    return {
        "requests": len(latencies),
        "errors": 0,
        "wall_s": round(wall, 1),
        "p50_s": round(float(np.percentile(latencies, 50)), 2),
        "p95_s": round(float(np.percentile(latencies, 95)), 2),
        "requests_per_s": round(len(latencies) / wall, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    if PG_BIN is None or shutil.which("runuser") is None or not (Path(sys.executable).parent / "chroma").exists():
        skip("needs Debian's PostgreSQL binaries, runuser and the chroma command")
    work = Path(tempfile.mkdtemp(prefix="kgrag-load-"))
    shutil.chown(work, "postgres", "postgres")
    pg_port, chroma_port = free_port(), free_port()
    as_pg = ["runuser", "-u", "postgres", "--"]
    subprocess.run(
        [*as_pg, f"{PG_BIN}/initdb", "-D", str(work / "pg"), "--auth=trust", "-U", "postgres"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            *as_pg,
            f"{PG_BIN}/pg_ctl",
            "-D",
            str(work / "pg"),
            "-w",
            "-l",
            str(work / "pg.log"),
            "-o",
            f"-p {pg_port} -k {work} -c listen_addresses=127.0.0.1 -c max_connections=200",
            "start",
        ],
        check=True,
    )
    chroma = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "chroma"),
            "run",
            "--path",
            str(work / "chroma"),
            "--host",
            "127.0.0.1",
            "--port",
            str(chroma_port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rows, procs = [], []
    try:
        wait_http(f"http://127.0.0.1:{chroma_port}/api/v2/heartbeat")
        with FakeOpenAIServer(reply=reply) as llm:
            base = {
                **os.environ,
                "PYTHONPATH": str(ROOT),
                "KGRAG_API_KEYS": "load-key",
                "KGRAG_CHAT_MODEL": "tiny",
                "KGRAG_CHAT_BASE_URL": llm.base_url,
                "KGRAG_MAX_CONCURRENCY": "8",
            }
            setups = {
                "2 workers, PostgreSQL + Chroma server": {
                    "KGRAG_CHECKPOINTER": f"postgresql://postgres@127.0.0.1:{pg_port}/postgres",
                    "KGRAG_CHROMA_HOST": "127.0.0.1",
                    "KGRAG_CHROMA_PORT": str(chroma_port),
                },
                "1 worker, embedded SQLite + Chroma": {},
            }
            for name, extra in setups.items():
                index_dir = work / f"index-{len(rows)}"
                env = {**base, **extra}
                offline = {k: v for k, v in env.items() if not k.startswith("KGRAG_CHAT")}  # index offline
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "kgrag.cli",
                        "index",
                        str(ROOT / "examples" / "corpus"),
                        "--index-dir",
                        str(index_dir),
                        "--quiet",
                    ],
                    cwd=ROOT,
                    env=offline,
                    check=True,
                    capture_output=True,
                )
                procs, urls = start_workers(env, 2 if extra else 1, index_dir)
                result = asyncio.run(load(urls, args.conversations, args.turns))
                rows.append({"setup": name, "conversations": args.conversations, "turns": args.turns, **result})
                print_table(rows[-1:], list(rows[-1]))
                for p in procs:
                    p.terminate()
                    p.wait(timeout=30)
                procs = []
    finally:
        for p in procs:
            p.kill()
        chroma.terminate()
        subprocess.run([*as_pg, f"{PG_BIN}/pg_ctl", "-D", str(work / "pg"), "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print_table(rows, list(rows[0]))
    print(f"wrote {write_result('load_test', {'rows': rows})}")


if __name__ == "__main__":
    main()
