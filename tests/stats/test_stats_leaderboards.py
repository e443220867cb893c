"""irmetrics.stats.rank_intervals and .topic_set_size, validated by simulation and oracles.

Rank intervals: on simulated leaderboards whose true ranks are known, the simultaneous
intervals must cover every true rank at once in at least 93 % of leaderboards at a nominal
95 % (a small version of the 1,000-leaderboard figure in docs/leaderboards.md, made by
benchmarks/bench_rank_intervals.py). Topic set sizes: statsmodels' power solvers and
simulated tests and intervals.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.power import FTestAnovaPower, TTestPower

from irmetrics.exceptions import DegenerateTestWarning, ParameterError, ShapeError
from irmetrics.stats import rank_intervals as ri
from irmetrics.stats import topic_set_size as tss


def simulated_leaderboard(rng, m=6, n=40):
    true = np.sort(rng.uniform(0.2, 0.6, m))[::-1]
    scores = true + rng.normal(0, 0.15, (n, 1)) + rng.normal(0, 0.1, (n, m))
    return scores, np.arange(1, m + 1)


def covered(result, true_rank):
    return bool(np.all((result.low <= true_rank) & (true_rank <= result.high)))


def test_rank_intervals_cover_true_ranks_simultaneously():
    rng = np.random.default_rng(2024)
    hits = [covered(ri.rank_intervals(s, n_resamples=300, seed=i, threads=1), t)
            for i, (s, t) in enumerate(simulated_leaderboard(rng) for _ in range(150))]
    assert np.mean(hits) >= 0.93


def benchmark_of_tasks(rng, m=5, n_tasks=12):
    true = np.linspace(0.55, 0.45, m)  # population means over tasks, distinct
    tasks = []
    for _ in range(n_tasks):
        effect = rng.normal(0, 0.08, m)   # systems do better on some tasks than others
        n = int(rng.integers(40, 80))
        tasks.append(true + effect + rng.normal(0, 0.1, (n, 1)) + rng.normal(0, 0.05, (n, m)))
    return tasks, np.arange(1, m + 1)


def test_two_level_bootstrap_covers_and_topic_level_alone_does_not():
    rng = np.random.default_rng(38)
    two, topics = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateTestWarning)
        for i in range(60):
            tasks, true = benchmark_of_tasks(rng)
            two.append(covered(ri.aggregate_rank_intervals(
                tasks, resampling="two-level", n_resamples=300, seed=i, threads=1), true))
            topics.append(covered(ri.aggregate_rank_intervals(
                tasks, resampling="topics", n_resamples=300, seed=i, threads=1), true))
    assert np.mean(two) >= 0.93
    # topics alone ignore how systems vary across tasks: they claim more than they know
    assert np.mean(topics) < 0.8


def test_same_numbers_whatever_the_thread_count():
    tasks, _ = benchmark_of_tasks(np.random.default_rng(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateTestWarning)
        one = ri.aggregate_rank_intervals(tasks, aggregation="borda", n_resamples=400, threads=1)
        four = ri.aggregate_rank_intervals(tasks, aggregation="borda", n_resamples=400, threads=4)
    assert one.critical_value == four.critical_value
    assert one.low.tolist() == four.low.tolist() and one.high.tolist() == four.high.tolist()


def test_clear_leaders_and_ties():
    rng = np.random.default_rng(3)
    base = rng.normal(0, 0.05, (60, 1))
    scores = base + np.array([0.8, 0.8, 0.5, 0.2]) + rng.normal(0, 0.01, (60, 4))
    r = ri.rank_intervals(scores, n_resamples=500)
    assert r.tied_with_best.tolist() == [True, True, False, False]
    assert r.n_separable == 2 and r.separable.tolist()[1:] == [True, True]
    assert [row["system"] for row in r.rows("abcd")][2:] == ["c", "d"]
    with pytest.warns(DegenerateTestWarning, match="no system can be told apart"):
        flat = ri.rank_intervals(np.full((10, 3), 0.5), n_resamples=100)
    assert flat.low.tolist() == [1, 1, 1] and flat.high.tolist() == [3, 3, 3]


def test_aggregations_against_loops():
    rng = np.random.default_rng(5)
    tasks = [rng.integers(0, 3, size=(n, 4)) / 2.0 for n in (3, 5, 4)]  # ties on purpose
    means = [t.mean(axis=0) for t in tasks]
    np.testing.assert_allclose(ri.aggregate_scores(tasks), np.mean(means, axis=0))
    ranks = []
    for mu in means:  # average ranks, 1 = best, by hand
        ranks.append([1 + sum(o > v for o in mu) + (sum(o == v for o in mu) - 1) / 2 for v in mu])
    ranks = np.array(ranks)
    np.testing.assert_allclose(ri.aggregate_scores(tasks, aggregation="mean_rank"),
                               ranks.mean(axis=0))
    np.testing.assert_allclose(ri.aggregate_scores(tasks, aggregation="borda"),
                               (4 - ranks).mean(axis=0))


def test_bad_input_is_named():
    with pytest.raises(ParameterError, match=r"tasks\[1\].*topic row 2, system column 1"):
        ri.aggregate_rank_intervals([np.ones((3, 2)), [[1, 2], [3, 4], [5, np.nan]]])
    with pytest.raises(ShapeError, match="the 2 systems of the first task"):
        ri.aggregate_rank_intervals([np.ones((3, 2)), np.ones((3, 3))])
    with pytest.warns(DegenerateTestWarning, match=r"tasks \[1\] have one topic"):
        ri.aggregate_rank_intervals([np.eye(3, 2), np.ones((1, 2))], resampling="topics",
                                    n_resamples=50)
    with pytest.raises(ParameterError, match="`resampling` must be one of"):
        ri.aggregate_rank_intervals([np.ones((3, 2))], resampling="both")


@pytest.mark.parametrize("variance, difference", [(0.02, 0.05), (0.05, 0.1), (0.01, 0.02)])
def test_t_design_matches_statsmodels(variance, difference):
    want = TTestPower().solve_power(effect_size=difference / math.sqrt(variance), alpha=0.05,
                                    power=0.8)
    assert tss.topic_set_size(variance, design="t", difference=difference) == math.ceil(want)


@pytest.mark.parametrize("m", [3, 10])
def test_anova_design_matches_statsmodels(m):
    variance, difference = 0.015, 0.08
    f = math.sqrt(difference**2 / (2 * m * variance))
    n = tss.topic_set_size(variance, design="anova", difference=difference, n_systems=m)
    assert FTestAnovaPower().power(effect_size=f, nobs=m * n, alpha=0.05, k_groups=m) >= 0.8
    assert FTestAnovaPower().power(effect_size=f, nobs=m * (n - 1), alpha=0.05, k_groups=m) < 0.8


def test_designs_hold_in_simulation():
    from scipy import stats as sps

    rng = np.random.default_rng(9)
    variance, d = 0.02, 0.05
    n = tss.topic_set_size(variance, design="t", difference=d)
    diffs = rng.normal(d, math.sqrt(variance), size=(4000, n))
    rejected = sps.ttest_1samp(diffs, 0.0, axis=1).pvalue <= 0.05
    assert abs(rejected.mean() - tss.t_test_power(n, d, variance)) < 0.025
    assert tss.t_test_power(n - 1, d, variance) < 0.8 <= tss.t_test_power(n, d, variance)
    m, sigma2, rng_d = 4, 0.01, 0.1
    n = tss.topic_set_size(sigma2, design="anova", difference=rng_d, n_systems=m)
    means = np.array([rng_d / 2, -rng_d / 2, 0.0, 0.0])
    groups = means + rng.normal(0, math.sqrt(sigma2), size=(3000, n, m))
    p = sps.f_oneway(*[groups[:, :, j] for j in range(m)], axis=1).pvalue
    assert abs((p <= 0.05).mean() - tss.anova_power(n, rng_d, sigma2, n_systems=m)) < 0.03
    w = 0.06
    n = tss.topic_set_size(variance, design="ci", width=w)
    sims = rng.normal(0, math.sqrt(variance), size=(4000, n))
    widths = 2 * sps.t.ppf(0.975, n - 1) * sims.std(axis=1, ddof=1) / math.sqrt(n)
    assert widths.mean() <= w * 1.01
    sims = sims[:, : n - 2]
    widths = 2 * sps.t.ppf(0.975, n - 3) * sims.std(axis=1, ddof=1) / math.sqrt(n - 2)
    assert widths.mean() > w


def test_design_errors():
    with pytest.raises(ParameterError, match="`variance` must be a positive number"):
        tss.topic_set_size(0.0, difference=0.1)
    with pytest.raises(ParameterError, match="`width` must be a positive number for design='ci'"):
        tss.topic_set_size(0.1, design="ci")
    with pytest.raises(ShapeError, match="at least 2 topics and 2 systems"):
        tss.pilot_variance([[0.1, 0.2]])
    rows = tss.topic_set_sizes(np.random.default_rng(0).random((30, 3)), [0.05, 0.2])
    assert rows[0].t > rows[1].t and rows[0].anova > rows[1].anova and rows[0].ci > rows[1].ci


grid = st.integers(0, 4).map(lambda v: v / 4)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 6).flatmap(lambda m: st.lists(st.lists(grid, min_size=m, max_size=m),
                                                    min_size=1, max_size=12)),
       st.sampled_from(ri.AGGREGATIONS))
def test_observed_rank_lies_in_its_interval(rows, aggregation):
    scores = np.array(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateTestWarning)
        r = ri.aggregate_rank_intervals([scores, scores[::-1]], aggregation=aggregation,
                                        resampling="topics", n_resamples=60, seed=1,
                                        task_types=["A", "B"])
    m = scores.shape[1]
    assert np.all((1 <= r.low) & (r.low <= r.rank) & (r.rank <= r.high) & (r.high <= m))
    assert r.tied_with_best[r.order[0]] and r.n_separable <= m - 1
    better = r.surely_better
    assert not np.any(better & better.T)  # never both ways
