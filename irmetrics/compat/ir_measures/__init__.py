"""Drop-in replacement for ir_measures 0.4.3, computed by irmetrics' one engine.

Change one import and keep the code::

    from irmetrics.compat import ir_measures
    ir_measures.calc_aggregate([ir_measures.nDCG@10, ir_measures.AP(rel=2)], qrels, run)

Measure objects print, compare and hash like ir_measures' (``str(nDCG@10) == 'nDCG@10'``;
they also compare equal to the real ir_measures objects with the same spelling).
Every measure is computed natively; the numbers are those of the provider ir_measures
0.4.3 picks by default for that measure:

* pytrec_eval (trec_eval 9.0.8) for the trec_eval measures: irmetrics'
  ``semantics="pytrec_eval"`` (float32 scores; ties by doc id descending);
* gdeval for ``ERR@k`` and ``nDCG(dcg='exp-log2')@k`` (ties by doc id descending,
  double scores);
* its msmarco provider for ``RR@k`` and its judged provider for ``Judged@k``, which
  both break ties by doc id *ascending* (a declaration says so with
  ``ir_measures_ties="doc_id_ascending"``; the run is re-ranked in that order here,
  vectorised, before the engine sees it);
* cwl_eval for ``RBP``, ``SDCG``, ``BPM``, ``INST``, ``INSQ``, ``NERR8``-``NERR11``,
  which keeps the run's input order for tied scores (``ir_measures_ties="input_order"``:
  re-ranked here by a stable sort on the score, so a dict's insertion order, a
  DataFrame's row order and a file's line order are kept as ir_measures keeps them);
  ``RBP(rel=.., p=..)`` is irmetrics' ``RBP(model='cwl', ...)``, not trec_eval 10's
  ``rbp``;
* pyndeval (ndeval) for the diversity measures (``alpha_nDCG@k``, ``ERR_IA@k``,
  ``NRBP``, ...), ties by doc id ascending as pyndeval sorts. Their qrels are intent-aware:
  as in ir_measures the intent is the qrels' ``iteration`` (a DataFrame column, the
  field of :class:`Qrel`-shaped tuples, a TREC qrels file's second column); a dict of
  dicts has one intent, ``"0"``.

A declaration other than pytrec_eval's measures takes part only if it names the provider
whose definition it follows (``measure(..., ir_measures_provider="gdeval")``); a name
that reaches an irmetrics measure without one is refused rather than computed
differently. When a friendly name has several declarations, the one with a provider is
chosen by giving its required choice options (``model='cwl'`` for ``RBP``).

As in ir_measures, every qrels query gets a value: a query the run lacks scores 0
(ir_measures' ``Measure.DEFAULT``), run queries absent from the qrels are ignored, and
aggregates are the mean over those queries (the sum for ``NumQ``, ``NumRel``, ``NumRet``).
``iter_calc`` yields query by query (qrels query ids in ascending byte order), and within
a query the measures in the order given; ir_measures defines no order (it depends on its
providers), so compare its output as a set.

Differences, all deliberate: ir_measures' gdeval fails on non-numeric query ids and
labels above 4 (irmetrics computes for any query id and refuses labels above 4 with a
clear error); duplicate (query, doc) rows are an error here, not "last one wins"
(diversity measures: duplicate (query, intent, doc)); the judged provider divides by zero
on a query with an empty ranking (0 here); ir_measures computes only the first
(rel, alpha, beta) group of diversity measures in one call (pyndeval gets the run as a
generator; the other groups come back 0) and fails on their ``judged_only=True``: here
every diversity measure is computed. Standard and diversity measures in one call share
the qrels, so a document judged for several intents is a duplicate for the standard
ones (an error): evaluate them in separate calls.
"""

from __future__ import annotations

import os
from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np
import polars as pl

from .._validation import parameter_error
from ..containers import Qrels, Run
from ..evaluate import Evaluator as _Evaluator
from ..exceptions import ParameterError, UnknownMeasureError
from ..io.trec import read_qrels_bytes, read_run_bytes
from ..evaluate_intent import evaluate_diversity
from ..io.diversity import DiversityQrels
from ..measures.params import DoubleCutoffs, DoubleParams, LongCutoffs
from ..measures.parse import friendly_index, parse_measures
from ..measures.registry import NICKNAMES, NUM_Q, REGISTRY, SUM
from ..measures.rel_format import DIVERSITY, rel_formats_of

