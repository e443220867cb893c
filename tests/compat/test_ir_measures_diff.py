"""irmetrics.compat.ir_measures against the real ir_measures 0.4.3 and its providers.

Same qrels and run to both; every per-query value and every aggregate must agree to
1e-9, or to gdeval's printed precision (``%.5f``) for the measures ir_measures takes
from gdeval.pl through perl. Cases come from ``tests/_cases.py``: ties (also ties that
only float32 makes), graded and negative labels, unjudged documents, qrels queries
missing from the run, run queries missing from the qrels and cutoffs beyond the ranking.
"""

from __future__ import annotations

import math
import os
import shutil

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from irmetrics.compat import ir_measures as ours

from tests._cases import qrels_and_run

ir_measures = pytest.importorskip("ir_measures", reason="ir-measures 0.4.3 is the oracle")

#: Generated cases per test (perl runs once per gdeval cutoff and case: keep CI small).
EXAMPLES = int(os.environ.get("IRMETRICS_IR_MEASURES_EXAMPLES", "40"))

#: Measures whose ir_measures provider is pytrec_eval, msmarco or judged (exact).
#: The judged_only ones go in a call of their own: ir_measures puts NumRet and NumQ into
#: whichever pytrec_eval invocation its set of measures yields first (hash order, so it
#: varies between processes), judged-only or not.
JUDGED_ONLY = ["P(judged_only=True)@3", "AP(judged_only=True)", "nDCG(judged_only=True)@5",
               "RR(judged_only=True)", "SetF(judged_only=True)", "nDCG@3"]
EXACT = [
    "P@1", "P@5", "P(rel=2)@3", "R@4", "R(rel=2)@4", "AP",
    "AP(rel=2)", "AP@3", "RR", "RR(rel=2)", "RR@1", "RR@3",
    "RR(rel=2)@5", "RR(rel=0)@2", "MRR@10", "nDCG", "nDCG@3",
    "Judged@1", "Judged@3", "Judged@20", "Judged", "Rprec",
    "Rprec(rel=2)", "Bpref", "infAP", "SetP", "SetRelP", "SetR", "SetF", "SetF(beta=0.5)",
    "SetAP", "Success@2", "IPrec@0.2", "IPrec@0.0", "NumQ", "NumRet", "NumRelRet",
    "NumRet(rel=2)", "NumRel",
]
#: Gain tables: ir_measures relabels the qrels for them and, depending on the hash order
#: of its set of measures, may evaluate a plain nDCG inside the relabelled pytrec_eval
#: call (seen: nDCG = 1.0 for a query with no relevant document under some
#: PYTHONHASHSEED values). Each one therefore goes in a call of its own.
GAINS = ["nDCG(gains={0:1,1:3,2:7})", "nDCG(gains={0:1,1:3,2:0})@5", "nDCG(gains={3:1})@3"]
#: Measures ir_measures takes from gdeval (perl; printed with 5 decimals).
GDEVAL = ["ERR@1", "ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')@1"]
GDEVAL_TOLERANCE = 5e-6 + 1e-12

needs_perl = pytest.mark.skipif(shutil.which("perl") is None,
                                reason="gdeval needs perl (ir_measures runs gdeval.pl)")

#: gdeval keeps only numeric topics: the strategy's ids mapped to numbers.
NUMERIC = {"1": "1", "2": "2", "10": "10", "9": "9", "a": "31", "B": "32", "zz": "99"}


def numeric_ids(data):
    qrels, run = data
    # ir_measures hands empty rankings to pytrec_eval, which may crash on them; the
    # engines agree on the remaining queries, so the case keeps only non-empty ones.
    return ({NUMERIC[q]: d for q, d in qrels.items()},
            {NUMERIC[q]: d for q, d in run.items() if d})


def per_query(metrics) -> dict:
    out = {}
    for m in metrics:
        key = (m.query_id, str(m.measure))
        assert key not in out, key
        out[key] = m.value
    return out


def assert_close(got, expected, tolerance, what):
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(got), what
    else:
        assert abs(got - expected) <= tolerance, (what, got, expected)


