"""Drop-in for pytorch-metric-learning 2.9.0's ``AccuracyCalculator`` (kNN metrics only).

Exact k-nearest-neighbour search runs in numpy, block by block, so memory stays
bounded whatever ``k`` is; each block's rankings are scored by the registered
measures' value functions and only per-query values are kept.

Metrics (per query q with R_q relevant references, g the 0/1 correctness of its
kNN list, h_i the hits in the first i):

* ``precision_at_1`` = g_1
* ``r_precision`` = h_m / m with m = min(R_q, k) (registered ``ml_r_precision``)
* ``mean_average_precision_at_r`` = (1/R_q) sum_{i <= R_q, g_i} h_i / i, still over
  R_q when k < R_q (registered ``map_at_r``, friendly ``MAP@R``)
* ``mean_average_precision`` = (1/R_q) sum_{i <= k, g_i} h_i / i (trec_eval ``map``
  on the kNN list)
* ``mean_reciprocal_rank`` = 1 / rank of the first hit, or 0 (``recip_rank``)

R_q counts the references whose label matches q's (``label_comparison_fn``,
default equality), minus 1 when the reference set includes the queries. Queries
with R_q = 0 ("lone") are left out of every metric; if all are lone the result is
NaN (a list of NaN per distinct query label with ``return_per_class``).

The default kNN is exact (numpy, float64), euclidean on the raw embeddings as PML's
default ``FaissKNN``; ``normalize_embeddings=True`` gives ``CustomKNN(LpDistance())``
and ``distance="cosine"`` ranks by cosine similarity. A PML-style ``knn_func`` can be
given instead.

Deliberate differences from PML 2.9.0: ties in distance are broken by reference
index (faiss/torch leave them unspecified; faiss ranks float32 distances); when a
``knn_func`` pads with index -1 (faiss, k beyond the references) the padding is a
missing neighbour, while PML reads ``reference_labels[-1]`` there and can report a
MAP above 1; clustering metrics (AMI, NMI) are not supported (``kmeans_func`` and
``device`` are accepted and ignored); NaN or infinite embeddings raise
ParameterError (PML fails too, with assorted errors); values are float64 (PML
computes MRR in float32); labels are compared as given (PML casts them to float32
first, so labels above 2**24 can collide there).
"""

from __future__ import annotations

import numpy as np

from ..checks import check_bool, check_choice
from ..device import BACKENDS, as_tensor, wants_device
from ..device import search as device_search
from ..exceptions import ParameterError, ShapeError
from ..measures.average_precision import average_precision_values
from ..measures.metric_learning import (
    hit_values,
    map_at_r_values,
    ml_r_precision_values,
    reciprocal_rank_values,
)
from ._arrays import as_numpy
from ._knn import knn, normalize_rows
from ._lists import binary_view

__all__ = ["AccuracyCalculator"]

#: Per-query value function of each metric, given a binary view of the kNN lists.
METRICS = {
    "mean_average_precision": average_precision_values,
    "mean_average_precision_at_r": map_at_r_values,
    "mean_reciprocal_rank": reciprocal_rank_values,
    "precision_at_1": lambda view: hit_values(view, 1),
    "r_precision": ml_r_precision_values,
}
DISTANCES = ("euclidean", "cosine")
_UNSUPPORTED = ("AMI", "NMI")

#: kNN entries scored per block (bounds memory whatever ``k`` is).
_BLOCK_ENTRIES = 1 << 22


def _metric_names(include, exclude, name_include="include", name_exclude="exclude"):
    for value, name in ((include, name_include), (exclude, name_exclude)):
        if not isinstance(value, (tuple, list)):
            raise ParameterError(f"`{name}` must be a tuple or list; got {type(value).__name__}.")
        unknown = [m for m in value if m not in METRICS]
        if unknown:
            hint = " (clustering metrics are not supported)" if set(unknown) & set(_UNSUPPORTED) else ""
            raise ParameterError(f"`{name}` must name metrics among {sorted(METRICS)}{hint}; "
                                 f"got {unknown!r}.")
    chosen = list(include) if len(include) else list(METRICS)
    return [m for m in chosen if m not in exclude]


def _label_matcher(label_comparison_fn):
    """Element-wise label comparison: equality, or the user's function."""
    if label_comparison_fn is None:
        return np.equal
    return lambda a, b: np.asarray(label_comparison_fn(a, b), dtype=bool)


