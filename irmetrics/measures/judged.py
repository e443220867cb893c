"""Judgment rate: the share of the top k that has a qrels line (ir_measures' Judged)."""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from ..engine.ranked import NOT_IN_POOL
from .context import columns, safe_div
from .params import LongCutoffs
from .registry import RESET_ALWAYS, measure

_SOURCE = "ir_measures 0.4.3 (its own `judged` provider, from OpenNIR)"
_COUSIN = ("trec_eval's unj@k counts the unjudged share but divides by k (positions beyond"
           " the ranking count as judged); Judged@k divides by min(k, n), and a document"
           " with a negative label counts as judged.")
#: The judged share ignores relevance; judged_only would make it 1 by construction.
_NO_OPTIONS: dict = {}


@measure("judged_cut", order=63, params=LongCutoffs((10,)), pytrec_eval=False,
         friendly="Judged", friendly_cutoff=True, options=_NO_OPTIONS,
         complete_reset=RESET_ALWAYS, aliases={"ir_measures": "Judged@k"},
         ir_measures_provider="judged", ir_measures_ties="doc_id_ascending",
         source=_SOURCE, cousin=_COUSIN)
def judged_at_cutoffs(ctx, cutoffs):
    """Judgment rate at k: ``#{i <= min(k, n): doc i is in the qrels} / min(k, n)``.

    Any qrels line counts as a judgment, negative labels included; 0 for an empty
    ranking (ir_measures' provider divides by zero there). Ties decide which documents
    are in the top k: irmetrics ranks by score descending, ties by doc id descending
    (trec_eval); ir_measures' provider breaks ties by doc id ascending, which
    ``irmetrics.compat.ir_measures`` reproduces.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"1": {"a": 0, "b": -1}}
    >>> run = {"1": {"a": 3.0, "x": 2.0, "b": 1.0}}
    >>> irm.evaluate(qrels, run, ["Judged@2", "Judged@10"]).aggregate()
    {'Judged@2': 0.5, 'Judged@10': 0.6666666666666666}
    """
    v = ctx.view
    offsets, top = sg.truncate(v.offsets, max(cutoffs))  # only the top max(k) matter
    judged_so_far = sg.seg_cumcount(v.code[top] != NOT_IN_POOL, offsets)
    return columns(*(safe_div(sg.at_rank(judged_so_far, offsets, k),
                              np.minimum(k, v.num_ret)) for k in cutoffs))


@measure("judged", order=64, pytrec_eval=False, friendly="Judged", options=_NO_OPTIONS,
         complete_reset=RESET_ALWAYS, aliases={"ir_measures": "Judged"},
         ir_measures_provider="judged", ir_measures_ties="doc_id_ascending",
         source=_SOURCE, cousin=_COUSIN)
def judged_whole_ranking(ctx, params):
    """Judgment rate of the whole ranking: ``#{judged retrieved} / n`` (``Judged`` without
    a cutoff), 0 for an empty ranking."""
    v = ctx.view
    return columns(safe_div(v.count(v.code != NOT_IN_POOL), v.num_ret))
