"""The ir_measures drop-in equals ir_measures 0.4.3 on its diversity (pyndeval) and
user-model (cwl_eval) measures, RBP included.

Hypothesis generates judgments with graded and negative labels, documents judged for
several intents, unjudged documents, empty rankings, queries on one side only, and runs
whose tied scores come in an arbitrary input order (cwl_eval keeps that order; pyndeval
sorts ties by doc id). The same inputs go to both libraries, as dicts, pandas DataFrames
or ``Qrel`` tuples with the intent in ``iteration``; every per-query value must agree to
1e-9 (NaN for NaN).
"""

import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.compat import ir_measures as ours

real = pytest.importorskip("ir_measures", reason="ir-measures 0.4.3 is the oracle")
pytest.importorskip("pyndeval", reason="pyndeval is ir_measures' diversity provider")
pytest.importorskip("cwl", reason="cwl-eval is ir_measures' user-model provider")
pd = pytest.importorskip("pandas", reason="DataFrame inputs are part of the drop-in's API")

#: Generated cases per test (small by default; raise it for a long run).
EXAMPLES = int(os.environ.get("IRMETRICS_DROPIN_EXAMPLES", "25"))
QUERIES = ["q1", "q2", "q3"]
DOCS = [f"d{i}" for i in range(8)]
SCORES = [0.0, 0.5, 1.0, 2.0, -1.0]  # few values: many ties


@st.composite
def runs(draw):
    """A run dict whose documents come in a drawn (not sorted) order."""
    run = {}
    for q in draw(st.lists(st.sampled_from(QUERIES + ["q9"]), unique=True, max_size=4)):
        docs = draw(st.lists(st.sampled_from(DOCS + ["u1", "u2"]), unique=True, max_size=10))
        run[q] = {d: draw(st.sampled_from(SCORES)) for d in docs}
    return run


def run_frame(run):
    return pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                        columns=["query_id", "doc_id", "score"])


def per_query(results):
    return {(m.query_id, str(m.measure)): m.value for m in results}


def assert_same(got, expected):
    assert got.keys() == expected.keys()
    for key, want in expected.items():
        if math.isnan(want):
            assert math.isnan(got[key]), key
        else:
            assert abs(got[key] - want) <= 1e-9, (key, got[key], want)


@st.composite
def intent_qrels(draw):
    cells = draw(st.lists(st.tuples(st.sampled_from(QUERIES), st.sampled_from(["1", "2", "3"]),
                                    st.sampled_from(DOCS)), min_size=1, max_size=25,
                          unique=True))
    return [real.Qrel(q, d, draw(st.integers(-1, 3)), i) for q, i, d in cells]


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(qrels=intent_qrels(), run=runs(), k=st.integers(1, 6),
       alpha=st.sampled_from([0.0, 0.5, 0.9]), rel=st.integers(1, 2), as_frame=st.booleans())
def test_diversity_measures_equal_ir_measures(qrels, run, k, alpha, rel, as_frame):
    names = [f"alpha_nDCG(alpha={alpha},rel={rel})@{k}", f"alpha_DCG@{k}",
             f"ERR_IA(rel={rel})@{k}", f"nERR_IA@{k}", f"NRBP(alpha={alpha},beta=0.8)",
             "nNRBP", f"AP_IA(rel={rel})", f"P_IA@{k}", f"StRecall(rel={rel})@{k}", "MAP_IA"]
    expected = {}
    for name in names:
        # One call per measure: in one call ir_measures 0.4.3 computes only the first
        # (rel, alpha, beta) group (see docs/ir_measures.md); the drop-in gets them all.
        expected.update(per_query(real.iter_calc([real.parse_measure(name)], qrels, run)))
    our_qrels = (pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance", "iteration"])
                 if as_frame else qrels)
    got = per_query(ours.iter_calc([ours.parse_measure(n) for n in names], our_qrels,
                                   run_frame(run) if as_frame else run))
    assert_same(got, expected)


@st.composite
def graded_qrels(draw):
    qrels = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=8))
        qrels[q] = {d: draw(st.integers(-1, 4)) for d in docs}
    return qrels


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(qrels=graded_qrels(), run=runs(), k=st.integers(1, 12),
       T=st.sampled_from([0.5, 1.0, 2.5]), p=st.sampled_from([0.0, 0.5, 0.8, 1.0]),
       rel=st.integers(0, 3), as_frame=st.booleans())
def test_user_model_measures_and_rbp_equal_ir_measures_with_input_order_ties(
        qrels, run, k, T, p, rel, as_frame):
    names = [f"RBP(rel={rel},p={p})", f"RBP(rel={rel})", "SDCG(max_rel=3)@%d" % k,
             f"BPM(T={T},max_rel=2)@{k}", f"INST(T={T},min_rel=1,max_rel=3)",
             f"INSQ(T={T},max_rel=3)", f"NERR8(max_rel=2)@{k}", f"NERR9(max_rel=3)@{k}",
             f"NERR10(p={p},max_rel=3)", f"NERR11(T={T},max_rel=1)"]
    measures = [real.parse_measure(n) for n in names]
    expected = per_query(real.iter_calc(measures, qrels, run))
    our_run = run_frame(run) if as_frame else run
    got = per_query(ours.iter_calc([ours.parse_measure(n) for n in names], qrels, our_run))
    assert_same(got, expected)


def test_tied_scores_keep_the_input_order_as_cwl_eval_does():
    qrels = {"q": {"a": 1, "b": 0}}
    for run in ({"q": {"a": 1.0, "b": 1.0}}, {"q": {"b": 1.0, "a": 1.0}}):
        want = real.calc_aggregate([real.NERR8(max_rel=1) @ 1, real.RBP(rel=1)], qrels, run)
        got = ours.calc_aggregate([ours.NERR8(max_rel=1) @ 1, ours.RBP(rel=1)], qrels, run)
        assert {str(m): v for m, v in got.items()} == \
            pytest.approx({str(m): v for m, v in want.items()}, abs=1e-12)
    # The two input orders really differ: a first scores 1, b first 0.
    assert ours.calc_aggregate([ours.NERR8(max_rel=1) @ 1], qrels,
                               {"q": {"b": 1.0, "a": 1.0}})[ours.NERR8(max_rel=1) @ 1] == 0.0


def test_trec_files_give_intents_and_line_order(tmp_path):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("q 1 a 1\nq 2 b 1\nq 1 c 1\n")
    run_path.write_text("q Q0 c 1 1.0 r\nq Q0 b 2 1.0 r\nq Q0 a 3 0.5 r\n")
    names = ["alpha_nDCG@2", "StRecall@1"]
    want = {str(m): v for m, v in real.calc_aggregate(
        [real.parse_measure(n) for n in names], real.read_trec_qrels(str(qrels_path)),
        real.read_trec_run(str(run_path))).items()}
    got = {str(m): v for m, v in ours.calc_aggregate(
        [ours.parse_measure(n) for n in names], str(qrels_path), str(run_path)).items()}
    assert got == pytest.approx(want, abs=1e-12)
    want = real.calc_aggregate([real.RBP(rel=1, p=0.5)], {"q": {"b": 1}},
                               real.read_trec_run(str(run_path)))
    got = ours.calc_aggregate([ours.RBP(rel=1, p=0.5)], {"q": {"b": 1}}, str(run_path))
    assert list(got.values()) == pytest.approx(list(want.values()), abs=1e-12)
