"""Reading and writing TREC qrels and run files (polars-based, vectorised).

File formats
------------
qrels
    ``query_id iteration doc_id relevance``: exactly 4 fields per line.
run
    ``query_id iteration doc_id rank score run_id [ignored...]``: at least 6 fields; fields
    after the sixth are ignored (as trec_eval does).

Reading rules (shared by both formats)
--------------------------------------
* Fields are separated by any run of the C-locale whitespace bytes space, ``\\t``, ``\\v``,
  ``\\f`` and ``\\r``; ``\\n`` ends a line. Leading/trailing whitespace and CRLF line ends
  are fine. Bytes >= 0x80 are not whitespace, so UTF-8 ids are fine. The file must be
  valid UTF-8 (``encoding="utf-8"``, the default), or is read byte by byte as Latin-1
  (``encoding="latin-1"``: every byte is one character, U+0000-U+00FF, so the ids keep
  their byte order and ``id.encode("latin-1")`` gives the bytes of the file back); a
  UTF-8 byte order mark at the very start of the file is dropped in both cases.
  Non-ASCII spaces (U+00A0, U+3000, ...) separate nothing; a wrong field count on a
  line holding one says so.
* Files that are no TREC text fail at their first bad line with the actual cause: NUL
  bytes (binary files, UTF-16 without a byte order mark), a UTF-16 byte order mark,
  invalid UTF-8 (binary data; Latin-1 ids raise :class:`NotUtf8Error`, which
  :func:`~irmetrics.evaluate` answers by reading both files as Latin-1), and lines
  ended by a carriage return only (a file that would otherwise be one long line). The
  reading stops at the first 16 MiB piece holding a NUL byte or invalid UTF-8, so a
  binary file or ``/dev/zero`` costs one piece of memory and time; and the first MiB of
  a large file is parsed on its own first, so a text file that is wrong from its first
  lines fails without a parse of all of it.
* A first data line with the other format's shape (a qrels line where the run is
  expected, or the reverse) is reported as "qrels and run swapped".
* Runs: blank and whitespace-only lines are skipped, and a line whose first
  non-whitespace character is ``#`` is a comment, anywhere (trec_eval's results reader
  does the same).
* Qrels follow trec_eval's stricter reader, never more permissive: a comment is a line
  whose very first byte is ``#``, followed by a data line. What trec_eval rejects or
  crashes on is an error naming the line: a blank or whitespace-only line, a comment
  right after a comment, a comment as the last line, and an indented ``#`` line (trec_eval
  would read it as data). A ``#`` anywhere else is ordinary data.
* Nothing else is dropped silently.
* Ids are kept as the exact strings written: ``"0301"`` and ``"301"`` differ.
* ``relevance`` must be an integer: optional sign and decimal digits (``-1`` = in the pool
  but unjudged). trec_eval's ``atol`` would read ``1.9`` as 1 and ``abc`` as 0; we refuse.
* ``score`` must be a finite decimal number, as C ``strtod`` reads it: optional sign, digits
  with an optional ``.``, optional exponent (``1e2``, ``-3.5``, ``.5e1``, ``+3.5``, ``5.``).
  Deviations from trec_eval's ``atof``: NaN and infinities (and overflowing values such as
  ``1e400``) are errors, hexadecimal floats (``0x1p3``) are errors, and non-numeric or
  partially numeric text (``abc``, ``1,5``) is an error instead of a silent 0 or prefix.
* ``rank`` is ignored by trec_eval; it is kept for round trips as Int64, null when the
  field is not an integer.
* ``run_id`` of a Run (``Run.name``) is the run_id field of the last data line in file
  order (trec_eval's ``runid`` rule).
* Duplicate (query_id, doc_id) pairs raise :class:`DuplicateEntryError` unless
  ``on_duplicate`` is ``"first"``, ``"last"`` or ``"max"`` (max relevance for qrels, max
  score for runs; ties keep the first); the kept row stays at its own position in file
  order. The ``iteration`` field does not make pairs distinct.
* Errors raise :class:`InputFormatError` naming the file, the 1-based physical line number
  (every line counts, comments and blank lines included) and the reason; the FIRST bad line
  in file order is reported. An unreadable or missing file, undecodable gzip data and a file
  without any data line also raise :class:`InputFormatError` (with ``line=None``).

Sources
-------
``path`` may be a str or ``os.PathLike``; ``"-"`` reads ``sys.stdin.buffer`` (reported as
``<stdin>`` in errors). Gzip input is detected by the ``.gz`` suffix or the gzip magic
bytes. :func:`read_qrels_bytes` and :func:`read_run_bytes` parse bytes already in memory.
:func:`read_utf8_or_latin1` reads a file as UTF-8, or as Latin-1 when it is not UTF-8
(what :func:`~irmetrics.evaluate` does with paths).

Implementation
--------------
No path loops over lines in Python:

1. fast: the bytes go to ``polars.read_csv`` with the typed schema (single-byte separator,
   no quoting); the result is verified (no partially empty rows, finite scores, no
   ``#``-first query id). Rows of nulls are blank lines and are dropped.
2. string: otherwise tabs/``\\v``/``\\f``/``\\r`` become spaces and polars reads every line
   as string fields; leading or repeated blanks make numpy collapse the whitespace first
   (newlines untouched, so line numbers survive). Comment and blank lines are dropped,
   field counts and numbers are checked vectorised, and the first bad line is reported.
3. general: a polars list-based tokenizer, only used if polars refuses valid UTF-8 input.

The numeric checks rely on polars' float/int parsers accepting exactly the documented
grammar; ``tests/io/test_io_trec.py`` checks that, and checks all paths against a plainly
written line-by-line reference reader.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import mmap
import os
import re
import stat
import sys
import unicodedata
import zlib
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    import gzip

    import polars as pl
else:
    from irmetrics.lazy import LazyModule
    from irmetrics.lazy import polars as pl  # imported on first use

    gzip = LazyModule("gzip")  # with the first file read: the dict roads read none

from irmetrics.checks import check_choice, check_int, parameter_error
# (UTF8, LATIN1, ENCODINGS, RELEVANCE_TYPES live in schema: the dict road reads them)
from .schema import (
    ENCODINGS,
    LATIN1,  # noqa: F401  (read from here by irmetrics.io.trec and others)
    RELEVANCE_TYPES,
    UTF8,
    DUPLICATE_POLICIES,
    FLOAT_LABEL_HINT,
    QRELS_DTYPES,
    RUN_DTYPES,
    polars_schema,
    resolve_duplicates,
)
from irmetrics.exceptions import DuplicateEntryError, InputFormatError, NotUtf8Error, brief_repr

__all__ = [
    "parse_qrels_source",
    "parse_run_source",
    "parse_qrels_bytes",
    "parse_run_bytes",
    "write_qrels_frame",
    "write_run_frame",
    "read_source",
    "plain_chunks",
    "raw_chunks",
    "chunk_frame",
    "chunk_bytes_for",
]

STDIN = "-"
_STDIN_NAME = "<stdin>"
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
# C isspace() minus "\n": the field separators.
_OTHER_WS = (b"\t", b"\r", b"\x0b", b"\x0c")
_TO_SPACE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")

_INT_RE = r"^[+-]?[0-9]+$"
_FLOAT_RE = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_NONFINITE_RE = r"(?i)^[+-]?(?:inf|infinity|nan)$"
_HEX_RE = r"(?i)^[+-]?0x"
_WRITE_BAD_ID_RE = r"[ \t\n\x0B\x0C\r]"



@dataclass(frozen=True)
class _Layout:
    kind: str  # "qrels" | "run"
    fields: tuple[str, ...]
    exact: bool  # exactly len(fields) fields (qrels) or at least (run)
    dtypes: dict  # {field: name of its polars type}

    @cached_property
    def schema(self) -> dict:
        """``{field: polars type}``, made on first use (polars is imported then)."""
        return polars_schema(self.dtypes)

    @property
    def n(self) -> int:
        return len(self.fields)

    def expectation(self) -> str:
        words = " ".join(self.fields)
        if self.exact:
            return f"expected {self.n} fields ({words})"
        return f"expected at least {self.n} fields ({words})"


_QRELS = _Layout("qrels", tuple(QRELS_DTYPES), True, QRELS_DTYPES)
#: Qrels with graded float labels (``relevance="float"``).
_QRELS_FLOAT = _Layout("qrels", tuple(QRELS_DTYPES), True,
                       {**QRELS_DTYPES, "relevance": "Float64"})
_RUN = _Layout("run", tuple(RUN_DTYPES), False, RUN_DTYPES)


# --------------------------------------------------------------------------------------
# frames in, frames out (the containers wrap them: Qrels.read, Run.write, ...)
# --------------------------------------------------------------------------------------


def parse_qrels_source(path: str | os.PathLike, *, on_duplicate: str = "error",
                       encoding: str = UTF8, relevance: str = "int") -> tuple[pl.DataFrame, str]:
    """``(frame, name)`` of a TREC qrels file (see :func:`irmetrics.io.trec.read_qrels`).

    Parameters
    ----------
    path : str or os.PathLike
        File to read; ``"-"`` reads standard input; gzip data is decompressed.
    on_duplicate, encoding, relevance
        As for :func:`irmetrics.io.trec.read_qrels`.

    Returns
    -------
    tuple of (polars.DataFrame, str)
        The frame (columns of :data:`~irmetrics.containers.schema.QRELS_SCHEMA`, Float64
        relevance for ``relevance="float"``) in file order, and the path as given (``"-"``
        for standard input).

    Raises
    ------
    InputFormatError
        With the file, the 1-based line and the reason (see the module notes).
    ParameterError
        An option is not one of its choices.

    Examples
    --------
    >>> import gzip, os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "qrels.gz")
    ...     with open(path, "wb") as f:
    ...         _ = f.write(gzip.compress(b"q1 0 d1 1\\nq1 0 d2 0\\n"))
    ...     df, name = parse_qrels_source(path)
    ...     name == path
    True
    >>> df.rows()
    [('q1', '0', 'd1', 1), ('q1', '0', 'd2', 0)]
    """
    check_choice("on_duplicate", on_duplicate, DUPLICATE_POLICIES)
    check_choice("encoding", encoding, ENCODINGS)
    check_choice("relevance", relevance, RELEVANCE_TYPES)
    data, name = read_source(path, encoding)
    df = _parse_qrels(_as_utf8(data, encoding), name, on_duplicate, relevance)
    return df, (name if name != _STDIN_NAME else STDIN)


def parse_run_source(path: str | os.PathLike, *, on_duplicate: str = "error",
                     encoding: str = UTF8) -> tuple[pl.DataFrame, str | None, str]:
    """``(frame, run_id, name)`` of a TREC run file (see :func:`irmetrics.io.trec.read_run`).

    Parameters
    ----------
    path : str or os.PathLike
        File to read; ``"-"`` reads standard input; gzip data is decompressed.
    on_duplicate, encoding
        As for :func:`irmetrics.io.trec.read_run`.

    Returns
    -------
    tuple of (polars.DataFrame, str or None, str)
        The frame (columns of :data:`~irmetrics.containers.schema.RUN_SCHEMA`) in file
        order, the run_id of the last data line, and the path as given (``"-"`` for
        standard input).

    Raises
    ------
    InputFormatError
        With the file, the 1-based line and the reason (see the module notes).
    ParameterError
        An option is not one of its choices.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "run.txt")
    ...     with open(path, "wb") as f:
    ...         _ = f.write(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1e0 bm25\\n")
    ...     df, run_id, name = parse_run_source(path)
    >>> df["score"].to_list(), run_id
    ([2.5, 1.0], 'bm25')
    """
    check_choice("on_duplicate", on_duplicate, DUPLICATE_POLICIES)
    check_choice("encoding", encoding, ENCODINGS)
    data, name = read_source(path, encoding)
    df, run_id = _parse(_as_utf8(data, encoding), _RUN, name, on_duplicate)
    return df, run_id, (name if name != _STDIN_NAME else STDIN)


def parse_qrels_bytes(data: bytes, *, source: str = "<bytes>", on_duplicate: str = "error",
                      encoding: str = UTF8, relevance: str = "int") -> pl.DataFrame:
    """The frame of qrels already in memory (plain or gzip bytes).

    Parameters
    ----------
    data : bytes
        The qrels text, plain or gzip-compressed (detected by its magic bytes).
    source : str
        Names the data in error messages, in place of a file name.
    on_duplicate, encoding, relevance
        As for :func:`irmetrics.io.trec.read_qrels`.

    Returns
    -------
    polars.DataFrame
        As :func:`parse_qrels_source`'s frame.

    Raises
    ------
    InputFormatError
        With ``source``, the 1-based line and the reason.
    ParameterError
        ``data`` is not bytes, or an option is not one of its choices.

    Examples
    --------
    >>> parse_qrels_bytes(b"q1 0 d1 0.5\\n", relevance="float").rows()
    [('q1', '0', 'd1', 0.5)]
    >>> parse_qrels_bytes(b"q1 0 d1 0.5\\n", source="mem")
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.InputFormatError: mem:1: relevance must be an integer, found '0.5' (graded float labels: relevance='float', or --float-relevance) (query_id 'q1', doc_id 'd1')
    """
    check_choice("on_duplicate", on_duplicate, DUPLICATE_POLICIES)
    check_choice("encoding", encoding, ENCODINGS)
    check_choice("relevance", relevance, RELEVANCE_TYPES)
    data = _maybe_gunzip(_as_bytes(data), source, False, encoding)
    return _parse_qrels(_as_utf8(data, encoding), source, on_duplicate, relevance)


def parse_run_bytes(data: bytes, *, source: str = "<bytes>", on_duplicate: str = "error",
                    encoding: str = UTF8) -> tuple[pl.DataFrame, str | None]:
    """``(frame, run_id)`` of a run already in memory (plain or gzip bytes).

    Parameters
    ----------
    data : bytes
        The run text, plain or gzip-compressed (detected by its magic bytes).
    source : str
        Names the data in error messages, in place of a file name.
    on_duplicate, encoding
        As for :func:`irmetrics.io.trec.read_run`.

    Returns
    -------
    tuple of (polars.DataFrame, str or None)
        As the first two of :func:`parse_run_source`.

    Raises
    ------
    InputFormatError
        With ``source``, the 1-based line and the reason.
    ParameterError
        ``data`` is not bytes, or an option is not one of its choices.

    Examples
    --------
    >>> df, run_id = parse_run_bytes(b"q1 Q0 d1 1 2.5 a\\n# a comment\\nq1 Q0 d2 2 1 b\\n")
    >>> df.select("doc_id", "score").rows(), run_id      # run_id: the last line's
    ([('d1', 2.5), ('d2', 1.0)], 'b')
    """
    check_choice("on_duplicate", on_duplicate, DUPLICATE_POLICIES)
    check_choice("encoding", encoding, ENCODINGS)
    data = _maybe_gunzip(_as_bytes(data), source, False, encoding)
    return _parse(_as_utf8(data, encoding), _RUN, source, on_duplicate)


def is_regular_path(path) -> bool:
    """Whether ``path`` names a regular file (one that can be read twice)."""
    return _is_regular_path(path)


def write_qrels_frame(df: pl.DataFrame, path: str | os.PathLike) -> None:
    """Write a qrels frame as ``query_id iteration doc_id relevance`` lines.

    Parameters
    ----------
    df : polars.DataFrame
        The columns of :data:`~irmetrics.containers.schema.QRELS_SCHEMA`, in that order
        (every column is written, single spaces between), rows in the order written.
    path : str or os.PathLike
        ``.gz`` suffix compresses; ``"-"`` writes to standard output.

    Raises
    ------
    ParameterError
        An id is empty or holds whitespace, or a query id starts with ``#`` (it would not
        read back).

    Examples
    --------
    >>> import os, tempfile
    >>> df = pl.DataFrame({"query_id": ["q1"], "iteration": ["0"], "doc_id": ["d1"],
    ...                    "relevance": [2]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "qrels.txt")
    ...     write_qrels_frame(df, path)
    ...     with open(path) as f:
    ...         f.read()
    'q1 0 d1 2\\n'
    >>> write_qrels_frame(df.with_columns(query_id=pl.lit("q 1")), os.devnull)
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `query_id values` must be non-empty and free of whitespace to be written in TREC format; got 'q 1'.
    """
    _check_writable(df, ("query_id", "iteration", "doc_id"))
    _write_frame(df, path)


def write_run_frame(df: pl.DataFrame, path: str | os.PathLike, *, run_id: str | None = None) -> None:
    """Write a run frame as ``query_id iteration doc_id rank score run_id`` lines (see
    :func:`irmetrics.io.trec.write_run` for the order when ranks are missing).

    Parameters
    ----------
    df : polars.DataFrame
        The columns of :data:`~irmetrics.containers.schema.RUN_SCHEMA`, in that order.
    path : str or os.PathLike
        ``.gz`` suffix compresses; ``"-"`` writes to standard output.
    run_id : str, optional
        Written on every line instead of the ``run_id`` column.

    Raises
    ------
    ParameterError
        ``run_id`` is empty or holds whitespace; an id is empty or holds whitespace, or a
        query id starts with ``#``.

    Examples
    --------
    >>> import os, tempfile
    >>> df = pl.DataFrame({"query_id": ["q1", "q1"], "iteration": ["Q0", "Q0"],
    ...                    "doc_id": ["d1", "d2"], "rank": [None, None], "score": [0.5, 1.5],
    ...                    "run_id": ["x", "x"]}, schema=polars_schema(RUN_DTYPES))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "run.txt")
    ...     write_run_frame(df, path, run_id="bm25")
    ...     with open(path) as f:
    ...         f.read()      # no ranks: score descending, ranked 1..n
    'q1 Q0 d2 1 1.5 bm25\\nq1 Q0 d1 2 0.5 bm25\\n'
    """
    if run_id is not None:
        if not isinstance(run_id, str) or not run_id or any(c in run_id for c in " \t\n\x0b\x0c\r"):
            raise parameter_error("run_id", "a non-empty string without whitespace", run_id)
        df = df.with_columns(run_id=pl.lit(run_id, dtype=pl.String))
    if df["rank"].null_count():
        df = (
            df.with_row_index("_row")
            .with_columns(
                _qpos=pl.col("_row").min().over("query_id"),
                _key=pl.col("score") + 0.0,  # -0.0 ties with 0.0, as in trec_eval
            )
            .sort(["_qpos", "_key", "doc_id"], descending=[False, True, True], maintain_order=True)
            .with_columns(rank=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query_id"))
            .select(list(RUN_DTYPES))
        )
    _check_writable(df, ("query_id", "iteration", "doc_id", "run_id"))
    _write_frame(df, path)


# --------------------------------------------------------------------------------------
# sources
# --------------------------------------------------------------------------------------


def _as_bytes(data: Any) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise parameter_error("data", "bytes", type(data).__name__)


def read_source(path: Any, encoding: str = UTF8) -> tuple[bytes, str]:
    """Return (raw bytes, name for messages); decompresses gzip.

    The bytes are screened as they arrive (see :func:`_read_screened`): a binary file,
    UTF-16 text or an endless device such as ``/dev/zero`` stops the reading after one
    piece, and the parser then reports the first bad line.

    Parameters
    ----------
    path : str or os.PathLike
        File to read; ``"-"`` reads standard input. Gzip data is found by the ``.gz``
        suffix or the magic bytes.
    encoding : {"utf-8", "latin-1"}
        Under ``"utf-8"``, invalid UTF-8 also stops the reading after its piece.

    Returns
    -------
    tuple of (bytes, str)
        The (decompressed) bytes and the path as given (``"<stdin>"`` for standard
        input).

    Raises
    ------
    InputFormatError
        The file cannot be read (with the system's reason) or its gzip data is broken.
    ParameterError
        ``path`` is not a str or os.PathLike.

    Examples
    --------
    >>> import gzip, os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "qrels")         # gzip data without the suffix
    ...     with open(path, "wb") as f:
    ...         _ = f.write(gzip.compress(b"q1 0 d1 1\\n"))
    ...     data, name = read_source(path)
    >>> data, name == path
    (b'q1 0 d1 1\\n', True)
    """
    try:
        p = os.fspath(path)
    except TypeError:
        raise parameter_error("path", "a str or os.PathLike (or '-' for stdin)", path) from None
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if p == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            return (_maybe_gunzip(sys.stdin.read().encode("utf-8"), _STDIN_NAME, False,
                                  encoding), _STDIN_NAME)
        return _read_screened(stream, _STDIN_NAME, False, encoding), _STDIN_NAME
    try:
        with open(p, "rb") as f:
            return _read_screened(f, p, p.endswith(".gz"), encoding), p
    except OSError as e:
        reason = e.strerror or str(e)
        raise InputFormatError(f"cannot read file: {reason}", path=p) from e


#: Bytes the full readers screen at a time for NUL bytes and invalid UTF-8.
SCREEN_BYTES = 16 << 20


def _read_screened(raw, name: str, by_suffix: bool, encoding: str = UTF8) -> bytes:
    """Read a binary stream (gzip-decompressed when it starts with the gzip magic, or
    when ``by_suffix``) to its end -- or only up to the end of the first piece of
    :data:`SCREEN_BYTES` that holds a NUL byte or (``encoding="utf-8"``) invalid UTF-8:
    the file cannot be read past that line anyway, and memory and time stay bounded for
    binary files and endless devices."""
    utf8 = encoding == UTF8
    head = raw.read(SCREEN_BYTES)
    gzipped = head[:2] == _GZIP_MAGIC or (by_suffix and bool(head))
    if not gzipped:
        if _unreadable(head, None, utf8) or len(head) < SCREEN_BYTES:
            return head
        if _is_regular(raw):  # the whole file in one allocation; the parser checks it
            raw.seek(0)
            return raw.read()
        return _read_pieces(raw, [head], utf8)
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(head) if len(head) < SCREEN_BYTES
                           else _Rejoined(head, raw)) as stream:
            return _read_pieces(stream, [], utf8)
    except (OSError, EOFError, zlib.error) as e:
        raise InputFormatError(f"cannot decompress gzip data: {e}", path=name) from e


def _read_pieces(stream, pieces: list, utf8: bool) -> bytes:
    decoder = codecs.getincrementaldecoder("utf-8")()
    for piece in pieces:
        _unreadable(piece, decoder, utf8)
    while True:
        piece = stream.read(SCREEN_BYTES)
        if not piece:
            break
        pieces.append(piece)
        if _unreadable(piece, decoder, utf8):
            break
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _unreadable(piece: bytes, decoder, utf8: bool = True) -> bool:
    """Whether ``piece`` holds a NUL byte or (``utf8``) invalid UTF-8 (``decoder``
    carries a sequence cut at the previous piece's end; None for a first piece)."""
    if b"\x00" in piece:
        return True
    if not utf8:
        return False
    if decoder is None:
        decoder = codecs.getincrementaldecoder("utf-8")()
    if piece.isascii() and not decoder.getstate()[0]:
        return False
    try:
        decoder.decode(piece)
    except UnicodeDecodeError:
        return True
    return False


def _is_regular_path(path) -> bool:
    """Whether ``path`` names a regular file (which can be read twice): False for
    ``"-"``, pipes and devices; True for a path that cannot be stat'ed (the reader
    then reports why)."""
    try:
        p = os.fspath(path)
        return p != STDIN and stat.S_ISREG(os.stat(p).st_mode)
    except (TypeError, OSError):
        return True  # not readable at all: the first read names the problem


def _is_regular(f) -> bool:
    try:
        return stat.S_ISREG(os.fstat(f.fileno()).st_mode)
    except (OSError, AttributeError, io.UnsupportedOperation):
        return False


class _Rejoined(io.RawIOBase):
    """``head`` followed by the rest of ``stream``, as one readable stream."""

    def __init__(self, head: bytes, stream):
        self._head, self._stream = memoryview(head), stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _maybe_gunzip(data: bytes, name: str, by_suffix: bool, encoding: str = UTF8) -> bytes:
    """Decompress gzip data (recognised by its magic bytes, or by a ``.gz`` name),
    screened like a file (:func:`_read_screened`)."""
    if not (data[:2] == _GZIP_MAGIC or (by_suffix and data)):
        return data
    return _read_screened(io.BytesIO(data), name, by_suffix, encoding)


def _as_utf8(data: bytes, encoding: str) -> bytes:
    """The file's bytes as the parser reads them: unchanged for UTF-8; for Latin-1 each
    byte >= 0x80 becomes its UTF-8 pair (U+0080-U+00FF), so the ids are the Latin-1
    decoding of the file while line breaks, separators and numbers stay where they were.
    A leading UTF-8 byte order mark is dropped first, as on the UTF-8 road, and a UTF-16
    one is kept so that the parser names it."""
    if encoding == UTF8 or data.isascii():
        return data
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM):]
    elif data[:2] in _UTF16_BOMS:
        return data
    return data.decode("latin-1").encode("utf-8")


