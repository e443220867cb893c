"""``irmetrics eval`` beyond the goldens: inputs, formats, semantics, help, entry points."""

import csv
import gzip
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import irmetrics as irm
from irmetrics.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "cli"
QRELS, RUN_A, RUN_B = FIX / "qrels.txt", FIX / "run_a.txt", FIX / "run_b.txt"


def cli(capsys, *argv):
    status = main(["eval", *map(str, argv)])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out, err


def summary(out):
    """``{name: text}`` of the ``all`` lines of trec_eval text."""
    rows = [line.split("\t") for line in out.splitlines()]
    return {name.strip(): value for name, qid, value in rows if qid == "all"}


def test_gzip_inputs(tmp_path, capsys):
    (tmp_path / "q.gz").write_bytes(gzip.compress(QRELS.read_bytes()))
    (tmp_path / "r.gz").write_bytes(gzip.compress(RUN_B.read_bytes()))
    plain, _ = cli(capsys, "-q", QRELS, RUN_B)
    zipped, _ = cli(capsys, "-q", tmp_path / "q.gz", tmp_path / "r.gz")
    assert zipped == plain


def test_run_from_stdin():
    proc = subprocess.run([sys.executable, "-m", "irmetrics", "eval", "-q", str(QRELS), "-"],
                          input=RUN_B.read_bytes(), capture_output=True, cwd=ROOT)
    expected = subprocess.run([sys.executable, "-m", "irmetrics", "eval", "-q", str(QRELS),
                               str(RUN_B)], capture_output=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout == expected.stdout and proc.stdout.startswith(b"num_ret")


def test_console_script_entry_point_and_version_on_stderr():
    proc = subprocess.run([sys.executable, "-c", "import sys; from irmetrics.cli import main;"
                           " sys.exit(main())", "eval", "-v"], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "trec_eval version 10.0-rc3" in proc.stderr


def test_values_equal_the_library(capsys):
    out, _ = cli(capsys, "-m", "map", "-m", "P.5", "-m", "ndcg_cut.10", QRELS, RUN_B)
    res = irm.evaluate(irm.Qrels.read(str(QRELS)), irm.Run.read(str(RUN_B)),
                       ["map", "P.5", "ndcg_cut.10"])
    assert summary(out) == {k: "%6.4f" % v for k, v in res.aggregate().items()}


def test_friendly_names_print_as_typed(capsys):
    out, _ = cli(capsys, "-q", "-m", "nDCG@10", "-m", "ndcg_cut.10", "-m", "P(rel=2)@5",
                 QRELS, RUN_B)
    lines = [line.split("\t") for line in out.splitlines()]
    by = {}
    for name, qid, value in lines:
        by.setdefault(name.strip(), {})[qid] = value
    assert by["nDCG@10"] == by["ndcg_cut_10"]
    assert set(by) == {"nDCG@10", "ndcg_cut_10", "P(rel=2)@5"}
    # P(rel=2)@5 counts labels >= 2 only: query 10 ranks b(3), c(1) first, then f e a.
    res = irm.evaluate(irm.Qrels.read(str(QRELS)), irm.Run.read(str(RUN_B)), ["P.5"],
                       relevance_level=2)
    assert by["P(rel=2)@5"]["all"] == "%6.4f" % res.aggregate()["P_5"]


def test_semantics_pytrec_eval_float32_ties(tmp_path, capsys):
    # docs/reference/trec_eval.md §12.1: a = 1.00000001 and b = 1.0 differ as doubles but tie as float32, where
    # the docno tie-break puts b first.
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1.00000001 r\n1 Q0 b 2 1.0 r\n")
    out, _ = cli(capsys, "-m", "P.1", tmp_path / "q", tmp_path / "r")
    assert out == "P_1                   \tall\t1.0000\n"
    out, _ = cli(capsys, "--semantics", "pytrec_eval", "-m", "P.1", tmp_path / "q",
                 tmp_path / "r")
    assert out == "P_1                   \tall\t0.0000\n"


def test_several_runs_trec_blocks(capsys):
    both, _ = cli(capsys, "-m", "official", QRELS, RUN_A, RUN_B)
    a, _ = cli(capsys, QRELS, RUN_A)
    b, _ = cli(capsys, QRELS, RUN_B)
    assert both == a + b
    assert summary(a)["runid"] == "runA" and summary(b)["runid"] == "runB"


def test_json(capsys):
    out, _ = cli(capsys, "--format", "json", "-q", "-m", "map", "-m", "num_ret",
                 "-m", "runid", QRELS, RUN_B)
    data = json.loads(out)
    (entry,) = data["runs"]
    assert entry["run_id"] == "runB" and entry["file"] == str(RUN_B)
    res = irm.evaluate(irm.Qrels.read(str(QRELS)), irm.Run.read(str(RUN_B)),
                       ["map", "num_ret"])
    assert entry["summary"] == {"runid": "runB", "num_ret": res.aggregate()["num_ret"],
                                "map": res.aggregate()["map"]}
    assert isinstance(entry["summary"]["num_ret"], int)
    assert entry["per_query"] == {q: {"num_ret": int(v["num_ret"]), "map": v["map"]}
                                  for q, v in res.to_dict().items()}


def test_json_nan_is_null(capsys):
    out, _ = cli(capsys, "--format", "json", "-M0", "-m", "iprec_at_recall..0", QRELS, RUN_B)
    assert json.loads(out)["runs"][0]["summary"] == {"iprec_at_recall_0.00": None}


@pytest.mark.parametrize("fmt,delimiter", [("csv", ","), ("tsv", "\t")])
def test_delimited(capsys, fmt, delimiter):
    out, _ = cli(capsys, "--format", fmt, "-q", "-m", "map", "-m", "P.5", QRELS, RUN_A, RUN_B)
    rows = list(csv.reader(io.StringIO(out), delimiter=delimiter))
    assert rows[0] == ["run", "file", "scope", "query_id", "measure", "value"]
    body = rows[1:]
    # run A: 5 evaluated queries (4 missing); run B: 6; two measures; plus summaries.
    assert len(body) == (5 + 1) * 2 + (6 + 1) * 2
    values = {(r, f, s, q, m): v for r, f, s, q, m, v in body}
    res = irm.evaluate(irm.Qrels.read(str(QRELS)), irm.Run.read(str(RUN_B)), ["map"])
    summary_b = values[("runB", str(RUN_B), "all", "", "map")]
    assert float(summary_b) == res.aggregate()["map"]  # repr round-trips


def test_markdown_one_table_for_several_runs(capsys):
    out, _ = cli(capsys, "--format", "markdown", "-m", "map", "-m", "P.5", "-m", "runid",
                 QRELS, RUN_A, RUN_B)
    a, _ = cli(capsys, "-m", "map", "-m", "P.5", QRELS, RUN_A)
    b, _ = cli(capsys, "-m", "map", "-m", "P.5", QRELS, RUN_B)
    assert out.splitlines() == [
        "| measure | runA | runB |",
        "|---|---:|---:|",
        "| runid | runA | runB |",
        f"| map | {summary(a)['map']} | {summary(b)['map']} |",
        f"| P_5 | {summary(a)['P_5']} | {summary(b)['P_5']} |",
    ]


def test_markdown_per_query_marks_missing_queries_empty(capsys):
    out, _ = cli(capsys, "--format", "markdown", "-q", "-n", "-m", "map", QRELS, RUN_A, RUN_B)
    lines = out.splitlines()
    assert lines[0] == "| measure | query | runA | runB |"
    row4 = next(line for line in lines if line.startswith("| map | 4 |"))
    assert row4.startswith("| map | 4 |  | ")  # run A lacks query 4


def test_markdown_same_run_ids_use_file_names(capsys):
    out, _ = cli(capsys, "--format", "markdown", "-m", "map", QRELS, RUN_B, RUN_B)
    assert out.splitlines()[0] == f"| measure | {RUN_B} | {RUN_B} |"


def test_help_explains_every_option_with_an_example(capsys):
    assert main(["eval", "--help"]) == 0
    text = capsys.readouterr().out
    for option in ["-q", "-m", "-c", "-l", "-n", "-J", "-M", "-N", "-R", "-T", "-Z", "-v",
                   "--format", "--semantics", "--strict"]:
        assert f"{option} " in text or f"{option}," in text, option
    assert text.count("(e.g.") >= 15
    assert "irmetrics eval -q -m map -m P.10 qrels.txt run.txt" in text


def test_H_lists_measures_from_the_registry(capsys):
    assert main(["eval", "-H"]) == 0
    text = capsys.readouterr().out
    from irmetrics.measures.registry import REGISTRY
    for name in REGISTRY:
        assert f"\n  {name} " in text


def test_top_level_help_and_version(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "eval" in out and "validate" in out and "e.g." in out
    assert main([]) == 1
    assert "usage" in capsys.readouterr().err
    assert main(["--version"]) == 0
    assert "irmetrics" in capsys.readouterr().out
    assert main(["validate", "--help"]) == 0
    assert "irmetrics validate" in capsys.readouterr().out


def test_strict_with_all_queries_present_is_normal(capsys):
    plain, _ = cli(capsys, "-q", QRELS, RUN_B)
    strict, _ = cli(capsys, "--strict", "-q", QRELS, RUN_B)
    assert strict == plain


def test_strict_prints_only_queries_before_the_missing_one(capsys):
    status = main(["eval", "--strict", "-q", "-m", "map", str(QRELS), str(RUN_A)])
    out, err = capsys.readouterr()
    assert status == 4 and err == "trec_eval: result qid '4' not found in qrels\n"
    assert [line.split("\t")[1] for line in out.splitlines()] == ["1", "10", "2", "3"]


def test_missing_warning_lists_first_queries_and_count(tmp_path, capsys):
    (tmp_path / "q").write_text("".join(f"{i} 0 d 1\n" for i in range(10, 30)))
    (tmp_path / "r").write_text("10 Q0 d 1 1 r\n")
    out, err = cli(capsys, "-m", "map", tmp_path / "q", tmp_path / "r")
    assert "19 qrels queries" in err and "'11', '12', '13', '14', '15' and 14 more" in err
    assert out == "map                   \tall\t1.0000\n"


def test_zscore_with_nan_value(tmp_path, capsys):
    # the other queries: stddev 0 and v (NaN) != mean -> -1000000, as trec_eval
    (tmp_path / "z").write_text("1 iprec_at_recall_0.00 0 1\n" + "".join(
        f"{q} iprec_at_recall_0.00 5 0\n" for q in ("10", "2", "3", "4", "5")))
    out, _ = cli(capsys, "-q", "-M0", "-Z", tmp_path / "z", "-m", "iprec_at_recall..0",
                 QRELS, RUN_B)
    lines = out.splitlines()
    assert lines[0] == "Ziprec_at_recall_0.00  \t1\t  -nan"
    assert lines[1] == "Ziprec_at_recall_0.00  \t10\t-1000000.0000"
    assert math.isnan(float(lines[-1].split("\t")[2].replace("-nan", "nan")))
