"""from_flat and from_neighbours: toy tables, closed-world rules, properties, parity."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from tests._adapter_checks import check_pair
from irmetrics.adapters import from_flat, from_neighbours, to_ranked
from irmetrics.exceptions import DuplicateEntryError

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_flat_torchmetrics_fall_out_example_layout():
    # docs/reference/ml_measures.md §4.2 module example: two queries, non-contiguous allowed.
    preds = np.array([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
    target = np.array([False, False, True, False, True, False, True])
    indexes = np.array([0, 0, 0, 1, 1, 1, 1])
    qrels, run = from_flat(preds, target, indexes)
    assert qrels.to_dict() == {"q0": {"d0": 0, "d1": 0, "d2": 1},
                               "q1": {"d0": 0, "d1": 1, "d2": 0, "d3": 1}}
    # Non-relevant retrieved in the top 2 / non-relevant total = fall-out@2 = 0.5 each.
    lists = to_ranked(qrels, run)
    top2 = [lists.code[o:o + 2] for o in lists.offsets[:-1]]
    assert [int((c == 0).sum()) / 2 for c in top2] == [0.5, 0.5]


def test_flat_any_shape_ignore_index_and_query_names():
    preds = np.array([[0.9, 0.1], [0.4, 0.8]])
    target = np.array([[1, -100], [0, 1]])
    indexes = np.array([[42, 42], [-3, 42]])
    qrels, run = from_flat(preds, target, indexes, ignore_index=-100)
    assert qrels.to_dict() == {"q-3": {"d0": 0}, "q42": {"d0": 1, "d1": 1}}
    assert run.to_dict() == {"q-3": {"d0": 0.4}, "q42": {"d0": 0.9, "d1": 0.8}}


def test_neighbours_closed_world():
    qrels, run = from_neighbours([[3, 1, 4], [2, 0]], [[1, 5], [7]])
    assert qrels.to_dict() == {"q0": {"d3": 0, "d1": 1, "d4": 0, "d5": 1},
                               "q1": {"d2": 0, "d0": 0, "d7": 1}}
    assert run.to_dict() == {"q0": {"d3": 3.0, "d1": 2.0, "d4": 1.0},
                             "q1": {"d2": 2.0, "d0": 1.0}}
    res = irm.evaluate(qrels, run, ["map", "recall.10", "num_rel"]).to_dict()
    assert res["q0"] == {"map": 0.25, "recall_10": 0.5, "num_rel": 2.0}


def test_neighbours_oml_empty_rows():
    # docs/reference/ml_measures.md §2.2: retrieved [[], [], [2, 0]], gt [[], [1], []].
    qrels, run = from_neighbours([[], [], [2, 0]], [[], [1], []])
    assert qrels.to_dict() == {"q1": {"d1": 1}, "q2": {"d2": 0, "d0": 0}}
    assert irm.evaluate(qrels, run, ["P.1"]).to_dict() == {"q2": {"P_1": 0.0}}
    # complete=True evaluates q1 on trec_eval's placeholder ranking (OML: 0 as well).
    res = irm.evaluate(qrels, run, ["P.1", "recall.1"], complete=True).to_dict()
    assert res["q1"] == {"P_1": 0.0, "recall_1": 0.0}


def test_neighbours_rank_order_survives_doc_id_order():
    # Without scores, gallery ids in "wrong" byte order keep their given order.
    qrels, run = from_neighbours([[1, 10, 9, 2]], [[2]])
    lists = to_ranked(qrels, run, keep_doc_ids=True)
    assert lists.doc_ids.tolist() == ["d1", "d10", "d9", "d2"]
    assert irm.evaluate(qrels, run, ["recip_rank"]).aggregate()["recip_rank"] == 0.25


def test_neighbours_scores_ties_follow_trec_eval():
    qrels, run = from_neighbours([[1, 10, 9]], [[1]], scores=[[0.5, 0.5, 0.5]])
    lists = to_ranked(qrels, run, keep_doc_ids=True)
    assert lists.doc_ids.tolist() == ["d9", "d10", "d1"]


def test_neighbours_duplicates_are_refused():
    with pytest.raises(DuplicateEntryError, match="retrieved_ids.*twice for query 1"):
        from_neighbours([[0], [1, 2, 1]], [[0], [1]])
    with pytest.raises(DuplicateEntryError, match="gt_ids"):
        from_neighbours([[0]], [[3, 3]])


@st.composite
def neighbour_lists(draw):
    q = draw(st.integers(0, 5))
    gallery = draw(st.integers(1, 14))
    ret, gt, scores = [], [], []
    for _ in range(q):
        ret.append(draw(st.permutations(range(gallery)))[: draw(st.integers(0, gallery))])
        gt.append(draw(st.permutations(range(gallery)))[: draw(st.integers(0, gallery))])
        s = sorted(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, -1.0]), min_size=len(ret[-1]),
                                 max_size=len(ret[-1]))), reverse=True)
        scores.append(s)
    use_scores = draw(st.booleans())
    as_matrix = draw(st.booleans()) and q > 0 and len({len(r) for r in ret}) == 1 \
        and len({len(g) for g in gt}) == 1
    if as_matrix:
        ret, gt = np.array(ret, dtype=np.int64), np.array(gt, dtype=np.int64)
        scores = np.array(scores, dtype=np.float64)
    else:
        ret = [np.array(r, dtype=np.int64) for r in ret]
        gt = [np.array(g, dtype=np.int64) for g in gt]
    return ret, gt, (scores if use_scores else None)


@FAST
@given(data=neighbour_lists())
def test_neighbours_pair_is_exact(tmp_path, data):
    ret, gt, scores = data
    qrels, run = from_neighbours(ret, gt, scores=scores)
    check_pair(qrels, run, tmp_path)
    q_dict = qrels.to_dict()
    for i, (r, g) in enumerate(zip(ret, gt)):
        judged = {f"d{x}": int(x in set(np.asarray(g).tolist())) for x in np.asarray(r).tolist()}
        judged.update({f"d{x}": 1 for x in np.asarray(g).tolist()})
        assert q_dict.get(f"q{i}", {}) == judged
    if scores is None:  # rank order preserved exactly
        lists = to_ranked(qrels, run, keep_doc_ids=True)
        got = {qid: lists.doc_ids[lists.offsets[j]:lists.offsets[j + 1]].tolist()
               for j, qid in enumerate(lists.query_ids)}
        for qid, docs in got.items():
            assert docs == [f"d{x}" for x in np.asarray(ret[int(qid[1:])]).tolist()]


@st.composite
def flat_arrays(draw):
    n = draw(st.integers(0, 30))
    preds = np.array(draw(st.lists(st.sampled_from([0.0, 0.25, 1.0, -3.5, 2.0]), min_size=n,
                                   max_size=n)))
    target = np.array(draw(st.lists(st.integers(-1, 2), min_size=n, max_size=n)), dtype=int)
    indexes = np.array(draw(st.lists(st.integers(-2, 12), min_size=n, max_size=n)), dtype=int)
    return preds, target, indexes


@FAST
@given(data=flat_arrays(), ignore=st.none() | st.just(-1))
def test_flat_pair_is_exact(tmp_path, data, ignore):
    preds, target, indexes = data
    qrels, run = from_flat(preds, target, indexes, ignore_index=ignore)
    check_pair(qrels, run, tmp_path)
    kept = target != ignore if ignore is not None else np.ones(len(target), bool)
    assert sum(len(v) for v in qrels.to_dict().values()) == int(kept.sum())
