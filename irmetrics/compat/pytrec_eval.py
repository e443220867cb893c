"""Drop-in replacement for pytrec_eval (pytrec-eval-terrier 0.5.11).

``RelevanceEvaluator(qrels, measures).evaluate(run)`` returns exactly the dict
pytrec_eval returns (same keys, same values, ``semantics="pytrec_eval"``), from
irmetrics' engine. It also accepts input pytrec_eval rejects but users commonly
have (int ids, numpy scalars, whole-number float labels) without changing the
result, and refuses non-whole labels with a clear error.

Measure names follow pytrec_eval's own rules, which differ from trec_eval's
command line: nicknames are expanded; ``meas.p1,p2`` and ``meas_p1,p2`` with
numeric parameters are merged per measure (``{"P.5", "P_10"}`` gives ``P_5`` and
``P_10``; a bare ``P`` next to ``P.10`` gives only ``P_10``); single-valued
measures keep their bare name even with parameters (``set_F.0.5`` → ``set_F``).
Specs pytrec_eval cannot express (gain pairs such as ``ndcg.1=3,2=9``, on which
pytrec_eval aborts the interpreter) are computed with trec_eval's meaning. Measures
defined with :func:`irmetrics.define_measure` are accepted by their spelling
(``"GradedP(max_label=3)@10"``), which is also their output name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import compress, repeat
from typing import Iterable, Mapping

import numpy as np

from ..checks import parameter_type_error
from ..containers.tables import to_id
from ..evaluate import Evaluator
from ..exceptions import InputFormatError, UnknownMeasureError
from ..measures.params import DoubleParams, PairParams
from ..measures.parse import parse_measures
from ..measures.registry import NICKNAMES, REGISTRY, is_user_spelling, pytrec_eval_supported

__all__ = [
    "RelevanceEvaluator", "parse_qrel", "parse_run", "supported_measures",
    "supported_nicknames", "compute_aggregated_measure", "output_order",
]

#: The pytrec-eval-terrier version this drop-in reproduces (ir_measures checks it is set).
__version__ = "0.5.11"

#: Measures pytrec-eval-terrier 0.5.11 supports, read from the registry.
supported_measures = frozenset(m.name for m in REGISTRY.values() if m.pytrec_eval)

#: pytrec_eval's nickname table: trec_eval's groups restricted to supported measures,
#: plus the preference and judgment-group groups it lists verbatim.
supported_nicknames = {
    name: set(members) if name in ("all_prefs", "prefs", "qrels_jg")
    else {m for m in members if m in supported_measures}
    for name, members in NICKNAMES.items()
}

#: Numeric parameters of a measure (``5``, ``0.5,10``), after its ``.`` or ``_``.
_NUMERIC_PARAMS = re.compile(r"[0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*")


def _numeric_spec(spec: str) -> tuple[str, str] | None:
    """``(measure, parameters)`` of ``measure.p1,p2`` or ``measure_p1,p2`` with numeric
    parameters and a supported measure (no two supported measures can split one spec
    so), else None. One compiled pattern: no pattern per measure to compile."""
    for i, char in enumerate(spec):
        if char in "._" and spec[:i] in supported_measures \
                and _NUMERIC_PARAMS.fullmatch(spec, i + 1):
            return spec[:i], spec[i + 1:]
    return None


def _combine_measures(measures: Iterable[str]) -> list[str]:
    """pytrec_eval's measure-name normalisation, reproduced (see module docstring)."""
    if isinstance(measures, (str, bytes)):
        # iterated, a string would be its letters ("unknown measure 'm'")
        raise parameter_type_error("measures", "a set or list of measure names, such as "
                                   "{'map'}", measures)
    expanded: list[str] = []
    for spec in measures:
        if not isinstance(spec, str):
            raise TypeError(f"measure names must be strings; got {spec!r}.")
        expanded.extend(sorted(supported_nicknames[spec]) if spec in supported_nicknames
                        else [spec])
    params: dict[str, set] = defaultdict(set)
    passthrough: list[str] = []
    for spec in expanded:
        if spec in supported_measures:
            params.setdefault(spec, set())
            continue
        numeric = _numeric_spec(spec)
        if numeric is not None:
            params[numeric[0]].update(numeric[1].split(","))
            continue
        name = spec.split(".", 1)[0]
        if (name in supported_measures and "." in spec) or is_user_spelling(spec):
            passthrough.append(spec)  # ndcg.1=3,2=9 (trec_eval's meaning); user measures
            continue
        raise UnknownMeasureError(spec)
    out = [f"{m}.{','.join(sorted(p))}" if p else m for m, p in params.items()]
    return out + [s for s in passthrough if s.split(".", 1)[0] not in params]


