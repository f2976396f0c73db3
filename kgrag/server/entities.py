"""Entity resolution a person reviews over the service: the open merge proposals with their evidence, the decisions
made, and new ones (merge, reject, split, undo). A decision rebuilds the derived state as a document change does,
so each is a job recorded in the index before the 202 and applied by the index's writer (jobs.py); what the
request could never apply (an unknown name, two names of one entity, a bad verdict) is a 400 at once."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from fastapi import APIRouter, HTTPException

from graph_store.index import no_decision_to_undo
from graph_store.jobs import decide_job, undo_job
from graph_store.store import Decision
from kgrag.server.deps import JsonBody, Owner, Service, field_of, index_named
from kgrag.server.documents import job_view

router = APIRouter()
VERDICTS = ("merge", "reject")
MAX_PROPOSALS = 500  # per request: each carries its evidence passages
DECISIONS_SHAPE = 'send {"decisions": [{"verdict": "merge" or "reject", "a": NAME, "b": NAME, "why"?: TEXT}]}'


def decisions_in(body: dict, owner: str) -> list[Decision]:
    """The decisions of a POST body, checked field by field (who: the caller's key, as the job's owner)."""
    items = body.get("decisions")
    if not isinstance(items, list) or not items:
        raise HTTPException(400, DECISIONS_SHAPE)
    decisions = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise HTTPException(400, f"decisions[{n}] must be an object; {DECISIONS_SHAPE}")
        if item.get("verdict") not in VERDICTS:
            raise HTTPException(400, f"decisions[{n}].verdict must be merge or reject, not {item.get('verdict')!r}")
        a, b, why = (field_of(item, key, str) for key in ("a", "b", "why"))
        if not (a or "").strip() or not (b or "").strip():
            raise HTTPException(400, f"decisions[{n}] needs two names, 'a' and 'b'")
        decisions.append(Decision(item["verdict"], a.strip(), b.strip(), owner, why or ""))
    return decisions


def decision_view(d: Decision) -> dict[str, Any]:
    return dataclasses.asdict(d)


@router.get("/v1/indexes/{name}/entities/proposals")
async def list_proposals(name: str, state: Service, owner: Owner, limit: int = 100, offset: int = 0):
    """The open merge proposals, best first (``limit`` from ``offset``; ``total``: how many there are), each with
    both names, types, score, reasons and evidence passages."""
    rag = index_named(state, name)
    proposals, total = await asyncio.to_thread(rag.proposals, max(1, min(limit, MAX_PROPOSALS)), max(0, offset))
    return {"proposals": proposals, "total": total}


@router.get("/v1/indexes/{name}/entities/decisions")
async def list_decisions(name: str, state: Service, owner: Owner):
    """Every decision, oldest first: ``undone`` is null for those in force, else when it was undone."""
    decisions = await asyncio.to_thread(index_named(state, name).decisions)
    return {"decisions": [decision_view(d) for d in decisions]}


@router.post("/v1/indexes/{name}/entities/decisions", status_code=202)
async def decide(name: str, body: JsonBody, state: Service, owner: Owner):
    """{"decisions": [{"verdict": "merge"|"reject", "a", "b", "why"?}]}: one job records them all."""
    rag = index_named(state, name)
    decisions = decisions_in(body, owner)
    await asyncio.to_thread(rag.check_decisions, decisions)  # InputError (400): what no job could apply
    return job_view(await asyncio.to_thread(state.writers.submit, name, decide_job(name, owner, decisions)))


@router.post("/v1/indexes/{name}/entities/split", status_code=202)
async def split(name: str, body: JsonBody, state: Service, owner: Owner):
    """{"name": NAME, "why"?: TEXT}: the name taken out of the entity it is merged into (rejections, one job)."""
    rag = index_named(state, name)
    entity_name, why = field_of(body, "name", str), field_of(body, "why", str)
    if not (entity_name or "").strip():
        raise HTTPException(400, 'send {"name": NAME, "why"?: TEXT}: the name to take out of its merged entity')
    decisions = await asyncio.to_thread(rag.split_decisions, entity_name.strip(), owner, why or "")
    return job_view(await asyncio.to_thread(state.writers.submit, name, decide_job(name, owner, decisions)))


@router.post("/v1/indexes/{name}/entities/undo", status_code=202)
async def undo(name: str, body: JsonBody, state: Service, owner: Owner):
    """{"decision_id"?: ID}: that decision (the latest in force without one) taken back, as a job."""
    rag = index_named(state, name)
    decision_id = body.get("decision_id")
    if decision_id is not None and (not isinstance(decision_id, int) or isinstance(decision_id, bool)):
        raise HTTPException(400, "'decision_id' must be an integer")
    # A decision's id is known once it is recorded: one given must be in force now. Without one, the latest is
    # taken when the job runs, which may be a decision still queued.
    in_force = await asyncio.to_thread(rag.decisions, True)
    queued = any(job.action == "decide" for job in await asyncio.to_thread(rag.unfinished_jobs))
    if (decision_id is None and not in_force and not queued) or (
        decision_id is not None and decision_id not in {d.id for d in in_force}
    ):
        raise HTTPException(400, no_decision_to_undo(decision_id))
    return job_view(await asyncio.to_thread(state.writers.submit, name, undo_job(name, owner, decision_id)))
