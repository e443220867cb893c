"""ir_measures' tuples, TREC readers and measure-name parsers (``ir_measures.util``).

The readers follow ir_measures: one tuple per data line, in file order (repeated lines
and one document judged under several iterations included), blank lines skipped,
exactly four qrels fields and six run fields per line. They read with irmetrics' field
splitter, so a malformed line is an error naming the source and the line.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from ...checks import parameter_error
from ...exceptions import ParameterError, UnknownMeasureError
from ...io.prefs import input_error, read_text, split_fields
from ...measures.params import DoubleCutoffs, DoubleParams, LongCutoffs
from ...measures.parse import parse_measures
from ...measures.registry import NICKNAMES
from .measures import CalcResults, Measure, Metric, close_names, registry
from .custom import user_measure


class Qrel(NamedTuple):
    """One judgment, shaped as ir_measures' ``Qrel``."""

    query_id: str
    doc_id: str
    relevance: int
    iteration: str = "0"


class ScoredDoc(NamedTuple):
    """One scored document, shaped as ir_measures' ``ScoredDoc``."""

    query_id: str
    doc_id: str
    score: float


class GenericQrel(Qrel):
    """Deprecated name of :class:`Qrel` (ir_measures 0.2)."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        warnings.warn("GenericQrel is deprecated; use ir_measures.Qrel.", DeprecationWarning,
                      stacklevel=2)
        return super().__new__(cls, *args, **kwargs)


class GenericScoredDoc(ScoredDoc):
    """Deprecated name of :class:`ScoredDoc` (ir_measures 0.2)."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        warnings.warn("GenericScoredDoc is deprecated; use ir_measures.ScoredDoc.",
                      DeprecationWarning, stacklevel=2)
        return super().__new__(cls, *args, **kwargs)


# ---- readers ---------------------------------------------------------------------------

_QREL_FIELDS = ("query_id", "iteration", "doc_id", "relevance")
_RUN_FIELDS = ("query_id", "iteration", "doc_id", "rank", "score", "run_id")


def read_trec_qrels(file):
    """Yield a :class:`Qrel` per data line of TREC qrels: a path (``.gz`` too), text
    holding a newline, or a file object (None: nothing, as in ir_measures).

    Every line gives a tuple, in file order: a document judged under two iterations
    (the intents of diversity qrels) gives two. Blank lines are skipped.

    Examples
    --------
    >>> from irmetrics.compat.ir_measures import read_trec_qrels
    >>> list(read_trec_qrels('''
    ... q 1 d 1
    ... q 2 d 0
    ... '''))
    [Qrel(query_id='q', doc_id='d', relevance=1, iteration='1'), Qrel(query_id='q', doc_id='d', relevance=0, iteration='2')]
    """
    def table():
        if file is None:  # ir_measures yields nothing for None (the drop-in too)
            return pl.DataFrame(schema={"query_id": pl.Utf8, "doc_id": pl.Utf8,
                                        "relevance": pl.Int64, "iteration": pl.Utf8})
        fields, source = _fields(file, _QREL_FIELDS)
        relevance = _numbers(fields, "relevance", pl.Int64, "an integer", source)
        return fields.select("query_id", "doc_id", relevance, "iteration")

    return TrecRows(table, Qrel)


def read_trec_run(file):
    """Yield a :class:`ScoredDoc` per data line of a TREC run (six fields: query_id,
    iteration, doc_id, rank, score, run_id): a path, text holding a newline, or a file
    object (None: nothing, as in ir_measures). Lines stay in file order; blank lines are skipped.

    Examples
    --------
    >>> from irmetrics.compat.ir_measures import read_trec_run
    >>> list(read_trec_run("q Q0 d 1 0.5 run\\n"))
    [ScoredDoc(query_id='q', doc_id='d', score=0.5)]
    """
    def table():
        if file is None:  # ir_measures yields nothing for None (the drop-in too)
            return pl.DataFrame(schema={"query_id": pl.Utf8, "doc_id": pl.Utf8,
                                        "score": pl.Float64})
        fields, source = _fields(file, _RUN_FIELDS)
        score = _numbers(fields, "score", pl.Float64, "a number", source)
        return fields.select("query_id", "doc_id", score)

    return TrecRows(table, ScoredDoc)


