"""crosscheck(): irmetrics against pytrec_eval, and the ``irmetrics validate`` command."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytrec_eval = pytest.importorskip("pytrec_eval")

from irmetrics.cli import main  # noqa: E402
from irmetrics.crosscheck import crosscheck, default_measures  # noqa: E402
from irmetrics.measures.registry import REGISTRY  # noqa: E402

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "cli"
QRELS, RUN_A, RUN_B = FIX / "qrels.txt", FIX / "run_a.txt", FIX / "run_b.txt"

DOCS = [f"d{i}" for i in range(8)]


@st.composite
def qrels_and_run(draw):
    """Small inputs with ties, graded and negative labels, unjudged documents, queries
    only in the qrels and only in the run."""
    qrels, run = {}, {}
    for q in draw(st.lists(st.sampled_from("1 2 3 10 20".split()), min_size=1, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        qrels[q] = {d: draw(st.integers(-1, 3)) for d in docs}
    for q in draw(st.lists(st.sampled_from("1 2 3 10 20 99".split()), min_size=1, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        run[q] = {d: float(draw(st.integers(0, 3))) / 2 for d in docs}
    return qrels, run


@settings(max_examples=40, deadline=None)
@given(qrels_and_run(), st.integers(1, 3), st.booleans())
def test_crosscheck_agrees_on_random_inputs(data, level, judged_only):
    qrels, run = data
    if not set(qrels) & set(run):
        return
    report = crosscheck(qrels, run, relevance_level=level, judged_only=judged_only)
    compared = {q for q in set(qrels) & set(run) if q not in report.excluded}
    if not compared:  # every common query judged only negatively: nothing to compare
        assert not report.ok and "FAIL: nothing was compared" in report.format()
        return
    assert report.ok, report.format()
    names = {o.name for o in report.outputs}
    assert "map" in names and "P_5" in names and "iprec_at_recall_0.00" in names


def test_default_measures_are_the_pytrec_eval_ones():
    assert default_measures() == [n for n, m in sorted(REGISTRY.items(),
                                                        key=lambda kv: kv[1].order)
                                  if m.pytrec_eval]


def test_friendly_names_and_levels_map_to_pytrec_eval_names():
    qrels = {"1": {"a": 2, "b": 1, "c": 0}, "2": {"x": 1}}
    run = {"1": {"a": 0.1, "b": 0.9, "c": 0.5}, "2": {"x": 1.0, "y": 2.0}}
    report = crosscheck(qrels, run, ["nDCG@2", "P(rel=2)@1", "P.1", "P",
                                     "iprec_at_recall..5,0.00001"])
    assert report.ok, report.format()
    pairs = {o.name: o.pytrec_eval_name for o in report.outputs}
    assert pairs["nDCG@2"] == "ndcg_cut_2" and pairs["P(rel=2)@1"] == "P_1"
    assert pairs["P_1"] == "P_1" and "P_5" not in pairs  # first parameter string wins
    assert pairs["iprec_at_recall_0.50"] == "iprec_at_recall_0.50"
    assert pairs["iprec_at_recall_0.00"] == "iprec_at_recall_0.00"  # 1e-05, no exponent
    assert all(o.n_queries == 2 for o in report.outputs)


def test_a_difference_is_reported(monkeypatch):
    real = pytrec_eval.RelevanceEvaluator.evaluate

    def skewed(self, run):
        out = real(self, run)
        if "map" in out.get("2", {}):
            out["2"]["map"] += 1e-6
        return out

    monkeypatch.setattr(pytrec_eval.RelevanceEvaluator, "evaluate", skewed)
    report = crosscheck({"1": {"a": 1}, "2": {"b": 1}}, {"1": {"a": 1.0}, "2": {"b": 1.0}},
                        ["map", "P.1"])
    assert not report.ok
    by = {o.name: o for o in report.outputs}
    assert by["map"].differing == ["2"] and by["map"].max_abs_diff == pytest.approx(1e-6)
    assert by["P_1"].differing == []
    assert "FAIL: 1 of 2 outputs" in report.format()
    relaxed = crosscheck({"1": {"a": 1}, "2": {"b": 1}}, {"1": {"a": 1.0}, "2": {"b": 1.0}},
                         ["map"], tolerance=1e-5)
    assert relaxed.ok


def test_nan_on_both_sides_is_equal():
    # -J with nothing judged retrieved: iprec_at_recall_0.00 is NaN in both libraries.
    report = crosscheck({"1": {"x": 1}}, {"1": {"y": 1.0}}, ["iprec_at_recall..0"],
                        judged_only=True)
    assert report.ok and report.outputs[0].max_abs_diff == 0.0


def test_parameters_pytrec_eval_cannot_express():
    with pytest.raises(ValueError, match="pytrec_eval cannot express"):
        crosscheck({"1": {"a": 1}}, {"1": {"a": 1.0}}, ["ndcg.1=3"])


def test_validate_command_ok(capsys):
    assert main(["validate", str(QRELS), str(RUN_A)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[-1].startswith("OK: ")
    assert any(line.startswith("map ") and "queries 5" in line for line in lines)
    # every pytrec_eval measure of the registry, each output on its own line: compared
    # ones counted in the verdict, string outputs (relstring) and bookkeeping outputs
    # (runid, num_q) listed as skipped, the qrels query missing from run A listed
    compared = [line for line in lines[:-1] if "\tmax_abs_diff " in line]
    skipped = [line for line in lines[:-1] if "\tskipped: " in line]
    missing = [line for line in lines[:-1] if line.startswith("qrels queries absent")]
    assert missing == ["qrels queries absent from the run, evaluated by neither: '4'"]
    assert len(compared) + len(skipped) + len(missing) == len(lines) - 1
    assert len(compared) == int(lines[-1].split()[1])
    assert lines[-1].endswith(f"({5 * len(compared)} values compared)")
    assert all(line.endswith("\tqueries 5\tok") for line in compared)
    assert sorted(skipped) == [
        "num_q                 \tskipped: bookkeeping output, no per-query value",
        "relstring             \tskipped: string output",
        "runid                 \tskipped: bookkeeping output, no per-query value"]


def test_validate_command_differs(capsys, monkeypatch):
    real = pytrec_eval.RelevanceEvaluator.evaluate

    def skewed(self, run):
        out = real(self, run)
        out["10"]["P_5"] = 0.123
        return out

    monkeypatch.setattr(pytrec_eval.RelevanceEvaluator, "evaluate", skewed)
    assert main(["validate", "-m", "P.5", "-m", "map", str(QRELS), str(RUN_B)]) == 1
    out = capsys.readouterr().out
    assert "P_5" in out and "DIFFERS in 1 query: 10" in out and "FAIL" in out


def test_validate_errors(capsys, tmp_path):
    assert main(["validate", "-l0", str(QRELS), str(RUN_B)]) == 2
    assert "relevance_level" in capsys.readouterr().err
    assert main(["validate", str(QRELS), str(tmp_path / "nope")]) == 2
    assert main(["validate", "-m", "bogus", str(QRELS), str(RUN_B)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    nope, bogus = err.splitlines()
    assert nope.startswith(f"irmetrics validate: {tmp_path / 'nope'}: cannot read file: ")
    assert bogus.startswith("irmetrics validate: ") and "bogus" in bogus


def test_all_negative_queries_are_excluded():
    # Found by the property test: pytrec_eval (trec_eval 9.0.8) hangs or segfaults on
    # this input (query 1 judges only -1 after a graded query 3: stale level counts).
    qrels = {"3": {"d7": 2, "d3": 0, "d0": 3, "d5": -1, "d4": 3, "d1": 1},
             "1": {"d6": -1, "d5": -1}, "20": {"d3": -1}}
    run = {"2": {"d1": 0.5}, "1": {f"d{i}": 0.0 for i in range(6)},
           "3": {"d1": 1.0, "d0": 0.5}, "10": {"d1": 0.0}}
    report = crosscheck(qrels, run, relevance_level=2, judged_only=True)
    assert report.excluded == ["1", "20"]
    assert report.ok and all(o.n_queries == 1 for o in report.outputs)
    assert "queries not compared" in report.format()
