"""Readers and containers for trec_eval's preference and judgment-group formats.

Three rel_info formats besides standard qrels (docs/reference/trec_eval.md §2.5):

* ``prefs`` (``-R prefs``): ``qid jg jsg docno rel_level``; five fields, ``rel_level``
  a real number. Rows are kept as given (a repeated line counts twice in trec_eval).
* ``qrels_prefs`` (``-R qrels_prefs``): a qrels-shaped file ``qid jg docno rel_level``
  read as prefs; every line gets judgment sub-group ``"0"`` and ``rel_level`` stays a
  real number (``1.5`` is 1.5).
* ``qrels_jg`` (``-R qrels_jg``): ``qid jg docno rel``; the second field is a judgment
  group, ``rel`` an integer; a repeated (qid, jg, docno) is an error.

Line syntax follows the package's TREC readers (:mod:`irmetrics.io.trec`): fields are
separated by runs of C whitespace (space, ``\t``, ``\v``, ``\f``, ``\r``); every data
line must have exactly the format's number of fields; blank lines and lines whose first
non-blank character is ``#`` are skipped (trec_eval's own parser rejects blank lines and
misreads consecutive comments; the package reads them the same way for every format); a
UTF-8 byte order mark is dropped; gzip is recognised by a ``.gz`` suffix or its magic
bytes. Values are parsed strictly: ``abc`` as a level is an error, not 0. Errors raise
:class:`~irmetrics.exceptions.InputFormatError` naming the file, the 1-based physical
line and the reason: ``<path>:<line>: <reason> (query_id '<q>', doc_id '<d>')``.
"""

from __future__ import annotations

import os
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import gzip

    import polars as pl
else:
    from irmetrics.lazy import LazyModule
    from irmetrics.lazy import polars as pl  # imported on first use

    gzip = LazyModule("gzip")  # with the first gzip file: the dict roads read none

from ..exceptions import DuplicateEntryError, InputFormatError


def prefs_schema() -> dict:
    """The columns of a preferences table and their polars types (a function: polars is
    imported on first use)."""
    return {"query_id": pl.String, "jg": pl.String, "jsg": pl.String, "doc_id": pl.String,
            "rel_level": pl.Float64}


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

    def __init__(self, df: pl.DataFrame, *, path: str | None = None,
                 source: str = "<DataFrame>"):
        self.df = _validated(df, prefs_schema(), path or source)
        self.path = path

    @classmethod
    def from_records(cls, records) -> "Prefs":
        """Build from ``(query_id, jg, jsg, doc_id, rel_level)`` tuples."""
        return cls(_frame_from_records(records, prefs_schema()), source="<records>")

    @classmethod
    def from_df(cls, df) -> "Prefs":
        """Build from a frame with columns ``query_id, jg, jsg, doc_id, rel_level``.

        Ids may be strings or integers; the frame is not modified.
        """
        return cls(_as_polars(df, "df"))

    @classmethod
    def read(cls, path) -> "Prefs":
        """Read a ``prefs`` file (five fields); see :func:`read_prefs`."""
        return read_prefs(path)

    def __len__(self) -> int:
        return self.df.height

    def __repr__(self) -> str:
        n_q = self.df["query_id"].n_unique()
        return f"Prefs({self.df.height} lines, {n_q} queries)"


class GroupedJudgments:
    """Base of the four-column judgment tables ``query_id, <group>, doc_id, relevance``.

    Subclasses name the group column (:attr:`GROUP`, e.g. ``jg`` or ``intent``), say
    what it is (:attr:`GROUP_NAME`) and how their file is read (:meth:`read`). A
    repeated ``(query_id, group, doc_id)`` is an error.
    """

    GROUP = "jg"
    GROUP_NAME = "judgment group"

    def __init__(self, df: pl.DataFrame, *, path: str | None = None,
                 source: str = "<DataFrame>", _checked: bool = False):
        self.df = _validated(df, self.schema(), path or source)
        if not _checked:  # a file's reader has checked, naming lines
            _check_unique_judgments(self.df, path or source, self.GROUP, self.GROUP_NAME)
        self.path = path

    @classmethod
    def schema(cls) -> dict:
        return {"query_id": pl.String, cls.GROUP: pl.String, "doc_id": pl.String,
                "relevance": pl.Int64}

    @classmethod
    def from_records(cls, records):
        """Build from ``(query_id, group, doc_id, relevance)`` tuples."""
        return cls(_frame_from_records(records, cls.schema()), source="<records>")

    @classmethod
    def from_df(cls, df):
        """Build from a frame with columns ``query_id, <group>, doc_id, relevance``.

        Ids may be strings or integers; the frame is not modified.
        """
        return cls(_as_polars(df, "df"))

    def __len__(self) -> int:
        return self.df.height

    @classmethod
    def _read_file(cls, path):
        """The table of a whitespace-separated file with the four columns."""
        path = os.fspath(path)
        fields = _read_fields(path, tuple(cls.schema()))
        parsed = fields["relevance"].cast(pl.Int64, strict=False)
        _fail_on(fields, parsed.is_null(), path, "relevance must be an integer", "relevance")
        df = fields.with_columns(parsed.alias("relevance"))
        _check_unique_judgments(df, path, cls.GROUP, cls.GROUP_NAME)
        return cls(df.drop("line"), path=path, _checked=True)


