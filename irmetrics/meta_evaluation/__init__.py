"""Evaluating the evaluation: how far a score depends on choices outside the run.

* :mod:`~irmetrics.meta_evaluation.ties` -- :func:`tie_report`: how much of a score depends
  on how tied documents are ordered.
* :mod:`~irmetrics.meta_evaluation.grid` -- :func:`evaluate_grid`: many qrels sets x many
  runs, each run read once; the agreement between the leaderboards they give, their
  discriminative power and swap rate (:class:`Grid`).
* :mod:`~irmetrics.meta_evaluation.judges` -- :func:`judge_agreement`: do two judgment
  sets agree on the documents both judged (kappa, alpha, Jaccard, confusion, coverage)?
"""

from .grid import Grid, evaluate_grid
from .judges import JudgeAgreement, judge_agreement
from .ties import TieReport, per_query_frame, report_ties, tie_report

__all__ = ["Grid", "JudgeAgreement", "TieReport", "evaluate_grid", "judge_agreement",
           "per_query_frame", "report_ties", "tie_report"]
