"""ranx's nDCG with exponential gains (``ndcg_burges``), as ir_measures 0.4.3 runs it.

ir_measures sends ``nDCG(dcg='exp-log2')`` without a cutoff to ranx (its only provider
for it), and its ranx provider computes ``nDCG(dcg='exp-log2')@k`` with ranx too.
ranx (Bassani, ECIR 2022; version 0.3) follows Burges et al. (2005): gain ``2^g - 1`` of
a document labelled ``g >= 1`` (lower labels and unjudged documents give 0), discount
``log2(i + 1)``, terms added in rank order. Unlike gdeval's ``nDCG(dcg='exp-log2')@k``
no label is too high and the discount is base 2, so the two agree to rounding on labels
up to 4. Ties: irmetrics' order (score descending, doc id descending); ranx's own order
of tied scores is that of numba's quicksort, which no other tool reproduces.
"""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from ..engine.gains import log2_discount
from .context import columns, safe_div
from .dcg import ideal_sequence
from .params import LongCutoffs, NoParams, Option
from .precision import STANDARD_CUTOFFS
from .registry import RESET_ALWAYS, measure

_SOURCE = "ranx 0.3 (ndcg_burges), as run by ir_measures 0.4.3"
_EXP = Option(str, choices=("exp-log2",), required=True, doc="exponential gains 2^g - 1 (ranx)")
_COUSIN = ("trec_eval's ndcg uses the label itself as gain; gdeval's nDCG(dcg='exp-log2')@k"
           " has the same gains with a natural-log discount and labels <= 4.")
#: The largest cutoff: ``nDCG(dcg='exp-log2')`` without one is the whole ranking.
_WHOLE = np.iinfo(np.int64).max


def burges_running(offsets, labels, depth):
    """``(offsets, running DCG)`` over the first ``depth`` entries:
    ``sum (2^g - 1) / log2(i + 1)``, added in rank order."""
    offsets, top = sg.truncate(offsets, depth)
    with np.errstate(over="ignore"):  # a huge label's gain is inf, as in ranx (then NaN)
        gains = np.exp2(np.maximum(labels[top], 0).astype(np.float64)) - 1.0
    return offsets, sg.seg_cumsum(gains / log2_discount(sg.ranks(offsets)), offsets)


def _ndcg_burges(ctx, cutoffs):
    """ranx's nDCG at each cutoff: DCG@k over ``IDCG@k``, the ideal being the query's
    positive labels descending; 0 when it has none."""
    v = ctx.view
    depth = max(cutoffs)
    offsets, running = burges_running(v.offsets, np.where(v.code > 0, v.code, 0), depth)
    ideal_offsets, ideal = burges_running(*ideal_sequence(v), depth)
    return columns(*(safe_div(sg.at_rank(running, offsets, k, fill=0.0),
                              sg.at_rank(ideal, ideal_offsets, k, fill=0.0))
                     for k in cutoffs))


@measure("ndcg_burges", order=66, params=NoParams(), pytrec_eval=False, friendly="nDCG",
         options={"dcg": _EXP}, complete_reset=RESET_ALWAYS,
         aliases={"ir_measures": "nDCG(dcg='exp-log2')", "ranx": "ndcg_burges"},
         source=_SOURCE, ir_measures_provider="ranx", cousin=_COUSIN)
def ndcg_burges(ctx, params):
    """nDCG of the whole ranking with exponential gains, ranx's ``ndcg_burges``
    (ir_measures' ``nDCG(dcg='exp-log2')`` without a cutoff).

    ``DCG = sum_i (2^g_i - 1) / log2(i + 1)`` with ``g_i`` the label of the document at
    rank i when it is at least 1 (else 0), divided by the same sum over the query's
    positive labels sorted descending; 0 when the query has none. Ignores
    ``relevance_level`` and ``judged_only``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"1": {"a": 2, "b": 1}}
    >>> run = {"1": {"b": 2.0, "a": 1.0}}
    >>> res = irm.evaluate(qrels, run, ["nDCG(dcg='exp-log2')"]).aggregate()
    >>> round(res["nDCG(dcg='exp-log2')"], 5)   # (1 + 3/log2(3)) / (3 + 1/log2(3))
    0.79671
    """
    return _ndcg_burges(ctx, (_WHOLE,))


@measure("ndcg_burges_cut", order=67, params=LongCutoffs(STANDARD_CUTOFFS), pytrec_eval=False,
         friendly="nDCG", friendly_cutoff=True,
         options={"dcg": _EXP, "model": Option(str, choices=("ranx",), required=True,
                                               doc="ranx's definition, not gdeval's")},
         complete_reset=RESET_ALWAYS, aliases={"ranx": "ndcg_burges@k"}, source=_SOURCE,
         ir_measures_provider="ranx", cousin=_COUSIN)
def ndcg_burges_at_cutoffs(ctx, cutoffs):
    """ranx's ``ndcg_burges@k``: ``nDCG(dcg='exp-log2')`` cut at k, DCG and ideal alike
    (``ir_measures.ranx``'s ``nDCG(dcg='exp-log2')@k``; plain ``nDCG(dcg='exp-log2')@k``
    is gdeval's).

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"1": {"a": 2, "b": 1}}
    >>> run = {"1": {"b": 2.0, "a": 1.0}}
    >>> res = irm.evaluate(qrels, run, ["nDCG(dcg='exp-log2', model='ranx')@1"])
    >>> res.aggregate()["nDCG(dcg='exp-log2', model='ranx')@1"]   # 1 / 3
    0.3333333333333333
    """
    return _ndcg_burges(ctx, cutoffs)
