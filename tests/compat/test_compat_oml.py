"""irmetrics.compat.oml against OML 4.0.0's documented and observed behaviour."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics.compat import oml
from irmetrics.exceptions import ParameterError, ShapeError

try:
    from tests.reference import ml_ref as ref
except ImportError:
    from reference import ml_ref as ref


class FakeTensor:
    """Anything exposing ``__array__`` (as a CPU torch tensor does)."""

    def __init__(self, data, dtype=None):
        self._a = np.asarray(data, dtype=dtype)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)

    def __len__(self):
        return len(self._a)


def lists(values):
    return [v.tolist() for v in values]


# ---------------------------------------------------------------- seed examples

def test_calc_cmc_seed():
    gt = [FakeTensor([1, 0], bool), FakeTensor([0, 1, 1], bool), FakeTensor([0, 0], bool),
          FakeTensor([], bool)]
    assert lists(oml.calc_cmc(gt, [2, 2, 1, 0], top_k=(1, 2))) == [[1, 0, 0, 1], [1, 1, 0, 1]]


def test_calc_precision_seed_and_nan():
    gt = [[1, 0], [0, 1, 1], [0, 0], []]
    assert lists(oml.calc_precision(gt, [2, 3, 5, 2], top_k=(1, 2))) == [[1, 0, 0, 0],
                                                                         [0.5, 0.5, 0, 0]]
    out = oml.calc_precision([[0, 0, 0], [1, 0]], [0, 1], top_k=(1, 2, 5))
    for v in out:
        assert math.isnan(v[0]) and v[1] == 1.0
    prose = oml.calc_precision([[1, 1, 1, 0, 0]], [3], top_k=(1, 2, 3, 4, 5, 6))
    assert [v[0] for v in prose] == [1.0] * 6


def test_calc_map_seed():
    gt = [[1, 0], [0, 1], [0, 0, 0, 0], []]
    assert lists(oml.calc_map(gt, [1, 1, 2, 0], top_k=(1, 2))) == [[1, 0, 0, 1], [1, 0.5, 0, 1]]
    assert oml.calc_map([[1, 0, 0]], [3], top_k=(3,))[0].tolist() == [1.0]


def test_calc_retrieval_metrics_seed_unreduced():
    m = oml.calc_retrieval_metrics([[], [], [2, 0]], [[], [1], []], cmc_top_k=(1, 2),
                                   precision_top_k=(1, 2), map_top_k=(1, 2), reduce=False)
    for k in (1, 2):
        assert m["cmc"][k].tolist() == [1, 0, 0]
        p = m["precision"][k]
        assert p[:2].tolist() == [1, 0] and math.isnan(p[2])
        assert m["map"][k].tolist() == [1, 0, 0]


def test_calc_retrieval_metrics_reduce_categories_and_skipping():
    retrieved = [[0, 1, 2], [3, 1], [2, 0, 4]]
    gt = [[1], [5, 3], [9]]
    m = oml.calc_retrieval_metrics(retrieved, gt, query_categories=np.array(["b", "a", "b"]),
                                   cmc_top_k=(1,), precision_top_k=(), map_top_k=(2,))
    assert list(m) == ["OVERALL", "b", "a"]  # first-appearance order
    assert set(m["OVERALL"]) == {"cmc", "map"}
    assert m["OVERALL"]["cmc"][1] == pytest.approx(1 / 3)
    assert m["b"]["cmc"][1] == 0.0 and m["a"]["cmc"][1] == 1.0
    assert m["OVERALL"]["map"][2] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    # duplicates in gt_ids inflate n_gt, as in OML
    p = oml.calc_retrieval_metrics([[7, 8]], [[7, 7, 7]], cmc_top_k=(), map_top_k=(),
                                   precision_top_k=(2,), reduce=False)
    assert p["precision"][2].tolist() == [0.5]


def test_rr_wrappers():
    rr = oml.RetrievalResults.from_lists([[1, 0, 2], [2]], [[0, 2], [5]],
                                         distances=[[0.1, 0.3, 0.4], [0.2]])
    a = oml.calc_retrieval_metrics_rr(rr, cmc_top_k=(1, 3))
    b = oml.calc_retrieval_metrics(rr.retrieved_ids, rr.gt_ids, cmc_top_k=(1, 3))
    assert a == b
    f = oml.calc_fnmr_at_fmr_rr(rr, fmr_vals=(0.5,))
    # positives 0.3, 0.4; negatives 0.1, 0.2 -> median 0.15; both positives >= it
    assert f == {"fnmr@fmr": {0.5: 1.0}}
    assert oml.calc_fnmr_at_fmr_rr(rr, fmr_vals=()) == {}


def test_fnmr_seed_and_edges():
    pos = np.array([0, 0, 1, 1, 2, 2, 5, 5, 9, 9])
    neg = np.array([3, 3, 4, 4, 6, 6, 7, 7, 8, 8])
    assert oml.calc_fnmr_at_fmr(pos, neg, fmr_vals=(0.1, 0.5)).tolist() == [0.4, 0.2]
    # q=0 -> min(neg), q=1 -> max(neg)
    assert oml.calc_fnmr_at_fmr(pos, neg, (0.0, 1.0)).tolist() == [0.4, 0.2]
    assert np.isnan(oml.calc_fnmr_at_fmr([], neg, (0.5,))).all()
    with pytest.raises(ParameterError, match="fmr_vals"):
        oml.calc_fnmr_at_fmr(pos, neg, (1.5,))
    with pytest.raises(ParameterError, match="fmr_vals"):
        oml.calc_fnmr_at_fmr(pos, neg, ())
    with pytest.raises(ParameterError, match="neg_dist"):
        oml.calc_fnmr_at_fmr(pos, [], (0.1,))


@pytest.mark.parametrize("seed", range(10))
def test_fnmr_reference(seed):
    rng = np.random.default_rng(seed)
    pos = rng.integers(0, 10, size=rng.integers(1, 30)).astype(float)
    neg = rng.integers(0, 10, size=rng.integers(1, 30)).astype(float)
    q = tuple(rng.random(4))
    assert oml.calc_fnmr_at_fmr(pos, neg, q).tolist() == pytest.approx(ref.fnmr_at_fmr(pos, neg, q))


def test_pcf_seed_and_edges():
    assert oml.calc_pcf(np.eye(4, 10), (0.5, 1)).tolist() == [0.2, 0.5]
    assert oml.calc_pcf(FakeTensor(np.eye(4, 10, dtype=np.float32)), (0.5, 1)).tolist() == [0.2, 0.5]
    x = np.random.default_rng(0).normal(size=(20, 3))
    assert oml.calc_pcf(x, (1.0,)).tolist() == [4 / 3]  # (d + 1) / d
    assert oml.calc_pcf(np.ones((1, 4)), (0.5,)).tolist() == [0.5]  # one row: 2 / d
    # zero variance: NaN ratios count as "not above r" (torch searchsorted): min(N, d) + 1
    assert oml.calc_pcf(np.ones((5, 4)), (0.5,)).tolist() == [5 / 4]
    with pytest.raises(ParameterError, match="pcf_variance"):
        oml.calc_pcf(x, (-0.1,))


@pytest.mark.parametrize("seed", range(8))
def test_pcf_reference(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(int(rng.integers(2, 12)), int(rng.integers(1, 6))))
    rs = (0.0, 0.3, 0.5, 0.9, 1.0)
    assert oml.calc_pcf(x, rs).tolist() == ref.pcf(x, rs)


def test_topological_metrics_categories():
    x = np.vstack([np.eye(4, 10), np.eye(4, 10)[::-1] * 2])
    cats = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    m = oml.calc_topological_metrics(x, (0.5,), categories=cats)
    assert list(m) == ["OVERALL", 0, 1]
    assert m[0]["pcf"][0.5] == oml.calc_pcf(x[4:], (0.5,))[0]
    assert oml.calc_topological_metrics(x, ()) == {}


def test_input_errors():
    with pytest.raises(ParameterError, match="top_k"):
        oml.calc_cmc([[1]], [1], top_k=(0,))
    with pytest.raises(ParameterError, match="top_k"):
        oml.calc_map([[1]], [1], top_k=())
    with pytest.raises(ShapeError, match="n_gts"):
        oml.calc_precision([[1], [0]], [1], top_k=(1,))
    with pytest.raises(ShapeError):
        oml.calc_retrieval_metrics([[1]], [[1], [2]])
    with pytest.raises(ParameterError, match="cmc_top_k"):
        oml.calc_retrieval_metrics([[1]], [[1]], cmc_top_k=(-1,))


def test_inputs_not_modified():
    gt = [np.array([True, False])]
    n = np.array([1])
    before = [g.copy() for g in gt], n.copy()
    oml.calc_map(gt, n, (1, 2))
    assert np.array_equal(gt[0], before[0][0]) and np.array_equal(n, before[1])


# ---------------------------------------------------------------- differential

@st.composite
def gt_rows(draw):
    rows = draw(st.lists(st.lists(st.booleans(), max_size=7), min_size=1, max_size=8))
    extra = draw(st.lists(st.integers(0, 3), min_size=len(rows), max_size=len(rows)))
    return rows, [sum(r) + e for r, e in zip(rows, extra)]


@settings(max_examples=200, deadline=None)
@given(gt_rows(), st.lists(st.integers(1, 9), min_size=1, max_size=3))
def test_gt_tops_reference(case, top_k):
    rows, n_gts = case
    top_k = tuple(top_k)
    for fn, rf in ((oml.calc_cmc, ref.oml_cmc), (oml.calc_precision, ref.oml_precision),
                   (oml.calc_map, ref.oml_map)):
        got = fn(rows, n_gts, top_k)
        for k, values in zip(top_k, got):
            want = [rf(r, n, k) for r, n in zip(rows, n_gts)]
            np.testing.assert_allclose(values, want, rtol=1e-12, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), max_size=6, unique=True), min_size=1, max_size=6),
       st.data())
def test_ids_reference(retrieved, data):
    gt = [data.draw(st.lists(st.integers(0, 6), max_size=4)) for _ in retrieved]
    m = oml.calc_retrieval_metrics(retrieved, gt, cmc_top_k=(1, 3), precision_top_k=(2,),
                                   map_top_k=(4,), reduce=False)
    g = [[x in set(gi) for x in r] for r, gi in zip(retrieved, gt)]
    n = [len(gi) for gi in gt]
    np.testing.assert_allclose(m["cmc"][3], [ref.oml_cmc(a, b, 3) for a, b in zip(g, n)])
    np.testing.assert_allclose(m["precision"][2], [ref.oml_precision(a, b, 2) for a, b in zip(g, n)])
    np.testing.assert_allclose(m["map"][4], [ref.oml_map(a, b, 4) for a, b in zip(g, n)])


# ---------------------------------------------------------------- EmbeddingMetrics

class Dataset:
    def __init__(self, labels, query, gallery, extra=None):
        self.labels, self.query, self.gallery = np.asarray(labels), query, gallery
        self.extra_data = extra or {}

    def __len__(self):
        return len(self.labels)

    def get_labels(self):
        return self.labels

    def get_query_ids(self):
        return np.flatnonzero(self.query)

    def get_gallery_ids(self):
        return np.flatnonzero(self.gallery)


def brute_force_rr(emb, ds, max_k):
    labels = ds.get_labels()
    seq = ds.extra_data.get("sequence")
    gids = ds.get_gallery_ids()
    retrieved, gts, dists = [], [], []
    for qi in ds.get_query_ids():
        cands, gt = [], []
        for pos, gi in enumerate(gids):
            if gi == qi or (seq is not None and seq[gi] == seq[qi]):
                continue
            cands.append((float(np.linalg.norm(emb[qi] - emb[gi])), pos))
            if labels[gi] == labels[qi]:
                gt.append(pos)
        cands.sort()
        retrieved.append([p for _, p in cands[:max_k]])
        dists.append([d for d, _ in cands[:max_k]])
        gts.append(gt)
    return retrieved, gts, dists


@pytest.mark.parametrize("seed", range(6))
def test_embedding_metrics_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 40
    labels = rng.integers(0, 4, n)
    query = rng.random(n) < 0.6
    gallery = rng.random(n) < 0.8
    query[0] = gallery[0] = True
    extra = {"category": rng.choice(["x", "y"], n), "sequence": rng.integers(0, 10, n)}
    ds = Dataset(labels, query, gallery, extra)
    emb = rng.normal(size=(n, 3))  # no distance ties: the brute force rounds differently
    em = oml.EmbeddingMetrics(ds, cmc_top_k=(1, 3), precision_top_k=(2, 5), map_top_k=(4,),
                              fmr_vals=(0.2,), pcf_variance=(0.5, 0.9), verbose=False)
    em.setup()
    perm = rng.permutation(n)
    for chunk in np.array_split(perm, 3):
        em.update(FakeTensor(emb[chunk]), FakeTensor(chunk))
    got = em.compute_metrics()
    retrieved, gts, dists = brute_force_rr(emb, ds, ds.get_gallery_ids().size)
    # Same ranking up to ties: compare the metrics computed from the brute-force lists.
    want = oml.calc_retrieval_metrics(retrieved, gts, cmc_top_k=(1, 3), precision_top_k=(2, 5),
                                      map_top_k=(4,),
                                      query_categories=extra["category"][ds.get_query_ids()])
    for cat, block in want.items():
        for fam, per_k in block.items():
            for k, v in per_k.items():
                if math.isnan(v):
                    assert math.isnan(got[cat][fam][k])
                else:
                    assert got[cat][fam][k] == pytest.approx(v, abs=1e-12), (cat, fam, k)
    assert got["OVERALL"]["pcf"] == dict(zip((0.5, 0.9), oml.calc_pcf(emb, (0.5, 0.9)).tolist()))
    for cat in ("x", "y"):
        if cat in got:
            mask = extra["category"] == cat
            assert got[cat]["pcf"][0.5] == oml.calc_pcf(emb[mask], (0.5,))[0]
    pos = [d for r, g, ds_ in zip(retrieved, gts, dists) for x, d in zip(r, ds_) if x in set(g)]
    neg = [d for r, g, ds_ in zip(retrieved, gts, dists) for x, d in zip(r, ds_) if x not in set(g)]
    assert got["OVERALL"]["fnmr@fmr"][0.2] == pytest.approx(ref.fnmr_at_fmr(pos, neg, (0.2,))[0])
    assert "fnmr@fmr" not in got.get("x", {})


def test_embedding_metrics_lifecycle_errors_and_worst():
    ds = Dataset([0, 0, 1, 1], [True] * 4, [True] * 4)
    em = oml.EmbeddingMetrics(ds, cmc_top_k=(1,), precision_top_k=(), map_top_k=(),
                              pcf_variance=(), verbose=False)
    em.setup()
    em.update(np.array([[0.0], [0.1]]), [0, 1])
    with pytest.raises(ParameterError, match="fully collected"):
        em.compute_metrics()
    em.update(np.array([[1.0], [2.0]]), [2, 3])
    out = em.compute_metrics()
    assert out == {"OVERALL": {"cmc": {1: 0.75}}}
    assert em.get_worst_queries_ids("OVERALL/cmc/1", 2) == [2, 0]
    with pytest.raises(ParameterError, match="metric_name"):
        em.get_worst_queries_ids("OVERALL/map/5", 1)
    with pytest.raises(ParameterError, match="postprocessor"):
        oml.EmbeddingMetrics(ds, postprocessor=object())
    only = oml.EmbeddingMetrics(Dataset([0, 0, 1, 1], [True] * 4, [True] * 4,
                                        {"category": np.array([1, 1, 2, 2])}),
                                cmc_top_k=(1,), precision_top_k=(), map_top_k=(),
                                pcf_variance=(), return_only_overall_category=True, verbose=False)
    only.update(np.array([[0.0], [0.1], [1.0], [2.0]]), [0, 1, 2, 3])
    assert list(only.compute_metrics()) == ["OVERALL"]
    assert set(only.metrics) == {"OVERALL", 1, 2}


def test_embedding_metrics_query_gallery_split_and_empty_lists():
    # Query 2 has no other gallery item: its list is empty and n_gt = 0 -> 1 (OML's rule).
    ds = Dataset([0, 0, 1], [True, False, True], [True, True, False])
    em = oml.EmbeddingMetrics(ds, cmc_top_k=(1,), precision_top_k=(1,), map_top_k=(1,),
                              pcf_variance=(), verbose=False)
    em.update(np.array([[0.0], [0.5], [9.0]]), [0, 1, 2])
    m = em.compute_metrics()["OVERALL"]
    # query 0 -> gallery [1] (self ignored), hit; query 2 -> gallery [0, 1], no label-1 item
    assert em.metrics_unreduced["OVERALL"]["cmc"][1].tolist() == [1.0, 0.0]
    assert math.isnan(em.metrics_unreduced["OVERALL"]["precision"][1][1])
    assert m["cmc"][1] == 0.5


def test_knn_ties_and_memory_blocks(monkeypatch):
    from irmetrics.compat import _knn
    monkeypatch.setattr(_knn, "_BLOCK_CELLS", 7)
    rng = np.random.default_rng(3)
    q = rng.integers(0, 3, size=(9, 2)).astype(float)
    r = rng.integers(0, 3, size=(6, 2)).astype(float)
    for k in (1, 2, 6, 10):
        nn = _knn.knn(q, r, k)
        for i in range(len(q)):
            d = np.linalg.norm(r - q[i], axis=1)
            want = sorted(range(len(r)), key=lambda j: (d[j], j))[:k]
            assert nn.indices[nn.offsets[i]:nn.offsets[i + 1]].tolist() == want


def test_random_lists_vs_reference_shapes():
    rng = random.Random(5)
    rows = [[rng.random() < 0.4 for _ in range(rng.randint(0, 12))] for _ in range(200)]
    n = [sum(r) + rng.randint(0, 2) for r in rows]
    for k in (1, 4, 20):
        np.testing.assert_allclose(oml.calc_map(rows, n, (k,))[0],
                                   [ref.oml_map(r, m, k) for r, m in zip(rows, n)])
