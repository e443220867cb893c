"""Keyword parameters in ir_measures' spelling: ``name(key=value, ...)@k``.

A parameter type for measures that exist only under ir_measures' names (the diversity
and user-model families). The declaration lists the keywords it takes, with their
kind, default and range; the name parser hands the parenthesised text and the cutoff to
:meth:`NamedArgs.parse_friendly`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..exceptions import ParameterError


@dataclass(frozen=True)
class Arg:
    """One keyword: ``kind`` is ``float``, ``int`` or ``bool``; ``low``/``high`` bound
    numbers (inclusive)."""

    name: str
    kind: type = float
    default: object = None
    required: bool = False
    low: float | None = None
    high: float | None = None
    doc: str = ""
    example: object = None  # a value for :meth:`NamedArgs.example` when required


class Values:
    """Parsed parameters: one attribute per keyword (and ``cutoff``)."""

    def __init__(self, **values):
        self.__dict__.update(values)

    def __eq__(self, other):
        return isinstance(other, Values) and self.__dict__ == other.__dict__

    def __hash__(self):
        return hash(tuple(sorted(self.__dict__.items())))

    def __repr__(self):
        return "Values(" + ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items()) + ")"


#: ``rel=`` sets the measure's relevance level (the parser's, not a Values field).
REL = "rel"


@dataclass(frozen=True)
class NamedArgs:
    """Parameter type: an optional or required cutoff ``@k`` and keyword arguments.

    ``cutoff`` is ``"required"``, ``"none"`` (the measure takes none) or an integer
    default. ``rel`` says whether ``rel=`` (the relevance level) is accepted.
    """

    args: tuple = ()
    cutoff: object = "none"
    rel: bool = True
    fixed: tuple = ()  # (name, value) pairs every Values has but no spelling sets

    def parse(self, measure: str, raw: str | None) -> Values:
        required = [a.name for a in self.args if a.required]
        if raw is not None or self.cutoff == "required" or required:
            form = measure + (f"({', '.join(f'{n}=...' for n in required)})" if required else "")
            form += "@k" if self.cutoff == "required" else ""
            raise ParameterError(f"measure {measure!r} is spelled {form} (ir_measures syntax);"
                                 f" got {measure + ('.' + raw if raw else '')!r}.")
        return self._values({}, None)

    def parse_friendly(self, spec: str, args: str | None, cut: str | None):
        """``(Values, relevance level or None)`` of an ir_measures spelling."""
        known = {a.name: a for a in self.args}
        allowed = sorted(known) + ([REL] if self.rel else [])
        values: dict = {}
        level = None
        for item in filter(None, (a.strip() for a in (args or "").split(","))):
            key, eq, value = (s.strip() for s in item.partition("="))
            if not eq or key not in allowed:
                raise ParameterError(f"{spec!r}: arguments must be name=value with name one of"
                                     f" {', '.join(allowed)}; got {item!r}.")
            if key == REL:
                level = _convert(spec, Arg(REL, int), value)
            else:
                values[key] = _convert(spec, known[key], value)
        missing = [a.name for a in self.args if a.required and a.name not in values]
        if missing:
            raise ParameterError(f"{spec!r} needs {', '.join(f'{m}=' for m in missing)}"
                                 " (no default).")
        return self._values(values, self._cutoff(spec, cut)), level

    def _cutoff(self, spec: str, cut: str | None):
        if cut is None:
            if self.cutoff == "required":
                raise ParameterError(f"{spec!r} needs a cutoff @k.")
            return None if self.cutoff == "none" else self.cutoff
        if self.cutoff == "none":
            raise ParameterError(f"{spec!r}: this measure takes no cutoff.")
        if not re.fullmatch(r"[0-9]+", cut) or int(cut) < 1:
            raise ParameterError(f"cutoff of {spec!r} must be a positive integer; got {cut!r}.")
        return int(cut)

    def _values(self, given: dict, cutoff) -> Values:
        values = dict(self.fixed)
        values.update({a.name: given.get(a.name, a.default) for a in self.args})
        return Values(cutoff=cutoff, **values)

    def output_names(self, measure: str, parsed, raw: str | None) -> list[str]:
        return [measure]

    def example(self, measure: str) -> str:
        """A valid spelling: the required keywords with their example values, ``@10``
        if a cutoff is required.

        >>> NamedArgs((Arg("max_rel", int, required=True, example=3),), "required").example("M")
        'M(max_rel=3)@10'
        """
        required = ",".join(f"{a.name}={a.example}" for a in self.args if a.required)
        return (measure + (f"({required})" if required else "")
                + ("@10" if self.cutoff == "required" else ""))

    def describe(self) -> str:
        parts = []
        if self.cutoff == "required":
            parts.append("cutoff `@k` (required)")
        elif self.cutoff != "none":
            parts.append(f"cutoff `@k` (default {self.cutoff})")
        for a in self.args:
            bounds = ""
            if a.low is not None or a.high is not None:
                bounds = f" in [{_show(a.low, '-inf')}, {_show(a.high, 'inf')}]"
            default = "required" if a.required else f"default {a.default}"
            parts.append(f"`{a.name}`{bounds} ({default}{'; ' + a.doc if a.doc else ''})")
        if self.rel:
            parts.append("`rel` (default: the evaluation's relevance level)")
        parts.extend(f"{name} fixed at {value}" for name, value in self.fixed)
        return ", ".join(parts) + "; ir_measures spelling only"


def _show(bound, unbounded: str) -> str:
    return unbounded if bound is None else f"{bound:g}"


def _convert(spec: str, arg: Arg, value: str):
    if arg.kind is bool:
        if value not in ("True", "False"):
            raise ParameterError(f"`{arg.name}` in {spec!r} must be True or False;"
                                 f" got {value!r}.")
        return value == "True"
    try:
        number = arg.kind(value)
    except ValueError:
        what = "an integer" if arg.kind is int else "a number"
        raise ParameterError(f"`{arg.name}` in {spec!r} must be {what}; got {value!r}.") \
            from None
    if (arg.low is not None and number < arg.low) or (arg.high is not None and number > arg.high):
        raise ParameterError(f"`{arg.name}` in {spec!r} must be between"
                             f" {_show(arg.low, '-inf')} and {_show(arg.high, 'inf')};"
                             f" got {value!r}.")
    return number
