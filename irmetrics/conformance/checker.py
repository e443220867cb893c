"""``check``: run a third-party measure on the corpus and say which variant it implements."""

from __future__ import annotations

import inspect
import math
import re
import warnings
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import combinations
from typing import Any, Callable

import numpy as np

from ..checks import check_choice, check_float, parameter_error, parameter_type_error
from ..exceptions import ParameterError, brief_repr
from ..measures.parse import parse_measures
from .cases import INPUTS, Case, generate_cases, reference_values, variant_value
from .spec import FAMILIES, RAISES, SKIPPED, Family, reference_choices

__all__ = ["check", "corpus", "parse_measure", "Report", "Counterexample", "Corpus",
           "TOLERANCE", "LABELS"]

#: Largest absolute difference taken as equal (float32 implementations stay within it).
TOLERANCE = 1e-6
#: The value a callable gave that is not a number (a string, a list of two): never equal.
INVALID = "invalid"
#: The query id of a case under the "dicts" input (numeric: gdeval.pl reads no other).
QUERY_ID = "1"

#: Friendly and trec_eval spellings of each family's base name, lowercased.
_BASES = {"ndcg": "nDCG", "ndcg_cut": "nDCG", "dcg": "DCG", "ap": "AP", "map": "AP",
          "map_cut": "AP",
          "p": "P", "precision": "P", "r": "R", "recall": "R", "rr": "RR", "mrr": "RR",
          "recip_rank": "RR", "rprec": "Rprec", "r-prec": "Rprec", "bpref": "bpref",
          "success": "Success", "hitrate": "Success", "hit_rate": "Success",
          "err": "ERR", "err_cut": "ERR"}
_NAME = re.compile(r"(?P<base>[A-Za-z][\w-]*?)(?:[@._](?P<k>\d+))?\Z")


@dataclass(frozen=True)
class Counterexample:
    """A case where a callable and trec_eval's semantics give different values.

    Attributes
    ----------
    case : Case
        The query (``case.describe()`` shows it as the callable received it).
    value : float or str
        What the callable gave: a number, ``"skipped"`` (no value for the query),
        ``"raises"`` or ``"invalid"`` (see ``message``).
    expected : float or str
        trec_eval's value (irmetrics' engine), or ``"skipped"``.
    message : str
        The exception or what was wrong with the value, if any.
    """

    case: Case
    value: Any
    expected: Any
    message: str = ""

    def __str__(self) -> str:
        got = _show(self.value) + (f" ({self.message})" if self.message else "")
        return (f"case {self.case.index}: {self.case.describe()}\n"
                f"    callable: {got}; trec_eval: {_show(self.expected)}")


@dataclass(frozen=True)
class Corpus:
    """The cases of one measure and input kind, with the value under every variant.

    ``values[(degree, choice)]`` lists, per case, the value of the variant that differs
    from trec_eval in that degree alone; ``reference`` is irmetrics' engine. ``degrees``
    keeps only the choices some case tells apart from trec_eval and from the degree's
    earlier choices under this input (a choice no case of this input can show, such as
    duplicates under "arrays", is left out; so is one that gives the same value as an
    earlier choice on every case, such as "held" duplicates for RR, same as "counted").
    """

    family: Family
    k: int | None
    kind: str
    cases: tuple
    reference: tuple
    values: dict
    degrees: dict

    def value(self, choices: dict, case: Case):
        """The value of ``case`` under a full variant ``choices``."""
        return variant_value(self.family, self.k, self.kind, choices, case)


