"""Answer and retrieval metrics, and LLM judges (Ragas-style scores, PankRAG's pairwise win rate).

Judges take a ChatClient; their parsing and arithmetic are tested with a scripted judge.
"""

from __future__ import annotations

import re
import string
from collections import Counter

from langchain_core.messages import HumanMessage

from graph_store.llm import ChatClient, json_in_reply
from prompts import render_prompt

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(c for c in text.lower() if c not in set(string.punctuation))
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, golds: list[str]) -> float:
    return float(any(normalize_answer(prediction) == normalize_answer(g) for g in golds if g))


def token_f1(prediction: str, golds: list[str]) -> float:
    """Token-overlap F1, best over the gold answer and its aliases."""
    best = 0.0
    predicted = normalize_answer(prediction).split()
    for gold in golds:
        expected = normalize_answer(gold).split()
        common = sum((Counter(predicted) & Counter(expected)).values())
        if not predicted or not expected or common == 0:
            continue
        precision, recall = common / len(predicted), common / len(expected)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def recall_at(ranked: list[str], gold: list[str], k: int) -> float:
    """HippoRAG's Recall@k: the share of the gold passages found in the top k."""
    return sum(g in ranked[:k] for g in gold) / len(gold) if gold else 0.0


# --- LLM judges ---------------------------------------------------------------------------------------


def _judge(client: ChatClient, prompt: str, **variables) -> dict:
    raw = str(client.invoke([HumanMessage(render_prompt(prompt, **variables))]).content)
    data = json_in_reply(raw)
    if not isinstance(data, dict):
        raise ValueError(f"malformed verdict: {raw[:80]!r}")
    return data


def _fraction(values: list) -> float | None:
    flags = [bool(v) for v in values]
    return sum(flags) / len(flags) if flags else None


def faithfulness(client: ChatClient, question: str, answer: str, contexts: list[str]) -> float | None:
    """Ragas: the share of the answer's claims that the contexts support."""
    verdict = _judge(
        client, "judge_faithfulness", question=question, answer=answer, contexts="\n\n".join(contexts) or "(none)"
    )
    return _fraction([c.get("supported") for c in verdict.get("claims", []) if isinstance(c, dict)])


def answer_relevance(client: ChatClient, question: str, answer: str) -> float | None:
    """Ragas-style: how directly the answer addresses the question, 0-1 (judged)."""
    score = _judge(client, "judge_answer_relevance", question=question, answer=answer).get("score")
    return max(0.0, min(1.0, float(score))) if isinstance(score, (int, float)) else None


def context_precision(client: ChatClient, question: str, gold: str, contexts: list[str]) -> float | None:
    """Ragas: mean precision@k over the ranks k whose context is useful (rewards useful contexts ranked first)."""
    if not contexts:
        return None
    listing = "\n".join(f"{i}. {c[:800]}" for i, c in enumerate(contexts, 1))
    useful = _judge(client, "judge_context_precision", question=question, gold=gold, contexts=listing).get("useful", [])
    flags = [bool(v) for v in useful][: len(contexts)]
    if not any(flags):
        return 0.0
    precisions = [sum(flags[: k + 1]) / (k + 1) for k, flag in enumerate(flags) if flag]
    return sum(precisions) / len(precisions)


def context_recall(client: ChatClient, gold: str, contexts: list[str]) -> float | None:
    """Ragas: the share of the gold answer's statements that the contexts support."""
    verdict = _judge(client, "judge_context_recall", gold=gold, contexts="\n\n".join(contexts) or "(none)")
    return _fraction([s.get("attributed") for s in verdict.get("statements", []) if isinstance(s, dict)])


DIMENSIONS = ("comprehensiveness", "diversity", "logicality", "relevance", "coherence", "empowerment")


def pairwise_win_rate(client: ChatClient, question: str, answer_a: str, answer_b: str) -> dict[str, float | None]:
    """PankRAG's pairwise judge: per dimension, A's win share with both presentation orders averaged.

    1.0 = A wins in both orders, 0.5 = split or tie, 0.0 = B wins both; a malformed verdict in
    one order leaves the other's; in both, None.
    """
    results: dict[str, list[float]] = {d: [] for d in DIMENSIONS}
    for first, second, a_is_first in ((answer_a, answer_b, True), (answer_b, answer_a, False)):
        try:
            verdict = _judge(client, "judge_pairwise", question=question, answer_1=first, answer_2=second)
        except ValueError:
            continue
        for dimension in DIMENSIONS:
            winner = (
                str(
                    (verdict.get(dimension) or {}).get("winner", "")
                    if isinstance(verdict.get(dimension), dict)
                    else verdict.get(dimension, "")
                )
                .strip()
                .lower()
            )
            if winner in ("answer 1", "1", "answer_1"):
                results[dimension].append(1.0 if a_is_first else 0.0)
            elif winner in ("answer 2", "2", "answer_2"):
                results[dimension].append(0.0 if a_is_first else 1.0)
            elif winner in ("tie", "equal", "both"):
                results[dimension].append(0.5)
    return {d: (sum(v) / len(v) if v else None) for d, v in results.items()}
