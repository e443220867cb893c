#!/usr/bin/env python
"""Scaling of irmetrics' parallel roads with the thread count, outputs checked byte for byte.

    python benchmarks/bench_threads.py [--threads 1,2,4,8,16] [--repeat 3] [--keep-blas]
                                       [--cases grid,randomization,bootstrap,tukey,power,swap,
                                                agreement,rank_intervals,eval]
                                       [--topics 250] [--systems 20] [--grid-topics 43]
                                       [--eval-data DIR]
                                       [--baseline OTHER_CHECKOUT]

Every measurement runs in a fresh process (``--worker``), which imports irmetrics, loads
its inputs, warms up on a small slice (imports, first calls), then times the case alone
and prints its wall and CPU seconds, the CPU seconds of the calling thread alone and the
SHA-256 of its output; the thread counts are alternated within each round (forward, then
backward in the next round), so that a machine shared with other work loads them alike.
The table gives the median per (case, threads), the speed-up and parallel efficiency
against ``threads=1``, whether the output's bytes equal those of ``threads=1``, and the
figures that stay meaningful on a loaded machine: the CPU seconds, the cores kept busy
(CPU / wall), the serial share ``s`` and the speed-up that share allows on an idle
machine, ``1 / (s + (1 - s) / N)`` (Amdahl; it ignores the interpreter lock and memory
bandwidth, and for ``grid`` polars' own pool, which keeps a second core partly busy even
on one thread, so the grid's real ratio is lower). The calling thread is one of the N
(:func:`irmetrics.parallel.map_ordered`), so ``s`` is the CPU it spent beyond its share
of the parallel work, that of an average helper thread: with ``C`` the caller's CPU and
``H`` the other threads', ``s = max(0, C - H / (N - 1)) / (C + H)``; on one thread,
``C / (C + H)``. The 1-minute load average is
read before each run (median per row). ``--baseline`` measures another checkout (its own
copy of this script and its own irmetrics) in the same rotation, its rows marked
``(baseline)``: on a shared machine, the CPU columns of the two are then comparable.
Thread counts above the cores this process may use
are skipped. BLAS is held to one thread in the workers (``OMP_NUM_THREADS`` etc. = 1), so
that the thread count measured is irmetrics' own; ``--keep-blas`` leaves the BLAS settings
as they are (the statistics hold numpy's BLAS to one thread themselves while they draw,
:func:`irmetrics.parallel.one_blas_thread`).

Cases (seeded data, written once to a temporary directory):

* ``grid``: :func:`irmetrics.evaluate_grid` over 40 qrels sets x 30 runs x 3 measures
  (``ndcg_cut.10``, ``map``, ``recall.100``), LLM-judge shaped: TREC DL-sized topics (43
  x 1,000 documents per run, ~215 judgments per topic; ``--grid-topics`` for more), the
  qrels sets noisy relabellings of the first (the data of ``bench_meta_evaluation.py``);
  output: the per-query table.
* ``randomization``, ``bootstrap``: :func:`irmetrics.stats.paired_test`, 10,000
  resamples, every pair of ``--systems`` systems on ``--topics`` topics (one call, a
  column per pair); output: p-values and intervals.
* ``tukey``: :func:`irmetrics.stats.discriminative_power` with randomised Tukey HSD,
  10,000 resamples; ``power``: the same with the randomization test; ``swap``:
  :func:`irmetrics.stats.swap_rate`, 10,000 trials; output: the p-values / bin counts.
* ``agreement``: :func:`irmetrics.stats.ranking_agreement` (the meta-evaluation's
  intervals) of the scores against a perturbed copy, ``k=10``, 10,000 resamples;
  ``rank_intervals``: :func:`irmetrics.stats.rank_intervals.rank_intervals`, 10,000
  resamples; output: the estimates and interval ends.
* ``eval``: ``irmetrics eval --threads N`` on the 7M-line MS MARCO-shaped run of
  ``benchmarks/generate.py --queries 7000`` (``--eval-data``: the folder holding its
  ``qrels.txt`` and ``run.txt``); skipped with a note when ``irmetrics eval`` has no
  ``--threads`` option or no data is given; output: stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

CASES = ("grid", "randomization", "bootstrap", "tukey", "power", "swap", "agreement",
         "rank_intervals", "eval")
GRID_MEASURES = ["ndcg_cut.10", "map", "recall.100"]
EVAL_MEASURES = ["map", "ndcg_cut.10", "P.10", "recall.1000", "recip_rank", "Rprec"]
RESAMPLES = 10_000
BLAS_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


# --------------------------------------------------------------------------- data


def make_data(folder: Path, topics: int, systems: int, grid_topics: int = 43) -> None:
    """The grid's files (bench_meta_evaluation's generator) and the systems' scores."""
    from bench_meta_evaluation import make_data as grid_data

    qrels, runs = grid_data(folder, 40, 30, grid_topics, 1000)
    (folder / "grid.json").write_text(json.dumps(
        {"qrels": {k: str(v) for k, v in qrels.items()},
         "runs": {k: str(v) for k, v in runs.items()}}))
    # Per-topic scores of systems of graded quality, 4 decimals (ties between systems).
    rng = np.random.default_rng(33)
    difficulty = rng.beta(2, 3, size=(topics, 1))
    quality = np.linspace(0.0, 0.15, systems)[None, :]
    scores = np.clip(difficulty + quality + rng.normal(scale=0.12, size=(topics, systems)),
                     0.0, 1.0)
    np.save(folder / "scores.npy", np.round(scores, 4))


