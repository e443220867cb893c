"""Equality checks of the device road on a real device (issues 24 and 25).

CI has no GPU, so its tests run the device road on CPU tensors (``backend="torch"``).
This script runs the same comparisons on any torch device, a GPU included, with
seeded random inputs full of ties:

* ``embeddings``  ``from_embeddings`` on device tensors (float16, bfloat16, float32,
                  float64; duplicate rows, scaled copies, integer coordinates, huge
                  offsets; k beyond the gallery; self and separate galleries; TF32
                  products allowed and not) against the numpy road on the same
                  values: the same run and qrels, bit for bit;
* ``matrix``      ``from_matrix`` on a device score matrix with tied scores and
                  ragged lengths, against the numpy road, bit for bit;
* ``flat``        ``from_flat`` on device tensors, against the numpy road, bit for bit;
* ``torchmetrics`` every irmetrics Metric class and functional form against
                  torchmetrics itself on the same device and inputs (tied predictions,
                  logits, graded and negative targets, all-negative and all-positive
                  queries, every ``empty_target_action``, ``top_k``/``max_k``,
                  ``max_fpr``, ``ignore_index``, several batches, long inputs that take
                  the batched roads): the EXACT bits (``float.hex`` of every value,
                  with dtype, shape and device);
* ``fractional``  nDCG with fractional float targets, bits as above. torchmetrics sums
                  them with ``scatter_add_``, whose CUDA kernel adds with atomics in no
                  fixed order: there its own bits can vary from run to run, so a
                  difference in this case alone on CUDA is expected, not a bug.

    python benchmarks/check_device.py [--device cuda] [--cases ...] [--rounds 30] [--seed 0]
    python benchmarks/check_device.py --cases torchmetrics,fractional   # the bits only

Without a GPU the same script checks the torch face's bits on CPU (``--device cpu``).

Exit status 1 if any comparison differs; every difference is printed.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

DTYPES = ("float16", "bfloat16", "float32", "float64")
METRICS = ("cosine", "dot", "euclidean")


def covered():
    """``(classes, functions)``: every torchmetrics retrieval name the drop-in covers."""
    from irmetrics.compat import torchmetrics as ours

    return ([n for n in ours.__all__ if n.startswith("Retrieval")],
            [n for n in ours.__all__ if n.startswith("retrieval_")])


def frames_equal(a, b) -> bool:
    """Two polars frames with equal columns, dtypes and values (float bits included)."""
    if a.columns != b.columns or a.dtypes != b.dtypes or a.height != b.height:
        return False
    for name in a.columns:
        x, y = a[name].to_numpy(), b[name].to_numpy()
        same = (np.array_equal(x.view(np.int64), y.view(np.int64)) if x.dtype.kind == "f"
                else np.array_equal(x, y))
        if not same:
            return False
    return True


def same_pair(want, got) -> bool:
    (q1, r1), (q2, r2) = want, got
    return frames_equal(r1.df, r2.df) and frames_equal(q1.df, q2.df)


def tied_embeddings(torch, rng, n, dim, dtype):
    """Rows with exact ties (duplicates, scaled copies), integer or normal values, offsets."""
    kind = rng.integers(3)
    if kind == 0:
        x = rng.integers(-2, 3, size=(n, dim)).astype(np.float64)
    elif kind == 1:
        x = rng.standard_normal((n, dim))
    else:
        x = rng.integers(-2, 3, size=(n, dim)) + 1e-6 * rng.standard_normal((n, dim))
    for _ in range(int(rng.integers(0, n // 2 + 1))):
        x[rng.integers(n)] = x[rng.integers(n)] * rng.choice([1.0, 2.0, 0.5])
    huge = -1e3 if dtype == "float16" else -1e7
    x = x + rng.choice([0.0, 0.0, 1.0, 1e3, huge])
    return torch.from_numpy(x).to(getattr(torch, dtype))


def check_embeddings(torch, device, rng, rounds, report):
    from irmetrics.adapters import from_embeddings

    for round_ in range(rounds):
        dtype = DTYPES[round_ % len(DTYPES)]
        metric = METRICS[(round_ // len(DTYPES)) % len(METRICS)]
        n, dim = int(rng.integers(2, 400)), int(rng.integers(1, 40))
        x = tied_embeddings(torch, rng, n, dim, dtype)
        if metric == "cosine" and not bool((x.double().norm(dim=1) > 0).all()):
            continue
        labels = rng.integers(0, int(rng.integers(1, 20)), n)
        k = int(rng.choice([1, 5, 20, n + 3]))
        opts = {"k": k, "metric": metric, "exclude_self": bool(rng.integers(2)),
                "chunk_size": rng.choice([None, 7])}
        for precision in ("highest", "high"):
            torch.set_float32_matmul_precision(precision)
            want = from_embeddings(x, labels, backend="numpy", **opts)
            got = from_embeddings(x.to(device), labels, backend="torch", **opts)
            report("embeddings", f"{dtype} {metric} n={n} d={dim} {opts} {precision}",
                   same_pair(want, got))
        torch.set_float32_matmul_precision("highest")
        # a separate gallery
        m = int(rng.integers(1, 300))
        g = tied_embeddings(torch, rng, m, dim, dtype)
        if metric == "cosine" and not bool((g.double().norm(dim=1) > 0).all()):
            continue
        g_labels = rng.integers(0, 20, m)
        want = from_embeddings(x, labels, g, g_labels, k=k, metric=metric, backend="numpy")
        # Both on the device; or one side on the host (moved to the other's device).
        where = ("both", "queries", "gallery")[round_ % 3]
        q_in = x if where == "gallery" else x.to(device)
        g_in = g if where == "queries" else g.to(device)
        got = from_embeddings(q_in, labels, g_in, g_labels, k=k, metric=metric, backend="torch")
        report("embeddings", f"gallery {dtype} {metric} n={n} m={m} d={dim} k={k} "
               f"on device: {where}", same_pair(want, got))


def check_matrix(torch, device, rng, rounds, report):
    from irmetrics.adapters import from_matrix

    for _ in range(rounds):
        rows, cols = int(rng.integers(1, 300)), int(rng.integers(1, 3000))
        levels = int(rng.choice([2, 5, 100, 10**6]))
        scores = np.floor(rng.random((rows, cols)) * levels) / levels
        scores = torch.from_numpy(scores).to(getattr(torch, str(rng.choice(["float32",
                                                                             "float64"]))))
        labels = torch.from_numpy(rng.integers(0, 3, (rows, cols)))
        k = int(rng.choice([1, 10, 100, cols + 5]))
        want = from_matrix(scores, labels, k=k, backend="numpy")
        got = from_matrix(scores.to(device), labels.to(device), k=k, backend="torch")
        report("matrix", f"{rows}x{cols} levels={levels} k={k}", same_pair(want, got))


def check_flat(torch, device, rng, rounds, report):
    from irmetrics.adapters import from_flat

    for _ in range(rounds):
        n = int(rng.integers(1, 20000))
        queries = int(rng.integers(1, 400))
        levels = int(rng.choice([1, 3, 50, 10**6]))
        preds = torch.from_numpy((np.floor(rng.random(n) * levels) / levels).astype(np.float32))
        target = torch.from_numpy(rng.integers(0, 3, n))
        indexes = torch.from_numpy(rng.integers(0, queries, n))
        want = from_flat(preds, target, indexes, backend="numpy")
        got = from_flat(preds.to(device), target.to(device), indexes.to(device), backend="torch")
        report("flat", f"n={n} queries={queries} levels={levels}", same_pair(want, got))


def class_options(name, rng):
    kwargs = {"empty_target_action": str(rng.choice(["neg", "pos", "skip"]))}
    if rng.integers(4) == 0:
        kwargs["ignore_index"] = -100
    if name in ("RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"):
        kwargs["max_k"] = [None, 1, 3, 10][rng.integers(4)]
        kwargs["adaptive_k"] = bool(rng.integers(2))
        if name == "RetrievalRecallAtFixedPrecision":
            kwargs["min_precision"] = float(rng.choice([0.0, 0.3, 0.5]))
    elif name != "RetrievalRPrecision":
        kwargs["top_k"] = [None, 1, 2, 4, 10][rng.integers(5)]
    if name == "RetrievalPrecision":
        kwargs["adaptive_k"] = bool(rng.integers(2))
    if name == "RetrievalAUROC":
        kwargs["max_fpr"] = [None, 0.1, 0.5, 0.9][rng.integers(4)]
    return kwargs


def bits(torch, value):
    """Every float of a result as ``float.hex`` (sign of zero included), with its dtype,
    shape and device; tuples part by part."""
    if isinstance(value, tuple):
        return tuple(bits(torch, part) for part in value)
    if not isinstance(value, torch.Tensor):
        return (type(value).__name__, repr(value))
    return (str(value.dtype), tuple(value.shape), str(value.device),
            tuple(float(x).hex() for x in value.detach().cpu().reshape(-1).tolist()))


def same_bits(torch, a, b) -> bool:
    return bits(torch, a) == bits(torch, b)


def differing(torch, a, b) -> str:
    """Both results as hex, shortened, for the report."""
    return f"torchmetrics {str(bits(torch, a))[:300]} irmetrics {str(bits(torch, b))[:300]}"


def tied_batches(torch, device, rng, name, long_input, fractional=False):
    if long_input:  # the batched roads: many queries of one length, or long queries
        per = int(rng.choice([20, 3000]))
        sizes = np.full(3000 if per < 100 else 4, per)
    else:
        sizes = rng.integers(1, int(rng.choice([4, 12, 40, 70])), int(rng.integers(1, 9)))
    indexes = np.repeat(rng.permutation(max(50, sizes.size))[:sizes.size], sizes)
    if rng.integers(2):
        indexes = rng.permutation(indexes)
    levels = int(rng.choice([2, 3, 7, 1000]))
    if rng.integers(4) == 0:  # logits (AUROC squashes them with a sigmoid)
        preds = torch.tensor(rng.standard_normal(indexes.size) * rng.choice([1, 10, 40]),
                             dtype=torch.float32)
    else:
        preds = torch.tensor(rng.integers(-1, levels, indexes.size) / levels, dtype=torch.float32)
    low = -1 if name == "RetrievalNormalizedDCG" else 0
    target = torch.tensor(rng.integers(low, 4 if low else 2, indexes.size))
    if fractional:
        target = torch.tensor(rng.random(indexes.size) * rng.choice([1, 7]), dtype=torch.float32)
    elif low == 0 and rng.integers(3) == 0:  # all-negative and all-positive queries
        kind = torch.from_numpy(rng.integers(0, 3, int(indexes.max()) + 1)[indexes])
        target = torch.where(kind == 1, 0, torch.where(kind == 2, 1, target))
    if not fractional and rng.integers(5) == 0:  # entries ``ignore_index=-100`` drops
        target[torch.from_numpy(rng.random(indexes.size) < 0.1)] = -100
    cuts = np.array_split(np.arange(indexes.size), int(rng.integers(1, 4)))
    return [(preds[c].to(device), target[c].to(device), torch.tensor(indexes[c]).to(device))
            for c in cuts if c.size]


def compare_classes(torch, device, names, batch_maker, kwargs_maker, case, report):
    """Each Metric class of ``names`` fed the same batches, torchmetrics' and ours."""
    import torchmetrics.retrieval as ref_classes

    from irmetrics.compat import torchmetrics as ours

    for name in names:
        batches = batch_maker(name)
        kwargs = kwargs_maker(name)
        if "ignore_index" not in kwargs:  # the -100 entries become ordinary labels
            low = -1 if name == "RetrievalNormalizedDCG" else 0
            batches = [(p, t.clamp(min=low), i) for p, t, i in batches]
        results = []
        for library in (ref_classes, ours):
            try:
                metric = getattr(library, name)(**kwargs).to(device)
                for preds, target, indexes in batches:
                    metric.update(preds, target, indexes=indexes)
                results.append(metric.compute())
            except (ValueError, RuntimeError) as err:  # both must refuse alike
                results.append(("raises", str(err)[:60]))
        both_refuse = all(isinstance(r, tuple) and r and r[0] == "raises" for r in results)
        ok = both_refuse or same_bits(torch, *results)
        report(case, f"{name} {kwargs} {sum(len(b[0]) for b in batches)} entries", ok,
               None if ok else differing(torch, *results))


