"""irmetrics.compare and ``irmetrics compare``: alignment, oracles, writers, the CI gate."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import scipy.stats

import irmetrics as irm
from irmetrics.cli import main
from irmetrics.comparison import COLUMNS, ComparisonError, QueryAlignmentWarning
from irmetrics.exceptions import DegenerateTestWarning, InputFormatError, ParameterError

FIX = Path(__file__).resolve().parents[2] / "fixtures"
CMP = FIX / "compare"
QRELS = str(CMP / "qrels.txt")
RUNS = {name: str(CMP / f"{name}.run") for name in ("bm25", "dense", "tweak")}
MEASURES = ["map", "ndcg_cut.10", "P.10"]


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    import sys

    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        status = main(list(argv))
    finally:
        sys.stdout, sys.stderr = old
    return status, out.getvalue(), err.getvalue()


def per_query_matrix(measure: str, names=("bm25", "dense", "tweak"), **options):
    """Per-query values from irm.evaluate, the oracle's input."""
    columns = []
    for name in names:
        res = irm.evaluate(QRELS, RUNS[name], [measure], **options)
        columns.append(res.values(res.names[0]))
    return np.vstack(columns)


# -- numbers against scipy / statsmodels -------------------------------------------------

def test_t_test_rows_equal_scipy_and_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    cmp = irm.compare(QRELS, RUNS, MEASURES, baseline="bm25")
    table = cmp.table()
    assert table.columns == list(COLUMNS)
    for measure, name in zip(MEASURES, ["map", "ndcg_cut_10", "P_10"]):
        values = per_query_matrix(measure)
        rows = table.filter(pl.col("measure") == name)
        assert rows["system"].to_list() == ["dense", "tweak"]
        expected_p = []
        for row, j in zip(rows.iter_rows(named=True), (1, 2)):
            ref = scipy.stats.ttest_rel(values[j], values[0])
            d = values[j] - values[0]
            assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-12, abs=1e-12)
            assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-15)
            ci = ref.confidence_interval(0.95)
            assert row["ci_low"] == pytest.approx(ci.low, rel=1e-12, abs=1e-15)
            assert row["ci_high"] == pytest.approx(ci.high, rel=1e-12, abs=1e-15)
            assert row["diff"] == pytest.approx(d.mean(), abs=1e-15)
            assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
            assert row["mean"] == pytest.approx(values[j].mean(), abs=1e-15)
            assert row["baseline_mean"] == pytest.approx(values[0].mean(), abs=1e-15)
            assert (row["wins"], row["ties"], row["losses"]) == (
                int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
            assert row["n_queries"] == 50
            expected_p.append(ref.pvalue)
        adjusted = multitest.multipletests(expected_p, method="holm")[1]
        np.testing.assert_allclose(rows["p_adjusted"].to_numpy(), adjusted, rtol=1e-12)
        assert rows["significant"].to_list() == [p <= 0.05 for p in adjusted]


@pytest.mark.parametrize("correction", ["bonferroni", "holm", "holm-sidak", "hommel",
                                        "fdr_bh", "fdr_by"])
def test_correction_is_per_measure_over_all_pairs(correction):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    cmp = irm.compare(QRELS, RUNS, ["map"], correction=correction)
    table = cmp.table()
    # All pairs: (dense vs bm25), (tweak vs bm25), (tweak vs dense).
    assert list(zip(table["system"], table["baseline"])) == [
        ("dense", "bm25"), ("tweak", "bm25"), ("tweak", "dense")]
    adjusted = multitest.multipletests(table["p_value"].to_numpy(), method=correction)[1]
    np.testing.assert_allclose(table["p_adjusted"].to_numpy(), adjusted, rtol=1e-12)


def test_randomization_on_few_queries_is_the_exact_permutation_test():
    # 5 common queries: all 2^5 sign flips are enumerated; scipy's exact test agrees.
    qrels, a, b = str(FIX / "cli/qrels.txt"), str(FIX / "cli/run_a.txt"), str(FIX / "cli/run_b.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryAlignmentWarning)
        warnings.simplefilter("ignore", irm.exceptions.MissingQueriesWarning)
        cmp = irm.compare(qrels, {"a": a, "b": b}, ["map"], baseline="a",
                          test="randomization")
        values = [irm.evaluate(qrels, run, ["map"]) for run in (a, b)]
    row = cmp.table().row(0, named=True)
    common = sorted(set(values[0].query_ids) & set(values[1].query_ids))
    va, vb = ([dict(zip(v.query_ids, v.values("map")))[q] for q in common] for v in values)
    d = np.asarray(vb) - np.asarray(va)
    ref = scipy.stats.permutation_test((d,), np.mean, permutation_type="samples",
                                       n_resamples=np.inf)
    assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert row["statistic"] == pytest.approx(d.mean(), rel=1e-12)


def test_tukey_rows_read_the_hsd_matrix():
    cmp = irm.compare(QRELS, RUNS, ["map", "P.10"], test="tukey", n_resamples=2000, seed=3)
    scores = np.stack([cmp.scores["map"], cmp.scores["P_10"]], axis=-1)
    hsd = irm.stats.tukey_hsd(scores, n_resamples=2000, seed=3)
    table = cmp.table()
    index = {s: i for i, s in enumerate(cmp.systems)}
    for row in table.iter_rows(named=True):
        m = cmp.measures.index(row["measure"])
        i, j = index[row["system"]], index[row["baseline"]]
        assert row["p_value"] == hsd.p_values[i, j, m]
        assert row["p_adjusted"] == row["p_value"]  # Tukey HSD controls FWER itself
    assert cmp.correction == "none"
    assert "Tukey" in cmp.describe()


def test_same_seed_same_bytes_and_seed_matters():
    kwargs = dict(test="randomization", n_resamples=500, baseline="bm25")
    first = irm.compare(QRELS, RUNS, MEASURES, seed=7, **kwargs).to_json()
    again = irm.compare(QRELS, RUNS, MEASURES, seed=7, **kwargs).to_json()
    other = irm.compare(QRELS, RUNS, MEASURES, seed=8, **kwargs).to_json()
    assert first == again
    assert first != other


# -- query alignment ---------------------------------------------------------------------

def _small():
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}, "q3": {"d4": 1, "d5": 1}}
    a = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0, "x": 2.0},
         "q3": {"d4": 1.0, "y": 3.0, "d5": 0.5}}
    b = {"q1": {"d1": 1.0, "d2": 2.0}, "q3": {"y": 1.0, "d4": 3.0, "d5": 2.0}}
    return qrels, a, b


