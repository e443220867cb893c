"""The reference implementation against every observed example of the spec.

``docs/reference/trec_eval.md`` quotes output observed with trec_eval 10.0
(and pytrec_eval-terrier 0.5.11 for section 12).  Where the spec gives printed
values, the ``%6.4f`` text produced by ``Reference.format_trec`` is compared.
"""

from __future__ import annotations

import math

import pytest

try:
    from tests.reference import trec_eval_ref as ref_mod
except ImportError:  # tests/ itself on sys.path
    from reference import trec_eval_ref as ref_mod

evaluate = ref_mod.evaluate


def printed(ref):
    """{(name, qid): printed value text} from trec_eval's -q output."""
    out = {}
    for line in ref.format_trec(per_query=True).splitlines():
        name, qid, value = line.split("\t")
        out[(name.rstrip(), qid)] = value
    return out


def run_from_order(docs, top=None):
    """A ranking with strictly decreasing sims, in the given order."""
    top = len(docs) if top is None else top
    return {doc: float(top - i) for i, doc in enumerate(docs)}


# --- section 11 appendix ------------------------------------------------------

def test_tie_breaking_docno_descending():
    qrels = {"1": {"a": 1, "b": 0, "c": 1}}
    run = {"1": {"a": 1.0, "b": 1.0, "c": 1.0}}
    ref = evaluate(qrels, run, ["relstring", "P.1,2,3", "recip_rank"])
    expected = (
        "recip_rank            \t1\t1.0000\n"
        "P_1                   \t1\t1.0000\n"
        "P_2                   \t1\t0.5000\n"
        "P_3                   \t1\t0.6667\n"
        "relstring             \t1\t'101'\n"
    )
    assert ref.format_trec(per_query=True).startswith(expected)


def test_rel_parsing_codes():
    rel_text = {"a": "1.9", "b": "abc", "c": "-1", "d": "-5", "e": "2x", "f": "+3", "g": "12"}
    qrels = {"1": {doc: ref_mod.atol(text) for doc, text in rel_text.items()}}
    assert qrels["1"] == {"a": 1, "b": 0, "c": -1, "d": -5, "e": 2, "f": 3, "g": 12}
    run = {"1": {**run_from_order(list("abcdefg"), top=7), "h": 0.0}}
    p = printed(evaluate(qrels, run, ["relstring", "num_rel", "num_rel_ret",
                                      "num_nonrel_judged_ret"]))
    assert p[("relstring", "1")] == "'10..23>-'"
    assert p[("num_rel", "1")] == "4"
    assert p[("num_rel_ret", "1")] == "4"
    assert p[("num_nonrel_judged_ret", "1")] == "1"


def test_missing_qrels_query_without_c_is_skipped():
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 1}}
    run = {"1": {"a": 1.0}}
    ref = evaluate(qrels, run, ["map"])
    assert ref.format_trec(per_query=True).splitlines()[0] == "map                   \t1\t1.0000"
    assert ref.missing == ["2"]
    assert list(ref.per_query) == ["1"]


C_QRELS = {"1": {"a": 1, "b": 0}, "2": {"c": 1, "d": 2, "e": 0}}
C_RUN = {"1": {"a": 1.0, "z": 0.5}}


def test_complete_bogus_query_values():
    ref = evaluate(C_QRELS, C_RUN, ["num_q", "num_ret", "num_rel", "ideal_dcg", "yaap", "rbp_resid",
                                    "relstring"], complete=True)
    p = printed(ref)
    assert p[("num_ret", "2")] == "0"
    assert p[("num_rel", "2")] == "2"
    assert p[("ideal_dcg", "2")] == "2.6309"
    assert p[("yaap", "2")] == "-1.0986"
    assert p[("rbp_resid", "2")] == "0.0000"
    assert p[("relstring", "2")] == "''"
    assert p[("num_q", "all")] == "2"
    assert p[("num_rel", "all")] == "3"
    assert ref.missing == []


def test_complete_parameterised_names_are_not_cleaned():
    ref = evaluate(C_QRELS, C_RUN, ["utility.1,2,3,4", "relstring.3", "rbp_resid.p=0.9"],
                   complete=True, num_docs_in_coll=100)
    p = printed(ref)
    assert p[("utility_1,2,3,4", "2")] == "396.0000"
    assert p[("relstring_3", "2")] == "'-'"
    assert p[("rbp_resid_p=0.9", "2")] == "1.0000"


