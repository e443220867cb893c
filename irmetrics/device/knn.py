"""Exact k-nearest-neighbour search whose matrix products run on a device (torch).

The device computes each block's distances in its own arithmetic (float32 for
float16, bfloat16 and float32 inputs, TF32 or bfloat16 products where torch allows
them) and keeps, per query, every reference within twice a proven bound of that
arithmetic's error from the k-th smallest value: every reference that could be among
the exact first k, the whole tie group at the cut included. Only those candidates
cross to the host, where :func:`irmetrics.engine.knn.rank_candidates` measures them
pair by pair in float64 and orders them exactly, as :func:`irmetrics.engine.knn.search`
does with its own (float64) candidates. Both roads therefore return the same
neighbours, distances and order, bit for bit.

The bound. Rows are first brought to the device's form: centred on the reference
mean (euclidean) or scaled to unit length (cosine: the host's own unit rows where they
are on the device, or where tiny norms make the two normalisations part), in float64,
then scaled by a power of two (exact) so that no product can overflow or leave the
normal range, and rounded to the compute dtype. Coordinates so large that the host's
float64 products could overflow (about 1e153) take the host's search itself, which
refuses them as the numpy road does; float64 products the host underflows (tiny rows)
are counted in the bound. Each coordinate is then within a relative ``rho`` of the row the
host reads; a matrix product may round its inputs by ``u_mm`` (TF32, bfloat16) and
accumulates ``d`` terms in any order with unit roundoff ``u``. So every computed
product is within ``beta |q| |r|`` of the exact product of the host's rows, with
``beta = (1 + rho)^2 (1 + u_mm)^2 (1 + u)^(d + 4) - 1``, and the host's float64
measurement within :func:`~irmetrics.engine.knn.error_factor` ``|q| |r|``
(euclidean: ``(|q| + |r|)^2`` on centred rows, in squares). Doubled, plus the
subnormal range's absolute error, that is the bound used.
"""

from __future__ import annotations

import math

import numpy as np

from ..checks import check_choice
from ..engine.knn import (
    BLOCK_CELLS,
    METRICS,
    Neighbours,
    Rescorer,
    error_factor,
    pack_candidates,
    rank_candidates,
)
from ..engine.knn import search as engine_search
from ..exceptions import ParameterError, ShapeError
from .arrays import as_tensor, compute_dtype, import_torch, matmul_rounding
from .exact import EXACT_DEVICES, exact_sqrt, numpy_row_sums

#: Default device memory for one block's work matrices (distances and masks).
BLOCK_BYTES = 1 << 28
#: Coordinates per piece when the rows are brought to the device's form (float64
#: temporaries of 128 MiB; never a float64 copy of the whole gallery).
FORM_CELLS = 1 << 24
#: Largest float64 copy of the host's reference rows that is put on the device to measure
#: the candidates there; a larger gallery's candidates are measured on the host.
RESCORE_BYTES = 1 << 32


