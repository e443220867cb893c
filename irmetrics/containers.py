"""TEMPORARY stand-in until the io branch lands (same interface, minimal).

The cli branch added ``Qrels.read``/``Run.read``/``to_dict``/``from_df`` with trec_eval's
line rules (spec §2.1, §2.2) because the CLI needs them; the io branch's containers
replace this whole file. What the CLI relies on (tests/test_cli_errors.py checks it):

* ``Qrels.read(path)`` / ``Run.read(path)`` accept gzip files (by magic bytes) and, for
  the run, ``"-"`` meaning stdin;
* malformed input raises :class:`~irmetrics.exceptions.InputFormatError` whose message
  names the file and the line;
* ``Run.name`` is the run_id field of the last data line.
"""

from __future__ import annotations

import gzip
import math
import sys

import polars as pl

from ._cparse import c_atof, c_atol
from .exceptions import InputFormatError

_QRELS_SCHEMA = {"query_id": pl.String, "iteration": pl.String, "doc_id": pl.String,
                 "relevance": pl.Int64}
_RUN_SCHEMA = {"query_id": pl.String, "iteration": pl.String, "doc_id": pl.String,
               "rank": pl.Int64, "score": pl.Float64, "run_id": pl.String}


def _read_bytes(path: str, what: str) -> bytes:
    """All bytes of ``path`` (``"-"``: stdin), gunzipped if gzip; empty is an error."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as fh:
            data = fh.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputFormatError(f"{_label(path)}: cannot decompress gzip {what} file: {exc}") \
                from None
    if not data:
        raise InputFormatError(f"{_label(path)}: {what} file is empty")
    return data


def _label(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _text(raw: bytes, path: str, line_no: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputFormatError(f"{_label(path)}: line {line_no}: not valid UTF-8: {raw!r}") \
            from None


class Qrels:
    def __init__(self, df, path=None):
        self.df, self.path = df, path

    @classmethod
    def from_dict(cls, d):
        rows = [(str(q), "0", str(doc), int(rel))
                for q, docs in d.items() for doc, rel in docs.items()]
        return cls(pl.DataFrame(rows, schema=_QRELS_SCHEMA, orient="row"))

    @classmethod
    def from_df(cls, df):
        return cls(df.select(list(_QRELS_SCHEMA)).cast(_QRELS_SCHEMA))

    @classmethod
    def read(cls, path):
        """trec_eval's qrels rules: 4 fields; a ``#`` in column 0 skips that line and the
        next line is data whatever it holds; rel via ``atol``."""
        lines = _read_bytes(path, "qrels").split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        rows, i = [], 0
        while i < len(lines):
            if lines[i][:1] == b"#":
                i += 1
                if i == len(lines):
                    raise InputFormatError(
                        f"{_label(path)}: line {i}: a comment on the last line of a qrels file"
                        " is not accepted (trec_eval crashes on it)")
            fields = lines[i].split()
            if len(fields) != 4:
                raise InputFormatError(
                    f"{_label(path)}: line {i + 1}: malformed qrels line, expected 4 fields"
                    f" (query_id iteration doc_id relevance), got {len(fields)}: {lines[i]!r}")
            q, it, doc, rel = (_text(f, path, i + 1) for f in fields)
            rows.append((q, it, doc, c_atol(rel)))
            i += 1
        return cls(pl.DataFrame(rows, schema=_QRELS_SCHEMA, orient="row"), path)

    def to_dict(self):
        out: dict = {}
        for q, doc, rel in self.df.select("query_id", "doc_id", "relevance").iter_rows():
            out.setdefault(q, {})[doc] = rel
        return out


class Run:
    def __init__(self, df, name="irmetrics", path=None):
        self.df, self.name, self.path = df, name, path

    @classmethod
    def from_dict(cls, d, *, name="irmetrics"):
        rows = [(str(q), "Q0", str(doc), None, float(s), name)
                for q, docs in d.items() for doc, s in docs.items()]
        return cls(pl.DataFrame(rows, schema=_RUN_SCHEMA, orient="row"), name)

    @classmethod
    def from_df(cls, df, *, name=None):
        df = df.select(list(_RUN_SCHEMA)).cast(_RUN_SCHEMA)
        if name is None:
            name = df["run_id"][-1] if len(df) else "irmetrics"
        return cls(df, name)

    @classmethod
    def read(cls, path):
        """trec_eval's results rules: blank and ``#`` lines skipped anywhere; at least 6
        fields; score via ``strtod`` prefix; rank ignored; name = last line's run_id."""
        rows = []
        for i, line in enumerate(_read_bytes(path, "run").split(b"\n"), start=1):
            fields = line.split()
            if not fields or fields[0][:1] == b"#":
                continue
            if len(fields) < 6:
                raise InputFormatError(
                    f"{_label(path)}: line {i}: malformed run line, expected at least 6 fields"
                    f" (query_id iteration doc_id rank score run_id), got {len(fields)}: {line!r}")
            q, it, doc, rank, score, run_id = (_text(f, path, i) for f in fields[:6])
            value = c_atof(score)
            if math.isnan(value):
                raise InputFormatError(f"{_label(path)}: line {i}: score is NaN: {line!r}")
            rows.append((q, it, doc, c_atol(rank), value, run_id))
        if not rows:
            raise InputFormatError(f"{_label(path)}: run file has no data lines")
        return cls(pl.DataFrame(rows, schema=_RUN_SCHEMA, orient="row"), rows[-1][5], path)

    def to_dict(self):
        out: dict = {}
        for q, doc, score in self.df.select("query_id", "doc_id", "score").iter_rows():
            out.setdefault(q, {})[doc] = score
        return out
