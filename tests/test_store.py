"""The record behind its interface, on SQLite and on PostgreSQL (a server the tests start; skipped, saying why, when
none can be): jobs, documents, extractions, decisions, meta, the source state and the single writer's lock."""

import time

import pytest

from graph_store.store import (
    STORE_ERRORS,
    ChunkRow,
    Community,
    Decision,
    DocumentRow,
    Entity,
    ExtractionRow,
    Job,
    Report,
    Store,
)

BACKENDS = ["sqlite", "postgresql"]
# PostgreSQL's cases are door tests (a server started on 127.0.0.1), run by `make test`'s second half.
ON_BOTH = [BACKENDS[0], pytest.param(BACKENDS[1], marks=pytest.mark.door)]


def open_record(backend, request, tmp_path):
    if backend == "sqlite":
        return Store(tmp_path / "index.sqlite")
    from graph_store.store.postgres import PostgresRecord

    return PostgresRecord(request.getfixturevalue("postgres_database"))


@pytest.fixture(params=ON_BOTH)
def store(request, tmp_path):
    store = open_record(request.param, request, tmp_path)
    yield store
    store.close()


def _duplicate_errors():
    import psycopg

    return (*STORE_ERRORS, psycopg.IntegrityError)


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
    with pytest.raises(_duplicate_errors()):  # ids are unique
        store.create_job(Job("j1", "kgrag", "alice", "add"))
    assert len(store.unfinished_jobs()) == 1


def test_a_jobs_change_and_its_start_are_one_transaction(store):
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


def test_the_stores_implement_the_interfaces():
    import inspect

    from graph_store.store import GraphTables, Record
    from graph_store.store.postgres import PostgresRecord, SharedRecordStore

    for store, interfaces in (
        (Store, (Record, GraphTables)),  # GraphTables includes GraphReader
        (PostgresRecord, (Record,)),
        (SharedRecordStore, (Record, GraphTables)),
    ):
        for interface in interfaces:
            for name, declared in inspect.getmembers(interface, inspect.isfunction):
                if name.startswith("_"):
                    continue
                assert hasattr(store, name), f"{store.__name__} lacks {interface.__name__}.{name}"
                assert inspect.signature(getattr(store, name)) == inspect.signature(declared), name
                assert declared.__doc__, f"{interface.__name__}.{name} has no docstring"


# --- the same record on both backends -----------------------------------------------------------------------

DOCS = [
    (DocumentRow("d2", "Beta", "b.txt", "h2"), [ChunkRow("d2:0", "d2", 0, "Beta text.", 2)]),
    (
        DocumentRow("d1", "alpha", "a.txt", "h1"),
        [ChunkRow("d1:0", "d1", 0, "Alpha one.", 2), ChunkRow("d1:1", "d1", 1, "Alpha two.", 2)],
    ),
    (DocumentRow("d3", "Gamma", "c.txt", "h3"), [ChunkRow("d3:0", "d3", 0, "Gamma text.", 2)]),
]


