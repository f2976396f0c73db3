"""Static token vectors (StaticEmbedder): the embedder, its cache, and indexes built with it."""

import json

import numpy as np
import pytest

from graph_store.embeddings import StaticEmbedder, minilm_tokenizer, shared_static_embedder
from graph_store.errors import IndexStoreError
from graph_store.vectors import Exported
from tests.conftest import vector_ids


@pytest.fixture(scope="module")
def static():
    return shared_static_embedder()  # the machine's cached table (distilled on first use)


def test_static_vectors_are_deterministic_and_normalised(static):
    texts = ["Edda Morlund founded Halvard Instruments.", "Vessby", ""]
    first = static.embed(texts)
    again = StaticEmbedder().embed(texts)  # a fresh instance reads the same cached table
    assert first.shape == (3, 256) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(static.embed(texts[:1]), first[:1])  # batch-independent
    assert static.embed([]).shape == (0, 256)


@pytest.mark.parametrize(
    "anchor, similar, unrelated",
    [
        ("Halvard Instruments", "Halvard Instrument company", "Lake Orrin"),
        ("Ernest Hemingway", "Hemingway", "Pasta carbonara"),
        ("Edda Morlund was born in Vessby", "Where was Edda Morlund born?", "The opera premiered in 1958"),
        (
            "the film was directed by Oskar Brenn",
            "Which film did Oskar Brenn direct?",
            "Tarnholm lies on the Selva river",
        ),
    ],
)
def test_similar_names_and_facts_score_higher_than_unrelated(static, anchor, similar, unrelated):
    # (A question without the fact's names, "Who directed the film?", is where static vectors are weak:
    # rare name tokens weigh most. benchmarks/static_vectors.py measures what that costs.)
    a, b, c = static.embed([anchor, similar, unrelated])
    assert a @ b > a @ c + 0.1


def _fake_distill(calls):
    def distill(self):
        calls.append(1)
        rows = np.random.default_rng(len(calls)).standard_normal((minilm_tokenizer().get_vocab_size(), 256))
        return rows.astype(np.float32)

    return distill


def test_the_table_is_distilled_once_then_read_from_the_cache(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(StaticEmbedder, "distill", _fake_distill(calls))
    first = StaticEmbedder(cache=tmp_path).embed(["Kessel"])
    files = list(tmp_path.iterdir())
    assert calls == [1] and len(files) == 1 and files[0].name.startswith("minilm-static-")
    second = StaticEmbedder(cache=tmp_path).embed(["Kessel"])
    assert calls == [1]  # read, not distilled again
    np.testing.assert_array_equal(first, second)
    assert not [f for f in tmp_path.iterdir() if "tmp" in f.name]  # written atomically: no leftovers


@pytest.mark.parametrize("damage", ["garbage", "truncated", "bit flip", "wrong shape"])
def test_a_damaged_cache_is_rebuilt_not_trusted(tmp_path, monkeypatch, damage):
    calls = []
    monkeypatch.setattr(StaticEmbedder, "distill", _fake_distill(calls))
    path = StaticEmbedder(cache=tmp_path).cache_path()
    good = StaticEmbedder(cache=tmp_path).table().copy()
    if damage == "garbage":
        path.write_bytes(b"not a numpy file")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:1000])
    elif damage == "bit flip":
        with np.load(path) as data:
            table, digest = data["table"].copy(), data["sha256"]
        table[5, 7] += 1.0
        with open(path, "wb") as fh:
            np.savez(fh, table=table, sha256=digest)
    else:
        with open(path, "wb") as fh:
            np.savez(fh, table=good[:10], sha256=np.array("x"))
    rebuilt = StaticEmbedder(cache=tmp_path).table()
    assert calls == [1, 1]  # distilled again
    assert not np.array_equal(rebuilt, good)  # the fake gives a new table each time: this one is fresh
    np.testing.assert_array_equal(StaticEmbedder(cache=tmp_path).table(), rebuilt)  # and it was cached


def test_static_collections_live_in_the_export_and_the_manifest(make_index, sample_docs):
    index = make_index("static", static_vectors="entities,facts,reports")
    index.add_documents(sample_docs[:6])
    assert set(index.vectors.collections) == {"chunks"}  # only the model's vectors go to Chroma
    manifest = json.loads((index.dir / "manifest.json").read_text())
    assert sorted(manifest["static_vectors"]) == ["entities", "facts", "reports"]
    assert manifest["static_vectors"]["facts"]["provider"] == "minilm-static"
    stats = index.stats()
    assert stats["vectors"]["facts"] == stats["facts"] > 0
    with Exported(index.generation().dir) as data:
        facts = dict(zip(data.ids("facts").tolist(), data.matrix("facts")))
    text = dict(index.store.rows("SELECT id, text FROM facts"))
    some = sorted(facts)[:5]
    np.testing.assert_allclose(
        np.stack([facts[i] for i in some]), shared_static_embedder().embed([text[i] for i in some]), atol=1e-6
    )
    with pytest.raises(IndexStoreError, match="static vectors for entities, facts, reports"):
        make_index("static", static_vectors="none")
    make_index("plain", static_vectors="none").add_documents(sample_docs[:1])
    with pytest.raises(IndexStoreError, match="static vectors for no collection"):
        make_index("plain", static_vectors="entities,facts,reports")


