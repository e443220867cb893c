"""Which ranks a system could hold: simultaneous rank intervals on one collection or many.

A leaderboard orders systems by a mean over topics (or by an aggregate over tasks), and
every one of those means has sampling error. :func:`rank_intervals` turns the per-topic
scores of ``m`` systems into an interval of ranks per system that holds for all systems at
once with probability ``level``, the set of systems statistically tied with the best, and
which adjacent pairs of the leaderboard are separable. :func:`aggregate_rank_intervals`
does the same for a benchmark of several tasks (each with its own topics), aggregated as
the benchmark does (mean of task means, Borda count, mean rank), with the bootstrap over
tasks and topics within tasks (two-level), or over one level only for comparison.

The method is the simultaneous confidence set for ranks of Mogstad, Romano, Shaikh &
Wilhelm ("Inference for ranks with applications to mobility across neighbourhoods and
academic achievement across countries", Review of Economic Studies 2024): simultaneous
intervals for every pairwise difference of aggregate scores from a bootstrap max-t
statistic, and then the rank interval of system j counts the systems surely above it and
surely below it. Arrays go in, numbers come out; resamples are drawn in blocks, one seeded
generator per block (:func:`irmetrics.parallel.block_generators`), so any ``threads`` gives
the same numbers.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irmetrics.checks import check_choice, check_positive_int, parameter_error
from irmetrics.exceptions import DegenerateTestWarning, ShapeError
from irmetrics.parallel import (block_generator, block_root, map_in_runs, one_blas_thread,
                                threads_for_work)
from ._common import _Scratch, _check_level, _resample_counts
from .paired import _fixed_point_parts

__all__ = [
    "AGGREGATIONS",
    "RESAMPLING_LEVELS",
    "RankIntervals",
    "rank_intervals",
    "aggregate_rank_intervals",
    "aggregate_scores",
    "bootstrap_mean_intervals",
]

#: How a benchmark turns per-task scores into one leaderboard score: the mean of task
#: means, Borda points, the mean rank, or (MTEB's "Mean (TaskType)") the mean over task
#: types of the mean of each type's task means.
AGGREGATIONS = ("mean", "borda", "mean_rank", "type_mean")

#: What the bootstrap resamples: tasks and topics within them, tasks only, topics only.
RESAMPLING_LEVELS = ("two-level", "tasks", "topics")

#: Resamples per block: fixed, so the blocks (and their seeds) never depend on threads.
_RESAMPLE_BLOCK = 128


@dataclass(frozen=True, eq=False)
class RankIntervals:
    """Result of :func:`rank_intervals` and :func:`aggregate_rank_intervals`.

    Arrays are indexed by system (the columns of the scores), not by rank.

    Attributes
    ----------
    score : ndarray, shape (m,)
        The leaderboard score: mean (of task means), mean Borda points, or mean rank
        (lower is better for ``"mean_rank"`` only).
    rank : ndarray of int, shape (m,)
        Observed rank, 1 = best; equal scores share the best of their ranks.
    low, high : ndarray of int, shape (m,)
        The rank interval: every system's true rank lies in ``[low, high]`` at once, with
        probability ``level``.
    tied_with_best : ndarray of bool, shape (m,)
        ``low == 1``: no system is surely better (the confidence set for the best).
    order : ndarray of int, shape (m,)
        System indices, best first (stable on equal scores).
    separable : ndarray of bool, shape (m - 1,)
        Adjacent pair ``(order[i], order[i + 1])`` is separated: the upper one is surely
        better.
    surely_better : ndarray of bool, shape (m, m)
        ``[j, k]``: system j's aggregate is above system k's by the simultaneous intervals.
    n_separable : int
        ``separable.sum()``.
    level : float
    aggregation, resampling : str
    n_resamples : int
    critical_value : float
        The ``level`` quantile of the bootstrap max-t statistic.
    """

    score: np.ndarray
    rank: np.ndarray
    low: np.ndarray
    high: np.ndarray
    tied_with_best: np.ndarray
    order: np.ndarray
    separable: np.ndarray
    surely_better: np.ndarray
    n_separable: int
    level: float
    aggregation: str
    resampling: str
    n_resamples: int
    critical_value: float

    def rows(self, names: Sequence[str] | None = None) -> list[dict]:
        """One dict per system, best first: name, score, rank, low, high, tied_with_best.

        Examples
        --------
        >>> r = rank_intervals([[0.1, 0.5], [0.2, 0.6], [0.3, 0.4]], n_resamples=200)
        >>> [row["system"] for row in r.rows(["a", "b"])]
        ['b', 'a']
        """
        labels = list(names) if names is not None else [str(i) for i in range(len(self.score))]
        return [{"system": labels[j], "score": float(self.score[j]), "rank": int(self.rank[j]),
                 "low": int(self.low[j]), "high": int(self.high[j]),
                 "tied_with_best": bool(self.tied_with_best[j])} for j in self.order]


def _task_matrix(name: str, values: Any, m: int | None) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error(name, "an array of real numbers (topics x systems)", values) from None
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 2:
        raise ShapeError(f"`{name}` must be 2-D (n topics >= 1, m systems >= 2); got shape "
                         f"{array.shape}.")
    if m is not None and array.shape[1] != m:
        raise ShapeError(f"`{name}` must have the {m} systems of the first task as columns; "
                         f"got shape {array.shape}.")
    bad = ~np.isfinite(array)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise parameter_error(name, f"finite everywhere (topic row {row}, system column "
                              f"{column} is not)", float(array[row, column]))
    return array


def _ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis, 1 = highest value (ties share the mean rank)."""
    from scipy.stats import rankdata

    return rankdata(-values, axis=-1, method="average")


