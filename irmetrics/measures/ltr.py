"""Learning-to-rank measures as pytorchltr 0.2.1 defines them: ARP, DCG and nDCG
with exponential gain.

Labels are the judged grades ``y = max(code, 0)`` (unjudged and negative labels
count 0). The ideal ranking comes from the qrels (``rel_hist``): every judged
label, sorted descending. With a closed-world input (pytorchltr's padded
batches through :func:`irmetrics.compat.pytorchltr.generate_pytrec_eval` or an
adapter) that is the ideal of the list itself. The padded-batch quirks of the
original (per-rank outputs, padding relevance still counted by ``dcg``, random
tie-breaking) live in :mod:`irmetrics.compat.pytorchltr`.
"""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from ..engine.gains import log2_discount
from .context import columns, safe_div
from .dcg import gains_for, ideal_ranks
from .params import LongCutoffs
from .precision import STANDARD_CUTOFFS
from .registry import measure


def exp_gain(label) -> np.ndarray:
    """pytorchltr's exponential gain ``2^y - 1`` (``inf`` from label 1024 on, as in
    pytorchltr's floating point)."""
    with np.errstate(over="ignore"):
        return np.exp2(np.asarray(label, dtype=np.float64)) - 1.0


def graded_labels(view) -> np.ndarray:
    """Judged grade of every ranked entry; unjudged (-1) and negative labels (-2) are 0."""
    return np.maximum(view.code, 0)


def arp_values(view) -> np.ndarray:
    """``ARP = sum_i i * y_i / sum_i y_i`` over the ranking; 0 when ``sum y = 0``."""
    y = graded_labels(view).astype(np.float64)
    return safe_div(view.sum(view.rank * y), view.sum(y))


def exp_dcg_running(view) -> np.ndarray:
    """Per-entry running ``sum_{j <= i} (2^{y_j} - 1) / log2(j + 1)`` (sequential), cached."""
    key = ("exp_dcg_running",)
    if key not in view.cache:
        terms = exp_gain(graded_labels(view)) / log2_discount(view.rank)
        view.cache[key] = sg.seg_cumsum(terms, view.offsets)
    return view.cache[key]


def exp_ideal_running(view):
    """``(running ideal DCG, ideal offsets)`` with exponential gains, from ``rel_hist``."""
    key = ("exp_ideal_running",)
    if key not in view.cache:
        g = gains_for(view)  # default gain table: gain = label, positives only, descending
        terms = exp_gain(g.ideal_gain) / log2_discount(ideal_ranks(g))
        view.cache[key] = (sg.seg_cumsum(terms, g.ideal_offsets), g.ideal_offsets)
    return view.cache[key]


def exp_dcg_values(view, k=None) -> np.ndarray:
    """``DCG@k`` with gain ``2^y - 1``; ``k=None`` means the whole ranking."""
    k = view.num_ret if k is None else k
    return sg.at_rank(exp_dcg_running(view), view.offsets, k, fill=0.0)


def exp_ndcg_values(view, k=None) -> np.ndarray:
    """``DCG@k / IDCG@k`` with gain ``2^y - 1``; 0 when ``IDCG@k = 0``."""
    running, offsets = exp_ideal_running(view)
    ideal_k = np.diff(offsets) if k is None else k
    idcg = sg.at_rank(running, offsets, ideal_k, fill=0.0)
    return safe_div(exp_dcg_values(view, k), idcg)


@measure("ltr_arp", order=110, pytrec_eval=False, friendly="LTR_ARP")
def average_relevant_position(ctx, params):
    """Average relevant position (pytorchltr 0.2.1 ``arp``): ``sum_i i * y_i / sum_i y_i``.

    Ranks are 1-based and graded labels weight them. Lower is better. The sum runs
    over the ranking; a ranking without a positive label scores 0 (pytorchltr
    replaces the zero denominator by 1). Ignores ``relevance_level``. Friendly name
    ``LTR_ARP``.

    Examples
    --------
    pytorchltr's seed batch: scores ``[1.0, 0.0, 1.5]`` / labels ``[0, 1, 0]`` and
    ``[1.5, 0.2, 0.5]`` / ``[0, 1, 1]`` give ``[3.0, 2.5]``.

    >>> import irmetrics as irm
    >>> qrels = {"q0": {"d0": 0, "d1": 1, "d2": 0}, "q1": {"d0": 0, "d1": 1, "d2": 1}}
    >>> run = {"q0": {"d0": 1.0, "d1": 0.0, "d2": 1.5}, "q1": {"d0": 1.5, "d1": 0.2, "d2": 0.5}}
    >>> irm.evaluate(qrels, run, ["LTR_ARP"]).to_dict()
    {'q0': {'LTR_ARP': 3.0}, 'q1': {'LTR_ARP': 2.5}}
    """
    return columns(arp_values(ctx.view))


