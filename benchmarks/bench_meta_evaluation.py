#!/usr/bin/env python
"""Benchmark of ``irmetrics.evaluate_grid`` and the meta-evaluation statistics.

    python benchmarks/bench_meta_evaluation.py [--qrels 40] [--runs 30] [--topics 43]
                                               [--depth 1000] [--repeat 1] [--no-baselines]

Data (deterministic, seed 7; written to a temporary directory): TREC DL-sized inputs,
``--topics`` topics with about 215 judged documents each (TREC DL 2019 has 43 topics and
9,260 judgments) in a "human" qrels and ``--qrels - 1`` noisy relabellings of it (LLM-like
judges: each label kept, raised or lowered by one grade with a judge-specific
probability); ``--runs`` run files of ``--depth`` documents per topic (pool documents and
non-pool documents, scores with 3 decimals, so ties happen), of graded quality.

Reported after a warm-up (imports and first calls on a 2 x 2 grid), alternating the tools in
every round (best of ``--repeat`` rounds):

* ``grid``: ``irmetrics.evaluate_grid`` over every qrels x run (3 measures), each run file
  read once (the count of file openings is checked and printed);
* ``evaluate loop``: one ``irmetrics.evaluate`` per (qrels, run): every run read once per
  qrels set (what a loop over judge sets does);
* ``pytrec_eval loop``: the usual script: each qrels and each run parsed once into
  pytrec_eval's dicts (with ``pytrec_eval.parse_qrel`` / ``parse_run``), one
  ``RelevanceEvaluator`` per qrels, ``evaluate`` per run;
* the statistics on the grid: ranking agreement of every qrels set with the first
  (1,000 bootstrap resamples, per measure), discriminative power (t-test) and swap rate
  (1,000 trials), and judge agreement of every qrels set with the first.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MEASURES = ["ndcg_cut.10", "map", "recall.100"]
PYTREC_MEASURES = {"ndcg_cut_10", "map", "recall_100"}


def make_data(out: Path, n_qrels: int, n_runs: int, topics: int, depth: int, seed: int = 7):
    """Write the qrels sets and runs; return ``({name: path}, {name: path})``."""
    rng = np.random.default_rng(seed)
    collection = 2 * depth
    judged = 215
    qids = [str(19335 + 997 * t) for t in range(topics)]
    docs = np.array([f"msmarco_passage_{i:08d}" for i in range(topics * collection)])
    labels = rng.choice([0, 0, 0, 1, 1, 2, 3], size=(topics, judged))
    pools = np.stack([rng.choice(collection, size=judged, replace=False) + t * collection
                      for t in range(topics)])
    qrels = {}
    for j in range(n_qrels):
        if j == 0:
            grades = labels
        else:
            up, down = 0.05 + 0.25 * rng.random(), 0.02 + 0.08 * rng.random()
            shift = rng.choice([0, 1, -1], size=labels.shape, p=[1 - up - down, up, down])
            grades = np.clip(labels + shift, 0, 3)
        lines = [f"{qids[t]} 0 {docs[pools[t, d]]} {grades[t, d]}"
                 for t in range(topics) for d in range(judged)]
        path = out / f"qrels{j:02d}.txt"
        path.write_text("\n".join(lines) + "\n")
        qrels[f"q{j:02d}"] = path
    truth = np.zeros((topics, collection))
    for t in range(topics):
        truth[t, pools[t] - t * collection] = labels[t]
    runs = {}
    for r in range(n_runs):
        weight = 0.3 + 1.5 * r / max(1, n_runs - 1)
        lines = []
        for t in range(topics):
            score = np.round(weight * truth[t] + rng.normal(size=collection), 3)
            top = np.argsort(-score, kind="stable")[:depth]
            lines.extend(f"{qids[t]} Q0 {docs[t * collection + i]} {k} {score[i]:.3f} sys{r:02d}"
                         for k, i in enumerate(top, start=1))
        path = out / f"sys{r:02d}.run"
        path.write_text("\n".join(lines) + "\n")
        runs[f"sys{r:02d}"] = path
    return qrels, runs


def run_grid(qrels, runs):
    import irmetrics as irm
    from irmetrics.engine import fanout

    opened = Counter()
    real = fanout.plain_chunks

    def counting(path, kind, **kw):
        opened[str(path)] += 1
        return real(path, kind, **kw)

    fanout.plain_chunks = counting
    try:
        grid = irm.evaluate_grid({k: str(v) for k, v in qrels.items()},
                                 {k: str(v) for k, v in runs.items()}, MEASURES)
    finally:
        fanout.plain_chunks = real
    return grid, opened


def run_evaluate_loop(qrels, runs):
    import irmetrics as irm

    return {(q, r): irm.evaluate(str(qp), str(rp), MEASURES)
            for q, qp in qrels.items() for r, rp in runs.items()}


def run_pytrec_loop(qrels, runs):
    import pytrec_eval

    parsed_runs = {}
    for name, path in runs.items():
        with open(path) as handle:
            parsed_runs[name] = pytrec_eval.parse_run(handle)
    out = {}
    for q, path in qrels.items():
        with open(path) as handle:
            evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(handle),
                                                       PYTREC_MEASURES)
        for r, run in parsed_runs.items():
            out[(q, r)] = evaluator.evaluate(run)
    return out


def timed(fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qrels", type=int, default=40)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--topics", type=int, default=43)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-baselines", action="store_true",
                        help="time evaluate_grid and the statistics only")
    args = parser.parse_args()

    import irmetrics as irm

    with tempfile.TemporaryDirectory(prefix="irmetrics-bench-meta-") as tmp:
        out = Path(tmp)
        start = time.perf_counter()
        qrels, runs = make_data(out, args.qrels, args.runs, args.topics, args.depth)
        lines = sum(1 for _ in open(next(iter(runs.values()))))
        judgments = sum(1 for _ in open(next(iter(qrels.values()))))
        print(f"data: {args.qrels} qrels sets x {judgments:,} judgments, {args.runs} runs x"
              f" {lines:,} lines ({args.topics} topics), written in"
              f" {time.perf_counter() - start:.1f} s")
        # Warm-up (imports, first calls) on a 2 x 2 grid, outside the timings.
        small = irm.evaluate_grid({k: str(qrels[k]) for k in ("q00", "q01")},
                                  {k: str(runs[k]) for k in ("sys00", "sys01")}, MEASURES)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            small.ranking_agreement("q00", n_resamples=10)
            small.discriminative_power()
            small.swap_rate(n_trials=10)
        run_pytrec_loop({"q": qrels["q00"]}, {"r": runs["sys00"]})
        best: dict = {}
        for round_ in range(args.repeat):
            seconds, (grid, opened) = timed(run_grid, qrels, runs)
            best["grid"] = min(best.get("grid", seconds), seconds)
            counts = set(opened.values())
            if round_ == 0:
                print(f"evaluate_grid: {len(grid.results)} cells; each run file opened"
                      f" {sorted(counts)} time(s) (files opened: {len(opened)})")
            if args.no_baselines:
                continue
            seconds, loop = timed(run_evaluate_loop, qrels, runs)
            best["evaluate loop"] = min(best.get("evaluate loop", seconds), seconds)
            seconds, pytrec = timed(run_pytrec_loop, qrels, runs)
            best["pytrec_eval loop"] = min(best.get("pytrec_eval loop", seconds), seconds)
            if round_ == 0:
                same = all(np.array_equal(grid.results[key].values(name), res.values(name))
                           for key, res in loop.items() for name in res.names
                           if res.values(name).dtype != object)
                worst = max(abs(np.mean([v[m] for v in pytrec[key].values()])
                                - grid.results[key].aggregate()[m])
                            for key in pytrec for m in PYTREC_MEASURES)
                print(f"grid == evaluate per cell, bit for bit: {same}; largest |mean"
                      f" difference| with pytrec_eval: {worst:.1e}")
        print()
        print(f"{'evaluation':<22}{'seconds':>9}{'vs grid':>9}")
        for name, seconds in best.items():
            print(f"{name:<22}{seconds:>9.2f}{seconds / best['grid']:>8.1f}x")

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stats_times = {
                "ranking agreement": timed(lambda: grid.ranking_agreement(
                    "q00", n_resamples=1000))[0],
                "discriminative power": timed(lambda: grid.discriminative_power())[0],
                "swap rate": timed(lambda: grid.swap_rate(n_trials=1000))[0],
                "judge agreement": timed(lambda: [irm.judge_agreement(
                    str(qrels["q00"]), str(path)) for q, path in qrels.items()
                    if q != "q00"])[0],
            }
        print()
        print(f"{'statistics on the grid':<22}{'seconds':>9}")
        for name, seconds in stats_times.items():
            print(f"{name:<22}{seconds:>9.2f}")


if __name__ == "__main__":
    main()