#: Latin-1 decoding of UTF-8 bytes, as hex pairs: byte ``b`` >= 0x80 is U+00bb, whose
#: UTF-8 form is ``C2 b`` (b < 0xC0) or ``C3 b-0x40``.
_LATIN1_HEX = {f"{b:02x}": f"c2{b:02x}" if b < 0xC0 else f"c3{b - 0x40:02x}"
               for b in range(0x80, 0x100)}


def latin1_ids(ids: pl.Series) -> pl.Series:
    """The Latin-1 view of str ids: each id's UTF-8 bytes decoded as Latin-1, i.e. the
    str :func:`read_run` gives with ``encoding="latin-1"`` for a file holding those
    bytes. ASCII ids are unchanged. Vectorised (polars hex strings, one pass).

    >>> latin1_ids(pl.Series(["café", "d1"])).to_list()
    ['cafÃ©', 'd1']
    """
    wide = ids.str.len_bytes() != ids.str.len_chars()
    if not wide.any():
        return ids
    where = wide.arg_true()
    converted = (ids.gather(where).str.encode("hex").str.extract_all("..")
                 .list.eval(pl.element().replace(_LATIN1_HEX)).list.join("")
                 .str.decode("hex").cast(pl.String))
    return ids.clone().scatter(where, converted)


