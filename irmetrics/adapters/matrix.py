"""Score/relevance matrices (pytorchltr style) and TF-Similarity lookup masks."""

from __future__ import annotations

import math

import numpy as np

from .. import device
from ..checks import check_choice, check_positive_int
from ..exceptions import ParameterError, ShapeError
from .arrays import as_array, check_integral, check_labels, check_numeric, check_same_shape
from ._ids import IdVocab
from ._lists import DenseJudgments, SparseJudgments, make_pair

#: Synthesized scores must stay distinct after float32 rounding (pytrec_eval semantics).
MAX_SYNTHETIC_RANK = 1 << 24


def query_vocab(query_ids, n_queries: int) -> IdVocab:
    if query_ids is None:
        return IdVocab.numbered("q", np.arange(n_queries))
    return IdVocab.from_user(query_ids, "query_ids", n_queries)


def from_matrix(scores, relevance, n=None, *, query_ids=None, doc_ids=None, k=None,
                relevance_type="int", backend="auto"):
    """Qrels and run from a (queries x documents) score matrix and graded labels.

    Row ``i`` is query ``q{i}``, column ``j`` document ``d{j}`` (pytorchltr's
    ``generate_pytrec_eval`` ids). Every valid cell is judged (its label goes into
    the qrels, zeros included) and retrieved with its score.

    Parameters
    ----------
    scores : array_like, shape (B, L) or (B, L, 1)
        Finite real scores in valid cells, higher is better (float32 stays float32
        until output; its float64 widening is exact).
        Tensors are read through DLPack/``__array__`` (no torch import).
    relevance : array_like of int, shape (B, L)
        Graded labels (bool, integers, or integral floats). Negative labels are
        trec_eval's "judged but unjudged" (-2) code.
    n : array_like of int, shape (B,), optional
        Valid length of each row, ``0 <= n[i] <= L``. Cells ``j >= n[i]`` are padding
        and are ignored entirely (pytorchltr's dcg still adds their relevance; this
        adapter does not). A row with ``n[i] == 0`` yields no qrels and no run lines.
    query_ids : sequence of B distinct str or int, optional
        Replace ``q{i}``.
    doc_ids : sequence of L distinct str or int, optional
        Replace ``d{j}`` (the same ids for every row).
    k : int >= 1, optional
        Keep only each row's first ``k`` documents in the run, in trec_eval order; the
        qrels keep every valid cell.
    relevance_type : {"int", "float"}, default "int"
        ``"float"`` accepts finite real labels (graded judgments such as 0.5), used
        as gains by nDCG (see ``relevance="float"`` of :func:`irmetrics.evaluate`).
    backend : {"auto", "numpy", "torch"}, default "auto"
        With ``k``, scores on a device (torch CUDA/MPS tensors, CuPy arrays) are
        ranked there (``"torch"``: whatever the inputs, CPU tensors included): each
        row's k best cells, ties at the cut included, and per-row label counts are
        all that crosses to the host (the labels of the other cells only if a string
        table is asked for). The same pair as numpy's road, bit for bit. Without
        ``k`` every cell is in the run, so the matrix is copied to the host.

    Returns
    -------
    (Qrels, Run)
        Pass both to :func:`irmetrics.evaluate` (the lists are then built numerically,
        without strings); ``to_dict()`` gives pytrec_eval's dicts.

    Notes
    -----
    Ties: documents are ranked by score descending, then by doc id descending in byte
    order, as trec_eval ranks the written run (``"d9"`` before ``"d10"`` before
    ``"d1"``). The run's scores are the inputs widened to float64, so the result equals
    writing the pair as TREC files and evaluating them.

    Examples
    --------
    >>> import numpy as np
    >>> import irmetrics as irm
    >>> from irmetrics.adapters import from_matrix
    >>> scores = np.array([[1.0, 0.0, 1.5], [1.5, 0.2, 0.5]])
    >>> labels = np.array([[0, 1, 0], [0, 1, 1]])
    >>> qrels, run = from_matrix(scores, labels)
    >>> res = irm.evaluate(qrels, run, ["map", "ndcg"]).to_dict()
    >>> round(res["q0"]["map"], 6), round(res["q1"]["ndcg"], 6)
    (0.333333, 0.693426)
    >>> run.to_dict()["q0"]
    {'d2': 1.5, 'd0': 1.0, 'd1': 0.0}
    """
    check_choice("backend", backend, device.BACKENDS)
    if k is not None:
        k = check_positive_int("k", k)
        if device.wants_device(backend, scores, relevance):
            return _device_matrix(scores, relevance, n, query_ids, doc_ids, k, relevance_type)
    values, labels, lengths = _checked_matrix(scores, relevance, n, relevance_type)
    docs = (IdVocab.numbered("d", np.arange(values.shape[1])) if doc_ids is None
            else IdVocab.from_user(doc_ids, "doc_ids", values.shape[1]))
    judgments = DenseJudgments(query_vocab(query_ids, values.shape[0]), docs, values, labels,
                               lengths=lengths, top_k=k)
    return make_pair(judgments)


