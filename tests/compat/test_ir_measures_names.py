"""Measure names: ir_measures spellings, irmetrics' printed names, declared options,
suggestions for unknown names, and the gdeval measures against a plain loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import irmetrics as irm
from irmetrics.exceptions import InputFormatError, ParameterError, UnknownMeasureError
from irmetrics.measures.context import columns
from irmetrics.measures.params import LongCutoffs, Option
from irmetrics.measures.parse import parse_measures
from irmetrics.measures.registry import NICKNAMES, REGISTRY, measure
from irmetrics.measures import registry

from tests._cases import qrels_and_run
from tests.reference import gdeval_ref

QRELS = {"1": {"a": 2, "b": 1, "c": 0, "d": -1}, "2": {"x": 1, "y": 3}}
RUN = {"1": {"a": 0.3, "b": 0.9, "c": 0.5, "u": 0.7}, "2": {"y": 0.1, "x": 0.2, "z": 0.3}}


@pytest.mark.parametrize("friendly, trec", [
    ("nDCG@10", "ndcg_cut.10"), ("NDCG@10", "ndcg_cut.10"), ("AP", "map"),
    ("MAP", "map"), ("AP@5", "map_cut.5"), ("MAP@5", "map_cut.5"), ("P@5", "P.5"),
    ("Precision@5", "P.5"), ("R@5", "recall.5"), ("Recall@5", "recall.5"),
    ("RR", "recip_rank"), ("MRR", "recip_rank"), ("SetF(beta=0.5)", "set_F.0.5"),
    ("SetP(relative=True)", "set_relative_P"), ("SetRelP", "set_relative_P"),
    ("NumRet(rel=1)", "num_rel_ret"), ("NumRelRet", "num_rel_ret"), ("IPrec@0.1",
     "iprec_at_recall.0.1"), ("nDCG(gains={0:0,1:2,2:5})", "ndcg.0=0,1=2,2=5"),
    ("nDCG(dcg='log2')@5", "ndcg_cut.5"), ("Success@1", "success.1"),
])
def test_ir_measures_spellings_equal_their_trec_eval_measure(friendly, trec):
    res = irm.evaluate(QRELS, RUN, [friendly, trec]).to_dict()
    trec_name = parse_measures([trec])[0].output_names[0]
    for q in res:
        assert res[q][friendly] == res[q][trec_name], q


@pytest.mark.parametrize("printed, spec", [
    ("P_10", "P.10"), ("ndcg_cut_10", "ndcg_cut.10"), ("map_cut_5", "map_cut.5"),
    ("iprec_at_recall_0.10", "iprec_at_recall.0.10"), ("set_F_0.5", "set_F.0.5"),
    ("success_1", "success.1"), ("err_cut_20", "err_cut.20"), ("judged_cut_5", "judged_cut.5"),
])
def test_printed_names_are_accepted_and_print_back(printed, spec):
    (req,) = parse_measures([printed])
    (ref,) = parse_measures([spec])
    assert (req.measure.name, req.params) == (ref.measure.name, ref.params)
    assert req.output_names == (printed,)
    assert irm.evaluate(QRELS, RUN, [printed]).aggregate() == \
        {printed: irm.evaluate(QRELS, RUN, [spec]).aggregate()[printed]}


@pytest.mark.parametrize("spec, option, value", [
    ("nDCG(judged_only=True)@10", "judged_only", True),
    ("P(rel=2, judged_only=True)@3", "relevance_level", 2),
    ("nDCG(dcg='exp-log2')@10", "options", (("dcg", "exp-log2"),)),
])
def test_declared_options_reach_the_request(spec, option, value):
    (req,) = parse_measures([spec])
    assert getattr(req, option) == value


def test_judged_only_applies_to_that_measure_alone():
    res = irm.evaluate(QRELS, RUN, ["P@2", "P(judged_only=True)@2"]).to_dict()
    alone = irm.evaluate(QRELS, RUN, ["P.2"], judged_only=True).to_dict()
    plain = irm.evaluate(QRELS, RUN, ["P.2"]).to_dict()
    for q in res:
        assert res[q]["P(judged_only=True)@2"] == alone[q]["P_2"]
        assert res[q]["P@2"] == plain[q]["P_2"]


@pytest.fixture
def scratch_measure():
    """A declaration added for one test: options need no parser change."""
    name = "scratch_alpha"

    @measure(name, order=999, params=LongCutoffs((20,)), pytrec_eval=False,
             friendly="ScratchAlpha", friendly_cutoff=True,
             options={"alpha": Option(float, default=0.5), "judged": Option(int),
                      "rel": Option(int)})
    def kernel(ctx, cutoffs):
        alpha = ctx.options["alpha"]
        judged = ctx.options.get("judged", -1)
        return columns(*(np.full(ctx.n_queries, alpha * k + judged) for k in cutoffs))

    yield name
    del REGISTRY[name]
    del registry.DECLARATIONS[name]  # else a second use is "declared twice"


def test_new_declarations_get_their_options_parsed(scratch_measure):
    res = irm.evaluate(QRELS, RUN, ["ScratchAlpha(alpha=0.25, judged=3)@20",
                                    "ScratchAlpha@10"]).aggregate()
    assert res == {"ScratchAlpha(alpha=0.25, judged=3)@20": 8.0, "ScratchAlpha@10": 4.0}
    with pytest.raises(ParameterError, match="`alpha` in .* must be a number; got 'x'"):
        parse_measures(["ScratchAlpha(alpha='x')@20"])
    with pytest.raises(ParameterError, match="takes no argument 'beta'"):
        parse_measures(["ScratchAlpha(beta=1)@20"])


@pytest.mark.parametrize("spec, pattern", [
    ("AP(rel=x)", "must be name=value pairs with literal values"),
    ("nDCG(dcg='exp')@10", "`dcg` must be one of"),
    ("ERR(rel=2)@10", "takes no argument 'rel'"),
    ("RR(rel=-1)@5", None),
])
def test_bad_options_are_one_line_errors(spec, pattern):
    if pattern is None:
        with pytest.raises(ParameterError, match="`rel` of RR@k must be >= 0; got -1"):
            irm.evaluate(QRELS, RUN, [spec])
        return
    with pytest.raises(ParameterError, match=pattern) as info:
        parse_measures([spec])
    assert "\n" not in str(info.value)


def test_unknown_names_suggest_spellings_with_parameters():
    with pytest.raises(UnknownMeasureError) as info:
        parse_measures(["nDGC@10"])
    assert any(s.startswith("nDCG(") and s.endswith("@k") for s in info.value.suggestions)
    with pytest.raises(UnknownMeasureError) as info:
        parse_measures(["EER@20"])
    assert "ERR@k" in info.value.suggestions
    assert "\n" not in str(info.value)


def test_nicknames_and_trec_names_still_parse():
    names = [r.measure.name for r in parse_measures(["official"])]
    assert names == [n for n in sorted(REGISTRY, key=lambda n: REGISTRY[n].order)
                     if n in NICKNAMES["official"]]


# ---- gdeval measures and nERR against a plain loop --------------------------------------

@pytest.mark.filterwarnings("ignore::irmetrics.exceptions.MissingQueriesWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_and_run(max_label=4))
def test_err_nerr_exp_ndcg_equal_the_reference_loop(data):
    qrels, run = data
    for k in (1, 3, 20):
        names = [f"ERR@{k}", f"nERR@{k}", f"nDCG(dcg='exp-log2')@{k}"]
        res = irm.evaluate(qrels, run, names, complete=False)
        got = res.to_dict()
        expected = gdeval_ref.per_query(qrels, run, k)
        assert set(got) == set(expected)
        for q, values in expected.items():
            for name, value in zip(names, values):
                assert abs(got[q][name] - value) <= 1e-12, (q, name)


def test_nerr_of_the_ideal_ranking_is_one():
    res = irm.evaluate({"1": {"a": 4, "b": 2, "c": 1}}, {"1": {"a": 3, "b": 2, "c": 1}},
                       ["nERR@2", "nERR@10", "nDCG(dcg='exp-log2')@10"]).aggregate()
    assert res == {"nERR@2": 1.0, "nERR@10": 1.0, "nDCG(dcg='exp-log2')@10": 1.0}


def test_labels_above_four_are_refused_like_gdeval():
    with pytest.raises(InputFormatError, match=r"labels <= 4; got label 5.*query_id '1'"):
        irm.evaluate({"1": {"a": 5}, "2": {"b": 1}}, {"1": {"a": 1.0}}, ["ERR@10"])
