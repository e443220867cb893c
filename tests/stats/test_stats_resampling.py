"""Resampling in irmetrics.stats: bootstrap, randomised Tukey HSD, confidence_interval, determinism.

Oracles: scipy.stats.bootstrap fed the same random stream (exact agreement) and a different
one (agreement within Monte Carlo error), scipy.stats.t.interval, plain per-resample loops
written here that draw from the same documented stream (bit-identical p-values), and the
exact paired randomization test.
"""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import ndtri

import irmetrics.stats as ist
from irmetrics.exceptions import ParameterError, ShapeError
from irmetrics.parallel import block_generators
from irmetrics.stats import ALTERNATIVES, confidence_interval, paired_test, tukey_hsd

TOL = 100 * np.finfo(np.float64).eps


@pytest.fixture
def one_block(monkeypatch):
    """All resamples in one block: one ``rng.integers(0, n, (B, n))`` call, as scipy draws
    them, from the block's generator (:func:`_stream`)."""
    monkeypatch.setattr(ist._common, "_BLOCK_ELEMENTS", 1 << 40)
    monkeypatch.setattr(ist._common, "_TARGET_BLOCKS", 1)


def _stream(seed, block=0, n_blocks=1):
    """The generator block ``block`` of ``n_blocks`` draws from (the documented stream)."""
    return block_generators(seed, n_blocks)[block]


def _scipy_bootstrap(d, method, B, seed, level=0.95, alternative="two-sided"):
    return sps.bootstrap((d,), lambda x, axis: np.mean(x, axis=axis), n_resamples=B, method=method,
                         confidence_level=level, alternative=alternative, vectorized=True,
                         rng=_stream(seed)).confidence_interval


# --------------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("kind, scipy_method", [("bca", "BCa"), ("percentile", "percentile")])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n, grid", [(2, None), (12, None), (30, None), (5, 8), (9, 4)])
def test_bootstrap_ci_equals_scipy_on_the_same_stream(one_block, kind, scipy_method, alternative, n, grid):
    # Small n repeats the sample's own multiset, whose mean ties the observed mean only up to
    # rounding: scipy decides such ties by the rounding of np.mean, we count them as ties.
    # Continuous data with n >= 12 (no repeats) or values on a dyadic grid (exact sums)
    # leave nothing to rounding, and there the two must agree.
    rng = np.random.default_rng(n)
    a, b = rng.exponential(size=(n, 3)), rng.exponential(size=(n, 3))
    if grid is not None:
        a, b = np.round(a * grid) / grid, np.round(b * grid) / grid
    res = paired_test(a, b, test="bootstrap", n_resamples=999, seed=42, alternative=alternative,
                      level=0.9, bootstrap_ci=kind)
    assert res.ci_method == kind and res.n_resamples == 999
    for j in range(3):
        ref = _scipy_bootstrap(a[:, j] - b[:, j], scipy_method, 999, 42, 0.9, alternative)
        np.testing.assert_allclose([res.ci_low[j], res.ci_high[j]], [ref.low, ref.high], rtol=1e-11, atol=1e-12)


def test_confidence_interval_bootstrap_equals_scipy_on_the_same_stream(one_block):
    rng = np.random.default_rng(9)
    x = rng.gamma(0.5, size=(40, 2))
    for kind, scipy_method in (("bca", "BCa"), ("percentile", "percentile")):
        ci = confidence_interval(x, method="bootstrap", bootstrap_ci=kind, n_resamples=2000, seed=3)
        assert ci.method == "bootstrap" and ci.ci_method == kind and ci.n_resamples == 2000
        for j in range(2):
            ref = _scipy_bootstrap(x[:, j], scipy_method, 2000, 3)
            np.testing.assert_allclose([ci.low[j], ci.high[j]], [ref.low, ref.high], rtol=1e-11)


