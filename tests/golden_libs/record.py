"""Record the real libraries' outputs as goldens (inputs + outputs, JSON) under
fixtures/golden_libs/; tests/compat/test_compat_goldens.py replays them through irmetrics.compat.

Not a test (pytest does not collect it) and irmetrics is not imported: run it once inside
the real libraries' scratch virtualenvs (see tests/golden_libs/README.md for the recipes)::

    python tests/golden_libs/record.py torch    # torchmetrics 1.9.0, PML 2.9.0, OML 4.0.0,
                                                # pytorchltr 0.2.1 (torch 2.13 CPU venv)
    python tests/golden_libs/record.py tfsim    # tensorflow-similarity 0.17.1 (Python 3.10)

Each file is ``{"library", "version", "cases": [{"name", "kind", "init", "args",
"batches", "output"}]}``. Arrays are ``{"array": nested list, "dtype": str}``, ragged
per-query lists ``{"rows": [list, ...], "dtype": str}``, tuples ``{"tuple": [...]}``;
outputs are plain JSON (tensors as lists, dict keys as strings, NaN as NaN).
Inputs come from a seeded numpy generator; the cases deliberately include ties where
the original's order is defined, cutoffs beyond the lists, queries without positives
and the inputs of issue 16.
"""

from __future__ import annotations

import json
import math
import os
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "fixtures", "golden_libs")


def arr(values, dtype):
    return {"array": np.asarray(values).astype(dtype).tolist(), "dtype": dtype}


def rows(values, dtype):
    return {"rows": [np.asarray(v).astype(dtype).tolist() for v in values], "dtype": dtype}


def tup(values):
    return {"tuple": list(values)}


def case(name, kind, *, init=None, args=None, batches=None):
    return {"name": name, "kind": kind, "init": init or {}, "args": args or {},
            "batches": batches or []}


# --------------------------------------------------------------------------- case lists

def distinct_scores(rng, n):
    """Scores without ties (the originals' order inside a tie is unspecified or random)."""
    return rng.permutation(n) / max(n, 1) + 0.01 * rng.random(n)


def torchmetrics_cases(rng):
    cases = []
    functional = ["retrieval_average_precision", "retrieval_reciprocal_rank",
                  "retrieval_precision", "retrieval_recall", "retrieval_hit_rate",
                  "retrieval_fall_out", "retrieval_r_precision", "retrieval_normalized_dcg",
                  "retrieval_auroc", "retrieval_precision_recall_curve"]
    for i in range(60):
        n = int(rng.integers(1, 9))
        # half the cases carry non-positive predictions (the 1.9 filter) and, for nDCG and
        # AUROC (which group ties), ties
        preds = distinct_scores(rng, n) - (0.5 if i % 2 else 0.0)
        target = rng.integers(0, 2, n)
        name = functional[i % len(functional)]
        args = {"preds": arr(preds, "float32"), "target": arr(target, "int64")}
        if name == "retrieval_normalized_dcg":
            args["target"] = arr(rng.integers(0, 4, n), "int64")
            args["preds"] = arr(np.round(preds, 1), "float32")
        if name == "retrieval_auroc":
            args["preds"] = arr(np.round(preds, 1), "float32")
            args["max_fpr"] = [None, 0.5][i % 2]
        if name not in ("retrieval_r_precision", "retrieval_precision_recall_curve"):
            args["top_k"] = [None, 1, 3, 10][i % 4]
        if name == "retrieval_precision":
            args["adaptive_k"] = bool(i % 3 == 0)
        if name == "retrieval_precision_recall_curve":
            args["max_k"] = [None, 2, 10][i % 3]
            args["adaptive_k"] = bool(i % 2)
        cases.append(case(name, "function", args=args))

    modules = ["RetrievalMAP", "RetrievalMRR", "RetrievalPrecision", "RetrievalRecall",
               "RetrievalHitRate", "RetrievalFallOut", "RetrievalRPrecision",
               "RetrievalNormalizedDCG", "RetrievalAUROC", "RetrievalPrecisionRecallCurve",
               "RetrievalRecallAtFixedPrecision"]
    options = [{}, {"compute_on_cpu": True, "dist_sync_on_step": False, "sync_on_compute": False,
                    "compute_with_cache": False}]
    for i in range(66):
        name = modules[i % len(modules)]
        init = dict(options[i % 2])
        if name not in ("RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"):
            init["empty_target_action"] = ["neg", "pos", "skip"][i % 3]
        if name not in ("RetrievalRPrecision", "RetrievalPrecisionRecallCurve",
                        "RetrievalRecallAtFixedPrecision"):
            init["top_k"] = [None, 2, 5][i % 3]
        if name == "RetrievalRecallAtFixedPrecision":
            init["min_precision"] = [0.0, 0.5, 0.8][i % 3]
            init["max_k"] = [None, 3][i % 2]
        if name in ("RetrievalMAP", "RetrievalMRR") and i % 4 == 0:
            init["aggregation"] = "median"
        batches = []
        for b in range(1 + i % 2):
            n = int(rng.integers(2, 16))
            preds = distinct_scores(rng, n) - (0.3 if i % 3 == 0 else 0.0)
            if name in ("RetrievalNormalizedDCG", "RetrievalAUROC"):
                preds = np.round(preds, 1)
            graded = name == "RetrievalNormalizedDCG"
            target = rng.integers(0, 3 if graded else 2, n)
            batches.append({"preds": arr(preds, "float32"), "target": arr(target, "int64"),
                            "indexes": arr(np.sort(rng.integers(0, 4, n)) + 10 * b, "int64")})
        cases.append(case(name, "update_compute", init=init, batches=batches))
    # issue 16: mean precision@7 exactly 1/2 (0.49999999999999994 in float64)
    hits = [2, 4, 4, 4]
    target = np.concatenate([[0] * (7 - h) + [1] * h for h in hits])
    batch = {"preds": arr(np.tile(np.linspace(0.9, 0.3, 7), 4), "float32"),
             "target": arr(target, "int64"), "indexes": arr(np.repeat(np.arange(4), 7), "int64")}
    for min_precision in (0.5, 0.51):
        cases.append(case("RetrievalRecallAtFixedPrecision", "update_compute",
                          init={"min_precision": min_precision}, batches=[batch]))
    # refused by the original (and by irmetrics): a keyword Metric does not know, a
    # non-bool Metric option, precision's top_k 0 (AP's top_k 0 means None in 1.9: irmetrics
    # refuses it, a documented difference)
    for name, init in (("RetrievalMAP", {"compute_on_gpu": True}),
                       ("RetrievalMAP", {"compute_on_cpu": "yes"}),
                       ("RetrievalPrecision", {"top_k": 0})):
        cases.append(case(name, "update_compute", init=init, batches=[batch]))
    return cases


