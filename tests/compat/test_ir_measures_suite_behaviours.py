"""The behaviours ir_measures 0.4.3's own test suite expects of ``import ir_measures``,
checked on the drop-in against the real ir_measures (installed as the oracle).

Readers that skip blank lines and keep every line (one document under two intents),
``set_F`` with several values, ``ir_measures.measures`` as a module, the provider
objects with ir_measures' coverage (``supports``) and numbers (gdeval's printed decimals,
the parameters each provider reads), the default pipeline's choice of provider,
``nDCG(gains=...)`` with negative gains, ``SetP(rel=2)@5`` and the refusals.
"""

from __future__ import annotations

import math
import shutil
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from irmetrics.compat import ir_measures as ours
from irmetrics.exceptions import InputFormatError, ParameterError, UnknownMeasureError

from tests._cases import qrels_and_run

real = pytest.importorskip("ir_measures", reason="ir-measures 0.4.3 is the oracle")

EXAMPLES = 25
SLOW = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
needs_perl = pytest.mark.skipif(shutil.which("perl") is None,
                                reason="ir_measures runs gdeval.pl with perl")

QRELS_TEXT = """
0 0 D0 0
0 0 D1 1
0 0 D2 1
0 0 D3 2
0 0 D4 0
1 0 D0 1
1 0 D3 2
1 0 D5 2
"""
RUN_TEXT = """
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D3 2 0.7 run
1 0 D4 3 0.3 run
1 0 D2 4 0.4 run
"""


def numeric(data):
    """gdeval keeps numeric topics only; pytrec_eval may crash on empty rankings."""
    qrels, run = data
    ids = {q: str(i) for i, q in enumerate(sorted(set(qrels) | set(run)))}
    return ({ids[q]: d for q, d in qrels.items()}, {ids[q]: d for q, d in run.items() if d})


def by_key(metrics) -> dict:
    return {(m.query_id, str(m.measure)): m.value for m in metrics}


def assert_equal_metrics(got, expected, tolerance=0.0):
    got, expected = by_key(got), by_key(expected)
    assert got.keys() == expected.keys()
    for key, want in expected.items():
        if isinstance(want, float) and math.isnan(want):
            assert math.isnan(got[key]), key
        else:
            assert abs(got[key] - want) <= tolerance, (key, got[key], want)


# ---- readers -----------------------------------------------------------------------------

@st.composite
def trec_text(draw, fields):
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        if draw(st.integers(0, 3)) == 0:
            lines.append(draw(st.sampled_from(["", "   ", "\t"])))  # blank lines
        else:
            q, d = draw(st.sampled_from(["1", "2", "a"])), draw(st.sampled_from(["x", "y"]))
            it = draw(st.sampled_from(["0", "1", "2", "Q0"]))
            if fields == 4:
                lines.append(f"{q} {it} {d} {draw(st.integers(-1, 3))}")
            else:
                lines.append(f"{q} {it} {d} 1 {draw(st.sampled_from(['0.5', '1', '-2e1']))} r")
    return "\n" + "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))


@SLOW
@given(qrels=trec_text(4), run=trec_text(6))
def test_readers_yield_what_ir_measures_yields(qrels, run):
    # blank lines skipped; every line kept in order, repeats and intents included
    assert list(ours.read_trec_qrels(qrels)) == list(real.read_trec_qrels(qrels))
    assert list(ours.read_trec_run(run)) == list(real.read_trec_run(run))


def test_intent_aware_qrels_give_one_tuple_per_intent(tmp_path):
    text = "q 1 d 1\nq 2 d 1\n"
    assert list(ours.read_trec_qrels(text)) == list(real.read_trec_qrels(text)) == [
        ours.Qrel("q", "d", 1, "1"), ours.Qrel("q", "d", 1, "2")]
    path = tmp_path / "qrels.gz"
    import gzip
    path.write_bytes(gzip.compress(text.encode()))
    assert list(ours.read_trec_qrels(str(path))) == list(real.read_trec_qrels(str(path)))
    with open(tmp_path / "plain", "w") as f:
        f.write(RUN_TEXT)
    with open(tmp_path / "plain") as f:
        assert list(ours.read_trec_run(f)) == list(real.read_trec_run(RUN_TEXT))


