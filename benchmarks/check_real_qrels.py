#!/usr/bin/env python
"""Spark and single-machine irmetrics on real qrels (TREC DL19, MS MARCO dev), bit for bit.

    python benchmarks/check_real_qrels.py QRELS [--out DIR] [--seed 13] [--depth 1000]
        [--trec-eval PATH] [--no-spark] [--no-pytrec-eval]

No official run files are reachable offline, so the run is GENERATED around the real
qrels (seeded, deterministic), then three checks run on it:

1. ``irmetrics.spark.evaluate`` (Spark ``local[2]``, reading Parquet whose rows are
   shuffled) against ``irmetrics.evaluate`` (reading the TREC text files): query ids,
   every per-query value and every aggregate compared bit for bit, for all numeric
   ``all_trec`` outputs plus friendly names (``RR@10``, ``nDCG@10``, judged-only and
   ``rel=2`` variants, ...), under trec_eval's default options, ``-c``, ``-M 100``,
   ``-J``, ``-l 2``, all four at once, and ``semantics="pytrec_eval"``.
2. With ``--trec-eval PATH`` (a trec_eval 10 binary you built yourself), the output of
   ``irmetrics eval -q -m all_trec`` (on the text files, then on the Parquet copies)
   against ``trec_eval -q -m all_trec``, byte for byte with exit codes, under the
   first six option sets, and both stopping alike on a qrels query without a ranking
   (``--strict``).
3. ``irmetrics.crosscheck`` (``semantics="pytrec_eval"`` against pytrec_eval itself,
   every measure pytrec_eval has, per query, tolerance 1e-9), when pytrec_eval is
   installed.

The generated run, per query: up to ``--depth`` documents (3% of the queries fewer, down
to 1), a random share of that query's judged documents at every grade (relevant ones
more often, like pooling; 1% of the queries none at all) and, for the rest, unjudged ids
in the style of the qrels' ids (``D123`` for MS MARCO documents, plain numbers for
passages) drawn from ``0 .. --collection-size - 1``. Scores correlate with the labels,
are fixed-point with 2 to 4 decimals per query on a coarse grid (heavy ties, across
labels too), 5% of the queries have a flat tail and 8% are shifted below zero. 2% of
the qrels queries are left out of the run and a few run queries have no judgments. The
text file is sorted by score then doc id ASCENDING (so trec_eval's tie order, doc id
descending, is not the file order); the Parquet copy holds the same rows shuffled.

Prints one JSON document; exits non-zero when anything differs. Needs
``irmetrics-exact[spark]`` and Java for check 1. Never commit the qrels or the generated data:
the paths are arguments, the output goes to ``benchmarks/data/`` (git-ignored) by default.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl

from bench_spark import start_session, timed

BENCH_DIR = Path(__file__).resolve().parent
RUN_NAME = "realqrels"
#: MS MARCO passage collection size: passage ids 0 .. 8,841,822.
MSMARCO_PASSAGES = 8_841_823
#: Friendly (ir_measures-style) names checked besides all_trec's outputs.
FRIENDLY = ["AP", "P@10", "R@1000", "RR@10", "nDCG@10", "nDCG@20", "AP@100", "Judged@10",
            "ERR@20", "nERR@10", "nDCG(dcg='exp-log2')@10", "nDCG(judged_only=True)@10",
            "AP(judged_only=True)", "P(judged_only=True)@10", "AP(rel=2)", "P(rel=2)@10",
            "RR(rel=2)@10"]
#: Means reported to show what the generated run looks like (BM25 on DL19: map ~0.30).
HEADLINE = ["map", "recip_rank", "P.10", "recall.1000", "ndcg_cut.10"]
#: (label, keyword options of evaluate(), trec_eval flags); None flags: no CLI check.
OPTION_SETS = [
    ("default", {}, []),
    ("-c", {"complete": True}, ["-c"]),
    ("-M 100", {"max_docs": 100}, ["-M", "100"]),
    ("-J", {"judged_only": True}, ["-J"]),
    ("-l 2", {"relevance_level": 2}, ["-l", "2"]),
    ("-c -J -M 100 -l 2", {"complete": True, "judged_only": True, "max_docs": 100,
                           "relevance_level": 2}, ["-c", "-J", "-M", "100", "-l", "2"]),
    ("semantics=pytrec_eval", {"semantics": "pytrec_eval"}, None),
]


def all_trec_numeric(*, pytrec_eval_only: bool = False) -> list[str]:
    """trec_eval names of the all_trec group whose values are numbers (not relstring),
    optionally only those pytrec_eval has (``semantics="pytrec_eval"``)."""
    from irmetrics.measures.parse import parse_measures
    from irmetrics.measures.registry import STRING

    return [r.measure.name for r in parse_measures("all_trec")
            if r.measure.printed != STRING and (r.measure.pytrec_eval or not pytrec_eval_only)]


# --------------------------------------------------------------------------- generation
def _id_style(doc_ids: pl.Series) -> str:
    """The prefix of the qrels' doc ids (``D`` in ``D1035833``), "" for plain numbers."""
    prefixes = doc_ids.str.extract(r"^([^0-9]*)[0-9]+$").unique()
    if prefixes.null_count() or prefixes.len() != 1:
        return ""
    return prefixes[0]


