"""The OpenAI-compatible chat endpoint (streamed or not) and its model list.

In a stream the workflow's steps come first as ``reasoning_content`` deltas (front ends show them as
"thinking" or ignore them), then the answer as ``content``: the answer with numbered citations and a short
Markdown "Sources" list.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field

from fastapi import APIRouter, HTTPException, Request
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from graph_store.errors import KGRagError
from kgrag.api import Answer, KGRag, Step, Token
from kgrag.server.deps import (
    MODES,
    EventStream,
    JsonBody,
    Owner,
    Service,
    ServiceState,
    check_question,
    citations_for,
    conversation_id,
    field_of,
    no_turn,
    pick_model,
    public_error,
    run_question,
)

log = logging.getLogger("kgrag.server")
router = APIRouter()
ROLES = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage, "developer": SystemMessage}
MARKDOWN_MARKS = re.compile(r"([\\`*_\[\]()<>#!|~&])")  # backslash-escaped, they render as themselves
OFFLINE_NOTE = "Answered offline: the answer was extracted from the documents, no language model was used."


def markdown_text(text: str) -> str:
    """Text shown as itself in Markdown: a document's title is the document author's, never markup."""
    return MARKDOWN_MARKS.sub(r"\\\1", text)


def chat_content(answer: Answer, expose_paths: bool) -> str:
    """The answer as a chat front end renders it: text with [n] marks, then a short Markdown list of sources."""
    lines = [answer.answer.strip()]
    cited, retrieved = answer.sources()
    for heading, citations in (("Sources", cited), ("Also retrieved (not cited)", retrieved)):
        if citations:
            lines.append(f"\n**{heading}**")
        for c in citations:
            where = f" — `{', '.join(s for s in c.sources if s)}`" if expose_paths and any(c.sources) else ""
            lines.append(f"{c.n}. {markdown_text(c.title)}{where}")
    return "\n".join(lines)


def chat_turns(body: dict) -> tuple[list, str | None]:
    """The request's messages as LangChain messages (the last one the user's), and its conversation id."""
    messages = field_of(body, "messages", list)
    if not messages:
        raise HTTPException(400, "'messages' must be a non-empty list")
    turns = []
    for n, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            raise HTTPException(400, f"messages[{n}]: 'role' must be one of {', '.join(ROLES)}")
        content = m.get("content")
        if isinstance(content, list):  # OpenAI content parts: only text parts are read
            if not all(isinstance(p, dict) and isinstance(p.get("text", ""), str) for p in content):
                raise HTTPException(400, f"messages[{n}]: every content part needs a 'text' string")
            content = " ".join(p.get("text", "") for p in content if p.get("type", "text") == "text")
        if not isinstance(content, str):
            raise HTTPException(400, f"messages[{n}]: 'content' must be text")
        turns.append(ROLES[m["role"]](content))
    if not isinstance(turns[-1], HumanMessage):
        raise HTTPException(400, "the last message must be the user's")
    return turns, conversation_id(body.get("conversation_id"))


def usage_of(answer: Answer) -> dict:
    """The model's tokens for this answer, as OpenAI counts them."""
    prompt, completion = answer.usage.get("input_tokens", 0), answer.usage.get("output_tokens", 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@dataclass
class Completion:
    """One chat completion: the question's run and how its reply is written in OpenAI's format."""

    state: ServiceState
    rag: KGRag
    mode: str
    inputs: list
    thread: str
    conversation: str | None  # None: a one-off thread, deleted after the reply
    owner: str
    model: str
    end_turn: Callable[[], None] = no_turn  # lets the conversation's next turn in
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex[:24]}")
    created: int = field(default_factory=lambda: int(time.time()))

    def events(self) -> AsyncGenerator[Step | Token | Answer, None]:
        return run_question(
            self.state,
            self.rag,
            self.mode,
            self.inputs,
            self.thread,
            self.owner,
            self.conversation is None,
            end_turn=self.end_turn,
        )

    def kgrag_fields(self, answer: Answer) -> dict:
        """The reply's "kgrag" field: what an OpenAI reply has no place for."""
        return {
            "thread_id": self.thread if self.conversation else None,
            "conversation_id": self.conversation,
            "offline": answer.offline,
            "confidence": answer.confidence,
            "citations": citations_for(answer, self.state.settings.expose_source_paths),
            "fallbacks": answer.fallbacks,
            **({} if answer.usage.get("reported", True) else {"usage": "not reported by the endpoint"}),
        }

    async def whole(self) -> dict:
        """The reply in one piece: the steps as ``reasoning_content``, the answer and its sources as ``content``."""
        steps, answer = [OFFLINE_NOTE + "\n"] if self.rag.settings.offline else [], None
        async for item in self.events():
            if isinstance(item, Step) and item.text:
                steps.append(item.text)
            elif isinstance(item, Answer):
                answer = item
        assert answer is not None, "every run ends with an answer"
        message = {
            "role": "assistant",
            "content": chat_content(answer, self.state.settings.expose_source_paths),
            "reasoning_content": "".join(steps),
        }
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage_of(answer),
            "kgrag": self.kgrag_fields(answer),
        }

    def chunk(self, delta: dict, finish: str | None = None, extra: dict | None = None) -> str:
        """One server-sent event of the stream."""
        data = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **(extra or {}),
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    async def stream(self) -> AsyncGenerator[str, None]:
        """The reply as server-sent events: the steps (as reasoning), then the checked answer with its sources,
        then [DONE]; a failure ends the stream cleanly with its reason. The model's answer is a draft until the
        workflow has checked it, so its tokens are not sent as content: a rejected draft never reaches the chat."""
        yield self.chunk({"role": "assistant", "content": ""})
        if self.rag.settings.offline:
            yield self.chunk({"reasoning_content": OFFLINE_NOTE + "\n"})
        drafting = False
        try:
            async with aclosing(self.events()) as events:
                async for item in events:
                    if isinstance(item, Step) and item.text:
                        yield self.chunk({"reasoning_content": item.text})
                    elif isinstance(item, Token) and not drafting:
                        drafting = True
                        yield self.chunk({"reasoning_content": "writing the answer (checked before it is shown)\n"})
                    elif isinstance(item, Answer):
                        yield self.chunk({"content": chat_content(item, self.state.settings.expose_source_paths)})
                        yield self.chunk({}, "stop", {"usage": usage_of(item), "kgrag": self.kgrag_fields(item)})
        except Exception as exc:  # noqa: BLE001 - the client gets a clean end and the reason, the log the trace
            if not isinstance(exc, KGRagError):
                log.exception("streamed request failed")
            yield self.chunk({"content": f"[error: {public_error(exc)}]"}, "stop", {"error": public_error(exc)})
        yield "data: [DONE]\n\n"


