"""Personalized PageRank by power iteration on a sparse transition matrix.

    p = (1 - d) * r + d * (W p + (mass on dangling nodes) * r)

W is column-stochastic (W[i, j] = A[i, j] / outweight(j)); a node with no
out-weight hands its mass back to the reset distribution r, which keeps the
walk personalised (igraph does the same for personalized PageRank).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.sparse as sp

# Below this many stored entries one thread is faster than handing rows to a second one
# (measured on 2 cores: a 280k-entry matrix gains nothing, a 2M-entry one runs 2x faster).
PARALLEL_MIN_ENTRIES = 1_000_000


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 1) - 1), thread_name_prefix="ppr")


class PageRankMatrix:
    """The transition matrix of an adjacency, built once and shared by every query (read-only).

    float32 halves the memory traffic of each iteration (retrieval uses it); float64 for exactness.
    Nodes are renumbered busiest first, so the entries of p that every product reads most sit
    together in cache (a product on the 2Wiki graph takes 30% less time). Large matrices are cut
    into row blocks of equal work: scipy releases the GIL in a sparse product, so the blocks
    multiply on all cores at once.
    """

    def __init__(self, adjacency: sp.spmatrix, dtype=np.float64, threads: int | None = None):
        adjacency = sp.csr_matrix(adjacency, dtype=dtype)
        degree = np.diff(adjacency.indptr) + np.diff(adjacency.tocsc().indptr)
        self.order = np.argsort(-degree, kind="stable")  # internal position -> node
        adjacency = adjacency[self.order][:, self.order]
        out_weight = np.asarray(adjacency.sum(axis=1)).ravel()  # row i: edges from i
        self.dangling = np.flatnonzero(out_weight == 0)
        inverse = np.where(out_weight == 0, 0.0, 1.0 / np.where(out_weight == 0, 1.0, out_weight)).astype(dtype)
        # W = A^T D^-1: column j spreads node j's mass along its out-edges.
        self.transition = (adjacency.T @ sp.diags(inverse)).tocsr().astype(dtype)
        self.n = adjacency.shape[0]
        self.dtype = dtype
        if threads is None:  # automatic: every core, for a matrix worth splitting
            threads = (os.cpu_count() or 1) if self.transition.nnz >= PARALLEL_MIN_ENTRIES else 1
        # Row cuts where the cumulative number of entries crosses each equal share.
        cuts = np.searchsorted(self.transition.indptr, np.linspace(0, self.transition.nnz, threads + 1)[1:-1])
        self.bounds = [0, *cuts.tolist(), self.n]
        self.blocks = [self.transition[a:b] for a, b in zip(self.bounds, self.bounds[1:])]

    def multiply(self, p: np.ndarray, out: np.ndarray) -> np.ndarray:
        """out = W p, the row blocks in parallel."""
        if len(self.blocks) == 1:
            out[:] = self.transition @ p
            return out
        pending = [
            (a, b, _pool().submit(block.__matmul__, p))
            for a, b, block in zip(self.bounds[1:], self.bounds[2:], self.blocks[1:])
        ]
        out[: self.bounds[1]] = self.blocks[0] @ p
        for a, b, future in pending:
            out[a:b] = future.result()
        return out


def personalized_pagerank(
    matrix: PageRankMatrix, reset: np.ndarray, damping: float = 0.5, tol: float = 1e-7, max_iter: int = 200
) -> np.ndarray:
    """Stationary distribution of the walk restarting from ``reset`` (normalised here) with prob. 1 - damping.

    Stops when an iteration moves less than ``tol`` in L1; the distance to the fixed point is then
    below ``tol * damping / (1 - damping)``.
    """
    if not 0 <= damping < 1:
        raise ValueError("damping must be in [0, 1)")
    reset = np.asarray(reset, dtype=matrix.dtype)
    total = reset.sum()
    if reset.shape != (matrix.n,) or total <= 0 or (reset < 0).any():
        raise ValueError("reset must be a non-negative vector over the nodes with positive sum")
    reset = reset[matrix.order] / total
    p, nxt, scratch = reset.copy(), np.empty_like(reset), np.empty_like(reset)
    for _ in range(max_iter):
        dangling_mass = p[matrix.dangling].sum()
        matrix.multiply(p, nxt)
        nxt *= damping
        np.multiply(reset, 1 - damping + damping * dangling_mass, out=scratch)
        nxt += scratch
        np.subtract(nxt, p, out=scratch)
        change = np.abs(scratch, out=scratch).sum()
        p, nxt = nxt, p
        if change < tol:
            break
    nxt[matrix.order] = p  # back to node numbering
    return nxt


class PersonalizedPageRank:
    """PPR over one graph, exact or local by its size: power iteration (PageRankMatrix, float32) below
    ``local_min_nodes`` nodes; from there on forward push (graph_store/ppr_push.py, numba), whose cost depends on
    ``push_threshold``, not on the graph, and which reads only the rows of the (memory-mapped) CSR it pushes."""

    def __init__(
        self,
        adjacency: sp.csr_matrix,
        out_weight: np.ndarray | None = None,
        *,
        local_min_nodes: int,
        push_threshold: float,
    ):
        self.n = adjacency.shape[0]
        self.local = self.n >= local_min_nodes
        self.push_threshold = push_threshold
        self.engine: Any
        if self.local:
            from graph_store.ppr_push import ForwardPush  # numba loads only for a graph that needs it

            self.engine = ForwardPush(adjacency.indptr, adjacency.indices, adjacency.data, out_weight)
        else:
            self.engine = PageRankMatrix(adjacency, dtype=np.float32)

    def scores(self, reset: dict[int, float], damping: float, tol: float) -> tuple[np.ndarray, np.ndarray]:
        """(nodes, their mass) for the walk restarting to ``reset`` (node -> weight, normalised here): every node
        (exact, stopping at L1 change ``tol``) or the nodes the push reached (local; the others have none)."""
        nodes = np.fromiter(reset.keys(), np.int64, len(reset))
        weights = np.fromiter(reset.values(), np.float64, len(reset))
        if self.local:
            found, mass, _ = self.engine.scores(nodes, weights, damping, self.push_threshold)
            return found, mass
        vector = np.zeros(self.n)
        vector[nodes] = weights
        return np.arange(self.n), personalized_pagerank(self.engine, vector, damping, tol)
