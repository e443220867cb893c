"""torchmetrics 1.9.0's retrieval metrics as real torchmetrics Metrics, computed by irmetrics.

Every class is a :class:`torchmetrics.Metric` with torchmetrics' signature and
states (``indexes``, ``preds``, ``target``: lists of tensors, gathered across
processes), so ``.to(device)``, ``clone``, ``state_dict``, ``MetricCollection``,
``self.log(...)`` in Lightning and DDP synchronisation behave as with
torchmetrics. ``compute()`` ranks every query on the states' device in one batched
pass (:mod:`~irmetrics.compat.torchmetrics._ordering`: no per-query Python loop),
sends each query's first entries to the host, evaluates them with irmetrics'
vectorised kernels and returns tensors on the states' device. The functional
forms take and return tensors.

Numbers are torchmetrics' by default, ties included: tied predictions come out
in the order torch's ``topk``/``argsort`` give them on that device, as in
torchmetrics' own loop; ``ties="trec_eval"`` orders ties by doc id instead
(``d0, d1, ...`` in input order inside each query, descending in byte order, as
:func:`irmetrics.adapters.from_flat` numbers them) and ``ties="input_order"`` by
input position (as the numpy face does). Average precision, reciprocal
rank, precision and recall count an item with ``pred <= 0`` as not retrieved
(torchmetrics 1.7.4 and later); ``filter_nonpositive=False`` gives the classical
definitions.

Deliberate differences from torchmetrics 1.9.0:

* fractional float targets of the binary metrics (torchmetrics sums them as
  partial hits) and NaN predictions (ordered arbitrarily by torch) raise
  :class:`~irmetrics.exceptions.ParameterError` (nDCG takes graded float targets,
  summed per tie group as torchmetrics sums them);
* an invalid ``top_k`` raises for every metric (torchmetrics' MAP and MRR let
  negative values through, and its functional AP, MRR and AUROC read
  ``top_k=0`` as None);
* every value is torchmetrics' float32 number bit for bit on CPU: average
  precision, nDCG and AUROC follow its float32 order of operations
  (:mod:`~irmetrics.compat.torchmetrics._float32`), the rest are one correctly
  rounded division there. ``exact=True`` gives the exact (AUROC: float64) value
  rounded to float32 once instead (an ulp or so apart); torch aggregates
  per-query values as torchmetrics does. On CUDA the same steps run on the
  device; ``benchmarks/check_device.py`` compares the bits there;
* error messages begin with torchmetrics' words and end with the value received.
"""


import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torchmetrics import Metric
from torchmetrics.utilities.data import dim_zero_cat

from ...checks import check_choice
from ...exceptions import ParameterError, ShapeError
from . import _float32 as float32
from . import _kernels as kernels
from ._checks import (
    check_adaptive_k,
    check_aggregation,
    check_empty_target_action,
    check_ignore_index,
    check_max_fpr,
    check_min_precision,
    check_top_k,
)
from ._ordering import TIES, Prefix, ranked_groups

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

def _as_tensor(value) -> Tensor:
    # Detached: predictions of a training step require grad, and the metrics are not
    # differentiable (torchmetrics returns the same detached value).
    return value.detach() if isinstance(value, Tensor) else torch.as_tensor(value)


def _checked_values(preds: Tensor, target: Tensor, graded: bool):
    """``preds`` as flat float32, ``target`` as flat int64 (float32 when floating):
    torchmetrics' dtype rules and words, one device sync for every data check."""
    if target.dtype not in (torch.bool, torch.long, torch.int) and not target.is_floating_point():
        raise ParameterError("`target` must be a tensor of booleans, integers or floats; "
                             f"got dtype {target.dtype}.")
    if not preds.is_floating_point():
        raise ParameterError(f"`preds` must be a tensor of floats; got dtype {preds.dtype}.")
    preds = preds.float().reshape(-1)
    binary = target.dtype == torch.bool
    target = (target.float() if target.is_floating_point() else target.long()).reshape(-1)
    # One pass each and one device sync: a NaN makes the sum NaN (so does inf - inf,
    # which the exact check below then clears).
    summaries = [preds.sum()]
    if not (graded or binary):
        summaries.extend(torch.aminmax(target))
    total, *extremes = torch.stack([v.double() for v in summaries]).tolist()
    if extremes and (extremes[0] < 0 or extremes[1] > 1):
        raise ParameterError("`target` must contain `binary` values (0 or 1); got values from "
                             f"{extremes[0]:g} to {extremes[1]:g}.")
    if extremes and target.is_floating_point() and bool(((target != 0) & (target != 1)).any()):
        raise ParameterError("`target` must contain `binary` values (0 or 1); fractional float "
                             "targets are not supported by irmetrics.")
    if math.isnan(total) and bool(torch.isnan(preds).any()):
        raise ParameterError("`preds` must not contain NaN.")
    return preds, target


