"""Segment primitives over CSR-packed per-query lists.

A *segment* is one query's slice ``offsets[q]:offsets[q + 1]`` of an entry array.
Every primitive here is vectorised over all queries at once and is correct for
empty segments. They are the only building blocks measure kernels use, so the
exactness rules of trec_eval (sequential summation in rank order) are honoured
here once:

* ``np.bincount`` with weights adds the weights of each bin strictly in index
  order, i.e. in rank order inside a segment, exactly like the C loop.
* Per-segment running sums of floats are computed row by row on a padded
  block (``seg_cumsum``), never as a global cumsum minus a base, which would
  round differently.
"""

from __future__ import annotations

import threading

import numpy as np

#: Padded blocks are cut so that one block holds at most this many cells.
_BLOCK_CELLS = 1 << 22


def lengths(offsets: np.ndarray) -> np.ndarray:
    """Number of entries of every segment."""
    return np.diff(offsets)


def ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``concatenate([arange(a, a + n) for a, n in zip(starts, sizes)])``, vectorised.

    >>> ranges(np.array([5, 0]), np.array([2, 3])).tolist()
    [5, 6, 0, 1, 2]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    shift = np.asarray(starts, dtype=np.int64) - (np.cumsum(sizes) - sizes)
    out = repeated(shift, sizes)
    out += np.arange(len(out), dtype=np.int64)
    return out


