"""How stable a leaderboard is: discriminative power and swap rate (Sakai; Voorhees & Buckley).

Both take the per-topic scores of ``m`` systems, ``scores[q, s]`` (rows topics, columns
systems, as :func:`~irmetrics.stats.paired_test` takes them) and know nothing about
retrieval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from irmetrics.checks import (check_choice, check_float, check_int, check_positive_int,
                              parameter_error)
from irmetrics.exceptions import ShapeError
from irmetrics.parallel import block_generator, block_root, imap_ordered, one_blas_thread, resolve_threads
from ._common import CORRECTIONS, TESTS, _check_finite, _check_seed
from .corrections import adjust_pvalues
from .paired import _fixed_point_parts, _paired_test
from .tukey import tukey_hsd

#: Tests :func:`discriminative_power` runs: those of :func:`paired_test`, and randomised
#: Tukey HSD over all systems at once.
POWER_TESTS = TESTS + ("tukey",)

#: Trials drawn per block by :func:`swap_rate` (a function of nothing but this constant);
#: block ``i`` draws from generator ``i`` of :func:`irmetrics.parallel.block_generators`.
_TRIAL_BLOCK = 256

#: Most bins of ``|d|`` :func:`swap_rate` makes (a bin width far below the differences
#: would otherwise ask for an unbounded histogram).
MAX_SWAP_BINS = 1_000_000


def _topic_scores(scores: Any, min_topics: int) -> np.ndarray:
    try:
        array = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error("scores", "an array of real numbers", scores) from None
    if array.ndim != 2:
        raise ShapeError(f"`scores` must be 2-D (n topics, m systems); got shape {array.shape}.")
    if array.shape[1] < 2 or array.shape[0] < min_topics:
        raise ShapeError(f"`scores` must have at least {min_topics} topics and 2 systems;"
                         f" got shape {array.shape}.")
    _check_finite("scores", array)
    return array


def system_pairs(m: int) -> np.ndarray:
    """Every pair ``(i, j)`` with ``i < j`` of ``m`` systems, row by row: shape (P, 2).

    Examples
    --------
    >>> system_pairs(3).tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    i, j = np.triu_indices(m, k=1)
    return np.stack([i, j], axis=1)


@dataclass(frozen=True, eq=False)
class DiscriminativePower:
    """Result of :func:`discriminative_power`.

    Attributes
    ----------
    pairs : ndarray, shape (P, 2)
        System index pairs ``(i, j)``, ``i < j`` (:func:`system_pairs`).
    p_values : ndarray, shape (P,)
        Adjusted p-value of each pair (the raw one with ``correction="none"``).
    significant : ndarray of bool, shape (P,)
        ``p_values <= alpha``.
    count : int
        Pairs found significantly different.
    power : float
        ``count / P``: the discriminative power.
    test, correction : str
    alpha : float
    n_topics, n_resamples : int
    """

    pairs: np.ndarray
    p_values: np.ndarray
    significant: np.ndarray
    count: int
    power: float
    test: str
    correction: str
    alpha: float
    n_topics: int
    n_resamples: int

    def asl_curve(self) -> np.ndarray:
        """The p-values sorted ascending: Sakai's achieved-significance-level curve
        (plotted against the pair's rank, the curve of a more discriminative measure
        stays lower longer)."""
        return np.sort(self.p_values)


