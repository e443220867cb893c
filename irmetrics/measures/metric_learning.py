"""Metric-learning measures: OML cmc/precision/map@k, MAP@R, PML R-precision and
precision@1, metric-learning Recall@k, TF-Similarity binary nDCG@k.

All of them read a binary view: ``g_i = rel(i)`` is the relevance of the i-th
retrieved item and ``n_gt = R = num_rel`` the number of relevant items of the
query. With a closed-world input (every item of a gallery judged, as the
metric-learning adapters produce) ``R`` is the number of gallery items sharing
the query's label. Notation below: ``L`` is the list length (``num_ret``),
``h_i = relat(i)`` the number of relevant items in the top ``i`` and
``k' = min(k, L)``.

The value functions (``*_values``) are the single implementation; the registered
kernels and the drop-in modules in :mod:`irmetrics.compat` both call them.
None of these measures exists in trec_eval, so none is supported under
``semantics="pytrec_eval"``; see ``docs/metric_learning.md`` for how each
differs from its trec_eval cousin.
"""

from __future__ import annotations


import numpy as np

from ..engine import segments as sg
from ..engine.gains import log2_discount
from .context import columns, safe_div
from .params import FixedSuffix, LongCutoffs
from .registry import measure

#: Default cutoffs: OML's ``top_k=(5,)``; the Recall@k of deep metric learning papers.
OML_CUTOFFS = (5,)
RECALL_AT_K_CUTOFFS = (1, 2, 4, 8)
TFSIM_CUTOFFS = (5,)


# --------------------------------------------------------------------------- helpers

def _empty_list_rule(view, values: np.ndarray) -> np.ndarray:
    """OML's empty-list rule: ``L = 0`` scores 1 when ``n_gt = 0`` and 0 otherwise."""
    empty = view.num_ret == 0
    return np.where(empty, (view.num_rel == 0).astype(np.float64), values)


def _discount_cumsum(n: int) -> np.ndarray:
    """``[0, 1/log2(2), 1/log2(2) + 1/log2(3), ...]`` (length ``n + 1``), summed in order."""
    ranks = np.arange(1, n + 1)
    return np.concatenate(([0.0], np.cumsum(1.0 / log2_discount(ranks)))) if n else np.zeros(1)


# --------------------------------------------------------------------------- OML

def oml_cmc_values(view, k: int) -> np.ndarray:
    """OML cmc@k: 1 if any of the top k is relevant, else 0; empty lists by OML's rule.

    ``L = 0`` gives 1 when ``n_gt = 0`` and 0 otherwise; a non-empty list with
    ``n_gt = 0`` gives 0.
    """
    return _empty_list_rule(view, (view.relat(k) > 0).astype(np.float64))


def oml_precision_values(view, k: int) -> np.ndarray:
    """OML precision@k: ``h_{k'} / min(n_gt, k')``; NaN when ``n_gt = 0 < L``.

    The division is IEEE: ``0 / 0`` is NaN (OML's documented NaN rule) and a
    positive count over ``n_gt = 0`` (inconsistent input) is ``inf``.
    """
    kp = np.minimum(k, view.num_ret)
    den = np.minimum(view.num_rel, kp).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = view.relat(kp) / den
    return _empty_list_rule(view, values)


def oml_map_values(view, k: int) -> np.ndarray:
    """OML map@k: ``(1 / h_{k'}) * sum_{i <= k', g_i = 1} h_i / i``; 0 when ``h_{k'} = 0``."""
    kp = np.minimum(k, view.num_ret)
    # The summands h_i / i over the relevant entries only (a small share of long
    # rankings), added per query in rank order: the same sums as the running numerator.
    seg, rank, ordinal = view.relevant
    within = rank <= kp[seg]
    running = np.bincount(seg[within], weights=ordinal[within] / rank[within],
                          minlength=view.n_queries)
    return _empty_list_rule(view, safe_div(running, view.relat(kp)))


@measure("oml_cmc", order=100, params=LongCutoffs(OML_CUTOFFS), pytrec_eval=False,
         friendly="CMC", friendly_cutoff=True)
def oml_cmc(ctx, cutoffs):
    """OML cmc@k (open-metric-learning 4.0.0 ``calc_cmc``): a hit in the top k.

    ``cmc@k = 1`` if ``h_k > 0`` else 0. An empty ranking scores 1 when the query
    has no relevant item (``n_gt = 0``) and 0 otherwise; a non-empty ranking with
    ``n_gt = 0`` scores 0. Differs from ``success`` / ``ML_Recall@k`` only on empty
    rankings. Friendly name ``CMC@k``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    >>> run = {"q1": {"a": 0.1, "b": 0.9}, "q2": {"c": 1.0}}
    >>> irm.evaluate(qrels, run, ["CMC@1", "CMC@2"]).to_dict()
    {'q1': {'CMC@1': 0.0, 'CMC@2': 1.0}, 'q2': {'CMC@1': 1.0, 'CMC@2': 1.0}}
    """
    return columns(*(oml_cmc_values(ctx.view, k) for k in cutoffs))


