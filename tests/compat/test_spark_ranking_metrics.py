"""irmetrics.compat.spark.RankingMetrics against Spark MLlib's own RankingMetrics.

Three oracles: the plain loops of tests/reference/spark_ref.py (many hypothesis cases,
no Spark), pyspark's Python class on a local[2] session (what Python users get; it
drops relevance values), and Spark's Scala class built through the JVM gateway on
hypothesis cases (binary and graded nDCG; the JVM route avoids a Python worker per
metric call). Spark cases are skipped, with
the reason, when pyspark or Java is missing.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.compat.spark import RankingMetrics
from irmetrics.exceptions import ParameterError, ShapeError
from tests.reference import spark_ref

MANY = settings(max_examples=150, deadline=None)
FEW = settings(max_examples=5, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CUTOFFS = (1, 2, 3, 5, 10)
#: Spark's means add per-query values in another order (StatCounter): ulps apart.
TOLERANCE = dict(rel_tol=1e-12, abs_tol=1e-12)


@st.composite
def ranking_rows(draw, *, items=st.integers(0, 9), graded=True, min_queries=0):
    """Rows ``(pred, labels[, relevance])``: duplicates in both lists, empty lists,
    relevance lists shorter or longer than the labels, zero and negative values."""
    n = draw(st.integers(min_queries, 8))
    rows = []
    for _ in range(n):
        pred = draw(st.lists(items, max_size=12))
        lab = draw(st.lists(items, max_size=6))
        if graded and draw(st.booleans()):
            rel = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 0.5, -1.0]),
                                max_size=len(lab) + 1))
            rows.append((pred, lab, rel))
        else:
            rows.append((pred, lab))
    return rows


def all_metrics(metrics, cutoffs=CUTOFFS):
    """``{name: value}`` of every metric at every cutoff, from a RankingMetrics-like object
    (ours or Spark's; every Spark call is a job, hence fewer cutoffs there)."""
    out = {"meanAveragePrecision": metrics.meanAveragePrecision}
    for k in cutoffs:
        out[f"precisionAt({k})"] = metrics.precisionAt(k)
        out[f"recallAt({k})"] = metrics.recallAt(k)
        out[f"meanAveragePrecisionAt({k})"] = metrics.meanAveragePrecisionAt(k)
        out[f"ndcgAt({k})"] = metrics.ndcgAt(k)
    return out


def reference_metrics(rows, *, graded):
    out = {"meanAveragePrecision": spark_ref.map_all(rows)}
    for k in CUTOFFS:
        out[f"precisionAt({k})"] = spark_ref.precision_at(rows, k)
        out[f"recallAt({k})"] = spark_ref.recall_at(rows, k)
        out[f"meanAveragePrecisionAt({k})"] = spark_ref.map_at(rows, k)
        out[f"ndcgAt({k})"] = spark_ref.ndcg_at(rows, k, graded=graded)
    return out


def assert_close(got: dict, want: dict):
    assert list(got) == list(want)
    for name in want:
        if math.isnan(want[name]):
            assert math.isnan(got[name]), name
        else:
            assert math.isclose(got[name], want[name], **TOLERANCE), (name, got[name],
                                                                       want[name])


@MANY
@given(rows=ranking_rows() | ranking_rows(items=st.sampled_from(["a", "b", "c", "\u00e9"])),
       graded=st.booleans())
def test_equals_reference_loops(rows, graded):
    assert_close(all_metrics(RankingMetrics(rows, graded=graded)),
                 reference_metrics(rows, graded=graded))


def test_pyspark_docstring_example():
    """pyspark's own doctest values (printed to 2 digits there; here to the last digit,
    as printed by pyspark 4.3 on this machine)."""
    m = RankingMetrics([([1, 6, 2, 7, 8, 3, 9, 10, 4, 5], [1, 2, 3, 4, 5]),
                        ([4, 1, 5, 6, 2, 7, 3, 8, 9, 10], [1, 2, 3]),
                        ([1, 2, 3, 4, 5], [])])
    assert m.precisionAt(5) == 0.26666666666666666
    assert m.meanAveragePrecision == 0.35502645502645497
    assert m.ndcgAt(3) == 0.33333333333333326


def test_graded_gains_by_hand():
    """pred a b a; labels a c with relevance 2, 1: DCG@3 = 3/ln 2 + 0 + 3/ln 4 (a counted
    twice), ideal = 3/ln 2 + 1/ln 3 (labels in the order given); a second query with
    labels but no hit scores 0."""
    rows = [(["a", "b", "a"], ["a", "c"], [2.0, 1.0]), (["x"], ["y"], [])]
    want = (3 / math.log(2) + 3 / math.log(4)) / (3 / math.log(2) + 1 / math.log(3)) / 2
    assert math.isclose(RankingMetrics(rows, graded=True).ndcgAt(3), want, rel_tol=1e-15)
    binary = (1 / math.log(2) + 1 / math.log(4)) / (1 / math.log(2) + 1 / math.log(3)) / 2
    assert math.isclose(RankingMetrics(rows).ndcgAt(3), binary, rel_tol=1e-15)


def test_docs_side_by_side_is_current(capsys):
    """docs/spark.md prints what its side-by-side example really prints."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "spark.md").read_text()
    code, shown = doc.split("```python\nimport irmetrics as irm\n", 1)[1].split(
        "```\n\nprints\n\n```\n", 1)
    exec("import irmetrics as irm\n" + code, {})
    assert capsys.readouterr().out == shown.split("```", 1)[0]


def test_bad_input_is_one_clear_error():
    with pytest.raises(ParameterError, match="`k` must be a positive integer; got 0"):
        RankingMetrics([([1], [1])]).precisionAt(0)
    with pytest.raises(ShapeError, match="at index 1"):
        RankingMetrics([([1], [1]), ([1],)])
    with pytest.raises(ParameterError, match="`relevance`"):
        RankingMetrics([([1], [1], ["high"])], graded=True)
    with pytest.raises(ParameterError, match="`graded`"):
        RankingMetrics([([1], [1])], graded=1)
    assert math.isnan(RankingMetrics([]).ndcgAt(3))


# --- against Spark itself -------------------------------------------------------------

def _pyspark_metrics(spark, rows):
    from pyspark.mllib.evaluation import RankingMetrics as SparkRankingMetrics

    return SparkRankingMetrics(spark.sparkContext.parallelize(rows, 1))


def test_equals_pyspark(spark):
    """pyspark's Python class (the Scala one with relevance dropped, which the hypothesis
    cases below check in depth) on 400 random queries with string ids, rankings up to 60
    long with duplicates, empty rankings and empty ground truths, and relevance lists it
    ignores: every metric at every cutoff equals ours with ``graded=False``."""
    rng = np.random.default_rng(13)
    docs = np.array([f"doc{i}" for i in range(80)])
    rows = [(docs[rng.integers(0, 80, rng.integers(0, 60))].tolist(),
             docs[rng.integers(0, 80, rng.integers(0, 12))].tolist(),
             rng.integers(0, 4, rng.integers(0, 12)).astype(float).tolist())
            for _ in range(400)]
    assert_close(all_metrics(RankingMetrics(rows), (1, 5, 20)),
                 all_metrics(_pyspark_metrics(spark, rows), (1, 5, 20)))


def _scala_metrics(spark, rows):
    """Spark's Scala RankingMetrics on ``(pred, labels, relevance)`` rows, built through
    the JVM gateway (the route that keeps relevance values)."""
    sc = spark.sparkContext
    jvm, gateway = sc._jvm, sc._gateway

    def java_array(values, cls):
        array = gateway.new_array(cls, len(values))
        for i, value in enumerate(values):
            array[i] = value
        return array

    tuples = jvm.java.util.ArrayList()
    for row in rows:
        pred, lab = row[0], row[1]
        rel = [float(v) for v in row[2]] if len(row) == 3 else []
        tuples.add(jvm.scala.Tuple3(java_array(pred, jvm.java.lang.Object),
                                    java_array(lab, jvm.java.lang.Object),
                                    java_array(rel, jvm.double)))
    rdd = sc._jsc.parallelize(tuples, 2).rdd()
    scala = jvm.org.apache.spark.mllib.evaluation.RankingMetrics(
        rdd, jvm.scala.reflect.ClassTag.Any())

    class Wrapped:  # the Scala object's attribute is a method
        meanAveragePrecision = scala.meanAveragePrecision()
        precisionAt, recallAt = scala.precisionAt, scala.recallAt
        meanAveragePrecisionAt, ndcgAt = scala.meanAveragePrecisionAt, scala.ndcgAt

    return Wrapped


@FEW
@given(rows=ranking_rows(min_queries=1)
       | ranking_rows(items=st.sampled_from(["a", "b", "c", "\u00e9"]), min_queries=1))
def test_equals_spark_scala(spark, rows):
    assert_close(all_metrics(RankingMetrics(rows, graded=True)),
                 all_metrics(_scala_metrics(spark, rows)))
