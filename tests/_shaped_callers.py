"""Calls shaped as PyTerrier's ``pt.Experiment``/``pt.Evaluate`` and MTEB's retrieval
evaluation make them, printed in full (orders and values by ``repr``).

Run as a script, with the real libraries or with irmetrics' drop-ins underneath
(``--install`` calls :func:`irmetrics.compat.install` first; ``python -m
irmetrics.compat.run`` and ``import irmetrics.compat.auto`` are the other doors):
tests/compat/test_compat_switch.py compares the two outputs byte for byte. The callers are
re-created from what they compute with ir_measures' and pytrec_eval's output (PyTerrier
0.13's ``_ir_measures_to_dict`` and experiment table, MTEB 1.x's
``RetrievalEvaluator.evaluate``), not copied from them.
"""

from __future__ import annotations

import sys
from collections import defaultdict

if "--install" in sys.argv:
    from irmetrics.compat import install

    install("pytrec_eval", "ir_measures")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import ir_measures  # noqa: E402
import pytrec_eval  # noqa: E402


def data(seed: int = 3):
    """PyTerrier frames (qid/docno/score, qid/docno/label) and MTEB dicts of the same
    rankings: ids that sort differently as bytes and as numbers, ties, graded labels,
    unjudged documents, queries judged but not retrieved and retrieved but not judged."""
    rng = np.random.default_rng(seed)
    qids = [str(q) for q in rng.permutation(40)]  # '1', '10', '2', ... in run order
    qrels_rows, run_rows = [], []
    for i, qid in enumerate(qids):
        docs = [f"d{j}" for j in rng.choice(60, 25, replace=False)]
        if i % 9 != 4:
            for d in docs[:15]:
                qrels_rows.append((qid, d, int(rng.integers(0, 4))))
        if i % 7 != 2:
            scores = np.round(rng.normal(size=20), 1)  # many ties
            run_rows.extend((qid, d, float(s)) for d, s in zip(docs[5:], scores))
    qrels = pd.DataFrame(qrels_rows, columns=["qid", "docno", "label"])
    run = pd.DataFrame(run_rows, columns=["qid", "docno", "score"])
    qrels_dict, run_dict = defaultdict(dict), defaultdict(dict)
    for q, d, label in qrels_rows:
        qrels_dict[q][d] = label
    for q, d, s in run_rows:
        run_dict[q][d] = s
    return qrels, run, dict(qrels_dict), dict(run_dict)


def experiment(runs: dict, qrels, names: list, perquery: bool):
    """``pt.Experiment``'s table: measures parsed from their names, per-query values
    from ``ir_measures.iter_calc`` in its order, means by each measure's aggregator in
    the same order (PyTerrier's ``_ir_measures_to_dict``); one row per run, or per run,
    query and measure."""
    metrics = [ir_measures.parse_trec_measure(n)[0] if "_" in n or n in ("map", "ndcg")
               else ir_measures.parse_measure(n) for n in names]
    rev = {m: n for m, n in zip(metrics, names)}
    qrels = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    rows = []
    for name, run in runs.items():
        run = run.rename(columns={"qid": "query_id", "docno": "doc_id"})
        seq = ir_measures.iter_calc(metrics, qrels, run)
        if perquery:
            table = defaultdict(dict)
            for m in seq:
                table[m.query_id][rev.get(m.measure, str(m.measure))] = m.value
            rows.extend((name, q, measure, value) for q, values in table.items()
                        for measure, value in values.items())
        else:
            agg = {rev.get(m, str(m)): m.aggregator() for m in metrics}
            for m in seq:
                agg[rev.get(m.measure, str(m.measure))].add(m.value)
            rows.append({"name": name, **{k: a.result() for k, a in agg.items()}})
    return pd.DataFrame(rows) if not perquery else \
        pd.DataFrame(rows, columns=["name", "qid", "measure", "value"])


def evaluate(run, qrels, names: list):
    """``pt.Evaluate``: ``ir_measures.calc_aggregate`` as a dict by name."""
    metrics = [ir_measures.parse_measure(n) for n in names]
    qrels = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    run = run.rename(columns={"qid": "query_id", "docno": "doc_id"})
    return {str(m): v for m, v in ir_measures.calc_aggregate(metrics, qrels, run).items()}


