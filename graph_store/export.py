"""Export the graph: GraphML for Gephi, and a self-contained HTML picture of one entity's neighbourhood."""

from __future__ import annotations

import html
import re
from pathlib import Path

import networkx as nx

from graph_store.errors import InputError
from graph_store.graph import normalize_name
from graph_store.store import GraphReader


def entity_graph(store: GraphReader, with_chunks: bool = False) -> nx.Graph:
    graph = nx.Graph()
    for e in store.entities():
        graph.add_node(e.id, label=e.name, kind="entity", type=e.type, passages=e.n_chunks)
    names: dict[str, list[str]] = {}
    for alias in store.aliases_of(list(graph.nodes)):
        names.setdefault(alias.entity_id, []).append(alias.name)
    for entity, forms in names.items():  # every name a merged entity goes by (merges: `kgrag entities`)
        graph.nodes[entity]["aliases"] = "; ".join(sorted(forms))
    for cid, eid in store.community_members(level=0):
        graph.nodes[eid]["community"] = cid
    for a, b, w, n in store.relations():
        graph.add_edge(a, b, kind="relation", weight=w, facts=n)
    for a, b, s in store.synonyms():
        if not graph.has_edge(a, b):
            graph.add_edge(a, b, kind="synonym", weight=s)
    if with_chunks:
        for cid, (_, doc_title) in store.chunk_documents().items():
            graph.add_node(cid, label=doc_title, kind="passage")
        for eid, cid in store.mentions():
            graph.add_edge(eid, cid, kind="mentioned-in", weight=1.0)
    return graph


_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def write_graphml(store: GraphReader, path: Path, with_chunks: bool = False) -> nx.Graph:
    """GraphML for Gephi; characters XML cannot hold (from indexes made before titles were cleaned) dropped."""
    graph = entity_graph(store, with_chunks)
    for _, data in graph.nodes(data=True):
        for key, value in data.items():
            if isinstance(value, str):
                data[key] = _NOT_XML.sub("", value)
    clean = nx.relabel_nodes(graph, {n: _NOT_XML.sub("", n) for n in graph if _NOT_XML.search(n)})
    nx.write_graphml(clean, path)
    return clean


def write_neighbourhood_html(store: GraphReader, entity: str, path: Path, hops: int = 1, max_nodes: int = 60) -> int:
    """An SVG of the entity, its neighbours within ``hops``, their relations and the facts behind them."""
    graph = entity_graph(store)
    key = normalize_name(entity)
    key = store.aliases().get(key, key)
    if key not in graph:
        close = [n for n in graph if key and key in n][:5]
        raise InputError(
            f"no entity {entity!r} in the index" + (f"; did you mean {', '.join(close)}?" if close else "")
        )
    nodes = list(nx.single_source_shortest_path_length(graph, key, cutoff=hops))
    nodes = sorted(nodes, key=lambda n: (n != key, -graph.degree(n), n))[:max_nodes]
    sub = graph.subgraph(nodes)
    pos = nx.spring_layout(sub, seed=7, weight="weight")
    size = 800

    def xy(n):
        x, y = pos[n]
        return 40 + (x + 1) / 2 * (size - 80), 40 + (y + 1) / 2 * (size - 80)

    facts = store.strongest_facts_of(key, 40)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" style="background:#fafafa">']
    for a, b, data in sub.edges(data=True):
        (x1, y1), (x2, y2) = xy(a), xy(b)
        dash = ' stroke-dasharray="4 3"' if data["kind"] == "synonym" else ""
        parts.append(
            f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="#999"{dash}>'
            f"<title>{data['kind']} (weight {data['weight']})</title></line>"
        )
    for n in sub:
        x, y = xy(n)
        label = html.escape(sub.nodes[n]["label"])
        colour = "#d33" if n == key else "#37c"
        parts.append(
            f'<circle cx="{x:.0f}" cy="{y:.0f}" r="{6 + min(sub.nodes[n]["passages"], 10)}" fill="{colour}">'
            f"<title>{label} ({sub.nodes[n]['type']}, {sub.nodes[n]['passages']} passages)</title></circle>"
            f'<text x="{x + 10:.0f}" y="{y + 4:.0f}" font-size="12" font-family="sans-serif">{label}</text>'
        )
    parts.append("</svg>")
    title = html.escape(graph.nodes[key]["label"])
    fact_list = "".join(f"<li>{html.escape(f)}</li>" for f in facts)
    path.write_text(
        f"<!doctype html><meta charset='utf-8'><title>{title}: neighbourhood</title>"
        f"<h1>{title}</h1><p>{len(sub)} entities within {hops} hop(s); dashed edges are synonymy.</p>"
        f"{''.join(parts)}<h2>Facts</h2><ul>{fact_list}</ul>",
        encoding="utf-8",
    )
    return len(sub)
