"""Readers and containers for trec_eval's preference and judgment-group formats.

Three rel_info formats besides standard qrels (spec §2.5):

* ``prefs`` (``-R prefs``): ``qid jg jsg docno rel_level``; five fields, ``rel_level``
  a real number. Rows are kept as given (a repeated line counts twice in trec_eval).
* ``qrels_prefs`` (``-R qrels_prefs``): a qrels-shaped file ``qid jg docno rel_level``
  read as prefs; every line gets judgment sub-group ``"0"`` and ``rel_level`` stays a
  real number (``1.5`` is 1.5).
* ``qrels_jg`` (``-R qrels_jg``): ``qid jg docno rel``; the second field is a judgment
  group, ``rel`` an integer; a repeated (qid, jg, docno) is an error.

Line syntax follows trec_eval's qrels parser: fields are separated by runs of C
whitespace (space, ``\\t``, ``\\v``, ``\\f``, ``\\r``); every line must have exactly the
format's number of fields, so blank lines are errors. A line whose first byte is
``#`` is a comment. trec_eval treats the line after a comment as data without
looking, and crashes on a comment in the last line; both cases are rejected here
with a clear error instead of being guessed at. Values are parsed strictly (the
package rule for data files): ``abc`` as a level is an error, not 0.
"""

from __future__ import annotations

import gzip
import os

import polars as pl

from ..exceptions import DuplicateEntryError, InputFormatError

PREFS_SCHEMA = {
    "query_id": pl.String, "jg": pl.String, "jsg": pl.String,
    "doc_id": pl.String, "rel_level": pl.Float64,
}
JUDGMENT_GROUP_SCHEMA = {
    "query_id": pl.String, "jg": pl.String, "doc_id": pl.String, "relevance": pl.Int64,
}

#: C ``isspace`` minus the newline, mapped to a plain space before splitting.
_C_BLANKS = str.maketrans({"\t": " ", "\v": " ", "\f": " ", "\r": " "})


# ----------------------------------------------------------------------------- containers


class Prefs:
    """Preference judgments: one row per ``(query_id, jg, jsg, doc_id, rel_level)`` line.

    Inside one judgment sub-group (jsg) every document is preferred to every document
    with a strictly lower ``rel_level``; judgment groups (jg) are independent sets of
    preferences (users). ``rel_level == 0`` means "judged non-relevant".

    Attributes
    ----------
    df : polars.DataFrame
        Columns ``query_id, jg, jsg, doc_id`` (String) and ``rel_level`` (Float64).
    path : str or None
        File the judgments were read from.

    Examples
    --------
    >>> p = Prefs.from_records([("q1", "u1", "s1", "d1", 2.0), ("q1", "u1", "s1", "d2", 1.0)])
    >>> p.df.shape
    (2, 5)
    """

    def __init__(self, df: pl.DataFrame, *, path: str | None = None):
        self.df = _validated(df, PREFS_SCHEMA, "prefs")
        self.path = path

    @classmethod
    def from_records(cls, records) -> "Prefs":
        """Build from ``(query_id, jg, jsg, doc_id, rel_level)`` tuples."""
        return cls(_frame_from_records(records, PREFS_SCHEMA, "prefs"))

    @classmethod
    def from_df(cls, df) -> "Prefs":
        """Build from a frame with columns ``query_id, jg, jsg, doc_id, rel_level``."""
        return cls(_as_polars(df, "prefs"))

    @classmethod
    def read(cls, path) -> "Prefs":
        """Read a ``prefs`` file (five fields); see :func:`read_prefs`."""
        return read_prefs(path)

    def __len__(self) -> int:
        return self.df.height

    def __repr__(self) -> str:
        n_q = self.df["query_id"].n_unique()
        return f"Prefs({self.df.height} lines, {n_q} queries)"


