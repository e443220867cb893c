"""*_avgjg measures (trec_eval -R qrels_jg) on hand-computed toy tables (docs/reference/trec_eval.md §8.2)."""

import pytest

import irmetrics as irm
from irmetrics.exceptions import ParameterError
from irmetrics.measures import NICKNAMES, REGISTRY

#: u1 judges a relevant and b not; u2 judges b and c relevant.
JG = irm.JudgmentGroups.from_records([
    ("q", "u1", "a", 1), ("q", "u1", "b", 0),
    ("q", "u2", "b", 1), ("q", "u2", "c", 1)])
#: All scores tie: qrels order is doc id descending, so the ranking is c, b, a.
TIED = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}


def test_averages_over_jgs_with_descending_tie_break():
    """Ranking c, b, a. u1 codes (-1, 0, 1): AP 1/3, P@1..3 = 0, 0, 1/3.
    u2 codes (1, 1, -1): AP 1, P@1..3 = 1, 1, 2/3.
    """
    res = irm.evaluate_jg(JG, TIED, ["map_avgjg", "P_avgjg.1,2,3"])
    v = res.to_dict()["q"]
    assert v["map_avgjg"] == pytest.approx((1 / 3 + 1) / 2)
    assert v["P_avgjg_1"] == pytest.approx(0.5)
    assert v["P_avgjg_2"] == pytest.approx(0.5)
    assert v["P_avgjg_3"] == pytest.approx((1 / 3 + 2 / 3) / 2)
    # An ascending tie-break (the prefs rule) would give a, b, c: u1 AP 1, u2 AP 7/12.
    assert v["map_avgjg"] != pytest.approx((1 + 7 / 12) / 2)


def test_rprec_mult_avgjg_cutoffs():
    """u1: R=1, u2: R=2; cutoff trunc(x R + 0.9).

    x=0.5: u1 c=1 -> 0, u2 c=1 -> 1. x=1: u1 c=1 -> 0, u2 c=2 -> 1.
    x=2: u1 c=2 -> relat(2)/2 = 0, u2 c=4 > n=3 -> num_rel_ret/4 = 1/2.
    """
    res = irm.evaluate_jg(JG, TIED, ["Rprec_mult_avgjg.0.5,1.0,2.0"])
    assert res.names == ["Rprec_mult_avgjg_0.50", "Rprec_mult_avgjg_1.00",
                         "Rprec_mult_avgjg_2.00"]
    v = res.to_dict()["q"]
    assert v["Rprec_mult_avgjg_0.50"] == pytest.approx(0.5)
    assert v["Rprec_mult_avgjg_1.00"] == pytest.approx(0.5)
    assert v["Rprec_mult_avgjg_2.00"] == pytest.approx(0.25)


def test_single_jg_is_not_divided_and_options_apply_per_jg():
    jg = irm.JudgmentGroups.from_records([("q", "u", "a", 2), ("q", "u", "b", 1),
                                          ("q", "u", "c", -1)])
    run = {"q": {"z": 4.0, "c": 3.0, "b": 2.0, "a": 1.0}}
    v = irm.evaluate_jg(jg, run, ["map_avgjg", "P_avgjg.1,2"]).to_dict()["q"]
    assert v["map_avgjg"] == pytest.approx((1 / 3 + 2 / 4) / 2)
    v = irm.evaluate_jg(jg, run, ["map_avgjg"], relevance_level=2).to_dict()["q"]
    assert v["map_avgjg"] == pytest.approx(1 / 4)
    v = irm.evaluate_jg(jg, run, ["map_avgjg", "P_avgjg.1"], judged_only=True).to_dict()["q"]
    assert v["map_avgjg"] == pytest.approx(1.0) and v["P_avgjg_1"] == 1.0
    v = irm.evaluate_jg(jg, run, ["map_avgjg"], max_docs=3).to_dict()["q"]
    assert v["map_avgjg"] == pytest.approx((1 / 3) / 2)


def test_doc_judged_in_one_jg_only_is_unjudged_in_the_other():
    jg = irm.JudgmentGroups.from_records([("q", "u1", "a", 1), ("q", "u2", "b", 1)])
    v = irm.evaluate_jg(jg, {"q": {"a": 2.0, "b": 1.0}}, ["map_avgjg", "P_avgjg.1"],
                        judged_only=True).to_dict()["q"]
    assert v["map_avgjg"] == 1.0 and v["P_avgjg_1"] == 1.0


def test_queries_complete_and_aggregate():
    jg = irm.JudgmentGroups.from_records([("2", "u", "a", 1), ("10", "u", "a", 1),
                                          ("10", "v", "b", 1)])
    run = {"2": {"a": 1.0}, "7": {"a": 1.0}}
    res = irm.evaluate_jg(jg, run, ["qrels_jg"])
    assert list(res.query_ids) == ["2"]
    res = irm.evaluate_jg(jg, run, ["qrels_jg"], complete=True)
    assert list(res.query_ids) == ["10", "2"]
    agg = res.aggregate()
    assert agg["num_q"] == 2 and agg["map_avgjg"] == 0.5
    assert res.names[:4] == ["runid", "num_q", "map_avgjg", "P_avgjg_5"]
    assert len(res.names) == 2 + 1 + 9 + 10
    assert NICKNAMES["qrels_jg"] == ["runid", "num_q", "map_avgjg", "P_avgjg",
                                     "Rprec_mult_avgjg"]
    assert not any(REGISTRY[n].pytrec_eval for n in NICKNAMES["qrels_jg"][2:])


def test_format_mismatch():
    with pytest.raises(ParameterError, match="format mismatch"):
        irm.evaluate_jg(JG, TIED, ["map"])
    with pytest.raises(ParameterError, match="prefs_simp"):
        irm.evaluate_jg(JG, TIED, ["prefs_simp"])


def test_standard_measure_equivalents_on_one_judgment_group():
    """The property map_avgjg == map etc. on a fixed example (hypothesis does the rest)."""
    qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": -1}, "r": {"x": 1}}
    run = {"q": {"a": 0.1, "b": 0.9, "c": 0.5, "e": 0.5}, "r": {"x": 1.0, "y": 1.0}}
    jg = irm.JudgmentGroups.from_records(
        [(q, "only", d, rel) for q, docs in qrels.items() for d, rel in docs.items()])
    got = irm.evaluate_jg(jg, run, ["map_avgjg", "P_avgjg"]).to_dict()
    want = irm.evaluate(qrels, run, ["map", "P"]).to_dict()
    for q in want:
        assert got[q]["map_avgjg"] == want[q]["map"]
        for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000):
            assert got[q][f"P_avgjg_{k}"] == want[q][f"P_{k}"]
