"""evaluate_grid(): many qrels x many runs, and how stable the leaderboards they give are.

One :class:`~irmetrics.Evaluator` per qrels (each qrels encoded once), every run read
once and evaluated against all of them (:func:`irmetrics.evaluate.evaluate_each`). The
:class:`Grid` holds a :class:`~irmetrics.Results` per (qrels, run) and reads everything
else from them: the tidy table, the aggregates, the agreement between the leaderboards
of two qrels sets, of two measures or of a qrels set and a published leaderboard
(:func:`irmetrics.stats.ranking_agreement`), and the discriminative power and swap rate
of each leaderboard (:mod:`irmetrics.stats.stability`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping

import numpy as np
import polars as pl

from .. import stats
from ..checks import check_choice, check_int, parameter_error
from ..comparison import MAX_RESAMPLES
from ..evaluate import Evaluator, evaluate_each, stacked_for
from ..exceptions import (MissingQueriesWarning, NoQueriesError, ParameterError,
                          QueryAlignmentWarning)
from ..io.output import file_inputs
from ..measures.parse import output_name
from ..measures.registry import MEAN, STRING
from ..parallel import map_ordered, map_ordered_warnings, resolve_threads, split_threads
from ..rag.evaluate import NuggetEvaluator
from ..results import lacking_summary, listed_ids, report_query_set

#: The options :func:`evaluate_grid` passes to every :class:`~irmetrics.Evaluator`.
EVALUATE_OPTIONS = ("relevance_level", "judged_only", "max_docs", "complete", "semantics",
                    "num_docs_in_coll", "qrels_columns", "run_columns", "ties", "relevance",
                    "progress")

#: Name of a reference leaderboard given as values (not as a qrels set).
LEADERBOARD = "leaderboard"


def named_inputs(inputs, what: str) -> dict:
    """``{name: input}`` from a dict, or from a list of paths (names: the file names, or
    the paths as given where two file names are the same).

    Examples
    --------
    >>> list(named_inputs(["a/qrels.txt", "b/qrels.txt", "c/llm.txt"], "qrels"))
    ['a/qrels.txt', 'b/qrels.txt', 'c/llm.txt']
    """
    if isinstance(inputs, Mapping):
        named = dict(inputs)
        for name in named:
            if not isinstance(name, str) or not name:
                raise parameter_error(what, "a dict with non-empty string names", name)
    elif isinstance(inputs, (list, tuple)):
        if not all(isinstance(v, (str, os.PathLike)) for v in inputs):
            raise parameter_error(what, "a dict {name: input} or a list of paths",
                                  [type(v).__name__ for v in inputs])
        paths = [os.fspath(v) for v in inputs]
        names = [os.path.basename(p) or p for p in paths]
        if len(set(names)) < len(names):
            names = paths
        if len(set(names)) < len(names):
            raise parameter_error(what, "distinct paths", paths)
        named = dict(zip(names, inputs))
    else:
        raise parameter_error(what, "a dict {name: input} or a list of paths", type(inputs))
    if not named:
        raise parameter_error(what, "at least one input", inputs)
    return named


class Grid:
    """Every run evaluated against every qrels set (:func:`evaluate_grid`).

    Attributes
    ----------
    qrels_names, run_names : list of str
        In the order given.
    names : list of str
        Output names of the measures (``map``, ``P_10``, ``nDCG@10``).
    results : dict of (str, str) to Results
        The evaluation of each (qrels, run), as :func:`irmetrics.evaluate` gives it.
    sources : dict of str to path
        ``{"qrels 'name'": path, "run 'name'": path}`` of every input read from a file:
        what an output (:meth:`MetaEvaluation.to_html`) must never overwrite.

    Examples
    --------
    >>> import irmetrics as irm
    >>> human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}, "q3": {"e": 1, "f": 0}}
    >>> llm = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1, "d": 0}, "q3": {"e": 0, "f": 1}}
    >>> runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}, "q3": {"e": 2, "f": 1}},
    ...         "y": {"q1": {"b": 2, "a": 1}, "q2": {"d": 2, "c": 1}, "q3": {"f": 2, "e": 1}}}
    >>> grid = irm.evaluate_grid({"human": human, "llm": llm}, runs, "P.1")
    >>> grid.means("P_1").rows()
    [('x', 1.0, 0.6666666666666666), ('y', 0.0, 0.6666666666666666)]
    >>> row = grid.ranking_agreement("human", n_resamples=100).row(0, named=True)
    >>> row["qrels"], row["tau_b"], row["swaps"]     # the LLM ties what the humans separate
    ('llm', nan, 0.0)
    """

    def __init__(self, qrels_names, run_names, results: dict, sources=None):
        self.qrels_names = list(qrels_names)
        self.run_names = list(run_names)
        self.results = results
        self.sources = dict(sources or {})
        first = results[(self.qrels_names[0], self.run_names[0])]
        self.names = list(first.names)

    def __repr__(self) -> str:
        return (f"Grid({len(self.qrels_names)} qrels x {len(self.run_names)} runs,"
                f" {', '.join(self.names[:6])}{', ...' if len(self.names) > 6 else ''})")

    def per_query(self) -> pl.DataFrame:
        """The tidy table: ``qrels``, ``run``, ``query_id``, ``measure``, ``value``, one row
        per (qrels, run, query, measure), in that order (queries in byte order)."""
        frames = []
        for (qrels, run), res in self.results.items():
            frame = res.per_query()
            frames.append(frame.select(pl.lit(qrels, pl.String).alias("qrels"),
                                       pl.lit(run, pl.String).alias("run"), pl.all()))
        return pl.concat(frames)

    def aggregate(self) -> pl.DataFrame:
        """``qrels``, ``run``, ``measure``, ``value``: each measure's summary as
        :meth:`Results.aggregate` gives it (mean over the evaluated queries, trec_eval's
        sums and geometric means), numbers only."""
        rows: dict[str, list] = {"qrels": [], "run": [], "measure": [], "value": []}
        for (qrels, run), res in self.results.items():
            for name, value in res.aggregate().items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    rows["qrels"].append(qrels)
                    rows["run"].append(run)
                    rows["measure"].append(name)
                    rows["value"].append(float(value))
        return pl.DataFrame(rows, schema={"qrels": pl.String, "run": pl.String,
                                          "measure": pl.String, "value": pl.Float64})

    def means(self, measure: str) -> pl.DataFrame:
        """The leaderboards of ``measure`` side by side: a row per run, a column per
        qrels set (the aggregate of :meth:`aggregate`)."""
        measure = self._measure(measure)
        data = {"run": self.run_names}
        for qrels in self.qrels_names:
            data[qrels] = [float(self.results[(qrels, run)].summary_value(measure))
                           for run in self.run_names]
        return pl.DataFrame(data)

    def scored_measures(self) -> list[str]:
        """Output names with per-query scores averaged over queries (no counts, no
        ``runid``, no geometric means): what rankings of systems are made of."""
        res = self.results[(self.qrels_names[0], self.run_names[0])]
        return [n for n in self.names if res.measure_of(n).summary == MEAN
                and res.measure_of(n).printed != STRING and not res.is_bookkeeping(n)]

    def _measure(self, measure) -> str:
        # any spelling of a measure of the grid: "P.10", "P_10" and "P@10" alike
        return output_name(measure, self.names)

    def _measures(self, measures) -> list[str]:
        if measures is None:
            return self.scored_measures()
        if isinstance(measures, str):
            measures = [measures]
        return [self._measure(m) for m in measures]

    def _top(self, k) -> int:
        return min(check_int("k", k, min=1), len(self.run_names))

    def _qrels(self, name) -> str:
        return check_choice("qrels", name, self.qrels_names)

    def scores(self, measure: str, qrels=None):
        """Per-query scores of every run on the queries all of them share under every
        qrels set of ``qrels`` (default: all): ``(query_ids, {qrels: array (n, m)})``,
        rows queries (byte order), columns runs (:attr:`run_names` order).

        Queries some run or some of these qrels sets lacks are left out, with a
        :class:`~irmetrics.exceptions.QueryAlignmentWarning` (``complete=True`` scores a
        query a run did not answer instead)."""
        measure = self._measure(measure)
        chosen = self.qrels_names if qrels is None else [self._qrels(q) for q in qrels]
        ids = [np.asarray(self.results[(q, r)].query_ids, dtype=str)
               for q in chosen for r in self.run_names]
        union = np.unique(np.concatenate(ids))
        common = union
        for v in ids:
            common = np.intersect1d(common, v, assume_unique=True)
        if len(common) == 0:
            raise NoQueriesError("the runs share no query under the qrels sets"
                                 f" {', '.join(map(repr, chosen))}")
        if len(common) < len(union):
            dropped = np.setdiff1d(union, common, assume_unique=True)
            # The same for every measure (each Results has one query set): one message.
            warnings.warn(f"{len(dropped)} of {len(union)} queries are not scored for every run"
                          f" under {', '.join(map(repr, chosen))} and are left out of the"
                          f" rankings: {listed_ids(dropped.tolist())}",
                          QueryAlignmentWarning, stacklevel=3)
        out = {}
        for q in chosen:
            columns = []
            for r in self.run_names:
                res = self.results[(q, r)]
                have = np.asarray(res.query_ids, dtype=str)
                order = np.argsort(have, kind="stable")
                position = order[np.searchsorted(have[order], common)]
                column = np.asarray(res.values(measure), dtype=np.float64)[position]
                bad = np.flatnonzero(~np.isfinite(column))
                if bad.size:
                    raise ParameterError(
                        f"{measure} is {column[bad[0]]} for run {r!r} on query"
                        f" {str(common[bad[0]])!r} under qrels {q!r}: rankings of systems need"
                        f" a finite score per query ({bad.size} of {len(common)} are not)")
                columns.append(column)
            out[q] = np.stack(columns, axis=1)
        return common.astype(object), out

    def alignment_note(self) -> str | None:
        """One message for every query some table of this grid leaves out (a run did
        not answer it, or a qrels set does not judge it), naming the run that lacks
        each; None when every run is scored on every query under every qrels set.
        :func:`irmetrics.meta_evaluate` warns with it once, instead of once per table."""
        have = {r: [np.asarray(self.results[(q, r)].query_ids, dtype=str)
                    for q in self.qrels_names] for r in self.run_names}
        unanswered = [np.asarray(res.missing_query_ids, dtype=str)
                      for res in self.results.values()]
        union = np.unique(np.concatenate([v for ids in have.values() for v in ids]
                                         + unanswered))
        lacking = {}
        common = union
        for run, ids in have.items():
            scored = union
            for v in ids:
                scored = np.intersect1d(scored, v, assume_unique=True)
            common = np.intersect1d(common, scored, assume_unique=True)
            if len(scored) < len(union):
                lacking[run] = np.setdiff1d(union, scored, assume_unique=True).tolist()
        if not lacking:
            return None
        return (f"{len(union) - len(common)} of {len(union)} queries are not scored for every"
                f" run under every qrels set and are left out of the rankings:"
                f"{lacking_summary(lacking)}; complete=True (trec_eval -c) scores a query a"
                " run did not answer as an empty ranking")

    # -- agreement between leaderboards ------------------------------------------------

    def ranking_agreement(self, reference=None, *, leaderboard=None, measures=None,
                          k: int = 3, n_resamples: int = 1000, seed=0,
                          level: float = 0.95, threads: int | None = None) -> pl.DataFrame:
        """How far the leaderboard of each qrels set agrees with a reference, per measure.

        Parameters
        ----------
        reference : str, optional
            The reference qrels set (default: the first); every other qrels set is
            compared with it, system means over the queries both share
            (:meth:`scores`), topics resampled together.
        leaderboard : mapping, optional
            Compare every qrels set with a published leaderboard instead:
            ``{run: value}`` (for every measure) or ``{measure: {run: value}}``; it must
            hold every run (systems that are not runs of the grid are left out). Only
            the qrels side is resampled.
        measures : str or list of str, optional
            Output names (default: :meth:`scored_measures`).
        k, n_resamples, seed, level
            As :func:`irmetrics.stats.ranking_agreement` (``k`` at most the number of
            runs: a smaller grid compares all of its runs).
        threads : int or None
            Threads for the cells (:func:`irmetrics.parallel.resolve_threads`); the table
            does not depend on it.

        Returns
        -------
        polars.DataFrame
            One row per (qrels, measure): ``reference``, ``qrels``, ``measure``,
            ``n_systems``, ``n_topics``, then for each statistic of
            :data:`~irmetrics.stats.RANKING_STATISTICS` (``tau_b``, ``tau_ap``,
            ``spearman``, ``pearson``, ``swaps``, ``top_k``) its value and the ends of its
            interval (``tau_b_low``, ``tau_b_high``, ...). ``tau_ap`` takes the
            reference as the truth.
        """
        measures = self._measures(measures)
        k = self._top(k)
        n_resamples = _resample_count("n_resamples", n_resamples, 0)
        # The cells' scores are taken here (they warn); their statistics run in parallel.
        cells = []
        if leaderboard is not None:
            if reference is not None:
                raise parameter_error("reference", "None when a leaderboard is given",
                                      reference)
            for measure in measures:
                board = self.leaderboard_values(leaderboard, measure)
                for qrels in self.qrels_names:
                    _, scores = self.scores(measure, [qrels])
                    cells.append((LEADERBOARD, qrels, measure, board, scores[qrels]))
        else:
            reference = self.qrels_names[0] if reference is None else self._qrels(reference)
            others = [q for q in self.qrels_names if q != reference]
            if not others:
                raise parameter_error("qrels", "at least two qrels sets to compare (or a"
                                      " leaderboard)", self.qrels_names)
            for measure in measures:
                for qrels in others:
                    _, scores = self.scores(measure, [reference, qrels])
                    cells.append((reference, qrels, measure, scores[reference], scores[qrels]))

        def agreement(cell, inner: int) -> dict:
            against, qrels, measure, x, y = cell
            return _agreement_row(against, qrels, measure, stats.ranking_agreement(
                x, y, k=k, n_resamples=n_resamples, seed=seed, level=level, threads=inner))

        return _agreement_frame(_map_cells(agreement, cells, threads))

    def measure_agreement(self, reference: str, other: str, *, qrels=None, k: int = 3,
                          n_resamples: int = 1000, seed=0, level: float = 0.95,
                          threads: int | None = None) -> pl.DataFrame:
        """How far the leaderboard of measure ``other`` agrees with that of measure
        ``reference``, under each qrels set (or those of ``qrels``); the columns of
        :meth:`ranking_agreement`, with ``reference`` and ``measure`` naming the two
        measures; ``threads`` as there."""
        reference, other = self._measure(reference), self._measure(other)
        k = self._top(k)
        n_resamples = _resample_count("n_resamples", n_resamples, 0)
        chosen = self.qrels_names if qrels is None else [self._qrels(q) for q in
                                                         ([qrels] if isinstance(qrels, str)
                                                          else qrels)]
        cells = []
        for q in chosen:
            _, a = self.scores(reference, [q])
            _, b = self.scores(other, [q])
            cells.append((q, a[q], b[q]))
        return _agreement_frame(_map_cells(
            lambda cell, inner: _agreement_row(reference, cell[0], other, stats.ranking_agreement(
                cell[1], cell[2], k=k, n_resamples=n_resamples, seed=seed, level=level,
                threads=inner)), cells, threads))

    def leaderboard_values(self, leaderboard, measure: str) -> np.ndarray:
        """The values of a leaderboard (``{run: value}`` or ``{measure: {run: value}}``)
        for ``measure``, in :attr:`run_names` order."""
        if not isinstance(leaderboard, Mapping) or not leaderboard:
            raise parameter_error("leaderboard", "a dict {run: value} or {measure: {run:"
                                  " value}}", leaderboard)
        board = leaderboard
        if all(isinstance(v, Mapping) for v in leaderboard.values()):
            if measure not in leaderboard:
                raise parameter_error("leaderboard", f"values of {measure!r} (it has"
                                      f" {', '.join(map(repr, leaderboard))})", measure)
            board = leaderboard[measure]
        lacking = [r for r in self.run_names if r not in board]
        if lacking:
            raise parameter_error("leaderboard", f"a value for every run (it lacks"
                                  f" {listed_ids(lacking)})", sorted(board)[:5])
        values = []
        for run in self.run_names:
            value = board[run]
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                    value, (int, float, np.integer, np.floating)) or not np.isfinite(value):
                raise parameter_error("leaderboard", f"a finite number for run {run!r} on"
                                      f" {measure}", value)
            values.append(float(value))
        return np.array(values, dtype=np.float64)

    # -- stability of each leaderboard --------------------------------------------------

    def discriminative_power(self, *, measures=None, test: str = "t", alpha: float = 0.05,
                             correction: str = "none", n_resamples: int = 10_000,
                             seed=0, threads: int | None = None) -> pl.DataFrame:
        """Discriminative power of each (qrels, measure)
        (:func:`irmetrics.stats.discriminative_power`, on the queries all runs share
        under that qrels set). ``threads``: as :meth:`ranking_agreement`.

        Returns
        -------
        polars.DataFrame
            ``qrels``, ``measure``, ``test``, ``correction``, ``alpha``, ``n_topics``,
            ``pairs``, ``significant``, ``power``.
        """
        measures = self._measures(measures)
        n_resamples = _resample_count("n_resamples", n_resamples, 1)
        cells = [(qrels, measure, self.scores(measure, [qrels])[1][qrels])
                 for qrels in self.qrels_names for measure in measures]

        def power(cell, inner: int) -> dict:
            qrels, measure, scores = cell
            res = stats.discriminative_power(scores, test=test, alpha=alpha,
                                             correction=correction, n_resamples=n_resamples,
                                             seed=seed, threads=inner)
            return {"qrels": qrels, "measure": measure, "test": res.test,
                    "correction": res.correction, "alpha": res.alpha,
                    "n_topics": res.n_topics, "pairs": len(res.pairs),
                    "significant": res.count, "power": res.power}

        rows = _map_cells(power, cells, threads)
        return pl.DataFrame(rows, schema={
            "qrels": pl.String, "measure": pl.String, "test": pl.String,
            "correction": pl.String, "alpha": pl.Float64, "n_topics": pl.Int64,
            "pairs": pl.Int64, "significant": pl.Int64, "power": pl.Float64})

    def swap_rate(self, *, measures=None, subset_size=None, n_trials: int = 1000,
                  bin_width: float = 0.01, threshold: float = 0.05, seed=0,
                  per_bin: bool = False, threads: int | None = None) -> pl.DataFrame:
        """Swap rate of each (qrels, measure) (:func:`irmetrics.stats.swap_rate`);
        ``threads`` as :meth:`ranking_agreement`.

        Returns
        -------
        polars.DataFrame
            ``qrels``, ``measure``, ``subset_size``, ``n_trials``, ``swap_rate`` (all
            swaps over all observations) and ``min_difference`` (the difference from which
            on the swap rate stays at most ``threshold``:
            :meth:`~irmetrics.stats.SwapRate.min_difference`); with ``per_bin``, one row
            per bin instead: ``qrels``, ``measure``, ``bin_low``, ``count``, ``swaps``,
            ``rate``. A qrels set whose runs share a single topic has no swap rate (NaN,
            ``subset_size`` 0; no bins).
        """
        measures = self._measures(measures)
        n_trials = _resample_count("n_trials", n_trials, 1)
        cells = [(qrels, measure, self.scores(measure, [qrels])[1][qrels])
                 for qrels in self.qrels_names for measure in measures]

        def swaps(cell, inner: int) -> list[dict]:
            qrels, measure, scores = cell
            if len(scores) < 2:
                # Two disjoint topic sets need two topics: undefined, not an error that
                # would stop every other table.
                return [] if per_bin else [{"qrels": qrels, "measure": measure,
                                            "subset_size": 0, "n_trials": 0,
                                            "swap_rate": np.nan, "min_difference": np.nan}]
            res = stats.swap_rate(scores, subset_size=subset_size, n_trials=n_trials,
                                  bin_width=bin_width, seed=seed, threads=inner)
            if per_bin:
                return [{"qrels": qrels, "measure": measure, "bin_low": float(low),
                         "count": int(c), "swaps": int(s), "rate": float(r)}
                        for low, c, s, r in zip(res.bin_low, res.counts, res.swaps, res.rate)]
            return [{"qrels": qrels, "measure": measure, "subset_size": res.subset_size,
                     "n_trials": res.n_trials, "swap_rate": res.overall,
                     "min_difference": res.min_difference(threshold)}]

        rows = [row for cell_rows in _map_cells(swaps, cells, threads) for row in cell_rows]
        if per_bin:
            return pl.DataFrame(rows, schema={"qrels": pl.String, "measure": pl.String,
                                              "bin_low": pl.Float64, "count": pl.Int64,
                                              "swaps": pl.Int64, "rate": pl.Float64})
        return pl.DataFrame(rows, schema={"qrels": pl.String, "measure": pl.String,
                                          "subset_size": pl.Int64, "n_trials": pl.Int64,
                                          "swap_rate": pl.Float64,
                                          "min_difference": pl.Float64})


def _map_cells(fn, cells: list, threads) -> list:
    """``[fn(cell, inner) for cell in cells]`` on ``threads`` threads, in cell order.

    With at least as many cells as threads each cell runs on one thread (``inner = 1``);
    with fewer, each cell's own resamples share the threads instead. The statistics do not
    depend on their thread count, so neither does the table.
    """
    outer, inner = split_threads(threads, len(cells))
    return map_ordered(lambda cell: fn(cell, inner), cells, threads=outer)


def _resample_count(name: str, value, minimum: int) -> int:
    """A number of resamples or trials, at most ``MAX_RESAMPLES`` as for ``compare``
    (beyond it time and memory run out before any gain in precision)."""
    return check_int(name, value, min=minimum, max=MAX_RESAMPLES)


def _agreement_row(reference: str, qrels: str, measure: str, res) -> dict:
    row = {"reference": reference, "qrels": qrels, "measure": measure,
           "n_systems": res.n_systems, "n_topics": res.n_topics}
    for name, value, low, high in zip(res.statistics, res.estimate, res.ci_low, res.ci_high):
        row[name], row[f"{name}_low"], row[f"{name}_high"] = float(value), float(low), float(high)
    return row


def agreement_columns() -> list[str]:
    """The columns of :meth:`Grid.ranking_agreement`, in order.

    Returns
    -------
    list of str
        ``reference, qrels, measure, n_systems, n_topics``, then each statistic of
        :data:`irmetrics.stats.RANKING_STATISTICS` with its ``_low`` and ``_high``
        confidence bounds.

    Examples
    --------
    >>> columns = agreement_columns()
    >>> columns[:8]
    ['reference', 'qrels', 'measure', 'n_systems', 'n_topics', 'tau_b', 'tau_b_low', 'tau_b_high']
    >>> len(columns) == 5 + 3 * len(stats.RANKING_STATISTICS)
    True
    """
    head = ["reference", "qrels", "measure", "n_systems", "n_topics"]
    return head + [f"{s}{end}" for s in stats.RANKING_STATISTICS for end in ("", "_low", "_high")]


def _agreement_frame(rows: list) -> pl.DataFrame:
    schema: dict[str, type[pl.DataType]] = {c: pl.Float64 for c in agreement_columns()}
    schema.update(reference=pl.String, qrels=pl.String, measure=pl.String,
                  n_systems=pl.Int64, n_topics=pl.Int64)
    return pl.DataFrame(rows, schema=schema)


def evaluate_grid(qrels, runs, measures, *, relevance_level=1, judged_only=False,
                  max_docs=None, complete=False, semantics="trec_eval", num_docs_in_coll=0,
                  qrels_columns=None, run_columns=None, ties="trec_eval",
                  relevance="int", progress=False, threads=None) -> Grid:
    """Evaluate every run against every qrels set, each run read once.

    Parameters
    ----------
    qrels : dict or list
        ``{name: qrels}`` (each a path, Qrels, dict or DataFrame as for
        :func:`irmetrics.evaluate`), or a list of paths (named by their file names).
    runs : dict or list
        ``{name: run}``, or a list of paths.
    measures : str or list of str
        As for :func:`irmetrics.evaluate`.
    relevance_level, judged_only, max_docs, complete, semantics, num_docs_in_coll,
    qrels_columns, run_columns, ties, relevance
        As for :func:`irmetrics.evaluate`, the same for every cell.
    progress : {False, True, "auto"}, default False
        Show each qrels file's and each run file's read on stderr, as
        :func:`irmetrics.evaluate` does (``irmetrics agree``: ``"auto"``).
    threads : int or None
        Threads reading the qrels sets and evaluating the runs, one run (against every
        qrels set) per thread at a time (:func:`irmetrics.parallel.resolve_threads`:
        default every core the process may use; 1 runs in the caller's thread). The grid,
        its warnings and errors do not depend on it.

    Returns
    -------
    Grid
        ``grid.results[(qrels_name, run_name)]`` is the :class:`~irmetrics.Results` that
        ``irmetrics.evaluate(qrels, run, measures, ...)`` gives, value for value;
        :meth:`Grid.per_query` is the tidy table (qrels, run, query, measure, value).

    Raises
    ------
    NoQueriesError
        A run shares no query with a qrels set (the message names both).

    Warns
    -----
    MissingQueriesWarning
        Once, when qrels queries had no ranking in some runs (each Results lists them in
        ``missing_query_ids``).

    Notes
    -----
    Each qrels set is read and encoded once (one :class:`~irmetrics.Evaluator` each);
    each run is read once for all of them (:func:`irmetrics.evaluate.evaluate_each`). A
    plain TREC run file, a Parquet or Arrow IPC file or a LazyFrame is evaluated in
    bounded memory, chunk by chunk, every chunk packed against each qrels set in turn
    (integer labels, ``ties`` "trec_eval" or "input_order", every qrels file UTF-8);
    otherwise the run is read whole once and that table is packed against each qrels.

    Memory: the per-query values of every cell (``qrels x runs x queries x measures``
    floats) and the encoded qrels sets; the run files are never held whole on the
    bounded-memory road, and ``threads`` runs are read at a time.

    Examples
    --------
    >>> import irmetrics as irm
    >>> human = {"q1": {"d1": 1, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 0}}
    >>> llm = {"q1": {"d1": 1, "d2": 1, "d3": 0}, "q2": {"d4": 1, "d5": 1}}
    >>> runs = {"A": {"q1": {"d1": 3, "d2": 2, "d3": 1}, "q2": {"d4": 2, "d5": 1}},
    ...         "B": {"q1": {"d2": 3, "d3": 2, "d1": 1}, "q2": {"d5": 2, "d4": 1}}}
    >>> grid = irm.evaluate_grid({"human": human, "llm": llm}, runs, ["P.1", "map"])
    >>> grid.means("P_1").rows()
    [('A', 1.0, 1.0), ('B', 0.0, 1.0)]
    >>> grid.per_query().head(2).rows()     # trec_eval's print order: map before P_1
    [('human', 'A', 'q1', 'map', 0.8333333333333333), ('human', 'A', 'q2', 'map', 1.0)]
    """
    named_qrels = named_inputs(qrels, "qrels")
    named_runs = named_inputs(runs, "runs")
    options = dict(relevance_level=relevance_level, judged_only=judged_only,
                   max_docs=max_docs, complete=complete, semantics=semantics,
                   num_docs_in_coll=num_docs_in_coll, qrels_columns=qrels_columns,
                   run_columns=run_columns, ties=ties, relevance=relevance, progress=progress)
    threads = resolve_threads(threads)
    # runs side by side, each read on the threads left over (never threads x threads)
    outer, options["threads"] = split_threads(threads, len(named_runs))
    evaluators = map_ordered_warnings(lambda q: Evaluator(q, measures, **options),
                                      named_qrels.values(), threads=threads)
    if not evaluators[0].requests:
        raise parameter_error("measures", "at least one measure name", measures)
    # Each run read once, against every qrels set (packed once for all of them when they
    # share their queries: engine.stacked); a run per thread at a time.
    stacked = stacked_for(evaluators)
    evaluated = map_ordered_warnings(lambda run: evaluate_each(evaluators, run, stacked=stacked),
                                     named_runs.values(), threads=outer)
    results = {}
    missing = 0
    # one filter for every cell (set per cell, the filters' bookkeeping took 60 ms of
    # serial work for 1,200 cells); the cells' warnings are summed up below instead
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        for run_name, each in zip(named_runs, evaluated):
            for qrels_name, res in zip(named_qrels, each):
                try:
                    report_query_set(res, stacklevel=2)
                except NoQueriesError as error:
                    raise NoQueriesError(f"qrels {qrels_name!r} and run {run_name!r}:"
                                         f" {error}") from None
                missing += len(res.missing_query_ids) > 0
                results[(qrels_name, run_name)] = res
    ordered = {(q, r): results[(q, r)] for q in named_qrels for r in named_runs}
    if missing:
        warnings.warn(f"{missing} of {len(ordered)} (qrels, run) evaluations skipped qrels"
                      " queries without a ranking in the run (Results.missing_query_ids;"
                      " complete=True evaluates them as trec_eval -c)",
                      MissingQueriesWarning, stacklevel=2)
    return Grid(named_qrels, named_runs, ordered,
                sources={**file_inputs("qrels", named_qrels), **file_inputs("run", named_runs)})



__all__ = ["EVALUATE_OPTIONS", "Grid", "LEADERBOARD", "agreement_columns", "evaluate_grid",
           "named_inputs"]


def nugget_grid(assessors: dict, runs, measures, *, nuggets=None, **evaluate_options) -> Grid:
    """The :class:`Grid` of nugget measures: every run evaluated under every assessor.

    An assessor's judgments are its assignment file (nuggetizer's ``assign`` output of
    every run), read once (:meth:`irmetrics.rag.NuggetEvaluator.evaluate_all`); the
    runs are run ids (None: those every assessor assessed) and ``nuggets`` the nugget
    file all share (None: the nuggets of the assignments).

    Examples
    --------
    >>> import polars as pl
    >>> def labels(*values):
    ...     return pl.DataFrame({"run_id": ["a", "b"], "topic_id": ["q1", "q1"],
    ...                          "line": [1, 2], "nugget": [0, 0], "text": ["n", "n"],
    ...                          "importance": ["vital"] * 2, "assignment": list(values)})
    >>> grid = nugget_grid({"human": labels("support", "not_support"),
    ...                     "llm": labels("support", "partial_support")}, None, "all_score")
    >>> grid.means("all_score").rows()
    [('a', 1.0, 1.0), ('b', 0.0, 0.5)]
    """
    evaluator = NuggetEvaluator(nuggets, measures, **evaluate_options)
    scored = {name: evaluator.evaluate_all(value) for name, value in assessors.items()}
    if runs is None:
        runs = sorted(set.intersection(*(set(by_run) for by_run in scored.values())))
    runs = list(runs)
    for name, by_run in scored.items():
        lacking = [run for run in runs if run not in by_run]
        if lacking:
            raise parameter_error("runs", f"runs assessor {name!r} assessed"
                                  f" ({', '.join(sorted(by_run))})", lacking)
    if len(runs) < 2:
        raise parameter_error("runs", "two or more runs every assessor assessed", runs)
    return Grid(list(scored), runs, {(q, r): scored[q][r] for q in scored for r in runs},
                sources={**file_inputs("qrels", assessors),
                         **file_inputs("nuggets", {"nuggets": nuggets})})
