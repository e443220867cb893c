"""Runs and qrels as columns: Parquet and Arrow IPC files, polars LazyFrames, DataFrames.

A columnar run has the columns ``query_id``, ``doc_id`` and ``score`` (qrels:
``query_id``, ``doc_id``, ``relevance``); other names are given as a mapping
``{"query_id": "qid", "doc_id": "docno", "score": "score"}`` or as the three names in
that order (``("qid", "docno", "score")``; the CLI's ``--run-columns qid,docno,score``).
Without one, each column is found by its own name, else by PyTerrier's: ``qid``,
``docno``, ``score`` and ``label`` (a frame holding both ``query_id`` and ``qid`` uses
``query_id``). Id columns may be strings,
categoricals or integers (compared as their decimal text); scores any number type;
labels integers, booleans or whole floats. A ``run_id`` column, if present, names the
run (its last row), as in a TREC file.

Errors name the file (``<LazyFrame>``, ``<DataFrame>`` for objects), the column and the
1-based row, in the place a TREC file's line goes: ``run.parquet:17: missing score
(column 'score') (query_id '3', doc_id 'd9')``.

A run file is read in slices of rows, a LazyFrame in batches of its streaming engine;
neither is collected whole on the bounded-memory road (:mod:`irmetrics.engine.stream`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from ..checks import parameter_error, parameter_type_error
from ..containers import DEFAULT_RUN_NAME, Qrels, Run
from ..exceptions import InputFormatError
from ..lazy import loaded

__all__ = ["read_run", "read_qrels", "run_batches", "column_names", "is_columnar"]

#: File suffixes read as columnar data (lower case), and the name of their polars scanner.
SUFFIXES = {".parquet": "scan_parquet", ".pq": "scan_parquet", ".arrow": "scan_ipc",
            ".feather": "scan_ipc", ".ipc": "scan_ipc"}

#: The columns of each kind, in the order a sequence of names gives them.
COLUMNS = {"run": ("query_id", "doc_id", "score"),
           "qrels": ("query_id", "doc_id", "relevance")}

#: PyTerrier's name of each column, recognised when it is the only candidate.
PYTERRIER = {"query_id": "qid", "doc_id": "docno", "score": "score", "relevance": "label"}

#: Rows per read of a run on the bounded-memory road (Parquet writers' usual row group:
#: a smaller slice would decode a row group several times), and per frame handed on
#: (about the lines of a 16 MiB chunk of a TREC file).
BATCH_ROWS = 1 << 20
FRAME_ROWS = 1 << 18


def is_columnar(source) -> bool:
    """Whether ``source`` is a LazyFrame or a path with a columnar suffix
    (``.parquet``, ``.pq``, ``.arrow``, ``.feather``, ``.ipc``)."""
    if loaded("polars") and isinstance(source, pl.LazyFrame):  # none before polars is
        return True
    if isinstance(source, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(source))
        return os.path.splitext(path)[1].lower() in SUFFIXES
    return False


def column_names(columns, kind: str, param: str) -> dict | None:
    """``columns`` (a mapping or three names in order, or None) as ``{column: name}``.

    >>> column_names("qid,docno,score", "run", "run_columns")
    {'query_id': 'qid', 'doc_id': 'docno', 'score': 'score'}
    """
    if columns is None:
        return None
    wanted = COLUMNS[kind]
    constraint = (f"a dict {{column: name}} with keys {', '.join(wanted)}, or their three"
                  " names in that order")
    if isinstance(columns, str):
        columns = columns.split(",")
    if isinstance(columns, Mapping):
        mapping = dict(columns)
    elif isinstance(columns, (list, tuple)) and len(columns) == len(wanted):
        mapping = dict(zip(wanted, columns))
    else:
        raise parameter_error(param, constraint, columns)
    if set(mapping) != set(wanted) or not all(isinstance(v, str) and v for v in mapping.values()):
        raise parameter_error(param, constraint, columns)
    return {column: mapping[column] for column in wanted}


def resolve_columns(names, kind: str, columns: dict | None, source: str) -> dict:
    """``{column: name in the data}``: the given names (each checked to exist), else
    the column's own name if present, else PyTerrier's."""
    names = list(names)
    if columns is not None:
        for column, name in columns.items():
            if name not in names:
                raise InputFormatError(f"no column {name!r} (given for {column}); the"
                                       f" columns are {names}", path=source)
        return dict(columns)
    out = {}
    for column in COLUMNS[kind]:
        found = [n for n in (column, PYTERRIER[column]) if n in names]
        if not found:
            tried = ("" if PYTERRIER[column] == column
                     else f": neither {column!r} nor {PYTERRIER[column]!r}")
            raise InputFormatError(
                f"no {column} column{tried} among {names} (name the columns with"
                f" {kind}_columns= or --{kind}-columns)", path=source)
        out[column] = found[0]
    return out


def run_batches(source, columns: dict | None = None, *, batch_rows: int | None = None):
    """Yield a columnar run as frames of ``query_id``, ``doc_id`` (String), ``score``
    (Float64) and ``run_id`` (String), in row order, every row checked (no nulls,
    finite scores) with its row named in errors.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.LazyFrame({"qid": [1, 1], "docno": ["a", "b"], "score": [2, 1]})
    >>> [f.rows() for f in run_batches(frame)]
    [[('1', 'a', 2.0, 'irmetrics'), ('1', 'b', 1.0, 'irmetrics')]]
    """
    lazy, name = _scan(source)
    schema = lazy.collect_schema()
    mapping = resolve_columns(schema.names(), "run", columns, name)
    _check_dtypes(schema, mapping, name)
    run_id = (pl.col("run_id").cast(pl.String).fill_null(DEFAULT_RUN_NAME)
              if "run_id" in schema.names() and "run_id" not in mapping.values()
              else pl.lit(DEFAULT_RUN_NAME, dtype=pl.String))
    lazy = lazy.select(
        pl.col(mapping["query_id"]).cast(pl.String).alias("query_id"),
        pl.col(mapping["doc_id"]).cast(pl.String).alias("doc_id"),
        pl.col(mapping["score"]).cast(pl.Float64).alias("score"),
        run_id.alias("run_id"))
    first_row = 1
    for batch in _batches(lazy, batch_rows or BATCH_ROWS, isinstance(source, pl.LazyFrame)):
        _check_rows(batch, mapping, name, first_row)
        first_row += batch.height
        for start in range(0, batch.height, FRAME_ROWS):
            yield batch.slice(start, FRAME_ROWS)


def _batches(lazy: pl.LazyFrame, rows: int, plan: bool):
    """``lazy`` in frames of ``rows`` rows. A file is read slice by slice (polars reads
    only the row groups or record batches a slice needs: memory stays at one slice,
    while its streaming engine may decode ahead of a slower consumer); a LazyFrame's
    own plan runs once, through the streaming engine."""
    if plan:
        yield from (b for b in lazy.collect_batches(chunk_size=rows, maintain_order=True)
                    if b.height)
        return
    offset = 0
    while True:
        batch = lazy.slice(offset, rows).collect()
        if batch.height:
            yield batch
        if batch.height < rows:
            return
        offset += rows


def _empty_run() -> pl.DataFrame:
    """A run of no rows, in the columns :func:`run_batches` yields."""
    return pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                "score": pl.Float64, "run_id": pl.String})

#: Bytes a run row takes as a TREC line, about (to size temporary partitions).
TEXT_BYTES_PER_ROW = 48


def text_bytes(source) -> int:
    """About the size of a columnar run written as TREC lines (from its row count)."""
    return TEXT_BYTES_PER_ROW * row_count(source)


def row_count(source) -> int:
    """Rows of a columnar file (from its metadata) or LazyFrame (its plan runs)."""
    lazy, _ = _scan(source)
    return int(lazy.select(pl.len()).collect().item())


def polars_frame(frame, kind: str, columns: dict | None = None) -> pl.DataFrame | None:
    """A polars DataFrame as it is; a pandas one as a polars frame of the columns a
    ``kind`` table reads (and ``run_id`` or ``iteration`` when present), converted
    column by column in C (object columns must hold str: strict); None for anything
    else, or a pandas frame that does not convert (the containers then read it and name
    the bad row).

    Examples
    --------
    >>> import pandas as pd
    >>> polars_frame(pd.DataFrame({"qid": [1], "docno": ["d"], "score": [0.5]}), "run")
    shape: (1, 3)
    ┌─────┬───────┬───────┐
    │ qid ┆ docno ┆ score │
    │ --- ┆ ---   ┆ ---   │
    │ i64 ┆ str   ┆ f64   │
    ╞═════╪═══════╪═══════╡
    │ 1   ┆ d     ┆ 0.5   │
    └─────┴───────┴───────┘
    """
    if isinstance(frame, pl.DataFrame):
        return frame
    if not _is_pandas(frame):
        return None
    labels = {str(c): c for c in frame.columns}
    if len(labels) != len(frame.columns):
        return None  # two columns named alike: the containers say which
    try:
        mapping = resolve_columns(list(labels), kind, columns, "<DataFrame>")
    except InputFormatError:
        return None
    value = mapping.get("score" if kind == "run" else "relevance")
    if len(frame) == 0 or (value is not None and not _numeric(frame[labels[value]])):
        return None  # no row, or numbers held as text: the containers say so, with a hint
    wanted = list(dict.fromkeys([*mapping.values(), *(
        c for c in ("run_id", "iteration") if c in labels)]))
    try:
        return pl.DataFrame([_polars_column(name, frame[labels[name]]) for name in wanted])
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        return None


def _numeric(column) -> bool:
    """A pandas column of numbers or booleans (not text, not objects)."""
    return column.dtype != object and getattr(column.dtype, "kind", "") in ("b", "i", "u", "f")


def _converted(frame, kind: str, columns):
    """A pandas ``frame`` as polars when it converts, else as it is."""
    converted = polars_frame(frame, kind, columns)
    return frame if converted is None else converted


def _polars_column(name: str, column) -> pl.Series:
    """One pandas column as a polars Series: numbers and booleans through numpy, an
    object column as strings (nothing else), other dtypes (pandas strings,
    categoricals) through polars' own conversion."""
    if _numeric(column):
        return pl.Series(name, column.to_numpy())
    if column.dtype == object:
        return pl.Series(name, column.to_numpy(), dtype=pl.String, strict=True)
    return pl.from_pandas(column.to_frame(name))[name]


