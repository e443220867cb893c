"""torchmetrics' ranking order on the device, for all queries at once.

torchmetrics 1.9.0 ranks inside ``compute()``: ``torch.sort(indexes)`` (not stable)
groups the queries, then a Python loop calls ``preds.topk(min(k, n), sorted=True)``
(average precision, reciprocal rank, precision, AUROC, precision-recall curve) or
``torch.argsort(preds, descending=True)`` (recall, fall-out, hit rate,
R-precision) on each query. Where predictions tie, the order these give is the
kernel's own (introselect, std::sort or x86-simd-sort on a CPU, radix and bitonic
sorts on a GPU) and so is part of torchmetrics' numbers.

This module gives the same order without the loop: it makes the same
``torch.sort(indexes)`` call, stacks the queries of each distinct length ``n`` as
the rows of one matrix and calls the same ``topk``/``argsort`` along its last
dimension. A CPU kernel works row by row with the row's values, ``n`` and ``k``
only, so each row comes out as the per-query call gives it. Only what the host
kernels read crosses to the host: each query's first ``min(k, n)`` entries and
whole-query totals.

Set-valued reads (``argsort(...)[:k]`` read as a set) take a cheap ``topk(k + 1)``
and run the full ``argsort`` only on rows where rank ``k`` ties with rank ``k + 1``,
the only rows whose set depends on the kernel's tie order.

``ties="trec_eval"`` orders every query by prediction descending, then by doc id
descending in byte order, doc ids being ``d0, d1, ...`` in input order inside
the query (as :func:`irmetrics.adapters.from_flat` numbers them);
``ties="input_order"`` keeps tied predictions in input order (the numpy face's order).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from ...engine.ties import descending_keys
from ._kernels import Groups

TIES = ("torchmetrics", "trec_eval", "input_order")

#: ATen's ``GRAIN_SIZE``: a 1-D integer CPU tensor at least this long is sorted by
#: fbgemm's radix sort (stable) when torch was built with it.
RADIX_SORT_MIN = 32768


@dataclass(frozen=True)
class Prefix:
    """What a kernel reads of each query's ranking.

    ``op`` is ``"topk"`` (the first ``min(k, n)`` entries in the order of
    ``preds.topk(min(k, n), sorted=True)``), ``"argsort"`` (the first ``k`` of
    ``argsort(preds, descending=True)``, read as a set) or ``"ties"`` (every entry
    scoring at least the k-th largest prediction, in descending order, any order
    inside ties: nDCG's tie-averaged gain). ``k`` is an int, None (the whole query)
    or ``"num_pos"`` (each query's number of positive targets: R-precision).
    ``ideal`` also sends each query's ``min(k, n)`` largest targets (nDCG's ideal).
    """

    op: str
    k: int | str | None = None
    ideal: bool = False


# --------------------------------------------------------------------------- grouping

@functools.cache
def _cpu_index_sort_is_stable() -> bool:
    """Whether ``torch.sort`` of a 1-D int64 CPU tensor of ``RADIX_SORT_MIN`` or more
    elements is stable in this build (probed once: an unstable sort of 32,768 values
    drawn from 64 would not keep every tie in input order by chance)."""
    probe = torch.randint(0, 64, (RADIX_SORT_MIN,), generator=torch.Generator().manual_seed(0))
    return torch.equal(torch.sort(probe).indices, torch.sort(probe, stable=True).indices)


def _index_order(indexes: Tensor, stable: bool) -> Tensor | None:
    """torchmetrics' ``torch.sort(indexes)`` permutation (stable on request), or None
    where it is provably the identity: nondecreasing indexes and a stable sort."""
    nondecreasing = indexes.numel() < 2 or bool((indexes[1:] >= indexes[:-1]).all())
    sort_is_stable = stable or (indexes.device.type == "cpu" and indexes.numel() >= RADIX_SORT_MIN
                                and _cpu_index_sort_is_stable())
    if nondecreasing and sort_is_stable:
        return None
    return torch.sort(indexes, stable=stable).indices


def _size_blocks(sizes: np.ndarray):
    """``(n, rows)`` for every distinct query length ``n``; ``rows`` ascending."""
    order = np.argsort(sizes, kind="stable")
    cuts = np.flatnonzero(np.diff(sizes[order])) + 1
    for rows in np.split(order, cuts):
        yield int(sizes[rows[0]]), rows


@functools.lru_cache(maxsize=64)
def _trec_columns(n: int) -> np.ndarray:
    """Positions ``0..n-1`` ordered by doc id ``d<position>`` descending in byte order."""
    return np.argsort(np.arange(n).astype(str), kind="stable")[::-1].copy()


# --------------------------------------------------------------------------- per block

def _key_sorted(values: Tensor) -> Tensor:
    """CPU rows sorted by value descending, then column, by numpy's vectorised sort (far
    faster than ``torch.topk``/``sort`` over whole rows): uint64 keys holding
    :func:`irmetrics.engine.ties.descending_keys` in the high half and the column in the low half,
    viewed as int64. ``key >> 32`` is equal for equal values (-0.0 and 0.0 included);
    ``key & 0xffffffff`` is the column."""
    keys = descending_keys(values.numpy()) << np.uint64(32)
    keys |= np.arange(values.shape[1], dtype=np.uint64)
    keys.sort(axis=-1)
    return torch.from_numpy(keys.view(np.int64))


def _tied_rows(ordered: Tensor, width: int) -> Tensor:
    """Rows of :func:`_key_sorted` keys with a tie among their first ``width`` values."""
    head = ordered[:, :width] >> 32
    return (head[:, 1:] == head[:, :-1]).any(dim=1)


def _topk_indices(values: Tensor, kk: int) -> Tensor:
    """``torch.topk(values, kk, dim=-1, sorted=True).indices``, row for row.

    On a CPU, when ``kk`` is too large for topk's partial sort, rows are key-sorted
    and only rows with a tie among their first ``kk + 1`` values (the only rows whose
    top ``kk`` and its order depend on the kernel) are given to ``torch.topk``; when a
    sample of rows says most rows tie, all go to ``torch.topk`` at once.
    """
    rows, n = values.shape
    if values.device.type != "cpu" or kk * 64 <= n or rows == 0:
        return torch.topk(values, kk, dim=-1, largest=True, sorted=True).indices
    width = min(kk + 1, n)
    if rows > 64 and float(_tied_rows(_key_sorted(values[:64]), width).float().mean()) > 0.5:
        return torch.topk(values, kk, dim=-1, largest=True, sorted=True).indices
    ordered = _key_sorted(values)
    local = ordered[:, :kk] & 0xFFFFFFFF
    tied = _tied_rows(ordered, width)
    if bool(tied.any()):
        local[tied] = torch.topk(values[tied], kk, dim=-1, largest=True, sorted=True).indices
    return local


def _descending_indices(values: Tensor) -> Tensor:
    """Columns of every row by value descending, in any order inside ties."""
    if values.device.type == "cpu":
        return _key_sorted(values) & 0xFFFFFFFF
    return torch.sort(values, dim=-1, descending=True).indices


def _row_cutoffs(k, n: int, num_pos: Tensor) -> Tensor:
    """Per-row cutoff ``min(k, n)`` as an int64 tensor on the rows' device."""
    if k == "num_pos":
        return torch.clamp(num_pos, max=n)
    return torch.full_like(num_pos, n if k is None else min(k, n))


