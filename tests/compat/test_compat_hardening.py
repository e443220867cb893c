"""Issue 16 items 8 and 11: non-finite inputs of the metric-learning drop-ins, and the
drop-ins that followed an older original (TF-Similarity MapAtK, PML's AccuracyCalculator,
torchmetrics' Metric options and float32 decisions)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from irmetrics.compat import oml, pml, tfsim
from irmetrics.compat import ranking_metrics as rm
from irmetrics.compat.torchmetrics import numpy_api as tm
from irmetrics.exceptions import ParameterError

NAN, INF = float("nan"), float("inf")


# ---------------------------------------------------------------- item 8: NaN / inf

def embeddings_with(value):
    x = np.random.default_rng(8).standard_normal((6, 3))
    x[2, 1] = value
    return x


@pytest.mark.parametrize("bad", [NAN, INF, -INF])
def test_non_finite_embeddings_are_refused_everywhere(bad):
    labels = np.array([0, 0, 1, 1, 0, 1])
    x = embeddings_with(bad)
    with pytest.raises(ParameterError, match="`query`"):
        pml.AccuracyCalculator().get_accuracy(x, labels)
    with pytest.raises(ParameterError, match="`reference`"):
        pml.AccuracyCalculator().get_accuracy(x[:2] * 0 + 1, labels[:2], x, labels)
    em = oml.EmbeddingMetrics(type("D", (), {"__len__": lambda s: 6, "extra_data": {},
                                              "get_labels": lambda s: labels,
                                              "get_query_ids": lambda s: np.arange(6),
                                              "get_gallery_ids": lambda s: np.arange(6)})(),
                              verbose=False)
    em.setup()
    with pytest.raises(ParameterError, match="`embeddings`"):
        em.update(x, np.arange(6))
    with pytest.raises(ParameterError, match="`embeddings`"):
        oml.calc_pcf(x, (0.5,))
    with pytest.raises(ParameterError, match="`pos_dist`"):
        oml.calc_fnmr_at_fmr(np.array([0.1, bad]), np.array([0.5, 0.6]))
    with pytest.raises(ParameterError, match="`neg_dist`"):
        oml.calc_fnmr_at_fmr(np.array([0.1, 0.2]), np.array([bad, 0.6]))


@pytest.mark.parametrize("bad", [NAN, INF])
def test_non_finite_distances_and_confidences_are_refused(bad):
    with pytest.raises(ParameterError, match="`lookup_distances`"):
        tfsim.BNDCG(k=2).compute(query_labels=[0], match_mask=[[True, False]],
                                 lookup_distances=[[0.1, bad]])
    bm = np.array([[1, 0], [0, 1], [1, 1]])
    for call in (lambda: rm.erc_vs_recall_at(bm, [0.9, bad, 0.1], 1),
                 lambda: rm.conf_vs_recall_at_1(bm, [0.9, bad, 0.1]),
                 lambda: rm.order_by_confidence([1, 2, 3], [0.9, bad, 0.1]),
                 lambda: rm.spearmanr_corr([0.9, bad, 0.1], [1.0, 2.0, 3.0]),
                 lambda: rm.error_vs_reject_curve(bm, [1.0, bad, 0.0], [0.9, 0.5, 0.1])):
        with pytest.raises(ParameterError, match="must not contain NaN|must be finite"):
            call()


# ---------------------------------------------------------------- item 11: TF-Similarity MapAtK

def test_tfsim_map_at_k_is_the_0_17_1_precision_subclass():
    mask = [[1, 0, 1, 1]]
    labels = [1]
    assert issubclass(tfsim.MapAtK, tfsim.PrecisionAtK)
    # the values from the real library (r=None: the count is k = 3)
    assert tfsim.MapAtK(k=3).compute(query_labels=labels, match_mask=mask) == \
        pytest.approx((1 + 2 / 3) / 3)
    assert round(tfsim.MapAtK(k=3).compute(query_labels=labels, match_mask=mask), 4) == 0.5556
    assert tfsim.MapAtK(r={2: 5}, k=3).compute(query_labels=labels, match_mask=mask) == 0.0
    assert tfsim.MapAtK(r={1: 0}, k=3).compute(query_labels=labels, match_mask=mask) == 0.0
    assert tfsim.MapAtK(k=3, drop_closest_lookup=True).compute(
        query_labels=labels, match_mask=mask) == 0.25
    m = tfsim.MapAtK()  # r is optional
    assert m.name == "map@5" and m.canonical_name == "map@k" and m.r is None
    assert tfsim.MapAtK(clip_at_r=True).name == "map"
    with pytest.raises(ParameterError, match="non-negative"):
        tfsim.MapAtK(r={1: -2}, k=3).compute(query_labels=labels, match_mask=mask)


# ---------------------------------------------------------------- item 11: PML

PML_PARAMETERS = ["self", "include", "exclude", "avg_of_avgs", "return_per_class", "k",
                  "label_comparison_fn", "device", "knn_func", "kmeans_func"]


def test_pml_positional_order_and_options_are_2_9_0s():
    params = inspect.signature(pml.AccuracyCalculator.__init__).parameters
    positional = [n for n, p in params.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert positional == PML_PARAMETERS
    calc = pml.AccuracyCalculator((), (), False, True, 2, None, "cpu", None, None)
    assert calc.return_per_class and calc.k == 2 and calc.device == "cpu"
    with pytest.raises(ParameterError, match="mutually exclusive"):
        pml.AccuracyCalculator(avg_of_avgs=True, return_per_class=True)
    with pytest.raises(ParameterError, match="knn_func"):
        pml.AccuracyCalculator(knn_func=3)


def test_pml_max_bin_count_uses_only_the_query_labels():
    # reference: label 7 four times, label 0 twice; queries only have label 0 -> k = 2
    ref = np.array([[0.0], [0.1], [5.0], [5.1], [5.2], [5.3]])
    ref_labels = np.array([0, 0, 7, 7, 7, 7])
    query = np.array([[0.05], [2.58]])
    calc = pml.AccuracyCalculator(k="max_bin_count", include=("mean_average_precision",))
    got = calc.get_accuracy(query, np.array([0, 0]), ref, ref_labels)
    # query 1's labels by distance: 7, 0, 7, 0: AP (1/2) / 2 at k = 2 (k = 4 would give 1/2)
    assert got["mean_average_precision"] == pytest.approx((1 + 0.25) / 2)


def test_pml_all_lone_queries_per_class_give_nan_per_label():
    x = np.array([[0.0], [1.0], [2.0]])
    got = pml.AccuracyCalculator(return_per_class=True).get_accuracy(x, np.array([4, 5, 6]))
    assert set(got) == set(pml.METRICS)
    for values in got.values():
        assert len(values) == 3 and all(math.isnan(v) for v in values)


def test_pml_without_reference_uses_the_queries_minus_themselves():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((12, 2))
    labels = rng.integers(0, 3, 12)
    calc = pml.AccuracyCalculator()
    assert calc.get_accuracy(x, labels) == calc.get_accuracy(x, labels, x, labels, True)
    with pytest.raises(ParameterError, match="must start with `query`"):
        calc.get_accuracy(x, labels, x[::-1], labels[::-1], True)


def test_pml_label_comparison_fn_is_honoured():
    x = np.array([[0.0], [0.1], [1.0], [1.1]])
    labels = np.array([0, 10, 1, 11])  # same "class" when equal modulo 10
    same = pml.AccuracyCalculator(label_comparison_fn=lambda a, b: a % 10 == b % 10)
    plain = pml.AccuracyCalculator()
    assert same.get_accuracy(x, labels)["precision_at_1"] == 1.0
    assert math.isnan(plain.get_accuracy(x, labels)["precision_at_1"])  # every query lone


def test_pml_knn_func_with_pml_signature_is_used_and_padding_is_missing():
    x = np.array([[0.0], [0.1], [1.0], [1.1]])
    labels = np.array([0, 0, 1, 1])
    calls = []

    def reversed_knn(query, k, reference, ref_includes_query):
        calls.append((query.shape, k, reference.shape, ref_includes_query))
        order = np.argsort(-np.abs(query - reference.T), axis=1, kind="stable")  # farthest first
        if ref_includes_query:
            order = order[:, :-1]
        return None, order[:, :k]

    got = pml.AccuracyCalculator(knn_func=reversed_knn, include=("precision_at_1",)
                                 ).get_accuracy(x, labels)
    assert calls == [((4, 1), 3, (4, 1), True)] and got == {"precision_at_1": 0.0}

    def padded_knn(query, k, reference, ref_includes_query):  # faiss: -1 beyond the references
        return None, np.array([[1, -1, -1], [0, -1, -1]])

    got = pml.AccuracyCalculator(knn_func=padded_knn, k=3, include=("mean_average_precision",)
                                 ).get_accuracy(x[:2], labels[:2], x[:2], labels[:2], True)
    assert got == {"mean_average_precision": 1.0}  # PML reads labels[-1] there: MAP 2


# ---------------------------------------------------------------- item 11: torchmetrics

MODULES = [tm.RetrievalFallOut, tm.RetrievalMAP, tm.RetrievalMRR, tm.RetrievalPrecision,
           tm.RetrievalRecall, tm.RetrievalRPrecision, tm.RetrievalHitRate,
           tm.RetrievalNormalizedDCG, tm.RetrievalAUROC, tm.RetrievalPrecisionRecallCurve,
           tm.RetrievalRecallAtFixedPrecision]
OPTIONS = dict(compute_on_cpu=True, dist_sync_on_step=False, sync_on_compute=False,
               process_group=None, dist_sync_fn=None, distributed_available_fn=lambda: False,
               compute_with_cache=False)


@pytest.mark.parametrize("module", MODULES)
def test_torchmetrics_modules_accept_metric_options(module):
    preds, target, indexes = [0.2, 0.3, 0.5, 0.1], [0, 1, 1, 0], [0, 0, 1, 1]
    plain = module()(preds, target, indexes=indexes)
    with_options = module(**OPTIONS)(preds, target, indexes=indexes)
    assert str(with_options) == str(plain)
    with pytest.raises(ParameterError, match="unexpected"):
        module(compute_on_gpu=True)
    with pytest.raises(ParameterError, match="compute_on_cpu"):
        module(compute_on_cpu="yes")
    with pytest.raises(ParameterError, match="dist_sync_fn"):
        module(dist_sync_fn=3)


def test_recall_at_fixed_precision_decides_in_float32():
    # Four queries of 7 documents, the relevant ones ranked last: 2, 4, 4, 4 of them, so
    # precision@7 is 2/7, 4/7, 4/7, 4/7 with mean exactly 1/2: 0.49999999999999994 in
    # float64, 0.5 in torch's float32; recall@7 is 1 and every smaller k has mean
    # precision < 1/2. torchmetrics 1.9.0 gives (1.0, 7).
    hits = [2, 4, 4, 4]
    target = np.concatenate([[0] * (7 - h) + [1] * h for h in hits])
    preds = np.tile(np.linspace(0.9, 0.3, 7), 4)
    indexes = np.repeat(np.arange(4), 7)
    p7 = np.array([h / 7 for h in hits])
    assert p7[:, None].mean(axis=0)[0] < 0.5 == np.float32(p7.astype(np.float32).mean())
    metric = tm.RetrievalRecallAtFixedPrecision(min_precision=0.5)
    assert metric(preds, target, indexes=indexes) == (1.0, 7)
    assert tm.RetrievalRecallAtFixedPrecision(min_precision=0.51)(
        preds, target, indexes=indexes) == (0.0, 7)


def test_oml_int_cutoff_is_a_parameter_error():
    # issue 16 item 10: cmc_top_k=5 (not a tuple) raised a raw TypeError.
    from irmetrics.compat import oml
    from irmetrics.exceptions import ParameterError

    with pytest.raises(ParameterError, match=r"`cmc_top_k` must be a non-empty tuple of"
                                             r" positive integers; got 5\."):
        oml.calc_retrieval_metrics([[1, 0]], [[1]], cmc_top_k=5)
    assert oml.calc_retrieval_metrics([[1, 0]], [[1]], cmc_top_k=(), precision_top_k=(1,),
                                      map_top_k=())["precision"][1] == 1.0
