"""Qrels and runs given as Python dicts (``{query_id: {doc_id: value}}``), straight to codes.

The pytrec_eval shape is read in one pass over its queries; every step per entry runs in
C (``struct.pack`` of a ranking's scores, ``str.join`` checking its ids, ``map`` of
``dict.get``) or in numpy, and no string column is built:

* the judgments become a :class:`JudgmentTable`: per qrels query, its judged doc ids
  (the dict's own str objects, not copied) and their labels, plus what RankedLists read
  per query (label histogram, query ids in byte order). It is made once per evaluator;
* a run is never put in rank order entry by entry. Kernels read a ranking only through
  the relevance code at each rank, and every document outside the qrels has the same
  code, so each query's scores are sorted as numbers (one ``np.sort`` of 64-bit keys,
  the query's block in the high bits) and each *judged* document is looked up in the
  run's own dict (``map(ranking.get, judged_docs)``: the cost grows with the judgments,
  not with the length of the run) and put at its rank by a binary search;
* doc-id strings are read only for tie groups that hold a judged document: trec_eval
  orders a tie by doc id descending (``ties="input_order"``: by position in the dict).

Runs are read in chunks of whole queries (about :data:`CHUNK_ENTRIES` entries each), and
each chunk is handed to a sink as it is packed (:mod:`irmetrics.engine.stream`'s), so
evaluating keeps per-query values only and memory is bounded by a chunk, not the run.

Input the fast road does not read (ids that are not str or hold lone surrogates, labels
that are not ints, scores that are not real numbers) goes the general road: judgments
through :meth:`~irmetrics.containers.Qrels.from_dict` (here), a run through
:meth:`~irmetrics.containers.Run.from_dict` and :func:`~irmetrics.engine.pack.pack`
(the caller, told by a None), which convert it or raise their errors naming the query
and document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import chain, repeat
from operator import itemgetter
from struct import Struct
from struct import error as StructError
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from ..containers import DEFAULT_RUN_NAME, Qrels
from ..exceptions import InputFormatError
from . import segments as sg
from .ranked import (
    BOGUS_DOC_ID,
    NOT_IN_POOL,
    POOL_UNJUDGED,
    label_histogram,
    no_query_ids,
    sorted_query_ids,
)
from .sinks import Evaluated, Packed, StreamedValues
from .ordering import descending64_keys, descending_keys, doc_id_tiebreak, float32_scores

__all__ = ["CHUNK_ENTRIES", "JudgmentTable", "evaluate_dict_run", "pack_dict_run"]

#: Run entries per chunk (whole queries; a query longer than this is one chunk): small
#: enough for a chunk's arrays to stay in cache and its memory to stay far below the
#: input dicts' (measured: 2% slower than a quarter million, 15 MiB less at the peak).
CHUNK_ENTRIES = 1 << 17
#: Queries per chunk at most (a run of many empty rankings still comes in chunks).
CHUNK_QUERIES = 1 << 16

_NAN = float("nan")


def _plain_ids(ids) -> bool:
    """Whether every id is a str that the fast road can take as it is: valid Unicode
    text (no lone surrogate). One join and one scan in C; a non-str gives False."""
    try:
        text = "".join(ids)
        if not text.isascii():
            text.encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        return False
    return True


#: Ends a text of :func:`_plain_text`: after its separator, 8 NUL bytes that let
#: :class:`_Texts` read 8 bytes from any string's start.
_PAD = "\0" * 7


def _plain_text(ids) -> str:
    """``"\\0".join(ids)`` and 8 NULs (a :class:`_Texts` text), once every id is known to
    be a str of valid Unicode (no lone surrogate); otherwise the general road
    (``_SlowRoad``). ``ids`` may be an iterable of such joins (a TypeError in making one
    counts)."""
    try:
        text = "\0".join(chain(ids, (_PAD,)))
        if not text.isascii():
            text.encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        raise _SlowRoad from None
    return text


@dataclass(frozen=True, eq=False)
class JudgmentTable:
    """Judgments held for runs given as dicts: per query code, the judged doc ids and
    their labels, in the order the judgments were given.

    Attributes
    ----------
    query_ids : ndarray of str
        Judged query ids (those with at least one judgment) in ascending byte order;
        position = query code.
    query_code : dict
        ``{query_id: code}``.
    doc_ids : ndarray of str (object)
        The judged doc ids (the dicts' own str objects, not copied), query after query
        in code order; ``starts[c]:starts[c + 1]`` are those of query code ``c``. An
        array, not lists: the garbage collector does not walk it (walking a list visits
        each of its strings, a cache miss each).
    labels : ndarray of int64
        The labels, aligned with ``doc_ids``.
    starts : ndarray of int64, shape (n_queries + 1,)
    rel_hist, rel_levels, positive_total
        As :class:`~irmetrics.engine.pack.EncodedQrels`.

    Examples
    --------
    >>> table = JudgmentTable.from_dict({"q2": {"a": 1, "b": -1}, "q1": {"c": 2}})
    >>> table.query_ids.tolist(), table.doc_lists, table.codes.tolist()
    (['q1', 'q2'], [['c'], ['a', 'b']], [2, 1, -2])
    """

    query_ids: np.ndarray
    query_code: dict
    doc_ids: np.ndarray
    labels: np.ndarray
    starts: np.ndarray
    rel_hist: np.ndarray
    rel_levels: np.ndarray
    positive_total: int

    @property
    def doc_lists(self) -> list:
        """``doc_lists[c]``: the judged doc ids of query code ``c``, as lists."""
        if self.query_ids.size == 0:
            return []
        return list(map(np.ndarray.tolist, np.split(self.doc_ids, self.starts[1:-1])))

    @cached_property
    def codes(self) -> np.ndarray:
        """trec_eval relevance code of every judgment: the label, or -2 when negative."""
        labels = self.labels
        small = labels.size == 0 or (labels.min() >= -128 and labels.max() < 128)
        return np.where(labels < 0, POOL_UNJUDGED, labels).astype(
            np.int8 if small else np.int64)

    @classmethod
    def from_dict(cls, judgments: Mapping) -> JudgmentTable:
        """The table of ``{query_id: {doc_id: label}}`` (queries judging nothing are left
        out). Input the fast road does not take is read by
        :meth:`~irmetrics.containers.Qrels.from_dict`, which converts it or raises its
        error naming the query and document."""
        try:
            # The layout first (queries judging something, in id order: the codes), so
            # that each query's doc ids go to their place while the loop below has them
            # in cache (a cache miss per id otherwise, on large judgments).
            qids = list(judgments)
            counts = np.fromiter(map(len, judgments.values()), dtype=np.int64,
                                 count=len(qids))
            judged = np.flatnonzero(counts)
            kept = _pick(qids, judged)
            by_id = np.asarray(sorted(range(len(kept)), key=kept.__getitem__),
                               dtype=np.int64)  # distinct: dict keys
            code = np.full(len(qids), -1, dtype=np.int64)
            code[judged[by_id]] = np.arange(len(kept))
            n = counts[judged[by_id]]
            bounds = np.concatenate(([0], np.cumsum(n))).tolist()
            doc_ids = np.empty(bounds[-1], dtype=object)
            labels = [b""] * len(kept)
            for (qid, docs), c in zip(judgments.items(), code.tolist()):
                if type(docs) is not dict and not isinstance(docs, Mapping):
                    raise _SlowRoad
                if c < 0:
                    continue
                ids = list(docs)
                if type(qid) is not str or not _plain_ids((qid,)) or not _plain_ids(ids) \
                        or len(ids) != bounds[c + 1] - bounds[c]:
                    raise _SlowRoad
                doc_ids[bounds[c]:bounds[c + 1]] = ids
                labels[c] = _longs(len(ids))(*docs.values())
        except (_SlowRoad, TypeError, OverflowError, AttributeError, StructError):
            return cls.from_frame(Qrels.from_dict(judgments).df)
        return cls._finish(_pick(kept, by_id), n, doc_ids,
                           np.frombuffer(b"".join(labels), dtype=np.int64))

    @classmethod
    def from_frame(cls, qrels: pl.DataFrame) -> JudgmentTable:
        """The table of a qrels frame (``query_id``, ``doc_id``, integer ``relevance``;
        (query, doc) pairs unique), judgments of a query in frame order."""
        blocks = qrels.with_row_index("row").group_by("query_id", maintain_order=True) \
            .agg(pl.col("row"), pl.col("doc_id"))
        rows = blocks["row"].explode().to_numpy()
        return cls._build(blocks["query_id"].to_list(),
                          blocks["row"].list.len().to_numpy().astype(np.int64),
                          blocks["doc_id"].to_list(), qrels["relevance"].to_numpy()[rows])

    @classmethod
    def _build(cls, qids: list, counts: np.ndarray, doc_ids: list,
               labels: np.ndarray) -> JudgmentTable:
        """Order queries by id (their judgments follow); ``counts`` are the judgments of
        each of ``qids``, ``doc_ids`` their doc ids (an iterable each) and ``labels``
        their labels, query after query."""
        n = counts
        by_id = sorted(range(len(qids)), key=qids.__getitem__)  # distinct: dict keys
        first = np.cumsum(n) - n
        order = np.asarray(by_id, dtype=np.int64)
        labels = labels[sg.ranges(first[order], n[order])]
        n = n[order]
        flat_ids = np.fromiter(chain.from_iterable(_pick(doc_ids, order)), dtype=object,
                               count=int(n.sum()))
        return cls._finish(_pick(qids, order), n, flat_ids, labels)

    @classmethod
    def _finish(cls, qids: tuple, n: np.ndarray, doc_ids: np.ndarray,
                labels: np.ndarray) -> JudgmentTable:
        """The table of queries ``qids`` in id order, ``n`` judgments each, their doc ids
        and labels query after query."""
        query = np.repeat(np.arange(len(qids)), n)
        hist, levels = label_histogram(query, labels, len(qids))
        query_ids = np.asarray(qids, dtype=object).reshape(-1)
        return cls(
            query_ids=query_ids,
            query_code=dict(zip(query_ids.tolist(), range(len(qids)))),
            doc_ids=doc_ids,
            labels=labels, starts=np.concatenate(([0], np.cumsum(n))).astype(np.int64),
            rel_hist=hist, rel_levels=levels,
            positive_total=int(np.count_nonzero(labels > 0)))

    def to_qrels(self) -> Qrels:
        """The judgments as a :class:`~irmetrics.containers.Qrels` (queries in byte order,
        each query's judgments in the order given)."""
        n = np.diff(self.starts)
        return Qrels.from_df(pl.DataFrame({
            "query_id": pl.Series(np.repeat(self.query_ids, n).tolist(), dtype=pl.String),
            "doc_id": pl.Series(self.doc_ids.tolist(), dtype=pl.String),
            "relevance": self.labels}))


class _SlowRoad(Exception):
    """The input needs the containers' conversions (internal signal)."""


def pack_dict_run(table: JudgmentTable, run: Mapping, **options):
    """RankedLists (codes and offsets; no scores, no doc ids) of the dict ``run``, or
    None when it needs the general road.

    The options are those of :func:`evaluate_dict_run`. Equal, in everything kernels
    read, to ``pack(encode_qrels(qrels.df), Run.from_dict(run).df, ...)``.

    Examples
    --------
    >>> table = JudgmentTable.from_dict({"q": {"a": 1, "b": 0}})
    >>> lists = pack_dict_run(table, {"q": {"a": 1.0, "b": 1.0, "c": 2.0}})
    >>> lists.code.tolist()   # c first; a and b tie: doc id descending puts b first
    [-1, 0, 1]
    """
    return _read_run(table, run, Packed(table), **options)


def evaluate_dict_run(table: JudgmentTable, run: Mapping, evaluate_lists, *,
                      max_docs: int | None = None, complete: bool = False,
                      semantics: str = "trec_eval", ties: str = "trec_eval",
                      infinite_scores: bool = False) -> StreamedValues:
    """Per-query values of the dict ``run`` against ``table``, chunk by chunk.

    Parameters
    ----------
    table : JudgmentTable
    run : mapping
        ``{query_id: {doc_id: score}}``; a query mapped to ``{}`` is present with an
        empty ranking.
    evaluate_lists : callable
        RankedLists of some whole queries → ``{output name: per-query vector}`` (as
        :func:`~irmetrics.engine.stream.evaluate_run_file` takes it).
    max_docs, complete, semantics
        As :func:`~irmetrics.engine.pack.pack`.
    ties : {"trec_eval", "input_order"}
        Tied documents by doc id descending, or in the dict's order.
    infinite_scores : bool
        Accept ``inf`` and ``-inf`` scores (pytrec_eval ranks them first and last);
        NaN is always refused.

    Returns
    -------
    StreamedValues or None
        Values in query-id order, as the file road gives them; None when the run needs
        the general road (``Run.from_dict`` and ``pack``): ids that are not str or hold
        lone surrogates, scores that are not real numbers, a ranking that is not a
        mapping. That road converts them or raises its error.

    Raises
    ------
    InputFormatError
        A NaN score, or an infinite one without ``infinite_scores``, naming the query and
        document.
    ValueError
        ``ties`` is not one of the two above.

    Examples
    --------
    >>> import numpy as np
    >>> table = JudgmentTable.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}})
    >>> num_ret = lambda lists: {"num_ret": np.diff(lists.offsets)}
    >>> run = {"q2": {"c": 1.0, "d": 0.5}, "q1": {"a": 2.0}, "q9": {"x": 1.0}}
    >>> values = evaluate_dict_run(table, run, num_ret)
    >>> values.query_ids.tolist(), values.columns["num_ret"].tolist()
    (['q1', 'q2'], [1, 2])
    >>> values.ignored_query_ids.tolist()      # not in the qrels: not evaluated
    ['q9']
    >>> evaluate_dict_run(table, {"q1": {1: 2.0}}, num_ret) is None   # an int doc id
    True
    """
    return _read_run(table, run, Evaluated(table, evaluate_lists), max_docs=max_docs,
                     complete=complete, semantics=semantics, ties=ties,
                     infinite_scores=infinite_scores)


def _read_run(table, run, sink, *, max_docs=None, complete=False, semantics="trec_eval",
              ties="trec_eval", infinite_scores=False):
    if ties not in ("trec_eval", "input_order"):
        raise ValueError(f"the dict road orders ties 'trec_eval' or 'input_order', "
                         f"not {ties!r}")
    if not isinstance(run, Mapping):
        return None
    chunks = _Reader(table, run, semantics=semantics, ties=ties,
                     infinite_scores=infinite_scores, max_docs=max_docs)
    try:
        for chunk in chunks:
            chunk.pack(sink)
    except _SlowRoad:
        return None
    return chunks.finish(sink, complete=complete, max_docs=max_docs)


class _Reader:
    """The one pass over a run dict: yields :class:`_Chunk` s of whole queries."""

    def __init__(self, table, run, *, semantics, ties, infinite_scores, max_docs):
        self.table, self.run = table, run
        self.semantics, self.ties, self.max_docs = semantics, ties, max_docs
        self.infinite_scores = infinite_scores
        self.present = np.zeros(len(table.query_ids), dtype=bool)
        self.ignored: list = []

    def __iter__(self):
        code_of = self.table.query_code.get
        doc_ids, bounds = self.table.doc_ids, self.table.starts.tolist()
        present = self.present
        chunk = _Chunk(self)
        for qid, docs in self.run.items():
            if type(qid) is not str or not (qid.isascii() or _plain_ids((qid,))):
                raise _SlowRoad
            try:
                n = len(docs)
                chunk.scores.append(_doubles(n)(*docs.values()))
            except (TypeError, AttributeError, OverflowError, StructError):
                raise _SlowRoad from None
            code = code_of(qid, -1)
            if code < 0:
                self.ignored.append(qid)
            elif present[code]:  # pragma: no cover - dict keys are unique
                raise _SlowRoad
            else:
                present[code] = True
                judged = doc_ids[bounds[code]:bounds[code + 1]].tolist()
                try:
                    chunk.judged_scores.append(_doubles(len(judged))(
                        *map(docs.get, judged, repeat(_NAN))))
                except (TypeError, OverflowError, StructError):  # pragma: no cover
                    raise _SlowRoad from None  # (the scores passed above)
                chunk.judged_count.append(len(judged))
            chunk.codes.append(code)
            chunk.lengths.append(n)
            chunk.rankings.append(docs)
            chunk.entries += n
            if chunk.entries >= CHUNK_ENTRIES or len(chunk.codes) >= CHUNK_QUERIES:
                yield chunk
                chunk = _Chunk(self)
        if chunk.codes:
            yield chunk

    def finish(self, sink, *, complete, max_docs):
        """The sink's result, with ``complete``'s placeholder rankings added."""
        table, present = self.table, self.present
        evaluated = np.ones(len(present), dtype=bool) if complete else present
        missing = np.flatnonzero(evaluated & ~present)
        if missing.size:
            one = 0 if max_docs == 0 else 1
            sink.add(missing, np.full(missing.size, one, dtype=np.int64),
                     self._placeholder_codes(missing)[:missing.size * one], bogus=True)
        return sink.finish(
            evaluated, run_name=DEFAULT_RUN_NAME,
            missing_query_ids=no_query_ids() if complete else table.query_ids[~present],
            ignored_query_ids=sorted_query_ids(self.ignored))

    def _placeholder_codes(self, queries: np.ndarray) -> np.ndarray:
        """Code of trec_eval's ``-c`` placeholder document in each of ``queries``: not in
        the pool, unless the qrels judge a document of that name."""
        table = self.table
        codes = np.full(queries.size, NOT_IN_POOL, dtype=np.int64)
        judged = np.flatnonzero(table.doc_ids == BOGUS_DOC_ID)
        if judged.size:
            of_query = np.full(len(table.query_ids), NOT_IN_POOL, dtype=np.int64)
            of_query[np.searchsorted(table.starts, judged, side="right") - 1] = \
                table.codes[judged]
            codes = of_query[queries]
        return codes


class _Chunk:
    """Whole queries of a run dict as read: their scores in dict order and the scores
    the run gives their judged documents (NaN: not retrieved)."""

    def __init__(self, reader: _Reader):
        self.reader = reader
        self.scores: list = []  # bytes of float64s, one per query
        self.judged_scores: list = []
        self.entries = 0
        self.judged_count: list = []
        self.codes: list = []
        self.lengths: list = []
        self.rankings: list = []

    def pack(self, sink) -> None:
        reader, table = self.reader, self.reader.table
        # Every doc id a str of valid Unicode (or the general road): one join in C,
        # whose text also serves the ties below.
        text = _plain_text(map("\0".join, filter(None, self.rankings)))
        scores = np.frombuffer(b"".join(self.scores), dtype=np.float64)
        lengths = np.asarray(self.lengths, dtype=np.int64)
        block_code = np.asarray(self.codes, dtype=np.int64)
        self._check(scores, lengths)
        kept = np.flatnonzero(block_code >= 0)
        if kept.size == 0:
            return
        rows = None  # the kept rankings' entries among the chunk's (None: all)
        if kept.size < block_code.size:
            starts = np.cumsum(lengths) - lengths
            rows = sg.ranges(starts[kept], lengths[kept])
            scores = scores[rows]
        kept_len = lengths[kept]
        keys = _OrderKeys(scores, kept_len, reader.semantics)
        out = np.full(len(scores), NOT_IN_POOL, dtype=table.codes.dtype)

        # Judged documents found in the rankings, each at its rank.
        judged = np.frombuffer(b"".join(self.judged_scores), dtype=np.float64)
        judged_count = np.asarray(self.judged_count, dtype=np.int64)
        at = sg.ranges(table.starts[block_code[kept]], judged_count)
        found = np.flatnonzero(~np.isnan(judged))
        block = np.repeat(np.arange(kept.size), judged_count)[found]
        key = keys.of(judged[found], block)
        # where each one's group of equal keys starts (searched in key order: faster)
        by_key, in_order = _argsort_keys(key, kept.size)
        lo = np.empty(key.size, dtype=np.int64)
        lo[by_key] = np.searchsorted(keys.sorted, in_order, side="left")
        after = np.minimum(lo + 1, max(len(scores) - 1, 0))
        alone = (lo + 1 == len(scores)) | (keys.sorted[after] != key)
        codes = table.codes[at[found]]
        out[lo[alone]] = codes[alone]
        if not alone.all():
            tied = np.flatnonzero(~alone)
            entries = _Texts(text, int(lengths.sum()), lambda: chain.from_iterable(
                self.rankings), rows)
            judged_ids = table.doc_ids[at[found[tied]]].tolist()
            self._place_ties(out, keys, entries, lo[tied], codes[tied],
                             _Texts(_plain_text(judged_ids), len(judged_ids),
                                    lambda: judged_ids))

        offsets = np.concatenate(([0], np.cumsum(kept_len))).astype(np.int64)
        if reader.max_docs is not None:
            offsets, top = sg.truncate(offsets, reader.max_docs)
            out, kept_len = out[top], np.diff(offsets)
        sink.add(block_code[kept], kept_len, out, bogus=False)

    def _check(self, scores: np.ndarray, lengths: np.ndarray) -> None:
        """Refuse NaN scores (and infinite ones unless allowed), naming the entry."""
        bad = np.isnan(scores) if self.reader.infinite_scores else ~np.isfinite(scores)
        if not bad.any():
            return
        i = int(np.argmax(bad))
        b = int(np.searchsorted(np.cumsum(lengths), i, side="right"))
        ranking = self.rankings[b]
        doc = list(ranking)[i - int(lengths[:b].sum())]
        qid = next(q for q, docs in self.reader.run.items() if docs is ranking)
        allowed = "NaN is" if self.reader.infinite_scores else "NaN and infinity are"
        raise InputFormatError(f"score must be a number ({allowed} not allowed), found "
                               f"{float(scores[i])!r}", path="<dict>", query_id=qid,
                               doc_id=doc)

    def _place_ties(self, out, keys, entries, lo, codes, judged) -> None:
        """Put the judged documents of tie groups at their ranks: after the documents of
        their group with a larger doc id (trec_eval), or after those before them in the
        dict (``ties="input_order"``). ``lo``: where each one's group starts in rank
        order; ``codes``: their codes; ``entries``: the doc ids of the chunk's evaluated
        rankings (of which only those of these groups are read) and ``judged`` those of
        the judged documents, as :class:`_Texts`.

        A judged document of a small group is compared with each entry of its group
        (8 bytes at a time, all pairs at once); those of large groups are placed by one
        sort of their groups' entries by (group, doc id)."""
        starts = np.zeros(keys.sorted.size, dtype=bool)
        starts[lo] = True
        first = np.flatnonzero(starts)  # each group by where it starts in rank order
        number = np.empty(keys.sorted.size, dtype=np.int64)
        number[first] = np.arange(first.size)
        group = number[lo]  # of each judged document
        if keys.in_order:  # dict order is rank order: a group's entries are together
            size = np.searchsorted(keys.sorted, keys.sorted[first], side="right") - first
            member = sg.ranges(first, size)
        else:
            wanted = keys.sorted[first]
            member = _members(keys.unsorted, wanted)  # in dict order
            of = np.searchsorted(wanted, keys.unsorted[member])
            member = member[np.argsort(of, kind="stable")]  # by group, dict order within
            size = np.bincount(of, minlength=first.size)
        start = np.cumsum(size) - size  # each group's entries: member[start:start + size]
        before = np.empty(lo.size, dtype=np.int64)
        small = size[group] <= _PAIRWISE_GROUP
        if small.any():
            s = np.flatnonzero(small)
            n = size[group[s]]
            pair = sg.ranges(start[group[s]], n)  # every (entry, judged document) pair
            owner = np.repeat(np.arange(s.size), n)
            order = _compare(entries, member, pair, judged, s, owner, self_paired=True)
            if not doc_id_tiebreak(self.reader.ties):
                own = np.flatnonzero(order == 0)
                before[s[owner[own]]] = pair[own] - start[group[s[owner[own]]]]
            else:
                before[s] = np.bincount(owner, weights=order > 0, minlength=s.size)
        if not small.all():
            b = np.flatnonzero(~small)
            big = sg.distinct(group[b])
            in_big = sg.ranges(start[big], size[big])
            before[b] = self._sorted_before(
                np.repeat(np.arange(big.size), size[big]), entries, member[in_big],
                np.searchsorted(big, group[b]), judged, b)
        out[lo + before] = codes

    def _sorted_before(self, entry_group, entries, entry_rows, judged_group, judged,
                       judged_rows):
        """How many entries of its group come before each judged document: entries
        (their group, in dict order within it, and doc ids ``entries[entry_rows]``) and
        judged documents (their group and doc id ``judged[judged_rows]``) sorted together
        by (group, doc id), each judged document right after its own entry (a stable
        sort; entries come first)."""
        m = entry_group.size
        length = np.concatenate((entries.length[entry_rows], judged.length[judged_rows]))
        shared, x, y = _shared_words(entries, entries.start[entry_rows], length[:m],
                                     judged, judged.start[judged_rows], length[m:])
        group = np.concatenate((entry_group, judged_group))
        word = np.concatenate((x, y))
        # By (group, first word not shared), where ids mostly differ; then the runs of
        # equal (group, word), each judged document's own entry among them, by the
        # remaining words, the length, and entries before judged documents.
        row = np.lexsort((word, group))
        word, group = word[row], group[row]
        same = (word[1:] == word[:-1]) & (group[1:] == group[:-1])
        if same.any():
            tied = np.zeros(row.size, dtype=bool)
            tied[1:] = same
            tied[:-1] |= same
            at = np.flatnonzero(tied)
            run = np.cumsum(~np.concatenate(([False], same)))[at]
            sub = row[at]
            judged_sub = sub >= m
            e_rows = entry_rows[np.where(judged_sub, 0, sub)]
            j_rows = judged_rows[np.where(judged_sub, sub - m, 0)]
            tail = length[sub] * 2 + judged_sub  # an equal entry first
            words = -(-int(length[sub].max()) // 8)
            row[at] = sub[np.lexsort([
                tail,
                *(np.where(judged_sub, judged.word(i, j_rows), entries.word(i, e_rows))
                  for i in reversed(range(shared + 1, words))),
                run])]
        is_entry = row < m
        at = np.flatnonzero(~is_entry)
        order = row[at] - m  # the judged documents in that order
        group_start = np.searchsorted(entry_group, judged_group[order])
        before = np.empty(judged_group.size, dtype=np.int64)
        if not doc_id_tiebreak(self.reader.ties):  # its entry's place in dict order
            before[order] = row[at - 1] - group_start
        else:  # the group's entries with a larger doc id: those after it in the sort
            group_end = np.searchsorted(entry_group, judged_group[order], side="right")
            before[order] = group_end - np.cumsum(is_entry)[at]
        return before


#: Tie groups of at most this many entries place their judged documents by comparing
#: them with every entry of the group; larger ones by sorting (measured crossover).
_PAIRWISE_GROUP = 16


#: log2 of the largest bit table that finds tie-group members (:func:`_members`); the
#: table has about 8 slots per group sought, small enough to stay in cache.
_MEMBER_BITS = 22


def _members(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Positions of ``keys`` that are in ``wanted`` (sorted, distinct), ascending: a
    bit table of hashed keys rules most positions out, a binary search decides."""
    bits = min(_MEMBER_BITS, max(10, int(wanted.size).bit_length() + 3))
    shift = np.uint64(64 - bits)
    spread = np.uint64(0x9E3779B97F4A7C15)  # odd: a multiplicative hash
    table = np.zeros(1 << bits, dtype=bool)
    table[(wanted * spread) >> shift] = True
    candidate = np.flatnonzero(table[(keys * spread) >> shift])
    found = np.minimum(np.searchsorted(wanted, keys[candidate]), wanted.size - 1)
    return candidate[wanted[found] == keys[candidate]]


#: ``_KEEP[k]``: the high ``k`` bytes of a 64-bit word.
_KEEP = np.array([(1 << 64) - (1 << (64 - 8 * k)) for k in range(9)], dtype=np.uint64)


class _Texts:
    """Strings as UTF-8 in one buffer, read 8 bytes at a time as big-endian integers:
    comparing those words in turn, then the lengths, orders two strings as Python
    does (UTF-8 keeps code point order; a string before its extensions).

    Parameters
    ----------
    text : str
        The strings joined by ``"\\0"`` (valid Unicode), then 8 NULs: as
        :func:`_plain_text` gives them.
    count : int
        How many strings (at least one).
    strings : callable
        Gives the strings again; only read when one holds U+0000 (then the
        separators do not tell where the strings end).
    rows : ndarray of int64 or None
        The strings kept, in that order (None: all).
    """

    def __init__(self, text: str, count: int, strings, rows=None):
        buffer = np.frombuffer(text.encode(), dtype=np.uint8)
        last = buffer.size - 8  # where the padding starts
        ends = np.flatnonzero(buffer[:last] == 0)
        if ends.size == count - 1:
            start = np.empty(count, dtype=np.int64)
            start[0] = 0
            np.add(ends, 1, out=start[1:])
            length = np.empty(count, dtype=np.int64)
            np.subtract(ends, start[:-1], out=length[:-1])
            length[-1] = last - start[-1]
        else:  # an id holds U+0000
            length = np.fromiter(map(len, map(str.encode, strings())), dtype=np.int64,
                                 count=count)
            start = np.cumsum(length + 1) - length - 1
        if rows is not None:
            start, length = start[rows], length[rows]
        self.start, self.length, self._last = start, length, last
        # word k: the 8 bytes from byte k on (unaligned; the 8 NULs last)
        self._window = np.ndarray((last + 1,), dtype=">u8", buffer=buffer, strides=(1,))

    def word(self, i: int, rows: np.ndarray) -> np.ndarray:
        """Bytes ``8 i .. 8 i + 7`` of strings ``rows`` (zeros past their end), as
        uint64 whose order is that of the bytes."""
        return self.read(np.minimum(self.start[rows] + 8 * i, self._last),
                         np.clip(self.length[rows] - 8 * i, 0, None))

    def read(self, at: np.ndarray, left: np.ndarray) -> np.ndarray:
        """The 8 bytes from byte ``at`` on (at most the buffer's end), of which those
        past the first ``left`` (>= 0) are taken as zeros, as ordered uint64."""
        return self._window[at].astype(np.uint64) & _KEEP[np.minimum(left, 8)]


def _shared_words(a: _Texts, sa: np.ndarray, la: np.ndarray, b: _Texts, sb: np.ndarray,
                  lb: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """``(i, x, y)``: the strings of ``a`` and ``b`` starting at bytes ``sa`` and ``sb``
    (lengths ``la`` and ``lb``; at least one string in all) share their first ``i``
    words, and word ``i`` of each is ``x`` and ``y``."""
    most = np.iinfo(np.int64).max
    shortest = min(int(la.min(initial=most)), int(lb.min(initial=most)))
    i = 0
    while True:  # (8 i <= shortest: no string ends before byte 8 i)
        x, y = a.read(sa + 8 * i, la - 8 * i), b.read(sb + 8 * i, lb - 8 * i)
        first = x[0] if x.size else y[0]
        if 8 * (i + 1) > shortest or not ((x == first).all() and (y == first).all()):
            return i, x, y
        i += 1


def _compare(a: _Texts, a_rows: np.ndarray, a_pairs: np.ndarray, b: _Texts,
             b_rows: np.ndarray, b_pairs: np.ndarray, *,
             self_paired: bool = False) -> np.ndarray:
    """Per pair ``p``, the sign (int8) of ``a[a_rows[a_pairs[p]]] - b[b_rows[b_pairs[p]]]``
    in string order.

    Words are compared in turn, each round only for the pairs still equal. The words
    every string shares (ids often share a prefix: ``clueweb22-``, ``msmarco_doc_``)
    are found, and the first word that differs read, once per string rather than once
    per pair. Once one string of a pair has ended with every byte so far equal, the
    lengths decide. ``self_paired``: every ``b`` string equals exactly one ``a`` string
    among its pairs; a ``b`` string left with a single undecided pair is then equal to
    that one.
    """
    if a_pairs.size == 0:
        return np.zeros(0, dtype=np.int8)
    sa, la = a.start[a_rows], a.length[a_rows]
    sb, lb = b.start[b_rows], b.length[b_rows]
    i, x, y = _shared_words(a, sa, la, b, sb, lb)
    la, lb = la[a_pairs], lb[b_pairs]
    out = np.sign(la - lb).astype(np.int8)  # when every byte of the shorter is equal
    shorter = np.minimum(la, lb)
    at = 8 * i
    todo = np.flatnonzero(shorter > at)
    x, y = x[a_pairs[todo]], y[b_pairs[todo]]
    while True:
        differ = x != y
        out[todo[differ]] = np.where(x[differ] > y[differ], 1, -1)
        at += 8
        todo = todo[~differ & (shorter[todo] > at)]
        if self_paired and todo.size:
            undecided = np.bincount(b_pairs[todo])
            todo = todo[undecided[b_pairs[todo]] > 1]
        if todo.size == 0:
            return out
        x = a.read(sa[a_pairs[todo]] + at, la[todo] - at)
        y = b.read(sb[b_pairs[todo]] + at, lb[todo] - at)


@lru_cache(maxsize=4096)
def _doubles(n: int):
    """``pack(*values)``: ``n`` real numbers as native float64 bytes. Strict where
    ``float()`` is lenient: a str or None raises ``struct.error``, as in pytrec_eval;
    ints, bools and numpy scalars are converted."""
    return Struct(f"{n}d").pack


@lru_cache(maxsize=4096)
def _longs(n: int):
    """``pack(*values)``: ``n`` integers as native int64 bytes (``struct.error`` for
    anything else: floats, strs, None, values past 64 bits); bools and numpy integers
    are converted."""
    return Struct(f"{n}q").pack


def _pick(items: Sequence, positions: np.ndarray) -> tuple:
    """``tuple(items[i] for i in positions)``, in C."""
    if positions.size == 0:
        return ()
    picked = itemgetter(*positions.tolist())(items)
    return (picked,) if positions.size == 1 else picked


class _OrderKeys:
    """64-bit keys that sort the entries of consecutive blocks in rank order: the block
    in the high 32 bits, then a 32-bit key ascending as the (ordering) score descends.

    Under ``semantics="pytrec_eval"``, and whenever every score is a float32 value
    (scores of most models), the low bits are the float32 score's bits made monotone;
    otherwise they are the dense rank of the float64 score among the chunk's scores.
    """

    def __init__(self, scores: np.ndarray, lengths: np.ndarray, semantics: str):
        as32 = float32_scores(scores)
        self.dense = None
        if semantics != "pytrec_eval" and not np.array_equal(as32, scores):
            desc = descending64_keys(scores)  # -0.0 and 0.0 get equal keys
            self.dense = sg.distinct(desc)
            low = np.searchsorted(self.dense, desc).astype(np.uint64)
        else:
            low = descending_keys(as32)
        del as32
        self.unsorted = np.repeat(np.arange(lengths.size, dtype=np.uint64) << np.uint64(32),
                                  lengths)
        self.unsorted |= low
        del low
        # Rankings given in rank order (as most systems write them) need no sort.
        self.in_order = bool(np.all(self.unsorted[1:] >= self.unsorted[:-1]))
        self.sorted = self.unsorted if self.in_order else np.sort(self.unsorted)

    def of(self, scores: np.ndarray, block: np.ndarray) -> np.ndarray:
        """Keys of ``scores`` (each one of its block's scores) in blocks ``block``."""
        if self.dense is not None:
            low = np.searchsorted(self.dense, descending64_keys(scores)).astype(np.uint64)
        else:
            low = descending_keys(float32_scores(scores))
        low |= block.astype(np.uint64) << np.uint64(32)
        return low


def _argsort_keys(key: np.ndarray, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """``(order, key[order])`` with ``key[order]`` ascending, for keys of
    :class:`_OrderKeys` (``blocks`` blocks above 32 bits of score key). When the
    positions fit in the bits the keys leave free, they ride in them and one sort of
    values does (several times faster than an argsort)."""
    free = 64 - 32 - int(max(blocks - 1, 0)).bit_length()
    shift = int(max(key.size - 1, 0)).bit_length()
    if shift > free:
        order = np.argsort(key)
        return order, key[order]
    packed = key << np.uint64(shift)
    packed |= np.arange(key.size, dtype=np.uint64)
    packed.sort()
    order = (packed & np.uint64((1 << shift) - 1)).astype(np.int64)
    packed >>= np.uint64(shift)
    return order, packed