def _output_keys(requests) -> dict[str, str]:
    """``{output name: pytrec_eval's key}`` of every request, in output order (the
    engine's columns follow the requests): single-valued measures keep their bare name
    in pytrec_eval's output, even with parameters."""
    return {name: req.measure.name if isinstance(req.measure.params, (DoubleParams, PairParams))
            else name for req in requests for name in req.output_names}


def output_order(measures: Iterable[str]) -> tuple[str, ...]:
    """The keys of each query's dict that ``RelevanceEvaluator(qrels,
    measures).evaluate(run)`` returns, in their order, read from the measure names alone
    (no evaluation): what ir_measures' pytrec_eval provider needs to order its results.

    Examples
    --------
    >>> output_order({"P.5", "map", "set_F.0.5", "recip_rank"})
    ('map', 'recip_rank', 'P_5', 'set_F')
    """
    requests = parse_measures(_combine_measures(measures), supported=pytrec_eval_supported)
    return tuple(dict.fromkeys(_output_keys(requests).values()))


def _flag(name, value) -> bool:
    """pytrec_eval's C flags: a bool, or any int (non-zero is True); nothing else."""
    if not isinstance(value, (int, np.integer, np.bool_)):
        raise parameter_type_error(name, "an integer (True and False count as 1 and 0)", value)
    return bool(value)


def _relevance_level(value) -> int:
    """pytrec_eval's C ``relevance_level``: an int (a bool counts as one) of at least 1.

    pytrec_eval raises TypeError for 0 and for anything but an int; below 0 it runs with
    undefined behaviour (crashes, or every measure 0), so that is refused too."""
    if not isinstance(value, (int, np.integer, np.bool_)) or value < 1:
        raise parameter_type_error("relevance_level", "a positive integer (pytrec_eval "
                                   "refuses 0 and is undefined below)", value)
    return int(value)


def _judged_queries(query_relevance) -> dict:
    """``query_relevance`` without its queries of no judgments (pytrec_eval drops them),
    its containers checked first so that a bad one is named, not tripped over."""
    if not isinstance(query_relevance, Mapping):
        raise parameter_type_error("query_relevance",
                                   "a mapping {query_id: {doc_id: relevance}}",
                                   type(query_relevance).__name__)
    for qid, docs in query_relevance.items():
        if type(docs) is not dict and not isinstance(docs, Mapping):
            raise parameter_type_error(f"query_relevance[{qid!r}]",
                                       "a mapping {doc_id: relevance}", type(docs).__name__)
    return {q: docs for q, docs in query_relevance.items() if len(docs)}


def _false(value) -> bool:
    """``not value``, False where truth is ambiguous (pandas frames, numpy arrays)."""
    try:
        return not value
    except (ValueError, TypeError):
        return False