# --------------------------------------------------------------------------------------
# chunked reading of plain files (the fast road into the engine)
# --------------------------------------------------------------------------------------

#: Bytes read per chunk by :func:`plain_chunks`: large enough that polars' per-call
#: overhead vanishes, small enough that a chunk's strings stay a few tens of MiB.
PLAIN_CHUNK_BYTES = 16 << 20

#: The smallest chunk :func:`chunk_bytes_for` gives, however many threads read.
MIN_CHUNK_BYTES = 2 << 20


def chunk_bytes_for(threads: int) -> int:
    """Bytes per chunk when ``threads`` threads parse chunks at once: the default
    :data:`PLAIN_CHUNK_BYTES` up to two threads, then smaller (never under
    :data:`MIN_CHUNK_BYTES`), so that the ``threads + 1`` chunks in flight take about as
    much memory as three default chunks. No result depends on where chunks end.

    >>> chunk_bytes_for(1) == chunk_bytes_for(2) == PLAIN_CHUNK_BYTES
    True
    >>> chunk_bytes_for(16) == MIN_CHUNK_BYTES
    True
    """
    return min(PLAIN_CHUNK_BYTES, max(MIN_CHUNK_BYTES, 2 * PLAIN_CHUNK_BYTES // threads))


#: Per format: the schema read, whether lines have exactly that many fields, and the
#: columns handed on. Fields no one needs are still read, so that an empty one (from a
#: doubled space) shows as a null instead of shifting the columns; the rank is read as
#: an integer, which is cheaper than a string (a run with other ranks is not plain).
_PLAIN = {
    "run": (_RUN, ("query_id", "doc_id", "score", "run_id")),
    "qrels": (_QRELS, ("query_id", "doc_id", "relevance")),
}
#: Positions of the run fields handed on (query_id, doc_id, score, run_id).
_RUN_FIELDS = [0, 2, 4, 5]
#: Bytes whose presence makes a chunk not plain: other whitespace, comment marks, and
#: NUL (binary or UTF-16 data, which the full reader names).
_NOT_PLAIN_BYTES = (b"\t", b"\r", b"\x0b", b"\x0c", b"#", b"\x00")


class NotPlain(Exception):
    """Raised by :func:`plain_chunks` when a file needs the full reader (internal).

    When one chunk is the reason, ``data`` holds its bytes and ``first_line`` the file
    line it starts on (every earlier chunk was plain: one line per row), so that a bad
    line can be explained without reading the whole file (:func:`chunk_error`).
    """

    def __init__(self, data: bytes | None = None, first_line: int = 1):
        super().__init__()
        self.data, self.first_line = data, first_line


def chunk_error(signal: NotPlain, kind: str, source: str
                ) -> tuple[InputFormatError, pl.DataFrame | None] | None:
    """The full reader's error for the first bad line of the chunk that made the file not
    plain, numbered in the file, and the chunk's lines before it (as :func:`chunk_frame`
    frames them, None when there are none); None when the chunk has no such line
    (comments, tabs, Latin-1 ids: the file needs the full reader), when the error is a
    duplicate (its message numbers both lines) or the lines before it are not plain."""
    if signal.data is None:
        return None
    layout = _QRELS if kind == "qrels" else _RUN
    try:
        _parse(signal.data, layout, source, "error")
    except (NotUtf8Error, DuplicateEntryError):
        return None
    except InputFormatError as error:
        if error.line is None:
            return None
        offset = 0
        for _ in range(error.line - 1):
            offset = signal.data.index(b"\n", offset) + 1
        try:
            before = chunk_frame(signal.data[:offset], kind)[0] if offset else None
        except NotPlain:
            return None
        return type(error)(error.reason, path=source, line=error.line + signal.first_line - 1,
                           query_id=error.query_id, doc_id=error.doc_id), before
    return None


def plain_chunks(path: str | os.PathLike, kind: str, *, chunk_bytes: int | None = None,
                 on_read=None):
    """Yield a *plain* run or qrels file (``kind``) as frames, one per chunk of whole
    lines, in file order: ``query_id``, ``doc_id``, ``score``, ``run_id`` for a run;
    ``query_id``, ``doc_id``, ``relevance`` for qrels.

    Plain means what :func:`read_run` and :func:`read_qrels` read on their typed fast
    path with nothing to fix: fields separated by single spaces, no leading blanks, no
    tabs, carriage returns, ``\\v``, ``\\f``, ``#`` or NUL bytes, no blank lines, no byte order
    mark starting a chunk, valid UTF-8, at least six fields per run line (an integer
    rank) and exactly four per qrels line, a finite score or an integer label on every
    line. The values are the ones the
    full readers return for the same lines (tests check this). Anything else raises
    :class:`NotPlain` (an internal signal, not a user error): the caller then reads the
    file with the full reader, which explains any error with its line. Duplicate pairs
    are not checked here. Only regular files can be plain: standard input, pipes and
    FIFOs cannot be read twice. (The bounded-memory road reads run files more widely:
    :func:`raw_chunks` and :func:`chunk_frame`, whose chunks may hold tabs, carriage
    returns, blank and comment lines.)

    Only one chunk's strings are parsed at a time, which keeps peak memory at a
    fraction of the file size. ``on_read``, if given, is called with the number of bytes
    of the file read so far (compressed bytes for a gzip file) after each chunk is read.

    Parameters
    ----------
    path : str or os.PathLike
        A regular file, plain or gzip.
    kind : {"run", "qrels"}
    chunk_bytes : int, optional
        Bytes read per chunk (then extended to the end of its line); by default
        :data:`PLAIN_CHUNK_BYTES`.
    on_read : callable, optional
        ``on_read(bytes_read)`` after each chunk.

    Yields
    ------
    polars.DataFrame
        One frame per chunk, one row per line.

    Raises
    ------
    NotPlain
        The file is not plain (raised when the first chunk that is not is reached).

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "run.txt")
    ...     with open(path, "wb") as f:
    ...         _ = f.write(b"q1 Q0 d1 1 2.5 a\\nq1 Q0 d2 2 1.0 a\\n")
    ...     chunks = [f.rows() for f in plain_chunks(path, "run", chunk_bytes=10)]
    ...     with open(path, "ab") as f:
    ...         _ = f.write(b"# a comment\\n")
    ...     try:
    ...         _ = list(plain_chunks(path, "run"))
    ...     except NotPlain:
    ...         print("not plain: read it with the full reader")
    not plain: read it with the full reader
    >>> chunks
    [[('q1', 'd1', 2.5, 'a')], [('q1', 'd2', 1.0, 'a')]]
    """
    first_line = 1
    for block in raw_chunks(path, chunk_bytes=chunk_bytes, on_read=on_read):
        try:
            frame = _plain_frame(block, kind)
        except NotPlain:
            raise NotPlain(block, first_line) from None
        first_line += frame.height  # a plain chunk has one row per line
        yield frame


def raw_chunks(path: str | os.PathLike, *, chunk_bytes: int | None = None, on_read=None,
               by_query: bool = False, joined: bool = True):
    """Yield the bytes of a regular file (plain or gzip) in chunks of whole lines, in file
    order: the reading half of :func:`plain_chunks`, whose parsing half
    (:func:`chunk_frame`) may then run on other threads.

    With ``by_query``, a chunk also never ends inside a block of lines of one query
    (judged by the first field of its last line): it is extended until a line with
    another first field starts, so that every chunk of a run whose queries are each one
    block holds whole queries. (A query may still be cut where a blank or comment line
    or an indented line interrupts its block; the caller detects a query in two chunks.)

    Parameters
    ----------
    path : str or os.PathLike
        A regular file, plain or gzip.
    chunk_bytes : int, optional
        Bytes read per chunk before the extension; default :data:`PLAIN_CHUNK_BYTES`.
    on_read : callable, optional
        ``on_read(bytes_read)`` after each chunk (compressed bytes for a gzip file).
    by_query : bool, default False
        Cut only between query blocks.
    joined : bool, default True
        False: yield each chunk as a list of pieces, to be joined (:func:`chunk_frame`
        takes them) by the thread that parses it rather than by the one that reads: a
        plain file is mapped into memory and a chunk is one span of it, which the parsing
        thread copies out once; a gzip file's chunk is the pieces it was read in.

    Yields
    ------
    bytes or list of bytes
        Whole lines (the last chunk may lack its final newline).

    Raises
    ------
    NotPlain
        Standard input, a pipe, an empty or unreadable file, a ``.gz`` name that is not
        gzip, a chunk that starts with a byte order mark: the full reader must read it.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "run.txt")
    ...     with open(path, "wb") as f:
    ...         _ = f.write(b"q1 Q0 a 1 2 r\\nq1 Q0 b 2 1 r\\nq2 Q0 a 1 1 r\\n")
    ...     list(raw_chunks(path, chunk_bytes=4, by_query=True))
    [b'q1 Q0 a 1 2 r\\nq1 Q0 b 2 1 r\\n', b'q2 Q0 a 1 1 r\\n']
    """
    size = check_int("chunk_bytes", PLAIN_CHUNK_BYTES if chunk_bytes is None else chunk_bytes,
                     min=1)
    try:
        p = os.fsdecode(os.fspath(path))
        # Only a regular file can be read twice (a pipe, FIFO or /dev/stdin cannot, and
        # the full reader must still see it whole if this road gives up).
        if p == STDIN or not stat.S_ISREG(os.stat(p).st_mode):
            raise NotPlain
    except (TypeError, OSError):
        raise NotPlain from None
    try:
        with open(p, "rb") as raw:
            gzipped = raw.read(2) == _GZIP_MAGIC
            if not gzipped and p.endswith(".gz"):
                raise NotPlain  # the full reader explains what is wrong with it
            raw.seek(0)
            mapped = None if gzipped else _mapped(raw)
            if mapped is not None:
                # (the mapping outlives the file object, closed by the last span dropped)
                for span in _mapped_chunks(p, mapped, size, on_read, by_query):
                    yield _no_bom(span.take()) if joined else [span]
                return
            stream = gzip.GzipFile(fileobj=raw) if gzipped else raw
            tell = None if on_read is None else (lambda: on_read(raw.tell()))
            for pieces in _raw_chunks(stream, size, tell, by_query):
                # (pieces are checked for a byte order mark by chunk_frame, once joined)
                yield _no_bom(b"".join(pieces)) if joined else pieces
    except (OSError, EOFError, zlib.error):
        raise NotPlain from None


def _mapped(raw) -> mmap.mmap | None:
    """The open file ``raw`` mapped read-only, or None where it cannot be (an empty file,
    a file system without mappings): then it is read as a stream."""
    try:
        return mmap.mmap(raw.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None


class _Descriptor:
    """A file opened for ``os.pread``, closed when the last span reading it is dropped."""

    __slots__ = ("fd",)

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDONLY)

    def __del__(self, close=os.close) -> None:  # (os may be gone at interpreter exit)
        fd = getattr(self, "fd", None)
        if fd is not None:
            close(fd)


class _MappedSpan:
    """Bytes ``start:end`` of a mapped file: a chunk of :func:`raw_chunks` that the
    reading thread only delimits, copied out by the thread that parses it.

    Reading a chunk with ``read()`` copies it from the page cache in the reading thread,
    which every parsing thread waits for, and joining its pieces copies it again; a span
    is copied once, by :meth:`take`, on the parsing thread: with ``os.pread`` where there
    is one (the copy runs without the interpreter lock, which slicing the mapping holds),
    else from the mapping.
    """

    __slots__ = ("mapped", "file", "start", "end")

    def __init__(self, mapped: mmap.mmap, file: _Descriptor | None, start: int,
                 end: int) -> None:
        self.mapped, self.file, self.start, self.end = mapped, file, start, end

    def __len__(self) -> int:
        return self.end - self.start

    def take(self) -> bytes:
        """The span's bytes (a copy)."""
        if self.file is None:
            return self.mapped[self.start:self.end]
        data = os.pread(self.file.fd, self.end - self.start, self.start)
        while len(data) < self.end - self.start:  # a short read: go on where it stopped
            more = os.pread(self.file.fd, self.end - self.start - len(data),
                            self.start + len(data))
            if not more:
                raise NotPlain  # the file shrank while read: the full reader decides
            data += more
        return data


#: ``madvise`` advice that drops mapped pages from the resident set (Linux, BSD).
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)


def _mapped_chunks(path: str, mapped: mmap.mmap, chunk_bytes: int, on_read,
                   by_query: bool):
    """:func:`_raw_chunks` of a mapped file, as spans: the same chunk boundaries, found
    without copying the chunks. Only the pages around the boundaries are read through
    the mapping, and dropped from the resident set once passed. (A file truncated by
    another process while it is read this way can stop the process with SIGBUS, as any
    mapped reader.)"""
    file = _Descriptor(path) if hasattr(os, "pread") else None
    size, start = len(mapped), 0
    while start < size:
        end = start + chunk_bytes
        if end >= size:
            end = size
        elif mapped[end - 1] != 10:  # whole lines only
            newline = mapped.find(b"\n", end)
            end = size if newline < 0 else newline + 1
        if by_query and end < size:
            end = _mapped_query_end(mapped, start, end)
        if on_read is not None:
            on_read(end)
        yield _MappedSpan(mapped, file, start, end)
        if _DONTNEED is not None and file is not None:
            low = start - start % mmap.PAGESIZE
            with contextlib.suppress(OSError, ValueError):  # advice: nothing depends on it
                mapped.madvise(_DONTNEED, low, end - low)
        start = end


def _mapped_query_end(mapped: mmap.mmap, start: int, end: int) -> int:
    """Where the chunk ``start:end`` (whole lines) ends once extended by the lines that
    follow it while they start with the first field of its last data line (comment and
    blank lines between them included): :func:`_to_query_end` on a mapped file."""
    key = _last_query(mapped[max(start, end - _TAIL_BYTES):end])
    if not key:
        return end
    found = _other_query(key).search(mapped, end)
    return len(mapped) if found is None else found.start()


def _other_query(key: bytes) -> re.Pattern:
    """A line that starts neither with the field ``key`` nor a comment, and is not blank."""
    return re.compile(rb"(?m)^(?!" + re.escape(key) + rb"[ \t\v\f\r]|#|[ \t\v\f\r]*$)")


def _raw_chunks(stream, chunk_bytes: int, tell, by_query: bool):
    # A chunk is gathered as pieces, joined later: every copy of 16 MiB made here is
    # made in the reading thread, which all the parsing threads wait for.
    reader = _PushBack(stream)
    pieces = reader.read(chunk_bytes)
    if not pieces:
        raise NotPlain  # an empty file
    while pieces:
        if not pieces[-1].endswith(b"\n"):
            pieces.append(reader.readline())  # whole lines only
        if by_query:
            _to_query_end(reader, pieces, chunk_bytes)
        if tell is not None:
            tell()
        yield pieces
        pieces = reader.read(chunk_bytes)


class _PushBack:
    """A binary stream whose reader can hand back the bytes it read too far."""

    def __init__(self, stream):
        self.stream, self.head = stream, b""

    def read(self, size: int) -> list[bytes]:
        """Up to ``size`` bytes, as one or two pieces (none at the end)."""
        head = self.head
        if len(head) >= size:
            self.head = head[size:]
            return [head[:size]] if size else []
        self.head = b""
        more = self.stream.read(size - len(head))
        return [p for p in (head, more) if p]

    def readline(self) -> bytes:
        end = self.head.find(b"\n") + 1
        if end:
            out, self.head = self.head[:end], self.head[end:]
            return out
        out, self.head = self.head, b""
        return out + self.stream.readline()

    def unread(self, data: bytes) -> None:
        self.head = data + self.head


def _no_bom(block: bytes) -> bytes:
    """``block``, unless it starts with a byte order mark: polars drops one at the start
    of whatever it parses; the full readers drop one only at the start of the file and
    keep it anywhere else."""
    if block.startswith(_UTF8_BOM):
        raise NotPlain
    return block


_FIELD_END = re.compile(rb"[ \t\v\f\r\n]")
#: A line that belongs to no query: a comment or a blank line.
_NO_QUERY_LINE = re.compile(rb"#|[ \t\v\f\r]*(?:\n|\Z)")


def _to_query_end(reader: _PushBack, pieces: list[bytes], chunk_bytes: int) -> None:
    """Extend the chunk ``pieces`` (whole lines) by the lines that follow it in ``reader``
    while they start with the first field of its last data line (comment and blank lines
    between them included); the lines read past them are handed back to ``reader``."""
    tail = pieces[-1] if len(pieces[-1]) >= _TAIL_BYTES or len(pieces) == 1 else \
        pieces[-2][-_TAIL_BYTES:] + pieces[-1]
    key = _last_query(tail[-_TAIL_BYTES:])
    if not key:
        return
    other = _other_query(key)
    step = 1 << 16
    while True:
        got = reader.read(step)
        if not got:
            return
        more = got[0] if len(got) == 1 else b"".join(got)
        if not more.endswith(b"\n"):
            more += reader.readline()
        found = other.search(more)
        if found is not None and found.start() < len(more):
            pieces.append(more[:found.start()])
            reader.unread(more[found.start():])
            return
        pieces.append(more)
        step = min(step * 2, max(chunk_bytes, 1 << 16))


#: Bytes at the end of a chunk searched for its last query id.
_TAIL_BYTES = 1 << 16


def _last_query(block: bytes, lines: int = 1000) -> bytes:
    """The first field of the last data line of ``block`` among its last ``lines``
    lines (b"" when there is none, or when that line starts with a blank)."""
    end = len(block)
    for _ in range(lines):
        if end <= 0:
            return b""
        start = block.rfind(b"\n", 0, end - 1) + 1
        if not _NO_QUERY_LINE.match(block, start):
            match = _FIELD_END.search(block, start)
            return block[start:match.start() if match else end]
        end = start
    return b""


def _plain_frame(data: bytes, kind: str) -> pl.DataFrame:
    layout, columns = _PLAIN[kind]
    schema, exact = layout.schema, layout.exact
    if any(c in data for c in _NOT_PLAIN_BYTES):
        raise NotPlain
    # Only the fields handed on are read (a third less work) when nothing in the others
    # can matter: every field is non-empty (no doubled space; a leading space empties the
    # query id, a short line the run id: nulls, seen below), so no field shifts into
    # another's place, and the bytes are ASCII, so no field unread holds invalid UTF-8.
    fields = _RUN_FIELDS if kind == "run" and data.isascii() and \
        not _doubled_space(data) else None
    df = _read_typed(data, schema, exact, " ", fields)
    if df is None or df.height == 0 or any(df.null_count().row(0)):
        raise NotPlain  # blank lines, short lines, empty fields, unreadable numbers
    if kind == "run" and not np.isfinite(df["score"].to_numpy()).all():
        raise NotPlain
    return df.select(columns)


def _joined(pieces: list) -> bytes:
    """The bytes of a chunk given as pieces (bytes, or one :class:`_MappedSpan`)."""
    if len(pieces) == 1:
        piece = pieces[0]
        return piece.take() if isinstance(piece, _MappedSpan) else piece
    return b"".join(p.take() if isinstance(p, _MappedSpan) else p for p in pieces)


def _doubled_space(data: bytes) -> bool:
    """Whether two spaces follow each other somewhere in ``data`` (an empty field): two
    vectorised passes over its byte pairs, at even and at odd offsets (several times
    faster than ``b"  " in data`` on text full of single spaces)."""
    if len(data) < 2:
        return False
    if (np.frombuffer(data, np.uint16, count=len(data) // 2) == 0x2020).any():
        return True
    odd = (len(data) - 1) // 2
    return bool((np.frombuffer(data, np.uint16, count=odd, offset=1) == 0x2020).any())


def chunk_frame(data: bytes | list, kind: str) -> tuple[pl.DataFrame, int]:
    """The frame of one chunk of :func:`raw_chunks` (the columns :func:`plain_chunks`
    gives) and the number of lines it spans.

    A plain chunk is read on the typed fast path. A run chunk that is not plain (tabs,
    carriage returns, padded columns, blank or comment lines, ranks that are not
    integers) is read by the full reader on its own lines, which gives what reading the
    whole file gives for them: a run's lines are read one by one, with no rule across
    lines. So is a qrels chunk without ``#`` (tabs, carriage returns, padding); qrels
    comments have rules across lines. Anything else, and any bad line, raises
    :class:`NotPlain` carrying the chunk
    (its ``first_line`` is the caller's to set), which :func:`chunk_error` explains.
    ``data`` may be given as the pieces :func:`raw_chunks` read it in (``joined=False``).

    Examples
    --------
    >>> frame, lines = chunk_frame(b"# a comment\\nq1\\tQ0\\td1\\t1\\t2.5\\ta\\r\\n\\n", "run")
    >>> frame.rows(), lines
    ([('q1', 'd1', 2.5, 'a')], 3)
    """
    if isinstance(data, list):
        data = _joined(data)
    _no_bom(data)
    try:
        frame = _plain_frame(data, kind)
        return frame, frame.height  # one row per line
    except NotPlain:
        pass
    # Qrels comments have rules across lines (trec_eval reads a second comment line in a
    # row as data): a qrels chunk with "#" is left to the full reader of the whole file.
    if b"\x00" in data or (kind == "qrels" and b"#" in data):
        raise NotPlain(data)
    columns = _PLAIN[kind][1]
    try:
        if kind == "qrels":
            df = _parse_qrels(data, "<chunk>", "error")
        else:
            df, _ = _parse(data, _RUN, "<chunk>", "error")
    except (NotUtf8Error, DuplicateEntryError):
        raise NotPlain(data) from None
    except InputFormatError as error:
        if error.line is not None or kind == "qrels":
            raise NotPlain(data) from None
        df = _empty_frame(_RUN)  # blank and comment lines only
    return df.select(columns), data.count(b"\n") + (not data.endswith(b"\n"))


# --------------------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------------------

#: Qrels lines trec_eval's reader rejects or crashes on (docs/reference/trec_eval.md §2.1): pattern (multi-line
#: mode), how many lines after the match's start the offending line is, and why.
_QRELS_LINE_RULES = (
    (re.compile(rb"(?m)^[ \t\v\f\r]*\n"), 0,
     "blank line (trec_eval rejects blank lines in qrels)"),
    (re.compile(rb"\n[ \t\v\f\r]+\Z"), 1,
     "blank line (trec_eval rejects blank lines in qrels)"),
    (re.compile(rb"(?m)^#[^\n]*\n#"), 1,
     "a comment line right after another one (trec_eval would read it as data)"),
    (re.compile(rb"(?m)^#[^\n]*\n?\Z"), 0,
     "a comment as the last line (trec_eval crashes on it)"),
    (re.compile(rb"(?m)^[ \t\v\f\r]+#"), 0,
     "an indented '#' line (qrels comments start in column 1; trec_eval reads it as data)"),
)


#: Bytes that make a line blank or indented when they start it: \n and C isspace.
_LINE_START_BLANKS = np.frombuffer(b"\n \t\v\f\r", dtype=np.uint8)


def _parse_qrels(data: bytes, source: str, on_duplicate: str,
                 relevance: str = "int") -> pl.DataFrame:
    """Parse qrels; of a layout problem and a field error, the earlier line is reported."""
    fields = _QRELS_FLOAT if relevance == "float" else _QRELS
    try:
        check_qrels_lines(data, source)
    except InputFormatError as layout:
        try:
            _parse(data, fields, source, on_duplicate)
        except InputFormatError as field_error:
            if field_error.line is not None and layout.line is not None \
                    and field_error.line < layout.line:
                raise field_error from None
        raise
    df, _ = _parse(data, fields, source, on_duplicate)
    return df


def check_qrels_lines(data: bytes, source: str) -> None:
    """Refuse qrels layouts trec_eval rejects or crashes on, naming the first such line."""
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM):]
    # One vectorised pass first: a file without '#' whose lines all start with a
    # non-blank byte needs none of the regexes.
    if b"#" not in data and not _some_line_starts_blank(data):
        return
    found = []
    for pattern, offset, reason in _QRELS_LINE_RULES:
        m = pattern.search(data)
        if m is not None:
            found.append((data.count(b"\n", 0, m.start()) + 1 + offset, reason))
    if found:
        line, reason = min(found)
        raise InputFormatError(reason, path=source, line=line)


def _some_line_starts_blank(data: bytes, window: int = 8 << 20) -> bool:
    """Whether a line starts with ``\\n`` or C whitespace (one vectorised pass over
    windows of the data, so the temporaries stay small)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    for start in range(0, len(raw), window):
        # the byte before each byte of the window (a newline before data's first byte)
        before = raw[max(start - 1, 0):start + window - 1] if start else \
            np.concatenate(([10], raw[:window - 1]))
        first_bytes = raw[start:start + window][before[:len(raw[start:start + window])] == 10]
        # Every blank byte is <= 32; only the rarer bytes <= 32 need the exact test.
        if np.isin(first_bytes[first_bytes <= 32], _LINE_START_BLANKS).any():
            return True
    return False


def _parse(data: bytes, layout: _Layout, source: str, on_duplicate: str) -> tuple[pl.DataFrame, str | None]:
    """bytes -> (frame in the container schema with duplicates resolved, run_id of the last
    data line (runs only))."""
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    unreadable = _unreadable_bytes(data, layout)
    if unreadable is not None:
        offset, reason = unreadable
        before, error = _lines_before(data, layout, source, offset, InputFormatError(
            reason, path=source, line=data.count(b"\n", 0, offset) + 1))
        return _finish(before, error, layout, source, on_duplicate)
    if len(data) > _HEAD_BYTES:
        _check_head(data, layout, source, on_duplicate)
    sep = " "
    if any(c in data for c in _OTHER_WS):
        if b"\t" in data and b" " not in data and not any(c in data for c in _OTHER_WS[1:]):
            sep = "\t"  # purely tab-separated: still a single-byte separator
        else:
            data = data.translate(_TO_SPACE)  # CRLF -> " \n": a trailing blank, harmless
    df: pl.DataFrame | None = None
    pending: InputFormatError | None = None
    collapsed = False
    # 1. typed fast path (skipped when some line starts with "#": it would refuse anyway)
    comments = b"#" in data and (data.startswith(b"#") or b"\n#" in data)
    if not comments:
        df = _fast_parse(data, layout, sep)
    if df is None:
        if sep != " ":
            data = data.translate(_TO_SPACE)
        collapsed = _looks_padded(data, layout)
        if collapsed:  # padded columns: collapse the blanks and try the typed path again
            data = _collapse_spaces(data)
            if not comments:
                df = _fast_parse(data, layout, " ")
    if df is None:
        # 2. string path: comments, blank lines, messy whitespace, and every error message
        result = _string_parse(data, layout, source)
        if result is _COLLAPSE and not collapsed:
            data = _collapse_spaces(data)
            result = _string_parse(data, layout, source)
        if not isinstance(result, tuple):
            # 3. last resort, if polars refused the bytes for a reason not foreseen here
            result = _general_parse(_collapse_spaces(data), layout, source)
        df, pending = result
    return _finish(df, pending, layout, source, on_duplicate, data)


#: Bytes of a large file parsed on their own first, so that a file wrong from its first
#: lines (another format, prose) fails without parsing all of it.
_HEAD_BYTES = 1 << 20


def _check_head(data: bytes, layout: _Layout, source: str, on_duplicate: str) -> None:
    """Raise the error of the first bad line if it lies in the head of ``data`` (its
    first whole lines up to :data:`_HEAD_BYTES`): nothing before it can be worse."""
    cut = data.rfind(b"\n", 0, _HEAD_BYTES) + 1
    if cut == 0:
        return
    try:
        _parse(data[:cut], layout, source, on_duplicate)
    except InputFormatError as error:
        if error.line is not None:  # not "no data lines": the rest of the file may have some
            raise


def _finish(df, pending, layout, source, on_duplicate, data=None):
    """Checks shared by every road: no data at all, a pending error (after any earlier
    duplicate), duplicates; returns ``(frame, run_id of the last data line)``."""
    line_col = "_line" if "_line" in df.columns else None  # else row i is line i + 1
    if df.height == 0 and pending is None:
        raise InputFormatError(
            "no data lines (the file is empty or holds only blank and comment lines)", path=source
        )
    value = "relevance" if layout.kind == "qrels" else "score"
    if pending is not None:
        if on_duplicate == "error":  # a duplicate before the bad line is reported first
            resolve_duplicates(df, value=value, policy="error", source=source, line_col=line_col)
        raise _swapped_hint(pending, data, layout) if data is not None else pending
    last_run_id = df["run_id"][-1] if layout.kind == "run" else None
    df = resolve_duplicates(df, value=value, policy=on_duplicate, source=source, line_col=line_col)
    return df.select(list(layout.fields)), last_run_id


def _value_field(layout: _Layout) -> str:
    """The numeric field checked on every line: the label or the score."""
    return "relevance" if layout.kind == "qrels" else "score"


_INT_FIELD = re.compile(rb"[+-]?[0-9]+")
_FLOAT_FIELD = re.compile(_FLOAT_RE[1:-1].encode())


def _swapped_hint(error: InputFormatError, data: bytes, layout: _Layout) -> InputFormatError:
    """A wrong field count, with its likely cause when the line shows it: the other
    format (qrels and run swapped), or non-ASCII spaces, which separate nothing."""
    if error.line is None or not error.reason.startswith("expected"):
        return error
    line = _physical_line(data, error.line)
    fields = line.split()
    if layout.kind == "run" and len(fields) == 4 and _INT_FIELD.fullmatch(fields[3]):
        hint = "this looks like a qrels file; the qrels come first, the run second"
    elif (layout.kind == "qrels" and len(fields) >= 6 and _FLOAT_FIELD.fullmatch(fields[4])
          and _INT_FIELD.fullmatch(fields[3])):
        hint = "this looks like a run file; the qrels come first, the run second"
    else:
        text = line.decode("utf-8", "replace")
        spaces = sorted({c for c in text if ord(c) > 127 and unicodedata.category(c) == "Zs"})
        if not spaces:
            return error
        named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in spaces)
        hint = (f"the line holds {named}, which does not separate fields (only ASCII "
                "spaces and tabs do)")
    return type(error)(f"{error.reason}; {hint}", path=error.path, line=error.line,
                       query_id=error.query_id, doc_id=error.doc_id)


def _looks_padded(data: bytes, layout: _Layout) -> bool:
    """Cheap guess from the first 64 KiB: are there leading or repeated blanks (or, for
    qrels, trailing ones) that only ``_collapse_spaces`` can remove?"""
    head = data[: 1 << 16]
    return (
        head.startswith(b" ")
        or b"  " in head
        or b"\n " in head
        or (layout.exact and (b" \n" in head or head.endswith(b" ")))
    )


def _collapse_spaces(data: bytes) -> bytes:
    """Collapse runs of spaces into one and strip spaces at line starts and ends.

    Newlines are never touched, so line numbers are preserved. Returns ``data`` itself
    when nothing changes.
    """
    if not data:
        return data
    a = np.frombuffer(data, dtype=np.uint8)
    sp = a == 0x20
    # a space goes when the byte before it is a space or a newline (or it opens the data) ...
    before = np.empty_like(sp)
    before[0] = True
    np.logical_or(sp[:-1], a[:-1] == 0x0A, out=before[1:])
    drop = sp & before
    b = a[~drop] if drop.any() else a
    if b.size == 0:
        return b""
    # ... or when it is (now the only space) right before a newline or the end
    sp = b == 0x20
    after = np.empty_like(sp)
    after[-1] = True
    np.equal(b[1:], 0x0A, out=after[:-1])
    drop2 = sp & after
    if drop2.any():
        b = b[~drop2]
    elif b is a:
        return data
    return b.tobytes()


def _read_typed(data: bytes, schema: dict, exact: bool, sep: str,
                fields: list[int] | None = None) -> pl.DataFrame | None:
    """``polars.read_csv`` of ``data`` with a typed schema and no quoting, or None if
    polars refuses it (bad numbers, invalid UTF-8, too many fields when ``exact``);
    ``fields``: the positions of the only columns read (all by default)."""
    try:
        return pl.read_csv(
            data, separator=sep, has_header=False, quote_char=None, schema=schema,
            columns=fields,
            # runs: fields after the 6th are ignored (on the first line too); qrels: an error
            truncate_ragged_lines=not exact, extra_columns=None if exact else "ignore",
            missing_columns="insert",  # short lines (a blank first line too) -> nulls
        )
    except (Exception, pl.exceptions.PanicException):  # noqa: BLE001 - any failure: None
        return None


def _fast_parse(data: bytes, layout: _Layout, sep: str) -> pl.DataFrame | None:
    """polars.read_csv with the typed schema, then checks. Returns None whenever the result
    could differ from the string path (empty fields from repeated separators or short
    lines, ``#`` comments, bad or non-finite numbers, non-integer ranks, too many fields,
    invalid UTF-8). Blank lines come back from polars as rows of nulls; they are dropped
    and a ``_line`` column keeps the line numbers."""
    if not data:
        return None
    df = _read_typed(data, layout.schema, layout.exact, sep)
    if df is None:
        return None
    if any(df.null_count().row(0)):
        is_null = [pl.col(c).is_null() for c in df.columns]
        blank = df.select(pl.all_horizontal(is_null)).to_series()
        if df.select(pl.any_horizontal(is_null)).to_series().sum() != blank.sum():
            return None
        df = df.with_row_index("_line", offset=1).filter(~blank)
    if df.height == 0:
        return None
    checks = []
    value = _value_field(layout)
    if layout.schema[value] == pl.Float64:
        checks.append((~pl.col(value).is_finite()).any())
    if b"#" in data:
        checks.append(pl.col("query_id").str.starts_with("#").any())
    if checks and any(df.select(checks).row(0)):
        return None
    return df


_COLLAPSE = "collapse"  # _string_parse: "collapse the whitespace and call me again"
_FAILED = "failed"  # _string_parse: polars refused the bytes


def _string_parse(data: bytes, layout: _Layout, source: str):
    """Read every line with polars as string fields (space-separated data), then validate.

    Returns ``(frame, pending_error)`` like :func:`_general_parse`, or ``_COLLAPSE`` when a
    line has an empty field followed by a non-empty one (leading or repeated spaces), or
    ``_FAILED`` when polars cannot read the bytes at all.
    """
    # qrels get one spare column: a value there means "more than 4 fields"
    names = list(layout.fields) + (["_extra"] if layout.exact else [])
    try:
        raw = pl.read_csv(
            data,
            separator=" ",
            has_header=False,
            quote_char=None,
            schema={name: pl.String for name in names},
            truncate_ragged_lines=True,
            extra_columns="ignore",
            missing_columns="insert",
        )
    except (Exception, pl.exceptions.PanicException):  # noqa: BLE001
        return _utf8_prefix(data, layout, source)
    present = [pl.col(c).is_not_null() for c in names]
    comment = pl.col("query_id").str.starts_with("#").fill_null(False)
    gap = pl.any_horizontal([~present[i] & present[i + 1] for i in range(len(names) - 1)])
    if raw.select((gap & ~comment).any()).item():
        return _COLLAPSE
    n = pl.sum_horizontal(present)
    frame = (
        raw.with_row_index("_line", offset=1)
        .with_columns(_n=n)
        .filter((pl.col("_n") > 0) & ~comment)
    )
    frame, pending = _validate(frame, layout, source)
    if pending is not None and layout.exact and pending.reason.endswith("found 5"):
        # the spare column only says "5 or more": count the fields of that one line
        count = len(_physical_line(data, cast(int, pending.line)).split())
        pending = InputFormatError(
            f"{layout.expectation()}, found {count}",
            path=source,
            line=pending.line,
            query_id=pending.query_id,
            doc_id=pending.doc_id,
        )
    return frame, pending


def _utf8_prefix(data: bytes, layout: _Layout, source: str):
    """polars refused ``data``: if it is invalid UTF-8, read the lines before the bad one
    (they may hold an earlier error) and report the encoding error otherwise."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return _lines_before(data, layout, source, e.start,
                             _utf8_error(data, e.start, layout, source))
    return _FAILED


