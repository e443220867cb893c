#!/usr/bin/env python
"""The drop-in roads against what users run today: pytrec_eval's dicts, DataFrames.

    python benchmarks/bench_dropins.py                       # 1,000, 5,000 and 7,000 queries
    python benchmarks/bench_dropins.py --queries 300 --repeat 3   # quick, on a busy machine
    python benchmarks/bench_dropins.py --json /tmp/dropins.json
    python benchmarks/bench_dropins.py --small                 # per-call overhead (below)

Data (made once under ``--data``, seeded): ``generate.py``'s MS MARCO-shaped run (1,000
documents per query, rounded scores with many ties, each ranking in rank order,
150-400 graded judgments per query) at each ``--queries`` size, and a model-shaped run
(float32 scores from a model, each ranking in a heap's order, 1-30 judgments per query,
as MTEB hands them over) of ``--model-queries`` queries. Six measures everywhere: map,
ndcg_cut.10, recip_rank, recall.1000, P.10, ndcg.

Jobs, each in a fresh process whose inputs are built (read from a pickle or a Parquet
file) before the clock starts; the jobs of a size alternate (A B C ... A B C ...):

* ``dropin irmetrics`` / ``dropin pytrec_eval``: ``RelevanceEvaluator(qrels,
  measures).evaluate(run)`` on dicts (irmetrics.compat.pytrec_eval, pytrec-eval-terrier);
  the two outputs must be equal, key order included (checked by a digest);
* ``evaluate file|polars|pandas|dicts``: ``irmetrics.evaluate(qrels, run, measures)``
  on TREC files, polars frames, pandas frames and dicts; aggregates must be equal;
* ``ir_measures pandas``: ``ir_measures.calc_aggregate`` (pytrec_eval provider) on the
  pandas frames; ``compat ir_measures``: ``irmetrics.compat.ir_measures.calc_aggregate``
  on PyTerrier-style frames (``qid``, ``docno``, ``score``/``label``).

``--small``: the per-call overhead of small inputs (issue 34 item 6), ``calc_aggregate``
of ir_measures and of the drop-in on dicts, as repro_eval calls it: 58 measures of the
pytrec_eval provider on 50 queries (target: the drop-in at least as fast as ir_measures)
and on 1,000 queries (target: at least 2x); and the same 58 measures through
pytrec_eval's ``RelevanceEvaluator`` and its drop-in. Each job in a fresh process,
alternated, inputs built (numpy imported) before the clock, every job reading bytecode
from one cache (``PYTHONPYCACHEPREFIX``, as installed packages have it). Timed apiece: the
library's import (with what it imports), parsing (``parse_measure`` of the 58 names, or
building the ``RelevanceEvaluator``), the first call, "cold" (the three together: what a
script that has numpy loaded pays), "script" (cold plus ``import numpy``, timed alone
before the inputs are built) and the median of the next five calls ("warm"); the outputs
of each pair must be equal, order included (digest).

Reported: median wall and CPU seconds of the timed call, the resident set once the
inputs are built, and the peak resident set (``ru_maxrss`` of the child: the parent
imports the standard library only, so it adds no floor). This is a benchmark, not a
test: nothing here asserts on times.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
MEASURES = ["map", "ndcg_cut.10", "recip_rank", "recall.1000", "P.10", "ndcg"]
IR_MEASURES = ["AP", "nDCG@10", "RR", "R@1000", "P@10", "nDCG"]
DEPTH = 1000
#: (job, baseline) pairs whose ratios are printed.
COMPARED = [("dropin irmetrics", "dropin pytrec_eval"), ("evaluate polars", "evaluate file"),
            ("evaluate pandas", "evaluate file"), ("evaluate dicts", "evaluate file"),
            ("evaluate pandas", "ir_measures pandas"),
            ("compat ir_measures", "ir_measures pandas")]
JOBS = ["dropin irmetrics", "dropin pytrec_eval", "evaluate file", "evaluate polars",
        "evaluate pandas", "evaluate dicts", "ir_measures pandas", "compat ir_measures"]


# =========================================================================== data
def _prepare(directory: Path, shape: str, queries: int, seed: int) -> None:
    """Write qrels/run as TREC text, pickled dicts and Parquet (in this child)."""
    import pickle

    import numpy as np
    import polars as pl

    directory.mkdir(parents=True, exist_ok=True)
    if shape == "msmarco":
        subprocess.run([sys.executable, str(BENCH_DIR / "generate.py"), "--seed", str(seed),
                        "--queries", str(queries), "--depth", str(DEPTH), "--out",
                        str(directory)], check=True, stdout=subprocess.DEVNULL)
        qrels = pl.read_csv(directory / "qrels.txt", separator=" ", has_header=False,
                            new_columns=["query_id", "it", "doc_id", "relevance"],
                            schema_overrides={"query_id": pl.String, "doc_id": pl.String})
        run = pl.read_csv(directory / "run.txt", separator=" ", has_header=False,
                          new_columns=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                          schema_overrides={"query_id": pl.String, "doc_id": pl.String})
    else:  # a model's float32 scores in heap order, few judgments
        rng = np.random.default_rng(seed)
        n = queries * DEPTH
        query = np.repeat(np.arange(queries), DEPTH)
        doc = rng.integers(0, 2_000_000, n)
        score = rng.normal(size=n).astype(np.float32).astype(np.float64)
        run = pl.DataFrame({"query_id": [f"q{q}" for q in query.tolist()],
                            "doc_id": [f"doc{d}" for d in doc.tolist()], "score": score})
        run = run.unique(["query_id", "doc_id"], keep="first", maintain_order=True)
        judged = rng.integers(1, 30, queries)
        jq = np.repeat(np.arange(queries), judged)
        retrieved = rng.random(jq.size) < 0.5
        picks = np.where(retrieved, jq * DEPTH + rng.integers(0, DEPTH, jq.size), -1)
        jdoc = np.where(picks >= 0, doc[np.maximum(picks, 0)], rng.integers(0, 2_000_000,
                                                                             jq.size))
        qrels = pl.DataFrame({"query_id": [f"q{q}" for q in jq.tolist()],
                              "doc_id": [f"doc{d}" for d in jdoc.tolist()],
                              "relevance": rng.integers(0, 3, jq.size)})
        qrels = qrels.unique(["query_id", "doc_id"], keep="first", maintain_order=True)
        with open(directory / "qrels.txt", "w") as f:
            qrels.select("query_id", pl.lit("0").alias("it"), "doc_id", "relevance").write_csv(
                f, include_header=False, separator=" ")
        with open(directory / "run.txt", "w") as f:
            run.select("query_id", pl.lit("Q0").alias("q0"), "doc_id", pl.lit(0).alias("rank"),
                       "score", pl.lit("model").alias("tag")).write_csv(
                f, include_header=False, separator=" ")
    qrels = qrels.select("query_id", "doc_id", pl.col("relevance").cast(pl.Int64))
    run = run.select("query_id", "doc_id", pl.col("score").cast(pl.Float64))
    qrels.write_parquet(directory / "qrels.parquet")
    run.write_parquet(directory / "run.parquet")
    nested = {}
    for name, frame, value in (("qrels", qrels, "relevance"), ("run", run, "score")):
        out: dict = {}
        for q, d, v in frame.iter_rows():
            inner = out.get(q)
            if inner is None:
                inner = out[q] = {}
            inner[d] = v
        nested[name] = out
        with open(directory / f"{name}.pkl", "wb") as f:
            pickle.dump(out, f, protocol=pickle.HIGHEST_PROTOCOL)
    (directory / "ready").write_text(json.dumps({"run_rows": run.height,
                                                 "qrels_rows": qrels.height}))


# =========================================================================== children
def _child(job: str, directory: str) -> dict:
    import gc
    import hashlib
    import pickle
    import resource
    import time
    import warnings

    d = Path(directory)
    tool, road = job.split(" ", 1)
    if road in ("irmetrics", "pytrec_eval", "dicts"):
        with open(d / "qrels.pkl", "rb") as f:
            qrels = pickle.load(f)
        with open(d / "run.pkl", "rb") as f:
            run = pickle.load(f)
    elif road == "file":
        qrels, run = str(d / "qrels.txt"), str(d / "run.txt")
    else:
        import polars as pl

        qrels, run = pl.read_parquet(d / "qrels.parquet"), pl.read_parquet(d / "run.parquet")
        if road != "polars":
            qrels, run = qrels.to_pandas(), run.to_pandas()
        if tool == "compat":
            qrels = qrels.rename(columns={"query_id": "qid", "doc_id": "docno",
                                          "relevance": "label"})
            run = run.rename(columns={"query_id": "qid", "doc_id": "docno"})
    if tool == "dropin":
        if road == "irmetrics":
            from irmetrics.compat.pytrec_eval import RelevanceEvaluator
        else:
            from pytrec_eval import RelevanceEvaluator
    elif tool == "evaluate":
        import irmetrics
    elif tool == "ir_measures":
        import ir_measures

        measures = [ir_measures.parse_measure(m) for m in IR_MEASURES]
    else:
        from irmetrics.compat import ir_measures as compat

        measures = [compat.parse_measure(m) for m in IR_MEASURES]
    gc.collect()
    rss_inputs = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    warnings.simplefilter("ignore")
    wall, cpu = time.perf_counter(), time.process_time()
    if tool == "dropin":
        out = RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)
    elif tool == "evaluate":
        out = irmetrics.evaluate(qrels, run, MEASURES).aggregate()
    elif tool == "ir_measures":
        out = ir_measures.calc_aggregate(measures, qrels, run)
    else:
        out = compat.calc_aggregate(measures, qrels, run)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if tool == "dropin":  # every query, measure and value, in the dict's order
        digest = hashlib.sha256(repr(out).encode()).hexdigest()[:16]
        values = {name: statistics.fmean(q[name] for q in out.values())
                  for name in next(iter(out.values()))}
    else:
        values = {str(k): float(v) for k, v in out.items()}
        digest = hashlib.sha256(repr(sorted(values.items())).encode()).hexdigest()[:16]
    return {"job": job, "wall_s": wall, "cpu_s": cpu, "rss_inputs_mib": rss_inputs,
            "peak_rss_mib": peak, "digest": digest, "values": values}


# =========================================================================== small inputs
#: 58 measures of ir_measures' pytrec_eval provider, as repro_eval asks for them.
SMALL_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SMALL_MEASURES = (
    [f"P@{k}" for k in SMALL_CUTOFFS] + [f"R@{k}" for k in SMALL_CUTOFFS]
    + [f"nDCG@{k}" for k in SMALL_CUTOFFS] + [f"AP@{k}" for k in SMALL_CUTOFFS]
    + [f"IPrec@{r / 10:.1f}" for r in range(11)]
    + ["AP", "nDCG", "RR", "Rprec", "Bpref", "SetP", "SetR", "SetF", "NumRel", "NumRet",
       "NumRet(rel=1)"])
#: The same 58 measures in pytrec_eval's names, for ``RelevanceEvaluator``.
SMALL_PYTREC_MEASURES = (
    {f"{m}.{','.join(map(str, SMALL_CUTOFFS))}" for m in ("P", "recall", "ndcg_cut", "map_cut")}
    | {"iprec_at_recall", "map", "ndcg", "recip_rank", "Rprec", "bpref", "set_P",
       "set_recall", "set_F", "num_rel", "num_ret", "num_rel_ret"})
#: job -> (module, the library it replaces' job); jobs are alternated in this order.
SMALL_JOBS = {"small ir_measures": ("ir_measures", None),
              "small compat": ("irmetrics.compat.ir_measures", "small ir_measures"),
              "small pytrec_eval": ("pytrec_eval", None),
              "small dropin": ("irmetrics.compat.pytrec_eval", "small pytrec_eval")}


def _small_data(queries: int, seed: int):
    """Dicts as repro_eval reads them: 400 candidates per query, 100 judged (0-2), 350
    retrieved with 3-decimal scores (ties)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(queries):
        docs = [f"d{j}" for j in rng.choice(3000, 400, replace=False)]
        qrels[str(q)] = {d: int(rng.integers(0, 3)) for d in docs[:100]}
        run[str(q)] = {d: float(np.round(rng.random(), 3)) for d in docs[50:]}
    return qrels, run


