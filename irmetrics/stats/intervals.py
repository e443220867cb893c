"""The mean of one system with a t or bootstrap confidence interval."""

from __future__ import annotations

from typing import Any

import numpy as np

from irmetrics.checks import check_choice, check_positive_int
from irmetrics.parallel import resolve_threads
from ._common import (
    BOOTSTRAP_CIS, CI_METHODS, ConfidenceInterval, _as_columns, _check_level, _check_seed,
    _mean_var, _shaped, _t_interval,
)
from .paired import _bootstrap_blocks, _bootstrap_interval


def confidence_interval(
    values: Any,
    *,
    method: str = "t",
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: Any = 0,
    bootstrap_ci: str = "bca",
    threads: int | None = None,
) -> ConfidenceInterval:
    r"""Mean of one system's per-query scores with a confidence interval.

    * ``"t"``: :math:`\bar x \pm t_{n-1, (1+\text{level})/2}\, s / \sqrt n`, equal to
      ``scipy.stats.t.interval(level, n - 1, loc=mean, scale=sem)``.
    * ``"bootstrap"``: ``n_resamples`` resamples of the rows with replacement; BCa interval
      (``bootstrap_ci="bca"``) or percentile, as :func:`scipy.stats.bootstrap`.

    Parameters
    ----------
    values : array-like, shape (n,) or (n, k)
        Finite scores; ``k`` independent columns.
    method : {"t", "bootstrap"}
    level : float
        In (0, 1).
    n_resamples : int
    seed : int, numpy.random.Generator or None
        Seed of the resamples; the same seed gives the same interval whatever ``threads``.
    bootstrap_ci : {"bca", "percentile"}
    threads : int or None
        Threads drawing the resamples (:func:`irmetrics.parallel.resolve_threads`); the
        result does not depend on it.

    Returns
    -------
    ConfidenceInterval

    Notes
    -----
    n = 1 gives a NaN interval; a constant column (s = 0) gives ``[mean, mean]``.

    Examples
    --------
    >>> ci = confidence_interval([0.2, 0.4, 0.6, 0.8])
    >>> float(ci.mean), round(float(ci.low), 4), round(float(ci.high), 4)
    (0.5, 0.0891, 0.9109)
    """
    matrix, one_d = _as_columns("values", values)
    method = check_choice("method", method, CI_METHODS)
    level = _check_level(level)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    bootstrap_ci = check_choice("bootstrap_ci", bootstrap_ci, BOOTSTRAP_CIS)
    seed = _check_seed(seed)
    resolve_threads(threads)
    n = matrix.shape[0]
    mean, var = _mean_var(matrix)
    sd = np.sqrt(var)
    if method == "t":
        low, high = _t_interval(mean, sd, n, level, "two-sided")
        ci_method, used = "t", 0
    else:
        boot_means = np.concatenate(_bootstrap_blocks(
            matrix - mean, n_resamples, seed, threads, lambda sums, _: mean + sums / n,
            squares=False))
        low, high = _bootstrap_interval(matrix, mean, sd, boot_means, level, "two-sided",
                                        bootstrap_ci, threads)
        ci_method, used = bootstrap_ci, n_resamples
    return ConfidenceInterval(
        mean=_shaped(mean, one_d), low=_shaped(low, one_d), high=_shaped(high, one_d),
        level=level, method=method, ci_method=ci_method, n=n, n_resamples=used)
