"""``Qrels`` and ``Run``, the two inputs of every evaluation, and their TREC text form.

* :mod:`~irmetrics.containers.schema` -- the columns of qrels and runs, defaults, and the
  ``on_duplicate`` policies (below everything else here);
* :mod:`~irmetrics.containers.trec_text` -- TREC qrels and run text: strict, vectorised
  parsing to frames, writing, and the chunk reader of the bounded-memory road;
* :mod:`~irmetrics.containers.tables` -- :class:`Qrels` and :class:`Run`: validated frames
  built from files, dicts, DataFrames or records.

Imports run one way: ``tables → trec_text → schema``. The public reading functions
(:func:`irmetrics.io.trec.read_qrels`, ...) sit above, in :mod:`irmetrics.io`.
"""

from . import schema
from .schema import (DEFAULT_QRELS_ITERATION, DEFAULT_RUN_ITERATION, DEFAULT_RUN_NAME,
                     DUPLICATE_POLICIES, FLOAT_LABEL_HINT, resolve_duplicates)
from .tables import Qrels, Run

__all__ = ["DEFAULT_QRELS_ITERATION", "DEFAULT_RUN_ITERATION", "DEFAULT_RUN_NAME",
           "DUPLICATE_POLICIES", "FLOAT_LABEL_HINT", "QRELS_SCHEMA", "RUN_SCHEMA", "Qrels",
           "Run", "resolve_duplicates"]


def __getattr__(name: str):
    # QRELS_SCHEMA and RUN_SCHEMA are polars' types: made on first use (PEP 562), so that
    # importing the containers does not import polars.
    if name in ("QRELS_SCHEMA", "RUN_SCHEMA"):
        return getattr(schema, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
