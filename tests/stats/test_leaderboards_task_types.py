"""MTEB's task-type averaging (issue 38): "Mean (TaskType)", the mean over task types of
each type's mean of task means, with its Borda rank; read from long tables (a type column
or a mapping) and MTEB's result files; rank intervals that resample tasks within their
type. Against a hand-computed example and, where mteb is installed, mteb's own
leaderboard aggregation."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import polars as pl
import pytest

from irmetrics import leaderboards as lb
from irmetrics.cli import main
from irmetrics.exceptions import (DegenerateTestWarning, InputFormatError, ParameterError,
                                  ShapeError)
from irmetrics.stats import rank_intervals as ri

FIX = "fixtures/leaderboards"

# 3 systems, 4 tasks: two "Retrieval" (2 and 3 topics), one "STS", one "Clustering"
TASKS = [np.array([[0.2, 0.4, 0.1], [0.4, 0.2, 0.3]]),            # means .3 .3 .2
         np.array([[0.9, 0.3, 0.6], [0.6, 0.6, 0.6], [0.6, 0.3, 0.3]]),  # .7 .4 .5
         np.array([[0.1, 0.8, 0.5]]),                               # .1 .8 .5
         np.array([[0.5, 0.5, 0.9], [0.3, 0.5, 0.7]])]              # .4 .5 .8
TYPES = ["Retrieval", "Retrieval", "STS", "Clustering"]
# by hand: Retrieval means (.5, .35, .35); type mean = (Retrieval + STS + Clustering) / 3
HAND_TYPE_MEAN = [(0.5 + 0.1 + 0.4) / 3, (0.35 + 0.8 + 0.5) / 3, (0.35 + 0.5 + 0.8) / 3]
HAND_TASK_MEAN = [(0.3 + 0.7 + 0.1 + 0.4) / 4, (0.3 + 0.4 + 0.8 + 0.5) / 4,
                  (0.2 + 0.5 + 0.5 + 0.8) / 4]
# Borda points per task, m - average rank: t1 (1.5 1.5 0) t2 (2 0 1) t3 (0 2 1)
# t4 (0 1 2): sums 3.5, 4.5, 4 -> ranks 3, 1, 2
HAND_BORDA_RANK = [3, 1, 2]


def _benchmark() -> lb.Benchmark:
    rows = [{"task": f"t{t}", "topic": str(i), "system": f"s{j}", "score": float(v),
             "kind": TYPES[t]}
            for t, matrix in enumerate(TASKS) for i, row in enumerate(matrix)
            for j, v in enumerate(row)]
    return lb.from_long_table(pl.DataFrame(rows), task_type="kind")


def test_type_mean_by_hand():
    got = ri.aggregate_scores(TASKS, aggregation="type_mean", task_types=TYPES)
    np.testing.assert_allclose(got, HAND_TYPE_MEAN, atol=1e-12)
    b = _benchmark()
    assert b.task_types == TYPES
    table = lb.summary_table(b)
    assert table["system"].to_list() == ["s1", "s2", "s0"]  # best Borda rank first
    by = {r["system"]: r for r in table.iter_rows(named=True)}
    for j in range(3):
        row = by[f"s{j}"]
        assert row["rank_borda"] == HAND_BORDA_RANK[j]
        assert row["mean_task"] == pytest.approx(HAND_TASK_MEAN[j], abs=1e-12)
        assert row["mean_task_type"] == pytest.approx(HAND_TYPE_MEAN[j], abs=1e-12)
    assert table.columns[4:] == ["Retrieval", "STS", "Clustering"]
    assert by["s0"]["Retrieval"] == pytest.approx(0.5, abs=1e-12)
    r = lb.rank_systems(b, aggregation="type_mean", resampling="topics", n_resamples=200)
    np.testing.assert_allclose(r.score, HAND_TYPE_MEAN, atol=1e-12)


def test_task_resampling_stays_within_types():
    """Type-stratified draws: with one Retrieval task fixed and two STS tasks, every
    resampled type mean is 0.5 * Retrieval + 0.5 * (a mean of two draws of the STS tasks);
    an unstratified draw (a Retrieval task in an STS slot) gives other values."""
    tasks = [np.array([[1.0, 0.0]]), np.array([[0.2, 0.6]]), np.array([[0.4, 0.2]])]
    strata = ri._type_strata(["R", "S", "S"], 3, "type_mean")
    weights = ri._type_weights(strata, 3)
    np.testing.assert_allclose(weights, [0.5, 0.25, 0.25])
    boot = ri._resampled_scores(tasks, "type_mean", "tasks", 300, 0, 1, strata, weights)
    sts = {0.2, 0.4, 0.3}
    allowed = {round(0.5 + 0.5 * v, 12) for v in sts}
    assert {round(v, 12) for v in boot[:, 0]} <= allowed
    assert len({round(v, 12) for v in boot[:, 0]}) == 3  # it does vary within STS
    plain = ri._resampled_scores(tasks, "type_mean", "tasks", 300, 0, 1, None, weights)
    assert not {round(v, 12) for v in plain[:, 0]} <= allowed  # the test can fail
    with pytest.warns(DegenerateTestWarning, match=r"tasks \[0\] are the only task of their"):
        ri.aggregate_rank_intervals(tasks, aggregation="type_mean", resampling="tasks",
                                    task_types=["R", "S", "S"], n_resamples=50)


def test_type_mean_needs_types():
    with pytest.raises(ParameterError, match="`task_types` must be one type per task"):
        ri.aggregate_scores(TASKS, aggregation="type_mean")
    with pytest.raises(ShapeError, match="one type per task"):
        ri.aggregate_scores(TASKS, aggregation="type_mean", task_types=["a"])
    untyped = lb.from_long_table(f"{FIX}/benchmark.csv")
    with pytest.raises(ParameterError, match="'type_mean' needs each task's type"):
        lb.rank_systems(untyped, aggregation="type_mean")


def test_readers_take_types_from_a_column_a_mapping_or_the_files(tmp_path):
    typed = lb.from_long_table(f"{FIX}/benchmark.csv",
                               task_types=dict(pl.read_csv(f"{FIX}/task_types.csv").rows()))
    assert typed.task_types == ["Retrieval"] * 4 + ["Reranking"] * 2 + ["STS"] * 2
    rows = pl.DataFrame({"task": ["a", "a", "b", "b"], "topic": ["1"] * 4,
                         "system": ["x", "y"] * 2, "score": [0.1, 0.2, 0.3, 0.4],
                         "kind": ["R", "S", "R", "R"]})
    with pytest.raises(InputFormatError, match="task 'a' has more than one type"):
        lb.from_long_table(rows, task_type="kind")
    with pytest.raises(InputFormatError, match="1 tasks have no type while others do: b"):
        lb.from_long_table(rows.drop("kind"), task_types={"a": "R"})
    # MTEB: the registry's types given as a mapping, or a task_type key in a file
    plain = lb.from_mteb(f"{FIX}/mteb")
    assert plain.task_types is None
    mapped = lb.from_mteb(f"{FIX}/mteb", task_types={t: "Retrieval" for t in plain.tasks})
    assert mapped.task_types == ["Retrieval"] * len(plain.tasks)
    folder = tmp_path / "mteb"
    shutil.copytree(f"{FIX}/mteb", folder)
    for path in folder.rglob("*.json"):
        data = json.loads(path.read_text())
        if "task_name" in data:
            data["task_type"] = "Reranking" if data["task_name"] == "SciFact" else "Retrieval"
            path.write_text(json.dumps(data))
    b = lb.from_mteb(folder)
    assert b.task_types[b.tasks.index("SciFact")] == "Reranking"
    assert set(b.task_types) == {"Reranking", "Retrieval"}


def test_cli_type_mean_and_summary(capsys, tmp_path):
    args = ["leaderboard", "--task-types", f"{FIX}/task_types.csv", "--resamples", "200"]
    assert main(args + ["--aggregation", "type_mean", f"{FIX}/benchmark.csv"]) == 0
    out = capsys.readouterr().out
    assert "type_mean aggregation" in out and "two-level bootstrap" in out
    assert main(args + ["--summary", "--format", "csv", f"{FIX}/benchmark.csv"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head == "system,rank_borda,mean_task,mean_task_type,Retrieval,Reranking,STS"
    assert main(["leaderboard", "--aggregation", "type_mean", f"{FIX}/benchmark.csv"]) == 2
    assert "needs each task's type" in capsys.readouterr().err
    # the type as a fifth column of the long table gives the same summary
    types = dict(pl.read_csv(f"{FIX}/task_types.csv").rows())
    typed = tmp_path / "typed.csv"
    pl.read_csv(f"{FIX}/benchmark.csv").with_columns(
        kind=pl.col("task").replace_strict(types)).write_csv(typed)
    assert main(["leaderboard", "--summary", "--format", "csv", "--columns",
                 "task,topic,system,score,kind", str(typed)]) == 0
    with_column = capsys.readouterr().out
    assert main(args + ["--summary", "--format", "csv", f"{FIX}/benchmark.csv"]) == 0
    assert capsys.readouterr().out == with_column
    bad = tmp_path / "types.json"
    bad.write_text("[1, 2]")
    assert main(["leaderboard", "--task-types", str(bad), f"{FIX}/benchmark.csv"]) == 2
    assert "not a JSON object of task: type strings" in capsys.readouterr().err


def test_against_mteb_leaderboard_aggregation():
    """mteb's own leaderboard code (its per-type means, Mean (TaskType) and Borda rank
    expressions) on real MTEB task names of four types."""
    pytest.importorskip("mteb")
    from mteb.benchmarks import _create_table as mteb_table

    names = ["NFCorpus", "SciFact", "STSBenchmark", "Banking77Classification",
             "TwentyNewsgroupsClustering", "ArguAna"]
    rng = np.random.default_rng(3)
    wide = rng.uniform(0.2, 0.8, size=(7, len(names))).round(3)
    wide[2, 0] = wide[4, 0]  # a tie in one task (Borda averages it)
    frame = pl.DataFrame({"model": [f"m{i}" for i in range(7)],
                          **{n: wide[:, t] for t, n in enumerate(names)}})
    type_exprs, type_cols = mteb_table._get_means_per_types(names)
    theirs = frame.with_columns(type_exprs).with_columns(
        mteb_table._skipna_false_mean(type_cols).alias("type_mean"),
        mteb_table._skipna_false_mean(names).alias("task_mean"),
        mteb_table._get_borda_rank(names).alias("borda"))
    long = frame.unpivot(index="model", variable_name="task", value_name="score")
    types = {n: theirs_type for n, theirs_type in zip(
        names, [mteb_table._TASKS_REGISTRY[n].metadata.type for n in names])}
    bench = lb.from_long_table(long.with_columns(topic=pl.lit("all")), system="model",
                               task_types=types)
    ours = lb.summary_table(bench).sort("system")
    theirs = theirs.sort("model")
    np.testing.assert_allclose(ours["mean_task_type"], theirs["type_mean"], atol=1e-12)
    np.testing.assert_allclose(ours["mean_task"], theirs["task_mean"], atol=1e-12)
    assert ours["rank_borda"].to_list() == theirs["borda"].to_list()
    for kind in type_cols:
        np.testing.assert_allclose(ours[kind], theirs[kind], atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateTestWarning)
        score = ri.aggregate_scores(bench.scores, aggregation="type_mean",
                                    task_types=bench.task_types)
    np.testing.assert_allclose(np.sort(score), np.sort(theirs["type_mean"].to_numpy()),
                               atol=1e-12)


def test_type_mean_intervals_cover_by_simulation():
    """A small version of the figure in docs/leaderboards.md (benchmarks/
    bench_rank_intervals.py --typed 1000): types of 2, 4 and 8 tasks whose system effects
    cancel over types, so the population type means keep the true order; the
    type-stratified two-level intervals cover every true rank at once."""
    rng = np.random.default_rng(11)
    kinds = [0, 0, 1, 1, 1, 1] + [2] * 8
    base = np.linspace(0.55, 0.45, 5)
    covered = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateTestWarning)
        for i in range(60):
            effect = rng.normal(0, 0.03, (3, 5))
            effect -= effect.mean(axis=0)
            tasks = [base + effect[g] + rng.normal(0, 0.06, 5)
                     + rng.normal(0, 0.1, (n, 1)) + rng.normal(0, 0.05, (n, 5))
                     for g, n in zip(kinds, rng.integers(30, 61, len(kinds)))]
            r = ri.aggregate_rank_intervals(tasks, aggregation="type_mean", task_types=kinds,
                                            n_resamples=300, seed=i, threads=1)
            covered += np.all((r.low <= np.arange(1, 6)) & (np.arange(1, 6) <= r.high))
    assert covered / 60 >= 0.9
