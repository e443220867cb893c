"""Condorcet fusion: pairwise majority votes between the candidates of each query.

Run ``r`` votes (with weight ``w_r``) for ``x`` over ``y`` when it ranks ``x`` above
``y``; a document a run lacks is below every document it ranks, and two documents it
lacks get no vote from it. ``x`` beats ``y`` when it gets more votes. A document scores

.. math:: 1 + |\\{y : x \\text{ beats } y\\}| + \\tfrac12 |\\{y \\ne x: \\text{votes tie}\\}|

When the majority relation is a strict order (no cycle, no tied vote) this is ranx's
score, ``n - position``; ranx sorts with the pairwise comparison as a key, so with
cycles or tied votes its order depends on its sorting and on set order, where this
score stays defined (and ties fall to the doc id rule of the fused run).
"""

from __future__ import annotations

import numpy as np

__all__ = ["condorcet_scores"]

#: Most vote cells (queries x rows x columns) compared at once: a few tens of MiB.
BLOCK_CELLS = 1 << 22


def condorcet_scores(ranks: np.ndarray, weights: np.ndarray, pair_query: np.ndarray,
                     candidates: np.ndarray) -> np.ndarray:
    """Condorcet score of each pair.

    Parameters
    ----------
    ranks : ndarray (P, R)
        Rank of each pair in each run, ``inf`` where the run lacks it.
    weights : ndarray (R)
    pair_query : ndarray (P)
        Query code of each pair (non-decreasing).
    candidates : ndarray (Q)
        Pairs per query.

    Returns
    -------
    ndarray (P)

    Examples
    --------
    >>> ranks = np.array([[0, 1, 0], [1, 0, 1], [2, 2, np.inf]])
    >>> condorcet_scores(ranks, np.ones(3), np.zeros(3, dtype=int), np.array([3])).tolist()
    [3.0, 2.0, 1.0]
    """
    n_pairs = len(pair_query)
    out = np.zeros(n_pairs)
    starts = np.concatenate(([0], np.cumsum(candidates)[:-1])).astype(np.int64)
    by_size = np.argsort(candidates, kind="stable")
    by_size = by_size[candidates[by_size] > 0]
    i = 0
    while i < len(by_size):
        width = int(candidates[by_size[i]])
        count = max(1, BLOCK_CELLS // (width * width))
        while count > 1 and int(candidates[by_size[min(i + count, len(by_size)) - 1]]) ** 2 \
                * count > BLOCK_CELLS:
            count //= 2
        block = by_size[i:i + count]
        _score_block(ranks, weights, starts[block], candidates[block], out)
        i += len(block)
    return out


def _score_block(ranks, weights, starts, sizes, out) -> None:
    """Scores of the pairs of a block of queries, padded to the longest; rows of a long
    query are compared in slices so that a block stays within :data:`BLOCK_CELLS`."""
    width = int(sizes.max())
    column = np.arange(width)
    valid = column[None, :] < sizes[:, None]                       # (B, L)
    index = np.where(valid, starts[:, None] + column[None, :], 0)
    block_ranks = np.where(valid[..., None], ranks[index], np.inf)  # (B, L, R)
    step = max(1, BLOCK_CELLS // (len(sizes) * width))
    for lo in range(0, width, step):
        rows = block_ranks[:, lo:lo + step]                        # (B, S, R)
        votes_for = np.zeros((len(sizes), rows.shape[1], width))
        votes_against = np.zeros_like(votes_for)
        for r, w in enumerate(weights):
            mine, theirs = rows[:, :, None, r], block_ranks[:, None, :, r]
            votes_for += w * (mine < theirs)
            votes_against += w * (theirs < mine)
        other = valid[:, None, :] & (column[None, lo:lo + step, None] != column[None, None, :])
        wins = ((votes_for > votes_against) & other).sum(axis=2)
        ties = ((votes_for == votes_against) & other).sum(axis=2)
        scores = 1.0 + wins + 0.5 * ties
        keep = valid[:, lo:lo + step]
        out[index[:, lo:lo + step][keep]] = scores[keep]
