"""Partitions by query id on Spark, irmetrics' engine per partition in the executors,
the driver aggregating in query-id order (see :mod:`irmetrics.spark`)."""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import re
import sys

import numpy as np
import polars as pl

from ..checks import check_int, check_str, parameter_error
from ..containers import DEFAULT_RUN_NAME, FLOAT_LABEL_HINT, Qrels, Run
from ..evaluate import Evaluator, kernel_groups
from ..exceptions import InputFormatError, IrMetricsError
from ..measures.custom import install, user_measures_of
from ..measures.registry import STRING
from ..results import Results, report_query_set

__all__ = ["SparkResults", "evaluate"]

# What a row sent back by an executor stands for (column ``kind``).
_EVALUATED, _MISSING, _IGNORED, _PARTITION, _ERROR = 0, 1, 2, 3, 4
_RUN, _QRELS = 0, 1  # column ``side`` of the partitioned union


def _require_pyspark():
    try:
        import pyarrow  # noqa: F401
        import pyspark.sql  # noqa: F401
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("irmetrics.spark needs pyspark and pyarrow: "
                          'pip install "irmetrics-exact[spark]"') from err


class SparkResults:
    """Result of :func:`evaluate`: per-query values as a Spark DataFrame, and aggregates.

    Attributes
    ----------
    results : irmetrics.Results
        The same object single-machine :func:`irmetrics.evaluate` returns, collected on
        the driver (query ids, ``values(name)``, ``missing_query_ids``, ...).
    """

    def __init__(self, results: Results, spark):
        self.results = results
        self._spark = spark

    def __repr__(self) -> str:
        return f"Spark{self.results!r}"

    @property
    def names(self) -> list:
        """Output names, in trec_eval's print order."""
        return self.results.names

    def aggregate(self) -> dict:
        """Summary values, identical to ``irmetrics.evaluate(...).aggregate()``."""
        return self.results.aggregate()

    def per_query(self, *, include_bookkeeping: bool = False):
        """Spark DataFrame with columns ``query_id``, ``measure``, ``value`` (double), in
        the rows and order of :meth:`irmetrics.Results.per_query`."""
        frame = self.results.per_query(include_bookkeeping=include_bookkeeping)
        return self._spark.createDataFrame(frame.to_arrow())

    def to_dict(self) -> dict:
        """pytrec_eval's shape: ``{query_id: {name: value}}``."""
        return self.results.to_dict()


