"""Measures for incomplete judgments: infAP, unj, rbp_resid.

They tell apart the two kinds of unjudged documents (docs/reference/trec_eval.md §3.3): code -1, not in
the qrels at all ("not in pool"), and code -2, in the qrels with a negative label
("in the sampled pool but not judged").
"""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from ..engine.ranked import POOL_UNJUDGED
from .context import columns, safe_div
from .gain_based import persistence, running_powers
from .params import LongCutoffs, PairParams
from .registry import RESET_ALWAYS, RESET_UNPARAMETERISED, measure

#: Smoothing constant of infAP's precision estimate (trec_eval's INFAP_EPSILON).
INFAP_EPSILON = 0.00001


@measure("infAP", order=15, groups="T", friendly="infAP",
         aliases={'ir_measures': 'infAP'})
def inferred_average_precision(ctx, params):
    """Inferred AP (Yilmaz & Aslam) for sampled judgments.

    At each judged relevant document at 0-based position ``j > 0`` it adds the expected
    precision ``1/(j+1) + (j/(j+1)) * ((r-1 + nr + u) / j) * ((r-1 + eps) / (r-1 + nr + 2 eps))``,
    where r, nr and u count the relevant, judged non-relevant and pool-unjudged (code -2)
    documents up to and including j and ``eps = 1e-5``; a relevant document at j = 0 adds 1.
    Documents not in the qrels (code -1) only occupy positions. The sum, in rank order,
    is divided by R (0 when R = 0). Without code -2 documents infAP equals AP up to eps.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    >>> run = {"q": {"u1": 9.0, "a": 8.0, "u2": 7.0, "b": 6.0, "c": 5.0}}
    >>> round(irm.evaluate(qrels, run, ["infAP"]).aggregate()["infAP"], 4)
    0.45
    """
    v = ctx.view
    code, offsets = v.code, v.offsets
    judged = code >= 0
    rel = judged & v.is_rel
    nonrel = judged & ~v.is_rel
    rel_so_far = sg.seg_cumcount(rel, offsets)
    nonrel_so_far = sg.seg_cumcount(nonrel, offsets)
    unjudged_so_far = sg.seg_cumcount(code == POOL_UNJUDGED, offsets)
    j = (v.rank - 1).astype(np.float64)
    prev_rel = rel_so_far - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        term = (1.0 / (j + 1.0)
                + (j / (j + 1.0))
                * ((prev_rel + nonrel_so_far + unjudged_so_far) / j)
                * ((prev_rel + INFAP_EPSILON) / ((prev_rel + nonrel_so_far) + 2 * INFAP_EPSILON)))
    term = np.where(j == 0, 1.0, term)
    return columns(safe_div(v.sum(np.where(rel, term, 0.0)), v.num_rel))


@measure("unj", order=57, params=LongCutoffs((5, 10, 20)), groups="T", pytrec_eval=False,
         complete_reset=RESET_ALWAYS)
def unjudged_at_cutoffs(ctx, cutoffs):
    """Fraction of the top k that is unjudged (code -1 or -2): ``count / k``.

    Positions beyond the ranking count as judged; the denominator stays k (unlike a
    "Judged@k" that divides by ``min(k, n)``). With ``judged_only`` it is always 0;
    ``complete=True`` resets it to 0 on placeholder queries. Default cutoffs 5, 10, 20.
    """
    v = ctx.view
    unjudged = sg.seg_cumcount(v.code < 0, v.offsets)
    return columns(*(sg.at_rank(unjudged, v.offsets, k) / k for k in cutoffs))


@measure("rbp_resid", order=56, params=PairParams(), groups="T", pytrec_eval=False,
         complete_reset=RESET_UNPARAMETERISED)
def rbp_residual(ctx, pairs):
    """RBP residual: the rank-biased weight not backed by judgments.

    ``p^n + (1 - p) * sum_{i: r_i < 0} p^(i-1)`` when the ranking holds an unjudged
    document (code -1 or -2), else 0 (even though the tail beyond n exists). Pair
    parameter ``p`` (persistence, default 0.9); ``p^i`` is a running product.
    """
    p = persistence(pairs)
    v = ctx.view
    powers = running_powers(p, int(v.num_ret.max(initial=0)))
    unjudged = v.code < 0
    weight = v.sum(np.where(unjudged, powers[v.rank - 1], 0.0))
    value = powers[v.num_ret] + (1 - p) * weight
    return columns(np.where(v.count(unjudged) > 0, value, 0.0))

