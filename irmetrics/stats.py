"""Statistics on aligned per-query scores: paired tests, CIs, effect sizes, corrections.

This module knows nothing about retrieval. Arrays go in, numbers come out:

* :func:`paired_test` - paired t, randomization (sign flip), bootstrap, Wilcoxon and sign
  tests of ``a - b``, with a confidence interval of the mean difference, Cohen's
  :math:`d_z` and win/tie/loss counts;
* :func:`adjust_pvalues` - family-wise and false-discovery-rate corrections;
* :func:`tukey_hsd` - randomised Tukey HSD over ``m`` systems blocked on topics;
* :func:`confidence_interval` - the mean of one system with a t or BCa interval.

Every function is vectorised over a trailing "columns" axis (measures, or system pairs
stacked by the caller): input of shape ``(n,)`` gives scalar (0-d array) fields, input of
shape ``(n, k)`` gives fields of shape ``(k,)``; the columns are independent tests that
share the random resamples.

Randomness comes from ``numpy.random.default_rng(seed)`` and is drawn in blocks whose size
depends only on the data shape, never on the thread count, so the same inputs and seed give
bit-identical results on any machine set-up. Resampled statistics are compared with the
observed one with a tolerance of ``100 * eps`` (scipy.stats.permutation_test's factor)
times the scale at which their sums round: ``sum |d_i|`` for sign flips, the observed t for
the studentised bootstrap, the difference plus the mean absolute score for Tukey HSD. So
rounding (in BLAS sums, or of a sum that nearly cancels) cannot decide a tie. Bootstrap
means, which feed the intervals directly, are exact sums of fixed-point parts.

The package itself needs only numpy and scipy (scipy is imported lazily).
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from irmetrics._validation import check_choice, check_int, check_positive_int, parameter_error
from irmetrics.exceptions import IrMetricsWarning, ShapeError

__all__ = [
    "TESTS",
    "CORRECTIONS",
    "ALTERNATIVES",
    "BOOTSTRAP_CIS",
    "CI_METHODS",
    "PairedTest",
    "TukeyHSD",
    "ConfidenceInterval",
    "UnreliableTestWarning",
    "paired_test",
    "adjust_pvalues",
    "tukey_hsd",
    "confidence_interval",
]

#: A spread of differences up to this many ulps of the inputs' magnitude is their rounding.
_ROUNDING_SPREAD = 4

TESTS = ("t", "randomization", "bootstrap", "wilcoxon", "sign")
CORRECTIONS = ("none", "bonferroni", "holm", "holm-sidak", "hommel", "fdr_bh", "fdr_by")
ALTERNATIVES = ("two-sided", "less", "greater")
BOOTSTRAP_CIS = ("bca", "percentile")
CI_METHODS = ("t", "bootstrap")

#: Relative tolerance for "resampled statistic at least as extreme as the observed one":
#: the same ``100 * eps`` as scipy.stats.permutation_test, so that two sums of the same
#: numbers in a different order still tie.
_REL_TOL = 100 * np.finfo(np.float64).eps

#: Resamples are drawn in blocks of about this many float64 elements (16 MiB). The block
#: size depends on the data shape only, which keeps results independent of thread count.
_BLOCK_ELEMENTS = 1 << 21

#: Randomization test: enumerate all 2**n sign flips up to this n unless told otherwise,
#: and never beyond _MAX_EXACT_N (the meet-in-the-middle tables grow as 2**(n/2)).
_AUTO_EXACT_N = 20
_MAX_EXACT_N = 30


class UnreliableTestWarning(IrMetricsWarning):
    """The sign and Wilcoxon tests are less reliable than t, randomization or bootstrap.

    On IR evaluation data they disagree with the other tests more often and lose power
    (Smucker, Allan & Carterette, CIKM 2007; Urbano, Lima & Hanjalic, SIGIR 2019). The
    warning is raised every time one of them is asked for; silence it with
    ``warnings.simplefilter("ignore", UnreliableTestWarning)``.
    """


@dataclass(frozen=True, eq=False)
class PairedTest:
    """Result of :func:`paired_test`.

    Array fields have shape ``()`` for 1-D input and ``(k,)`` for ``(n, k)`` input.

    Attributes
    ----------
    test, alternative : str
        As requested.
    n : int
        Number of pairs (rows).
    statistic : ndarray
        t: Student's t; randomization and bootstrap: ``mean(d)``; wilcoxon: scipy's
        statistic (``min(R+, R-)`` two-sided, ``R+`` one-sided); sign: number of wins.
    p_value : ndarray
    mean_diff : ndarray
        ``mean(a - b)``.
    ci_low, ci_high : ndarray
        Confidence interval of the mean difference at ``level`` (one-sided alternatives
        give one-sided intervals with an infinite end).
    effect_size : ndarray
        Cohen's :math:`d_z = \\bar d / s_d` (``ddof=1``).
    wins, ties, losses : ndarray of int
        Counts of ``a > b``, ``a == b`` and ``a < b``.
    ci_method : str
        ``"t"``, ``"bca"`` or ``"percentile"``.
    n_resamples : int
        Resamples drawn; ``2**n`` when the randomization test enumerated every sign flip;
        0 for tests that do not resample.
    exact : bool
        True when the p-value comes from the complete null distribution (enumerated
        randomization, the binomial sign test, Wilcoxon where scipy used its exact or
        enumerated distribution in every column).
    """

    test: str
    alternative: str
    n: int
    statistic: np.ndarray
    p_value: np.ndarray
    mean_diff: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    effect_size: np.ndarray
    wins: np.ndarray
    ties: np.ndarray
    losses: np.ndarray
    ci_method: str
    n_resamples: int
    exact: bool
    level: float = 0.95


@dataclass(frozen=True, eq=False)
class TukeyHSD:
    """Result of :func:`tukey_hsd`.

    Attributes
    ----------
    means : ndarray, shape (m,) or (m, k)
        Mean score of each system.
    statistic : ndarray, shape (m, m) or (m, m, k)
        ``means[i] - means[j]`` (row minus column).
    p_values : ndarray, shape (m, m) or (m, m, k)
        Family-wise adjusted p-values; symmetric, 1 on the diagonal.
    n_resamples : int
    """

    means: np.ndarray
    statistic: np.ndarray
    p_values: np.ndarray
    n_resamples: int


@dataclass(frozen=True, eq=False)
class ConfidenceInterval:
    """Result of :func:`confidence_interval`.

    Attributes
    ----------
    mean, low, high : ndarray
        Shape ``()`` for 1-D input, ``(k,)`` for ``(n, k)`` input.
    level : float
    method : str
        ``"t"`` or ``"bootstrap"``, as requested.
    ci_method : str
        The interval actually computed: ``"t"``, ``"bca"`` or ``"percentile"``.
    n : int
    n_resamples : int
        0 for ``"t"``.
    """

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    method: str
    ci_method: str = "t"
    n: int = 0
    n_resamples: int = 0


# --------------------------------------------------------------------------- validation


def _as_columns(name: str, values: Any) -> tuple[np.ndarray, bool]:
    """``values`` as a finite float64 matrix (n, k) with n >= 1; also whether it was 1-D."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error(name, "an array of real numbers", values) from None
    if array.ndim not in (1, 2):
        raise ShapeError(f"`{name}` must be 1-D (n,) or 2-D (n, k); got shape {array.shape}.")
    if array.shape[0] < 1:
        raise ShapeError(f"`{name}` must have at least one row; got shape {array.shape}.")
    one_d = array.ndim == 1
    matrix = array[:, None] if one_d else array
    _check_finite(name, matrix)
    return matrix, one_d


