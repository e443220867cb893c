"""pack(): the one place where ordering, ``max_docs``, the query set and ``complete`` happen.

Input tables are polars frames with string ids:

* qrels: ``query_id``, ``doc_id``, ``relevance`` (Int64);
* run: ``query_id``, ``doc_id``, ``score`` (Float64), at most one row per (query, doc).

The final order is trec_eval's (:mod:`irmetrics.engine.ordering`): query id ascending by
bytes, score descending, then doc id descending by bytes; the rank column is never read.
Nothing here sorts strings wholesale:

* query ids become integer codes once per *run of equal ids* (runs arrive grouped
  by query, so this touches thousands of strings, not millions);
* a run already grouped by query and sorted by score (what systems emit) is put
  in final order by moving whole query blocks; only entries inside groups of tied
  scores are ordered by doc id. Any other input falls back to one numeric sort;
* documents are matched to judgments through 64-bit keys of ``(query code, doc-id
  hash)``, every match confirmed by a second, independent 64-bit hash of the doc id
  (judgments keep no strings: about 17 bytes each).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from ..exceptions import DuplicateEntryError
from . import segments as sg
from .ordering import break_ties_by_doc_id, doc_id_tiebreak, ordering_scores, rank_order
from .ranked import (BOGUS_DOC_ID, NOT_IN_POOL, POOL_UNJUDGED, RankedLists, label_histogram,
                     no_query_ids, sorted_query_ids)
from .sinks import block_move  # (moved there, where the dict road reads it)

#: Seed of the doc-id hash; any fixed value works (hashes never leave the process).
_HASH_SEED = 0x1F2E3D4C
#: Seed of the doc-id fingerprint, a second hash independent of the first.
_FINGERPRINT_SEED = 0x6C8E9CF5
#: Judgments per slice when checking keys for uniqueness (bounds that check's memory).
_SLICE = 1 << 20


@dataclass(frozen=True)
class EncodedQrels:
    """Qrels prepared once and reused for every run (see ``Evaluator``).

    Judgments are held as numbers only, in the order they were given, about 17 bytes
    each: a run's document matches a judgment of its query when their 64-bit keys (query
    code and doc-id hash) are equal and their independent 64-bit fingerprints too
    (:func:`doc_fingerprint`). The judgments of one query are found through its blocks
    (runs of consecutive judgments of that query), so nothing is reordered.

    Attributes
    ----------
    query_ids : ndarray of str
        Unique qrels query ids, ascending byte order; position = query code.
    rel_hist : ndarray of int64, shape (n_queries, n_levels)
        Judgment counts per query and distinct label ``rel_levels``
        (:func:`~irmetrics.engine.ranked.label_histogram`).
    positive_total : int
        Qrels lines with a label > 0 (trec_eval's ``-c`` summary of num_rel).
    keys : ndarray of uint64
        ``(query code, doc-id hash)`` key of every judgment (:func:`_combine`).
    fingerprints : ndarray of uint64
        :func:`doc_fingerprint` of every judgment's doc id.
    codes : ndarray
        Relevance code (label, or -2 for a negative label) of every judgment.
    block_starts, block_lengths : ndarray of int64
        Every block of judgments, sorted by query code (file order within a query).
    query_blocks : ndarray of int64
        Blocks of query code ``q`` are ``query_blocks[q]:query_blocks[q + 1]``.
    query_judgments : ndarray of int64
        Number of judgments of every query code.
    query_bits : int
        High bits of a key holding the query code; the rest hold the doc-id hash.
    unique_keys : bool
        No two judgments of one query share a key: a key lookup finds at most one
        judgment (else lookups join on key and fingerprint).
    judges_placeholder : bool
        Some judgment is of trec_eval's ``-c`` placeholder document ``BOGUS_DOC_ID``.
    sorted_keys : SortedKeys
        ``keys`` sorted for binary searches, built on first need (see :func:`lookup_codes`)
        and then reused by every run.
    """

    query_ids: np.ndarray
    rel_hist: np.ndarray
    positive_total: int
    keys: np.ndarray
    fingerprints: np.ndarray
    codes: np.ndarray
    block_starts: np.ndarray
    block_lengths: np.ndarray
    query_blocks: np.ndarray
    query_judgments: np.ndarray
    query_bits: int
    unique_keys: bool
    judges_placeholder: bool
    rel_levels: np.ndarray | None = None
    # Not an __init__ argument: dataclasses.replace() must not share it with other keys.
    sorted_keys: SortedKeys = field(default_factory=lambda: SortedKeys(), init=False,
                                    compare=False, repr=False)

    @property
    def judgment_query(self) -> np.ndarray:
        """Query code of every judgment."""
        query = np.empty(len(self.keys), dtype=np.int64)
        block_query = np.repeat(np.arange(len(self.query_ids)), np.diff(self.query_blocks))
        query[sg.ranges(self.block_starts, self.block_lengths)] = \
            np.repeat(block_query, self.block_lengths)
        return query

    def judgments_of(self, query_codes: np.ndarray) -> np.ndarray:
        """Positions of the judgments of ``query_codes`` (distinct), query by query."""
        lo, hi = self.query_blocks[query_codes], self.query_blocks[query_codes + 1]
        blocks = sg.ranges(lo, hi - lo)
        return sg.ranges(self.block_starts[blocks], self.block_lengths[blocks])


@dataclass
class JudgmentChunk:
    """Judgments of consecutive qrels lines, reduced to what encoding keeps: the query id
    and length of each block of lines with one query id, and per line the label, the
    :func:`doc_hash` and the :func:`doc_fingerprint` of its doc id.

    What encoding needs of the chunk alone is worked out when it is made (on the worker
    thread that parses it, :func:`~irmetrics.engine.stream.encode_qrels_file`), so that
    :func:`encode_judgments`, which runs in one thread while the others wait, only adds
    chunks up: the relevance ``codes``, the ``positive`` count, the chunk's distinct
    ``levels`` (labels >= 0) and its ``level_cells`` (the nonzero block x level counts:
    block, level column, count), and ``may_repeat``: whether two lines of one block may
    share a key.
    """

    block_ids: pl.Series
    block_lengths: np.ndarray
    labels: np.ndarray
    hashes: np.ndarray
    fingerprints: np.ndarray
    judges_placeholder: bool
    codes: np.ndarray = field(init=False, repr=False)
    positive: int = field(init=False, repr=False)
    levels: np.ndarray = field(init=False, repr=False)
    level_cells: tuple[np.ndarray, np.ndarray, np.ndarray] = field(init=False, repr=False)
    may_repeat: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        labels = self.labels
        self.codes = np.where(labels < 0, POOL_UNJUDGED, labels)
        self.positive = int(np.count_nonzero(labels > 0))
        lengths = np.asarray(self.block_lengths, dtype=np.int64)
        block = np.repeat(np.arange(len(lengths)), lengths)
        self.levels, self.level_cells = _level_cells(block, self.codes, len(lengths))
        self.may_repeat = _block_repeats(block, self.hashes)

    @classmethod
    def of(cls, qrels: pl.DataFrame, labels: np.ndarray | None = None) -> "JudgmentChunk":
        """The chunk of a qrels table (``labels`` when already converted)."""
        blocks = run_blocks(qrels)
        doc_ids = qrels["doc_id"]
        return cls(blocks.query_ids, blocks.lengths,
                   qrels["relevance"].to_numpy() if labels is None else labels,
                   doc_hash(doc_ids), doc_fingerprint(doc_ids),
                   bool((doc_ids == BOGUS_DOC_ID).any()))


def _level_cells(block: np.ndarray, codes: np.ndarray, n_blocks: int
                 ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The distinct codes >= 0 of a chunk's lines and its block x level counts, kept as
    their nonzero cells (block, level column, count): at most one a line, where the
    table would take blocks x levels (lines**2 for a file whose queries interleave,
    with labels of many values). The table is counted (one pass, no sort) only when
    its width, at most the top label + 1, keeps it no bigger than that."""
    judged = codes >= 0
    if not judged.any():  # no label >= 0: no level (not label_histogram's [0])
        return codes[:0].astype(np.int64), (np.zeros(0, np.int64),) * 3
    top = codes.max()
    if codes.dtype.kind != "f" and n_blocks * (int(top) + 1) <= 2 * len(codes):
        hist, levels = label_histogram(block, codes, n_blocks)
        width = levels.size
        cells = np.flatnonzero(hist)
        counts = hist.reshape(-1)[cells]
    else:
        levels, column = np.unique(codes[judged], return_inverse=True)
        width = levels.size
        cells, counts = np.unique(block[judged] * width + column.reshape(-1),
                                  return_counts=True)
    return levels, (cells // width, cells % width, counts.astype(np.int64, copy=False))


#: Hash bits dropped by :func:`_block_repeats`: keys keep ``64 - query_bits`` bits of the
#: doc-id hash, so distinct (block, hash >> 24) pairs mean distinct keys inside every
#: block whenever ``query_bits <= 24`` (qrels of up to 16.7M queries).
_REPEAT_SHIFT = 24


def _block_repeats(block: np.ndarray, hashes: np.ndarray) -> bool:
    """Whether two lines of one block (``block``: the block of each line) may share a
    key: their doc-id hashes agree in the bits every key keeps. True sends encoding to
    the check of every query (:func:`_first_repeat`), which decides."""
    if len(block) < 2:
        return False
    if int(block[-1]) >= 1 << _REPEAT_SHIFT:
        return True  # the block number would not fit beside the hash bits: check all
    kept = np.right_shift(hashes, np.uint64(_REPEAT_SHIFT))
    kept |= block.astype(np.uint64) << np.uint64(64 - _REPEAT_SHIFT)
    return pl.Series(kept).n_unique() != len(kept)


def doc_hash(doc_ids: pl.Series) -> np.ndarray:
    """64-bit hash of every doc id (the one hash judgments are looked up by)."""
    return doc_ids.hash(seed=_HASH_SEED).to_numpy()


def doc_fingerprint(doc_ids: pl.Series) -> np.ndarray:
    """A second 64-bit hash of every doc id, independent of :func:`doc_hash`: a key match
    counts only when the fingerprints agree too."""
    return doc_ids.hash(seed=_FINGERPRINT_SEED).to_numpy()


def _query_bits(n_queries: int) -> int:
    """Key bits a query code needs (at least one)."""
    return max(1, (n_queries - 1).bit_length())


def _combine(qcode: np.ndarray, hashes: np.ndarray, query_bits: int) -> np.ndarray:
    """``qcode << (64 - query_bits) | hashes >> query_bits`` (consumes ``hashes``; two
    passes, no temporaries)."""
    key = np.left_shift(qcode.astype(np.uint64), np.uint64(64 - query_bits))
    np.right_shift(hashes, np.uint64(query_bits), out=hashes)
    return np.bitwise_or(key, hashes, out=key)


def encode_qrels(qrels: pl.DataFrame) -> EncodedQrels:
    """Encode a qrels table: sorted query ids, per-query label histogram, hashed keys."""
    return encode_judgments([JudgmentChunk.of(qrels)], capacity=qrels.height)


class _Filled:
    """A 1-d array filled chunk by chunk, allocated once for ``capacity`` items (pages
    the chunks never reach are never touched, so they take no memory) and regrown by
    doubling only past it."""

    def __init__(self, dtype, capacity: int) -> None:
        self.data, self.size = np.empty(max(capacity, 1), dtype=dtype), 0

    def extend(self, values: np.ndarray) -> None:
        end = self.size + len(values)
        if end > len(self.data):
            grown = np.empty(max(end, 2 * len(self.data)), dtype=self.data.dtype)
            grown[:self.size] = self.data[:self.size]
            self.data = grown
        self.data[self.size:end] = values
        self.size = end

    def array(self) -> np.ndarray:
        return self.data[:self.size]


def encode_judgments(chunks: Iterable[JudgmentChunk], capacity: int = 0) -> EncodedQrels:
    """:func:`encode_qrels` of judgments given chunk by chunk, in file order.

    Each chunk's hashes are copied into arrays made once for ``capacity`` judgments (an
    upper bound, e.g. from the file's size) and the chunk is dropped, so memory holds
    each judgment once (about 17 bytes), plus one chunk; nothing is concatenated or
    reordered judgment by judgment. The label histogram is added up from the chunks'
    block histograms, and keys are checked for repeats only in the queries of more than
    one block (inside a block each chunk has checked them): work per query, not per
    judgment, in this thread.
    """
    hashes, fingerprints = _Filled(np.uint64, capacity), _Filled(np.uint64, capacity)
    block_ids, block_lengths, chunk_codes, parts = [], [], [], []
    positive_total, judges_placeholder, may_repeat = 0, False, False
    for chunk in chunks:
        hashes.extend(chunk.hashes)
        fingerprints.extend(chunk.fingerprints)
        block_ids.append(chunk.block_ids)
        block_lengths.append(np.asarray(chunk.block_lengths, dtype=np.int64))
        chunk_codes.append(chunk.codes)
        parts.append((chunk.levels, chunk.level_cells, len(chunk.block_lengths)))
        positive_total += chunk.positive
        judges_placeholder |= chunk.judges_placeholder
        may_repeat |= chunk.may_repeat
    keys, fingerprint_array = hashes.array(), fingerprints.array()  # keys: made in place below

    all_block_ids = pl.concat(block_ids) if block_ids else pl.Series([], dtype=pl.String)
    query_ids = np.asarray(all_block_ids.unique().sort().to_list(), dtype=object)
    n_q, bits = len(query_ids), _query_bits(len(query_ids))
    block_code = query_codes(all_block_ids, query_ids)
    block_len = np.concatenate(block_lengths + [np.zeros(0, dtype=np.int64)])
    block_start = np.cumsum(block_len) - block_len
    by_code = np.argsort(block_code, kind="stable")
    query_blocks = np.concatenate(([0], np.cumsum(np.bincount(block_code, minlength=n_q))))

    graded = any(c.dtype.kind == "f" for c in chunk_codes)  # labels are the gains
    codes = np.concatenate(chunk_codes + [np.zeros(0, dtype=np.int8)])
    del chunk_codes
    levels = np.unique(np.concatenate([lv for lv, _, _ in parts] + [np.zeros(0, np.int8)])
                       ).astype(np.float64 if graded else np.int64)
    # Relevance codes fit in one byte for the usual labels (-2 for negative ones); the
    # negated top label asks for a signed type, which int64 labels always fit.
    top = int(levels[-1]) if levels.size and not graded else 0
    codes = codes.astype(np.float64 if graded else
                         np.result_type(np.int8, np.min_scalar_type(-top - 1)), copy=False)

    # The label histogram: each chunk's blocks added to their queries' rows.
    hist = np.zeros((n_q, max(levels.size, 1)), dtype=np.int64)
    first = 0
    for chunk_levels, (block, column, count), n_blocks in parts:
        np.add.at(hist, (block_code[first + block],
                         np.searchsorted(levels, chunk_levels)[column]), count)
        first += n_blocks
    # Keys, slice by slice (bounded temporaries).
    block_end = block_start + block_len
    for lo in range(0, len(keys), _SLICE):
        hi = min(lo + _SLICE, len(keys))
        # the query code of judgments lo:hi, block by block (the blocks that cover them)
        first, last = np.searchsorted(block_end, [lo, hi - 1], side="right")
        counts = np.minimum(block_end[first:last + 1], hi) - \
            np.maximum(block_start[first:last + 1], lo)
        qcode = np.repeat(block_code[first:last + 1], counts)
        keys[lo:hi] = _combine(qcode, keys[lo:hi], bits)
    encoded = EncodedQrels(
        query_ids=query_ids, rel_hist=hist,
        rel_levels=levels if levels.size else np.zeros(1, dtype=levels.dtype),
        positive_total=positive_total, keys=keys, fingerprints=fingerprint_array, codes=codes,
        block_starts=block_start[by_code], block_lengths=block_len[by_code],
        query_blocks=query_blocks.astype(np.int64),
        query_judgments=np.bincount(block_code, weights=block_len,
                                    minlength=n_q).astype(np.int64),
        query_bits=bits, unique_keys=True, judges_placeholder=judges_placeholder)
    # Inside one block, the chunks have found no two keys alike: only queries of several
    # blocks remain to check, unless a chunk found a possible repeat or keys keep fewer
    # hash bits than that check compared.
    checked = None if may_repeat or bits > _REPEAT_SHIFT else \
        np.flatnonzero(np.diff(query_blocks) > 1)
    if _first_repeat(encoded, "keys", queries=checked) is None:
        return encoded
    # Two judgments of a query share a key: lookups join on key and fingerprint, which
    # only the same doc id judged twice (or odds of 2**-104) can share too.
    repeated = _first_repeat(encoded, "keys", "fingerprints")
    if repeated is not None:
        raise DuplicateEntryError(
            "a document is judged twice for this query (or two doc ids share both "
            "64-bit hashes); give each (query_id, doc_id) pair once",
            path="<qrels>", query_id=str(query_ids[repeated]))
    return dataclasses.replace(encoded, unique_keys=False)


def _first_repeat(qrels: EncodedQrels, *columns: str,
                  queries: np.ndarray | None = None) -> int | None:
    """Code of the first query in which two judgments share their values in every one of
    ``columns`` (attribute names of ``qrels``), or None. ``queries``: the codes checked
    (distinct, ascending; all by default).

    Checked on slices of whole queries: memory is bounded by a slice, not the qrels."""
    if queries is None:
        queries = np.arange(len(qrels.query_ids))
    ends = np.cumsum(qrels.query_judgments[queries])
    cuts = np.unique(np.searchsorted(ends, np.arange(0, int(ends[-1]) if ends.size else 0,
                                                     _SLICE), side="right"))
    for first, last in zip(cuts.tolist(), cuts[1:].tolist() + [len(ends)]):
        part_queries = queries[first:last]
        at = qrels.judgments_of(part_queries)
        part = pl.DataFrame([pl.Series(c, getattr(qrels, c)[at]) for c in columns])
        if part.n_unique() != len(at):
            query = np.repeat(part_queries, qrels.query_judgments[part_queries])
            return int(query[part.is_duplicated().to_numpy()][0])
    return None


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
                      doc_id_tiebreak=doc_id_tiebreak(ties))
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


def blocks_in_score_order(codes: np.ndarray, starts: np.ndarray, scores: np.ndarray) -> bool:
    """Whether a run's rows are already ranked but for ties: every query (``codes``, one
    per block of rows starting at ``starts``) is one block, and the ``scores`` (in row
    order) rise only where a block starts. Such a run is put in trec_eval's order by
    moving its blocks, without a sort.

    >>> blocks_in_score_order(np.array([1, 0]), np.array([0, 2]), np.array([3., 3., 5., 1.]))
    True
    >>> blocks_in_score_order(np.array([1, 0]), np.array([0, 2]), np.array([3., 4., 5., 1.]))
    False
    """
    grouped = np.unique(codes).size == codes.size  # every query is one contiguous block
    rises = np.flatnonzero(scores[1:] > scores[:-1]) + 1
    return grouped and bool(np.isin(rises, starts).all())


def _final_order(starts, block_len, block_code, scores, doc_col, doc_id_descending=True,
                 doc_id_tiebreak=True):
    """Permutation putting evaluated entries in trec_eval order (others dropped).

    Both roads below keep the run's row order among equal (query, score): block moves
    and a stable sort. Without ``doc_id_tiebreak`` that is the final order.

    Returns ``(order, query code, score)`` of the entries in final order.
    """
    valid = block_code >= 0
    codes = block_code[valid]
    if blocks_in_score_order(codes, starts, scores):
        order, ranked_q = block_move(starts[valid], block_len[valid], codes)
    else:
        entry_code = np.repeat(block_code, block_len)
        keep = np.flatnonzero(entry_code >= 0)
        order = keep[rank_order(entry_code[keep], scores[keep])]
        ranked_q = entry_code[order]
    ranked_scores = scores[order]
    if doc_id_tiebreak:
        order, ranked_scores = break_ties_by_doc_id(order, ranked_q, ranked_scores, doc_col,
                                                    doc_id_descending)
    return order, ranked_q, ranked_scores


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
                 queries: np.ndarray | None = None, fingerprints_at=None) -> np.ndarray:
    """Relevance codes of documents given their query codes and doc-id hashes.

    ``hashes`` (from :func:`doc_hash`, consumed) are aligned with ``qcode``;
    ``doc_ids_at(rows)`` returns the doc ids at positions ``rows`` (all for None), whose
    fingerprints confirm every key match. ``fingerprints_at(rows)``, when given, returns
    those fingerprints itself (:func:`doc_fingerprint` of the same ids; e.g. from all of
    them hashed once) and ``doc_ids_at`` is not called. ``queries`` (distinct query codes,
    ascending), when given, holds every code of ``qcode``: only their judgments are
    searched.

    A document is taken for a judged one when query, key and fingerprint agree: 64 - b
    bits of one hash and 64 of another (b, the key's query bits, is at most 24 below
    16.7M qrels queries), so two different doc ids of one query agree by chance with
    probability at most 2**-104 (see docs/scale.md).
    """
    # int64 codes, or float64 ones for float labels
    code_type = np.result_type(np.int64, qrels.codes.dtype)
    code = np.full(len(qcode), NOT_IN_POOL, dtype=code_type)
    if len(qcode) == 0 or len(qrels.codes) == 0:
        return code
    if fingerprints_at is None:
        def fingerprints_at(rows):
            return doc_fingerprint(doc_ids_at(rows))
    keys = _combine(qcode, hashes, qrels.query_bits)
    if qrels.unique_keys:
        # At most one judgment per key: a key match is that judgment or no judgment.
        hit, judgment = _match_keys(qrels, keys, queries)
        same = fingerprints_at(hit) == qrels.fingerprints[judgment]
        code[hit[same]] = qrels.codes[judgment[same]]
        return code
    judgments = pl.DataFrame({"key": qrels.keys, "fingerprint": qrels.fingerprints,
                              "code": qrels.codes})
    joined = pl.DataFrame({"key": keys, "fingerprint": fingerprints_at(None)}
                          ).join(judgments, on=["key", "fingerprint"], how="left",
                                 maintain_order="left")
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
    n_build = int(qrels.query_judgments[queries].sum())
    if not qrels.sorted_keys.worth_searching(qrels.keys, n_build, len(keys)):
        # An inner join keeps only the matches (a quarter of a deep ranking's documents):
        # no null column over every key to scan and gather (measured 8.2 -> 5.7 ms for
        # 320K keys against 88K judgments).
        matched = pl.DataFrame({"key": keys, "row": np.arange(len(keys))}).join(
            key_index_for(qrels, queries), on="key", how="inner", maintain_order="left")
        return matched["row"].to_numpy(), matched["judgment"].to_numpy()
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


def key_index_for(qrels: EncodedQrels, query_codes: np.ndarray) -> pl.DataFrame:
    """``key`` → ``judgment`` (position) of the judgments of ``query_codes`` (distinct
    codes): the build side of a lookup join, only as large as it needs to be."""
    idx = qrels.judgments_of(query_codes)
    return pl.DataFrame({"key": qrels.keys[idx], "judgment": idx})
