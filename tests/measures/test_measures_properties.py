"""Declared properties of the measures, over generated cases (hypothesis).

Bounds, the ideal ranking scores 1, invariance to the order of input rows, and
monotonicity in the cutoff k.
"""

from __future__ import annotations

import math
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from tests._cases import qrels_and_run, same_value

common = settings(max_examples=80, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

UNIT_INTERVAL = ["map", "P", "recall", "Rprec", "bpref", "recip_rank", "ndcg", "ndcg_cut",
                 "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall",
                 "set_map", "set_F", "binG", "G", "rbp", "rbp_resid", "unj", "Rprec_mult",
                 "11pt_avg", "iprec_at_recall", "ndcg_rel", "Rndcg"]
NON_NEGATIVE = ["infAP", "dcg", "ideal_dcg", "num_ret", "num_rel", "num_rel_ret",
                "num_nonrel_judged_ret"]


@common
@given(case=qrels_and_run(max_label=4), level=st.integers(1, 3), judged_only=st.booleans())
def test_bounds(case, level, judged_only):
    qrels, run = case
    res = irm.evaluate(qrels, run, UNIT_INTERVAL + NON_NEGATIVE, relevance_level=level,
                       judged_only=judged_only)
    for name in res.names:
        base = res.measure_of(name).name
        for value in res.values(name):
            if math.isnan(value):
                # only interpolated precision with nothing retrieved (0/0)
                assert base in ("iprec_at_recall", "11pt_avg"), name
                continue
            assert value >= 0, (name, value)
            if base in UNIT_INTERVAL:
                assert value <= 1 + 1e-12, (name, value)


@st.composite
def graded_qrels(draw):
    qids = draw(st.lists(st.sampled_from(["1", "2", "10", "a"]), min_size=1, max_size=3,
                         unique=True))
    qrels = {}
    for qid in qids:
        judged = draw(st.dictionaries(st.sampled_from([f"d{i}" for i in range(12)]),
                                      st.integers(-1, 4), min_size=1, max_size=10))
        judged[draw(st.sampled_from(["r0", "r1"]))] = draw(st.integers(1, 4))
        qrels[qid] = judged
    return qrels


IDEAL_ONE = ["map", "Rprec", "bpref", "recip_rank", "ndcg", "ndcg_cut.1,3,10", "Rndcg",
             "ndcg_rel", "binG", "G", "set_recall", "recall.1000", "iprec_at_recall",
             "11pt_avg", "success.1", "map_cut.1000"]


@common
@given(qrels=graded_qrels(), extra=st.booleans())
def test_ideal_ranking_scores_one(qrels, extra):
    # Every judged document, labels descending; optionally unjudged documents after them.
    run = {qid: {doc: float(label) for doc, label in judged.items() if label >= 0}
           for qid, judged in qrels.items()}
    if extra:
        for ranking in run.values():
            ranking["zz_unjudged"] = -10.0
    res = irm.evaluate(qrels, run, IDEAL_ONE + ["infAP"])
    for name in res.names:
        for value in res.values(name):
            if name == "infAP":
                assert abs(value - 1) < 1e-4  # equals AP up to infAP's epsilon
            else:
                assert value == 1.0, (name, value)


def _shuffled(mapping, rng):
    items = list(mapping.items())
    rng.shuffle(items)
    return {k: (_shuffled(v, rng) if isinstance(v, dict) else v) for k, v in items}


ALL_MEASURES = ["all_trec", "yaap", "dcg", "ideal_dcg"]


@common
@given(case=qrels_and_run(max_label=5), seed=st.integers(0, 2**16), level=st.integers(0, 2),
       judged_only=st.booleans())
def test_invariant_to_input_row_order(case, seed, level, judged_only):
    qrels, run = case
    rng = random.Random(seed)
    kw = dict(relevance_level=level, judged_only=judged_only)
    a = irm.evaluate(qrels, run, ALL_MEASURES, **kw)
    b = irm.evaluate(_shuffled(qrels, rng), _shuffled(run, rng), ALL_MEASURES, **kw)
    assert list(a.query_ids) == list(b.query_ids) and a.names == b.names
    da, db = a.to_dict(), b.to_dict()
    for qid in da:
        for name in a.names:
            assert same_value(da[qid][name], db[qid][name]), (qid, name)


CUTOFFS = (1, 2, 3, 5, 8, 13, 50)


@common
@given(case=qrels_and_run(max_label=3), level=st.integers(1, 3), judged_only=st.booleans())
def test_monotone_in_k(case, level, judged_only):
    qrels, run = case
    spec = ",".join(map(str, CUTOFFS))
    res = irm.evaluate(qrels, run, [f"{m}.{spec}" for m in
                                    ("recall", "success", "map_cut", "P", "unj")],
                       relevance_level=level, judged_only=judged_only)
    for base, scale in (("recall", False), ("success", False), ("map_cut", False),
                        ("P", True), ("unj", True)):
        # P@k * k = relat(k) and unj@k * k (unjudged count) never decrease either.
        columns = [res.values(f"{base}_{k}") * (k if scale else 1) for k in CUTOFFS]
        for lo, hi in zip(columns, columns[1:]):
            assert (hi >= lo - 1e-12).all(), base
