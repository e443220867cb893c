"""Drop-in for torchmetrics 1.9.0's retrieval metrics (functional and module forms).

Functional forms take ``preds`` and ``target`` of one query (any shape, flattened)
and return a Python float; modules accumulate ``update(preds, target, indexes)``
and ``compute()`` one aggregated float over the queries (``indexes``). Inputs are
numpy arrays or anything with ``__array__``; torch is never imported.

Semantics reproduced from torchmetrics 1.9.0:

* ``preds`` are cast to float32 before ranking (so float64 scores that collide
  in float32 tie, as they do in torch);
* **the 1.9 pred <= 0 filter**: average precision, reciprocal rank, precision and
  recall treat items whose prediction is <= 0 as misses. This is the default
  (``filter_nonpositive=True``); ``filter_nonpositive=False`` gives the classical
  score-agnostic definitions. Recall's denominator is never filtered;
* "empty" queries (no positive target; for fall-out no negative target) take
  ``empty_target_action`` in the modules: ``'neg'`` 0, ``'pos'`` 1, ``'skip'``,
  ``'error'``; every module defaults to ``'neg'`` except ``RetrievalFallOut``
  (``'pos'``);
* ``ignore_index`` drops positions whose target equals it before any check;
* nDCG averages the gain over tied predictions (deterministic, as in torchmetrics);
* ``aggregation`` is ``'mean'``, ``'median'`` (the lower median, as
  ``torch.median``), ``'min'``, ``'max'`` or a callable ``f(values, dim=None)``
  receiving a numpy array;
* the modules accept ``Metric``'s own keyword options (``compute_on_cpu``,
  ``dist_sync_on_step``, ``process_group``, ``dist_sync_fn``,
  ``distributed_available_fn``, ``sync_on_compute``, ``compute_with_cache``),
  validate them as torchmetrics does and otherwise ignore them: there is one process
  and numpy computes on the CPU; any other keyword raises ParameterError (torchmetrics:
  ValueError "Unexpected keyword arguments");
* ``RetrievalRecallAtFixedPrecision`` decides on float32 values, as torch does: the
  per-query curves are rounded to float32, averaged, rounded to float32 and compared
  with ``float32(min_precision)`` (a mean precision of exactly 0.5 qualifies for
  ``min_precision=0.5``); recalls equal in float32 tie and the largest k wins.

Deliberate differences:

* ties between equal predictions (other than in nDCG and AUROC, where ties are
  grouped) are broken by input position, first come first; torch's ``topk`` /
  ``argsort`` order inside a tie is unspecified, so any tie order is a valid
  torchmetrics result;
* results are float64 (torchmetrics: float32, about 1e-7 apart);
* targets must be 0/1 for the binary metrics: torchmetrics 1.9 also accepts
  fractional float targets in [0, 1] and sums them as partial hits; irmetrics
  raises :class:`~irmetrics.exceptions.ParameterError` instead;
* NaN predictions raise ParameterError (torch orders them arbitrarily);
* invalid ``top_k`` (0 or negative) raises ParameterError for every function
  (1.9's AP, MRR and AUROC treat ``top_k=0`` as None).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..checks import check_bool, check_choice
from ..engine import segments as sg
from ..engine.gains import log2_discount
from ..exceptions import InputFormatError, ParameterError, ShapeError
from ..measures.context import safe_div
from ..measures.metric_learning import (
    hit_values,
    ml_r_precision_values,
    oml_map_values,
    reciprocal_rank_values,
)
from ..measures.torchmetrics_family import fall_out_values
from ._arrays import as_numpy
from ._lists import binary_view, group_offsets
from ._roc import partial_area, roc_points, trapezoid_area

EMPTY_TARGET_ACTIONS = ("error", "skip", "neg", "pos")
AGGREGATIONS = ("mean", "median", "min", "max")

__all__ = [
    "RetrievalAUROC", "RetrievalFallOut", "RetrievalHitRate", "RetrievalMAP", "RetrievalMRR",
    "RetrievalNormalizedDCG", "RetrievalPrecision", "RetrievalPrecisionRecallCurve",
    "RetrievalRPrecision", "RetrievalRecall", "RetrievalRecallAtFixedPrecision",
    "retrieval_auroc", "retrieval_average_precision", "retrieval_fall_out",
    "retrieval_hit_rate", "retrieval_normalized_dcg", "retrieval_precision",
    "retrieval_precision_recall_curve", "retrieval_r_precision", "retrieval_recall",
    "retrieval_reciprocal_rank",
]


# --------------------------------------------------------------------------- input checks

def _check_top_k(top_k, name="top_k"):
    if top_k is None:
        return None
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k <= 0:
        raise ParameterError(f"`{name}` must be a positive integer or None; got {top_k!r}.")
    return int(top_k)


def _check_max_fpr(max_fpr):
    if max_fpr is None:
        return None
    if isinstance(max_fpr, bool) or not isinstance(max_fpr, (float, int, np.floating)) \
            or not 0 < max_fpr <= 1:
        raise ParameterError(f"`max_fpr` must be a float in (0, 1] or None; got {max_fpr!r}.")
    return float(max_fpr)


def _check_pred_target(preds, target, *, graded=False):
    """preds as float32, target as int64 (binary) or float64 (graded), both flattened."""
    p = as_numpy(preds, "preds")
    t = as_numpy(target, "target")
    if p.shape != t.shape:
        raise ShapeError(f"`preds` and `target` must have the same shape; got {p.shape} "
                         f"and {t.shape}.")
    if t.dtype.kind not in "biuf":
        raise ParameterError(f"`target` must hold booleans, integers or floats; got dtype {t.dtype}.")
    if p.dtype.kind != "f":
        raise ParameterError(f"`preds` must hold floats; got dtype {p.dtype}.")
    p = p.reshape(-1).astype(np.float32)
    t = t.reshape(-1)
    if np.isnan(p).any():
        raise ParameterError("`preds` must not contain NaN.")
    if graded:
        return p, t.astype(np.float64)
    if t.size and (t.max() > 1 or t.min() < 0):
        raise ParameterError("`target` must contain binary values (0 or 1).")
    if t.dtype.kind == "f" and np.any((t != 0) & (t != 1)):
        raise ParameterError("`target` must contain binary values (0 or 1); fractional float "
                             "targets are not supported by irmetrics.")
    return p, t.astype(np.int64)


def _check_adaptive_k(adaptive_k):
    if not isinstance(adaptive_k, bool):
        raise ParameterError(f"`adaptive_k` must be a boolean; got {adaptive_k!r}.")
    return adaptive_k


def _nonempty(p):
    if p.size == 0:
        raise ParameterError("`preds` and `target` must be non-empty and non-scalar arrays.")


# --------------------------------------------------------------------------- grouped rankings

def _descending_key(preds32: np.ndarray) -> np.ndarray:
    """uint64 keys whose ascending order is ``preds32`` descending (-0.0 equals 0.0)."""
    bits = (preds32.astype(np.float32) + np.float32(0.0)).view(np.uint32)
    negative = (bits >> np.uint32(31)).astype(bool)
    ascending = np.where(negative, ~bits, bits | np.uint32(1 << 31))
    return (~ascending).astype(np.uint64)


def _group_key(indexes: np.ndarray) -> np.ndarray:
    """uint64 keys holding each index's rank among the distinct indexes in the high 32 bits."""
    lo, hi = int(indexes.min()), int(indexes.max())
    if hi - lo < 2**32:
        code = (indexes - lo).astype(np.uint64)
    else:
        code = np.unique(indexes, return_inverse=True)[1].astype(np.uint64)
    return code << np.uint64(32)


