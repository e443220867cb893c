"""pack(): the one place where ordering, ``max_docs``, the query set and ``complete`` happen.

Input tables are polars frames with string ids:

* qrels: ``query_id``, ``doc_id``, ``relevance`` (Int64);
* run: ``query_id``, ``doc_id``, ``score`` (Float64), at most one row per (query, doc).

The final order is trec_eval's (spec §3.1): query id ascending by bytes, score
descending, then doc id descending by bytes; the rank column is never read.
Nothing here sorts strings wholesale:

* query ids become integer codes once per *run of equal ids* (runs arrive grouped
  by query, so this touches thousands of strings, not millions);
* a run already grouped by query and sorted by score (what systems emit) is put
  in final order by moving whole query blocks; only entries inside groups of tied
  scores are ordered by doc id. Any other input falls back to one numeric sort;
* documents are matched to judgments through 64-bit hashes of
  ``(query, doc id)``, every match verified on the strings themselves; a hash
  collision falls back to an exact string join.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from . import segments as sg
from .ranked import (NOT_IN_POOL, POOL_UNJUDGED, RankedLists, label_histogram, no_query_ids,
                     sorted_query_ids)

#: trec_eval's placeholder document for qrels queries absent from the run (``-c``).
BOGUS_DOC_ID = "ceci_nest_pas_un_docno"

SEMANTICS = ("trec_eval", "pytrec_eval")

#: Orders of documents with equal scores (see :mod:`irmetrics.engine.ties`):
#: trec_eval's doc id descending, the run's own order, or the expectation over all orders.
TIES = ("trec_eval", "input_order", "expected")

#: Seed of the doc-id hash; any fixed value works (hashes never leave the process).
_HASH_SEED = 0x1F2E3D4C
#: Bits of the combined key given to the query code; the rest hold the doc hash.
_QUERY_BITS = 24


@dataclass(frozen=True)
class EncodedQrels:
    """Qrels prepared once and reused for every run (see ``Evaluator``).

    Attributes
    ----------
    query_ids : ndarray of str
        Unique qrels query ids, ascending byte order; position = query code.
    rel_hist : ndarray of int64, shape (n_queries, n_levels)
        Judgment counts per query and distinct label ``rel_levels``
        (:func:`~irmetrics.engine.ranked.label_histogram`).
    positive_total : int
        Qrels lines with a label > 0 (trec_eval's ``-c`` summary of num_rel).
    keys : ndarray of uint64 or None
        ``(query code, doc-id hash)`` key of every judgment, judgments grouped by query
        code; None when keys cannot be used (two judgments of one query share a key, or
        too many queries), and matching falls back to an exact string join.
    judgment_query, codes :
        Query code and relevance code (label, or -2 for a negative label) of every
        judgment, in key order.
    doc_ids : polars.Series
        The qrels' doc ids in their own (file) order; see :meth:`judgment_doc_ids`.
    doc_row : ndarray of int64
        Row of ``doc_ids`` of every judgment in key order.
    key_offsets : ndarray of int64 or None
        Judgments of query code ``q`` are ``key_offsets[q]:key_offsets[q + 1]`` in key
        order; None when ``keys`` is.
    sorted_keys : SortedKeys
        ``keys`` sorted for binary searches, built on first need (see :func:`lookup_codes`)
        and then reused by every run.
    """

    query_ids: np.ndarray
    rel_hist: np.ndarray
    positive_total: int
    keys: np.ndarray | None
    judgment_query: np.ndarray
    codes: np.ndarray
    doc_ids: pl.Series
    doc_row: np.ndarray
    key_offsets: np.ndarray | None = None
    rel_levels: np.ndarray | None = None
    # Not an __init__ argument: dataclasses.replace() must not share it with other keys.
    sorted_keys: SortedKeys = field(default_factory=lambda: SortedKeys(), init=False,
                                    compare=False, repr=False)

    def judgment_doc_ids(self, judgments: np.ndarray | None = None) -> pl.Series:
        """Doc ids of the judgments at key-order positions ``judgments`` (all for None)."""
        return self.doc_ids.gather(self.doc_row if judgments is None else
                                   self.doc_row[judgments])


def doc_hash(doc_ids: pl.Series) -> np.ndarray:
    """64-bit hash of every doc id (the one hash judgments are matched by)."""
    return doc_ids.hash(seed=_HASH_SEED).to_numpy()


def _combine(qcode: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """``qcode << 40 | hashes >> 24`` (consumes ``hashes``; two passes, no temporaries)."""
    key = np.left_shift(qcode.astype(np.uint64), np.uint64(64 - _QUERY_BITS))
    np.right_shift(hashes, np.uint64(_QUERY_BITS), out=hashes)
    return np.bitwise_or(key, hashes, out=key)


def encode_qrels(qrels: pl.DataFrame) -> EncodedQrels:
    """Encode a qrels table: sorted query ids, per-query label histogram, hashed keys."""
    blocks = run_blocks(qrels)  # qrels come grouped by query: few blocks to encode
    return encode_judgments(blocks.query_ids, blocks.lengths, qrels["relevance"].to_numpy(),
                            qrels["doc_id"])


def encode_judgments(block_ids: pl.Series, block_lengths: np.ndarray, labels: np.ndarray,
                     doc_ids: pl.Series, hashes: np.ndarray | None = None) -> EncodedQrels:
    """:func:`encode_qrels` of judgments given as runs of equal query ids (``block_ids``,
    ``block_lengths``) and per-judgment ``labels``, ``doc_ids`` and, when already
    computed, their :func:`doc_hash` (so that a file can be encoded chunk by chunk)."""
    query_ids_series = block_ids.unique().sort()
    query_ids = np.asarray(query_ids_series.to_list(), dtype=object)
    n_q = len(query_ids)
    block_code = query_codes(block_ids, query_ids)
    block_lengths = np.asarray(block_lengths, dtype=np.int64)
    graded = labels.dtype.kind == "f"  # relevance="float": the labels are the gains
    labels = labels.astype(np.float64 if graded else np.int64, copy=False)
    hist, levels = label_histogram(np.repeat(block_code, block_lengths), labels, n_q)
    # Relevance codes fit in one byte for the usual labels (-2 for negative ones); the
    # negated top label asks for a signed type, which int64 labels always fit.
    code_type = np.float64 if graded else \
        np.result_type(np.int8, np.min_scalar_type(-int(levels[-1]) - 1))
    codes = np.where(labels < 0, POOL_UNJUDGED, labels).astype(code_type)

    # Judgments grouped by query code (file order inside): blocks moved, nothing sorted.
    order, judgment_query = block_move(np.cumsum(block_lengths) - block_lengths,
                                       block_lengths, block_code)
    keys = key_offsets = None
    if n_q < 1 << _QUERY_BITS:
        keys = _combine(judgment_query, (doc_hash(doc_ids) if hashes is None else hashes)[order])
        if pl.Series(keys).n_unique() != len(keys):
            keys = None  # two judgments of one query share a key: exact joins only
        else:
            key_offsets = np.concatenate(
                ([0], np.cumsum(np.bincount(judgment_query, minlength=n_q)))).astype(np.int64)
    return EncodedQrels(
        query_ids=query_ids, rel_hist=hist, rel_levels=levels,
        positive_total=int(np.count_nonzero(labels > 0)), keys=keys,
        judgment_query=judgment_query, codes=codes[order], doc_ids=doc_ids,
        doc_row=order, key_offsets=key_offsets,
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
    ties: str = "trec_eval",
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
    keep_doc_ids : bool
        Keep the ranked doc ids (``RankedLists.doc_ids``).
    ties : {"trec_eval", "input_order", "expected"}
        Order of entries with equal (ordering) scores: doc id descending, or the
        run's row order for ``"input_order"``. ``"expected"`` orders as trec_eval
        does; its measures never read the order inside a tie.
    """
    n_all = len(qrels.query_ids)
    blocks = run_blocks(run)
    block_code = query_codes(blocks.query_ids, qrels.query_ids)  # -1: not in the qrels
    present = np.zeros(n_all, dtype=bool)
    present[block_code[block_code >= 0]] = True
    ignored = blocks.query_ids.filter(block_code < 0).to_list()
    if run_query_ids is not None:
        extra_ids = pl.Series([str(q) for q in run_query_ids], dtype=pl.String)
        extra = query_codes(extra_ids, qrels.query_ids)
        present[extra[extra >= 0]] = True
        ignored += extra_ids.filter(extra < 0).to_list()
    evaluated = np.ones(n_all, dtype=bool) if complete else present
    ranked = rank_run(run, qrels.query_ids[evaluated], ~present[evaluated], blocks=blocks,
                      max_docs=max_docs, semantics=semantics,
                      doc_id_tiebreak=ties != "input_order")
    evaluated_codes = np.flatnonzero(evaluated)
    code = _relevance_codes(qrels, evaluated_codes, evaluated_codes[ranked.query],
                            ranked.doc_col, ranked.order)
    return RankedLists(
        query_ids=qrels.query_ids[evaluated],
        offsets=ranked.offsets,
        code=code,
        rel_hist=qrels.rel_hist[evaluated],
        bogus=~present[evaluated],
        doc_ids=ranked.doc_ids() if keep_doc_ids else None,
        scores=ranked.scores,
        run_name=run_name,
        qrels_positive_total=qrels.positive_total,
        missing_query_ids=no_query_ids() if complete else qrels.query_ids[~present],
        ignored_query_ids=sorted_query_ids(ignored),
        rel_levels=qrels.rel_levels,
    )


@dataclass(frozen=True)
class RunBlocks:
    """Runs of equal consecutive query ids in a run table (what systems emit: one each)."""

    starts: np.ndarray
    lengths: np.ndarray
    query_ids: pl.Series


def run_blocks(run: pl.DataFrame) -> RunBlocks:
    qid_col = run["query_id"]
    change = np.ones(len(run), dtype=bool)
    if len(run) > 1:
        change[1:] = (qid_col.slice(1) != qid_col.slice(0, len(run) - 1)).to_numpy()
    starts = np.flatnonzero(change)
    return RunBlocks(starts, np.diff(np.append(starts, len(run))), qid_col.gather(starts))


@dataclass(frozen=True)
class RankedRun:
    """A run in final rank order: entry ``i`` is row ``order[i]`` of the run (rows past
    the run's end are ``complete``'s placeholders), for query ``query[i]``."""

    order: np.ndarray
    query: np.ndarray
    scores: np.ndarray
    offsets: np.ndarray
    doc_col: pl.Series  # the run's doc ids, then the placeholders'

    def doc_ids(self) -> np.ndarray:
        return self.doc_col.gather(self.order).to_numpy()


def rank_run(run: pl.DataFrame, query_ids: np.ndarray, bogus: np.ndarray, *,
             blocks: RunBlocks | None = None, max_docs: int | None = None,
             semantics: str = "trec_eval", doc_id_descending: bool = True,
             doc_id_tiebreak: bool = True) -> RankedRun:
    """Put the run's entries for ``query_ids`` (ascending byte order) in trec_eval order.

    Order: query, score descending, doc id by bytes descending (ascending for trec_eval's
    preference formats, ``doc_id_descending=False``; the run's row order when
    ``doc_id_tiebreak`` is False); then the first ``max_docs`` of each query. Queries flagged in ``bogus`` (absent from the run, ``complete=True``) get
    trec_eval's one-document placeholder ranking.
    """
    blocks = run_blocks(run) if blocks is None else blocks
    starts, block_len = blocks.starts, blocks.lengths
    block_code = query_codes(blocks.query_ids, query_ids)
    scores = ordering_scores(run["score"].to_numpy(), semantics)
    doc_col = run["doc_id"]
    bogus_codes = np.flatnonzero(bogus)
    if bogus_codes.size:
        # trec_eval's -c placeholder: one non-judged document with score 1.0.
        starts = np.append(starts, len(run) + np.arange(bogus_codes.size))
        block_len = np.append(block_len, np.ones(bogus_codes.size, dtype=np.int64))
        block_code = np.append(block_code, bogus_codes)
        scores = np.append(scores, np.ones(bogus_codes.size))
        doc_col = pl.concat([doc_col, pl.Series([BOGUS_DOC_ID] * bogus_codes.size,
                                                dtype=pl.String)])
    order, entry_q, ranked_scores = _final_order(starts, block_len, block_code, scores,
                                                 doc_col, doc_id_descending, doc_id_tiebreak)
    counts = np.bincount(entry_q, minlength=len(query_ids))
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    if max_docs is not None:
        offsets, top = sg.truncate(offsets, max_docs)
        order, entry_q, ranked_scores = order[top], entry_q[top], ranked_scores[top]
    return RankedRun(order, entry_q, ranked_scores, offsets, doc_col)


def ordering_scores(scores: np.ndarray, semantics: str) -> np.ndarray:
    """The scores trec_eval orders by: as read (trec_eval 10), or rounded to float32 as
    trec_eval 9.0.8 inside pytrec-eval-terrier does (``semantics="pytrec_eval"``)."""
    if semantics != "pytrec_eval":
        return scores
    # C's double -> float conversion: beyond float32's range a score becomes +-inf.
    with np.errstate(over="ignore"):
        return scores.astype(np.float32).astype(np.float64)


def query_codes(ids: pl.Series, sorted_ids: np.ndarray) -> np.ndarray:
    """Position of each id in ``sorted_ids`` (ascending byte order), or -1.

    A binary search over Python strings, whose order is the UTF-8 byte order: the cost
    grows with ``len(ids)`` (a chunk's few query blocks), not with the number of qrels
    queries.
    """
    wanted = np.asarray(ids.to_list(), dtype=object)
    sorted_ids = np.asarray(sorted_ids, dtype=object)
    if len(sorted_ids) == 0 or len(wanted) == 0:
        return np.full(len(wanted), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(sorted_ids, wanted), len(sorted_ids) - 1)
    return np.where(sorted_ids[pos] == wanted, pos, -1).astype(np.int64)


def _final_order(starts, block_len, block_code, scores, doc_col, doc_id_descending=True,
                 doc_id_tiebreak=True):
    """Permutation putting evaluated entries in trec_eval order (others dropped).

    Both roads below keep the run's row order among equal (query, score): block moves
    and a stable sort. Without ``doc_id_tiebreak`` that is the final order.

    Returns ``(order, query code, score)`` of the entries in final order.
    """
    valid = block_code >= 0
    codes = block_code[valid]
    grouped = np.unique(codes).size == codes.size  # every query is one contiguous block
    # Scores may rise only where a new block starts.
    rises = np.flatnonzero(scores[1:] > scores[:-1]) + 1
    descending = bool(np.isin(rises, starts).all())
    if grouped and descending:
        order, ranked_q = block_move(starts[valid], block_len[valid], codes)
    else:
        entry_code = np.repeat(block_code, block_len)
        keep = np.flatnonzero(entry_code >= 0)
        order = keep[np.lexsort((-scores[keep], entry_code[keep]))]
        ranked_q = entry_code[order]
    ranked_scores = scores[order]
    if doc_id_tiebreak:
        order = break_ties_by_doc_id(order, ranked_q, ranked_scores, doc_col, doc_id_descending)
    return order, ranked_q, ranked_scores


def block_move(starts: np.ndarray, lengths: np.ndarray, codes: np.ndarray):
    """Permutation moving whole blocks (``starts``, ``lengths``) into ascending ``codes``
    order, the order inside each block unchanged; returns ``(order, code of each entry)``."""
    by_code = np.argsort(codes, kind="stable")
    b_start, b_len = starts[by_code], lengths[by_code]
    total = int(b_len.sum())
    # 32-bit positions when they fit: half the memory of the largest array made here.
    index = np.int32 if total + int(starts.max(initial=0)) < 2**31 else np.int64
    before = np.concatenate(([0], np.cumsum(b_len)[:-1]))
    order = np.repeat((b_start - before).astype(index), b_len)
    order += np.arange(total, dtype=index)
    return order, np.repeat(codes[by_code], b_len)


def break_ties_by_doc_id(order, q, s, doc_col, descending=True) -> np.ndarray:
    """Within runs of equal (query, score), order entries by doc id (bytes), descending
    unless ``descending`` is False.

    Most tie groups are pairs: they need one vectorised string comparison each. Larger
    groups are ordered together by one sort on (group, doc id).
    """
    if len(order) < 2:
        return order
    tied = (q[1:] == q[:-1]) & (s[1:] == s[:-1])  # entry i+1 ties with entry i
    if not tied.any():
        return order
    first = np.flatnonzero(tied & ~np.concatenate(([False], tied[:-1])))
    last = np.flatnonzero(tied & ~np.concatenate((tied[1:], [False]))) + 1
    size = last - first + 1
    order = order.copy()

    pairs = first[size == 2]
    upper, lower = order[pairs], order[pairs + 1]
    above, below = doc_col.gather(upper), doc_col.gather(lower)
    swap = np.flatnonzero(((above < below) if descending else (above > below)).to_numpy())
    order[pairs[swap]], order[pairs[swap] + 1] = lower[swap], upper[swap]

    big = size > 2
    if big.any():
        g_first, g_size = first[big], size[big]
        slots = np.repeat(g_first - np.concatenate(([0], np.cumsum(g_size)[:-1])), g_size) \
            + np.arange(int(g_size.sum()))
        group = np.repeat(np.arange(len(g_size)), g_size)
        ties = pl.DataFrame({"group": group, "doc": doc_col.gather(order[slots]),
                             "slot": slots})
        resorted = ties.sort(["group", "doc"], descending=[False, descending])["slot"].to_numpy()
        order[slots] = order[resorted]
    return order


def _relevance_codes(qrels: EncodedQrels, queries: np.ndarray, qcode: np.ndarray,
                     doc_col: pl.Series, order: np.ndarray) -> np.ndarray:
    """trec_eval relevance code of every ranked document (-1 when not in the qrels).

    ``doc_col.gather(order)`` are the ranked doc ids; ``qcode`` their qrels query codes,
    all among ``queries`` (distinct, ascending).
    Hashes are computed in file order and gathered, so doc-id strings are only touched
    for the documents that match a judgment.
    """
    if len(order) == 0 or len(qrels.codes) == 0:
        return np.full(len(order), NOT_IN_POOL, dtype=np.int64)
    return lookup_codes(qrels, qcode, doc_hash(doc_col)[order],
                        lambda rows: doc_col.gather(order if rows is None else order[rows]),
                        queries=queries)


def lookup_codes(qrels: EncodedQrels, qcode: np.ndarray, hashes: np.ndarray, doc_ids_at,
                 queries: np.ndarray | None = None) -> np.ndarray:
    """Relevance codes of documents given their query codes and doc-id hashes.

    ``hashes`` (from :func:`doc_hash`, consumed) are aligned with ``qcode``;
    ``doc_ids_at(rows)`` returns the doc ids at positions ``rows`` (all for None), used to
    verify every hash match on the strings and, after a collision, for an exact join.
    ``queries`` (distinct query codes, ascending), when given, holds every code of
    ``qcode``: only their judgments are searched.
    """
    # int64 codes, or float64 ones for float labels
    code_type = np.result_type(np.int64, qrels.codes.dtype)
    code = np.full(len(qcode), NOT_IN_POOL, dtype=code_type)
    if len(qcode) == 0 or len(qrels.codes) == 0:
        return code
    if qrels.keys is not None:
        hit, judgment = _match_keys(qrels, _combine(qcode, hashes), queries)
        # Verify every hash match on the strings; a collision falls through to the join.
        if (doc_ids_at(hit) == qrels.judgment_doc_ids(judgment)).all():
            code[hit] = qrels.codes[judgment]
            return code
    judgments = pl.DataFrame({"q": qrels.judgment_query, "doc_id": qrels.judgment_doc_ids(),
                              "code": qrels.codes})
    joined = pl.DataFrame({"q": qcode, "doc_id": doc_ids_at(None)}).join(
        judgments, on=["q", "doc_id"], how="left", maintain_order="left")
    return joined["code"].fill_null(NOT_IN_POOL).to_numpy().astype(code_type)


def _match_keys(qrels: EncodedQrels, keys: np.ndarray,
                queries: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``keys`` equal to a judgment key (ascending), and that judgment.

    Two roads give the same pairs. A hash join (polars, multi-threaded) costs mostly its
    build side, the judgments of ``queries``: cheap when they are few against the keys
    looked up (deep rankings), but rebuilt for every run. A binary search in the sorted
    judgment keys costs per key looked up, plus one sort per qrels shared by every run.
    """
    if queries is None:
        queries = np.arange(len(qrels.query_ids))
    n_build = int((qrels.key_offsets[queries + 1] - qrels.key_offsets[queries]).sum())
    if not qrels.sorted_keys.worth_searching(qrels.keys, n_build, len(keys)):
        matched = pl.DataFrame({"key": keys}).join(
            key_index_for(qrels, queries), on="key", how="left",
            maintain_order="left")["judgment"]
        hit = np.flatnonzero(matched.is_not_null().to_numpy())
        return hit, matched.gather(hit).to_numpy()
    sorted_keys, sorted_judgment = qrels.sorted_keys.built(qrels.keys)
    # Keys searched in ascending order: each search starts where the last one ended and
    # walks memory the last one warmed (measured up to 1.5x slower in row order).
    probe_row = np.argsort(keys)
    probes = keys[probe_row]
    at = np.searchsorted(sorted_keys, probes)
    np.minimum(at, len(sorted_keys) - 1, out=at)
    found = sorted_keys[at] == probes
    judgment = np.full(len(keys), -1, dtype=np.int64)
    judgment[probe_row[found]] = sorted_judgment[at[found]]
    hit = np.flatnonzero(judgment >= 0)
    return hit, judgment[hit]


class SortedKeys:
    """The judgment keys of one qrels in ascending order, sorted when first worth it.

    ``index`` is ``(sorted keys, judgment of each)``, or None until built. A hash join
    pays for its build side on every lookup, the sort once per qrels; so joins run until
    the judgment rows they built would have paid for the sort (about a quarter of all
    keys, measured), and the sorted keys serve every later lookup that prefers them.

    Examples
    --------
    >>> keys = np.array([30, 10, 20, 40], dtype=np.uint64)
    >>> index = SortedKeys()
    >>> index.worth_searching(keys, 1, 8)  # deep ranking: a join builds 1 row for 8 probes
    False
    >>> index.worth_searching(keys, 1, 1)  # shallow: a quarter of the keys joined, sort
    True
    >>> [a.tolist() for a in index.built(keys)]  # sorted keys, position of each in ``keys``
    [[10, 20, 30, 40], [1, 2, 0, 3]]
    """

    __slots__ = ("index", "joined_rows")

    def __init__(self) -> None:
        self.index: tuple[np.ndarray, np.ndarray] | None = None
        self.joined_rows = 0

    def worth_searching(self, keys: np.ndarray, n_build: int, n_probes: int) -> bool:
        """Whether to search the sorted ``keys`` for ``n_probes`` keys rather than join
        them with ``n_build`` judgment rows."""
        # Measured crossover: a join whose build side is under half the probes is as fast.
        if 2 * n_build <= n_probes:
            return False
        if self.index is None:
            self.joined_rows += n_build
            return 4 * self.joined_rows >= len(keys)
        return True

    def built(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``index``, sorting ``keys`` (those of the qrels) the first time."""
        if self.index is None:
            order = np.argsort(keys)
            self.index = (keys[order], order)  # one assignment: safe to share by threads
        return self.index


def key_index_for(qrels: EncodedQrels, query_codes: np.ndarray) -> pl.DataFrame | None:
    """``key`` → ``judgment`` (position in key order) of the judgments of ``query_codes``
    (distinct codes): the build side of a lookup join, only as large as it needs to be."""
    if qrels.keys is None:
        return None
    lo, hi = qrels.key_offsets[query_codes], qrels.key_offsets[query_codes + 1]
    size = hi - lo
    idx = np.repeat(lo - np.concatenate(([0], np.cumsum(size)[:-1])), size) \
        + np.arange(int(size.sum()))
    return pl.DataFrame({"key": qrels.keys[idx], "judgment": idx})