__all__ = [
    "Measure", "Qrel", "ScoredDoc", "Metric", "CalcResults", "NOT_PROVIDED",
    "parse_measure", "parse_trec_measure", "read_trec_qrels", "read_trec_run",
    "calc_aggregate", "iter_calc", "calc", "evaluator", "Evaluator", "measures",
]


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


Metric = namedtuple("Metric", ["query_id", "measure", "value"])
Metric.__doc__ = "One per-query value, shaped as ir_measures' ``Metric``."
CalcResults = namedtuple("CalcResults", ["aggregated", "per_query"])
CalcResults.__doc__ = "Aggregates and per-query metrics, shaped as ir_measures' ``CalcResults``."


class _NotProvided:
    def __repr__(self) -> str:
        return "NOT_PROVIDED"


#: A parameter left unset (ir_measures' ``NOT_PROVIDED``).
NOT_PROVIDED = _NotProvided()
_N = NOT_PROVIDED

#: ir_measures 0.4.3's measures: name -> (parameter set by ``@``, {parameter: default}).
#: This mirrors its public API (names, parameters, defaults), so objects print alike.
_PARAMS = {
    "Accuracy": ("cutoff", {"cutoff": _N, "rel": 1}),
    "AP": ("cutoff", {"cutoff": _N, "rel": 1, "judged_only": False}),
    "BPM": ("cutoff", {"cutoff": _N, "T": 1.0, "min_rel": 0, "max_rel": _N}),
    "Bpref": ("cutoff", {"rel": 1}),
    "Compat": ("cutoff", {"p": 0.95, "normalize": True}),
    "ERR_IA": ("cutoff", {"cutoff": _N, "rel": 1, "judged_only": False}),
    "nERR_IA": ("cutoff", {"cutoff": _N, "rel": 1, "judged_only": False}),
    "alpha_DCG": ("cutoff", {"cutoff": _N, "rel": 1, "alpha": 0.5, "judged_only": False}),
    "alpha_nDCG": ("cutoff", {"cutoff": _N, "rel": 1, "alpha": 0.5, "judged_only": False}),
    "NRBP": ("cutoff", {"rel": 1, "alpha": 0.5, "beta": 0.5}),
    "nNRBP": ("cutoff", {"rel": 1, "alpha": 0.5, "beta": 0.5}),
    "AP_IA": ("cutoff", {"rel": 1, "judged_only": False}),
    "P_IA": ("cutoff", {"cutoff": _N, "rel": 1, "judged_only": False}),
    "StRecall": ("cutoff", {"cutoff": _N, "rel": 1}),
    "ERR": ("cutoff", {"cutoff": _N}),
    "INST": ("cutoff", {"T": 1.0, "min_rel": 0, "max_rel": _N}),
    "INSQ": ("cutoff", {"T": 1.0, "min_rel": 0, "max_rel": _N}),
    "infAP": ("cutoff", {"rel": 1}),
    "IPrec": ("recall", {"recall": _N, "rel": 1, "judged_only": False}),
    "Judged": ("cutoff", {"cutoff": _N}),
    "nDCG": ("cutoff", {"cutoff": _N, "dcg": "log2", "gains": _N, "judged_only": False}),
    "NERR8": ("cutoff", {"cutoff": _N, "min_rel": 0, "max_rel": _N}),
    "NERR9": ("cutoff", {"cutoff": _N, "min_rel": 0, "max_rel": _N}),
    "NERR10": ("cutoff", {"p": 0.9, "min_rel": 0, "max_rel": _N}),
    "NERR11": ("cutoff", {"T": 1.0, "min_rel": 0, "max_rel": _N}),
    "NumQ": ("cutoff", {}),
    "NumRel": ("cutoff", {"rel": 1}),
    "NumRet": ("cutoff", {"rel": _N}),
    "P": ("cutoff", {"cutoff": _N, "rel": 1, "judged_only": False}),
    "R": ("cutoff", {"cutoff": _N, "rel": 1, "judged_only": False}),
    "RBP": ("cutoff", {"cutoff": _N, "p": 0.8, "rel": _N}),
    "Rprec": ("cutoff", {"rel": 1, "judged_only": False}),
    "RR": ("cutoff", {"cutoff": _N, "rel": 1, "judged_only": False}),
    "SDCG": ("cutoff", {"cutoff": _N, "dcg": "log2", "min_rel": 0, "max_rel": _N}),
    "SetP": ("cutoff", {"rel": 1, "relative": False, "judged_only": False}),
    "SetR": ("cutoff", {"rel": 1}),
    "SetF": ("cutoff", {"rel": 1, "beta": 1.0, "judged_only": False}),
    "SetAP": ("cutoff", {"rel": 1, "judged_only": False}),
    "Success": ("cutoff", {"cutoff": _N, "rel": 1, "judged_only": False}),
}