class _Groups:
    """Queries packed as CSR, each sorted by prediction descending (ties: input position).

    One stable sort of a packed ``(query, -pred)`` uint64 key gives the final order.
    """

    def __init__(self, preds, target, indexes=None):
        n = preds.size
        if indexes is None:
            order = np.argsort(_descending_key(preds), kind="stable")
            self.ids = np.zeros(1, dtype=np.int64)
            self.offsets = np.array([0, n], dtype=np.int64)
        else:
            order = np.argsort(_group_key(indexes) | _descending_key(preds), kind="stable")
            self.ids, self.offsets = group_offsets(indexes[order])
        self.preds = preds[order]
        self.target = target[order]
        self.seg = sg.segment_ids(self.offsets)
        self.sizes = np.diff(self.offsets)
        self.n = len(self.sizes)
        positive = self.target != 0
        self.num_pos = sg.seg_count(positive, self.seg, self.n)
        self.num_neg = self.sizes - self.num_pos
        self.target_sum = sg.seg_sum(self.target.astype(np.float64), self.seg, self.n)

    def view(self, filter_nonpositive=False):
        """Binary view; with the 1.9 filter, items with pred <= 0 are misses (R unfiltered)."""
        hits = self.target != 0
        if filter_nonpositive:
            hits = hits & (self.preds > 0)
        return binary_view(self.offsets, hits, self.num_pos, self.num_neg)

    def top(self, top_k):
        """Per-group cutoff ``min(top_k, size)`` (``top_k=None``: the whole group)."""
        return self.sizes if top_k is None else np.minimum(top_k, self.sizes)


# --------------------------------------------------------------------------- per-group values

def _fall_out(g, top_k):
    return fall_out_values(g.view(), g.top(top_k))


def _average_precision(g, top_k, filter_nonpositive=True):
    return oml_map_values(g.view(filter_nonpositive), g.top(top_k))


