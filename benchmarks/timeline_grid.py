#!/usr/bin/env python
"""Where the wall time of ``evaluate_grid`` goes on each thread: a per-thread timeline.

    python benchmarks/timeline_grid.py [--threads 1,2] [--repeat 3] [--data DIR] [--spans]
                                       [--processes] [--switch-interval S]

The grid of bench_threads.py (40 qrels sets x 30 runs x 3 measures, LLM-judge shaped) runs
in a fresh process per (round, thread count), thread counts alternated. The child wraps
the grid's phases with time stamps on one clock, per thread: each qrels set read and
encoded (``qrels``), the sets stacked (``stack``), each run evaluated against all of them
(``run``); the rest of the call (the results assembled) is what lies outside them. For
every thread of the process it reads the kernel's ``/proc/.../schedstat`` before and after
(helper threads: when they start and end): the CPU it ran, the time it waited for a core
while runnable (``delay``: other work on the machine, or more runnable threads than
cores) and the time it was blocked (``blocked`` = life - CPU - delay: waiting for the
interpreter lock, for polars' pool, for another thread); and the worker threads' calls
into polars (the outermost query ``collect`` (``read_csv`` too), ``join``, ``sort``, ``unique``, ``n_unique``,
``to_numpy``): how many, their wall and the calling thread's own CPU in them (a call
whose wall grows with the thread count beyond the machine's load waits for the pool or
for the lock on its way back).

Printed per thread count (the round of median wall): each phase's span and items per
thread; each thread's CPU, delay and blocked; the native threads (polars' pool and its
executors) together; and where the idle core-time ``N x wall - CPU`` of N cores lies:

* ``serial``: wall during which only one of the N threads is inside a phase item (times
  N - 1), e.g. stacking, the results assembled, a last item alone at the end;
* ``waiting``: the worker threads' blocked time inside items, beyond what the native
  threads ran meanwhile (a thread waiting on polars while polars runs is not idle);
* ``delay``: runnable threads denied a core (on a shared machine, other people's work).

``--processes``: for each thread count N > 1, the runs are also evaluated by N processes
started together (each its share of the runs, every 1 of N, against all the qrels sets it
encoded before a barrier), in the same rotation: the run phase without a shared
interpreter lock or a shared polars pool. Threads as fast as processes put the loss
outside the process (cores taken by other work, memory bandwidth); processes faster put
it in the process (the lock, polars' pool).

``--switch-interval S``: the children run with ``sys.setswitchinterval(S)`` (Python's
default 0.005 s: a thread back from polars or numpy with the lock released waits up to
that long for a thread running Python to hand the lock over). A wait that shrinks with S
is the lock's convoy, not work.

A benchmark, not a test: it asserts nothing. Linux only (schedstat); elsewhere the
delay and blocked columns are blank. The spans wrap internal names that may change.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ["ndcg_cut.10", "map", "recall.100"]


def _schedstat(path: str) -> tuple[float, float] | None:
    """(CPU seconds, seconds runnable but waiting for a core) of one task, or None."""
    try:
        with open(path) as f:
            cpu, delay = f.read().split()[:2]
    except (OSError, ValueError):
        return None
    return int(cpu) / 1e9, int(delay) / 1e9


def _tasks() -> dict:
    out = {}
    for tid in os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else []:
        stat = _schedstat(f"/proc/self/task/{tid}/schedstat")
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if stat is not None:
            out[tid] = (name, stat)
    return out


def child(threads: int, data: Path, switch: float | None = None) -> dict:
    """One timed grid in this process, instrumented; the timeline as a dict."""
    import threading

    if switch is not None:
        sys.setswitchinterval(switch)

    sys.path.insert(0, str(ROOT))
    import irmetrics as irm
    from irmetrics.meta_evaluation import grid as grid_module

    files = json.loads((data / "grid.json").read_text())
    first = {k: files["qrels"][k] for k in list(files["qrels"])[:1]}
    irm.evaluate_grid(first, dict(list(files["runs"].items())[:2]), MEASURES,
                      threads=threads)  # warm-up: imports, first calls
    t0 = [0.0]
    spans: list = []

    tags, numbered = threading.local(), iter(range(1 << 30))

    def _me() -> str:  # helper threads of two phases share a name (and may share an id)
        if not hasattr(tags, "tag"):
            tags.tag = f"{threading.current_thread().name} ({next(numbered)})"
        return tags.tag

    ended: list = []

    def wrap(name: str, label: str) -> None:
        original = getattr(grid_module, name)

        def timed(*args, **kwargs):
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                spans.append((_me(), label, start - t0[0],
                              time.perf_counter() - t0[0], time.thread_time() - cpu))
        setattr(grid_module, name, timed)

    for name, label in (("Evaluator", "qrels"), ("stacked_for", "stack"),
                        ("evaluate_each", "run")):
        wrap(name, label)
    run = threading.Thread.run

    def counted(self):  # a helper thread's schedstat over its life
        start, born = _schedstat("/proc/thread-self/schedstat"), time.perf_counter()
        try:
            run(self)
        finally:
            end = _schedstat("/proc/thread-self/schedstat")
            if start and end:
                ended.append((_me(), end[0] - start[0], end[1] - start[1],
                              time.perf_counter() - born))
    threading.Thread.run = counted  # type: ignore[method-assign]
    import polars as pl

    inside = threading.local()
    in_polars: dict = {}  # thread -> [calls, wall, thread CPU] in polars' outermost calls

    def polars_call(owner, name: str) -> None:
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            if getattr(inside, "depth", 0):
                return original(*args, **kwargs)
            inside.depth = 1
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                inside.depth = 0
                row = in_polars.setdefault(_me(), [0, 0.0, 0.0])
                row[0] += 1
                row[1] += time.perf_counter() - start
                row[2] += time.thread_time() - cpu
        setattr(owner, name, timed)

    from polars.lazyframe import engine

    for owner, name in ((engine._LocalEngine, "collect"), (pl.Series, "n_unique"),
                        (pl.Series, "sort"), (pl.Series, "unique"), (pl.DataFrame, "sort"),
                        (pl.DataFrame, "join"), (pl.Series, "to_numpy")):
        polars_call(owner, name)
    before = _tasks()
    t0[0], cpu0 = time.perf_counter(), time.process_time()
    irm.evaluate_grid(files["qrels"], files["runs"], MEASURES, threads=threads)
    wall, cpu = time.perf_counter() - t0[0], time.process_time() - cpu0
    after = _tasks()
    main = _me()
    tasks = [(main if tid == str(os.getpid()) else name, c - before[tid][1][0],
              d - before[tid][1][1], wall)
             for tid, (name, (c, d)) in after.items() if tid in before]
    return {"threads": threads, "wall": wall, "cpu": cpu, "spans": spans,
            "tasks": tasks + ended, "main": main, "polars": in_polars}


def _share(part: list, barrier, out) -> None:
    """A process of ``--processes``: its runs against every qrels set, timed."""
    sys.path.insert(0, str(ROOT))
    from irmetrics.evaluate import Evaluator, evaluate_each, stacked_for

    qrels, runs = part
    evaluators = [Evaluator(q, MEASURES, threads=1) for q in qrels]
    stacked = stacked_for(evaluators)
    evaluate_each(evaluators, runs[0], stacked=stacked)  # warm-up
    barrier.wait()
    start = time.perf_counter()
    for run in runs:
        evaluate_each(evaluators, run, stacked=stacked)
    out.put(time.perf_counter() - start)


def processes(n: int, data: Path) -> float:
    """Wall of the run phase on ``n`` processes started together (the slowest)."""
    import multiprocessing

    files = json.loads((data / "grid.json").read_text())
    qrels, runs = list(files["qrels"].values()), list(files["runs"].values())
    spawn = multiprocessing.get_context("spawn")  # polars' threads do not survive a fork
    barrier, out = spawn.Barrier(n), spawn.Queue()
    workers = [spawn.Process(target=_share, args=((qrels, runs[i::n]), barrier, out))
               for i in range(n)]
    for worker in workers:
        worker.start()
    walls = [out.get() for _ in workers]
    for worker in workers:
        worker.join()
    return max(walls)


def _run_phase(t: dict) -> float:
    runs = [s for s in t["spans"] if s[1] == "run"]
    return max(s[3] for s in runs) - min(s[2] for s in runs)


def _busy_count(spans: list, wall: float) -> list[tuple[float, int]]:
    """(duration, number of threads inside a phase item) over [0, wall]."""
    edges = sorted({0.0, wall, *(s[2] for s in spans), *(s[3] for s in spans)})
    out = []
    for lo, hi in zip(edges, edges[1:]):
        mid = (lo + hi) / 2
        out.append((hi - lo, len({s[0] for s in spans if s[2] <= mid < s[3]})))
    return out


def report(t: dict, show_spans: bool) -> None:
    n, wall, cpu = t["threads"], t["wall"], t["cpu"]
    workers = {t["main"]} | {s[0] for s in t["spans"]}
    print(f"\n## threads={n}: wall {wall:.3f} s, CPU {cpu:.3f} s ({cpu / wall:.2f} cores busy)")
    print("| phase | thread | items | first start | last end | wall in items | CPU in items |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for label in ("qrels", "stack", "run"):
        for name in sorted({s[0] for s in t["spans"] if s[1] == label}):
            mine = [s for s in t["spans"] if s[1] == label and s[0] == name]
            print(f"| {label} | {name} | {len(mine)} | {min(s[2] for s in mine):.3f} |"
                  f" {max(s[3] for s in mine):.3f} | {sum(s[3] - s[2] for s in mine):.3f} |"
                  f" {sum(s[4] for s in mine):.3f} |")
    print("\n| thread | life s | CPU s | delay s | blocked s | polars calls | wall in them |"
          " its CPU in them |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    native = [0.0, 0.0]
    blocked = 0.0
    polars = dict(t["polars"])
    for name, c, d, life in t["tasks"]:
        if name in workers:
            blocked += max(0.0, life - c - d)
            calls, inner, own = polars.pop(name, [0, 0.0, 0.0])
            print(f"| {name} | {life:.3f} | {c:.3f} | {d:.3f} | {max(0.0, life - c - d):.3f} |"
                  f" {calls} | {inner:.3f} | {own:.3f} |")
        else:
            native[0] += c
            native[1] += d
    print(f"| native threads (polars' pool, executors) | | {native[0]:.3f} | {native[1]:.3f} |"
          " | | | |")
    busy = _busy_count(t["spans"], wall)
    serial = sum(dt for dt, k in busy if k <= 1 and n > 1) * (n - 1)
    waiting = max(0.0, blocked - native[0])
    idle = max(0.0, n * wall - cpu)
    print(f"\nidle core-time on {n} cores: {idle:.3f} s; serial (one thread or none in an item,"
          f" x {n - 1}): {serial:.3f} s; waiting (workers blocked beyond the native threads'"
          f" CPU): {waiting:.3f} s; delay (runnable, no core): "
          f"{sum(d for _, _, d, _ in t['tasks']):.3f} s (machine load {os.getloadavg()[0]:.1f})")
    if show_spans:
        for name, label, lo, hi, c in sorted(t["spans"], key=lambda s: s[2]):
            print(f"  {name:14s} {label:6s} {lo:7.3f} {hi:7.3f}  CPU {c:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=None,
                        help="a folder bench_threads.py's make_data wrote (grid.json)")
    parser.add_argument("--spans", action="store_true", help="print every span")
    parser.add_argument("--processes", action="store_true",
                        help="also the run phase on N processes (no shared lock or pool)")
    parser.add_argument("--switch-interval", type=float, default=None,
                        help="sys.setswitchinterval in the children (default: Python's)")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.data, args.switch_interval)))
        return
    counts = [int(x) for x in args.threads.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        data = args.data
        if data is None:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from bench_meta_evaluation import make_data

            data = Path(folder)
            qrels, runs = make_data(data, 40, 30, 43, 1000)
            (data / "grid.json").write_text(json.dumps(
                {"qrels": {k: str(v) for k, v in qrels.items()},
                 "runs": {k: str(v) for k, v in runs.items()}}))
        env = dict(os.environ, PYTHONPATH=str(ROOT),
                   **{v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                       "MKL_NUM_THREADS")})
        got: dict = {n: [] for n in counts}
        spread: dict = {n: [] for n in counts if n > 1 and args.processes}
        os.environ.update({k: v for k, v in env.items() if k.endswith("NUM_THREADS")})
        for round_ in range(args.repeat):
            for n in counts if round_ % 2 == 0 else counts[::-1]:
                switch = [] if args.switch_interval is None else \
                    ["--switch-interval", str(args.switch_interval)]
                done = subprocess.run([sys.executable, __file__, "--child", str(n),
                                       "--data", str(data), *switch], capture_output=True,
                                      text=True, env=env, check=True)
                got[n].append(json.loads(done.stdout.strip().splitlines()[-1]))
                if n in spread:
                    spread[n].append(processes(n, data))
    for n in counts:
        median = statistics.median_low(r["wall"] for r in got[n])
        report(next(r for r in got[n] if r["wall"] == median), args.spans)
    for n, walls in spread.items():
        print(f"\nrun phase, median of {args.repeat}: threads=1 "
              f"{statistics.median(_run_phase(r) for r in got[1]) if 1 in got else float('nan'):.3f}"
              f" s; threads={n} {statistics.median(_run_phase(r) for r in got[n]):.3f} s;"
              f" {n} processes {statistics.median(walls):.3f} s")


if __name__ == "__main__":
    main()
