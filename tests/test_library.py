"""The library door (``kgrag.KGRag``) as a user's script runs it, in a process of its own: a call that hangs or
leaves the process unable to exit shows only there."""

import os
import subprocess
import sys

from tests.conftest import ROOT

SCRIPT = """
import asyncio, sys
from kgrag import KGRag

async def in_a_with_block(path):
    with KGRag(path) as rag:
        answer = await rag.aask("Where was Ana Keldor born?")
        async for event in rag.astream("Who founded Halvard Instruments?"):
            pass
    return answer.short_answer, event.short_answer

print(*asyncio.run(in_a_with_block(sys.argv[1])))
with KGRag(sys.argv[1]) as rag:  # sync and async calls on one object, one conversation across them
    first = rag.ask("Who founded Halvard Instruments?")
    second = asyncio.run(rag.aask("Where was she born?", thread=first.thread_id))
    third = rag.ask("Which river flows through Tarnholm?", thread=first.thread_id)
    print(first.short_answer, second.short_answer, third.short_answer, rag.thread(first.thread_id)["turn"])
"""


def test_sync_and_async_calls_on_one_object_and_a_clean_exit(sample_index, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}
    env.update(PYTHONPATH=str(ROOT), KGRAG_CHECKPOINTER=str(tmp_path / "checkpoints.sqlite"))
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(sample_index.dir)], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["Ludvik Edda Morlund", "Edda Morlund Tarnholm Selva 3"]
    assert "aclose()" not in run.stderr and "Traceback" not in run.stderr, run.stderr[-3000:]


def test_a_named_thread_with_no_earlier_turn_is_said_to_be_new(sample_index):
    from langgraph.checkpoint.memory import InMemorySaver

    from kgrag import KGRag

    with KGRag(sample_index.dir, checkpointer=InMemorySaver()) as rag:
        first = rag.ask("And when was she born?", thread="never-seen")
        again = rag.ask("Where was Ana Keldor born?", thread="never-seen")
        unnamed = rag.ask("Where was Ana Keldor born?")
    assert first.notices == ["conversation 'never-seen' had no earlier turns: answered as a new conversation"]
    assert again.notices == [] and unnamed.notices == []


def test_the_workflow_is_compiled_once_per_graph_not_per_question(sample_index, monkeypatch):
    """Compiling the workflow costs as much as an offline answer's retrieval on a large index: KGRag compiles each
    graph once and gives every call a copy with its saver, conversations kept apart as before."""
    from langgraph.checkpoint.memory import InMemorySaver

    import agent.graph
    from kgrag import KGRag

    compiled = []
    for name in ("build_pankrag_graph", "build_propex_graph"):
        build = getattr(agent.graph, name)
        monkeypatch.setattr(agent.graph, name, lambda *a, _build=build, **k: compiled.append(1) or _build(*a, **k))
    with KGRag(sample_index.dir, checkpointer=InMemorySaver()) as rag:
        first = rag.ask("Who founded Halvard Instruments?")
        follow_up = rag.ask("Where was she born?", thread=first.thread_id)
        other = rag.ask("Where was Ana Keldor born?")
        propex = [rag.ask("Where was Ana Keldor born?", graph="propex") for _ in range(2)]
        turns = rag.thread(first.thread_id)["turn"], rag.thread(other.thread_id)["turn"]
    assert (first.short_answer, follow_up.short_answer, other.short_answer) == ("Edda Morlund", "Tarnholm", "Ludvik")
    assert [a.short_answer for a in propex] == ["Ludvik", "Ludvik"]
    assert turns == (2, 1)
    assert len(compiled) == 2  # pankrag once, propex once
