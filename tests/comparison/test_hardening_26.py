"""Issue 26: nothing silent, no crash -- the comparison, the report, columnar inputs and
Spark, tried as a new user would. One test (or a few) per numbered item of the issue;
items 3 and the ir_measures part of 9 belong to the ir_measures drop-in.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import sys
import tomllib
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics import stats
from irmetrics.cli import main
from irmetrics.exceptions import (DegenerateTestWarning, InputFormatError, NoQueriesError,
                                  ParameterError, ShapeError, brief_repr)
from irmetrics.io.per_query import PerQueryScores

ROOT = Path(__file__).resolve().parents[2]
CMP = ROOT / "fixtures" / "compare"
QRELS = str(CMP / "qrels.txt")
RUNS = {name: str(CMP / f"{name}.run") for name in ("bm25", "dense", "tweak")}


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        status = main([str(a) for a in argv])
    finally:
        sys.stdout, sys.stderr = old
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue()
    return status, out.getvalue(), err.getvalue()


def scores(values, name, measure="map"):
    ids = np.array([f"q{i:03d}" for i in range(len(values))], dtype=object)
    return PerQueryScores(ids, {measure: np.asarray(values, dtype=np.float64)}, name, name)


def quiet_compare(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.compare(*args, **kwargs)


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8", newline="")
    return str(path)


@pytest.fixture
def p_at_1_drops(tmp_path):
    """The issue's CI gate: 3 queries where P@1 goes 1 -> 0 on each."""
    qrels = write(tmp_path / "q.txt", "q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    main_run = write(tmp_path / "main.run", "".join(f"q{i} Q0 d{i} 1 1 main\n" for i in (1, 2, 3)))
    pr_run = write(tmp_path / "pr.run", "".join(f"q{i} Q0 x 1 2 pr\nq{i} Q0 d{i} 2 1 pr\n"
                                                for i in (1, 2, 3)))
    return qrels, main_run, pr_run


# -- 1. degenerate tests are not starred, and say so -----------------------------------------

@pytest.mark.parametrize("test", ["t", "bootstrap", "randomization", "tukey"])
def test_gate_on_three_constant_differences_does_not_fail_and_says_why(p_at_1_drops, test):
    qrels, main_run, pr_run = p_at_1_drops
    status, out, err = cli("compare", "--test", test, "--baseline", main_run, "--fail-if-worse",
                           "-m", "P.1", qrels, main_run, pr_run)
    assert status == 0, err
    assert "-1.0000!" in out and "-1.0000*" not in out
    assert "too few queries" in out and "! not decided by the test" in out
    assert "warning:" in err and "not marked significant" in err
    assert "cannot decide it" in err and "not counted as a failure" in err
    if test in ("t", "bootstrap"):
        assert "zero variance" in out and "--test randomization" in err


def test_degenerate_rows_keep_scipys_numbers_but_lose_the_star():
    a, b = [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]
    with pytest.warns(DegenerateTestWarning, match="variance of zero") as caught:
        cmp = irm.compare(None, {"main": scores(a, "main"), "pr": scores(b, "pr")}, "map",
                          baseline="main")
    row = cmp.table().row(0, named=True)
    want = scipy.stats.ttest_rel(b, a)
    assert row["statistic"] == want.statistic == -np.inf
    assert row["p_value"] == want.pvalue == 0.0 and row["effect_size"] == -np.inf
    assert not row["significant"] and row["caveat"] == "zero variance; too few queries"
    assert cmp.regressions() == []
    assert any("randomization" in str(w.message) for w in caught)
    assert cmp.notes and all(isinstance(n, str) for n in cmp.notes)
    data = json.loads(cmp.to_json())
    assert data["rows"][0]["caveat"] == "zero variance; too few queries" and data["notes"]
    assert "no (zero variance; too few queries)" in cmp.to_markdown()
    assert "No significance is claimed where the test cannot decide" in cmp.to_latex()


def test_constant_difference_on_many_queries_is_left_to_the_randomization_test():
    a, b = np.ones(40), np.zeros(40)
    runs = {"main": scores(a, "main"), "pr": scores(b, "pr")}
    t_row = quiet_compare(None, runs, "map", baseline="main").table().row(0, named=True)
    assert t_row["caveat"] == "zero variance" and not t_row["significant"]
    rand = quiet_compare(None, runs, "map", baseline="main", test="randomization")
    row = rand.table().row(0, named=True)
    assert row["caveat"] is None and row["significant"] and len(rand.regressions()) == 1


def test_bootstrap_on_two_queries_is_not_significant():
    runs = {"a": scores([0.5, 0.9], "a"), "b": scores([0.1, 0.2], "b")}
    row = quiet_compare(None, runs, "map", test="bootstrap").table().row(0, named=True)
    assert not row["significant"] and "too few queries" in row["caveat"]


def test_exact_randomization_that_cannot_reach_alpha_says_so():
    # n = 5: the exact test's smallest two-sided p-value is 2/32 > 0.05.
    runs = {"a": scores([0.1, 0.2, 0.3, 0.4, 0.5], "a"), "b": scores([0.9, 0.8, 0.7, 0.6, 0.55], "b")}
    with pytest.warns(DegenerateTestWarning, match="too few queries differ"):
        cmp = irm.compare(None, runs, "map", test="randomization")
    row = cmp.table().row(0, named=True)
    assert row["p_value"] == pytest.approx(2 / 32) and row["caveat"] == "too few queries"


def test_t_star_on_four_differing_queries_of_fifty_is_withheld():
    base = np.linspace(0.2, 0.8, 50)
    other = base.copy()
    other[:4] -= 0.1
    runs = {"a": scores(base, "a"), "b": scores(other, "b")}
    row = quiet_compare(None, runs, "map", baseline="a").table().row(0, named=True)
    assert row["p_value"] < 0.05                     # the t test alone would star it
    assert not row["significant"] and row["caveat"] == "too few queries"


def test_no_caveat_where_the_data_allow_a_decision():
    cmp = irm.compare(QRELS, RUNS, ["map", "P.10"], baseline="bm25")
    # P_10 tweak vs bm25: 4 of 50 queries differ, p = 1: nothing to flag.
    assert cmp.table()["caveat"].null_count() == cmp.table().height
    assert "!" not in cmp.to_text().split("\n* ")[0]


def test_too_few_resamples_to_reach_alpha():
    runs = {"a": scores(np.linspace(0, 1, 30), "a"), "b": scores(np.linspace(0, 1, 30) ** 2, "b")}
    row = quiet_compare(None, runs, "map", test="bootstrap", n_resamples=10).table().row(0, named=True)
    assert row["caveat"] == "too few resamples" and not row["significant"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0]), min_size=1, max_size=9))
