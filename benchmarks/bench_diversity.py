#!/usr/bin/env python
"""alpha_nDCG@20 on intent-aware qrels: irmetrics vs ir_measures 0.4.3 (pyndeval).

    python benchmarks/bench_diversity.py [--data benchmarks/data] [--queries N] [--seed 7]

Reads the standard benchmark files (``qrels.txt``, ``run.txt`` from
``benchmarks/generate.py``; 7M run lines for the default 7,000 queries) and derives
intent-aware qrels from the qrels, deterministically from ``--seed``: each query gets
2-6 intents and each judgment line becomes one or two lines for distinct intents of its
query, with the same label. They are written to ``<data>/diversity_qrels.txt`` (once).
``--queries N`` keeps the first N queries of both files (a quicker run).

Each tool is timed end to end in this process (read both files, evaluate, mean), once:
ir_measures through ``read_trec_qrels``/``read_trec_run`` and ``calc_aggregate``,
irmetrics through ``evaluate_diversity(path, path, ...)``. The means are compared.
This is a benchmark, not a test: it asserts nothing about timings.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

BENCH_DIR = Path(__file__).resolve().parent
MEASURE = "alpha_nDCG@20"


def intent_qrels(qrels_path: Path, out: Path, seed: int) -> Path:
    """Derive intent-aware qrels from TREC qrels (see the module notes)."""
    if out.exists():
        return out
    qrels = pl.read_csv(qrels_path, separator=" ", has_header=False,
                        new_columns=["query_id", "it", "doc_id", "relevance"],
                        schema_overrides={"query_id": pl.String, "doc_id": pl.String})
    rng = np.random.default_rng(seed)
    query_codes = qrels["query_id"].rank("dense").to_numpy() - 1
    n_intents = rng.integers(2, 7, size=int(query_codes.max()) + 1)[query_codes]
    first = rng.integers(0, n_intents)
    second = (first + rng.integers(1, n_intents)) % n_intents  # a different intent
    twice = rng.random(len(first)) < 0.5
    lines = pl.concat([
        qrels.with_columns(pl.Series("intent", first)),
        qrels.filter(twice).with_columns(pl.Series("intent", second[twice])),
    ]).select("query_id", pl.col("intent").cast(pl.String), "doc_id", "relevance")
    lines.write_csv(out, separator=" ", include_header=False)
    return out


def head_queries(path: Path, n: int, out: Path) -> Path:
    """The lines of the first ``n`` query ids of ``path`` (files are sorted by query)."""
    frame = pl.read_csv(path, separator=" ", has_header=False, infer_schema=False)
    qid = frame.columns[0]
    keep = frame[qid].unique(maintain_order=True).head(n).to_list()
    frame.filter(pl.col(qid).is_in(keep)).write_csv(out, separator=" ", include_header=False)
    return out


def time_irmetrics(qrels: Path, run: Path) -> tuple[float, float]:
    import warnings

    import irmetrics as irm

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = irm.evaluate_diversity(str(qrels), str(run), [MEASURE],
                                       complete=True).aggregate()[MEASURE]
    return time.perf_counter() - start, value


def time_ir_measures(qrels: Path, run: Path) -> tuple[float, float]:
    import ir_measures

    start = time.perf_counter()
    measure = ir_measures.parse_measure(MEASURE)
    result = ir_measures.calc_aggregate([measure], ir_measures.read_trec_qrels(str(qrels)),
                                        ir_measures.read_trec_run(str(run)))
    return time.perf_counter() - start, result[measure]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--data", type=Path, default=BENCH_DIR / "data")
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None,
                        help="directory for derived files (default: --data)")
    args = parser.parse_args(argv)
    out = args.out or args.data
    out.mkdir(parents=True, exist_ok=True)
    qrels = intent_qrels(args.data / "qrels.txt", out / "diversity_qrels.txt", args.seed)
    run = args.data / "run.txt"
    if args.queries:
        qrels = head_queries(qrels, args.queries, out / f"diversity_qrels.{args.queries}.txt")
        run = head_queries(run, args.queries, out / f"run.{args.queries}.txt")
    lines = sum(1 for _ in open(run, "rb"))
    print(f"{MEASURE}: {lines:,} run lines, {sum(1 for _ in open(qrels, 'rb')):,} intent"
          " qrels lines", flush=True)
    ours, ours_value = time_irmetrics(qrels, run)
    print(f"irmetrics    {ours:8.2f} s   mean {ours_value:.12f}", flush=True)
    theirs, their_value = time_ir_measures(qrels, run)
    print(f"ir_measures  {theirs:8.2f} s   mean {their_value:.12f}", flush=True)
    print(f"speed-up x{theirs / ours:.1f}; |difference of means| "
          f"{abs(ours_value - their_value):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
