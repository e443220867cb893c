"""torchmetrics 1.9.0's retrieval metrics as a numpy API: floats in, floats out.

This is the face of :mod:`irmetrics.compat.torchmetrics` without torch: functional
forms take ``preds`` and ``target`` of one query (any shape, flattened) and return a
Python float; modules accumulate ``update(preds, target, indexes)`` and
``compute()`` one aggregated float over the queries (``indexes``). Inputs are numpy
arrays or anything with ``__array__``; torch is never imported. With torch and
torchmetrics installed, ``irmetrics.compat.torchmetrics`` exports real torchmetrics
Metrics instead (:mod:`irmetrics.compat.torchmetrics.metrics`); this module stays
importable as ``irmetrics.compat.torchmetrics.numpy_api``.

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
  grouped) are broken by input position, first come first. torchmetrics' order
  inside a tie is what torch's ``topk`` / ``argsort`` give on the device (the torch
  Metrics reproduce it); numpy cannot, so this API can differ from torchmetrics
  where predictions tie;
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

from ...checks import check_bool
from ...exceptions import ParameterError, ShapeError
from .._arrays import as_numpy
from ._checks import (
    check_adaptive_k,
    check_aggregation,
    check_empty_target_action,
    check_ignore_index,
    check_max_fpr,
    check_min_precision,
    check_top_k,
)
from ._kernels import (
    Groups,
    auroc,
    average_precision,
    fall_out,
    handle_empty,
    hit_rate,
    normalized_dcg,
    precision,
    precision_recall_curve,
    r_precision,
    recall,
    reciprocal_rank,
)

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


def _nonempty(p):
    if p.size == 0:
        raise ParameterError("`preds` and `target` must be non-empty and non-scalar arrays.")


# --------------------------------------------------------------------------- functional

def _single(preds, target, *, graded=False):
    p, t = _check_pred_target(preds, target, graded=graded)
    _nonempty(p)
    return Groups.from_arrays(p, t)


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
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_fall_out
    >>> retrieval_fall_out([0.2, 0.3, 0.5], [True, False, True], top_k=2)
    1.0
    """
    top_k = check_top_k(top_k)
    return float(fall_out(_single(preds, target), top_k)[0])


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
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_average_precision
    >>> round(retrieval_average_precision([0.2, 0.3, 0.5], [True, False, True]), 4)
    0.8333
    >>> retrieval_average_precision([0.5, -0.2, 0.3], [1, 1, 0])
    1.0
    >>> round(retrieval_average_precision([0.5, -0.2, 0.3], [1, 1, 0], filter_nonpositive=False), 4)
    0.8333
    """
    top_k = check_top_k(top_k)
    return float(average_precision(_single(preds, target), top_k, filter_nonpositive)[0])


def retrieval_reciprocal_rank(preds, target, top_k=None, *, filter_nonpositive=True) -> float:
    """Reciprocal rank of one query (torchmetrics 1.9.0 ``retrieval_reciprocal_rank``).

    ``1 / rank`` of the first relevant item within the top k, 0 if none; with the
    1.9 filter (default) items with ``pred <= 0`` are misses.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_reciprocal_rank
    >>> retrieval_reciprocal_rank([0.2, 0.3, 0.5], [False, True, False])
    0.5
    >>> retrieval_reciprocal_rank([-0.5, -0.2, 0.3], [1, 1, 0])
    0.0
    >>> retrieval_reciprocal_rank([-0.5, -0.2, 0.3], [1, 1, 0], filter_nonpositive=False)
    0.5
    """
    top_k = check_top_k(top_k)
    return float(reciprocal_rank(_single(preds, target), top_k, filter_nonpositive)[0])


def retrieval_precision(preds, target, top_k=None, adaptive_k=False, *,
                        filter_nonpositive=True) -> float:
    """Precision@k of one query (torchmetrics 1.9.0 ``retrieval_precision``).

    ``(hits in the top min(K, n)) / K``; K = n when ``top_k`` is None, or when
    ``adaptive_k`` and ``top_k > n``; otherwise K > n still divides by K. 0 when no
    target is positive. With the 1.9 filter (default) items with ``pred <= 0`` are
    misses.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_precision
    >>> retrieval_precision([0.2, 0.3, 0.5], [True, False, True], top_k=2)
    0.5
    >>> retrieval_precision([0.5, 0.4, 0.3], [1, 1, 0], top_k=5)
    0.4
    >>> round(retrieval_precision([0.5, -0.2, 0.3], [1, 1, 0], top_k=3), 4)
    0.3333
    """
    top_k = check_top_k(top_k)
    check_adaptive_k(adaptive_k)
    return float(precision(_single(preds, target), top_k, adaptive_k, filter_nonpositive)[0])


def retrieval_recall(preds, target, top_k=None, *, filter_nonpositive=True) -> float:
    """Recall@k of one query (torchmetrics 1.9.0 ``retrieval_recall``): IR recall.

    ``(hits in the top k) / (number of positive targets)``, 0 when there is none.
    With the 1.9 filter (default) items with ``pred <= 0`` are misses in the
    numerator; the denominator is never filtered.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_recall
    >>> retrieval_recall([0.2, 0.3, 0.5], [True, False, True], top_k=2)
    0.5
    >>> retrieval_recall([0.5, -0.2, 0.3], [1, 1, 0], top_k=3)
    0.5
    """
    top_k = check_top_k(top_k)
    return float(recall(_single(preds, target), top_k, filter_nonpositive)[0])


def retrieval_r_precision(preds, target) -> float:
    """R-precision of one query (torchmetrics 1.9.0 ``retrieval_r_precision``).

    ``R = sum(target)``; hits in the top R over R; 0 when R = 0. No filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_r_precision
    >>> retrieval_r_precision([0.2, 0.3, 0.5], [True, False, True])
    0.5
    """
    return float(r_precision(_single(preds, target))[0])


def retrieval_hit_rate(preds, target, top_k=None) -> float:
    """Hit rate@k of one query (torchmetrics 1.9.0 ``retrieval_hit_rate``): 1 if a hit is in the top k.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_hit_rate
    >>> retrieval_hit_rate([0.2, 0.3, 0.5], [True, False, True], top_k=2)
    1.0
    """
    top_k = check_top_k(top_k)
    return float(hit_rate(_single(preds, target), top_k)[0])


def retrieval_normalized_dcg(preds, target, top_k=None) -> float:
    """nDCG@k of one query with tie averaging (torchmetrics 1.9.0 ``retrieval_normalized_dcg``).

    Linear gain (the target value, graded allowed) and discount ``1 / log2(i + 1)``
    for ranks ``i <= k``. Tied predictions occupying ranks a..b contribute their
    mean gain times ``sum_{i=a..b} discount_i``. The ideal sorts the targets
    descending with the same k. Ideal 0 gives 0.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_normalized_dcg
    >>> round(retrieval_normalized_dcg([.1, .2, .3, 4, 70], [10, 0, 0, 1, 5]), 4)
    0.6957
    >>> retrieval_normalized_dcg([0.5, 0.5], [1, 0])   # the tie shares the gain
    0.8154648767857288
    """
    top_k = check_top_k(top_k)
    return float(normalized_dcg(_single(preds, target, graded=True), top_k)[0])


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
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_auroc
    >>> retrieval_auroc([0.2, 0.3, 0.5], [True, False, True])
    0.5
    """
    top_k = check_top_k(top_k)
    max_fpr = check_max_fpr(max_fpr)
    return float(auroc(_single(preds, target), top_k, max_fpr)[0])


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
    >>> from irmetrics.compat.torchmetrics.numpy_api import retrieval_precision_recall_curve
    >>> p, r, k = retrieval_precision_recall_curve([0.2, 0.3, 0.5], [True, False, True], max_k=2)
    >>> p.tolist(), r.tolist(), k.tolist()
    ([1.0, 0.5], [0.5, 0.5], [1, 2])
    """
    check_adaptive_k(adaptive_k)
    g = _single(preds, target)
    max_k = int(g.sizes[0]) if max_k is None else check_top_k(max_k, "max_k")
    precision, recall = precision_recall_curve(g, max_k, adaptive_k)
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
        check_empty_target_action(empty_target_action)
        check_ignore_index(ignore_index)
        check_aggregation(aggregation)
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
        return self._compute_on(Groups.from_arrays(p, t, idx))

    def _store(self, preds, target, indexes):
        idx, p, t = self._checked(preds, target, indexes)
        self._indexes.append(idx)
        self._preds.append(p)
        self._target.append(t)
        return idx, p, t

    forward = __call__

    def _groups(self) -> Groups:
        if not self._preds:
            raise ParameterError("nothing to compute: call update() first.")
        return Groups.from_arrays(np.concatenate(self._preds), np.concatenate(self._target),
                       np.concatenate(self._indexes))

    def compute(self):
        """Aggregate the per-query values over every query seen so far."""
        return self._compute_on(self._groups())

    def _handle_empty(self, g: Groups, *arrays):
        """Apply ``empty_target_action`` to per-query ``arrays`` (first axis = queries)."""
        return handle_empty(g, self.empty_target_action, self.empty_means_no_negative, *arrays)

    def _compute_on(self, g: Groups):
        (values,) = self._handle_empty(g, self._values(g))
        if values.size == 0:
            return 0.0
        return float(_aggregate(values, self.aggregation))

    def _values(self, g: Groups) -> np.ndarray:
        raise NotImplementedError


class _TopKModule(_RetrievalModule):
    """A module with a ``top_k`` cutoff whose values are ``_kernel(g, top_k)``."""

    _kernel: Any = None

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None,
                 aggregation="mean", **kwargs):
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)
        self.top_k = check_top_k(top_k)

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
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalFallOut
    >>> fo = RetrievalFallOut(top_k=2)
    >>> fo([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2], [False, False, True, False, True, False, True],
    ...    indexes=[0, 0, 0, 1, 1, 1, 1])
    0.5
    """

    empty_means_no_negative = True
    higher_is_better = False
    _kernel = staticmethod(fall_out)

    def __init__(self, empty_target_action="pos", ignore_index=None, top_k=None,
                 aggregation="mean", **kwargs):
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)


