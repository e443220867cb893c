"""-0.0 stays with its document through fusion. trec_eval ties -0.0 with 0.0, and the tie
rule (doc id) moves documents while their scores keep their places, so without care a
document's zero took the sign of the one it swapped with: a run printed by a system as
``-0.000000`` fused (max, min, med; or norm "sum"/"max") into a file whose signs were on
the wrong lines, half of the doc-id pairs one way, half the other, as hashes fell."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics.fusion import fuse
from irmetrics.io import write_run

DOCS = ["d1", "d2", "d10", "a", "b", "z", "é", "x" * 40]


def reference(runs: list[dict], method: str) -> dict:
    """Each (query, doc)'s fused score, folded document by document over the runs in
    order, as fuse() folds each run into its vector (norm None)."""
    out: dict = {}
    for run in runs:
        for q, docs in run.items():
            for d, s in docs.items():
                key = (q, d)
                if method == "max":
                    out[key] = np.maximum(out.get(key, -np.inf), s)
                elif method == "min":
                    out[key] = np.minimum(out.get(key, np.inf), s)
                else:  # med: the median of its runs' scores (nanmedian of a row)
                    out.setdefault(key, []).append(s)
    if method == "med":
        out = {k: np.nanmedian(np.array(v)) for k, v in out.items()}
    return {k: float(v).hex() for k, v in out.items()}


def as_frame(run: dict, ascending: bool) -> pl.DataFrame:
    """Rows in ascending score order when asked: not blocks in score order, the run is
    ranked whole (rank_run) rather than span by span."""
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    if ascending:
        rows.sort(key=lambda row: (row[0], row[2]))
    return pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                      "score": pl.Float64}, orient="row")


def fused_signs(fused) -> dict:
    return {(q, d): float(s).hex()
            for q, d, s in fused.df.select("query_id", "doc_id", "score").iter_rows()}


@pytest.mark.parametrize("method", ["max", "min", "med"])
def test_each_document_keeps_its_zero(method):
    # every ordered pair of ids: the tie rule swaps half of them whatever the hashes
    for first in DOCS:
        for second in DOCS:
            if first == second:
                continue
            run = {"q": {first: -0.0, second: 0.0}}
            for kind in ("dict", "ascending"):
                given_run = run if kind == "dict" else as_frame(run, True)
                fused = fuse([given_run, {"q": {}}], method=method, norm=None)
                assert fused_signs(fused) == reference([run], method), (first, second, kind)


def test_a_printed_negative_zero_in_a_file(tmp_path):
    # "%f" of a tiny negative score prints -0.000000
    path = tmp_path / "a.run"
    path.write_text("q Q0 d2 1 -0.000000 a\nq Q0 d1 2 0.000000 a\nq Q0 d0 3 -1.0 a\n")
    other = {"q": {"d0": 1.0, "d3": -0.0}}
    fused = fuse([str(path), other], method="max", norm=None)
    assert fused_signs(fused) == reference(
        [{"q": {"d2": -0.0, "d1": 0.0, "d0": -1.0}}, other], "max")
    assert fused.df["doc_id"].to_list() == ["d0", "d3", "d2", "d1"]  # zeros tie
    # and so the written run, line by line
    write_run(fused, tmp_path / "fused.run")
    lines = {line.split()[2]: line.split()[4]
             for line in (tmp_path / "fused.run").read_text().splitlines()}
    assert [lines[d].startswith("-") for d in ("d3", "d2", "d1")] == [True, True, False]


zeros = st.sampled_from([0.0, -0.0, 1.0, -1.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["q1", "q2"]),
                                st.dictionaries(st.sampled_from(DOCS), zeros, max_size=6),
                                max_size=2), min_size=2, max_size=3),
       st.sampled_from(["max", "min", "med"]), st.lists(st.booleans(), min_size=3,
                                                         max_size=3))
def test_fused_zero_signs_follow_documents(runs, method, ascending):
    given_runs = [as_frame(run, up) if up else run for run, up in zip(runs, ascending)]
    fused = fuse(given_runs, method=method, norm=None)
    assert fused_signs(fused) == reference(runs, method)
