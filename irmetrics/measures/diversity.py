"""Diversity (intent-aware) measures: ndeval's definitions, as ir_measures 0.4.3 computes them.

Source tool: ndeval 4.5 (TREC Web track), through pyndeval 0.0.8, the provider
ir_measures 0.4.3 uses. Judgments are intent-aware qrels
(:class:`~irmetrics.io.diversity.DiversityQrels`); evaluate with
:func:`irmetrics.evaluate_diversity`.

Notation, per query: ``m`` = intents with at least one relevant judgment (label
``>= rel``; ndeval's *actualSubtopics*), ``c_i(r)`` = documents above rank ``r``
relevant to intent ``i``, and the novelty gain of the document at rank ``r``
``g(r) = sum over its relevant intents i of (1 - alpha) ** c_i(r)``. The *ideal-ideal*
normaliser of a cutoff ``k`` is ``II_w(k) = sum_{r<=k} m (1 - alpha) ** (r-1) w(r)``
(a document covering every intent at every rank). The ideal ranking is ndeval's greedy
one: each rank takes the judged document of largest current gain, ties to the greatest
doc id (bytes).

Ranking: score descending, ties by doc id **ascending** (pyndeval sorts ``(-score,
doc_id)``; trec_eval's measures break ties the other way). Queries: those in both qrels
and run (``complete=True``: every qrels query, an absent one ranks nothing and scores
0, which is what ir_measures reports for it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from .context import columns, safe_div
from .params import BINARY_OPTIONS, KeywordParams, Option
from .registry import measure
from .rel_format import DIVERSITY

if TYPE_CHECKING:
    from ..engine.diversity import DiversityLists, IntentStats

_DIVERSITY = (DIVERSITY,)

#: ndeval's defaults (and ir_measures').
DEFAULT_ALPHA = DEFAULT_BETA = 0.5


#: Every declaration here: intent-aware judgments, ndeval's definition (pyndeval, the
#: provider ir_measures 0.4.3 uses).
_NDEVAL: dict[str, Any] = {"rel_formats": _DIVERSITY, "ir_measures_provider": "pyndeval"}
_CUTOFF = KeywordParams(cutoff=True)
_NO_CUTOFF = KeywordParams()


def _intent_options(*, alpha: bool = False, beta: bool = False,
                    judged_only: bool = True) -> dict:
    """The keywords ir_measures gives a diversity measure (``rel`` always); alpha and
    beta not given as keywords stay at ndeval's defaults (:func:`_args`)."""
    options = {"rel": BINARY_OPTIONS["rel"]}
    if judged_only:
        options["judged_only"] = BINARY_OPTIONS["judged_only"]
    if alpha:
        options["alpha"] = Option(float, default=DEFAULT_ALPHA, low=0.0, high=1.0,
                                  doc="redundancy penalty")
    if beta:
        options["beta"] = Option(float, default=DEFAULT_BETA, low=0.0, high=1.0,
                                 doc="patience")
    return options


def _args(ctx, cutoff):
    """The kernel's parameters: cutoff, alpha and beta (ndeval's defaults unless the
    declaration takes them as options)."""
    return SimpleNamespace(cutoff=cutoff, **{"alpha": DEFAULT_ALPHA, "beta": DEFAULT_BETA,
                                             **ctx.options})


@dataclass
class DiversityContext:
    """Kernel input: the packed rankings (per judged_only) at one relevance level."""

    packed: dict  # judged_only -> DiversityLists
    relevance_level: int = 1
    judged_only: bool = False
    options: dict = field(default_factory=dict)  # this request's keyword options

    def lists(self) -> DiversityLists:
        return self.packed[bool(self.judged_only)]

    def stats(self, alpha: float) -> IntentStats:
        lists = self.lists()
        cache = lists.__dict__.setdefault("_stats", {})
        key = (self.relevance_level, alpha)
        if key not in cache:
            cache[key] = lists.stats(self.relevance_level, alpha)
        return cache[key]

    @cached_property
    def n_queries(self) -> int:
        return self.packed[self.judged_only].n_queries


# ------------------------------------------------------------------------- shared pieces


def _ideal_ideal(n_intents, alpha, k, weight) -> np.ndarray:
    """ndeval's ideal-ideal normaliser ``II_w(k)`` per query.

    ``weight(t, x)`` applies the rank weight of 0-based rank ``t`` to ``x``. One step per
    rank up to k, vectorised over queries: the gain ``m (1-alpha)^t`` is updated by
    repeated multiplication and summed in rank order, as ndeval does.
    """
    gain = n_intents.astype(np.float64)
    total = np.zeros(len(gain))
    for t in range(k):
        total = total + weight(t, gain)
        gain = gain * (1.0 - alpha)
    return total