def repeated(values: np.ndarray, counts: np.ndarray, dtype=np.int64) -> np.ndarray:
    """``np.repeat(values, counts)`` for integer ``values``, as ``dtype``: one cumulative
    sum of the steps between consecutive runs. ``np.repeat`` copies run by run holding
    the interpreter lock (the threads of a grid wait for it); a cumulative sum leaves the
    lock, and is 4-9x faster on a few hundred runs of hundreds of entries. Exact: the
    steps and their sums wrap around alike where they overflow ``dtype``.

    >>> repeated(np.array([7, 3, 5]), np.array([2, 0, 3])).tolist()
    [7, 7, 5, 5, 5]
    """
    counts = np.asarray(counts)
    ends = np.cumsum(counts, dtype=np.int64)
    out = np.zeros(int(ends[-1]) if len(ends) else 0, dtype=dtype)
    if not len(out):
        return out
    nonempty = counts > 0
    runs = np.asarray(values)[nonempty].astype(dtype, copy=False)
    starts = (ends - counts)[nonempty]
    out[starts[0]] = runs[0]
    out[starts[1:]] = np.diff(runs)
    return np.cumsum(out, out=out)


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-d array, ascending: ``np.unique(values)`` without its
    check for masked arrays, whose first use imports ``numpy.ma`` (tens of milliseconds
    in a fresh process, on a road that is timed against C).

    >>> distinct(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    out = np.sort(np.asarray(values).reshape(-1))
    if out.size > 1:
        out = out[np.concatenate(([True], out[1:] != out[:-1]))]
    return out


def segment_ids(offsets: np.ndarray) -> np.ndarray:
    """Segment index of every entry (``seg`` in the design); 32-bit (half the memory of
    this per-entry array) unless there are 2**31 segments or more."""
    n_seg = len(offsets) - 1
    dtype = np.int32 if n_seg < 2**31 else np.int64
    return repeated(np.arange(n_seg, dtype=dtype), np.diff(offsets), dtype)


def ranks(offsets: np.ndarray) -> np.ndarray:
    """1-based position of every entry inside its segment."""
    out = np.ones(int(offsets[-1]), dtype=np.int64)
    starts = offsets[:-1][np.diff(offsets) > 0]
    # a segment's first entry steps back to 1 from the previous segment's last rank
    out[starts[1:]] = 1 - np.diff(starts)
    return np.cumsum(out, out=out)


def truncate(offsets: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray | slice]:
    """The first ``k`` entries of every segment: ``(new offsets, entry index)``."""
    lens = np.diff(offsets)
    if lens.size == 0 or lens.max() <= k:
        return offsets, slice(None)
    kept = np.minimum(lens, k)
    new_offsets = np.concatenate(([0], np.cumsum(kept))).astype(np.int64)
    index = ranges(offsets[:-1], kept)
    return new_offsets, index


def seg_sum(values: np.ndarray, seg: np.ndarray, n_seg: int) -> np.ndarray:
    """Sum of ``values`` per segment, added in entry order (float64)."""
    return np.bincount(seg, weights=values, minlength=n_seg).astype(np.float64, copy=False)


def seg_count(mask: np.ndarray, seg: np.ndarray, n_seg: int) -> np.ndarray:
    """Number of true entries per segment (int64)."""
    return np.bincount(seg[mask], minlength=n_seg).astype(np.int64, copy=False)


def seg_cumcount(mask: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running count of true entries inside each segment (inclusive), int64.

    Integer arithmetic is exact, so a global cumsum minus the segment base is safe.
    """
    total = np.cumsum(mask, dtype=np.int64)
    base = np.concatenate(([0], total))[offsets[:-1]]
    total -= repeated(base, np.diff(offsets))
    return total


def seg_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running sum of float ``values`` inside each segment, added sequentially (float64)."""
    return seg_accumulate(np.add, values, offsets)


def rev_cummax(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running maximum from the end of each segment towards its start."""
    return seg_accumulate(np.maximum, values, offsets, reverse=True)


def seg_accumulate(ufunc, values, offsets, *, reverse=False) -> np.ndarray:
    """``ufunc.accumulate`` restarted at every segment, strictly in entry order.

    Segments are laid out row-wise in padded blocks of bounded size and accumulated
    along each row, so every value is produced by the same sequence of operations a
    per-query loop would perform (bit-identical sums). With ``reverse`` the
    accumulation runs from the end of each segment towards its start.
    """
    values = np.asarray(values, dtype=np.float64)
    out = np.empty_like(values)
    lens = np.diff(offsets)
    for start, stop, width in _padded_blocks(lens):
        lo, hi = int(offsets[start]), int(offsets[stop])
        if hi == lo:
            continue
        rows = stop - start
        if hi - lo == rows * width:  # segments of one length: the entries are the block
            block = values[lo:hi].reshape(rows, width)
            into = out[lo:hi].reshape(rows, width)
            if reverse:
                block, into = block[:, ::-1], into[:, ::-1]
            ufunc.accumulate(block, axis=1, out=into)
            continue
        # each entry's cell in the flat block: one index array, scattered and gathered by
        # 1-D indexing (numpy leaves the interpreter lock to other threads meanwhile; the
        # 2-D index pair this replaced cost 3x the time)
        block_lens = lens[start:stop]
        row_start = np.arange(rows, dtype=np.int64) * width - (offsets[start:stop] - lo)
        if reverse:
            cell = repeated(row_start + (2 * (offsets[start:stop] - lo) + block_lens - 1),
                            block_lens)
            cell -= np.arange(hi - lo)
        else:
            cell = ranges(row_start + (offsets[start:stop] - lo), block_lens)
        block = _scratch(rows * width)
        block[cell] = values[lo:hi]
        ufunc.accumulate(block.reshape(rows, width), axis=1, out=block.reshape(rows, width))
        block.take(cell, out=out[lo:hi], mode="clip")  # in bounds: no check
    return out


def _padded_blocks(lens: np.ndarray) -> list[tuple[int, int, int]]:
    """``(start, stop, width)`` of the padded blocks of :func:`seg_accumulate`: from each
    start, as many segments as keep ``width * segments <= _BLOCK_CELLS`` (``width`` their
    longest, at least 1), and always one. Found by one cumulative maximum over a window
    of lengths (doubled while the block may be longer) instead of a Python step per
    segment, which held the interpreter lock for most of a grid's small batches."""
    n_seg = len(lens)
    blocks = []
    start = 0
    while start < n_seg:
        window = 1024
        while True:
            stop = min(n_seg, start + window)
            widths = np.maximum.accumulate(np.maximum(lens[start:stop], 1))
            cells = widths * np.arange(1, stop - start + 1)  # increasing
            fit = max(1, int(np.searchsorted(cells, _BLOCK_CELLS, side="right")))
            if fit < stop - start or stop == n_seg:
                break
            window *= 2
        blocks.append((start, start + fit, int(widths[fit - 1])))
        start += fit
    return blocks


#: Padded blocks of up to this many cells are laid out in a buffer of the thread's own,
#: reused from call to call: a fresh one is handed back to the system when freed and
#: faulted in again page by page by the next call (a grid makes hundreds of such calls,
#: and one process' page faults wait for each other across threads).
_SCRATCH_CELLS = 1 << 19

_SCRATCH = threading.local()


def _scratch(cells: int) -> np.ndarray:
    """``cells`` zeros: a view of this thread's reused buffer when it is small enough,
    else a new array. The caller must be done with it before its next call here."""
    if cells > _SCRATCH_CELLS:
        return np.zeros(cells, dtype=np.float64)
    buffer = getattr(_SCRATCH, "buffer", None)
    if buffer is None:
        buffer = _SCRATCH.buffer = np.empty(_SCRATCH_CELLS, dtype=np.float64)
    view = buffer[:cells]
    view.fill(0.0)
    return view


def seg_first(mask: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """1-based rank of the first true entry per segment, 0 where there is none."""
    n_seg = len(offsets) - 1
    out = np.zeros(n_seg, dtype=np.int64)
    idx = np.flatnonzero(mask)
    if idx.size:
        seg = np.searchsorted(offsets, idx, side="right") - 1
        first = np.ones(idx.size, dtype=bool)
        first[1:] = seg[1:] != seg[:-1]
        seg, idx = seg[first], idx[first]
        out[seg] = idx - offsets[seg] + 1
    return out


def at_rank(cum: np.ndarray, offsets: np.ndarray, k, *, fill=0):
    """Value of a per-entry running quantity at rank ``min(k, n)`` of every segment.

    ``k`` may be a scalar or a per-segment array. Segments where ``min(k, n) < 1``
    get ``fill``. This is the "pad beyond the list" rule of trec_eval's cutoff measures:
    a cutoff beyond the list reads the last entry.
    """
    lens = np.diff(offsets)
    pos = np.minimum(np.asarray(k, dtype=np.int64), lens)
    valid = pos >= 1
    idx = np.where(valid, offsets[:-1] + pos - 1, 0)
    if cum.size == 0:
        return np.full(len(lens), fill, dtype=np.result_type(cum.dtype, type(fill)))
    return np.where(valid, cum[idx], fill)