def read_run(source, columns: dict | None = None) -> Run:
    """The whole columnar run (a path, LazyFrame or DataFrame) as a
    :class:`~irmetrics.containers.Run` (every row checked, duplicate pairs refused with
    their row)."""
    if _is_pandas(source):
        source = _converted(source, "run", columns)
    if isinstance(source, pl.DataFrame) or _is_pandas(source):
        names = [str(c) for c in source.columns]
        return Run.from_df(source, **resolve_columns(names, "run", columns, "<DataFrame>"))
    _, name = _scan(source)
    # No row at all (an empty file, a filter that keeps nothing): an empty run, which
    # evaluation reports as a run with no queries, as it does an empty DataFrame.
    frame = pl.concat([_empty_run(), *run_batches(source, columns)], rechunk=False)
    last = frame["run_id"][-1] if frame.height else DEFAULT_RUN_NAME
    with _named_errors(name):
        return Run.from_df(frame, name=last)


def read_qrels(source, columns: dict | None = None, *, relevance_type: str = "int") -> Qrels:
    """Columnar qrels (a path, LazyFrame or DataFrame) as a
    :class:`~irmetrics.containers.Qrels`, every row checked; labels are integers, or
    real numbers with ``relevance_type="float"``.

    Examples
    --------
    >>> import polars as pl
    >>> qrels = read_qrels(pl.DataFrame({"qid": ["q1"], "docno": ["d1"], "label": [2]}))
    >>> qrels.df.rows()
    [('q1', '0', 'd1', 2)]
    """
    if _is_pandas(source):
        source = _converted(source, "qrels", columns)
    if isinstance(source, pl.DataFrame) or _is_pandas(source):
        frame, name = source, "<DataFrame>"
        names = [str(c) for c in source.columns]
    else:
        lazy, name = _scan(source, "qrels")
        schema = lazy.collect_schema()
        names = schema.names()
        _check_dtypes(schema, resolve_columns(names, "qrels", columns, name), name)
        frame = lazy.collect()
    mapping = resolve_columns(names, "qrels", columns, name)
    with _named_errors(name):
        return Qrels.from_df(frame, **mapping, relevance_type=relevance_type)


