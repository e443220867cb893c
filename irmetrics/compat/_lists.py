"""RankedLists built directly from already-ranked per-query arrays (closed world).

The compat modules receive rankings that are already ordered (OML ``gt_tops``,
kNN results, groups sorted by prediction); they pack them here and read the
registered measures' value functions through a :class:`~irmetrics.engine.ranked.View`,
so every formula lives once.
"""

from __future__ import annotations

import numpy as np

from ..engine.ranked import RankedLists, View


def binary_view(offsets, hits, num_rel, num_nonrel=None) -> View:
    """View at relevance level 1 of rankings whose entries are relevant (1) or not (0).

    Parameters
    ----------
    offsets : ndarray of int64, shape (Q + 1,)
        CSR offsets; query ``q`` owns entries ``offsets[q]:offsets[q + 1]`` in rank order.
    hits : ndarray of bool or {0, 1}, shape (N,)
        Bool hits become the lists' codes as an int8 view (no copy: the kernels only
        compare codes); 0/1 integers are copied to int64.
    num_rel : ndarray of int, shape (Q,)
        Number of relevant items of each query (``n_gt``, R), retrieved or not.
    num_nonrel : ndarray of int, shape (Q,), optional
        Number of non-relevant items of each query (fall-out's NR); 0 if omitted.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    hits = np.asarray(hits)
    n_q = len(offsets) - 1
    rel_hist = np.zeros((n_q, 2), dtype=np.int64)
    rel_hist[:, 1] = num_rel
    if num_nonrel is not None:
        rel_hist[:, 0] = num_nonrel
    lists = RankedLists(
        query_ids=np.arange(n_q),  # positional; compat callers never read ids
        offsets=offsets,
        code=hits.view(np.int8) if hits.dtype == bool else hits.astype(np.int64),
        rel_hist=rel_hist,
        bogus=np.zeros(n_q, dtype=bool),
    )
    # A View built directly (not via lists.view(), which caches it on the lists) holds no
    # reference cycle, so block-wise callers free each block's arrays immediately.
    return View(lists, 1, False)


def hits_matrix_view(matches, num_rel, num_nonrel=None) -> View:
    """:func:`binary_view` of a dense ``(Q, K)`` 0/1 matrix (every row a ranking of K items)."""
    matches = np.asarray(matches)
    n_q, width = matches.shape
    offsets = np.arange(n_q + 1, dtype=np.int64) * width
    return binary_view(offsets, matches.reshape(-1) != 0, num_rel, num_nonrel)


def group_offsets(sorted_group_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(unique ids, CSR offsets)`` of a sorted id array."""
    if sorted_group_ids.size == 0:
        return sorted_group_ids[:0], np.zeros(1, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_group_ids[1:] != sorted_group_ids[:-1])))
    offsets = np.concatenate((starts, [sorted_group_ids.size])).astype(np.int64)
    return sorted_group_ids[starts], offsets
