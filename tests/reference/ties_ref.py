"""Brute force over tied orderings: every order of every tie group, evaluated by the
trec_eval reference one by one (slow; tiny queries only).

For each query the documents are ranked as trec_eval ranks them; the groups of equal
(ordering) score are then permuted in every possible way, each combination becomes a
run with distinct scores in that order, and the reference evaluates it. The mean over
combinations is the expected value under uniformly random tie orders; the minimum and
maximum are the worst and best achievable values.
"""

from __future__ import annotations

import itertools
import math

from . import trec_eval_ref as ref


def tie_orderings(ranking: dict):
    """Every ranking (list of doc ids) obtained by permuting the tie groups of
    ``ranking`` ({doc: score}); groups keep their places."""
    ordered = ref.rank_documents(ranking, "trec_eval")
    groups = [list(g) for _, g in itertools.groupby(ordered, key=lambda d: float(ranking[d]))]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [d for group in combo for d in group]


def n_orderings(ranking: dict) -> int:
    ordered = ref.rank_documents(ranking, "trec_eval")
    sizes = [len(list(g)) for _, g in itertools.groupby(ordered, key=lambda d: float(ranking[d]))]
    return math.prod(math.factorial(s) for s in sizes)


def over_orderings(qrels: dict, run: dict, measures, **options) -> dict:
    """``{qid: {name: (mean, min, max)}}`` over all tie orders of each query."""
    out = {}
    for qid, ranking in run.items():
        if qid not in qrels:
            continue
        values = []
        for order in tie_orderings(ranking):
            distinct = {doc: float(len(order) - i) for i, doc in enumerate(order)}
            res = ref.evaluate({qid: qrels[qid]}, {qid: distinct}, measures, **options)
            values.append(res.per_query[qid])
        names = [n for n in values[0] if isinstance(values[0][n], float)]
        out[qid] = {n: (math.fsum(v[n] for v in values) / len(values),
                        min(v[n] for v in values), max(v[n] for v in values))
                    for n in names}
    return out