@measure("ltr_dcg", order=111, pytrec_eval=False, friendly="LTR_DCG")
def exp_dcg(ctx, params):
    """DCG with exponential gain (pytorchltr 0.2.1 ``dcg(exp=True)`` at the last rank).

    ``DCG = sum_i (2^{y_i} - 1) / log2(i + 1)`` over the whole ranking. trec_eval's
    ``ndcg`` family uses the linear gain ``y_i``; the two agree on binary labels.
    Friendly name ``LTR_DCG``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["LTR_DCG"])
    >>> round(res.aggregate()["LTR_DCG"], 6)   # 3/log2(2) + 1/log2(3)
    3.63093
    """
    return columns(exp_dcg_values(ctx.view))


@measure("ltr_dcg_cut", order=112, params=LongCutoffs(STANDARD_CUTOFFS), pytrec_eval=False,
         friendly="LTR_DCG", friendly_cutoff=True)
def exp_dcg_at_cutoffs(ctx, cutoffs):
    """DCG@k with exponential gain (pytorchltr ``dcg(k=k)``); k beyond the ranking = full DCG.

    Friendly name ``LTR_DCG@k``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["LTR_DCG@1"])
    >>> res.aggregate()["LTR_DCG@1"]
    3.0
    """
    return columns(*(exp_dcg_values(ctx.view, k) for k in cutoffs))


@measure("ltr_ndcg", order=113, pytrec_eval=False, friendly="LTR_nDCG")
def exp_ndcg(ctx, params):
    """nDCG with exponential gain (pytorchltr 0.2.1 ``ndcg(exp=True)`` at the last rank).

    ``nDCG = DCG / IDCG`` with gain ``2^y - 1`` and discount ``1 / log2(i + 1)``; the
    ideal sorts every judged label of the query descending. ``IDCG = 0`` gives 0.
    On binary labels it equals trec_eval ``ndcg``; on graded labels it does not
    (pytrec_eval 0.64132 vs 0.57571 on labels ``[3, 0, 2, 1]``). Friendly name
    ``LTR_nDCG``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"d0": 3, "d1": 0, "d2": 2, "d3": 1}}
    >>> run = {"q": {"d0": 0.1, "d1": 0.9, "d2": 0.5, "d3": 0.3}}
    >>> res = irm.evaluate(qrels, run, ["LTR_nDCG", "ndcg"]).aggregate()
    >>> round(res["LTR_nDCG"], 5), round(res["ndcg"], 5)
    (0.57571, 0.64132)
    """
    return columns(exp_ndcg_values(ctx.view))


@measure("ltr_ndcg_cut", order=114, params=LongCutoffs(STANDARD_CUTOFFS), pytrec_eval=False,
         friendly="LTR_nDCG", friendly_cutoff=True)
def exp_ndcg_at_cutoffs(ctx, cutoffs):
    """nDCG@k with exponential gain (pytorchltr ``ndcg(k=k)``): ``DCG@k / IDCG@k``, 0 if IDCG@k = 0.

    Friendly name ``LTR_nDCG@k``.

    Examples
    --------
    pytorchltr's seed example ``ndcg(scores, relevance, n, k=10)`` is ``[0.5, 0.6934]``.

    >>> import irmetrics as irm
    >>> qrels = {"q0": {"d0": 0, "d1": 1, "d2": 0}, "q1": {"d0": 0, "d1": 1, "d2": 1}}
    >>> run = {"q0": {"d0": 1.0, "d1": 0.0, "d2": 1.5}, "q1": {"d0": 1.5, "d1": 0.2, "d2": 0.5}}
    >>> irm.evaluate(qrels, run, ["LTR_nDCG@10"]).values("LTR_nDCG@10").round(4).tolist()
    [0.5, 0.6934]
    """
    return columns(*(exp_ndcg_values(ctx.view, k) for k in cutoffs))
