"""Diversity measures on hand-computed tables; intent qrels reading; errors; the CLI."""

import math
import warnings

import numpy as np
import polars as pl
import pytest

import irmetrics as irm
from irmetrics.cli import main
from irmetrics.exceptions import (
    DuplicateEntryError,
    InputFormatError,
    MissingQueriesWarning,
    NoQueriesError,
    ParameterError,
    UnknownMeasureError,
)

#: Intents 1 and 2 of q: a covers both, b covers 1, c covers 2, z is judged non-relevant.
QRELS = irm.DiversityQrels.from_records([
    ("q", "1", "a", 1), ("q", "2", "a", 2), ("q", "1", "b", 1), ("q", "2", "c", 1),
    ("q", "1", "z", 0)])
#: Ranking b, u (unjudged), c, a.
RUN = {"q": {"b": 4.0, "u": 3.0, "c": 2.0, "a": 1.0}}
LOG2_3, LOG2_4, LOG2_5 = math.log2(3), 2.0, math.log2(5)


def values(names, qrels=QRELS, run=RUN, **kw):
    return irm.evaluate_diversity(qrels, run, names, **kw).to_dict()["q"]


def test_alpha_dcg_and_ndcg_by_hand():
    """Gains (alpha = 0.5): b 1, u 0, c 1, a 0.5 + 0.5 = 1. Ideal: a 2, b 0.5, c 0.5."""
    v = values(["alpha_DCG@3", "alpha_nDCG@3", "alpha_nDCG@4", "alpha_DCG@1"])
    run3 = 1 + 0 + 1 / LOG2_4
    ideal_ideal3 = 2 + 1 / LOG2_3 + 0.5 / LOG2_4  # m = 2 intents, halved per rank
    assert v["alpha_DCG@3"] == pytest.approx(run3 / ideal_ideal3)
    assert v["alpha_nDCG@3"] == pytest.approx(run3 / (2 + 0.5 / LOG2_3 + 0.5 / LOG2_4))
    run4, ideal4 = run3 + 1 / LOG2_5, 2 + 0.5 / LOG2_3 + 0.5 / LOG2_4
    assert v["alpha_nDCG@4"] == pytest.approx(run4 / ideal4)
    assert v["alpha_DCG@1"] == 1.0  # ndeval does not normalise rank 1


def test_alpha_changes_the_redundancy_penalty():
    v = values(["alpha_nDCG(alpha=0)@4", "alpha_nDCG(alpha=1)@4"])
    # alpha = 0: plain gains (number of intents); ideal a, b, c = 2, 1, 1.
    assert v["alpha_nDCG(alpha=0)@4"] == pytest.approx(
        (1 + 1 / LOG2_4 + 2 / LOG2_5) / (2 + 1 / LOG2_3 + 1 / LOG2_4))
    # alpha = 1: an intent counts once; b and c cover both, ideal a covers both at rank 1.
    assert v["alpha_nDCG(alpha=1)@4"] == pytest.approx((1 + 1 / LOG2_4) / 2)


def test_err_ia_nrbp_by_hand():
    v = values(["ERR_IA@4", "nERR_IA@4", "NRBP", "nNRBP", "NRBP(alpha=0.5, beta=0.8)"])
    ii = 2 + 1 / 2 + 0.5 / 3 + 0.25 / 4
    assert v["ERR_IA@4"] == pytest.approx((1 + 0 + 1 / 3 + 1 / 4) / ii)
    assert v["nERR_IA@4"] == pytest.approx((1 + 1 / 3 + 1 / 4) / (2 + 0.5 / 2 + 0.5 / 3))
    scale = (1 - 0.5 * 0.5) / 2
    assert v["NRBP"] == pytest.approx(scale * (1 + 1 * 0.25 + 1 * 0.125))
    assert v["nNRBP"] == pytest.approx((1 + 0.25 + 0.125) / (2 + 0.5 * 0.5 + 0.5 * 0.25))
    assert v["NRBP(alpha=0.5, beta=0.8)"] == pytest.approx(
        (1 - 0.5 * 0.8) / 2 * (1 + 0.8 ** 2 + 0.8 ** 3))


