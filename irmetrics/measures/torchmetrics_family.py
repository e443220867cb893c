"""torchmetrics-style retrieval measures that trec_eval lacks: fall-out@k.

The rest of torchmetrics' retrieval family maps onto measures that already
exist (hit rate = ``success``, MRR = ``recip_rank``, R-precision = ``Rprec`` on a
complete candidate list) or needs the scores themselves (tie-averaged nDCG,
AUROC, the pred <= 0 filter); those are computed by
:mod:`irmetrics.compat.torchmetrics` from its arrays.
"""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from .context import columns, safe_div
from .params import LongCutoffs
from .precision import STANDARD_CUTOFFS
from .registry import measure


def fall_out_values(view, k=None) -> np.ndarray:
    """``(judged non-relevant items in the top k) / NR``; 0 when ``NR = 0``.

    NR is the number of judged non-relevant items of the query (qrels labels in
    ``[0, relevance_level)``); ``k=None`` means the whole ranking.
    """
    key = ("judged_nonrel_running",)
    if key not in view.cache:
        nonrel = (view.code >= 0) & ~view.is_rel
        view.cache[key] = sg.seg_cumcount(nonrel, view.offsets)
    k = view.num_ret if k is None else k
    return safe_div(sg.at_rank(view.cache[key], view.offsets, k), view.num_nonrel)


@measure("tm_fall_out", order=120, params=LongCutoffs(STANDARD_CUTOFFS), pytrec_eval=False,
         friendly="TM_FallOut", friendly_cutoff=True)
def fall_out(ctx, cutoffs):
    """Fall-out@k (torchmetrics 1.9.0 ``retrieval_fall_out``): share of non-relevant items retrieved.

    ``fall_out@k = |judged non-relevant in the top k| / NR`` where NR is the number
    of judged non-relevant items of the query. Lower is better. ``NR = 0`` gives 0
    (the functional form; ``RetrievalFallOut``'s default ``empty_target_action='pos'``
    counts such queries as 1, see :class:`irmetrics.compat.torchmetrics.RetrievalFallOut`).
    A closed-world input (every candidate judged, as torchmetrics' groups are) makes
    NR the number of negatives of the group. Friendly name ``TM_FallOut@k``.

    Examples
    --------
    torchmetrics' module example: two queries, ``top_k=2``, 0.5 each.

    >>> import irmetrics as irm
    >>> qrels = {"0": {"a": 0, "b": 0, "c": 1}, "1": {"a": 0, "b": 1, "c": 0, "d": 1}}
    >>> run = {"0": {"a": 0.2, "b": 0.3, "c": 0.5}, "1": {"a": 0.1, "b": 0.3, "c": 0.5, "d": 0.2}}
    >>> irm.evaluate(qrels, run, ["TM_FallOut@2"]).to_dict()
    {'0': {'TM_FallOut@2': 0.5}, '1': {'TM_FallOut@2': 0.5}}
    """
    return columns(*(fall_out_values(ctx.view, k) for k in cutoffs))
