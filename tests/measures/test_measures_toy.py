"""Hand-computed toy tables and the spec's observed trec_eval examples (docs/reference/trec_eval.md §11, §12).

Values are compared as trec_eval prints them, ``'%6.4f' % value`` (NaN as ``-nan``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import irmetrics as irm
from irmetrics.exceptions import ParameterError


def fmt(value) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    if math.isnan(value):
        return "%6s" % ("-nan" if math.copysign(1, value) < 0 else "nan")
    return "%6.4f" % value


def per_query(qrels, run, measures, qid="1", **kw):
    return {k: fmt(v) for k, v in irm.evaluate(qrels, run, measures, **kw).to_dict()[qid].items()}


# --- docs/reference/trec_eval.md §11 appendix --------------------------------------------------------------

def test_tie_break_doc_id_descending():
    qrels = {"1": {"a": 1, "b": 0, "c": 1}}
    run = {"1": {"a": 1.0, "b": 1.0, "c": 1.0}}
    got = per_query(qrels, run, ["relstring", "P.1,2,3", "recip_rank"])
    assert got == {"recip_rank": "1.0000", "P_1": "1.0000", "P_2": "0.5000",
                   "P_3": "0.6667", "relstring": "'101'"}


def test_relstring_characters_and_counts():
    qrels = {"1": dict(zip("abcdefg", [1, 0, -1, -5, 2, 3, 12]))}
    run = {"1": {**{d: float(7 - i) for i, d in enumerate("abcdefg")}, "h": 0.0}}
    got = per_query(qrels, run, ["relstring", "num_rel", "num_rel_ret",
                                 "num_nonrel_judged_ret"])
    assert got["relstring"] == "'10..23>-'"
    assert (got["num_rel"], got["num_rel_ret"], got["num_nonrel_judged_ret"]) == \
        ("4.0000", "4.0000", "1.0000")


COMPLETE_QRELS = {"1": {"a": 1, "b": 0}, "2": {"c": 1, "d": 2, "e": 0}}
COMPLETE_RUN = {"1": {"a": 1.0, "z": 0.5}}


def test_complete_resets_by_exact_name():
    res = irm.evaluate(COMPLETE_QRELS, COMPLETE_RUN, ["all_trec", "yaap", "ideal_dcg"],
                       complete=True)
    q2 = {k: fmt(v) for k, v in res.to_dict()["2"].items()}
    assert q2["num_ret"] == "0.0000" and q2["num_rel"] == "2.0000"
    assert q2["ideal_dcg"] == "2.6309" and q2["yaap"] == "-1.0986"
    assert q2["rbp_resid"] == "0.0000" and q2["relstring"] == "''"
    assert q2["utility"] == "0.0000"
    assert all(q2[f"unj_{k}"] == "0.0000" for k in (5, 10, 20))
    # Everything else keeps the value of the one non-pool placeholder document.
    assert q2["map"] == q2["P_5"] == q2["infAP"] == q2["rbp"] == "0.0000"
    summary = res.aggregate()
    assert (summary["num_q"], summary["num_rel"]) == (2, 3)
    assert fmt(summary["gm_map"]) == fmt(math.exp((math.log(1.0) + math.log(1e-5)) / 2))


def test_complete_keeps_parameterised_values():
    res = irm.evaluate(COMPLETE_QRELS, COMPLETE_RUN,
                       ["utility.1,2,3,4", "relstring.3", "rbp_resid.p=0.9", "unj.1"],
                       complete=True, num_docs_in_coll=100)
    q2 = {k: fmt(v) for k, v in res.to_dict()["2"].items()}
    assert q2 == {"utility_1,2,3,4": "396.0000", "relstring_3": "'-'",
                  "rbp_resid_p=0.9": "1.0000", "unj_1": "0.0000"}


def test_complete_num_rel_summary_ignores_relevance_level():
    qrels = {"1": {"a": 1, "b": 2}, "2": {"c": 1, "d": 2, "e": 0}}
    run = {"1": {"a": 1.0, "b": 0.5}, "2": {"c": 0.5}}
    for level, per_q in ((2, [1, 1]), (0, [2, 3])):
        res = irm.evaluate(qrels, run, ["num_rel"], complete=True, relevance_level=level)
        assert list(res.values("num_rel")) == per_q
        assert res.aggregate()["num_rel"] == 4


NAN_QRELS = {"1": {"a": 1, "b": 0, "c": 1}, "2": {"x": 1}}
NAN_RUN = {"1": {"u1": 9, "a": 8, "u2": 7, "b": 6, "c": 5}, "2": {"y": 1, "z": 1}}


def test_nothing_judged_retrieved_gives_negative_nan():
    res = irm.evaluate(NAN_QRELS, NAN_RUN, ["iprec_at_recall", "11pt_avg", "relstring",
                                            "map"], judged_only=True)
    q2 = {k: fmt(v) for k, v in res.to_dict()["2"].items()}
    assert q2["iprec_at_recall_0.00"] == "  -nan"
    assert q2["iprec_at_recall_0.50"] == "0.0000"
    assert q2["11pt_avg"] == "  -nan"
    assert q2["relstring"] == "''" and q2["map"] == "0.0000"
    assert fmt(res.aggregate()["11pt_avg"]) == "  -nan"  # NaN propagates into the mean
    assert per_query(NAN_QRELS, NAN_RUN, ["relstring"], judged_only=True)["relstring"] == "'101'"
    assert per_query(NAN_QRELS, NAN_RUN, ["relstring"])["relstring"] == "'-1-01'"


def test_max_docs_zero_gives_nan_11pt():
    res = irm.evaluate(NAN_QRELS, NAN_RUN, ["11pt_avg", "num_ret"], max_docs=0)
    assert fmt(res.values("11pt_avg")[0]) == "  -nan"


def test_infap_equals_map_without_pool_unjudged():
    got = per_query(NAN_QRELS, NAN_RUN, ["map", "infAP"])
    assert got == {"map": "0.4500", "infAP": "0.4500"}


def test_rbp_intended_normalisation():
    qrels = {"1": {"a": 3, "b": 1, "c": 0, "d": 2}}
    run = {"1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    assert per_query(qrels, run, ["rbp"]) == {"rbp": "0.1786"}
    assert per_query(qrels, run, ["all_trec"])["rbp"] == "0.1786"


TRUNC_QRELS = {"1": {"a": 1, "b": 2, "c": 0, "d": 1}}
TRUNC_RUN = {"1": {"a": 3.0, "c": 2.0, "b": 1.0}}


@pytest.mark.parametrize("spec, expected", [
    ("ndcg", "0.6388"),
    ("ndcg.1=0.5", "0.7500"),            # level 1 (gain 0.5) sorts below level 0
    ("ndcg.1=1.9,2=1.2", "0.7465"),      # ideal orders 1.2 before 1.9
    ("11pt_avg.0.5,0.2", "1.0000"),      # unsorted parameters walk differently
    ("11pt_avg.0.2,0.5", "0.8333"),
])
def test_gain_truncation_and_unsorted_11pt(spec, expected):
    assert list(per_query(TRUNC_QRELS, TRUNC_RUN, [spec]).values()) == [expected]


def test_parameter_names():
    specs = ["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000",
             "Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
             "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4", "success.2,5,20"]
    names = irm.evaluate(TRUNC_QRELS, TRUNC_RUN, specs).names
    assert names == [
        "iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.25",
        "iprec_at_recall_0.50", "iprec_at_recall_0.75", "P_3", "P_5", "P_7",
        "recall_20", "recall_2000", "Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00",
        "utility_2,-1,0,0", "11pt_avg_.25,.5,.75", "ndcg_1=3,2=9,4=4.5", "ndcg_cut_10",
        "ndcg_cut_20", "ndcg_cut_23", "success_2", "success_5", "success_20"]


# --- docs/reference/trec_eval.md §12: iprec cutoff rounding under both semantics ----------------------------

IPREC_QRELS = {"1": {**{d: 1 for d in "abcdef"}, "x1": 0, "x2": 0, "x3": 0}}
IPREC_RUN = {"1": {"a": 5.0, "x1": 4.0, "x2": 3.0, "x3": 2.0, "b": 1.0}}


@pytest.mark.parametrize("semantics, expected", [
    ("trec_eval", {"iprec_at_recall_0.20": "1.0000", "iprec_at_recall_0.40": "0.4000",
                   "11pt_avg": "0.3455", "map": "0.2333"}),
    ("pytrec_eval", {"iprec_at_recall_0.20": "0.4000", "iprec_at_recall_0.40": "0.0000",
                     "11pt_avg": "0.2545", "map": "0.2333"}),
])
def test_iprec_cutoff_rounding(semantics, expected):
    got = per_query(IPREC_QRELS, IPREC_RUN, ["iprec_at_recall.0.2,0.4", "11pt_avg", "map"],
                    semantics=semantics)
    assert got == expected


def test_pytrec_eval_semantics_rejects_v10_measures():
    for name in ("rbp", "rbp_resid", "unj", "yaap", "dcg", "ideal_dcg"):
        with pytest.raises(ParameterError, match="not available under"):
            irm.evaluate(TRUNC_QRELS, TRUNC_RUN, [name], semantics="pytrec_eval")
    names = irm.evaluate(TRUNC_QRELS, TRUNC_RUN, ["all_trec"], semantics="pytrec_eval").names
    assert not any(n.startswith(("rbp", "unj")) for n in names)
    assert "11pt_avg" in names and "relstring" in names


# --- a hand-computed toy table for the measures added in this family ------------------
# q "1": labels a=2, b=1, d=1 (R = 3 at level 1), c=0, e=-1 (pool, unjudged);
# ranking x (not in the qrels), a, e, c, b: codes -1, 2, -2, 0, 1.

TOY_QRELS = {"1": {"a": 2, "b": 1, "c": 0, "d": 1, "e": -1}}
TOY_RUN = {"1": {"x": 5.0, "a": 4.0, "e": 3.0, "c": 2.0, "b": 1.0}}

L2 = math.log2
TOY_EXPECTED = {
    "relstring": "-2.01",
    # j=1 (a): 1/2; j=4 (b): 1/5 + 4/5 * 3/4 * (1+eps)/(2+2eps) = 1/2; sum / R
    "infAP": 1.0 / 3,
    "map": (1 / 2 + 2 / 5) / 3,
    "yaap": math.log((1 + 0.9) / (1 + 3 - 0.9)),
    # trunc(x*3 + 0.9) = 1, 2, 2, 3, 3, 4, 5, 5, 6, 6 for x = 0.2 .. 2.0; 6 > n = 5
    "Rprec_mult_0.20": 0.0, "Rprec_mult_0.40": 0.5, "Rprec_mult_0.60": 0.5,
    "Rprec_mult_0.80": 1 / 3, "Rprec_mult_1.00": 1 / 3, "Rprec_mult_1.20": 0.25,
    "Rprec_mult_1.40": 0.4, "Rprec_mult_1.60": 0.4, "Rprec_mult_1.80": 2 / 6,
    "Rprec_mult_2.00": 2 / 6,
    "utility": 2 - 3,
    # lround(p*3): 0,0,1,1,1,2,2,2,2,3,3 with IP(1) = 1/2, IP(2) = 2/5, 3 > K = 2
    "11pt_avg": (5 * 0.5 + 4 * 0.4) / 11,
    "binG": (1 / L2(3) + 1 / L2(5)) / 3,
    # res 0,2,2,2,3; cost 2,3,4,5,6 (ideal 2,1,1 then 1 per position)
    "G": (2 / L2(2 + 3 - 2) + 1 / L2(2 + 6 - 3)) / 4,
    "dcg": 2 / L2(3) + 1 / L2(6),
    "ideal_dcg": 2 + 1 / L2(3) + 1 / L2(4),
    "ndcg": (2 / L2(3) + 1 / L2(6)) / (2 + 1 / L2(3) + 1 / L2(4)),
    "ndcg_rel": ((2 / L2(3)) / (2 + 1 / L2(3))
                 + 2 * (2 / L2(3) + 1 / L2(6)) / (2 + 1 / L2(3) + 1 / L2(4))) / 3,
    # boundaries at i = 1 (0 / 2) and i = 3; then the tail term (n - 2 >= 3)
    "Rndcg": (0.0 + (2 / L2(3)) / (2 + 1 / L2(3) + 1 / L2(4))
              + (2 / L2(3) + 1 / L2(6)) / (2 + 1 / L2(3) + 1 / L2(4))) / 3,
    "set_P": 0.4, "set_relative_P": 2 / 3, "set_recall": 2 / 3, "set_map": 4 / 15,
    "set_F": 2 * 0.4 * (2 / 3) / (0.4 + 2 / 3),
    # gains / 2 (max gain 2 > 1): a -> 1 at rank 2, b -> 1/2 at rank 5
    "rbp": 0.1 * (1 * 0.9 + 0.5 * 0.9 ** 4),
    "rbp_resid": 0.9 ** 5 + 0.1 * (1 + 0.9 ** 2),
    "unj_5": 2 / 5, "unj_10": 2 / 10, "unj_20": 2 / 20,
}


def test_toy_table_new_measures():
    measures = ["relstring", "infAP", "map", "yaap", "Rprec_mult", "utility", "11pt_avg",
                "binG", "G", "dcg", "ndcg_rel", "Rndcg", "set_P", "set_relative_P",
                "set_recall", "set_map", "set_F", "rbp", "rbp_resid", "unj"]
    got = per_query(TOY_QRELS, TOY_RUN, measures)
    got.update(per_query(TOY_QRELS, TOY_RUN, ["ideal_dcg"]))
    got.update(per_query(TOY_QRELS, TOY_RUN, ["ndcg"]))
    assert got == {k: fmt(v) for k, v in TOY_EXPECTED.items()}


def test_toy_table_parameterised():
    got = per_query(TOY_QRELS, TOY_RUN, ["utility.1,2,3,4", "set_F.0.5", "relstring.2",
                                         "unj.1,3", "rbp.p=0.5", "G.2=4"],
                    num_docs_in_coll=100)
    assert got == {
        "utility_1,2,3,4": fmt(1 * 2 + 2 * 3 + 3 * 1 + 4 * (100 + 2 - 5 - 3)),
        "set_F_0.5": fmt(1.5 * 0.4 * (2 / 3) / (0.5 * 0.4 + 2 / 3)),
        "relstring_2": "'-2'",
        "unj_1": "1.0000", "unj_3": fmt(2 / 3),
        "rbp_p=0.5": fmt(0.5 * (1 * 0.5 + 0.5 * 0.5 ** 4)),
        # gains a -> 4, b -> 1; ideal 4,1,1: cost 4,5,6,7,8; res 0,4,4,4,5
        "G_2=4": fmt((4 / L2(2 + 5 - 4) + 1 / L2(2 + 8 - 5)) / 6),
    }


def test_rndcg_and_binG_zero_without_relevant():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.0}}
    got = per_query(qrels, run, ["Rndcg", "binG", "infAP", "yaap", "set_F"],
                    relevance_level=2)
    assert got == {"Rndcg": "0.0000", "binG": "0.0000", "infAP": "0.0000",
                   "yaap": "0.0000", "set_F": "0.0000"}
    # gain measures ignore the relevance level
    assert per_query(qrels, run, ["ndcg"], relevance_level=2) == {"ndcg": "1.0000"}


def test_rndcg_nan_with_only_non_positive_gains():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.0}}
    assert per_query(qrels, run, ["Rndcg.1=-1"]) == {"Rndcg_1=-1": "  -nan"}


def test_utility_needs_four_coefficients():
    with pytest.raises(ParameterError, match="exactly 4"):
        irm.evaluate(TOY_QRELS, TOY_RUN, ["utility.1,-1,0"])


def test_relstring_lengths():
    assert per_query(TOY_QRELS, TOY_RUN, ["relstring.0"]) == {"relstring_0": "''"}
    assert per_query(TOY_QRELS, TOY_RUN, ["relstring.-3"]) == {"relstring_-3": "''"}
    assert per_query(TOY_QRELS, TOY_RUN, ["relstring.3.9"]) == {"relstring_3.9": "'-2.'"}
    res = irm.evaluate(TOY_QRELS, TOY_RUN, ["relstring"])
    assert res.values("relstring").dtype == object and "relstring" not in res.aggregate()


def test_rbp_resid_zero_when_everything_judged():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 2.0, "b": 1.0}}
    assert per_query(qrels, run, ["rbp_resid", "unj.1"]) == {"rbp_resid": "0.0000",
                                                              "unj_1": "0.0000"}
    got = per_query(TOY_QRELS, TOY_RUN, ["rbp_resid", "unj.5"], judged_only=True)
    assert got == {"rbp_resid": "0.0000", "unj_5": "0.0000"}


def test_summary_uses_libm_log_for_geometric_means():
    res = irm.evaluate(TOY_QRELS, TOY_RUN, ["gm_map", "gm_bpref", "map"])
    assert res.values("gm_map")[0] == math.log(res.values("map")[0])
    assert res.aggregate()["gm_map"] == math.exp(math.log(res.values("map")[0]))
    assert np.isfinite(res.aggregate()["gm_bpref"])
