"""evaluate() and Evaluator: qrels + run + measure names → Results."""

from __future__ import annotations

import importlib
import os
from collections import defaultdict
from dataclasses import dataclass, replace
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import polars as pl

    from .engine.stacked import StackedQrels
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from .checks import check_bool, check_choice, check_int, parameter_error
from .containers import Qrels, Run
from .engine.dicts import JudgmentTable, evaluate_dict_run
from .engine.ordering import SEMANTICS, TIES
from .engine.sinks import StreamedValues
from .io import columnar
from .io.columnar import column_names, is_columnar
from .io.external import external_qrels, is_json, read_ranx_run
from .containers.schema import LATIN1, RELEVANCE_TYPES, UTF8
from .lazy import loaded
from .measures.context import Context
from .measures.parse import Request, parse_measures
from .measures.params import DoubleCutoffs, LongCutoffs
from .measures.rel_format import QRELS, check_rel_format
from .measures.registry import (DOUBLE, LONG, REGISTRY, RESET_ALWAYS, RESET_UNPARAMETERISED,
                                STRING, USER_FAMILY, pytrec_eval_supported, user_measures_of)
from .parallel import resolve_threads
from .progress import check_progress, progress_for
from .results import Results, report_query_set


def _on_first_call(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported when first called: the file, table and stacked roads'
    code, which a dict of dicts never runs (issue 34: the drop-ins' cold calls import
    neither the TREC text reader nor the file road). A module attribute, so that a test
    may still patch it here."""
    def call(*args, **kwargs):
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


encode_qrels = _on_first_call("irmetrics.engine.pack", "encode_qrels")
pack = _on_first_call("irmetrics.engine.pack", "pack")
split_values = _on_first_call("irmetrics.engine.stacked", "split_values")
stacked_evaluator = _on_first_call("irmetrics.engine.stacked", "stacked_evaluator")
stacked_qrels = _on_first_call("irmetrics.engine.stacked", "stacked_qrels")
encode_qrels_file = _on_first_call("irmetrics.engine.stream", "encode_qrels_file")
evaluate_run_batches = _on_first_call("irmetrics.engine.stream", "evaluate_run_batches")
evaluate_run_file = _on_first_call("irmetrics.engine.stream", "evaluate_run_file")
is_regular_path = _on_first_call("irmetrics.containers.trec_text", "is_regular_path")
latin1_ids = _on_first_call("irmetrics.containers.trec_text", "latin1_ids")
read_utf8_or_latin1 = _on_first_call("irmetrics.io.trec", "read_utf8_or_latin1")

#: How unjudged retrieved documents count: as non-relevant (trec_eval), or both ways.
UNJUDGED = ("zero", "bounds")


def coerce_input(value, cls, what, read, from_dict=None, from_frame=None):
    """``value`` as ``cls``: kept if already one; a path goes to ``read``, a dict to
    ``from_dict`` (when given), a DataFrame or LazyFrame (anything with ``columns``) to
    ``from_frame`` (default ``cls.from_df``)."""
    if isinstance(value, cls):
        return value
    if isinstance(value, (str, os.PathLike)):
        return read(value)
    if from_dict is not None and isinstance(value, dict):
        return from_dict(value)
    if isinstance(value, pl.LazyFrame) or hasattr(value, "columns"):
        return (from_frame or cls.from_df)(value)
    kinds = "a path, a dict or a DataFrame" if from_dict is not None else "a path or a DataFrame"
    raise TypeError(f"`{what}` must be {cls.__name__}, {kinds}; got {type(value)!r}.")


def check_columns_apply(name: str, columns, source) -> None:
    """Refuse column names for an input that has no columns to name (a TREC text file,
    a dict): ignoring them would evaluate something else than the user described."""
    if columns is None:
        return
    if isinstance(source, dict) or (isinstance(source, (str, os.PathLike))
                                    and not is_columnar(source)):
        what = "a dict" if isinstance(source, dict) else f"TREC text ({os.fspath(source)!r})"
        raise parameter_error(name, "given only for Parquet / Arrow IPC files, DataFrames"
                              f" and LazyFrames (this input is {what})", columns)


def as_qrels(qrels, columns=None, relevance="int") -> Qrels:
    """Accept Qrels, a path (TREC, Parquet, Arrow IPC), a pytrec_eval-shaped dict, a
    DataFrame or a LazyFrame; ``columns`` names a table's columns
    (:mod:`irmetrics.io.columnar`); labels are read as integers, or as floats with
    ``relevance="float"``; ``"irds:<dataset id>"`` and ranx's ``.json`` files are read
    by :func:`irmetrics.io.external.external_qrels`."""
    external = external_qrels(qrels, relevance)
    if external is not None:
        return external
    if relevance == "float" and not isinstance(qrels, Qrels):
        if isinstance(qrels, (str, os.PathLike)) and not is_columnar(qrels):
            return Qrels.read(os.fspath(qrels), relevance="float")
        if isinstance(qrels, dict):
            return Qrels.from_dict(qrels, relevance_type="float")
        columns = column_names(columns, "qrels", "qrels_columns")
        return columnar.read_qrels(qrels, columns, relevance_type="float")
    return _as_table(qrels, Qrels, "qrels", columns, columnar.read_qrels)


def as_run(run, columns=None) -> Run:
    """As :func:`as_qrels`, for a run (a ``.json`` path is ranx's JSON run)."""
    if is_json(run):
        return read_ranx_run(run)
    return _as_table(run, Run, "run", columns, columnar.read_run)


def as_alike(inputs) -> tuple[list, str]:
    """Qrels and runs whose ids are compared with one another, each read as
    :func:`evaluate` reads it: a TREC text file that is not UTF-8 is read as Latin-1.

    When one file is read as Latin-1, every table's ids (and run names) are put in
    their Latin-1 view (:func:`~irmetrics.containers.trec_text.latin1_ids`), so that ids
    compare as the bytes of the files, as trec_eval compares them; ``id.encode("latin-1")``
    then gives those bytes back.

    Parameters
    ----------
    inputs : sequence of (value, kind)
        ``kind`` is ``"run"`` (``value`` as :func:`as_run` takes it) or ``"qrels"``
        (as :func:`as_qrels` takes it).

    Returns
    -------
    tables : list of Run or Qrels
        In the order of ``inputs``.
    encoding : {"utf-8", "latin-1"}
        ``"latin-1"`` when some file was not UTF-8.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "a.run")
    ...     with open(path, "wb") as f:
    ...         _ = f.write(b"q1 Q0 caf\\xe9 1 2.0 r\\n")
    ...     (a, b), encoding = as_alike([(path, "run"), ({"q1": {"café": 1.0}}, "run")])
    >>> encoding, a.df["doc_id"][0].encode("latin-1"), b.df["doc_id"][0].encode("latin-1")
    ('latin-1', b'caf\\xe9', b'caf\\xc3\\xa9')
    """
    tables: list[Qrels | Run] = []
    encodings = []
    for value, kind in inputs:
        table: Qrels | Run
        check_choice("kind", kind, ("qrels", "run"))
        external = external_qrels(value, "int") if kind == "qrels" else None
        if external is not None:
            table, encoding = external, UTF8
        elif isinstance(value, (str, os.PathLike)) and not is_columnar(value) \
                and not (kind == "run" and is_json(value)):
            table, encoding = read_utf8_or_latin1(value, kind)
        else:
            table, encoding = (as_run(value) if kind == "run" else as_qrels(value)), UTF8
        tables.append(table)
        encodings.append(encoding)
    if LATIN1 not in encodings:
        return tables, UTF8
    return [table if encoding == LATIN1 else _latin1_view(table)
            for table, encoding in zip(tables, encodings)], LATIN1


def _latin1_view(table):
    """``table`` (Qrels or Run read as UTF-8) with its ids in their Latin-1 view."""
    df = table.df.with_columns(latin1_ids(table.df["query_id"]), latin1_ids(table.df["doc_id"]))
    if isinstance(table, Qrels):
        return Qrels(df, path=table.path)
    df = df.with_columns(latin1_ids(df["run_id"]))
    name = latin1_ids(pl.Series([table.name], dtype=pl.String))[0]
    return Run(df, name=name, path=table.path)


def _as_table(value, cls, kind: str, columns, read_table):
    """``value`` as ``cls``: a TREC file by ``cls.read``, a columnar file or a frame by
    ``read_table`` with the ``columns`` given (``{kind}_columns``)."""
    columns = column_names(columns, kind, f"{kind}_columns")

    def read(path):
        return read_table(path, columns) if is_columnar(path) else cls.read(os.fspath(path))

    return coerce_input(value, cls, kind, read, cls.from_dict,
                   lambda frame: read_table(frame, columns))


#: The roads a run can take to the kernels (``Results.road``). ``"file"``: a TREC run file
#: chunk by chunk (:func:`~irmetrics.engine.stream.evaluate_run_file`); ``"table"``: a
#: Parquet or Arrow IPC file, a DataFrame or a LazyFrame batch by batch
#: (:func:`~irmetrics.engine.stream.evaluate_run_batches`); both keep per-query values
#: only, in bounded memory. ``"dict"``: a pytrec_eval-shaped dict straight to codes
#: (:mod:`irmetrics.engine.dicts`); ``"direct"``: an adapter's own arrays
#: (``Run.pack_direct``); ``"memory"``: the run read whole, then packed.
FILE_ROAD, TABLE_ROAD, DICT_ROAD, DIRECT_ROAD, MEMORY_ROAD = (
    "file", "table", "dict", "direct", "memory")
ROADS = (FILE_ROAD, TABLE_ROAD, DICT_ROAD, DIRECT_ROAD, MEMORY_ROAD)
#: The roads whose memory does not grow with the run's length.
BOUNDED_ROADS = frozenset({FILE_ROAD, TABLE_ROAD})
#: Why the bounded-memory road gave a run back at run time (it decides only on reading).
#: Why a ranx JSON run leaves the bounded roads.
JSON_WHOLE = "a ranx JSON run (JSON is parsed whole)"
DECLINED = ("the run needs the whole-file reader (a file that is not UTF-8, a malformed "
            "line the chunk reader cannot place, a document repeated in a query, or a "
            "judged placeholder under complete=True)")


@dataclass(frozen=True)
class RoadPlan:
    """The road :meth:`Evaluator.plan` chooses for a run.

    Attributes
    ----------
    road : str
        One of :data:`ROADS`: the road tried first (a bounded road may still give a run
        back when reading it shows that it needs the whole-file reader).
    bounded_input : bool
        Whether the run is given in a form the bounded-memory roads read (a path, a
        DataFrame, a LazyFrame): only such a run can "leave" them, which ``strict=True``
        refuses.
    reason : str or None
        Why a run given in such a form does not take a bounded road; None otherwise.
    """

    road: str
    bounded_input: bool
    reason: str | None = None


class Evaluator:
    """Qrels encoded once, measures parsed once, evaluated against many runs.

    Parameters
    ----------
    qrels : Qrels, path, dict or DataFrame
    measures : str or list of str
        trec_eval names (``"map"``, ``"P.5,10"``, ``"official"``) or friendly names
        (``"nDCG@10"``, ``"P(rel=2)@5"``).
    relevance_level : int, default 1
        Minimum label counted as relevant by binary measures (trec_eval ``-l``).
    judged_only : bool, default False
        Drop unjudged documents from rankings before computing (``-J``).
    max_docs : int, optional
        Evaluate only the top ``max_docs`` documents of each ranking (``-M``).
    complete : bool, default False
        Evaluate every qrels query (``-c``): a query absent from the run is evaluated on
        trec_eval's one-document placeholder ranking (then zeroed as trec_eval does, so it
        scores 0 on most measures) and counts in the averages.
        Otherwise the queries present in both qrels and run are evaluated and the qrels
        queries absent from the run are skipped (``Results.missing_query_ids``).
    semantics : {"trec_eval", "pytrec_eval"}, default "trec_eval"
        ``"pytrec_eval"`` reproduces pytrec-eval-terrier 0.5.11 (trec_eval 9.0.8):
        float32 scores and its iprec_at_recall rounding.
    num_docs_in_coll : int, default 0
        Collection size, used only by ``utility`` (``-N``).
    qrels_columns, run_columns : dict or sequence of str, optional
        The columns of a table (Parquet or Arrow IPC file, LazyFrame, DataFrame) that
        hold ``query_id``, ``doc_id`` and ``relevance`` (``score`` for runs): a dict
        ``{"query_id": "qid", "doc_id": "docno", "score": "score"}`` or the three names
        in that order. Default: those names, or PyTerrier's ``qid``, ``docno``,
        ``score``/``label`` where unambiguous (docs/scale.md).
    ties : {"trec_eval", "input_order", "expected"}, default "trec_eval"
        How documents with equal scores are ordered: by doc id descending (bytes), as
        trec_eval and pytrec_eval do; in the run's own order (file lines, dict
        insertion, array order); or not at all: ``"expected"`` reports every measure's
        exact expected value over uniformly random orders of each group of tied
        documents (only for measures with a closed form, see
        :func:`irmetrics.measures.expected.accepted_names`). See docs/semantics.md.
    relevance : {"int", "float"}, default "int"
        How qrels labels are read: integers, as trec_eval (a label such as ``0.5`` is an
        error naming the file and line), or finite real numbers (``"float"``: averaged
        or LLM judgments). Float labels are the gains of ndcg, ndcg_cut, dcg and
        ideal_dcg (the ideal sorts the labels themselves); binary measures count
        ``label >= relevance_level``; other gain-based measures and gain parameters
        are refused. See docs/semantics.md.
    progress : {False, True, "auto"}, default False
        Show the progress of long reads on stderr (bytes or rows read, lines and queries
        done, rate, time left) for the bounded-memory roads below: ``True`` always,
        ``"auto"`` only when stderr is a terminal (what ``irmetrics eval`` does; its
        ``--quiet`` turns it off). A bar appears after a second of work and is cleared
        when the work ends (:mod:`irmetrics.progress`).
    threads : int, optional
        Threads for the bounded-memory roads (chunks of the qrels and run files, batches
        of a table, parsed, packed and evaluated in parallel and merged in file order):
        default every core this process may use, ``1`` none at all
        (:func:`irmetrics.parallel.resolve_threads`). The numbers and every error do not
        depend on it.
    strict : bool, default False
        Raise :class:`~irmetrics.exceptions.ParameterError` instead of reading a run
        given as a path or a frame whole, when it cannot take a bounded-memory road
        (``Results.road`` says which road ran; :meth:`plan` which one would).
    unjudged : {"zero", "bounds"}, default "zero"
        How retrieved documents absent from the qrels count: as non-relevant (trec_eval),
        or also both ways: ``"bounds"`` adds, after each output ``m``, ``m_low`` and
        ``m_high``, the lowest and highest value of ``m`` over every labelling of those
        documents with labels from 0 to the highest label of the qrels (:mod:`irmetrics.unjudged`, docs/incomplete_judgments.md). Only measures
        with bounds are accepted (P, success, recip_rank, RR@k, recall, Rprec, map,
        map_cut, bpref, ndcg, ndcg_cut, ERR@k, Judged@k).

    Notes
    -----
    A run given as a TREC file (tabs, CRLF, blank and comment lines included), a Parquet
    or Arrow IPC file, a DataFrame or a LazyFrame is
    evaluated in bounded memory (under ``ties="trec_eval"`` or ``"input_order"`` and
    integer labels): chunk by chunk, keeping per-query values only
    (:mod:`irmetrics.engine.stream`; a run whose queries are split over the file is
    partitioned by query into temporary files first). The values are those of the
    in-memory road, bit for bit.

    Ids are compared as bytes, as in trec_eval. Files are read as UTF-8; when the qrels
    file or a run file is not UTF-8 (the ids of a Latin-1 collection: ``1 0 caf\xe9 1``),
    that evaluation reads *both* sides byte by byte as Latin-1 (ids given as str count
    as their UTF-8 bytes), which keeps matches and the byte order of ties exactly as
    trec_eval has them; ``Results.id_encoding`` is then ``"latin-1"`` and
    ``query_id.encode("latin-1")`` gives the original bytes. Files with NUL bytes,
    UTF-16 text and binary data are still refused.

    Examples
    --------
    >>> from irmetrics import Evaluator
    >>> ev = Evaluator({"q1": {"d1": 1, "d2": 0}}, ["map", "P.1"])
    >>> ev.evaluate({"q1": {"d1": 0.3, "d2": 0.9}}).aggregate()
    {'map': 0.5, 'P_1': 0.0}
    """

    def __init__(self, qrels, measures, *, relevance_level=1, judged_only=False,
                 max_docs=None, complete=False, semantics="trec_eval", num_docs_in_coll=0,
                 qrels_columns=None, run_columns=None, ties="trec_eval", relevance="int",
                 progress=False, threads=None, strict=False, unjudged="zero"):
        check_choice("semantics", semantics, SEMANTICS)
        self.threads = resolve_threads(threads)
        check_bool("strict", strict)
        self.strict = bool(strict)
        check_choice("unjudged", unjudged, UNJUDGED)
        self.unjudged = unjudged
        check_progress(progress)
        self.progress = progress
        check_choice("ties", ties, TIES)
        check_choice("relevance", relevance, RELEVANCE_TYPES)
        if isinstance(qrels, Qrels) and qrels.relevance_type == "float":
            relevance = "float"  # float labels already: never read as trec_eval's integers
        self.relevance = relevance
        # ir_datasets ids and ranx JSON files become a Qrels table here, once.
        external = external_qrels(qrels, relevance)
        qrels = qrels if external is None else external
        self.qrels_columns = column_names(qrels_columns, "qrels", "qrels_columns")
        self.run_columns = column_names(run_columns, "run", "run_columns")
        check_columns_apply("qrels_columns", self.qrels_columns, qrels)
        check_int("relevance_level", relevance_level)
        if max_docs is not None:
            check_int("max_docs", max_docs, min=0)
        # utility's N + a - n - R is an int64 sum: bounded so that it cannot overflow.
        check_int("num_docs_in_coll", num_docs_in_coll, min=-(2**62), max=2**62)
        check_bool("judged_only", judged_only)
        check_bool("complete", complete)
        # A qrels path is encoded straight from the file when it is plain; the Qrels
        # table itself is then read only if something asks for it.
        self._qrels_source = qrels
        self._qrels = None
        self._encoded = None
        self._latin1_encoded = None  # the qrels' Latin-1 view, made when a run needs it
        self._table = None  # the judgments for runs given as dicts, made once
        # "latin-1" when the qrels file itself is not UTF-8: then every run is read so
        self.id_encoding = UTF8
        text_file = isinstance(qrels, (str, os.PathLike)) and not is_columnar(qrels)
        if text_file and relevance == "int":
            meter = progress_for(progress)
            try:
                self._encoded = encode_qrels_file(qrels, meter, threads=self.threads)
            finally:
                meter.close()
        if self._encoded is None:
            if text_file:
                self._qrels, self.id_encoding = read_utf8_or_latin1(qrels, "qrels",
                                                                    relevance=relevance)
            elif isinstance(qrels, dict) and relevance == "int":
                # Read straight into the dict road's table (a Qrels only if asked for).
                self._table = JudgmentTable.from_dict(qrels)
            else:
                self._qrels = as_qrels(qrels, self.qrels_columns, relevance)
        supported = pytrec_eval_supported if semantics == "pytrec_eval" else None
        self.requests = parse_measures(measures, supported=supported)
        check_rel_format(self.requests, QRELS)
        if ties == "expected":
            check_expected_measures(self.requests, judged_only=judged_only, max_docs=max_docs)
        if relevance == "float":
            check_float_measures(self.requests)
        if unjudged == "bounds":
            check_bounded(self.requests, ties=ties, relevance=relevance)
        self.ties = ties
        self.relevance_level = int(relevance_level)
        self.judged_only = bool(judged_only)
        self.max_docs = None if max_docs is None else int(max_docs)
        self.complete = bool(complete)
        self.semantics = semantics
        self.num_docs_in_coll = int(num_docs_in_coll)

    @property
    def qrels(self) -> Qrels:
        """The judgments as a :class:`~irmetrics.containers.Qrels` table (a plain qrels
        file given as a path is encoded without one, and read again on first access; a
        dict is read into the judgments of the dict road, and made a table from them)."""
        if self._qrels is None:
            self._qrels = self._table.to_qrels() if self._table is not None else \
                as_qrels(self._qrels_source, self.qrels_columns, self.relevance)
        return self._qrels

    @property
    def query_ids(self):
        """The qrels' query ids, ascending byte order (ndarray of str)."""
        if self._encoded is None and self._table is not None:
            return self._table.query_ids
        return self._encoded_qrels().query_ids

    def _judgment_table(self) -> JudgmentTable:
        """The judgments for runs given as dicts (:mod:`irmetrics.engine.dicts`)."""
        if self._table is None:
            self._table = JudgmentTable.from_frame(self.qrels.df)
        return self._table

    def ranked_lists(self, run, run_query_ids=None, *, keep_doc_ids=False):
        """``(RankedLists, id encoding)`` for ``run``, every ranking whole (not cut at
        ``max_docs`` under ``ties="expected"``), by the cheapest in-memory road: a file
        read whole (as UTF-8, or byte by byte as Latin-1 when it is not UTF-8); an
        adapter's own pair without strings (``Run.pack_direct``); everything else put
        through encode_qrels + pack. Ids are decoded as UTF-8 unless the qrels file or the
        run file is not UTF-8: then both sides are decoded as Latin-1. (The bounded-memory
        roads keep per-query values only: :meth:`evaluate` takes them first.)

        Examples
        --------
        >>> ev = Evaluator({"q1": {"a": 1}}, ["P.1"])
        >>> lists, encoding = ev.ranked_lists({"q1": {"a": 0.5, "b": 0.9}})
        >>> lists.code.tolist(), encoding   # b (unjudged) first, then a (label 1)
        ([-1, 1], 'utf-8')
        """
        lists, encoding, _ = self._ranked_lists(run, run_query_ids, keep_doc_ids)
        return lists, encoding

    def _ranked_lists(self, run, run_query_ids, keep_doc_ids=False):
        """:meth:`ranked_lists`, and the road taken (``"direct"`` or ``"memory"``)."""
        if isinstance(run, (str, os.PathLike)) and not is_columnar(run):
            run, encoding = read_utf8_or_latin1(run, "run", latin1=self.id_encoding == LATIN1)
            if encoding == LATIN1:
                return (self._pack_latin1(run.df, run.name, run_query_ids, keep_doc_ids),
                        LATIN1, MEMORY_ROAD)
        elif self.id_encoding == LATIN1:
            # str ids stand for their UTF-8 bytes
            run = as_run(run, self.run_columns)
            df = run.df.with_columns(latin1_ids(run.df["query_id"]),
                                     latin1_ids(run.df["doc_id"]))
            if run_query_ids is not None:
                run_query_ids = latin1_ids(
                    pl.Series(list(run_query_ids), dtype=pl.String)).to_list()
            run_name = latin1_ids(pl.Series([run.name], dtype=pl.String))[0]
            return (self._pack_latin1(df, run_name, run_query_ids, keep_doc_ids), LATIN1,
                    MEMORY_ROAD)
        lists, road = self._pack_utf8(run, run_query_ids, keep_doc_ids=keep_doc_ids)
        return lists, UTF8, road

    def _pack_latin1(self, df, run_name, run_query_ids, keep_doc_ids):
        """RankedLists of a run table whose ids are Latin-1 decoded, against the qrels'
        Latin-1 view (made once: a qrels table read as UTF-8 is converted)."""
        if self._latin1_encoded is None:
            qrels = self.qrels.df
            if self.id_encoding == UTF8:  # read as UTF-8: its Latin-1 view, made once
                qrels = qrels.with_columns(latin1_ids(qrels["query_id"]),
                                           latin1_ids(qrels["doc_id"]))
            self._latin1_encoded = encode_qrels(qrels)
        return pack(
            self._latin1_encoded, df, run_query_ids=run_query_ids, max_docs=self._pack_max_docs,
            complete=self.complete, semantics=self.semantics, run_name=run_name,
            keep_doc_ids=keep_doc_ids, ties=self.ties,
        )

    def _pack_utf8(self, run, run_query_ids, *, keep_doc_ids=False):
        """RankedLists of ``run`` (not a TREC file) with UTF-8 ids, and the road taken."""
        run = as_run(run, self.run_columns)
        direct = getattr(run, "pack_direct", None)
        if direct is not None and run_query_ids is None:
            # Only the adapter's own qrels object qualifies, so a qrels file encoded
            # straight from disk is never read into a table for this.
            lists = direct(self._qrels, max_docs=self._pack_max_docs, complete=self.complete,
                           semantics=self.semantics, keep_doc_ids=keep_doc_ids,
                           ties=self.ties)
            if lists is not None:
                return lists, DIRECT_ROAD
        return pack(
            self._encoded_qrels(), run.df, run_query_ids=run_query_ids,
            max_docs=self._pack_max_docs, complete=self.complete, semantics=self.semantics,
            run_name=run.name, keep_doc_ids=keep_doc_ids, ties=self.ties,
        ), MEMORY_ROAD

    @property
    def _pack_max_docs(self):
        """``max_docs`` for pack: under ``ties="expected"`` rankings stay whole, since a
        tie group straddling the cut decides which documents land above it."""
        return None if self.ties == "expected" else self.max_docs

    def _encoded_qrels(self):
        if self._encoded is None:
            self._encoded = encode_qrels(self.qrels.df)
        return self._encoded

    def evaluate(self, run, *, run_query_ids=None) -> Results:
        """Evaluate one run. ``run_query_ids`` lists queries present with empty rankings.

        A run given as a path is read chunk by chunk straight into the engine when the
        file is plain (:mod:`irmetrics.engine.stream`), else read whole by ``read_run``.

        Raises
        ------
        ParameterError
            No measure was asked for (``measures=[]``).
        NoQueriesError
            No query is evaluated (qrels and run share no query id).

        Warns
        -----
        MissingQueriesWarning
            Qrels queries absent from the run were skipped (``complete=False``); their
            ids are ``Results.missing_query_ids``.
        """
        return self._evaluate_checked(run, run_query_ids, stacklevel=2)

    def _evaluate_checked(self, run, run_query_ids, *, stacklevel: int) -> Results:
        """:meth:`evaluate` with the warning attributed ``stacklevel`` frames up."""
        if not self.requests:
            raise parameter_error("measures", "at least one measure name", [])
        results = self.evaluate_unchecked(run, run_query_ids=run_query_ids)
        return report_query_set(results, stacklevel=stacklevel + 1)

    def plan(self, run, run_query_ids=None) -> RoadPlan:
        """The road ``run`` takes (:data:`ROADS`): the one place that decides it.

        A dict goes to the dict road (unless it needs what only the general road has:
        ``run_query_ids``, user measures, float labels, ``ties="expected"``, Latin-1 ids);
        a TREC file path to the file road and a columnar file or a frame to the table
        road, under the same conditions (user measures included: the chunks then keep
        their scores) and when the path is a regular file (a pipe or standard input is
        read once, whole); an adapter's run with its own arrays to the direct road;
        everything else to the memory road.

        Examples
        --------
        >>> ev = Evaluator({"q1": {"a": 1}}, ["P.1"])
        >>> ev.plan({"q1": {"a": 0.5}}).road
        'dict'
        >>> Evaluator({"q1": {"a": 1}}, ["P.1"], ties="expected").plan("run.txt")
        RoadPlan(road='memory', bounded_input=True, reason="ties='expected' (expected values need each ranking whole)")
        """
        table = (loaded("polars") and isinstance(run, pl.DataFrame)) or is_columnar(run) or (
            not isinstance(run, (Run, dict, str, os.PathLike)) and hasattr(run, "columns"))
        text_file = not table and isinstance(run, (str, os.PathLike))
        reason = None
        if self.id_encoding != UTF8:
            reason = "the qrels file is not UTF-8 (every run is read whole, as Latin-1 bytes)"
        elif self.relevance != "int":
            reason = "relevance='float'"
        elif self.ties not in ("trec_eval", "input_order"):
            reason = f"ties={self.ties!r} (expected values need each ranking whole)"
        elif run_query_ids is not None:
            reason = "run_query_ids is given"
        if isinstance(run, dict):
            # (User measures may read scores, which the dict road does not keep.)
            dict_road = reason is None and not user_measures_of(self.requests)
            return RoadPlan(DICT_ROAD if dict_road else MEMORY_ROAD, False)
        if not (table or text_file):
            direct = (getattr(run, "pack_direct", None) is not None and run_query_ids is None
                      and self.id_encoding == UTF8)
            return RoadPlan(DIRECT_ROAD if direct else MEMORY_ROAD, False)
        if reason is None and text_file and is_json(run):
            reason = JSON_WHOLE
        if reason is None and text_file and not is_regular_path(run):
            reason = "standard input or a pipe (read once, whole)"
        if reason is not None:
            return RoadPlan(MEMORY_ROAD, True, reason)
        return RoadPlan(TABLE_ROAD if table else FILE_ROAD, True)

    def evaluate_unchecked(self, run, *, run_query_ids=None, infinite_scores=False) -> Results:
        """:meth:`evaluate` without its checks: no warning, and zero measures or zero
        queries give an empty :class:`Results` (pytrec_eval's ``{}``), for drop-ins that
        must stay silent where the original is. ``infinite_scores`` accepts ``inf`` and
        ``-inf`` in a dict run (pytrec_eval ranks them first and last)."""
        check_columns_apply("run_columns", self.run_columns, run)
        if is_json(run):  # ranx's JSON run, parsed whole: strict refuses it like any other
            if self.strict:
                raise parameter_error("strict", f"False to read this run whole: {JSON_WHOLE}",
                                      True)
            run = read_ranx_run(run)
        plan = self.plan(run, run_query_ids)
        streamed: StreamedValues | None = None
        if plan.road == DICT_ROAD:
            # Straight to codes against the qrels' own table, chunk by chunk (None: ids
            # or values the road below converts or names in its error).
            streamed = evaluate_dict_run(
                self._judgment_table(), run, self._columns, max_docs=self.max_docs,
                complete=self.complete, semantics=self.semantics, ties=self.ties,
                infinite_scores=infinite_scores)
        elif plan.road in BOUNDED_ROADS:
            streamed = self._evaluate_bounded(run, plan.road)
        if streamed is not None:
            return self.results(streamed, streamed.columns, self._specs(), UTF8, plan.road)
        if plan.bounded_input and self.strict:
            raise parameter_error("strict", "False to read this run whole: "
                                  f"{plan.reason or DECLINED}", True)
        if run_query_ids is None and isinstance(run, dict):
            # A query mapped to no documents is present with an empty ranking.
            run_query_ids = list(run)
        lists, id_encoding, road = self._ranked_lists(run, run_query_ids)
        columns, specs = self.columns(lists, self.requests, expected=self.ties == "expected")
        return self.results(lists, columns, specs, id_encoding, road)

    def _evaluate_bounded(self, run, road: str) -> StreamedValues | None:
        """Per-query values of a run file (``road="file"``) or table (``"table"``) chunk
        by chunk in bounded memory, on :attr:`threads` threads; None when reading shows
        that it needs the road that reads it whole. User measures may read scores: then
        the chunks keep them."""
        meter = progress_for(self.progress)
        options = dict(max_docs=self.max_docs, complete=self.complete,
                       semantics=self.semantics, ties=self.ties, progress=meter,
                       keep_scores=bool(user_measures_of(self.requests)),
                       threads=self.threads,
                       nonpositive_alike=nonpositive_alike(
                           self.requests, self.relevance_level, self.judged_only,
                           self.unjudged))
        try:
            if road == FILE_ROAD:
                return evaluate_run_file(self._encoded_qrels(), run, self._columns,
                                         **options)
            # A DataFrame (pandas ones converted column by column) is read as a table.
            table = columnar.polars_frame(run, "run", self.run_columns)
            if table is None and not is_columnar(run):
                return None  # a pandas frame that does not convert: the containers say why
            source = run if table is None else table
            if meter.enabled:  # a file's row count is in its metadata
                if isinstance(source, (str, os.PathLike)):
                    name, total = os.path.basename(os.fspath(source)), \
                        columnar.row_count(source)
                elif isinstance(source, pl.DataFrame):
                    name, total = "DataFrame", source.height
                else:
                    name, total = "LazyFrame", None  # counting would run its plan
                meter.phase(f"reading {name}", unit="rows", total=total)
            return evaluate_run_batches(
                self._encoded_qrels(), lambda: columnar.run_batches(source, self.run_columns),
                self._columns, text_bytes=lambda: columnar.text_bytes(source), **options)
        finally:
            meter.close()

    def _specs(self) -> dict:
        """``{output name: MeasureDef}`` of every request (and of its bounds)."""
        return {name: req.measure for req in self.requests
                for name in self._with_bounds(req.output_names)}

    def _with_bounds(self, names) -> list:
        """Output names, each followed by its ``_low`` and ``_high`` under bounds."""
        if self.unjudged != "bounds":
            return list(names)
        return [n + suffix for n in names for suffix in ("", "_low", "_high")]

    def _columns(self, lists) -> dict:
        """``{output name: per-query values}`` of every request on ``lists`` in trec_eval's
        tie order: the per-chunk step of the bounded-memory road."""
        return self.columns(lists, self.requests, expected=False)[0]

    def columns(self, lists, requests, *, expected: bool) -> tuple[dict, dict]:
        """Per-query values of ``requests`` on ``lists``: ``({output name: values},
        {output name: MeasureDef})``; ``expected`` computes expectations over tie
        orders (``lists`` then whole, not cut at ``max_docs``)."""
        columns, specs = {}, {}
        if expected:  # imported here: the expected kernels pull eight measure families
            from .measures.expected import EXPECTED_KERNELS, ORDER_FREE
        for group, merged in kernel_groups(requests):
            measure, level, params = group
            req = merged[0]
            ctx = Context(
                lists,
                relevance_level=self.relevance_level if level is None else level,
                judged_only=self.judged_only if req.judged_only is None else req.judged_only,
                semantics=self.semantics, num_docs_in_coll=self.num_docs_in_coll,
                options=dict(req.options),
            )
            if expected and measure.name not in ORDER_FREE:
                block = EXPECTED_KERNELS[measure.name](ctx, params, self.max_docs)
                if measure.printed == LONG and not np.array_equal(block, np.trunc(block)):
                    # An expected count (a tie group cut by max_docs) keeps its fraction.
                    measure = replace(measure, printed=DOUBLE)
            else:
                block = measure.kernel(ctx, params)
            for req in merged:
                if len(merged) > 1 or req.params is not params:
                    # Merged friendly cutoffs: this request's column of the shared block.
                    picked: list[int] | range = [list(params).index(req.params[0])]
                else:
                    picked = range(block.shape[1])
                for name, j in zip(req.output_names, picked):
                    columns[name] = _complete_reset(block[:, j], lists.bogus, req)
                    specs[name] = measure
        if self.unjudged == "bounds":
            from .unjudged.bounds import BOUNDED_MEASURES, bound_columns, grade_range

            # (Requests made inside irmetrics, such as a report's curves, may have none.)
            bounds = bound_columns(lists, [r for r in requests
                                           if r.measure.name in BOUNDED_MEASURES], columns,
                                   relevance_level=self.relevance_level,
                                   judged_only=self.judged_only,
                                   grades=grade_range(lists.levels))
            order = [m for n in specs
                     for m in ((n, n + "_low", n + "_high") if n + "_low" in bounds else (n,))]
            specs = {n: specs[n] if n in specs else specs[n.rsplit("_", 1)[0]] for n in order}
            columns = {n: columns[n] if n in columns else bounds[n] for n in order}
        return columns, specs

    def results(self, evaluated, columns: dict, specs: dict, id_encoding: str = UTF8,
                road: str | None = None) -> Results:
        """:class:`Results` of per-query ``columns`` (``specs``: their MeasureDefs) with the
        query set of ``evaluated`` (the RankedLists or the streamed values they come
        from), computed on ``road`` (:data:`ROADS`)."""
        complete_num_rel = evaluated.qrels_positive_total if self.complete else None
        return Results(evaluated.query_ids, columns, specs, run_name=evaluated.run_name,
                       complete_num_rel=complete_num_rel,
                       missing_query_ids=evaluated.missing_query_ids,
                       ignored_query_ids=evaluated.ignored_query_ids,
                       id_encoding=id_encoding, road=road)


def check_expected_measures(requests: list[Request], *, judged_only=False,
                            max_docs=None) -> None:
    """Refuse, under ``ties="expected"``, measures without an exact expected value, and
    ``judged_only`` with ``max_docs`` (the cut would fall before unjudged documents are
    dropped, and which ones it removes depends on the order)."""
    from .measures.expected import EXPECTED_KERNELS, ORDER_FREE, accepted_names

    refused = sorted({r.measure.name for r in requests if r.measure.name not in ORDER_FREE
                      and r.measure.name not in EXPECTED_KERNELS})
    if refused:
        raise parameter_error(
            "measures", "measures with an exact expected value under ties='expected' "
            f"({', '.join(accepted_names())}, with their parameters and friendly names)",
            refused)
    if max_docs is not None and (judged_only or any(r.judged_only for r in requests)):
        raise parameter_error("max_docs", "None when judged_only=True and ties='expected'",
                              max_docs)


#: Measure families that read labels only through ``label >= relevance_level`` and
#: ``label >= 0`` (judged), so float labels need nothing else.
BINARY_FAMILIES = frozenset({"precision", "recall", "rank", "average_precision", "counts",
                             "set_based", "interpolated"})
#: Measures whose gain is the label itself (trec_eval's default gain table).
LABEL_GAIN_MEASURES = frozenset({"ndcg", "ndcg_cut", "dcg", "ideal_dcg"})


def check_bounded(requests: list[Request], *, ties: str, relevance: str) -> None:
    """Refuse, under ``unjudged="bounds"``, measures without bounds (list them) and
    the options bounds do not cover."""
    from .unjudged.bounds import BOUNDED_MEASURES

    refused = sorted({r.output_names[0] for r in requests
                      if r.measure.name not in BOUNDED_MEASURES})
    if refused:
        raise parameter_error(
            "measures", "measures with bounds over unjudged documents ("
            + ", ".join(BOUNDED_MEASURES) + ") under unjudged='bounds'", refused)
    if ties == "expected":
        raise parameter_error("ties", "'trec_eval' or 'input_order' under "
                              "unjudged='bounds'", ties)
    if relevance != "int":
        raise parameter_error("relevance", "'int' under unjudged='bounds'", relevance)


def check_float_measures(requests: list[Request]) -> None:
    """Refuse, under ``relevance="float"``, measures that read labels as trec_eval's
    integer levels (gain tables, label strings, judgment groups) and gain parameters.
    User measures see the float labels themselves."""
    refused = sorted({r.measure.name + ("." + r.raw if r.raw else "") for r in requests
                      if not (r.measure.family in BINARY_FAMILIES
                              or r.measure.family == USER_FAMILY  # reads labels as given
                              or (r.measure.name in LABEL_GAIN_MEASURES
                                  and (r.measure.name == "ndcg_cut" or not r.parameterised)))})
    if refused:
        raise parameter_error(
            "measures", "binary measures (P, recall, map, recip_rank, ...) or ndcg, "
            "ndcg_cut, dcg, ideal_dcg without gain parameters under relevance='float'",
            refused)


#: Built-in measures whose value, at every rank, reads only whether the entry is relevant
#: (code >= the relevance level) or, for nDCG, its gain (the label when > 0, else 0), and
#: the qrels' counts: entries with codes <= 0 (unjudged, judged 0, negative labels) are
#: alike to them at a relevance level >= 1, with their default gains, options and
#: ``judged_only`` off (``judged``, ``bpref``, ``infAP``, ``num_nonrel_judged_ret``, gain
#: tables and user measures can tell them apart: not listed).
_NONPOSITIVE_ALIKE = frozenset({
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "map_cut", "Rprec",
    "recip_rank", "P", "recall", "success", "ndcg", "ndcg_cut"})


def nonpositive_alike(requests: list[Request], relevance_level: int,
                      judged_only: bool, unjudged: str = "zero") -> bool:
    """Whether every request gives the same values whichever order entries of one score
    with relevance codes <= 0 take among themselves: the file road then leaves such tie
    groups in the run's order (:func:`~irmetrics.engine.stream.evaluate_run_file`).

    All of these must hold: unjudged documents count as non-relevant
    (``unjudged="zero"``; under ``"bounds"`` an unjudged entry may take any label); every
    request is a built-in measure listed in ``_NONPOSITIVE_ALIKE``, without options or a
    gain table; its relevance level (its own, else ``relevance_level``) is >= 1, so that
    no code <= 0 is relevant; its ``judged_only`` (its own, else ``judged_only``) is off,
    so that unjudged entries are not dropped.

    Examples
    --------
    >>> from irmetrics.measures.parse import parse_measures
    >>> nonpositive_alike(parse_measures(["map", "P.10", "ndcg"]), 1, False)
    True
    >>> nonpositive_alike(parse_measures(["map", "bpref"]), 1, False)  # bpref reads judged
    False
    >>> nonpositive_alike(parse_measures(["P.10"]), 0, False)  # label 0 is relevant then
    False
    >>> nonpositive_alike(parse_measures(["P.10"]), 1, False, "bounds")  # unjudged: any label
    False
    """
    if unjudged != "zero":
        return False
    def alike(req: Request) -> bool:
        name = req.measure.name
        level = relevance_level if req.relevance_level is None else req.relevance_level
        only = judged_only if req.judged_only is None else req.judged_only
        return (name in _NONPOSITIVE_ALIKE and REGISTRY.get(name) is req.measure
                and level >= 1 and not only and not req.options
                and not (name == "ndcg" and req.parameterised))  # ndcg.1=3: a gain table

    return all(alike(req) for req in requests)


def kernel_groups(requests: list[Request]):
    """Group requests that one kernel call can serve (friendly cutoffs of one measure)."""
    groups: dict = defaultdict(list)
    order = []
    for req in requests:
        cutoff = isinstance(req.measure.params, (LongCutoffs, DoubleCutoffs))
        key: tuple
        if req.friendly and cutoff:
            key = ("merge", req.measure.name, req.relevance_level, req.judged_only,
                   req.options)
        else:
            key = ("single", id(req))
        if key not in groups:
            order.append(key)
        groups[key].append(req)
    for key in order:
        reqs = groups[key]
        if key[0] == "merge":
            params = tuple(sorted({r.params[0] for r in reqs}))
        else:
            params = reqs[0].params
        yield (reqs[0].measure, reqs[0].relevance_level, params), reqs


def _complete_reset(values: np.ndarray, bogus: np.ndarray, req: Request) -> np.ndarray:
    """Zero what trec_eval's ``-c`` clean-up zeroes on placeholder queries (docs/reference/trec_eval.md §4.4)."""
    rule = req.measure.complete_reset
    if not bogus.any() or rule is None:
        return values
    if rule == RESET_UNPARAMETERISED and req.parameterised:
        return values
    assert rule in (RESET_ALWAYS, RESET_UNPARAMETERISED)
    values = values.copy()
    values[bogus] = "" if req.measure.printed == STRING else 0.0
    return values


def evaluate(qrels, run, measures, *, relevance_level=1, judged_only=False, max_docs=None,
             complete=False, semantics="trec_eval", num_docs_in_coll=0, qrels_columns=None,
             run_columns=None, ties="trec_eval", relevance="int", progress=False,
             threads=None, strict=False, unjudged="zero") -> Results:
    """Evaluate a run against qrels with trec_eval's measures and semantics.

    Parameters
    ----------
    qrels : Qrels, path, dict, DataFrame or LazyFrame
        Judgments; a dict is pytrec_eval's ``{query_id: {doc_id: label}}``; a path is a
        TREC qrels file (``.gz`` too), or Parquet / Arrow IPC by its suffix
        (``.parquet``, ``.arrow``, ``.feather``, ``.ipc``).
    run : Run, path, dict, DataFrame or LazyFrame
        Scores; a dict is pytrec_eval's ``{query_id: {doc_id: score}}``; paths as for
        ``qrels``. Documents are
        ranked by score descending, ties by doc id descending (byte order); the rank
        column of a run file is ignored, as in trec_eval.
    measures : str or list of str
        trec_eval names (``"map"``, ``"P.5,10"``, ``"ndcg_cut.10"``, ``"official"``) or
        friendly names (``"AP"``, ``"P@10"``, ``"nDCG@10"``, ``"P(rel=2)@5"``).
    relevance_level, judged_only, max_docs, complete, semantics, num_docs_in_coll, ties,
    relevance, progress, threads, strict, unjudged
        See :class:`Evaluator` (``unjudged="bounds"``: docs/incomplete_judgments.md).
    qrels_columns, run_columns
        Names of a table's columns; see :class:`Evaluator` and docs/scale.md.

    Returns
    -------
    Results
        ``aggregate()``, ``per_query()`` and ``to_dict()``.

    Raises
    ------
    ParameterError
        ``measures`` is empty.
    NoQueriesError
        Qrels and run share no query id (nothing to average; trec_eval exits 7).

    Warns
    -----
    MissingQueriesWarning
        Qrels queries have no ranking in the run and were skipped (``complete=False``).

    Notes
    -----
    Queries evaluated: those in both qrels and run (``complete=False``), or every
    qrels query (``complete=True``). Qrels queries absent from the run are skipped, as
    trec_eval 9 and pytrec_eval do, but not silently: they are listed in
    ``Results.missing_query_ids`` and a :class:`~irmetrics.exceptions.MissingQueriesWarning`
    names them (silence it with ``warnings.simplefilter("ignore", MissingQueriesWarning)``).
    Queries only in the run are ignored and listed in ``Results.ignored_query_ids``. In a
    dict run, a query mapped to ``{}`` is present with an empty ranking (as in pytrec_eval).

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
    >>> run = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.1}}
    >>> res = irm.evaluate(qrels, run, ["map", "P.2", "nDCG@2"])
    >>> round(res.aggregate()["map"], 4)   # (1/2 + 2/3) / 2
    0.5833
    >>> res.to_dict()["q1"]["P_2"]
    0.5
    """
    return Evaluator(
        qrels, measures, relevance_level=relevance_level, judged_only=judged_only,
        max_docs=max_docs, complete=complete, semantics=semantics,
        num_docs_in_coll=num_docs_in_coll, qrels_columns=qrels_columns,
        run_columns=run_columns, ties=ties, relevance=relevance, progress=progress,
        threads=threads, strict=strict, unjudged=unjudged,
    )._evaluate_checked(run, None, stacklevel=2)


def evaluate_each(evaluators: list, run, *, stacked=None) -> list[Results]:
    """One run evaluated by several :class:`Evaluator` objects that differ only in their
    qrels (and measures), the run read once: ``[ev.evaluate_unchecked(run) for ev in
    evaluators]``, value for value, without reading the run once per qrels.

    A run file, a Parquet or Arrow IPC file or a frame goes through the
    bounded-memory road once for every qrels together
    (:func:`~irmetrics.engine.fanout.evaluate_run_file_fanout`, on the first
    Evaluator's ``threads``) when :meth:`Evaluator.plan` sends it there for every
    Evaluator; otherwise (and when the road declines the file) the run is read
    whole, once, and that table is packed against each qrels (an error under an
    Evaluator's ``strict=True``).

    ``stacked``: :func:`stacked_for` of ``evaluators``, or None. With one, the bounded
    road packs every chunk once for all the qrels sets and measures them at once
    (:mod:`irmetrics.engine.stacked`; the same values).

    Raises
    ------
    ParameterError
        The evaluators do not share the options that decide how a run is read and
        ordered (``max_docs``, ``complete``, ``semantics``, ``ties``, ``run_columns``).

    Examples
    --------
    >>> qrels = {"q1": {"a": 1, "b": 0}}
    >>> evaluators = [Evaluator(qrels, ["P.1"]), Evaluator({"q1": {"b": 1}}, ["P.1"])]
    >>> [r.aggregate()["P_1"] for r in evaluate_each(evaluators, {"q1": {"a": 2.0, "b": 1.0}})]
    [1.0, 0.0]
    """
    if not evaluators:
        return []
    first = evaluators[0]
    shared = ("max_docs", "complete", "semantics", "ties", "run_columns")
    for ev in evaluators[1:]:
        for option in shared:
            if getattr(ev, option) != getattr(first, option):
                raise parameter_error("evaluators", f"Evaluators with one {option}",
                                      getattr(ev, option))
    if is_json(run):  # ranx's JSON run
        run = read_ranx_run(run)
    run_query_ids = list(run) if isinstance(run, dict) else None
    plans = [ev.plan(run) for ev in evaluators]
    road = plans[0].road if all(p.road == plans[0].road for p in plans) else MEMORY_ROAD
    streamed = None
    if road in BOUNDED_ROADS:
        from .engine.fanout import evaluate_run_batches_fanout, evaluate_run_file_fanout

        options = dict(max_docs=first.max_docs, complete=first.complete,
                       semantics=first.semantics, ties=first.ties, threads=first.threads,
                       keep_scores=any(user_measures_of(ev.requests) for ev in evaluators))
        if stacked is not None:  # one qrels of label vectors: each chunk packed once
            encoded, per_chunk = [stacked.merged], [stacked_evaluator(stacked, first._columns)]
        else:
            encoded = [ev._encoded_qrels() for ev in evaluators]
            per_chunk = [ev._columns for ev in evaluators]
            # Each qrels' packer orders ties as the file road does for it alone; the
            # stacked qrels' codes are vector codes, whose sign says nothing of a label.
            options["nonpositive_alike"] = all(nonpositive_alike(
                ev.requests, ev.relevance_level, ev.judged_only, ev.unjudged)
                for ev in evaluators)
        table = columnar.polars_frame(run, "run", first.run_columns)
        source = run if table is None else table
        if road == FILE_ROAD:
            # the first Evaluator's progress= shows the one read of the file
            meter = progress_for(first.progress)
            try:
                streamed = evaluate_run_file_fanout(encoded, run, per_chunk, progress=meter,
                                                    **options)
            finally:
                meter.close()
        elif table is not None or is_columnar(run):
            streamed = evaluate_run_batches_fanout(
                encoded, lambda: columnar.run_batches(source, first.run_columns), per_chunk,
                text_bytes=lambda: columnar.text_bytes(source), **options)
        if streamed is not None:
            if stacked is not None:
                streamed = split_values(stacked, streamed[0])
            return [ev.results(values, values.columns, ev._specs(), UTF8, road)
                    for ev, values in zip(evaluators, streamed)]
    bounded = [p for ev, p in zip(evaluators, plans) if ev.strict and p.bounded_input]
    if bounded:
        raise parameter_error("strict", "False to read this run whole: "
                              f"{bounded[0].reason or DECLINED}", True)
    # The general road: the run read whole once (a TREC file as UTF-8, or as Latin-1
    # bytes when it is not UTF-8), then packed against each qrels.
    encoding = UTF8
    if isinstance(run, (str, os.PathLike)) and not is_columnar(run):
        run, encoding = read_utf8_or_latin1(run, "run")
    elif not isinstance(run, Run):
        run = as_run(run, first.run_columns)
    out = []
    for ev in evaluators:
        if encoding == LATIN1:
            lists = ev._pack_latin1(run.df, run.name, run_query_ids, False)
            used, taken = LATIN1, MEMORY_ROAD
        else:
            lists, used, taken = ev._ranked_lists(run, run_query_ids)
        columns, specs = ev.columns(lists, ev.requests, expected=ev.ties == "expected")
        out.append(ev.results(lists, columns, specs, used, taken))
    return out


def stacked_for(evaluators: list) -> StackedQrels | None:
    """The qrels sets of ``evaluators`` merged for :func:`evaluate_each` (``stacked=``),
    or None when they cannot be: fewer than two; measures or options that differ; user
    measures; labels that are not integers; qrels sets of different queries (see
    :func:`irmetrics.engine.stacked.stacked_qrels`). Made once, for every run.

    Examples
    --------
    >>> evaluators = [Evaluator({"q1": {"a": 1}}, "P.1"), Evaluator({"q1": {"b": 1}}, "P.1")]
    >>> stacked_for(evaluators).table.shape     # 2 label vectors (and none), 2 sets
    (3, 2)
    >>> stacked_for(evaluators[:1]) is None
    True
    """
    if len(evaluators) < 2:
        return None
    first = evaluators[0]
    options = ("relevance_level", "judged_only", "semantics", "num_docs_in_coll", "unjudged",
               "relevance", "ties", "max_docs", "complete")
    for ev in evaluators:
        if user_measures_of(ev.requests) or ev.relevance != "int" or \
                any(getattr(ev, o) != getattr(first, o) for o in options):
            return None
        try:
            if ev.requests != first.requests:
                return None
        except (TypeError, ValueError):  # parameters that do not compare: not stacked
            return None
    return stacked_qrels([ev._encoded_qrels() for ev in evaluators])
