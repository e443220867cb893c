"""File input/output: TREC qrels and run files (see :mod:`irmetrics.io.trec`)."""

from irmetrics.io.trec import (
    read_qrels,
    read_qrels_bytes,
    read_run,
    read_run_bytes,
    write_qrels,
    write_run,
)

__all__ = ["read_qrels", "read_run", "read_qrels_bytes", "read_run_bytes", "write_qrels", "write_run"]
