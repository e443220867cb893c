#!/usr/bin/env python
"""The file road of ``irmetrics eval`` on 1, 2, ... threads: wall, CPU, peak RSS, bytes.

    python benchmarks/bench_file_road.py [--data benchmarks/data] [--threads 1 2]
        [--repeat 3] [--messy] [--baseline /path/to/other/checkout]

Every measurement is a fresh ``python -m irmetrics eval`` process (six measures: map P.10
recall.1000 recip_rank ndcg ndcg_cut.10) with ``--threads N``; the configurations are
alternated (A B C A B C ...) so that the load of a shared machine hits all of them alike,
and the median is reported. ``--baseline`` adds another checkout of irmetrics (e.g. the
main branch, run without ``--threads``) to the rotation. ``--messy`` evaluates a copy of
the run with tab separators, CRLF line ends and a comment line per query (the same
numbers), which must stay on the bounded road. Every output is compared byte for byte
with the first configuration's. Data: ``benchmarks/generate.py --seed 42`` (6.7M lines).

This is a benchmark, not a test: it asserts nothing about timings.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
MEASURES = ["map", "P.10", "recall.1000", "recip_rank", "ndcg", "ndcg_cut.10"]


def run_once(tree: Path, threads: int | None, qrels: str, run: str, python: str,
             wrapper: str) -> tuple[float, float, float, str]:
    """Wall s, CPU s (user + sys), peak RSS MiB and sha256 of stdout of one CLI run."""
    argv = [python, wrapper, "eval", *[f"-m{m}" for m in MEASURES], qrels, run]
    if threads is not None:
        argv[3:3] = ["--threads", str(threads)]
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # RUSAGE_CHILDREN's ru_maxrss is the largest child so far, not this one's: each
    # child reports its own peak on stderr (WRAPPER).
    peak = float(done.stderr.decode().rsplit("peak_rss_mib=", 1)[-1]) \
        if b"peak_rss_mib=" in done.stderr else float("nan")
    return wall, cpu, peak, hashlib.sha256(done.stdout).hexdigest()


#: ``python -m irmetrics`` that prints its own peak RSS on stderr at exit.
WRAPPER = (
    "import resource, runpy, sys; sys.argv = ['irmetrics'] + sys.argv[1:];\n"
    "try:\n    runpy.run_module('irmetrics', run_name='__main__')\n"
    "finally:\n    sys.stderr.write('peak_rss_mib=%.1f' % "
    "(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))\n"
)


def messy_copy(run: str, directory: str) -> str:
    """The run with tabs, CRLF ends and a comment line before each query."""
    out = os.path.join(directory, "run-messy.txt")
    last = None
    with open(run, "rb") as src, open(out, "wb") as dst:
        for line in src:
            query = line.split(b" ", 1)[0]
            if query != last:
                dst.write(b"# query " + query + b"\n")
                last = query
            dst.write(line.rstrip(b"\n").replace(b" ", b"\t") + b"\r\n")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(BENCH_DIR / "data"))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--messy", action="store_true", help="tabs, CRLF and comment lines")
    ap.add_argument("--baseline", help="another irmetrics checkout, run without --threads")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    qrels, run = os.path.join(args.data, "qrels.txt"), os.path.join(args.data, "run.txt")
    if not os.path.exists(run):
        print(f"no {run}: python benchmarks/generate.py --seed 42 --out {args.data}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        wrapper = os.path.join(tmp, "wrapper.py")
        with open(wrapper, "w") as fh:
            fh.write(WRAPPER)
        if args.messy:
            run = messy_copy(run, tmp)
        configs = [(f"threads={n}", REPO_ROOT, n) for n in args.threads]
        if args.baseline:
            configs.append(("baseline", Path(args.baseline), None))
        timings: dict[str, list[tuple[float, float, float]]] = {c[0]: [] for c in configs}
        digests = set()
        for _ in range(args.repeat):
            for name, tree, threads in configs:
                wall, cpu, peak, digest = run_once(tree, threads, qrels, run,
                                                   args.python, wrapper)
                timings[name].append((wall, cpu, peak))
                digests.add(digest)
                print(f"{name:<12} wall {wall:6.2f} s  cpu {cpu:6.2f} s  peak {peak:7.1f} MiB",
                      flush=True)
        print(f"\nrun: {run} ({os.path.getsize(run) / 2**20:.0f} MiB), load average "
              f"{os.getloadavg()[0]:.1f}; outputs identical: {len(digests) == 1}")
        print("| configuration | wall s, median (min-max) | CPU s, median | peak RSS MiB, max |")
        print("|---|---|---|---|")
        for name, rows in timings.items():
            walls = [r[0] for r in rows]
            print(f"| {name} | {statistics.median(walls):.2f} ({min(walls):.2f}-"
                  f"{max(walls):.2f}) | {statistics.median(r[1] for r in rows):.2f} | "
                  f"{max(r[2] for r in rows):.0f} |")
    return 0 if len(digests) == 1 else 2


if __name__ == "__main__":
    sys.exit(main())
