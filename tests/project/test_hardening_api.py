"""Issue 16, output side: nothing skipped silently, machine formats that keep every row,
a strict ``-Z``, a ``validate`` that cannot pass without comparing, truthful help.

Every test uses the issue's inputs, and the query-set bookkeeping is checked against a
plain set computation on hypothesis-generated query sets, on every evaluation road
(dict, Run table, chunked run file, adapter pair, preferences, judgment groups).
"""

from __future__ import annotations

import csv
import io
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.cli import main
from irmetrics.crosscheck import crosscheck
from irmetrics.engine.pack import encode_qrels, pack
from irmetrics.exceptions import (InputFormatError, IrMetricsWarning, MissingQueriesWarning,
                                  NoQueriesError, ParameterError)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "example"
FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def run_cli(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


# -- item 2: the Python API says which queries it skipped ---------------------------------

def test_example_missing_query_is_reported_with_a_named_warning():
    with pytest.warns(MissingQueriesWarning, match="'304'") as record:
        res = irm.evaluate(EXAMPLE / "qrels.txt", EXAMPLE / "run.txt", ["map"])
    assert issubclass(MissingQueriesWarning, IrMetricsWarning)
    assert issubclass(IrMetricsWarning, UserWarning)
    assert res.missing_query_ids.tolist() == ["304"]
    assert res.ignored_query_ids.tolist() == ["305"]
    assert "304" not in res.query_ids.tolist()
    # attributed to the caller's line, not to irmetrics' internals
    assert record[0].filename == __file__


def test_complete_evaluates_missing_queries_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingQueriesWarning)
        res = irm.evaluate(EXAMPLE / "qrels.txt", EXAMPLE / "run.txt", ["map"], complete=True)
    assert res.missing_query_ids.tolist() == []
    assert "304" in res.query_ids.tolist()


def test_no_common_query_is_an_error_not_nan():
    # issue: {'map': nan}
    with pytest.raises(NoQueriesError, match=r"run queries: 'x'; qrels queries: 'q'"):
        irm.evaluate({"q": {"d": 1}}, {"x": {"d": 1.0}}, ["map"])
    assert issubclass(NoQueriesError, ValueError)


def test_empty_measures_is_a_parameter_error():
    # issue: {} for measures=[]
    with pytest.raises(ParameterError, match="`measures` must be at least one measure"):
        irm.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, [])
    with pytest.raises(ParameterError):
        irm.Evaluator({"q": {"d": 1}}, []).evaluate({"q": {"d": 1.0}})


def test_empty_adapter_input_is_not_a_nan_mean():
    # issue: NaN for empty adapter inputs
    qrels, run = irm.adapters.from_matrix(np.zeros((0, 3)), np.zeros((0, 3)))
    with pytest.raises((NoQueriesError, ParameterError)):
        irm.evaluate(qrels, run, ["map"])


def _roads(tmp_path, qrels: dict, run: dict):
    """The same run through each evaluation road."""
    lines = [f"{q} Q0 {d} 0 {s!r} t\n" for q, docs in run.items() for d, s in docs.items()]
    roads = {"dict": run, "Run": irm.Run.from_dict(run)}
    if lines:  # a file cannot express a run of empty rankings
        roads["file"] = write(tmp_path / "run.txt", "".join(lines))
    return roads


QUERIES = st.sets(st.sampled_from(["1", "2", "10", "all", "a|b", "é"]), max_size=5)


@FAST
@given(judged=QUERIES, retrieved=QUERIES, complete=st.booleans())
def test_query_set_bookkeeping_matches_set_arithmetic(tmp_path, judged, retrieved, complete):
    qrels = {q: {"d1": 1, "d2": 0} for q in judged}
    run = {q: {"d1": 0.5, "d2": 1.5} for q in retrieved}
    if not qrels:
        return  # an empty qrels table is refused by its reader (harden-engine's item)
    missing = [] if complete else sorted(judged - retrieved, key=str.encode)
    ignored = sorted(retrieved - judged, key=str.encode)
    evaluated = judged if complete else judged & retrieved
    for road, value in _roads(tmp_path, qrels, run).items():
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            try:
                res = irm.evaluate(qrels, value, ["map", "P.1"], complete=complete)
            except NoQueriesError:
                assert not evaluated, road
                continue
        assert evaluated, road
        assert res.missing_query_ids.tolist() == missing, road
        assert res.ignored_query_ids.tolist() == ignored, road
        assert sorted(res.query_ids.tolist(), key=str.encode) == sorted(evaluated, key=str.encode)
        warned = [w for w in record if issubclass(w.category, MissingQueriesWarning)]
        assert len(warned) == (1 if missing else 0), road


