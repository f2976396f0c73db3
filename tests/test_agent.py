import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import Context
from agent.graph import build_pankrag_graph, build_propex_graph
from agent.resources import Resources
from graph_store.llm import ChatClient
from tests.helpers import ScriptedChatModel

PLAN = {
    "sub_questions": [
        {"id": "q1", "question": "Who founded Halvard Instruments?", "route": "ppr", "kind": "specific"},
        {"id": "q2", "question": "Who designed the Tarnholm Opera House?", "route": "local", "kind": "specific"},
        {"id": "q3", "question": "Where was the founder born?", "depends_on": ["q1"], "route": "ppr", "rephrase": True},
    ]
}
SUB_ANSWERS = {"founded Halvard": "Edda Morlund", "designed the Tarnholm": "Oskar Brenn", "born": "Tarnholm"}


class Script:
    """A scripted LLM for the workflow: answers each prompt type; records what it saw."""

    def __init__(self, plan=PLAN, keep=None):
        self.plan = plan
        self.keep = keep if keep is not None else [1]
        self.lock = threading.Lock()

    def __call__(self, messages):
        prompt = messages[-1].content
        if prompt.startswith("You plan how"):
            return self.plan if isinstance(self.plan, str) else json.dumps(self.plan)
        if prompt.startswith("You select facts"):
            return json.dumps({"keep": self.keep})
        if prompt.startswith("Rewrite the sub-question"):
            return "Where was Edda Morlund, founder of Halvard Instruments, born?"
        if prompt.startswith("Answer the question using only"):
            question = prompt.split("Question:")[-1]
            answer = next((a for key, a in SUB_ANSWERS.items() if key in question), "not found")
            return json.dumps({"answer": answer, "evidence": [1]})
        if prompt.startswith("Answer the user's question"):
            return "Edda Morlund founded it and was born in Tarnholm [1]."
        if prompt.startswith("Answer the question from the passages"):
            return "Ludvik. The passage says so [1]."
        raise AssertionError(f"unexpected prompt: {prompt[:60]}")


@pytest.fixture
def index(sample_index):
    return sample_index


@pytest.fixture
def retrievers(sample_retrievers):
    return sample_retrievers


def run_config(index, retrievers, script=None, thread="t1", **knobs):
    """A run's config (its thread), its scripted model and its context (the resources and knobs)."""
    model = ScriptedChatModel(responder=script) if script else None
    resources = Resources(index, retrievers, ChatClient(model) if model else None)
    return {"configurable": {"thread_id": thread}}, model, Context(resources=resources, **knobs)


def test_parallel_branches_share_a_superstep_and_the_chain_follows(index, retrievers):
    graph = build_pankrag_graph(InMemorySaver())
    config, model, ctx = run_config(index, retrievers, Script())
    out = graph.invoke(
        {"question": "Who founded Halvard Instruments, where were they born, and who designed the opera house?"},
        config,
        context=ctx,
    )
    assert out["answer"].startswith("Edda Morlund founded it")
    history = list(reversed(list(graph.get_state_history(config))))
    first_answered = {}
    for snapshot in history:
        for sid, record in snapshot.values.get("subquestions", {}).items():
            if record["status"] != "pending":
                first_answered.setdefault(sid, snapshot.metadata["step"])
    assert first_answered["1:q1"] == first_answered["1:q2"]  # one superstep for both parallel branches
    assert first_answered["1:q3"] == first_answered["1:q1"] + 2  # schedule step, then solve
    final = graph.get_state(config).values["subquestions"]
    assert [final[s]["answer"] for s in ("1:q1", "1:q2", "1:q3")] == ["Edda Morlund", "Oskar Brenn", "Tarnholm"]
    q3 = final["1:q3"]
    assert q3["rephrased"] == "Where was Edda Morlund, founder of Halvard Instruments, born?"
    assert q3["rerank"] == {"alpha": 0.6, "beta": 0.4} and q3["notes"] == {}
    assert all(e["dependency_similarity"] is not None for e in q3["evidence"])
    assert all(e["dependency_similarity"] is None for e in final["1:q1"]["evidence"])
    # the rephrase prompt carried the dependency's answer
    rephrase_prompt = next(c[-1].content for c in model.calls if c[-1].content.startswith("Rewrite"))
    assert "Who founded Halvard Instruments? -> Edda Morlund" in rephrase_prompt
    # calls: plan + per sub-question (answer, + filter on ppr, + rephrase of the implicit dependency) + final
    # (the whole-question retrieval that the final ranking fuses in runs without the LLM filter)
    assert len(model.calls) == 1 + (2 + 1 + 3) + 1


