"""Local Personalized PageRank by forward push (Andersen, Chung, Lang 2006), compiled with numba.

Same walk as graph_store/ppr.py's power iteration: restart with probability 1 - damping to the reset
distribution r, otherwise follow an out-edge with probability weight / out-weight; a node with no out-weight
hands its mass back to r. Push keeps an estimate p and a residual (mass not yet spread), starting from
p = 0, residual = r, with the invariant  exact = p + PPR(residual), and repeatedly pushes a node u whose
residual is at least ``threshold`` x out-weight(u): (1 - damping) of it joins p[u], the rest moves to u's
neighbours (or back to r from a dangling node). When no node is left to push, every residual is below
threshold x out-weight, so:

- p <= exact on every node, and the L1 error sum(exact - p) equals the residual left, below
  threshold x (out-weight of the nodes holding it) <= threshold x total out-weight;
- pushing u moves at least (1 - damping) x threshold x out-weight(u) into p, whose total is at most 1, so the
  out-weight of all pushes together is at most 1 / ((1 - damping) x threshold): that many edge visits for
  edges weighing about 1 (a mention weighs 1). It does not grow with the graph, only with 1 / threshold.

The CSR may be memory-mapped (graph_store/graph.py saves it as .npy files): a query reads the rows it
pushes, nothing else. The working arrays are per-graph scratch of the graph's size, allocated zeroed by the
operating system (pages a query never touches cost no memory) and cleared after each query entry by entry.

The kernel is compiled on first use and cached on disk (numba ``cache=True``: next to this file, or in
numba's user cache directory when that is not writable), so only the first process pays the compile.
"""

from __future__ import annotations

import threading

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _spread(targets, shares, share, threshold, out_weight, residual, estimate, queue, touched, n_touched, head, size):
    """Add share x shares[e] to the residual of each targets[e]; queue those reaching their push limit.

    A node is queued exactly while its residual is at or above its limit (the residual only grows until the
    node is pushed, which sets it to 0), so crossing the limit is the one moment to queue it; a node is new
    when it has neither residual nor estimate. No flags: two arrays read per edge, not three."""
    n = residual.shape[0]
    for e in range(targets.shape[0]):
        v = targets[e]
        before = residual[v]
        after = before + share * shares[e]
        if after == before:  # nothing moves (a zero weight): v is not touched, not listed twice
            continue
        if before == 0.0 and estimate[v] == 0.0:
            touched[n_touched] = v
            n_touched += 1
        residual[v] = after
        limit = threshold * out_weight[v] if out_weight[v] > 0 else threshold
        if before < limit <= after:
            tail = head + size
            queue[tail - n if tail >= n else tail] = v
            size += 1
    return n_touched, size


@numba.njit(cache=True, nogil=True)
def _push(
    indptr, indices, weights, out_weight, seeds, seed_mass, damping, threshold, residual, estimate, queue, touched
):
    """Forward push from ``seeds`` (masses summing to 1); returns the number of touched nodes (listed in
    ``touched``) and the residual mass left. ``queue`` is a ring buffer of the graph's size (a node is queued at
    most once at a time)."""
    n = residual.shape[0]
    head = 0
    n_touched, size = _spread(seeds, seed_mass, 1.0, threshold, out_weight, residual, estimate, queue, touched, 0, 0, 0)
    # A dangling node's mass goes back to the seeds with the CSR's dtypes, so that either targets are one type for
    # numba (node ids fit the indices' type; the shares are rounded to the weights' precision, as every edge's).
    back_to, back_mass = seeds.astype(indices.dtype), seed_mass.astype(weights.dtype)
    while size > 0:
        u = queue[head]
        head = head + 1 if head + 1 < n else 0
        size -= 1
        mass = residual[u]
        residual[u] = 0.0
        estimate[u] += (1.0 - damping) * mass
        if out_weight[u] > 0:  # along the out-edges
            row = slice(indptr[u], indptr[u + 1])
            targets, shares = indices[row], weights[row]
            share = damping * mass / out_weight[u]
        else:  # dangling: back to the reset distribution
            targets, shares, share = back_to, back_mass, damping * mass
        n_touched, size = _spread(
            targets, shares, share, threshold, out_weight, residual, estimate, queue, touched, n_touched, head, size
        )
    left = 0.0
    for i in range(n_touched):
        left += residual[touched[i]]
    return n_touched, left


class ForwardPush:
    """Forward push PPR over one CSR adjacency (``indptr``, ``indices``, ``weights``: row u lists u's out-edges),
    read-only and shared by every query; thread-safe (each running query takes its own scratch)."""

    def __init__(
        self, indptr: np.ndarray, indices: np.ndarray, weights: np.ndarray, out_weight: np.ndarray | None = None
    ):
        self.indptr, self.indices, self.weights = indptr, indices, weights
        self.n = len(indptr) - 1
        if out_weight is None:  # an older generation saved no out-weights: sum the rows once
            out_weight = np.add.reduceat(weights, indptr[:-1]) if len(weights) else np.zeros(self.n)
            out_weight[np.diff(indptr) == 0] = 0  # reduceat gives an empty row its next entry
        self.out_weight = out_weight
        self._free: list[tuple[np.ndarray, ...]] = []
        self._lock = threading.Lock()

    def _scratch(self) -> tuple[np.ndarray, ...]:
        with self._lock:
            if self._free:
                return self._free.pop()
        n = self.n  # np.zeros / np.empty of this size map fresh pages: only those touched take memory
        return np.zeros(n), np.zeros(n), np.empty(n, np.int32), np.empty(n, np.int32)

    def scores(
        self, seeds: np.ndarray, mass: np.ndarray, damping: float, threshold: float
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """(nodes, their PPR estimates, the residual mass left = the L1 error) for the reset distribution ``mass``
        on ``seeds`` (normalised here). Only the nodes the push reached are returned, in no particular order."""
        if not 0 <= damping < 1 or threshold <= 0:
            raise ValueError("damping must be in [0, 1) and the threshold positive")
        seeds = np.asarray(seeds, dtype=np.int64)
        mass = np.asarray(mass, dtype=np.float64)
        total = mass.sum()
        if seeds.shape != mass.shape or total <= 0 or (mass < 0).any() or len(np.unique(seeds)) != len(seeds):
            raise ValueError("seeds must be distinct nodes with non-negative masses of positive sum")
        residual, estimate, queue, touched = scratch = self._scratch()
        try:
            count, left = _push(
                self.indptr,
                self.indices,
                self.weights,
                self.out_weight,
                seeds,
                mass / total,
                damping,
                threshold,
                residual,
                estimate,
                queue,
                touched,
            )
            nodes = touched[:count].copy()
            values = estimate[nodes]
            residual[nodes], estimate[nodes] = 0.0, 0.0  # clean for the next query
        finally:
            with self._lock:
                self._free.append(scratch)
        return nodes, values, float(left)
