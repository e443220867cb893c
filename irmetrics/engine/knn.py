"""Exact k-nearest-neighbour search in numpy with bounded memory (no faiss, no torch).

The one searcher behind every kNN of the package: the metric-learning drop-ins
(:mod:`irmetrics.compat`, through ``compat._knn``) and
:func:`irmetrics.adapters.from_embeddings`. Queries are processed in blocks of
``block_rows`` rows, so only one block's ``(queries x references)`` distance matrix
is in memory; inside a block everything is vectorised.

The order is total and deterministic: distance ascending, then a per-reference
``tie_rank`` ascending. Distances are ranked exactly, as if every one were computed
pair by pair by :func:`pair_distances` (euclidean: ``sqrt(sum((q - r) ** 2))``, i.e.
``np.linalg.norm(q - r, axis=-1)``; dot: ``-np.sum(q * r, axis=-1)``; cosine: ``1 -``
that sum over unit rows), which gives the same bits whatever the block, the thread
count or the BLAS: the fast matrix products (for euclidean the expansion ``|q|^2 -
2 q.r + |r|^2`` on both sets centred on the reference mean, which distances do not
see) only choose candidates within their rounding-error bound, and candidates that
the bound cannot separate are measured pair by pair. The same rule lets a device
(:mod:`irmetrics.device`) choose the candidates in its own arithmetic, with its own
bound, and give the same neighbours through :func:`rank_candidates`. The callers differ only in that rank: the compat modules
break ties by reference index (torch's ``topk`` and faiss leave the order inside a
tie unspecified), ``from_embeddings`` by doc id descending in byte order (how
trec_eval orders a run's equal scores).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..checks import check_choice
from ..exceptions import ParameterError, ShapeError

#: Default block: at most this many (query, reference) distances in memory at once.
BLOCK_CELLS = 1 << 21

#: Pairs measured one by one: coordinates per chunk (cache-sized), and the work from
#: which chunks go to a thread pool of at most ``_THREADS`` threads.
_PAIR_CELLS = 1 << 18
_PARALLEL_CELLS = 1 << 22
_THREADS = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1), 32)

#: ``dot`` is the inner product negated (smaller is nearer), for callers that rank by
#: similarity; ``cosine`` is ``1 - cosine similarity`` of rows scaled by :func:`normalize_rows`.
METRICS = ("euclidean", "cosine", "dot")


@dataclass
class Neighbours:
    """CSR kNN result: query ``q``'s neighbours are ``indices[offsets[q]:offsets[q + 1]]``,
    nearest first, at ``distances[offsets[q]:offsets[q + 1]]``."""

    offsets: np.ndarray
    indices: np.ndarray
    distances: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        """Neighbours found per query (``k``, or fewer where fewer references are eligible)."""
        return self.offsets[1:] - self.offsets[:-1]


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm; all-zero rows stay zero (eps 1e-12, as torch's normalize).

    Parameters
    ----------
    x : ndarray, shape (n, d)

    Returns
    -------
    ndarray, shape (n, d)

    Examples
    --------
    >>> normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[0.6, 0.8],
           [0. , 0. ]])
    """
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    return x / np.maximum(norms, 1e-12)[:, None]


