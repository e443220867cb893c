"""Embeddings + labels → exact k-nearest-neighbour retrieval, judged by label."""

from __future__ import annotations

import numpy as np

from .. import device
from ..checks import check_bool, check_choice, check_positive_int
from ..engine import segments as sg
from ..engine.knn import BLOCK_CELLS, search
from ..exceptions import ParameterError, ShapeError
from .arrays import as_array, check_numeric
from ._ids import IdVocab
from ._lists import SparseJudgments, label_histogram, make_pair
from .matrix import query_vocab

METRICS = ("cosine", "euclidean", "dot")
BACKENDS = ("auto", "numpy", "faiss", "torch")


def _embeddings(value, name: str) -> np.ndarray:
    array = as_array(value, name)
    if array.ndim != 2:
        raise ShapeError(f"`{name}` must be 2-D (items x dimensions); got shape {array.shape}.")
    values = check_numeric(array, name)
    if not np.isfinite(values).all():
        raise ParameterError(f"`{name}` must be finite; got ±inf.")
    # numpy sums a row pairwise only where it is contiguous: C order makes the scores
    # independent of the input's layout (a transposed array's, the device road's).
    return np.ascontiguousarray(values)


def _labels(value, name: str, n: int) -> np.ndarray:
    array = as_array(value, name, allow_object=True)
    if array.shape != (n,):
        raise ShapeError(f"`{name}` must have shape ({n},) (one label per item); "
                         f"got {array.shape}.")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ParameterError(f"`{name}` must not contain NaN; got NaN.")
    return array


def _device_rows(tensor, value, name: str):
    """What :func:`_embeddings` makes of ``value``, computed where ``tensor`` (``value`` on
    its device) lives: float64 rows there, the same numbers bit for bit, so that they need
    not cross. Devices without exact float64 (MPS), rows whose float64 copy would exceed
    :data:`irmetrics.device.knn.RESCORE_BYTES` of device memory, and inputs the checks
    refuse (whose messages the host's checks give) take the host's road."""
    torch = device.import_torch()
    usable = (tensor.device.type in device.EXACT_DEVICES and tensor.ndim == 2
              and 8 * tensor.numel() <= device.knn.RESCORE_BYTES
              and not tensor.is_complex()
              and (not tensor.is_floating_point() or bool(torch.isfinite(tensor).all())))
    return tensor.to(torch.float64) if usable else _embeddings(value, name)


def _normalised(values, name: str):
    """Rows scaled to unit length, as ``values / np.linalg.norm(values, axis=1)[:, None]``
    (on the device for float64 tensors, bit for bit); zero rows refused."""
    if isinstance(values, np.ndarray):
        norms = np.linalg.norm(values, axis=1)
        zero = norms == 0
        unit = None if zero.any() else values / norms[:, None]
    else:
        unit, zero = device.unit_rows(device.import_torch(), values)
        zero = zero.cpu().numpy()
    if zero.any():
        raise ParameterError(f"`{name}` rows must be non-zero for metric='cosine'; got a zero "
                             f"row at index {int(np.flatnonzero(zero)[0])}.")
    return unit


