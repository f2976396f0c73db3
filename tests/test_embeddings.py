import numpy as np
import pytest

from graph_store.embeddings import MiniLMEmbedder, RememberingEmbedder, make_embedder
from graph_store.settings import load_settings


@pytest.fixture(scope="module")
def embedder():
    return MiniLMEmbedder()


def test_offline_embeddings_are_384_dim_normalised_and_deterministic(embedder):
    texts = ["The Rhine flows through Basel.", "A cat sat on the mat.", ""]
    first = embedder.embed(texts)
    second = MiniLMEmbedder().embed(texts)
    assert first.shape == (3, 384) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, second)


def test_similar_sentences_score_higher_than_unrelated(embedder):
    a, b, c = embedder.embed(
        [
            "Who founded the instrument company?",
            "The company that makes instruments was founded by whom?",
            "Pasta should be cooked in salted boiling water.",
        ]
    )
    assert a @ b > 0.6
    assert a @ b > a @ c + 0.3


def test_batching_by_length_does_not_change_vectors(embedder):
    short, long = "River.", "A much longer sentence about the river that flows through the old town " * 5
    together = embedder.embed([long, short])
    alone = np.vstack([embedder.embed([long]), embedder.embed([short])])
    np.testing.assert_allclose(together, alone, atol=1e-4)


def test_overlong_text_is_truncated_not_rejected(embedder):
    vec = embedder.embed(["word " * 2000])
    assert vec.shape == (1, 384) and np.isfinite(vec).all()


def test_default_settings_give_the_offline_embedder():
    assert isinstance(make_embedder(load_settings(environ={})), MiniLMEmbedder)


def test_each_host_receives_only_its_own_key():
    from tests.helpers import FakeOpenAIServer

    with FakeOpenAIServer(models=("e",)) as server:
        url = server.base_url
        elsewhere = load_settings(
            environ={},
            embedding_provider="openai",
            embedding_model="e",
            embedding_base_url=url,
            chat_model="m",
            chat_base_url="http://127.0.0.1:9/v1",
            chat_api_key="chat-secret",
        )
        make_embedder(elsewhere).embed(["a"])
        same_host = load_settings(
            environ={},
            embedding_provider="openai",
            embedding_model="e",
            embedding_base_url=url,
            chat_model="m",
            chat_base_url=url,
            chat_api_key="chat-secret",
        )
        make_embedder(same_host).embed(["a"])
        own = load_settings(
            environ={},
            embedding_provider="openai",
            embedding_model="e",
            embedding_base_url=url,
            embedding_api_key="embed-secret",
            chat_model="m",
            chat_api_key="chat-secret",
        )
        make_embedder(own).embed(["a"])
    seen = [r["authorization"] for r in server.requests]
    assert seen == ["Bearer not-needed", "Bearer chat-secret", "Bearer embed-secret"]


def _bundled_graph_vectors(texts: list[str]) -> np.ndarray:
    """Mean-pooled vectors from the bundled float graph, the reference the int8 graph is built from, one text a run."""
    from graph_store.embeddings import BundledGraph, minilm_tokenizer

    graph, rows = BundledGraph(), []
    for encoding in minilm_tokenizer().encode_batch(texts):
        ids = np.array([encoding.ids], dtype=np.int32)
        rows.append(graph.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0].mean(axis=0))
    rows = np.array(rows)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_int8_graph_gives_the_bundled_models_vectors(embedder):
    texts = [
        "The Rhine flows through Basel.",
        "Marie Curie was born in Warsaw in 1867.",
        "Kessel Instruments was founded by an engineer.",
        "Pasta should be cooked in salted boiling water.",
        "Tarnholm harbour",
    ]
    cosines = (embedder.embed(texts) * _bundled_graph_vectors(texts)).sum(axis=1)
    assert cosines.min() > 0.99, cosines


def test_cached_graph_is_rebuilt_when_damaged_and_built_in_memory_when_unwritable(tmp_path, embedder):
    texts = ["The Rhine flows through Basel.", "A cat sat on the mat."]
    expected = embedder.embed(texts)
    np.testing.assert_array_equal(MiniLMEmbedder(cache=tmp_path).embed(texts), expected)
    (cached,) = tmp_path.glob("minilm-int8-*.onnx")
    cached.write_bytes(b"not a model")
    np.testing.assert_array_equal(MiniLMEmbedder(cache=tmp_path).embed(texts), expected)
    assert cached.stat().st_size > 1_000_000  # written again, whole
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    np.testing.assert_array_equal(MiniLMEmbedder(cache=blocked / "cache").embed(texts), expected)


def test_missing_onnx_package_is_one_clear_error(tmp_path, monkeypatch):
    import sys

    from graph_store.errors import ConfigError

    monkeypatch.setitem(sys.modules, "onnx", None)  # as if the package were not installed
    with pytest.raises(ConfigError, match="'onnx' package is missing"):
        MiniLMEmbedder(cache=tmp_path).embed(["a"])


def test_remembering_embedder_embeds_each_text_once_and_forgets_the_least_recently_used(embedder):
    asked: list[list[str]] = []

    class Counting:
        dimension, name_similarity = embedder.dimension, embedder.name_similarity

        def identity(self):
            return embedder.identity()

        def embed(self, texts):
            asked.append(list(texts))
            return embedder.embed(texts)

    remembering = RememberingEmbedder(Counting(), size=3)
    texts = ["The Rhine flows through Basel.", "A cat sat on the mat.", "Basel is in Switzerland."]
    first = remembering.embed([texts[0], texts[1], texts[0]])
    np.testing.assert_allclose(first, embedder.embed([texts[0], texts[1], texts[0]]), atol=1e-4)
    again = remembering.embed([texts[1], texts[2], texts[0]])
    np.testing.assert_allclose(again, embedder.embed([texts[1], texts[2], texts[0]]), atol=1e-4)
    assert asked == [[texts[0], texts[1]], [texts[2]]]  # each text embedded once, duplicates within a call too
    remembering.embed(["A fourth sentence."])  # over the size: the least recently used (texts[1]) is dropped
    remembering.embed([texts[0], texts[1]])
    assert asked[-1] == [texts[1]]
    assert remembering.embed([]).shape == (0, 384)
    assert remembering.identity() == embedder.identity() and remembering.dimension == 384
