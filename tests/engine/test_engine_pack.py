"""pack(): trec_eval ordering, max_docs, judged_only, complete, semantics, invariants."""

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings

from irmetrics import evaluate
from irmetrics.containers import Qrels, Run
from irmetrics.engine import pack as pack_module
from irmetrics.engine.pack import BOGUS_DOC_ID, encode_qrels, pack

from tests._cases import qrels_and_run


def packed(qrels, run, **kw):
    return pack(encode_qrels(Qrels.from_dict(qrels).df), Run.from_dict(run).df,
                keep_doc_ids=True, **kw)


def test_ties_break_by_doc_id_descending_bytes():
    lists = packed({"1": {"a": 1, "b": 0, "c": 1}}, {"1": {"a": 1.0, "b": 1.0, "c": 1.0}})
    assert lists.doc_ids.tolist() == ["c", "b", "a"]
    assert lists.code.tolist() == [1, 0, 1]


def test_query_order_is_byte_order_and_rank_column_is_ignored():
    lists = packed({"2": {"a": 1}, "10": {"b": 1}, "1": {"c": 1}},
                   {"2": {"a": 1.0}, "10": {"b": 1.0}, "1": {"c": 1.0}})
    assert lists.query_ids.tolist() == ["1", "10", "2"]


def test_relevance_codes_not_in_pool_and_unjudged():
    lists = packed({"1": {"a": 2, "b": -1, "c": 0}}, {"1": {"a": 4, "b": 3, "c": 2, "z": 1}})
    assert lists.code.tolist() == [2, -2, 0, -1]
    # negative labels are not counted; columns are the distinct labels (0 and 2)
    assert lists.rel_hist.tolist() == [[1, 1]] and lists.levels.tolist() == [0, 2]


def test_max_docs_then_judged_only():
    qrels = {"1": {"a": 1, "b": 0, "c": 1}}
    run = {"1": {"u1": 9, "a": 8, "u2": 7, "b": 6, "c": 5}}
    lists = packed(qrels, run, max_docs=3)
    assert lists.code.tolist() == [-1, 1, -1]
    assert lists.judged_only().code.tolist() == [1]
    assert packed(qrels, run).judged_only().code.tolist() == [1, 0, 1]


def test_complete_adds_placeholder_for_missing_queries():
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 1, "d": 2, "e": 0}}
    lists = packed(qrels, {"1": {"a": 1.0, "z": 0.5}}, complete=True)
    assert lists.query_ids.tolist() == ["1", "2"]
    assert lists.bogus.tolist() == [False, True]
    assert lists.doc_ids.tolist()[-1] == BOGUS_DOC_ID
    res = evaluate(qrels, {"1": {"a": 1.0, "z": 0.5}}, ["num_ret", "num_rel", "map"],
                   complete=True)
    assert res.to_dict()["2"] == {"num_ret": 0.0, "num_rel": 2.0, "map": 0.0}
    assert res.aggregate() == {"num_ret": 2, "num_rel": 3, "map": 0.5}


def test_pytrec_eval_semantics_rounds_scores_to_float32():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.00000001, "b": 1.0}}
    assert packed(qrels, run).code.tolist() == [1, 0]
    assert packed(qrels, run, semantics="pytrec_eval").code.tolist() == [0, 1]


@settings(max_examples=100, deadline=None)
@given(qrels_and_run())
def test_invariants_hold(data):
    lists = packed(*data)
    lists.check_invariants()
    lists.judged_only().check_invariants()


@settings(max_examples=50, deadline=None)
@given(qrels_and_run())
def test_results_do_not_depend_on_input_row_order(data):
    qrels, run = data
    measures = ["map", "P.3", "ndcg", "bpref", "recip_rank"]
    forward = evaluate(qrels, run, measures).to_dict()
    reversed_run = {q: dict(reversed(list(d.items()))) for q, d in reversed(list(run.items()))}
    reversed_qrels = {q: dict(reversed(list(d.items()))) for q, d in reversed(list(qrels.items()))}
    assert evaluate(reversed_qrels, reversed_run, measures).to_dict() == forward


def test_unknown_measure_suggests_close_names():
    from irmetrics.exceptions import UnknownMeasureError
    with pytest.raises(UnknownMeasureError, match="did you mean") as info:
        evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, ["ndcg_cutt.10"])
    assert "ndcg_cut" in info.value.suggestions


def test_friendly_and_trec_names_agree():
    qrels = {"1": {"a": 1, "b": 2, "c": 0}, "2": {"x": 1}}
    run = {"1": {"a": 0.2, "b": 0.1, "c": 0.9}, "2": {"x": 1.0, "y": 2.0}}
    res = evaluate(qrels, run, ["P.1,2", "P@2", "P@1", "ndcg_cut.2", "nDCG@2", "map", "AP",
                                "P(rel=2)@3", "recip_rank", "RR"]).aggregate()
    assert res["P@2"] == res["P_2"] and res["P@1"] == res["P_1"]
    assert res["nDCG@2"] == res["ndcg_cut_2"] and res["AP"] == res["map"]
    assert res["RR"] == res["recip_rank"]
    assert res["P(rel=2)@3"] == pytest.approx((1 / 3 + 0.0) / 2)  # only b is rel=2, rank 3
    assert np.isfinite(list(v for v in res.values() if not isinstance(v, str))).all()


@settings(max_examples=60, deadline=None)
@given(qrels_and_run())
def test_presorted_and_shuffled_runs_pack_identically(data):
    # A run grouped by query and sorted by score takes the block-moving path; any other
    # row order takes the general sort. Both must give trec_eval's order.
    qrels, run = data
    presorted = {q: dict(sorted(d.items(), key=lambda kv: -kv[1])) for q, d in run.items()}
    a, b = packed(qrels, run), packed(qrels, presorted)
    assert a.doc_ids.tolist() == b.doc_ids.tolist()
    assert a.code.tolist() == b.code.tolist() and a.offsets.tolist() == b.offsets.tolist()


@pytest.mark.parametrize("fake_hash", [
    lambda s: np.zeros(len(s), np.uint64),  # every judgment collides: keys unusable
    lambda s: s.str.len_bytes().cast(pl.UInt64).to_numpy() << np.uint64(30),  # run docs collide
])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=qrels_and_run())
def test_hash_collisions_fall_back_to_exact_matching(monkeypatch, fake_hash, data):
    qrels, run = data
    expected = packed(qrels, run)
    with monkeypatch.context() as m:
        m.setattr(pack_module, "doc_hash", fake_hash)
        collided = packed(qrels, run)
    assert collided.code.tolist() == expected.code.tolist()


def test_run_doc_colliding_with_a_judgment_is_verified_on_strings(monkeypatch):
    # One judgment per query keeps the qrels keys unique; every run doc then collides
    # with it, and the string check must reject the false matches.
    monkeypatch.setattr(pack_module, "doc_hash", lambda s: np.zeros(len(s), np.uint64))
    lists = packed({"1": {"a": 1}, "2": {"z": 0}}, {"1": {"b": 1.0, "a": 0.5}, "2": {"y": 1.0}})
    assert lists.code.tolist() == [-1, 1, -1]


def test_packed_lists_and_their_views_are_freed_without_the_cycle_collector():
    import gc
    import weakref

    lists = packed({"1": {"a": 1, "b": 0}}, {"1": {"a": 1.0, "b": 2.0}})
    view = lists.view(1, judged_only=True)
    _ = view.cum_rel, view.num_rel
    freed = weakref.ref(lists)
    gc.disable()
    try:
        del lists, view
        assert freed() is None  # reference counting alone released it: no cycle
    finally:
        gc.enable()