def test_missing_queries_are_reported_and_left_out():
    qrels, a, b = _small()
    with pytest.warns(QueryAlignmentWarning, match=r"run 'B' lacks 1 \('q2'\)"):
        cmp = irm.compare(qrels, {"A": a, "B": b}, ["map"])
    assert cmp.query_ids.tolist() == ["q1", "q3"]
    assert cmp.missing_queries == {"B": ["q2"]}
    assert cmp.table()["n_queries"].to_list() == [2]


def test_a_query_no_run_answered_is_reported_for_every_run():
    qrels, a, b = _small()
    qrels["q4"] = {"d9": 1}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cmp = irm.compare(qrels, {"A": a, "B": b}, ["map"])
    assert cmp.missing_queries == {"A": ["q4"], "B": ["q2", "q4"]}
    # One warning, from the alignment (evaluation's own warning is folded into it);
    # two queries are also too few for any test (DegenerateTestWarning, issue 26).
    assert [w.category for w in caught if w.category is not DegenerateTestWarning] \
        == [QueryAlignmentWarning]


def test_complete_scores_missing_queries_like_trec_eval_c():
    qrels, a, b = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("error", QueryAlignmentWarning)
        cmp = irm.compare(qrels, {"A": a, "B": b}, ["map"], complete=True)
    assert cmp.query_ids.tolist() == ["q1", "q2", "q3"]
    assert cmp.missing_queries == {}
    expected = irm.evaluate(qrels, b, ["map"], complete=True).values("map")
    np.testing.assert_array_equal(cmp.scores["map"][1], expected)