def test_an_index_made_before_static_vectors_moves_to_them(make_index, sample_docs, monkeypatch):
    old = make_index("old", static_vectors="none")  # every collection in Chroma, as before
    old.add_documents(sample_docs[:4])
    manifest_path = old.dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["static_vectors"]  # what an older kgrag wrote
    manifest_path.write_text(json.dumps(manifest))
    monkeypatch.setattr("graph_store.store.DERIVATION_VERSION", 99)  # and derived
    upgraded = make_index("old", static_vectors="entities,facts")
    with pytest.raises(IndexStoreError, match="older"):
        upgraded.graph()
    assert upgraded.refresh().refreshed
    assert set(upgraded.vectors.collections) == {"chunks", "reports"}
    assert {c.name for c in upgraded.vectors.client.list_collections()} == {"kg_chunks", "kg_reports"}
    fresh = make_index("fresh", static_vectors="entities,facts")
    fresh.add_documents(sample_docs[:4])
    assert vector_ids(upgraded) == vector_ids(fresh)
    assert upgraded.store.content_dump() == fresh.store.content_dump()


def test_a_new_static_recipe_rederives_the_vectors(make_index, sample_docs, monkeypatch):
    index = make_index("recipe", static_vectors="entities")
    index.add_documents(sample_docs[:3])
    assert not index.refresh().refreshed
    monkeypatch.setattr(StaticEmbedder, "identity", lambda self: {"provider": "minilm-static", "recipe": 99})
    upgraded = make_index("recipe", static_vectors="entities")
    with pytest.raises(IndexStoreError, match="older recipe"):
        upgraded.graph()  # its vectors.npz holds the old recipe's vectors
    assert upgraded.refresh().refreshed and upgraded.graph().n_entities > 0
    assert json.loads((upgraded.dir / "manifest.json").read_text())["static_vectors"]["entities"]["recipe"] == 99


def test_static_vectors_setting():
    from graph_store.errors import ConfigError
    from graph_store.settings import load_settings

    assert load_settings(environ={}).static_collections == ("entities", "reports")
    assert load_settings(environ={"KGRAG_EMBEDDING_PROVIDER": "openai"}).static_collections == ()
    assert load_settings(environ={"KGRAG_STATIC_VECTORS": "facts, entities"}).static_collections == (
        "entities",
        "facts",
    )
    assert load_settings(environ={}, static_vectors="none").static_collections == ()
    with pytest.raises(ConfigError, match="static_vectors"):
        load_settings(environ={}, static_vectors="chunks")


def test_queries_and_reranking_use_each_collection_s_own_space(sample_retrievers, embedder):
    from agent.reranking import evidence_vectors

    r = sample_retrievers  # the sample index, default settings: entities and reports static
    assert r.embedders["entities"] is shared_static_embedder() and r.embedders["chunks"] is r.index.embedder
    question = "Who founded Halvard Instruments?"
    assert r.query_vector("entities", question).shape == (256,)
    vector = r.embed(question)
    assert r.query_vector("chunks", question, vector) is vector
    local = r.local(question)
    kinds = {e.kind for e in local}
    assert {"chunk", "entity"} <= kinds
    vectors = evidence_vectors(local, r, embedder)  # M is one cosine scale: every kind in the model's space
    assert vectors.shape == (len(local), 384)
    entity = next(i for i, e in enumerate(local) if e.kind == "entity")
    np.testing.assert_allclose(vectors[entity], embedder.embed([local[entity].text])[0], atol=1e-5)


def test_reranking_reads_stored_chunk_vectors_through_the_remembering_embedder(sample_retrievers, monkeypatch):
    from agent.reranking import evidence_vectors
    from graph_store.embeddings import RememberingEmbedder

    r = sample_retrievers
    model = r.index.embedder
    local = r.local("Who founded Halvard Instruments?")
    chunks = [e for e in local if e.kind == "chunk"]
    assert chunks
    embedded: list[str] = []
    embed = model.embed
    monkeypatch.setattr(model, "embed", lambda texts: embedded.extend(texts) or embed(texts))
    vectors = evidence_vectors(chunks, r, RememberingEmbedder(model))  # the query-time wrapper of the model
    assert embedded == []  # every chunk's vector is the stored one, none embedded again
    stored = r.vectors_of("chunks", [e.id for e in chunks])
    np.testing.assert_allclose(vectors, np.asarray([stored[e.id] for e in chunks]), atol=1e-6)


def test_check_and_repair_cover_static_collections(make_index, sample_docs):
    from graph_store.integrity import check_index, repair_index

    index = make_index("checked", static_vectors="entities,facts,reports")
    index.add_documents(sample_docs[:4])
    settings = index.settings
    assert check_index(settings) == []
    stats = index.stats()
    assert stats["vectors"]["entities"] == stats["entities"] and stats["vectors"]["reports"] == stats["reports"]
    exported = index.generation().path("vectors.facts.ids.npy")
    exported.write_bytes(exported.read_bytes()[:100])  # the static vectors exist only there
    assert any("vectors.facts.ids.npy" in p for p in check_index(settings))
    assert index.stats()["vectors"]["facts"] == 0  # unreadable: counted as none, not an error
    repair_index(settings, progress=False)
    assert check_index(settings) == []
    with Exported(index.generation().dir) as data:
        assert len(data.ids("facts")) == stats["facts"]
