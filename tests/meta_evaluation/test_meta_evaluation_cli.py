"""``irmetrics agree``, the MetaEvaluation writers and gate, and docs/meta_evaluation.md."""

from __future__ import annotations

import doctest
import io
import json
import os
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import irmetrics as irm
from irmetrics.cli import main
from irmetrics.exceptions import ParameterError

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "meta_evaluation"
RUNS = ["rerank", "dense", "splade", "bm25", "rm3", "weak"]
QRELS = [f"human={FIX / 'qrels.human.txt'}", f"llm={FIX / 'qrels.llm.txt'}"]


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    import sys

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        status = main(list(argv))
    finally:
        sys.stdout, sys.stderr = saved
    return status, out.getvalue(), err.getvalue()


def _agree(*extra, runs=RUNS):
    qrels = [arg for q in QRELS for arg in ("--qrels", q)]
    return cli("agree", *qrels, *extra, *[str(FIX / f"{r}.run") for r in runs])


@pytest.fixture(scope="module")
def meta():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.meta_evaluate({"human": str(FIX / "qrels.human.txt"),
                                  "llm": str(FIX / "qrels.llm.txt")},
                                 {r: str(FIX / f"{r}.run") for r in RUNS},
                                 ["ndcg_cut.10", "map"], n_resamples=200, swap_trials=100)


