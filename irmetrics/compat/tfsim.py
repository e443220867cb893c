"""Drop-in for TensorFlow-Similarity 0.17.1's retrieval metrics (``tensorflow_similarity.retrieval_metrics``).

``BNDCG``, ``RecallAtK``, ``PrecisionAtK`` and ``MapAtK`` follow tensorflow-similarity
0.17.1 (its retrieval metrics are the code of commit dc506d6), where ``MapAtK`` is a
``PrecisionAtK`` subclass (the December 2022 refactor); outputs recorded from the real
library are replayed in ``tests/compat/test_compat_goldens.py``. Each metric object is built
with the original keyword arguments and evaluated with ``compute(*, query_labels=,
match_mask=, lookup_distances=)``; the result is a Python float. TensorFlow is never
imported.

Inputs: ``query_labels`` (Q,), ``match_mask`` (Q, K') bool, ``lookup_distances``
(Q, K') — the neighbours of each query in lookup order (distance ascending).

Deliberate differences: results are float64 (TF: float32, about 1e-7 apart); a
``BNDCG`` window shorter than ``k`` after ``drop_closest_lookup`` raises
:class:`~irmetrics.exceptions.ShapeError` (TF fails with a shape error inside its
kernels); NaN or infinite ``lookup_distances`` and negative counts in ``r`` raise
:class:`~irmetrics.exceptions.ParameterError` (TF silently treats a NaN distance as
beyond every threshold and divides by a negative count).
"""

from __future__ import annotations

import math

import numpy as np

from ..checks import check_choice
from ..exceptions import ParameterError, ShapeError
from ..measures.context import safe_div
from ..engine import segments as sg
from ..measures.metric_learning import binary_ndcg_window_values, hit_values
from ._arrays import as_numpy
from ._lists import hits_matrix_view

__all__ = ["RetrievalMetric", "BNDCG", "RecallAtK", "PrecisionAtK", "MapAtK"]

AVERAGES = ("micro", "macro")


