"""irmetrics.stats.agreement and .stability against their oracles.

Oracles: scipy.stats (kendalltau, spearmanr, pearsonr), scikit-learn's cohen_kappa_score,
the ``krippendorff`` package, and brute-force loops written from the definitions (tau_AP
with the documented tie handling, swapped pairs, top-k overlap, the bootstrap, the swap
method). Values are drawn from small grids so that ties are frequent.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from irmetrics import stats
from irmetrics.exceptions import ParameterError, ShapeError
from irmetrics.parallel import block_generators

FAST = settings(max_examples=80, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def rankings(draw, min_m=2, max_m=9, grades=5):
    """(x, y) of m items with values on a grid of ``grades`` levels: many ties."""
    m = draw(st.integers(min_m, max_m))
    cells = st.integers(0, grades)
    x = np.array(draw(st.lists(cells, min_size=m, max_size=m)), float) / grades
    y = np.array(draw(st.lists(cells, min_size=m, max_size=m)), float) / grades
    return x, y


def _scipy(function, x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: scipy warns and returns NaN
        return function(x, y).statistic


def _same(ours, theirs, tol=1e-12):
    if np.isnan(theirs):
        return np.isnan(ours)
    return abs(ours - theirs) <= tol


# -- the correlations against scipy ---------------------------------------------------------

@FAST
@given(rankings())
def test_tau_b_spearman_pearson_equal_scipy(pair):
    x, y = pair
    assert _same(stats.kendall_tau_b(x, y), _scipy(sps.kendalltau, x, y))
    assert _same(stats.spearman_rho(x, y), _scipy(sps.spearmanr, x, y))
    assert _same(stats.pearson_r(x, y), _scipy(sps.pearsonr, x, y))


def test_correlations_on_real_valued_scores():
    rng = np.random.default_rng(3)
    for _ in range(50):
        x = rng.random(30)
        y = x + rng.normal(scale=0.3, size=30)
        y[:5] = y[5]  # a tie group
        assert _same(stats.kendall_tau_b(x, y), sps.kendalltau(x, y).statistic)
        assert _same(stats.spearman_rho(x, y), sps.spearmanr(x, y).statistic)
        assert _same(stats.pearson_r(x, y), sps.pearsonr(x, y).statistic)


def test_batched_rankings_equal_one_at_a_time():
    rng = np.random.default_rng(4)
    x = np.round(rng.random((3, 4, 7)) * 4) / 4
    y = np.round(rng.random((3, 4, 7)) * 4) / 4
    for function in (stats.kendall_tau_b, stats.spearman_rho, stats.pearson_r,
                     stats.swapped_pairs, stats.tau_ap):
        batched = function(x, y)
        assert batched.shape == (3, 4)
        single = np.array([[function(x[i, j], y[i, j]) for j in range(4)] for i in range(3)])
        np.testing.assert_array_equal(batched, single)


def test_blocks_of_pairs_give_the_same_counts(monkeypatch):
    from irmetrics.stats import agreement

    rng = np.random.default_rng(5)
    x = np.round(rng.random((6, 40)) * 5)
    y = np.round(rng.random((6, 40)) * 5)
    whole = (stats.kendall_tau_b(x, y), stats.tau_ap(x, y), stats.top_k_overlap(x, y, 5))
    monkeypatch.setattr(agreement, "_PAIR_BLOCK", 7)  # a few items per block
    blocked = (stats.kendall_tau_b(x, y), stats.tau_ap(x, y), stats.top_k_overlap(x, y, 5))
    for a, b in zip(whole, blocked):
        np.testing.assert_array_equal(a, b)


# -- tau_AP, swaps, top-k against their definitions ---------------------------------------

def _tau_ap_brute(x, y):
    """The documented definition, item by item: order by y, count what is strictly above
    (undefined against a reference x that ties every item)."""
    m = len(x)
    if all(v == x[0] for v in x):
        return float("nan")
    total, counted = 0.0, 0
    for i in range(m):
        above = [j for j in range(m) if y[j] > y[i]]
        if not above:
            continue
        correct = sum(1 for j in above if x[j] > x[i])
        total += correct / len(above)
        counted += 1
    return 2.0 * total / counted - 1.0 if counted else float("nan")


def _tau_ap_paper(x, y):
    """Yilmaz et al.'s formula, no ties: positions in y's order, C(i) / (i - 1)."""
    order = np.argsort(-np.asarray(y), kind="stable")
    m = len(x)
    total = 0.0
    for position in range(1, m):
        item = order[position]
        correct = sum(1 for above in order[:position] if x[above] > x[item])
        total += correct / position
    return 2.0 / (m - 1) * total - 1.0


@FAST
@given(rankings())
def test_tau_ap_equals_its_definition_with_ties(pair):
    x, y = pair
    expected = _tau_ap_brute(x, y)
    assert _same(stats.tau_ap(x, y), expected)
    symmetric = (expected + _tau_ap_brute(y, x)) / 2
    assert _same(stats.tau_ap(x, y, symmetric=True), symmetric)


@FAST
@given(st.integers(2, 12), st.randoms(use_true_random=False))
def test_tau_ap_without_ties_is_the_papers_formula(m, random):
    x = np.array(random.sample(range(1000), m), float)
    y = np.array(random.sample(range(1000), m), float)
    assert _same(stats.tau_ap(x, y), _tau_ap_paper(x, y))
    assert stats.tau_ap(x, x) == 1.0 and stats.tau_ap(x, -x) == -1.0


def test_tau_ap_published_values():
    # Urbano & Marrero's test sets (pyircor's tests): no ties, then ties on both sides.
    x = [0.897, 0.372, 0.908, 0.898, 0.661, 0.062, 0.177, 0.384, 0.498, 0.992]
    y = [0.82, 0.406, 0.817, 0.953, 0.673, 0.073, 0.364, 0.547, 0.589, 0.988]
    x_ties = [0.9, 0.4, 0.9, 0.9, 0.7, 0.1, 0.2, 0.4, 0.5, 1]
    y_ties = [0.8, 0.4, 0.8, 1, 0.7, 0.1, 0.4, 0.5, 0.6, 1]
    assert round(float(stats.tau_ap(x, y)), 4) == 0.8519
    assert round(float(stats.tau_ap(x, y, symmetric=True)), 4) == 0.8333
    assert round(float(stats.tau_ap(x_ties, y_ties, symmetric=True)), 4) == 0.7321
    assert round(float(stats.kendall_tau_b(x_ties, y_ties)), 4) == 0.9398


def test_tau_ap_all_tied_is_nan():
    assert np.isnan(stats.tau_ap([0.1, 0.2, 0.3], [1.0, 1.0, 1.0]))
    assert np.isnan(stats.tau_ap([1.0, 1.0, 1.0], [0.1, 0.2, 0.3], symmetric=True))


@FAST
@given(rankings(), st.integers(1, 9))
def test_swaps_and_top_k_equal_brute_force(pair, k):
    x, y = pair
    m = len(x)
    swaps = sum(1 for i, j in itertools.combinations(range(m), 2)
                if (x[i] - x[j]) * (y[i] - y[j]) < 0)
    assert stats.swapped_pairs(x, y) == swaps
    k = min(k, m)
    top_x = {i for i in range(m) if sum(x > x[i]) < k}
    top_y = {i for i in range(m) if sum(y > y[i]) < k}
    expected = len(top_x & top_y) / max(len(top_x), len(top_y))
    assert stats.top_k_overlap(x, y, k) == expected


def test_ranking_inputs_are_checked():
    with pytest.raises(ShapeError, match="shape of `x`"):
        stats.kendall_tau_b([1, 2, 3], [1, 2])
    with pytest.raises(ParameterError, match="finite"):
        stats.tau_ap([1, np.nan], [1, 2])
    with pytest.raises(ParameterError, match="`k`"):
        stats.top_k_overlap([1, 2], [1, 2], 3)
    assert np.isnan(stats.kendall_tau_b([1.0], [2.0]))


# -- ranking_agreement: the bootstrap over topics -------------------------------------------

def test_ranking_agreement_bootstrap_equals_a_plain_loop():
    rng = np.random.default_rng(8)
    n, m, B = 15, 5, 300
    x = np.round(rng.random((n, m)) * 8) / 8  # dyadic: every mean is exact
    y = np.clip(x + np.round(rng.normal(scale=0.2, size=(n, m)) * 8) / 8, 0, 1)
    res = stats.ranking_agreement(x, y, k=2, n_resamples=B, seed=11, level=0.9)
    # scipy.stats.bootstrap's draws, block i from generator i (the documented stream)
    rows = stats._common._block_rows(n + 2 * m, B)
    starts = range(0, B, rows)
    draw = np.concatenate([g.integers(0, n, size=(min(rows, B - s), n)) for s, g in
                           zip(starts, block_generators(11, len(starts)))])
    samples = []
    for picks in draw:
        mx, my = x[picks].mean(axis=0), y[picks].mean(axis=0)
        samples.append([_scipy(sps.kendalltau, mx, my), _tau_ap_brute(mx, my),
                        _scipy(sps.spearmanr, mx, my), _scipy(sps.pearsonr, mx, my),
                        stats.swapped_pairs(mx, my), stats.top_k_overlap(mx, my, 2)])
    samples = np.array(samples, dtype=float)
    for j, name in enumerate(stats.RANKING_STATISTICS):
        finite = samples[:, j][np.isfinite(samples[:, j])]
        assert res.ci_low[j] == pytest.approx(np.quantile(finite, 0.05), abs=1e-12), name
        assert res.ci_high[j] == pytest.approx(np.quantile(finite, 0.95), abs=1e-12), name
    mx, my = x.mean(axis=0), y.mean(axis=0)
    assert res.estimate[0] == pytest.approx(sps.kendalltau(mx, my).statistic, abs=1e-12)
    assert res.n_topics == n and res.n_resamples == B


def test_ranking_agreement_is_deterministic_and_takes_leaderboards():
    rng = np.random.default_rng(9)
    x, y = rng.random((20, 6)), rng.random((20, 6))
    a = stats.ranking_agreement(x, y, seed=3, n_resamples=200)
    b = stats.ranking_agreement(x, y, seed=3, n_resamples=200)
    np.testing.assert_array_equal(a.ci_low, b.ci_low)
    fixed = stats.ranking_agreement(x, y.mean(axis=0), seed=3, n_resamples=200)
    assert np.isfinite(fixed.ci_low).all() and fixed.n_topics == 20
    none = stats.ranking_agreement(x.mean(axis=0), y.mean(axis=0))
    assert np.isnan(none.ci_low).all() and none.n_resamples == 0
    np.testing.assert_allclose(none.estimate, a.estimate, atol=1e-12)
    with pytest.raises(ShapeError, match="same topics"):
        stats.ranking_agreement(x, y[:5])


def test_systems_with_the_same_scores_in_another_order_tie_exactly():
    # Means of permuted columns differ in the last bit when summed in order; exact sums tie.
    column = np.array([0.1, 0.7, 0.2, 0.3, 0.9, 0.05, 0.33])
    x = np.stack([column, column[::-1], column * 0.5], axis=1)
    res = stats.ranking_agreement(x, x[:, [1, 0, 2]], n_resamples=50)
    assert res.x_means[0] == res.x_means[1]
    assert res.estimate[0] == pytest.approx(1.0, abs=1e-15)  # tie in both: n_c - n_d = n_0 - 1


# -- judges: kappa, alpha, Jaccard --------------------------------------------------------

@st.composite
def labellings(draw, max_n=40):
    n = draw(st.integers(1, max_n))
    levels = draw(st.sampled_from([[0, 1], [0, 1, 2, 3], [-1, 0, 1, 2], [0, 1, 3],
                                   [0.0, 0.5, 1.0]]))
    cells = st.sampled_from(levels)
    a = np.array(draw(st.lists(cells, min_size=n, max_size=n)), float)
    b = np.array(draw(st.lists(cells, min_size=n, max_size=n)), float)
    groups = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    return a, b, groups


@FAST
@given(labellings())
def test_kappa_equals_scikit_learn(data):
    from sklearn.metrics import cohen_kappa_score

    a, b, groups = data
    labels = np.unique(np.concatenate([a, b]))
    # scikit-learn takes class labels, not real numbers: the positions in the sorted list.
    ia, ib = np.searchsorted(labels, a), np.searchsorted(labels, b)
    labels_i = np.arange(len(labels))
    for weights in (None, "linear", "quadratic"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn warns on 0/0 and returns NaN
            expected = cohen_kappa_score(ia, ib, weights=weights)
        assert _same(stats.cohen_kappa(a, b, weights=weights), expected)
        per_group = stats.cohen_kappa(a, b, weights=weights, groups=groups, n_groups=4)
        for g in range(4):
            picked = groups == g
            if not picked.any():
                assert np.isnan(per_group[g])
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = cohen_kappa_score(ia[picked], ib[picked], weights=weights,
                                             labels=labels_i)
            assert _same(per_group[g], expected)


@FAST
@given(labellings())
def test_alpha_equals_the_krippendorff_package(data):
    krippendorff = pytest.importorskip("krippendorff")
    a, b, groups = data
    for level in stats.ALPHA_LEVELS:
        if level == "ratio" and (np.concatenate([a, b]) < 0).any():
            continue  # ratio data are non-negative
        for picked in [np.ones(len(a), bool)] + [groups == g for g in range(4)]:
            if len(np.unique(np.concatenate([a[picked], b[picked]]))) < 2:
                expected = np.nan  # the package refuses a single value
            else:
                expected = krippendorff.alpha(reliability_data=[a[picked], b[picked]],
                                              level_of_measurement=level)
            if picked.all():
                ours = stats.krippendorff_alpha(a, b, level=level)
            else:
                g = int(groups[picked][0]) if picked.any() else None
                if g is None:
                    continue
                ours = stats.krippendorff_alpha(a, b, level=level, groups=groups, n_groups=4)[g]
            assert _same(ours, expected, tol=1e-10), (level, ours, expected)


def _alpha_reference(a, b, level):
    """Krippendorff's alpha written plainly from the pairable values (two coders)."""
    values = sorted(set(a) | set(b))
    pairs = [(u, v) for u, v in zip(a, b)] + [(v, u) for u, v in zip(a, b)]
    n_c = {c: sum(1 for u, _ in pairs if u == c) for c in values}
    n = len(pairs)

    def delta(c, k):
        if level == "nominal":
            return float(c != k)
        lo, hi = sorted((values.index(c), values.index(k)))
        between = sum(n_c[values[g]] for g in range(lo, hi + 1))
        return (between - (n_c[c] + n_c[k]) / 2) ** 2

    observed = sum(delta(u, v) for u, v in pairs)
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values)
    return 1 - (n - 1) * observed / expected