def _reciprocal_rank(g, top_k, filter_nonpositive=True):
    return reciprocal_rank_values(g.view(filter_nonpositive), g.top(top_k))


def _precision(g, top_k, adaptive_k=False, filter_nonpositive=True):
    if top_k is None:
        k = g.sizes
    elif adaptive_k:
        k = g.top(top_k)
    else:
        k = top_k  # K > n still divides by K
    values = g.view(filter_nonpositive).relat(k) / k
    return np.where(g.num_pos > 0, values, 0.0)


def _recall(g, top_k, filter_nonpositive=True):
    return safe_div(g.view(filter_nonpositive).relat(g.top(top_k)), g.num_pos)


def _r_precision(g):
    return ml_r_precision_values(g.view())


def _hit_rate(g, top_k):
    return hit_values(g.view(), g.top(top_k))


def _normalized_dcg(g, top_k):
    """Tie-averaged DCG@k over the ideal DCG@k, linear gain; 0 when the ideal is 0."""
    k = g.top(top_k)
    rank = sg.ranks(g.offsets)
    longest = int(g.sizes.max()) if g.n else 0
    # D[q, i]: discount mass of ranks 1..min(i, k_q), as one flat lookup per query.
    cum_discount = np.concatenate(([0.0], np.cumsum(1.0 / log2_discount(np.arange(1, longest + 1)))))
    run_end = np.ones(g.preds.size, dtype=bool)
    run_end[:-1] = (g.preds[1:] != g.preds[:-1]) | (g.seg[1:] != g.seg[:-1])
    run_start = np.ones(g.preds.size, dtype=bool)
    run_start[1:] = run_end[:-1]
    run_id = np.cumsum(run_start) - 1
    n_runs = int(run_id[-1]) + 1 if run_id.size else 0
    run_gain = np.bincount(run_id, weights=g.target, minlength=n_runs)
    run_len = np.bincount(run_id, minlength=n_runs)
    first_rank = rank[run_start]
    last_rank = rank[run_end]
    run_seg = g.seg[run_start]
    kq = k[run_seg]
    mass = cum_discount[np.minimum(last_rank, kq)] - cum_discount[np.minimum(first_rank - 1, kq)]
    dcg = sg.seg_sum(run_gain / run_len * mass, run_seg, g.n)
    ideal_order = np.lexsort((-g.target, g.seg))
    ideal = g.target[ideal_order]
    ideal_terms = np.where(rank <= k[g.seg], ideal / log2_discount(rank), 0.0)
    idcg = sg.seg_sum(ideal_terms, g.seg, g.n)
    return np.where(idcg == 0, 0.0, dcg / np.where(idcg == 0, 1.0, idcg))


def _sigmoid32(x):
    x = x.astype(np.float32)
    with np.errstate(over="ignore"):
        return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)


def _auroc(g, top_k, max_fpr=None):
    """Binary ROC AUC (or McClish-standardised partial AUC) of each group's top k."""
    k = g.top(top_k)
    rank = sg.ranks(g.offsets)
    keep = rank <= k[g.seg]
    sub_offsets = np.concatenate(([0], np.cumsum(k))).astype(np.int64)
    preds, target = g.preds[keep], g.target[keep] != 0
    seg = g.seg[keep]
    outside = (preds < 0) | (preds > 1)
    squash = sg.seg_count(outside, seg, g.n) > 0
    # torchmetrics passes logits through a float32 sigmoid, per call (= per group).
    preds = np.where(squash[seg], _sigmoid32(preds), preds)
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


def _precision_recall_curve(g, max_k, adaptive_k):
    """``(precision, recall)`` matrices of shape (groups, max_k), ``max_k`` fixed."""
    ks = np.arange(1, max_k + 1)
    denominators = np.where(adaptive_k, np.minimum(ks[None, :], g.sizes[:, None]), ks[None, :])
    view = g.view()
    hits = np.column_stack([view.relat(k) for k in ks]) if max_k else np.zeros((g.n, 0))
    recall = safe_div(hits, g.num_pos[:, None].astype(np.float64))
    precision = np.where(g.num_pos[:, None] > 0, hits / denominators, 0.0)
    return precision, recall


# --------------------------------------------------------------------------- functional

def _single(preds, target, *, graded=False):
    p, t = _check_pred_target(preds, target, graded=graded)
    _nonempty(p)
    return _Groups(p, t)


def retrieval_fall_out(preds, target, top_k=None) -> float:
    """Fall-out@k of one query (torchmetrics 1.9.0 ``retrieval_fall_out``).

    ``(non-relevant items in the top k) / (non-relevant items)``; 0 when every item
    is relevant. Registered as ``tm_fall_out`` (friendly ``TM_FallOut@k``).

    Parameters
    ----------
    preds : array of float
        Scores, higher first; any shape (flattened).
    target : array of bool or int
        0/1 relevance, same shape.
    top_k : int, optional
        Cutoff; None means all items, and larger than the list means all.

    Raises
    ------
    ParameterError
        ``top_k`` not a positive integer; empty input; non-binary target.
    ShapeError
        ``preds`` and ``target`` shapes differ.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_fall_out
    >>> retrieval_fall_out([0.2, 0.3, 0.5], [True, False, True], top_k=2)
    1.0
    """
    top_k = _check_top_k(top_k)
    return float(_fall_out(_single(preds, target), top_k)[0])


