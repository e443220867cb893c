"""Per-query neighbour lists (OML ``retrieved_ids`` / ``gt_ids`` style)."""

from __future__ import annotations

import numpy as np

from ..checks import check_bool
from ..engine import segments as sg
from ..exceptions import DuplicateEntryError, ParameterError, ShapeError
from .arrays import as_array, as_rows, check_integral, check_numeric
from ._ids import IdVocab
from ._lists import SparseJudgments, label_histogram, make_pair
from .embeddings import _labels, label_codes, label_judgments
from .matrix import MAX_SYNTHETIC_RANK, query_vocab


def _check_gallery_ids(ids: np.ndarray, name: str, n_gallery: int | None) -> np.ndarray:
    ids = check_integral(ids, name)
    bad = ids < 0 if n_gallery is None else (ids < 0) | (ids >= n_gallery)
    if bad.any():
        bound = "non-negative gallery indices" if n_gallery is None else \
            f"gallery indices in [0, {n_gallery})"
        raise ParameterError(f"`{name}` must be {bound}; got {int(ids[bad][0])!r}.")
    return ids


def _pair_keys(query: np.ndarray, ids: np.ndarray, width: int):
    """One int64 key per (query, id) pair, ordered as the pairs (query first), or None
    when ``query * width + id`` could overflow (then the pairs are sorted as pairs)."""
    top = int(query.max()) + 1 if len(query) else 1
    if top * max(width, 1) >= 2**62:
        return None
    return query * np.int64(width) + ids


def _check_distinct(query: np.ndarray, ids: np.ndarray, name: str, width: int) -> None:
    keys = _pair_keys(query, ids, width)
    if keys is not None:
        ordered = np.sort(keys)
        if not (ordered[1:] == ordered[:-1]).any():
            return
    # A duplicate (or keys too wide): find the first one by sorting the pairs.
    order = np.lexsort((ids, query))
    same = (query[order][1:] == query[order][:-1]) & (ids[order][1:] == ids[order][:-1])
    if same.any():
        t = order[1:][same][0]
        raise DuplicateEntryError(
            f"`{name}` must list each gallery index at most once per query; got "
            f"{int(ids[t])!r} twice for query {int(query[t])}", path=f"<{name}>",
            doc_id=str(int(ids[t])),
        )


def _member(query, ids, set_query, set_ids, width: int) -> np.ndarray:
    """Whether each (query, id) pair occurs among the (set_query, set_ids) pairs."""
    keys, set_keys = _pair_keys(query, ids, width), _pair_keys(set_query, set_ids, width)
    if keys is not None and set_keys is not None:
        set_keys = np.sort(set_keys)
        at = np.minimum(np.searchsorted(set_keys, keys), max(len(set_keys) - 1, 0))
        return (set_keys[at] == keys) if len(set_keys) else np.zeros(len(keys), dtype=bool)
    n = len(ids)
    tag = np.concatenate([np.zeros(n, np.int8), np.ones(len(set_ids), np.int8)])
    q, v = np.concatenate([query, set_query]), np.concatenate([ids, set_ids])
    order = np.lexsort((tag, v, q))
    # Pairs are distinct within each side, so a member is followed by its match.
    hit = (q[order][1:] == q[order][:-1]) & (v[order][1:] == v[order][:-1])
    found = np.zeros(len(q), dtype=bool)
    found[order[:-1][hit]] = True
    return found[:n]