def _checked_query(preds, target, graded: bool = False):
    """One query's ``preds`` and ``target`` (the functional forms)."""
    preds, target = _as_tensor(preds), _as_tensor(target)
    if preds.shape != target.shape:
        raise ShapeError(f"`preds` and `target` must be of the same shape; got {tuple(preds.shape)} "
                         f"and {tuple(target.shape)}.")
    if not preds.numel() or not preds.dim():
        raise ParameterError("`preds` and `target` must be non-empty and non-scalar tensors; "
                             f"got shape {tuple(preds.shape)}.")
    return _checked_values(preds, target, graded)


def _checked_batch(indexes, preds, target, ignore_index, graded: bool):
    """One ``update``'s tensors, flat, ``ignore_index`` positions dropped."""
    if indexes is None:
        raise ParameterError("`indexes` cannot be None: pass the query index of every prediction.")
    indexes, preds, target = _as_tensor(indexes), _as_tensor(preds), _as_tensor(target)
    if not indexes.shape == preds.shape == target.shape:
        raise ShapeError("`indexes`, `preds` and `target` must be of the same shape; got "
                         f"{tuple(indexes.shape)}, {tuple(preds.shape)} and {tuple(target.shape)}.")
    if indexes.dtype is not torch.long:
        raise ParameterError(f"`indexes` must be a tensor of long integers; got dtype {indexes.dtype}.")
    if ignore_index is not None:
        keep = target != ignore_index
        indexes, preds, target = indexes[keep], preds[keep], target[keep]
    if not indexes.numel() or not indexes.dim():
        raise ParameterError("`indexes`, `preds` and `target` must be non-empty and non-scalar "
                             f"tensors; got shape {tuple(indexes.shape)} after `ignore_index`.")
    preds, target = _checked_values(preds, target, graded)
    return indexes.reshape(-1), preds, target


def _parts(state) -> list[Tensor]:
    """A list state's tensors; a tensor state (as some syncs leave it) as one part."""
    return state if isinstance(state, list) else [state]


def _aggregate(values: Tensor, aggregation, dim: int | None = None) -> Tensor:
    """torchmetrics' aggregation: mean, median (the lower one), min, max or a callable."""
    if aggregation == "mean":
        return values.mean() if dim is None else values.mean(dim=dim)
    if aggregation in ("median", "min", "max"):
        reduce = getattr(values, aggregation)
        return reduce() if dim is None else reduce(dim=dim).values
    return aggregation(values, dim=dim)


# --------------------------------------------------------------------------- modules

class _RetrievalMetric(Metric):
    """States, ``update`` and ``compute`` shared by the retrieval Metrics.

    A subclass says what it reads of each ranking (:meth:`_prefix`) and computes its
    per-query values on the host (:meth:`_values`).
    """

    is_differentiable: bool = False
    higher_is_better: bool = True
    full_state_update: bool = False
    plot_lower_bound: float = 0.0
    plot_upper_bound: float = 1.0

    indexes: list[Tensor]
    preds: list[Tensor]
    target: list[Tensor]

    _graded = False
    _empty_means_no_negative = False

    def __init__(self, empty_target_action: str = "neg", ignore_index: int | None = None,
                 aggregation: str | Callable = "mean", *, ties: str = "torchmetrics",
                 exact: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.exact = bool(exact)
        self.empty_target_action = check_empty_target_action(empty_target_action)
        self.ignore_index = check_ignore_index(ignore_index)
        self.aggregation = check_aggregation(aggregation)
        self.ties = check_choice("ties", ties, TIES)
        self.add_state("indexes", default=[], dist_reduce_fx=None)
        self.add_state("preds", default=[], dist_reduce_fx=None)
        self.add_state("target", default=[], dist_reduce_fx=None)

    def update(self, preds: Tensor, target: Tensor, indexes: Tensor) -> None:
        """Check, flatten and store one batch (a query may span several batches)."""
        indexes, preds, target = _checked_batch(indexes, preds, target, self.ignore_index,
                                                self._graded)
        self.indexes.append(indexes)
        self.preds.append(preds)
        self.target.append(target)

    def _ranked(self):
        """Every stored query ranked on the device; ``(host groups, concatenated preds)``."""
        preds = dim_zero_cat(self.preds)
        # A binary target is read only as ``target != 0``: a bool copy per batch is
        # concatenated instead of the int64 batches (an eighth of the bytes).
        target = dim_zero_cat(self.target if self._graded else [t.ne(0) for t in _parts(self.target)])
        groups = ranked_groups(_parts(self.indexes), preds, target, self._prefix(), ties=self.ties,
                               graded=self._graded)
        return groups, preds

    def compute(self) -> Tensor:
        """Aggregate the per-query values over every query seen so far."""
        groups, preds = self._ranked()
        (values,) = kernels.handle_empty(groups, self.empty_target_action,
                                         self._empty_means_no_negative,
                                         self._values(groups, preds.device))
        if values.size == 0:
            return torch.tensor(0.0).to(preds)
        return _aggregate(torch.from_numpy(values).to(preds), self.aggregation)

    def plot(self, val=None, ax=None):
        """Plot a value or a sequence of values of the metric (needs matplotlib)."""
        return self._plot(val, ax)

    def _prefix(self) -> Prefix:
        raise NotImplementedError

    def _values(self, groups, device):
        raise NotImplementedError


class _TopKMetric(_RetrievalMetric):
    """A retrieval Metric with a ``top_k`` cutoff."""

    def __init__(self, empty_target_action: str = "neg", ignore_index: int | None = None,
                 top_k: int | None = None, aggregation: str | Callable = "mean", *,
                 ties: str = "torchmetrics", **kwargs: Any) -> None:
        super().__init__(empty_target_action, ignore_index, aggregation, ties=ties, **kwargs)
        self.top_k = check_top_k(top_k)


class _FilteredMetric(_TopKMetric):
    """A top-k Metric with torchmetrics' ``pred <= 0`` rule (``filter_nonpositive``)."""

    def __init__(self, empty_target_action: str = "neg", ignore_index: int | None = None,
                 top_k: int | None = None, aggregation: str | Callable = "mean", *,
                 filter_nonpositive: bool = True, ties: str = "torchmetrics",
                 **kwargs: Any) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, ties=ties, **kwargs)
        self.filter_nonpositive = bool(filter_nonpositive)