@dataclass(frozen=True)
class Report:
    """What :func:`check` found; ``str(report)`` is the short verdict.

    Attributes
    ----------
    measure, input : str
        What was checked.
    conforms : bool
        Equal to trec_eval's semantics on every case, within ``tolerance``.
    variant : dict
        Degree -> choice that explains the callable best (trec_eval's choice where it
        agrees); ``departures`` keeps the degrees where it differs.
    explained : bool
        The variant reproduces the callable on every case (else some difference is not a
        documented degree of freedom: see ``unexplained``).
    counterexample : Counterexample or None
        The smallest case that separates the callable from trec_eval.
    examples : dict
        Degree -> the smallest case showing that departure.
    failures : tuple of Counterexample
        Cases where the callable raised or gave a non-number that no variant explains.
    cases, matched, unexplained : int
        Cases run, cases equal to trec_eval, cases the variant does not reproduce.
    """

    measure: str
    input: str
    conforms: bool
    variant: dict
    departures: dict
    explained: bool
    counterexample: Counterexample | None
    examples: dict
    failures: tuple
    cases: int
    matched: int
    unexplained: int
    reference_variant: dict = field(repr=False, default_factory=dict)

    def __str__(self) -> str:
        head = f"{self.measure} (input={self.input!r}, {self.cases} cases): "
        if self.conforms:
            return head + "conforms to trec_eval's semantics\n"
        lines = [head + f"does NOT conform to trec_eval ({self.cases - self.matched} cases"
                        " differ)"]
        if self.departures:
            lines.append("  implements: " + ", ".join(
                f"{d} = {c} (trec_eval: {self.reference_variant[d]})"
                for d, c in self.departures.items()))
        if not self.explained:
            lines.append(f"  {self.unexplained} cases match no documented variant")
        if self.counterexample is not None:
            lines.append("  smallest counterexample, " + str(self.counterexample))
        for degree, example in self.examples.items():
            lines.append(f"  {degree}: " + str(example))
        if self.failures:
            lines.append(f"  {len(self.failures)} cases failed, first: {self.failures[0]}")
        return "\n".join(lines) + "\n"


