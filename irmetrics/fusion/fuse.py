"""fuse(): many runs into one, by ranx's methods, in trec_eval's order with one tie rule.

Every method is a declaration in :data:`METHODS`: what it reads of each run (its
normalised scores, or its ranks), what a run gives a document it lacks, and how the
per-run values of a document combine. The road is the same for all of them:

1. each run is read as :func:`irmetrics.evaluate` reads it and put in trec_eval's order
   (score descending, doc id descending), so a document's rank is the one it is
   evaluated at;
2. the candidates of a query are the documents any run retrieved for it;
3. per run, a value for every candidate; per candidate, the combination of those values;
4. the fused run lists each query's candidates by fused score descending, then doc id
   descending (bytes): the order trec_eval evaluates it in, with ranks 1..n.

No step loops over queries or documents in Python: runs are visited one at a time and
everything else is array arithmetic over all entries.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from irmetrics.checks import check_choice, check_float, check_int, check_str, parameter_error
from irmetrics.containers import Qrels, Run
from irmetrics.engine.pack import break_ties_by_doc_id
from irmetrics.evaluate import as_alike, evaluate
from irmetrics.exceptions import InputFormatError, ParameterTypeError
from irmetrics.parallel import map_ordered

from . import trained
from .condorcet import condorcet_scores
from .lists import FusionLists, rank_runs, segment_order
from .normalize import NORMS, borda_fill, normalize_scores

__all__ = ["fuse", "METHODS", "NORMS", "Method", "fuse_lists", "prepare_runs"]

REQUIRED = object()


@dataclass(frozen=True)
class Method:
    """A fusion method: ``values(ctx, r)`` gives run ``r``'s value per entry and, per
    query, what the run gives a document it lacks (None: nothing, the run does not count
    for that document); ``combine(ctx)`` turns the per-run values into fused scores."""

    name: str
    formula: str
    reads_scores: bool
    values: Callable
    combine: Callable
    params: Mapping[str, object] = field(default_factory=dict)
    weighted: bool = False
    trained: bool = False


class _Context:
    """One fusion: the lists, each run's values, the parameters, and the sums that
    combinations read, made on first use."""

    def __init__(self, lists: FusionLists, method: Method, norm, weights, params, training):
        self.lists, self.method, self.norm = lists, method, norm
        self.weights, self.params, self.training = weights, params, training
        self.candidates = lists.candidates()
        self._cache: dict = {}

    @property
    def n_runs(self) -> int:
        return len(self.lists.run_names)

    def run_values(self, r: int):
        """``(values, fill)`` of run ``r``: per entry and, per query, for the pairs it
        lacks (None: they are absent)."""
        key = ("values", r)
        if key not in self._cache:
            self._cache[key] = self.method.values(self, r)
        return self._cache[key]

    def normalised(self, r: int):
        """Run ``r``'s scores under the normalisation, and Borda's fill (or None)."""
        lists = self.lists
        entries = lists.entries(r)
        score = lists.score[entries]
        if self.norm is None:
            return score, None
        values = normalize_scores(self.norm, score, lists.rank[entries], lists.offsets[r],
                                  self.candidates, run=lists.run_names[r],
                                  query_ids=lists.query_ids)
        fill = borda_fill(lists.lengths(r), self.candidates) if self.norm == "borda" else None
        return values, fill

    def spread(self, r: int, absent: float = 0.0):
        """Run ``r``'s values over all pairs (its fill, else ``absent``, where it lacks
        one) and whether it counts for each pair."""
        values, fill = self.run_values(r)
        if fill is None:
            return self.lists.spread(r, values, absent), self.lists.present(r)
        return self.lists.spread(r, values, fill), np.ones(self.lists.n_pairs, dtype=bool)

    def total(self, weighted: bool = False, absent: float = 0.0) -> np.ndarray:
        values = [self.run_values(r) for r in range(self.n_runs)]
        if absent == 0.0 and all(fill is None for _, fill in values):
            # Runs give nothing to the pairs they lack: one weighted count over every
            # entry (runs one after another), not a vector over the pairs per run. The
            # same sums, added in the same order: run 0's value, then run 1's, ...
            lists = self.lists
            return np.bincount(lists.pair, weights=np.concatenate(
                [self.weights[r] * v if weighted else v for r, (v, _) in enumerate(values)]
                + [np.zeros(0)]), minlength=lists.n_pairs)
        out = np.zeros(self.lists.n_pairs)
        for r in range(self.n_runs):
            values, _ = self.spread(r, absent)
            out += self.weights[r] * values if weighted else values
        return out

    def count(self, weighted: bool = False) -> np.ndarray:
        out = np.zeros(self.lists.n_pairs)
        for r in range(self.n_runs):
            _, present = self.spread(r)
            out += self.weights[r] * present if weighted else present
        return out

    def extreme(self, pick, absent: float) -> np.ndarray:
        out = np.full(self.lists.n_pairs, absent)
        for r in range(self.n_runs):
            values, present = self.spread(r)
            out = np.where(present, pick(out, values), out)
        return out

    def median(self) -> np.ndarray:
        table = np.full((self.lists.n_pairs, self.n_runs), np.nan)
        for r in range(self.n_runs):
            values, present = self.spread(r)
            table[present, r] = values[present]
        return np.nanmedian(table, axis=1)

    def ranks(self) -> np.ndarray:
        """(P, R) rank of each pair in each run, ``inf`` where the run lacks it."""
        lists = self.lists
        table = np.full((lists.n_pairs, self.n_runs), np.inf)
        for r in range(self.n_runs):
            entries = lists.entries(r)
            table[lists.pair[entries], r] = lists.rank[entries]
        return table

    # per-run facts the rank-based methods read
    def rank(self, r: int) -> np.ndarray:
        return self.lists.rank[self.lists.entries(r)]

    def length(self, r: int) -> np.ndarray:
        """The list length of run ``r`` for each of its entries' queries."""
        return np.repeat(self.lists.lengths(r), self.lists.lengths(r))


