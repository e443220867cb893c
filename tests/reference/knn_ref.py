"""Brute-force k-nearest neighbours, one query at a time (tests only)."""

import math


def score(q, g, metric):
    dot = sum(a * b for a, b in zip(q, g))
    if metric == "dot":
        return dot
    if metric == "cosine":
        return dot / (math.sqrt(sum(a * a for a in q)) * math.sqrt(sum(b * b for b in g)))
    return -math.sqrt(sum((a - b) ** 2 for a, b in zip(q, g)))


def knn(queries, gallery, k, metric, exclude=None):
    """Per query the first k gallery indices in trec_eval order: score desc, "d{g}" desc.

    ``exclude(i, g)`` says whether gallery item g may not be retrieved for query i.
    """
    out = []
    for i, q in enumerate(queries):
        cands = [(score(q, g, metric), f"d{j}".encode(), j) for j, g in enumerate(gallery)
                 if not (exclude and exclude(i, j))]
        cands.sort(key=lambda c: (c[0], c[1]), reverse=True)
        out.append([(j, s) for s, _, j in cands[:k]])
    return out
