"""from_matrix and from_match_mask: toy tables, tie order, properties, parity."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from tests._adapter_checks import check_pair, evaluated_dict
from irmetrics.adapters import from_flat, from_match_mask, from_matrix, to_ranked

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


# --- hand-computed tables -------------------------------------------------------------

def test_pytorchltr_seed_example():
    # docs/reference/ml_measures.md §6.4 (pytorchltr generate_pytrec_eval + pytrec_eval).
    scores = np.array([[1.0, 0.0, 1.5], [1.5, 0.2, 0.5]], dtype=np.float32)
    qrels, run = from_matrix(scores, np.array([[0, 1, 0], [0, 1, 1]]), np.array([3, 3]))
    res = irm.evaluate(qrels, run, ["map", "ndcg"]).to_dict()
    assert res["q0"]["map"] == pytest.approx(1 / 3, abs=1e-12)
    assert res["q0"]["ndcg"] == pytest.approx(0.5, abs=1e-12)
    assert res["q1"]["map"] == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-12)
    assert res["q1"]["ndcg"] == pytest.approx(0.693426, abs=1e-6)
    # float32 inputs widen to float64, as generate_pytrec_eval's float(score) does.
    assert run.to_dict()["q1"]["d1"] == float(np.float32(0.2))


def test_padding_is_ignored_unlike_pytorchltr_dcg():
    # docs/reference/ml_measures.md §6.1: pytorchltr adds the padded position's relevance 5; the adapter drops it.
    qrels, run = from_matrix([[0.1, 0.9, 0.5, 0.3]], [[1, 0, 1, 5]], [3])
    assert qrels.to_dict() == {"q0": {"d0": 1, "d1": 0, "d2": 1}}
    assert set(run.to_dict()["q0"]) == {"d0", "d1", "d2"}
    ndcg = irm.evaluate(qrels, run, ["ndcg"]).aggregate()["ndcg"]
    ideal = 1 + 1 / math.log2(3)
    assert ndcg == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / ideal, abs=1e-12)


def test_tied_scores_rank_by_doc_id_descending_bytes():
    qrels, run = from_matrix(np.zeros((1, 11)), np.eye(1, 11, 10, dtype=int))
    lists = to_ranked(qrels, run, keep_doc_ids=True)
    assert lists.doc_ids.tolist() == ["d9", "d8", "d7", "d6", "d5", "d4", "d3", "d2",
                                      "d10", "d1", "d0"]
    assert irm.evaluate(qrels, run, ["recip_rank"]).aggregate()["recip_rank"] == 1 / 9


def test_top_k_truncates_run_not_qrels():
    qrels, run = from_matrix([[0.1, 0.5, 0.5, 0.9]], [[1, 1, 0, 0]], k=2)
    assert run.to_dict() == {"q0": {"d3": 0.9, "d2": 0.5}}
    assert len(qrels.to_dict()["q0"]) == 4
    assert irm.evaluate(qrels, run, ["recall.10"]).aggregate()["recall_10"] == 0.0


def test_custom_ids_and_zero_length_rows():
    qrels, run = from_matrix([[3.0, 1.0], [2.0, 2.0]], [[1, 0], [0, 2]], [2, 0],
                             query_ids=["alpha", 7], doc_ids=["x", "y"])
    assert qrels.to_dict() == {"alpha": {"x": 1, "y": 0}}
    assert run.to_dict() == {"alpha": {"x": 3.0, "y": 1.0}}


def test_match_mask_tf_similarity_examples():
    # docs/reference/ml_measures.md §3: match [0,1,0,1], k=4 -> 0.650921 (ideal from the window's hits).
    qrels, run = from_match_mask([[False, True, False, True]])
    assert irm.evaluate(qrels, run, ["ndcg_cut.4"]).aggregate()["ndcg_cut_4"] == \
        pytest.approx(0.650921, abs=1e-6)
    # Library test: threshold 0.1 drops the hit at distance 0.2 (inclusive threshold).
    mask = [[True, True, False]] * 3 + [[False, False, True]]
    dist = [[0.0, 0.1, 0.2]] * 4
    qrels, run = from_match_mask(mask, dist, distance_threshold=0.1)
    per_query = irm.evaluate(qrels, run, ["ndcg_cut.3"]).to_dict()
    assert [v["ndcg_cut_3"] for v in per_query.values()] == [1.0, 1.0, 1.0, 0.0]


def test_match_mask_n_relevant_adds_unretrieved_relevant():
    qrels, run = from_match_mask([[True, False, False]], n_relevant=[3])
    assert qrels.to_dict() == {"q0": {"d0": 1, "d1": 0, "d2": 0, "d3": 1, "d4": 1}}
    res = irm.evaluate(qrels, run, ["recall.3", "map"]).aggregate()
    assert res["recall_3"] == pytest.approx(1 / 3) and res["map"] == pytest.approx(1 / 3)


def test_inputs_are_not_modified_and_tensor_like_objects_work():
    scores = np.array([[0.3, np.nan, 0.1]])
    labels = np.array([[1.0, 0.0, 2.0]])
    before = scores.copy(), labels.copy()

    class DLPackOnly:  # stands in for a CPU tensor: only __dlpack__
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, **kw):
            return self._a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    class ArrayOnly:
        def __init__(self, a):
            self._a = a

        def __array__(self, dtype=None, copy=None):
            return self._a

    qrels, run = from_matrix(DLPackOnly(scores), ArrayOnly(labels), DLPackOnly(np.array([1])))
    assert run.to_dict() == {"q0": {"d0": 0.3}}
    assert np.array_equal(scores, before[0], equal_nan=True)
    assert np.array_equal(labels, before[1])


def test_descending_keys_order_floats_like_trec_eval():
    from irmetrics.engine.ordering import descending_keys
    values = np.array([np.inf, 3.5, 1.0, 1e-40, 0.0, -0.0, -1e-40, -1.0, -3.5, -np.inf],
                      dtype=np.float32)
    keys = descending_keys(values)
    assert np.all(np.diff(keys.astype(np.int64))[[0, 1, 2, 3, 5, 6, 7, 8]] > 0)
    assert keys[4] == keys[5]  # -0.0 == 0.0, as C compares them


# --- properties and parity ------------------------------------------------------------

@st.composite
def matrices(draw):
    b = draw(st.integers(0, 5))
    width = draw(st.integers(0, 12))
    # 1e39 is finite in float64 but overflows float32 (pytrec_eval semantics: -> inf).
    values = st.sampled_from([0.0, -0.0, 0.5, 1.0, 1.0, -2.25, 1e-300, -1e-300, 3.0000001,
                              3.0000002, 3e38, -1e39])
    scores = np.array(draw(st.lists(st.lists(values, min_size=width, max_size=width),
                                    min_size=b, max_size=b)), dtype=np.float64).reshape(b, width)
    if draw(st.booleans()):
        scores = np.clip(scores, -3e38, 3e38).astype(np.float32)
    labels = np.array(draw(st.lists(st.lists(st.integers(-1, 3), min_size=width,
                                             max_size=width), min_size=b, max_size=b)),
                      dtype=np.int64).reshape(b, width)
    n = None
    if draw(st.booleans()):
        n = np.array(draw(st.lists(st.integers(0, width), min_size=b, max_size=b)), dtype=int)
    k = draw(st.none() | st.integers(1, 4))
    return scores, labels, n, k


@FAST
@given(data=matrices())
def test_matrix_pair_is_exact(tmp_path, data):
    scores, labels, n, k = data
    qrels, run = from_matrix(scores, labels, n, k=k)
    check_pair(qrels, run, tmp_path)


@FAST
@given(data=matrices())
def test_flat_of_raveled_matrix_equals_matrix(data):
    scores, labels, n, _ = data
    b, width = scores.shape
    q_m, r_m = from_matrix(scores, labels)
    q_f, r_f = from_flat(scores.ravel(), labels.ravel(), np.repeat(np.arange(b), width))
    assert q_m.to_dict() == q_f.to_dict() and r_m.to_dict() == r_f.to_dict()


@FAST
@given(data=matrices())
def test_padding_content_never_matters(data):
    scores, labels, n, k = data
    if n is None:
        return
    garbage_s, garbage_l = scores.astype(np.float64), labels.copy()
    pad = np.arange(scores.shape[1]) >= n[:, None]
    garbage_s[pad], garbage_l[pad] = np.nan, 99
    a = from_matrix(scores, labels, n, k=k)
    b = from_matrix(garbage_s, garbage_l, n, k=k)
    assert a[0].to_dict() == b[0].to_dict() and a[1].to_dict() == b[1].to_dict()


@FAST
@given(data=matrices(), seed=st.integers(0, 2**32 - 1))
def test_row_order_invariance(data, seed):
    scores, labels, n, k = data
    perm = np.random.default_rng(seed).permutation(scores.shape[0])
    ids = [f"q{i}" for i in range(scores.shape[0])]
    a = evaluated_dict(*from_matrix(scores, labels, n, k=k), ["map", "ndcg_cut.3"])
    b = evaluated_dict(*from_matrix(scores[perm], labels[perm], None if n is None else n[perm],
                                    k=k, query_ids=[ids[i] for i in perm]),
                       ["map", "ndcg_cut.3"])
    assert a == b


@st.composite
def masks(draw):
    q = draw(st.integers(0, 5))
    width = draw(st.integers(0, 11))
    mask = np.array(draw(st.lists(st.lists(st.booleans(), min_size=width, max_size=width),
                                  min_size=q, max_size=q)), dtype=bool).reshape(q, width)
    dist = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.5]),
                                           min_size=width, max_size=width),
                                  min_size=q, max_size=q))).reshape(q, width)
    threshold = draw(st.sampled_from([math.inf, 0.1, 0.2]))
    extra = np.array(draw(st.lists(st.integers(0, 3), min_size=q, max_size=q)), dtype=int)
    return mask, dist, threshold, extra


@FAST
@given(data=masks(), use_total=st.booleans())
def test_match_mask_pair_is_exact(tmp_path, data, use_total):
    mask, dist, threshold, extra = data
    hits = (mask & (dist <= threshold)).sum(axis=1)
    qrels, run = from_match_mask(mask, dist, distance_threshold=threshold,
                                 n_relevant=hits + extra if use_total else None)
    check_pair(qrels, run, tmp_path)
    # The lookup order survives: ranks follow columns.
    lists = to_ranked(qrels, run, keep_doc_ids=True)
    for i, qid in enumerate(lists.query_ids):
        docs = lists.doc_ids[lists.offsets[i]:lists.offsets[i + 1]]
        assert [int(d[1:]) for d in docs] == list(range(len(docs)))
