"""Every CLI failure: exit status, one line on stderr naming the culprit, no traceback."""

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from irmetrics.cli import main

ROOT = Path(__file__).resolve().parents[2]
QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n"
RUN = "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1.0 r\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


def fail(capsys, argv, status, *fragments):
    """Run ``irmetrics eval argv``; check status, the stderr fragments, one line."""
    got = main(argv)
    out, err = capsys.readouterr()
    assert got == status, err
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err, err
    return out, err


def test_missing_qrels_file(files, capsys):
    fail(capsys, ["eval", str(files / "nope"), str(files / "run")], 2, "nope", "cannot read")


def test_missing_run_file(files, capsys):
    fail(capsys, ["eval", str(files / "qrels"), str(files / "nope.run")], 2, "nope.run")


def test_directory_as_file(files, capsys):
    fail(capsys, ["eval", str(files), str(files / "run")], 2, str(files))


def test_empty_qrels(files, capsys):
    (files / "qrels").write_text("")
    fail(capsys, ["eval", str(files / "qrels"), str(files / "run")], 2, "qrels", "empty")


def test_empty_run(files, capsys):
    (files / "run").write_text("")
    fail(capsys, ["eval", str(files / "qrels"), str(files / "run")], 2, "run", "empty")


@pytest.mark.parametrize("content,line,reason", [
    ("1 0 a 1\n1 0 b\n", 2,                   # three fields
     "expected 4 fields (query_id iteration doc_id relevance), found 3 (query_id '1', doc_id 'b')"),
    ("1 0 a 1\n1 0 b 0 extra\n", 2,           # five fields
     "expected 4 fields (query_id iteration doc_id relevance), found 5 (query_id '1', doc_id 'b')"),
    ("1 0 a 1\n1 0 b 0\n\n", 3,               # trailing empty line (trec_eval: malformed)
     "blank line"),
    ("1 0 a 1 # x\n", 1,                        # '#' after column 0 is data
     "expected 4 fields (query_id iteration doc_id relevance), found 6 (query_id '1', doc_id 'a')"),
    ("# one\n# two three\n1 0 a 1\n", 2,          # second comment is parsed as data
     "a comment line right after another one"),
    ("1 0 a 1\n# end\n", 2,                    # comment on the last line (trec_eval crashes)
     "a comment as the last line"),
    ("1 0 a 1\n  # x\n1 0 b 0\n", 2,           # indented '#' is data for trec_eval
     "an indented '#' line"),
])
def test_malformed_qrels(files, capsys, content, line, reason):
    (files / "qrels").write_text(content)
    _, err = fail(capsys, ["eval", str(files / "qrels"), str(files / "run")], 2,
                  f"irmetrics eval: {files / 'qrels'}:{line}: {reason}")
    assert err.startswith(f"irmetrics eval: {files / 'qrels'}:{line}: "), err


def test_malformed_run(files, capsys):
    # runs skip comment and blank lines anywhere, but count them
    (files / "run").write_text("1 Q0 a 1 2.0 r\n# comment\n\n1 Q0 b 2 1.0\n")
    fail(capsys, ["eval", str(files / "qrels"), str(files / "run")], 2,
         f"irmetrics eval: {files / 'run'}:4: expected at least 6 fields"
         " (query_id iteration doc_id rank score run_id), found 5 (query_id '1', doc_id 'b')")


def test_malformed_gzip_run(files, capsys):
    (files / "run.gz").write_bytes(gzip.compress(b"1 Q0 a 1\n"))
    fail(capsys, ["eval", str(files / "qrels"), str(files / "run.gz")], 2,
         f"{files / 'run.gz'}:1: expected at least 6 fields", "found 4")


