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
  holds that many entries) are reduced one by one;
* an elementwise torch call whose bits depend on the kernel's path (``sigmoid``:
  torch's vectorised and scalar loops differ in the last bit) runs on each query's
  slice as the inner row of a padded matrix, so every position takes the path it
  takes in torchmetrics' 1-D call of that length (:func:`row_mapped`).

AUROC follows torchmetrics' ``binary_auroc``: float32 ``fps / fps[-1]`` and
``tps / tps[-1]``, ``torch.trapz`` as a 1-D float32 sum of
``(x_j - x_{j-1}) (y_j + y_{j-1})`` halved, ``torch.lerp`` and the McClish
correction in float32.
"""

from __future__ import annotations

import numpy as np
import torch

from ...engine import segments as sg
from .._roc import roc_points
from ._kernels import Groups

#: ATen's ``GRAIN_SIZE``: a 1-D CPU reduction at least this long is split across threads.
SPLIT_REDUCTION = 32768


def _length_groups(lengths: np.ndarray):
    """``(length, rows, cells)`` per distinct positive length: the queries of that length
    and the flat CSR positions of their entries, one row each."""
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    for length in np.unique(lengths[lengths > 0]).tolist():
        rows = np.flatnonzero(lengths == length)
        yield length, rows, offsets[rows][:, None] + np.arange(length)


def row_reduced(terms: np.ndarray, lengths: np.ndarray, device, reduce: str = "sum") -> np.ndarray:
    """float32 ``torch.sum``/``torch.mean`` of each query's 1-D slice of CSR ``terms``.

    ``lengths[q]`` terms belong to query ``q`` (in order); a query without terms
    gets 0. Computed on ``device`` as torchmetrics reduces each query's tensor.
    """
    terms = np.ascontiguousarray(terms, dtype=np.float32)
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(lengths.size, dtype=np.float32)
    for length, rows, cells in _length_groups(lengths):
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
    run_start, run_end, run_id, n_runs = g.tie_runs
    # Integer targets well below 2**24 sum exactly in any order; float targets come
    # summed as torchmetrics' float32 scatter_add_ sums them (Groups.group_sums).
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
    slots = distinct_offsets[run_seg] + within
    if g.group_sums is not None:
        run_gain = g.group_sums[slots]  # float targets (then every query's are)
    terms[slots] = run_gain / run_len * steps
    dcg = row_reduced(terms, distinct, device)
    ideal = row_reduced(ideal_terms, g.sizes, device)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ideal == 0, np.float32(0), dcg / ideal).astype(np.float32)


def row_mapped(fn, values: np.ndarray, lengths: np.ndarray, device) -> np.ndarray:
    """``fn`` (a float32 elementwise torch call) on each query's 1-D slice of CSR ``values``,
    with the bits torchmetrics' call on a 1-D tensor of that length gives.

    A query's slice is the inner row of a ``(rows, length + 1)`` matrix cut to
    ``length`` columns: the rows cannot be merged into one long loop, so each runs
    torch's inner loop over ``length`` contiguous entries, vectorised and scalar
    positions as in a 1-D call. Calls stay under :data:`SPLIT_REDUCTION` elements
    (at least one row), where a 1-D call is not split across threads either.
    """
    values = np.ascontiguousarray(values, dtype=np.float32)
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.empty_like(values)
    for length, rows, cells in _length_groups(lengths):
        padded = np.zeros((rows.size, length + 1), dtype=np.float32)
        padded[:, :length] = values[cells]
        step = max(1, SPLIT_REDUCTION // (length + 1))
        for start in range(0, rows.size, step):
            block = torch.from_numpy(padded[start:start + step]).to(device)
            out[cells[start:start + step]] = fn(block[:, :length]).cpu().numpy()
    return out


def _quotient(counts: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """``counts / totals`` of int64 tensors as torch divides them: float32, correctly rounded."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return counts.astype(np.float32) / totals.astype(np.float32)


