import glob
import itertools
import shutil
import subprocess
import tempfile
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


POSTGRES_BIN = next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)), None)


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server started for the run (as user postgres, on 127.0.0.1): its URL. Skips, saying why, when
    Debian's server binaries or the postgres user are missing (.ci/run installs them)."""
    from tests.helpers import free_port

    if (
        POSTGRES_BIN is None
        or shutil.which("runuser") is None
        or subprocess.run(["id", "postgres"], capture_output=True).returncode
    ):
        pytest.skip("PostgreSQL server binaries or the postgres user are missing")
    data = Path(tempfile.mkdtemp(prefix="kgrag-pg-"))  # under /tmp: pytest's own folders are closed to other users
    shutil.chown(data, "postgres", "postgres")
    port = free_port()

    def as_postgres(*args):
        return subprocess.run(["runuser", "-u", "postgres", "--", *args], capture_output=True, text=True, check=True)

    as_postgres(f"{POSTGRES_BIN}/initdb", "-D", str(data / "db"), "--auth=trust", "-U", "postgres")
    as_postgres(
        f"{POSTGRES_BIN}/pg_ctl",
        "-D",
        str(data / "db"),
        "-w",
        "-l",
        str(data / "log"),
        "-o",
        f"-p {port} -k {data} -c listen_addresses=127.0.0.1",
        "start",
    )
    yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    as_postgres(f"{POSTGRES_BIN}/pg_ctl", "-D", str(data / "db"), "-m", "fast", "stop")
    shutil.rmtree(data, ignore_errors=True)


_databases = itertools.count()


def new_database(server_url: str, template: str | None = None) -> str:
    """The URL of a new database on the run's server: empty, or a copy of ``template`` (a database no one is
    connected to)."""
    import psycopg

    name = f"kgrag_test_{next(_databases)}"
    with psycopg.connect(server_url, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
    return server_url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture
def postgres_database(postgres_server):
    """The URL of a new, empty database on the run's server (one per test: each index its own record)."""
    return new_database(postgres_server)


def clone_index(folder: Path, database: str, server_url: str, copy: Path) -> str:
    """A copy of an index whose record is in PostgreSQL: its folder at ``copy``, its database copied; the new
    database's URL (the copy's manifest names it)."""
    import json

    from graph_store.store import record_location

    url = new_database(server_url, template=database)
    shutil.copytree(folder, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    (copy / "manifest.json").write_text(json.dumps({**manifest, "record": record_location(url)}))
    return url
