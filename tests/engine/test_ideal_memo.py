"""engine.gains.ideal_memo: a grid's runs share the ideal gains of their query blocks.

The memo must give exactly what computing again gives, for any inputs, and never hand
one call's ideal to another with other label counts, levels or gain pairs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics.engine import gains as gains_module
from irmetrics.engine.gains import compute_gains, ideal_memo

EMPTY = np.zeros(0, dtype=np.int64)
PAIRS = [(), (("1", 3.0),), (("2", 0.5), ("0", 1.0)), (("1", -2.0), ("3", 7.0))]


def _same(a, b) -> bool:
    return all(np.asarray(getattr(a, f)).tobytes() == np.asarray(getattr(b, f)).tobytes()
               for f in ("entry_gain", "ideal_offsets", "ideal_gain", "stop_gain", "top_gain",
                         "table_min", "table_max", "table_size", "entry_in_table"))


@st.composite
def histograms(draw):
    queries = draw(st.integers(0, 6))
    width = draw(st.integers(1, 5))
    cells = draw(st.lists(st.integers(0, 3), min_size=queries * width,
                          max_size=queries * width))
    hist = np.array(cells, dtype=np.int64).reshape(queries, width)
    levels = None
    if draw(st.booleans()):  # sparse levels, negatives among them
        levels = np.array(sorted(draw(st.sets(st.integers(-2, 9), min_size=width,
                                              max_size=width))), dtype=np.int64)
    return hist, levels


@settings(max_examples=60, deadline=None)
@given(calls=st.lists(st.tuples(histograms(), st.sampled_from(PAIRS)), min_size=1,
                      max_size=6))
def test_the_memo_gives_what_computing_gives(calls):
    store: dict = {}
    for (hist, levels), pairs in calls + calls:  # every call twice: the second from the store
        alone = compute_gains(pairs, hist, EMPTY, EMPTY, levels)
        with ideal_memo(store):
            kept = compute_gains(pairs, hist.copy(), EMPTY, EMPTY, levels)
        assert _same(kept, alone)


def test_inputs_that_differ_get_their_own_ideal():
    # planted: a store keyed without the pairs, the levels or the counts would hand the
    # first ideal to the next call
    hist = np.array([[1, 2, 1]])
    store: dict = {}
    with ideal_memo(store):
        plain = compute_gains((), hist, EMPTY, EMPTY)
        mapped = compute_gains((("2", 9.0),), hist, EMPTY, EMPTY)
        levels = compute_gains((), hist, EMPTY, EMPTY, np.array([0, 1, 5]))
        counts = compute_gains((), np.array([[1, 2, 2]]), EMPTY, EMPTY)
        again = compute_gains((), hist.copy(), EMPTY, EMPTY)
    assert plain.ideal_gain.tolist() == [2.0, 1.0, 1.0]
    assert mapped.ideal_gain.tolist() == [9.0, 1.0, 1.0]
    assert levels.ideal_gain.tolist() == [5.0, 1.0, 1.0]
    assert counts.ideal_gain.tolist() == [2.0, 2.0, 1.0, 1.0]
    assert again is plain


def test_kept_ideals_are_read_only_and_entries_are_never_kept():
    hist = np.array([[0, 1, 1]])
    store: dict = {}
    with ideal_memo(store):
        kept = compute_gains((), hist, EMPTY, EMPTY)
        ranked = compute_gains((), hist, np.array([2, 0]), np.array([0, 0]))
    with pytest.raises(ValueError):
        kept.ideal_gain[0] = 7.0
    assert ranked is not kept and ranked.entry_gain.tolist() == [2.0, 0.0]
    assert ranked.ideal_gain.flags.writeable  # not from the store
    outside = compute_gains((), hist, EMPTY, EMPTY)  # no memo in effect: computed anew
    assert outside is not kept and outside.ideal_gain.flags.writeable


def test_the_store_keeps_no_more_than_its_bytes(monkeypatch):
    monkeypatch.setattr(gains_module, "IDEAL_MEMO_BYTES", 0)
    store: dict = {}
    hist = np.array([[1, 1]])
    with ideal_memo(store):
        first = compute_gains((), hist, EMPTY, EMPTY)
        second = compute_gains((), hist, EMPTY, EMPTY)
    assert second is not first and _same(first, second)
    assert not [key for key in store if isinstance(key, tuple)]


def test_memos_nest_and_end_with_their_body():
    outer_store: dict = {}
    inner_store: dict = {}
    hist = np.array([[2, 1]])
    with ideal_memo(outer_store):
        with ideal_memo(inner_store):
            compute_gains((), hist, EMPTY, EMPTY)
        compute_gains((), np.array([[1, 3]]), EMPTY, EMPTY)
    compute_gains((), np.array([[4, 4]]), EMPTY, EMPTY)  # after both bodies: kept nowhere
    assert len([k for k in inner_store if isinstance(k, tuple)]) == 1
    assert len([k for k in outer_store if isinstance(k, tuple)]) == 1
