"""Comparing systems: is the difference real?

* :mod:`~irmetrics.comparison.table` -- :func:`compare` and :class:`Comparison`: runs
  evaluated once, queries aligned, every system tested against its baselines (or all pairs)
  with :mod:`irmetrics.stats`; the table and its text, markdown, LaTeX, JSON, CSV writers.
* :mod:`~irmetrics.comparison.formatting` -- the cells every writer shares (numbers,
  p-values, system letters, escaping, the names of tests and corrections).
* :mod:`~irmetrics.comparison.plot` -- matplotlib figures of a comparison (optional extra).
* :mod:`~irmetrics.comparison.report` -- one self-contained HTML page per comparison.

Imports run one way: ``table → report → plot → formatting``. The package reads
:class:`~irmetrics.Results` and per-query files only; it never re-implements evaluation.
"""

from ..exceptions import ComparisonError, QueryAlignmentWarning
from .table import (COLUMNS, COMPARE_TESTS, CORRECTIONS, MAX_RESAMPLES, Comparison, Regression,
                      check_alpha, compare)
from .report import html_report

__all__ = ["COLUMNS", "COMPARE_TESTS", "CORRECTIONS", "MAX_RESAMPLES", "Comparison",
           "ComparisonError", "QueryAlignmentWarning", "Regression", "check_alpha", "compare",
           "html_report"]