class Measure:
    """An ir_measures-style measure: ``nDCG@10``, ``AP(rel=2)``, ``P(rel=2)@5``.

    ``measure(**params)`` and ``measure @ value`` return new measures; ``measure[param]``
    reads a parameter (its default when unset). ``str``/``repr`` give ir_measures' spelling
    (parameters at their default are left out), which is also the key of equality and
    hashing.

    Examples
    --------
    >>> from irmetrics.compat import ir_measures
    >>> m = ir_measures.nDCG @ 10
    >>> str(m), str(ir_measures.AP(rel=2)), m == ir_measures.parse_measure("nDCG@10")
    ('nDCG@10', 'AP(rel=2)', True)
    """

    __slots__ = ("NAME", "AT_PARAM", "SUPPORTED_PARAMS", "params")

    def __init__(self, name: str, **params):
        if name not in _PARAMS:
            raise UnknownMeasureError(name, suggestions=_close(name))
        at_param, defaults = _PARAMS[name]
        unknown = sorted(set(params) - set(defaults))
        if unknown:
            raise parameter_error(f"{name}'s parameters", f"among {sorted(defaults)}",
                                  unknown[0])
        self.NAME = name
        self.AT_PARAM = at_param
        self.SUPPORTED_PARAMS = defaults
        self.params = dict(params)

    def __call__(self, **params) -> "Measure":
        return Measure(self.NAME, **{**self.params, **params})

    def __matmul__(self, at_value) -> "Measure":
        return self(**{self.AT_PARAM: at_value})

    def __getitem__(self, key):
        return self.params.get(key, self.SUPPORTED_PARAMS[key])

    def __repr__(self) -> str:
        shown = ",".join(f"{k}={_param_repr(v)}" for k, v in self.params.items()
                         if k != self.AT_PARAM and v != self.SUPPORTED_PARAMS[k])
        text = self.NAME + (f"({shown})" if shown else "")
        if self.AT_PARAM in self.params:
            text += f"@{self.params[self.AT_PARAM]}"
        return text

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        # Also equal to the real ir_measures object of the same spelling.
        return hasattr(other, "NAME") and hasattr(other, "params") and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def iter_calc(self, qrels, run):
        return iter_calc([self], qrels, run)

    def calc_aggregate(self, qrels, run):
        return calc_aggregate([self], qrels, run)[self]

    def calc(self, qrels, run):
        agg, per_query = calc([self], qrels, run)
        return CalcResults(agg[self], per_query)

    def evaluator(self, qrels) -> "Evaluator":
        return evaluator([self], qrels)


