"""Measures defined in Python in the ir_measures drop-in (irmetrics.compat.ir_measures:
define, define_byquery, registered_measure, the runtime provider) against the real
ir_measures 0.4.3 on hypothesis cases, alone and mixed with built-in measures in one
call, and the behaviours its own runtime tests check (facts carried over; the test code
is ours)."""

from __future__ import annotations

import math
import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.compat import ir_measures as ours
from irmetrics.exceptions import ParameterError, UnknownMeasureError
from tests._cases import qrels_and_run

pd = pytest.importorskip("pandas")
real = pytest.importorskip("ir_measures")


def precision_by_query(qrels, run):
    run = run.merge(qrels, "left", on=["doc_id"])
    return (run["relevance"] > 0).sum() / len(run)


def reciprocal_rank_by_query(qrels, run):
    run = run.merge(qrels, "left", on=["doc_id"])
    hits = (run["relevance"].fillna(-1) >= 1).to_numpy()
    return 1.0 / (hits.argmax() + 1) if hits.any() else 0.0


def rows_and_labels(qrels, run):
    """All queries at once: ranked rows plus the query's label total (qrels-only
    queries are left to the default)."""
    totals = qrels.groupby("query_id")["relevance"].sum()
    for query_id, rows in run.groupby("query_id"):
        yield query_id, float(len(rows) + totals.get(query_id, 0))


def first_doc_label(qrels, run):
    """Depends on the order of tied scores: the run must be sorted as ir_measures does."""
    run = run.merge(qrels, "left", on=["query_id", "doc_id"])
    for query_id, rows in run.groupby("query_id"):
        yield query_id, float(rows["relevance"].fillna(-5).iloc[0])


CASES = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def as_list(metrics):
    return [(m.query_id, str(m.measure), m.value) for m in metrics]


def same(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) if isinstance(a, float) and math.isnan(a) \
        else a == b


@CASES
@given(case=qrels_and_run(max_label=3), cutoff=st.one_of(st.none(), st.integers(1, 6)))
def test_the_same_metrics_as_ir_measures(case, cutoff):
    qrels, run = case
    for impl, by_query in [(precision_by_query, True), (reciprocal_rank_by_query, True),
                           (rows_and_labels, False), (first_doc_label, False)]:
        make_ours = ours.define_byquery if by_query else ours.define
        make_real = real.define_byquery if by_query else real.define
        mine, theirs = make_ours(impl, name="M"), make_real(impl, name="M")
        if cutoff is not None:
            mine, theirs = mine @ cutoff, theirs @ cutoff
        assert str(mine) == str(theirs) and mine == theirs
        want = as_list(theirs.iter_calc(qrels, run))
        got = as_list(mine.iter_calc(qrels, run))
        assert len(got) == len(want)
        assert all(g[:2] == w[:2] and same(g[2], w[2]) for g, w in zip(got, want)), impl
        assert same(mine.calc_aggregate(qrels, run), theirs.calc_aggregate(qrels, run))


QRELS = "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 0\n1 0 D5 2\n"
RUN = ("0 0 D0 1 0.8 run\n0 0 D2 2 0.7 run\n0 0 D1 3 0.3 run\n0 0 D3 4 0.4 run\n"
       "0 0 D4 5 0.1 run\n1 0 D1 1 0.8 run\n1 0 D3 2 0.7 run\n1 0 D4 3 0.3 run\n"
       "1 0 D2 4 0.4 run\n")


def namedtuples():
    return list(ours.read_trec_qrels(QRELS)), list(ours.read_trec_run(RUN))


