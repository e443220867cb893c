"""File input/output: TREC qrels and run files (:mod:`irmetrics.io.trec`), preference and
judgment-group files (:mod:`irmetrics.io.prefs`), intent-aware qrels
(:mod:`irmetrics.io.diversity`), ir_datasets qrels and ranx's JSON
(:mod:`irmetrics.io.external`)."""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING

if _TYPE_CHECKING:  # what type checkers see; the same names as _LAZY below
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

#: Each public name's module, imported on first use: a dict of dicts needs none of the
#: TREC text reader (irmetrics.io.trec imports irmetrics.containers.trec_text).
_LAZY = {
    **dict.fromkeys(("DiversityQrels", "read_diversity_qrels"), "diversity"),
    **dict.fromkeys(("read_irds_qrels", "read_ranx_qrels", "read_ranx_run"), "external"),
    **dict.fromkeys(("JudgmentGroups", "Prefs", "read_prefs", "read_qrels_jg",
                     "read_qrels_prefs"), "prefs"),
    **dict.fromkeys(("read_qrels", "read_run", "read_qrels_bytes", "read_run_bytes",
                     "write_qrels", "write_run"), "trec"),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'irmetrics.io' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value  # the next read is a plain global
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