def test_smallest_p_value_bounds_the_exact_sign_flip_test(d):
    # By enumeration of every sign flip: no p-value of the exact test is below the floor,
    # and all-equal non-zero differences reach it.
    d = np.asarray(d)
    res = stats.paired_test(d, np.zeros_like(d), test="randomization")
    observed = abs(d.sum())
    flips = [abs(np.dot(s, d)) >= observed - 1e-12 for s in itertools.product((1, -1), repeat=len(d))]
    assert res.p_value == pytest.approx(np.mean(flips))
    m = int(np.count_nonzero(d))
    assert res.min_p_value == stats.smallest_p_value(m) == min(1.0, 2.0 ** (1 - m))
    assert res.p_value >= res.min_p_value - 1e-12
    if m and np.all(d == d[0]):
        assert res.p_value == pytest.approx(res.min_p_value)
        assert res.zero_variance == (len(d) > 1)


def test_paired_test_flags_zero_variance_without_changing_p_values():
    a = np.array([[0.5, 0.5], [0.25, 0.75], [0.75, 0.25]])
    b = a - np.array([0.125, 0.0])
    b[:, 1] = [0.4, 0.8, 0.1]
    res = stats.paired_test(a, b)
    assert res.zero_variance.tolist() == [True, False]
    assert res.p_value[0] == 0.0
    assert res.p_value[1] == pytest.approx(scipy.stats.ttest_rel(a[:, 1], b[:, 1]).pvalue)


