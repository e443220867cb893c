"""Equality of two adapter pairs, as the device tests need it: the same (Qrels, Run),
bit for bit, and the same RankedLists and numbers on every evaluation road."""

from __future__ import annotations

import numpy as np

import irmetrics as irm
from irmetrics.adapters import to_ranked

MEASURES = ["map", "P.1", "recall.100", "ndcg_cut.10", "num_rel", "Rprec"]
LIST_FIELDS = ("query_ids", "offsets", "code", "rel_hist", "rel_levels", "bogus", "scores")


def frames_equal(a, b) -> bool:
    """Two polars frames with the same columns, dtypes and values (bits of floats
    included: -0.0 is not 0.0 here)."""
    if a.columns != b.columns or a.dtypes != b.dtypes or a.height != b.height:
        return False
    for name in a.columns:
        x, y = a[name].to_numpy(), b[name].to_numpy()
        if x.dtype.kind == "f":
            if not np.array_equal(x.view(np.int64), y.view(np.int64)):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def assert_same_pair(want, got, *, measures=MEASURES) -> None:
    (q1, r1), (q2, r2) = want, got
    assert frames_equal(r1.df, r2.df), "runs differ"
    assert frames_equal(q1.df, q2.df), "qrels differ"
    for semantics in ("trec_eval", "pytrec_eval"):
        for complete in (False, True):
            opts = {"semantics": semantics, "complete": complete}
            a, b = to_ranked(q1, r1, **opts), to_ranked(q2, r2, **opts)
            for field in LIST_FIELDS:
                x, y = getattr(a, field), getattr(b, field)
                assert np.array_equal(x, y), (field, opts)
            for ties in ("trec_eval", "input_order"):
                if r1.df.height:
                    assert irm.evaluate(q1, r1, measures, ties=ties, **opts).to_dict() == \
                        irm.evaluate(q2, r2, measures, ties=ties, **opts).to_dict(), (ties, opts)
