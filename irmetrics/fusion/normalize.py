"""Score normalisations applied to each run, query by query, before fusion (ranx's six).

Each takes one run's entries (grouped by query, each query's in rank order, so a query's
first score is its largest and its last its smallest) and returns the normalised scores.
Where ranx divides by ``max(denominator, 1e-9)``, irmetrics refuses the query instead: a
denominator of zero (one document, or all scores equal) or a negative maximum would give
numbers that mean nothing.
"""

from __future__ import annotations

import numpy as np

from irmetrics.exceptions import InputFormatError

__all__ = ["NORMS", "normalize_scores", "borda_fill"]

#: Normalisation names (ranx's) and what they compute, per query of a run with scores
#: ``s_1 >= ... >= s_n`` and ``C`` candidates (documents retrieved by any run).
NORMS = {
    "min-max": "(s - min) / (max - min)",
    "max": "s / max",
    "sum": "(s - min) / sum(s - min)",
    "zmuv": "(s - mean) / std (population standard deviation)",
    "rank": "1 - (rank - 1) / n",
    "borda": "1 - (rank - 1) / C; a document the run lacks: 0.5 - (n - 1) / (2 C)",
}


def normalize_scores(norm: str, score: np.ndarray, rank: np.ndarray, offsets: np.ndarray,
                     candidates: np.ndarray, *, run: str, query_ids: np.ndarray) -> np.ndarray:
    """``score`` (one run's entries; query ``q`` is ``offsets[q]:offsets[q + 1]``)
    normalised by ``norm``.

    Parameters
    ----------
    norm : str
        A key of :data:`NORMS`.
    score, rank : ndarray
        Per entry: the score and the 0-based rank in its query's list.
    offsets : ndarray (Q + 1)
    candidates : ndarray (Q)
        Candidates per query (``"borda"`` only).
    run : str
        The run's name, for messages.
    query_ids : ndarray of str
        For messages.

    Returns
    -------
    ndarray
        The normalised scores, per entry (formulas in :data:`NORMS`).

    Raises
    ------
    InputFormatError
        A query whose denominator is zero (``"min-max"``, ``"sum"``, ``"zmuv"``: one
        document, or all scores equal) or beyond float64 (scores spanning more than
        its range), or whose largest score is not positive (``"max"``), naming the run
        and the query.

    Examples
    --------
    >>> s, r, off = np.array([3.0, 1.0, 2.0]), np.array([0, 1, 0]), np.array([0, 2, 3])
    >>> q = np.array(["a", "b"], dtype=object)
    >>> normalize_scores("rank", s, r, off, np.array([2, 1]), run="x", query_ids=q).tolist()
    [1.0, 0.5, 1.0]
    >>> normalize_scores("min-max", s, r, off, np.array([2, 1]), run="x", query_ids=q)
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.InputFormatError: run 'x': norm 'min-max' divides by zero: max - min is 0 (one document, or all scores equal) (query_id 'b')
    """
    n = np.diff(offsets)
    entry_q = np.repeat(np.arange(len(n)), n)
    nonempty = n > 0
    first, last = offsets[:-1], offsets[1:] - 1
    top = np.where(nonempty, score[np.minimum(first, len(score) - 1)], 0.0) if len(score) \
        else np.zeros(len(n))
    bottom = np.where(nonempty, score[np.maximum(last, 0)], 0.0) if len(score) \
        else np.zeros(len(n))
    if norm == "rank":
        return 1.0 - rank / n[entry_q]
    if norm == "borda":
        return 1.0 - rank / candidates[entry_q]
    # Scores whose range is beyond float64 (e.g. 1e308 and -1e308) overflow the
    # denominator: refused, since inf / inf or x / inf would give NaN or a silent 0.
    overflow = "overflows: the scores' range is beyond float64 (scale the scores down)"
    with np.errstate(over="ignore", invalid="ignore"):
        if norm == "min-max":
            denominator = top - bottom
            _refuse(norm, run, query_ids, (
                nonempty & (denominator <= 0), "divides by zero: max - min is 0 (one"
                " document, or all scores equal)"), (
                nonempty & ~np.isfinite(denominator), overflow))
            return (score - bottom[entry_q]) / denominator[entry_q]
        if norm == "max":
            _refuse(norm, run, query_ids,
                    (nonempty & (top <= 0), "needs a positive largest score"))
            return score / top[entry_q]
        if norm == "sum":
            shifted = score - bottom[entry_q]
            denominator = np.bincount(entry_q, weights=shifted, minlength=len(n))
            _refuse(norm, run, query_ids, (
                nonempty & (denominator <= 0), "divides by zero: sum(s - min) is 0"
                " (one document, or all scores equal)"), (
                nonempty & ~np.isfinite(denominator), overflow))
            return shifted / denominator[entry_q]
        if norm == "zmuv":
            sizes = np.maximum(n, 1)
            mean = np.bincount(entry_q, weights=score, minlength=len(n)) / sizes
            centred = score - mean[entry_q]
            std = np.sqrt(np.bincount(entry_q, weights=centred * centred, minlength=len(n))
                          / sizes)
            _refuse(norm, run, query_ids, (
                nonempty & (std <= 0), "divides by zero: the standard deviation is 0"
                " (one document, or all scores equal)"), (
                nonempty & ~(np.isfinite(std) & np.isfinite(mean)), overflow))
            return centred / std[entry_q]
    raise AssertionError(norm)  # checked by the caller


def borda_fill(lengths: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Borda's value, per query, of a document a run lacks: ``0.5 - (n - 1) / (2 C)``
    for a run with ``n`` documents among ``C`` candidates.

    >>> borda_fill(np.array([2, 0]), np.array([4, 4])).tolist()
    [0.375, 0.625]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return 0.5 - (lengths - 1) / (2.0 * candidates)


def _refuse(norm: str, run: str, query_ids: np.ndarray,
            *checks: tuple[np.ndarray, str]) -> None:
    """Refuse the first query that fails any of ``checks`` (a mask over the queries, and
    why), with its reason: the query named does not depend on the order of the checks."""
    firsts = [(int(np.argmax(bad)), why) for bad, why in checks if bad.any()]
    if firsts:
        at, why = min(firsts, key=lambda first: first[0])
        raise InputFormatError(f"norm {norm!r} {why}",
                               path=f"run {run!r}", query_id=str(query_ids[at]))
