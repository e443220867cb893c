"""Measure names → requests, in both syntaxes, through the one registry.

* trec_eval syntax (docs/reference/trec_eval.md §4.2): ``map``, ``P.5,10``, ``iprec_at_recall..10,.20``,
  ``ndcg.1=3,2=9``, nicknames (``official``, ``all_trec``, ``set``). The spec is split
  at the first ``.``; each measure uses the first parameter string given for its
  own name; output names are trec_eval's (``P_5``, ``ndcg_cut_10``).
* friendly syntax (ir_measures style): ``AP``, ``P@10``, ``nDCG@10``, ``P(rel=2)@5``,
  ``RR``, ``R@100``. The output name is the friendly spelling itself; ``rel=`` sets the
  relevance level of that measure alone.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable
from typing import Any

from ._cparse import LONG_MAX
from ..checks import check_choice, parameter_error
from ..exceptions import IrMetricsError, ParameterError, UnknownMeasureError
from .params import DoubleCutoffs, DoubleParams, KeywordParams, LongCutoffs, PairParams, Record
from .registry import NICKNAMES, REGISTRY, MeasureDef

#: Spellings that can only be friendly (an ``@`` or ``(``), never a printed trec_eval name.
_FRIENDLY_ONLY = re.compile(r".*[@(]")

_FRIENDLY = re.compile(
    r"(?P<base>[^\W\d]\w*)(?:\((?P<args>[^()]*)\))?(?:@(?P<cut>[^@()]+))?\Z"
)
#: Arguments with parentheses inside (``rel=(2)``, ``p=float('nan')``): read by
#: :func:`_friendly_args`, which explains why a value that is not a literal is refused.
_FRIENDLY_NESTED = re.compile(r"(?P<base>[^\W\d]\w*)\((?P<args>.*)\)(?:@(?P<cut>[^@()]+))?\Z")

#: trec_eval's dcg, ideal_dcg and ndcg share one gain-parameter block (docs/reference/trec_eval.md §8.1).
_SHARED_GAIN_BLOCK = ("dcg", "ideal_dcg", "ndcg")


class Request(Record):
    """One measure to compute, with parsed parameters and its output names."""

    measure: MeasureDef
    raw: str | None
    params: Any
    output_names: tuple
    relevance_level: int | None = None
    friendly: bool = False
    judged_only: bool | None = None
    options: tuple = ()

    @property
    def parameterised(self) -> bool:
        return self.raw is not None


def friendly_index() -> dict:
    """``{(friendly name lowercased, takes @k): [declarations in output order]}``; a
    declaration whose cutoff is optional (``extra["optional_cutoff"]``, user measures)
    is listed with and without ``@k``. Built once per state of the registry (user
    measures come and go): parsing 58 names no longer rebuilds it 58 times."""
    key = tuple(map(id, REGISTRY.values()))
    if _FRIENDLY_INDEX and _FRIENDLY_INDEX[0] == key:
        return _FRIENDLY_INDEX[1]
    index = _build_friendly_index()
    _FRIENDLY_INDEX[:] = [key, index]
    return index


#: ``[registry key, index]`` of the last friendly_index() built.
_FRIENDLY_INDEX: list = []


def _build_friendly_index() -> dict:
    index: dict = {}
    for m in sorted(REGISTRY.values(), key=lambda m: m.order):
        cuts = (True, False) if m.extra.get("optional_cutoff") else (m.friendly_cutoff,)
        for name in (m.friendly, *m.extra.get("friendly_aliases", ())) if m.friendly else ():
            for cut in cuts:
                index.setdefault((name.lower(), cut), []).append(m)
    return index


def friendly_spelling(m: MeasureDef) -> str:
    """How to write a friendly name with its options: ``ERR@k``,
    ``nDCG(dcg='exp-log2', judged_only=<bool>)@k``."""
    shown = {k: o for k, o in m.options.items() if o.suggested}
    opts = [o.describe(k) for k, o in shown.items() if k not in ("rel", "judged_only")]
    opts += [o.describe(k) for k, o in shown.items() if k in ("rel", "judged_only")]
    text = (m.friendly or "") + (f"({', '.join(opts)})" if opts else "")
    return text + ("@k" if m.friendly_cutoff else "")


def example_spelling(m: MeasureDef) -> str:
    """A valid friendly spelling of ``m``: its required options at their example values,
    ``@10`` if it takes a cutoff.

    >>> from irmetrics.measures import REGISTRY
    >>> example_spelling(REGISTRY["SDCG"])
    'SDCG(max_rel=3)@10'
    """
    required = ", ".join(f"{k}={o.example if o.example is not None else o.choices[0]!r}"
                         for k, o in m.options.items() if o.required)
    return ((m.friendly or "") + (f"({required})" if required else "")
            + ("@10" if m.friendly_cutoff else ""))


def known_names() -> dict[str, str]:
    """Every base spelling a user may type → the spelling shown with its parameters."""
    # trec_eval names (parameters after a '.'), except those spelled only the friendly way
    out = {name: name for name, m in REGISTRY.items() if not isinstance(m.params, KeywordParams)}
    out.update({name: name for name in NICKNAMES})
    for m in sorted(REGISTRY.values(), key=lambda m: m.order):
        if m.friendly:
            key = m.friendly + ("@k" if m.friendly_cutoff else "")
            shown = friendly_spelling(m)
            out[key] = shown if key not in out else out[key] + " or " + shown
    return out


#: ir_measures 0.4.3 names that irmetrics does not compute, with the short reason
#: (the whole one is in docs/ir_measures.md): refused by name rather than with
#: suggestions of unrelated measures.
NOT_NATIVE = {
    "compat": "ir_measures' Compat is not computed by irmetrics: its ideal ranking breaks"
              " ties by the qrels' row order, which the engine does not keep"
              " (docs/ir_measures.md)",
    "accuracy": "ir_measures' Accuracy is not computed by irmetrics: it averages over the"
                " queries that have a value only and breaks ties by input order"
                " (docs/ir_measures.md)",
}


def _unknown(spec: str) -> UnknownMeasureError:
    note = NOT_NATIVE.get(re.split(r"[@(]", spec, maxsplit=1)[0].strip().lower())
    if note is not None:
        return UnknownMeasureError(spec, note=note)
    base = re.split(r"[.(]", spec, maxsplit=1)[0]
    base = re.sub(r"@.*", "@k", base)
    names = known_names()
    by_lower: dict[str, str] = {}
    for name in names:
        by_lower.setdefault(name.lower(), name)
    import difflib  # only an unknown name needs it

    close = difflib.get_close_matches(base.lower(), list(by_lower), n=5, cutoff=0.5)
    return UnknownMeasureError(spec, suggestions=[names[by_lower[c]] for c in close])


def parse_measures(specs, *, supported=None) -> list[Request]:
    """Parse measure specs into requests ordered as trec_eval prints them.

    Parameters
    ----------
    specs : str or iterable of str
    supported : callable, optional
        ``supported(measure_def) -> bool``; unsupported measures raise
        :class:`UnknownMeasureError` (used for ``semantics="pytrec_eval"``).
    """
    if isinstance(specs, str):
        specs = [specs]
    elif not isinstance(specs, Iterable):
        raise parameter_error("measures", "a measure name or a list of measure names", specs)
    marked: list[str] = []
    raw_by_name: dict[str, str] = {}
    friendly: list[Request] = []
    for spec in specs:
        if not isinstance(spec, str) or not spec:
            raise ParameterError(f"`measures` must be non-empty strings; got {spec!r}.")
        name, dot, raw = spec.partition(".")
        if name not in REGISTRY and name not in NICKNAMES and not _FRIENDLY_ONLY.match(spec):
            printed = printed_name_spec(spec)
            if printed is not None:
                name, dot, raw = printed.partition(".")
        if name in REGISTRY and isinstance(REGISTRY[name].params, KeywordParams):
            friendly.append(_parse_friendly(spec))  # NRBP: its ir_measures spelling
            continue
        if name in REGISTRY or name in NICKNAMES:
            if dot and raw == "":
                raise ParameterError(f"measure {spec!r} has an empty parameter string.")
            members = NICKNAMES.get(name, [name])
            if name in NICKNAMES and supported is not None:
                # A nickname means "what this tool has": trec_eval 9.0.8's all_trec has
                # no rbp, rbp_resid or unj (docs/reference/trec_eval.md §12.3).
                members = [m for m in members if supported(REGISTRY[m])]
            for member in members:
                if member not in marked:
                    marked.append(member)
            if dot and name in REGISTRY:
                raw_by_name.setdefault(name, raw)
            continue
        friendly.append(_parse_friendly(spec))

    requests = []
    for name in marked:
        m = REGISTRY[name]
        given = raw_by_name.get(name)
        params = m.params.parse(name, given)
        requests.append(Request(m, given, params,
                                tuple(m.params.output_names(name, params, given))))
    shared = [r for r in requests if r.measure.name in _SHARED_GAIN_BLOCK]
    if len(shared) > 1 and any(r.parameterised for r in shared):
        raise ParameterError(
            "dcg, ideal_dcg and ndcg share one gain-parameter block in trec_eval and cannot be"
            " combined when one of them has parameters (trec_eval crashes); request them in"
            " separate evaluations."
        )
    requests.extend(friendly)
    if supported is not None:
        for r in requests:
            if not supported(r.measure):
                raise ParameterError(f"measure {r.measure.name!r} is not available under"
                                     " these semantics (pytrec_eval does not compute it).")
    requests.sort(key=lambda r: r.measure.order)
    return requests


def output_name(spelling, names, param: str = "measure") -> str:
    """The name among the output names ``names`` that ``spelling`` denotes: itself, or
    any spelling of the same measure (``P.10``, ``P_10`` and ``P@10``; ``map`` and
    ``AP``; ``ndcg_cut.10`` and ``nDCG@10``): the measure, its parameters, relevance
    level, ``judged_only`` and options all equal. One registry, every spelling.

    Raises
    ------
    ParameterError
        No name (or two) of ``names`` is that measure: "`measure` must be one of ...".

    Examples
    --------
    >>> output_name("P.10", ["map", "P_10"]), output_name("nDCG@10", ["ndcg_cut_10"])
    ('P_10', 'ndcg_cut_10')
    """
    names = list(names)
    found = find_output_name(spelling, names)
    return found if found is not None else check_choice(param, spelling, names)


def find_output_name(spelling, names) -> str | None:
    """:func:`output_name`, or None where it would raise."""
    if isinstance(spelling, str) and spelling in names:
        return spelling
    key = _spelling_key(spelling)
    if key is not None:
        found = [n for n in names if _spelling_key(n) == key]
        if len(found) == 1:
            return found[0]
    return None


def _spelling_key(spelling):
    """What a spelling of one output computes (None when it is not one such spelling)."""
    if not isinstance(spelling, str):
        return None
    try:
        requests = parse_measures([spelling])
    except IrMetricsError:
        return None
    if len(requests) != 1 or len(requests[0].output_names) != 1:
        return None
    r = requests[0]
    return (id(r.measure), repr(r.params), r.relevance_level, r.judged_only, repr(r.options))


def _friendly_args(spec: str, args: str | None) -> dict:
    """``key=value`` arguments of a friendly spelling as Python literals (never evaluated
    as code: ``ast.literal_eval`` of each value)."""
    if not args or not args.strip():
        return {}
    try:
        call: Any = ast.parse(f"f({args})", mode="eval").body
        if call.args:
            raise ValueError
        out = {}
        for kw in call.keywords:
            if kw.arg is None or kw.arg in out:
                raise ValueError
            out[kw.arg] = ast.literal_eval(kw.value)
        return out
    except (SyntaxError, ValueError):
        raise ParameterError(
            f"arguments of {spec!r} must be name=value pairs with literal values"
            f" (rel=2, p=0.8, dcg='exp-log2'); got {args!r}.") from None


def _match(m: MeasureDef, spec: str, args: dict):
    """``(converted args, None)`` if declaration ``m`` accepts ``args``, else ``(None, why)``."""
    converted = {}
    for key, value in args.items():
        option = m.options.get(key)
        if option is None:
            if isinstance(m.params, PairParams) and isinstance(value, (int, float)):
                converted[key] = value  # a trec_eval gain/option pair: RBP(p=0.8)
                continue
            takes = ", ".join(sorted(k for k, o in m.options.items() if o.suggested)) or "none"
            return None, _UnknownOption(
                f"{spec!r}: {m.friendly} takes no argument {key!r} (it takes {takes})")
        value = option.convert(spec, key, value)
        if not option.accepts(value):
            return None, f"{spec!r}: `{key}` must be one of {list(option.choices)}; got {value!r}"
        converted[key] = value
    missing = [k for k, o in m.options.items() if o.required and k not in converted]
    if missing:
        return None, _MissingOption(f"{spec!r}: {m.friendly} needs {', '.join(missing)}")
    return converted, None


class _MissingOption(str):
    """Why a declaration did not match: a required option the spelling does not give.
    Said only when no declaration has a more specific reason (``nDCG@x`` is about the
    cutoff, not about ``nDCG(dcg='exp-log2')`` needing ``dcg``)."""


class _UnknownOption(str):
    """Why a declaration did not match: it has no option of a name the spelling gives.
    The least specific reason: ``RBP(model='cwl')`` is about the declaration that has
    ``model`` and needs ``rel``, not about trec_eval's ``rbp`` lacking ``model``."""