def test_docs_worked_example_is_current(monkeypatch):
    doc = (ROOT / "docs" / "meta_evaluation.md").read_text()
    shown = doc.split("prints\n\n```\n", 1)[1].split("\n```", 1)[0]
    monkeypatch.chdir(FIX)
    status, out, _ = cli("agree", "--qrels", "human=qrels.human.txt", "--qrels",
                         "llm=qrels.llm.txt", "-m", "ndcg_cut.10", *[f"{r}.run" for r in RUNS])
    assert status == 0 and out.rstrip("\n") == shown
    status, _, err = cli("agree", "--qrels", "human=qrels.human.txt", "--qrels",
                         "llm=qrels.llm.txt", "-m", "ndcg_cut.10", "--fail-if", "tau_ap<0.7",
                         "--fail-if", "kappa<0.6", *[f"{r}.run" for r in RUNS])
    assert status == 3 and err.strip() in doc
    # The Python session of the page, run as a doctest from the repository root.
    session = doc.split("```pycon\n", 1)[1].split("\n```", 1)[0]
    monkeypatch.chdir(ROOT)
    test = doctest.DocTestParser().get_doctest(session, {}, "meta_evaluation.md", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runner.run(test)
    assert runner.failures == 0 and runner.tries > 10


def test_fixtures_are_what_make_py_writes(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", FIX / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.HERE = tmp_path
    module.main()
    for path in sorted(tmp_path.iterdir()):
        assert path.read_bytes() == (FIX / path.name).read_bytes(), path.name


@pytest.mark.parametrize("fmt", ["markdown", "latex", "json", "csv", "table"])
def test_every_format_is_written(fmt, tmp_path):
    target = tmp_path / f"out.{fmt}"
    status, out, _ = _agree("-m", "P.10", "--resamples", "50", "--swap-trials", "20",
                            "--format", fmt, "-o", str(target))
    assert status == 0 and out == ""
    text = target.read_text()
    if fmt == "json":
        data = json.loads(text)
        assert data["reference"] == "human" and data["measures"] == ["P_10"]
        assert data["rankings"][0]["qrels"] == "llm"
        assert sum(map(sum, data["judges"]["llm"]["confusion"])) == 1143
    elif fmt == "csv":
        frame = pl.read_csv(io.StringIO(text))
        assert frame.columns == ["section", "reference", "qrels", "run", "measure",
                                 "statistic", "value", "ci_low", "ci_high"]
        kappa = frame.filter(section="judges", statistic="kappa")["value"].item()
        assert kappa == pytest.approx(0.7004, abs=1e-4)
    elif fmt == "latex":
        assert text.count(r"\begin{tabular}") == 5 and r"tau\_b" in text
    elif fmt == "markdown":
        assert "| qrels | measure |" in text and "human \\\\ llm" in text


def test_html_page(tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "agree.html"
    status, _, _ = _agree("-m", "ndcg_cut.10", "--resamples", "50", "--swap-trials", "20",
                          "--format", "html", "-o", str(target))
    page = target.read_text()
    assert status == 0 and page.startswith("<!DOCTYPE html>")
    # the scatter of means, the label confusion, the rank intervals under each qrels set
    assert page.count("<svg") == 4 and page.count("ndcg_cut_10 under ") >= 2
    assert "http://" not in page.replace("http://www.w3.org", "") and "<script" not in page
    again = tmp_path / "again.html"
    _agree("-m", "ndcg_cut.10", "--resamples", "50", "--swap-trials", "20", "--format", "html",
           "-o", str(again))
    assert again.read_text() == page  # the same bytes


def test_gate_conditions(meta):
    assert meta.failures([]) == []
    assert meta.failures(["tau_b<0.5"]) == []
    failed = meta.failures(["tau_b<=0.9", "kappa<0.8", "power>=0.5"])
    assert any("tau_b = 0.8667 <= 0.9" in f for f in failed)
    assert "judges 'llm' vs 'human': kappa = 0.7004 < 0.8" in failed
    assert sum("power" in f for f in failed) == 4
    with pytest.raises(ParameterError, match="statistic among"):
        meta.failures(["tau<0.9"])
    with pytest.raises(ParameterError, match="STATISTIC OP NUMBER"):
        meta.failures(["tau_b is low"])
    nan_meta = irm.meta_evaluate({"a": {"q": {"d": 1}, "r": {"e": 1}},
                                  "b": {"q": {"d": 1}, "r": {"e": 1}}},
                                 {"x": {"q": {"d": 1.0}, "r": {"e": 1.0}},
                                  "y": {"q": {"d": 1.0}, "r": {"e": 1.0}}}, "P.1",
                                 n_resamples=10, swap_trials=3)
    assert "undefined" in nan_meta.failures(["tau_b<0.9"])[0]  # every run tied: no tau


def test_cli_errors_and_leaderboard(tmp_path):
    status, _, err = cli("agree", "--qrels", QRELS[0], str(FIX / "bm25.run"),
                         str(FIX / "dense.run"))
    assert status == 1 and "two or more --qrels" in err
    status, _, err = _agree("--reference", "nobody")
    assert status == 1 and "'nobody' is not one of the --qrels" in err
    status, _, err = _agree("--fail-if", "tau_b ~ 3")
    assert status == 1 and "--fail-if" in err
    status, _, err = _agree(runs=["bm25"])
    assert status == 1 and "at least two runs" in err
    board = tmp_path / "board.txt"
    board.write_text("# published\n" + "".join(f"{r}.run {0.9 - i / 10}\n"
                                               for i, r in enumerate(RUNS)))
    status, out, _ = cli("agree", "--qrels", QRELS[1], "--leaderboard", str(board), "-m", "map",
                         "--resamples", "30", "--swap-trials", "10",
                         *[str(FIX / f"{r}.run") for r in RUNS])
    assert status == 0 and "Ranking agreement with the reference leaderboard" in out
    assert "Judges" not in out
    board.write_text("bm25.run x\n")
    status, _, err = cli("agree", "--qrels", QRELS[1], "--leaderboard", str(board),
                         str(FIX / "bm25.run"), str(FIX / "dense.run"))
    assert status == 2 and "is not a number" in err


def test_qrels_names_from_files_and_reference(tmp_path):
    status, out, _ = cli("agree", "--qrels", str(FIX / "qrels.human.txt"), "--qrels",
                         str(FIX / "qrels.llm.txt"), "--reference", "qrels.llm.txt", "-m", "P.10",
                         "--resamples", "20", "--swap-trials", "5",
                         str(FIX / "bm25.run"), str(FIX / "dense.run"), str(FIX / "weak.run"))
    assert status == 0 and "Ranking agreement with 'qrels.llm.txt'" in out
    assert "qrels.human.txt  P_10" in out


def test_meta_evaluation_tables_match_the_grid(meta):
    grid = meta.grid
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rankings = grid.ranking_agreement("human", measures=meta.measures, n_resamples=200)
    assert meta.rankings.equals(rankings)
    judges = irm.judge_agreement(str(FIX / "qrels.human.txt"), str(FIX / "qrels.llm.txt"))
    assert meta.judges["llm"].overall == judges.overall
    np.testing.assert_array_equal(meta.judges["llm"].confusion, judges.confusion)
    assert set(meta.stability.columns) >= {"power", "swap_rate", "min_difference"}
    assert os.linesep not in meta.describe()


def test_cli_bytes_do_not_depend_on_thread_count():
    import subprocess
    import sys

    argv = [sys.executable, "-m", "irmetrics", "agree", "--format", "json", "--resamples", "300",
            "--swap-trials", "200", "--test", "bootstrap", "-m", "map", "-m", "P.10",
            *[a for q in QRELS for a in ("--qrels", q)], *[str(FIX / f"{r}.run") for r in RUNS]]
    outputs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads,
                   MKL_NUM_THREADS=threads, POLARS_MAX_THREADS=threads,
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