def retrieval_average_precision(preds, target, top_k=None, *, filter_nonpositive=True) -> float:
    """Average precision of one query (torchmetrics 1.9.0 ``retrieval_average_precision``).

    ``AP@K = (1 / h_K) * sum_{i <= K, g_i = 1} h_i / i`` over the top ``K = min(top_k, n)``,
    0 without a hit: the denominator is the number of hits in the top K (as OML's
    map@k), which equals standard AP when ``top_k`` is None. With the 1.9 filter
    (default) items with ``pred <= 0`` are misses.

    Parameters
    ----------
    preds, target, top_k
        As :func:`retrieval_fall_out`.
    filter_nonpositive : bool, default True
        torchmetrics 1.9's undocumented pred <= 0 filter; False for the classical AP.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_average_precision
    >>> round(retrieval_average_precision([0.2, 0.3, 0.5], [True, False, True]), 4)
    0.8333
    >>> retrieval_average_precision([0.5, -0.2, 0.3], [1, 1, 0])
    1.0
    >>> round(retrieval_average_precision([0.5, -0.2, 0.3], [1, 1, 0], filter_nonpositive=False), 4)
    0.8333
    """
    top_k = _check_top_k(top_k)
    return float(_average_precision(_single(preds, target), top_k, filter_nonpositive)[0])


def retrieval_reciprocal_rank(preds, target, top_k=None, *, filter_nonpositive=True) -> float:
    """Reciprocal rank of one query (torchmetrics 1.9.0 ``retrieval_reciprocal_rank``).

    ``1 / rank`` of the first relevant item within the top k, 0 if none; with the
    1.9 filter (default) items with ``pred <= 0`` are misses.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_reciprocal_rank
    >>> retrieval_reciprocal_rank([0.2, 0.3, 0.5], [False, True, False])
    0.5
    >>> retrieval_reciprocal_rank([-0.5, -0.2, 0.3], [1, 1, 0])
    0.0
    >>> retrieval_reciprocal_rank([-0.5, -0.2, 0.3], [1, 1, 0], filter_nonpositive=False)
    0.5
    """
    top_k = _check_top_k(top_k)
    return float(_reciprocal_rank(_single(preds, target), top_k, filter_nonpositive)[0])


def retrieval_precision(preds, target, top_k=None, adaptive_k=False, *,
                        filter_nonpositive=True) -> float:
    """Precision@k of one query (torchmetrics 1.9.0 ``retrieval_precision``).

    ``(hits in the top min(K, n)) / K``; K = n when ``top_k`` is None, or when
    ``adaptive_k`` and ``top_k > n``; otherwise K > n still divides by K. 0 when no
    target is positive. With the 1.9 filter (default) items with ``pred <= 0`` are
    misses.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_precision
    >>> retrieval_precision([0.2, 0.3, 0.5], [True, False, True], top_k=2)
    0.5
    >>> retrieval_precision([0.5, 0.4, 0.3], [1, 1, 0], top_k=5)
    0.4
    >>> round(retrieval_precision([0.5, -0.2, 0.3], [1, 1, 0], top_k=3), 4)
    0.3333
    """
    top_k = _check_top_k(top_k)
    _check_adaptive_k(adaptive_k)
    return float(_precision(_single(preds, target), top_k, adaptive_k, filter_nonpositive)[0])


def retrieval_recall(preds, target, top_k=None, *, filter_nonpositive=True) -> float:
    """Recall@k of one query (torchmetrics 1.9.0 ``retrieval_recall``): IR recall.

    ``(hits in the top k) / (number of positive targets)``, 0 when there is none.
    With the 1.9 filter (default) items with ``pred <= 0`` are misses in the
    numerator; the denominator is never filtered.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_recall
    >>> retrieval_recall([0.2, 0.3, 0.5], [True, False, True], top_k=2)
    0.5
    >>> retrieval_recall([0.5, -0.2, 0.3], [1, 1, 0], top_k=3)
    0.5
    """
    top_k = _check_top_k(top_k)
    return float(_recall(_single(preds, target), top_k, filter_nonpositive)[0])


def retrieval_r_precision(preds, target) -> float:
    """R-precision of one query (torchmetrics 1.9.0 ``retrieval_r_precision``).

    ``R = sum(target)``; hits in the top R over R; 0 when R = 0. No filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_r_precision
    >>> retrieval_r_precision([0.2, 0.3, 0.5], [True, False, True])
    0.5
    """
    return float(_r_precision(_single(preds, target))[0])