def test_adapter_pair_reports_what_the_string_road_reports():
    # from_neighbours: the second query retrieved nothing, so it has qrels but no ranking
    qrels, run = irm.adapters.from_neighbours([[1, 2], []], [[1], [3]])
    with pytest.warns(MissingQueriesWarning, match="'q1'"):
        res = irm.evaluate(qrels, run, ["map"])
    assert res.missing_query_ids.tolist() == ["q1"] and res.ignored_query_ids.tolist() == []
    for complete in (False, True):
        direct = irm.adapters.to_ranked(qrels, run, complete=complete)
        string = pack(encode_qrels(qrels.df), run.df, complete=complete)
        for field in ("missing_query_ids", "ignored_query_ids"):
            assert getattr(direct, field).tolist() == getattr(string, field).tolist()


def test_prefs_and_judgment_groups_report_skipped_queries():
    prefs = irm.Prefs.from_records([("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0),
                                    ("r", "u", "s", "a", 1), ("r", "u", "s", "b", 0)])
    with pytest.warns(MissingQueriesWarning, match="'r'"):
        res = irm.evaluate_prefs(prefs, {"q": {"a": 1.0}, "z": {"a": 1.0}}, ["prefs_simp"])
    assert res.missing_query_ids.tolist() == ["r"]
    assert res.ignored_query_ids.tolist() == ["z"]
    with pytest.raises(NoQueriesError):
        irm.evaluate_prefs(prefs, {"z": {"a": 1.0}}, ["prefs_simp"])
    jg = irm.JudgmentGroups.from_records([("q", "u1", "a", 1), ("r", "u1", "b", 1)])
    with pytest.warns(MissingQueriesWarning, match="'r'"):
        res = irm.evaluate_jg(jg, {"q": {"a": 2.0}}, ["map_avgjg"])
    assert res.missing_query_ids.tolist() == ["r"]
    with pytest.raises(NoQueriesError):
        irm.evaluate_jg(jg, {"z": {"a": 2.0}}, ["map_avgjg"])


@pytest.mark.parametrize("qrels, run, measures", [
    ({"q": {"d": 1}}, {"x": {"d": 1.0}}, {"map"}),          # nothing in common
    ({"q": {"d": 1}}, {"q": {"d": 1.0}}, set()),            # no measure
    ({"q": {"d": 1}, "z": {"d": 1}}, {"q": {"d": 1.0}}, {"map", "P.1"}),  # z missing
])
def test_pytrec_eval_drop_in_stays_silent_and_equal(qrels, run, measures):
    from irmetrics.compat.pytrec_eval import RelevanceEvaluator

    with warnings.catch_warnings():
        warnings.simplefilter("error", IrMetricsWarning)
        got = RelevanceEvaluator(qrels, measures).evaluate(run)
    assert got == pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def test_per_query_leaves_bookkeeping_rows_out_unless_asked():
    res = irm.evaluate(EXAMPLE / "qrels.txt", EXAMPLE / "run.txt", ["official"], complete=True)
    default = res.per_query()
    assert not set(default["measure"]) & {"runid", "num_q"}
    assert "map" in set(default["measure"])
    full = res.per_query(include_bookkeeping=True)
    assert set(full["measure"]) - set(default["measure"]) == {"runid", "num_q"}
    with pytest.raises(ParameterError, match="include_bookkeeping"):
        res.per_query(include_bookkeeping="no")


def test_values_of_an_output_not_computed_is_a_parameter_error():
    res = irm.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["P.5"])
    with pytest.raises(ParameterError, match="'P_5'.*got 'P_10'"):
        res.values("P_10")


def test_cli_warning_and_exit_7_come_from_the_library(tmp_path, capsys):
    status, out, err = run_cli(capsys, "eval", "-m", "map", str(EXAMPLE / "qrels.txt"),
                               str(EXAMPLE / "run.txt"))
    assert status == 0 and err.count("\n") == 1 and "'304'" in err
    assert "MissingQueriesWarning" not in err  # the library's warning is not printed twice
    qrels = write(tmp_path / "q", "1 0 a 1\n2 0 b 1\n")
    run = write(tmp_path / "r", "q1 Q0 a 1 1.0 t\n")
    status, out, err = run_cli(capsys, "eval", qrels, run)
    assert status == 7 and out == ""
    assert "no query id in common" in err and "'q1'" in err and "'1'" in err
    status, out, err = run_cli(capsys, "eval", "--strict", qrels, run)
    assert status == 4 and err == "trec_eval: result qid '1' not found in qrels\n"