@pytest.mark.parametrize("reader, text, line, what", [
    (ours.read_trec_qrels, "\nq 0 d 1\nq 0 e\n", 3, "expected 4 fields"),
    (ours.read_trec_qrels, "q 0 d one\n", 1, "relevance must be an integer"),
    (ours.read_trec_run, "q Q0 d 1 high r\n", 1, "score must be a number"),
])
def test_malformed_lines_name_the_line(reader, text, line, what):
    with pytest.raises(InputFormatError, match=what) as err:
        list(reader(text))
    assert err.value.line == line


def test_deprecated_names_warn_and_work():
    with pytest.warns(DeprecationWarning):
        assert list(ours.parse_trec_qrels(QRELS_TEXT)) == list(ours.read_trec_qrels(QRELS_TEXT))
    with pytest.warns(DeprecationWarning):
        assert list(ours.parse_trec_run(RUN_TEXT)) == list(ours.read_trec_run(RUN_TEXT))
    with pytest.warns(DeprecationWarning):
        assert ours.convert_trec_name("P.5") == [ours.P @ 5]
    with pytest.warns(DeprecationWarning):
        assert ours.GenericQrel("q", "d", 1) == ours.Qrel("q", "d", 1)


# ---- names -------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["set_F.1.0,0.5,2.4", "set_F.0.5", "P_5,10", "ndcg_cut_5,10",
                                  "P", "official"])
def test_parse_trec_measure_lists_what_ir_measures_lists(spec):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = real.parse_trec_measure(spec)
    assert ours.parse_trec_measure(spec) == theirs


@pytest.mark.parametrize("spelling", [
    'nDCG(dcg="exp-log2", cutoff=20)@10', 'nDCG(dcg="exp-log2", cutoff=20)',
    "nDCG(gains={1: 2, 0: 1})", "IPrec(rel=2, recall=0.4)@0.2", "IPrec(rel=2, recall=0.4)",
    "α_nDCG@5", "MAP", "SetRelP", "NumRelRet"])
def test_parse_measure_reads_like_ir_measures(spelling):
    assert str(ours.parse_measure(spelling)) == str(real.parse_measure(spelling))


@pytest.mark.parametrize("spelling", ["P(rel=2)(rel=3)@5", "nDCG@5@10", "P(2)@5",
                                      "P(rel=x)@5"])
def test_spellings_ir_measures_refuses_are_refused(spelling):
    with pytest.raises(ValueError):
        real.parse_measure(spelling)
    with pytest.raises(ParameterError):
        ours.parse_measure(spelling)


@pytest.mark.parametrize("spelling, shown", [
    ("nDCG@-1", "cutoff of 'nDCG@-1' must be a positive integer"),
    ("nDCG(judged_only='yes')@10", ("`judged_only` of nDCG(judged_only='yes')@10 must be"
                                    " of type bool")),
    ("nDCG(gains={0:0,1:'x'})@10", "got {0: 0, 1: 'x'}"),
])
def test_errors_blame_what_the_user_wrote(spelling, shown):
    with pytest.raises(ParameterError) as err:
        ours.calc_aggregate([ours.parse_measure(spelling)], {"q": {"a": 1}}, {"q": {"a": 1.0}})
    assert shown in str(err.value)
    assert "exp-log2" not in str(err.value) and "{1:x}" not in str(err.value)


def test_measures_is_a_module_like_ir_measures():
    from irmetrics.compat.ir_measures.measures import Judged, registry
    assert Judged == ours.Judged == real.Judged
    assert sorted(registry) == sorted(real.measures.registry)
    for name, measure in registry.items():
        theirs = real.measures.registry[name]
        assert str(measure) == str(theirs) and measure.AT_PARAM == theirs.AT_PARAM, name
        assert sorted(measure.SUPPORTED_PARAMS) == sorted(theirs.SUPPORTED_PARAMS), name
        for key, info in measure.SUPPORTED_PARAMS.items():
            other = theirs.SUPPORTED_PARAMS[key]
            assert (info.dtype, info.required) == (other.dtype, other.required), (name, key)
            unset = real.measures.base._NOT_PROVIDED  # ir_measures' private sentinel
            assert (info.default is ours.NOT_PROVIDED) == (other.default is unset), (name, key)
            assert info.default is ours.NOT_PROVIDED or info.default == other.default
        assert type(measure.aggregator()).__name__ == type(theirs.aggregator()).__name__


