"""Registered metric-learning / LTR / torchmetrics measures through irmetrics.evaluate().

Four layers: the spec's worked examples as toy tables, parity with the slow
reference loops of tests/reference/ml_ref.py on random runs (ties, graded and
negative labels, unjudged documents, empty rankings, k beyond the list),
hypothesis properties, and the registry/parser surface.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.exceptions import ParameterError
from irmetrics.measures.registry import REGISTRY, load

try:
    from tests.reference import ml_ref as ref
except ImportError:  # tests/ itself on sys.path
    from reference import ml_ref as ref

ML_MEASURES = ["oml_cmc", "oml_precision", "oml_map", "map_at_r", "ml_r_precision",
               "ml_precision_at_1", "ml_recall", "tfsim_ndcg", "ltr_arp", "ltr_dcg",
               "ltr_dcg_cut", "ltr_ndcg", "ltr_ndcg_cut", "tm_fall_out"]


def evaluate_rows(rows, measures):
    """Evaluate OML-style rows ``(g, n_gt)``: ranked 0/1 relevance plus total relevant.

    Query ``q<i>`` ranks docs ``d0..`` in order; relevant items not retrieved are
    added to the qrels; every query is present in the run, even when empty.
    """
    qrels, run = {}, {}
    for i, (g, n_gt) in enumerate(rows):
        qid = f"q{i}"
        run[qid] = {f"d{j}": float(len(g) - j) for j in range(len(g))}
        judged = {f"d{j}": int(bool(x)) for j, x in enumerate(g)}
        for extra in range(n_gt - sum(bool(x) for x in g)):
            judged[f"x{extra}"] = 1
        if not judged:
            judged["pad"] = 0
        qrels[qid] = judged
    ev = irm.Evaluator(qrels, measures)
    return ev.evaluate(run, run_query_ids=list(run))


def column(res, name):
    return res.values(name).tolist()


# ---------------------------------------------------------------- spec worked examples

def test_oml_cmc_seed_example():
    rows = list(zip([[1, 0], [0, 1, 1], [0, 0], []], [2, 2, 1, 0]))
    res = evaluate_rows(rows, ["CMC@1", "CMC@2"])
    assert column(res, "CMC@1") == [1, 0, 0, 1]
    assert column(res, "CMC@2") == [1, 1, 0, 1]


def test_oml_precision_seed_example():
    rows = list(zip([[1, 0], [0, 1, 1], [0, 0], []], [2, 3, 5, 2]))
    res = evaluate_rows(rows, ["oml_precision.1,2"])
    assert column(res, "oml_precision_1") == [1, 0, 0, 0]
    assert column(res, "oml_precision_2") == [0.5, 0.5, 0, 0]


def test_oml_precision_prose_example_is_one_at_every_k():
    res = evaluate_rows([([1, 1, 1, 0, 0], 3)], ["oml_precision.1,2,3,4,5,6", "P.4,5,6"])
    for k in range(1, 7):
        assert column(res, f"oml_precision_{k}") == [1.0]
    assert [column(res, f"P_{k}")[0] for k in (4, 5, 6)] == [0.75, 0.6, 0.5]


def test_oml_precision_nan_rule_and_mean():
    res = evaluate_rows([([0, 0, 0], 0), ([1, 0], 1)], ["OML_P@1", "OML_P@2", "OML_P@5"])
    for name in ("OML_P@1", "OML_P@2", "OML_P@5"):
        values = column(res, name)
        assert math.isnan(values[0]) and values[1] == 1.0
        assert math.isnan(res.aggregate()[name])


def test_oml_map_seed_example_and_hits_denominator():
    rows = list(zip([[1, 0], [0, 1], [0, 0, 0, 0], []], [1, 1, 2, 0]))
    res = evaluate_rows(rows, ["oml_map.1,2"])
    assert column(res, "oml_map_1") == [1, 0, 0, 1]
    assert column(res, "oml_map_2") == [1, 0.5, 0, 1]
    res = evaluate_rows([([1, 0, 0], 3)], ["OML_AP@3", "map_cut.3"])
    assert column(res, "OML_AP@3") == [1.0]
    assert column(res, "map_cut_3") == pytest.approx([1 / 3])


def test_oml_retrieval_metrics_seed_example():
    # retrieved [[], [], [2, 0]], gt [[], [1], []]: cmc [1, 0, 0], precision [1, 0, nan], map [1, 0, 0]
    res = evaluate_rows([([], 0), ([], 1), ([0, 0], 0)], ["CMC@1", "CMC@2", "OML_P@1",
                                                          "OML_P@2", "OML_AP@1", "OML_AP@2"])
    for k in (1, 2):
        assert column(res, f"CMC@{k}") == [1, 0, 0]
        p = column(res, f"OML_P@{k}")
        assert p[:2] == [1, 0] and math.isnan(p[2])
        assert column(res, f"OML_AP@{k}") == [1, 0, 0]


def test_tfsim_examples():
    # Spec values computed from the definition.
    res = evaluate_rows([([0, 1, 0, 1], 5), ([0, 0, 1], 1)], ["TFSim_nDCG@4", "TFSim_nDCG@3"])
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert column(res, "TFSim_nDCG@4")[0] == pytest.approx(expected, abs=1e-15)
    assert round(expected, 6) == 0.650921
    assert column(res, "TFSim_nDCG@3")[1] == pytest.approx(0.5, abs=1e-15)
    # The unit-test data at k=2 (threshold inf): 1, 1, 1, 0 -> mean 0.75.
    rows = [([1, 1, 0], 2)] * 3 + [([0, 0, 1], 1)]
    assert evaluate_rows(rows, ["TFSim_nDCG@2"]).aggregate()["TFSim_nDCG@2"] == 0.75


def test_ltr_seed_examples():
    qrels = {"q0": {"d0": 0, "d1": 1, "d2": 0}, "q1": {"d0": 0, "d1": 1, "d2": 1}}
    run = {"q0": {"d0": 1.0, "d1": 0.0, "d2": 1.5}, "q1": {"d0": 1.5, "d1": 0.2, "d2": 0.5}}
    res = irm.evaluate(qrels, run, ["LTR_ARP", "LTR_nDCG@10", "LTR_nDCG", "LTR_DCG", "ndcg", "map"])
    assert column(res, "LTR_ARP") == [3.0, 2.5]
    assert column(res, "LTR_nDCG@10") == pytest.approx([0.5, 0.6934264036172708], abs=1e-12)
    assert column(res, "LTR_nDCG") == pytest.approx(column(res, "ndcg"), abs=1e-15)
    assert column(res, "LTR_DCG") == pytest.approx([0.5, 1 / math.log2(3) + 0.5], abs=1e-15)
    assert column(res, "map") == pytest.approx([1 / 3, 0.5833333333333333], abs=1e-15)


def test_ltr_exp_gain_differs_from_trec_ndcg_on_graded_labels():
    qrels = {"q": {"d0": 3, "d1": 0, "d2": 2, "d3": 1}}
    run = {"q": {"d0": 0.1, "d1": 0.9, "d2": 0.5, "d3": 0.3}}
    res = irm.evaluate(qrels, run, ["LTR_nDCG", "ndcg"]).aggregate()
    assert res["ndcg"] == pytest.approx(0.64132, abs=5e-6)
    assert res["LTR_nDCG"] == pytest.approx(0.57571, abs=5e-6)


def test_fall_out_seed_example():
    qrels = {"0": {"a": 0, "b": 0, "c": 1}, "1": {"a": 0, "b": 1, "c": 0, "d": 1}}
    run = {"0": {"a": 0.2, "b": 0.3, "c": 0.5}, "1": {"a": 0.1, "b": 0.3, "c": 0.5, "d": 0.2}}
    assert irm.evaluate(qrels, run, ["TM_FallOut@2"]).aggregate()["TM_FallOut@2"] == 0.5
    # functional seed example: preds [0.2, 0.3, 0.5], target [T, F, T], k=2 -> 1.0
    res = irm.evaluate({"q": {"a": 1, "b": 0, "c": 1}}, {"q": {"a": 0.2, "b": 0.3, "c": 0.5}},
                       ["TM_FallOut@2"])
    assert res.aggregate()["TM_FallOut@2"] == 1.0


def test_map_at_r_and_r_precision_toy():
    # R = 3; g = [1, 0, 1, 1]: MAP@R = (1 + 2/3) / 3; Rprec = 2/3.
    res = evaluate_rows([([1, 0, 1, 1], 3), ([1, 0], 3), ([], 2)],
                        ["MAP@R", "ML_RPrec", "Rprec", "ML_P@1", "ML_Recall@2", "R@2"])
    assert column(res, "MAP@R") == pytest.approx([(1 + 2 / 3) / 3, 1 / 3, 0.0], abs=1e-15)
    assert column(res, "ML_RPrec") == pytest.approx([2 / 3, 0.5, 0.0], abs=1e-15)
    assert column(res, "Rprec") == pytest.approx([2 / 3, 1 / 3, 0.0], abs=1e-15)
    assert column(res, "ML_P@1") == [1, 1, 0]
    assert column(res, "ML_Recall@2") == [1, 1, 0]
    assert column(res, "R@2") == pytest.approx([1 / 3, 1 / 3, 0.0], abs=1e-15)


# ---------------------------------------------------------------- registry surface

def test_declarations():
    for name in ML_MEASURES:
        m = load(name)  # the docstring arrives with the family (alone, none is loaded)
        assert m.order >= 100 and not m.pytrec_eval and not m.groups
        assert m.friendly and m.doc
    friendly = {(REGISTRY[n].friendly.lower(), REGISTRY[n].friendly_cutoff) for n in ML_MEASURES}
    assert len(friendly) == len(ML_MEASURES)
    others = {(m.friendly.lower(), m.friendly_cutoff) for m in REGISTRY.values()
              if m.friendly and m.name not in ML_MEASURES}
    assert not friendly & others


def test_fixed_suffix_names():
    with pytest.raises(ParameterError, match="only at @R"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["MAP@x"])
    # MAP@10 is ir_measures' alias of AP@10 (issue 14), not MAP@R cut elsewhere.
    res = irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["MAP@10", "AP@10"]).aggregate()
    assert res["MAP@10"] == res["AP@10"]
    with pytest.raises(ParameterError, match="only at @1"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ML_P@5"])
    res = irm.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"b": 2.0, "a": 1.0}},
                       ["MAP(rel=2)@R", "MAP@R", "map_at_r"])
    # level 1: R = 2, both in the top 2; level 2: R = 1 and rank 1 holds the level-1 doc
    assert res.to_dict()["q"] == {"map_at_r": 1.0, "MAP(rel=2)@R": 0.0, "MAP@R": 1.0}


def test_not_supported_under_pytrec_eval():
    with pytest.raises(ParameterError, match="not available under"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["MAP@R"], semantics="pytrec_eval")


# ---------------------------------------------------------------- reference parity

CUTS = (1, 2, 3, 5, 12)


def random_case(rng: random.Random, n_queries=6):
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        pool = [f"d{j}" for j in range(rng.randint(0, 9))]
        judged = {}
        for d in pool:
            if rng.random() < 0.8:
                judged[d] = rng.choice([-1, 0, 0, 1, 1, 2, 3])
        if rng.random() < 0.3:
            judged[f"extra{q}"] = rng.choice([0, 1, 2])
        if not judged:
            judged["pad"] = 0
        qrels[qid] = judged
        ranked = [d for d in pool if rng.random() < 0.85]
        run[qid] = {d: float(rng.choice([0.1, 0.2, 0.5, 1.0, rng.random()])) for d in ranked}
    return qrels, run


def reference_values(qrels, run, qid):
    qq, rq = qrels[qid], run.get(qid, {})
    ranking = trec = ref.trec_ranking(rq, qq)
    g = [lab is not None and lab >= 1 for _, lab in trec]
    r = ref.num_rel(qq)
    labels = [max(lab, 0) if lab is not None else 0 for _, lab in ranking]
    judged_labels = [v for v in qq.values() if v >= 0]
    out = {}
    for k in CUTS:
        out[f"oml_cmc_{k}"] = ref.oml_cmc(g, r, k)
        out[f"oml_precision_{k}"] = ref.oml_precision(g, r, k)
        out[f"oml_map_{k}"] = ref.oml_map(g, r, k)
        out[f"ml_recall_{k}"] = ref.hit(g, k)
        out[f"tfsim_ndcg_{k}"] = ref.tfsim_bndcg(g, k)
        out[f"ltr_dcg_cut_{k}"] = ref.exp_dcg(labels, k)
        out[f"ltr_ndcg_cut_{k}"] = ref.exp_ndcg(labels, judged_labels, k)
        nonrel = [lab is not None and 0 <= lab < 1 for _, lab in trec]
        out[f"tm_fall_out_{k}"] = ref.fall_out(nonrel, ref.num_nonrel(qq), k)
    out["map_at_r"] = ref.map_at_r(g, r)
    out["ml_r_precision"] = ref.ml_r_precision(g, r)
    out["ml_precision_at_1"] = ref.hit(g, 1)
    out["ltr_arp"] = ref.ltr_arp(labels)
    out["ltr_dcg"] = ref.exp_dcg(labels)
    out["ltr_ndcg"] = ref.exp_ndcg(labels, judged_labels)
    return out


SPECS = [f"oml_cmc.{','.join(map(str, CUTS))}", f"oml_precision.{','.join(map(str, CUTS))}",
         f"oml_map.{','.join(map(str, CUTS))}", f"ml_recall.{','.join(map(str, CUTS))}",
         f"tfsim_ndcg.{','.join(map(str, CUTS))}", f"ltr_dcg_cut.{','.join(map(str, CUTS))}",
         f"ltr_ndcg_cut.{','.join(map(str, CUTS))}", f"tm_fall_out.{','.join(map(str, CUTS))}",
         "map_at_r", "ml_r_precision", "ml_precision_at_1", "ltr_arp", "ltr_dcg", "ltr_ndcg"]


def assert_close(got, want, what):
    if math.isnan(want):
        assert math.isnan(got), what
    else:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12), what


@pytest.mark.parametrize("seed", range(25))
def test_reference_parity_random(seed):
    rng = random.Random(seed)
    qrels, run = random_case(rng)
    res = irm.Evaluator(qrels, SPECS).evaluate(run, run_query_ids=list(run))
    per_query = res.to_dict()
    assert set(per_query) == set(run)
    for qid, values in per_query.items():
        want = reference_values(qrels, run, qid)
        for name, value in want.items():
            assert_close(values[name], value, f"{seed} {qid} {name}")


# ---------------------------------------------------------------- properties

labels_st = st.lists(st.sampled_from([-1, 0, 0, 1, 1, 2]), min_size=0, max_size=8)


@st.composite
def single_query(draw):
    labels = draw(labels_st)
    scores = draw(st.lists(st.sampled_from([0.1, 0.5, 0.9, 2.0]), min_size=len(labels),
                           max_size=len(labels)))
    retrieved = draw(st.lists(st.booleans(), min_size=len(labels), max_size=len(labels)))
    qrels = {f"d{i}": lab for i, lab in enumerate(labels)} or {"pad": 0}
    run = {f"d{i}": s for i, (s, keep) in enumerate(zip(scores, retrieved)) if keep}
    return qrels, run


BOUNDED = ["CMC@1", "CMC@3", "OML_AP@2", "OML_AP@9", "MAP@R", "ML_RPrec", "ML_P@1",
           "ML_Recall@1", "ML_Recall@4", "TFSim_nDCG@3", "LTR_nDCG", "LTR_nDCG@2", "TM_FallOut@2",
           "OML_P@2", "OML_P@20"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(single_query())
def test_bounds_and_monotone(case):
    qrels, run = case
    ev = irm.Evaluator({"q": qrels}, BOUNDED + ["CMC@2", "ML_Recall@2", "TM_FallOut@5",
                                                "LTR_DCG@1", "LTR_DCG@4", "LTR_ARP"])
    v = ev.evaluate({"q": run}, run_query_ids=["q"]).to_dict()["q"]
    for name in BOUNDED:
        if name.startswith("OML_P") and math.isnan(v[name]):
            assert not any(lab >= 1 for lab in qrels.values())  # NaN only when n_gt = 0
            continue
        assert 0.0 <= v[name] <= 1.0 + 1e-12, name
    assert v["CMC@1"] <= v["CMC@2"] <= v["CMC@3"]
    assert v["ML_Recall@1"] <= v["ML_Recall@2"] <= v["ML_Recall@4"]
    assert v["TM_FallOut@2"] <= v["TM_FallOut@5"]
    assert v["LTR_DCG@1"] <= v["LTR_DCG@4"]
    assert v["LTR_ARP"] >= 0.0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=1, max_size=8).filter(lambda x: any(x)))
def test_ideal_ranking_scores_one(labels):
    qrels = {f"d{i}": lab for i, lab in enumerate(labels)}
    order = sorted(range(len(labels)), key=lambda i: -labels[i])
    run = {f"d{i}": float(len(labels) - rank) for rank, i in enumerate(order)}
    v = irm.evaluate({"q": qrels}, {"q": run},
                     ["MAP@R", "ML_RPrec", "OML_P@1", "OML_P@3", "OML_AP@3", "CMC@1",
                      "TFSim_nDCG@4", "LTR_nDCG", "LTR_nDCG@2", "ML_P@1"]).to_dict()["q"]
    assert all(x == pytest.approx(1.0, abs=1e-12) for x in v.values()), v


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_input_row_order_invariance(seed):
    rng = random.Random(seed)
    qrels, run = random_case(rng, n_queries=4)

    def shuffled(d):
        items = list(d.items())
        rng.shuffle(items)
        return {k: (shuffled(v) if isinstance(v, dict) else v) for k, v in items}

    a = irm.Evaluator(qrels, SPECS).evaluate(run, run_query_ids=list(run)).to_dict()
    b = irm.Evaluator(shuffled(qrels), SPECS).evaluate(shuffled(run), run_query_ids=list(run)).to_dict()
    np.testing.assert_equal(a, b)