# ---- per-run values ---------------------------------------------------------------------

def _scores(ctx, r):
    return ctx.normalised(r)


def _by_rank(formula):
    return lambda ctx, r: (formula(ctx, r, ctx.rank(r).astype(np.float64)), None)


def _borda(ctx, r):
    lengths = ctx.lists.lengths(r)
    points = ctx.candidates[ctx.lists.entry_query(r)] - ctx.rank(r)
    return points.astype(np.float64), (ctx.candidates - lengths + 1) / 2.0


def _table_lookup(table, rank, default=0.0):
    inside = rank < len(table)
    return np.where(inside, table[np.minimum(rank, max(len(table) - 1, 0))]
                    if len(table) else default, default)


def _posfuse(ctx, r):
    probs = trained.position_probs(ctx.training, r)
    return _table_lookup(probs, ctx.rank(r)), None


def _probfuse(ctx, r):
    probs = trained.segment_probs(ctx.training, r, ctx.params["n_segments"])
    rank, length = ctx.rank(r), ctx.length(r)
    segment = rank // np.maximum(-(-length // ctx.params["n_segments"]), 1)
    return probs[segment] / (segment + 1), None


def _segfuse(ctx, r):
    probs = trained.segfuse_probs(ctx.training, r)
    scores, _ = ctx.normalised(r)
    rank = ctx.rank(r)
    segment = np.searchsorted(trained.SEGFUSE_BOUNDS, rank, side="right") - 1
    return _table_lookup(probs, segment) * (scores + 1), None


def _slidefuse(ctx, r):
    probs = trained.position_probs(ctx.training, r)
    w = ctx.params["w"]
    rank, length = ctx.rank(r), ctx.length(r)
    lo, hi = np.maximum(rank - w, 0), np.minimum(rank + w, length - 1)
    cumulative = np.concatenate(([0.0], np.cumsum(probs)))
    window = cumulative[np.minimum(hi + 1, len(probs))] - cumulative[np.minimum(lo, len(probs))]
    return window / (hi - lo + 1), None


def _bayesfuse(ctx, r):
    odds = trained.bayes_log_odds(ctx.training, r)
    return _table_lookup(odds, ctx.rank(r), trained.MIN_LOG_ODDS), \
        np.full(len(ctx.lists.query_ids), trained.MIN_LOG_ODDS)


