"""Average-precision family: map, gm_map, map_cut, bpref, gm_bpref, yaap."""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from ..engine.libm import libm_log
from .context import columns, safe_div
from .params import LongCutoffs
from .precision import STANDARD_CUTOFFS
from .registry import GEOMETRIC, HIDDEN, measure

#: trec_eval's floor for geometric means (``MIN_GEO_MEAN``).
GEO_FLOOR = 1e-5


def precision_sum(view) -> np.ndarray:
    """AP's numerator ``S = sum_{i: rel(i)} relat(i) / i``, added in rank order."""
    cache = view.cache
    if "precision_sum" not in cache:
        # Over relevant entries only: the same additions in rank order, minus the zeros.
        seg, rank, ordinal = view.relevant
        cache["precision_sum"] = np.bincount(seg, weights=ordinal / rank,
                                             minlength=view.n_queries).astype(np.float64)
    return cache["precision_sum"]


def average_precision_values(view) -> np.ndarray:
    """``AP = (sum over relevant ranks i of relat(i) / i) / R``, 0 when R = 0."""
    return safe_div(precision_sum(view), view.num_rel)


def geometric_log(values: np.ndarray) -> np.ndarray:
    """Per-query contribution to a geometric mean: ``ln(max(v, 1e-5))`` (libm log)."""
    return libm_log(np.maximum(values, GEO_FLOOR))


@measure("map", order=6, groups="O T", friendly="AP", friendly_aliases=("MAP",),
         aliases={'ir_measures': 'AP', 'ranx': 'map', 'torchmetrics': 'RetrievalMAP'})
def mean_average_precision(ctx, params):
    """Average precision: ``AP = (sum_{i: rel(i)} relat(i) / i) / R``.

    Relevant documents that were not retrieved contribute 0; unjudged documents
    occupy ranks and are non-relevant. The sum runs in rank order and is divided
    once by R. R = 0 gives 0. trec_eval ``map``, ir_measures ``AP``, ranx ``map``.
    """
    return columns(average_precision_values(ctx.view))


@measure("gm_map", order=7, printed=HIDDEN, summary=GEOMETRIC, groups="O T", friendly="GMAP")
def geometric_mean_average_precision(ctx, params):
    """Geometric mean of AP: per query ``ln(max(AP, 1e-5))``; summary ``exp(mean)``.

    Per-query values are the logarithms, as pytrec_eval returns them.
    """
    return columns(geometric_log(average_precision_values(ctx.view)))


@measure("map_cut", order=28, params=LongCutoffs(STANDARD_CUTOFFS), groups="T",
         friendly="AP", friendly_cutoff=True, friendly_aliases=("MAP",),
         aliases={'ir_measures': 'AP@k', 'ranx': 'map@k'})
def average_precision_at_cutoffs(ctx, cutoffs):
    """AP cut at k: ``(sum_{i <= min(k, n), rel(i)} relat(i) / i) / R``.

    The denominator is always the full R (not ``min(k, R)``); R = 0 gives 0.
    """
    v = ctx.view
    running = v.running_precision_sum
    return columns(*(safe_div(sg.at_rank(running, v.offsets, k, fill=0.0), v.num_rel)
                     for k in cutoffs))


def bpref_values(view) -> np.ndarray:
    """bpref with trec_eval 8+'s ``min(NR, R)`` denominator."""
    judged = view.code >= 0
    nonrel = judged & ~view.is_rel
    rel = judged & view.is_rel
    nonrel_above = sg.seg_cumcount(nonrel, view.offsets)
    seg = view.seg
    r = view.num_rel[seg]
    denom = np.minimum(view.num_nonrel, view.num_rel)[seg]
    with np.errstate(divide="ignore", invalid="ignore"):
        penalty = np.minimum(nonrel_above, r) / denom
    term = np.where(nonrel_above > 0, 1.0 - penalty, 1.0)
    return safe_div(view.sum(np.where(rel, term, 0.0)), view.num_rel)


@measure("bpref", order=9, groups="O T", friendly="Bpref",
         aliases={'ir_measures': 'Bpref', 'ranx': 'bpref'})
def bpref(ctx, params):
    """Binary preference: for each retrieved relevant document, ``1 - min(nr, R) / min(NR, R)``.

    ``nr`` is the number of judged non-relevant documents ranked above it (unjudged
    documents are skipped), NR the number of judged non-relevant documents of the
    query; the sum is divided by R. R = 0 gives 0.
    """
    return columns(bpref_values(ctx.view))


@measure("gm_bpref", order=16, printed=HIDDEN, summary=GEOMETRIC, groups="T")
def geometric_mean_bpref(ctx, params):
    """Geometric mean of bpref: per query ``ln(max(bpref, 1e-5))``; summary ``exp(mean)``."""
    return columns(geometric_log(bpref_values(ctx.view)))


@measure("yaap", order=54, pytrec_eval=False)
def yet_another_average_precision(ctx, params):
    """Robertson's "yet another AP": ``ln((1 + S) / (1 + R - S))``.

    ``S = sum_{i: rel(i)} relat(i) / i`` is AP's numerator (the sum in rank order), R
    the number of relevant documents. R = 0 gives ``ln 1 = 0``; a query with nothing
    relevant retrieved gives ``ln(1 / (1 + R)) < 0``, and ``complete=True`` does not
    reset it. Not in any trec_eval group; not supported by pytrec_eval.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "x": 1.0}}, ["yaap"])
    >>> round(res.aggregate()["yaap"], 4)   # S = 1, R = 2: ln(2 / 2)
    0.0
    """
    v = ctx.view
    s = precision_sum(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (1.0 + s) / (1.0 + v.num_rel.astype(np.float64) - s)
    return columns(libm_log(ratio))
