"""Interpolated precision at recall levels."""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from .context import columns
from .params import DoubleCutoffs
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
        rel = (view.code >= 0) & view.is_rel
        self.k = view.count(rel)  # K = num_rel_ret
        self.offsets = np.concatenate(([0], np.cumsum(self.k))).astype(np.int64)
        precision = view.cum_rel[rel] / view.rank[rel]
        self.ip = sg.rev_cummax(precision, self.offsets)

    def at_levels(self, levels, semantics: str) -> list[np.ndarray]:
        v = self.view
        k, n = self.k, v.num_ret
        ip_first = sg.at_rank(self.ip, self.offsets, 1, fill=0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            # K = 0: trec_eval's K / n, which is 0/0 (a negative NaN) when n = 0.
            empty = np.float64(0.0) * k / n
        out = []
        for p in levels:
            c = recall_cutoff(p, v.num_rel, semantics)
            at_c = sg.at_rank(self.ip, self.offsets, np.maximum(c, 1), fill=0.0)
            low = np.where(k >= 1, ip_first, empty)
            out.append(np.where(c > k, 0.0, np.where(c <= 0, low, at_c)))
        return out


@measure("iprec_at_recall", order=11, params=DoubleCutoffs(ELEVEN_LEVELS), groups="O T",
         friendly="IPrec", friendly_cutoff=True)
def interpolated_precision_at_recall(ctx, levels):
    """Interpolated precision at recall level p: ``IP(c)`` with ``c = lround(p * R)``.

    ``IP(j)`` is the maximum precision at or below the j-th relevant retrieved
    document. ``c > K`` (K relevant retrieved) gives 0; ``c <= 0`` gives ``IP(1)``,
    or ``K / n`` when K = 0, a NaN when nothing was retrieved. Under
    ``semantics="pytrec_eval"`` the cutoff is ``trunc(p * R + 0.9)``.
    """
    return columns(*InterpolatedPrecision(ctx.view).at_levels(levels, ctx.semantics))
