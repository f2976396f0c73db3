"""The native API: a question's structured events (POST /v1/ask) and a conversation's state
(GET /v1/threads/{id})."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from fastapi import APIRouter, HTTPException, Request

from agent.context import Context
from graph_store.errors import ConfigError, KGRagError
from kgrag.api import Answer, Step, Token, conversation_view
from kgrag.server.deps import (
    EventStream,
    JsonBody,
    Owner,
    Service,
    check_question,
    citations_for,
    conversation_id,
    field_of,
    no_turn,
    owned_thread,
    pick_model,
    public_error,
    run_question,
)

log = logging.getLogger("kgrag.server")
router = APIRouter()
GRAPHS = ("pankrag", "propex")
BODY_KNOBS = {"route": "route_policy", "alpha": "alpha_specific"}  # the web page's names for the run's knobs


def ask_knobs(body: dict) -> dict:
    """The web page's advanced knobs of /v1/ask: "route" (the route policy: plan|local|community|ppr|dense) and
    "alpha" (the weight of R for specific questions, beta = 1 - alpha), checked by the run context as every door's
    knobs are, so a bad one is a 400 naming it before the stream starts."""
    knobs = {knob: body[name] for name, knob in BODY_KNOBS.items() if body.get(name) is not None}
    if isinstance(body.get("alpha"), bool):
        raise HTTPException(400, "'alpha' must be a number from 0 to 1")
    try:
        Context.of(**knobs)
    except ConfigError as exc:
        message = str(exc)
        for name, knob in BODY_KNOBS.items():
            message = message.replace(f"{knob}:", f"'{name}' ({knob}):")
        raise HTTPException(400, message) from None
    if "alpha_specific" in knobs:
        knobs["beta_specific"] = round(1 - float(knobs["alpha_specific"]), 6)
    return knobs


def event_of(item: Step | Token | Answer, conversation: str | None, expose_paths: bool) -> dict:
    """A workflow event as the native API sends it."""
    if isinstance(item, Step):
        return {"type": "step", "event": item.event, "text": item.text, "data": item.data}
    if isinstance(item, Token):  # the model's answer as it is written: a draft until the "answer" event
        return {"type": "draft", "text": item.text}
    return {
        "type": "answer",
        "answer": item.answer,
        "short_answer": item.short_answer,
        "confidence": item.confidence,
        "offline": item.offline,
        "extractive": item.extractive,
        "planner": item.planner,  # "small-talk": a reply, nothing was looked up
        "citations": citations_for(item, expose_paths),
        "fallbacks": item.fallbacks,
        "conversation_id": conversation,
    }


async def as_lines(
    events: AsyncGenerator[Step | Token | Answer, None], conversation: str | None, expose_paths: bool, jsonl: bool
) -> AsyncGenerator[str, None]:
    """The events as JSON lines or server-sent events; the last one is always an answer or an error."""

    def line(event: dict) -> str:
        text = json.dumps(event, ensure_ascii=False, default=str)
        return f"{text}\n" if jsonl else f"data: {text}\n\n"

    try:
        async with aclosing(events):
            async for item in events:
                yield line(event_of(item, conversation, expose_paths))
    except Exception as exc:  # noqa: BLE001 - every stream ends with an answer or an error event
        if not isinstance(exc, KGRagError):
            log.exception("ask failed")
        yield line({"type": "error", "error": public_error(exc)})


@router.post("/v1/ask")
async def ask(request: Request, state: Service, owner: Owner, body: JsonBody):
    """Native: {"question", "conversation_id"?, "model"?, "graph"?, knobs?}; structured events as SSE,
    or JSON lines with ?format=jsonl. The last event is always an answer or an error."""
    question = field_of(body, "question", str)
    if question is None:
        raise HTTPException(400, "'question' must be a string")
    check_question(question, state.settings)
    name, rag, mode = pick_model(state, field_of(body, "model", str))
    graph = field_of(body, "graph", str, "pankrag")
    if graph not in GRAPHS:
        raise HTTPException(400, f"'graph' must be one of {', '.join(GRAPHS)}")
    if graph == "propex":
        mode = "propex"
    conv = conversation_id(body.get("conversation_id"))
    knobs = ask_knobs(body)
    end_turn = no_turn if conv is None else await state.conversations.begin(rag, conv, owner)
    thread = conv or f"req-{uuid.uuid4().hex}"
    jsonl = request.query_params.get("format") == "jsonl"
    events = run_question(state, rag, mode, question, thread, owner, conv is None, knobs, end_turn)
    return EventStream(
        as_lines(events, conv, state.settings.expose_source_paths, jsonl),
        "application/x-ndjson" if jsonl else "text/event-stream",
        end_turn,
    )


def thread_view(thread_id: str, values: dict[str, Any], expose_paths: bool) -> dict:
    """A conversation's latest state as GET /v1/threads/{id} returns it."""
    return conversation_view(thread_id, values, expose_paths)


@router.get("/v1/threads/{thread_id}")
async def thread(thread_id: str, state: Service, owner: Owner, model: str | None = None):
    """A conversation's plan, sub-questions, evidence, answer and messages, for the key that owns it."""
    _, rag, _ = pick_model(state, model)
    values = await owned_thread(rag, conversation_id(thread_id) or thread_id, owner)
    if values is None:
        raise HTTPException(404, f"no conversation {thread_id!r}")
    return thread_view(thread_id, values, state.settings.expose_source_paths)
