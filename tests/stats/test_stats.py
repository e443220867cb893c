"""irmetrics.stats.paired_test against scipy, on generated data with ties and degenerate cases.

Oracles: scipy.stats.ttest_rel (and its confidence_interval), permutation_test with
``n_resamples=inf`` (exact sign flips), wilcoxon, binomtest. Values are graded (multiples
of 1/4 or 1/8) so ties, zero differences and constant columns are frequent.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from irmetrics.exceptions import ParameterError, ShapeError
from irmetrics.stats import (
    ALTERNATIVES,
    TESTS,
    PairedTest,
    UnreliableTestWarning,
    paired_test,
)

FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def graded_pairs(draw, min_n=1, max_n=12, max_k=3, grades=4):
    """(a, b) of shape (n, k) with values in {0, 1/grades, ..., 1}; sometimes b = a or a + c."""
    n = draw(st.integers(min_n, max_n))
    k = draw(st.integers(1, max_k))
    cells = st.integers(0, grades)
    a = np.array(draw(st.lists(cells, min_size=n * k, max_size=n * k)), float).reshape(n, k) / grades
    b = np.array(draw(st.lists(cells, min_size=n * k, max_size=n * k)), float).reshape(n, k) / grades
    shape = draw(st.sampled_from(["free", "equal_column", "constant_shift"]))
    column = draw(st.integers(0, k - 1))
    if shape == "equal_column":
        b[:, column] = a[:, column]
    elif shape == "constant_shift":
        b[:, column] = a[:, column] - 0.25
    return a, b


def _scipy_defined(d_column):
    """scipy's t test is defined (not 0/0, not df = 0) for this column."""
    return d_column.size >= 2 and np.any(d_column != d_column[0])


def _quiet(test, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnreliableTestWarning)
        return paired_test(*args, test=test, **kwargs)


def _warned(test, a, b, alternative):
    with pytest.warns(UnreliableTestWarning, match=test):
        return paired_test(a, b, test=test, alternative=alternative)


# --------------------------------------------------------------------------- t


