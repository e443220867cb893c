"""Per-query neighbour lists (OML ``retrieved_ids`` / ``gt_ids`` style)."""

from __future__ import annotations

import numpy as np

from ..engine import segments as sg
from ..exceptions import DuplicateEntryError, ParameterError, ShapeError
from .arrays import as_rows, check_integral, check_numeric
from ._ids import IdVocab
from ._lists import SparseJudgments, label_histogram, make_pair
from .matrix import MAX_SYNTHETIC_RANK, query_vocab


def _check_gallery_ids(ids: np.ndarray, name: str, n_gallery: int | None) -> np.ndarray:
    ids = check_integral(ids, name)
    bad = ids < 0 if n_gallery is None else (ids < 0) | (ids >= n_gallery)
    if bad.any():
        bound = "non-negative gallery indices" if n_gallery is None else \
            f"gallery indices in [0, {n_gallery})"
        raise ParameterError(f"`{name}` must be {bound}; got {int(ids[bad][0])!r}.")
    return ids


def _check_distinct(query: np.ndarray, ids: np.ndarray, name: str) -> None:
    order = np.lexsort((ids, query))
    same = (query[order][1:] == query[order][:-1]) & (ids[order][1:] == ids[order][:-1])
    if same.any():
        t = order[1:][same][0]
        raise DuplicateEntryError(
            f"`{name}` must list each gallery index at most once per query; got "
            f"{int(ids[t])!r} twice for query {int(query[t])}", path=f"<{name}>",
            doc_id=str(int(ids[t])),
        )


def _member(query, ids, set_query, set_ids) -> np.ndarray:
    """Whether each (query, id) pair occurs among the (set_query, set_ids) pairs."""
    n = len(ids)
    tag = np.concatenate([np.zeros(n, np.int8), np.ones(len(set_ids), np.int8)])
    q, v = np.concatenate([query, set_query]), np.concatenate([ids, set_ids])
    order = np.lexsort((tag, v, q))
    # Pairs are distinct within each side, so a member is followed by its match.
    hit = (q[order][1:] == q[order][:-1]) & (v[order][1:] == v[order][:-1])
    found = np.zeros(len(q), dtype=bool)
    found[order[:-1][hit]] = True
    return found[:n]


def from_neighbours(retrieved_ids, gt_ids, *, scores=None, query_ids=None, doc_ids=None):
    """Qrels and run from retrieved neighbour lists and relevant sets (OML style).

    Query ``i`` is ``q{i}``; gallery item ``g`` is document ``d{g}``. The world is
    closed: every retrieved item is judged, with label 1 if it is in ``gt_ids[i]``
    and 0 otherwise, and every relevant item that was not retrieved is in the qrels
    with label 1 (so ``num_rel = len(gt_ids[i])``, OML's ``n_gt``).

    Parameters
    ----------
    retrieved_ids : list of 1-D int arrays, or 2-D int array (Q, K)
        Per query, retrieved gallery indices in rank order (ragged lists allowed,
        empty lists too). No index may repeat within a query.
    gt_ids : list of 1-D int arrays, or 2-D int array, Q rows
        Per query, the relevant gallery indices (any order, no repeats).
    scores : same layout as ``retrieved_ids``, optional
        Scores of the retrieved items, higher is better, non-increasing along each
        list (pass ``-distances``). Default: synthesized ``L_i, L_i - 1, ..., 1``, so
        trec_eval keeps the given rank order exactly.
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
    """
    ret, ret_len = as_rows(retrieved_ids, "retrieved_ids")
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
    _check_distinct(ret_q, ret, "retrieved_ids")
    _check_distinct(gt_q, gt, "gt_ids")

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

    labels = _member(ret_q, ret, gt_q, gt).astype(np.int64)
    missed = ~_member(gt_q, gt, ret_q, ret)
    qrels_q = np.concatenate([ret_q, gt_q[missed]])
    qrels_g = np.concatenate([ret, gt[missed]])
    qrels_labels = np.concatenate([labels, np.ones(int(missed.sum()), dtype=np.int64)])
    if docs is None:
        numbers, codes = np.unique(qrels_g, return_inverse=True)
        docs = IdVocab.numbered("d", numbers)
        codes = codes.reshape(-1).astype(np.int64, copy=False)
    else:
        codes = qrels_g
    run_docs = codes[: len(ret)]
    rel_hist, rel_levels, has_qrels, positive_total = label_histogram(qrels_q, qrels_labels, n_queries)
    judgments = SparseJudgments(
        query_vocab(query_ids, n_queries), docs, ret_q, run_docs, values, labels,
        rel_hist, rel_levels, has_qrels, positive_total, lambda: (qrels_q, codes, qrels_labels),
    )
    return make_pair(judgments)