def _aggregate(task_means: np.ndarray, aggregation: str,
               weights: np.ndarray | None = None) -> np.ndarray:
    """(..., T, m) per-task means -> (..., m) leaderboard scores, higher is better
    (``weights``: each task's weight in ``"type_mean"``, :func:`_type_weights`)."""
    if aggregation == "mean":
        return task_means.mean(axis=-2)
    if aggregation == "type_mean":
        assert weights is not None
        return np.einsum("...tm,t->...m", task_means, weights)
    ranks = _ranks(task_means)
    if aggregation == "borda":
        return (task_means.shape[-1] - ranks).mean(axis=-2)
    return -ranks.mean(axis=-2)


def _exact_means(weights: np.ndarray, parts: list, n: int) -> np.ndarray:
    """``weights @ scores / n`` summed exactly on fixed-point parts (order-free sums)."""
    return sum((weights @ part) * scale for part, scale in parts) / n


def _type_strata(task_types: Any, n_tasks: int, aggregation: str) -> list[np.ndarray] | None:
    """The task indices of each type (in order of first appearance), or None without
    types; ``"type_mean"`` needs them."""
    if task_types is None:
        if aggregation == "type_mean":
            raise parameter_error("task_types", "one type per task for aggregation"
                                  " 'type_mean'", None)
        return None
    if isinstance(task_types, (str, bytes)):
        raise parameter_error("task_types", "a sequence of one type per task", task_types)
    labels = list(task_types)
    if len(labels) != n_tasks:
        raise ShapeError(f"`task_types` must hold one type per task ({n_tasks}); got "
                         f"{len(labels)}.")
    groups: dict = {}
    for t, label in enumerate(labels):
        groups.setdefault(label, []).append(t)
    return [np.asarray(members, dtype=np.int64) for members in groups.values()]


def _type_weights(strata: list[np.ndarray], n_tasks: int) -> np.ndarray:
    """Each task's weight in the mean over types of the type means:
    ``1 / (types * tasks of its type)``."""
    weights = np.zeros(n_tasks)
    for members in strata:
        weights[members] = 1.0 / (len(strata) * members.size)
    return weights


