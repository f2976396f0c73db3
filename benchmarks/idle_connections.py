"""Idle connections against `kgrag serve` on 127.0.0.1: do connections that send nothing, or half a header,
stall the other clients, and how soon are they closed?

    .venv/bin/python benchmarks/idle_connections.py [--stock]

Scenarios: 200 connections from one address (127.0.0.2; every fourth sends half a header), then one connection
from each of 900 and then 1,050 addresses (127.0.x.y: each is another client). After each, an authenticated
`GET /v1/models` from 127.0.0.1 is timed, and the seconds until the server closed every idle connection are
measured. `--stock` runs the app under uvicorn as `kgrag serve` did before its connection limits
(limit_concurrency 200, no header timeout, no per-client cap). Loopback only; bounded in count and time.
"""

from __future__ import annotations

import argparse
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import ROOT, print_table, write_result

from tests.helpers import free_port, wait_for_http

STOCK = """
import sys, uvicorn
from graph_store.settings import load_settings
from kgrag import KGRag
from kgrag.server import create_app
settings = load_settings(index_dir=sys.argv[1])
app = create_app(settings, {"kgrag": KGRag(settings=settings).open()})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", timeout_keep_alive=5,
            limit_concurrency=200)
"""


def open_idle(port: int, addresses: list[str], half_header_every: int = 4) -> list[socket.socket]:
    sockets = []
    for n, address in enumerate(addresses):
        sock = socket.socket()
        sock.bind((address, 0))
        sock.connect(("127.0.0.1", port))
        if n % half_header_every == 0:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ")
        sockets.append(sock)
    return sockets


def seconds_until_all_closed(sockets: list[socket.socket], limit: float) -> float | None:
    start, open_ = time.monotonic(), set(sockets)
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ)
        while open_ and time.monotonic() - start < limit:
            for key, _ in selector.select(timeout=0.2):
                try:
                    data = key.fileobj.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    open_.discard(key.fileobj)
                    selector.unregister(key.fileobj)
    return None if open_ else round(time.monotonic() - start, 1)


def scenario(base: str, port: int, name: str, addresses: list[str], limit: float) -> dict:
    opened = time.monotonic()
    idle = open_idle(port, addresses)
    time.sleep(0.3)
    started = time.monotonic()
    try:
        status = httpx.get(f"{base}/v1/models", headers={"Authorization": "Bearer k"}, timeout=30).status_code
    except httpx.HTTPError as exc:
        status = type(exc).__name__
    latency = round(time.monotonic() - started, 3)
    closed = seconds_until_all_closed(idle, limit)
    after = httpx.get(f"{base}/v1/models", headers={"Authorization": "Bearer k"}, timeout=30).status_code
    for sock in idle:
        sock.close()
    time.sleep(1)  # let the server see the closes before the next scenario
    return {
        "scenario": name,
        "idle": len(idle),
        "request": status,
        "seconds": latency,
        "all closed after (s)": f"open after {limit:.0f}" if closed is None else round(closed + started - opened, 1),
        "request then": after,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stock", action="store_true", help="uvicorn as kgrag serve ran it before (no limits)")
    parser.add_argument("--index-dir", help="an existing index (default: the sample corpus, indexed here)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kgrag-idle-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}
    env.update(PYTHONPATH=str(ROOT), KGRAG_API_KEYS="k", KGRAG_CHECKPOINTER=str(work / "checkpoints.sqlite"))
    index_dir = args.index_dir or str(work / "idx")
    if not args.index_dir:
        kgrag = [sys.executable, "-m", "kgrag.cli"]
        subprocess.run(
            [*kgrag, "index", str(ROOT / "examples/corpus"), "--index-dir", index_dir, "--quiet"], env=env, check=True
        )
    port = free_port()
    command = (
        [sys.executable, "-c", STOCK, index_dir, str(port)]
        if args.stock
        else [sys.executable, "-m", "kgrag.cli", "serve", "--index-dir", index_dir, "--port", str(port)]
    )
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{base}/health", server)
        clients = [f"127.0.{2 + n // 250}.{1 + n % 250}" for n in range(1050)]
        limit = 20.0
        rows = [
            scenario(base, port, "one client, 200 connections", ["127.0.0.2"] * 200, limit),
            scenario(base, port, "900 clients, one each", clients[:900], limit),
            scenario(base, port, "1,050 clients, one each", clients, limit),
        ]
    finally:
        server.terminate()
        server.wait(timeout=30)
    print_table(rows, ["scenario", "idle", "request", "seconds", "all closed after (s)", "request then"])
    print(f"result: {write_result('idle_connections' + ('_stock' if args.stock else ''), {'rows': rows})}")


if __name__ == "__main__":
    main()
