#!/usr/bin/env python
"""Wall time and peak RSS of ``irmetrics eval`` as the run grows: bounded memory.

    python benchmarks/bench_scale.py [--sizes 1000 10000 100000] [--million-depth 100]
                                     [--root PATH] [--repeat 1] [--json out.json]

Every measurement is a fresh ``python -m irmetrics eval`` process (stdout to /dev/null);
its wall time and peak RSS come from ``os.wait4`` on that child alone. The measures are
those of ``bench_end_to_end.py``: map P.10 recall.1000 recip_rank ndcg ndcg_cut.10.

Inputs, generated once from a seed and streamed to disk (never held in memory):

* ``--sizes``: ``generate.py`` data (1,000 docs per query, 150-400 judgments per query,
  ties, unsorted blocks; the files of ``bench_end_to_end.py --scaling``), in
  ``data/scale-N/``. 100,000 queries are 96M run lines (5 GB) and 27M judgments (1 GB).
* ``--million-depth D``: 1,000,000 queries x D docs (default 100: 100M lines, 3.5 GB)
  from :func:`synthetic`, with 20 judgments per query, in ``data/million-D/``: the
  run's length like the 100k case, ten times the queries. 1M x 1,000 docs would be
  1e9 lines (about 35 GB of text); its time is projected from the measured throughput.

``--root`` runs another checkout's code (``cwd`` is that root, so ``python -m
irmetrics`` imports it first): an A/B against main is ``--root path/to/a/checkout/of/main``.
This is a benchmark, not a test: it asserts nothing about timings.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
MEASURES = ["map", "P.10", "recall.1000", "recip_rank", "ndcg", "ndcg_cut.10"]
MIB = 1 << 20
SYNTHETIC_JUDGED = 20
SYNTHETIC_BLOCK = 10_000  # queries per generated block


def generated(queries: int, seed: int) -> Path:
    """``data/scale-N`` from generate.py (made once; reused when its meta matches)."""
    out = BENCH_DIR / "data" / f"scale-{queries}"
    meta = out / "meta.json"
    if meta.exists():
        info = json.loads(meta.read_text())
        if info.get("queries") == queries and info.get("seed") == seed:
            return out
    sys.path.insert(0, str(BENCH_DIR))
    from generate import generate

    generate(out, queries=queries, depth=1000, seed=seed)
    return out


def synthetic(out: Path, queries: int, depth: int, seed: int,
              judged: int = SYNTHETIC_JUDGED) -> Path:
    """``queries`` x ``depth`` run lines (scores with 3 decimals: many ties) and
    ``judged`` graded judgments per query (every ``depth // judged``-th ranked doc),
    written block by block; reused when ``meta.json`` matches."""
    import numpy as np
    import polars as pl

    meta = {"queries": queries, "depth": depth, "seed": seed, "judged": judged}
    out = Path(out)
    if (out / "meta.json").exists() and \
            json.loads((out / "meta.json").read_text()).items() >= meta.items():
        return out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with open(out / "run.txt", "wb") as run_fh, open(out / "qrels.txt", "wb") as qrels_fh:
        for block, lo in enumerate(range(0, queries, SYNTHETIC_BLOCK)):
            rng = np.random.default_rng([seed, block])
            n = min(SYNTHETIC_BLOCK, queries - lo)
            qids = np.repeat(np.arange(lo, lo + n), depth)
            # distinct docs inside a query: base + k * (a prime coprime to the collection)
            base = rng.integers(0, 10_000_000, n)
            docs = (np.repeat(base, depth) + np.tile(np.arange(depth), n) * 104_729) \
                % 10_000_000
            scores = -np.sort(-rng.integers(0, 1000, (n, depth)), axis=1).ravel() / 1000
            qid_text = pl.Series(qids).cast(pl.String)
            doc_text = "D" + pl.Series(docs).cast(pl.String)
            pl.DataFrame({"q": qid_text, "i": "Q0", "d": doc_text,
                          "r": np.tile(np.arange(1, depth + 1), n), "s": scores,
                          "t": "synth"}).write_csv(run_fh, separator=" ", include_header=False)
            step = max(depth // judged, 1)
            picked = (np.arange(n)[:, None] * depth + np.arange(0, depth, step)[None, :judged])
            picked = picked.ravel()
            pl.DataFrame({"q": qid_text.gather(picked), "i": "0", "d": doc_text.gather(picked),
                          "l": rng.integers(0, 4, picked.size)}).sort("q", maintain_order=True) \
                .write_csv(qrels_fh, separator=" ", include_header=False)
    meta["generation_seconds"] = round(time.perf_counter() - t0, 1)
    meta["run_bytes"] = (out / "run.txt").stat().st_size
    meta["qrels_bytes"] = (out / "qrels.txt").stat().st_size
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return out


def in_child(function: str, *args) -> Path:
    """``function(*args)`` of this module run in a child process: a child's peak RSS
    counts its parent's memory at the fork, so this process must stay small."""
    code = (f"import sys; from pathlib import Path; sys.path.insert(0, {str(BENCH_DIR)!r}); "
            f"import bench_scale; print(bench_scale.{function}"
            f"(*{[str(a) if isinstance(a, Path) else a for a in args]!r}))")
    done = subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE,
                          text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def count_lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            n += chunk.count(b"\n")
    return n


def run_child(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """``(wall seconds, peak RSS MiB, exit status)`` of one child process."""
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        child = subprocess.Popen(argv, cwd=cwd, stdout=devnull, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        err = child.stderr.read().decode(errors="replace")
    if child.returncode:
        sys.stderr.write(err)
    rss = usage.ru_maxrss / MIB if sys.platform == "darwin" else usage.ru_maxrss / 1024
    return wall, rss, child.returncode


def measure(data: Path, root: Path, repeat: int) -> dict:
    argv = [sys.executable, "-m", "irmetrics", "eval"]
    for m in MEASURES:
        argv += ["-m", m]
    argv += [str(data / "qrels.txt"), str(data / "run.txt")]
    runs = [run_child(argv, root) for _ in range(repeat)]
    walls = sorted(w for w, _, _ in runs)
    return {"wall_s": walls[len(walls) // 2], "peak_rss_mib": max(r for _, r, _ in runs),
            "status": max(s for _, _, s in runs)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 10_000, 100_000])
    ap.add_argument("--million-depth", type=int, default=100,
                    help="docs per query of the 1M-query case; 0 skips it")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--root", type=Path, default=REPO_ROOT,
                    help="checkout whose irmetrics runs (default: this one)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)

    cases = [(n, 1000, in_child("generated", n, args.seed)) for n in args.sizes]
    if args.million_depth:
        cases.append((1_000_000, args.million_depth, in_child(
            "synthetic", BENCH_DIR / "data" / f"million-{args.million_depth}", 1_000_000,
            args.million_depth, args.seed)))
    startup = min(run_child([sys.executable, "-c", "import irmetrics"], args.root)[0]
                  for _ in range(3))
    print(f"# {args.root}; load average {os.getloadavg()[0]:.1f}; startup {startup:.2f} s")
    print("| queries | docs/query | run lines | qrels lines | wall s | peak RSS MiB |"
          " (wall - startup) s per M lines |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for queries, depth, data in cases:
        lines = count_lines(data / "run.txt")
        qrels_lines = count_lines(data / "qrels.txt")
        result = measure(data, args.root, args.repeat)
        per_m = (result["wall_s"] - startup) / (lines / 1e6)
        rows.append({"queries": queries, "depth": depth, "run_lines": lines,
                     "qrels_lines": qrels_lines, "startup_s": startup,
                     "s_per_m_lines": per_m, **result})
        flag = "" if result["status"] == 0 else f" (exit {result['status']})"
        print(f"| {queries:,} | {depth:,} | {lines:,} | {qrels_lines:,} |"
              f" {result['wall_s']:.2f}{flag} | {result['peak_rss_mib']:,.0f} | {per_m:.3f} |",
              flush=True)
    per_m = [r["s_per_m_lines"] for r in rows if r["run_lines"] >= 5e6]
    if per_m:
        projected = max(per_m) * 1000 + startup
        print(f"# 1M queries x 1,000 docs (1e9 lines) at the slowest measured rate:"
              f" about {projected / 60:.0f} min")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