def test_public_names_of_ir_measures_exist():
    missing = set(real.__all__) - set(dir(ours))
    assert missing <= {"lazylibs"}, missing  # ir_measures' import helper
    assert ours.__version__ == real.__version__ == "0.4.3"
    assert set(ours.providers.registry) == set(real.providers.registry)
    assert [p.NAME for p in ours.DefaultPipeline.providers] == \
        [p.NAME for p in real.DefaultPipeline.providers]


def test_setp_with_a_cutoff_builds_and_is_refused_where_ir_measures_refuses():
    m = ours.SetP(rel=2) @ 5
    assert str(m) == str(real.SetP(rel=2) @ 5) == "SetP(rel=2)@5"
    with pytest.raises(ParameterError, match="SetP does not take"):
        ours.calc_aggregate([m], {"0": {"a": 2}}, {"0": {"a": 1.0}})
    # ranx's provider reads no cutoff for SetP: the set precision at rel 2
    qrels, run = list(ours.read_trec_qrels(QRELS_TEXT)), list(ours.read_trec_run(RUN_TEXT))
    got = {q: v for q, _, v in ours.ranx.iter_calc([m], qrels, run)}
    assert got == {"0": 1 / 5, "1": 1 / 4}


# ---- coverage: supports and the default pipeline's choice ---------------------------------

CATALOGUE = [
    "P@5", "P(rel=2)@5", "P(judged_only=True)@5", "P", "RR", "RR@10", "RR(rel=2)@3",
    "RR(judged_only=True)@10", "AP", "AP@5", "AP(rel=2)", "Rprec", "nDCG", "nDCG@5",
    "nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')", "nDCG(gains={0:1,1:3})@5",
    "nDCG(judged_only=True)@5", "R@5", "R(rel=2)@5", "Bpref", "Bpref(rel=2)", "NumRet",
    "NumRet(rel=2)", "NumQ", "NumRel", "NumRel(rel=2)", "SetAP", "SetF", "SetF(beta=0.5)",
    "SetP", "SetRelP", "SetR", "SetR(rel=2)", "Success@5", "IPrec@0.2", "IPrec(rel=2)@0.2",
    "infAP", "ERR@5", "ERR", "Judged@5", "Judged", "RBP(rel=1)", "RBP(p=0.5)", "RBP",
    "SDCG(max_rel=3)@5", "BPM(max_rel=3)@5", "INST(max_rel=3)", "INSQ(max_rel=3)",
    "NERR8(max_rel=3)@5", "NERR9(max_rel=3)@5", "NERR10(max_rel=3)", "NERR11(max_rel=3)",
    "alpha_nDCG@5", "ERR_IA@5", "NRBP", "AP_IA", "P_IA@5", "StRecall@5", "Compat",
    "Compat(p=0.8)", "Accuracy@5", "Accuracy", "SetP(rel=2)@5", "IPrec@1", "INST",
]


def outcome(call):
    try:
        return call()
    except (AssertionError, ValueError):  # ir_measures asserts; irmetrics raises
        return "refused"


@pytest.mark.parametrize("spelling", CATALOGUE)
def test_every_provider_supports_what_ir_measures_supports(spelling):
    theirs, mine = real.parse_measure(spelling), ours.parse_measure(spelling)
    for name, provider in ours.providers.registry.items():
        want = outcome(lambda p=real.providers.registry[name]: p.supports(theirs))
        got = outcome(lambda p=provider: p.supports(mine))
        assert got == want, (name, spelling, got, want)