class RetrievalMAP(_FilteredMetric):
    r"""Mean average precision@k over queries (torchmetrics 1.9.0 ``RetrievalMAP``).

    Per query, over its top ``k' = min(k, n)`` items in torchmetrics' order,
    :math:`AP = \frac{1}{h_{k'}} \sum_{i \le k', g_i = 1} \frac{h_i}{i}` where
    :math:`h_i` counts hits in the first ``i``; 0 without a hit. With
    ``filter_nonpositive`` (default) an item with ``pred <= 0`` is no hit.
    Queries without a positive target take ``empty_target_action``.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalMAP
    >>> m = RetrievalMAP()
    >>> m.update(torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]),
    ...          torch.tensor([0, 0, 1, 0, 1, 0, 1]), indexes=torch.tensor([0, 0, 0, 1, 1, 1, 1]))
    >>> m.compute()
    tensor(0.7917)
    """

    def __init__(self, empty_target_action: str = "neg", ignore_index: int | None = None,
                 top_k: int | None = None, aggregation: str | Callable = "mean", *,
                 filter_nonpositive: bool = True, ties: str = "torchmetrics",
                 **kwargs: Any) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation,
                         filter_nonpositive=filter_nonpositive, ties=ties, **kwargs)
        self.k = self.top_k  # torchmetrics' name for it

    def _prefix(self):
        return Prefix("topk", self.top_k)

    def _values(self, groups, device):
        if self.exact:
            return kernels.average_precision(groups, self.top_k, self.filter_nonpositive)
        return float32.average_precision(groups, self.top_k, self.filter_nonpositive, device)


class RetrievalMRR(_FilteredMetric):
    r"""Mean reciprocal rank@k (torchmetrics 1.9.0 ``RetrievalMRR``).

    Per query :math:`1 / r` for the rank ``r`` of the first hit within the top
    ``min(k, n)`` in torchmetrics' order, 0 without one; with ``filter_nonpositive``
    (default) an item with ``pred <= 0`` is no hit.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalMRR
    >>> RetrievalMRR()(torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]),
    ...     torch.tensor([0, 0, 1, 0, 1, 0, 1]), indexes=torch.tensor([0, 0, 0, 1, 1, 1, 1]))
    tensor(0.7500)
    """

    def _prefix(self):
        return Prefix("topk", self.top_k)

    def _values(self, groups, device):
        return kernels.reciprocal_rank(groups, self.top_k, self.filter_nonpositive)


