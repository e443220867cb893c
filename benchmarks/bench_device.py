"""Benchmark: device tensors in, trec_eval-exact numbers out (issue 24).

Three cases, each timed on the numpy road (host) and on the device road, with an
equality check between them (the same run table and the same aggregates, bit for bit):

* ``embeddings``  N x D float32 embeddings (C classes), top-k cosine neighbours of every
                  embedding among the others, then map, P.1, recall.100, ndcg_cut.10:
                  ``from_embeddings`` (numpy road) vs ``from_embeddings`` on device tensors,
                  plus two references: torch alone (normalise, blocked matmul, ``topk``)
                  and torch's top-k lists fed to ``from_neighbours`` by label;
* ``matrix``      a Q x L float32 score matrix with labels, ``from_matrix(k=100)`` + map,
                  ndcg_cut.10, P.10, numpy road vs device road;
* ``flat``        Q x L flat predictions, ``from_flat`` + ndcg_cut.10 vs torchmetrics'
                  ``RetrievalNormalizedDCG(top_k=10)`` on the same device (agreement to
                  float32 precision: no ties in random float32 scores).

Every case's data is generated from ``--seed`` before the clock starts; device timings
synchronise the device. The two roads alternate (``--repeat`` rounds) and medians are
reported. Without a GPU: ``--device cpu --quick`` runs the device road on CPU tensors
(``backend="torch"``: the code a GPU runs) at small sizes.

    python benchmarks/bench_device.py [--device cuda] [--quick] [--repeat 3]
                                      [--cases embeddings,matrix,flat] [--no-numpy]
                                      [--profile N] [--host-rounds R]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

FULL = {"n": 40_000, "dim": 512, "classes": 8_000, "k": 100, "matrix": (10_000, 100_000),
        "flat": (20_000, 1_000)}
QUICK = {"n": 4_000, "dim": 64, "classes": 800, "k": 100, "matrix": (1_000, 10_000),
         "flat": (2_000, 100)}
#: Functions shown per profile (--profile N; 0: no profile).
PROFILE = 0
#: Rounds that run the numpy road too (--host-rounds).
HOST_ROUNDS = 1 << 30
EMB_MEASURES = ["map", "P.1", "recall.100", "ndcg_cut.10"]
MATRIX_MEASURES = ["map", "ndcg_cut.10", "P.10"]


def timed(torch, device, fn):
    """``(seconds, result)`` of ``fn()`` with the device synchronised on both sides."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    out = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start, out


def alternate(torch, device, roads: dict, repeat: int):
    """Run the named roads one after another, ``repeat`` rounds: ``(times, last results)``;
    the numpy road only in the first ``HOST_ROUNDS`` rounds (it is slow)."""
    times, results = {name: [] for name in roads}, {}
    for round_ in range(repeat):
        for name, road in roads.items():
            if name == "numpy" and round_ >= HOST_ROUNDS:
                continue
            seconds, results[name] = timed(torch, device, road)
            times[name].append(seconds)
    return times, results