def pml_cases(rng):
    cases = []
    for i in range(24):
        n, d = int(rng.integers(4, 30)), int(rng.integers(1, 5))
        x = rng.standard_normal((n, d))
        labels = rng.integers(0, [2, 4, 8][i % 3], n)
        init = {"k": [None, 1, 3, "max_bin_count"][i % 4],
                "avg_of_avgs": bool(i % 5 == 1), "return_per_class": bool(i % 5 == 2)}
        args = {"query": arr(x, "float32"), "query_labels": arr(labels, "int64")}
        if i % 3 == 1:  # a separate reference set (queries may have no match there)
            m = int(rng.integers(5, 30))
            args["reference"] = arr(rng.standard_normal((m, d)), "float32")
            args["reference_labels"] = arr(rng.integers(0, 5, m), "int64")
            if init["k"] is not None and init["k"] != "max_bin_count" and init["k"] > m:
                init["k"] = m
            if init["k"] is None:
                init["k"] = "max_bin_count"  # k = every reference could pad: not recorded
        elif i % 3 == 2:  # the reference starts with the queries
            extra = int(rng.integers(1, 10))
            ref = np.vstack([x, rng.standard_normal((extra, d))])
            args["reference"] = arr(ref, "float32")
            args["reference_labels"] = arr(np.concatenate([labels, rng.integers(0, 4, extra)]),
                                           "int64")
            args["ref_includes_query"] = True
        cases.append(case("AccuracyCalculator", "accuracy", init=init, args=args))
    # issue 16: max_bin_count over the query labels only; every query alone, per class
    ref = np.array([[0.0], [0.1], [5.0], [5.1], [5.2], [5.3]])
    cases.append(case("AccuracyCalculator", "accuracy", init={"k": "max_bin_count"}, args={
        "query": arr([[0.05], [2.58]], "float32"), "query_labels": arr([0, 0], "int64"),
        "reference": arr(ref, "float32"), "reference_labels": arr([0, 0, 7, 7, 7, 7], "int64")}))
    cases.append(case("AccuracyCalculator", "accuracy", init={"return_per_class": True}, args={
        "query": arr([[0.0], [1.0], [2.0]], "float32"), "query_labels": arr([4, 5, 6], "int64")}))
    cases.append(case("AccuracyCalculator", "accuracy",
                      init={"k": 2, "label_comparison_fn": "same_mod_10"}, args={
        "query": arr([[0.0], [0.1], [1.0], [1.1], [0.05]], "float32"),
        "query_labels": arr([0, 10, 1, 11, 20], "int64")}))
    # refused by the original: avg_of_avgs with return_per_class, k = 0
    for init in ({"avg_of_avgs": True, "return_per_class": True}, {"k": 0}):
        cases.append(case("AccuracyCalculator", "accuracy", init=init, args={
            "query": arr([[0.0], [1.0]], "float32"), "query_labels": arr([0, 0], "int64")}))
    return cases