@pytest.mark.parametrize("spelling", CATALOGUE)
def test_the_default_pipeline_picks_ir_measures_provider(spelling):
    theirs, mine = real.parse_measure(spelling), ours.parse_measure(spelling)
    try:
        want = next((p.NAME for p in real.DefaultPipeline.providers
                     if p.NAME != "runtime" and p.supports(theirs)), None)
    except AssertionError:  # invalid parameters
        want = None
    try:
        got = ours.DefaultPipeline.chosen(mine).NAME
    except ParameterError:
        got = None
    assert got == want, spelling


def test_unsupported_measures_are_refused_naming_who_computes_them():
    with pytest.raises(ValueError, match="Unsupported measures"):
        real.calc_aggregate([real.NumRel(rel=2)], {"0": {"a": 2}}, {"0": {"a": 1.0}})
    with pytest.raises(ParameterError, match=r"NumRel is computed by pytrec_eval \(rel=1\)"):
        ours.calc_aggregate([ours.NumRel(rel=2)], {"0": {"a": 2}}, {"0": {"a": 1.0}})
    # through the provider itself, pytrec_eval counts at rel 2, as the real one does
    got = ours.pytrec_eval.calc_aggregate([ours.NumRel(rel=2)], {"0": {"a": 2, "b": 1}}, {})
    want = real.pytrec_eval.calc_aggregate([real.NumRel(rel=2)], {"0": {"a": 2, "b": 1}}, {})
    assert list(got.values()) == list(want.values()) == [0]


def test_providers_refuse_names_they_do_not_compute():
    for provider, spelling in [(ours.gdeval, "P@5"), (ours.judged, "RR"),
                               (ours.msmarco, "AP"), (ours.pyndeval, "nDCG@5")]:
        with pytest.raises(ValueError, match="unsupported measure"):
            provider.calc_aggregate([ours.parse_measure(spelling)], {"0": {"a": 1}}, {})
    with pytest.raises(UnknownMeasureError, match="Compat is not computed by irmetrics"):
        ours.compat.calc_aggregate([ours.Compat(p=0.8)], {"0": {"a": 1}}, {})
    with pytest.raises(ParameterError, match="trectools is not computed by irmetrics"):
        ours.trectools.calc_aggregate([ours.AP], {"0": {"a": 1}}, {})


# ---- numbers of each provider ---------------------------------------------------------------

def compare_provider(name, spellings, qrels, run, tolerance):
    provider, reference = getattr(ours, name), getattr(real, name)
    mine = [ours.parse_measure(s) for s in spellings]
    theirs = [real.parse_measure(s) for s in spellings]
    assert_equal_metrics(provider.iter_calc(mine, qrels, run),
                         reference.iter_calc(theirs, qrels, run), tolerance)
    got, want = provider.calc_aggregate(mine, qrels, run), reference.calc_aggregate(theirs, qrels,
                                                                                   run)
    for m, t in zip(mine, theirs):
        if math.isnan(want[t]):
            assert math.isnan(got[m])
        else:
            assert abs(got[m] - want[t]) <= tolerance, (str(m), got[m], want[t])


@SLOW
@given(data=qrels_and_run(max_retrieved=10))
def test_pytrec_eval_provider_equals_ir_measures_and_reads_its_parameters(data):
    qrels, run = numeric(data)
    # RR@3 and nDCG(dcg='exp-log2')@3 through pytrec_eval: the cutoff and dcg are not read
    for names in (["P@3", "RR@3", "AP(rel=2)@2", "nDCG(dcg='exp-log2')@3", "SetF(beta=0.5)",
                   "IPrec@0.333", "NumRel(rel=2)", "Success(rel=2)@2"],
                  ["nDCG(judged_only=True)@3", "P(judged_only=True)@2"]):
        compare_provider("pytrec_eval", names, qrels, run, 1e-9)


@needs_perl
@SLOW
@given(data=qrels_and_run(max_retrieved=10, max_label=4))
def test_gdeval_provider_prints_what_gdeval_prints(data):
    qrels, run = numeric(data)
    # gdeval's own values: exactly ir_measures' (5 printed decimals); plain nDCG@k is
    # gdeval's exponential one there
    compare_provider("gdeval", ["ERR@1", "ERR@5", "nDCG@3", "nDCG(dcg='exp-log2')@5"], qrels,
                     run, 0.0)