def _matrix_shape(shape: tuple) -> tuple:
    """(B, L) of a ``scores`` shape (B, L) or (B, L, 1)."""
    if len(shape) == 3 and shape[2] == 1:
        shape = shape[:2]
    if len(shape) != 2:
        raise ShapeError(f"`scores` must be 2-D (queries x documents); got shape {shape}.")
    return shape


def _checked_lengths(n, n_rows: int, n_cols: int):
    lengths = as_array(n, "n")
    if lengths.shape != (n_rows,):
        raise ShapeError(f"`n` must have shape ({n_rows},) (one length per row); "
                         f"got {lengths.shape}.")
    lengths = check_integral(lengths, "n")
    bad = (lengths < 0) | (lengths > n_cols)
    if bad.any():
        raise ParameterError(f"`n` must be lengths in [0, {n_cols}]; got "
                             f"{int(lengths[bad][0])!r} at row {int(np.flatnonzero(bad)[0])}.")
    return lengths


def _checked_matrix(scores, relevance, n, relevance_type):
    """``(values, labels, lengths)`` of a score matrix on the host, checked."""
    scores = as_array(scores, "scores")
    scores = scores.reshape(_matrix_shape(scores.shape))
    relevance = as_array(relevance, "relevance")
    check_same_shape(relevance, "relevance", scores.shape, "scores")
    n_rows, n_cols = scores.shape
    lengths = None
    if n is not None:
        lengths = _checked_lengths(n, n_rows, n_cols)
        valid = np.arange(n_cols) < lengths[:, None]
        # Padding may hold anything (NaN included): blank it before checking.
        scores = np.where(valid, scores, 0.0) if scores.dtype.kind in "fc" else scores
        relevance = np.where(valid, relevance, 0)
    values = check_numeric(scores, "scores", keep_float=True, finite=True)
    labels = check_labels(relevance, "relevance", relevance_type)
    return values, labels, lengths


def _device_matrix(scores, relevance, n, query_ids, doc_ids, k, relevance_type):
    """:func:`from_matrix` with ``k`` on the device road: the same pair."""
    torch = device.import_torch()
    check_choice("relevance_type", relevance_type, ("int", "float"))
    tensor = device.as_tensor(scores, "scores")
    tensor = tensor.reshape(_matrix_shape(tuple(tensor.shape)))
    labels = device.as_tensor(relevance, "relevance", like=tensor,
                              integers=relevance_type == "int")
    if labels.shape != tensor.shape:
        raise ShapeError(f"`relevance` must have the shape of `scores` {tuple(tensor.shape)}; "
                         f"got {tuple(labels.shape)}.")
    n_rows, n_cols = tensor.shape
    lengths = None if n is None else _checked_lengths(n, n_rows, n_cols)
    graded = relevance_type == "float"

    def host_checks():  # the numpy road's checks of the same values name the first bad cell
        _checked_matrix(device.to_host(tensor, "scores"), device.to_host(labels, "relevance"),
                        n, relevance_type)

    wide = labels
    if not graded and labels.dtype == getattr(torch, "uint64", None):
        wide = device.wide_integers(torch, labels, host_checks)
    table = device.LabelTable(torch, tensor, wide, lengths, graded)
    if not table.valid_values:
        host_checks()
    docs = (IdVocab.numbered("d", np.arange(n_cols)) if doc_ids is None
            else IdVocab.from_user(doc_ids, "doc_ids", n_cols))
    rows, cols, values = device.top_k_rows(tensor, k, tie_rank=docs.byte_rank,
                                           lengths=lengths)
    judgments = SparseJudgments(
        query_vocab(query_ids, n_rows), docs, rows, cols, values, table.take(rows, cols),
        table.rel_hist, table.rel_levels, table.has_qrels, table.positive_total,
        table.qrels_arrays, input_position=cols)
    return make_pair(judgments)


