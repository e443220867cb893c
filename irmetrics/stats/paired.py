"""Paired tests of ``a - b``: t, randomization (sign flip), bootstrap, Wilcoxon, sign."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from irmetrics.checks import check_choice, check_positive_int, parameter_error
from irmetrics.exceptions import ShapeError
from irmetrics.parallel import item_runs, map_ordered, resolve_threads, threads_for_work
from ._common import (
    ALTERNATIVES, BOOTSTRAP_CIS, PairedTest, TESTS, UnreliableTestWarning, _AUTO_EXACT_N,
    _MAX_EXACT_N, _REL_TOL, _as_columns, _at_least_as_extreme, _check_finite, _check_level,
    _Scratch, _check_seed, _largest_magnitude, _map_blocks, _mean_var, _resample_counts,
    _rows, _one_sided, _shaped, _t_interval, _tail_probabilities,
)


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
    threads: int | None = None,
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
        Seed of the resamples (:func:`irmetrics.parallel.block_generators`). The same seed
        gives the same result, whatever ``threads``.
    alternative : {"two-sided", "less", "greater"}
        "greater": the mean of ``a - b`` is greater than 0.
    level : float
        Confidence level of the interval, in (0, 1).
    exact : bool or None
        Randomization test only: True enumerates all :math:`2^n` flips (at most n = 30),
        False always samples, None enumerates when n <= 20.
    bootstrap_ci : {"bca", "percentile"}
        Interval of the bootstrap test.
    threads : int or None
        Threads drawing the resamples (:func:`irmetrics.parallel.resolve_threads`:
        default every core the process may use; 1 runs in the caller's thread). The
        resamples come in blocks of a size fixed by the data and ``n_resamples``, block
        ``i`` drawn from generator ``i``, so the result does not depend on it.

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
      p = 0 (or 1 for the opposite one-sided alternative), as scipy's ``ttest_rel``
      gives; effect size :math:`\pm\infty`; every CI is ``[mean, mean]``; the
      bootstrap p-value is :math:`1/(B+1)` for the alternatives the data favour. These
      p-values are kept (they are the limits of the formulas) and flagged by
      ``zero_variance``: they measure a variance of zero, not evidence, and
      :func:`irmetrics.compare` does not call such a row significant. The exact
      randomization test gives such data its honest p-value, :math:`2^{1-n}`.
    * few non-zero differences: no distribution-free test can go below
      ``min_p_value`` (:math:`2^{1-m}` two-sided); the t test can, by assuming
      normality.
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
    result = _paired_test(a, b, test=test, n_resamples=n_resamples, seed=seed,
                          alternative=alternative, level=level, exact=exact,
                          bootstrap_ci=bootstrap_ci, threads=threads)
    if test in ("wilcoxon", "sign"):
        warnings.warn(
            f"the {test} test is less reliable than the t, randomization or bootstrap tests "
            "on IR data (Smucker et al. 2007; Urbano et al. 2019).",
            UnreliableTestWarning, stacklevel=2)
    return result


def _paired_test(a, b, *, test, n_resamples, seed, alternative, level, exact, bootstrap_ci,
                 threads) -> PairedTest:
    """:func:`paired_test` without its warning (which is not thread-safe to silence)."""
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
    seed = _check_seed(seed)
    resolve_threads(threads)

    with np.errstate(over="ignore"):  # reported just below, as a parameter error
        d = A - B
    _check_finite("a - b", d)
    mean, var = _mean_var(d, scale=_largest_magnitude(A, B))
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
            p_value = _sign_flip_monte_carlo_p(d, alternative, n_resamples, seed, threads)
            used_resamples = n_resamples
    elif test == "bootstrap":
        statistic = mean.copy()
        p_value, boot_means = _bootstrap_test(d, mean, sd, alternative, n_resamples, seed,
                                              threads)
        ci_low, ci_high = _bootstrap_interval(d, mean, sd, boot_means, level, alternative,
                                              bootstrap_ci, threads)
        ci_method, used_resamples = bootstrap_ci, n_resamples
    else:
        if test == "wilcoxon":
            statistic, p_value, is_exact = _wilcoxon(d, all_zero, alternative)
        else:
            statistic, p_value = _sign_test(wins, losses, alternative)
            is_exact = True

    # No difference at all is no evidence against H0, whatever the test or alternative.
    p_value = np.where(all_zero, 1.0, p_value)
    if test in ("t", "wilcoxon"):
        statistic = np.where(all_zero, np.nan, statistic)

    # Diagnostics of what the data allow, whatever the test (the p-values stay scipy's).
    zero_variance = (var == 0) & ~all_zero
    min_p_value = smallest_p_value(wins + losses, alternative)

    shaped = lambda values: _shaped(np.asarray(values), one_d)  # noqa: E731
    return PairedTest(
        test=test, alternative=alternative, n=n,
        statistic=shaped(statistic.astype(np.float64)), p_value=shaped(p_value),
        mean_diff=shaped(mean), ci_low=shaped(ci_low), ci_high=shaped(ci_high),
        effect_size=shaped(effect_size), wins=shaped(wins), ties=shaped(n - wins - losses),
        losses=shaped(losses), ci_method=ci_method, n_resamples=used_resamples,
        exact=is_exact, level=level, zero_variance=shaped(zero_variance),
        min_p_value=shaped(min_p_value))


def smallest_p_value(differing, alternative: str = "two-sided") -> np.ndarray:
    r"""The smallest p-value the exact sign-flip test can give with ``differing`` non-zero
    differences: :math:`2^{1-m}` two-sided, :math:`2^{-m}` one-sided (1 when m = 0).

    Only the identity flip (and, two-sided, its negation) can be the most extreme of the
    :math:`2^m` flips that change the sum, so no distribution-free paired test of m
    differing pairs goes lower; a smaller p-value comes from a distributional assumption.

    >>> smallest_p_value([3, 5, 0]).tolist()
    [0.25, 0.0625, 1.0]
    """
    m = np.asarray(differing)
    return np.minimum(1.0, np.ldexp(2.0 if alternative == "two-sided" else 1.0, -m))


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


def _sign_flip_monte_carlo_p(d, alternative, n_resamples, seed, threads):
    """Monte Carlo sign-flip p-value ``(c + 1) / (B + 1)``; one ±1 block serves all columns.

    Blocks of flips run on ``threads`` threads (:func:`_map_blocks`); the counts are
    integers, so their sum does not depend on the order the blocks finish in.
    """
    n, k = d.shape
    observed = d.sum(axis=0)
    gamma = _flip_tolerance(d)

    scratch = _Scratch().get

    def block(size, rng):
        flips = rng.integers(0, 2, size=(size, n), dtype=np.int8)
        # the signs 1 - 2 * flips, into this thread's kept array (no fresh pages a block)
        signs = np.multiply(flips, -2.0, out=scratch("signs", (size, n), np.float64))
        np.add(signs, 1.0, out=signs)
        return signs @ d  # a block's own product: the same shape, so the same sums

    def run(sums):  # a run of blocks' counts at once: fewer numpy calls
        return _at_least_as_extreme(_rows(sums), observed, alternative, gamma,
                                    overwrite=True)

    counts = np.zeros(k, dtype=np.int64)
    for hits in _map_blocks(block, n_resamples, n + k, seed, threads, row_work=n * k,
                            join=run):
        counts += hits
    return (counts + 1.0) / (n_resamples + 1.0)


def _bootstrap_blocks(centred, n_resamples, seed, threads, fn, *, squares):
    """``fn(sums, sums_sq)`` for each run of blocks of bootstrap resamples of ``centred``
    (n, k), in order: ``sums = W @ centred`` and ``sums_sq = W @ centred**2`` (or None),
    a row per resample; ``fn`` must treat each row alone (it sees a thread-dependent
    number of them).

    ``W`` holds the multinomial counts of one resample per row, built from
    ``rng.integers(0, n, (rows, n))`` (the index draws of scipy.stats.bootstrap) so a matrix
    product replaces fancy indexing. ``W @ centred`` feeds the confidence interval, so it is
    computed exactly on fixed-point parts (:func:`_fixed_point_parts`): a threaded BLAS
    sums in a thread-dependent order, and exact sums have no order. The sums of squares
    only feed p-value counts, which the comparison tolerance protects. Blocks (their size
    fixed by the shape and ``n_resamples``, block ``i`` drawn from generator ``i``) run on
    ``threads`` threads, in runs of consecutive blocks, ``fn`` once per run.
    """
    n, k = centred.shape
    parts = _fixed_point_parts(centred)
    centred_sq = centred * centred if squares else None

    scratch = _Scratch().get

    def block(size, rng):
        weights = _resample_counts(rng, size, n, out=scratch("weights", (size, n), np.float64))
        sums = sum((weights @ part) * scale for part, scale in parts)
        return sums, weights @ centred_sq if squares else None

    def run(blocks):  # fn row by row: once for a run of blocks, in fewer numpy calls
        return fn(_rows([sums for sums, _ in blocks]),
                  _rows([sq for _, sq in blocks]) if squares else None)

    # a resample's work: its draws, and a product with each part and the squares
    return _map_blocks(block, n_resamples, n + k, seed, threads,
                       row_work=n * k * (len(parts) + squares) + n, join=run)


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


def _bootstrap_test(d, mean, sd, alternative, n_resamples, seed, threads):
    """Studentised shift-bootstrap p-value; also returns the (B, k) bootstrap means of d."""
    n, k = d.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        t_observed = mean / (sd / math.sqrt(n))
        t_gamma = np.where(np.isfinite(t_observed), _REL_TOL * np.abs(t_observed), 0.0)

    def block(sums, sums_sq):
        boot_means = mean + sums / n
        if n < 2:
            return boot_means, np.zeros(k, dtype=np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = np.maximum(sums_sq - sums * sums / n, 0.0) / (n - 1)
            # 0/0 (a resample of centred zeros) is a mean exactly at H0: t* = 0.
            t_null = np.where(sums == 0, 0.0, (sums / n) / np.sqrt(variance / n))
        return boot_means, _at_least_as_extreme(t_null, t_observed, alternative, t_gamma)

    blocks = _bootstrap_blocks(d - mean, n_resamples, seed, threads, block, squares=True)
    boot_means = np.concatenate([means for means, _ in blocks])
    counts = np.sum([hits for _, hits in blocks], axis=0, dtype=np.int64)
    p_value = (counts + 1.0) / (n_resamples + 1.0)
    if n < 2:
        p_value = np.full(k, np.nan)
    return p_value, boot_means


def _bootstrap_interval(d, mean, sd, boot_means, level, alternative, kind, threads=1):
    """Percentile or BCa interval of the mean from its bootstrap distribution.

    BCa (Efron & Tibshirani 1993, eq. 14.10-14.15), as scipy.stats.bootstrap computes it:
    :math:`z_0 = \\Phi^{-1}((\\#\\{\\theta^* < \\hat\\theta\\} + \\#\\{\\theta^* \\le
    \\hat\\theta\\}) / 2B)`; the jackknife acceleration of the mean reduces to
    :math:`a = \\sum u_i^3 / (6 (\\sum u_i^2)^{3/2})` with :math:`u_i = d_i - \\bar d`; the
    ends are the quantiles (linear interpolation) at
    :math:`\\Phi(z_0 + (z_0 + z_\\alpha) / (1 - a (z_0 + z_\\alpha)))`.
    Columns with :math:`s_d = 0` get ``[mean, mean]``; n = 1 gives NaN. The selection
    runs on ``threads`` threads, a group of columns each (exact, so the same ends).
    """
    from scipy import special

    n, k = d.shape
    # the work: counting and partly sorting every column's resamples (a selection costs
    # some 30 element operations per element: 14 ns, against 2**24 operations in 5-15 ms)
    threads = threads_for_work(threads, boot_means.size * 32)
    p_low, p_high = _tail_probabilities(level, alternative)
    probabilities = np.tile(np.array([[p_low], [p_high]]), (1, k))
    if kind == "bca":
        # Resample means equal to the mean in exact arithmetic differ from it by rounding
        # of the order of eps * mean |d - mean|; count them as ties.
        gamma = _REL_TOL * (np.abs(mean) + np.abs(d - mean).mean(axis=0))
        low_edge, high_edge = mean - gamma, mean + gamma

        def counts(cols: slice) -> tuple[np.ndarray, np.ndarray]:
            part = boot_means[:, cols]
            return (np.count_nonzero(part < low_edge[cols], axis=0),
                    np.count_nonzero(part <= high_edge[cols], axis=0))

        # integer counts per column: the grouping of the columns cannot change them
        found = map_ordered(counts, _column_groups(k, threads), threads=threads)
        below = np.concatenate([b for b, _ in found])
        at_or_below = np.concatenate([a for _, a in found])
        z0 = special.ndtri((below + at_or_below) / (2.0 * boot_means.shape[0]))
        u = d - mean
        with np.errstate(divide="ignore", invalid="ignore"):
            accel = (u**3).sum(axis=0) / (6.0 * (u**2).sum(axis=0) ** 1.5)
            z = special.ndtri(probabilities) + z0
            probabilities = special.ndtr(z0 + z / (1.0 - accel * z))
    low, high = _column_quantiles(boot_means, probabilities, threads)
    constant = sd == 0
    low, high = np.where(constant, mean, low), np.where(constant, mean, high)
    if n < 2:
        low, high = np.full(k, np.nan), np.full(k, np.nan)
    return _one_sided(low, high, alternative)


def _column_groups(k: int, threads: Any) -> list[slice]:
    """``k`` columns cut into contiguous groups (:func:`irmetrics.parallel.item_runs`:
    about four per thread, one for 1 thread): a thread slowed by other work on a shared
    machine is left fewer to do."""
    return [slice(run.start, run.stop) for run in item_runs(k, threads)] or [slice(0, 1)]


def _column_quantiles(samples: np.ndarray, probabilities: np.ndarray,
                      threads: Any = 1) -> np.ndarray:
    """Quantiles of each column of ``samples`` (B, k) at per-column ``probabilities`` (q, k).

    Linear interpolation between order statistics (Hyndman & Fan type 7, numpy's and
    scipy.stats.quantile's default); NaN probabilities give NaN. Only the two order
    statistics around each quantile are needed, so each column is partly sorted
    (``ndarray.partition`` at those ranks: half the time of a full sort, measured 27
    against 55 ms on 10,000 x 190), in groups of columns on ``threads`` threads; an
    order statistic is one number whatever the sorting, so the grouping cannot change a
    value.
    """
    q = probabilities.shape[0]
    last = samples.shape[0] - 1
    valid = np.isfinite(probabilities)
    position = np.where(valid, probabilities, 0.0) * last
    below = np.clip(np.floor(position).astype(np.int64), 0, last)
    ranks = np.concatenate([below, np.minimum(below + 1, last)]).T  # (k, 2q)

    def order_statistics(cols: slice) -> np.ndarray:
        columns = np.ascontiguousarray(samples[:, cols].T)  # a column per row: contiguous
        for column, kth in zip(columns, ranks[cols]):  # each column its own ranks
            column.partition(kth)
        return np.take_along_axis(columns, ranks[cols], axis=1)

    found = np.concatenate(map_ordered(order_statistics, _column_groups(samples.shape[1], threads),
                                       threads=threads)).T  # (2q, k)
    lo, hi = found[:q], found[q:]
    values = lo + (hi - lo) * (position - below)
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
