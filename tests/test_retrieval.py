from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import igraph as ig
import numpy as np
import pytest
import scipy.sparse as sp

from graph_store.llm import ChatClient
from graph_store.ppr import PageRankMatrix, personalized_pagerank
from graph_store.retrieval import LLMFactFilter, RetrievalSettings, Retrievers, doc_ranking
from tests.helpers import ScriptedChatModel


@pytest.fixture
def retrievers(sample_retrievers):
    return sample_retrievers


def _title(retrievers, evidence):
    return [retrievers.chunk_docs[e.id][1] for e in evidence if e.kind == "chunk"]


# --- PPR ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("threads", [1, 3])  # 3: row blocks multiplied in parallel
def test_ppr_matches_igraph_and_a_dense_solve(seed, directed, threads):
    rng = np.random.default_rng(seed)
    n = 40
    weights = (rng.random((n, n)) < 0.08) * rng.random((n, n))
    np.fill_diagonal(weights, 0)
    if not directed:
        weights = np.triu(weights) + np.triu(weights).T
    weights[[3, 11], :] = 0  # dangling: no out-edges
    if not directed:
        weights[:, [3, 11]] = 0
    reset = rng.random(n) * (rng.random(n) < 0.3)
    reset[0] += 0.1
    damping = [0.5, 0.85][seed % 2]
    ours = personalized_pagerank(PageRankMatrix(sp.csr_matrix(weights), threads=threads), reset, damping, tol=1e-12)

    graph = ig.Graph.Weighted_Adjacency(weights.tolist(), mode="directed" if directed else "undirected")
    theirs = graph.personalized_pagerank(damping=damping, reset=reset.tolist(), weights="weight", directed=directed)
    np.testing.assert_allclose(ours, theirs, atol=1e-6)

    r = reset / reset.sum()
    out = weights.sum(axis=1)
    transition = (weights / np.where(out == 0, 1, out)[:, None]).T + np.outer(r, out == 0)
    exact = np.linalg.solve(np.eye(n) - damping * transition, (1 - damping) * r)
    np.testing.assert_allclose(ours, exact, atol=1e-6)
    assert abs(ours.sum() - 1) < 1e-9


def test_ppr_rejects_a_bad_reset():
    matrix = PageRankMatrix(sp.csr_matrix(np.ones((3, 3))))
    with pytest.raises(ValueError):
        personalized_pagerank(matrix, np.zeros(3))


def test_ppr_retrieval_follows_the_graph_across_documents(retrievers):
    result = retrievers.ppr("Where was the founder of Halvard Instruments born?", k=5)
    titles = _title(retrievers, result.evidence)
    assert "Edda Morlund" in titles and "Halvard Instruments" in titles
    assert result.fallback is None and "halvard instruments" in result.seeds
    assert all(0 <= e.score <= 1 for e in result.evidence) and result.evidence[0].score == 1.0
    assert "ppr_mass" in result.evidence[0].details


def test_question_entities_link_by_name_then_by_embedding(retrievers):
    assert retrievers.link_entities("Who founded Halvard Instruments?") == {"halvard instruments": 1.0}
    fuzzy = retrievers.link_entities("Who founded the Halvard Instrument company?")  # no exact name
    assert (
        list(fuzzy) == ["halvard instruments"]
        and retrievers.settings.link_threshold <= fuzzy["halvard instruments"] < 1
    )
    assert retrievers.link_entities("What is the weather like?") == {}


def test_second_hop_follows_the_links_of_the_top_passages(retrievers):
    chunk_of = {title: chunk for chunk, (_, title) in retrievers.chunk_docs.items()}
    parent = chunk_of["Halvard Instruments"]  # names Edda Morlund, Vessby, Lake Orrin, ...
    vector = retrievers.embed("Where was the founder of Halvard Instruments born?")
    details: dict = {}
    linked = dict(retrievers.follow_links([(parent, 1.0)], vector, details))
    target = chunk_of["Edda Morlund"]
    cosine = float(retrievers.vectors_of("chunks", [target])[target] @ vector)
    assert linked[target] == pytest.approx(cosine * retrievers.settings.bridge_weight)
    assert details[target]["linked_from"] == parent and linked[parent] == 1.0
    named = retrievers.chunk_entities[parent]
    assert all(retrievers.chunk_subjects[c] & named for c in linked if c != parent)
    assert "Selva" not in {retrievers.chunk_docs[c][1] for c in linked}  # not named by the parent
    off = Retrievers(retrievers.index, replace(retrievers.settings, bridge_weight=0))
    assert off.follow_links([(parent, 1.0)], vector, {}) == [(parent, 1.0)]


# --- fact filter and its fallbacks ------------------------------------------------------------


def test_llm_fact_filter_keeps_what_the_model_picks(retrievers):
    model = ScriptedChatModel(script=['Sure: {"keep": [2, 2]}'])
    kept_fact = {}

    def spy(query, facts):
        kept = LLMFactFilter(ChatClient(model))(query, facts)
        kept_fact["expected"] = facts[1]
        return kept

    result = retrievers.ppr("Who founded Halvard Instruments?", fact_filter=spy)
    assert result.kept_facts == [kept_fact["expected"]] and result.filter_error is None
    assert "Question: Who founded Halvard Instruments?" in model.calls[0][0].content


def test_fact_filter_choices_outside_the_list_are_refused_with_the_reason(retrievers):
    model = ScriptedChatModel(script=['{"keep": [2015, 2034]}'])  # years, not fact numbers
    result = retrievers.ppr("Who founded Halvard Instruments?", fact_filter=LLMFactFilter(ChatClient(model)))
    assert "chose 2015, 2034, not fact numbers 1-5" in result.filter_error
    assert result.kept_facts == result.facts[: retrievers.settings.fact_keep] and result.fallback is None