def _check_tasks(tasks: Any) -> list[np.ndarray]:
    if isinstance(tasks, np.ndarray) and tasks.ndim == 2:
        tasks = [tasks]
    try:
        items = list(tasks)
    except TypeError:
        raise parameter_error("tasks", "a sequence of (topics x systems) arrays", tasks) from None
    if not items:
        raise parameter_error("tasks", "a non-empty sequence of (topics x systems) arrays", tasks)
    out: list[np.ndarray] = []
    for t, values in enumerate(items):
        out.append(_task_matrix(f"tasks[{t}]", values, out[0].shape[1] if out else None))
    return out


def aggregate_scores(tasks: Any, *, aggregation: str = "mean",
                     task_types: Any = None) -> np.ndarray:
    r"""The leaderboard score of each system over tasks, as a benchmark computes it.

    With :math:`\bar x_{ts}` the mean of system ``s`` over the topics of task ``t`` and
    :math:`r_{ts}` its rank in task ``t`` (1 = best, ties averaged), over ``T`` tasks:

    .. math:: \mathrm{mean}_s = \frac1T \sum_t \bar x_{ts}, \quad
              \mathrm{borda}_s = \frac1T \sum_t (m - r_{ts}), \quad
              \mathrm{mean\_rank}_s = \frac1T \sum_t r_{ts}

    and, with the tasks in ``G`` types, :math:`T_g` tasks of type :math:`g` (MTEB's
    "Mean (TaskType)"):

    .. math:: \mathrm{type\_mean}_s = \frac1G \sum_g \frac1{T_g}
              \sum_{t \in g} \bar x_{ts}

    MTEB's "Rank (Borda)" orders systems as ``"borda"`` does (it sums the points where
    this takes their mean).

    Parameters
    ----------
    tasks : sequence of array-like, each (n_t topics, m systems)
        The same systems in the same column order in every task.
    aggregation : {"mean", "borda", "mean_rank", "type_mean"}
    task_types : sequence, optional
        One type label per task (needed by ``"type_mean"``).

    Returns
    -------
    ndarray, shape (m,)
        For ``"mean_rank"`` lower is better; for the others higher is.

    Examples
    --------
    >>> aggregate_scores([[[0.2, 0.4]], [[0.9, 0.1], [0.7, 0.3]]], aggregation="mean_rank")
    array([1.5, 1.5])
    >>> aggregate_scores([[[0.2, 0.4]], [[0.6, 0.2]], [[1.0, 0.0]]], aggregation="type_mean",
    ...                  task_types=["STS", "Retrieval", "Retrieval"]).round(3).tolist()
    [0.5, 0.25]
    """
    aggregation = check_choice("aggregation", aggregation, AGGREGATIONS)
    matrices = _check_tasks(tasks)
    strata = _type_strata(task_types, len(matrices), aggregation)
    weights = None if strata is None else _type_weights(strata, len(matrices))
    score = _aggregate(np.stack([t.mean(axis=0) for t in matrices]), aggregation, weights)
    return -score if aggregation == "mean_rank" else score