def _parse_friendly(spec: str) -> Request:
    match = _FRIENDLY.match(spec) or _FRIENDLY_NESTED.match(spec)
    if not match:
        raise _unknown(spec)
    base, cut = match.group("base"), match.group("cut")
    candidates = friendly_index().get((base.lower(), cut is not None))
    if not candidates:
        uncut = friendly_index().get((base.lower(), False)) if cut is not None else None
        if uncut:
            raise ParameterError(f"{spec!r}: {uncut[0].friendly} takes no cutoff (@k), it is"
                                 f" spelled {friendly_spelling(uncut[0])!r}; got @{cut}.")
        raise _unknown(spec)
    args = _friendly_args(spec, match.group("args"))
    reasons = []
    for m in candidates:
        converted, why = _match(m, spec, args)
        if converted is not None:
            try:
                return _friendly_request(m, spec, converted, cut)
            except ParameterError as err:  # e.g. MAP@R is not AP@k: try the next one
                why = str(err).rstrip(".")
        reasons.append(why)
    reasons = ([r for r in reasons if not isinstance(r, (_MissingOption, _UnknownOption))]
               or [r for r in reasons if isinstance(r, _MissingOption)] or reasons)
    raise ParameterError(reasons[0] + "." if len(reasons) == 1 else
                         f"{spec!r} matches no declaration of {base}: " + "; ".join(reasons) + ".")


