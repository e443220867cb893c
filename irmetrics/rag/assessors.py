"""Two nugget assessors (a human and an LLM) on the same answers: do they agree?

:func:`assessor_agreement` compares their labels nugget by nugget (Cohen's kappa,
Krippendorff's alpha on the ordered labels not_support < partial_support < support) and
the leaderboards their nugget scores give (Kendall's tau_b, tau_AP, Spearman, Pearson,
swaps and top-k overlap with bootstrap intervals over topics, through
:func:`irmetrics.stats.ranking_agreement`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from irmetrics.checks import parameter_error
from irmetrics.stats import RankingAgreement, cohen_kappa, krippendorff_alpha, ranking_agreement
from .formats import ASSIGNMENT
from .nuggets import NuggetScores, nugget_scores


@dataclass(frozen=True)
class AssessorAgreement:
    """Result of :func:`assessor_agreement`.

    Attributes
    ----------
    labels : polars.DataFrame
        ``run_id``, ``topic_id``, ``text``, ``reference``, ``other``: the nuggets both
        assessed.
    kappa : float
        Cohen's kappa of the labels (unweighted).
    alpha : float
        Krippendorff's alpha, ordinal (not_support < partial_support < support).
    ranking : RankingAgreement
        The leaderboards of ``measure`` under both assessors (reference first).
    runs : list of str
    measure : str
    """

    labels: pl.DataFrame
    kappa: float
    alpha: float
    ranking: RankingAgreement
    runs: list
    measure: str


def _scores(value, what: str) -> tuple[pl.DataFrame, NuggetScores]:
    if isinstance(value, pl.DataFrame):
        return value, nugget_scores(value)
    raise parameter_error(what, "the DataFrame of read_assignments", type(value))


def assessor_agreement(reference, other, *, measure: str = "all_score", k: int = 3,
                       n_resamples: int = 1000, seed: int = 0,
                       level: float = 0.95) -> AssessorAgreement:
    r"""How far two nugget assessors agree, on labels and on the leaderboard.

    Labels: over the nuggets both assessed (same run, topic and nugget text), Cohen's
    :math:`\kappa = (p_o - p_e) / (1 - p_e)` and Krippendorff's ordinal :math:`\alpha`.
    Leaderboards: :func:`irmetrics.stats.ranking_agreement` of the per-topic ``measure``
    under ``reference`` (e.g. the human assessor) and ``other`` (the LLM), over the
    topics every run has under both.

    Parameters
    ----------
    reference, other : polars.DataFrame
        Assignments as :func:`~irmetrics.rag.read_assignments` returns them.
    measure : str, default "all_score"
        One of :data:`~irmetrics.rag.NUGGET_MEASURES`.
    k, n_resamples, seed, level
        As for :func:`irmetrics.stats.ranking_agreement`.

    Returns
    -------
    AssessorAgreement

    Examples
    --------
    >>> import polars as pl
    >>> def answers(labels):
    ...     runs = ["a", "b", "c"] * 2
    ...     return pl.DataFrame({"run_id": runs, "topic_id": ["1"] * 3 + ["2"] * 3,
    ...                          "line": range(6), "nugget": [0] * 6, "text": ["n"] * 6,
    ...                          "importance": ["vital"] * 6, "assignment": labels})
    >>> human = answers(["support", "partial_support", "not_support"] * 2)
    >>> llm = answers(["support", "support", "not_support",
    ...                "support", "partial_support", "not_support"])
    >>> agree = assessor_agreement(human, llm, n_resamples=0)
    >>> round(agree.kappa, 4), agree.ranking.as_dict()["tau_b"][0]
    (0.75, 1.0)
    """
    ref_frame, ref_scores = _scores(reference, "reference")
    other_frame, other_scores = _scores(other, "other")
    keys = ["run_id", "topic_id", "text"]
    # Nuggets either assessor failed to label (nuggetizer's "failed") have no label to
    # compare.
    labelled = pl.col("assignment").is_in(list(ASSIGNMENT))
    labels = (ref_frame.filter(labelled).select(*keys, reference="assignment")
              .join(other_frame.filter(labelled).select(*keys, other="assignment"),
                    on=keys).sort(keys))
    if labels.height == 0:
        raise parameter_error("other", "assignments of some nugget the reference assessed"
                              " too (same run, topic and text)", "no nugget in common")
    codes = {label: i for i, label in enumerate(ASSIGNMENT)}
    a = labels["reference"].replace_strict(codes, return_dtype=pl.Int64).to_numpy()
    b = labels["other"].replace_strict(codes, return_dtype=pl.Int64).to_numpy()
    values = np.arange(len(ASSIGNMENT))
    kappa = float(cohen_kappa(a, b, labels=values))
    alpha = float(krippendorff_alpha(a, b, level="ordinal", labels=values))
    runs = sorted(set(ref_scores.runs) & set(other_scores.runs))
    if len(runs) < 2:
        raise parameter_error("other", "assessments of at least 2 runs both assessors"
                              " judged", runs)
    ref_topics, _, x = ref_scores.matrix(measure, runs)
    other_topics, _, y = other_scores.matrix(measure, runs)
    common, ia, ib = np.intersect1d(ref_topics.astype(str), other_topics.astype(str),
                                    return_indices=True)
    ranking = ranking_agreement(x[ia], y[ib], k=min(k, len(runs)), n_resamples=n_resamples,
                                seed=seed, level=level)
    return AssessorAgreement(labels, kappa, alpha, ranking, runs, measure)


__all__ = ["AssessorAgreement", "assessor_agreement"]