def _per_label_mean(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean of ``values`` within each distinct label (first-appearance order)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    sums = np.bincount(inverse, weights=values)
    counts = np.bincount(inverse)
    means = sums / counts
    return means[np.argsort(first)]


class RetrievalMetric:
    """Base of the TF-Similarity retrieval metrics: name, k, threshold, averaging, shape checks.

    Parameters
    ----------
    name : str
    canonical_name : str
    k : int, default 5
        Neighbours the metric looks at.
    distance_threshold : float, default inf
        Used by BNDCG only: a neighbour counts as a hit only if its distance is <= it.
    average : {"micro", "macro"}
        ``"micro"``: mean over queries; ``"macro"``: mean over labels of the per-label mean.
    drop_closest_lookup : bool, default False
        Skip the first neighbour (the query itself when queries are indexed).
    """

    def __init__(self, name="", canonical_name="", k=5, distance_threshold=math.inf,
                 average="micro", drop_closest_lookup=False):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ParameterError(f"`k` must be a positive integer; got {k!r}.")
        self._name = name
        self.canonical_name = canonical_name
        self.k = int(k)
        self.distance_threshold = distance_threshold
        self.average = average
        self.drop_closest_lookup = bool(drop_closest_lookup)

    @property
    def name(self) -> str:
        if self.distance_threshold and self.distance_threshold != math.inf:
            return f"{self._name}@{self.k} : distance_threshold@{self.distance_threshold}"
        return f"{self._name}@{self.k}"

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{self.canonical_name} : {self.name}"

    def get_config(self) -> dict:
        return {"name": str(self.name), "canonical_name": str(self.canonical_name),
                "k": int(self.k), "distance_threshold": float(self.distance_threshold)}

    def _inputs(self, query_labels, match_mask):
        labels = as_numpy(query_labels, "query_labels").reshape(-1)
        mask = as_numpy(match_mask, "match_mask", ndim=2)
        if mask.shape[1] < self.k:
            raise ShapeError(f"The number of neighbors must be >= K. Number of neighbors is "
                             f"{mask.shape[1]} but K is {self.k}.")
        if mask.shape[0] != labels.shape[0]:
            raise ShapeError(f"The number of lookup sets must equal the number of query labels. "
                             f"Number of lookup sets is {mask.shape[0]} but the number of query "
                             f"labels is {labels.shape[0]}.")
        return labels, mask.astype(bool)

    @property
    def _start(self) -> int:
        return 1 if self.drop_closest_lookup else 0

    def _full_window(self, mask):
        """Columns ``[s, s + k)``; they must all exist (the originals divide by k ranks)."""
        s = self._start
        if mask.shape[1] < s + self.k:
            raise ShapeError(f"with drop_closest_lookup the number of neighbors must be >= K + 1; "
                             f"got {mask.shape[1]} for K = {self.k}.")
        return mask[:, s:s + self.k]

    def _average(self, per_query: np.ndarray, labels: np.ndarray, *, no_nan=False) -> float:
        check_choice("average", self.average, AVERAGES)
        if self.average == "micro":
            return float(per_query.mean()) if per_query.size else float("nan")
        means = _per_label_mean(per_query, labels)
        if no_nan and means.size == 0:
            return 0.0
        return float(means.sum() / means.size) if means.size else float("nan")


class BNDCG(RetrievalMetric):
    """Binary normalised DCG@k (TensorFlow-Similarity ``BNDCG``, commit dc506d6).

    A neighbour is a valid hit iff ``match_mask`` is True **and** its distance is
    ``<= distance_threshold``. Over the window ``v`` of columns ``[s, s + k)``:
    ``DCG = sum_i v_i / log2(i + 1)``; ``IDCG`` is the same sum over ``v`` sorted
    descending, i.e. built from the window's own hits; per query ``DCG / IDCG``, 0
    when there is no hit. The registered measure ``tfsim_ndcg`` (friendly
    ``TFSim_nDCG@k``) is the same formula without the threshold.

    Examples
    --------
    The library's unit-test data: labels ``[1, 1, 1, 0]``, distances ``[0, .1, .2]``,
    matches ``[T, T, F]`` x 3 and ``[F, F, T]``.

    >>> import numpy as np
    >>> from irmetrics.compat.tfsim import BNDCG
    >>> labels = np.array([1, 1, 1, 0])
    >>> dist = np.tile([0.0, 0.1, 0.2], (4, 1))
    >>> mask = np.array([[1, 1, 0]] * 3 + [[0, 0, 1]], dtype=bool)
    >>> BNDCG(k=3, distance_threshold=0.1).compute(query_labels=labels, lookup_distances=dist,
    ...                                            match_mask=mask)
    0.75
    >>> BNDCG(k=2, average="macro").compute(query_labels=labels, lookup_distances=dist,
    ...                                     match_mask=mask)
    0.5
    """

    def __init__(self, name="ndcg", k=5, distance_threshold=math.inf, average="micro",
                 drop_closest_lookup=False, canonical_name="ndcg@k"):
        super().__init__(name=name, canonical_name=canonical_name, k=k,
                         distance_threshold=distance_threshold, average=average,
                         drop_closest_lookup=drop_closest_lookup)

    def compute(self, *, query_labels, lookup_distances, match_mask, **kwargs) -> float:
        """Mean (micro) or per-label mean (macro) of the per-query binary nDCG@k."""
        labels, mask = self._inputs(query_labels, match_mask)
        dist = as_numpy(lookup_distances, "lookup_distances", ndim=2, finite=True)
        if dist.shape[0] != labels.shape[0]:
            raise ShapeError(f"The number of lookup distance rows must equal the number of query "
                             f"labels. Number of lookup distance rows is {dist.shape[0]} but the "
                             f"number of query labels is {labels.shape[0]}.")
        if dist.shape != mask.shape:
            raise ShapeError(f"`lookup_distances` must have the shape of `match_mask` "
                             f"{mask.shape}; got {dist.shape}.")
        valid = mask & (dist <= self.distance_threshold)
        window = self._full_window(valid)
        view = hits_matrix_view(window, np.zeros(len(labels), np.int64))
        return self._average(binary_ndcg_window_values(view, self.k), labels)


class RecallAtK(RetrievalMetric):
    """Metric-learning Recall@k (TensorFlow-Similarity ``RecallAtK``): a hit in the first k neighbours.

    ``match_mask`` columns ``[s, s + k)``; no distance threshold. Registered as
    ``ml_recall`` (friendly ``ML_Recall@k``).

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.compat.tfsim import RecallAtK
    >>> mask = np.array([[1, 1, 0]] * 3 + [[0, 0, 1]], dtype=bool)
    >>> RecallAtK(k=2).compute(query_labels=np.array([1, 1, 1, 0]), match_mask=mask)
    0.75
    """

    def __init__(self, name="recall", canonical_name="recall@k", **kwargs):
        super().__init__(name=name, canonical_name=canonical_name, **kwargs)

    def compute(self, *, query_labels, match_mask, **kwargs) -> float:
        labels, mask = self._inputs(query_labels, match_mask)
        s = self._start
        view = hits_matrix_view(mask[:, s:s + self.k], np.zeros(len(labels), np.int64))
        return self._average(hit_values(view, self.k), labels)


def _class_counts(r, labels, k: int, drop: bool) -> np.ndarray:
    """Per-query class count from the ``r`` mapping (``k`` for every label when ``r`` is
    None; minus 1, floored at 0, with ``drop``); labels missing from ``r`` count 0."""
    if r is None:
        counts = np.full(labels.shape, k, dtype=np.int64)
    elif not r:
        counts = np.zeros(labels.shape, dtype=np.int64)
    else:
        keys = np.asarray(list(r.keys()))
        values = np.asarray([int(v) for v in r.values()], dtype=np.int64)  # one per class
        if (values < 0).any():
            raise ParameterError(f"`r` must map labels to non-negative counts; got {r!r}.")
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        pos = np.minimum(np.searchsorted(keys, labels), len(keys) - 1)
        counts = np.where(keys[pos] == labels, values[pos], 0).astype(np.int64)
    return np.maximum(counts - 1, 0) if drop else counts


class PrecisionAtK(RetrievalMetric):
    """Precision@k (TensorFlow-Similarity 0.17.1 ``PrecisionAtK``): hits over the class count.

    Hits are counted in ``match_mask`` columns ``[s, k)`` (the first ``k - 1``
    neighbours after the dropped one when ``drop_closest_lookup``) and divided by
    the query's class count ``r[label]`` (``k`` when ``r`` is None; minus 1, floored
    at 0, when dropping); 0 when the count is 0. ``clip_at_r`` sums only the first
    ``r[label]`` columns (R-precision). Labels missing from ``r`` count 0.

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.compat.tfsim import PrecisionAtK
    >>> labels = np.array([1, 1, 1, 0])
    >>> mask = np.array([[1, 1, 0]] * 3 + [[0, 0, 1]], dtype=bool)
    >>> round(PrecisionAtK(k=3).compute(query_labels=labels, match_mask=mask), 6)
    0.583333
    >>> PrecisionAtK(k=3, average="macro").compute(query_labels=labels, match_mask=mask)
    0.5
    """

    def __init__(self, r=None, clip_at_r=False, name="precision", **kwargs):
        kwargs.setdefault("canonical_name", "precision@k")
        super().__init__(name=name, **kwargs)
        self.r = r
        self.clip_at_r = bool(clip_at_r)

    @property
    def name(self) -> str:
        return self._name if self.clip_at_r else super().name

    def get_config(self) -> dict:
        return {**super().get_config(), "r": self.r, "clip_at_r": self.clip_at_r}

    @staticmethod
    def _matched(view, cut) -> np.ndarray:
        """Per query, the sum of the window's per-column values up to ``cut`` (hits here)."""
        return view.relat(cut)

    def compute(self, *, query_labels, match_mask, **kwargs) -> float:
        labels, mask = self._inputs(query_labels, match_mask)
        counts = _class_counts(self.r, labels, self.k, self.drop_closest_lookup)
        view = hits_matrix_view(mask[:, self._start:self.k], counts)
        matched = self._matched(view, counts if self.clip_at_r else view.num_ret)
        return self._average(safe_div(matched, counts), labels, no_nan=True)


class MapAtK(PrecisionAtK):
    """Average precision@k over the class count (TensorFlow-Similarity 0.17.1 ``MapAtK``).

    A :class:`PrecisionAtK` whose column values are ``g_j * h_j / j`` instead of ``g_j``
    (j counted from 1 inside the window ``[s, k)``): per query
    ``sum_{j, g_j} h_j / j`` divided by the class count ``r[label]`` (``k`` when ``r``
    is None; minus 1, floored at 0, when dropping; 0 for labels missing from ``r``),
    0 when that count is 0. ``clip_at_r`` sums only the first ``r[label]`` columns
    (MAP@R). Micro averaging only.

    Examples
    --------
    >>> import numpy as np
    >>> from irmetrics.compat.tfsim import MapAtK
    >>> labels = np.array([1])
    >>> round(MapAtK(k=3).compute(query_labels=labels, match_mask=[[1, 0, 1, 1]]), 4)
    0.5556
    >>> MapAtK(k=3, drop_closest_lookup=True).compute(query_labels=labels,
    ...                                               match_mask=[[1, 0, 1, 1]])
    0.25
    >>> MapAtK(r={2: 4}, k=3).compute(query_labels=labels, match_mask=[[1, 0, 1, 1]])
    0.0
    """

    def __init__(self, r=None, clip_at_r=False, name="map", **kwargs):
        if kwargs.get("average") == "macro":
            raise ParameterError("Mean Average Precision only supports micro averaging.")
        kwargs.setdefault("canonical_name", "map@k")
        super().__init__(r=r, clip_at_r=clip_at_r, name=name, **kwargs)

    @staticmethod
    def _matched(view, cut) -> np.ndarray:
        return sg.at_rank(view.running_precision_sum, view.offsets, cut, fill=0.0)
