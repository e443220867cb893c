"""Judgment groups (trec_eval ``-R qrels_jg``): one standard ranking per (query, JG).

Each judgment group is a separate set of qrels for the same ranking (docs/reference/trec_eval.md §8.2). The
standard road is reused unchanged: every (query, JG) becomes a *virtual query* with
its own qrels, the run's ranking of the query is copied to each of its JGs, and
:func:`~irmetrics.engine.pack.pack` orders, truncates and labels them (score
descending, doc id descending, as for qrels). Kernels compute per virtual query on
the usual :class:`~irmetrics.engine.ranked.View`; :meth:`JudgmentGroupLists.average`
folds the JG values back into queries the way trec_eval does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from .pack import encode_qrels, pack
from .prefs import evaluated_queries, ranked_run
from .ranked import RankedLists


@dataclass(eq=False)
class JudgmentGroupLists:
    """Per-JG rankings of the evaluated queries.

    Attributes
    ----------
    query_ids : ndarray of str, shape (Q,)
    bogus : ndarray of bool, shape (Q,)
    jg_offsets : ndarray of int64, shape (Q + 1,)
        JGs of query ``q`` are rows ``jg_offsets[q]:jg_offsets[q + 1]`` of ``lists``,
        in ascending byte order of the JG id.
    jg_ids : ndarray of str, shape (J,)
    lists : RankedLists
        One ranking per JG (its ``query_ids`` are internal virtual ids).
    run_name : str
    """

    query_ids: np.ndarray
    bogus: np.ndarray
    jg_offsets: np.ndarray
    jg_ids: np.ndarray
    lists: RankedLists
    run_name: str = "irmetrics"

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def average(self, values: np.ndarray) -> np.ndarray:
        """Fold per-JG values (J,) into per-query values (Q,).

        trec_eval adds the JG values in JG order and divides by the number of JGs only
        when there is more than one.
        """
        jg_query = np.repeat(np.arange(self.n_queries), np.diff(self.jg_offsets))
        total = np.bincount(jg_query, weights=values, minlength=self.n_queries)
        n = np.diff(self.jg_offsets)
        return np.where(n > 1, total / np.maximum(n, 1), total)


def pack_judgment_groups(judgments: pl.DataFrame, run: pl.DataFrame, *,
                         max_docs: int | None = None, complete: bool = False,
                         run_name: str = "irmetrics", run_query_ids=None) -> JudgmentGroupLists:
    """Rank a run once per judgment group of each evaluated query.

    Parameters
    ----------
    judgments : polars.DataFrame
        ``query_id, jg, doc_id`` (String), ``relevance`` (Int64).
    run : polars.DataFrame
        ``query_id, doc_id, score``.
    max_docs, complete
        As for :func:`~irmetrics.engine.pack.pack`; the duplicate check covers the
        kept top ``max_docs`` documents.
    """
    query_ids, bogus = evaluated_queries(judgments["query_id"], run, complete, run_query_ids)
    # Ranking once per query also runs the duplicate check on the kept documents.
    ranked = ranked_run(run, query_ids, bogus, doc_id_descending=True, max_docs=max_docs)
    lookup = pl.DataFrame({"query_id": pl.Series(list(query_ids), dtype=pl.String),
                           "qcode": np.arange(len(query_ids), dtype=np.int64)})
    groups = (judgments.select("query_id", "jg").unique()
              .join(lookup, on="query_id", how="inner")
              .sort(["qcode", "jg"])
              .with_row_index("jg_index")
              # Zero-padded indices sort bytewise like the (query, JG) pairs they stand for.
              .with_columns(pl.col("jg_index").cast(pl.String).str.zfill(12).alias("virtual")))
    qrels = (judgments.join(groups, on=["query_id", "jg"], how="inner")
             .select(pl.col("virtual").alias("query_id"), "doc_id", "relevance"))
    virtual_run = (ranked.join(groups.select("qcode", "virtual"), on="qcode", how="inner")
                   .select(pl.col("virtual").alias("query_id"), "doc_id", "score"))
    lists = pack(encode_qrels(qrels), virtual_run, run_query_ids=groups["virtual"],
                 run_name=run_name)
    counts = np.bincount(groups["qcode"].to_numpy(), minlength=len(query_ids))
    return JudgmentGroupLists(
        query_ids=query_ids,
        bogus=bogus,
        jg_offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
        jg_ids=np.asarray(groups["jg"].to_list(), dtype=object),
        lists=lists,
        run_name=run_name,
    )
