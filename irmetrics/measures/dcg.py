"""Discounted cumulative gain family: ndcg, ndcg_cut, dcg, ideal_dcg."""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from ..engine.gains import compute_gains, log2_discount
from ..exceptions import ParameterError
from .context import columns, safe_div
from .params import LongCutoffs, Option, PairParams, with_binary
from .precision import STANDARD_CUTOFFS
from .registry import measure


def gains_for(view, pairs=()):
    """Gain table results for the view's rankings (cached per gain parameters)."""
    cache = view.cache
    key = ("gains", tuple(pairs))
    if key not in cache:
        cache[key] = compute_gains(tuple(pairs), view.rel_hist, view.code, view.seg,
                                   view.rel_levels)
    return cache[key]


def ideal_gains_for(view, pairs=()):
    """Gains whose ideal sequences are valid (entry gains only if already computed)."""
    key = ("gains", tuple(pairs))
    if key in view.cache:
        return view.cache[key]
    ideal_key = ("ideal_gains", tuple(pairs))
    if ideal_key not in view.cache:
        empty = np.zeros(0, dtype=np.int64)
        view.cache[ideal_key] = compute_gains(tuple(pairs), view.rel_hist, empty, empty,
                                                 view.rel_levels)
    return view.cache[ideal_key]


def ideal_sequence(view, values=None) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, value)``: every qrels judgment of each query whose value is positive,
    values descending. ``values`` gives each ``view.rel_levels`` entry's value (default:
    the label itself)."""
    levels = view.rel_levels
    values = levels if values is None else np.asarray(values)
    positive = values > 0
    order = np.argsort(-values[positive], kind="stable")
    counts = view.rel_hist[:, positive][:, order]
    out = np.repeat(np.tile(values[positive][order], view.n_queries), counts.ravel())
    offsets = np.concatenate(([0], np.cumsum(counts.sum(axis=1)))).astype(np.int64)
    return offsets, out


def relabelled(labels: np.ndarray, gains: tuple) -> np.ndarray:
    """Labels mapped through ``gains`` (``((label, value), ...)``), others kept: the
    qrels relabelling ir_measures does for ``nDCG(gains=...)``."""
    keys = np.array([k for k, _ in gains], dtype=np.int64)
    vals = np.array([v for _, v in gains], dtype=np.float64)
    order = np.argsort(keys)
    keys, vals = keys[order], vals[order]
    pos = np.minimum(np.searchsorted(keys, labels), len(keys) - 1)
    return np.where(keys[pos] == labels, vals[pos], labels.astype(np.float64))


def _checked_gains(gains) -> tuple:
    if any(k < 0 or v < 0 for k, v in gains):
        raise ParameterError("`gains` of nDCG@k must map labels >= 0 to gains >= 0;"
                             f" got {dict(gains)!r}.")
    return gains


def ideal_ranks(gains) -> np.ndarray:
    return sg.ranks(gains.ideal_offsets)


def label_gain(code: np.ndarray) -> np.ndarray:
    """``ndcg_cut``'s gain: the judged label when positive, else 0."""
    return np.where(code > 0, code, 0).astype(np.float64)


def running_ideal_dcg(ideal_offsets, ideal_gain):
    """Running IDCG over each query's ideal gain sequence (CSR): read at rank k for
    IDCG@k."""
    return sg.seg_cumsum(ideal_gain / log2_discount(sg.ranks(ideal_offsets)), ideal_offsets)


def running_ideal_of(gains):
    """:func:`running_ideal_dcg` of a :class:`~irmetrics.engine.gains.Gains`, computed
    once per Gains (a grid's runs share their ideals: :func:`~irmetrics.engine.gains.ideal_memo`)."""
    running = gains.derived.get("running_ideal_dcg")
    if running is None:
        running = running_ideal_dcg(gains.ideal_offsets, gains.ideal_gain)
        running.flags.writeable = False  # shared by every call given these gains
        gains.derived["running_ideal_dcg"] = running
    return running


def dcg_values(view, gains) -> np.ndarray:
    """``sum_i gain(r_i) / log2(i + 1)`` over the whole ranking, in rank order.

    Zero gains add exactly nothing to the running sum, so only the other terms are
    computed (most retrieved documents have no gain); the additions keep rank order.
    """
    at = np.flatnonzero(gains.entry_gain)
    seg = view.seg[at]
    rank = at - view.offsets[seg] + 1
    return sg.seg_sum(gains.entry_gain[at] / log2_discount(rank), seg, view.n_queries)


def ideal_dcg_values(view, gains) -> np.ndarray:
    """``sum_j I_j / log2(j + 1)`` over the full ideal sequence."""
    seg = sg.segment_ids(gains.ideal_offsets)
    terms = gains.ideal_gain / log2_discount(ideal_ranks(gains))
    return sg.seg_sum(terms, seg, view.n_queries)