def _mapfuse(ctx, r):
    return ctx.params["map"][r] / (ctx.rank(r) + 1.0), None


# ---- combinations -------------------------------------------------------------------------

def _sum(ctx):
    return ctx.total()


def _wsum(ctx):
    return ctx.total(weighted=True)


def _mnz(ctx):
    return ctx.total() * ctx.count()


def _anz(ctx):
    return ctx.total() / ctx.count()


def _condorcet(ctx):
    return condorcet_scores(ctx.ranks(), ctx.weights, ctx.lists.pair_query, ctx.candidates)


def _declare(*methods: Method) -> dict[str, Method]:
    return {m.name: m for m in methods}


#: Every method, by ranx's name. ``s_r`` is run ``r``'s (normalised) score of a document,
#: ``rank_r`` its 1-based rank, ``n_r`` the length of the run's list, ``C`` the number
#: of candidates of the query, ``|R_d|`` the number of runs that retrieved the document,
#: ``w_r`` the run's weight; sums run over the runs that retrieved the document unless
#: said otherwise.
METHODS: dict[str, Method] = _declare(
    Method("sum", "CombSUM: sum_r s_r", True, _scores, _sum),
    Method("mnz", "CombMNZ: |R_d| * sum_r s_r", True, _scores, _mnz),
    Method("anz", "CombANZ: sum_r s_r / |R_d|", True, _scores, _anz),
    Method("max", "CombMAX: max_r s_r", True, _scores,
           lambda ctx: ctx.extreme(np.maximum, -np.inf)),
    Method("min", "CombMIN: min_r s_r", True, _scores,
           lambda ctx: ctx.extreme(np.minimum, np.inf)),
    Method("med", "CombMED: median_r s_r", True, _scores, lambda ctx: ctx.median()),
    Method("gmnz", "CombGMNZ: |R_d|^gamma * sum_r s_r", True, _scores,
           lambda ctx: ctx.total() * ctx.count() ** ctx.params["gamma"],
           {"gamma": REQUIRED}),
    Method("wsum", "weighted sum: sum_r w_r s_r", True, _scores, _wsum, weighted=True),
    Method("wmnz", "weighted MNZ: (sum_r s_r) * (sum_r w_r)", True, _scores,
           lambda ctx: ctx.total() * ctx.count(weighted=True), weighted=True),
    Method("mixed", "Mixed: sqrt(|R_d|) * sum_r w_r s_r", True, _scores,
           lambda ctx: ctx.total(weighted=True) * np.sqrt(ctx.count()), weighted=True),
    Method("isr", "ISR: |R_d| * sum_r 1 / rank_r^2", False,
           _by_rank(lambda ctx, r, i: 1.0 / (i + 1) ** 2), _mnz),
    Method("log_isr", "log_ISR: log(|R_d|) * sum_r 1 / rank_r^2", False,
           _by_rank(lambda ctx, r, i: 1.0 / (i + 1) ** 2),
           lambda ctx: ctx.total() * np.log(ctx.count())),
    Method("logn_isr", "logN_ISR: log(|R_d| + sigma) * sum_r 1 / rank_r^2", False,
           _by_rank(lambda ctx, r, i: 1.0 / (i + 1) ** 2),
           lambda ctx: ctx.total() * np.log(ctx.count() + ctx.params["sigma"]),
           {"sigma": 0.01}),
    Method("rrf", "RRF: sum_r 1 / (k + rank_r)", False,
           _by_rank(lambda ctx, r, i: 1.0 / (ctx.params["k"] + i + 1)), _sum, {"k": 60}),
    Method("rbc", "RBC: sum_r (1 - phi) * phi^(rank_r - 1)", False,
           _by_rank(lambda ctx, r, i: (1 - ctx.params["phi"]) * ctx.params["phi"] ** i),
           _sum, {"phi": REQUIRED}),
    Method("bordafuse", "BordaFuse: sum over all runs of C - rank_r + 1, and"
           " (C - n_r + 1) / 2 from a run that lacks the document", False, _borda, _sum),
    Method("weighted_bordafuse", "weighted BordaFuse: BordaFuse's points times w_r",
           False, _borda, _wsum, weighted=True),
    Method("condorcet", "Condorcet: 1 + pairwise majority wins + ties / 2 (see"
           " irmetrics.fusion.condorcet)", False, lambda ctx, r: (None, None), _condorcet),
    Method("weighted_condorcet", "weighted Condorcet: votes weighted by w_r", False,
           lambda ctx, r: (None, None), _condorcet, weighted=True),
    Method("posfuse", "PosFuse: sum_r P(relevant | rank_r) from the training qrels",
           False, _posfuse, _sum, trained=True),
    Method("probfuse", "ProbFuse: sum_r P(relevant | segment k of the run) / k, S segments"
           " of ceil(n_r / S) ranks", False, _probfuse, _sum, {"n_segments": REQUIRED},
           trained=True),
    Method("segfuse", "SegFuse: sum_r P(relevant | segment of rank_r) * (s_r + 1), segments"
           " of 5, 10, 20, ... ranks", True, _segfuse, _sum, trained=True),
    Method("slidefuse", "SlideFuse: sum_r mean of P(relevant | rank) over rank_r - w .."
           " rank_r + w", False, _slidefuse, _sum, {"w": REQUIRED}, trained=True),
    Method("bayesfuse", "BayesFuse: sum over all runs of the log-odds of relevance of"
           " rank_r's segment (log(0.001 / 0.999) from a run that lacks the document)",
           False, _bayesfuse, _sum, trained=True),
    Method("mapfuse", "MAPFuse: sum_r MAP_r / rank_r (MAP on the training qrels)", False,
           _mapfuse, _sum, trained=True),
)

