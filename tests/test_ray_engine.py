"""Indexing on Ray (engine=ray): the index it builds equals the one built in one process, through the library and
the CLI; a worker actor or the driver killed mid-build loses nothing, and the next run finishes the same index.
One local Ray instance (2 CPUs, on 127.0.0.1) for the module; skipped when Ray is not installed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph_store.extraction import OfflineExtractor
from graph_store.settings import load_settings
from graph_store.vectors import COLLECTIONS, Exported
from tests.conftest import EXAMPLES, ROOT
from tests.helpers import FakeOpenAIServer

QUESTION = "Which river flows through the city where the founder of Halvard Instruments was born?"
# Ray reports no usage over the internet, and runs on the loopback only (its switch for that, read at import).
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def _env() -> dict[str, str]:
    """The environment of a CLI driver joining the module's Ray: ray.init set its token authentication there."""
    return {**os.environ, "PYTHONPATH": str(ROOT), **RAY_ENV}


@pytest.fixture(scope="module")
def ray_address():
    """A local Ray instance for the module; its address, for the CLI's drivers to join."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in RAY_ENV.items():  # before Ray is imported
            patch.setenv(name, value)
        ray = pytest.importorskip("ray", reason="Ray is not installed: the ray extra (make install brings it)")
        context = ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
        assert context.address_info["node_ip_address"] == "127.0.0.1"
        yield context.address_info["gcs_address"]
        ray.shutdown()


def _vectors(index) -> dict[str, tuple[list[str], np.ndarray]]:
    with Exported(index.generation().dir) as exported:
        return {name: (exported.ids(name).tolist(), np.array(exported.matrix(name))) for name in COLLECTIONS}


def _answer(index_dir: Path) -> str:
    from kgrag import KGRag

    with KGRag(settings=load_settings(environ={}, index_dir=index_dir), checkpointer=InMemorySaver()) as rag:
        return rag.ask(QUESTION).answer


def _assert_same_index(built, reference) -> None:
    assert built.store.content_dump() == reference.store.content_dump()
    assert built.stats() == reference.stats()
    got, want = _vectors(built), _vectors(reference)
    assert got.keys() == want.keys()
    for name, (ids, vectors) in want.items():
        assert got[name][0] == ids, name
        np.testing.assert_allclose(got[name][1], vectors, atol=1e-5, err_msg=name)


class SlowExtractor(OfflineExtractor):
    """The offline extractor taking a little longer per chunk, so that a build is still extracting when a test kills
    one of its workers."""

    def extract(self, text: str, title: str):
        import time

        time.sleep(0.02)  # simulated work, not a wait for an event
        return super().extract(text, title)


def _killing_worker(index) -> tuple[list, Callable]:
    """A progress callback that kills a worker actor once the first extractions are in (its next call is queued on
    it); the actors it killed."""
    import ray

    killed: list = []

    def progress(step: str, done: int, total: int) -> None:
        if step == "extracting" and done == 1 and not killed:
            killed.append(index.engine.actors()[0])
            ray.kill(killed[0], no_restart=False)  # Ray restarts it

    return killed, progress


def test_a_ray_build_equals_the_local_one_with_a_worker_killed_and_restarted_mid_extraction(
    ray_address, make_index, sample_index, sample_docs
):
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the actors cannot import the tests
    index = make_index("ray", engine="ray", extractor=SlowExtractor())
    assert index.engine.name == "ray"
    killed, index.progress = _killing_worker(index)
    summary = index.add_documents(sample_docs)
    assert killed, "no worker was killed"
    assert summary.chunks_extracted == sample_index.stats()["chunks"]
    _assert_same_index(index, sample_index)
    assert _answer(index.dir) == _answer(sample_index.dir)


class DyingExtractor(SlowExtractor):
    """An extractor whose worker actor kills itself for good at one chunk: the build fails there, whatever the
    machine's load (a kill from the driver may come after every call has already finished)."""

    def __init__(self, fatal_text: str):
        super().__init__()
        self.fatal_text = fatal_text

    def extract(self, text: str, title: str):
        import time

        import ray

        if text == self.fatal_text:
            ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
            time.sleep(60)  # killed while it waits
        return super().extract(text, title)


