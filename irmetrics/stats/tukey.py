"""Randomised Tukey HSD over ``m`` systems blocked on topics (Carterette 2012)."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from irmetrics.checks import check_positive_int, parameter_error
from irmetrics.exceptions import ShapeError
from irmetrics.parallel import resolve_threads
from ._common import TukeyHSD, _REL_TOL, _Scratch, _check_finite, _check_seed, _map_blocks


def tukey_hsd(scores: Any, *, n_resamples: int = 10_000, seed: Any = 0,
              threads: int | None = None) -> TukeyHSD:
    r"""Randomised Tukey HSD over systems, blocked on topics (Carterette, TOIS 2012).

    ``scores[i, q]`` is system ``i`` on query ``q``; :math:`\bar x_i` the system means.
    Each of ``B = n_resamples`` resamples permutes the ``m`` system labels independently
    within every query (uniformly, all ``m!`` orders equally likely) and records the range
    :math:`R^* = \max_i \bar x^*_i - \min_i \bar x^*_i`. The adjusted p-value of pair
    ``(i, j)`` is

    .. math:: p_{ij} = \frac{\#\{R^* \ge |\bar x_i - \bar x_j| - \gamma\} + 1}{B + 1}

    (:math:`\gamma = 100\,\epsilon\,(|\bar x_i - \bar x_j| + \overline{|x|})`, a rounding
    tolerance), which controls the family-wise error rate over all pairs (a difference is compared with
    the null distribution of the largest difference).

    Parameters
    ----------
    scores : array-like, shape (m, n) or (m, n, k)
        ``m >= 2`` systems, ``n >= 1`` queries, ``k`` measures. Finite. All ``k`` columns
        share the same permutations.
    n_resamples : int
    seed : int, numpy.random.Generator or None
        Seed of the permutations; the same seed gives the same p-values whatever
        ``threads``.
    threads : int or None
        Threads drawing the permutations (:func:`irmetrics.parallel.resolve_threads`).

    Returns
    -------
    TukeyHSD

    Notes
    -----
    Cost is O(B n m k); m = 10, n = 7000, k = 5, B = 10,000 takes about 13 s of one core,
    shared by ``threads``. The permutations are drawn in blocks of resamples whose size
    depends on ``n, m`` and ``B`` only, block ``i`` from generator ``i`` of
    :func:`irmetrics.parallel.block_generators`: per block one ``rng.integers(0, m!, size=(rows, n))`` call (m <= 20) gives a rank per
    query, decoded by Fisher-Yates (rank digits in the mixed radix ``m, m-1, ..., 2`` are
    the swap positions). With ``m = 2`` this is the paired randomization (sign-flip) test
    of the two systems.

    Examples
    --------
    >>> scores = [[0.2, 0.4, 0.6, 0.3, 0.5],
    ...           [0.3, 0.5, 0.7, 0.4, 0.6],
    ...           [0.2, 0.4, 0.6, 0.3, 0.55]]
    >>> res = tukey_hsd(scores, n_resamples=999, seed=1)
    >>> res.means.round(2)
    array([0.4 , 0.5 , 0.41])
    >>> res.statistic[1, 0].round(2), res.p_values.shape, float(res.p_values[2, 2])
    (np.float64(0.1), (3, 3), 1.0)
    """
    try:
        array = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error("scores", "an array of real numbers", scores) from None
    if array.ndim not in (2, 3):
        raise ShapeError(f"`scores` must be 2-D (m, n) or 3-D (m, n, k); got shape {array.shape}.")
    if array.shape[0] < 2 or array.shape[1] < 1:
        raise ShapeError(f"`scores` must have at least 2 systems and 1 query; got shape {array.shape}.")
    two_d = array.ndim == 2
    cube = array[:, :, None] if two_d else array
    _check_finite("scores", cube.reshape(cube.shape[0], -1))
    n_resamples = check_positive_int("n_resamples", n_resamples)
    seed = _check_seed(seed)
    resolve_threads(threads)

    m, n, k = cube.shape
    means = cube.mean(axis=1)                               # (m, k)
    statistic = means[:, None, :] - means[None, :, :]       # (m, m, k)
    ranges = _permuted_ranges(cube, n_resamples, seed, threads)  # (B, k)
    observed = np.abs(statistic)
    # Sums of n scores round at the scale of the scores, not of their (maybe tiny) difference.
    threshold = observed - _REL_TOL * (observed + np.abs(cube).mean(axis=(0, 1)))
    ranges.sort(axis=0)
    counts = np.empty((m, m, k), dtype=np.int64)
    for j in range(k):  # columns (measures): one vectorised search each
        counts[:, :, j] = n_resamples - np.searchsorted(ranges[:, j], threshold[:, :, j], side="left")
    p_values = (counts + 1.0) / (n_resamples + 1.0)
    p_values[np.arange(m), np.arange(m)] = 1.0
    if two_d:
        means, statistic, p_values = means[:, 0], statistic[:, :, 0], p_values[:, :, 0]
    return TukeyHSD(means=means, statistic=statistic, p_values=p_values, n_resamples=n_resamples)


def _permuted_ranges(cube: np.ndarray, n_resamples: int, seed: Any, threads: Any) -> np.ndarray:
    """Range of the system means for each resample; labels permuted within each query.

    The block of resamples depends on ``n``, ``m`` and ``B`` only, so a column's p-values
    do not change when other columns are added; columns are gathered in groups to bound
    memory. Blocks run on ``threads`` threads.
    """
    m, n, k = cube.shape
    by_query = np.ascontiguousarray(cube.transpose(1, 0, 2)).reshape(n * m, k)  # row q*m + i
    row_base = (np.arange(n, dtype=np.intp) * m)[:, None]
    # Each thread's largest arrays (the picks and the gathered scores, up to 16 MiB a
    # block) are kept for its next block of this call: allocated afresh, they came from
    # mmap and were faulted in page by page for every block (200,000 page faults per
    # call on 20 systems x 250 topics, 40 % of its CPU in the kernel, and page faults of
    # one process' threads wait for each other). Dropped with the call.
    scratch = _Scratch().get

    def block(size, rng):
        picks = np.add(_random_permutations(rng, size * n, m).reshape(size, n, m), row_base,
                       out=scratch("picks", (size, n, m), np.intp))
        ranges = np.empty((size, k))
        for first in range(0, k, _TUKEY_COLUMN_GROUP):
            columns = by_query[:, first:first + _TUKEY_COLUMN_GROUP]
            # mode="clip" (the picks are all in range): np.take then writes into ``out``
            # directly, where the default mode buffers the result in a fresh array first
            gathered = np.take(columns, picks, axis=0, mode="clip", out=scratch(
                "gathered", (size, n, m, columns.shape[1]), columns.dtype))
            sums = gathered.sum(axis=1)   # (size, m, group)
            ranges[:, first:first + _TUKEY_COLUMN_GROUP] = (sums.max(axis=1) - sums.min(axis=1)) / n
        return ranges

    return np.concatenate(_map_blocks(block, n_resamples, n * m * _TUKEY_COLUMN_GROUP, seed,
                                      threads))


#: Columns gathered together by the Tukey resampling (memory: rows * n * m * this).
_TUKEY_COLUMN_GROUP = 8
#: Up to this many permutations (10! = 3.6M rows of int8, 36 MB) a table of all of them,
#: indexed by rank, replaces decoding each rank.
_PERMUTATION_TABLE_MAX = math.factorial(10)
#: 20! < 2**63: one int64 rank per permutation.
_MAX_RANKED_M = 20


def _random_permutations(rng: np.random.Generator, count: int, m: int) -> np.ndarray:
    """``count`` uniform random permutations of ``range(m)``, shape (count, m).

    For m <= 20 one ``rng.integers(0, m!, count)`` draw per permutation is decoded by
    :func:`_unrank` (through a table of all of them when m! <= 10!); for larger m the swap
    positions of Fisher-Yates are drawn directly, ``rng.integers(0, [m, ..., 2], (count, m-1))``.
    """
    if m > _MAX_RANKED_M:
        swaps = rng.integers(0, np.arange(m, 1, -1), size=(count, m - 1))
        return _fisher_yates(swaps, m)
    ranks = rng.integers(0, math.factorial(m), size=count, dtype=np.int64)
    if math.factorial(m) <= _PERMUTATION_TABLE_MAX:
        return np.take(_permutation_table(m), ranks, axis=0)
    return _unrank(ranks, m)


def _unrank(ranks: np.ndarray, m: int, tail: int | None = None) -> np.ndarray:
    """Permutation of each rank in [0, m!): its mixed-radix digits are the Fisher-Yates swaps.

    ``rank = j_{m-1} + m (j_{m-2} + (m-1) (...))`` with ``j_i`` in [0, i]: uniform ranks give
    independent uniform swap positions, hence uniform permutations.

    Swap ``i <-> j_i`` for i = m-1, ..., 1 (:func:`_swap`). The swaps below ``tail`` (default :data:`_UNRANK_TAIL`; 1: none)
    touch the first positions only and their digits are the rank left, which
    :func:`_permutation_table` of that size decodes at once: one gather replaces the
    last swaps.
    """
    count = ranks.shape[0]
    order, base = _identities(count, m)
    rows = order.reshape(count, m)
    # Unsigned, and ``rest - (rest // r) * r`` for the digit: numpy divides by a scalar
    # through a multiply-and-shift for ``//`` but not in ``np.divmod`` (13,000 int64 by
    # 19: divmod 33 us; uint64 ``//`` 5 us, the product and difference 6 us).
    rest = ranks.astype(np.uint64)
    quotient, digit = np.empty(count, dtype=np.uint64), np.empty(count, dtype=np.uint64)
    low = max(1, min(_UNRANK_TAIL if tail is None else tail, m))
    at = np.empty(count, dtype=np.intp)
    for i in range(m - 1, low - 1, -1):
        radix = np.uint64(i + 1)
        np.floor_divide(rest, radix, out=quotient)
        np.subtract(rest, np.multiply(quotient, radix, out=digit), out=digit)
        _swap(order, rows, i, np.add(base, digit.view(np.intp), out=at))
        rest, quotient = quotient, rest
    if low > 1:  # the swaps i = low-1, ..., 1 of digits ``rest`` < low!: a table's row
        picks = np.add(np.take(_permutation_table(low), rest.view(np.intp), axis=0),
                       base[:, None])
        rows[:, :low] = order[picks]
    return rows


#: The last swaps of :func:`_unrank` decoded by a table of this many positions
#: (8! rows of 8 bytes: 315 KiB, kept in the core's cache).
_UNRANK_TAIL = 8


def _fisher_yates(swaps: np.ndarray, m: int) -> np.ndarray:
    """Apply swap ``i <-> swaps[:, step]`` for i = m-1, ..., 1 to the identity; (count, m)."""
    count = swaps.shape[0]
    order, base = _identities(count, m)
    rows = order.reshape(count, m)
    at = np.empty(count, dtype=np.intp)
    for step, i in enumerate(range(m - 1, 0, -1)):  # positions, vectorised over permutations
        _swap(order, rows, i, np.add(base, swaps[:, step], out=at))
    return rows


def _identities(count: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` identity permutations, flat, and the offset of each one (a broadcast
    copy: ``np.tile`` holds the interpreter lock while it copies, this does not)."""
    row = np.arange(m, dtype=np.int8 if m <= 127 else np.intp)
    order = np.broadcast_to(row, (count, m)).copy().reshape(-1)
    return order, np.arange(count, dtype=np.intp) * m


def _swap(flat: np.ndarray, rows: np.ndarray, i: int, at_j: np.ndarray) -> None:
    """Swap position ``i`` of every permutation (``rows``, a (count, m) view of ``flat``)
    with the entry of ``flat`` at ``at_j`` (each one's position j, flat). Position i is
    final after its swap in Fisher-Yates, so its column is read and written in place
    (strided, no index array) and only position j is gathered and scattered: two
    fancy-indexed passes instead of four."""
    held = flat[at_j]
    flat[at_j] = rows[:, i]   # position i's value moves to j (j == i: itself)
    rows[:, i] = held


@functools.lru_cache(maxsize=2)  # the systems' own table (m <= 10) and _unrank's tail
def _permutation_table(m: int) -> np.ndarray:
    """All m! permutations in rank order; built in slices to bound temporary memory."""
    total = math.factorial(m)
    table = np.empty((total, m), dtype=np.int8)
    step = 1 << 16
    for start in range(0, total, step):
        ranks = np.arange(start, min(total, start + step), dtype=np.int64)
        table[start:start + step] = _unrank(ranks, m, tail=1)  # swaps only: no table
    table.flags.writeable = False
    return table