_PARAM_CHECKS = {
    "k": lambda v: check_float("k", v, min=0),
    "phi": lambda v: check_float("phi", v, min=0, max=1),
    "gamma": lambda v: check_float("gamma", v),
    "sigma": lambda v: check_float("sigma", v, min=0, max=1),
    "n_segments": lambda v: check_int("n_segments", v, min=1),
    "w": lambda v: check_int("w", v, min=0),
}


def prepare_runs(runs, qrels=None) -> tuple[list[Run], Qrels | None, str]:
    """``runs`` (a sequence of anything :func:`irmetrics.evaluate` takes as a run, or a
    mapping ``{name: run}``) as a list of :class:`Run`, each named for messages: by its
    key, else its path, else its run_id (``runs[i]`` for a dict or a frame); and
    ``qrels`` (optional) as :class:`Qrels`.

    Files are read as :func:`irmetrics.evaluate` reads them (:func:`~irmetrics.evaluate.as_alike`):
    one that is not UTF-8 is read as Latin-1, and then every table's ids are in their
    Latin-1 view, so that they compare as bytes. Returns ``(runs, qrels, encoding)``.
    """
    named: list[tuple[str | None, Any]]
    if isinstance(runs, Mapping):
        named = [(check_str("runs key", k), v) for k, v in runs.items()]
    elif isinstance(runs, Sequence) and not isinstance(runs, str):
        named = [(None, v) for v in runs]
    else:
        raise parameter_error("runs", "a list of runs or a dict {name: run}",
                              type(runs).__name__)
    if len(named) < 2:
        raise parameter_error("runs", "two or more runs", len(named))
    tables, encoding = as_alike([(value, "run") for _, value in named]
                                + ([(qrels, "qrels")] if qrels is not None else []))
    out = []
    for i, ((label, value), run) in enumerate(zip(named, tables)):
        if label is None:
            label = os.fspath(value) if isinstance(value, (str, os.PathLike)) else \
                run.name if isinstance(value, Run) else f"runs[{i}]"
        if label != run.name:
            run = copy.copy(run)  # the caller's table keeps its name
            run.name = label
        out.append(run)
    return out, tables[-1] if qrels is not None else None, encoding