def test_complete_bogus_query_other_values():
    ref = evaluate(C_QRELS, C_RUN, ["all_trec", "yaap", "ideal_dcg"], complete=True)
    bogus = ref.per_query["2"]
    zero = ["map", "Rprec", "bpref", "infAP", "ndcg", "G", "binG", "Rndcg", "ndcg_rel",
            "recip_rank", "num_rel_ret", "num_nonrel_judged_ret", "rbp", "set_P", "set_F",
            "set_map", "set_recall", "set_relative_P", "11pt_avg", "utility", "num_ret",
            "P_5", "recall_5", "iprec_at_recall_0.00", "Rprec_mult_1.00", "map_cut_5",
            "ndcg_cut_5", "relative_P_5", "success_1", "unj_5", "rbp_resid"]
    for name in zero:
        assert bogus[name] == 0.0, name
    assert bogus["relstring"] == ""
    assert bogus["gm_map"] == math.log(1e-5)
    assert bogus["gm_bpref"] == math.log(1e-5)
    assert bogus["num_rel"] == 2.0
    assert ref.summary["num_q"] == 2.0
    assert "%6.4f" % ref.summary["map"] == "%6.4f" % (ref.per_query["1"]["map"] / 2)


@pytest.mark.parametrize("level, per_query_values", [(2, ("1", "1")), (0, ("2", "3"))])
def test_complete_summary_num_rel_ignores_level(level, per_query_values):
    qrels = {"1": {"a": 1, "b": 2}, "2": {"c": 1, "d": 2, "e": 0}}
    run = {"1": {"a": 1.0, "b": 0.5}, "2": {"c": 0.5}}
    p = printed(evaluate(qrels, run, ["num_rel"], complete=True, relevance_level=level))
    assert (p[("num_rel", "1")], p[("num_rel", "2")]) == per_query_values
    assert p[("num_rel", "all")] == "4"


NAN_QRELS = {"1": {"a": 1, "b": 0, "c": 1}, "2": {"x": 1}}
NAN_RUN = {"1": run_from_order(["u1", "a", "u2", "b", "c"], top=9),
           "2": {"y": 1.0, "z": 1.0}}


@pytest.mark.parametrize("options", [{"judged_only": True}, {"max_docs": 0}])
def test_nan_when_nothing_retrieved(options):
    ref = evaluate(NAN_QRELS, NAN_RUN, ["iprec_at_recall", "11pt_avg"], **options)
    text = ref.format_trec(per_query=True)
    assert "iprec_at_recall_0.00  \t2\t  -nan\n" in text
    assert "iprec_at_recall_0.50  \t2\t0.0000\n" in text
    assert "11pt_avg              \t2\t  -nan\n" in text
    # NaN propagates into the mean
    assert "iprec_at_recall_0.00  \tall\t  -nan\n" in text


def test_parameter_naming():
    ref = evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, [
        "iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000",
        "Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
        "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4", "success.2,5,20"])
    assert ref.order == [
        "iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.25",
        "iprec_at_recall_0.50", "iprec_at_recall_0.75", "P_3", "P_5", "P_7",
        "recall_20", "recall_2000", "Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00",
        "utility_2,-1,0,0", "11pt_avg_.25,.5,.75", "ndcg_1=3,2=9,4=4.5",
        "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23", "success_2", "success_5", "success_20"]


def test_rbp_intended_normalisation():
    qrels = {"1": {"a": 3, "b": 1, "c": 0, "d": 2}}
    run = {"1": run_from_order(["a", "b", "c", "d"])}
    for measures in (["rbp"], ["all_trec"], ["rbp", "ndcg"]):
        p = printed(evaluate(qrels, run, measures))
        assert p[("rbp", "all")] == "0.1786"


GAIN_QRELS = {"1": {"a": 1, "b": 2, "c": 0, "d": 1}}
GAIN_RUN = {"1": {"a": 3.0, "c": 2.0, "b": 1.0}}


@pytest.mark.parametrize("measure, name, value", [
    ("ndcg", "ndcg", "0.6388"),
    ("ndcg.1=0.5", "ndcg_1=0.5", "0.7500"),
    ("ndcg.1=1.9,2=1.2", "ndcg_1=1.9,2=1.2", "0.7465"),
    ("11pt_avg.0.5,0.2", "11pt_avg_0.5,0.2", "1.0000"),
    ("11pt_avg.0.2,0.5", "11pt_avg_0.2,0.5", "0.8333"),
])
def test_gain_truncation_and_unsorted_11pt(measure, name, value):
    assert printed(evaluate(GAIN_QRELS, GAIN_RUN, [measure]))[(name, "all")] == value