def _normalised(raw, n_intents, alpha, k, weight) -> np.ndarray:
    """ndeval's collection-independent normalisation: ``raw / II_w(k)`` for ``k >= 2``.

    ndeval leaves rank 1 undivided (its loop starts at the second rank), so ``@1`` is
    the raw gain; a query without relevant intents scores 0.
    """
    if k == 1:
        return np.where(n_intents > 0, raw, 0.0)
    return safe_div(raw, _ideal_ideal(n_intents, alpha, k, weight))


# engine.diversity (and engine.prefs, which it uses) load on a diversity measure's first
# evaluation: registering the measures needs neither, and most roads never evaluate one.
def _discounts(k):
    from ..engine.diversity import discounts

    return discounts(k)


def _repeated_products(beta, n):
    from ..engine.diversity import repeated_products

    return repeated_products(beta, n)


def _by_discount(k):
    disc = _discounts(k)
    return lambda t, x: x * disc[t]


def _by_rank(t, x):
    return x / float(t + 1)


def _run_cumulative(s: IntentStats, k: int, kind: str) -> np.ndarray:
    """Rank-weighted novelty gain of the run summed over the top ``k`` (rank order)."""
    rank = s.lists.entry_rank
    inside = rank <= k
    if kind == "dcg":
        weighted = np.zeros(len(rank))
        weighted[inside] = s.entry_gain[inside] * _discounts(k)[rank[inside] - 1]
    else:  # ndeval divides by the rank (not a multiplication by its inverse)
        weighted = np.where(inside, s.entry_gain / rank, 0.0)
    return s.at_cutoff(weighted, k)


def _ideal_cumulative(s: IntentStats, k: int, kind: str) -> np.ndarray:
    """The same sum over ndeval's greedy ideal ranking."""
    ideal = s.ideal_gains(k)
    if ideal.shape[1] == 0:
        return np.zeros(ideal.shape[0])
    t = np.arange(ideal.shape[1])
    weighted = ideal * _discounts(ideal.shape[1])[t] if kind == "dcg" else ideal / (t + 1.0)
    return np.cumsum(weighted, axis=1)[:, -1]  # sequential along each row


def _intent_aware_cumulative(ctx, params, kind, *, normalise_by_ideal):
    s = ctx.stats(params.alpha)
    k, alpha = params.cutoff, params.alpha
    weight = _by_discount(k) if kind == "dcg" else _by_rank
    run = _normalised(_run_cumulative(s, k, kind), s.n_intents, alpha, k, weight)
    if not normalise_by_ideal:
        return run
    ideal = _normalised(_ideal_cumulative(s, k, kind), s.n_intents, alpha, k, weight)
    # ndeval divides only where the run's value is non-zero.
    return np.where(run != 0, safe_div(run, ideal), 0.0)


def _nrbp(ctx, params, *, ideal: bool):
    s = ctx.stats(params.alpha)
    alpha, beta = params.alpha, params.beta
    if ideal:
        gains = s.ideal_gains(None)
        total = np.zeros(gains.shape[0])
        if gains.shape[1]:
            decay = _repeated_products(beta, gains.shape[1])
            total = np.cumsum(gains * decay, axis=1)[:, -1]
    else:
        lists = s.lists
        decay = _repeated_products(beta, int(lists.entry_rank.max(initial=0)))
        weighted = s.entry_gain * decay[lists.entry_rank - 1]
        total = np.bincount(lists.entry_query, weights=weighted, minlength=lists.n_queries)
    scale = np.zeros(len(total))
    has = s.n_intents > 0
    scale[has] = (1.0 - (1.0 - alpha) * beta) / s.n_intents[has]
    return total * scale


# ------------------------------------------------------------------------------ measures


@measure("alpha_DCG", order=1000, params=_CUTOFF, options=_intent_options(alpha=True),
         pytrec_eval=False, friendly="alpha_DCG", friendly_cutoff=True,
         friendly_aliases=("α_DCG",),
         **_NDEVAL, aliases={"ir_measures": "alpha_DCG@k"})
