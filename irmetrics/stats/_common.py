"""Shared pieces of the statistics: constants, result types, input checks, resampling helpers."""

from __future__ import annotations

import math
import numbers
import threading
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

import numpy as np

from irmetrics.checks import check_int, parameter_error
from irmetrics.exceptions import IrMetricsWarning, ShapeError
from irmetrics.parallel import (block_generator, block_root, map_in_runs, one_blas_thread,
                                threads_for_work)


#: A spread of differences up to this many ulps of the inputs' magnitude is their rounding.
_ROUNDING_SPREAD = 4

TESTS = ("t", "randomization", "bootstrap", "wilcoxon", "sign")
CORRECTIONS = ("none", "bonferroni", "holm", "holm-sidak", "hommel", "fdr_bh", "fdr_by")
ALTERNATIVES = ("two-sided", "less", "greater")
BOOTSTRAP_CIS = ("bca", "percentile")
CI_METHODS = ("t", "bootstrap")

#: Relative tolerance for "resampled statistic at least as extreme as the observed one":
#: the same ``100 * eps`` as scipy.stats.permutation_test, so that two sums of the same
#: numbers in a different order still tie.
_REL_TOL = 100 * np.finfo(np.float64).eps

#: Resamples are drawn in blocks of at most about this many float64 elements (16 MiB).
#: The block size depends on the data shape and the number of resamples only, and block
#: ``i`` draws from generator ``i`` of :func:`irmetrics.parallel.block_generators`, which
#: keeps results independent of the thread count.
_BLOCK_ELEMENTS = 1 << 21

#: A run of blocks whose rows are computed at once (``_map_blocks(join=)``) holds at most
#: about this many elements, or one block: 1 MiB, which the core's cache holds (larger
#: runs cost memory traffic, and numpy copies them holding the interpreter lock).
_RUN_ELEMENTS = 1 << 17

#: Resamples are cut into about this many blocks, so that 16 or more threads have work...
_TARGET_BLOCKS = 64
#: ...unless a block would then hold fewer elements than this (its Python overhead would
#: outweigh its work).
_MIN_BLOCK_ELEMENTS = 1 << 15

#: Randomization test: enumerate all 2**n sign flips up to this n unless told otherwise,
#: and never beyond _MAX_EXACT_N (the meet-in-the-middle tables grow as 2**(n/2)).
_AUTO_EXACT_N = 20
_MAX_EXACT_N = 30


class UnreliableTestWarning(IrMetricsWarning):
    """The sign and Wilcoxon tests are less reliable than t, randomization or bootstrap.

    On IR evaluation data they disagree with the other tests more often and lose power
    (Smucker, Allan & Carterette, CIKM 2007; Urbano, Lima & Hanjalic, SIGIR 2019). The
    warning is raised every time one of them is asked for; silence it with
    ``warnings.simplefilter("ignore", UnreliableTestWarning)``.
    """


