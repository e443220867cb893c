"""ir_measures' providers as views on irmetrics' engine.

ir_measures 0.4.3 computes each measure with a *provider* (pytrec_eval, gdeval, cwl_eval,
pyndeval, ...), the first of its default pipeline that supports it, or the one a user
names (``ir_measures.gdeval.calc_aggregate(...)``). Here every provider object is a view:
it knows which measures and parameters its tool covers (``supports``, the same rules as
ir_measures) and which irmetrics declaration reproduces that tool's definition, tie order
and printed precision for each measure name it reads (:meth:`Provider.plan`); the engine
computes. Like the real providers, a view computes any measure whose *name* it handles,
reading the parameters its tool reads (``gdeval.iter_calc([nDCG@20])`` is gdeval's
exponential nDCG); another name raises ``ValueError`` ("unsupported measure").

The roads (how the run is ranked before the kernels run):

=================  ==========================================================  ===========
road               tie order of equal scores                                    scores
=================  ==========================================================  ===========
pytrec_eval        doc id descending (trec_eval)                                float32
trec_eval          doc id descending                                            float64
doc_id_ascending   doc id ascending (msmarco's and judged's ``sorted``)         float64
input_order        the run's own order (cwl_eval's stable sort)                 float64
diversity          doc id ascending (pyndeval), intent-aware qrels              float64
=================  ==========================================================  ===========
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from ...containers import Qrels, Run
from ...evaluate import Evaluator as EngineEvaluator
from ...exceptions import ParameterError, UnknownMeasureError
from ...io import DiversityQrels
from ...measures.parse import NOT_NATIVE
from ..pytrec_eval import output_order
from ._inputs import as_diversity_table, as_table, reusable
from .measures import NOT_PROVIDED, Measure, SumAgg, use_pipeline
from .custom import CustomMeasure, RegisteredMeasure, RuntimeEvaluator
from .util import CalcResults, Metric, parse_measure


class CwlMetric(NamedTuple):
    """A per-query value with cwl_eval's C/W/L measurements (ir_measures' ``CwlMetric``):
    the value is the expected utility; the expected total utility, cost, total cost and
    number of items come from the same user model (irmetrics' ``quantity=`` option of the
    cwl_eval declarations). Queries the run does not rank get a plain ``Metric``.
    """

    query_id: str
    measure: Measure
    value: float
    expected_total_utility: float
    expected_cost: float
    expected_total_cost: float
    expected_items: float


# ---- coverage: ir_measures' parameter specs ----------------------------------------------

class Any:
    """Any value of a parameter (``REQUIRED``: any value but unset)."""

    def __init__(self, required: bool = False):
        self.required = required

    def validate(self, value) -> bool:
        return value is not NOT_PROVIDED if self.required else True

    def __repr__(self) -> str:
        return "REQUIRED" if self.required else "ANY"


class Choices:
    """One of the given values of a parameter (``NOT_PROVIDED``: unset)."""

    def __init__(self, *choices):
        self.choices = choices

    def validate(self, value) -> bool:
        return value in self.choices

    def __repr__(self) -> str:
        return repr(self.choices[0]) if len(self.choices) == 1 else repr(self.choices)


def _covers(name: str, **specs) -> Measure:
    """A SUPPORTED_MEASURES entry: measure ``name`` with a spec per parameter."""
    return Measure(name, **specs)


_UNSET = Choices(NOT_PROVIDED)


# ---- plans: how irmetrics computes a measure the way a provider does ---------------------

#: Engine options per road (the diversity road has its own engine).
_ENGINE = {"pytrec_eval": {"semantics": "pytrec_eval"}, "trec_eval": {},
           "doc_id_ascending": {}, "input_order": {"ties": "input_order"}}


class Plan(NamedTuple):
    """irmetrics' spelling of a measure, the road the run takes to it, the gain table
    the qrels are relabelled with first (ir_measures' ``nDCG(gains=...)``), the
    decimals the provider prints (gdeval: 5) and the spellings of the other fields of
    its per-query tuple (cwl_eval's :class:`CwlMetric`)."""

    native: str
    road: str
    gains: tuple = ()
    decimals: int | None = None
    extras: tuple = ()


def _spell(name: str, first: dict | None = None, **params) -> str:
    """The ir_measures spelling of ``name`` with the given parameters (those unset or at
    their default left out), which irmetrics reads as the same measure; ``first`` adds
    irmetrics options (``{"model": "cwl"}``: ``P(model='cwl')@5``)."""
    measure = Measure(name, **{k: v for k, v in params.items() if v is not NOT_PROVIDED})
    return measure._spelling(",".join(f"{k}={v!r}" for k, v in (first or {}).items()))


def _unsupported(provider, measure) -> ParameterError:
    return ParameterError(f"unsupported measure {measure}: the {provider.NAME} provider"
                          " does not compute it.")


class Provider:
    """Base of the provider views: ``NAME``, ``SUPPORTED_MEASURES`` (ir_measures' coverage)
    and :meth:`plan` (how irmetrics computes a measure as the tool does).

    Examples
    --------
    >>> from irmetrics.compat import ir_measures
    >>> qrels, run = {"1": {"a": 2, "b": 1}}, {"1": {"b": 2.0, "a": 1.0}}
    >>> ir_measures.gdeval.supports(ir_measures.ERR@2), ir_measures.gdeval.supports(ir_measures.P@2)
    (True, False)
    >>> ir_measures.gdeval.calc_aggregate([ir_measures.ERR@2], qrels, run)  # 5 decimals
    {ERR@2: 0.15039}
    >>> [m.value for m in ir_measures.msmarco.iter_calc([ir_measures.RR@2], qrels, run)]
    [1.0]
    """

    NAME = ""
    SUPPORTED_MEASURES: list = []
    #: The order the tool yields its values in (ir_measures passes them on in it):
    #: ``QUERIES`` "run" (the run's first appearance of each query), "sorted" (query
    #: ids ascending) or "numeric" (ids as numbers); ``MEASURE_MAJOR``: all queries of
    #: one measure, then the next.
    QUERIES = "sorted"
    MEASURE_MAJOR = False
    def relevant_from(self, measure):
        """The label a query needs for the tool to yield it (the others get ir_measures'
        defaults, last), or None: every query it ranks."""
        return None

    def supports(self, measure) -> bool:
        """Whether the tool covers ``measure`` with these parameters (ir_measures' rule);
        an invalid measure raises :class:`~irmetrics.exceptions.ParameterError`."""
        measure = parse_measure(measure)
        if isinstance(measure, CustomMeasure):  # defined at run time: the runtime provider's
            return False
        measure.validate_params()
        return any(s.NAME == measure.NAME
                   and all(spec.validate(measure[k]) for k, spec in s.params.items())
                   for s in self.SUPPORTED_MEASURES)

    def plan(self, measure: Measure) -> Plan:
        raise _unsupported(self, measure)

    def batches(self, measures: list) -> list[list]:
        """``measures`` in the groups the tool yields together for each query, in its
        order (one measure per group where it yields measure by measure)."""
        return [[m] for m in measures] if self.MEASURE_MAJOR else [list(measures)]

    def is_available(self) -> bool:
        """Always: irmetrics computes natively (no perl, no pytrec_eval needed)."""
        return True

    def initialize(self) -> None:
        """Nothing to load (ir_measures imports the tool here)."""

    def install_instructions(self) -> None:
        return None

    def evaluator(self, measures, qrels) -> Evaluator:
        """An :class:`Evaluator` of ``measures`` on ``qrels``, for many runs."""
        return Evaluator(measures, qrels, provider=self)

    def iter_calc(self, measures, qrels, run):
        """Yield :class:`~.util.Metric` per qrels query and measure."""
        return self.evaluator(measures, qrels).iter_calc(run)

    def calc_aggregate(self, measures, qrels, run) -> dict:
        """``{measure: value}``: the mean over the qrels queries (a sum for counts)."""
        return self.evaluator(measures, qrels).calc_aggregate(run)

    def calc(self, measures, qrels, run) -> CalcResults:
        """Aggregates and the per-query :class:`~.util.Metric` list."""
        return self.evaluator(measures, qrels).calc(run)

    @contextlib.contextmanager
    def calc_ctxt(self, measures, qrels):
        """Deprecated form of :meth:`evaluator` (ir_measures 0.2): yields a function of
        a run that yields metrics."""
        warnings.warn("calc_ctxt is deprecated; use .evaluator(measures, qrels).",
                      DeprecationWarning, stacklevel=3)
        evaluator = self.evaluator(measures, qrels)
        yield evaluator.iter_calc

    def run_inputs(self, measures) -> list[str]:
        """The run fields the measures read."""
        return ["query_id", "doc_id", "score"]

    def qrel_inputs(self, measures) -> list[str]:
        """The qrels fields the measures read."""
        return ["query_id", "doc_id", "relevance"]

    def __repr__(self) -> str:
        return f"<ir_measures provider {self.NAME!r} (irmetrics)>"


class PytrecEvalProvider(Provider):
    """pytrec_eval (trec_eval 9.0.8): irmetrics' ``semantics="pytrec_eval"``."""

    NAME = "pytrec_eval"
    QUERIES = "run"
    SUPPORTED_MEASURES = [
        _covers("P", cutoff=Any(), rel=Any(), judged_only=Any()),
        _covers("RR", cutoff=_UNSET, rel=Any(), judged_only=Any()),
        _covers("Rprec", rel=Any(), judged_only=Any()),
        _covers("AP", cutoff=Any(), rel=Any(), judged_only=Any()),
        _covers("nDCG", cutoff=Any(), dcg=Choices("log2"), gains=Any(), judged_only=Any()),
        _covers("R", cutoff=Any(), judged_only=Any()),
        _covers("Bpref", rel=Any()),
        _covers("NumRet", rel=Any()),
        _covers("NumQ"),
        _covers("NumRel", rel=Choices(1)),
        _covers("SetAP", rel=Any(), judged_only=Any()),
        _covers("SetF", rel=Any(), beta=Any(), judged_only=Any()),
        _covers("SetP", rel=Any(), relative=Any(), judged_only=Any()),
        _covers("SetR", rel=Any()),
        _covers("Success", rel=Any(), cutoff=Any(), judged_only=Any()),
        _covers("IPrec", recall=Any(), judged_only=Any()),
        _covers("infAP", rel=Any()),
    ]
    #: What each name reads (what ir_measures passes to pytrec_eval).
    _READS = {
        "P": ("cutoff", "rel", "judged_only"), "RR": ("rel", "judged_only"),
        "Rprec": ("rel", "judged_only"), "AP": ("cutoff", "rel", "judged_only"),
        "infAP": ("rel",), "R": ("cutoff", "rel", "judged_only"), "Bpref": ("rel",),
        "NumRet": ("rel",), "NumQ": (), "NumRel": ("rel",),
        "SetAP": ("rel", "judged_only"), "SetF": ("rel", "beta", "judged_only"),
        "SetP": ("rel", "relative", "judged_only"), "SetR": ("rel",),
        "Success": ("cutoff", "rel", "judged_only"),
    }

    def plan(self, measure):
        name = measure.NAME
        if name == "nDCG":  # dcg is not read: pytrec_eval has log2 only
            native = _spell("nDCG", cutoff=measure["cutoff"], judged_only=measure["judged_only"])
            gains = measure["gains"]
            if gains is NOT_PROVIDED:
                return Plan(native, "pytrec_eval")
            return Plan(native, "pytrec_eval", gains=_gain_pairs(gains))
        if name == "IPrec":  # ir_measures asks pytrec_eval for iprec_at_recall_{r:.2f}
            recall = float(f"{measure['recall']:.2f}")
            return Plan(_spell("IPrec", recall=recall, rel=measure["rel"],
                               judged_only=measure["judged_only"]), "pytrec_eval")
        if name not in self._READS:
            raise _unsupported(self, measure)
        return Plan(_spell(name, **{k: measure[k] for k in self._READS[name]}), "pytrec_eval")


    def batches(self, measures: list) -> list[list]:
        """ir_measures' invocations of pytrec_eval (one per relevance level, judged_only
        flag and gain table, set_F one per beta), in the order ir_measures makes them,
        each in pytrec_eval's output order (that of :mod:`irmetrics.compat.pytrec_eval`)."""
        invocations: dict = {}
        setf = 0
        for m in measures:
            name, rel, judged = m.NAME, _param(m, "rel"), _param(m, "judged_only")
            first = next(iter(invocations), None)
            if name == "nDCG" and m["gains"] is NOT_PROVIDED:  # joins the first invocation
                key = (1, 0, None, judged) if first is None else (*first[:3], judged)
            elif name == "nDCG":
                key = (1, 0, _gain_pairs(m["gains"]), judged)
            elif name == "NumQ" or (name == "NumRet" and rel is NOT_PROVIDED):
                key = (1, 0, None, False) if first is None else first
            elif name in ("infAP", "Bpref", "NumRet", "NumRel", "SetR"):
                key = (rel, 0, None, False)
            elif name == "SetF":
                key, setf = (rel, setf, None, judged), setf + 1
            else:
                key = (rel, 0, None, judged)
            invocations.setdefault(key, {})[_pytrec_eval_name(m)] = m
        return [[group[name] for name in _pytrec_eval_order(tuple(group)) if name in group]
                for group in invocations.values()]


def _param(m, key: str):
    """``m[key]``, or NOT_PROVIDED where ``m`` has no such parameter."""
    return m[key] if key in m.SUPPORTED_PARAMS else NOT_PROVIDED


def _pytrec_eval_name(m) -> str:
    """The key of ``m`` in pytrec_eval's output, as ir_measures asks for it."""
    name = m.NAME
    cutoff = _param(m, "cutoff")
    if name in ("P", "R", "Success"):
        return {"P": "P", "R": "recall", "Success": "success"}[name] + f"_{cutoff}"
    if name in ("AP", "nDCG"):
        base = "map" if name == "AP" else "ndcg"
        return base if cutoff is NOT_PROVIDED else f"{base}_cut_{cutoff}"
    if name == "NumRet":
        return "num_ret" if m["rel"] is NOT_PROVIDED else "num_rel_ret"
    if name == "SetP":
        return "set_relative_P" if m["relative"] else "set_P"
    if name == "IPrec":
        return f"iprec_at_recall_{m['recall']:.2f}"
    return {"RR": "recip_rank", "Rprec": "Rprec", "infAP": "infAP", "Bpref": "bpref",
            "NumQ": "num_q", "NumRel": "num_rel", "SetAP": "set_map", "SetF": "set_F",
            "SetR": "set_recall"}.get(name, name)


@functools.lru_cache(maxsize=256)
def _pytrec_eval_order(names: tuple) -> tuple:
    """pytrec_eval's output order of ``names`` (its measure table's order, reproduced by
    the pytrec_eval drop-in), read from the names (an evaluation would cost a small
    call's time again)."""
    try:
        out = output_order(names)
    except (ValueError, KeyError):  # a name pytrec_eval does not know: the given order
        return names
    return tuple(out) + tuple(n for n in names if n not in out)


def _gain_pairs(gains) -> tuple:
    """``nDCG(gains=...)``'s table as sorted ``(label, gain)`` integer pairs: pytrec_eval
    reads the relabelled qrels, whose labels must be integers."""
    if not isinstance(gains, dict) or not all(
            type(k) is int and type(v) is int for k, v in gains.items()):
        raise ParameterError("`gains` of nDCG must map integer labels to integer gains"
                             f" (pytrec_eval reads the relabelled qrels); got {gains!r}.")
    return tuple(sorted(gains.items()))


def _relabelled(qrels, pairs: tuple) -> Qrels:
    """The qrels with every label found in ``pairs`` replaced by its gain, as
    ir_measures relabels them before calling pytrec_eval."""
    table = Qrels.read(qrels) if isinstance(qrels, (str, os.PathLike)) else qrels
    keys, gains = zip(*pairs)
    relevance = pl.col("relevance").replace(list(keys), list(gains))
    return Qrels(table.df.with_columns(relevance))


class GdevalProvider(Provider):
    """gdeval.pl: ``ERR@k`` and exponential ``nDCG@k``, values printed with 5 decimals."""

    NAME = "gdeval"
    QUERIES = "numeric"  # gdeval.pl sorts its topics as numbers
    SUPPORTED_MEASURES = [
        _covers("nDCG", cutoff=Any(required=True), dcg=Choices("exp-log2"), gains=_UNSET,
                judged_only=Choices(False)),
        _covers("ERR", cutoff=Any(required=True)),
    ]

    def relevant_from(self, measure):
        return 1  # gdeval.pl skips the topics with no positive label

    def batches(self, measures: list) -> list[list]:
        """One gdeval.pl run per cutoff (in the order the cutoffs come), each giving
        nDCG then ERR for each topic."""
        runs: dict = {}
        for m in measures:
            runs.setdefault(m["cutoff"], {})[m.NAME] = m
        return [[run[name] for name in ("nDCG", "ERR") if name in run]
                for run in runs.values()]

    def plan(self, measure):
        if measure.NAME not in ("nDCG", "ERR"):
            raise _unsupported(self, measure)
        cutoff = measure["cutoff"]
        if cutoff is NOT_PROVIDED:  # gdeval.pl takes the cutoff on its command line
            raise ParameterError(f"{measure} needs a cutoff for gdeval ({measure.NAME}@k).")
        native = f"ERR@{cutoff}" if measure.NAME == "ERR" else f"nDCG(dcg='exp-log2')@{cutoff}"
        return Plan(native, "trec_eval", decimals=5)


class JudgedProvider(Provider):
    """The judged provider: the judged fraction of the top k, ties by doc id ascending."""

    NAME = "judged"
    QUERIES = "run"
    SUPPORTED_MEASURES = [_covers("Judged", cutoff=Any())]

    def plan(self, measure):
        if measure.NAME != "Judged":
            raise _unsupported(self, measure)
        return Plan(_spell("Judged", cutoff=measure["cutoff"]), "doc_id_ascending")


class MsMarcoProvider(Provider):
    """MS MARCO's ``msmarco_eval``: ``RR@k``, ties by doc id ascending."""

    NAME = "msmarco"
    MEASURE_MAJOR = True
    QUERIES = "run"
    SUPPORTED_MEASURES = [_covers("RR", cutoff=Any(), rel=Any(), judged_only=Choices(False))]

    def relevant_from(self, measure):
        return measure["rel"]  # msmarco_eval reads the qrels at this level only

    def plan(self, measure):
        if measure.NAME != "RR":
            raise _unsupported(self, measure)
        cutoff = measure["cutoff"]  # none: msmarco_eval's max_rank=sys.maxsize
        return Plan(_spell("RR", rel=measure["rel"],
                           cutoff=sys.maxsize if cutoff is NOT_PROVIDED else cutoff),
                    "doc_id_ascending")


class CwlEvalProvider(Provider):
    """cwl_eval's C/W/L measures over 1000 positions, ties in the run's order."""

    NAME = "cwl_eval"
    QUERIES = "run"
    SUPPORTED_MEASURES = [
        _covers("P", cutoff=Any(), rel=Any(), judged_only=Choices(False)),
        _covers("RR", cutoff=_UNSET, rel=Any(), judged_only=Choices(False)),
        _covers("AP", cutoff=_UNSET, rel=Any(), judged_only=Choices(False)),
        _covers("RBP", cutoff=_UNSET, rel=Any(required=True), p=Any()),
        _covers("BPM", cutoff=Any(), T=Any(), min_rel=Any(), max_rel=Any(required=True)),
        _covers("SDCG", cutoff=Any(required=True), dcg=Choices("log2"), min_rel=Any(),
                max_rel=Any(required=True)),
        _covers("NERR8", cutoff=Any(required=True), min_rel=Any(), max_rel=Any(required=True)),
        _covers("NERR9", cutoff=Any(required=True), min_rel=Any(), max_rel=Any(required=True)),
        _covers("NERR10", p=Any(), min_rel=Any(), max_rel=Any(required=True)),
        _covers("NERR11", T=Any(), min_rel=Any(), max_rel=Any(required=True)),
        _covers("INST", T=Any(), min_rel=Any(), max_rel=Any(required=True)),
        _covers("INSQ", T=Any(), min_rel=Any(), max_rel=Any(required=True)),
    ]
    _BINARY = {"P": ("cutoff", "rel"), "RR": ("rel",), "AP": ("rel",), "RBP": ("rel", "p")}
    _GRADED = {"BPM": ("cutoff", "T"), "SDCG": ("cutoff",), "NERR8": ("cutoff",),
               "NERR9": ("cutoff",), "NERR10": ("p",), "NERR11": ("T",), "INST": ("T",),
               "INSQ": ("T",)}

    def plan(self, measure):
        name = measure.NAME
        if name in self._BINARY:  # cwl's own P, RR, AP and RBP: model='cwl' natively
            if name == "RBP" and measure["rel"] is NOT_PROVIDED:
                raise ParameterError(f"{measure}: cwl_eval's RBP needs rel (RBP(rel=1)).")
            params, first = {k: measure[k] for k in self._BINARY[name]}, {"model": "cwl"}
        elif name in self._GRADED:
            params = {k: measure[k] for k in self._GRADED[name] + ("min_rel", "max_rel")}
            first = {}
        else:
            raise _unsupported(self, measure)
        extras = tuple(_spell(name, {**first, "quantity": q}, **params)
                       for q in ("ETU", "EC", "ETC", "EI"))  # CwlMetric's other fields
        return Plan(_spell(name, first, **params), "input_order", extras=extras)


class PyNdEvalProvider(Provider):
    """pyndeval (ndeval): the diversity measures on intent-aware qrels."""

    NAME = "pyndeval"
    QUERIES = "run"
    SUPPORTED_MEASURES = [
        _covers("ERR_IA", cutoff=Any(), rel=Any(), judged_only=Any()),
        _covers("nERR_IA", cutoff=Any(), rel=Any(), judged_only=Any()),
        _covers("alpha_DCG", cutoff=Any(), alpha=Any(), rel=Any(), judged_only=Any()),
        _covers("alpha_nDCG", cutoff=Any(), alpha=Any(), rel=Any(), judged_only=Any()),
        _covers("NRBP", alpha=Any(), beta=Any(), rel=Any()),
        _covers("nNRBP", alpha=Any(), beta=Any(), rel=Any()),
        _covers("AP_IA", rel=Any(), judged_only=Any()),
        _covers("P_IA", cutoff=Any(), rel=Any(), judged_only=Any()),
        _covers("StRecall", cutoff=Any(), rel=Any()),
    ]

    def plan(self, measure):
        if not any(s.NAME == measure.NAME for s in self.SUPPORTED_MEASURES):
            raise _unsupported(self, measure)
        return Plan(str(measure), "diversity")


class RanxProvider(Provider):
    """ranx's measures, binary ones on qrels binarised at ``rel`` (as ir_measures does).

    Ties: trec_eval's order (ranx's own is numba's quicksort order, unspecified)."""

    NAME = "ranx"
    MEASURE_MAJOR = True
    SUPPORTED_MEASURES = [
        _covers("P", cutoff=Any(), rel=Any(), judged_only=Choices(False)),
        _covers("SetP", rel=Any(), judged_only=Choices(False)),
        _covers("RR", cutoff=_UNSET, rel=Any(), judged_only=Choices(False)),
        _covers("Rprec", rel=Any(), judged_only=Choices(False)),
        _covers("AP", cutoff=Any(), rel=Any(), judged_only=Choices(False)),
        _covers("nDCG", cutoff=Any(), dcg=Choices("log2", "exp-log2"), gains=_UNSET,
                judged_only=Choices(False)),
        _covers("R", cutoff=Any(), judged_only=Choices(False)),
        _covers("SetR", rel=Any()),
        _covers("NumRet", rel=Any(required=True)),
        _covers("Success", cutoff=Any(required=True), rel=Any(), judged_only=Choices(False)),
    ]
    _READS = {"P": ("cutoff", "rel"), "SetP": ("rel",), "RR": ("cutoff", "rel"),
              "Rprec": ("rel",), "AP": ("cutoff", "rel"), "R": ("cutoff", "rel"),
              "SetR": ("rel",), "NumRet": ("rel",), "Success": ("cutoff", "rel")}

    def plan(self, measure):
        name = measure.NAME
        if name == "nDCG":  # ranx reads the raw labels (no rel) and dcg
            cutoff = measure["cutoff"]
            if measure["dcg"] != "exp-log2":
                return Plan(_spell("nDCG", cutoff=cutoff), "trec_eval")
            if cutoff is NOT_PROVIDED:
                return Plan("nDCG(dcg='exp-log2')", "trec_eval")
            return Plan(_spell("nDCG", {"model": "ranx"}, dcg="exp-log2", cutoff=cutoff),
                        "trec_eval")
        if name not in self._READS:
            raise _unsupported(self, measure)
        if name == "NumRet" and measure["rel"] is NOT_PROVIDED:
            raise ParameterError(f"{measure}: ranx counts relevant retrieved documents only"
                                 " (NumRet(rel=1)).")
        return Plan(_spell(name, **{k: measure[k] for k in self._READS[name]}), "trec_eval")


class TrectoolsProvider(Provider):
    """trectools: ``P@k`` computed (the run's order for ties); its other measures are
    refused (docs/ir_measures.md says why)."""

    NAME = "trectools"
    SUPPORTED_MEASURES = [
        _covers("P", cutoff=Any(), rel=Choices(1), judged_only=Choices(False)),
        _covers("RR", cutoff=_UNSET, rel=Choices(1), judged_only=Choices(False)),
        _covers("Rprec", rel=Choices(1), judged_only=Choices(False)),
        _covers("AP", cutoff=Any(), rel=Choices(1), judged_only=Choices(False)),
        _covers("nDCG", cutoff=Any(), dcg=Any(), gains=_UNSET, judged_only=Choices(False)),
        _covers("Bpref", rel=Choices(1)),
        _covers("RBP", cutoff=Any(), p=Any(), rel=Any()),
    ]

    def plan(self, measure):
        if measure.NAME == "P":  # relevant: label > 0; divided by k
            return Plan(_spell("P", cutoff=measure["cutoff"]), "input_order")
        if any(s.NAME == measure.NAME for s in self.SUPPORTED_MEASURES):
            raise ParameterError(
                f"{measure} through trectools is not computed by irmetrics: trectools"
                " reports NaN or leaves out queries depending on its pandas version (no"
                " relevant document, none retrieved), which ir_measures leaves out of its"
                " default pipeline as buggy; use ir_measures.pytrec_eval"
                " (docs/ir_measures.md).")
        raise _unsupported(self, measure)


class RuntimeProvider(Provider):
    """Measures defined at run time, in Python (ir_measures' runtime provider): those of
    ``define``/``define_byquery`` (computed by their ``impl`` on pandas frames, as
    ir_measures does) and irmetrics' own user measures (``registered_measure``,
    ``parse_measure("GradedP@10")``), computed by the engine with irmetrics' defaults.

    Examples
    --------
    >>> from irmetrics.compat import ir_measures
    >>> Count = ir_measures.define_byquery(lambda qrels, run: len(run), name="Count")
    >>> ir_measures.runtime.supports(Count @ 2), ir_measures.runtime.supports(ir_measures.P@2)
    (True, False)
    >>> out = ir_measures.calc_aggregate([Count @ 2, ir_measures.P @ 2], {"q": {"a": 1}},
    ...                            {"q": {"a": 1.0, "b": 0.5, "c": 0.2}})
    >>> out[Count @ 2], out[ir_measures.P @ 2]  # the dict's order: a set's, as ir_measures
    (2.0, 0.5)
    """

    NAME = "runtime"

    def supports(self, measure) -> bool:
        measure = parse_measure(measure)
        measure.validate_params()  # an invalid built-in measure raises, as in ir_measures
        return isinstance(measure, CustomMeasure)

    def plan(self, measure):
        if isinstance(measure, RegisteredMeasure):
            return Plan(measure.spelling(), "trec_eval")
        if isinstance(measure, CustomMeasure):
            return Plan("", "runtime")
        raise _unsupported(self, measure)

    def run_inputs(self, measures) -> list[str]:
        """The run columns the measures defined at run time read (others count none)."""
        return _columns(measures, "RUN_INPUTS")

    def qrel_inputs(self, measures) -> list[str]:
        """The qrels columns the measures defined at run time read."""
        return _columns(measures, "QREL_INPUTS")


def _columns(measures, attribute: str) -> list[str]:
    return list(dict.fromkeys(c for m in measures for c in getattr(m, attribute, ())))


class _Declined(Provider):
    """A provider whose one measure irmetrics declines to compute (the reason is
    :data:`irmetrics.measures.parse.NOT_NATIVE`'s)."""

    def plan(self, measure):
        if measure.NAME == self.SUPPORTED_MEASURES[0].NAME:
            raise UnknownMeasureError(str(measure), note=NOT_NATIVE[self.NAME])
        raise _unsupported(self, measure)


class CompatProvider(_Declined):
    """The compat provider (``Compat``), declined: see docs/ir_measures.md."""

    NAME = "compat"
    SUPPORTED_MEASURES = [_covers("Compat", p=Any(), normalize=Any())]


class AccuracyProvider(_Declined):
    """The accuracy provider (``Accuracy``), declined: see docs/ir_measures.md."""

    NAME = "accuracy"
    SUPPORTED_MEASURES = [_covers("Accuracy", cutoff=Any(), rel=Any())]


def _conditions(supported: Measure) -> str:
    """A SUPPORTED_MEASURES entry's conditions in words: ``rel required, no cutoff``."""
    words = []
    for key, spec in supported.params.items():
        if isinstance(spec, Any) and spec.required:
            words.append(f"{key} required")
        elif isinstance(spec, Choices) and spec.choices == (NOT_PROVIDED,):
            words.append(f"no {key}")
        elif isinstance(spec, Choices):
            words.append(f"{key}={' or '.join(map(repr, spec.choices))}")
    return ", ".join(words) or "any parameters"


class FallbackProvider(Provider):
    """Each measure to the first of ``providers`` that supports it (ir_measures'
    ``DefaultPipeline``); one evaluation for all of them."""

    NAME = "fallback"

    def __init__(self, providers):
        self.providers = list(providers)

    def supports(self, measure) -> bool:
        return any(p.supports(measure) for p in self.providers)

    def chosen(self, measure) -> Provider:
        """The provider that computes ``measure``."""
        for provider in self.providers:
            if provider.supports(measure):
                return provider
        named = [f"{p.NAME} ({_conditions(s)})" for p in self.providers
                 for s in p.SUPPORTED_MEASURES if s.NAME == measure.NAME]
        raise ParameterError(f"Unsupported measures {{{measure}}}: no provider of the"
                             " pipeline supports these parameters"
                             + (f"; {measure.NAME} is computed by {', '.join(named)}"
                                if named else "") + ".")

    def plan(self, measure):
        return self.chosen(measure).plan(measure)

    def run_inputs(self, measures) -> list[str]:
        """The run fields the measures read, asked of the provider of each (measures no
        provider supports read nothing)."""
        return self._inputs(measures, "run_inputs")

    def qrel_inputs(self, measures) -> list[str]:
        """The qrels fields the measures read."""
        return self._inputs(measures, "qrel_inputs")

    def _inputs(self, measures, which: str) -> list[str]:
        left, out = [parse_measure(m) for m in measures], {}
        for provider in self.providers:
            mine = [m for m in left if provider.supports(m)]
            if mine:
                out.update(dict.fromkeys(getattr(provider, which)(mine)))
            left = [m for m in left if m not in mine]
        return list(out)


# ---- evaluation --------------------------------------------------------------------------

class Evaluator:
    """Qrels and measures prepared once, for many runs (ir_measures' ``Evaluator``).

    ``provider`` computes every measure (default: the default pipeline, which picks one
    per measure). The measures are grouped by road; each group is one irmetrics
    evaluation with the qrels encoded once.

    Examples
    --------
    >>> from irmetrics.compat import ir_measures
    >>> ev = ir_measures.evaluator([ir_measures.P@1, ir_measures.RR@10],
    ...                            {"q1": {"d1": 1, "d2": 0}})
    >>> sorted(ev.calc_aggregate({"q1": {"d1": 0.1, "d2": 0.9}}).items(), key=str)
    [(P@1, 0.0), (RR@10, 0.5)]
    """

    def __init__(self, measures, qrels, *, provider: Provider | None = None):
        if isinstance(measures, (str, Measure)) or not hasattr(measures, "__iter__"):
            raise ParameterError(f"`measures` must be a list of measures; got {measures!r}.")
        self.measures = list(dict.fromkeys(parse_measure(m) for m in measures))
        provider = DefaultPipeline if provider is None else provider
        self._plans = {m: provider.plan(m) for m in self.measures}
        qrels = reusable(qrels)
        runtime = {m for m in self.measures if self._plans[m].road == "runtime"}
        pairs = _pairs(provider, self.measures)
        # ir_measures' aggregate dicts: its evaluator's measures, a set's order (one
        # provider's, or all of them when several providers compute).
        self._dict_order = (self.measures if not isinstance(provider, FallbackProvider)
                            else pairs[0][1] if len(pairs) == 1 else list(set(self.measures)))
        # define()'s measures: ir_measures' runtime provider, first in its pipeline.
        self._runtime = RuntimeEvaluator([m for m in pairs[0][1] if m in runtime], qrels) \
            if runtime else None
        # What the other providers yield, in ir_measures' order: (provider, measures,
        # the measures yielded together per query).
        self._yields = []
        for p, ms in pairs:
            ms = [m for m in ms if m not in runtime]
            if ms:
                self._yields.append((p, ms, p.batches(ms)))
        self._computed = [m for m in self.measures if m not in runtime]
        groups: dict = {}
        for m in self._computed:
            plan = self._plans[m]
            groups.setdefault((plan.road, plan.gains), []).append(m)
        standard = None
        self._groups, ids = [], []
        table: Qrels | DiversityQrels | dict
        for (road, gains), ms in groups.items():
            if road == "diversity":
                table = as_diversity_table(qrels)
                group_ids = table.df["query_id"].unique().to_list()
            elif road in _DICT_ROADS and not gains and isinstance(qrels, dict):
                table = qrels  # read by the engine's dict road itself: no table, no polars
            else:
                if standard is None:
                    standard = as_table(qrels, "relevance")
                table = _relabelled(standard, gains) if gains else standard
            group = _Group(road, ms, table, self._plans)
            if road != "diversity":
                group_ids = list(group.engine(extras=False).query_ids)
            self._groups.append(group)
            ids.extend(group_ids)
        # Qrels query ids in ascending code point order (= UTF-8 byte order), so each
        # evaluation's queries are found by one searchsorted. (np.unique's would be the
        # same, but its first call imports numpy.ma, 10-30 ms of a small first call.)
        ids_array = np.asarray(ids, dtype=str)
        self._query_ids = np.asarray(sorted(set(ids_array.tolist())), dtype=ids_array.dtype) \
            if ids else np.array([], dtype=str)
        self.query_ids = self._query_ids.tolist()
        self.qrel_qids = self._runtime.qrel_qids if self._runtime else set(self.query_ids)
        # The highest label of each query, where a tool yields only the queries with a
        # relevant document (msmarco, gdeval); the others come with the defaults.
        self._top_label = None
        if any(road != "diversity" for road, _ in groups) and any(
                p.relevant_from(m) is not None for p, ms, _ in self._yields for m in ms):
            if standard is None:
                standard = as_table(qrels, "relevance")
            table = standard if isinstance(standard, Qrels) else Qrels.read(standard)
            top = table.df.group_by("query_id").agg(pl.col("relevance").max())
            self._top_label = np.full(len(self._query_ids), -np.inf)
            rows = np.searchsorted(self._query_ids, top["query_id"].to_numpy().astype(str))
            self._top_label[rows] = top["relevance"].to_numpy()

    def _values(self, run, *, extras: bool) -> dict:
        """``{measure: (values, extras, ranked)}``: per-query float64 arrays aligned with
        ``query_ids`` (the measure's, and those of its tuple's other fields when
        ``extras``) and which queries the run ranks (the others have ``DEFAULT``)."""
        run = reusable(run)
        dict_road = type(run) is dict and all(g.road in _DICT_ROADS for g in self._groups)
        if dict_road and not all(run.values()):
            # An empty ranking is no ranking, as in a table of the run (and a run file):
            # the query takes the measure's DEFAULT like any query the run leaves out.
            run = {query: ranking for query, ranking in run.items() if ranking}
        if not dict_road and (len(self._groups) > 1
                              or any(g.road == "doc_id_ascending" for g in self._groups)):
            run = as_table(run, "score")
        out = {}
        for group in self._groups:
            res = group.evaluate(run, extras=extras)
            rows = np.searchsorted(self._query_ids, np.asarray(res.query_ids, dtype=str))
            ranked = np.zeros(len(self.query_ids), dtype=bool)
            ranked[rows] = True
            for m in group.ms:
                plan = self._plans[m]
                columns = []
                for native in (plan.native, *(plan.extras if extras else ())):
                    full = np.full(len(self.query_ids), float(m.DEFAULT))  # unranked queries
                    if len(rows):
                        full[rows] = res.values(native)
                    columns.append(full)
                if plan.decimals is not None and len(columns[0]):  # printed, then parsed
                    columns[0] = np.char.mod(f"%.{plan.decimals}f", columns[0]).astype(np.float64)
                out[m] = (columns[0], columns[1:], ranked)
        return out

    def _ordered(self, run):
        """``(run, rows)``: the run ready for :meth:`_values` and the rows of
        ``query_ids`` in the order the run first lists them (qrels queries only), where
        a provider yields queries in the run's order."""
        if not any(p.QUERIES == "run" for p, _, _ in self._yields):
            return run, None
        if isinstance(run, Mapping):
            ids = [q if type(q) is str else str(q) for q in run]
        else:
            run = as_table(run, "score")
            if not isinstance(run, Run):
                run = Run.read(run)
            ids = run.df["query_id"].unique(maintain_order=True).to_list()
        ids_array = np.asarray(ids, dtype=str) if ids else np.array([], dtype=str)
        rows = np.searchsorted(self._query_ids, ids_array)
        found = rows < len(self._query_ids)
        found[found] = self._query_ids[rows[found]] == ids_array[found]
        return run, rows[found]

    def _sequence(self, values: dict, run_rows):
        """``(rows, measures)`` in ir_measures' yield order: for each row, each measure.
        Per provider, its batches on the queries it ranks, then the defaults of the
        queries it does not, sorted by (measure, query id) as ir_measures' Evaluator."""
        orders = {"run": run_rows, "sorted": np.arange(len(self.query_ids))}
        for provider, ms, batches in self._yields:
            if provider.QUERIES == "numeric" and "numeric" not in orders:
                orders["numeric"] = _numeric_order(self.query_ids)
            rows = orders[provider.QUERIES]
            yielded = {m: np.zeros(len(self.query_ids), dtype=bool) for m in ms}
            for batch in batches:
                mine = rows[values[batch[0]][2][rows]]
                needed = provider.relevant_from(batch[0])
                if needed is not None and self._top_label is not None:
                    mine = mine[self._top_label[mine] >= needed]
                for m in batch:
                    yielded[m][mine] = True
                yield mine, batch
            for m in sorted(ms, key=str):  # the rest: ir_measures' Evaluator's defaults
                yield np.flatnonzero(~yielded[m]), [m]

    def _metrics(self, values, run_rows):
        """The per-query tuples in ir_measures' order: :class:`~.util.Metric`, or
        :class:`CwlMetric` where the measure has more fields and the run ranks the query."""
        ids = self.query_ids
        for rows, ms in self._sequence(values, run_rows):
            columns = [(m, *values[m]) for m in ms]
            for i in rows.tolist():
                q = ids[i]
                for m, value, extras, ranked in columns:
                    if extras and ranked[i]:
                        yield CwlMetric(q, m, float(value[i]), *(float(e[i]) for e in extras))
                    else:
                        yield Metric(q, m, float(value[i]))

    def iter_calc(self, run):
        """Yield :class:`~.util.Metric` for every qrels query and measure, in ir_measures'
        order: those of measures defined with ``define`` first (its runtime provider comes
        first in ir_measures' pipeline), then provider by provider (the pipeline's
        order), each in its tool's order (pytrec_eval: the run's query order, its measure
        table's order), the queries a provider did not rank last, by measure and id."""
        run = reusable(run)
        if self._runtime is not None:
            yield from self._runtime.iter_calc(run)
        if self._yields:
            run, run_rows = self._ordered(run)
            yield from self._metrics(self._values(run, extras=True), run_rows)

    def calc_aggregate(self, run) -> dict:
        """``{measure: aggregate}`` in ir_measures' order: the mean over the qrels queries
        (a sum for counts), summed one by one in the order :meth:`iter_calc` yields them,
        as ir_measures' aggregators do (so the last bit agrees too); for a measure of
        ``define``, the mean of the values its ``impl`` gave and of the defaults."""
        run = reusable(run)
        runtime = self._runtime.iter_calc(run) if self._runtime is not None else ()
        values, run_rows = {}, None
        if self._yields:
            run, run_rows = self._ordered(run)
            values = self._values(run, extras=False)
        return self._aggregate(values, run_rows, runtime)

    def calc(self, run) -> CalcResults:
        """Aggregates and the per-query :class:`~.util.Metric` list, both as
        :meth:`calc_aggregate` and :meth:`iter_calc` give them."""
        run = reusable(run)
        runtime = list(self._runtime.iter_calc(run)) if self._runtime is not None else []
        values, run_rows = {}, None
        if self._yields:
            run, run_rows = self._ordered(run)
            values = self._values(run, extras=True)
        return CalcResults(self._aggregate(values, run_rows, runtime),
                           runtime + list(self._metrics(values, run_rows)))

    def _aggregate(self, values, run_rows, runtime_metrics) -> dict:
        """The aggregates of the engine's ``values`` (each summed in yield order, as
        ir_measures' ``MeanAgg``/``SumAgg`` add them) and of the runtime metrics."""
        out = self._runtime.aggregate(runtime_metrics) if self._runtime is not None else {}
        if values:
            order: dict = {m: [] for m in values}
            for rows, ms in self._sequence(values, run_rows):
                for m in ms:
                    order[m].append(rows)
            for m, (v, _, _) in values.items():
                # cumsum adds one by one from the first value, as Python's += from 0.0
                ordered = v[np.concatenate(order[m])] if order[m] else v[:0]
                total = float(np.cumsum(ordered)[-1]) if len(ordered) else 0.0
                if isinstance(m.aggregator(), SumAgg):  # the counts
                    out[m] = total
                else:
                    out[m] = total / len(ordered) if len(ordered) else float("nan")
        return {m: out[m] for m in self._dict_order}


def _numeric_order(ids: list) -> np.ndarray:
    """The rows of ``ids`` with the ids sorted as numbers (those that are no number last,
    in id order)."""
    numbers = [float(q) if q.isdigit() else float("inf") for q in ids]
    return np.argsort(np.asarray(numbers, dtype=np.float64), kind="stable")


def _pairs(provider, measures: list) -> list:
    """``[(provider, measures)]``: which provider computes which measures, in the order
    ir_measures' pipeline hands them over: it makes a set of the measures and gives each
    provider in turn the set of those it supports (the rest go on as a set difference).
    Both hash by spelling, so the order is the real ir_measures' in the same process; it
    changes between processes with ``PYTHONHASHSEED``. Another provider: the measures
    as given."""
    if not isinstance(provider, FallbackProvider):
        return [(provider, list(measures))]
    left, pairs = set(measures), []
    for p in provider.providers:
        mine = set()
        for m in left:
            if p.supports(m):
                mine.add(m)
        if mine:
            left = left - mine
            pairs.append((p, list(mine)))
            if not left:
                break
    return pairs


class _Group:
    """Measures that take the same road on the same qrels: one irmetrics evaluation,
    with the extra fields of their tuples (cwl_eval's) only when asked for."""

    def __init__(self, road: str, ms: list, table, plans: dict):
        self.road, self.ms, self.table, self.plans = road, ms, table, plans
        self._engines: dict = {}

    def natives(self, extras: bool) -> list[str]:
        """irmetrics' spellings of the measures (and of their extra fields, first: the
        kernel computes all of a user model's quantities on the first one asked)."""
        return list(dict.fromkeys(n for m in self.ms for n in (
            *(self.plans[m].extras if extras else ()), self.plans[m].native)))

    def engine(self, *, extras: bool) -> EngineEvaluator:
        """The engine's evaluator of these measures, made on first use."""
        if extras not in self._engines:
            self._engines[extras] = EngineEvaluator(self.table, self.natives(extras),
                                                    **_ENGINE[self.road])
        return self._engines[extras]

    def evaluate(self, run, *, extras: bool):
        """irmetrics' Results of the group, the run ranked as its road says."""
        if self.road == "diversity":
            # judgment_formats (and the stats it loads) only where a diversity measure is asked
            from ...judgment_formats import evaluate_diversity

            return evaluate_diversity(self.table, as_table(run, "score"), self.natives(extras),
                                      complete=True)
        if self.road == "doc_id_ascending":
            run = _rerank_doc_id_ascending(run)
        if type(run) is dict and self.road in _DICT_ROADS:  # the engine's own dict road
            return self.engine(extras=extras).evaluate_unchecked(run)
        return self.engine(extras=extras).evaluate_unchecked(as_table(run, "score"))


#: Roads on which the engine reads a run dict itself (its dict road, as the pytrec_eval
#: drop-in's), without a table first.
_DICT_ROADS = ("pytrec_eval", "trec_eval")


def _rerank_doc_id_ascending(run) -> Run:
    """The run with scores replaced by ``-rank`` in the order score descending, doc id
    ascending (ir_measures' msmarco and judged providers), so that the engine's order
    (score descending) reproduces it exactly. Ids compare as code points = UTF-8 bytes."""
    run = as_table(run, "score")
    if not isinstance(run, Run):
        run = Run.read(run)
    ranked = (run.df.select("query_id", "score", "doc_id").with_row_index("_row")
              .sort(["query_id", "score", "doc_id"], descending=[False, True, False])
              .with_columns(_new=-pl.int_range(1, pl.len() + 1).over("query_id"))
              .sort("_row"))
    return run.with_scores(ranked["_new"])


#: The provider views by name (ir_measures' ``providers.registry``).
registry = {p.NAME: p for p in (
    AccuracyProvider(), CwlEvalProvider(), CompatProvider(), GdevalProvider(),
    PytrecEvalProvider(), TrectoolsProvider(), JudgedProvider(), MsMarcoProvider(),
    PyNdEvalProvider(), RanxProvider(), RuntimeProvider())}

#: ir_measures 0.4.3's default pipeline, in its order: the runtime provider (measures
#: defined in Python) first, trectools left out.
DefaultPipeline = FallbackProvider([registry[name] for name in (
    "runtime", "pytrec_eval", "cwl_eval", "compat", "pyndeval", "judged", "msmarco",
    "gdeval", "accuracy", "ranx")])
use_pipeline(DefaultPipeline)

__all__ = [
    "AccuracyProvider",
    "Any",
    "Choices",
    "CompatProvider",
    "CwlEvalProvider",
    "CwlMetric",
    "DefaultPipeline",
    "Evaluator",
    "FallbackProvider",
    "GdevalProvider",
    "JudgedProvider",
    "MsMarcoProvider",
    "Plan",
    "Provider",
    "PyNdEvalProvider",
    "PytrecEvalProvider",
    "RanxProvider",
    "RuntimeProvider",
    "TrectoolsProvider",
    "registry",
]
