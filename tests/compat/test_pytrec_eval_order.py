"""The pytrec_eval drop-in returns pytrec_eval's dict in pytrec_eval's order, and raises
what pytrec_eval raises (as a subclass of the same built-in exception).

pytrec-eval-terrier 0.5.11 returns the queries in the run dict's insertion order, those
without judgments (or judged by an empty dict, which it drops) left out, and each query's
measures in trec_eval's measure-table order, parameters ascending. MTEB pairs these
values with its own query order, so the order is part of the result.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.compat import pytrec_eval as compat
from irmetrics.exceptions import InputFormatError, ParameterError

from tests._cases import qrels_and_run, same_value

pytrec_eval = pytest.importorskip("pytrec_eval")

#: Measure specs in pytrec_eval's spellings; a case draws a few (a set, in hash order).
SPECS = ["map", "P.5", "P_10", "P", "recall.3,20", "ndcg_cut.10", "ndcg_cut_3", "ndcg",
         "recip_rank", "Rprec", "bpref", "num_rel_ret", "num_ret", "num_rel", "num_q",
         "set_F", "set_F.0.5", "iprec_at_recall.0.5", "success.1,5", "map_cut.2",
         "relative_P.4", "11pt_avg", "infAP", "ndcg_rel", "Rndcg", "binG", "G", "utility",
         "gm_map", "runid", "official", "set_recall", "set_P", "relstring"]


@st.composite
def shuffled_case(draw):
    """``(qrels, run)`` with random insertion orders, empty judgment dicts, run queries
    without judgments and judged queries missing from the run; the run's first query is
    judged and has documents (pytrec_eval 0.5.11 crashes or returns garbage when the
    first query it evaluates has an empty ranking)."""
    qrels, run = draw(qrels_and_run())
    extra_empty = draw(st.lists(st.sampled_from(["e1", "e2", "1", "zz"]), unique=True,
                                max_size=2))
    for qid in extra_empty:
        qrels.setdefault(qid, {})
        if draw(st.booleans()):
            run.setdefault(qid, {"d1": 0.5})
    qrels = dict(draw(st.permutations(list(qrels.items()))))
    items = draw(st.permutations(list(run.items())))
    first = next((i for i, (q, docs) in enumerate(items) if docs and qrels.get(q)), None)
    if first is None:
        judged = next(q for q, docs in qrels.items() if docs)
        items = [(judged, {"d1": 1.0})] + [(q, d) for q, d in items if q != judged]
    else:
        items = [items[first]] + items[:first] + items[first + 1:]
    return qrels, dict(items)


#: Per-query values pytrec_eval reads from memory it never wrote (0.0 usually, at times
#: a leftover such as 4.6e-310); irmetrics gives 0.0 (docs/semantics.md).
UNWRITTEN = {"runid", "relstring"}


def assert_identical(ours: dict, theirs: dict):
    """Same keys in the same order at both levels, values equal bit for bit."""
    assert list(ours) == list(theirs)
    for qid, values in theirs.items():
        assert list(ours[qid]) == list(values), qid
        for name, value in values.items():
            if name in UNWRITTEN:
                assert ours[qid][name] == 0.0
                continue
            assert same_value(ours[qid][name], value), (qid, name, ours[qid][name], value)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=shuffled_case(), specs=st.sets(st.sampled_from(SPECS), max_size=5),
       level=st.integers(1, 3), judged=st.booleans())
def test_keys_and_order_equal_pytrec_eval(case, specs, level, judged):
    qrels, run = case
    theirs = pytrec_eval.RelevanceEvaluator(qrels, specs, relevance_level=level,
                                            judged_docs_only_flag=judged).evaluate(run)
    ours = compat.RelevanceEvaluator(qrels, specs, relevance_level=level,
                                     judged_docs_only_flag=judged).evaluate(run)
    assert_identical(ours, theirs)


@settings(max_examples=100, deadline=None)
@given(case=shuffled_case(), order=st.randoms(use_true_random=False))
def test_outer_order_is_the_run_order_even_with_an_empty_first_ranking(case, order):
    # pytrec_eval itself crashes here, so the expectation is its rule, stated directly.
    qrels, run = case
    items = list(run.items())
    order.shuffle(items)
    run = dict(items)
    judged = {q for q, docs in qrels.items() if docs}
    ours = compat.RelevanceEvaluator(qrels, {"map", "P.5"}).evaluate(run)
    assert list(ours) == [q for q in run if q in judged]
    assert all(list(values) == ["map", "P_5"] for values in ours.values())


def test_issue_repro():
    qrels = {"b": {"d": 1}, "a": {"d": 1}}
    run = {"b": {"d": 1.0}, "a": {"d": 1.0}}
    assert list(compat.RelevanceEvaluator(qrels, {"map"}).evaluate(run)) == ["b", "a"]


def test_reused_evaluator_keeps_each_runs_order():
    ev = compat.RelevanceEvaluator({"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}}, {"P.1"})
    assert list(ev.evaluate({"3": {"c": 1.0}, "1": {"a": 1.0}})) == ["3", "1"]
    assert list(ev.evaluate({"2": {"b": 1.0}, "3": {}, "1": {"x": 2.0}})) == ["2", "3", "1"]


# --------------------------------------------------------------------------------------
# exceptions: pytrec_eval's built-in class, irmetrics' message
# --------------------------------------------------------------------------------------

QRELS = {"q": {"d": 1, "e": 0}}

#: (case, constructor arguments) that pytrec_eval refuses with TypeError.
BAD_CONSTRUCTIONS = [
    ("judged flag 'yes'", dict(judged_docs_only_flag="yes")),
    ("judged flag 1.0", dict(judged_docs_only_flag=1.0)),
    ("judged flag None", dict(judged_docs_only_flag=None)),
    ("relevance_level 1.5", dict(relevance_level=1.5)),
    ("relevance_level 1.0", dict(relevance_level=1.0)),
    ("relevance_level '1'", dict(relevance_level="1")),
    ("relevance_level None", dict(relevance_level=None)),
    ("relevance_level 0", dict(relevance_level=0)),
    ("string label", dict(query_relevance={"q": {"d": "1"}})),
    ("None label", dict(query_relevance={"q": {"d": None}})),
    ("fractional label", dict(query_relevance={"q": {"d": 1.5}})),
    ("None judgments", dict(query_relevance={"q": None})),
    ("list judgments", dict(query_relevance={"q": [("d", 1)]})),
]


@pytest.mark.parametrize("case,kwargs", BAD_CONSTRUCTIONS, ids=[c for c, _ in BAD_CONSTRUCTIONS])
def test_construction_errors_are_type_errors_as_in_pytrec_eval(case, kwargs):
    args = dict(query_relevance=QRELS, measures={"map"}) | kwargs
    with pytest.raises(TypeError):
        pytrec_eval.RelevanceEvaluator(**args)
    with pytest.raises(TypeError) as caught:
        compat.RelevanceEvaluator(**args)
    # irmetrics' own classes, with a message that names the culprit
    assert isinstance(caught.value, (InputFormatError, ParameterError)), caught.value
    assert "must be" in str(caught.value)


BAD_RUNS = [
    ("None score", {"q": {"d": None}}),
    ("string score", {"q": {"d": "1.0"}}),
    ("list run", [("q", "d", 1.0)]),
    ("None ranking", {"q": None}),
    ("list ranking", {"q": [("d", 1.0)]}),
]


@pytest.mark.parametrize("case,run", BAD_RUNS, ids=[c for c, _ in BAD_RUNS])
def test_evaluation_errors_are_type_errors_as_in_pytrec_eval(case, run):
    with pytest.raises(TypeError):
        pytrec_eval.RelevanceEvaluator(QRELS, {"map"}).evaluate(run)
    with pytest.raises(TypeError) as caught:
        compat.RelevanceEvaluator(QRELS, {"map"}).evaluate(run)
    assert isinstance(caught.value, (InputFormatError, ParameterError)), caught.value


def test_error_messages_name_the_culprit():
    with pytest.raises(TypeError, match=r"relevance must be an integer, found '1'.*"
                                        r"query_id 'q', doc_id 'd'"):
        compat.RelevanceEvaluator({"q": {"d": "1"}}, {"map"})
    with pytest.raises(TypeError, match=r"`query_relevance\['q'\]` must be a mapping"):
        compat.RelevanceEvaluator({"q": None}, {"map"})
    with pytest.raises(TypeError, match=r"score must be a real number, found None"):
        compat.RelevanceEvaluator(QRELS, {"map"}).evaluate({"q": {"d": None}})
    with pytest.raises(TypeError, match=r"`relevance_level` must be a positive integer"):
        compat.RelevanceEvaluator(QRELS, {"map"}, relevance_level=-1)


@pytest.mark.parametrize("empty", [{}, None, []])
def test_empty_runs_give_an_empty_dict(empty):
    assert pytrec_eval.RelevanceEvaluator(QRELS, {"map"}).evaluate(empty) == {}
    assert compat.RelevanceEvaluator(QRELS, {"map"}).evaluate(empty) == {}


def test_flags_accept_what_pytrec_eval_accepts():
    run = {"q": {"d": 1.0, "x": 2.0}}
    for kwargs in (dict(relevance_level=True), dict(judged_docs_only_flag=2),
                   dict(judged_docs_only_flag=np.int64(1)), dict(relevance_level=np.int32(1))):
        theirs_kwargs = {k: (int(v) if isinstance(v, np.integer) else v)
                         for k, v in kwargs.items()}
        expected = pytrec_eval.RelevanceEvaluator(QRELS, {"map"}, **theirs_kwargs).evaluate(run)
        assert compat.RelevanceEvaluator(QRELS, {"map"}, **kwargs).evaluate(run) == expected


def test_infinite_scores_rank_as_in_pytrec_eval():
    run = {"q": {"d": -math.inf, "e": math.inf, "x": 1e39}}
    expected = pytrec_eval.RelevanceEvaluator(QRELS, {"map", "ndcg"}).evaluate(run)
    assert compat.RelevanceEvaluator(QRELS, {"map", "ndcg"}).evaluate(run) == expected
