"""Drop-in for open-metric-learning 4.0.0's metrics (``oml.functional.metrics`` and
``oml.metrics.embeddings``), computed by irmetrics.

Signatures and outputs follow OML 4.0.0; inputs are numpy arrays, lists of
arrays, or anything with ``__array__`` (CPU tensors); outputs are numpy arrays
(per query, float64) and Python floats (reduced) instead of float32 tensors.
``verbose`` only controls printing (OML's progress bars are not reproduced).

Differences from OML, all deliberate:

* Values are float64; OML's float32 tensors agree to about 1e-7.
* Category keys are the unique category values as Python scalars, in order of
  first appearance (OML keys a torch tensor of categories by element identity,
  producing duplicate keys).
* Mismatched lengths (``retrieved_ids`` vs ``gt_ids``, ``n_gts`` vs ``gt_tops``)
  raise :class:`~irmetrics.exceptions.ShapeError`; OML zips or asserts.
* ``calc_fnmr_at_fmr`` with empty ``neg_dist`` raises ParameterError (OML: an
  IndexError from ``np.quantile``); empty ``pos_dist`` gives NaN (OML: NaN and a
  RuntimeWarning).
* ``calc_pcf`` accumulates the eigenvalues and divides by their total, so the
  cumulative ratio never exceeds 1: ``pcf_variance=1`` deterministically gives
  ``(min(N, d) + 1) / d`` (OML's float32 ratios may land just above or below 1).
* ``EmbeddingMetrics`` ranks ties by gallery position (OML: ``torch.topk``
  order) and refuses to compute on an incompletely filled storage.
"""

from __future__ import annotations

from dataclasses import dataclass
from pprint import pprint

import numpy as np

from ..checks import check_choice
from ..device import BACKENDS, as_tensor, import_torch, wants_device
from ..device import search as device_search
from ..exceptions import ParameterError, ShapeError
from ..measures.metric_learning import (
    oml_cmc_values,
    oml_map_values,
    oml_precision_values,
)
from ._arrays import as_cutoffs, as_fractions, as_numpy, as_ragged
from ._knn import knn
from ._lists import binary_view

__all__ = ["calc_cmc", "calc_precision", "calc_map", "calc_retrieval_metrics",
           "calc_retrieval_metrics_rr", "calc_fnmr_at_fmr", "calc_fnmr_at_fmr_rr", "calc_pcf",
           "calc_topological_metrics", "same_label_pairs", "RetrievalResults",
           "EmbeddingMetrics"]

#: OML's key of the metrics over all queries (``oml.const.OVERALL_CATEGORIES_KEY``).
OVERALL_CATEGORIES_KEY = "OVERALL"
#: Dataset ``extra_data`` columns EmbeddingMetrics reads (``oml.const``).
CATEGORIES_COLUMN = "category"
SEQUENCE_COLUMN = "sequence"

_FAMILIES = (("cmc", oml_cmc_values), ("precision", oml_precision_values),
             ("map", oml_map_values))


# --------------------------------------------------------------------------- gt_tops API

def _gt_tops_view(gt_tops, n_gts):
    hits, offsets = as_ragged(gt_tops, "gt_tops")
    n_gts = as_numpy(n_gts, "n_gts", ndim=1)
    if n_gts.size and n_gts.dtype.kind not in "iu":
        raise ParameterError(f"`n_gts` must hold integers; got dtype {n_gts.dtype}.")
    if len(n_gts) != len(offsets) - 1:
        raise ShapeError(f"`n_gts` must have one entry per row of `gt_tops` "
                         f"({len(offsets) - 1}); got {len(n_gts)}.")
    if np.any(n_gts < 0):
        raise ParameterError("`n_gts` must be non-negative integers; got a negative count.")
    return binary_view(offsets, hits != 0, n_gts.astype(np.int64))


def calc_cmc(gt_tops, n_gts, top_k, verbose=False) -> list[np.ndarray]:
    """Cumulative matching characteristic at cutoffs ``top_k`` (OML 4.0.0 ``calc_cmc``).

    ``cmc@k = 1`` if any of the first k retrieved items is relevant, else 0. An
    empty row scores 1 when ``n_gt = 0`` and 0 otherwise. Computed by the registered
    measure ``oml_cmc`` (friendly ``CMC@k``).

    Parameters
    ----------
    gt_tops : sequence of 1-D bool arrays, or 2-D array
        ``gt_tops[i][j]`` is True iff the j-th retrieved item of query i is relevant.
    n_gts : sequence of int
        Number of relevant gallery items of each query.
    top_k : tuple of int
        Non-empty, positive.
    verbose : bool
        Ignored (OML shows a progress bar).

    Returns
    -------
    list of ndarray
        One float64 array of per-query values per k.

    Raises
    ------
    ParameterError
        ``top_k`` empty or not positive integers; negative ``n_gts``.
    ShapeError
        ``len(n_gts) != len(gt_tops)``.

    Examples
    --------
    >>> from irmetrics.compat.oml import calc_cmc
    >>> gt_tops = [[1, 0], [0, 1, 1], [0, 0], []]
    >>> [v.tolist() for v in calc_cmc(gt_tops, [2, 2, 1, 0], top_k=(1, 2))]
    [[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0]]
    """
    top_k = as_cutoffs(top_k, "top_k")
    view = _gt_tops_view(gt_tops, n_gts)
    return [oml_cmc_values(view, k) for k in top_k]


