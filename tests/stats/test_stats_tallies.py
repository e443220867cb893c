"""The ranking statistics' pairwise tallies computed with the rows innermost (many
bootstrap resamples of a few dozen systems, issue 33 session 15) are the tallies of the
histogram road, count for count and dtype for dtype, and ranking_agreement's numbers do
not move with the road."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics import stats
from irmetrics.stats import _common, agreement

FEW = settings(max_examples=30, deadline=None, derandomize=True)


@st.composite
def score_rows(draw):
    """(B, m) pairs of score rows with many ties (few distinct values), B >= 64."""
    rows = draw(st.integers(agreement._ROWS_INNER, 200))
    m = draw(st.integers(1, 24))
    seed = draw(st.integers(0, 2**32 - 1))
    levels = draw(st.integers(1, 6))
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, (rows, m)) / levels
    y = np.where(rng.random((rows, m)) < 0.3, x, rng.integers(0, levels, (rows, m)) / levels)
    return x, -y if draw(st.booleans()) else y


def _fields(t):
    return {f.name: getattr(t, f.name) for f in dataclasses.fields(t)}


#: Arrays kept between examples, as ranking_agreement keeps them between runs of blocks
#: (of other sizes: the last run is shorter).
KEPT = _common._Scratch()


@FEW
@given(xy=score_rows(), kept=st.sampled_from([None, KEPT]))
def test_rows_inner_equals_histogram(xy, kept):
    x, y = xy
    inner = _fields(agreement._tallies_rows_inner(x, y, kept))
    for name, counts in _fields(agreement._tallies_by_histogram(x, y)).items():
        assert inner[name].dtype == counts.dtype and inner[name].flags.c_contiguous
        np.testing.assert_array_equal(inner[name], counts, err_msg=name)


def test_rows_inner_in_pieces(monkeypatch):
    # pieces of rows (a _PAIR_BLOCK smaller than the rows' comparisons) count the same
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 4, (300, 9)) / 4, rng.integers(0, 4, (300, 9)) / 4
    whole = _fields(agreement._tallies_rows_inner(x, y))
    monkeypatch.setattr(agreement, "_PAIR_BLOCK", 9 * 9 * 7)
    for name, counts in _fields(agreement._tallies_rows_inner(x, y)).items():
        np.testing.assert_array_equal(counts, whole[name], err_msg=name)


@pytest.mark.parametrize("shape, inner", [((64, 20), True), ((63, 20), False),
                                          ((500, 181), True), ((500, 182), False)])
def test_which_road(shape, inner, monkeypatch):
    taken = []
    monkeypatch.setattr(agreement, "_tallies_rows_inner",
                        lambda x, y, kept: taken.append("inner")
                        or agreement._tallies_by_histogram(x, y))
    x = np.zeros(shape)
    agreement._tallies(x, x)
    assert (taken == ["inner"]) == inner


def test_ranking_agreement_does_not_move_with_the_road(monkeypatch):
    rng = np.random.default_rng(8)
    x = np.round(rng.random((40, 12)), 2)
    y = np.round(x + rng.normal(0, 0.05, x.shape), 2)
    fast = stats.ranking_agreement(x, y, k=4, n_resamples=700, seed=2, threads=1)
    monkeypatch.setattr(agreement, "_ROWS_INNER", 10**9)      # the histogram road only
    slow = stats.ranking_agreement(x, y, k=4, n_resamples=700, seed=2, threads=1)
    for field in ("estimate", "ci_low", "ci_high"):
        assert getattr(fast, field).tobytes() == getattr(slow, field).tobytes()
