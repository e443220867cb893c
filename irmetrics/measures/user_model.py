"""User-model (C/W/L) measures of cwl_eval, as ir_measures 0.4.3 computes them.

Source tool: cwl_eval 1.0.12 (Azzopardi, Thomas and Moffat's C/W/L framework), the
provider ir_measures 0.4.3 uses for ``SDCG``, ``BPM``, ``INST``, ``INSQ`` and
``NERR8``-``NERR11``.

Every measure is an expected rate of gain ``sum_i W(i) g(i)`` over a ranking of exactly
``N = 1000`` positions (cwl_eval's depth: longer rankings are cut, shorter ones padded
with zero gain), where a measure defines its continuation probabilities ``C(i)`` and
``W(i) = prod_{j<i} C(j) / sum_{r<=N} prod_{j<r} C(j)``.

Gains: a judged label is first clipped below at 0 (negative labels count as 0), then to
``[min_rel, max_rel]`` and scaled to ``g = (label - min_rel) / (max_rel - min_rel)``; an
unjudged document has gain 0. Costs are 1 per document.

Ranking: irmetrics' (score descending, ties by doc id descending, as trec_eval). cwl_eval
through ir_measures keeps the run's input order for tied scores, so the two agree when
scores do not tie or when tied documents come in descending doc id order.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..exceptions import ParameterError
from .context import columns
from .params import KeywordParams, Option
from .registry import measure

#: cwl_eval's ranking depth (its ``max_n``).
DEPTH = 1000
#: Queries per padded (queries x DEPTH) block, bounding memory at 8 MiB a matrix.
_BLOCK_QUERIES = 1024

#: cwl_eval's gain scaling, every measure's options (no ``rel``/``judged_only``: cwl_eval
#: has neither).
_GAIN_OPTIONS = {
    "min_rel": Option(int, default=0, doc="label of gain 0"),
    "max_rel": Option(int, required=True, example=3, doc="label of gain 1 (required)"),
}
#: cwl_eval's measurements of a ranking (the fields of ir_measures' ``CwlMetric``): the
#: expected utility, which is the measure's value, and the others by ``quantity=``.
QUANTITIES = {"EU": "expected_utility", "ETU": "expected_total_utility",
              "EC": "expected_cost", "ETC": "expected_total_cost", "EI": "expected_items"}
_QUANTITY = {"quantity": Option(str, choices=tuple(QUANTITIES), default="EU", suggested=False,
                                doc="cwl_eval's EU (the value), ETU, EC, ETC or EI")}
#: Every declaration here: cwl_eval's definition, which ir_measures 0.4.3 uses (tied
#: scores in the run's input order there; see irmetrics.compat.ir_measures).
_CWL_EVAL: dict[str, Any] = {"pytrec_eval": False, "ir_measures_provider": "cwl_eval",
             "ir_measures_ties": "input_order"}
_CUTOFF = KeywordParams(cutoff=True)
_NO_CUTOFF = KeywordParams()


def _options(**more: Option) -> dict:
    return {**more, **_GAIN_OPTIONS, **_QUANTITY}


def _args(ctx, cutoff):
    """The kernel's parameters: the cutoff and the declaration's options (defaults
    filled in by the parser)."""
    return SimpleNamespace(cutoff=cutoff, **ctx.options)


def _scaled_gains(ctx, params) -> np.ndarray:
    """cwl's graded gain per ranked entry: the label clipped to ``[min_rel, max_rel]``
    (negative labels first to 0) and scaled to [0, 1]; unjudged 0. ``params``:
    :func:`_args`."""
    if params.min_rel >= params.max_rel:
        raise ParameterError(f"`min_rel` must be less than `max_rel`; got min_rel="
                             f"{params.min_rel}, max_rel={params.max_rel}.")
    code = ctx.view.code
    judged = (code >= 0) | (code == -2)  # -2: a negative label, clipped to 0
    label = np.clip(np.maximum(code, 0), params.min_rel, params.max_rel)
    return np.where(judged, (label - params.min_rel) / (params.max_rel - params.min_rel), 0.0)


def _binary_gains(ctx) -> np.ndarray:
    """cwl's binary gain per ranked entry (its ``bin_rel_cutoff``): 1 for a judged
    document whose label, negative ones counted as 0, reaches the relevance level."""
    code = ctx.view.code
    judged = (code >= 0) | (code == -2)
    return (judged & (np.maximum(code, 0) >= ctx.relevance_level)).astype(np.float64)


def _gain_blocks(ctx, gain):
    """``(query slice, gains)`` blocks: gains ``(queries, DEPTH)`` in rank order."""
    view = ctx.view
    offsets, rank = view.offsets, view.rank
    for start in range(0, view.n_queries, _BLOCK_QUERIES):
        stop = min(start + _BLOCK_QUERIES, view.n_queries)
        lo, hi = offsets[start], offsets[stop]
        keep = rank[lo:hi] <= DEPTH
        block = np.zeros((stop - start, DEPTH))
        block[(view.seg[lo:hi] - start)[keep], rank[lo:hi][keep] - 1] = gain[lo:hi][keep]
        yield slice(start, stop), block


def _expected_utility(ctx, params, continuation, gain=None, *, name: str) -> np.ndarray:
    """``sum_i W(i) g(i)`` per query, ``continuation(gains) -> C`` of a gains block;
    ``gain`` per ranked entry defaults to :func:`_scaled_gains`. With the option
    ``quantity`` another of cwl_eval's measurements of the same user model (declaration
    ``name``): all five are computed in one pass and kept in the view's cache, where the
    value itself is then found too."""
    gain = _scaled_gains(ctx, params) if gain is None else gain
    options = tuple(sorted((k, repr(v)) for k, v in ctx.options.items() if k != "quantity"))
    key = ("cwl", name, repr(params), options)
    quantity = ctx.options.get("quantity", "EU")
    if key not in ctx.view.cache:
        if quantity == "EU":  # the value alone
            return _quantities(ctx, continuation, gain, others=False)["EU"]
        ctx.view.cache[key] = _quantities(ctx, continuation, gain, others=True)
    return ctx.view.cache[key][quantity]


def _quantities(ctx, continuation, gain, *, others: bool) -> dict:
    """cwl_eval's measurements per query, in its order of operations: the expected
    utility ``EU = sum W(i) g(i)`` and, with ``others``, for ``W(i) = reach(i) w1``,
    ``w1 = 1 / sum(reach)`` and ``L(i) = reach(i) (1 - C(i))`` (the chance of stopping at
    i), ``ETU = sum L(i) G(i)`` (G the gain so far), ``EC = sum W(i)`` (unit costs),
    ``ETC = sum L(i) i`` and ``EI = 1 / w1``."""
    names = ("EU", "ETU", "EC", "ETC", "EI") if others else ("EU",)
    out = {q: np.zeros(ctx.n_queries) for q in names}
    for rows, gains in _gain_blocks(ctx, gain):
        c = continuation(gains)
        reach = np.ones_like(gains)
        np.cumprod(c[:, :-1], axis=1, out=reach[:, 1:])  # prod_{j<i} C(j)
        total = reach.sum(axis=1, keepdims=True)
        out["EU"][rows] = (reach / total * gains).sum(axis=1)
        if others:
            first = 1.0 / total
            stop = reach * (1.0 - c)
            out["ETU"][rows] = (stop * np.cumsum(gains, axis=1)).sum(axis=1)
            out["EC"][rows] = (reach * first).sum(axis=1)
            out["ETC"][rows] = (stop * _position()).sum(axis=1)
            out["EI"][rows] = 1.0 / first[:, 0]
    return out


def _position() -> np.ndarray:
    """1-based ranks 1..DEPTH as floats."""
    return np.arange(1.0, DEPTH + 1.0)


def _until(cutoff: int) -> np.ndarray:
    """True for ranks below the cutoff (C(i) = 0 from rank k on)."""
    return _position() < cutoff


def _insq_patience(T: float) -> np.ndarray:
    """INSQ's ``((i + 2T - 1) / (i + 2T))^2``."""
    i = _position()
    return ((i + 2.0 * T - 1.0) / (i + 2.0 * T)) ** 2.0


