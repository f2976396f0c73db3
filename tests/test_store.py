"""The store's jobs: background requests kept in the record, so any worker can see and finish them."""

import pytest

from graph_store.store import STORE_ERRORS, Job, Store


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "index.sqlite")
    yield store
    store.close()


def test_a_job_is_created_updated_and_listed_until_it_finishes(store):
    made = store.create_job(Job("j1", "kgrag", "alice", "add", payload={"documents": 3}))
    assert made.status == "queued" and made.created > 0 and made.updated == made.created
    assert store.get_job("j1") == made
    store.create_job(Job("j2", "other", "bob", "delete", payload={"document": "d1"}, created=made.created + 1))
    assert [j.id for j in store.unfinished_jobs()] == ["j1", "j2"]  # oldest first
    assert [j.id for j in store.unfinished_jobs("other")] == ["j2"]

    store.update_job("j1", "running", {"progress": {"step": "extracting", "done": 1, "total": 3}})
    running = store.get_job("j1")
    assert running.status == "running" and running.detail["progress"]["done"] == 1
    assert running.payload == {"documents": 3} and running.updated >= made.updated
    store.update_job("j1", "done")  # the detail stays when none is given
    assert store.get_job("j1").detail["progress"]["total"] == 3
    store.update_job("j2", "failed", {"error": "no document with id d1"})
    assert store.unfinished_jobs() == []
    assert store.get_job("j2").detail == {"error": "no document with id d1"}


def test_unknown_and_repeated_jobs(store):
    assert store.get_job("nope") is None
    with pytest.raises(KeyError):
        store.update_job("nope", "done")
    store.create_job(Job("j1", "kgrag", "alice", "add"))
    with pytest.raises(STORE_ERRORS):  # ids are unique
        store.create_job(Job("j1", "kgrag", "alice", "add"))
    assert len(store.unfinished_jobs()) == 1


def test_a_jobs_change_and_its_start_are_one_transaction(store):
    from graph_store.store import ChunkRow, DocumentRow

    store.create_job(Job("j1", "kgrag", "alice", "add", payload={"documents": ["the text"]}))
    doc = (DocumentRow("d1", "Title", "api:d1", "h1"), [ChunkRow("c1", "d1", 0, "the text", 2)])
    store.add_documents([doc], job=("j1", {"added": 1}))
    applied = store.get_job("j1")
    assert (applied.status, applied.detail, applied.payload) == ("running", {"added": 1}, {})  # the record holds it
    with pytest.raises(KeyError):  # never applied twice: the documents are not written again either
        store.add_documents([(DocumentRow("d2", "T", "api:d2", "h2"), [])], job=("j1", {}))
    assert set(store.document_hashes()) == {"d1"}
    store.create_job(Job("j2", "kgrag", "alice", "delete", payload={"ids": ["d1"]}))
    store.delete_documents(["d1"], job=("j2", {"deleted": 1}))
    assert store.get_job("j2").status == "running" and store.document_hashes() == {}


def test_a_job_changes_only_from_the_status_asked_and_ends_without_its_payload(store):
    store.create_job(Job("j1", "kgrag", "alice", "add", payload={"documents": ["the text"]}))
    assert store.update_job("j1", "running", if_status="running") is False  # still queued
    assert store.update_job("j1", "failed", {"error": "busy"}, if_status="queued") is True
    failed = store.get_job("j1")
    assert failed.status == "failed" and failed.payload == {} and failed.detail == {"error": "busy"}


def test_jobs_survive_a_reopen_and_an_index_made_before_gets_the_table(tmp_path):
    path = tmp_path / "index.sqlite"
    old = Store(path)
    old.rows("DROP TABLE jobs")  # what an index made before the jobs table looks like
    old.close()
    reopened = Store(path)
    reopened.create_job(Job("j1", "kgrag", "alice", "add"))
    reopened.close()
    again = Store(path)
    assert [j.id for j in again.unfinished_jobs()] == ["j1"]
    again.close()


def test_the_sqlite_store_implements_the_interfaces():
    import inspect

    from graph_store.store import GraphTables, Record

    for interface in (Record, GraphTables):  # GraphTables includes GraphReader
        for name, declared in inspect.getmembers(interface, inspect.isfunction):
            if name.startswith("_"):
                continue
            assert hasattr(Store, name), f"Store lacks {interface.__name__}.{name}"
            assert inspect.signature(getattr(Store, name)) == inspect.signature(declared), name
            assert declared.__doc__, f"{interface.__name__}.{name} has no docstring"
