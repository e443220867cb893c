"""The four trec_eval parameter types (docs/reference/trec_eval.md §4.2), "no parameters", and the keyword
options of friendly (ir_measures-style) spellings.

Each type parses a raw parameter string (the text after the first ``.`` of a
``-m`` spec) with trec_eval's C rules and names the values it produces. ``None``
as the raw string means "no parameters given": the defaults apply and names are bare.
"""

from __future__ import annotations

import math
import re

from ._cparse import c_atof, c_atol
from ..exceptions import ParameterError


class Record:
    """A frozen record whose fields are its class annotations, with defaults from the
    class attributes: ``__init__`` (positional or keyword), ``repr``, ``==`` (same class,
    same fields), ``hash`` and immutability, as ``@dataclass(frozen=True)`` gives, but
    without generating code. The dataclass decorator compiles six methods per class when
    the module is imported (0.3-0.5 ms a class), and every cold call of the drop-ins
    imports these classes (issue 34 item 6); records are few, so a generic ``__init__``
    costs nothing that shows.

    Examples
    --------
    >>> class Pair(Record):
    ...     first: int
    ...     second: int = 0
    >>> Pair(1), Pair(1) == Pair(first=1, second=0), Pair.fields
    (Pair(first=1, second=0), True, ('first', 'second'))
    """

    #: Field names, in declaration order (a base class's first).
    fields: tuple[str, ...] = ()
    _defaults: dict = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        own = [n for n in cls.__dict__.get("__annotations__", {}) if n not in cls.fields]
        cls.fields = cls.fields + tuple(own)
        cls._defaults = {**cls._defaults, **{n: cls.__dict__[n] for n in own
                                             if n in cls.__dict__}}

    def __init__(self, *args, **kwargs) -> None:
        if len(args) > len(self.fields):
            raise TypeError(f"{type(self).__name__}() takes {len(self.fields)} arguments;"
                            f" got {len(args)}")
        values = dict(zip(self.fields, args))
        for name, value in kwargs.items():
            if name not in self.fields or name in values:
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated"
                                f" argument {name!r}")
            values[name] = value
        for name in self.fields:
            if name not in values:
                if name not in self._defaults:
                    raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
                values[name] = self._defaults[name]
        self.__dict__.update(values)

    def _values(self) -> tuple:
        return tuple(self.__dict__[n] for n in self.fields)

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={self.__dict__[n]!r}" for n in self.fields)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name, value) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen"
                             f" {type(self).__name__}")

    def __delattr__(self, name) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen"
                             f" {type(self).__name__}")


class NoParams(Record):
    def parse(self, measure: str, raw: str | None):
        if raw is not None:
            raise ParameterError(f"measure '{measure}' takes no parameters; got {raw!r}.")
        return None

    def output_names(self, measure: str, parsed, raw: str | None) -> list[str]:
        return [measure]

    def describe(self) -> str:
        return "none"


class LongCutoffs(Record):
    """Integer cutoffs, ``atol`` each, sorted ascending; one value per cutoff."""

    default: tuple[int, ...]

    def parse(self, measure: str, raw: str | None) -> tuple[int, ...]:
        if raw is None:
            return self.default
        values = sorted(c_atol(item) for item in raw.split(","))
        if values[0] <= 0:
            raise ParameterError(
                f"cutoffs of '{measure}' must be positive integers; got {raw!r}."
            )
        if any(a == b for a, b in zip(values, values[1:])):
            raise ParameterError(f"cutoffs of '{measure}' must be distinct; got {raw!r}.")
        return tuple(values)

    def output_names(self, measure: str, parsed, raw: str | None) -> list[str]:
        return [f"{measure}_{k}" for k in parsed]

    def describe(self) -> str:
        return ("integer cutoffs k (`atol`, sorted ascending, positive, distinct), one value"
                f" per cutoff named `<measure>_<k>`; default `{_join(self.default)}`")