def test_report_repeats_warnings_and_marks_undecided_rows():
    pytest.importorskip("matplotlib")
    runs = {"main": scores([1.0, 1.0, 1.0], "main"), "pr": scores([0.0, 0.0, 0.0], "pr"),
            "other": scores([0.0, 0.0, 0.0], "other")}
    cmp = quiet_compare(None, runs, "map")
    page = cmp.to_html()
    assert "<h2>Warnings</h2>" in page and "variance of zero" in page
    assert 'class="undecided"' in page and 'class="num sig-cell"' not in page
    assert "not adjusted for multiple comparisons" in page


# -- 2. never write over an input; write atomically -----------------------------------------

def test_output_over_an_input_is_refused_and_the_input_untouched(tmp_path):
    victim = tmp_path / "victim.run"
    victim.write_bytes(Path(RUNS["dense"]).read_bytes())
    before = victim.read_bytes()
    for target in (victim, tmp_path / "." / "victim.run", QRELS):
        status, out, err = cli("compare", "-o", target, "-m", "map", QRELS, RUNS["bm25"], victim)
        assert status == 2 and "other than the inputs" in err and out == ""
    link = tmp_path / "link.run"
    link.symlink_to(victim)
    status, _, err = cli("compare", "-o", link, "-m", "map", QRELS, RUNS["bm25"], victim)
    assert status == 2 and "other than the inputs" in err
    assert victim.read_bytes() == before
    # -q evaluation files and NAME=PATH runs are inputs too.
    status, _, err = cli("compare", "-o", victim, "-m", "map", QRELS, RUNS["bm25"], f"V={victim}")
    assert status == 2 and victim.read_bytes() == before


def test_html_report_refuses_to_overwrite_a_run(tmp_path):
    pytest.importorskip("matplotlib")
    victim = tmp_path / "dense.run"
    victim.write_bytes(Path(RUNS["dense"]).read_bytes())
    cmp = irm.compare(QRELS, {"bm25": RUNS["bm25"], "dense": str(victim)}, "map")
    with pytest.raises(ParameterError, match="other than the inputs"):
        cmp.to_html(victim)
    assert victim.read_bytes() == Path(RUNS["dense"]).read_bytes()
    assert "run 'dense'" in cmp.sources and "qrels" in cmp.sources


def test_failed_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    from irmetrics.io import output

    target = tmp_path / "table.txt"
    target.write_text("old table\n")
    os.chmod(target, 0o640)

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.os, "replace", broken)
    status, _, err = cli("compare", "-o", target, "-m", "map", QRELS, RUNS["bm25"], RUNS["dense"])
    assert status == 2 and "cannot write" in err and "No space left" in err
    assert target.read_text() == "old table\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.txt"]  # no temporary left
    monkeypatch.undo()
    status, _, _ = cli("compare", "-o", target, "-m", "map", QRELS, RUNS["bm25"], RUNS["dense"])
    assert status == 0 and target.read_text().startswith("Paired t-test")
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)  # the file keeps its mode


# -- 4. --run-columns / --qrels-columns on TREC text ---------------------------------------

def test_columns_for_trec_text_are_refused_not_ignored():
    status, _, err = cli("eval", "--run-columns", "x,y,z", "-m", "map", QRELS, RUNS["bm25"])
    assert status == 1 and "--run-columns" in err and "TREC text" in err
    status, _, err = cli("eval", "--qrels-columns", "x,y,z", "-m", "map", QRELS, RUNS["bm25"])
    assert status == 1 and "--qrels-columns" in err
    with pytest.raises(ParameterError, match="run_columns"):
        irm.evaluate(QRELS, RUNS["bm25"], ["map"], run_columns="x,y,z")
    with pytest.raises(ParameterError, match="qrels_columns"):
        irm.evaluate(QRELS, RUNS["bm25"], ["map"], qrels_columns="x,y,z")


# -- 5. control characters in names -----------------------------------------------------------

def test_newline_in_a_file_name_stays_on_its_row(tmp_path):
    odd = tmp_path / "bm\n25\x1b[31m.run"
    odd.write_bytes(Path(RUNS["bm25"]).read_bytes())
    status, out, _ = cli("compare", "-m", "map", QRELS, odd, RUNS["dense"])
    assert status == 0 and "\x1b" not in out
    rows = [line for line in out.splitlines() if "dense.run" in line]
    assert len(rows) == 1 and "bm\\n25\\x1b[31m.run" in rows[0]
    cmp = irm.compare(QRELS, {"a\nb": RUNS["bm25"], "c": RUNS["dense"]}, "map")
    for text in (cmp.to_markdown(), cmp.to_latex()):
        assert "a\nb" not in text


