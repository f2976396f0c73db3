"""Small pieces of the graph for a viewer: the entities and passages an answer used, and one entity's neighbours,
as nodes and edges with positions laid out here (networkx), the facts on each edge and the passages behind them.

Reads one store (a generation's read-only snapshot), with targeted queries: cost grows with the piece shown,
not with the index.
"""

from __future__ import annotations

import math

import networkx as nx

from graph_store.graph import normalize_name
from graph_store.store import Fact, GraphReader

FACTS_PER_EDGE = 5
PASSAGE_CHARS = 1200
MARGIN = 0.06  # positions are in [MARGIN, 1 - MARGIN] on both axes


def _pair(a: str, b: str) -> tuple[str, str]:
    """An undirected edge's key."""
    return (a, b) if a <= b else (b, a)


def resolve_entities(store: GraphReader, names: list[str]) -> list[str]:
    """Entity ids for ids or names (matched by the resolution key of any of an entity's names), unknown ones dropped,
    order kept."""
    entity_of = store.aliases()
    keys = [entity_of.get(k, k) for n in names if n.strip() for k in (n, normalize_name(n)) if k]
    wanted = list(dict.fromkeys(keys))
    found = {e.id for e in store.entities_by_id(wanted)}
    return [k for k in wanted if k in found]


def _entity_nodes(store: GraphReader, ids: list[str]) -> dict[str, dict]:
    return {
        e.id: {
            "id": e.id,
            "kind": "entity",
            "label": e.name,
            "type": e.type,
            "description": e.description[:300],
            "passages": e.n_chunks,
        }
        for e in store.entities_by_id(ids)
    }


def _passages(store: GraphReader, ids: list[str]) -> dict[str, dict]:
    return {
        i: {"id": i, "doc_id": doc, "title": title, "text": text[:PASSAGE_CHARS]}
        for i, doc, title, text in store.passages(ids)
    }


def _edges(store: GraphReader, entity_ids: list[str], passage_ids: list[str]) -> list[dict]:
    """Every edge among the given nodes: relations (with their strongest facts), synonymy, mentions."""
    edges: list[dict] = []
    if entity_ids:
        members = set(entity_ids)
        relations = [r for r in store.relations_from(entity_ids) if r.target_id in members]
        by_pair: dict[tuple[str, str], list[Fact]] = {}
        for f in store.facts_from(entity_ids):
            if f.object_id in members:
                by_pair.setdefault(_pair(f.subject_id, f.object_id), []).append(f)
        sources: dict[str, list[str]] = {}
        chosen = [
            f
            for group in by_pair.values()
            for f in sorted(group, key=lambda f: (-f.strength * f.n_chunks, f.id))[:FACTS_PER_EDGE]
        ]
        for fact_id, chunk_id in store.fact_sources_of([f.id for f in chosen]):
            sources.setdefault(fact_id, []).append(chunk_id)
        facts_of = {
            pair: [
                {
                    "id": f.id,
                    "subject": f.subject_id,
                    "predicate": f.predicate,
                    "object": f.object_id,
                    "text": f.text,
                    "sentence": f.description[:400],
                    "passages": sorted(sources.get(f.id, [])),
                }
                for f in chosen
                if _pair(f.subject_id, f.object_id) == pair
            ]
            for pair in by_pair
        }
        seen: set[tuple[str, str]] = set()
        for a, b, weight, _ in relations:
            pair = _pair(a, b)
            if pair in seen or a == b:
                continue
            seen.add(pair)
            edges.append(
                {
                    "id": f"r:{pair[0]}|{pair[1]}",
                    "source": pair[0],
                    "target": pair[1],
                    "kind": "relation",
                    "weight": round(weight, 4),
                    "facts": facts_of.get(pair, []),
                }
            )
        for a, b, similarity in store.synonyms_from(entity_ids):
            pair = _pair(a, b)
            if b in members and pair not in seen and a != b:
                seen.add(pair)
                edges.append(
                    {
                        "id": f"s:{pair[0]}|{pair[1]}",
                        "source": pair[0],
                        "target": pair[1],
                        "kind": "synonym",
                        "weight": round(similarity, 4),
                        "facts": [],
                    }
                )
    if entity_ids and passage_ids:
        passages = set(passage_ids)
        for entity, chunk in store.mentions_of(entity_ids):
            if chunk in passages:
                edges.append(
                    {
                        "id": f"m:{entity}|{chunk}",
                        "source": entity,
                        "target": chunk,
                        "kind": "mentioned-in",
                        "weight": 1.0,
                        "facts": [],
                    }
                )
    return edges


def _layout(node_ids: list[str], edges: list[dict]) -> dict[str, tuple[float, float]]:
    """Spring layout (fixed seed: the same piece always looks the same), scaled into the unit square."""
    graph = nx.Graph()
    graph.add_nodes_from(node_ids)
    graph.add_edges_from((e["source"], e["target"]) for e in edges)
    if len(node_ids) == 1:
        return {node_ids[0]: (0.5, 0.5)}
    pos = nx.spring_layout(graph, seed=7, k=1.6 / math.sqrt(max(len(node_ids), 1)), iterations=100)
    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    inner = 1 - 2 * MARGIN
    return {
        n: (
            round(float(MARGIN + (x - min(xs)) / span_x * inner), 4),
            round(float(MARGIN + (y - min(ys)) / span_y * inner), 4),
        )
        for n, (x, y) in pos.items()
    }