def test_failing_filter_keeps_the_top_facts(retrievers):
    def broken(query, facts):
        raise ValueError("model returned nonsense")

    result = retrievers.ppr("Who founded Halvard Instruments?", fact_filter=broken)
    assert result.kept_facts == result.facts[:4] and "fact filter failed" in result.filter_error
    assert result.fallback is None and result.evidence


def test_unparsable_filter_output_counts_as_a_failure(retrievers):
    model = ScriptedChatModel(script=["I think facts 1 and 2 are good"])
    result = retrievers.ppr("Who founded Halvard Instruments?", fact_filter=LLMFactFilter(ChatClient(model)))
    assert result.filter_error and result.kept_facts == result.facts[:4]


def test_no_surviving_fact_falls_back_to_dense(retrievers):
    result = retrievers.ppr("Who founded Halvard Instruments?", fact_filter=lambda q, facts: [])
    dense = retrievers.dense("Who founded Halvard Instruments?")
    assert result.fallback.startswith("no fact survived")
    assert [e.id for e in result.evidence] == [e.id for e in dense]


# --- local and community search ----------------------------------------------------------------


def test_local_search_returns_neighbours_and_source_chunks(retrievers):
    evidence = retrievers.local("Tell me about Edda Morlund")
    kinds = {e.kind for e in evidence}
    assert {"entity", "fact", "chunk"} <= kinds
    assert any(e.kind == "entity" and e.text.startswith("Edda Morlund") for e in evidence)
    facts = [e for e in evidence if e.kind == "fact"]
    # facts touch the matched entities (her relatives in the corpus are matched too: "Henrik Morlund")
    matched = {e.id for e in evidence if e.kind == "entity"}
    assert facts and all(set(e.details["entities"]) & matched for e in facts)
    assert any("edda morlund" in e.details["entities"] for e in facts)
    mentioned_in = {
        c for (c,) in retrievers.index.store.rows("SELECT chunk_id FROM mentions WHERE entity_id = 'edda morlund'")
    }
    chunks = [e for e in evidence if e.kind == "chunk"]
    assert len(mentioned_in & {e.id for e in chunks}) >= 2  # her source chunks
    assert sum(len(e.text) // 4 for e in evidence) <= retrievers.settings.local_token_budget


def test_community_search_uses_the_configured_level(retrievers):
    levels = [r[0] for r in retrievers.index.store.rows("SELECT DISTINCT level FROM communities ORDER BY level")]
    assert retrievers.community_level("abstract") == levels[0]
    assert retrievers.community_level("specific") == levels[-1]
    for level in levels:
        fixed = Retrievers(retrievers.index, RetrievalSettings(community_level=level))
        evidence = fixed.community("What are the main themes of these documents?")
        assert evidence and all(e.details["level"] == level and e.kind == "report" for e in evidence)


# --- baselines and concurrency -----------------------------------------------------------------


def test_a_name_is_told_he_or_she_by_its_own_article(retrievers):
    # the sample corpus's articles: "He was the son of ..." (Henrik Morlund), "She was born ..." (Edda Morlund)
    assert retrievers.pronoun_of("Henrik Morlund") == "he"
    assert retrievers.pronoun_of("edda  morlund") == "she"  # names are matched normalised
    assert retrievers.pronoun_of("Tarnholm") is None  # a city's article calls it neither
    assert retrievers.pronoun_of("Nobody Anywhere") is None  # no article


def test_dense_and_bm25_rank_the_obvious_document_first(retrievers):
    for evidence in (retrievers.dense("comet discovered in 1967"), retrievers.bm25("comet discovered 1967")):
        assert _title(retrievers, evidence)[0] in {"Comet Keldor-Vey", "Tomas Vey", "Ana Keldor"}
        assert evidence[0].score == 1.0 and all(0 <= e.score <= 1 for e in evidence)


def test_concurrent_calls_equal_sequential_ones(retrievers):
    queries = [
        "Who founded Halvard Instruments?",
        "Which river flows through Tarnholm?",
        "Who designed the Tarnholm Opera House?",
        "Where was Ana Keldor born?",
    ] * 3

    def run(q):
        return (
            doc_ranking(retrievers.ppr(q).evidence),
            [e.id for e in retrievers.local(q)],
            [e.id for e in retrievers.community(q)],
            [e.id for e in retrievers.bm25(q)],
        )

    sequential = [run(q) for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(run, queries))
    assert parallel == sequential


def test_large_collections_are_searched_on_a_saved_hnsw_graph(make_index, sample_docs):
    index = make_index("ann", ann_min_vectors=1)  # every collection counts as large
    index.add_documents(sample_docs[:8])
    approx = Retrievers(index)
    assert set(approx.hnsw) == {"chunks", "entities", "facts", "reports"}
    exact = Retrievers(index)
    exact.hnsw = {}
    for name in approx.hnsw:  # a graph this small is searched exhaustively: the same neighbours
        vector = approx.query_vector(name, "Who founded Halvard Instruments?")  # in the collection's space
        assert [i for i, _, _ in approx.search(name, vector, 5)] == [i for i, _, _ in exact.search(name, vector, 5)]
    reloaded = Retrievers(index)
    question = "Where was the founder of Halvard Instruments born?"
    assert reloaded.ppr(question).evidence == approx.ppr(question).evidence
