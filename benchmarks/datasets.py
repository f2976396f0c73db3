"""Readers for the benchmark data in ../shared/data (MuSiQue, HotpotQA, the recorded GPT-3.5 OpenIE)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from graph_store.documents import Document
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
        gold = [paragraphs[p["idx"]] for p in q["paragraphs"] if p["is_supporting"] and paragraphs[p["idx"]]]
        hops = [{"question": h["question"], "answer": h["answer"], "doc_id": paragraphs.get(h["paragraph_support_idx"])}
                for h in q["question_decomposition"]]
        questions.append(Question(q["id"], q["question"], q["answer"], q.get("answer_aliases", []), gold, hops))
    return docs, questions


def hotpotqa(folder: Path) -> tuple[list[Document], list[Question]]:
    corpus = json.loads((folder / "hotpotqa_corpus.json").read_text())
    docs = [Document(text="".join(sentences), title=title) for title, sentences in corpus.items()]
    by_title = {d.title: d.id for d in docs}
    questions = []
    for q in json.loads((folder / "hotpotqa_dev.json").read_text()):
        titles = list(dict.fromkeys(t for t, _ in q["supporting_facts"]))
        questions.append(Question(q["_id"], q["question"], q["answer"], [], [by_title[t] for t in titles if t in by_title], []))
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
                relations.append(ExtractedRelation(subject=str(triple[0]), predicate=str(triple[1]), object=str(triple[2])))
        return ChunkExtraction(entities=entities, relations=relations)


def recall_at(ranked: list[str], gold: list[str], k: int) -> float:
    """HippoRAG's Recall@k: the share of a question's gold passages in the top k."""
    return sum(g in ranked[:k] for g in gold) / len(gold) if gold else 0.0