# -- 6. empty columnar runs ---------------------------------------------------------------------

def test_empty_parquet_and_empty_lazyframe_are_runs_without_queries(tmp_path):
    path = tmp_path / "empty.parquet"
    pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}).write_parquet(path)
    lazy = pl.LazyFrame({"query_id": ["401"], "doc_id": ["d"], "score": [1.0]}).filter(pl.col("score") > 5)
    for run in (str(path), lazy):
        with pytest.raises(NoQueriesError, match="the run has no query"):
            irm.evaluate(QRELS, run, ["map"])
        with pytest.raises(NoQueriesError):
            irm.Evaluator(QRELS, ["map"]).evaluate(run)
        assert irm.evaluate(QRELS, run, ["map"], complete=True).aggregate() == {"map": 0.0}
    status, _, err = cli("eval", "-m", "map", QRELS, path)
    assert status == 7 and "no query" in err


# -- 7 and 13. Spark ----------------------------------------------------------------------------

class _FakeContext:
    def __init__(self, master="local[2]", python="python3", conf=None):
        self.master, self.pythonExec, self._conf = master, python, conf or {}

    def getConf(self):
        return self

    def get(self, key, default=None):
        return self._conf.get(key, default)


class _FakeSession:
    def __init__(self, context):
        self.sparkContext = context


def test_local_spark_workers_run_the_drivers_python_unless_chosen(monkeypatch):
    pytest.importorskip("pyspark")
    from irmetrics.spark.partitioned import _workers_python

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    context = _FakeContext()
    with _workers_python(_FakeSession(context)) as python:
        assert python == sys.executable == context.pythonExec
    assert context.pythonExec == "python3"  # put back after the job
    for chosen in (_FakeContext(python="/opt/py/bin/python"),
                   _FakeContext(conf={"spark.pyspark.python": "/opt/py/bin/python"}),
                   _FakeContext(master="yarn")):
        before = chosen.pythonExec
        with _workers_python(_FakeSession(chosen)) as python:
            assert python == before == chosen.pythonExec
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py/bin/python")
    context = _FakeContext()
    with _workers_python(_FakeSession(context)):
        assert context.pythonExec == "python3"


def test_spark_names_what_workers_cannot_import_and_refuses_array_ids(spark, tmp_path):
    import irmetrics.spark as irm_spark

    qrels = spark.createDataFrame([("q1", "d1", 1)], ["query_id", "doc_id", "relevance"])
    run = spark.createDataFrame([("q1", "d1", 0.3)], ["query_id", "doc_id", "score"])
    arrays = spark.createDataFrame([(["q1"], "d1", 1)], ["query_id", "doc_id", "relevance"])
    with pytest.raises(InputFormatError, match="'query_id' must hold strings or integers.*array<string>"):
        irm_spark.evaluate(arrays, run, ["map"])
    # An interpreter without site-packages: the workers cannot import numpy.
    bare = tmp_path / "bare-python"
    bare.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    bare.chmod(0o755)
    context = spark.sparkContext
    before = context.pythonExec
    context.pythonExec = str(bare)
    try:
        with pytest.raises(ImportError, match=r"workers' Python \(.*bare-python\) cannot import"):
            irm_spark.evaluate(qrels, run, ["map"])
    finally:
        context.pythonExec = before
    assert irm_spark.evaluate(qrels, run, ["map"]).aggregate() == {"map": 1.0}


def test_feather_v1_is_named(tmp_path):
    feather = pytest.importorskip("pyarrow.feather")
    import pyarrow as pa

    path = tmp_path / "run.feather"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        feather.write_feather(pa.table({"query_id": ["401"], "doc_id": ["d"], "score": [1.0]}),
                              str(path), version=1)
    with pytest.raises(InputFormatError, match="Feather version 1.*Arrow IPC"):
        irm.evaluate(QRELS, str(path), ["map"])


# -- 8. huge -N -----------------------------------------------------------------------------------