def test_truncating_comparator_sort():
    E = ref_mod.GainEntry
    table = ref_mod._glibc_msort([E(1, 0.5, 2), E(0, 0.0, 1), E(2, 2.0, 1)],
                                 ref_mod._comp_rel_gain)
    assert [e.level for e in table] == [1, 0, 2]
    # with a correct (exact) ideal ndcg.1=0.5 would be 0.5847
    exact = sorted(table, key=lambda e: e.gain)
    q = ref_mod.build_query(GAIN_QRELS["1"], GAIN_RUN["1"], L=1, max_docs=None,
                            judged_only=False, semantics="trec_eval", num_docs_in_coll=0)
    assert "%6.4f" % ref_mod.m_ndcg(q, exact) == "0.5847"
    table = ref_mod._glibc_msort([E(1, 1.9, 2), E(2, 1.2, 1), E(0, 0.0, 1)],
                                 ref_mod._comp_rel_gain)
    assert [e.gain for e in table] == [0.0, 1.9, 1.2]


def test_missing_query_complete_vs_pytrec_eval():
    qrels = {"1": {"a": 1}, "2": {"c": 1}}
    run = {"1": {"a": 1.0}, "3": {"z": 1.0}}
    ref = evaluate(qrels, run, ["map", "num_q"], complete=True)
    p = printed(ref)
    assert p[("num_q", "all")] == "2"
    assert p[("map", "all")] == "0.5000"
    ref = evaluate(qrels, run, ["map", "num_q"], semantics="pytrec_eval")
    assert ref.per_query == {"1": {"map": 1.0, "num_q": 1.0}}


# --- sections 3, 4, 7, 8 ----------------------------------------------------

J_QRELS = {"1": {"a": 1, "b": 0, "c": 1}}
J_RUN = {"1": run_from_order(["u1", "a", "u2", "b", "c"], top=9)}


def test_judged_only_relstring():
    assert printed(evaluate(J_QRELS, J_RUN, ["relstring"]))[("relstring", "1")] == "'-1-01'"
    assert printed(evaluate(J_QRELS, J_RUN, ["relstring"], judged_only=True))[
        ("relstring", "1")] == "'101'"


def test_max_docs_before_judged_only():
    p = printed(evaluate(J_QRELS, J_RUN, ["relstring", "num_ret"], max_docs=2, judged_only=True))
    assert p[("relstring", "1")] == "'1'"
    assert p[("num_ret", "1")] == "1"
    with pytest.raises(ValueError):
        evaluate(J_QRELS, J_RUN, ["map"], max_docs=-1)


def test_infap_equals_map_without_pool_unjudged():
    p = printed(evaluate(J_QRELS, J_RUN, ["map", "infAP"]))
    assert p[("map", "1")] == "0.4500"
    assert p[("infAP", "1")] == "0.4500"


def test_negative_relevance_level():
    qrels = {"1": {"a": 0, "b": 1, "c": 0}}
    run = {"1": run_from_order(["a", "z", "b"])}
    p = printed(evaluate(qrels, run, ["map", "P.3", "num_rel_ret"], relevance_level=-1))
    assert p[("map", "1")] == "1.0000"
    assert p[("P_3", "1")] == "1.0000"
    assert p[("num_rel_ret", "1")] == "2"


def test_equal_sims_and_signed_zero_tie():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 0.0, "b": -0.0}}
    assert printed(evaluate(qrels, run, ["relstring"]))[("relstring", "1")] == "'01'"


def test_qid_order_is_strcmp():
    qrels = {"2": {"a": 1}, "10": {"b": 1}, "1": {"c": 1}}
    run = {"2": {"a": 1.0}, "10": {"b": 1.0}, "1": {"c": 1.0}}
    ref = evaluate(qrels, run, ["map"])
    assert list(ref.per_query) == ["1", "10", "2"]
    qids = [line.split("\t")[1] for line in ref.format_trec(per_query=True).splitlines()]
    assert qids == ["1", "10", "2", "all"]


def test_runid_and_summary_formats():
    ref = evaluate({"1": {"a": 1}}, {"1": {"a": 1.0, "b": 0.5}},
                   ["runid", "num_q", "num_ret", "map", "gm_map"], run_id="r2")
    assert ref.format_trec(per_query=False) == (
        "runid                 \tall\tr2\n"
        "num_q                 \tall\t1\n"
        "num_ret               \tall\t2\n"
        "map                   \tall\t1.0000\n"
        "gm_map                \tall\t1.0000\n")
    # -q prints no runid, num_q or gm lines
    assert ref.format_trec(per_query=True).splitlines()[:2] == [
        "num_ret               \t1\t2", "map                   \t1\t1.0000"]