def _param_repr(value) -> str:
    """ir_measures' spelling of a parameter value (a dict lists only changed gains)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{v}" for k, v in sorted(value.items()) if k != v) + "}"
    return repr(value)


def _close(name: str, spelling: str | None = None) -> list[str]:
    """Suggestions for an unknown name: the ir_measures spelling of a trec_eval or
    irmetrics name (``P_10`` → ``P@10``, ``ndcg@10`` → ``nDCG@10``), else the closest
    measure names, case aside."""
    if spelling is not None and spelling.strip() not in NICKNAMES:
        try:
            return [str(m) for m in parse_trec_measure(spelling.strip())][:5]
        except (UnknownMeasureError, ParameterError):
            pass
    import difflib
    by_lower = {n.lower(): n for n in _PARAMS}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=5, cutoff=0.5)
    return [by_lower[c] for c in close]


#: The measure objects, as ``ir_measures.<Name>`` (aliases included).
measures = {name: Measure(name) for name in _PARAMS}
measures.update({
    "MAP": measures["AP"], "BPref": measures["Bpref"], "α_DCG": measures["alpha_DCG"],
    "α_nDCG": measures["alpha_nDCG"], "MAP_IA": measures["AP_IA"], "NDCG": measures["nDCG"],
    "NumRelRet": measures["NumRet"](rel=1), "Precision": measures["P"],
    "Recall": measures["R"], "RPrec": measures["Rprec"], "MRR": measures["RR"],
    "SetRelP": measures["SetP"](relative=True),
})
globals().update(measures)
__all__ += sorted(measures)


# ---- names ---------------------------------------------------------------------------


def parse_measure(measure) -> Measure:
    """An ir_measures spelling (``"nDCG@10"``, ``"AP(rel=2)"``) as a measure object.

    Raises :class:`~irmetrics.exceptions.UnknownMeasureError` for an unknown name and
    :class:`~irmetrics.exceptions.ParameterError` for malformed arguments.

    Examples
    --------
    >>> from irmetrics.compat.ir_measures import parse_measure
    >>> parse_measure("nDCG(dcg='exp-log2')@10")
    nDCG(dcg='exp-log2')@10
    """
    if isinstance(measure, Measure):
        return measure
    if hasattr(measure, "NAME") and hasattr(measure, "params"):  # a real ir_measures object
        return Measure(measure.NAME, **{k: v for k, v in measure.params.items()})
    if not isinstance(measure, str):
        raise parameter_error("measure", "a measure name or object", measure)
    import ast
    import re
    match = re.fullmatch(r"\s*([^\s(@]+)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*", measure)
    if match is None:
        raise UnknownMeasureError(measure, suggestions=_close(measure))
    name, args, at_value = match.groups()
    base = measures.get(name)
    if base is None:
        raise UnknownMeasureError(measure, suggestions=_close(name, measure))
    params = {}
    if args:
        try:
            call = ast.parse(f"f({args})", mode="eval").body
            params = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
            if call.args or None in params:
                raise ValueError
        except (SyntaxError, ValueError):
            raise ParameterError(f"arguments of {measure!r} must be name=value pairs;"
                                 f" got {args!r}.") from None
    if at_value is not None:
        try:
            params[base.AT_PARAM] = ast.literal_eval(at_value)
        except (SyntaxError, ValueError):
            raise ParameterError(f"the value after @ in {measure!r} must be a number;"
                                 f" got {at_value!r}.") from None
    return base(**params)


def parse_trec_measure(measure: str) -> list[Measure]:
    """trec_eval names as ir_measures objects: ``"P.5,10"`` → ``[P@5, P@10]``, ``"map"``
    → ``[AP]``; a nickname expands to its measures that ir_measures has."""
    if measure in NICKNAMES:
        out = []
        for name in sorted(NICKNAMES[measure]):
            try:
                out.extend(parse_trec_measure(name))
            except (UnknownMeasureError, ParameterError):
                continue  # ir_measures skips the members it does not have
        return out
    requests = parse_measures([measure])
    out = []
    for req in requests:
        m = req.measure
        base = measures.get(m.friendly or "")
        if base is None:
            raise UnknownMeasureError(measure, suggestions=[])
        if isinstance(m.params, (LongCutoffs, DoubleCutoffs)):
            out.extend(base @ value for value in req.params)
        elif isinstance(m.params, DoubleParams) and req.raw is not None:
            key = next(k for k, o in m.options.items() if o.raw)
            out.append(base(**{key: req.params[0]}))
        else:
            out.append(base)
    return out


# ---- inputs --------------------------------------------------------------------------


def read_trec_qrels(file):
    """Yield :class:`Qrel` from a TREC qrels file path, text with newlines or a file
    object (irmetrics' reader: errors name the line)."""
    df = _read_text(file, read_qrels_bytes, Qrels.read).df
    for q, it, d, rel in df.select("query_id", "iteration", "doc_id", "relevance").iter_rows():
        yield Qrel(q, d, rel, it)


def read_trec_run(file):
    """Yield :class:`ScoredDoc` from a TREC run file path, text with newlines or a file
    object."""
    df = _read_text(file, read_run_bytes, Run.read).df
    for q, d, score in df.select("query_id", "doc_id", "score").iter_rows():
        yield ScoredDoc(q, d, score)


def _read_text(file, from_bytes, from_path):
    if hasattr(file, "read"):
        data = file.read()
        return from_bytes(data.encode() if isinstance(data, str) else data, source="<file>")
    if isinstance(file, str) and "\n" in file:
        return from_bytes(file.encode(), source="<text>")
    if isinstance(file, (str, os.PathLike)):
        return from_path(file)
    raise parameter_error("file", "a path, TREC text or a file object", file)


#: Column names ir_measures and PyTerrier use, in that order of preference.
_COLUMNS = {"query_id": ("query_id", "qid"), "doc_id": ("doc_id", "docno"),
            "score": ("score",), "relevance": ("relevance", "label")}


def _as_table(value, kind: str):
    """Qrels (``kind="relevance"``) or Run (``kind="score"``) from the shapes ir_measures
    takes: dict of dicts, pandas/polars DataFrame, iterable of namedtuples; also irmetrics'
    own tables and TREC file paths."""
    cls = Qrels if kind == "relevance" else Run
    if isinstance(value, (cls, str, os.PathLike)):
        return value  # a TREC file path goes to irmetrics' streaming reader as it is
    if isinstance(value, Mapping):
        return cls.from_dict(value)
    # A polars LazyFrame warns on .columns (even through hasattr); collect_schema() is
    # its quiet spelling.
    if hasattr(value, "collect_schema") or hasattr(value, "columns"):
        cols = (value.collect_schema().names() if hasattr(value, "collect_schema")
                else list(value.columns))
        names = {}
        for field in ("query_id", "doc_id", kind):
            found = next((c for c in _COLUMNS[field] if c in cols), None)
            if found is None:
                raise parameter_error(f"the {'qrels' if cls is Qrels else 'run'} DataFrame's"
                                      " columns", "query_id/doc_id/" + kind
                                      + " or qid/docno/" + ("label" if cls is Qrels
                                                            else "score"), cols)
            names[field] = found
        return cls.from_df(value, **names)
    if isinstance(value, Iterable):
        rows = [(r.query_id, r.doc_id, getattr(r, kind)) for r in _records(value, kind)]
        return cls.from_records(rows)
    raise parameter_error("qrels" if cls is Qrels else "run",
                          "a dict of dicts, a DataFrame or an iterable of namedtuples",
                          type(value).__name__)


def _records(values, kind):
    for i, row in enumerate(values):
        if not all(hasattr(row, f) for f in ("query_id", "doc_id", kind)):
            raise parameter_error(f"item {i + 1}", f"a namedtuple with query_id, doc_id and"
                                  f" {kind}", row)
        yield row


# ---- evaluation ----------------------------------------------------------------------

#: How each group of measures sees the run: irmetrics semantics, tie order, judgments.
_PYTREC_EVAL, _TREC_EVAL, _DOC_ID_ASCENDING = "pytrec_eval", "trec_eval", "doc_id_ascending"
_INPUT_ORDER, _DIVERSITY = "input_order", "diversity"


def _follows_provider(measure_def) -> bool:
    return measure_def.pytrec_eval or "ir_measures_provider" in measure_def.extra


def _native_spelling(m: Measure) -> str:
    """irmetrics' spelling of ir_measures' measure ``m``: its own if that reaches a
    declaration following ir_measures' provider, else the spelling of one that does and
    is told apart by required choice options (``RBP(rel=1)`` → ``RBP(model='cwl',
    rel=1)``)."""
    text = str(m)
    try:
        if all(_follows_provider(r.measure) for r in parse_measures([text])):
            return text
    except (ParameterError, UnknownMeasureError):
        pass  # RBP(p=0.8): also try the declarations below
    for d in friendly_index().get((m.NAME.lower(), m.AT_PARAM in m.params), ()):
        picks = {k: o.choices[0] for k, o in d.options.items()
                 if o.required and o.choices and k not in m.params}
        if "ir_measures_provider" in d.extra and picks:
            given = text[len(m.NAME):].partition("@")
            inner = given[0][1:-1] if given[0].startswith("(") else ""
            args = ", ".join([f"{k}={v!r}" for k, v in picks.items()] + ([inner] if inner else []))
            return f"{m.NAME}({args})" + (given[1] + given[2])
    return text


def _group_of(measure_def, spelling: str) -> str:
    """The group of a declaration that follows ir_measures' provider for ``spelling``:
    pytrec_eval's measures, or a declaration naming its ``ir_measures_provider``."""
    if measure_def.pytrec_eval:
        return _PYTREC_EVAL
    if not _follows_provider(measure_def):
        raise ParameterError(
            f"{spelling!r} is irmetrics' {measure_def.name!r}, which does not follow the"
            " provider ir_measures 0.4.3 uses for it; see docs/ir_measures.md.")
    if DIVERSITY in rel_formats_of(measure_def):
        return _DIVERSITY
    ties = measure_def.extra.get("ir_measures_ties")
    return ties if ties in (_DOC_ID_ASCENDING, _INPUT_ORDER) else _TREC_EVAL


def _rerank_doc_id_ascending(run) -> Run:
    """The run with scores replaced by ``-rank`` in the order score descending, doc id
    ascending (ir_measures' msmarco and judged providers), so that the engine's order
    (score descending) reproduces it exactly. Ids compare as code points = UTF-8 bytes."""
    if not isinstance(run, Run):
        run = Run.read(run)
    return _scores_as_ranks(run.df.sort(["query_id", "score", "doc_id"],
                                         descending=[False, True, False]), run.name)


def _rerank_input_order(run) -> Run:
    """The run re-ranked as cwl_eval through ir_measures ranks it: score descending,
    tied scores in the order the run gave them (a stable sort)."""
    if not isinstance(run, Run):
        run = Run.read(run)
    return _scores_as_ranks(run.df.sort(["query_id", "score"], descending=[False, True],
                                        maintain_order=True), run.name)


def _scores_as_ranks(ranked: pl.DataFrame, name: str) -> Run:
    """Scores replaced by ``-rank`` of the rows' order within each query."""
    df = ranked.with_columns((-pl.int_range(1, pl.len() + 1).over("query_id"))
                             .cast(pl.Float64).alias("score"))
    return Run._trusted(df, name=name)


def _as_diversity_table(value) -> DiversityQrels:
    """Intent-aware qrels from ir_measures' shapes: the intent is the ``iteration``
    (a DataFrame column, a record field, a TREC file's second column); a dict of dicts
    and records without one have the single intent ``"0"``, as in ir_measures."""
    if isinstance(value, DiversityQrels):
        return value
    if isinstance(value, (str, os.PathLike)):
        return DiversityQrels.read(value)
    if isinstance(value, Mapping):
        return DiversityQrels.from_records([(q, "0", d, r) for q, docs in value.items()
                                            for d, r in docs.items()])
    if hasattr(value, "columns"):
        cols = list(value.columns)
        found = {field: next((c for c in _COLUMNS[field] if c in cols), None)
                 for field in ("query_id", "doc_id", "relevance")}
        if None in found.values():
            raise parameter_error("the qrels DataFrame's columns", "query_id/doc_id/relevance"
                                  "[/iteration] or qid/docno/label[/iteration]", cols)
        # Column by column (pandas or polars, without pyarrow); no iteration: one intent.
        frame = {field: list(value[name]) for field, name in found.items()}
        frame["iteration"] = ([str(i) for i in value["iteration"]] if "iteration" in cols
                              else ["0"] * len(frame["query_id"]))
        return DiversityQrels.from_df(pl.DataFrame(frame))
    if isinstance(value, Iterable):
        return DiversityQrels.from_records(
            [(r.query_id, str(getattr(r, "iteration", "0")), r.doc_id, r.relevance)
             for r in _records(value, "relevance")])
    raise parameter_error("qrels", "a dict of dicts, a DataFrame or an iterable of"
                          " namedtuples", type(value).__name__)


class Evaluator:
    """Qrels and measures prepared once, for many runs (``evaluator(measures, qrels)``).

    Examples
    --------
    >>> from irmetrics.compat import ir_measures
    >>> ev = ir_measures.evaluator([ir_measures.P@1, ir_measures.RR@10],
    ...                            {"q1": {"d1": 1, "d2": 0}})
    >>> ev.calc_aggregate({"q1": {"d1": 0.1, "d2": 0.9}})
    {P@1: 0.0, RR@10: 0.5}
    """

    def __init__(self, measures, qrels):
        if isinstance(measures, (str, Measure)) or not isinstance(measures, Iterable):
            raise parameter_error("measures", "a list of measures", measures)
        self.measures = list(dict.fromkeys(parse_measure(m) for m in measures))
        by_group: dict[str, list[Measure]] = {}
        self._defs, self._native = {}, {}
        for m in self.measures:
            self._native[m] = _native_spelling(m)
            (req,) = parse_measures([self._native[m]])
            self._defs[m] = req.measure
            by_group.setdefault(_group_of(req.measure, str(m)), []).append(m)
        self._groups = []
        if set(by_group) - {_DIVERSITY}:
            self.qrels = _as_table(qrels, "relevance")
        for group, ms in by_group.items():
            names = [self._native[m] for m in ms]
            if group == _DIVERSITY:
                self._diversity_qrels = _as_diversity_table(qrels)
                ev, ids = None, self._diversity_qrels.df["query_id"].unique().to_numpy()
            else:
                ev = _Evaluator(self.qrels, names, semantics="pytrec_eval"
                                if group == _PYTREC_EVAL else "trec_eval")
                ids = ev.query_ids
            self._groups.append((group, ms, ev))
        # Qrels query ids in ascending byte order (numpy's str order is code point order,
        # the same), so each evaluation's queries are found by one searchsorted.
        self._query_ids = np.unique(np.asarray(ids, dtype=str)) if self._groups \
            else np.array([], dtype=str)
        self.query_ids = self._query_ids.tolist()

    def _evaluate(self, group: str, ms: list, ev, run):
        """irmetrics' Results of one group of measures, the run ranked as its provider
        ranks it."""
        if group == _DIVERSITY:
            return evaluate_diversity(self._diversity_qrels, run,
                                      [self._native[m] for m in ms], complete=True)
        if group == _DOC_ID_ASCENDING:
            run = _rerank_doc_id_ascending(run)
        elif group == _INPUT_ORDER:
            run = _rerank_input_order(run)
        return ev.evaluate_unchecked(run)

    def _values(self, run) -> dict:
        """``{measure: per-query float64 array aligned with query_ids}``."""
        run = _as_table(run, "score")
        out = {}
        for group, ms, ev in self._groups:
            res = self._evaluate(group, ms, ev, run)
            rows = np.searchsorted(self._query_ids, np.asarray(res.query_ids, dtype=str))
            for m in ms:
                full = np.zeros(len(self.query_ids))  # ir_measures' DEFAULT for the rest
                if len(rows):
                    full[rows] = res.values(self._native[m])
                out[m] = full
        return out

    def iter_calc(self, run):
        """Yield :class:`Metric` for every qrels query and measure (query by query)."""
        values = self._values(run)
        for i, q in enumerate(self.query_ids):
            for m in self.measures:
                yield Metric(q, m, float(values[m][i]))

    def calc_aggregate(self, run) -> dict:
        """``{measure: aggregate}``: the mean over the qrels queries (a sum for counts)."""
        return _aggregate(self._defs, self._values(run))

    def calc(self, run) -> CalcResults:
        values = self._values(run)
        per_query = [Metric(q, m, float(values[m][i]))
                     for i, q in enumerate(self.query_ids) for m in self.measures]
        return CalcResults(_aggregate(self._defs, values), per_query)


def _is_count(measure_def) -> bool:
    return measure_def.summary in (SUM, NUM_Q)


def _aggregate(defs, values) -> dict:
    out = {}
    for m, v in values.items():
        if _is_count(defs[m]):
            out[m] = float(v.sum())
        else:
            out[m] = float(v.mean()) if len(v) else float("nan")
    return out


def evaluator(measures, qrels) -> Evaluator:
    """An :class:`Evaluator` for these measures and qrels."""
    return Evaluator(measures, qrels)


def iter_calc(measures, qrels, run):
    """Yield :class:`Metric` (query_id, measure, value) per qrels query and measure.

    Examples
    --------
    >>> from irmetrics.compat import ir_measures
    >>> list(ir_measures.iter_calc([ir_measures.P@2], {"q": {"a": 1}}, {"q": {"a": 1.0}}))
    [Metric(query_id='q', measure=P@2, value=0.5)]
    """
    return Evaluator(measures, qrels).iter_calc(run)


def calc_aggregate(measures, qrels, run) -> dict:
    """``{measure: value}`` over the qrels queries, as ir_measures' ``calc_aggregate``.

    Examples
    --------
    >>> from irmetrics.compat import ir_measures
    >>> qrels = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    >>> run = {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d3": 0.1}}
    >>> ir_measures.calc_aggregate([ir_measures.nDCG@10, ir_measures.AP(rel=2)], qrels, run)
    {nDCG@10: 0.8154648767857288, AP(rel=2): 0.25}
    """
    return Evaluator(measures, qrels).calc_aggregate(run)


def calc(measures, qrels, run) -> CalcResults:
    """Aggregates and per-query :class:`Metric` list, as ir_measures' ``calc``."""
    return Evaluator(measures, qrels).calc(run)
