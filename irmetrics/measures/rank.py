"""Rank of the first relevant document."""

from __future__ import annotations

from .context import columns, safe_div
from .registry import measure


@measure("recip_rank", order=10, groups="O T", friendly="RR", friendly_aliases=("MRR",),
         aliases={'ir_measures': 'RR', 'ranx': 'mrr', 'torchmetrics': 'RetrievalMRR'})
def reciprocal_rank(ctx, params):
    """Reciprocal rank: ``1 / rank`` of the first relevant document, 0 if none."""
    v = ctx.view
    return columns(safe_div(1.0, v.first_rel_rank))