@dataclass(frozen=True, eq=False)
class PairedTest:
    """Result of :func:`paired_test`.

    Array fields have shape ``()`` for 1-D input and ``(k,)`` for ``(n, k)`` input.

    Attributes
    ----------
    test, alternative : str
        As requested.
    n : int
        Number of pairs (rows).
    statistic : ndarray
        t: Student's t; randomization and bootstrap: ``mean(d)``; wilcoxon: scipy's
        statistic (``min(R+, R-)`` two-sided, ``R+`` one-sided); sign: number of wins.
    p_value : ndarray
    mean_diff : ndarray
        ``mean(a - b)``.
    ci_low, ci_high : ndarray
        Confidence interval of the mean difference at ``level`` (one-sided alternatives
        give one-sided intervals with an infinite end).
    effect_size : ndarray
        Cohen's :math:`d_z = \\bar d / s_d` (``ddof=1``).
    wins, ties, losses : ndarray of int
        Counts of ``a > b``, ``a == b`` and ``a < b``.
    ci_method : str
        ``"t"``, ``"bca"`` or ``"percentile"``.
    n_resamples : int
        Resamples drawn; ``2**n`` when the randomization test enumerated every sign flip;
        0 for tests that do not resample.
    exact : bool
        True when the p-value comes from the complete null distribution (enumerated
        randomization, the binomial sign test, Wilcoxon where scipy used its exact or
        enumerated distribution in every column).
    zero_variance : ndarray of bool
        The differences are all equal and not all zero (:math:`s_d = 0`, n >= 2): t and
        :math:`d_z` are :math:`\\pm\\infty`, and the p-values of the t test (0, as
        scipy's ``ttest_rel``) and of the bootstrap test (:math:`1/(B+1)`) come from a
        variance estimate of zero, not from the evidence of n queries. The
        randomization, sign and Wilcoxon p-values are not affected.
    min_p_value : ndarray
        The smallest p-value a distribution-free paired test can give on these
        differences: the exact sign-flip test's :math:`2^{1-m}` two-sided,
        :math:`2^{-m}` one-sided, with m the number of non-zero differences (1 when
        m = 0). Where it is above alpha, no test can show a difference at alpha without
        assuming how the differences are distributed (the t test assumes normality).
    """

    test: str
    alternative: str
    n: int
    statistic: np.ndarray
    p_value: np.ndarray
    mean_diff: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    effect_size: np.ndarray
    wins: np.ndarray
    ties: np.ndarray
    losses: np.ndarray
    ci_method: str
    n_resamples: int
    exact: bool
    level: float = 0.95
    zero_variance: np.ndarray | None = None
    min_p_value: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class TukeyHSD:
    """Result of :func:`tukey_hsd`.

    Attributes
    ----------
    means : ndarray, shape (m,) or (m, k)
        Mean score of each system.
    statistic : ndarray, shape (m, m) or (m, m, k)
        ``means[i] - means[j]`` (row minus column).
    p_values : ndarray, shape (m, m) or (m, m, k)
        Family-wise adjusted p-values; symmetric, 1 on the diagonal.
    n_resamples : int
    """

    means: np.ndarray
    statistic: np.ndarray
    p_values: np.ndarray
    n_resamples: int


@dataclass(frozen=True, eq=False)
class ConfidenceInterval:
    """Result of :func:`confidence_interval`.

    Attributes
    ----------
    mean, low, high : ndarray
        Shape ``()`` for 1-D input, ``(k,)`` for ``(n, k)`` input.
    level : float
    method : str
        ``"t"`` or ``"bootstrap"``, as requested.
    ci_method : str
        The interval actually computed: ``"t"``, ``"bca"`` or ``"percentile"``.
    n : int
    n_resamples : int
        0 for ``"t"``.
    """

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    method: str
    ci_method: str = "t"
    n: int = 0
    n_resamples: int = 0


# --------------------------------------------------------------------------- validation