_POSITIVE_T = Option(float, default=1.0, low=1e-300, doc="desired total gain")


@measure("SDCG", order=1100, params=_CUTOFF, options=_options(), **_CWL_EVAL,
         friendly="SDCG", friendly_cutoff=True, aliases={"ir_measures": "SDCG@k"})
def scaled_dcg(ctx, params):
    """Scaled DCG@k (cwl_eval's NDCG-k): DCG@k divided by the sum of its discounts.

    ``C(i) = log2(i+1) / log2(i+2)`` for ``i < k``, else 0, so
    ``SDCG@k = sum_{i<=k} g(i) / log2(i+1) / sum_{i<=k} 1 / log2(i+1)`` with cwl's
    scaled gains (``max_rel`` required). Unlike trec_eval's ``ndcg_cut``, the normaliser
    is a run-independent constant and gains are linear in the label. Source: cwl_eval
    1.0.12 (``NDCG-k``) via ir_measures 0.4.3.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 2, "b": 1}}
    >>> res = irm.evaluate(qrels, {"q": {"b": 2.0, "a": 1.0}}, ["SDCG(max_rel=2)@2"])
    >>> round(res.aggregate()["SDCG(max_rel=2)@2"], 4)   # (0.5 + 1/log2(3)) / (1 + 1/log2(3))
    0.6934
    """
    return columns(fixed_utility(ctx, *_sdcg_model(ctx, params), name="SDCG"))