@FAST
@given(pair=graded_pairs(), alternative=st.sampled_from(ALTERNATIVES),
       level=st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_t_matches_scipy_ttest_rel(pair, alternative, level):
    a, b = pair
    res = paired_test(a, b, test="t", alternative=alternative, level=level)
    d = a - b
    for j in range(a.shape[1]):
        if not _scipy_defined(d[:, j]):
            continue
        ref = sps.ttest_rel(a[:, j], b[:, j], alternative=alternative)
        ci = ref.confidence_interval(level)
        np.testing.assert_allclose(res.statistic[j], ref.statistic, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(res.p_value[j], ref.pvalue, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose([res.ci_low[j], res.ci_high[j]], [ci.low, ci.high], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(res.effect_size[j], d[:, j].mean() / d[:, j].std(ddof=1), rtol=1e-12)
    assert res.ci_method == "t" and res.n_resamples == 0 and res.exact is False


def test_t_on_continuous_data_matches_scipy():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(40, 6)), rng.normal(0.2, 1, size=(40, 6))
    for alternative in ALTERNATIVES:
        res = paired_test(a, b, alternative=alternative)
        ref = sps.ttest_rel(a, b, alternative=alternative)
        np.testing.assert_allclose(res.statistic, ref.statistic, rtol=1e-12)
        np.testing.assert_allclose(res.p_value, ref.pvalue, rtol=1e-12)


# --------------------------------------------------------------------------- randomization


def _exact_permutation_p(d, alternative):
    return sps.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis), vectorized=True,
                                permutation_type="samples", n_resamples=np.inf,
                                alternative=alternative).pvalue


@FAST
@given(pair=graded_pairs(min_n=2, max_n=11, grades=8), alternative=st.sampled_from(ALTERNATIVES))
def test_exact_randomization_matches_scipy_permutation_test(pair, alternative):
    a, b = pair
    res = paired_test(a, b, test="randomization", alternative=alternative)
    n = a.shape[0]
    assert res.exact and res.n_resamples == 2**n
    d = a - b
    for j in range(a.shape[1]):
        np.testing.assert_allclose(res.p_value[j], _exact_permutation_p(d[:, j], alternative), rtol=0, atol=1e-12)
        assert res.statistic[j] == pytest.approx(d[:, j].mean(), abs=1e-15)


@pytest.mark.parametrize("n", [2, 3, 7, 16])
def test_exact_randomization_on_continuous_data(n):
    rng = np.random.default_rng(n)
    d = rng.normal(0.3, 1, size=(n, 3))
    for alternative in ALTERNATIVES:
        res = paired_test(d, np.zeros_like(d), test="randomization", alternative=alternative)
        for j in range(3):
            assert res.p_value[j] == pytest.approx(_exact_permutation_p(d[:, j], alternative), abs=1e-12)


def test_exact_true_enumerates_beyond_twenty_and_refuses_beyond_thirty():
    rng = np.random.default_rng(3)
    d = np.round(rng.normal(0.1, 1, size=(22, 2)) * 8) / 8
    res = paired_test(d, np.zeros_like(d), test="randomization", exact=True)
    assert res.exact and res.n_resamples == 2**22
    # the exact p-value is a count over 2**22 flips; Monte Carlo must agree within 5 sigma
    mc = paired_test(d, np.zeros_like(d), test="randomization", exact=False, n_resamples=20_000, seed=5)
    sigma = np.sqrt(res.p_value * (1 - res.p_value) / 20_000)
    assert np.all(np.abs(mc.p_value - res.p_value) <= 5 * sigma + 1 / 20_001)
    with pytest.raises(ParameterError, match=r"^`exact` must be False or None when n > 30"):
        paired_test(np.zeros(31), np.ones(31), test="randomization", exact=True)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_monte_carlo_randomization_within_binomial_error_of_exact(alternative):
    rng = np.random.default_rng(11)
    a = rng.random((15, 4))
    b = a - rng.normal(0.15, 0.3, size=(15, 4))
    exact = paired_test(a, b, test="randomization", alternative=alternative)
    assert exact.exact
    B = 20_000
    mc = paired_test(a, b, test="randomization", alternative=alternative, exact=False, n_resamples=B, seed=1)
    assert not mc.exact and mc.n_resamples == B
    sigma = np.sqrt(exact.p_value * (1 - exact.p_value) / B)
    # (c + 1) / (B + 1) differs from c / B by at most 1 / (B + 1)
    assert np.all(np.abs(mc.p_value - exact.p_value) <= 4 * sigma + 1 / (B + 1)), (mc.p_value, exact.p_value)


def test_flip_sums_that_cancel_still_tie_with_the_observed_sum():
    # 0.1 + 0.2 - 0.3 is 5.6e-17 in floating point; in exact arithmetic the identity and the
    # full flip both tie with it, and 5 of the 8 flips are >= 0 (scipy's tolerance relative
    # to the observed sum counts only 4 for "greater").
    d = np.array([0.1, 0.2, -0.3])
    for alternative in ("greater", "less"):
        assert paired_test(d, np.zeros(3), test="randomization", alternative=alternative).p_value == 5 / 8
    assert paired_test(d, np.zeros(3), test="randomization").p_value == 1.0


def test_monte_carlo_p_value_is_never_zero_and_counts_ties():
    d = np.full((25, 1), 0.5)  # every flip other than identity is smaller; ties only with itself
    res = paired_test(d, np.zeros_like(d), test="randomization", n_resamples=999, alternative="greater")
    assert res.p_value == pytest.approx(1 / 1000, abs=1e-3)
    assert res.p_value >= 1 / 1000


# --------------------------------------------------------------------------- wilcoxon and sign


@settings(FAST, max_examples=25)  # scipy enumerates 2**n rankings for tied n <= 13: slow
@given(pair=graded_pairs(max_n=9), alternative=st.sampled_from(ALTERNATIVES))
def test_wilcoxon_matches_scipy(pair, alternative):
    a, b = pair
    res, d = _warned("wilcoxon", a, b, alternative), a - b
    for j in range(a.shape[1]):
        if np.all(d[:, j] == 0):
            assert res.p_value[j] == 1.0 and np.isnan(res.statistic[j])
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = sps.wilcoxon(d[:, j], alternative=alternative)
        np.testing.assert_allclose(res.statistic[j], ref.statistic, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(res.p_value[j], ref.pvalue, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [30, 60, 200])
def test_wilcoxon_columns_with_and_without_ties_match_scipy_one_by_one(n):
    # scipy decides exact/normal from the whole array; per column it must be as if alone
    rng = np.random.default_rng(n)
    continuous = rng.normal(0.2, 1, size=n)
    graded = np.round(rng.normal(0.2, 1, size=n) * 2) / 2
    d = np.column_stack([continuous, graded, -continuous])
    res = _quiet("wilcoxon", d, np.zeros_like(d))
    for j in range(3):
        ref = sps.wilcoxon(d[:, j])
        assert res.statistic[j] == pytest.approx(ref.statistic, rel=1e-12)
        assert res.p_value[j] == pytest.approx(ref.pvalue, rel=1e-12)
    assert res.exact is False  # the tied column of n >= 30 uses the normal approximation


def test_wilcoxon_small_tied_sample_uses_scipys_enumeration():
    d = np.array([0.5, -0.25, 0.5, 0.75, 0.0, 0.25, 0.5, 1.0, -0.5, 0.25, 0.75, 0.5, 0.25])
    for alternative in ALTERNATIVES:
        res = _quiet("wilcoxon", d, np.zeros_like(d), alternative=alternative)
        ref = sps.wilcoxon(d, alternative=alternative)
        assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12) and res.exact


@FAST
@given(pair=graded_pairs(max_n=40, max_k=3, grades=2), alternative=st.sampled_from(ALTERNATIVES))
def test_sign_matches_scipy_binomtest(pair, alternative):
    a, b = pair
    res, d = _warned("sign", a, b, alternative), a - b
    for j in range(a.shape[1]):
        wins, losses = int(np.sum(d[:, j] > 0)), int(np.sum(d[:, j] < 0))
        assert (res.wins[j], res.losses[j], res.ties[j]) == (wins, losses, a.shape[0] - wins - losses)
        assert res.statistic[j] == wins
        expected = 1.0 if wins + losses == 0 else sps.binomtest(wins, wins + losses, 0.5, alternative=alternative).pvalue
        np.testing.assert_allclose(res.p_value[j], expected, rtol=1e-12, atol=1e-12)
    assert res.exact


@pytest.mark.parametrize("m", [1, 2, 3, 10, 101, 1000, 5001])
def test_sign_two_sided_matches_binomtest_for_many_counts(m):
    wins = np.unique(np.r_[np.arange(min(m, 40) + 1), np.linspace(0, m, 41).astype(int), m // 2 + np.arange(-3, 4)])
    wins = wins[(wins >= 0) & (wins <= m)]
    a = (np.arange(m)[:, None] < wins[None, :]).astype(float)  # column w: w wins, m - w losses
    res = _quiet("sign", a, 1 - a)
    expected = [sps.binomtest(int(w), m, 0.5).pvalue for w in wins]
    np.testing.assert_allclose(res.p_value, expected, rtol=1e-12, atol=1e-15)


def test_unreliable_tests_warn_and_others_do_not():
    a, b = np.arange(6.0), np.arange(6.0)[::-1]
    for test in ("wilcoxon", "sign"):
        with pytest.warns(UnreliableTestWarning):
            paired_test(a, b, test=test)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreliableTestWarning)
        for test in ("t", "randomization", "bootstrap"):
            paired_test(a, b, test=test, n_resamples=50)
    assert issubclass(UnreliableTestWarning, UserWarning)


# --------------------------------------------------------------------------- degenerate data


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n", [1, 2, 5, 40])
def test_all_zero_differences_give_p_one(test, alternative, n):
    a = np.linspace(0, 1, n)
    res = _quiet(test, a, a.copy(), alternative=alternative, n_resamples=200)
    assert res.p_value == 1.0 and res.mean_diff == 0.0
    assert np.isnan(res.effect_size)
    assert (int(res.wins), int(res.ties), int(res.losses)) == (0, n, 0)
    if test in ("t", "wilcoxon"):
        assert np.isnan(res.statistic)
    else:
        assert res.statistic == 0.0
    if n >= 2:
        expected = {"two-sided": (0, 0), "less": (-np.inf, 0), "greater": (0, np.inf)}[alternative]
        assert (res.ci_low, res.ci_high) == expected


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_constant_nonzero_difference(alternative):
    a = np.array([0.3, 0.6, 0.1, 0.9, 0.5])
    b = a - 0.125  # exact in binary: d is exactly constant
    res = paired_test(a, b, test="t", alternative=alternative)
    assert res.statistic == np.inf and res.effect_size == np.inf
    assert res.mean_diff == 0.125
    assert res.p_value == (1.0 if alternative == "less" else 0.0)
    lo, hi = {"two-sided": (0.125, 0.125), "less": (-np.inf, 0.125), "greater": (0.125, np.inf)}[alternative]
    assert (res.ci_low, res.ci_high) == (lo, hi)
    boot = paired_test(a, b, test="bootstrap", alternative=alternative, n_resamples=99)
    assert boot.p_value == pytest.approx(1.0 if alternative == "less" else 1 / 100)
    assert (boot.ci_low, boot.ci_high) == (lo, hi)
    neg = paired_test(b, a, test="t")
    assert neg.statistic == -np.inf and neg.effect_size == -np.inf and neg.p_value == 0.0


def test_constant_column_of_repeating_decimal_is_exactly_constant():
    d = np.full(7, 0.1)  # np.mean gives 0.1 + 1 ulp and var 1e-34 without the special case
    res = paired_test(d, np.zeros(7))
    assert res.mean_diff == 0.1 and res.statistic == np.inf and res.p_value == 0.0


def test_n_equals_one():
    res = paired_test([0.7], [0.2], test="t")
    assert np.isnan(res.statistic) and np.isnan(res.p_value) and np.isnan(res.ci_low)
    assert np.isnan(res.effect_size) and res.mean_diff == pytest.approx(0.5)
    r = paired_test([0.7], [0.2], test="randomization")
    assert r.p_value == 1.0 and r.n_resamples == 2
    assert paired_test([0.7], [0.2], test="randomization", alternative="greater").p_value == 0.5
    assert paired_test([0.7], [0.2], test="randomization", alternative="less").p_value == 1.0
    assert np.isnan(paired_test([0.7], [0.2], test="bootstrap", n_resamples=20).p_value)
    assert _quiet("sign", [0.7], [0.2]).p_value == 1.0
    assert _quiet("wilcoxon", [0.7], [0.2]).p_value == pytest.approx(sps.wilcoxon([0.5]).pvalue)


def test_n_equals_two_exact_values():
    a, b = np.array([1.0, 3.0]), np.zeros(2)
    r = paired_test(a, b, test="randomization")
    assert r.p_value == 0.5  # flips: +4, +2, -2, -4 -> |.| >= 4 twice out of 4
    t = paired_test(a, b, test="t")
    ref = sps.ttest_rel(a, b)
    assert t.statistic == pytest.approx(ref.statistic, rel=1e-12) and t.p_value == pytest.approx(ref.pvalue)
    assert t.effect_size == pytest.approx(2 / math.sqrt(2))


def test_many_ties():
    a = np.array([1, 1, 1, 1, 0, 0, 0, 0, 1, 1] * 3, float)
    b = np.array([0, 1, 1, 1, 0, 0, 0, 0, 1, 0] * 3, float)
    for test in TESTS:
        res = _quiet(test, a, b, n_resamples=500)
        assert (int(res.wins), int(res.ties), int(res.losses)) == (6, 24, 0)
        assert 0 < res.p_value <= 1


def test_shapes_of_fields():
    one = paired_test([0.1, 0.5, 0.2], [0.3, 0.2, 0.2])
    assert isinstance(one, PairedTest)
    for field in ("statistic", "p_value", "mean_diff", "ci_low", "ci_high", "effect_size", "wins", "ties", "losses"):
        assert getattr(one, field).shape == (), field
    two = paired_test(np.ones((3, 4)), np.zeros((3, 4)) + [[0.1], [0.2], [0.4]])
    for field in ("statistic", "p_value", "mean_diff", "ci_low", "ci_high", "effect_size", "wins", "ties", "losses"):
        assert getattr(two, field).shape == (4,), field
    assert one.n == 3 and two.n == 3 and one.test == "t" and one.alternative == "two-sided"


def test_columns_are_independent():
    rng = np.random.default_rng(2)
    a, b = rng.random((30, 3)), rng.random((30, 3))
    for test in TESTS:
        together = _quiet(test, a, b, n_resamples=300, seed=4)
        for j in range(3):
            alone = _quiet(test, a[:, j], b[:, j], n_resamples=300, seed=4)
            if test in ("randomization", "bootstrap"):  # resamples are shared, counts per column
                assert together.p_value[j] == alone.p_value
            else:
                assert together.p_value[j] == pytest.approx(float(alone.p_value), rel=1e-12)
            assert together.ci_low[j] == pytest.approx(float(alone.ci_low), rel=1e-12)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(a=[1.0, np.nan], b=[1.0, 2.0]), ParameterError, r"^`a` must be finite everywhere \(row 1, column 0 is not\); got nan\.$"),
    (dict(a=[1.0, 2.0], b=[np.inf, 2.0]), ParameterError, r"^`b` must be finite everywhere .*; got inf\.$"),
    (dict(a=[1e308, 0.0], b=[-1e308, 0.0]), ParameterError, r"^`a - b` must be finite everywhere"),
    (dict(a=[1.0, 2.0], b=[1.0, 2.0, 3.0]), ShapeError, r"^`b` must have the shape of `a` \(2,\); got shape \(3,\)\.$"),
    (dict(a=[1.0, 2.0], b=[[1.0], [2.0]]), ShapeError, r"^`b` must have the shape of `a` \(2,\); got shape \(2, 1\)\.$"),
    (dict(a=[], b=[]), ShapeError, r"^`a` must have at least one row; got shape \(0,\)\.$"),
    (dict(a=np.zeros((2, 2, 2)), b=np.zeros((2, 2, 2))), ShapeError, r"^`a` must be 1-D \(n,\) or 2-D \(n, k\)"),
    (dict(a=["x", "y"], b=[1, 2]), ParameterError, r"^`a` must be an array of real numbers; got"),
    (dict(a=[1, 2], b=[2, 1], test="ttest"), ParameterError, r"^`test` must be one of 't', 'randomization'"),
    (dict(a=[1, 2], b=[2, 1], alternative="bigger"), ParameterError, r"^`alternative` must be one of"),
    (dict(a=[1, 2], b=[2, 1], level=1.0), ParameterError, r"^`level` must be a number strictly between 0 and 1; got 1\.0\.$"),
    (dict(a=[1, 2], b=[2, 1], level=0), ParameterError, r"^`level` must be"),
    (dict(a=[1, 2], b=[2, 1], level="0.9"), ParameterError, r"^`level` must be"),
    (dict(a=[1, 2], b=[2, 1], n_resamples=0), ParameterError, r"^`n_resamples` must be a positive integer; got 0\.$"),
    (dict(a=[1, 2], b=[2, 1], n_resamples=10.0), ParameterError, r"^`n_resamples` must be a positive integer"),
    (dict(a=[1, 2], b=[2, 1], seed=-1), ParameterError, r"^`seed` must be a non-negative integer; got -1\.$"),
    (dict(a=[1, 2], b=[2, 1], seed="a"), ParameterError, r"^`seed` must be"),
    (dict(a=[1, 2], b=[2, 1], exact=1), ParameterError, r"^`exact` must be True, False or None; got 1\.$"),
    (dict(a=[1, 2], b=[2, 1], exact=True), ParameterError, r"^`exact` must be None unless test='randomization'"),
    (dict(a=[1, 2], b=[2, 1], bootstrap_ci="basic"), ParameterError, r"^`bootstrap_ci` must be one of 'bca', 'percentile'"),
])
def test_bad_input(kwargs, error, pattern):
    a, b = kwargs.pop("a"), kwargs.pop("b")
    with pytest.raises(error, match=pattern):
        paired_test(a, b, **kwargs)


