import json
import os
import signal
import subprocess
import sys
import time

import igraph as ig
import numpy as np
import pytest

from graph_store.communities import hierarchical_leiden
from graph_store.documents import Document, chunk_document, load_documents
from graph_store.errors import IndexStoreError, InputError
from graph_store.extraction import LLMExtractor
from graph_store.graph import (
    document_subjects,
    normalize_name,
    synonym_pairs,
    title_mentions,
    updated_synonym_pairs,
)
from graph_store.llm import ChatClient, LLMCache
from tests.conftest import EXAMPLES, ROOT, vector_ids
from tests.helpers import ScriptedChatModel


def test_chunking_windows_overlap_and_cover_the_text():
    doc = Document(text=" ".join(f"word{i}" for i in range(400)), title="t")
    chunks = chunk_document(doc, chunk_tokens=100, overlap=20)
    assert len(chunks) > 3 and all(c.n_tokens <= 100 for c in chunks)
    assert chunks[0].text.startswith("word0") and chunks[-1].text.endswith("word399")
    assert chunks[1].text.split()[0] in chunks[0].text  # overlap


def test_chunks_neither_end_nor_start_inside_a_word():
    # long names are several wordpieces: a window cut by token count alone ended "started Carl" for "Carlmar"
    words = [f"Carlmarsson{i}" if i % 7 == 0 else f"w{i}" for i in range(600)]
    doc = Document(text=" ".join(words), title="t")
    chunks = chunk_document(doc, chunk_tokens=50, overlap=10)
    assert len(chunks) > 5 and all(c.n_tokens <= 50 for c in chunks)
    for chunk in chunks:
        assert chunk.text.split()[0] in words and chunk.text.split()[-1] in words
    assert chunks[-1].text.endswith("w599") and " ".join(words).startswith(chunks[0].text)


def test_entity_names_resolve_to_one_key():
    assert normalize_name("The University of Kessel") == normalize_name("university  of Kessel.")
    assert normalize_name("São Paulo") == normalize_name("Sao Paulo")
    assert normalize_name("Halvard's") == normalize_name("Halvard")


def test_index_merges_entities_across_chunks(make_index, sample_docs):
    index = make_index()
    summary = index.add_documents(sample_docs)
    assert summary.added == len(sample_docs) and summary.refreshed
    name, n_chunks = index.store.rows("SELECT name, n_chunks FROM entities WHERE id = 'edda morlund'")[0]
    assert name == "Edda Morlund" and n_chunks >= 4
    # every entity has a source, every fact has its entities
    assert index.store.scalar("SELECT COUNT(*) FROM entities WHERE id NOT IN (SELECT entity_id FROM mentions)") == 0
    assert (
        index.store.scalar(
            "SELECT COUNT(*) FROM facts WHERE subject_id NOT IN (SELECT id FROM entities) OR object_id NOT IN (SELECT id FROM entities)"
        )
        == 0
    )
    stats = index.stats()
    assert stats["vectors"] == {
        "chunks": stats["chunks"],
        "entities": stats["entities"],
        "facts": stats["facts"],
        "reports": stats["reports"],
    }
    graph = index.graph()
    assert graph.adjacency.shape[0] == stats["entities"] + stats["chunks"]
    assert (graph.adjacency != graph.adjacency.T).nnz == 0


def test_chunks_link_to_the_documents_they_name():
    assert document_subjects("Lilu (mythology)") == ["Lilu"]
    assert document_subjects("Young, New South Wales") == ["Young, New South Wales", "Young"]
    assert document_subjects("Alexander and the Terrible, Horrible, No Good, Very Bad Day") == [
        "Alexander and the Terrible, Horrible, No Good, Very Bad Day"
    ]
    titles = {
        "a": "M. Ward",
        "b": "Young, New South Wales",
        "c": "Two Dollar Radio",
        "d": "Lilu (mythology)",
        "e": "Notes",
    }
    chunks = [
        ("e1", "e", "An album by singer-songwriter M. Ward, published by Two Dollar Radio."),
        ("e2", "e", "She was born in Young, a town. Neil Young sang. The two dollar radio was cheap."),
        ("e3", "e", "Lilu appears in Sumerian texts; Lilus do not."),
    ]
    found = title_mentions(titles, chunks)
    assert found == {
        ("Notes", "e1"),
        ("M. Ward", "e1"),
        ("Two Dollar Radio", "e1"),
        ("Notes", "e2"),
        ("Young", "e2"),  # not "Young" inside "Neil Young", not lower case
        ("Notes", "e3"),
        ("Lilu", "e3"),
    }