def fuse(runs, method: str = "rrf", *, norm: str | None = "min-max", weights=None,
         qrels=None, name: str | None = None, **params) -> Run:
    """Fuse two or more runs into one.

    Parameters
    ----------
    runs : list or dict
        The runs: paths (TREC, Parquet, Arrow IPC), :class:`Run` tables, pytrec_eval
        dicts or DataFrames, as :func:`irmetrics.evaluate` takes them; a dict
        ``{name: run}`` names them (messages use the names). A TREC file that is not
        UTF-8 is read as Latin-1, as ``evaluate`` reads it; ids then compare as the
        files' bytes, and the fused run's ids are their Latin-1 view
        (``doc_id.encode("latin-1")`` gives the bytes).
    method : str, default "rrf"
        A key of :data:`METHODS` (ranx's names): ``rrf``, ``sum``, ``mnz``, ``max``,
        ``min``, ``med``, ``anz``, ``gmnz``, ``wsum``, ``wmnz``, ``mixed``, ``isr``,
        ``log_isr``, ``logn_isr``, ``rbc``, ``bordafuse``, ``weighted_bordafuse``,
        ``condorcet``, ``weighted_condorcet``, and the trained ``posfuse``,
        ``probfuse``, ``segfuse``, ``slidefuse``, ``bayesfuse``, ``mapfuse``.
    norm : str or None, default "min-max"
        How each run's scores are normalised per query first (ranx's default): one of
        :data:`NORMS` or None. Only the methods that read scores use it (``sum``,
        ``mnz``, ``anz``, ``max``, ``min``, ``med``, ``gmnz``, ``wsum``, ``wmnz``,
        ``mixed``, ``segfuse``); the others read ranks, which no normalisation changes.
    weights : sequence of float, optional
        One per run, for the weighted methods (``wsum``, ``wmnz``, ``mixed``,
        ``weighted_bordafuse``, ``weighted_condorcet``); default 1 each.
    qrels : optional
        The training judgments of the trained methods, anything ``evaluate`` takes;
        they learn from the qrels' queries and fuse every query.
    name : str, optional
        The fused run's name (its run_id); default the method's name.
    **params
        The method's parameters, with ranx's names and defaults: ``k=60`` (rrf),
        ``phi`` (rbc), ``gamma`` (gmnz), ``sigma=0.01`` (logn_isr), ``n_segments``
        (probfuse), ``w`` (slidefuse).

    Returns
    -------
    Run
        Every document any run retrieved for a query, by fused score descending then
        doc id descending (bytes), ranks 1..n per query, queries ascending; ``name``
        as run_id. Written with :func:`irmetrics.io.write_run` it is a TREC run.

    Raises
    ------
    ParameterError
        An unknown method or normalisation; weights not one finite number per run, or
        given to an unweighted method; a missing or unknown parameter; qrels missing
        for a trained method or given to another.
    InputFormatError
        A normalisation that would divide by zero for a query (one document, all scores
        equal; ``max`` with no positive score), or a fused score that is not finite,
        naming the run (or method) and the query.

    Notes
    -----
    The formulas are ranx's (see :data:`METHODS`), and so are the values wherever the
    runs have no tied scores: the tests compare every method and normalisation with
    ranx. Where they differ, irmetrics is deterministic and ranx is not: a run's ties are
    ordered by doc id descending (trec_eval's rule) where ranx keeps its input order;
    the fused run breaks ties by doc id descending too; ``condorcet`` scores cycles
    and tied votes (:mod:`irmetrics.fusion.condorcet`); BayesFuse gives a rank past
    1,000 the log-odds of a missing document (ranx reads past its table).
    A query that a run does not have is an empty list for that run.

    Examples
    --------
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q1": {"d3": 0.9, "d1": 0.5, "d4": 0.1}}
    >>> fused = fuse({"a": a, "b": b}, method="rrf")
    >>> fused.df.select("doc_id", "rank").rows()
    [('d1', 1), ('d3', 2), ('d2', 3), ('d4', 4)]
    >>> round(fused.df["score"][0], 6)  # 1/61 + 1/62
    0.032522
    >>> fuse([a, b], method="wsum", weights=[0.7, 0.3]).to_dict()["q1"]["d1"]
    0.85
    """
    method_ = METHODS[check_choice("method", method, tuple(METHODS))]
    if norm is not None:
        check_choice("norm", norm, tuple(NORMS))
    _check_training_qrels(method_, qrels)
    prepared, qrels_, _ = prepare_runs(runs, qrels)
    weights_ = _weights(method_, weights, len(prepared))
    params_ = _params(method_, params)
    name = method_.name if name is None else check_str("name", name)
    ranked = rank_runs(prepared)
    # Trained methods learn from every query at once; the others fuse each query on its
    # own, so spans of queries give the same run (lists.BLOCK_ENTRIES says why): they
    # are fused on threads, one span each, and their pairs sorted on one thread.
    spans = [(0, len(ranked.query_ids))] if method_.trained else ranked.spans()
    inner = None if len(spans) == 1 else 1

    def one(span: tuple[int, int]) -> pl.DataFrame:
        lists = ranked.lists(*span, threads=inner)
        try:
            fused = fused_scores(lists, method_, norm=norm, weights=weights_,
                                 params=params_, qrels=qrels_)
        except InputFormatError as refused:
            # A refused normalisation stops its span before any score is combined: the
            # span's queries before the refused one are fused on their own, so that a
            # score they make not finite is named first, as when they fall in an
            # earlier span (the error does not depend on the input's size).
            first = int(np.searchsorted(lists.query_ids, str(refused.query_id)))
            if method_.trained or not 0 < first < len(lists.query_ids) \
                    or lists.query_ids[first] != refused.query_id:
                raise
            fused_scores(ranked.lists(span[0], span[0] + first, threads=inner), method_,
                         norm=norm, weights=weights_, params=params_, qrels=qrels_)
            raise
        return fused_frame(lists, fused, name, threads=inner)

    frames = map_ordered(one, spans, threads=1 if inner is None else None)
    return Run.from_unique_pairs(frames[0] if len(frames) == 1 else pl.concat(frames),
                                 name=name)  # one row per pair