def calc_precision(gt_tops, n_gts, top_k, verbose=False) -> list[np.ndarray]:
    """OML precision at cutoffs ``top_k`` (OML 4.0.0 ``calc_precision``).

    ``precision@k = h_{k'} / min(n_gt, k')`` with ``k' = min(k, len(row))`` and
    ``h_i`` the relevant items among the first i. An empty row scores 1 when
    ``n_gt = 0`` and 0 otherwise; a non-empty row with ``n_gt = 0`` is NaN (0/0).
    Computed by the registered measure ``oml_precision`` (friendly ``OML_P@k``).

    Parameters and errors as :func:`calc_cmc`.

    Examples
    --------
    >>> from irmetrics.compat.oml import calc_precision
    >>> gt_tops = [[1, 0], [0, 1, 1], [0, 0], []]
    >>> [v.tolist() for v in calc_precision(gt_tops, [2, 3, 5, 2], top_k=(1, 2))]
    [[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]]
    >>> [v.tolist() for v in calc_precision([[0, 0, 0], [1, 0]], [0, 1], top_k=(1, 2, 5))]
    [[nan, 1.0], [nan, 1.0], [nan, 1.0]]
    """
    top_k = as_cutoffs(top_k, "top_k")
    view = _gt_tops_view(gt_tops, n_gts)
    return [oml_precision_values(view, k) for k in top_k]


def calc_map(gt_tops, n_gts, top_k, verbose=False) -> list[np.ndarray]:
    """OML mean average precision at cutoffs ``top_k`` (OML 4.0.0 ``calc_map``).

    ``map@k = (1 / h_{k'}) * sum_{i <= k', g_i = 1} h_i / i``, 0 when ``h_{k'} = 0``:
    normalised by the hits in the top k, not by ``n_gt``. An empty row scores 1
    when ``n_gt = 0`` and 0 otherwise. Computed by the registered measure
    ``oml_map`` (friendly ``OML_AP@k``).

    Parameters and errors as :func:`calc_cmc`.

    Examples
    --------
    >>> from irmetrics.compat.oml import calc_map
    >>> gt_tops = [[1, 0], [0, 1], [0, 0, 0, 0], []]
    >>> [v.tolist() for v in calc_map(gt_tops, [1, 1, 2, 0], top_k=(1, 2))]
    [[1.0, 0.0, 0.0, 1.0], [1.0, 0.5, 0.0, 1.0]]
    """
    top_k = as_cutoffs(top_k, "top_k")
    view = _gt_tops_view(gt_tops, n_gts)
    return [oml_map_values(view, k) for k in top_k]


# --------------------------------------------------------------------------- ids API

def _row_isin(r_flat, r_off, g_flat, g_off) -> np.ndarray:
    """Per-row ``isin(retrieved[i], gt[i])``, vectorised with one combined key per (row, id)."""
    if r_flat.size == 0:
        return np.zeros(0, dtype=bool)
    if g_flat.size == 0:
        return np.zeros(r_flat.size, dtype=bool)
    lo = min(int(r_flat.min()), int(g_flat.min()))
    span = max(int(r_flat.max()), int(g_flat.max())) - lo + 1
    r_rows = np.repeat(np.arange(len(r_off) - 1, dtype=np.int64), np.diff(r_off))
    g_rows = np.repeat(np.arange(len(g_off) - 1, dtype=np.int64), np.diff(g_off))
    r_key = r_rows * span + (r_flat.astype(np.int64) - lo)
    g_key = g_rows * span + (g_flat.astype(np.int64) - lo)
    return np.isin(r_key, g_key)


def _mean(values: np.ndarray) -> float:
    """Mean as OML reduces (NaN propagates; no queries gives NaN)."""
    return float(np.sum(values) / values.size) if values.size else float("nan")


def _reduce(metrics):
    if isinstance(metrics, dict):
        return {k: _reduce(v) for k, v in metrics.items()}
    if isinstance(metrics, np.ndarray):
        return _mean(metrics) if metrics.ndim else float(metrics)
    return metrics


