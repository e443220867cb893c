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
    """Build (not raise) a :class:`ParameterError` with the project's message template.

    Parameters
    ----------
    name : str
        The parameter, as the caller spells it.
    constraint : str
        What it must be (``"a positive integer"``).
    value : object
        What it was; its repr is cut to 200 characters (:func:`brief_repr`).

    Returns
    -------
    ParameterError
        With the message ``"`<name>` must be <constraint>; got <value!r>."``.

    Examples
    --------
    >>> error = parameter_error("cutoff", "a positive integer", 0)
    >>> str(error), isinstance(error, ValueError)
    ('`cutoff` must be a positive integer; got 0.', True)
    """
    return ParameterError(f"`{name}` must be {constraint}; got {brief_repr(value, 200)}.")


def parameter_type_error(name: str, constraint: str, value: Any) -> ParameterTypeError:
    """:func:`parameter_error` for a value of the wrong type: also a ``TypeError``.

    Parameters
    ----------
    name, constraint, value
        As for :func:`parameter_error` (the value's repr is not cut).

    Returns
    -------
    ParameterTypeError
        A :class:`ParameterError` and a ``TypeError``.

    Examples
    --------
    >>> error = parameter_type_error("relevance_level", "an integer", "1")
    >>> str(error), isinstance(error, TypeError)
    ("`relevance_level` must be an integer; got '1'.", True)
    """
    return ParameterTypeError(f"`{name}` must be {constraint}; got {value!r}.")


def _is_int(value: Any) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``, else raise.

    A bool matches only itself (``True`` is not the choice ``1``).

    Parameters
    ----------
    name : str
        The parameter, for the message.
    value : object
    choices : iterable

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    ParameterError
        ``value`` is not one of ``choices`` (the message lists them).

    Examples
    --------
    >>> check_choice("kind", "b", ["a", "b"])
    'b'
    >>> check_choice("kind", "c", ["a", "b"])
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `kind` must be one of 'a', 'b'; got 'c'.
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

    Parameters
    ----------
    name : str
        The parameter, for the message.
    value : object
    min, max : int, optional
        Inclusive bounds; None: unbounded.

    Returns
    -------
    int

    Raises
    ------
    ParameterError
        ``value`` is not an integer, is a bool, or is out of bounds.

    Examples
    --------
    >>> import numpy as np
    >>> type(check_int("max_docs", np.int64(3)))
    <class 'int'>
    >>> check_int("k", 11, min=0, max=10)
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `k` must be an integer between 0 and 10; got 11.
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
    """Return ``value`` as a Python int >= 1 (:func:`check_int` with ``min=1``).

    Raises
    ------
    ParameterError
        ``value`` is not an integer, or is below 1.

    Examples
    --------
    >>> check_positive_int("cutoff", 10)
    10
    >>> check_positive_int("cutoff", 0)
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `cutoff` must be a positive integer; got 0.
    """
    return check_int(name, value, min=1)


def check_nonnegative_int(name: str, value: Any) -> int:
    """Return ``value`` as a Python int >= 0 (:func:`check_int` with ``min=0``).

    Raises
    ------
    ParameterError
        ``value`` is not an integer, or is negative.

    Examples
    --------
    >>> check_nonnegative_int("max_docs", 0)
    0
    >>> check_nonnegative_int("max_docs", -1)
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `max_docs` must be a non-negative integer; got -1.
    """
    return check_int(name, value, min=0)


def check_float(
    name: str,
    value: Any,
    *,
    min: float | None = None,
    max: float | None = None,
    finite: bool = True,
) -> float:
    """Return ``value`` as a Python float; ints and numpy reals are accepted, bools are not.

    Parameters
    ----------
    name : str
        The parameter, for the message.
    value : object
    min, max : float, optional
        Inclusive bounds; None: unbounded.
    finite : bool, default True
        Refuse infinities too. NaN is always refused.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        ``value`` is not a real number, is a bool, NaN, infinite (under ``finite``) or
        out of bounds.

    Examples
    --------
    >>> check_float("alpha", 1), check_float("x", float("inf"), finite=False)
    (1.0, inf)
    >>> check_float("alpha", 2.0, min=0, max=1)
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `alpha` must be a finite real number between 0 and 1; got 2.0.
    """
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
    """Return ``value`` as a Python bool; it must be ``True``/``False`` or a numpy bool
    (0 and 1 are refused).

    Raises
    ------
    ParameterError
        ``value`` is not a bool.

    Examples
    --------
    >>> import numpy as np
    >>> check_bool("judged_only", np.bool_(True))
    True
    >>> check_bool("judged_only", 1)
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `judged_only` must be True or False; got 1.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise parameter_error(name, "True or False", value)
    return bool(value)


def check_str(name: str, value: Any, *, allow_empty: bool = False) -> str:
    """Return ``value``; it must be a str, non-empty unless ``allow_empty``.

    Raises
    ------
    ParameterError
        ``value`` is not a str, or is empty without ``allow_empty``.

    Examples
    --------
    >>> check_str("name", "", allow_empty=True)
    ''
    >>> check_str("name", "")
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `name` must be a non-empty string; got ''.
    """
    if not isinstance(value, str) or (not allow_empty and value == ""):
        raise parameter_error(name, "a string" if allow_empty else "a non-empty string", value)
    return value