def generate_run(qrels: pl.DataFrame, *, seed: int, depth: int,
                 collection_size: int) -> pl.DataFrame:
    """A run (query_id, doc_id, score) around ``qrels``; see the module doc."""
    rng = np.random.default_rng(seed)
    qids = qrels["query_id"].unique().sort().to_numpy()
    absent = rng.choice(qids, size=max(1, round(0.02 * qids.size)), replace=False)
    n_extra = max(2, round(0.002 * qids.size))
    if qrels["query_id"].str.contains(r"^[0-9]+$").all():
        numbers = qids.astype(np.int64)
        extra = (numbers.max() + 1 + rng.choice(10 * n_extra, n_extra, replace=False)).astype(str)
    else:
        extra = np.array([f"unjudged{i}" for i in range(n_extra)])
    run_qids = np.concatenate([np.setdiff1d(qids, absent), extra]).astype(object)
    nq = run_qids.size
    docs_per_query = np.full(nq, depth, dtype=np.int64)
    short = rng.random(nq) < 0.03
    docs_per_query[short] = np.exp(rng.uniform(0, np.log(depth), short.sum())).astype(np.int64)
    keep_share = rng.uniform(0.3, 1.0, nq)
    keep_share[rng.random(nq) < 0.01] = 0.0
    plan = pl.DataFrame({"query_id": run_qids.astype(str), "q": np.arange(nq),
                         "n_docs": docs_per_query, "keep_share": keep_share})

    # Judged documents: relevant ones kept with the query's share, non-relevant ones
    # less often (pooling), at most n_docs of them.
    judged = qrels.join(plan, on="query_id", how="inner")
    share = judged["keep_share"].to_numpy() * np.where(judged["relevance"] > 0, 1.0, 0.7)
    judged = (judged.with_columns(key=pl.Series(rng.random(judged.height)))
              .filter(pl.Series(rng.random(judged.height) < share))
              .filter(pl.col("key").rank("ordinal").over("query_id") <= pl.col("n_docs"))
              .select("q", "doc_id", "relevance"))
    n_judged = np.bincount(judged["q"].to_numpy(), minlength=nq)

    # Unjudged documents, drawn with a margin, minus the query's judged ids and repeats.
    n_fill = docs_per_query - n_judged
    plan = plan.with_columns(n_fill=pl.Series(n_fill))
    margin = n_fill + 16 + n_fill // 50
    q_of = np.repeat(np.arange(nq), margin)
    prefix = _id_style(qrels["doc_id"])
    fill = (pl.DataFrame({"q": q_of, "n": rng.integers(0, collection_size, q_of.size)})
            .with_columns(doc_id=pl.lit(prefix) + pl.col("n").cast(pl.String))
            .join(plan.select("query_id", "q", "n_fill"), on="q")
            .join(qrels.select("query_id", "doc_id"), on=["query_id", "doc_id"], how="anti",
                  maintain_order="left")
            .unique(["q", "doc_id"], keep="first", maintain_order=True)
            .filter(pl.int_range(pl.len()).over("q") < pl.col("n_fill"))
            .select("q", "doc_id", relevance=pl.lit(None, pl.Int64)))
    if fill.height != n_fill.sum():  # 16+ spare draws per query: never in practice
        raise RuntimeError(f"drew {fill.height} unjudged docs, needed {n_fill.sum()};"
                           " try another --seed")

    # Scores: label signal plus noise, on a per-query fixed-point grid (ties).
    rows = pl.concat([judged, fill])
    q = rows["q"].to_numpy()
    label = rows["relevance"].to_numpy()
    judged_mask = ~np.isnan(label.astype(np.float64))
    label = np.where(judged_mask, label, 0).astype(np.float64)
    signal = np.where(judged_mask, 0.8 + label * rng.uniform(0.5, 2.0, q.size), 0.0)
    raw = 10.0 + signal + rng.normal(0.0, 1.5, q.size) * rng.uniform(0.5, 2.0, nq)[q]
    decimals = rng.choice([2, 3, 4], size=nq, p=[0.3, 0.4, 0.3])
    grid = rng.choice([1, 5, 25, 100], size=nq, p=[0.4, 0.3, 0.2, 0.1])
    units = 10 ** decimals[q]
    ticks = np.rint(raw * units / grid[q]).astype(np.int64) * grid[q]
    ticks -= np.where(rng.random(nq) < 0.08, 30 * 10 ** decimals, 0)[q]
    scored = pl.DataFrame({"q": q, "doc_id": rows["doc_id"], "ticks": ticks, "unit": units,
                           "flat": (rng.random(nq) < 0.05)[q]})
    floor = pl.col("ticks").quantile(0.4, "nearest").over("q")
    scored = scored.with_columns(
        ticks=pl.when(pl.col("flat")).then(pl.max_horizontal("ticks", floor))
        .otherwise("ticks"))
    return (scored.with_columns(score=pl.col("ticks") / pl.col("unit"))
            .join(plan.select("q", "query_id"), on="q")
            .select("query_id", "doc_id", "score"))