def _sdcg_model(ctx, params):
    params = _args(ctx, params)
    k = min(params.cutoff, DEPTH)
    c = np.array([math.log(i + 1, 2.0) / math.log(i + 2, 2.0) if i < k else 0.0
                  for i in range(1, DEPTH + 1)])
    return c, _scaled_gains(ctx, params)


@measure("BPM", order=1101,
         params=_CUTOFF, options=_options(T=Option(float, default=1.0, low=0.0,
                                                   doc="desired total gain")),
         **_CWL_EVAL, friendly="BPM", friendly_cutoff=True,
         aliases={"ir_measures": "BPM(T=,k=)"})
def bejeweled_player_model(ctx, params):
    """Bejeweled player model (static; Zhang et al., SIGIR 2017), cwl_eval's version.

    The user continues from rank i while the gain collected so far is below ``T`` and
    ``i < k``: ``C(i) = [sum_{j<=i} g(j) < T] * [i < k]``; the value is the mean gain of
    the documents examined. ``k`` is the cutoff (``BPM(T=1, max_rel=3)@10``). Source:
    cwl_eval 1.0.12 via ir_measures 0.4.3; no trec_eval cousin.
    """
    params = _args(ctx, params)
    k = params.cutoff

    def continuation(gains):
        return ((np.cumsum(gains, axis=1) < params.T) & _until(k)).astype(np.float64)

    return columns(_expected_utility(ctx, params, continuation, name="BPM"))


@measure("INST", order=1102, params=_NO_CUTOFF, options=_options(T=_POSITIVE_T),
         **_CWL_EVAL,
         friendly="INST", aliases={"ir_measures": "INST(T=)"})
def inst(ctx, params):
    """INST (Moffat et al., ADCS 2015): an adaptive user who wants gain ``T``.

    With ``T_i = T - sum_{j<=i} g(j)``:
    ``C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2``; full depth (1000). Source: cwl_eval
    1.0.12 via ir_measures 0.4.3; no trec_eval cousin.
    """
    params = _args(ctx, params)
    T = params.T
    i = _position()

    def continuation(gains):
        remaining = T - np.cumsum(gains, axis=1)
        return ((i + T + remaining - 1.0) / (i + T + remaining)) ** 2.0

    return columns(_expected_utility(ctx, params, continuation, name="INST"))


@measure("INSQ", order=1103, params=_NO_CUTOFF, options=_options(T=_POSITIVE_T),
         **_CWL_EVAL,
         friendly="INSQ", aliases={"ir_measures": "INSQ(T=)"})
def insq(ctx, params):
    """INSQ (Moffat et al.): INST's patience without adaptation,
    ``C(i) = ((i + 2T - 1) / (i + 2T))^2``; full depth (1000). Source: cwl_eval 1.0.12
    via ir_measures 0.4.3."""
    return columns(fixed_utility(ctx, *_insq_model(ctx, params), name="INSQ"))


def _insq_model(ctx, params):
    params = _args(ctx, params)
    return _insq_patience(params.T), _scaled_gains(ctx, params)


@measure("NERR8", order=1104, params=_CUTOFF, options=_options(), **_CWL_EVAL,
         friendly="NERR8", friendly_cutoff=True, aliases={"ir_measures": "NERR8@k"})
def nerr8(ctx, params):
    """Not-quite ERR, equation 8 (Azzopardi et al., ICTIR 2021):
    ``C(i) = 1 - g(i)`` for ``i < k``, else 0. ERR@k's cascade with a C/W/L
    normalisation; not gdeval's ERR (and trec_eval has none). Source: cwl_eval 1.0.12
    via ir_measures 0.4.3."""
    params = _args(ctx, params)
    until = _until(params.cutoff)
    return columns(_expected_utility(ctx, params, lambda gains: (1.0 - gains) * until,
                                     name="NERR8"))


@measure("NERR9", order=1105, params=_CUTOFF, options=_options(), **_CWL_EVAL,
         friendly="NERR9", friendly_cutoff=True, aliases={"ir_measures": "NERR9@k"})