def test_a_writer_opens_chroma_again_only_when_another_writer_has_held_the_lock_since(make_index, sample_docs):
    """Embedded Chroma shows a process what was there when it opened it: a writer opens it again once another writer
    (another process, or one killed right after an upsert) has held the write lock since, and keeps it otherwise
    (opening a large collection takes seconds)."""
    first = make_index()
    first.add_documents(sample_docs[:2])
    opened = first.vectors
    first.add_documents(sample_docs[2:3])
    assert first.vectors is opened  # nobody else has written
    make_index().add_documents(sample_docs[3:4])  # another writer of the same folder
    first.add_documents(sample_docs[4:5])
    assert first.vectors is not opened
    assert vector_ids(first) == vector_ids(make_index())  # and what it wrote is in Chroma with the other's


def test_title_links_do_not_slow_down_with_the_names_sharing_a_first_word():
    """A word that starts titles is tried against the few lengths of those titles, not against each of them: a corpus
    where thousands of people share a first name linked its passages in time growing with the square of its size."""
    text = "Vera Name0001 met Vera. " + "Then Vera left. " * 1000
    crowded = {f"d{i}": f"Vera Name{i:04d}" for i in range(2000)}  # 2,000 names start with "Vera"

    def cpu_seconds(chunk_text: str) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            found = title_mentions(crowded, [("c", "x", chunk_text)])
            best = min(best, time.process_time() - start)
        assert ("Vera Name0001", "c") in found
        return best

    # the same number of words, with "Vera" (2,000 titles start with it) or "Anna" (none does)
    assert cpu_seconds(text) < 3 * cpu_seconds(text.replace("Vera left", "Anna left"))


def test_synonym_pairs_are_thresholded_nearest_neighbours():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(5, 16))
    vectors = np.vstack([base, base[:2] + 0.05 * rng.normal(size=(2, 16))])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"e{i}" for i in range(7)]
    pairs = synonym_pairs(ids, vectors.astype(np.float32), threshold=0.9, top_k=2, block=3)
    assert {(a, b) for a, b, _ in pairs} == {("e0", "e5"), ("e1", "e6")}