@SLOW
@given(data=qrels_and_run(max_retrieved=10))
def test_judged_msmarco_and_cwl_providers_equal_ir_measures(data):
    qrels, run = numeric(data)
    compare_provider("judged", ["Judged@2", "Judged"], qrels, run, 1e-12)
    compare_provider("msmarco", ["RR@2", "RR(rel=2)", "RR(judged_only=True)@3"], qrels, run,
                     1e-12)
    compare_provider("cwl_eval", ["P@3", "P(rel=2)@20", "RR", "AP", "AP(rel=2)", "RBP(rel=1)",
                                  "SDCG(dcg='log2',max_rel=3)@4"], qrels, run, 1e-9)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_and_run(max_retrieved=10))
def test_cwl_eval_yields_cwl_metrics_with_every_field(data):
    qrels, run = numeric(data)
    names = ["P@3", "RR", "AP(rel=2)", "RBP(rel=1,p=0.5)", "SDCG(max_rel=3)@4",
             "BPM(T=2.0,max_rel=2)@5", "INST(max_rel=3)", "INSQ(T=2.0,max_rel=3)",
             "NERR8(max_rel=2)@3", "NERR9(max_rel=2)@3", "NERR10(max_rel=2)",
             "NERR11(max_rel=2)"]

    def tuples(lib):
        metrics = lib.cwl_eval.iter_calc([lib.parse_measure(n) for n in names], qrels, run)
        return sorted(((type(m).__name__, m.query_id, str(m.measure)), m[2:]) for m in metrics)

    got, want = tuples(ours), tuples(real)
    assert [key for key, _ in got] == [key for key, _ in want]
    for (key, mine), (_, theirs) in zip(got, want):
        assert np.allclose(mine, theirs, rtol=1e-9, atol=1e-12), (key, mine, theirs)


def test_the_suite_facts_of_the_providers():
    qrels, run = list(ours.read_trec_qrels(QRELS_TEXT)), list(ours.read_trec_run(RUN_TEXT))
    # gdeval: values as printed with 5 decimals, aggregates their mean
    per_query = list(ours.gdeval.iter_calc([ours.ERR @ 20], qrels, run))
    assert [(m.query_id, m.value) for m in per_query] == [("0", 0.10175), ("1", 0.09375)]
    assert ours.gdeval.calc_aggregate([ours.nDCG @ 20], qrels, run)[ours.nDCG @ 20] == 0.485545
    # an empty run and empty qrels
    assert ours.calc_aggregate([ours.P @ 5], qrels, []) == {ours.P @ 5: 0.0}
    assert list(ours.iter_calc([ours.P @ 5], [], run)) == []
    assert math.isnan(ours.calc_aggregate([ours.P @ 5], [], [])[ours.P @ 5])
    assert ours.calc_aggregate([ours.NumQ], [], []) == {ours.NumQ: 0.0}
    # cwl_eval's P@5 and its other measurements, exactly as ir_measures reports them
    assert set(ours.cwl_eval.iter_calc([ours.P @ 5], qrels, run[:5])) == {
        ours.CwlMetric("0", ours.P @ 5, 0.6000000000000001, 3.0, 1.0, 5.0, 5.0),
        ours.Metric("1", ours.P @ 5, 0.0)}
    # Judged without a cutoff: the whole ranking
    assert [m.value for m in ours.judged.iter_calc([ours.Judged], qrels, run)] == [1.0, 0.25]


