"""Fingerprint real implementations of ranking measures with irmetrics.conformance.

For every implementation below that imports in the running interpreter, run
:func:`irmetrics.conformance.check` and record the variant it implements: where it
departs from trec_eval's semantics, degree by degree, with the smallest example. Nothing
here is timed; the corpus is seeded, so the table is the same on every run with the same
library versions.

The libraries are not dependencies of irmetrics. The table in docs/conformance.md was made
in two scratch virtualenvs (tensorflow-ranking pins numpy < 2, which pyarrow, and so ragas,
refuse)::

    python3.11 -m venv /tmp/fp && /tmp/fp/bin/pip install torch==2.13.0
    /tmp/fp/bin/pip install torch==2.13.0 "numpy>=2" scipy polars tqdm \\
        pytrec-eval-terrier==0.5.11 scikit-learn torchmetrics==1.9.0 ir-measures==0.4.3 \\
        ranx pyspark pyarrow "pandas<3" pytorch-ignite trectools llama-index-core \\
        haystack-ai ragas "langchain-community<0.4" cwl-eval==1.0.12
    python3.11 -m venv /tmp/tf && /tmp/tf/bin/pip install tensorflow-ranking "numpy<2" \\
        scipy polars tqdm pytrec-eval-terrier==0.5.11
    PYTHONPATH=. /tmp/fp/bin/python benchmarks/fingerprint_implementations.py --json a.jsonl
    PYTHONPATH=. /tmp/tf/bin/python benchmarks/fingerprint_implementations.py --json b.jsonl
    python benchmarks/fingerprint_implementations.py --merge a.jsonl b.jsonl > table.md

Spark needs Java on PATH. ``--only NAME`` runs the rows of one library.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from importlib import metadata

import numpy as np

from irmetrics.conformance import check

K = 10
#: Degrees about empty queries: shown after the measure's own degrees.
EMPTY = ("no_judgments", "no_relevant", "empty_ranking")


def _relevant(labels):
    return [d for d, g in labels.items() if g >= 1]


# ---------------------------------------------------------------------------------------
# One factory per library: it imports the library and returns [(name, measure, input,
# labels, fn[, tolerance])]. A factory that fails to import is reported as not run, with the reason.


def sklearn_rows():
    from sklearn.metrics import average_precision_score, dcg_score, ndcg_score

    return [
        ("ndcg_score(k=10)", "nDCG@10", "arrays", "natural",
         lambda y, s: ndcg_score([y], [s], k=K)),
        ("ndcg_score", "nDCG", "arrays", "natural", lambda y, s: ndcg_score([y], [s])),
        ("dcg_score", "DCG", "arrays", "natural", lambda y, s: dcg_score([y], [s])),
        ("average_precision_score(y >= 1)", "AP", "arrays", "natural",
         lambda y, s: average_precision_score(y >= 1, s)),
    ]


def torchmetrics_rows():
    import torch
    from torchmetrics.functional import retrieval as r

    def t(fn, binary, **kw):
        def call(y, s):
            target = torch.as_tensor(y >= 1) if binary else torch.as_tensor(y)
            return fn(torch.as_tensor(s), target, **kw)
        return call

    return [
        ("retrieval_normalized_dcg(top_k=10)", "nDCG@10", "arrays", "natural",
         t(r.retrieval_normalized_dcg, False, top_k=K)),
        ("retrieval_average_precision(top_k=10)", "AP@10", "arrays", "natural",
         t(r.retrieval_average_precision, True, top_k=K)),
        ("retrieval_precision(top_k=10)", "P@10", "arrays", "natural",
         t(r.retrieval_precision, True, top_k=K)),
        ("retrieval_recall(top_k=10)", "R@10", "arrays", "natural",
         t(r.retrieval_recall, True, top_k=K)),
        ("retrieval_reciprocal_rank", "RR", "arrays", "natural",
         t(r.retrieval_reciprocal_rank, True)),
        ("retrieval_hit_rate(top_k=10)", "Success@10", "arrays", "natural",
         t(r.retrieval_hit_rate, True, top_k=K)),
        ("retrieval_r_precision", "Rprec", "arrays", "natural",
         t(r.retrieval_r_precision, True)),
    ]


def ignite_rows():
    import torch
    from ignite.metrics import HitRate, NDCG

    def metric(cls, binary):
        def call(y, s):
            m = cls(top_k=[K])
            target = (y >= 1) if binary else y
            m.update((torch.as_tensor(s, dtype=torch.float64)[None],
                      torch.as_tensor(target, dtype=torch.float64)[None]))
            return m.compute()[0]
        return call

    return [("rec_sys.NDCG(top_k=[10])", "nDCG@10", "arrays", "natural", metric(NDCG, False)),
            ("rec_sys.HitRate(top_k=[10])", "Success@10", "arrays", "natural",
             metric(HitRate, True))]


def tensorflow_ranking_rows():
    import tensorflow_ranking as tfr

    def metric(cls, **kw):
        def call(y, s):
            if y.size == 0:
                return None
            return float(cls(**kw)(np.asarray(y, np.float32)[None],
                                   np.asarray(s, np.float32)[None]).numpy())
        return call

    m = tfr.keras.metrics
    return [("keras.metrics.NDCGMetric(topn=10)", "nDCG@10", "arrays", "natural",
             metric(m.NDCGMetric, topn=K)),
            ("keras.metrics.MeanAveragePrecisionMetric(topn=10)", "AP@10", "arrays",
             "natural", metric(m.MeanAveragePrecisionMetric, topn=K)),
            ("keras.metrics.PrecisionMetric(topn=10)", "P@10", "arrays", "natural",
             metric(m.PrecisionMetric, topn=K)),
            ("keras.metrics.MRRMetric", "RR", "arrays", "natural", metric(m.MRRMetric))]


def pytrec_eval_rows():
    import pytrec_eval

    def measure(name):
        return lambda qrels, run: pytrec_eval.RelevanceEvaluator(qrels, {name}).evaluate(run)

    return [(f"RelevanceEvaluator({{'{n}'}})", m, "dicts", "int", measure(n))
            for n, m in (("ndcg_cut.10", "nDCG@10"), ("map", "AP"), ("P.10", "P@10"),
                         ("recip_rank", "RR"), ("bpref", "bpref"), ("Rprec", "Rprec"))]


def ir_measures_rows():
    import ir_measures

    def measure(name):
        m = ir_measures.parse_measure(name)

        def call(qrels, run):
            return {r.query_id: r.value for r in ir_measures.iter_calc([m], qrels, run)}
        return call

    rows = [(f"iter_calc([{n}])", n, "dicts", "int", measure(n))
            for n in ("nDCG@10", "AP", "P@10", "R@10", "RR", "Success@10")]
    # ERR comes from gdeval.pl, which prints 5 decimals: equal within half the last one
    return rows + [("iter_calc([ERR@10]) (gdeval)", "ERR@10", "dicts", "int",
                    measure("ERR@10"), 5e-6)]


def cwl_eval_rows():
    import ir_measures  # cwl-eval (C/W/L framework) through its ir_measures provider

    provider = ir_measures.cwl_eval

    def measure(name):
        m = ir_measures.parse_measure(name)

        def call(qrels, run):
            return {r.query_id: float(r.value) for r in provider.iter_calc([m], qrels, run)}
        return call

    return [(f"cwl_eval {n}", n, "dicts", "int", measure(n)) for n in ("P@10", "RR", "AP")]


def ranx_rows():
    from ranx import Qrels, Run, evaluate

    def measure(name):
        def call(qrels, run):
            return evaluate(Qrels(qrels), Run(run), name)
        return call

    return [(f"evaluate('{n}')", m, "dicts", "int", measure(n))
            for n, m in (("ndcg@10", "nDCG@10"), ("map", "AP"), ("precision@10", "P@10"),
                         ("recall@10", "R@10"), ("mrr", "RR"), ("hit_rate@10", "Success@10"),
                         ("r-precision", "Rprec"), ("bpref", "bpref"))]


def trectools_rows():
    import pandas as pd
    from trectools import TrecEval, TrecQrel, TrecRun

    def measure(method, **kw):
        def call(qrels, run):
            tq, tr = TrecQrel(), TrecRun()
            tq.qrels_data = pd.DataFrame(
                [(q, 0, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                columns=["query", "q0", "docid", "rel"])
            tr.run_data = pd.DataFrame(
                [(q, "Q0", d, i + 1, s, "r") for q, docs in run.items()
                 for i, (d, s) in enumerate(docs.items())],
                columns=["query", "q0", "docid", "rank", "score", "system"])
            out = getattr(TrecEval(tr, tq), method)(per_query=True, **kw)
            return {str(q): float(v) for q, v in out.iloc[:, 0].items()}
        return call

    return [("TrecEval.get_ndcg(depth=10)", "nDCG@10", "dicts", "int",
             measure("get_ndcg", depth=K)),
            ("TrecEval.get_map(depth=1000)", "AP", "dicts", "int", measure("get_map")),
            ("TrecEval.get_precision(depth=10)", "P@10", "dicts", "int",
             measure("get_precision", depth=K)),
            ("TrecEval.get_reciprocal_rank(depth=1000)", "RR", "dicts", "int",
             measure("get_reciprocal_rank")),
            ("TrecEval.get_bpref(depth=1000)", "bpref", "dicts", "int", measure("get_bpref"))]


def spark_rows():
    from pyspark.mllib.evaluation import RankingMetrics
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("fingerprint")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext

    def measure(method, graded, *args):
        def call(ranking, labels):
            if graded:
                row = (ranking, list(labels), [float(g) for g in labels.values()])
            else:
                row = (ranking, _relevant(labels))
            return getattr(RankingMetrics(sc.parallelize([row], 1)), method)(*args)
        return call

    # one Spark job per case: about 0.1 s each on an idle machine; the other methods
    # (precisionAt, recallAt, meanAveragePrecisionAt) check the same way
    return [("RankingMetrics.ndcgAt(10), graded", "nDCG@10", "ids", "natural",
             measure("ndcgAt", True, K))]


def llama_index_rows():
    from llama_index.core.evaluation.retrieval.metrics import METRIC_REGISTRY

    def measure(key, cut):
        metric = METRIC_REGISTRY[key]()

        def call(ranking, labels):
            return metric.compute(expected_ids=_relevant(labels),
                                  retrieved_ids=ranking[:cut] if cut else ranking).score
        return call

    return [(f"{METRIC_REGISTRY[key].__name__}{' on top 10' if cut else ''}", m, "ids",
             "natural", measure(key, cut))
            for key, m, cut in (("ndcg", "nDCG", None), ("ap", "AP", None), ("mrr", "RR", None),
                                ("precision", "P@10", K), ("recall", "R@10", K),
                                ("hit_rate", "Success@10", K))]


def haystack_rows():
    from haystack import Document
    from haystack.components.evaluators import (DocumentMAPEvaluator, DocumentMRREvaluator,
                                                DocumentNDCGEvaluator,
                                                DocumentRecallEvaluator)

    def measure(evaluator, cut, graded=False):
        def call(ranking, labels):
            truth = [Document(content=d, score=float(g) if graded else None)
                     for d, g in labels.items() if (g > 0 if graded else g >= 1)]
            got = [Document(content=d) for d in (ranking[:cut] if cut else ranking)]
            return evaluator.run(ground_truth_documents=[truth],
                                 retrieved_documents=[got])["score"]
        return call

    return [("DocumentNDCGEvaluator", "nDCG", "ids", "natural",
             measure(DocumentNDCGEvaluator(), None, True)),
            ("DocumentMAPEvaluator", "AP", "ids", "natural",
             measure(DocumentMAPEvaluator(), None)),
            ("DocumentMRREvaluator", "RR", "ids", "natural",
             measure(DocumentMRREvaluator(), None)),
            ("DocumentRecallEvaluator(multi_hit) on top 10", "R@10", "ids", "natural",
             measure(DocumentRecallEvaluator(mode="multi_hit"), K)),
            ("DocumentRecallEvaluator(single_hit) on top 10", "Success@10", "ids", "natural",
             measure(DocumentRecallEvaluator(mode="single_hit"), K))]


def ragas_rows():
    import asyncio

    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics import IDBasedContextPrecision, IDBasedContextRecall

    def measure(metric, cut):
        def call(ranking, labels):
            sample = SingleTurnSample(retrieved_context_ids=ranking[:cut] if cut else ranking,
                                      reference_context_ids=_relevant(labels))
            return asyncio.run(metric.single_turn_ascore(sample))
        return call

    return [("IDBasedContextPrecision on top 10", "P@10", "ids", "natural",
             measure(IDBasedContextPrecision(), K)),
            ("IDBasedContextRecall on top 10", "R@10", "ids", "natural",
             measure(IDBasedContextRecall(), K))]


LIBRARIES = {
    "scikit-learn": sklearn_rows, "torchmetrics": torchmetrics_rows,
    "pytorch-ignite": ignite_rows, "tensorflow-ranking": tensorflow_ranking_rows,
    "pytrec-eval-terrier": pytrec_eval_rows, "ir-measures": ir_measures_rows,
    "cwl-eval": cwl_eval_rows, "ranx": ranx_rows, "trectools": trectools_rows,
    "pyspark": spark_rows,
    "llama-index-core": llama_index_rows, "haystack-ai": haystack_rows, "ragas": ragas_rows,
}


def fingerprint(only=None):
    """Yield one record per implementation (or one per library that does not load)."""
    for library, factory in LIBRARIES.items():
        if only and library not in only:
            continue
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            yield {"library": library, "status": "not installed"}
            continue
        try:
            rows = factory()
        except Exception as exc:  # noqa: BLE001 - any failure to load is reported
            yield {"library": library, "version": version,
                   "status": f"does not load: {type(exc).__name__}: {exc}"[:200]}
            continue
        for name, measure, kind, labels, fn, *tolerance in rows:
            start = time.perf_counter()
            report = check(fn, measure, input=kind, labels=labels,
                           tolerance=tolerance[0] if tolerance else 1e-6)
            # the example shown: a departure in the measure itself before one in the
            # handling of empty queries, else the smallest counterexample
            shown = sorted(report.examples, key=lambda d: d in EMPTY)
            example = report.examples[shown[0]] if shown else report.counterexample
            yield {"library": library, "version": version, "callable": name,
                   "measure": measure, "input": kind, "labels": labels,
                   "conforms": report.conforms, "departures": report.departures,
                   "unexplained": report.unexplained, "cases": report.cases,
                   "example_degree": shown[0] if shown else None,
                   "example": None if example is None else {
                       "case": example.case.describe(), "value": _plain(example.value),
                       "trec_eval": _plain(example.expected)},
                   "seconds": round(time.perf_counter() - start, 1)}


def _plain(v):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else round(v, 4)
    return v


def markdown(records) -> str:
    """The table of docs/conformance.md."""
    lines = ["| library | callable | measure | input | trec_eval? | departs in | smallest"
             " example (callable vs trec_eval) |", "|---|---|---|---|---|---|---|"]
    missing = []
    for r in records:
        if "callable" not in r:
            missing.append(f"{r['library']} {r.get('version', '')}: {r['status']}")
            continue
        departs = ", ".join(f"{d}: {c}" for d, c in r["departures"].items()) or "-"
        if r["unexplained"]:
            departs += f"; {r['unexplained']} cases unexplained"
        ex = r["example"]
        degree = f"{r['example_degree']}: " if r.get("example_degree") else ""
        case = "" if ex is None else ex["case"]
        case = case if len(case) <= 110 else case[:72] + " ... " + case[-33:]
        example = "-" if ex is None else (f"{degree}`{case}`: {ex['value']} vs"
                                          f" {ex['trec_eval']}").replace("|", "\\|")
        lines.append(f"| {r['library']} {r['version']} | `{r['callable']}` | {r['measure']} |"
                     f" {r['input']} ({r['labels']}) | {'yes' if r['conforms'] else 'no'} |"
                     f" {departs} | {example} |")
    out = "\n".join(lines) + "\n"
    if missing:
        out += "\nNot run: " + "; ".join(missing) + "\n"
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", action="append", help="library to run (repeatable)")
    p.add_argument("--json", help="write the records as JSON lines to this file")
    p.add_argument("--merge", nargs="+", help="JSON lines files to merge into one table")
    args = p.parse_args(argv)
    if args.merge:
        records = [json.loads(line) for path in args.merge for line in open(path)]
        seen = {r["library"] for r in records if "callable" in r}
        records = [r for r in records if "callable" in r or r["library"] not in seen]
        order = list(LIBRARIES)
        records.sort(key=lambda r: order.index(r["library"]) if r["library"] in order else 99)
        sys.stdout.write(markdown(records))
        return 0
    records = []
    for record in fingerprint(args.only):
        print(json.dumps(record), file=sys.stderr, flush=True)
        records.append(record)
    if args.json:
        with open(args.json, "w") as out:
            out.writelines(json.dumps(r) + "\n" for r in records)
    sys.stdout.write(markdown(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