def write_inputs(qrels_path: Path, run: pl.DataFrame, out: Path, seed: int) -> dict:
    """The run as TREC text (score desc, doc id ASC) and Parquet (shuffled; its
    ``run_id`` column names the run for the CLI), the qrels as Parquet; the Parquet
    copies hold exactly the values read back from the text."""
    import irmetrics as irm

    paths = {"qrels": qrels_path, "run": out / "run.txt",
             "qrels_parquet": out / "qrels.parquet", "run_parquet": out / "run.parquet"}
    lines = (run.sort(["query_id", "score", "doc_id"], descending=[False, True, False])
             .select("query_id", Q0=pl.lit("Q0"), doc_id="doc_id",
                     rank=pl.int_range(1, pl.len() + 1).over("query_id"),
                     score=pl.col("score").cast(pl.String), tag=pl.lit(RUN_NAME)))
    lines.write_csv(paths["run"], separator=" ", include_header=False, quote_style="never")
    (irm.Run.read(paths["run"]).df.select("query_id", "doc_id", "score",
                                          run_id=pl.lit(RUN_NAME))
     .sample(fraction=1.0, shuffle=True, seed=seed).write_parquet(paths["run_parquet"]))
    irm.Qrels.read(qrels_path).df.select("query_id", "doc_id", "relevance") \
        .write_parquet(paths["qrels_parquet"])
    return paths


