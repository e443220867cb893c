"""``irmetrics leaderboard``: a benchmark's leaderboard with simultaneous rank intervals,
the systems tied with the best and the separable adjacent pairs. See docs/leaderboards.md."""

from __future__ import annotations

import argparse
import json
import os
import warnings

import polars as pl

from ..checks import parameter_error
from ..exceptions import InputFormatError
from ..leaderboards import (from_long_table, from_mteb, rank_systems, resampling_disagreements,
                            summary_table)
from ..stats.rank_intervals import AGGREGATIONS, RESAMPLING_LEVELS
from .compare_cmd import _write
from .inputs import read_files
from .options import EXIT_OK, CliParser, add_bootstrap, add_version, bootstrap_options

DESCRIPTION = """\
Which ranks could each system hold? Reads a benchmark (a long table task,topic,system,score
in CSV or Parquet, or a folder of MTEB result files with --mteb) and prints the
leaderboard with each system's simultaneous rank interval, the systems tied with the best
and how many adjacent pairs are separable.

  irmetrics leaderboard [options] benchmark.csv
  irmetrics leaderboard --mteb [options] results/"""

EPILOG = """\
examples:
  irmetrics leaderboard fixtures/leaderboards/benchmark.csv
  irmetrics leaderboard --aggregation borda --resampling tasks benchmark.parquet
  irmetrics leaderboard --mteb fixtures/leaderboards/mteb
  irmetrics leaderboard --all-resamplings benchmark.csv   # two-level, tasks, topics

What readers leave out (systems missing from a task, topics with a missing or NaN score)
is listed on stderr.
exit status: 0 ok; 1 usage; 2 unreadable or malformed input, bad parameter."""


def build_parser() -> CliParser:
    p = CliParser(prog="irmetrics leaderboard", description=DESCRIPTION, epilog=EPILOG,
                  formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    g = p.add_argument_group("leaderboard")
    g.add_argument("-h", "--help", action="help", help="show this help and exit")
    add_version(g)
    g.add_argument("--mteb", action="store_true", help="read MTEB result files (a folder)")
    g.add_argument("--split", default="test", help="MTEB split (default test)")
    g.add_argument("--columns", metavar="TASK,TOPIC,SYSTEM,SCORE[,TYPE]",
                   default="task,topic,system,score",
                   help="the long table's column names (a fifth: each task's type)")
    g.add_argument("--task-types", metavar="FILE",
                   help="each task's type: a JSON object {task: type} or a CSV with columns"
                        " task,type (MTEB's result files do not carry it)")
    g.add_argument("--aggregation", default="mean", choices=AGGREGATIONS,
                   help="mean of task means (default), Borda points, mean rank, or"
                        " type_mean: the mean of task-type means (MTEB's Mean (TaskType);"
                        " needs task types; tasks resampled within their type)")
    g.add_argument("--summary", action="store_true",
                   help="print MTEB's summary instead: Rank (Borda), Mean (Task) and, with"
                        " task types, Mean (TaskType) and each type's mean")
    g.add_argument("--resampling", choices=RESAMPLING_LEVELS,
                   help="bootstrap levels (default: two-level; tasks when each task has one"
                        " score, as MTEB's files)")
    g.add_argument("--all-resamplings", action="store_true",
                   help="the interval under each resampling level, side by side")
    add_bootstrap(g, resamples=2000)
    p.add_argument("benchmark", help="long table (CSV, Parquet) or, with --mteb, a folder")
    return p


def _lines(header: list[str], rows: list[list], fmt: str) -> str:
    cells = [header] + [[str(c) for c in row] for row in rows]
    if fmt == "csv":
        return "\n".join(",".join(row) for row in cells) + "\n"
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for i, row in enumerate(cells):
        text = ("  " if fmt == "table" else " | ").join(c.ljust(w) for c, w in zip(row, widths))
        out.append(text.rstrip() if fmt == "table" else f"| {text} |")
        if i == 0 and fmt == "markdown":
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out) + "\n"