def test_duplicate_judgment(files, capsys):
    # docs/reference/trec_eval.md §2.1: the iteration field does not make judgments distinct. The qrels reader
    # refuses the duplicate (DuplicateEntryError); the CLI keeps trec_eval's exit status 4.
    (files / "qrels").write_text("1 0 a 1\n1 0 b 0\n1 1 a 0\n")
    fail(capsys, ["eval", "-m", "map", str(files / "qrels"), str(files / "run")], 4,
         f"irmetrics eval: {files / 'qrels'}:3: duplicate (query_id, doc_id); first seen on"
         " line 1 (query_id '1', doc_id 'a')")
    # also for a query the run never mentions (trec_eval would not notice)
    (files / "qrels").write_text("1 0 a 1\n9 0 x 0\n9 0 x 1\n2 0 c 1\n")
    fail(capsys, ["eval", "-m", "map", str(files / "qrels"), str(files / "run")], 4,
         f"{files / 'qrels'}:3: duplicate", "(query_id '9', doc_id 'x')")


def test_duplicate_retrieved_document_and_M(files, capsys):
    # docs/reference/trec_eval.md §2.4: trec_eval rejects a duplicate only inside the top -M documents;
    # irmetrics refuses duplicates anywhere in the run (docs/semantics.md, "Input we
    # refuse"): the run reader raises DuplicateEntryError whatever -M is (exit 4).
    (files / "qrels").write_text("1 0 a 1\n1 0 b 0\n")
    (files / "run").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n")
    argv = [str(files / "qrels"), str(files / "run")]
    message = (f"irmetrics eval: {files / 'run'}:3: duplicate (query_id, doc_id); first seen"
               " on line 1 (query_id '1', doc_id 'a')\n")
    for M in ([], ["-M2"], ["-M3"]):
        out, err = fail(capsys, ["eval", *M, "-m", "map", *argv], 4)
        assert (out, err) == ("", message)
    # without the duplicate, -M2 evaluates as before
    (files / "run").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n")
    assert main(["eval", "-M2", "-m", "map", *argv]) == 0
    assert capsys.readouterr().out == "map                   \tall\t1.0000\n"


def test_unknown_measure_suggests(files, capsys):
    _, err = fail(capsys, ["eval", "-m", "mapp", str(files / "qrels"), str(files / "run")], 1,
                  "mapp", "closest names: map,")
    assert err.startswith("irmetrics eval: ") and "gm_map" in err


def test_unknown_friendly_measure(files, capsys):
    fail(capsys, ["eval", "-m", "nDGC@10", str(files / "qrels"), str(files / "run")], 1,
         "nDGC@10", "nDCG")


def test_measure_checked_before_files(files, capsys):
    # trec_eval parses -m before reading any file (exit 1 even if files are missing).
    _, err = fail(capsys, ["eval", "-m", "bogus", "nope", "nope"], 1, "bogus")
    assert "nope" not in err and "cannot read" not in err


@pytest.mark.parametrize("spec", ["P.", "map.", ""])
def test_empty_parameter_string_is_illegal_measure(files, capsys, spec):
    fail(capsys, ["eval", "-m", spec, str(files / "qrels"), str(files / "run")], 1,
         "illegal measure")


@pytest.mark.parametrize("spec,fragment", [
    ("P.0", "P"), ("P.5,5", "distinct"), ("P.abc", "P"), ("iprec_at_recall..1,.1", "distinct"),
    ("ndcg.1=2=3", "name=value"), ("map.5", "no parameters"),
])
def test_bad_measure_parameters(files, capsys, spec, fragment):
    fail(capsys, ["eval", "-m", spec, str(files / "qrels"), str(files / "run")], 2, fragment)


@pytest.mark.parametrize("option,value", [("-M", "-1"), ("-M", "abc"), ("-l", "x"),
                                          ("-N", "1.5")])
def test_bad_numeric_options(files, capsys, option, value):
    fail(capsys, ["eval", option, value, str(files / "qrels"), str(files / "run")], 2,
         f"`{option}` must be an integer", repr(value))


def test_negative_M_attached(files, capsys):
    fail(capsys, ["eval", "-M-1", str(files / "qrels"), str(files / "run")], 2, ">= 0")


