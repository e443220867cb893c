"""benchmarks/bench_fusion.py times irmetrics' fusion against ranx's (issue 37): its
inputs must be what each library would build from a user's dict, or the ratio it
prints is unfair to one side. ranx's runs are built from arrays without the dict (to
fit 10,000 queries in memory): the same numba dicts as ``ranx.Run(dict)``, from arrays
of the same widths (a 21-character width made ranx.fuse 1.6-2.4x slower); irmetrics'
runs equal ``Run.from_dict``; and the same-process mode runs end to end and finds the
values equal."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from irmetrics import Run

ranx = pytest.importorskip("ranx", reason="the benchmark's comparison needs ranx")

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location("bench_fusion",
                                                  ROOT / "benchmarks" / "bench_fusion.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def as_dict(picks, scores):
    docs = np.char.add("d", picks.astype(str))
    return {str(q): dict(zip(docs[q].tolist(), scores[q].tolist()))
            for q in range(picks.shape[0])}


def test_ranx_runs_are_what_ranx_builds_from_the_dict(monkeypatch):
    bench = load_script()
    common = pytest.importorskip("ranx.data_structures.common")
    seen = []
    real = common.create_and_sort

    def spy(q_ids, doc_ids, scores):
        seen.append(([a.dtype for a in doc_ids], [a.dtype for a in scores]))
        return real(q_ids, doc_ids, scores)

    # both roads call ranx's builder: Run(dict) through its module, the script directly
    monkeypatch.setattr(common, "create_and_sort", spy)
    monkeypatch.setattr(ranx.data_structures.run, "create_and_sort", spy)
    # ids of different lengths (d0 .. d1999) and several queries
    for picks, scores in bench.make_runs(7, 30, 2, seed=3):
        ours = bench.ranx_run(picks, scores, "r")
        theirs = ranx.Run(as_dict(picks, scores), name="r")
        assert list(ours.run.keys()) == list(theirs.run.keys())
        for q in theirs.run.keys():
            assert list(ours.run[q].items()) == list(theirs.run[q].items())  # same order
        assert ours.sorted and theirs.sorted
    # the arrays handed to ranx's builder: the dict road's dtypes (id width, float64)
    assert len(seen) == 4 and seen[0] == seen[1] and seen[2] == seen[3]


def test_irmetrics_runs_equal_the_dict_road():
    bench = load_script()
    for picks, scores in bench.make_runs(5, 12, 2, seed=4):
        built = bench.irmetrics_run(picks, scores, "r")
        assert built.to_dict() == Run.from_dict(as_dict(picks, scores)).to_dict()


def test_same_process_mode_agrees_with_ranx(capsys):
    bench = load_script()
    args = argparse.Namespace(queries=6, docs=25, runs=3, repeats=1, seed=1,
                              methods="rrf,sum", norm="min-max", shared_docs=False,
                              numba_threads=0, gc_freeze=False, malloc_trim=False)
    bench.same_process(args)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["method"] for line in lines] == ["rrf", "sum"]
    assert all(line["values_agree"] for line in lines)
    assert all(line["irmetrics_gc"] >= 0 and line["ratio"] > 0 for line in lines)
