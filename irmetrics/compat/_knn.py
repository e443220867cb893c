"""The metric-learning drop-ins' kNN: :func:`irmetrics.engine.knn.search` with their rule.

Distance ascending, then reference index ascending (torch's ``topk`` and faiss leave
the order inside a tie unspecified); only euclidean and cosine distances, in blocks of
at most ``_BLOCK_CELLS`` distances.
"""

from __future__ import annotations

from ..checks import check_choice
from ..engine.knn import Neighbours, normalize_rows, search

__all__ = ["METRICS", "Neighbours", "knn", "normalize_rows"]

#: Cells of one block's ``(queries x references)`` distance matrix (32 MiB of float64).
_BLOCK_CELLS = 1 << 22

METRICS = ("euclidean", "cosine")


def knn(query, reference, k: int, *, metric: str = "euclidean", ignore=(),
        exact_distances: bool = True) -> Neighbours:
    """The ``k`` nearest non-ignored references of every query (ties: lower index first).

    Parameters
    ----------
    query, reference, k, ignore, exact_distances
        As for :func:`irmetrics.engine.knn.search` (the order is exact either way).
    metric : {"euclidean", "cosine"}, default "euclidean"

    Returns
    -------
    Neighbours

    Examples
    --------
    >>> nn = knn([[0.0]], [[1.0], [-1.0], [0.5]], 2)
    >>> nn.indices.tolist(), nn.distances.tolist()
    ([2, 0], [0.5, 1.0])
    """
    check_choice("metric", metric, METRICS)
    return search(query, reference, k, metric=metric, block_cells=_BLOCK_CELLS, ignore=ignore,
                  exact_distances=exact_distances)
