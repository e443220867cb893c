"""A TREC run file packed chunk by chunk, straight into RankedLists, on every core.

This is :func:`~irmetrics.engine.pack.pack` for a run file whose queries each form one
block of lines, which is what retrieval systems write. It gives the same RankedLists as
``pack(qrels, read_run(path).df)`` without ever holding the whole file's strings:

* the calling thread reads the file in chunks of whole query blocks
  (:func:`~irmetrics.containers.trec_text.raw_chunks`); worker threads
  (:mod:`irmetrics.parallel`) parse each chunk (polars; a chunk with tabs, carriage
  returns, blank or comment lines by the full reader, on its own lines:
  :func:`~irmetrics.containers.trec_text.chunk_frame`), hash its documents and look them
  up in the qrels (matches confirmed by a second hash), order its tied scores, and keep
  only numbers: a relevance code per entry (one byte when the labels allow), a query code
  and a length per block. No built-in kernel reads scores once the order is fixed, so
  they are kept only for measures defined by the user (``keep_scores``; otherwise
  ``RankedLists.scores`` is None);
* inside a block, entries of equal score are put in doc-id order only when they carry
  different relevance codes. Kernels see rankings only through codes and scores, and
  entries of one tie group share the score, so swapping two of them with the same
  code changes nothing any measure reads; the doc ids themselves are not kept. When
  the caller says that every measure asked reads the codes <= 0 alike
  (``nonpositive_alike``: not relevant, no gain, judgedness unread), those codes count
  as one: a tie group of unjudged and judged non-relevant entries keeps the run's order;
* a block whose scores are not descending is sorted inside its chunk, by score;
* the chunks' results are merged in file order in the calling thread, which checks what
  needs that order (a query seen in an earlier chunk); nothing depends on the thread
  count or on where a chunk ends.

:func:`evaluate_run_file` goes one step further for bounded memory: each chunk's query
blocks are evaluated on its worker as soon as they are packed and only their per-query
values are kept, so memory is bounded by the chunks in flight, the judgments and the
per-query results, not by the run's length. A run whose query blocks are split over the
file is first partitioned by query into temporary files (:func:`partition_by_query`) and
then evaluated partition by partition, never held whole.

Anything else returns None and the caller takes the general road (``read_run`` +
``pack``), which reads every file trec_eval reads and names the line of any error:
standard input and pipes, a file that is not UTF-8, a query split over several blocks
(:func:`pack_run_file` only), a (query, doc) pair that may be duplicated (decided by
``read_run``), and ``complete=True`` runs whose placeholder document may be judged. One
exception keeps memory bounded on bad input: a bad line deep in a big file is reported
from its own chunk, numbered in the file, when nothing before it can be an earlier error
(:meth:`_Chunks.line_error`); the full reader would report the same.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import tempfile

    import polars as pl
else:
    from irmetrics.lazy import LazyModule
    from irmetrics.lazy import polars as pl  # imported on first use

    tempfile = LazyModule("tempfile")  # only the partition road needs it (4 ms of imports)

from ..exceptions import DuplicateEntryError, InputFormatError
from ..containers.trec_text import (NotPlain, chunk_bytes_for, chunk_error, chunk_frame,
                                    plain_chunks, raw_chunks)
from ..parallel import imap_ordered, resolve_threads
from ..progress import NO_PROGRESS, Progress
from . import segments as sg
from .ordering import doc_id_tiebreak, ordering_scores, rank_order
from .pack import (EncodedQrels, JudgmentChunk, doc_fingerprint, doc_hash,
                   encode_judgments, lookup_codes, query_codes, run_blocks)
from .ranked import NOT_IN_POOL, RankedLists, no_query_ids, sorted_query_ids
# (StreamedValues re-exported: the file road's result, read by evaluate, stacked, fanout)
from .sinks import Evaluated, Packed, StreamedValues

#: Odd 64-bit constant that spreads block numbers over the hash space in the duplicate test.
_SPREAD = np.uint64(0x9E3779B97F4A7C15)


def pack_run_file(qrels: EncodedQrels, path, *, max_docs: int | None = None,
                  complete: bool = False, semantics: str = "trec_eval",
                  threads: int | None = None) -> RankedLists | None:
    """RankedLists of the run file at ``path``, or None when the general road is needed.

    Parameters are those of :func:`~irmetrics.engine.pack.pack`; the result equals
    ``pack(qrels, read_run(path).df, ...)`` in everything kernels read (codes,
    offsets, query set, run name); ``doc_ids`` and ``scores`` are None. Every ranking is
    kept: :func:`evaluate_run_file` is the bounded-memory road. ``threads``: see
    :func:`irmetrics.parallel.resolve_threads`.

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
        threads = resolve_threads(threads)
        chunks = raw_chunks(path, by_query=True, joined=False,
                            chunk_bytes=chunk_bytes_for(threads))
        return _stream([qrels], chunks, _read_run_chunk, [Packed(qrels)], max_docs=max_docs,
                       complete=complete, semantics=semantics, threads=threads)[0]
    except NotPlain:
        return None


