#!/usr/bin/env python
"""Where the wall time of ``irmetrics eval`` goes: a timeline of one fresh process.

    python benchmarks/timeline_file_road.py [--data benchmarks/data] [--threads 1 2]
        [--all]

For each thread count, one ``irmetrics eval`` (the six measures of bench_file_road.py) runs
in a fresh child process that stamps, on one clock: the interpreter's start (from
/proc), imports done, the qrels encoded, each run chunk's parse and pack on each worker
(the kernels run inside the pack), the merge of the per-query values, the formatting and
the output. The child's process CPU time is printed at imports done, and for the qrels
and the whole command, so that the idle share of each phase (2 x wall - CPU on two cores)
shows. With ``--all`` every span is printed; by default the qrels chunks and the first and
last run chunks of each worker. Bytecode is compiled once into a cache of the benchmark's
own, as bench_file_road.py does.

A benchmark, not a test: it asserts nothing. The spans wrap internal functions (names
that may change); figures taken on a machine shared with other work are stretched by it:
read them as a shape, and compare configurations only alternated (bench_file_road.py).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
MEASURES = ["map", "P.10", "recall.1000", "recip_rank", "ndcg", "ndcg_cut.10"]

#: The child: wraps the phases' functions with time stamps, runs the command line, prints
#: the timeline on stderr (stdout is the command's own output, discarded).
CHILD = r'''
import collections, os, sys, threading, time
T0 = time.perf_counter()
with open("/proc/self/stat") as f:
    started = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
with open("/proc/uptime") as f:
    before_t0 = float(f.read().split()[0]) - started  # interpreter start -> T0
spans, cpu = [], {}

def stamp(t):
    return t - T0 + before_t0

def wrap(owner, name, label, with_cpu=False):
    original = getattr(owner, name)
    def timed(*args, **kwargs):
        t, c = time.perf_counter(), time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            spans.append((threading.current_thread().name, label, stamp(t),
                          stamp(time.perf_counter())))
            if with_cpu:
                cpu[label] = (time.perf_counter() - t, time.process_time() - c)
    setattr(owner, name, timed)

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the console script sets it
from irmetrics.cli import eval_cmd
from irmetrics.engine import pack, stream
import irmetrics.evaluate
evaluate = sys.modules["irmetrics.evaluate"]
imports = (stamp(time.perf_counter()), time.process_time())
wrap(evaluate, "encode_qrels_file", "qrels", True)
wrap(pack.JudgmentChunk, "of", "qrels chunk")
wrap(stream, "_read_run_chunk", "parse")
wrap(stream._Chunks, "prepare", "pack")
wrap(stream._Chunks, "finish", "merge")
wrap(evaluate.Evaluator, "results", "results")
wrap(eval_cmd, "trec_text", "format")
wrap(eval_cmd, "write_as_read", "output")
from irmetrics.cli import main
t, c = time.perf_counter(), time.process_time()
status = main(sys.argv[1:])
cpu["command"] = (time.perf_counter() - t, time.process_time() - c)
sys.stdout.flush()
end = stamp(time.perf_counter())
show_all = os.environ.get("TIMELINE_ALL") == "1"
out = sys.stderr.write
out(f"\ninterpreter start -> first line: {before_t0:.3f} s\n")
out(f"imports done at {imports[0]:.3f} s (process CPU {imports[1]:.3f} s)\n")
by_thread = collections.defaultdict(list)
for thread, label, a, b in spans:
    by_thread[thread].append((a, b, label))
for thread, items in by_thread.items():
    items.sort()
    runs = [i for i in items if i[2] in ("parse", "pack")]
    kept = items if show_all or len(runs) <= 4 else \
        [i for i in items if i[2] not in ("parse", "pack")] + runs[:2] + runs[-2:]
    busy = sum(b - a for a, b, label in items if label == "parse" or label == "pack")
    out(f"[{thread}]" + (f"  {len(runs) // 2} run chunks, parse + pack {busy:.3f} s" if runs
                         else "") + "\n")
    for a, b, label in sorted(kept):
        out(f"    {a:7.3f} - {b:7.3f}  {label:12s} {b - a:6.3f}\n")
for label, (wall, used) in cpu.items():
    out(f"{label}: wall {wall:.3f} s, process CPU {used:.3f} s\n")
out(f"end {end:.3f} s (exit {status})\n")
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(BENCH_DIR / "data"))
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--all", action="store_true", help="print every span")
    args = parser.parse_args()
    qrels, run = os.path.join(args.data, "qrels.txt"), os.path.join(args.data, "run.txt")
    with tempfile.TemporaryDirectory(prefix="irmetrics-timeline-") as pycache:
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONPYCACHEPREFIX=pycache,
                   TIMELINE_ALL="1" if args.all else "0")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for threads in args.threads:
            argv = [sys.executable, "-c", CHILD, "eval", *[f"-m{m}" for m in MEASURES],
                    "--threads", str(threads), qrels, run]
            subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           check=True)  # untimed: bytecode, page cache
            done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, check=True, text=True)
            timeline = done.stderr.split("\ninterpreter start", 1)[-1]
            print(f"== irmetrics eval --threads {threads} (load average "
                  f"{os.getloadavg()[0]:.2f})\ninterpreter start{timeline}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