def evaluate(qrels, run, measures, *, relevance_level=1, judged_only=False, max_docs=None,
             complete=False, semantics="trec_eval", num_docs_in_coll=0,
             run_name=DEFAULT_RUN_NAME, num_partitions=None) -> SparkResults:
    """Evaluate a run held by Spark with trec_eval's measures, exactly as
    :func:`irmetrics.evaluate` does on one machine.

    Parameters
    ----------
    qrels : pyspark.sql.DataFrame or path
        Columns ``query_id``, ``doc_id`` (strings or integers) and ``relevance``
        (integers, booleans or whole floats); a path is read with
        ``spark.read.parquet`` (by the active SparkSession; with none, a local one on
        every core is started: master ``local[*]``). Other columns are ignored.
    run : pyspark.sql.DataFrame or path
        Columns ``query_id``, ``doc_id`` and ``score`` (any numeric type); a path is
        read with ``spark.read.parquet``. Rows need no order: each query is ranked by
        score descending, ties by doc id descending (byte order), as trec_eval does.
    measures : str or list of str
        As for :func:`irmetrics.evaluate` (``"map"``, ``"P.10"``, ``"nDCG@10"``,
        ``"gm_map"``, ``"official"``, ...); string-valued outputs (``relstring``) are
        refused. Measures defined with :func:`irmetrics.define_measure` travel to the
        executors with the job (their functions pickled by value).
    relevance_level, judged_only, max_docs, complete, semantics, num_docs_in_coll
        See :class:`irmetrics.Evaluator`. ``complete=True`` (trec_eval ``-c``) works
        because each qrels query travels to its partition with its judgments.
    run_name : str, default "irmetrics"
        The run tag reported by ``runid``.
    num_partitions : int, optional
        Partitions of the shuffle by query id (default: ``spark.sql.shuffle.partitions``).
        Each partition is evaluated whole in one Python worker, so its rows must fit
        that worker's memory.

    Returns
    -------
    SparkResults
        ``aggregate()`` (a dict), ``per_query()`` (a Spark DataFrame ``query_id,
        measure, value``), ``to_dict()`` and ``results`` (an :class:`irmetrics.Results`).

    Raises
    ------
    InputFormatError
        A missing column, a null id, a non-finite score, a non-whole label or a doc
        ranked twice for a query; names the input, the query id and the doc id.
    ParameterError, UnknownMeasureError
        Bad options or measure names (checked on the driver, before any Spark job).
    NoQueriesError
        Qrels and run share no query id.

    Warns
    -----
    MissingQueriesWarning
        Qrels queries without a ranking were skipped (``complete=False``).

    Notes
    -----
    Arguments come in irmetrics' order, qrels before run (the issue that asked for this
    function wrote ``evaluate(run, qrels, ...)``; every irmetrics function takes qrels
    first). The per-query values (one row of doubles per query) are collected on the
    driver: that is how the aggregate keeps trec_eval's summation order,
    ``mean = ((v_1 + v_2) + ... + v_Q) / Q`` over the queries in ascending byte order of
    their ids (``gm_map``: ``exp`` of that mean of logs), and so stays bit-identical to
    one machine.
    Driver memory is therefore about ``8 x queries x outputs`` bytes plus the query
    ids; the rankings never leave the executors. Ids are compared as the UTF-8 bytes of
    Spark's strings (Latin-1 files are not re-read byte by byte as single-machine
    irmetrics does). trec_eval's ``-Z`` (z-scores against per-topic statistics) is not
    offered here.

    Examples
    --------
    >>> from pyspark.sql import SparkSession                          # doctest: +SKIP
    >>> spark = SparkSession.builder.master("local[*]").getOrCreate()  # doctest: +SKIP
    >>> qrels = spark.createDataFrame([("q1", "d1", 1), ("q1", "d2", 0)],
    ...                               ["query_id", "doc_id", "relevance"])  # doctest: +SKIP
    >>> run = spark.createDataFrame([("q1", "d1", 0.3), ("q1", "d2", 0.9)],
    ...                             ["query_id", "doc_id", "score"])        # doctest: +SKIP
    >>> evaluate(qrels, run, ["map", "P.1"]).aggregate()               # doctest: +SKIP
    {'map': 0.5, 'P_1': 0.0}
    """
    _require_pyspark()
    options = dict(relevance_level=relevance_level, judged_only=judged_only,
                   max_docs=max_docs, complete=complete, semantics=semantics,
                   num_docs_in_coll=num_docs_in_coll)
    # The driver checks options and measure names once, on an empty qrels table, and
    # learns the output names and their order from the same grouping evaluate() uses.
    evaluator = Evaluator(Qrels.from_df(_EMPTY_QRELS), measures, **options)
    if not evaluator.requests:
        raise parameter_error("measures", "at least one measure name", [])
    specs = {name: group[0] for group, requests in kernel_groups(evaluator.requests)
             for req in requests for name in req.output_names}
    strings = [name for name, measure in specs.items() if measure.printed == STRING]
    if strings:
        raise parameter_error("measures", "numeric measures under Spark", strings[0])
    check_str("run_name", run_name, allow_empty=True)
    if num_partitions is not None:
        check_int("num_partitions", num_partitions, min=1)

    spark = _session(run, qrels)
    run_df = _spark_frame(spark, run, "run")
    qrels_df = _spark_frame(spark, qrels, "qrels")
    rows = _partitioned_union(qrels_df, run_df, num_partitions)
    names = list(specs)
    schema = _output_schema(len(names))
    worker = functools.partial(_evaluate_partition, measures=measures, options=options,
                               run_name=run_name, n_outputs=len(names),
                               user_measures=_pickled_by_value(
                                   user_measures_of(evaluator.requests)))
    with _workers_python(spark) as python:
        try:
            collected = pl.DataFrame(pl.from_arrow(rows.mapInArrow(worker, schema).toArrow()))
        except Exception as err:
            # A worker that cannot import what it needs dies in a Java traceback.
            missing = re.search(r"No module named '([^']+)'", str(err))
            if missing is None:
                raise
            hint = ""
            if missing.group(1).split(".")[0] == "irmetrics":
                # Imported here from a folder on sys.path rather than installed?
                folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
                hint = (f"; or, as irmetrics is imported here from {os.path.dirname(folder)},"
                        " put that folder on PYTHONPATH before the SparkSession starts")
            raise ImportError(
                f"the Spark workers' Python ({python}) cannot import {missing.group(1)}: set"
                " PYSPARK_PYTHON (before the SparkSession starts) to an interpreter where"
                f" irmetrics and its dependencies are installed (this driver runs"
                f" {sys.executable}){hint}; see docs/spark.md") from None
    results = _driver_results(collected, names, specs, run_name, complete)
    return SparkResults(report_query_set(results, stacklevel=2), spark)


