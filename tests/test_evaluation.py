import json

import pytest

from graph_store.errors import InputError
from graph_store.llm import ChatClient
from kgrag.evaluation.datasets import Question, generic, hotpotqa, musique
from kgrag.evaluation.metrics import (
    context_precision,
    context_recall,
    exact_match,
    faithfulness,
    normalize_answer,
    pairwise_win_rate,
    recall_at,
    token_f1,
)
from kgrag.evaluation.runner import evaluate, summarise, write_report
from tests.helpers import ScriptedChatModel


def test_answer_normalisation_em_and_f1():
    assert normalize_answer("The  Selva, river!") == "selva river"
    assert exact_match("the Selva", ["Selva"]) == 1.0 and exact_match("Selva river", ["Selva"]) == 0.0
    assert exact_match("USA", ["United States", "U.S.A."]) == 1.0  # aliases
    assert token_f1("Selva river", ["the Selva"]) == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert token_f1("Amsel", ["Selva", "Amsel river"]) == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert token_f1("", ["x"]) == 0.0 and token_f1("a the", ["an"]) == 0.0


def test_recall_at_k():
    assert recall_at(["a", "b", "c"], ["c", "z"], 2) == 0.0
    assert recall_at(["a", "b", "c"], ["c", "z"], 3) == 0.5
    assert recall_at(["a"], [], 5) == 0.0


def judge(*answers):
    return ChatClient(ScriptedChatModel(script=list(answers)))


def test_pairwise_judge_averages_both_orders():
    a_first = {
        d: {"winner": "Answer 1"}
        for d in ("comprehensiveness", "diversity", "logicality", "relevance", "coherence", "empowerment")
    }
    b_first = {
        **{d: {"winner": "Answer 2"} for d in a_first},
        "diversity": {"winner": "Answer 1"},
        "coherence": {"winner": "Tie"},
    }
    result = pairwise_win_rate(judge(json.dumps(a_first), json.dumps(b_first)), "q", "A", "B")
    assert result["comprehensiveness"] == 1.0  # A wins in both orders
    assert result["diversity"] == 0.5  # A first, then B (in first position) wins: split
    assert result["coherence"] == 0.75  # a win and a tie


def test_pairwise_judge_handles_malformed_verdicts():
    good = json.dumps(
        {
            d: {"winner": "Answer 2"}
            for d in ("comprehensiveness", "diversity", "logicality", "relevance", "coherence", "empowerment")
        }
    )
    one_bad = pairwise_win_rate(judge("I prefer the first.", good), "q", "A", "B")
    assert one_bad["relevance"] == 1.0  # only the second order counted: A was "Answer 2" there
    both_bad = pairwise_win_rate(judge("nope", "still nope"), "q", "A", "B")
    assert all(v is None for v in both_bad.values())


def test_ragas_style_judges():
    assert faithfulness(judge('{"claims": [{"supported": true}, {"supported": false}]}'), "q", "a", ["c"]) == 0.5
    assert context_recall(judge('{"statements": [{"attributed": true}]}'), "gold", ["c"]) == 1.0
    # useful at ranks 1 and 3: mean of precision@1 = 1 and precision@3 = 2/3
    assert context_precision(judge('{"useful": [true, false, true]}'), "q", "g", ["a", "b", "c"]) == pytest.approx(
        5 / 6
    )
    with pytest.raises(ValueError, match="malformed"):
        faithfulness(judge("no verdict"), "q", "a", ["c"])


def test_loaders_on_fixture_files(tmp_path):
    (tmp_path / "musique_corpus.json").write_text(
        json.dumps([{"title": "A", "text": "A is in B."}, {"title": "B", "text": "B is in C."}])
    )
    (tmp_path / "musique_dev.json").write_text(
        json.dumps(
            [
                {
                    "id": "m1",
                    "question": "Where is the place A is in?",
                    "answer": "C",
                    "answer_aliases": ["c"],
                    "paragraphs": [
                        {"idx": 0, "title": "A", "paragraph_text": "A is in B.", "is_supporting": True},
                        {"idx": 1, "title": "B", "paragraph_text": "B is in C.", "is_supporting": True},
                    ],
                    "question_decomposition": [
                        {"id": 1, "question": "A >> located in", "answer": "B", "paragraph_support_idx": 0},
                        {"id": 2, "question": "#1 >> located in", "answer": "C", "paragraph_support_idx": 1},
                    ],
                }
            ]
        )
    )
    docs, questions = musique(tmp_path)
    assert len(docs) == 2 and questions[0].gold_doc_ids == [docs[0].id, docs[1].id]
    assert [h["doc_id"] for h in questions[0].hops] == [docs[0].id, docs[1].id]
    (tmp_path / "hotpotqa_corpus.json").write_text(json.dumps({"X": ["X was ", "born."], "Y": ["Y."]}))
    (tmp_path / "hotpotqa_dev.json").write_text(
        json.dumps([{"_id": "h1", "question": "q", "answer": "a", "supporting_facts": [["X", 0], ["X", 1], ["Y", 0]]}])
    )
    docs, questions = hotpotqa(tmp_path)
    assert docs[0].text == "X was born." and len(questions[0].gold_doc_ids) == 2
    (tmp_path / "corpus.jsonl").write_text('{"id": "d1", "title": "T", "text": "Some text."}\n')
    (tmp_path / "qs.json").write_text(json.dumps([{"question": "q?", "answer": "a", "gold": ["T"]}]))
    docs, questions = generic(tmp_path / "qs.json", tmp_path / "corpus.jsonl")
    assert questions[0].gold_doc_ids == ["d1"]
    (tmp_path / "bad.json").write_text(json.dumps([{"question": "q?", "gold": ["missing"]}]))
    with pytest.raises(InputError, match="not in"):
        generic(tmp_path / "bad.json", tmp_path / "corpus.jsonl")