def alpha_dcg(ctx, params):
    """alpha-DCG@k with ndeval's collection-independent ("ideal-ideal") normalisation.

    ``sum_{r<=min(k,n)} g(r) / log2(r + 1)``, divided by ``II(k)`` with
    ``w(r) = 1 / log2(r + 1)``; at ``k = 1`` ndeval does not divide. 0 without relevant
    intents. Source: ndeval 4.5 via pyndeval (ir_measures 0.4.3 ``alpha_DCG@k``).
    ir_measures refuses k > 20 (ndeval's fixed depth); irmetrics extends the formula.
    """
    params = _args(ctx, params)
    return columns(_intent_aware_cumulative(ctx, params, "dcg", normalise_by_ideal=False))


@measure("alpha_nDCG", order=1001, params=_CUTOFF, options=_intent_options(alpha=True),
         pytrec_eval=False, friendly="alpha_nDCG", friendly_cutoff=True,
         friendly_aliases=("α_nDCG",),
         **_NDEVAL, aliases={"ir_measures": "alpha_nDCG@k"})
def alpha_ndcg(ctx, params):
    """alpha-nDCG@k (Clarke et al., SIGIR 2008) as ndeval computes it.

    ``alpha_DCG@k(run) / alpha_DCG@k(ideal)``, the ideal being ndeval's greedy ranking
    of the judged documents (each rank takes the document of largest current novelty
    gain, ties to the greatest doc id); 0 when the run's alpha-DCG is 0. The nearest
    trec_eval cousin, ``ndcg_cut``, ignores intents and redundancy. Source: ndeval 4.5
    via pyndeval 0.0.8 (ir_measures 0.4.3 ``alpha_nDCG@k``).

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = irm.DiversityQrels.from_records(
    ...     [("q", "1", "a", 1), ("q", "2", "a", 1), ("q", "1", "b", 1), ("q", "2", "c", 1)])
    >>> res = irm.evaluate_diversity(qrels, {"q": {"b": 3.0, "c": 2.0, "a": 1.0}},
    ...                              ["alpha_nDCG@2"])
    >>> # run: b, c = 1 + 1/log2(3); ideal: a (2 intents), then c = 2 + 0.5/log2(3)
    >>> round(res.aggregate()["alpha_nDCG@2"], 4)
    0.7044
    """
    params = _args(ctx, params)
    return columns(_intent_aware_cumulative(ctx, params, "dcg", normalise_by_ideal=True))


@measure("ERR_IA", order=1002, params=_CUTOFF, options=_intent_options(),
         pytrec_eval=False,
         friendly="ERR_IA", friendly_cutoff=True, **_NDEVAL,
         aliases={"ir_measures": "ERR_IA@k"})
def err_ia(ctx, params):
    """ERR-IA@k as ndeval defines it: ``sum_{r<=min(k,n)} g(r) / r``, divided by
    ``II(k)`` with ``w(r) = 1 / r`` (undivided at ``k = 1``); alpha fixed at 0.5.

    This is ndeval's intent-aware ERR with binary grades (a relevant document satisfies
    the intent with probability alpha), not gdeval's graded ERR. Source: ndeval 4.5 via
    pyndeval.
    """
    params = _args(ctx, params)
    return columns(_intent_aware_cumulative(ctx, params, "err", normalise_by_ideal=False))


@measure("nERR_IA", order=1003, params=_CUTOFF, options=_intent_options(),
         pytrec_eval=False,
         friendly="nERR_IA", friendly_cutoff=True, **_NDEVAL,
         aliases={"ir_measures": "nERR_IA@k"})
def nerr_ia(ctx, params):
    """nERR-IA@k: ``ERR_IA@k(run) / ERR_IA@k(ideal)`` over ndeval's greedy ideal ranking;
    0 when the run has no relevant document in its top k. alpha fixed at 0.5. Source:
    ndeval 4.5 via pyndeval 0.0.8 (ir_measures 0.4.3 ``nERR_IA@k``)."""
    params = _args(ctx, params)
    return columns(_intent_aware_cumulative(ctx, params, "err", normalise_by_ideal=True))


@measure("NRBP", order=1004, params=_NO_CUTOFF,
         options=_intent_options(alpha=True, beta=True, judged_only=False),
         pytrec_eval=False, friendly="NRBP", **_NDEVAL,
         aliases={"ir_measures": "NRBP"})
