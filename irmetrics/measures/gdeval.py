"""gdeval's measures: ERR@k and nDCG@k with exponential gains, plus nERR@k.

gdeval.pl (version 1.2a, the copy ir_measures 0.4.3 runs through perl) reads a
document's gain from its qrels label ``g`` (labels <= 0 and unjudged documents give 0,
labels above ``MAX_JUDGMENT = 4`` are refused) and ranks by score descending, ties
by doc id descending: trec_eval's order. Both measures stop at rank ``min(k, n)``.
"""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from ..exceptions import InputFormatError
from .context import columns, safe_div
from .dcg import ideal_sequence
from .params import LongCutoffs, Option
from .precision import STANDARD_CUTOFFS
from .registry import RESET_ALWAYS, measure

#: gdeval's ``$MAX_JUDGMENT``: the largest label it accepts, and the ERR denominator 2^4.
MAX_JUDGMENT = 4

_SOURCE = "gdeval.pl 1.2a, as run by ir_measures 0.4.3"
#: gdeval computes from labels alone: no relevance level, no judged-only switch.
_NO_OPTIONS: dict = {}


def gdeval_labels(ctx):
    """``(offsets, label)`` of the top ``max k`` documents: positive labels, else 0.

    Refuses labels above 4, as gdeval does (it stops with a format error).
    """
    v = ctx.view
    levels = v.rel_levels
    too_high = v.rel_hist[:, levels > MAX_JUDGMENT].sum(axis=1) > 0
    if too_high.any():
        query = ctx.lists.query_ids[np.flatnonzero(too_high)[0]]
        raise InputFormatError(
            f"gdeval's measures take labels <= {MAX_JUDGMENT}; got label"
            f" {int(levels[levels > MAX_JUDGMENT].max())} in the qrels",
            path="<qrels>", query_id=str(query))
    return v.offsets, np.where(v.code > 0, v.code, 0)


def err_running(offsets, labels, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, running ERR)`` over the first ``depth`` entries, in gdeval's order of
    operations: ``r = (2^g - 1) / 2^4``, ``score += r * decay / i``, ``decay *= 1 - r``."""
    offsets, top = sg.truncate(offsets, depth)
    stop_prob = (np.exp2(labels[top].astype(np.float64)) - 1.0) / 2.0 ** MAX_JUDGMENT
    decay_after = sg.seg_accumulate(np.multiply, 1.0 - stop_prob, offsets)
    rank = sg.ranks(offsets)
    decay_before = np.ones_like(decay_after)
    later = rank > 1
    decay_before[later] = decay_after[np.flatnonzero(later) - 1]
    return offsets, sg.seg_cumsum(stop_prob * decay_before / rank, offsets)


def exp_dcg_running(offsets, labels, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, running DCG)``: ``sum (2^g - 1) / ln(i + 1)`` (gdeval's natural log;
    the base cancels in nDCG)."""
    offsets, top = sg.truncate(offsets, depth)
    gains = np.exp2(labels[top].astype(np.float64)) - 1.0
    return offsets, sg.seg_cumsum(gains / np.log(sg.ranks(offsets) + 1.0), offsets)


def normalised_at_cutoffs(ctx, cutoffs, running_of):
    """``running_of`` at each k divided by its value on the ideal ranking, 0 when the
    query has no positive label."""
    offsets, labels = gdeval_labels(ctx)
    depth = max(cutoffs)
    offsets, running = running_of(offsets, labels, depth)
    ideal_offsets, ideal = running_of(*ideal_sequence(ctx.view), depth)
    return columns(*(safe_div(sg.at_rank(running, offsets, k, fill=0.0),
                              sg.at_rank(ideal, ideal_offsets, k, fill=0.0))
                     for k in cutoffs))


@measure("err_cut", order=60, params=LongCutoffs(STANDARD_CUTOFFS), pytrec_eval=False,
         friendly="ERR", friendly_cutoff=True, options=_NO_OPTIONS,
         complete_reset=RESET_ALWAYS, aliases={"ir_measures": "ERR@k"}, source=_SOURCE,
         ir_measures_provider="gdeval", max_label=MAX_JUDGMENT,
         cousin="trec_eval has no ERR; recip_rank is its binary, cutoff-free special case"
               " (one fully relevant document, stopping probability 1).")