def evaluate_run_file(qrels: EncodedQrels, path, evaluate_lists, *,
                      max_docs: int | None = None, complete: bool = False,
                      semantics: str = "trec_eval", ties: str = "trec_eval",
                      keep_scores: bool = False, threads: int | None = None,
                      progress: Progress = NO_PROGRESS,
                      nonpositive_alike: bool = False) -> StreamedValues | None:
    """Per-query values of the run file at ``path`` in bounded memory, or None when the
    general road is needed (see the module notes).

    Every chunk's whole query blocks are packed into RankedLists of their own (queries
    ascending, as in the whole run's) and handed to ``evaluate_lists``, which returns
    ``{output name: per-query vector}``; only those values are kept. Kernels compute
    each query from its own entries alone, so the values are those of the whole run's
    RankedLists, bit for bit, and put back in query order they give the same
    aggregates. A run whose query blocks are split over the file is partitioned by
    query into temporary files first (:func:`partition_by_query`). With ``keep_scores``
    the lists handed over carry their (ordering) scores. ``progress`` shows the bytes read
    and the lines and queries done (:mod:`irmetrics.progress`). ``nonpositive_alike``:
    ``evaluate_lists`` gives the same values whichever order entries of one score with
    codes <= 0 take among themselves (no measure it computes tells an unjudged entry
    from a judged non-relevant one, nor reads their order); then only tie groups holding
    a code > 0 and another code are put in doc-id order (the rest gives the same values).

    Chunks are cut between query blocks (:func:`~irmetrics.containers.trec_text.raw_chunks`)
    and each is parsed, packed and evaluated on one of ``threads`` threads
    (:func:`irmetrics.parallel.resolve_threads`; 1: all in the caller's thread), the
    results merged in file order: the values, and the error a bad line raises, do not
    depend on the thread count. Lines with tabs, carriage returns, padded columns, blank
    and comment lines stay on this road (:func:`~irmetrics.containers.trec_text.chunk_frame`).

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> from irmetrics.engine.pack import encode_qrels
    >>> qrels = encode_qrels(pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"],
    ...                                    "relevance": [1, 1]}))
    >>> def num_ret(lists):   # one value per query of the chunk
    ...     return {"num_ret": lists.offsets[1:] - lists.offsets[:-1]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "run.txt")
    ...     with open(path, "w") as f:
    ...         _ = f.write("q2 Q0 b 1 2.0 r\\nq1 Q0 c 1 3.0 r\\nq1 Q0 a 2 1.0 r\\n")
    ...     values = evaluate_run_file(qrels, path, num_ret)
    >>> values.query_ids.tolist(), values.columns["num_ret"].tolist()
    (['q1', 'q2'], [2, 1])
    """
    size = _text_bytes(path)
    if size is None:
        return None  # a pipe or stdin (read once), or a path the full reader explains
    source = os.fsdecode(os.fspath(path))
    progress.phase(f"reading {os.path.basename(source)}", total=os.path.getsize(source))
    threads = resolve_threads(threads)
    chunk_bytes = chunk_bytes_for(threads)
    found = evaluate_pieces(
        [qrels], lambda: raw_chunks(path, on_read=progress.read_to, by_query=True,
                                    joined=False, chunk_bytes=chunk_bytes),
        _read_run_chunk, [evaluate_lists], text_bytes=size, max_docs=max_docs,
        complete=complete, semantics=semantics, ties=ties, keep_scores=keep_scores,
        source=source, threads=threads, progress=progress, nonpositive_alike=nonpositive_alike)
    return None if found is None else found[0]


