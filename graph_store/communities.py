"""Hierarchical Leiden communities over the entity graph, and a report per community.

Level 0 is the coarsest partition; a community larger than ``max_cluster_size``
is split again by Leiden on its own subgraph, one level down. A community's id
hashes its members, their descriptions and its internal facts, so a refresh
keeps the report of every community whose content did not change and writes
only the new ones (with an LLM, that is the expensive part).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage
from tqdm import tqdm

from graph_store.errors import ModelError
from graph_store.llm import ChatClient, json_in_reply, truncated
from graph_store.store import Community, GraphTables, Report
from prompts import quoted_block, render_prompt


def _igraph_without_matplotlib() -> ModuleType:
    """igraph, imported with matplotlib hidden: when matplotlib is installed (it is, for the evaluation's charts)
    igraph imports matplotlib.pyplot for its drawing, which the index never does: 0.7 s of every indexing
    process. Imports after this one find matplotlib as usual; leidenalg imports igraph, so it comes after."""
    hidden = "matplotlib" not in sys.modules
    if hidden:
        sys.modules["matplotlib"] = None  # type: ignore[assignment]  # None makes ``import matplotlib`` fail
    try:
        import igraph
    finally:
        if hidden:
            del sys.modules["matplotlib"]
    return igraph


if TYPE_CHECKING:
    import igraph as ig
else:
    ig = _igraph_without_matplotlib()

MIN_COMMUNITY_SIZE = 3  # pairs and single entities carry no community structure worth a report


@dataclass
class Cluster:
    level: int
    members: list[int]
    parent: int | None  # index into the cluster list


def hierarchical_leiden(
    graph: ig.Graph, max_cluster_size: int, seed: int, max_levels: int = 3, vertices: list[int] | None = None
) -> list[Cluster]:
    """Leiden (modularity, weighted) at the top, then again inside every cluster that is too big; ``vertices``:
    only among these (sorted), on the graph they induce."""
    import leidenalg  # after igraph (above), which it imports

    clusters: list[Cluster] = []

    def split(vertices: list[int], level: int, parent: int | None) -> None:
        sub = graph if len(vertices) == graph.vcount() else graph.induced_subgraph(vertices)
        partition = leidenalg.find_partition(
            sub, leidenalg.ModularityVertexPartition, weights="weight" if sub.ecount() else None, seed=seed
        )
        parts = [sorted(vertices[i] for i in part) for part in partition]
        if parent is not None and len(parts) < 2:
            return  # cannot be split further: the parent stays a leaf
        for members in sorted(parts, key=lambda m: (-len(m), m)):
            if len(members) < MIN_COMMUNITY_SIZE:
                continue
            clusters.append(Cluster(level, members, parent))
            if len(members) > max_cluster_size and level + 1 < max_levels:
                split(members, level + 1, len(clusters) - 1)

    top = list(range(graph.vcount())) if vertices is None else vertices
    if top:
        split(top, 0, None)
    return clusters


def _entity_graph(store: GraphTables) -> tuple[list[str], ig.Graph]:
    ids = [e.id for e in store.entities()]
    index = {e: i for i, e in enumerate(ids)}
    edges, weights = [], []
    for r in store.relations():
        edges.append((index[r.source_id], index[r.target_id]))
        weights.append(r.weight)
    graph = ig.Graph(n=len(ids), edges=edges)
    graph.es["weight"] = weights
    return ids, graph


def detect_communities(
    store: GraphTables, max_cluster_size: int, seed: int, kept: list[tuple[Community, list[str]]] | None = None
) -> None:
    """Recompute the community hierarchy and store it with content-hash ids. ``kept``: communities of the previous
    hierarchy to keep as they are (whole trees, parents first: graph_store/reuse.py); Leiden runs only on the
    entities outside them."""
    ids, graph = _entity_graph(store)
    clusters = _kept_clusters(ids, kept or [])
    covered = {m for c in clusters for m in c.members}
    rest = [i for i in range(len(ids)) if i not in covered] if clusters else None
    offset = len(clusters)
    for c in hierarchical_leiden(graph, max_cluster_size, seed, vertices=rest):
        clusters.append(Cluster(c.level, c.members, c.parent + offset if c.parent is not None else None))
    # The id covers everything a report is written from (descriptions, mention counts, internal facts and
    # their weights): a report is kept exactly while its input is unchanged, so an update equals a rebuild.
    descriptions = {e.id: f"{e.description}\x1f{e.n_chunks}" for e in store.entities()}
    internal = defaultdict(list)
    for f in store.facts():
        internal[f.subject_id].append((f.object_id, f"{f.text}\x1f{f.strength * f.n_chunks}"))

    def content_id(cluster: Cluster) -> str:
        members = [ids[i] for i in cluster.members]
        member_set = set(members)
        digest = hashlib.sha256(str(cluster.level).encode())
        for m in members:
            digest.update(f"{m}\x1f{descriptions[m]}\x1e".encode())
            for o, text in internal[m]:
                if o in member_set:
                    digest.update(f"{text}\x1e".encode())
        return f"c{cluster.level}-{digest.hexdigest()[:14]}"

    community_ids = [content_id(c) for c in clusters]
    # One transaction; reports of communities that no longer exist go, the others are kept as they are.
    store.replace_communities(
        [
            (
                Community(
                    cid,
                    cluster.level,
                    community_ids[cluster.parent] if cluster.parent is not None else None,
                    len(cluster.members),
                ),
                [ids[i] for i in cluster.members],
            )
            for cluster, cid in zip(clusters, community_ids)
        ]
    )


def _kept_clusters(ids: list[str], kept: list[tuple[Community, list[str]]]) -> list[Cluster]:
    index = {e: i for i, e in enumerate(ids)}
    clusters: list[Cluster] = []
    position: dict[str, int] = {}
    for community, members in kept:
        position[community.id] = len(clusters)
        parent = position[community.parent_id] if community.parent_id is not None else None
        clusters.append(Cluster(community.level, sorted(index[m] for m in members), parent))
    return clusters


# --- reports --------------------------------------------------------------------------------------


@dataclass
class CommunityContext:
    id: str
    level: int
    entities: list[tuple[str, str, str]]  # (name, type, description), most mentioned first
    facts: list[str]  # strongest first
    chunk_excerpt: str
    child_summaries: list[str]


def _context(store: GraphTables, community_id: str, level: int, max_items: int = 12) -> CommunityContext:
    chunk = store.community_central_chunk(community_id)
    return CommunityContext(
        community_id,
        level,
        store.community_entities(community_id),
        store.community_facts(community_id, max_items),
        chunk[:400] if chunk else "",
        store.child_summaries(community_id)[:max_items],
    )


def offline_report(ctx: CommunityContext) -> dict:
    """An extractive report: most mentioned entities, strongest facts, the most central passage."""
    names = [n for n, _, _ in ctx.entities]
    title = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    summary = f"{len(names)} related entities around {', '.join(names[:5])}."
    if ctx.facts:
        summary += f" Strongest fact: {ctx.facts[0]}."
    findings = [{"summary": f, "explanation": ""} for f in ctx.facts[:8]]
    if ctx.chunk_excerpt:
        findings.append({"summary": "Central passage", "explanation": ctx.chunk_excerpt})
    rating = min(10.0, round(1 + math.log2(len(names) + len(ctx.facts)), 1))
    return {"title": title, "summary": summary, "findings": findings, "rating": rating}


def llm_report(client: ChatClient, ctx: CommunityContext) -> dict:
    entities = "\n".join(f"- {n} ({t}): {d.splitlines()[0] if d else ''}" for n, t, d in ctx.entities[:30])
    prompt = render_prompt(
        "community_report",
        entities=entities or "(none)",
        facts="\n".join(f"- {f}" for f in ctx.facts) or "(none)",
        excerpt=quoted_block(ctx.chunk_excerpt) if ctx.chunk_excerpt else "(none)",
        children="\n".join(f"- {s}" for s in ctx.child_summaries) or "(none)",
    )
    reply = client.invoke([HumanMessage(prompt)], task="report")
    if truncated(reply):
        raise ValueError("report cut at the output budget")
    data = json_in_reply(str(reply.content))
    if not isinstance(data, dict) or not data.get("title") or not data.get("summary"):
        raise ValueError("report output lacks a title or summary")
    findings = [f if isinstance(f, dict) else {"summary": str(f), "explanation": ""} for f in data.get("findings", [])]
    try:
        rating = max(0.0, min(10.0, float(data.get("rating", 5))))
    except (TypeError, ValueError):
        rating = 5.0
    return {"title": str(data["title"]), "summary": str(data["summary"]), "findings": findings, "rating": rating}


def report_text(report: dict) -> str:
    """What is embedded and searched: title and summary (findings are shown, not embedded, to keep it cheap)."""
    return f"{report['title']}\n{report['summary']}"


def write_reports(
    store: GraphTables, client: ChatClient | None, max_concurrency: int = 4, progress: bool = True
) -> int:
    """Report every community that has none, deepest level first (a parent may use its children's).

    Returns the number of LLM reports that failed and fell back to the extractive report (with a model, those
    are tried again on the next run). After a few endpoint failures in a row the rest fall back at once.
    """
    failures = 0
    endpoint_failures = [0]
    # With a model, extractive reports standing in for failed LLM ones are tried again.
    missing = store.communities_needing_report(redo_fallbacks=client is not None)
    bar = tqdm(total=len(missing), desc="community reports", unit="report", disable=not progress or None)

    def make(cid: str, level: int) -> tuple[str, dict, str]:
        ctx = _context(store, cid, level)
        if client is None:
            return cid, offline_report(ctx), "offline"
        if endpoint_failures[0] >= 5:
            return cid, {**offline_report(ctx), "error": "the model endpoint kept failing"}, "offline-fallback"
        try:
            report = llm_report(client, ctx)
            endpoint_failures[0] = 0
            return cid, report, f"llm:{client.model_name}"
        except Exception as exc:  # noqa: BLE001 - recorded, and the extractive report stands in
            if isinstance(exc, ModelError):
                endpoint_failures[0] += 1
            return cid, {**offline_report(ctx), "error": str(exc)}, "offline-fallback"

    for level in dict.fromkeys(level for _, level in missing):  # deepest first
        todo = [cid for cid, at in missing if at == level]
        with ThreadPoolExecutor(max_workers=max_concurrency if client else 1) as pool:
            for cid, report, generator in pool.map(lambda c: make(c, level), todo):
                failures += generator == "offline-fallback"
                store.save_report(
                    Report(  # one transaction per report: a rerun keeps what was written
                        cid,
                        report["title"],
                        report["summary"],
                        json.dumps(report["findings"], ensure_ascii=False),
                        report["rating"],
                        report_text(report),
                        generator,
                    )
                )
                bar.update(1)
    bar.close()
    return failures
