"""RankedLists: every evaluated query's ranking in final order, packed as CSR.

Relevance codes follow trec_eval (docs/reference/trec_eval.md §3.3):

* ``-1``  the document is not in the query's qrels ("not in pool");
* ``-2``  the document is in the qrels with a negative label ("pool, unjudged");
* ``v >= 0`` the judged label.

Per-query judgment counts ``rel_hist[q, j]`` (qrels lines with label
``rel_levels[j]``, over the distinct labels ``>= 0``) are independent of the run;
they are sized by the number of distinct labels, never by the labels' values, so a
label of ``2**40`` costs one column like a label of 1. Views derive everything a kernel needs for one
``(relevance_level, judged_only)`` pair and cache it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from . import segments as sg

#: trec_eval's placeholder document for qrels queries absent from the run (``-c``).
BOGUS_DOC_ID = "ceci_nest_pas_un_docno"

NOT_IN_POOL = -1
POOL_UNJUDGED = -2


def no_query_ids() -> np.ndarray:
    """An empty query-id array (the dtype of ``RankedLists.query_ids``)."""
    return np.zeros(0, dtype=object)


def sorted_query_ids(ids) -> np.ndarray:
    """Distinct ids in ascending byte order (Python's str order is UTF-8 byte order), as
    an object array; for the query-set bookkeeping of :class:`RankedLists`, never per
    entry."""
    return np.asarray(sorted(set(ids)), dtype=object)
#: Below this largest label, one counting pass finds the distinct labels (no sort).
_COUNTED_LABELS = 1 << 16


def label_histogram(query: np.ndarray, labels: np.ndarray, n_queries: int, *,
                    levels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-query counts of each distinct judged label: ``(rel_hist, rel_levels)``.

    ``rel_levels`` holds the distinct labels ``>= 0`` ascending (``[0]`` when there is
    none, so the table always has a column) and ``rel_hist[q, j]`` counts the lines of
    query ``q`` (codes ``0 .. n_queries - 1``) with label ``rel_levels[j]``. Negative
    labels are not counted. Memory is ``n_queries x distinct labels``, whatever the
    labels' values: trec_eval reads labels as C longs, and ``2**63 - 1`` is one column.
    ``levels``, when given, are the columns (ascending, holding every label ``>= 0``):
    histograms of parts of the judgments then add up.

    >>> hist, levels = label_histogram(np.array([0, 0, 1]), np.array([2**40, -1, 0]), 2)
    >>> hist.tolist(), levels.tolist()
    ([[0, 1], [1, 0]], [0, 1099511627776])
    """
    graded = np.asarray(labels).dtype.kind == "f"  # float labels (relevance="float")
    labels = np.asarray(labels, dtype=np.float64 if graded else np.int64)
    shift = 0  # negative labels counted in columns of their own, dropped at the end
    low = labels.min() if labels.size else 0
    if low < 0:
        top = labels.max()
        if not graded and levels is None and low >= POOL_UNJUDGED and top < _COUNTED_LABELS:
            # The codes of an encoded file (unjudged POOL_UNJUDGED, else labels >= 0):
            # counting every line past them costs less than copying the judged lines
            # out first (two fresh arrays: 3.1 -> 1.5 ms for a 16 MiB qrels chunk, 470K lines).
            shift = -int(low)
        else:
            judged = labels >= 0
            query, labels = query[judged], labels[judged]
    if levels is not None:
        levels = np.asarray(levels, dtype=labels.dtype)
        width = max(levels.size, 1)
        hist = np.bincount(query * width + np.searchsorted(levels, labels),
                           minlength=n_queries * width)
        return hist.reshape(n_queries, width).astype(np.int64, copy=False), levels
    if labels.size == 0:
        return np.zeros((n_queries, 1), dtype=np.int64), np.zeros(1, dtype=labels.dtype)
    if not shift:
        top = labels.max()
    if shift:
        if top < 0:  # no label >= 0
            return np.zeros((n_queries, 1), dtype=np.int64), np.zeros(1, dtype=np.int64)
        full = np.bincount(query * (top + 1 + shift) + (labels + shift),
                           minlength=n_queries * (top + 1 + shift))
        full = full.reshape(n_queries, -1)[:, shift:]
        levels = np.flatnonzero(full.any(axis=0))
        hist = full[:, levels] if levels.size < top + 1 else np.ascontiguousarray(full)
        return hist.astype(np.int64, copy=False), levels
    if not graded and top < _COUNTED_LABELS:  # the usual small grades
        seen = np.bincount(labels, minlength=top + 1) > 0
        levels = np.flatnonzero(seen).astype(np.int64)
        column = labels if levels.size == top + 1 else (np.cumsum(seen) - 1)[labels]
    else:
        levels, column = np.unique(labels, return_inverse=True)
        column = column.reshape(-1)
    width = levels.size
    hist = np.bincount(query * width + column, minlength=n_queries * width)
    return hist.reshape(n_queries, width).astype(np.int64, copy=False), levels


@dataclass(eq=False)
class RankedLists:
    """Per-query rankings in final rank order (after ordering and ``max_docs``).

    Attributes
    ----------
    query_ids : ndarray of str, shape (Q,)
        Evaluated query ids in ascending byte order.
    offsets : ndarray of int64, shape (Q + 1,)
        Entries of query ``q`` are ``offsets[q]:offsets[q + 1]``.
    code : ndarray of int64, shape (N,)
        trec_eval relevance code of each ranked document.
    rel_hist : ndarray of int64, shape (Q, L)
        Number of qrels lines of each query with label ``rel_levels[j]``.
    bogus : ndarray of bool, shape (Q,)
        Queries absent from the run that ``complete=True`` evaluated on trec_eval's
        one-document placeholder ranking.
    doc_ids : ndarray of str or None, shape (N,)
        Document ids in rank order, kept only when a measure or caller needs them.
    scores : ndarray of float64 or None, shape (N,)
    run_name : str
    qrels_positive_total : int
        Number of qrels lines with a label > 0 over the whole qrels (the ``-c``
        summary of ``num_rel``).
    missing_query_ids : ndarray of str
        Qrels queries without a ranking in the run that were not evaluated (always
        empty under ``complete``), ascending byte order.
    ignored_query_ids : ndarray of str
        Run queries absent from the qrels (never evaluated), ascending byte order.
    rel_levels : ndarray of int64, shape (L,), or None
        The label of each ``rel_hist`` column, ascending (see :func:`label_histogram`);
        None means ``0 .. L - 1``.
    """

    query_ids: np.ndarray
    offsets: np.ndarray
    code: np.ndarray
    rel_hist: np.ndarray
    bogus: np.ndarray
    doc_ids: np.ndarray | None = None
    scores: np.ndarray | None = None
    run_name: str = "irmetrics"
    qrels_positive_total: int = 0
    missing_query_ids: np.ndarray = field(default_factory=lambda: no_query_ids())
    ignored_query_ids: np.ndarray = field(default_factory=lambda: no_query_ids())
    rel_levels: np.ndarray | None = None
    _views: dict = field(default_factory=dict, repr=False)
    _judged: "RankedLists | None" = field(default=None, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def levels(self) -> np.ndarray:
        """The label of each ``rel_hist`` column."""
        if self.rel_levels is None:
            return np.arange(self.rel_hist.shape[1], dtype=np.int64)
        return self.rel_levels

    def view(self, relevance_level: int = 1, judged_only: bool = False) -> "View":
        """Cached derived arrays for one relevance level and judged-only choice."""
        key = (int(relevance_level), bool(judged_only))
        if key not in self._views:
            lists = self.judged_only() if judged_only else self
            self._views[key] = View(lists, int(relevance_level), judged_only)
        return self._views[key]

    def judged_only(self) -> "RankedLists":
        """The same rankings without unjudged documents (trec_eval ``-J``)."""
        if self._judged is None:
            keep = self.code >= 0
            counts = sg.seg_count(keep, sg.segment_ids(self.offsets), self.n_queries)
            offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
            self._judged = RankedLists(
                query_ids=self.query_ids,
                offsets=offsets,
                code=self.code[keep],
                rel_hist=self.rel_hist,
                bogus=self.bogus,
                doc_ids=None if self.doc_ids is None else self.doc_ids[keep],
                scores=None if self.scores is None else self.scores[keep],
                run_name=self.run_name,
                qrels_positive_total=self.qrels_positive_total,
                missing_query_ids=self.missing_query_ids,
                ignored_query_ids=self.ignored_query_ids,
                rel_levels=self.rel_levels,
            )
        return self._judged

    def check_invariants(self) -> None:
        """Raise AssertionError if the packing is inconsistent (used by tests only)."""
        q = self.n_queries
        assert self.offsets.shape == (q + 1,) and self.offsets[0] == 0
        assert np.all(np.diff(self.offsets) >= 0)
        assert self.offsets[-1] == len(self.code)
        assert self.rel_hist.shape[0] == q and np.all(self.rel_hist >= 0)
        assert self.levels.shape == (self.rel_hist.shape[1],) and np.all(np.diff(self.levels) > 0)
        assert self.bogus.shape == (q,)
        assert np.all(self.code >= POOL_UNJUDGED)
        ids = [s.encode() for s in self.query_ids]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)


class View:
    """Everything the binary and graded kernels read, for one ``(level, judged_only)``.

    ``rel(i)`` is ``code >= relevance_level`` (a plain integer comparison, as in
    trec_eval, including its pathological behaviour for levels below 0).
    """

    def __init__(self, lists: RankedLists, relevance_level: int, judged_only: bool):
        # Only arrays are kept, not ``lists`` itself: the lists cache their views, and a
        # back reference would make a cycle that frees large arrays only on a GC pass.
        self.rel_hist = lists.rel_hist
        self.rel_levels = lists.levels
        self.level = relevance_level
        self.judged_only = judged_only
        self.offsets = lists.offsets
        self.code = lists.code
        self.n_queries = lists.n_queries
        #: Kernel-level memo (e.g. gain tables per gain parameters), shared by measures.
        self.cache: dict = {}

    @cached_property
    def seg(self) -> np.ndarray:
        return sg.segment_ids(self.offsets)

    @cached_property
    def rank(self) -> np.ndarray:
        return sg.ranks(self.offsets)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.code >= self.level

    @cached_property
    def cum_rel(self) -> np.ndarray:
        """``relat(i)``: relevant documents at ranks ``<= i`` of the same query."""
        return sg.seg_cumcount(self.is_rel, self.offsets)

    @cached_property
    def relevant(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Relevant entries only, in rank order: ``(segment, rank, relat at that rank)``.

        Relevant documents are usually a small share of long rankings; counts and AP's
        sum over them touch only these entries.
        """
        index = np.flatnonzero(self.is_rel)
        seg = np.searchsorted(self.offsets, index, side="right") - 1  # O(relevant), not O(N)
        rank = index - self.offsets[seg] + 1
        per_query = np.bincount(seg, minlength=self.n_queries)
        ordinal = sg.ranks(np.concatenate(([0], np.cumsum(per_query))).astype(np.int64))
        return seg, rank, ordinal

    def relat(self, k) -> np.ndarray:
        """Relevant retrieved in the top ``k`` (scalar or per-query), per query.

        ``relat(min(k, n))`` = relevant entries with rank ``<= k``; 0 when ``k < 1``.
        """
        seg, rank, _ = self.relevant
        k = np.asarray(k, dtype=np.int64)
        within = rank <= (k if k.ndim == 0 else k[seg])
        return np.bincount(seg[within], minlength=self.n_queries).astype(np.int64, copy=False)

    @cached_property
    def num_rel(self) -> np.ndarray:
        """R: qrels lines with label ``>= level``."""
        return self.rel_hist[:, self.rel_levels >= self.level].sum(axis=1)

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        """NR: qrels lines with label in ``[0, level)``."""
        return self.rel_hist[:, self.rel_levels < self.level].sum(axis=1)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self.count((self.code >= 0) & self.is_rel)

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per-query number of entries where ``mask`` holds."""
        return sg.seg_count(mask, self.seg, self.n_queries)

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Per-query sum of ``values`` in rank order."""
        return sg.seg_sum(values, self.seg, self.n_queries)

    @cached_property
    def first_rel_rank(self) -> np.ndarray:
        return sg.seg_first(self.is_rel, self.offsets)

    @cached_property
    def precision_at_rel(self) -> np.ndarray:
        """``relat(i) / i`` at relevant entries, 0 elsewhere (AP's summands)."""
        return np.where(self.is_rel, self.cum_rel / self.rank, 0.0)

    @cached_property
    def running_precision_sum(self) -> np.ndarray:
        """``sum_{j <= i, rel(j)} relat(j) / j`` at every entry: AP's running numerator,
        summed in rank order (read at rank k for AP cut at k, MAP@R, OML map@k)."""
        return sg.seg_cumsum(self.precision_at_rel, self.offsets)
