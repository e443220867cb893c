"""Nugget measures everywhere a measure goes: the registry, evaluate_nuggets, compare,
meta_evaluate and the command line, equal to castorini/nuggetizer's metric code."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import irmetrics as irm
from irmetrics import rag
from irmetrics.cli import main
from irmetrics.exceptions import InputFormatError, MissingQueriesWarning, ParameterError
from irmetrics.measures import REGISTRY
from tests.rag.test_rag import FIX, _assignment_files, _nuggetizer, _write

#: Registry name, nuggetizer's name (the friendly spelling).
NAMES = {"nugget_strict_vital": "strict_vital_score", "nugget_strict_all": "strict_all_score",
         "nugget_vital": "vital_score", "nugget_all": "all_score"}
NUGGETS, HUMAN, LLM = (FIX / "nuggets.jsonl", FIX / "assignments.human.jsonl",
                       FIX / "assignments.llm.jsonl")


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        return function(*args, **kwargs)


def test_declared_once_in_the_registry():
    for name, friendly in NAMES.items():
        spec = REGISTRY[name]
        assert spec.friendly == friendly and spec.extra["rel_formats"] == ("nuggets",)
    assert REGISTRY["nugget_weighted_recall"].friendly == "weighted_recall"


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_assignment_files())
def test_evaluate_nugget_runs_equals_nuggetizer(records, tmp_path):
    metrics = _nuggetizer()
    path = _write(tmp_path / "assign.jsonl", records)
    runs = _quiet(rag.evaluate_nugget_runs, None, path, [*NAMES, *NAMES.values()])
    for record in records:
        want = metrics.calculate_nugget_scores(record["qid"], record["nuggets"])
        got = runs[record["run_id"]].to_dict()[record["qid"]]
        for name, friendly in NAMES.items():
            assert got[name] == got[friendly] == getattr(want, friendly)
    # importance-weighted recall, by a plain loop (weights 1 and 0.25)
    weighted = _quiet(rag.evaluate_nugget_runs, None, path, ["weighted_recall(okay=0.25)"])
    credit = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
    for record in records:
        w = [1.0 if n["importance"] == "vital" else 0.25 for n in record["nuggets"]]
        c = [credit[n["assignment"]] for n in record["nuggets"]]
        want = sum(a * b for a, b in zip(w, c)) / sum(w)
        got = weighted[record["run_id"]].to_dict()[record["qid"]]["weighted_recall(okay=0.25)"]
        assert got == pytest.approx(want, rel=1e-15, abs=1e-15)
    for run, results in runs.items():
        glob = metrics.calculate_global_metrics([r for r in records if r["run_id"] == run])
        for friendly in NAMES.values():
            assert results.aggregate()[friendly] == pytest.approx(glob[friendly], abs=1e-15)


def test_bundled_fixture_equals_nugget_scores():
    scores = _quiet(rag.nugget_scores, HUMAN, NUGGETS)
    runs = _quiet(rag.evaluate_nugget_runs, NUGGETS, HUMAN,
                  [*rag.NUGGET_MEASURES, "weighted_recall(okay=1.0)"])
    for run in scores.runs:
        mine = scores.per_query(run)
        results = runs[run]
        assert list(results.query_ids) == list(mine.query_ids)
        for m in rag.NUGGET_MEASURES:
            np.testing.assert_array_equal(results.values(m), mine.values(m))
        # okay weighing as much as vital is all_score
        np.testing.assert_allclose(results.values("weighted_recall(okay=1.0)"),
                                   mine.values("all_score"), rtol=0, atol=1e-15)
    # bm25-gen answered 2024-1021, which has no nugget: listed, not scored 0
    assert "2024-1021" not in runs["bm25-gen"].query_ids
    assert list(runs["bm25-gen"].ignored_query_ids) == ["2024-1021"]


def test_evaluate_nuggets_one_run_and_its_errors():
    res = _quiet(irm.evaluate_nuggets, NUGGETS, HUMAN, ["all_score", "num_q"],
                 run_id="dense-gen")
    assert res.run_name == "dense-gen" and res.aggregate()["num_q"] == 20
    with pytest.raises(ParameterError, match="one of the 4 runs"):
        irm.evaluate_nuggets(NUGGETS, HUMAN, ["all_score"])
    with pytest.raises(ParameterError, match="a run of the assignments"):
        irm.evaluate_nuggets(NUGGETS, HUMAN, ["all_score"], run_id="nope")
    with pytest.raises(ParameterError, match="needs qrels"):
        irm.evaluate_nuggets(NUGGETS, HUMAN, ["map"], run_id="dense-gen")
    with pytest.raises(ParameterError, match="weight > 0"):
        irm.evaluate_nuggets(NUGGETS, HUMAN, ["weighted_recall(okay=0)"], run_id="dense-gen")


def test_nugget_measure_on_trec_inputs_is_a_clear_error():
    with pytest.raises(ParameterError, match="evaluate_nuggets"):
        irm.evaluate(FIX / "qrels.txt", FIX / "bm25-gen.run", ["all_score"])
    with pytest.raises(InputFormatError, match="qrels.txt:1: nugget measures read"):
        irm.evaluate_nuggets(FIX / "qrels.txt", HUMAN, ["all_score"])
    with pytest.raises(InputFormatError, match="bm25-gen.run:1: .*assignment file"):
        irm.evaluate_nuggets(NUGGETS, FIX / "bm25-gen.run", ["all_score"])
    with pytest.raises(ParameterError, match="judged_only"):
        rag.NuggetEvaluator(NUGGETS, ["all_score"], judged_only=True)


def test_assignment_of_a_nugget_the_file_lacks(tmp_path):
    records = [json.loads(line) for line in HUMAN.read_text().splitlines()][:1]
    records[0]["nuggets"][0]["text"] = "a nugget nobody wrote"
    path = _write(tmp_path / "a.jsonl", records)
    with pytest.raises(InputFormatError, match=r"a.jsonl:1: .*run 'bm25-gen'.*query_id"):
        irm.evaluate_nuggets(NUGGETS, path, ["all_score"])


def test_several_runs_need_a_name_or_a_run_id():
    with pytest.raises(ParameterError, match=r"`runs` must be named by the runs of .*got 'a'"):
        _quiet(irm.compare, NUGGETS, {"a": HUMAN, "b": HUMAN}, ["all_score"])
    meta = _quiet(irm.meta_evaluate, {"human": HUMAN, "llm": LLM}, ["bm25-gen", "dense-gen"],
                  "all_score", nuggets=NUGGETS, n_resamples=0)
    assert meta.grid.run_names == ["bm25-gen", "dense-gen"]


def test_compare_takes_nugget_files_and_results():
    by_name = _quiet(irm.compare, NUGGETS, {"bm25-gen": HUMAN, "dense-gen": HUMAN},
                     ["all_score"], baseline="bm25-gen")
    by_results = irm.compare(None, _quiet(rag.evaluate_nugget_runs, NUGGETS, HUMAN,
                                          ["all_score"]), ["all_score"],
                             baseline="bm25-gen")
    one = by_name.table().row(0, named=True)
    same = by_results.table().filter(system="dense-gen").row(0, named=True)
    for key in ("diff", "ci_low", "ci_high", "p_value"):
        assert one[key] == same[key]
    # the paired t-test on the per-topic values, by hand
    scores = _quiet(rag.nugget_scores, HUMAN, NUGGETS)
    _, _, matrix = scores.matrix("all_score", ["bm25-gen", "dense-gen"])
    assert one["diff"] == pytest.approx(np.mean(matrix[:, 1] - matrix[:, 0]), abs=1e-15)


def test_meta_evaluate_equals_assessor_agreement():
    meta = _quiet(irm.meta_evaluate, {"human": HUMAN, "llm": LLM}, None, ["all_score"],
                  nuggets=NUGGETS, n_resamples=50)
    agree = rag.assessor_agreement(rag.read_assignments(HUMAN), rag.read_assignments(LLM),
                                   n_resamples=50)
    judges = meta.judges["llm"].overall
    assert judges["both"] == agree.labels.height
    assert judges["kappa"] == pytest.approx(agree.kappa, abs=1e-12)
    assert judges["alpha"] == pytest.approx(agree.alpha, abs=1e-12)
    row = meta.rankings.row(0, named=True)
    assert row["tau_b"] == agree.ranking.as_dict()["tau_b"][0]
    assert row["tau_ap"] == agree.ranking.as_dict()["tau_ap"][0]
    with pytest.raises(ParameterError, match="nuggets"):
        irm.meta_evaluate({"a": {"q": {"d": 1}}, "b": {"q": {"d": 1}}},
                          {"r": {"q": {"d": 1.0}}, "s": {"q": {"d": 2.0}}}, "P.1",
                          nuggets=NUGGETS)


def _cli(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_eval_compare_agree(capsys, tmp_path):
    code, out, _ = _cli(["eval", "-R", "nuggets", "-m", "all_score", str(NUGGETS), str(HUMAN)],
                        capsys)
    assert code == 0
    values = [float(line.split()[2]) for line in out.splitlines()]
    means = _quiet(rag.nugget_scores, HUMAN, NUGGETS).means()["all_score"].to_list()
    assert values == pytest.approx([round(m, 4) for m in means], abs=1e-12)
    code, out, _ = _cli(["eval", "-R", "nuggets", str(NUGGETS), str(LLM)], capsys)
    lines = [line.split("\t") for line in out.splitlines()]
    assert code == 0 and [f[0].strip() for f in lines[:6]] == [
        "runid", "num_q", "nugget_strict_vital", "nugget_strict_all", "nugget_vital",
        "nugget_all"] and lines[0][2] == "bm25-gen"
    code, out, err = _cli(["eval", "-m", "all_score", str(FIX / "qrels.txt"),
                           str(FIX / "bm25-gen.run")], capsys)
    assert code != 0 and "-R nuggets" in err
    html = tmp_path / "cmp.html"
    code, out, err = _cli(["compare", "--nuggets", str(NUGGETS), "--baseline", "bm25-gen",
                           "--format", "html", "-o", str(html), str(HUMAN)], capsys)
    assert code == 0 and "dense-gen" in html.read_text(encoding="utf-8")
    assert "bm25-gen/2024-1021" in err
    code, out, err = _cli(["agree", "--nuggets", str(NUGGETS), "--resamples", "20",
                           "--qrels", f"human={HUMAN}", "--qrels", f"llm={LLM}",
                           "--fail-if", "kappa<0.9"], capsys)
    assert code == 3 and "kappa = 0.8114 < 0.9" in err and "tau_b" in out
