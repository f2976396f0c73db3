"""`kgrag serve` as a real process on 127.0.0.1, where the door itself is what is tested: its connection limits,
and concurrent turns on one conversation against its SQLite checkpointer."""

import os
import selectors
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.conftest import ROOT
from tests.helpers import free_port, wait_for_http

KEY = {"Authorization": "Bearer k"}
HEADER_TIMEOUT = 2.0
PER_CLIENT = 16


@pytest.fixture(scope="module")
def service(sample_index, tmp_path_factory):
    """A `kgrag serve` process over the sample index (conversations kept in a folder of the test's own)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}
    env.update(
        PYTHONPATH=str(ROOT),
        KGRAG_API_KEYS="k,k2",
        KGRAG_HEADER_TIMEOUT=str(HEADER_TIMEOUT),
        KGRAG_MAX_CONNECTIONS_PER_CLIENT=str(PER_CLIENT),
        KGRAG_CHECKPOINTER=str(tmp_path_factory.mktemp("service") / "checkpoints.sqlite"),
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "kgrag.cli", "serve", "--index-dir", str(sample_index.dir), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{base}/health", process, seconds=60)
        yield base, port
    finally:
        process.terminate()
        process.wait(timeout=20)


def connect_from(address: str, port: int) -> socket.socket:
    """A connection from ``address`` (any 127.x.y.z is this machine): each address is another client."""
    sock = socket.socket()
    sock.bind((address, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def seconds_until_closed(sockets: list[socket.socket], limit: float) -> list[float]:
    """For each socket, the seconds until the server closed it (inf when it was still open after ``limit``)."""
    start, closed = time.monotonic(), {}
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ)
        while len(closed) < len(sockets) and time.monotonic() - start < limit:
            for key, _ in selector.select(timeout=0.2):
                try:
                    data = key.fileobj.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    closed[key.fileobj] = time.monotonic() - start
                    selector.unregister(key.fileobj)
    return [closed.get(sock, float("inf")) for sock in sockets]


def test_idle_connections_stall_no_one_and_are_closed(service):
    base, port = service
    crowd = [connect_from("127.0.0.2", port) for _ in range(100)]  # one client, far over its cap
    others = [connect_from(f"127.0.1.{n}", port) for n in range(1, 101)]  # a hundred clients, one each
    try:
        for sock in others[::2]:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ")  # half a header, never finished
        started = time.monotonic()
        reply = httpx.get(f"{base}/v1/models", headers=KEY, timeout=10)
        assert reply.status_code == 200 and time.monotonic() - started < 2
        answer = httpx.post(
            f"{base}/v1/ask?format=jsonl", headers=KEY, timeout=30, json={"question": "Where was Ana Keldor born?"}
        )
        assert answer.status_code == 200 and '"type": "answer"' in answer.text
        closed = seconds_until_closed(crowd + others, limit=HEADER_TIMEOUT + 5)
        assert max(closed) <= HEADER_TIMEOUT + 3, "an idle connection outlived the header timeout"
        # beyond its cap a client's connections are closed at once, not after the timeout
        assert sum(t < HEADER_TIMEOUT / 2 for t in closed[: len(crowd)]) >= len(crowd) - PER_CLIENT
    finally:  # a failure must not leave the service full for the next test
        for sock in crowd + others:
            sock.close()


def chat_turn(base, key, conversation, question):
    return httpx.post(
        f"{base}/v1/chat/completions",
        timeout=60,
        headers={"Authorization": f"Bearer {key}"},
        json={"model": "kgrag", "conversation_id": conversation, "messages": [{"role": "user", "content": question}]},
    )


def test_turns_sent_at_once_to_one_conversation_are_all_kept(service):
    base, _ = service
    questions = ["Who founded Halvard Instruments?", "Where was Edda Morlund born?", "Where was Ana Keldor born?"]
    with ThreadPoolExecutor(len(questions)) as pool:
        replies = list(pool.map(lambda q: chat_turn(base, "k", "c-at-once", q), questions))
    assert [r.status_code for r in replies] == [200, 200, 200]
    thread = httpx.get(f"{base}/v1/threads/c-at-once", headers=KEY).json()
    assert thread["turn"] == 3 and len(thread["messages"]) == 6
    assert sorted(m["content"] for m in thread["messages"] if m["role"] == "human") == sorted(questions)


def test_the_first_key_owns_a_new_conversation(service):
    base, _ = service
    keys = ["k", "k2"]
    for n in range(3):
        conversation = f"c-contested-{n}"
        with ThreadPoolExecutor(2) as pool:
            replies = list(pool.map(lambda key: chat_turn(base, key, conversation, "Where was Ana Keldor born?"), keys))
        assert sorted(r.status_code for r in replies) == [200, 404], [r.text for r in replies]
        winner = keys[[r.status_code for r in replies].index(200)]
        thread = httpx.get(f"{base}/v1/threads/{conversation}", headers={"Authorization": f"Bearer {winner}"})
        assert thread.json()["turn"] == 1
