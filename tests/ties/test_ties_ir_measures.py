"""``ties="expected"`` for ir_measures' spellings that have an exact expected value
(``RR@k``, ``Judged@k``, the set measures, exponential nDCG, cwl_eval's measures whose
continuation does not depend on the gains): equal to the mean over every order of every
tie group, each order evaluated by irmetrics itself on distinct scores; the tie report's
best and worst equal the maximum and minimum over those orders."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.measures.parse import parse_measures

from tests.reference import ties_ref
from tests.ties.test_ties import tied_queries

#: ir_measures spellings (and their irmetrics declarations) with an exact expectation
#: that the trec_eval reference of tests/ties/test_ties.py does not compute.
FRIENDLY = ["RR@1", "RR@3", "RR(rel=2)@2", "MRR@2", "Judged@1", "Judged@3", "Judged",
            "nDCG(dcg='exp-log2')@2", "nDCG(dcg='exp-log2')",
            "nDCG(dcg='exp-log2', model='ranx')@3", "RBP(model='cwl', rel=1, p=0.5)",
            "SDCG(max_rel=2)@3", "INSQ(T=1.5, max_rel=2)", "P(model='cwl')@2"]
#: The set measures through their ir_measures names.
SET = ["SetP", "SetRelP", "SetR", "SetF(beta=0.5)", "NumRet(rel=1)"]

SLOW = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def declared_names(spellings) -> set:
    return {req.measure.name for req in parse_measures(spellings)}


def over_orders(qrels, run, measures, **options) -> dict:
    """``{qid: {name: (mean, min, max)}}`` over every tie order, each evaluated by
    irmetrics on distinct scores in that order."""
    out = {}
    for qid, ranking in run.items():
        if qid not in qrels:
            continue
        values = []
        for order in ties_ref.tie_orderings(ranking):
            distinct = {doc: float(len(order) - i) for i, doc in enumerate(order)}
            res = irm.evaluate({qid: qrels[qid]}, {qid: distinct}, measures, **options)
            values.append(res.to_dict()[qid])
        out[qid] = {n: (math.fsum(v[n] for v in values) / len(values),
                        min(v[n] for v in values), max(v[n] for v in values))
                    for n in values[0]}
    return out


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@SLOW
@given(tied_queries(), st.sampled_from([1, 2]), st.sampled_from([None, 1, 2, 4]))
def test_expected_equals_the_mean_over_tie_orders(case, level, max_docs):
    qrels, run = case
    measures = FRIENDLY + SET
    options = {"relevance_level": level, "max_docs": max_docs}
    brute = over_orders(qrels, run, measures, **options)
    expected = irm.evaluate(qrels, run, measures, ties="expected", **options).to_dict()
    report = irm.tie_report(qrels, run, measures, **options)
    best, worst = report.results["best"].to_dict(), report.results["worst"].to_dict()
    for qid, values in brute.items():
        for name, (mean, low, high) in values.items():
            assert close(expected[qid][name], mean), (qid, name, expected[qid][name], mean)
            assert close(best[qid][name], high), (qid, name, best[qid][name], high)
            assert close(worst[qid][name], low), (qid, name, worst[qid][name], low)


@SLOW
@given(tied_queries())
def test_expected_with_judged_only_equals_the_mean_over_tie_orders(case):
    qrels, run = case
    measures = ["RR@2", "Judged@2", "SetP", "SetF"]
    brute = over_orders(qrels, run, measures, judged_only=True)
    expected = irm.evaluate(qrels, run, measures, ties="expected", judged_only=True).to_dict()
    for qid, values in brute.items():
        for name, (mean, _, _) in values.items():
            assert close(expected[qid][name], mean), (qid, name)


def test_rr_at_k_under_expected_is_the_closed_form():
    # One relevant document among three tied ones: E[RR@2] = (1 + 1/2) / 3.
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    got = irm.evaluate(qrels, run, ["RR@2", "RR@1"], ties="expected").aggregate()
    assert got == {"RR@2": pytest.approx(0.5), "RR@1": pytest.approx(1 / 3)}


def test_friendly_names_cover_their_declarations():
    assert declared_names(FRIENDLY + SET) == {
        "recip_rank_cut", "judged_cut", "judged", "ndcg_exp_cut", "ndcg_burges",
        "ndcg_burges_cut", "RBP_cwl", "SDCG", "INSQ", "P_cwl", "set_P", "set_relative_P",
        "set_recall", "set_F", "num_rel_ret"}
