"""Vectors on a Chroma server (client/server mode), started by the test on 127.0.0.1."""

import subprocess
import sys
from pathlib import Path

import pytest

from graph_store.documents import Document
from graph_store.errors import IndexStoreError
from graph_store.retrieval import Retrievers
from tests.conftest import vector_ids
from tests.helpers import free_port, wait_for_http

CHROMA = Path(sys.executable).parent / "chroma"


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    if not CHROMA.exists():
        pytest.skip("the chroma command is not installed")
    port = free_port()
    server = subprocess.Popen(
        [
            str(CHROMA),
            "run",
            "--path",
            str(tmp_path_factory.mktemp("chroma")),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_http(f"http://127.0.0.1:{port}/api/v2/heartbeat", server)
    yield port
    server.terminate()
    server.wait(timeout=20)


def test_index_with_vectors_on_a_chroma_server(make_index, sample_docs, chroma_server):
    embedded = make_index("embedded")
    embedded.add_documents(sample_docs)
    remote = make_index("remote", chroma_host="127.0.0.1", chroma_port=chroma_server)
    remote.add_documents(sample_docs)
    assert vector_ids(remote) == vector_ids(embedded)
    assert remote.store.content_dump() == embedded.store.content_dump()
    assert not (remote.dir / "chroma").exists()
    # a second index on the same server keeps its own collections
    other = make_index("other", chroma_host="127.0.0.1", chroma_port=chroma_server)
    other.add_documents(sample_docs[:3])
    assert vector_ids(remote) == vector_ids(embedded)
    remote.delete_documents([sample_docs[0].id])
    assert remote.stats()["vectors"]["chunks"] == len(sample_docs) - 1
    assert Retrievers(remote).ppr("Who founded Halvard Instruments?").evidence


def test_vector_store_mismatch_and_unreachable_server(make_index, tmp_path):
    make_index("local").add_documents([Document(text="Kessel is a city.")])
    with pytest.raises(IndexStoreError, match="keeps its vectors in embedded"):
        make_index("local", chroma_host="127.0.0.1", chroma_port=1)
    fresh = make_index("fresh", chroma_host="127.0.0.1", chroma_port=free_port())  # vectors are reached on first use
    with pytest.raises(IndexStoreError, match="cannot reach the Chroma server"):
        fresh.add_documents([Document(text="Kessel is a city.")])