@pytest.mark.parametrize("kind, scipy_method", [("bca", "BCa"), ("percentile", "percentile")])
def test_bootstrap_ci_agrees_with_scipy_within_monte_carlo_error(kind, scipy_method):
    # Different streams: each end is a sample quantile of B bootstrap means, whose standard
    # error is sqrt(p (1 - p) / B) / f(x_p) with f the (near normal) bootstrap density.
    rng = np.random.default_rng(21)
    d = rng.exponential(size=60) - 0.8
    B = 4000
    res = confidence_interval(d, method="bootstrap", bootstrap_ci=kind, n_resamples=B, seed=1)
    ref = _scipy_bootstrap(d, scipy_method, B, 12345)
    spread = d.std(ddof=1) / math.sqrt(d.size)
    p = 0.02  # a little beyond the 0.025 tail, so the bound is conservative
    quantile_se = math.sqrt(p * (1 - p) / B) / sps.norm.pdf(ndtri(p)) * spread
    bound = 5 * math.sqrt(2) * quantile_se
    assert abs(res.low - ref.low) <= bound and abs(res.high - ref.high) <= bound, (res, ref, bound)


def test_fixed_point_parts_make_weighted_sums_exact():
    rng = np.random.default_rng(17)
    for n in (1, 3, 1000, 70_000):
        x = rng.normal(size=(n, 3)) * np.array([1e-9, 1.0, 1e6])
        x[:, 0] -= x[:, 0].mean()
        parts = ist.paired._fixed_point_parts(x)
        weights = np.bincount(rng.integers(0, n, size=n), minlength=n).astype(float)
        reconstructed = sum(part * scale for part, scale in parts)
        # truncation below 56 bits under each column's largest magnitude
        assert np.all(np.abs(reconstructed - x) <= 2.0**-55 * np.abs(x).max(axis=0))
        for part, scale in parts:
            assert np.all(part == np.trunc(part)) and np.all(np.abs(part) * n <= 2.0**52)
            exact = [math.fsum(weights * part[:, j]) for j in range(3)]
            assert np.array_equal(weights @ part, exact)  # integer sums below 2**53: no rounding


def _reference_bootstrap_p(d, B, seed, alternative):
    """Per-resample loop: studentised shift bootstrap with scipy's index draws."""
    n = d.size
    centred = d - d.mean()
    t_obs = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    picks = _stream(seed).integers(0, n, size=(B, n))
    count = 0
    for b in range(B):
        x = centred[picks[b]]
        mean, sd = x.mean(), x.std(ddof=1)
        t = 0.0 if mean == 0 else (math.copysign(math.inf, mean) if sd == 0 else mean / (sd / math.sqrt(n)))
        gamma = TOL * abs(t_obs)
        if alternative == "greater":
            count += t >= t_obs - gamma
        elif alternative == "less":
            count += t <= t_obs + gamma
        else:
            count += abs(t) >= abs(t_obs) - gamma
    return (count + 1) / (B + 1)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n", [3, 12, 50])
def test_bootstrap_p_value_equals_a_plain_loop(one_block, alternative, n):
    rng = np.random.default_rng(100 + n)
    d = rng.normal(0.2, 1, size=(n, 2))
    res = paired_test(d, np.zeros_like(d), test="bootstrap", n_resamples=500, seed=8, alternative=alternative)
    for j in range(2):
        assert res.p_value[j] == _reference_bootstrap_p(d[:, j], 500, 8, alternative)
        assert res.statistic[j] == pytest.approx(d[:, j].mean(), rel=1e-15)


def test_bootstrap_p_close_to_t_test_on_normal_data():
    rng = np.random.default_rng(4)
    d = rng.normal(0.25, 1, size=(80, 5))
    boot = paired_test(d, np.zeros_like(d), test="bootstrap", n_resamples=4000, seed=2)
    t = paired_test(d, np.zeros_like(d), test="t")
    assert np.all(np.abs(boot.p_value - t.p_value) <= 0.03), (boot.p_value, t.p_value)


# --------------------------------------------------------------------------- confidence_interval


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.999])
@pytest.mark.parametrize("n", [2, 3, 10, 500])
def test_t_interval_equals_scipy(level, n):
    x = np.random.default_rng(n).random((n, 3)) ** 2
    ci = confidence_interval(x, level=level)
    assert ci.method == "t" and ci.ci_method == "t" and ci.level == level and ci.n == n
    for j in range(3):
        low, high = sps.t.interval(level, n - 1, loc=x[:, j].mean(), scale=sps.sem(x[:, j]))
        np.testing.assert_allclose([ci.low[j], ci.high[j]], [low, high], rtol=1e-12, atol=1e-12)
        assert ci.mean[j] == pytest.approx(x[:, j].mean(), rel=1e-15)