def test_long_names_are_not_truncated():
    ref = evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, ["ndcg_rel.1=3,2=9,3=27,4=81"])
    assert ref.format_trec(per_query=False) == "ndcg_rel_1=3,2=9,3=27,4=81\tall\t1.0000\n"


def test_number_formatting():
    fmt = ref_mod._fmt_double
    assert fmt(0.03125) == "0.0312"
    assert fmt(-0.0) == "-0.0000"
    assert fmt(ref_mod.div(0.0, 0.0)) == "  -nan"
    assert fmt(float("nan")) == "   nan"
    assert fmt(-498.0) == "-498.0000"


# --- section 12: pytrec_eval (trec_eval 9.0.8) ----------------------------------

IPREC_QRELS = {"1": {**{d: 1 for d in "abcdef"}, "x1": 0, "x2": 0, "x3": 0}}
IPREC_RUN = {"1": run_from_order(["a", "x1", "x2", "x3", "b"])}


def test_iprec_rounding_v10():
    p = printed(evaluate(IPREC_QRELS, IPREC_RUN, ["iprec_at_recall", "11pt_avg", "map"]))
    assert p[("iprec_at_recall_0.20", "1")] == "1.0000"
    assert p[("iprec_at_recall_0.40", "1")] == "0.4000"
    assert p[("11pt_avg", "1")] == "0.3455"
    assert p[("map", "1")] == "0.2333"


def test_iprec_rounding_v9():
    ref = evaluate(IPREC_QRELS, IPREC_RUN, ["iprec_at_recall", "11pt_avg", "map"],
                   semantics="pytrec_eval")
    v = ref.per_query["1"]
    assert v["iprec_at_recall_0.20"] == pytest.approx(0.4)
    assert v["iprec_at_recall_0.40"] == 0.0
    assert "%6.4f" % v["11pt_avg"] == "0.2545"
    assert "%6.4f" % v["map"] == "0.2333"


def test_float32_scores():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.00000001, "b": 1.0}}
    v10 = evaluate(qrels, run, ["P.1", "ndcg"]).per_query["1"]
    assert (v10["P_1"], v10["ndcg"]) == (1.0, 1.0)
    v9 = evaluate(qrels, run, ["P.1", "ndcg"], semantics="pytrec_eval").per_query["1"]
    assert v9["P_1"] == 0.0
    assert "%6.4f" % v9["ndcg"] == "0.6309"
    run = {"1": {"a": 1.0001, "b": 1.0}}
    assert evaluate(qrels, run, ["P.1"], semantics="pytrec_eval").per_query["1"]["P_1"] == 1.0


@pytest.mark.parametrize("semantics", ["trec_eval", "pytrec_eval"])
def test_all_negative_judgments_give_zero_levels(semantics):
    ref = evaluate({"1": {"a": -1}}, {"1": {"a": 1.0}}, ["map", "ndcg", "num_rel"],
                   semantics=semantics)
    assert ref.per_query["1"] == {"num_rel": 0.0, "map": 0.0, "ndcg": 0.0}


def test_gm_per_query_values():
    v = evaluate(J_QRELS, J_RUN, ["gm_map"], semantics="pytrec_eval").per_query["1"]
    assert "%.4f" % v["gm_map"] == "-0.7985"
    v = evaluate({"1": {"a": 1}}, {"1": {"z": 1.0}}, ["gm_map"],
                 semantics="pytrec_eval").per_query["1"]
    assert "%.4f" % v["gm_map"] == "-11.5129"


def test_pytrec_eval_per_query_conventions():
    qrels = {"1": {"a": 1}, "2": {}, "3": {"b": 1}}
    run = {"1": {"a": 1.0}, "2": {"a": 1.0}, "3": {}}
    ref = evaluate(qrels, run, ["runid", "relstring", "num_q", "num_ret"],
                   semantics="pytrec_eval")
    assert ref.per_query == {
        "1": {"runid": 0.0, "num_q": 1.0, "num_ret": 1.0, "relstring": 0.0},
        "3": {"runid": 0.0, "num_q": 1.0, "num_ret": 0.0, "relstring": 0.0},
    }
    for measure in ["rbp", "rbp_resid", "unj", "yaap", "dcg", "ideal_dcg"]:
        with pytest.raises(ValueError):
            evaluate(qrels, run, [measure], semantics="pytrec_eval")
    names = evaluate(qrels, run, ["all_trec"], semantics="pytrec_eval").order
    assert not [n for n in names if n.startswith(("rbp", "unj"))]