def _categories(query_categories, n_queries: int):
    cats = as_numpy(query_categories, "query_categories", ndim=1)
    if len(cats) != n_queries:
        raise ShapeError(f"`query_categories` must have one entry per query ({n_queries}); "
                         f"got {len(cats)}.")
    _, first = np.unique(cats, return_index=True)
    return cats, cats[np.sort(first)]


def _retrieval_metrics_from_view(view, families, query_categories, reduce):
    metrics = {}
    for (name, values_of), top_k in zip(_FAMILIES, families):
        if top_k:
            metrics[name] = {k: values_of(view, k) for k in top_k}
    if query_categories is not None:
        cats, unique = _categories(query_categories, view.n_queries)
        by_category = {OVERALL_CATEGORIES_KEY: metrics}
        for c in unique:
            mask = cats == c
            by_category[c.item()] = {name: {k: v[mask] for k, v in per_k.items()}
                                     for name, per_k in metrics.items()}
        metrics = by_category
    return _reduce(metrics) if reduce else metrics


def _families(cmc_top_k, precision_top_k, map_top_k):
    # An empty family is allowed (OML skips it); anything else must be cutoffs (an int
    # such as ``cmc_top_k=5`` is refused by as_cutoffs with the parameter's name).
    return tuple(() if hasattr(t, "__len__") and len(t) == 0 else as_cutoffs(t, name)
                 for t, name in ((cmc_top_k, "cmc_top_k"), (precision_top_k, "precision_top_k"),
                                 (map_top_k, "map_top_k")))


def calc_retrieval_metrics(retrieved_ids, gt_ids, query_categories=None, cmc_top_k=(5,),
                           precision_top_k=(5,), map_top_k=(5,), reduce=True, verbose=True):
    """cmc@k, precision@k and map@k from retrieved and relevant gallery ids (OML 4.0.0).

    ``gt_tops[i] = isin(retrieved_ids[i], gt_ids[i])`` and ``n_gts[i] = len(gt_ids[i])``
    (duplicates in ``gt_ids`` count), then :func:`calc_cmc`, :func:`calc_precision`
    and :func:`calc_map`. An empty tuple of cutoffs skips its family.

    Parameters
    ----------
    retrieved_ids : sequence of 1-D int arrays
        Gallery indices in rank order, per query (any length, including 0).
    gt_ids : sequence of 1-D int arrays
        Relevant gallery indices, per query (may be empty).
    query_categories : 1-D array, optional
        Category of each query; adds one block per category beside ``"OVERALL"``.
    cmc_top_k, precision_top_k, map_top_k : tuple of int
    reduce : bool
        Mean over the (category's) queries instead of per-query arrays; NaN propagates.
    verbose : bool
        Ignored.

    Returns
    -------
    dict
        ``{"cmc": {k: v}, "precision": {k: v}, "map": {k: v}}``, or with categories
        ``{"OVERALL": {...}, category: {...}, ...}``; ``v`` is a float (reduced) or a
        float64 array (per query).

    Examples
    --------
    >>> from irmetrics.compat.oml import calc_retrieval_metrics
    >>> m = calc_retrieval_metrics([[], [], [2, 0]], [[], [1], []], cmc_top_k=(1, 2),
    ...                            precision_top_k=(1, 2), map_top_k=(1, 2), reduce=False)
    >>> m["cmc"][1].tolist(), m["precision"][2].tolist(), m["map"][2].tolist()
    ([1.0, 0.0, 0.0], [1.0, 0.0, nan], [1.0, 0.0, 0.0])
    """
    families = _families(cmc_top_k, precision_top_k, map_top_k)
    r_flat, r_off = as_ragged(retrieved_ids, "retrieved_ids", kind="iu")
    g_flat, g_off = as_ragged(gt_ids, "gt_ids", kind="iu")
    if len(r_off) != len(g_off):
        raise ShapeError(f"`retrieved_ids` and `gt_ids` must have the same number of queries; "
                         f"got {len(r_off) - 1} and {len(g_off) - 1}.")
    view = binary_view(r_off, _row_isin(r_flat, r_off, g_flat, g_off), np.diff(g_off))
    return _retrieval_metrics_from_view(view, families, query_categories, reduce)