def from_match_mask(match_mask, distances=None, *, distance_threshold=math.inf,
                    n_relevant=None, query_ids=None):
    """Qrels and run from TF-Similarity style lookups (neighbours in rank order).

    Query ``i`` is ``q{i}``; its ``j``-th lookup is document ``d{j}``. A lookup is a hit
    (label 1) iff ``match_mask[i, j]`` and ``distances[i, j] <= distance_threshold``
    (inclusive, as TF-Similarity); other lookups are judged non-relevant (label 0).

    Parameters
    ----------
    match_mask : array_like of bool, shape (Q, K)
        Whether each lookup has the query's label, lookups in rank order.
    distances : array_like of float, shape (Q, K), optional
        Lookup distances (no NaN); required only for a finite ``distance_threshold``.
    distance_threshold : float, default inf
    n_relevant : array_like of int, shape (Q,), optional
        Total relevant items per query, at least the row's hits. The ``n_relevant -
        hits`` relevant items that were not retrieved enter the qrels as documents
        ``d{K}, d{K+1}, ...`` with label 1. Default: the hits in the row (then
        recall-type measures only see the window).
    query_ids : sequence of Q distinct ids, optional

    Returns
    -------
    (Qrels, Run)
        The run ranks every lookup with synthesized strictly decreasing scores
        ``K, K-1, ..., 1``, so trec_eval keeps the lookup order (no ties).

    Examples
    --------
    >>> import irmetrics as irm
    >>> from irmetrics.adapters import from_match_mask
    >>> qrels, run = from_match_mask([[False, True, False, True]])
    >>> round(irm.evaluate(qrels, run, ["ndcg_cut.4"]).aggregate()["ndcg_cut_4"], 6)
    0.650921
    """
    mask = as_array(match_mask, "match_mask")
    if mask.ndim != 2:
        raise ShapeError(f"`match_mask` must be 2-D (queries x lookups); got shape {mask.shape}.")
    if mask.dtype.kind != "b":
        mask = check_integral(mask, "match_mask")
        if ((mask != 0) & (mask != 1)).any():
            raise ParameterError("`match_mask` must be boolean (or 0/1); got other values.")
        mask = mask.astype(bool)
    n_rows, n_cols = mask.shape
    if n_cols > MAX_SYNTHETIC_RANK:
        raise ShapeError(f"`match_mask` must have at most {MAX_SYNTHETIC_RANK} lookups per "
                         f"query; got {n_cols}.")
    threshold = float(distance_threshold)
    if math.isnan(threshold):
        raise ParameterError(f"`distance_threshold` must be a number; got {distance_threshold!r}.")
    hits = mask
    if distances is not None:
        dist = as_array(distances, "distances")
        check_same_shape(dist, "distances", mask.shape, "match_mask")
        hits = mask & (check_numeric(dist, "distances") <= threshold)
    elif threshold != math.inf:
        raise ParameterError("`distances` must be given when `distance_threshold` is finite; "
                             "got None.")
    labels = hits.astype(np.int64)
    row_hits = labels.sum(axis=1)
    extra = None
    if n_relevant is not None:
        total = as_array(n_relevant, "n_relevant")
        if total.shape != (n_rows,):
            raise ShapeError(f"`n_relevant` must have shape ({n_rows},); got {total.shape}.")
        total = check_integral(total, "n_relevant")
        short = total < row_hits
        if short.any():
            i = int(np.flatnonzero(short)[0])
            raise ParameterError(f"`n_relevant` must be at least the hits of each row; got "
                                 f"{int(total[i])!r} for row {i} with {int(row_hits[i])} hits.")
        extra = total - row_hits
    scores = np.broadcast_to(np.arange(n_cols, 0, -1, dtype=np.float64), mask.shape)
    n_docs = n_cols + (int(extra.max()) if extra is not None and n_rows else 0)
    judgments = DenseJudgments(query_vocab(query_ids, n_rows),
                               IdVocab.numbered("d", np.arange(n_docs)), scores, labels,
                               extra_relevant=extra)
    return make_pair(judgments)