def from_neighbours(retrieved_ids, gt_ids=None, *, scores=None, query_labels=None,
                    gallery_labels=None, exclude_self=False, query_ids=None, doc_ids=None):
    """Qrels and run from retrieved neighbour lists and relevant sets (OML style).

    Query ``i`` is ``q{i}``; gallery item ``g`` is document ``d{g}``. The world is
    closed: every retrieved item is judged, with label 1 if it is in ``gt_ids[i]``
    and 0 otherwise, and every relevant item that was not retrieved is in the qrels
    with label 1 (so ``num_rel = len(gt_ids[i])``, OML's ``n_gt``). Instead of
    ``gt_ids``, labels may say it: the relevant items of query ``i`` are the gallery
    items with its label (``torch.topk`` indices and class labels in, no per-query
    lists to build).

    Parameters
    ----------
    retrieved_ids : list of 1-D int arrays, or 2-D int array (Q, K)
        Per query, retrieved gallery indices in rank order (ragged lists allowed,
        empty lists too). No index may repeat within a query.
    gt_ids : list of 1-D int arrays, or 2-D int array, Q rows, optional
        Per query, the relevant gallery indices (any order, no repeats). Exactly one
        of ``gt_ids`` and the two label arrays is given.
    scores : same layout as ``retrieved_ids``, optional
        Scores of the retrieved items, higher is better, non-increasing along each
        list (pass ``-distances``). Default: synthesized ``L_i, L_i - 1, ..., 1``, so
        trec_eval keeps the given rank order exactly.
    query_labels, gallery_labels : array_like, shapes (Q,) and (G,), optional
        Class labels (ints or strings): relevant = same label; indices must be
        ``< G``, and documents are ``d0 .. d{G-1}``.
    exclude_self : bool, default False
        With labels: query ``i`` is gallery item ``i`` (the gallery is the query set,
        or starts with it): it is dropped from query ``i``'s list if there (the items
        after it move up) and not counted as relevant.
    query_ids : sequence of Q distinct ids, optional
    doc_ids : sequence of distinct ids, optional
        ``doc_ids[g]`` names gallery item ``g``; every index must be ``< len(doc_ids)``.

    Returns
    -------
    (Qrels, Run)

    Raises
    ------
    DuplicateEntryError
        An index repeats within a query's ``retrieved_ids`` or ``gt_ids``. OML counts
        repeated ``gt_ids`` in ``n_gt``; qrels cannot hold a document twice, so
        irmetrics refuses instead of silently changing ``n_gt`` (use ``np.unique``).

    Notes
    -----
    With ``scores``, equal scores are ordered by doc id descending in byte order, as
    trec_eval orders the written run. A query with an empty list and relevant items
    has qrels but no run lines: it is evaluated only with ``complete=True``. A query
    with neither has no lines at all and is not evaluated (OML scores it 1).

    Examples
    --------
    >>> import irmetrics as irm
    >>> from irmetrics.adapters import from_neighbours
    >>> qrels, run = from_neighbours([[3, 1, 4], [2, 0]], [[1, 5], [7]])
    >>> qrels.to_dict()["q0"]
    {'d3': 0, 'd1': 1, 'd4': 0, 'd5': 1}
    >>> irm.evaluate(qrels, run, ["map", "P.2"]).to_dict()["q0"]
    {'map': 0.25, 'P_2': 0.5}
    >>> labels = [0, 0, 1, 1, 0]
    >>> qrels, run = from_neighbours([[1, 4], [0, 2]], query_labels=labels[:2],
    ...                              gallery_labels=labels, exclude_self=True)
    >>> irm.evaluate(qrels, run, ["num_rel", "P.2"]).to_dict()["q1"]
    {'num_rel': 2.0, 'P_2': 0.5}
    """
    by_labels = query_labels is not None or gallery_labels is not None
    if by_labels == (gt_ids is not None) or (by_labels and (query_labels is None
                                                            or gallery_labels is None)):
        raise ParameterError("`gt_ids`, or both `query_labels` and `gallery_labels`, must be "
                             "given (not both ways); got "
                             f"{'both' if gt_ids is not None and by_labels else 'neither'}.")
    ret, ret_len = as_rows(retrieved_ids, "retrieved_ids")
    if by_labels:
        return _by_labels(ret, ret_len, scores, query_labels, gallery_labels,
                          check_bool("exclude_self", exclude_self), query_ids, doc_ids)
    gt, gt_len = as_rows(gt_ids, "gt_ids")
    if len(gt_len) != len(ret_len):
        raise ShapeError(f"`gt_ids` must have one row per query ({len(ret_len)}); "
                         f"got {len(gt_len)}.")
    n_queries = len(ret_len)
    n_gallery = None
    docs = None
    if doc_ids is not None:
        docs = IdVocab.from_user(doc_ids, "doc_ids", None)
        n_gallery = docs.size
    ret = _check_gallery_ids(ret, "retrieved_ids", n_gallery)
    gt = _check_gallery_ids(gt, "gt_ids", n_gallery)
    ret_q = np.repeat(np.arange(n_queries, dtype=np.int64), ret_len)
    gt_q = np.repeat(np.arange(n_queries, dtype=np.int64), gt_len)
    width = max(int(ret.max()) + 1 if len(ret) else 0, int(gt.max()) + 1 if len(gt) else 0)
    _check_distinct(ret_q, ret, "retrieved_ids", width)
    _check_distinct(gt_q, gt, "gt_ids", width)

    values = _run_scores(scores, ret_q, ret_len)
    labels = _member(ret_q, ret, gt_q, gt, width).astype(np.int64)
    missed = ~_member(gt_q, gt, ret_q, ret, width)
    qrels_q = np.concatenate([ret_q, gt_q[missed]])
    qrels_g = np.concatenate([ret, gt[missed]])
    qrels_labels = np.concatenate([labels, np.ones(int(missed.sum()), dtype=np.int64)])
    if docs is None:
        numbers, codes = _used_ids(qrels_g, width)
        docs = IdVocab.numbered("d", numbers)
    else:
        codes = qrels_g
    run_docs = codes[: len(ret)]
    rel_hist, rel_levels, has_qrels, positive_total = label_histogram(qrels_q, qrels_labels, n_queries)
    judgments = SparseJudgments(
        query_vocab(query_ids, n_queries), docs, ret_q, run_docs, values, labels,
        rel_hist, rel_levels, has_qrels, positive_total, lambda: (qrels_q, codes, qrels_labels),
    )
    return make_pair(judgments)


