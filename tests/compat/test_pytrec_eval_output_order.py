"""``irmetrics.compat.pytrec_eval.output_order``: the key order of the drop-in's result
dicts read from the measure names alone, which ir_measures' pytrec_eval provider uses in
place of a probe evaluation (issue 34 item 6: the probe cost a small call ~5 ms). It must
be the order an evaluation gives, for any measure set pytrec_eval accepts.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics.compat.pytrec_eval import (RelevanceEvaluator, output_order, supported_measures,
                                          supported_nicknames)

NAMES = sorted(supported_measures) + sorted(n for n, m in supported_nicknames.items() if m)
#: Parameterised spellings pytrec_eval merges or keeps bare (set_F.0.5 -> set_F).
SPELLED = ["P.5", "P_10", "P.5,20", "recall.7", "ndcg_cut.3,1", "map_cut.2", "set_F.0.5",
           "set_F.2", "iprec_at_recall.0.1,0.7", "success.1", "Rprec_mult.0.5",
           "ndcg.1=3,2=9", "utility.1,-1,0,0", "rbp.p=0.5"]
QRELS = {"q": {"a": 2, "b": 0, "c": 1}}
RUN = {"q": {"a": 0.5, "b": 0.9, "x": 0.1}}


def _evaluated(measures) -> tuple:
    return tuple(RelevanceEvaluator(QRELS, measures).evaluate(RUN)["q"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(NAMES + SPELLED), min_size=1, max_size=8))
def test_output_order_is_the_evaluated_order(measures):
    try:
        expected = _evaluated(measures)
    except (ValueError, KeyError):  # refused names: output_order refuses them too
        expected = None
    if expected is None:
        try:
            output_order(measures)
        except (ValueError, KeyError):
            return
        raise AssertionError(f"output_order accepted {measures!r}")
    assert output_order(measures) == expected


def test_the_order_is_the_table_order_not_the_given_one():
    # a check that could not fail would prove nothing: the given order is not kept
    given_order = ["set_F.0.5", "P.5", "map", "recip_rank"]
    assert output_order(given_order) == _evaluated(given_order) == (
        "map", "recip_rank", "P_5", "set_F")
