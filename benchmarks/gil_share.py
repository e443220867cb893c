#!/usr/bin/env python
"""How much of a parallel road's work holds the interpreter lock: the bound it sets on threads.

    python benchmarks/gil_share.py [--cases eval,grid,tukey] [--threads 1 2] [--data DIR]
        [--grid-topics 43] [--topics 250] [--systems 20] [--rate 250] [--top 10]

Threads share one interpreter lock: whatever part of a job runs Python bytecode, or a
numpy or polars call that does not release the lock, runs on one thread at a time. If
that part is a share ``s`` of the job's time on one thread, no number of threads makes
the job more than ``1 / s`` times faster, and lock hand-offs bring it towards Amdahl's
``1 / (s + (1 - s) / N)``. Here ``s`` is measured: each case runs in a fresh child
process (imports and a warm-up first), then ``py-spy record --gil`` samples the one
thread that holds the lock, only while the measured work runs (a sample where no thread
holds it is not recorded). ``s`` = lock-held samples / rate / the work's wall.

Cases: ``eval``, one ``irmetrics eval`` of bench_file_road.py's six measures on
``--data`` (the 7M-line run of ``benchmarks/generate.py --seed 42``), in process, with
polars' pool sized from ``--threads`` as the command sizes it; ``grid``,
:func:`irmetrics.evaluate_grid` over bench_threads.py's 40 qrels x 30 runs x 3 measures
with ``--grid-topics`` topics (43, TREC DL-sized, as bench_threads.py has it);
``randomization``, ``bootstrap``, ``tukey``, ``power``, ``swap``, ``agreement``,
bench_threads.py's statistics on ``--topics`` x ``--systems``.

Printed per case and thread count: the work's wall and CPU, ``s``, the bounds ``1 / s``
and Amdahl's on that many threads (from the one-thread ``s``), the speed-up measured
in the same run, and the ``--top`` places that hold the lock most (innermost irmetrics
frame). Needs py-spy (``pip install py-spy``; it reads the child's memory, which some
containers forbid). py-spy's sampling slows the child a little: read ``s`` to about
+-0.05. A benchmark, not a test: it asserts nothing.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
STATS = ("randomization", "bootstrap", "tukey", "power", "swap", "agreement")
#: Seconds py-spy has to attach to the child before the run is given up.
ATTACH_TIMEOUT = 30.0
#: Fewer lock samples than this and ``s`` is a guess (one sample is 1/FEW_SAMPLES of s).
FEW_SAMPLES = 50

#: The child: imports and warms up, says READY, waits for the sampler to attach, runs the
#: case's work once and prints its wall and CPU.
CHILD = r'''
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
case, threads, data = sys.argv[2], int(sys.argv[3]), sys.argv[4]
if case == "eval":
    from irmetrics.cli import main
    argv = ["eval", "--threads", str(threads), *sys.argv[5:]]
    def work():
        with open(os.devnull, "w") as sink:
            saved, sys.stdout = sys.stdout, sink
            try:
                status = main(argv)
            finally:
                sys.stdout = saved
        if status:  # the command's own message is on stderr; no share of a failed run
            sys.exit(status)
elif case == "grid":
    import irmetrics as irm
    files = json.loads(open(os.path.join(data, "grid.json")).read())
    measures = ["ndcg_cut.10", "map", "recall.100"]
    first = {k: files["qrels"][k] for k in list(files["qrels"])[:1]}
    irm.evaluate_grid(first, dict(list(files["runs"].items())[:2]), measures, threads=threads)
    def work():
        irm.evaluate_grid(files["qrels"], files["runs"], measures, threads=threads)
else:
    from pathlib import Path
    from bench_threads import worker
    worker(case, threads, Path(data), None)  # warm-up: imports, first calls
    def work():
        worker(case, threads, Path(data), None)
print("READY", flush=True)
sys.stdin.readline()
start, cpu = time.perf_counter(), time.process_time()
work()
print(json.dumps({"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu}),
      flush=True)
sys.stdin.readline()  # the sampler stops before the interpreter's exit, which holds the lock
'''


def sample(case: str, threads: int, data: str, extra: list[str], rate: int,
           pyspy: str, out: Path) -> dict:
    """One fresh child: the work's wall and CPU, and py-spy's lock-held stacks."""
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), OPENBLAS_NUM_THREADS="1")
    if case == "eval":  # as `irmetrics eval --threads N` sizes polars' pool
        env.setdefault("POLARS_MAX_THREADS", str(threads))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(BENCH_DIR), case,
                              str(threads), data, *extra],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdin is not None and child.stdout is not None
    if child.stdout.readline().strip() != "READY":
        child.wait()
        raise SystemExit(f"{case}: the child failed before its work (exit {child.returncode})")
    # --nonblocking: py-spy reads the child's memory without stopping it; stopping every
    # thread at each sample serialises them and hides the very overlap measured here.
    spy = subprocess.Popen([pyspy, "record", "--gil", "--nonblocking", "--rate", str(rate),
                            "--format", "raw", "--output", str(out), "--pid", str(child.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert spy.stdout is not None
    # py-spy says "Sampling process ..." on its stdout once attached: the work waits for
    # it (a fixed wait let a slow attach miss the work's first part and understate s).
    said = ""
    if select.select([spy.stdout], [], [], ATTACH_TIMEOUT)[0]:
        said = spy.stdout.readline()
    if "Sampling process" not in said:
        child.kill()
        child.wait()
        spy.kill()
        rest = "".join(spy.communicate())
        raise SystemExit(f"py-spy could not sample the child (it reads the child's memory "
                         f"with ptrace, which some containers forbid): "
                         f"{(said + rest).strip() or 'no answer'}")
    child.stdin.write("go\n")
    child.stdin.flush()
    line = child.stdout.readline()
    spy.send_signal(signal.SIGINT)  # py-spy writes what it sampled and ends
    spy.communicate()
    if not line:
        child.wait()
        raise SystemExit(f"{case}, {threads} thread(s): the child failed in its work "
                         f"(exit {child.returncode})")
    result = json.loads(line)
    child.stdin.close()
    child.wait()
    held: collections.Counter = collections.Counter()
    total = 0
    for line in out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        total += int(count)
        place = "(outside irmetrics)"
        for frame in reversed(stack.split(";")):
            if "irmetrics/" in frame:
                name, _, where = frame.partition(" (")
                place = f"{name} ({where.rsplit('irmetrics/', 1)[-1]}"
                break
        held[place] += int(count)
    result["held"] = total / rate
    result["samples"] = total
    result["places"] = held
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="eval,grid,tukey")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--data", default=str(BENCH_DIR / "data"),
                        help="folder with qrels.txt and run.txt (the eval case)")
    parser.add_argument("--grid-topics", type=int, default=43)
    parser.add_argument("--topics", type=int, default=250)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    pyspy = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if pyspy is None:
        raise SystemExit("gil_share.py needs py-spy: pip install py-spy")
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in ("eval", "grid", *STATS)]
    if unknown:
        raise SystemExit(f"unknown case(s) {unknown}: eval, grid or one of {', '.join(STATS)}")
    for option in ("threads", "grid_topics", "topics", "systems", "rate", "top"):
        value = getattr(args, option)
        if (min(value) if isinstance(value, list) else value) < 1:
            raise SystemExit(f"--{option.replace('_', '-')} must be 1 or more; got {value!r}.")
    threads = sorted(set(args.threads) | {1})  # the bounds need the one-thread share
    measures = ["map", "P.10", "recall.1000", "recip_rank", "ndcg", "ndcg_cut.10"]
    sys.path.insert(0, str(BENCH_DIR))
    with tempfile.TemporaryDirectory(prefix="irmetrics-gil-") as folder:
        work = Path(folder)
        if "grid" in cases or any(c in STATS for c in cases):
            # one call writes the grid's files and the statistics' scores: a second call
            # would write the grid again at its default size over --grid-topics
            from bench_threads import make_data
            make_data(work, args.topics, args.systems, args.grid_topics)
        print(f"# load average at start: {os.getloadavg()[0]:.2f}; py-spy {args.rate} Hz")
        print("| case | threads | wall s | CPU s | lock held s | share s | 1 / s "
              "| Amdahl | measured |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        places = {}
        for case in cases:
            extra: list[str] = []
            data = str(work)
            if case == "eval":
                extra = [*[f"-m{m}" for m in measures],
                         os.path.join(args.data, "qrels.txt"), os.path.join(args.data, "run.txt")]
            one: dict = {}
            for n in threads:
                got = sample(case, n, data, extra, args.rate, pyspy,
                             work / f"{case}-{n}.txt")
                share = got["held"] / got["wall"]
                if n == 1:
                    one = got
                base = one["held"] / one["wall"]
                amdahl = 1 / (base + (1 - base) / n)
                print(f"| {case} | {n} | {got['wall']:.3f} | {got['cpu']:.3f} | "
                      f"{got['held']:.3f} | {share:.0%} | {1 / base:.2f}x | {amdahl:.2f}x | "
                      f"{one['wall'] / got['wall']:.2f}x |", flush=True)
                places[(case, n)] = got["places"]
                if got["samples"] < FEW_SAMPLES:
                    print(f"# {case}, {n} thread(s): {got['samples']} lock samples, too few "
                          f"for s: a larger job (--topics, --systems, --grid-topics, --data)"
                          f" or --rate")
        print(f"# load average at end: {os.getloadavg()[0]:.2f}")
        for (case, n), held in places.items():
            total = sum(held.values()) or 1
            print(f"\n## {case}, {n} thread(s): where the lock is held (share of its samples)")
            for place, count in held.most_common(args.top):
                print(f"- {count / total:5.1%} {place}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