def test_written_references_are_substituted_without_an_llm_rewrite(index, retrievers):
    plan = {
        "sub_questions": [
            PLAN["sub_questions"][0],
            {"id": "q2", "question": "Where was #q1 born?", "depends_on": ["q1"], "rephrase": True},
        ]
    }
    graph = build_pankrag_graph(InMemorySaver())
    config, model, ctx = run_config(index, retrievers, Script(plan=plan), thread="subst")
    graph.invoke({"question": "Where was the founder of Halvard Instruments born?"}, config, context=ctx)
    q2 = graph.get_state(config).values["subquestions"]["1:q2"]
    assert q2["rephrased"] == "Where was Edda Morlund born?" and q2["answer"] == "Tarnholm"
    assert not any(c[-1].content.startswith("Rewrite") for c in model.calls)
    assert len(model.calls) <= 2 + 2 * 2


def test_checkpoint_history_holds_every_sub_answer(index, retrievers):
    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, Script())
    graph.invoke(
        {
            "question": "Who founded Halvard Instruments, where was the founder born, and who designed the "
            "Tarnholm Opera House?"
        },
        config,
        context=ctx,
    )
    seen = {}
    for snapshot in graph.get_state_history(config):
        for sid, record in snapshot.values.get("subquestions", {}).items():
            if record.get("answer"):
                seen[sid] = record["answer"]
    assert seen == {"1:q1": "Edda Morlund", "1:q2": "Oskar Brenn", "1:q3": "Tarnholm"}


def test_streamed_events_arrive_in_order(index, retrievers):
    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, Script())
    events, tokens, nodes, steps = [], [], [], []
    question = "Who founded Halvard Instruments, where were they born, and who designed the opera house?"
    for namespace, mode, chunk in graph.stream(
        {"question": question}, config, context=ctx, stream_mode=["custom", "updates", "messages"], subgraphs=True
    ):
        if mode == "custom":
            events.append((chunk["event"], chunk.get("id")))
        elif mode == "updates" and not namespace:
            nodes += list(chunk)
        elif mode == "updates":
            steps += [(node, update) for node, update in chunk.items()]
        elif mode == "messages" and chunk[1]["langgraph_node"] == "answer":
            tokens.append(chunk[0].content)
    names = [e for e, _ in events]
    assert names[0] == "plan" and names[-1] == "final_answer"
    for sid in ("1:q1", "1:q2", "1:q3"):
        mine = [e for e, i in events if i == sid]
        assert mine[0] == "subquestion_started" and mine[-1] == "subquestion_answered"
        assert mine.index("subquestion_retrieved") < mine.index("subquestion_answered")
    assert names.index(next(e for e in names if e == "subquestion_answered")) < names.index("final_answer")
    assert events.index(("subquestion_answered", "1:q1")) < events.index(("subquestion_started", "1:q3"))
    assert ("subquestion_rephrased", "1:q3") in events
    assert nodes[0] == "plan" and nodes[-1] == "answer" and nodes.count("solve") == 3 and "fuse" in nodes
    # every step of every sub-question is its own node, and its update carries what it wrote
    step_names = [name for name, _ in steps]
    for name in ("rephrase", "route", "retrieve_ppr", "retrieve_local", "rerank", "sub_answer"):
        assert name in step_names
    assert all(update and update.get("record") for _, update in steps), [
        s for s in steps if not (s[1] and s[1].get("record"))
    ]
    assert step_names.count("sub_answer") == 3
    assert "".join(tokens).startswith("Edda Morlund founded it") and len(tokens) > 3


def test_bad_plans_fall_back_or_are_repaired(index, retrievers):
    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, Script(plan="I would rather not plan."), thread="bad")
    graph.invoke({"question": "Who founded Halvard Instruments?"}, config, context=ctx)
    values = graph.get_state(config).values
    assert values["planner"] == "fallback" and "planner reply rejected" in values["plan_notes"][0]
    assert "rule-based plan used" in values["plan_notes"][0]
    assert [r["question"] for r in values["subquestions"].values()] == ["Who founded Halvard Instruments?"]
    cyclic = {
        "sub_questions": [
            {"id": "q1", "question": "Who founded Halvard Instruments?", "depends_on": ["q2"]},
            {"id": "q2", "question": "Where was #q1 born?", "depends_on": ["q1", "q9"]},
        ]
    }
    config, _, ctx = run_config(index, retrievers, Script(plan=cyclic), thread="cyclic")
    graph.invoke({"question": "Where was the founder of Halvard Instruments born?"}, config, context=ctx)
    values = graph.get_state(config).values
    assert values["planner"] == "llm" and any("cycle" in n for n in values["plan_notes"])
    assert all(r["status"] == "answered" for r in values["subquestions"].values())