class DoubleCutoffs(Record):
    """Real-valued cutoffs, ``atof`` each, sorted ascending, printed ``%3.2f``."""

    default: tuple[float, ...]

    def parse(self, measure: str, raw: str | None) -> tuple[float, ...]:
        if raw is None:
            return self.default
        values = sorted(c_atof(item) for item in raw.split(","))
        if any(a == b for a, b in zip(values, values[1:])):
            raise ParameterError(f"cutoffs of '{measure}' must be distinct; got {raw!r}.")
        return tuple(values)

    def output_names(self, measure: str, parsed, raw: str | None) -> list[str]:
        return [f"{measure}_{v:3.2f}" for v in parsed]

    def describe(self) -> str:
        return ("real cutoffs (`atof`, sorted ascending, distinct), one value per cutoff"
                f" named `<measure>_<%3.2f>`; default `{_join(self.default)}`")


class DoubleParams(Record):
    """Real-valued parameters kept in the order given; a single output value.

    ``count``, when set, is the exact number of values the measure needs (utility's
    four coefficients); trec_eval fails at compute time, irmetrics when parsing.
    """

    default: tuple[float, ...]
    count: int | None = None

    def parse(self, measure: str, raw: str | None) -> tuple[float, ...]:
        if raw is None:
            return self.default
        values = tuple(c_atof(item) for item in raw.split(","))
        if self.count is not None and len(values) != self.count:
            raise ParameterError(
                f"`{measure}` must have exactly {self.count} comma-separated parameters;"
                f" got {raw!r}."
            )
        return values

    def output_names(self, measure: str, parsed, raw: str | None) -> list[str]:
        return [measure if raw is None else f"{measure}_{raw}"]

    def describe(self) -> str:
        count = f"exactly {self.count} " if self.count is not None else ""
        return (f"{count}real parameters (`atof`, kept in the order given); one value named"
                f" `<measure>` or `<measure>_<params as typed>`; default `{_join(self.default)}`")


class PairParams(Record):
    """``name=value`` pairs (gains by level, or ``p=`` for rbp); a single output value."""

    default: tuple[tuple[str, float], ...] = ()

    def parse(self, measure: str, raw: str | None) -> tuple[tuple[str, float], ...]:
        if raw is None:
            return self.default
        items = raw.split(",")
        if not all(item.count("=") == 1 for item in items):
            raise ParameterError(
                f"parameters of '{measure}' must be name=value pairs separated by commas;"
                f" got {raw!r}."
            )
        return tuple((n, c_atof(v)) for n, v in (item.split("=") for item in items))

    def output_names(self, measure: str, parsed, raw: str | None) -> list[str]:
        return [measure if raw is None else f"{measure}_{raw}"]

    def describe(self) -> str:
        return ("`name=value` pairs (`level=gain` for integer names; other names are"
                " measure options such as rbp's `p`); one value named `<measure>` or"
                " `<measure>_<params as typed>`; default: none (gain = label)")


def _join(values) -> str:
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


class FixedSuffix(Record):
    """A measure whose friendly form ends in one fixed ``@<suffix>`` (``MAP@R``, ``ML_P@1``).

    The trec_eval-style name takes no parameters; the friendly spelling must carry
    exactly this suffix.
    """

    suffix: str

    def parse(self, measure: str, raw: str | None):
        if raw is not None and raw != self.suffix:
            raise ParameterError(
                f"`{measure}` is defined only at @{self.suffix}; got @{raw!r}."
            )
        return None

    def output_names(self, measure: str, parsed, raw: str | None) -> list[str]:
        return [measure]

    def describe(self) -> str:
        return f"none; the friendly name carries the fixed suffix `@{self.suffix}`"


class KeywordParams(Record):
    """Parameters of a measure spelled only the ir_measures way, ``Name(key=value)@k``
    (the diversity and user-model families): the parsed parameter is the cutoff ``k``
    (or None when the declaration takes none); keywords are the declaration's
    :class:`Option` values, reaching the kernel as ``ctx.options``."""

    cutoff: bool = False

    def parse(self, measure: str, raw: str | None) -> int | None:
        if raw is None:
            return None
        if not self.cutoff:
            raise ParameterError(f"measure {measure!r} takes no cutoff; got {raw!r}.")
        if not re.fullmatch(r"[0-9]+", raw) or int(raw) < 1:
            raise ParameterError(
                f"cutoff of {measure!r} must be a positive integer; got {raw!r}.")
        return int(raw)

    def output_names(self, measure: str, parsed, raw: str | None) -> list[str]:
        return [measure]

    def describe(self) -> str:
        at = "a cutoff `@k` (required) and " if self.cutoff else ""
        return f"{at}the keyword options below; ir_measures spelling only"