def _small_child(job: str, queries: int, seed: int) -> dict:
    import hashlib
    import time

    import importlib

    start = time.perf_counter()
    import numpy  # noqa: F401  (timed alone: what every library here needs first)

    numpy_s = time.perf_counter() - start
    qrels, run = _small_data(queries, seed)  # numpy only: no library imported yet
    # cold: the library's import (with its own imports: pytrec_eval, polars ...),
    # parsing the 58 measure names (ir_measures) or building the evaluator (pytrec_eval)
    # and the first call, as a script runs them; first: the first call alone; warm: the
    # median of the next five.
    start = time.perf_counter()
    lib = importlib.import_module(SMALL_JOBS[job][0])
    imported = time.perf_counter()
    if hasattr(lib, "calc_aggregate"):
        measures = [lib.parse_measure(m) for m in SMALL_MEASURES]
        parsed = time.perf_counter()

        def call():
            return lib.calc_aggregate(measures, qrels, run)
    else:
        evaluator = lib.RelevanceEvaluator(qrels, SMALL_PYTREC_MEASURES)
        parsed = time.perf_counter()

        def call():
            return evaluator.evaluate(run)
    out = call()
    done = time.perf_counter()
    times = []
    for _ in range(5):
        wall = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - wall)
    values = [(str(k), v if isinstance(v, dict) else float(v)) for k, v in out.items()]
    return {"job": job, "numpy_s": numpy_s, "import_s": imported - start,
            "parse_s": parsed - imported, "first_s": done - parsed, "cold_s": done - start,
            "script_s": numpy_s + done - start,
            "warm_s": statistics.median(times),
            "digest": hashlib.sha256(repr(sorted(values)).encode()).hexdigest()[:16],
            "order": hashlib.sha256(repr(values).encode()).hexdigest()[:16]}


