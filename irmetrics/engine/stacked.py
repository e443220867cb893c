"""Many qrels sets of the same queries, packed once: a grid's runs read, ordered and looked
up against every set at once, and the measures computed on every set in one pass.

A grid (:func:`irmetrics.evaluate_grid`) evaluates each run against S qrels sets that are
often relabellings of one pool: the same queries, mostly the same documents, other
labels. Packing a chunk of the run (its query blocks, the doc-id lookups, the doc-id
order inside tie groups) then computing the measures, once per set, repeats S times work
that differs only in the labels, and each repeat is short Python-driven numpy work that
holds the interpreter lock, so threads barely help. Here the S sets are merged into one
qrels whose label is the *label vector* of a (query, doc) pair (its code under each set,
or "not judged" where a set lacks the pair): every chunk is packed once against it
(:func:`irmetrics.engine.fanout.evaluate_run_file_fanout` with one qrels), then the
vector codes are mapped to each set's codes and the S rankings stacked into one
:class:`~irmetrics.engine.ranked.RankedLists` of ``S x Q`` queries, measured at once.

The values are those of packing against each set alone, bit for bit:

* the lookups agree: a document has vector code ``c`` exactly when it is judged in some
  set, and set ``s``'s code is ``table[c, s]``;
* the order agrees: trec_eval's tie order puts a tie group holding several codes in
  doc-id descending order and leaves the others as read; a group whose set-``s`` codes
  differ has differing vectors too, and reordering a group whose set-``s`` codes are all
  equal leaves set ``s``'s code sequence as it was;
* the measures agree: every kernel computes each query from its own entries and label
  histogram only (the engine's sums are per query, in entry order), so stacking queries
  changes no value. Sets are stacked only with sets of the same label levels (a measure
  may read the top grade from them).

:func:`stacked_qrels` declines (None) what this does not cover, and the caller packs per
set as before: sets with different query ids, a set that judges trec_eval's ``-c``
placeholder document, float (graded) labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from .gains import ideal_memo
from .pack import EncodedQrels, JudgmentChunk, encode_judgments
from .ranked import NOT_IN_POOL, RankedLists
from .stream import StreamedValues

__all__ = ["STACK_ENTRIES", "StackedQrels", "stacked_qrels", "stacked_evaluator", "split_values"]


@dataclass(frozen=True)
class StackedQrels:
    """S qrels sets of one query set merged for :func:`stacked_evaluator`.

    Attributes
    ----------
    merged : EncodedQrels
        Every (query, doc) pair judged in some set, its code the row of ``table``
        holding its codes under every set.
    table : ndarray of int, shape (V + 1, S)
        Row ``c + 1``: the code under each set of the pairs of vector code ``c``; row 0
        (vector code ``NOT_IN_POOL``): ``NOT_IN_POOL`` everywhere.
    sets : list of EncodedQrels
        The sets, in order (their label histograms, levels and positive totals).
    groups : list of ndarray of int64
        The sets stacked together: those with the same label levels, in set order.
    by_group : list of ndarray of int
        ``table[:, group].T`` of each group, contiguous: a chunk's codes under all its
        sets in one gather, set-major.
    hists_by_group : list of ndarray of int64
        Each group's label histograms side by side (sets x queries x levels): a batch's
        rows in one gather, not one per set.
    ideals : dict
        The ideal gains of the query blocks measured so far, shared by the runs of a
        grid (:func:`irmetrics.engine.gains.ideal_memo`).
    """

    merged: EncodedQrels
    table: np.ndarray
    sets: list
    groups: list
    by_group: list
    hists_by_group: list
    ideals: dict = field(default_factory=dict, repr=False, compare=False)


def stacked_qrels(sets: list[EncodedQrels]) -> StackedQrels | None:
    """Merge qrels sets for :func:`stacked_evaluator`, or None when they cannot be
    stacked: fewer than two sets, different query ids, float labels, a judged ``-c``
    placeholder document.

    The sets are merged on their numbers alone (no doc id is read again): one query set
    gives one query code and one key layout, so a pair's key (query code, doc-id hash)
    and fingerprint are the same in every set that judges it.

    Examples
    --------
    >>> from irmetrics.engine.pack import encode_qrels
    >>> a = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["x", "y"], "relevance": [1, 0]})
    >>> b = pl.DataFrame({"query_id": ["q1"], "doc_id": ["y"], "relevance": [2]})
    >>> stacked = stacked_qrels([encode_qrels(a), encode_qrels(b)])
    >>> stacked.table.tolist()      # no vector; y: 0 / 2; x: 1 / not judged (key order)
    [[-1, -1], [0, 2], [1, -1]]
    """
    if len(sets) < 2 or any(s.judges_placeholder or s.codes.dtype.kind == "f" for s in sets):
        return None
    query_ids = sets[0].query_ids
    if any(len(s.query_ids) != len(query_ids) or not np.array_equal(s.query_ids, query_ids)
           for s in sets[1:]):
        return None
    small = np.result_type(np.int8, *(np.min_scalar_type(int(v)) for s in sets
                                      for v in (s.codes.min(initial=0), s.codes.max(initial=0))))
    by_key = _vectors_by_key(sets, small)
    if by_key is not None:
        keys, fingerprints, vectors = by_key
    else:  # a key shared by two documents: pairs told apart by their fingerprints too
        keys, fingerprints = _judged_pairs(sets)
        vectors = np.full((len(keys), len(sets)), NOT_IN_POOL, dtype=small)
        pairs = pl.DataFrame({"key": keys, "fingerprint": fingerprints}).with_row_index("pair")
        for i, s in enumerate(sets):  # one set's lookup in memory at a time
            vectors[_pairs_of(s, pairs).to_numpy(), i] = s.codes
    # distinct rows as opaque byte strings: one sort of short records (np.unique(axis=0)
    # compares element by element, 20x slower); which vector gets which code is immaterial
    rows = np.ascontiguousarray(vectors).view(np.dtype((np.void, vectors.itemsize * len(sets))))
    distinct, vector_code = np.unique(rows.reshape(-1), return_inverse=True)
    table = distinct.view(small).reshape(-1, len(sets))  # the codes' own (small) type
    bits = sets[0].query_bits
    query = (keys >> np.uint64(64 - bits)).astype(np.int64)
    present, lengths = np.unique(query, return_counts=True)
    # Encoded with one label, the vector codes put in after: as labels, they would make
    # a label histogram of queries x distinct vectors (up to one per judged pair: 760 MB
    # for 1,000 queries of 100 pairs in 10 sets), gathered for every chunk and read by
    # no measure (each set's own is). The codes stay in the chunk's (key) order.
    merged = encode_judgments([JudgmentChunk(
        block_ids=pl.Series(query_ids[present].tolist(), dtype=pl.String),
        block_lengths=lengths.astype(np.int64),
        labels=np.zeros(len(keys), dtype=np.int8),
        hashes=keys << np.uint64(bits),  # what _combine turns back into these keys
        fingerprints=fingerprints, judges_placeholder=False)], capacity=len(keys))
    merged = replace(merged, codes=vector_code.reshape(-1).astype(
        np.result_type(np.int8, np.min_scalar_type(-len(distinct)))))
    if not np.array_equal(merged.query_ids, query_ids):
        return None  # a query no set judges a document of: its code would move
    table = np.vstack([np.full((1, len(sets)), NOT_IN_POOL, dtype=small), table])
    groups: dict = {}
    for i, s in enumerate(sets):
        levels = () if s.rel_levels is None else tuple(s.rel_levels.tolist())
        groups.setdefault((levels, s.rel_hist.shape[1]), []).append(i)
    members = [np.asarray(g, dtype=np.int64) for g in groups.values()]
    return StackedQrels(merged=merged, table=table, sets=list(sets), groups=members,
                        by_group=[np.ascontiguousarray(table[:, g].T) for g in members],
                        hists_by_group=[np.stack([sets[int(s)].rel_hist for s in g])
                                        for g in members])


#: Keys merged at once by :func:`_vectors_by_key` (memory: the union and about this many
#: keys of the sets, 8 bytes each: 128 MiB).
_MERGE_KEYS = 1 << 24


def _vectors_by_key(sets: list[EncodedQrels], dtype) -> tuple | None:
    """``(keys, fingerprints, vectors)`` of :func:`stacked_qrels` where a key names one
    document (the usual case: a 64-bit hash of the doc id within its query), from the
    keys alone; None when a key is shared by two documents (then pairs need their
    fingerprints too: :func:`_judged_pairs`' joins).

    No join, no table: the union of the keys grows by :data:`_MERGE_KEYS` keys at a
    time (memory: the union and those keys), and each set's rows are one binary search
    in it: 40 sets of 9,000 judgments merge in a third of the CPU time of joins per set
    (serial work before any run of a grid is read)."""
    if not all(s.unique_keys for s in sets):
        return None
    # Relabellings of one pool (an LLM judging the humans' pool) hold the same keys in the
    # same order: such a set adds nothing to the union, and its rows lie where those of
    # the set before it do (40 binary searches of 9,000 keys were 15 of the stacking's
    # 35 ms, serial work before any run of a grid is read).
    fresh = [i == 0 or not np.array_equal(s.keys, sets[i - 1].keys)
             for i, s in enumerate(sets)]
    keys, waiting, held = np.zeros(0, dtype=np.uint64), [], 0
    for s, new in zip(sets, fresh):
        if new:
            waiting.append(s.keys)
            held += len(s.keys)
        if held >= _MERGE_KEYS or s is sets[-1]:
            keys, waiting, held = np.unique(np.concatenate([keys, *waiting])), [], 0
    fingerprints = np.zeros(len(keys), dtype=np.uint64)
    seen = np.zeros(len(keys), dtype=bool)
    vectors = np.full((len(keys), len(sets)), NOT_IN_POOL, dtype=dtype)
    at = np.zeros(0, dtype=np.intp)
    for i, (s, new) in enumerate(zip(sets, fresh)):
        if new:
            at = np.searchsorted(keys, s.keys)
            first = ~seen[at]
            fingerprints[at[first]] = s.fingerprints[first]
            seen[at] = True
        if not np.array_equal(fingerprints[at], s.fingerprints):
            return None  # one key, two documents
        vectors[at, i] = s.codes
    return keys, fingerprints, vectors


def _judged_pairs(sets: list[EncodedQrels]) -> tuple[np.ndarray, np.ndarray]:
    """Every (key, fingerprint) pair judged in some set, in key order (the judgments of
    one query are then one block of the merged qrels). Built set by set, so that memory
    holds the pairs and one set's lookup at a time, never every set's judgments side by
    side (40 sets of 1.9M judgments would take 2.4 GB in one table)."""
    keys, fingerprints = sets[0].keys, sets[0].fingerprints  # a set judges a pair once
    for s in sets[1:]:
        known = pl.DataFrame({"key": keys, "fingerprint": fingerprints}).with_row_index("pair")
        new = _pairs_of(s, known).is_null().to_numpy()
        keys = np.concatenate([keys, s.keys[new]])
        fingerprints = np.concatenate([fingerprints, s.fingerprints[new]])
    order = np.lexsort((fingerprints, keys))
    return keys[order], fingerprints[order]


def _pairs_of(qrels: EncodedQrels, pairs: pl.DataFrame) -> pl.Series:
    """The ``pair`` of ``pairs`` of each judgment of ``qrels`` (null where none)."""
    return pl.DataFrame({"key": qrels.keys, "fingerprint": qrels.fingerprints}).join(
        pairs, on=["key", "fingerprint"], how="left", maintain_order="left")["pair"]


#: Ranked entries measured at once (sets x entries of the chunk): a chunk is measured on as
#: many of its sets together as stay within this, so memory grows with it, not with the
#: number of sets (the measures hold a few arrays of this length; 1M: 8 MiB each).
#: At 2M, the measures' arrays (16 MiB) were once given back to the system when freed and
#: faulted in again page by page for the next batch (216,000 page faults, a third of the
#: CPU, per call on bench_threads.py's grid of 40 sets x 30 runs; one process' page faults
#: wait for each other across threads), so it was 256K. With the ideals kept for the grid
#: (fewer, other arrays) 1M faults no more (1,700 faults on one thread, 8,000 on two) and
#: calls the measures twice per run of that grid instead of 7 times, and each call's Python
#: steps are work that two threads take turns at: CPU 0.851 -> 0.840 s on one thread,
#: 0.926 -> 0.888 s on two; peak RSS on two threads 164 -> 190 MiB.
STACK_ENTRIES = 1 << 20


def stacked_evaluator(stacked: StackedQrels, evaluate_lists):
    """The per-chunk function of the merged qrels: ``lists`` (packed against
    ``stacked.merged``) -> ``{(set, name): values}`` for every set, each group of sets
    measured by ``evaluate_lists`` (RankedLists -> ``{name: values}``, the same for
    every set) as many at once as :data:`STACK_ENTRIES` allows."""
    query_ids = stacked.merged.query_ids

    def evaluate(lists: RankedLists) -> dict:
        codes = query_code(query_ids, lists.query_ids)
        n = lists.n_queries
        per_batch = max(1, STACK_ENTRIES // max(1, len(lists.code)))
        rows = lists.code + 1  # row 0: not in the pool
        # The offsets of the largest batch, read-only: a smaller batch's are its start.
        widest = min(per_batch, max(len(group) for group in stacked.groups))
        all_offsets = np.concatenate(([0], np.cumsum(np.tile(np.diff(lists.offsets),
                                                             widest)))).astype(np.int64)
        all_offsets.flags.writeable = False
        out = {}
        for group, table, hist in zip(stacked.groups, stacked.by_group,
                                      stacked.hists_by_group):
            first = stacked.sets[int(group[0])]
            for lo in range(0, len(group), per_batch):
                batch = group[lo:lo + per_batch]
                k = len(batch)
                code = np.take(table[lo:lo + k], rows, axis=1).reshape(-1)
                one = RankedLists(
                    query_ids=np.tile(lists.query_ids, k), offsets=all_offsets[:k * n + 1],
                    code=code.astype(np.int64),
                    rel_hist=hist[lo:lo + k][:, codes].reshape(-1, hist.shape[2]),
                    bogus=np.tile(lists.bogus, k),
                    scores=None if lists.scores is None else np.tile(lists.scores, k),
                    run_name=lists.run_name, qrels_positive_total=first.positive_total,
                    rel_levels=first.rel_levels)
                # the ideals depend on the qrels rows only: one per query block and
                # batch of sets for the whole grid, not one per run
                with ideal_memo(stacked.ideals):
                    measured = evaluate_lists(one)
                for name, values in measured.items():
                    for j, s in enumerate(batch):
                        out[(int(s), name)] = values[j * n:(j + 1) * n]
        return {key: out[key] for key in sorted(out, key=lambda key: key[0])}

    return evaluate


def split_values(stacked: StackedQrels, values: StreamedValues) -> list[StreamedValues]:
    """The :class:`StreamedValues` of each set from those of the merged qrels."""
    # one pass over the columns (a scan per set was sets x columns steps, under the
    # interpreter lock: 4.0 -> 0.7 ms of CPU for the 30 runs of a 40-set grid)
    by_set: list[dict] = [{} for _ in stacked.sets]
    for (j, name), column in values.columns.items():
        by_set[j][name] = column
    out = []
    for s, columns in zip(stacked.sets, by_set):
        out.append(StreamedValues(
            query_ids=values.query_ids, columns=columns, run_name=values.run_name,
            qrels_positive_total=s.positive_total, missing_query_ids=values.missing_query_ids,
            ignored_query_ids=values.ignored_query_ids))
    return out


def query_code(sorted_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Position of each of ``ids`` (all present) in ``sorted_ids`` (ascending byte order,
    as both are: Python's string order is code point order, which is UTF-8 byte order)."""
    return np.searchsorted(sorted_ids, ids).astype(np.int64)
