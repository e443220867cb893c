"""Gain-based measures beyond nDCG: binG, G, ndcg_rel, Rndcg and rbp.

G, ndcg_rel and Rndcg walk the ranking and the ideal ranking side by side with
trec_eval's ideal cursor (docs/reference/trec_eval.md §8.0): for 0-based position ``i`` the cursor's gain is
the ideal gain ``I_{i+1}`` while ``i < idealpos`` and ``Gains.stop_gain`` (``<= 0``)
at ``i = idealpos``, where the walks stop. Each kernel turns that walk into running
sums over the ranking and over the ideal sequence, so every quantity is produced by
the same additions, in the same order, as trec_eval's loop.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..engine import segments as sg
from ..engine.gains import log2_discount
from ..engine.libm import libm_log2
from .context import columns, safe_div
from .dcg import gains_for, ideal_ranks
from .params import PairParams
from .registry import measure

#: rbp's default persistence.
DEFAULT_PERSISTENCE = 0.9


def persistence(pairs) -> float:
    """rbp's ``p``: the value of the last ``p=...`` pair, default 0.9."""
    p = DEFAULT_PERSISTENCE
    for name, value in pairs:
        if name == "p":
            p = float(value)
    return p


def running_powers(p: float, n: int) -> np.ndarray:
    """``[1, p, p*p, ...]`` of length ``n + 1``, each the previous times p (a running product)."""
    factors = np.full(n + 1, p, dtype=np.float64)
    factors[0] = 1.0
    return np.multiply.accumulate(factors)


