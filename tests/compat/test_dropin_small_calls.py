"""Small calls through the ir_measures drop-in (issue 34 item 6): what the per-call
overhead work keeps the same. A dict of str keys skips the duplicate search (its pairs
are distinct by construction) and gives the same table; keys that collide once converted
still raise; benchmarks/bench_dropins.py's small case times import, parsing, first and
warm calls and gives ir_measures' aggregates, order included."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from irmetrics.containers import Qrels, Run, tables
from irmetrics.exceptions import DuplicateEntryError

ROOT = Path(__file__).resolve().parents[2]


def test_str_keyed_dicts_skip_the_duplicate_search(monkeypatch):
    def searched(df, **kwargs):
        raise AssertionError("duplicate search on a dict whose pairs are distinct")

    qrels = {"1": {"a": 1, "b": 0}, "2": {"a": 2}}
    want = Qrels.from_records([("1", "a", 1), ("1", "b", 0), ("2", "a", 2)]).df
    monkeypatch.setattr(tables, "resolve_duplicates", searched)
    assert Qrels.from_dict(qrels).df.equals(want)
    assert Run.from_dict({"1": {"a": 0.5}}).df["score"].to_list() == [0.5]
    assert Qrels.from_dict({1: {"a": 1}, "2": {"a": 0}}).query_ids == ["1", "2"]  # distinct
    # keys that convert to one id, or int doc ids, may collide: those are still searched
    with pytest.raises(AssertionError, match="duplicate search"):
        Qrels.from_dict({1: {"a": 1}, "1": {"b": 0}})
    with pytest.raises(AssertionError, match="duplicate search"):
        Run.from_dict({"1": {7: 1.0}})


def test_colliding_keys_still_raise():
    with pytest.raises(DuplicateEntryError):
        Qrels.from_dict({1: {"a": 1}, "1": {"a": 0}})
    with pytest.raises(DuplicateEntryError):
        Run.from_dict({"1": {7: 1.0, "7": 2.0}})


def test_small_benchmark_child_times_every_step_and_matches_ir_measures():
    pytest.importorskip("ir_measures")
    pytest.importorskip("pytrec_eval")
    spec = importlib.util.spec_from_file_location("bench_dropins",
                                                  ROOT / "benchmarks" / "bench_dropins.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ours = bench._small_child("small compat", 5, 3)
    theirs = bench._small_child("small ir_measures", 5, 3)
    for result in (ours, theirs):
        assert {"import_s", "parse_s", "first_s", "cold_s", "warm_s"} <= set(result)
        assert result["cold_s"] >= result["first_s"]
    assert (ours["digest"], ours["order"]) == (theirs["digest"], theirs["order"])
