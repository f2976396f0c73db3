"""Local PPR (forward push, graph_store/ppr_push.py) against exact power iteration, the automatic switch between
them, and the generation's memory-mapped CSR."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from graph_store.generations import CSR_FILES
from graph_store.graph import KnowledgeGraph
from graph_store.index import KnowledgeIndex
from graph_store.ppr import PageRankMatrix, PersonalizedPageRank, personalized_pagerank
from graph_store.ppr_push import ForwardPush
from graph_store.retrieval import Retrievers
from graph_store.settings import load_settings
from tests.conftest import ROOT


def passage_entity_graph(seed: int, entities: int = 300, passages: int = 1500) -> sp.csr_matrix:
    """Symmetric: passages mention 1-4 entities picked with power-law popularity; some entity pairs related."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, entities + 1) ** 1.1
    popularity /= popularity.sum()
    counts = rng.integers(1, 5, passages)
    passage = np.repeat(np.arange(passages), counts)
    entity = rng.choice(entities, len(passage), p=popularity)
    a, b = rng.choice(entities, 200), rng.choice(entities, 200)
    rows = np.concatenate([entity, a[a != b]])
    cols = np.concatenate([entities + passage, b[a != b]])
    weights = np.concatenate([np.ones(len(entity)), rng.uniform(0.5, 3, (a != b).sum())])
    upper = sp.coo_matrix((weights, (rows, cols)), shape=(entities + passages,) * 2).tocsr()
    return (upper + upper.T).tocsr()


def exact(adjacency: sp.csr_matrix, seeds, mass, damping=0.5) -> np.ndarray:
    reset = np.zeros(adjacency.shape[0])
    reset[seeds] = mass
    return personalized_pagerank(PageRankMatrix(adjacency), reset, damping, tol=1e-14, max_iter=1000)


def push(adjacency: sp.csr_matrix, seeds, mass, threshold, damping=0.5) -> tuple[np.ndarray, float]:
    nodes, values, left = ForwardPush(adjacency.indptr, adjacency.indices, adjacency.data).scores(
        np.asarray(seeds), np.asarray(mass, dtype=float), damping, threshold
    )
    dense = np.zeros(adjacency.shape[0])
    dense[nodes] = values
    return dense, left


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("threshold", [1e-4, 1e-6])
def test_push_is_below_exact_by_exactly_the_residual_it_leaves(seed, threshold):
    adjacency = passage_entity_graph(seed)
    rng = np.random.default_rng(100 + seed)
    seeds = rng.choice(300, 3, replace=False)  # several entities with different weights
    mass = np.array([1.0, 2.0, 0.5])
    truth = exact(adjacency, seeds, mass)
    estimate, left = push(adjacency, seeds, mass, threshold)
    assert (estimate <= truth + 1e-12).all()  # push never overshoots
    error = (truth - estimate).sum()
    assert error == pytest.approx(left, abs=1e-9)  # the L1 error is the mass left unspread ...
    assert left < threshold * adjacency.sum()  # ... each node's below threshold x its out-weight
    # the per-node bound of an undirected graph: exact - estimate <= threshold x out-weight
    assert (truth - estimate <= threshold * np.asarray(adjacency.sum(axis=1)).ravel() + 1e-12).all()


@pytest.mark.parametrize("seed", range(4))
def test_push_ranks_the_top_passages_as_exact_ppr(seed):
    adjacency = passage_entity_graph(seed)
    seeds, mass = [seed * 7, 40 + seed, 120], [0.6, 0.3, 0.1]
    truth, (estimate, _) = exact(adjacency, seeds, mass), push(adjacency, seeds, mass, 1e-7)
    top = [set(np.argsort(-v[300:], kind="stable")[:10].tolist()) for v in (truth, estimate)]
    assert top[0] == top[1]
    assert np.abs(truth - estimate).sum() < 1e-7 * adjacency.sum()


def test_dangling_nodes_hand_their_mass_back_to_the_seeds():
    """Directed, with nodes that have no out-edge (one of them a seed): the power iteration's semantics."""
    rng = np.random.default_rng(3)
    n = 60
    weights = (rng.random((n, n)) < 0.08) * rng.random((n, n))
    np.fill_diagonal(weights, 0)
    weights[[3, 11, 20], :] = 0  # dangling
    adjacency = sp.csr_matrix(weights)
    seeds, mass = [3, 5, 30], [2.0, 1.0, 1.0]
    truth = exact(adjacency, seeds, mass, damping=0.85)
    estimate, left = push(adjacency, seeds, mass, 1e-9, damping=0.85)
    np.testing.assert_allclose(estimate, truth, atol=1e-6)
    assert estimate[[11, 20]].sum() > 0  # reached, and their mass returned to the seeds
    assert left < 1e-6
    with pytest.raises(ValueError):
        push(adjacency, [3, 3], [1.0, 1.0], 1e-6)  # a seed twice


