"""Review of issue 15 (ties, tie report, float relevance): defects found by a new user."""

from __future__ import annotations

import pytest

from irmetrics.cli import main

QRELS = "q1 0 a 1\nq1 0 b 0\n"
RUN = "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 1.0 r\n"


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return str(qrels), str(run)


@pytest.mark.parametrize("option", ["-q", "-n"])
def test_tie_report_refuses_per_query_and_summary_options(capsys, files, option):
    # the report prints one summary table per run: -q (per-query lines) and -n (no
    # summary) were silently ignored, so a user asking for per-query values got none
    status = main(["eval", "--tie-report", option, "-m", "P.1", *files])
    out, err = capsys.readouterr()
    assert status == 1 and out == "" and err.count("\n") == 1
    assert option in err and "--tie-report" in err