class RetrievalPrecision(_FilteredMetric):
    r"""Mean precision@k (torchmetrics 1.9.0 ``RetrievalPrecision``).

    Per query :math:`h_{\min(k, n)} / K` with ``K = k``; ``K = n`` when ``top_k`` is
    None or when ``adaptive_k`` and ``k > n``; 0 without a positive target. With
    ``filter_nonpositive`` (default) an item with ``pred <= 0`` is no hit.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalPrecision
    >>> RetrievalPrecision(top_k=2)(torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]),
    ...     torch.tensor([0, 0, 1, 0, 1, 0, 1]), indexes=torch.tensor([0, 0, 0, 1, 1, 1, 1]))
    tensor(0.5000)
    """

    def __init__(self, empty_target_action: str = "neg", ignore_index: int | None = None,
                 top_k: int | None = None, adaptive_k: bool = False,
                 aggregation: str | Callable = "mean", *, filter_nonpositive: bool = True,
                 ties: str = "torchmetrics", **kwargs: Any) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation,
                         filter_nonpositive=filter_nonpositive, ties=ties, **kwargs)
        self.adaptive_k = check_adaptive_k(adaptive_k)

    def _prefix(self):
        return Prefix("topk", self.top_k)

    def _values(self, groups, device):
        return kernels.precision(groups, self.top_k, self.adaptive_k, self.filter_nonpositive)


class RetrievalRecall(_FilteredMetric):
    r"""Mean recall@k (torchmetrics 1.9.0 ``RetrievalRecall``).

    Per query :math:`h_{\min(k, n)} / R` with ``R`` the number of positive targets;
    with ``filter_nonpositive`` (default) an item with ``pred <= 0`` is no hit (``R``
    counts it).

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalRecall
    >>> RetrievalRecall(top_k=2)(torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]),
    ...     torch.tensor([0, 0, 1, 0, 1, 0, 1]), indexes=torch.tensor([0, 0, 0, 1, 1, 1, 1]))
    tensor(0.7500)
    """

    def _prefix(self):
        return Prefix("argsort", self.top_k)

    def _values(self, groups, device):
        return kernels.recall(groups, self.top_k, self.filter_nonpositive)


class RetrievalFallOut(_TopKMetric):
    r"""Mean fall-out@k (torchmetrics 1.9.0 ``RetrievalFallOut``); lower is better.

    Per query (non-relevant items in the top ``min(k, n)``) / (non-relevant items).
    "Empty" means a query without a negative target; the default action is
    ``'pos'`` (such queries count 1).

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalFallOut
    >>> RetrievalFallOut(top_k=2)(torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]),
    ...     torch.tensor([0, 0, 1, 0, 1, 0, 1]), indexes=torch.tensor([0, 0, 0, 1, 1, 1, 1]))
    tensor(0.5000)
    """

    higher_is_better: bool = False
    _empty_means_no_negative = True

    def __init__(self, empty_target_action: str = "pos", ignore_index: int | None = None,
                 top_k: int | None = None, aggregation: str | Callable = "mean", *,
                 ties: str = "torchmetrics", **kwargs: Any) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, ties=ties, **kwargs)

    def _prefix(self):
        return Prefix("argsort", self.top_k)

    def _values(self, groups, device):
        return kernels.fall_out(groups, self.top_k)


class RetrievalHitRate(_TopKMetric):
    r"""Mean hit rate@k (torchmetrics 1.9.0 ``RetrievalHitRate``): 1 if a hit is in the top k.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalHitRate
    >>> RetrievalHitRate(top_k=1)(torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]),
    ...     torch.tensor([0, 0, 1, 0, 1, 0, 1]), indexes=torch.tensor([0, 0, 0, 1, 1, 1, 1]))
    tensor(0.5000)
    """

    def _prefix(self):
        return Prefix("argsort", self.top_k)

    def _values(self, groups, device):
        return kernels.hit_rate(groups, self.top_k)


class RetrievalRPrecision(_RetrievalMetric):
    r"""Mean R-precision (torchmetrics 1.9.0 ``RetrievalRPrecision``): :math:`h_R / R`.

    ``R`` is the query's number of positive targets; the top ``R`` are taken in
    torchmetrics' order.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalRPrecision
    >>> RetrievalRPrecision()(torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]),
    ...     torch.tensor([0, 0, 1, 0, 1, 0, 1]), indexes=torch.tensor([0, 0, 0, 1, 1, 1, 1]))
    tensor(0.7500)
    """

    def _prefix(self):
        return Prefix("argsort", "num_pos")

    def _values(self, groups, device):
        return kernels.r_precision(groups)


