"""Differential test: the slow reference (semantics="pytrec_eval") against the
real pytrec_eval-terrier 0.5.11 (trec_eval 9.0.8), cell by cell, to 1e-9.

Notes on how pytrec_eval is driven:

* ``pytrec_eval.RelevanceEvaluator`` (the Python wrapper) expands nicknames,
  drops qrels queries with an empty judgment dict and returns ``{}`` for an
  empty run.  It also rewrites parameterised specs with a regex
  (``meas[._]digits(.digits)?(,...)*``, params de-duplicated and sorted as
  strings), so it cannot express pair parameters (``ndcg.1=3,2=9`` becomes
  ``ndcg.1`` and the extension then asserts), negative doubles
  (``utility.2,-1,0,0``), ``iprec_at_recall..15,.55`` or an unsorted
  ``11pt_avg.0.5,0.2``.  Those specs are passed unchanged to the underlying
  extension class ``pytrec_eval_ext.RelevanceEvaluator`` after applying the
  wrapper's own qrels filtering and empty-run rule (see ``_pytrec``).
* pytrec_eval returns relstring and runid as 0.0 and reports double/pair
  parameterised measures under their bare names; the reference does the same
  under ``semantics="pytrec_eval"``.
"""

from __future__ import annotations

import math
import os

import pytest

hypothesis = pytest.importorskip("hypothesis")
pytrec_eval = pytest.importorskip("pytrec_eval")
import pytrec_eval_ext  # noqa: E402  (installed with pytrec_eval)
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

try:
    from tests.reference.trec_eval_ref import evaluate
except ImportError:  # tests/ itself on sys.path (pytest rootdir-less import)
    from reference.trec_eval_ref import evaluate


DEFAULT_MEASURES = sorted(pytrec_eval.supported_measures)

# Parameterised specs the Python wrapper passes through intact.
WRAPPER_PARAM_MEASURES = [
    "P.3,7", "iprec_at_recall.0.15,0.55", "recall.3", "ndcg_cut.3,5", "map_cut.2,4",
    "success.2,4", "relative_P.2", "set_F.0.5", "Rprec_mult.0.5,1.5",
]

# Specs that must go to the extension class unchanged (see module docstring).
EXT_PARAM_MEASURES = [
    "ndcg.1=3,2=9", "G.1=3,2=9", "Rndcg.1=3,2=9", "ndcg_rel.1=3,2=9",
    "utility.2,-1,0,0", "11pt_avg.0.5,0.2", "iprec_at_recall..15,.55", "relstring.3",
    "Rprec_mult.5.0,0.2,0.35",
]

EXT_PARAM_MEASURES_2 = [
    "ndcg.0=1,1=2.5,3=0.5", "G.1=0.3,2=1.7", "Rndcg.0=2,2=1", "ndcg_rel.1=-1,2=4",
    "P.1,2,4", "success.1,3", "set_F.0.3", "utility.1,-2,0.5,0",
]

# Fractional gains closer than 1.0 (truncating gain comparator) and double cutoffs.
EXT_PARAM_MEASURES_3 = [
    "G.2=0", "ndcg.1=0.1,2=0.2,3=0.3", "ndcg_rel.3=0.7", "Rndcg.1=1.1,2=1.3",
    "Rprec_mult.0.3,0.7,1.1", "iprec_at_recall..7,.3,.35", "11pt_avg..9,.1,.5,.25",
    "relstring.0",
]

CONFIGS = [
    ("wrapper", DEFAULT_MEASURES),
    ("wrapper", WRAPPER_PARAM_MEASURES),
    ("ext", EXT_PARAM_MEASURES),
    ("ext", EXT_PARAM_MEASURES_2),
    ("ext", EXT_PARAM_MEASURES_3),
]


def _evaluable(qrels, run):
    """qids pytrec_eval evaluates: non-empty judgments and present in the run."""
    return [qid for qid, judgments in qrels.items() if len(judgments) > 0 and qid in run]


