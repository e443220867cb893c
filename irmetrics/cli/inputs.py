"""Reading the CLI's input files and checking what trec_eval checks before computing.

Readers come from :mod:`irmetrics.containers` (``Qrels.read``, ``Run.read``); this module
adds what only the command line needs: the ``-R`` format switch, trec_eval's duplicate
rules (spec §2.1, §2.4) with file and line in the message.
"""

from __future__ import annotations

import gzip

import polars as pl

from ..containers import Qrels, Run
from ..exceptions import DuplicateEntryError
from .options import EXIT_INPUT, CliError

#: ``-R`` values trec_eval accepts (spec §2.5).
REL_INFO_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")

#: ``-T`` values trec_eval accepts.
RESULTS_FORMATS = ("trec_results",)


def read_judgments(path: str, rel_format: str):
    """The rel_info file in format ``rel_format`` (trec_eval ``-R``).

    Only ``qrels`` exists in this build. The preference and judgment-group readers are
    built on another branch; connecting them means returning their container here (the
    evaluator accepts whatever judgments object the engine understands).
    """
    if rel_format not in REL_INFO_FORMATS:
        raise CliError(f"illegal rel_info format {rel_format!r} for -R; expected one of "
                       f"{', '.join(REL_INFO_FORMATS)}", EXIT_INPUT)
    if rel_format != "qrels":
        raise CliError(f"-R {rel_format}: judgments in {rel_format} format are not available"
                       " in this build of irmetrics (only -R qrels)", EXIT_INPUT)
    qrels = Qrels.read(path)
    check_qrels_duplicates(qrels.df, path)
    return qrels


def read_run(path: str) -> Run:
    return Run.read(path)


def _duplicate_keys(df: pl.DataFrame) -> pl.DataFrame:
    return df.filter(pl.struct("query_id", "doc_id").is_duplicated())


def check_qrels_duplicates(df: pl.DataFrame, path: str) -> None:
    """trec_eval stops (exit 4) on a query judging one document twice (the iteration
    field does not make judgments distinct). Checked eagerly, for every query."""
    dup = _duplicate_keys(df.select("query_id", "doc_id"))
    if len(dup):
        qid, doc = dup.row(0)
        raise DuplicateEntryError(
            f"{path}: query {qid!r} judges document {doc!r} more than once"
            f"{_lines_of(path, qid, doc, doc_field=2)}")


def check_run_duplicates(run: Run, path: str, max_docs: int | None) -> None:
    """trec_eval stops (exit 4) when a document appears twice among the ``max_docs`` it
    keeps for a query; duplicates below the ``-M`` cut are allowed (spec §2.4)."""
    df = run.df.select("query_id", "doc_id", "score")
    dup = _duplicate_keys(df)
    if not len(dup):
        return
    if max_docs is not None:
        # Rank only the affected queries, in trec_eval's order, and keep the top max_docs.
        affected = df.filter(pl.col("query_id").is_in(dup["query_id"].unique().implode()))
        kept = (affected.sort(["query_id", "score", "doc_id"], descending=[False, True, True])
                .filter(pl.int_range(pl.len()).over("query_id") < max_docs))
        dup = _duplicate_keys(kept).sort("query_id")
        if not len(dup):
            return
    qid, doc = dup.row(0)[:2]
    label = "<stdin>" if path == "-" else path
    where = "" if path == "-" else _lines_of(path, qid, doc, doc_field=2)
    raise DuplicateEntryError(
        f"{label}: query {qid!r} retrieves document {doc!r} more than once{where}")


def _lines_of(path: str, qid: str, doc: str, *, doc_field: int) -> str:
    """`` (lines 3 and 7)``: where a duplicated pair occurs (error path only)."""
    key = (qid.encode(), doc.encode())
    found = []
    try:
        for i, line in enumerate(open_lines(path), start=1):
            fields = line.split()
            if len(fields) > doc_field and (fields[0], fields[doc_field]) == key:
                found.append(str(i))
    except OSError:
        return ""
    return f" (lines {', '.join(found[:-1])} and {found[-1]})" if len(found) > 1 else ""


def open_lines(path: str):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as fh:
        yield from fh
