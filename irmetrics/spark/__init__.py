"""Exact trec_eval evaluation of runs stored on Spark.

Queries are independent, so evaluation partitions perfectly by query: the run and the
qrels are put in one table, hash-partitioned by ``query_id`` (every row of a query, run
and judgments alike, lands in one partition), and each partition is evaluated by
irmetrics' own engine inside the executors (``mapInArrow``: whole Arrow batches, no
Python per row or per query). The executors send back one row per query (its values)
and the driver aggregates them with :meth:`irmetrics.Results.aggregate` in ascending
query-id order, the order of single-machine irmetrics and trec_eval, so per-query
values and aggregates are bit-identical to :func:`irmetrics.evaluate` on the same data.

pyspark (and pyarrow) are needed only here: ``pip install "irmetrics-exact[spark]"``.
"""

from .partitioned import SparkResults, evaluate

__all__ = ["SparkResults", "evaluate"]