# -- item 4: machine-readable formats keep every row ---------------------------------------

@pytest.fixture
def odd_ids(tmp_path):
    """A query called ``all``, a ``|`` in an id, and two runs with the same tag."""
    qrels = write(tmp_path / "qrels", "1 0 a 1\nall 0 b 1\nx|y 0 c 1\n")
    run_a = write(tmp_path / "a.run", "1 Q0 a 1 1.0 t\nall Q0 b 1 0.5 t\nall Q0 a 2 0.9 t\n"
                                      "x|y Q0 c 1 1 t\n")
    run_b = write(tmp_path / "b.run", "1 Q0 z 1 1.0 t\nall Q0 b 1 0.5 t\nx|y Q0 c 1 1 t\n")
    return qrels, run_a, run_b


def test_json_keeps_a_query_called_all(odd_ids, capsys):
    status, out, _ = run_cli(capsys, "eval", "-q", "-m", "map", "--format", "json", *odd_ids)
    runs = json.loads(out)["runs"]
    assert status == 0 and [r["file"] for r in runs] == list(odd_ids[1:])
    assert runs[0]["per_query"]["all"] == {"map": 0.5}
    assert runs[0]["summary"]["map"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert runs[1]["per_query"]["1"] == {"map": 0.0}


@pytest.mark.parametrize("fmt, delimiter", [("csv", ","), ("tsv", "\t")])
def test_delimited_marks_summary_rows_by_scope_and_runs_by_file(odd_ids, capsys, fmt,
                                                                delimiter):
    status, out, _ = run_cli(capsys, "eval", "-q", "-m", "map", "--format", fmt, *odd_ids)
    rows = list(csv.DictReader(io.StringIO(out), delimiter=delimiter))
    assert status == 0
    assert list(rows[0]) == ["run", "file", "scope", "query_id", "measure", "value"]
    got = {(r["file"], r["scope"], r["query_id"]): float(r["value"]) for r in rows}
    a, b = odd_ids[1:]
    assert got[(a, "query", "all")] == 0.5
    assert got[(a, "all", "")] == pytest.approx(2.5 / 3)
    assert got[(b, "query", "1")] == 0.0 and got[(b, "query", "all")] == 1.0
    assert got[(b, "all", "")] == pytest.approx(2 / 3)
    assert {r["run"] for r in rows} == {"t"}
    assert len(rows) == 2 * 4  # 3 queries + 1 summary per run, nothing lost


def test_markdown_escapes_pipes_and_tells_summary_from_query_all(odd_ids, capsys):
    status, out, _ = run_cli(capsys, "eval", "-q", "-m", "map", "--format", "markdown",
                             *odd_ids)
    lines = out.splitlines()
    assert status == 0
    # every row has the same number of unescaped cell separators as the header
    borders = {line.replace("\\|", "").count("|") for line in lines}
    assert borders == {5}, lines
    assert "| map | all | 0.5000 | 1.0000 |" in lines
    assert "| map | **all** | 0.8333 | 0.6667 |" in lines
    assert "| map | x\\|y | 1.0000 | 1.0000 |" in lines
    assert lines[0] == f"| measure | query | {odd_ids[1]} | {odd_ids[2]} |"


def test_trec_text_is_unchanged_by_the_new_formats(odd_ids, capsys):
    status, out, _ = run_cli(capsys, "eval", "-q", "-m", "map", odd_ids[0], odd_ids[1])
    assert status == 0
    assert out == ("map                   \t1\t1.0000\n"
                   "map                   \tall\t0.5000\n"
                   "map                   \tx|y\t1.0000\n"
                   "map                   \tall\t0.8333\n")


ODD_IDS = ("all", "1", "a|b", "x,y", '"q"', "tab\\t", "*s*")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(judged=st.sets(st.sampled_from(ODD_IDS), min_size=1),
       runs=st.lists(st.sets(st.sampled_from(ODD_IDS), min_size=1), min_size=1, max_size=3))
def test_machine_formats_round_trip_every_value(tmp_path, capsys, judged, runs):
    """csv, tsv and json carry every per-query and summary value of every run, whatever
    the ids, and markdown has one row per (query, measure) plus one per summary."""
    qrels = write(tmp_path / "qrels", "".join(f"{q} 0 d1 1\n{q} 0 d2 0\n" for q in judged))
    paths, expected = [], []
    for i, queries in enumerate(runs):
        if not queries & judged:
            return  # exit 7: covered elsewhere
        text = "".join(f"{q} Q0 d{1 + (i + j) % 2} 1 1.0 same\n{q} Q0 d3 2 0.5 same\n"
                       for j, q in enumerate(sorted(queries)))
        paths.append(write(tmp_path / f"run{i}", text))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)
            res = irm.evaluate(qrels, paths[-1], ["map", "P.1"])
        expected.append((res.to_dict(), res.aggregate()))
    measures = ("-m", "map", "-m", "P.1", "-q")
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        _, out, _ = run_cli(capsys, "eval", *measures, "--format", fmt, qrels, *paths)
        got = {}
        for row in csv.DictReader(io.StringIO(out), delimiter=delimiter):
            key = row["query_id"] if row["scope"] == "query" else None
            got.setdefault(row["file"], {}).setdefault(key, {})[row["measure"]] = \
                float(row["value"])
        for path, (per_query, summary) in zip(paths, expected):
            assert got[path].pop(None) == summary
            assert got[path] == per_query
    _, out, _ = run_cli(capsys, "eval", *measures, "--format", "json", qrels, *paths)
    for entry, path, (per_query, summary) in zip(json.loads(out)["runs"], paths, expected):
        assert entry["file"] == path
        assert entry["summary"] == summary and entry["per_query"] == per_query
    _, out, _ = run_cli(capsys, "eval", *measures, "--format", "markdown", qrels, *paths)
    rows = out.splitlines()[2:]
    evaluated = set().union(*(set(per_query) for per_query, _ in expected))
    assert len(rows) == 2 * len(evaluated) + 2
    assert {row.replace("\\|", "").count("|") for row in rows} == {3 + len(paths)}


