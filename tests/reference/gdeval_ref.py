"""Plain per-query loops for gdeval's ERR@k and nDCG@k (exp gains) and for nERR@k.

Written from gdeval.pl 1.2a's definitions, one query at a time; never imported by the
package. Ranking: score descending, ties by doc id descending (gdeval's runOrder).
"""

import math

MAX_JUDGMENT = 4


def ranking(docs: dict) -> list:
    by_id_desc = sorted(docs, reverse=True)
    return sorted(by_id_desc, key=lambda d: -docs[d])  # stable: ties keep doc id descending


def gains_of(qrels_q: dict, ranked: list) -> list:
    return [max(qrels_q.get(d, 0), 0) for d in ranked]


def err(gains: list, k: int) -> float:
    score, decay = 0.0, 1.0
    for i, g in enumerate(gains[:k]):
        r = (2 ** g - 1) / 2 ** MAX_JUDGMENT
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


def exp_dcg(gains: list, k: int) -> float:
    return sum((2 ** g - 1) / math.log(i + 2) for i, g in enumerate(gains[:k]))


def ideal(qrels_q: dict) -> list:
    return sorted((g for g in qrels_q.values() if g > 0), reverse=True)


def per_query(qrels: dict, run: dict, k: int) -> dict:
    """``{query_id: (ERR@k, nERR@k, nDCG@k)}`` for queries in both qrels and run; 0 where
    the query has no positive label."""
    out = {}
    for q, docs in run.items():
        if q not in qrels:
            continue
        gains = gains_of(qrels[q], ranking(docs))
        best = ideal(qrels[q])
        e = err(gains, k)
        ie, idcg = err(best, k), exp_dcg(best, k)
        out[q] = (e, e / ie if ie > 0 else 0.0, exp_dcg(gains, k) / idcg if idcg > 0 else 0.0)
    return out
