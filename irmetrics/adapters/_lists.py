"""Closed-world judgments built by the adapters, and their two exits.

Every adapter produces one ``Judgments`` object: integer-coded run entries
(query, document, score, label) and integer-coded qrels. It leaves in two ways:

* ``qrels_frame()`` / ``run_frame()``: the string tables of ``Qrels``/``Run``
  (built lazily, with vectorised id formatting), for ``to_dict()``, writing TREC
  files, or evaluation through ``encode_qrels`` + ``pack``;
* ``pack()``: the ``RankedLists`` that ``pack()`` would build from those tables,
  computed numerically (no strings, no joins). ``evaluate`` takes this road when
  it is handed the adapter's own (Qrels, Run) pair.

Both orders are trec_eval's: score descending, then doc id descending in byte
order (ids' byte ranks are the numeric tie key), queries in ascending byte order.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import polars as pl

from ..checks import check_bool
from ..containers import Qrels, Run
from ..engine import segments as sg
from ..engine.pack import BOGUS_DOC_ID
from ..engine.ranked import NOT_IN_POOL, POOL_UNJUDGED, RankedLists
from ..engine.ranked import label_histogram as ranked_label_histogram
from ..engine.ordering import descending_keys, doc_id_tiebreak, float32_scores, ordering_scores, rank_order
from ._ids import IdVocab

RUN_NAME = "irmetrics"


def relevance_code(labels: np.ndarray) -> np.ndarray:
    """trec_eval relevance code of judged labels: the label, or -2 when negative."""
    return np.where(labels < 0, POOL_UNJUDGED, labels)


def label_histogram(query: np.ndarray, labels: np.ndarray, n_queries: int, extra_positive=None):
    """``rel_hist`` as ``encode_qrels`` builds it, plus facts about the qrels.

    Returns ``(rel_hist, rel_levels, has_qrels, positive_total)``: per-query counts of
    every distinct label ``>= 0`` (:func:`~irmetrics.engine.ranked.label_histogram`),
    whether the query has any qrels line (negative labels included), and the number of
    lines with label > 0. ``extra_positive`` adds per-query lines with label 1 that
    have no entry arrays.
    """
    hist, levels = ranked_label_histogram(query, labels, n_queries)
    if extra_positive is not None and extra_positive.any():
        one = int(np.searchsorted(levels, 1))
        if not hist.any() and levels.tolist() == [0]:  # no judged label: only level 1
            levels, hist, one = np.ones(1, np.int64), np.zeros((n_queries, 1), np.int64), 0
        elif one == len(levels) or levels[one] != 1:
            levels = np.insert(levels, one, 1)
            hist = np.insert(hist, one, 0, axis=1)
        hist[:, one] += extra_positive
    positive_total = int(hist[:, levels > 0].sum())
    if len(labels) == 0 or labels.min() >= 0:  # every line judged (-0.5 is not): no second pass
        has_qrels = hist.sum(axis=1) > 0
    else:
        has_qrels = np.bincount(query, minlength=n_queries) > 0
        if extra_positive is not None:
            has_qrels |= extra_positive > 0
    return hist, levels, has_qrels, positive_total


class Judgments:
    """Base: packing and string tables shared by dense and sparse judgments.

    Subclasses set ``query_vocab``, ``doc_vocab``, ``rel_hist``, ``has_qrels``,
    ``positive_total`` and implement ``sorted_run`` and ``qrels_arrays``.
    """

    query_vocab: IdVocab
    doc_vocab: IdVocab
    rel_hist: np.ndarray
    rel_levels: np.ndarray
    has_qrels: np.ndarray
    positive_total: int

    def sorted_run(self, semantics: str, ties: str = "trec_eval"):
        """Run entries in final order: ``(counts, code, score, doc)``.

        ``counts[q]`` is the number of entries of query code ``q``; the entry arrays
        hold queries in ascending byte order, each ranked by (score desc, doc id
        desc; the input's own order among equal scores for ``ties="input_order"``).
        Scores are float32-rounded under ``semantics="pytrec_eval"``.
        """
        raise NotImplementedError

    def qrels_arrays(self):
        """``(query code, doc code, label)`` of every qrels line."""
        raise NotImplementedError

    @cached_property
    def query_order(self) -> np.ndarray:
        """Query codes in ascending byte order of their ids."""
        return np.argsort(self.query_vocab.byte_rank, kind="stable")

    def pack(self, *, max_docs=None, complete=False, semantics="trec_eval",
             run_name=RUN_NAME, keep_doc_ids=False, ties="trec_eval") -> RankedLists:
        """The ``RankedLists`` ``pack(encode_qrels(qrels.df), run.df, ...)`` returns."""
        counts, code, scores, docs = self.sorted_run(semantics, ties)
        order = self.query_order
        evaluated = self.has_qrels & ((counts > 0) | bool(complete))
        if not evaluated[counts > 0].all():  # run lines of queries without qrels
            keep = np.repeat(evaluated[order], counts[order])
            code, scores, docs = code[keep], scores[keep], docs[keep]
        queries = order[evaluated[order]]
        sizes = counts[queries]
        bogus = (sizes == 0) if complete else np.zeros(len(queries), dtype=bool)
        if bogus.any():
            # trec_eval -c: one placeholder document for qrels queries absent from the run.
            owner = np.concatenate([np.repeat(np.arange(len(queries)), sizes),
                                    np.flatnonzero(bogus)])
            merge = np.argsort(owner, kind="stable")
            n_bogus = int(bogus.sum())
            code = np.concatenate([code, np.full(n_bogus, NOT_IN_POOL, np.int64)])[merge]
            scores = np.concatenate([scores, np.ones(n_bogus)])[merge]
            docs = np.concatenate([docs, np.full(n_bogus, -1, np.int64)])[merge]
            sizes = sizes + bogus
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        if max_docs is not None:
            top = sg.ranks(offsets) <= max_docs
            code, scores, docs = code[top], scores[top], docs[top]
            offsets = np.concatenate(([0], np.cumsum(np.minimum(sizes, max_docs)))).astype(np.int64)
        doc_ids = None
        if keep_doc_ids:
            doc_ids = np.where(docs >= 0, self.doc_vocab.take(np.maximum(docs, 0)).to_numpy(),
                               BOGUS_DOC_ID).astype(object)
        return RankedLists(
            query_ids=self._query_ids(queries),
            offsets=offsets,
            code=code if code.dtype.kind == "f" else code.astype(np.int64, copy=False),
            rel_hist=self.rel_hist[queries],
            rel_levels=self.rel_levels,
            bogus=bogus,
            doc_ids=doc_ids,
            scores=scores,
            run_name=run_name,
            qrels_positive_total=self.positive_total,
            missing_query_ids=self._query_ids(order[(self.has_qrels & ~evaluated)[order]]),
            ignored_query_ids=self._query_ids(order[((counts > 0) & ~self.has_qrels)[order]]),
        )

    def _query_ids(self, codes: np.ndarray) -> np.ndarray:
        """The ids of query ``codes`` as an object array (the RankedLists dtype)."""
        return self.query_vocab.take(codes).to_numpy().astype(object)

    def qrels_frame(self) -> pl.DataFrame:
        """qrels table: ``query_id, iteration, doc_id, relevance`` (one line per judgment)."""
        query, doc, labels = self.qrels_arrays()
        return pl.DataFrame({
            "query_id": self.query_vocab.take(query),
            "iteration": pl.repeat("0", len(query), dtype=pl.String, eager=True),
            "doc_id": self.doc_vocab.take(doc),
            "relevance": pl.Series(labels, dtype=pl.Float64 if labels.dtype.kind == "f"
                                   else pl.Int64),
        })

    def run_frame(self, run_name: str = RUN_NAME) -> pl.DataFrame:
        """run table in trec_eval order: ``query_id, iteration, doc_id, rank, score, run_id``."""
        counts, _code, scores, docs = self.sorted_run("trec_eval")
        order = self.query_order
        offsets = np.concatenate(([0], np.cumsum(counts[order]))).astype(np.int64)
        query = np.repeat(order, counts[order])
        n = len(query)
        return pl.DataFrame({
            "query_id": self.query_vocab.take(query),
            "iteration": pl.repeat("Q0", n, dtype=pl.String, eager=True),
            "doc_id": self.doc_vocab.take(docs),
            "rank": pl.Series(sg.ranks(offsets), dtype=pl.Int64),
            "score": pl.Series(scores, dtype=pl.Float64),
            "run_id": pl.repeat(run_name, n, dtype=pl.String, eager=True),
        })


class DenseJudgments(Judgments):
    """A (queries x documents) block: every valid cell is judged and retrieved.

    ``labels`` and ``scores`` are (B, L); row ``i`` holds documents ``0 .. n_i - 1``
    (doc codes = columns). ``top_k`` keeps only the first ``top_k`` of each ranking in
    the run; the qrels keep every valid cell. ``extra_relevant[i]`` adds that many
    relevant, unretrieved documents (codes ``L, L + 1, ...``) to the qrels.
    """

    def __init__(self, query_vocab, doc_vocab, scores, labels, lengths=None, top_k=None,
                 extra_relevant=None):
        self.query_vocab, self.doc_vocab = query_vocab, doc_vocab
        self.scores, self.labels = scores, labels
        self.lengths, self.top_k, self.extra_relevant = lengths, top_k, extra_relevant
        n_rows, n_cols = labels.shape
        if lengths is None:
            rows, valid_labels = np.repeat(np.arange(n_rows), n_cols), labels.reshape(-1)
        else:
            rows, valid_labels = np.repeat(np.arange(n_rows), lengths), labels[self._valid]
        self.rel_hist, self.rel_levels, self.has_qrels, self.positive_total = \
            label_histogram(rows, valid_labels, n_rows, extra_relevant)
        self._negative = bool(len(valid_labels)) and valid_labels.min() < 0

    @cached_property
    def _valid(self):
        """(B, L) mask of cells inside each row's length, or None when all are."""
        if self.lengths is None:
            return None
        return np.arange(self.labels.shape[1]) < self.lengths[:, None]

    def _valid_cells(self):
        n_rows, n_cols = self.labels.shape
        if self.lengths is None:
            return (np.repeat(np.arange(n_rows), n_cols), np.tile(np.arange(n_cols), n_rows))
        return np.nonzero(self._valid)

    def _ranking(self, semantics, ties="trec_eval"):
        """Rows in query byte order; per row, (scores, columns) in trec_eval rank order.

        Columns are first laid out doc id descending (in column order for
        ``ties="input_order"``); a sort by score descending that keeps that layout
        among ties then gives trec_eval's (score desc, doc id desc) order. float32 scores (and every score under ``"pytrec_eval"``) take a faster
        road: score bits and layout position packed into one uint64 key per cell and
        sorted with an unstable SIMD sort (the position makes every key distinct).
        float32 order equals the order of its exact float64 widening.
        """
        rows = self.query_order
        n_cols = self.scores.shape[1]
        if doc_id_tiebreak(ties):
            desc = np.argsort(-self.doc_vocab.byte_rank[:n_cols], kind="stable")
        else:
            desc = np.arange(n_cols)
        scores = self.scores[np.ix_(rows, desc)]
        if semantics == "pytrec_eval" or scores.dtype.itemsize < 8:
            scores = float32_scores(scores)
            keys = descending_keys(scores)
            keys <<= np.uint64(32)
            keys |= np.arange(n_cols, dtype=np.uint64)
            keys.sort(axis=1)
            position = (keys & np.uint64(0xFFFFFFFF)).astype(np.intp)
            return rows, np.take_along_axis(scores, position, axis=1), desc[position]
        np.negative(scores, out=scores)
        perm = np.argsort(scores, axis=1, kind="stable")
        ranked = np.take_along_axis(scores, perm, axis=1)
        np.negative(ranked, out=ranked)
        return rows, ranked, desc[perm]

    @cached_property
    def _in_run(self):
        """(B, L) cells written to the run, or None when all are: valid, and within
        ``top_k`` of the trec_eval ranking of the float64 scores (the run's content
        does not depend on evaluation semantics)."""
        if self.top_k is None:
            return self._valid
        rows, _, cols = self._ranking("trec_eval")
        ranked_valid = (np.ones(cols.shape, dtype=bool) if self._valid is None
                        else self._valid[rows[:, None], cols])
        in_run = np.zeros(cols.shape, dtype=bool)
        in_run[rows[:, None], cols] = ranked_valid & (np.cumsum(ranked_valid, axis=1) <= self.top_k)
        return in_run

    def sorted_run(self, semantics, ties="trec_eval"):
        rows, scores, cols = self._ranking(semantics, ties)
        labels = self.labels[rows[:, None], cols]
        counts = np.empty(len(rows), dtype=np.int64)
        if self._in_run is None:
            counts[rows] = cols.shape[1]
            labels, scores, cols = labels.reshape(-1), scores.reshape(-1), cols.reshape(-1)
        else:
            keep = self._in_run[rows[:, None], cols]
            counts[rows] = keep.sum(axis=1)
            labels, scores, cols = labels[keep], scores[keep], cols[keep]
        code = relevance_code(labels) if self._negative else labels
        return counts, code, scores.astype(np.float64, copy=False), cols

    def qrels_arrays(self):
        rows, cols = self._valid_cells()
        labels = self.labels[rows, cols]
        if self.extra_relevant is None or not self.extra_relevant.any():
            return rows, cols, labels
        extra = self.extra_relevant
        x_rows = np.repeat(np.arange(len(extra)), extra)
        x_offsets = np.concatenate(([0], np.cumsum(extra)))
        x_cols = self.labels.shape[1] + sg.ranks(x_offsets) - 1
        return (np.concatenate([rows, x_rows]), np.concatenate([cols, x_cols]),
                np.concatenate([labels, np.ones(len(x_rows), dtype=np.int64)]))


class SparseJudgments(Judgments):
    """Run entries given one by one, qrels summarised by ``label_histogram``.

    ``qrels_arrays`` is a callable so that a large closed world (every same-label
    gallery item of every query) is only materialised if a string table is needed.
    """

    def __init__(self, query_vocab, doc_vocab, run_query, run_doc, run_score, run_label,
                 rel_hist, rel_levels, has_qrels, positive_total, qrels_arrays,
                 presorted=False, input_position=None):
        self.query_vocab, self.doc_vocab = query_vocab, doc_vocab
        self.run_query, self.run_doc = run_query, run_doc
        self.run_score, self.run_label = run_score, run_label
        self.rel_hist, self.rel_levels = rel_hist, rel_levels
        self.has_qrels, self.positive_total = has_qrels, positive_total
        self._qrels_arrays = qrels_arrays
        #: The run entries are in trec_eval's final order already (a device sorted them).
        self.presorted = presorted
        #: Each entry's position in the user's input: the order of equal scores under
        #: ``ties="input_order"`` (default: the entries' own order).
        self.input_position = input_position

    def sorted_run(self, semantics, ties="trec_eval"):
        counts = np.bincount(self.run_query, minlength=self.query_vocab.size).astype(np.int64)
        if self.presorted and semantics == "trec_eval" and doc_id_tiebreak(ties):
            return counts, relevance_code(self.run_label), self.run_score, self.run_doc
        scores = ordering_scores(self.run_score, semantics)
        if doc_id_tiebreak(ties):
            tie_key = -self.doc_vocab.byte_rank[self.run_doc]
        else:
            tie_key = (np.arange(len(scores)) if self.input_position is None
                       else self.input_position)
        order = self._final_order(scores, tie_key, counts)
        return (counts, relevance_code(self.run_label[order]), scores[order],
                self.run_doc[order])

    def _final_order(self, scores, tie_key, counts):
        """Permutation to (query byte order, score desc, tie key asc).

        Entries that searches, top-k and ranked lists produce are already ranked
        inside each query, queries one after another by code: then only the query
        blocks move (O(N), no sort). Anything else is sorted.
        """
        query = self.run_query
        if len(query) > 1 and (query[1:] >= query[:-1]).all():
            ranked = scores[1:] < scores[:-1]
            ranked |= (scores[1:] == scores[:-1]) & (tie_key[1:] > tie_key[:-1])
            ranked |= query[1:] != query[:-1]
            if ranked.all():
                sizes = counts[self.query_order]
                starts = (np.cumsum(counts) - counts)[self.query_order]
                return np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + \
                    np.arange(len(query))
        return rank_order(self.query_vocab.byte_rank[query], scores, tie_key)

    def qrels_arrays(self):
        return self._qrels_arrays()


class AdapterQrels(Qrels):
    """``Qrels`` produced by an adapter; its table is built on first use.

    ``Qrels`` methods read ``self._df``; here that is a lazily built frame, so
    evaluating the adapter's own pair never formats a single id string.
    """

    def __init__(self, judgments: Judgments):
        self._judgments = judgments
        self._frame: pl.DataFrame | None = None
        self.path = None
        self._query_ids = None

    @property
    def _df(self) -> pl.DataFrame:  # type: ignore[override]  # made on first use
        if self._frame is None:
            self._frame = self._judgments.qrels_frame()
        return self._frame

    @property
    def relevance_type(self) -> str:
        """``"float"`` when the adapter was given float labels (no table is built)."""
        return "float" if self._judgments.rel_levels.dtype.kind == "f" else "int"


class AdapterRun(Run):
    """``Run`` produced by an adapter; evaluated against its own qrels without strings."""

    def __init__(self, judgments: Judgments, qrels: AdapterQrels, name: str = RUN_NAME):
        self._judgments = judgments
        self._qrels = qrels
        self._frame: pl.DataFrame | None = None
        self.name = name
        self.path = None
        self._query_ids = None

    @property
    def _df(self) -> pl.DataFrame:  # type: ignore[override]  # made on first use
        if self._frame is None:
            self._frame = self._judgments.run_frame(self.name)
        return self._frame

    def pack_direct(self, qrels, *, max_docs=None, complete=False, semantics="trec_eval",
                    keep_doc_ids=False, ties="trec_eval"):
        """``RankedLists`` against ``qrels`` without string work, or None if not possible.

        Only the adapter's own qrels object qualifies. The one case left to the string
        road is ``complete=True`` when a document is literally named trec_eval's
        placeholder id.
        """
        if qrels is not self._qrels:
            return None
        if complete and self._judgments.doc_vocab.contains(BOGUS_DOC_ID):
            return None
        return self._judgments.pack(max_docs=max_docs, complete=complete, semantics=semantics,
                                    run_name=self.name, keep_doc_ids=keep_doc_ids, ties=ties)


def make_pair(judgments: Judgments) -> tuple[AdapterQrels, AdapterRun]:
    qrels = AdapterQrels(judgments)
    return qrels, AdapterRun(judgments, qrels)


def to_ranked(qrels, run, *, max_docs=None, complete=False, semantics="trec_eval",
              keep_doc_ids=False) -> RankedLists:
    """The ``RankedLists`` that ``evaluate(qrels, run, ...)`` computes measures on.

    For an adapter's own ``(qrels, run)`` pair the lists are built numerically from
    the adapter's arrays; any other pair goes through ``encode_qrels`` + ``pack``.
    Both roads give identical lists.

    Parameters
    ----------
    qrels, run : Qrels, Run (or anything :func:`irmetrics.evaluate` accepts)
    max_docs, complete, semantics
        As in :func:`irmetrics.evaluate`.
    keep_doc_ids : bool, default False
        Also fill ``RankedLists.doc_ids`` (strings; costs string work).

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.adapters import from_matrix, to_ranked
    >>> qrels, run = from_matrix(np.array([[0.2, 0.9, 0.5]]), np.array([[1, 0, 2]]))
    >>> lists = to_ranked(qrels, run)
    >>> lists.query_ids.tolist(), lists.code.tolist()
    (['q0'], [0, 2, 1])
    """
    from ..evaluate import Evaluator, as_run  # lazy: irmetrics imports adapters first

    evaluator = Evaluator(qrels, [], max_docs=max_docs, complete=complete, semantics=semantics)
    lists, _ = evaluator.ranked_lists(as_run(run), None,
                                      keep_doc_ids=check_bool("keep_doc_ids", keep_doc_ids))
    return lists
