"""irmetrics.compat.pml (AccuracyCalculator) and irmetrics.compat.ranking_metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics.compat import pml
from irmetrics.compat import ranking_metrics as rm
from irmetrics.exceptions import ParameterError, ShapeError

try:
    from tests.reference import ml_ref as ref
except ImportError:
    from reference import ml_ref as ref

NAMES = ["mean_average_precision", "mean_average_precision_at_r", "mean_reciprocal_rank",
         "precision_at_1", "r_precision"]


def assert_metrics(got, want):
    assert list(got) == [m for m in NAMES if m in got]
    for m, v in got.items():
        if math.isnan(want[m]):
            assert math.isnan(v), m
        else:
            assert v == pytest.approx(want[m], rel=1e-12, abs=1e-12), m


# ---------------------------------------------------------------- PML

def test_pml_toy_by_hand():
    x = np.array([[0.0, 1.0], [0.1, 1.0], [1.0, 0.0], [1.0, 0.2], [1.0, 0.1]])
    labels = np.array([0, 0, 1, 1, 0])
    got = pml.AccuracyCalculator(normalize_embeddings=False).get_accuracy(x, labels)
    want = {"precision_at_1": 2 / 5, "r_precision": 1 / 5, "mean_average_precision_at_r": 1 / 5,
            "mean_average_precision": (5 / 6 * 2 + 0.5 * 2 + (1 / 3 + 2 / 4) / 2) / 5,
            "mean_reciprocal_rank": (1 + 1 + 0.5 + 0.5 + 1 / 3) / 5}
    assert_metrics(got, want)


def test_pml_map_at_r_divides_by_r_when_k_small():
    # one class of 4 (R = 3 per query), k = 1: MAP@R = g_1 / 3, r_precision = g_1 / 1
    x = np.array([[0.0], [0.1], [0.2], [0.3], [5.0]])
    labels = np.array([0, 0, 0, 0, 1])
    got = pml.AccuracyCalculator(k=1, normalize_embeddings=False).get_accuracy(x, labels)
    assert got["mean_average_precision_at_r"] == pytest.approx(1 / 3)  # lone query 4 excluded
    assert got["r_precision"] == 1.0
    assert got["precision_at_1"] == 1.0


def test_pml_lone_queries_and_all_lone():
    x = np.array([[0.0], [1.0], [2.0]])
    got = pml.AccuracyCalculator(normalize_embeddings=False).get_accuracy(x, np.array([0, 1, 2]))
    assert all(math.isnan(v) for v in got.values())
    calc = pml.AccuracyCalculator(include=("precision_at_1",), return_per_class=True,
                                  normalize_embeddings=False)
    got = calc.get_accuracy(np.array([[0.0], [0.1], [3.0], [3.1], [9.0]]), np.array([5, 5, 7, 7, 8]))
    assert got == {"precision_at_1": [1.0, 1.0]}  # class 8 is lone


def test_pml_explicit_reference_and_ref_includes_query():
    rng = np.random.default_rng(4)
    q = rng.normal(size=(12, 3))
    ql = rng.integers(0, 3, 12)
    r = rng.normal(size=(20, 3))
    rl = rng.integers(0, 3, 20)
    for norm in (True, False):
        calc = pml.AccuracyCalculator(normalize_embeddings=norm)
        assert_metrics(calc.get_accuracy(q, ql, r, rl),
                       ref.pml_accuracy(q, ql, r, rl, normalize=norm))
    # reference contains the queries: the first neighbour (the query itself) is dropped
    both = np.vstack([q, r])
    bl = np.concatenate([ql, rl])
    got = pml.AccuracyCalculator(normalize_embeddings=False).get_accuracy(
        q, ql, both, bl, ref_includes_query=True)
    assert_metrics(got, ref.pml_accuracy(q, ql, both, bl, ref_includes_query=True, normalize=False))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 25), st.integers(1, 4), st.sampled_from([None, 1, 3, "max_bin_count"]),
       st.booleans(), st.integers(0, 2**31))
def test_pml_reference(n, n_classes, k, avg, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    labels = rng.integers(0, n_classes, n)
    calc = pml.AccuracyCalculator(k=k, avg_of_avgs=avg, normalize_embeddings=False)
    kk = k
    if k == "max_bin_count":
        kk = int(np.bincount(labels).max()) - 1
    assert_metrics(calc.get_accuracy(x, labels),
                   ref.pml_accuracy(x, labels, k=kk, normalize=False, avg_of_avgs=avg))


def test_pml_block_boundaries(monkeypatch):
    monkeypatch.setattr(pml, "_BLOCK_ENTRIES", 5)
    rng = np.random.default_rng(9)
    x = rng.normal(size=(17, 2))
    labels = rng.integers(0, 3, 17)
    assert_metrics(pml.AccuracyCalculator(normalize_embeddings=False).get_accuracy(x, labels),
                   ref.pml_accuracy(x, labels, normalize=False))


def test_pml_cosine_equals_normalised_euclidean_ranking():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(30, 4))
    labels = rng.integers(0, 3, 30)
    a = pml.AccuracyCalculator(distance="cosine").get_accuracy(x, labels)
    b = pml.AccuracyCalculator(distance="euclidean", normalize_embeddings=True).get_accuracy(x, labels)
    assert a == pytest.approx(b)


def test_pml_errors():
    with pytest.raises(ParameterError, match="include"):
        pml.AccuracyCalculator(include=("NMI",))
    with pytest.raises(ParameterError, match="tuple"):
        pml.AccuracyCalculator(exclude="r_precision")
    with pytest.raises(ParameterError, match="`k`"):
        pml.AccuracyCalculator(k=0)
    with pytest.raises(ParameterError, match="distance"):
        pml.AccuracyCalculator(distance="manhattan")
    calc = pml.AccuracyCalculator()
    with pytest.raises(ShapeError):
        calc.get_accuracy(np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(ParameterError, match="reference_labels"):
        calc.get_accuracy(np.zeros((3, 2)), np.zeros(3), reference=np.zeros((2, 2)))
    assert list(pml.AccuracyCalculator(exclude=("r_precision",)).get_accuracy(
        np.eye(3), np.array([0, 0, 1]))) == NAMES[:4]


# ---------------------------------------------------------------- ranking-metrics

def test_ranking_metrics_definitions():
    bm = np.array([[1, 0, 1], [0, 1, 1], [0, 0, 0]])
    np.testing.assert_allclose(rm.mean_average_precision_at_r(bm, 3),
                               [ref.map_at_r([1, 0, 1], 3), ref.map_at_r([0, 1, 1], 3), 0.0])
    assert rm.recall_at(bm, 1).tolist() == [1, 0, 0]
    assert rm.recall_at(bm, 2).tolist() == [1, 1, 0]
    # class sizes include the query: c = [0, 0, 1] -> sizes 2, 2, 1
    assert rm.r_precision(bm, [0, 0, 1]).tolist() == [1.0, 1.0, 0.0]
    assert rm.sizes_per_class(np.array([3, 0, 3])).tolist() == [1, 0, 0, 2]
    with pytest.raises(ShapeError, match="exactly r"):
        rm.mean_average_precision_at_r(bm, 2)
    with pytest.raises(ParameterError, match="`k`"):
        rm.recall_at(bm, 0)
    with pytest.raises(ParameterError, match="class ids"):
        rm.r_precision(bm, [-1, 0, 0])


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 8), st.integers(1, 5), st.data())
def test_erc_and_confidence_reference(n, width, data):
    bm = np.array(data.draw(st.lists(st.lists(st.integers(0, 1), min_size=width, max_size=width),
                                     min_size=n, max_size=n)))
    confs = np.array(data.draw(st.lists(st.sampled_from([0.1, 0.4, 0.5, 0.9]), min_size=n,
                                        max_size=n)))
    k = data.draw(st.integers(1, width))
    hits = [float(any(row[:k])) for row in bm]
    assert rm.erc_vs_recall_at(bm, confs, k) == pytest.approx(ref.erc(hits, confs), abs=1e-12)
    maprs = [ref.map_at_r(list(row), width) for row in bm]
    assert rm.erc_vs_mapr(bm, confs, width) == pytest.approx(ref.erc(maprs, confs), abs=1e-12)
    want = ref.conf_vs_recall_at_1([row[0] for row in bm], confs)
    got = rm.conf_vs_recall_at_1(bm, confs)
    assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1e-12)


def test_erc_orders_by_confidence_ties_in_input_order():
    # errors 1, 0, 1 with confidences 0.5, 0.9, 0.5 -> order 0 (conf .9), then 1, 1
    assert rm.error_vs_reject_curve(np.zeros((3, 1)), [0.0, 1.0, 0.0], [0.5, 0.9, 0.5]) == \
        pytest.approx((0 + 0.5 + 2 / 3) / 3)
    assert rm.order_by_confidence(np.array([1, 2, 3]), [0.2, 0.2, 0.1], descending=False).tolist() \
        == [3, 1, 2]


def test_spearman():
    assert rm.spearmanr_corr([0.1, 0.2, 0.3], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)


def test_cross_check_with_pml():
    pytest.importorskip("torch")
    ac = pytest.importorskip("pytorch_metric_learning.utils.accuracy_calculator")
    inf = pytest.importorskip("pytorch_metric_learning.utils.inference")
    import torch

    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 4)).astype(np.float32)
    labels = rng.integers(0, 4, 40)
    theirs = ac.AccuracyCalculator(knn_func=inf.CustomKNN(
        __import__("pytorch_metric_learning.distances", fromlist=["LpDistance"]).LpDistance()),
        exclude=("AMI", "NMI")).get_accuracy(torch.tensor(x), torch.tensor(labels))
    mine = pml.AccuracyCalculator(normalize_embeddings=True).get_accuracy(x, labels)
    for m in NAMES:
        assert mine[m] == pytest.approx(float(theirs[m]), abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 20), st.integers(0, 2**31))
def test_pml_properties(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    labels = rng.integers(0, 3, n)
    calc = pml.AccuracyCalculator(normalize_embeddings=False)
    got = calc.get_accuracy(x, labels)
    perm = rng.permutation(n)
    again = calc.get_accuracy(x[perm], labels[perm])
    for m in NAMES:
        if math.isnan(got[m]):
            assert math.isnan(again[m])
            continue
        assert 0.0 <= got[m] <= 1.0
        assert again[m] == pytest.approx(got[m], abs=1e-12)
    # perfectly separated classes score 1 everywhere
    sep = np.repeat(np.arange(3), 4)[:, None] * 100.0 + rng.random((12, 1))
    best = calc.get_accuracy(sep, np.repeat(np.arange(3), 4))
    assert all(v == pytest.approx(1.0) for v in best.values())
