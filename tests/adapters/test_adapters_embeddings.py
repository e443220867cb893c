"""from_embeddings: brute-force kNN parity, block invariance, closed-world qrels."""

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from tests._adapter_checks import check_pair
from irmetrics.adapters import from_embeddings

from tests.reference.knn_ref import knn

FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def run_lists(run):
    """{query_id: [(doc_id, score), ...]} in trec_eval rank order."""
    out = {}
    for q, d, s in run.df.select("query_id", "doc_id", "score").iter_rows():
        out.setdefault(q, []).append((d, s))
    return out


@st.composite
def integer_embeddings(draw):
    """Small integer coordinates: exact float arithmetic and many exact ties."""
    n = draw(st.integers(1, 9))
    dim = draw(st.integers(1, 3))
    emb = np.array(draw(st.lists(st.lists(st.integers(-2, 2), min_size=dim, max_size=dim),
                                 min_size=n, max_size=n)), dtype=np.float64)
    labels = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    return emb, labels


@FAST
@given(data=integer_embeddings(), k=st.integers(1, 12), metric=st.sampled_from(["dot", "euclidean"]),
       chunk=st.integers(1, 4), exclude_self=st.booleans())
def test_self_gallery_equals_brute_force(data, k, metric, chunk, exclude_self):
    emb, labels = data
    qrels, run = from_embeddings(emb, labels, k=k, metric=metric, chunk_size=chunk,
                                 exclude_self=exclude_self)
    expected = knn(emb.tolist(), emb.tolist(), k, metric,
                   exclude=(lambda i, j: i == j) if exclude_self else None)
    got = run_lists(run)
    for i, row in enumerate(expected):
        assert got.get(f"q{i}", []) == [(f"d{j}", s) for j, s in row]
    q_dict = qrels.to_dict()
    for i in range(len(emb)):
        same = {f"d{j}": 1 for j in range(len(emb))
                if labels[j] == labels[i] and not (exclude_self and i == j)}
        other = {d: 0 for d, _ in got.get(f"q{i}", []) if d not in same}
        assert q_dict.get(f"q{i}", {}) == {**same, **other}


@FAST
@given(queries=integer_embeddings(), gallery=integer_embeddings(), k=st.integers(1, 12),
       metric=st.sampled_from(["dot", "euclidean"]))
def test_separate_gallery_equals_brute_force(tmp_path, queries, gallery, k, metric):
    (q_emb, q_lab), (g_emb, g_lab) = queries, gallery
    dim = min(q_emb.shape[1], g_emb.shape[1])
    q_emb, g_emb = q_emb[:, :dim], g_emb[:, :dim]
    qrels, run = from_embeddings(q_emb, q_lab, g_emb, g_lab, k=k, metric=metric, chunk_size=2)
    expected = knn(q_emb.tolist(), g_emb.tolist(), k, metric)
    got = run_lists(run)
    for i, row in enumerate(expected):
        assert got[f"q{i}"] == [(f"d{j}", s) for j, s in row]
    nums = irm.evaluate(qrels, run, ["num_rel"]).to_dict()
    for i in range(len(q_emb)):
        assert nums[f"q{i}"]["num_rel"] == float((g_lab == q_lab[i]).sum())
    check_pair(qrels, run, tmp_path)


@FAST
@given(data=integer_embeddings(), k=st.integers(1, 6))
def test_embeddings_pair_is_exact(tmp_path, data, k):
    emb, labels = data
    qrels, run = from_embeddings(emb + 0.5, labels, k=k, metric="euclidean")
    check_pair(qrels, run, tmp_path)