def fuse_lists(lists: FusionLists, method: Method, *, norm, weights, params, qrels,
               name: str, runs=None) -> Run:
    """:func:`fuse` on lists already made (checked arguments); ``runs`` are the
    :class:`Run` tables (MAPFuse evaluates them)."""
    fused = fused_scores(lists, method, norm=norm, weights=weights, params=params,
                         qrels=qrels)
    return Run.from_unique_pairs(fused_frame(lists, fused, name), name=name)


def fused_scores(lists: FusionLists, method: Method, *, norm, weights, params,
                 qrels) -> np.ndarray:
    """The fused score of each pair of ``lists`` (checked arguments)."""
    training = None
    params = dict(params)
    if method.trained:
        training = trained.training(lists, qrels)
        if method.name == "mapfuse":
            params["map"] = _maps(lists, qrels)
    ctx = _Context(lists, method, norm if method.reads_scores else None, weights, params,
                   training)
    if ctx.norm is not None:
        _normalise_every_run(ctx)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        fused = np.asarray(method.combine(ctx), dtype=np.float64)
    _check_finite(fused, lists, method.name)
    return fused


def fused_frame(lists: FusionLists, fused: np.ndarray, name: str, *,
                threads: int | None = None) -> pl.DataFrame:
    """The fused run's table of the pairs of ``lists`` (a Run's columns, one row per
    pair): by query, fused score descending, doc id descending (bytes); ranks 1..n."""
    # Pairs are grouped by query: each query's sorted on its scores descending (one row
    # of a table, segment_order); equal scores are then put in doc id order, reading
    # the strings of tied pairs only. +0.0 folds -0.0 into 0.0 (equal scores).
    offsets = lists.pair_offsets
    counts = np.diff(offsets)
    descending = np.negative(fused)
    descending += 0.0
    order = segment_order(descending, offsets, np.inf, threads=threads)
    del descending
    score = fused[order]
    # Rows of the runs stand for their pairs from here: their doc ids are the column to
    # read; each row takes its own score along when ties move it.
    rows, score = break_ties_by_doc_id(lists.entry_row[lists.pair_entry[order]],
                                       lists.pair_query, score, lists.doc_rows)
    rank = np.arange(1, len(order) + 1)
    rank -= np.repeat(offsets[:-1], counts)
    return pl.DataFrame([
        pl.Series("query_id", lists.query_ids, dtype=pl.String).gather(lists.pair_query),
        lists.doc_rows.gather(rows).alias("doc_id"),
        pl.Series("rank", rank, dtype=pl.Int64),
        pl.Series("score", score, dtype=pl.Float64),
    ]).select("query_id", pl.lit("Q0", dtype=pl.String).alias("iteration"), "doc_id", "rank",
              "score", pl.lit(name, dtype=pl.String).alias("run_id"))