def run(argv: list[str], stdout, stderr) -> int:
    args = build_parser().parse(argv)
    options = dict(bootstrap_options(args), aggregation=args.aggregation)
    types = None if args.task_types is None else _read_task_types(args.task_types)
    if args.mteb:
        if not os.path.exists(args.benchmark):
            raise FileNotFoundError(2, "No such file or directory", args.benchmark)
        bench = from_mteb(args.benchmark, split=args.split, task_types=types)
    else:
        names = args.columns.split(",")
        if len(names) not in (4, 5) or not all(names):
            raise parameter_error("--columns", "four or five comma-separated column names",
                                  args.columns)
        if not os.path.exists(args.benchmark):
            raise FileNotFoundError(2, "No such file or directory", args.benchmark)
        bench = from_long_table(args.benchmark, task=names[0], topic=names[1], system=names[2],
                                score=names[3], task_type=names[4] if len(names) == 5 else None,
                                task_types=types)
    for line in bench.describe_left_out():
        stderr.write(f"irmetrics leaderboard: {line}\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = _render(bench, args, options)
    for note in dict.fromkeys(str(w.message) for w in caught):  # each once, in order
        stderr.write(f"irmetrics leaderboard: warning: {note}\n")
    _write(text, args.output, stdout, read_files([args.benchmark], []))
    return EXIT_OK


def _read_task_types(path: str) -> dict:
    """``{task: type}`` from a JSON object or a CSV with columns task,type."""
    if not os.path.exists(path):
        raise FileNotFoundError(2, "No such file or directory", path)
    if os.path.isdir(path):  # polars would read every file of the folder as one table
        raise InputFormatError("is a directory; --task-types takes a JSON object or a CSV"
                               " task,type file.", path=path)
    if path.endswith(".json"):
        try:
            with open(path, encoding="utf-8-sig") as f:
                data = json.load(f)
        except ValueError as exc:
            raise InputFormatError(f"not JSON ({exc}).", path=path) from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise InputFormatError("not a JSON object of task: type strings.", path=path)
        return {str(k): v for k, v in data.items()}
    try:
        frame = pl.read_csv(path, infer_schema_length=0)
    except (pl.exceptions.NoDataError, pl.exceptions.ComputeError) as exc:
        raise InputFormatError(f"not a readable CSV table ({str(exc).splitlines()[0]}).",
                               path=path) from None
    if not {"task", "type"} <= set(frame.columns):
        raise InputFormatError(f"needs columns task,type (has {', '.join(frame.columns)}).",
                               path=path)
    types: dict = {}
    for task, kind in zip(frame["task"].to_list(), frame["type"].to_list()):
        if not task or not kind:  # a null would become a task or type named 'None'
            raise InputFormatError(f"every row needs a task and a type; got task {task!r},"
                                   f" type {kind!r}.", path=path)
        if types.setdefault(task, kind) != kind:  # no silent last-one-wins
            raise InputFormatError(f"task {task!r} has two types, {types[task]!r} and"
                                   f" {kind!r}.", path=path)
    return types


def _render(bench, args, options) -> str:
    if args.summary:
        frame = summary_table(bench)
        if args.format == "json":
            return json.dumps(frame.to_dicts(), indent=1) + "\n"
        return _lines(list(frame.columns),
                      [[f"{v:.4f}" if isinstance(v, float) else v for v in row]
                       for row in frame.iter_rows()], args.format)
    if args.all_resamplings:
        frame = resampling_disagreements(bench, **options)
        return (json.dumps(frame.to_dicts(), indent=1) + "\n" if args.format == "json"
                else _lines(list(frame.columns), [list(r) for r in frame.iter_rows()],
                            args.format))
    r = rank_systems(bench, resampling=args.resampling, **options)
    rows = r.rows(bench.systems)
    tied = [row["system"] for row in rows if row["tied_with_best"]]
    m = len(bench.systems)
    if args.format == "json":
        text = json.dumps({"aggregation": r.aggregation, "resampling": r.resampling,
                           "level": r.level, "n_resamples": r.n_resamples, "systems": rows,
                           "tied_with_best": tied, "separable_pairs": r.n_separable,
                           "adjacent_pairs": m - 1, "left_out": bench.describe_left_out()},
                          indent=1) + "\n"
    else:
        lines = _lines(["system", "score", "rank", "low", "high", "tied_with_best"],
                       [[row["system"], f"{row['score']:.4f}", row["rank"], row["low"],
                         row["high"], "yes" if row["tied_with_best"] else ""] for row in rows],
                       args.format)
        if args.format == "csv":
            text = lines
        else:
            text = (f"{len(bench.tasks)} tasks, {m} systems; {r.aggregation} aggregation;"
                    f" {r.resampling} bootstrap, {r.n_resamples:,} resamples;"
                    f" {r.level:.0%} simultaneous rank intervals\n\n{lines}\n"
                    f"{r.n_separable} of {m - 1} adjacent pairs separable;"
                    f" tied with the best: {', '.join(tied)}\n")
    return text