def _as_columns(name: str, values: Any) -> tuple[np.ndarray, bool]:
    """``values`` as a finite float64 matrix (n, k) with n >= 1; also whether it was 1-D."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error(name, "an array of real numbers", values) from None
    if array.ndim not in (1, 2):
        raise ShapeError(f"`{name}` must be 1-D (n,) or 2-D (n, k); got shape {array.shape}.")
    if array.shape[0] < 1:
        raise ShapeError(f"`{name}` must have at least one row; got shape {array.shape}.")
    one_d = array.ndim == 1
    matrix = array[:, None] if one_d else array
    _check_finite(name, matrix)
    return matrix, one_d


def _check_finite(name: str, matrix: np.ndarray) -> None:
    bad = ~np.isfinite(matrix)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise parameter_error(
            name, f"finite everywhere (row {row}, column {column} is not)", float(matrix[row, column]))


def _check_level(level: Any) -> float:
    ok = isinstance(level, (numbers.Real, np.floating)) and not isinstance(level, (bool, np.bool_))
    if not ok or not 0.0 < float(level) < 1.0:
        raise parameter_error("level", "a number strictly between 0 and 1", level)
    return float(level)


def _check_seed(seed: Any) -> Any:
    """``seed`` as given, once it is None, a Generator or a non-negative int."""
    if seed is not None and not isinstance(seed, np.random.Generator):
        check_int("seed", seed, min=0)
    return seed


def _block_rows(row_elements: int, total: int) -> int:
    """Resamples per block, a function of the shape and ``total`` only: ``total`` cut into
    about _TARGET_BLOCKS blocks of at least _MIN_BLOCK_ELEMENTS and at most
    _BLOCK_ELEMENTS elements (each resample holding ``row_elements``)."""
    row_elements = max(1, row_elements)
    rows = max(-(-total // _TARGET_BLOCKS), _MIN_BLOCK_ELEMENTS // row_elements)
    return max(1, min(total, rows, _BLOCK_ELEMENTS // row_elements))


def _map_blocks(fn: Callable[[int, np.random.Generator], Any], total: int, row_elements: int,
                seed: Any, threads: Any, row_work: int | None = None,
                join: Callable[[list], Any] | None = None) -> list:
    """``fn(size, rng)`` for each block of ``total`` resamples, in block order; with
    ``join``, ``join([fn(size, rng) for each block of a run])`` for each run of blocks
    (a run holds at most :data:`_RUN_ELEMENTS` elements, or one block), in run order:
    the place to compute at once, in fewer and larger numpy calls (less time holding the
    interpreter lock), what each resample's row gives alone.

    The blocks (:func:`_block_rows` resamples each, the last shorter) and their generators
    (block ``i`` draws from generator ``i`` of
    :func:`irmetrics.parallel.block_generators`) do not depend on ``threads``, and the
    results come back in block order, so whatever ``fn`` computes from its own draws is
    the same for any thread count. The threads take runs of consecutive blocks
    (:func:`irmetrics.parallel.item_runs`), and a job of fewer than
    :data:`~irmetrics.parallel.MIN_THREAD_WORK` operations per thread (``row_work`` per
    resample, default ``row_elements``) runs on fewer
    (:func:`irmetrics.parallel.threads_for_work`). BLAS runs on one thread meanwhile
    (:func:`irmetrics.parallel.one_blas_thread`).
    """
    rows = _block_rows(row_elements, total)
    sizes = [min(rows, total - start) for start in range(0, total, rows)]
    root = block_root(seed)  # each block's generator built by the worker drawing it
    threads = threads_for_work(threads, total * (row_elements if row_work is None else row_work))
    most = max(1, _RUN_ELEMENTS // max(1, rows * row_elements))

    with one_blas_thread():  # the blocks' small matrix products: no BLAS threads besides
        return map_in_runs(lambda i: fn(sizes[i], block_generator(root, i)), len(sizes),
                           threads=threads, most=most, join=join)


def _resample_counts(rng: np.random.Generator, count: int, n: int,
                     out: np.ndarray | None = None) -> np.ndarray:
    """``count`` bootstrap resamples of ``n`` rows as multiplicities, float64 of shape
    (count, n): the index draws of scipy.stats.bootstrap (``rng.integers(0, n, (count,
    n))``), counted per row, so that a matrix product replaces fancy indexing. Into
    ``out`` (an array a thread keeps, :class:`_Scratch`) when given: one fresh array a
    block fewer."""
    draws = rng.integers(0, n, size=(count, n))
    draws += (np.arange(count) * n)[:, None]
    counts = np.bincount(draws.ravel(), minlength=count * n).reshape(count, n)
    if out is None:
        return counts.astype(np.float64)
    np.copyto(out, counts)
    return out


def _rows(blocks: list) -> np.ndarray:
    """The rows of a run's blocks as one array: the block itself when the run holds one
    (a copy of a few hundred KiB costs more than its rows' work here: a new array's
    pages are faulted in, which a virtual machine makes slow; measured on the
    randomization test, 40 % more CPU)."""
    return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)


class _Scratch:
    """Arrays each thread keeps for its next block of one call, reused with ``out=``.

    A block's large temporaries allocated afresh come from ``mmap`` (or a heap the
    allocator has just trimmed) and are faulted in page by page, for every block: on this
    project's virtual machines about 1.5-2 us per 4 KiB page, more than the arithmetic on
    it (``1.0 - 2.0 * flips`` of 157 x 250: 245 us fresh, 33 us into a kept array), and
    one process' threads fault in its one address space. Dropped with the call (the
    object), so nothing outlives it; each thread sees its own arrays only.
    """

    def __init__(self) -> None:
        self._held = threading.local()

    def get(self, name: str, shape: tuple, dtype: Any) -> np.ndarray:
        """An uninitialised array of ``shape`` and ``dtype``, this thread's ``name``
        (grown when a larger one is asked for; a view of it otherwise)."""
        size = math.prod(shape)
        array = getattr(self._held, name, None)
        if array is None or array.size < size or array.dtype != np.dtype(dtype):
            array = np.empty(size, dtype=dtype)
            setattr(self._held, name, array)
        return array[:size].reshape(shape)


def _shaped(values: np.ndarray, one_d: bool) -> np.ndarray:
    """Column results (k,) back to the caller's shape: () for 1-D input."""
    return values.reshape(()) if one_d else values


