"""Results of an evaluation: per-query values, aggregates and writers."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from .measures.registry import GEOMETRIC, LONG, MEAN, NONE, NUM_Q, RUNID, STRING, SUM


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
    """

    def __init__(self, query_ids, columns, specs, *, run_name="irmetrics",
                 complete_num_rel=None):
        self.query_ids = query_ids
        self._columns = columns  # name -> ndarray (Q,), float64 or object for strings
        self._specs = specs  # name -> MeasureDef
        self.names = list(columns)
        self.run_name = run_name
        self._complete_num_rel = complete_num_rel

    def __repr__(self) -> str:
        return (f"Results({len(self.query_ids)} queries, {len(self.names)} values: "
                f"{', '.join(self.names[:6])}{', ...' if len(self.names) > 6 else ''})")

    def measure_of(self, name: str):
        """The measure declaration that produced output ``name``."""
        return self._specs[name]

    def values(self, name: str) -> np.ndarray:
        """Per-query values of output ``name`` (aligned with ``query_ids``)."""
        return self._columns[name]

    def summary_value(self, name: str):
        """The value trec_eval prints on the ``all`` line for ``name`` (None if none)."""
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

    def per_query(self) -> pl.DataFrame:
        """Long-format frame with columns ``query_id``, ``measure``, ``value`` (Float64).

        String-valued outputs (``relstring``) are left out; use :meth:`to_dict`.
        """
        numeric = [n for n in self.names if self._columns[n].dtype != object]
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
                       complete_num_rel=self._complete_num_rel)