def _relevant_counts(q_labels, r_labels, own: bool, match, label_comparison_fn):
    """``(num_rel, lone, bin_counts)``: per query the references matching its label
    (minus itself when ``own``), whether it is lone (PML: no other match), and per
    distinct query label its number of matching references (PML's label counts)."""
    unique, inverse = np.unique(q_labels, return_inverse=True)
    inverse = inverse.reshape(-1)
    if label_comparison_fn is None:
        ref_unique, ref_counts = np.unique(r_labels, return_counts=True)
        pos = np.minimum(np.searchsorted(ref_unique, unique), max(len(ref_unique) - 1, 0))
        found = (ref_unique[pos] == unique) if len(ref_unique) else np.zeros(len(unique), bool)
        bin_counts = np.where(found, ref_counts[pos] if len(ref_unique) else 0, 0)
        matches_itself = np.ones(len(unique), dtype=np.int64)
    else:  # one call per distinct query label, as PML (a loop over classes, not queries)
        bin_counts = np.array([int(match(unique[i:i + 1], r_labels).sum())
                               for i in range(len(unique))], dtype=np.int64)
        matches_itself = match(unique, unique).astype(np.int64)
    bin_counts = bin_counts.astype(np.int64)
    num_rel = bin_counts[inverse] - int(own)
    lone = (bin_counts - matches_itself * int(own) <= 0)[inverse]
    return num_rel, lone, bin_counts


