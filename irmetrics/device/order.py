"""Score matrices and flat predictions ordered on the device, ties exactly.

Equal scores are never left to the device's sort: :func:`top_k_rows` keeps the whole
tie group at the cut and the host cuts it by the tie rank; :func:`sort_groups` runs
stable sorts, least significant key first, so equal keys keep a defined order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.ordering import float32_scores, rank_order
from ..exceptions import ShapeError
from .arrays import as_tensor, import_torch

#: Default device memory of one block of rows (scores and masks).
BLOCK_BYTES = 1 << 28


def _comparable(torch, values):
    """Scores the device can compare exactly as numpy compares their float64 widening:
    floats as they are, integers and bools as float64 (numpy's conversion)."""
    return values if values.is_floating_point() else values.to(torch.float64)


def top_k_rows(scores, k: int, *, tie_rank=None, lengths=None, block_rows: int | None = None,
               block_bytes: int = BLOCK_BYTES):
    """The ``k`` best cells of every row of a (B, L) score matrix, exactly.

    Order: score descending, then ``tie_rank`` descending (the larger first; default:
    the column index). The device takes each row's k-th largest score and sends every
    cell at least that large (the whole tie group at the cut); the host orders those
    and cuts at ``k``. Device memory holds one block of rows at a time.

    Parameters
    ----------
    scores : tensor (or array torch reads), shape (B, L)
        Real numbers; finite in valid cells (the caller checks).
    k : int >= 1
    tie_rank : ndarray of int, shape (L,), optional
    lengths : array of int, shape (B,), optional
        Row ``i`` holds ``lengths[i]`` valid cells (the first ones); others are ignored.
    block_rows : int >= 1, optional
        Rows per block; default: as many as ``block_bytes`` holds.
    block_bytes : int, default :data:`BLOCK_BYTES`

    Returns
    -------
    (rows, cols, values) : ndarrays (int64, int64, float64)
        ``min(k, valid cells)`` entries per row, rows ascending, each row in order.

    Examples
    --------
    >>> import torch
    >>> rows, cols, values = top_k_rows(torch.tensor([[0.5, 2.0, 0.5, 1.0]]), 3)
    >>> cols.tolist(), values.tolist()
    ([1, 3, 2], [2.0, 1.0, 0.5])
    """
    torch = import_torch()
    scores = as_tensor(scores, "scores")
    if scores.ndim != 2:
        raise ShapeError(f"`scores` must be 2-D (queries x documents); got shape "
                         f"{tuple(scores.shape)}.")
    n_rows, n_cols = scores.shape
    k = int(min(k, n_cols))
    if lengths is not None:
        lengths = as_tensor(lengths, "lengths", like=scores).to(torch.int64)
    if n_rows == 0 or k <= 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, np.zeros(0)
    if block_rows is None:
        block_rows = max(1, int(block_bytes) // max(n_cols * (scores.element_size() + 2), 1))
    all_rows, all_cols, all_values = [], [], []
    for start in range(0, n_rows, block_rows):
        block = _comparable(torch, scores[start:start + block_rows])
        if lengths is not None:
            valid = torch.arange(n_cols, device=block.device) < lengths[start:start + len(block),
                                                                        None]
            block = block.masked_fill(~valid, -float("inf"))
        else:
            valid = None
        kth = torch.topk(block, k, dim=1, sorted=False).values.amin(dim=1)
        candidates = block >= kth[:, None]
        if valid is not None:
            candidates &= valid
        rows, cols = candidates.nonzero(as_tuple=True)
        all_values.append(block[rows, cols].cpu().double().numpy())
        all_rows.append(rows.cpu().numpy() + start)
        all_cols.append(cols.cpu().numpy())
    rows, cols, values = (np.concatenate(all_rows), np.concatenate(all_cols),
                          np.concatenate(all_values))
    ties = cols if tie_rank is None else np.asarray(tie_rank)[cols]
    order = rank_order(rows, values, -ties)
    rows, cols, values = rows[order], cols[order], values[order]
    starts = np.searchsorted(rows, rows, side="left")
    keep = np.arange(len(rows)) - starts < k
    return rows[keep].astype(np.int64), cols[keep].astype(np.int64), values[keep]


@dataclass
class GroupOrder:
    """Flat elements grouped and ordered (see :func:`sort_groups`); host arrays.

    ``order[t]`` is the input position of the ``t``-th element in the final order;
    ``codes`` its group's code (into ``ids``, the distinct group values ascending),
    ``ordinals`` its position among its group's elements in input order, ``values``
    its score (float64, or the float32 rounding with ``float32``); ``counts[c]`` is
    the size of group ``c``; ``carried`` holds the ``carry`` arrays in final order.
    """

    order: np.ndarray
    codes: np.ndarray
    ordinals: np.ndarray
    values: np.ndarray
    ids: np.ndarray
    counts: np.ndarray
    carried: tuple


def _stable_argsort(torch, keys, descending=False):
    return torch.sort(keys, descending=descending, stable=True).indices


def sort_groups(values, groups, *, group_rank=None, ordinal_tie_rank=None,
                float32: bool = False, carry=()) -> GroupOrder:
    """Flat scores grouped and ordered on the device, equal scores in a defined order.

    Final order: group (``group_rank[code]`` ascending; default: the group values
    ascending), then score descending (``-0.0`` equal to ``0.0``), then
    ``ordinal_tie_rank[ordinal]`` descending where given (trec_eval's doc id rule for
    documents numbered by ordinal), else input position ascending.

    Parameters
    ----------
    values : tensor (or array torch reads), shape (N,)
        Real scores without NaN (the caller checks).
    groups : integer tensor or array, shape (N,)
        Group (query) of every element; need not be sorted or contiguous.
    group_rank : callable, optional
        ``group_rank(ids)`` gives the rank (ints) of each distinct group value of
        ``ids`` (ascending, on the host), e.g. the byte order of their id strings.
    ordinal_tie_rank : callable, optional
        ``ordinal_tie_rank(n)`` gives the tie rank (ints) of the ``j``-th element of a
        group for ``j < n`` (``n``: the largest group), e.g. doc ids' byte order.
    float32 : bool, default False
        Compare (and return) the scores rounded to float32 (torchmetrics' order).
    carry : sequence of tensors or arrays of shape (N,)
        Gathered in the final order on the device and returned as host arrays.

    Returns
    -------
    GroupOrder

    Examples
    --------
    >>> import torch
    >>> g = sort_groups(torch.tensor([0.1, 0.5, 0.5, 0.9]), torch.tensor([7, 3, 7, 3]),
    ...                 carry=[torch.tensor([1, 0, 1, 1])])
    >>> g.order.tolist(), g.codes.tolist(), g.ids.tolist(), g.carried[0].tolist()
    ([3, 1, 2, 0], [0, 0, 1, 1], [3, 7], [1, 0, 1, 1])
    """
    torch = import_torch()
    values = as_tensor(values, "values").reshape(-1)
    groups = as_tensor(groups, "groups", like=values).reshape(-1)
    if groups.shape != values.shape:
        raise ShapeError(f"`groups` must have the shape of `values` {tuple(values.shape)}; "
                         f"got {tuple(groups.shape)}.")
    n = values.numel()
    ids, codes, counts = torch.unique(groups, sorted=True, return_inverse=True,
                                      return_counts=True)
    # Ordinal of every element inside its group, in input order: a stable sort by group.
    by_group = _stable_argsort(torch, codes)
    starts = torch.cumsum(counts, 0) - counts
    ordinals = torch.empty_like(codes)
    ordinals[by_group] = torch.arange(n, device=codes.device) - starts[codes[by_group]]
    scores = float32_scores(values) if float32 else _comparable(torch, values)
    # Least significant key first; every sort is stable.
    host_ids = ids.cpu().numpy()
    if ordinal_tie_rank is not None:
        largest = int(counts.max()) if n else 0
        tie = as_tensor(np.asarray(ordinal_tie_rank(largest), dtype=np.int64),
                        "ordinal_tie_rank", like=values)[ordinals]
        order = _stable_argsort(torch, tie, descending=True)
    else:
        order = torch.arange(n, device=values.device)
    # -0.0 + 0.0 is 0.0: equal, as trec_eval compares them (a radix sort would not).
    order = order[_stable_argsort(torch, scores[order] + 0.0, descending=True)]
    rank = codes if group_rank is None else as_tensor(
        np.asarray(group_rank(host_ids), dtype=np.int64), "group_rank", like=values)[codes]
    order = order[_stable_argsort(torch, rank[order])]
    carried = tuple(to_host_in(torch, as_tensor(c, f"carry[{i}]", like=values).reshape(-1),
                               order) for i, c in enumerate(carry))
    return GroupOrder(order=_indices_to_host(torch, order, n),
                      codes=_indices_to_host(torch, codes[order], n),
                      ordinals=_indices_to_host(torch, ordinals[order], n),
                      values=to_host_in(torch, scores, order).astype(np.float64), ids=host_ids,
                      counts=counts.cpu().numpy().astype(np.int64), carried=carried)


def _indices_to_host(torch, indices, n: int) -> np.ndarray:
    """int64 indices in ``[0, n)`` as a host int64 array; for ``n <= 2**31`` they cross as
    int32 (half the bytes over the bus, widened on the host)."""
    if n <= 2**31:
        return indices.to(torch.int32).cpu().numpy().astype(np.int64)
    return indices.cpu().numpy()


def to_host_in(torch, tensor, order) -> np.ndarray:
    """``tensor[order]`` gathered on the device, copied to the host (bfloat16 widened)."""
    gathered = tensor[order]
    if gathered.is_floating_point() and gathered.dtype not in (torch.float16, torch.float32,
                                                               torch.float64):
        gathered = gathered.float()
    return gathered.cpu().numpy()