@measure("ndcg", order=24, params=PairParams(), groups="T", friendly="nDCG",
         options=with_binary(dcg=Option(str, choices=("log2",)), gains=Option(dict, raw=True)),
         aliases={'ir_measures': 'nDCG', 'ranx': 'ndcg'})
def ndcg(ctx, pairs):
    """Normalised DCG over the whole ranking: ``DCG / IDCG``, 0 when IDCG = 0.

    ``DCG = sum_i gain(r_i) / log2(i + 1)``; the ideal is every judged document with a
    positive gain, gains descending, independent of the ranking's length. Default
    gain = the judged label (linear gain); ``ndcg.1=3,2=9`` maps labels to gains.
    Ignores ``relevance_level``.
    """
    v = ctx.view
    g = gains_for(v, pairs)
    return columns(safe_div(dcg_values(v, g), ideal_dcg_values(v, g)))


@measure("ndcg_cut", order=27, params=LongCutoffs(STANDARD_CUTOFFS), groups="T",
         friendly="nDCG", friendly_cutoff=True,
         options=with_binary(dcg=Option(str, choices=("log2",)),
                             gains=Option(dict, doc="relabel the qrels first, as"
                                                    " ir_measures does (labels and gains >= 0)")),
         aliases={'ir_measures': 'nDCG@k', 'ranx': 'ndcg@k',
                  'torchmetrics': 'RetrievalNormalizedDCG(top_k=k)'})
def ndcg_at_cutoffs(ctx, cutoffs):
    """nDCG at k with raw labels as gains: ``DCG@k / IDCG@k``, or ``DCG@k`` when IDCG@k = 0.

    ``IDCG@k`` sums the first ``min(k, #labels >= 1)`` labels sorted descending.
    Ignores trec_eval gain parameters and ``relevance_level``. The friendly option
    ``gains`` (``nDCG(gains={0: 0, 1: 1, 2: 3})@10``) relabels the qrels first (labels not
    listed keep their value), as ir_measures does before calling pytrec_eval.
    """
    v = ctx.view
    # Only ranks <= max(k) matter: the running sum over them is the same sequence of
    # additions, so truncating first is exact and avoids work on long rankings.
    offsets, top = sg.truncate(v.offsets, max(cutoffs))
    code = v.code[top]
    gains = ctx.options.get("gains")
    if gains:  # ir_measures' nDCG(gains=...)@k: the qrels relabelled, then ndcg_cut
        gains = _checked_gains(gains)
        code = np.where(code >= 0, relabelled(code, gains), code)
        ideal_offsets, ideal_gain = ideal_sequence(v, relabelled(v.rel_levels, gains))
        ideal = running_ideal_dcg(ideal_offsets, ideal_gain)
    else:
        g = ideal_gains_for(v)
        ideal_offsets, ideal = g.ideal_offsets, running_ideal_of(g)
    running = sg.seg_cumsum(label_gain(code) / log2_discount(sg.ranks(offsets)), offsets)
    out = []
    for k in cutoffs:
        dcg = sg.at_rank(running, offsets, k, fill=0.0)
        idcg = sg.at_rank(ideal, ideal_offsets, k, fill=0.0)
        out.append(np.where(idcg > 0, safe_div(dcg, idcg), dcg))
    return columns(*out)


@measure("dcg", order=22, params=PairParams(), pytrec_eval=False,
         aliases={'ranx': 'dcg'})
def discounted_cumulative_gain(ctx, pairs):
    """DCG over the whole ranking: ``sum_i gain(r_i) / log2(i + 1)``.

    Gains from the gain table (default gain = label; ``dcg.1=3,2=9``), negative gains
    included; unjudged documents have gain 0. Not in any trec_eval group; request it
    explicitly. It shares one gain-parameter block with ndcg and ideal_dcg, so it
    cannot be combined with a parameterised one of them.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"x": 2.0, "a": 1.0}}, ["dcg"])
    >>> round(res.aggregate()["dcg"], 4)   # 2 / log2(3)
    1.2619
    """
    v = ctx.view
    return columns(dcg_values(v, gains_for(v, pairs)))


@measure("ideal_dcg", order=23, params=PairParams(), pytrec_eval=False)
def ideal_discounted_cumulative_gain(ctx, pairs):
    """DCG of the ideal ranking: ``sum_{j=1..idealpos} I_j / log2(j + 1)``.

    Over every judged document with a positive gain, gains descending; independent
    of the ranking and not cut at its length. Not in any trec_eval group.
    """
    v = ctx.view
    return columns(ideal_dcg_values(v, gains_for(v, pairs)))
