"""Segment primitives against per-segment Python loops, including empty segments."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics.engine import segments as sg


@st.composite
def segmented(draw):
    lens = draw(st.lists(st.integers(0, 6), min_size=1, max_size=8))
    offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    values = np.array(draw(st.lists(st.floats(-5, 5, allow_nan=False), min_size=int(offsets[-1]),
                                    max_size=int(offsets[-1]))), dtype=np.float64)
    return offsets, values


def slices(offsets):
    return [slice(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:])]


@settings(max_examples=200, deadline=None)
@given(segmented())
def test_running_sums_and_maxima_equal_loops(data):
    offsets, values = data
    cum = sg.seg_cumsum(values, offsets)
    rmax = sg.rev_cummax(values, offsets)
    for s in slices(offsets):
        running = 0.0
        for i in range(s.start, s.stop):
            running += values[i]
            assert cum[i] == running  # bit-identical sequential sum
        for i in range(s.start, s.stop):
            assert rmax[i] == values[i:s.stop].max()


@settings(max_examples=200, deadline=None)
@given(segmented(), st.integers(0, 8))
def test_at_rank_first_and_counts(data, k):
    offsets, values = data
    mask = values > 0
    seg = sg.segment_ids(offsets)
    cumcount = sg.seg_cumcount(mask, offsets)
    first = sg.seg_first(mask, offsets)
    at_k = sg.at_rank(cumcount, offsets, k)
    total = sg.seg_sum(values, seg, len(offsets) - 1)
    for q, s in enumerate(slices(offsets)):
        m = mask[s]
        assert list(cumcount[s]) == list(np.cumsum(m))
        hits = np.flatnonzero(m)
        assert first[q] == (hits[0] + 1 if hits.size else 0)
        assert at_k[q] == m[:k].sum()
        assert total[q] == sum(values[s].tolist(), 0.0) or np.isclose(total[q], values[s].sum())


def test_at_rank_accepts_per_segment_cutoffs_and_empty_input():
    offsets = np.array([0, 3, 3, 5])
    cum = np.array([1, 1, 2, 0, 1])
    assert sg.at_rank(cum, offsets, np.array([2, 5, 9])).tolist() == [1, 0, 1]
    assert sg.at_rank(np.zeros(0, np.int64), np.array([0, 0]), 3).tolist() == [0]


def _greedy_blocks(lens, cells):
    """The block rule of seg_accumulate, one segment at a time (the reference)."""
    blocks, start = [], 0
    while start < len(lens):
        width, stop = max(int(lens[start]), 1), start + 1
        while stop < len(lens) and max(width, int(lens[stop])) * (stop + 1 - start) <= cells:
            width, stop = max(width, int(lens[stop])), stop + 1
        blocks.append((start, stop, width))
        start = stop
    return blocks


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=3000), st.sampled_from([1, 7, 64, 5000, 1 << 22]))
def test_padded_blocks_are_the_greedy_blocks(lens, cells):
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sg, "_BLOCK_CELLS", cells)
        assert sg._padded_blocks(np.array(lens, dtype=np.int64)) == _greedy_blocks(lens, cells)


@settings(max_examples=100, deadline=None)
@given(segmented(), st.sampled_from([1, 5, 13]), st.booleans())
def test_running_sums_across_blocks_and_a_reused_buffer(data, cells, reverse):
    """Many small blocks (each laid out in the thread's reused buffer, which holds the
    previous block's numbers): the same values as one segment at a time."""
    import pytest

    offsets, values = data
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sg, "_BLOCK_CELLS", cells)
        with np.errstate(over="ignore", invalid="ignore"):
            sg.seg_accumulate(np.multiply, values * 1e300, offsets)  # leaves inf behind
        got = sg.seg_accumulate(np.add, values, offsets, reverse=reverse)
    for s in slices(offsets):
        part = values[s][::-1] if reverse else values[s]
        want = np.add.accumulate(part)
        assert got[s].tolist() == (want[::-1] if reverse else want).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**63, 2**63 - 1), st.integers(0, 5)), max_size=30),
       st.integers(0, 7))
def test_repeated_ranks_ranges_and_truncate_equal_np_repeat(runs, k):
    """The cumulative-sum forms against numpy's repeat and per-segment loops, with empty
    segments and values whose steps overflow int64."""
    values = np.array([v for v, _ in runs], dtype=np.int64)
    counts = np.array([c for _, c in runs], dtype=np.int64)
    assert sg.repeated(values, counts).tolist() == np.repeat(values, counts).tolist()
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    assert sg.ranks(offsets).tolist() == [r for c in counts.tolist() for r in range(1, c + 1)]
    assert sg.segment_ids(offsets).tolist() == np.repeat(np.arange(len(counts)), counts).tolist()
    starts = np.abs(values) % 1000
    assert sg.ranges(starts, counts).tolist() == [
        s + j for s, c in zip(starts.tolist(), counts.tolist()) for j in range(c)]
    new_offsets, index = sg.truncate(offsets, k)
    entries = np.arange(int(offsets[-1]))
    assert entries[index].tolist() == [i for a, b in zip(offsets[:-1], offsets[1:])
                                       for i in range(a, min(b, a + k))]
    assert np.diff(new_offsets).tolist() == np.minimum(counts, k).tolist()
