#!/usr/bin/env python
"""What a measure of your own costs (docs/custom_measures.md).

    python benchmarks/generate.py --seed 42 --queries 1000 --depth 1000 --out /tmp/cm_data/
    python benchmarks/bench_custom_measures.py /tmp/cm_data/

Times, on the run file of the generated data (evaluated chunk by chunk on the
bounded-memory file road), alternating the cases ``--repeats`` times and keeping each
one's best:

* built-in ``P.10`` and ``ndcg_cut.10``;
* the same questions asked of user measures written vectorised over ``irm.Rankings``
  (a graded precision and a normalised rank-biased gain, as in the docs);
* the rank-biased gain in the per-query form (a Python loop over queries);

and the peak memory of one ``irmetrics eval`` process per case. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

MEASURES = '''
import numpy as np
import irmetrics as irm


@irm.define_measure("GradedP")
def graded_precision(view, max_label: int = 3):
    gain = np.minimum(view.label, max_label) / max_label
    return view.sum(gain) / (view.cutoff or np.maximum(view.num_ret, 1))


@irm.define_measure("nRBG")
def normalised_rank_biased_gain(view, p: float = 0.8):
    def rbg(v):
        return v.sum((2.0 ** v.label - 1) * p ** (v.rank - 1))
    ideal = rbg(view.ideal())
    return np.divide(rbg(view), ideal, out=np.zeros(view.n_queries), where=ideal > 0)


@irm.define_measure("nRBGLoop", per_query=True)
def nrbg_loop(query, p: float = 0.8):
    gain = sum((2.0 ** x - 1) * p ** (r - 1) for x, r in zip(query.label, query.rank))
    ideal = sum((2.0 ** x - 1) * p ** i for i, x in enumerate(query.ideal_label))
    return gain / ideal if ideal > 0 else 0.0
'''

CASES = {"built-in P.10 + ndcg_cut.10": ["P.10", "ndcg_cut.10"],
         "user GradedP@10 + nRBG@10 (vectorised)": ["GradedP@10", "nRBG@10"],
         "user nRBGLoop@10 (per-query form)": ["nRBGLoop@10"],
         "built-in ndcg (whole rankings)": ["ndcg"],
         "user nRBG (whole rankings, vectorised)": ["nRBG"],
         "user nRBGLoop (whole rankings, per query)": ["nRBGLoop"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path, help="folder with qrels.txt and run.txt")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    measures_file = args.data / "bench_measures.py"
    measures_file.write_text(MEASURES)
    qrels, run = args.data / "qrels.txt", args.data / "run.txt"

    import irmetrics as irm

    irm.load_measures(measures_file)
    best = {name: float("inf") for name in CASES}
    for _ in range(args.repeats):
        for name, measures in CASES.items():
            evaluator = irm.Evaluator(qrels, measures)
            start = time.perf_counter()
            evaluator.evaluate(run)
            best[name] = min(best[name], time.perf_counter() - start)
    print(f"{'case':<42} {'best s':>8} {'peak MiB':>9}")
    for name, measures in CASES.items():
        flags = [a for m in measures for a in ("-m", m)]
        child = subprocess.run([sys.executable, "-c", _PEAK, "eval", "--measures-from",
                                str(measures_file), *flags, str(qrels), str(run)],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
        peak_kib = int(child.stderr.split()[-1])
        print(f"{name:<42} {best[name]:8.3f} {peak_kib / 1024:9.0f}")


#: One ``irmetrics`` process that reports its own peak RSS (KiB) on stderr.
_PEAK = ("import resource, sys; from irmetrics.cli import main; main(sys.argv[1:]); "
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")

if __name__ == "__main__":
    main()