class JudgmentGroups:
    """Relevance judgments split into judgment groups (trec_eval ``qrels_jg``).

    Each judgment group (jg) is a separate set of qrels for the same ranking; the
    ``*_avgjg`` measures compute a standard measure per group and average the groups.

    Attributes
    ----------
    df : polars.DataFrame
        Columns ``query_id, jg, doc_id`` (String) and ``relevance`` (Int64); unique
        per ``(query_id, jg, doc_id)``.
    path : str or None

    Examples
    --------
    >>> jg = JudgmentGroups.from_records([("q1", "u1", "d1", 1), ("q1", "u2", "d1", 0)])
    >>> jg.df["jg"].to_list()
    ['u1', 'u2']
    """

    def __init__(self, df: pl.DataFrame, *, path: str | None = None):
        self.df = _validated(df, JUDGMENT_GROUP_SCHEMA, "judgment groups")
        _check_unique_judgments(self.df, path)
        self.path = path

    @classmethod
    def from_records(cls, records) -> "JudgmentGroups":
        """Build from ``(query_id, jg, doc_id, relevance)`` tuples."""
        return cls(_frame_from_records(records, JUDGMENT_GROUP_SCHEMA, "judgment groups"))

    @classmethod
    def from_df(cls, df) -> "JudgmentGroups":
        """Build from a frame with columns ``query_id, jg, doc_id, relevance``."""
        return cls(_as_polars(df, "judgment groups"))

    @classmethod
    def read(cls, path) -> "JudgmentGroups":
        """Read a ``qrels_jg`` file; see :func:`read_qrels_jg`."""
        return read_qrels_jg(path)

    def __len__(self) -> int:
        return self.df.height

    def __repr__(self) -> str:
        n_q = self.df["query_id"].n_unique()
        return f"JudgmentGroups({self.df.height} judgments, {n_q} queries)"


# ----------------------------------------------------------------------------- readers


def read_prefs(path) -> Prefs:
    """Read a trec_eval ``prefs`` file: ``qid jg jsg docno rel_level`` per line.

    Parameters
    ----------
    path : str or os.PathLike
        Plain text, or gzip when the name ends in ``.gz``.

    Returns
    -------
    Prefs

    Raises
    ------
    InputFormatError
        Empty file, a line without exactly five fields (blank lines included), a
        ``rel_level`` that is not a number (or is NaN), or a comment line trec_eval
        would misread (see the module notes). The message names the file and the
        1-based line.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".prefs", delete=False) as f:
    ...     _ = f.write("q1 u1 s1 d1 2\\nq1 u1 s1 d2 0.5\\n")
    >>> read_prefs(f.name).df["rel_level"].to_list()
    [2.0, 0.5]
    >>> os.unlink(f.name)
    """
    path = os.fspath(path)
    fields = _read_fields(path, ("query_id", "jg", "jsg", "doc_id", "rel_level"))
    df = fields.with_columns(_parse_level(fields, path))
    return Prefs(df.drop("line"), path=path)


def read_qrels_prefs(path) -> Prefs:
    """Read a qrels-shaped file as preferences (trec_eval ``-R qrels_prefs``).

    Each line ``qid jg docno rel_level`` becomes a prefs line with judgment sub-group
    ``"0"``; ``rel_level`` is real-valued (``1.5`` stays 1.5). Errors as
    :func:`read_prefs`, with four fields per line.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".qrels", delete=False) as f:
    ...     _ = f.write("q1 0 d1 1\\nq1 0 d2 0\\n")
    >>> read_qrels_prefs(f.name).df["jsg"].to_list()
    ['0', '0']
    >>> os.unlink(f.name)
    """
    path = os.fspath(path)
    fields = _read_fields(path, ("query_id", "jg", "doc_id", "rel_level"))
    df = fields.with_columns(_parse_level(fields, path), pl.lit("0").alias("jsg"))
    return Prefs(df.select(list(PREFS_SCHEMA)), path=path)


