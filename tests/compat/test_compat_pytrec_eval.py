"""The pytrec_eval drop-in returns exactly pytrec_eval's dict."""

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from irmetrics.compat import pytrec_eval as compat
from irmetrics.exceptions import InputFormatError, UnknownMeasureError

from tests._cases import nonempty_first, qrels_and_run

pytrec_eval = pytest.importorskip("pytrec_eval")

#: Every measure pytrec_eval supports (all_trec plus the official set), then numeric
#: parameters in both of pytrec_eval's spellings ("meas.p" and "meas_p").
MEASURE_SETS = [
    {"all_trec", "official"},
    {"P.3,7", "recall_2", "ndcg_cut.2,6", "map_cut.3", "success.2", "relative_P.4",
     "iprec_at_recall.0.15,0.55", "Rprec_mult.0.5,1.5", "11pt_avg.0.5,0.2", "set_F.0.5",
     "relstring.3", "num_q"},
]

#: Generated cases per test (the CI default is small; set it to 10000 for a full run).
EXAMPLES = int(os.environ.get("IRMETRICS_CROSSCHECK_EXAMPLES", "150"))


def assert_same(ours: dict, theirs: dict):
    assert ours.keys() == theirs.keys()
    for qid in theirs:
        assert ours[qid].keys() == theirs[qid].keys(), qid
        for name, expected in theirs[qid].items():
            got = ours[qid][name]
            if math.isnan(expected):
                assert math.isnan(got), (qid, name)
            else:
                assert abs(got - expected) <= 1e-9, (qid, name, got, expected)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_and_run(), measures=st.sampled_from(MEASURE_SETS),
       level=st.integers(1, 3), judged=st.booleans())
def test_drop_in_equals_pytrec_eval(data, measures, level, judged):
    qrels, run = data
    assume(any(run.values()))  # a run of only empty rankings crashes pytrec_eval
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level,
                                              judged_docs_only_flag=judged).evaluate(
        nonempty_first(run))
    ours = compat.RelevanceEvaluator(qrels, measures, relevance_level=level,
                                     judged_docs_only_flag=judged).evaluate(run)
    assert_same(ours, expected)


def test_float32_ties_like_pytrec_eval():
    # 1.00000001 and 1.0 are one float32: the tie falls to doc id descending (b first).
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.00000001, "b": 1.0}}
    ours = compat.RelevanceEvaluator(qrels, {"P.1", "ndcg"}).evaluate(run)
    assert ours == {"1": {"P_1": 0.0, "ndcg": pytest.approx(0.6309297535714575, abs=1e-12)}}


def test_accepts_int_and_numpy_ids_and_whole_float_labels():
    qrels = {1: {np.int64(7): 1.0, "x": np.int32(0)}}
    run = {1: {7: np.float32(0.5), "x": 0.9}}
    ours = compat.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    expected = pytrec_eval.RelevanceEvaluator({"1": {"7": 1, "x": 0}}, {"map"}).evaluate(
        {"1": {"7": 0.5, "x": 0.9}})
    assert ours == expected


def test_rejects_fractional_labels_naming_the_pair():
    with pytest.raises(InputFormatError, match=r"relevance must be an integer.*query_id '1', doc_id 'a'"):
        compat.RelevanceEvaluator({"1": {"a": 1.5}}, {"map"})


def test_unsupported_measure_is_a_value_error():
    with pytest.raises(UnknownMeasureError, match="bogus"):
        compat.RelevanceEvaluator({"1": {"a": 1}}, {"bogus"})
    with pytest.raises(ValueError):
        compat.RelevanceEvaluator({"1": {"a": 1}}, {"rbp"})


def test_empty_run_and_empty_judgments():
    ev = compat.RelevanceEvaluator({"1": {"a": 1}, "2": {}}, {"map"})
    assert ev.evaluate({}) == {}
    assert ev.evaluate({"1": {}, "2": {"a": 1.0}, "3": {"a": 1.0}}) == {"1": {"map": 0.0}}


def test_aggregation_helper_matches_pytrec_eval():
    values = [0.1, 0.5, 0.25]
    for name in ("map", "num_ret", "gm_map"):
        assert compat.compute_aggregated_measure(name, values) == pytest.approx(
            pytrec_eval.compute_aggregated_measure(name, values), abs=1e-15)


def test_parse_helpers_match_pytrec_eval():
    qrel_lines = ["1 0 a 1\n", "1 0 b 0\n", "2 0 c 2\n"]
    run_lines = ["1 Q0 a 1 0.5 r\n", "1 Q0 b 2 0.25 r\n"]
    assert compat.parse_qrel(qrel_lines) == pytrec_eval.parse_qrel(qrel_lines)
    assert compat.parse_run(run_lines) == pytrec_eval.parse_run(run_lines)