class TrecRows(Iterator):
    """What :func:`read_trec_qrels` and :func:`read_trec_run` return: an iterator of
    :class:`Qrel` or :class:`ScoredDoc` tuples, as ir_measures' generators (the file is
    read on the first ``next``), which also hands the lines not yet yielded to the
    drop-in as one table (:meth:`rest`), so that ``calc_aggregate(measures,
    read_trec_qrels(path), read_trec_run(path))`` does not build a tuple per line.

    Examples
    --------
    >>> from irmetrics.compat.ir_measures import read_trec_run
    >>> rows = read_trec_run("q Q0 a 1 0.5 run\\nq Q0 b 2 0.25 run\\n")
    >>> next(rows)
    ScoredDoc(query_id='q', doc_id='a', score=0.5)
    >>> rows.rest().rows(), list(rows)
    ([('q', 'b', 0.25)], [])
    """

    def __init__(self, table, make):
        self._read, self._make = table, make
        self._table: pl.DataFrame | None = None
        self._rows = None
        self._yielded = 0

    def _whole(self) -> pl.DataFrame:
        if self._table is None:
            self._table = self._read()
        return self._table

    def __next__(self):
        if self._rows is None:
            self._rows = self._whole().iter_rows()
        row = next(self._rows)
        self._yielded += 1
        return self._make(*row)

    def rest(self) -> pl.DataFrame:
        """The lines not yet yielded, as a polars DataFrame with the tuple's fields as
        columns; the iterator is then exhausted, as if they had been read one by one."""
        table = self._whole().slice(self._yielded)
        self._yielded = self._whole().height
        self._rows = iter(())
        return table


def _fields(file, names):
    """``(fields, source)``: the data lines of ``file`` split into ``names``."""
    if hasattr(file, "read"):
        data = file.read()
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        source = str(getattr(file, "name", "<file>"))
    elif isinstance(file, str) and "\n" in file:
        text, source = file, "<text>"
    elif isinstance(file, (str, os.PathLike)):
        source = os.fspath(file)
        text = read_text(source)
    else:
        raise parameter_error("file", "a path, TREC text or a file object", file)
    return split_fields(text, names, source=source), source


def _numbers(fields: pl.DataFrame, column: str, dtype, what: str, source: str) -> pl.Series:
    """``column`` parsed as ``dtype``; the first line that is not is an error."""
    parsed = fields[column].cast(dtype, strict=False)
    bad = parsed.is_null()
    if bad.any():
        i = int(bad.arg_max())
        raise input_error(f"{column} must be {what}; got {fields[column][i]!r}", path=source,
                          line=int(fields["line"][i]), query_id=fields["query_id"][i],
                          doc_id=fields["doc_id"][i])
    return parsed


def parse_trec_qrels(file):
    """Deprecated name of :func:`read_trec_qrels` (ir_measures 0.2).

    Parameters
    ----------
    file : str, os.PathLike or file object
        As for :func:`read_trec_qrels`.

    Returns
    -------
    TrecRows
        What :func:`read_trec_qrels` returns, after a :class:`DeprecationWarning`.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     out = list(parse_trec_qrels("q 0 d 1\\n"))
    >>> out, caught[0].category.__name__
    ([Qrel(query_id='q', doc_id='d', relevance=1, iteration='0')], 'DeprecationWarning')
    """
    warnings.warn("parse_trec_qrels is deprecated; use ir_measures.read_trec_qrels().",
                  DeprecationWarning, stacklevel=2)
    return read_trec_qrels(file)


def parse_trec_run(file):
    """Deprecated name of :func:`read_trec_run` (ir_measures 0.2).

    Parameters
    ----------
    file : str, os.PathLike or file object
        As for :func:`read_trec_run`.

    Returns
    -------
    TrecRows
        What :func:`read_trec_run` returns, after a :class:`DeprecationWarning`.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     out = list(parse_trec_run("q Q0 d 1 0.5 run\\n"))
    >>> out, caught[0].category.__name__
    ([ScoredDoc(query_id='q', doc_id='d', score=0.5)], 'DeprecationWarning')
    """
    warnings.warn("parse_trec_run is deprecated; use ir_measures.read_trec_run().",
                  DeprecationWarning, stacklevel=2)
    return read_trec_run(file)


# ---- names -----------------------------------------------------------------------------

_SYNTAX = "Name(k1=v1, k2=v2)@value with literal values"