# --------------------------------------------------------------------------- shared pieces


def _mean_var(x: np.ndarray, scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Column means and sample variances (ddof=1; NaN when n = 1).

    A constant column gets its value as the mean and variance 0 exactly: summing n copies
    of 0.1 does not give n * 0.1, and a variance of 1e-34 would turn "no spread" into a
    huge but finite t statistic instead of the defined infinity. ``scale`` (per column)
    is the magnitude of the values ``x`` was computed from (``max(|a|, |b|)`` for
    ``x = a - b``): a spread within a few ulps of it is rounding of the inputs (0.1234
    and 0.0609 read from text differ by 0.0625 only up to one ulp), so it counts as none.
    """
    n = x.shape[0]
    constant = np.all(x == x[:1], axis=0)
    mean = np.where(constant, x[0], x.mean(axis=0))
    if n < 2:
        return mean, np.full(x.shape[1], np.nan)
    var = x.var(axis=0, ddof=1)
    if scale is not None:
        constant |= np.sqrt(var) <= _ROUNDING_SPREAD * np.finfo(np.float64).eps * scale
    return mean, np.where(constant, 0.0, var)


def _largest_magnitude(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per column, ``max(|a|, |b|)`` over the rows, from the columns' maxima and minima
    (``max |x| = max(max x, -min x)``, exactly): no matrix-sized temporaries, which a
    one-thread caller faults in page by page before any block can start."""
    return np.maximum.reduce([a.max(axis=0), -a.min(axis=0), b.max(axis=0), -b.min(axis=0)])


def _tail_probabilities(level: float, alternative: str) -> tuple[float, float]:
    """Lower and upper quantile probabilities of an interval at ``level``.

    A one-sided alternative puts the whole ``1 - level`` in one tail; its other end is
    replaced by an infinity in :func:`_one_sided`.
    """
    alpha = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    return alpha, 1.0 - alpha


def _one_sided(low: np.ndarray, high: np.ndarray, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    if alternative == "less":
        low = np.full_like(low, -np.inf)
    elif alternative == "greater":
        high = np.full_like(high, np.inf)
    return low, high


def _t_interval(mean, sd, n, level, alternative):
    """Student-t interval ``mean + t_{n-1}(p) * sd / sqrt(n)`` (scipy's ttest CI); NaN if n = 1."""
    from scipy import special

    if n < 2:
        nan = np.full_like(mean, np.nan)
        return nan, nan.copy()
    p_low, p_high = _tail_probabilities(level, alternative)
    se = sd / math.sqrt(n)
    low = special.stdtrit(n - 1, p_low) * se + mean
    high = special.stdtrit(n - 1, p_high) * se + mean
    return _one_sided(low, high, alternative)


def _at_least_as_extreme(resampled: np.ndarray, observed: np.ndarray, alternative: str,
                         gamma: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """Count, per column, resampled statistics at least as extreme as ``observed``.

    ``resampled`` is (B, k), ``observed`` and the tie tolerance ``gamma`` are (k,); values
    within ``gamma`` of the observed one count as extreme. NaN never counts. With
    ``overwrite``, ``resampled`` (the caller's own) may be changed: the two-sided
    magnitudes are taken in place instead of in a fresh array.
    """
    if alternative == "greater":
        hits = resampled >= observed - gamma
    elif alternative == "less":
        hits = resampled <= observed + gamma
    else:
        hits = np.abs(resampled, out=resampled if overwrite else None) >= np.abs(observed) - gamma
    return np.count_nonzero(hits, axis=0)
