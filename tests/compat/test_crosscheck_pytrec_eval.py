"""Differential test against the real pytrec-eval-terrier 0.5.11 (trec_eval 9.0.8).

irmetrics with ``semantics="pytrec_eval"`` must agree with pytrec_eval to 1e-9 on every
cell it returns (NaN equals NaN), for every measure pytrec_eval supports, plain and with
numeric parameters, relevance levels 1..3 (pytrec_eval rejects levels < 1: "Argument
relevance_level should be positive.") and judged_only on and off, on generated
qrels/runs with ties, graded and negative labels, unjudged documents and queries with
empty rankings.

``IRMETRICS_CROSSCHECK_EXAMPLES`` sets the number of generated cases per test (default
200). The largest absolute difference seen is printed at the end of the module (run
with ``-s``) and, if ``IRMETRICS_CROSSCHECK_REPORT`` names a file, appended to it.

pytrec_eval quirks handled here: its Python wrapper rewrites parameterised specs with a
regex, so pair parameters (``ndcg.1=3``) must never be passed (the extension aborts the
process); double-parameter measures (11pt_avg, set_F, utility, relstring) are reported
under their bare name; relstring and runid are returned as 0.0; pytrec_eval crashes
or returns garbage when the first query of the run has an empty ranking, so rankings are
reordered non-empty first and runs of only empty rankings are left to the reference
tests.
"""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from tests._cases import nonempty_first, qrels_and_run
from irmetrics.measures.params import DoubleParams, PairParams

pytrec_eval = pytest.importorskip("pytrec_eval")

EXAMPLES = int(os.environ.get("IRMETRICS_CROSSCHECK_EXAMPLES", "200"))
TOLERANCE = 1e-9

PLAIN = sorted(pytrec_eval.supported_measures)
WITH_PARAMS = ["P.3,7", "recall.2,50", "Rprec_mult.0.5,1.5", "iprec_at_recall.0.15,0.55",
               "success.2", "relative_P.4", "map_cut.3", "ndcg_cut.2,6", "11pt_avg.0.2,0.5",
               "set_F.0.5", "utility.1,2,3,4", "relstring.3"]

_stats = {"cells": 0, "cases": 0, "max_diff": 0.0}


def teardown_module(module):
    line = (f"pytrec_eval crosscheck: {_stats['cases']} cases, {_stats['cells']} cells, "
            f"max |difference| = {_stats['max_diff']:.3g}")
    print("\n" + line)
    report = os.environ.get("IRMETRICS_CROSSCHECK_REPORT")
    if report:
        with open(report, "a") as fh:
            fh.write(line + "\n")


def _pytrec_name(res, name):
    m = res.measure_of(name)
    return m.name if isinstance(m.params, (DoubleParams, PairParams)) else name


def _pytrec_evaluate(qrels, run, measures, relevance_level, judged_only):
    ordered = nonempty_first(run)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures),
                                               relevance_level=relevance_level,
                                               judged_docs_only_flag=judged_only)
    return evaluator.evaluate(ordered)


def crosscheck(qrels, run, measures, relevance_level, judged_only):
    expected = _pytrec_evaluate(qrels, run, measures, relevance_level, judged_only)
    res = irm.evaluate(qrels, run, measures, relevance_level=relevance_level,
                       judged_only=judged_only, semantics="pytrec_eval")
    got = res.to_dict()
    assert sorted(got) == sorted(expected)
    names = {_pytrec_name(res, n): n for n in res.names}
    _stats["cases"] += 1
    for qid, values in expected.items():
        assert sorted(names) == sorted(values), qid
        for name, want in values.items():
            mine = got[qid][names[name]]
            if name == "relstring":
                assert want == 0.0 and isinstance(mine, str)
                continue
            _stats["cells"] += 1
            if math.isnan(want) or math.isnan(mine):
                assert math.isnan(want) and math.isnan(mine), (qid, name, mine, want)
                continue
            diff = abs(mine - want)
            _stats["max_diff"] = max(_stats["max_diff"], diff)
            assert diff <= TOLERANCE, (qid, name, mine, want)


common = settings(max_examples=EXAMPLES, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@common
@given(case=qrels_and_run(max_label=3), relevance_level=st.integers(1, 3),
       judged_only=st.booleans(), measures=st.sampled_from([PLAIN, WITH_PARAMS]))
def test_matches_pytrec_eval(case, relevance_level, judged_only, measures):
    qrels, run = case
    assume(any(run.values()))  # only empty rankings: pytrec_eval misbehaves (above)
    crosscheck(qrels, run, measures, relevance_level, judged_only)


@common
@given(case=qrels_and_run(max_label=12, max_retrieved=25, max_judged=14),
       relevance_level=st.integers(1, 3), judged_only=st.booleans())
def test_matches_pytrec_eval_many_levels(case, relevance_level, judged_only):
    qrels, run = case
    assume(any(run.values()))  # only empty rankings: pytrec_eval misbehaves (above)
    crosscheck(qrels, run, PLAIN, relevance_level, judged_only)


def test_matches_pytrec_eval_float32_ties():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.00000001, "b": 1.0}}
    crosscheck(qrels, run, ["P.1", "ndcg"], 1, False)
    res = irm.evaluate(qrels, run, ["P.1"], semantics="pytrec_eval")
    assert res.values("P_1")[0] == 0.0  # b ranks first once scores are float32
    assert irm.evaluate(qrels, run, ["P.1"]).values("P_1")[0] == 1.0
