"""Drop-in for ``ranking_metrics.metrics`` (arrrrrmin/ranking-metrics, commit 8e40ac4).

The functions keep the repository's signatures and its definitions, including
the ones that differ from pytorch-metric-learning (the repository is an
illustration; :mod:`irmetrics.compat.pml` and the registered measures ``MAP@R``
and ``ML_RPrec`` follow PML's per-query definitions):

* ``binary_matches`` is a (N, K) 0/1 matrix, row i the correctness of query i's
  K nearest neighbours (the query itself removed);
* ``mean_average_precision_at_r(binary_matches, r)`` divides by one global ``r``
  (the repository uses the smallest class size minus 1) and needs ``K == r``;
* ``r_precision(binary_matches, c)`` divides the hits of the whole row by the
  query's full class size, the query included;
* ``recall_at(binary_matches, k)`` is a hit indicator (metric-learning Recall@k,
  registered ``ML_Recall@k``), not IR recall.

Inputs are numpy arrays or anything with ``__array__``; outputs numpy arrays or
Python floats; torch and scikit-learn are never imported (ROC points are computed
here, exactly as ``sklearn.metrics.roc_curve(drop_intermediate=False)``).

Deliberate differences: ties in confidence keep input order (torch's ``argsort``
leaves them unspecified); results are float64 (the original: float32);
``mean_average_precision_at_r`` requires ``binary_matches`` to have exactly ``r``
columns (the original relies on broadcasting and fails or mis-broadcasts
otherwise); labels must be non-negative integers, as ``sizes_per_class`` assumes.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import ParameterError, ShapeError
from ..measures.metric_learning import hit_values, map_at_r_values
from ._arrays import as_numpy
from ._lists import hits_matrix_view
from ._roc import roc_points

__all__ = ["sizes_per_class", "order_by_confidence", "mean_average_precision_at_r",
           "r_precision", "recall_at", "error_vs_reject_curve", "erc_vs_recall_at",
           "erc_vs_mapr", "conf_vs_recall_at_1", "spearmanr_corr"]


def _matches(binary_matches, name="binary_matches") -> np.ndarray:
    m = as_numpy(binary_matches, name, ndim=2)
    if m.dtype.kind not in "biuf":
        raise ParameterError(f"`{name}` must hold 0/1 values; got dtype {m.dtype}.")
    if m.size and not np.all((m == 0) | (m == 1)):
        raise ParameterError(f"`{name}` must hold 0/1 values.")
    return m


def _labels(c) -> np.ndarray:
    labels = as_numpy(c, "c", ndim=1)
    if labels.dtype.kind not in "iu" or (labels.size and labels.min() < 0):
        raise ParameterError("`c` must hold non-negative integer class ids.")
    return labels.astype(np.int64)


def _positive_int(value, name) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"`{name}` must be a positive integer; got {value!r}.")
    return int(value)


def sizes_per_class(c) -> np.ndarray:
    """Number of samples of every class id ``0 .. max(c)``.

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import sizes_per_class
    >>> sizes_per_class([0, 2, 2, 0, 2]).tolist()
    [2, 0, 3]
    """
    return np.bincount(_labels(c)).astype(np.int64)


def order_by_confidence(t, confs, descending=True) -> np.ndarray:
    """``t`` reordered by ``confs`` (descending by default); ties keep input order.

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import order_by_confidence
    >>> order_by_confidence([10, 20, 30], [0.1, 0.9, 0.1]).tolist()
    [20, 10, 30]
    """
    values = as_numpy(t, "t")
    conf = as_numpy(confs, "confs", ndim=1, finite=True)
    if len(conf) != len(values):
        raise ShapeError(f"`confs` must have one entry per row of `t` ({len(values)}); "
                         f"got {len(conf)}.")
    # Stable sort of the negated key gives descending order with ties in input order.
    key = -conf.astype(np.float64) if descending else conf
    return values[np.argsort(key, kind="stable")]


def mean_average_precision_at_r(binary_matches, r) -> np.ndarray:
    """Per-query MAP@r with one global r: ``(1/r) * sum_{i <= r, g_i} h_i / i``.

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import mean_average_precision_at_r
    >>> mean_average_precision_at_r([[1, 0, 1], [0, 1, 1]], 3).round(4).tolist()
    [0.5556, 0.3889]
    """
    r = _positive_int(r, "r")
    m = _matches(binary_matches)
    if m.shape[1] != r:
        raise ShapeError(f"`binary_matches` must have exactly r = {r} columns; got {m.shape[1]}.")
    return map_at_r_values(hits_matrix_view(m, np.full(m.shape[0], r)))


def r_precision(binary_matches, c) -> np.ndarray:
    """Hits of each row over the query's class size (the query itself included).

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import r_precision
    >>> r_precision([[1, 0], [1, 1], [0, 0]], [0, 0, 1]).tolist()
    [0.5, 1.0, 0.0]
    """
    m = _matches(binary_matches)
    labels = _labels(c)
    if len(labels) != m.shape[0]:
        raise ShapeError(f"`c` must have one entry per row of `binary_matches` ({m.shape[0]}); "
                         f"got {len(labels)}.")
    view = hits_matrix_view(m, np.zeros(m.shape[0], np.int64))
    return view.relat(view.num_ret) / sizes_per_class(labels)[labels]


def recall_at(binary_matches, k) -> np.ndarray:
    """Metric-learning Recall@k: 1 if any of the first k neighbours is correct, else 0.

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import recall_at
    >>> recall_at([[0, 1, 0], [0, 0, 1]], 2).tolist()
    [1.0, 0.0]
    """
    k = _positive_int(k, "k")
    m = _matches(binary_matches)
    return hit_values(hits_matrix_view(m, np.zeros(m.shape[0], np.int64)), k)


def error_vs_reject_curve(binary_hits, scores, confs) -> float:
    """Mean of the error-vs-reject curve (lower is better).

    Errors ``e = 1 - scores`` are ordered by confidence, highest first; the curve at
    m is the mean error of the m most confident queries; the result is the mean of
    the curve over ``m = 1..N`` (N = number of rows of ``binary_hits``).

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import error_vs_reject_curve
    >>> error_vs_reject_curve([[1], [0]], [1.0, 0.0], [0.9, 0.1])   # curve (0, 1/2)
    0.25
    """
    n = as_numpy(binary_hits, "binary_hits").shape[0]
    score = as_numpy(scores, "scores", ndim=1, finite=True).astype(np.float64)
    conf = as_numpy(confs, "confs", ndim=1, finite=True)
    if not (len(score) == len(conf) == n):
        raise ShapeError(f"`scores`, `confs` and `binary_hits` must describe the same {n} queries; "
                         f"got {len(score)} and {len(conf)}.")
    if n == 0:
        raise ParameterError("`binary_hits` must have at least one row.")
    errors = order_by_confidence(1.0 - score, conf)
    curve = np.cumsum(errors) / np.arange(1, n + 1)
    return float(curve.mean())


def erc_vs_recall_at(binary_matches, confs, k) -> float:
    """:func:`error_vs_reject_curve` with Recall@k (hit indicator) as the score.

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import erc_vs_recall_at
    >>> erc_vs_recall_at([[1, 0], [0, 0]], [0.9, 0.1], 2)
    0.25
    """
    return error_vs_reject_curve(binary_matches, recall_at(binary_matches, k), confs)


def erc_vs_mapr(binary_matches, confs, r) -> float:
    """:func:`error_vs_reject_curve` with MAP@r (global r) as the score.

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import erc_vs_mapr
    >>> erc_vs_mapr([[1, 1], [0, 0]], [0.9, 0.1], 2)
    0.25
    """
    return error_vs_reject_curve(binary_matches, mean_average_precision_at_r(binary_matches, r),
                                 confs)


def conf_vs_recall_at_1(binary_matches, confs) -> float:
    """Confidence vs Recall@1: mean over ROC points of ``p * TPR + (1 - p) * (1 - FPR)``.

    ``p`` is the mean Recall@1; the ROC curve is that of Recall@1 (0/1) against
    the confidences, with every distinct confidence as a threshold plus the origin
    (``sklearn.metrics.roc_curve(drop_intermediate=False)``). Without positives (or
    negatives) TPR (or FPR) is undefined and the result is NaN, as with sklearn.
    Meaningful for confidences in [0, 1].

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import conf_vs_recall_at_1
    >>> conf_vs_recall_at_1([[1, 0], [0, 1], [1, 1], [0, 0]], [0.9, 0.2, 0.8, 0.4])
    0.7
    """
    hits = recall_at(binary_matches, 1)
    conf = as_numpy(confs, "confs", ndim=1, finite=True)
    if len(conf) != len(hits):
        raise ShapeError(f"`confs` must have one entry per row of `binary_matches` "
                         f"({len(hits)}); got {len(conf)}.")
    if hits.size == 0:
        raise ParameterError("`binary_matches` must have at least one row.")
    p = float(hits.mean())
    order = np.argsort(-conf.astype(np.float64), kind="stable")
    roc = roc_points(np.array([0, len(hits)]), conf[order], hits[order] != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = roc.tps / roc.positives[0] if roc.positives[0] else np.full(roc.tps.size, np.nan)
        fpr = roc.fps / roc.negatives[0] if roc.negatives[0] else np.full(roc.fps.size, np.nan)
    return float(np.mean(p * tpr + (1 - p) * (1 - fpr)))


def spearmanr_corr(confs, gt_confs) -> float:
    """Spearman rank correlation between predicted and ground-truth confidences (scipy).

    Examples
    --------
    >>> from irmetrics.compat.ranking_metrics import spearmanr_corr
    >>> spearmanr_corr([0.1, 0.5, 0.3], [1.0, 3.0, 2.0])
    1.0
    """
    from scipy.stats import spearmanr

    a = as_numpy(confs, "confs", ndim=1, finite=True)
    b = as_numpy(gt_confs, "gt_confs", ndim=1, finite=True)
    if len(a) != len(b):
        raise ShapeError(f"`confs` and `gt_confs` must have the same length; got {len(a)} "
                         f"and {len(b)}.")
    return float(spearmanr(a, b)[0])
