"""Rank intervals on MTEB's published results: the "176 of 180 adjacent pairs" kind of figure.

python benchmarks/mteb_published_intervals.py RESULTS [--benchmark "MTEB(eng, v2)"]
    [--task-type Retrieval] [--tasks A,B,...] [--n-resamples 2000] [--seed 0]

RESULTS is a checkout or extract of github.com/embeddings-benchmark/results (the folder
holding ``results/``, or ``results/`` itself): ``<org__model>/<revision>/<Task>.json``.
Nothing of it is shipped with irmetrics.

Tasks: the benchmark's own definition, from mteb's registry (``mteb.get_benchmark``, with
each task's type and, for multilingual tasks, the subsets the benchmark takes: MTEB(eng,
v2) scores only ``en-en`` of STS17), optionally only the tasks of one ``--task-type``; or
``--tasks`` (no types, all subsets) where mteb is not installed.

Models: every model folder with a revision holding a score for ALL the tasks at
``--split`` (each task's ``main_score``, averaged over the benchmark's subsets). One
revision per model: the one covering the most tasks; among those, a revision mteb
evaluated over one named ``external`` (scores imported from the model's authors), then the
highest ``mteb_version`` in its files, then the folder name. Files under a revision's
``experiments/`` folder (variants of a model run with other settings) are not read.
Every file is read by :func:`irmetrics.leaderboards.from_mteb`, the reader of
``irmetrics leaderboard``.

Intervals: :func:`irmetrics.leaderboards.rank_systems`, simultaneous 95 % rank intervals
from the task bootstrap (``resampling="tasks"``): published files hold one score per task,
no per-query scores, so the topic and two-level bootstraps have nothing to resample. The
aggregations are MTEB's: mean of task means ("Mean (Task)"), the type mean ("Mean
(TaskType)", task draws stratified by type; needs types) and Borda. Printed: models x
tasks, the leaderboard with rank intervals, the models tied with the best, and "K of N
adjacent pairs separable". ``--check-mteb``: every task score against mteb's own loader.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

from irmetrics import leaderboards as lb


def benchmark_tasks(name: str, task_type: str | None) -> tuple[list, dict, dict]:
    """(task names, {task: type}, {task: subsets}) from mteb's benchmark definition."""
    try:
        import mteb
    except ImportError:
        raise SystemExit("mteb is not installed (pip install mteb), so the benchmark's task"
                         " list is unknown: pass --tasks A,B,...") from None
    tasks = mteb.get_benchmark(name).tasks
    names, types, subsets = [], {}, {}
    for task in tasks:
        meta = task.metadata
        if task_type is not None and meta.type != task_type:
            continue
        names.append(meta.name)
        types[meta.name] = meta.type
        if list(task.hf_subsets) != ["default"]:
            subsets[meta.name] = list(task.hf_subsets)
    if not names:
        raise SystemExit(f"benchmark {name!r} has no task of type {task_type!r}.")
    return names, types, subsets


def _file_facts(path: Path, split: str, wanted: list | None) -> tuple[bool, tuple]:
    """(the file has a numeric main_score for every wanted subset at ``split``, its
    ``mteb_version`` as a comparable tuple). A pre-selection only: the reader decides."""
    data = json.loads(path.read_text(encoding="utf-8-sig"))
    version = data.get("mteb_version")
    parts = (tuple(int(p) for p in version.split(".")[:3] if p.isdigit())
             if isinstance(version, str) else ())
    entries = data.get("scores", {}).get(split) or []
    found = {e.get("hf_subset"): e.get("main_score") for e in entries if isinstance(e, dict)}
    if wanted is None:
        complete = bool(found) and all(isinstance(v, (int, float)) for v in found.values())
    else:
        complete = all(isinstance(found.get(name), (int, float)) for name in wanted)
    return complete, parts


def choose_revisions(root: Path, tasks: list, split: str, subsets: dict
                     ) -> tuple[list[Path], dict]:
    """The files of one revision per model holding every task, and {model: revision}."""
    chosen: list[Path] = []
    picked: dict = {}
    for model in sorted(p for p in root.iterdir() if p.is_dir()):
        candidates = []
        for revision in sorted(p for p in model.iterdir() if p.is_dir()):
            files = [revision / f"{t}.json" for t in tasks]
            if not all(f.is_file() for f in files):
                continue
            facts = [_file_facts(f, split, subsets.get(t)) for f, t in zip(files, tasks)]
            if all(complete for complete, _ in facts):
                candidates.append(((revision.name != "external", max(v for _, v in facts),
                                    revision.name), files))
        if candidates:
            key, files = max(candidates, key=lambda c: c[0])
            picked[model.name] = key[2]
            chosen.extend(files)
    return chosen, picked


