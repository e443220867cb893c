"""ir_measures' define() and define_byquery() (irmetrics.compat.ir_measures_define)
against the real ir_measures 0.4.3 on hypothesis cases, and the behaviours its own
runtime tests check (facts carried over; the test code is ours)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.compat import ir_measures_define as ours
from irmetrics.exceptions import ParameterError, UserMeasureError
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
    from irmetrics.compat import ir_measures as dropin

    return list(dropin.read_trec_qrels(QRELS)), list(dropin.read_trec_run(RUN))


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
    assert repr(unnamed).startswith("<irmetrics.compat.ir_measures_define.RuntimeMeasure")
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
    a = ours.define(lambda qrels, run: [], run_inputs=["query_id"],
                    qrel_inputs=["query_id", "doc_id", "x"])
    b = ours.define(lambda qrels, run: [])
    assert set(ours.runtime_run_inputs([a, b])) == {"query_id", "doc_id", "score"}
    assert set(ours.runtime_run_inputs([a])) == {"query_id"}
    assert set(ours.runtime_qrel_inputs([a, b])) == {"query_id", "doc_id", "relevance", "x"}
    assert set(ours.runtime_qrel_inputs([a])) == {"query_id", "doc_id", "x"}
    from irmetrics.compat import ir_measures as dropin

    assert set(ours.run_inputs([a, dropin.P @ 5])) == {"query_id", "doc_id", "score"}
    assert set(ours.runtime_run_inputs([a, dropin.P @ 5])) == {"query_id"}
    assert set(ours.qrel_inputs([a, dropin.P @ 5])) == {"query_id", "doc_id", "relevance", "x"}


def test_a_failing_impl_names_the_measure_and_the_query():
    def fails(qrels, run):
        if run["query_id"].iloc[0] == "1":
            raise KeyError("missing column")
        return 1.0

    qrels, run = namedtuples()
    with pytest.raises(UserMeasureError, match=r"'fails@3' failed on query '1': KeyError"):
        list((ours.define_byquery(fails) @ 3).iter_calc(qrels, run))

    def whole(qrels, run):
        yield "0", 1.0
        raise ValueError("halfway")

    with pytest.raises(UserMeasureError, match="'Whole' failed: ValueError: halfway") as info:
        list(ours.define(whole, name="Whole").iter_calc(qrels, run))
    assert info.value.query_id is None and isinstance(info.value.__cause__, ValueError)


def test_other_inputs_and_measures():
    import polars as pl

    qrels = pl.DataFrame({"query_id": ["a", "a"], "doc_id": ["x", "y"], "relevance": [1, 0]})
    run = pl.DataFrame({"query_id": ["a", "a"], "doc_id": ["x", "y"], "score": [0.5, 1.0]})
    assert (ours.define_byquery(precision_by_query) @ 1).calc_aggregate(qrels, run) == 0.0
    with pytest.raises(ParameterError, match="`measures` must be measures of define"):
        ours.evaluator(["P@5"], qrels)
    with pytest.raises(ParameterError, match="namedtuples"):
        ours.define(lambda q, r: []).calc_aggregate([("a", "x", 1)], run)
