#!/usr/bin/env python
"""irmetrics.spark.evaluate on a local Spark session against single-machine irmetrics,
on the same ~10M-row generated run.

    python benchmarks/bench_spark.py [--queries 10400] [--master local[2]] [--partitions 16]

1. Generates TREC qrels + run with ``generate.py`` (seed 42, depth 1000; 10,400 qrels
   topics give ~10.0M run lines) unless present, and converts both to Parquet
   (``query_id, doc_id, score`` and ``query_id, doc_id, relevance``) with polars.
2. Times single-machine ``irmetrics.evaluate`` on the TREC files and on the Parquet
   tables (read with polars).
3. Starts a Spark session (``--master``, timed apart) and times
   ``irmetrics.spark.evaluate`` on the Parquet paths (read, shuffle by query id,
   evaluation in the Python workers, collection of the per-query values).
4. Checks that per-query values and aggregates are bit-identical between the two and
   prints one JSON document with the timings.

A benchmark, not a test: it asserts nothing about timings. Needs ``irmetrics-exact[spark]``
and Java; the data take ~1.1 GB of disk.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import polars as pl

BENCH_DIR = Path(__file__).resolve().parent
MEASURES = ["map", "P.10", "recall.1000", "recip_rank", "ndcg", "ndcg_cut.10", "gm_map"]


def prepare(data: Path, queries: int) -> dict:
    """TREC files (generated) and their Parquet copies; returns the paths."""
    paths = {"qrels": data / "qrels.txt", "run": data / "run.txt",
             "qrels_parquet": data / "qrels.parquet", "run_parquet": data / "run.parquet"}
    if not paths["run"].exists():
        subprocess.run([sys.executable, str(BENCH_DIR / "generate.py"), "--seed", "42",
                        "--queries", str(queries), "--depth", "1000", "--out", str(data)],
                       check=True)
    import irmetrics as irm

    if not paths["run_parquet"].exists():
        irm.Run.read(paths["run"]).df.select("query_id", "doc_id", "score") \
            .write_parquet(paths["run_parquet"])
        irm.Qrels.read(paths["qrels"]).df.select("query_id", "doc_id", "relevance") \
            .write_parquet(paths["qrels_parquet"])
    return paths


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def start_session(master: str, partitions: int, driver_memory: str, app_name: str):
    """A quiet Spark session (no UI, errors only) with ``partitions`` shuffle partitions."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", driver_memory)
               .config("spark.sql.shuffle.partitions", str(partitions))
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def _count_rows(batches):
    import pyarrow as pa

    yield pa.RecordBatch.from_pydict({"n": [sum(b.num_rows for b in batches)]})


def same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return (math.isnan(a) and math.isnan(b)) or a == b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=10400)
    ap.add_argument("--data", default=str(BENCH_DIR / "data" / "spark"))
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--driver-memory", default="4g")
    args = ap.parse_args()

    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    paths = prepare(data, args.queries)
    run_rows = pl.scan_parquet(paths["run_parquet"]).select(pl.len()).collect().item()
    qrels_rows = pl.scan_parquet(paths["qrels_parquet"]).select(pl.len()).collect().item()

    import irmetrics as irm
    import irmetrics.spark as irm_spark
    from irmetrics.exceptions import MissingQueriesWarning

    warnings.simplefilter("ignore", MissingQueriesWarning)
    local, t_local = timed(lambda: irm.evaluate(paths["qrels"], paths["run"], MEASURES))
    t_local_parquet = timed(lambda: irm.evaluate(
        irm.Qrels.from_df(pl.read_parquet(paths["qrels_parquet"])),
        irm.Run.from_df(pl.read_parquet(paths["run_parquet"])), MEASURES))[1]

    spark, t_start = timed(lambda: start_session(args.master, args.partitions,
                                                 args.driver_memory, "irmetrics-bench"))

    def shuffle_only():
        """The same read and shuffle by query id, with no evaluation: Spark's share."""
        rows = irm_spark.partitioned._partitioned_union(
            irm_spark.partitioned._spark_frame(spark, str(paths["qrels_parquet"]), "qrels"),
            irm_spark.partitioned._spark_frame(spark, str(paths["run_parquet"]), "run"), args.partitions)
        return rows.mapInArrow(_count_rows, "n long").groupBy().sum("n").collect()[0][0]

    shuffled, t_shuffle = timed(shuffle_only)
    assert shuffled == run_rows + qrels_rows
    on_spark, t_spark = timed(lambda: irm_spark.evaluate(
        str(paths["qrels_parquet"]), str(paths["run_parquet"]), MEASURES, run_name="irmbench",
        num_partitions=args.partitions))
    # A second evaluation, with the JVM and the Python workers warm.
    t_spark_warm = timed(lambda: irm_spark.evaluate(
        str(paths["qrels_parquet"]), str(paths["run_parquet"]), MEASURES, run_name="irmbench",
        num_partitions=args.partitions))[1]
    spark.stop()

    got, want = on_spark.results, local
    identical = (got.query_ids.tolist() == want.query_ids.tolist()
                 and all(bool((got.values(n) == want.values(n)).all()) for n in want.names)
                 and all(same(got.aggregate()[n], want.aggregate()[n])
                         for n in want.aggregate()))
    report = {
        "run_rows": run_rows, "qrels_rows": qrels_rows, "queries": len(want.query_ids),
        "measures": MEASURES, "master": args.master, "partitions": args.partitions,
        "seconds": {"irmetrics.evaluate (TREC files)": round(t_local, 2),
                    "irmetrics.evaluate (Parquet via polars)": round(t_local_parquet, 2),
                    "Spark session start": round(t_start, 2),
                    "Spark read + shuffle by query id + Arrow to Python, no evaluation":
                        round(t_shuffle, 2),
                    "irmetrics.spark.evaluate (first)": round(t_spark, 2),
                    "irmetrics.spark.evaluate (warm)": round(t_spark_warm, 2)},
        "bit_identical": identical,
        "aggregate": {k: v for k, v in want.aggregate().items() if k != "runid"},
        "cpus": os.cpu_count(), "load_average_1min": round(os.getloadavg()[0], 1),
        "python": platform.python_version(),
    }
    print(json.dumps(report, indent=2))
    if not identical:
        sys.exit("per-query values or aggregates differ between Spark and one machine")


if __name__ == "__main__":
    main()
