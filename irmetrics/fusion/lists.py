"""Runs to fuse, as one table of entries over the union of their (query, document) pairs.

Each run is put in trec_eval's order (query, score descending, doc id descending by
bytes: :func:`irmetrics.engine.pack.rank_run`), so that a document's rank in a run is the
rank :func:`irmetrics.evaluate` would give it. Every (query, document) pair retrieved by at
least one run is a *candidate* of its query and gets one code; a run's entries point at
their pair. Methods then read per-run vectors over all pairs (:meth:`FusionLists.spread`),
one run at a time, so memory stays a few arrays over the pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl

from irmetrics.containers import Run
from irmetrics.engine.ordering import break_ties_by_doc_id
from irmetrics.engine.pack import (blocks_in_score_order, doc_fingerprint, doc_hash, query_codes,
                                   rank_run, run_blocks)
from irmetrics.engine.segments import ranges, repeated
from irmetrics.parallel import map_ordered, resolve_threads

__all__ = ["FusionLists", "RankedRuns", "rank_runs", "fusion_lists", "pair_codes",
           "doc_stretch", "block_stretch", "segment_order", "BLOCK_ENTRIES"]

#: Entries (all runs together) fused at once by :func:`irmetrics.fusion.fuse`: queries
#: are fused in spans of at most about this many (:meth:`RankedRuns.spans`), on threads,
#: so that the arrays of a span (4 MiB each) are reused from one span to the next instead
#: of each being a fresh mapping of the process's memory (at 30M entries the page faults
#: of fresh 240 MB arrays cost more than the work), the threads share equal pieces of
#: work, and memory stays a few arrays of a span per thread.
BLOCK_ENTRIES = 1 << 19


@dataclass(frozen=True)
class FusionLists:
    """The runs' entries, grouped by run then query, each query's in rank order.

    Attributes
    ----------
    query_ids : ndarray of str
        Every query of every run, ascending byte order (query code = position).
    run_names : tuple of str
    bounds : ndarray (R + 1)
        Run ``r``'s entries are ``bounds[r]:bounds[r + 1]``.
    offsets : ndarray (R, Q + 1)
        Query ``q`` of run ``r`` is ``bounds[r] + offsets[r, q]`` onwards.
    pair, rank, score : ndarray (N)
        Per entry: its pair code, its 0-based rank in its run's list, its score.
    pair_query : ndarray (P)
        Query code of each pair; pairs are grouped by query.
    pair_entry : ndarray (P)
        An entry of each pair (where its document id is read).
    doc_rows : polars.Series
        Doc ids of the runs' rows that hold the entries (each run's stretch of rows,
        one run after another; :meth:`RankedRuns.lists`).
    entry_row : ndarray (N)
        Per entry: its row in ``doc_rows``. Strings are read only where needed (ties,
        the fused run); :attr:`doc` and :attr:`pair_doc` gather them per entry and pair.
    """

    query_ids: np.ndarray
    run_names: tuple
    bounds: np.ndarray
    offsets: np.ndarray
    pair: np.ndarray
    rank: np.ndarray
    score: np.ndarray
    pair_query: np.ndarray
    pair_entry: np.ndarray
    doc_rows: pl.Series
    entry_row: np.ndarray

    @cached_property
    def doc(self) -> pl.Series:
        """Document id of each entry (N)."""
        return self.doc_rows.gather(self.entry_row)

    @cached_property
    def pair_doc(self) -> pl.Series:
        """Document id of each pair (P)."""
        return self.pair_docs(np.arange(self.n_pairs))

    def pair_docs(self, pairs: np.ndarray) -> pl.Series:
        """Document ids of the pairs ``pairs``."""
        return self.doc_rows.gather(self.entry_row[self.pair_entry[pairs]])

    @property
    def n_pairs(self) -> int:
        return len(self.pair_query)

    def entries(self, r: int) -> slice:
        return slice(int(self.bounds[r]), int(self.bounds[r + 1]))

    def lengths(self, r: int) -> np.ndarray:
        """Length of run ``r``'s list for each query (Q)."""
        return np.diff(self.offsets[r])

    def candidates(self) -> np.ndarray:
        """Number of candidates (documents retrieved by any run) of each query (Q)."""
        return np.diff(self.pair_offsets)

    @cached_property
    def pair_offsets(self) -> np.ndarray:
        """Query ``q``'s pairs are ``pair_offsets[q]:pair_offsets[q + 1]`` (Q + 1)."""
        # pair_query ascends: a search per query, not a count over every pair
        return np.searchsorted(self.pair_query, np.arange(len(self.query_ids) + 1))

    def entry_query(self, r: int) -> np.ndarray:
        """Query code of each of run ``r``'s entries."""
        return np.repeat(np.arange(len(self.query_ids)), self.lengths(r))

    def spread(self, r: int, values: np.ndarray, absent) -> np.ndarray:
        """Run ``r``'s per-entry ``values`` as a vector over all pairs, ``absent`` (a
        scalar, or one value per query) where the run lacks the pair."""
        if np.ndim(absent):
            out = np.asarray(absent, dtype=np.float64)[self.pair_query]
        else:
            out = np.full(self.n_pairs, absent, dtype=np.float64)
        out[self.pair[self.entries(r)]] = values
        return out

    def present(self, r: int) -> np.ndarray:
        """Whether run ``r`` retrieved each pair (P, bool)."""
        out = np.zeros(self.n_pairs, dtype=bool)
        out[self.pair[self.entries(r)]] = True
        return out


