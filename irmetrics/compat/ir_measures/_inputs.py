"""The qrels and run shapes ir_measures takes, as irmetrics tables.

Dicts of dicts, pandas/polars DataFrames (ir_measures' or PyTerrier's column names),
iterables of namedtuples, irmetrics' own tables and TREC file paths.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from ...checks import parameter_error
from ...containers import Qrels, Run
from ...io.diversity import DiversityQrels
from .util import TrecRows

#: Column names ir_measures and PyTerrier use, in that order of preference.
COLUMNS = {"query_id": ("query_id", "qid"), "doc_id": ("doc_id", "docno"),
           "score": ("score",), "relevance": ("relevance", "label")}


def reusable(value):
    """``value``, or its items when it is a one-shot iterator, so that it can be read
    more than once: the rest of a ``read_trec_qrels``/``read_trec_run`` reader as one
    polars table (no tuple per line), a list for any other (``iter(list)``)."""
    if isinstance(value, TrecRows):
        return value.rest()
    return list(value) if isinstance(value, Iterator) else value


def as_table(value, kind: str):
    """Qrels (``kind="relevance"``) or Run (``kind="score"``) from the shapes ir_measures
    takes: dict of dicts, pandas/polars DataFrame, iterable of namedtuples; also irmetrics'
    own tables and TREC file paths (left as paths: irmetrics' readers stream them)."""
    cls = Qrels if kind == "relevance" else Run
    what = "qrels" if cls is Qrels else "run"
    if isinstance(value, (cls, str, os.PathLike)):
        return value
    if isinstance(value, Mapping):
        return cls.from_dict(value)
    # A polars LazyFrame warns on .columns (even through hasattr); collect_schema() is
    # its quiet spelling.
    if hasattr(value, "collect_schema") or hasattr(value, "columns"):
        cols = (value.collect_schema().names() if hasattr(value, "collect_schema")
                else list(value.columns))
        names = {}
        for field in ("query_id", "doc_id", kind):
            found = next((c for c in COLUMNS[field] if c in cols), None)
            if found is None:
                raise parameter_error(f"the {what} DataFrame's columns", "query_id/doc_id/"
                                      + kind + " or qid/docno/"
                                      + ("label" if cls is Qrels else "score"), cols)
            names[field] = found
        return cls.from_df(value, **names)
    if isinstance(value, Iterable):
        return cls.from_records([(r.query_id, r.doc_id, getattr(r, kind))
                                 for r in records(value, kind)])
    raise parameter_error(what, "a dict of dicts, a DataFrame or an iterable of namedtuples",
                          type(value).__name__)


def records(values, kind: str):
    """The items of ``values``, each checked to have ``query_id``, ``doc_id`` and
    ``kind`` fields."""
    for i, row in enumerate(values):
        if not all(hasattr(row, f) for f in ("query_id", "doc_id", kind)):
            raise parameter_error(f"item {i + 1}", f"a namedtuple with query_id, doc_id and"
                                  f" {kind}", row)
        yield row


def as_diversity_table(value) -> DiversityQrels:
    """Intent-aware qrels from ir_measures' shapes: the intent is the ``iteration``
    (a DataFrame column, a record field, a TREC file's second column); a dict of dicts
    and records without one have the single intent ``"0"``, as in ir_measures."""
    if isinstance(value, DiversityQrels):
        return value
    if isinstance(value, (str, os.PathLike)):
        return DiversityQrels.read(value)
    if isinstance(value, Mapping):
        return DiversityQrels.from_records([(q, "0", d, r) for q, docs in value.items()
                                            for d, r in docs.items()])
    if hasattr(value, "columns"):
        cols = list(value.columns)
        found = {field: next((c for c in COLUMNS[field] if c in cols), None)
                 for field in ("query_id", "doc_id", "relevance")}
        if None in found.values():
            raise parameter_error("the qrels DataFrame's columns", "query_id/doc_id/relevance"
                                  "[/iteration] or qid/docno/label[/iteration]", cols)
        # Column by column (pandas or polars, without pyarrow); no iteration: one intent.
        frame = {field: list(value[name]) for field, name in found.items()}
        frame["iteration"] = ([str(i) for i in value["iteration"]] if "iteration" in cols
                              else ["0"] * len(frame["query_id"]))
        return DiversityQrels.from_df(pl.DataFrame(frame))
    if isinstance(value, Iterable):
        return DiversityQrels.from_records(
            [(r.query_id, str(getattr(r, "iteration", "0")), r.doc_id, r.relevance)
             for r in records(value, "relevance")])
    raise parameter_error("qrels", "a dict of dicts, a DataFrame or an iterable of"
                          " namedtuples", type(value).__name__)