def oml_cases(rng):
    cases = []
    for i in range(30):
        q = int(rng.integers(1, 6))
        tops = [rng.random(int(rng.integers(0 if i % 4 else 1, 9))) < 0.4 for _ in range(q)]
        n_gts = [int(t.sum() + rng.integers(0, 3)) for t in tops]
        top_k = tup([[1], [1, 3], [5, 20]][i % 3])
        name = ["calc_cmc", "calc_precision", "calc_map"][i % 3]
        cases.append(case(name, "function", args={"gt_tops": rows(tops, "bool"),
                                                 "n_gts": n_gts, "top_k": top_k}))
    for i in range(10):
        q = int(rng.integers(1, 6))
        retrieved = [rng.permutation(12)[: int(rng.integers(1, 8))] for _ in range(q)]
        gt = [rng.permutation(12)[: int(rng.integers(1, 5))] for _ in range(q)]
        cases.append(case("calc_retrieval_metrics", "function", args={
            "retrieved_ids": rows(retrieved, "int64"), "gt_ids": rows(gt, "int64"),
            "cmc_top_k": tup([1, 5]), "precision_top_k": tup([3]), "map_top_k": tup([2, 10]),
            "reduce": bool(i % 2), "verbose": False}))
    for i in range(8):
        pos = np.round(rng.random(int(rng.integers(1, 12))) * 2, 1)
        neg = np.round(rng.random(int(rng.integers(1, 12))) * 2 + 0.5, 1)
        cases.append(case("calc_fnmr_at_fmr", "function", args={
            "pos_dist": arr(pos, "float64"), "neg_dist": arr(neg, "float64"),
            "fmr_vals": tup([0.0, 0.1, 0.5, 1.0][: 1 + i % 4])}))
    for i in range(6):
        n, d = int(rng.integers(3, 12)), int(rng.integers(2, 8))
        cases.append(case("calc_pcf", "function", args={
            "embeddings": arr(rng.standard_normal((n, d)), "float32"),
            "pcf_variance": tup([0.5, 0.9])}))
    return cases


def pytorchltr_cases(rng):
    cases = []
    for i in range(18):
        b, length = int(rng.integers(1, 4)), int(rng.integers(1, 7))
        scores = np.stack([distinct_scores(rng, length) for _ in range(b)])
        relevance = rng.integers(0, 4, (b, length))
        # Full lists: pytorchltr orders the padding (masked to -inf) randomly among itself,
        # so values past n are not reproducible.
        n = np.full(b, length)
        name = ["ndcg", "dcg", "arp"][i % 3]
        args = {"scores": arr(scores, "float32"), "relevance": arr(relevance, "int64"),
                "n": arr(n, "int64")}  # k = 10 is beyond every list
        if name != "arp":
            args["k"] = [None, 1, 3, 10][i % 4]
            args["exp"] = bool(i % 2)
        cases.append(case(name, "function", args=args))
    return cases


def tfsim_cases(rng):
    cases = []
    issue_mask = {"query_labels": arr([1], "int32"), "match_mask": arr([[1, 0, 1, 1]], "bool")}
    for init in ({"k": 3}, {"k": 3, "r": {2: 5}}, {"k": 3, "r": {1: 0}},
                 {"k": 3, "drop_closest_lookup": True}, {"k": 4, "r": {1: 2}, "clip_at_r": True}):
        cases.append(case("MapAtK", "compute", init=init, args=issue_mask))
    for i in range(40):
        q, width = int(rng.integers(1, 7)), int(rng.integers(2, 7))
        labels = rng.integers(0, 3, q)
        mask = rng.random((q, width)) < 0.5
        dist = np.sort(np.round(rng.random((q, width)), 1), axis=1)
        name = ["MapAtK", "PrecisionAtK", "RecallAtK", "BNDCG"][i % 4]
        drop = bool(i % 3 == 0)
        k = int(rng.integers(1, width + (0 if drop and name == "BNDCG" else 1)))
        init = {"k": k, "drop_closest_lookup": drop}
        if name in ("MapAtK", "PrecisionAtK"):
            init["r"] = [None, {0: 3, 1: 1, 2: 0}, {1: 4}][i % 3]
            init["clip_at_r"] = bool(i % 5 == 0) and init["r"] is not None
        if name != "MapAtK":
            init["average"] = ["micro", "macro"][i % 2]
        if name == "BNDCG":
            init["distance_threshold"] = [math.inf, 0.5][i % 2]
        args = {"query_labels": arr(labels, "int32"), "match_mask": arr(mask, "bool")}
        if name == "BNDCG":
            args["lookup_distances"] = arr(dist, "float32")
        cases.append(case(name, "compute", init=init, args=args))
    # refused by the original: fewer neighbours than k; macro averaging of MapAtK
    cases.append(case("PrecisionAtK", "compute", init={"k": 5}, args=issue_mask))
    cases.append(case("MapAtK", "compute", init={"k": 2, "average": "macro"}, args=issue_mask))
    return cases