# --------------------------------------------------------------------------- worker


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for array in arrays:
        h.update(np.ascontiguousarray(np.asarray(array)).tobytes())
    return h.hexdigest()


def _frame_digest(df) -> str:
    h = hashlib.sha256()
    for column in df.columns:
        series = df[column]
        h.update(series.to_numpy().tobytes() if series.dtype.is_numeric()
                 else "\x00".join(series.to_list()).encode())
    return h.hexdigest()


def worker(case: str, threads: int, data: Path, eval_data: Path | None, *,
           scores_=None, warm: bool = False) -> dict:
    """Run one case once in this process: ``{"seconds": ..., "digest": ...}``."""
    if case == "eval":
        argv = [sys.executable, "-m", "irmetrics", "eval", "--threads", str(threads),
                *[a for m in EVAL_MEASURES for a in ("-m", m)],
                str(eval_data / "qrels.txt"), str(eval_data / "run.txt")]
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, check=True, cwd=ROOT,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
        children = os.times()
        return {"seconds": time.perf_counter() - start,
                "cpu": children.children_user + children.children_system, "caller": None,
                "digest": hashlib.sha256(done.stdout).hexdigest()}
    import irmetrics as irm
    from irmetrics import stats

    if case == "grid":
        files = json.loads((data / "grid.json").read_text())
        first = {k: files["qrels"][k] for k in list(files["qrels"])[:1]}
        irm.evaluate_grid(first, dict(list(files["runs"].items())[:2]), GRID_MEASURES,
                          threads=threads)  # warm-up: imports, first calls
        start, cpu, caller = time.perf_counter(), time.process_time(), time.thread_time()
        grid = irm.evaluate_grid(files["qrels"], files["runs"], GRID_MEASURES, threads=threads)
        return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu,
                "caller": time.thread_time() - caller, "digest": _frame_digest(grid.per_query())}
    scores = np.load(data / "scores.npy")
    if not warm:  # the same case on a slice first: scipy's imports are not timed
        worker(case, threads, data, eval_data, scores_=scores[:12, :4], warm=True)
    scores = scores if scores_ is None else scores_
    pairs = stats.system_pairs(scores.shape[1])
    start, cpu, caller = time.perf_counter(), time.process_time(), time.thread_time()
    if case in ("randomization", "bootstrap"):
        res = stats.paired_test(scores[:, pairs[:, 0]], scores[:, pairs[:, 1]], test=case,
                                n_resamples=RESAMPLES, exact=False if case == "randomization"
                                else None, threads=threads)
        out = (res.p_value, res.ci_low, res.ci_high)
    elif case in ("tukey", "power"):
        res = stats.discriminative_power(scores, test="tukey" if case == "tukey"
                                         else "randomization", n_resamples=RESAMPLES,
                                         threads=threads)
        out = (res.p_values,)
    elif case == "swap":
        res = stats.swap_rate(scores, n_trials=RESAMPLES, threads=threads)
        out = (res.counts, res.swaps)
    elif case == "agreement":
        other = scores + 0.05 * np.sin(np.arange(scores.size)).reshape(scores.shape)
        res = stats.ranking_agreement(scores, other, k=min(10, scores.shape[1]),
                                      n_resamples=RESAMPLES, threads=threads)
        out = (res.estimate, res.ci_low, res.ci_high)
    elif case == "rank_intervals":
        from irmetrics.stats.rank_intervals import rank_intervals

        res = rank_intervals(scores, n_resamples=RESAMPLES, threads=threads)
        out = (res.low, res.high, res.critical_value)
    else:
        raise SystemExit(f"unknown case {case!r}")
    return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu,
            "caller": time.thread_time() - caller, "digest": _digest(*out)}


