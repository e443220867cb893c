"""Evaluating the evaluation: how far a score depends on choices outside the run.

* :mod:`~irmetrics.meta_evaluation.ties` -- :func:`tie_report`: how much of a score depends
  on how tied documents are ordered.
* :mod:`~irmetrics.meta_evaluation.grid` -- :func:`evaluate_grid`: many qrels sets x many
  runs, each run read once; the agreement between the leaderboards they give, their
  discriminative power and swap rate (:class:`Grid`).
* :mod:`~irmetrics.meta_evaluation.judges` -- :func:`judge_agreement`: do two judgment
  sets agree on the documents both judged (kappa, alpha, Jaccard, confusion, coverage)?
* :mod:`~irmetrics.meta_evaluation.report` -- :func:`meta_evaluate`: all of the above in
  one :class:`MetaEvaluation` with the writers and the gate of ``irmetrics agree``;
  :mod:`~irmetrics.meta_evaluation.page` draws its HTML page (optional plot extra).
"""

from .grid import Grid, evaluate_grid
from .judges import JudgeAgreement, judge_agreement
from .report import Condition, MetaEvaluation, meta_evaluate
from .ties import TieReport, per_query_frame, report_ties, tie_report

__all__ = ["Condition", "Grid", "JudgeAgreement", "MetaEvaluation", "TieReport", "evaluate_grid",
           "judge_agreement", "meta_evaluate", "per_query_frame", "report_ties", "tie_report"]
