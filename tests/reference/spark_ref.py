"""Plain per-query loops of Spark MLlib's RankingMetrics formulas (Spark 4.x Scala source,
mllib/evaluation/RankingMetrics.scala), for tests only: obviously correct, not fast."""

from __future__ import annotations

import math


def _mean(values):
    return sum(values) / len(values) if values else math.nan


def precision_at(rows, k):
    return _mean([_hits(pred, set(lab), k) / k if lab else 0.0 for pred, lab, *_ in rows])


def recall_at(rows, k):
    return _mean([_hits(pred, set(lab), k) / len(set(lab)) if lab else 0.0
                  for pred, lab, *_ in rows])


def _hits(pred, labels, k):
    return sum(1 for item in pred[:k] if item in labels)


def _average_precision(pred, labels, k):
    if not labels:
        return 0.0
    hits, total = 0, 0.0
    for i, item in enumerate(pred[:k]):
        if item in labels:
            hits += 1
            total += hits / (i + 1)
    return total / min(len(labels), k)


def map_all(rows):
    return _mean([_average_precision(pred, set(lab), max(len(pred), len(set(lab))))
                  for pred, lab, *_ in rows])


def map_at(rows, k):
    return _mean([_average_precision(pred, set(lab), k) for pred, lab, *_ in rows])


def ndcg_at(rows, k, *, graded):
    out = []
    for row in rows:
        pred, lab = list(row[0]), list(row[1])
        rel = list(row[2]) if graded and len(row) == 3 else []
        labels = set(lab)
        if not labels:
            out.append(0.0)
            continue
        gain_of = dict(zip(lab, rel))  # later pairs overwrite earlier ones
        n = min(max(len(pred), len(labels)), k)
        dcg = ideal = 0.0
        for i in range(n):
            discount = math.log(i + 2)
            if not rel:
                if i < len(pred) and pred[i] in labels:
                    dcg += 1.0 / discount
                if i < len(labels):
                    ideal += 1.0 / discount
            else:
                if i < len(pred):
                    dcg += (2.0 ** gain_of.get(pred[i], 0.0) - 1) / discount
                if i < len(labels):
                    ideal += (2.0 ** gain_of.get(lab[i], 0.0) - 1) / discount
        out.append(0.0 if ideal == 0.0 else dcg / ideal)
    return _mean(out)