def _resampled_scores(matrices: list[np.ndarray], aggregation: str, resampling: str,
                      n_resamples: int, seed: Any, threads: Any,
                      strata: list[np.ndarray] | None = None,
                      weights: np.ndarray | None = None) -> np.ndarray:
    """(n_resamples, m) bootstrap leaderboard scores (higher is better), block by block;
    with ``strata`` tasks are drawn within their type (``weights``: the task slots'
    weights of ``"type_mean"``)."""
    n_tasks = len(matrices)
    means = np.stack([t.mean(axis=0) for t in matrices])
    parts = [_fixed_point_parts(t) for t in matrices]
    n_blocks = -(-n_resamples // _RESAMPLE_BLOCK)
    root = block_root(seed)
    scratch = _Scratch().get  # each thread's count arrays, for all its blocks

    def block(index: int) -> np.ndarray:
        rng = block_generator(root, index)  # built by the worker drawing it
        size = min(_RESAMPLE_BLOCK, n_resamples - index * _RESAMPLE_BLOCK)
        if resampling == "topics":
            picked = np.broadcast_to(np.arange(n_tasks), (size, n_tasks))
        elif strata is not None:
            # each type keeps its slots and its task count: a slot of type g draws a task
            # of type g, so every resample has the benchmark's types and weights
            picked = np.empty((size, n_tasks), dtype=np.int64)
            for members in strata:
                picked[:, members] = members[rng.integers(0, members.size,
                                                          size=(size, members.size))]
        else:
            picked = rng.integers(0, n_tasks, size=(size, n_tasks))
        if resampling == "tasks":
            slot_means = means[picked]
        else:
            slot_means = np.empty((size, n_tasks, means.shape[1]))
            # one topic resample per slot, even where a task is drawn twice
            for t, matrix in enumerate(matrices):
                rows, cols = np.nonzero(picked == t)
                if not rows.size:
                    continue
                n_t = matrix.shape[0]
                counts = _resample_counts(rng, rows.size, n_t,
                                          out=scratch("counts", (rows.size, n_t), np.float64))
                slot_means[rows, cols] = _exact_means(counts, parts[t], n_t)
        return _aggregate(slot_means, aggregation, weights)

    # threads take runs of consecutive blocks (map_in_runs). The work counted is the draws:
    # a block's Python and its counts (np.bincount) hold the interpreter lock for about
    # half its time, so its products do not make threads pay. 250 topics x 20 systems,
    # 10,000 resamples (2.5M draws) ran 0.79x on 2 threads of a quiet machine: one thread
    # now; benchmarks of thousands of topics (MTEB's 41 tasks) get two or more.
    work = n_resamples * sum(t.shape[0] for t in matrices)
    threads = threads_for_work(threads, work)
    return np.concatenate(map_in_runs(block, n_blocks, threads=threads))


def _intervals(observed: np.ndarray, boot: np.ndarray, level: float,
               threads: Any = 1) -> tuple:
    """Max-t simultaneous intervals of all pairwise differences -> rank bounds. The
    resamples' max-t statistics are computed a block of rows at a time, one run of blocks
    per thread (each row's value is the same whatever block holds it)."""
    m = observed.size
    cov = np.cov(boot, rowvar=False, ddof=1)
    var = np.diag(cov)
    se = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2.0 * cov, 0.0))
    diff = observed[:, None] - observed[None, :]
    i, j = np.triu_indices(m, k=1)
    se_pairs = se[i, j]
    spread = 100 * np.finfo(np.float64).eps * np.maximum(np.abs(boot).max(axis=0), 1e-300)
    # a pair whose difference never varies carries no sampling error: its t is 0
    live = se_pairs > spread[i] + spread[j]
    first, second = i[live], j[live]
    centre, scale = diff[first, second], se_pairs[live]

    def max_t(lo: int) -> np.ndarray:
        chunk = boot[lo:lo + _RESAMPLE_BLOCK]
        t = np.abs(chunk[:, first] - chunk[:, second] - centre) / scale
        return t.max(axis=1) if t.shape[1] else np.zeros(len(chunk))

    # runs of consecutive blocks (map_in_runs): a few items, not one per 128 resamples
    starts = range(0, boot.shape[0], _RESAMPLE_BLOCK)
    threads = threads_for_work(threads, boot.shape[0] * len(first) * 4)
    stat = np.concatenate(map_in_runs(lambda k: max_t(starts[k]), len(starts),
                                      threads=threads) or [np.zeros(0)])
    critical = float(np.quantile(stat, level, method="higher"))
    margin = np.where(se > 0, critical * se, 0.0)
    tol = 100 * np.finfo(np.float64).eps * (np.abs(observed)[:, None] + np.abs(observed)[None, :])
    better = diff - margin > tol
    np.fill_diagonal(better, False)
    low = 1 + better.sum(axis=0)
    high = m - better.sum(axis=1)
    return low, high, better, critical


