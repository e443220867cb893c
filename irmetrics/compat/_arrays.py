"""Array intake for the compat modules: tensors and lists in, numpy out, never modified."""

from __future__ import annotations

import numpy as np

from ..adapters.arrays import as_array, as_rows, check_numeric
from ..exceptions import ParameterError, ShapeError


def as_numpy(value, name: str, *, ndim=None, kind=None, finite: bool = False) -> np.ndarray:
    """``value`` as a numpy array (tensors through DLPack or ``__array__``; see
    :func:`irmetrics.adapters.as_array`), with dimension and dtype-kind checks.

    Parameters
    ----------
    value : array_like
    name : str
        Parameter name for error messages.
    ndim : int or tuple of int, optional
        Required number of dimensions.
    kind : str, optional
        Allowed dtype kinds (``"b"`` bool, ``"iu"`` integers, ``"f"`` floats, ...).
    finite : bool, default False
        Refuse NaN and ±inf (embeddings, distances, confidences: a NaN would be ranked
        somewhere arbitrary and give a normal-looking number).
    """
    array = as_array(value, name)  # the one intake: numpy, lists, DLPack/__array__ tensors
    if array.dtype == object:
        raise ShapeError(f"`{name}` must be a rectangular numeric array; got a ragged sequence.")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if array.ndim not in allowed:
            raise ShapeError(
                f"`{name}` must have {' or '.join(map(str, allowed))} dimension(s); "
                f"got shape {array.shape}."
            )
    if kind is not None and array.dtype.kind not in kind:
        names = {"b": "booleans", "i": "integers", "u": "integers", "f": "floats"}
        wanted = " or ".join(dict.fromkeys(names.get(c, c) for c in kind))
        raise ParameterError(f"`{name}` must hold {wanted}; got dtype {array.dtype}.")
    if finite:
        check_numeric(array, name, keep_float=True, finite=True)
    return array


def as_ragged(rows, name: str, *, kind=None) -> tuple[np.ndarray, np.ndarray]:
    """A per-query sequence of 1-D arrays (ragged allowed) as ``(flat, offsets)``.

    ``rows`` is a 2-D array-like (every row the same length) or a sequence of 1-D
    array-likes. Python sequences are converted once per row (that loop only
    builds the packed arrays; no metric is computed per row).
    """
    flat, lengths = as_rows(rows, name)
    if kind is not None and flat.size and flat.dtype.kind not in kind:
        raise ParameterError(f"`{name}` must hold values of kind {kind!r}; got dtype {flat.dtype}.")
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return flat, offsets


def as_cutoffs(top_k, name: str) -> tuple[int, ...]:
    """A non-empty tuple of positive integers (OML's ``check_if_nonempty_positive_integers``)."""
    try:
        values = tuple(top_k)
    except TypeError:
        raise ParameterError(f"`{name}` must be a non-empty tuple of positive integers; "
                             f"got {top_k!r}.") from None
    if not values or not all(isinstance(k, (int, np.integer)) and not isinstance(k, bool)
                             and k > 0 for k in values):
        raise ParameterError(f"`{name}` must be a non-empty tuple of positive integers; "
                             f"got {top_k!r}.")
    return tuple(int(k) for k in values)


def as_fractions(values, name: str) -> tuple[float, ...]:
    """A non-empty tuple of numbers in [0, 1] (OML's ``_check_if_in_range``)."""
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be a non-empty tuple of numbers in [0, 1]; "
                             f"got {values!r}.") from None
    if not out or not all(0.0 <= v <= 1.0 for v in out):
        raise ParameterError(f"`{name}` must be a non-empty tuple of numbers in [0, 1]; "
                             f"got {values!r}.")
    return out