def mteb(qrels: dict, results: dict, k_values=(1, 3, 5, 10, 100, 1000)):
    """MTEB's retrieval scores: pytrec_eval's per-query values in its query order,
    averaged over the evaluated queries and rounded to 5 digits, and MRR@k from the
    per-query recip_rank of a cut run."""
    ks = ",".join(map(str, k_values))
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {f"map_cut.{ks}", f"ndcg_cut.{ks}", f"recall.{ks}", f"P.{ks}"})
    scores = evaluator.evaluate(results)
    out = {}
    for label, key in (("NDCG", "ndcg_cut"), ("MAP", "map_cut"), ("Recall", "recall"),
                       ("P", "P")):
        for k in k_values:
            values = [scores[q][f"{key}_{k}"] for q in scores]
            out[f"{label}@{k}"] = round(sum(values) / len(scores), 5)
    for k in k_values:
        cut = {q: dict(sorted(docs.items(), key=lambda x: -x[1])[:k])
               for q, docs in results.items()}
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
        out[f"MRR@{k}"] = round(sum(v["recip_rank"] for v in rr.values()) / len(rr), 5)
    return scores, out


def real_pyterrier(qrels, run, names: list) -> None:
    """PyTerrier's own ``pt.Experiment`` (without Java: runs from frames), means,
    per-query rows and a baseline with its significance columns."""
    import pyterrier as pt

    first = pt.Transformer.from_df(run)
    second = pt.Transformer.from_df(run.assign(score=-run["score"]))
    topics = pd.DataFrame({"qid": sorted(set(qrels.qid) | set(run.qid)), "query": "x"})
    metrics = [ir_measures.parse_trec_measure(n)[0] if "_" in n or n in ("map", "ndcg")
               else ir_measures.parse_measure(n) for n in names]
    print(pt.Experiment([first, second], topics, qrels, metrics, names=["a", "b"])
          .to_dict(orient="split"))
    print(pt.Experiment([first], topics, qrels, metrics, perquery=True, names=["a"])
          .to_dict(orient="split"))
    print(pt.Experiment([first, second], topics, qrels, metrics, baseline=0, names=["a", "b"])
          .to_dict(orient="split"))


def real_mteb(qrels: dict, run: dict) -> None:
    """MTEB's own retrieval scoring (mteb 2.x ``calculate_retrieval_scores``: pytrec_eval
    per query, its means, MRR, hit rate and nAUCs), on the judged queries."""
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores

    run = {q: docs for q, docs in run.items() if q in qrels}
    result = calculate_retrieval_scores(run, qrels, [1, 3, 5, 10, 100, 1000])
    print(list(result.all_scores.items()))
    print([result.ndcg, result.map, result.recall, result.precision, result.mrr,
           result.hit_rate, result.naucs, result.naucs_mrr])


def main() -> None:
    qrels, run, qrels_dict, run_dict = data()
    other = run.assign(score=run["score"] * -1.0)
    names = ["map", "ndcg_cut_10", "P_5", "recip_rank", "nDCG@10", "AP@100", "R@50",
             "RR@10", "Judged@10", "P(rel=2)@10", "NumQ", "Bpref", "Success@10"]
    print(sys.modules["ir_measures"].__name__, sys.modules["pytrec_eval"].__name__)
    print(experiment({"bm25": run, "reversed": other}, qrels, names, perquery=False)
          .to_dict(orient="split"))
    print(experiment({"bm25": run}, qrels, names, perquery=True).to_dict(orient="split"))
    print(evaluate(run, qrels, names[4:]))
    scores, aggregates = mteb(qrels_dict, run_dict)
    print(list(scores.items()))
    print(aggregates)
    if "--pyterrier" in sys.argv:
        real_pyterrier(qrels, run, names)
    if "--mteb" in sys.argv:
        real_mteb(qrels_dict, run_dict)


if __name__ == "__main__":
    main()