def retrieval_hit_rate(preds, target, top_k=None) -> float:
    """Hit rate@k of one query (torchmetrics 1.9.0 ``retrieval_hit_rate``): 1 if a hit is in the top k.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_hit_rate
    >>> retrieval_hit_rate([0.2, 0.3, 0.5], [True, False, True], top_k=2)
    1.0
    """
    top_k = _check_top_k(top_k)
    return float(_hit_rate(_single(preds, target), top_k)[0])


def retrieval_normalized_dcg(preds, target, top_k=None) -> float:
    """nDCG@k of one query with tie averaging (torchmetrics 1.9.0 ``retrieval_normalized_dcg``).

    Linear gain (the target value, graded allowed) and discount ``1 / log2(i + 1)``
    for ranks ``i <= k``. Tied predictions occupying ranks a..b contribute their
    mean gain times ``sum_{i=a..b} discount_i``. The ideal sorts the targets
    descending with the same k. Ideal 0 gives 0.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_normalized_dcg
    >>> round(retrieval_normalized_dcg([.1, .2, .3, 4, 70], [10, 0, 0, 1, 5]), 4)
    0.6957
    >>> retrieval_normalized_dcg([0.5, 0.5], [1, 0])   # the tie shares the gain
    0.8154648767857288
    """
    top_k = _check_top_k(top_k)
    return float(_normalized_dcg(_single(preds, target, graded=True), top_k)[0])


def retrieval_auroc(preds, target, top_k=None, max_fpr=None) -> float:
    """ROC AUC over one query's top k items (torchmetrics 1.9.0 ``retrieval_auroc``).

    The top ``min(top_k, n)`` items by prediction are kept; without both classes
    among them the result is 0; otherwise the exact binary ROC AUC (trapezoids over
    distinct prediction values). ``max_fpr`` gives the McClish-standardised partial
    AUC ``0.5 * (1 + (pAUC - m) / (max_fpr - m))``, ``m = max_fpr^2 / 2``.
    Predictions outside [0, 1] pass through a float32 sigmoid first, as in
    torchmetrics (rank preserving, but it can merge values into ties).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_auroc
    >>> retrieval_auroc([0.2, 0.3, 0.5], [True, False, True])
    0.5
    """
    top_k = _check_top_k(top_k)
    max_fpr = _check_max_fpr(max_fpr)
    return float(_auroc(_single(preds, target), top_k, max_fpr)[0])


def retrieval_precision_recall_curve(preds, target, max_k=None, adaptive_k=False):
    """Precision and recall at k = 1..max_k of one query (torchmetrics 1.9.0).

    ``hits@k`` counts positives in the top k (zero-padded beyond n);
    ``recall@k = hits@k / sum(target)``, ``precision@k = hits@k / k`` with k capped
    at n when ``adaptive_k``. No positive target gives zero curves.

    Returns
    -------
    precision, recall : ndarray of float64, shape (max_k,)
    top_k : ndarray of int64, shape (max_k,)
        ``1..max_k``, or ``1..n`` padded with n when ``adaptive_k`` and ``max_k > n``.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import retrieval_precision_recall_curve
    >>> p, r, k = retrieval_precision_recall_curve([0.2, 0.3, 0.5], [True, False, True], max_k=2)
    >>> p.tolist(), r.tolist(), k.tolist()
    ([1.0, 0.5], [0.5, 0.5], [1, 2])
    """
    _check_adaptive_k(adaptive_k)
    g = _single(preds, target)
    max_k = int(g.sizes[0]) if max_k is None else _check_top_k(max_k, "max_k")
    precision, recall = _precision_recall_curve(g, max_k, adaptive_k)
    top_k = np.arange(1, max_k + 1)
    if adaptive_k:
        top_k = np.minimum(top_k, g.sizes[0])
    return precision[0], recall[0], top_k


# --------------------------------------------------------------------------- modules