def _clustered(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n // 15, 12))
    vectors = centres[rng.integers(0, len(centres), n)] + 0.25 * rng.normal(size=(n, 12))  # many near neighbours
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def test_synonym_pairs_above_exact_max_come_from_an_hnsw_graph(monkeypatch):
    """Above ``exact_max`` entities no block of all-pairs products is computed (it grows with the square of the
    entities); the graph's neighbours give the pairs of the exact search, up to the few it misses."""
    from graph_store import graph

    vectors = _clustered(3000)
    ids = [f"e{i:04d}" for i in range(len(vectors))]
    exact = set(synonym_pairs(ids, vectors, threshold=0.8, top_k=3))
    monkeypatch.setattr(graph, "_blocked_candidates", lambda *a: pytest.fail("all pairs compared"))
    approximate = set(synonym_pairs(ids, vectors, threshold=0.8, top_k=3, exact_max=2999))
    assert len(exact) > 3000
    assert len(exact & approximate) / len(exact | approximate) > 0.98


def test_the_build_takes_synonymy_from_the_graph_above_synonymy_exact_max(make_index, sample_docs, monkeypatch):
    from graph_store import graph

    exact = make_index("exact")
    exact.add_documents(sample_docs)
    monkeypatch.setattr(graph, "_blocked_candidates", lambda *a: pytest.fail("all pairs compared"))
    index = make_index(synonymy_exact_max=0)
    index.add_documents(sample_docs)
    assert index.stats()["synonyms"] == exact.stats()["synonyms"] > 0


@pytest.mark.parametrize("seed", range(6))
def test_synonym_pairs_updated_for_changed_entities_equal_a_full_computation(seed):
    """Entities removed (merged away), added (split off) and with a new vector: the update ranks only those near
    them again and gives exactly the pairs of a computation over every entity."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, 12))
    vectors = centres[rng.integers(0, 40, 600)] + 0.25 * rng.normal(size=(600, 12))  # many near neighbours
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    ids = [f"e{i:04d}" for i in range(600)]
    before_ids, before = ids[:560], vectors[:560]
    pairs = synonym_pairs(before_ids, before, threshold=0.8, top_k=3)
    keep = sorted(set(range(560)) - set(rng.choice(560, 15, replace=False).tolist())) + list(range(560, 575))
    after_ids, after = [ids[i] for i in keep], vectors[keep].copy()
    after[rng.choice(len(keep), 4, replace=False)] = vectors[rng.choice(600, 4)]  # moved: another one's vector
    expected = synonym_pairs(after_ids, after, threshold=0.8, top_k=3)
    updated = updated_synonym_pairs((before_ids, before), pairs, (after_ids, after), 0.8, 3, max_ranked=1.0)
    assert updated == expected and len(expected) > 500
    assert updated_synonym_pairs((before_ids, before), pairs, (after_ids, after), 0.8, 3, max_ranked=0.01) is None


def test_synonymy_edges_from_real_embeddings(make_index):
    index = make_index()
    index.add_documents(
        [
            Document(title="a", text="Halvard Instruments makes barometers in Vessby."),
            Document(title="b", text="The barometers of Halvard Instruments Company are sold in Kessel."),
        ]
    )
    pairs = index.store.rows("SELECT source_id, target_id FROM synonyms")
    assert ("halvard instruments", "halvard instruments company") in pairs


def test_planted_clusters_are_recovered_with_a_hierarchy():
    clusters_in = [list(range(i * 8, i * 8 + 8)) for i in range(4)]
    edges = [(a, b) for c in clusters_in for i, a in enumerate(c) for b in c[i + 1 :]]
    edges += [(7, 8), (15, 16), (23, 24)]  # one bridge between neighbours
    graph = ig.Graph(n=32, edges=edges)
    graph.es["weight"] = [1.0] * len(edges)
    flat = hierarchical_leiden(graph, max_cluster_size=100, seed=1)
    assert sorted(c.members for c in flat) == clusters_in
    # two planted super-clusters of two clusters each, split one level down
    super_edges = (
        edges
        + [(a, b) for a in range(0, 8) for b in range(8, 16) if (a + b) % 3 == 0]
        + [(a, b) for a in range(16, 24) for b in range(24, 32) if (a + b) % 3 == 0]
    )
    graph2 = ig.Graph(n=32, edges=super_edges)
    graph2.es["weight"] = [1.0] * len(super_edges)
    tree = hierarchical_leiden(graph2, max_cluster_size=10, seed=1)
    top = [c for c in tree if c.level == 0]
    leaves = sorted(c.members for c in tree if c.level == 1)
    assert sorted(c.members for c in top) == [list(range(0, 16)), list(range(16, 32))]
    assert leaves == clusters_in
    for child in (c for c in tree if c.level == 1):
        assert set(child.members) <= set(tree[child.parent].members)


def test_incremental_add_equals_full_rebuild(make_index, sample_docs):
    full = make_index("full")
    full.add_documents(sample_docs)
    step = make_index("step")
    step.add_documents(sample_docs[:10])
    step.add_documents(sample_docs[5:20])  # overlapping: the repeats are no-ops
    summary = step.add_documents(sample_docs)
    assert summary.unchanged == 20 and summary.added == len(sample_docs) - 20
    assert step.store.content_dump() == full.store.content_dump()
    assert vector_ids(step) == vector_ids(full)
    again = step.add_documents(sample_docs)
    assert again.added == 0 and not again.refreshed


def test_delete_leaves_no_orphans(make_index, sample_docs):
    target = next(d for d in sample_docs if d.title == "Comet Keldor-Vey")
    rest = [d for d in sample_docs if d.id != target.id]
    index = make_index("all")
    index.add_documents(sample_docs)
    only_there = "long-period comet"  # a phrase of that document alone
    assert index.store.scalar("SELECT COUNT(*) FROM facts WHERE description LIKE ?", (f"%{only_there}%",)) > 0
    index.delete_documents([target.id])
    assert index.store.scalar("SELECT COUNT(*) FROM facts WHERE description LIKE ?", (f"%{only_there}%",)) == 0
    reference = make_index("rest")
    reference.add_documents(rest)
    assert index.store.content_dump() == reference.store.content_dump()
    assert vector_ids(index) == vector_ids(reference)
    with pytest.raises(InputError, match="no document with id"):
        index.delete_documents(["nope"])


def test_an_index_derived_by_an_older_version_is_refreshed(make_index, monkeypatch):
    index = make_index("old")
    index.add_documents([Document(title="Kessel", text="Kessel is the capital of Ostmark.")])
    monkeypatch.setattr("graph_store.store.DERIVATION_VERSION", 99)  # as if kgrag were upgraded
    upgraded = make_index("old")
    with pytest.raises(IndexStoreError, match="older"):
        upgraded.graph()
    assert upgraded.refresh().refreshed
    assert upgraded.graph().n_entities == 2 and not upgraded.refresh().refreshed


def test_replaced_document_keeps_id_and_updates_content(make_index):
    index = make_index()
    index.add_documents([Document(id="d1", title="t", text="Anna Berg lives in Tarnholm.")])
    summary = index.add_documents([Document(id="d1", title="t", text="Anna Berg lives in Kessel.")])
    assert summary.replaced == 1
    assert index.store.scalar("SELECT COUNT(*) FROM entities WHERE id = 'tarnholm'") == 0
    assert index.store.scalar("SELECT COUNT(*) FROM entities WHERE id = 'kessel'") == 1


def test_different_embedding_settings_are_refused(make_index, tmp_path):
    make_index("x").add_documents([Document(text="Some text about Kessel.", title="k")])
    from graph_store.index import KnowledgeIndex
    from graph_store.settings import load_settings

    settings = load_settings(
        environ={},
        index_dir=tmp_path / "x",
        embedding_provider="openai",
        embedding_model="text-embedding-3-small",
        embedding_base_url="http://127.0.0.1:9",
    )
    with pytest.raises(IndexStoreError, match="built with embeddings"):
        KnowledgeIndex(settings, progress=False)
    with pytest.raises(IndexStoreError, match="chunked with"):
        make_index("x", chunk_tokens=100)


def test_llm_extraction_path_with_failures_reported_and_cached(make_index, tmp_path):
    def respond(messages):
        text = messages[0].content
        if "Unparsable" in text:
            return "I refuse to answer in JSON."
        if "Kessel" in text:
            return (
                '```json\n{"entities": [{"name": "Kessel", "type": "location", "description": "a capital"}],'
                ' "relations": [{"subject": "Kessel", "predicate": "capital of", "object": "Ostmark"}]}\n```'
            )
        return '{"title": "Ostmark capital", "summary": "Kessel and Ostmark.", "rating": 7, "findings": []}'

    docs = [
        Document(title="Kessel", text="Kessel is the capital of Ostmark."),
        Document(title="Unparsable", text="Unparsable chunk."),
    ]
    model = ScriptedChatModel(responder=respond, cache=LLMCache(tmp_path / "cache.sqlite"))
    chat = ChatClient(model)
    index = make_index("llm", chat=chat, extractor=LLMExtractor(chat))
    summary = index.add_documents(docs)
    assert summary.stats["failed_chunks"] == 1 and "could not be extracted" in summary.format()
    # Titles are entities too, so the failed chunk stays reachable through its document's title.
    assert index.store.rows("SELECT name, type FROM entities ORDER BY id") == [
        ("Kessel", "location"),
        ("Ostmark", "unknown"),
        ("Unparsable", "unknown"),
    ]
    calls = len(model.calls)
    # a fresh index over the same cache pays for no call
    again = make_index("llm2", chat=chat, extractor=LLMExtractor(chat))
    again.add_documents(docs)
    assert len(model.calls) == calls


# --- bad inputs -------------------------------------------------------------------------------


def test_bad_inputs_get_clear_messages_and_lose_nothing(make_index, sample_docs, tmp_path):
    index = make_index()
    index.add_documents(sample_docs[:5])
    before = index.store.content_dump()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "empty.txt").write_text("")
    (bad / "binary.txt").write_bytes(b"\x00\x01\x02binary")
    (bad / "latin1.txt").write_bytes("Caf\xe9 in Kessel".encode("latin-1"))
    (bad / "image.png").write_bytes(b"\x89PNG")
    for name, message in [("empty.txt", "is empty"), ("binary.txt", "binary"), ("latin1.txt", "not valid UTF-8")]:
        with pytest.raises(InputError, match=message):
            load_documents(bad / name)
    with pytest.raises(InputError, match="no such file"):
        index.add_path(tmp_path / "missing")
    with pytest.raises(InputError, match="no documents found"):
        index.add_path(bad)  # every file in it is bad: each reason is listed
    assert index.store.content_dump() == before
    (bad / "good.md").write_text("# Good\nThe Selva flows through Ludvik.")
    summary = index.add_path(bad)
    assert summary.added == 1 and sum("skipped" in n for n in summary.notices) == 4


def test_duplicate_titles_a_huge_line_and_a_bad_record(make_index, tmp_path):
    corpus = tmp_path / "c.jsonl"
    huge = "Kessel lies on the Amsel. " * 200_000  # about 5 MB on one line
    lines = [
        {"title": "Same", "text": "Anna Berg lives in Kessel."},
        {"title": "Same", "text": "Ivo Lund lives in Hallin."},
        {"title": "Huge", "text": huge},
        {"title": "No text"},
    ]
    corpus.write_text("\n".join(json.dumps(x) for x in lines))
    index = make_index()
    summary = index.add_path(corpus)
    assert summary.added == 2 and index.stats()["documents"] == 2
    notes = "\n".join(summary.notices)
    assert "share the title 'Same'" in notes
    assert "5,200,000 characters, over the limit" in notes and "#4: record has no 'text'" in notes
    # raising the limit indexes it (chunked like any other document)
    docs = load_documents(corpus)
    big = next(d for d in docs if d.title == "Huge")
    assert len(chunk_document(big, 240, 40)) > 4000


def test_same_id_for_different_texts_in_one_batch_is_refused(make_index):
    with pytest.raises(InputError, match="given to different texts"):
        make_index().add_documents([Document(id="a", text="one text"), Document(id="a", text="another")])


# --- crash safety -----------------------------------------------------------------------------


def _index_cmd(index_dir):
    return [sys.executable, "-m", "kgrag.cli", "index", str(EXAMPLES), "--index-dir", str(index_dir), "--quiet"]


def _count(db_path, sql):
    import sqlite3

    try:
        # read-only: polling must never create the file the indexer is about to create
        with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1) as db:
            return db.execute(sql).fetchone()[0]
    except sqlite3.Error:
        return 0  # not created yet, or mid-write


KILL_POINTS = {  # name -> condition on the index being built; the process is killed as soon as it holds
    "documents stored": "SELECT COUNT(*) FROM documents",
    "extraction under way": "SELECT COUNT(*) >= 10 FROM extractions",
    "vectors under way": "SELECT COUNT(*) FROM entities",
    "communities stored": "SELECT COUNT(*) FROM communities",
}


@pytest.mark.door
@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_kill_9_then_rerun_equals_uninterrupted(point, make_index, sample_index, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    target = tmp_path / "killed"
    proc = subprocess.Popen(_index_cmd(target), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while (
        proc.poll() is None and time.monotonic() < deadline and not _count(target / "index.sqlite", KILL_POINTS[point])
    ):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL, f"the indexer finished before the kill point {point!r}"
    done = subprocess.run(_index_cmd(target), cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    reference = sample_index  # the same corpus indexed without interruption
    rerun = make_index("killed")
    assert rerun.store.content_dump() == reference.store.content_dump()
    assert vector_ids(rerun) == vector_ids(reference)
    assert rerun.graph().adjacency.shape == reference.graph().adjacency.shape
