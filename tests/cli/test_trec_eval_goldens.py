"""The real trec_eval 10's outputs, recorded once (fixtures/trec_eval/, by
tests/trec_eval_goldens/record.py from usnistgov/trec_eval at the commit the file names),
replayed byte for byte through ``irmetrics eval`` in every run.

Where trec_eval 10 stops with exit 4 (a qrels query the run lacks, without ``-c``),
irmetrics skips that query with a warning instead (docs/semantics.md): its stdout then
starts with every line trec_eval printed before stopping.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from irmetrics.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "fixtures" / "trec_eval" / "trec_eval-10.0.json"
DATA = json.loads(GOLDEN.read_text())


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Every input file of the golden, in one directory."""
    where = tmp_path_factory.mktemp("trec_eval_inputs")
    for name, content in DATA["files"].items():
        if isinstance(content, dict):
            shutil.copyfile(ROOT / content["fixture"], where / name)
        else:
            (where / name).write_text(content)
    return where


def test_provenance_and_size():
    meta = DATA["trec_eval"]
    assert meta["repository"] == "https://github.com/usnistgov/trec_eval"
    assert len(meta["commit"]) == 40 and meta["version"].startswith("trec_eval version 10.")
    exact = [c for c in DATA["cases"] if c["status"] == 0]
    assert len(exact) >= 500
    # every option family the issue names has byte-exact cases
    flags = {a for c in exact for a in c["args"]}
    assert {"-q", "-c", "-J", "-n", "-Z", "prefs", "qrels_prefs", "qrels_jg", "all_trec",
            "all_prefs", "-l2", "-M0", "-M3"} <= flags


def test_recorded_fixtures_are_unchanged():
    """The repository fixtures a case names are the bytes trec_eval read."""
    for name, content in DATA["files"].items():
        if isinstance(content, dict):
            digest = hashlib.sha256((ROOT / content["fixture"]).read_bytes()).hexdigest()
            assert digest == content["sha256"], (
                f"{content['fixture']} changed since it was recorded; re-record with "
                "tests/trec_eval_goldens/record.py")


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["cases"]])
def test_replay(case, inputs, capsysbinary, monkeypatch):
    monkeypatch.chdir(inputs)
    status = main(["eval", "--quiet", *case["args"]])
    out, err = capsysbinary.readouterr()
    assert status == 0, err
    want = case["stdout"].encode("ascii")
    if case["status"] == 0:
        assert out == want
    else:
        assert out.startswith(want)


def test_the_recorder_in_the_repository_made_this_file():
    """The recorder's cases and inputs are those recorded (only trec_eval's stdout is not
    recomputed here): a change to record.py without re-recording fails."""
    from tests.trec_eval_goldens.record import all_cases

    files, cases = all_cases(seeds=40, prefs_seeds=12)
    assert files == DATA["files"]
    assert [(n, a) for n, a in cases] == [(c["name"], c["args"]) for c in DATA["cases"]]