class RetrievalNormalizedDCG(_TopKMetric):
    r"""Mean tie-averaged nDCG@k (torchmetrics 1.9.0 ``RetrievalNormalizedDCG``); graded targets.

    :math:`DCG@k = \sum_{i \le k} g_i / \log_2(i + 1)` with linear gain ``g`` (the
    target value); tied predictions share the mean gain of their group, so the tie
    order never matters. Divided by the ideal DCG@k (targets sorted descending); 0
    when that is 0.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalNormalizedDCG
    >>> RetrievalNormalizedDCG()(torch.tensor([0.1, 0.2, 0.3, 4.0, 70.0]),
    ...     torch.tensor([10, 0, 0, 1, 5]), indexes=torch.tensor([0, 0, 0, 0, 0]))
    tensor(0.6957)
    """

    _graded = True

    def _prefix(self):
        return Prefix("ties", self.top_k, ideal=True)

    def _values(self, groups, device):
        if self.exact:
            return kernels.normalized_dcg(groups, self.top_k)
        return float32.normalized_dcg(groups, self.top_k, device)


class RetrievalAUROC(_TopKMetric):
    r"""Mean ROC AUC over each query's top k (torchmetrics 1.9.0 ``RetrievalAUROC``).

    The binary ROC AUC of the top ``min(k, n)`` items (0 unless both classes are
    among them); ``max_fpr`` gives the McClish-standardised partial AUC.
    Predictions outside [0, 1] pass through a float32 sigmoid first, as in
    torchmetrics. Computed in torchmetrics' float32 steps (its bits);
    ``exact=True`` gives the float64 value rounded to float32 once.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalAUROC
    >>> RetrievalAUROC()(torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]),
    ...     torch.tensor([0, 0, 1, 0, 1, 0, 1]), indexes=torch.tensor([0, 0, 0, 1, 1, 1, 1]))
    tensor(0.7500)
    """

    def __init__(self, empty_target_action: str = "neg", ignore_index: int | None = None,
                 top_k: int | None = None, max_fpr: float | None = None,
                 aggregation: str | Callable = "mean", *, ties: str = "torchmetrics",
                 **kwargs: Any) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, ties=ties, **kwargs)
        self.max_fpr = check_max_fpr(max_fpr)

    def _prefix(self):
        return Prefix("topk", self.top_k)

    def _values(self, groups, device):
        if self.exact:
            return kernels.auroc(groups, self.top_k, self.max_fpr)
        return float32.auroc(groups, self.top_k, self.max_fpr, device)


class RetrievalPrecisionRecallCurve(_RetrievalMetric):
    r"""Precision and recall at k = 1..max_k, aggregated over queries (torchmetrics 1.9.0).

    Per query :math:`P@k = h_k / K` (``K = min(k, n)`` when ``adaptive_k``, else
    ``k``) and :math:`R@k = h_k / R`; ``max_k=None`` uses the longest query. Empty
    queries contribute curves of 0 (``'neg'``) or 1 (``'pos'``); the curves are
    aggregated element-wise. ``compute()`` returns ``(precision, recall, top_k)``.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalPrecisionRecallCurve
    >>> r = RetrievalPrecisionRecallCurve(max_k=4)
    >>> p, rec, k = r(torch.tensor([0.4, 0.01, 0.5, 0.6, 0.2, 0.3, 0.5]),
    ...               torch.tensor([1, 0, 0, 1, 1, 0, 1]), indexes=torch.tensor([0, 0, 0, 0, 1, 1, 1]))
    >>> p, rec, k
    (tensor([1.0000, 0.5000, 0.6667, 0.5000]), tensor([0.5000, 0.5000, 1.0000, 1.0000]), tensor([1, 2, 3, 4]))
    """

    def __init__(self, max_k: int | None = None, adaptive_k: bool = False,
                 empty_target_action: str = "neg", ignore_index: int | None = None,
                 aggregation: str | Callable = "mean", *, ties: str = "torchmetrics",
                 **kwargs: Any) -> None:
        super().__init__(empty_target_action, ignore_index, aggregation, ties=ties, **kwargs)
        self.max_k = check_top_k(max_k, "max_k")
        self.adaptive_k = check_adaptive_k(adaptive_k)

    def _prefix(self):
        return Prefix("topk", self.max_k)

    def compute(self):
        """``(precision, recall, top_k)`` aggregated over every query seen so far."""
        groups, preds = self._ranked()
        max_k = self.max_k or int(groups.sizes.max())
        precision, recall = kernels.handle_empty(
            groups, self.empty_target_action, False,
            *kernels.precision_recall_curve(groups, max_k, self.adaptive_k))
        top_k = torch.arange(1, max_k + 1, device=preds.device)
        if precision.shape[0] == 0:
            return torch.zeros(max_k).to(preds), torch.zeros(max_k).to(preds), top_k
        return (_aggregate(torch.from_numpy(precision).to(preds), self.aggregation, dim=0),
                _aggregate(torch.from_numpy(recall).to(preds), self.aggregation, dim=0), top_k)

    def plot(self, curve=None, ax=None):
        """Plot the precision-recall curve (needs matplotlib)."""
        from torchmetrics.utilities.plot import plot_curve

        return plot_curve(curve or self.compute(), ax=ax, label_names=("Recall", "Precision"),
                          name=type(self).__name__)


