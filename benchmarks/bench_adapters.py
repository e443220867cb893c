"""Benchmark: score matrix → map, ndcg_cut.10, P.10.

Compares, each in its own subprocess (so peak RSS is the child's own ``ru_maxrss``):

* ``direct``      ``from_matrix`` + ``irmetrics.evaluate`` (numeric road: no strings);
* ``frames``      ``from_matrix`` + the adapter's string tables evaluated as DataFrames
                  (encode_qrels + pack: the road every other input takes);
* ``pytrec_eval`` dicts built from the matrix (pytorchltr ``generate_pytrec_eval``
                  style) + ``pytrec_eval.RelevanceEvaluator``, means taken in Python;
* ``knn``         (separate data, not compared with the others) ``from_embeddings``:
                  exact euclidean top-10 of ``queries`` seeded 64-d embeddings among
                  themselves (``docs`` labels), then the same measures.

Data: a seeded (queries x docs) float32 score matrix with about ``rate`` relevant cells
(label 1), generated in each child before the clock starts. Scores are float32, so
trec_eval's float64 and pytrec_eval's float32 orderings coincide and all roads must
agree to 1e-9 (checked).

    python benchmarks/bench_adapters.py [--queries 10000] [--docs 1000] [--rate 0.02]
                                        [--repeat 3] [--modes direct,frames,pytrec_eval,knn]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

MEASURES = ["map", "ndcg_cut.10", "P.10"]
OUTPUTS = ["map", "ndcg_cut_10", "P_10"]


def make_data(queries: int, docs: int, rate: float, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    scores = rng.random((queries, docs), dtype=np.float32)
    relevance = (rng.random((queries, docs)) < rate).astype(np.int64)
    return scores, relevance


def child(mode: str, queries: int, docs: int, rate: float, seed: int) -> dict:
    if mode == "knn":
        import numpy as np

        rng = np.random.default_rng(seed)
        embeddings = rng.standard_normal((queries, 64))
        labels = rng.integers(0, docs, queries)
    else:
        scores, relevance = make_data(queries, docs, rate, seed)
    # Imports happen before the clock starts (each side pays only for its work).
    if mode == "pytrec_eval":
        import pytrec_eval
    else:
        import irmetrics as irm
        from irmetrics.adapters import from_embeddings, from_matrix
    rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if mode == "knn":
        qrels, run = from_embeddings(embeddings, labels, k=10, metric="euclidean")
        values = irm.evaluate(qrels, run, MEASURES).aggregate()
    elif mode in ("direct", "frames"):
        qrels, run = from_matrix(scores, relevance)
        if mode == "frames":
            qrels, run = qrels.df, run.df
        values = irm.evaluate(qrels, run, MEASURES).aggregate()
    elif mode == "pytrec_eval":
        qrel = {f"q{i}": {f"d{j}": int(r) for j, r in enumerate(row)}
                for i, row in enumerate(relevance.tolist())}
        run = {f"q{i}": {f"d{j}": float(s) for j, s in enumerate(row)}
               for i, row in enumerate(scores.tolist())}
        per_query = pytrec_eval.RelevanceEvaluator(qrel, set(MEASURES)).evaluate(run)
        values = {name: sum(v[name] for v in per_query.values()) / len(per_query)
                  for name in OUTPUTS}
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    wall = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"mode": mode, "wall_s": wall, "peak_rss_mib": rss / 1024,
            "data_rss_mib": rss_data / 1024, "values": {k: values[k] for k in OUTPUTS}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--rate", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modes", default="direct,frames,pytrec_eval")
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds; modes alternate within a round, medians are reported")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.queries, args.docs, args.rate, args.seed)))
        return

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    modes = args.modes.split(",")
    runs: dict[str, list[dict]] = {mode: [] for mode in modes}
    for _ in range(args.repeat):  # interleaved, so load changes hit every mode alike
        for mode in modes:
            out = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", mode,
                 "--queries", str(args.queries), "--docs", str(args.docs),
                 "--rate", str(args.rate), "--seed", str(args.seed)],
                check=True, capture_output=True, text=True, env=env,
            )
            runs[mode].append(json.loads(out.stdout.strip().splitlines()[-1]))
    results = []
    for mode in modes:
        walls = sorted(r["wall_s"] for r in runs[mode])
        results.append({**runs[mode][0], "wall_s": walls[len(walls) // 2],
                        "wall_min_s": walls[0], "wall_max_s": walls[-1],
                        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs[mode])})
    try:
        load = " (load average %.2f %.2f %.2f)" % os.getloadavg()
    except OSError:
        load = ""
    print(f"{args.queries} x {args.docs} matrix, {args.rate:.0%} relevant, seed {args.seed}; "
          f"measures {', '.join(MEASURES)}; median of {args.repeat} runs{load}")
    print(f"{'mode':<12} {'wall s':>8} {'(min-max)':>13} {'peak RSS MiB':>13} "
          f"{'data+imports MiB':>17}  " + "  ".join(f"{n:>12}" for n in OUTPUTS))
    for r in results:
        spread = f"{r['wall_min_s']:.2f}-{r['wall_max_s']:.2f}"
        print(f"{r['mode']:<12} {r['wall_s']:8.2f} {spread:>13} {r['peak_rss_mib']:13.0f} "
              f"{r['data_rss_mib']:17.0f}  " + "  ".join(f"{r['values'][n]:12.6f}" for n in OUTPUTS))
    by_mode = {r["mode"]: r for r in results}
    matrix_modes = [mode for mode in modes if mode != "knn"]
    reference = by_mode[matrix_modes[0]]["values"] if matrix_modes else {}
    for r in (r for mode in matrix_modes for r in runs[mode]):
        for name in OUTPUTS:
            if abs(r["values"][name] - reference[name]) > 1e-9:
                raise SystemExit(f"{r['mode']} disagrees on {name}: {r['values'][name]} "
                                 f"vs {reference[name]}")
    if "pytrec_eval" in by_mode:
        base = by_mode["pytrec_eval"]
        for mode, r in by_mode.items():
            if mode != "pytrec_eval":
                print(f"pytrec_eval / {mode}: {base['wall_s'] / r['wall_s']:.1f}x time (median), "
                      f"{base['peak_rss_mib'] / r['peak_rss_mib']:.1f}x peak RSS")


if __name__ == "__main__":
    main()
