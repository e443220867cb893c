"""irmetrics.spark.evaluate on a local[2] Spark session against single-machine irmetrics.

Skipped, with the reason, when pyspark, pyarrow or Java is missing. One session
(tests/conftest.py) serves the run; few hypothesis examples, because each evaluation is
a Spark job.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.exceptions import (DuplicateEntryError, InputFormatError, MissingQueriesWarning,
                                  NoQueriesError, ParameterError, UnknownMeasureError)
from irmetrics.measures.parse import parse_measures
from tests._cases import qrels_and_run, same_value

pytest.importorskip("pyarrow", reason="irmetrics.spark needs pyarrow (irmetrics-exact[spark])")
pytest.importorskip("pyspark", reason="irmetrics.spark needs pyspark (irmetrics-exact[spark])")

import irmetrics.spark as irm_spark  # noqa: E402

FEW = settings(max_examples=6, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

MEASURES = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "P.5,10", "recall.5", "ndcg_cut.10", "nDCG@3", "RR", "bpref", "infAP",
            "iprec_at_recall.0.5", "success.1"]
#: The hypothesis cases' ids, with non-ASCII ones so that byte order is exercised.
RENAMED = {"a": "\u00e9", "9": "\u65e5\u672c", "B": "Z\u00c4"}


def frames(qrels: dict, run: dict):
    """Flat polars tables of pytrec_eval-shaped dicts (an empty ranking has no row)."""
    q = pl.DataFrame([(RENAMED.get(qid, qid), doc, rel) for qid, docs in qrels.items()
                      for doc, rel in docs.items()],
                     schema={"query_id": pl.String, "doc_id": pl.String,
                             "relevance": pl.Int64}, orient="row")
    r = pl.DataFrame([(RENAMED.get(qid, qid), doc, score) for qid, docs in run.items()
                      for doc, score in docs.items()],
                     schema={"query_id": pl.String, "doc_id": pl.String,
                             "score": pl.Float64}, orient="row")
    return q, r


def to_spark(spark, frame: pl.DataFrame):
    return spark.createDataFrame(frame.to_arrow())


def assert_identical(got, want: irm.Results):
    """Same queries, same names, bit-identical per-query values and aggregates."""
    assert got.names == want.names
    assert got.results.query_ids.tolist() == want.query_ids.tolist()
    for name in want.names:
        assert all(map(same_value, got.results.values(name), want.values(name))), name
    got_agg, want_agg = got.aggregate(), want.aggregate()
    assert list(got_agg) == list(want_agg)
    assert all(same_value(got_agg[n], want_agg[n]) for n in want_agg), (got_agg, want_agg)
    assert got.results.missing_query_ids.tolist() == want.missing_query_ids.tolist()
    assert got.results.ignored_query_ids.tolist() == want.ignored_query_ids.tolist()


@FEW
@given(case=qrels_and_run(max_queries=6), judged_only=st.booleans(),
       max_docs=st.sampled_from([None, 3]), complete=st.booleans(),
       relevance_level=st.sampled_from([1, 2]),
       semantics=st.sampled_from(["trec_eval", "pytrec_eval"]))
def test_spark_equals_single_machine(spark, case, judged_only, max_docs, complete,
                                     relevance_level, semantics):
    q, r = frames(*case)
    options = dict(judged_only=judged_only, max_docs=max_docs, complete=complete,
                   relevance_level=relevance_level, semantics=semantics)
    measures = MEASURES if semantics == "trec_eval" else ["map", "P.5", "ndcg_cut.10", "num_q"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        try:
            want = irm.evaluate(irm.Qrels.from_df(q), irm.Run.from_df(r), measures, **options)
        except NoQueriesError:
            with pytest.raises(NoQueriesError):
                irm_spark.evaluate(to_spark(spark, q), to_spark(spark, r), measures, **options)
            return
        got = irm_spark.evaluate(to_spark(spark, q), to_spark(spark, r), measures,
                                 num_partitions=3, **options)
    assert_identical(got, want)


def test_example_fixture_and_outputs(spark, tmp_path):
    """The bundled example, read by Spark from Parquet: identical to evaluate() on the
    TREC files; the per-query Spark frame equals Results.per_query()."""
    qrels = irm.Qrels.read("fixtures/example/qrels.txt").df.select("query_id", "doc_id",
                                                                  "relevance")
    run = irm.Run.read("fixtures/example/run.txt").df.select("query_id", "doc_id", "score")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    run.write_parquet(tmp_path / "run.parquet")
    measures = ["official", "gm_map"]
    with pytest.warns(MissingQueriesWarning, match="304"):
        want = irm.evaluate("fixtures/example/qrels.txt", "fixtures/example/run.txt", measures)
    with pytest.warns(MissingQueriesWarning, match="304"):
        got = irm_spark.evaluate(str(tmp_path / "qrels.parquet"), tmp_path / "run.parquet",
                                 measures, run_name="bm25")
    assert_identical(got, want)
    frame = pl.from_arrow(got.per_query().toArrow())
    assert frame.to_dicts() == want.per_query().to_dicts()
    assert got.to_dict() == want.to_dict()


#: Every numeric measure of trec_eval's ``all_trec`` (``relstring`` is a string).
ALL_TREC_NUMERIC = [r.measure.name for r in parse_measures(["all_trec"])
                    if r.measure.name != "relstring"]


@pytest.mark.parametrize("qrels_path, run_path, complete", [
    ("fixtures/compare/qrels.txt", "fixtures/compare/bm25.run", False),
    ("fixtures/compare/qrels.txt", "fixtures/compare/dense.run", True),
    ("fixtures/cli/qrels.txt", "fixtures/cli/run_a.txt", True),
])
def test_repository_fixtures_all_trec(spark, qrels_path, run_path, complete):
    """The repository's TREC fixtures (no internet here for DL19 / MS MARCO dev), every
    numeric all_trec measure: bit-identical to irmetrics.evaluate on the files."""
    run = irm.Run.read(run_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        want = irm.evaluate(qrels_path, run_path, ALL_TREC_NUMERIC, complete=complete)
        got = irm_spark.evaluate(
            to_spark(spark, irm.Qrels.read(qrels_path).df.select("query_id", "doc_id",
                                                                   "relevance")),
            to_spark(spark, run.df.select("query_id", "doc_id", "score")),
            ALL_TREC_NUMERIC, complete=complete, run_name=run.name)
    assert_identical(got, want)


def test_query_ids_sorted_by_utf8_bytes(spark):
    """Aggregation order is trec_eval's: query ids by UTF-8 bytes (not by locale, length
    or code units); a sequential sum in another order would differ in the last bits."""
    ids = ["Z", "a", "\u00e9", "\u65e5", "\U0001f600", "10", "9", "\uff21"]
    q = pl.DataFrame({"query_id": ids, "doc_id": ["d"] * len(ids), "relevance": [1] * len(ids)})
    r = pl.DataFrame({"query_id": ids * 2, "doc_id": ["d"] * len(ids) + ["e"] * len(ids),
                      "score": [0.1 * i for i in range(2 * len(ids))]})
    want = irm.evaluate(irm.Qrels.from_df(q), irm.Run.from_df(r), ["map", "recip_rank"])
    got = irm_spark.evaluate(to_spark(spark, q), to_spark(spark, r), ["map", "recip_rank"],
                             num_partitions=4)
    assert got.results.query_ids.tolist() == sorted(ids, key=lambda s: s.encode())
    assert_identical(got, want)


def test_integer_ids_and_boolean_labels(spark):
    """Integer ids become their decimal strings, booleans labels 0/1, as irmetrics does."""
    q = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 11, 10],
                      "relevance": [True, False, True]})
    r = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 11, 11], "score": [1, 2, 3]},
                     schema={"query_id": pl.Int32, "doc_id": pl.Int64, "score": pl.Int32})
    want = irm.evaluate(irm.Qrels.from_df(q), irm.Run.from_df(r), ["map", "P.1"])
    got = irm_spark.evaluate(to_spark(spark, q), to_spark(spark, r), ["map", "P.1"])
    assert_identical(got, want)


@pytest.mark.parametrize("side, rows, match, error", [
    ("run", [("q", "d", 1.0), ("q", "d", 2.0)], "query_id 'q', doc_id 'd'", DuplicateEntryError),
    ("run", [("q", "d", float("nan"))], "<Spark run>.*doc_id 'd'", InputFormatError),
    ("qrels", [("q", "d", 1.5)], "<Spark qrels>", InputFormatError),
    ("run", [("q", "d", 1.0), ("q", None, 2.0)], "<Spark run>: missing doc_id", InputFormatError),
])
def test_bad_rows_are_one_clear_error(spark, side, rows, match, error):
    good = {"run": [("q", "d", 1.0)], "qrels": [("q", "d", 1.0)]}
    third = {"run": "score", "qrels": "relevance"}
    frames_ = {s: spark.createDataFrame(rows if s == side else good[s],
                                        ["query_id", "doc_id", third[s]])
               for s in ("run", "qrels")}
    with pytest.raises(error, match=match) as info:
        irm_spark.evaluate(frames_["qrels"], frames_["run"], ["map"])
    assert "\n" not in str(info.value)


def test_bad_arguments_fail_before_any_job(spark):
    run = spark.createDataFrame([("q", "d", 1.0)], ["query_id", "doc_id", "score"])
    qrels = spark.createDataFrame([("q", "d", 1)], ["query_id", "doc_id", "relevance"])
    with pytest.raises(UnknownMeasureError, match="mapp"):
        irm_spark.evaluate(qrels, run, ["mapp"])
    with pytest.raises(ParameterError, match="`measures` must be numeric measures"):
        irm_spark.evaluate(qrels, run, ["relstring"])
    with pytest.raises(ParameterError, match="`max_docs`"):
        irm_spark.evaluate(qrels, run, ["map"], max_docs=-1)
    with pytest.raises(ParameterError, match="`num_partitions`"):
        irm_spark.evaluate(qrels, run, ["map"], num_partitions=0)
    with pytest.raises(ParameterError, match="`run` must be a Spark DataFrame"):
        irm_spark.evaluate(qrels, {"q": {"d": 1.0}}, ["map"])
    with pytest.raises(InputFormatError, match="<Spark run>: no column 'score'"):
        irm_spark.evaluate(qrels, run.withColumnRenamed("score", "s"), ["map"])
    with pytest.raises(InputFormatError, match="'score' must be numeric"):
        irm_spark.evaluate(qrels, run.selectExpr("query_id", "doc_id", "'x' AS score"), ["map"])
    other = spark.createDataFrame([("x", "d", 1.0)], ["query_id", "doc_id", "score"])
    with pytest.raises(NoQueriesError), warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        irm_spark.evaluate(qrels, other, ["map"])


def test_results_hold_no_spark_rows_on_the_driver(spark):
    """Sanity of the driver-side frame: values are float64 arrays aligned with ids."""
    q = spark.createDataFrame([("q", "d", 1)], ["query_id", "doc_id", "relevance"])
    r = spark.createDataFrame([("q", "d", 1.0)], ["query_id", "doc_id", "score"])
    res = irm_spark.evaluate(q, r, ["map", "P.5"])
    assert res.results.values("map").dtype == np.float64
    assert res.aggregate() == {"map": 1.0, "P_5": 0.2}
