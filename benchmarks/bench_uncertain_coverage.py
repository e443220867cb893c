"""Coverage of the intervals of ``evaluate_uncertain`` (label distributions): how often a
nominal 95 % interval of mean reciprocal rank holds its population value, when every
label is drawn from its distribution.

    python benchmarks/bench_uncertain_coverage.py [--reps 400] [--samples 16] [--paired]

The simulation is the one of tests/judgment_formats/test_judgment_uncertain.py (``coverage``: seeded, each
topic ranks 3 documents relevant with probabilities ~ U(0, 1); population mean
1/2 + 1/8 + 1/24), run with more repetitions and several topic counts. The issue's
target: at least 93 %. ``--paired`` runs tests/comparison/test_compare_judges.py's
``paired_coverage`` instead: the interval of compare's paired difference under label
distributions (population mean of the expected difference 1/8). Figures in
docs/incomplete_judgments.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.comparison.test_compare_judges import paired_coverage  # noqa: E402
from tests.judgment_formats.test_judgment_uncertain import coverage  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--topics", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--intervals", nargs="+", default=["t", "bootstrap"])
    parser.add_argument("--paired", action="store_true",
                        help="compare's paired difference (t only)")
    args = parser.parse_args()
    if args.paired:
        warnings.simplefilter("ignore")
        for topics in args.topics:
            t0 = time.perf_counter()
            share = paired_coverage(args.reps, topics, args.samples, seed=1)
            half = 1.96 * math.sqrt(share * (1 - share) / args.reps)
            print(f"paired t  topics {topics:3d}, label samples {args.samples}, reps"
                  f" {args.reps}: coverage {share:.3f} (+/- {half:.3f}),"
                  f" {time.perf_counter() - t0:.0f} s", flush=True)
        return
    for interval in args.intervals:
        for topics in args.topics:
            t0 = time.perf_counter()
            share = coverage(args.reps, topics, args.samples, seed=1, interval=interval)
            half = 1.96 * math.sqrt(share * (1 - share) / args.reps)
            print(f"{interval:9s} topics {topics:3d}, label samples {args.samples}, reps"
                  f" {args.reps}: coverage {share:.3f} (+/- {half:.3f}),"
                  f" {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
