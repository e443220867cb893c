#!/usr/bin/env python
"""irmetrics.fusion.fuse against ranx.fuse, warm, alternated in one process.

    python benchmarks/bench_fusion.py --queries 1000 --docs 1000 --runs 3 --repeats 5
    python benchmarks/bench_fusion.py --queries 10000 --separate     # the issue's size
    python benchmarks/bench_fusion.py --queries 10000 --no-ranx      # irmetrics alone

Data: seeded runs. Per query, each run ranks ``--docs`` documents drawn from the query's
own pool of twice as many (so runs share about half their documents; ``--shared-docs``:
one pool of ids for every query, as the first version of this script had) with uniform
random scores (no ties, almost surely), listed by score descending as systems write them.
Each run is generated, handed to each library and dropped before the next: no Python
dict of a run is ever made or kept. ranx's ``Run`` is built by the function ranx's own
``Run(dict)`` constructor calls on the dict's arrays
(``ranx.data_structures.common.create_and_sort``: the same numba dicts, sorted), so the
process holds only what each library keeps of its inputs: ranx's numba dicts (about
0.15 GB per run of a million entries) and irmetrics' ``Run`` tables (polars frames).

What each timed region holds (inputs built before the clock starts, outside it):

* ranx: ``ranx.fuse(runs, method=..., norm=...)`` on ranx ``Run`` objects; numba
  compiled by a warm-up call on a small input. Inside: ranx's normalisation of every
  run (numba, parallel), the fusion, and its result dict; the result is not sorted.
  For the methods that read ranks (rrf, isr, bordafuse, ...) ranx is given
  ``norm=None``: ranx would otherwise normalise scores that these methods never read
  (its default ``"min-max"`` costs it time, not us), and the values are the same.
* irmetrics: ``irmetrics.fusion.fuse(runs, method, norm=...)`` on irmetrics ``Run``
  tables built from polars frames. Inside: each run put in trec_eval's order (ranks,
  doc id tie rule), the union of (query, document) pairs, the normalisation, the
  fusion, and the fused run sorted (query, fused score descending, doc id) with ranks,
  as a validated ``Run``.

For each method each library first makes one untimed call on the full input (so every
timed call is a warm one: a second call in the same process), then the two calls
alternate ``--repeats`` times (default 5); each result is dropped before the next call
(ranx's result of 3 x 10,000 x 1,000 alone is about 7 GB), and the fused values are
checked to agree (relative 1e-9) on every (query, document) of a sample of queries.
Prints one JSON line per method with the median times, ``ratio`` = irmetrics' median /
ranx's median, the ratio of the fastest repeats, ``cpu_ratio`` (the same for the CPU
seconds of all the process's threads: both libraries use every core, and CPU time is
less disturbed by other processes on a shared machine), per library the median CPU
seconds, minor page faults and cyclic-GC passes of a timed call, the load average while
it ran, the memory of the process once the inputs are built (``inputs_rss_gb``) and its
peak so far (``peak_rss_gb``); nothing is asserted.

Memory (peak resident, 3 runs x 1,000 documents, linear in the queries): ranx's own
process (``--separate``) 1.52 GB at 1,000 queries and 3.82 GB at 3,000 (1.15 GB per
1,000: its runs' numba dicts, about 0.15 GB per run, and ``ranx.fuse``'s per-run
intermediate dicts and result, which its allocator keeps once freed); irmetrics' own
0.56 and 1.33 GB (0.39 GB per 1,000); both in one process 4.05 GB at 2,000 queries.
At 10,000 queries one process would need about 16 GB (ranx about 12 GB of it):
``--separate`` then times each library in its own fresh process (inputs built, one
untimed warm-up call on the full input, then ``--repeats`` timed calls), the processes
of the two libraries one after the other, ``--rounds`` times alternated (default 2), and
reports the same ratios from the medians of all of a library's timed calls; each
process' peak memory is its own (about 12 GB for ranx, 4 GB for irmetrics). The
values are compared by the same-process mode, at sizes both fit in.

Diagnosis knobs (same process only): ``--numba-threads`` (``numba.set_num_threads``),
``--gc-freeze`` (``gc.freeze()`` once the inputs are built), ``--malloc-trim`` (glibc
``malloc_trim(0)`` before each irmetrics call, outside the clock).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import polars as pl


def make_runs(n_queries: int, n_docs: int, n_runs: int, seed: int, shared: bool = False):
    """``[(doc_indices (Q, D), scores (Q, D))]`` per run, made one at a time (a
    generator). Each query's pool of ``2 D`` documents is its own (as in a large
    collection) unless ``shared``."""
    rng = np.random.default_rng(seed)
    for _ in range(n_runs):
        picks = np.argsort(rng.random((n_queries, 2 * n_docs)), axis=1)[:, :n_docs]
        if not shared:
            picks += 2 * n_docs * np.arange(n_queries)[:, None]
        # as systems write runs: each query's documents by score descending
        scores = -np.sort(-rng.random((n_queries, n_docs)), axis=1)
        yield picks, scores


def irmetrics_run(picks, scores, name):
    from irmetrics import Run

    n_queries, n_docs = picks.shape
    frame = pl.DataFrame({
        "query_id": pl.Series(np.repeat(np.arange(n_queries), n_docs)).cast(pl.String),
        "doc_id": "d" + pl.Series(picks.ravel()).cast(pl.String),
        "score": scores.ravel()})
    return Run.from_df(frame, name=name)


def ranx_run(picks, scores, name):
    """A ranx ``Run`` of the arrays, built as ``ranx.Run(dict)`` builds it from a dict's
    keys and values (ids as numpy unicode arrays, scores as float arrays), without the
    dict."""
    import ranx
    from numba.typed import List as TypedList
    from ranx.data_structures.common import create_and_sort

    docs = np.char.add("d", picks.astype(str))
    # as Run(dict) makes them: unicode of the longest id's width (not the int64 text
    # width of astype(str), which costs ranx time on every id), one array per query
    docs = docs.astype(f"<U{int(np.char.str_len(docs).max(initial=1))}")
    run = ranx.Run(name=name)
    run.run = create_and_sort(TypedList([str(q) for q in range(picks.shape[0])]),
                              TypedList([np.array(row) for row in docs]),
                              TypedList([np.array(row, dtype=float) for row in scores]))
    run.sorted = True
    return run


def both_runs(args, seed: int, libraries=("irmetrics", "ranx")):
    """Each library's runs, one run generated at a time and dropped once handed over."""
    out: dict[str, list] = {name: [] for name in libraries}
    for i, (picks, scores) in enumerate(make_runs(args.queries, args.docs, args.runs, seed,
                                                  args.shared_docs)):
        if "irmetrics" in out:
            out["irmetrics"].append(irmetrics_run(picks, scores, f"r{i}"))
        if "ranx" in out:
            out["ranx"].append(ranx_run(picks, scores, f"r{i}"))
        del picks, scores
        gc.collect()
    return out