def _given_knn_blocks(knn_func, q, ref, num_k, own):
    """The user's ``knn_func`` result as ``(start, stop, offsets, neighbours)`` blocks."""
    _, indices = knn_func(q, num_k, ref, own)
    indices = as_numpy(indices, "knn_func indices", ndim=2, kind="iu").astype(np.int64)
    if indices.shape[0] != len(q) or (indices.size and indices.max() >= len(ref)):
        raise ShapeError(f"`knn_func` must return indices of shape ({len(q)}, k) into the "
                         f"{len(ref)} references; got shape {indices.shape}.")
    rows = max(1, _BLOCK_ENTRIES // max(indices.shape[1], 1))
    for start in range(0, len(q), rows):
        block = indices[start:start + rows]
        present = block >= 0  # faiss pads with -1: a missing neighbour, not the last item
        offsets = np.concatenate(([0], np.cumsum(present.sum(axis=1)))).astype(np.int64)
        yield start, start + len(block), offsets, block[present]


class AccuracyCalculator:
    """kNN retrieval accuracy of embeddings (pytorch-metric-learning 2.9.0).

    The positional parameters are PML 2.9.0's, in its order; ``distance`` and
    ``normalize_embeddings`` (keyword-only) choose irmetrics' exact kNN search when no
    ``knn_func`` is given.

    Parameters
    ----------
    include, exclude : tuple of str
        Metrics to compute (default: all five) / to leave out.
    avg_of_avgs : bool, default False
        Average per class first, then over classes (macro).
    return_per_class : bool, default False
        Return, per metric, the list of per-class means (classes in sorted order).
        Exclusive with ``avg_of_avgs``.
    k : None, int or "max_bin_count", default None
        Neighbours per query: None means every reference (minus the query itself),
        ``"max_bin_count"`` the largest reference count of a label present among the
        queries (minus 1 when references include the queries).
    label_comparison_fn : callable, optional
        ``fn(a, b) -> bool array``: whether labels ``a`` and ``b`` match, element-wise
        (default: equality). It is called with numpy arrays: two of equal length for
        the kNN hits, and ``(array([u]), reference_labels)`` per distinct query label to
        count its matches, as PML does.
    device : optional
        Accepted for PML compatibility and ignored: embeddings are searched where
        they live (see ``backend``).
    knn_func : callable, optional
        PML's kNN interface, ``knn_func(query, k, reference, ref_includes_query) ->
        (distances, indices)`` (array-likes, tensors accepted, shape ``(Q, k)``),
        called once with float64 numpy arrays; it removes the query itself when
        ``ref_includes_query``, as PML's do. Negative indices (faiss' padding when k
        exceeds the references) are treated as missing neighbours. Default: the exact
        search chosen by ``distance`` and ``normalize_embeddings``.
    kmeans_func : optional
        Accepted for PML compatibility and ignored (clustering metrics, AMI and NMI,
        are not supported).
    distance : {"euclidean", "cosine"}, default "euclidean"
        Keyword-only. Distance of the default search.
    normalize_embeddings : bool, default False
        Keyword-only. L2-normalise embeddings before the default search. False
        reproduces PML's default ``FaissKNN`` (``IndexFlatL2`` on the raw embeddings);
        True reproduces ``CustomKNN(LpDistance())``.
    backend : {"auto", "numpy", "torch"}, default "auto"
        Keyword-only. Where the default search's matrix products run: ``"auto"`` on
        the embeddings' device when they are on one (CUDA, MPS, CuPy), ``"torch"``
        always through torch (CPU tensors too), ``"numpy"`` on the host. The
        neighbours, so the metrics, are the same on every road
        (:func:`irmetrics.device.search`).

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.compat.pml import AccuracyCalculator
    >>> x = np.array([[0.0, 1.0], [0.1, 1.0], [1.0, 0.0], [1.0, 0.2], [1.0, 0.1]])
    >>> labels = np.array([0, 0, 1, 1, 0])
    >>> acc = AccuracyCalculator()
    >>> {k: round(v, 4) for k, v in acc.get_accuracy(x, labels).items()}
    {'mean_average_precision': 0.6167, 'mean_average_precision_at_r': 0.2, 'mean_reciprocal_rank': 0.6667, 'precision_at_1': 0.4, 'r_precision': 0.2}
    >>> AccuracyCalculator(include=("precision_at_1",), return_per_class=True).get_accuracy(
    ...     x, labels, x[:2], labels[:2])
    {'precision_at_1': [1.0]}
    """

    def __init__(self, include=(), exclude=(), avg_of_avgs=False, return_per_class=False,
                 k=None, label_comparison_fn=None, device=None, knn_func=None,
                 kmeans_func=None, *, distance="euclidean", normalize_embeddings=False,
                 backend="auto"):
        self.metrics = _metric_names(include, exclude)
        self.include, self.exclude = tuple(include), tuple(exclude)
        self.avg_of_avgs = check_bool("avg_of_avgs", avg_of_avgs)
        self.return_per_class = check_bool("return_per_class", return_per_class)
        if self.avg_of_avgs and self.return_per_class:
            raise ParameterError("`avg_of_avgs` and `return_per_class` must not both be True "
                                 "(they are mutually exclusive); got True and True.")
        if not (k is None or k == "max_bin_count"
                or (isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k > 0)):
            raise ParameterError(f"`k` must be None, 'max_bin_count' or a positive integer; "
                                 f"got {k!r}.")
        self.k = k
        for name, fn in (("label_comparison_fn", label_comparison_fn), ("knn_func", knn_func)):
            if fn is not None and not callable(fn):
                raise ParameterError(f"`{name}` must be None or callable; got {fn!r}.")
        self.label_comparison_fn = label_comparison_fn
        self.device = device
        self.knn_func = knn_func
        self.kmeans_func = kmeans_func
        self.distance = check_choice("distance", distance, DISTANCES)
        self.normalize_embeddings = check_bool("normalize_embeddings", normalize_embeddings)
        self.backend = check_choice("backend", backend, BACKENDS)

    def get_curr_metrics(self) -> list[str]:
        return list(self.metrics)

    def get_accuracy(self, query, query_labels, reference=None, reference_labels=None,
                     ref_includes_query=False, include=(), exclude=()) -> dict:
        """Compute the metrics for ``query`` against ``reference`` (default: the queries).

        Parameters
        ----------
        query : array, shape (Q, d)
            Finite numbers (NaN or inf raise ParameterError; PML fails on them too).
        query_labels : array, shape (Q,)
        reference : array, shape (G, d), optional
            None means the queries themselves, with ``ref_includes_query=True``.
        reference_labels : array, shape (G,), optional
        ref_includes_query : bool
            The first Q references are the queries: each query's own reference
            (same index) is never retrieved and R_q excludes it.
        include, exclude : tuple of str
            Override the constructor's choice for this call.

        Returns
        -------
        dict
            ``{metric: float}`` (or ``{metric: [per-class floats]}`` with
            ``return_per_class``); NaN (a list of NaN, one per distinct query label)
            when every query is lone (no reference shares its label).
        """
        metrics = _metric_names(include, exclude) if (len(include) or len(exclude)) else self.metrics
        tensors = None
        if self.knn_func is None and wants_device(self.backend, query, reference):
            q_dev = as_tensor(query, "query")
            tensors = (q_dev, q_dev if reference is None
                       else as_tensor(reference, "reference", like=q_dev))
        q = as_numpy(query, "query", ndim=2, finite=True).astype(np.float64)
        q_labels = as_numpy(query_labels, "query_labels", ndim=1)
        if len(q_labels) != len(q):
            raise ShapeError(f"`query_labels` must have one entry per query ({len(q)}); "
                             f"got {len(q_labels)}.")
        if len(q) == 0:
            raise ParameterError("`query` must hold at least one embedding; got shape "
                                 f"{q.shape}.")
        if reference is None:
            ref, r_labels, own = q, q_labels, True
        else:
            if reference_labels is None:
                raise ParameterError("`reference_labels` must be given with `reference`.")
            ref = as_numpy(reference, "reference", ndim=2, finite=True).astype(np.float64)
            r_labels = as_numpy(reference_labels, "reference_labels", ndim=1)
            if len(r_labels) != len(ref):
                raise ShapeError(f"`reference_labels` must have one entry per reference "
                                 f"({len(ref)}); got {len(r_labels)}.")
            own = check_bool("ref_includes_query", ref_includes_query)
            if own and not (ref.shape[0] >= q.shape[0] and ref.shape[1] == q.shape[1]
                            and np.allclose(q, ref[:len(q)])
                            and np.array_equal(q_labels, r_labels[:len(q)])):
                raise ParameterError("`reference` must start with `query` (and "
                                     "`reference_labels` with `query_labels`) when "
                                     "`ref_includes_query` is True; got other rows.")
        match = _label_matcher(self.label_comparison_fn)
        num_rel, lone, bin_counts = _relevant_counts(q_labels, r_labels, own, match,
                                                     self.label_comparison_fn)
        num_k = self._num_k(len(ref), bin_counts, own)
        if self.knn_func is None:
            if self.normalize_embeddings and self.distance == "euclidean":
                q = normalize_rows(q)
                ref = q if reference is None else normalize_rows(ref)
            blocks = self._search_blocks(q, ref, num_k, own, tensors)
        else:
            blocks = _given_knn_blocks(self.knn_func, q, ref, num_k, own)
        values = {m: np.zeros(len(q)) for m in metrics}
        for start, stop, offsets, neighbours in blocks:
            rows_of = np.repeat(np.arange(start, stop), np.diff(offsets))
            hits = np.asarray(match(q_labels[rows_of], r_labels[neighbours]), dtype=bool)
            view = binary_view(offsets, hits, np.maximum(num_rel[start:stop], 0))
            for m in metrics:
                values[m][start:stop] = METRICS[m](view)
        not_lone = ~lone
        if not not_lone.any():
            n_classes = len(np.unique(q_labels))
            return {m: [float("nan")] * n_classes if self.return_per_class else float("nan")
                    for m in metrics}
        return {m: self._average(values[m][not_lone], q_labels[not_lone]) for m in metrics}

    def _num_k(self, n_ref, bin_counts, own):
        if self.k is None:
            return n_ref - int(own)
        if self.k == "max_bin_count":
            return int(bin_counts.max()) - int(own)
        return int(self.k)

    def _search_blocks(self, q, ref, num_k, own, tensors=None):
        """``(start, stop, offsets, neighbours)`` of the exact search, block by block
        (the matrix products on the device of ``tensors``, the (query, reference)
        tensors, when given: the same neighbours)."""
        n_q = len(q)
        rows = max(1, _BLOCK_ENTRIES // max(num_k, 1))
        if tensors is not None and self.distance == "cosine":
            host_q, host_ref = normalize_rows(q), normalize_rows(ref)  # as the searcher reads
        else:
            host_q, host_ref = q, ref
        for start in range(0, n_q, rows):
            stop = min(start + rows, n_q)
            # The query's own reference (same index) is excluded by index, as PML's kNN
            # functions remove the self index when ref_includes_query.
            ignore = [(np.arange(start, stop), np.arange(len(ref)))] if own else []
            if tensors is None:
                nn = knn(q[start:stop], ref, num_k, metric=self.distance, ignore=ignore,
                         exact_distances=False)  # only the order is read
            else:
                nn = device_search(tensors[0][start:stop], tensors[1], num_k,
                                   host_query=host_q[start:stop], host_reference=host_ref,
                                   metric=self.distance, ignore=ignore, exact_distances=False,
                                   unit_rows=self.normalize_embeddings)
            yield start, stop, nn.offsets, nn.indices

    def _average(self, values: np.ndarray, labels: np.ndarray):
        if self.return_per_class or self.avg_of_avgs:
            classes, inverse = np.unique(labels, return_inverse=True)
            per_class = (np.bincount(inverse, weights=values, minlength=len(classes))
                         / np.bincount(inverse, minlength=len(classes)))
            if self.return_per_class:
                return per_class.tolist()
            return float(per_class.mean())
        return float(values.mean())
