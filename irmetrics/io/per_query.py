"""Per-query evaluation files, as written by ``trec_eval -q`` and ``irmetrics eval -q``.

Each line is ``measure  query_id  value`` (trec_eval writes ``%-22s\\t%s\\t%6.4f``);
summary lines carry the query id ``all`` and the run's tag is on ``runid  all  tag``.
Such a file lets :func:`irmetrics.compare` test systems without rerunning evaluation.
Values are taken as printed (``%6.4f`` is rounded to 4 decimals); ``relstring`` and
the summary lines are not needed and are skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from ..exceptions import InputFormatError
from ..containers.trec_text import read_source

#: trec_eval's query id of summary lines.
SUMMARY_ID = "all"

#: Per-query lines that hold no number.
_NOT_NUMERIC = ("relstring", "runid")

_LINE = r"^\s*(\S+)\s+(\S+)\s+(.*?)\s*$"


@dataclass
class PerQueryScores:
    """Per-query values read from an evaluation file (or any source of them).

    Attributes
    ----------
    query_ids : ndarray of str
        Queries in ascending byte order, as trec_eval prints them.
    columns : dict of str to ndarray of float64
        Output name (``map``, ``P_10``, ``nDCG@10``) to values aligned with ``query_ids``.
    run_name : str
        The file's ``runid`` tag, else the file name.
    source : str
        Where the values came from (a path).
    """

    query_ids: np.ndarray
    columns: dict = field(default_factory=dict)
    run_name: str = ""
    source: str = ""

    @property
    def names(self) -> list[str]:
        return list(self.columns)

    def values(self, name: str) -> np.ndarray:
        return self.columns[name]


def read_per_query(path) -> PerQueryScores:
    """Read a ``trec_eval -q`` (or ``irmetrics eval -q``) output file.

    Parameters
    ----------
    path : str or os.PathLike
        A file of ``measure query_id value`` lines (whitespace-separated; gzip allowed).

    Returns
    -------
    PerQueryScores
        One column per numeric measure over the queries of the file.

    Raises
    ------
    InputFormatError
        A line without three fields, a value that is not a number, a (measure, query)
        given twice, a measure missing for some query, several runs in one file, or a
        file without per-query lines (written without ``-q``).

    Examples
    --------
    >>> import tempfile, os
    >>> text = "map  \\t1\\t0.5000\\nmap  \\t2\\t0.2500\\nrunid\\tall\\tbm25\\nmap\\tall\\t0.3750\\n"
    >>> with tempfile.NamedTemporaryFile("w", suffix=".eval", delete=False) as fh:
    ...     _ = fh.write(text)
    >>> scores = read_per_query(fh.name)
    >>> scores.run_name, scores.query_ids.tolist(), scores.values("map").tolist()
    ('bm25', ['1', '2'], [0.5, 0.25])
    >>> os.unlink(fh.name)
    """
    lines, source = _read_lines(os.fspath(path))
    frame = (lines.with_row_index("line", offset=1)
             .filter(pl.col("text").str.strip_chars().str.len_bytes() > 0)
             .with_columns(pl.col("text").str.extract_groups(_LINE).alias("parts"))
             .unnest("parts")
             .rename({"1": "measure", "2": "query_id", "3": "value"}))
    bad = frame.filter(pl.col("value").is_null() | (pl.col("value") == ""))
    if bad.height:
        row = bad.row(0, named=True)
        raise InputFormatError("expected 3 fields (measure query_id value) as trec_eval -q"
                               " writes them", path=source, line=row["line"])
    run_names = frame.filter(pl.col("measure") == "runid")["value"].unique(maintain_order=True)
    if run_names.len() > 1:
        raise InputFormatError(
            f"holds {run_names.len()} runs ({', '.join(map(repr, run_names.to_list()))});"
            " give one run per file", path=source)
    # Several runs evaluated at once (irmetrics eval -q a.run b.run > x.eval) repeat the
    # summary lines, one block per run, even when no runid line says so.
    blocks = (frame.filter((pl.col("query_id") == SUMMARY_ID) & (pl.col("measure") != "runid"))
              .group_by("measure").len()["len"].max())
    assert blocks is None or isinstance(blocks, int)  # a count (for the type checker)
    if blocks is not None and blocks > 1:
        raise InputFormatError(f"holds {blocks} runs (its summary lines repeat); give one run"
                               " per file", path=source)
    per_query = frame.filter((pl.col("query_id") != SUMMARY_ID)
                             & ~pl.col("measure").is_in(_NOT_NUMERIC))
    if per_query.height == 0:
        raise InputFormatError("has no per-query lines; write it with -q (trec_eval -q or"
                               " irmetrics eval -q)", path=source)
    per_query = per_query.with_columns(
        pl.col("value").str.strip_chars().cast(pl.Float64, strict=False).alias("number"))
    not_number = per_query.filter(pl.col("number").is_null())
    if not_number.height:
        row = not_number.row(0, named=True)
        raise InputFormatError(f"value of {row['measure']!r} is not a number: {row['value']!r}",
                               path=source, line=row["line"], query_id=row["query_id"])
    repeated = per_query.filter(~pl.struct("measure", "query_id").is_first_distinct())
    if repeated.height:
        row = repeated.sort("line").row(0, named=True)
        raise InputFormatError(f"measure {row['measure']!r} is given twice for this query",
                               path=source, line=row["line"], query_id=row["query_id"])
    wide = per_query.pivot(on="measure", index="query_id", values="number",
                           maintain_order=True).sort("query_id")
    names = [c for c in wide.columns if c != "query_id"]
    for name in names:
        holes = wide.filter(pl.col(name).is_null())["query_id"]
        if holes.len():
            raise InputFormatError(f"measure {name!r} has no value for this query (every"
                                   " measure needs a value for every query)",
                                   path=source, query_id=holes[0])
    run_name = run_names[0] if run_names.len() else os.path.basename(source)
    return PerQueryScores(
        query_ids=np.asarray(wide["query_id"].to_list(), dtype=object),
        columns={name: wide[name].to_numpy().astype(np.float64) for name in names},
        run_name=run_name, source=source)


def _read_lines(path: str) -> tuple[pl.DataFrame, str]:
    """The file's lines as one string column (gzip is decompressed), and the name
    errors use for it (``<stdin>`` for ``-``)."""
    data, source = read_source(path)
    try:
        text = data.decode("utf-8-sig")  # a BOM from a Windows editor is not a character
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputFormatError("invalid UTF-8", path=source, line=line) from None
    return pl.DataFrame({"text": text.splitlines()}, schema={"text": pl.String}), source
