"""Every CLI failure: exit status, one line on stderr naming the culprit, no traceback."""

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from irmetrics.cli import main

ROOT = Path(__file__).resolve().parent.parent
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


@pytest.mark.parametrize("content,line", [
    ("1 0 a 1\n1 0 b\n", "line 2"),           # three fields
    ("1 0 a 1\n1 0 b 0 extra\n", "line 2"),   # five fields
    ("1 0 a 1\n1 0 b 0\n\n", "line 3"),       # trailing empty line (trec_eval: malformed)
    ("1 0 a 1 # x\n", "line 1"),              # '#' after column 0 is data
    ("# one\n# two three\n1 0 a 1\n", "line 2"),  # second comment is parsed as data
    ("1 0 a 1\n# end\n", "line 2"),           # comment on the last line (trec_eval crashes)
])
def test_malformed_qrels(files, capsys, content, line):
    (files / "qrels").write_text(content)
    fail(capsys, ["eval", str(files / "qrels"), str(files / "run")], 2,
         str(files / "qrels"), line)


def test_malformed_run(files, capsys):
    (files / "run").write_text("1 Q0 a 1 2.0 r\n# comment\n\n1 Q0 b 2 1.0\n")
    fail(capsys, ["eval", str(files / "qrels"), str(files / "run")], 2,
         str(files / "run"), "line 4")


def test_malformed_gzip_run(files, capsys):
    (files / "run.gz").write_bytes(gzip.compress(b"1 Q0 a 1\n"))
    fail(capsys, ["eval", str(files / "qrels"), str(files / "run.gz")], 2, "run.gz", "line 1")


def test_duplicate_judgment(files, capsys):
    # spec §2.1: the iteration field does not make judgments distinct.
    (files / "qrels").write_text("1 0 a 1\n1 0 b 0\n1 1 a 0\n")
    fail(capsys, ["eval", "-m", "map", str(files / "qrels"), str(files / "run")], 4,
         str(files / "qrels"), "'a'", "lines 1 and 3")


def test_duplicate_retrieved_document_and_M(files, capsys):
    # spec §2.4: fatal inside the top -M documents only.
    (files / "qrels").write_text("1 0 a 1\n1 0 b 0\n")
    (files / "run").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n")
    argv = [str(files / "qrels"), str(files / "run")]
    fail(capsys, ["eval", "-m", "map", *argv], 4, str(files / "run"), "'a'", "lines 1 and 3")
    assert main(["eval", "-M2", "-m", "map", *argv]) == 0
    assert capsys.readouterr().out == "map                   \tall\t1.0000\n"
    fail(capsys, ["eval", "-M3", "-m", "map", *argv], 4, "'a'")


def test_unknown_measure_suggests(files, capsys):
    _, err = fail(capsys, ["eval", "-m", "mapp", str(files / "qrels"), str(files / "run")], 1,
                  "'mapp'", "closest names", "map")


def test_unknown_friendly_measure(files, capsys):
    fail(capsys, ["eval", "-m", "nDGC@10", str(files / "qrels"), str(files / "run")], 1,
         "nDGC@10", "nDCG")


def test_measure_checked_before_files(files, capsys):
    # trec_eval parses -m before reading any file (exit 1 even if files are missing).
    fail(capsys, ["eval", "-m", "bogus", "nope", "nope"], 1, "'bogus'")


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


@pytest.mark.parametrize("fmt", ["prefs", "qrels_prefs", "qrels_jg"])
def test_rel_info_formats_not_available(files, capsys, fmt):
    fail(capsys, ["eval", "-R", fmt, str(files / "qrels"), str(files / "run")], 2,
         f"-R {fmt}", "not available")


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
    fail(capsys, ["eval", "-Z", str(files / "z"), *argv], 2, str(files / "z"), "line 1")


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