def nerr9(ctx, params):
    """Not-quite ERR, equation 9: ``C(i) = i / (i + 1) * (1 - g(i))`` for ``i < k``,
    else 0. Source: cwl_eval 1.0.12 via ir_measures 0.4.3."""
    params = _args(ctx, params)
    i = _position()
    patience = (i / (i + 1.0)) * _until(params.cutoff)
    return columns(_expected_utility(ctx, params, lambda gains: patience * (1.0 - gains),
                                     name="NERR9"))


@measure("NERR10", order=1106,
         params=_NO_CUTOFF,
         options=_options(p=Option(float, default=0.9, low=0.0, high=1.0, doc="persistence")),
         **_CWL_EVAL, friendly="NERR10", aliases={"ir_measures": "NERR10(p=)"})
def nerr10(ctx, params):
    """Not-quite ERR, equation 10: ``C(i) = p (1 - g(i))``; full depth (1000). Source:
    cwl_eval 1.0.12 via ir_measures 0.4.3; RBP's patience with ERR's satisfaction."""
    params = _args(ctx, params)
    return columns(_expected_utility(ctx, params, lambda gains: params.p * (1.0 - gains),
                                     name="NERR10"))


@measure("NERR11", order=1107, params=_NO_CUTOFF, options=_options(T=_POSITIVE_T),
         **_CWL_EVAL,
         friendly="NERR11", aliases={"ir_measures": "NERR11(T=)"})
def nerr11(ctx, params):
    """Not-quite ERR, equation 11: INSQ's patience times ``1 - g(i)``,
    ``C(i) = ((i + 2T - 1) / (i + 2T))^2 (1 - g(i))``; full depth (1000). Source:
    cwl_eval 1.0.12 via ir_measures 0.4.3."""
    params = _args(ctx, params)
    c = _insq_patience(params.T)
    return columns(_expected_utility(ctx, params, lambda gains: c * (1.0 - gains),
                                     name="NERR11"))


@measure("RBP_cwl", order=1108, params=_NO_CUTOFF, **_CWL_EVAL, friendly="RBP",
         options={**_QUANTITY, "model": Option(str, choices=("cwl",), required=True,
                                               doc="cwl_eval's RBP, not trec_eval's rbp"),
                  "rel": Option(int, required=True, example=1,
                                doc="minimum label of gain 1 (required)"),
                  "p": Option(float, default=0.8, low=0.0, high=1.0, doc="persistence")},
         aliases={"ir_measures": "RBP(rel=,p=)"})
def rbp_cwl(ctx, params):
    """Rank-biased precision as cwl_eval computes it (ir_measures 0.4.3's ``RBP``).

    ``C(i) = p`` over cwl's 1000 positions, so ``W(i) = p^(i-1) / sum_{r<=1000}
    p^(r-1)`` and ``RBP = (1 - p) / (1 - p^1000) * sum_{i<=1000} p^(i-1) g(i)`` with
    binary gains ``g = [label >= rel]`` (negative labels count as 0, unjudged 0).
    trec_eval 10's ``rbp`` (``RBP(p=...)``) has no ``1 - p^1000`` normaliser, scores
    every rank and may use graded gains. No residual: ir_measures does not report one.
    Source: cwl_eval 1.0.12 via ir_measures 0.4.3.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"b": 2.0, "a": 1.0}},
    ...                    ["RBP(model='cwl', rel=1, p=0.5)"])
    >>> round(res.aggregate()["RBP(model='cwl', rel=1, p=0.5)"], 6)   # 0.5 * 0.5
    0.25
    """
    return columns(fixed_utility(ctx, *_rbp_model(ctx, params), name="RBP_cwl"))


def _rbp_model(ctx, params):
    return np.full(DEPTH, ctx.options["p"]), _binary_gains(ctx)


#: cwl_eval's binary measures (ir_measures' cwl_eval provider for ``P@k``, ``RR`` and
#: ``AP``): told apart from trec_eval's by ``model='cwl'``; ``rel`` is the label of gain 1.
_CWL_MODEL = Option(str, choices=("cwl",), required=True,
                    doc="cwl_eval's definition, not trec_eval's")
_CWL_REL = Option(int, default=1, doc="minimum label of gain 1")


@measure("P_cwl", order=1109, params=_CUTOFF, **_CWL_EVAL, friendly="P", friendly_cutoff=True,
         options={"model": _CWL_MODEL, "rel": _CWL_REL, **_QUANTITY},
         aliases={"ir_measures": "P@k (cwl_eval provider)"})