def _scan(source, what: str = "run") -> tuple[pl.LazyFrame, str]:
    """``(LazyFrame, name for errors)`` of a columnar path, a LazyFrame or a DataFrame
    (the ``what`` argument of the caller, named when ``source`` is none of them)."""
    if isinstance(source, pl.LazyFrame):
        return source, "<LazyFrame>"
    if isinstance(source, pl.DataFrame):
        return source.lazy(), "<DataFrame>"
    if not isinstance(source, (str, bytes, os.PathLike)):
        # another object with columns (a pyarrow Table, ...): its type, not its whole repr
        raise parameter_type_error(
            what, "a path, a dict, a polars or pandas DataFrame or a LazyFrame (an Arrow "
            "table: polars.from_arrow(table))", type(source))
    path = os.fsdecode(os.fspath(source))
    scan = getattr(pl, SUFFIXES[os.path.splitext(path)[1].lower()])
    if not os.path.isfile(path):
        raise InputFormatError("no such file" if not os.path.exists(path) else
                               "not a regular file", path=path)
    try:
        lazy = scan(path)
        lazy.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as exc:
        kind = "Parquet" if scan is pl.scan_parquet else "Arrow IPC"
        if scan is pl.scan_ipc and _starts_with(path, b"FEA1"):
            raise InputFormatError("a Feather version 1 file: only Arrow IPC (Feather"
                                   " version 2, pyarrow's default since 0.17) is read; convert"
                                   " it with pyarrow.feather.write_feather(pyarrow.feather."
                                   "read_table(path), new_path)", path=path) from None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputFormatError(f"not a readable {kind} file ({first})", path=path) from None
    return lazy, path