def profile(torch, device, label, fn, top):
    """Print the ``top`` functions by cumulative time of one more run of ``fn``."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    timed(torch, device, fn)
    profiler.disable()
    print(f"\n### profile: {label}")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def same_pair(a, b) -> bool:
    (q1, r1), (q2, r2) = a, b
    return r1.df.equals(r2.df) and np.array_equal(q1._judgments.rel_hist, q2._judgments.rel_hist)


def median_row(name, times, note=""):
    return name, statistics.median(times), min(times), note


def case_embeddings(torch, device, size, repeat, numpy_road, seed):
    import irmetrics as irm
    from irmetrics.adapters import from_embeddings, from_neighbours

    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((size["classes"], size["dim"])).astype(np.float32)
    labels = rng.integers(0, size["classes"], size["n"])
    host = centres[labels] + rng.standard_normal((size["n"], size["dim"]), dtype=np.float32)
    tensor = torch.from_numpy(host).to(device)
    k = size["k"]

    def numpy_road_fn():
        q, r = from_embeddings(host, labels, k=k, backend="numpy")
        return (q, r), irm.evaluate(q, r, EMB_MEASURES).aggregate()

    def device_road():
        q, r = from_embeddings(tensor, labels, k=k, backend="torch")
        return (q, r), irm.evaluate(q, r, EMB_MEASURES).aggregate()

    def torch_topk():
        x = torch.nn.functional.normalize(tensor, dim=1)
        parts = []
        for start in range(0, len(x), 8192):
            sims = x[start:start + 8192] @ x.T
            own = torch.arange(start, min(start + 8192, len(x)), device=device)
            sims[own - start, own] = -float("inf")
            parts.append(torch.topk(sims, k, dim=1).indices)
        return torch.cat(parts)

    def topk_then_neighbours():
        ids = torch_topk().cpu().numpy()
        q, r = from_neighbours(ids, query_labels=labels, gallery_labels=labels)
        return irm.evaluate(q, r, EMB_MEASURES).aggregate()

    roads = {"numpy": numpy_road_fn} if numpy_road else {}
    roads.update(device=device_road, topk=torch_topk, nb=topk_then_neighbours)
    times, results = alternate(torch, device, roads, repeat)
    if PROFILE:
        profile(torch, device, "embeddings, device road", device_road, PROFILE)
    equal = same_pair(results["numpy"][0], results["device"][0]) if numpy_road else None
    rows = [median_row("from_embeddings + evaluate, numpy road", times["numpy"])] \
        if numpy_road else []
    rows += [median_row("from_embeddings + evaluate, device road", times["device"],
                        f"equal to numpy road: {equal}"),
             median_row("torch alone: normalise, blocked matmul, topk", times["topk"]),
             median_row("torch topk + from_neighbours(labels) + evaluate", times["nb"])]
    return rows, results["device"][1]


def case_matrix(torch, device, size, repeat, numpy_road, seed):
    import irmetrics as irm
    from irmetrics.adapters import from_matrix

    n_rows, n_cols = size["matrix"]
    gen = torch.Generator(device=device).manual_seed(seed)
    scores = torch.rand((n_rows, n_cols), generator=gen, device=device)
    labels = (torch.rand((n_rows, n_cols), generator=gen, device=device) < 0.01).to(torch.int8)

    def device_road():
        q, r = from_matrix(scores, labels, k=100, backend="torch")
        return (q, r), irm.evaluate(q, r, MATRIX_MEASURES).aggregate()

    host = (scores.cpu().numpy(), labels.cpu().numpy()) if numpy_road else None

    def numpy_road_fn():
        q, r = from_matrix(host[0], host[1], k=100, backend="numpy")
        return (q, r), irm.evaluate(q, r, MATRIX_MEASURES).aggregate()

    roads = {"numpy": numpy_road_fn} if numpy_road else {}
    times, results = alternate(torch, device, {**roads, "device": device_road}, repeat)
    if PROFILE:
        profile(torch, device, "matrix, device road", device_road, PROFILE)
    equal = same_pair(results["numpy"][0], results["device"][0]) if numpy_road else None
    rows = [median_row(f"from_matrix(k=100) {n_rows:,} x {n_cols:,}, numpy road",
                       times["numpy"])] if numpy_road else []
    rows.append(median_row(f"from_matrix(k=100) {n_rows:,} x {n_cols:,}, device road",
                           times["device"], f"equal to numpy road: {equal}"))
    return rows, results["device"][1]


def case_flat(torch, device, size, repeat, numpy_road, seed):
    import irmetrics as irm
    from irmetrics.adapters import from_flat

    n_q, per = size["flat"]
    gen = torch.Generator(device=device).manual_seed(seed)
    preds = torch.rand(n_q * per, generator=gen, device=device)
    target = (torch.rand(n_q * per, generator=gen, device=device) < 0.05).to(torch.int64)
    indexes = torch.arange(n_q, device=device).repeat_interleave(per)
    perm = torch.randperm(n_q * per, generator=gen, device=device)
    preds, target, indexes = preds[perm], target[perm], indexes[perm]

    def device_road():
        q, r = from_flat(preds, target, indexes, backend="torch")
        return (q, r), irm.evaluate(q, r, ["ndcg_cut.10"]).aggregate()["ndcg_cut_10"]

    host = [a.cpu().numpy() for a in (preds, target, indexes)] if numpy_road else None

    def numpy_road_fn():
        q, r = from_flat(*host, backend="numpy")
        return (q, r), irm.evaluate(q, r, ["ndcg_cut.10"]).aggregate()["ndcg_cut_10"]

    def torchmetrics_road():
        from torchmetrics.retrieval import RetrievalNormalizedDCG

        metric = RetrievalNormalizedDCG(top_k=10).to(device)
        return float(metric(preds, target, indexes=indexes))

    try:
        import torchmetrics  # noqa: F401
        have_tm = True
    except ImportError:
        have_tm = False
    roads = {"numpy": numpy_road_fn} if numpy_road else {}
    roads["device"] = device_road
    if have_tm:
        roads["tm"] = torchmetrics_road
    times, results = alternate(torch, device, roads, repeat)
    if PROFILE:
        profile(torch, device, "flat, device road", device_road, PROFILE)
    equal = same_pair(results["numpy"][0], results["device"][0]) if numpy_road else None
    rows = [median_row(f"from_flat + ndcg_cut.10 {n_q:,} x {per:,}, numpy road",
                       times["numpy"])] if numpy_road else []
    rows.append(median_row(f"from_flat + ndcg_cut.10 {n_q:,} x {per:,}, device road",
                           times["device"], f"equal to numpy road: {equal}"))
    if have_tm:
        agree = abs(results["tm"] - results["device"][1]) < 1e-6
        rows.append(median_row("torchmetrics RetrievalNormalizedDCG(top_k=10)",
                               times["tm"],
                               f"{results['tm']:.7f} vs {results['device'][1]:.7f}: "
                               f"agree {agree}"))
    return rows, results["device"][1]


def main(argv=None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="small sizes (CPU runs)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default="embeddings,matrix,flat")
    parser.add_argument("--no-numpy", action="store_true",
                        help="skip the numpy road (and the equality check)")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="after timing, profile one more device-road run per case and "
                             "print its N most expensive functions")
    parser.add_argument("--host-rounds", type=int, default=None, metavar="R",
                        help="run the (slow) numpy road in the first R rounds only")
    args = parser.parse_args(argv)
    global PROFILE, HOST_ROUNDS
    PROFILE = args.profile
    if args.host_rounds is not None:
        HOST_ROUNDS = args.host_rounds
    device = torch.device(args.device)
    size = QUICK if args.quick else FULL
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU tensors"
    print(f"device: {device} ({name}); torch {torch.__version__}; sizes: {size}; "
          f"median of {args.repeat}")
    cases = {"embeddings": case_embeddings, "matrix": case_matrix, "flat": case_flat}
    for case in args.cases.split(","):
        rows, value = cases[case](torch, device, size, args.repeat, not args.no_numpy,
                                  args.seed)
        print(f"\n## {case}: {value}")
        print("| road | median s | min s | note |\n|---|---|---|---|")
        for label, med, low, note in rows:
            print(f"| {label} | {med:.3f} | {low:.3f} | {note} |")


if __name__ == "__main__":
    main()
