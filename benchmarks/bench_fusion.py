#!/usr/bin/env python
"""irmetrics.fusion.fuse against ranx.fuse, warm, alternated in one process.

    python benchmarks/bench_fusion.py --queries 1000 --docs 1000 --runs 3 --repeats 5
    python benchmarks/bench_fusion.py --queries 10000 --no-ranx      # irmetrics alone

The issue's case is 3 runs x 10,000 queries x 1,000 documents; ranx needs about 23 GB
there, so the ratio is measured at sizes ranx fits in (1,000 and 2,000 queries: about 2.5
and 5 GB) and irmetrics alone at 10,000 (``--no-ranx``: its time and peak memory).

Data: seeded runs. Per query, each run ranks ``--docs`` documents drawn from the query's
own pool of twice as many (so runs share about half their documents; ``--shared-docs``:
one pool of ids for every query, as the first version of this script had) with uniform
random scores (no ties, almost surely), listed by score descending as systems write them.

What each timed region holds (inputs built before the clock starts, outside it):

* ranx: ``ranx.fuse(runs, method=..., norm=...)`` on ranx ``Run`` objects built from
  dicts; numba compiled by a warm-up call on a small input. Inside: ranx's
  normalisation of every run (numba, parallel), the fusion, and its result dict; the
  result is not sorted. For the methods that read ranks (rrf, isr, bordafuse, ...)
  ranx is given ``norm=None``: ranx would otherwise normalise scores that these
  methods never read (its default ``"min-max"`` costs it time, not us), and the values
  are the same.
* irmetrics: ``irmetrics.fusion.fuse(runs, method, norm=...)`` on irmetrics ``Run``
  tables built from polars frames. Inside: each run put in trec_eval's order (ranks,
  doc id tie rule), the union of (query, document) pairs, the normalisation, the
  fusion, and the fused run sorted (query, fused score descending, doc id) with ranks,
  as a validated ``Run``.

For each method each library first makes one untimed call on the full input (so every
timed call is a warm one: a second call in the same process), then the two calls
alternate ``--repeats`` times (default 5); the fused values are checked to agree
(relative 1e-9) on every (query, document) of a sample of queries. Prints one JSON line
per method with the median times, ``ratio`` = irmetrics' median / ranx's median, the
ratio of the fastest repeats, ``cpu_ratio`` (the same for the CPU seconds of all the
process's threads: both libraries use every core, and CPU time is less disturbed by
other processes on a shared machine), the load average while it ran, the memory of the process
once the inputs are built (``inputs_rss_gb``) and its peak so far (``peak_rss_gb``);
nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import time

import numpy as np
import polars as pl


def make_runs(n_queries: int, n_docs: int, n_runs: int, seed: int, shared: bool = False):
    """``[(doc_indices (Q, D), scores (Q, D))]`` per run. Each query's pool of ``2 D``
    documents is its own (as in a large collection) unless ``shared``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_runs):
        picks = np.argsort(rng.random((n_queries, 2 * n_docs)), axis=1)[:, :n_docs]
        if not shared:
            picks += 2 * n_docs * np.arange(n_queries)[:, None]
        # as systems write runs: each query's documents by score descending
        scores = -np.sort(-rng.random((n_queries, n_docs)), axis=1)
        out.append((picks, scores))
    return out


def irmetrics_run(picks, scores, name):
    from irmetrics import Run

    n_queries, n_docs = picks.shape
    frame = pl.DataFrame({
        "query_id": pl.Series(np.repeat(np.arange(n_queries), n_docs)).cast(pl.String),
        "doc_id": "d" + pl.Series(picks.ravel()).cast(pl.String),
        "score": scores.ravel()})
    return Run.from_df(frame, name=name)


def ranx_run(picks, scores, name):
    import ranx

    docs = np.char.add("d", picks.astype(str))
    return ranx.Run({str(q): dict(zip(docs[q].tolist(), scores[q].tolist()))
                     for q in range(picks.shape[0])}, name=name)


def rss_gb() -> float:
    """The process's resident memory now (Linux), GB."""
    with open("/proc/self/status") as status:
        kb = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return round(kb / 2 ** 20, 2)


