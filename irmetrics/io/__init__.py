"""File input/output: TREC qrels and run files (:mod:`irmetrics.io.trec`), preference and
judgment-group files (:mod:`irmetrics.io.prefs`), intent-aware qrels
(:mod:`irmetrics.io.diversity`), ir_datasets qrels and ranx's JSON
(:mod:`irmetrics.io.external`)."""

from .diversity import DiversityQrels, read_diversity_qrels
from .external import read_irds_qrels, read_ranx_qrels, read_ranx_run
from .prefs import JudgmentGroups, Prefs, read_prefs, read_qrels_jg, read_qrels_prefs
from .trec import (
    read_qrels,
    read_qrels_bytes,
    read_run,
    read_run_bytes,
    write_qrels,
    write_run,
)

__all__ = [
    "DiversityQrels", "read_diversity_qrels", "JudgmentGroups", "Prefs", "read_prefs", "read_qrels_jg", "read_qrels_prefs",
    "read_qrels", "read_run", "read_qrels_bytes", "read_run_bytes", "write_qrels", "write_run",
    "read_irds_qrels", "read_ranx_qrels", "read_ranx_run",
]