_EMPTY_QRELS = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                    "relevance": pl.Int64})

#: The interpreter PySpark starts on workers when nobody chose one (pyspark's default).
_PYSPARK_DEFAULT_PYTHON = "python3"


@contextlib.contextmanager
def _workers_python(spark):
    """Run the Python workers of a local Spark on the driver's interpreter while the job
    is set up, unless the user chose one (PYSPARK_PYTHON, spark.pyspark.python, or the
    context's ``pythonExec``); yields the interpreter the workers run.

    PySpark's default, ``python3`` from PATH, is another interpreter than the driver's
    when the driver runs from a virtualenv that is not activated, and its workers then
    die on ``import irmetrics``. On a cluster the driver's path may not exist on the
    workers, so only ``local`` masters are changed.
    """
    try:
        context = spark.sparkContext
        chosen = (os.environ.get("PYSPARK_PYTHON")
                  or context.getConf().get("spark.pyspark.python", None)
                  or context.pythonExec != _PYSPARK_DEFAULT_PYTHON)
        local = str(context.master).startswith("local")
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext: leave it be
        yield os.environ.get("PYSPARK_PYTHON", _PYSPARK_DEFAULT_PYTHON)
        return
    if chosen or not local:
        yield context.pythonExec
        return
    context.pythonExec = sys.executable
    try:
        yield sys.executable
    finally:
        context.pythonExec = _PYSPARK_DEFAULT_PYTHON


def _session(*inputs):
    """The SparkSession of the first DataFrame among ``inputs``, else the active one,
    else a new local one on every core (:data:`LOCAL_MASTER`)."""
    from pyspark.sql import DataFrame, SparkSession

    for value in inputs:
        if isinstance(value, DataFrame):
            return value.sparkSession
    spark = SparkSession.getActiveSession()
    if spark is None:
        # Paths and no session: a local one on every core, as Spark's local[*] gives.
        spark = SparkSession.builder.master(LOCAL_MASTER).appName("irmetrics").getOrCreate()
    return spark


#: The master of the session :func:`evaluate` starts when given paths and none is active.
LOCAL_MASTER = "local[*]"


#: Columns each input must have, and the type they are cast to for the engine.
_COLUMNS = {"run": ("query_id", "doc_id", "score"),
            "qrels": ("query_id", "doc_id", "relevance")}


