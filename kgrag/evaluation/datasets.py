"""Dataset loaders: MuSiQue, HotpotQA, UltraDomain, the recorded GPT-3.5 OpenIE, and a generic format.

Generic format (for your own data): a corpus file that ``load_documents`` reads (JSON list of
{"title", "text"} or JSONL with optional "id"), and a questions file, a JSON list (or JSONL) of
{"id", "question", "answer", "aliases": [...], "gold": [titles or document ids of the passages
that hold the answer]}. Only "question" is required.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from graph_store.documents import Document, load_documents
from graph_store.errors import InputError
from graph_store.extraction import ChunkExtraction, ExtractedEntity, ExtractedRelation


@dataclass
class Question:
    id: str
    question: str
    answer: str
    aliases: list[str]
    gold_doc_ids: list[str]
    hops: list[dict]  # MuSiQue decomposition: {question, answer, doc_id}


def musique(folder: Path) -> tuple[list[Document], list[Question]]:
    corpus = json.loads((folder / "musique_corpus.json").read_text())
    docs = [Document(text=p["text"], title=p["title"]) for p in corpus]
    by_content = {(d.title, d.text): d.id for d in docs}
    questions = []
    for q in json.loads((folder / "musique_dev.json").read_text()):
        paragraphs = {p["idx"]: by_content.get((p["title"], p["paragraph_text"])) for p in q["paragraphs"]}
        gold = [doc for p in q["paragraphs"] if p["is_supporting"] and (doc := paragraphs[p["idx"]])]
        hops = [
            {"question": h["question"], "answer": h["answer"], "doc_id": paragraphs.get(h["paragraph_support_idx"])}
            for h in q["question_decomposition"]
        ]
        questions.append(Question(q["id"], q["question"], q["answer"], q.get("answer_aliases", []), gold, hops))
    return docs, questions


def hotpotqa(folder: Path) -> tuple[list[Document], list[Question]]:
    corpus = json.loads((folder / "hotpotqa_corpus.json").read_text())
    docs = [Document(text="".join(sentences), title=title) for title, sentences in corpus.items()]
    by_title = {d.title: d.id for d in docs}
    questions = []
    for q in json.loads((folder / "hotpotqa_dev.json").read_text()):
        titles = list(dict.fromkeys(t for t, _ in q["supporting_facts"]))
        questions.append(
            Question(q["_id"], q["question"], q["answer"], [], [by_title[t] for t in titles if t in by_title], [])
        )
    return docs, questions


class RecordedExtractor:
    """Replays recorded LLM extractions (entities and triples per passage) through the extraction interface."""

    uses_llm = False

    def __init__(self, path: Path):
        data = json.loads(path.read_text())
        self.name = f"recorded:{data.get('model', 'unknown')}"
        self.by_text = {d["text"].strip(): d for d in data["docs"]}

    def extract(self, text: str, title: str) -> ChunkExtraction:
        record = self.by_text.get(text.strip())
        if record is None:  # a passage split into several chunks: the recorded passage that contains it
            record = next((d for t, d in self.by_text.items() if text.strip() in t), None)
        if record is None:
            return ChunkExtraction(status="failed", error="no recorded extraction for this chunk")
        entities = [ExtractedEntity(name=e) for e in record["extracted_entities"] if str(e).strip()]
        relations = []
        for triple in record["extracted_triples"]:
            if len(triple) == 3 and all(str(x).strip() for x in triple):
                relations.append(
                    ExtractedRelation(subject=str(triple[0]), predicate=str(triple[1]), object=str(triple[2]))
                )
        return ChunkExtraction(entities=entities, relations=relations)


def ultradomain(folder: Path) -> tuple[list[Document], list[Question]]:
    """Long documents and abstract questions (no gold answers: judged pairwise)."""
    docs = []
    for line in (folder / "ultradomain_mix_corpus.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            docs.append(Document(text=record["context"], title=record.get("title") or ""))
    questions = [
        Question(f"ud{n}", q["question"], q.get("answer", ""), [], [], [])
        for n, q in enumerate(json.loads((folder / "ultradomain_mix_questions.json").read_text()))
    ]
    return docs, questions


def generic(questions_path: Path, corpus_path: Path) -> tuple[list[Document], list[Question]]:
    docs = load_documents(corpus_path)
    by_title: dict[str, str] = {}
    for d in docs:
        by_title.setdefault(d.title, d.id)
    ids = {d.id for d in docs}
    text = questions_path.read_text(encoding="utf-8")
    try:
        records = (
            [json.loads(line) for line in text.splitlines() if line.strip()]
            if questions_path.suffix == ".jsonl"
            else json.loads(text)
        )
    except json.JSONDecodeError as exc:
        raise InputError(f"{questions_path}: not valid JSON ({exc.msg})") from None
    questions = []
    for n, r in enumerate(records, 1):
        if not isinstance(r, dict) or not str(r.get("question", "")).strip():
            raise InputError(f"{questions_path}: record {n} has no 'question'")
        gold = [g if g in ids else by_title.get(g) for g in r.get("gold", [])]
        if None in gold:
            raise InputError(f"{questions_path}: record {n} names gold passages that are not in {corpus_path}")
        questions.append(
            Question(
                str(r.get("id") or f"q{n}"),
                r["question"],
                str(r.get("answer", "")),
                list(r.get("aliases", [])),
                [g for g in gold if g],
                [],
            )
        )
    return docs, questions


LOADERS = {"musique": musique, "hotpotqa": hotpotqa, "ultradomain": ultradomain}
