#!/usr/bin/env python
"""The file road of ``irmetrics eval`` on 1, 2, ... threads: wall, CPU, peak RSS, bytes.

    python benchmarks/bench_file_road.py [--data benchmarks/data] [--threads 1 2]
        [--repeat 5] [--messy] [--baseline /path/to/other/checkout [--baseline-threads]]
        [--pytrec-eval] [--yardsticks]

Every measurement is a fresh ``python -m irmetrics eval`` process (six measures: map P.10
recall.1000 recip_rank ndcg ndcg_cut.10) with ``--threads N``; the configurations are
alternated (A B C A B C ...) so that the load of a shared machine hits all of them alike,
and the median is reported. ``--baseline`` adds another checkout of irmetrics (e.g. the
main branch, run without ``--threads``; with ``--baseline-threads``, with each of
them) to the rotation; ``--pytrec-eval`` adds
pytrec_eval doing the same job in a fresh process (parse_qrel, parse_run, evaluate,
means: what bench_end_to_end.py times). ``--messy`` evaluates a copy of the run with tab
separators, CRLF line ends and a comment line per query (the same numbers), which must
stay on the bounded road. Every irmetrics output is compared byte for byte with the first
configuration's.

``--yardsticks`` adds two groups of processes to the rotation, each process one
``--threads 1`` command, the group timed from the first start to the last end (its CPU
summed, its peak the largest process's), outputs not compared:

* ``2 processes, halves``: two commands started together, each on one half of the run
  (cut at a query boundary near the middle), each reading all the qrels: what the file
  road would gain by splitting the run over processes instead of threads, with no
  interpreter lock or polars pool shared and the qrels read twice;
* ``2 copies side by side``: two commands on the whole run started together. Against
  ``threads=1`` alone, ``2 x its wall / this wall`` is the machine's throughput for this
  job on two cores (memory bandwidth, caches, frequency): the ceiling of any parallel road.

Children compile their bytecode once, into a cache of their own (as an installed package
has it), even where ``PYTHONDONTWRITEBYTECODE`` is set: compiling irmetrics' sources again
in every process costs about 0.3 s of one core, which no installed copy pays. Each
configuration runs once untimed first (bytecode, page cache). The CPU column (user + sys
of the child, all its threads) is the figure least disturbed by other work on a shared
machine; the load averages before and after are printed with the table.
Data: ``benchmarks/generate.py --seed 42`` (6.7M lines).

This is a benchmark, not a test: it asserts nothing about timings.
"""
from __future__ import annotations

import argparse
import contextlib
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
#: The yardstick that does the job twice: a pytrec_eval ratio against its wall would mislead.
COPIES = "2 copies side by side"


def child_env(tree: Path | None, pycache: str) -> dict:
    """The environment of a timed child: bytecode compiled once into ``pycache`` (as an
    installed package has it), and ``tree``'s irmetrics imported (None: pytrec_eval's)."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def cpu_since(before: resource.struct_rusage) -> float:
    """User + system seconds of the children waited for since ``before``."""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_group(runs: list[str], qrels: str, python: str, wrapper: str,
              pycache: str) -> tuple[float, float, float]:
    """Wall (first start to last end), CPU (summed) and the largest peak RSS MiB of one
    ``--threads 1`` command per file of ``runs``, all started together (this tree)."""
    env = child_env(REPO_ROOT, pycache)
    argvs = [[python, wrapper, "eval", "--threads", "1", *[f"-m{m}" for m in MEASURES],
              qrels, run] for run in runs]
    with contextlib.ExitStack() as stack:
        # stderr to files, not pipes: one child's full pipe must not stall the group while
        # another is waited for.
        errs = [stack.enter_context(tempfile.TemporaryFile()) for _ in argvs]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        children = [subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL,
                                     stderr=err) for argv, err in zip(argvs, errs)]
        for child in children:
            child.wait()
        wall = time.perf_counter() - start
        cpu = cpu_since(before)
        texts = []
        for err in errs:
            err.seek(0)
            texts.append(err.read().decode(errors="replace"))
    for argv, child, text in zip(argvs, children, texts):
        if child.returncode or "peak_rss_mib=" not in text:
            body = text.rsplit("peak_rss_mib=", 1)[0].strip()[-2000:]
            raise SystemExit(f"a process of the group failed (exit {child.returncode}): "
                             f"{' '.join(argv[1:])}\n{body}")
    peak = max(float(text.rsplit("peak_rss_mib=", 1)[-1]) for text in texts)
    return wall, cpu, peak


def _query_id(line: bytes) -> bytes | None:
    """A run line's query id (any whitespace separates the columns, as the reader's);
    None for a blank or ``#`` comment line, which belongs to no query."""
    fields = line.split(None, 1)
    return None if not fields or fields[0].startswith(b"#") else fields[0]


