"""Precision-style measures: P, Rprec, success, relative_P."""

from __future__ import annotations

import numpy as np

from .context import columns, safe_div
from .params import LongCutoffs
from .registry import measure

STANDARD_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@measure("P", order=12, params=LongCutoffs(STANDARD_CUTOFFS), groups="O T",
         friendly="P", friendly_cutoff=True)
def precision(ctx, cutoffs):
    """Precision at cutoff k: ``P@k = relat(k) / k``.

    Positions beyond the ranking count as non-relevant (the denominator stays k);
    unjudged documents are non-relevant. trec_eval name ``P.k`` (``P_k``), ir_measures
    ``P@k``, ranx ``precision@k``.
    """
    v = ctx.view
    return columns(*(v.relat(k) / k for k in cutoffs))


@measure("Rprec", order=8, groups="O T", friendly="Rprec")
def r_precision(ctx, params):
    """Precision at rank R: ``relat(min(n, R)) / R``, 0 when ``min(n, R) = 0``.

    The denominator is R even when fewer than R documents were retrieved.
    """
    v = ctx.view
    return columns(safe_div(v.relat(np.minimum(v.num_ret, v.num_rel)), v.num_rel))


@measure("success", order=30, params=LongCutoffs((1, 5, 10)), groups="T",
         friendly="Success", friendly_cutoff=True)
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