class Option(Record):
    """A keyword option of a friendly spelling, ``Name(key=value)@k`` (ir_measures style).

    Declared per measure in ``measure(..., options={"key": Option(...)})``; the parser
    checks and converts the value from the declaration alone, so a new measure needs no
    parser change. ``rel`` and ``judged_only`` are the evaluation's relevance level and
    judged-only switch for that measure alone; other keys reach the kernel as
    ``ctx.options[key]``, or, with ``raw=True``, become the measure's trec_eval parameter
    string (``SetF(beta=0.5)`` is ``set_F.0.5``).

    Parameters
    ----------
    kind : {int, float, bool, str, dict}
    default : object, optional
        Value when the option is absent; ``None`` with ``required=False`` means "unset".
    choices : tuple, optional
        The only values accepted. Two declarations may share a friendly name with
        different choices (``nDCG(dcg='log2')`` and ``nDCG(dcg='exp-log2')``): the parser
        picks the declaration whose options accept the given values.
    required : bool
        The option must be given for this declaration to match.
    raw : bool
        The value becomes the trec_eval parameter string of the measure.
    doc : str
        One line for the docs and the unknown-name suggestions.
    low, high : float, optional
        Inclusive bounds of a number.
    example : object, optional
        A valid value of a required option, for :func:`~irmetrics.measures.parse.example_spelling`.
    suggested : bool
        Listed in the spellings suggested for a wrong name (False for an option that picks
        a secondary output, such as cwl_eval's ``quantity``).
    """

    kind: type
    default: object = None
    choices: tuple | None = None
    required: bool = False
    raw: bool = False
    doc: str = ""
    low: float | None = None
    high: float | None = None
    example: object = None
    suggested: bool = True

    def accepts(self, value) -> bool:
        """Whether ``value`` (already converted) is allowed by this declaration."""
        return self.choices is None or value in self.choices

    def convert(self, spec: str, key: str, value):
        """``value`` (a Python literal from the spelling) as ``kind``, or a ParameterError."""
        kind = self.kind
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        ok = isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool))
        if kind is dict and ok:
            ok = all(isinstance(k, int) and isinstance(v, (int, float)) and
                     not isinstance(v, bool) for k, v in value.items())
        if not ok:
            raise ParameterError(
                f"`{key}` in {spec!r} must be {_KIND_WORDS[kind]}; got {value!r}.")
        # 1e400 is a Python literal too; read as inf it would give NaN values silently.
        numbers = value.values() if kind is dict else [value] if kind is float else []
        if not all(math.isfinite(v) for v in numbers):
            raise ParameterError(f"`{key}` in {spec!r} must be finite; got {value!r}.")
        if (self.low is not None and value < self.low) or \
                (self.high is not None and value > self.high):
            raise ParameterError(f"`{key}` in {spec!r} must be between {_bound(self.low, '-inf')}"
                                 f" and {_bound(self.high, 'inf')}; got {value!r}.")
        return value

    def describe(self, key: str) -> str:
        shown = f"{key}=<{self.kind.__name__}>"
        if self.choices is not None:
            shown = f"{key}=" + "|".join(repr(c) for c in self.choices)
        return shown


def _bound(bound, unbounded: str) -> str:
    return unbounded if bound is None else f"{bound:g}"


_KIND_WORDS = {int: "an integer", float: "a number", bool: "True or False",
               str: "a string", dict: "a dict {int label: number gain}"}

#: The options every friendly name takes unless its declaration says otherwise.
BINARY_OPTIONS = {
    "rel": Option(int, doc="minimum label counted as relevant (this measure only)"),
    "judged_only": Option(bool, default=False,
                          doc="drop unjudged documents first (this measure only)"),
}


def with_binary(**more: Option) -> dict:
    """:data:`BINARY_OPTIONS` plus a measure's own options."""
    return {**BINARY_OPTIONS, **more}