def test_ranx_provider_follows_ranx_definitions():
    # The values of ir_measures' ranx tests: binary measures on qrels binarised at rel,
    # nDCG with raw labels, exponential nDCG as ranx adds it (log2 discount, in rank order).
    qrels = list(ours.read_trec_qrels(QRELS_TEXT))[:5]
    run = list(ours.read_trec_run(RUN_TEXT))[:5]

    def value(spelling):
        (metric,) = ours.ranx.iter_calc([ours.parse_measure(spelling)], qrels, run)
        return metric.value

    def burges(labels, k):
        total = 0.0
        for i, g in enumerate(labels[:k]):
            total += (2.0 ** g - 1.0) / np.log2(i + 2.0)
        return total

    assert value("nDCG(dcg='exp-log2')@2") == burges([0, 1], 2) / burges([2, 1], 2)
    assert value("nDCG(dcg='exp-log2')") == burges([0, 1, 2, 1, 0], 5) / burges([2, 1, 1], 3)
    assert value("SetP") == 0.6 and value("SetR(rel=2)") == 1.0
    assert value("RR(rel=2)@2") == 0.0 and value("RR@10") == 0.5
    assert value("AP@2") == 0.5 / 3 and value("Rprec(rel=2)") == 0.0
    assert value("NumRet(rel=1)") == 3.0 and value("Success@2") == 1.0


# ---- nDCG(gains=...) as ir_measures relabels ------------------------------------------------

@SLOW
@given(data=qrels_and_run(max_retrieved=8),
       gains=st.dictionaries(st.integers(0, 3), st.integers(-2, 4), min_size=1, max_size=3),
       cutoff=st.sampled_from([None, 2, 5]), judged_only=st.booleans())
def test_ndcg_gains_relabel_the_qrels_as_ir_measures_does(data, gains, cutoff, judged_only):
    qrels, run = numeric(data)
    # a query judged only negatively is undefined in trec_eval (pytrec_eval may crash)
    assume(all(any(gains.get(label, label) >= 0 for label in docs.values())
               for docs in qrels.values()))
    mine = ours.nDCG(gains=gains, judged_only=judged_only)
    theirs = real.nDCG(gains=gains, judged_only=judged_only)
    if cutoff is not None:
        mine, theirs = mine @ cutoff, theirs @ cutoff
    assert_equal_metrics(ours.iter_calc([mine], qrels, run), real.iter_calc([theirs], qrels, run),
                         1e-12)


def test_negative_gain_without_cutoff_is_ir_measures_half():
    qrels, run = {"q": {"a": 1, "b": 2, "c": 0}}, {"q": {"a": 1.0, "b": 0.5, "c": 2.0}}
    m = ours.nDCG(gains={0: 0, 1: -1, 2: 1})
    assert ours.calc_aggregate([m], qrels, run) == {m: 0.5}
    assert real.calc_aggregate([real.nDCG(gains={0: 0, 1: -1, 2: 1})], qrels, run) == \
        {real.nDCG(gains={0: 0, 1: -1, 2: 1}): 0.5}


# ---- inputs ------------------------------------------------------------------------------------

def test_one_shot_iterators_serve_every_provider_of_a_call():
    qrels, run = list(ours.read_trec_qrels(QRELS_TEXT)), list(ours.read_trec_run(RUN_TEXT))
    measures = [ours.P @ 5, ours.RR @ 2, ours.ERR @ 5, ours.Judged @ 3, ours.RBP(rel=1)]
    want = ours.calc_aggregate(measures, qrels, run)
    assert ours.calc_aggregate(measures, iter(qrels), iter(run)) == want
    ev = ours.evaluator(measures, ours.read_trec_qrels(QRELS_TEXT))
    assert ev.calc_aggregate(ours.read_trec_run(RUN_TEXT)) == want
    assert set(ev.qrel_qids) == {"0", "1"}


def test_calc_ctxt_is_deprecated_but_works():
    qrels = list(ours.read_trec_qrels(QRELS_TEXT))
    with pytest.warns(DeprecationWarning), ours.calc_ctxt([ours.P @ 5], qrels) as calc:
        assert [m.value for m in calc(list(ours.read_trec_run(RUN_TEXT)))] == [0.6, 0.2]


def test_measure_methods_use_the_default_pipeline():
    qrels, run = list(ours.read_trec_qrels(QRELS_TEXT)), list(ours.read_trec_run(RUN_TEXT))
    assert (ours.P @ 5).calc_aggregate(qrels, run) == pytest.approx(0.4)
    agg, per_query = (ours.P @ 5).calc(qrels, run)
    assert agg == pytest.approx(0.4) and len(per_query) == 2
    with pytest.raises(ParameterError, match="`cutoff` of P is required"):
        list(ours.P.iter_calc(qrels, run))
