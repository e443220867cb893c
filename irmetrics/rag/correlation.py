"""Correlations with intervals: judge against truth leaderboards, retrieval against generation.

* :func:`leaderboard_correlations` -- the columns of autojudge-evaluate's ``meta-evaluate``
  table (``kendall``, ``pearson``, ``spearman``, ``tauap_b``) between a truth and a judge
  leaderboard, the same numbers, plus bootstrap intervals over topics;
* :func:`judge_correlations` -- the same from autojudge-evaluate's leaderboard files
  (:func:`~irmetrics.rag.read_leaderboard`), estimates on their aggregate rows;
* :func:`topic_correlations` -- the same statistics between two measures across topics
  (does a topic with better retrieval get a better answer?), with bootstrap intervals;
* :func:`retrieval_vs_generation` -- per topic, a retrieval run's measure next to its
  answer's nugget score, their correlation across topics for each system and across
  systems.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np
import polars as pl

from irmetrics.checks import check_float, check_int, parameter_error
from irmetrics.exceptions import ShapeError
from irmetrics.stats import kendall_tau_b, pearson_r, spearman_rho, tau_ap
from .formats import read_leaderboard
from .nuggets import NuggetScores

#: The statistics of :func:`leaderboard_correlations`, autojudge-evaluate's names.
LEADERBOARD_STATISTICS = ("kendall", "pearson", "spearman", "tauap_b")

#: The statistics of :func:`topic_correlations`.
TOPIC_STATISTICS = ("kendall", "pearson", "spearman")

#: Resamples drawn at once (bounds the memory of a bootstrap to a block).
_BLOCK = 256


def _statistics(x: np.ndarray, y: np.ndarray, names: tuple) -> np.ndarray:
    """Each statistic of rows ``x`` (reference) and ``y``: shape (rows, statistics)."""
    funcs = {"kendall": kendall_tau_b, "pearson": pearson_r, "spearman": spearman_rho,
             "tauap_b": lambda a, b: tau_ap(a, b, symmetric=True)}
    return np.stack([np.asarray(funcs[n](x, y), dtype=np.float64).reshape(len(x))
                     for n in names], axis=1)


def _sorted_means(scores: np.ndarray) -> np.ndarray:
    """Means over axis -2, summed in sorted order: the same topics in any order give the
    same mean, so systems with equal scores stay tied in every resample."""
    return np.sort(scores, axis=-2).sum(axis=-2) / scores.shape[-2]


def _bootstrap(x, y, names, reduce, n_resamples, seed, level):
    """Percentile intervals of the statistics over resamples of the rows (topics)."""
    n = x.shape[0]
    rng = np.random.default_rng(seed)
    blocks = []
    for start in range(0, n_resamples, _BLOCK):
        idx = rng.integers(0, n, (min(_BLOCK, n_resamples - start), n))
        blocks.append(_statistics(reduce(x[idx]), reduce(y[idx]), names))
    samples = np.concatenate(blocks)
    tail = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a statistic undefined everywhere
        low = np.nanquantile(samples, tail, axis=0)
        high = np.nanquantile(samples, 1.0 - tail, axis=0)
    return low, high


def _table(names, estimate, low, high, n_items, n_topics) -> pl.DataFrame:
    return pl.DataFrame({"statistic": list(names), "estimate": estimate, "ci_low": low,
                         "ci_high": high, "items": [n_items] * len(names),
                         "topics": [n_topics] * len(names)})


def _check_common(n_resamples, seed, level):
    n_resamples = check_int("n_resamples", n_resamples, min=0)
    seed = check_int("seed", seed, min=0)
    level = check_float("level", level, min=0.0, max=1.0)
    if level in (0.0, 1.0):
        raise parameter_error("level", "in (0, 1)", level)
    return n_resamples, seed, level


def _as_array(name: str, value, ndims: tuple) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error(name, "an array of real numbers", value) from None
    if array.ndim not in ndims:
        raise ShapeError(f"`{name}` must have {' or '.join(map(str, ndims))} dimensions;"
                         f" got shape {array.shape}.")
    if not np.isfinite(array).all():
        raise parameter_error(name, "finite everywhere", value)
    return array


def leaderboard_correlations(truth, judge, *, n_resamples: int = 1000, seed: int = 0,
                             level: float = 0.95) -> pl.DataFrame:
    r"""autojudge-evaluate's meta-evaluation row: judge leaderboard against truth.

    The statistics are computed on the system means :math:`\bar x` (truth) and
    :math:`\bar y` (judge): Kendall's :math:`\tau_b`, Pearson's :math:`r`, Spearman's
    :math:`\rho` (pandas' ``DataFrame.corr``, as autojudge-evaluate computes them) and the
    symmetric :math:`\tau_{AP,b} = (\tau_{AP}(\bar x, \bar y) + \tau_{AP}(\bar y,
    \bar x)) / 2` (Urbano & Marrero; autojudge-evaluate's ``tauap_b``). The interval of
    each is the percentile interval of the statistic over ``n_resamples`` bootstrap
    resamples of the topics (the same topics for both sides, system means recomputed).

    Parameters
    ----------
    truth, judge : array-like, shape (n_topics, m) or (m,)
        Per-topic scores (rows aligned topics, columns the same ``m`` systems) or system
        means (then no interval: NaN).
    n_resamples, seed : int
    level : float, default 0.95

    Returns
    -------
    polars.DataFrame
        ``statistic`` (:data:`LEADERBOARD_STATISTICS`), ``estimate``, ``ci_low``,
        ``ci_high``, ``items`` (systems), ``topics``.

    Examples
    --------
    >>> t = leaderboard_correlations([1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    ...                              [10, 20, 30, 40, 50, 60, 70, 80, 100, 90])
    >>> [round(v, 4) for v in t["estimate"]]
    [0.9556, 0.9879, 0.9879, 0.7778]
    """
    n_resamples, seed, level = _check_common(n_resamples, seed, level)
    x = _as_array("truth", truth, (1, 2))
    y = _as_array("judge", judge, (1, 2))
    if x.shape != y.shape:
        raise ShapeError(f"`truth` and `judge` must have the same shape (topics, systems);"
                         f" got {x.shape} and {y.shape}.")
    m = x.shape[-1]
    if m < 3:
        raise ShapeError(f"at least 3 systems are needed to correlate leaderboards; got {m}.")
    per_topic = x.ndim == 2
    xm, ym = (_sorted_means(x), _sorted_means(y)) if per_topic else (x, y)
    estimate = _statistics(xm[None], ym[None], LEADERBOARD_STATISTICS)[0]
    nan = np.full(len(LEADERBOARD_STATISTICS), np.nan)
    low, high = nan, nan.copy()
    if per_topic and n_resamples:
        low, high = _bootstrap(x, y, LEADERBOARD_STATISTICS, _sorted_means, n_resamples,
                               seed, level)
    return _table(LEADERBOARD_STATISTICS, estimate, low, high, m, x.shape[0] if per_topic else 0)


def _board(value, what: str, fmt: str) -> pl.DataFrame:
    if isinstance(value, pl.DataFrame):
        return value
    if isinstance(value, (str, os.PathLike)):
        return read_leaderboard(value, format=fmt)
    raise parameter_error(what, "a path or the DataFrame of read_leaderboard", type(value))


def judge_correlations(truth, judge, *, truth_measure: str, judge_measure: str,
                       format: str = "tot", n_resamples: int = 1000, seed: int = 0,
                       level: float = 0.95) -> pl.DataFrame:
    """autojudge-evaluate's ``meta-evaluate`` row for one (truth measure, judge measure).

    The estimates are :func:`leaderboard_correlations` of the runs' aggregate values (the
    ``all`` rows, as autojudge-evaluate takes them; the mean of the per-topic values where
    a side has none); the intervals resample the topics both sides score for every run.

    Parameters
    ----------
    truth, judge : path or polars.DataFrame
        Leaderboards (:func:`~irmetrics.rag.read_leaderboard`).
    truth_measure, judge_measure : str
    format : {"tot", "ir_measures", "jsonl"}, default "tot"
        The format of the leaderboards given as paths.
    n_resamples, seed, level
        As for :func:`leaderboard_correlations`.

    Returns
    -------
    polars.DataFrame
        As :func:`leaderboard_correlations`.

    Raises
    ------
    ParameterError
        A measure missing from its leaderboard, or runs only one side has (named).

    Examples
    --------
    >>> import polars as pl
    >>> def board(measure, values):
    ...     runs = [f"run_0{i}" for i in range(1, 5)]
    ...     return pl.DataFrame({"run_id": runs * 2, "measure": [measure] * 8,
    ...                          "topic_id": ["q1"] * 4 + ["all"] * 4,
    ...                          "value": [float(v) for v in values * 2], "line": range(8)})
    >>> t = judge_correlations(board("ORACLE", [1, 2, 3, 4]), board("M1", [1, 3, 2, 4]),
    ...                        truth_measure="ORACLE", judge_measure="M1")
    >>> [round(v, 4) for v in t["estimate"]]
    [0.6667, 0.8, 0.8, 0.6667]
    """
    sides = []
    for name, value, measure in (("truth", truth, truth_measure), ("judge", judge,
                                                                   judge_measure)):
        frame = _board(value, name, format).filter(pl.col("measure") == measure)
        if frame.height == 0:
            raise parameter_error(f"{name}_measure", f"a measure of the {name} leaderboard",
                                  measure)
        sides.append(frame)
    runs = [set(f["run_id"].unique().to_list()) for f in sides]
    if runs[0] != runs[1]:
        raise parameter_error("judge", "a leaderboard of the truth's runs (only in truth:"
                              f" {sorted(runs[0] - runs[1])}; only in judge:"
                              f" {sorted(runs[1] - runs[0])})", "mismatched runs")
    order = sorted(runs[0])
    aggregates, topics = [], []
    for frame in sides:
        rows = frame.filter(pl.col("topic_id") == "all")
        per_topic = frame.filter(pl.col("topic_id") != "all")
        if rows["run_id"].n_unique() < len(order):
            rows = per_topic.group_by("run_id").agg(pl.col("value").mean())
        aggregates.append(rows.select("run_id", "value").sort("run_id")["value"].to_numpy())
        topics.append(per_topic.pivot(on="run_id", index="topic_id", values="value")
                      .drop_nulls())
    table = leaderboard_correlations(aggregates[0], aggregates[1])
    common = topics[0].join(topics[1], on="topic_id", suffix="_judge")
    if common.height and n_resamples:
        x = common.select(order).to_numpy()
        y = common.select([f"{r}_judge" for r in order]).to_numpy()
        spread = leaderboard_correlations(x, y, n_resamples=n_resamples, seed=seed,
                                          level=level)
        table = table.with_columns(ci_low=spread["ci_low"], ci_high=spread["ci_high"],
                                   topics=spread["topics"])
    return table


def topic_correlations(x, y, *, n_resamples: int = 1000, seed: int = 0,
                       level: float = 0.95) -> pl.DataFrame:
    r"""Correlation of two measures across topics, with bootstrap intervals.

    Kendall's :math:`\tau_b`, Pearson's :math:`r` and Spearman's :math:`\rho` of the pairs
    :math:`(x_q, y_q)`; each interval is the percentile interval over ``n_resamples``
    resamples of the topics with replacement.

    Parameters
    ----------
    x, y : array-like, shape (n_topics,)
        Aligned per-topic values (e.g. a retrieval run's nDCG@10 and its answer's
        nugget recall).
    n_resamples, seed : int
    level : float, default 0.95

    Returns
    -------
    polars.DataFrame
        ``statistic`` (:data:`TOPIC_STATISTICS`), ``estimate``, ``ci_low``, ``ci_high``,
        ``items`` and ``topics`` (both the number of topics).

    Examples
    --------
    >>> t = topic_correlations([0.1, 0.4, 0.3, 0.8], [0.2, 0.5, 0.4, 0.6], n_resamples=0)
    >>> t.select("statistic", "estimate").rows()[0]
    ('kendall', 1.0)
    """
    n_resamples, seed, level = _check_common(n_resamples, seed, level)
    xa = _as_array("x", x, (1,))
    ya = _as_array("y", y, (1,))
    if xa.shape != ya.shape or len(xa) < 3:
        raise ShapeError(f"`x` and `y` must hold the same 3 or more topics; got {xa.shape}"
                         f" and {ya.shape}.")
    estimate = _statistics(xa[None], ya[None], TOPIC_STATISTICS)[0]
    nan = np.full(len(TOPIC_STATISTICS), np.nan)
    low, high = nan, nan.copy()
    if n_resamples:
        low, high = _bootstrap(xa, ya, TOPIC_STATISTICS, lambda v: v, n_resamples, seed,
                               level)
    return _table(TOPIC_STATISTICS, estimate, low, high, len(xa), len(xa))


@dataclass(frozen=True)
class RetrievalVsGeneration:
    """Result of :func:`retrieval_vs_generation`.

    Attributes
    ----------
    per_topic : polars.DataFrame
        ``run_id``, ``topic_id``, ``retrieval`` (the retrieval measure), ``generation``
        (the nugget measure): topics both sides scored.
    across_topics : polars.DataFrame
        ``run_id`` and the columns of :func:`topic_correlations`, one block per run.
    across_systems : polars.DataFrame or None
        :func:`leaderboard_correlations` of the retrieval leaderboard (truth side) and the
        generation one over the topics every run has; None with fewer than 3 runs.
    """

    per_topic: pl.DataFrame
    across_topics: pl.DataFrame
    across_systems: pl.DataFrame | None


def retrieval_vs_generation(retrieval: dict, generation: NuggetScores, *,
                            retrieval_measure: str, nugget_measure: str = "all_score",
                            n_resamples: int = 1000, seed: int = 0,
                            level: float = 0.95) -> RetrievalVsGeneration:
    """Does better retrieval buy better answers? Per topic, and across systems.

    Parameters
    ----------
    retrieval : dict
        ``{run: Results or PerQueryScores}``: the retrieval run that fed each RAG system,
        named as the system's ``run_id`` in the assignments.
    generation : NuggetScores
    retrieval_measure : str
        An output of the retrieval results (``ndcg_cut_10``, ``nDCG@10``, ``map``).
    nugget_measure : str, default "all_score"
        One of :data:`~irmetrics.rag.NUGGET_MEASURES`.
    n_resamples, seed : int
    level : float, default 0.95

    Returns
    -------
    RetrievalVsGeneration

    Examples
    --------
    >>> import polars as pl
    >>> from irmetrics.io.per_query import PerQueryScores
    >>> from irmetrics.rag import nugget_scores
    >>> a = pl.DataFrame({"run_id": ["r"] * 3, "topic_id": ["1", "2", "3"],
    ...                   "line": [1, 2, 3], "nugget": [0, 0, 0], "text": ["a"] * 3,
    ...                   "importance": ["vital"] * 3,
    ...                   "assignment": ["support", "not_support", "partial_support"]})
    >>> ret = PerQueryScores(query_ids=np.array(["1", "2", "3"], dtype=object),
    ...                      columns={"map": np.array([0.9, 0.1, 0.5])}, run_name="r")
    >>> rv = retrieval_vs_generation({"r": ret}, nugget_scores(a), retrieval_measure="map",
    ...                              n_resamples=0)
    >>> rv.per_topic.select("topic_id", "retrieval", "generation").rows()[1]
    ('2', 0.1, 0.0)
    >>> rv.across_topics.filter(statistic="pearson")["estimate"][0]
    1.0
    """
    n_resamples, seed, level = _check_common(n_resamples, seed, level)
    if not isinstance(retrieval, dict) or not retrieval:
        raise parameter_error("retrieval", "a dict {run: Results or PerQueryScores}",
                              type(retrieval))
    unknown = [r for r in retrieval if r not in generation.runs]
    if unknown:
        raise parameter_error("retrieval", "runs named as the answers' run_id (scored runs:"
                              f" {', '.join(generation.runs)})", unknown)
    frames = []
    for run, values in retrieval.items():
        if retrieval_measure not in values.names:
            raise parameter_error("retrieval_measure", f"an output of run {run!r}"
                                  f" ({', '.join(values.names[:8])})", retrieval_measure)
        side = pl.DataFrame({"topic_id": [str(q) for q in values.query_ids],
                             "retrieval": np.asarray(values.values(retrieval_measure),
                                                     dtype=np.float64)})
        answers = generation.per_query(run)
        if nugget_measure not in answers.names:
            raise parameter_error("nugget_measure", f"one of {', '.join(answers.names)}",
                                  nugget_measure)
        gen = pl.DataFrame({"topic_id": list(answers.query_ids),
                            "generation": answers.values(nugget_measure)})
        frames.append(side.join(gen, on="topic_id").sort("topic_id")
                      .select(pl.lit(run).alias("run_id"), "topic_id", "retrieval",
                              "generation"))
    per_topic = pl.concat(frames)
    blocks = []
    for run in retrieval:
        part = per_topic.filter(pl.col("run_id") == run)
        if part.height < 3:
            raise ShapeError(f"run {run!r}: retrieval and answers share {part.height} topics;"
                             " at least 3 are needed to correlate them.")
        blocks.append(topic_correlations(part["retrieval"].to_numpy(),
                                         part["generation"].to_numpy(),
                                         n_resamples=n_resamples, seed=seed, level=level)
                      .select(pl.lit(run).alias("run_id"), pl.all()))
    across_systems = None
    runs = list(retrieval)
    if len(runs) >= 3:
        wide = (per_topic.pivot(on="run_id", index="topic_id",
                                values=["retrieval", "generation"]).drop_nulls())
        x = wide.select([f"retrieval_{r}" for r in runs]).to_numpy()
        y = wide.select([f"generation_{r}" for r in runs]).to_numpy()
        across_systems = leaderboard_correlations(x, y, n_resamples=n_resamples, seed=seed,
                                                  level=level)
    return RetrievalVsGeneration(per_topic, pl.concat(blocks), across_systems)


__all__ = ["LEADERBOARD_STATISTICS", "RetrievalVsGeneration", "TOPIC_STATISTICS",
           "judge_correlations", "leaderboard_correlations", "retrieval_vs_generation", "topic_correlations"]