@pytest.mark.parametrize("by_query", [True, False])
def test_precision_at_cutoffs_on_namedtuples(by_query):
    qrels, run = namedtuples()
    if by_query:
        measure = ours.define_byquery(precision_by_query)
    else:
        def precision(qrels, run):
            run = run.merge(qrels, "left", on=["query_id", "doc_id"])
            for query_id, rows in run.groupby("query_id"):
                yield query_id, (rows["relevance"] > 0).sum() / len(rows)
        measure = ours.define(precision)
    for k, q0, aggregate in [(1, 0.0, 0.0), (2, 0.5, 0.25), (3, 2 / 3, 1 / 3)]:
        result = list((measure @ k).iter_calc(qrels, run))
        assert [(m.query_id, m.value) for m in result] == [("0", q0), ("1", 0.0)]
        assert (measure @ k).calc_aggregate(qrels, run) == aggregate
    for empty in [(qrels, []), ([], run), ([], [])]:  # empty inputs are fine
        list((measure @ 2).iter_calc(*empty))


def test_qrels_and_runs_that_are_not_about_documents():
    def common_prefix(a: str, b: str) -> int:
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    length = ours.define_byquery(lambda qrels, run: len(run.iloc[0]["answer"]), name="Len")
    prefix = ours.define_byquery(lambda qrels, run: common_prefix(
        qrels.iloc[0]["gold"], run.iloc[0]["answer"]), name="Prefix")
    gold = pd.DataFrame([["q1", "the cat sat"]], columns=["query_id", "gold"])
    answer = pd.DataFrame([["q1", "the cap"]], columns=["query_id", "answer"])
    got = {str(m.measure): m.value for m in ours.iter_calc([length, prefix], gold, answer)}
    assert got == {"Len": 7, "Prefix": 6}


def test_measure_objects():
    unnamed = ours.define(lambda qrels, run: [])
    assert repr(unnamed).startswith("<irmetrics.compat.ir_measures.custom.RuntimeMeasure")
    assert isinstance(unnamed, ours.Measure)
    assert unnamed != unnamed @ 2  # as in ir_measures: an unnamed measure is its object
    named = ours.define_byquery(precision_by_query)
    assert str(named) == "precision_by_query" and str(named @ 5) == "precision_by_query@5"
    assert named @ 5 == named(cutoff=5) == real.define_byquery(precision_by_query) @ 5
    assert hash(named @ 5) == hash(named(cutoff=5)) and (named @ 5)["cutoff"] == 5
    assert named.NAME == "precision_by_query" and named.DEFAULT == 0.0
    assert named.RUN_INPUTS == ["query_id", "doc_id", "score"]
    assert named.QREL_INPUTS == ["query_id", "doc_id", "relevance"]
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ParameterError, match="`cutoff` must be a non-negative integer"):
            named @ bad
    with pytest.raises(ParameterError, match="among"):
        named(alpha=1)
    no_cutoff = ours.define(lambda qrels, run: [], name="Whole", support_cutoff=False)
    with pytest.raises(ParameterError, match="among"):
        no_cutoff @ 3
    qrels, run = namedtuples()
    result = (named @ 2).calc(qrels, run)
    assert result.aggregated == 0.25 and [m.value for m in result.per_query] == [0.5, 0.0]


def test_inputs_a_measure_needs():
    def made(lib):
        a = lib.define(lambda qrels, run: [], run_inputs=["query_id"],
                       qrel_inputs=["query_id", "doc_id", "x"])
        return a, lib.define(lambda qrels, run: []), lib.P @ 5

    for lib in (ours, real):  # the same answers from both
        a, b, p5 = made(lib)
        provider = lib.providers.RuntimeProvider()
        for inputs, want in [(provider.run_inputs([a, b]), {"query_id", "doc_id", "score"}),
                             (provider.run_inputs([a]), {"query_id"}),
                             (provider.run_inputs([a, p5]), {"query_id"}),
                             (lib.run_inputs([a]), {"query_id"}),
                             (lib.run_inputs([a, p5]), {"query_id", "doc_id", "score"}),
                             (lib.DefaultPipeline.run_inputs([a, b]),
                              {"query_id", "doc_id", "score"}),
                             (provider.qrel_inputs([a, b]),
                              {"query_id", "doc_id", "relevance", "x"}),
                             (provider.qrel_inputs([a]), {"query_id", "doc_id", "x"}),
                             (lib.qrel_inputs([a]), {"query_id", "doc_id", "x"}),
                             (lib.qrel_inputs([a, p5]), {"query_id", "doc_id", "relevance", "x"})]:
            assert set(inputs) == want, lib
    # irmetrics' own user measures read what the built-in ones read.
    irm.define_measure("UmInputs", lambda view: view.num_ret)
    try:
        measure = ours.registered_measure("UmInputs")
        assert set(ours.run_inputs([measure])) == {"query_id", "doc_id", "score"}
        assert set(ours.qrel_inputs([measure])) == {"query_id", "doc_id", "relevance"}
    finally:
        irm.remove_measure("UmInputs")