def _boundary_after(fh, position: int, line_start: bool = False) -> int | None:
    """Offset of the first line past ``position`` (past the line it cuts, unless
    ``line_start``) that starts another query's lines (the blank and comment lines
    before it go with it); None when the query there runs to the end of the file."""
    fh.seek(position)
    if position and not line_start:
        fh.readline()  # the rest of a line cut in the middle
    query, start = None, None
    while True:
        offset = fh.tell()
        line = fh.readline()
        if not line:
            return None
        ident = _query_id(line)
        if ident is None:
            start = offset if start is None else start
            continue
        if query is not None and ident != query:
            return offset if start is None else start
        query, start = ident, None


def halves(run: str, directory: str) -> list[str]:
    """The run cut in two at the first query boundary past its middle byte, or at the
    last one before it where the middle falls in the last query (copied in pieces: a
    child inherits this process's peak RSS, which the file read whole would raise).
    Columns split on any whitespace (``--messy``'s tabs and CRLF ends); a query's lines
    are taken to be contiguous, as ``generate.py`` writes them."""
    size = os.path.getsize(run)
    with open(run, "rb") as fh:
        cut = _boundary_after(fh, size // 2)
        if cut is None:  # the middle is in the last query: its first line is the cut
            last, position = None, 0
            while (found := _boundary_after(fh, position, True)) is not None:
                last, position = found, found
            cut = last
    if cut is None:
        raise SystemExit(f"--yardsticks needs a run of two queries or more to cut in halves;"
                         f" {run} has one (or none)")
    paths = [os.path.join(directory, f"run-half{i}.txt") for i in (1, 2)]
    with open(run, "rb") as src:
        for path, length in zip(paths, (cut, size - cut)):
            with open(path, "wb") as dst:
                while length:
                    piece = src.read(min(length, 1 << 24))
                    dst.write(piece)
                    length -= len(piece)
    return paths


def run_once(tree: Path | None, threads: int | None, qrels: str, run: str, python: str,
             wrapper: str, pycache: str) -> tuple[float, float, float, str]:
    """Wall s, CPU s (user + sys), peak RSS MiB and sha256 of stdout of one CLI run
    (``tree`` None: pytrec_eval's job)."""
    if tree is None:
        argv = [python, wrapper, "--pytrec-eval", qrels, run]
    else:
        argv = [python, wrapper, "eval", *[f"-m{m}" for m in MEASURES], qrels, run]
    if threads is not None:
        argv[3:3] = ["--threads", str(threads)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=tree or REPO_ROOT, env=child_env(tree, pycache),
                          capture_output=True, check=True)
    wall = time.perf_counter() - start
    cpu = cpu_since(before)
    # RUSAGE_CHILDREN's ru_maxrss is the largest child so far, not this one's: each
    # child reports its own peak on stderr (WRAPPER).
    peak = float(done.stderr.decode().rsplit("peak_rss_mib=", 1)[-1]) \
        if b"peak_rss_mib=" in done.stderr else float("nan")
    return wall, cpu, peak, hashlib.sha256(done.stdout).hexdigest()


#: ``python -m irmetrics`` (or, with ``--pytrec-eval``, pytrec_eval's job) that prints its
#: own peak RSS on stderr at exit.
WRAPPER = f"""\
import resource, runpy, sys
try:
    if sys.argv[1] == "--pytrec-eval":
        import pytrec_eval
        with open(sys.argv[2]) as f:
            qrel = pytrec_eval.parse_qrel(f)
        with open(sys.argv[3]) as f:
            run = pytrec_eval.parse_run(f)
        per_query = pytrec_eval.RelevanceEvaluator(qrel, {set(MEASURES)!r}).evaluate(run)
        keys = sorted(next(iter(per_query.values())))
        print({{k: sum(v[k] for v in per_query.values()) / len(per_query) for k in keys}})
    else:
        sys.argv = ["irmetrics"] + sys.argv[1:]
        runpy.run_module("irmetrics", run_name="__main__")
finally:
    sys.stderr.write("peak_rss_mib=%.1f" %
                     (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
"""


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
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--messy", action="store_true", help="tabs, CRLF and comment lines")
    ap.add_argument("--baseline", help="another irmetrics checkout, run without --threads")
    ap.add_argument("--baseline-threads", action="store_true",
                    help="run the baseline with each --threads value (a checkout that has it)")
    ap.add_argument("--pytrec-eval", action="store_true",
                    help="pytrec_eval's job in the rotation (same files and measures)")
    ap.add_argument("--yardsticks", action="store_true",
                    help="two processes on the run's halves, two copies side by side")
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
        configs: list[tuple[str, Path | None, int | None]] = \
            [(f"threads={n}", REPO_ROOT, n) for n in args.threads]
        if args.baseline and args.baseline_threads:
            configs += [(f"baseline threads={n}", Path(args.baseline), n) for n in args.threads]
        elif args.baseline:
            configs.append(("baseline", Path(args.baseline), None))
        if args.pytrec_eval:
            configs.append(("pytrec_eval", None, None))
        groups: dict[str, list[str]] = {}
        if args.yardsticks:
            groups = {"2 processes, halves": halves(run, tmp), COPIES: [run, run]}
        pycache = os.path.join(tmp, "pycache")
        load_before = os.getloadavg()
        for name, tree, threads in configs:  # untimed: bytecode and page cache
            run_once(tree, threads, qrels, run, args.python, wrapper, pycache)
        for files in groups.values():
            run_group(files, qrels, args.python, wrapper, pycache)
        timings: dict[str, list[tuple[float, float, float]]] = \
            {name: [] for name in [c[0] for c in configs] + list(groups)}
        digests = set()
        for _ in range(args.repeat):
            for name, tree, threads in configs:
                wall, cpu, peak, digest = run_once(tree, threads, qrels, run,
                                                   args.python, wrapper, pycache)
                timings[name].append((wall, cpu, peak))
                if tree is not None:
                    digests.add(digest)
                print(f"{name:<20} wall {wall:6.2f} s  cpu {cpu:6.2f} s  peak {peak:7.1f} MiB",
                      flush=True)
            for name, files in groups.items():
                wall, cpu, peak = run_group(files, qrels, args.python, wrapper, pycache)
                timings[name].append((wall, cpu, peak))
                print(f"{name:<20} wall {wall:6.2f} s  cpu {cpu:6.2f} s  peak {peak:7.1f} MiB",
                      flush=True)
        load_after = os.getloadavg()
        print(f"\nrun: {run} ({os.path.getsize(run) / 2**20:.0f} MiB), {os.cpu_count()} cores, "
              f"load average (1, 5, 15 min) before {_loads(load_before)}, after "
              f"{_loads(load_after)}; irmetrics outputs identical: {len(digests) == 1}")
        medians = {name: statistics.median(r[0] for r in rows) for name, rows in timings.items()}
        reference = medians.get("pytrec_eval")
        print("| configuration | wall s, median (min-max) | CPU s, median | peak RSS MiB, max |"
              + (" pytrec_eval / this |" if reference else ""))
        print("|---|---|---|---|" + ("---|" if reference else ""))
        for name, rows in timings.items():
            walls = [r[0] for r in rows]
            print(f"| {name} | {medians[name]:.2f} ({min(walls):.2f}-{max(walls):.2f}) | "
                  f"{statistics.median(r[1] for r in rows):.2f} | "
                  f"{max(r[2] for r in rows):.0f} |"
                  + (f" {reference / medians[name]:.1f}x |" if reference and name != COPIES
                     else " |" if reference else ""))
    return 0 if len(digests) == 1 else 2


def _loads(loads) -> str:
    return ", ".join(f"{x:.1f}" for x in loads)


if __name__ == "__main__":
    sys.exit(main())