def read_qrels_jg(path) -> JudgmentGroups:
    """Read a trec_eval ``qrels_jg`` file: ``qid jg docno rel`` per line.

    ``rel`` is an integer; negative values mean "in the pool, not judged" exactly as
    in standard qrels.

    Raises
    ------
    InputFormatError
        Empty file, a line without exactly four fields, a non-integer ``rel``, or a
        misread comment (file and 1-based line named).
    DuplicateEntryError
        The same ``(qid, jg, docno)`` appears twice (trec_eval: ``duplicate docs``).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".qrels", delete=False) as f:
    ...     _ = f.write("q1 u1 d1 1\\nq1 u2 d1 0\\n")
    >>> read_qrels_jg(f.name).df["relevance"].to_list()
    [1, 0]
    >>> os.unlink(f.name)
    """
    path = os.fspath(path)
    fields = _read_fields(path, ("query_id", "jg", "doc_id", "relevance"))
    parsed = fields["relevance"].cast(pl.Int64, strict=False)
    _fail_on(fields, parsed.is_null(), path, "relevance must be an integer", "relevance")
    df = fields.with_columns(parsed.alias("relevance"))
    _check_unique_judgments(df, path)
    return JudgmentGroups(df.drop("line"), path=path)


# ----------------------------------------------------------------------------- helpers


def _read_text(path: str) -> str:
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise InputFormatError(f"{path}: cannot read file ({exc.strerror or exc}).") from exc
    if not raw:
        raise InputFormatError(f"{path}: file is empty (trec_eval cannot read it).")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputFormatError(f"{path}, line {line}: not valid UTF-8.") from None


def _read_fields(path: str, names: tuple) -> pl.DataFrame:
    """Split a whitespace-separated file into exactly ``len(names)`` String columns.

    The result has a 1-based physical ``line`` column for error messages.
    """
    text = _read_text(path).translate(_C_BLANKS)
    if not text.endswith("\n"):
        text += "\n"  # trec_eval appends the missing final newline
    lines = pl.Series("text", [text]).str.split("\n").explode()
    frame = pl.DataFrame({"text": lines.head(lines.len() - 1)}).with_row_index("line", offset=1)
    comment = frame["text"].str.starts_with("#")
    if comment.any():
        after_comment = comment & comment.shift(1, fill_value=False)
        if after_comment.any():
            line = frame["line"].filter(after_comment)[0]
            raise InputFormatError(
                f"{path}, line {line}: a comment line directly after another comment;"
                " trec_eval would read it as data. Remove or merge the comment lines.")
        if comment[-1]:
            raise InputFormatError(
                f"{path}, line {frame.height}: a comment on the last line makes trec_eval"
                " read past the end of the file. Remove it.")
        frame = frame.filter(~comment)
    tokens = frame["text"].str.extract_all(r"[^ \n]+")
    counts = tokens.list.len()
    bad = counts != len(names)
    if bad.any():
        first = int(bad.arg_max())
        raise InputFormatError(
            f"{path}, line {frame['line'][first]}: expected {len(names)} whitespace-separated"
            f" fields ({' '.join(names)}); got {counts[first]}.")
    return frame.select(
        pl.col("line"),
        *(tokens.list.get(i).alias(name) for i, name in enumerate(names)),
    )


def _fail_on(frame: pl.DataFrame, bad: pl.Series, path, what: str, column: str) -> None:
    if bad.any():
        first = int(bad.arg_max())
        raise InputFormatError(
            f"{path}, line {frame['line'][first]}: {what}; got {frame[column][first]!r}.")


def _parse_level(fields: pl.DataFrame, path: str) -> pl.Series:
    level = fields["rel_level"].cast(pl.Float64, strict=False)
    _fail_on(fields, level.is_null() | level.is_nan().fill_null(False), path,
             "rel_level must be a number (not NaN)", "rel_level")
    return level.alias("rel_level")


