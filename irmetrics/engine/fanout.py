"""One run read once, evaluated against several encoded qrels: the bounded-memory file road
of :mod:`irmetrics.engine.stream`, fanned out.

Each chunk of the run is read and parsed once, on a worker thread, and handed there to
one packer per qrels (:class:`~irmetrics.engine.stream` ``_Chunks``; the code for one
qrels: :func:`~irmetrics.engine.stream.evaluate_pieces`), each feeding its own sink of
per-query values; only the per-query values of every qrels are kept. The outcome for
each qrels is what :func:`~irmetrics.engine.stream.evaluate_run_batches` gives for it
alone, bit for bit: the same packers see the same chunks. When any packer needs the run
partitioned by query (a query split over the file), the run is partitioned once and
every packer reads the partitions; when any needs the general road (a file the chunk
reader cannot read, a placeholder document judged), None is returned and the caller
reads the run whole, once.
"""

from __future__ import annotations

import os

from ..containers.trec_text import chunk_bytes_for, raw_chunks
from ..parallel import resolve_threads
from ..progress import NO_PROGRESS, Progress
from .pack import EncodedQrels
from .stream import (StreamedValues, _read_batch, _read_run_chunk, _text_bytes, _whole_blocks,
                     evaluate_pieces)


def evaluate_run_file_fanout(qrels: list[EncodedQrels], path, evaluate_lists: list, *,
                             max_docs: int | None = None, complete: bool = False,
                             semantics: str = "trec_eval", ties: str = "trec_eval",
                             keep_scores: bool = False, threads: int | None = None,
                             progress: Progress = NO_PROGRESS,
                             nonpositive_alike: bool = False) -> list[StreamedValues] | None:
    """Per-query values of the run file at ``path`` against each of ``qrels`` (with the
    matching function of ``evaluate_lists``), the file read once; or None when the
    general road is needed. One qrels gives what
    :func:`~irmetrics.engine.stream.evaluate_run_file` gives; each chunk is parsed once,
    on one of ``threads`` threads, and packed against every qrels there. ``progress``
    shows the bytes read and the lines and queries done (:mod:`irmetrics.progress`).
    ``nonpositive_alike``: see :func:`~irmetrics.engine.stream.evaluate_run_file` (it
    must hold for every function of ``evaluate_lists``, and the codes be labels' codes:
    not a stacked qrels' vector codes).

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
    threads = resolve_threads(threads)
    source = os.fsdecode(os.fspath(path))
    progress.phase(f"reading {os.path.basename(source)}", total=os.path.getsize(source))
    return evaluate_pieces(
        qrels, lambda: raw_chunks(path, on_read=progress.read_to, by_query=True,
                                  joined=False, chunk_bytes=chunk_bytes_for(threads)),
        _read_run_chunk, evaluate_lists,
        text_bytes=size, max_docs=max_docs, complete=complete, semantics=semantics,
        ties=ties, keep_scores=keep_scores, source=source, threads=threads,
        progress=progress, nonpositive_alike=nonpositive_alike)


def evaluate_run_batches_fanout(qrels: list[EncodedQrels], open_batches, evaluate_lists: list,
                                *, text_bytes=0, max_docs: int | None = None,
                                complete: bool = False, semantics: str = "trec_eval",
                                ties: str = "trec_eval", source: str | None = None,
                                keep_scores: bool = False, threads: int | None = None,
                                progress: Progress = NO_PROGRESS,
                                nonpositive_alike: bool = False) -> list[StreamedValues] | None:
    """:func:`evaluate_run_file_fanout` of a run given as batches of rows, as
    :func:`~irmetrics.engine.stream.evaluate_run_batches` takes it (``open_batches()`` is
    called a second time only to partition the run by query; ``nonpositive_alike`` as
    there)."""
    return evaluate_pieces(
        qrels, lambda: _whole_blocks(open_batches()), _read_batch, evaluate_lists,
        text_bytes=text_bytes, max_docs=max_docs, complete=complete, semantics=semantics,
        ties=ties, keep_scores=keep_scores, source=source, threads=threads,
        progress=progress, nonpositive_alike=nonpositive_alike)