def search(query, reference, k: int, *, metric: str = "euclidean", block_cells: int = BLOCK_CELLS,
           block_rows: int | None = None, tie_rank: np.ndarray | None = None, ignore=(),
           exclude_self: bool = False, non_finite_error: str | None = None,
           exact_distances: bool = True) -> Neighbours:
    """The ``k`` nearest non-ignored references of every query, in a fixed total order.

    Parameters
    ----------
    query : array_like, shape (Q, d)
    reference : array_like, shape (G, d)
    k : int
        Neighbours per query; rows get fewer when fewer references are eligible.
    metric : {"euclidean", "cosine", "dot"}, default "euclidean"
        Distance: ``||q - r||_2``; ``1 - cosine similarity``; ``-(q . r)``.
    block_cells : int, default :data:`BLOCK_CELLS`
        Distances per block: a block holds ``max(1, block_cells // G)`` queries.
    block_rows : int >= 1, optional
        Queries per block, instead of the number ``block_cells`` gives.
    tie_rank : ndarray of shape (G,), optional
        Among references at the same distance the smaller ``tie_rank`` comes first;
        default: the reference index.
    ignore : sequence of ``(query_keys, reference_keys)`` pairs
        Reference ``j`` is ignored for query ``i`` when ``query_keys[i] ==
        reference_keys[j]`` for any pair (the query itself, its sequence, ...).
    exclude_self : bool, default False
        Reference ``i`` is ignored for query ``i`` (the references are the queries):
        ``ignore=[(arange(Q), arange(G))]`` without comparing every pair.
    non_finite_error : str, optional
        If given, a block with a non-finite distance raises ``ParameterError`` with
        this message. Otherwise they are kept: ``inf`` ranks after every finite
        distance (ties among infinities in any order); what a row holding ``NaN``
        gets is deterministic but unspecified.
    exact_distances : bool, default True
        Every returned distance is the exact one of :func:`pair_distances` (euclidean:
        ``np.linalg.norm(q - r, axis=-1)`` bit for bit). False skips measuring the
        returned neighbours that the fast products already rank unambiguously (their
        distances are then the fast ones, within their rounding error); the order is
        exact either way. Callers that only read ``indices`` use False.

    Returns
    -------
    Neighbours

    Examples
    --------
    >>> nn = search([[0.0], [3.0]], [[1.0], [-1.0], [3.0]], 2)
    >>> nn.offsets.tolist(), nn.indices.tolist(), nn.distances.tolist()
    ([0, 2, 4], [0, 1, 2, 0], [1.0, 1.0, 0.0, 2.0])
    >>> search([[0.0]], [[1.0], [-1.0]], 1, tie_rank=np.array([1, 0])).indices.tolist()
    [1]
    >>> search([[0.0], [3.0]], [[0.0], [3.0]], 2, ignore=[([7, 8], [8, 7])]).indices.tolist()
    [0, 1]
    >>> search([[0.0], [3.0]], [[0.0], [3.0]], 2, exclude_self=True).indices.tolist()
    [1, 0]
    """
    check_choice("metric", metric, METRICS)
    query = np.asarray(query, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if query.ndim != 2 or reference.ndim != 2 or query.shape[1] != reference.shape[1]:
        raise ShapeError(f"embeddings must be 2-D with the same width; got {query.shape} "
                         f"and {reference.shape}.")
    n_q, n_ref = len(query), len(reference)
    k = int(min(k, n_ref))
    if block_rows is None:
        block_rows = max(1, block_cells // max(n_ref, 1))
    ignore = [(np.asarray(q_keys), np.asarray(r_keys)) for q_keys, r_keys in ignore]
    side = _ReferenceSide(reference, metric, exact_distances)
    parts_idx, parts_dist, counts = [], [], []
    for start in range(0, n_q, block_rows):
        stop = min(start + block_rows, n_q)
        if non_finite_error is None:
            dist, rescorer = side.block_distances(query[start:stop])
        else:
            with np.errstate(over="ignore", invalid="ignore"):  # warnings would repeat the error
                dist, rescorer = side.block_distances(query[start:stop])
            if not np.isfinite(dist).all():
                raise ParameterError(non_finite_error)
        ignored = _ignored_in_block(ignore, exclude_self, start, stop, n_ref)
        if ignored is not None:
            np.copyto(dist, np.inf, where=ignored)
        idx, d, c = _top_k_block(dist, ignored, k, tie_rank, rescorer, block_cells)
        parts_idx.append(idx)
        parts_dist.append(d)
        counts.append(c)
    counts_ = np.concatenate(counts) if counts else np.zeros(0, np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts_))).astype(np.int64)
    indices = np.concatenate(parts_idx) if parts_idx else np.zeros(0, np.int64)
    distances = np.concatenate(parts_dist) if parts_dist else np.zeros(0)
    return Neighbours(offsets, indices, distances)


