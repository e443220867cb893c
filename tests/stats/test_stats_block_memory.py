"""The resampling statistics' memory rules (issue 33, session 15): a block's large
temporaries go into arrays each thread keeps for the call (``_common._Scratch``: the
randomization test's signs, the bootstraps' count matrices), the randomization test's
counts take magnitudes in place, and the paired tests' rounding scale
comes from column maxima and minima instead of matrix-sized temporaries. None of it may
move a number: the same bytes as the plain expressions, on 1 and on 4 threads; and a
scratch shared between threads (the planted bug) is caught."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from irmetrics import parallel, stats
from irmetrics.stats import _common, paired

FEW = settings(max_examples=25, deadline=None, derandomize=True)

#: Signed zeros, ties, negatives and magnitudes far apart.
VALUES = st.sampled_from([0.0, -0.0, 0.1, -0.1, 0.25, 1.0 / 3.0, -2.5, 1e-300, 7e5, 1.0])


def _matrices(max_rows=12, max_cols=5):
    shape = st.tuples(st.integers(1, max_rows), st.integers(1, max_cols))
    return shape.flatmap(lambda s: st.tuples(hnp.arrays(np.float64, s, elements=VALUES),
                                             hnp.arrays(np.float64, s, elements=VALUES)))


@FEW
@given(ab=_matrices())
def test_largest_magnitude_is_the_plain_expression(ab):
    a, b = ab
    np.testing.assert_array_equal(_common._largest_magnitude(a, b),
                                  np.maximum(np.abs(a), np.abs(b)).max(axis=0))
    # F-ordered columns (a fancy-indexed pair of score columns) too
    fa, fb = np.asfortranarray(a), np.asfortranarray(b)
    np.testing.assert_array_equal(_common._largest_magnitude(fa, fb),
                                  np.maximum(np.abs(fa), np.abs(fb)).max(axis=0))


@FEW
@given(ab=_matrices(), alternative=st.sampled_from(["two-sided", "less", "greater"]))
def test_counts_in_place_equal_counts_on_a_copy(ab, alternative):
    resampled, observed = ab[0], ab[1][0]
    gamma = np.full(observed.shape, 1e-12)
    kept = resampled.copy()
    plain = _common._at_least_as_extreme(kept, observed, alternative, gamma)
    np.testing.assert_array_equal(kept, resampled)          # not overwritten unless asked
    in_place = _common._at_least_as_extreme(kept, observed, alternative, gamma,
                                            overwrite=True)
    np.testing.assert_array_equal(plain, in_place)


def test_scratch_is_kept_per_thread_and_grows():
    scratch = _common._Scratch()
    first = scratch.get("x", (3, 4), np.float64)
    again = scratch.get("x", (2, 5), np.float64)
    assert np.shares_memory(first, again) and again.shape == (2, 5)
    bigger = scratch.get("x", (5, 5), np.float64)
    assert bigger.shape == (5, 5) and not np.shares_memory(first, bigger)
    assert scratch.get("x", (5, 5), np.int8).dtype == np.int8   # another dtype: its own
    seen = []
    barrier = threading.Barrier(2)

    def other():
        barrier.wait()
        seen.append(scratch.get("x", (5, 5), np.int8))

    helper = threading.Thread(target=other)
    helper.start()
    barrier.wait()
    helper.join()
    assert not np.shares_memory(seen[0], scratch.get("x", (5, 5), np.int8))


class _SharedScratch(_common._Scratch):
    """The planted bug: one array for every thread."""

    def __init__(self):
        self._shared = {}

    def get(self, name, shape, dtype):
        size = int(np.prod(shape))
        array = self._shared.get(name)
        if array is None or array.size < size:
            array = self._shared[name] = np.empty(size, dtype=dtype)
        return array[:size].reshape(shape)


def _randomization(threads):
    rng = np.random.default_rng(11)
    d = np.round(rng.normal(0.02, 0.1, (60, 40)), 3)
    return stats.paired_test(d, np.zeros_like(d), test="randomization", exact=False,
                             n_resamples=4000, seed=3, threads=threads).p_value


class _NumpyWithSlowAdd:
    """numpy for paired.py, with a pause after each ``np.add``: between a block's writing
    of its signs and its product, another thread gets to write the same array."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def add(*args, **kwargs):
        out = np.add(*args, **kwargs)
        threading.Event().wait(0.002)
        return out


def test_kept_signs_are_each_threads_own(monkeypatch):
    monkeypatch.setattr(parallel, "MIN_THREAD_WORK", 1)
    monkeypatch.setattr(_common, "_TARGET_BLOCKS", 16)
    one = _randomization(1)
    np.testing.assert_array_equal(_randomization(4), one)
    monkeypatch.setattr(paired, "np", _NumpyWithSlowAdd())
    np.testing.assert_array_equal(_randomization(4), one)   # each thread's own: no race
    # planted: the signs' array shared between threads, a block's signs overwritten by
    # another block's before its product reads them
    monkeypatch.setattr(paired, "_Scratch", _SharedScratch)
    assert not np.array_equal(_randomization(4), one)
    np.testing.assert_array_equal(_randomization(1), one)   # alone, it cannot show


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_paired_outputs_on_1_and_4_threads(test, monkeypatch):
    monkeypatch.setattr(parallel, "MIN_THREAD_WORK", 1)
    rng = np.random.default_rng(5)
    a = np.round(rng.random((80, 12)), 2)
    b = np.round(a + rng.normal(0.01, 0.05, a.shape), 2)
    one, four = (stats.paired_test(a, b, test=test, n_resamples=3000, seed=9,
                                   **({"exact": False} if test == "randomization" else {}),
                                   threads=threads) for threads in (1, 4))
    for field in ("p_value", "ci_low", "ci_high", "statistic", "mean_diff"):
        assert getattr(one, field).tobytes() == getattr(four, field).tobytes()


@FEW
@given(count=st.integers(1, 40), n=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_resample_counts_into_a_kept_array(count, n, seed):
    fresh = _common._resample_counts(np.random.default_rng(seed), count, n)
    kept = np.full((count, n), np.nan)
    into = _common._resample_counts(np.random.default_rng(seed), count, n, out=kept)
    assert into is kept and fresh.dtype == kept.dtype == np.float64
    np.testing.assert_array_equal(fresh, kept)
    assert (fresh.sum(axis=1) == n).all()          # each resample draws n rows
    # scipy.stats.bootstrap's index draws, counted
    draws = np.random.default_rng(seed).integers(0, n, size=(count, n))
    np.testing.assert_array_equal(
        fresh, [np.bincount(row, minlength=n) for row in draws])


def test_rank_intervals_on_1_and_4_threads(monkeypatch):
    from irmetrics.stats.rank_intervals import rank_intervals

    monkeypatch.setattr(parallel, "MIN_THREAD_WORK", 1)
    rng = np.random.default_rng(4)
    scores = np.round(rng.random((60, 7)), 2)
    one, four = (rank_intervals(scores, n_resamples=1500, seed=3, threads=t) for t in (1, 4))
    for field in ("low", "high", "critical_value"):
        assert np.asarray(getattr(one, field)).tobytes() == np.asarray(getattr(four, field)).tobytes()