def test_results_and_per_query_files_give_the_same_table(tmp_path):
    evaluated = {name: irm.evaluate(QRELS, path, MEASURES) for name, path in RUNS.items()}
    from_results = irm.compare(None, evaluated, MEASURES, baseline="bm25")
    from_paths = irm.compare(QRELS, RUNS, MEASURES, baseline="bm25")
    assert from_results.table().equals(from_paths.table())
    # trec_eval -q files print 4 decimals: the statistics of the rounded values.
    files = {}
    for name, path in RUNS.items():
        status, out, _ = cli("eval", "-q", "-m", "map", "-m", "ndcg_cut.10", "-m", "P.10",
                             QRELS, path)
        assert status == 0
        files[name] = tmp_path / f"{name}.eval"
        files[name].write_text(out)
    read = {name: irm.read_per_query(p) for name, p in files.items()}
    from_files = irm.compare(None, read, ["map", "ndcg_cut_10", "P_10"], baseline="bm25")
    np.testing.assert_allclose(from_files.scores["map"], from_paths.scores["map"], atol=5e-5)
    assert read["bm25"].run_name == "bm25.eval"  # no runid line without -m runid


def test_list_of_paths_names_runs_by_file_name():
    cmp = irm.compare(QRELS, [RUNS["bm25"], RUNS["dense"]], ["map"])
    assert cmp.systems == ["bm25.run", "dense.run"]


# -- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(test="anova"), "`test` must be one of"),
    (dict(correction="sidak2"), "`correction` must be one of"),
    (dict(alpha=0.0), "`alpha` must be a real number strictly between 0 and 1"),
    (dict(alpha=1.5), "`alpha` must be"),
    (dict(alpha=float("nan")), "`alpha` must be"),
    (dict(n_resamples=0), "`n_resamples` must be a positive integer"),
    (dict(seed=-1), "`seed` must be a non-negative integer"),
    (dict(baseline="nope"), "`baseline` must be one of the runs"),
    (dict(baseline=[]), "`baseline` must be"),
])
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        irm.compare(QRELS, RUNS, ["map"], **kwargs)


def test_fewer_than_two_runs_and_bad_measures_are_refused():
    with pytest.raises(ParameterError, match="at least two runs"):
        irm.compare(QRELS, {"bm25": RUNS["bm25"]}, ["map"])
    with pytest.raises(ParameterError, match="geometric mean"):
        irm.compare(QRELS, RUNS, ["gm_map"])
    with pytest.raises(ParameterError, match="at least one measure"):
        irm.compare(QRELS, RUNS, ["runid", "num_q"])
    with pytest.raises(ParameterError, match="`qrels` must be judgments"):
        irm.compare(None, RUNS, ["map"])


def test_no_common_query_and_nan_values_are_errors():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    with pytest.raises(ComparisonError, match="no query in common"):
        irm.compare(qrels, {"A": {"q1": {"d1": 1.0}}, "B": {"q2": {"d2": 1.0}}}, ["map"])
    evaluated = irm.evaluate(qrels, {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}, ["map"])
    broken = irm.evaluate(qrels, {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}, ["map"])
    broken.values("map")[1] = np.nan
    with pytest.raises(ComparisonError, match=r"run 'B': map is not a finite number on 1 "
                                              r"queries \('q2'\)"):
        irm.compare(None, {"A": evaluated, "B": broken}, ["map"])


