"""irmetrics.compat.torchmetrics against torchmetrics 1.9.0's documented/observed behaviour."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics.compat.torchmetrics import numpy_api as tm
from irmetrics.exceptions import InputFormatError, ParameterError, ShapeError

try:
    from tests.reference import ml_ref as ref
except ImportError:
    from reference import ml_ref as ref

IDX = [0, 0, 0, 1, 1, 1, 1]
PREDS = [0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]
TARGET = [False, False, True, False, True, False, True]


# ---------------------------------------------------------------- seed / doc examples

def test_fall_out_seed_examples():
    assert tm.retrieval_fall_out(np.array([0.2, 0.3, 0.5]), np.array([True, False, True]),
                                 top_k=2) == 1.0
    fo = tm.RetrievalFallOut(top_k=2)
    assert fo(PREDS, TARGET, indexes=IDX) == 0.5
    assert fo.higher_is_better is False
    assert fo.empty_target_action == "pos"


def test_fall_out_empty_means_no_negative():
    # functional: no negative -> 0; module default 'pos' -> 1
    assert tm.retrieval_fall_out([0.3, 0.1], [1, 1]) == 0.0
    m = tm.RetrievalFallOut()
    m.update([0.3, 0.1, 0.2, 0.5], [1, 1, 0, 0], indexes=[0, 0, 1, 1])
    assert m.compute() == pytest.approx((1.0 + 1.0) / 2)  # query 1: all negatives retrieved
    m = tm.RetrievalFallOut(empty_target_action="neg")
    m.update([0.3, 0.1], [1, 1], indexes=[0, 0])
    assert m.compute() == 0.0
    # a query without positives is NOT empty for fall-out
    m = tm.RetrievalFallOut(top_k=1, empty_target_action="error")
    m.update([0.3, 0.1], [0, 0], indexes=[0, 0])
    assert m.compute() == 0.5


@pytest.mark.parametrize("fn, args, filtered, unfiltered", [
    (tm.retrieval_average_precision, ([0.5, -0.2, 0.3], [1, 1, 0]), 1.0, 5 / 6),
    (tm.retrieval_reciprocal_rank, ([-0.5, -0.2, 0.3], [1, 1, 0]), 0.0, 0.5),
])
def test_pred_filter_examples(fn, args, filtered, unfiltered):
    assert fn(*args) == pytest.approx(filtered)
    assert fn(*args, filter_nonpositive=False) == pytest.approx(unfiltered)


def test_precision_recall_filter_and_k_beyond_n():
    assert tm.retrieval_precision([0.5, -0.2, 0.3], [1, 1, 0], top_k=3) == pytest.approx(1 / 3)
    assert tm.retrieval_precision([0.5, -0.2, 0.3], [1, 1, 0], top_k=3,
                                  filter_nonpositive=False) == pytest.approx(2 / 3)
    assert tm.retrieval_recall([0.5, -0.2, 0.3], [1, 1, 0], top_k=3) == 0.5
    assert tm.retrieval_recall([0.5, -0.2, 0.3], [1, 1, 0], top_k=3, filter_nonpositive=False) == 1.0
    # 2 hits in 3 items, K = 5 -> 0.4; adaptive_k -> 2/3
    assert tm.retrieval_precision([0.5, 0.4, 0.3], [1, 1, 0], top_k=5) == 0.4
    assert tm.retrieval_precision([0.5, 0.4, 0.3], [1, 1, 0], top_k=5,
                                  adaptive_k=True) == pytest.approx(2 / 3)
    assert tm.retrieval_precision([0.5, 0.4], [0, 0], top_k=1) == 0.0


def test_doc_examples():
    assert tm.retrieval_average_precision([0.2, 0.3, 0.5], [True, False, True]) == pytest.approx(5 / 6)
    assert tm.retrieval_reciprocal_rank([0.2, 0.3, 0.5], [False, True, False]) == 0.5
    assert tm.retrieval_precision([0.2, 0.3, 0.5], [True, False, True], top_k=2) == 0.5
    assert tm.retrieval_recall([0.2, 0.3, 0.5], [True, False, True], top_k=2) == 0.5
    assert tm.retrieval_r_precision([0.2, 0.3, 0.5], [True, False, True]) == 0.5
    assert tm.retrieval_hit_rate([0.2, 0.3, 0.5], [True, False, True], top_k=2) == 1.0
    assert tm.retrieval_normalized_dcg([.1, .2, .3, 4, 70], [10, 0, 0, 1, 5]) == \
        pytest.approx(0.6957, abs=5e-5)
    assert tm.retrieval_auroc([0.2, 0.3, 0.5], [True, False, True]) == 0.5
    p, r, k = tm.retrieval_precision_recall_curve([0.2, 0.3, 0.5], [True, False, True], max_k=2)
    assert (p.tolist(), r.tolist(), k.tolist()) == ([1.0, 0.5], [0.5, 0.5], [1, 2])
    assert tm.RetrievalMAP()(PREDS, TARGET, IDX) == pytest.approx(0.7917, abs=5e-5)
    assert tm.RetrievalMRR()(PREDS, TARGET, IDX) == 0.75
    assert tm.RetrievalAUROC()(PREDS, TARGET, IDX) == 0.75
    assert tm.RetrievalRPrecision()(PREDS, TARGET, IDX) == 0.75
    assert tm.RetrievalHitRate(top_k=1)(PREDS, TARGET, IDX) == 0.5


def test_ndcg_tie_averaging():
    # ranks 1-2 tied: mean gain 0.5 * (1 + 1/log2 3), ideal 1
    assert tm.retrieval_normalized_dcg([0.5, 0.5], [1, 0]) == pytest.approx(
        0.5 * (1 + 1 / math.log2(3)))
    assert tm.retrieval_normalized_dcg([0.5, 0.5, 0.1], [0, 1, 1], top_k=1) == pytest.approx(0.5)
    assert tm.retrieval_normalized_dcg([0.5, 0.4], [0, 0]) == 0.0


def test_auroc_max_fpr_and_sigmoid():
    preds = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    target = [1, 0, 1, 0, 0, 1]
    for max_fpr in (None, 0.25, 0.5, 0.9):
        assert tm.retrieval_auroc(preds, target, max_fpr=max_fpr) == pytest.approx(
            ref.tm_auroc(preds, target, max_fpr=max_fpr), abs=1e-12)
    # logits: rank preserving, but float32 saturation merges 20 and 30 into a tie at 1.0
    assert tm.retrieval_auroc([30.0, 20.0, -1.0], [0, 1, 0]) == pytest.approx(0.75)
    assert tm.retrieval_auroc([0.9, 0.8], [1, 1]) == 0.0  # one class only
    with pytest.raises(ParameterError, match="max_fpr"):
        tm.RetrievalAUROC(max_fpr=1.5)


def test_module_empty_actions_ignore_index_and_aggregation():
    preds = [0.9, 0.1, 0.5, 0.4, 0.3, 0.8, 0.7]
    target = [1, 0, 0, 0, -100, 1, 0]
    idx = [3, 3, 5, 5, 5, 9, 9]
    results = {}
    for action in ("neg", "pos", "skip"):
        m = tm.RetrievalMRR(empty_target_action=action, ignore_index=-100)
        m.update(preds, target, idx)
        results[action] = m.compute()
    assert results == {"neg": 2 / 3, "pos": 1.0, "skip": 1.0}
    m = tm.RetrievalMRR(empty_target_action="error", ignore_index=-100)
    m.update(preds, target, idx)
    with pytest.raises(InputFormatError, match="no positive target"):
        m.compute()
    vals = {}
    for agg in ("mean", "median", "min", "max"):
        m = tm.RetrievalPrecision(top_k=2, aggregation=agg)
        m.update([0.9, 0.1, 0.5, 0.4, 0.8, 0.7, 0.6, 0.2], [1, 1, 1, 0, 0, 0, 1, 0],
                 [0, 0, 1, 1, 2, 2, 3, 3])
        vals[agg] = m.compute()
    assert vals == {"mean": 0.5, "median": 0.5, "min": 0.0, "max": 1.0}
    m = tm.RetrievalPrecision(top_k=1, aggregation="median")
    m.update([0.9, 0.8, 0.7, 0.6], [1, 0, 0, 1], [0, 1, 2, 3])
    assert m.compute() == 0.0  # lower median of [1, 0, 0, 1], as torch.median
    m = tm.RetrievalHitRate(aggregation=lambda v, dim=None: float(np.prod(v)))
    m.update([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 1], [0, 0, 1, 1])
    assert m.compute() == 1.0


def test_module_accumulates_across_updates_and_reset():
    m = tm.RetrievalMAP()
    m.update([0.2, 0.3], [0, 0], [7, 7])
    m.update([0.5], [1], [7])  # query 7 spans two updates
    assert m.compute() == 1.0
    assert m([0.1, 0.9], [1, 0], [2, 2]) == 0.5  # forward: this batch only
    assert m.compute() == pytest.approx(0.75)
    m.reset()
    with pytest.raises(ParameterError, match="update"):
        m.compute()


def test_pr_curve_module_and_recall_at_fixed_precision():
    idx = [0, 0, 0, 0, 1, 1, 1]
    preds = [0.4, 0.01, 0.5, 0.6, 0.2, 0.3, 0.5]
    target = [True, False, False, True, True, False, True]
    p, r, k = tm.RetrievalPrecisionRecallCurve(max_k=4)(preds, target, idx)
    assert p.round(4).tolist() == [1.0, 0.5, 0.6667, 0.5]
    assert r.tolist() == [0.5, 0.5, 1.0, 1.0] and k.tolist() == [1, 2, 3, 4]
    assert tm.RetrievalRecallAtFixedPrecision(min_precision=0.8)(preds, target, idx) == (0.5, 1)
    assert tm.RetrievalRecallAtFixedPrecision(min_precision=0.0)(preds, target, idx) == (1.0, 4)
    assert tm.RetrievalRecallAtFixedPrecision(min_precision=1.0)(
        [0.9, 0.8], [0, 1], [0, 0]) == (0.0, 2)
    m = tm.RetrievalPrecisionRecallCurve()  # max_k = largest group
    p, r, k = m([0.9, 0.8, 0.7, 0.6], [1, 0, 0, 0], [0, 0, 0, 1])
    assert k.tolist() == [1, 2, 3]
    assert r.tolist() == [0.5, 0.5, 0.5]  # query 1 is empty -> zeros ('neg')
    p, r, k = tm.retrieval_precision_recall_curve([0.9, 0.8], [1, 0], max_k=4, adaptive_k=True)
    assert k.tolist() == [1, 2, 2, 2] and p.tolist() == [1.0, 0.5, 0.5, 0.5]


def test_input_errors():
    with pytest.raises(ParameterError, match="top_k"):
        tm.retrieval_fall_out([0.1], [1], top_k=0)
    with pytest.raises(ParameterError, match="top_k"):
        tm.RetrievalFallOut(top_k=-1)
    with pytest.raises(ParameterError, match="empty_target_action"):
        tm.RetrievalMAP(empty_target_action="maybe")
    with pytest.raises(ParameterError, match="non-empty"):
        tm.retrieval_recall([], [])
    with pytest.raises(ShapeError, match="same shape"):
        tm.retrieval_recall([0.1, 0.2], [1])
    with pytest.raises(ParameterError, match="floats"):
        tm.retrieval_recall([1, 2], [1, 0])
    with pytest.raises(ParameterError, match="binary"):
        tm.retrieval_recall([0.1, 0.2], [2, 0])
    with pytest.raises(ParameterError, match="fractional"):
        tm.retrieval_recall([0.1, 0.2], [0.5, 0.0])
    with pytest.raises(ParameterError, match="indexes"):
        tm.RetrievalMAP().update([0.1], [1], None)
    with pytest.raises(ParameterError, match="integers"):
        tm.RetrievalMAP().update([0.1], [1], [0.5])
    with pytest.raises(ParameterError, match="non-empty"):
        tm.RetrievalMAP(ignore_index=1).update([0.1], [1], [0])
    with pytest.raises(ParameterError, match="NaN"):
        tm.retrieval_hit_rate([np.nan, 0.1], [1, 0])


def test_preds_cast_to_float32_before_ranking():
    # 0.1 and 0.1 + 1e-12 collide in float32: the tie keeps input order.
    assert tm.retrieval_reciprocal_rank(np.array([0.1, 0.1 + 1e-12]), np.array([0, 1]),
                                        filter_nonpositive=False) == 0.5


# ---------------------------------------------------------------- differential

queries = st.lists(
    st.tuples(st.sampled_from([-0.5, 0.0, 0.1, 0.25, 0.5, 0.9, 2.0]), st.integers(0, 1)),
    min_size=1, max_size=9)


@settings(max_examples=250, deadline=None)
@given(queries, st.one_of(st.none(), st.integers(1, 11)), st.booleans())
def test_functional_reference(pairs, top_k, filt):
    preds = [p for p, _ in pairs]
    target = [t for _, t in pairs]
    close = dict(rel=1e-12, abs=1e-12)
    assert tm.retrieval_average_precision(preds, target, top_k, filter_nonpositive=filt) == \
        pytest.approx(ref.tm_average_precision(preds, target, top_k, filt), **close)
    assert tm.retrieval_reciprocal_rank(preds, target, top_k, filter_nonpositive=filt) == \
        pytest.approx(ref.tm_reciprocal_rank(preds, target, top_k, filt), **close)
    for adaptive in (False, True):
        assert tm.retrieval_precision(preds, target, top_k, adaptive, filter_nonpositive=filt) == \
            pytest.approx(ref.tm_precision(preds, target, top_k, adaptive, filt), **close)
    assert tm.retrieval_recall(preds, target, top_k, filter_nonpositive=filt) == \
        pytest.approx(ref.tm_recall(preds, target, top_k, filt), **close)
    assert tm.retrieval_r_precision(preds, target) == pytest.approx(ref.tm_r_precision(preds, target))
    assert tm.retrieval_hit_rate(preds, target, top_k) == ref.tm_hit_rate(preds, target, top_k)
    assert tm.retrieval_fall_out(preds, target, top_k) == \
        pytest.approx(ref.tm_fall_out(preds, target, top_k), **close)
    assert tm.retrieval_auroc(preds, target, top_k) == \
        pytest.approx(ref.tm_auroc(preds, target, top_k), **close)
    for max_fpr in (0.3, 0.75):
        assert tm.retrieval_auroc(preds, target, top_k, max_fpr) == \
            pytest.approx(ref.tm_auroc(preds, target, top_k, max_fpr), **close)
    max_k = top_k or len(preds)
    p, r, _ = tm.retrieval_precision_recall_curve(preds, target, max_k)
    rp, rr = ref.tm_pr_curve(preds, target, max_k)
    np.testing.assert_allclose(p, rp, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r, rr, rtol=1e-12, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.1, 0.2, 0.5, 0.7, 3.0]), st.integers(-1, 4)),
                min_size=1, max_size=9), st.one_of(st.none(), st.integers(1, 10)))
def test_ndcg_reference(pairs, top_k):
    preds = [p for p, _ in pairs]
    target = [t for _, t in pairs]
    assert tm.retrieval_normalized_dcg(preds, target, top_k) == pytest.approx(
        ref.tm_ndcg(preds, target, top_k), rel=1e-12, abs=1e-12)


MODULES = [
    (lambda: tm.RetrievalMAP(top_k=3), lambda p, t: ref.tm_average_precision(p, t, 3), None),
    (lambda: tm.RetrievalMRR(), ref.tm_reciprocal_rank, None),
    (lambda: tm.RetrievalPrecision(top_k=2, adaptive_k=True),
     lambda p, t: ref.tm_precision(p, t, 2, True), None),
    (lambda: tm.RetrievalRecall(top_k=2), lambda p, t: ref.tm_recall(p, t, 2), None),
    (lambda: tm.RetrievalRPrecision(), ref.tm_r_precision, None),
    (lambda: tm.RetrievalHitRate(top_k=2), lambda p, t: ref.tm_hit_rate(p, t, 2), None),
    (lambda: tm.RetrievalFallOut(top_k=2), lambda p, t: ref.tm_fall_out(p, t, 2), "neg"),
    (lambda: tm.RetrievalNormalizedDCG(top_k=3), lambda p, t: ref.tm_ndcg(p, t, 3), None),
    (lambda: tm.RetrievalAUROC(), ref.tm_auroc, None),
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([-0.1, 0.1, 0.4, 0.8]),
                          st.integers(0, 1)), min_size=1, max_size=25))
def test_modules_reference(rows):
    idx = [r[0] for r in rows]
    preds = [r[1] for r in rows]
    target = [r[2] for r in rows]
    groups = {}
    for i, p, t in rows:
        groups.setdefault(i, ([], []))
        groups[i][0].append(p)
        groups[i][1].append(t)
    for make, fn, empty_kind in MODULES:
        m = make()
        half = len(rows) // 2
        if half:
            m.update(preds[:half], target[:half], idx[:half])
        m.update(preds[half:], target[half:], idx[half:])
        if empty_kind == "neg":
            empty, action = (lambda t: all(t)), "pos"
        else:
            empty, action = (lambda t: sum(t) == 0), "neg"
        want = ref.tm_module(fn, groups, empty, action)
        assert m.compute() == pytest.approx(want, rel=1e-12, abs=1e-12), type(m).__name__


def test_tensor_like_inputs():
    class T:
        def __init__(self, a):
            self.a = np.asarray(a)

        def __array__(self, dtype=None, copy=None):
            return self.a

    assert tm.retrieval_fall_out(T([0.2, 0.3, 0.5]), T([True, False, True]), top_k=2) == 1.0
    m = tm.RetrievalFallOut(top_k=2)
    m.update(T(np.array(PREDS, dtype=np.float32)), T(TARGET), T(np.array(IDX, dtype=np.int64)))
    assert m.compute() == 0.5


def test_cross_check_with_torchmetrics():
    torch = pytest.importorskip("torch")
    tmf = pytest.importorskip("torchmetrics.functional.retrieval")
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 10))
        preds = rng.random(n).astype(np.float32) - 0.2  # distinct, some <= 0
        target = rng.integers(0, 2, n)
        tp, tt = torch.tensor(preds), torch.tensor(target)
        for top_k in (None, 1, 3):
            assert tm.retrieval_average_precision(preds, target, top_k) == pytest.approx(
                float(tmf.retrieval_average_precision(tp, tt, top_k=top_k)), abs=1e-6)
            assert tm.retrieval_fall_out(preds, target, top_k) == pytest.approx(
                float(tmf.retrieval_fall_out(tp, tt, top_k=top_k)), abs=1e-6)
            assert tm.retrieval_normalized_dcg(preds, target, top_k) == pytest.approx(
                float(tmf.retrieval_normalized_dcg(tp, tt, top_k=top_k)), abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1)), min_size=1, max_size=20),
       st.randoms(use_true_random=False))
def test_modules_invariant_to_row_order_with_distinct_preds(rows, rnd):
    preds = np.linspace(0.05, 0.95, len(rows)).astype(np.float32)  # distinct: no tie order at play
    idx = np.array([r[0] for r in rows])
    target = np.array([r[1] for r in rows])
    perm = np.array(rnd.sample(range(len(rows)), len(rows)))
    for make in (lambda: tm.RetrievalMAP(top_k=2), lambda: tm.RetrievalNormalizedDCG(),
                 lambda: tm.RetrievalAUROC(max_fpr=0.5), lambda: tm.RetrievalFallOut(top_k=3),
                 lambda: tm.RetrievalPrecision(top_k=4)):
        a, b = make(), make()
        a.update(preds, target, idx)
        b.update(preds[perm], target[perm], idx[perm])
        assert a.compute() == pytest.approx(b.compute(), abs=1e-12)
        assert 0.0 <= a.compute() <= 1.0