def test_chat_messages_input_and_a_follow_up_sees_the_first_turn(index, retrievers):
    graph = build_pankrag_graph(InMemorySaver())
    config, model, ctx = run_config(index, retrievers, Script(), thread="chat")
    first = graph.invoke({"messages": [HumanMessage("Who founded Halvard Instruments?")]}, config, context=ctx)
    assert isinstance(first["messages"][-1], AIMessage) and first["messages"][-1].content == first["answer"]
    second = graph.invoke({"messages": [HumanMessage("And where was she born?")]}, config, context=ctx)
    assert [type(m).__name__ for m in second["messages"]] == ["HumanMessage", "AIMessage", "HumanMessage", "AIMessage"]
    plan_prompts = [c[-1].content for c in model.calls if c[-1].content.startswith("You plan how")]
    assert "user: Who founded Halvard Instruments?" in plan_prompts[1]
    assert "assistant: Edda Morlund founded it" in plan_prompts[1]
    values = graph.get_state(config).values
    assert values["turn"] == 2 and values["asked"] == "And where was she born?"
    assert {r["turn"] for r in values["subquestions"].values()} == {1, 2}  # both turns stay inspectable


def test_two_threads_run_concurrently_without_mixing(index, retrievers):
    graph = build_pankrag_graph(InMemorySaver())
    questions = {
        "ta": "Which river flows through the city where the founder of Halvard Instruments was born?",
        "tb": "Who designed the opera house where The Glass River premiered?",
    }
    runs = {t: run_config(index, retrievers, None, thread=t) for t in questions}
    configs = {t: config for t, (config, _, _) in runs.items()}

    def run(thread):
        return graph.invoke({"question": questions[thread]}, configs[thread], context=runs[thread][2])

    with ThreadPoolExecutor(max_workers=2) as pool:
        outputs = dict(zip(questions, pool.map(run, questions)))
    assert outputs["ta"]["offline"] and outputs["ta"]["answer"].startswith("Selva")
    assert "Oskar Brenn" in outputs["tb"]["answer"]
    for thread, question in questions.items():
        values = graph.get_state(configs[thread]).values
        assert values["asked"] == question
        assert all(r["turn"] == 1 for r in values["subquestions"].values())


def test_offline_answer_reads_like_an_answer_with_its_sentence_citation_and_confidence(index, retrievers):
    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, None, thread="offline")
    out = graph.invoke(
        {"question": "Which river flows through the city where the founder of Halvard Instruments was born?"},
        config,
        context=ctx,
    )
    assert out["offline"] and out["short_answer"] == "Selva"
    cited = out["citations"][0]
    assert (
        out["answer"] == 'Selva — "The river Selva flows through Tarnholm and enters the Grey Sea at its harbour." [1]'
    )
    assert cited["titles"] == ["Tarnholm"] and cited["sources"][0].endswith("tarnholm.md")
    assert 0.3 < out["confidence"] <= 1.0


@pytest.mark.parametrize(
    "question, hops",
    [
        (
            "Which river flows through the city where the founder of Halvard Instruments was born?",
            [["Halvard Instruments"], ["Edda Morlund"], ["Tarnholm"]],
        ),  # rank fusion alone put Tarnholm fourth
        ("Who was born first, Edda Morlund or Piet Sarandon?", [["Edda Morlund"], ["Piet Sarandon"]]),
        # planned as "... founded by which engineer?" then "#1 was born in which city?"
        (
            "Halvard Instruments was founded by an engineer who was born in which city?",
            [["Halvard Instruments"], ["Edda Morlund"]],
        ),
    ],
)
def test_the_final_ranking_starts_with_the_passages_the_chain_read_its_answers_from(index, retrievers, question, hops):
    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, None, thread="chain-first")
    graph.invoke({"question": question}, config, context=ctx)
    values = graph.get_state(config).values
    read = [r["sources"][0] for r in (values["subquestions"][sid] for sid in values["plan"]) if r["candidates"]]
    top = values["evidence"][: len(hops)]
    assert [e["id"] for e in top] == read and [e["titles"] for e in top] == hops