def _is_safe_first(qrels, run, qid, judged_only):
    """A query pytrec_eval can evaluate first without crashing."""
    judgments = qrels[qid]
    if not any(rel >= 0 for rel in judgments.values()):
        return False
    ranking = run[qid]
    if judged_only:
        ranking = [doc for doc in ranking if judgments.get(doc, -1) >= 0]
    return len(ranking) > 0


def _safe_first(qrels, run, judged_only):
    for qid in _evaluable(qrels, run):
        if _is_safe_first(qrels, run, qid, judged_only):
            return qid
    return None


def _crash_free(qrels, run, judged_only):
    """False for inputs on which pytrec_eval 0.5.11 itself crashes.

    pytrec_eval segfaults (SIGSEGV) with bpref or gm_bpref plus another
    measure when the first query it evaluates retrieves nothing (after -J) or
    has only negative judgments, e.g.

    * qrels ``{"2": {"d1": 1}}``, run ``{"2": {}, "5": {"a": 1.0}}``;
    * qrels ``{"A": {"d0": -1}}``, run ``{"A": {"x": 1.0}}``, relevance_level 3;
    * qrels ``{"A": {"d0": -1}}``, run ``{"A": {"x": 1.0}}``, judged_docs_only_flag;

    each with measures ``{"bpref", "map"}``.  Such queries are harmless after a
    normal query, so ``_pytrec`` puts a safe query first; inputs without any
    safe query are not sent to pytrec_eval.
    """
    return not _evaluable(qrels, run) or _safe_first(qrels, run, judged_only) is not None


def _safe_order(qrels, run, judged_only):
    """Move a safe query to the front of both dicts (results do not depend on order)."""
    first = _safe_first(qrels, run, judged_only)
    if first is None:
        return qrels, run

    def front(d):
        return {first: d[first], **{k: v for k, v in d.items() if k != first}}

    return front(qrels), front(run)


def _pytrec(qrels, run, measures, relevance_level, judged_only, how):
    qrels, run = _safe_order(qrels, run, judged_only)
    if how == "wrapper":
        ev = pytrec_eval.RelevanceEvaluator(
            qrels, measures, relevance_level=relevance_level,
            judged_docs_only_flag=judged_only)
        return ev.evaluate(run)
    # Same preprocessing as the wrapper, without its measure-string rewriting.
    filtered = {qid: j for qid, j in qrels.items() if len(j) > 0}
    ev = pytrec_eval_ext.RelevanceEvaluator(filtered, set(measures), relevance_level,
                                            judged_only)
    if not run:
        return {}
    return ev.evaluate(run)


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return abs(a - b) <= 1e-9


def _check(qrels, run, relevance_level, judged_only):
    for how, measures in CONFIGS:
        expected = _pytrec(qrels, run, measures, relevance_level, judged_only, how)
        ref = evaluate(qrels, run, measures, relevance_level=relevance_level,
                       judged_only=judged_only, semantics="pytrec_eval")
        assert sorted(ref.per_query) == sorted(expected), (how, measures)
        for qid, exp_values in expected.items():
            got = ref.per_query[qid]
            assert sorted(got) == sorted(exp_values), (qid, how)
            for name, exp in exp_values.items():
                assert _same(got[name], exp), (
                    f"qid={qid!r} measure={name} reference={got[name]!r} "
                    f"pytrec_eval={exp!r} rl={relevance_level} J={judged_only} "
                    f"qrels={qrels!r} run={run!r}")


# --- strategies -------------------------------------------------------------

QIDS = ["1", "2", "10", "A", "a"]
DOCS = ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "D8", "d10", "é9"]
SCORES = [0.0, -0.0, 0.5, 1.0, 1.00000001, 1.0001, 2.0, 3.25, -1.5, 7.0]

labels = st.sampled_from([-1, 0, 0, 1, 1, 2, 3, 4])
scores = st.one_of(st.sampled_from(SCORES),
                   st.floats(-5, 5, allow_nan=False, allow_infinity=False))


