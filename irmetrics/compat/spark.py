"""Spark MLlib's ranking numbers without Spark: ``pyspark.mllib.evaluation.RankingMetrics``.

Spark's definitions are not trec_eval's, and this module keeps them on purpose, so that
numbers reported from Spark can be reproduced (and compared with trec_eval's, see
docs/spark.md). For one query with predicted list ``pred`` (already ranked: no scores,
no tie rule), ground truth ``lab`` and ``L = set(lab)``:

* ``precisionAt(k) = |{i < min(k, len(pred)): pred[i] in L}| / k``;
* ``recallAt(k)`` is the same count divided by ``|L|``;
* ``meanAveragePrecisionAt(k)``: ``sum_{i < k, pred[i] in L} hits_i / (i + 1)`` divided
  by ``min(|L|, k)`` (trec_eval's AP cut at k divides by ``|L|``);
  ``meanAveragePrecision`` is the same with ``k = max(len(pred), |L|)``;
* ``ndcgAt(k)``: binary gains ``1 / ln(i + 2)`` for ``i < min(max(len(pred), |L|), k)``,
  ideal DCG ``sum_{i < min(|L|, k)} 1 / ln(i + 2)``; with relevance values
  (``graded=True``) the gains are ``2**rel - 1`` (exponential, trec_eval's are linear),
  the ideal is built from the labels *in the order given* (``lab[0], lab[1], ...``, not
  sorted by relevance), a predicted item not in ``lab`` gains 0, and a query whose
  ideal DCG is 0 scores 0;
* a query with an empty ground truth counts as 0 in every mean (trec_eval skips it);
* a doc predicted twice is a hit twice (trec_eval refuses duplicates).

Means are over all queries. Each value is computed for every query at once (CSR
segments, no Python loop per query).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ..checks import check_bool, check_positive_int
from ..engine.segments import ranks, seg_count, seg_cumcount, seg_sum, segment_ids
from ..exceptions import ShapeError
from ._arrays import as_ragged

__all__ = ["RankingMetrics"]


class RankingMetrics:
    """``pyspark.mllib.evaluation.RankingMetrics`` on a list instead of an RDD.

    Parameters
    ----------
    predictionAndLabels : sequence of tuples
        One ``(predicted ranking, ground truth labels)`` or ``(predicted ranking,
        ground truth labels, relevance values)`` tuple per query, each a list or 1-D
        array of ids (ints or strings), as pyspark's RDD holds them.
    graded : bool, default False
        Use the relevance values in :meth:`ndcgAt`, as Spark's Scala/Java
        ``RankingMetrics`` does since Spark 3.4. pyspark's Python class (up to 4.x at
        least) drops the third element before calling Scala, so its nDCG is binary
        whatever the relevance values: ``graded=False`` reproduces that.

    Notes
    -----
    Relevance values pair with the labels by position (Scala's ``lab zip rel``: extra
    labels get no value, hence gain 0); a label repeated takes its last value. An empty
    input gives NaN, as the mean of an empty RDD does.

    Examples
    --------
    >>> from irmetrics.compat.spark import RankingMetrics
    >>> m = RankingMetrics([([1, 6, 2, 7, 8, 3, 9, 10, 4, 5], [1, 2, 3, 4, 5]),
    ...                     ([4, 1, 5, 6, 2, 7, 3, 8, 9, 10], [1, 2, 3]),
    ...                     ([1, 2, 3, 4, 5], [])])
    >>> round(m.precisionAt(5), 6), round(m.meanAveragePrecision, 6)
    (0.266667, 0.355026)
    >>> round(m.meanAveragePrecisionAt(2), 6), round(m.ndcgAt(3), 6)
    (0.25, 0.333333)
    """

    def __init__(self, predictionAndLabels, *, graded=False):
        rows = list(predictionAndLabels)
        for i, row in enumerate(rows):
            if not isinstance(row, (tuple, list)) or len(row) not in (2, 3):
                raise ShapeError("`predictionAndLabels` must hold (predicted, labels) or "
                                 "(predicted, labels, relevance) tuples; got "
                                 f"{type(row).__name__} of length "
                                 f"{len(row) if hasattr(row, '__len__') else '?'} at index {i}.")
        self._graded = check_bool("graded", graded)
        self._n = len(rows)
        pred, self._pred_offsets = as_ragged([r[0] for r in rows], "predicted")
        lab, lab_offsets = as_ragged([r[1] for r in rows], "labels")
        self._seg = segment_ids(self._pred_offsets)
        self._pos = ranks(self._pred_offsets) - 1  # 0-based, Scala's i
        # One integer key per (query, item); membership and distinct counts are hash
        # lookups (polars), not sorts.
        lab_seg = segment_ids(lab_offsets)
        pred_key, lab_key = _pair_keys(pred, self._seg, lab, lab_seg)
        self._hit = pl.Series(pred_key).is_in(pl.Series(lab_key).implode()).to_numpy()
        distinct = pl.DataFrame({"query": lab_seg, "key": lab_key}).unique()
        self._lab_size = np.bincount(distinct["query"].to_numpy(), minlength=self._n)
        self._lengths = np.diff(self._pred_offsets)
        if self._graded:
            rel, rel_offsets = as_ragged([r[2] if len(r) == 3 else [] for r in rows],
                                         "relevance", kind="biuf")
            self._prepare_graded(pred_key, lab_key, lab_offsets, rel.astype(np.float64),
                                 rel_offsets)

    def _prepare_graded(self, pred_key, lab_key, lab_offsets, rel, rel_offsets):
        """Gains ``2**rel - 1`` of every predicted entry and of every label position,
        from Scala's ``(lab zip rel).toMap`` (pairs up to the shorter list, last wins)."""
        lab_lens, rel_lens = np.diff(lab_offsets), np.diff(rel_offsets)
        paired = np.minimum(lab_lens, rel_lens)
        lab_rank = ranks(lab_offsets) - 1
        in_pair = lab_rank < np.repeat(paired, lab_lens)
        rel_index = np.repeat(rel_offsets[:-1], lab_lens) + lab_rank
        relevance_of = pl.DataFrame({"key": lab_key[in_pair], "rel": rel[rel_index[in_pair]]}
                                    ).unique("key", keep="last")  # a later pair wins
        self._pred_gain = _gain(pred_key, relevance_of)
        self._ideal_gain = _gain(lab_key, relevance_of)
        self._lab_offsets = lab_offsets
        self._binary = rel_lens == 0  # per query, as Scala's rel.isEmpty

    def _mean(self, per_query: np.ndarray) -> float:
        """Mean over all queries; NaN for no query (Spark's mean of an empty RDD)."""
        return float(np.add.reduce(per_query) / self._n) if self._n else math.nan

    def _hits_within(self, k) -> np.ndarray:
        """Hits among the first ``k`` predictions of each query (duplicates count)."""
        return seg_count(self._hit & (self._pos < k), self._seg, self._n)

    def _ratio(self, numerator, denominator) -> np.ndarray:
        """``numerator / denominator``, 0 where the ground truth is empty."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self._lab_size > 0, numerator / np.maximum(denominator, 1), 0.0)

    def precisionAt(self, k: int) -> float:
        """Mean over queries of hits in the top ``k`` divided by ``k`` (0 for an empty
        ground truth)."""
        k = check_positive_int("k", k)
        return self._mean(self._ratio(self._hits_within(k), k))

    def recallAt(self, k: int) -> float:
        """Mean over queries of hits in the top ``k`` divided by the number of distinct
        labels (0 for an empty ground truth)."""
        k = check_positive_int("k", k)
        return self._mean(self._ratio(self._hits_within(k), self._lab_size))

    def _average_precision(self, k) -> np.ndarray:
        """Per-query AP over the first ``k`` predictions, divided by ``min(|L|, k)``."""
        within = self._hit & (self._pos < np.repeat(k, self._lengths))
        hits_so_far = seg_cumcount(self._hit, self._pred_offsets)
        precision = np.where(within, hits_so_far / (self._pos + 1.0), 0.0)
        return self._ratio(seg_sum(precision, self._seg, self._n),
                           np.minimum(self._lab_size, k))

    @property
    def meanAveragePrecision(self) -> float:
        """MAP: AP over the whole prediction, divided by the number of distinct labels."""
        return self._mean(self._average_precision(np.maximum(self._lengths, self._lab_size)))

    def meanAveragePrecisionAt(self, k: int) -> float:
        """MAP at ``k``: AP over the top ``k``, divided by ``min(|L|, k)``."""
        k = check_positive_int("k", k)
        return self._mean(self._average_precision(np.full(self._n, k, dtype=np.int64)))

    def ndcgAt(self, k: int) -> float:
        """Mean nDCG at ``k`` with Spark's gains (binary ``1``, or ``2**rel - 1`` with
        ``graded=True``), natural-log discount ``1 / ln(i + 2)`` and the ideal DCG from
        the first ``min(|L|, k)`` labels in the order given."""
        k = check_positive_int("k", k)
        within = self._pos < k
        discount = 1.0 / np.log(self._pos + 2.0)
        binary_dcg = seg_sum(np.where(within & self._hit, discount, 0.0), self._seg, self._n)
        ideal_len = np.minimum(self._lab_size, k)
        binary_ideal = _ideal_discount_sums(ideal_len)
        if self._graded:
            graded_dcg = seg_sum(np.where(within, self._pred_gain * discount, 0.0),
                                 self._seg, self._n)
            lab_rank = ranks(self._lab_offsets) - 1
            lab_seg = segment_ids(self._lab_offsets)
            in_ideal = lab_rank < ideal_len[lab_seg]
            graded_ideal = seg_sum(np.where(in_ideal, self._ideal_gain
                                            / np.log(lab_rank + 2.0), 0.0), lab_seg, self._n)
            dcg = np.where(self._binary, binary_dcg, graded_dcg)
            ideal = np.where(self._binary, binary_ideal, graded_ideal)
        else:
            dcg, ideal = binary_dcg, binary_ideal
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.where((self._lab_size > 0) & (ideal != 0.0), dcg / ideal, 0.0)
        return self._mean(values)


def _pair_keys(pred, pred_query, lab, lab_query):
    """Integer keys of ``(query, item)`` for predictions and labels, one shared code
    space: equal keys mean the same item of the same query."""
    n_q = int(max(pred_query.max(initial=0), lab_query.max(initial=0))) + 1
    if (pred.dtype.kind in "US") != (lab.dtype.kind in "US") and pred.size and lab.size:
        # numbers against strings: Spark's equality never matches them
        pred_code, lab_code = _item_codes(pred), _item_codes(lab) + pred.size
    else:
        codes = _item_codes(np.concatenate([pred, lab]))
        pred_code, lab_code = codes[:pred.size], codes[pred.size:]
    n_items = int(max(pred_code.max(initial=0), lab_code.max(initial=0))) + 1
    if n_q * n_items >= 2**62:  # keys would overflow: number the items densely instead
        codes = np.unique(np.concatenate([pred_code, lab_code]), return_inverse=True)[1]
        pred_code, lab_code = codes[:pred.size], codes[pred.size:]
        n_items = pred.size + lab.size + 1
    return (pred_query.astype(np.int64) * n_items + pred_code,
            lab_query.astype(np.int64) * n_items + lab_code)


def _item_codes(items: np.ndarray) -> np.ndarray:
    """Non-negative int64 codes, equal exactly for equal items: integers offset by their
    minimum, anything else numbered by a hash table (first seen, first numbered)."""
    if items.size == 0:
        return np.zeros(0, dtype=np.int64)
    if items.dtype.kind in "iub":
        items = items.astype(np.int64)
        return items - items.min()
    if items.dtype.kind in "US":
        return pl.Series(items).cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
    return np.unique(items, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _gain(keys: np.ndarray, relevance_of: pl.DataFrame) -> np.ndarray:
    """``2**rel - 1`` of each key's relevance value, 0 for a key without one."""
    rel = pl.DataFrame({"key": keys}).join(relevance_of, on="key", how="left",
                                           maintain_order="left")["rel"]
    return np.where(rel.is_null().to_numpy(), 0.0,
                    np.power(2.0, rel.fill_null(0.0).to_numpy()) - 1.0)


def _ideal_discount_sums(count):
    """``sum_{i < count} 1 / ln(i + 2)`` for each query, summed in rank order."""
    top = int(count.max()) if count.size else 0
    prefix = np.concatenate(([0.0], np.cumsum(1.0 / np.log(np.arange(top) + 2.0))))
    return prefix[count]