class RetrievalRecallAtFixedPrecision(RetrievalPrecisionRecallCurve):
    r"""Largest aggregated recall@k whose aggregated precision@k is at least
    ``min_precision`` (torchmetrics 1.9.0).

    :math:`\max \{R@k : P@k \ge p_{min}\}` over k = 1..max_k, decided on float32
    values as torchmetrics does; ties on recall go to the largest k. ``compute()``
    returns ``(max_recall, best_k)``; ``(0, max_k)`` when no k qualifies or the best
    recall is 0.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import RetrievalRecallAtFixedPrecision
    >>> r = RetrievalRecallAtFixedPrecision(min_precision=0.8)
    >>> r(torch.tensor([0.4, 0.01, 0.5, 0.6, 0.2, 0.3, 0.5]), torch.tensor([1, 0, 0, 1, 1, 0, 1]),
    ...   indexes=torch.tensor([0, 0, 0, 0, 1, 1, 1]))
    (tensor(0.5000), tensor(1))
    """

    higher_is_better = True

    def __init__(self, min_precision: float = 0.0, max_k: int | None = None,
                 adaptive_k: bool = False, empty_target_action: str = "neg",
                 ignore_index: int | None = None, aggregation: str | Callable = "mean", *,
                 ties: str = "torchmetrics", **kwargs: Any) -> None:
        super().__init__(max_k, adaptive_k, empty_target_action, ignore_index, aggregation,
                         ties=ties, **kwargs)
        self.min_precision = check_min_precision(min_precision)

    def compute(self):
        """``(max_recall, best_k)`` over every query seen so far."""
        precision, recall, top_k = super().compute()
        qualifies = precision >= self.min_precision  # in float32, as torch compares
        none = torch.tensor(top_k.numel(), device=top_k.device)
        if not bool(qualifies.any()):
            return torch.zeros((), dtype=recall.dtype, device=recall.device), none
        best = recall[qualifies].max()
        if best == 0:
            return best, none
        return best, top_k[qualifies & (recall == best)][-1]

    def plot(self, val=None, ax=None):
        """Plot a value or a sequence of values of the metric (needs matplotlib)."""
        return self._plot(val, ax)


# --------------------------------------------------------------------------- functional

def _query_values(preds, target, prefix: Prefix, kernel, *, graded=False, ties="torchmetrics"):
    """``kernel`` over one query ranked on its device; ``(host values, preds tensor)``."""
    check_choice("ties", ties, TIES)
    preds, target = _checked_query(preds, target, graded)
    groups = ranked_groups(None, preds, target, prefix, ties=ties, graded=graded)
    return kernel(groups), preds


def _device(preds) -> torch.device:
    """The device torchmetrics would compute ``preds`` on (the host for non-tensors)."""
    return preds.device if isinstance(preds, Tensor) else torch.device("cpu")


def _scalar(values, preds: Tensor) -> Tensor:
    return torch.tensor(float(values[0]), dtype=torch.float32, device=preds.device)


def retrieval_average_precision(preds: Tensor, target: Tensor, top_k: int | None = None, *,
                                filter_nonpositive: bool = True,
                                ties: str = "torchmetrics", exact: bool = False) -> Tensor:
    r"""Average precision of one query (torchmetrics 1.9.0 ``retrieval_average_precision``).

    :math:`AP = \frac{1}{h_{k'}} \sum_{i \le k', g_i = 1} \frac{h_i}{i}` over the top
    ``k' = min(k, n)`` in torchmetrics' order; 0 without a hit. With
    ``filter_nonpositive`` (default) an item with ``pred <= 0`` is no hit.

    Parameters
    ----------
    preds : Tensor of float
        Scores, higher first; any shape (flattened).
    target : Tensor of bool or int
        0/1 relevance, same shape.
    top_k : int, optional
        Cutoff; None means all items.
    filter_nonpositive : bool, default True
        torchmetrics' ``pred <= 0`` rule; False for the classical AP.
    ties : {"torchmetrics", "trec_eval", "input_order"}, default "torchmetrics"
        Order of tied predictions: torch's on this device (torchmetrics' numbers),
        doc ids ``d0, d1, ...`` descending in byte order (trec_eval's), or input
        position (the numpy face's).
    exact : bool, default False
        False: torchmetrics' float32 value, bit for bit (the mean of float32
        quotients, reduced as torch reduces it); True: the exact value rounded
        to float32 once (an ulp or so apart).

    Returns
    -------
    Tensor
        A float32 scalar on ``preds``' device.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_average_precision
    >>> retrieval_average_precision(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]))
    tensor(0.8333)
    """
    top_k = check_top_k(top_k)
    values, preds = _query_values(
        preds, target, Prefix("topk", top_k),
        lambda g: (kernels.average_precision(g, top_k, filter_nonpositive) if exact else
                   float32.average_precision(g, top_k, filter_nonpositive, _device(preds))),
        ties=ties)
    return _scalar(values, preds)


