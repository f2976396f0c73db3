import numpy as np
import pytest

from graph_store.embeddings import MiniLMEmbedder, make_embedder
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
    a, b, c = embedder.embed([
        "Who founded the instrument company?",
        "The company that makes instruments was founded by whom?",
        "Pasta should be cooked in salted boiling water.",
    ])
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


def _embedding_server():
    """A local OpenAI-compatible /embeddings endpoint that records the Authorization header of each request."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(self.headers.get("Authorization"))
            data = [{"object": "embedding", "index": i, "embedding": [1.0, 0.0, 0.0]} for i in range(len(body["input"]))]
            reply = json.dumps({"object": "list", "data": data, "model": body["model"],
                                "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1", seen


def test_each_host_receives_only_its_own_key():
    server, url, seen = _embedding_server()
    try:
        elsewhere = load_settings(environ={}, embedding_provider="openai", embedding_model="e", embedding_base_url=url,
                                  chat_model="m", chat_base_url="http://127.0.0.1:9/v1", chat_api_key="chat-secret")
        make_embedder(elsewhere).embed(["a"])
        same_host = load_settings(environ={}, embedding_provider="openai", embedding_model="e", embedding_base_url=url,
                                  chat_model="m", chat_base_url=url, chat_api_key="chat-secret")
        make_embedder(same_host).embed(["a"])
        own = load_settings(environ={}, embedding_provider="openai", embedding_model="e", embedding_base_url=url,
                            embedding_api_key="embed-secret", chat_model="m", chat_api_key="chat-secret")
        make_embedder(own).embed(["a"])
    finally:
        server.shutdown()
    assert seen == ["Bearer not-needed", "Bearer chat-secret", "Bearer embed-secret"]
