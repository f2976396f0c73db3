from pathlib import Path

import pytest

from graph_store.documents import load_documents
from graph_store.embeddings import MiniLMEmbedder
from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "corpus"


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
        index = KnowledgeIndex(load_settings(environ={}, index_dir=tmp_path / name, **settings),
                               embedder=embedder, chat=chat, extractor=extractor, progress=False)
        opened.append(index)
        return index

    yield make
    for index in opened:
        index.close()


def vector_ids(index) -> dict[str, list[str]]:
    return {name: sorted(index.vectors.ids(name)) for name in index.vectors.collections}
