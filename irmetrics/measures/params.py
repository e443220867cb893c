"""The four trec_eval parameter types (spec §4.2) plus "no parameters".

Each type parses a raw parameter string (the text after the first ``.`` of a
``-m`` spec) with trec_eval's C rules and names the values it produces. ``None``
as the raw string means "no parameters given": the defaults apply and names are bare.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._cparse import c_atof, c_atol
from ..exceptions import ParameterError


@dataclass(frozen=True)
class NoParams:
    def parse(self, measure: str, raw: str | None):
        if raw is not None:
            raise ParameterError(f"measure '{measure}' takes no parameters; got {raw!r}.")
        return None

    def output_names(self, measure: str, parsed, raw: str | None) -> list[str]:
        return [measure]


@dataclass(frozen=True)
class LongCutoffs:
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


@dataclass(frozen=True)
class DoubleCutoffs:
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


@dataclass(frozen=True)
class DoubleParams:
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


@dataclass(frozen=True)
class PairParams:
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