# --------------------------------------------------------------------------- comparison
def _bits(values: np.ndarray) -> np.ndarray:
    """float64 bit patterns, every NaN mapped to one pattern."""
    values = np.where(np.isnan(values), np.nan, values)
    return values.astype(np.float64).view(np.int64)


def compare(got, want) -> dict:
    """Query ids, every per-query value (bit patterns) and every aggregate of two
    irmetrics.Results; counts and the first mismatches."""
    report = {"queries": len(want.query_ids), "outputs": len(want.names),
              "same_query_ids": got.query_ids.tolist() == want.query_ids.tolist(),
              "same_skipped_ids": (got.missing_query_ids.tolist()
                                   == want.missing_query_ids.tolist()
                                   and got.ignored_query_ids.tolist()
                                   == want.ignored_query_ids.tolist()),
              "values_compared": 0, "mismatches": 0, "max_abs_diff": 0.0, "examples": []}
    if not report["same_query_ids"] or got.names != want.names:
        report["mismatches"] = -1  # no value-by-value comparison possible
        return report
    report["mismatches"] += not report["same_skipped_ids"]
    for name in want.names:
        a, b = got.values(name), want.values(name)
        differ = _bits(a) != _bits(b)
        report["values_compared"] += a.size
        report["mismatches"] += int(differ.sum())
        if differ.any():
            report["max_abs_diff"] = max(report["max_abs_diff"],
                                         float(np.nanmax(np.abs(a - b)[differ], initial=0)))
            i = int(np.flatnonzero(differ)[0])
            report["examples"].append([want.query_ids[i], name, float(a[i]), float(b[i])])
    got_agg, want_agg = got.aggregate(), want.aggregate()
    bad = [k for k in want_agg if (got_agg.get(k) != want_agg[k]
                                   if isinstance(want_agg[k], str) else
                                   _bits(np.array([got_agg.get(k, np.nan)], float))[0]
                                   != _bits(np.array([want_agg[k]], float))[0])]
    report["aggregates_compared"], report["aggregate_mismatches"] = len(want_agg), bad
    report["mismatches"] += len(bad)
    del report["examples"][5:]
    return report


def check_spark(paths: dict, args) -> list[dict]:
    """irmetrics.spark.evaluate on the Parquet copies vs irmetrics.evaluate on the text."""
    import irmetrics as irm
    import irmetrics.spark as irm_spark

    spark, t_start = timed(lambda: start_session(args.master, args.partitions,
                                                 args.driver_memory, "irmetrics-realqrels"))
    checks = []
    try:
        for label, options, _ in OPTION_SETS:
            measures = (all_trec_numeric(pytrec_eval_only=True) if "semantics" in options
                        else all_trec_numeric() + FRIENDLY)
            want, t_local = timed(lambda: irm.evaluate(paths["qrels"], paths["run"], measures,
                                                       **options))
            got, t_spark = timed(lambda: irm_spark.evaluate(
                str(paths["qrels_parquet"]), str(paths["run_parquet"]), measures,
                run_name=RUN_NAME, num_partitions=args.partitions, **options))
            result = compare(got.results, want)
            checks.append({"options": label, **result,
                           "seconds": {"irmetrics.evaluate": round(t_local, 2),
                                       "irmetrics.spark.evaluate": round(t_spark, 2)}})
            print(f"# spark {label}: {result['queries']} queries x {result['outputs']}"
                  f" outputs, {result['mismatches']} mismatches", file=sys.stderr)
    finally:
        spark.stop()
    return [{"spark_session_start_seconds": round(t_start, 2)}] + checks


def _qrels_of_run_queries(qrels_path: Path, run_queries: set, out: Path) -> Path:
    """The qrels lines of the queries the run has, unchanged: without -c, trec_eval 10
    stops (exit 4) at the first qrels query that has no ranking."""
    path = out / "qrels.run_queries.txt"
    with open(qrels_path, "rb") as src, open(path, "wb") as dst:
        dst.writelines(line for line in src
                       if line.split(maxsplit=1)[:1] and
                       line.split(maxsplit=1)[0].decode() in run_queries)
    return path