def _check_unique_judgments(df: pl.DataFrame, path) -> None:
    dup = pl.struct("query_id", "jg", "doc_id").is_duplicated()
    dups = df.with_row_index("__row").filter(dup)
    if dups.height:
        first = dups.row(0, named=True)
        second = dups.filter(
            (pl.col("query_id") == first["query_id"]) & (pl.col("jg") == first["jg"])
            & (pl.col("doc_id") == first["doc_id"])
        ).row(1, named=True)
        where = (f"{path}, lines {first['line']} and {second['line']}" if "line" in df.columns
                 else f"{path or 'judgment groups'}, rows {first['__row']} and {second['__row']}")
        raise DuplicateEntryError(
            f"{where}: duplicate judgment for query {first['query_id']!r}, judgment group"
            f" {first['jg']!r}, doc {first['doc_id']!r} (trec_eval: duplicate docs).")


def _frame_from_records(records, schema: dict, what: str) -> pl.DataFrame:
    rows = [tuple(r) for r in records]
    bad = next((r for r in rows if len(r) != len(schema)), None)
    if bad is not None:
        raise InputFormatError(
            f"{what} records must have {len(schema)} fields ({', '.join(schema)}); got {bad!r}.")
    columns = list(zip(*rows)) if rows else [()] * len(schema)
    return pl.DataFrame({
        name: pl.Series(name, list(col), dtype=None if rows else dtype, strict=False)
        for (name, dtype), col in zip(schema.items(), columns)
    })


def _as_polars(df, what: str) -> pl.DataFrame:
    if isinstance(df, pl.DataFrame):
        return df
    try:
        return pl.DataFrame(df)
    except Exception as exc:  # pandas and other frame-likes
        raise TypeError(f"`{what}` frame must be a polars DataFrame or convertible to one;"
                        f" got {type(df)!r}.") from exc


def _validated(df: pl.DataFrame, schema: dict, what: str) -> pl.DataFrame:
    """Select the schema's columns with their dtypes; reject missing columns and nulls."""
    missing = [c for c in schema if c not in df.columns]
    if missing:
        raise InputFormatError(
            f"{what} frame is missing column(s) {', '.join(missing)}; has {df.columns}.")
    out = {}
    for name, dtype in schema.items():
        col = df[name]
        if col.null_count():
            row = int(col.is_null().arg_max())
            raise InputFormatError(f"{what}: column {name!r} is null at row {row}.")
        out[name] = _cast(col, dtype, what)
    frame = pl.DataFrame(out)
    if "rel_level" in frame.columns and frame["rel_level"].is_nan().any():
        row = int(frame["rel_level"].is_nan().arg_max())
        raise InputFormatError(f"{what}: rel_level is NaN at row {row}.")
    return frame


def _cast(col: pl.Series, dtype, what: str) -> pl.Series:
    name = col.name
    if dtype == pl.String:
        if col.dtype == pl.String:
            return col
        if col.dtype.is_numeric() or col.dtype == pl.Categorical or col.dtype == pl.Enum:
            return col.cast(pl.String)
        raise InputFormatError(f"{what}: column {name!r} must hold strings; got {col.dtype}.")
    if dtype == pl.Int64 and col.dtype.is_float():
        frac = col != col.floor()
        if frac.any():
            row = int(frac.arg_max())
            raise InputFormatError(
                f"{what}: column {name!r} must hold integers; got {col[row]!r} at row {row}.")
    if dtype == pl.Float64 and col.dtype == pl.Boolean:
        raise InputFormatError(f"{what}: column {name!r} must be numeric; got Boolean.")
    cast = col.cast(dtype, strict=False)
    bad = cast.is_null()
    if bad.any():
        row = int(bad.arg_max())
        kind = "an integer" if dtype == pl.Int64 else "a number"
        raise InputFormatError(
            f"{what}: column {name!r} must hold {kind}; got {col[row]!r} at row {row}.")
    return cast