def calc_retrieval_metrics_rr(rr, query_categories=None, cmc_top_k=(5,), precision_top_k=(5,),
                              map_top_k=(5,), reduce=True, verbose=True):
    """:func:`calc_retrieval_metrics` on ``rr.retrieved_ids`` and ``rr.gt_ids`` (OML 4.0.0).

    ``rr`` is any object with those attributes, e.g. :class:`RetrievalResults`.

    Examples
    --------
    >>> from irmetrics.compat.oml import RetrievalResults, calc_retrieval_metrics_rr
    >>> rr = RetrievalResults.from_lists(retrieved_ids=[[1, 0]], gt_ids=[[0]], distances=[[0.1, 0.2]])
    >>> calc_retrieval_metrics_rr(rr, cmc_top_k=(1, 2), precision_top_k=(), map_top_k=())
    {'cmc': {1: 0.0, 2: 1.0}}
    """
    return calc_retrieval_metrics(rr.retrieved_ids, rr.gt_ids, query_categories=query_categories,
                                  cmc_top_k=cmc_top_k, precision_top_k=precision_top_k,
                                  map_top_k=map_top_k, reduce=reduce, verbose=verbose)


# --------------------------------------------------------------------------- FNMR@FMR

def calc_fnmr_at_fmr(pos_dist, neg_dist, fmr_vals=(0.1,)) -> np.ndarray:
    """False non-match rate at false match rates ``fmr_vals`` (OML 4.0.0 ``calc_fnmr_at_fmr``).

    For each q: threshold ``T = quantile(neg_dist, q)`` (numpy's linear
    interpolation), then ``FNMR = #{pos_dist >= T} / len(pos_dist)`` (equality
    counts as a non-match, H(0) = 1).

    Parameters
    ----------
    pos_dist, neg_dist : 1-D arrays
        Distances of matching and of non-matching pairs.
    fmr_vals : tuple of float
        Non-empty, each in [0, 1].

    Returns
    -------
    ndarray of float64
        One value per q; NaN when ``pos_dist`` is empty.

    Raises
    ------
    ParameterError
        ``fmr_vals`` empty or outside [0, 1]; ``neg_dist`` empty.

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.compat.oml import calc_fnmr_at_fmr
    >>> pos = np.array([0, 0, 1, 1, 2, 2, 5, 5, 9, 9])
    >>> neg = np.array([3, 3, 4, 4, 6, 6, 7, 7, 8, 8])
    >>> calc_fnmr_at_fmr(pos, neg, fmr_vals=(0.1, 0.5)).tolist()
    [0.4, 0.2]
    """
    fmr_vals = as_fractions(fmr_vals, "fmr_vals")
    pos = as_numpy(pos_dist, "pos_dist", ndim=1, finite=True).astype(np.float64)
    neg = as_numpy(neg_dist, "neg_dist", ndim=1, finite=True).astype(np.float64)
    if neg.size == 0:
        raise ParameterError("`neg_dist` must be non-empty (the thresholds are its quantiles); "
                             "got an empty array.")
    thresholds = np.quantile(neg, fmr_vals)
    if pos.size == 0:
        return np.full(len(fmr_vals), np.nan)
    below = np.searchsorted(np.sort(pos), thresholds, side="left")
    return (pos.size - below) / pos.size


def calc_fnmr_at_fmr_rr(rr, fmr_vals=(0.1,)) -> dict:
    """FNMR@FMR over the retrieved pairs of ``rr`` (OML 4.0.0 ``calc_fnmr_at_fmr_rr``).

    Positives are retrieved items whose id is in ``gt_ids``, negatives the other
    retrieved items; only retrieved (top-n) items are used.

    Returns
    -------
    dict
        ``{"fnmr@fmr": {q: value}}``, or ``{}`` when ``fmr_vals`` is empty.

    Examples
    --------
    >>> from irmetrics.compat.oml import RetrievalResults, calc_fnmr_at_fmr_rr
    >>> rr = RetrievalResults.from_lists([[0, 1, 2]], [[0]], distances=[[0.5, 1.0, 2.0]])
    >>> calc_fnmr_at_fmr_rr(rr, fmr_vals=(0.0,))
    {'fnmr@fmr': {0.0: 0.0}}
    """
    if not len(fmr_vals):
        return {}
    r_flat, r_off = as_ragged(rr.retrieved_ids, "rr.retrieved_ids", kind="iu")
    g_flat, g_off = as_ragged(rr.gt_ids, "rr.gt_ids", kind="iu")
    d_flat, d_off = as_ragged(rr.distances, "rr.distances")
    if not np.array_equal(r_off, d_off):
        raise ShapeError("`rr.distances` must match `rr.retrieved_ids` row by row.")
    is_gt = _row_isin(r_flat, r_off, g_flat, g_off)
    values = calc_fnmr_at_fmr(d_flat[is_gt], d_flat[~is_gt], fmr_vals)
    return {"fnmr@fmr": dict(zip(fmr_vals, values.tolist()))}


# --------------------------------------------------------------------------- PCF