def test_unknown_evaluate_option_is_a_type_error():
    with pytest.raises(TypeError, match="max_doc"):
        irm.compare(QRELS, RUNS, ["map"], max_doc=10)


# -- writers -----------------------------------------------------------------------------------

def test_writers_agree_with_the_table():
    cmp = irm.compare(QRELS, RUNS, MEASURES, baseline="bm25")
    table = cmp.table()
    as_json = json.loads(cmp.to_json())
    assert as_json["test"] == "t" and as_json["correction"] == "holm"
    assert len(as_json["rows"]) == table.height
    assert as_json["rows"][0]["p_value"] == table["p_value"][0]
    from_csv = pl.read_csv(io.StringIO(cmp.to_csv()))
    np.testing.assert_array_equal(from_csv["p_value"].to_numpy(), table["p_value"].to_numpy())
    markdown = cmp.to_markdown()
    assert markdown.count("\n| ") == table.height  # header first, then one line per row
    text = cmp.to_text()
    assert "Paired t-test; Holm correction per measure" in text
    for name in ("map", "ndcg_cut_10", "P_10"):
        assert f"\n{name}\n" in text


def test_latex_marks_best_and_significant_improvements():
    cmp = irm.compare(QRELS, RUNS, ["map"], baseline="bm25")
    tex = cmp.to_latex()
    assert r"\toprule" in tex and r"\bottomrule" in tex
    # dense (b) is significantly better than bm25 (a) on map in these fixtures.
    dense = cmp.table().row(0, named=True)
    assert dense["system"] == "dense" and dense["significant"] and dense["diff"] > 0
    assert r"(b) dense & \textbf{" in tex and r"$^{a}$" in tex
    assert "Holm" in tex and "paired t-test" in tex.lower()


def test_markdown_and_latex_escape_names():
    qrels, a, _ = _small()
    cmp = irm.compare(qrels, {"a|b": a, "x_&%": a}, ["map"])
    assert "a\\|b" in cmp.to_markdown()
    assert r"x\_\&\%" in cmp.to_latex()


def test_identical_systems_are_not_significant():
    cmp = irm.compare(QRELS, {"x": RUNS["bm25"], "y": RUNS["bm25"]}, MEASURES,
                      test="randomization", n_resamples=200)
    table = cmp.table()
    assert table["significant"].to_list() == [False] * 3
    assert table["ties"].to_list() == [50] * 3
    assert (table["p_value"] == 1.0).all()


# -- the command line ----------------------------------------------------------------------------

def test_cli_table_and_formats():
    status, out, err = cli("compare", "--baseline", "bm25.run", QRELS, *RUNS.values())
    assert status == 0, err
    assert "dense.run" in out and "Holm" in out
    for fmt in ("markdown", "latex", "json", "csv"):
        status, out, err = cli("compare", "--format", fmt, "-m", "map", QRELS, *RUNS.values())
        assert status == 0, err
    assert json.loads(cli("compare", "--format", "json", QRELS, *RUNS.values())[1])["rows"]


def test_cli_matches_the_python_api():
    status, out, _ = cli("compare", "--format", "csv", "-m", "map", "--test", "randomization",
                         "--resamples", "300", "--seed", "5", QRELS, *RUNS.values())
    assert status == 0
    api = irm.compare(QRELS, {Path(p).name: p for p in RUNS.values()}, ["map"],
                      test="randomization", n_resamples=300, seed=5)
    assert out == api.to_csv()


def test_cli_reads_trec_eval_q_files(tmp_path):
    paths = []
    for name, path in RUNS.items():
        out = cli("eval", "-q", QRELS, path)[1]
        paths.append(tmp_path / f"{name}.eval")
        paths[-1].write_text(out)
    status, out, err = cli("compare", "--format", "csv", *map(str, paths))
    assert status == 0, err
    table = pl.read_csv(io.StringIO(out))
    # Default measures of -q files: the scores (no num_ret / num_rel counts).
    assert "map" in table["measure"].to_list() and "num_rel" not in table["measure"].to_list()
    status, out, err = cli("compare", "-m", "map", QRELS, RUNS["bm25"], str(paths[1]))
    assert status == 0, err
    status, _, err = cli("compare", str(paths[0]), QRELS)
    assert status == 1 and "every file must be one" in err