def test_alpha_equals_a_plain_reference():
    a = [0, 1, 2, 2, 1, 0, 3, 3, 1]
    b = [0, 1, 1, 2, 2, 0, 3, 2, 1]
    for level in ("nominal", "ordinal"):
        assert stats.krippendorff_alpha(a, b, level=level) == pytest.approx(
            _alpha_reference(a, b, level), abs=1e-12)


@FAST
@given(labellings())
def test_jaccard_and_confusion_equal_brute_force(data):
    a, b, groups = data
    ra, rb = a >= 1, b >= 1
    union = np.count_nonzero(ra | rb)
    expected = np.count_nonzero(ra & rb) / union if union else np.nan
    assert _same(stats.jaccard(ra, rb), expected)
    per = stats.jaccard(ra, rb, groups=groups, n_groups=4)
    for g in range(4):
        s = groups == g
        union = np.count_nonzero(ra[s] | rb[s])
        assert _same(per[g], np.count_nonzero(ra[s] & rb[s]) / union if union else np.nan)
    counts, labels = stats.confusion_matrix(a, b)
    for i, j in itertools.product(range(len(labels)), repeat=2):
        assert counts[i, j] == np.count_nonzero((a == labels[i]) & (b == labels[j]))
    per_group, _ = stats.confusion_matrix(a, b, groups=groups, n_groups=4)
    np.testing.assert_array_equal(per_group.sum(axis=0), counts)


