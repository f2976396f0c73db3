"""The KGRag methods the HTTP service uses instead of the library's private members."""

import asyncio

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph_store.errors import KGRagError
from graph_store.settings import load_settings
from kgrag import KGRag


def test_a_given_saver_keeps_the_thread_with_its_metadata(sample_index):
    rag = KGRag(settings=load_settings(environ={}, index_dir=sample_index.dir))
    assert rag.open() is rag
    saver = InMemorySaver()
    rag.use_checkpointer(saver)

    async def ask_then_read():
        async for _ in rag.astream("Where was Ana Keldor born?", thread="t-1", metadata={"owner": "me"}):
            pass
        return await rag.athread_state("t-1"), await rag.athread_state("no-such-thread")

    state, missing = asyncio.run(ask_then_read())
    assert state.metadata["owner"] == "me" and state.values["short_answer"]
    assert not missing.values
    assert {c.config["configurable"]["thread_id"] for c in saver.list(None)} == {"t-1"}


def test_the_graph_snapshot_store_reads_the_current_generation(sample_index):
    store = KGRag(settings=load_settings(environ={}, index_dir=sample_index.dir)).graph_snapshot_store()
    assert store.rows("SELECT COUNT(*) FROM entities")[0][0] > 0


def test_open_fails_early_on_a_missing_index(tmp_path):
    with pytest.raises(KGRagError):
        KGRag(settings=load_settings(environ={}, index_dir=tmp_path / "nothing-here")).open()