@dataclass(frozen=True)
class RankedRuns:
    """Every run in trec_eval's order over the union of their queries: what fusion reads
    of the runs, made once. :meth:`lists` gives the :class:`FusionLists` of a span of
    queries from slices of it (a run's entries are grouped by query, ascending), so that
    queries are fused in blocks without cutting the runs' tables.

    Attributes
    ----------
    query_ids : ndarray of str
        Every query of every run, ascending byte order (query code = position).
    run_names : tuple of str
    offsets : ndarray (R, Q + 1)
        Run ``r``'s entries of query ``q`` are its ranked entries ``offsets[r, q]:
        offsets[r, q + 1]``.
    rows, scores : tuple of ndarray
        Per run, per ranked entry: its row in the run's table and its score; or, for a
        run whose queries are blocks of rows already in score order (as systems write
        runs), None and the run's scores in its rows' order: such a run is ranked
        span by span (:meth:`entries`), no array of the whole run made.
    starts : tuple of ndarray or None
        Per run of blocks, each query's first row in the run's table (Q); else None.
    docs : tuple of polars.Series
        Per run, its doc ids in its rows' order (the table's own column: no strings
        copied).
    """

    query_ids: np.ndarray
    run_names: tuple
    offsets: np.ndarray
    rows: tuple
    scores: tuple
    starts: tuple
    docs: tuple

    def entries(self, r: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows (in run ``r``'s table) and scores of run ``r``'s entries of queries
        ``lo:hi``, in rank order."""
        a, b = int(self.offsets[r, lo]), int(self.offsets[r, hi])
        starts = self.starts[r]
        if starts is None:
            return self.rows[r][a:b], self.scores[r][a:b]
        lengths = np.diff(self.offsets[r, lo:hi + 1])
        rows = ranges(starts[lo:hi], lengths)
        scores = self.scores[r][rows]
        # trec_eval's tie rule inside each query's block: equal scores by doc id
        return break_ties_by_doc_id(rows, repeated(np.arange(hi - lo), lengths), scores,
                                    self.docs[r])

    def query_sizes(self) -> np.ndarray:
        """Entries of all runs together, per query (Q)."""
        return np.diff(self.offsets, axis=1).sum(axis=0)

    def spans(self, entries: int | None = None) -> list[tuple[int, int]]:
        """Consecutive queries ``(lo, hi)`` fused together: the entries of all runs cut
        into ``n`` equal stretches, ``n`` the fewest of at most ``entries`` (default
        :data:`BLOCK_ENTRIES`), and counting them query by query, a span holds the
        queries whose first entry falls in one stretch: at most ``entries`` and one
        query more.

        >>> a = Run.from_dict({"q1": {"d": 1.0}, "q2": {"d": 1.0, "e": 0.5}}, name="a")
        >>> b = Run.from_dict({"q2": {"d": 2.0}, "q3": {"x": 1.0}}, name="b")
        >>> rank_runs([a, b]).spans(3)
        [(0, 2), (2, 3)]
        """
        limit = BLOCK_ENTRIES if entries is None else entries
        sizes = self.query_sizes()
        total = int(sizes.sum())
        if not len(sizes):
            return [(0, 0)]
        stretch = -(-total // max(-(-total // limit), 1))  # equal, at most the limit
        # a query's span: where its first entry falls, in stretches
        span_of = (np.cumsum(sizes) - sizes) // max(stretch, 1)
        cuts = np.flatnonzero(np.diff(span_of)) + 1
        bounds = [0, *cuts.tolist(), len(sizes)]
        return list(zip(bounds[:-1], bounds[1:]))

    def lists(self, lo: int = 0, hi: int | None = None, *,
              threads: int | None = 1) -> FusionLists:
        """The :class:`FusionLists` of queries ``lo:hi`` (query codes from 0 there);
        ``threads`` sort the pairs (:func:`pair_codes`)."""
        hi = len(self.query_ids) if hi is None else hi
        offsets = self.offsets[:, lo:hi + 1]
        start = offsets[:, :1]
        lengths = np.diff(offsets, axis=1)
        n_queries = hi - lo
        codes = np.arange(n_queries)
        query, rank, rows, scores, hashes, fingerprints = [], [], [], [], [], []
        stretches, held = [], 0
        for r, (a, b) in enumerate(zip(offsets[:, 0].tolist(), offsets[:, -1].tolist())):
            run_rows, run_scores = self.entries(r, lo, hi)
            starts = self.starts[r]
            found = None if starts is None else \
                block_stretch(self.docs[r], starts[lo:hi], lengths[r], run_rows)
            ids, at = doc_stretch(self.docs[r], run_rows) if found is None else found
            stretches.append(ids)
            rows.append(at + held)
            held += len(ids)
            scores.append(run_scores)
            hashes.append(doc_hash(ids)[at])
            fingerprints.append(doc_fingerprint(ids)[at])
            query.append(np.repeat(codes, lengths[r]))
            rank.append(np.arange(b - a) - np.repeat(offsets[r, :-1] - a, lengths[r]))
        entry_row = np.concatenate(rows)
        entry_query = np.concatenate(query)
        # The span's doc ids in one chunk (gathers from a chunked column of strings are
        # several times slower): a few MB, where one column of every run's ids would be
        # fresh pages on every call (480 MB at 30M entries).
        doc_rows = pl.concat(stretches, rechunk=True)
        pair, first, pair_query = pair_codes(entry_query, doc_rows, n_queries,
                                             rows=entry_row, hashes=np.concatenate(hashes),
                                             fingerprints=np.concatenate(fingerprints),
                                             lengths=lengths, threads=threads)
        sizes = offsets[:, -1] - offsets[:, 0]
        return FusionLists(
            query_ids=self.query_ids[lo:hi], run_names=self.run_names,
            bounds=np.concatenate(([0], np.cumsum(sizes))).astype(np.int64),
            offsets=(offsets - start).astype(np.int64), pair=pair,
            rank=np.concatenate(rank).astype(np.int64), score=np.concatenate(scores),
            pair_query=pair_query, pair_entry=first, doc_rows=doc_rows,
            entry_row=entry_row)


def rank_runs(runs: list[Run], *, threads: int | None = None) -> RankedRuns:
    """``runs`` (already :class:`Run` tables), each put in trec_eval's order
    (:func:`irmetrics.engine.pack.rank_run`) over the union of their queries; the runs
    on ``threads`` threads."""
    frames = [run.df for run in runs]
    # The queries from each run's blocks of equal query ids (one per query as systems
    # write runs), not from every row; rank_run reuses the blocks.
    blocks = map_ordered(run_blocks, frames, threads=threads)
    query_ids = np.unique(np.concatenate(
        [b.query_ids.to_numpy().astype(object) for b in blocks]
        or [np.empty(0, dtype=object)]))
    no_placeholders = np.zeros(len(query_ids), dtype=bool)

    def one(r: int):
        in_blocks = _ranked_blocks(frames[r], blocks[r], query_ids)
        if in_blocks is not None:
            return None, *in_blocks
        ranked = rank_run(frames[r], query_ids, no_placeholders, blocks=blocks[r])
        # doc ids stay in row order: entries point at their rows (no strings copied)
        return ranked.order, ranked.scores, ranked.offsets, None

    ranked = map_ordered(one, range(len(frames)), threads=threads)
    return RankedRuns(
        query_ids=query_ids, run_names=tuple(run.name for run in runs),
        offsets=np.array([part[2] for part in ranked], dtype=np.int64).reshape(
            len(runs), len(query_ids) + 1),
        rows=tuple(part[0] for part in ranked), scores=tuple(part[1] for part in ranked),
        starts=tuple(part[3] for part in ranked),
        docs=tuple(frame["doc_id"] for frame in frames))


def _ranked_blocks(frame: pl.DataFrame, blocks, query_ids: np.ndarray):
    """``(scores, offsets, starts)`` of a run whose queries are each one block of rows
    in score order (descending, ties in any order), what :meth:`RankedRuns.entries`
    ranks span by span; else None (:func:`~irmetrics.engine.pack.rank_run` ranks it
    whole): :func:`~irmetrics.engine.pack.blocks_in_score_order`, rank_run's own test
    for moving blocks instead of sorting."""
    code = query_codes(blocks.query_ids, query_ids)
    scores = frame["score"].to_numpy()
    if not blocks_in_score_order(code, blocks.starts, scores):
        return None
    lengths = np.zeros(len(query_ids), dtype=np.int64)
    lengths[code] = blocks.lengths
    starts = np.zeros(len(query_ids), dtype=np.int64)
    starts[code] = blocks.starts
    return scores, np.concatenate(([0], np.cumsum(lengths))), starts


def doc_stretch(docs: pl.Series, rows: np.ndarray) -> tuple[pl.Series, np.ndarray]:
    """Doc ids that hold ``docs[rows]`` (one run's entries of a span of queries), and
    the position of each of ``rows`` in them: ``ids.gather(at)`` is ``docs[rows]``.

    A run's queries are blocks of its rows: the stretch of rows the entries span
    (a slice, no strings copied) when it is at most twice as long as they are, else the
    strings gathered.

    >>> ids, at = doc_stretch(pl.Series(["a", "b", "c", "b", "e"]), np.array([3, 1]))
    >>> ids.to_list(), at.tolist()
    (['b', 'c', 'b'], [2, 0])
    """
    if not len(rows):
        return docs.slice(0, 0), np.zeros(0, dtype=np.int64)
    lo, hi = int(rows.min()), int(rows.max()) + 1
    if hi - lo > 2 * len(rows):
        return docs.gather(rows), np.arange(len(rows))
    return docs.slice(lo, hi - lo), rows - lo


#: :func:`block_stretch` takes a slice of a run's rows per this many entries at most
#: (or 8); past it, the doc ids are gathered (each slice costs a call, not a copy).
ENTRIES_PER_SLICE = 1024


def block_stretch(docs: pl.Series, starts: np.ndarray, lengths: np.ndarray,
                  rows: np.ndarray) -> tuple[pl.Series, np.ndarray] | None:
    """:func:`doc_stretch` for a run whose queries are blocks of rows, query ``q``'s
    ``starts[q]:starts[q] + lengths[q]`` (``rows``: those rows, query by query): the
    blocks as slices of ``docs`` (no strings copied), blocks that follow one another
    in the run one slice, in the run's row order; and each of ``rows``' position in
    them. None where that takes more than 8 slices and more than one per
    :data:`ENTRIES_PER_SLICE` entries.

    The queries of a span follow their ids' byte order, and a run's need not: runs
    written in numeric order ("1", "2", ..., "10") hold a span's queries in a few
    stretches of rows apart, not one.

    >>> docs = pl.Series(["a", "b", "c", "d", "e", "f"])
    >>> ids, at = block_stretch(docs, np.array([4, 0, 2]), np.array([2, 2, 0]),
    ...                         np.array([5, 4, 0, 1]))
    >>> ids.to_list(), at.tolist()
    (['a', 'b', 'e', 'f'], [3, 2, 0, 1])
    """
    full = np.flatnonzero(lengths > 0)
    by_row = full[np.argsort(starts[full], kind="stable")]
    first, n = starts[by_row], lengths[by_row]
    cuts = np.flatnonzero(first[1:] != first[:-1] + n[:-1]) + 1
    if len(cuts) + 1 > max(8, len(rows) // ENTRIES_PER_SLICE):
        return None
    place = np.zeros(len(starts), dtype=np.int64)  # each block's first position
    place[by_row] = np.cumsum(n) - n
    bounds = [0, *cuts.tolist(), len(by_row)]
    pieces = [docs.slice(int(first[a]), int(first[b - 1] + n[b - 1] - first[a]))
              for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    at = rows - repeated(starts - place, lengths)
    return pl.concat(pieces, rechunk=False) if pieces else docs.slice(0, 0), at


def fusion_lists(runs: list[Run]) -> FusionLists:
    """The entries of ``runs`` (already :class:`Run` tables) over their pairs.

    >>> a = Run.from_dict({"q": {"d1": 2.0, "d2": 1.0}}, name="a")
    >>> b = Run.from_dict({"q": {"d2": 5.0, "d3": 5.0}}, name="b")
    >>> lists = fusion_lists([a, b])
    >>> lists.n_pairs, lists.rank.tolist(), lists.pair_doc.gather(lists.pair).to_list()
    (3, [0, 1, 0, 1], ['d1', 'd2', 'd3', 'd2'])
    """
    return rank_runs(runs).lists(threads=None)


#: Most cells (rows x width) of one padded table :func:`segment_order` sorts at once.
BLOCK_CELLS = 1 << 22


def segment_order(values: np.ndarray, offsets: np.ndarray, fill, *,
                  threads: int | None = 1) -> np.ndarray:
    """The permutation sorting ``values`` ascending within each segment
    ``offsets[s]:offsets[s + 1]`` (segments keep their places): ``order[offsets[s]:
    offsets[s + 1]]`` are segment ``s``'s positions by value. ``fill`` must exceed
    every value; the order among equal values is unspecified (but the same for any
    ``threads``).

    Segments are sorted as the rows of tables (:func:`sort_segments`). Non-negative
    integers below ``2^(63 - b)``, ``b`` the bits of the longest segment's length,
    carry their place in their segment in their low bits and are sorted as values, not
    argsorted (about half the time). So do float64 values without NaN, as integers
    in the floats' order: 32-bit keys scaled to each segment's range of finite values
    (:func:`_narrow_keys`) while they keep :data:`NARROW_VALUE_BITS` bits beside the
    place, else :func:`float_keys` less their low ``b + 1`` bits; values whose keys
    are then equal but not the values are put in order afterwards.

    Examples
    --------
    >>> segment_order(np.array([3.0, 1.0, 2.0, 5.0, 4.0]), np.array([0, 3, 3, 5]),
    ...               np.inf).tolist()
    [1, 2, 0, 4, 3]
    >>> segment_order(np.array([3, 1, 2, 1]), np.array([0, 4]), 2**63 - 1).tolist()
    [1, 3, 2, 0]
    """
    lengths = np.diff(offsets)
    order = np.arange(len(values), dtype=np.int64)
    if not (lengths > 1).any():
        return order
    bits = int(lengths.max()).bit_length()  # a place (below the length) in as many bits
    floats = values.dtype == np.float64 and not np.isnan(values).any()
    if floats or values.dtype.kind in "iu" and int(values.min()) >= 0 \
            and int(values.max()) < 1 << (63 - bits):
        start = np.repeat(offsets[:-1], lengths)
        packed = _narrow_keys(values, offsets, lengths, NARROW_BITS - bits) \
            if floats and NARROW_BITS - bits >= NARROW_VALUE_BITS else None
        if packed is None:
            packed = float_keys(values, 63 - bits) if floats else values.astype(np.int64)
        packed <<= bits
        packed |= (order - start).astype(packed.dtype, copy=False)
        sort_segments(packed, offsets, np.iinfo(packed.dtype).max, threads=threads)
        keys = packed >> bits  # the values' (truncated) keys in sorted order
        packed &= (1 << bits) - 1
        start += packed  # the positions (int64 whatever the keys' width)
        if floats:
            _order_near_ties(values, start, keys, offsets)
        return start
    for block, width, cell in _tables(offsets):
        if cell is None:  # the entries are the table
            a, b = int(offsets[block[0]]), int(offsets[block[-1] + 1])
            picked = _argsort_rows(values[a:b].reshape(len(block), width), threads)
            order[a:b] = (picked + offsets[block][:, None]).reshape(-1)
            continue
        entries, cell = cell
        table = np.full(len(block) * width, fill, dtype=values.dtype)
        table[cell] = values[entries]
        # fill sorts last: the first n columns of a row are its segment's
        picked = _argsort_rows(table.reshape(len(block), width), threads).reshape(-1)
        order[entries] = entries - cell % width + picked[cell]
    return order


#: Fewest bits of a float's key in a 32-bit key (the rest: its place in its segment)
#: for :func:`segment_order` to sort 32-bit keys; fewer and it sorts 64-bit ones.
NARROW_VALUE_BITS = 16


def _narrow_keys(values: np.ndarray, offsets: np.ndarray, lengths: np.ndarray,
                 bits: int) -> np.ndarray | None:
    """int32 keys in ``[0, 2^bits)`` of finite float64 ``values``, per segment
    ``floor((v - min) * (2^bits - 1) / (max - min))`` (min and max of the segment);
    None if a segment's range is not a finite float (or a value not finite).

    Subtraction and multiplication by a positive number, rounded, never reverse two
    values, nor does the floor: ``v <= w`` gives ``key(v) <= key(w)``, so that values
    sorted on their keys are in order but for runs of equal keys, which
    :func:`_order_near_ties` puts in order. 32-bit keys sort about twice as fast as
    64-bit ones; where the segment's values spread over far more than ``2^bits``
    distinct steps, more runs share a key (slower, never wrong)."""
    full = lengths > 0
    first = offsets[:-1][full]
    low = np.minimum.reduceat(values, first)
    spread = np.maximum.reduceat(values, first)
    spread -= low
    if not np.isfinite(spread).all():  # a value not finite, or a range past float64's
        return None
    scale = np.zeros(len(spread))
    np.divide(float((1 << bits) - 1), spread, out=scale, where=spread > 0)
    n = lengths[full]
    key = values - np.repeat(low, n)
    key *= np.repeat(scale, n)  # at most 2^bits - 1 (+ rounding: floored to it)
    return key.astype(np.int32)


def float_keys(values: np.ndarray, bits: int = 63) -> np.ndarray:
    """int64 keys of float64 ``values`` (no NaN) in ``[0, 2^bits)``, ``bits <= 63``,
    whose order is the floats' order: the top ``bits`` of a 64-bit key in that order,
    so floats that differ only in their last bits may share one.

    IEEE-754 bits of a float64 read as an int64 order like the floats once a negative's
    bits below the sign are flipped (``-0.0`` then sorts before ``0.0``).

    >>> float_keys(np.array([-2.0, -0.5, 0.0, 1.0, np.inf]), 16).tolist()
    [16383, 16415, 32768, 49136, 65520]
    """
    raw = values.view(np.int64)
    key = raw >> 63
    key &= np.int64(2**63 - 1)
    key ^= raw
    key >>= 64 - bits
    key += np.int64(1) << (bits - 1)  # from [-2^(bits-1), 2^(bits-1)): no sign
    return key


def _order_near_ties(values: np.ndarray, order: np.ndarray, keys: np.ndarray,
                     offsets: np.ndarray) -> np.ndarray:
    """``order`` (positions sorted on truncated keys of ``values``, ``keys`` the sorted
    keys) made exact: each run of equal keys in a segment that holds different values
    is sorted on the values (stable). Returns ``values[order]``."""
    v = values[order]
    near = keys[1:] == keys[:-1]
    near &= v[1:] != v[:-1]
    at = np.flatnonzero(near)  # few: entry at + 1 has at's key, not its value
    if not len(at):
        return v
    # Only the runs that hold such an entry are found (a binary search each in its
    # segment's sorted keys), not every run: no pass over all entries.
    segment = np.searchsorted(offsets, at, side="right") - 1
    end = offsets[segment + 1]
    at, segment, end = (a[at + 1 < end] for a in (at, segment, end))  # within segments
    first = _key_bound(keys, offsets[segment], at, keys[at], right=False)
    first, unique = np.unique(first, return_index=True)
    stop = _key_bound(keys, at[unique] + 1, end[unique], keys[at[unique]], right=True)
    members = ranges(first, stop - first)
    run = repeated(np.arange(len(first)), stop - first)
    # the runs' members by (run, value): runs keep their places, so do the segments
    moved = members[np.lexsort((v[members], run))]
    order[members] = order[moved]
    v[members] = v[moved]
    return v


def _key_bound(keys: np.ndarray, lo: np.ndarray, hi: np.ndarray, key: np.ndarray, *,
               right: bool) -> np.ndarray:
    """Per element, the first position in ``keys[lo:hi]`` (sorted) whose key exceeds
    ``key`` (``right``) or is not below it: a binary search each, all at once."""
    lo, hi = lo.copy(), hi.copy()
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        probe = keys[np.where(active, mid, 0)]
        up = active & ((probe <= key) if right else (probe < key))
        lo[up] = mid[up] + 1
        down = active & ~up
        hi[down] = mid[down]


def sort_segments(values: np.ndarray, offsets: np.ndarray, fill, *,
                  threads: int | None = 1) -> None:
    """Sort ``values`` ascending within each segment ``offsets[s]:offsets[s + 1]``, in
    place. ``fill`` must not sort before any value.

    Segments are sorted as the rows of padded tables: many short sorts run in cache
    where one sort of all entries on (segment, value) does not (3-6x faster at 3,000
    per segment). When one table of every segment at most doubles the entries, that
    table is laid over the entries; else there is one per width class (lengths in
    ``[2^(c-1), 2^c)``). Consecutive segments of one length (runs of equal depth) are
    a table already, sorted where they lie. Tables are cut into blocks of at most
    :data:`BLOCK_CELLS` cells, and a block's rows sorted on ``threads`` threads
    (:func:`irmetrics.parallel.map_ordered`).

    >>> values = np.array([3, 1, 2, 5, 4])
    >>> sort_segments(values, np.array([0, 3, 3, 5]), 2**63 - 1)
    >>> values.tolist()
    [1, 2, 3, 4, 5]
    """
    for block, width, cell in _tables(offsets):
        if cell is None:
            a, b = int(offsets[block[0]]), int(offsets[block[-1] + 1])
            _sort_rows(values[a:b].reshape(len(block), width), threads)
            continue
        entries, cell = cell
        table = np.full(len(block) * width, fill, dtype=values.dtype)
        table[cell] = values[entries]
        _sort_rows(table.reshape(len(block), width), threads)
        values[entries] = table[cell]


def _tables(offsets: np.ndarray):
    """The tables :func:`sort_segments` sorts: ``(segments, width, cell)`` per block of
    segments, ``cell`` None where the segments' entries are the table (consecutive, of
    one length), else ``(entries, cell)``: each entry of the segments and its cell in
    a table of ``width`` columns, filled from the left."""
    lengths = np.diff(offsets)
    long = lengths > 1
    if not long.any():
        return
    if len(lengths) * int(lengths.max()) <= 2 * int(offsets[-1] - offsets[0]):
        groups = [np.arange(len(lengths))]
    else:
        width_class = np.frexp(lengths)[1]  # bit length: 2^(c-1) <= length < 2^c
        groups = [np.flatnonzero(width_class == c)
                  for c in np.unique(width_class[long]).tolist()]
    for segments in groups:
        width = int(lengths[segments].max())
        per_block = max(BLOCK_CELLS // width, 1)
        for lo in range(0, len(segments), per_block):
            block = segments[lo:lo + per_block]
            n, start = lengths[block], offsets[block]
            consecutive = block[-1] - block[0] == len(block) - 1
            if consecutive and (n == width).all():
                yield block, width, None
                continue
            entries = np.arange(int(start[0]), int(offsets[block[-1] + 1])) if consecutive \
                else ranges(start, n)
            cell = entries - np.repeat(start - np.arange(len(block)) * width, n)
            yield block, width, (entries, cell)


def _sort_rows(table: np.ndarray, threads) -> None:
    """Each row of ``table`` sorted in place."""
    _each_rows(lambda rows: table[rows].sort(axis=1), len(table), threads)


def _argsort_rows(table: np.ndarray, threads) -> np.ndarray:
    """Each row's columns in ascending order of its values."""
    out = np.empty(table.shape, dtype=np.intp)

    def argsort(rows: slice) -> None:
        out[rows] = np.argsort(table[rows], axis=1)

    _each_rows(argsort, len(table), threads)
    return out


def _each_rows(fn, total: int, threads) -> None:
    """``fn(rows)`` over consecutive slices of ``range(total)``, one per thread (numpy's
    sorts release the interpreter lock)."""
    pieces = min(resolve_threads(threads), max(total // 64, 1))
    cuts = np.linspace(0, total, pieces + 1).astype(int).tolist()
    map_ordered(fn, [slice(i, j) for i, j in zip(cuts[:-1], cuts[1:])], threads=pieces)


#: Bits of a doc id's hash and its place in its query that pair_codes sorts on together
#: (segment_order): below 63, so that no key equals the padding sorted last.
HASH_BITS = 62
#: The same in a 32-bit key, what pair_codes sorts while it keeps 10 bits of hash.
NARROW_BITS = 30


def pair_codes(query: np.ndarray, doc: pl.Series, n_queries: int, *,
               rows: np.ndarray | None = None, hashes: np.ndarray | None = None,
               fingerprints: np.ndarray | None = None, lengths: np.ndarray | None = None,
               hash_bits: int | None = None,
               threads: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One code per distinct (query, document) of the entries, codes grouped by query:
    entry ``i`` is query ``query[i]`` and document ``doc[rows[i]]`` (``doc[i]`` without
    ``rows``).

    The entries are grouped by query and each query's sorted on the top ``bits`` of a
    64-bit hash of the doc id (``hashes``, one per entry; default
    :func:`irmetrics.engine.pack.doc_hash` read through ``rows``) with the entry's place
    in its query in the low ``b`` bits, as one row of a table (:func:`sort_segments`,
    on ``threads`` threads): a 32-bit key, ``bits = 30 - b`` (:data:`NARROW_BITS`),
    while that keeps 10 bits of hash (queries of up to about a million entries), else
    a 64-bit one, ``bits = 62 - b`` (:data:`HASH_BITS`); ``hash_bits``, fewer, only to
    test. Entries of equal keys whose whole hashes differ are then put in order of
    them, so that equal hashes are consecutive. ``lengths`` (R, Q), where the entries
    are R lists one after another, list ``r`` holding ``lengths[r, q]`` entries of
    query ``q`` in query order (as fusion's runs), groups them without a sort.

    Entries of a query with equal hashes are one document when their *fingerprints*
    agree too: a second 64-bit hash with an independent seed (``fingerprints``, one per
    entry; default :func:`irmetrics.engine.pack.doc_fingerprint`), the engine's road
    for judgments (docs/scale.md). Two different doc ids of one query then share a pair
    only if both 64-bit hashes agree by chance: probability ``2^-128`` (the engine
    accepts ``2^-104``). If entries of equal hashes have different fingerprints (the
    first hash collides), the entries are sorted on the strings themselves instead: a
    collision of the first hash costs time, never a wrong pair.

    Returns
    -------
    pair : ndarray (N)
        Each entry's pair code.
    first : ndarray (P)
        An entry of each pair.
    pair_query : ndarray (P)
        Each pair's query code (ascending).

    Examples
    --------
    >>> doc = pl.Series(["a", "b", "a", "a"])
    >>> pair, first, pair_query = pair_codes(np.array([0, 0, 0, 1]), doc, 2)
    >>> len(first), bool(pair[0] == pair[2]), pair_query.tolist()
    (3, True, [0, 0, 1])
    >>> pair_codes(np.array([0, 0, 0, 1]), doc, 2, hash_bits=0)[2].tolist()  # all collide
    [0, 0, 1]
    """
    counts = np.bincount(query, minlength=n_queries)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    # room below the hash for an entry's place in its query; 32-bit keys (sorted twice
    # as fast as 64-bit ones) while they keep 10 bits of hash
    room = int(counts.max(initial=1)).bit_length()
    key_type = np.int32 if room <= NARROW_BITS - 10 else np.int64
    width = (NARROW_BITS if key_type is np.int32 else HASH_BITS) - room
    bits = width if hash_bits is None else min(hash_bits, width)
    if rows is None:
        rows = np.arange(len(query))
    if hashes is None:
        hashes = doc_hash(doc)[rows]
    by_query = _by_query(query, offsets, lengths)
    start = np.repeat(offsets[:-1], counts)  # of each grouped entry's query
    key = np.arange(len(query), dtype=np.int64)
    key -= start  # its place in its query
    key = key.astype(key_type, copy=False)
    if bits:  # below 2**62 (2**30) once shifted: the same numbers as int64 (int32)
        # in place: every temporary of a span is 4 MB of fresh pages to fault in
        top = hashes[by_query]
        top >>= np.uint64(64 - bits)
        top = top.astype(key_type, copy=False)
        top <<= room
        key |= top
        del top
    sort_segments(key, offsets, np.iinfo(key_type).max, threads=threads)
    place = key & ((1 << room) - 1)
    order = by_query[place + start]
    del place, start
    key >>= room
    # Equal keys share the top bits of the first hash: entries whose whole hashes differ
    # are put in order of them, so that each document's entries are consecutive.
    sorted_hashes = _order_near_ties(hashes, order, key, offsets)
    del key
    new = np.empty(len(order), dtype=bool)
    np.not_equal(sorted_hashes[1:], sorted_hashes[:-1], out=new[1:])
    new[offsets[:-1][counts > 0]] = True  # a query's first entry starts a pair
    del sorted_hashes
    if fingerprints is None:
        fingerprints = doc_fingerprint(doc)[rows]
    if not new.all() and _first_hash_collides(fingerprints[order], new):
        doc = doc.gather(rows)
        order = pl.DataFrame({"q": query, "d": doc}).select(
            pl.arg_sort_by("q", "d")).to_series().to_numpy()
        sorted_doc = doc.gather(order)
        new[0] = True
        new[1:] = (query[order][1:] != query[order][:-1]) \
            | (sorted_doc[1:] != sorted_doc[:-1]).to_numpy()
    # pairs started before each entry (a cumsum of booleans to int32 is 5x faster)
    started = np.zeros(len(new) + 1, dtype=np.int32 if len(new) < 2**31 else np.int64)
    np.cumsum(new, out=started[1:])
    pair = np.empty(len(new), dtype=np.int64)
    pair[order] = started[1:]
    pair -= 1
    # pairs are numbered query by query: each query's count of them, repeated
    pair_query = np.repeat(np.arange(n_queries, dtype=np.int64), np.diff(started[offsets]))
    return pair, np.compress(new, order), pair_query  # compress: 3x a boolean index


def _first_hash_collides(fingerprints: np.ndarray, new: np.ndarray) -> bool:
    """Whether two entries that :func:`pair_codes` found in one pair (``new`` False:
    the same key as the entry before, in sorted order) have different ``fingerprints``
    (of the entries in that order)."""
    agree = fingerprints[1:] == fingerprints[:-1]
    agree |= new[1:]
    return not agree.all()


def _by_query(query: np.ndarray, offsets: np.ndarray, lengths: np.ndarray | None):
    """The entries grouped by query, each query's in entry order (a stable sort on
    ``query``); from ``lengths`` (see :func:`pair_codes`) without one."""
    if lengths is None:
        return np.argsort(query, kind="stable")
    out = np.empty(len(query), dtype=np.int64)
    place = offsets[:-1].copy()  # where each query's entries of the next list go
    first = 0
    for n in lengths:
        size = int(n.sum())
        out[ranges(place, n)] = np.arange(first, first + size)
        place += n
        first += size
    return out