def _torchmetrics_block(values: Tensor, prefix: Prefix, cut: Tensor):
    """``(local, lengths)``: each row's prefix as column numbers (rows x width) in
    torchmetrics' order, and its length."""
    rows, n = values.shape
    if prefix.op == "topk":
        kk = int(cut[0]) if rows else 0
        return _topk_indices(values, kk), cut
    if prefix.op == "argsort":
        whole = cut >= n  # the whole row: a set, in any order
        width = int(cut.max()) if rows else 0
        local = torch.arange(n, device=values.device).expand(rows, n)[:, :width].clone()
        part = ~whole
        if bool(part.any()):
            sub, sub_cut = values[part], cut[part]
            kmax = int(sub_cut.max())
            top = torch.topk(sub, kmax + 1, dim=-1, largest=True, sorted=True)
            at_k = top.values.gather(1, (sub_cut - 1).clamp(min=0)[:, None])[:, 0]
            after_k = top.values.gather(1, sub_cut[:, None])[:, 0]
            chosen = top.indices[:, :kmax].clone()
            tied = (sub_cut > 0) & (at_k == after_k)
            if bool(tied.any()):  # the set depends on the kernel's order: ask it
                chosen[tied] = torch.argsort(sub[tied], dim=-1, descending=True)[:, :kmax]
            local[part, :kmax] = chosen
        return local, cut
    # "ties": through the end of the tie group at rank k, any order inside ties
    kk = int(cut[0]) if rows else 0
    if kk >= n:
        return _descending_indices(values), cut
    top = torch.topk(values, kk + 1, dim=-1, largest=True, sorted=True)
    threshold = top.values[:, kk - 1]
    tied = threshold == top.values[:, kk]
    lengths = cut.clone()
    if not bool(tied.any()):
        return top.indices[:, :kk], lengths
    lengths[tied] = (values[tied] >= threshold[tied, None]).sum(dim=1)
    width = int(lengths.max())
    local = torch.zeros((rows, width), dtype=torch.long, device=values.device)
    local[:, :kk] = top.indices[:, :kk]
    local[tied] = torch.topk(values[tied], width, dim=-1, largest=True, sorted=True).indices
    return local, lengths