def _play(store) -> dict:
    """One history of a record, and everything its interface then reads."""
    store.add_documents(DOCS)
    store.add_documents([(DocumentRow("d1", "alpha", "a.txt", "h1b"), [ChunkRow("d1:0", "d1", 0, "Alpha new.", 2)])])
    store.save_extractions(
        [
            ExtractionRow("d1:0", "offline-regex", "ok", None, '{"entities": []}', "p1"),
            ExtractionRow("d2:0", "offline-regex", "failed", "timeout: slow", "{}", "p2"),
            ExtractionRow("d3:0", "offline-regex", "ok", None, '{"entities": [1]}', "p3"),
        ]
    )
    store.save_extractions([ExtractionRow("d3:0", "llm:m", "ok", None, '{"entities": [2]}', "p4")])  # replaces
    store.delete_documents(["d3"])
    store.set_meta("k", "v1")
    store.set_meta("k", "v2")
    store.create_job(Job("decide", "kgrag", "ann", "decide", created=1.0))
    store.create_job(Job("undo", "kgrag", "ann", "undo", created=2.0))
    merge, reject = store.add_decisions(
        [Decision("merge", "HI", "Halvard Instruments", "ann", "acronym", created=1.0), Decision("reject", "a", "b")],
        job=("decide", {}),
    )
    undone = store.undo_decision(job=("undo", {}))  # the latest in force: the reject
    return {
        "hashes": store.document_hashes(),
        "documents": store.documents(),
        "sources": store.document_sources(),
        "titles": store.document_titles(),
        "chunks": sorted(store.chunks()),
        "chunks_with_titles": sorted(store.chunks_with_titles()),
        "pending": store.pending_deletes(),
        "to_extract": store.chunks_to_extract(),
        "to_reextract": store.chunks_to_extract("llm:m"),
        "ok": store.successful_extractions(),
        "failed": store.failed_chunks(),
        "extractors": store.extractor_counts(),
        "meta": (store.get_meta("k"), store.get_meta("missing")),
        "decisions": [(d.verdict, d.a, d.b, d.who, d.why) for d in store.decisions(in_force=False)],
        "in_force": [d.id for d in store.decisions()] == [merge.id] and undone.id == reject.id,
        "decision_jobs": [
            (j.status, j.detail) for j in (store.get_job("decide"), store.get_job("undo"))
        ],  # started with their change
        "counts": [store.count(t) for t in ("documents", "chunks", "extractions")],
        "state": store.source_state(5),
        "check": store.check(),
    }


@pytest.mark.door
def test_both_backends_keep_the_same_record(request, tmp_path):
    played = {}
    for backend in BACKENDS:
        store = open_record(backend, request, tmp_path)
        try:
            played[backend] = _play(store)
        finally:
            store.close()
    sqlite, postgresql = played["sqlite"], played["postgresql"]
    assert sqlite["documents"] == [("d2", "Beta", "b.txt"), ("d1", "alpha", "a.txt")]  # byte order: B before a
    assert sqlite["pending"] == {"d3"} and sqlite["to_extract"] == [("d2:0", "Beta text.", "Beta")]
    assert sqlite["in_force"] and sqlite["check"] == [] and sqlite["meta"] == ("v2", None)
    assert sqlite["decision_jobs"] == [("running", {"decision_ids": [1, 2]}), ("running", {"undone": 2})]
    assert postgresql == sqlite


def test_one_writer_at_a_time_until_it_lets_go_or_dies(store, request, tmp_path):
    other = open_record(request.node.callspec.params["store"], request, tmp_path)  # the same record, reopened
    try:
        assert store.try_lock_writer() and store.try_lock_writer()  # held (asking again changes nothing)
        assert not other.try_lock_writer()
        store.unlock_writer()
        assert other.try_lock_writer() and not store.try_lock_writer()
        other.close()  # what a process's end does: its lock goes with it (PostgreSQL's as its session ends)
        deadline = time.monotonic() + 10
        while not store.try_lock_writer():
            assert time.monotonic() < deadline, "the lock outlived its holder"
            time.sleep(0.01)
    finally:
        other.close()


@pytest.mark.door
def test_postgresql_workers_write_while_another_transaction_is_open(postgres_database):
    """Row-level locking: a worker records a job and a document while another's transaction holds rows it wrote
    (SQLite's writer would wait for the whole file)."""
    import psycopg

    from graph_store.store.postgres import PostgresRecord

    worker = PostgresRecord(postgres_database)
    try:
        worker.rows("SELECT set_config('lock_timeout', '2s', false)")  # blocked at all: an error, not a wait
        with psycopg.connect(postgres_database) as other:  # a transaction, left open while the worker writes
            other.execute("INSERT INTO documents VALUES ('d1', 'One', 'a.txt', 'h1', '')")
            worker.create_job(Job("j1", "kgrag", "alice", "add"))
            worker.add_documents([(DocumentRow("d2", "Two", "b.txt", "h2"), [ChunkRow("d2:0", "d2", 0, "Two.", 1)])])
            assert set(worker.document_hashes()) == {"d2"}  # the open transaction's row is not seen yet
            other.commit()
        assert set(worker.document_hashes()) == {"d1", "d2"} and [j.id for j in worker.unfinished_jobs()] == ["j1"]
    finally:
        worker.close()


