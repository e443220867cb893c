"""Tie policies: expected values against brute force over all tie orders, best/worst
bounds attained by explicit orders, input_order against trec_eval, and refusals."""

from __future__ import annotations

import doctest
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.adapters import from_matrix, to_ranked
from irmetrics.cli import main
from irmetrics.exceptions import ParameterError
from irmetrics.measures.expected import accepted_names

from tests.reference import ties_ref

# Every accepted measure, with cutoffs on both sides of the small rankings below and a
# gain table whose gains are not monotone in the label (best = gains descending).
MEASURES = ["P.1,2,3,5", "recall.1,3", "relative_P.2", "Rprec", "success.1,2,4",
            "num_ret", "num_rel_ret", "num_rel", "num_q", "recip_rank", "map",
            "map_cut.1,3,10", "ndcg", "ndcg_cut.1,2,4", "dcg", "ideal_dcg", "set_P",
            "set_relative_P", "set_recall", "set_F.0.5"]
GAIN_TABLE = [m for m in MEASURES if m not in ("ndcg", "dcg", "ideal_dcg")]

SLOW = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def tied_queries(draw, max_docs=5):
    """One or two queries: up to ``max_docs`` retrieved documents with scores from a
    tiny set (many ties), labels 2/1/0/negative/unjudged, and unretrieved judgments."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 2))):
        n = draw(st.integers(0 if q else 1, max_docs))
        names = draw(st.lists(st.sampled_from([f"d{i}" for i in range(12)]),
                              min_size=n, max_size=n, unique=True))
        scores = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, -0.0]), min_size=n, max_size=n))
        labels = draw(st.lists(st.sampled_from([None, -1, 0, 1, 2]), min_size=n, max_size=n))
        judged = {d: lab for d, lab in zip(names, labels) if lab is not None}
        for i in range(draw(st.integers(0, 2))):
            judged[f"u{i}"] = draw(st.sampled_from([0, 1, 2]))
        if not judged:
            judged["u9"] = 1
        qid = f"q{q}"
        qrels[qid] = judged
        run[qid] = dict(zip(names, scores))
    return qrels, run


def _close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _check_against_brute_force(qrels, run, measures, **options):
    brute = ties_ref.over_orderings(qrels, run, measures, **options)
    expected = irm.evaluate(qrels, run, measures, ties="expected", **options).to_dict()
    report = irm.tie_report(qrels, run, measures, **options)
    trec = irm.evaluate(qrels, run, measures, **options).to_dict()
    for qid, values in brute.items():
        for name, (mean, low, high) in values.items():
            got = expected[qid][name]
            assert _close(got, mean), (qid, name, got, mean)
            best = report.results["best"].to_dict()[qid][name]
            worst = report.results["worst"].to_dict()[qid][name]
            assert _close(best, high) and _close(worst, low), (qid, name, best, high, worst, low)
            assert report.results["trec_eval"].to_dict()[qid][name] == trec[qid][name]
            assert _close(report.results["expected"].to_dict()[qid][name], mean)
    # No tied entry that matters: no order can change the value.
    tied = dict(zip(report.summary["measure"], report.summary["tied_entries"]))
    for qid, values in brute.items():
        for name, (_, low, high) in values.items():
            if tied.get(name) == 0:
                assert low == high, (qid, name)


@SLOW
@given(tied_queries(), st.sampled_from([1, 2]), st.sampled_from([None, 0, 1, 2, 4]))
def test_expected_and_bounds_equal_brute_force(case, level, max_docs):
    qrels, run = case
    _check_against_brute_force(qrels, run, MEASURES, relevance_level=level, max_docs=max_docs)


@SLOW
@given(tied_queries(), st.sampled_from(["ndcg", "dcg"]))
def test_judged_only_and_gain_tables_equal_brute_force(case, gain_measure):
    # trec_eval takes one gain table for dcg, ideal_dcg and ndcg together: one at a time
    qrels, run = case
    _check_against_brute_force(qrels, run, GAIN_TABLE + [f"{gain_measure}.1=3,2=1,0=-1"],
                               judged_only=True)


def test_every_accepted_measure_is_exercised():
    from tests.ties.test_ties_ir_measures import FRIENDLY, declared_names  # the ir_measures names
    named = {spec.split(".")[0] for spec in MEASURES} | {"runid"}  # a string: not averaged
    assert named | declared_names(FRIENDLY) == set(accepted_names())


def test_worked_example_from_the_docs():
    # docs/semantics.md: three documents tied at 0.5, two of them relevant, below x.
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 2}}
    run = {"q": {"x": 0.9, "a": 0.5, "b": 0.5, "c": 0.5, "d": 0.1}}
    res = irm.evaluate(qrels, run, ["P.2", "recip_rank", "map"], ties="expected").to_dict()["q"]
    assert res["P_2"] == pytest.approx(1 / 3)            # place 2 holds a relevant w.p. 2/3
    assert res["recip_rank"] == pytest.approx(2 / 3 / 2 + 1 / 3 / 3)
    # AP: E[rel(i) relat(i)] / i over ranks 2-4, plus d at rank 5 (relat 3), over R = 3
    terms = sum((2 / 3) * (1 + (j - 1) / 2) / (1 + j) for j in (1, 2, 3)) + 3 / 5
    assert res["map"] == pytest.approx(terms / 3)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "semantics.md"


def test_docs_examples_are_current(tmp_path, capsys, monkeypatch):
    """docs/semantics.md: its >>> examples hold and its tie report is the real output."""
    result = doctest.testfile(str(DOCS), module_relative=False)
    assert result.failed == 0 and result.attempted >= 10
    (tmp_path / "qrels.txt").write_text("q 0 a 1\nq 0 b 0\nq 0 c 1\nq 0 d 2\n")
    (tmp_path / "run.txt").write_text("q Q0 x 1 0.9 run\nq Q0 b 2 0.5 run\nq Q0 a 3 0.5 run\n"
                                      "q Q0 c 4 0.5 run\nq Q0 d 5 0.1 run\n")
    command = "irmetrics eval --tie-report -m P.2 -m recip_rank -m map -m ndcg_cut.3"
    shown = DOCS.read_text().split(f"$ {command} qrels.txt run.txt\n", 1)[1].split("```")[0]
    monkeypatch.chdir(tmp_path)
    assert main(command.split()[1:] + ["qrels.txt", "run.txt"]) == 0
    assert capsys.readouterr().out == shown


def test_no_ties_expected_equals_trec_eval():
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"a": 0.3, "b": 0.9, "c": 0.1, "x": 0.5}}
    names = ["map", "P.1,2,5", "recip_rank", "ndcg", "ndcg_cut.2,10", "Rprec", "success.1,3"]
    plain = irm.evaluate(qrels, run, names).aggregate()
    expected = irm.evaluate(qrels, run, names, ties="expected").aggregate()
    assert plain.keys() == expected.keys()
    for name in plain:
        assert expected[name] == pytest.approx(plain[name], abs=1e-15)


def test_pytrec_eval_semantics_ties_in_float32():
    # 1 + 2**-30 rounds to 1.0 in float32: a tie there, not under trec_eval 10.
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0 + 2**-30}}
    assert irm.evaluate(qrels, run, ["P.1"], ties="expected").aggregate()["P_1"] == 0.0
    res = irm.evaluate(qrels, run, ["P.1"], ties="expected", semantics="pytrec_eval")
    assert res.aggregate()["P_1"] == 0.5
    # the default stays pytrec_eval's: doc id descending inside the float32 tie
    assert irm.evaluate(qrels, run, ["P.1"], semantics="pytrec_eval").aggregate()["P_1"] == 0.0


# --- best and worst are attained by explicit orders ------------------------------------

@SLOW
@given(tied_queries(max_docs=7), st.sampled_from([1, 2]))
def test_bounds_are_attained_by_relevant_first_and_last(case, level):
    qrels, run = case
    names = ["P.1,2,3", "map", "recip_rank", "success.2", "Rprec", "recall.3"]
    report = irm.tie_report(qrels, run, names, relevance_level=level)
    for policy, first in (("best", True), ("worst", False)):
        ordered = {}
        for qid, ranking in run.items():
            judged = qrels.get(qid, {})
            # An explicit order: score descending, inside a tie relevant first (best) or
            # last (worst); evaluated as the run's own order.
            key = (lambda d: (-ranking[d], -(judged.get(d, -1) >= level))) if first else \
                  (lambda d: (-ranking[d], judged.get(d, -1) >= level))
            ordered[qid] = {d: ranking[d] for d in sorted(ranking, key=key)}
        attained = irm.evaluate(qrels, ordered, names, relevance_level=level,
                                ties="input_order").to_dict()
        got = report.results[policy].to_dict()
        for qid in got:
            for name in names_of(got[qid]):
                assert _close(got[qid][name], attained[qid][name]), (policy, qid, name)
    agg = report.summary
    assert (agg["worst"] <= agg["expected"] + 1e-12).all()
    assert (agg["expected"] <= agg["best"] + 1e-12).all()
    assert (agg["worst"] <= agg["trec_eval"] + 1e-12).all()
    assert (agg["trec_eval"] <= agg["best"] + 1e-12).all()


def names_of(values: dict):
    return [n for n in values if isinstance(values[n], float)]


def test_tie_report_counts_tied_entries_that_matter():
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 1}}
    # a, b tie (mixed: counted); c, d tie (both relevant: order never matters)
    run = {"q": {"a": 2.0, "b": 2.0, "c": 1.0, "d": 1.0, "e": 0.5}}
    report = irm.tie_report(qrels, run, ["map", "num_rel", "P.1"])
    tied = dict(zip(report.summary["measure"], report.summary["tied_entries"]))
    assert tied == {"num_rel": 0, "map": 2, "P_1": 2}
    text = report.to_text()
    assert text.splitlines()[0].split() == ["measure", "tied", "trec_eval", "expected",
                                            "best", "worst"]


# --- scikit-learn and torchmetrics ---------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(2, 7), st.integers(1, 8), st.data())
def test_expected_ndcg_equals_sklearn_and_torchmetrics(n_q, n_docs, k, data):
    sklearn_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn not installed")
    from irmetrics.compat.torchmetrics.numpy_api import retrieval_normalized_dcg

    scores = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]),
                                         min_size=n_q * n_docs, max_size=n_q * n_docs)))
    labels = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n_q * n_docs,
                                         max_size=n_q * n_docs)))
    scores, labels = scores.reshape(n_q, n_docs), labels.reshape(n_q, n_docs)
    qrels, run = from_matrix(scores, labels)
    res = irm.evaluate(qrels, run, [f"ndcg_cut.{k}"], ties="expected")
    ours = res.values(f"ndcg_cut_{k}")
    by_query = dict(zip(res.query_ids, ours))
    for i in range(n_q):
        if labels[i].sum() == 0:
            continue  # sklearn's ndcg is 0 there too, but warns
        want = sklearn_metrics.ndcg_score(labels[i:i + 1], scores[i:i + 1], k=k,
                                          ignore_ties=False)
        assert by_query[f"q{i}"] == pytest.approx(want, abs=1e-12)
        torch_like = retrieval_normalized_dcg(scores[i], labels[i], top_k=k)
        assert by_query[f"q{i}"] == pytest.approx(torch_like, abs=1e-6)  # float32 there


# --- input_order ---------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(tied_queries(max_docs=8), st.randoms(use_true_random=False))
def test_input_order_equals_trec_eval_when_ties_come_doc_id_descending(case, rnd):
    qrels, run = case
    names = ["all_trec"]
    trec = irm.evaluate(qrels, run, names).to_dict()
    # The run's order inside ties = trec_eval's: doc id descending (bytes).
    presorted = {}
    for q, r in run.items():
        docs = sorted(r, key=lambda d: d.encode(), reverse=True)
        docs.sort(key=lambda d: -r[d])  # stable: doc id descending inside ties
        presorted[q] = {d: r[d] for d in docs}
    assert _same(irm.evaluate(qrels, presorted, names, ties="input_order").to_dict(), trec)
    # Shuffled: the rankings differ exactly where the order inside a tie differs.
    shuffled = {}
    for q, r in run.items():
        docs = list(r)
        rnd.shuffle(docs)
        shuffled[q] = {d: r[d] for d in docs}
    ours = to_ranked_ids(qrels, shuffled, "input_order")
    theirs = to_ranked_ids(qrels, shuffled, "trec_eval")
    values = irm.evaluate(qrels, shuffled, names, ties="input_order").to_dict()
    for qid in ours:
        want = sorted(shuffled[qid], key=lambda d: -shuffled[qid][d])  # stable: input order
        assert ours[qid] == want
        if ours[qid] == theirs[qid]:
            assert _same(values[qid], trec[qid])


def _same(a, b):
    """Equal nested dicts, NaN equal to NaN (trec_eval's iprec of an empty ranking)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)


def to_ranked_ids(qrels, run, ties):
    ev = irm.Evaluator(qrels, ["num_q"], ties=ties)
    lists, _ = ev.ranked_lists(run, list(run), keep_doc_ids=True)
    return {q: lists.doc_ids[lists.offsets[i]:lists.offsets[i + 1]].tolist()
            for i, q in enumerate(lists.query_ids)}


def test_input_order_from_a_file_keeps_line_order(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("q 0 a 1\nq 0 b 0\nq 0 c 1\n")
    run = tmp_path / "run"
    run.write_text("q Q0 a 1 1.0 r\nq Q0 b 2 1.0 r\nq Q0 c 3 1.0 r\n")
    # trec_eval: c, b, a (doc id descending); the file: a, b, c
    assert irm.evaluate(str(qrels), str(run), ["P.1"]).aggregate()["P_1"] == 1.0
    res = irm.evaluate(str(qrels), str(run), ["P.2", "recip_rank"], ties="input_order")
    assert res.aggregate() == {"P_2": 0.5, "recip_rank": 1.0}
    res = irm.evaluate(str(qrels), str(run), ["P.2", "recip_rank"], ties="expected")
    assert res.aggregate() == pytest.approx({"P_2": 2 / 3, "recip_rank": 2 / 3 + 1 / 3 / 2})


def test_adapter_input_order_is_column_order():
    scores = np.array([[1.0, 1.0, 1.0, 0.5]])
    labels = np.array([[1, 0, 0, 1]])
    qrels, run = from_matrix(scores, labels)
    ids = to_ranked(qrels, run, keep_doc_ids=True).doc_ids.tolist()
    assert ids == ["d2", "d1", "d0", "d3"]            # trec_eval: doc id descending
    res = irm.evaluate(qrels, run, ["recip_rank"], ties="input_order").aggregate()
    assert res["recip_rank"] == 1.0                   # d0, the first column, first
    res = irm.evaluate(qrels, run, ["recip_rank"]).aggregate()
    assert res["recip_rank"] == 1 / 3


# --- refusals ------------------------------------------------------------------------

def test_expected_refuses_measures_without_exact_form():
    with pytest.raises(ParameterError, match=r"exact expected value.*got \['bpref', 'gm_map'\]"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map", "bpref", "gm_map"],
                     ties="expected")
    with pytest.raises(ParameterError, match="exact expected value"):
        irm.tie_report({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["official"])


def test_expected_refuses_judged_only_with_max_docs():
    with pytest.raises(ParameterError, match="`max_docs` must be None when judged_only"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map"], ties="expected",
                     judged_only=True, max_docs=3)


def test_unknown_tie_policy():
    with pytest.raises(ParameterError, match="`ties` must be one of 'trec_eval', "
                                             "'input_order', 'expected'; got 'random'."):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map"], ties="random")
