"""Evaluating the evaluation: how far a score depends on choices outside the run.

* :mod:`~irmetrics.meta_evaluation.ties` -- :func:`tie_report`: how much of a score depends
  on how tied documents are ordered.
"""

from .ties import TieReport, per_query_frame, report_ties, tie_report

__all__ = ["TieReport", "per_query_frame", "report_ties", "tie_report"]
