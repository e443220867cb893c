"""Leaderboards you can trust: benchmarks of many systems over many tasks, read from a long
table, from MTEB's published result files or from irmetrics Results, ranked with
simultaneous rank intervals (:mod:`irmetrics.stats.rank_intervals`).

A :class:`Benchmark` holds, per task, the per-topic scores of the same systems (tasks may
have different topics and sizes). Readers say what they left out and why: systems missing
from some task, topics where some system has no (or a NaN) score, tasks left empty.
See docs/leaderboards.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from irmetrics.checks import check_choice, parameter_error
from irmetrics.exceptions import InputFormatError, ShapeError
from irmetrics.stats.rank_intervals import (AGGREGATIONS, RESAMPLING_LEVELS, RankIntervals,
                                            aggregate_rank_intervals)

__all__ = ["Benchmark", "from_long_table", "from_mteb", "from_results", "rank_systems",
           "resampling_disagreements", "summary_table"]


@dataclass(frozen=True, eq=False)
class Benchmark:
    """Per-task per-topic scores of the same systems.

    Attributes
    ----------
    systems : list of str
        The columns of every task's matrix.
    tasks : list of str
    scores : list of ndarray
        ``scores[t]`` has shape (topics of task t, len(systems)), finite.
    topics : list of list of str
        The row labels of each task.
    left_out : dict of str to list
        ``"systems"``: ``(system, [tasks it lacks])``; ``"topics"``: ``(task, topic)``
        rows with a missing or NaN score; ``"tasks"``: tasks with no complete topic.
    task_types : list of str or None
        Each task's type (MTEB's Retrieval, Classification, ...), where known: the
        ``"type_mean"`` aggregation (MTEB's "Mean (TaskType)") needs them.
    """

    systems: list
    tasks: list
    scores: list
    topics: list
    left_out: dict = field(default_factory=dict)
    task_types: list | None = None

    def describe_left_out(self) -> list[str]:
        """One sentence per kind of thing left out (empty when nothing was)."""
        lines = []
        gone = self.left_out.get("systems", [])
        if gone:
            lines.append(f"{len(gone)} systems left out (missing from some tasks): " + "; ".join(
                f"{name} (no {', '.join(tasks[:3])}{' ...' if len(tasks) > 3 else ''})"
                for name, tasks in gone[:10]))
        rows = self.left_out.get("topics", [])
        if rows:
            lines.append(f"{len(rows)} topics left out (a system has no score or NaN): "
                         + ", ".join(f"{t}/{q}" for t, q in rows[:10])
                         + (" ..." if len(rows) > 10 else ""))
        if self.left_out.get("tasks"):
            lines.append("tasks left out (no complete topic): " + ", ".join(self.left_out["tasks"]))
        return lines


def _read_table(table: Any) -> pl.DataFrame:
    if isinstance(table, pl.DataFrame):
        return table
    if isinstance(table, pl.LazyFrame):
        return table.collect()
    if isinstance(table, (str, os.PathLike)):
        path = os.fspath(table)
        if os.path.isdir(path):
            # polars would read every file of the folder as one table
            raise InputFormatError("is a directory; a long table is one CSV or Parquet file"
                                   " (a folder of MTEB result files: from_mteb, CLI --mteb)",
                                   path=path)
        try:
            if path.endswith((".parquet", ".pq")):
                return pl.read_parquet(path)
            return pl.read_csv(path, infer_schema_length=10000)
        except (pl.exceptions.NoDataError, pl.exceptions.ComputeError) as exc:
            # an empty or malformed file is the user's input, not an internal error
            reason = "the file is empty" if isinstance(exc, pl.exceptions.NoDataError) else \
                f"not a readable {'Parquet' if path.endswith(('.parquet', '.pq')) else 'CSV'} " \
                f"table ({str(exc).splitlines()[0]})"
            raise InputFormatError(reason, path=path) from None
    if hasattr(table, "columns"):  # pandas and the like
        return pl.from_pandas(table) if hasattr(table, "iloc") else pl.DataFrame(table)
    raise parameter_error("table", "a CSV/Parquet path or a DataFrame", table)


def from_long_table(table: Any, *, task: str = "task", topic: str = "topic",
                    system: str = "system", score: str = "score",
                    task_type: str | None = None,
                    task_types: Mapping[str, str] | None = None) -> Benchmark:
    """A benchmark from a long table: one row per (task, topic, system) with its score.

    Parameters
    ----------
    table : path (CSV, Parquet) or DataFrame (polars, pandas)
    task, topic, system, score : str
        Column names.
    task_type : str, optional
        The column naming each row's task type (one type per task).
    task_types : mapping of str to str, optional
        ``{task: type}``, where the table has no type column (it wins over the column).

    Returns
    -------
    Benchmark
        Systems missing from any task are left out (listed), then topics where a kept
        system has no score or a NaN (listed), then tasks left without topics (listed).

    Raises
    ------
    irmetrics.exceptions.InputFormatError
        A column is missing, a (task, topic, system) appears twice, fewer than two
        systems remain, a task has two types, or some tasks have a type and others none.

    Examples
    --------
    >>> b = from_long_table(pl.DataFrame({"task": ["t1"] * 4 + ["t2"] * 2,
    ...     "topic": ["1", "1", "2", "2", "9", "9"], "system": ["a", "b"] * 3,
    ...     "score": [0.5, 0.4, 0.7, float("nan"), 0.2, 0.3]}))
    >>> b.systems, [m.shape for m in b.scores], b.left_out["topics"]
    (['a', 'b'], [(1, 2), (1, 2)], [('t1', '2')])
    """
    frame = _read_table(table)
    source = os.fspath(table) if isinstance(table, (str, os.PathLike)) else "the table"
    wanted = (task, topic, system, score) + ((task_type,) if task_type is not None else ())
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise InputFormatError(f"no column {missing[0]!r} (columns: "
                               f"{', '.join(frame.columns)}).", path=source)
    numbers = frame[score].cast(pl.Float64, strict=False)
    # NaN is a missing score (its topic is left out, and listed); an infinite one is a
    # failed computation upstream, not a score to drop in silence
    bad = np.flatnonzero(((numbers.is_null() & frame[score].is_not_null())
                          | numbers.is_infinite().fill_null(False)).to_numpy())
    if bad.size:
        # a row (not polars' cast error) names the line: header is line 1 of a file
        row = frame.row(int(bad[0]), named=True)
        csv = source.endswith((".csv", ".tsv", ".txt")) or "." not in os.path.basename(source)
        kind = "number" if numbers[int(bad[0])] is None else "finite number (NaN for none)"
        raise InputFormatError(
            f"score must be a {kind}; got {row[score]!r} (task {row[task]!r}, topic "
            f"{row[topic]!r}, system {row[system]!r})", path=source,
            line=int(bad[0]) + 2 if csv and source != "the table" else None)
    types = dict(_types_of(frame, task, task_type, source) if task_type is not None else {})
    frame = frame.select(pl.col(task).cast(pl.String).alias("task"),
                         pl.col(topic).cast(pl.String).alias("topic"),
                         pl.col(system).cast(pl.String).alias("system"),
                         numbers.alias("score"))
    twice = frame.filter(pl.struct("task", "topic", "system").is_duplicated())
    if twice.height:
        row = twice.row(0, named=True)
        raise InputFormatError(f"task {row['task']!r}, topic {row['topic']!r}, "
                               f"system {row['system']!r} appears twice.", path=source)
    tasks = frame["task"].unique(maintain_order=True).to_list()
    systems = frame["system"].unique(maintain_order=True).to_list()
    present = frame.group_by("system").agg(pl.col("task").unique())
    have = {r["system"]: set(r["task"]) for r in present.iter_rows(named=True)}
    gone = [(s, [t for t in tasks if t not in have[s]]) for s in systems if len(have[s]) < len(tasks)]
    kept = [s for s in systems if len(have[s]) == len(tasks)]
    if len(kept) < 2:
        raise InputFormatError(f"fewer than two systems have scores on every task "
                               f"({len(kept)} of {len(systems)}).", path=source)
    frame = frame.filter(pl.col("system").is_in(kept))
    wide = frame.pivot(on="system", index=["task", "topic"], values="score", maintain_order=True)
    values = wide.select(kept).to_numpy().astype(np.float64)
    complete = np.isfinite(values).all(axis=1)
    dropped_rows = [(t, q) for t, q, ok in zip(wide["task"].to_list(), wide["topic"].to_list(),
                                                complete) if not ok]
    scores, topics, names, empty = [], [], [], []
    task_col = np.asarray(wide["task"].to_list(), dtype=object)
    topic_col = wide["topic"].to_list()
    for t in tasks:
        rows = np.flatnonzero((task_col == t) & complete)
        if not rows.size:
            empty.append(t)
            continue
        names.append(t)
        scores.append(values[rows])
        topics.append([topic_col[i] for i in rows])
    if not names:
        raise InputFormatError("no task has a topic every system scored.", path=source)
    types.update({str(k): str(v) for k, v in (task_types or {}).items()})
    typed = [t for t in names if t in types]
    if typed and len(typed) < len(names):
        untyped = [t for t in names if t not in types]
        raise InputFormatError(f"{len(untyped)} tasks have no type while others do: "
                               f"{', '.join(untyped[:10])}{' ...' if len(untyped) > 10 else ''}"
                               " (give every task a type, or none).", path=source)
    return Benchmark(systems=kept, tasks=names, scores=scores, topics=topics,
                     left_out={"systems": gone, "topics": dropped_rows, "tasks": empty},
                     task_types=[types[t] for t in names] if typed else None)


def _types_of(frame: pl.DataFrame, task: str, task_type: str, source: str) -> dict:
    """``{task: type}`` from a long table's type column (one type per task)."""
    pairs = (frame.select(pl.col(task).cast(pl.String).alias("task"),
                          pl.col(task_type).cast(pl.String).alias("type"))
             .drop_nulls().unique(maintain_order=True))
    twice = pairs.filter(pl.col("task").is_duplicated())
    if twice.height:
        name = twice["task"][0]
        kinds = twice.filter(pl.col("task") == name)["type"].to_list()
        raise InputFormatError(f"task {name!r} has more than one type: "
                               f"{', '.join(map(repr, kinds))}.", path=source)
    return dict(zip(pairs["task"].to_list(), pairs["type"].to_list()))


def from_mteb(paths: Any, *, split: str = "test",
              task_types: Mapping[str, str] | None = None,
              subsets: Mapping[str, Sequence[str]] | None = None) -> Benchmark:
    """A benchmark from MTEB's published result files (one task score per model).

    MTEB writes one JSON file per (model, task), ``<model>/<revision>/<Task>.json``, with
    ``task_name`` and ``scores: {split: [{hf_subset, languages, main_score, ...}]}`` (a
    ``model_meta.json`` beside them names the model). A task's score is the mean
    ``main_score`` over its subsets in ``split``. Published files carry no per-query
    scores, so every task is one "topic": rank intervals then come from resampling tasks.

    A task's type (for MTEB's "Mean (TaskType)", ``aggregation="type_mean"``) is read
    from a file's top-level ``task_type`` where there is one; MTEB's own files leave it
    to mteb's task registry, so ``task_types`` gives it (``{task: type}``, winning over
    the files).

    A benchmark may use only some of a multilingual task's subsets (MTEB(eng, v2) takes
    the ``"en"`` subset of MassiveIntentClassification, ``"en-en"`` of STS17): the
    published files hold every subset the model was run on, so ``subsets`` (``{task:
    [hf_subset, ...]}``) says which to average; a model whose file lacks one of them
    lacks the task (left out and listed, as a model with no file for it).

    Parameters
    ----------
    paths : path or sequence of paths
        Result files, or folders searched recursively for them.
    split : str, default "test"
    task_types : mapping of str to str, optional
    subsets : mapping of str to sequence of str, optional
        The ``hf_subset`` values to average per task (other tasks: all their subsets).

    Returns
    -------
    Benchmark

    Examples
    --------
    >>> b = from_mteb("fixtures/leaderboards/mteb")  # doctest: +SKIP
    """
    roots = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files: list[Path] = []
    for root in map(Path, roots):
        if root.is_dir():
            files.extend(sorted(p for p in root.rglob("*.json") if p.name != "model_meta.json"))
        else:
            files.append(root)
    rows = []
    where: dict = {}
    types: dict = {}
    for path in files:
        data = _json_object(path, "an MTEB result file")
        if isinstance(data.get("task_type"), str) and "task_name" in data:
            types[str(data["task_name"])] = data["task_type"]
        if "task_name" not in data or "scores" not in data:
            raise InputFormatError("not an MTEB result file (no task_name/scores).",
                                   path=str(path))
        if not isinstance(data["scores"], dict):
            raise InputFormatError("not an MTEB result file (scores is not an object of"
                                   " splits).", path=str(path))
        entries = data["scores"].get(split)
        if not entries:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise InputFormatError(f"not an MTEB result file (split {split!r} is not a list"
                                   " of subset objects).", path=str(path))
        wanted = (subsets or {}).get(data["task_name"])
        if wanted is not None:
            found = {e.get("hf_subset"): e for e in entries}
            if not wanted or any(name not in found for name in wanted):
                continue  # the model lacks this task as the benchmark defines it
            entries = [found[name] for name in wanted]
        main = [e.get("main_score") for e in entries]
        meta = path.parent / "model_meta.json"
        if meta.exists():
            model = (_json_object(meta, "an MTEB model_meta.json").get("name")
                     or path.parent.parent.name)
        else:
            model = path.parent.parent.name.replace("__", "/")
        value = (float(np.mean(main)) if all(isinstance(m, (int, float)) for m in main)
                 else float("nan"))
        key = (model, data["task_name"])
        if key in where:  # several revisions of one model: the user must choose
            raise InputFormatError(f"model {model!r} has task {key[1]!r} in"
                                   f" {where[key]} too; pass one revision folder per model.",
                                   path=str(path))
        where[key] = path
        rows.append({"task": data["task_name"], "topic": "all", "system": model, "score": value})
    if not rows:
        raise InputFormatError(f"no MTEB result with split {split!r} under {roots}.")
    types.update(task_types or {})
    return from_long_table(pl.DataFrame(rows), task_types=types)


def _json_object(path: Path, what: str) -> dict:
    """The JSON object in ``path``, or an InputFormatError saying it is not ``what``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise InputFormatError(f"not {what} ({exc}).", path=str(path)) from None
    if not isinstance(data, dict):
        raise InputFormatError(f"not {what} (not a JSON object).", path=str(path))
    return data


def from_results(results: Mapping[str, Mapping[str, Any]], measure: str) -> Benchmark:
    """A benchmark from irmetrics :class:`~irmetrics.Results`: ``{task: {system: Results}}``.

    The per-query values of ``measure`` are the topics of each task (query ids aligned
    across systems; a query some system lacks is left out and listed).

    Examples
    --------
    >>> import irmetrics as irm
    >>> q = {"1": {"d": 1}, "2": {"e": 1}}
    >>> res = {"t": {"a": irm.evaluate(q, {"1": {"d": 1.0}, "2": {"e": 1.0}}, ["map"]),
    ...              "b": irm.evaluate(q, {"1": {"e": 1.0}, "2": {"e": 1.0}}, ["map"])}}
    >>> from_results(res, "map").scores[0].tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    frames = []
    for task, systems in results.items():
        for name, res in systems.items():
            per = res.per_query().filter(pl.col("measure") == measure)
            if not per.height:
                raise parameter_error("measure", f"a measure of every Results (task {task!r}, "
                                      f"system {name!r} has none named so)", measure)
            frames.append(per.select(pl.lit(str(task)).alias("task"),
                                     pl.col("query_id").alias("topic"),
                                     pl.lit(str(name)).alias("system"),
                                     pl.col("value").alias("score")))
    if not frames:
        raise ShapeError("`results` must hold at least one task with systems.")
    return from_long_table(pl.concat(frames))


def rank_systems(benchmark: Benchmark, *, aggregation: str = "mean",
                 resampling: str | None = None, level: float = 0.95, n_resamples: int = 2000,
                 seed: Any = 0, threads: Any = None) -> RankIntervals:
    """Rank intervals of a benchmark's systems (:func:`aggregate_rank_intervals`).

    ``resampling`` defaults to ``"two-level"`` when tasks have several topics, and to
    ``"tasks"`` when every task has one (published task scores: nothing within tasks to
    resample). ``aggregation="type_mean"`` (MTEB's "Mean (TaskType)") needs the
    benchmark's task types and resamples tasks within their type.

    Examples
    --------
    >>> b = Benchmark(systems=["a", "b"], tasks=["t"], topics=[["1", "2", "3"]],
    ...               scores=[np.array([[0.9, 0.1], [0.8, 0.2], [0.85, 0.15]])])
    >>> rank_systems(b, resampling="topics", n_resamples=200).rows(b.systems)[0]["system"]
    'a'
    """
    if resampling is None:
        one = all(m.shape[0] == 1 for m in benchmark.scores)
        resampling = "tasks" if one else "two-level"
    check_choice("aggregation", aggregation, AGGREGATIONS)
    check_choice("resampling", resampling, RESAMPLING_LEVELS)
    if aggregation == "type_mean" and benchmark.task_types is None:
        raise parameter_error("aggregation", "one the benchmark can compute ('type_mean'"
                              " needs each task's type: a type column, task_types, or MTEB"
                              " files that carry it)", aggregation)
    return aggregate_rank_intervals(benchmark.scores, aggregation=aggregation,
                                    resampling=resampling, level=level,
                                    n_resamples=n_resamples, seed=seed, threads=threads,
                                    task_types=benchmark.task_types,
                                    task_names=benchmark.tasks)


def resampling_disagreements(benchmark: Benchmark, *, levels: Sequence[str] = RESAMPLING_LEVELS,
                             **options: Any) -> pl.DataFrame:
    """Each system's rank interval under each resampling level, and where they differ.

    Returns
    -------
    polars.DataFrame
        ``system``, ``rank``, then ``low_<level>``/``high_<level>`` per level, and
        ``differ`` (the intervals are not all equal).
    """
    levels = [check_choice("levels", lvl, RESAMPLING_LEVELS) for lvl in levels]
    if not levels:
        raise parameter_error("levels", "one or more resampling levels", levels)
    results = [rank_systems(benchmark, resampling=lvl, **options) for lvl in levels]
    first = results[0]
    columns: dict[str, Any] = {}
    for lvl, r in zip(levels, results):
        columns[f"low_{lvl}"] = r.low[first.order]
        columns[f"high_{lvl}"] = r.high[first.order]
    lows = np.stack([columns[f"low_{lvl}"] for lvl in levels])
    highs = np.stack([columns[f"high_{lvl}"] for lvl in levels])
    differ = (lows != lows[0]).any(axis=0) | (highs != highs[0]).any(axis=0)
    return pl.DataFrame({"system": [benchmark.systems[j] for j in first.order],
                         "rank": first.rank[first.order], **columns, "differ": differ})


def summary_table(benchmark: Benchmark) -> pl.DataFrame:
    r"""The leaderboard's summary as MTEB's leaderboard prints it, from per-task means.

    Per system: ``rank_borda`` (MTEB's "Rank (Borda)": the sum over tasks of
    :math:`m - r_{ts}`, :math:`r_{ts}` the average-tie rank in task ``t``, ranked with
    ties sharing the best rank), ``mean_task`` ("Mean (Task)": the mean of task means),
    and with task types ``mean_task_type`` ("Mean (TaskType)": the mean over types of
    each type's mean) and one column per type (its mean), in order of first appearance;
    best Borda rank first.

    Examples
    --------
    >>> b = Benchmark(systems=["a", "b"], tasks=["s", "r1", "r2"], topics=[["1"]] * 3,
    ...               scores=[np.array([[0.2, 0.4]]), np.array([[0.6, 0.2]]),
    ...                       np.array([[1.0, 0.0]])], task_types=["STS", "Retr", "Retr"])
    >>> [tuple(round(v, 4) if isinstance(v, float) else v for v in row)
    ...  for row in summary_table(b).rows()]
    [('a', 1, 0.6, 0.5, 0.2, 0.8), ('b', 2, 0.2, 0.25, 0.4, 0.1)]
    """
    means = np.stack([m.mean(axis=0) for m in benchmark.scores])  # (T, m)
    m = means.shape[1]
    borda = (m - _average_ranks(means)).sum(axis=0)
    rank = 1 + (borda[None, :] > borda[:, None]).sum(axis=1)
    columns: dict[str, Any] = {"system": benchmark.systems, "rank_borda": rank,
                               "mean_task": means.mean(axis=0)}
    if benchmark.task_types is not None:
        kinds = list(dict.fromkeys(benchmark.task_types))
        labels = np.asarray(benchmark.task_types, dtype=object)
        per_type = {k: means[labels == k].mean(axis=0) for k in kinds}
        columns["mean_task_type"] = np.mean(list(per_type.values()), axis=0)
        columns.update(per_type)
    frame = pl.DataFrame(columns)
    return frame.with_row_index("_at").sort(["rank_borda", "_at"]).drop("_at")


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Each task's ranks of the systems, (T, m) -> (T, m): 1 = highest, ties averaged."""
    from scipy.stats import rankdata

    return rankdata(-values, axis=1, method="average")