def evaluate_run_batches(qrels: EncodedQrels, open_batches, evaluate_lists, *,
                         text_bytes=0, max_docs: int | None = None,
                         complete: bool = False, semantics: str = "trec_eval",
                         ties: str = "trec_eval", keep_scores: bool = False,
                         source: str | None = None, threads: int | None = None,
                         progress: Progress = NO_PROGRESS,
                         nonpositive_alike: bool = False) -> StreamedValues | None:
    """:func:`evaluate_run_file` of a run given as batches of rows in its own order:
    ``open_batches()`` returns a fresh iterator of frames with the columns
    ``query_id``, ``doc_id``, ``score``, ``run_id`` (it is called a second time when
    query blocks turn out split). ``text_bytes``, the run's size as text (or a function
    giving it, called only then), sets the number of partitions. ``source`` names a
    TREC file whose bad lines are reported from their chunk (:meth:`_Chunks.line_error`);
    otherwise, and when that cannot be decided, a file that is not plain returns None.
    ``progress`` is told the rows and queries done; the caller starts its first phase
    (:meth:`irmetrics.progress.Progress.phase`). The frames are cut between query blocks
    in the caller's thread and evaluated on ``threads`` threads, as in
    :func:`evaluate_run_file` (``nonpositive_alike`` too).

    Examples
    --------
    >>> import polars as pl
    >>> from irmetrics.engine.pack import encode_qrels
    >>> qrels = encode_qrels(pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"],
    ...                                    "relevance": [1]}))
    >>> rows = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["b", "a"],
    ...                      "score": [2.0, 1.0], "run_id": ["r", "r"]})
    >>> values = evaluate_run_batches(qrels, lambda: iter([rows]),
    ...                               lambda lists: {"code": lists.code[1:2]})
    >>> values.columns["code"].tolist()
    [1]
    """
    found = evaluate_pieces(
        [qrels], lambda: _whole_blocks(open_batches()), _read_batch, [evaluate_lists],
        text_bytes=text_bytes, max_docs=max_docs, complete=complete, semantics=semantics,
        ties=ties, keep_scores=keep_scores, source=source, threads=threads,
        progress=progress, nonpositive_alike=nonpositive_alike)
    return None if found is None else found[0]


def evaluate_pieces(qrels: list, open_pieces, read, evaluate_lists: list, *,
                    text_bytes=0, max_docs: int | None = None, complete: bool = False,
                    semantics: str = "trec_eval", ties: str = "trec_eval",
                    keep_scores: bool = False, source: str | None = None,
                    threads: int | None = None, progress: Progress = NO_PROGRESS,
                    nonpositive_alike: bool = False) -> list[StreamedValues] | None:
    """The bounded-memory road for a run given as pieces of work in file order, against
    each of ``qrels`` (with the matching function of ``evaluate_lists``), the run read
    once: what :func:`evaluate_run_file` and :func:`evaluate_run_batches` do, and
    :mod:`irmetrics.engine.fanout` for several qrels.

    ``open_pieces()`` returns a fresh iterator of pieces (raw chunks of a file, or frames
    of whole query blocks), consumed in the caller's thread; ``read(piece)`` gives the
    piece's frame (``query_id``, ``doc_id``, ``score``, ``run_id``) and the file lines it
    spans, on a worker thread. Each piece is parsed, packed and evaluated on one of
    ``threads`` threads, at most ``threads + 1`` in flight; the order-dependent checks
    (a query in two blocks, the query set) are made as the results are merged in file
    order, in the caller's thread. A run whose queries are split over the file is
    partitioned by query first (:func:`partition_by_query`, ``open_pieces`` called a
    second time). ``nonpositive_alike``: see :func:`evaluate_run_file` (it holds for
    every function of ``evaluate_lists``). Returns None when the general road is needed.

    Examples
    --------
    >>> import polars as pl
    >>> from irmetrics.engine.pack import encode_qrels
    >>> qrels = encode_qrels(pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"],
    ...                                    "relevance": [1]}))
    >>> rows = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["b", "a"],
    ...                      "score": [2.0, 1.0], "run_id": ["r", "r"]})
    >>> found = evaluate_pieces([qrels], lambda: iter([rows]), lambda f: (f, f.height),
    ...                         [lambda lists: {"code": lists.code[1:2]}], threads=1)
    >>> found[0].columns["code"].tolist()
    [1]
    """
    if len(qrels) != len(evaluate_lists):
        raise ValueError("one evaluate_lists function per qrels")
    threads = resolve_threads(threads)
    options = dict(max_docs=max_docs, complete=complete, semantics=semantics, ties=ties,
                   keep_scores=keep_scores, threads=threads, progress=progress,
                   nonpositive_alike=nonpositive_alike)

    def sinks():
        return [Evaluated(q, f) for q, f in zip(qrels, evaluate_lists)]

    try:
        try:
            return _stream(qrels, open_pieces(), read, sinks(), source=source, **options)
        except _SplitBlocks:
            pass
        with tempfile.TemporaryDirectory(prefix="irmetrics-partitions-") as directory:
            size = text_bytes() if callable(text_bytes) else text_bytes
            progress.again("partitioning by query")
            frames = (frame for frame, _ in imap_ordered(read, open_pieces(), threads=threads))
            parts, run_name = partition_by_query(_counted(frames, progress), directory,
                                                 text_bytes=size)
            progress.phase("evaluating partitions", total=len(parts), unit="partitions")
            # A partition is read whole: one in flight per thread.
            return _stream(qrels, parts, _whole_queries, sinks(), whole=True,
                           run_name=run_name, ahead=threads, **options)
    except NotPlain:
        return None


