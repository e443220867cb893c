"""`irmetrics eval --ties/--tie-report` and `irmetrics compare --ties`."""

from __future__ import annotations

import pytest

import irmetrics as irm
from irmetrics.cli import main

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 a 2\n"
# q1: a and b tie (trec_eval puts b first), q2: a and b tie (b first)
RUN = "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 1.0 r\nq1 Q0 c 3 0.5 r\nq2 Q0 a 1 1 r\nq2 Q0 b 2 1 r\n"


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return str(qrels), str(run)


@pytest.fixture
def cli(capsys):
    def run(*argv):
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err
    return run


def summary(text):
    return {line.split()[0]: float(line.split()[2]) for line in text.splitlines()}


@pytest.mark.parametrize("ties", ["trec_eval", "input_order", "expected"])
def test_ties_option_matches_the_library(cli, files, ties):
    status, out, err = cli("eval", "--ties", ties, "-m", "map", "-m", "P.1", "-m", "recip_rank",
                           *files)
    assert status == 0, err
    want = irm.evaluate(*files, ["map", "P.1", "recip_rank"], ties=ties).aggregate()
    got = summary(out)
    assert got == pytest.approx({k: round(v, 4) for k, v in want.items()}, abs=1e-12)


def test_input_order_reads_the_file_order(cli, files):
    _, out, _ = cli("eval", "-m", "P.1", *files)
    assert summary(out)["P_1"] == 0.0            # b first in both queries
    _, out, _ = cli("eval", "--ties", "input_order", "-m", "P.1", *files)
    assert summary(out)["P_1"] == 1.0            # a first, as in the file


def test_tie_report_table(cli, files):
    status, out, err = cli("eval", "--tie-report", "-m", "P.1,3", "-m", "map", *files)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == f"# {files[1]}"
    assert lines[1].split() == ["measure", "tied", "trec_eval", "expected", "best", "worst"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    report = irm.tie_report(*files, ["P.1,3", "map"])
    for row in report.summary.iter_rows(named=True):
        printed = rows[row["measure"]]
        assert int(printed[0]) == row["tied_entries"]
        assert [float(v) for v in printed[1:]] == pytest.approx(
            [round(row[p], 4) for p in ("trec_eval", "expected", "best", "worst")], abs=1e-12)
    assert rows["P_1"][0] == "4" and rows["P_3"][0] == "0"   # P@3 holds both whole ties


def test_tie_report_default_measures_are_the_accepted_official_ones(cli, files):
    status, out, _ = cli("eval", "--tie-report", *files)
    assert status == 0
    names = [line.split()[0] for line in out.splitlines()[2:]]
    assert names[:4] == ["num_q", "num_ret", "num_rel", "num_rel_ret"]
    assert "map" in names and "bpref" not in names and "gm_map" not in names


@pytest.mark.parametrize("argv, status, message", [
    (("--ties", "expected", "-m", "bpref"), 2, "exact expected value"),
    (("--ties", "random",), 1, "invalid choice: 'random'"),
    (("--tie-report", "--format", "json"), 1, "--tie-report prints its own table"),
    (("--ties", "expected", "-J", "-M", "3", "-m", "map"), 2,
     "`max_docs` must be None when judged_only"),
])
def test_errors_are_one_line(cli, files, argv, status, message):
    code, out, err = cli("eval", *argv, *files)
    assert code == status and message in err and err.count("\n") == 1 and out == ""


def test_compare_passes_ties_through(cli, files, tmp_path):
    other = tmp_path / "run2"
    other.write_text(RUN.replace("1.0 r", "1.0 s"))
    status, out, err = cli("compare", "--ties", "expected", "-m", "P.1", "--format", "csv",
                           files[0], files[1], str(other))
    assert status == 0, err
    assert "0.5" in out                           # expected P@1 of both runs
    status, _, err = cli("compare", "--ties", "expected", "-m", "bpref",
                         files[0], files[1], str(other))
    assert status == 2 and "exact expected value" in err


def test_compare_api_takes_ties_and_float_relevance():
    qrels = {"q1": {"a": 0.5, "b": 0.0}, "q2": {"a": 2.5}}
    runs = {"one": {"q1": {"a": 1.0, "b": 1.0}, "q2": {"a": 1.0, "b": 1.0}},
            "two": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"b": 2.0, "a": 1.0}}}
    cmp = irm.compare(qrels, runs, ["ndcg"], ties="expected", relevance="float")
    row = cmp.table().row(0, named=True)          # "two" against the baseline "one"
    want = {name: sum(irm.evaluate(qrels, run, ["ndcg"], ties="expected", relevance="float")
                      .values("ndcg")) / 2 for name, run in runs.items()}
    assert (row["system"], row["baseline"]) == ("two", "one")
    assert row["mean"] == pytest.approx(want["two"])
    assert row["mean"] - row["diff"] == pytest.approx(want["one"])