@pytest.mark.parametrize("method", ["t", "bootstrap"])
def test_confidence_interval_degenerate(method):
    ci = confidence_interval(np.full((6, 2), 0.1) * [1, 3], method=method, n_resamples=100)
    assert np.array_equal(ci.low, ci.mean) and np.array_equal(ci.high, ci.mean)
    assert np.array_equal(ci.mean, [0.1, 0.1 * 3])
    one = confidence_interval([0.4], method=method, n_resamples=100)
    assert one.mean == 0.4 and np.isnan(one.low) and np.isnan(one.high) and one.low.shape == ()


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(values=[0.1, np.nan]), ParameterError, r"^`values` must be finite everywhere"),
    (dict(values=[]), ShapeError, r"^`values` must have at least one row"),
    (dict(values=[1.0, 2.0], method="bca"), ParameterError, r"^`method` must be one of 't', 'bootstrap'; got 'bca'\.$"),
    (dict(values=[1.0, 2.0], level=95), ParameterError, r"^`level` must be a number strictly between 0 and 1; got 95\.$"),
    (dict(values=[1.0, 2.0], n_resamples=-3), ParameterError, r"^`n_resamples` must be a positive integer"),
])
def test_confidence_interval_bad_input(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        confidence_interval(**kwargs)


# --------------------------------------------------------------------------- Tukey HSD


def _unrank(rank, m):
    """Fisher-Yates with the rank's mixed-radix digits as swap positions (the documented map)."""
    order = list(range(m))
    for i in range(m - 1, 0, -1):
        rank, j = divmod(rank, i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def _reference_tukey(scores, B, seed):
    """Plain loops over resamples, queries and systems, drawing the documented stream."""
    m, n = scores.shape
    rows = ist._common._block_rows(n * m * ist.tukey._TUKEY_COLUMN_GROUP, B)
    starts = range(0, B, rows)
    ranks = np.concatenate([_stream(seed, i, len(starts)).integers(0, math.factorial(m), size=min(rows, B - s) * n)
                            for i, s in enumerate(starts)]).reshape(B, n)
    means = [sum(scores[i, q] for q in range(n)) / n for i in range(m)]
    ranges, pair_diffs = [], []
    for b in range(B):
        sums = [0.0] * m
        for q in range(n):
            order = _unrank(int(ranks[b, q]), m)
            for i in range(m):
                sums[i] += scores[order[i], q]
        ranges.append((max(sums) - min(sums)) / n)
        pair_diffs.append([[abs(sums[i] - sums[j]) / n for j in range(m)] for i in range(m)])
    adjusted = np.ones((m, m))
    unadjusted = np.ones((m, m))
    for i in range(m):
        for j in range(m):
            if i != j:
                observed = abs(means[i] - means[j])
                threshold = observed - TOL * (observed + np.abs(scores).mean())
                adjusted[i, j] = (sum(r >= threshold for r in ranges) + 1) / (B + 1)
                unadjusted[i, j] = (sum(p[i][j] >= threshold for p in pair_diffs) + 1) / (B + 1)
    return adjusted, unadjusted


# m > 10 (12, 20): each rank decoded by _unrank, not looked up in a table of all m!
@pytest.mark.parametrize("m, n, seed", [(2, 9, 0), (2, 1, 1), (3, 12, 2), (4, 7, 3), (5, 6, 4),
                                        (12, 3, 5), (20, 2, 6)])
def test_tukey_equals_plain_loop_on_the_same_stream(m, n, seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.random((m, n)) * 8) / 8 + np.arange(m)[:, None] * 0.05
    res = tukey_hsd(scores, n_resamples=300, seed=seed)
    adjusted, unadjusted = _reference_tukey(scores, 300, seed)
    assert np.array_equal(res.p_values, adjusted)
    assert np.all(res.p_values >= unadjusted)  # the range is at least every pairwise difference
    np.testing.assert_allclose(res.means, scores.mean(axis=1), rtol=1e-15)
    np.testing.assert_allclose(res.statistic, scores.mean(1)[:, None] - scores.mean(1)[None, :], rtol=1e-15)


@pytest.mark.parametrize("m", [2, 3, 8, 9, 11, 14, 20])
def test_vectorised_unrank_is_the_documented_map(m):
    # every swap in place, the last ones by the 8! table, or swaps only (tail=1): the same
    # permutation of each rank (a planted off-by-one in a swap or the table's digits fails)
    rng = np.random.default_rng(m)
    ranks = np.concatenate([[0, math.factorial(m) - 1],
                            rng.integers(0, math.factorial(m), size=300, dtype=np.int64)])
    expected = [_unrank(int(r), m) for r in ranks]
    for tail in (None, 1, 3):
        assert ist.tukey._unrank(ranks.astype(np.int64), m, tail=tail).tolist() == expected


@pytest.mark.parametrize("m", [2, 21, 30, 130])
def test_drawn_swaps_give_the_documented_permutations(m):
    # m > 20 systems: Fisher-Yates with the swap positions drawn directly
    swaps = np.random.default_rng(m).integers(0, np.arange(m, 1, -1), size=(200, m - 1))
    expected = []
    for row in swaps:
        order = list(range(m))
        for step, i in enumerate(range(m - 1, 0, -1)):
            j = int(row[step])
            order[i], order[j] = order[j], order[i]
        expected.append(order)
    assert ist.tukey._fisher_yates(swaps, m).tolist() == expected


def test_tukey_with_two_systems_is_the_randomization_test():
    rng = np.random.default_rng(6)
    a = rng.random(14)
    b = a - rng.normal(0.1, 0.2, size=14)
    B = 20_000
    res = tukey_hsd(np.stack([a, b]), n_resamples=B, seed=3)
    exact = paired_test(a, b, test="randomization")
    assert exact.exact
    sigma = math.sqrt(exact.p_value * (1 - exact.p_value) / B)
    assert abs(res.p_values[0, 1] - exact.p_value) <= 4 * sigma + 1 / (B + 1), (res.p_values[0, 1], exact.p_value)


def test_tukey_controls_family_wise_error_on_null_data():
    rng = np.random.default_rng(12)
    trials, alpha = 200, 0.05
    rejections = 0
    for trial in range(trials):
        scores = rng.normal(size=(5, 15)) + rng.normal(size=(1, 15))  # systems exchangeable per query
        rejections += bool(np.any(tukey_hsd(scores, n_resamples=199, seed=trial).p_values <= alpha))
    assert rejections / trials <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / trials)


def test_tukey_columns_share_permutations_and_shape():
    rng = np.random.default_rng(13)
    cube = rng.random((4, 30, 11))  # more columns than one gather group
    res = tukey_hsd(cube, n_resamples=400, seed=5)
    assert res.means.shape == (4, 11) and res.p_values.shape == (4, 4, 11) and res.statistic.shape == (4, 4, 11)
    assert res.n_resamples == 400
    for j in (0, 8, 10):
        alone = tukey_hsd(cube[:, :, j], n_resamples=400, seed=5)
        assert np.array_equal(alone.p_values, res.p_values[:, :, j])
    assert np.array_equal(res.p_values, res.p_values.transpose(1, 0, 2))
    assert np.all(res.p_values[np.arange(4), np.arange(4)] == 1.0)
    np.testing.assert_array_equal(res.statistic, -res.statistic.transpose(1, 0, 2))


def test_tukey_permutations_are_uniform():
    rng = np.random.default_rng(0)
    for m in (3, 4, 11):
        perms = ist.tukey._random_permutations(rng, 48_000, m)
        assert np.array_equal(np.sort(perms, axis=1), np.broadcast_to(np.arange(m), perms.shape))
        counts = np.array([[np.sum(perms[:, i] == v) for v in range(m)] for i in range(m)])
        expected = 48_000 / m
        assert np.all(np.abs(counts - expected) <= 5 * math.sqrt(expected)), m
    big = ist.tukey._random_permutations(rng, 100, 23)  # beyond 20!: swap positions drawn directly
    assert np.array_equal(np.sort(big, axis=1), np.broadcast_to(np.arange(23), big.shape))


@pytest.mark.parametrize("scores, error, pattern", [
    (np.zeros(5), ShapeError, r"^`scores` must be 2-D \(m, n\) or 3-D \(m, n, k\); got shape \(5,\)\.$"),
    (np.zeros((1, 5)), ShapeError, r"^`scores` must have at least 2 systems and 1 query; got shape \(1, 5\)\.$"),
    (np.zeros((3, 0)), ShapeError, r"^`scores` must have at least 2 systems"),
    ([[0.1, np.inf], [0.2, 0.3]], ParameterError, r"^`scores` must be finite everywhere"),
])
def test_tukey_bad_input(scores, error, pattern):
    with pytest.raises(error, match=pattern):
        tukey_hsd(scores)


# --------------------------------------------------------------------------- determinism

_DETERMINISM_SCRIPT = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    from irmetrics.stats import paired_test, tukey_hsd, confidence_interval
    rng = np.random.default_rng(0)
    a, b = rng.random((3000, 12)), rng.random((3000, 12))
    h = hashlib.sha256()
    for test in ("randomization", "bootstrap"):
        r = paired_test(a, b, test=test, n_resamples=3000, seed=1)
        for field in ("statistic", "p_value", "ci_low", "ci_high"):
            h.update(np.ascontiguousarray(getattr(r, field)).tobytes())
    t = tukey_hsd(rng.random((4, 500, 3)), n_resamples=500, seed=2)
    h.update(t.p_values.tobytes())
    c = confidence_interval(a, method="bootstrap", n_resamples=2000, seed=3)
    h.update(c.low.tobytes() + c.high.tobytes())
    sys.stdout.write(h.hexdigest())
""")

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _digest(threads):
    env = {key: value for key, value in os.environ.items() if key not in _THREAD_VARIABLES}
    if threads is not None:
        env.update({key: str(threads) for key in _THREAD_VARIABLES})
    done = subprocess.run([sys.executable, "-c", _DETERMINISM_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=600, check=True)
    return done.stdout


def test_results_are_bit_identical_whatever_the_thread_count():
    one_thread, default_threads, two_threads = _digest(1), _digest(None), _digest(2)
    assert len(one_thread) == 64
    assert one_thread == default_threads == two_threads


def test_repeated_calls_give_identical_bytes_and_seed_matters():
    rng = np.random.default_rng(1)
    a, b = rng.random((200, 3)), rng.random((200, 3))
    for test in ("randomization", "bootstrap"):
        first = paired_test(a, b, test=test, n_resamples=999, seed=7)
        again = paired_test(a, b, test=test, n_resamples=999, seed=7)
        other = paired_test(a, b, test=test, n_resamples=999, seed=8)
        assert first.p_value.tobytes() == again.p_value.tobytes()
        assert first.ci_low.tobytes() == again.ci_low.tobytes()
        assert first.p_value.tobytes() != other.p_value.tobytes()
    # A Generator seeds the blocks with one draw of its own: the same state, the same bytes.
    generator = paired_test(a, b, test="bootstrap", n_resamples=999, seed=np.random.default_rng(7))
    assert generator.p_value.tobytes() == paired_test(a, b, test="bootstrap", n_resamples=999,
                                                      seed=np.random.default_rng(7)).p_value.tobytes()
    digest = hashlib.sha256(tukey_hsd(np.stack([a[:, 0], b[:, 0]]), n_resamples=300).p_values.tobytes()).hexdigest()
    assert digest == hashlib.sha256(tukey_hsd(np.stack([a[:, 0], b[:, 0]]), n_resamples=300).p_values.tobytes()).hexdigest()


@pytest.mark.parametrize("test", ["bootstrap", "randomization", "t"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_tests_hold_their_size_on_null_data(test, alternative):
    # 400 independent null data sets as columns: the rejection rate at 0.05 must be within
    # 3 binomial standard deviations of 0.05 (columns share resamples, not data).
    rng = np.random.default_rng(31)
    d = rng.normal(size=(30, 400))
    res = paired_test(d, np.zeros_like(d), test=test, alternative=alternative, n_resamples=999, seed=2)
    rate = np.mean(res.p_value <= 0.05)
    assert abs(rate - 0.05) <= 3 * math.sqrt(0.05 * 0.95 / 400), rate
