"""Retrieval-augmented generation under the same statistics: nuggets and citations.

* :mod:`~irmetrics.rag.formats` -- readers of castorini/nuggetizer's nugget and assignment
  files and of the TREC RAG answer format (castorini/ragnarok);
* :mod:`~irmetrics.rag.nuggets` -- :func:`nugget_scores`: nuggetizer's ``strict_vital``,
  ``strict_all``, ``vital``, ``all`` scores and importance-weighted recall per (run,
  topic), handed on as per-query values to :func:`irmetrics.compare`;
* :mod:`~irmetrics.rag.evaluate` -- :func:`evaluate_nuggets`: the nugget measures of the
  registry (:mod:`irmetrics.measures.nuggets`) on a nugget file and assignments, as
  :class:`~irmetrics.results.Results`, the road of :func:`irmetrics.compare`,
  :func:`irmetrics.meta_evaluate` and ``irmetrics eval/compare/agree -R nuggets``;
* :mod:`~irmetrics.rag.citations` -- answers' citations against the retrieval run;
* :mod:`~irmetrics.rag.assessors` -- :func:`assessor_agreement`: a human and an LLM nugget
  assessor, label by label and leaderboard against leaderboard;
* :mod:`~irmetrics.rag.correlation` -- autojudge-evaluate's meta-evaluation correlations
  with intervals (from its leaderboard files too), and retrieval against generation per
  topic and across systems.
"""

from .assessors import AssessorAgreement, assessor_agreement
from .citations import check_citations, citation_scores
from .correlation import (LEADERBOARD_STATISTICS, TOPIC_STATISTICS, RetrievalVsGeneration,
                          judge_correlations, leaderboard_correlations, retrieval_vs_generation,
                          topic_correlations)
from .evaluate import NuggetEvaluator, evaluate_nugget_runs, evaluate_nuggets, wants_nuggets
from .formats import (ASSIGNMENT, FAILED, IMPORTANCE, LEADERBOARD_FORMATS, Answers, read_answers,
                      read_assignments, read_leaderboard, read_nuggets)
from .nuggets import DEFAULT_WEIGHTS, NUGGET_MEASURES, NuggetScores, nugget_scores

__all__ = ["ASSIGNMENT", "FAILED", "Answers", "AssessorAgreement", "DEFAULT_WEIGHTS", "IMPORTANCE",
           "LEADERBOARD_FORMATS", "LEADERBOARD_STATISTICS", "NUGGET_MEASURES", "NuggetEvaluator",
           "NuggetScores",
           "RetrievalVsGeneration", "TOPIC_STATISTICS", "assessor_agreement",
           "check_citations", "citation_scores", "evaluate_nugget_runs", "evaluate_nuggets",
           "judge_correlations",
           "leaderboard_correlations", "nugget_scores", "read_answers", "read_assignments",
           "read_leaderboard", "read_nuggets", "retrieval_vs_generation", "topic_correlations",
           "wants_nuggets"]
