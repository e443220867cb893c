"""Reading and writing TREC qrels and run files: the public functions.

They return (and take) :class:`~irmetrics.Qrels` and :class:`~irmetrics.Run`; the reader
itself, its formats and its messages are described in :mod:`irmetrics.containers.trec_text`
(``plain_chunks``, the bounded-memory chunk reader of :mod:`irmetrics.engine.stream`,
lives there too).
"""

from __future__ import annotations

import os
from typing import Any

from irmetrics.checks import parameter_error
from irmetrics.containers import Qrels, Run
from irmetrics.containers.trec_text import LATIN1, UTF8, is_regular_path, read_source
# Kept importable from here, where earlier versions defined them (docs cite
# irmetrics.io.trec.plain_chunks):
from irmetrics.containers.trec_text import (  # noqa: F401
    ENCODINGS, RELEVANCE_TYPES, STDIN, NotPlain, chunk_error, latin1_ids, plain_chunks)
from irmetrics.exceptions import NotUtf8Error

from .external import external_qrels

__all__ = [
    "read_qrels",
    "read_run",
    "read_qrels_bytes",
    "read_run_bytes",
    "read_utf8_or_latin1",
    "write_qrels",
    "write_run",
]


def read_qrels(path: str | os.PathLike, *, on_duplicate: str = "error",
               encoding: str = UTF8, relevance: str = "int") -> Qrels:
    """Read a TREC qrels file (``query_id iteration doc_id relevance``).

    Parameters
    ----------
    path : str or os.PathLike
        File to read; ``"-"`` reads standard input; ``.gz`` (or gzip data) is decompressed.
        ``"irds:<dataset id>"`` reads the qrels of an ir_datasets dataset and a ``.json``
        file ranx's JSON qrels (:mod:`irmetrics.io.external`).
    on_duplicate : {"error", "first", "last", "max"}
        What to do with a repeated (query_id, doc_id) pair; ``"max"`` keeps the largest
        relevance.
    encoding : {"utf-8", "latin-1"}
        How ids are decoded: UTF-8, or every byte as one character (Latin-1; see the
        module notes). A file that is not UTF-8 raises :class:`NotUtf8Error` under
        ``"utf-8"``.
    relevance : {"int", "float"}
        Labels are integers, as in trec_eval (a label such as ``0.5`` is an error), or
        finite decimal numbers (``"float"``: graded judgments from averaged or LLM
        assessors; see docs/semantics.md for what measures make of them).

    Returns
    -------
    Qrels
        ``df`` columns query_id, iteration, doc_id (String) and relevance (Int64, or
        Float64 for ``relevance="float"``), in file order; ``path`` is ``str(path)``.

    Raises
    ------
    InputFormatError
        With the file name, the 1-based line and the reason (see the module notes).

    Examples
    --------
    >>> qrels = read_qrels_bytes(b"301 0 d1 1\\n301 0 d2 0\\n")
    >>> qrels.df["relevance"].to_list()
    [1, 0]
    """
    external = external_qrels(path, relevance)
    if external is not None:
        return external
    return Qrels.read(path, on_duplicate=on_duplicate, encoding=encoding, relevance=relevance)


def read_run(path: str | os.PathLike, *, on_duplicate: str = "error",
             encoding: str = UTF8) -> Run:
    """Read a TREC run file (``query_id iteration doc_id rank score run_id``).

    Parameters
    ----------
    path : str or os.PathLike
        File to read; ``"-"`` reads standard input; ``.gz`` (or gzip data) is decompressed.
    on_duplicate : {"error", "first", "last", "max"}
        What to do with a repeated (query_id, doc_id) pair; ``"max"`` keeps the largest
        score.
    encoding : {"utf-8", "latin-1"}
        As for :func:`read_qrels`.

    Returns
    -------
    Run
        ``df`` columns query_id, iteration, doc_id (String), rank (Int64, nullable), score
        (Float64), run_id (String), in file order; ``name`` is the run_id of the last data
        line; ``path`` is ``str(path)``.

    Examples
    --------
    >>> run = read_run_bytes(b"301 Q0 d1 1 2.5 a\\n301 Q0 d2 2 1e0 b\\n")
    >>> run.name, run.df["score"].to_list()
    ('b', [2.5, 1.0])
    """
    return Run.read(path, on_duplicate=on_duplicate, encoding=encoding)