def _ignored_in_block(ignore, exclude_self: bool, start: int, stop: int, n_ref: int):
    """Mask of the block's ignored (query, reference) pairs, or None when there are none."""
    if not ignore and not exclude_self:
        return None
    ignored = np.zeros((stop - start, n_ref), dtype=bool)
    for q_keys, r_keys in ignore:
        ignored |= q_keys[start:stop, None] == r_keys[None, :]
    if exclude_self:
        own = np.arange(start, min(stop, n_ref))
        ignored[own - start, own] = True
    return ignored


def _by_chunks(n_pairs: int, dim: int, block_cells: int, work) -> None:
    """Run ``work(start, stop)`` over chunks of at most ``block_cells`` coordinates.

    Chunks are independent (each writes its own slice), so they run on a thread pool
    when there are several (numpy releases the GIL in gathers and ufuncs); the bits do
    not depend on the thread count.
    """
    step = max(1, block_cells // max(dim, 1))
    starts = range(0, n_pairs, step)
    threads = min(len(starts), _THREADS) if n_pairs * dim >= _PARALLEL_CELLS else 1
    if threads <= 1:
        for start in starts:
            work(start, min(start + step, n_pairs))
        return
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda start: work(start, min(start + step, n_pairs)), starts))


def direct_distances(query: np.ndarray, reference: np.ndarray, rows: np.ndarray,
                     cols: np.ndarray, block_cells: int = BLOCK_CELLS) -> np.ndarray:
    """``||query[rows] - reference[cols]||_2`` pair by pair, computed directly.

    The same operations as ``np.linalg.norm(q - r, axis=-1)`` (bit for bit), in chunks of
    at most ``block_cells`` coordinates.

    Examples
    --------
    >>> q = np.array([[1e8, 0.0]]); r = np.array([[1e8 + 3.0, 4.0], [0.0, 0.0]])
    >>> direct_distances(q, r, np.array([0, 0]), np.array([0, 1])).tolist()
    [5.0, 100000000.0]
    """
    out = np.empty(rows.size)

    def work(start, stop):
        diff = query[rows[start:stop]]
        diff -= reference[cols[start:stop]]
        diff *= diff
        np.sqrt(np.add.reduce(diff, axis=-1), out=out[start:stop])

    _by_chunks(rows.size, query.shape[1], min(block_cells, _PAIR_CELLS), work)
    return out


def pair_dots(query: np.ndarray, reference: np.ndarray, rows: np.ndarray, cols: np.ndarray,
              block_cells: int = BLOCK_CELLS) -> np.ndarray:
    """``np.sum(query[rows] * reference[cols], axis=-1)`` pair by pair.

    numpy's pairwise summation along each contiguous row gives every pair the same bits
    whatever the chunking (a matrix product's do depend on the BLAS and the block shape),
    in chunks of at most ``block_cells`` coordinates.

    Examples
    --------
    >>> q = np.array([[1.0, 2.0]]); r = np.array([[3.0, 4.0], [0.5, 0.0]])
    >>> pair_dots(q, r, np.array([0, 0]), np.array([0, 1])).tolist()
    [11.0, 0.5]
    """
    out = np.empty(rows.size)

    def work(start, stop):
        prod = query[rows[start:stop]]
        prod *= reference[cols[start:stop]]
        np.add.reduce(prod, axis=-1, out=out[start:stop])

    _by_chunks(rows.size, query.shape[1], min(block_cells, _PAIR_CELLS), work)
    return out