def _exact_knn(queries, gallery, metric, k, self_excluded, chunk_size, doc_byte_rank,
               on_device=None):
    """Exact search: score descending, then doc id descending in byte order (trec_eval's
    order of equal scores); scores are minus the searcher's distances, bit for bit.

    ``on_device`` holds the (query, gallery) tensors when the device chooses the
    candidates (:func:`irmetrics.device.search`: the same result)."""
    # Cosine rows are unit already (zero rows refused), so their inner product is the score.
    distance = "euclidean" if metric == "euclidean" else "dot"
    options = {"tie_rank": -doc_byte_rank, "exclude_self": self_excluded,
               "non_finite_error": "`query_embeddings` and `gallery_embeddings` must give "
                                   f"finite {metric} scores; got an overflow (rescale the "
                                   "embeddings)."}
    if on_device is None:
        nn = search(queries, gallery, k, metric=distance,
                    block_rows=chunk_size or max(1, BLOCK_CELLS // max(len(gallery), 1)),
                    **options)
    else:
        nn = device.search(*on_device, k, host_query=queries, host_reference=gallery,
                           metric=distance, unit_rows=metric == "cosine", block_rows=chunk_size,
                           **options)
    return np.repeat(np.arange(len(queries)), nn.lengths), nn.indices, -nn.distances


def _device_pair(query_embeddings, gallery_embeddings):
    """The embeddings as tensors on one device (the gallery: the queries' when None).

    Host inputs (numpy arrays, CPU tensors) go to the other side's device, whichever side
    is on the host; two different devices are refused (one line)."""
    queries = device.as_tensor(query_embeddings, "query_embeddings")
    if gallery_embeddings is None:
        return queries, queries
    gallery = device.as_tensor(gallery_embeddings, "gallery_embeddings")
    if queries.device.type == "cpu" and gallery.device.type != "cpu":
        return device.as_tensor(queries, "query_embeddings", like=gallery), gallery
    return queries, device.as_tensor(gallery, "gallery_embeddings", like=queries)


def _faiss_knn(queries, gallery, metric, k, self_excluded, chunk_size):
    try:
        import faiss
    except ImportError as exc:
        raise ImportError("backend='faiss' needs faiss: pip install faiss-cpu") from exc
    index = (faiss.IndexFlatL2 if metric == "euclidean" else faiss.IndexFlatIP)(gallery.shape[1])
    index.add(np.ascontiguousarray(gallery, dtype=np.float32))
    wanted = k + int(self_excluded)
    rows_all, cols_all, scores_all = [], [], []
    for start in range(0, len(queries), chunk_size):
        stop = min(start + chunk_size, len(queries))
        found, ids = index.search(np.ascontiguousarray(queries[start:stop], dtype=np.float32),
                                  wanted)
        rows = np.repeat(np.arange(start, stop), wanted)
        ids, found = ids.reshape(-1).astype(np.int64), found.reshape(-1).astype(np.float64)
        keep = ids >= 0
        if self_excluded:
            keep &= ids != rows
        offsets = np.arange(0, (stop - start) * wanted + 1, wanted)
        keep &= sg.seg_cumcount(keep, offsets) <= k
        rows_all.append(rows[keep])
        cols_all.append(ids[keep])
        scores_all.append(-np.sqrt(np.maximum(found[keep], 0.0)) if metric == "euclidean"
                          else found[keep])
    return np.concatenate(rows_all), np.concatenate(cols_all), np.concatenate(scores_all)


def from_embeddings(query_embeddings, query_labels, gallery_embeddings=None, gallery_labels=None,
                    *, k, metric="cosine", exclude_self=True, chunk_size=None, backend="auto",
                    query_ids=None, doc_ids=None):
    """Qrels and run of exact k-nearest-neighbour retrieval, relevance = same label.

    Query ``i`` is ``q{i}``; gallery item ``g`` is ``d{g}``. The run holds each query's
    ``k`` best gallery items with their scores (similarity, or minus the distance).
    The qrels hold every gallery item with the query's label (label 1, so ``num_rel``
    is the label count, minus the query itself when the gallery is the query set and
    ``exclude_self``) and every retrieved item with another label (label 0).

    Parameters
    ----------
    query_embeddings : array_like, shape (Nq, D)
        Finite real numbers; tensors are read through DLPack/``__array__``.
    query_labels : array_like, shape (Nq,)
        Class labels (ints or strings), compared by equality.
    gallery_embeddings, gallery_labels : shape (Ng, D) and (Ng,), optional
        The searched set; both or neither. Default: the queries themselves.
    k : int >= 1
        Neighbours per query; clipped to the gallery size (minus the query itself).
    metric : {"cosine", "euclidean", "dot"}, default "cosine"
        Score = cosine similarity, ``-||q - g||_2``, or ``q . g``.
    exclude_self : bool, default True
        When the gallery is the query set, never retrieve or count a query itself
        (OML, PML ``ref_includes_query``). Ignored with a separate gallery.
    chunk_size : int >= 1, optional
        Queries per block; memory (the device's, on the device road) holds
        ``chunk_size x Ng`` scores at once (default: about two million scores per
        block; on a device, as many as 256 MiB hold). Results do not depend on it.
    backend : {"auto", "numpy", "faiss", "torch"}, default "auto"
        ``"auto"``: embeddings on a device (torch CUDA/MPS tensors, CuPy arrays) take
        the device road, everything else numpy's (CPU tensors without a copy).
        ``"torch"`` takes the device road whatever the inputs (CPU tensors and numpy
        arrays too: the very code a GPU runs). ``"numpy"`` copies device arrays to the
        host. The two roads give the same pair bit for bit (see Notes).
        ``"faiss"`` (if installed) searches with a flat faiss index in float32; its
        choice among items tied at the k-th place, and its rounding, may differ.
    query_ids : sequence of Nq distinct ids, optional
    doc_ids : sequence of Ng distinct ids, optional

    Returns
    -------
    (Qrels, Run)

    Notes
    -----
    Exactness and ties (numpy backend): the k retrieved items are the first k of the
    whole gallery in trec_eval order over the float64 scores: score descending, then
    doc id descending in byte order (``d9`` before ``d10``), and the run carries those
    same scores, so evaluating it (or its TREC files) ranks them in that order.
    Euclidean scores are ``-np.linalg.norm(q - g, axis=-1)`` bit for bit, whatever the
    embeddings' offset (the fast expansion ``|q|^2 - 2 q.g + |g|^2`` only preselects
    candidates, see :func:`irmetrics.engine.knn.search`); cosine and dot scores are
    ``np.sum(q * g)`` of the (unit) rows pair by pair, whatever the block or the BLAS.
    Memory is bounded by blocks: the full ``Nq x Ng`` matrix is never formed.

    The device road (:func:`irmetrics.device.search`): the device computes each block's
    scores in its own arithmetic (float32 for float16/bfloat16/float32 inputs, TF32 or
    bfloat16 products where torch's settings allow them) and sends, per query, every
    item within twice that arithmetic's proven rounding bound of the k-th best score;
    the host scores those in float64 as above and cuts in trec_eval order. The pair is
    the numpy road's, bit for bit; only the candidates cross, and the embeddings once
    (their float64 rows are what the host scores).

    Examples
    --------
    >>> import numpy as np
    >>> import irmetrics as irm
    >>> from irmetrics.adapters import from_embeddings
    >>> emb = np.array([[0.0], [1.0], [2.0], [10.0]])
    >>> qrels, run = from_embeddings(emb, [0, 0, 1, 1], k=2, metric="euclidean")
    >>> run.to_dict()["q0"]
    {'d1': -1.0, 'd2': -2.0}
    >>> irm.evaluate(qrels, run, ["P.1"]).to_dict()["q3"]
    {'P_1': 1.0}
    """
    check_choice("metric", metric, METRICS)
    check_choice("backend", backend, BACKENDS)
    k = check_positive_int("k", k)
    on_device = None
    if device.wants_device(backend, query_embeddings, gallery_embeddings):
        on_device = _device_pair(query_embeddings, gallery_embeddings)
    queries = (_embeddings(query_embeddings, "query_embeddings") if on_device is None
               else _device_rows(on_device[0], query_embeddings, "query_embeddings"))
    q_labels = _labels(query_labels, "query_labels", len(queries))
    if (gallery_embeddings is None) != (gallery_labels is None):
        raise ParameterError("`gallery_labels` must be given exactly when `gallery_embeddings` "
                             "is; got only one of them.")
    self_gallery = gallery_embeddings is None
    if self_gallery:
        gallery, g_labels = queries, q_labels
    else:
        gallery = (_embeddings(gallery_embeddings, "gallery_embeddings") if on_device is None
                   else _device_rows(on_device[1], gallery_embeddings, "gallery_embeddings"))
        g_labels = _labels(gallery_labels, "gallery_labels", len(gallery))
        if gallery.shape[1] != queries.shape[1]:
            raise ShapeError(f"`gallery_embeddings` must have {queries.shape[1]} dimensions like "
                             f"`query_embeddings`; got {gallery.shape[1]}.")
    q_code, g_code = label_codes(q_labels, g_labels)
    self_excluded = check_bool("exclude_self", exclude_self) and self_gallery
    n_gallery = len(gallery)
    if chunk_size is not None:
        chunk_size = check_positive_int("chunk_size", chunk_size)
    if metric == "cosine":
        queries = _normalised(queries, "query_embeddings")
        gallery = queries if self_gallery else _normalised(gallery, "gallery_embeddings")

    docs = (IdVocab.numbered("d", np.arange(n_gallery)) if doc_ids is None
            else IdVocab.from_user(doc_ids, "doc_ids", n_gallery))
    k = min(k, n_gallery - int(self_excluded))
    if k <= 0:
        run_q, run_g, scores = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    elif backend == "faiss":
        run_q, run_g, scores = _faiss_knn(queries, gallery, metric, k, self_excluded,
                                          chunk_size or max(1, BLOCK_CELLS // n_gallery))
    else:
        run_q, run_g, scores = _exact_knn(queries, gallery, metric, k, self_excluded,
                                          chunk_size, docs.byte_rank, on_device)
    judgments = label_judgments(query_vocab(query_ids, len(queries)), docs, q_code, g_code,
                                run_q.astype(np.int64), run_g.astype(np.int64), scores,
                                self_excluded)
    return make_pair(judgments)


def label_codes(query_labels: np.ndarray, gallery_labels: np.ndarray):
    """``(query codes, gallery codes)``: equal labels, equal int codes."""
    numeric = [labels.dtype.kind in "biuf" for labels in (query_labels, gallery_labels)]
    try:
        if numeric[0] != numeric[1]:  # numpy would silently turn 1 into "1"
            raise TypeError
        _, codes = np.unique(np.concatenate([query_labels, gallery_labels]),
                             return_inverse=True)
    except TypeError as exc:
        raise ParameterError("`query_labels` and `gallery_labels` must be comparable (both "
                             f"numbers or both strings); got {query_labels.dtype} and "
                             f"{gallery_labels.dtype}.") from exc
    codes = codes.reshape(-1)
    return codes[: len(query_labels)], codes[len(query_labels):]


def label_judgments(queries, docs, q_code, g_code, run_q, run_g, scores, self_excluded):
    """Closed world by label: a retrieved item is relevant (1) iff it has the query's
    label, every same-label gallery item is in the qrels; with ``self_excluded``,
    gallery item ``i`` is query ``i`` itself and neither retrieved nor counted."""
    n_q = len(q_code)
    labels = (q_code[run_q] == g_code[run_g]).astype(np.int64)
    top = int(max(q_code.max(initial=-1), g_code.max(initial=-1))) + 1
    label_count = np.bincount(g_code, minlength=top)
    n_rel = label_count[q_code]
    if self_excluded:
        own = np.arange(min(n_q, len(g_code)))
        n_rel[own] -= q_code[own] == g_code[own]
    hits = np.bincount(run_q, weights=labels, minlength=n_q).astype(np.int64)
    rel_hist, rel_levels, has_qrels, positive_total = label_histogram(
        run_q, labels, n_q, extra_positive=n_rel - hits)

    def qrels_arrays():
        # Every same-label gallery item (label 1), then retrieved items of other labels (0).
        by_label = np.argsort(g_code, kind="stable")
        starts = np.concatenate(([0], np.cumsum(label_count)))[q_code]
        counts = label_count[q_code]
        pair_q = np.repeat(np.arange(n_q), counts)
        offsets = np.concatenate(([0], np.cumsum(counts)))
        pair_g = by_label[np.repeat(starts, counts) + sg.ranks(offsets) - 1]
        if self_excluded:
            keep = pair_g != pair_q
            pair_q, pair_g = pair_q[keep], pair_g[keep]
        other = labels == 0
        return (np.concatenate([pair_q, run_q[other]]), np.concatenate([pair_g, run_g[other]]),
                np.concatenate([np.ones(len(pair_q), np.int64), labels[other]]))

    return SparseJudgments(queries, docs, run_q, run_g, scores, labels, rel_hist, rel_levels,
                           has_qrels, positive_total, qrels_arrays)
