"""Holes filled by a judge: human qrels completed by machine labels where humans did not
judge, with the share of each score that rests on machine labels and the bounds of what
the documents still unjudged could do (docs/incomplete_judgments.md)."""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import polars as pl

from ..containers import Qrels
from ..evaluate import as_qrels, as_run, evaluate
from ..exceptions import MissingQueriesWarning, NoQueriesError, ParameterError
from ..measures.params import LongCutoffs
from ..measures.parse import parse_measures
from ..results import Results

__all__ = ["Filled", "evaluate_filled", "fill"]

#: Depth of a measure without a cut-off: the whole ranking as evaluated.
_WHOLE = 10**9
#: What each measure ``m`` adds to its value: bounds, human-only value, machine share.
SUFFIXES = ("", "_low", "_high", "_human", "_machine")
_KEY = ["query_id", "doc_id"]


class Filled(NamedTuple):
    """Merged qrels and where each label came from.

    Attributes
    ----------
    qrels : Qrels
        The human labels, and the machine label of every (query, doc) humans did not
        judge (absent, or a negative label: "pooled but not judged").
    human : Qrels
        The rows of ``qrels`` that are human labels.
    machine : Qrels
        The rows of ``qrels`` that are machine labels.
    """

    qrels: Qrels
    human: Qrels
    machine: Qrels


def fill(human, machine) -> Filled:
    """Human qrels with their holes filled by machine labels.

    A machine label is used for a (query, doc) whose human label is absent or negative
    (trec_eval's "pooled but not judged"); a human label of 0 or more always wins.
    Negative machine labels are not labels and fill nothing.

    Parameters
    ----------
    human, machine : Qrels, path, dict or DataFrame
        Anything :func:`irmetrics.evaluate` takes as qrels (integer labels).

    Returns
    -------
    Filled
        ``qrels`` = ``human`` rows with labels >= 0 (and the negative ones no machine
        label replaces) + ``machine`` rows with labels >= 0 on every other (query, doc).

    Examples
    --------
    >>> f = fill({"q1": {"a": 1, "b": -1}}, {"q1": {"a": 0, "b": 2, "c": 1}})
    >>> f.qrels.to_dict()
    {'q1': {'a': 1, 'b': 2, 'c': 1}}
    >>> f.machine.to_dict()
    {'q1': {'b': 2, 'c': 1}}
    """
    h, m = as_qrels(human).df, as_qrels(machine).df
    judged = h.filter(pl.col("relevance") >= 0).select(_KEY)
    used = m.filter(pl.col("relevance") >= 0).join(judged, on=_KEY, how="anti")
    kept = h.join(used.select(_KEY), on=_KEY, how="anti")
    return Filled(Qrels(pl.concat([kept, used])), Qrels(kept), Qrels(used))


def _depths(measures) -> dict:
    """``{output name: depth}``: a measure's cut-off, ``_WHOLE`` for the whole ranking
    (measures without one, and R-precision, whose depth R depends on the labels)."""
    out = {}
    for req in parse_measures(measures):
        cut = isinstance(req.measure.params, LongCutoffs)
        for i, name in enumerate(req.output_names):
            out[name] = int(req.params[i]) if cut else _WHOLE
    return out


def _aside(qrels, run, measures, options) -> Results | None:
    """A secondary evaluation: its skipped queries were already warned about by the
    main one; None where it has no query (no human, or no machine, label on the run's
    queries: its values are then 0)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)
            return evaluate(qrels, run, measures, **options)
    except NoQueriesError:
        return None


def _aligned(res: Results | None, name: str, query_ids) -> np.ndarray:
    """``res``'s values of ``name`` on ``query_ids`` (0 where ``res`` lacks the query)."""
    if res is None:
        return np.zeros(len(query_ids))
    pos = {q: i for i, q in enumerate(res.query_ids)}
    values = res.values(name) if len(res.query_ids) else np.zeros(0)
    idx = np.array([pos.get(q, -1) for q in query_ids], dtype=np.int64)
    return np.where(idx >= 0, values[np.maximum(idx, 0)] if values.size else 0.0, 0.0)