def peak_rss_gb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--methods", default="rrf,sum,mnz,isr,bordafuse")
    parser.add_argument("--shared-docs", action="store_true",
                        help="one pool of doc ids for every query")
    parser.add_argument("--no-ranx", action="store_true",
                        help="time irmetrics alone (sizes ranx cannot hold)")
    args = parser.parse_args()

    from irmetrics.fusion import METHODS, fuse

    data = make_runs(args.queries, args.docs, args.runs, args.seed, args.shared_docs)
    ours = [irmetrics_run(p, s, f"r{i}") for i, (p, s) in enumerate(data)]
    if args.no_ranx:
        del data
        gc.collect()
        alone(ours, args)
        return
    import ranx

    theirs = [ranx_run(p, s, f"r{i}") for i, (p, s) in enumerate(data)]
    del data
    gc.collect()
    inputs_rss = rss_gb()
    small = make_runs(5, 20, args.runs, 0)
    for method in args.methods.split(","):
        norm = "min-max"
        # the methods that read ranks: ranx is spared a normalisation they never read
        ranx_norm = norm if METHODS[method].reads_scores else None
        ranx.fuse([ranx_run(p, s, f"w{i}") for i, (p, s) in enumerate(small)],
                  method=method, norm=ranx_norm)
        fuse([irmetrics_run(p, s, f"w{i}") for i, (p, s) in enumerate(small)], method,
             norm=norm)
        times: dict[str, list[float]] = {"ranx": [], "irmetrics": []}
        # the second call in the process is the first timed one
        fused_theirs = ranx.fuse(theirs, method=method, norm=ranx_norm)
        fused_ours = fuse(ours, method, norm=norm)
        del fused_ours, fused_theirs
        cpu: dict[str, list[float]] = {"ranx": [], "irmetrics": []}
        for _ in range(args.repeats):
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            fused_theirs = ranx.fuse(theirs, method=method, norm=ranx_norm)
            times["ranx"].append(time.perf_counter() - start)
            cpu["ranx"].append(time.process_time() - start_cpu)
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            fused_ours = fuse(ours, method, norm=norm)
            times["irmetrics"].append(time.perf_counter() - start)
            cpu["irmetrics"].append(time.process_time() - start_cpu)
        sample = [str(q) for q in range(0, args.queries, max(1, args.queries // 50))]
        got = fused_ours.df.filter(pl.col("query_id").is_in(pl.Series(sample).implode()))
        expected = {q: dict(fused_theirs.run[q]) for q in sample}
        values = np.array([expected[q][d] for q, d in got.select("query_id", "doc_id").rows()])
        agree = bool(np.allclose(got["score"].to_numpy(), values, rtol=1e-9, atol=0))
        medians = {k: statistics.median(v) for k, v in times.items()}
        # On a shared machine the fastest of the repeats is the least disturbed one.
        fastest = {k: min(v) for k, v in times.items()}
        print(json.dumps({"method": method, "norm": norm, "queries": args.queries,
                          "docs": args.docs, "runs": args.runs, "repeats": args.repeats,
                          "ranx_s": round(medians["ranx"], 3),
                          "irmetrics_s": round(medians["irmetrics"], 3),
                          "ratio": round(medians["irmetrics"] / medians["ranx"], 4),
                          "ratio_of_fastest": round(fastest["irmetrics"] / fastest["ranx"], 4),
                          # CPU seconds of every thread: the work, less disturbed by
                          # other processes than the wall clock on a shared machine
                          "cpu_ratio": round(statistics.median(cpu["irmetrics"])
                                             / statistics.median(cpu["ranx"]), 4),
                          "values_agree": agree, "ranx_norm": ranx_norm,
                          "load_average": round(os.getloadavg()[0], 1),
                          "inputs_rss_gb": inputs_rss, "peak_rss_gb": peak_rss_gb(),
                          "times": {k: [round(t, 3) for t in v] for k, v in times.items()}}),
              flush=True)
        del fused_ours, fused_theirs
        gc.collect()


def alone(ours, args) -> None:
    """irmetrics without ranx: median time of ``--repeats`` warm calls per method, the
    memory once the runs are built, and the peak (the fused run held as well)."""
    from irmetrics.fusion import fuse

    inputs_rss = rss_gb()
    for method in args.methods.split(","):
        fused = fuse(ours, method)  # the first call; the timed ones are warm
        height = fused.df.height
        del fused
        times = []
        for _ in range(args.repeats):
            gc.collect()
            start = time.perf_counter()
            fused = fuse(ours, method)
            times.append(time.perf_counter() - start)
            del fused
        print(json.dumps({"method": method, "norm": "min-max", "queries": args.queries,
                          "docs": args.docs, "runs": args.runs, "repeats": args.repeats,
                          "irmetrics_s": round(statistics.median(times), 3),
                          "fastest_s": round(min(times), 3), "fused_rows": height,
                          "load_average": round(os.getloadavg()[0], 1),
                          "inputs_rss_gb": inputs_rss, "peak_rss_gb": peak_rss_gb(),
                          "times": [round(t, 3) for t in times]}), flush=True)


if __name__ == "__main__":
    main()
