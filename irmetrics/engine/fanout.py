"""One run read once, evaluated against several encoded qrels: the bounded-memory file road
of :mod:`irmetrics.engine.stream`, fanned out.

Each chunk of the run is read and parsed once and handed to one packer per qrels
(:class:`~irmetrics.engine.stream` ``_Chunks``), each feeding its own sink of per-query
values; only the per-query values of every qrels are kept. The outcome for each qrels is
what :func:`~irmetrics.engine.stream.evaluate_run_batches` gives for it alone, bit for
bit: the same packers see the same chunks. When any packer needs the run partitioned
by query (a query split over the file), the run is partitioned once and every packer
reads the partitions; when any needs the general road (a file that is not plain, a
placeholder document judged), None is returned and the caller reads the run whole, once.
"""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

from ..containers.trec_text import NotPlain, plain_chunks
from ..progress import NO_PROGRESS, Progress
from .pack import EncodedQrels
from .stream import (StreamedValues, _Chunks, _counted, _Evaluated, _read_ahead, _SplitBlocks,
                     _text_bytes, _whole_queries, partition_by_query)


def evaluate_run_file_fanout(qrels: list[EncodedQrels], path, evaluate_lists: list, *,
                             max_docs: int | None = None, complete: bool = False,
                             semantics: str = "trec_eval", ties: str = "trec_eval",
                             progress: Progress = NO_PROGRESS) -> list[StreamedValues] | None:
    """Per-query values of the run file at ``path`` against each of ``qrels`` (with the
    matching function of ``evaluate_lists``), the file read once; or None when the
    general road is needed. One qrels gives what
    :func:`~irmetrics.engine.stream.evaluate_run_file` gives. ``progress`` shows the
    bytes read and the lines and queries done (:mod:`irmetrics.progress`).

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> from irmetrics.engine.pack import encode_qrels
    >>> def judged(labels):
    ...     return encode_qrels(pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
    ...                                       "relevance": labels}))
    >>> def codes(lists):
    ...     return {"code": lists.code[:1]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "run.txt")
    ...     with open(path, "w") as f:
    ...         _ = f.write("q1 Q0 b 1 2.0 r\\nq1 Q0 a 2 1.0 r\\n")
    ...     values = evaluate_run_file_fanout([judged([1, 0]), judged([0, 2])], path,
    ...                                       [codes, codes])
    >>> [v.columns["code"].tolist() for v in values]   # the label of b under each qrels
    [[0], [2]]
    """
    size = _text_bytes(path)
    if size is None:
        return None  # a pipe or stdin (read once), or a path the full reader explains
    source = os.fsdecode(os.fspath(path))
    progress.phase(f"reading {os.path.basename(source)}", total=os.path.getsize(source))
    return evaluate_run_batches_fanout(
        qrels, lambda: plain_chunks(path, "run", on_read=progress.read_to), evaluate_lists,
        text_bytes=size, max_docs=max_docs, complete=complete, semantics=semantics,
        ties=ties, source=source, progress=progress)


def evaluate_run_batches_fanout(qrels: list[EncodedQrels], open_batches, evaluate_lists: list,
                                *, text_bytes=0, max_docs: int | None = None,
                                complete: bool = False, semantics: str = "trec_eval",
                                ties: str = "trec_eval", source: str | None = None,
                                progress: Progress = NO_PROGRESS) -> list[StreamedValues] | None:
    """:func:`evaluate_run_file_fanout` of a run given as batches of rows, as
    :func:`~irmetrics.engine.stream.evaluate_run_batches` takes it (``open_batches()`` is
    called a second time only to partition the run by query)."""
    if len(qrels) != len(evaluate_lists):
        raise ValueError("one evaluate_lists function per qrels")
    options = dict(max_docs=max_docs, complete=complete, semantics=semantics, ties=ties)
    try:
        try:
            return _stream_all(qrels, evaluate_lists, open_batches(), source=source,
                               progress=progress, **options)
        except _SplitBlocks:
            pass
        with tempfile.TemporaryDirectory(prefix="irmetrics-partitions-") as directory:
            size = text_bytes() if callable(text_bytes) else text_bytes
            progress.again("partitioning by query")
            parts, run_name = partition_by_query(_counted(open_batches(), progress), directory,
                                                text_bytes=size)
            progress.phase("evaluating partitions", total=len(parts), unit="partitions")
            frames = (_whole_queries(part, progress) for part in parts)
            return _stream_all(qrels, evaluate_lists, frames, whole=True, run_name=run_name,
                               progress=progress, **options)
    except NotPlain:
        return None


def _stream_all(qrels, evaluate_lists, frames, *, max_docs, complete, semantics, ties,
                whole=False, run_name=None, source=None,
                progress: Progress = NO_PROGRESS) -> list[StreamedValues]:
    """Every frame of ``frames`` (read once) through one packer per qrels; the first
    packer counts the queries done for ``progress``."""
    with ThreadPoolExecutor(max_workers=2) as helpers:
        packers = [_Chunks(q, _Evaluated(q, f), max_docs=max_docs, semantics=semantics,
                           ties=ties, helpers=helpers,
                           progress=progress if i == 0 else NO_PROGRESS)
                   for i, (q, f) in enumerate(zip(qrels, evaluate_lists))]
        try:
            for frame in _read_ahead(frames, helpers):
                if not whole:  # rows of a partition were counted while partitioning
                    progress.rows(frame.height)
                for packer in packers:
                    packer.add(frame, whole=whole)
        except NotPlain as signal:
            # A bad line stops the reading before any packer takes its chunk, so every
            # packer has seen the same lines; the first says whether it is the first error.
            error = packers[0].line_error(signal, source) if source is not None else None
            if error is not None:
                raise error from None
            raise
        return [packer.finish(complete=complete, run_name=run_name) for packer in packers]
