"""trec_eval's ``-Z``: per-query values as z-scores against given means and deviations.

docs/reference/trec_eval.md §7.4. Each per-query value ``v`` of output ``name`` for query ``qid`` becomes
``(v - mean) / stddev`` with the file's ``qid name mean stddev`` line; when
``stddev == 0`` it becomes 0 if ``v == mean`` and -1000000 otherwise, as in trec_eval.
A NaN mean or stddev gives NaN, as trec_eval's arithmetic does. Summaries are then
computed from the z-values, and every number prints ``%6.4f`` under a ``Z``-prefixed
name. ``runid``, ``num_q`` and string outputs are left as they are.

Stricter than trec_eval, because a wrong number is worse than an error: a mean or
stddev that is not a number (trec_eval's ``atof`` reads ``abc`` as 0) is an
:class:`~irmetrics.exceptions.InputFormatError` naming the file and line, and so is a
(query, measure) pair without a line (trec_eval substitutes -1000000, or crashes), except
for the geometric means ``gm_map`` and ``gm_bpref``: they print no per-query line, and
their summary over a -1000000 is ``exp(-1000000 / n)``, which prints ``0.0000`` as
trec_eval's own test suite expects (``out.test.aqZ`` has no z line for them).
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import polars as pl

from ..exceptions import InputFormatError
from ..measures.registry import DOUBLE, GEOMETRIC, LONG, NUM_Q, RUNID, STRING
from ..results import Results
from .inputs import open_lines

#: trec_eval's z-score when ``stddev == 0`` and the value differs from the mean.
UNDEFINED_Z = -1000000.0

#: A whole field that C's ``atof`` reads completely: a decimal number, ``nan`` or ``inf``.
_NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     r"|inf|infinity|nan)\Z", re.IGNORECASE)


def _number(text: str, what: str, *, path: str, line: int, query_id: str) -> float:
    """``text`` as a float when the whole field is a number (NaN included, as atof)."""
    if not _NUMBER.match(text):
        raise InputFormatError(f"the {what} must be a number, got {text!r}", path=path,
                               line=line, query_id=query_id)
    if text.lstrip("+-").lower().startswith("nan"):
        return math.copysign(math.nan, -1.0 if text.startswith("-") else 1.0)
    return float(text)


def read_zscores(path: str) -> pl.DataFrame:
    """The ``-Z`` file: ``query_id measure mean stddev`` per line, exactly 4 fields.

    Returns a frame ``query_id, measure, mean, stddev``; the first line of a repeated
    (query, measure) pair wins.

    Raises
    ------
    InputFormatError
        A line without 4 fields, a mean or stddev that is not a number (naming the file
        and line), or an empty file.
    """
    rows = []
    for i, line in enumerate(open_lines(path), start=1):
        fields = line.split()
        if len(fields) != 4:
            text = line.rstrip(b"\n")
            raise InputFormatError(
                "malformed z-score line, expected 4 fields (query_id measure mean stddev),"
                f" got {len(fields)}: {text!r}", path=path, line=i)
        qid, name, mean, std = (f.decode("utf-8", "replace") for f in fields)
        rows.append((qid, name, _number(mean, "mean", path=path, line=i, query_id=qid),
                     _number(std, "stddev", path=path, line=i, query_id=qid)))
    if not rows:
        raise InputFormatError("z-score file is empty", path=path)
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "measure": pl.String,
                                       "mean": pl.Float64, "stddev": pl.Float64}, orient="row")
    return frame.unique(["query_id", "measure"], keep="first", maintain_order=True)


def convertible(results: Results, name: str) -> bool:
    """Outputs whose per-query values -Z converts (not runid, num_q or strings)."""
    m = results.measure_of(name)
    return m.summary not in (RUNID, NUM_Q) and m.printed != STRING


def apply_zscores(results: Results, zscores: pl.DataFrame, *, path: str = "<zscores>") -> Results:
    """Results whose convertible per-query values are z-scores.

    Integer outputs (``num_ret`` ...) are re-declared as printed ``%6.4f`` so that
    their sums are no longer truncated, as trec_eval prints them under ``-Z``.

    Raises
    ------
    InputFormatError
        An evaluated query has no line in ``zscores`` (the file ``path``) for one of the
        converted outputs other than a geometric mean (which then takes trec_eval's
        -1000000); the first such pair in print order is named.
    """
    queries = pl.DataFrame({"query_id": pl.Series(list(results.query_ids), dtype=pl.String)})
    columns, specs = {}, {}
    for name in results.names:
        if not convertible(results, name):
            continue
        ref = queries.join(zscores.filter(pl.col("measure") == name),
                           on="query_id", how="left", maintain_order="left")
        m = results.measure_of(name)
        absent = ref["mean"].is_null().to_numpy()
        if absent.any() and m.summary != GEOMETRIC:
            qid = results.query_ids[int(np.argmax(absent))]
            more = int(absent.sum()) - 1
            raise InputFormatError(f"no z-score line for measure {name!r}"
                                   + (f"; {more} more evaluated quer"
                                      f"{'y lacks' if more == 1 else 'ies lack'} one"
                                      if more else ""), path=path, query_id=qid)
        mean = ref["mean"].to_numpy().astype(np.float64)
        std = ref["stddev"].to_numpy().astype(np.float64)
        v = np.asarray(results.values(name), dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            # trec_eval tests `stddev != 0`, which a NaN passes: NaN then propagates.
            columns[name] = np.where(absent | ((std == 0) & (v != mean)), UNDEFINED_Z,
                                     np.where(std != 0, (v - mean) / std, 0.0))
        if m.printed == LONG:
            specs[name] = dataclasses.replace(m, printed=DOUBLE)
    return results.replace_values(columns, specs)