def test_judge_inputs_are_checked():
    with pytest.raises(ShapeError, match="length"):
        stats.cohen_kappa([0, 1], [0])
    with pytest.raises(ParameterError, match="every label"):
        stats.cohen_kappa([0, 2], [0, 1], labels=[0, 1])
    with pytest.raises(ParameterError, match="booleans"):
        stats.jaccard([0, 1], [1, 1])
    with pytest.raises(ParameterError, match="groups"):
        stats.cohen_kappa([0, 1], [0, 1], groups=[0.5, 1.0])


# -- discriminative power and swap rate ------------------------------------------------------

def test_discriminative_power_equals_one_test_per_pair():
    rng = np.random.default_rng(12)
    scores = rng.random((25, 5)) * np.linspace(0.6, 1.0, 5)
    for test in ("t", "randomization", "bootstrap"):
        res = stats.discriminative_power(scores, test=test, correction="holm",
                                         n_resamples=500, seed=4)
        raw = [float(stats.paired_test(scores[:, i], scores[:, j], test=test,
                                       n_resamples=500, seed=4).p_value)
               for i, j in itertools.combinations(range(5), 2)]
        if test == "t":  # a resampling test shares its draws across columns
            np.testing.assert_allclose(res.p_values, stats.adjust_pvalues(raw, "holm"),
                                       atol=1e-12)
        assert res.count == int(np.sum(res.p_values <= 0.05))
        assert res.power == res.count / 10
    tukey = stats.discriminative_power(scores, test="tukey", n_resamples=500, seed=4)
    hsd = stats.tukey_hsd(scores.T, n_resamples=500, seed=4)
    np.testing.assert_array_equal(tukey.p_values, [hsd.p_values[i, j] for i, j in
                                                   itertools.combinations(range(5), 2)])
    assert list(tukey.asl_curve()) == sorted(tukey.p_values)


