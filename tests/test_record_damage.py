"""Damage inside the system of record that SQLite's own check does not see (issue 23, item 4) and a lost manifest
(item 12): flipped bytes, text that is not UTF-8, an edited row. `kgrag check` finds it or the record is intact;
`kgrag repair` (`--salvage` when it asks for it) then `kgrag index PATH` ends equal to a clean build, and a salvage
names every document it could not recover whole. Over a six-document corpus, so that a seed costs a few seconds."""

import json
import random
import shutil
import sqlite3

import pytest

from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings
from graph_store.store.sqlite import connect_read_only, read_record
from kgrag.api import KGRag
from tests.conftest import EXAMPLES, vector_ids
from tests.test_faults import kgrag

# title -> a question only that document answers
QUESTIONS = {
    "Edda Morlund": "When was Edda Morlund born?",
    "Tarnholm": "Which river flows through Tarnholm?",
    "Halvard Instruments": "When did Halvard Instruments acquire Brask Optics?",
    "Orrin barometer": "Who designed the Orrin barometer?",
    "Ana Keldor": "Where was Ana Keldor born?",
    "Hallin": "What is Hallin known for?",
}
FILES = ("edda_morlund", "tarnholm", "halvard_instruments", "orrin_barometer", "ana_keldor", "hallin")
RECORD = ("documents", "chunks", "extractions", "reports")


def contents(folder):
    index = KnowledgeIndex(load_settings(environ={}, index_dir=folder), progress=False, create=False)
    try:
        return index.store.content_dump(), vector_ids(index)
    finally:
        index.close()


def answers(folder, titles) -> dict[str, str]:
    with KGRag(folder) as rag:
        return {t: rag.ask(QUESTIONS[t]).short_answer for t in titles}


def raw_rows(folder) -> dict[str, set[tuple]] | None:
    """The record's rows as bytes (None when the file cannot be read whole)."""
    try:
        with sqlite3.connect(f"file:{folder / 'index.sqlite'}?mode=ro", uri=True) as db:
            db.text_factory = bytes
            return {t: set(db.execute(f"SELECT * FROM {t}").fetchall()) for t in RECORD}
    except sqlite3.DatabaseError:
        return None


def documents_touched(clean_rows, rows) -> set[bytes]:
    """Ids of the documents whose own rows (the document or a chunk) differ from the clean build's."""
    if rows is None:
        return {r[0] for r in clean_rows["documents"]}
    changed = (clean_rows["documents"] ^ rows["documents"]) | (clean_rows["chunks"] ^ rows["chunks"])
    return {r[0] for r in changed if r in clean_rows["documents"]} | {
        r[1] for r in changed if r in clean_rows["chunks"]
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    for name in FILES:
        shutil.copy(EXAMPLES / f"{name}.md", folder)
    return folder


@pytest.fixture(scope="module")
def small(corpus, tmp_path_factory, embedder):
    """A clean build of the small corpus: its folder, contents, raw rows, titles by id, and answers."""
    folder = tmp_path_factory.mktemp("small") / "idx"
    index = KnowledgeIndex(load_settings(environ={}, index_dir=folder), embedder=embedder, progress=False)
    index.add_path(corpus)
    titles = {d.encode(): t for d, t, _ in index.store.documents()}
    index.close()
    return folder, contents(folder), raw_rows(folder), titles, answers(folder, QUESTIONS)


@pytest.fixture(autouse=True)
def warm_embedder(monkeypatch, embedder):
    """Every index opened here (the CLI's too) shares one loaded model: a cold one costs a second each time."""
    monkeypatch.setattr("graph_store.index.make_embedder", lambda settings: embedder)


@pytest.fixture
def copy(small, tmp_path):
    folder = tmp_path / "idx"
    shutil.copytree(small[0], folder)
    return folder


def flip(path, seed, n=6):
    """``n`` bytes of the file changed, reproducibly for a seed."""
    rng = random.Random(seed)
    data = bytearray(path.read_bytes())
    for _ in range(n):
        data[rng.randrange(len(data))] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(data))


def recover(folder, corpus, capsys) -> str:
    """The documented recovery: `kgrag repair`, with --salvage when it asks for it, then `kgrag index PATH`."""
    code, out, err = kgrag(capsys, "repair", "--index-dir", folder, "--quiet")
    if code != 0:
        assert code == 2 and "--salvage" in err, err
        code, out, err = kgrag(capsys, "repair", "--salvage", "--index-dir", folder, "--quiet")
        assert code == 0, err
    assert kgrag(capsys, "index", corpus, "--index-dir", folder, "--quiet")[0] == 0
    return out


@pytest.mark.parametrize("seed", range(24))
def test_flipped_bytes_are_found_or_harmless_and_recovery_equals_a_clean_build(seed, small, copy, corpus, capsys):
    clean_folder, clean_contents, clean_rows, titles, clean_answers = small
    flip(copy / "index.sqlite", seed)
    rows = raw_rows(copy)
    touched = documents_touched(clean_rows, rows)
    code, out, err = kgrag(capsys, "check", "--index-dir", copy)
    if code == 0:
        assert rows == clean_rows, "check says intact, but the record changed"
        return
    assert code == 1 and "Traceback" not in out + err
    said = recover(copy, corpus, capsys)
    for doc_id in touched:  # every document whose own rows changed was named by the salvage
        assert doc_id.decode(errors="replace") in said, f"{titles[doc_id]!r} was changed but not listed: {said}"
    assert kgrag(capsys, "check", "--index-dir", copy)[0] == 0
    assert contents(copy) == clean_contents
    asked = [titles[d] for d in touched] or ["Edda Morlund"]
    assert answers(copy, asked) == {t: clean_answers[t] for t in asked}