def _maps(lists: FusionLists, qrels: Qrels) -> list[float]:
    """Each run's MAP on the training qrels (every qrels query, an absent one 0)."""
    out = []
    for r in range(len(lists.run_names)):
        entries = lists.entries(r)
        frame = pl.DataFrame({
            "query_id": pl.Series(lists.query_ids, dtype=pl.String).gather(
                lists.pair_query[lists.pair[entries]]),
            "doc_id": lists.doc[entries],
            "score": -lists.rank[entries].astype(np.float64)})
        train = qrels.df.filter(pl.col("query_id").is_in(
            pl.Series(lists.query_ids, dtype=pl.String).implode()))
        if frame.height == 0 or train.height == 0:
            out.append(0.0)
            continue
        results = evaluate(Qrels(train), Run.from_df(frame), ["map"], complete=True)
        out.append(float(results.aggregate()["map"]))
    return out


def _normalise_every_run(ctx: _Context) -> None:
    """Every run's values made (and kept) before any is combined, so that a refused
    normalisation names the first query that has one, then its first run: what fuse()
    names when it fuses the queries in blocks (ascending), whatever the input's size."""
    refused = []
    for r in range(ctx.n_runs):
        try:
            ctx.run_values(r)
        except InputFormatError as error:
            refused.append((str(error.query_id), r, error))
    if refused:
        raise min(refused, key=lambda found: found[:2])[2]


def _check_finite(fused: np.ndarray, lists: FusionLists, method: str) -> None:
    bad = np.flatnonzero(~np.isfinite(fused))
    if bad.size:
        # The first in (query, doc id) order: pairs are numbered by a hash within a query.
        bad = bad[lists.pair_query[bad] == lists.pair_query[bad].min()]
        i = int(bad[lists.pair_docs(bad).arg_min()])
        raise InputFormatError(f"method {method!r} gives a score that is not finite"
                               f" ({float(fused[i])!r}; with scores this large, normalise"
                               " them, e.g. norm='min-max')", path="fusion",
                               query_id=str(lists.query_ids[lists.pair_query[i]]),
                               doc_id=lists.pair_docs(np.array([i]))[0])


def _weights(method: Method, weights, n_runs: int) -> np.ndarray:
    if weights is None:
        return np.ones(n_runs)
    if not method.weighted:
        names = ", ".join(m.name for m in METHODS.values() if m.weighted)
        raise parameter_error("weights", f"None for method {method.name!r} (weighted"
                              f" methods: {names})", weights)
    if isinstance(weights, (str, bytes, Mapping)) or not hasattr(weights, "__len__"):
        raise ParameterTypeError(f"`weights` must be a sequence of {n_runs} numbers (one"
                                 f" per run); got {type(weights).__name__}.")
    values = list(weights)
    if len(values) != n_runs:
        raise parameter_error("weights", f"one number per run ({n_runs} runs)", values)
    return np.array([check_float(f"weights[{i}]", v) for i, v in enumerate(values)])


def _params(method: Method, params: dict) -> dict:
    unknown = sorted(set(params) - set(method.params))
    if unknown:
        known = ", ".join(method.params) or "none"
        raise parameter_error(unknown[0], f"a parameter of method {method.name!r}"
                              f" (its parameters: {known})", params[unknown[0]])
    out = {}
    for key, default in method.params.items():
        value = params.get(key, default)
        if value is REQUIRED:
            raise parameter_error(key, f"given for method {method.name!r}", None)
        out[key] = _PARAM_CHECKS[key](value)
    if method.name == "rbc" and not 0 < out["phi"] < 1:
        raise parameter_error("phi", "between 0 and 1, both excluded", out["phi"])
    return out


def _check_training_qrels(method: Method, qrels) -> None:
    if method.trained and qrels is None:
        raise parameter_error("qrels", f"given for the trained method {method.name!r}"
                              " (the judgments it learns from)", None)
    if not method.trained and qrels is not None:
        raise parameter_error("qrels", f"None for method {method.name!r} (only trained"
                              " methods learn from qrels)", type(qrels).__name__)
