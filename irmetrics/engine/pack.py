"""pack(): the one place where ordering, ``max_docs``, the query set and ``complete`` happen.

Input tables are polars frames with string ids:

* qrels: ``query_id``, ``doc_id``, ``relevance`` (Int64);
* run: ``query_id``, ``doc_id``, ``score`` (Float64), at most one row per (query, doc).

Query ids become dense codes in ascending byte order, so the final ranking is one
numeric sort on ``(query code, score descending, doc id descending by bytes)``:
trec_eval's order (spec §3.1). The rank column of a run is never read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from .ranked import NOT_IN_POOL, POOL_UNJUDGED, RankedLists

#: trec_eval's placeholder document for qrels queries absent from the run (``-c``).
BOGUS_DOC_ID = "ceci_nest_pas_un_docno"

SEMANTICS = ("trec_eval", "pytrec_eval")


@dataclass(frozen=True)
class EncodedQrels:
    """Qrels prepared once and reused for every run (see ``Evaluator``).

    ``table`` holds ``query_id``, ``doc_id``, ``code`` (the trec_eval relevance code:
    the label, or -2 for negative labels), sorted by query id.
    """

    table: pl.DataFrame
    query_ids: np.ndarray  # unique qrels query ids, ascending byte order
    rel_hist: np.ndarray  # (len(query_ids), n_levels)
    positive_total: int


def encode_qrels(qrels: pl.DataFrame) -> EncodedQrels:
    """Encode a qrels table: sorted query ids, per-query label histogram, codes."""
    table = qrels.select(
        pl.col("query_id"),
        pl.col("doc_id"),
        pl.when(pl.col("relevance") < 0)
        .then(pl.lit(POOL_UNJUDGED, dtype=pl.Int64))
        .otherwise(pl.col("relevance"))
        .alias("code"),
    )
    query_ids = np.asarray(table["query_id"].unique().sort().to_list(), dtype=object)
    qcode = _codes_for(table["query_id"], query_ids)
    labels = table["code"].to_numpy()
    judged = labels >= 0
    n_levels = int(labels[judged].max()) + 1 if judged.any() else 0
    hist = np.zeros((len(query_ids), max(n_levels, 1)), dtype=np.int64)
    if judged.any():
        flat = qcode[judged] * n_levels + labels[judged]
        hist = np.bincount(flat, minlength=len(query_ids) * n_levels).reshape(
            len(query_ids), n_levels
        )
    positive_total = int(np.count_nonzero(labels > 0))
    return EncodedQrels(table, query_ids, hist.astype(np.int64), positive_total)


def _codes_for(ids: pl.Series, sorted_unique: np.ndarray) -> np.ndarray:
    """Position of every id in ``sorted_unique`` (ids must all be present)."""
    lookup = pl.DataFrame(
        {"__id": pl.Series(list(sorted_unique), dtype=pl.String),
         "__code": np.arange(len(sorted_unique), dtype=np.int64)}
    )
    return (
        pl.DataFrame({"__id": ids})
        .join(lookup, on="__id", how="left", maintain_order="left")["__code"]
        .to_numpy()
    )


def pack(
    qrels: EncodedQrels,
    run: pl.DataFrame,
    *,
    run_query_ids=None,
    max_docs: int | None = None,
    complete: bool = False,
    semantics: str = "trec_eval",
    run_name: str = "irmetrics",
    keep_doc_ids: bool = False,
) -> RankedLists:
    """Order, truncate and label a run against encoded qrels.

    Parameters
    ----------
    qrels : EncodedQrels
    run : polars.DataFrame
        ``query_id``, ``doc_id``, ``score``; one row per (query, doc).
    run_query_ids : iterable of str, optional
        Queries the run *has*, even with an empty ranking (pytrec_eval's ``{qid: {}}``);
        defaults to the query ids present in ``run``.
    max_docs : int, optional
        Keep the first ``max_docs`` documents per query after ordering (``-M``).
    complete : bool
        Evaluate every qrels query; queries missing from the run get trec_eval's
        one-document placeholder ranking (``-c``). Otherwise the evaluated queries
        are those present in both.
    semantics : {"trec_eval", "pytrec_eval"}
        ``"pytrec_eval"`` rounds scores to float32 before ordering, as trec_eval 9.0.8
        inside pytrec-eval-terrier does.
    """
    present = (
        run["query_id"].unique() if run_query_ids is None
        else pl.Series("query_id", [str(q) for q in run_query_ids], dtype=pl.String).unique()
    )
    if complete:
        query_ids = qrels.query_ids
    else:
        in_run = set(present.to_list())
        query_ids = np.asarray([q for q in qrels.query_ids if q in in_run], dtype=object)
    n_q = len(query_ids)
    lookup = pl.DataFrame(
        {"query_id": pl.Series(list(query_ids), dtype=pl.String),
         "qcode": np.arange(n_q, dtype=np.int64)}
    )

    scores = pl.col("score")
    if semantics == "pytrec_eval":
        scores = scores.cast(pl.Float32).cast(pl.Float64)
    table = run.select("query_id", "doc_id", scores.alias("score"))
    bogus = np.zeros(n_q, dtype=bool)
    if complete:
        missing = [q for q in query_ids if q not in set(present.to_list())]
        if missing:
            bogus = np.isin(query_ids, np.asarray(missing, dtype=object))
            table = pl.concat([
                table,
                pl.DataFrame({"query_id": pl.Series(missing, dtype=pl.String),
                              "doc_id": [BOGUS_DOC_ID] * len(missing),
                              "score": [1.0] * len(missing)}),
            ])
    table = (
        table.join(lookup, on="query_id", how="inner")
        .sort(["qcode", "score", "doc_id"], descending=[False, True, True])
    )
    if max_docs is not None:
        table = table.filter(pl.int_range(pl.len()).over("qcode") < max_docs)
    table = table.join(
        qrels.table, on=["query_id", "doc_id"], how="left", maintain_order="left"
    )
    qcode = table["qcode"].to_numpy()
    counts = np.bincount(qcode, minlength=n_q)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    code = table["code"].fill_null(NOT_IN_POOL).to_numpy().astype(np.int64)

    hist_rows = np.searchsorted(qrels.query_ids, query_ids) if n_q else np.zeros(0, np.int64)
    rel_hist = qrels.rel_hist[hist_rows] if n_q else np.zeros((0, qrels.rel_hist.shape[1]), np.int64)
    return RankedLists(
        query_ids=np.asarray(query_ids, dtype=object),
        offsets=offsets,
        code=code,
        rel_hist=rel_hist,
        bogus=bogus,
        doc_ids=table["doc_id"].to_numpy() if keep_doc_ids else None,
        scores=table["score"].to_numpy(),
        run_name=run_name,
        qrels_positive_total=qrels.positive_total,
    )