def precision_cwl(ctx, params):
    """Precision at k as cwl_eval computes it (``ir_measures.cwl_eval``'s ``P@k``).

    ``C(i) = 1`` for ``i < k``, else 0, so ``W(i) = 1/k`` on the first k of cwl's 1000
    positions and ``P@k = sum_{i<=k} g(i) / k`` with binary gains ``g = [label >= rel]``
    (negative labels count as 0, unjudged 0). It equals trec_eval's ``P@k`` for
    ``k <= 1000`` up to rounding (cwl adds ``1/k`` k times). Source: cwl_eval 1.0.12 via
    ir_measures 0.4.3.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"b": 2.0, "a": 1.0}},
    ...                    ["P(model='cwl')@2"])
    >>> res.aggregate()["P(model='cwl')@2"]
    0.5
    """
    return columns(fixed_utility(ctx, *_precision_model(ctx, params), name="P_cwl"))


def _precision_model(ctx, cutoff):
    return _until(min(cutoff, DEPTH)).astype(np.float64), _binary_gains(ctx)


@measure("RR_cwl", order=1110, params=_NO_CUTOFF, **_CWL_EVAL, friendly="RR",
         options={"model": _CWL_MODEL, "rel": _CWL_REL, **_QUANTITY},
         aliases={"ir_measures": "RR (cwl_eval provider)"})
def reciprocal_rank_cwl(ctx, params):
    """Reciprocal rank as cwl_eval computes it (``ir_measures.cwl_eval``'s ``RR``).

    ``C(i) = 1`` before the first document of gain 1, 0 from it on: ``1 / rank`` of the
    first relevant document within cwl's 1000 positions, else 0 (binary gains as in
    ``P(model='cwl')@k``). Source: cwl_eval 1.0.12 via ir_measures 0.4.3.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 1}}, {"q": {"b": 2.0, "a": 1.0}}, ["RR(model='cwl')"])
    >>> res.aggregate()["RR(model='cwl')"]
    0.5
    """
    return columns(_expected_utility(
        ctx, None, lambda gains: (np.cumsum(gains > 0, axis=1) == 0).astype(np.float64),
        _binary_gains(ctx), name="RR_cwl"))


@measure("AP_cwl", order=1111, params=_NO_CUTOFF, **_CWL_EVAL, friendly="AP",
         options={"model": _CWL_MODEL, "rel": _CWL_REL, **_QUANTITY},
         aliases={"ir_measures": "AP (cwl_eval provider)"})
def average_precision_cwl(ctx, params):
    """Average precision as cwl_eval computes it (``ir_measures.cwl_eval``'s ``AP``).

    With ``S(i) = sum_{j>=i} g(j) / j`` over cwl's 1000 positions, ``C(i) = S(i+1) /
    S(i)`` (0 where ``S(i+1) = 0``), so ``W(i)`` is proportional to ``S(i)`` and
    ``AP = sum_{rel i} P@i / #{relevant in the top 1000}``: the mean precision at the
    relevant documents *retrieved*, unlike trec_eval's ``map``, which divides by all
    relevant documents. 0 when none is retrieved. Binary gains as in
    ``P(model='cwl')@k``. Source: cwl_eval 1.0.12 via ir_measures 0.4.3.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 1, "c": 1}}, {"q": {"b": 2.0, "a": 1.0}},
    ...                    ["AP(model='cwl')", "AP"])
    >>> res.aggregate()   # cwl: P@2 over 1 retrieved; trec_eval: over 2 relevant
    {'AP': 0.25, "AP(model='cwl')": 0.5}
    """
    def continuation(gains):
        weighted = gains / _position()
        tail = np.cumsum(weighted[:, ::-1], axis=1)[:, ::-1]  # S(i)
        c = np.zeros_like(gains)
        np.divide(tail[:, 1:], tail[:, :-1], out=c[:, :-1], where=tail[:, 1:] > 0)
        return c

    return columns(_expected_utility(ctx, None, continuation, _binary_gains(ctx), name="AP_cwl"))


def fixed_utility(ctx, c: np.ndarray, gain: np.ndarray, *, name: str) -> np.ndarray:
    """``sum_i W(i) g(i)`` per query (or the ``quantity`` asked) of declaration ``name``
    for a continuation ``c`` over the 1000 positions that does not depend on the gains,
    ``gain`` per ranked entry."""
    return _expected_utility(ctx, None, lambda gains: np.broadcast_to(c, gains.shape), gain,
                             name=name)


#: The C/W/L measures whose continuation does not depend on the gains: name ->
#: ``model(ctx, params) -> (C over the 1000 positions, gain per ranked entry)``. Their value
#: is linear in the gains, so its expectation over tie orders is exact
#: (:mod:`irmetrics.measures.expected`).
FIXED_MODELS = {"SDCG": _sdcg_model, "INSQ": _insq_model, "RBP_cwl": _rbp_model,
                "P_cwl": _precision_model}
