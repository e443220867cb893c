"""C ``atol``/``atof`` prefix semantics, used where trec_eval parses parameters.

trec_eval reads measure parameters and ``-M``/``-l``/``-N`` with the C library:
the longest valid prefix is used and garbage gives 0 (``"23.4" -> 23``,
``"abc" -> 0``). Python's ``int()``/``float()`` are stricter, so these helpers
reproduce the C rule for parameter strings only; data files are parsed strictly.
"""

from __future__ import annotations

import math
import re

_LONG = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")
_DEC_FLOAT = re.compile(
    rb"[ \t\n\v\f\r]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
)
_HEX_FLOAT = re.compile(
    rb"[ \t\n\v\f\r]*([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+))(?:[pP]([+-]?[0-9]+))?"
)
_SPECIAL = re.compile(rb"[ \t\n\v\f\r]*([+-]?)(infinity|inf|nan)", re.IGNORECASE)


#: C long on the 64-bit platforms trec_eval runs on.
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def c_atol(text: str) -> int:
    """C ``atol``: optional sign then digits; no digits gives 0. Out of range values
    saturate at ``LONG_MIN``/``LONG_MAX``, as glibc's ``atol`` (``strtol``) does.

    >>> c_atol("23.4"), c_atol("abc"), c_atol("99999999999999999999")
    (23, 0, 9223372036854775807)
    """
    m = _LONG.match(text.encode())
    if not m:
        return 0
    digits = m.group(1)
    if len(digits.lstrip(b"+-").lstrip(b"0")) > 19:  # beyond any long (and int()'s limit)
        return LONG_MIN if digits.startswith(b"-") else LONG_MAX
    return min(max(int(digits), LONG_MIN), LONG_MAX)


def c_atof(text: str) -> float:
    """C ``atof``/``strtod`` on the longest valid prefix; no valid prefix gives 0.0."""
    raw = text.encode()
    m = _SPECIAL.match(raw)
    if m:
        sign = -1.0 if m.group(1) == b"-" else 1.0
        return sign * (math.nan if m.group(2).lower() == b"nan" else math.inf)
    m = _HEX_FLOAT.match(raw)
    if m:
        sign = -1.0 if m.group(1) == b"-" else 1.0
        mant = m.group(2).decode()
        whole, _, frac = mant.partition(".")
        value = int(whole or "0", 16) + (int(frac, 16) / 16 ** len(frac) if frac else 0.0)
        return sign * math.ldexp(value, int(m.group(3) or b"0"))
    m = _DEC_FLOAT.match(raw)
    return float(m.group(1)) if m else 0.0