def retrieval_reciprocal_rank(preds: Tensor, target: Tensor, top_k: int | None = None, *,
                              filter_nonpositive: bool = True, ties: str = "torchmetrics") -> Tensor:
    """Reciprocal rank of one query (torchmetrics 1.9.0 ``retrieval_reciprocal_rank``).

    ``1 / rank`` of the first hit within the top ``min(k, n)``, 0 if none; with
    ``filter_nonpositive`` (default) items with ``pred <= 0`` are misses. Parameters
    as :func:`retrieval_average_precision`.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_reciprocal_rank
    >>> retrieval_reciprocal_rank(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([False, True, False]))
    tensor(0.5000)
    >>> retrieval_reciprocal_rank(torch.tensor([1.0] * 17), torch.tensor([1] + [0] * 16))  # ties: torch's order
    tensor(0.0625)
    """
    top_k = check_top_k(top_k)
    values, preds = _query_values(
        preds, target, Prefix("topk", top_k),
        lambda g: kernels.reciprocal_rank(g, top_k, filter_nonpositive), ties=ties)
    return _scalar(values, preds)


def retrieval_precision(preds: Tensor, target: Tensor, top_k: int | None = None,
                        adaptive_k: bool = False, *, filter_nonpositive: bool = True,
                        ties: str = "torchmetrics") -> Tensor:
    """Precision@k of one query (torchmetrics 1.9.0 ``retrieval_precision``).

    ``(hits in the top min(K, n)) / K``; ``K = n`` when ``top_k`` is None, or when
    ``adaptive_k`` and ``top_k > n``; 0 without a positive target.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_precision
    >>> retrieval_precision(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
    tensor(0.5000)
    >>> retrieval_precision(torch.tensor([0.5, 0.9, 0.9, 0.9]), torch.tensor([0, 0, 1, 0]), top_k=1)
    tensor(1.)
    """
    top_k = check_top_k(top_k)
    check_adaptive_k(adaptive_k)
    values, preds = _query_values(
        preds, target, Prefix("topk", top_k),
        lambda g: kernels.precision(g, top_k, adaptive_k, filter_nonpositive), ties=ties)
    return _scalar(values, preds)


def retrieval_recall(preds: Tensor, target: Tensor, top_k: int | None = None, *,
                     filter_nonpositive: bool = True, ties: str = "torchmetrics") -> Tensor:
    """Recall@k of one query (torchmetrics 1.9.0 ``retrieval_recall``).

    ``(hits in the top min(k, n)) / (positive targets)``, 0 without one.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_recall
    >>> retrieval_recall(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
    tensor(0.5000)
    """
    top_k = check_top_k(top_k)
    values, preds = _query_values(
        preds, target, Prefix("argsort", top_k),
        lambda g: kernels.recall(g, top_k, filter_nonpositive), ties=ties)
    return _scalar(values, preds)


def retrieval_fall_out(preds: Tensor, target: Tensor, top_k: int | None = None, *,
                       ties: str = "torchmetrics") -> Tensor:
    """Fall-out@k of one query (torchmetrics 1.9.0 ``retrieval_fall_out``).

    ``(non-relevant items in the top min(k, n)) / (non-relevant items)``; 0 when
    every item is relevant.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_fall_out
    >>> retrieval_fall_out(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
    tensor(1.)
    """
    top_k = check_top_k(top_k)
    values, preds = _query_values(preds, target, Prefix("argsort", top_k),
                                  lambda g: kernels.fall_out(g, top_k), ties=ties)
    return _scalar(values, preds)


def retrieval_hit_rate(preds: Tensor, target: Tensor, top_k: int | None = None, *,
                       ties: str = "torchmetrics") -> Tensor:
    """Hit rate@k of one query (torchmetrics 1.9.0 ``retrieval_hit_rate``): 1 if a hit is in the top k.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_hit_rate
    >>> retrieval_hit_rate(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
    tensor(1.)
    """
    top_k = check_top_k(top_k)
    values, preds = _query_values(preds, target, Prefix("argsort", top_k),
                                  lambda g: kernels.hit_rate(g, top_k), ties=ties)
    return _scalar(values, preds)


