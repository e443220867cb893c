#!/usr/bin/env python
"""The run's first chunks parsed while the qrels are encoded (``Evaluator(first_run=)``),
timed against the same evaluation without it, alternated in one process.

    python benchmarks/bench_prefetch.py [--data benchmarks/data] [--threads 2] [--pairs 8]

Each pair runs ``Evaluator(qrels, measures, threads=N).evaluate(run)`` (qrels encoded, then
the run read) and the same with ``first_run=run`` (the run's first chunk per thread parsed
meanwhile), in alternating order (off-on, on-off, ...) so that the load of a shared machine
hits both alike; it prints wall and process CPU of every run, their means and minima and
the mean of the paired wall differences, and checks that both give the same numbers.
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
    args = parser.parse_args()
    from irmetrics import Evaluator

    qrels = os.path.join(args.data, "qrels.txt")
    run = os.path.join(args.data, "run.txt")

    def once(prefetch: bool):
        wall, cpu = time.perf_counter(), time.process_time()
        ev = Evaluator(qrels, MEASURES, threads=args.threads,
                       first_run=run if prefetch else None)
        results = ev.evaluate_unchecked(run)
        return time.perf_counter() - wall, time.process_time() - cpu, results

    once(False)  # warm: imports, page cache
    times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    reference = None
    for k in range(args.pairs):
        for prefetch in ((False, True) if k % 2 == 0 else (True, False)):
            wall, cpu, results = once(prefetch)
            times[prefetch].append((wall, cpu))
            table = results.per_query()
            if reference is None:
                reference = table
            assert table.equals(reference), "the numbers differ"
            print(f"pair {k} first_run={'on ' if prefetch else 'off'} wall {wall:.3f} s"
                  f" cpu {cpu:.3f} s", flush=True)
    for prefetch in (False, True):
        walls = [w for w, _ in times[prefetch]]
        cpus = [c for _, c in times[prefetch]]
        print(f"first_run {'on ' if prefetch else 'off'}: wall mean {statistics.mean(walls):.3f}"
              f" min {min(walls):.3f}; cpu mean {statistics.mean(cpus):.3f}"
              f" min {min(cpus):.3f}")
    diff = np.array([a[0] - b[0] for a, b in zip(times[False], times[True])])
    print(f"paired wall difference (off - on): mean {diff.mean():.3f} s,"
          f" median {np.median(diff):.3f} s, {int((diff > 0).sum())}/{diff.size} pairs faster;"
          f" load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
