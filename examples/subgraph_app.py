"""Your own LangGraph app with kgrag's PankRAG workflow as one of its nodes (kgrag/integrations/langgraph.py).

    python examples/subgraph_app.py "Which river flows through the city where the founder of Halvard Instruments was born?" \
        --index-dir .kgrag/demo-index

A small help desk: ``research`` runs the PankRAG workflow as a subgraph (the question in; the answer, its
confidence and its citations out), ``reply`` writes the reply with its sources. Streamed with ``subgraphs=True``,
each sub-question shows as it is answered; the app's checkpointer keeps the subgraph's state, so a follow-up in
the same thread is planned with the questions before it. Runs offline (``make demo`` builds the index).
"""

from __future__ import annotations

import argparse

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from kgrag import KGRag
from kgrag.integrations.langgraph import pankrag_node


class HelpDesk(TypedDict, total=False):
    question: str
    answer: str
    confidence: float
    citations: list[dict]
    reply: str


def reply(state: HelpDesk) -> dict:
    sources = "".join(f"\n  [{c['n']}] {', '.join(c['titles'])}" for c in state["citations"])
    unsure = "" if state["confidence"] >= 0.5 else " (not sure: check the sources)"
    return {"reply": f"{state['answer']}{unsure}\nSources:{sources}"}


def build_app(rag: KGRag, checkpointer=None):
    """The help desk over ``rag``'s index; its checkpointer also keeps the PankRAG subgraph's state."""
    builder = StateGraph(HelpDesk)
    builder.add_node("research", pankrag_node(rag=rag))  # default mapping: question in; answer, citations out
    builder.add_node("reply", reply)
    builder.add_edge(START, "research")
    builder.add_edge("research", "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=checkpointer)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", nargs="+", help="a question, then follow-ups in the same thread")
    parser.add_argument("--index-dir", default=".kgrag/demo-index")
    args = parser.parse_args(argv)
    with KGRag(args.index_dir) as rag:
        app = build_app(rag, InMemorySaver())
        config = {"configurable": {"thread_id": "help-desk"}}
        for question in args.questions:
            print(f"Q: {question}")
            # the subgraph's own events (stream_mode="custom"), from every level, as they happen
            for namespace, event in app.stream({"question": question}, config, stream_mode="custom", subgraphs=True):
                if event.get("event") == "subquestion_answered":
                    print(f"  {event['id']} -> {event['answer']}   ({' / '.join(namespace)})")
            print(app.get_state(config).values["reply"])


if __name__ == "__main__":
    main()