def test_huge_number_of_documents_is_a_parameter_error():
    status, _, err = cli("eval", "-N", "1" + "0" * 30, "-m", "utility.1,-1,0,0", QRELS, RUNS["bm25"])
    assert status == 2 and "`-N`" in err
    with pytest.raises(ParameterError, match="num_docs_in_coll"):
        irm.evaluate(QRELS, RUNS["bm25"], ["utility"], num_docs_in_coll=10**30)
    status, _, err = cli("eval", "-M", "9" * 5000, "-m", "map", QRELS, RUNS["bm25"])
    assert status == 2 and len(err) < 400
    status, out, _ = cli("eval", "-m", "P." + "1" * 5000, QRELS, RUNS["bm25"])
    assert status == 0 and "P_9223372036854775807" in out  # atol saturates, as in C


# -- 9. pandas text columns, empty frames --------------------------------------------------------

def test_text_score_column_says_how_to_cast():
    pd = pytest.importorskip("pandas")
    run = pd.DataFrame({"query_id": ["401", "401"], "doc_id": ["a", "b"], "score": ["0.5", "0.3"]})
    with pytest.raises(InputFormatError, match=r"holds text.*astype\(float\)"):
        irm.evaluate(QRELS, run, ["map"])
    qrels = pd.DataFrame({"query_id": ["401"], "doc_id": ["a"], "relevance": ["1"]})
    with pytest.raises(InputFormatError, match=r"holds text.*astype\(int\)"):
        irm.evaluate(qrels, {"401": {"a": 1.0}}, ["map"])


def test_empty_frames_say_there_is_no_query():
    pd = pytest.importorskip("pandas")
    empty_run = pd.DataFrame({"query_id": [], "doc_id": [], "score": []})
    with pytest.raises(NoQueriesError, match="the run has no query"):
        irm.evaluate(QRELS, empty_run, ["map"])
    for empty_qrels in (pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}),
                        pl.DataFrame({"query_id": [], "doc_id": [], "relevance": []})):
        with pytest.raises(NoQueriesError, match="the qrels have no query"):
            irm.evaluate(empty_qrels, RUNS["bm25"], ["map"])


# -- 10. compare's inputs ---------------------------------------------------------------------------

def test_compare_names_empty_and_unrecognised_files(tmp_path):
    a = write(tmp_path / "a.eval", "map\tq1\t0.5\nmap\tq2\t0.25\n")
    b = write(tmp_path / "b.eval", "map\tq1\t0.4\nmap\tq2\t0.35\n")
    empty = write(tmp_path / "empty.txt", "")
    status, _, err = cli("compare", a, empty, b)
    assert status == 2 and "empty.txt: empty" in err
    g1, g2 = write(tmp_path / "g1", "a b\nc d\n"), write(tmp_path / "g2", "x y\n")
    status, _, err = cli("compare", g1, g2)
    assert status == 1 and "g1: its first data line has 2 fields" in err
    assert "at least two runs" not in err
    status, _, err = cli("compare", RUNS["bm25"], RUNS["dense"], RUNS["tweak"])
    assert status == 1 and "this is a run (6 fields)" in err and "qrels" in err


def test_friendly_names_find_trec_eval_names_in_q_files(tmp_path):
    files = []
    for name in ("bm25", "dense"):
        status, out, _ = cli("eval", "-q", "-m", "ndcg_cut.10", "-m", "map", QRELS, RUNS[name])
        files.append(write(tmp_path / f"{name}.eval", out))
    friendly = cli("compare", "-m", "nDCG@10", "-m", "AP", *files)
    trec = cli("compare", "-m", "ndcg_cut.10", "-m", "map", *files)
    assert friendly[0] == 0 and friendly[1] == trec[1]
    status, _, err = cli("compare", "-m", "nDCG@5", *files)  # not in the files: refused
    assert status == 4 and "nDCG@5" in err


# -- 11. adapters --------------------------------------------------------------------------------------