def small(args, env) -> None:
    """The small-input cases: fresh processes, jobs alternated, PYTHONHASHSEED fixed
    (ir_measures' dict order is a set's). Every job reads bytecode from one cache
    (PYTHONPYCACHEPREFIX, written by an untimed first run of each job), as installed
    packages have it, even where PYTHONDONTWRITEBYTECODE is set: otherwise the drop-ins,
    run from a source tree, would compile their sources in every process while the
    libraries they replace read their installed .pyc files."""
    with tempfile.TemporaryDirectory(prefix="bench-dropins-pycache-") as pycache:
        env = dict(env, PYTHONHASHSEED="0", PYTHONPYCACHEPREFIX=pycache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for job in SMALL_JOBS:  # untimed: bytecode for every job, page cache
            _run(["--small-child", job, "50", str(args.seed)], env)
        _small_table(args, env)


def _small_table(args, env) -> None:
    keys = ("import_s", "parse_s", "first_s", "cold_s", "script_s", "warm_s")
    print(f"# small inputs: {len(SMALL_MEASURES)} measures on dicts (ir_measures'"
          f" calc_aggregate, pytrec_eval's RelevanceEvaluator); medians of {args.repeat} fresh"
          " processes, jobs alternated, bytecode cached for all; load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("# cold = import of the library + parse (parse_measure of every name, or"
          " RelevanceEvaluator(qrels, measures)) + first call (inputs built, numpy imported,"
          " before the clock); script = cold + import numpy (what a script that has not"
          " imported numpy pays); first = the first call alone; warm = median of the next"
          " five")
    for queries, target in ((50, 1.0), (1000, 2.0)):
        runs: dict[str, list[dict]] = {job: [] for job in SMALL_JOBS}
        for _ in range(args.repeat):
            for job in SMALL_JOBS:
                runs[job].append(_run(["--small-child", job, str(queries), str(args.seed)],
                                      env))
        med = {job: {k: statistics.median(r[k] for r in rs) for k in keys}
               for job, rs in runs.items()}
        print(f"\n## {queries} queries x {len(SMALL_MEASURES)} measures (target: drop-in"
              f" >= {target:g}x the library it replaces, cold and warm)")
        print(f"{'':<20}" + "".join(f"{k[:-2]:>9}" for k in keys) + "   (seconds)")
        for job in SMALL_JOBS:
            print(f"{job:<20}" + "".join(f"{med[job][k]:9.3f}" for k in keys))
        numpy_s = statistics.median(r["numpy_s"] for rs in runs.values() for r in rs)
        print(f"# import numpy alone (before the clock, every job): {numpy_s:.3f} s")
        for ours, (_, reference) in SMALL_JOBS.items():
            if reference is None:
                continue
            ref = med[reference]
            ratios = {k: ref[k] / med[ours][k]
                      for k in ("cold_s", "script_s", "first_s", "warm_s")}
            per_run = sorted(a["cold_s"] / b["cold_s"] for a, b in
                             zip(runs[reference], runs[ours]))
            same = len({(r["digest"], r["order"]) for job in (ours, reference)
                        for r in runs[job]}) == 1
            print(f"# {ours} vs {reference} (speed-up = its time / ours): cold"
                  f" x{ratios['cold_s']:.2f} (script x{ratios['script_s']:.2f}), first call"
                  f" x{ratios['first_s']:.2f}, warm"
                  f" x{ratios['warm_s']:.2f}; cold per pair"
                  f" {' '.join(f'{r:.2f}' for r in per_run)}; outputs "
                  f"{'identical, order included' if same else 'DIFFERENT'}")
        print(f"# load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


# =========================================================================== parent
def _run(args_list, env) -> dict:
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args_list],
                         check=True, capture_output=True, text=True, env=env,
                         cwd=str(REPO_ROOT))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", default="1000,5000,7000",
                        help="sizes of the MS MARCO-shaped runs (comma-separated)")
    parser.add_argument("--model-queries", type=int, default=1000,
                        help="size of the model-shaped run (0: none)")
    parser.add_argument("--jobs", default=",".join(JOBS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--data", default=str(BENCH_DIR / "data"))
    parser.add_argument("--json")
    parser.add_argument("--small", action="store_true",
                        help="only the small-input cases (per-call overhead)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--small-child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--prepare", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
        return
    if args.small_child:
        job, queries, seed = args.small_child
        print(json.dumps(_small_child(job, int(queries), int(seed))))
        return
    if args.prepare:
        directory, shape, queries, seed = args.prepare
        _prepare(Path(directory), shape, int(queries), int(seed))
        print("{}")
        return

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    if args.small:
        small(args, env)
        return
    jobs = args.jobs.split(",")
    cases = [("msmarco", int(q)) for q in args.queries.split(",") if q]
    if args.model_queries:
        cases.append(("model", args.model_queries))
    report = {"python": platform.python_version(), "cpus": os.cpu_count(),
              "load_start": os.getloadavg(), "cases": []}
    print(f"# Python {report['python']}, {report['cpus']} CPUs, load average at start "
          f"{' '.join(f'{x:.2f}' for x in report['load_start'])}; medians of "
          f"{args.repeat} fresh processes, jobs alternated")
    for shape, queries in cases:
        directory = Path(args.data) / f"dropins-{shape}-{queries}-{args.seed}"
        if not (directory / "ready").exists():
            _run(["--prepare", str(directory), shape, str(queries), str(args.seed)], env)
        meta = json.loads((directory / "ready").read_text())
        runs: dict[str, list[dict]] = {job: [] for job in jobs}
        for _ in range(args.repeat):
            for job in jobs:
                runs[job].append(_run(["--child", job, str(directory)], env))
        rows = []
        for job in jobs:
            r = runs[job]
            rows.append({"job": job, "wall_s": statistics.median(x["wall_s"] for x in r),
                         "wall_min_s": min(x["wall_s"] for x in r),
                         "wall_max_s": max(x["wall_s"] for x in r),
                         "cpu_s": statistics.median(x["cpu_s"] for x in r),
                         "rss_inputs_mib": max(x["rss_inputs_mib"] for x in r),
                         "peak_rss_mib": max(x["peak_rss_mib"] for x in r),
                         "digests": sorted({x["digest"] for x in r}),
                         "values": r[0]["values"]})
        by_job = {row["job"]: row for row in rows}
        print(f"\n## {shape}: {queries} queries, {meta['run_rows']:,} run rows, "
              f"{meta['qrels_rows']:,} judgments (load average now "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})")
        print(f"{'job':<20} {'wall s':>7} {'(min-max)':>12} {'cpu s':>7} "
              f"{'inputs MiB':>10} {'peak MiB':>9}")
        for row in rows:
            print(f"{row['job']:<20} {row['wall_s']:7.2f} "
                  f"{row['wall_min_s']:5.2f}-{row['wall_max_s']:<6.2f} {row['cpu_s']:7.2f} "
                  f"{row['rss_inputs_mib']:10.0f} {row['peak_rss_mib']:9.0f}")
        print("# ratios: the baseline's median over the job's (above 1: the job is faster)")
        for job, baseline in COMPARED:
            if job in by_job and baseline in by_job:
                a, b = by_job[job], by_job[baseline]
                print(f"#   {job:<20} vs {baseline:<20} wall x{b['wall_s'] / a['wall_s']:.2f}"
                      f"  cpu x{b['cpu_s'] / a['cpu_s']:.2f}  peak RSS "
                      f"{a['peak_rss_mib']:.0f} vs {b['peak_rss_mib']:.0f} MiB")
        for a, b in (("dropin irmetrics", "dropin pytrec_eval"),):
            if a in by_job and b in by_job:
                same = by_job[a]["digests"] == by_job[b]["digests"]
                print(f"# {a} and {b}: {'identical' if same else 'DIFFERENT'} output "
                      "(every query, measure and value, in order)")
        evaluated = [by_job[j] for j in jobs if j.startswith("evaluate")]
        if evaluated:
            same = len({tuple(r["digests"]) for r in evaluated}) == 1
            print(f"# irmetrics.evaluate: {'identical' if same else 'DIFFERENT'} aggregates "
                  f"on {', '.join(r['job'].split(' ')[1] for r in evaluated)}")
        report["cases"].append({"shape": shape, "queries": queries, **meta, "rows": rows})
    report["load_end"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
