"""Drop-in for pytorchltr 0.2.1's evaluation functions (``pytorchltr.evaluation``).

Batches are padded matrices: ``scores`` (B, L) or (B, L, 1), ``relevance`` (B, L)
integer labels, ``n`` (B,) the number of real documents per row (the rest is
padding). Outputs are float64 numpy arrays; torch is never imported.

Reproduced from pytorchltr 0.2.1: padded positions are ranked last but their
relevance still counts in ``dcg``/``ndcg`` (``arp`` masks it); ``k=None`` returns
per-rank values (B, L); ``k`` beyond the list gives the last rank; the ideal
ranking sorts the real documents by label, padding last; a zero ideal DCG is
replaced by 1 (so such rows score 0 when their DCG is 0); ``exp=True`` uses the
gain ``2^y - 1``.

Deliberate differences: pytorchltr breaks score ties uniformly at random; here a
tie keeps row order (the first document first), which is one of the orders
pytorchltr can draw, and padding keeps row order too. ``k < 1`` raises
:class:`~irmetrics.exceptions.ParameterError` (pytorchltr: ``IndexError`` for 0,
a wrong rank for negative k). Results are float64 (pytorchltr: float32).

These functions compute from the padded arrays because their per-rank outputs
and padding rules have no counterpart in a ranked list; the registered measures
``ltr_arp``, ``ltr_dcg``/``ltr_dcg_cut`` and ``ltr_ndcg``/``ltr_ndcg_cut`` give the
same values on unpadded (or zero-padded) batches, as the tests check.
"""

from __future__ import annotations

import numpy as np

from ..engine.gains import log2_discount
from ..exceptions import ParameterError, ShapeError
from ..measures.ltr import exp_gain
from ._arrays import as_numpy

__all__ = ["dcg", "ndcg", "arp", "generate_pytrec_eval"]


def _batch(scores, relevance, n):
    s = as_numpy(scores, "scores", ndim=(2, 3))
    if s.ndim == 3:
        if s.shape[2] != 1:
            raise ShapeError(f"`scores` must have shape (batch, list) or (batch, list, 1); "
                             f"got {s.shape}.")
        s = s[:, :, 0]
    rel = as_numpy(relevance, "relevance", ndim=2)
    if rel.shape != s.shape:
        raise ShapeError(f"`relevance` must have the shape of `scores` {s.shape}; got {rel.shape}.")
    counts = as_numpy(n, "n", ndim=1, kind="iu").astype(np.int64)
    if counts.shape[0] != s.shape[0]:
        raise ShapeError(f"`n` must have one entry per row ({s.shape[0]}); got {counts.shape[0]}.")
    if counts.size and (counts.min() < 0 or counts.max() > s.shape[1]):
        raise ParameterError(f"`n` must lie in [0, {s.shape[1]}]; got {counts.min()}..{counts.max()}.")
    s = s.astype(np.float64)
    if np.isnan(s).any():
        raise ParameterError("`scores` must not contain NaN.")
    return s, rel.astype(np.float64), counts