def compare(names, qrels, run, tolerance):
    theirs_ms = [ir_measures.parse_measure(n) for n in names]
    ours_ms = [ours.parse_measure(n) for n in names]
    expected = per_query(ir_measures.iter_calc(theirs_ms, qrels, run))
    got = per_query(ours.iter_calc(ours_ms, qrels, run))
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert_close(got[key], value, tolerance, key)
    expected_agg = ir_measures.calc_aggregate(theirs_ms, qrels, run)
    got_agg = ours.calc_aggregate(ours_ms, qrels, run)
    for t, o in zip(theirs_ms, ours_ms):
        assert_close(got_agg[o], expected_agg[t], tolerance, str(o))
    return len(expected)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_and_run(max_retrieved=12))
def test_exact_providers_equal_ir_measures(data):
    qrels, run = numeric_ids(data)
    assume(run)
    compare(EXACT, qrels, run, 1e-9)
    compare(JUDGED_ONLY, qrels, run, 1e-9)
    for name in GAINS:
        compare([name], qrels, run, 1e-9)


@needs_perl
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_and_run(max_retrieved=12, max_label=4))
def test_gdeval_measures_equal_ir_measures(data):
    qrels, run = numeric_ids(data)
    assume(run)
    compare(GDEVAL, qrels, run, GDEVAL_TOLERANCE)


# ---- ties: each provider's own order ---------------------------------------------------

#: Every document ties on score; the relevant one is "a" (first by doc id ascending, last
#: by doc id descending).
TIED_QRELS = {"1": {"a": 4, "b": 0}}
TIED_RUN = {"1": {"a": 1.0, "b": 1.0, "c": 1.0}}


@pytest.mark.parametrize("name, value", [
    ("RR@1", 1.0),        # msmarco: doc id ascending, "a" first
    ("Judged@1", 1.0),    # judged: doc id ascending, "a" first
    ("RR", 1 / 3),        # pytrec_eval: doc id descending, "a" last
    ("P@1", 0.0),
])
def test_tie_order_follows_the_provider(name, value):
    measure = ours.parse_measure(name)
    assert ours.calc_aggregate([measure], TIED_QRELS, TIED_RUN)[measure] == pytest.approx(value)
    reference = ir_measures.parse_measure(name)
    assert ir_measures.calc_aggregate([reference], TIED_QRELS, TIED_RUN)[reference] \
        == pytest.approx(value)


@needs_perl
def test_gdeval_ties_are_doc_id_descending():
    # gdeval: "c", "b", "a": ERR@3 = (15/16) / 3
    m = ours.parse_measure("ERR@3")
    assert ours.calc_aggregate([m], TIED_QRELS, TIED_RUN)[m] == pytest.approx(15 / 16 / 3)
    r = ir_measures.parse_measure("ERR@3")
    assert ir_measures.calc_aggregate([r], TIED_QRELS, TIED_RUN)[r] \
        == pytest.approx(15 / 16 / 3, abs=GDEVAL_TOLERANCE)


def test_native_measures_keep_trec_eval_ties():
    # irm.evaluate ranks ties by doc id descending for every measure, RR@k included.
    import irmetrics as irm
    res = irm.evaluate(TIED_QRELS, TIED_RUN, ["RR@1", "Judged@1", "RR@3"]).aggregate()
    assert res == {"RR@1": 0.0, "RR@3": 1 / 3, "Judged@1": 0.0}


# ---- the same qrels and run as the other input shapes ------------------------------------

@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_and_run(), shape=st.sampled_from(["namedtuples", "pandas", "polars"]))
def test_input_shapes_give_the_same_values(data, shape):
    qrels, run = numeric_ids(data)
    assume(run)
    q_rows = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    r_rows = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    if shape == "namedtuples":
        q_in, r_in = q_rows, r_rows
    elif shape == "pandas":
        pd = pytest.importorskip("pandas", reason="pandas DataFrame inputs")
        q_in, r_in = pd.DataFrame(q_rows), pd.DataFrame(r_rows)
    else:  # PyTerrier's column names
        import polars as pl
        q_in = pl.DataFrame([r[:3] for r in q_rows], schema=["qid", "docno", "label"],
                            orient="row")
        r_in = pl.DataFrame(r_rows, schema=["qid", "docno", "score"], orient="row")
    names = ["nDCG@5", "RR@3", "Judged@2", "AP(rel=2)"]
    expected = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names],
                                          qrels, run)
    got = ours.calc_aggregate([ours.parse_measure(n) for n in names], q_in, r_in)
    for n in names:
        assert_close(got[ours.parse_measure(n)], expected[ir_measures.parse_measure(n)],
                     1e-9, n)