def test_precision_recall_ap_by_hand():
    v = values(["P_IA@1", "P_IA@3", "P_IA@10", "StRecall@1", "StRecall@3", "AP_IA",
                "AP_IA(rel=2)", "StRecall(rel=2)@3"])
    assert v["P_IA@1"] == 1 / 2
    assert v["P_IA@3"] == 2 / 6
    assert v["P_IA@10"] == 4 / 20  # k beyond the ranking: the denominator stays k m
    assert v["StRecall@1"] == 0.5 and v["StRecall@3"] == 1.0
    # intent 1: a, b relevant at ranks 4, 1 -> (1 + 2/4) / 2; intent 2: c, a at 3, 4.
    assert v["AP_IA"] == pytest.approx(((1 + 2 / 4) / 2 + (1 / 3 + 2 / 4) / 2) / 2)
    # rel=2: only (a, 2) is relevant, one intent, found at rank 4.
    assert v["AP_IA(rel=2)"] == pytest.approx(1 / 4)
    assert v["StRecall(rel=2)@3"] == 0.0


def test_ties_in_the_run_go_to_the_smallest_doc_id():
    tied = {"q": {"c": 1.0, "b": 1.0, "a": 1.0}}
    assert values(["P_IA@1"], run=tied)["P_IA@1"] == 1.0  # a first: both intents


def test_judged_only_drops_unjudged_documents_before_ranking():
    v = values(["P_IA@2", "P_IA(judged_only=True)@2"])
    assert v["P_IA@2"] == 1 / 4  # b, u
    assert v["P_IA(judged_only=True)@2"] == 2 / 4  # b, c
    assert values(["P_IA@2"], judged_only=True)["P_IA@2"] == 2 / 4


def test_query_without_relevant_intent():
    qrels = irm.DiversityQrels.from_records([("q", "1", "a", 0), ("q", "2", "b", -1)])
    v = values(["alpha_nDCG@5", "NRBP", "AP_IA", "P_IA@5", "StRecall@5", "nNRBP"],
               qrels=qrels, run={"q": {"a": 1.0}})
    assert all(v[k] == 0.0 for k in v if k != "nNRBP")
    assert math.isnan(v["nNRBP"])  # ndeval's 0/0, as ir_measures reports it
    empty = values(["nNRBP"], qrels=qrels, run={"q": {}})
    assert empty["nNRBP"] == 0.0  # no ranking: ir_measures' default


def test_complete_adds_absent_queries_with_zeros():
    qrels = irm.DiversityQrels.from_records([("q", "1", "a", 1), ("r", "1", "a", 1)])
    run = {"q": {"a": 1.0}}
    with pytest.warns(MissingQueriesWarning):
        res = irm.evaluate_diversity(qrels, run, ["alpha_nDCG@5"])
    assert list(res.query_ids) == ["q"]
    res = irm.evaluate_diversity(qrels, run, ["alpha_nDCG@5", "nNRBP"], complete=True)
    assert res.to_dict()["r"] == {"alpha_nDCG@5": 0.0, "nNRBP": 0.0}
    assert res.aggregate()["alpha_nDCG@5"] == 0.5