def retrieval_r_precision(preds: Tensor, target: Tensor, *, ties: str = "torchmetrics") -> Tensor:
    """R-precision of one query (torchmetrics 1.9.0 ``retrieval_r_precision``).

    ``R = sum(target)``; hits in the top R over R; 0 when R = 0.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_r_precision
    >>> retrieval_r_precision(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]))
    tensor(0.5000)
    """
    values, preds = _query_values(preds, target, Prefix("argsort", "num_pos"),
                                  kernels.r_precision, ties=ties)
    return _scalar(values, preds)


def retrieval_normalized_dcg(preds: Tensor, target: Tensor, top_k: int | None = None, *,
                             ties: str = "torchmetrics", exact: bool = False) -> Tensor:
    r"""nDCG@k of one query with tie averaging (torchmetrics 1.9.0 ``retrieval_normalized_dcg``).

    :math:`DCG@k = \sum_{i \le k} g_i / \log_2(i + 1)`, linear gain (graded targets
    allowed); tied predictions occupying ranks a..b share their mean gain. Divided
    by the ideal DCG@k; 0 when that is 0. ``ties`` has no effect (kept for a uniform
    signature). Computed in torchmetrics' float32 order of operations (its bits);
    ``exact=True`` gives the exact value rounded to float32 once.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_normalized_dcg
    >>> retrieval_normalized_dcg(torch.tensor([.1, .2, .3, 4, 70]), torch.tensor([10, 0, 0, 1, 5]))
    tensor(0.6957)
    """
    top_k = check_top_k(top_k)
    values, preds = _query_values(preds, target, Prefix("ties", top_k, ideal=True),
                                  lambda g: (kernels.normalized_dcg(g, top_k) if exact else
                                             float32.normalized_dcg(g, top_k, _device(preds))),
                                  graded=True, ties=ties)
    return _scalar(values, preds)


def retrieval_auroc(preds: Tensor, target: Tensor, top_k: int | None = None,
                    max_fpr: float | None = None, *, ties: str = "torchmetrics",
                    exact: bool = False) -> Tensor:
    """ROC AUC over one query's top k items (torchmetrics 1.9.0 ``retrieval_auroc``).

    The top ``min(k, n)`` items by prediction are kept; without both classes among
    them the result is 0; ``max_fpr`` gives the McClish-standardised partial AUC.
    Computed in torchmetrics' float32 order of operations (its bits);
    ``exact=True`` gives the float64 value rounded to float32 once.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_auroc
    >>> retrieval_auroc(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]))
    tensor(0.5000)
    """
    top_k = check_top_k(top_k)
    max_fpr = check_max_fpr(max_fpr)
    values, preds = _query_values(preds, target, Prefix("topk", top_k),
                                  lambda g: (kernels.auroc(g, top_k, max_fpr) if exact else
                                             float32.auroc(g, top_k, max_fpr, _device(preds))),
                                  ties=ties)
    return _scalar(values, preds)


def retrieval_precision_recall_curve(preds: Tensor, target: Tensor, max_k: int | None = None,
                                     adaptive_k: bool = False, *, ties: str = "torchmetrics"):
    """Precision and recall at k = 1..max_k of one query (torchmetrics 1.9.0).

    ``recall@k = h_k / R`` and ``precision@k = h_k / k`` (k capped at n when
    ``adaptive_k``); no positive target gives zero curves.

    Returns
    -------
    precision, recall : Tensor of float32, shape (max_k,)
    top_k : Tensor of int64, shape (max_k,)
        ``1..max_k``, or ``1..n`` padded with n when ``adaptive_k`` and ``max_k > n``.

    Examples
    --------
    >>> import torch
    >>> from irmetrics.compat.torchmetrics import retrieval_precision_recall_curve
    >>> retrieval_precision_recall_curve(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]),
    ...                                  max_k=2)
    (tensor([1.0000, 0.5000]), tensor([0.5000, 0.5000]), tensor([1, 2]))
    """
    check_adaptive_k(adaptive_k)
    max_k = check_top_k(max_k, "max_k")
    (precision, recall), preds = _query_values(
        preds, target, Prefix("topk", max_k),
        lambda g: kernels.precision_recall_curve(g, max_k or int(g.sizes[0]), adaptive_k), ties=ties)
    n = preds.numel()
    width = precision.shape[1]
    top_k = torch.arange(1, width + 1, device=preds.device)
    if adaptive_k:
        top_k = top_k.clamp(max=n)
    return (torch.from_numpy(precision[0]).to(preds), torch.from_numpy(recall[0]).to(preds), top_k)
