#!/usr/bin/env python
"""The run's first chunks parsed while the qrels are encoded (``Evaluator(first_run=)``),
timed against the same evaluation without it, alternated in one process.

    python benchmarks/bench_prefetch.py [--data benchmarks/data] [--threads 2] [--pairs 8]
        [--one-thread]

Each pair runs ``Evaluator(qrels, measures, threads=N).evaluate(run)`` (qrels encoded, then
the run read) and the same with ``first_run=run`` (the run's first chunk per thread parsed
meanwhile), in alternating order (off-on, on-off, ...) so that the load of a shared machine
hits both alike; it prints wall and process CPU of every run, their means and minima and
the mean of the paired wall differences, and checks that both give the same numbers.
``--one-thread`` adds ``threads=1`` to each round, for the speed-up over one thread.
The six measures of ``bench_file_road.py``. Data: ``benchmarks/generate.py --seed 42``.

This is a benchmark, not a test: it asserts nothing about timings.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

MEASURES = ["map", "P.10", "recall.1000", "recip_rank", "ndcg", "ndcg_cut.10"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "data"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--one-thread", action="store_true")
    args = parser.parse_args()
    from irmetrics import Evaluator

    qrels = os.path.join(args.data, "qrels.txt")
    run = os.path.join(args.data, "run.txt")

    def once(prefetch: bool, threads: int):
        wall, cpu = time.perf_counter(), time.process_time()
        ev = Evaluator(qrels, MEASURES, threads=threads,
                       first_run=run if prefetch else None)
        results = ev.evaluate_unchecked(run)
        return time.perf_counter() - wall, time.process_time() - cpu, results

    configs = [("off", False, args.threads), ("on", True, args.threads)]
    if args.one_thread:
        configs.append(("1 thread", False, 1))
    once(False, args.threads)  # warm: imports, page cache
    times: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in configs}
    reference = None
    for k in range(args.pairs):
        for name, prefetch, threads in (configs if k % 2 == 0 else configs[::-1]):
            wall, cpu, results = once(prefetch, threads)
            times[name].append((wall, cpu))
            table = results.per_query()
            if reference is None:
                reference = table
            assert table.equals(reference), "the numbers differ"
            print(f"round {k} {name:8} wall {wall:.3f} s cpu {cpu:.3f} s", flush=True)
    for name, _, _ in configs:
        walls = [w for w, _ in times[name]]
        cpus = [c for _, c in times[name]]
        print(f"{name:8}: wall mean {statistics.mean(walls):.3f} median"
              f" {statistics.median(walls):.3f} min {min(walls):.3f}; cpu mean"
              f" {statistics.mean(cpus):.3f} min {min(cpus):.3f}")
    diff = np.array([a[0] - b[0] for a, b in zip(times["off"], times["on"])])
    print(f"paired wall difference (off - on): mean {diff.mean():.3f} s,"
          f" median {np.median(diff):.3f} s, {int((diff > 0).sum())}/{diff.size} pairs faster;"
          f" load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
