"""Regression tests from the adversarial review of ``irmetrics compare`` (issue 11).

Each test is named for one defect and asserts the behaviour a user should get.
"""

from __future__ import annotations

import os
import io
import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import irmetrics as irm
from irmetrics.exceptions import InputFormatError, ParameterError
from irmetrics.io.per_query import PerQueryScores, read_per_query

from tests.comparison.test_compare import cli

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "compare"
QRELS = str(FIX / "qrels.txt")
RUNS = {name: str(FIX / f"{name}.run") for name in ("bm25", "dense", "tweak")}


def write(path: Path, text: str, encoding: str = "utf-8") -> str:
    path.write_text(text, encoding=encoding, newline="")
    return str(path)


def eval_file(tmp_path: Path, name: str, values: dict, measure: str = "map") -> str:
    lines = "".join(f"{measure:<22}\t{q}\t{v:6.4f}\n" for q, v in values.items())
    return write(tmp_path / name, lines)


def scores(values, name="x", measure="map"):
    ids = np.array([f"q{i:02d}" for i in range(len(values))], dtype=object)
    return PerQueryScores(ids, {measure: np.asarray(values, dtype=np.float64)}, name, name)


# -- alpha and the confidence level ---------------------------------------------------------

def test_tiny_alpha_error_names_alpha_not_internal_level():
    # 1 - 1e-17 == 1.0: the error named `level`, a parameter the user never gave.
    with pytest.raises(ParameterError, match="`alpha`"):
        irm.compare(QRELS, RUNS, "map", alpha=1e-17)
    status, _, err = cli("compare", "-m", "map", "--alpha", "1e-17", QRELS, RUNS["bm25"],
                         RUNS["dense"])
    assert status == 2
    assert "alpha" in err and "`level`" not in err


def test_confidence_level_label_is_not_rounded_to_whole_percent():
    # alpha = 0.001 printed "100% confidence intervals" and a "100% CI" column.
    cmp = irm.compare(QRELS, RUNS, "map", baseline="bm25", alpha=0.001)
    assert "99.9% confidence intervals" in cmp.describe()
    assert "99.9% CI" in cmp.to_text()
    assert "99.9% CI" in cmp.to_markdown()
    assert "100%" not in cmp.to_text() + cmp.to_markdown() + cmp.to_latex()
    assert "99.5% confidence" in irm.compare(QRELS, RUNS, "map", alpha=0.005).describe()


# -- resource limits -------------------------------------------------------------------------

def test_huge_resample_count_is_a_parameter_error_not_memory_error():
    with pytest.raises(ParameterError, match="n_resamples"):
        irm.compare(QRELS, RUNS, "map", test="bootstrap", n_resamples=10**12)
    status, _, err = cli("compare", "-m", "map", "--test", "tukey", "--resamples",
                         str(10**13), QRELS, RUNS["bm25"], RUNS["dense"])
    assert status == 2
    assert "--resamples" in err and "internal error" not in err and "MemoryError" not in err


# -- measure sets ----------------------------------------------------------------------------

@pytest.mark.parametrize("measure_set", ["official", "all_trec"])
def test_measure_sets_compare_their_scores_and_skip_geometric_means(measure_set):
    # `-m official` failed: gm_map, inside the set, raised "is a geometric mean".
    cmp = irm.compare(QRELS, RUNS, measure_set, baseline="bm25")
    assert "map" in cmp.measures and "P_10" in cmp.measures
    assert "gm_map" not in cmp.measures and "runid" not in cmp.measures
    # Counts are not effectiveness scores; the -q default already leaves them out.
    assert "num_ret" not in cmp.measures and "num_rel" not in cmp.measures
    status, out, _ = cli("compare", "-m", measure_set, "--format", "csv", QRELS,
                         RUNS["bm25"], RUNS["dense"])
    assert status == 0 and out.startswith("measure,")


def test_geometric_mean_asked_for_by_name_is_still_refused():
    with pytest.raises(ParameterError, match="geometric mean"):
        irm.compare(QRELS, RUNS, "gm_map")


# -- LaTeX ----------------------------------------------------------------------------------

def test_latex_superscripts_are_unambiguous_beyond_26_systems():
    # Letters were concatenated: {n, w, aa} printed "nwaa", readable as n, w, a, a.
    rng = np.random.default_rng(3)
    base = rng.random(40)
    runs = {f"s{k:02d}": scores(base + 0.01 * k + rng.normal(0, 0.001, 40), f"s{k:02d}")
            for k in range(28)}
    cmp = irm.compare(None, runs, "map", correction="none")
    latex = cmp.to_latex()
    marks = re.findall(r"\$\^\{([^}]*)\}\$", latex)
    assert marks, latex
    labels = set()
    for mark in marks:
        labels.update(mark.split(","))
    # Every mark is a comma-separated list of system letters that exist.
    assert labels <= set(irm.comparison.formatting.letters(28)), marks
    row = next(line for line in latex.splitlines() if line.startswith("(ab) s27"))
    mark = re.search(r"\$\^\{([^}]*)\}\$", row).group(1)
    assert mark.split(",")[-1] == "aa"   # s27 beats s26, letter "aa", kept whole