# -- item 5 (and 13c): -Z is strict where trec_eval reads garbage, NaN propagates ----------

@pytest.fixture
def zfiles(tmp_path):
    qrels = write(tmp_path / "qrels", "1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    run = write(tmp_path / "run", "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1.0 r\n"
                                  "2 Q0 d 2 0.5 r\n")
    return tmp_path, qrels, run


def test_zscore_garbage_mean_is_an_error_naming_file_and_line(zfiles, capsys):
    tmp, qrels, run = zfiles
    z = write(tmp / "z", "1 P_1 0.5 0.5\n2 P_1 abc 0.5\n")
    status, out, err = run_cli(capsys, "eval", "-q", "-m", "P.1", "-Z", z, qrels, run)
    assert status == 2 and out == ""
    assert f"{z}:2:" in err and "mean" in err and "'abc'" in err
    z = write(tmp / "z2", "1 P_1 0.5 0.5\n2 P_1 0.5 1,5\n")
    status, _, err = run_cli(capsys, "eval", "-m", "P.1", "-Z", z, qrels, run)
    assert status == 2 and f"{z}:2:" in err and "stddev" in err


def test_zscore_missing_pair_is_an_error_naming_query_and_measure(zfiles, capsys):
    tmp, qrels, run = zfiles
    z = write(tmp / "z", "1 P_1 0.5 0.5\n1 map 0.5 0.5\n2 map 0.5 0.5\n")
    status, out, err = run_cli(capsys, "eval", "-q", "-m", "P.1", "-m", "map", "-Z", z,
                               qrels, run)
    assert status == 2 and out == ""
    assert "'P_1'" in err and "query_id '2'" in err


@pytest.mark.parametrize("mean, std, want", [
    ("nan", "0.5", "   nan"), ("0.5", "nan", "   nan"), ("-nan", "0.5", "  -nan"),
    ("0.5", "0.25", "2.0000"), ("1", "0", "0.0000"), ("0.5", "0", "-1000000.0000"),
])
def test_zscore_values_follow_trec_eval(zfiles, capsys, mean, std, want):
    # per query 1: P_1 = 1.0; trec_eval: (v - mean) / std if std != 0 (NaN passes that
    # test and propagates), else 0 if v == mean, else -1000000
    tmp, qrels, run = zfiles
    z = write(tmp / "z", f"1 P_1 {mean} {std}\n2 P_1 1 1\n")
    status, out, _ = run_cli(capsys, "eval", "-q", "-m", "P.1", "-Z", z, qrels, run)
    assert status == 0
    assert out.splitlines()[0] == f"Z{'P_1':<22}\t1\t{want}"
    v = float(want)
    summary = out.splitlines()[-1].split("\t")[-1]
    if math.isnan(v):
        assert summary.strip() in ("nan", "-nan")
    else:
        assert float(summary) == pytest.approx((v + 0.0) / 2)