class RetrievalMAP(_FilteredModule):
    """Mean average precision (torchmetrics 1.9.0 ``RetrievalMAP``), with the pred <= 0 filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalMAP
    >>> m = RetrievalMAP()
    >>> m.update([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2], [False, False, True, False, True, False, True],
    ...          indexes=[0, 0, 0, 1, 1, 1, 1])
    >>> round(m.compute(), 4)
    0.7917
    """

    _kernel = staticmethod(average_precision)


class RetrievalMRR(_FilteredModule):
    """Mean reciprocal rank (torchmetrics 1.9.0 ``RetrievalMRR``), with the pred <= 0 filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalMRR
    >>> RetrievalMRR()([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...                [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.75
    """

    _kernel = staticmethod(reciprocal_rank)


class RetrievalPrecision(_FilteredModule):
    """Mean precision@k (torchmetrics 1.9.0 ``RetrievalPrecision``), with the pred <= 0 filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalPrecision
    >>> RetrievalPrecision(top_k=2)([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.5
    """

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None,
                 adaptive_k=False, aggregation="mean", *, filter_nonpositive=True, **kwargs):
        super().__init__(empty_target_action, ignore_index, top_k, aggregation,
                         filter_nonpositive=filter_nonpositive, **kwargs)
        self.adaptive_k = check_adaptive_k(adaptive_k)

    def _values(self, g):
        return precision(g, self.top_k, self.adaptive_k, self.filter_nonpositive)