def test_seed_weights_are_normalised_and_queries_leave_no_trace():
    adjacency = passage_entity_graph(7)
    engine = ForwardPush(adjacency.indptr, adjacency.indices, adjacency.data)
    first = engine.scores(np.array([1, 9]), np.array([3.0, 1.0]), 0.5, 1e-6)
    engine.scores(np.array([200]), np.array([1.0]), 0.5, 1e-6)  # another query on the same scratch
    again = engine.scores(np.array([1, 9]), np.array([0.75, 0.25]), 0.5, 1e-6)
    order = [np.argsort(nodes) for nodes, _, _ in (first, again)]
    np.testing.assert_array_equal(first[0][order[0]], again[0][order[1]])
    np.testing.assert_allclose(first[1][order[0]], again[1][order[1]], rtol=1e-12)


def test_the_switch_to_local_ppr_is_by_graph_size():
    adjacency = passage_entity_graph(1)
    n = adjacency.shape[0]
    reset = {5: 1.0, 17: 0.5}
    local = PersonalizedPageRank(adjacency, local_min_nodes=n, push_threshold=1e-8)
    power = PersonalizedPageRank(adjacency, local_min_nodes=n + 1, push_threshold=1e-8)
    assert local.local and isinstance(local.engine, ForwardPush)
    assert not power.local and isinstance(power.engine, PageRankMatrix)
    (nodes, mass), (every, full) = local.scores(reset, 0.5, 1e-10), power.scores(reset, 0.5, 1e-10)
    assert len(nodes) < n and list(every) == list(range(n))
    np.testing.assert_allclose(full[nodes], mass, atol=1e-5)  # float32 power iteration against float64 push


def _memory_mapped(array: np.ndarray) -> bool:
    while array is not None and not isinstance(array, np.memmap):
        array = array.base
    return array is not None


QUESTIONS = [
    "Where was the founder of Halvard Instruments born?",
    "Which river flows through the city where the founder of Halvard Instruments was born?",
    "Who founded Halvard Instruments?",
]


def test_retrieval_with_local_ppr_forced_ranks_as_exact_on_the_mmapped_generation(sample_index, sample_retrievers):
    """ppr_local_min_nodes=0 from the environment: the same passages as exact PPR; the CSR is memory-mapped."""
    settings = load_settings(environ={"KGRAG_PPR_LOCAL_MIN_NODES": "0"}, index_dir=sample_index.dir)
    index = KnowledgeIndex(settings, embedder=sample_index.embedder, progress=False)
    forced = Retrievers(index)
    assert forced.pagerank.local and not sample_retrievers.pagerank.local
    for array in (forced.graph.adjacency.indptr, forced.graph.adjacency.indices, forced.graph.adjacency.data):
        assert _memory_mapped(array)
    for question in QUESTIONS:
        assert [e.id for e in forced.ppr(question).evidence] == [e.id for e in sample_retrievers.ppr(question).evidence]
    index.close()


def test_a_generation_from_before_the_csr_files_still_answers(make_index, sample_docs):
    """An older generation holds graph.npz (the adjacency, compressed) instead of the .npy files: it loads."""
    index = make_index("old", ppr_local_min_nodes=0)
    index.add_documents(sample_docs[:8])
    now = Retrievers(index)
    folder = index.generation().dir
    old = KnowledgeGraph.load(folder)
    sp.save_npz(folder / "graph.npz", sp.csr_matrix(old.adjacency, dtype=np.float64))
    meta = json.loads((folder / "generation.json").read_text())
    for name in CSR_FILES:
        (folder / name).unlink()
        del meta["files"][name]
    (folder / "generation.json").write_text(json.dumps(meta))
    before = Retrievers(index)
    assert before.pagerank.local and not _memory_mapped(before.graph.adjacency.data)
    for question in QUESTIONS:
        assert [e.id for e in before.ppr(question).evidence] == [e.id for e in now.ppr(question).evidence]


def test_the_compiled_push_is_cached_on_disk_for_the_next_process(tmp_path):
    """numba cache=True: the first process compiles and writes the kernel, the next one loads it."""
    script = (
        "import numpy as np\n"
        "from graph_store.ppr_push import ForwardPush, _push\n"
        "engine = ForwardPush(np.array([0, 1, 2], np.int32), np.array([1, 0], np.int32), np.ones(2, np.float32))\n"
        "engine.scores(np.array([0]), np.array([1.0]), 0.5, 1e-6)\n"
        "print(len(_push.stats.cache_hits), len(_push.stats.cache_misses))\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}

    def run() -> str:
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        return out.stdout.split()

    assert run() == ["0", "1"]  # compiled, and written
    assert list(tmp_path.rglob("*.nbi"))
    assert run() == ["1", "0"]  # loaded


def test_zero_weights_and_zero_seeds_move_nothing():
    """An explicit zero entry in the CSR and a seed of mass 0: nodes they reach are not listed (nor twice)."""
    adjacency = passage_entity_graph(2)
    adjacency.data[::3] = 0.0  # explicit zeros, kept in the structure
    seeds, mass = [4, 8, 15], [1.0, 0.0, 2.0]
    estimate, left = push(adjacency, seeds, mass, 1e-7)
    truth = exact(adjacency, seeds, mass)
    assert (truth - estimate).sum() == pytest.approx(left, abs=1e-9)
    nodes, _, _ = ForwardPush(adjacency.indptr, adjacency.indices, adjacency.data).scores(
        np.array(seeds), np.array(mass), 0.5, 1e-7
    )
    assert len(nodes) == len(set(nodes.tolist()))  # each node listed once
