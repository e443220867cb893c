"""Host kernels of the torchmetrics drop-in: per-query values over CSR rankings.

Both faces of :mod:`irmetrics.compat.torchmetrics` end here: the numpy API ranks on
the host (:meth:`Groups.from_arrays`, ties in input order), the torch Metrics rank on
the device in torchmetrics' own order and send across only what a kernel reads
(each query's first entries and whole-query totals). Every formula lives once, on
the registered measures' value functions where one exists.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ...engine import segments as sg
from ...engine.gains import log2_discount
from ...engine.ordering import descending_keys
from ...exceptions import InputFormatError
from ...measures.context import safe_div
from ...measures.metric_learning import (
    hit_values,
    ml_r_precision_values,
    oml_map_values,
    reciprocal_rank_values,
)
from ...measures.torchmetrics_family import fall_out_values
from .._lists import binary_view, group_offsets
from .._roc import partial_area, roc_points, trapezoid_area

EMPTY_TARGET_ACTIONS = ("error", "skip", "neg", "pos")
AGGREGATIONS = ("mean", "median", "min", "max")


# --------------------------------------------------------------------------- grouped rankings

def _group_key(indexes: np.ndarray) -> np.ndarray:
    """uint64 keys holding each index's rank among the distinct indexes in the high 32 bits."""
    lo, hi = int(indexes.min()), int(indexes.max())
    if hi - lo < 2**32:
        code = (indexes - lo).astype(np.uint64)
    else:
        code = np.unique(indexes, return_inverse=True)[1].astype(np.uint64)
    return code << np.uint64(32)


class Groups:
    """Queries as CSR rankings, or the first entries of each ranking, with whole-query totals.

    Query ``q`` owns entries ``offsets[q]:offsets[q + 1]`` in rank order: all its
    items (numpy API) or the prefix a kernel reads (torch Metrics: ``min(k, n)``
    entries, whole tie groups for nDCG); a binary ``target`` may be bool (the torch
    Metrics send ``target != 0``). ``sizes``, ``num_pos`` and ``target_sum``
    always count every item of the query, so cutoffs and denominators are right
    whatever the prefix. ``ideal`` is ``(offsets, gains)``: each query's largest
    gains in descending order (at least ``min(k, n)`` of them), for nDCG's ideal;
    None derives it from the lists, which must then be complete.
    """

    def __init__(self, offsets, preds, target, *, sizes=None, num_pos=None, target_sum=None,
                 ideal=None, ids=None):
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.preds = preds
        self.target = target
        self.sizes = np.diff(self.offsets) if sizes is None else np.asarray(sizes, dtype=np.int64)
        self.n = len(self.sizes)
        if num_pos is None:
            num_pos = sg.seg_count(target != 0, self.seg, self.n)
        if target_sum is None:
            target_sum = sg.seg_sum(target.astype(np.float64), self.seg, self.n)
        self.num_pos = np.asarray(num_pos, dtype=np.int64)
        self.num_neg = self.sizes - self.num_pos
        self.target_sum = np.asarray(target_sum, dtype=np.float64)
        self.ideal = ideal
        self.distinct: np.ndarray | None = None  # distinct predictions per query (nDCG)
        # float targets summed per tie group in float32, ``distinct`` per query (nDCG)
        self.group_sums: np.ndarray | None = None
        self.ids = np.arange(self.n) if ids is None else ids

    @cached_property
    def seg(self) -> np.ndarray:
        """Query number of every entry."""
        return sg.segment_ids(self.offsets)

    @cached_property
    def tie_runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """The runs of tied predictions within each query, as nDCG's float64 and float32
        kernels read them: (first entry of a run, last entry of a run, run number of every
        entry, number of runs)."""
        run_end = np.ones(self.preds.size, dtype=bool)
        run_end[:-1] = (self.preds[1:] != self.preds[:-1]) | (self.seg[1:] != self.seg[:-1])
        run_start = np.ones(self.preds.size, dtype=bool)
        run_start[1:] = run_end[:-1]
        run_id = np.cumsum(run_start) - 1
        return run_start, run_end, run_id, int(run_id[-1]) + 1 if run_id.size else 0

    @classmethod
    def from_arrays(cls, preds, target, indexes=None) -> Groups:
        """Group by ``indexes`` (ascending) and sort by prediction descending, ties in
        input position: one stable sort of a packed ``(query, -pred)`` uint64 key."""
        n = preds.size
        if indexes is None:
            order = np.argsort(descending_keys(preds), kind="stable")
            ids, offsets = np.zeros(1, dtype=np.int64), np.array([0, n], dtype=np.int64)
        else:
            order = np.argsort(_group_key(indexes) | descending_keys(preds), kind="stable")
            ids, offsets = group_offsets(indexes[order])
        return cls(offsets, preds[order], target[order], ids=ids)

    def view(self, filter_nonpositive=False):
        """Binary view; with the 1.9 filter, items with pred <= 0 are misses (R unfiltered)."""
        hits = self.target if self.target.dtype == bool else self.target != 0
        if filter_nonpositive:
            hits = hits & (self.preds > 0)
        return binary_view(self.offsets, hits, self.num_pos, self.num_neg)

    def top(self, top_k):
        """Per-query cutoff ``min(top_k, size)`` (``top_k=None``: the whole query)."""
        return self.sizes if top_k is None else np.minimum(top_k, self.sizes)

    def empty(self, no_negative=False) -> np.ndarray:
        """torchmetrics' "empty" queries: ``target.sum() == 0`` (fall-out: no negative)."""
        return self.num_neg == 0 if no_negative else self.target_sum == 0


