"""libm ``log``/``log2`` over arrays, bit-identical to the C library trec_eval calls.

numpy's vectorised transcendental functions may use SIMD implementations that differ
from glibc by an ulp, which can flip a printed digit (docs/reference/trec_eval.md §9.3). These helpers give
the libm result: integer arguments of ``log2`` come from a cached table built with
``math.log2`` (the common case: discounts of ranks and counts), every other finite
positive argument is passed to Python's ``math`` module (which calls libm), and
non-positive or non-finite arguments go through numpy, whose results there are
exact special values (``-inf``, ``nan``, ``inf``) like libm's -- except the NaN of a
negative argument, which glibc returns with its sign bit set (``-nan``).
"""

from __future__ import annotations

import math

import numpy as np

_LOG2_INT = np.zeros(0)
_math_log = np.frompyfunc(math.log, 1, 1)
_math_log2 = np.frompyfunc(math.log2, 1, 1)


def log2_int_table(size: int) -> np.ndarray:
    """``table[i] = log2(i)`` for ``1 <= i < size`` (``table[0]`` unused)."""
    global _LOG2_INT
    table = _LOG2_INT  # this call's table: another thread may swap in a smaller one
    if len(table) < size:
        size = max(size, 2 * len(table), 1024)
        table = np.array([math.log2(i) if i else -math.inf for i in range(size)])
        if len(table) > len(_LOG2_INT):
            _LOG2_INT = table
    return table


def _through_math(values: np.ndarray, math_func, numpy_func) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    out = np.empty_like(x)
    regular = np.isfinite(x) & (x > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[~regular] = numpy_func(x[~regular])
    # glibc's domain error is 0/0 computed in SSE, the x86 default NaN, whose sign bit is
    # set (trec_eval prints "-nan"); numpy's NaN there is positive.
    out[x < 0] = -np.nan
    if regular.any():
        out[regular] = math_func(x[regular]).astype(np.float64)
    return out


def libm_log(values) -> np.ndarray:
    """Natural logarithm with libm's rounding (``math.log``), elementwise."""
    return _through_math(values, _math_log, np.log)


def libm_log2(values) -> np.ndarray:
    """Base-2 logarithm with libm's rounding (``math.log2``), elementwise.

    Integer-valued arguments (``1, 2, 3, ...`` up to 2**20) use a table.
    """
    x = np.asarray(values, dtype=np.float64)
    integral = (x >= 1) & (x < (1 << 20)) & (x == np.floor(x))
    if integral.all():
        idx = x.astype(np.int64)
        return log2_int_table(int(idx.max()) + 1 if idx.size else 1)[idx]
    out = _through_math(np.where(integral, 2.0, x), _math_log2, np.log2)
    if integral.any():
        idx = x[integral].astype(np.int64)
        out[integral] = log2_int_table(int(idx.max()) + 1)[idx]
    return out