def _aggregate(values: np.ndarray, aggregation, axis=None):
    if callable(aggregation):
        return aggregation(values, dim=axis)
    if aggregation == "mean":
        return values.mean(axis=axis)
    if aggregation == "median":  # torch.median: the lower of the two middle values
        n = values.shape[0] if axis == 0 else values.size
        return np.sort(values, axis=axis)[(n - 1) // 2] if axis == 0 \
            else np.sort(values.reshape(-1))[(n - 1) // 2]
    if aggregation == "min":
        return values.min(axis=axis)
    return values.max(axis=axis)


#: torchmetrics ``Metric``'s own keyword options (distributed syncing, caching, device):
#: validated as torchmetrics does, then without effect (one process, numpy on the CPU).
METRIC_OPTIONS = {"compute_on_cpu": False, "dist_sync_on_step": False, "process_group": None,
                  "dist_sync_fn": None, "distributed_available_fn": None,
                  "sync_on_compute": True, "compute_with_cache": True}


def _metric_options(kwargs: dict) -> dict:
    """``Metric.__init__``'s keyword options with their defaults; unknown names raise."""
    unknown = sorted(set(kwargs) - set(METRIC_OPTIONS))
    if unknown:
        raise ParameterError(f"keyword arguments must be among {sorted(METRIC_OPTIONS)}; "
                             f"got unexpected {unknown!r}.")
    options = {**METRIC_OPTIONS, **kwargs}
    for name in ("compute_on_cpu", "dist_sync_on_step", "sync_on_compute", "compute_with_cache"):
        check_bool(name, options[name])
    for name in ("dist_sync_fn", "distributed_available_fn"):
        if options[name] is not None and not callable(options[name]):
            raise ParameterError(f"`{name}` must be None or callable; got {options[name]!r}.")
    return options


class _RetrievalModule:
    """Accumulating base: ``update(preds, target, indexes)``, ``compute()``, ``reset()``."""

    graded = False
    empty_means_no_negative = False
    higher_is_better = True

    def __init__(self, empty_target_action="neg", ignore_index=None, aggregation="mean",
                 **kwargs):
        self.metric_options = _metric_options(kwargs)
        check_choice("empty_target_action", empty_target_action, EMPTY_TARGET_ACTIONS)
        if ignore_index is not None and (isinstance(ignore_index, bool)
                                         or not isinstance(ignore_index, (int, np.integer))):
            raise ParameterError(f"`ignore_index` must be an integer or None; got {ignore_index!r}.")
        if not (callable(aggregation) or aggregation in AGGREGATIONS):
            raise ParameterError("`aggregation` must be one of 'mean', 'median', 'min', 'max' "
                                 f"or a callable; got {aggregation!r}.")
        self.empty_target_action = empty_target_action
        self.ignore_index = ignore_index
        self.aggregation = aggregation
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._preds: list = []
        self._target: list = []
        self._indexes: list = []

    def _checked(self, preds, target, indexes):
        if indexes is None:
            raise ParameterError("`indexes` cannot be None.")
        idx = as_numpy(indexes, "indexes")
        p = as_numpy(preds, "preds")
        t = as_numpy(target, "target")
        if not (idx.shape == p.shape == t.shape):
            raise ShapeError(f"`indexes`, `preds` and `target` must have the same shape; got "
                             f"{idx.shape}, {p.shape} and {t.shape}.")
        if idx.dtype.kind not in "iu":
            raise ParameterError(f"`indexes` must hold integers; got dtype {idx.dtype}.")
        idx, p, t = idx.reshape(-1), p.reshape(-1), t.reshape(-1)
        if self.ignore_index is not None:
            keep = t != self.ignore_index
            idx, p, t = idx[keep], p[keep], t[keep]
        if idx.size == 0:
            raise ParameterError("`indexes`, `preds` and `target` must be non-empty.")
        p, t = _check_pred_target(p, t, graded=self.graded)
        return idx.astype(np.int64), p, t

    def update(self, preds, target, indexes) -> None:
        """Check, flatten and store one batch (a query may span several batches)."""
        self._store(preds, target, indexes)

    def __call__(self, preds, target, indexes):
        """torchmetrics ``forward``: the value on this batch alone; the batch is also stored."""
        idx, p, t = self._store(preds, target, indexes)
        return self._compute_on(_Groups(p, t, idx))

    def _store(self, preds, target, indexes):
        idx, p, t = self._checked(preds, target, indexes)
        self._indexes.append(idx)
        self._preds.append(p)
        self._target.append(t)
        return idx, p, t

    forward = __call__

    def _groups(self) -> _Groups:
        if not self._preds:
            raise ParameterError("nothing to compute: call update() first.")
        return _Groups(np.concatenate(self._preds), np.concatenate(self._target),
                       np.concatenate(self._indexes))

    def compute(self):
        """Aggregate the per-query values over every query seen so far."""
        return self._compute_on(self._groups())

    def _empty(self, g: _Groups) -> np.ndarray:
        if self.empty_means_no_negative:
            return g.num_neg == 0
        return g.target_sum == 0

    def _handle_empty(self, g: _Groups, *arrays):
        """Apply ``empty_target_action`` to per-query ``arrays`` (first axis = queries)."""
        empty = self._empty(g)
        if not empty.any():
            return arrays
        action = self.empty_target_action
        if action == "error":
            kind = "negative" if self.empty_means_no_negative else "positive"
            raise InputFormatError(f"`compute` was given a query with no {kind} target "
                                   f"(index {g.ids[np.argmax(empty)]!r}).")
        if action == "skip":
            return tuple(a[~empty] for a in arrays)
        fill = 1.0 if action == "pos" else 0.0
        return tuple(np.where(empty.reshape(empty.shape + (1,) * (a.ndim - 1)), fill, a)
                     for a in arrays)

    def _compute_on(self, g: _Groups):
        (values,) = self._handle_empty(g, self._values(g))
        if values.size == 0:
            return 0.0
        return float(_aggregate(values, self.aggregation))

    def _values(self, g: _Groups) -> np.ndarray:
        raise NotImplementedError


class _TopKModule(_RetrievalModule):
    """A module with a ``top_k`` cutoff whose values are ``_kernel(g, top_k)``."""

    _kernel: Any = None

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None,
                 aggregation="mean", **kwargs):
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)
        self.top_k = _check_top_k(top_k)

    def _values(self, g):
        return self._kernel(g, self.top_k)


