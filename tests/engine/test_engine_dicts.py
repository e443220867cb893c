"""The dict road (irmetrics.engine.dicts) packs exactly what the general road packs.

``pack_dict_run(JudgmentTable.from_dict(qrels), run)`` must equal
``pack(encode_qrels(Qrels.from_dict(qrels).df), Run.from_dict(run).df)`` in everything
kernels read, whatever the ties (large groups, float32-only ties, judged documents at
both ends of a group), options and chunking; and ``evaluate`` must give the same
numbers by either road.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.containers import Qrels, Run
from irmetrics.engine import dicts
from irmetrics.engine.dicts import JudgmentTable, pack_dict_run
from irmetrics.engine.pack import BOGUS_DOC_ID, encode_qrels, pack
from irmetrics.exceptions import (
    DuplicateEntryError,
    InputFormatError,
    InputTypeError,
    MissingQueriesWarning,
    ParameterError,
)

from tests._cases import qrels_and_run, same_value

OPTIONS = dict(semantics=st.sampled_from(["trec_eval", "pytrec_eval"]),
               ties=st.sampled_from(["trec_eval", "input_order"]),
               max_docs=st.sampled_from([None, 0, 1, 3, 7]), complete=st.booleans())


def general_road(qrels, run, **options):
    return pack(encode_qrels(Qrels.from_dict(qrels).df), Run.from_dict(run).df,
                run_query_ids=list(run), **options)


def assert_same_lists(ours, ref):
    for name in ("query_ids", "offsets", "code", "bogus", "rel_hist", "rel_levels",
                 "missing_query_ids", "ignored_query_ids"):
        assert np.asarray(getattr(ours, name)).tolist() == \
            np.asarray(getattr(ref, name)).tolist(), name
    assert ours.qrels_positive_total == ref.qrels_positive_total
    assert ours.run_name == ref.run_name


@st.composite
def tied_case(draw):
    """Rankings of up to 40 documents over 3 scores: large tie groups holding judged
    and unjudged documents, doc ids whose byte order differs from their numeric one."""
    docs = [f"d{i}" for i in range(40)]
    qrels, run = {}, {}
    for qid in draw(st.lists(st.sampled_from(["q1", "q2", "q10", "é"]), min_size=1,
                             unique=True)):
        judged = draw(st.dictionaries(st.sampled_from(docs), st.integers(-1, 3),
                                      min_size=1, max_size=25))
        qrels[qid] = judged
        ranked = draw(st.lists(st.sampled_from(docs), unique=True, max_size=40))
        scores = st.sampled_from([1.0, 0.5, 1.0000000001, -0.0, 0.0])
        run[qid] = {d: draw(scores) for d in ranked}
    return qrels, run


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_and_run(max_retrieved=14), **OPTIONS)
def test_dict_road_packs_what_the_general_road_packs(data, **options):
    qrels, run = data
    ours = pack_dict_run(JudgmentTable.from_dict(qrels), run, **options)
    assert_same_lists(ours, general_road(qrels, run, **options))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tied_case(), chunk=st.sampled_from([1, 5, 1 << 20]), ranked=st.booleans(),
       **OPTIONS)
def test_large_tie_groups_and_small_chunks(data, chunk, ranked, **options):
    qrels, run = data
    if ranked:  # each ranking in rank order, as systems write them (no sort needed)
        run = {q: dict(sorted(docs.items(), key=lambda item: -item[1]))
               for q, docs in run.items()}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dicts, "CHUNK_ENTRIES", chunk)
        patch.setattr(dicts, "CHUNK_QUERIES", max(1, chunk // 2))
        ours = pack_dict_run(JudgmentTable.from_dict(qrels), run, **options)
    assert_same_lists(ours, general_road(qrels, run, **options))


#: Doc ids tie groups are ordered by, compared 8 UTF-8 bytes at a time: a long shared
#: prefix, ids that extend others (by NUL too), non-ASCII ones, the empty id.
LONG_IDS = ["clueweb22-en0003-12-45217", "clueweb22-en0003-12-4521", "clueweb22-en0003-12-4",
            "clueweb22-en0003-12-45217\x00", "clueweb22-en0003-12-45217\x00a",
            "clueweb22-en0003-02-99", "clueweb22-ja0001-00-1", "clueweb22-é", "clueweb22-\x7f",
            "clueweb22-\U0001f600", "clueweb2", "clueweb22", "", "\x00", "a" * 40,
            "a" * 39 + "b", "a" * 41, "msmarco_doc_00_123", "msmarco_doc_00_1230"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), pairwise=st.sampled_from([0, 2, 16, 1000]), ranked=st.booleans(),
       ties=st.sampled_from(["trec_eval", "input_order"]))
def test_tie_groups_order_doc_ids_as_python_compares_them(data, pairwise, ranked, ties):
    """Small groups (compared pair by pair) and large ones (sorted) alike."""
    qrels, run = {}, {}
    for qid in data.draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1,
                                  unique=True)):
        qrels[qid] = data.draw(st.dictionaries(st.sampled_from(LONG_IDS),
                                               st.integers(-1, 3), min_size=1))
        ranked_ids = data.draw(st.lists(st.sampled_from(LONG_IDS), unique=True))
        run[qid] = {d: data.draw(st.sampled_from([1.0, 0.5])) for d in ranked_ids}
        if ranked:
            run[qid] = dict(sorted(run[qid].items(), key=lambda item: -item[1]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dicts, "_PAIRWISE_GROUP", pairwise)
        ours = pack_dict_run(JudgmentTable.from_dict(qrels), run, ties=ties)
    assert_same_lists(ours, general_road(qrels, run, ties=ties))


def test_evaluate_gives_the_numbers_of_the_general_road():
    qrels, run = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}, "q3": {"y": 1}}, \
        {"q2": {"x": 0.5, "z": 0.5}, "q1": {"c": 1.0, "a": 1.0, "e": 3.0}, "zz": {"a": 1.0}}
    measures = ["all_trec", "official", "P.1,2", "ndcg_cut.2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        for options in (dict(), dict(complete=True), dict(max_docs=1), dict(judged_only=True),
                        dict(ties="input_order"), dict(semantics="pytrec_eval")):
            ours = irm.evaluate(qrels, run, measures, **options)
            ref = irm.evaluate(Qrels.from_dict(qrels), Run.from_dict(run), measures, **options)
            assert ours.query_ids.tolist() == ref.query_ids.tolist()
            assert ours.names == ref.names
            for name in ref.names:
                assert all(map(same_value, ours.values(name), ref.values(name))), name
            assert ours.aggregate().keys() == ref.aggregate().keys()
            assert all(same_value(ours.aggregate()[k], v) for k, v in ref.aggregate().items())
            assert ours.missing_query_ids.tolist() == ref.missing_query_ids.tolist()
            assert ours.ignored_query_ids.tolist() == ref.ignored_query_ids.tolist()


def test_judged_placeholder_document_under_complete():
    qrels = {"q1": {"a": 1}, "q2": {BOGUS_DOC_ID: 2, "b": 1}}
    run = {"q1": {"a": 1.0}}
    ours = pack_dict_run(JudgmentTable.from_dict(qrels), run, complete=True)
    assert_same_lists(ours, general_road(qrels, run, complete=True))
    assert ours.code.tolist() == [1, 2]


def test_one_evaluator_reads_the_qrels_once_for_many_runs(monkeypatch):
    ev = irm.Evaluator({"q": {"a": 1, "b": 0}}, ["map"])
    calls = []
    monkeypatch.setattr(JudgmentTable, "from_dict", lambda *a: calls.append(a))
    monkeypatch.setattr(JudgmentTable, "from_frame", lambda *a: calls.append(a))
    for score in (0.1, 0.2, 0.3):
        assert ev.evaluate({"q": {"a": score, "b": 0.25}}).aggregate()["map"] in (0.5, 1.0)
    assert calls == []


def test_qrels_from_a_file_serve_dict_runs(tmp_path):
    path = tmp_path / "qrels"
    path.write_text("q 0 a 1\nq 0 b 0\nr 0 c 1\n")
    run = {"q": {"a": 0.5, "b": 0.7}, "r": {"c": 1.0}}
    ev = irm.Evaluator(str(path), ["map", "P.1"])
    assert ev.evaluate(run).to_dict() == {"q": {"map": 0.5, "P_1": 0.0},
                                          "r": {"map": 1.0, "P_1": 1.0}}


# --------------------------------------------------------------------------------------
# input the fast road leaves to the general one: converted, or refused with its error
# --------------------------------------------------------------------------------------

def test_int_and_numpy_ids_and_numpy_values_are_converted():
    qrels = {1: {np.int64(7): np.int32(1), "x": 0.0}, "2": {"y": True}}
    run = {1: {7: np.float32(0.5), "x": 0.9}, np.int64(2): {"y": 1}}
    got = irm.evaluate(qrels, run, ["map", "P.1"]).to_dict()
    assert got == irm.evaluate({"1": {"7": 1, "x": 0}, "2": {"y": 1}},
                               {"1": {"7": 0.5, "x": 0.9}, "2": {"y": 1.0}},
                               ["map", "P.1"]).to_dict()


@pytest.mark.parametrize("run,error,match", [
    ({"q": {"a": "1.0"}}, InputTypeError, "score must be a real number, found '1.0'"),
    ({"q": {"a": None}}, InputTypeError, "score must be a real number, found None"),
    ({"q": {"a": math.nan}}, InputFormatError, r"score must be .*found nan.*doc_id 'a'"),
    ({"q": {"b": 1.0, "a": math.inf}}, InputFormatError, r"found inf .*doc_id 'a'"),
    ({"q": None}, ParameterError, r"`d\['q'\]` must be a mapping"),
    ({"q": {1: 1.0, "1": 2.0}}, DuplicateEntryError, "duplicate"),
    ({"q": {"x\ud800": 1.0}}, ParameterError, "valid Unicode"),
])
def test_bad_runs_are_refused_naming_the_entry(run, error, match):
    with pytest.raises(error, match=match):
        irm.evaluate({"q": {"a": 1}}, run, ["map"])


def test_infinite_scores_only_where_asked_for():
    table = JudgmentTable.from_dict({"q": {"a": 1, "b": 1}})
    lists = dicts.evaluate_dict_run(table, {"q": {"a": -math.inf, "b": math.inf, "c": 0.0}},
                                    lambda lists: {"code": lists.code[:1]},
                                    infinite_scores=True)
    assert lists.columns["code"].tolist() == [1]  # b (+inf) first
    with pytest.raises(InputFormatError, match="NaN is not allowed"):
        dicts.evaluate_dict_run(table, {"q": {"a": math.nan}}, lambda lists: {},
                                infinite_scores=True)


@pytest.mark.parametrize("qrels,error,match", [
    ({"q": {"a": "1"}}, InputTypeError, "relevance must be an integer, found '1'"),
    ({"q": {"a": 1.5}}, InputTypeError, "relevance must be an integer, found 1.5"),
    ({"q": {"a": 2**70}}, InputFormatError, "out of the 64-bit integer range"),
    ({"q": {1: 1, "1": 0}}, DuplicateEntryError, "duplicate"),
    ({"q": None}, ParameterError, r"`d\['q'\]` must be a mapping"),
    ({"q": []}, ParameterError, r"`d\['q'\]` must be a mapping"),
])
def test_bad_judgments_are_refused_naming_the_entry(qrels, error, match):
    with pytest.raises(error, match=match):
        JudgmentTable.from_dict(qrels)


def test_ids_equal_as_str_are_one_query():
    table = JudgmentTable.from_dict({1: {"a": 1}, "1": {"b": 0}})
    assert table.query_ids.tolist() == ["1"] and table.doc_lists == [["a", "b"]]


def test_table_round_trips_to_qrels():
    qrels = {"b": {"x": 1, "y": -1}, "a": {"z": 2}, "c": {}}
    table = JudgmentTable.from_dict(qrels)
    assert table.to_qrels().to_dict() == {"a": {"z": 2}, "b": {"x": 1, "y": -1}}
    assert table.positive_total == 2
