"""The final answer, for both graphs: numbered citations, the extractive text, the model's answer checked before
it is kept, and the state update (with its streamed event and chat message)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from agent.offline.questions import operation_for
from agent.prompting import text_of
from agent.records import Citation, EvidenceItem, SubQuestionRecord, asked, is_not_found
from agent.resources import Resources
from agent.validation import copied_example, names_an_option, repeats_question, unusable_answer
from prompts import render_prompt

CITED_CHARS = 600
CITATION_MARK = re.compile(r"\[\d+\]")
# A sentence's end: . ! or ? before a space or the end, not after an initial or a short title ("J.", "St.").
SENTENCE_END = re.compile(r"(?<!\b[A-Z])(?<!\b[A-Z][a-z])[.!?](?=\s|$)")


def citations(res: Resources, items: Sequence[EvidenceItem]) -> list[Citation]:
    """The evidence as numbered sources, with their documents' sources."""
    # the generation answered from, not the record; only the cited documents (reading every one cost 100k rows)
    sources = res.retrievers.store.document_sources({d for e in items for d in e["doc_ids"]})
    return [
        Citation(
            n=n,
            evidence_id=e["id"],
            kind=e["kind"],
            doc_ids=e["doc_ids"],
            titles=e["titles"] or _own_title(e),
            sources=[sources.get(d, "") for d in e["doc_ids"]],
            text=e["text"][:CITED_CHARS],
        )
        for n, e in enumerate(items, 1)
    ]


def _own_title(item: EvidenceItem) -> list[str]:
    """A community report, an entity or a fact cites no document title: it is named by its own text."""
    first = item["text"].split("\n", 1)[0].strip()
    if item["kind"] == "report":  # "title" (community route) or "title: summary" (local route)
        return [f"community report: {first.split(': ', 1)[0][:80]}"]
    if item["kind"] in ("entity", "fact"):
        return [f"{item['kind']}: {first[:80]}"]
    return []


def marks(record: SubQuestionRecord, number_of: Mapping[str, int]) -> str:
    """The citation marks ("[1][3]") of a sub-answer's sources."""
    return "".join(f"[{number_of[s]}]" for s in record["sources"] if s in number_of)


def extractive_text(finals: Sequence[SubQuestionRecord], number_of: Mapping[str, int]) -> str:
    """Offline: each final answer with the sentence it rests on and its citation, or what was not found."""
    parts = []
    for r in finals:
        if is_not_found(r["answer"]):
            parts.append(f'Not found: the documents do not answer "{asked(r)}".')
            continue
        sentence = (r.get("supporting_sentence") or "").strip()
        support = f' — "{sentence}"' if sentence and sentence != r["answer"] else ""
        parts.append(f"{r['answer']}{support} {marks(r, number_of)}".strip())
    return "\n".join(parts)


def model_answer(
    res: Resources, prompt: str, variables: Mapping[str, str], config: RunnableConfig
) -> tuple[BaseMessage, str | None]:
    """The model's answer to a final-answer prompt, and why it is unusable (None when it may stand): empty,
    only citations, runaway, copied from the prompt's worked example, a restatement of the question, or, for
    "Which is older, A or B?", an answer that names neither A nor B."""
    model = res.model_for("answer")
    assert model is not None
    message = model.invoke([HumanMessage(render_prompt(prompt, **variables))], config, task="final_answer")
    text, question = text_of(message), variables["question"]
    operation = operation_for(question) or {}
    options = operation.get("labels", []) if operation.get("op") in ("compare", "choose") else []
    return message, (
        unusable_answer(text)
        or copied_example(text, prompt, "\n".join(variables.values()))
        or repeats_question(text, question)
        or names_an_option(text, options)
    )


def with_marks(text: str, records: Sequence[SubQuestionRecord], number_of: Mapping[str, int]) -> str:
    """A model's answer with citation marks: its own, or else those of the sub-answers it rests on (the first
    source when they have none), so every answer shows where it comes from."""
    if CITATION_MARK.search(text):
        return text
    cited = "".join(dict.fromkeys(marks(r, number_of) for r in records)) or ("[1]" if number_of else "")
    return f"{text.rstrip()} {cited}".rstrip()


def short_of(text: str) -> str:
    """A model answer's short answer (the answer alone, as the evaluation scores it): the prompts ask it to start
    with the answer, so what comes before its first citation mark or the end of its first sentence, unmarked."""
    lead = CITATION_MARK.split(text, maxsplit=1)[0]
    end = SENTENCE_END.search(lead)
    lead = (lead[: end.start()] if end else lead).strip(" \t\n,;:")
    return lead or CITATION_MARK.sub("", text).strip()


def final_update(
    write: Callable[[Any], None],
    *,
    text: str,
    short: str,
    confidence: float,
    cited: list[Citation],
    notes: dict[str, str],
    message: BaseMessage | None,
) -> dict[str, Any]:
    """The answer's state update (also appended as an AI message, so the graph drops into a chatbot) and its
    streamed ``final_answer`` event."""
    write(
        {
            "event": "final_answer",
            "answer": text,
            "confidence": confidence,
            "notes": notes,
            "citations": [c["n"] for c in cited],
        }
    )
    return {
        "answer": text,
        "short_answer": short,
        "confidence": confidence,
        "citations": cited,
        "notes": notes,
        "messages": [AIMessage(text, id=getattr(message, "id", None))],
    }