def _result(observed: np.ndarray, boot: np.ndarray, level: float, aggregation: str,
            resampling: str, threads: Any = 1) -> RankIntervals:
    low, high, better, critical = _intervals(observed, boot, level, threads)
    order = np.argsort(-observed, kind="stable")
    rank = 1 + (observed[None, :] > observed[:, None]).sum(axis=1)
    separable = better[order[:-1], order[1:]]
    score = -observed if aggregation == "mean_rank" else observed
    return RankIntervals(score=score, rank=rank, low=low, high=high, tied_with_best=low == 1,
                         order=order, separable=separable, surely_better=better,
                         n_separable=int(separable.sum()), level=level,
                         aggregation=aggregation, resampling=resampling,
                         n_resamples=boot.shape[0], critical_value=critical)


def rank_intervals(scores: Any, *, level: float = 0.95, n_resamples: int = 2000,
                   seed: Any = 0, threads: Any = None) -> RankIntervals:
    r"""Simultaneous rank intervals of ``m`` systems from their per-topic scores.

    The systems are ranked by their mean score :math:`\hat\theta_s`. ``n_resamples``
    bootstrap resamples of the topics give :math:`\hat\theta^*_s`; with
    :math:`\hat\sigma_{jk}` the bootstrap standard deviation of
    :math:`\hat\theta^*_j - \hat\theta^*_k` and :math:`c` the ``level`` quantile of

    .. math:: T^* = \max_{j < k} \frac{|(\hat\theta^*_j - \hat\theta^*_k)
              - (\hat\theta_j - \hat\theta_k)|}{\hat\sigma_{jk}}

    system j is *surely better* than k when :math:`\hat\theta_j - \hat\theta_k >
    c\,\hat\sigma_{jk}`, and its rank interval is

    .. math:: [\,1 + \#\{k: k \text{ surely better than } j\},\;
              m - \#\{k: j \text{ surely better than } k\}\,]

    All intervals hold at once with probability ``level`` (asymptotically; Mogstad,
    Romano, Shaikh & Wilhelm 2024). The systems with lower end 1 are those statistically
    tied with the best.

    Parameters
    ----------
    scores : array-like, shape (n topics, m systems)
        Finite per-topic scores, rows aligned (the same topics for every system).
    level : float, default 0.95
    n_resamples : int, default 2000
    seed : int, numpy.random.Generator or None, default 0
    threads : int or None
        See :func:`irmetrics.parallel.resolve_threads`; the result does not depend on it.

    Returns
    -------
    RankIntervals

    Notes
    -----
    Simulated leaderboards (benchmarks/bench_rank_intervals.py; docs/leaderboards.md)
    give a simultaneous coverage at or above the nominal level. With one topic there is
    nothing to resample (a :class:`~irmetrics.exceptions.DegenerateTestWarning` says so)
    and no pair is separated by sampling error alone; constant columns are fine (their
    differences carry no error).

    Examples
    --------
    >>> scores = [[0.9, 0.5, 0.1], [0.8, 0.4, 0.2], [0.95, 0.45, 0.15], [0.85, 0.55, 0.1]]
    >>> r = rank_intervals(scores, n_resamples=500)
    >>> r.low.tolist(), r.high.tolist(), r.n_separable
    ([1, 2, 3], [1, 2, 3], 2)
    """
    return aggregate_rank_intervals([scores], aggregation="mean", resampling="topics",
                                    level=level, n_resamples=n_resamples, seed=seed,
                                    threads=threads)


def _task_label(index: int, task_names: Any) -> int | str:
    """A task as warnings name it: its name when given, else its position."""
    return index if task_names is None else str(task_names[index])