class JudgmentGroups(GroupedJudgments):
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

    @classmethod
    def read(cls, path) -> "JudgmentGroups":
        """Read a ``qrels_jg`` file; see :func:`read_qrels_jg`."""
        return read_qrels_jg(path)

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
    return Prefs(df.select(list(prefs_schema())), path=path)


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
    return JudgmentGroups._read_file(path)


# ----------------------------------------------------------------------------- helpers


def input_error(reason: str, *, path=None, line=None, query_id=None, doc_id=None,
                cls=InputFormatError) -> InputFormatError:
    """An input error in the package's one format: ``<path>:<line>: <reason> (ids)``."""
    try:
        return cls(reason, path=path, line=line, query_id=query_id, doc_id=doc_id)
    except TypeError:  # an exception class without the keyword fields
        where = "<input>" if path is None else str(path)
        if line is not None:
            where = f"{where}:{line}"
        ids = [f"{k} {v!r}" for k, v in (("query_id", query_id), ("doc_id", doc_id))
               if v is not None]
        return cls(f"{where}: {reason}" + (f" ({', '.join(ids)})" if ids else ""))


_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"


def read_text(path: str) -> str:
    """The text of a file: gzip (magic bytes or ``.gz``) undone, a UTF-8 byte order mark
    dropped, decoded as UTF-8; errors name the file (and the line of bad UTF-8)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise input_error(f"cannot read file: {exc.strerror or exc}", path=path) from exc
    if raw[:2] == _GZIP_MAGIC or (path.endswith(".gz") and raw):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise input_error(f"cannot decompress gzip data: {exc}", path=path) from exc
    if raw.startswith(_UTF8_BOM):
        raw = raw[len(_UTF8_BOM):]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise input_error("not valid UTF-8", path=path, line=_bad_utf8_line(raw)) from None


def _bad_utf8_line(raw: bytes) -> int:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return raw[: exc.start].count(b"\n") + 1
    return 0


def _read_fields(path: str, names: tuple) -> pl.DataFrame:
    """Split a whitespace-separated file into exactly ``len(names)`` String columns.

    Blank and comment lines are skipped; the result has the 1-based physical ``line``
    of every data line for error messages.
    """
    frame = split_fields(read_text(path), names, source=path)
    if frame.height == 0:
        raise input_error("no data lines (the file is empty or holds only blank and comment"
                          " lines)", path=path)
    return frame


def split_fields(text: str, names: tuple, *, source: str) -> pl.DataFrame:
    """Split whitespace-separated ``text`` into exactly ``len(names)`` String columns.

    Fields are separated by runs of C whitespace; blank lines and lines whose first
    non-blank character is ``#`` are skipped. The result has a ``line`` column (the
    1-based physical line of every data line) and one column per name, in file order,
    repeated lines included; it may have no rows.

    Raises
    ------
    InputFormatError
        A line with another number of fields (``source``, line and count named).

    Examples
    --------
    >>> split_fields("q 0 d 1\\n\\nq 0 e 0\\n", ("query_id", "iteration", "doc_id",
    ...              "relevance"), source="<text>")["doc_id"].to_list()
    ['d', 'e']
    """
    text = text.translate(_C_BLANKS)
    plain = _plain_fields(text, names)
    if plain is not None:
        return plain
    lines = pl.Series("text", [text]).str.split("\n").explode()
    if text.endswith("\n"):
        lines = lines.head(lines.len() - 1)
    frame = pl.DataFrame({"text": lines}).with_row_index("line", offset=1)
    stripped = frame["text"].str.strip_chars(" ")
    frame = frame.filter((stripped != "") & ~stripped.str.starts_with("#"))
    tokens = frame["text"].str.extract_all(r"[^ ]+")
    counts = tokens.list.len()
    bad = counts != len(names)
    if bad.any():
        first = int(bad.arg_true()[0])
        raise input_error(
            f"expected {len(names)} fields ({' '.join(names)}), found {counts[first]}",
            path=source, line=int(frame["line"][first]))
    return frame.select(
        pl.col("line"),
        *(tokens.list.get(i).alias(name) for i, name in enumerate(names)),
    )


def _plain_fields(text: str, names: tuple) -> pl.DataFrame | None:
    """:func:`split_fields` of a plain ``text`` — every line ``len(names)`` fields between
    single spaces, no blank or comment line (the usual TREC file) — read by polars' CSV
    reader, several times faster than splitting lines; None for any other text, which
    the general splitter reads (with its errors, on the right line)."""
    if not text:
        return None
    try:
        frame = pl.read_csv(text.encode(), separator=" ", has_header=False, quote_char=None,
                            infer_schema=False, new_columns=list(names))
    except pl.exceptions.PolarsError:  # a line with more fields
        return None
    lines = text.count("\n") + (not text.endswith("\n"))
    # A short line or an empty field (two spaces, a leading space) reads as null; a
    # blank line is dropped or null; a comment line starts with '#'.
    if frame.height != lines or frame.null_count().sum_horizontal().item() \
            or frame[names[0]].str.starts_with("#").any():
        return None
    return frame.with_row_index("line", offset=1).select(
        "line", *names)


def _fail_on(frame: pl.DataFrame, bad: pl.Series, path, what: str, column: str) -> None:
    if bad.any():
        first = int(bad.arg_true()[0])
        raise input_error(f"{what}; got {frame[column][first]!r}", path=path,
                          line=int(frame["line"][first]), query_id=frame["query_id"][first],
                          doc_id=frame["doc_id"][first])


def _parse_level(fields: pl.DataFrame, path: str) -> pl.Series:
    level = fields["rel_level"].cast(pl.Float64, strict=False)
    _fail_on(fields, level.is_null() | level.is_nan().fill_null(False), path,
             "rel_level must be a number (not NaN)", "rel_level")
    return level.alias("rel_level")


def _check_unique_judgments(df: pl.DataFrame, source, group: str = "jg",
                            group_name: str = "judgment group") -> None:
    """A repeated (query_id, <group>, doc_id) is an error, as in trec_eval's qrels_jg
    reader (``group`` is the column of the judgment group, or of the intent)."""
    first_seen = pl.struct("query_id", group, "doc_id").is_first_distinct()
    repeats = df.with_row_index("__row", offset=1).filter(~first_seen)
    if not repeats.height:
        return
    row = repeats.row(0, named=True)
    earlier = df.with_row_index("__row", offset=1).filter(
        (pl.col("query_id") == row["query_id"]) & (pl.col(group) == row[group])
        & (pl.col("doc_id") == row["doc_id"])).row(0, named=True)
    unit, key = ("line", "line") if "line" in df.columns else ("row", "__row")
    raise input_error(
        f"duplicate (query_id, {group}, doc_id) for {group_name} {row[group]!r}; first seen"
        f" on {unit} {earlier[key]} (trec_eval: duplicate docs)",
        path=source, line=int(row[key]), query_id=row["query_id"], doc_id=row["doc_id"],
        cls=DuplicateEntryError)


def _frame_from_records(records, schema: dict) -> pl.DataFrame:
    rows = [tuple(r) for r in records]
    for i, r in enumerate(rows):
        if len(r) != len(schema):
            raise input_error(f"expected {len(schema)} fields ({' '.join(schema)}), found"
                              f" {len(r)}", path="<records>", line=i + 1)
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
        raise TypeError(f"`{what}` must be a polars DataFrame or convertible to one;"
                        f" got {type(df)!r}.") from exc


def _validated(df: pl.DataFrame, schema: dict, source: str) -> pl.DataFrame:
    """Select the schema's columns with their dtypes; reject missing columns, nulls, NaN."""
    missing = [c for c in schema if c not in df.columns]
    if missing:
        raise input_error(f"missing column(s) {', '.join(missing)}; has {df.columns}",
                          path=source)
    out = {}
    for name, dtype in schema.items():
        col = df[name]
        if col.null_count():
            raise input_error(f"missing {name}", path=source,
                              line=int(col.is_null().arg_max()) + 1)
        out[name] = _cast(col, dtype, source)
    frame = pl.DataFrame(out)
    if "rel_level" in frame.columns and frame["rel_level"].is_nan().any():
        row = int(frame["rel_level"].is_nan().arg_true()[0])
        raise input_error("rel_level must be a number (not NaN)", path=source, line=row + 1,
                          query_id=frame["query_id"][row], doc_id=frame["doc_id"][row])
    return frame


def _cast(col: pl.Series, dtype, source: str) -> pl.Series:
    name = col.name
    if dtype == pl.String:
        if col.dtype == pl.String:
            return col
        if col.dtype.is_integer() or col.dtype in (pl.Categorical, pl.Enum):
            return col.cast(pl.String)
        raise input_error(f"{name} must hold strings or integers; got dtype {col.dtype}",
                          path=source)
    kind = "an integer" if dtype == pl.Int64 else "a number"
    if col.dtype == pl.Boolean:
        raise input_error(f"{name} must be {kind}; got dtype Boolean", path=source)
    cast = col.cast(dtype, strict=False)
    bad = cast.is_null()
    if dtype == pl.Int64 and col.dtype.is_float():
        bad = bad | (col != col.floor()).fill_null(True)
    if bad.any():
        row = int(bad.arg_max())
        raise input_error(f"{name} must be {kind}; got {col[row]!r}", path=source, line=row + 1)
    return cast
