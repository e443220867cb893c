"""``irds:<dataset id>`` qrels and ranx's JSON, wherever qrels go (read_qrels, evaluate,
compare, evaluate_grid, judge agreement, the CLI's eval, compare and agree).

No download: the dataset is registered with ir_datasets' own registry from a local copy
of fixtures/compare/qrels.txt, and every result is checked against the file read
directly.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

import irmetrics as irm
import irmetrics.io
from irmetrics.cli import main
from irmetrics.exceptions import InputFormatError
from irmetrics.io import read_qrels, read_ranx_qrels, read_ranx_run
from irmetrics.meta_evaluation import evaluate_grid

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "compare"
QRELS = FIXTURES / "qrels.txt"
RUNS = [str(FIXTURES / n) for n in ("bm25.run", "dense.run", "tweak.run")]
DATASET = "irmetrics-tests/compare-fixture"
IRDS = f"irds:{DATASET}"


@pytest.fixture(scope="module")
def dataset():
    ir_datasets = pytest.importorskip("ir_datasets", reason="irds: qrels need ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import LocalDownload

    try:
        ir_datasets.registry.register(DATASET, Dataset(TrecQrels(LocalDownload(QRELS), {})))
    except RuntimeError:  # registered by an earlier module in this process
        pass
    return IRDS


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_read_qrels_equals_the_file(dataset):
    got = read_qrels(dataset)
    assert got.df.equals(read_qrels(str(QRELS)).df)
    assert got.path == dataset
    assert irm.io.read_irds_qrels(dataset, relevance="float").df["relevance"].dtype.is_float()


def test_evaluate_compare_and_grid_take_an_irds_id(dataset):
    measures = ["map", "ndcg_cut.10", "P.5"]
    for run in RUNS:
        assert irm.evaluate(dataset, run, measures).to_dict() == \
            irm.evaluate(str(QRELS), run, measures).to_dict()
    ours = irm.compare(dataset, RUNS[:2], ["map"]).to_json()
    assert ours == irm.compare(str(QRELS), RUNS[:2], ["map"]).to_json()
    grid = evaluate_grid({"irds": dataset, "file": str(QRELS)}, RUNS, ["map"])
    per_qrels = grid.aggregate().sort("run")
    assert per_qrels.filter(per_qrels["qrels"] == "irds")["value"].to_list() == \
        per_qrels.filter(per_qrels["qrels"] == "file")["value"].to_list()


def test_cli_eval_compare_agree_take_an_irds_id(dataset):
    assert cli("eval", "-m", "all_trec", dataset, RUNS[0]) == \
        cli("eval", "-m", "all_trec", str(QRELS), RUNS[0])
    status, out, err = cli("compare", "-m", "map", dataset, *RUNS[:2])
    assert status == 0, err
    assert out == cli("compare", "-m", "map", str(QRELS), *RUNS[:2])[1]
    status, out, err = cli("agree", "--format", "json", "--qrels", f"a={dataset}",
                           "--qrels", f"b={QRELS}", *RUNS)
    assert status == 0, err
    means = json.loads(out)["means"]
    # the two judgment sets are one: every run scores the same under both
    assert [m["value"] for m in means if m["qrels"] == "a"] == \
        [m["value"] for m in means if m["qrels"] == "b"]


def test_fuse_trains_on_an_irds_id(dataset):
    from irmetrics.fusion import fuse

    assert fuse(RUNS, "posfuse", qrels=dataset).df.equals(
        fuse(RUNS, "posfuse", qrels=str(QRELS)).df)


def test_unknown_id_and_missing_package_are_clear(dataset, monkeypatch):
    with pytest.raises(InputFormatError, match="irds:no/such-dataset: ir_datasets knows no"):
        read_qrels("irds:no/such-dataset")
    status, _, err = cli("eval", "-m", "map", "irds:no/such-dataset", RUNS[0])
    assert status == 2 and err.count("\n") == 1 and "knows no dataset" in err
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    with pytest.raises(ImportError, match=r'pip install "irmetrics-exact\[irds\]"'):
        irm.evaluate("irds:msmarco-passage/trec-dl-2019/judged", RUNS[0], ["map"])


def test_ranx_json_qrels_and_runs(tmp_path):
    qrels = read_qrels(str(QRELS)).to_dict()
    run = irm.io.read_run(RUNS[0]).to_dict()
    (tmp_path / "qrels.json").write_text(json.dumps(qrels))
    (tmp_path / "bm25.json").write_text(json.dumps(run))
    assert read_ranx_qrels(tmp_path / "qrels.json").to_dict() == qrels
    got = read_ranx_run(tmp_path / "bm25.json")
    assert got.name == "bm25" and got.to_dict() == run
    assert irm.evaluate(str(tmp_path / "qrels.json"), got, ["map"]).to_dict() == \
        irm.evaluate(str(QRELS), RUNS[0], ["map"]).to_dict()
    # a .json run wherever runs go: evaluate, compare (API and CLI), fuse
    json_run = str(tmp_path / "bm25.json")
    assert irm.evaluate(str(QRELS), json_run, ["map", "P.5"]).to_dict() == \
        irm.evaluate(str(QRELS), RUNS[0], ["map", "P.5"]).to_dict()
    assert cli("compare", "-m", "map", str(QRELS), json_run, RUNS[1])[0] == 0
    assert evaluate_grid([str(QRELS)], {"a": json_run, "b": RUNS[1]}, ["map"]).aggregate() \
        ["value"].to_list() == evaluate_grid([str(QRELS)], {"a": RUNS[0], "b": RUNS[1]},
                                             ["map"]).aggregate()["value"].to_list()
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(InputFormatError, match="bad.json: expected a JSON object"):
        read_ranx_qrels(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(InputFormatError, match="broken.json: not JSON"):
        read_ranx_run(tmp_path / "broken.json")


# ---- autojudge-evaluate leaderboards in `irmetrics agree --leaderboard` ---------------------

META = Path(__file__).resolve().parents[2] / "fixtures" / "meta_evaluation"
META_RUNS = [str(META / f"{r}.run") for r in ("rerank", "dense", "splade", "bm25", "weak")]


def _agree_json(board, *extra):
    status, out, err = cli("agree", "--format", "json", "--qrels",
                           f"llm={META / 'qrels.llm.txt'}", "--leaderboard", str(board), "-m",
                           "map", "--resamples", "20", "--swap-trials", "5", *extra, *META_RUNS)
    assert status == 0, err
    return json.loads(out)


def test_autojudge_tot_and_jsonl_leaderboards_read_as_irmetrics_lines(tmp_path):
    # The autojudge files hold per-topic values (tot) or an "all" row (jsonl) and a second
    # measure; the irmetrics board holds the same means.
    names = [Path(r).name for r in META_RUNS]
    topics = {name: [0.2 + i / 10, 0.4 + i / 20, 0.9 - i / 7] for i, name in enumerate(names)}
    plain = tmp_path / "board.txt"
    plain.write_text("".join(f"{n} {sum(v) / 3!r}\n" for n, v in topics.items()))
    tot = tmp_path / "board.eval.txt"
    tot.write_text("".join(f"{n}\tNUGGET_RECALL\t{t}\t{v!r}\n{n}\tOTHER\t{t}\t{1 - v!r}\n"
                           for n, vs in topics.items() for t, v in enumerate(vs, start=1)))
    jsonl = tmp_path / "board.eval.jsonl"
    jsonl.write_text("".join(json.dumps({"run_id": n, "topic_id": "all",
                                         "measure": "NUGGET_RECALL", "value": sum(v) / 3}) + "\n"
                             for n, v in topics.items()))
    expected = _agree_json(plain)
    for board, extra in ((tot, ["--leaderboard-measure", "NUGGET_RECALL"]), (jsonl, []),
                         (tot, ["--leaderboard-format", "tot", "--leaderboard-measure",
                                "NUGGET_RECALL"])):
        got = _agree_json(board, *extra)
        assert got["rankings"] == expected["rankings"], board


def test_autojudge_leaderboard_errors_name_file_and_line(tmp_path):
    board = tmp_path / "bad.eval.txt"
    board.write_text("bm25.run M 1 0.5\nbm25.run M 1 0.6\n")
    status, _, err = cli("agree", "--qrels", f"llm={META / 'qrels.llm.txt'}", "--leaderboard",
                         str(board), *META_RUNS)
    assert status == 2 and f"{board}:2: a second value for run 'bm25.run'" in err
    board.write_text('{"run_id": "a", "topic_id": "1", "measure": "M"}\n')
    status, _, err = cli("agree", "--qrels", f"llm={META / 'qrels.llm.txt'}", "--leaderboard",
                         str(board), *META_RUNS)
    assert status == 2 and ":1: expected a JSON object with run_id" in err
    board.write_text("a M 1 nan\n")
    status, _, err = cli("agree", "--qrels", f"llm={META / 'qrels.llm.txt'}", "--leaderboard",
                         str(board), *META_RUNS)
    assert status == 2 and "'nan' is not a finite number" in err
    board.write_text("a M 1 0.5\n")
    status, _, err = cli("agree", "--qrels", f"llm={META / 'qrels.llm.txt'}", "--leaderboard",
                         str(board), "--leaderboard-measure", "X", *META_RUNS)
    assert status == 2 and "no leaderboard line for measure 'X'" in err