def test_swap_rate_equals_the_procedure_written_as_loops():
    rng = np.random.default_rng(13)
    n, m, trials, width = 12, 4, 300, 0.05
    scores = np.round(rng.random((n, m)) * 16) / 16  # dyadic: exact subset means
    res = stats.swap_rate(scores, subset_size=5, n_trials=trials, bin_width=width, seed=21)
    counts, swaps = {}, {}
    done = 0
    # the documented blocks of 256 trials, block i from generator i
    for draws in block_generators(21, -(-trials // 256)):
        size = min(256, trials - done)
        for u in draws.random((size, n)):
            order = np.argsort(u, kind="stable")
            q, r = order[:5], order[5:10]
            for i, j in itertools.combinations(range(m), 2):
                d = scores[q, i].mean() - scores[q, j].mean()
                d2 = scores[r, i].mean() - scores[r, j].mean()
                b = int(np.floor(abs(d) / width))
                counts[b] = counts.get(b, 0) + 1
                swaps[b] = swaps.get(b, 0) + (d * d2 < 0)
        done += size
    for b, count in counts.items():
        assert res.counts[b] == count and res.swaps[b] == swaps[b]
    assert res.counts.sum() == trials * 6
    assert res.overall == sum(swaps.values()) / (trials * 6)


def test_swap_rate_min_difference():
    res = stats.SwapRate(bin_low=np.array([0.0, 0.01, 0.02, 0.03]),
                         counts=np.array([10, 10, 0, 10]), swaps=np.array([4, 1, 0, 0]),
                         rate=np.array([0.4, 0.1, np.nan, 0.0]), overall=5 / 30,
                         subset_size=5, n_trials=10, bin_width=0.01)
    assert res.min_difference(0.05) == 0.02
    assert res.min_difference(0.5) == 0.0
    with pytest.raises(ParameterError):
        stats.swap_rate(np.ones((4, 2)), subset_size=3)