def expected_reciprocal_rank(ctx, cutoffs):
    """Expected reciprocal rank at k (Chapelle et al. 2009), gdeval's definition.

    ``ERR@k = sum_{i <= min(k, n)} (1/i) * R_i * prod_{j < i} (1 - R_j)`` with the
    stopping probability ``R_i = (2^g_i - 1) / 2^4``: the denominator is gdeval's fixed
    maximum grade 4, not the query's highest label. ``g_i`` is the label of the document
    at rank i when positive, else 0 (unjudged and negative labels give 0); labels above 4
    are refused. Ties: score descending, doc id descending (trec_eval's order, which is
    also gdeval's). Ignores ``relevance_level`` and ``judged_only``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"1": {"a": 4, "b": 1}}
    >>> run = {"1": {"b": 2.0, "a": 1.0}}
    >>> round(irm.evaluate(qrels, run, ["ERR@2"]).aggregate()["ERR@2"], 6)
    0.501953
    """
    offsets, labels = gdeval_labels(ctx)
    offsets, running = err_running(offsets, labels, max(cutoffs))
    return columns(*(sg.at_rank(running, offsets, k, fill=0.0) for k in cutoffs))


@measure("nerr_cut", order=61, params=LongCutoffs(STANDARD_CUTOFFS), pytrec_eval=False,
         friendly="nERR", friendly_cutoff=True, options=_NO_OPTIONS,
         complete_reset=RESET_ALWAYS, source="irmetrics, on gdeval's ERR@k", max_label=MAX_JUDGMENT,
         cousin="no trec_eval cousin; ir_measures has no nERR@k (its nERR_IA is ndeval's"
               " intent-aware form).")
def normalised_expected_reciprocal_rank(ctx, cutoffs):
    """ERR@k divided by the ERR@k of the ideal ranking: ``ERR@k / IERR@k``, 0 when the
    query has no positive label.

    Same gains as ``ERR@k`` (gdeval: ``(2^g - 1) / 2^4``, labels at most 4). The ideal
    ranking is every positive qrels label of the query, descending, cut at k. Not computed
    by ir_measures 0.4.3 (no oracle there); checked against a plain per-query loop.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"1": {"a": 4, "b": 1}}
    >>> run = {"1": {"a": 2.0, "b": 1.0}}
    >>> irm.evaluate(qrels, run, ["nERR@2"]).aggregate()["nERR@2"]
    1.0
    """
    return normalised_at_cutoffs(ctx, cutoffs, err_running)


@measure("ndcg_exp_cut", order=62, params=LongCutoffs(STANDARD_CUTOFFS), pytrec_eval=False,
         friendly="nDCG", friendly_cutoff=True, complete_reset=RESET_ALWAYS,
         options={"dcg": Option(str, choices=("exp-log2",), required=True,
                                doc="exponential gains 2^g - 1 (gdeval)")},
         aliases={"ir_measures": "nDCG(dcg='exp-log2')@k"}, source=_SOURCE,
         ir_measures_provider="gdeval", max_label=MAX_JUDGMENT,
         cousin="trec_eval's ndcg_cut uses the label itself as gain (linear); this one uses"
                " 2^g - 1, ignores negative labels and refuses labels above 4.")
def ndcg_exponential_at_cutoffs(ctx, cutoffs):
    """nDCG at k with exponential gains, gdeval's definition (``nDCG(dcg='exp-log2')@k``).

    ``DCG@k = sum_{i <= min(k, n)} (2^g_i - 1) / log(i + 1)``, divided by the same sum over
    the query's positive labels sorted descending (cut at k); 0 when the query has no
    positive label. ``g_i`` as in ``ERR@k``; labels above 4 are refused. Ties: score
    descending, doc id descending.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"1": {"a": 2, "b": 1}}
    >>> run = {"1": {"b": 2.0, "a": 1.0}}
    >>> res = irm.evaluate(qrels, run, ["nDCG(dcg='exp-log2')@2"]).aggregate()
    >>> round(res["nDCG(dcg='exp-log2')@2"], 5)   # (1 + 3/log2(3)) / (3 + 1/log2(3))
    0.79671
    """
    return normalised_at_cutoffs(ctx, cutoffs, exp_dcg_running)
