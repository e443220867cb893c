"""Measures defined in Python, at run time: what ir_measures' runtime provider computes.

Two kinds of measure objects, both ir_measures :class:`~.measures.Measure` objects
(``m @ 10``, ``m(cutoff=5)``, ``str(m)``, equality and hashing by spelling,
``m.iter_calc(qrels, run)``, ``m.calc_aggregate(qrels, run)``, ``m.calc``,
``m.evaluator``), usable with the built-in measures in one call
(``ir_measures.calc_aggregate([MyP@5, nDCG@10], qrels, run)``):

* :func:`define` and :func:`define_byquery`, ir_measures 0.4.3's functions with its
  semantics: the user's ``impl`` gets pandas DataFrames of the qrels and of the run (any
  columns: ir_measures' runtime measures need not be about documents), the run sorted by
  query id then score descending (ties in input order), cut to the first ``k`` rows of
  each query under ``@k``; ``define_byquery`` calls ``impl`` once per run query (query ids
  in pandas' ``groupby`` order) with that query's qrels rows. Every qrels query the
  ``impl`` gives no value gets ir_measures' default 0.0; aggregates are the mean over
  all values (those of run queries absent from the qrels included, as in ir_measures).
  :class:`RuntimeEvaluator` computes them as ir_measures' runtime provider does.
* :func:`registered_measure`: a measure defined with :func:`irmetrics.define_measure`
  (vectorised over irmetrics' ranked lists) as an ir_measures object, computed by
  irmetrics' engine with the drop-in's conventions (every qrels query gets a value, 0.0
  when the run lacks it; ties by doc id descending, as irmetrics). ``parse_measure``
  reads its spelling too (``"GradedP(max_label=3)@10"``).

The provider that routes both (``ir_measures.runtime``, first in ``DefaultPipeline`` as
in ir_measures 0.4.3) is :class:`~.providers.RuntimeProvider`.

A failing ``impl`` raises its own exception, as in ir_measures (``except KeyError``
catches it), with a note naming the measure (and, for ``define_byquery``, the query)
from Python 3.11. Deliberate differences from ir_measures: a cutoff that is
not a non-negative integer, or an unknown parameter, is refused when the object is
made (ir_measures fails later with an ``AssertionError``). pandas is needed for
:func:`define` and :func:`define_byquery` (their ``impl`` takes pandas frames).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Mapping

import numpy as np

from ...checks import parameter_error
from ...containers import Qrels, Run
from ...exceptions import UnknownMeasureError
from ...measures.registry import REGISTRY, SUM, is_user_measure
from .measures import MeanAgg, Measure, Metric, ParamInfo, SumAgg

__all__ = [
    "CustomMeasure",
    "RegisteredMeasure",
    "RuntimeEvaluator",
    "RuntimeMeasure",
    "define",
    "define_byquery",
    "registered_measure",
    "user_measure",
]


#: The columns a measure reads unless define() is told otherwise (ir_measures' default).
RUN_COLUMNS = ("query_id", "doc_id", "score")
QREL_COLUMNS = ("query_id", "doc_id", "relevance")


def _pandas():
    try:
        import pandas
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("define() and define_byquery() give the measure pandas DataFrames,"
                          " as ir_measures does: pip install pandas") from err
    return pandas


class CustomMeasure(Measure):
    """Base of the measures defined at run time: an ir_measures :class:`Measure` whose
    parameters are checked when it is made (names, and ``cutoff`` a non-negative
    integer), and which reads the columns ``RUN_INPUTS``/``QREL_INPUTS``.
    """

    RUN_INPUTS: list = list(RUN_COLUMNS)
    QREL_INPUTS: list = list(QREL_COLUMNS)

    def __init__(self, **params):  # noqa: D107 - the name is the subclass's
        self.params = dict(params)
        self._check_names()

    def _check_names(self) -> None:
        """Refuse unknown parameters and a cutoff that is not a non-negative integer
        (normalised to ``int``: ``np.int64(10)`` spells as ``10``)."""
        unknown = sorted(set(self.params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise parameter_error(f"the parameters of {self.NAME or 'this measure'}",
                                  f"among {sorted(self.SUPPORTED_PARAMS)}", unknown[0])
        cutoff = self.params.get("cutoff")
        if cutoff is not None and (isinstance(cutoff, (bool, np.bool_))
                                   or not isinstance(cutoff, numbers.Integral) or cutoff < 0):
            raise parameter_error("cutoff", "a non-negative integer", cutoff)
        if cutoff is not None:
            self.params["cutoff"] = int(cutoff)

    def validate_params(self) -> None:
        """Parameters are checked when the object is made (kept for ir_measures' API)."""


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
        self.SUPPORTED_PARAMS = ({"cutoff": ParamInfo(dtype=int, desc="ranking cutoff threshold")}
                                 if definition.support_cutoff else {})
        self.RUN_INPUTS = definition.run_inputs
        self.QREL_INPUTS = definition.qrel_inputs
        self.PRETTY_NAME = definition.pretty_name
        self.SHORT_DESC = definition.short_desc
        super().__init__(**params)

    def __repr__(self) -> str:
        if self.NAME is None:  # as ir_measures: an unnamed measure prints as an object
            return object.__repr__(self)
        return super().__repr__()

    __str__ = __repr__

    def aggregator(self) -> MeanAgg:
        """The mean of the values (ir_measures' runtime measures are means)."""
        return MeanAgg()

    def runtime_impl(self, qrels, run):
        """Yield ``Metric(query_id, self, value)`` from the user's ``impl`` on pandas
        ``qrels`` and ``run`` sorted as ir_measures' runtime provider sorts them."""
        cutoff = self.params.get("cutoff")
        if cutoff is not None:
            run = run.groupby("query_id").head(cutoff).reset_index(drop=True)
        from ...measures.custom import one_number  # (user measures only: not at import)

        definition = self._definition
        if definition.by_query:
            for query_id, run_rows in run.groupby("query_id"):
                qrels_rows = qrels[qrels["query_id"] == query_id]
                try:
                    value = definition.impl(qrels_rows, run_rows)
                except Exception as err:
                    _note(err, str(self), str(query_id))
                    raise
                one_number(value, str(self), str(query_id))  # None, "x": a clear error
                yield Metric(query_id, self, value)
            return
        try:
            pairs = [(query_id, value) for query_id, value in definition.impl(qrels, run)]
        except Exception as err:
            _note(err, str(self), None)
            raise
        for query_id, value in pairs:
            one_number(value, str(self), str(query_id))
            yield Metric(query_id, self, value)


def _note(err: Exception, spelling: str, query_id: str | None) -> None:
    """Name the measure (and query) on the user's own exception, which is re-raised
    unchanged so that ``except KeyError`` still catches it, as in ir_measures (a note
    from Python 3.11; the traceback alone on 3.10)."""
    if hasattr(err, "add_note"):
        where = f" on query {query_id!r}" if query_id is not None else ""
        err.add_note(f"(raised by the impl of measure {spelling!r}{where})")


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
    >>> from irmetrics.compat.ir_measures import define
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
        list(RUN_COLUMNS) if run_inputs is None else run_inputs,
        list(QREL_COLUMNS) if qrel_inputs is None else qrel_inputs,
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
    >>> from irmetrics.compat.ir_measures import define_byquery
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
        list(RUN_COLUMNS) if run_inputs is None else run_inputs,
        list(QREL_COLUMNS) if qrel_inputs is None else qrel_inputs,
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
        supported = {"cutoff": ParamInfo(dtype=int)} if measure.extra["optional_cutoff"] else {}
        supported.update({k: ParamInfo(default=o.default) for k, o in measure.options.items()})
        supported.update({k: ParamInfo(default=v)
                          for k, v in measure.extra["user_measure"].defaults.items()})
        self.SUPPORTED_PARAMS = supported
        super().__init__(**params)

    def aggregator(self):
        """:class:`SumAgg` for a measure defined with ``aggregate="sum"``, else
        :class:`MeanAgg`."""
        return SumAgg() if self._measure.summary == SUM else MeanAgg()

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
    >>> from irmetrics.compat.ir_measures import registered_measure
    >>> _ = irm.define_measure("Hits", lambda view: view.count(view.is_rel))
    >>> hits = registered_measure("Hits") @ 1
    >>> hits.calc_aggregate({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}})
    1.0
    >>> irm.remove_measure("Hits")
    """
    return RegisteredMeasure(name)


def user_measure(name: str) -> RegisteredMeasure | None:
    """The user measure ``name`` as an ir_measures object, or None when irmetrics has no
    user measure of that name (how ``parse_measure`` reads ``"GradedP@10"``).

    Unlike :func:`registered_measure`, an unknown name is no error.

    Parameters
    ----------
    name : str
        A name given to :func:`irmetrics.define_measure`.

    Returns
    -------
    RegisteredMeasure or None
        None also for a built-in measure's name (``"P"``).

    Examples
    --------
    >>> import irmetrics as irm
    >>> _ = irm.define_measure("Hits", lambda view: view.count(view.is_rel))
    >>> user_measure("Hits") @ 5, user_measure("P"), user_measure("Nothing")
    (Hits@5, None, None)
    >>> irm.remove_measure("Hits")
    """
    measure = REGISTRY.get(name)
    return RegisteredMeasure(name) if measure is not None and is_user_measure(measure) \
        else None


# ---- evaluation ------------------------------------------------------------------------


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
    if hasattr(value, "to_pandas") and hasattr(value, "columns"):  # polars (no pyarrow needed)
        value = pd.DataFrame({name: value[name].to_numpy() for name in value.columns})
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


class RuntimeEvaluator:
    """The measures of :func:`define`/:func:`define_byquery` on one qrels, for many
    runs, as ir_measures 0.4.3's runtime provider computes them.

    The qrels become a pandas DataFrame sorted by query id (and doc id); each run one
    sorted by query id and score descending (stable: ties in input order). Each
    measure's ``impl`` yields its metrics in turn, in the order of ``measures``; then
    every (measure, qrels query) pair left without a value gets the measure's
    ``DEFAULT``, ordered by measure spelling and query id, as ir_measures does.

    Examples
    --------
    >>> from irmetrics.compat.ir_measures.custom import RuntimeEvaluator, define_byquery
    >>> Count = define_byquery(lambda qrels, run: len(run), name="Count")
    >>> ev = RuntimeEvaluator([Count @ 1], {"q1": {"a": 1}, "q2": {"b": 1}})
    >>> list(ev.iter_calc({"q1": {"a": 1.0, "c": 0.5}}))
    [Metric(query_id='q1', measure=Count@1, value=1), Metric(query_id='q2', measure=Count@1, value=0.0)]
    """

    def __init__(self, measures, qrels):
        self.measures = list(measures)
        frame = _frame(qrels, "relevance")
        if "query_id" not in frame.columns:
            raise parameter_error("the qrels' columns", "a query_id column",
                                  list(frame.columns))
        by = ["query_id"] + (["doc_id"] if "doc_id" in frame.columns else [])
        self.qrels = frame.sort_values(by=by)
        self.qrel_qids = set(self.qrels["query_id"].unique())

    def iter_calc(self, run):
        """Yield ``Metric(query_id, measure, value)``: each ``impl``'s, then the
        defaults of the qrels queries left."""
        frame = _frame(run, "score")
        if "query_id" not in frame.columns:
            raise parameter_error("the run's columns", "a query_id column", list(frame.columns))
        by, ascending = ["query_id"], [True]
        if "score" in frame.columns:
            by, ascending = ["query_id", "score"], [True, False]
        frame = frame.sort_values(by=by, ascending=ascending)
        expected = {(m, q) for m in self.measures for q in self.qrel_qids}
        for m in self.measures:
            for got in m.runtime_impl(self.qrels, frame):
                expected.discard((got.measure, got.query_id))
                yield got
        for m, q in sorted(expected, key=lambda pair: (str(pair[0]), pair[1])):
            yield Metric(q, m, m.DEFAULT)

    def aggregate(self, metrics) -> dict:
        """``{measure: aggregate}`` of ``metrics`` (those :meth:`iter_calc` yielded),
        added in their order, as ir_measures aggregates."""
        aggregators = {m: m.aggregator() for m in self.measures}
        for got in metrics:
            aggregators[got.measure].add(got.value)
        return {m: agg.result() for m, agg in aggregators.items()}
