#!/usr/bin/env python
"""Can threads speed up the dict road (the pytrec_eval drop-in)? An upper bound.

    python benchmarks/bench_dict_threads.py [--queries 1000] [--depth 1000] [--repeat 3]

The dict road walks a ``{query: {doc: score}}`` dict in Python before numpy sees a
number. This measures the most any threading of it could gain: ``k`` independent
evaluations of the same dict run one after the other, then at once on ``k`` threads
(``concurrent.futures``), alternated, in one process; the ratio of the two wall times is
the speed-up threads would give if the road were cut into ``k`` perfectly balanced
pieces. Seeded data (``numpy.random.default_rng(seed)``), ties and graded labels included.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from irmetrics import Evaluator  # noqa: E402

MEASURES = ["map", "P.10", "recall.1000", "recip_rank", "ndcg", "ndcg_cut.10"]


def data(queries: int, depth: int, seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(queries):
        docs = [f"d{d}" for d in rng.choice(depth * 5, size=depth, replace=False)]
        scores = np.round(rng.random(depth), 2)  # ties from rounding
        run[f"q{q}"] = dict(zip(docs, scores.tolist()))
        judged = rng.choice(depth, size=depth // 5, replace=False)
        qrels[f"q{q}"] = {docs[i]: int(rng.integers(-1, 4)) for i in judged}
    return qrels, run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    qrels, run = data(args.queries, args.depth, args.seed)
    ev = Evaluator(qrels, MEASURES)
    k = args.threads
    want = ev.evaluate(run).to_dict()
    sequential, threaded = [], []
    with ThreadPoolExecutor(max_workers=k) as pool:
        for _ in range(args.repeat):
            start = time.perf_counter()
            for _ in range(k):
                ev.evaluate(run)
            sequential.append(time.perf_counter() - start)
            start = time.perf_counter()
            results = list(pool.map(lambda _: ev.evaluate(run).to_dict(), range(k)))
            threaded.append(time.perf_counter() - start)
            assert all(r == want for r in results)
    seq, par = statistics.median(sequential), statistics.median(threaded)
    print(f"{args.queries} queries x {args.depth}: {k} evaluations one after the other "
          f"{seq:.2f} s, on {k} threads {par:.2f} s: {seq / par:.2f}x (the most threads "
          f"could give the dict road)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
