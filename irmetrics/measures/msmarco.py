"""MS MARCO's reciprocal rank with a cutoff: RR@k (MRR@10 averaged over queries)."""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from ..exceptions import ParameterError
from .context import columns, safe_div
from .params import LongCutoffs, Option
from .registry import RESET_ALWAYS, measure


@measure("recip_rank_cut", order=65, params=LongCutoffs((10,)), pytrec_eval=False,
         friendly="RR", friendly_cutoff=True, friendly_aliases=("MRR",),
         complete_reset=RESET_ALWAYS,
         options={"rel": Option(int, doc="minimum label counted as relevant")},
         aliases={"ir_measures": "RR@k (MRR@k)"},
         ir_measures_provider="msmarco", ir_measures_ties="doc_id_ascending",
         source="MS MARCO's msmarco_eval.py, as run by ir_measures 0.4.3",
         cousin="trec_eval's recip_rank has no cutoff; RR@k is recip_rank with a first"
                " relevant document beyond rank k counting as none.")
def reciprocal_rank_at_cutoffs(ctx, cutoffs):
    """Reciprocal rank at k: ``1 / rank`` of the first relevant document if that rank is
    at most k, else 0 (``RR@10`` is MS MARCO's MRR@10 per query; ``MRR@k`` is an alias).

    Relevant means judged with a label ``>= rel`` (default 1); ``rel`` must be ``>= 0``
    (negative labels are not kept per document). Ties: irmetrics ranks by score
    descending, ties by doc id descending (trec_eval); ir_measures' msmarco provider
    breaks ties by doc id ascending, which ``irmetrics.compat.ir_measures`` reproduces.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"1": {"a": 1}}
    >>> run = {"1": {"x": 3.0, "y": 2.0, "a": 1.0}}
    >>> irm.evaluate(qrels, run, ["RR@3", "RR@2", "MRR@3"]).aggregate()
    {'RR@3': 0.3333333333333333, 'RR@2': 0.0, 'MRR@3': 0.3333333333333333}
    """
    v = ctx.view
    if v.level < 0:
        raise ParameterError(f"`rel` of RR@k must be >= 0; got {v.level!r}.")
    first = sg.seg_first(v.is_rel & (v.code >= 0), v.offsets)
    return columns(*(safe_div(1.0, np.where(first <= k, first, 0)) for k in cutoffs))