def check_torchmetrics(torch, device, rng, rounds, report):
    import warnings

    import torchmetrics.functional.retrieval as ref_functional

    from irmetrics.compat import torchmetrics as ours

    warnings.filterwarnings("ignore")  # torchmetrics warns on one-class ROC curves
    classes, functions = covered()
    for round_ in range(rounds):
        compare_classes(torch, device, classes,
                        lambda name: tied_batches(torch, device, rng, name,
                                                  long_input=round_ % 5 == 4),
                        lambda name: class_options(name, rng), "torchmetrics", report)
        for name in functions:
            n = int(rng.integers(1, 70 if round_ % 5 else 5000))
            levels = int(rng.choice([1, 2, 5, 1000]))
            if rng.integers(4) == 0:  # logits
                preds = torch.tensor(rng.standard_normal(n) * rng.choice([1, 10, 40]),
                                     dtype=torch.float32).to(device)
            else:
                preds = torch.tensor(rng.integers(-1, levels + 1, n) / levels,
                                     dtype=torch.float32).to(device)
            low = -1 if "dcg" in name else 0
            target = torch.tensor(rng.integers(low, 4 if low else 2, n)).to(device)
            k = [None, 1, 2, 5, 20][rng.integers(5)]
            kwargs = {} if name == "retrieval_r_precision" else (
                {"max_k": k} if name.endswith("curve") else {"top_k": k})
            if name == "retrieval_auroc":
                kwargs["max_fpr"] = [None, 0.1, 0.5, 0.9][rng.integers(4)]
            expected = getattr(ref_functional, name)(preds, target, **kwargs)
            got = getattr(ours, name)(preds, target, **kwargs)
            ok = same_bits(torch, expected, got)
            report("torchmetrics", f"{name} n={n} levels={levels} {kwargs}", ok,
                   None if ok else differing(torch, expected, got))


