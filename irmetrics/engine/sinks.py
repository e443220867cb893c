"""The sinks the run roads hand whole query blocks to, shared by the file road
(:mod:`irmetrics.engine.stream`) and the dict road (:mod:`irmetrics.engine.dicts`).

Here apart from the file road so that a dict of dicts imports neither the file
reader (:mod:`irmetrics.containers.trec_text`) nor the chunked streaming code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .ranked import RankedLists


@dataclass
class StreamedValues:
    """Per-query values of a run evaluated chunk by chunk (:func:`evaluate_run_file`).

    ``columns`` maps each output name to its per-query vector, rows in ``query_ids``
    order (ascending byte order, as ``RankedLists.query_ids``); the other attributes
    are those of :class:`~irmetrics.engine.ranked.RankedLists`.
    """

    query_ids: np.ndarray
    columns: dict
    run_name: str
    qrels_positive_total: int
    missing_query_ids: np.ndarray
    ignored_query_ids: np.ndarray


def block_move(starts: np.ndarray, lengths: np.ndarray, codes: np.ndarray, *,
               entry_codes: bool = True):
    """Permutation moving whole blocks (``starts``, ``lengths``) into ascending ``codes``
    order, the order inside each block unchanged; returns ``(order, code of each entry)``
    (None for the codes unless ``entry_codes``)."""
    by_code = np.argsort(codes, kind="stable")
    b_start, b_len = starts[by_code], lengths[by_code]
    total = int(b_len.sum())
    # 32-bit positions when they fit: half the memory of the largest array made here.
    index = np.int32 if total + int(starts.max(initial=0)) < 2**31 else np.int64
    before = np.concatenate(([0], np.cumsum(b_len)[:-1]))
    order = np.repeat((b_start - before).astype(index), b_len)
    order += np.arange(total, dtype=index)
    return order, np.repeat(codes[by_code], b_len) if entry_codes else None


def lists_in_code_order(qrels: Any, query_codes_, lengths, codes, bogus,
                        scores=None, **query_set) -> RankedLists:
    """RankedLists of whole blocks (query codes, lengths and entry codes in file order;
    each query once; ``scores`` of the entries or None), the blocks moved into
    query-code order."""
    lengths = np.asarray(lengths, dtype=np.int64)
    order, _ = block_move(np.cumsum(lengths) - lengths, lengths, query_codes_,
                          entry_codes=False)
    by_code = np.argsort(query_codes_, kind="stable")
    in_order = query_codes_[by_code]
    return RankedLists(
        query_ids=qrels.query_ids[in_order],
        offsets=np.concatenate(([0], np.cumsum(lengths[by_code]))).astype(np.int64),
        code=codes[order].astype(np.int64),
        scores=None if scores is None else scores[order],
        rel_hist=qrels.rel_hist[in_order],
        bogus=np.asarray(bogus, dtype=bool)[by_code] if np.ndim(bogus) else
        np.full(in_order.size, bool(bogus)),
        qrels_positive_total=qrels.positive_total,
        rel_levels=qrels.rel_levels,
        **query_set,
    )


class Packed:
    """Sink of :func:`pack_run_file`: every block kept, one RankedLists at the end."""

    # qrels: an EncodedQrels, or engine.dicts.JudgmentTable (read alike)
    def __init__(self, qrels: Any):
        self.qrels = qrels
        self.query_codes: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.codes: list[np.ndarray] = []
        self.bogus: list[np.ndarray] = []

    def prepare(self, query_codes_, lengths, codes, *, bogus: bool, scores=None):
        return query_codes_, lengths, codes, np.full(query_codes_.size, bogus)

    def add(self, query_codes_, lengths, codes, *, bogus: bool, scores=None) -> None:
        """Prepare and take at once (one thread: the dict road)."""
        self.take(self.prepare(query_codes_, lengths, codes, bogus=bogus, scores=scores))

    def take(self, kept) -> None:
        for parts, part in zip((self.query_codes, self.lengths, self.codes, self.bogus), kept):
            parts.append(part)

    def finish(self, evaluated, **query_set) -> RankedLists:
        if not self.query_codes:
            return lists_in_code_order(self.qrels, *no_blocks(), False, **query_set)
        return lists_in_code_order(
            self.qrels, np.concatenate(self.query_codes), np.concatenate(self.lengths),
            np.concatenate(self.codes), np.concatenate(self.bogus), **query_set)


class Evaluated:
    """Sink of :func:`evaluate_run_file`: each chunk's blocks evaluated at once, only
    the per-query values kept."""

    def __init__(self, qrels: Any, evaluate_lists):  # as Packed
        self.qrels, self.evaluate_lists = qrels, evaluate_lists
        self.query_codes: list[np.ndarray] = []
        self.values: list[dict] = []

    def prepare(self, query_codes_, lengths, codes, *, bogus: bool, scores=None):
        """The values of whole blocks (on a worker thread)."""
        lists = lists_in_code_order(self.qrels, query_codes_, lengths, codes, bogus,
                                     scores)
        return np.sort(query_codes_), self.evaluate_lists(lists)

    def add(self, query_codes_, lengths, codes, *, bogus: bool, scores=None) -> None:
        """Prepare and take at once (one thread: the dict road)."""
        self.take(self.prepare(query_codes_, lengths, codes, bogus=bogus, scores=scores))

    def take(self, kept) -> None:
        self.query_codes.append(kept[0])
        self.values.append(kept[1])

    def finish(self, evaluated, *, run_name, missing_query_ids, ignored_query_ids):
        if not self.values:  # no query evaluated: the columns' shapes, zero rows
            self.take(self.prepare(*no_blocks(), bogus=False))
        order = np.argsort(np.concatenate(self.query_codes), kind="stable")
        columns = {name: np.concatenate([v[name] for v in self.values])[order]
                   for name in self.values[0]}
        self.values = []
        return StreamedValues(
            query_ids=self.qrels.query_ids[evaluated], columns=columns, run_name=run_name,
            qrels_positive_total=self.qrels.positive_total,
            missing_query_ids=missing_query_ids, ignored_query_ids=ignored_query_ids)


def no_blocks() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query codes, lengths and entry codes of zero blocks."""
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, np.int8)