def edit(folder, sql):
    with sqlite3.connect(folder / "index.sqlite") as db:
        assert db.execute(sql).rowcount == 1


EDITS = {  # what SQLite's integrity check cannot see
    "chunk text not UTF-8": "UPDATE chunks SET text = CAST(X'45646461FF' || CAST(text AS BLOB) AS TEXT) WHERE text LIKE '%Edda Morlund (1889%'",
    "chunk text edited": "UPDATE chunks SET text = replace(text, '1889', '1921') WHERE text LIKE '%Edda Morlund (1889%'",
    "a chunk deleted": "DELETE FROM chunks WHERE text LIKE '%Edda Morlund (1889%'",
    "extraction edited": "UPDATE extractions SET payload = replace(payload, 'Tarnholm', 'Tarnhelm') "
    "WHERE chunk_id = (SELECT id FROM chunks WHERE text LIKE '%Edda Morlund (1889%')",
    "extraction not UTF-8": "UPDATE extractions SET payload = CAST(X'FFFE' || CAST(payload AS BLOB) AS TEXT) "
    "WHERE chunk_id = (SELECT id FROM chunks WHERE text LIKE '%Edda Morlund (1889%')",
    "report edited": "UPDATE reports SET summary = summary || '!' WHERE rowid = 1",
}


@pytest.mark.parametrize("change", list(EDITS))
def test_content_changed_under_its_digest_is_found_and_recovered(change, small, copy, corpus, capsys):
    clean_folder, clean_contents, _, _, clean_answers = small
    edit(copy, EDITS[change])
    code, out, err = kgrag(capsys, "check", "--index-dir", copy)
    assert code == 1 and "match" in out and "kgrag repair" in out, out
    # before the repair, commands fail with one line or work: never an internal error
    code, out, err = kgrag(capsys, "index", corpus, "--index-dir", copy, "--quiet")
    assert code == 0 or (code == 2 and "damaged" in err and err.count("\n") == 1), err
    said = recover(copy, corpus, capsys)
    if change.startswith(("chunk", "a chunk")):
        assert "could not be recovered whole" in said and "Edda Morlund (" in said
    assert kgrag(capsys, "check", "--index-dir", copy)[0] == 0
    assert contents(copy) == clean_contents
    assert answers(copy, ["Edda Morlund"]) == {"Edda Morlund": clean_answers["Edda Morlund"]}


def test_a_salvaged_document_is_remembered_until_indexed_again(small, copy, corpus, capsys):
    edit(copy, EDITS["chunk text edited"])
    code, out, err = kgrag(capsys, "repair", "--salvage", "--index-dir", copy, "--quiet")
    assert code == 0 and "Edda Morlund (" in out, err
    code, out, _ = kgrag(capsys, "check", "--index-dir", copy)
    assert code == 1 and "lost by a salvage, not indexed again: Edda Morlund" in out
    code, out, _ = kgrag(capsys, "index", corpus, "--index-dir", copy, "--quiet")
    assert code == 0 and "1 added, 0 replaced, 5 unchanged" in out
    assert kgrag(capsys, "check", "--index-dir", copy)[0] == 0


@pytest.mark.parametrize("damage", ["truncated", "deleted"])
def test_repair_rebuilds_a_lost_manifest_from_the_record(damage, small, copy, capsys):
    manifest = copy / "manifest.json"
    if damage == "truncated":
        manifest.write_bytes(manifest.read_bytes()[:40])
    else:
        manifest.unlink()
    code, out, _ = kgrag(capsys, "check", "--index-dir", copy)
    assert code == 1 and "manifest.json" in out and "kgrag repair" in out, out
    code, out, err = kgrag(capsys, "repair", "--index-dir", copy, "--quiet")
    assert code == 0 and "manifest.json rebuilt" in out, err
    assert json.loads(manifest.read_text()) == json.loads((small[0] / "manifest.json").read_text())
    assert kgrag(capsys, "check", "--index-dir", copy)[0] == 0
    assert contents(copy) == small[1]


@pytest.mark.parametrize("table", ["documents", "reports"])
def test_a_table_whose_pages_are_lost_is_read_through_its_index_not_probed_row_by_row(table, small, copy, monkeypatch):
    """Its largest rowid comes from its index, so only the rowids it ever had are tried: probing up to MOST_ROWS
    one by one took `kgrag check` minutes on a record of 200 KB."""
    db = sqlite3.connect(copy / "index.sqlite")
    (root,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    (page_size,) = db.execute("PRAGMA page_size").fetchone()
    clean_meta = db.execute("SELECT key, value FROM meta").fetchall()
    db.close()
    with open(copy / "index.sqlite", "r+b") as record:
        record.seek((root - 1) * page_size)
        record.write(bytes([0xA5]) * page_size)  # the table's root page: every row of it is out of reach
    statements = []

    def counted(path, **kwargs):
        connection = connect_read_only(path, **kwargs)
        connection.set_trace_callback(statements.append)
        return connection

    monkeypatch.setattr("graph_store.store.sqlite.connect_read_only", counted)
    content = read_record(copy / "index.sqlite")
    assert len(statements) < 2_000, len(statements)
    assert sorted(content.meta) == sorted(clean_meta)  # the other tables are read whole