@measure("oml_precision", order=101, params=LongCutoffs(OML_CUTOFFS), pytrec_eval=False,
         friendly="OML_P", friendly_cutoff=True)
def oml_precision(ctx, cutoffs):
    """OML precision@k (open-metric-learning 4.0.0 ``calc_precision``).

    ``precision@k = h_{k'} / min(n_gt, k')`` with ``k' = min(k, L)``: the
    denominator is capped by the number of relevant items, so an ideal ranking
    scores 1 even when ``n_gt < k``. A non-empty ranking of a query with
    ``n_gt = 0`` is NaN (0/0), and the NaN propagates to the mean, as in OML.
    Empty rankings: 1 if ``n_gt = 0`` else 0. Friendly name ``OML_P@k``.

    Examples
    --------
    OML's prose example, ``n_gt = 3`` and ``g = [1, 1, 1, 0, 0]``: 1 at every k.

    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    >>> run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "x": 2.0, "y": 1.0}}
    >>> irm.evaluate(qrels, run, ["OML_P@4", "OML_P@6", "P@4"]).aggregate()
    {'P@4': 0.75, 'OML_P@4': 1.0, 'OML_P@6': 1.0}
    """
    return columns(*(oml_precision_values(ctx.view, k) for k in cutoffs))


@measure("oml_map", order=102, params=LongCutoffs(OML_CUTOFFS), pytrec_eval=False,
         friendly="OML_AP", friendly_cutoff=True)
def oml_map(ctx, cutoffs):
    """OML map@k (open-metric-learning 4.0.0 ``calc_map``): AP normalised by hits in the top k.

    ``map@k = (1 / h_{k'}) * sum_{i <= k', g_i = 1} h_i / i``, 0 when ``h_{k'} = 0``.
    The denominator is the number of relevant items *retrieved in the top k*, not
    ``n_gt`` (trec_eval ``map_cut``) nor ``min(k, n_gt)``: one hit at rank 1 scores
    1 whatever ``n_gt`` is. Empty rankings: 1 if ``n_gt = 0`` else 0. Friendly name
    ``OML_AP@k``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    >>> run = {"q": {"a": 3.0, "x": 2.0, "y": 1.0}}
    >>> res = irm.evaluate(qrels, run, ["OML_AP@3", "map_cut.3"])
    >>> res.aggregate()["OML_AP@3"], round(res.aggregate()["map_cut_3"], 4)
    (1.0, 0.3333)
    """
    return columns(*(oml_map_values(ctx.view, k) for k in cutoffs))


# --------------------------------------------------------------------------- PML / Musgrave

def map_at_r_values(view) -> np.ndarray:
    """MAP@R: ``(1 / R) * sum_{i <= min(R, L), g_i = 1} h_i / i``; 0 when ``R = 0``."""
    r = view.num_rel
    running = sg.at_rank(view.running_precision_sum, view.offsets, r, fill=0.0)
    return safe_div(running, r)


def ml_r_precision_values(view) -> np.ndarray:
    """PML R-precision: ``h_m / m`` with ``m = min(R, L)``; 0 when ``m = 0``."""
    m = np.minimum(view.num_rel, view.num_ret)
    return safe_div(view.relat(m), m)


def reciprocal_rank_values(view, k=None) -> np.ndarray:
    """``1 / (rank of the first relevant item)`` within the top ``k`` (all if None), else 0."""
    first = view.first_rel_rank
    if k is not None:
        first = np.where(first <= k, first, 0)
    return safe_div(1.0, first)


def hit_values(view, k) -> np.ndarray:
    """Hit indicator: 1 if a relevant item is in the top ``k``, else 0 (empty list: 0)."""
    return (view.relat(k) > 0).astype(np.float64)


@measure("map_at_r", order=103, params=FixedSuffix("R"), pytrec_eval=False,
         friendly="MAP", friendly_cutoff=True)
def mean_average_precision_at_r(ctx, params):
    """MAP@R (Musgrave et al. 2020; pytorch-metric-learning 2.9.0 ``mean_average_precision_at_r``).

    ``MAP@R = (1 / R) * sum_{i <= R, g_i = 1} h_i / i``: average precision cut at
    rank R and divided by R, where R is the query's number of relevant items. A
    ranking shorter than R sums what it has and still divides by R (PML does the
    same when ``k < R``). ``R = 0`` gives 0 here; pytorch-metric-learning leaves
    such "lone" queries out of its mean (:mod:`irmetrics.compat.pml` does). It is
    trec_eval's ``map_cut`` at the per-query cutoff ``k = R`` (same numerator, same
    denominator R), whereas ``map`` keeps summing below rank R. Friendly name
    ``MAP@R``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    >>> run = {"q": {"a": 4.0, "x": 3.0, "b": 2.0, "c": 1.0}}
    >>> round(irm.evaluate(qrels, run, ["MAP@R"]).aggregate()["MAP@R"], 6)   # (1 + 2/3) / 3
    0.555556
    """
    return columns(map_at_r_values(ctx.view))