def test_measures_are_bounded_and_ideal_run_scores_one():
    rng = np.random.default_rng(3)
    records = [(f"q{q}", f"i{i}", f"d{d}", int(rng.integers(0, 3)))
               for q in range(20) for i in range(4) for d in range(12) if rng.random() < 0.4]
    qrels = irm.DiversityQrels.from_records(records)
    run = {f"q{q}": {f"d{d}": float(rng.integers(0, 4)) for d in range(15)} for q in range(20)}
    names = ["alpha_nDCG@10", "nERR_IA@10", "nNRBP", "AP_IA", "P_IA@5", "StRecall@5",
             "alpha_DCG@10", "ERR_IA@10", "NRBP"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        res = irm.evaluate_diversity(qrels, run, names).per_query()
    finite = res.filter(pl.col("value").is_not_nan())
    assert finite["value"].min() >= 0 and finite["value"].max() <= 1 + 1e-12
    # One query whose ranking is its greedy ideal: a covers 1, 2; then b (3); then c.
    one = irm.DiversityQrels.from_records([("q", "1", "a", 1), ("q", "2", "a", 1),
                                           ("q", "3", "b", 1), ("q", "1", "c", 1)])
    ideal = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert values(["alpha_nDCG@3", "nERR_IA@3", "nNRBP"], qrels=one, run=ideal) == {
        "alpha_nDCG@3": pytest.approx(1.0), "nERR_IA@3": pytest.approx(1.0),
        "nNRBP": pytest.approx(1.0)}


def test_row_order_of_the_run_does_not_matter():
    shuffled = {"q": dict(reversed(list(RUN["q"].items())))}
    names = ["alpha_nDCG@3", "NRBP", "AP_IA"]
    assert values(names, run=shuffled) == values(names)


# ----------------------------------------------------------------------------- reading


def test_read_intent_qrels_file(tmp_path):
    path = tmp_path / "div.qrels"
    path.write_text("# topic subtopic doc judgment\nq 1 a 1\nq 2 a 2\nq 1 b 1\nq 2 c 1\n"
                    "q 1 z 0\n")
    qrels = irm.io.read_diversity_qrels(path)
    assert qrels.df.height == 5
    assert values(["alpha_nDCG@3"], qrels=path) == values(["alpha_nDCG@3"])


def test_iteration_column_is_the_intent():
    df = pl.DataFrame({"query_id": ["q"], "iteration": ["7"], "doc_id": ["a"],
                       "relevance": [1]})
    assert irm.DiversityQrels.from_df(df).df["intent"].to_list() == ["7"]
    assert values(["P_IA@1"], qrels=df, run={"q": {"a": 1.0}})["P_IA@1"] == 1.0


@pytest.mark.parametrize("text, error, message", [
    ("q 1 a\n", InputFormatError, ":1: expected 4 fields"),
    ("q 1 a 1\nq 1 a x\n", InputFormatError, ":2: relevance must be an integer; got 'x'"),
    ("q 1 a 1\nq 1 a 0\n", DuplicateEntryError, "duplicate (query_id, intent, doc_id) for"
                                                " intent '1'; first seen on line 1"),
    ("", InputFormatError, "no data lines"),
])
def test_bad_intent_qrels_files(tmp_path, text, error, message):
    path = tmp_path / "bad.qrels"
    path.write_text(text)
    with pytest.raises(error, match=None) as info:
        irm.io.read_diversity_qrels(path)
    assert message in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize("name, message", [
    ("alpha_nDCG", "did you mean 'alpha_nDCG(alpha=<float>, rel=<int>, judged_only=<bool>)@k'"),
    ("alpha_nDCG@0", "must be a positive integer"),
    ("alpha_nDCG(alpha=1.5)@5", "`alpha` in 'alpha_nDCG(alpha=1.5)@5' must be between 0"),
    ("alpha_nDCG(alpha=x)@5", "must be name=value pairs with literal values"),
    ("alpha_nDCG(alpha='x')@5", "`alpha` in \"alpha_nDCG(alpha='x')@5\" must be a number"),
    ("NRBP(gamma=1)", "takes no argument 'gamma' (it takes alpha, beta, rel)"),
    ("ERR_IA(alpha=0.3)@5", "takes no argument 'alpha' (it takes judged_only, rel)"),
    ("P_IA(judged_only='yes')@5", "must be True or False"),
    ("map", "cannot be computed from diversity judgments"),
])
def test_bad_measure_names(name, message):
    with pytest.raises((ParameterError, UnknownMeasureError), match=None) as info:
        irm.evaluate_diversity(QRELS, RUN, [name])
    assert message in str(info.value)


def test_diversity_measures_refuse_standard_qrels():
    with pytest.raises(ParameterError, match="needs diversity.*irmetrics.evaluate_diversity"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["alpha_nDCG@10"])
    with pytest.raises(UnknownMeasureError):
        irm.evaluate_diversity(QRELS, RUN, ["alpha_nDGC@10"])
    with pytest.raises(NoQueriesError):
        irm.evaluate_diversity(QRELS, {"other": {"a": 1.0}}, ["AP_IA"])


def test_cli_reads_intent_qrels_with_R_diversity(tmp_path, capsys):
    qrels = tmp_path / "div.qrels"
    qrels.write_text("q 1 a 1\nq 2 a 2\nq 1 b 1\nq 2 c 1\nq 1 z 0\n")
    run = tmp_path / "run"
    run.write_text("".join(f"q Q0 {d} {i} {s} sys\n" for i, (d, s) in
                           enumerate(RUN["q"].items(), 1)))
    assert main(["eval", "-q", "-R", "diversity", "-m", "alpha_nDCG@3", "-m", "NRBP",
                 str(qrels), str(run)]) == 0
    out = capsys.readouterr().out
    expected = values(["alpha_nDCG@3", "NRBP"])
    lines = {tuple(line.split("\t")[:2]): line.split("\t")[2] for line in out.splitlines()}
    assert lines[("alpha_nDCG@3".ljust(22), "q")] == f"{expected['alpha_nDCG@3']:.4f}"
    assert lines[("NRBP".ljust(22), "all")] == f"{expected['NRBP']:.4f}"


def test_docs_example_is_real_output():
    """docs/diversity.md's Python session runs and prints what the page shows."""
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "diversity.md"
    result = doctest.testfile(str(page), module_relative=False)
    assert result.attempted > 0 and result.failed == 0
