"""Generations on shared storage (setting generations_dir): a writer publishes into a folder every machine mounts;
serving processes given only that folder answer from it, move to a newly published generation at their next request
without a restart, and a generation they may still hold survives its replacement for generation_grace_seconds."""

import json
import os
import subprocess
import sys

import httpx
import pytest

from graph_store import generations
from graph_store.documents import Document
from graph_store.errors import IndexStoreError
from graph_store.index import KnowledgeIndex
from graph_store.retrieval import Retrievers
from graph_store.settings import load_settings
from tests.conftest import ROOT
from tests.helpers import free_port, wait_for_http

NEW = Document(
    "Zorvath Quellen founded the Ember Guild of Tarnholm in 1911. The Ember Guild casts bells for lighthouses.",
    title="Ember Guild",
)
QUESTION = "Who founded the Ember Guild?"


@pytest.fixture(scope="module")
def shared(tmp_path_factory, embedder, sample_docs):
    """A writer's index whose generations go to a "mounted" folder: (the writer, the folder, a scratch folder)."""
    root = tmp_path_factory.mktemp("shared")
    mount = root / "mount" / "generations"
    writer = KnowledgeIndex(
        load_settings(environ={}, index_dir=root / "writer", generations_dir=mount), embedder=embedder, progress=False
    )
    writer.add_documents(sample_docs[:8])
    yield writer, mount, root
    writer.close()


def _env(**extra) -> dict:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}, "PYTHONPATH": str(ROOT), **extra}


def _kgrag(*args):
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli", *map(str, args)], cwd=ROOT, env=_env(), capture_output=True, text=True
    )


def test_the_writer_publishes_into_the_shared_folder_with_the_manifest(shared):
    writer, mount, _ = shared
    assert not (writer.dir / "derived").exists()
    current = generations.current(writer.settings)
    assert current is not None and current.dir.parent == mount
    assert current.manifest["index_id"] == writer.manifest["index_id"]


def test_another_index_cannot_publish_into_the_shared_folder(shared, embedder):
    writer, mount, root = shared
    with pytest.raises(IndexStoreError, match="holds the generations of another index"):
        KnowledgeIndex(writer.settings.replace(index_dir=root / "another"), embedder=embedder, progress=False)


@pytest.mark.door
def test_kgrag_ask_with_only_the_shared_folder_answers(shared):
    writer, mount, root = shared
    here = root / "ask-machine"  # no index here: nothing but the shared folder
    done = _kgrag("ask", "Who founded Halvard Instruments?", "--generations-dir", mount, "--index-dir", here)
    assert done.returncode == 0, done.stderr
    assert "Halvard" in done.stdout


@pytest.mark.door
@pytest.mark.parametrize("folder", ["absent", "empty"])
def test_a_missing_or_empty_shared_folder_is_one_clear_line(shared, folder):
    _, _, root = shared
    (root / "empty").mkdir(exist_ok=True)
    done = _kgrag("ask", QUESTION, "--generations-dir", root / folder, "--index-dir", root / "nothing-here")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"nothing is published in {root / folder}" in done.stderr


def _answer(base: str) -> str:
    response = httpx.post(
        f"{base}/v1/ask?format=jsonl", json={"question": QUESTION}, headers={"Authorization": "Bearer k"}, timeout=120
    )
    last = json.loads(response.text.strip().splitlines()[-1])
    assert last["type"] == "answer", last
    return json.dumps(last)


@pytest.mark.door
def test_a_running_server_answers_from_a_new_generation_at_its_next_request(shared):
    writer, mount, root = shared
    here = root / "serving-machine"
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "kgrag.cli", "serve", "--generations-dir", str(mount), "--index-dir", str(here)]
        + ["--port", str(port)],
        cwd=ROOT,
        env=_env(KGRAG_API_KEYS="k", KGRAG_CHECKPOINTER=str(root / "serving-checkpoints.sqlite")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_for_http(f"{base}/health", server, seconds=120)
        except AssertionError:
            server.kill()
            raise AssertionError(server.communicate()[1][-3000:]) from None
        assert "Zorvath" not in _answer(base)
        writer.add_documents([NEW])  # published while the server runs
        assert "Zorvath Quellen" in _answer(base)
        assert server.poll() is None  # the same process, not restarted
        assert not here.exists()  # it wrote nothing of an index on its machine
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_replaced_generation_is_kept_for_the_grace_period_then_removed(shared, embedder):
    writer, mount, root = shared
    reader = Retrievers(
        KnowledgeIndex.open(load_settings(environ={}, index_dir=root / "reader", generations_dir=mount), embedder)
    )
    held = reader.generation.dir
    before = [e.id for e in reader.ppr(QUESTION).evidence]
    writer.refresh(force=True)  # a new generation; the default grace period keeps the one the reader holds
    assert generations.current(writer.settings).number > reader.generation.number
    assert held.exists() and not reader.generation.problems(full=True)  # whole, for a reader on another machine
    impatient = KnowledgeIndex(writer.settings.replace(generation_grace_seconds=0), embedder=embedder, progress=False)
    try:
        impatient.refresh(force=True)
        latest = generations.current(writer.settings)
    finally:
        impatient.close()
    assert not held.exists()
    assert sorted(p.name for p in mount.iterdir()) == ["CURRENT", latest.dir.name]
    assert [e.id for e in reader.ppr(QUESTION).evidence] == before  # its open files stay readable on this machine