def _friendly_request(m: MeasureDef, spec: str, args: dict, cut: str | None) -> Request:
    level = args.pop("rel", None)
    judged_only = args.pop("judged_only", None)
    raw_parts, options = [], {}
    for key, option in m.options.items():
        if key in ("rel", "judged_only"):
            continue
        if option.raw:
            if key in args:
                raw_parts.append(_raw_text(m, key, args.pop(key)))
        elif key in args or option.default is not None:
            options[key] = args.pop(key, option.default)
    raw_parts.extend(f"{k}={v}" for k, v in args.items())  # PairParams pairs
    if cut is not None:
        if raw_parts:
            raise ParameterError(f"{spec!r}: give either @{cut} or parameters, not both.")
        # Unlike trec_eval's -m text, @k is not read by C's atol/atof: a cutoff past
        # LONG_MAX would saturate and nan/inf would rank nothing, both silently.
        if isinstance(m.params, LongCutoffs) and not re.fullmatch(r"[0-9]+", cut):
            raise ParameterError(f"cutoff of {spec!r} must be a positive integer; got {cut!r}.")
        if isinstance(m.params, LongCutoffs) and int(cut) > LONG_MAX:
            raise ParameterError(f"cutoff of {spec!r} must be at most {LONG_MAX}; got {cut!r}.")
        if isinstance(m.params, DoubleCutoffs):
            try:
                finite = math.isfinite(float(cut))
            except ValueError:
                finite = False
            if not finite:
                raise ParameterError(f"cutoff of {spec!r} must be a finite number; got {cut!r}.")
        raw: str | None = cut
    else:
        raw = ",".join(raw_parts) if raw_parts else None
    params = m.params.parse(m.name, raw)
    return Request(m, raw, params, (spec,), relevance_level=level, friendly=True,
                   judged_only=judged_only, options=_frozen(options))


