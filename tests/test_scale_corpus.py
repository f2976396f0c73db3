"""The scale benchmark's synthetic corpus (benchmarks/scale_corpus.py): deterministic, its questions answerable from
its documents; and an index with every collection static (embedding_provider=minilm-static), as the benchmark builds."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from graph_store.errors import IndexStoreError
from graph_store.settings import load_settings

_SPEC = importlib.util.spec_from_file_location(
    "scale_corpus", Path(__file__).resolve().parent.parent / "benchmarks" / "scale_corpus.py"
)
assert _SPEC and _SPEC.loader
scale_corpus = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("scale_corpus", scale_corpus)  # (its dataclass looks its module up there)
_SPEC.loader.exec_module(scale_corpus)


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    scale_corpus.write_corpus(out, 400, seed=3, n_questions=20)
    return out


def test_the_corpus_is_deterministic_in_its_seed(corpus, tmp_path):
    scale_corpus.write_corpus(tmp_path / "again", 400, seed=3, n_questions=20)
    scale_corpus.write_corpus(tmp_path / "other", 400, seed=4, n_questions=20)
    for name in ("corpus.jsonl", "questions.jsonl"):
        assert (tmp_path / "again" / name).read_bytes() == (corpus / name).read_bytes()
        assert (tmp_path / "other" / name).read_bytes() != (corpus / name).read_bytes()


def test_documents_are_short_passages_with_distinct_titles(corpus):
    docs = _read(corpus / "corpus.jsonl")
    assert len(docs) == 400
    assert len({d["id"] for d in docs}) == len({d["title"] for d in docs}) == 400
    words = [len(d["text"].split()) for d in docs]
    assert min(words) >= 45 and max(words) <= 130, (min(words), max(words))
    assert all(d["title"] in d["text"] for d in docs)  # the document is about its title's entity


def test_every_question_is_answered_by_its_supporting_documents(corpus):
    docs = {d["id"]: d for d in _read(corpus / "corpus.jsonl")}
    questions = _read(corpus / "questions.jsonl")
    assert len(questions) == 20 and {q["shape"] for q in questions} == {
        "film-director-born",
        "company-founder-born",
        "film-director",
    }
    for q in questions:
        first = docs[q["supporting"][0]]
        assert first["title"] in q["question"]
        if q["shape"] == "film-director":
            assert f"directed by {q['answer']}." in first["text"]
            continue
        bridge = docs[q["supporting"][1]]  # the person the first document names, whose own document has the answer
        relation = "directed by" if q["shape"] == "film-director-born" else "founded by"
        assert f"{relation} {bridge['title']}" in first["text"]
        assert f"{bridge['title']} was born in {q['answer']} in " in bridge["text"]


def test_an_all_static_index_answers_the_corpus_questions_offline(tmp_path):
    from kgrag.api import KGRag
    from kgrag.evaluation.metrics import exact_match

    scale_corpus.write_corpus(tmp_path / "small", 150, seed=3, n_questions=5)
    settings = load_settings(
        environ={}, index_dir=tmp_path / "idx", embedding_provider="minilm-static", extraction="offline"
    )
    with KGRag(settings=settings) as rag:
        summary = rag.index(tmp_path / "small" / "corpus.jsonl")
        assert summary.stats["documents"] == 150
        vectors = rag.stats()["vectors"]
        assert vectors["chunks"] == summary.stats["chunks"] and vectors["entities"] == summary.stats["entities"]
        questions = _read(tmp_path / "small" / "questions.jsonl")
        right = [exact_match(rag.ask(q["question"]).short_answer, [q["answer"]]) for q in questions]
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["embedder"]["provider"] == "minilm-static"
    assert sorted(manifest["static_vectors"]) == ["chunks", "entities", "facts", "reports"]
    assert sum(right) >= 4, right  # (all 5 right when written)
    with pytest.raises(IndexStoreError, match="built with embeddings"):  # the model cannot read static vectors
        KGRag(settings=settings.replace(embedding_provider="minilm-onnx")).search("Where?", route="dense")