@st.composite
def qrels_and_run(draw):
    qrel_qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True))
    qrels = {}
    for qid in qrel_qids:
        docs = draw(st.lists(st.sampled_from(DOCS), max_size=8, unique=True))
        qrels[qid] = {d: draw(labels) for d in docs}
    run_qids = draw(st.lists(st.sampled_from(QIDS), max_size=5, unique=True))
    run = {}
    for qid in run_qids:
        docs = draw(st.lists(st.sampled_from(DOCS), max_size=9, unique=True))
        run[qid] = {d: draw(scores) for d in docs}
    return qrels, run


MAX_EXAMPLES = int(os.environ.get("REFERENCE_HYPOTHESIS_EXAMPLES", "300"))


@settings(max_examples=MAX_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=qrels_and_run(), relevance_level=st.integers(1, 3), judged_only=st.booleans())
def test_reference_matches_pytrec_eval(data, relevance_level, judged_only):
    qrels, run = data
    hypothesis.assume(_crash_free(qrels, run, judged_only))
    _check(qrels, run, relevance_level, judged_only)


# --- fixed cases ------------------------------------------------------------

FIXED = [
    # ties, unjudged docs, graded labels
    ({"1": {"a": 1, "b": 0, "c": 2, "d": 3}},
     {"1": {"a": 3.0, "b": 2.0, "z": 0.5, "c": 0.1}}),
    # empty judgment dict (absent), empty ranking (evaluated with n = 0), all -1
    ({"1": {"a": 1, "b": 0, "c": 2}, "2": {}, "3": {"x": 1}, "4": {"y": -1}},
     {"1": {"a": 1.0, "b": 2.0, "z": 0.5}, "2": {"a": 1.0}, "3": {}, "4": {"y": 1.0},
      "5": {"a": 1}}),
    # float32 tie: a and b tie after rounding, b wins the docno tie-break
    ({"1": {"a": 1, "b": 0}}, {"1": {"a": 1.00000001, "b": 1.0}}),
    # spec section 12 iprec example (lround vs +0.9)
    ({"1": {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "x1": 0, "x2": 0, "x3": 0}},
     {"1": {"a": 5.0, "x1": 4.0, "x2": 3.0, "x3": 2.0, "b": 1.0}}),
    # queries with no relevant docs at any level
    ({"1": {"a": 0, "b": 0}, "2": {"c": 3}}, {"1": {"a": 1.0}, "2": {"c": 1.0, "d": 2.0}}),
]


@pytest.mark.parametrize("relevance_level", [1, 2, 3])
@pytest.mark.parametrize("judged_only", [False, True])
@pytest.mark.parametrize("case", range(len(FIXED)))
def test_fixed_cases_match_pytrec_eval(case, relevance_level, judged_only):
    qrels, run = FIXED[case]
    _check(qrels, run, relevance_level, judged_only)


def test_nicknames_match_pytrec_eval():
    qrels, run = FIXED[0]
    for nick in ["official", "set", "all_trec"]:
        expected = _pytrec(qrels, run, [nick], 1, False, "wrapper")
        ref = evaluate(qrels, run, [nick], semantics="pytrec_eval")
        assert ref.per_query.keys() == expected.keys()
        for qid in expected:
            assert sorted(ref.per_query[qid]) == sorted(expected[qid]), nick
            for name, exp in expected[qid].items():
                assert _same(ref.per_query[qid][name], exp), (nick, name)


def test_pytrec_eval_gain_names_use_atol():
    """9.0.8 converts gain-pair names with atol: ``ndcg.a=2`` == ``ndcg.0=2``.

    trec_eval 10 ignores non-integer names instead (spec section 4.2).
    """
    qrels, run = FIXED[0]
    exp_a = _pytrec(qrels, run, ["ndcg.a=2"], 1, False, "ext")["1"]["ndcg"]
    exp_0 = _pytrec(qrels, run, ["ndcg.0=2"], 1, False, "ext")["1"]["ndcg"]
    assert exp_a == exp_0
    ref = evaluate(qrels, run, ["ndcg.a=2"], semantics="pytrec_eval")
    assert _same(ref.per_query["1"]["ndcg"], exp_a)
    ref10 = evaluate(qrels, run, ["ndcg.a=2"])
    assert ref10.per_query["1"]["ndcg_a=2"] == evaluate(qrels, run, ["ndcg"]).per_query["1"]["ndcg"]
