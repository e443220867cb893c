"""Recall at cutoffs."""

from __future__ import annotations

from .context import columns, safe_div
from .params import LongCutoffs
from .precision import STANDARD_CUTOFFS
from .registry import measure


@measure("recall", order=14, params=LongCutoffs(STANDARD_CUTOFFS), groups="T",
         friendly="R", friendly_cutoff=True, friendly_aliases=("Recall",),
         aliases={'ir_measures': 'R@k', 'ranx': 'recall@k',
                  'torchmetrics': 'RetrievalRecall(top_k=k)'})
def recall(ctx, cutoffs):
    """IR recall at k: ``relat(k) / R``, 0 when R = 0.

    Not the metric-learning "Recall@k" (a hit indicator): see ``success``.
    """
    v = ctx.view
    return columns(*(safe_div(v.relat(k), v.num_rel) for k in cutoffs))