@pytest.mark.door
def test_a_postgresql_connection_lost_is_the_users_one_line(postgres_database):
    import psycopg

    from graph_store.errors import UnavailableError
    from graph_store.store.postgres import PostgresRecord

    record = PostgresRecord(postgres_database)
    try:
        pid = record.scalar("SELECT pg_backend_pid()")
        with psycopg.connect(postgres_database, autocommit=True) as admin:  # the server ends the session
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(UnavailableError, match=r"^cannot use the record at postgresql://\*\*\*@127.0.0.1") as lost:
            record.add_documents([(DocumentRow("d1", "One", "a.txt", "h1"), [])])
        assert "\n" not in str(lost.value)
    finally:
        record.close()


def test_sources_of_some_documents_are_read_alone(store):
    """A question's citations read the sources of the documents they cite, not every document's (100k rows an answer
    on a 100k-passage index)."""
    store.add_documents(DOCS)
    assert store.document_sources(["d2", "d3", "missing"]) == {"d2": "b.txt", "d3": "c.txt"}
    assert store.document_sources([]) == {}
    assert store.document_sources() == {"d1": "a.txt", "d2": "b.txt", "d3": "c.txt"}


def _communities_index(tmp_path, others: int) -> Store:
    """Community c0 (three entities, one child with a report) beside ``others`` communities like it."""
    store = Store(tmp_path / f"index-{others}.sqlite")
    groups = range(others + 1)
    store.add_documents(
        (
            DocumentRow(f"d{g}", f"D{g}", f"{g}.txt", f"h{g}"),
            [ChunkRow(f"d{g}:{i}", f"d{g}", i, f"text {i}", 2) for i in (0, 1)],
        )
        for g in groups
    )
    members = {g: [f"e{g}{x}" for x in "abc"] for g in groups}
    # chunk 1 mentions every member, chunk 0 only the first: chunk 1 is the central passage
    mentions = sorted((e, f"d{g}:1") for g in groups for e in members[g]) + [(f"e{g}a", f"d{g}:0") for g in groups]
    entities = [Entity(e, e.upper(), "person", "", 1) for g in groups for e in members[g]]
    store.replace_graph_tables(sorted(entities), sorted(mentions), [], [], [])
    store.replace_communities(
        [(Community(f"c{g}", 0, None, 3), members[g]) for g in groups]
        + [(Community(f"k{g}", 1, f"c{g}", 3), members[g]) for g in groups]
    )
    for g in groups:
        store.save_report(Report(f"k{g}", "t", f"summary of k{g}", "[]", 1.0, "t", "offline"))
    return store


def test_the_reads_of_a_report_do_not_grow_with_the_rest_of_the_index(tmp_path):
    """What a community's report is written from is read through indexes: the work (SQLite's virtual machine steps)
    is its own members' and children's, whatever the number of other communities (a scan of every community per
    report made the report stage grow with the square of the index)."""
    from graph_store.communities import _context

    def steps(store: Store) -> int:
        count = [0]

        def tick() -> int:
            count[0] += 1
            return 0

        store._db.set_progress_handler(tick, 1)
        context = _context(store, "c0", 0)
        store._db.set_progress_handler(None, 1)
        assert context.child_summaries == ["summary of k0"]
        assert context.chunk_excerpt == "text 1"  # the passage mentioning most members
        assert [name for name, _, _ in context.entities] == ["E0A", "E0B", "E0C"]
        return count[0]

    small, large = _communities_index(tmp_path, 4), _communities_index(tmp_path, 400)
    assert steps(large) < 1.2 * steps(small)