def _starts_with(path: str, magic: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(magic)) == magic
    except OSError:
        return False


def _check_dtypes(schema, mapping: dict, source: str) -> None:
    """Refuse columns whose type cannot hold what they name."""
    for column, name in mapping.items():
        dtype = schema[name]
        if column in ("query_id", "doc_id"):
            ok = dtype == pl.String or dtype.is_integer() or \
                isinstance(dtype, (pl.Categorical, pl.Enum))
            want = "strings or integers"
        elif column == "score":
            ok, want = dtype.is_numeric(), "numbers"
        else:
            ok = dtype.is_integer() or dtype.is_float() or dtype == pl.Boolean
            want = "integers (or booleans, or whole floats)"
        if not ok:
            raise InputFormatError(f"column {name!r} ({column}) must hold {want}; got {dtype}",
                                   path=source)


def _check_rows(batch: pl.DataFrame, mapping: dict, source: str, first_row: int) -> None:
    """No nulls and finite scores in ``batch`` (rows counted from ``first_row``)."""
    for column in ("query_id", "doc_id", "score"):
        if batch[column].null_count():
            i = int(batch[column].is_null().arg_true()[0])
            raise _row_error(f"missing {column} (column {mapping[column]!r})", batch, i,
                             source, first_row)
    scores = batch["score"].to_numpy()
    bad = ~np.isfinite(scores)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _row_error(f"score must be finite, found {scores[i]!r} (column"
                         f" {mapping['score']!r})", batch, i, source, first_row)


def _row_error(reason, batch, i, source, first_row) -> InputFormatError:
    return InputFormatError(reason, path=source, line=first_row + i,
                            query_id=batch["query_id"][i], doc_id=batch["doc_id"][i])


class _named_errors:
    """Context manager: data errors of the containers (which say ``<DataFrame>``) name
    ``source`` instead, keeping their row."""

    def __init__(self, source: str):
        self.source = source

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if isinstance(error, InputFormatError) and error.path == "<DataFrame>":
            raise type(error)(error.reason, path=self.source, line=error.line,
                              query_id=error.query_id, doc_id=error.doc_id) from None
        return False


def _is_pandas(value) -> bool:
    import sys

    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)