def _counted(frames, progress: Progress):
    """``frames``, their rows counted by ``progress``."""
    for frame in frames:
        progress.rows(frame.height)
        yield frame


def _read_run_chunk(data: list[bytes]) -> tuple[pl.DataFrame, int]:
    """A raw chunk of a run file (its pieces): its frame and lines (on a worker thread)."""
    return chunk_frame(data, "run")


def _read_batch(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """A frame of whole query blocks, as it is."""
    return frame, frame.height


def _whole_blocks(frames):
    """``frames`` (in file order) cut between query blocks: the last block of each frame
    waits for the next frame, so every frame given holds whole blocks. Runs in the
    caller's thread: one comparison of the query ids per frame."""
    carry = None
    for frame in frames:
        if frame.height == 0:
            continue
        if carry is not None:
            frame = pl.concat([carry, frame])
        ids = frame["query_id"]
        differs = ids.ne_missing(ids[-1])
        last = frame.height - int(differs.reverse().arg_max() or 0) if differs.any() else 0
        if last:
            yield frame.slice(0, last)
        carry = frame.slice(last)
    if carry is not None:
        yield carry


def _stream(qrels, pieces, read, sinks, *, max_docs, complete, semantics, ties="trec_eval",
            keep_scores=False, whole=False, run_name=None, source=None, threads=1,
            ahead=None, progress=NO_PROGRESS, nonpositive_alike=False):
    """Feed ``pieces`` (in file order; each read by ``read``, each holding whole queries
    when ``whole``) through one :class:`_Chunks` per qrels into its sink; returns every
    sink's outcome. With ``source`` (the file's name), a bad line that stops the reading
    is reported from its chunk, numbered in the file, when nothing before it can be an
    earlier error (see :meth:`_Chunks.line_error`)."""
    packers = [_Chunks(q, sink, max_docs=max_docs, semantics=semantics, ties=ties,
                       keep_scores=keep_scores, progress=progress,
                       nonpositive_alike=nonpositive_alike)
               for q, sink in zip(qrels, sinks)]

    def work(piece):  # on a worker thread: nothing shared is written
        frame, lines = read(piece)
        # shared by the packers of a fan-out (an empty frame: each packer returns None)
        facts = _ChunkFacts(frame, semantics) if frame.height else None
        return frame.height, lines, [packer.prepare(frame, facts) for packer in packers]

    line = 1  # the file line the next piece starts on
    try:
        for rows, lines, prepared in imap_ordered(work, pieces, threads=threads, ahead=ahead):
            if whole:
                progress.step()
            else:  # rows of a partition were counted while partitioning
                progress.rows(rows)
            for packer, piece in zip(packers, prepared):
                packer.merge(piece)
            line += lines
    except NotPlain as signal:
        if signal.data is not None:
            signal.first_line = line
        # Every packer has merged the same pieces; the first says whether the bad line
        # is the first error.
        error = packers[0].line_error(signal, source) if source is not None else None
        if error is not None:
            raise error from None
        raise
    return [packer.finish(complete=complete, run_name=run_name) for packer in packers]


#: Run bytes per temporary partition of :func:`partition_by_query`; a partition is read
#: whole and grouped by query, which takes about 8x its size in memory at the peak
#: (measured: 2 GiB for two partitions of a 9.6M-line run at 256 MiB each).
PARTITION_BYTES = 32 << 20
#: At most this many partitions (each an open file while the run is written): beyond
#: 16 GiB of run text the partitions grow instead.
MAX_PARTITIONS = 512


def partition_by_query(frames, directory, *, n_parts: int | None = None,
                       text_bytes: int = 0):
    """Write the run ``frames`` (``query_id``, ``doc_id``, ``score``, ``run_id``, in
    file order) into ``n_parts`` files in ``directory``, every query's rows in one file
    (by a hash of its id), in file order; returns ``(paths, run name of the last row)``.

    The files hold plain run lines (``query Q0 doc 0 score run``; polars writes floats
    in their shortest exact form, so the scores read back bit for bit), about the size
    of the run as text. By default there is one partition per :data:`PARTITION_BYTES`
    of ``text_bytes`` (the run's size as text), so that each is read whole in bounded
    memory.
    """
    if n_parts is None:
        n_parts = min(MAX_PARTITIONS, max(1, -(-(text_bytes or 0) // PARTITION_BYTES)))
    paths = [os.path.join(directory, f"part{k}.txt") for k in range(n_parts)]
    handles = [open(p, "wb") for p in paths]
    run_name = None
    try:
        for frame in frames:
            if frame.height == 0:
                continue
            if _not_a_field(frame):
                raise NotPlain  # an id that is no single field of a line (from a table)
            run_name = frame["run_id"][-1]
            part = (frame["query_id"].hash(seed=_PARTITION_SEED) % n_parts).to_numpy()
            lines = frame.select("query_id", pl.lit("Q0").alias("iteration"), "doc_id",
                                 pl.lit(0).alias("rank"), "score", "run_id")
            for k in np.unique(part):
                lines.filter(part == k).write_csv(handles[k], include_header=False,
                                                  separator=" ", quote_style="never")
    finally:
        for handle in handles:
            handle.close()
    return paths, run_name


_PARTITION_SEED = 0x5EED


def _not_a_field(frame: pl.DataFrame) -> bool:
    """Whether an id of ``frame`` would not read back as one field of a plain line:
    empty, or holding whitespace, ``#`` or NUL (ids from a table may)."""
    ids = pl.col("query_id", "doc_id", "run_id")
    return frame.select(pl.any_horizontal(
        ids.str.contains(r"[\s#\x00]") | (ids.str.len_bytes() == 0)).any()).item()


def _whole_queries(path) -> tuple[pl.DataFrame, int]:
    """A partition file read whole, its lines grouped by query (file order inside), and
    its row count."""
    try:
        frame = pl.concat(list(plain_chunks(path, "run")), rechunk=False)
    except NotPlain:  # an empty partition
        if os.path.getsize(path) == 0:
            return pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                        "score": pl.Float64, "run_id": pl.String}), 0
        raise
    return frame.sort("query_id", maintain_order=True), frame.height


class _SplitBlocks(NotPlain):
    """A query's lines form more than one block of the file (internal signal)."""


def encode_qrels_file(path, progress: Progress = NO_PROGRESS, *,
                      threads: int | None = None) -> EncodedQrels | None:
    """:func:`~irmetrics.engine.pack.encode_qrels` of a plain qrels file read in chunks
    of its three useful columns, or None when the full reader is needed (a file that is
    not plain, or a (query, doc) pair judged twice, which the full reader reports or
    resolves). ``progress`` shows the bytes read. Chunks are parsed and hashed on
    ``threads`` threads (:func:`irmetrics.parallel.resolve_threads`) and encoded in file
    order.

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
    def judgments(data):
        # Chunk by chunk (on a worker thread), only what encoding needs is kept: the
        # query id of each block of lines, the labels (in their smallest integer type)
        # and two hashes of each doc id; no strings per line.
        frame, _ = chunk_frame(data, "qrels")
        label = frame["relevance"]
        return JudgmentChunk.of(
            frame, label.cast(_smallest_int(label.min(), label.max())).to_numpy())

    threads = resolve_threads(threads)
    chunks = imap_ordered(judgments, raw_chunks(path, on_read=progress.read_to, joined=False,
                                                chunk_bytes=chunk_bytes_for(threads)),
                          threads=threads)

    size = _text_bytes(path)
    if size is not None:
        progress.phase(f"reading {os.path.basename(os.fsdecode(os.fspath(path)))}",
                       total=os.path.getsize(path))
    try:
        # Every line takes 8 bytes or more: an upper bound on the judgments.
        return encode_judgments(chunks, capacity=(size or 0) // 8 + 1)
    except NotPlain:
        return None
    except DuplicateEntryError:
        return None  # a judgment repeated in a query: the full reader says where


def _text_bytes(path) -> int | None:
    """Bytes of text in the regular file at ``path`` (a gzip file: about 4x its size),
    or None for a pipe, standard input or a path that cannot be opened."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        with open(path, "rb") as fh:
            return info.st_size * (4 if fh.read(2) == b"\x1f\x8b" else 1)
    except (TypeError, ValueError, OSError):
        return None


def _smallest_int(low: int, high: int):
    """The smallest polars integer type holding ``low`` and ``high``."""
    for dtype, bits in ((pl.Int8, 8), (pl.Int16, 16), (pl.Int32, 32)):
        if -(1 << (bits - 1)) <= low and high < 1 << (bits - 1):
            return dtype
    return pl.Int64


@dataclass
class _Piece:
    """One piece's packed blocks, made on a worker (:meth:`_Chunks.prepare`): the qrels
    codes of its evaluated queries, the ids of its queries outside the qrels, the run
    name of its last line, and what the sink keeps of it."""

    query_codes: np.ndarray
    ignored_ids: pl.Series
    run_name: str
    kept: Any


class _Chunks:
    """Whole query blocks packed piece by piece and handed to a sink (numbers only):
    :meth:`prepare` on any thread, :meth:`merge` in file order in one thread."""

    def __init__(self, qrels: EncodedQrels, sink, *, max_docs, semantics, ties,
                 keep_scores=False, progress: Progress = NO_PROGRESS,
                 nonpositive_alike=False):
        self.qrels, self.sink, self.progress = qrels, sink, progress
        self.keep_scores = keep_scores
        self.max_docs, self.semantics = max_docs, semantics
        if ties not in ("trec_eval", "input_order"):
            raise ValueError(f"the streaming road orders ties 'trec_eval' or 'input_order', "
                             f"not {ties!r}")
        # Tied entries keep the run's order (a stable sort) unless put in doc-id order.
        self.ties_by_doc_id = doc_id_tiebreak(ties)
        self.nonpositive_alike = nonpositive_alike  # see evaluate_run_file
        self.run_name: str | None = None
        self.present = np.zeros(len(qrels.query_ids), dtype=bool)  # qrels queries seen
        self.ignored_ids: list[pl.Series] = []  # query ids of blocks not in the qrels
        self.code_dtype = qrels.codes.dtype  # one byte for the usual labels

    def merge(self, piece: _Piece | None) -> None:
        """Take a prepared piece, in file order: a query already seen in an earlier
        piece means the run's queries are split over the file."""
        if piece is None:
            return
        codes = piece.query_codes
        if self.present[codes].any():
            raise _SplitBlocks  # a query in several blocks: partition the run by query
        self.present[codes] = True
        self.ignored_ids.append(piece.ignored_ids)
        self.run_name = piece.run_name
        if piece.kept is not None:
            self.sink.take(piece.kept)
            self.progress.queries(int(codes.size))

    def finish(self, *, complete: bool, run_name=None):
        if self.run_name is None:
            raise NotPlain  # no line at all: the full reader says so
        ignored = pl.concat(self.ignored_ids) if self.ignored_ids else \
            pl.Series([], dtype=pl.String)
        if ignored.n_unique() != len(ignored):
            # A query outside the qrels in several blocks: only the whole query can say
            # whether it repeats a document (an error, as read_run reports it).
            raise _SplitBlocks
        qrels, present = self.qrels, self.present
        evaluated = np.ones(len(present), dtype=bool) if complete else present
        missing = np.flatnonzero(evaluated & ~present)
        if missing.size:
            if qrels.judges_placeholder:
                raise NotPlain  # the placeholder is judged somewhere: let pack look it up
            # trec_eval's -c placeholder: one document, not in the pool, score 1.0
            # (none at all under max_docs=0, like every other ranking).
            one = 0 if self.max_docs == 0 else 1
            self.sink.take(self.sink.prepare(
                missing, np.full(missing.size, one, dtype=np.int64),
                np.full(missing.size * one, NOT_IN_POOL, dtype=self.code_dtype),
                bogus=True, scores=np.ones(missing.size * one) if self.keep_scores else None))
        return self.sink.finish(
            evaluated, run_name=self.run_name if run_name is None else run_name,
            missing_query_ids=no_query_ids() if complete else qrels.query_ids[~present],
            ignored_query_ids=sorted_query_ids(ignored.to_list()))

    def line_error(self, signal: NotPlain, source: str) -> InputFormatError | None:
        """The error the full reader gives for the file whose chunk raised ``signal``,
        without reading the file whole: the chunk's first bad line, when no line before
        it can be an earlier error. Every piece merged so far holds no repeated document
        and no query seen in another block; what remains to check is the chunk's lines
        before the bad one: no repeated (query, doc) pair among them, and none of their
        queries seen before (a repeat across blocks)."""
        found = chunk_error(signal, "run", source)
        if found is None:
            return None
        error, before = found
        lines = [before] if before is not None and before.height else []
        ignored = pl.concat(self.ignored_ids) if self.ignored_ids else \
            pl.Series([], dtype=pl.String)
        if ignored.n_unique() != len(ignored):
            return None
        if lines:
            unpacked = pl.concat(lines)
            if unpacked.select(pl.struct("query_id", "doc_id").is_duplicated().any()).item():
                return None
            queries = unpacked["query_id"].unique()
            codes = query_codes(queries, self.qrels.query_ids)
            if self.present[codes[codes >= 0]].any() or \
                    not set(queries.to_list()).isdisjoint(ignored.to_list()):
                return None
        return error

    def prepare(self, frame: pl.DataFrame, facts: _ChunkFacts | None = None) -> _Piece | None:
        """Pack ``frame``, whose query blocks are all whole (on a worker thread: reads
        the qrels, writes nothing shared); None for an empty frame. ``facts``: the
        frame's :class:`_ChunkFacts`, when other packers share them."""
        if frame.height == 0:
            return None
        facts = _ChunkFacts(frame, self.semantics) if facts is None else facts
        blocks = facts.blocks
        lengths = blocks.lengths
        block_code = query_codes(blocks.query_ids, self.qrels.query_ids)
        evaluated = block_code >= 0
        kept_blocks = np.flatnonzero(evaluated)
        kept_codes = block_code[kept_blocks]
        if sg.distinct(kept_codes).size != kept_codes.size:
            raise _SplitBlocks  # a query in several blocks: partition the run by query
        row_block, hashes = facts.row_block, facts.hashes
        if facts.may_repeat:
            raise NotPlain  # read_run finds the duplicate (or the false alarm)
        scores = facts.scores

        rows = facts.all_rows if evaluated.all() else \
            facts.ranked(np.flatnonzero(evaluated[row_block]))
        row_block, scores = row_block[rows], scores[rows]
        qcode = block_code[row_block]
        doc_col = frame["doc_id"]
        codes = lookup_codes(
            self.qrels, qcode, hashes[rows],
            lambda at: doc_col.gather(rows if at is None else rows[at]),
            queries=sg.distinct(kept_codes),
            fingerprints_at=lambda at: facts.fingerprints_at(rows if at is None else rows[at]))
        if self.ties_by_doc_id:
            _order_mixed_ties(rows, row_block, scores, codes, doc_col,
                              nonpositive_alike=self.nonpositive_alike)

        kept_len = lengths[kept_blocks]
        kept_scores = scores if self.keep_scores else None  # tie groups share a score
        if self.max_docs is not None:
            offsets, top = sg.truncate(np.concatenate(([0], np.cumsum(kept_len))),
                                       self.max_docs)
            codes, kept_len = codes[top], np.diff(offsets)
            kept_scores = None if kept_scores is None else kept_scores[top]
        kept = self.sink.prepare(kept_codes, kept_len, codes.astype(self.code_dtype),
                                 bogus=False, scores=kept_scores) if kept_codes.size else None
        return _Piece(kept_codes, blocks.query_ids.filter(~evaluated), frame["run_id"][-1],
                      kept)


class _ChunkFacts:
    """What packing a frame needs that does not depend on the qrels, worked out once per
    frame however many qrels it is packed against (a grid's fan-out packs each chunk
    against every qrels set): its query blocks, the doc-id hashes and whether a block may
    repeat a doc id, the ordering scores, the row order when every block is evaluated.
    Each is computed when first asked for, in the order one packer asks, so a packer that
    stops early (a split query) computes no more than before. Used by one thread."""

    def __init__(self, frame: pl.DataFrame, semantics: str):
        self.frame, self.semantics = frame, semantics
        self.blocks = run_blocks(frame)
        lengths = self.blocks.lengths
        self.row_block = np.repeat(np.arange(len(lengths)), lengths)
        self.row_block.flags.writeable = False  # shared, like every array here
        self._fingerprints: np.ndarray | None = None  # made by fingerprints_at

    @functools.cached_property
    def hashes(self) -> np.ndarray:
        return doc_hash(self.frame["doc_id"])

    def fingerprints_at(self, rows: np.ndarray) -> np.ndarray:
        """:func:`~irmetrics.engine.pack.doc_fingerprint` of the doc ids at ``rows``:
        those ids gathered and hashed while they are under a tenth of the frame, else
        every doc id hashed once and kept for the packers that follow. Gathering an id
        from the frame (parsed in pieces) costs about ten times hashing one (a chunk of
        this repository's 7M-line run: 4.5 ms for its 14 % of judged documents, 2.9 ms
        for all of them)."""
        if self._fingerprints is None:
            if 10 * len(rows) < self.frame.height:
                return doc_fingerprint(self.frame["doc_id"].gather(rows))
            self._fingerprints = doc_fingerprint(self.frame["doc_id"])
            self._fingerprints.flags.writeable = False
        return self._fingerprints[rows]

    @functools.cached_property
    def may_repeat(self) -> bool:
        return _may_repeat(self.hashes, self.row_block)

    @functools.cached_property
    def scores(self) -> np.ndarray:
        scores = ordering_scores(self.frame["score"].to_numpy(), self.semantics)
        scores.flags.writeable = False
        return scores

    @functools.cached_property
    def all_rows(self) -> np.ndarray:
        rows = self.ranked(np.arange(self.frame.height))
        rows.flags.writeable = False  # shared by the packers: none may change it
        return rows

    def ranked(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` (ascending) in ranking order: score descending inside each block,
        ties as read; the same array when already so."""
        scores, row_block = self.scores[rows], self.row_block[rows]
        if np.any((scores[1:] > scores[:-1]) & (row_block[1:] == row_block[:-1])):
            return rows[rank_order(row_block, scores)]
        return rows


def _may_repeat(hashes: np.ndarray, row_block: np.ndarray) -> bool:
    """Whether two rows of one block may hold the same doc id: equal (block, doc hash)
    pairs. A hash collision only sends the file to the general road, which decides."""
    mixed = hashes ^ (row_block.astype(np.uint64) * _SPREAD)
    return pl.Series(mixed).n_unique() != len(mixed)


def _order_mixed_ties(rows, row_block, scores, codes, doc_col, *,
                      nonpositive_alike: bool = False) -> None:
    """Give every tie group (equal block and score) that holds more than one relevance
    code its doc-id descending order, in ``codes`` (in place); other groups stay as read.
    With ``nonpositive_alike`` the codes <= 0 count as one code (the measures read them
    alike): in this repository's 7M-line run that leaves 24K of a chunk's 66K tied
    entries to sort (most tie groups mix unjudged and judged non-relevant entries only)."""
    if len(rows) < 2:
        return
    told = np.maximum(codes, 0) if nonpositive_alike else codes
    tied = (row_block[1:] == row_block[:-1]) & (scores[1:] == scores[:-1])
    differs = tied & (told[1:] != told[:-1])
    if not differs.any():
        return
    group = np.cumsum(np.concatenate(([True], ~tied)))
    mixed = np.zeros(int(group[-1]) + 1, dtype=bool)
    mixed[group[1:][differs]] = True
    sel = np.flatnonzero(mixed[group])
    # One stable sort of those entries by (group, doc id descending): polars compares
    # strings by their bytes, as trec_eval's strcmp does. Cheaper than comparing the
    # pairs apart and sorting the larger groups (measured 9 -> 6 ms a 16 MiB chunk).
    moved = pl.DataFrame({"group": group[sel], "doc": doc_col.gather(rows[sel])}) \
        .with_row_index("at").sort(["group", "doc"], descending=[False, True],
                                   maintain_order=True)["at"].to_numpy()
    codes[sel] = codes[sel][moved]
