"""Hypothesis strategies shared by the measure tests: qrels/run dicts in pytrec_eval's shape.

Cases have ties (few distinct scores, and scores equal only after float32 rounding),
graded labels including negative ones (pool-unjudged), retrieved documents absent from
the qrels, queries with an empty ranking, queries missing from the run, and rankings
shorter and longer than the cutoffs used. Every qrels query has at least one label
>= 0: a query judged only negatively is undefined behaviour in trec_eval (docs/reference/trec_eval.md §10 #22).
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

QUERY_IDS = ("1", "2", "10", "9", "a", "B")
DOC_IDS = tuple(f"d{i}" for i in range(14))
#: Few distinct values so ties are common; the last two differ only below float32.
SCORES = (0.0, 0.5, 1.0, 2.0, 3.0, -1.0, 1.00000001, 2.5e-8)


@st.composite
def qrels_and_run(draw, *, max_queries=4, max_judged=8, max_retrieved=10, min_label=-1,
                  max_label=3, allow_missing=True):
    """``(qrels, run)`` dicts; every run query is a qrels query unless missing from the run."""
    qids = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=max_queries,
                         unique=True))
    top = draw(st.sampled_from(sorted({1, 2, max_label})))
    qrels, run = {}, {}
    for qid in qids:
        judged = draw(st.dictionaries(st.sampled_from(DOC_IDS),
                                      st.integers(min_label, top), min_size=1,
                                      max_size=max_judged))
        if all(v < 0 for v in judged.values()):
            judged[next(iter(judged))] = draw(st.integers(0, top))
        qrels[qid] = judged
        if allow_missing and draw(st.integers(0, 9)) == 0:
            continue
        score = st.sampled_from(SCORES) | st.floats(-4, 4, allow_nan=False, width=64)
        run[qid] = draw(st.dictionaries(st.sampled_from(DOC_IDS), score,
                                        max_size=max_retrieved))
    if not run:  # at least one query present in the run
        run[qids[0]] = {}
    if draw(st.booleans()):  # a run query without judgments is ignored
        run["zz"] = {"d1": 1.0}
    return qrels, run


def same_value(a, b) -> bool:
    """Bit-for-bit equality for floats (NaN equals NaN of the same sign), == otherwise."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b) and math.copysign(1, a) == math.copysign(1, b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def nonempty_first(run: dict) -> dict:
    """The run with non-empty rankings first.

    pytrec_eval 0.5.11 misbehaves when the first query of the run dict has an empty
    ranking: SIGSEGV (e.g. gm_bpref with recip_rank), hangs, or garbage values (e.g.
    6.9e-310 for 11pt_avg). Per-query results do not depend on the dict's order.
    """
    return dict(sorted(run.items(), key=lambda item: len(item[1]) == 0))