def _stable_block(values: Tensor, prefix: Prefix, cut: Tensor, ties: str):
    """``(local, lengths)`` in a fixed order: prediction descending, then doc id
    descending (trec_eval) or input position (input_order)."""
    rows, n = values.shape
    if ties == "trec_eval":
        columns = torch.from_numpy(_trec_columns(n)).to(values.device)
        local = columns[torch.sort(values[:, columns], dim=-1, descending=True, stable=True).indices]
    else:
        local = torch.sort(values, dim=-1, descending=True, stable=True).indices
    if prefix.op != "ties":
        return local, cut
    kk = int(cut[0]) if rows else 0
    threshold = values.gather(1, local[:, max(kk - 1, 0):kk]).reshape(-1)
    lengths = (values >= threshold[:, None]).sum(dim=1) if kk else cut
    return local, lengths


# --------------------------------------------------------------------------- public

def ranked_groups(indexes: Tensor | None, preds: Tensor, target: Tensor, prefix: Prefix, *,
                  ties: str = "torchmetrics", graded: bool = False) -> Groups:
    """Queries ranked on ``preds``' device as torchmetrics ranks them; what ``prefix``
    asks for, and whole-query totals, as host :class:`~._kernels.Groups`.

    ``indexes`` None means one query (the functional forms). ``preds`` must be
    float32 and ``target`` int64 (float for graded), flat, as the Metric stores them.
    """
    device = preds.device
    if indexes is None:
        ids = np.zeros(1, dtype=np.int64)
        sizes = np.array([preds.numel()], dtype=np.int64)
    else:
        perm = _index_order(indexes, stable=ties != "torchmetrics")
        if perm is not None:
            indexes, preds, target = indexes[perm], preds[perm], target[perm]
        unique, counts = torch.unique_consecutive(indexes, return_counts=True)
        ids, sizes = unique.cpu().numpy(), counts.cpu().numpy()
    n_q = len(sizes)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    offsets_dev = torch.from_numpy(offsets).to(device)
    one_block = len(np.unique(sizes)) == 1
    num_pos = torch.empty(n_q, dtype=torch.long, device=device)
    target_sum = torch.empty(n_q, dtype=torch.float64, device=device)
    blocks = []
    for n, rows in _size_blocks(sizes):
        rows_dev = torch.from_numpy(rows).to(device)
        if one_block:
            block_preds, block_target = preds.reshape(n_q, n), target.reshape(n_q, n)
        else:
            cells = offsets_dev[rows_dev][:, None] + torch.arange(n, device=device)
            block_preds, block_target = preds[cells], target[cells]
        if block_target.is_floating_point():
            row_sums = block_target.sum(dim=1, dtype=torch.float64)
        else:
            row_sums = block_target.sum(dim=1)  # int64: exact, no float64 copy
        target_sum[rows_dev] = row_sums.double()
        num_pos[rows_dev] = block_target.ne(0).sum(dim=1) if graded else row_sums.long()
        cut = _row_cutoffs(prefix.k, n, num_pos[rows_dev])
        if ties != "torchmetrics":
            local, lengths = _stable_block(block_preds, prefix, cut, ties)
        else:
            local, lengths = _torchmetrics_block(block_preds, prefix, cut)
        ideal = None
        if prefix.ideal:
            ideal = torch.topk(block_target, int(cut[0]) if len(rows) else 0, dim=-1).values
        blocks.append((rows, rows_dev, local, lengths.cpu().numpy(), ideal))
    lengths = np.zeros(n_q, dtype=np.int64)
    for rows, _, _, block_lengths, _ in blocks:
        lengths[rows] = block_lengths
    prefix_offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    positions = _gather_positions(blocks, offsets_dev, prefix_offsets, device)
    groups = Groups(prefix_offsets, preds[positions].cpu().numpy(), target[positions].cpu().numpy(),
                    sizes=sizes, num_pos=num_pos.cpu().numpy(), target_sum=target_sum.cpu().numpy(),
                    ids=ids)
    if prefix.ideal:
        groups.ideal = _ideal_gains(blocks, n_q)
    return groups