def empty_query_error(no_negative: bool, index) -> InputFormatError:
    """The ``empty_target_action='error'`` error, in torchmetrics' words plus the index."""
    kind = "negative" if no_negative else "positive"
    index = index.item() if isinstance(index, np.generic) else index
    return InputFormatError(f"`compute` method was provided with a query with no {kind} target "
                            f"(index {index!r}).")


def handle_empty(g: Groups, action: str, no_negative: bool, *arrays):
    """Apply ``empty_target_action`` to per-query ``arrays`` (first axis = queries).

    ``'skip'`` drops empty queries, ``'neg'``/``'pos'`` set them to 0/1 and
    ``'error'`` raises :func:`empty_query_error` for the first one.
    """
    empty = g.empty(no_negative)
    if not empty.any():
        return arrays
    if action == "error":
        raise empty_query_error(no_negative, g.ids[np.argmax(empty)])
    if action == "skip":
        return tuple(a[~empty] for a in arrays)
    value = 1.0 if action == "pos" else 0.0
    return tuple(np.where(empty.reshape(empty.shape + (1,) * (a.ndim - 1)), value, a)
                 for a in arrays)


# --------------------------------------------------------------------------- per-query values

def fall_out(g, top_k):
    return fall_out_values(g.view(), g.top(top_k))


def average_precision(g, top_k, filter_nonpositive=True):
    return oml_map_values(g.view(filter_nonpositive), g.top(top_k))


def reciprocal_rank(g, top_k, filter_nonpositive=True):
    return reciprocal_rank_values(g.view(filter_nonpositive), g.top(top_k))


def precision(g, top_k, adaptive_k=False, filter_nonpositive=True):
    if top_k is None:
        k = g.sizes
    elif adaptive_k:
        k = g.top(top_k)
    else:
        k = top_k  # K > n still divides by K
    values = g.view(filter_nonpositive).relat(k) / k
    return np.where(g.num_pos > 0, values, 0.0)


def recall(g, top_k, filter_nonpositive=True):
    return safe_div(g.view(filter_nonpositive).relat(g.top(top_k)), g.num_pos)


def r_precision(g):
    return ml_r_precision_values(g.view())


def hit_rate(g, top_k):
    return hit_values(g.view(), g.top(top_k))