def _referenced(edges: list[dict]) -> list[str]:
    return list(dict.fromkeys(p for e in edges for f in e["facts"] for p in f["passages"]))


def answer_subgraph(store: GraphReader, entities: list[str], chunks: list[str], limit: int = 40) -> dict:
    """The entities (ids or names) and passages (chunk ids) given, filled up to ``limit`` nodes with the entities
    those passages mention most; edges among them, positions in the unit square, facts and their passages."""
    focus_entities = resolve_entities(store, entities)
    passage_ids = list(_passages(store, list(dict.fromkeys(chunks))))[: max(limit // 2, 1)]
    entity_ids = focus_entities[: max(limit - len(passage_ids), 0)]
    if passage_ids and len(entity_ids) + len(passage_ids) < limit:
        counts: dict[str, int] = {}
        for entity, _ in store.mentions_in(passage_ids):
            counts[entity] = counts.get(entity, 0) + 1
        more = sorted((e for e in counts if e not in entity_ids), key=lambda e: (-counts[e], e))
        entity_ids += more[: limit - len(entity_ids) - len(passage_ids)]
    nodes = _entity_nodes(store, entity_ids)
    entity_ids = [e for e in entity_ids if e in nodes]
    passages = _passages(store, passage_ids)
    edges = _edges(store, entity_ids, passage_ids)
    pos = _layout(entity_ids + passage_ids, edges)
    focus = set(focus_entities) | set(passage_ids)
    out_nodes = [{**nodes[e], "x": pos[e][0], "y": pos[e][1], "focus": e in focus} for e in entity_ids]
    out_nodes += [
        {
            "id": p,
            "kind": "passage",
            "label": passages[p]["title"],
            "doc_id": passages[p]["doc_id"],
            "x": pos[p][0],
            "y": pos[p][1],
            "focus": True,
        }
        for p in passage_ids
    ]
    passages.update(_passages(store, [p for p in _referenced(edges) if p not in passages]))
    return {"nodes": out_nodes, "edges": edges, "passages": passages}


def expand_entity(
    store: GraphReader,
    entity: str,
    shown: list[str],
    at: tuple[float, float] = (0.5, 0.5),
    limit: int = 12,
    radius: float = 0.22,
) -> dict:
    """An entity's neighbours not shown yet (strongest relations first, then synonyms, then a few passages that
    mention it), placed around ``at``; the edges from the new nodes to everything shown."""
    found = resolve_entities(store, [entity])
    if not found:
        return {"entity": None, "nodes": [], "edges": [], "passages": {}}
    key, shown_set = found[0], set(shown) | {found[0]}
    best: dict[str, float] = {}
    for other, weight in store.neighbours(key):
        if other not in shown_set and other != key:
            best[other] = max(best.get(other, 0.0), weight)
    new_entities = sorted(best, key=lambda e: (-best[e], e))[:limit]
    mentioned = [c for c in store.chunks_mentioning(key) if c not in shown_set]
    new_passages = mentioned[: max(2, limit // 4)]
    nodes = _entity_nodes(store, new_entities)
    new_entities = [e for e in new_entities if e in nodes]
    passages = _passages(store, new_passages)
    others = sorted(shown_set - {key})
    shown_entities = [e.id for e in store.entities_by_id(others)]
    shown_passages = [row[0] for row in store.passages(others)]
    all_entities = list(dict.fromkeys([key, *new_entities, *shown_entities]))
    all_passages = list(dict.fromkeys([*new_passages, *shown_passages]))
    fresh = set(new_entities) | set(new_passages)
    edges = [e for e in _edges(store, all_entities, all_passages) if e["source"] in fresh or e["target"] in fresh]
    # the new nodes on a ring around the expanded one, in the order a local spring layout puts them
    local = _layout(
        [key, *new_entities, *new_passages], [e for e in edges if {e["source"], e["target"]} <= {key, *fresh}]
    )
    cx, cy = local[key]
    angles = sorted(fresh, key=lambda n: (math.atan2(local[n][1] - cy, local[n][0] - cx), n))
    out = []
    for i, n in enumerate(angles):
        angle = 2 * math.pi * i / max(len(angles), 1)
        ring = radius * (1.0 if i % 2 == 0 or len(angles) < 8 else 0.7)
        x, y = round(float(at[0] + ring * math.cos(angle)), 4), round(float(at[1] + ring * math.sin(angle)), 4)
        if n in nodes:
            out.append({**nodes[n], "x": x, "y": y, "focus": False})
        else:
            out.append(
                {
                    "id": n,
                    "kind": "passage",
                    "label": passages[n]["title"],
                    "doc_id": passages[n]["doc_id"],
                    "x": x,
                    "y": y,
                    "focus": False,
                }
            )
    passages.update(_passages(store, [p for p in _referenced(edges) if p not in passages]))
    return {"entity": key, "nodes": out, "edges": edges, "passages": passages}
