"""``Qrels`` and ``Run``: validated, immutable-ish wrappers around polars DataFrames.

Both containers hold one row per (query_id, doc_id) pair, in input order:

=========  ==================================================================================
Qrels.df   ``query_id`` (String), ``iteration`` (String), ``doc_id`` (String),
           ``relevance`` (Int64)
Run.df     ``query_id`` (String), ``iteration`` (String), ``doc_id`` (String),
           ``rank`` (Int64, nullable), ``score`` (Float64), ``run_id`` (String)
=========  ==================================================================================

Invariants, checked once at construction (never in the hot path of the engine):

* ids are non-null strings, exactly as written (``"0301" != "301"``);
* (query_id, doc_id) is unique: duplicates are an error unless ``on_duplicate`` chose
  ``"first"``, ``"last"`` or ``"max"`` (the kept row stays at its own position);
* relevance is a non-null integer (negative = in the pool but unjudged, as in trec_eval);
* scores are finite float64 (NaN and +-inf are refused; trec_eval's order would be undefined).

Conversions from Python objects
-------------------------------
* Ids may be ``str``, ``int`` or numpy integer scalars; they are stored as ``str(int(x))``.
  ``bool``, floats and other types are refused.
* Relevance may be an int, a numpy integer, a bool (0/1) or a float with a whole value
  (``1.0 -> 1``); ``1.5`` is refused with the query_id and doc_id named.
* Scores may be any real number (int, float, numpy scalar, bool); NaN/inf are refused.

Empty containers (``Qrels.from_dict({})``, ``Run.from_records([])``) are allowed: evaluating
nothing is legitimate in memory. Reading an empty *file* is an error (see
:mod:`irmetrics.io.trec`).

Errors about the data (duplicates, bad values, missing ids) raise
:class:`~irmetrics.exceptions.InputFormatError` (or its subclass
:class:`~irmetrics.exceptions.DuplicateEntryError`) whose ``path`` describes the source
(``"<dict>"``, ``"<DataFrame>"``, ``"<records>"``) and whose ``line`` is the 1-based row or
record number when there is one. Bad arguments (unknown column, wrong type of container,
``bool`` ids) raise :class:`~irmetrics.exceptions.ParameterError`. Values and containers
of the wrong type (a str label, a None score, a list where a dict is expected) raise the
subclasses :class:`~irmetrics.exceptions.InputTypeError` and
:class:`~irmetrics.exceptions.ParameterTypeError`, which are also ``TypeError``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from irmetrics.checks import check_choice, check_str, parameter_error, parameter_type_error
from irmetrics.exceptions import InputFormatError, InputTypeError, brief_repr

from . import schema as table_schema

if TYPE_CHECKING:
    from . import trec_text
else:  # the TREC text reader and writer, imported when a file is read or written
    from irmetrics.lazy import LazyModule
    trec_text = LazyModule("irmetrics.containers.trec_text")
from .schema import (DEFAULT_QRELS_ITERATION, DEFAULT_RUN_ITERATION, DEFAULT_RUN_NAME,
                     DUPLICATE_POLICIES, FLOAT_LABEL_HINT, resolve_duplicates)

__all__ = ["Qrels", "Run", "DUPLICATE_POLICIES"]

_KEYS = ["query_id", "doc_id"]
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1



def to_id(x: Any, what: str) -> str:
    """Convert one id to str: str as is, int / numpy integer via ``str(int(x))``."""
    if isinstance(x, str):  # numpy.str_ and other subclasses too
        try:
            x.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate such as '\ud800'
            raise parameter_error(what, "valid Unicode text (no lone surrogates)", x) from None
        return str(x)
    if isinstance(x, (bool, np.bool_)):
        raise parameter_type_error(what, "a str or an integer (not a bool)", x)
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    raise parameter_type_error(what, "a str or an integer", x)


def _to_relevance(v: Any, q: str, d: str, source: str, pos: int | None, unit: str | None) -> int:
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        r = int(v)
    elif isinstance(v, (float, np.floating)) and math.isfinite(float(v)) and float(v).is_integer():
        r = int(float(v))
    else:
        hint = (FLOAT_LABEL_HINT if isinstance(v, (float, np.floating)) else
                _TEXT_HINT.format(kind="relevance", cast="int", polars="Int64")
                if isinstance(v, str) and source == _FRAME else "")
        raise InputTypeError(
            f"relevance must be an integer, found {_show(v)}{hint}",
            path=source,
            line=pos if unit else None,
            query_id=q,
            doc_id=d,
        )
    if not _INT64_MIN <= r <= _INT64_MAX:
        raise InputFormatError(
            f"relevance out of the 64-bit integer range: {_show(r)}",
            path=source,
            line=pos if unit else None,
            query_id=q,
            doc_id=d,
        )
    return r


def _to_score(v: Any, q: str, d: str, source: str, pos: int | None, unit: str | None) -> float:
    if isinstance(v, (int, float, np.integer, np.floating, np.bool_)):
        try:
            return float(v)  # finiteness is checked vectorised afterwards
        except OverflowError:  # a Python int beyond float64's range
            reason = f"score overflows float64 (must be finite), found {_show(v)}"
    else:
        reason = f"score must be a real number, found {_show(v)}"
        if isinstance(v, str) and source == _FRAME:
            reason += _TEXT_HINT.format(kind="score", cast="float", polars="Float64")
    raise InputTypeError(
        reason,
        path=source,
        line=pos if unit else None,
        query_id=q,
        doc_id=d,
    )


#: Said of a value that is text in a DataFrame (``_FRAME``, the source name of frames):
#: a frame read from CSV keeps numbers as strings.
_FRAME = "<DataFrame>"
_TEXT_HINT = ("; the {kind} column holds text, not numbers: convert it first (pandas:"
              " df[column].astype({cast}), polars: pl.col(column).cast(pl.{polars}))")


def _show(v: Any) -> str:
    if isinstance(v, int) and not -10**30 < v < 10**30:  # keep the message one short line
        return f"an integer of {len(str(abs(v)))} digits ({str(v)[:12]}...)"
    return brief_repr(v.item() if isinstance(v, np.generic) else v)


def _str_series(values: list[Any], what: str) -> pl.Series | None:
    """``values`` as a String series when every one is already a str, else None."""
    try:
        s = pl.Series(what, values, dtype=pl.String, strict=True)
        if not s.null_count():
            return s
    except (TypeError, ValueError, OverflowError):
        pass
    return None


def _ids_series(values: list[Any], what: str) -> pl.Series:
    s = _str_series(values, what)
    return s if s is not None else pl.Series(what, [to_id(x, what) for x in values],
                                             dtype=pl.String)


def _relevance_series(values, qids, docs, source, unit) -> pl.Series:
    try:
        s = pl.Series("relevance", values, dtype=pl.Int64, strict=True)
    except (TypeError, ValueError, OverflowError):
        s = None
    if s is None or s.null_count():
        out = [
            _to_relevance(v, q, d, source, i + 1, unit)
            for i, (v, q, d) in enumerate(zip(values, qids, docs))
        ]
        s = pl.Series("relevance", out, dtype=pl.Int64)
    return s


def _float_relevance_series(values, qids, docs, source, unit) -> pl.Series:
    """Graded float labels (``relevance_type="float"``): finite real numbers."""
    if isinstance(values, pl.Series):
        if not (values.dtype.is_numeric() or values.dtype == pl.Boolean):
            raise parameter_error("relevance column", "of a numeric dtype", values.dtype)
        values = values.to_list()
    try:
        s = pl.Series("relevance", values, dtype=pl.Float64, strict=True)
    except (TypeError, ValueError, OverflowError):
        s = None
    if s is None or s.null_count():
        bad = next(i for i, v in enumerate(values)
                   if isinstance(v, (bool, np.bool_))
                   or not isinstance(v, (int, float, np.integer, np.floating)))
        if not isinstance(values[bad], (bool, np.bool_)):
            raise InputTypeError(f"relevance must be a real number, found {_show(values[bad])}",
                                   path=source, line=bad + 1 if unit else None,
                                   query_id=qids[bad], doc_id=docs[bad])
        s = pl.Series("relevance", [float(v) for v in values], dtype=pl.Float64)
    finite = s.is_finite()
    if not finite.all():
        bad = int((~finite).arg_true()[0])
        raise InputFormatError(f"relevance must be finite, found {s[bad]!r}", path=source,
                               line=bad + 1 if unit else None, query_id=qids[bad],
                               doc_id=docs[bad])
    return s


def _score_series(values, qids, docs, source, unit) -> pl.Series:
    try:
        s = pl.Series("score", values, dtype=pl.Float64, strict=True)
    except (TypeError, ValueError, OverflowError):
        s = None
    if s is None or s.null_count():
        out = [_to_score(v, q, d, source, i + 1, unit) for i, (v, q, d) in enumerate(zip(values, qids, docs))]
        s = pl.Series("score", out, dtype=pl.Float64)
    return s


def _check_finite_scores(df: pl.DataFrame, source: str, unit: str | None) -> None:
    bad = df.select((~pl.col("score").is_finite()).arg_true().first()).item()
    if bad is not None:
        row = df.row(int(bad), named=True)
        raise InputFormatError(
            f"score must be finite (NaN and infinity are not allowed), found {row['score']!r}",
            path=source,
            line=int(bad) + 1 if unit else None,
            query_id=row["query_id"],
            doc_id=row["doc_id"],
        )


def _check_frame(df: Any, schema: Mapping[str, pl.DataType], what: str) -> pl.DataFrame:
    if not isinstance(df, pl.DataFrame):
        raise parameter_error(what, "a polars DataFrame", type(df).__name__)
    want = list(schema.items())
    got = list(df.schema.items())
    if got != want:
        spec = ", ".join(f"{k} ({v})" for k, v in want)
        raise parameter_error(f"{what}.schema", f"exactly [{spec}] in this order", dict(df.schema))
    return df


# --------------------------------------------------------------------------------------
# reading user frames (polars, or pandas imported lazily)
# --------------------------------------------------------------------------------------


def _user_columns(df: Any, wanted: Mapping[str, str], optional: Iterable[str]) -> tuple[dict, int]:
    """Return ``{target: pl.Series | list}`` for the wanted (target -> source name) columns
    and the optional same-named columns that exist, plus the row count."""
    if isinstance(df, pl.LazyFrame):
        df = df.collect()
    if isinstance(df, pl.DataFrame):
        cols = df.columns
        get: Callable[[str], Any] = df.get_column
        height = df.height
    else:
        pd = sys.modules.get("pandas")
        if pd is None or not isinstance(df, pd.DataFrame):
            raise parameter_error("df", "a polars or pandas DataFrame", type(df).__name__)
        cols = [str(c) for c in df.columns]
        height = len(df)

        def get(name: str) -> Any:
            arr = df[name].to_numpy()
            if arr.dtype.kind in "biuf":
                return pl.Series(name, arr)
            return list(arr)  # object / string / nullable columns: convert element-wise

    out: dict[str, Any] = {}
    for target, name in wanted.items():
        check_str(target, name)
        if name not in cols:
            raise parameter_error(target, f"a column of the frame (one of {cols})", name)
        out[target] = get(name)
    for name in optional:
        if name in cols and name not in out and name not in wanted.values():
            out[name] = get(name)
    return out, height


def _frame_ids(col: Any, what: str, source: str) -> pl.Series:
    if isinstance(col, list):
        if any(x is None or (isinstance(x, float) and math.isnan(x)) for x in col):
            i = next(i for i, x in enumerate(col) if x is None or (isinstance(x, float) and math.isnan(x)))
            raise InputFormatError(f"missing {what}", path=source, line=i + 1)
        return _ids_series(col, what)
    s: pl.Series = col
    if s.dtype == pl.String:
        pass
    elif not len(s):
        # No rows: an empty frame's columns have whatever type it was built with (Null,
        # pandas' float64); it is an empty table, reported as such downstream.
        s = pl.Series(what, [], dtype=pl.String)
    elif isinstance(s.dtype, (pl.Categorical, pl.Enum)) or s.dtype.is_integer():
        s = s.cast(pl.String)
    elif s.dtype == pl.Object:
        return _frame_ids(s.to_list(), what, source)
    else:
        hint = (" (floats such as 401.0, as pandas reads ids from a column with gaps: cast"
                " the column to int or str first)" if s.dtype.is_float() else "")
        raise parameter_error(f"{what} column", f"of a string or integer dtype{hint}", s.dtype)
    if s.null_count():
        raise InputFormatError(f"missing {what}", path=source, line=int(s.is_null().arg_true()[0]) + 1)
    return s.alias(what)


def _frame_values(col: Any, kind: str, qids: pl.Series, docs: pl.Series, source: str) -> pl.Series:
    """Relevance (Int64) or score (Float64) column of a user frame."""
    if isinstance(col, pl.Series) and col.dtype == pl.Object:
        col = col.to_list()
    if isinstance(col, list):
        vals = col
        q, d = qids.to_list(), docs.to_list()
        for i, v in enumerate(vals):
            if v is None or (isinstance(v, float) and math.isnan(v) and kind == "relevance"):
                raise InputFormatError(f"missing {kind}", path=source, line=i + 1, query_id=q[i], doc_id=d[i])
        if kind == "relevance":
            return _relevance_series(vals, q, d, source, "row")
        return _score_series(vals, q, d, source, "row")
    s: pl.Series = col
    if not len(s):
        s = pl.Series(kind, [], dtype=pl.Int64 if kind == "relevance" else pl.Float64)
    if not (s.dtype.is_numeric() or s.dtype == pl.Boolean):
        raise parameter_error(f"{kind} column", "of a numeric dtype", s.dtype)
    if s.null_count():
        i = int(s.is_null().arg_true()[0])
        raise InputFormatError(f"missing {kind}", path=source, line=i + 1, query_id=qids[i], doc_id=docs[i])
    if kind == "score":
        return s.cast(pl.Float64).alias("score")
    if s.dtype.is_float():
        f = s.cast(pl.Float64)
        ok = f.is_finite() & (f.floor() == f) & (f >= _INT64_MIN) & (f < 2.0**63)
        if not ok.all():
            i = int((~ok).arg_true()[0])
            raise InputFormatError(
                f"relevance must be an integer, found {f[i]!r}{FLOAT_LABEL_HINT}",
                path=source,
                line=i + 1,
                query_id=qids[i],
                doc_id=docs[i],
            )
    try:
        return s.cast(pl.Int64, strict=True).alias("relevance")
    except pl.exceptions.InvalidOperationError:
        ok = s.cast(pl.Int64, strict=False).is_not_null()
        i = int((~ok).arg_true()[0])
        raise InputFormatError(
            f"relevance out of the 64-bit integer range: {s[i]}",
            path=source,
            line=i + 1,
            query_id=qids[i],
            doc_id=docs[i],
        ) from None


def _optional_strings(cols: Mapping[str, Any], name: str, height: int, default: str) -> pl.Series:
    if name not in cols:
        # one repeat, not a Python list of ``height`` strings (2 M rows: 0.2 s)
        return pl.repeat(default, height, dtype=pl.String, eager=True).alias(name)
    col = cols[name]
    if isinstance(col, list):
        s = pl.Series(name, [default if x is None else str(x) for x in col], dtype=pl.String)
    else:
        s = col.cast(pl.String).fill_null(default).alias(name)
    return s


# --------------------------------------------------------------------------------------
# shared base
# --------------------------------------------------------------------------------------


class _Frame:
    """What Qrels and Run share: the validated frame, its source path and the read-only views."""

    __slots__ = ("_df", "path", "_query_ids")

    def _init_frame(self, df: pl.DataFrame, path: str | None) -> None:
        self._df = df
        self.path = None if path is None else str(path)
        self._query_ids: list[str] | None = None

    @staticmethod
    def _check_frame_rows(df: Any, schema: Mapping[str, pl.DataType], value: str,
                          nullable: tuple[str, ...] = (), *,
                          unique: bool = False) -> pl.DataFrame:
        """Constructor checks: schema, no nulls outside ``nullable``, finite scores, unique
        pairs (unless the caller vouches for them: ``unique``)."""
        df = _check_frame(df, schema, "df")
        nulls = df.drop(nullable).null_count().row(0, named=True)
        if any(nulls.values()):
            col = next(k for k, v in nulls.items() if v)
            i = int(df[col].is_null().arg_true()[0])
            raise InputFormatError(f"missing {col}", path="<DataFrame>", line=i + 1)
        if value == "score":
            _check_finite_scores(df, "<DataFrame>", "row")
        if not unique:
            resolve_duplicates(df, value=value, policy="error", source="<DataFrame>",
                               unit="row")
        return df

    # ---- views ----------------------------------------------------------------------------

    @property
    def df(self) -> pl.DataFrame:
        return self._df

    @property
    def query_ids(self) -> list[str]:
        """Distinct query ids in first-seen order."""
        if self._query_ids is None:
            self._query_ids = self._df["query_id"].unique(maintain_order=True).to_list()
        return list(self._query_ids)

    def __len__(self) -> int:
        return self._df.height

    def _repr(self, head: str, rows: str) -> str:
        """``head`` is the class name, ``(`` and any leading fields; ``rows`` names the row count."""
        n_q = self._df["query_id"].n_unique()
        where = f", path={self.path!r}" if self.path is not None else ""
        return f"{head}n_queries={n_q}, {rows}={self._df.height}{where})"


# --------------------------------------------------------------------------------------
# Qrels
# --------------------------------------------------------------------------------------


class Qrels(_Frame):
    """Relevance judgments: one row per (query_id, doc_id).

    Attributes
    ----------
    df : polars.DataFrame
        ``query_id`` (String), ``iteration`` (String), ``doc_id`` (String), ``relevance``
        (Int64), in input order; (query_id, doc_id) is unique.
    path : str or None
        The file it was read from (``"-"`` for stdin), else None.

    The constructor validates a ready-made frame (schema, nulls, uniqueness). Use
    :meth:`read`, :meth:`from_dict`, :meth:`from_df` or :meth:`from_records` to build one
    from other shapes. Treat the object and its frame as read-only.

    Examples
    --------
    >>> q = Qrels.from_dict({"301": {"d1": 1, "d2": 0}, "302": {"d9": 2}})
    >>> len(q), q.query_ids
    (3, ['301', '302'])
    >>> q.to_dict()["302"]
    {'d9': 2}
    """

    __slots__ = ()

    def __init__(self, df: pl.DataFrame, *, path: str | None = None) -> None:
        self._init_frame(self._check_frame_rows(df, table_schema.QRELS_SCHEMA, "relevance"), path)

    @classmethod
    def _trusted(cls, df: pl.DataFrame, *, path: str | None = None) -> Qrels:
        """Wrap a frame already known to satisfy every invariant (internal fast path)."""
        obj = cls.__new__(cls)
        obj._init_frame(df, path)
        return obj

    # ---- constructors -------------------------------------------------------------------

    @classmethod
    def read(cls, path: Any, **kw: Any) -> Qrels:
        """Read a TREC qrels file; same as :func:`irmetrics.io.trec.read_qrels`."""
        df, name = trec_text.parse_qrels_source(path, **kw)
        return cls._trusted(df, path=name)

    @classmethod
    def read_bytes(cls, data: bytes, **kw: Any) -> Qrels:
        """Qrels from TREC text already in memory; same as
        :func:`irmetrics.io.trec.read_qrels_bytes`."""
        return cls._trusted(trec_text.parse_qrels_bytes(data, **kw))

    @classmethod
    def from_dict(cls, d: Mapping[Any, Mapping[Any, Any]], *,
                  relevance_type: str = "int") -> Qrels:
        """Build from the pytrec_eval shape ``{query_id: {doc_id: relevance}}``.

        Ids are converted with ``str`` (ints and numpy integers allowed); ``iteration`` is
        ``"0"``. ``{}`` gives an empty Qrels. Two keys that convert to the same string (``1``
        and ``"1"``) are a :class:`DuplicateEntryError`. Labels are integers, or finite
        real numbers with ``relevance_type="float"`` (a Float64 column).
        """
        check_choice("relevance_type", relevance_type, ("int", "float"))
        q, doc, rel, distinct = _dict_columns(d, _float_relevance_series
                                              if relevance_type == "float" else _relevance_series)
        df = pl.DataFrame(
            [q, pl.Series("iteration", [DEFAULT_QRELS_ITERATION] * len(q), dtype=pl.String), doc, rel]
        )
        if not distinct:
            df = resolve_duplicates(df, value="relevance", policy="error", source="<dict>",
                                    unit=None)
        return cls._trusted(df)

    @classmethod
    def from_df(
        cls,
        df: Any,
        *,
        query_id: str = "query_id",
        doc_id: str = "doc_id",
        relevance: str = "relevance",
        on_duplicate: str = "error",
        relevance_type: str = "int",
    ) -> Qrels:
        """Build from a polars (or pandas) DataFrame; the input is never modified.

        ``query_id``/``doc_id``/``relevance`` name the columns to use. A column named
        ``iteration``, if present, is kept (as strings), else ``"0"``. Id columns may be of a
        string, categorical or integer dtype; relevance of an integer, boolean or float dtype
        (whole values only, unless ``relevance_type="float"``: finite real labels, kept as
        Float64). Errors name the 1-based row.
        """
        check_choice("on_duplicate", on_duplicate, DUPLICATE_POLICIES)
        check_choice("relevance_type", relevance_type, ("int", "float"))
        cols, height = _user_columns(
            df, {"query_id": query_id, "doc_id": doc_id, "relevance": relevance}, ["iteration"]
        )
        src = "<DataFrame>"
        if relevance_type == "float":
            q = _frame_ids(cols["query_id"], "query_id", src)
            d = _frame_ids(cols["doc_id"], "doc_id", src)
            rel = _float_relevance_series(cols["relevance"], q, d, src, "row")
        else:
            q, d, rel = _frame_columns(cols, "relevance", src)
        it = _optional_strings(cols, "iteration", height, DEFAULT_QRELS_ITERATION)
        out = pl.DataFrame([q, it, d, rel])
        out = resolve_duplicates(out, value="relevance", policy=on_duplicate, source=src, unit="row")
        return cls._trusted(out)

    @classmethod
    def from_records(cls, records: Iterable[Any], *, on_duplicate: str = "error") -> Qrels:
        """Build from ``(query_id, doc_id, relevance)`` or
        ``(query_id, iteration, doc_id, relevance)`` tuples (the two may be mixed)."""
        check_choice("on_duplicate", on_duplicate, DUPLICATE_POLICIES)
        records = list(records)
        columns = _transposed(records, 3)
        if columns is not None:
            qids, docs, vals = columns
            its = [DEFAULT_QRELS_ITERATION] * len(qids)
        else:
            qids, its, docs, vals = _transposed(records, 4) or ([], [], [], [])
        for i, rec in enumerate(records if not qids and records else ()):
            n = _record_len(rec, i, (3, 4), "(query_id, doc_id, relevance) or (query_id, iteration, doc_id, relevance)")
            if n == 3:
                qids.append(rec[0]), its.append(DEFAULT_QRELS_ITERATION), docs.append(rec[1]), vals.append(rec[2])
            else:
                qids.append(rec[0]), its.append(rec[1]), docs.append(rec[2]), vals.append(rec[3])
        src = "<records>"
        q = _ids_series(qids, "query_id")
        doc = _ids_series(docs, "doc_id")
        it = _ids_series(its, "iteration")
        rel = _relevance_series(vals, q, doc, src, "record")
        df = pl.DataFrame([q, it, doc, rel])
        df = resolve_duplicates(df, value="relevance", policy=on_duplicate, source=src, unit="record")
        return cls._trusted(df)

    # ---- views ----------------------------------------------------------------------------

    @property
    def relevance_type(self) -> str:
        """``"float"`` for graded float labels (a Float64 column), else ``"int"``."""
        return "float" if self._df["relevance"].dtype == pl.Float64 else "int"

    def to_dict(self) -> dict[str, dict[str, int]]:
        """The pytrec_eval shape ``{query_id: {doc_id: relevance}}`` (first-seen order)."""
        return _to_nested(self._df, "relevance")

    def write(self, path: Any) -> None:
        """Write in TREC qrels format; see :func:`irmetrics.io.trec.write_qrels`."""
        trec_text.write_qrels_frame(self._df, path)

    def __repr__(self) -> str:
        return self._repr("Qrels(", "n_judgments")


# --------------------------------------------------------------------------------------
# Run
# --------------------------------------------------------------------------------------


class Run(_Frame):
    """A ranking run: one scored row per (query_id, doc_id).

    Attributes
    ----------
    df : polars.DataFrame
        ``query_id``, ``iteration`` (String, ``"Q0"`` by default), ``doc_id``, ``rank``
        (Int64, null when unknown or not an integer in the file), ``score`` (Float64,
        finite), ``run_id`` (String); input order; (query_id, doc_id) unique. The file's
        ``rank`` is kept for round trips only: trec_eval ignores it, and so should the engine.
    name : str
        The run id: the run_id field of the last data line in file order (trec_eval's
        ``runid``), or ``"irmetrics"`` when built from a dict.
    path : str or None
        The file it was read from (``"-"`` for stdin), else None.

    Examples
    --------
    >>> r = Run.from_dict({"301": {"d1": 0.5, "d2": 1.5}})
    >>> r.name, len(r), r.to_dict()
    ('irmetrics', 2, {'301': {'d1': 0.5, 'd2': 1.5}})
    """

    __slots__ = ("name",)

    def __init__(self, df: pl.DataFrame, *, name: str | None = None, path: str | None = None) -> None:
        df = self._check_frame_rows(df, table_schema.RUN_SCHEMA, "score", nullable=("rank",))
        if name is None:
            name = df["run_id"][-1] if df.height else DEFAULT_RUN_NAME
        self._init(df, check_str("name", name, allow_empty=True), path)

    def _init(self, df: pl.DataFrame, name: str, path: str | None) -> None:
        self._init_frame(df, path)
        self.name = name

    @classmethod
    def _trusted(cls, df: pl.DataFrame, *, name: str, path: str | None = None) -> Run:
        obj = cls.__new__(cls)
        obj._init(df, name, path)
        return obj

    @classmethod
    def from_unique_pairs(cls, df: pl.DataFrame, *, name: str) -> Run:
        """A run over ``df`` whose producer guarantees that its (query_id, doc_id) pairs
        are unique (as :func:`irmetrics.fusion.fuse` builds its fused run): the
        constructor's other checks run, that one (a hash of every pair, the costliest)
        does not. A frame with a repeated pair gives wrong numbers later, not an error.

        >>> df = Run.from_dict({"q": {"a": 1.0}}, name="x").df
        >>> Run.from_unique_pairs(df, name="x").to_dict()
        {'q': {'a': 1.0}}
        """
        df = cls._check_frame_rows(df, table_schema.RUN_SCHEMA, "score", nullable=("rank",), unique=True)
        return cls._trusted(df, name=check_str("name", name, allow_empty=True))

    def with_scores(self, scores: pl.Expr | pl.Series) -> Run:
        """The same run with new scores (``scores`` evaluated over :attr:`df`), and
        nothing else changed: the pairs are those of this run, so no check is repeated.

        >>> run = Run.from_dict({"q": {"a": 1.0, "b": 2.0}})
        >>> run.with_scores(-pl.col("score")).df["score"].to_list()
        [-1.0, -2.0]
        """
        column = scores if isinstance(scores, pl.Expr) else pl.lit(scores)
        return type(self)._trusted(
            self._df.with_columns(column.cast(pl.Float64).alias("score")),
            name=self.name, path=self.path)

    # ---- constructors -------------------------------------------------------------------

    @classmethod
    def read(cls, path: Any, **kw: Any) -> Run:
        """Read a TREC run file; same as :func:`irmetrics.io.trec.read_run`."""
        df, run_id, name = trec_text.parse_run_source(path, **kw)
        # a run's last line always names it: run_id is None only for qrels
        return cls._trusted(df, name=cast(str, run_id), path=name)

    @classmethod
    def read_bytes(cls, data: bytes, **kw: Any) -> Run:
        """A run from TREC text already in memory; same as
        :func:`irmetrics.io.trec.read_run_bytes`."""
        df, run_id = trec_text.parse_run_bytes(data, **kw)
        return cls._trusted(df, name=cast(str, run_id))

    @classmethod
    def from_dict(cls, d: Mapping[Any, Mapping[Any, Any]], *, name: str = DEFAULT_RUN_NAME) -> Run:
        """Build from the pytrec_eval shape ``{query_id: {doc_id: score}}``.

        ``iteration`` is ``"Q0"``, ``rank`` is null, ``run_id`` is ``name``.
        """
        check_str("name", name, allow_empty=True)
        q, doc, score, distinct = _dict_columns(d, _score_series)
        n = len(q)
        df = pl.DataFrame(
            [
                q,
                pl.Series("iteration", [DEFAULT_RUN_ITERATION] * n, dtype=pl.String),
                doc,
                pl.Series("rank", [None] * n, dtype=pl.Int64),
                score,
                pl.Series("run_id", [name] * n, dtype=pl.String),
            ]
        )
        _check_finite_scores(df, "<dict>", None)
        if not distinct:
            df = resolve_duplicates(df, value="score", policy="error", source="<dict>", unit=None)
        return cls._trusted(df, name=name)

    @classmethod
    def from_df(
        cls,
        df: Any,
        *,
        query_id: str = "query_id",
        doc_id: str = "doc_id",
        score: str = "score",
        on_duplicate: str = "error",
        name: str | None = None,
    ) -> Run:
        """Build from a polars (or pandas) DataFrame; the input is never modified.

        Columns named ``iteration``, ``rank`` and ``run_id``, if present, are kept
        (``rank`` must be of an integer dtype; nulls allowed). ``name`` defaults to the
        last row's ``run_id`` when that column exists, else ``"irmetrics"``; without a
        ``run_id`` column every row gets ``name``.
        """
        check_choice("on_duplicate", on_duplicate, DUPLICATE_POLICIES)
        if name is not None:
            check_str("name", name, allow_empty=True)
        cols, height = _user_columns(
            df, {"query_id": query_id, "doc_id": doc_id, "score": score}, ["iteration", "rank", "run_id"]
        )
        src = "<DataFrame>"
        q, d, s = _frame_columns(cols, "score", src)
        it = _optional_strings(cols, "iteration", height, DEFAULT_RUN_ITERATION)
        if name is None:
            name = DEFAULT_RUN_NAME
            if "run_id" in cols and height:
                last = cols["run_id"][-1]
                name = DEFAULT_RUN_NAME if last is None else str(last)
        run_id = _optional_strings(cols, "run_id", height, name)
        rank = _rank_series(cols.get("rank"), height)
        out = pl.DataFrame([q, it, d, rank, s, run_id])
        _check_finite_scores(out, src, "row")
        out = resolve_duplicates(out, value="score", policy=on_duplicate, source=src, unit="row")
        return cls._trusted(out, name=name)

    @classmethod
    def from_records(
        cls, records: Iterable[Any], *, on_duplicate: str = "error", name: str | None = None
    ) -> Run:
        """Build from ``(query_id, doc_id, score)`` tuples or TREC-shaped 6-tuples
        ``(query_id, iteration, doc_id, rank, score, run_id)`` (rank may be None).

        ``name`` defaults to the run_id of the last 6-tuple, else ``"irmetrics"``; 3-tuples
        get ``run_id = name``.
        """
        check_choice("on_duplicate", on_duplicate, DUPLICATE_POLICIES)
        if name is not None:
            check_str("name", name, allow_empty=True)
        records = list(records)
        last_rid = None
        ranks: Any
        rids: Any
        columns = _transposed(records, 3)
        if columns is not None:
            qids, docs, vals = columns
            its = [DEFAULT_RUN_ITERATION] * len(qids)
            ranks, rids = None, None  # no rank; run_id = name
        else:
            qids, its, docs, ranks, vals, rids = _transposed(records, 6) or \
                [[] for _ in range(6)]
            last_rid = rids[-1] if rids else None
        for i, rec in enumerate(records if not qids and records else ()):
            n = _record_len(rec, i, (3, 6), "(query_id, doc_id, score) or (query_id, iteration, doc_id, rank, score, run_id)")
            if n == 3:
                qids.append(rec[0]), its.append(DEFAULT_RUN_ITERATION), docs.append(rec[1])
                ranks.append(None), vals.append(rec[2]), rids.append(None)
            else:
                qids.append(rec[0]), its.append(rec[1]), docs.append(rec[2])
                ranks.append(rec[3]), vals.append(rec[4]), rids.append(rec[5])
                last_rid = rec[5]
        if name is None:
            name = DEFAULT_RUN_NAME if last_rid is None else to_id(last_rid, "run_id")
        src = "<records>"
        q = _ids_series(qids, "query_id")
        doc = _ids_series(docs, "doc_id")
        it = _ids_series(its, "iteration")
        rid = _ids_series([name] * len(qids) if rids is None else
                          [name if r is None else r for r in rids], "run_id")
        rank = _rank_series(ranks, len(qids))
        s = _score_series(vals, q, doc, src, "record")
        df = pl.DataFrame([q, it, doc, rank, s, rid])
        _check_finite_scores(df, src, "record")
        df = resolve_duplicates(df, value="score", policy=on_duplicate, source=src, unit="record")
        return cls._trusted(df, name=name)

    # ---- views ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The pytrec_eval shape ``{query_id: {doc_id: score}}`` (first-seen order)."""
        return _to_nested(self._df, "score")

    def write(self, path: Any, *, run_id: str | None = None) -> None:
        """Write in TREC run format; see :func:`irmetrics.io.trec.write_run`."""
        trec_text.write_run_frame(self._df, path, run_id=run_id)

    def __repr__(self) -> str:
        return self._repr(f"Run(name={self.name!r}, ", "n_rows")


# --------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------


def _flatten_dict(d: Any, what: str) -> tuple[list, list, list]:
    if not isinstance(d, Mapping):
        raise parameter_type_error(what, "a mapping {query_id: {doc_id: value}}",
                                   type(d).__name__)
    qids: list = []
    docs: list = []
    vals: list = []
    for q, inner in d.items():
        if not isinstance(inner, Mapping):
            raise parameter_type_error(f"{what}[{q!r}]", "a mapping {doc_id: value}",
                                       type(inner).__name__)
        qs = to_id(q, "query_id")
        qids.extend([qs] * len(inner))
        docs.extend(inner.keys())
        vals.extend(inner.values())
    return qids, docs, vals


def _dict_columns(d: Any, value_series) -> tuple[pl.Series, pl.Series, pl.Series, bool]:
    """``query_id``, ``doc_id`` and value series of a ``{query_id: {doc_id: value}}`` dict,
    and whether its (query_id, doc_id) pairs are known to be distinct: dict keys are, and
    stay so when every doc id is a str and no two query keys convert to one id (``1`` and
    ``"1"``), which spares the duplicate search (a hash of every pair)."""
    qids, docs, vals = _flatten_dict(d, "d")
    q = _ids_series(qids, "query_id")
    doc = _str_series(docs, "doc_id")
    distinct = doc is not None and len({to_id(k, "query_id") for k in d}) == len(d)
    if doc is None:
        doc = _ids_series(docs, "doc_id")
    return q, doc, value_series(vals, q, doc, "<dict>", None), distinct


def _frame_columns(cols: Mapping[str, Any], value: str, source: str) -> tuple[pl.Series, pl.Series, pl.Series]:
    """``query_id``, ``doc_id`` and ``value`` series of a user frame's columns."""
    q = _frame_ids(cols["query_id"], "query_id", source)
    d = _frame_ids(cols["doc_id"], "doc_id", source)
    return q, d, _frame_values(cols[value], value, q, d, source)


def _transposed(records: list, width: int) -> list | None:
    """The columns of ``records`` when every one is a tuple or list of ``width`` items
    (transposed in C), else None (the caller's loop then names a bad record)."""
    if not records or not set(map(type, records)) <= {tuple, list} or \
            set(map(len, records)) != {width}:
        return None
    return [list(column) for column in zip(*records)]


def _record_len(rec: Any, i: int, lengths: tuple[int, int], shape: str) -> int:
    try:
        n = len(rec)
    except TypeError:
        n = None
    if isinstance(rec, (str, bytes)) or n not in lengths:
        raise parameter_error(f"records[{i}]", f"a tuple {shape}", rec)
    return n


def _rank_series(col: Any, height: int) -> pl.Series:
    if col is None:
        return pl.repeat(None, height, dtype=pl.Int64, eager=True).alias("rank")
    if isinstance(col, list):
        out: list[int | None] = []
        for x in col:
            if x is None or (isinstance(x, float) and math.isnan(x)):
                out.append(None)
            elif isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
                out.append(int(x))
            else:
                raise parameter_error("rank", "an integer or None", x)
        return pl.Series("rank", out, dtype=pl.Int64)
    if not (col.dtype.is_integer() or col.dtype == pl.Null):
        raise parameter_error("rank column", "of an integer dtype", col.dtype)
    return col.cast(pl.Int64).alias("rank")


def _to_nested(df: pl.DataFrame, value: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for q, d, v in zip(df["query_id"].to_list(), df["doc_id"].to_list(), df[value].to_list()):
        inner = out.get(q)
        if inner is None:
            inner = out[q] = {}
        inner[d] = v
    return out