class RelevanceEvaluator:
    """pytrec_eval's evaluator on irmetrics' engine.

    Parameters
    ----------
    query_relevance : mapping
        ``{query_id: {doc_id: label}}``. Queries with no judgments are dropped, as in
        pytrec_eval.
    measures : iterable of str
        Measure names or nicknames in pytrec_eval's syntax (``"map"``, ``"P.5,10"``,
        ``"ndcg_cut_10"``, ``"official"``).
    relevance_level : int, default 1
    judged_docs_only_flag : bool, default False

    Examples
    --------
    >>> from irmetrics.compat.pytrec_eval import RelevanceEvaluator
    >>> ev = RelevanceEvaluator({"q1": {"d1": 1, "d2": 0}}, {"map", "P.1"})
    >>> ev.evaluate({"q1": {"d1": 0.2, "d2": 0.7}})
    {'q1': {'map': 0.5, 'P_1': 0.0}}
    """

    def __init__(self, query_relevance: Mapping, measures: Iterable[str],
                 relevance_level: int = 1, judged_docs_only_flag: bool = False) -> None:
        # Queries without judgments are dropped, as pytrec_eval does.
        qrels = _judged_queries(query_relevance)
        self._measures = _combine_measures(measures)
        self._evaluator = Evaluator(
            qrels, self._measures, relevance_level=_relevance_level(relevance_level),
            judged_only=_flag("judged_docs_only_flag", judged_docs_only_flag),
            semantics="pytrec_eval",
        )
        self._rename = _output_keys(self._evaluator.requests)

    def evaluate(self, scores: Mapping) -> dict:
        """Evaluate one run ``{query_id: {doc_id: score}}`` → ``{query_id: {name: value}}``.

        The queries come in the run's own order, those without judgments left out; each
        query's values in pytrec_eval's measure order. An empty run (``{}``, or anything
        false such as None) gives ``{}``, as in pytrec_eval; any other non-mapping (a
        pandas DataFrame, an array) raises :class:`~irmetrics.exceptions.ParameterTypeError`.
        """
        if not isinstance(scores, Mapping):
            if _false(scores):
                return {}
            raise parameter_type_error(
                "scores", "a mapping {query_id: {doc_id: score}} (a table of query_id, doc_id, "
                "score columns: irmetrics.evaluate or irmetrics.compat.ir_measures)",
                type(scores).__name__)
        if not scores:
            return {}
        # Unchecked: silent about skipped queries, and {} for none, as pytrec_eval is.
        # Queries present with an empty ranking are evaluated (n = 0).
        results = self._evaluator.evaluate_unchecked(
            scores if type(scores) is dict else dict(scores), infinite_scores=True)
        present = list(scores)
        if not set(map(type, present)) <= {str}:
            present = [q if type(q) is str else to_id(q, "query id") for q in present]
        names = [self._rename.get(name, name) for name in results.names]
        columns = [results.values(name) for name in results.names]
        # relstring is a string per query; pytrec_eval returns 0.0 for it
        table = np.column_stack([np.zeros(len(c)) if c.dtype == object else c for c in columns]
                                or [np.zeros((len(results.query_ids), 0))])
        # The evaluated queries (in id order) in the run's order, those without
        # judgments left out; the dicts built in one pass, in C.
        row_of = dict(zip(results.query_ids.tolist(), range(len(table))))
        row = np.fromiter(map(row_of.get, present, repeat(-1)), dtype=np.int64,
                          count=len(present))
        kept = row >= 0
        return dict(zip(compress(present, kept.tolist()),
                        map(dict, map(zip, repeat(names), table[row[kept]].tolist()))))


def _parse_lines(lines: Iterable[str], *, layout: str, exact: bool, value_at: int, convert,
                 value: str, kind: str) -> dict:
    """The shared loop of :func:`parse_qrel` and :func:`parse_run`.

    ``layout`` names the fields; a line needs exactly that many (``exact``) or at least
    that many. The value at ``value_at`` is stored as ``convert(value)``, a ValueError
    reporting ``value must be kind``.
    """
    n = len(layout.split())
    out: dict = defaultdict(dict)
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if (len(fields) != n) if exact else (len(fields) < n):
            raise InputFormatError(f"line {number}: expected {n} fields ({layout}), "
                                   f"found {len(fields)}")
        qid, did, raw = fields[0], fields[2], fields[value_at]
        if did in out[qid]:
            raise InputFormatError(f"line {number}: duplicate (query_id {qid!r}, doc_id {did!r})")
        try:
            out[qid][did] = convert(raw)
        except ValueError:
            raise InputFormatError(f"line {number}: {value} must be {kind}; got {raw!r}")\
                from None
    return out