@pytest.mark.parametrize("argv,fragment", [
    (["-x"], "-x"), (["--bogus"], "--bogus"), (["--s"], "ambiguous"),
    (["--format", "xml"], "xml"), (["--semantics", "x"], "x"), (["-D", "1"], "-D"),
])
def test_usage_errors(files, capsys, argv, fragment):
    fail(capsys, ["eval", *argv, str(files / "qrels"), str(files / "run")], 1, fragment)


def test_missing_file_arguments(files, capsys):
    fail(capsys, ["eval", "-q", str(files / "qrels")], 1, "required")


def test_unknown_command(capsys):
    assert main(["evaluate"]) == 1
    assert "unknown command 'evaluate'" in capsys.readouterr().err


# One EC-mode JG (docs/reference/trec_eval.md §8.3): a (level 2) > b (1) > c (0); the run ranks b, a, c, so the
# docid ranks are b=0, a=1, c=2 (NJR = 3). Pairs (higher, lower): (a, b) is 1 > 0 with a
# retrieved -> possible_ret; (a, c) and (b, c) are fulfilled with c retrieved -> ful_ret.
# ful_ret = 2, poss_ret = 1 + 2 = 3: prefs_num_prefs_poss 3, prefs_num_prefs_ful(_ret) 2,
# prefs_simp(_ret, _imp) = 2/3. prefs_pair: docid pairs (0,1) C[0][1]=0, C[1][0]=1 -> 0;
# (0,2) -> 1; (1,2) -> 1; mean 2/3.
PREFS_RUN = "1 Q0 b 1 3 r\n1 Q0 a 2 2 r\n1 Q0 c 3 1 r\n"
PREFS_EXPECTED = {
    "prefs_num_prefs_poss": "3", "prefs_num_prefs_ful": "2", "prefs_num_prefs_ful_ret": "2",
    "prefs_simp": "0.6667", "prefs_simp_ret": "0.6667", "prefs_simp_imp": "0.6667",
    "prefs_pair": "0.6667", "prefs_pair_ret": "0.6667", "prefs_avgjg": "0.6667",
}
# Two JGs (docs/reference/trec_eval.md §8.2) on the ranking a, b: j1 judges a relevant (AP 1), j2 judges b (AP 1/2);
# map_avgjg = (1 + 0.5) / 2 = 0.75, P_avgjg_5 = (1/5 + 1/5) / 2 = 0.2.
JG_QRELS = "1 j1 a 1\n1 j1 b 0\n1 j2 a 0\n1 j2 b 1\n"
JG_RUN = "1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n"


def _summary(out):
    lines = [line.split("\t") for line in out.splitlines()]
    assert all(len(f) == 3 and f[1] == "all" for f in lines), out
    return {name.strip(): value for name, _, value in lines}