@router.get("/v1/models")
async def models(state: Service, owner: Owner):
    names = [n if m == "full" else f"{n}:{m}" for n in state.indexes for m in MODES]
    return {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "kgrag"} for n in names]}


@router.post("/v1/chat/completions")
async def chat_completions(request: Request, state: Service, owner: Owner, body: JsonBody):
    """OpenAI's chat completions. The model picks the index and mode; a conversation id (body or the
    X-Conversation-Id header) keeps the history in a thread, else the messages sent are the history."""
    if request.headers.get("x-conversation-id") and "conversation_id" not in body:
        body["conversation_id"] = request.headers["x-conversation-id"]
    name, rag, mode = pick_model(state, field_of(body, "model", str))
    stream = field_of(body, "stream", bool, False)
    turns, conv = chat_turns(body)
    check_question(turns[-1].content, state.settings)
    if conv is not None:
        inputs, thread = [turns[-1]], conv  # the thread holds the history: send only the new turn
    else:
        inputs, thread = [t for t in turns if not isinstance(t, SystemMessage)], f"req-{uuid.uuid4().hex}"
    end_turn = no_turn if conv is None else await state.conversations.begin(rag, conv, owner)
    completion = Completion(state, rag, mode, inputs, thread, conv, owner, body.get("model") or name, end_turn)
    if not stream:
        try:
            return await completion.whole()
        finally:
            end_turn()
    return EventStream(completion.stream(), "text/event-stream", end_turn)
