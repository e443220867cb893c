"""irmetrics.compat.tfsim and irmetrics.compat.pytorchltr."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.compat import pytorchltr as ltr
from irmetrics.compat import tfsim
from irmetrics.exceptions import ParameterError, ShapeError

try:
    from tests.reference import ml_ref as ref
except ImportError:
    from reference import ml_ref as ref

LABELS = np.array([1, 1, 1, 0])
DIST = np.tile([0.0, 0.1, 0.2], (4, 1))
MASK = np.array([[1, 1, 0]] * 3 + [[0, 0, 1]], dtype=bool)


# ---------------------------------------------------------------- TF-Similarity

@pytest.mark.parametrize("kwargs, expected", [
    ({"k": 3, "distance_threshold": 0.1}, 0.75),
    ({"k": 2}, 0.75),
    ({"k": 2, "average": "macro"}, 0.5),
])
def test_bndcg_unit_test_data(kwargs, expected):
    m = tfsim.BNDCG(**kwargs)
    assert m.compute(query_labels=LABELS, lookup_distances=DIST, match_mask=MASK) == expected


def test_bndcg_definition_examples_and_threshold_inclusive():
    m = tfsim.BNDCG(k=4)
    got = m.compute(query_labels=[0], lookup_distances=[[0, 1, 2, 3]], match_mask=[[0, 1, 0, 1]])
    assert got == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))
    assert tfsim.BNDCG(k=3).compute(query_labels=[0], lookup_distances=[[0, 1, 2]],
                                    match_mask=[[0, 0, 1]]) == 0.5
    # distance == threshold is still a hit
    assert tfsim.BNDCG(k=1, distance_threshold=0.2).compute(
        query_labels=[0], lookup_distances=[[0.2]], match_mask=[[True]]) == 1.0


def test_bndcg_drop_closest_and_errors():
    m = tfsim.BNDCG(k=2, drop_closest_lookup=True)
    assert m.compute(query_labels=LABELS, lookup_distances=DIST, match_mask=MASK) == \
        pytest.approx((3 * 1.0 + 1 / math.log2(3)) / 4)  # windows [T, F] x 3 and [F, T]
    with pytest.raises(ShapeError, match="K. Number of neighbors is 3 but K is 4"):
        tfsim.BNDCG(k=4).compute(query_labels=LABELS, lookup_distances=DIST, match_mask=MASK)
    with pytest.raises(ShapeError, match="lookup distance rows"):
        tfsim.BNDCG(k=3).compute(query_labels=[1, 2, 3, 4], lookup_distances=DIST[:2],
                                 match_mask=MASK)
    with pytest.raises(ShapeError, match="lookup sets"):
        tfsim.BNDCG(k=3).compute(query_labels=[1, 2], lookup_distances=DIST, match_mask=MASK)
    with pytest.raises(ShapeError, match="K \\+ 1"):
        tfsim.BNDCG(k=3, drop_closest_lookup=True).compute(
            query_labels=LABELS, lookup_distances=DIST, match_mask=MASK)
    with pytest.raises(ParameterError, match="average"):
        tfsim.BNDCG(k=2, average="weighted").compute(query_labels=LABELS, lookup_distances=DIST,
                                                     match_mask=MASK)
    assert tfsim.BNDCG(k=5).name == "ndcg@5"
    assert tfsim.BNDCG(k=5, distance_threshold=0.1).name == "ndcg@5 : distance_threshold@0.1"
    assert repr(tfsim.BNDCG()) == "ndcg@k : ndcg@5"


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 6), st.data())
def test_bndcg_reference(k, data):
    q = data.draw(st.integers(1, 6))
    width = data.draw(st.integers(k, k + 3))
    mask = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=width, max_size=width),
                                       min_size=q, max_size=q)))
    dist = np.array(data.draw(st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=width,
                                                max_size=width), min_size=q, max_size=q)))
    thr = data.draw(st.sampled_from([0.5, math.inf]))
    labels = np.array(data.draw(st.lists(st.integers(0, 2), min_size=q, max_size=q)))
    per_query = [ref.tfsim_bndcg([m and d <= thr for m, d in zip(mr, dr)], k)
                 for mr, dr in zip(mask, dist)]
    micro = tfsim.BNDCG(k=k, distance_threshold=thr).compute(
        query_labels=labels, lookup_distances=dist, match_mask=mask)
    assert micro == pytest.approx(np.mean(per_query), abs=1e-12)
    macro = tfsim.BNDCG(k=k, distance_threshold=thr, average="macro").compute(
        query_labels=labels, lookup_distances=dist, match_mask=mask)
    classes = sorted(set(labels.tolist()))
    want = np.mean([np.mean([v for v, lb in zip(per_query, labels) if lb == c]) for c in classes])
    assert macro == pytest.approx(want, abs=1e-12)


def test_bndcg_matches_registered_measure():
    rng = np.random.default_rng(1)
    mask = rng.random((30, 6)) < 0.3
    per = [tfsim.BNDCG(k=4).compute(query_labels=[0], lookup_distances=np.zeros((1, 6)),
                                    match_mask=row[None, :]) for row in mask]
    qrels = {f"q{i:02d}": {f"d{j}": int(mask[i, j]) for j in range(6)} for i in range(30)}
    run = {f"q{i:02d}": {f"d{j}": float(6 - j) for j in range(6)} for i in range(30)}
    res = irm.evaluate(qrels, run, ["TFSim_nDCG@4"])
    np.testing.assert_allclose(res.values("TFSim_nDCG@4"), per, rtol=0, atol=1e-15)


def test_other_tfsim_metrics_unit_test_data():
    assert tfsim.RecallAtK(k=2).compute(query_labels=LABELS, match_mask=MASK) == 0.75
    assert tfsim.RecallAtK(k=2, average="macro").compute(query_labels=LABELS, match_mask=MASK) == 0.5
    assert tfsim.PrecisionAtK(k=3).compute(query_labels=LABELS, match_mask=MASK) == \
        pytest.approx(0.583333333)
    assert tfsim.PrecisionAtK(k=3, average="macro").compute(query_labels=LABELS,
                                                            match_mask=MASK) == 0.5
    assert tfsim.MapAtK(r={0: 10, 1: 3}, k=3).compute(query_labels=LABELS, match_mask=MASK) == \
        pytest.approx(0.50833333332)
    # clip_at_r: MAP@R with r = class counts, R-precision with PrecisionAtK
    assert tfsim.MapAtK(r={0: 1, 1: 2}, k=3, clip_at_r=True).compute(
        query_labels=LABELS, match_mask=MASK) == pytest.approx((1 + 1 + 1 + 0) / 4)
    assert tfsim.PrecisionAtK(r={0: 1, 1: 2}, k=3, clip_at_r=True).compute(
        query_labels=LABELS, match_mask=MASK) == pytest.approx(0.75)
    with pytest.raises(ParameterError, match="micro"):
        tfsim.MapAtK(r={0: 1}, average="macro")
    m = tfsim.MapAtK(r={1: 4, 0: 4})
    assert m.name == "map@5" and m.get_config()["r"] == {1: 4, 0: 4}


# ---------------------------------------------------------------- pytorchltr

SCORES = [[1.0, 0.0, 1.5], [1.5, 0.2, 0.5]]
REL = [[0, 1, 0], [0, 1, 1]]


def test_ltr_seed_examples():
    assert ltr.ndcg(SCORES, REL, [3, 3], k=10).tolist() == pytest.approx([0.5, 0.6934264036], abs=1e-9)
    np.testing.assert_allclose(ltr.ndcg(SCORES, REL, [3, 3]), [[0, 0, 0.5], [0, 0.3868528, 0.6934264]],
                               atol=1e-7)
    np.testing.assert_allclose(ltr.dcg(SCORES, REL, [3, 3]), [[0, 0, 0.5], [0, 0.6309298, 1.1309298]],
                               atol=1e-7)
    assert ltr.arp(SCORES, REL, [3, 3]).tolist() == [3.0, 2.5]


def test_ltr_padding_quirks_and_shapes():
    scores = np.array([[[0.1], [0.9], [0.5], [0.3]]])  # (B, L, 1)
    rel = np.array([[1, 0, 1, 5]])
    np.testing.assert_allclose(ltr.dcg(scores, rel, [3], exp=False), [[0, 0.6309298, 1.1309298, 3.2843]],
                               atol=1e-4)
    assert ltr.arp(scores, rel, [3]).tolist() == [2.5]
    assert ltr.dcg(scores, rel, [3], k=99, exp=False)[0] == pytest.approx(3.2843, abs=1e-4)
    # n = 0: every position is padding, relevance still counted by dcg
    assert ltr.dcg([[0.3, 0.2]], [[1, 1]], [0], k=2)[0] == pytest.approx(1 + 1 / math.log2(3))
    assert ltr.ndcg([[0.3, 0.2]], [[0, 0]], [2], k=1).tolist() == [0.0]


def test_ltr_graded_exp_vs_linear():
    scores = [[0.1, 0.9, 0.5, 0.3]]
    rel = [[3, 0, 2, 1]]
    assert ltr.ndcg(scores, rel, [4], k=4, exp=False)[0] == pytest.approx(0.64132, abs=5e-6)
    assert ltr.ndcg(scores, rel, [4], k=4)[0] == pytest.approx(0.57571, abs=5e-6)


def test_ltr_errors():
    with pytest.raises(ParameterError, match="`k`"):
        ltr.dcg(SCORES, REL, [3, 3], k=0)
    with pytest.raises(ShapeError, match="relevance"):
        ltr.dcg(SCORES, [[0, 1]], [3, 3])
    with pytest.raises(ParameterError, match="`n`"):
        ltr.arp(SCORES, REL, [4, 3])
    with pytest.raises(ShapeError, match="scores"):
        ltr.ndcg(np.zeros((2, 3, 2)), REL, [3, 3])


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.data())
def test_ltr_reference(b, width, data):
    scores = data.draw(st.lists(st.lists(st.sampled_from([0.0, 0.3, 0.5, 1.0, -2.0]), min_size=width,
                                         max_size=width), min_size=b, max_size=b))
    rel = data.draw(st.lists(st.lists(st.integers(-1, 3), min_size=width, max_size=width),
                             min_size=b, max_size=b))
    n = data.draw(st.lists(st.integers(0, width), min_size=b, max_size=b))
    exp = data.draw(st.booleans())
    for i in range(b):
        want_dcg = ref.ltr_dcg_row(scores[i], rel[i], n[i], exp)
        want_ndcg = ref.ltr_ndcg_row(scores[i], rel[i], n[i], exp)
        np.testing.assert_allclose(ltr.dcg(scores, rel, n, exp=exp)[i], want_dcg, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ltr.ndcg(scores, rel, n, exp=exp)[i], want_ndcg, rtol=1e-12, atol=1e-12)
        for k in (1, 3, 9):
            assert ltr.ndcg(scores, rel, n, k=k, exp=exp)[i] == pytest.approx(
                want_ndcg[min(k, width) - 1], rel=1e-12, abs=1e-12)
        assert ltr.arp(scores, rel, n)[i] == pytest.approx(ref.ltr_arp_row(scores[i], rel[i], n[i]))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.data())
def test_ltr_compat_matches_registered_measures(b, width, data):
    # Unpadded rows, labels >= 0, distinct scores: the compat functions and the
    # registered measures (through generate_pytrec_eval) agree.
    rel = np.array(data.draw(st.lists(st.lists(st.integers(0, 3), min_size=width, max_size=width),
                                      min_size=b, max_size=b)))
    scores = np.array([np.random.default_rng(i).permutation(width) / width for i in range(b)])
    n = np.full(b, width)
    qrel, run = ltr.generate_pytrec_eval(scores, rel, n)
    res = irm.evaluate(qrel, run, ["LTR_ARP", "LTR_nDCG", "LTR_nDCG@2", "LTR_DCG@3"])
    order = np.argsort([int(q[1:]) for q in res.query_ids])  # q10 sorts before q2 by bytes
    np.testing.assert_allclose(res.values("LTR_ARP")[order], ltr.arp(scores, rel, n), atol=1e-12)
    np.testing.assert_allclose(res.values("LTR_nDCG")[order], ltr.ndcg(scores, rel, n, k=width),
                               atol=1e-12)
    np.testing.assert_allclose(res.values("LTR_nDCG@2")[order], ltr.ndcg(scores, rel, n, k=2),
                               atol=1e-12)
    np.testing.assert_allclose(res.values("LTR_DCG@3")[order], ltr.dcg(scores, rel, n, k=3),
                               atol=1e-12)


def test_generate_pytrec_eval_seed_with_real_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrel, run = ltr.generate_pytrec_eval(np.array(SCORES, dtype=np.float32), np.array(REL), [3, 3])
    assert run["q1"]["d1"] == 0.20000000298023224  # float32 widened, as from a torch tensor
    out = pytrec_eval.RelevanceEvaluator(qrel, {"map", "ndcg"}).evaluate(run)
    assert out["q0"] == pytest.approx({"map": 0.3333333333333333, "ndcg": 0.5})
    assert out["q1"] == pytest.approx({"map": 0.5833333333333333, "ndcg": 0.6934264036172708})
    mine = irm.evaluate(qrel, run, ["map", "ndcg"], semantics="pytrec_eval").to_dict()
    for q in out:
        assert mine[q] == pytest.approx(out[q], abs=1e-12)
    from irmetrics.compat.pytrec_eval import RelevanceEvaluator

    drop_in = RelevanceEvaluator(qrel, {"map", "ndcg"}).evaluate(run)
    assert drop_in.keys() == out.keys()
    for q in out:
        assert drop_in[q] == pytest.approx(out[q], abs=1e-12)


def test_generate_pytrec_eval_ids_and_padding():
    qrel, run = ltr.generate_pytrec_eval([[0.5, 0.1, 9.0]], [[2, 0, 7]], [2], qids=[42],
                                         q_prefix="Q", d_prefix="doc")
    assert qrel == {"Q42": {"doc0": 2, "doc1": 0}}
    assert run == {"Q42": {"doc0": 0.5, "doc1": 0.1}}
    qrel, _ = ltr.generate_pytrec_eval([[0.5], [0.1]], [[1], [0]], [1, 0], qid_offset=10)
    assert qrel == {"q10": {"d0": 1}, "q11": {}}


def test_other_tfsim_metrics_drop_closest_lookup():
    # PrecisionAtK: columns [1, k), class counts (k when r is None) minus 1
    assert tfsim.PrecisionAtK(k=3, drop_closest_lookup=True).compute(
        query_labels=LABELS, match_mask=MASK) == 0.5
    # MapAtK (0.17.1, a PrecisionAtK): columns [1, k), r - 1 floored at 0: the one column
    # [T] gives 1 / 2 (label 1, r 3 - 1) three times, [F] gives 0 (label 0): 1.5 / 4
    m = tfsim.MapAtK(r={0: 2, 1: 3}, k=2, drop_closest_lookup=True)
    assert m.compute(query_labels=LABELS, match_mask=MASK) == 0.375
    assert m.compute(query_labels=LABELS, match_mask=MASK) == 0.375  # r is not mutated
    assert tfsim.RecallAtK(k=1, drop_closest_lookup=True).compute(
        query_labels=LABELS, match_mask=MASK) == 0.75
    # labels missing from r count 0, so their queries score 0 (divide_no_nan), both metrics
    assert tfsim.PrecisionAtK(r={1: 2}, k=3).compute(query_labels=LABELS, match_mask=MASK) == 0.75
    assert tfsim.MapAtK(r={1: 2}, k=3).compute(query_labels=LABELS, match_mask=MASK) == 0.75
