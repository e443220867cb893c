"""TEMPORARY stand-in until the io branch lands."""
from .exceptions import ParameterError


def check_choice(name, value, choices):
    if value not in choices:
        raise ParameterError(f"`{name}` must be one of {', '.join(map(repr, choices))}; got {value!r}.")
    return value


def check_int(name, value, *, min=None):
    if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
        raise ParameterError(f"`{name}` must be an integer; got {value!r}.")
    if min is not None and value < min:
        raise ParameterError(f"`{name}` must be an integer >= {min}; got {value!r}.")
    return int(value)