def _gather(cum: np.ndarray, offsets: np.ndarray, seg: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``cum`` at 1-based position ``k`` of segment ``seg`` (elementwise), 0 where ``k < 1``."""
    if cum.size == 0:
        return np.zeros(len(k))
    idx = offsets[:-1][seg] + k - 1
    return np.where(k >= 1, cum[np.clip(idx, 0, cum.size - 1)], 0.0)


class GainWalk:
    """Running DCG of the ranking and of the ideal ranking, for one gain table."""

    def __init__(self, view, pairs):
        g = gains_for(view, pairs)
        self.view, self.gains = view, g
        self.ideal_n = g.ideal_count  # idealpos
        self.ideal_seg = sg.segment_ids(g.ideal_offsets)

    @cached_property
    def dcg(self) -> np.ndarray:
        """Running DCG of the ranking at every entry (rank order)."""
        gain = self.gains.entry_gain
        terms = np.where(gain != 0, gain / log2_discount(self.view.rank), 0.0)
        return sg.seg_cumsum(terms, self.view.offsets)

    @cached_property
    def idcg(self) -> np.ndarray:
        """Running ideal DCG at every ideal position."""
        g = self.gains
        return sg.seg_cumsum(g.ideal_gain / log2_discount(ideal_ranks(g)), g.ideal_offsets)

    def dcg_at(self, seg, k):
        """DCG of the top ``min(k, n)`` results of query ``seg`` (elementwise)."""
        return _gather(self.dcg, self.view.offsets, seg, np.minimum(k, self.view.num_ret[seg]))

    def idcg_at(self, seg, k):
        """Ideal DCG of the first ``min(k, idealpos)`` ideal positions (elementwise)."""
        return _gather(self.idcg, self.gains.ideal_offsets, seg, np.minimum(k, self.ideal_n[seg]))

    def final_dcg(self):
        q = np.arange(self.view.n_queries)
        return self.dcg_at(q, self.view.num_ret)

    def final_idcg(self):
        q = np.arange(self.view.n_queries)
        return self.idcg_at(q, self.ideal_n)


@measure("binG", order=20, groups="T")
def binary_g(ctx, params):
    """Binary G: ``sum_{k-th relevant, at 0-based i} 1 / log2(3 + i - k)``, divided by R.

    ``2 + i - (k - 1)`` is 2 plus the number of non-relevant (or unjudged) documents
    above the k-th relevant one, so a relevant document is discounted only by the
    non-relevant ones before it. 0 when nothing relevant is retrieved. Equals G for
    binary judgments.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"x": 2.0, "a": 1.0}}, ["binG"])
    >>> round(res.aggregate()["binG"], 4)   # 1 / log2(3) / 2
    0.3155
    """
    v = ctx.view
    rel = v.is_rel
    nonrel_above = (v.rank + 2 - v.cum_rel)[rel]
    terms = np.zeros(len(v.code))
    terms[rel] = 1.0 / libm_log2(nonrel_above)
    found = v.count(rel) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return columns(np.where(found, v.sum(terms) / v.num_rel, 0.0))


@measure("G", order=21, params=PairParams(), groups="T")
def gain_measure(ctx, pairs):
    """Normalised gain G: ``sum_i g_i / log2(2 + cost_i - res_i)``, divided by ``sum_j I_j``.

    ``res_i`` is the gain retrieved in the top i; ``cost_i`` adds, per position, the
    ideal gain ``I_i`` when it is at least 1 and 1 otherwise (and 1 past the ideal
    ranking). A document is thus rewarded by how close the ranking above it is to
    the ideal one. Gains from the gain table (default gain = label; ``G.1=3,2=9``);
    0 when no positive gain is judged. Ignores ``relevance_level``.
    """
    v = ctx.view
    walk = GainWalk(v, pairs)
    g = walk.gains
    seg, pos = v.seg, v.rank - 1
    in_ideal = pos < walk.ideal_n[seg]
    ideal_here = np.where(in_ideal, _gather(g.ideal_gain, g.ideal_offsets, seg, pos + 1), 0.0)
    step = np.where(in_ideal & (ideal_here >= 1.0), ideal_here, 1.0)
    cost = sg.seg_cumsum(step, v.offsets)
    res = sg.seg_cumsum(g.entry_gain, v.offsets)
    nonzero = g.entry_gain != 0
    terms = np.zeros(len(v.code))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms[nonzero] = g.entry_gain[nonzero] / libm_log2((2 + cost - res)[nonzero])
    ideal_sum = sg.seg_sum(g.ideal_gain, walk.ideal_seg, v.n_queries)
    return columns(safe_div(v.sum(terms), ideal_sum))


@measure("ndcg_rel", order=25, params=PairParams(), groups="T")
def ndcg_over_relevant(ctx, pairs):
    """nDCG averaged over relevant documents (positive gain).

    Each retrieved document with a positive gain at rank i contributes
    ``DCG_i / IDCG_min(i, idealpos)``; every positive ideal position not matched by
    one contributes ``DCG_n / IDCG`` (the final ratio). The sum is divided by
    ``idealpos``; a sum that is not positive gives 0. Ignores ``relevance_level``.
    """
    v = ctx.view
    walk = GainWalk(v, pairs)
    gain = walk.gains.entry_gain
    positive = gain > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = walk.dcg / walk.idcg_at(v.seg, v.rank)
        terms = np.where(positive, ratio, 0.0)
        missing = (walk.ideal_n - v.count(positive)).astype(np.float64)
        total = v.sum(terms) + missing * walk.final_dcg() / walk.final_idcg()
        value = total / walk.ideal_n
    return columns(np.where(total > 0, value, 0.0))


@measure("Rndcg", order=26, params=PairParams(), groups="T")
def ndcg_at_r_levels(ctx, pairs):
    """nDCG averaged at the R levels: where the ideal gain changes, and at the end.

    With the ideal ranking's gains ``I_1 >= I_2 >= ...`` (idealpos of them), nDCG is
    taken just before every position where the ideal gain changes (and where it runs
    out), i.e. ``DCG_min(i, n) / IDCG_i`` for each level boundary i, plus
    ``DCG_n / IDCG`` when the ranking extends at least two documents past the ideal
    one, and the values are averaged. R = 0 (uses ``relevance_level``) gives 0; no
    boundary at all (only with non-positive gains) gives NaN.
    """
    v = ctx.view
    walk = GainWalk(v, pairs)
    g = walk.gains
    ideal = g.ideal_gain
    iseg = walk.ideal_seg
    ipos = sg.ranks(g.ideal_offsets)  # 1-based: boundary before 0-based position ipos
    last = ipos == walk.ideal_n[iseg]
    nxt = np.append(ideal[1:], 0.0)
    boundary = last | (nxt != ideal)
    with np.errstate(divide="ignore", invalid="ignore"):
        at_boundary = np.where(boundary, walk.dcg_at(iseg, ipos) / walk.idcg, 0.0)
    total = sg.seg_sum(at_boundary, iseg, v.n_queries)
    count = sg.seg_count(boundary, iseg, v.n_queries)
    tail = (walk.ideal_n >= 1) & (walk.ideal_n <= v.num_ret - 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.where(tail, total + walk.final_dcg() / walk.final_idcg(), total)
        value = total / (count + tail)
    return columns(np.where(v.num_rel == 0, 0.0, value))


@measure("rbp", order=55, params=PairParams(), groups="T", pytrec_eval=False, friendly="RBP",
         aliases={'ir_measures': 'RBP'})
def rank_biased_precision(ctx, pairs):
    """Rank-biased precision: ``(1 - p) * sum_i g_i * p^(i-1)``.

    Pair parameters: ``p`` (persistence, default 0.9) and optional ``level=gain``
    pairs. Gains come from the gain table and, when any lies outside [0, 1], are
    rescaled to ``(g - min) / (max - min)`` over the query's table (graded labels 0..3
    become label / 3); documents without a table entry (unjudged) keep gain 0.
    ``p^(i-1)`` is a running product. Ignores ``relevance_level``.

    trec_eval 10 reads uninitialised memory for min/max here, so its printed rbp can
    depend on the other measures requested; this is the intended rule, which it
    prints under ``-m rbp`` and ``-m all_trec``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 3, "b": 1, "c": 0, "d": 2}}
    >>> run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    >>> round(irm.evaluate(qrels, run, ["rbp"]).aggregate()["rbp"], 4)
    0.1786
    """
    p = persistence(pairs)
    v = ctx.view
    g = gains_for(v, pairs)
    lo, hi = g.table_min[v.seg], g.table_max[v.seg]
    rescale = g.entry_in_table & ((lo < 0) | (hi > 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = np.where(rescale, (g.entry_gain - lo) / (hi - lo), g.entry_gain)
    powers = running_powers(p, int(v.num_ret.max(initial=0)))
    terms = np.where(gain != 0, gain * powers[v.rank - 1], 0.0)
    return columns((1.0 - p) * v.sum(terms))
