"""Results of an evaluation: per-query values, aggregates and writers."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from .checks import parameter_error
from .exceptions import MissingQueriesWarning, NoQueriesError, brief_repr
from .measures.parse import find_output_name
from .measures.registry import GEOMETRIC, LONG, MEAN, NONE, NUM_Q, RUNID, STRING, SUM

#: How many query ids a warning or error message lists before "and N more".
LISTED_IDS = 5


def sequential_sum(values: np.ndarray) -> float:
    """Sum in query order with plain double additions, as trec_eval accumulates."""
    return float(np.cumsum(values)[-1]) + 0.0 if len(values) else 0.0  # sum starts at +0.0


class Results:
    """Per-query values of every requested measure over the evaluated queries.

    Attributes
    ----------
    query_ids : ndarray of str
        Evaluated queries in ascending byte order (trec_eval's order).
    names : list of str
        Output names in trec_eval's print order (``P_5``, ``ndcg_cut_10``, ``nDCG@10``).
    run_name : str
    missing_query_ids : ndarray of str
        Qrels queries that have no ranking in the run and were therefore not evaluated
        nor averaged (ascending byte order; always empty with ``complete=True``, which
        evaluates them). :func:`~irmetrics.evaluate` warns about them with
        :class:`~irmetrics.exceptions.MissingQueriesWarning`.
    ignored_query_ids : ndarray of str
        Run queries that are not in the qrels and were ignored (ascending byte order).
    id_encoding : {"utf-8", "latin-1"}
        How the ids (and ``run_name``) were decoded from the bytes of the files.
        ``"latin-1"`` when a qrels or run file of this evaluation is not UTF-8: then every
        byte is one character, so ``query_id.encode("latin-1")`` gives the bytes of the
        file back (for ids that came as str, their UTF-8 bytes).
    road : str or None
        Which road computed the values (:func:`irmetrics.evaluate.plan_road`): ``"file"``
        or ``"table"`` (a TREC file, or a Parquet/Arrow file or frame, chunk by chunk in
        bounded memory), ``"dict"`` (a pytrec_eval-shaped dict straight to codes),
        ``"direct"`` (an adapter's own arrays) or ``"memory"`` (the run read whole, then
        packed); None where no :class:`~irmetrics.Evaluator` ran.
    """

    def __init__(self, query_ids, columns, specs, *, run_name="irmetrics",
                 complete_num_rel=None, missing_query_ids=(), ignored_query_ids=(),
                 id_encoding="utf-8", road=None):
        self.query_ids = query_ids
        self._columns = columns  # name -> ndarray (Q,), float64 or object for strings
        self._specs = specs  # name -> MeasureDef
        self.names = list(columns)
        self.run_name = run_name
        self._complete_num_rel = complete_num_rel
        self.missing_query_ids = np.asarray(missing_query_ids, dtype=object)
        self.ignored_query_ids = np.asarray(ignored_query_ids, dtype=object)
        self.id_encoding = id_encoding
        self.road = road

    def __repr__(self) -> str:
        return (f"Results({len(self.query_ids)} queries, {len(self.names)} values: "
                f"{', '.join(self.names[:6])}{', ...' if len(self.names) > 6 else ''})")

    def _check_name(self, name) -> str:
        """``name``, or the output name it spells (``P.10`` for ``P_10``)."""
        if isinstance(name, str) and name in self._columns:
            return name
        found = find_output_name(name, self.names)
        if found is None:
            listed = ", ".join(repr(n) for n in self.names[:10])
            more = ", ..." if len(self.names) > 10 else ""
            raise parameter_error("name", f"an output of this evaluation ({listed}{more})",
                                  name)
        return found

    def measure_of(self, name: str):
        """The measure declaration that produced output ``name`` (any spelling of it)."""
        return self._specs[self._check_name(name)]

    def values(self, name: str) -> np.ndarray:
        """Per-query values of output ``name`` (aligned with ``query_ids``).

        Raises
        ------
        ParameterError
            ``name`` is not one of :attr:`names`, nor a spelling of one (``"P.10"``
            and ``"P@10"`` for ``"P_10"``; ``"P_10"`` when only ``P.5`` was asked for
            is refused).
        """
        return self._columns[self._check_name(name)]

    def summary_value(self, name: str):
        """The value trec_eval prints on the ``all`` line for ``name`` (None if none;
        any spelling of it)."""
        name = self._check_name(name)
        m = self._specs[name]
        v = self._columns[name]
        n_q = len(self.query_ids)
        if m.summary == RUNID:
            return self.run_name
        if m.summary == NUM_Q:
            return n_q
        if m.summary == NONE or m.printed == STRING:
            return None
        if m.summary == SUM:
            if m.name == "num_rel" and self._complete_num_rel is not None:
                return self._complete_num_rel
            total = sequential_sum(v)
            return int(total) if m.printed == LONG else total
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = sequential_sum(v) / n_q if n_q else math.nan
        if m.summary == GEOMETRIC:
            return math.exp(mean)
        assert m.summary == MEAN
        return mean

    def aggregate(self) -> dict:
        """Summary value of every output: mean, sum or geometric mean as trec_eval.

        Returns
        -------
        dict
            ``{name: value}``; ``runid`` maps to the run name, counts (``num_q``,
            ``num_ret``, ...) to ints, everything else to floats. ``relstring`` has no
            summary and is absent.
        """
        out = {}
        for name in self.names:
            value = self.summary_value(name)
            if value is not None:
                out[name] = value
        return out

    def is_bookkeeping(self, name: str) -> bool:
        """True for ``runid`` and ``num_q``: per query they are placeholders (0 and 1),
        not values of the query; only their summary (the run tag, the query count)
        means something."""
        return self.measure_of(name).summary in (RUNID, NUM_Q)

    def per_query(self, *, include_bookkeeping: bool = False) -> pl.DataFrame:
        """Long-format frame with columns ``query_id``, ``measure``, ``value`` (Float64).

        Parameters
        ----------
        include_bookkeeping : bool, default False
            Also give the per-query rows of ``runid`` (0.0) and ``num_q`` (1.0), which
            carry no per-query information (see :meth:`is_bookkeeping`).

        String-valued outputs (``relstring``) are left out; use :meth:`to_dict`.

        Examples
        --------
        >>> import irmetrics as irm
        >>> res = irm.evaluate({"q": {"d": 1}}, {"q": {"d": 0.5}}, ["runid", "num_q", "map"])
        >>> res.per_query()["measure"].to_list()
        ['map']
        >>> res.per_query(include_bookkeeping=True)["measure"].to_list()
        ['runid', 'num_q', 'map']
        """
        if not isinstance(include_bookkeeping, (bool, np.bool_)):
            raise parameter_error("include_bookkeeping", "True or False", include_bookkeeping)
        numeric = [n for n in self.names if self._columns[n].dtype != object
                   and (include_bookkeeping or not self.is_bookkeeping(n))]
        q = len(self.query_ids)
        return pl.DataFrame({
            "query_id": pl.Series(np.tile(self.query_ids, len(numeric)).tolist(), dtype=pl.String),
            "measure": pl.Series(np.repeat(np.asarray(numeric, dtype=object), q).tolist(),
                                 dtype=pl.String),
            "value": np.concatenate([self._columns[n] for n in numeric]) if numeric
            else np.zeros(0),
        })

    def to_dict(self) -> dict:
        """pytrec_eval's shape: ``{query_id: {name: value}}``."""
        cols = [(n, self._columns[n].tolist()) for n in self.names]
        return {qid: {n: col[i] for n, col in cols} for i, qid in enumerate(self.query_ids)}

    def replace_values(self, columns: dict, specs: dict | None = None) -> "Results":
        """A copy with some per-query columns (and declarations) replaced.

        Summaries are recomputed from the new values. Used by the CLI's ``-Z``, which
        converts per-query values to z-scores before trec_eval accumulates them.
        """
        new_columns = {n: columns.get(n, self._columns[n]) for n in self.names}
        new_specs = {n: (specs or {}).get(n, self._specs[n]) for n in self.names}
        return Results(self.query_ids, new_columns, new_specs, run_name=self.run_name,
                       complete_num_rel=self._complete_num_rel,
                       missing_query_ids=self.missing_query_ids,
                       ignored_query_ids=self.ignored_query_ids,
                       id_encoding=self.id_encoding, road=self.road)


def listed_ids(ids, limit: int = LISTED_IDS) -> str:
    """``'a', 'b' and 3 more``: the first ``limit`` ids of a (long) list, for messages."""
    shown = ", ".join(brief_repr(q) for q in list(ids[:limit]))
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def lacking_summary(missing: dict) -> str:
    """`` run 'a' lacks 2 ('q1', 'q2')``, from ``{run: [query ids it lacks]}``; runs
    lacking the same queries share one clause (the warnings of ``compare`` and
    ``agree``)."""
    by_set: dict = {}
    for system, qids in missing.items():
        by_set.setdefault(tuple(qids), []).append(system)
    parts = []
    for qids, systems in by_set.items():
        many = len(systems) > LISTED_IDS
        who = (f"run {systems[0]!r} lacks" if len(systems) == 1 else
               f"runs {', '.join(map(repr, systems[:LISTED_IDS]))}"
               f"{f' and {len(systems) - LISTED_IDS} more' if many else ''} lack")
        parts.append(f" {who} {len(qids)} ({listed_ids(qids)})")
    return ";".join(parts)


def report_query_set(results: Results, *, stacklevel: int) -> Results:
    """Refuse an evaluation of zero queries and warn about skipped qrels queries.

    Raises
    ------
    NoQueriesError
        No query was evaluated: a mean over zero queries would be NaN by accident.

    Warns
    -----
    MissingQueriesWarning
        Qrels queries without a ranking in the run were not evaluated
        (``results.missing_query_ids``).
    """
    missing, ignored = results.missing_query_ids, results.ignored_query_ids
    if len(results.query_ids) == 0:
        detail = []
        if len(ignored):
            detail.append(f"run queries: {listed_ids(ignored, 3)}")
        if len(missing):
            detail.append(f"qrels queries: {listed_ids(missing, 3)}")
        if not detail:
            raise NoQueriesError("no query to evaluate: neither the qrels nor the run has one")
        if not len(ignored) or not len(missing):
            # One side is empty (no rows at all, or every row filtered out).
            empty = "the run has" if not len(ignored) else "the qrels have"
            raise NoQueriesError(f"no query to evaluate: {empty} no query ({detail[0]})")
        raise NoQueriesError("no query to evaluate: the qrels and the run have no query id"
                             f" in common ({'; '.join(detail)})")
    if len(missing):
        noun = "query has" if len(missing) == 1 else "queries have"
        warnings.warn(
            f"{len(missing)} qrels {noun} no ranking in the run and"
            f" {'was' if len(missing) == 1 else 'were'} not evaluated: {listed_ids(missing)}"
            " (Results.missing_query_ids; complete=True evaluates them as trec_eval -c)",
            MissingQueriesWarning, stacklevel=stacklevel + 1)
    return results