def _show(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def parse_measure(measure: str) -> tuple[Family, int | None]:
    """The family and cutoff of a measure name (``"nDCG@10"``, ``"ndcg_cut.10"``, ``"AP"``).

    Raises
    ------
    UnknownMeasureError
        irmetrics does not know the name (with close matches).
    ParameterError
        irmetrics knows it, but it has no conformance spec, or its cutoff is missing or
        not allowed.

    Examples
    --------
    >>> family, k = parse_measure("ndcg_cut.10")
    >>> family.name, k
    ('nDCG', 10)
    """
    if not isinstance(measure, str):
        raise parameter_type_error("measure", "a measure name (str)", measure)
    found = _NAME.match(measure.strip())
    name = _BASES.get(found.group("base").lower()) if found else None
    if name is None:
        parse_measures([measure])  # an unknown name raises with close matches
        raise parameter_error("measure", "a measure with a conformance spec ("
                              + ", ".join(_spellings()) + ")", measure)
    family = FAMILIES[name]
    k = int(found.group("k")) if found and found.group("k") else None
    if k is not None and (k < 1 or family.cutoff == "none"):
        raise parameter_error("measure", f"{name} without a cutoff" if family.cutoff == "none"
                              else f"{name}@k with k >= 1", measure)
    if k is None and family.cutoff == "required":
        raise parameter_error("measure", f"{name}@k with a cutoff k (e.g. {name}@10)", measure)
    return family, k


def _spellings():
    return [f.name + {"required": "@k", "optional": "[@k]", "none": ""}[f.cutoff]
            for f in FAMILIES.values()]


@lru_cache(maxsize=64)
def _corpus(name: str, k: int | None, kind: str) -> Corpus:
    family = FAMILIES[name]
    cases = tuple(generate_cases(family, k, kind))
    reference = tuple(reference_values(family, k, kind, cases))
    ref = reference_choices(family, kind)
    values: dict = {}
    degrees: dict = {}
    for degree in family.degrees:
        kept = [ref[degree.name]]
        for choice in degree.choices:
            if choice == ref[degree.name] or (kind == "arrays" and choice == "doc_id"):
                continue  # arrays carry no doc ids
            vals = tuple(variant_value(family, k, kind, {**ref, degree.name: choice}, c)
                         for c in cases)
            same = [reference] + [values[(degree.name, c)] for c in kept[1:]]
            if all(any(not _equal(v, r, 0.0) for v, r in zip(vals, other)) for other in same):
                values[(degree.name, choice)] = vals
                kept.append(choice)
        degrees[degree.name] = tuple(kept)
    return Corpus(family, k, kind, cases, reference, values, degrees)


def corpus(measure: str, *, input: str = "ids") -> Corpus:
    """The conformance corpus of a measure for one input kind (cached).

    Parameters
    ----------
    measure : str
        A measure name with a conformance spec (``"nDCG@10"``, ``"AP"``, ``"RR@10"``).
    input : {"arrays", "ids", "dicts"}
        How the cases are written for the callable (see :func:`check`).

    Returns
    -------
    Corpus
        ``cases``, ``reference`` (irmetrics' engine) and ``values`` under every variant.

    Examples
    --------
    >>> c = corpus("P@5", input="dicts")
    >>> len(c.cases) >= 200, c.degrees["denominator"]
    (True, ('k', 'retrieved', 'min(R,k)'))
    """
    family, k = parse_measure(measure)
    check_choice("input", input, INPUTS)
    return _corpus(family.name, k, input)


def _equal(a, b, tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= tolerance
    return a == b


#: What ``fn`` is called with, by ``input=`` (for the signature check's message).
_ARGUMENTS = {"arrays": "(labels, scores)", "ids": "(ranking, labels)", "dicts": "(qrels, run)"}


def _check_signature(fn: Callable, kind: str) -> None:
    """Refuse a callable that cannot take the two arguments at all: otherwise every case
    would "raise" and the report would read as a convention (``empty_ranking = raises``)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins and C callables without a signature
        return
    try:
        signature.bind(None, None)
    except TypeError:
        raise ParameterError(
            f"`fn` must take two positional arguments {_ARGUMENTS[kind]} for"
            f" input={kind!r}; got {getattr(fn, '__qualname__', fn)!r} with signature"
            f" {signature}.") from None


def _call(fn: Callable, case: Case, kind: str):
    """Run ``fn`` on one case; (outcome, message)."""
    if kind == "arrays":
        labels = [g for _, g in case.labels]
        dtype = np.float64 if any(isinstance(g, float) for g in labels) else np.int64
        args: tuple = (np.asarray(labels, dtype=dtype),
                       np.asarray([s for _, s in case.ranking], dtype=np.float64))
    elif kind == "ids":
        args = ([d for d, _ in case.ranking], dict(case.labels))
    else:
        args = ({QUERY_ID: dict(case.labels)}, {QUERY_ID: dict(case.ranking)})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args)
    # SystemExit too: a callable that calls sys.exit ended the whole check silently
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a finding, not a crash
        return RAISES, f"{type(exc).__name__}: {brief_repr(str(exc), 120)}"
    return _outcome(out)


def _outcome(out):
    """A callable's return value as a number, ``SKIPPED`` or ``INVALID`` (with why)."""
    if out is None:
        return SKIPPED, ""
    if isinstance(out, dict):
        if QUERY_ID not in out:
            return (SKIPPED, "") if not out else (INVALID, f"no value for query {QUERY_ID!r}"
                                                           f" in {brief_repr(out)}")
        out = out[QUERY_ID]
        if isinstance(out, dict):
            if len(out) != 1:
                return INVALID, f"expected one measure per query; got {brief_repr(out)}"
            out = next(iter(out.values()))
    if hasattr(out, "detach") and hasattr(out, "cpu"):  # a tensor on a device
        out = out.detach().cpu()
    try:
        array = np.asarray(out)
    except Exception:  # noqa: BLE001 - any object that is not array-like
        return INVALID, f"not a number: {brief_repr(out)}"
    if array.size == 0:
        return SKIPPED, ""
    if array.size != 1 or array.dtype.kind not in "biuf":
        return INVALID, f"expected one number; got {brief_repr(out)}"
    return float(array.reshape(())), ""


#: ``labels=``: which cases a callable is given, by their labels.
LABELS = ("any", "int", "natural")


def check(fn: Callable, measure: str, *, input: str = "ids", labels: str = "any",
          tolerance: float = TOLERANCE) -> Report:
    """Check a third-party measure against trec_eval's semantics, degree by degree.

    ``fn`` is run on every case of the measure's corpus (about 250 small queries with
    ties, duplicates, graded, float and negative labels, unjudged documents and empty
    queries). Its values are compared with irmetrics' engine under trec_eval's semantics,
    and with every documented variant (docs/conformance.md), to say which convention it
    implements.

    Parameters
    ----------
    fn : callable
        One query in, one value out. By ``input``:

        * ``"arrays"``: ``fn(labels, scores)``, two aligned 1-D numpy arrays (the
          labels int64, or float64 where a case has float labels), every document judged;
          as scikit-learn's and torchmetrics' functional forms (wrap them to one row).
        * ``"ids"``: ``fn(ranking, labels)``, the doc ids in rank order (a document may
          repeat) and a dict doc id -> label; as RAG frameworks' retrieval metrics.
        * ``"dicts"``: ``fn(qrels, run)``, pytrec_eval's dicts with one query ``"1"`` (a
          number, as gdeval needs).

        It returns a number, a one-element array or tensor, a dict ``{"1": value}`` or
        ``{"1": {name: value}}``; None, an empty container or a dict without ``"1"``
        means the query was left out.
    measure : str
        ``"nDCG@10"``, ``"nDCG"``, ``"AP"``, ``"AP@10"``, ``"P@10"``, ``"R@10"``,
        ``"RR"``, ``"RR@10"``, ``"Rprec"``, ``"bpref"``, ``"Success@10"``, ``"ERR@10"``,
        ``"DCG"``
        (trec_eval spellings too: ``"ndcg_cut.10"``, ``"map"``, ``"recip_rank"``).
    input : {"ids", "arrays", "dicts"}, default "ids"
    labels : {"any", "int", "natural"}, default "any"
        The labels the callable accepts: any real number, integers only (leaves out the
        cases with float labels, which trec_eval's files cannot hold either), or integers
        >= 0 (also leaves out negative labels).
    tolerance : float, default 1e-6
        Largest absolute difference taken as equal.

    Returns
    -------
    Report
        ``conforms``, ``variant``, ``counterexample``; ``print(report)`` gives the verdict.

    Raises
    ------
    UnknownMeasureError
        irmetrics does not know the measure.
    ParameterError
        A measure without a conformance spec, a bad ``input`` or ``tolerance``.

    Notes
    -----
    trec_eval's semantics: ties by doc id descending (arrays: input order), a repeated
    document kept at its first rank, unjudged documents non-relevant, relevant means label
    >= 1, a query without judgments is not evaluated, one without a relevant document or
    with an empty ranking scores 0. A callable that raises or returns a non-number on a
    case is reported with the case, never with a traceback.

    The variant is found by ascent from trec_eval's choices: a degree, then two degrees
    at a time, take the choices that reproduce more cases, until nothing improves.

    Examples
    --------
    >>> def precision_at_3(ranking, labels):   # counts a repeated document twice
    ...     if not labels:
    ...         return None                     # no judgments: no value, as trec_eval
    ...     return sum(labels.get(d, 0) >= 1 for d in ranking[:3]) / 3
    >>> report = check(precision_at_3, "P@3", input="ids")
    >>> report.conforms, report.departures
    (False, {'duplicates': 'counted'})
    >>> report.examples["duplicates"].case.describe()
    "ranking=['b', 'b', 'a'] labels={'b': 1}"
    """
    family, k = parse_measure(measure)
    check_choice("input", input, INPUTS)
    check_choice("labels", labels, LABELS)
    tolerance = check_float("tolerance", tolerance, min=0.0)
    if not callable(fn):
        raise parameter_type_error("fn", "a callable", fn)
    _check_signature(fn, input)
    data = _restricted(_corpus(family.name, k, input), labels)
    calls = [_call(fn, case, input) for case in data.cases]
    got = [value for value, _ in calls]
    same = [_equal(g, r, tolerance) for g, r in zip(got, data.reference)]
    ref = reference_choices(family, input)
    variant, explained_mask = _identify(data, got, ref, tolerance)
    departures = {d: c for d, c in variant.items() if c != ref[d]}
    differ = [i for i, s in enumerate(same) if not s]
    smallest = min(differ, key=lambda i: (data.cases[i].size, i)) if differ else None
    return Report(
        measure=measure, input=input, conforms=not differ, variant=variant,
        departures=departures, explained=all(explained_mask),
        counterexample=None if smallest is None else _example(data, calls, smallest),
        examples=_examples(data, calls, departures, tolerance),
        failures=tuple(_example(data, calls, i) for i in differ
                       if got[i] in (RAISES, INVALID) and not explained_mask[i]),
        cases=len(data.cases), matched=sum(same), unexplained=explained_mask.count(False),
        reference_variant=ref)


def _restricted(data: Corpus, labels: str) -> Corpus:
    """The corpus without the cases whose labels the callable does not accept."""
    if labels == "any":
        return data

    def accepted(case):
        return all(isinstance(g, int) and (labels == "int" or g >= 0) for _, g in case.labels)

    keep = [i for i, c in enumerate(data.cases) if accepted(c)]
    return replace(data, cases=tuple(data.cases[i] for i in keep),
                   reference=tuple(data.reference[i] for i in keep),
                   values={key: tuple(v[i] for i in keep) for key, v in data.values.items()})


def _example(data: Corpus, calls, i: int) -> Counterexample:
    value, message = calls[i]
    return Counterexample(data.cases[i], value, data.reference[i], message)


def _identify(data: Corpus, got, ref: dict, tolerance: float):
    """Coordinate ascent over the degrees: the variant that reproduces most cases; when
    one degree at a time leaves cases unexplained, two degrees at a time (two choices can
    each lose cases alone and win together, as an exponential gain with an ideal in the
    given order)."""
    memo: dict = {}

    def matches(choices):
        key = tuple(sorted(choices.items()))
        if key not in memo:
            memo[key] = [_equal(g, data.value(choices, c), tolerance)
                         for g, c in zip(got, data.cases)]
        return memo[key]

    moves = [(d, c) for d, choices in data.degrees.items() for c in choices]
    current = dict(ref)
    best = sum(matches(current))
    for width in (1, 2, 1):  # singles until stuck, then pairs, then singles again
        improved = True
        while improved and best < len(got):
            improved = False
            for step in combinations(moves, width):
                if len({d for d, _ in step}) < width or all(current[d] == c for d, c in step):
                    continue
                trial = {**current, **dict(step)}
                score = sum(matches(trial))
                if score > best:
                    current, best, improved = trial, score, True
    return current, matches(current)


def _examples(data: Corpus, calls, departures: dict, tolerance: float) -> dict:
    """Per departing degree, the smallest case where that choice alone separates from
    trec_eval and the callable gives that choice's value."""
    out = {}
    for degree, choice in departures.items():
        values = data.values.get((degree, choice))
        if values is None:
            continue
        hits = [i for i, (v, r) in enumerate(zip(values, data.reference))
                if not _equal(v, r, 0.0) and _equal(calls[i][0], v, tolerance)]
        if hits:
            out[degree] = _example(data, calls, min(hits, key=lambda i: (data.cases[i].size, i)))
    return out