def discriminative_power(scores: Any, *, test: str = "t", alpha: float = 0.05,
                         correction: str = "none", n_resamples: int = 10_000,
                         seed: Any = 0, threads: int | None = None) -> DiscriminativePower:
    r"""Share of system pairs that a significance test tells apart (Sakai, SIGIR 2006).

    Every pair of the ``m`` systems is tested on the topics: a paired test of
    :func:`paired_test` (two-sided), or randomised Tukey HSD over all systems at once
    (``test="tukey"``, Sakai's later choice, which controls the family-wise error itself).
    With the p-values adjusted by ``correction`` (:func:`adjust_pvalues`, over all
    pairs):

    .. math:: \mathrm{power} = \frac{\#\{(i, j): p_{ij} \le \alpha\}}{m(m-1)/2}

    A measure (or a set of judgments) with higher discriminative power separates more
    systems with the same topics; it says nothing about whether the separations are right
    (:func:`swap_rate` and the agreement with a reference ranking do).

    Parameters
    ----------
    scores : array-like, shape (n, m)
        Per-topic scores of ``m >= 2`` systems on ``n`` topics (rows).
    test : {"t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey"}, default "t"
    alpha : float, default 0.05
    correction : {"none", "bonferroni", "holm", ...}, default "none"
        Applied over all pairs (not for ``"tukey"``, which needs none).
    n_resamples, seed
        For the resampling tests; the same seed gives the same result.
    threads : int or None
        Threads drawing the resamples (:func:`irmetrics.parallel.resolve_threads`); the
        result does not depend on it.

    Returns
    -------
    DiscriminativePower

    Examples
    --------
    >>> scores = [[0.2, 0.3, 0.8], [0.3, 0.4, 0.7], [0.1, 0.3, 0.9], [0.2, 0.2, 0.8]]
    >>> res = discriminative_power(scores, test="t")
    >>> res.count, round(res.power, 4)
    (2, 0.6667)
    """
    scores = _topic_scores(scores, 1)
    test = check_choice("test", test, POWER_TESTS)
    correction = check_choice("correction", correction, CORRECTIONS)
    alpha = check_float("alpha", alpha, min=0.0, max=1.0)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    pairs = system_pairs(scores.shape[1])
    if test == "tukey":
        hsd = tukey_hsd(scores.T, n_resamples=n_resamples, seed=seed, threads=threads)
        p_values = np.asarray(hsd.p_values)[pairs[:, 0], pairs[:, 1]]
        correction, used = "none", n_resamples
    else:
        # The caller asked for this test by name: paired_test's advice is not repeated.
        result = _paired_test(scores[:, pairs[:, 0]], scores[:, pairs[:, 1]], test=test,
                              n_resamples=n_resamples, seed=seed, alternative="two-sided",
                              level=0.95, exact=None, bootstrap_ci="bca", threads=threads)
        p_values = adjust_pvalues(np.asarray(result.p_value, dtype=np.float64), correction)
        used = result.n_resamples
    significant = p_values <= alpha
    count = int(np.count_nonzero(significant))
    return DiscriminativePower(pairs=pairs, p_values=p_values, significant=significant,
                               count=count, power=count / len(pairs), test=test,
                               correction=correction, alpha=alpha, n_topics=scores.shape[0],
                               n_resamples=used)


@dataclass(frozen=True, eq=False)
class SwapRate:
    """Result of :func:`swap_rate`.

    Attributes
    ----------
    bin_low : ndarray, shape (K,)
        Lower end of each bin of ``|d|`` (the difference on the first subset):
        ``bin_low[b] = b * bin_width``; bin ``b`` holds ``b * w <= |d| < (b + 1) * w``.
    counts, swaps : ndarray of int, shape (K,)
        (trial, pair) observations in each bin, and how many of them swapped.
    rate : ndarray, shape (K,)
        ``swaps / counts`` (NaN for an empty bin).
    overall : float
        All swaps over all observations.
    subset_size, n_trials : int
    bin_width : float
    """

    bin_low: np.ndarray
    counts: np.ndarray
    swaps: np.ndarray
    rate: np.ndarray
    overall: float
    subset_size: int
    n_trials: int
    bin_width: float

    def min_difference(self, threshold: float = 0.05) -> float:
        """The smallest difference from which on every non-empty bin swaps at most
        ``threshold`` of the time: the lower end of the bin after the last one above
        ``threshold`` (0.0 when none is; NaN when even the last bin is above).
        Sakai reports this (with ``threshold=0.05``) as the difference a measure needs
        for a 95% chance that a second topic set orders the pair the same way."""
        check_float("threshold", threshold, min=0.0, max=1.0)
        above = np.flatnonzero((self.counts > 0) & (self.rate > threshold))
        if above.size == 0:
            return 0.0
        last = int(above[-1])
        return float(self.bin_low[last + 1]) if last + 1 < len(self.bin_low) else float("nan")