def _run_both(binary: str, flags: list, our_files: list, their_files: list,
              strict: bool = False) -> dict:
    ours, t_ours = timed(lambda: subprocess.run(
        [sys.executable, "-m", "irmetrics", "eval", "-q", "-m", "all_trec", *flags,
         *(["--strict"] if strict else []), *map(str, our_files)], capture_output=True))
    theirs, t_theirs = timed(lambda: subprocess.run(
        [binary, "-q", "-m", "all_trec", *flags, *map(str, their_files)],
        capture_output=True))
    a, b = ours.stdout.splitlines(), theirs.stdout.splitlines()
    differing = [i for i in range(max(len(a), len(b)))
                 if i >= len(a) or i >= len(b) or a[i] != b[i]]
    return {"lines": len(b), "bytes": len(theirs.stdout),
            "exit_codes": [ours.returncode, theirs.returncode],
            "byte_identical": ours.stdout == theirs.stdout
            and ours.returncode == theirs.returncode,
            "differing_lines": len(differing),
            "first_differences": [[(a[i] if i < len(a) else b"").decode(),
                                   (b[i] if i < len(b) else b"").decode()]
                                  for i in differing[:5]],
            "seconds": {"irmetrics eval": round(t_ours, 2), "trec_eval": round(t_theirs, 2)}}


def check_trec_eval(paths: dict, binary: str, run_queries: set, out: Path) -> list[dict]:
    """``irmetrics eval -q -m all_trec`` vs ``trec_eval -q -m all_trec``: stdout byte for
    byte and exit codes.

    trec_eval reads the text files: with -c the whole qrels, otherwise the qrels of the
    run's queries (without -c, trec_eval 10 stops with exit 4 at the first qrels query
    that has no ranking). irmetrics reads the same text files, and then the Parquet
    copies (whole qrels, shuffled run rows: it skips the qrels queries without a ranking,
    with a warning on stderr, and must print what trec_eval prints). A last check gives
    both the whole qrels without -c, irmetrics with --strict: both must stop alike."""
    restricted = _qrels_of_run_queries(paths["qrels"], run_queries, out)
    checks = []
    for label, _, flags in OPTION_SETS:
        if flags is None:
            continue
        qrels = paths["qrels"] if "-c" in flags else restricted
        theirs = [qrels, paths["run"]]
        checks.append({"options": label, "irmetrics_reads": "text",
                       "trec_eval_qrels": "all" if "-c" in flags else "run queries",
                       **_run_both(binary, flags, theirs, theirs)})
        checks.append({"options": label, "irmetrics_reads": "parquet",
                       "trec_eval_qrels": "all" if "-c" in flags else "run queries",
                       **_run_both(binary, flags,
                                   [paths["qrels_parquet"], paths["run_parquet"]], theirs)})
    whole = [paths["qrels"], paths["run"]]
    checks.append({"options": "default --strict", "irmetrics_reads": "text",
                   "trec_eval_qrels": "all", **_run_both(binary, [], whole, whole, True)})
    for check in checks:
        print(f"# trec_eval {check['options']} (irmetrics reads {check['irmetrics_reads']},"
              f" trec_eval {check['trec_eval_qrels']} qrels): {check['lines']} lines,"
              f" identical={check['byte_identical']}", file=sys.stderr)
    return checks