def test_latex_escapes_characters_that_ot1_prints_as_other_glyphs():
    # In the default OT1 font encoding "|" prints as an em dash, "<" as "¡", ">" as "¿".
    runs = {"a|b<c>": scores([0.1, 0.2, 0.3], "a"), "d": scores([0.2, 0.3, 0.5], "d")}
    latex = irm.compare(None, runs, "map").to_latex()
    row = next(line for line in latex.splitlines() if line.startswith("(a) "))
    assert r"\textbar{}" in row and r"\textless{}" in row and r"\textgreater{}" in row


# -- markdown ---------------------------------------------------------------------------------

def test_markdown_escapes_emphasis_characters_in_run_names():
    # "run*1" and "run*2" in one row rendered "1 | run" in italics.
    runs = {"run*1": scores([0.1, 0.2, 0.3]), "run*2": scores([0.2, 0.3, 0.5])}
    markdown = irm.compare(None, runs, "map").to_markdown()
    row = markdown.splitlines()[2]
    assert r"run\*1" in row and r"run\*2" in row


# -- per-query files ----------------------------------------------------------------------------

def test_multi_run_eval_file_is_reported_as_several_runs(tmp_path):
    # `irmetrics eval -q` with two runs writes two blocks; the error pointed at line 2,
    # the first occurrence of another query, instead of saying the file holds 2 runs.
    block = "map                   \t1\t0.5000\nmap                   \t2\t0.2500\n" \
            "map                   \tall\t0.3750\n"
    path = write(tmp_path / "two.eval", block + block.replace("0.5000", "0.6000"))
    with pytest.raises(InputFormatError, match="2 runs"):
        read_per_query(path)


def test_duplicate_per_query_line_error_names_the_repeated_line(tmp_path):
    # Two queries repeated: the message named line 2 (query '2', its first occurrence).
    path = write(tmp_path / "dup.eval", "map\t1\t0.5\nmap\t2\t0.2\nmap\t1\t0.1\nmap\t2\t0.3\n")
    with pytest.raises(InputFormatError) as info:
        read_per_query(path)
    message = str(info.value)
    assert ":3:" in message and "'1'" in message, message


def test_utf8_bom_in_eval_file_is_ignored(tmp_path):
    # Files saved by Windows editors start with a BOM: the measure became '\ufeffmap'.
    path = write(tmp_path / "bom.eval", "map\tq1\t0.5000\nmap\tq2\t0.2500\n", "utf-8-sig")
    assert read_per_query(path).names == ["map"]


def test_missing_first_file_is_reported_as_unreadable(tmp_path):
    # `irmetrics compare typo.eval b.eval` said "give at least two runs".
    other = eval_file(tmp_path, "b.eval", {"q1": 0.5, "q2": 0.25})
    status, _, err = cli("compare", str(tmp_path / "typo.eval"), other)
    assert status == 2
    assert "typo.eval" in err and "cannot read" in err


def test_z_score_files_leave_counts_out_by_default(tmp_path):
    # -Z output prefixes every name with Z: Znum_ret was compared as a score.
    def zfile(name, shift):
        lines = "".join(f"Z{m:<22}\t{q}\t{v + shift:6.4f}\n" for q in ("1", "2", "3")
                        for m, v in (("num_ret", -8.0), ("map", 0.3 + int(q) / 10)))
        return write(tmp_path / name, lines)

    status, out, err = cli("compare", "--format", "csv", zfile("a.eval", 0.0),
                           zfile("b.eval", 0.1))
    assert status == 0, err
    measures = {line.split(",")[0] for line in out.splitlines()[1:]}
    assert measures == {"Zmap"}


# -- baselines and messages --------------------------------------------------------------------

def test_baseline_given_as_absolute_path_resolves():
    # A CI script passing "$PWD/runs/main.run" as --baseline for a relative run path.
    relative = os.path.relpath(RUNS["bm25"])
    status, out, err = cli("compare", "-m", "map", "--baseline", RUNS["bm25"], QRELS,
                           relative, RUNS["dense"])
    assert status == 0, err
    assert "against baseline 'bm25.run'" in out


