"""Precision-style measures: P, Rprec, success, relative_P, Rprec_mult."""

from __future__ import annotations

import numpy as np

from .context import columns, safe_div
from .params import DoubleCutoffs, LongCutoffs
from .registry import measure

STANDARD_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@measure("P", order=12, params=LongCutoffs(STANDARD_CUTOFFS), groups="O T",
         friendly="P", friendly_cutoff=True, friendly_aliases=("Precision",),
         aliases={'ir_measures': 'P@k', 'ranx': 'precision@k',
                  'torchmetrics': 'RetrievalPrecision(top_k=k)'})
def precision(ctx, cutoffs):
    """Precision at cutoff k: ``P@k = relat(k) / k``.

    Positions beyond the ranking count as non-relevant (the denominator stays k);
    unjudged documents are non-relevant. trec_eval name ``P.k`` (``P_k``), ir_measures
    ``P@k``, ranx ``precision@k``.
    """
    v = ctx.view
    return columns(*(v.relat(k) / k for k in cutoffs))


@measure("Rprec", order=8, groups="O T", friendly="Rprec",
         aliases={'ir_measures': 'Rprec', 'ranx': 'r-precision',
                  'torchmetrics': 'RetrievalRPrecision'})
def r_precision(ctx, params):
    """Precision at rank R: ``relat(min(n, R)) / R``, 0 when ``min(n, R) = 0``.

    The denominator is R even when fewer than R documents were retrieved.
    """
    v = ctx.view
    return columns(safe_div(v.relat(np.minimum(v.num_ret, v.num_rel)), v.num_rel))


@measure("success", order=30, params=LongCutoffs((1, 5, 10)), groups="T",
         friendly="Success", friendly_cutoff=True,
         aliases={'ir_measures': 'Success@k', 'ranx': 'hit_rate@k',
                  'torchmetrics': 'RetrievalHitRate(top_k=k)'})
def success(ctx, cutoffs):
    """Success at k: 1 if a relevant document is in the top k, else 0."""
    v = ctx.view
    return columns(*((v.relat(k) > 0) for k in cutoffs))


@measure("relative_P", order=29, params=LongCutoffs(STANDARD_CUTOFFS), groups="T",
         friendly="RelP", friendly_cutoff=True)
def relative_precision(ctx, cutoffs):
    """Relative precision at k: ``relat(k) / min(k, R)``, 0 when R = 0."""
    v = ctx.view
    return columns(*(safe_div(v.relat(k), np.minimum(k, v.num_rel)) for k in cutoffs))


R_MULTIPLIERS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


@measure("Rprec_mult", order=17, params=DoubleCutoffs(R_MULTIPLIERS), groups="T")
def precision_at_r_multiples(ctx, multipliers):
    """Precision at multiples of R: ``P@c`` with ``c = trunc(x * R + 0.9)``.

    Plain (not interpolated) precision at cutoff c: ``relat(c) / c``; a cutoff beyond
    the ranking gives ``num_rel_ret / c``; ``c <= 0`` (for example R = 0) gives 0. The
    cutoff truncates ``x * R + 0.9`` in both trec_eval 9 and 10.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 1}}
    >>> res = irm.evaluate(qrels, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["Rprec_mult.0.5,1.5"])
    >>> res.aggregate()   # cutoffs trunc(1.9) = 1 and trunc(3.9) = 3
    {'Rprec_mult_0.50': 1.0, 'Rprec_mult_1.50': 0.6666666666666666}
    """
    v = ctx.view
    # trec_eval counts down from num_rel_ret at every rel(i) below c; that is relat(c)
    # except for relevance levels below 0, where rel(i) also holds for unjudged documents.
    extra = v.count(v.is_rel) - v.num_rel_ret
    out = []
    for x in multipliers:
        c = np.trunc(x * v.num_rel.astype(np.float64) + 0.9).astype(np.int64)
        hits = np.where(c > v.num_ret, v.num_rel_ret, np.maximum(v.relat(c) - extra, 0))
        out.append(safe_div(hits, c))
    return columns(*out)
