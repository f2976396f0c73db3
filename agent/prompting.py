"""What nodes put into prompts and read back from chat messages: numbered evidence, resolved sub-answers, the
conversation so far, the question of a turn."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agent.records import SubQuestionRecord, asked

EVIDENCE_IN_PROMPT = 8


def text_of(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def history_of(messages: Sequence[BaseMessage], limit: int = 6) -> str:
    """The last turns of a conversation, one "user: ..." / "assistant: ..." line each."""
    lines = [
        f"{'user' if isinstance(m, HumanMessage) else 'assistant'}: {text_of(m)[:500]}"
        for m in messages
        if isinstance(m, (HumanMessage, AIMessage))
    ]
    return "\n".join(lines[-limit:]) or "(none)"


def resolved(records: Sequence[SubQuestionRecord]) -> str:
    """Sub-questions with their answers, one "- question -> answer" line each."""
    return "\n".join(f"- {asked(r)} -> {r['answer']}" for r in records)


def numbered(evidence: Sequence[Mapping[str, Any]], limit: int = EVIDENCE_IN_PROMPT) -> str:
    """Evidence for a prompt: numbered, quoted as data (a document cannot close the quote)."""
    lines = []
    for n, item in enumerate(evidence[:limit], 1):
        source = f" (from {', '.join(item['titles'])})" if item.get("titles") else ""
        lines.append(f"[{n}]{source} {json.dumps(item['text'][:1200], ensure_ascii=False)}")
    return "\n".join(lines) or "(no evidence)"


def read_question(state: Mapping[str, Any]) -> tuple[str, list[BaseMessage]]:
    """This turn's question, from ``question`` (then also recorded as a user message) or the last user message.

    Returns the question and the messages to append.
    """
    question = (state.get("question") or "").strip()
    if question:
        return question, [HumanMessage(question)]
    messages = state.get("messages") or []
    if messages and isinstance(messages[-1], HumanMessage) and text_of(messages[-1]).strip():
        return text_of(messages[-1]).strip(), []
    raise ValueError("no question: pass {'question': ...} or chat 'messages' ending with a user message")