@pytest.mark.parametrize("mode", ["no_planning", "naive", "no_rerank"])
def test_ablation_modes(index, retrievers, mode):
    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, None, thread=mode, mode=mode)
    graph.invoke(
        {"question": "Which river flows through the city where the founder of Halvard Instruments was born?"},
        config,
        context=ctx,
    )
    records = list(graph.get_state(config).values["subquestions"].values())
    if mode == "no_rerank":
        assert len(records) == 3 and all(e["dependency_similarity"] is None for r in records for e in r["evidence"])
    else:
        assert len(records) == 1 and records[0]["route"] == ("dense" if mode == "naive" else "ppr")


def test_propex_graph_with_filter_and_its_dense_fallback(index, retrievers):
    graph = build_propex_graph()
    config, _, ctx = run_config(index, retrievers, Script(keep=[1, 2]), thread="p1")
    out = graph.invoke({"question": "Where was Ana Keldor born?"}, config, context=ctx)
    assert out["answer"].startswith("Ludvik") and out["passages"]
    config, _, ctx = run_config(index, retrievers, Script(keep=[]), thread="p2")
    state = graph.invoke({"question": "Where was Ana Keldor born?"}, config, context=ctx)
    dense = retrievers.dense("Where was Ana Keldor born?")
    assert [p["id"] for p in state["passages"]] == [e.id for e in dense]


# --- the graph as Studio shows it: a node per step, human review of the plan, time travel ---------------

DEMO = "Which river flows through the city where the founder of Halvard Instruments was born?"


def test_every_step_is_a_node_of_the_drawn_graph():
    nodes = set(build_pankrag_graph().get_graph(xray=True).nodes)
    for step in (
        "plan",
        "review_plan",
        "fuse",
        "answer",
        "solve:rephrase",
        "solve:route",
        "solve:retrieve_local",
        "solve:retrieve_community",
        "solve:retrieve_ppr",
        "solve:retrieve_dense",
        "solve:rerank",
        "solve:sub_answer",
    ):
        assert step in nodes


def test_a_running_sub_question_is_visible_in_its_subgraph_state(index, retrievers):
    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, None, thread="visible")
    seen = []
    for namespace, update in graph.stream(
        {"question": DEMO}, config, context=ctx, stream_mode="updates", subgraphs=True
    ):
        if namespace and "rerank" in update:
            state = graph.get_state(config, subgraphs=True)
            running = [t.state.values["record"] for t in state.tasks if t.state is not None and t.state.values]
            seen += [r for r in running if r.get("evidence") and r.get("answer") is None]
    assert {r["id"] for r in seen} == {"1:q1", "1:q2", "1:q3"}
    assert all(r["route"] == "ppr" and r["status"] == "running" for r in seen)


def test_review_plan_stops_and_resumes_with_an_edited_plan(index, retrievers):
    from langgraph.types import Command

    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, None, thread="review", review_plan=True)
    graph.invoke({"question": DEMO}, config, context=ctx)
    paused = graph.get_state(config)
    assert paused.next == ("review_plan",)
    shown = paused.tasks[0].interrupts[0].value
    assert [s["id"] for s in shown["sub_questions"]] == ["q1", "q2", "q3"]
    # a refused edit asks again, with the reason
    graph.invoke(Command(resume=[]), config, context=ctx)
    assert "refused" in graph.get_state(config).tasks[0].interrupts[0].value["problem"]
    edited = [
        {"id": "q1", "question": "Who founded Halvard Instruments?"},
        {"id": "q2", "question": "In which city was #q1 born?", "route": "dense"},
    ]
    out = graph.invoke(Command(resume=edited), config, context=ctx)
    values = graph.get_state(config).values
    q2 = values["subquestions"]["1:q2"]
    assert values["planner"] == "reviewed" and values["plan"] == ["1:q1", "1:q2"]
    assert (
        q2["depends_on"] == ["1:q1"]
        and q2["route"] == "dense"
        and q2["rephrased"] == "In which city was Edda Morlund born?"
    )
    assert values["subquestions"]["1:q3"]["status"] == "dropped"
    assert out["short_answer"] == q2["answer"] == "Tarnholm"


