import numpy as np
import pytest

from agent.planning import parse_plan, references, rule_based_plan, substitute_references, validate_plan
from agent.reranking import rerank_by_dependencies
from graph_store.retrieval import Evidence


def topological_levels(plan: list[dict]) -> list[list[str]]:
    """Sub-question ids grouped into waves: every id's dependencies lie in earlier waves (raises on a cycle)."""
    remaining = {p["id"]: set(p["depends_on"]) for p in plan}
    levels: list[list[str]] = []
    done: set[str] = set()
    while remaining:
        ready = [sid for sid, deps in remaining.items() if deps <= done]
        if not ready:
            raise ValueError("plan has a cycle")
        levels.append(ready)
        done.update(ready)
        for sid in ready:
            del remaining[sid]
    return levels


def test_reference_forms_are_substituted():
    ids = ["q1", "q2", "1.1"]
    answers = {"q1": "Edda Morlund", "q2": "Tarnholm", "1.1": "Selva"}
    text = "Was #1 born in [A2]? Does <A1-1> flow there? Ask {q1} and #q2, not #9."
    assert substitute_references(text, answers, ids) == \
        "Was Edda Morlund born in Tarnholm? Does Selva flow there? Ask Edda Morlund and Tarnholm, not #9."
    assert references(text, ids) == ["q1", "q2", "1.1"]


def test_unanswered_references_stay_visible():
    assert substitute_references("Where was #2 born?", {"q1": "x"}, ["q1", "q2"]) == "Where was #2 born?"


def test_valid_plan_with_parallel_branches_and_a_chain():
    raw = parse_plan('```json\n{"sub_questions": ['
                     '{"id": "q1", "question": "Who founded A?", "route": "ppr"},'
                     '{"id": "q2", "question": "Who founded B?", "route": "local"},'
                     '{"id": "q3", "question": "Are #q1 and #q2 siblings?", "depends_on": ["q1", "q2"], "rephrase": true}'
                     ']}\n```')
    plan, notes = validate_plan(raw, "q")
    assert [p["relation"] for p in plan] == ["parallel", "parallel", "progress"]
    assert plan[2]["depends_on"] == ["q1", "q2"] and plan[2]["rephrase"] and notes == []
    assert topological_levels(plan) == [["q1", "q2"], ["q3"]]


def test_invalid_plan_is_repaired():
    raw = [{"id": "a", "question": "First?", "depends_on": ["zzz"], "route": "teleport", "kind": "weird"},
           {"id": "a", "question": "Second, about #1?"},
           {"question": ""},
           {"id": "c", "question": "Third?", "depends_on": ["c"]}]
    plan, notes = validate_plan(raw, "q")
    assert [p["id"] for p in plan] == ["a", "q2", "c"]
    assert plan[0]["depends_on"] == [] and plan[0]["route"] == "ppr" and plan[0]["kind"] == "specific"
    assert plan[1]["depends_on"] == ["a"]  # the text's reference became a dependency
    assert plan[2]["depends_on"] == []  # self-dependency dropped
    assert any("unknown dependency 'zzz'" in n for n in notes) and any("duplicate id" in n for n in notes)


def test_cycles_are_broken():
    raw = [{"id": "q1", "question": "A?", "depends_on": ["q3"]}, {"id": "q2", "question": "B?", "depends_on": ["q1"]},
           {"id": "q3", "question": "C?", "depends_on": ["q2"]}]
    plan, notes = validate_plan(raw, "q")
    assert any("closed a cycle" in n for n in notes)
    assert sum(len(l) for l in topological_levels(plan)) == 3


def test_plan_size_is_bounded():
    plan, notes = validate_plan([{"question": f"Q{i}?"} for i in range(10)], "q", max_subquestions=4)
    assert len(plan) == 4 and "cut from 10 to 4" in notes[0]


@pytest.mark.parametrize("raw", ["", "no plan here", '{"sub_questions": []}', '{"other": 1}'])
def test_unparsable_plans_raise(raw):
    with pytest.raises(ValueError):
        parse_plan(raw)


def test_offline_planner_builds_a_chain():
    plan, _ = rule_based_plan("Which river flows through the city where the founder of Halvard Instruments was born?")
    assert [p["question"] for p in plan] == ["Who is the founder of Halvard Instruments?", "Where was #1 born?",
                                             "Which river flows through #2?"]
    assert [p["depends_on"] for p in plan] == [[], ["q1"], ["q2"]]
    single, _ = rule_based_plan("What are the main themes of these documents?")
    assert len(single) == 1 and single[0]["route"] == "community" and single[0]["kind"] == "abstract"


def _evidence(scores):
    return [Evidence(id=f"e{i}", kind="chunk", text="t", score=s, retriever="test") for i, s in enumerate(scores)]


def test_reranking_arithmetic():
    evidence = _evidence([1.0, 0.5])
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    dependencies = np.array([[0.0, 1.0]], dtype=np.float32)  # like the second item only
    ranked = rerank_by_dependencies(evidence, vectors, dependencies, alpha=0.6, beta=0.4)
    assert [e["id"] for e in ranked] == ["e1", "e0"]
    assert ranked[0]["score"] == pytest.approx(0.6 * 0.5 + 0.4 * 1.0)
    assert ranked[1]["score"] == pytest.approx(0.6 * 1.0 + 0.4 * 0.0)
    assert ranked[0]["retrieval_score"] == 0.5 and ranked[0]["dependency_similarity"] == 1.0


def test_no_dependencies_means_no_reranking():
    ranked = rerank_by_dependencies(_evidence([0.3, 1.0]), None, None, 0.6, 0.4)
    assert [e["score"] for e in ranked] == [0.3, 1.0] and ranked[0]["dependency_similarity"] is None