@pytest.mark.parametrize("fmt,judgments", [
    ("prefs", "1 g s a 2\n1 g s b 1\n1 g s c 0\n"),   # q jg jsg doc level
    ("qrels_prefs", "1 g a 2\n1 g b 1\n1 g c 0\n"),   # q jg doc level
])
def test_rel_info_prefs_formats_evaluate(files, capsys, fmt, judgments):
    (files / "prefs").write_text(judgments)
    (files / "run").write_text(PREFS_RUN)
    assert main(["eval", "-R", fmt, "-m", "all_prefs", str(files / "prefs"),
                 str(files / "run")]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    got = _summary(out)
    assert (got["runid"], got["num_q"]) == ("r", "1")
    assert {k: got[k] for k in PREFS_EXPECTED} == PREFS_EXPECTED
    assert all(k in ("runid", "num_q") or k.startswith("prefs_") for k in got), got
    # per query (-q) the same values, under query id 1
    assert main(["eval", "-q", "-R", fmt, "-m", "all_prefs", str(files / "prefs"),
                 str(files / "run")]) == 0
    assert "prefs_simp            \t1\t0.6667\n" in capsys.readouterr().out


def test_rel_info_qrels_jg_evaluates(files, capsys):
    (files / "jg").write_text(JG_QRELS)
    (files / "run").write_text(JG_RUN)
    assert main(["eval", "-R", "qrels_jg", "-m", "qrels_jg", str(files / "jg"),
                 str(files / "run")]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    got = _summary(out)
    assert (got["runid"], got["num_q"]) == ("r", "1")
    assert got["map_avgjg"] == "0.7500" and got["P_avgjg_5"] == "0.2000"
    assert got["P_avgjg_10"] == "0.1000"
    assert "map_avgjg             \tall\t0.7500\n" in out


@pytest.mark.parametrize("fmt,judgments,measures", [
    ("prefs", "1 g s a 2\n1 g s b 1\n", "all_prefs"),
    ("qrels_prefs", "1 g a 2\n1 g b 1\n", "all_prefs"),
    ("qrels_jg", JG_QRELS, "qrels_jg"),
])
def test_rel_info_formats_refuse_standard_measures(files, capsys, fmt, judgments, measures):
    (files / "judgments").write_text(judgments)
    (files / "run").write_text(JG_RUN)
    argv = [str(files / "judgments"), str(files / "run")]
    out, _ = fail(capsys, ["eval", "-R", fmt, "-m", "map", *argv], 2,
                  "irmetrics eval: measure 'map' cannot be computed from"
                  f" {'prefs' if 'prefs' in fmt else fmt} judgments; it needs qrels",
                  f"Measures for {'prefs' if 'prefs' in fmt else fmt} judgments: {measures}")
    assert out == ""
    # the default measures are standard ones too
    fail(capsys, ["eval", "-R", fmt, *argv], 2, "cannot be computed from", "'map'")


def test_illegal_rel_info_and_results_formats(files, capsys):
    fail(capsys, ["eval", "-R", "trec", str(files / "qrels"), str(files / "run")], 2,
         "'trec'", "-R")
    fail(capsys, ["eval", "-T", "json", str(files / "qrels"), str(files / "run")], 2,
         "'json'", "-T")
    assert main(["eval", "-T", "trec_results", "-R", "qrels", "-o",
                 str(files / "qrels"), str(files / "run")]) == 0


def test_strict_missing_query(files, capsys):
    (files / "run").write_text("1 Q0 a 1 2.0 r\n")
    out, err = fail(capsys, ["eval", "--strict", "-q", "-m", "P.1", str(files / "qrels"),
                             str(files / "run")], 4)
    assert err == "trec_eval: result qid '2' not found in qrels\n"
    assert out == "P_1                   \t1\t1.0000\n"


def test_no_common_query(files, capsys):
    (files / "run").write_text("9 Q0 a 1 2.0 r\n")
    fail(capsys, ["eval", str(files / "qrels"), str(files / "run")], 7, "no query")


def test_zscore_file_errors(files, capsys):
    argv = [str(files / "qrels"), str(files / "run")]
    fail(capsys, ["eval", "-Z", str(files / "nope"), *argv], 2, "nope")
    (files / "z").write_text("1 map 0.5\n")
    fail(capsys, ["eval", "-Z", str(files / "z"), *argv], 2, f"{files / 'z'}:1: malformed")


def test_internal_error_has_no_traceback(files, capsys, monkeypatch):
    import irmetrics.cli.eval_cmd as eval_cmd

    def boom(self, run, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(eval_cmd.Evaluator, "evaluate", boom)
    fail(capsys, ["eval", str(files / "qrels"), str(files / "run")], 4, "internal error",
         "kaboom")


def test_subprocess_errors_have_no_traceback(files):
    proc = subprocess.run([sys.executable, "-m", "irmetrics", "eval", "-m", "P.0",
                           str(files / "qrels"), str(files / "missing")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_negative_option_value_names_the_spelling_that_works(files, capsys):
    # argparse reads "-1,1" as an option; the message says how to write it.
    run = str(files / "run")
    assert main(["fuse", "-m", "wsum", "-w", "-1,1", run, run]) == 1
    err = capsys.readouterr().err
    assert "argument -w/--weights: expected one argument; a value that starts with '-' is" \
        " written --weights=VALUE" in err
    assert main(["eval", "-m"]) == 1  # no negative number given: no such hint
    assert "expected one argument (see 'irmetrics eval --help')" in capsys.readouterr().err