def test_a_fork_with_an_edited_sub_answer_recomputes_only_what_depends_on_it(index, retrievers):
    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, None, thread="fork")
    graph.invoke({"question": DEMO}, config, context=ctx)
    before = graph.get_state(config).values["subquestions"]
    assert before["1:q2"]["answer"] == "Tarnholm"
    fork = graph.update_state(
        config, {"subquestions": {"1:q2": {"answer": "Kessel", "confidence": 1.0}}}, as_node="schedule"
    )
    solved = [
        update["sub_answer"]["record"]["id"]
        for namespace, update in graph.stream(None, fork, context=ctx, stream_mode="updates", subgraphs=True)
        if namespace and "sub_answer" in update
    ]
    after = graph.get_state(config).values
    assert solved == ["1:q3"]  # q1 and q2 are kept; only q3 depended on the edit
    assert after["subquestions"]["1:q3"]["rephrased"] == "Which river flows through Kessel?"
    assert after["short_answer"] == after["subquestions"]["1:q3"]["answer"] == "Amsel"
    assert after["subquestions"]["1:q1"] == before["1:q1"]


def test_pausing_before_a_step_shows_the_sub_question_there(index, retrievers):
    from langgraph.types import Command

    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, None, thread="pause", pause_before=["rerank"])
    graph.invoke({"question": "Where was Ana Keldor born?"}, config, context=ctx)
    state = graph.get_state(config, subgraphs=True)
    paused = state.tasks[0].state
    assert paused.next == ("rerank",) and state.tasks[0].interrupts[0].value["paused_before"] == "rerank"
    record = paused.values["record"]
    assert record["evidence"] and record["answer"] is None and record["route"] == "ppr"
    out = graph.invoke(Command(resume=True), config, context=ctx)
    assert out["short_answer"] == "Ludvik"


class _Holding(ScriptedChatModel):
    """The scripted model, but the sub-answer of the question containing ``held`` returns only once ``release``
    is set (waited for outside the model's lock, so the other branch runs meanwhile)."""

    held: str = ""
    release: Any = None

    def _answer(self, messages):
        text = super()._answer(messages)
        prompt = messages[-1].content
        if prompt.startswith("Answer the question using only") and self.held in prompt.split("Question:")[-1]:
            assert self.release.wait(10), "the other branch never answered"
        return text


def test_the_state_does_not_depend_on_which_parallel_branch_finishes_first(index, retrievers):
    """The two independent sub-questions finish in one order, then in the other (one's model call held until the
    other's answer was streamed): records, evidence, answer and citations are the same."""
    question = "Who founded Halvard Instruments, where were they born, and who designed the opera house?"
    finished, states = [], []
    for held, first in (("designed the Tarnholm", "1:q1"), ("founded Halvard", "1:q2")):
        release = threading.Event()
        model = _Holding(responder=Script(), held=held, release=release)
        ctx = Context(resources=Resources(index, retrievers, ChatClient(model)))
        graph, config = build_pankrag_graph(InMemorySaver()), {"configurable": {"thread_id": held}}
        order = []
        for _, event in graph.stream({"question": question}, config, context=ctx, stream_mode="custom", subgraphs=True):
            if event.get("event") == "subquestion_answered":
                order.append(event["id"])
                release.set()
        finished.append(order[:2])
        assert order[0] == first
        state = graph.get_state(config).values
        states.append({k: state[k] for k in ("plan", "subquestions", "evidence", "answer", "citations")})
    assert finished == [["1:q1", "1:q2"], ["1:q2", "1:q1"]]
    assert states[0] == states[1]


def test_each_hop_is_read_knowing_what_the_hops_before_answered(index, retrievers, monkeypatch):
    # a hop never answers what the one before it answered: "Louisville's park lies in which neighbourhood?" read
    # with the state as the first hop's second candidate had answered the city itself
    import agent.subquestion

    seen: dict[str, list[str]] = {}
    read = agent.subquestion.read_answer

    def recording(question, evidence, embedder, k=3, pronoun_of=None, given=()):
        seen[question] = list(given)
        return read(question, evidence, embedder, k, pronoun_of, given)

    monkeypatch.setattr(agent.subquestion, "read_answer", recording)
    graph = build_pankrag_graph(InMemorySaver())
    config, _, ctx = run_config(index, retrievers, None, thread="given")
    question = "Which river flows through the city where the founder of Halvard Instruments was born?"
    assert graph.invoke({"question": question}, config, context=ctx)["short_answer"] == "Selva"
    assert "edda morlund" in seen["In which city was Edda Morlund born?"]  # the first hop's answer
    assert seen["Which river flows through Tarnholm?"] == ["tarnholm"]  # the second's ("... was #1 born?" names none)
