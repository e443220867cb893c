#!/usr/bin/env python
"""The ir_measures drop-in against ir_measures 0.4.3 (pytrec_eval provider).

    python benchmarks/generate.py --seed 42 --queries 1000 --depth 1000 --out /tmp/irm_data/
    python benchmarks/bench_ir_measures.py /tmp/irm_data/ --repeats 3

Measures served by ir_measures' pytrec_eval provider (``AP``, ``nDCG@10``, ``P@10``,
``R@1000``, ``RR``), the same code run with ``import ir_measures`` and with
``from irmetrics.compat import ir_measures``, on:

* PyTerrier-style pandas frames (the columns PyTerrier hands ir_measures:
  ``query_id``/``doc_id``/``score`` and ``query_id``/``doc_id``/``relevance``, built
  before the clock starts);
* the TREC files, read with the library's own ``read_trec_qrels``/``read_trec_run``
  inside the clock (what an ir_measures user writes);
* the file paths themselves (the drop-in only: ir_measures takes no paths).

Each of ``calc_aggregate`` and ``iter_calc`` (every metric consumed) runs in a fresh
process per timing, the two libraries alternating, ``--repeats`` rounds; each process
times the call alone (imports and frame building excluded) and reports its peak RSS.
The aggregates of the two libraries are checked to agree (1e-9). Nothing is asserted
about the times; figures go in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = r'''
import json, math, resource, sys, time
tool, case, call, data = sys.argv[1:5]
if tool == "ir_measures":
    import ir_measures as im
else:
    from irmetrics.compat import ir_measures as im
measures = [im.AP, im.nDCG @ 10, im.P @ 10, im.R @ 1000, im.RR]
qrels_path, run_path = data + "/qrels.txt", data + "/run.txt"
if case == "frames":
    import pandas as pd
    qrels = pd.read_csv(qrels_path, sep=" ", header=None, dtype={0: str, 2: str},
                        names=["query_id", "iteration", "doc_id", "relevance"])
    run = pd.read_csv(run_path, sep=" ", header=None, dtype={0: str, 2: str},
                      names=["query_id", "Q0", "doc_id", "rank", "score", "name"])
    qrels = qrels[["query_id", "doc_id", "relevance"]]
    run = run[["query_id", "doc_id", "score"]]
start = time.perf_counter()
if case == "files":
    qrels, run = im.read_trec_qrels(qrels_path), im.read_trec_run(run_path)
elif case == "paths":
    qrels, run = qrels_path, run_path
if call == "calc_aggregate":
    values = {str(m): float(v) for m, v in im.calc_aggregate(measures, qrels, run).items()}
else:
    sums = {}
    for metric in im.iter_calc(measures, qrels, run):
        sums[str(metric.measure)] = sums.get(str(metric.measure), 0.0) + metric.value
    values = sums
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "values": values,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''

TOOLS = ("ir_measures", "irmetrics")
JOBS = [(case, call, tool) for case in ("frames", "files") for call in
        ("calc_aggregate", "iter_calc") for tool in TOOLS]
JOBS += [("paths", call, "irmetrics") for call in ("calc_aggregate", "iter_calc")]


def run_job(case: str, call: str, tool: str, data: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", WORKER, tool, case, call, str(data)],
                         capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path, help="folder with qrels.txt and run.txt")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    got: dict = {job: [] for job in JOBS}
    for _ in range(args.repeats):
        for job in JOBS:  # the two libraries alternate within each (case, call)
            got[job].append(run_job(*job, args.data))
    reference = {(case, call): got[(case, call, "ir_measures")][0]["values"]
                 for case, call, tool in JOBS if tool == "ir_measures"}
    print(f"{'inputs':<7} {'call':<15} {'library':<12} {'median s':>9} {'min-max s':>13}"
          f" {'peak MiB':>9} {'speed-up':>9}")
    for case, call, tool in JOBS:
        runs = got[(case, call, tool)]
        seconds = [r["seconds"] for r in runs]
        theirs = reference[("files" if case == "paths" else case, call)]
        for name, value in runs[0]["values"].items():  # the same numbers
            assert abs(value - theirs[name]) <= 1e-9 * max(1.0, abs(theirs[name])), \
                (case, call, tool, name, value, theirs[name])
        base = statistics.median(r["seconds"] for r in got[
            ("files" if case == "paths" else case, call, "ir_measures")])
        print(f"{case:<7} {call:<15} {tool:<12} {statistics.median(seconds):>9.2f}"
              f" {min(seconds):>6.2f}-{max(seconds):<6.2f}"
              f" {max(r['rss_mib'] for r in runs):>9.0f}"
              f" {base / statistics.median(seconds):>8.2f}x")


if __name__ == "__main__":
    main()