def check_fractional(torch, device, rng, rounds, report):
    """nDCG of fractional float targets (torchmetrics' scatter_add_ sums), bits."""
    import torchmetrics.functional.retrieval as ref_functional

    from irmetrics.compat import torchmetrics as ours

    for round_ in range(rounds):
        compare_classes(torch, device, ["RetrievalNormalizedDCG"],
                        lambda name: tied_batches(torch, device, rng, name,
                                                  long_input=round_ % 5 == 4, fractional=True),
                        lambda name: class_options(name, rng), "fractional", report)
        n = int(rng.integers(1, 300))
        preds = torch.tensor(rng.integers(0, int(rng.choice([2, 5, 1000])), n) / 7,
                             dtype=torch.float32).to(device)
        target = torch.tensor(rng.random(n) * 3, dtype=torch.float32).to(device)
        k = [None, 1, 5, 20][rng.integers(4)]
        expected = ref_functional.retrieval_normalized_dcg(preds, target, top_k=k)
        got = ours.retrieval_normalized_dcg(preds, target, top_k=k)
        ok = same_bits(torch, expected, got)
        report("fractional", f"retrieval_normalized_dcg top_k={k} n={n}", ok,
               None if ok else differing(torch, expected, got))


def main(argv=None) -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--cases", default="embeddings,matrix,flat,torchmetrics,fractional")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else str(device)
    print(f"device: {device} ({name}); torch {torch.__version__}", flush=True)
    counts = {}

    def report(case, what, ok, detail=None):
        passed, total = counts.get(case, (0, 0))
        counts[case] = (passed + bool(ok), total + 1)
        if not ok:
            print(f"DIFFERS [{case}] {what}" + (f": {detail}" if detail is not None else ""),
                  flush=True)

    checks = {"embeddings": check_embeddings, "matrix": check_matrix, "flat": check_flat,
              "torchmetrics": check_torchmetrics, "fractional": check_fractional}
    for case in args.cases.split(","):
        start = time.perf_counter()
        checks[case](torch, device, np.random.default_rng([args.seed, len(case)]), args.rounds,
                     report)
        passed, total = counts.get(case, (0, 0))
        print(f"{case}: {passed}/{total} equal ({time.perf_counter() - start:.1f} s)",
              flush=True)
    return 0 if all(p == t for p, t in counts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