def search(query, reference, k: int, *, host_query, host_reference,
           metric: str = "euclidean", unit_rows: bool = False, tie_rank=None, ignore=(),
           exclude_self: bool = False, block_rows: int | None = None,
           block_bytes: int = BLOCK_BYTES, exact_distances: bool = True,
           non_finite_error: str | None = None) -> Neighbours:
    """:func:`irmetrics.engine.knn.search` with the matrix products on ``query``'s device.

    Parameters
    ----------
    query, reference : torch tensors (or arrays torch reads), shapes (Q, d) and (G, d)
        On one device; real numbers of any float or integer dtype.
    k : int
    host_query, host_reference : ndarray or float64 tensor, shapes (Q, d) and (G, d)
        The rows as :func:`~irmetrics.engine.knn.pair_distances` reads them on the host
        (float64; unit rows for ``metric="cosine"`` or ``unit_rows``): the candidates
        are measured in these. Either numpy arrays or the same values as float64
        tensors on ``query``'s device (:func:`irmetrics.device.unit_rows` makes them
        there), which then need not cross to the host.
    metric : {"euclidean", "cosine", "dot"}, default "euclidean"
    unit_rows : bool, default False
        The host rows are the device rows scaled to unit length (an adapter's cosine
        as ``metric="dot"``, PML's ``normalize_embeddings``); the device scales its
        rows too. Implied by ``metric="cosine"``.
    tie_rank, ignore, exclude_self, exact_distances, non_finite_error
        As for :func:`irmetrics.engine.knn.search`.
    block_rows : int >= 1, optional
        Queries per block; default: as many as ``block_bytes`` of device memory holds.
    block_bytes : int, default :data:`BLOCK_BYTES`

    Returns
    -------
    Neighbours
        Equal to ``irmetrics.engine.knn.search(host_query, host_reference, k, ...)``
        (with ``metric="dot"`` on the unit rows for ``unit_rows``).

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[0.0], [1.0], [3.0]])
    >>> nn = search(x, x, 1, host_query=x.double().numpy(), host_reference=x.double().numpy(),
    ...             exclude_self=True)
    >>> nn.indices.tolist(), nn.distances.tolist()
    ([1, 0, 1], [1.0, 1.0, 2.0])
    """
    torch = import_torch()
    check_choice("metric", metric, METRICS)
    query = as_tensor(query, "query")
    reference = as_tensor(reference, "reference", like=query)
    if query.ndim != 2 or reference.ndim != 2 or query.shape[1] != reference.shape[1]:
        raise ShapeError(f"embeddings must be 2-D with the same width; got "
                         f"{tuple(query.shape)} and {tuple(reference.shape)}.")
    if tuple(host_query.shape) != tuple(query.shape) or \
            tuple(host_reference.shape) != tuple(reference.shape):
        raise ShapeError("`host_query` and `host_reference` must have the shapes of `query` "
                         "and `reference`.")
    n_q, n_ref = query.shape[0], reference.shape[0]
    k = int(min(k, n_ref))
    if n_q == 0 or k <= 0:
        return Neighbours(np.zeros(n_q + 1, np.int64), np.zeros(0, np.int64), np.zeros(0))
    side = _DeviceSide(torch, query, reference, metric, metric == "cosine" or unit_rows,
                       host_reference)
    if side.host_overflow:  # coordinates near float64's end (rare): the host's search
        rows = _HostRows(host_query, host_reference)
        return engine_search(rows.query(), rows.reference(), k, metric=side.host_metric,
                             block_rows=block_rows, tie_rank=tie_rank, ignore=ignore,
                             exclude_self=exclude_self, non_finite_error=non_finite_error,
                             exact_distances=exact_distances)
    if block_rows is None:
        per_row = n_ref * (side.R.element_size() + 3) + 16 * k
        block_rows = max(1, int(block_bytes) // max(per_row, 1))
    keys = [(torch.as_tensor(q_keys, device=query.device),
             torch.as_tensor(r_keys, device=query.device))
            for q_keys, r_keys in _coded_keys(ignore, n_q, n_ref)]
    exact = None
    if (side.wide == torch.float64 and query.device.type in EXACT_DEVICES
            and 8 * host_reference.shape[0] * host_reference.shape[1] <= RESCORE_BYTES):
        exact = _DeviceRescorer(torch, query.device, side.host_metric, host_query,
                                host_reference, tie_rank, block_bytes)
    on_host = _HostRows(host_query, host_reference)
    parts_idx, parts_dist, counts = [], [], []
    for start in range(0, n_q, block_rows):
        stop = min(start + block_rows, n_q)
        fast, q_norm = side.block(query[start:stop], host_query[start:stop])
        for q_keys, r_keys in keys:
            fast.masked_fill_(q_keys[start:stop, None] == r_keys[None, :], math.inf)
        if exclude_self and start < n_ref:
            own = torch.arange(start, min(stop, n_ref), device=fast.device)
            fast[own - start, own] = math.inf
        error = side.error(q_norm)  # float64, device-space units
        kth = torch.topk(fast, k, dim=1, largest=False, sorted=False).values.amax(dim=1)
        # The threshold is formed on the host in float64 (MPS has no float64), then
        # rounded up to the device's dtype so that no candidate is lost to rounding.
        threshold = _rounded_up(torch, kth.cpu().double() + 2.0 * torch.from_numpy(error),
                                fast.dtype).to(fast.device)
        candidates = (fast <= threshold[:, None]) & torch.isfinite(fast)
        rows, cols = candidates.nonzero(as_tuple=True)
        if exact is not None:
            ranked = exact.rank(rows, cols, start, stop, k)
            if ranked is not None:
                parts_idx.append(ranked[0])
                parts_dist.append(ranked[1])
                counts.append(ranked[2])
                continue
        values = fast[rows, cols].cpu().double().numpy()
        rows, cols = rows.cpu().numpy(), cols.cpu().numpy()
        del fast, candidates
        host_values, host_error = side.to_host_space(values, error)
        if non_finite_error is not None and not np.isfinite(host_values).all():
            raise ParameterError(non_finite_error)
        packed, columns, valid = pack_candidates(rows, cols, host_values, stop - start)
        rescorer = Rescorer(side.host_metric, on_host.query()[start:stop], on_host.reference(),
                            host_error, exact_distances)
        idx, dist, count = rank_candidates(packed, columns, valid, k, tie_rank, rescorer,
                                           BLOCK_CELLS)
        if non_finite_error is not None and not np.isfinite(dist).all():
            raise ParameterError(non_finite_error)
        parts_idx.append(idx)
        parts_dist.append(dist)
        counts.append(count)
    offsets = np.concatenate(([0], np.cumsum(np.concatenate(counts)))).astype(np.int64)
    return Neighbours(offsets, np.concatenate(parts_idx), np.concatenate(parts_dist))


class _DeviceRescorer:
    """The candidates measured and ordered on the device, as the host would do it.

    The host's float64 rows are copied to the device once; each candidate pair's
    distance is computed there with the operations of
    :func:`irmetrics.engine.knn.pair_distances` in the same order (elementwise IEEE
    products and differences, :func:`numpy_row_sums`, a correctly rounded square
    root), so its bits are the host's. Only devices whose float64 arithmetic is known to
    be IEEE (CUDA; the CPU, where numpy takes the square roots) measure there. The
    candidates hold every reference that could be among a row's first ``k``, so ordering
    them by (exact distance, tie rank) gives what
    :func:`~irmetrics.engine.knn.rank_candidates` gives, and only the first ``k`` per row
    cross to the host.
    """

    def __init__(self, torch, device, metric: str, host_query, host_reference, tie_rank,
                 block_bytes: int):
        self.torch, self.metric = torch, metric
        self.reference = _on(torch, host_reference, device)
        self.query = (self.reference if host_query is host_reference
                      else _on(torch, host_query, device))
        self.tie_rank = None if tie_rank is None else torch.as_tensor(
            np.asarray(tie_rank, dtype=np.int64), device=device)
        # Two gathered (pairs, d) float64 operands per chunk, in four blocks' memory.
        width = max(int(host_reference.shape[1]), 1)
        self.pairs_per_chunk = max(1, 4 * int(block_bytes) // (16 * width))

    def distances(self, rows, cols):
        """:func:`~irmetrics.engine.knn.pair_distances` of ``(query[rows], reference[cols])``."""
        torch = self.torch
        out = torch.empty(rows.numel(), dtype=torch.float64, device=rows.device)
        for lo in range(0, rows.numel(), self.pairs_per_chunk):
            hi = min(lo + self.pairs_per_chunk, rows.numel())
            if self.metric == "euclidean":
                terms = self.query[rows[lo:hi]] - self.reference[cols[lo:hi]]
                terms *= terms
                out[lo:hi] = exact_sqrt(torch, numpy_row_sums(torch, terms))
            else:
                terms = self.query[rows[lo:hi]] * self.reference[cols[lo:hi]]
                dots = numpy_row_sums(torch, terms)
                out[lo:hi] = -dots if self.metric == "dot" else 1.0 - dots
        return out

    def rank(self, rows, cols, start: int, stop: int, k: int):
        """``(indices, distances, counts)`` of block ``start:stop`` as host arrays, or None
        where a distance is not finite (the host's road decides those)."""
        torch = self.torch
        exact = self.distances(rows + start, cols)
        if not bool(torch.isfinite(exact).all()):
            return None
        # Stable sorts, least significant key first; + 0.0 makes -0.0 equal to 0.0, as
        # numpy compares them (a radix sort of the bits would not).
        tie = cols if self.tie_rank is None else self.tie_rank[cols]
        order = torch.sort(tie, stable=True).indices
        order = order[torch.sort(exact[order] + 0.0, stable=True).indices]
        order = order[torch.sort(rows[order], stable=True).indices]
        ranked_rows = rows[order]
        per_row = torch.bincount(ranked_rows, minlength=stop - start)
        first = torch.cumsum(per_row, 0) - per_row
        keep = torch.arange(order.numel(), device=order.device) - first[ranked_rows] < k
        chosen = order[keep]
        return (cols[chosen].cpu().numpy(), exact[chosen].cpu().numpy(),
                per_row.clamp(max=k).cpu().numpy().astype(np.int64))


def _on(torch, rows, device):
    """float64 rows (an array or a tensor) as a contiguous tensor on ``device``."""
    if isinstance(rows, np.ndarray):
        rows = torch.from_numpy(np.ascontiguousarray(rows))
    return rows.to(device=device, dtype=torch.float64).contiguous()


class _HostRows:
    """The exact rows as numpy arrays, copied from the device the first time a block
    needs the host's road (one whose distances are not all finite, or a gallery too
    large to measure on the device)."""

    def __init__(self, query, reference):
        self._rows = {"query": query, "reference": reference}
        self._same = query is reference

    def _get(self, name):
        rows = self._rows[name]
        if not isinstance(rows, np.ndarray):
            rows = rows.cpu().numpy()
            if self._same:
                self._rows = {"query": rows, "reference": rows}
            self._rows[name] = rows
        return rows

    def query(self) -> np.ndarray:
        return self._get("query")

    def reference(self) -> np.ndarray:
        return self._get("reference")


def _coded_keys(ignore, n_q: int, n_ref: int):
    """``ignore`` key pairs as int64 codes (equal keys, equal codes) for the device."""
    out = []
    for q_keys, r_keys in ignore:
        q_keys, r_keys = np.asarray(q_keys), np.asarray(r_keys)
        if q_keys.shape != (n_q,) or r_keys.shape != (n_ref,):
            raise ShapeError(f"`ignore` keys must have shapes ({n_q},) and ({n_ref},); got "
                             f"{q_keys.shape} and {r_keys.shape}.")
        _, codes = np.unique(np.concatenate([q_keys, r_keys]), return_inverse=True)
        codes = codes.reshape(-1).astype(np.int64)
        out.append((codes[:n_q], codes[n_q:]))
    return out


def _rounded_up(torch, values, dtype):
    """``values`` (float64) in ``dtype``, rounded towards +inf (never below)."""
    rounded = values.to(dtype)
    low = rounded.double() < values
    if low.any():
        rounded = torch.where(low, torch.nextafter(rounded, torch.full_like(rounded, math.inf)),
                              rounded)
    return rounded


def _power_of_two_exponent(value: float) -> int:
    """``e`` with ``value * 2**-e`` in [0.5, 1) (0 for 0)."""
    return math.frexp(value)[1] if value > 0 and math.isfinite(value) else 0


class _DeviceSide:
    """The reference rows in the device's form, and how far its products may be off.

    ``host_reference`` (optional): the rows the host measures; for unit rows, the
    device's are made from them where its own normalisation could differ from the
    host's by more than rounding (see :meth:`_unit`)."""

    def __init__(self, torch, query, reference, metric: str, normalise: bool,
                 host_reference=None):
        self.torch = torch
        self.metric, self.normalise = metric, normalise
        self.host_metric = metric
        self.dim = reference.shape[1]
        self.cdt = compute_dtype(torch, reference)
        if compute_dtype(torch, query) == torch.float64:  # the wider of the two
            self.cdt = torch.float64
        self.wide = torch.float32 if reference.device.type == "mps" else torch.float64
        wide_eps = float(torch.finfo(self.wide).eps)
        c_info = torch.finfo(self.cdt)
        self.u = float(c_info.eps) / 2
        self.tiny = float(c_info.tiny)
        u_mm = matmul_rounding(torch, self.cdt, reference.device)
        exact_inputs = (not normalise and metric == "dot" and reference.is_floating_point()
                        and query.is_floating_point()
                        and torch.finfo(reference.dtype).bits <= c_info.bits
                        and torch.finfo(query.dtype).bits <= c_info.bits)
        rho = 0.0 if exact_inputs or self.cdt == self.wide else self.u  # rounding to cdt
        if normalise:
            rho += (2 * self.dim + 8) * wide_eps / 2  # device and host unit rows differ
        elif metric == "euclidean":
            rho += wide_eps / 2  # centring
        self.beta = math.expm1(2 * math.log1p(rho) + 2 * math.log1p(u_mm)
                               + (self.dim + 4) * math.log1p(self.u))
        self.rho = rho
        self.mean = None
        if normalise:  # unit rows: nothing to centre or scale
            self.host_overflow = False
            self.q_exp = self.r_exp = 0
        else:
            q_max, r_max = self._max_abs(query), self._max_abs(reference)
            # Where a float64 product or squared norm of the host's rows could overflow, the
            # host's fast distances (and so its refusal to rank them) cannot be reproduced
            # here: :func:`search` then runs the host's search itself.
            self.host_overflow = max(q_max, r_max) >= math.sqrt(
                np.finfo(np.float64).max / (64 * max(self.dim, 1)))
            if self.host_overflow:
                return
            if metric == "euclidean":
                total = torch.zeros(self.dim, dtype=self.wide, device=reference.device)
                for start, stop in self._pieces(reference.shape[0]):
                    total += reference[start:stop].to(self.wide).sum(dim=0)
                self.mean = total / max(reference.shape[0], 1)
                q_max = r_max = max(self._max_abs(reference), self._max_abs(query))
            self.q_exp = _power_of_two_exponent(q_max)
            self.r_exp = _power_of_two_exponent(r_max)
        self.R = self._form(reference, self.r_exp, host_reference)
        self.r_max = max((float(self.R[start:stop].to(self.wide).norm(dim=1).max())
                          for start, stop in self._pieces(self.R.shape[0])), default=0.0)
        if metric == "euclidean":
            self.r_sq = torch.cat([(self.R[start:stop] * self.R[start:stop]).sum(dim=1)
                                   for start, stop in self._pieces(self.R.shape[0])]
                                  or [self.R.new_zeros(0)])

    def _pieces(self, n_rows: int):
        """``(start, stop)`` of row pieces of at most :data:`FORM_CELLS` coordinates."""
        step = max(1, FORM_CELLS // max(self.dim, 1))
        return [(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]

    def _max_abs(self, rows) -> float:
        """Largest |coordinate| of the rows in the device's form before scaling (blocks)."""
        top = 0.0
        for start, stop in self._pieces(rows.shape[0]):
            block = rows[start:stop].to(self.wide)
            if self.mean is not None:
                block = block - self.mean
            if block.numel():
                largest = float(block.abs().max())
                top = max(top, largest if largest == largest else math.inf)  # NaN: overflow
        return top

    def _form(self, rows, exponent: int, host_rows=None):
        """Rows as the device multiplies them: centred or unit, scaled by 2**-exponent;
        made piece by piece (float64 temporaries of :data:`FORM_CELLS` coordinates)."""
        pieces = self._pieces(rows.shape[0])
        if len(pieces) == 1:
            return self._form_piece(rows, exponent, host_rows)
        out = self.torch.empty(tuple(rows.shape), dtype=self.cdt, device=rows.device)
        for start, stop in pieces:
            out[start:stop] = self._form_piece(
                rows[start:stop], exponent, None if host_rows is None else host_rows[start:stop])
        return out

    def _form_piece(self, rows, exponent: int, host_rows):
        if self.normalise:
            return self._unit(rows, host_rows)
        wide = rows.to(self.wide)
        if self.mean is not None:
            wide = wide - self.mean
        if exponent:  # two exact steps: 2**1029 (subnormal rows) is not a float64
            half = -exponent // 2
            wide = wide * (2.0 ** half) * (2.0 ** (-exponent - half))
        return wide.to(self.cdt).contiguous()

    def _unit(self, rows, host_rows):
        """The host's unit rows (``host_rows``) in the compute dtype: those themselves
        where they are on the device already, else the rows scaled by their norm here,
        which is the host's scaling up to rounding when every norm lies between 1e-12
        (below it the host's ``x / max(|x|, 1e-12)`` (PML) and ``x / |x|`` (adapters)
        part, and float64 squares lose bits) and 2**500 (no square overflows). Other
        rows are the host's, copied."""
        torch = self.torch
        if host_rows is not None and not isinstance(host_rows, np.ndarray):
            return host_rows.to(device=rows.device, dtype=self.cdt).contiguous()
        wide = rows.to(self.wide)
        norms = wide.norm(dim=1, keepdim=True)
        if host_rows is None or bool(((norms >= 1e-12) & (norms <= 2.0**500)).all()):
            return (wide / norms.clamp_min(1e-12)).to(self.cdt).contiguous()
        host = torch.from_numpy(np.ascontiguousarray(host_rows, dtype=np.float64))
        return host.to(self.cdt).to(rows.device).contiguous()

    def block(self, query_block, host_block=None):
        """``(fast, q_norm)``: the block's fast distances (device, smaller is nearer; squared
        for euclidean) and the norms of its rows in the device's form (host float64)."""
        q = self._form(query_block, self.q_exp, host_block)
        fast = q @ self.R.T
        if self.metric == "euclidean":
            fast.mul_(-2.0).add_((q * q).sum(dim=1)[:, None]).add_(self.r_sq[None, :])
            fast.clamp_min_(0.0)
        else:
            fast.neg_()
        return fast, q.to(self.wide).norm(dim=1).cpu().double().numpy()

    def error(self, q_norm: np.ndarray) -> np.ndarray:
        """Per query row, the bound of |fast - exact distance| in device units."""
        host = error_factor(self.dim) * (1 + self.rho) ** 2
        absolute = (4 * self.dim + 16) * self.tiny
        # The host's float64 products that underflow lose up to this much each (its own
        # bound's absolute term), in device units: all of them where the rows are tiny.
        exponent = 2 * self.q_exp if self.metric == "euclidean" else self.q_exp + self.r_exp
        with np.errstate(over="ignore"):
            underflow = np.ldexp((2 * self.dim + 4) * np.finfo(np.float64).tiny, -exponent)
        if self.metric == "euclidean":
            return (2 * self.beta + host) * (q_norm + self.r_max) ** 2 + 3 * absolute + underflow
        if self.metric == "cosine":  # the host's 1 - dot rounds, whatever the rows' norms
            underflow += 4 * np.finfo(np.float64).eps
        return (2 * self.beta + host) * q_norm * self.r_max + absolute + underflow

    def to_host_space(self, values: np.ndarray, error: np.ndarray):
        """Fast values and their bound as the host's fast distances (undo the scaling;
        cosine: ``1 - similarity``)."""
        if self.metric == "cosine":  # error() holds the rounding of 1 - dot
            return 1.0 + values, error
        exponent = self.q_exp + self.r_exp
        with np.errstate(over="ignore"):
            # Subnormal float64 results lose bits: the absolute term covers them.
            return (np.ldexp(values, exponent),
                    np.ldexp(error, exponent) + 4 * np.finfo(np.float64).smallest_subnormal)
