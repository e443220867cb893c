"""Exact k-nearest-neighbour search in numpy with bounded memory (no faiss, no torch).

Queries are processed in blocks so that one block's distance matrix holds at
most ``_BLOCK_CELLS`` cells; inside a block everything is vectorised. The order
is deterministic: distance ascending, then reference index ascending (torch's
``topk`` and faiss leave the order inside a tie unspecified).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_choice
from ..exceptions import ShapeError

#: Cells of one block's ``(queries x references)`` distance matrix (32 MiB of float64).
_BLOCK_CELLS = 1 << 22

METRICS = ("euclidean", "cosine")


@dataclass
class Neighbours:
    """CSR kNN result: query ``q``'s neighbours are ``indices[offsets[q]:offsets[q + 1]]``."""

    offsets: np.ndarray
    indices: np.ndarray
    distances: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm; all-zero rows stay zero (eps 1e-12, as torch's normalize)."""
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    return x / np.maximum(norms, 1e-12)[:, None]


def pairwise_distances(query: np.ndarray, reference: np.ndarray, metric: str) -> np.ndarray:
    """``(len(query), len(reference))`` distances: L2, or ``1 - cosine similarity``."""
    if metric == "euclidean":
        sq = (np.einsum("ij,ij->i", query, query)[:, None]
              - 2.0 * (query @ reference.T)
              + np.einsum("ij,ij->i", reference, reference)[None, :])
        return np.sqrt(np.maximum(sq, 0.0))
    qn, rn = normalize_rows(query), normalize_rows(reference)
    return 1.0 - qn @ rn.T


def knn(query, reference, k: int, *, metric: str = "euclidean", ignore=()) -> Neighbours:
    """The ``k`` nearest non-ignored references of every query.

    Parameters
    ----------
    query : ndarray, shape (Q, d)
    reference : ndarray, shape (G, d)
    k : int
        Neighbours per query; rows get fewer when fewer references are eligible.
    metric : {"euclidean", "cosine"}
    ignore : sequence of ``(query_keys, reference_keys)`` pairs
        Reference ``j`` is ignored for query ``i`` when ``query_keys[i] ==
        reference_keys[j]`` for any pair (the query itself, its sequence, ...).
    """
    check_choice("metric", metric, METRICS)
    query = np.asarray(query, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if query.ndim != 2 or reference.ndim != 2 or query.shape[1] != reference.shape[1]:
        raise ShapeError(f"embeddings must be 2-D with the same width; got {query.shape} "
                         f"and {reference.shape}.")
    n_q, n_ref = len(query), len(reference)
    k = int(min(k, n_ref))
    rows = max(1, _BLOCK_CELLS // max(n_ref, 1))
    parts_idx, parts_dist, counts = [], [], []
    for start in range(0, n_q, rows):
        stop = min(start + rows, n_q)
        dist = pairwise_distances(query[start:stop], reference, metric)
        eligible = np.ones(dist.shape, dtype=bool)
        for q_keys, r_keys in ignore:
            eligible &= np.asarray(q_keys)[start:stop, None] != np.asarray(r_keys)[None, :]
        idx, d, c = _top_k_block(dist, eligible, k)
        parts_idx.append(idx)
        parts_dist.append(d)
        counts.append(c)
    counts = np.concatenate(counts) if counts else np.zeros(0, np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    indices = np.concatenate(parts_idx) if parts_idx else np.zeros(0, np.int64)
    distances = np.concatenate(parts_dist) if parts_dist else np.zeros(0)
    return Neighbours(offsets, indices, distances)


def argsort_rows(values: np.ndarray) -> np.ndarray:
    """Row-wise argsort by (value, column): quicksort, then a stable re-sort of rows with ties.

    Ties between infinite values (ignored references) are left in any order.
    """
    order = np.argsort(values, axis=1)
    if values.shape[1] > 1:
        ranked = np.take_along_axis(values, order, axis=1)
        tied = ((ranked[:, 1:] == ranked[:, :-1]) & np.isfinite(ranked[:, 1:])).any(axis=1)
        if tied.any():
            order[tied] = np.argsort(values[tied], axis=1, kind="stable")
    return order


def _top_k_block(dist: np.ndarray, eligible: np.ndarray, k: int):
    """Top ``k`` eligible columns per row by (distance, column); flat CSR pieces."""
    b, n_ref = dist.shape
    if k <= 0 or n_ref == 0:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(b, np.int64)
    masked = np.where(eligible, dist, np.inf)
    if 2 * k < n_ref:
        # Everything at or below the k-th smallest value is a candidate (ties included);
        # candidates are packed left in column order, then ordered exactly.
        kth = np.partition(masked, k - 1, axis=1)[:, k - 1]
        candidates = (masked <= kth[:, None]) & eligible
        per_row = candidates.sum(axis=1)
        width = max(int(per_row.max()), 1)
        row, col = np.nonzero(candidates)
        slot = np.arange(row.size) - np.repeat(np.cumsum(per_row) - per_row, per_row)
        values = np.full((b, width), np.inf)
        columns = np.zeros((b, width), dtype=np.int64)
        valid = np.zeros((b, width), dtype=bool)
        values[row, slot] = dist[row, col]
        columns[row, slot] = col
        valid[row, slot] = True
    else:
        values, valid = masked, eligible
        columns = np.broadcast_to(np.arange(n_ref), (b, n_ref))
    order = argsort_rows(values)[:, :k]
    keep = np.take_along_axis(valid, order, axis=1)
    chosen = np.take_along_axis(columns, order, axis=1)[keep]
    chosen_dist = np.take_along_axis(values, order, axis=1)[keep]
    return chosen.astype(np.int64), chosen_dist, keep.sum(axis=1).astype(np.int64)