def check_pytrec_eval(paths: dict) -> dict:
    """irmetrics.crosscheck: semantics="pytrec_eval" vs pytrec_eval, per query."""
    from irmetrics.crosscheck import crosscheck

    report, seconds = timed(lambda: crosscheck(paths["qrels"], paths["run"]))
    worst = max((o.max_abs_diff for o in report.outputs), default=float("nan"))
    return {"ok": report.ok, "values_compared": report.n_compared,
            "outputs": len(report.outputs), "max_abs_diff": worst,
            "differing_outputs": [o.name for o in report.outputs if o.differing],
            "excluded_queries": len(report.excluded), "seconds": round(seconds, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("qrels", type=Path, help="a TREC qrels file (e.g. qrels.dl19-passage.txt)")
    ap.add_argument("--out", type=Path, help="where the generated files go (default:"
                    " benchmarks/data/realqrels/<qrels file name>)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--collection-size", type=int, default=MSMARCO_PASSAGES,
                    help="unjudged ids are drawn from 0 .. N-1 (default: MS MARCO passages)")
    ap.add_argument("--trec-eval", help="path of a trec_eval 10 binary for the CLI check")
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--no-pytrec-eval", action="store_true")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--driver-memory", default="4g")
    args = ap.parse_args()

    import irmetrics as irm
    from irmetrics.exceptions import MissingQueriesWarning

    warnings.simplefilter("ignore", MissingQueriesWarning)
    out = args.out or BENCH_DIR / "data" / "realqrels" / re.sub(r"\W", "_", args.qrels.name)
    out.mkdir(parents=True, exist_ok=True)
    qrels = irm.Qrels.read(args.qrels).df.select("query_id", "doc_id", "relevance")
    run, t_generate = timed(lambda: generate_run(qrels, seed=args.seed, depth=args.depth,
                                                 collection_size=args.collection_size))
    paths, t_write = timed(lambda: write_inputs(args.qrels, run, out, args.seed))
    run_queries = set(run["query_id"].unique())
    qrels_queries = set(qrels["query_id"].unique())
    judged = run.join(qrels, on=["query_id", "doc_id"], how="inner")
    report = {
        "qrels": {"path": str(args.qrels), "judgments": qrels.height,
                  "queries": len(qrels_queries),
                  "labels": dict(sorted(qrels["relevance"].value_counts().iter_rows()))},
        "run": {"rows": run.height, "queries": len(run_queries),
                "qrels_queries_not_in_run": len(qrels_queries - run_queries),
                "run_queries_not_in_qrels": len(run_queries - qrels_queries),
                "judged_rows": judged.height,
                "judged_rows_by_label": dict(sorted(judged["relevance"].value_counts()
                                                    .iter_rows())),
                "rows_tied_with_another": int(run.select(
                    pl.len().over("query_id", "score") > 1).to_series().sum()),
                "headline_means": {k: round(v, 4) for k, v in irm.evaluate(
                    paths["qrels"], paths["run"], HEADLINE).aggregate().items()},
                "seed": args.seed, "depth": args.depth, "files": str(out),
                "seconds": {"generate": round(t_generate, 2), "write": round(t_write, 2)}},
    }
    if not args.no_spark:
        if importlib.util.find_spec("pyspark") is None:
            sys.exit('check_real_qrels.py: the Spark check needs pyspark: pip install'
                     ' "irmetrics-exact[spark]" (and Java 17+), or pass --no-spark')
        report["spark_vs_single_machine"] = check_spark(paths, args)
    if args.trec_eval:
        report["cli_vs_trec_eval"] = check_trec_eval(paths, args.trec_eval, run_queries, out)
    if not args.no_pytrec_eval:
        try:
            report["pytrec_eval"] = check_pytrec_eval(paths)
        except ImportError as err:
            report["pytrec_eval"] = f"skipped: {err}"
    spark_bad = sum(c.get("mismatches", 0) != 0 for c in report.get("spark_vs_single_machine", []))
    cli_bad = sum(not c["byte_identical"] for c in report.get("cli_vs_trec_eval", []))
    pytrec = report.get("pytrec_eval")
    report["all_identical"] = (spark_bad == 0 and cli_bad == 0
                               and (not isinstance(pytrec, dict) or pytrec["ok"]))
    report["cpus"], report["load_average_1min"] = os.cpu_count(), round(os.getloadavg()[0], 1)
    print(json.dumps(report, indent=2, default=str))
    if not report["all_identical"]:
        sys.exit("differences found: see the JSON above")


if __name__ == "__main__":
    main()