def test_cli_gate_exit_status():
    # dense is significantly better than bm25: bm25 as the candidate fails the gate.
    status, _, err = cli("compare", "--baseline", "dense.run", "--fail-if-worse", "-m", "map",
                         QRELS, RUNS["dense"], RUNS["bm25"])
    assert status == 3
    assert "FAIL: 'bm25.run' is significantly worse than baseline 'dense.run' on map" in err
    assert "adjusted p" in err
    status, _, err = cli("compare", "--baseline", "bm25.run", "--fail-if-worse", "-m", "map",
                         QRELS, RUNS["bm25"], RUNS["dense"])
    assert status == 0, err
    # tweak is not significantly different; a margin of 0 fails on any drop, a large one not.
    table = irm.compare(QRELS, {"bm25.run": RUNS["bm25"], "tweak.run": RUNS["tweak"]},
                        ["P.10", "map"], baseline="tweak.run").table()
    drop = table.filter(pl.col("diff") < 0)
    assert drop.height and not drop["significant"].any()
    status, _, err = cli("compare", "--baseline", "tweak.run", "--fail-if-worse", "--margin",
                         "0", "-m", "P.10", "-m", "map", QRELS, RUNS["tweak"], RUNS["bm25"])
    assert status == 3 and "by more than the margin" in err
    status, _, err = cli("compare", "--baseline", "tweak.run", "--fail-if-worse", "--margin",
                         "0.5", "-m", "P.10", "-m", "map", QRELS, RUNS["tweak"], RUNS["bm25"])
    assert status == 0, err


@pytest.mark.parametrize("argv, status, match", [
    (["compare", QRELS, RUNS["bm25"]], 1, "at least two runs"),
    (["compare", "--alpha", "2", QRELS, RUNS["bm25"], RUNS["dense"]], 2, "--alpha"),
    (["compare", "--alpha", "x", QRELS, RUNS["bm25"], RUNS["dense"]], 2, "--alpha"),
    (["compare", "--resamples", "0", QRELS, RUNS["bm25"], RUNS["dense"]], 2, "--resamples"),
    (["compare", "--test", "z", QRELS, RUNS["bm25"], RUNS["dense"]], 1, "invalid choice"),
    (["compare", "--fail-if-worse", QRELS, RUNS["bm25"], RUNS["dense"]], 1, "needs --baseline"),
    (["compare", "--margin", "0.1", "--baseline", "bm25.run", QRELS, RUNS["bm25"],
      RUNS["dense"]], 1, "--margin goes with --fail-if-worse"),
    (["compare", "--baseline", "x.run", QRELS, RUNS["bm25"], RUNS["dense"]], 1,
     "not one of the runs"),
    (["compare", "-m", "mapp", QRELS, RUNS["bm25"], RUNS["dense"]], 1, "unknown measure"),
    (["compare", QRELS, RUNS["bm25"], RUNS["bm25"]], 1, "same file is given twice"),
    (["compare", QRELS, RUNS["bm25"], "/nonexistent.run"], 2, "nonexistent"),
])
def test_cli_errors_are_one_line(argv, status, match):
    got, out, err = cli(*argv)
    assert got == status, err
    assert match in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cli_warns_about_missing_queries():
    status, out, err = cli("compare", "-m", "map", str(FIX / "cli/qrels.txt"),
                           str(FIX / "cli/run_a.txt"), str(FIX / "cli/run_b.txt"))
    assert status == 0
    assert "warning: 1 of 6 queries are not scored for every system" in err