class RetrievalRecall(_FilteredModule):
    """Mean IR recall@k (torchmetrics 1.9.0 ``RetrievalRecall``), with the pred <= 0 filter.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalRecall
    >>> RetrievalRecall(top_k=2)([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.75
    """

    _kernel = staticmethod(recall)


class RetrievalRPrecision(_RetrievalModule):
    """Mean R-precision (torchmetrics 1.9.0 ``RetrievalRPrecision``).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalRPrecision
    >>> RetrievalRPrecision()([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.75
    """

    def _values(self, g):
        return r_precision(g)


class RetrievalHitRate(_TopKModule):
    """Mean hit rate@k (torchmetrics 1.9.0 ``RetrievalHitRate``).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalHitRate
    >>> RetrievalHitRate(top_k=1)([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.5
    """

    _kernel = staticmethod(hit_rate)


class RetrievalNormalizedDCG(_TopKModule):
    """Mean tie-averaged nDCG@k (torchmetrics 1.9.0 ``RetrievalNormalizedDCG``); graded targets.

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalNormalizedDCG
    >>> round(RetrievalNormalizedDCG()([0.1, 0.2, 0.3, 4.0, 70.0], [10, 0, 0, 1, 5],
    ...                                indexes=[0, 0, 0, 0, 0]), 4)
    0.6957
    """

    graded = True

    _kernel = staticmethod(normalized_dcg)