def test_cosine_on_generic_floats_equals_brute_force():
    rng = np.random.default_rng(7)
    emb = rng.normal(size=(40, 5))
    emb[5] = emb[3] * 2.0  # an exact cosine tie partner for every query
    labels = rng.integers(0, 4, 40)
    qrels, run = from_embeddings(emb, labels, k=7, chunk_size=6)
    expected = knn(emb.tolist(), emb.tolist(), 7, "cosine", exclude=lambda i, j: i == j)
    got = run_lists(run)
    for i, row in enumerate(expected):
        assert [d for d, _ in got[f"q{i}"]] == [f"d{j}" for j, _ in row]
        assert np.allclose([s for _, s in got[f"q{i}"]], [s for _, s in row], atol=1e-12)


def test_block_size_does_not_change_results():
    rng = np.random.default_rng(3)
    emb = rng.integers(-3, 4, size=(57, 4)).astype(np.float64)
    labels = rng.integers(0, 5, 57)
    results = [run_lists(from_embeddings(emb, labels, k=9, metric="euclidean",
                                         chunk_size=c)[1]) for c in (1, 7, 57, 1000)]
    assert all(r == results[0] for r in results[1:])
    # 57 columns / k=9 takes the chunk-maxima bound; ties abound in integer data.
    expected = knn(emb.tolist(), emb.tolist(), 9, "euclidean", exclude=lambda i, j: i == j)
    for i, row in enumerate(expected):
        assert results[0][f"q{i}"] == [(f"d{j}", s) for j, s in row]


def test_toy_map_at_r_style_values():
    emb = np.array([[0.0], [1.0], [2.0], [10.0]])
    qrels, run = from_embeddings(emb, [0, 0, 1, 1], k=3, metric="euclidean")
    res = irm.evaluate(qrels, run, ["P.1", "map", "num_rel"]).to_dict()
    # q2 (at 2): neighbours d1 (1 away, other label), d0 (2), d3 (8, same label).
    assert res["q2"] == {"P_1": 0.0, "map": 1 / 3, "num_rel": 1.0}
    # q3 (at 10): nearest is d2 (8 away), its only same-label item.
    assert res["q3"] == {"P_1": 1.0, "map": 1.0, "num_rel": 1.0}
    assert res["q0"]["map"] == 1.0


def test_k_is_clipped_and_single_item_gallery_has_no_run():
    qrels, run = from_embeddings([[1.0, 0.0]], [0], k=5)
    assert run.to_dict() == {} and qrels.to_dict() == {}
    qrels, run = from_embeddings([[1.0, 0.0], [0.0, 1.0]], [0, 0], k=5)
    assert run_lists(run) == {"q0": [("d1", 0.0)], "q1": [("d0", 0.0)]}


def test_string_labels_and_custom_ids():
    qrels, run = from_embeddings([[1.0], [2.0]], ["cat", "dog"], [[1.5], [9.0]], ["dog", "cat"],
                                 k=1, metric="euclidean", query_ids=["a", "b"],
                                 doc_ids=["x", "y"])
    assert qrels.to_dict() == {"a": {"y": 1, "x": 0}, "b": {"x": 1}}


def test_does_not_modify_inputs():
    emb = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]])
    before = emb.copy()
    from_embeddings(emb, [0, 1, 0], k=2, metric="cosine")
    assert np.array_equal(emb, before)


@pytest.mark.skipif(importlib.util.find_spec("faiss") is None, reason="faiss not installed")
@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dot"])
def test_faiss_backend_matches_numpy_without_ties(metric):
    rng = np.random.default_rng(11)
    emb = rng.normal(size=(60, 8))
    labels = rng.integers(0, 5, 60)
    fast = from_embeddings(emb, labels, k=6, metric=metric, backend="faiss", chunk_size=16)
    exact = from_embeddings(emb, labels, k=6, metric=metric)
    got, want = run_lists(fast[1]), run_lists(exact[1])
    assert {q: [d for d, _ in v] for q, v in got.items()} == \
        {q: [d for d, _ in v] for q, v in want.items()}
    for q in want:
        assert np.allclose([s for _, s in got[q]], [s for _, s in want[q]], atol=1e-4)
    assert fast[0].to_dict() == exact[0].to_dict()
