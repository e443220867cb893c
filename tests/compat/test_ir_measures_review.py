"""Review of issue 14 part A (ir_measures names, gdeval/judged/msmarco measures, drop-in):
regressions for the defects found by a hostile user."""

from __future__ import annotations

import warnings

import pytest

import irmetrics as irm
from irmetrics.compat import ir_measures as dropin
from irmetrics.cli.options import EXIT_USAGE
from irmetrics.exceptions import ParameterError, UnknownMeasureError

QRELS = {"1": {"d1": 1, "d2": 1}}
RUN = {"1": {"d1": 1.0, "d3": 0.5}}


@pytest.mark.parametrize("name", ["IPrec@nan", "IPrec@inf", "IPrec@-inf", "IPrec@NaN"])
def test_non_finite_recall_level_is_refused_not_computed(name):
    # Was: evaluated with a numpy RuntimeWarning and a meaningless value.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ParameterError, match=r"must be a finite number; got '-?(?i:nan|inf)'\.$"):
            irm.evaluate(QRELS, RUN, [name])


@pytest.mark.parametrize("name", ["P@99999999999999999999", "RR@9223372036854775808",
                                  "nDCG@100000000000000000000"])
def test_cutoff_beyond_long_max_is_refused_not_saturated(name):
    # Was: P@1e20 silently computed as P@(2**63 - 1) (1/2**63 instead of 1e-20).
    with pytest.raises(ParameterError, match=r"must be at most 9223372036854775807; got '[0-9]+'"):
        irm.evaluate(QRELS, RUN, [name])
    with pytest.raises(ParameterError, match=r"must be at most 9223372036854775807; got '[0-9]+'"):
        dropin.calc_aggregate([dropin.parse_measure(name)], QRELS, RUN)


def test_largest_cutoff_still_computes():
    k = 2**63 - 1
    got = irm.evaluate(QRELS, RUN, [f"P@{k}"]).aggregate()[f"P@{k}"]
    assert got == pytest.approx(1 / k, rel=1e-12)


def test_drop_in_results_read_with_real_objects_but_not_the_reverse():
    # docs/ir_measures.md said "dictionaries keyed by either work"; only one direction does.
    real = pytest.importorskip("ir_measures", reason="ir-measures 0.4.3 is the oracle")
    ours = dropin.calc_aggregate([dropin.nDCG @ 10], QRELS, RUN)
    assert ours[real.nDCG @ 10] == ours[dropin.nDCG @ 10]
    theirs = {real.nDCG @ 10: 1.0}  # what real ir_measures returns
    assert (dropin.nDCG @ 10) not in theirs
    assert {str(k): v for k, v in theirs.items()}[str(dropin.nDCG @ 10)] == 1.0


def test_polars_lazyframe_input_raises_no_warning():
    # Was: two polars PerformanceWarnings per LazyFrame (reading .columns resolves a schema).
    pl = pytest.importorskip("polars", reason="polars inputs")
    qrels = pl.LazyFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "relevance": [1, 1]})
    run = pl.LazyFrame({"qid": ["1", "1"], "docno": ["d1", "d3"], "score": [1.0, 0.5]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = dropin.calc_aggregate([dropin.RR @ 10, dropin.P @ 2], qrels, run)
    assert got == {dropin.RR @ 10: 1.0, dropin.P @ 2: 0.5}


@pytest.mark.parametrize("name", ["P@5,10", "ERR@20 ", "RR@-1"])
def test_malformed_cutoff_message_names_the_constraint(name):
    with pytest.raises(ParameterError, match=r"must be a positive integer; got '.*'\.$"):
        irm.evaluate(QRELS, RUN, [name])


def test_cutoff_error_is_not_buried_under_other_declarations_needs():
    # Was: "... must be a positive integer; got '10.0'; 'nDCG@10.0': nDCG needs dcg."
    with pytest.raises(ParameterError) as err:
        irm.evaluate(QRELS, RUN, ["nDCG@10.0"])
    assert str(err.value) == "cutoff of 'nDCG@10.0' must be a positive integer; got '10.0'."


@pytest.mark.parametrize("name", ["SetF(beta=1e400)", "SetF(beta=-1e400)",
                                  "nDCG(gains={0:0,1:1,2:1e400})@3"])
def test_infinite_option_values_are_refused_not_nan(name):
    # Was: 1e400 (a valid Python literal, read as inf) gave NaN values silently.
    with pytest.raises(ParameterError, match=r"must be finite; got .*inf.*\.$"):
        irm.evaluate(QRELS, RUN, [name])


@pytest.mark.parametrize("name, suggestion", [
    ("P_10", "P@10"), ("ndcg_cut_10", "nDCG@10"), ("iprec_at_recall_0.10", "IPrec@0.1"),
    ("err@20", "ERR@20"), ("ndcg@10", "nDCG@10"), ("map", "AP"), ("Judge@10", "Judged"),
])
def test_drop_in_unknown_name_suggests_its_ir_measures_spelling(name, suggestion):
    # Was: 'P_10' suggested 'P_IA' (an unrelated measure), 'err@20' suggested nothing.
    from irmetrics.exceptions import UnknownMeasureError
    with pytest.raises(UnknownMeasureError) as err:
        dropin.parse_measure(name)
    assert f"did you mean '{suggestion}'" in str(err.value)


@pytest.mark.parametrize("spec, tool_name", [("Compat(p=0.8)", "Compat"), ("Compat", "Compat"),
                                             ("Accuracy@10", "Accuracy")])
def test_not_native_ir_measures_names_say_why(spec, tool_name, capsys):
    """ir_measures names irmetrics does not compute are refused with the reason and the
    docs page, not with suggestions of unrelated measures (Compat -> map_at_r)."""
    from irmetrics.cli import main

    with pytest.raises(UnknownMeasureError) as info:
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [spec])
    message = str(info.value)
    assert f"ir_measures' {tool_name} is not computed by irmetrics" in message
    assert "docs/ir_measures.md" in message and "map_at_r" not in message
    assert main(["eval", "-m", spec, "fixtures/example/qrels.txt",
                 "fixtures/example/run.txt"]) == EXIT_USAGE
    assert f"ir_measures' {tool_name} is not computed" in capsys.readouterr().err
