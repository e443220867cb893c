"""The fused run does not depend on how fuse() got it: the rows' order in each run (blocks
in score order, ranked span by span; or not, ranked whole), spans of queries, threads,
32- or 64-bit pair keys, or a first doc-id hash whose top bits say nothing (pairs then
rest on the whole hash) or that collides outright (pairs rest on the strings). Ties,
-0.0 next to 0.0, documents missing from runs and queries in one run only, compared as
the floats' bytes."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.fusion import fuse
from irmetrics.fusion import lists as lists_module

DOCS = ["d1", "d2", "d10", "D1", "a", "ab", "1", "01", "é", "e\u0301", "x" * 30 + "a",
        "x" * 30 + "b"]
SCORES = [0.0, -0.0, 0.0, -0.0, 1.0, 2.0, 0.5, -1.0, 1.0 + 2.0**-52]  # -0.0 ties 0.0: often
METHODS = ["rrf", "sum", "max", "min", "med", "mnz", "wmnz", "bordafuse", "condorcet",
           "isr", "posfuse"]


def fused_bytes(runs, method, norm, qrels):
    params = {"weights": [1.0, -1.0, 0.5][:len(runs)]} if method == "wmnz" else {}
    try:
        fused = fuse(runs, method, norm=norm, qrels=qrels, **params)
    except Exception as error:  # the same refusal, in every variant
        return type(error).__name__, str(error)
    return [(q, d, r, float(s).hex()) for q, d, r, s in
            fused.df.select("query_id", "doc_id", "rank", "score").iter_rows()]


def as_frame(run: dict, order: str, seed: int) -> pl.DataFrame:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    if order == "shuffled":
        random.Random(seed).shuffle(rows)
    elif order == "blocks":  # each query a block in score order, ties in any order
        rows.sort(key=lambda row: (row[0], -row[2]))
    else:  # ascending scores: not in score order
        rows.sort(key=lambda row: (row[0], row[2]))
    return pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                      "score": pl.Float64}, orient="row")


def top_bits_constant(ids: pl.Series) -> np.ndarray:
    """Whole hashes still distinct, none of their top 40 bits: keys all equal."""
    return lists_module.doc_fingerprint(ids) & np.uint64(0xFFFFFF)


def one_per_length(ids: pl.Series) -> np.ndarray:
    """Ids of one length share a first hash (the fingerprint still tells them apart)."""
    return ids.str.len_bytes().cast(pl.UInt64).to_numpy() * np.uint64(0x9E3779B97F4A7C15)


runs_strategy = st.lists(
    st.dictionaries(st.sampled_from(["q1", "q2", "q3"]),
                    st.dictionaries(st.sampled_from(DOCS), st.sampled_from(SCORES),
                                    min_size=1, max_size=8), max_size=3),
    min_size=2, max_size=3)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(runs_strategy, st.sampled_from(METHODS), st.sampled_from([None, "min-max", "sum"]),
       st.lists(st.sampled_from(["shuffled", "blocks", "ascending"]), min_size=3,
                max_size=3),
       st.integers(1, 12), st.sampled_from([1, 4]), st.sampled_from([30, 11, 12]),
       st.sampled_from([None, top_bits_constant, one_per_length]), st.integers(0, 99))
def test_fused_run_is_the_same_whatever_the_road(runs, method, norm, orders, entries,
                                                 threads, narrow, first_hash, seed):
    qrels = {q: {d: 1 for d in list(docs)[:1]} for run in runs for q, docs in run.items()}
    qrels = qrels if method == "posfuse" else None
    if method == "posfuse" and not qrels:
        qrels = {"q1": {"d1": 1}}
    expected = fused_bytes(runs, method, norm, qrels)
    given_runs = [as_frame(run, order, seed) for run, order in zip(runs, orders)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRMETRICS_THREADS", str(threads))
        patch.setattr(lists_module, "BLOCK_ENTRIES", entries)
        patch.setattr(lists_module, "NARROW_BITS", narrow)
        if first_hash is not None:
            patch.setattr(lists_module, "doc_hash", first_hash)
        assert fused_bytes(given_runs, method, norm, qrels) == expected