def swap_rate(scores: Any, *, subset_size: int | None = None, n_trials: int = 1000,
              bin_width: float = 0.01, seed: Any = 0,
              threads: int | None = None) -> SwapRate:
    r"""How often two disjoint topic sets order a pair of systems oppositely.

    The swap method of Voorhees & Buckley (SIGIR 2002), as Sakai (SIGIR 2006) uses it,
    exactly as follows. Each of ``n_trials`` trials draws a uniformly random order of the
    ``n`` topics (``argsort`` of ``n`` uniform draws) and takes its first ``c`` topics as
    :math:`Q` and the next ``c`` as :math:`Q'` (disjoint; ``c = subset_size``, at most
    ``n // 2``). For every pair of systems :math:`(i, j)`,
    :math:`d = \bar x_i(Q) - \bar x_j(Q)` and :math:`d' = \bar x_i(Q') - \bar x_j(Q')`
    (means over the subsets); the observation falls in bin
    :math:`\lfloor |d| / w \rfloor` (``w = bin_width``), and it is a *swap* when
    :math:`d\, d' < 0` (the subsets order the pair oppositely; a tie on either subset is
    no swap). The swap rate of a bin is its swaps over its observations.

    Parameters
    ----------
    scores : array-like, shape (n, m)
        Per-topic scores of ``m >= 2`` systems on ``n >= 2`` topics.
    subset_size : int, optional
        ``c``, between 1 and ``n // 2``; default ``n // 2``.
    n_trials : int, default 1000
    bin_width : float, default 0.01
    seed : int, numpy.random.Generator or None, default 0
        The same seed gives the same result on any machine and thread count (subset means
        are exact sums; trials are drawn in blocks of 256, block ``i`` from generator
        ``i`` of :func:`irmetrics.parallel.block_generators`).
    threads : int or None
        Threads running the blocks of trials (:func:`irmetrics.parallel.resolve_threads`).

    Returns
    -------
    SwapRate

    Examples
    --------
    >>> rng = __import__("numpy").random.default_rng(7)
    >>> scores = rng.random((20, 3)) * [1.0, 1.0, 0.2]     # the third system is worse
    >>> res = swap_rate(scores, n_trials=200, bin_width=0.1, seed=3)
    >>> int(res.counts.sum()), res.subset_size     # 200 trials x 3 pairs, 10 topics each
    (600, 10)
    >>> bool(res.rate[0] > res.rate[-1])          # big differences swap less
    True
    """
    scores = _topic_scores(scores, 2)
    n, m = scores.shape
    c = n // 2 if subset_size is None else check_int("subset_size", subset_size, min=1,
                                                      max=n // 2)
    n_trials = check_positive_int("n_trials", n_trials)
    bin_width = check_float("bin_width", bin_width, min=0.0)
    if bin_width <= 0.0:
        raise parameter_error("bin_width", "a real number > 0", bin_width)
    seed = _check_seed(seed)
    threads = resolve_threads(threads)
    pairs = system_pairs(m)
    parts = _fixed_point_parts(scores)
    sizes = [min(_TRIAL_BLOCK, n_trials - start) for start in range(0, n_trials, _TRIAL_BLOCK)]
    root = block_root(seed)

    def block(i: int) -> tuple[np.ndarray, np.ndarray]:
        """Observations and swaps per bin of one block of trials."""
        size = sizes[i]
        rng = block_generator(root, i)  # built here, off the caller's thread
        order = np.argsort(rng.random((size, n)), axis=1, kind="stable")
        first = np.zeros((size, n))
        second = np.zeros((size, n))
        rows = np.arange(size)[:, None]
        first[rows, order[:, :c]] = 1.0
        second[rows, order[:, c:2 * c]] = 1.0
        # Exact subset sums (integer parts): the sign of a difference never depends on
        # the summation order of a threaded matrix product.
        with np.errstate(over="ignore", invalid="ignore"):
            mean_q = sum((first @ part) * scale for part, scale in parts) / c
            mean_r = sum((second @ part) * scale for part, scale in parts) / c
            d = mean_q[:, pairs[:, 0]] - mean_q[:, pairs[:, 1]]
            d2 = mean_r[:, pairs[:, 0]] - mean_r[:, pairs[:, 1]]
            abs_d = np.abs(d).ravel()
            scaled = abs_d / bin_width
        if not (np.isfinite(abs_d).all() and np.isfinite(d2).all()):
            raise parameter_error("scores", "small enough in magnitude that subset means"
                                  " and their differences are finite",
                                  float(np.abs(scores).max()))
        if not np.isfinite(scaled).all() or scaled.max() >= MAX_SWAP_BINS:
            largest = float(abs_d.max())
            raise parameter_error("bin_width", f"at least {largest / MAX_SWAP_BINS:.3g} (the"
                                  f" largest difference, {largest:.6g}, would need more than"
                                  f" {MAX_SWAP_BINS:,} bins)", bin_width)
        swapped = np.sign(d) * np.sign(d2) < 0
        bins = np.floor(scaled).astype(np.int64)
        return (np.bincount(bins), np.bincount(bins, weights=swapped.ravel()).astype(np.int64))

    # Per-bin tallies grow with the largest difference seen, block by block: memory does
    # not grow with the number of trials (at most ``threads + 1`` blocks are in flight).
    # One pool streams every block (no barrier between batches); the tallies are merged
    # in block order in this thread, and integer sums do not depend on the order anyway.
    counts = np.zeros(1, dtype=np.int64)
    swaps = np.zeros(1, dtype=np.int64)
    with one_blas_thread():  # the trials' small matrix products: no BLAS threads besides
        for block_counts, block_swaps in imap_ordered(block, range(len(sizes)),
                                                      threads=threads):
            n_bins = max(len(counts), len(block_counts))
            counts = np.pad(counts, (0, n_bins - len(counts)))
            swaps = np.pad(swaps, (0, n_bins - len(swaps)))
            counts[:len(block_counts)] += block_counts
            swaps[:len(block_swaps)] += block_swaps
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(counts > 0, swaps / np.maximum(counts, 1), np.nan)
    return SwapRate(bin_low=np.arange(len(counts)) * bin_width, counts=counts, swaps=swaps,
                    rate=rate, overall=float(swaps.sum() / counts.sum()), subset_size=c,
                    n_trials=n_trials, bin_width=bin_width)


__all__ = ["DiscriminativePower", "MAX_SWAP_BINS", "POWER_TESTS", "SwapRate",
           "discriminative_power", "swap_rate", "system_pairs"]