def test_bad_types_for_baseline_and_measures_are_parameter_errors():
    with pytest.raises(ParameterError, match="`baseline`"):
        irm.compare(QRELS, RUNS, "map", baseline=3)
    for measures in (None, 5):
        with pytest.raises(ParameterError, match="`measures`"):
            irm.compare(QRELS, RUNS, measures)


def test_no_common_query_message_separates_its_parts():
    runs = {"a": PerQueryScores(np.array(["q1"], dtype=object), {"map": np.array([0.5])}, "a"),
            "b": PerQueryScores(np.array(["q2"], dtype=object), {"map": np.array([0.5])}, "b")}
    with pytest.raises(irm.comparison.ComparisonError) as info:
        irm.compare(None, runs, "map")
    assert "nothing to compare run" not in str(info.value)
    assert "nothing to compare:" in str(info.value)


# -- statistics (irmetrics.stats; reported, not fixed here) ---------------------------------------

def test_constant_difference_read_from_printed_values_has_infinite_effect_size(tmp_path):
    # Two -q files whose values differ by exactly 0.0625 on every query (as printed):
    # d_q = 0.0625 for every q, so s_d = 0 and d_z = +inf, t = +inf (stats docs). Float
    # noise from parsing made s_d ~ 1e-17, d_z = 3.3e15 and t = 1.8e16.
    qids = [f"q{i}" for i in range(30)]
    base = np.round(np.linspace(0.1, 0.8, 30), 4)
    a = eval_file(tmp_path, "a.eval", dict(zip(qids, base)))
    b = eval_file(tmp_path, "b.eval", dict(zip(qids, base + 0.0625)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = irm.compare(None, [read_per_query(a), read_per_query(b)], "map").table().row(
            0, named=True)
    assert row["diff"] == pytest.approx(0.0625, abs=1e-15)
    assert row["effect_size"] == np.inf
    assert row["statistic"] == np.inf


def test_json_of_review_edge_cases_is_strict(tmp_path):
    # Held: n = 1 rows (NaN p, CI) and constant differences serialise as null.
    runs = {"a": scores([0.5]), "b": scores([0.25])}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = irm.compare(None, runs, "map").to_json()
    row = json.loads(text)["rows"][0]
    assert row["p_value"] is None and row["diff"] == -0.25


def test_evaluation_options_with_only_eval_files_are_not_silently_ignored(tmp_path):
    # `irmetrics compare -c a.eval b.eval` printed a table as if -c had scored the
    # missing queries; the files are already evaluated, so -c cannot apply.
    a = eval_file(tmp_path, "a.eval", {"q1": 0.5, "q2": 0.25, "q3": 0.1})
    b = eval_file(tmp_path, "b.eval", {"q1": 0.4, "q2": 0.35, "q3": 0.2})
    for option in (["-c"], ["-J"], ["-M", "10"], ["-l", "2"], ["--semantics", "pytrec_eval"]):
        status, out, err = cli("compare", *option, a, b)
        assert status == 1, (option, out)
        assert option[0] in err and err.count("\n") == 1, err


def test_eval_file_on_stdin_is_read(tmp_path, monkeypatch):
    # `trec_eval -q qrels a.run | irmetrics compare - b.eval` said "give at least two
    # runs": '-' was never recognised as a -q evaluation file.
    text = "map                   \tq1\t0.5000\nmap                   \tq2\t0.2500\n"
    b = eval_file(tmp_path, "b.eval", {"q1": 0.4, "q2": 0.35})
    stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(text.encode())))
    monkeypatch.setattr(sys, "stdin", stdin)
    status, out, err = cli("compare", "--format", "csv", "-", b)
    assert status == 0, err
    row = out.splitlines()[1].split(",")
    assert row[:2] == ["map", "b.eval"] and float(row[5]) == pytest.approx(0.0)


def test_margin_failure_message_reads_as_a_sentence():
    # Was: "'b' is worse beyond the margin than baseline 'a' on map".
    runs = {"a": scores([0.5, 0.4, 0.3, 0.6]), "b": scores([0.49, 0.41, 0.28, 0.6])}
    (regression,) = irm.compare(None, runs, "map", baseline="a").regressions(margin=0.001)
    assert str(regression).startswith("'b' is worse than baseline 'a' by more than the"
                                      " margin on map: diff -0.0050")


def test_a_single_common_query_is_reported_not_silently_nan():
    # One common query: t and bootstrap have no variance estimate and return NaN; the
    # table printed "nan" without saying why.
    runs = {"a": scores([0.5]), "b": scores([0.25])}
    for test in ("t", "bootstrap"):
        with pytest.warns(irm.exceptions.IrMetricsWarning, match="1 query"):
            irm.compare(None, runs, "map", test=test)