@pytest.mark.parametrize("error", [KeyError, ValueError, AttributeError, ModuleNotFoundError])
def test_a_failing_impl_raises_its_own_error_naming_the_measure_and_the_query(error):
    # As in ir_measures: the user's exception reaches the caller unchanged (PyTerrier's
    # ``except KeyError`` catches it); Python 3.11+ adds a note naming measure and query.
    def fails(qrels, run):
        if run["query_id"].iloc[0] == "1":
            raise error("missing column")
        return 1.0

    qrels, run = namedtuples()
    for lib in (ours, real):
        with pytest.raises(error, match="missing column") as info:
            list((lib.define_byquery(fails) @ 3).iter_calc(qrels, run))
        assert type(info.value) is error
    if sys.version_info >= (3, 11):
        with pytest.raises(error) as info:
            list((ours.define_byquery(fails) @ 3).iter_calc(qrels, run))
        assert info.value.__notes__ == ["(raised by the impl of measure 'fails@3' on query '1')"]

    def whole(qrels, run):
        yield "0", 1.0
        raise error("halfway")

    with pytest.raises(error, match="halfway") as info:
        list(ours.define(whole, name="Whole").iter_calc(qrels, run))
    assert type(info.value) is error
    if sys.version_info >= (3, 11):
        assert info.value.__notes__ == ["(raised by the impl of measure 'Whole')"]


def test_other_inputs_and_measures():
    import polars as pl

    qrels = pl.DataFrame({"query_id": ["a", "a"], "doc_id": ["x", "y"], "relevance": [1, 0]})
    run = pl.DataFrame({"query_id": ["a", "a"], "doc_id": ["x", "y"], "score": [0.5, 1.0]})
    assert (ours.define_byquery(precision_by_query) @ 1).calc_aggregate(qrels, run) == 0.0
    with pytest.raises(ParameterError, match="`measures` must be a list of measures"):
        ours.evaluator(ours.define(lambda q, r: []), qrels)
    with pytest.raises(ParameterError, match="unsupported measure M@2: the pytrec_eval"):
        ours.pytrec_eval.calc_aggregate([ours.define(lambda q, r: [], name="M") @ 2],
                                        qrels, run)
    with pytest.raises(ParameterError, match="unsupported measure P@2: the runtime"):
        ours.runtime.calc_aggregate([ours.P @ 2], qrels, run)
    with pytest.raises(ParameterError, match="namedtuples"):
        ours.define(lambda q, r: []).calc_aggregate([("a", "x", 1)], run)


# ---- measures defined in Python beside the built-in ones, in one call ------------------


def mixed(lib, cutoff):
    """Two measures of define()/define_byquery() among built-in measures of five
    providers (pytrec_eval, msmarco, cwl_eval), as a user would list them (not Judged:
    the real judged provider divides by zero on an empty ranking)."""
    return [lib.define_byquery(precision_by_query, name="MyP") @ cutoff, lib.nDCG @ cutoff,
            lib.define(rows_and_labels, name="Rows"), lib.AP, lib.P(rel=2) @ cutoff,
            lib.RR @ cutoff, lib.Bpref, lib.RBP(rel=1)]