def _gather_positions(blocks, offsets_dev: Tensor, prefix_offsets: np.ndarray, device) -> Tensor:
    """Flat positions (into the grouped arrays) of every query's prefix, queries in order."""
    total = int(prefix_offsets[-1])
    if len(blocks) == 1 and (blocks[0][3] == blocks[0][2].shape[1]).all():
        _rows, rows_dev, local, _, _ = blocks[0]
        return (offsets_dev[rows_dev][:, None] + local).reshape(-1)  # rows are 0..Q-1 in order
    positions = torch.empty(total, dtype=torch.long, device=device)
    prefix_dev = torch.from_numpy(prefix_offsets).to(device)
    for _, rows_dev, local, block_lengths, _ in blocks:
        width = local.shape[1]
        column = torch.arange(width, device=device)
        inside = column[None, :] < torch.from_numpy(block_lengths).to(device)[:, None]
        source = offsets_dev[rows_dev][:, None] + local
        destination = prefix_dev[rows_dev][:, None] + column
        positions[destination[inside]] = source[inside]
    return positions


def _ideal_gains(blocks, n_q: int):
    """CSR ``(offsets, gains)`` of each query's largest targets, descending."""
    widths = np.zeros(n_q, dtype=np.int64)
    for rows, _, _, _, ideal in blocks:
        widths[rows] = ideal.shape[1]
    offsets = np.concatenate(([0], np.cumsum(widths))).astype(np.int64)
    gains = np.empty(int(offsets[-1]), dtype=np.float64)
    for rows, _, _, _, ideal in blocks:
        width = ideal.shape[1]
        cells = offsets[rows][:, None] + np.arange(width)
        gains[cells.reshape(-1)] = ideal.double().cpu().numpy().reshape(-1)
    return offsets, gains