class _FilteredModule(_TopKModule):
    """A top-k module with the 1.9 pred <= 0 filter: ``_kernel(g, top_k, filter_nonpositive)``."""

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None,
                 aggregation="mean", *, filter_nonpositive=True, **kwargs):
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)
        self.filter_nonpositive = filter_nonpositive

    def _values(self, g):
        return self._kernel(g, self.top_k, self.filter_nonpositive)


class RetrievalFallOut(_TopKModule):
    """Mean fall-out@k over queries (torchmetrics 1.9.0 ``RetrievalFallOut``); lower is better.

    "Empty" means a query without negative target; the default action is ``'pos'``
    (such queries count 1).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalFallOut
    >>> fo = RetrievalFallOut(top_k=2)
    >>> fo([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2], [False, False, True, False, True, False, True],
    ...    indexes=[0, 0, 0, 1, 1, 1, 1])
    0.5
    """

    empty_means_no_negative = True
    higher_is_better = False
    _kernel = staticmethod(_fall_out)

    def __init__(self, empty_target_action="pos", ignore_index=None, top_k=None,
                 aggregation="mean", **kwargs):
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)


class RetrievalMAP(_FilteredModule):
    """Mean average precision (torchmetrics 1.9.0 ``RetrievalMAP``), with the pred <= 0 filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalMAP
    >>> m = RetrievalMAP()
    >>> m.update([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2], [False, False, True, False, True, False, True],
    ...          indexes=[0, 0, 0, 1, 1, 1, 1])
    >>> round(m.compute(), 4)
    0.7917
    """

    _kernel = staticmethod(_average_precision)


class RetrievalMRR(_FilteredModule):
    """Mean reciprocal rank (torchmetrics 1.9.0 ``RetrievalMRR``), with the pred <= 0 filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalMRR
    >>> RetrievalMRR()([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...                [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.75
    """

    _kernel = staticmethod(_reciprocal_rank)


class RetrievalPrecision(_FilteredModule):
    """Mean precision@k (torchmetrics 1.9.0 ``RetrievalPrecision``), with the pred <= 0 filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalPrecision
    >>> RetrievalPrecision(top_k=2)([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.5
    """

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None,
                 adaptive_k=False, aggregation="mean", *, filter_nonpositive=True, **kwargs):
        super().__init__(empty_target_action, ignore_index, top_k, aggregation,
                         filter_nonpositive=filter_nonpositive, **kwargs)
        self.adaptive_k = _check_adaptive_k(adaptive_k)

    def _values(self, g):
        return _precision(g, self.top_k, self.adaptive_k, self.filter_nonpositive)


class RetrievalRecall(_FilteredModule):
    """Mean IR recall@k (torchmetrics 1.9.0 ``RetrievalRecall``), with the pred <= 0 filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalRecall
    >>> RetrievalRecall(top_k=2)([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.75
    """

    _kernel = staticmethod(_recall)


class RetrievalRPrecision(_RetrievalModule):
    """Mean R-precision (torchmetrics 1.9.0 ``RetrievalRPrecision``).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalRPrecision
    >>> RetrievalRPrecision()([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.75
    """

    def _values(self, g):
        return _r_precision(g)


class RetrievalHitRate(_TopKModule):
    """Mean hit rate@k (torchmetrics 1.9.0 ``RetrievalHitRate``).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalHitRate
    >>> RetrievalHitRate(top_k=1)([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.5
    """

    _kernel = staticmethod(_hit_rate)


class RetrievalNormalizedDCG(_TopKModule):
    """Mean tie-averaged nDCG@k (torchmetrics 1.9.0 ``RetrievalNormalizedDCG``); graded targets.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalNormalizedDCG
    >>> round(RetrievalNormalizedDCG()([0.1, 0.2, 0.3, 4.0, 70.0], [10, 0, 0, 1, 5],
    ...                                indexes=[0, 0, 0, 0, 0]), 4)
    0.6957
    """

    graded = True

    _kernel = staticmethod(_normalized_dcg)