def read_qrels_bytes(data: bytes, *, source: str = "<bytes>", on_duplicate: str = "error",
                     encoding: str = UTF8, relevance: str = "int") -> Qrels:
    """Parse qrels already in memory (plain or gzip bytes), as :func:`read_qrels` reads
    a file.

    Parameters
    ----------
    data : bytes
        The qrels text, plain or gzip-compressed (detected by its magic bytes).
    source : str
        Names the data in error messages, in place of a file name.
    on_duplicate, encoding, relevance
        As for :func:`read_qrels`.

    Returns
    -------
    Qrels
        As :func:`read_qrels` returns; ``path`` is None.

    Raises
    ------
    InputFormatError
        With ``source``, the 1-based line and the reason.

    Examples
    --------
    >>> import gzip
    >>> read_qrels_bytes(gzip.compress(b"301 0 d1 1\\n301 0 d2 0\\n")).df.rows()
    [('301', '0', 'd1', 1), ('301', '0', 'd2', 0)]
    >>> read_qrels_bytes(b"301 0 d1\\n", source="mem")
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.InputFormatError: mem:1: expected 4 fields (query_id iteration doc_id relevance), found 3 (query_id '301', doc_id 'd1')
    """
    return Qrels.read_bytes(data, source=source, on_duplicate=on_duplicate, encoding=encoding,
                            relevance=relevance)


def read_run_bytes(data: bytes, *, source: str = "<bytes>", on_duplicate: str = "error",
                   encoding: str = UTF8) -> Run:
    """Parse a run already in memory (plain or gzip bytes), as :func:`read_run` reads a
    file.

    Parameters
    ----------
    data : bytes
        The run text, plain or gzip-compressed (detected by its magic bytes).
    source : str
        Names the data in error messages, in place of a file name.
    on_duplicate, encoding
        As for :func:`read_run`.

    Returns
    -------
    Run
        As :func:`read_run` returns; ``path`` is None.

    Raises
    ------
    InputFormatError
        With ``source``, the 1-based line and the reason (:class:`DuplicateEntryError`
        for a repeated pair under ``on_duplicate="error"``).

    Examples
    --------
    >>> data = b"301 Q0 d1 1 2.5 a\\n301 Q0 d1 2 1.0 a\\n"
    >>> read_run_bytes(data, on_duplicate="max").df.rows()
    [('301', 'Q0', 'd1', 1, 2.5, 'a')]
    >>> read_run_bytes(data, source="mem")
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.DuplicateEntryError: mem:2: duplicate (query_id, doc_id); first seen on line 1 (query_id '301', doc_id 'd1')
    """
    return Run.read_bytes(data, source=source, on_duplicate=on_duplicate, encoding=encoding)