def evaluate_filled(human, machine, run, measures, **options) -> Results:
    """Evaluate with machine labels only where humans did not judge.

    For every output ``m`` the results carry five columns (per query, and their means):

    * ``m``: the value on the filled qrels (:func:`fill`);
    * ``m_low``, ``m_high``: its bounds over the documents still unjudged
      (``unjudged="bounds"`` on the filled qrels);
    * ``m_human``: the value on the human qrels alone (trec_eval's: the holes count as
      non-relevant; 0 on a query humans did not judge at all); ``m - m_human`` is what
      the machine labels moved;
    * ``m_machine``: the share of the judged documents in the measure's depth whose label
      is a machine label,

    .. math:: \\text{machine}_q = \\frac{\\#\\{i \\le \\min(k, n): d_i \\text{ labelled by the machine}\\}}
                                        {\\#\\{i \\le \\min(k, n): d_i \\text{ judged}\\}}

      with k the measure's cut-off (the whole ranking for measures without one and for
      R-precision); 0 when nothing in the depth is judged. Judged as Judged@k counts
      (any qrels line).

    Parameters
    ----------
    human, machine : Qrels, path, dict or DataFrame
        The human qrels and the machine (judge's) qrels; integer labels.
    run : Run, path, dict or DataFrame
    measures : list of str
        Measures with bounds (:data:`irmetrics.unjudged.BOUNDED_MEASURES`).
    **options
        :func:`irmetrics.evaluate`'s options, except ``unjudged`` and ``judged_only``
        (dropping the unjudged documents would change the depth the shares count).

    Returns
    -------
    Results
        Queries of the filled qrels that the run has (as :func:`irmetrics.evaluate`).

    Examples
    --------
    >>> human = {"q1": {"a": 1, "b": 0}}
    >>> machine = {"q1": {"a": 0, "x": 1}}
    >>> run = {"q1": {"a": 0.9, "x": 0.8, "b": 0.7, "y": 0.6}}
    >>> res = evaluate_filled(human, machine, run, ["P@2", "map"])
    >>> {k: round(v, 4) for k, v in res.to_dict()["q1"].items()}  # doctest: +NORMALIZE_WHITESPACE
    {'map': 1.0, 'map_low': 0.9167, 'map_high': 1.0, 'map_human': 1.0,
     'map_machine': 0.3333, 'P@2': 1.0, 'P@2_low': 1.0, 'P@2_high': 1.0,
     'P@2_human': 0.5, 'P@2_machine': 0.5}

    The human label of ``a`` wins over the machine's; ``x``'s machine label makes P@2
    1.0 (0.5 on the human labels alone) and is half of what P@2 judged; ``y``, still
    unjudged, could lower AP to 0.9167 (relevant, it raises R).
    """
    for option in ("unjudged", "judged_only"):
        if options.get(option) not in (None, False):
            raise ParameterError(f"`{option}` must be left out of evaluate_filled (it sets"
                                 f" its own); got {options[option]!r}.")
        options.pop(option, None)
    depths = _depths(measures)
    filled = fill(human, machine)
    run = as_run(run)
    res = evaluate(filled.qrels, run, measures, unjudged="bounds", **options)
    quiet = {k: v for k, v in options.items() if k != "progress"}
    alone = _aside(as_qrels(human), run, measures, quiet)
    cuts = ["judged_cut." + ",".join(str(k) for k in sorted(set(depths.values())))]
    judged, by_machine = (_aside(q, run, cuts, quiet) for q in (filled.qrels, filled.machine))
    queries = res.query_ids
    columns, specs = {}, {}
    for name in res.names:
        if name not in depths:
            continue  # a bound: added with its measure
        k = f"judged_cut_{depths[name]}"
        total = _aligned(judged, k, queries)
        share = np.divide(_aligned(by_machine, k, queries), total,
                          out=np.zeros(len(queries)), where=total > 0)
        values = (res.values(name), res.values(name + "_low"), res.values(name + "_high"),
                  _aligned(alone, name, queries), share)
        for suffix, v in zip(SUFFIXES, values):
            columns[name + suffix] = np.asarray(v, dtype=np.float64)
            specs[name + suffix] = res.measure_of(name)
    return Results(queries, columns, specs, run_name=res.run_name,
                   missing_query_ids=res.missing_query_ids,
                   ignored_query_ids=res.ignored_query_ids, id_encoding=res.id_encoding,
                   road=res.road)