def test_a_worker_killed_for_good_fails_the_build_and_the_next_run_finishes_it(
    ray_address, make_index, sample_index, sample_docs
):
    from ray import cloudpickle

    from graph_store.errors import UnavailableError

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    last = max(sample_index.store.chunk_texts().items())  # chunks are extracted by id: this one in the last call
    index = make_index("killed", engine="ray", extractor=DyingExtractor(fatal_text=last[1]))
    with pytest.raises(UnavailableError, match="a Ray worker of the build died"):
        index.add_documents(sample_docs)
    kept = index.stats()["extracted_chunks"]
    assert 0 < kept < sample_index.stats()["chunks"]  # committed batches stay
    index = make_index("killed", engine="ray", extractor=SlowExtractor())  # the next run
    assert index.refresh().chunks_extracted == sample_index.stats()["chunks"] - kept  # only what was not committed
    _assert_same_index(index, sample_index)


def _extraction_reply(model: str, messages: list[dict]) -> str:
    """A scripted model's extraction: the chunk's document title and the first capitalised word after it."""
    text = messages[-1]["content"]
    title = text.split("Document title:", 1)[-1].split("\n", 1)[0].strip()
    words = [w.strip(".,;:()") for w in text.split("Document title:", 1)[-1].split() if w[:1].isupper()]
    other = next((w for w in words if w and w not in title), title)
    return json.dumps({"entities": [{"name": title}, {"name": other}], "relations": [[title, "mentions", other]]})


def test_with_a_model_the_actors_extract_through_their_own_client_as_the_local_build_does(
    ray_address, make_index, sample_docs
):
    docs = sample_docs[:6]
    with FakeOpenAIServer(reply=_extraction_reply) as server:
        model = {"chat_model": "tiny", "chat_base_url": server.base_url, "llm_tasks": ["extract"], "max_concurrency": 2}
        local = make_index("local", **model)
        # One actor: it embeds the chunks while it extracts them (its two groups of calls).
        ray_built = make_index("ray", engine="ray", ray_workers=1, **model)
        local.add_documents(docs)
        calls = len(server.requests)
        ray_built.add_documents(docs)
        assert len(server.requests) == 2 * calls  # the actors called the model (the response cache is per index)
    assert ray_built.store.extractor_counts() == {"llm:tiny": local.stats()["chunks"]}
    assert ray_built.store.content_dump() == local.store.content_dump()


def _index_cmd(index_dir: Path, address: str) -> list[str]:
    return ["index", str(EXAMPLES), "--index-dir", str(index_dir), "--quiet", "--engine", "ray", "--address", address]


# The CLI's driver, killed with SIGKILL as it commits its second batch of extraction rows (batches of 8 rows).
_KILLED_DRIVER = """
import os, signal, sys
import graph_store.index
from graph_store.store import Store
from kgrag.cli import main

graph_store.index.EXTRACTION_COMMIT_EVERY, graph_store.index.EXTRACTION_COMMIT_SECONDS = 8, 1e9
save, calls = Store.save_extractions, []
def save_then_die(self, rows):
    calls.append(len(rows))
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    save(self, rows)
Store.save_extractions = save_then_die
main(sys.argv[1:])
"""


@pytest.mark.door
def test_the_cli_driver_killed_mid_extraction_then_run_again_equals_the_clean_build(
    ray_address, make_index, sample_index, tmp_path
):
    target = tmp_path / "cli"
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_DRIVER, *_index_cmd(target, ray_address)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with sqlite3.connect(f"file:{target / 'index.sqlite'}?mode=ro", uri=True) as record:
        assert record.execute("SELECT COUNT(*) FROM extractions").fetchone()[0] == 8  # the first batch, no more
    done = subprocess.run(
        [sys.executable, "-m", "kgrag.cli", *_index_cmd(target, ray_address)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"{sample_index.stats()['chunks'] - 8} extracted now" in done.stdout
    _assert_same_index(make_index("cli"), sample_index)


@pytest.mark.door
def test_engine_ray_without_ray_installed_is_one_line_naming_the_extra(tmp_path):
    hidden = tmp_path / "no-ray"
    hidden.mkdir()
    (hidden / "ray.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'ray'\", name='ray')\n"
    )  # not installed
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "kgrag.cli",
            "index",
            str(EXAMPLES),
            "--index-dir",
            str(tmp_path / "i"),
            "--engine",
            "ray",
        ],
        cwd=ROOT,
        env={**_env(), "PYTHONPATH": f"{hidden}:{ROOT}"},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert run.stderr.strip() == "kgrag: error: engine=ray needs Ray, which is not installed: pip install 'kgrag[ray]'"
    assert not (tmp_path / "i").exists()  # refused before anything was written