def pair_distances(query: np.ndarray, reference: np.ndarray, rows: np.ndarray,
                   cols: np.ndarray, metric: str, block_cells: int = BLOCK_CELLS) -> np.ndarray:
    """The exact distance of every ``(query[rows], reference[cols])`` pair: what
    :func:`search` ranks and returns.

    Euclidean: :func:`direct_distances`; dot: ``-`` :func:`pair_dots`; cosine: ``1 -``
    :func:`pair_dots` of rows that are unit already (:func:`normalize_rows`).

    Examples
    --------
    >>> q = np.array([[0.6, 0.8]]); r = np.array([[1.0, 0.0]])
    >>> [round(float(pair_distances(q, r, np.array([0]), np.array([0]), m)[0]), 12)
    ...  for m in METRICS]
    [0.894427191, 0.4, -0.6]
    """
    if metric == "euclidean":
        return direct_distances(query, reference, rows, cols, block_cells)
    dots = pair_dots(query, reference, rows, cols, block_cells)
    if metric == "dot":
        return np.negative(dots, out=dots)
    return np.subtract(1.0, dots, out=dots)


def error_factor(dim: int) -> float:
    """``4 (dim + 4) eps``: times ``|q| |r|`` (euclidean: ``(|q| + |r|)^2``), a bound of how
    far a float64 product of ``dim``-vectors (any summation order), or a distance computed
    from them, may be from the exact value, with room for a second such computation."""
    return 4.0 * (dim + 4) * np.finfo(np.float64).eps