def _spark_frame(spark, value, what):
    """``value`` as a Spark DataFrame with the columns of ``what``, ids as strings."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(value, (str, os.PathLike)):
        value = spark.read.parquet(os.fspath(value))
    elif not isinstance(value, DataFrame):
        raise parameter_error(what, "a Spark DataFrame or a path to Parquet data",
                              type(value).__name__)
    query_id, doc_id, third = _COLUMNS[what]
    missing = [c for c in _COLUMNS[what] if c not in value.columns]
    if missing:
        raise InputFormatError(f"no column {missing[0]!r} (columns: {value.columns})",
                               path=f"<Spark {what}>")
    for column in (query_id, doc_id):
        id_type = value.schema[column].dataType
        # An array, map or struct cast to a string is '[q1]': it would match nothing.
        if not isinstance(id_type, (T.StringType, T.IntegralType)):
            raise InputFormatError(f"column {column!r} must hold strings or integers (one id"
                                   f" per row); got {id_type.simpleString()}",
                                   path=f"<Spark {what}>")
    kind = value.schema[third].dataType
    if what == "run":
        if not isinstance(kind, T.NumericType):
            raise InputFormatError(f"column 'score' must be numeric; got {kind.simpleString()}",
                                   path="<Spark run>")
        value_col = F.col(third).cast("double")
    else:
        if isinstance(kind, (T.BooleanType, T.IntegralType)):
            value_col = F.col(third).cast("long")
        elif isinstance(kind, T.NumericType):
            value_col = F.col(third).cast("double")  # whole values checked by Qrels.from_df
        else:
            raise InputFormatError("column 'relevance' must be numeric or boolean; got "
                                   f"{kind.simpleString()}", path="<Spark qrels>")
    return value.select(F.col(query_id).cast("string").alias("query_id"),
                        F.col(doc_id).cast("string").alias("doc_id"),
                        value_col.alias(third))


def _partitioned_union(qrels_df, run_df, num_partitions):
    """Run and qrels rows in one table, hash-partitioned by query id, so that every
    partition holds whole queries with their judgments."""
    from pyspark.sql import functions as F

    run_rows = run_df.select("query_id", "doc_id", "score",
                             F.lit(None).cast(qrels_df.schema["relevance"].dataType)
                             .alias("relevance"), F.lit(_RUN).cast("byte").alias("side"))
    qrels_rows = qrels_df.select("query_id", "doc_id", F.lit(None).cast("double")
                                 .alias("score"), "relevance",
                                 F.lit(_QRELS).cast("byte").alias("side"))
    rows = run_rows.unionByName(qrels_rows)
    if num_partitions is None:
        return rows.repartition("query_id")
    return rows.repartition(num_partitions, "query_id")


def _output_schema(n_outputs: int):
    from pyspark.sql import types as T

    fields = [T.StructField("query_id", T.StringType()),
              T.StructField("kind", T.ByteType()),
              T.StructField("count", T.LongType()),
              T.StructField("error", T.BinaryType())]
    fields += [T.StructField(f"v{j}", T.DoubleType()) for j in range(n_outputs)]
    return T.StructType(fields)


def _pickled_by_value(user_measures) -> bytes | None:
    """The user's measures (:func:`irmetrics.define_measure`) pickled for the executors,
    their functions by value: the module that defines them (a notebook, a test, a
    ``--measures-from`` file) need not be importable there."""
    if not user_measures:
        return None
    import sys

    from pyspark import cloudpickle

    modules = {sys.modules.get(m.function.__module__) for m in user_measures}
    registered = [m for m in modules if m is not None and getattr(m, "__file__", None)
                  and m.__name__ != "__main__"
                  and not m.__name__.startswith("irmetrics")
                  and m.__name__ not in cloudpickle.list_registry_pickle_by_value()]
    for module in registered:
        cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(user_measures)
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)


def _evaluate_partition(batches, *, measures, options, run_name, n_outputs,
                        user_measures=None):
    """Executor side: evaluate the whole queries of one partition with irmetrics' engine.

    Yields one Arrow batch: a row per evaluated query (its values), per skipped qrels
    query and per ignored run query, one row with the partition's count of positive
    judgments (for ``-c``'s num_rel), or a single row carrying a pickled error."""
    import pyarrow as pa

    batches = list(batches)
    if not batches:
        return
    table = pl.from_arrow(pa.Table.from_batches(batches))
    if table.height == 0:
        return
    run_rows = table.filter(pl.col("side") == _RUN)
    qrels_rows = table.filter(pl.col("side") == _QRELS)
    for spec in pickle.loads(user_measures) if user_measures else ():
        install(spec, replace=True)  # this worker may hold an older definition
    try:
        what = "qrels"
        qrels = Qrels.from_df(qrels_rows.select("query_id", "doc_id", "relevance"))
        what = "run"
        run = Run.from_df(run_rows.select("query_id", "doc_id", "score"), name=run_name)
        what = None
        results = Evaluator(qrels, measures, **options).evaluate_unchecked(run)
    except IrMetricsError as err:
        if isinstance(err, InputFormatError):
            # Row numbers inside a partition mean nothing to the user: name the input.
            # Labels are integers here (no relevance="float" under Spark).
            reason = re.sub(r"; first seen on row \d+", "", err.reason)
            reason = reason.replace(FLOAT_LABEL_HINT, " (irmetrics.spark reads integer labels)")
            err = type(err)(reason, path=f"<Spark {what}>", query_id=err.query_id,
                            doc_id=err.doc_id)
        yield _batch({"query_id": [None], "kind": [_ERROR], "count": [None],
                      "error": [pickle.dumps(err)]}, n_outputs, 1)
        return
    evaluated = len(results.query_ids)
    ids = np.concatenate([np.asarray(results.query_ids, dtype=object),
                          results.missing_query_ids, results.ignored_query_ids, [None]])
    kinds = np.repeat(np.array([_EVALUATED, _MISSING, _IGNORED, _PARTITION], np.int8),
                      [evaluated, len(results.missing_query_ids),
                       len(results.ignored_query_ids), 1])
    count = np.full(len(ids), None, dtype=object)
    count[-1] = int(np.count_nonzero(qrels.df["relevance"].to_numpy() > 0))
    padding = np.full(len(ids) - evaluated, np.nan)
    values = {f"v{j}": np.concatenate([results.values(name).astype(np.float64), padding])
              for j, name in enumerate(results.names)}
    yield _batch({"query_id": ids, "kind": kinds, "count": count,
                  "error": np.full(len(ids), None, dtype=object), **values},
                 n_outputs, len(ids))


def _batch(columns, n_outputs, n_rows):
    """An Arrow record batch of the output schema (absent value columns are null)."""
    import pyarrow as pa

    arrays = [pa.array(columns["query_id"], pa.string()),
              pa.array(columns["kind"], pa.int8()),
              pa.array(columns["count"], pa.int64()),
              pa.array(columns["error"], pa.binary())]
    names = ["query_id", "kind", "count", "error"]
    for j in range(n_outputs):
        values = columns.get(f"v{j}")
        arrays.append(pa.array(values, pa.float64()) if values is not None
                      else pa.nulls(n_rows, pa.float64()))
        names.append(f"v{j}")
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _driver_results(collected: pl.DataFrame, names, specs, run_name, complete) -> Results:
    """Results from the executors' rows, queries in ascending byte order (polars sorts
    strings by their UTF-8 bytes, trec_eval's order), so that the aggregates sum in
    the order single-machine irmetrics sums."""
    errors = collected.filter(pl.col("kind") == _ERROR)
    if errors.height:
        raise pickle.loads(errors["error"][0])
    evaluated = collected.filter(pl.col("kind") == _EVALUATED).sort("query_id")
    query_ids = np.asarray(evaluated["query_id"].to_list(), dtype=object)
    columns = {name: evaluated[f"v{j}"].to_numpy().astype(np.float64, copy=True)
               for j, name in enumerate(names)}

    def ids_of(kind):
        return np.asarray(collected.filter(pl.col("kind") == kind)["query_id"].sort()
                          .to_list(), dtype=object)

    positive_total = collected.filter(pl.col("kind") == _PARTITION)["count"].sum()
    return Results(query_ids, columns, specs, run_name=run_name,
                   complete_num_rel=int(positive_total) if complete else None,
                   missing_query_ids=ids_of(_MISSING), ignored_query_ids=ids_of(_IGNORED))