def auroc(g: Groups, top_k, max_fpr, device) -> np.ndarray:
    r"""torchmetrics' ``retrieval_auroc`` of every query in float32.

    Over the top ``k' = min(k, n)`` items (sigmoid first when one lies outside
    [0, 1]), ROC points :math:`x_j = \mathrm{fl}(F_j / F)`,
    :math:`y_j = \mathrm{fl}(T_j / T)` at each distinct prediction after the origin;
    :math:`AUC = \frac12 \sum_j \mathrm{fl}((x_j - x_{j-1})(y_j + y_{j-1}))`, the sum
    a float32 1-D ``torch.sum``. With ``max_fpr = m``: the curve cut after the last
    :math:`x_j \le m` plus :math:`(m, \mathrm{lerp}(y_{s-1}, y_s, w))`, and
    :math:`\frac12 (1 + (A - m^2/2) / (m - m^2/2))`. 0 without both classes.
    """
    k = g.top(top_k)
    keep = sg.ranks(g.offsets) <= k[g.seg]
    offsets = np.concatenate(([0], np.cumsum(k))).astype(np.int64)
    preds = np.asarray(g.preds[keep], dtype=np.float32)
    target = g.target[keep] != 0
    seg = g.seg[keep]
    outside = sg.seg_count((preds < 0) | (preds > 1), seg, g.n) > 0
    if outside.any():  # torchmetrics squashes a query's logits with torch.sigmoid
        squash = outside[seg]
        preds[squash] = row_mapped(torch.sigmoid, preds[squash], np.where(outside, k, 0), device)
    roc = roc_points(offsets, preds, target)
    pseg = roc.seg
    x = _quotient(roc.fps, roc.negatives[pseg])
    y = _quotient(roc.tps, roc.positives[pseg])
    points = np.diff(roc.offsets)
    both = (roc.positives > 0) & (roc.negatives > 0)
    half = np.float32(0.5)
    if max_fpr is None or max_fpr == 1:
        area = _trapezoids(x, y, points, device)
    else:
        m = np.float32(max_fpr)
        # bucketize(m, x, right=True): the first point past m; one exists where both
        # classes are present (x ends at 1 > m).
        inside = sg.seg_count(x <= m, pseg, g.n)
        stop = roc.offsets[:-1] + np.minimum(inside, points - 1)
        prev = stop - 1
        with np.errstate(divide="ignore", invalid="ignore"):  # one-class queries: set to 0 below
            weight = (m - x[prev]) / (x[stop] - x[prev])
        cut_y = _scalar_lerp(y[prev], y[stop], weight, device)
        kept = sg.ranks(roc.offsets) <= inside[pseg]
        cut_x = np.insert(x[kept], np.cumsum(inside), m)
        cut_ys = np.insert(y[kept], np.cumsum(inside), cut_y)
        partial = _trapezoids(cut_x, cut_ys, inside + 1, device)
        min_area = half * (m * m)
        area = half * (np.float32(1) + (partial - min_area) / (m - min_area))
    return np.where(both, area, np.float32(0)).astype(np.float32)


def _scalar_lerp(start, end, weight, device) -> np.ndarray:
    """``torch.lerp`` of many 0-dim triples at once: strided columns take torch's scalar
    loop, as torchmetrics' 0-dim call does."""
    table = torch.from_numpy(np.stack([start, end, weight, np.zeros_like(start)], axis=1)).to(device)
    return torch.lerp(table[:, 0], table[:, 1], table[:, 2]).cpu().numpy()


def _trapezoids(x: np.ndarray, y: np.ndarray, points: np.ndarray, device) -> np.ndarray:
    """``torch.trapz(y, x)`` of each query's CSR curve of ``points`` points, in float32."""
    starts = np.concatenate(([0], np.cumsum(points)))[:-1]
    later = np.ones(x.size, dtype=bool)
    later[starts[points > 0]] = False
    after = np.flatnonzero(later)
    terms = (x[after] - x[after - 1]) * (y[after] + y[after - 1])
    return row_reduced(terms, np.maximum(points - 1, 0), device) / np.float32(2)