#: Control bytes that text files do not hold (C isspace ones excepted).
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")


def _utf8_error(data: bytes, offset: int, layout: _Layout, source: str) -> InputFormatError:
    """The error of invalid UTF-8 at byte ``offset``: binary data when control bytes
    surround it, else :class:`NotUtf8Error` (text in another encoding, e.g. Latin-1 ids,
    which evaluate() reads as bytes)."""
    line = data.count(b"\n", 0, offset) + 1
    line_start = data.rfind(b"\n", 0, offset) + 1
    if _CONTROL.search(data, line_start, line_start + 4096):
        return InputFormatError(
            f"invalid UTF-8 (byte 0x{data[offset]:02x}) among control bytes: this looks "
            f"like a binary file, not a TREC {layout.kind} file", path=source, line=line)
    return NotUtf8Error(
        f"invalid UTF-8 (byte 0x{data[offset]:02x}); ids that are not UTF-8 are read as "
        "Latin-1 bytes by evaluate(), or by the readers with encoding='latin-1'",
        path=source, line=line)


def _lines_before(data: bytes, layout: _Layout, source: str, offset: int,
                  error: InputFormatError):
    """``(frame, error)``: the lines before the one holding byte ``offset`` (which may
    hold an earlier error, reported first), and ``error`` otherwise."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    if line_start == 0:
        return _empty_frame(layout), error
    head = data[:line_start]
    if any(c in head for c in _OTHER_WS):
        head = head.translate(_TO_SPACE)
    result = _string_parse(head, layout, source)
    if result is _COLLAPSE:
        result = _string_parse(_collapse_spaces(head), layout, source)
    if not isinstance(result, tuple):
        result = _general_parse(_collapse_spaces(head), layout, source)
    frame, pending = result
    return frame, pending if pending is not None else error


_UTF16_BOMS = {b"\xff\xfe": "FF FE", b"\xfe\xff": "FE FF"}


def _unreadable_bytes(data: bytes, layout: _Layout) -> tuple[int, str] | None:
    """``(offset, reason)`` for bytes no TREC file holds, so the message names the actual
    cause: UTF-16 text, NUL bytes (binary files), lines ended by a carriage return only."""
    bom = _UTF16_BOMS.get(data[:2])
    if bom is not None:
        return 0, (f"UTF-16 text (byte order mark {bom}); irmetrics reads UTF-8: convert it "
                   "first, e.g. `iconv -f UTF-16 -t UTF-8`")
    nul = data.find(b"\x00")
    if nul >= 0:
        head = data[:64]
        odd, even = head[1::2].count(0), head[0::2].count(0)
        if len(head) >= 4 and {odd, even} in ({0, len(head[1::2])}, {0, len(head[0::2])}):
            return nul, ("NUL bytes between the characters: this looks like UTF-16 text; "
                         "convert it to UTF-8 first, e.g. `iconv -f UTF-16LE -t UTF-8`")
        return nul, f"a NUL byte: this looks like a binary file, not a TREC {layout.kind} file"
    if b"\n" not in data and b"\r" in data.strip():
        # One line only, cut by carriage returns into pieces that are each a whole line
        # of this format: CR line ends (trec_eval would read one long line).
        pieces = [p.split() for p in data.strip().split(b"\r", 2)[:2]]
        if len(pieces) == 2 and all(len(p) == layout.n if layout.exact else len(p) >= layout.n
                                    for p in pieces):
            return data.index(b"\r", len(data) - len(data.lstrip())), (
                "lines end with a carriage return only (old Mac line ends), so the whole "
                "file is one line: convert them, e.g. `tr '\\r' '\\n'`")
    return None


def _empty_frame(layout: _Layout) -> pl.DataFrame:
    return pl.DataFrame(schema={"_line": pl.UInt32, **layout.schema})


def _physical_line(data: bytes, line: int) -> bytes:
    """The bytes of 1-based line ``line`` (error path only)."""
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
    start = int(ends[line - 2]) + 1 if line > 1 else 0
    end = int(ends[line - 1]) if line - 1 < ends.size else len(data)
    return data[start:end]


def _validate(frame: pl.DataFrame, layout: _Layout, source: str) -> tuple[pl.DataFrame, InputFormatError | None]:
    """Data lines as strings (``_line``, ``_n`` = number of fields, one column per field)
    -> typed rows before the first bad line, and that line's error.

    The numeric casts accept exactly the documented grammar (tested against it), so the
    regular expressions only run on the one row reported.
    """
    count_bad = (pl.col("_n") != layout.n) if layout.exact else (pl.col("_n") < layout.n)
    if layout.kind == "qrels":
        dtype = layout.schema["relevance"]
        casts = {"relevance": pl.col("relevance").cast(dtype, strict=False)}
        value_bad = (pl.col("relevance").is_null() if dtype == pl.Int64
                     else ~pl.col("relevance").is_finite().fill_null(False))
        token = "relevance"
    else:
        casts = {
            "rank": pl.col("rank").cast(pl.Int64, strict=False),
            "score": pl.col("score").cast(pl.Float64, strict=False),
        }
        value_bad = ~pl.col("score").is_finite().fill_null(False)
        token = "score"
    frame = frame.with_columns(pl.col(token).alias("_token"), **casts)
    bad = frame.filter(count_bad | value_bad).head(1)
    pending = _line_error(bad.row(0, named=True), layout, source) if bad.height else None
    if pending is not None:
        frame = frame.filter(pl.col("_line") < pending.line)
    return frame.select("_line", *layout.fields), pending


def _general_parse(data: bytes, layout: _Layout, source: str) -> tuple[pl.DataFrame, InputFormatError | None]:
    """Tokenise every line of whitespace-normalised data (see ``_collapse_spaces``) with
    polars list operations. The last resort: only used if polars' CSV reader refuses bytes
    that are valid UTF-8.

    Returns the data rows before the first bad line, with a ``_line`` column (1-based
    physical line), and the error of that first bad line, if any.
    """
    pending: InputFormatError | None = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        pending = _utf8_error(data, e.start, layout, source)
        text = data[:line_start].decode("utf-8")  # earlier lines may hold an earlier error

    tok = pl.col("raw").str.split(" ")
    frame = (
        pl.DataFrame({"raw": pl.Series([text]).str.split("\n").explode()})
        .with_row_index("_line", offset=1)
        .filter((pl.col("raw") != "") & ~pl.col("raw").str.starts_with("#"))
        .select(
            "_line",
            tok.list.len().alias("_n"),
            **{name: tok.list.get(i, null_on_oob=True) for i, name in enumerate(layout.fields)},
        )
    )
    frame, error = _validate(frame, layout, source)
    if error is not None and (pending is None or cast(int, error.line) < cast(int, pending.line)):
        pending = error
    if pending is not None:
        frame = frame.filter(pl.col("_line") < pending.line)
    return frame, pending


def _line_error(row: dict, layout: _Layout, source: str) -> InputFormatError:
    q, d, n = row["query_id"], row["doc_id"], row["_n"]
    if (n != layout.n) if layout.exact else (n < layout.n):
        return InputFormatError(
            f"{layout.expectation()}, found {n}",
            path=source,
            line=row["_line"],
            query_id=q,
            doc_id=d,
        )
    token = row["_token"]
    if layout.kind == "qrels":
        if layout.schema["relevance"] == pl.Float64:
            reason = f"relevance must be a finite decimal number, found {brief_repr(token)}"
        elif re.match(_INT_RE, token):
            reason = f"relevance out of the 64-bit integer range, found {brief_repr(token)}"
        elif re.match(_FLOAT_RE, token):
            reason = f"relevance must be an integer, found {brief_repr(token)}{FLOAT_LABEL_HINT}"
        else:
            reason = f"relevance must be an integer, found {brief_repr(token)}"
    elif re.match(_NONFINITE_RE, token):
        reason = f"score must be finite (NaN and infinity are not allowed), found {brief_repr(token)}"
    elif re.match(_HEX_RE, token):
        reason = f"score must be a decimal number (hexadecimal is not supported), found {brief_repr(token)}"
    elif re.match(_FLOAT_RE, token):
        reason = f"score overflows float64 (must be finite), found {brief_repr(token)}"
    else:
        reason = f"score is not a number, found {brief_repr(token)}"
    return InputFormatError(reason, path=source, line=row["_line"], query_id=q, doc_id=d)


# --------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------


def _check_writable(df: pl.DataFrame, columns: tuple[str, ...]) -> None:
    for col in columns:
        bad = df.select(
            (pl.col(col).str.contains(_WRITE_BAD_ID_RE) | (pl.col(col) == "")).arg_true().first()
        ).item()
        if bad is not None:
            raise parameter_error(
                f"{col} values", "non-empty and free of whitespace to be written in TREC format", df[col][bad]
            )
    bad = df.select(pl.col("query_id").str.starts_with("#").arg_true().first()).item()
    if bad is not None:
        raise parameter_error(
            "query_id values", "not starting with '#' (it would read back as a comment)", df["query_id"][bad]
        )


def _write_frame(df: pl.DataFrame, path: Any) -> None:
    try:
        p = os.fspath(path)
    except TypeError:
        raise parameter_error("path", "a str or os.PathLike (or '-' for stdout)", path) from None
    buf = io.BytesIO()
    df.write_csv(buf, include_header=False, separator=" ", quote_style="never", line_terminator="\n")
    payload = buf.getvalue()
    if p == STDIN:
        out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
        if out is None:
            sys.stdout.write(payload.decode("utf-8"))
        else:
            out.write(payload)
            out.flush()
        return
    if str(p).endswith(".gz"):
        payload = gzip.compress(payload, compresslevel=6, mtime=0)
    with open(p, "wb") as f:
        f.write(payload)
