"""What the trained methods learn from qrels: probabilities of relevance by rank or by
segment of the ranking, log-odds, and each run's MAP (ranx's estimators, vectorised).

A *hit* is an entry whose document the qrels judge relevant (label >= 1, as ranx's hit
lists). The training queries are the qrels' queries that some run retrieves for; a run
that retrieves nothing for one of them still counts it (as an empty list).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from irmetrics.containers import Qrels

from .lists import FusionLists

__all__ = ["Training", "training", "position_probs", "segment_probs", "segfuse_probs",
           "bayes_log_odds", "SEGFUSE_BOUNDS", "BAYES_CUTOFFS", "MIN_LOG_ODDS"]

#: SegFuse's segments: ranks ``[b_k, b_{k+1})`` with ``b_k = 10 * 2^(k-1) - 5``.
SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)])
#: BayesFuse's segments of the ranking (ranx's cut-offs); ranks past the last get
#: :data:`MIN_LOG_ODDS`.
BAYES_CUTOFFS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000])
#: Log-odds of a document a run lacks (and of one ranked past 1,000) in BayesFuse.
MIN_LOG_ODDS = float(np.log(0.001 / 0.999))


class Training:
    """Hits of every entry and the training queries, for one set of fusion lists."""

    def __init__(self, lists: FusionLists, hit: np.ndarray, train: np.ndarray) -> None:
        self.lists, self.hit, self.train = lists, hit, train
        self.n_train = int(train.sum())

    def run(self, r: int):
        """``(rank, hit, list length)`` of run ``r``'s entries for training queries."""
        lists = self.lists
        entries = lists.entries(r)
        query = lists.entry_query(r)
        keep = self.train[query]
        return (lists.rank[entries][keep], self.hit[entries][keep],
                lists.lengths(r)[query][keep])


def training(lists: FusionLists, qrels: Qrels, relevance_level: int = 1) -> Training:
    """Hits of ``lists``' entries under ``qrels`` (label >= ``relevance_level``)."""
    relevant = qrels.df.filter(pl.col("relevance") >= relevance_level) \
        .select("query_id", "doc_id").unique().with_columns(pl.lit(True).alias("hit"))
    entries = pl.DataFrame({
        "query_id": pl.Series(lists.query_ids, dtype=pl.String).gather(
            lists.pair_query[lists.pair]),
        "doc_id": lists.doc})
    hit = entries.join(relevant, on=["query_id", "doc_id"], how="left",
                       maintain_order="left")["hit"].fill_null(False).to_numpy()
    train = np.isin(lists.query_ids, qrels.df["query_id"].unique().to_numpy().astype(object))
    return Training(lists, hit.astype(bool), train)


def position_probs(data: Training, r: int) -> np.ndarray:
    """Probability of relevance at each rank (PosFuse, SlideFuse): hits at rank ``i``
    over the training lists at least ``i + 1`` long.

    .. math:: p_i = \\frac{\\sum_q hit_q(i)}{|\\{q : n_q > i\\}|}
    """
    rank, hit, _ = data.run(r)
    if not len(rank):
        return np.zeros(0)
    return np.bincount(rank, weights=hit) / np.bincount(rank)


def segment_probs(data: Training, r: int, n_segments: int) -> np.ndarray:
    """ProbFuse's probability of relevance of each of ``n_segments`` segments: each list
    of ``n`` cut into segments of ``ceil(n / S)`` ranks, the hit rate of each segment
    averaged over the training queries.

    .. math:: p_k = \\frac{1}{|Q|}\\sum_q \\frac{hits_q(k)}{|segment_q(k)|}
    """
    rank, hit, length = data.run(r)
    size = -(-length // n_segments)
    segment = rank // np.maximum(size, 1)
    width = np.minimum(size, length - segment * size)
    return np.bincount(segment, weights=hit / np.maximum(width, 1), minlength=n_segments) \
        / max(data.n_train, 1)


def segfuse_probs(data: Training, r: int) -> np.ndarray:
    """SegFuse's probability of relevance of each segment of :data:`SEGFUSE_BOUNDS`
    (hits over the segment's full width, averaged over the training queries)."""
    return _segment_rates(data, r, SEGFUSE_BOUNDS)


def bayes_log_odds(data: Training, r: int) -> np.ndarray:
    """BayesFuse's log-odds of relevance per rank (ranks 0 to 999): over each segment of
    :data:`BAYES_CUTOFFS`, ``log(p / (1 - p))`` of the segment's hit rate ``p``, with
    0.001 in place of a zero ``p`` or ``1 - p``."""
    p = _segment_rates(data, r, BAYES_CUTOFFS)
    p = np.where(p == 0, 0.001, p)
    q = np.where(1 - p == 0, 0.001, 1 - p)
    return np.repeat(np.log(p / q), np.diff(BAYES_CUTOFFS))


def _segment_rates(data: Training, r: int, bounds: np.ndarray) -> np.ndarray:
    rank, hit, _ = data.run(r)
    inside = rank < bounds[-1]
    segment = np.searchsorted(bounds, rank[inside], side="right") - 1
    width = np.diff(bounds)
    return np.bincount(segment, weights=hit[inside] / width[segment],
                       minlength=len(width)) / max(data.n_train, 1)