def nrbp(ctx, params):
    """Novelty- and rank-biased precision (Clarke et al., ICTIR 2009), ndeval's version.

    ``(1 - (1 - alpha) beta) / m * sum_{r<=n} g(r) beta ** (r-1)`` over the whole
    ranking; 0 without relevant intents. The nearest trec_eval cousin is ``rbp``
    (no intents, no redundancy penalty). Source: ndeval 4.5 via pyndeval 0.0.8.
    """
    params = _args(ctx, params)
    return columns(_nrbp(ctx, params, ideal=False))


@measure("nNRBP", order=1005, params=_NO_CUTOFF,
         options=_intent_options(alpha=True, beta=True, judged_only=False),
         pytrec_eval=False, friendly="nNRBP", **_NDEVAL,
         aliases={"ir_measures": "nNRBP"})
def nnrbp(ctx, params):
    """NRBP of the run divided by NRBP of ndeval's greedy ideal ranking.

    A query with a non-empty ranking but no relevant intent gives ndeval's ``0 / 0``,
    NaN (as ir_measures reports it, which makes the mean NaN too); an empty ranking
    scores 0 (ir_measures' default for a query it did not evaluate). Source: ndeval 4.5
    via pyndeval 0.0.8.
    """
    params = _args(ctx, params)
    run = _nrbp(ctx, params, ideal=False)
    ideal = _nrbp(ctx, params, ideal=True)
    lists = ctx.stats(params.alpha).lists
    non_empty = np.diff(lists.offsets) > 0
    out = safe_div(run, ideal)
    out[non_empty & (ideal == 0)] = np.nan
    return columns(out)


@measure("AP_IA", order=1006, params=_NO_CUTOFF, options=_intent_options(),
         pytrec_eval=False,
         friendly="AP_IA", friendly_aliases=("MAP_IA",), **_NDEVAL,
         aliases={"ir_measures": "AP_IA / MAP_IA"})
def ap_ia(ctx, params):
    """Intent-aware average precision: the mean over relevant intents of each intent's AP.

    ``(1/m) sum_i (1/R_i) sum_{r: rel_i(r)} relat_i(r) / r`` with ``R_i`` the documents
    judged relevant to intent i, over the whole ranking; 0 without relevant intents.
    With one intent it is trec_eval's ``map`` (ties aside: ascending doc ids here).
    Source: ndeval 4.5 (MAP-IA) via pyndeval 0.0.8.
    """
    params = _args(ctx, params)
    s = ctx.stats(params.alpha)
    rank = s.lists.entry_rank[s.pair_entry]
    cell = np.searchsorted(s.cells, s.pair_cell)
    # Pairs are in rank order, so each intent's precisions are added in rank order.
    per_cell = np.bincount(cell, weights=(s.pair_seen + 1) / rank, minlength=len(s.cells))
    per_query = np.bincount(s.cell_query, weights=per_cell / s.cell_nrel,
                            minlength=s.lists.n_queries)
    return columns(safe_div(per_query, s.n_intents))


@measure("P_IA", order=1007, params=_CUTOFF, options=_intent_options(),
         pytrec_eval=False,
         friendly="P_IA", friendly_cutoff=True, **_NDEVAL,
         aliases={"ir_measures": "P_IA@k"})
def p_ia(ctx, params):
    """Intent-aware precision: ``(number of (document, intent) relevant pairs in the top
    min(k, n)) / (k m)``, i.e. the mean over relevant intents of P@k; 0 without relevant
    intents. Like trec_eval's ``P``, the denominator is k even when fewer are retrieved.
    Source: ndeval 4.5 via pyndeval 0.0.8.
    """
    params = _args(ctx, params)
    s = ctx.stats(params.alpha)
    k = params.cutoff
    found = s.count_at_cutoff(np.ones(len(s.pair_entry), dtype=bool), k)
    return columns(safe_div(found, k * s.n_intents))


@measure("StRecall", order=1008, params=_CUTOFF,
         options=_intent_options(judged_only=False),
         pytrec_eval=False, friendly="StRecall", friendly_cutoff=True,
         **_NDEVAL, aliases={"ir_measures": "StRecall@k"})
def st_recall(ctx, params):
    """Subtopic recall: the fraction of relevant intents covered by the top min(k, n)
    documents; 0 without relevant intents. Source: ndeval 4.5 (strec) via pyndeval 0.0.8;
    no trec_eval cousin."""
    params = _args(ctx, params)
    s = ctx.stats(params.alpha)
    found = s.count_at_cutoff(s.pair_seen == 0, params.cutoff)
    return columns(safe_div(found, s.n_intents))
