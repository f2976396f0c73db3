"""Small pieces of the graph for a viewer: the entities and passages an answer used, and one entity's neighbours,
as nodes and edges with positions laid out here (networkx), the facts on each edge and the passages behind them.

Reads one store (a generation's read-only snapshot), with targeted queries: cost grows with the piece shown,
not with the index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import networkx as nx

from graph_store.graph import normalize_name
from graph_store.store import Fact, GraphReader

FACTS_PER_EDGE = 5
PASSAGE_CHARS = 1200
MARGIN = 0.06  # positions are in [MARGIN, 1 - MARGIN] on both axes
MIN_GAP = 0.06  # no two nodes nearer than this (in the unit square) once laid out


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


def _layout(node_ids: list[str], edges: list[dict], line: Sequence[str] = ()) -> dict[str, tuple[float, float]]:
    """Spring layout (fixed seed: the same piece always looks the same), scaled into the unit square; the nodes of
    ``line`` (an answer's path) held in that order on a horizontal line through the middle, the rest around them."""
    if not node_ids:  # nothing to place (an answer that used no entity nor passage)
        return {}
    if len(node_ids) == 1:
        return {node_ids[0]: (0.5, 0.5)}
    graph = nx.Graph()
    graph.add_nodes_from(node_ids)
    graph.add_edges_from((e["source"], e["target"]) for e in edges)
    line = [n for n in line if n in graph]
    fixed = {n: (i / (len(line) - 1), 0.5) for i, n in enumerate(line)} if len(line) > 1 else {}
    k = 1.6 / math.sqrt(len(node_ids)) if not fixed else 0.6 / math.sqrt(len(node_ids))
    pos = nx.spring_layout(graph, seed=7, k=k, iterations=100, pos=fixed or None, fixed=list(fixed) or None)
    xs, ys = [float(p[0]) for p in pos.values()], [float(p[1]) for p in pos.values()]

    def scaled(value: float, values: list[float]) -> float:
        span = max(values) - min(values)
        return MARGIN + (value - min(values)) / span * (1 - 2 * MARGIN) if span else 0.5

    placed = {n: [scaled(float(x), xs), scaled(float(y), ys)] for n, (x, y) in pos.items()}
    _spread(placed, set(line) if fixed else set())
    return {n: (round(x, 4), round(y, 4)) for n, (x, y) in placed.items()}


def _spread(pos: dict[str, list[float]], fixed: set[str], rounds: int = 40) -> None:
    """Pushes apart nodes nearer each other than MIN_GAP, and off the path's line (``fixed``, which stays put): a
    spring layout can put two nodes on one spot, where the one below cannot be clicked."""
    line_y = next((pos[n][1] for n in fixed), None)
    line_x = (min(pos[n][0] for n in fixed), max(pos[n][0] for n in fixed)) if fixed else (0.0, 0.0)
    names = sorted(pos)
    for _ in range(rounds):
        moved = False
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                movers = [n for n in (a, b) if n not in fixed]
                dx, dy = pos[b][0] - pos[a][0], pos[b][1] - pos[a][1]
                gap = math.hypot(dx, dy)
                if gap >= MIN_GAP or not movers:
                    continue
                ux, uy = (dx / gap, dy / gap) if gap else (1.0, 0.0)
                share = (MIN_GAP - gap) / len(movers)
                for n, sign in ((a, -1), (b, 1)):
                    if n in movers:
                        pos[n][0] = min(max(pos[n][0] + sign * ux * share, MARGIN), 1 - MARGIN)
                        pos[n][1] = min(max(pos[n][1] + sign * uy * share, MARGIN), 1 - MARGIN)
                moved = True
        for n in names:  # the path's line is kept clear: it is what the reader follows
            if line_y is not None and n not in fixed and line_x[0] < pos[n][0] < line_x[1]:
                off = pos[n][1] - line_y
                if abs(off) < MIN_GAP / 2:
                    pos[n][1] = line_y + (MIN_GAP / 2 if off >= 0 else -MIN_GAP / 2)
                    moved = True
        if not moved:
            return


def _referenced(edges: list[dict]) -> list[str]:
    return list(dict.fromkeys(p for e in edges for f in e["facts"] for p in f["passages"]))


def _path_nodes(store: GraphReader, path: list[str]) -> tuple[list[str], set[str]]:
    """An answer's path as node ids in its order (passages by chunk id, entities by id or name; unknown ones and
    repeats dropped), and which of them are passages."""
    passages = {row[0] for row in store.passages(path)}
    ids = [item if item in passages else next(iter(resolve_entities(store, [item])), None) for item in path]
    return list(dict.fromkeys(i for i in ids if i)), passages


def answer_subgraph(
    store: GraphReader, entities: list[str], chunks: list[str], limit: int = 40, path: Sequence[str] = ()
) -> dict:
    """The entities (ids or names) and passages (chunk ids) given, filled up to ``limit`` nodes with the entities
    those passages mention most; edges among them, positions in the unit square, facts and their passages.
    ``path`` (entities and passages: the question's entities, each hop's answer, the answer's passage) comes
    first, laid out left to right; its nodes carry their place in it ("path": 0, 1, ...)."""
    line, line_passages = _path_nodes(store, list(path))
    line = line[:limit]
    focus_entities = list(
        dict.fromkeys([n for n in line if n not in line_passages] + resolve_entities(store, entities))
    )
    given = [n for n in line if n in line_passages] + list(_passages(store, list(dict.fromkeys(chunks))))
    passage_ids = list(dict.fromkeys(given))[: max(limit // 2, 1)]
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
    pos = _layout(entity_ids + passage_ids, edges, line)
    focus = set(focus_entities) | set(passage_ids)
    place = {n: i for i, n in enumerate(n for n in line if n in pos)}
    out_nodes = [
        {**nodes[e], "x": pos[e][0], "y": pos[e][1], "focus": e in focus, "path": place.get(e)} for e in entity_ids
    ]
    out_nodes += [
        {
            "id": p,
            "kind": "passage",
            "label": passages[p]["title"],
            "doc_id": passages[p]["doc_id"],
            "x": pos[p][0],
            "y": pos[p][1],
            "focus": True,
            "path": place.get(p),
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
