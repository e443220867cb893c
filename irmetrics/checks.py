"""Shared argument checks: the only place where parameter validation lives.

Every check raises :class:`~irmetrics.exceptions.ParameterError` with the one message
template of the project::

    `<param>` must be <constraint>; got <value!r>.

Each ``check_*`` function returns the (normalised) value, so it can be used inline::

    k = check_positive_int("cutoff", k)

>>> check_choice("on_duplicate", "first", ("error", "first", "last", "max"))
'first'
>>> check_int("max_docs", 3.5)
Traceback (most recent call last):
...
irmetrics.exceptions.ParameterError: `max_docs` must be an integer; got 3.5.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from irmetrics.exceptions import ParameterError, ParameterTypeError, brief_repr

__all__ = [
    "parameter_error",
    "parameter_type_error",
    "check_choice",
    "check_int",
    "check_positive_int",
    "check_nonnegative_int",
    "check_float",
    "check_bool",
    "check_str",
]


def parameter_error(name: str, constraint: str, value: Any) -> ParameterError:
    """Build (not raise) a :class:`ParameterError` with the project's message template."""
    return ParameterError(f"`{name}` must be {constraint}; got {brief_repr(value, 200)}.")


def parameter_type_error(name: str, constraint: str, value: Any) -> ParameterTypeError:
    """:func:`parameter_error` for a value of the wrong type: also a ``TypeError``."""
    return ParameterTypeError(f"`{name}` must be {constraint}; got {value!r}.")


def _is_int(value: Any) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``, else raise.

    >>> check_choice("kind", "b", ["a", "b"])
    'b'
    """
    choices = tuple(choices)
    try:
        ok = value in choices
    except TypeError:  # unhashable/incomparable value
        ok = False
    if not ok or isinstance(value, (bool, np.bool_)) and not any(c is value for c in choices):
        listed = ", ".join(repr(c) for c in choices)
        raise parameter_error(name, f"one of {listed}", value)
    return value


def check_int(name: str, value: Any, *, min: int | None = None, max: int | None = None) -> int:
    """Return ``value`` as a Python int; it must be an integer (not bool) in ``[min, max]``.

    numpy integer scalars are accepted. Floats are refused, even whole ones.
    """
    if not _is_int(value):
        raise parameter_error(name, _int_constraint("an integer", min, max), value)
    v = int(value)
    if (min is not None and v < min) or (max is not None and v > max):
        raise parameter_error(name, _int_constraint("an integer", min, max), value)
    return v


def _int_constraint(base: str, min: int | None, max: int | None) -> str:
    if min is not None and max is not None:
        return f"{base} between {min} and {max}"
    if min is not None:
        return {0: "a non-negative integer", 1: "a positive integer"}.get(min, f"{base} >= {min}")
    if max is not None:
        return f"{base} <= {max}"
    return base


def check_positive_int(name: str, value: Any) -> int:
    """An integer >= 1."""
    return check_int(name, value, min=1)


def check_nonnegative_int(name: str, value: Any) -> int:
    """An integer >= 0."""
    return check_int(name, value, min=0)


def check_float(
    name: str,
    value: Any,
    *,
    min: float | None = None,
    max: float | None = None,
    finite: bool = True,
) -> float:
    """Return ``value`` as a Python float; ints and numpy reals are accepted, bools are not."""
    constraint = "a finite real number" if finite else "a real number"
    if min is not None and max is not None:
        constraint += f" between {min} and {max}"
    elif min is not None:
        constraint += f" >= {min}"
    elif max is not None:
        constraint += f" <= {max}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise parameter_error(name, constraint, value)
    v = float(value)
    if (finite and not math.isfinite(v)) or math.isnan(v):
        raise parameter_error(name, constraint, value)
    if (min is not None and v < min) or (max is not None and v > max):
        raise parameter_error(name, constraint, value)
    return v


def check_bool(name: str, value: Any) -> bool:
    """A real bool (``True``/``False`` or a numpy bool); 0 and 1 are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise parameter_error(name, "True or False", value)
    return bool(value)


def check_str(name: str, value: Any, *, allow_empty: bool = False) -> str:
    """A str (non-empty unless ``allow_empty``)."""
    if not isinstance(value, str) or (not allow_empty and value == ""):
        raise parameter_error(name, "a string" if allow_empty else "a non-empty string", value)
    return value
