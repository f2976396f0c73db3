from pathlib import Path

import pytest

from graph_store.documents import load_documents
from graph_store.embeddings import MiniLMEmbedder
from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "corpus"
# Files whose every test drives a door as a user does; door tests elsewhere carry @pytest.mark.door themselves.
DOOR_FILES = {
    "test_cli.py",
    "test_readme.py",
    "test_server.py",
    "test_web.py",
    "test_studio.py",
    "test_postgres.py",
    "test_chroma_server.py",
    "test_llm_path.py",
    "test_mcp.py",
    "test_service_process.py",
    "test_library.py",
}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.name in DOOR_FILES:
            item.add_marker(pytest.mark.door)


@pytest.fixture(scope="session")
def embedder():
    """One loaded model for the whole run (loading costs about a second)."""
    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def sample_docs():
    return load_documents(EXAMPLES)


@pytest.fixture
def make_index(tmp_path, embedder):
    """Open (or create) an offline index in a fresh folder; extra settings as keywords."""
    opened = []

    def make(name="idx", chat=None, extractor=None, **settings):
        index = KnowledgeIndex(
            load_settings(environ={}, index_dir=tmp_path / name, **settings),
            embedder=embedder,
            chat=chat,
            extractor=extractor,
            progress=False,
        )
        opened.append(index)
        return index

    yield make
    for index in opened:
        index.close()


def vector_ids(index) -> dict[str, list[str]]:
    return {name: sorted(index.vectors.ids(name)) for name in index.vectors.collections}


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory, embedder, sample_docs):
    """The sample corpus, indexed offline once per run, for tests that only read it."""
    index = KnowledgeIndex(
        load_settings(environ={}, index_dir=tmp_path_factory.mktemp("sample") / "idx"),
        embedder=embedder,
        progress=False,
    )
    index.add_documents(sample_docs)
    return index


@pytest.fixture(scope="session")
def sample_retrievers(sample_index):
    from graph_store.retrieval import Retrievers

    return Retrievers(sample_index)


@pytest.fixture(scope="session")
def sample_resources(sample_index, sample_retrievers):
    """Offline resources (no chat model) over the sample index."""
    from agent.resources import Resources

    return Resources(sample_index, sample_retrievers, None)