def parse_qrel(lines: Iterable[str]) -> dict:
    """Parse qrels lines ``query_id iteration doc_id label`` into pytrec_eval's dict.

    Parameters
    ----------
    lines : iterable of str
        Exactly four whitespace-separated fields each (an open text file works).

    Returns
    -------
    collections.defaultdict
        ``{query_id: {doc_id: label}}``, labels as int, as pytrec_eval's ``parse_qrel``.

    Raises
    ------
    InputFormatError
        A line with another field count, a label that is not an integer, or a repeated
        (query_id, doc_id) pair, naming the 1-based line.

    Examples
    --------
    >>> parse_qrel(["q1 0 d1 1", "q1 0 d2 0", "q2 0 d3 2"])
    defaultdict(<class 'dict'>, {'q1': {'d1': 1, 'd2': 0}, 'q2': {'d3': 2}})
    >>> parse_qrel(["q1 0 d1 yes"])
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.InputFormatError: <input>: line 1: relevance must be an integer; got 'yes'
    """
    return _parse_lines(lines, layout="query_id iteration doc_id relevance", exact=True,
                        value_at=3, convert=int, value="relevance", kind="an integer")


def parse_run(lines: Iterable[str]) -> dict:
    """Parse run lines ``query_id Q0 doc_id rank score run_id`` into pytrec_eval's dict.

    Parameters
    ----------
    lines : iterable of str
        At least six whitespace-separated fields each (an open text file works); the
        rank and the fields after the score are not read.

    Returns
    -------
    collections.defaultdict
        ``{query_id: {doc_id: score}}``, scores as float, as pytrec_eval's ``parse_run``.

    Raises
    ------
    InputFormatError
        A line of fewer than six fields, a score that is not a number, or a repeated
        (query_id, doc_id) pair, naming the 1-based line.

    Examples
    --------
    >>> dict(parse_run(["q1 Q0 d1 1 2.5 bm25", "q1 Q0 d2 2 1e0 bm25"]))
    {'q1': {'d1': 2.5, 'd2': 1.0}}
    >>> parse_run(["q1 Q0 d1 1 2.5"])
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.InputFormatError: <input>: line 1: expected 6 fields (query_id iteration doc_id rank score run_id), found 5
    """
    return _parse_lines(lines, layout="query_id iteration doc_id rank score run_id", exact=False,
                        value_at=4, convert=float, value="score", kind="a number")


def compute_aggregated_measure(measure: str, values) -> float:
    r"""Aggregate per-query values as pytrec_eval does.

    For the ``n`` per-query values :math:`v_q` of ``measure``:

    .. math::

        \text{num\_*}: \sum_q v_q \qquad
        \text{gm\_*}: \exp\Big(\frac{1}{n} \sum_q v_q\Big) \qquad
        \text{otherwise}: \frac{1}{n} \sum_q v_q

    The per-query values of a ``gm_*`` measure are logs (trec_eval's
    :math:`\log \max(v, 10^{-5})`), so its aggregate is a geometric mean.

    Parameters
    ----------
    measure : str
        An output name (``"map"``, ``"num_ret"``, ``"gm_map"``); only its prefix is read.
    values : iterable of float
        The per-query values.

    Returns
    -------
    float
        NaN for no values (``num_*``: 0.0).

    Examples
    --------
    >>> import math
    >>> compute_aggregated_measure("map", [0.5, 1.0])
    0.75
    >>> compute_aggregated_measure("num_ret", [10, 5])
    15.0
    >>> compute_aggregated_measure("gm_map", [math.log(0.25), math.log(1.0)])
    0.5
    """
    values = np.asarray(list(values), dtype=np.float64)
    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))
