"""Measures written by the user, for the ir_measures drop-in.

Two kinds of measure objects, both shaped as ir_measures' (``m @ 10``, ``m(cutoff=5)``,
``str(m)``, equality and hashing by spelling, ``m.iter_calc(qrels, run)``,
``m.calc_aggregate(qrels, run)``, ``m.calc``, ``m.evaluator``):

* :func:`define` and :func:`define_byquery`, ir_measures 0.4.3's functions with its
  semantics: the user's ``impl`` gets pandas DataFrames of the qrels and of the run (any
  columns: ir_measures' runtime measures need not be about documents), the run sorted by
  query id then score descending (ties in input order), cut to the first ``k`` rows of
  each query under ``@k``; ``define_byquery`` calls ``impl`` once per run query (query ids
  in pandas' ``groupby`` order) with that query's qrels rows. Every qrels query the
  ``impl`` gives no value gets ir_measures' default 0.0; aggregates are the mean over
  all values (those of run queries absent from the qrels included, as in ir_measures).
* :func:`registered_measure`: a measure defined with :func:`irmetrics.define_measure`
  (vectorised over irmetrics' ranked lists) as an ir_measures object, computed by
  irmetrics' engine with the drop-in's conventions (every qrels query gets a value, 0.0
  when the run lacks it; ties by doc id descending, as irmetrics).

Deliberate differences from ir_measures: a failing ``impl`` raises
:class:`~irmetrics.exceptions.UserMeasureError` naming the measure (and, for
``define_byquery``, the query) with the original error as its cause; a cutoff that is
not a non-negative integer, or an unknown parameter, is refused when the object is
made (ir_measures fails later with an ``AssertionError``). pandas is needed for
:func:`define` and :func:`define_byquery` (their ``impl`` takes pandas frames).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Mapping

import numpy as np

from ..checks import parameter_error
from ..containers import Qrels, Run
from ..evaluate import Evaluator as _IrmEvaluator
from ..exceptions import UnknownMeasureError
from ..measures.custom import is_user_measure, one_number, user_error
from ..measures.registry import REGISTRY, SUM

__all__ = [
    "CustomMeasure",
    "RegisteredMeasure",
    "RuntimeMeasure",
    "calc",
    "calc_aggregate",
    "define",
    "define_byquery",
    "evaluator",
    "iter_calc",
    "qrel_inputs",
    "registered_measure",
    "run_inputs",
    "runtime_qrel_inputs",
    "runtime_run_inputs",
]


#: The columns every measure but define()'s reads (ir_measures' provider default).
_RUN_COLUMNS = ("query_id", "doc_id", "score")
_QREL_COLUMNS = ("query_id", "doc_id", "relevance")


def _pandas():
    try:
        import pandas
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("define() and define_byquery() give the measure pandas DataFrames,"
                          " as ir_measures does: pip install pandas") from err
    return pandas


def _results():
    """The drop-in's ``Metric`` and ``CalcResults`` (imported late: the drop-in imports
    this module)."""
    from .ir_measures import CalcResults, Metric
    return Metric, CalcResults


class CustomMeasure:
    """Base of the user's measure objects: ir_measures' ``Measure`` interface.

    ``SUPPORTED_PARAMS`` maps each parameter to its default (None: unset); ``params``
    holds the ones given. Subclasses say how values are computed.
    """

    AT_PARAM = "cutoff"
    DEFAULT = 0.0  # a qrels query without a value (ir_measures' Measure.DEFAULT)
    NAME: str | None = None
    SUPPORTED_PARAMS: dict  # set by each object: {parameter: default}

    def __init__(self, **params):
        unknown = sorted(set(params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise parameter_error(f"the parameters of {self.NAME or 'this measure'}",
                                  f"among {sorted(self.SUPPORTED_PARAMS)}", unknown[0])
        cutoff = params.get("cutoff")
        if cutoff is not None and (isinstance(cutoff, (bool, np.bool_))
                                   or not isinstance(cutoff, numbers.Integral) or cutoff < 0):
            raise parameter_error("cutoff", "a non-negative integer", cutoff)
        if cutoff is not None:
            params["cutoff"] = int(cutoff)  # np.int64(10) spells as 10
        self.params = dict(params)

    def _derived(self, params: dict) -> CustomMeasure:
        raise NotImplementedError

    def __call__(self, **params) -> CustomMeasure:
        return self._derived({**self.params, **params})

    def __matmul__(self, at_value) -> CustomMeasure:
        return self(**{self.AT_PARAM: at_value})

    def __getitem__(self, key):
        return self.params.get(key, self.SUPPORTED_PARAMS[key])

    def validate_params(self) -> None:
        """Parameters are checked when the object is made (kept for ir_measures' API)."""

    def __repr__(self) -> str:
        shown = ",".join(f"{k}={v!r}" for k, v in self.params.items()
                         if k != self.AT_PARAM and v != self.SUPPORTED_PARAMS[k])
        text = str(self.NAME) + (f"({shown})" if shown else "")
        if self.params.get(self.AT_PARAM) is not None:
            text += f"@{self.params[self.AT_PARAM]}"
        return text

    def __str__(self) -> str:
        return repr(self)

    def __eq__(self, other) -> bool:
        # By spelling, as ir_measures' measures (and the drop-in's) compare.
        return hasattr(other, "NAME") and hasattr(other, "params") and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def iter_calc(self, qrels, run):
        return evaluator([self], qrels).iter_calc(run)

    def calc_aggregate(self, qrels, run):
        return evaluator([self], qrels).calc_aggregate(run)[self]

    def calc(self, qrels, run):
        aggregated, per_query = evaluator([self], qrels).calc(run)
        return _results()[1](aggregated[self], per_query)

    def evaluator(self, qrels) -> Evaluator:
        return evaluator([self], qrels)


# ---- define / define_byquery ---------------------------------------------------------


class _Definition:
    """What :func:`define` was given, shared by a measure and those derived from it."""

    def __init__(self, impl, name, support_cutoff, run_inputs, qrel_inputs, pretty_name,
                 short_desc, by_query):
        self.impl, self.name, self.support_cutoff = impl, name, support_cutoff
        self.run_inputs = run_inputs
        self.qrel_inputs = qrel_inputs
        self.pretty_name, self.short_desc, self.by_query = pretty_name, short_desc, by_query


class RuntimeMeasure(CustomMeasure):
    """A measure of :func:`define` or :func:`define_byquery`."""

    def __init__(self, definition: _Definition, **params):
        self._definition = definition
        self.NAME = definition.name
        self.SUPPORTED_PARAMS = {"cutoff": None} if definition.support_cutoff else {}
        self.RUN_INPUTS = definition.run_inputs
        self.QREL_INPUTS = definition.qrel_inputs
        self.PRETTY_NAME = definition.pretty_name
        self.SHORT_DESC = definition.short_desc
        super().__init__(**params)

    def _derived(self, params: dict) -> RuntimeMeasure:
        return RuntimeMeasure(self._definition, **params)

    def __repr__(self) -> str:
        if self.NAME is None:  # as ir_measures: an unnamed measure prints as an object
            return object.__repr__(self)
        return super().__repr__()

    def runtime_impl(self, qrels, run):
        """Yield ``Metric(query_id, self, value)`` from the user's ``impl`` on pandas
        ``qrels`` and ``run`` sorted as ir_measures' runtime provider sorts them."""
        metric = _results()[0]
        cutoff = self.params.get("cutoff")
        if cutoff is not None:
            run = run.groupby("query_id").head(cutoff).reset_index(drop=True)
        definition = self._definition
        if definition.by_query:
            for query_id, run_rows in run.groupby("query_id"):
                qrels_rows = qrels[qrels["query_id"] == query_id]
                try:
                    value = definition.impl(qrels_rows, run_rows)
                except Exception as err:
                    raise user_error(str(self), str(query_id), err) from err
                one_number(value, str(self), str(query_id))  # None, "x": a clear error
                yield metric(query_id, self, value)
            return
        try:
            pairs = [(query_id, value) for query_id, value in definition.impl(qrels, run)]
        except Exception as err:
            raise user_error(str(self), None, err) from err
        for query_id, value in pairs:
            one_number(value, str(self), str(query_id))
            yield metric(query_id, self, value)


def define(impl, name=None, support_cutoff=True, *, run_inputs=None, qrel_inputs=None,
           pretty_name=None, short_desc=None) -> RuntimeMeasure:
    """A measure computed by ``impl(qrels, run)`` over all queries at once, as
    ir_measures 0.4.3's ``define``.

    Parameters
    ----------
    impl : callable
        ``impl(qrels, run)`` with pandas DataFrames (qrels sorted by query id and doc id,
        run by query id and score descending, cut to ``k`` rows per query under ``@k``)
        yielding ``(query_id, value)`` pairs.
    name : str, optional
        The measure's name (its ``str``); unnamed measures print as objects.
    support_cutoff : bool, default True
        Whether ``@k`` is accepted.
    run_inputs, qrel_inputs : list of str, optional
        The columns the measure needs (recorded as ``RUN_INPUTS``/``QREL_INPUTS``);
        default ``query_id, doc_id, score`` and ``query_id, doc_id, relevance``.
    pretty_name, short_desc : str, optional
        Descriptions, kept as ``PRETTY_NAME`` and ``SHORT_DESC``.

    Returns
    -------
    RuntimeMeasure

    Notes
    -----
    The aggregate is the mean of the values yielded plus ir_measures' default 0.0 for
    every qrels query the ``impl`` gives no value: :math:`\\frac{1}{|V|}\\sum_{v\\in V} v`.

    Examples
    --------
    >>> from irmetrics.compat.ir_measures_define import define
    >>> def hits(qrels, run):
    ...     run = run.merge(qrels, "left", on=["query_id", "doc_id"])
    ...     for qid, rows in run.groupby("query_id"):
    ...         yield qid, float((rows["relevance"] > 0).sum())
    >>> Hits = define(hits, name="Hits")
    >>> (Hits @ 1).calc_aggregate({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}})
    1.0
    """
    return RuntimeMeasure(_Definition(
        impl, name, support_cutoff,
        list(_RUN_COLUMNS) if run_inputs is None else run_inputs,
        list(_QREL_COLUMNS) if qrel_inputs is None else qrel_inputs,
        pretty_name, short_desc, by_query=False))


def define_byquery(impl, name=None, support_cutoff=True, *, run_inputs=None,
                   qrel_inputs=None, pretty_name=None, short_desc=None) -> RuntimeMeasure:
    """A measure computed by ``impl(qrels, run)`` once per run query, as ir_measures
    0.4.3's ``define_byquery``: ``impl`` gets that query's qrels rows and run rows (pandas
    DataFrames, the run sorted by score descending) and returns its value. A loop over
    queries in the user's code, by design.

    ``name`` defaults to ``impl.__name__``; the other parameters are those of
    :func:`define`.

    Notes
    -----
    With :math:`v_q` the value ``impl`` returns for run query :math:`q` and 0.0 for a
    qrels query the run lacks, the aggregate is the mean over those queries :math:`V`:
    :math:`\\frac{1}{|V|}\\sum_{q\\in V} v_q`.

    Examples
    --------
    >>> from irmetrics.compat.ir_measures_define import define_byquery
    >>> def my_p(qrels, run):
    ...     run = run.merge(qrels, "left", on=["doc_id"])
    ...     return (run["relevance"] > 0).sum() / len(run)
    >>> MyP = define_byquery(my_p)
    >>> str(MyP @ 2), float((MyP @ 2).calc_aggregate({"q": {"a": 1}},
    ...                                             {"q": {"a": 2.0, "b": 1.0}}))
    ('my_p@2', 0.5)
    """
    if name is None:
        name = getattr(impl, "__name__", None) or repr(impl)
    return RuntimeMeasure(_Definition(
        impl, name, support_cutoff,
        list(_RUN_COLUMNS) if run_inputs is None else run_inputs,
        list(_QREL_COLUMNS) if qrel_inputs is None else qrel_inputs,
        pretty_name, short_desc, by_query=True))


# ---- irmetrics' own user measures ------------------------------------------------------


class RegisteredMeasure(CustomMeasure):
    """A measure of :func:`irmetrics.define_measure` as an ir_measures object."""

    def __init__(self, name: str, **params):
        measure = REGISTRY.get(name)
        if measure is None or not is_user_measure(measure):
            raise UnknownMeasureError(name, suggestions=[k for k, m in REGISTRY.items()
                                                         if is_user_measure(m)][:5])
        self.NAME = name
        self._measure = measure
        self.SUPPORTED_PARAMS = {"cutoff": None} if measure.extra["optional_cutoff"] else {}
        self.SUPPORTED_PARAMS.update({k: o.default for k, o in measure.options.items()})
        self.SUPPORTED_PARAMS.update(measure.extra["user_measure"].defaults)
        super().__init__(**params)

    def _derived(self, params: dict) -> RegisteredMeasure:
        return RegisteredMeasure(str(self.NAME), **params)

    def spelling(self) -> str:
        """irmetrics' spelling of this measure: every parameter given, ``@k`` last."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items()
                         if k != "cutoff" and v is not None)
        cutoff = self.params.get("cutoff")
        return str(self.NAME) + (f"({args})" if args else "") + \
            (f"@{cutoff}" if cutoff is not None else "")


def registered_measure(name: str) -> RegisteredMeasure:
    """The user measure ``name`` (:func:`irmetrics.define_measure`) as an ir_measures
    measure object: ``registered_measure("GradedP")(max_label=3) @ 10``.

    Raises
    ------
    UnknownMeasureError
        No user measure has that name.

    Examples
    --------
    >>> import irmetrics as irm
    >>> from irmetrics.compat.ir_measures_define import registered_measure
    >>> _ = irm.define_measure("Hits", lambda view: view.count(view.is_rel))
    >>> hits = registered_measure("Hits") @ 1
    >>> hits.calc_aggregate({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}})
    1.0
    >>> irm.remove_measure("Hits")
    """
    return RegisteredMeasure(name)


# ---- inputs a measure needs -----------------------------------------------------------

def _inputs(measures, attribute: str, default, *, runtime_only: bool) -> list[str]:
    out: dict = {}
    for m in measures:
        columns = getattr(m, attribute, None)
        if columns is None and runtime_only:
            continue
        out.update(dict.fromkeys(default if columns is None else columns))
    return list(out)


def runtime_run_inputs(measures) -> list[str]:
    """Run columns the define() measures among ``measures`` need (ir_measures'
    ``RuntimeProvider.run_inputs``: other measures are not counted)."""
    return _inputs(measures, "RUN_INPUTS", _RUN_COLUMNS, runtime_only=True)


def runtime_qrel_inputs(measures) -> list[str]:
    """Qrels columns the define() measures need (``RuntimeProvider.qrel_inputs``)."""
    return _inputs(measures, "QREL_INPUTS", _QREL_COLUMNS, runtime_only=True)


def run_inputs(measures) -> list[str]:
    """Run columns all ``measures`` need: a define() measure its ``run_inputs``, any
    other ``query_id, doc_id, score`` (ir_measures' ``DefaultPipeline.run_inputs``).

    >>> A = define(lambda qrels, run: [], run_inputs=["query_id"])
    >>> run_inputs([A]), sorted(run_inputs([A, define(lambda qrels, run: [])]))
    (['query_id'], ['doc_id', 'query_id', 'score'])
    """
    return _inputs(measures, "RUN_INPUTS", _RUN_COLUMNS, runtime_only=False)


def qrel_inputs(measures) -> list[str]:
    """Qrels columns all ``measures`` need (``DefaultPipeline.qrel_inputs``)."""
    return _inputs(measures, "QREL_INPUTS", _QREL_COLUMNS, runtime_only=False)


# ---- evaluation --------------------------------------------------------------------------


def _frame(value, kind: str):
    """ir_measures' pandas frame of qrels (``kind="relevance"``) or a run: a pandas
    DataFrame as it is (qrels get an ``iteration`` column of ``"0"`` if they lack one),
    a dict of dicts or an iterable of namedtuples row by row; also polars frames,
    irmetrics' tables and TREC file paths."""
    pd = _pandas()
    qrels = kind == "relevance"
    if isinstance(value, (str, os.PathLike)):
        value = Qrels.read(value) if qrels else Run.read(value)
    if isinstance(value, (Qrels, Run)):
        value = value.df
    if hasattr(value, "to_pandas") and hasattr(value, "columns"):  # polars
        value = value.to_pandas()
    if isinstance(value, pd.DataFrame):
        if qrels and "iteration" not in value.columns:
            return value.assign(iteration=["0"] * len(value))
        return value
    if isinstance(value, Mapping):
        rows = [(q, d, v, "0") if qrels else (q, d, v)
                for q, docs in value.items() for d, v in docs.items()]
        columns = ["query_id", "doc_id", kind] + (["iteration"] if qrels else [])
        return pd.DataFrame(rows, columns=columns)
    if isinstance(value, Iterable):
        rows = list(value)
        if not rows:
            return pd.DataFrame([], columns=["query_id", "doc_id", kind]
                                + (["iteration"] if qrels else []))
        if not all(isinstance(r, tuple) and hasattr(r, "_fields") for r in rows):
            raise parameter_error("qrels" if qrels else "run", "namedtuples (Qrel or"
                                  " ScoredDoc), a dict of dicts or a DataFrame",
                                  type(rows[0]).__name__)
        return pd.DataFrame(rows)
    raise parameter_error("qrels" if qrels else "run", "a dict of dicts, a DataFrame or an"
                          " iterable of namedtuples", type(value).__name__)


def _records_as_dict(value):
    """An iterable of namedtuples as a dict of dicts (irmetrics' engine takes dicts,
    frames, tables and paths)."""
    if isinstance(value, (str, os.PathLike, Mapping, Qrels, Run)) or hasattr(value, "columns"):
        return value
    if isinstance(value, Iterable):
        out: dict = {}
        for row in value:
            third = getattr(row, "relevance", None)
            third = getattr(row, "score", None) if third is None else third
            out.setdefault(row.query_id, {})[row.doc_id] = third
        return out
    return value


class Evaluator:
    """The user's measures on one qrels, for many runs (ir_measures' ``Evaluator``).

    Examples
    --------
    >>> from irmetrics.compat.ir_measures_define import define_byquery, evaluator
    >>> Count = define_byquery(lambda qrels, run: len(run), name="Count")
    >>> ev = evaluator([Count @ 1], {"q1": {"a": 1}, "q2": {"b": 1}})
    >>> list(ev.iter_calc({"q1": {"a": 1.0, "c": 0.5}}))
    [Metric(query_id='q1', measure=Count@1, value=1), Metric(query_id='q2', measure=Count@1, value=0.0)]
    """

    def __init__(self, measures, qrels):
        if isinstance(measures, (str, CustomMeasure)) or not isinstance(measures, Iterable):
            raise parameter_error("measures", "a list of measures", measures)
        self.measures = list(dict.fromkeys(measures))
        other = [m for m in self.measures if not isinstance(m, CustomMeasure)]
        if other:
            raise parameter_error("measures", "measures of define(), define_byquery() or"
                                  " registered_measure()", other[0])
        self._runtime = [m for m in self.measures if isinstance(m, RuntimeMeasure)]
        self._registered = [m for m in self.measures if isinstance(m, RegisteredMeasure)]
        self._engine = None
        if self._registered:
            self._engine = _IrmEvaluator(_records_as_dict(qrels),
                                         [m.spelling() for m in self._registered])
        self._qrels = None
        if self._runtime:
            frame = _frame(qrels, "relevance")
            if "query_id" not in frame.columns:
                raise parameter_error("the qrels' columns", "a query_id column",
                                      list(frame.columns))
            by = ["query_id"] + (["doc_id"] if "doc_id" in frame.columns else [])
            self._qrels = frame.sort_values(by=by)
            self._qrels_query_ids = set(self._qrels["query_id"].unique())

    def _registered_metrics(self, run):
        """Metrics of irmetrics' user measures: every qrels query, query by query."""
        metric = _results()[0]
        results = self._engine.evaluate_unchecked(_records_as_dict(run))
        query_ids = np.asarray(self._engine.query_ids, dtype=object)
        rows = {q: i for i, q in enumerate(np.asarray(results.query_ids, dtype=object))}
        values = {m: results.values(m.spelling()) for m in self._registered} if rows else {}
        for q in query_ids:
            i = rows.get(q)
            for m in self._registered:
                yield metric(q, m, m.DEFAULT if i is None else float(values[m][i]))

    def _runtime_metrics(self, run):
        """Metrics of define()/define_byquery() measures, as ir_measures' runtime
        provider yields them: the ``impl``'s, then the default for qrels queries left."""
        metric = _results()[0]
        frame = _frame(run, "score")
        if "query_id" not in frame.columns:
            raise parameter_error("the run's columns", "a query_id column", list(frame.columns))
        by, ascending = ["query_id"], [True]
        if "score" in frame.columns:
            by, ascending = ["query_id", "score"], [True, False]
        frame = frame.sort_values(by=by, ascending=ascending)
        expected = {(m, q) for m in self._runtime for q in self._qrels_query_ids}
        for m in self._runtime:
            for got in m.runtime_impl(self._qrels, frame):
                expected.discard((got.measure, got.query_id))
                yield got
        for m, q in sorted(expected, key=lambda pair: (str(pair[0]), pair[1])):
            yield metric(q, m, m.DEFAULT)

    def iter_calc(self, run):
        """Yield ``Metric(query_id, measure, value)``: irmetrics' user measures query by
        query, then the define() measures as ir_measures yields them."""
        if self._registered:
            yield from self._registered_metrics(run)
        if self._runtime:
            yield from self._runtime_metrics(run)

    def calc(self, run):
        """``CalcResults(aggregated, per_query)``."""
        per_query = list(self.iter_calc(run))
        return _results()[1](self._aggregate(per_query), per_query)

    def calc_aggregate(self, run) -> dict:
        """``{measure: aggregate}``: the mean of its values (the sum for a user measure
        defined with ``aggregate="sum"``); NaN without any value."""
        return self._aggregate(self.iter_calc(run))

    def _aggregate(self, metrics) -> dict:
        totals = {m: [0.0, 0] for m in self.measures}
        for got in metrics:
            total = totals[got.measure]
            total[0] += got.value
            total[1] += 1
        out = {}
        for m, (value_sum, count) in totals.items():
            summed = isinstance(m, RegisteredMeasure) and m._measure.summary == SUM
            out[m] = value_sum if summed else (value_sum / count if count else float("nan"))
        return out


def evaluator(measures, qrels) -> Evaluator:
    """An :class:`Evaluator` for these measures and qrels."""
    return Evaluator(measures, qrels)


def iter_calc(measures, qrels, run):
    """Yield ``Metric`` per query and measure (see :meth:`Evaluator.iter_calc`)."""
    return Evaluator(measures, qrels).iter_calc(run)


def calc_aggregate(measures, qrels, run) -> dict:
    """``{measure: aggregate}`` (see :meth:`Evaluator.calc_aggregate`)."""
    return Evaluator(measures, qrels).calc_aggregate(run)


def calc(measures, qrels, run):
    """``CalcResults(aggregated, per_query)``."""
    return Evaluator(measures, qrels).calc(run)