def rss_gb() -> float:
    """The process's resident memory now (Linux), GB."""
    with open("/proc/self/status") as status:
        kb = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return round(kb / 2 ** 20, 2)


def peak_rss_gb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20, 2)


_GC_PASSES = [0]
gc.callbacks.append(lambda phase, info: _GC_PASSES.__setitem__(0, _GC_PASSES[0]
                                                                 + (phase == "start")))


def timed(call):
    """``(result, {wall, cpu, minflt, gc})`` of one call: wall and CPU seconds (every
    thread of the process), minor page faults, and cyclic-GC passes during it."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    passes = _GC_PASSES[0]
    start, start_cpu = time.perf_counter(), time.process_time()
    result = call()
    cost = {"wall": time.perf_counter() - start, "cpu": time.process_time() - start_cpu,
            "minflt": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before,
            "gc": _GC_PASSES[0] - passes}
    return result, cost


def ranx_norm(method: str, norm: str | None):
    """What ranx is given: the methods that read ranks are spared a normalisation."""
    from irmetrics.fusion import METHODS

    return norm if METHODS[method].reads_scores else None


def warm_up(method: str, norm: str, libraries) -> None:
    """Compile ranx's numba code (and import irmetrics' fusion) on a small input."""
    small = both_runs(argparse.Namespace(queries=5, docs=20, runs=3, shared_docs=False),
                      0, libraries)
    if "ranx" in small:
        import ranx

        ranx.fuse(small["ranx"], method=method, norm=ranx_norm(method, norm))
    if "irmetrics" in small:
        from irmetrics.fusion import fuse

        fuse(small["irmetrics"], method, norm=norm)


def call_of(library: str, runs, method: str, norm: str):
    if library == "ranx":
        import ranx

        return lambda: ranx.fuse(runs, method=method, norm=ranx_norm(method, norm))
    from irmetrics.fusion import fuse

    return lambda: fuse(runs, method, norm=norm)


def summary(method: str, args, costs: dict[str, list[dict]], **extra) -> dict:
    """One JSON line: medians, ratios and per-library costs of the timed calls."""
    def median(library, key):
        return statistics.median(c[key] for c in costs[library])

    walls = {k: [c["wall"] for c in v] for k, v in costs.items()}
    return {"method": method, "norm": args.norm, "queries": args.queries,
            "docs": args.docs, "runs": args.runs, "repeats": len(walls["ranx"]),
            "ranx_s": round(median("ranx", "wall"), 3),
            "irmetrics_s": round(median("irmetrics", "wall"), 3),
            "ratio": round(median("irmetrics", "wall") / median("ranx", "wall"), 4),
            # on a shared machine the fastest of the repeats is the least disturbed one
            "ratio_of_fastest": round(min(walls["irmetrics"]) / min(walls["ranx"]), 4),
            # CPU seconds of every thread: the work, less disturbed by other processes
            "cpu_ratio": round(median("irmetrics", "cpu") / median("ranx", "cpu"), 4),
            **{f"{k}_{key}": round(median(k, key), 3) if key == "cpu" else
               int(median(k, key)) for k in ("ranx", "irmetrics")
               for key in ("cpu", "minflt", "gc")},
            "ranx_norm": ranx_norm(method, args.norm), **extra,
            "load_average": round(os.getloadavg()[0], 1),
            "times": {k: [round(t, 3) for t in v] for k, v in walls.items()}}


def agree(ours, theirs, n_queries: int) -> bool:
    """irmetrics' fused scores equal ranx's (relative 1e-9) on a sample of queries."""
    sample = [str(q) for q in range(0, n_queries, max(1, n_queries // 50))]
    got = ours.df.filter(pl.col("query_id").is_in(pl.Series(sample).implode()))
    expected = {q: dict(theirs.run[q]) for q in sample}
    values = np.array([expected[q][d] for q, d in got.select("query_id", "doc_id").rows()])
    return bool(np.allclose(got["score"].to_numpy(), values, rtol=1e-9, atol=0))


def same_process(args) -> None:
    if args.numba_threads:
        import numba

        numba.set_num_threads(args.numba_threads)
    trim = ctypes.CDLL("libc.so.6").malloc_trim if args.malloc_trim else None
    runs = both_runs(args, args.seed)
    gc.collect()
    if args.gc_freeze:
        gc.freeze()
    inputs_rss = rss_gb()
    for method in args.methods.split(","):
        warm_up(method, args.norm, ("irmetrics", "ranx"))
        calls = {k: call_of(k, runs[k], method, args.norm) for k in ("ranx", "irmetrics")}
        costs: dict[str, list[dict]] = {"ranx": [], "irmetrics": []}
        # the second call in the process is the first timed one
        for library in ("ranx", "irmetrics"):
            calls[library]()
        results: dict = {}
        for _ in range(args.repeats):
            for library in ("ranx", "irmetrics"):
                results.pop(library, None)  # one result held at a time
                gc.collect()
                if trim is not None and library == "irmetrics":
                    trim(0)
                results[library], cost = timed(calls[library])
                costs[library].append(cost)
        print(json.dumps(summary(
            method, args, costs,
            values_agree=agree(results["irmetrics"], results["ranx"], args.queries),
            inputs_rss_gb=inputs_rss, peak_rss_gb=peak_rss_gb())), flush=True)
        del results
        gc.collect()


def worker(args) -> None:
    """One library in this fresh process: inputs, a warm-up call on them, then
    ``--repeats`` timed calls; one JSON line of their costs."""
    library = args.worker
    runs = both_runs(args, args.seed, (library,))[library]
    inputs_rss = rss_gb()
    warm_up(args.methods, args.norm, (library,))
    call = call_of(library, runs, args.methods, args.norm)
    call()  # the first call on the full input: every timed call is a warm one
    costs = []
    for _ in range(args.repeats):
        gc.collect()
        result, cost = timed(call)
        costs.append(cost)
        del result
    print(json.dumps({"library": library, "costs": costs, "inputs_rss_gb": inputs_rss,
                      "peak_rss_gb": peak_rss_gb()}), flush=True)


def separate(args) -> None:
    """Each library timed in fresh processes of its own, alternated ``--rounds`` times;
    the fused values are compared at small size by the same-process mode, not here."""
    for method in args.methods.split(","):
        costs: dict[str, list[dict]] = {"ranx": [], "irmetrics": []}
        peaks: dict[str, float] = {"ranx": 0.0, "irmetrics": 0.0}
        for _ in range(args.rounds):
            for library in ("ranx", "irmetrics"):
                command = [sys.executable, __file__, "--worker", library,
                           "--methods", method, "--norm", str(args.norm),
                           "--queries", str(args.queries), "--docs", str(args.docs),
                           "--runs", str(args.runs), "--repeats", str(args.repeats),
                           "--seed", str(args.seed)] + \
                    (["--shared-docs"] if args.shared_docs else [])
                done = subprocess.run(command, check=True, capture_output=True, text=True)
                line = json.loads(done.stdout.strip().splitlines()[-1])
                costs[library] += line["costs"]
                peaks[library] = max(peaks[library], line["peak_rss_gb"])
        print(json.dumps(summary(method, args, costs, mode="separate processes",
                                 ranx_peak_rss_gb=peaks["ranx"],
                                 irmetrics_peak_rss_gb=peaks["irmetrics"])), flush=True)


def alone(args) -> None:
    """irmetrics without ranx: median time of ``--repeats`` warm calls per method, the
    memory once the runs are built, and the peak (the fused run held as well)."""
    from irmetrics.fusion import fuse

    ours = both_runs(args, args.seed, ("irmetrics",))["irmetrics"]
    inputs_rss = rss_gb()
    for method in args.methods.split(","):
        fused = fuse(ours, method, norm=args.norm)  # the first call; the timed ones are warm
        height = fused.df.height
        del fused
        costs = []
        for _ in range(args.repeats):
            gc.collect()
            fused, cost = timed(lambda: fuse(ours, method, norm=args.norm))
            costs.append(cost)
            del fused
        times = [c["wall"] for c in costs]
        print(json.dumps({"method": method, "norm": args.norm, "queries": args.queries,
                          "docs": args.docs, "runs": args.runs, "repeats": args.repeats,
                          "irmetrics_s": round(statistics.median(times), 3),
                          "fastest_s": round(min(times), 3),
                          "irmetrics_cpu": round(statistics.median(c["cpu"] for c in costs), 3),
                          "fused_rows": height,
                          "load_average": round(os.getloadavg()[0], 1),
                          "inputs_rss_gb": inputs_rss, "peak_rss_gb": peak_rss_gb(),
                          "times": [round(t, 3) for t in times]}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--methods", default="rrf,sum,mnz,isr,bordafuse")
    parser.add_argument("--norm", default="min-max",
                        type=lambda v: None if v == "None" else v)
    parser.add_argument("--shared-docs", action="store_true",
                        help="one pool of doc ids for every query")
    parser.add_argument("--no-ranx", action="store_true",
                        help="time irmetrics alone (sizes ranx cannot hold)")
    parser.add_argument("--separate", action="store_true",
                        help="each library in fresh processes of its own, alternated")
    parser.add_argument("--rounds", type=int, default=2,
                        help="--separate: processes per library, alternated")
    parser.add_argument("--worker", choices=("ranx", "irmetrics"), help=argparse.SUPPRESS)
    parser.add_argument("--numba-threads", type=int, default=0,
                        help="numba.set_num_threads before timing (diagnosis)")
    parser.add_argument("--gc-freeze", action="store_true",
                        help="gc.freeze() once the inputs are built (diagnosis)")
    parser.add_argument("--malloc-trim", action="store_true",
                        help="glibc malloc_trim(0) before each irmetrics call (diagnosis)")
    args = parser.parse_args()
    if args.worker:
        worker(args)
    elif args.no_ranx:
        alone(args)
    elif args.separate:
        separate(args)
    else:
        same_process(args)


if __name__ == "__main__":
    main()