@pytest.fixture
def resources(sample_resources):
    return sample_resources


QUESTIONS = [
    Question(
        "e1",
        "Which river flows through the city where the founder of Halvard Instruments was born?",
        "Selva",
        ["the Selva"],
        [],
        [],
    ),
    Question("e2", "Who designed the opera house where The Glass River premiered?", "Oskar Brenn", [], [], []),
    Question("e3", "Where was Ana Keldor born?", "Ludvik", [], [], []),
]


def test_resumed_evaluation_equals_an_uninterrupted_one(resources, tmp_path, sample_docs):
    titles = {d.title: d.id for d in sample_docs}
    QUESTIONS[2].gold_doc_ids = [titles["Ana Keldor"]]
    systems = ["bm25", "pankrag_full"]
    full = evaluate(resources, QUESTIONS, systems, tmp_path / "full", progress=False)
    # an interrupted run: one question done, then a line cut by a kill
    partial = tmp_path / "resumed"
    evaluate(resources, QUESTIONS[:1], systems, partial, progress=False)
    with (partial / "pankrag_full.jsonl").open("a") as f:
        f.write('{"id": "e2", "question": "cut by a ki')
    resumed = evaluate(resources, QUESTIONS, systems, partial, progress=False)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
    assert {s: strip(r) for s, r in resumed.items()} == {s: strip(r) for s, r in full.items()}
    assert len((partial / "pankrag_full.jsonl").read_text().splitlines()) == 3
    rows = summarise(full)
    pankrag = next(r for r in rows if r["system"] == "pankrag_full")
    assert pankrag["em"] > 0 and pankrag["recall@5"] == 100.0
    write_report(rows, tmp_path / "full", "test")
    assert (tmp_path / "full" / "summary.md").read_text().startswith("# test")
    assert (tmp_path / "full" / "answers.png").stat().st_size > 1000


def test_judged_scores_and_pairwise_through_the_runner(resources, tmp_path):
    from kgrag.evaluation.runner import pairwise

    def respond(messages):
        prompt = messages[-1].content
        if prompt.startswith("Split the answer"):
            return '{"claims": [{"supported": true}]}'
        if prompt.startswith("Rate how directly"):
            return '{"score": 0.5}'
        if prompt.startswith("For each numbered context"):
            return '{"useful": [true]}'
        if prompt.startswith("Split the reference"):
            return "garbage"  # a malformed verdict scores None
        return json.dumps(
            {
                d: {"winner": "Answer 1"}
                for d in ("comprehensiveness", "diversity", "logicality", "relevance", "coherence", "empowerment")
            }
        )

    judge_client = ChatClient(ScriptedChatModel(responder=respond))
    results = evaluate(resources, QUESTIONS[:1], ["bm25", "naive_dense"], tmp_path, progress=False, judge=judge_client)
    row = results["bm25"][0]
    assert (row["faithfulness"], row["answer_relevance"], row["context_precision"], row["context_recall"]) == (
        1.0,
        0.5,
        1.0,
        None,
    )
    assert summarise(results)[0]["faithfulness"] == 100.0
    wins = pairwise(judge_client, results, "bm25", "naive_dense")
    assert wins["relevance"] == 50.0  # "Answer 1" wins in both orders: each system once


def test_an_answer_does_not_depend_on_the_questions_asked_before(
    sample_index, sample_retrievers, tmp_path, monkeypatch
):
    """The same questions with cold caches, then in the reverse order on the caches the first run warmed (the
    reader's parses, the embedder's vectors): every row (answer, retrieved documents, scores) is the same."""
    from agent.offline import parsing
    from agent.resources import Resources

    monkeypatch.setattr(
        parsing, "_cache", parsing.TextCache(parsing.CACHE_SIZE)
    )  # cold: nothing parsed yet in this process's cache
    resources = Resources(sample_index, sample_retrievers, None)
    cold = evaluate(resources, QUESTIONS, ["pankrag_full"], tmp_path / "cold", progress=False)["pankrag_full"]
    warm = evaluate(resources, QUESTIONS[::-1], ["pankrag_full"], tmp_path / "warm", progress=False)["pankrag_full"]
    strip = lambda rows: {r["id"]: {k: v for k, v in r.items() if k != "seconds"} for r in rows}  # noqa: E731
    assert strip(cold) == strip(warm)
    assert all(r["docs"] for r in cold)  # the retrieved documents are in each row, to compare runs on them