# --------------------------------------------------------------------------- running

def plain(value):
    """Outputs as plain JSON: tensors/arrays to lists, dict keys to strings (the replay
    test normalises irmetrics' outputs with it too)."""
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(plain(k)): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def make_converter(to_tensor):
    """Decoder of the recorded inputs, building arrays with ``to_tensor``."""
    def convert(value):
        if isinstance(value, dict) and "array" in value:
            return to_tensor(np.asarray(value["array"], dtype=value["dtype"]))
        if isinstance(value, dict) and "rows" in value:
            return [to_tensor(np.asarray(v, dtype=value["dtype"])) for v in value["rows"]]
        if isinstance(value, dict) and "tuple" in value:
            return tuple(value["tuple"])
        return value
    return convert


#: Case generators per library (each takes a numpy Generator).
CASES = {"torchmetrics": torchmetrics_cases, "pml": pml_cases, "oml": oml_cases,
         "pytorchltr": pytorchltr_cases, "tfsim": tfsim_cases}
#: Named label comparisons (a function cannot be stored in JSON).
COMPARISONS = {"same_mod_10": lambda a, b: (a % 10) == (b % 10)}


def original(library):
    """``(version, run)``: the real library's version and a function running one case
    through it. Raises ImportError when the library is not installed."""
    if library == "tfsim":
        import tensorflow as tf
        import tensorflow_similarity as tfs
        from tensorflow_similarity import retrieval_metrics as rm

        convert = make_converter(tf.constant)

        def run(c):
            metric = getattr(rm, c["name"])(**c["init"])
            return metric.compute(**{k: convert(v) for k, v in c["args"].items()})

        return tfs.__version__, run

    import torch

    convert = make_converter(torch.from_numpy)
    if library == "torchmetrics":
        import torchmetrics
        import torchmetrics.functional.retrieval as tmf
        import torchmetrics.retrieval as tmr

        def run(c):
            if c["kind"] == "function":
                return getattr(tmf, c["name"])(**{k: convert(v) for k, v in c["args"].items()})
            metric = getattr(tmr, c["name"])(**c["init"])
            for batch in c["batches"]:
                metric.update(**{k: convert(v) for k, v in batch.items()})
            return metric.compute()

        return torchmetrics.__version__, run
    if library == "pml":
        import pytorch_metric_learning
        from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

        def run(c):
            init = dict(c["init"])
            if "label_comparison_fn" in init:
                init["label_comparison_fn"] = COMPARISONS[init["label_comparison_fn"]]
            calc = AccuracyCalculator(exclude=("AMI", "NMI"), device=torch.device("cpu"), **init)
            return calc.get_accuracy(**{k: convert(v) for k, v in c["args"].items()})

        return pytorch_metric_learning.__version__, run
    if library == "oml":
        import oml.functional.metrics as omlf

        numpy_convert = make_converter(lambda a: a)

        def run(c):
            # calc_fnmr_at_fmr takes numpy arrays; the rest take tensors
            conv = numpy_convert if c["name"] == "calc_fnmr_at_fmr" else convert
            return getattr(omlf, c["name"])(**{k: conv(v) for k, v in c["args"].items()})

        return "4.0.0", run
    import pytorchltr.evaluation as ltr

    def run(c):
        return getattr(ltr, c["name"])(**{k: convert(v) for k, v in c["args"].items()})

    return "0.2.1", run


def record(libraries, seed):
    rng = np.random.default_rng(seed)  # one stream through the libraries, in order
    for library in libraries:
        version, run = original(library)
        write(library, version, CASES[library](rng), run)


def write(library, version, cases, run):
    done = []
    for c in cases:
        try:
            c["output"] = plain(run(c))
        except Exception as exc:  # the original refuses: recorded as such
            c["error"] = type(exc).__name__
        done.append(c)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, f"{library}-{version}.json")
    with open(path, "w") as fh:
        json.dump({"library": library, "version": version, "cases": done}, fh, indent=None,
                  separators=(",", ":"))
        fh.write("\n")
    errors = sum("error" in c for c in done)
    print(f"{path}: {len(done)} cases ({errors} refused by the original)")


if __name__ == "__main__":
    if sys.argv[1] == "torch":
        record(["torchmetrics", "pml", "oml", "pytorchltr"], 16)
    else:
        record(["tfsim"], 17)
