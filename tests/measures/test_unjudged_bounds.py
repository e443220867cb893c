"""Bounds over unjudged documents (irmetrics.unjudged) against brute force.

The oracle enumerates every labelling of each query's retrieved-but-unjudged documents
with labels in the qrels' grade range (up to 8 unjudged documents per query), evaluates
every labelling with the ordinary engine (each labelling is a query of its own) and
takes the minimum and maximum per query; the bounds must equal them.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.cli import main
from irmetrics.exceptions import ParameterError
from irmetrics.unjudged import bounds as bounds_module
from irmetrics.unjudged import grade_range

FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

BINARY = ["P.1,3,5,12", "success.1,3", "recip_rank", "RR@3", "recall.1,3,12", "Rprec",
          "map", "map_cut.2,5,12", "bpref", "infAP", "Judged@5"]
GAIN = ["ndcg", "ndcg_cut.1,3,12", "ERR@1", "ERR@3", "ERR@12"]


@st.composite
def collections(draw, grades, most_unjudged=8):
    """Qrels and a run of 1-3 queries: judged labels in ``0 .. grades - 1`` (negative
    ones too), judged documents outside the run, unjudged documents (<= 8 per query),
    ties, empty rankings."""
    top = grades - 1
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 3))):
        qid = f"q{q}"
        n = draw(st.integers(0, 10))
        kinds = draw(st.lists(st.sampled_from(["u", "j"]), min_size=n, max_size=n))
        while kinds.count("u") > most_unjudged:
            kinds[kinds.index("u")] = "j"
        qrels[qid], run[qid] = {}, {}
        for i, kind in enumerate(kinds):
            doc = f"d{i}"
            run[qid][doc] = float(draw(st.integers(0, 4)))  # ties broken by doc id
            if kind == "j":
                qrels[qid][doc] = draw(st.integers(-1, top))
        for i in range(draw(st.integers(0, 3))):  # judged, never retrieved
            qrels[qid][f"p{i}"] = draw(st.integers(0, top))
        qrels[qid].setdefault("p_top" if q == 0 else "p_zero", top if q == 0 else 0)
    return qrels, run


def brute_force(qrels, run, measures, grades=None, **kw):
    """``{query: {name: (min, max)}}`` over every labelling, by enumeration (labels in
    ``grades``, default the qrels' grade range)."""
    lo, hi = grade_range([v for docs in qrels.values() for v in docs.values()])
    grades = range(lo, hi + 1) if grades is None else grades
    big_qrels, big_run, origin = {}, {}, {}
    for qid, ranking in run.items():
        # The ranking as evaluated: trec_eval's order, cut at max_docs.
        ranked = sorted(ranking, key=lambda d: (ranking[d], d.encode()), reverse=True)
        ranked = ranked[:kw.get("max_docs") or None]
        free = [d for d in ranked if d not in qrels[qid]]
        for i, labels in enumerate(itertools.product(grades, repeat=len(free))):
            key = f"{qid}|{i}"
            big_qrels[key] = {**qrels[qid], **dict(zip(free, labels))}
            big_run[key] = dict(ranking)
            origin[key] = qid
    per_query = irm.evaluate(big_qrels, big_run, measures, **kw).to_dict()
    out: dict = {}
    for key, values in per_query.items():
        for name, value in values.items():
            low, high = out.setdefault(origin[key], {}).get(name, (np.inf, -np.inf))
            out[origin[key]][name] = (min(low, value), max(high, value))
    return out


def check(qrels, run, measures, **kw):
    got = irm.evaluate(qrels, run, measures, unjudged="bounds", **kw).to_dict()
    want = brute_force(qrels, run, measures, **kw)
    for qid, values in want.items():
        for name, (low, high) in values.items():
            if name.startswith("Judged"):  # the judged share itself, reported alongside
                assert got[qid][name + "_low"] == got[qid][name] == got[qid][name + "_high"]
                continue
            assert got[qid][name + "_low"] == pytest.approx(low, abs=1e-12), (qid, name)
            assert got[qid][name + "_high"] == pytest.approx(high, abs=1e-12), (qid, name)
            # At level 0 label 0 is relevant; bpref and infAP tell judged 0 from unjudged.
            if kw.get("relevance_level", 1) >= 1 and name not in ("bpref", "infAP"):
                assert got[qid][name + "_low"] <= got[qid][name] <= got[qid][name + "_high"]


@FAST
@given(collections(grades=3), st.sampled_from([0, 1, 2]), st.sampled_from([None, 3, 7]))
def test_binary_measures_equal_brute_force(data, level, max_docs):
    qrels, run = data
    check(qrels, run, BINARY, relevance_level=level, max_docs=max_docs)


@FAST
@given(collections(grades=2), st.sampled_from([None, 4]))
def test_ndcg_equals_brute_force_on_two_grades(data, max_docs):
    qrels, run = data
    check(qrels, run, GAIN + BINARY, max_docs=max_docs)


@FAST
@given(collections(grades=3), st.sampled_from([None, 4]))
def test_ndcg_equals_brute_force_on_three_grades(data, max_docs):
    qrels, run = data
    check(qrels, run, GAIN, max_docs=max_docs)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(collections(grades=4, most_unjudged=5))
def test_ndcg_equals_brute_force_on_four_grades(data):
    qrels, run = data
    check(qrels, run, GAIN)


@st.composite
def sampled_pools(draw):
    """Longer rankings (up to 30) where many documents are sampled-but-unjudged (label
    -1): infAP's precision estimate then leans on few judged documents above."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 2))):
        qid = f"q{q}"
        n = draw(st.integers(1, 30))
        kinds = draw(st.lists(st.sampled_from(["u", "s", "s", "0", "1"]), min_size=n,
                              max_size=n))
        free = [i for i, kind in enumerate(kinds) if kind == "u"]
        for i in free[8:]:
            kinds[i] = "s"
        run[qid] = {f"d{i:02d}": float(n - i) for i in range(n)}
        qrels[qid] = {f"d{i:02d}": {"s": -1, "0": 0, "1": 1}[kind]
                      for i, kind in enumerate(kinds) if kind != "u"}
        qrels[qid].update({f"p{i}": 1 for i in range(draw(st.integers(0, 3)))})
        qrels[qid]["p_zero"] = 0
    return qrels, run


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sampled_pools())
def test_infap_equals_brute_force_under_sampled_pools(data):
    qrels, run = data
    check(qrels, run, ["infAP"])


def test_infap_value_may_lie_outside_its_bounds():
    # trec_eval leaves a document absent from the qrels (x) out of infAP's sample; any
    # labelling puts it in: non-relevant, it lowers b's estimated precision (1 of
    # 4 judged ranks above relevant instead of 1 of 3); relevant, it raises R. Unlabelled, trec_eval's value is above both.
    qrels = {"q": {"a": 1, "n1": 0, "n2": 0, "s": -1, "b": 1}}
    run = {"q": {"a": 6.0, "n1": 5.0, "n2": 4.0, "s": 3.0, "x": 2.0, "b": 1.0}}
    got = irm.evaluate(qrels, run, ["infAP"], unjudged="bounds").to_dict()["q"]
    low, high = brute_force(qrels, run, ["infAP"])["q"]["infAP"]
    assert (got["infAP_low"], got["infAP_high"]) == (pytest.approx(low, abs=1e-12),
                                                     pytest.approx(high, abs=1e-12))
    assert got["infAP"] > high + 0.005


def test_infap_is_not_ap_in_disguise(monkeypatch):
    # A planted bug, AP's weights (1/i) for infAP's, misses the brute-force bounds when
    # sampled documents sit above a relevant one; the real weights meet them.
    qrels = {"q": {"s1": -1, "s2": -1, "a": 1, "n": 0, "b": 1}}
    run = {"q": {"x": 6.0, "s1": 5.0, "s2": 4.0, "a": 3.0, "n": 2.0, "b": 1.0}}
    want = brute_force(qrels, run, ["infAP"])["q"]["infAP"]

    def bounds():
        got = irm.evaluate(qrels, run, ["infAP"], unjudged="bounds").to_dict()["q"]
        return got["infAP_low"], got["infAP_high"]

    assert bounds() == (pytest.approx(want[0], abs=1e-12), pytest.approx(want[1], abs=1e-12))
    monkeypatch.setattr(bounds_module, "_infap_weights",
                        lambda view: (1.0 / view.rank, 1.0 / view.rank))
    assert bounds() != (pytest.approx(want[0], abs=1e-6), pytest.approx(want[1], abs=1e-6))


def test_infap_warns_beyond_its_proof(monkeypatch):
    # The exchange argument holds for rankings shorter than 1/eps documents; past that a
    # warning says so (the limit lowered here, not a 100,000-document ranking).
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "x": 0.5}}
    monkeypatch.setattr(bounds_module, "_INFAP_EXACT_BELOW", 2)
    with pytest.warns(irm.exceptions.IrMetricsWarning, match="shorter than 2 documents"):
        irm.evaluate(qrels, run, ["infAP"], unjudged="bounds")


def test_ndcg_high_may_take_a_middle_grade():
    # Labelling x and y 1 (not 0, not 2) makes the top 3 ideal: nDCG@3 = 1. Another
    # query's label 2 makes the grade range 0..2.
    qrels = {"q": {"b": 1, "d": 1, "e": 1, "p": 1}, "r": {"t": 2}}
    run = {"q": {"x": 9.0, "b": 8.0, "y": 7.0, "z": 6.0, "w": 5.0, "d": 4.0, "e": 3.0},
           "r": {"t": 1.0}}
    got = irm.evaluate(qrels, run, ["ndcg_cut.3"], unjudged="bounds").to_dict()["q"]
    want = brute_force(qrels, run, ["ndcg_cut.3"])["q"]["ndcg_cut_3"]
    assert got["ndcg_cut_3_high"] == pytest.approx(want[1], abs=1e-12) == 1.0
    vertices = brute_force(qrels, run, ["ndcg_cut.3"], grades=(0, 2))["q"]["ndcg_cut_3"]
    assert vertices[1] < want[1]


def test_ap_extremes_are_not_all_min_and_all_max():
    # A relevant document at rank 1, an unjudged one deep down: labelling it relevant
    # lowers AP (R grows), so AP's high is the trec_eval value, not "all relevant".
    run = {"q": {"a": 10.0, **{f"n{i}": 5.0 - i / 10 for i in range(8)}, "x": 0.0}}
    qrels = {"q": {"a": 1, **{f"n{i}": 0 for i in range(8)}}}
    res = irm.evaluate(qrels, run, ["map", "ndcg"], unjudged="bounds").to_dict()["q"]
    assert res["map_high"] == 1.0 and res["map_low"] == pytest.approx((1 + 2 / 10) / 2)
    assert res["ndcg_high"] == 1.0 and res["ndcg_low"] < 1.0


def test_queries_are_independent_of_each_other():
    # The same query evaluated alone and among others gets the same bounds.
    qrels = {"a": {"d1": 1, "d2": 0}, "b": {"d9": 1}}
    run = {"a": {"d1": 1.0, "x": 2.0, "d2": 0.5, "y": 0.1}, "b": {"z": 1.0}}
    both = irm.evaluate(qrels, run, BINARY, unjudged="bounds").to_dict()
    alone = irm.evaluate({"a": qrels["a"]}, {"a": run["a"]}, BINARY,
                         unjudged="bounds").to_dict()
    assert both["a"] == alone["a"]


def test_aggregates_are_means_of_the_bounds():
    qrels = {"a": {"d1": 1}, "b": {"d9": 1}}
    run = {"a": {"d1": 1.0, "x": 2.0}, "b": {"z": 1.0, "d9": 0.5}}
    res = irm.evaluate(qrels, run, ["P@1"], unjudged="bounds")
    assert res.aggregate() == {"P@1": 0.0, "P@1_low": 0.0, "P@1_high": 1.0}


def test_errors_name_the_measure_and_the_option():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(ParameterError, match="gm_bpref"):
        irm.evaluate(qrels, run, ["gm_bpref"], unjudged="bounds")
    with pytest.raises(ParameterError, match="`unjudged` must be"):
        irm.evaluate(qrels, run, ["map"], unjudged="both")
    with pytest.raises(ParameterError, match="`ties`"):
        irm.evaluate(qrels, run, ["map"], unjudged="bounds", ties="expected")


def test_a_planted_bug_is_caught():
    # The naive bounds (all unjudged non-relevant / all relevant) fail the oracle.
    qrels = {"q": {"a": 1, **{f"n{i}": 0 for i in range(3)}}}
    run = {"q": {"a": 4.0, "n0": 3.0, "n1": 2.0, "n2": 1.5, "x": 1.0}}
    naive = irm.evaluate({"q": {**qrels["q"], "x": 1}}, run, ["map"]).to_dict()["q"]["map"]
    assert naive < brute_force(qrels, run, ["map"])["q"]["map"][1]


# --- the surfaces: irmetrics eval --bounds, compare ---------------------------------------

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "meta_evaluation"
HUMAN = str(FIXTURES / "qrels.human.txt")


def test_cli_eval_prints_the_bounds_next_to_each_value(capsys):
    assert main(["eval", "--bounds", "-m", "map", "-m", "P.10", HUMAN,
                 str(FIXTURES / "dense.run")]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [row[0] for row in lines] == ["map", "map_low", "map_high",
                                         "P_10", "P_10_low", "P_10_high"]
    res = irm.evaluate(HUMAN, str(FIXTURES / "dense.run"), ["map", "P.10"],
                       unjudged="bounds").aggregate()
    assert [float(row[2]) for row in lines] == [round(res[row[0]], 4) for row in lines]


def test_cli_eval_bounds_default_and_refusals(capsys):
    assert main(["eval", "--bounds", HUMAN, str(FIXTURES / "dense.run")]) == 0
    names = {line.split()[0] for line in capsys.readouterr().out.splitlines()}
    assert {"map_low", "Rprec_high", "recip_rank_low", "P_10_high"} <= names
    assert main(["eval", "--bounds", "-m", "gm_bpref", HUMAN, str(FIXTURES / "dense.run")]) == 2
    assert "gm_bpref" in capsys.readouterr().err
    assert main(["eval", "--bounds", "--tie-report", HUMAN, str(FIXTURES / "dense.run")]) == 1


def test_cli_eval_bounds_infap(capsys):
    assert main(["eval", "--bounds", "-m", "infAP", HUMAN, str(FIXTURES / "dense.run")]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    res = irm.evaluate(HUMAN, str(FIXTURES / "dense.run"), ["infAP"],
                       unjudged="bounds").aggregate()
    assert [row[0].strip() for row in lines] == ["infAP", "infAP_low", "infAP_high"]
    assert [row[2] for row in lines] == ["%.4f" % res[row[0].strip()] for row in lines]
    assert res["infAP_low"] < res["infAP_high"]


def test_compare_says_whether_a_conclusion_holds_at_both_ends():
    runs = {name: str(FIXTURES / f"{name}.run") for name in ("dense", "bm25", "splade")}
    cmp = irm.compare(HUMAN, runs, ["map", "P.10"], baseline="bm25", unjudged="bounds")
    rows = {(r["measure"], r["system"]): r for r in cmp.bounds.iter_rows(named=True)}
    # dense beats bm25 on map whatever the unjudged documents are; splade only perhaps.
    assert rows["map", "dense"]["holds"] and not rows["map", "splade"]["holds"]
    for r in rows.values():
        assert r["diff_low"] <= r["diff"] <= r["diff_high"]
    assert "holds at both ends" in cmp.to_text()
    assert "bounds" in cmp.to_dict()
    assert irm.compare(HUMAN, runs, ["map"], baseline="bm25").bounds is None


def test_cli_compare_bounds(capsys):
    assert main(["compare", "--bounds", "-m", "map", HUMAN, str(FIXTURES / "dense.run"),
                 str(FIXTURES / "bm25.run")]) == 0
    assert "holds at both ends" in capsys.readouterr().out


def test_every_road_gives_the_same_bounds():
    # The bounded-memory file road (chunk by chunk), the dict road and the in-memory
    # table road compute the same bounds.
    run_path = FIXTURES / "splade.run"
    measures = ["map", "nDCG@10", "R@20", "Rprec", "ERR@10"]
    by_file = irm.evaluate(HUMAN, str(run_path), measures, unjudged="bounds")
    run = irm.Run.read(str(run_path))
    by_table = irm.evaluate(HUMAN, run, measures, unjudged="bounds")
    by_dict = irm.evaluate(HUMAN, run.to_dict(), measures, unjudged="bounds")
    assert by_file.to_dict() == by_table.to_dict() == by_dict.to_dict()


def test_the_html_report_shows_the_bounds():
    pytest.importorskip("matplotlib")
    runs = {name: str(FIXTURES / f"{name}.run") for name in ("dense", "bm25")}
    page = irm.compare(HUMAN, runs, ["map"], baseline="bm25", unjudged="bounds").to_html()
    assert "Over every labelling of the unjudged documents" in page and "holds" in page
    plain = irm.compare(HUMAN, runs, ["map"], baseline="bm25").to_html()
    assert "Over every labelling" not in plain


def test_queries_absent_from_the_run_have_no_range():
    # complete=True scores a query the run lacks on trec_eval's placeholder ranking;
    # nothing was retrieved, so there is nothing to label.
    qrels = {"a": {"d1": 1}, "b": {"d2": 1}}
    res = irm.evaluate(qrels, {"a": {"d1": 1.0, "x": 0.5}}, ["P@2", "map", "nDCG@2"],
                       unjudged="bounds", complete=True).to_dict()
    assert res["b"] == {"P@2": 0.0, "P@2_low": 0.0, "P@2_high": 0.0, "map": 0.0,
                        "map_low": 0.0, "map_high": 0.0, "nDCG@2": 0.0, "nDCG@2_low": 0.0,
                        "nDCG@2_high": 0.0}
    assert res["a"]["P@2_high"] == 1.0


def test_judged_only_leaves_nothing_to_label():
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"x": 3.0, "a": 2.0, "b": 1.0}}
    res = irm.evaluate(qrels, run, ["map", "P@2"], unjudged="bounds",
                       judged_only=True).to_dict()["q"]
    assert res["map_low"] == res["map"] == res["map_high"] == 1.0
    assert res["P@2_low"] == res["P@2"] == res["P@2_high"] == 0.5


def test_the_docs_page_shows_real_output(capsys):
    doc = (FIXTURES.parents[1] / "docs" / "incomplete_judgments.md").read_text()
    shown = [line[2:] for line in doc.splitlines() if line.startswith("# ")]
    assert main(["eval", "--bounds", "-m", "map", "-m", "ndcg_cut.10", HUMAN,
                 str(FIXTURES / "dense.run")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out and all(line in shown for line in out)
    assert main(["compare", "--bounds", "-m", "map", "-m", "P.10", "--baseline", "bm25",
                 HUMAN, *(f"{n}={FIXTURES / n}.run" for n in ("dense", "bm25", "splade"))]) == 0
    verdicts = [line for line in capsys.readouterr().out.splitlines() if "at both ends" in line]
    assert len(verdicts) == 4 and all(line in shown for line in verdicts)
    toy = irm.evaluate({"q1": {"a": 1, "b": 0, "c": 2}},
                       {"q1": {"a": 0.9, "x": 0.8, "b": 0.7, "c": 0.6, "y": 0.5}},
                       ["map"], unjudged="bounds").to_dict()["q1"]
    assert (toy["map_low"], toy["map_high"]) == (pytest.approx(0.7), pytest.approx(11 / 12))