RUNTIME_NAMES = ("MyP", "Rows")


def runtime_first(metrics) -> tuple[list, list]:
    """The metrics of the runtime provider (a prefix), and the others sorted."""
    metrics = [(m.query_id, str(m.measure), m.value) for m in metrics]
    n = sum(1 for m in metrics if m[1].split("@")[0] in RUNTIME_NAMES)
    assert all(m[1].split("@")[0] in RUNTIME_NAMES for m in metrics[:n])
    return metrics[:n], sorted(metrics[n:], key=lambda m: m[:2])


def same_metrics(got: list, want: list, tolerance: float = 0.0) -> bool:
    """The same (query, measure) pairs in the same order, values equal (within
    ``tolerance``: cwl_eval's RBP differs from the engine's in the last bit)."""
    return len(got) == len(want) and all(
        g[:2] == w[:2] and (same(g[2], w[2]) or abs(g[2] - w[2]) <= tolerance)
        for g, w in zip(got, want))


MIXED_CASES = settings(CASES, max_examples=15)


def non_empty(case):
    """The case without empty rankings: ir_measures hands them to pytrec_eval, which may
    crash on them (the drop-in gives them the default 0.0, tested elsewhere)."""
    qrels, run = case
    run = {q: docs for q, docs in run.items() if docs}
    assume(run)
    return qrels, run


@MIXED_CASES
@given(case=qrels_and_run(max_label=3), cutoff=st.integers(1, 6))
def test_define_and_built_in_measures_in_one_call(case, cutoff):
    qrels, run = non_empty(case)
    mine, theirs = mixed(ours, cutoff), mixed(real, cutoff)
    assert [str(m) for m in mine] == [str(m) for m in theirs]
    # iter_calc: the runtime provider's metrics first, in the real library's order
    # (both iterate a set of the same spellings); the others, which ir_measures yields
    # in its providers' orders, as a set.
    got_runtime, got_rest = runtime_first(ours.iter_calc(mine, qrels, run))
    want_runtime, want_rest = runtime_first(real.iter_calc(theirs, qrels, run))
    assert same_metrics(got_runtime, want_runtime)
    assert same_metrics(got_rest, want_rest, 1e-12)
    # ... and in ir_measures' order (its providers', one process, one hash seed)
    assert [(m.query_id, str(m.measure)) for m in ours.iter_calc(mine, qrels, run)] == \
        [(m.query_id, str(m.measure)) for m in real.iter_calc(theirs, qrels, run)]
    # calc_aggregate: the same measures and values, in ir_measures' order.
    got = ours.calc_aggregate(mine, qrels, run)
    want = {str(m): v for m, v in real.calc_aggregate(theirs, qrels, run).items()}
    assert list(map(str, got)) == list(want)
    for m, value in got.items():
        if str(m).split("@")[0] in RUNTIME_NAMES:
            assert same(value, want[str(m)]), m  # summed in the same order: bit for bit
        else:
            assert value == pytest.approx(want[str(m)], rel=1e-12, abs=1e-15), m
    # calc: the same aggregates, and per_query is what iter_calc yields.
    result = ours.calc(mine, qrels, run)
    assert result.aggregated == got
    assert runtime_first(result.per_query) == (got_runtime, got_rest)


@MIXED_CASES
@given(case=qrels_and_run(max_label=2), cutoff=st.integers(1, 4))
def test_an_evaluator_of_define_and_built_in_measures_for_many_runs(case, cutoff):
    qrels, run = non_empty(case)
    reversed_run = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    mine = ours.evaluator(mixed(ours, cutoff), qrels)
    theirs = real.evaluator(mixed(real, cutoff), qrels)
    for r in (run, reversed_run, run):
        got_runtime, got_rest = runtime_first(mine.iter_calc(r))
        want_runtime, want_rest = runtime_first(theirs.iter_calc(r))
        assert same_metrics(got_runtime, want_runtime)
        assert same_metrics(got_rest, want_rest, 1e-12)
        got = {str(m): v for m, v in mine.calc_aggregate(r).items()}
        want = {str(m): v for m, v in theirs.calc_aggregate(r).items()}
        assert got.keys() == want.keys()
        assert all(got[k] == pytest.approx(want[k], rel=1e-12, abs=1e-15) for k in got)