def report(benchmark: lb.Benchmark, aggregation: str, args: argparse.Namespace) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        r = lb.rank_systems(benchmark, aggregation=aggregation, resampling="tasks",
                            level=args.level, n_resamples=args.n_resamples, seed=args.seed,
                            threads=args.threads)
        seconds = time.perf_counter() - start
    m = len(benchmark.systems)
    print(f"\n## aggregation={aggregation}, resampling=tasks, {args.n_resamples} resamples,"
          f" seed {args.seed}, level {args.level} ({seconds:.1f} s)")
    for w in caught:
        print(f"note: {w.message}")
    print(f"{'rank':>4}  {'interval':>9}  {'score':>8}  best?  model")
    for row in r.rows(benchmark.systems):
        print(f"{row['rank']:>4}  [{row['low']:>3}, {row['high']:>3}]  {row['score']:8.4f}"
              f"  {'  *  ' if row['tied_with_best'] else '     '}  {row['system']}")
    tied = [benchmark.systems[j] for j in r.order if r.tied_with_best[j]]
    print(f"tied with the best ({len(tied)}): {', '.join(tied)}")
    print(f"{r.n_separable} of {m - 1} adjacent pairs separable"
          f" ({m - 1 - r.n_separable} not separable)")
    for i in map(int, r.separable.nonzero()[0]):
        upper, lower = benchmark.systems[r.order[i]], benchmark.systems[r.order[i + 1]]
        print(f"  separable: {i + 1}. {upper} above {i + 2}. {lower}")


def check_against_mteb(benchmark: lb.Benchmark, cache: Path, name: str) -> None:
    """Every task score equal to mteb's own loader's (``ResultCache.load_results`` with
    ``validate_and_filter=True``: the benchmark's splits and subsets), to 1e-12."""
    import mteb
    from mteb.cache import ResultCache

    tasks = [t for t in mteb.get_benchmark(name).tasks if t.metadata.name in benchmark.tasks]
    results = ResultCache(cache).load_results(models=benchmark.systems, tasks=tasks,
                                              include_remote=False, validate_and_filter=True)
    theirs = results.to_dataframe(aggregation_level="task", format="wide")
    theirs = theirs.set_index("task_name")
    differ = [(task, system) for t, task in enumerate(benchmark.tasks)
              for j, system in enumerate(benchmark.systems)
              if not abs(benchmark.scores[t][0, j] - theirs.loc[task, system]) <= 1e-12]
    count = len(benchmark.tasks) * len(benchmark.systems)
    print(f"mteb's loader: {count - len(differ)} of {count} task scores equal (1e-12)"
          + (f"; differ: {differ[:5]}" if differ else ""))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path,
                        help="checkout/extract of embeddings-benchmark/results")
    parser.add_argument("--benchmark", default="MTEB(eng, v2)")
    parser.add_argument("--task-type", default=None,
                        help="only the benchmark's tasks of this type (e.g. Retrieval)")
    parser.add_argument("--tasks", default=None,
                        help="comma-separated task names instead of mteb's definition")
    parser.add_argument("--split", default="test")
    parser.add_argument("--n-resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--check-mteb", action="store_true",
                        help="compare every task score with mteb's own result loader")
    args = parser.parse_args(argv)

    root = args.results / "results" if (args.results / "results").is_dir() else args.results
    if not root.is_dir():
        raise SystemExit(f"no results folder at {args.results}")
    if args.tasks:
        tasks, types, subsets = [t.strip() for t in args.tasks.split(",") if t.strip()], {}, {}
        source = "--tasks"
    else:
        tasks, types, subsets = benchmark_tasks(args.benchmark, args.task_type)
        source = args.benchmark + (f", type {args.task_type}" if args.task_type else "")
    files, picked = choose_revisions(root, tasks, args.split, subsets)
    if not files:
        raise SystemExit(f"no model has all {len(tasks)} tasks at split {args.split!r}.")
    benchmark = lb.from_mteb(files, split=args.split, subsets=subsets,
                             task_types=types or None)
    print(f"# {source}: {len(benchmark.systems)} models x {len(benchmark.tasks)} tasks"
          f" (split {args.split}, main_score)")
    print(f"tasks: {', '.join(benchmark.tasks)}")
    if subsets:
        print("subsets: " + "; ".join(f"{t} {', '.join(s)}" for t, s in subsets.items()))
    print(f"models read: {len(picked)} of {sum(1 for p in root.iterdir() if p.is_dir())}"
          f" folders have a revision with every task;"
          f" {sum(r == 'external' for r in picked.values())} of them 'external'")
    for line in benchmark.describe_left_out():
        print(f"left out: {line}")
    if args.check_mteb:
        check_against_mteb(benchmark, root.parent, args.benchmark)
    aggregations = ["mean", "type_mean", "borda"] if types else ["mean", "borda"]
    if types and len(set(types.values())) == 1:
        aggregations.remove("type_mean")  # one type: the type mean is the mean
    for aggregation in aggregations:
        report(benchmark, aggregation, args)


if __name__ == "__main__":
    main()