# -- item 6: validate fails when nothing was compared --------------------------------------

def test_validate_fails_without_a_common_query(tmp_path, capsys):
    qrels = write(tmp_path / "q", "1 0 a 1\n")
    run = write(tmp_path / "r", "9 Q0 a 1 1.0 t\n")
    status, out, _ = run_cli(capsys, "validate", "-m", "map", qrels, run)
    assert status == 1 and "FAIL: nothing was compared" in out


def test_validate_fails_with_only_non_numeric_outputs(tmp_path, capsys):
    qrels = write(tmp_path / "q", "1 0 a 1\n")
    run = write(tmp_path / "r", "1 Q0 a 1 1.0 t\n")
    status, out, _ = run_cli(capsys, "validate", "-m", "relstring", "-m", "runid", qrels, run)
    assert status == 1 and "FAIL: nothing was compared" in out
    status, out, _ = run_cli(capsys, "validate", "-m", "map", qrels, run)
    assert status == 0 and "OK: 1 outputs agree" in out and "(1 values compared)" in out


@pytest.mark.parametrize("tolerance", ["nan", "inf", "-inf", "-1e-9", "abc"])
def test_validate_rejects_tolerances_that_accept_anything(tmp_path, capsys, tolerance):
    qrels = write(tmp_path / "q", "1 0 a 1\n")
    run = write(tmp_path / "r", "1 Q0 a 1 1.0 t\n")
    status, out, err = run_cli(capsys, "validate", f"--tolerance={tolerance}", qrels, run)
    assert status == 2 and out == ""
    assert "`--tolerance` must be a finite number >= 0" in err and err.count("\n") == 1


@pytest.mark.parametrize("tolerance", [math.nan, math.inf, -1.0, "0.1"])
def test_crosscheck_rejects_bad_tolerance(tolerance):
    with pytest.raises(ParameterError, match="`tolerance`"):
        crosscheck({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["map"], tolerance=tolerance)


def test_crosscheck_reports_an_empty_comparison_as_not_ok():
    rep = crosscheck({"q": {"d": 1}}, {"x": {"d": 1.0}}, ["map"])
    assert not rep.ok and rep.n_compared == 0 and rep.missing == ["q"]


# -- item 12: help and docs agree with the code --------------------------------------------

@pytest.mark.parametrize("argv", [["-v"], ["-V"], ["--version"], ["eval", "-v"],
                                  ["eval", "-V"], ["validate", "-V"]])
def test_every_advertised_version_flag_works(capsys, argv):
    status, out, err = run_cli(capsys, *argv)
    assert status == 0 and "irmetrics" in out + err


def test_top_level_help_lists_the_version_flags_that_work(capsys):
    status, out, _ = run_cli(capsys, "--help")
    assert status == 0 and "-v, -V, --version" in out


def test_evaluator_docstring_agrees_with_cli_doc_on_complete():
    doc = irm.Evaluator.__doc__
    assert "placeholder ranking" in doc and "empty rankings" not in doc
    assert "placeholder ranking" in (ROOT / "docs" / "cli.md").read_text()


def test_readme_explains_the_example_warning_and_dependencies():
    readme = (ROOT / "README.md").read_text()
    first_screen = readme.split("## Use")[0]
    assert first_screen.count("```sh") == 2  # exactly the two set-up commands
    assert "304" in first_screen  # the example's warning is explained where it is seen
    assert "without its C build" not in readme
    assert "pytrec-eval-terrier" in readme


def test_semantics_doc_states_the_strict_zscore_rule():
    text = (ROOT / "docs" / "semantics.md").read_text()
    assert "the CLI reports the missing pair" not in text
    assert "MissingQueriesWarning" in text and "NoQueriesError" in text
    assert "-1000000" in (ROOT / "docs" / "cli.md").read_text()


def test_zscore_reader_errors_are_typed(tmp_path):
    from irmetrics.cli.zscores import read_zscores

    with pytest.raises(InputFormatError, match=r"z:1: the mean must be a number"):
        read_zscores(write(tmp_path / "z", "q map x 1\n"))