def _ranked_relevance(keys: np.ndarray, relevance: np.ndarray,
                      n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relevance in rank order: real documents by key descending (ties: row order), padding last."""
    b, width = keys.shape
    position = np.broadcast_to(np.arange(width), (b, width))
    padded = position >= n[:, None]
    # Row-wise lexicographic sort: padding flag, then key descending (real documents only;
    # padding ties, as pytorchltr's -inf scores do), then position.
    key = np.where(padded, 0.0, -keys)
    order = np.lexsort((position, key, padded), axis=1) if b else np.zeros((0, width), np.int64)
    return np.take_along_axis(relevance, order, axis=1), np.take_along_axis(padded, order, axis=1)


def _check_k(k):
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"`k` must be a positive integer or None; got {k!r}.")
    return int(k)


def _dcg_from(keys, relevance, n, k, exp):
    ranked, _ = _ranked_relevance(keys, relevance, n)
    gain = exp_gain(ranked) if exp else ranked
    discount = log2_discount(np.arange(1, ranked.shape[1] + 1))
    per_rank = np.cumsum(gain / discount, axis=1)
    if k is None:
        return per_rank
    if per_rank.shape[1] == 0:
        raise ParameterError("a cutoff needs a non-empty list (pytorchltr raises IndexError).")
    return per_rank[:, min(k, per_rank.shape[1]) - 1]


def dcg(scores, relevance, n, k=None, exp=True) -> np.ndarray:
    """Discounted cumulative gain per rank, or at k (pytorchltr 0.2.1 ``dcg``).

    ``DCG@i = sum_{j <= i} gain(y_{pi(j)}) / log2(1 + j)`` with ``gain(y) = 2^y - 1``
    (``exp=True``) or ``y``; padded positions rank last and still add their
    relevance.

    Parameters
    ----------
    scores : array, shape (B, L) or (B, L, 1)
    relevance : array of int, shape (B, L)
    n : array of int, shape (B,)
        Real documents per row.
    k : int, optional
        Cutoff; beyond L means L.
    exp : bool, default True

    Returns
    -------
    ndarray of float64
        Shape (B, L) when ``k`` is None, else (B,).

    Examples
    --------
    >>> from irmetrics.compat.pytorchltr import dcg
    >>> dcg([[1.0, 0.0, 1.5], [1.5, 0.2, 0.5]], [[0, 1, 0], [0, 1, 1]], [3, 3]).round(4).tolist()
    [[0.0, 0.0, 0.5], [0.0, 0.6309, 1.1309]]
    >>> dcg([[0.1, 0.9, 0.5, 0.3]], [[1, 0, 1, 5]], [3], exp=False).round(4).tolist()
    [[0.0, 0.6309, 1.1309, 3.2843]]
    """
    s, rel, counts = _batch(scores, relevance, n)
    return _dcg_from(s, rel, counts, _check_k(k), exp)


def ndcg(scores, relevance, n, k=None, exp=True) -> np.ndarray:
    """Normalised DCG per rank, or at k (pytorchltr 0.2.1 ``ndcg``).

    ``dcg(scores) / dcg(relevance as scores)`` element-wise; an ideal DCG of 0 is
    replaced by 1. Registered as ``ltr_ndcg`` / ``ltr_ndcg_cut`` (friendly
    ``LTR_nDCG``, ``LTR_nDCG@k``).

    Examples
    --------
    >>> from irmetrics.compat.pytorchltr import ndcg
    >>> scores = [[1.0, 0.0, 1.5], [1.5, 0.2, 0.5]]
    >>> relevance = [[0, 1, 0], [0, 1, 1]]
    >>> ndcg(scores, relevance, [3, 3], k=10).round(4).tolist()
    [0.5, 0.6934]
    >>> ndcg(scores, relevance, [3, 3]).round(4).tolist()
    [[0.0, 0.0, 0.5], [0.0, 0.3869, 0.6934]]
    """
    s, rel, counts = _batch(scores, relevance, n)
    k = _check_k(k)
    ideal = _dcg_from(rel, rel, counts, k, exp)
    ideal = np.where(ideal == 0.0, 1.0, ideal)
    return _dcg_from(s, rel, counts, k, exp) / ideal


def arp(scores, relevance, n) -> np.ndarray:
    """Average relevant position (pytorchltr 0.2.1 ``arp``): ``sum_i i * y_{pi(i)} / sum_i y_i``.

    Ranks are 1-based; graded labels weight them; padding is masked; a zero
    denominator is replaced by 1. Lower is better. Registered as ``ltr_arp``.

    Examples
    --------
    >>> from irmetrics.compat.pytorchltr import arp
    >>> arp([[1.0, 0.0, 1.5], [1.5, 0.2, 0.5]], [[0, 1, 0], [0, 1, 1]], [3, 3]).tolist()
    [3.0, 2.5]
    >>> arp([[0.1, 0.9, 0.5, 0.3]], [[1, 0, 1, 5]], [3]).tolist()
    [2.5]
    """
    s, rel, counts = _batch(scores, relevance, n)
    ranked, padded = _ranked_relevance(s, rel, counts)
    ranked = np.where(padded, 0.0, ranked)
    positions = np.arange(1, ranked.shape[1] + 1)
    total = ranked.sum(axis=1)
    return (ranked * positions).sum(axis=1) / np.where(total == 0.0, 1.0, total)


def generate_pytrec_eval(scores, relevance, n, qids=None, qid_offset=0, q_prefix="q",
                         d_prefix="d"):
    """pytrec_eval-style ``(qrel, run)`` dicts of a batch (pytorchltr 0.2.1).

    Query ids are ``q_prefix`` + ``qids[i]`` (or ``i + qid_offset``); document ids
    ``d_prefix`` + j for ``j < n[i]`` (padding excluded). qrel values are
    ``int(relevance)``, run values ``float(score)`` in the input's precision (a
    float32 0.2 becomes 0.20000000298023224, as with torch). Feed them to
    ``pytrec_eval.RelevanceEvaluator`` or :func:`irmetrics.evaluate` (``semantics=
    "pytrec_eval"`` reproduces its numbers).

    Examples
    --------
    >>> from irmetrics.compat.pytorchltr import generate_pytrec_eval
    >>> qrel, run = generate_pytrec_eval([[1.0, 0.0, 1.5]], [[0, 1, 0]], [2])
    >>> qrel, run
    ({'q0': {'d0': 0, 'd1': 1}}, {'q0': {'d0': 1.0, 'd1': 0.0}})
    """
    s = as_numpy(scores, "scores", ndim=(2, 3))
    if s.ndim == 3:
        s = s[:, :, 0]
    rel = as_numpy(relevance, "relevance", ndim=2)
    counts = as_numpy(n, "n", ndim=1, kind="iu").astype(np.int64)
    if rel.shape != s.shape or counts.shape[0] != s.shape[0]:
        raise ShapeError(f"`scores` {s.shape}, `relevance` {rel.shape} and `n` {counts.shape} "
                         "do not describe the same batch.")
    if counts.size and (counts.min() < 0 or counts.max() > s.shape[1]):
        raise ParameterError(f"`n` must lie in [0, {s.shape[1]}]; got {counts.min()}..{counts.max()}.")
    if qids is not None:
        ids = as_numpy(qids, "qids", ndim=1).astype(np.int64)
        if len(ids) != s.shape[0]:
            raise ShapeError(f"`qids` must have one entry per row ({s.shape[0]}); got {len(ids)}.")
    else:
        ids = np.arange(s.shape[0], dtype=np.int64) + int(qid_offset)
    width = s.shape[1]
    doc_ids = [f"{d_prefix}{j}" for j in range(width)]
    keep = np.arange(width)[None, :] < counts[:, None]
    # Python objects are built once from flat lists; the per-row loop only slices them.
    rel_list = rel[keep].astype(np.int64).tolist()
    score_list = s[keep].tolist()
    qrel, run = {}, {}
    start = 0
    for qid, count in zip(ids.tolist(), counts.tolist()):
        name = f"{q_prefix}{qid}"
        stop = start + count
        qrel[name] = dict(zip(doc_ids[:count], rel_list[start:stop]))
        run[name] = dict(zip(doc_ids[:count], score_list[start:stop]))
        start = stop
    return qrel, run