# --- section 4.2 measure specifications ---------------------------------------

ONE_Q = ({"1": {"a": 1, "b": 0}}, {"1": {"a": 1.0, "b": 0.5}})


def order_of(measures, **kw):
    return evaluate(*ONE_Q, measures, **kw).order


def test_first_parameter_string_wins():
    assert order_of(["P.5", "P.10"]) == ["P_5"]
    names = order_of(["P.2", "official"])
    assert [n for n in names if n.startswith("P_")] == ["P_2"]
    assert names[:2] == ["runid", "num_q"]


def test_nickname_params_are_unused():
    assert order_of(["official.5"]) == order_of(["official"])


@pytest.mark.parametrize("spec", ["P.", "nope", "all_qrels", "ndcg_p", "P.0", "P.abc",
                                  "P.5,5", "P.5,,10", "iprec_at_recall..1,.1",
                                  "ndcg.1", "ndcg.1=2,", "ndcg.,1=2", "ndcg.1=2=3",
                                  "ndcg.1=2,,2=3"])
def test_bad_specs_raise(spec):
    with pytest.raises(ValueError):
        evaluate(*ONE_Q, [spec])


def test_spec_parsing_details():
    assert order_of(["ndcg_cut.10,20,23.4"]) == ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
    assert order_of(["iprec_at_recall..331,.332"]) == ["iprec_at_recall_0.33"] * 2
    assert order_of(["Rprec_mult.-0.5"]) == ["Rprec_mult_-0.50"]
    assert order_of(["relstring.20", "set_F.0.5"]) == ["relstring_20", "set_F_0.5"]
    assert order_of(["ndcg.=2"]) == ["ndcg_=2"]
    ref = evaluate(*ONE_Q, ["ndcg.a=2", "ndcg_rel"])
    assert ref.order == ["ndcg_a=2", "ndcg_rel"]
    assert ref.per_query["1"]["ndcg_a=2"] == evaluate(*ONE_Q, ["ndcg"]).per_query["1"]["ndcg"]
    # output is in table order, never command-line order
    assert order_of(["unj.5", "map", "runid"]) == ["runid", "map", "unj_5"]


def test_all_trec_membership_and_order():
    names = order_of(["all_trec"])
    assert names[:5] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret"]
    assert names[-5:] == ["rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"]
    assert not {"yaap", "dcg", "ideal_dcg"} & set(names)
    assert order_of(["set"]) == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret",
                                 "utility", "set_P", "set_relative_P", "set_recall",
                                 "set_map", "set_F"]


def test_shared_gain_block():
    with pytest.raises(ValueError):
        evaluate(*ONE_Q, ["dcg", "ndcg.1=3"])
    with pytest.raises(ValueError):
        evaluate(*ONE_Q, ["dcg.1=3", "ndcg"])
    assert order_of(["dcg.1=3", "ndcg.1=3", "ideal_dcg.1=3"]) == [
        "dcg_1=3", "ideal_dcg_1=3", "ndcg_1=3"]
    assert order_of(["dcg", "ndcg", "ideal_dcg"]) == ["dcg", "ideal_dcg", "ndcg"]


def test_utility_needs_four_coefficients():
    with pytest.raises(ValueError):
        evaluate(*ONE_Q, ["utility.1,2,3"])


def test_c_conversions():
    assert [ref_mod.atol(s) for s in ["23.4", "abc", " -7x", "+3", ""]] == [23, 0, -7, 3, 0]
    assert ref_mod.atof("1e2") == 100.0
    assert ref_mod.atof("0x10") == 16.0
    assert ref_mod.atof("abc") == 0.0
    assert ref_mod.atof("inf") == math.inf
    assert ref_mod.atof("-inf") == -math.inf
    assert ref_mod.atof("1,5") == 1.0
    assert ref_mod.atof("+3.5") == 3.5
    assert ref_mod.atof(".5e1") == 5.0
    assert ref_mod.atof("1e") == 1.0
    assert [ref_mod.lround(x) for x in [2.5, 0.5, 1.49, -2.5]] == [3, 1, 1, -3]
