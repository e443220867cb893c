"""Benchmark: torchmetrics 1.9.0's retrieval Metrics vs irmetrics' drop-in Metrics.

Both are ``torchmetrics.Metric`` objects fed the same flat tensors on the same device:
``update`` in ``--batches`` batches (queries kept whole, in order, as a dataloader
gives them), then ``compute``. The two libraries alternate inside one process for
every metric and repeat, so a loaded machine slows both alike; the table shows the
best of ``--repeat`` runs per side and the ratio. Results must agree within float32
rounding (checked; a mismatch is reported and makes the exit status 1).

Data (seeded, generated on the host, then moved): ``queries x docs`` predictions
uniform in [0, 1) as float32 (``--levels L`` rounds them to L values: heavy ties),
relevance 1 with probability ``--rate``, query indexes ``0..queries-1`` repeated.

    python benchmarks/bench_torchmetrics.py [--device cpu|cuda] [--shapes 10000x1000,40000x100]
        [--metrics map,mrr,ndcg@10,p@10,r@10,hit@10] [--batches 10] [--repeat 2]
        [--rate 0.05] [--levels 0] [--seed 0] [--threads 0] [--json out.json]

Needs torch and torchmetrics (``pip install irmetrics[torchmetrics]``). ``--device
cuda`` runs the same comparison on a GPU (synchronising before every clock read).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

METRICS = {  # name -> (class, constructor arguments)
    "map": ("RetrievalMAP", {}),
    "mrr": ("RetrievalMRR", {}),
    "ndcg@10": ("RetrievalNormalizedDCG", {"top_k": 10}),
    "p@10": ("RetrievalPrecision", {"top_k": 10}),
    "r@10": ("RetrievalRecall", {"top_k": 10}),
    "hit@10": ("RetrievalHitRate", {"top_k": 10}),
    "map@10": ("RetrievalMAP", {"top_k": 10}),
    "rprec": ("RetrievalRPrecision", {}),
    "auroc": ("RetrievalAUROC", {}),
    "fallout@10": ("RetrievalFallOut", {"top_k": 10}),
}


def make_data(queries: int, docs: int, rate: float, levels: int, seed: int, device):
    import numpy as np
    import torch

    rng = np.random.default_rng(seed)
    preds = rng.random(queries * docs, dtype=np.float32)
    if levels:
        preds = (np.floor(preds * levels) / levels).astype(np.float32)
    target = (rng.random(queries * docs) < rate).astype(np.int64)
    indexes = np.repeat(np.arange(queries, dtype=np.int64), docs)
    return tuple(torch.from_numpy(a).to(device) for a in (preds, target, indexes))


def run_once(library, name: str, data, batches: int, sync):
    """``(update seconds, compute seconds, result)`` of one fresh metric."""
    import torch

    class_name, kwargs = METRICS[name]
    preds, target, indexes = data
    metric = getattr(library, class_name)(**kwargs).to(preds.device)
    bounds = torch.linspace(0, preds.numel(), batches + 1).long().tolist()
    sync()
    start = time.perf_counter()
    for lo, hi in itertools.pairwise(bounds):
        metric.update(preds[lo:hi], target[lo:hi], indexes=indexes[lo:hi])
    sync()
    updated = time.perf_counter()
    result = metric.compute()
    sync()
    done = time.perf_counter()
    return updated - start, done - updated, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--shapes", default="10000x1000,40000x100")
    parser.add_argument("--metrics", default="map,mrr,ndcg@10,p@10,r@10,hit@10")
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--levels", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0,
                        help="torch CPU threads (0: torch's default); 1 avoids OpenMP waits "
                             "on an oversubscribed machine")
    parser.add_argument("--json")
    args = parser.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    import torchmetrics
    import torchmetrics.retrieval as reference

    from irmetrics.compat.torchmetrics import metrics as ours

    device = torch.device(args.device)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else \
        f"CPU, {torch.get_num_threads()} torch threads"
    print(f"torch {torch.__version__}, torchmetrics {torchmetrics.__version__}, {where}")
    names = args.metrics.split(",")
    # Warm-up on a small input (lazy initialisation, probes, kernels' first launch).
    warm = make_data(40, 1000, args.rate, args.levels, args.seed, device)
    for name in names:
        for library in (reference, ours):
            run_once(library, name, warm, 2, sync)

    rows, mismatches = [], 0
    header = (f"{'shape':>12} {'metric':>8} | {'torchmetrics update':>19} {'compute':>8} | "
              f"{'irmetrics update':>16} {'compute':>8} | {'compute x':>9} {'total x':>7}")
    print(header)
    for shape in args.shapes.split(","):
        queries, docs = map(int, shape.split("x"))
        data = make_data(queries, docs, args.rate, args.levels, args.seed, device)
        for name in names:
            best = {"torchmetrics": [float("inf")] * 2, "irmetrics": [float("inf")] * 2}
            results = {}
            for _ in range(args.repeat):
                for label, library in (("torchmetrics", reference), ("irmetrics", ours)):
                    update, compute, results[label] = run_once(library, name, data, args.batches, sync)
                    best[label] = [min(best[label][0], update), min(best[label][1], compute)]
            agree = torch.allclose(results["torchmetrics"].double().cpu(),
                                   results["irmetrics"].double().cpu(), atol=2e-6, rtol=0)
            mismatches += not agree
            (tu, tc), (iu, ic) = best["torchmetrics"], best["irmetrics"]
            rows.append({"shape": shape, "metric": name, "device": str(device), "where": where,
                         "torchmetrics_update_s": tu, "torchmetrics_compute_s": tc,
                         "irmetrics_update_s": iu, "irmetrics_compute_s": ic,
                         "value": float(results["irmetrics"]), "agree": bool(agree)})
            print(f"{shape:>12} {name:>8} | {tu:>18.3f}s {tc:>7.3f}s | {iu:>15.3f}s {ic:>7.3f}s | "
                  f"{tc / ic:>8.1f}x {(tu + tc) / (iu + ic):>6.1f}x" + ("" if agree else "  MISMATCH"),
                  flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