def aggregate_rank_intervals(tasks: Any, *, aggregation: str = "mean",
                             resampling: str = "two-level", level: float = 0.95,
                             n_resamples: int = 2000, seed: Any = 0,
                             threads: Any = None, task_types: Any = None,
                             task_names: Any = None) -> RankIntervals:
    r"""Simultaneous rank intervals of ``m`` systems over a benchmark of tasks.

    The leaderboard score is :func:`aggregate_scores` (mean of task means, Borda count,
    mean rank, mean of task-type means). The bootstrap (``resampling``) draws

    * ``"two-level"``: ``T`` tasks with replacement, then the topics of each drawn task
      with replacement (a task drawn twice gets two independent topic resamples): the
      uncertainty of a benchmark whose tasks *and* topics are samples;
    * ``"tasks"``: tasks only (each task's means fixed): the tasks are a sample, the topics
      are the whole of each task;
    * ``"topics"``: topics within every task, the tasks fixed: the benchmark's tasks are
      all there is.

    With ``aggregation="type_mean"`` the task draws are stratified by type: each type
    keeps its number of tasks and draws them from its own tasks (then, two-level, the
    topics of each). The types are the benchmark's design (Retrieval, Classification,
    ...), not a sample of types, and the score weighs each type equally whatever its
    size; an unstratified draw could lose a type altogether or change its weight, so
    the resampled score would not be the statistic's. A type with one task has no
    between-task variability under this draw (warned).

    The rank intervals then follow :func:`rank_intervals` (max-t simultaneous intervals of
    the pairwise differences of the aggregate).

    Parameters
    ----------
    tasks : sequence of array-like, each (n_t topics, m systems)
        Tasks may have different topics and sizes; the columns are the same systems.
    aggregation : {"mean", "borda", "mean_rank", "type_mean"}
    resampling : {"two-level", "tasks", "topics"}
    level : float
    n_resamples : int
    seed : int, numpy.random.Generator or None
    threads : int or None
    task_types : sequence, optional
        One type label per task: needed by ``"type_mean"`` (ignored by the others).
    task_names : sequence of str, optional
        One name per task, used only to name tasks in warnings (default: their positions).

    Returns
    -------
    RankIntervals

    Notes
    -----
    Resampling tasks asks the benchmark to stand for tasks like its own; with few tasks
    (fewer than about 10) that level of the bootstrap is coarse, and a warning says so. A
    task with one topic has no within-task variability (warned and kept). Scores equal
    for every system everywhere tell nothing apart (warned; every interval is [1, m]).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> tasks = [rng.normal([0.5, 0.4, 0.3], 0.05, size=(n, 3)) for n in (20, 30, 25, 40)]
    >>> r = aggregate_rank_intervals(tasks, resampling="topics", n_resamples=400)
    >>> r.order.tolist(), r.low.tolist(), r.high.tolist()
    ([0, 1, 2], [1, 2, 3], [1, 2, 3])
    """
    aggregation = check_choice("aggregation", aggregation, AGGREGATIONS)
    resampling = check_choice("resampling", resampling, RESAMPLING_LEVELS)
    level = _check_level(level)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    matrices = _check_tasks(tasks)
    if task_names is not None and len(task_names) != len(matrices):
        raise parameter_error("task_names", f"one name per task ({len(matrices)} names)",
                              list(task_names))
    strata = _type_strata(task_types, len(matrices), aggregation)
    if aggregation != "type_mean":
        strata = None  # the other aggregations weigh every task alike: plain draws
    elif resampling != "topics" and strata is not None:
        alone = [_task_label(int(members[0]), task_names) for members in strata
                 if members.size == 1]
        if alone:
            warnings.warn(f"tasks {alone} are the only task of their type: a bootstrap"
                          " within types cannot vary them.", DegenerateTestWarning,
                          stacklevel=2)
    single = [_task_label(t, task_names) for t, matrix in enumerate(matrices)
              if matrix.shape[0] == 1]
    if single and resampling != "tasks":
        warnings.warn(f"tasks {single} have one topic: nothing to resample within them.",
                      DegenerateTestWarning, stacklevel=2)
    if resampling != "topics" and len(matrices) < 10:
        warnings.warn(f"only {len(matrices)} task{'s' if len(matrices) != 1 else ''}: a bootstrap over tasks is coarse with "
                      "fewer than about 10.", DegenerateTestWarning, stacklevel=2)
    same = [t for t, matrix in enumerate(matrices) if np.all(matrix == matrix[:, :1])]
    if len(same) == len(matrices):
        warnings.warn("every system has the same score on every topic of every task: no"
                      " system can be told apart (every interval is [1, m]).",
                      DegenerateTestWarning, stacklevel=2)
    weights = None if strata is None else _type_weights(strata, len(matrices))
    observed = _aggregate(np.stack([t.mean(axis=0) for t in matrices]), aggregation, weights)
    with one_blas_thread():  # small matrix products on our threads: no BLAS threads besides
        boot = _resampled_scores(matrices, aggregation, resampling, n_resamples, seed,
                                 threads, strata, weights)
        return _result(observed, boot, level, aggregation, resampling, threads)