def calc_pcf(embeddings, pcf_variance) -> np.ndarray:
    """Principal components fraction (OML 4.0.0 ``calc_pcf``).

    Centre the columns, take the singular values ``s_i`` (``min(N, d)`` of them),
    eigenvalues ``s_i^2 / (N - 1)``, cumulative explained-variance ratios ``C_j``;
    for each r: ``n = 1 + #{j : not C_j > r}`` and ``PCF = n / d``. PCF can exceed 1
    (``r = 1`` gives ``(min(N, d) + 1) / d``); zero-variance data (NaN ratios) counts
    every component, as torch's ``searchsorted`` does (one row gives ``2 / d``).

    Parameters
    ----------
    embeddings : array, shape (N, d)
    pcf_variance : tuple of float
        Non-empty, each in [0, 1].

    Returns
    -------
    ndarray of float64
        One value per r; all NaN if the SVD fails.

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.compat.oml import calc_pcf
    >>> calc_pcf(np.eye(4, 10), pcf_variance=(0.5, 1)).tolist()
    [0.2, 0.5]
    """
    pcf_variance = as_fractions(pcf_variance, "pcf_variance")
    x = as_numpy(embeddings, "embeddings", ndim=2, finite=True).astype(np.float64)
    n, d = x.shape
    if d == 0:
        raise ShapeError("`embeddings` must have at least one column; got shape "
                         f"{x.shape}.")
    try:
        singular = np.linalg.svd(x - x.mean(axis=0), compute_uv=False)
    except np.linalg.LinAlgError:
        return np.full(len(pcf_variance), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        eigen = singular**2 / (n - 1)
        running = np.cumsum(eigen)
        ratio = running / running[-1] if running.size else running
    counts = (~(ratio[None, :] > np.asarray(pcf_variance)[:, None])).sum(axis=1)
    return (1 + counts) / d


def calc_topological_metrics(embeddings, pcf_variance, categories=None, verbose=False) -> dict:
    """``{"pcf": {r: value}}``, per category too (OML 4.0.0 ``calc_topological_metrics``).

    With ``categories`` (one per embedding) the result is ``{"OVERALL": {...}, c:
    {"pcf": ...}}``, each category's PCF computed on its own embeddings (categories
    in sorted order). An empty ``pcf_variance`` gives ``{}``.

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.compat.oml import calc_topological_metrics
    >>> calc_topological_metrics(np.eye(4, 10), pcf_variance=(0.5,))
    {'pcf': {0.5: 0.2}}
    """
    x = as_numpy(embeddings, "embeddings", ndim=2)
    if categories is not None:
        categories = as_numpy(categories, "categories", ndim=1)
        if len(categories) != len(x):
            raise ShapeError(f"`categories` must have one entry per embedding ({len(x)}); "
                             f"got {len(categories)}.")
    if not len(pcf_variance):
        return {}
    metrics = {"pcf": dict(zip(pcf_variance, calc_pcf(x, pcf_variance).tolist()))}
    if categories is None:
        return metrics
    out = {OVERALL_CATEGORIES_KEY: metrics}
    for c in np.unique(categories):  # a loop over categories, not queries
        out[c.item()] = {"pcf": dict(zip(pcf_variance,
                                         calc_pcf(x[categories == c], pcf_variance).tolist()))}
    return out


# --------------------------------------------------------------------------- EmbeddingMetrics

def same_label_pairs(query_labels, gallery_labels) -> tuple[np.ndarray, np.ndarray]:
    """All ``(query, gallery)`` position pairs with equal labels, by query then gallery position.

    Memory is proportional to the number of pairs (no query x gallery matrix).
    """
    order = np.argsort(gallery_labels, kind="stable")
    sorted_labels = gallery_labels[order]
    lo = np.searchsorted(sorted_labels, query_labels, side="left")
    hi = np.searchsorted(sorted_labels, query_labels, side="right")
    counts = hi - lo
    q = np.repeat(np.arange(len(query_labels), dtype=np.int64), counts)
    starts = np.repeat(lo - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    g = order[np.arange(q.size) + starts]
    return q, g


@dataclass
class RetrievalResults:
    """Retrieved gallery ids, their distances and the relevant ids, per query (CSR-backed).

    ``retrieved_ids``, ``distances`` and ``gt_ids`` are lists of 1-D arrays, as OML's
    ``RetrievalResults`` exposes them.
    """

    offsets: np.ndarray
    retrieved_flat: np.ndarray
    distances_flat: np.ndarray
    gt_offsets: np.ndarray
    gt_flat: np.ndarray

    @classmethod
    def from_lists(cls, retrieved_ids, gt_ids, distances=None) -> "RetrievalResults":
        r_flat, r_off = as_ragged(retrieved_ids, "retrieved_ids", kind="iu")
        g_flat, g_off = as_ragged(gt_ids, "gt_ids", kind="iu")
        if distances is None:
            d_flat = np.zeros(r_flat.size)
        else:
            d_flat, d_off = as_ragged(distances, "distances")
            if not np.array_equal(d_off, r_off):
                raise ShapeError("`distances` must match `retrieved_ids` row by row.")
        return cls(r_off, r_flat.astype(np.int64), d_flat.astype(np.float64), g_off,
                   g_flat.astype(np.int64))

    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    @property
    def retrieved_ids(self) -> list[np.ndarray]:
        return np.split(self.retrieved_flat, self.offsets[1:-1])

    @property
    def distances(self) -> list[np.ndarray]:
        return np.split(self.distances_flat, self.offsets[1:-1])

    @property
    def gt_ids(self) -> list[np.ndarray]:
        return np.split(self.gt_flat, self.gt_offsets[1:-1])


class EmbeddingMetrics:
    """Accumulate embeddings batch by batch, then compute OML's retrieval metrics (OML 4.0.0).

    Parameters
    ----------
    dataset : object
        OML's ``IQueryGalleryLabeledDataset`` interface, duck-typed: ``get_labels()``,
        ``get_query_ids()``, ``get_gallery_ids()`` (dataset positions), ``len()``,
        and optionally ``extra_data`` (a mapping) with ``"category"`` and/or
        ``"sequence"`` columns over all items.
    cmc_top_k, precision_top_k, map_top_k : tuple of int, default (5,)
    fmr_vals : tuple of float, default ()
        FNMR@FMR is computed (over the whole gallery) only when non-empty.
    pcf_variance : tuple of float, default (0.5,)
    postprocessor : None
        Re-ranking postprocessors are not supported (ParameterError if given).
    metrics_to_exclude_from_visualization : iterable of str
        Kept for signature compatibility (no plotting).
    return_only_overall_category : bool, default False
    visualize_only_overall_category : bool, default True
        Kept for signature compatibility.
    verbose : bool, default True
        Print the metrics after computing them.
    backend : {"auto", "numpy", "torch"}, default "auto"
        Keyword-only. Where the search's matrix products run: ``"auto"`` on the
        embeddings' device when :meth:`update` receives device tensors (CUDA, MPS,
        CuPy; they are then stored there too), ``"torch"`` through torch whatever they
        are, ``"numpy"`` on the host. The neighbours are the same on every road
        (:func:`irmetrics.device.search`); the embeddings are also kept on the host in
        float64 (the candidates are measured there, and PCF reads them).

    Notes
    -----
    ``compute_metrics()`` ranks, for every query, the gallery by exact Euclidean distance
    ascending (ties by gallery position; distances measured directly, except when
    ``fmr_vals`` asks for the whole gallery: then within rounding error), skipping the query itself (same dataset
    index) and, when a ``sequence`` column exists, gallery items of the query's
    sequence. ``gt_ids`` are the remaining gallery items with the query's label.
    The top ``max(cmc_top_k + precision_top_k + map_top_k)`` items are kept (the
    whole gallery when ``fmr_vals`` is set). Metrics are averaged per category
    (``category`` column of the queries); PCF is computed over all embeddings and
    per category over that category's items; ``fnmr@fmr`` is added to ``OVERALL``
    only, from the retrieved pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.compat.oml import EmbeddingMetrics
    >>> class Data:
    ...     extra_data = {}
    ...     def __len__(self): return 4
    ...     def get_labels(self): return np.array([0, 0, 1, 1])
    ...     def get_query_ids(self): return np.arange(4)
    ...     def get_gallery_ids(self): return np.arange(4)
    >>> em = EmbeddingMetrics(Data(), cmc_top_k=(1,), precision_top_k=(1,), map_top_k=(1,),
    ...                       pcf_variance=(), verbose=False)
    >>> em.setup()
    >>> em.update(np.array([[0.0], [0.1], [1.0], [2.0]]), [0, 1, 2, 3])
    >>> em.compute_metrics()
    {'OVERALL': {'cmc': {1: 0.75}, 'precision': {1: 0.75}, 'map': {1: 0.75}}}
    >>> em.get_worst_queries_ids("OVERALL/cmc/1", n_queries=1)   # 1.0 is nearer to 0.1 than to 2.0
    [2]
    """

    def __init__(self, dataset, cmc_top_k=(5,), precision_top_k=(5,), map_top_k=(5,),
                 fmr_vals=(), pcf_variance=(0.5,), postprocessor=None,
                 metrics_to_exclude_from_visualization=(), return_only_overall_category=False,
                 visualize_only_overall_category=True, verbose=True, *, backend="auto"):
        if postprocessor is not None:
            raise ParameterError("`postprocessor` must be None: irmetrics does not run OML "
                                 f"re-ranking postprocessors; got {postprocessor!r}.")
        for name in ("get_labels", "get_query_ids", "get_gallery_ids"):
            if not callable(getattr(dataset, name, None)):
                raise ParameterError(f"`dataset` must provide {name}(); got {type(dataset).__name__}.")
        self.dataset = dataset
        self.families = _families(cmc_top_k, precision_top_k, map_top_k)
        self.cmc_top_k, self.precision_top_k, self.map_top_k = cmc_top_k, precision_top_k, map_top_k
        self.fmr_vals = as_fractions(fmr_vals, "fmr_vals") if len(fmr_vals) else ()
        self.pcf_variance = as_fractions(pcf_variance, "pcf_variance") if len(pcf_variance) else ()
        self.metrics_to_exclude_from_visualization = ["fnmr@fmr", "pcf",
                                                      *metrics_to_exclude_from_visualization]
        self.return_only_overall_category = return_only_overall_category
        self.visualize_only_overall_category = visualize_only_overall_category
        self.verbose = verbose
        self.backend = check_choice("backend", backend, BACKENDS)
        self.retrieval_results = None
        self.metrics = None
        self.metrics_unreduced = None
        self._storage = None
        self._device_storage = None
        self._filled = None

    def setup(self, num_samples=None) -> None:
        """Reset the storage for ``num_samples`` items (default ``len(dataset)``)."""
        self.retrieval_results = self.metrics = self.metrics_unreduced = None
        self._num_samples = int(len(self.dataset) if num_samples is None else num_samples)
        self._storage = None
        self._device_storage = None
        self._filled = np.zeros(self._num_samples, dtype=bool)

    def update(self, embeddings, indices) -> None:
        """Store a batch of ``embeddings`` at dataset positions ``indices``."""
        if self._filled is None:
            self.setup()
        emb = as_numpy(embeddings, "embeddings", ndim=2, finite=True)
        idx = as_numpy(indices, "indices", ndim=1, kind="iu").astype(np.int64)
        if len(idx) != len(emb):
            raise ShapeError(f"`indices` must have one entry per embedding ({len(emb)}); "
                             f"got {len(idx)}.")
        if idx.size and (idx.min() < 0 or idx.max() >= self._num_samples):
            raise ParameterError(f"`indices` must lie in [0, {self._num_samples - 1}]; "
                                 f"got {idx.min()}..{idx.max()}.")
        if self._device_storage is not None or wants_device(self.backend, embeddings):
            self._store_on_device(embeddings, idx)
        if self._storage is None:
            self._storage = np.zeros((self._num_samples, emb.shape[1]), dtype=np.float64)
        self._storage[idx] = emb
        self._filled[idx] = True

    def _store_on_device(self, embeddings, idx) -> None:
        """Keep the batch on the device too (once one batch is there, every batch is), in
        a dtype that holds every batch exactly; batches stored before move there."""
        torch = import_torch()
        store = self._device_storage
        tensor = as_tensor(embeddings, "embeddings", like=store)
        if store is None:
            store = (torch.from_numpy(self._storage).to(tensor.device)
                     if self._filled.any() else tensor.new_zeros((self._num_samples,
                                                                   tensor.shape[1])))
        wide = torch.promote_types(store.dtype, tensor.dtype)
        if not wide.is_floating_point:
            wide = torch.float64
        store = store.to(wide)
        store[torch.as_tensor(idx, device=store.device)] = tensor.to(wide)
        self._device_storage = store

    def update_data(self, data, indices) -> None:
        """OML's dict form: ``data["embeddings"]``."""
        self.update(data["embeddings"], indices)

    def _extra(self, column):
        extra = getattr(self.dataset, "extra_data", None) or {}
        return np.asarray(extra[column]) if column in extra else None

    def _retrieve(self):
        labels = as_numpy(self.dataset.get_labels(), "dataset labels", ndim=1)
        query_ids = as_numpy(self.dataset.get_query_ids(), "query ids", ndim=1).astype(np.int64)
        gallery_ids = as_numpy(self.dataset.get_gallery_ids(), "gallery ids", ndim=1).astype(np.int64)
        n_gallery = len(gallery_ids)
        max_k = max([*self.families[0], *self.families[1], *self.families[2],
                     n_gallery if self.fmr_vals else 1])
        ignore = [(query_ids, gallery_ids)]
        sequence = self._extra(SEQUENCE_COLUMN)
        if sequence is not None:
            ignore.append((sequence[query_ids], sequence[gallery_ids]))
        # Retrieving the whole gallery (for FNMR@FMR), measuring every pair directly would
        # cost several matrix products; the order is exact either way and the distances
        # stay within the expansion's rounding error (OML's own are float32).
        if self._device_storage is None:
            nn = knn(self._storage[query_ids], self._storage[gallery_ids], max_k, ignore=ignore,
                     exact_distances=not self.fmr_vals)
        else:  # the same neighbours, the products on the device
            where = self._device_storage.device
            nn = device_search(self._device_storage[as_tensor(query_ids, "query ids").to(where)],
                               self._device_storage[as_tensor(gallery_ids, "gallery ids").to(where)],
                               max_k, host_query=self._storage[query_ids],
                               host_reference=self._storage[gallery_ids], ignore=ignore,
                               exact_distances=not self.fmr_vals)
        q_labels, g_labels = labels[query_ids], labels[gallery_ids]
        q_of_entry = np.repeat(np.arange(len(query_ids)), nn.lengths)
        hits = g_labels[nn.indices] == q_labels[q_of_entry]
        # gt_ids: same-label gallery items minus the ignored ones (self, same sequence).
        gt_q, gt_g = same_label_pairs(q_labels, g_labels)
        keep = np.ones(gt_q.size, dtype=bool)
        for q_keys, g_keys in ignore:
            keep &= q_keys[gt_q] != g_keys[gt_g]
        gt_q, gt_g = gt_q[keep], gt_g[keep]
        gt_offsets = np.concatenate(([0], np.cumsum(np.bincount(gt_q, minlength=len(query_ids)))))
        self.retrieval_results = RetrievalResults(nn.offsets, nn.indices, nn.distances,
                                                  gt_offsets.astype(np.int64), gt_g.astype(np.int64))
        return binary_view(nn.offsets, hits, np.diff(gt_offsets)), hits, query_ids

    def compute_metrics(self) -> dict:
        """Retrieval metrics (and PCF, FNMR@FMR) per category, averaged over queries.

        Returns
        -------
        dict
            ``{"OVERALL": {"cmc": {k: v}, "precision": ..., "map": ..., "pcf": {r: v},
            "fnmr@fmr": {q: v}}, category: {...}}`` with Python floats.

        Raises
        ------
        ParameterError
            Not every dataset item has been stored by :meth:`update`.
        """
        if self._filled is None or not self._filled.all():
            got = 0 if self._filled is None else int(self._filled.sum())
            total = 0 if self._filled is None else self._num_samples
            raise ParameterError(f"metrics have to be computed on fully collected data; "
                                 f"collected {got} of {total} items.")
        view, hits, query_ids = self._retrieve()
        categories = self._extra(CATEGORIES_COLUMN)
        query_categories = None if categories is None else categories[query_ids]
        unreduced = _retrieval_metrics_from_view(view, self.families, query_categories, False)
        topo = calc_topological_metrics(self._storage, self.pcf_variance, categories)
        if categories is None:
            unreduced = {OVERALL_CATEGORIES_KEY: {**unreduced, **topo}}
        else:
            unreduced = {c: {**unreduced[c], **topo.get(c, {})} for c in unreduced}
        if self.fmr_vals:
            d = self.retrieval_results.distances_flat
            unreduced[OVERALL_CATEGORIES_KEY]["fnmr@fmr"] = dict(zip(
                self.fmr_vals, calc_fnmr_at_fmr(d[hits], d[~hits], self.fmr_vals).tolist()))
        self.metrics_unreduced = unreduced
        self.metrics = _reduce(unreduced)
        out = self.metrics
        if self.return_only_overall_category:
            out = {OVERALL_CATEGORIES_KEY: out[OVERALL_CATEGORIES_KEY]}
        out = _reduce(out)  # a fresh copy, so callers cannot alter self.metrics
        if self.verbose:
            print("\nMetrics:")
            pprint(out)
        return out

    def get_worst_queries_ids(self, metric_name: str, n_queries: int) -> list[int]:
        """Positions (within the category's queries) of the ``n_queries`` lowest values.

        ``metric_name`` is a ``/``-joined path such as ``"OVERALL/cmc/5"``. Ties keep
        query order (OML: ``torch.topk`` order); NaN sorts last.
        """
        if self.metrics_unreduced is None:
            raise ParameterError("call compute_metrics() before get_worst_queries_ids().")
        flat = {}

        def walk(prefix, node):
            for key, value in node.items():
                path = f"{prefix}/{key}" if prefix else str(key)
                if isinstance(value, dict):
                    walk(path, value)
                else:
                    flat[path] = value

        walk("", self.metrics_unreduced)
        if metric_name not in flat:
            raise ParameterError(f"`metric_name` must be one of {sorted(flat)}; got {metric_name!r}.")
        values = np.atleast_1d(np.asarray(flat[metric_name], dtype=np.float64))
        order = np.argsort(values, kind="stable")
        return order[: min(int(n_queries), values.size)].tolist()
