"""Bounds over unjudged documents: ``evaluate(..., unjudged="bounds")`` against the plain
evaluation of the same run, on the 7M-line data of ``generate.py``.

    python benchmarks/bench_unjudged_bounds.py [--data benchmarks/data/default] [--repeat 3]

Each timing is a fresh process (``irm.evaluate`` on the file paths, reading included);
the plain and the bounds evaluations alternate, so load on the machine hits both alike.
The issue's target: bounds within 3x the plain evaluation. Figures in
docs/incomplete_judgments.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEASURES = ["map", "P.10", "ndcg_cut.10", "recall.100", "Rprec", "recip_rank", "bpref"]

CHILD = """
import json, sys, time
import irmetrics as irm
qrels, run, unjudged, measures = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
t0 = time.perf_counter()
res = irm.evaluate(qrels, run, measures, unjudged=unjudged)
print(json.dumps({"seconds": time.perf_counter() - t0, "aggregate": res.aggregate()}))
"""


def child(data: Path, unjudged: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(data / "qrels.txt"),
                          str(data / "run.txt"), unjudged, *MEASURES],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=HERE / "data" / "default")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    if not (args.data / "run.txt").exists():
        sys.path.insert(0, str(HERE))
        from generate import generate

        generate(args.data)
    times: dict = {"zero": [], "bounds": []}
    last: dict = {}
    for _ in range(args.repeat):
        for unjudged in ("zero", "bounds"):
            last[unjudged] = child(args.data, unjudged)
            times[unjudged].append(last[unjudged]["seconds"])
    plain, bounds = min(times["zero"]), min(times["bounds"])
    print(f"plain evaluation: {plain:.2f}s (best of {args.repeat}: {times['zero']})")
    print(f"with bounds:      {bounds:.2f}s (best of {args.repeat}: {times['bounds']})")
    print(f"ratio:            {bounds / plain:.2f}x (target <= 3x)")
    agg = last["bounds"]["aggregate"]
    for name in MEASURES:
        key = name.replace(".", "_")
        print(f"  {key:<14} {agg[key + '_low']:.4f} <= {agg[key]:.4f} <= {agg[key + '_high']:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