def test_adapters_name_iterators_and_text():
    with pytest.raises(ParameterError, match="iterator"):
        irm.adapters.from_matrix((row for row in [[1.0, 2.0]]), [[1, 0]])
    with pytest.raises(ParameterError, match="got text"):
        irm.adapters.from_matrix(np.array([["a", "b"]], dtype=object), [[1, 0]])
    with pytest.raises(ParameterError, match="got text"):
        irm.adapters.from_flat(["0.5", "0.1"], [1, 0], [0, 0])
    with pytest.raises(ParameterError, match=r"None \(NoneType\) at index \(0,\)"):
        irm.adapters.from_flat([None, 1.0], [1, 0], [0, 0])
    with pytest.raises(ShapeError, match="ragged"):
        irm.adapters.from_matrix([[1.0, 2.0], [3.0]], [[1, 0], [1]])


# -- 12. long ids are cut in messages -------------------------------------------------------------

def test_a_one_megabyte_query_id_is_not_echoed_whole(tmp_path):
    big = "q" * (1 << 20)
    with pytest.raises(InputFormatError) as info:
        irm.evaluate({big: {"d": 1}}, {big: {"d": float("nan")}}, ["map"])
    assert len(str(info.value)) < 400 and "1,048,576 characters" in str(info.value)
    run = write(tmp_path / "big.run", f"{big} Q0 d1 1 nan r\n")
    status, _, err = cli("eval", "-m", "map", QRELS, run)
    assert status == 2 and len(err) < 400
    with pytest.warns(irm.exceptions.MissingQueriesWarning) as caught:
        irm.evaluate({big: {"d": 1}, "x": {"d": 1}}, {"x": {"d": 1.0}}, ["map"])
    assert len(str(caught[0].message)) < 400
    assert brief_repr("q1") == "'q1'"


# -- 14. system names ---------------------------------------------------------------------------------

def test_name_equals_path_names_runs_everywhere(tmp_path):
    argv = ["-m", "map", "--baseline", "BM25", QRELS, f"BM25={RUNS['bm25']}",
            f"Dense (v2)={RUNS['dense']}"]
    status, out, _ = cli("compare", *argv)
    assert status == 0 and "Dense (v2)  BM25" in out and "bm25.run" not in out
    status, out, _ = cli("compare", "--format", "latex", *argv)
    assert "(a) BM25" in out and "(b) Dense (v2)" in out
    # --baseline also takes the file name of a named run.
    status, out2, _ = cli("compare", "-m", "map", "--baseline", "bm25.run", QRELS,
                          f"BM25={RUNS['bm25']}", f"Dense (v2)={RUNS['dense']}")
    assert status == 0 and out2 == cli("compare", *argv)[1]
    for bad, message in (([QRELS, f"={RUNS['bm25']}", RUNS["dense"]], "needs a name"),
                         ([f"Q={QRELS}", RUNS["bm25"], RUNS["dense"]], "qrels take no name"),
                         ([QRELS, f"A={RUNS['bm25']}", f"A={RUNS['dense']}"], "two runs are named 'A'")):
        status, _, err = cli("compare", "-m", "map", *bad)
        assert status == 1 and message in err
    # A file whose name holds '=' is still a file.
    odd = tmp_path / "k1=0.9.run"
    odd.write_bytes(Path(RUNS["bm25"]).read_bytes())
    status, out, _ = cli("compare", "-m", "map", QRELS, odd, RUNS["dense"])
    assert status == 0 and "k1=0.9.run" in out


# -- 15. the report at scale -----------------------------------------------------------------------------

def test_system_colours_never_repeat():
    pytest.importorskip("matplotlib")
    from irmetrics import plot

    assert plot.system_colours(8) == list(plot.SYSTEM_COLOURS)
    for n in (9, 17, 20, 60):
        colours = plot.system_colours(n)
        assert len(set(colours)) == n
    rgb = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in plot.system_colours(20)])
    distance = np.sqrt(((rgb[:, None] - rgb[None]) ** 2).sum(-1)) + np.eye(20) * 1e9
    assert distance.min() > 20


def _many_systems(n_systems=20, n_queries=200, seed=1):
    rng = np.random.default_rng(seed)
    return {f"r{k + 1:02d}": scores(rng.choice([0.0, 1.0, 0.5], size=n_queries, p=[0.5, 0.35, 0.15]),
                                    f"r{k + 1:02d}", "recip_rank") for k in range(n_systems)}


