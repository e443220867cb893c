"""Hypothesis strategies for qrels/run dicts full of trec_eval's hard cases.

Ties (scores drawn from a tiny set), graded and negative labels, unjudged retrieved
documents, queries without relevant documents, empty rankings, ids whose byte order
differs from numeric order ("d10" < "d9").
"""

from hypothesis import strategies as st

DOC_IDS = [f"d{i}" for i in range(14)]
QUERY_IDS = ["1", "2", "10", "q7", "Q"]
TIED_SCORES = [0.0, 0.5, 1.0, 1.0000001, 2.0, -1.5]


@st.composite
def qrels_and_run(draw, max_queries=4):
    qids = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=max_queries,
                         unique=True))
    qrels, run = {}, {}
    for q in qids:
        judged = draw(st.lists(st.sampled_from(DOC_IDS), max_size=10, unique=True))
        if judged:
            qrels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
        if draw(st.booleans()) or not judged:
            retrieved = draw(st.lists(st.sampled_from(DOC_IDS), max_size=12, unique=True))
            run[q] = {d: draw(st.sampled_from(TIED_SCORES) | st.floats(-3, 3, width=32))
                      for d in retrieved}
    if not qrels:
        qrels[qids[0]] = {"d0": 1}
    if not any(run.values()):
        run[qids[0]] = {"d1": 1.0}
    # pytrec_eval 0.5.11 crashes, hangs or returns garbage when the first query of the
    # run has an empty ranking: keep non-empty rankings first.
    run = dict(sorted(run.items(), key=lambda item: not item[1]))
    return qrels, run