class RetrievalAUROC(_TopKModule):
    """Mean ROC AUC over each query's top k (torchmetrics 1.9.0 ``RetrievalAUROC``).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalAUROC
    >>> RetrievalAUROC()([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.75
    """

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None, max_fpr=None,
                 aggregation="mean", **kwargs):
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)
        self.max_fpr = _check_max_fpr(max_fpr)

    def _values(self, g):
        return _auroc(g, self.top_k, self.max_fpr)


class RetrievalPrecisionRecallCurve(_RetrievalModule):
    """Precision and recall at k = 1..max_k averaged over queries (torchmetrics 1.9.0).

    ``max_k=None`` uses the largest query. Empty queries contribute curves of 0
    (``'neg'``) or 1 (``'pos'``); curves are aggregated element-wise.
    ``compute()`` returns ``(precision, recall, top_k)`` arrays (0-d when ``max_k``
    is 1, as torchmetrics squeezes one-element results).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalPrecisionRecallCurve
    >>> r = RetrievalPrecisionRecallCurve(max_k=4)
    >>> p, rec, k = r([0.4, 0.01, 0.5, 0.6, 0.2, 0.3, 0.5], [True, False, False, True, True, False, True],
    ...               indexes=[0, 0, 0, 0, 1, 1, 1])
    >>> p.round(4).tolist(), rec.tolist(), k.tolist()
    ([1.0, 0.5, 0.6667, 0.5], [0.5, 0.5, 1.0, 1.0], [1, 2, 3, 4])
    """

    def __init__(self, max_k=None, adaptive_k=False, empty_target_action="neg",
                 ignore_index=None, aggregation="mean", **kwargs):
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)
        self.max_k = _check_top_k(max_k, "max_k")
        self.adaptive_k = _check_adaptive_k(adaptive_k)

    def _compute_on(self, g):
        # torchmetrics' compute squeezes one-element results to 0-d tensors (max_k = 1).
        return tuple(a.reshape(()) if a.size == 1 else a for a in self._curves(g, np.float64))

    def _curves(self, g, dtype):
        """Aggregated ``(precision, recall, top_k)``; per-query values rounded to ``dtype``
        first (float32: torch's tensors), the aggregate computed in float64 and rounded
        to ``dtype``."""
        max_k = int(g.sizes.max()) if self.max_k is None else self.max_k
        precision, recall = self._handle_empty(
            g, *_precision_recall_curve(g, max_k, self.adaptive_k))
        top_k = np.arange(1, max_k + 1)
        if precision.shape[0] == 0:
            return np.zeros(max_k, dtype), np.zeros(max_k, dtype), top_k

        def aggregate(values):
            rounded = values.astype(dtype).astype(np.float64)
            return np.asarray(_aggregate(rounded, self.aggregation, axis=0), dtype=dtype)

        return aggregate(precision), aggregate(recall), top_k


class RetrievalRecallAtFixedPrecision(RetrievalPrecisionRecallCurve):
    """Largest averaged recall whose averaged precision >= ``min_precision`` (torchmetrics 1.9.0).

    ``compute()`` returns ``(max_recall, best_k)``; ties on recall go to the largest
    k; when no k qualifies or the best recall is 0 the result is ``(0.0, max_k)``.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics import RetrievalRecallAtFixedPrecision
    >>> r = RetrievalRecallAtFixedPrecision(min_precision=0.8)
    >>> r([0.4, 0.01, 0.5, 0.6, 0.2, 0.3, 0.5], [True, False, False, True, True, False, True],
    ...   indexes=[0, 0, 0, 0, 1, 1, 1])
    (0.5, 1)
    """

    def __init__(self, min_precision=0.0, max_k=None, adaptive_k=False,
                 empty_target_action="neg", ignore_index=None, aggregation="mean", **kwargs):
        super().__init__(max_k, adaptive_k, empty_target_action, ignore_index, aggregation,
                         **kwargs)
        if isinstance(min_precision, bool) or not isinstance(min_precision, (int, float, np.floating)) \
                or not 0.0 <= min_precision <= 1.0:
            raise ParameterError(f"`min_precision` must be a float in [0, 1]; got {min_precision!r}.")
        self.min_precision = float(min_precision)

    def _compute_on(self, g):
        # torch decides on float32 tensors: a mean precision of exactly min_precision (0.5
        # as float32, 0.49999999999999994 in float64) qualifies, and float32-equal
        # recalls tie (the largest k wins).
        precision, recall, top_k = self._curves(g, np.float32)
        ok = precision >= np.float32(self.min_precision)
        if not ok.any():
            return 0.0, int(top_k.size)
        best = np.flatnonzero(ok & (recall == recall[ok].max()))[-1]
        max_recall = float(recall[best])
        return (max_recall, int(top_k[best])) if max_recall != 0.0 else (0.0, int(top_k.size))
