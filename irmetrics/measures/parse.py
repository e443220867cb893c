"""Measure names → requests, in both syntaxes, through the one registry.

* trec_eval syntax (spec §4.2): ``map``, ``P.5,10``, ``iprec_at_recall..10,.20``,
  ``ndcg.1=3,2=9``, nicknames (``official``, ``all_trec``, ``set``). The spec is split
  at the first ``.``; each measure uses the first parameter string given for its
  own name; output names are trec_eval's (``P_5``, ``ndcg_cut_10``).
* friendly syntax (ir_measures style): ``AP``, ``P@10``, ``nDCG@10``, ``P(rel=2)@5``,
  ``RR``, ``R@100``. The output name is the friendly spelling itself; ``rel=`` sets the
  relevance level of that measure alone.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .._validation import parameter_error
from ..exceptions import ParameterError, UnknownMeasureError
from .params import DoubleCutoffs, LongCutoffs, PairParams
from .registry import NICKNAMES, REGISTRY, MeasureDef

_FRIENDLY = re.compile(
    r"(?P<base>[A-Za-z][A-Za-z0-9_]*)(?:\((?P<args>[^()]*)\))?(?:@(?P<cut>[^@()]+))?\Z"
)

#: trec_eval's dcg, ideal_dcg and ndcg share one gain-parameter block (spec §8.1).
_SHARED_GAIN_BLOCK = ("dcg", "ideal_dcg", "ndcg")


@dataclass(frozen=True)
class Request:
    """One measure to compute, with parsed parameters and its output names."""

    measure: MeasureDef
    raw: str | None
    params: object
    output_names: tuple
    relevance_level: int | None = None
    friendly: bool = False

    @property
    def parameterised(self) -> bool:
        return self.raw is not None


def friendly_index() -> dict:
    index = {}
    for m in REGISTRY.values():
        if m.friendly:
            index[(m.friendly.lower(), m.friendly_cutoff)] = m
    return index


def known_names() -> list[str]:
    """Every spelling a user may type, for suggestions."""
    out = list(REGISTRY) + list(NICKNAMES)
    for m in REGISTRY.values():
        if m.friendly:
            out.append(m.friendly + ("@k" if m.friendly_cutoff else ""))
    return out


def _unknown(spec: str) -> UnknownMeasureError:
    base = re.split(r"[.@(]", spec, maxsplit=1)[0]
    close = difflib.get_close_matches(base, known_names(), n=5, cutoff=0.5)
    return UnknownMeasureError(spec, suggestions=close)


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
        if name in REGISTRY or name in NICKNAMES:
            if dot and raw == "":
                raise ParameterError(f"measure {spec!r} has an empty parameter string.")
            members = NICKNAMES.get(name, [name])
            if name in NICKNAMES and supported is not None:
                # A nickname means "what this tool has": trec_eval 9.0.8's all_trec has
                # no rbp, rbp_resid or unj (spec §12.3).
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
        raw = raw_by_name.get(name)
        params = m.params.parse(name, raw)
        requests.append(Request(m, raw, params, tuple(m.params.output_names(name, params, raw))))
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


def _parse_friendly(spec: str) -> Request:
    match = _FRIENDLY.match(spec)
    if not match:
        raise _unknown(spec)
    base, args, cut = match.group("base"), match.group("args"), match.group("cut")
    m = friendly_index().get((base.lower(), cut is not None))
    if m is None:
        raise _unknown(spec)
    if hasattr(m.params, "parse_friendly"):  # a parameter type that reads its own syntax
        params, level = m.params.parse_friendly(spec, args, cut)
        return Request(m, spec, params, (spec,), relevance_level=level, friendly=True)
    level = None
    pairs = []
    for item in filter(None, (a.strip() for a in (args or "").split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise ParameterError(f"arguments of {spec!r} must be name=value; got {item!r}.")
        if key.strip() == "rel":
            try:
                level = int(value)
            except ValueError:
                raise ParameterError(
                    f"`rel` in {spec!r} must be an integer; got {value!r}.") from None
        elif isinstance(m.params, PairParams):
            pairs.append(f"{key.strip()}={value.strip()}")
        else:
            raise ParameterError(f"{spec!r}: {m.friendly} takes no argument {key.strip()!r}.")
    if cut is not None:
        if isinstance(m.params, LongCutoffs) and not re.fullmatch(r"[0-9]+", cut):
            raise ParameterError(f"cutoff of {spec!r} must be a positive integer; got {cut!r}.")
        if isinstance(m.params, DoubleCutoffs):
            try:
                float(cut)
            except ValueError:
                raise ParameterError(f"cutoff of {spec!r} must be a number; got {cut!r}.") \
                    from None
        raw = cut
    else:
        raw = ",".join(pairs) if pairs else None
    params = m.params.parse(m.name, raw)
    return Request(m, raw, params, (spec,), relevance_level=level, friendly=True)