def _finite_mean(rows: np.ndarray) -> np.ndarray:
    """Mean of the all-finite rows (zeros if there is none, or if it overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        finite = rows[np.isfinite(rows).all(axis=1)]
        mean = finite.mean(axis=0) if len(finite) else np.zeros(rows.shape[1])
    return mean if np.isfinite(mean).all() else np.zeros(rows.shape[1])


def _integral_max(rows: np.ndarray):
    """Largest |coordinate| when every coordinate is an integer, else None."""
    if rows.size == 0:
        return 0.0
    with np.errstate(invalid="ignore"):
        if not np.array_equal(rows, np.round(rows)):  # NaN and inf fail here too
            return None
    return float(np.abs(rows).max())


def _expansion(query: np.ndarray, reference: np.ndarray, reference_sq=None) -> np.ndarray:
    """``|q|^2 - 2 q.r + |r|^2`` for every pair, in place in one matrix, clamped at 0."""
    if reference_sq is None:
        reference_sq = np.einsum("ij,ij->i", reference, reference)
    dist = query @ reference.T
    dist *= 2.0
    np.subtract(np.einsum("ij,ij->i", query, query)[:, None], dist, out=dist)
    dist += reference_sq[None, :]
    return np.maximum(dist, 0.0, out=dist)


def _finite_max_norm(rows: np.ndarray) -> float:
    sq = np.einsum("ij,ij->i", rows, rows)
    finite = sq[np.isfinite(sq)]  # a NaN row spoils only itself
    return float(np.sqrt(finite.max())) if finite.size else 0.0


class _ReferenceSide:
    """What every block reuses: the reference rows as the metric reads them (unit rows for
    cosine; for euclidean, centred on their mean, with squared norms), their largest norm,
    and whether they are small integers, for which the plain products are exact."""

    def __init__(self, reference: np.ndarray, metric: str, exact_distances: bool = True):
        self.metric = metric
        self.exact_distances = exact_distances
        self.original = reference
        # |computed - exact| of q.r, |q|^2, |r|^2 is at most (d + 2) eps times the norms'
        # products (any summation order); error_factor bounds the fast products' error
        # with room for the pairwise one's.
        self.error_factor = error_factor(reference.shape[1])
        self.integral_max = None if metric == "cosine" else _integral_max(reference)
        if metric == "cosine":
            self.rows = normalize_rows(reference)
        elif metric == "euclidean":
            self.raw_sq_norms = None
            # Distances are translation-invariant; centring makes the norms in the expansion
            # (and so its cancellation error) as small as the data's spread, not its offset.
            self.mean = _finite_mean(reference)
            self.rows = reference - self.mean
            self.sq_norms = np.einsum("ij,ij->i", self.rows, self.rows)
        else:
            self.rows = reference
        self.max_norm = _finite_max_norm(self.rows)

    def _small_integers(self, query: np.ndarray, terms: int) -> bool:
        """Every sum of the products is an exact integer (one-hot, quantised, counts)."""
        query_max = None if self.integral_max is None else _integral_max(query)
        return query_max is not None and \
            max(self.integral_max, query_max) < np.sqrt(2.0**53 / (terms * max(query.shape[1], 1)))

    def block_distances(self, query: np.ndarray):
        """``(dist, rescorer)`` of a query block: the ``(len(query), len(reference))`` fast
        distances (squared ones for euclidean, from the expansion) and the
        :class:`Rescorer` that ranks them exactly."""
        tiny = (2 * query.shape[1] + 4) * np.finfo(np.float64).tiny  # underflow
        if self.metric == "cosine":
            rows = normalize_rows(query)
            dist = rows @ self.rows.T
            np.subtract(1.0, dist, out=dist)
            error = np.full(len(query), self.error_factor * 1.01 + tiny)  # |unit rows| <= 1
            return dist, Rescorer("cosine", rows, self.rows, error, self.exact_distances)
        if self.metric == "dot":
            dist = query @ self.rows.T
            np.negative(dist, out=dist)
            if self._small_integers(query, 1):
                return dist, Rescorer("dot", query, self.rows, np.zeros(len(query)), False, True)
            norms = np.sqrt(np.einsum("ij,ij->i", query, query))
            return dist, Rescorer("dot", query, self.rows,
                                  self.error_factor * norms * self.max_norm + tiny,
                                  self.exact_distances)
        if self._small_integers(query, 4):
            # The expansion's sums are exact integers: it equals the direct distance bit
            # for bit, ties included.
            if self.raw_sq_norms is None:
                self.raw_sq_norms = np.einsum("ij,ij->i", self.original, self.original)
            return (_expansion(query, self.original, self.raw_sq_norms),
                    Rescorer("euclidean", query, self.original, np.zeros(len(query)), False,
                             True))
        centred = query - self.mean
        dist = _expansion(centred, self.rows, self.sq_norms)
        q_sq = np.einsum("ij,ij->i", centred, centred)
        error = self.error_factor * (np.sqrt(q_sq) + self.max_norm) ** 2 + tiny
        return dist, Rescorer("euclidean", query, self.original, error, self.exact_distances)


@dataclass
class Rescorer:
    """How a block's fast distances relate to the exact ones (:func:`pair_distances`).

    Every fast distance of query row ``i`` (for euclidean: a squared distance) is within
    ``error[i]`` of the exact one (its square): that widens the candidate set and tells
    which neighbours in the fast order must be measured pair by pair (those closer than
    ``2 * error``). ``measure_chosen`` measures the returned neighbours too, so that
    their distances are the exact ones; ``exact`` says the fast distances are exact
    already (small integers): nothing needs measuring.

    Parameters
    ----------
    metric : {"euclidean", "cosine", "dot"}
    query, reference : ndarray of float64
        The block's query rows and the references as :func:`pair_distances` reads them
        (unit rows for cosine).
    error : ndarray, shape (len(query),)
    measure_chosen : bool, default True
    exact : bool, default False
    """

    metric: str
    query: np.ndarray
    reference: np.ndarray
    error: np.ndarray
    measure_chosen: bool = True
    exact: bool = False

    def measure(self, rows: np.ndarray, cols: np.ndarray, block_cells: int = BLOCK_CELLS):
        """Exact distances of the pairs ``(query[rows], reference[cols])``."""
        with np.errstate(over="ignore"):  # overflowing coordinates: inf, as the fast ones
            return pair_distances(self.query, self.reference, rows, cols, self.metric,
                                  block_cells)

    def finish(self, fast: np.ndarray) -> np.ndarray:
        """Fast values as distances (a new array): square roots for euclidean."""
        return np.sqrt(fast) if self.metric == "euclidean" else fast.copy()


def _kth_smallest_bound(values: np.ndarray, k: int) -> np.ndarray:
    """Per row, a value ``>=`` the row's k-th smallest (cheap to compute).

    Columns are grouped in chunks; the k-th smallest chunk minimum is such a bound,
    because k distinct chunks hold an element at most that large. Partitioning the
    minima instead of the row cuts the selection work by the chunk width. A NaN
    makes its chunk's minimum NaN, so a NaN bound only says that fewer than k chunks
    are free of NaN: those rows take the exact k-th value, which keeps the candidates
    of rows with NaN distances what the exact k-th value makes them.
    """
    n_rows, n_cols = values.shape
    width = min(n_cols // k, 64)
    if width < 4:  # too few columns per chunk to gain anything: the exact k-th value
        return np.partition(values, k - 1, axis=1)[:, k - 1]
    n_chunks = n_cols // width
    head = values[:, : n_chunks * width].reshape(n_rows, n_chunks, width).min(axis=2)
    minima = np.concatenate([head, values[:, n_chunks * width:]], axis=1)
    bound = np.partition(minima, k - 1, axis=1)[:, k - 1]
    unsure = np.isnan(bound)
    if unsure.any():
        bound[unsure] = np.partition(values[unsure], k - 1, axis=1)[:, k - 1]
    return bound


def pack_candidates(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, n_rows: int):
    """Candidates given row by row (``rows`` ascending) as padded ``(n_rows, width)`` arrays.

    Returns ``(values, columns, valid)``; padding holds ``inf`` and is not valid.

    Examples
    --------
    >>> v, c, ok = pack_candidates(np.array([0, 0, 2]), np.array([4, 7, 1]),
    ...                            np.array([0.5, 0.25, 2.0]), 3)
    >>> v.tolist(), c.tolist(), ok.tolist()
    ([[0.5, 0.25], [inf, inf], [2.0, inf]], [[4, 7], [0, 0], [1, 0]], [[True, True], [False, False], [True, False]])
    """
    per_row = np.bincount(rows, minlength=n_rows)
    width = max(int(per_row.max()) if n_rows else 0, 1)
    slot = np.arange(rows.size) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    packed = np.full((n_rows, width), np.inf)
    columns = np.zeros((n_rows, width), dtype=np.int64)
    valid = np.zeros((n_rows, width), dtype=bool)
    packed[rows, slot] = values
    columns[rows, slot] = cols
    valid[rows, slot] = True
    return packed, columns, valid


def _top_k_block(dist: np.ndarray, ignored: np.ndarray | None, k: int,
                 tie_rank: np.ndarray | None, rescorer: Rescorer,
                 block_cells: int = BLOCK_CELLS):
    """Top ``k`` non-ignored columns per row by (exact distance, tie rank); flat CSR pieces.

    ``dist`` holds the fast distances, ``inf`` at the ``ignored`` pairs already (so they
    never lower the bound); the mask still tells them from references that are really
    infinitely far.
    """
    b, n_ref = dist.shape
    if k <= 0 or n_ref == 0:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(b, np.int64)
    if 2 * k < n_ref:
        # Everything the rounding error could put at or below a bound of the k-th smallest
        # value is a candidate (ties included); candidates are packed left in column
        # order, then ordered exactly.
        bound = _kth_smallest_bound(dist, k) + 2.0 * rescorer.error
        candidates = dist <= bound[:, None]
        if ignored is not None:
            candidates &= ~ignored
        row, col = np.nonzero(candidates)
        values, columns, valid = pack_candidates(row, col, dist[row, col], b)
    else:
        values = dist
        valid = np.ones(dist.shape, dtype=bool) if ignored is None else ~ignored
        columns = np.broadcast_to(np.arange(n_ref), (b, n_ref))
    return rank_candidates(values, columns, valid, k, tie_rank, rescorer, block_cells)


def rank_candidates(values: np.ndarray, columns: np.ndarray, valid: np.ndarray, k: int,
                    tie_rank: np.ndarray | None, rescorer: Rescorer,
                    block_cells: int = BLOCK_CELLS):
    """The first ``k`` valid candidates of every row in exact order, as flat CSR pieces.

    Parameters
    ----------
    values : ndarray, shape (b, w)
        Fast distances of the candidates (``inf`` where not valid), each within
        ``rescorer.error`` of the exact one; every reference that could be among a
        row's first ``k`` must be a valid candidate.
    columns : ndarray of int, shape (b, w)
        Reference index of every candidate.
    valid : ndarray of bool, shape (b, w)
    k : int
    tie_rank : ndarray, optional
        As in :func:`search`.
    rescorer : Rescorer

    Returns
    -------
    (indices, distances, counts)
        The chosen references row after row, their distances (exact ones when
        ``rescorer.measure_chosen``) and how many each row got.

    Examples
    --------
    >>> q = np.array([[0.0]]); r = np.array([[1.0], [-1.0], [3.0]])
    >>> rescorer = Rescorer("euclidean", q, r, np.array([1e-12]))
    >>> idx, dist, counts = rank_candidates(np.array([[1.0, 1.0 + 1e-13, np.inf]]),
    ...     np.array([[0, 1, 0]]), np.array([[True, True, False]]), 2, None, rescorer)
    >>> idx.tolist(), dist.tolist(), counts.tolist()
    ([0, 1], [1.0, 1.0], [2])
    """
    order, values = _argsort_rows_exact(values, columns, tie_rank, rescorer, block_cells)
    order = order[:, :k]
    keep = np.take_along_axis(valid, order, axis=1)
    chosen = np.take_along_axis(columns, order, axis=1)[keep]
    chosen_dist = np.take_along_axis(values, order, axis=1)[keep]
    if rescorer.measure_chosen and not rescorer.exact:
        chosen_dist = rescorer.measure(np.nonzero(keep)[0], chosen, block_cells)
    return chosen.astype(np.int64), chosen_dist, keep.sum(axis=1).astype(np.int64)


def _argsort_rows_exact(fast: np.ndarray, columns: np.ndarray, tie_rank: np.ndarray | None,
                        rescorer: Rescorer, block_cells: int):
    """``(order, distances)``: rows sorted by exact distance, then tie rank.

    Sorted by the fast distances, neighbours more than ``2 * error`` apart are in their
    exact order (for euclidean, their square roots distinct); runs of closer ones
    ("clusters", ties included) are measured pair by pair and re-sorted inside the run.
    ``distances`` holds the exact distance of cluster members and the fast one elsewhere.
    Ties between infinite values (ignored references, padding) are left in any order.
    """
    order = np.argsort(fast, axis=1)
    distances = rescorer.finish(fast)
    if fast.shape[1] < 2:
        return order, distances
    ranked = np.take_along_axis(fast, order, axis=1)
    with np.errstate(invalid="ignore"):  # inf - inf between ignored entries: not close
        close = ((ranked[:, 1:] - ranked[:, :-1] <= 2.0 * rescorer.error[:, None])
                 & np.isfinite(ranked[:, 1:]))
    if not close.any():
        return order, distances
    member = np.zeros(ranked.shape, dtype=bool)
    member[:, 1:] |= close
    member[:, :-1] |= close
    if not rescorer.exact:
        rows, slots = np.nonzero(member)
        positions = order[rows, slots]
        distances[rows, positions] = rescorer.measure(rows, columns[rows, positions],
                                                      block_cells)
    # Re-sort the rows with clusters by (cluster, exact distance, tie rank); a cluster
    # is a run of sorted slots joined by close gaps, numbered along the row.
    rerank = close.any(axis=1)
    sub_order = order[rerank]
    cluster = np.zeros(sub_order.shape, dtype=np.int64)
    np.cumsum(~close[rerank], axis=1, out=cluster[:, 1:])
    sub_cols = np.take_along_axis(columns[rerank], sub_order, axis=1)
    sub_dist = np.take_along_axis(distances[rerank], sub_order, axis=1)
    ties = sub_cols if tie_rank is None else tie_rank[sub_cols]
    order[rerank] = np.take_along_axis(sub_order, np.lexsort((ties, sub_dist, cluster), axis=1),
                                       axis=1)
    return order, distances
