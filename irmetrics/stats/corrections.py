"""Corrections for multiple comparisons (statsmodels' method names)."""

from __future__ import annotations

from typing import Any

import numpy as np

from irmetrics.checks import check_choice, check_int, parameter_error
from ._common import CORRECTIONS


def adjust_pvalues(p: Any, method: str = "holm", *, axis: int = -1) -> np.ndarray:
    r"""Adjust p-values for multiple comparisons; each slice along ``axis`` is one family.

    With the :math:`m` p-values of a family sorted, :math:`p_{(1)} \le \dots \le p_{(m)}`:

    * ``"bonferroni"``: :math:`\min(1, m p_i)`.
    * ``"holm"``: :math:`\min(1, \max_{j \le i} (m - j + 1) p_{(j)})`.
    * ``"holm-sidak"``: :math:`\min(1, \max_{j \le i} 1 - (1 - p_{(j)})^{m - j + 1})`.
    * ``"hommel"``: Hommel (1988) closed Simes procedure, by Wright's (1992) algorithm:
      for each subset size :math:`s = m, \dots, 2`,
      :math:`c_s = \min_{1 \le r \le s} s\, p_{(m - s + r)} / r`; the adjusted value of each
      of the :math:`s` largest p-values is raised to at least :math:`c_s`, and of each other
      :math:`p_{(i)}` to at least :math:`\min(s\, p_{(i)}, c_s)`.
    * ``"fdr_bh"``: Benjamini-Hochberg, :math:`\min(1, \min_{j \ge i} m p_{(j)} / j)`.
    * ``"fdr_by"``: Benjamini-Yekutieli, as fdr_bh with :math:`m` replaced by
      :math:`m \sum_{r=1}^m 1/r`.
    * ``"none"``: a copy.

    These are the definitions of ``statsmodels.stats.multitest.multipletests`` (same
    method names), which the tests compare against.

    Parameters
    ----------
    p : array-like
        p-values in [0, 1]; NaN allowed (see Notes). A scalar is a family of one.
    method : {"none", "bonferroni", "holm", "holm-sidak", "hommel", "fdr_bh", "fdr_by"}
    axis : int
        The axis along which families lie; the others are vectorised over.

    Returns
    -------
    ndarray
        Adjusted p-values, same shape as ``p``, float64.

    Notes
    -----
    NaN p-values (e.g. from an undefined test) stay NaN and are left out of their family:
    the family size :math:`m` is the number of non-NaN values in the slice.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.2], "holm")
    array([0.04, 0.09, 0.09, 0.2 ])
    >>> adjust_pvalues([0.01, 0.04, np.nan, 0.2], "bonferroni")
    array([0.03, 0.12,  nan, 0.6 ])
    """
    method = check_choice("method", method, CORRECTIONS)
    try:
        values = np.array(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error("p", "an array of p-values in [0, 1]", p) from None
    outside = ~np.isnan(values) & ~((values >= 0) & (values <= 1))
    if outside.any():
        raise parameter_error("p", "p-values in [0, 1] (or NaN)", float(values[outside][0]))
    scalar = values.ndim == 0
    values = np.atleast_1d(values)
    axis = check_int("axis", axis, min=-values.ndim, max=values.ndim - 1)
    if method == "none" or values.size == 0:
        return values.reshape(()) if scalar else values
    moved = np.moveaxis(values, axis, -1)
    families = moved.reshape(-1, moved.shape[-1])
    adjusted = np.full_like(families, np.nan)
    order = np.argsort(families, axis=1, kind="stable")  # NaN sort last
    ordered = np.take_along_axis(families, order, axis=1)
    sizes = np.count_nonzero(~np.isnan(families), axis=1)
    for size in np.unique(sizes[sizes > 0]):  # one pass per family size, not per family
        rows = np.flatnonzero(sizes == size)
        block = np.minimum(_ADJUSTERS[method](ordered[rows, :size]), 1.0)
        target = adjusted[rows]
        np.put_along_axis(target, order[rows, :size], block, axis=1)
        adjusted[rows] = target
    result = np.moveaxis(adjusted.reshape(moved.shape), -1, axis)
    return result.reshape(()) if scalar else result


def _step_down_factors(m: int) -> np.ndarray:
    return np.arange(m, 0, -1, dtype=np.float64)  # m - j + 1 for j = 1..m


def _holm(ordered):
    return np.maximum.accumulate(ordered * _step_down_factors(ordered.shape[1]), axis=1)


def _holm_sidak(ordered):
    with np.errstate(divide="ignore"):  # p = 1: log1p(-1) = -inf, adjusted value 1
        raw = -np.expm1(_step_down_factors(ordered.shape[1]) * np.log1p(-ordered))
    return np.maximum.accumulate(raw, axis=1)


def _step_up(ordered, scale):
    """``min_{j >= i} scale * p_(j) / j`` (Benjamini-Hochberg family)."""
    m = ordered.shape[1]
    raw = ordered / (np.arange(1, m + 1) / m / scale)
    return np.minimum.accumulate(raw[:, ::-1], axis=1)[:, ::-1]


def _hommel(ordered):
    m = ordered.shape[1]
    adjusted = ordered.copy()
    for size in range(m, 1, -1):  # subset sizes; vectorised over families
        tail = ordered[:, m - size:]
        bound = (size * tail / np.arange(1, size + 1)).min(axis=1, keepdims=True)
        adjusted[:, m - size:] = np.maximum(adjusted[:, m - size:], bound)
        head = ordered[:, :m - size]
        adjusted[:, :m - size] = np.maximum(adjusted[:, :m - size], np.minimum(size * head, bound))
    return adjusted


_ADJUSTERS = {
    "bonferroni": lambda ordered: ordered * ordered.shape[1],
    "holm": _holm,
    "holm-sidak": _holm_sidak,
    "hommel": _hommel,
    "fdr_bh": lambda ordered: _step_up(ordered, 1.0),
    "fdr_by": lambda ordered: _step_up(ordered, float(np.sum(1.0 / np.arange(1, ordered.shape[1] + 1)))),
}
