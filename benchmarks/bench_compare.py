#!/usr/bin/env python
"""Benchmark of ``irmetrics compare`` on a TREC-sized comparison.

    python benchmarks/bench_compare.py [--queries 7000] [--depth 100] [--systems 10]
                                       [--resamples 10000] [--out benchmarks/data/compare]

Data (deterministic, seed 42): qrels and one run from ``generate.py``, then ``--systems``
runs derived from it by adding seeded Gaussian noise of growing scale to the scores (so
some systems are clearly worse than the first and some are close to it). Five measures
(map, ndcg_cut.10, P.10, recip_rank, bpref), every system against the first as baseline.

Reported, each the best of ``--repeat`` runs:

* ``cli``: ``irmetrics compare`` end to end in a fresh process (evaluating every run,
  then the tests), wall time and peak RSS;
* ``evaluate``: the evaluation of all runs in-process (one Evaluator);
* ``stats``: :func:`irmetrics.compare` on the evaluated per-query values alone, for each
  test (t, randomization, bootstrap; Tukey HSD over all systems).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

MEASURES = ["map", "ndcg_cut.10", "P.10", "recip_rank", "bpref"]


def make_runs(out: Path, queries: int, depth: int, systems: int) -> tuple[Path, list[Path]]:
    """qrels + ``systems`` run files (kept when they already exist)."""
    from generate import generate

    out.mkdir(parents=True, exist_ok=True)
    qrels = out / "qrels.txt"
    paths = [out / f"sys{i:02d}.run" for i in range(systems)]
    if qrels.exists() and all(p.exists() for p in paths):
        return qrels, paths
    generate(out, queries=queries, depth=depth, seed=42)
    base = pl.read_csv(out / "run.txt", separator=" ", has_header=False,
                       new_columns=["qid", "q0", "doc", "rank", "score", "tag"],
                       schema_overrides={"qid": pl.String, "doc": pl.String})
    rng = np.random.default_rng(42)
    spread = float(base["score"].std())
    for i, path in enumerate(paths):
        noise = rng.normal(scale=spread * 0.05 * i, size=base.height) if i else 0.0
        frame = base.with_columns((pl.col("score") + noise).round(6).alias("score"),
                                  pl.lit(f"sys{i:02d}").alias("tag"))
        frame.write_csv(path, separator=" ", include_header=False)
    return qrels, paths


def best_of(repeat: int, fn):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def cli_run(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one ``irmetrics compare`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "irmetrics", "compare", *argv],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"irmetrics compare failed ({done.returncode}): {done.stderr}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=7000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "data" / "compare"))
    args = parser.parse_args(argv)

    import warnings

    import irmetrics as irm

    # generate.py leaves ~20 qrels topics out of the run on purpose: they are reported
    # once here instead of on every repetition.
    warnings.simplefilter("ignore", irm.exceptions.IrMetricsWarning)

    qrels, paths = make_runs(Path(args.out), args.queries, args.depth, args.systems)
    lines = sum(1 for p in paths for _ in open(p))
    print(f"data: {args.queries} queries, {args.systems} runs x depth {args.depth}"
          f" ({lines:,} run lines), {len(MEASURES)} measures, {args.resamples:,} resamples")

    argv_cli = ["--test", "randomization", "--resamples", str(args.resamples),
                "--baseline", paths[0].name, "--format", "csv"]
    for m in MEASURES:
        argv_cli += ["-m", m]
    argv_cli += [str(qrels), *map(str, paths)]
    cli = [cli_run(argv_cli) for _ in range(args.repeat)]
    wall = min(c[0] for c in cli)
    print(f"cli      irmetrics compare --test randomization (end to end): {wall:6.2f} s,"
          f" peak RSS {max(c[1] for c in cli):.0f} MiB")

    def evaluate_all():
        ev = irm.Evaluator(str(qrels), MEASURES)
        return {p.name: ev.evaluate(str(p)) for p in paths}

    seconds, results = best_of(args.repeat, evaluate_all)
    print(f"evaluate all runs in-process:                               {seconds:6.2f} s")
    baseline = paths[0].name
    for test in ("t", "randomization", "bootstrap", "tukey"):
        seconds, cmp = best_of(args.repeat, lambda: irm.compare(
            None, results, MEASURES, baseline=None if test == "tukey" else baseline,
            test=test, n_resamples=args.resamples))
        rows = cmp.table().height
        print(f"stats    {test:<13} ({rows} rows, {len(cmp.query_ids)} queries):"
              f"{'':14}{seconds:6.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