def _check_finite(name: str, matrix: np.ndarray) -> None:
    bad = ~np.isfinite(matrix)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise parameter_error(
            name, f"finite everywhere (row {row}, column {column} is not)", float(matrix[row, column]))


def _check_level(level: Any) -> float:
    ok = isinstance(level, (numbers.Real, np.floating)) and not isinstance(level, (bool, np.bool_))
    if not ok or not 0.0 < float(level) < 1.0:
        raise parameter_error("level", "a number strictly between 0 and 1", level)
    return float(level)


def _make_rng(seed: Any) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None:
        check_int("seed", seed, min=0)
    return np.random.default_rng(seed)


def _block_rows(row_elements: int, total: int) -> int:
    """Resamples per block: about _BLOCK_ELEMENTS elements, a function of the shape only."""
    return max(1, min(total, _BLOCK_ELEMENTS // max(1, row_elements)))


def _shaped(values: np.ndarray, one_d: bool) -> np.ndarray:
    """Column results (k,) back to the caller's shape: () for 1-D input."""
    return values.reshape(()) if one_d else values


# --------------------------------------------------------------------------- shared pieces


def _mean_var(x: np.ndarray, scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Column means and sample variances (ddof=1; NaN when n = 1).

    A constant column gets its value as the mean and variance 0 exactly: summing n copies
    of 0.1 does not give n * 0.1, and a variance of 1e-34 would turn "no spread" into a
    huge but finite t statistic instead of the defined infinity. ``scale`` (per column)
    is the magnitude of the values ``x`` was computed from (``max(|a|, |b|)`` for
    ``x = a - b``): a spread within a few ulps of it is rounding of the inputs (0.1234
    and 0.0609 read from text differ by 0.0625 only up to one ulp), so it counts as none.
    """
    n = x.shape[0]
    constant = np.all(x == x[:1], axis=0)
    mean = np.where(constant, x[0], x.mean(axis=0))
    if n < 2:
        return mean, np.full(x.shape[1], np.nan)
    var = x.var(axis=0, ddof=1)
    if scale is not None:
        constant |= np.sqrt(var) <= _ROUNDING_SPREAD * np.finfo(np.float64).eps * scale
    return mean, np.where(constant, 0.0, var)


def _tail_probabilities(level: float, alternative: str) -> tuple[float, float]:
    """Lower and upper quantile probabilities of an interval at ``level``.

    A one-sided alternative puts the whole ``1 - level`` in one tail; its other end is
    replaced by an infinity in :func:`_one_sided`.
    """
    alpha = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    return alpha, 1.0 - alpha


def _one_sided(low: np.ndarray, high: np.ndarray, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    if alternative == "less":
        low = np.full_like(low, -np.inf)
    elif alternative == "greater":
        high = np.full_like(high, np.inf)
    return low, high


def _t_interval(mean, sd, n, level, alternative):
    """Student-t interval ``mean + t_{n-1}(p) * sd / sqrt(n)`` (scipy's ttest CI); NaN if n = 1."""
    from scipy import special

    if n < 2:
        nan = np.full_like(mean, np.nan)
        return nan, nan.copy()
    p_low, p_high = _tail_probabilities(level, alternative)
    se = sd / math.sqrt(n)
    low = special.stdtrit(n - 1, p_low) * se + mean
    high = special.stdtrit(n - 1, p_high) * se + mean
    return _one_sided(low, high, alternative)


def _at_least_as_extreme(resampled: np.ndarray, observed: np.ndarray, alternative: str,
                         gamma: np.ndarray) -> np.ndarray:
    """Count, per column, resampled statistics at least as extreme as ``observed``.

    ``resampled`` is (B, k), ``observed`` and the tie tolerance ``gamma`` are (k,); values
    within ``gamma`` of the observed one count as extreme. NaN never counts.
    """
    if alternative == "greater":
        hits = resampled >= observed - gamma
    elif alternative == "less":
        hits = resampled <= observed + gamma
    else:
        hits = np.abs(resampled) >= np.abs(observed) - gamma
    return np.count_nonzero(hits, axis=0)


# --------------------------------------------------------------------------- paired tests


def paired_test(
    a: Any,
    b: Any,
    *,
    test: str = "t",
    n_resamples: int = 10_000,
    seed: Any = 0,
    alternative: str = "two-sided",
    level: float = 0.95,
    exact: bool | None = None,
    bootstrap_ci: str = "bca",
) -> PairedTest:
    r"""Paired significance test of ``a`` against ``b``, with CI and effect size.

    With :math:`d_i = a_i - b_i` (scipy's ``ttest_rel`` sign: positive means ``a`` is
    better), :math:`\bar d` the mean and :math:`s_d` the sample standard deviation:

    * ``"t"``: :math:`t = \bar d / (s_d / \sqrt n)` on :math:`n - 1` degrees of freedom;
      statistic and p-value equal :func:`scipy.stats.ttest_rel`.
    * ``"randomization"``: sign-flip test of :math:`\bar d`. Under H0 each :math:`d_i` is
      equally likely to carry either sign; the p-value is the share of the :math:`2^n`
      flips :math:`s \in \{\pm1\}^n` with :math:`\sum_i s_i d_i` at least as extreme as
      :math:`\sum_i d_i` (two-sided: in absolute value). All :math:`2^n` flips are
      enumerated when ``n <= 20`` (``exact=None``) or ``exact=True`` (``n <= 30``), equal to
      ``scipy.stats.permutation_test(..., permutation_type="samples", n_resamples=inf)``;
      otherwise ``B = n_resamples`` random flips give :math:`p = (c + 1) / (B + 1)`.
    * ``"bootstrap"``: studentised shift bootstrap (Efron & Tibshirani 1993, alg. 16.2).
      Resample the centred differences :math:`\tilde d = d - \bar d` (which satisfy H0)
      with replacement, compute :math:`t^* = \bar{\tilde d}^* / (s^*_{\tilde d} / \sqrt n)`
      per resample and :math:`p = (\#\{t^* \text{ at least as extreme as } t\} + 1)/(B + 1)`
      with :math:`t = \bar d / (s_d / \sqrt n)`. Resamples with :math:`s^* = 0` give
      :math:`t^* = \pm\infty`, or :math:`t^* = 0` when also :math:`\bar{\tilde d}^* = 0`.
      The reported statistic is :math:`\bar d`.
      The same resamples of :math:`\bar d^*` give the CI: BCa (``bootstrap_ci="bca"``) or
      percentile, as :func:`scipy.stats.bootstrap`.
    * ``"wilcoxon"``: signed-rank test, equal to ``scipy.stats.wilcoxon(d, alternative=...)``
      with its defaults (zeros dropped, ``method="auto"``).
    * ``"sign"``: exact binomial test of wins against losses, ties dropped, equal to
      ``scipy.stats.binomtest(wins, wins + losses, 0.5, alternative=...)``.

    The sign and Wilcoxon tests emit :class:`UnreliableTestWarning`.

    Parameters
    ----------
    a, b : array-like, shape (n,) or (n, k)
        Scores aligned by row (queries); ``k`` independent columns (measures, or system
        pairs). Must be finite.
    test : {"t", "randomization", "bootstrap", "wilcoxon", "sign"}
    n_resamples : int
        Random resamples for the randomization (when not enumerated) and bootstrap tests.
    seed : int, numpy.random.Generator or None
        Seed of ``numpy.random.default_rng``. The same seed gives the same result.
    alternative : {"two-sided", "less", "greater"}
        "greater": the mean of ``a - b`` is greater than 0.
    level : float
        Confidence level of the interval, in (0, 1).
    exact : bool or None
        Randomization test only: True enumerates all :math:`2^n` flips (at most n = 30),
        False always samples, None enumerates when n <= 20.
    bootstrap_ci : {"bca", "percentile"}
        Interval of the bootstrap test.

    Returns
    -------
    PairedTest

    Notes
    -----
    Confidence intervals: t-based (:math:`\bar d \pm t_{n-1} s_d/\sqrt n`, as
    ``ttest_rel(...).confidence_interval(level)``) for every test but ``"bootstrap"``;
    one-sided alternatives give one-sided intervals.

    Degenerate data (all defined, none raises):

    * all :math:`d_i = 0` (per column): p = 1 for every test and alternative (no evidence
      either way); effect size NaN; CI ``[0, 0]``; statistic NaN for t and wilcoxon, 0 for
      the others.
    * constant non-zero :math:`d` (:math:`s_d = 0`, n >= 2; a spread within 4 ulps of
      :math:`\max(|a|, |b|)` is rounding of the inputs and counts as 0, where scipy
      reports a huge finite t): t is :math:`\pm\infty` with
      p = 0 (or 1 for the opposite one-sided alternative); effect size :math:`\pm\infty`;
      every CI is ``[mean, mean]``; the bootstrap p-value is :math:`1/(B+1)` for the
      alternatives the data favour.
    * n = 1: t and bootstrap p, statistic and CI are NaN (no variance estimate) unless
      :math:`d = 0`; randomization, wilcoxon and sign are defined (e.g. two-sided p = 1);
      the effect size is NaN.

    Examples
    --------
    >>> a = [0.50, 0.40, 0.80, 0.30, 0.90, 0.60]
    >>> b = [0.40, 0.40, 0.60, 0.20, 0.70, 0.65]
    >>> r = paired_test(a, b, test="t")
    >>> round(float(r.statistic), 4), round(float(r.p_value), 4), int(r.wins), int(r.ties)
    (2.2, 0.0791, 4, 1)
    >>> r = paired_test(a, b, test="randomization")   # all 2**6 sign flips
    >>> float(r.p_value), r.n_resamples, r.exact
    (0.125, 64, True)
    """
    A, one_d = _as_columns("a", a)
    B, b_one_d = _as_columns("b", b)
    if A.shape != B.shape or one_d != b_one_d:
        shape_a, shape_b = (A.shape[:1] if one_d else A.shape), (B.shape[:1] if b_one_d else B.shape)
        raise ShapeError(f"`b` must have the shape of `a` {shape_a}; got shape {shape_b}.")
    test = check_choice("test", test, TESTS)
    alternative = check_choice("alternative", alternative, ALTERNATIVES)
    level = _check_level(level)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    bootstrap_ci = check_choice("bootstrap_ci", bootstrap_ci, BOOTSTRAP_CIS)
    if exact is not None and not isinstance(exact, (bool, np.bool_)):
        raise parameter_error("exact", "True, False or None", exact)
    if exact is not None and test != "randomization":
        raise parameter_error("exact", f"None unless test='randomization' (test={test!r})", exact)
    n = A.shape[0]
    if exact and n > _MAX_EXACT_N:
        raise parameter_error(
            "exact", f"False or None when n > {_MAX_EXACT_N} (2**n sign flips; here n = {n})", exact)
    rng = _make_rng(seed)

    with np.errstate(over="ignore"):  # reported just below, as a parameter error
        d = A - B
    _check_finite("a - b", d)
    mean, var = _mean_var(d, scale=np.maximum(np.abs(A), np.abs(B)).max(axis=0))
    sd = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        effect_size = mean / sd
    all_zero = ~np.any(d != 0, axis=0)
    wins = np.count_nonzero(d > 0, axis=0)
    losses = np.count_nonzero(d < 0, axis=0)

    ci_low, ci_high = _t_interval(mean, sd, n, level, alternative)
    ci_method, used_resamples, is_exact = "t", 0, False
    if test == "t":
        statistic, p_value = _paired_t(mean, var, n, alternative)
    elif test == "randomization":
        statistic = mean.copy()
        enumerate_all = n <= _AUTO_EXACT_N if exact is None else bool(exact)
        if enumerate_all:
            p_value = _sign_flip_exact_p(d, alternative)
            used_resamples, is_exact = 2**n, True
        else:
            p_value = _sign_flip_monte_carlo_p(d, alternative, n_resamples, rng)
            used_resamples = n_resamples
    elif test == "bootstrap":
        statistic = mean.copy()
        p_value, boot_means = _bootstrap_test(d, mean, sd, alternative, n_resamples, rng)
        ci_low, ci_high = _bootstrap_interval(d, mean, sd, boot_means, level, alternative, bootstrap_ci)
        ci_method, used_resamples = bootstrap_ci, n_resamples
    else:
        warnings.warn(
            f"the {test} test is less reliable than the t, randomization or bootstrap tests "
            "on IR data (Smucker et al. 2007; Urbano et al. 2019).",
            UnreliableTestWarning, stacklevel=2)
        if test == "wilcoxon":
            statistic, p_value, is_exact = _wilcoxon(d, all_zero, alternative)
        else:
            statistic, p_value = _sign_test(wins, losses, alternative)
            is_exact = True

    # No difference at all is no evidence against H0, whatever the test or alternative.
    p_value = np.where(all_zero, 1.0, p_value)
    if test in ("t", "wilcoxon"):
        statistic = np.where(all_zero, np.nan, statistic)

    shaped = lambda values: _shaped(np.asarray(values), one_d)  # noqa: E731
    return PairedTest(
        test=test, alternative=alternative, n=n,
        statistic=shaped(statistic.astype(np.float64)), p_value=shaped(p_value),
        mean_diff=shaped(mean), ci_low=shaped(ci_low), ci_high=shaped(ci_high),
        effect_size=shaped(effect_size), wins=shaped(wins), ties=shaped(n - wins - losses),
        losses=shaped(losses), ci_method=ci_method, n_resamples=used_resamples,
        exact=is_exact, level=level)


def _paired_t(mean, var, n, alternative):
    """Student's t of the mean difference and its p-value (scipy.stats.ttest_rel)."""
    from scipy import stats

    if n < 2:
        nan = np.full_like(mean, np.nan)
        return nan, nan.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(var / n)
    dist = stats.t(n - 1)
    if alternative == "less":
        p = dist.cdf(t)
    elif alternative == "greater":
        p = dist.sf(t)
    else:
        p = 2.0 * dist.sf(np.abs(t))
    return t, np.asarray(p, dtype=np.float64)


def _sign_flip_exact_p(d: np.ndarray, alternative: str) -> np.ndarray:
    """Exact sign-flip p-value over all 2**n flips, by meet in the middle.

    Split the rows in halves H1, H2; every flip sum is ``s1 + s2`` with ``s1`` one of the
    2**|H1| flip sums of H1 and ``s2`` one of H2's. For each ``s1`` the number of ``s2``
    with ``s1 + s2 >= c`` is a binary search in the sorted H2 sums, so the cost is
    O(2**(n/2) log) per column instead of O(2**n n).
    """
    n, k = d.shape
    half = n // 2
    first = _all_flip_sums(d[:half])      # (2**half, k)
    second = np.sort(_all_flip_sums(d[half:]), axis=0)  # (2**(n-half), k)
    observed = d.sum(axis=0)
    gamma = _flip_tolerance(d)
    counts = np.empty(k, dtype=np.int64)
    n_second = second.shape[0]
    for j in range(k):  # columns (measures), not rows: each is one vectorised search
        lower, upper, s1 = second[:, j], observed[j], first[:, j]

        def at_least(c):  # flips with s1 + s2 >= c
            return n_second * s1.size - np.searchsorted(lower, c - s1, side="left").sum()

        def at_most(c):  # flips with s1 + s2 <= c
            return np.searchsorted(lower, c - s1, side="right").sum()

        if alternative == "greater":
            counts[j] = at_least(upper - gamma[j])
        elif alternative == "less":
            counts[j] = at_most(upper + gamma[j])
        else:
            threshold = abs(upper) - gamma[j]
            counts[j] = (first.shape[0] * n_second if threshold <= 0
                         else at_least(threshold) + at_most(-threshold))
    return counts / float(2**n)


def _flip_tolerance(d: np.ndarray) -> np.ndarray:
    """Tie tolerance of sign-flip sums: ``100 eps * sum |d_i|``.

    The rounding of a sum of ``±d_i`` scales with the terms, not with the (possibly
    cancelling) result, so the tolerance does too; scipy's ``100 eps * |observed|`` can
    miss the identity flip itself when the sum nearly cancels (e.g. 0.1 + 0.2 - 0.3).
    """
    return _REL_TOL * np.abs(d).sum(axis=0)


def _all_flip_sums(d: np.ndarray) -> np.ndarray:
    """Sums ``s @ d`` over all sign vectors ``s`` in {+1, -1}^h, shape (2**h, k)."""
    h = d.shape[0]
    codes = np.arange(2**h, dtype=np.int64)[:, None]
    signs = 1.0 - 2.0 * ((codes >> np.arange(h)) & 1)
    return signs @ d if h else np.zeros((1, d.shape[1]))


def _sign_flip_monte_carlo_p(d, alternative, n_resamples, rng):
    """Monte Carlo sign-flip p-value ``(c + 1) / (B + 1)``; one ±1 block serves all columns."""
    n, k = d.shape
    observed = d.sum(axis=0)
    gamma = _flip_tolerance(d)
    counts = np.zeros(k, dtype=np.int64)
    rows = _block_rows(n, n_resamples)
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        flips = rng.integers(0, 2, size=(size, n), dtype=np.int8)
        signs = 1.0 - 2.0 * flips
        counts += _at_least_as_extreme(signs @ d, observed, alternative, gamma)
    return (counts + 1.0) / (n_resamples + 1.0)


def _bootstrap_sums(centred, n_resamples, rng, *, squares):
    """Bootstrap resample sums of ``centred`` (n, k): ``W @ centred`` and ``W @ centred**2``.

    ``W`` holds the multinomial counts of one resample per row, built from
    ``rng.integers(0, n, (rows, n))`` (the index draws of scipy.stats.bootstrap) so a matrix
    product replaces fancy indexing. ``W @ centred`` feeds the confidence interval, so it is
    computed exactly on fixed-point parts (:func:`_fixed_point_parts`): a threaded BLAS
    sums in a thread-dependent order, and exact sums have no order. The sums of squares
    only feed p-value counts, which the comparison tolerance protects. Yields (sums, sums
    of squares or None) per block.
    """
    n = centred.shape[0]
    parts = _fixed_point_parts(centred)
    centred_sq = centred * centred if squares else None
    rows = _block_rows(n, n_resamples)
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        picks = rng.integers(0, n, size=(size, n))
        picks += (np.arange(size) * n)[:, None]
        weights = np.bincount(picks.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)
        sums = sum((weights @ part) * scale for part, scale in parts)
        yield sums, (weights @ centred_sq if squares else None)


def _fixed_point_parts(x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split ``x`` (n, k) into integer-valued parts with ``x ~= sum(part * scale)``.

    Each part holds integers below ``2**bits`` with ``n * 2**bits <= 2**52``, so for any
    count matrix ``W`` with rows summing to n, ``W @ part`` is exact in float64 whatever
    the summation order. Two or three parts keep at least 56 bits below each column's
    largest magnitude, finer than float64 rounding of that magnitude.
    """
    n = x.shape[0]
    bits = 52 - max(1, math.ceil(math.log2(n)))
    _, exponent = np.frexp(np.max(np.abs(x), axis=0))     # 2**exponent > max |x| (or 0)
    rest = np.ldexp(x, -exponent)                          # |rest| < 1, exact (power of 2)
    parts = []
    for j in range(1, math.ceil(56 / bits) + 1):
        rest = np.ldexp(rest, bits)
        whole = np.trunc(rest)
        rest -= whole
        parts.append((whole, np.ldexp(1.0, exponent - j * bits)))
    return parts


def _bootstrap_test(d, mean, sd, alternative, n_resamples, rng):
    """Studentised shift-bootstrap p-value; also returns the (B, k) bootstrap means of d."""
    n, k = d.shape
    centred = d - mean
    boot_means = np.empty((n_resamples, k))
    counts = np.zeros(k, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_observed = mean / (sd / math.sqrt(n))
        t_gamma = np.where(np.isfinite(t_observed), _REL_TOL * np.abs(t_observed), 0.0)
        start = 0
        for sums, sums_sq in _bootstrap_sums(centred, n_resamples, rng, squares=True):
            size = sums.shape[0]
            boot_means[start:start + size] = mean + sums / n
            start += size
            if n < 2:
                continue
            variance = np.maximum(sums_sq - sums * sums / n, 0.0) / (n - 1)
            # 0/0 (a resample of centred zeros) is a mean exactly at H0: t* = 0.
            t_null = np.where(sums == 0, 0.0, (sums / n) / np.sqrt(variance / n))
            counts += _at_least_as_extreme(t_null, t_observed, alternative, t_gamma)
    p_value = (counts + 1.0) / (n_resamples + 1.0)
    if n < 2:
        p_value = np.full(k, np.nan)
    return p_value, boot_means


def _bootstrap_interval(d, mean, sd, boot_means, level, alternative, kind):
    """Percentile or BCa interval of the mean from its bootstrap distribution.

    BCa (Efron & Tibshirani 1993, eq. 14.10-14.15), as scipy.stats.bootstrap computes it:
    :math:`z_0 = \\Phi^{-1}((\\#\\{\\theta^* < \\hat\\theta\\} + \\#\\{\\theta^* \\le
    \\hat\\theta\\}) / 2B)`; the jackknife acceleration of the mean reduces to
    :math:`a = \\sum u_i^3 / (6 (\\sum u_i^2)^{3/2})` with :math:`u_i = d_i - \\bar d`; the
    ends are the quantiles (linear interpolation) at
    :math:`\\Phi(z_0 + (z_0 + z_\\alpha) / (1 - a (z_0 + z_\\alpha)))`.
    Columns with :math:`s_d = 0` get ``[mean, mean]``; n = 1 gives NaN.
    """
    from scipy import special

    n, k = d.shape
    p_low, p_high = _tail_probabilities(level, alternative)
    probabilities = np.tile(np.array([[p_low], [p_high]]), (1, k))
    if kind == "bca":
        # Resample means equal to the mean in exact arithmetic differ from it by rounding
        # of the order of eps * mean |d - mean|; count them as ties.
        gamma = _REL_TOL * (np.abs(mean) + np.abs(d - mean).mean(axis=0))
        below = np.count_nonzero(boot_means < mean - gamma, axis=0)
        at_or_below = np.count_nonzero(boot_means <= mean + gamma, axis=0)
        z0 = special.ndtri((below + at_or_below) / (2.0 * boot_means.shape[0]))
        u = d - mean
        with np.errstate(divide="ignore", invalid="ignore"):
            accel = (u**3).sum(axis=0) / (6.0 * (u**2).sum(axis=0) ** 1.5)
            z = special.ndtri(probabilities) + z0
            probabilities = special.ndtr(z0 + z / (1.0 - accel * z))
    low, high = _column_quantiles(boot_means, probabilities)
    constant = sd == 0
    low, high = np.where(constant, mean, low), np.where(constant, mean, high)
    if n < 2:
        low, high = np.full(k, np.nan), np.full(k, np.nan)
    return _one_sided(low, high, alternative)


def _column_quantiles(samples: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """Quantiles of each column of ``samples`` (B, k) at per-column ``probabilities`` (q, k).

    Linear interpolation between order statistics (Hyndman & Fan type 7, numpy's and
    scipy.stats.quantile's default); NaN probabilities give NaN.
    """
    ordered = np.sort(samples, axis=0)
    last = ordered.shape[0] - 1
    valid = np.isfinite(probabilities)
    position = np.where(valid, probabilities, 0.0) * last
    below = np.clip(np.floor(position).astype(np.int64), 0, last)
    above = np.minimum(below + 1, last)
    fraction = position - below
    lo = np.take_along_axis(ordered, below, axis=0)
    hi = np.take_along_axis(ordered, above, axis=0)
    values = lo + (hi - lo) * fraction
    return np.where(valid, values, np.nan)


def _wilcoxon(d, all_zero, alternative):
    """scipy.stats.wilcoxon per column, vectorised in two groups.

    scipy's ``method="auto"`` chooses exact, enumerated or normal p-values from the whole
    array at once (any tie or zero anywhere changes the choice), so the columns are split
    into those with and without ties/zeros; inside each group scipy's choice equals its
    choice for each column alone. For tied or zero-containing columns with n <= 13 scipy
    enumerates all 2**n sign flips of the signed ranks; that p-value is computed here by
    :func:`_sign_flip_exact_p` on the signed ranks (sums of half-integers are exact, so the
    counts are identical), which is orders of magnitude faster.
    """
    from scipy import stats

    n, k = d.shape
    statistic = np.full(k, np.nan)
    p_value = np.ones(k)
    magnitudes = np.sort(np.abs(d), axis=0)
    has_ties_or_zeros = (magnitudes[0] == 0) | np.any(magnitudes[1:] == magnitudes[:-1], axis=0)
    exact_everywhere = True
    for group in (has_ties_or_zeros & ~all_zero, ~has_ties_or_zeros):
        if not group.any():
            continue
        tied = bool(has_ties_or_zeros[group][0])
        sub = d[:, group]
        if tied and n <= 13:
            result = stats.wilcoxon(sub, alternative=alternative, method="asymptotic", axis=0)
            ranks = stats.rankdata(np.where(sub == 0, np.nan, np.abs(sub)), axis=0, nan_policy="omit")
            p_value[group] = _sign_flip_exact_p(np.where(sub == 0, 0.0, np.sign(sub) * ranks), alternative)
        else:
            result = stats.wilcoxon(sub, alternative=alternative, axis=0)
            p_value[group] = result.pvalue
        statistic[group] = result.statistic
        exact_everywhere &= tied and n <= 13 or not tied and n <= 50
    return statistic, p_value, exact_everywhere


def _sign_test(wins, losses, alternative):
    """Exact binomial test of ``wins`` out of ``wins + losses`` at 1/2 (scipy.stats.binomtest).

    Two-sided: the probability of outcomes no more likely than the observed one, which for
    p = 1/2 is both tails beyond ``min(w, m - w)``; 1 when ``w = m / 2`` or ``m = 0``.
    """
    from scipy import stats

    trials = wins + losses
    if alternative == "less":
        p = stats.binom.cdf(wins, trials, 0.5)
    elif alternative == "greater":
        p = stats.binom.sf(wins - 1, trials, 0.5)
    else:
        near = np.minimum(wins, trials - wins)
        p = np.minimum(1.0, stats.binom.cdf(near, trials, 0.5) + stats.binom.sf(trials - near - 1, trials, 0.5))
        p = np.where(2 * wins == trials, 1.0, p)
    p = np.where(trials == 0, 1.0, p)
    return wins.astype(np.float64), np.asarray(p, dtype=np.float64)


# --------------------------------------------------------------------------- corrections


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


# --------------------------------------------------------------------------- Tukey HSD


def tukey_hsd(scores: Any, *, n_resamples: int = 10_000, seed: Any = 0) -> TukeyHSD:
    r"""Randomised Tukey HSD over systems, blocked on topics (Carterette, TOIS 2012).

    ``scores[i, q]`` is system ``i`` on query ``q``; :math:`\bar x_i` the system means.
    Each of ``B = n_resamples`` resamples permutes the ``m`` system labels independently
    within every query (uniformly, all ``m!`` orders equally likely) and records the range
    :math:`R^* = \max_i \bar x^*_i - \min_i \bar x^*_i`. The adjusted p-value of pair
    ``(i, j)`` is

    .. math:: p_{ij} = \frac{\#\{R^* \ge |\bar x_i - \bar x_j| - \gamma\} + 1}{B + 1}

    (:math:`\gamma = 100\,\epsilon\,(|\bar x_i - \bar x_j| + \overline{|x|})`, a rounding
    tolerance), which controls the family-wise error rate over all pairs (a difference is compared with
    the null distribution of the largest difference).

    Parameters
    ----------
    scores : array-like, shape (m, n) or (m, n, k)
        ``m >= 2`` systems, ``n >= 1`` queries, ``k`` measures. Finite. All ``k`` columns
        share the same permutations.
    n_resamples : int
    seed : int, numpy.random.Generator or None

    Returns
    -------
    TukeyHSD

    Notes
    -----
    Cost is O(B n m k); m = 10, n = 7000, k = 5, B = 10,000 takes about 13 s of one core. The
    permutations are drawn in blocks of resamples whose size depends on ``n, m, k`` only:
    per block one ``rng.integers(0, m!, size=(rows, n))`` call (m <= 20) gives a rank per
    query, decoded by Fisher-Yates (rank digits in the mixed radix ``m, m-1, ..., 2`` are
    the swap positions). With ``m = 2`` this is the paired randomization (sign-flip) test
    of the two systems.

    Examples
    --------
    >>> scores = [[0.2, 0.4, 0.6, 0.3, 0.5],
    ...           [0.3, 0.5, 0.7, 0.4, 0.6],
    ...           [0.2, 0.4, 0.6, 0.3, 0.55]]
    >>> res = tukey_hsd(scores, n_resamples=999, seed=1)
    >>> res.means.round(2)
    array([0.4 , 0.5 , 0.41])
    >>> res.statistic[1, 0].round(2), res.p_values.shape, float(res.p_values[2, 2])
    (np.float64(0.1), (3, 3), 1.0)
    """
    try:
        array = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error("scores", "an array of real numbers", scores) from None
    if array.ndim not in (2, 3):
        raise ShapeError(f"`scores` must be 2-D (m, n) or 3-D (m, n, k); got shape {array.shape}.")
    if array.shape[0] < 2 or array.shape[1] < 1:
        raise ShapeError(f"`scores` must have at least 2 systems and 1 query; got shape {array.shape}.")
    two_d = array.ndim == 2
    cube = array[:, :, None] if two_d else array
    _check_finite("scores", cube.reshape(cube.shape[0], -1))
    n_resamples = check_positive_int("n_resamples", n_resamples)
    rng = _make_rng(seed)

    m, n, k = cube.shape
    means = cube.mean(axis=1)                               # (m, k)
    statistic = means[:, None, :] - means[None, :, :]       # (m, m, k)
    ranges = _permuted_ranges(cube, n_resamples, rng)       # (B, k)
    observed = np.abs(statistic)
    # Sums of n scores round at the scale of the scores, not of their (maybe tiny) difference.
    threshold = observed - _REL_TOL * (observed + np.abs(cube).mean(axis=(0, 1)))
    ranges.sort(axis=0)
    counts = np.empty((m, m, k), dtype=np.int64)
    for j in range(k):  # columns (measures): one vectorised search each
        counts[:, :, j] = n_resamples - np.searchsorted(ranges[:, j], threshold[:, :, j], side="left")
    p_values = (counts + 1.0) / (n_resamples + 1.0)
    p_values[np.arange(m), np.arange(m)] = 1.0
    if two_d:
        means, statistic, p_values = means[:, 0], statistic[:, :, 0], p_values[:, :, 0]
    return TukeyHSD(means=means, statistic=statistic, p_values=p_values, n_resamples=n_resamples)


def _permuted_ranges(cube: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Range of the system means for each resample; labels permuted within each query.

    The block of resamples depends on ``n`` and ``m`` only, so a column's p-values do not
    change when other columns are added; columns are gathered in groups to bound memory.
    """
    m, n, k = cube.shape
    by_query = np.ascontiguousarray(cube.transpose(1, 0, 2)).reshape(n * m, k)  # row q*m + i
    row_base = (np.arange(n, dtype=np.intp) * m)[:, None]
    ranges = np.empty((n_resamples, k))
    rows = _block_rows(n * m * _TUKEY_COLUMN_GROUP, n_resamples)
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        picks = _random_permutations(rng, size * n, m).reshape(size, n, m) + row_base
        for first in range(0, k, _TUKEY_COLUMN_GROUP):
            columns = by_query[:, first:first + _TUKEY_COLUMN_GROUP]
            sums = np.take(columns, picks, axis=0).sum(axis=1)   # (size, m, group)
            ranges[start:start + size, first:first + _TUKEY_COLUMN_GROUP] = (sums.max(axis=1) - sums.min(axis=1)) / n
    return ranges


#: Columns gathered together by the Tukey resampling (memory: rows * n * m * this).
_TUKEY_COLUMN_GROUP = 8
#: Up to this many permutations (10! = 3.6M rows of int8, 36 MB) a table of all of them,
#: indexed by rank, replaces decoding each rank.
_PERMUTATION_TABLE_MAX = math.factorial(10)
#: 20! < 2**63: one int64 rank per permutation.
_MAX_RANKED_M = 20


def _random_permutations(rng: np.random.Generator, count: int, m: int) -> np.ndarray:
    """``count`` uniform random permutations of ``range(m)``, shape (count, m).

    For m <= 20 one ``rng.integers(0, m!, count)`` draw per permutation is decoded by
    :func:`_unrank` (through a table of all of them when m! <= 10!); for larger m the swap
    positions of Fisher-Yates are drawn directly, ``rng.integers(0, [m, ..., 2], (count, m-1))``.
    """
    if m > _MAX_RANKED_M:
        swaps = rng.integers(0, np.arange(m, 1, -1), size=(count, m - 1))
        return _fisher_yates(swaps, m)
    ranks = rng.integers(0, math.factorial(m), size=count, dtype=np.int64)
    if math.factorial(m) <= _PERMUTATION_TABLE_MAX:
        return np.take(_permutation_table(m), ranks, axis=0)
    return _unrank(ranks, m)


def _unrank(ranks: np.ndarray, m: int) -> np.ndarray:
    """Permutation of each rank in [0, m!): its mixed-radix digits are the Fisher-Yates swaps.

    ``rank = j_{m-1} + m (j_{m-2} + (m-1) (...))`` with ``j_i`` in [0, i]: uniform ranks give
    independent uniform swap positions, hence uniform permutations.
    """
    order, base = _identities(ranks.shape[0], m)
    rest = ranks.copy()
    for i in range(m - 1, 0, -1):
        rest, j = np.divmod(rest, i + 1)
        _swap(order, base + i, base + j)
    return order.reshape(-1, m)


def _fisher_yates(swaps: np.ndarray, m: int) -> np.ndarray:
    """Apply swap ``i <-> swaps[:, step]`` for i = m-1, ..., 1 to the identity; (count, m)."""
    order, base = _identities(swaps.shape[0], m)
    for step, i in enumerate(range(m - 1, 0, -1)):  # positions, vectorised over permutations
        _swap(order, base + i, base + swaps[:, step])
    return order.reshape(-1, m)


def _identities(count: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` identity permutations, flat, and the offset of each one."""
    order = np.tile(np.arange(m, dtype=np.int8 if m <= 127 else np.intp), count)
    return order, np.arange(count, dtype=np.intp) * m


def _swap(flat: np.ndarray, at_i: np.ndarray, at_j: np.ndarray) -> None:
    held = flat[at_j]
    flat[at_j] = flat[at_i]
    flat[at_i] = held


@functools.lru_cache(maxsize=1)
def _permutation_table(m: int) -> np.ndarray:
    """All m! permutations in rank order; built in slices to bound temporary memory."""
    total = math.factorial(m)
    table = np.empty((total, m), dtype=np.int8)
    step = 1 << 16
    for start in range(0, total, step):
        table[start:start + step] = _unrank(np.arange(start, min(total, start + step), dtype=np.int64), m)
    table.flags.writeable = False
    return table


# --------------------------------------------------------------------------- one system


def confidence_interval(
    values: Any,
    *,
    method: str = "t",
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: Any = 0,
    bootstrap_ci: str = "bca",
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
    bootstrap_ci : {"bca", "percentile"}

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
    rng = _make_rng(seed)
    n = matrix.shape[0]
    mean, var = _mean_var(matrix)
    sd = np.sqrt(var)
    if method == "t":
        low, high = _t_interval(mean, sd, n, level, "two-sided")
        ci_method, used = "t", 0
    else:
        boot_means = np.concatenate(
            [mean + sums / n for sums, _ in _bootstrap_sums(matrix - mean, n_resamples, rng, squares=False)])
        low, high = _bootstrap_interval(matrix, mean, sd, boot_means, level, "two-sided", bootstrap_ci)
        ci_method, used = bootstrap_ci, n_resamples
    return ConfidenceInterval(
        mean=_shaped(mean, one_d), low=_shaped(low, one_d), high=_shaped(high, one_d),
        level=level, method=method, ci_method=ci_method, n=n, n_resamples=used)
