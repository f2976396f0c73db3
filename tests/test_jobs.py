"""Documents jobs are durable: recorded in the index before the service answers 202, applied by the index's next
writer (the service's writer thread, the service started again, `kgrag index`, the library), never applied twice,
and failed with their reason when another process holds the index too long. The door tests kill and stop a real
`kgrag serve` during jobs and compare the index with a clean build of what was accepted (a kill -9 with the record in
index.sqlite and in PostgreSQL)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph_store.documents import Document, load_documents
from graph_store.errors import IndexBusyError
from graph_store.index import IndexSummary, KnowledgeIndex
from graph_store.integrity import check_index
from graph_store.jobs import add_job, delete_job
from graph_store.settings import load_settings
from graph_store.store import Record, Store
from graph_store.store.postgres import PostgresRecord
from kgrag import KGRag
from kgrag.api import to_documents
from kgrag.server import create_app
from tests.conftest import EXAMPLES, ROOT, clone_index, new_database, vector_ids
from tests.helpers import free_port, serve_in_thread, wait_for_http

SMALL_CORPUS = ("halvard_instruments.md", "edda_morlund.md", "tarnholm.md", "selva.md", "lake_orrin.md", "vessby.md")
GONE = "Lake Orrin"  # the document the door tests delete
# A document large enough (about 25 chunks) that its build is still running when the service is killed or stopped.
LARGE = {
    "id": "marlow-registry",
    "title": "Marlow Registry",
    "text": "\n\n".join(
        f"The harbour ledger of {1800 + k} lists grain, timber and salt shipped from Marlow along the coast; the "
        "clerks wrote every entry by hand and bound the pages each winter."
        for k in range(130)
    )
    + "\n\nThe Marlow Registry was kept by Ilse Varga.",
}
SMALL_UPLOADS = {  # file name -> text: each answers one question
    "brotzeit.md": "# Brotzeit\n\nBrotzeit is a bakery in Vessby founded by Mira Holt in 1998.",
    "kelp_mill.md": "# Kelp Mill\n\nThe Kelp Mill is a mill in Tarnholm founded by Oda Lenz in 1911.",
    "fenwick_press.md": "# Fenwick Press\n\nThe Fenwick Press is a printer in Hallin founded by Arno Pike in 1930.",
}
QUESTIONS = {  # one per changed document: question -> what the answer must say
    "Who kept the Marlow Registry?": "Ilse Varga",
    "Who founded the bakery Brotzeit?": "Mira Holt",
    "Who founded the Kelp Mill?": "Oda Lenz",
    "Who founded the Fenwick Press?": "Arno Pike",
}


def contents(folder: Path, record: str | None = None):
    index = KnowledgeIndex(load_settings(environ={}, index_dir=folder, record=record), progress=False, create=False)
    try:
        return index.store.content_dump(), vector_ids(index)
    finally:
        index.close()


def build(folder: Path, docs: list[Document], embedder, record: str | None = None) -> Path:
    index = KnowledgeIndex(
        load_settings(environ={}, index_dir=folder, record=record), embedder=embedder, progress=False
    )
    index.add_documents(docs)
    index.close()
    return folder


@pytest.fixture(scope="module")
def small_docs():
    return [d for d in load_documents(EXAMPLES) if Path(d.source).name in SMALL_CORPUS]


@pytest.fixture(scope="module")
def small_index(tmp_path_factory, small_docs, embedder):
    return build(tmp_path_factory.mktemp("small") / "idx", small_docs, embedder)


@pytest.fixture
def served_folder(small_index, tmp_path):
    folder = tmp_path / "served"
    shutil.copytree(small_index, folder)
    return folder


@pytest.fixture(scope="module")
def small_postgresql(tmp_path_factory, small_docs, embedder, postgres_server):
    """The small corpus built once with its record in PostgreSQL: (folder, the database's name)."""
    url = new_database(postgres_server)
    return build(tmp_path_factory.mktemp("small-pg") / "idx", small_docs, embedder, url), url.rsplit("/", 1)[1]


@pytest.fixture(params=["sqlite", "postgresql"])
def served(request, tmp_path):
    """A copy of the small index to serve: (folder, its record's URL, or None for index.sqlite)."""
    if request.param == "sqlite":
        return request.getfixturevalue("served_folder"), None
    folder, database = request.getfixturevalue("small_postgresql")
    url = clone_index(folder, database, request.getfixturevalue("postgres_server"), tmp_path / "served-pg")
    return tmp_path / "served-pg", url


def accepted_documents() -> list[Document]:
    """The documents the door tests add, as the service makes them from the requests."""
    uploads = [
        {"text": text, "title": text.splitlines()[0].lstrip("# "), "source": f"upload:{name}"}
        for name, text in SMALL_UPLOADS.items()
    ]
    return to_documents([{**LARGE, "source": f"api:{LARGE['id']}"}, *uploads])


@pytest.fixture(scope="module")
def clean_build(tmp_path_factory, small_docs, embedder):
    """A clean build of what the door tests' service accepted: the small corpus and the added documents, without
    the deleted one."""
    kept = [d for d in small_docs if d.title != GONE]
    return contents(build(tmp_path_factory.mktemp("clean") / "idx", kept + accepted_documents(), embedder))


# --- the record: who applies a recorded job, and when ---------------------------------------------------------


def tiny_index(make_index):
    index = make_index()
    index.add_documents([Document("Vessby is a town in Ostmark.", title="Vessby", id="vessby")])
    return index


def test_the_next_writer_applies_recorded_jobs_first_in_order(make_index):
    index = tiny_index(make_index)
    brotzeit = Document("Brotzeit is a bakery in Vessby founded by Mira Holt.", title="Brotzeit", id="brotzeit")
    added = index.store.create_job(add_job("kgrag", "alice", [brotzeit]))
    unknown = index.store.create_job(delete_job("kgrag", "alice", ["no-such-doc"]))
    # `kgrag delete brotzeit`, run after the service accepted the add: the add comes first, then the delete
    summary = index.delete_documents(["brotzeit"])
    assert summary.deleted == 1 and "applied 1 documents job(s) the HTTP service had recorded" in summary.notices
    done = index.store.get_job(added.id)
    assert done.status == "done" and done.detail["added"] == 1 and done.payload == {}  # the record holds it now
    failed = index.store.get_job(unknown.id)  # a job whose change cannot be made fails alone, with the reason
    assert failed.status == "failed" and "no document with id no-such-doc" in failed.detail["error"]
    assert index.run_jobs().refreshed is False  # nothing left: the service would run nothing again
    assert set(index.store.document_hashes()) == {"vessby"}


def test_a_job_stopped_during_its_build_is_finished_never_applied_again(make_index):
    index = tiny_index(make_index)
    brotzeit = Document("Brotzeit is a bakery in Vessby founded by Mira Holt.", title="Brotzeit", id="brotzeit")
    job = index.store.create_job(add_job("kgrag", "alice", [brotzeit]))
    # what a kill -9 after the job's change was written leaves: the change and the job running, no build
    index._record_documents([brotzeit], IndexSummary(), job)
    assert index.store.get_job(job.id).status == "running" and index.store.get_job(job.id).payload == {}
    index.delete_documents(["vessby"])  # the next writer (here `kgrag delete`) finishes the job's build first
    finished = index.store.get_job(job.id)
    assert finished.status == "done" and "stopped before it finished" in finished.detail["recovered"]
    assert set(index.store.document_hashes()) == {"brotzeit"}
    assert not index.pending_changes(index.generation())


def test_a_writer_waits_for_another_then_gives_up_with_the_reason(make_index):
    index = tiny_index(make_index)
    waiting = make_index(write_lock_timeout=0.3)
    with open(index.dir / "index.lock", "w") as held:  # another process writing this index
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        with pytest.raises(IndexBusyError, match="another process is writing this index"):
            waiting.refresh()
        assert time.monotonic() - started >= 0.3


# --- a real `kgrag serve`, killed or stopped during jobs ------------------------------------------------------


class Service:
    """`kgrag serve` on a folder, in its own process (stderr: the server log)."""

    def __init__(self, folder: Path, log: Path, record: str | None = None):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        where = ["--index-dir", str(folder)] + (["--record", record] if record else [])
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kgrag.cli", "serve", *where, "--port", str(self.port)],
            cwd=ROOT,
            env={**{k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=log.open("a"),
        )
        wait_for_http(f"{self.base}/health", self.process)

    def add(self, **request) -> dict:
        response = httpx.post(f"{self.base}/v1/indexes/kgrag/documents", timeout=30, **request)
        assert response.status_code == 202, response.text
        return response.json()

    def job(self, job_id: str) -> dict:
        return httpx.get(f"{self.base}/v1/jobs/{job_id}", timeout=30).json()

    def wait(self, job_id: str, statuses: tuple[str, ...] = ("done", "failed"), seconds: float = 180) -> dict:
        deadline = time.monotonic() + seconds
        while (job := self.job(job_id)).get("status") not in statuses:
            assert time.monotonic() < deadline, f"job {job_id} still {job}"
            time.sleep(0.05)
        return job

    def ask(self, question: str) -> dict:
        response = httpx.post(f"{self.base}/v1/ask?format=jsonl", json={"question": question}, timeout=120)
        return json.loads(response.text.splitlines()[-1])

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=180)


def submit_large_then_small_jobs(service: Service, gone_id: str) -> list[str]:
    """The large add, and once it is running, three uploads and a delete (queued behind it); the job ids."""
    large = service.add(json={"documents": [LARGE]})["job_id"]
    # its change is in the record and its build runs
    assert service.wait(large, ("running", "done", "failed"))["status"] == "running"
    ids = [large]
    for name, text in SMALL_UPLOADS.items():
        ids.append(service.add(files={"file": (name, text.encode())})["job_id"])
    response = httpx.delete(f"{service.base}/v1/indexes/kgrag/documents/{gone_id}", timeout=30)
    assert response.status_code == 202
    return ids + [response.json()["job_id"]]


def recorded_statuses(folder: Path, ids: list[str], record: str | None = None) -> list[str]:
    store: Record = Store(folder / "index.sqlite") if record is None else PostgresRecord(record)
    try:
        return [store.get_job(i).status for i in ids]
    finally:
        store.close()


def assert_everything_accepted_is_served(
    service: Service, folder: Path, ids: list[str], clean_build, record: str | None = None
) -> list[dict]:
    """Every job done, every changed document answered (the deleted one cited nowhere), and, once the service
    stopped, the index equal to a clean build and `kgrag check` content."""
    jobs = [service.wait(i) for i in ids]
    assert [j["status"] for j in jobs] == ["done"] * len(ids), jobs
    assert [j.get("added") for j in jobs[:4]] == [1, 1, 1, 1] and jobs[4]["deleted"] == 1
    for question, expected in QUESTIONS.items():
        answer = service.ask(question)
        assert expected in answer["answer"], (question, answer)
    vessby = service.ask("Which lake lies by the town of Vessby?")
    assert GONE not in {c["title"] for c in vessby["citations"]}, vessby
    service.stop()
    assert check_index(load_settings(environ={}, index_dir=folder, record=record)) == []
    assert contents(folder, record) == clean_build
    return jobs


@pytest.mark.door
def test_kill_9_during_jobs_then_restart_finishes_every_accepted_job(served, small_docs, clean_build, tmp_path):
    folder, record = served
    gone_id = next(d.id for d in small_docs if d.title == GONE)
    service = Service(folder, tmp_path / "serve.log", record)
    try:
        ids = submit_large_then_small_jobs(service, gone_id)
        service.process.send_signal(signal.SIGKILL)
        service.process.wait()
    finally:
        service.process.kill()
    # the record holds every accepted job: the large one's change with its build unfinished, the others queued
    assert recorded_statuses(folder, ids, record) == ["running", "queued", "queued", "queued", "queued"]
    again = Service(folder, tmp_path / "serve.log", record)
    try:
        jobs = assert_everything_accepted_is_served(again, folder, ids, clean_build, record)
    finally:
        again.process.kill()
    assert "stopped before it finished" in jobs[0]["recovered"]


def request_in_flight(service: Service, length: int) -> socket.socket:
    """A documents request whose headers the service has read and whose body it waits for (it answered
    100 Continue): the caller sends the body."""
    conn = socket.create_connection(("127.0.0.1", service.port), timeout=60)
    conn.sendall(
        b"POST /v1/indexes/kgrag/documents HTTP/1.1\r\n"
        + f"Host: 127.0.0.1:{service.port}\r\nContent-Type: application/json\r\n".encode()
        + f"Content-Length: {length}\r\nExpect: 100-continue\r\n\r\n".encode()
    )
    assert conn.recv(100).startswith(b"HTTP/1.1 100")
    return conn


def refuses_connections(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return False
    except ConnectionRefusedError:
        return True


@pytest.mark.door
def test_sigterm_takes_no_new_job_finishes_the_running_one_and_keeps_the_queued(
    served_folder, small_docs, clean_build, tmp_path
):
    gone_id = next(d.id for d in small_docs if d.title == GONE)
    service = Service(served_folder, tmp_path / "serve.log")
    try:
        ids = submit_large_then_small_jobs(service, gone_id)
        late = json.dumps({"documents": [{"id": "late", "text": "A job sent while the service stops."}]}).encode()
        with request_in_flight(service, len(late)) as conn:
            service.process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 30
            while not refuses_connections(service.port):  # the service is stopping
                assert time.monotonic() < deadline
                time.sleep(0.05)
            conn.sendall(late)
            reply = b"".join(iter(lambda: conn.recv(4000), b""))  # up to the end: the service closes it
        assert reply.startswith(b"HTTP/1.1 503") and b"the service is stopping" in reply, reply
        assert service.process.wait(timeout=180) in (0, -signal.SIGTERM)
    finally:
        service.process.kill()
    assert recorded_statuses(served_folder, ids) == ["done", "queued", "queued", "queued", "queued"]
    assert "stay recorded for the next start" in (tmp_path / "serve.log").read_text()
    again = Service(served_folder, tmp_path / "serve.log")
    try:
        assert_everything_accepted_is_served(again, served_folder, ids, clean_build)
    finally:
        again.process.kill()


# --- another writer on the index ------------------------------------------------------------------------------


@pytest.mark.door
def test_a_job_meeting_another_writer_waits_then_fails_with_the_reason_logged(served_folder, caplog):
    settings = load_settings(environ={}, index_dir=served_folder, write_lock_timeout=2)
    instance, base = serve_in_thread(create_app(settings, {"kgrag": KGRag(settings=settings)}, InMemorySaver()))
    url = f"{base}/v1/indexes/kgrag/documents"
    record = {"documents": [{"id": "brotzeit", "text": "Brotzeit is a bakery in Vessby founded by Mira Holt."}]}

    def wait(job: dict) -> dict:
        deadline = time.monotonic() + 120
        while (job := httpx.get(f"{base}{job['status_url']}").json())["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        return job

    try:
        with open(served_folder / "index.lock", "w") as held:  # `kgrag index` writing the same folder
            fcntl.flock(held, fcntl.LOCK_EX)
            refused = httpx.post(url, json=record).json()
            failed = wait(refused)
            waited = httpx.post(url, json=record).json()  # the other writer finishes within the wait
        assert failed["status"] == "failed" and "another process is writing this index" in failed["error"]
        assert any("another process is writing this index" in r.getMessage() for r in caplog.records)
        assert wait(waited)["status"] == "done"
    finally:
        instance.should_exit = True