def parse_measure(measure) -> Measure:
    """An ir_measures spelling (``"nDCG@10"``, ``"AP(rel=2)"``) as a measure object.

    The spelling is read as ir_measures reads it: a name, at most one argument list of
    ``key=literal`` pairs and an optional ``@value`` (which sets the measure's ``@``
    parameter after the arguments). Raises
    :class:`~irmetrics.exceptions.UnknownMeasureError` for an unknown name (with close
    spellings) and :class:`~irmetrics.exceptions.ParameterError` for anything else.

    Examples
    --------
    >>> from irmetrics.compat.ir_measures import parse_measure
    >>> parse_measure("nDCG(dcg='exp-log2')@10")
    nDCG(dcg='exp-log2')@10
    >>> parse_measure('IPrec(rel=2, recall=0.4)')
    IPrec(rel=2)@0.4
    """
    if isinstance(measure, Measure):
        return measure
    if hasattr(measure, "NAME") and hasattr(measure, "params"):  # a real ir_measures object
        return registry[measure.NAME](**measure.params) if measure.NAME in registry \
            else Measure(measure.NAME, **measure.params)
    if not isinstance(measure, str):
        raise parameter_error("measure", "a measure name or object", measure)
    head = re.split(r"[\s(@]", measure.lstrip(), maxsplit=1)[0]
    try:
        node = ast.parse(measure.strip(), mode="eval").body
    except SyntaxError:
        node = None
    at_value, args = None, {}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        at_value, node = _literal(node.right, measure), node.left
    if isinstance(node, ast.Call):
        if node.args or any(kw.arg is None for kw in node.keywords):
            raise ParameterError(f"arguments of {measure!r} must be name=value pairs;"
                                 f" write {_SYNTAX}.")
        args = {kw.arg: _literal(kw.value, measure) for kw in node.keywords
                if kw.arg is not None}  # None (**kwargs) was refused above
        node = node.func
    if not isinstance(node, ast.Name):
        if head in registry:  # P(rel=2)(rel=3)@5, nDCG@10@5: refused, as ir_measures does
            raise ParameterError(f"{measure!r} is not one measure spelling; write {_SYNTAX}.")
        raise UnknownMeasureError(measure, suggestions=_suggestions(head, measure))
    base = registry.get(node.id)
    if base is None:  # a measure of irmetrics.define_measure
        base = user_measure(node.id)
    if base is None:
        raise UnknownMeasureError(measure, suggestions=_suggestions(node.id, measure))
    if at_value is not None:
        args[base.AT_PARAM] = at_value
    return base(**args)


def _literal(node, measure: str):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        raise ParameterError(f"values in {measure!r} must be literals (numbers, strings,"
                             f" True/False, dicts); write {_SYNTAX}.") from None


def _suggestions(name: str, spelling: str) -> list[str]:
    """Close spellings of an unknown name: the ir_measures spelling of a trec_eval or
    irmetrics name (``P_10`` -> ``P@10``, ``ndcg@10`` -> ``nDCG@10``), else the closest
    measure names, case aside."""
    if spelling.strip() not in NICKNAMES:
        try:
            return [str(m) for m in parse_trec_measure(spelling.strip())][:5]
        except (UnknownMeasureError, ParameterError):
            pass
    return close_names(name)


def parse_trec_measure(measure: str) -> list[Measure]:
    """trec_eval names as ir_measures objects: ``"P.5,10"`` -> ``[P@5, P@10]``, ``"map"``
    -> ``[AP]``, ``"set_F.1.0,0.5"`` -> ``[SetF, SetF(beta=0.5)]``; a nickname expands to
    its measures that ir_measures has.

    Examples
    --------
    >>> from irmetrics.compat.ir_measures import parse_trec_measure
    >>> parse_trec_measure("set_F.1.0,0.5,2.4")
    [SetF, SetF(beta=0.5), SetF(beta=2.4)]
    """
    if measure in NICKNAMES:
        out = []
        for name in sorted(NICKNAMES[measure]):
            try:
                out.extend(parse_trec_measure(name))
            except (UnknownMeasureError, ParameterError):
                continue  # ir_measures skips the members it does not have
        return out
    out = []
    for req in parse_measures([measure]):
        m = req.measure
        base = registry.get(m.friendly or "")
        if base is None:
            raise UnknownMeasureError(measure, suggestions=[])
        if isinstance(m.params, (LongCutoffs, DoubleCutoffs)):
            out.extend(base @ value for value in req.params)
        elif isinstance(m.params, DoubleParams) and req.raw is not None:
            # ir_measures makes one measure per listed value (trec_eval reads the first)
            key = next(k for k, o in m.options.items() if o.raw)
            out.extend(base(**{key: value}) for value in req.params)
        else:
            out.append(base)
    return out


def convert_trec_name(measure: str) -> list[Measure]:
    """Deprecated name of :func:`parse_trec_measure` (ir_measures 0.2).

    Parameters
    ----------
    measure : str
        As for :func:`parse_trec_measure`.

    Returns
    -------
    list of Measure
        What :func:`parse_trec_measure` returns, after a :class:`DeprecationWarning`.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     out = convert_trec_name("P.5,10")
    >>> out, caught[0].category.__name__
    ([P@5, P@10], 'DeprecationWarning')
    """
    warnings.warn("convert_trec_name is deprecated; use ir_measures.parse_trec_measure().",
                  DeprecationWarning, stacklevel=2)
    return parse_trec_measure(measure)


__all__ = [
    "CalcResults",
    "GenericQrel",
    "GenericScoredDoc",
    "Metric",
    "Qrel",
    "ScoredDoc",
    "TrecRows",
    "convert_trec_name",
    "parse_measure",
    "parse_trec_measure",
    "parse_trec_qrels",
    "parse_trec_run",
    "read_trec_qrels",
    "read_trec_run",
]