def normalized_dcg(g, top_k):
    """Tie-averaged DCG@k over the ideal DCG@k, linear gain; 0 when the ideal is 0.

    Reads whole tie groups through rank k (the prefix may stop at any group end
    after it) and the ideal gains of :attr:`Groups.ideal`.
    """
    k = g.top(top_k)
    rank = sg.ranks(g.offsets)
    longest = int(g.sizes.max()) if g.n else 0
    # D[q, i]: discount mass of ranks 1..min(i, k_q), as one flat lookup per query.
    cum_discount = np.concatenate(([0.0], np.cumsum(1.0 / log2_discount(np.arange(1, longest + 1)))))
    run_start, run_end, run_id, n_runs = g.tie_runs
    run_gain = np.bincount(run_id, weights=g.target, minlength=n_runs)
    run_len = np.bincount(run_id, minlength=n_runs)
    first_rank = rank[run_start]
    last_rank = rank[run_end]
    run_seg = g.seg[run_start]
    kq = k[run_seg]
    mass = cum_discount[np.minimum(last_rank, kq)] - cum_discount[np.minimum(first_rank - 1, kq)]
    dcg = sg.seg_sum(run_gain / run_len * mass, run_seg, g.n)
    if g.ideal is None:
        ideal_offsets, ideal = g.offsets, g.target[np.lexsort((-g.target, g.seg))]
    else:
        ideal_offsets, ideal = g.ideal
    ideal_seg = sg.segment_ids(ideal_offsets)
    ideal_rank = sg.ranks(ideal_offsets)
    ideal_terms = np.where(ideal_rank <= k[ideal_seg], ideal / log2_discount(ideal_rank), 0.0)
    idcg = sg.seg_sum(ideal_terms, ideal_seg, g.n)
    return np.where(idcg == 0, 0.0, dcg / np.where(idcg == 0, 1.0, idcg))


def sigmoid32(x):
    x = x.astype(np.float32)
    with np.errstate(over="ignore"):
        return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)


def auroc(g, top_k, max_fpr=None):
    """Binary ROC AUC (or McClish-standardised partial AUC) of each query's top k."""
    k = g.top(top_k)
    rank = sg.ranks(g.offsets)
    keep = rank <= k[g.seg]
    sub_offsets = np.concatenate(([0], np.cumsum(k))).astype(np.int64)
    preds, target = g.preds[keep], g.target[keep] != 0
    seg = g.seg[keep]
    outside = (preds < 0) | (preds > 1)
    squash = sg.seg_count(outside, seg, g.n) > 0
    # torchmetrics passes logits through a float32 sigmoid, per call (= per query).
    preds = np.where(squash[seg], sigmoid32(preds), preds)
    roc = roc_points(sub_offsets, preds, target)
    pseg = roc.seg
    tpr = safe_div(roc.tps, roc.positives[pseg])
    fpr = safe_div(roc.fps, roc.negatives[pseg])
    if max_fpr is None or max_fpr == 1:
        area = trapezoid_area(roc.offsets, fpr, tpr)
    else:
        partial = partial_area(roc.offsets, fpr, tpr, max_fpr)
        min_area = 0.5 * max_fpr**2
        area = 0.5 * (1 + (partial - min_area) / (max_fpr - min_area))
    return np.where((roc.positives > 0) & (roc.negatives > 0), area, 0.0)


def precision_recall_curve(g, max_k, adaptive_k):
    """``(precision, recall)`` matrices of shape (queries, max_k), ``max_k`` fixed.

    ``hits[q, k - 1]`` counts positives in the first ``k`` entries; a list shorter
    than ``k`` keeps its total (running maxima of the running counts).
    """
    hits = np.zeros((g.n, max_k))
    rank = sg.ranks(g.offsets)
    inside = rank <= max_k
    running = sg.seg_cumcount(g.target != 0, g.offsets)
    hits[g.seg[inside], rank[inside] - 1] = running[inside]
    np.maximum.accumulate(hits, axis=1, out=hits)
    ks = np.arange(1, max_k + 1)
    denominators = np.minimum(ks[None, :], g.sizes[:, None]) if adaptive_k else ks[None, :]
    recall_values = safe_div(hits, g.num_pos[:, None].astype(np.float64))
    precision_values = np.where(g.num_pos[:, None] > 0, hits / denominators, 0.0)
    return precision_values, recall_values