def test_one_shot_iterators_and_pandas_frames_with_mixed_measures():
    qrels_rows, run_rows = namedtuples()
    for lib in (ours, real):
        assert lib.DefaultPipeline.providers[0] is lib.runtime
    mine, theirs = mixed(ours, 3), mixed(real, 3)
    want = real.calc_aggregate(theirs, iter(qrels_rows), iter(run_rows))
    got = ours.calc_aggregate(mine, iter(qrels_rows), iter(run_rows))
    assert {str(m): v for m, v in got.items()} == pytest.approx(
        {str(m): v for m, v in want.items()}, rel=1e-12)
    qrels = pd.DataFrame(qrels_rows)
    run = pd.DataFrame(run_rows)
    got = ours.calc_aggregate(mine, qrels, run)
    assert {str(m): v for m, v in got.items()} == pytest.approx(
        {str(m): v for m, v in want.items()}, rel=1e-12)
    assert qrels.equals(pd.DataFrame(qrels_rows)) and run.equals(pd.DataFrame(run_rows))


def test_irmetrics_user_measures_beside_define_and_built_in_measures():
    qrels, run = namedtuples()
    irm.define_measure("UmHits", lambda view, weight=1.0: view.count(view.is_rel) * weight)
    try:
        hits = ours.registered_measure("UmHits")
        assert ours.parse_measure("UmHits(weight=0.5)@2") == hits(weight=0.5) @ 2
        with pytest.raises(UnknownMeasureError):
            ours.parse_measure("UmHitz@2")
        measures = [hits(weight=0.5) @ 2, "UmHits@3", ours.define_byquery(precision_by_query) @ 2,
                    ours.P @ 2, "AP"]
        got = ours.calc_aggregate(measures, qrels, run)
        # ir_measures' order: a set's (two providers: runtime and pytrec_eval)
        assert list(got) == list(set(ours.parse_measure(m) for m in measures))
        qrels_dict, run_dict = {}, {}
        for row in qrels:
            qrels_dict.setdefault(row.query_id, {})[row.doc_id] = row.relevance
        for row in run:
            run_dict.setdefault(row.query_id, {})[row.doc_id] = row.score
        want = irm.evaluate(qrels_dict, run_dict, ["UmHits(weight=0.5)@2", "UmHits@3"]).to_dict()
        assert got[hits(weight=0.5) @ 2] == pytest.approx(
            sum(want[q]["UmHits(weight=0.5)@2"] for q in ("0", "1")) / 2)
        assert got[hits @ 3] == pytest.approx(sum(want[q]["UmHits@3"] for q in ("0", "1")) / 2)
        theirs = real.calc_aggregate([real.define_byquery(precision_by_query) @ 2, real.P @ 2,
                                      real.AP], qrels, run)
        by_name = {str(m): v for m, v in got.items()}
        for m, value in theirs.items():
            assert by_name[str(m)] == pytest.approx(value, rel=1e-12)
        per_query = [(m.query_id, str(m.measure)) for m in ours.iter_calc(measures, qrels, run)]
        assert per_query[:2] == [("0", "precision_by_query@2"), ("1", "precision_by_query@2")]
        assert sorted(per_query[2:]) == sorted((q, s) for q in ("0", "1") for s in (
            "UmHits(weight=0.5)@2", "UmHits@3", "P@2", "AP"))
    finally:
        irm.remove_measure("UmHits")