def test_per_query_file_errors(tmp_path):
    bad = tmp_path / "bad.eval"
    bad.write_text("map\t1\t0.5\nmap\t2\tabc\n")
    with pytest.raises(InputFormatError, match=r"bad.eval:2: value of 'map' is not a number"):
        irm.read_per_query(bad)
    bad.write_text("map\t1\t0.5\nmap\t1\t0.25\n")
    with pytest.raises(InputFormatError, match="given twice"):
        irm.read_per_query(bad)
    bad.write_text("map\t1\t0.5\nP_5\t2\t0.25\nmap\t2\t0.1\n")
    with pytest.raises(InputFormatError, match="'P_5' has no value for this query"):
        irm.read_per_query(bad)
    bad.write_text("map\tall\t0.5\nrunid\tall\tx\n")
    with pytest.raises(InputFormatError, match="no per-query lines; write it with -q"):
        irm.read_per_query(bad)
    bad.write_text("runid\tall\tx\nrunid\tall\ty\nmap\t1\t0.5\n")
    with pytest.raises(InputFormatError, match="holds 2 runs"):
        irm.read_per_query(bad)


@pytest.mark.parametrize("test", ["randomization", "bootstrap", "tukey"])
def test_cli_bytes_do_not_depend_on_thread_count(test):
    import os
    import subprocess
    import sys

    argv = [sys.executable, "-m", "irmetrics", "compare", "--format", "json", "--test", test,
            "--resamples", "700", "-m", "map", "-m", "P.10", QRELS, *RUNS.values()]
    outputs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads,
                   MKL_NUM_THREADS=threads, POLARS_MAX_THREADS=threads)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]


def test_docs_worked_example_is_current():
    """docs/compare.md shows the real output of its example commands."""
    doc = (FIX.parent / "docs" / "compare.md").read_text()
    shown = doc.split("prints\n\n```\n", 1)[1].split("\n```", 1)[0]
    status, out, _ = cli("compare", "--baseline", "bm25.run", "-m", "map", "-m", "ndcg_cut.10",
                         QRELS, RUNS["bm25"], RUNS["dense"], RUNS["tweak"])
    assert status == 0 and out.rstrip("\n") == shown
    latex = doc.split("```latex\n", 1)[1].split("\n```", 1)[0]
    cmp = irm.compare(QRELS, RUNS, ["map", "ndcg_cut.10"], baseline="bm25")
    assert cmp.to_latex().rstrip("\n") == latex
    status, _, err = cli("compare", "--baseline", "dense.run", "--fail-if-worse", "-m", "map",
                         QRELS, RUNS["dense"], RUNS["bm25"])
    assert status == 3 and err.strip() in doc


def test_latin1_and_utf8_runs_align_by_bytes(tmp_path):
    # Query 'é' is written in UTF-8 in the qrels and one run, in Latin-1 in the other run.
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes("\u00e9 0 d1 1\n\u00e9 0 d2 0\nq2 0 d3 1\n".encode("utf-8"))
    utf8 = tmp_path / "a.run"
    utf8.write_bytes("\u00e9 Q0 d2 1 2.0 a\n\u00e9 Q0 d1 2 1.0 a\nq2 Q0 d3 1 1.0 a\n"
                     .encode("utf-8"))
    latin1 = tmp_path / "b.run"
    latin1.write_bytes(b"q2 Q0 d3 1 1.0 b\n" + "\u00e9 Q0 d1 1 2.0 b\n".encode("utf-8")
                       + b"x\xe9 Q0 d9 1 1.0 b\n")  # one Latin-1 id: the file is read as bytes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = irm.compare(str(qrels), {"a": str(utf8), "b": str(latin1)}, ["map"])
    assert len(cmp.query_ids) == 2 and cmp.missing_queries == {}
    assert cmp.scores["map"].tolist() == [[1.0, 0.5], [1.0, 1.0]]  # queries q2, then é
