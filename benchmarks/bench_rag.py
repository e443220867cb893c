#!/usr/bin/env python
"""Benchmark of ``irmetrics.rag.nugget_scores`` against castorini/nuggetizer's metric code.

    python benchmarks/bench_rag.py [--runs 30] [--topics 300] [--repeat 3]

Data (deterministic, seed 40; written to a temporary directory): one nuggetizer assignment
file of ``--runs`` x ``--topics`` answers, 5 to 30 nuggets each (vital or okay; support,
partial support or none).

Each round times, in fresh processes and alternating the tools (best of ``--repeat``):

* ``irmetrics``: reading, ``read_assignments`` (parsed and validated line by line, in
  Python); scoring, ``nugget_scores`` (every answer's five scores) and the per-run means;
* ``nuggetizer``: what its ``metrics`` command does: reading, ``json.loads`` of every
  line; scoring, ``calculate_nugget_scores`` per answer and ``calculate_global_metrics``
  per run (needs ``pip install nuggetizer``).

Imports are not timed.

The per-answer scores of both are compared (they must be equal) before anything is timed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

IRMETRICS = """
import sys, time
sys.path.insert(0, {root!r})
from irmetrics import rag
t = time.perf_counter()
frame = rag.read_assignments({path!r})
read = time.perf_counter() - t
rag.nugget_scores(frame).means()
print(read, time.perf_counter() - t - read)
"""

NUGGETIZER = """
import json, time
from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores
t = time.perf_counter()
records = [json.loads(line) for line in open({path!r}, encoding="utf-8")]
read = time.perf_counter() - t
per_answer = [calculate_nugget_scores(r["qid"], r["nuggets"]) for r in records]
for run in sorted({{r["run_id"] for r in records}}):
    calculate_global_metrics([r for r in records if r["run_id"] == run])
print(read, time.perf_counter() - t - read)
"""


def make_data(path: Path, runs: int, topics: int, seed: int = 40) -> int:
    rng = np.random.default_rng(seed)
    labels = np.array(["not_support", "partial_support", "support"])
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for r in range(runs):
            for t in range(topics):
                k = int(rng.integers(5, 31))
                vital = rng.random(k) < 0.4
                got = labels[rng.choice(3, size=k, p=[0.4, 0.2, 0.4])]
                nuggets = [{"text": f"nugget {i} of {t}",
                            "importance": "vital" if vital[i] else "okay",
                            "assignment": str(got[i])} for i in range(k)]
                fh.write(json.dumps({"qid": f"t{t}", "run_id": f"run{r}",
                                     "nuggets": nuggets}) + "\n")
                n += k
    return n


def check_equal(path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from nuggetizer.core.metrics import calculate_nugget_scores

    from irmetrics import rag
    frame = rag.nugget_scores(rag.read_assignments(path)).frame
    mine = {(r["run_id"], r["topic_id"]): (r["strict_vital_score"], r["strict_all_score"],
                                           r["vital_score"], r["all_score"])
            for r in frame.iter_rows(named=True)}
    for line in open(path, encoding="utf-8"):
        record = json.loads(line)
        m = calculate_nugget_scores(record["qid"], record["nuggets"])
        assert mine[record["run_id"], record["qid"]] == (
            m.strict_vital_score, m.strict_all_score, m.vital_score, m.all_score)


def timed(code: str) -> np.ndarray:
    """(reading, scoring) seconds of one fresh process (imports not counted)."""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return np.array([float(v) for v in out.strip().splitlines()[-1].split()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--topics", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "assignments.jsonl"
        nuggets = make_data(path, args.runs, args.topics)
        check_equal(path)
        print(f"{args.runs * args.topics:,} answers, {nuggets:,} nuggets: equal scores")
        best = {"irmetrics": np.full(2, np.inf), "nuggetizer": np.full(2, np.inf)}
        for _ in range(args.repeat):
            best["irmetrics"] = np.minimum(best["irmetrics"], timed(
                IRMETRICS.format(root=str(ROOT), path=str(path))))
            best["nuggetizer"] = np.minimum(best["nuggetizer"], timed(
                NUGGETIZER.format(path=str(path))))
        print(f"{'':<11} {'reading':>9} {'scoring':>9}")
        for name, (read, score) in best.items():
            print(f"{name:<11} {read:8.3f}s {score:8.3f}s")
        ratio = best["nuggetizer"] / best["irmetrics"]
        print(f"nuggetizer / irmetrics: reading {ratio[0]:.2f}, scoring {ratio[1]:.2f}")


if __name__ == "__main__":
    main()