class RetrievalAUROC(_TopKModule):
    """Mean ROC AUC over each query's top k (torchmetrics 1.9.0 ``RetrievalAUROC``).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalAUROC
    >>> RetrievalAUROC()([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...     [False, False, True, False, True, False, True], indexes=[0, 0, 0, 1, 1, 1, 1])
    0.75
    """

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None, max_fpr=None,
                 aggregation="mean", **kwargs):
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)
        self.max_fpr = check_max_fpr(max_fpr)

    def _values(self, g):
        return auroc(g, self.top_k, self.max_fpr)


class RetrievalPrecisionRecallCurve(_RetrievalModule):
    """Precision and recall at k = 1..max_k averaged over queries (torchmetrics 1.9.0).

    ``max_k=None`` uses the largest query. Empty queries contribute curves of 0
    (``'neg'``) or 1 (``'pos'``); curves are aggregated element-wise.
    ``compute()`` returns ``(precision, recall, top_k)`` arrays (0-d when ``max_k``
    is 1, as torchmetrics squeezes one-element results).

    Examples
    --------
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalPrecisionRecallCurve
    >>> r = RetrievalPrecisionRecallCurve(max_k=4)
    >>> p, rec, k = r([0.4, 0.01, 0.5, 0.6, 0.2, 0.3, 0.5], [True, False, False, True, True, False, True],
    ...               indexes=[0, 0, 0, 0, 1, 1, 1])
    >>> p.round(4).tolist(), rec.tolist(), k.tolist()
    ([1.0, 0.5, 0.6667, 0.5], [0.5, 0.5, 1.0, 1.0], [1, 2, 3, 4])
    """

    def __init__(self, max_k=None, adaptive_k=False, empty_target_action="neg",
                 ignore_index=None, aggregation="mean", **kwargs):
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)
        self.max_k = check_top_k(max_k, "max_k")
        self.adaptive_k = check_adaptive_k(adaptive_k)

    def _compute_on(self, g):
        # torchmetrics' compute squeezes one-element results to 0-d tensors (max_k = 1).
        return tuple(a.reshape(()) if a.size == 1 else a for a in self._curves(g, np.float64))

    def _curves(self, g, dtype):
        """Aggregated ``(precision, recall, top_k)``; per-query values rounded to ``dtype``
        first (float32: torch's tensors), the aggregate computed in float64 and rounded
        to ``dtype``."""
        max_k = int(g.sizes.max()) if self.max_k is None else self.max_k
        precision, recall = self._handle_empty(
            g, *precision_recall_curve(g, max_k, self.adaptive_k))
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
    >>> from irmetrics.compat.torchmetrics.numpy_api import RetrievalRecallAtFixedPrecision
    >>> r = RetrievalRecallAtFixedPrecision(min_precision=0.8)
    >>> r([0.4, 0.01, 0.5, 0.6, 0.2, 0.3, 0.5], [True, False, False, True, True, False, True],
    ...   indexes=[0, 0, 0, 0, 1, 1, 1])
    (0.5, 1)
    """

    def __init__(self, min_precision=0.0, max_k=None, adaptive_k=False,
                 empty_target_action="neg", ignore_index=None, aggregation="mean", **kwargs):
        super().__init__(max_k, adaptive_k, empty_target_action, ignore_index, aggregation,
                         **kwargs)
        self.min_precision = check_min_precision(min_precision)

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
