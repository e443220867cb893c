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


def test_tie_report_zero_tied_entries_means_best_equals_worst():
    # docs/semantics.md: a count of 0 promises that no tie order changes the measure
    import random

    import irmetrics as irm

    names = ["P.1,3", "recall.3", "success.2", "recip_rank", "map", "ndcg", "ndcg_cut.3",
             "Rprec", "relative_P.2", "map_cut.3", "num_rel_ret", "dcg"]
    rng = random.Random(15)
    rows = 0
    for _ in range(40):
        qrels, run = {}, {}
        for q in range(rng.randint(1, 3)):
            docs = list(dict.fromkeys(f"d{rng.randint(0, 20)}" for _ in range(rng.randint(1, 7))))
            qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2, -1]) for d in docs if rng.random() < 0.7}
            qrels[f"q{q}"][f"z{q}"] = 1
            run[f"q{q}"] = {d: float(rng.randint(0, 2)) for d in docs}
        for options in ({}, {"max_docs": 2}, {"judged_only": True}, {"relevance_level": 2}):
            for row in irm.tie_report(qrels, run, names, **options).summary.iter_rows(named=True):
                rows += 1
                if row["tied_entries"] == 0:
                    assert row["best"] == pytest.approx(row["worst"], abs=1e-12), (row, options)
    assert rows == 40 * 4 * 13  # 13 output names