def read_utf8_or_latin1(path: str | os.PathLike, kind: str, *, latin1: bool = False,
                        **options):
    """Read a qrels or run file as UTF-8, or as Latin-1 when it is not UTF-8.

    Standard input, pipes and other files that are not regular (``<(zcat run.gz)``)
    cannot be read twice: their bytes are read once (stopping at a NUL byte only) and
    parsed from memory.

    Parameters
    ----------
    path : str or os.PathLike
        File to read; ``"-"`` reads standard input.
    kind : {"qrels", "run"}
        Which reader: :func:`read_qrels` or :func:`read_run`.
    latin1 : bool, default False
        Read as Latin-1 at once, without trying UTF-8.
    **options
        Passed to the reader (``on_duplicate``, and ``relevance`` for qrels).

    Returns
    -------
    tuple of (Qrels or Run, str)
        The container and the encoding it was read with, ``"utf-8"`` or ``"latin-1"``
        (the latter when UTF-8 raised :class:`NotUtf8Error`, or when ``latin1``).

    Raises
    ------
    InputFormatError
        As the reader raises it (under Latin-1 when the file is not UTF-8).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "qrels")
    ...     with open(path, "wb") as f:
    ...         _ = f.write(b"1 0 caf\\xe9 1\\n")
    ...     qrels, encoding = read_utf8_or_latin1(path, "qrels")
    >>> encoding, qrels.df["doc_id"][0].encode("latin-1")
    ('latin-1', b'caf\\xe9')
    """
    from_path, from_bytes = (read_qrels, read_qrels_bytes) if kind == "qrels" else \
        (read_run, read_run_bytes)
    if not is_regular_path(path):
        data, name = read_source(path, LATIN1)
        read = lambda encoding: from_bytes(data, source=name, encoding=encoding,  # noqa: E731
                                           **options)
    else:
        read = lambda encoding: from_path(path, encoding=encoding, **options)  # noqa: E731
    if not latin1:
        try:
            return read(UTF8), UTF8
        except NotUtf8Error:
            pass
    return read(LATIN1), LATIN1


def write_qrels(qrels: Qrels | Any, path: str | os.PathLike) -> None:
    """Write qrels as ``query_id iteration doc_id relevance`` lines, single spaces.

    Rows are written in the container's order. An empty Qrels writes an empty file
    (which does not read back).

    Parameters
    ----------
    qrels : Qrels or dict
        A :class:`Qrels`, or a ``{query_id: {doc_id: relevance}}`` mapping (iteration
        ``0``).
    path : str or os.PathLike
        ``.gz`` suffix compresses; ``"-"`` writes to standard output.

    Raises
    ------
    ParameterError
        ``qrels`` is neither a Qrels nor a dict; an id is empty or holds whitespace, or a
        query id starts with ``#`` (it would not read back).

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "qrels.txt")
    ...     write_qrels({"q1": {"d1": 1, "d2": 0}}, path)
    ...     with open(path) as f:
    ...         f.read()
    'q1 0 d1 1\\nq1 0 d2 0\\n'
    """
    if not isinstance(qrels, Qrels):
        if isinstance(qrels, dict):
            qrels = Qrels.from_dict(qrels)
        else:
            raise parameter_error("qrels", "a Qrels or a dict", type(qrels).__name__)
    qrels.write(path)


def write_run(run: Run | Any, path: str | os.PathLike, *, run_id: str | None = None) -> None:
    """Write a run as ``query_id iteration doc_id rank score run_id`` lines, single spaces.

    Parameters
    ----------
    run : Run or dict
        A :class:`Run`, or a ``{query_id: {doc_id: score}}`` mapping.
    path : str or os.PathLike
        ``.gz`` suffix compresses; ``"-"`` writes to standard output.
    run_id : str, optional
        Written on every line instead of the ``run_id`` column.

    Notes
    -----
    If every rank is known, rows are written in the container's order with their ranks.
    If any rank is null (e.g. a run built from a dict), the whole run is written in
    trec_eval order -- queries in first-seen order, then score descending, then doc_id
    descending (bytes) -- with ranks 1..n per query. Scores are written in the shortest form
    that reads back to the same float64.

    Raises
    ------
    ParameterError
        ``run`` is neither a Run nor a dict; an id (or ``run_id``) is empty or holds
        whitespace, or a query id starts with ``#`` (it would not read back).

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "run.txt")
    ...     write_run({"q1": {"d1": 0.5, "d2": 1.5}}, path, run_id="bm25")
    ...     with open(path) as f:
    ...         f.read()      # no ranks in a dict: trec_eval order, score descending
    'q1 Q0 d2 1 1.5 bm25\\nq1 Q0 d1 2 0.5 bm25\\n'
    """
    if not isinstance(run, Run):
        if isinstance(run, dict):
            run = Run.from_dict(run)
        else:
            raise parameter_error("run", "a Run or a dict", type(run).__name__)
    run.write(path, run_id=run_id)