# --------------------------------------------------------------------------- driver


def machine() -> str:
    from irmetrics.parallel import available_cores

    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{model}; {available_cores()} cores available to this process"
            f" ({os.cpu_count()} on the machine); Python {platform.python_version()},"
            f" numpy {np.__version__}")


def load() -> str:
    try:
        return " ".join(str(round(x, 2)) for x in os.getloadavg())
    except OSError:
        return "n/a"


def load1() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def eval_has_threads() -> bool:
    done = subprocess.run([sys.executable, "-m", "irmetrics", "eval", "--help"],
                          capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return "--threads" in done.stdout + done.stderr


def measure(case: str, threads: int, data: Path, eval_data: Path | None,
            keep_blas: bool = False, root: Path = ROOT) -> dict:
    """One fresh worker process of the checkout at ``root`` (its own copy of this
    script, so that a ``--baseline`` checkout runs its own code)."""
    env = dict(os.environ, PYTHONPATH=str(root),
               **({} if keep_blas else {v: "1" for v in BLAS_VARIABLES}))
    argv = [sys.executable, str(root / "benchmarks" / "bench_threads.py"), "--worker", case,
            "--threads", str(threads), "--data", str(data)] + \
        (["--eval-data", str(eval_data)] if eval_data else [])
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"{case} on {threads} threads failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,2,4,8,16")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--topics", type=int, default=250)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--grid-topics", type=int, default=43,
                        help="topics of the grid's qrels sets and runs")
    parser.add_argument("--eval-data", type=Path, default=None)
    parser.add_argument("--keep-blas", action="store_true",
                        help="do not hold BLAS to one thread in the workers")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout (e.g. `git worktree add /tmp/base REV`) measured"
                             " in the same rotation; its rows are marked (baseline)")
    parser.add_argument("--data", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, int(args.threads), args.data, args.eval_data)))
        return

    if args.grid_topics < 1:
        raise SystemExit(f"--grid-topics must be 1 or more; got {args.grid_topics!r}.")
    from irmetrics.parallel import available_cores

    cores = available_cores()
    counts = [t for t in (int(x) for x in args.threads.split(",")) if t <= cores]
    if 1 not in counts:
        counts.insert(0, 1)
    cases = [c for c in args.cases.split(",") if c]
    roots = {"": ROOT}
    if args.baseline is not None:
        if not (args.baseline / "benchmarks" / "bench_threads.py").exists():
            raise SystemExit(f"--baseline {args.baseline}: no benchmarks/bench_threads.py there")
        roots[" (baseline)"] = args.baseline.resolve()
    notes = []
    if "eval" in cases:
        if args.eval_data is None or not (args.eval_data / "run.txt").exists():
            cases.remove("eval")
            notes.append("eval: skipped (no --eval-data folder with qrels.txt and run.txt;"
                         " benchmarks/generate.py --queries 7000 writes one)")
        elif not eval_has_threads():
            cases.remove("eval")
            notes.append("eval: skipped (`irmetrics eval` has no --threads option in this"
                         " checkout)")
    print(f"# machine: {machine()}")
    print(f"# load average at start: {load()}")
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder)
        start = time.perf_counter()
        make_data(data, args.topics, args.systems, args.grid_topics)
        print(f"# data written in {time.perf_counter() - start:.1f} s"
              f" ({args.topics} topics x {args.systems} systems for the statistics,"
              f" {args.grid_topics} topics in the grid)")
        rows = [case + tag for case in cases for tag in roots]
        times: dict = {(c, t): [] for c in rows for t in counts}
        cpus: dict = {(c, t): [] for c in rows for t in counts}
        callers: dict = {(c, t): [] for c in rows for t in counts}
        loads: dict = {(c, t): [] for c in rows for t in counts}
        digests: dict = {}
        for round_ in range(args.repeat):
            order = [(t, tag) for t in counts for tag in roots]
            for case in cases:
                for threads, tag in order if round_ % 2 == 0 else order[::-1]:
                    row = case + tag
                    loads[(row, threads)].append(load1())
                    res = measure(case, threads, data, args.eval_data, args.keep_blas,
                                  roots[tag])
                    times[(row, threads)].append(res["seconds"])
                    cpus[(row, threads)].append(res["cpu"])
                    if res.get("caller") is not None:
                        callers[(row, threads)].append(res["caller"])
                    digests.setdefault((row, threads), set()).add(res["digest"])
                    print(f"# round {round_ + 1} {row} threads={threads}:"
                          f" {res['seconds']:.3f} s (CPU {res['cpu']:.3f} s)", file=sys.stderr)
    print(f"# load average at end: {load()}")
    print()
    print("| case | threads | median wall s | speed-up | efficiency | same bytes as"
          " threads=1 | median CPU s | cores busy | serial share | idle bound | load |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for case in rows:
        base = statistics.median(times[(case, 1)])
        for threads in counts:
            median = statistics.median(times[(case, threads)])
            same = digests[(case, threads)] == digests[(case, 1)] and \
                len(digests[(case, 1)]) == 1
            cpu = statistics.median(cpus[(case, threads)])
            serial, bound = "n/a", "n/a"
            if callers[(case, threads)]:
                caller = statistics.median(callers[(case, threads)])
                # the caller works too: its CPU beyond an average helper's is serial
                alone = caller if threads == 1 else \
                    max(0.0, caller - (cpu - caller) / (threads - 1))
                serial = f"{alone / cpu:.0%}" if cpu > 0 else "n/a"
                floor = alone + (cpu - alone) / threads
                bound = f"{cpu / floor:.2f}x" if floor > 0 else "n/a"
            print(f"| {case} | {threads} | {median:.3f} | {base / median:.2f}x |"
                  f" {base / median / threads:.0%} | {'yes' if same else 'NO'} | {cpu:.3f} |"
                  f" {cpu / median:.2f} | {serial} | {bound} |"
                  f" {statistics.median(loads[(case, threads)]):.1f} |")
    if args.baseline is not None:
        same = all(digests[(case, t)] == digests[(case + " (baseline)", t)]
                   for case in cases for t in counts)
        print(f"\nbaseline {args.baseline}: every output the same bytes as this checkout's:"
              f" {'yes' if same else 'NO'}")
    for note in notes:
        print(f"\n{note}")


if __name__ == "__main__":
    main()