def _raw_text(m: MeasureDef, key: str, value) -> str:
    """An option declared ``raw`` as the measure's trec_eval parameter text."""
    if isinstance(value, dict):  # gains={0: 0, 2: 3} is the pair list 0=0,2=3
        return ",".join(f"{level}={gain}" for level, gain in sorted(value.items()))
    if isinstance(m.params, PairParams):
        return f"{key}={value}"
    return repr(value)


def _frozen(options: dict) -> tuple:
    """Options as a hashable, order-independent tuple (dicts become sorted pairs)."""
    return tuple(sorted((k, tuple(sorted(v.items())) if isinstance(v, dict) else v)
                        for k, v in options.items()))


def printed_name_spec(spec: str) -> str | None:
    """irmetrics' (trec_eval's) printed name as a ``-m`` spec: ``P_10`` → ``P.10``,
    ``ndcg_cut_10`` → ``ndcg_cut.10``, ``iprec_at_recall_0.10`` → ``iprec_at_recall.0.10``,
    ``set_F_0.5`` → ``set_F.0.5``; None when ``spec`` is not such a name. The longest
    measure name that is followed by ``_`` and a parameter wins (``map_cut_5`` is
    ``map_cut``, not ``map``)."""
    best = None
    for name, m in REGISTRY.items():
        if (isinstance(m.params, (LongCutoffs, DoubleCutoffs, DoubleParams, PairParams))
                and spec.startswith(name + "_") and len(spec) > len(name) + 1
                and (best is None or len(name) > len(best))):
            best = name
    if best is None:
        return None
    rest = spec[len(best) + 1:]
    if not re.fullmatch(r"[0-9.,=+-]+", rest):
        return None
    return f"{best}.{rest}"
