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

R_q counts the references with q's label, minus 1 when the reference set
includes the queries. Queries with R_q = 0 ("lone") are left out of every
metric; if all are lone the result is NaN.

Deliberate differences from PML 2.9.0: the kNN search is chosen by ``distance``
and ``normalize_embeddings`` instead of ``knn_func`` (the defaults reproduce
``CustomKNN(LpDistance())``, which L2-normalises; PML's default ``FaissKNN`` does
not normalise: pass ``normalize_embeddings=False`` to match it); ties in distance
are broken by reference index (faiss/torch leave them unspecified); clustering
metrics (AMI, NMI) and ``label_comparison_fn`` are not supported; values are
float64 (PML computes MRR in float32).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice
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


class AccuracyCalculator:
    """kNN retrieval accuracy of embeddings (pytorch-metric-learning 2.9.0).

    Parameters
    ----------
    include, exclude : tuple of str
        Metrics to compute (default: all five) / to leave out.
    avg_of_avgs : bool, default False
        Average per class first, then over classes (macro).
    k : None, int or "max_bin_count", default None
        Neighbours per query: None means every reference (minus the query itself),
        ``"max_bin_count"`` the largest label count (minus 1 when references include
        the queries).
    return_per_class : bool, default False
        Return, per metric, the list of per-class means (classes in sorted order).
    distance : {"euclidean", "cosine"}, default "euclidean"
    normalize_embeddings : bool, default True
        L2-normalise embeddings before the search (PML's ``LpDistance`` default).

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.compat.pml import AccuracyCalculator
    >>> x = np.array([[0.0, 1.0], [0.1, 1.0], [1.0, 0.0], [1.0, 0.2], [1.0, 0.1]])
    >>> labels = np.array([0, 0, 1, 1, 0])
    >>> acc = AccuracyCalculator(normalize_embeddings=False)
    >>> {k: round(v, 4) for k, v in acc.get_accuracy(x, labels).items()}
    {'mean_average_precision': 0.6167, 'mean_average_precision_at_r': 0.2, 'mean_reciprocal_rank': 0.6667, 'precision_at_1': 0.4, 'r_precision': 0.2}
    """

    def __init__(self, include=(), exclude=(), avg_of_avgs=False, k=None,
                 return_per_class=False, distance="euclidean", normalize_embeddings=True):
        self.metrics = _metric_names(include, exclude)
        self.include, self.exclude = tuple(include), tuple(exclude)
        if not (k is None or k == "max_bin_count"
                or (isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k > 0)):
            raise ParameterError(f"`k` must be None, 'max_bin_count' or a positive integer; "
                                 f"got {k!r}.")
        self.k = k
        self.avg_of_avgs = bool(avg_of_avgs)
        self.return_per_class = bool(return_per_class)
        self.distance = check_choice("distance", distance, DISTANCES)
        self.normalize_embeddings = bool(normalize_embeddings)

    def get_curr_metrics(self) -> list[str]:
        return list(self.metrics)

    def get_accuracy(self, query, query_labels, reference=None, reference_labels=None,
                     ref_includes_query=False, include=(), exclude=()) -> dict:
        """Compute the metrics for ``query`` against ``reference`` (default: the queries).

        Parameters
        ----------
        query : array, shape (Q, d)
        query_labels : array, shape (Q,)
        reference : array, shape (G, d), optional
            None means the queries themselves, with ``ref_includes_query=True``.
        reference_labels : array, shape (G,), optional
        ref_includes_query : bool
            The references contain the queries: each query's nearest neighbour (itself)
            is dropped and R_q excludes it.
        include, exclude : tuple of str
            Override the constructor's choice for this call.

        Returns
        -------
        dict
            ``{metric: float}`` (or ``{metric: [per-class floats]}`` with
            ``return_per_class``).
        """
        metrics = _metric_names(include, exclude) if (len(include) or len(exclude)) else self.metrics
        q = as_numpy(query, "query", ndim=2).astype(np.float64)
        q_labels = as_numpy(query_labels, "query_labels", ndim=1)
        if len(q_labels) != len(q):
            raise ShapeError(f"`query_labels` must have one entry per query ({len(q)}); "
                             f"got {len(q_labels)}.")
        self_reference = reference is None
        if self_reference:
            ref, r_labels, ref_includes_query = q, q_labels, True
        else:
            if reference_labels is None:
                raise ParameterError("`reference_labels` must be given with `reference`.")
            ref = as_numpy(reference, "reference", ndim=2).astype(np.float64)
            r_labels = as_numpy(reference_labels, "reference_labels", ndim=1)
            if len(r_labels) != len(ref):
                raise ShapeError(f"`reference_labels` must have one entry per reference "
                                 f"({len(ref)}); got {len(r_labels)}.")
        if self.normalize_embeddings and self.distance == "euclidean":
            q = normalize_rows(q)
            ref = q if self_reference else normalize_rows(ref)
        own = int(bool(ref_includes_query))
        unique, counts = np.unique(r_labels, return_counts=True)
        pos = np.searchsorted(unique, q_labels)
        found = (pos < len(unique)) & (unique[np.minimum(pos, len(unique) - 1)] == q_labels) \
            if len(unique) else np.zeros(len(q_labels), dtype=bool)
        num_rel = np.where(found, counts[np.minimum(pos, max(len(unique) - 1, 0))], 0) - own
        not_lone = num_rel > 0
        num_k = self._num_k(len(ref), counts, own)
        values = self._per_query(q, ref, q_labels, r_labels, num_rel, num_k,
                                 self_reference, own, metrics)
        return {m: self._average(values[m][not_lone], q_labels[not_lone]) for m in metrics}

    def _num_k(self, n_ref, counts, own):
        if self.k is None:
            return n_ref - own
        if self.k == "max_bin_count":
            return int(counts.max()) - own if counts.size else 0
        return int(self.k)

    def _per_query(self, q, ref, q_labels, r_labels, num_rel, num_k, self_reference, own, metrics):
        """Per-query metric values, scoring the kNN lists block by block."""
        n_q = len(q)
        out = {m: np.zeros(n_q) for m in metrics}
        rows = max(1, _BLOCK_ENTRIES // max(num_k + own, 1))
        for start in range(0, n_q, rows):
            stop = min(start + rows, n_q)
            if self_reference:
                # The query itself is excluded by index (it is its own nearest neighbour).
                own_index = np.arange(start, stop)
                nn = knn(q[start:stop], ref, num_k, metric=self.distance,
                         ignore=[(own_index, np.arange(len(ref)))], exact_distances=False)
                offsets, neighbours = nn.offsets, nn.indices
            else:
                nn = knn(q[start:stop], ref, num_k + own, metric=self.distance,
                         exact_distances=False)
                offsets, neighbours = nn.offsets, nn.indices
                if own:  # PML drops the first neighbour of every row (the query itself)
                    keep = np.ones(neighbours.size, dtype=bool)
                    keep[offsets[:-1][np.diff(offsets) > 0]] = False
                    neighbours = neighbours[keep]
                    lengths = np.maximum(np.diff(offsets) - 1, 0)
                    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
            rows_of = np.repeat(np.arange(stop - start), np.diff(offsets))
            hits = r_labels[neighbours] == q_labels[start:stop][rows_of]
            view = binary_view(offsets, hits, np.maximum(num_rel[start:stop], 0))
            for m in metrics:
                out[m][start:stop] = METRICS[m](view)
        return out

    def _average(self, values: np.ndarray, labels: np.ndarray):
        if self.return_per_class or self.avg_of_avgs:
            classes, inverse = np.unique(labels, return_inverse=True)
            per_class = (np.bincount(inverse, weights=values, minlength=len(classes))
                         / np.bincount(inverse, minlength=len(classes))) if classes.size \
                else np.zeros(0)
            if self.return_per_class:
                return per_class.tolist()
            return float(per_class.mean()) if per_class.size else float("nan")
        return float(values.mean()) if values.size else float("nan")