@measure("ml_r_precision", order=104, pytrec_eval=False, friendly="ML_RPrec")
def ml_r_precision(ctx, params):
    """R-precision as pytorch-metric-learning 2.9.0 computes it: ``h_m / m``, ``m = min(R, L)``.

    R is the query's number of relevant items. It equals trec_eval ``Rprec``
    (``h_{min(R,L)} / R``) whenever the ranking holds at least R items; when it is
    shorter, PML divides by the ``m`` positions it could look at (its kNN ``k``).
    ``m = 0`` gives 0. Friendly name ``ML_RPrec``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    >>> run = {"q": {"a": 2.0, "x": 1.0}}
    >>> irm.evaluate(qrels, run, ["ML_RPrec", "Rprec"]).to_dict()["q"]
    {'Rprec': 0.3333333333333333, 'ML_RPrec': 0.5}
    """
    return columns(ml_r_precision_values(ctx.view))


@measure("ml_precision_at_1", order=105, params=FixedSuffix("1"), pytrec_eval=False,
         friendly="ML_P", friendly_cutoff=True)
def ml_precision_at_1(ctx, params):
    """Precision@1 of metric learning (pytorch-metric-learning 2.9.0 ``precision_at_1``): ``g_1``.

    Per query it is trec_eval ``P_1``; the difference is in the averaging: PML
    leaves queries with ``R = 0`` out (:mod:`irmetrics.compat.pml`), this measure
    scores them 0. Friendly name ``ML_P@1``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> irm.evaluate({"q": {"a": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["ML_P@1"]).aggregate()
    {'ML_P@1': 1.0}
    """
    return columns(hit_values(ctx.view, 1))


@measure("ml_recall", order=106, params=LongCutoffs(RECALL_AT_K_CUTOFFS), pytrec_eval=False,
         friendly="ML_Recall", friendly_cutoff=True)
def ml_recall_at_k(ctx, cutoffs):
    """Metric-learning Recall@k: a hit indicator, 1 if a relevant item is in the top k.

    This is the "Recall@k" of deep metric learning papers and of the
    ranking-metrics code (``recall_at``), i.e. hit rate / success, **not** IR recall
    ``h_k / R`` (trec_eval ``recall``, friendly ``R@k``). Empty rankings score 0.
    Friendly name ``ML_Recall@k``; default cutoffs 1, 2, 4, 8.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
    >>> run = {"q": {"x": 2.0, "a": 1.0}}
    >>> irm.evaluate(qrels, run, ["ML_Recall@2", "R@2"]).to_dict()["q"]
    {'R@2': 0.25, 'ML_Recall@2': 1.0}
    """
    return columns(*(hit_values(ctx.view, k) for k in cutoffs))


# --------------------------------------------------------------------------- TF-Similarity

def binary_ndcg_window_values(view, k: int) -> np.ndarray:
    """TF-Similarity BNDCG@k: window DCG over the ideal built from the window's own hits.

    ``DCG = sum_{i <= k', g_i = 1} 1 / log2(i + 1)``,
    ``IDCG = sum_{i <= h_{k'}} 1 / log2(i + 1)``; 0 when ``h_{k'} = 0``.
    """
    kp = np.minimum(k, view.num_ret)
    in_window = view.is_rel & (view.rank <= kp[view.seg])
    dcg = view.sum(np.where(in_window, 1.0 / log2_discount(view.rank), 0.0))
    hits = view.relat(kp)
    ideal = _discount_cumsum(int(hits.max()) if hits.size else 0)[hits]
    return safe_div(dcg, ideal)


@measure("tfsim_ndcg", order=107, params=LongCutoffs(TFSIM_CUTOFFS), pytrec_eval=False,
         friendly="TFSim_nDCG", friendly_cutoff=True)
def tfsim_binary_ndcg(ctx, cutoffs):
    """Binary nDCG@k of TensorFlow-Similarity (``retrieval_metrics.BNDCG``, commit dc506d6).

    ``DCG@k = sum_{i <= k, g_i = 1} 1 / log2(i + 1)`` over the top ``k``; the ideal
    DCG is built from the hits *inside that window* (``h_k`` ones first), not from
    all R relevant items: any ranking that puts its hits first scores 1. 0 when
    there is no hit in the window. The distance threshold of the original is applied
    by :class:`irmetrics.compat.tfsim.BNDCG` (rankings carry no distances).
    Friendly name ``TFSim_nDCG@k``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    >>> run = {"q": {"x": 4.0, "a": 3.0, "y": 2.0, "b": 1.0}}
    >>> round(irm.evaluate(qrels, run, ["TFSim_nDCG@4"]).aggregate()["TFSim_nDCG@4"], 6)
    0.650921
    """
    return columns(*(binary_ndcg_window_values(ctx.view, k) for k in cutoffs))