def bootstrap_mean_intervals(values: Any, *, level: float = 0.95, n_resamples: int = 1000,
                             seed: Any = 0, threads: Any = None) -> tuple[np.ndarray, ...]:
    r"""Column means with percentile bootstrap intervals over rows, NaN left out per column.

    Each resample draws the ``n`` rows with replacement (the same rows for every column);
    a column's resampled mean is over its finite values among them:

    .. math:: \bar x^*_c = \frac{\sum_i w_i\, x_{ic} [x_{ic} \text{ finite}]}
              {\sum_i w_i [x_{ic} \text{ finite}]}

    and the interval is the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of
    :math:`\bar x^*_c`. Drawn in seeded blocks: any ``threads`` gives the same numbers.

    Parameters
    ----------
    values : array-like, shape (n, k)
        NaN marks a value that is not defined (left out of that column's means).
    level : float
    n_resamples : int
    seed : int, numpy.random.Generator or None
    threads : int or None

    Returns
    -------
    (mean, low, high) : tuple of ndarray, shape (k,)
        NaN for a column without a finite value.

    Examples
    --------
    >>> mean, low, high = bootstrap_mean_intervals([[1.0, np.nan], [0.0, 0.5], [1.0, 0.7]],
    ...                                            n_resamples=200)
    >>> mean.round(3).tolist(), bool(low[0] <= mean[0] <= high[0])
    ([0.667, 0.6], True)
    """
    level = _check_level(level)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error("values", "an array of real numbers", values) from None
    if x.ndim != 2 or x.shape[0] < 1:
        raise ShapeError(f"`values` must be 2-D (n >= 1 rows, k columns); got shape {x.shape}.")
    if np.isinf(x).any():
        raise parameter_error("values", "finite or NaN", float(x[np.isinf(x)][0]))
    finite = np.isfinite(x)
    filled = np.where(finite, x, 0.0)
    n = x.shape[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / finite.sum(axis=0)
    parts = _fixed_point_parts(filled)
    present = finite.astype(np.float64)
    complete = bool(finite.all())
    n_blocks = -(-n_resamples // _RESAMPLE_BLOCK)
    root = block_root(seed)
    scratch = _Scratch().get  # each thread's weights, for all its blocks

    def block(index: int) -> np.ndarray:
        size = min(_RESAMPLE_BLOCK, n_resamples - index * _RESAMPLE_BLOCK)
        weights = _resample_counts(block_generator(root, index), size, n,
                                   out=scratch("weights", (size, n), np.float64))
        # without NaN every resample counts n rows: no product needed (it is exactly n)
        counted = float(n) if complete else weights @ present
        with np.errstate(invalid="ignore", divide="ignore"):
            return _exact_means(weights, parts, 1) / counted

    threads = threads_for_work(threads, n_resamples * n)  # the draws, as for rank intervals
    with one_blas_thread():
        boot = np.concatenate(map_in_runs(block, n_blocks, threads=threads))
    tail = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        low = np.nanquantile(boot, tail, axis=0)
        high = np.nanquantile(boot, 1.0 - tail, axis=0)
    return mean, low, high
