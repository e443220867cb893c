"""Array intake shared by every adapter: one road from user objects to numpy.

Accepted inputs are numpy arrays, (nested) lists, and any object exposing
``__dlpack__`` or ``__array__`` (torch, jax, cupy-on-host, ...). Tensors are read
through DLPack first (zero copy, no torch import); ``__array__`` is the fallback.
Arrays on a device (CUDA, MPS, CuPy) are copied to the host here; the adapters with
a device road (:mod:`irmetrics.device`) take them before they reach this intake.
Inputs are never modified: every function here returns either the caller's array
untouched or a new array.
"""

from __future__ import annotations


import numpy as np

from ..checks import check_choice
from ..device.arrays import as_array  # noqa: F401  (re-exported: the adapters' intake)
from ..device.arrays import text_error
from ..exceptions import ParameterError, ShapeError

#: Integer ids and lengths are carried as int64 internally.
INDEX_DTYPE = np.int64


def as_rows(value, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A per-query sequence of 1-D arrays (ragged allowed) as ``(flat, lengths)``.

    ``value`` is a 2-D array-like (every row the same length) or a list/tuple of
    1-D array-likes. Converting a Python list touches each row once; a 2-D array
    is reshaped without copying.
    """
    if isinstance(value, (list, tuple)):
        rows = [as_array(row, f"{name}[{i}]") for i, row in enumerate(value)]
        for i, row in enumerate(rows):
            if row.ndim != 1:
                raise ShapeError(
                    f"`{name}[{i}]` must be 1-D; got an array of shape {row.shape}."
                )
        lengths = np.fromiter((len(row) for row in rows), dtype=INDEX_DTYPE, count=len(rows))
        # Empty rows ([] is float64 to numpy) must not decide the dtype of the others.
        non_empty = [row for row in rows if len(row)]
        flat = np.concatenate(non_empty) if non_empty else np.zeros(0, dtype=INDEX_DTYPE)
        return flat, lengths
    array = as_array(value, name)
    if array.ndim != 2:
        raise ShapeError(
            f"`{name}` must be 2-D (queries x items) or a list of 1-D arrays; "
            f"got an array of shape {array.shape}."
        )
    lengths = np.full(array.shape[0], array.shape[1], dtype=INDEX_DTYPE)
    return array.reshape(-1), lengths


def check_numeric(array: np.ndarray, name: str, *, keep_float: bool = False,
                  finite: bool = False) -> np.ndarray:
    """Real numbers (bool/int/float) without NaN, as float64 (a new array if converted).

    With ``keep_float``, float arrays keep their dtype (their float64 widening is exact).
    With ``finite``, ±inf is refused too (run scores: ``Run`` holds finite scores only).
    """
    if array.dtype.kind in "USO" and array.size:
        flat = array.reshape(-1)
        if array.dtype.kind != "O" or all(isinstance(x, (str, bytes)) for x in flat[:1000]):
            raise text_error(name, flat)
    if array.dtype.kind not in "biuf":
        raise ParameterError(f"`{name}` must hold real numbers; got dtype {array.dtype}.")
    keep = keep_float and array.dtype.kind == "f"
    values = array if keep else array.astype(np.float64, copy=False)
    if np.isnan(values).any():
        where = np.argwhere(np.isnan(values))[0]
        raise ParameterError(
            f"`{name}` must not contain NaN; got NaN at index {tuple(int(i) for i in where)}."
        )
    if finite and values.dtype.kind == "f" and np.isinf(values).any():
        where = tuple(int(i) for i in np.argwhere(np.isinf(values))[0])
        raise ParameterError(
            f"`{name}` must be finite; got {values[where].item()!r} at index {where}.")
    return values


def check_integral(array: np.ndarray, name: str) -> np.ndarray:
    """Integer labels or ids as int64; floats are accepted only when integral."""
    if array.dtype.kind in "biu":
        if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
            raise ParameterError(f"`{name}` must fit in int64; got {array.max().item()!r}.")
        return array.astype(INDEX_DTYPE, copy=False)
    if array.dtype.kind == "f":
        bad = ~np.isfinite(array) | (array != np.round(array))
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ParameterError(
                f"`{name}` must hold integers; got {array[where].item()!r} at index {where}."
            )
        big = (array < -2.0**63) | (array >= 2.0**63)  # the cast would wrap them silently
        if big.any():
            where = tuple(int(i) for i in np.argwhere(big)[0])
            raise ParameterError(f"`{name}` must fit in int64; got {array[where].item()!r} at "
                                 f"index {where}.")
        return array.astype(INDEX_DTYPE)
    raise ParameterError(f"`{name}` must hold integers; got dtype {array.dtype}.")


def check_labels(array: np.ndarray, name: str, relevance_type: str = "int") -> np.ndarray:
    """Relevance labels: integers (int64), or finite real numbers (float64) for
    ``relevance_type="float"``."""
    check_choice("relevance_type", relevance_type, ("int", "float"))
    if relevance_type == "float":
        return check_numeric(array, name, finite=True)
    return check_integral(array, name)


def check_same_shape(array: np.ndarray, name: str, shape: tuple, like: str) -> None:
    if array.shape != shape:
        raise ShapeError(f"`{name}` must have the shape of `{like}` {shape}; got {array.shape}.")
