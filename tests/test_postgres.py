"""Checkpoints in PostgreSQL: a server started by the test (as user postgres, on 127.0.0.1), shared by
two service instances (as two workers would share it)."""

import httpx
import pytest

from agent.checkpoint import open_checkpointer
from agent.context import Context
from agent.graph import build_pankrag_graph
from graph_store.settings import load_settings
from kgrag.server import create_app
from tests.helpers import serve_in_thread


@pytest.fixture(scope="module")
def postgres_url(postgres_server):
    return postgres_server


@pytest.fixture
def resources(sample_resources):
    return sample_resources


def test_sync_postgres_checkpointer_keeps_every_sub_answer(postgres_url, resources):
    config = {"configurable": {"thread_id": "pg-sync"}}
    with open_checkpointer(postgres_url) as saver:
        build_pankrag_graph(saver).invoke(
            {"question": "Who designed the opera house where The Glass River premiered?"},
            config,
            context=Context(resources=resources),
        )
    with open_checkpointer(postgres_url) as saver:  # a new connection, as another process would open
        values = build_pankrag_graph(saver).get_state(config).values
    assert [r["answer"] for r in values["subquestions"].values()] == ["Tarnholm Opera House", "Oskar Brenn"]


def test_two_service_instances_share_conversations(postgres_url, sample_index):
    from kgrag import KGRag

    settings = load_settings(environ={}, checkpointer=postgres_url, index_dir=sample_index.dir)
    first, url_a = serve_in_thread(create_app(settings, {"demo": KGRag(settings=settings)}))
    second, url_b = serve_in_thread(create_app(settings, {"demo": KGRag(settings=settings)}))
    try:
        for url, question in ((url_a, "Who founded Halvard Instruments?"), (url_b, "Where was Edda Morlund born?")):
            reply = httpx.post(
                f"{url}/v1/chat/completions",
                timeout=60,
                json={
                    "model": "demo",
                    "conversation_id": "shared",
                    "messages": [{"role": "user", "content": question}],
                },
            )
            assert reply.status_code == 200, reply.text
        thread = httpx.get(f"{url_a}/v1/threads/shared", timeout=30).json()
        assert [m["role"] for m in thread["messages"]] == ["human", "ai", "human", "ai"]
        assert thread["turn"] == 2 and "Tarnholm" in thread["answer"]
    finally:
        first.should_exit = second.should_exit = True
