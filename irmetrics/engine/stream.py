"""A TREC run file packed chunk by chunk, straight into RankedLists.

This is :func:`~irmetrics.engine.pack.pack` for the common case of a *plain* run file
(:func:`irmetrics.io.trec.plain_chunks`) whose queries each form one block of lines,
which is what retrieval systems write. It gives the same RankedLists as
``pack(qrels, read_run(path).df)`` without ever holding the whole file's strings:

* each chunk of lines is parsed by polars, its documents hashed and looked up in the
  qrels (matches verified on the strings), its tied scores ordered, and then only
  numbers are kept: a relevance code per entry (one byte when the labels allow), a
  query code and a length per block. No kernel reads scores once the order is fixed,
  so they are not kept (``RankedLists.scores`` is None). The last query block of a
  chunk waits for the next chunk, so every block is whole when it is packed;
* inside a block, entries of equal score are put in doc-id order only when they carry
  different relevance codes. Kernels see rankings only through codes and scores, and
  entries of one tie group share the score, so swapping two of them with the same
  code changes nothing any measure reads; the doc ids themselves are not kept;
* a block whose scores are not descending is sorted inside its chunk, by score.

Anything else returns None and the caller takes the general road (``read_run`` +
``pack``), which reads every file trec_eval reads and names the line of any error:
a file that is not plain, a query split over several blocks, a (query, doc) pair that
may be duplicated (decided by ``read_run``), and ``complete=True`` runs whose
placeholder document may be judged.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl

from ..io.trec import NotPlain, plain_chunks
from . import segments as sg
from .pack import (BOGUS_DOC_ID, EncodedQrels, RunBlocks, block_move, break_ties_by_doc_id,
                   doc_hash, encode_qrels, lookup_codes, ordering_scores,
                   query_codes, run_blocks)
from .ranked import NOT_IN_POOL, RankedLists, no_query_ids, sorted_query_ids

#: Odd 64-bit constant that spreads block numbers over the hash space in the duplicate test.
_SPREAD = np.uint64(0x9E3779B97F4A7C15)


def pack_run_file(qrels: EncodedQrels, path, *, max_docs: int | None = None,
                  complete: bool = False, semantics: str = "trec_eval") -> RankedLists | None:
    """RankedLists of the run file at ``path``, or None when the general road is needed.

    Parameters are those of :func:`~irmetrics.engine.pack.pack`; the result equals
    ``pack(qrels, read_run(path).df, ...)`` in everything kernels read (codes,
    offsets, query set, run name); ``doc_ids`` and ``scores`` are None.

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> from irmetrics.engine.pack import encode_qrels
    >>> qrels = encode_qrels(pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
    ...                                    "relevance": [1, 0]}))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "run.txt")
    ...     with open(path, "w") as f:
    ...         _ = f.write("q1 Q0 b 1 2.0 r\\nq1 Q0 c 2 1.0 r\\nq1 Q0 a 3 1.0 r\\n")
    ...     lists = pack_run_file(qrels, path)
    >>> lists.code.tolist()   # c and a tie at 1.0: doc ids descending puts c first
    [0, -1, 1]
    """
    try:
        # Two helper threads: one reads and parses the next chunk, one checks the current
        # chunk for duplicates while the main thread packs it.
        with ThreadPoolExecutor(max_workers=2) as helpers:
            chunks = _Chunks(qrels, max_docs=max_docs, semantics=semantics, helpers=helpers)
            for frame in _read_ahead(plain_chunks(path, "run"), helpers):
                chunks.add(frame)
            return chunks.finish(complete=complete)
    except NotPlain:
        return None


def encode_qrels_file(path) -> EncodedQrels | None:
    """:func:`~irmetrics.engine.pack.encode_qrels` of a plain qrels file read in chunks
    of its three useful columns, or None when the full reader is needed (a file that is
    not plain, or two judgments of one query sharing a key: a duplicate pair, which the
    full reader reports, or a hash collision, which it resolves).

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "qrels.txt")
    ...     with open(path, "w") as f:
    ...         _ = f.write("2 0 a 1\\n10 0 b 0\\n2 0 c 2\\n")
    ...     encoded = encode_qrels_file(path)
    >>> encoded.query_ids.tolist(), encoded.rel_hist.tolist()
    (['10', '2'], [[1, 0, 0], [0, 1, 1]])
    """
    try:
        frame = pl.concat(list(plain_chunks(path, "qrels")), rechunk=False)
    except NotPlain:
        return None
    # Doc ids in one piece: every run gathers them at its matched judgments to verify
    # the hashes, several times faster than across the file's chunks.
    frame = frame.with_columns(frame["doc_id"].rechunk())
    encoded = encode_qrels(frame)
    return encoded if encoded.keys is not None else None


def _read_ahead(frames, helpers: ThreadPoolExecutor):
    """The frames of ``frames``, the next one read and parsed by ``helpers`` while the
    caller packs the current one (polars and numpy release the GIL)."""
    pending = helpers.submit(next, frames, None)
    while (frame := pending.result()) is not None:
        pending = helpers.submit(next, frames, None)
        yield frame


class _Chunks:
    """Packed blocks accumulated chunk by chunk (numbers only)."""

    def __init__(self, qrels: EncodedQrels, *, max_docs, semantics, helpers):
        self.qrels, self.max_docs, self.semantics = qrels, max_docs, semantics
        self.helpers = helpers  # threads for work that can run beside the packing
        self.carry: pl.DataFrame | None = None  # the last, maybe unfinished, query block
        self.block_ids: list[pl.Series] = []  # query id of every block, evaluated or not
        self.block_codes: list[np.ndarray] = []  # qrels code of every evaluated block
        self.ignored_ids: list[pl.Series] = []  # query ids of blocks not in the qrels
        self.block_lengths: list[np.ndarray] = []
        self.codes: list[np.ndarray] = []
        self.code_dtype = qrels.codes.dtype  # one byte for the usual labels

    def add(self, frame: pl.DataFrame) -> None:
        if self.carry is not None:
            frame = pl.concat([self.carry, frame])
        blocks = run_blocks(frame)
        last = int(blocks.starts[-1])
        self.carry = frame.slice(last)
        if last:
            whole = slice(0, len(blocks.starts) - 1)
            self._pack(frame.slice(0, last), RunBlocks(
                blocks.starts[whole], blocks.lengths[whole], blocks.query_ids[whole]))

    def finish(self, *, complete: bool) -> RankedLists | None:
        run_name = self.carry["run_id"][-1]
        self._pack(self.carry, run_blocks(self.carry))
        self.carry = None
        block_ids = pl.concat(self.block_ids)
        if block_ids.n_unique() != len(block_ids):
            raise NotPlain  # a query in several blocks: the general road sorts it
        qrels = self.qrels
        codes = np.concatenate(self.block_codes)
        lengths = np.concatenate(self.block_lengths)
        present = np.zeros(len(qrels.query_ids), dtype=bool)
        present[codes] = True
        evaluated = np.ones(len(present), dtype=bool) if complete else present
        code = np.concatenate(self.codes)
        self.codes = []
        missing = np.flatnonzero(evaluated & ~present)
        if missing.size:
            if (qrels.doc_ids == BOGUS_DOC_ID).any():
                raise NotPlain  # the placeholder is judged somewhere: let pack look it up
            # trec_eval's -c placeholder: one document, not in the pool, score 1.0
            # (none at all under max_docs=0, like every other ranking).
            one = 0 if self.max_docs == 0 else 1
            codes = np.append(codes, missing)
            lengths = np.append(lengths, np.full(missing.size, one, dtype=np.int64))
            code = np.append(code, np.full(missing.size * one, NOT_IN_POOL, dtype=code.dtype))
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        order, _ = block_move(starts, lengths, codes)
        counts = np.zeros(len(present), dtype=np.int64)
        counts[codes] = lengths
        counts = counts[evaluated]
        return RankedLists(
            query_ids=qrels.query_ids[evaluated],
            offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
            code=code[order].astype(np.int64),
            rel_hist=qrels.rel_hist[evaluated],
            bogus=~present[evaluated],
            run_name=run_name,
            qrels_positive_total=qrels.positive_total,
            missing_query_ids=no_query_ids() if complete else qrels.query_ids[~present],
            ignored_query_ids=sorted_query_ids(pl.concat(self.ignored_ids).to_list()),
            rel_levels=qrels.rel_levels,
        )

    def _pack(self, frame: pl.DataFrame, blocks: RunBlocks) -> None:
        """Pack ``frame``, whose query ``blocks`` are all whole."""
        lengths = blocks.lengths
        self.block_ids.append(blocks.query_ids)
        block_code = query_codes(blocks.query_ids, self.qrels.query_ids)
        row_block = np.repeat(np.arange(len(lengths)), lengths)
        hashes = doc_hash(frame["doc_id"])
        # The duplicate test runs beside the lookups below (polars releases the GIL).
        repeats = self.helpers.submit(_may_repeat, hashes, row_block)
        scores = ordering_scores(frame["score"].to_numpy(), self.semantics)

        evaluated = block_code >= 0
        rows = np.arange(frame.height) if evaluated.all() else \
            np.flatnonzero(evaluated[row_block])
        if np.any((scores[rows][1:] > scores[rows][:-1])
                  & (row_block[rows][1:] == row_block[rows][:-1])):
            rows = rows[np.lexsort((-scores[rows], row_block[rows]))]
        row_block, scores = row_block[rows], scores[rows]
        qcode = block_code[row_block]
        doc_col = frame["doc_id"]
        codes = lookup_codes(
            self.qrels, qcode, hashes[rows],
            lambda at: doc_col.gather(rows if at is None else rows[at]),
            queries=np.unique(block_code[evaluated]))
        _order_mixed_ties(rows, row_block, scores, codes, doc_col)

        kept_blocks = np.flatnonzero(evaluated)
        kept_len = lengths[kept_blocks]
        if self.max_docs is not None:
            offsets, top = sg.truncate(np.concatenate(([0], np.cumsum(kept_len))),
                                       self.max_docs)
            codes, kept_len = codes[top], np.diff(offsets)
        if repeats.result():
            raise NotPlain  # read_run finds the duplicate (or the false alarm)
        self.block_codes.append(block_code[kept_blocks])
        self.ignored_ids.append(blocks.query_ids.filter(~evaluated))
        self.block_lengths.append(kept_len)
        self.codes.append(codes.astype(self.code_dtype))


def _may_repeat(hashes: np.ndarray, row_block: np.ndarray) -> bool:
    """Whether two rows of one block may hold the same doc id: equal (block, doc hash)
    pairs. A hash collision only sends the file to the general road, which decides."""
    mixed = hashes ^ (row_block.astype(np.uint64) * _SPREAD)
    return pl.Series(mixed).n_unique() != len(mixed)


def _order_mixed_ties(rows, row_block, scores, codes, doc_col) -> None:
    """Give every tie group (equal block and score) that holds more than one relevance
    code its doc-id descending order, in ``codes`` (in place); other groups stay as read."""
    if len(rows) < 2:
        return
    tied = (row_block[1:] == row_block[:-1]) & (scores[1:] == scores[:-1])
    differs = tied & (codes[1:] != codes[:-1])
    if not differs.any():
        return
    group = np.cumsum(np.concatenate(([True], ~tied)))
    mixed = np.zeros(int(group[-1]) + 1, dtype=bool)
    mixed[group[1:][differs]] = True
    sel = np.flatnonzero(mixed[group])
    moved = break_ties_by_doc_id(np.arange(len(sel)), row_block[sel], scores[sel],
                                  doc_col.gather(rows[sel]))
    codes[sel] = codes[sel][moved]
