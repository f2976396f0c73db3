"""Fault injection: kill -9 during a delete (the record in index.sqlite or in PostgreSQL), every derived file deleted, truncated or corrupted, the system of
record truncated, emptied or overwritten. Each is followed by the documented recovery (README, "Recovery")
and compared with a clean build. Users only ever get one clear line, never a traceback."""

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from graph_store.documents import load_documents
from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings
from kgrag.cli import main
from tests.conftest import EXAMPLES, ROOT, clone_index, new_database, vector_ids

QUESTION = "Which river flows through the city where the founder of Halvard Instruments was born?"


def kgrag(capsys, *args) -> tuple[int, str, str]:
    """The CLI in this process (a fresh parse each time), with what it printed."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def build(folder, docs, record=None):
    index = KnowledgeIndex(load_settings(environ={}, index_dir=folder, record=record), progress=False)
    index.add_documents(docs)
    index.close()  # closed: the record's write-ahead log is folded into index.sqlite


def contents(folder, record=None):
    index = KnowledgeIndex(load_settings(environ={}, index_dir=folder, record=record), progress=False, create=False)
    try:
        return index.store.content_dump(), vector_ids(index)
    finally:
        index.close()


# The question's documents and a few more: damage and its repair do not depend on the corpus's size, and a repair
# of these eight costs a fraction of one of the 50 documents. (The kill tests and the overwritten record use all 50.)
SMALL = ("halvard_instruments", "edda_morlund", "tarnholm", "selva", "ludvik", "lake_orrin", "kessel", "vessby")


@pytest.fixture(autouse=True)
def warm_embedder(monkeypatch, embedder):
    """Every index opened here (the CLI's in this process too) shares one loaded model: a cold one costs a second
    each time."""
    monkeypatch.setattr("graph_store.index.make_embedder", lambda settings: embedder)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    for name in SMALL:
        shutil.copy(EXAMPLES / f"{name}.md", folder)
    return folder


def _clean_build(tmp_path_factory, source):
    folder = tmp_path_factory.mktemp("clean") / "idx"
    build(folder, load_documents(source))
    return folder, contents(folder)


@pytest.fixture(scope="module")
def clean(tmp_path_factory, corpus):
    return _clean_build(tmp_path_factory, corpus)


def _copy_of(clean, tmp_path):
    """A copy of a clean build's folder, for one test to damage."""
    folder = tmp_path / "idx"
    shutil.copytree(clean[0], folder)
    return folder


@pytest.fixture
def damaged(clean, tmp_path):
    return _copy_of(clean, tmp_path)


def _generation(folder):
    return folder / "derived" / (folder / "derived" / "CURRENT").read_text().strip()


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _corrupt(path, size=8192):
    """Random bytes over the middle of the file, its size unchanged."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + size] = os.urandom(min(size, len(data) - middle))
    path.write_bytes(bytes(data))


def _lose_chroma_log(folder):
    """Chroma's metadata keeps every fact id, but half of its log, from which its vector segment is loaded, is lost:
    metadata and vectors out of step, as a write cut off between the two leaves them."""
    db = sqlite3.connect(folder / "chroma" / "chroma.sqlite3")
    with db:
        (facts,) = db.execute("SELECT id FROM collections WHERE name = 'kg_facts'").fetchone()
        db.execute("DELETE FROM embeddings_queue WHERE topic LIKE ? AND seq_id % 2 = 0", (f"%{facts}",))
    db.close()


DERIVED_DAMAGE = {
    "graph CSR deleted": lambda f: (_generation(f) / "graph.indices.npy").unlink(),
    "graph CSR truncated": lambda f: _truncate(_generation(f) / "graph.weights.npy"),
    "graph.json deleted": lambda f: (_generation(f) / "graph.json").unlink(),
    "vectors truncated": lambda f: _truncate(_generation(f) / "vectors.chunks.npy"),
    "vectors corrupted": lambda f: _corrupt(_generation(f) / "vectors.facts.npy", 2048),
    "vector ids deleted": lambda f: (_generation(f) / "vectors.entities.ids.npy").unlink(),
    "snapshot corrupted": lambda f: _corrupt(_generation(f) / "snapshot.sqlite"),
    "generation.json garbage": lambda f: (_generation(f) / "generation.json").write_text("{not json"),
    "CURRENT deleted": lambda f: (f / "derived" / "CURRENT").unlink(),
    "chroma deleted": lambda f: shutil.rmtree(f / "chroma"),
    "chroma log lost": _lose_chroma_log,
}


@pytest.mark.parametrize("damage", list(DERIVED_DAMAGE))
def test_damaged_derived_files_are_reported_and_repaired(damage, damaged, clean, capsys):
    DERIVED_DAMAGE[damage](damaged)
    code, out, err = kgrag(capsys, "ask", QUESTION, "--index-dir", damaged)
    assert code == 0 or (code == 2 and err.count("\n") == 1 and "kgrag" in err)
    code, out, _ = kgrag(capsys, "check", "--index-dir", damaged)
    assert code == 1 and "kgrag repair" in out
    code, out, err = kgrag(capsys, "repair", "--index-dir", damaged, "--quiet")
    assert code == 0, err
    assert kgrag(capsys, "check", "--index-dir", damaged)[0] == 0
    code, out, _ = kgrag(capsys, "ask", QUESTION, "--index-dir", damaged)
    assert code == 0 and "answer: Selva" in out
    assert contents(damaged) == clean[1]


@pytest.mark.parametrize("collection", ["chunks", "facts"])
def test_vectors_overwritten_with_garbage_never_rank_evidence(collection, damaged, capsys):
    """A reader checks the files' sizes, not their checksums (that would read them whole): bytes that are no numbers
    must stop the question with one line, not rank passages by NaN and answer from them."""
    vectors = np.load(_generation(damaged) / f"vectors.{collection}.npy", mmap_mode="r+")
    vectors[:] = np.nan
    vectors.flush()
    del vectors
    code, out, err = kgrag(capsys, "ask", QUESTION, "--index-dir", damaged)
    assert code == 2 and err.count("\n") == 1 and "answer:" not in out, out + err
    assert f"stored {collection} vectors hold values that are not numbers" in err
    assert f"kgrag repair --index-dir {damaged}" in err


def test_vectors_chroma_cannot_give_back_get_one_line_naming_the_repair(damaged, clean, capsys):
    _lose_chroma_log(damaged)
    (damaged / "derived" / "CURRENT").unlink()  # the next build reads every vector back from Chroma
    code, _, err = kgrag(capsys, "index", "--index-dir", damaged, "--quiet")
    assert code == 2 and err.count("\n") == 1, err
    assert "the facts vectors in Chroma are damaged" in err and f"kgrag repair --index-dir {damaged}" in err
    assert kgrag(capsys, "repair", "--index-dir", damaged, "--quiet")[0] == 0
    assert contents(damaged) == clean[1]


def test_a_truncated_record_is_refused_then_salvaged(damaged, corpus, clean, capsys):
    _truncate(damaged / "index.sqlite")
    code, _, err = kgrag(capsys, "index", corpus, "--index-dir", damaged, "--quiet")
    assert code == 2 and "is damaged" in err and "kgrag check" in err
    code, out, _ = kgrag(capsys, "check", "--index-dir", damaged)
    assert code == 1 and "whole:" in out and "--salvage" in out
    code, _, err = kgrag(capsys, "repair", "--index-dir", damaged)
    assert code == 2 and "--salvage" in err
    code, out, err = kgrag(capsys, "repair", "--salvage", "--index-dir", damaged, "--quiet")
    assert code == 0 and "salvaged" in out, err
    assert list(damaged.glob("index.sqlite.damaged-*"))
    # the documented last step: index the sources again; the result equals a clean build
    assert kgrag(capsys, "index", corpus, "--index-dir", damaged, "--quiet")[0] == 0
    assert contents(damaged) == clean[1]


def test_an_empty_record_is_never_recreated_silently(damaged, corpus, capsys):
    (damaged / "index.sqlite").write_bytes(b"")
    code, _, err = kgrag(capsys, "index", corpus, "--index-dir", damaged, "--quiet")
    assert code == 2 and "empty file" in err
    assert (damaged / "index.sqlite").stat().st_size == 0


def test_a_record_overwritten_mid_file_is_noticed(damaged_full, capsys):
    # All 50 documents: `kgrag check` of the eight's smaller record overwritten so took 1-3 minutes (load ~10).
    damaged = damaged_full
    _corrupt(damaged / "index.sqlite")
    code, out, _ = kgrag(capsys, "check", "--index-dir", damaged)
    assert code == 1 and "index.sqlite" in out
    code, _, err = kgrag(capsys, "index", EXAMPLES, "--index-dir", damaged, "--quiet")
    assert code == 2 and "damaged" in err


@pytest.mark.parametrize("garbage", [b"", b"{trunc", b"[1, 2]", b"\x00\x01 binary"])
def test_a_damaged_manifest_gets_one_line(damaged, corpus, capsys, garbage):
    (damaged / "manifest.json").write_bytes(garbage)
    for command in (["ask", QUESTION], ["stats"], ["index", corpus, "--quiet"]):
        code, _, err = kgrag(capsys, *command, "--index-dir", damaged)
        assert code == 2 and "manifest.json" in err


# --- kill -9 during a delete ----------------------------------------------------------------------------


def _poll(db_path, sql):
    try:
        with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1) as db:
            return db.execute(sql).fetchone()[0]
    except sqlite3.Error:
        return 0


def _pending_deletes(folder, record):
    if record is None:
        return _poll(folder / "index.sqlite", "SELECT COUNT(*) FROM pending_deletes")
    import psycopg

    with psycopg.connect(record) as db:
        return db.execute("SELECT COUNT(*) FROM pending_deletes").fetchone()[0]


DELETE_KILL_POINTS = {
    "delete committed": _pending_deletes,
    "next generation being written": lambda f, record: list((f / "derived").glob("*.tmp")),
}


@pytest.fixture(scope="module")
def clean_full(tmp_path_factory):
    """All the documents: a delete from them lasts long enough to be killed at each point."""
    return _clean_build(tmp_path_factory, EXAMPLES)


@pytest.fixture
def damaged_full(clean_full, tmp_path):
    return _copy_of(clean_full, tmp_path)


@pytest.fixture(scope="module")
def clean_postgresql(tmp_path_factory, postgres_server):
    """The corpus built once with its record in PostgreSQL: (folder, the database's name)."""
    url = new_database(postgres_server)
    folder = tmp_path_factory.mktemp("clean-pg") / "idx"
    build(folder, load_documents(EXAMPLES), record=url)
    return folder, url.rsplit("/", 1)[1]


@pytest.fixture
def killable(request, tmp_path):
    """A copy of the clean index to kill a writer of: (folder, its record's URL or None for index.sqlite). The
    PostgreSQL copy is a copy of the folder and of the database (the manifest names the new one)."""
    if request.param == "sqlite":
        return request.getfixturevalue("damaged_full"), None
    folder, database = request.getfixturevalue("clean_postgresql")
    url = clone_index(folder, database, request.getfixturevalue("postgres_server"), tmp_path / "pg-idx")
    return tmp_path / "pg-idx", url


@pytest.fixture(scope="module")
def without_lake_orrin(tmp_path_factory):
    """A clean build of the corpus without the document the kill tests delete."""
    docs = load_documents(EXAMPLES)
    gone = next(d for d in docs if d.title == "Lake Orrin")
    folder = tmp_path_factory.mktemp("reference") / "idx"
    build(folder, [d for d in docs if d.id != gone.id])
    return gone, contents(folder)


# Every kill point with every recovery on SQLite; on PostgreSQL each kill point once, and each recovery once.
KILLS = [(p, r, "sqlite") for r in ("delete again", "index without a path") for p in DELETE_KILL_POINTS] + [
    ("delete committed", "delete again", "postgresql"),
    ("next generation being written", "index without a path", "postgresql"),
]


@pytest.mark.door
@pytest.mark.parametrize("point, recovery, killable", KILLS, indirect=["killable"])
def test_kill_9_during_a_delete_then_recovery_equals_a_clean_build(
    point, recovery, killable, without_lake_orrin, capsys
):
    gone, reference = without_lake_orrin
    folder, record = killable
    where = ["--index-dir", folder] + (["--record", record] if record else [])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgrag.cli", "delete", gone.id, *map(str, where)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline and not DELETE_KILL_POINTS[point](folder, record):
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL, f"the delete finished before the kill point {point!r}"
    code, out, _ = kgrag(capsys, "ask", QUESTION, *where)  # the last complete state answers
    assert code == 0 and "answer: Selva" in out
    if recovery == "delete again":
        code, out, err = kgrag(capsys, "delete", gone.id, *where)
        assert code == 0 and "finished now" in out, err
    else:
        assert kgrag(capsys, "index", *where, "--quiet")[0] == 0
    assert contents(folder, record) == reference