def _used_ids(ids: np.ndarray, width: int):
    """``(distinct ids ascending, code of every id)``: ``np.unique`` with its inverse, by a
    presence table when the ids are dense enough (no sort)."""
    if width > 4 * len(ids) + (1 << 20):
        numbers, codes = np.unique(ids, return_inverse=True)
        return numbers, codes.reshape(-1).astype(np.int64, copy=False)
    present = np.zeros(width, dtype=bool)
    present[ids] = True
    code_of = np.cumsum(present, dtype=np.int64) - 1
    return np.flatnonzero(present), code_of[ids]


def _by_labels(ret, ret_len, scores, query_labels, gallery_labels, exclude_self, query_ids,
               doc_ids):
    """:func:`from_neighbours` with relevance by label (the closed world of
    :func:`~irmetrics.adapters.from_embeddings`)."""
    n_queries = len(ret_len)
    q_labels = _labels(query_labels, "query_labels", n_queries)
    g_labels = as_array(gallery_labels, "gallery_labels", allow_object=True)
    g_labels = _labels(g_labels, "gallery_labels", len(g_labels) if g_labels.ndim else -1)
    n_gallery = len(g_labels)
    docs = (IdVocab.numbered("d", np.arange(n_gallery)) if doc_ids is None
            else IdVocab.from_user(doc_ids, "doc_ids", n_gallery))
    ret = _check_gallery_ids(ret, "retrieved_ids", n_gallery)
    ret_q = np.repeat(np.arange(n_queries, dtype=np.int64), ret_len)
    _check_distinct(ret_q, ret, "retrieved_ids", n_gallery)
    values = _run_scores(scores, ret_q, ret_len)
    if exclude_self:
        keep = ret != ret_q
        ret, ret_q, values = ret[keep], ret_q[keep], values[keep]
    q_code, g_code = label_codes(q_labels, g_labels)
    judgments = label_judgments(query_vocab(query_ids, n_queries), docs, q_code, g_code, ret_q,
                                ret, values, exclude_self)
    return make_pair(judgments)


def _run_scores(scores, ret_q, ret_len) -> np.ndarray:
    """The given scores (checked: finite, non-increasing along each list) or synthesized
    ``L_i, L_i - 1, ..., 1``."""
    ret_offsets = np.concatenate(([0], np.cumsum(ret_len))).astype(np.int64)
    if scores is None:
        if len(ret_len) and ret_len.max() > MAX_SYNTHETIC_RANK:
            raise ShapeError(f"`retrieved_ids` rows must hold at most {MAX_SYNTHETIC_RANK} "
                             f"items without `scores`; got {int(ret_len.max())}.")
        values = (np.repeat(ret_len, ret_len) - sg.ranks(ret_offsets) + 1).astype(np.float64)
    else:
        values, score_len = as_rows(scores, "scores")
        if not np.array_equal(score_len, ret_len):
            raise ShapeError("`scores` must have the layout of `retrieved_ids` (same row lengths).")
        values = check_numeric(values, "scores", finite=True)
        rising = np.flatnonzero((values[1:] > values[:-1]) & (ret_q[1:] == ret_q[:-1]))
        if len(rising):
            t = rising[0] + 1
            raise ParameterError(
                f"`scores` must be non-increasing along each list (higher is better; pass "
                f"-distances); got {values[t].item()!r} after {values[t - 1].item()!r} in "
                f"query {int(ret_q[t])}."
            )
    return values
