"""trec_eval's ``-Z``: per-query values as z-scores against given means and deviations.

Spec §7.4. Each per-query value ``v`` of output ``name`` for query ``qid`` becomes
``(v - mean) / stddev`` with the file's ``qid name mean stddev`` line; when
``stddev == 0`` it becomes 0 if ``v == mean`` and -1000000 otherwise, and a missing
line also gives -1000000 (trec_eval crashes on some missing lines; irmetrics does
not). Summaries are then computed from the z-values, and every number prints
``%6.4f`` under a ``Z``-prefixed name. ``runid``, ``num_q`` and string outputs are
left as they are.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl

from .._cparse import c_atof
from ..exceptions import InputFormatError
from ..measures.registry import DOUBLE, LONG, NUM_Q, RUNID, STRING
from ..results import Results
from .inputs import open_lines

#: trec_eval's value for a z-score it cannot compute.
MISSING_Z = -1000000.0


def read_zscores(path: str) -> pl.DataFrame:
    """The ``-Z`` file: ``query_id measure mean stddev`` per line, exactly 4 fields.

    Returns a frame ``query_id, measure, mean, stddev``; the first line of a repeated
    (query, measure) pair wins.
    """
    rows = []
    for i, line in enumerate(open_lines(path), start=1):
        fields = line.split()
        if len(fields) != 4:
            text = line.rstrip(b"\n")
            raise InputFormatError(
                f"{path}: line {i}: malformed z-score line, expected 4 fields"
                f" (query_id measure mean stddev), got {len(fields)}: {text!r}")
        qid, name, mean, std = (f.decode("utf-8", "replace") for f in fields)
        rows.append((qid, name, c_atof(mean), c_atof(std)))
    if not rows:
        raise InputFormatError(f"{path}: z-score file is empty")
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "measure": pl.String,
                                       "mean": pl.Float64, "stddev": pl.Float64}, orient="row")
    return frame.unique(["query_id", "measure"], keep="first", maintain_order=True)


def convertible(results: Results, name: str) -> bool:
    """Outputs whose per-query values -Z converts (not runid, num_q or strings)."""
    m = results.measure_of(name)
    return m.summary not in (RUNID, NUM_Q) and m.printed != STRING


def apply_zscores(results: Results, zscores: pl.DataFrame) -> Results:
    """Results whose convertible per-query values are z-scores.

    Integer outputs (``num_ret`` ...) are re-declared as printed ``%6.4f`` so that
    their sums are no longer truncated, as trec_eval prints them under ``-Z``.
    """
    queries = pl.DataFrame({"query_id": pl.Series(list(results.query_ids), dtype=pl.String)})
    columns, specs = {}, {}
    for name in results.names:
        if not convertible(results, name):
            continue
        ref = queries.join(zscores.filter(pl.col("measure") == name),
                           on="query_id", how="left", maintain_order="left")
        mean = ref["mean"].to_numpy().astype(np.float64)  # NaN where the line is missing
        std = ref["stddev"].to_numpy().astype(np.float64)
        v = np.asarray(results.values(name), dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.where(std != 0, (v - mean) / std, np.where(v == mean, 0.0, MISSING_Z))
        columns[name] = np.where(np.isnan(mean) | np.isnan(std), MISSING_Z, z)
        m = results.measure_of(name)
        if m.printed == LONG:
            specs[name] = dataclasses.replace(m, printed=DOUBLE)
    return results.replace_values(columns, specs)