@FAST
@given(pair=graded_pairs(max_n=25), test=st.sampled_from(TESTS), alternative=st.sampled_from(ALTERNATIVES),
       kind=st.sampled_from(["bca", "percentile"]))
def test_every_test_gives_coherent_results(pair, test, alternative, kind):
    a, b = pair
    res = _quiet(test, a, b, alternative=alternative, n_resamples=200, seed=3, bootstrap_ci=kind)
    n, k = a.shape
    assert res.p_value.shape == (k,) and res.n == n
    undefined = n == 1 and test in ("t", "bootstrap")
    defined = ~np.isnan(res.p_value)
    assert np.all(defined | (undefined & np.any(a != b, axis=0)))
    assert np.all((res.p_value[defined] > 0) | (test == "t")) and np.all(res.p_value[defined] <= 1)
    if test in ("randomization", "bootstrap") and not res.exact:
        assert np.all(res.p_value[defined] >= 1 / 201)
    assert np.array_equal(res.wins + res.ties + res.losses, np.full(k, n))
    np.testing.assert_allclose(res.mean_diff, (a - b).mean(axis=0), rtol=1e-12, atol=1e-15)
    if n >= 2:
        assert np.all(res.ci_low <= res.ci_high)
        if alternative == "less":
            assert np.all(res.ci_low == -np.inf)
        if alternative == "greater":
            assert np.all(res.ci_high == np.inf)


def test_differences_constant_up_to_input_rounding_count_as_constant():
    # 0.1 - 0.0, 0.2 - 0.1, 0.3 - 0.2 are 0.1 up to one ulp: scipy's t is ~1e16.
    r = paired_test([0.1, 0.2, 0.3], [0.0, 0.1, 0.2], test="t")
    assert r.statistic == np.inf and r.p_value == 0.0 and r.effect_size == np.inf
    assert r.ci_low == r.ci_high == r.mean_diff
    # A real spread, however small, is kept.
    r = paired_test([0.1, 0.2, 0.3 + 1e-9], [0.0, 0.1, 0.2], test="t")
    assert np.isfinite(r.statistic)
