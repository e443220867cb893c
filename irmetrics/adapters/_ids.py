"""Query and document id vocabularies of the adapters.

Adapters address queries and documents by integer codes into an ``IdVocab``; id
strings are only materialised (vectorised, by polars) when a string table is
asked for. trec_eval breaks score ties by doc id descending in byte order, so a
vocabulary also provides each id's rank in byte order: a numeric tie key.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import polars as pl

from ..exceptions import ParameterError, ShapeError


class IdVocab:
    """Distinct id strings, addressed by integer code ``0 .. size - 1``."""

    def __init__(self, strings: pl.Series):
        self._strings = strings.alias("id")

    @classmethod
    def numbered(cls, prefix: str, numbers: np.ndarray) -> "IdVocab":
        """Ids ``f"{prefix}{number}"`` (the default ``q{i}`` / ``d{j}`` ids)."""
        formatted = pl.select(
            pl.concat_str(pl.lit(prefix), pl.Series(np.asarray(numbers)).cast(pl.String))
        ).to_series()
        return cls(formatted)

    @classmethod
    def from_user(cls, ids, name: str, size: int | None) -> "IdVocab":
        """User ids: ``size`` distinct strings (or integers) without whitespace."""
        array_like = hasattr(ids, "__dlpack__") or hasattr(ids, "__array__")
        if array_like or isinstance(ids, (list, tuple)):
            from .arrays import as_array
            try:
                array = as_array(ids, name)
            except ShapeError:
                array = np.asarray(list(ids), dtype=object)
        else:
            raise ParameterError(f"`{name}` must be a sequence of ids; got {type(ids).__name__}.")
        if array.ndim != 1:
            raise ShapeError(f"`{name}` must be 1-D; got an array of shape {array.shape}.")
        if size is not None and len(array) != size:
            raise ShapeError(f"`{name}` must have length {size}; got {len(array)}.")
        if array.size == 0:
            strings = pl.Series([], dtype=pl.String)
        elif array.dtype.kind in "iu":
            strings = pl.Series(array).cast(pl.String)
        elif array.dtype.kind in "UO":
            kinds = (str, int, np.integer)
            if array.dtype.kind == "O" and not all(isinstance(x, kinds) for x in array):
                raise ParameterError(
                    f"`{name}` must hold strings or integers; got {array[:3].tolist()!r}.")
            strings = pl.Series([str(x) for x in array.tolist()], dtype=pl.String)
        else:
            raise ParameterError(
                f"`{name}` must hold strings or integers; got dtype {array.dtype}.")
        if (strings.str.len_bytes() == 0).any() or strings.str.contains(r"\s").any():
            bad = strings.filter((strings.str.len_bytes() == 0) | strings.str.contains(r"\s"))[0]
            raise ParameterError(
                f"`{name}` must be non-empty ids without whitespace (TREC files split on "
                f"whitespace); got {bad!r}."
            )
        if strings.n_unique() != len(strings):
            dup = strings.filter(strings.is_duplicated())[0]
            raise ParameterError(f"`{name}` must be distinct; got {dup!r} more than once.")
        return cls(strings)

    @property
    def size(self) -> int:
        return len(self._strings)

    @property
    def strings(self) -> pl.Series:
        return self._strings

    def take(self, codes: np.ndarray) -> pl.Series:
        """Id strings of ``codes`` (vectorised gather)."""
        return self._strings.gather(codes)

    def contains(self, value: str) -> bool:
        return bool((self._strings == value).any())

    @cached_property
    def byte_rank(self) -> np.ndarray:
        """Rank of every id in ascending byte order (``int64``, a permutation).

        polars compares strings bytewise (UTF-8), which is trec_eval's ``strcmp``.
        """
        order = self._strings.arg_sort().to_numpy()
        rank = np.empty(self.size, dtype=np.int64)
        rank[order] = np.arange(self.size, dtype=np.int64)
        return rank

    def ids(self) -> np.ndarray:
        """Id strings as a numpy object array."""
        return np.asarray(self._strings.to_list(), dtype=object)
