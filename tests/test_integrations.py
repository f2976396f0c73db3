"""Where users already work: the LangChain retriever inside an LCEL chain, and the example app that adds the PankRAG
workflow to its own LangGraph graph (offline, over the sample index)."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langgraph.checkpoint.memory import InMemorySaver

from graph_store.settings import load_settings
from kgrag import KGRag
from kgrag.integrations.langchain import KGRagRetriever
from tests.conftest import ROOT
from tests.helpers import ScriptedChatModel

DEMO = "Which river flows through the city where the founder of Halvard Instruments was born?"


@pytest.fixture(scope="module")
def rag(sample_index):
    with KGRag(settings=load_settings(environ={}, index_dir=sample_index.dir)) as opened:
        yield opened


def test_the_retriever_feeds_an_lcel_chain_its_passages(rag):
    retriever = KGRagRetriever(rag=rag, mode="ppr", k=3)
    model = ScriptedChatModel(responder=lambda messages: "Selva")
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from these passages:\n{context}"), ("human", "{question}")]
    )

    def passages(docs) -> str:
        return "\n\n".join(f"[{d.metadata['title']}] {d.page_content}" for d in docs)

    chain = {"context": retriever | passages, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()
    assert chain.invoke("Which river flows through Tarnholm?") == "Selva"
    system = model.calls[0][0].content
    assert "[Tarnholm] # Tarnholm" in system and "The river Selva flows through Tarnholm" in system
    assert system.count("\n[") == 3  # k passages, each after a line break


def test_the_retrievers_documents_carry_their_metadata(rag):
    docs = KGRagRetriever(rag=rag, mode="dense", k=2).invoke("Which river flows through Tarnholm?")
    assert len(docs) == 2
    top = docs[0].metadata
    assert top["title"] == "Tarnholm" and top["source"].endswith("examples/corpus/tarnholm.md")
    assert top["route"] == "dense" and top["score"] == 1.0 and top["kind"] == "chunk"
    assert docs[1].metadata["score"] < 1.0 and "Tarnholm" in docs[0].page_content


def test_the_pankrag_retriever_names_the_sub_question_behind_each_passage(rag):
    docs = KGRagRetriever(rag=rag, mode="pankrag", k=3).invoke(DEMO)
    found = [(d.metadata["title"], d.metadata["subquestion"]) for d in docs]
    # the passage each hop's answer was read from, in plan order
    assert found == [
        ("Halvard Instruments", "Who is the founder of Halvard Instruments?"),
        ("Edda Morlund", "In which city was Edda Morlund born?"),
        ("Tarnholm", "Which river flows through Tarnholm?"),
    ]
    assert all(d.metadata["route"] == "ppr" and d.metadata["subquestion_id"] for d in docs)


def test_the_retriever_works_with_ainvoke(rag):
    async def both():
        return await asyncio.gather(
            KGRagRetriever(rag=rag, mode="ppr", k=2).ainvoke("Who designed the Tarnholm Opera House?"),
            KGRagRetriever(rag=rag, mode="pankrag", k=2).ainvoke(DEMO),
        )

    ppr, pankrag = asyncio.run(both())
    assert ppr[0].metadata["title"] == "Tarnholm Opera House" and "Oskar Brenn" in ppr[0].page_content
    assert [d.metadata["subquestion_id"] for d in pankrag] == ["1:q1", "1:q2"]


def test_a_retriever_with_a_bad_mode_or_k_is_refused_when_made(rag):
    with pytest.raises(ValueError, match="mode"):
        KGRagRetriever(rag=rag, mode="bm42")
    with pytest.raises(ValueError, match="k"):
        KGRagRetriever(rag=rag, k=0)


def _example_app():
    spec = importlib.util.spec_from_file_location("subgraph_app", ROOT / "examples" / "subgraph_app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_app_runs_the_workflow_as_its_subgraph(rag):
    saver = InMemorySaver()
    app = _example_app().build_app(rag, saver)
    config = {"configurable": {"thread_id": "desk-1"}}
    steps = list(app.stream({"question": DEMO}, config, stream_mode="custom", subgraphs=True))

    answered = [(ns, e["id"], e["answer"]) for ns, e in steps if e["event"] == "subquestion_answered"]
    assert [(sid, answer) for _, sid, answer in answered] == [
        ("1:q1", "Edda Morlund"),
        ("1:q2", "Tarnholm"),
        ("1:q3", "Selva"),
    ]
    # each sub-question's steps come from its own subgraph inside the app's research node
    assert all(ns[0] == "research" and ns[1].startswith("solve:") for ns, _, _ in answered)

    values = app.get_state(config).values
    assert values["answer"].startswith("Selva") and "Sources:\n  [1] Tarnholm" in values["reply"]
    assert any("Selva" in c["text"] for c in values["citations"])

    # the app's checkpointer holds the subgraph's state, under the node's namespace
    kept = [c for c in saver.list(config) if c.config["configurable"]["checkpoint_ns"] == "research"]
    latest = max(kept, key=lambda c: c.checkpoint["ts"]).checkpoint["channel_values"]
    assert [latest["subquestions"][sid]["answer"] for sid in latest["plan"]] == ["Edda Morlund", "Tarnholm", "Selva"]

    # ... and a follow-up in the thread is planned from it, asynchronously too
    follow_up = asyncio.run(app.ainvoke({"question": "And when was she born?"}, config))
    assert follow_up["answer"].startswith("1889")


def test_the_example_app_runs_from_the_command_line(sample_index, capsys):
    _example_app().main([DEMO, "--index-dir", str(sample_index.dir)])
    out = capsys.readouterr().out
    assert "  1:q3 -> Selva   (research / solve:" in out and "Sources:\n  [1] Tarnholm" in out