def test_report_at_scale_colours_scales_and_discrete_values():
    pytest.importorskip("matplotlib")
    from irmetrics import plot

    cmp = quiet_compare(None, _many_systems(), "recip_rank", baseline="r01")
    page = cmp.to_html()
    swatches = [line.split("background:")[1][:7] for line in page.split('class="swatch"')[1:]]
    assert len(swatches) == 20 and len(set(swatches)) == 20
    fig = plot.per_query_differences(cmp, pairs=[("r02", "r01"), ("r03", "r01")])
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim()
    assert "Every panel has the same y-scale" in page
    # Mostly 0/1 values: discs sized by share, not a box plot.
    assert plot.discrete_values(cmp.scores["recip_rank"]).tolist() == [0.0, 0.5, 1.0]
    fig = plot.score_distributions(cmp)
    assert "share of queries" in fig.axes[0].get_title(loc="left")
    assert any(t.get_text().endswith("%") for t in fig.axes[0].texts)
    assert "its area the share of the system" in page
    continuous = quiet_compare(QRELS, RUNS, "map")
    assert "diamond: mean" in plot.score_distributions(continuous).axes[0].get_title(loc="left")


def test_footnote_says_intervals_are_unadjusted():
    cmp = irm.compare(QRELS, RUNS, "map", baseline="bm25")
    for text in (cmp.to_text(), cmp.to_markdown()):
        assert "the confidence intervals are not adjusted for multiple comparisons" in text
    none = irm.compare(QRELS, RUNS, "map", baseline="bm25", correction="none")
    assert "not adjusted" not in none.to_text()


# -- 16. pandas where PySpark is: 2 or 3 (issue 36 lifted the cap after the suite passed
# with pandas 3.1.1 and PySpark 4.3.0) ------------------------------------------------------------------

def test_spark_and_test_extras_name_pandas_without_a_cap():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    for extra in ("spark", "test"):
        pins = [d for d in extras[extra] if d.replace(" ", "").startswith("pandas")]
        assert pins and all(">=2.0" in p and "<" not in p for p in pins), (extra, pins)


def test_cli_campaign_inputs_never_crash(tmp_path):
    """A few of the campaign's odd inputs at once: each is a clear error or an answer."""
    empty = write(tmp_path / "empty.run", "")
    garbage = write(tmp_path / "garbage.bin", "\x00\x01\x02 \x03\n")
    cases = [
        ("compare", QRELS, RUNS["bm25"]),
        ("compare", "-m", "map", QRELS, RUNS["bm25"], empty),
        ("compare", "-m", "map", QRELS, RUNS["bm25"], garbage),
        ("compare", "-m", "map", "--alpha", "nan", QRELS, RUNS["bm25"], RUNS["dense"]),
        ("compare", "-m", "map", "--resamples", "0", QRELS, RUNS["bm25"], RUNS["dense"]),
        ("compare", "-m", "gm_map", QRELS, RUNS["bm25"], RUNS["dense"]),
        ("compare", "-m", "map", "-o", tmp_path, QRELS, RUNS["bm25"], RUNS["dense"]),
        ("compare", "-m", "map", "--baseline", "nope", QRELS, RUNS["bm25"], RUNS["dense"]),
        ("eval", "-m", "map", QRELS, tmp_path / "missing.parquet"),
    ]
    for argv in cases:
        status, _, err = cli(*argv)
        assert status in (1, 2, 4, 7) and err.startswith("irmetrics"), (argv, err)
        assert math.isfinite(status)


def test_docs_degenerate_example_is_current(p_at_1_drops, monkeypatch):
    """docs/compare.md shows the real table of its three-query example."""
    doc = (ROOT / "docs" / "compare.md").read_text()
    section = doc.split("### When the test cannot decide", 1)[1]
    shown = section.split("```\nP_1\n", 1)[1].split("\n```", 1)[0]
    shown = "P_1\n" + shown
    qrels, _, _ = p_at_1_drops
    monkeypatch.chdir(Path(qrels).parent)
    status, out, _ = cli("compare", "--baseline", "main.run", "--fail-if-worse", "-m", "P.1",
                         "q.txt", "main.run", "pr.run")
    assert status == 0 and shown in out
