"""torchmetrics 1.9.0's float32 order of operations, for the values where it shows.

Precision, recall, fall-out, hit rate, R-precision, reciprocal rank and the
precision-recall curve are one float32 division of two exact integers in
torchmetrics: correctly rounded, so the exact value rounded to float32 is
already its number. Average precision and nDCG are not: torchmetrics sums
float32 terms with torch's reductions, and those sums round differently from the
exact value (by an ulp or so). This module redoes those two in torchmetrics'
float32 steps, vectorised over queries:

* elementwise steps (a float32 quotient, product or difference) are IEEE
  correctly rounded on every device, so numpy float32 gives torch's bits;
* steps whose value depends on the kernel (``log2``, ``cumsum``) run through
  the same torch call on the same device with the same length as torchmetrics';
* each per-query reduction (a 1-D ``sum``/``mean`` of length L in
  torchmetrics) runs as the row reduction of a ``(queries, L)`` matrix of the
  queries sharing that length: torch reduces each contiguous row as it reduces a
  1-D tensor of that length (checked in tests), while padding a row to a longer
  length would not give the same bits. At :data:`SPLIT_REDUCTION` elements and
  more a 1-D CPU reduction is split across threads, so such rows (few: each
  holds that many entries) are reduced one by one.
"""

from __future__ import annotations

import numpy as np
import torch

from ...engine import segments as sg
from ._kernels import Groups

#: ATen's ``GRAIN_SIZE``: a 1-D CPU reduction at least this long is split across threads.
SPLIT_REDUCTION = 32768


def row_reduced(terms: np.ndarray, lengths: np.ndarray, device, reduce: str = "sum") -> np.ndarray:
    """float32 ``torch.sum``/``torch.mean`` of each query's 1-D slice of CSR ``terms``.

    ``lengths[q]`` terms belong to query ``q`` (in order); a query without terms
    gets 0. Computed on ``device`` as torchmetrics reduces each query's tensor.
    """
    terms = np.ascontiguousarray(terms, dtype=np.float32)
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(lengths.size, dtype=np.float32)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    for length in np.unique(lengths[lengths > 0]).tolist():
        rows = np.flatnonzero(lengths == length)
        cells = offsets[rows][:, None] + np.arange(length)
        matrix = torch.from_numpy(terms[cells]).to(device)
        if length >= SPLIT_REDUCTION:
            reduced = torch.stack([getattr(row, reduce)() for row in matrix])
        else:
            reduced = getattr(matrix, reduce)(dim=1)
        out[rows] = reduced.cpu().numpy()
    return out


def average_precision(g: Groups, top_k, filter_nonpositive: bool, device) -> np.ndarray:
    r"""torchmetrics' AP in float32: ``(arange(m) + 1) / positions`` then ``.mean()``.

    :math:`AP = \mathrm{mean}_{j=1..m}\, \mathrm{fl}(j / p_j)` over the ranks
    :math:`p_j` of the ``m`` hits in the top ``min(k, n)``; 0 without a hit.
    ``g`` must hold each query's top ``min(k, n)`` in torchmetrics' order.
    """
    k = g.top(top_k)
    rank = sg.ranks(g.offsets)
    hits = g.target if g.target.dtype == bool else g.target != 0
    if filter_nonpositive:
        hits = hits & (g.preds > 0)
    hits = hits & (rank <= k[g.seg])
    positions = rank[hits].astype(np.float32)
    m = sg.seg_count(hits, g.seg, g.n)
    j = sg.ranks(np.concatenate(([0], np.cumsum(m)))).astype(np.float32)
    return row_reduced(j / positions, m, device, "mean")


def _discounts(n: int, top_k, device) -> tuple[np.ndarray, np.ndarray]:
    """``(discount, cumulative)`` for lists of length ``n``, as torchmetrics makes them."""
    discount = 1.0 / (torch.log2(torch.arange(n, device=device) + 2.0))
    if top_k is not None:
        discount[top_k:] = 0.0
    return discount.cpu().numpy(), discount.cumsum(dim=-1).cpu().numpy()


def normalized_dcg(g: Groups, top_k, device) -> np.ndarray:
    r"""torchmetrics' tie-averaged nDCG in float32.

    Per query of ``n`` items and ``G`` distinct predictions (tie groups ``t``,
    descending, ending at 0-based position ``e_t``):
    :math:`DCG = \sum_t \mathrm{fl}(s_t / c_t)\,(C_{e_t} - C_{e_{t-1}})` with
    :math:`C` the float32 cumulative discount (zero past k), a 1-D float32 sum of
    length ``G``; the ideal is the float32 sum over ``n`` of the discount times the
    targets sorted descending; ``DCG / ideal``, 0 when the ideal is 0.
    ``g`` holds whole tie groups through rank k, :attr:`Groups.ideal` and
    :attr:`Groups.distinct`.
    """
    k = g.top(top_k)
    rank = sg.ranks(g.offsets)
    run_end = np.ones(g.preds.size, dtype=bool)
    run_end[:-1] = (g.preds[1:] != g.preds[:-1]) | (g.seg[1:] != g.seg[:-1])
    run_start = np.ones(g.preds.size, dtype=bool)
    run_start[1:] = run_end[:-1]
    run_id = np.cumsum(run_start) - 1
    n_runs = int(run_id[-1]) + 1 if run_id.size else 0
    # Integer targets (and float ones) well below 2**24 sum exactly in any order.
    run_gain = np.bincount(run_id, weights=g.target, minlength=n_runs).astype(np.float32)
    run_len = np.bincount(run_id, minlength=n_runs).astype(np.float32)
    run_seg = g.seg[run_start]
    last = rank[run_end] - 1  # 0-based end of each group
    cumulative = np.empty(last.size, dtype=np.float32)
    ideal_offsets, ideal_gains = g.ideal
    ideal_seg = sg.segment_ids(ideal_offsets)
    ideal_rank = sg.ranks(ideal_offsets)
    ideal_terms = np.zeros(int(g.sizes.sum()), dtype=np.float32)  # n terms per query, 0 past k
    size_offsets = np.concatenate(([0], np.cumsum(g.sizes)))
    for n in np.unique(g.sizes).tolist():
        discount, cum = _discounts(n, top_k, device)
        here = g.sizes[run_seg] == n
        cumulative[here] = cum[last[here]]
        inside = (g.sizes[ideal_seg] == n) & (ideal_rank <= k[ideal_seg])
        ideal_terms[size_offsets[ideal_seg[inside]] + ideal_rank[inside] - 1] = (
            discount[ideal_rank[inside] - 1] * ideal_gains[inside].astype(np.float32))
    # discount_sums: C at the group's end minus C at the previous group's end.
    steps = cumulative.copy()
    later = np.flatnonzero(run_seg[1:] == run_seg[:-1]) + 1
    steps[later] = cumulative[later] - cumulative[later - 1]
    # One term per distinct prediction: those past the prefix are products with 0.
    per_query = np.bincount(run_seg, minlength=g.n)
    distinct = g.distinct
    assert distinct is not None, "nDCG's groups count distinct predictions"
    terms = np.zeros(int(distinct.sum()), dtype=np.float32)
    distinct_offsets = np.concatenate(([0], np.cumsum(distinct)))
    within = np.arange(run_seg.size) - np.repeat(np.cumsum(per_query) - per_query, per_query)
    terms[distinct_offsets[run_seg] + within] = run_gain / run_len * steps
    dcg = row_reduced(terms, distinct, device)
    ideal = row_reduced(ideal_terms, g.sizes, device)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ideal == 0, np.float32(0), dcg / ideal).astype(np.float32)
