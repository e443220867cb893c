"""The resampled statistics give, for a seed, the numbers they gave when block seeding was
introduced (issue 33): block sizes and block seeds are part of the results, so a change
to either (or to how a block draws) must show here, not slip through as "still the same
on any thread count". Only what the draws decide through counts is pinned (p-values,
swap counts, rank bounds), which no platform's floating point can move."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from irmetrics import parallel, stats
from irmetrics.stats.rank_intervals import rank_intervals

#: SHA-256 prefixes of the outputs below at commit 15dd18f (before session 11's changes).
PINNED = {"randomization": "a0c500dc40a6de9f18f6", "bootstrap": "d3a7518635473a3ecb71",
          "tukey": "1a2a4910e322e987dab7", "swap": "3ef384920535a80bd9e2",
          "rank_intervals": "9450d46926c9c4c2b5f8"}


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for array in arrays:
        h.update(np.ascontiguousarray(np.asarray(array, dtype=np.float64)).tobytes())
    return h.hexdigest()[:20]


def _outputs(threads: int) -> dict:
    rng = np.random.default_rng(2026)
    scores = np.round(np.clip(rng.beta(2, 3, (30, 1)) + np.linspace(0, 0.1, 6)
                              + rng.normal(0, 0.1, (30, 6)), 0, 1), 3)
    pairs = stats.system_pairs(6)
    a, b = scores[:, pairs[:, 0]], scores[:, pairs[:, 1]]
    randomization = stats.paired_test(a, b, test="randomization", n_resamples=3000,
                                      exact=False, seed=5, threads=threads)
    bootstrap = stats.paired_test(a, b, test="bootstrap", n_resamples=3000, seed=5,
                                  threads=threads)
    tukey = stats.tukey_hsd(scores.T, n_resamples=3000, seed=5, threads=threads)
    swap = stats.swap_rate(scores, n_trials=3000, seed=5, threads=threads)
    ranks = rank_intervals(scores, n_resamples=3000, seed=5, threads=threads)
    return {"randomization": _digest(randomization.p_value),
            "bootstrap": _digest(bootstrap.p_value), "tukey": _digest(tukey.p_values),
            "swap": _digest(swap.counts, swap.swaps),
            "rank_intervals": _digest(ranks.low, ranks.high)}


@pytest.mark.parametrize("threads", [1, 4])
def test_seeded_results_are_those_of_before(threads, monkeypatch):
    # 4 threads share even these small jobs (parallel.threads_for_work would keep them
    # on one): the work units' grouping must not move a number either
    monkeypatch.setattr(parallel, "MIN_THREAD_WORK", 1)
    assert _outputs(threads) == PINNED
