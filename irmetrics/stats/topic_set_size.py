"""How many topics are enough: Sakai's topic set size design from pilot per-topic scores.

Given the variance of per-topic scores (estimated from a pilot collection), the number of
topics needed so that

* a two-sided paired t-test at level alpha detects a true mean difference ``d`` with
  probability (power) ``1 - beta``;
* a one-way ANOVA over ``m`` systems at level alpha detects a true range ``d`` (best minus
  worst mean) with power ``1 - beta``;
* the confidence interval of a mean difference at level ``1 - alpha`` is expected to be at
  most ``w`` wide.

Sakai, "Topic set size design", Information Retrieval Journal 19 (2016); the power view is
Webber, Moffat & Zobel, "Statistical power in retrieval experimentation" (CIKM 2008).
Arrays go in, numbers come out; scipy does the noncentral distributions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from irmetrics.checks import check_choice, check_float, check_int, parameter_error
from irmetrics.exceptions import ShapeError
from ._common import _check_finite

__all__ = [
    "DESIGNS",
    "TopicSetSize",
    "pilot_variance",
    "t_test_power",
    "anova_power",
    "topic_set_size",
    "topic_set_sizes",
]

#: The designs of :func:`topic_set_size`.
DESIGNS = ("t", "anova", "ci")

#: The largest topic count searched: beyond it the answer is "more than this".
MAX_TOPICS = 10_000_000


def pilot_variance(scores: Any) -> float:
    r"""Residual variance of pilot per-topic scores (two-way ANOVA without replication).

    With :math:`x_{ij}` the score of system ``j`` on topic ``i`` (n topics, m systems),
    topic means :math:`\bar x_{i\cdot}`, system means :math:`\bar x_{\cdot j}` and grand
    mean :math:`\bar x`:

    .. math:: \hat\sigma^2 = V_E = \frac{\sum_{ij} (x_{ij} - \bar x_{i\cdot} -
              \bar x_{\cdot j} + \bar x)^2}{(n - 1)(m - 1)}

    Sakai's estimate of the within-system variance that the designs need; the variance
    of a paired difference is :math:`2\hat\sigma^2`.

    Parameters
    ----------
    scores : array-like, shape (n topics >= 2, m systems >= 2)

    Returns
    -------
    float

    Examples
    --------
    >>> round(pilot_variance([[0.2, 0.4], [0.5, 0.5], [0.3, 0.7]]), 12)
    0.02
    """
    try:
        x = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error("scores", "an array of real numbers", scores) from None
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise ShapeError(f"`scores` must be 2-D with at least 2 topics and 2 systems; got "
                         f"shape {x.shape}.")
    _check_finite("scores", x)
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    return float((residual**2).sum() / ((x.shape[0] - 1) * (x.shape[1] - 1)))


def t_test_power(n: int, difference: float, variance: float, *, alpha: float = 0.05) -> float:
    r"""Power of the two-sided paired t-test on ``n`` topics.

    .. math:: 1 - \beta = P(|t'| \ge t_{1-\alpha/2,\,n-1}), \quad
              t' \sim t'(n - 1, \lambda), \quad \lambda = \sqrt n\, d / \sigma_d

    with :math:`\sigma_d^2` = ``variance``, the variance of the per-topic differences.

    Examples
    --------
    >>> round(t_test_power(50, 0.05, 0.02), 4)
    0.6882
    """
    from scipy import stats as sps

    df = n - 1
    ncp = math.sqrt(n) * difference / math.sqrt(variance)
    critical = sps.t.ppf(1 - alpha / 2, df)
    return float(sps.nct.sf(critical, df, ncp) + sps.nct.cdf(-critical, df, ncp))


def anova_power(n: int, difference: float, variance: float, *, n_systems: int,
                alpha: float = 0.05) -> float:
    r"""Power of one-way ANOVA over ``m`` systems on ``n`` topics for a range ``d``.

    The least favourable means for a range :math:`d` (two systems at :math:`\pm d/2`, the
    others at the grand mean) give the noncentrality :math:`\lambda = n d^2 / (2\sigma^2)`:

    .. math:: 1 - \beta = P(F' \ge F_{1-\alpha}(m - 1, m(n - 1))), \quad
              F' \sim F'(m - 1, m(n - 1), \lambda)

    with :math:`\sigma^2` = ``variance``, the within-system variance.

    Examples
    --------
    >>> round(anova_power(50, 0.1, 0.01, n_systems=5), 4)
    0.988
    """
    from scipy import stats as sps

    df1, df2 = n_systems - 1, n_systems * (n - 1)
    ncp = n * difference**2 / (2.0 * variance)
    critical = sps.f.ppf(1 - alpha, df1, df2)
    return float(sps.ncf.sf(critical, df1, df2, ncp))


def _expected_width(n: int, variance: float, alpha: float) -> float:
    """Expected width of the t interval of a mean: 2 t c4(n) sigma / sqrt(n)."""
    from scipy import special, stats as sps

    c4 = math.sqrt(2.0 / (n - 1)) * math.exp(special.gammaln(n / 2) - special.gammaln((n - 1) / 2))
    return 2.0 * float(sps.t.ppf(1 - alpha / 2, n - 1)) * c4 * math.sqrt(variance / n)


def _smallest(ok) -> int:
    """Smallest n >= 2 with ok(n) (ok is monotone); MAX_TOPICS + 1 when none."""
    if ok(2):
        return 2
    hi = 4
    while not ok(hi):
        if hi >= MAX_TOPICS:
            return MAX_TOPICS + 1
        hi = min(2 * hi, MAX_TOPICS)
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class TopicSetSize:
    """One row of :func:`topic_set_sizes`: the topics each design needs for one
    difference (or width)."""

    difference: float
    t: int
    anova: int
    ci: int


def topic_set_size(variance: float, *, design: str = "t", difference: float | None = None,
                   width: float | None = None, alpha: float = 0.05, power: float = 0.8,
                   n_systems: int = 2) -> int:
    r"""Topics needed by one design (Sakai's topic set size design).

    * ``"t"``: the smallest ``n`` with :func:`t_test_power` :math:`\ge` ``power`` for a
      mean difference ``difference``; ``variance`` is that of per-topic *differences*
      (:math:`2\hat\sigma^2` from :func:`pilot_variance`).
    * ``"anova"``: the smallest ``n`` with :func:`anova_power` :math:`\ge` ``power`` for
      a range ``difference`` among ``n_systems``; ``variance`` is the within-system
      variance (:func:`pilot_variance`).
    * ``"ci"``: the smallest ``n`` whose confidence interval of a mean (of differences)
      at level ``1 - alpha`` has expected width at most ``width``:
      :math:`2\,t_{1-\alpha/2,\,n-1}\,c_4(n)\,\sigma/\sqrt n \le w`, with
      :math:`c_4(n)\sigma` the expected sample standard deviation.

    Parameters
    ----------
    variance : float
        Positive.
    design : {"t", "anova", "ci"}
    difference : float
        Positive; for ``"t"`` and ``"anova"``.
    width : float
        Positive; for ``"ci"``.
    alpha : float, default 0.05
    power : float, default 0.8
        ``1 - beta``.
    n_systems : int, default 2
        For ``"anova"``.

    Returns
    -------
    int
        At least 2; ``MAX_TOPICS + 1`` (10,000,001) when even ten million topics are not
        enough.

    Examples
    --------
    >>> topic_set_size(0.02, design="t", difference=0.05)
    65
    >>> topic_set_size(0.01, design="anova", difference=0.1, n_systems=5)
    25
    >>> topic_set_size(0.02, design="ci", width=0.1)
    33
    """
    design = check_choice("design", design, DESIGNS)
    variance = check_float("variance", variance)
    if variance <= 0:
        raise parameter_error("variance", "a positive number (scores that vary)", variance)
    alpha = check_float("alpha", alpha)
    if not 0 < alpha < 1:
        raise parameter_error("alpha", "a number strictly between 0 and 1", alpha)
    power = check_float("power", power)
    if not alpha < power < 1:
        raise parameter_error("power", f"a number strictly between alpha ({alpha}) and 1", power)
    if design == "ci":
        if width is None:
            raise parameter_error("width", "a positive number for design='ci'", width)
        w = check_float("width", width)
        if w <= 0:
            raise parameter_error("width", "a positive number", width)
        return _smallest(lambda n: _expected_width(n, variance, alpha) <= w)
    if difference is None:
        raise parameter_error("difference", f"a positive number for design={design!r}", difference)
    d = check_float("difference", difference)
    if d <= 0:
        raise parameter_error("difference", "a positive number", difference)
    if design == "t":
        return _smallest(lambda n: t_test_power(n, d, variance, alpha=alpha) >= power)
    m = check_int("n_systems", n_systems, min=2)
    return _smallest(lambda n: anova_power(n, d, variance, n_systems=m, alpha=alpha) >= power)


def topic_set_sizes(scores: Any, differences: Any, *, alpha: float = 0.05, power: float = 0.8,
                    n_systems: int | None = None) -> list[TopicSetSize]:
    r"""A power table from pilot scores: topics needed per difference, by each design.

    The variance is :func:`pilot_variance` of ``scores`` (:math:`\hat\sigma^2`); the
    t-test design uses :math:`2\hat\sigma^2` (a paired difference), ANOVA
    :math:`\hat\sigma^2` over ``n_systems`` (default: the pilot's m), and the CI design a
    width equal to the difference on :math:`2\hat\sigma^2`.

    Parameters
    ----------
    scores : array-like, shape (n topics, m systems)
    differences : sequence of float
    alpha, power : float
    n_systems : int, optional

    Returns
    -------
    list of TopicSetSize

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> pilot = rng.normal([0.3, 0.32, 0.35], 0.1, size=(50, 3))
    >>> [(row.difference, row.t) for row in topic_set_sizes(pilot, [0.05, 0.1])]
    [(0.05, 54), (0.1, 15)]
    """
    variance = pilot_variance(scores)
    m = np.asarray(scores).shape[1] if n_systems is None else n_systems
    rows = []
    for d in np.atleast_1d(np.asarray(differences, dtype=np.float64)):
        d = float(d)
        rows.append(TopicSetSize(
            difference=d,
            t=topic_set_size(2 * variance, design="t", difference=d, alpha=alpha, power=power),
            anova=topic_set_size(variance, design="anova", difference=d, alpha=alpha,
                                 power=power, n_systems=m),
            ci=topic_set_size(2 * variance, design="ci", width=d, alpha=alpha)))
    return rows
