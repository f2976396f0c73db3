"""The record in PostgreSQL (a server the tests start; skipped, saying why, when none can be): `kgrag index --record`
builds the sample corpus into it and `kgrag ask` answers from it, with the same derived content as an index whose
record is index.sqlite; a second indexing driver on the same record is refused with one line while another writes,
whichever index directory it builds in."""

import json
import os
import subprocess
import sys

import pytest

from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings
from tests.conftest import EXAMPLES, ROOT, clone_index, new_database

pytestmark = pytest.mark.door
QUESTION = "Which river flows through the city where the founder of Halvard Instruments was born?"


def kgrag(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli", *map(str, args)], capture_output=True, text=True, cwd=ROOT, env=env
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory, postgres_server):
    """The sample corpus indexed by `kgrag index --record URL` (the module's own database)."""
    url = new_database(postgres_server)
    folder = tmp_path_factory.mktemp("pgrecord") / "idx"
    done = kgrag("index", EXAMPLES, "--index-dir", folder, "--record", url, "--quiet")
    assert done.returncode == 0, done.stderr
    return folder, url


def test_index_and_ask_with_the_record_in_postgresql(built, sample_index, sample_docs):
    folder, url = built
    asked = kgrag("ask", QUESTION, "--index-dir", folder, "--record", url)
    assert asked.returncode == 0, asked.stderr
    assert "answer: Selva" in asked.stdout
    index = KnowledgeIndex.open(load_settings(environ={}, index_dir=folder, record=url))
    try:
        assert index.store.shared.count("documents") == len(sample_docs)  # the record is in PostgreSQL ...
        assert index.store.scalar("SELECT COUNT(*) FROM extractions") == 0  # ... not in the local file
        assert index.store.content_dump() == sample_index.store.content_dump()  # derived as from index.sqlite
        where = json.loads((folder / "manifest.json").read_text())["record"]
        assert where == url.replace("postgres@", "")  # the server and database, no user or password
    finally:
        index.close()


def test_the_index_directory_says_where_its_record_is(built):
    folder, _ = built
    asked = kgrag("ask", QUESTION, "--index-dir", folder)  # the record setting forgotten
    assert asked.returncode != 0
    assert asked.stderr.count("\n") == 1 and "keeps its record in postgresql://" in asked.stderr


def test_a_second_driver_on_the_same_record_is_refused_with_one_line(postgres_database, tmp_path):
    from graph_store.store.postgres import PostgresRecord

    writing = PostgresRecord(postgres_database)  # another driver, on another machine, writing this record
    try:
        assert writing.try_lock_writer()
        env = {**os.environ, "KGRAG_WRITE_LOCK_TIMEOUT": "0.5"}
        second = kgrag("index", EXAMPLES, "--index-dir", tmp_path / "idx", "--record", postgres_database, env=env)
        assert second.returncode != 0
        assert second.stderr.count("\n") == 1 and "another process is writing this index" in second.stderr
        assert writing.count("documents") == 0  # it wrote nothing
    finally:
        writing.close()  # the first driver ends: the next one builds
    again = kgrag("index", EXAMPLES, "--index-dir", tmp_path / "idx", "--record", postgres_database, "--quiet")
    assert again.returncode == 0, again.stderr


def test_the_derived_tables_file_deleted_is_said_then_derived_again(built, postgres_server, sample_index, tmp_path):
    folder, url = built
    url = clone_index(folder, url.rsplit("/", 1)[1], postgres_server, tmp_path / "idx")
    where = ("--index-dir", tmp_path / "idx", "--record", url)
    (tmp_path / "idx" / "index.sqlite").unlink()  # only derived tables: the record is in PostgreSQL
    stats = kgrag("stats", *where)
    assert stats.returncode == 2 and stats.stderr.count("\n") == 1 and "derives them again" in stats.stderr
    done = kgrag("index", *where, "--quiet")
    assert done.returncode == 0, done.stderr
    again = KnowledgeIndex.open(load_settings(environ={}, index_dir=tmp_path / "idx", record=url))
    try:
        assert again.store.content_dump() == sample_index.store.content_dump()  # the record unchanged: rebuilt
    finally:
        again.close()


def test_check_finds_a_row_changed_in_postgresql_and_repair_refers_to_its_backups(built):
    """Last in this file: it edits the module's record, and puts the row back."""
    import psycopg

    folder, url = built
    where = ("--index-dir", folder, "--record", url)
    intact = kgrag("check", *where)
    assert intact.returncode == 0 and intact.stdout.startswith("ok:"), intact.stdout + intact.stderr
    with psycopg.connect(url, autocommit=True) as db:
        chunk_id, text = db.execute("SELECT id, text FROM chunks ORDER BY id LIMIT 1").fetchone()
        db.execute("UPDATE chunks SET text = %s WHERE id = %s", (text + " (edited)", chunk_id))
        try:
            found = kgrag("check", *where)
            assert found.returncode == 1 and "does not match its digest" in found.stdout, found.stdout
            assert "restore the record from a backup of its database" in found.stdout
            repaired = kgrag("repair", "--salvage", *where)
            assert repaired.returncode != 0 and repaired.stderr.count("\n") == 1
            assert "backup of its database" in repaired.stderr and "postgres@" not in repaired.stderr
        finally:
            db.execute("UPDATE chunks SET text = %s WHERE id = %s", (text, chunk_id))


def test_a_record_server_that_cannot_be_reached_is_one_line_without_its_password(tmp_path):
    from tests.helpers import free_port

    url = f"postgresql://kg:secret-pw@127.0.0.1:{free_port()}/kg"  # nothing listens there (no server needed)
    out = kgrag("index", EXAMPLES, "--index-dir", tmp_path / "idx", "--record", url, "--quiet")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "cannot use the record at postgresql://***@127.0.0.1" in out.stderr and "secret-pw" not in out.stderr
