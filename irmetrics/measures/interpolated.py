"""Interpolated precision at recall levels: iprec_at_recall and 11pt_avg."""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from .context import columns
from .params import DoubleCutoffs, DoubleParams
from .registry import measure

ELEVEN_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def recall_cutoff(p: float, num_rel: np.ndarray, semantics: str) -> np.ndarray:
    """Rank among relevant retrieved documents that recall level ``p`` maps to.

    trec_eval 10 rounds half away from zero (``lround(p * R)``); trec_eval 9.0.8
    (pytrec_eval) truncates ``p * R + 0.9``.
    """
    x = p * num_rel.astype(np.float64)
    if semantics == "pytrec_eval":
        return np.trunc(x + 0.9).astype(np.int64)
    f = np.floor(x)
    return (f + (x - f >= 0.5)).astype(np.int64)


class InterpolatedPrecision:
    """``IP(j) = max_{j' >= j} j' / rank_{j'}`` over each query's relevant retrieved documents."""

    def __init__(self, view):
        self.view = view
        self.k = view.num_rel_ret  # K
        # trec_eval walks up from the bottom with a counter that starts at K and drops
        # at every rank with rel(i). For relevance levels below 0, rel(i) also holds for
        # unjudged documents, so the counter at rank i is relat(i) - D, where D counts
        # those extra documents (D = 0 for every level >= 0).
        extra = view.count(view.is_rel) - self.k
        counter = view.cum_rel - extra[view.seg]
        rel = view.is_rel & (counter >= 1)
        self.offsets = np.concatenate(([0], np.cumsum(self.k))).astype(np.int64)
        precision = counter[rel] / view.rank[rel]
        self.ip = sg.rev_cummax(precision, self.offsets)
        with np.errstate(invalid="ignore", divide="ignore"):
            # K = 0: trec_eval's K / n, which is 0/0 (a negative NaN) when n = 0.
            empty = np.float64(0.0) * self.k / view.num_ret
        #: The value of every cutoff the reverse walk never reaches (``c <= 0``).
        self.final = np.where(self.k >= 1, sg.at_rank(self.ip, self.offsets, 1, fill=0.0), empty)

    def at(self, c: np.ndarray) -> np.ndarray:
        """``IP(c)`` for per-query cutoffs ``1 <= c <= K`` (other entries are garbage)."""
        return sg.at_rank(self.ip, self.offsets, np.maximum(c, 1), fill=0.0)

    def at_levels(self, levels, semantics: str) -> list[np.ndarray]:
        out = []
        for p in levels:
            c = recall_cutoff(p, self.view.num_rel, semantics)
            out.append(np.where(c > self.k, 0.0, np.where(c <= 0, self.final, self.at(c))))
        return out

    def walk_mean(self, levels, semantics: str) -> np.ndarray:
        """trec_eval's 11pt_avg walk over levels in the order given (docs/reference/trec_eval.md §8.1).

        Levels are visited from the last to the first. Trailing levels whose cutoff
        exceeds K are skipped (they add nothing). From then on a cutoff ``c`` with
        ``1 <= c <= (the previous assigned cutoff, initially K)`` adds ``IP(c)``;
        the first one that does not (already passed, or ``<= 0``) gets the walk stuck
        and it and every earlier level add the final value. Values are added in that
        descending-index order and the sum is divided by the number of levels.
        """
        k = self.k
        total = np.zeros(len(k))
        skipping = np.ones(len(k), dtype=bool)
        stuck = np.zeros(len(k), dtype=bool)
        bound = k.copy()
        for p in reversed(levels):
            c = recall_cutoff(p, self.view.num_rel, semantics)
            skipping &= c > k
            stuck |= ~skipping & ((c > bound) | (c <= 0))
            reached = ~skipping & ~stuck
            value = np.where(stuck, self.final, self.at(c))
            total = np.where(skipping, total, total + value)
            bound = np.where(reached, c, bound)
        with np.errstate(invalid="ignore"):
            return total / len(levels)


@measure("iprec_at_recall", order=11, params=DoubleCutoffs(ELEVEN_LEVELS), groups="O T",
         friendly="IPrec", friendly_cutoff=True,
         aliases={'ir_measures': 'IPrec@r'})
def interpolated_precision_at_recall(ctx, levels):
    """Interpolated precision at recall level p: ``IP(c)`` with ``c = lround(p * R)``.

    ``IP(j)`` is the maximum precision at or below the j-th relevant retrieved
    document. ``c > K`` (K relevant retrieved) gives 0; ``c <= 0`` gives ``IP(1)``,
    or ``K / n`` when K = 0, a NaN when nothing was retrieved. Under
    ``semantics="pytrec_eval"`` the cutoff is ``trunc(p * R + 0.9)``.
    """
    return columns(*InterpolatedPrecision(ctx.view).at_levels(levels, ctx.semantics))


@measure("11pt_avg", order=19, params=DoubleParams(ELEVEN_LEVELS), groups="T")
def eleven_point_average(ctx, levels):
    """Interpolated precision averaged over recall levels (default the 11 levels 0.0..1.0).

    With ascending levels this is the mean of ``iprec_at_recall`` at those levels.
    trec_eval 10 walks the levels in the order given, so unsorted levels can give a
    different value (``11pt_avg.0.5,0.2`` is not ``11pt_avg.0.2,0.5``); the sum runs
    from the last level to the first. Cutoffs follow ``iprec_at_recall`` (and its
    NaN when nothing is retrieved); under ``semantics="pytrec_eval"`` they use
    ``trunc(p * R + 0.9)``, with the same walk. (pytrec_eval's Python wrapper sorts a
    parameter string before its engine sees it; that is a spelling rewrite, not part
    of the measure.)

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 2, "c": 0, "d": 1}}
    >>> run = {"q": {"a": 3.0, "c": 2.0, "b": 1.0}}
    >>> res = irm.evaluate(qrels, run, ["11pt_avg.0.5,0.2"])
    >>> round(res.aggregate()["11pt_avg_0.5,0.2"], 4)
    1.0
    >>> round(irm.evaluate(qrels, run, ["11pt_avg.0.2,0.5"]).aggregate()["11pt_avg_0.2,0.5"], 4)
    0.8333
    """
    return columns(InterpolatedPrecision(ctx.view).walk_mean(levels, ctx.semantics))
