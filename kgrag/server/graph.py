"""The graph around an answer, as the web page's viewer draws it: nodes placed in the unit square, their
facts and passages."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query

from kgrag.server.deps import Owner, Service, index_named

router = APIRouter()


def id_list(value: str, limit: int = 200) -> list[str]:
    """The ids of a comma-separated query parameter, at most ``limit``."""
    return [v.strip() for v in value.split(",") if v.strip()][:limit]


@router.get("/v1/indexes/{name}/graph")
async def answer_graph(
    name: str, state: Service, owner: Owner, entities: str = "", chunks: str = "", path: str = "", limit: int = 40
):
    """The entities (ids or names) and passages (chunk ids) given, comma-separated, with the entities those
    passages mention most, up to ``limit`` nodes: positions in the unit square, facts and passages. ``path``: the
    answer's path (entities and passages in order), drawn first, left to right. Nothing found: an empty graph."""
    store = await asyncio.to_thread(index_named(state, name).graph_snapshot_store)
    from graph_store.neighbourhood import answer_subgraph

    return await asyncio.to_thread(
        answer_subgraph, store, id_list(entities), id_list(chunks), max(1, min(limit, 150)), id_list(path)
    )


@router.get("/v1/indexes/{name}/graph/expand")
async def expand_graph(
    name: str,
    entity: str,
    state: Service,
    owner: Owner,
    shown: str = "",
    x: Annotated[float, Query(allow_inf_nan=False)] = 0.5,  # NaN would reach the JSON reply (a 500)
    y: Annotated[float, Query(allow_inf_nan=False)] = 0.5,
    limit: int = 12,
):
    """An entity's neighbours that are not ``shown`` yet, placed around (x, y), with their edges to what is."""
    store = await asyncio.to_thread(index_named(state, name).graph_snapshot_store)
    from graph_store.neighbourhood import expand_entity

    result = await asyncio.to_thread(expand_entity, store, entity, id_list(shown), (x, y), max(1, min(limit, 50)))
    if result["entity"] is None:
        raise HTTPException(404, f"no entity {entity!r} in index {name!r}")
    return result
