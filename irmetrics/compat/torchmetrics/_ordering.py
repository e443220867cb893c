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
kernels read crosses to the host: each query's first ``min(k, n)`` entries (a
binary target as bool) and whole-query totals.

Where ``k`` is too large for ``topk``'s partial sort on a CPU (no cutoff, or a
cutoff near ``n``), numpy sorts packed uint64 keys (the prediction's order bits,
the column, a binary target's bit) row by row instead, and ``topk`` runs only on
the rows whose order it decides: those with tied predictions in the prefix.

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
import sys
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from ...engine.ordering import descending_bits, scores_from_descending_bits
from ._kernels import Groups

TIES = ("torchmetrics", "trec_eval", "input_order")

#: Keys sorted per block of rows on a CPU (2 MiB of uint64 keys).
KEY_BLOCK = 2**18

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
    ``ideal`` also sends each query's ``min(k, n)`` largest targets (nDCG's ideal)
    and its number of distinct predictions (the length of torchmetrics' float32 sum).
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


def _grouped(indexes: Tensor | list[Tensor], stable: bool):
    """``(perm, ids, sizes)``: torchmetrics' ``torch.sort(indexes)`` permutation (stable
    on request), then the distinct indexes in that order and their counts (host).

    ``indexes`` may come in parts (the batches ``update`` stored, in order); they
    are concatenated only for a sort. ``perm`` is None where the sort is provably
    the identity: the indexes are nondecreasing (their runs' values strictly
    increase) and the sort is stable.
    """
    parts = [indexes] if isinstance(indexes, Tensor) else indexes
    runs = [torch.unique_consecutive(part, return_counts=True) for part in parts]
    unique, where = torch.unique_consecutive(torch.cat([u for u, _ in runs]), return_inverse=True)
    counts = torch.cat([c for _, c in runs])
    counts = torch.zeros_like(unique, dtype=counts.dtype).index_add_(0, where, counts)  # runs across parts
    nondecreasing = bool((unique[1:] > unique[:-1]).all())
    total = sum(part.numel() for part in parts)
    sort_is_stable = stable or (unique.device.type == "cpu" and total >= RADIX_SORT_MIN
                                and _cpu_index_sort_is_stable())
    if nondecreasing and sort_is_stable:
        return None, unique.cpu().numpy(), counts.cpu().numpy()
    indexes = torch.cat(parts)
    perm = torch.sort(indexes, stable=stable).indices
    unique, counts = torch.unique_consecutive(indexes[perm], return_counts=True)
    return perm, unique.cpu().numpy(), counts.cpu().numpy()


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

def _halves(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(high, low)``: uint32 views of the upper and lower halves of uint64 ``keys``."""
    pairs = keys.view(np.uint32).reshape(keys.shape + (2,))
    high, low = (1, 0) if sys.byteorder == "little" else (0, 1)
    return pairs[..., high], pairs[..., low]


def _key_sorted(values: Tensor, flags: Tensor | None = None) -> np.ndarray:
    """CPU rows sorted by value descending, then column, by numpy's vectorised sort (far
    faster than ``torch.topk``/``sort`` over whole rows).

    uint64 keys: :func:`irmetrics.engine.ordering.descending_bits` of the value in the
    high half (equal for equal values, -0.0 and 0.0 included), ``column << 1 | flag``
    in the low half (rows up to ``2**31`` long), where ``flags`` (bool, same shape;
    False if None) rides along with its item so that a binary target comes out in
    rank order without a gather.
    """
    rows, n = values.shape
    keys = np.empty((rows, n), dtype=np.uint64)
    high, low = _halves(keys)
    descending_bits(values.numpy(), out=high)
    columns = np.arange(n, dtype=np.uint32) << np.uint32(1)
    if flags is None:
        low[...] = columns
    else:
        np.bitwise_or(columns, flags.numpy(), out=low)
    keys.sort(axis=-1)
    return keys


def _tied_rows(ordered: np.ndarray, width: int) -> np.ndarray:
    """Rows of :func:`_key_sorted` keys with a tie among their first ``width`` values."""
    head = _halves(ordered)[0][:, :width]
    return (head[:, 1:] == head[:, :-1]).any(axis=1)


def _key_ranked(values: Tensor, carried: Tensor, kk: int):
    """Host ``(values, carried, tied)``: each CPU row's first ``kk`` entries by value
    descending (in column order inside ties), and whether the row has a tie among
    its first ``kk + 1`` values.

    Rows are key-sorted :data:`KEY_BLOCK` keys at a time, so that the temporaries
    stay in cache and the allocator reuses them. The values are decoded from the
    keys (-0.0 as +0.0); a bool ``carried`` (a binary target) rides in them, any
    other is gathered by column.
    """
    rows, n = values.shape
    binary = carried.dtype == torch.bool
    ranked = np.empty((rows, kk), dtype=np.float32)
    following = np.empty((rows, kk), dtype=bool if binary else np.int64)  # flags or columns
    tied = np.empty(rows, dtype=bool)
    step = max(1, KEY_BLOCK // n)
    for lo in range(0, rows, step):
        block = slice(lo, lo + step)
        ordered = _key_sorted(values[block], carried[block] if binary else None)
        high, low = (half[:, :kk] for half in _halves(ordered))
        ranked[block] = scores_from_descending_bits(high)
        following[block] = low & np.uint32(1) if binary else low >> np.uint32(1)
        tied[block] = _tied_rows(ordered, min(kk + 1, n))
    if not binary:
        following = carried.gather(1, torch.from_numpy(following)).numpy()
    return ranked, following, tied


def _take(values: Tensor, carried: Tensor, local: Tensor):
    """Host ``(values, carried)`` at each row's columns ``local``, in their order."""
    return values.gather(1, local).cpu().numpy(), carried.gather(1, local).cpu().numpy()


def _topk_ranked(values: Tensor, carried: Tensor, kk: int):
    """Host ``(values, carried)`` in the order of
    ``torch.topk(values, kk, dim=-1, sorted=True).indices``, row for row.

    On a CPU, when ``kk`` is too large for topk's partial sort, rows are key-sorted
    (:func:`_key_ranked`), and only rows with a tie among their first ``kk + 1``
    values (the only rows whose top ``kk`` and its order depend on the kernel) are
    given to ``torch.topk``; when a sample of rows says most rows tie, all go to
    ``torch.topk`` at once.
    """
    rows, n = values.shape
    if values.device.type != "cpu" or kk * 64 <= n or rows == 0:
        return _take(values, carried, torch.topk(values, kk, dim=-1, largest=True, sorted=True).indices)
    if rows > 64 and float(_tied_rows(_key_sorted(values[:64]), min(kk + 1, n)).mean()) > 0.5:
        return _take(values, carried, torch.topk(values, kk, dim=-1, largest=True, sorted=True).indices)
    ranked_values, ranked_carried, tied = _key_ranked(values, carried, kk)
    if tied.any():
        tied_values, tied_carried = values[torch.from_numpy(tied)], carried[torch.from_numpy(tied)]
        local = torch.topk(tied_values, kk, dim=-1, largest=True, sorted=True).indices
        ranked_values[tied], ranked_carried[tied] = _take(tied_values, tied_carried, local)
    return ranked_values, ranked_carried


def _descending_ranked(values: Tensor, carried: Tensor):
    """Host ``(values, carried)`` of every row by value descending, any order inside ties."""
    if values.device.type == "cpu":
        return _key_ranked(values, carried, values.shape[1])[:2]
    return _take(values, carried, torch.sort(values, dim=-1, descending=True).indices)


def _row_counts(mask: Tensor) -> Tensor:
    """True entries of each row, int64 (counted by numpy on a CPU: torch reduces bools
    about ten times slower than int64)."""
    if mask.device.type == "cpu":
        return torch.from_numpy(np.count_nonzero(mask.numpy(), axis=1).astype(np.int64, copy=False))
    return mask.sum(dim=1)


def _row_cutoffs(k, n: int, num_pos: Tensor) -> Tensor:
    """Per-row cutoff ``min(k, n)`` as an int64 tensor on the rows' device."""
    if k == "num_pos":
        return torch.clamp(num_pos, max=n)
    return torch.full_like(num_pos, n if k is None else min(k, n))


def _torchmetrics_block(values: Tensor, carried: Tensor, prefix: Prefix, cut: Tensor):
    """Host ``(values, carried, lengths)``: each row's prefix (rows x width) in
    torchmetrics' order, and its length."""
    rows, n = values.shape
    if prefix.op == "topk":
        kk = int(cut[0]) if rows else 0
        return *_topk_ranked(values, carried, kk), cut.cpu().numpy()
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
        return *_take(values, carried, local), cut.cpu().numpy()
    # "ties": through the end of the tie group at rank k, any order inside ties
    kk = int(cut[0]) if rows else 0
    if kk >= n:
        return *_descending_ranked(values, carried), cut.cpu().numpy()
    top = torch.topk(values, kk + 1, dim=-1, largest=True, sorted=True)
    threshold = top.values[:, kk - 1]
    tied = threshold == top.values[:, kk]
    lengths = cut.clone()
    if not bool(tied.any()):
        return *_take(values, carried, top.indices[:, :kk]), lengths.cpu().numpy()
    lengths[tied] = (values[tied] >= threshold[tied, None]).sum(dim=1)
    width = int(lengths.max())
    local = torch.zeros((rows, width), dtype=torch.long, device=values.device)
    local[:, :kk] = top.indices[:, :kk]
    local[tied] = torch.topk(values[tied], width, dim=-1, largest=True, sorted=True).indices
    return *_take(values, carried, local), lengths.cpu().numpy()


def _stable_block(values: Tensor, carried: Tensor, prefix: Prefix, cut: Tensor, ties: str):
    """Host ``(values, carried, lengths)`` in a fixed order: prediction descending,
    then doc id descending (trec_eval) or input position (input_order)."""
    rows, n = values.shape
    if ties == "trec_eval":
        columns = torch.from_numpy(_trec_columns(n)).to(values.device)
        local = columns[torch.sort(values[:, columns], dim=-1, descending=True, stable=True).indices]
    else:
        local = torch.sort(values, dim=-1, descending=True, stable=True).indices
    lengths = cut
    if prefix.op == "ties":
        kk = int(cut[0]) if rows else 0
        threshold = values.gather(1, local[:, max(kk - 1, 0):kk]).reshape(-1)
        lengths = (values >= threshold[:, None]).sum(dim=1) if kk else cut
    return *_take(values, carried, local), lengths.cpu().numpy()


@dataclass
class _Block:
    """The queries of one length, ranked: host ``(rows, width)`` prefixes."""

    rows: np.ndarray  # query numbers, ascending
    values: np.ndarray
    carried: np.ndarray
    lengths: np.ndarray  # each row's prefix length (<= width)
    ideal: Tensor | None  # nDCG's largest targets, rows x min(k, n)
    group_sums: np.ndarray | None = None  # nDCG's float targets summed per tie group, rows x n


# --------------------------------------------------------------------------- public

def ranked_groups(indexes: Tensor | list[Tensor] | None, preds: Tensor, target: Tensor,
                  prefix: Prefix, *, ties: str = "torchmetrics", graded: bool = False) -> Groups:
    """Queries ranked on ``preds``' device as torchmetrics ranks them; what ``prefix``
    asks for, and whole-query totals, as host :class:`~._kernels.Groups`.

    ``indexes`` is flat, or the list of flat batches ``update`` stored; None means one
    query (the functional forms). ``preds`` must be flat float32 and ``target`` flat
    int64 or bool (float allowed when ``graded``), as the Metric stores them. A binary
    target reaches the host as bool (``target != 0``), a graded one as it is.
    """
    device = preds.device
    if indexes is None:
        ids = np.zeros(1, dtype=np.int64)
        sizes = np.array([preds.numel()], dtype=np.int64)
    else:
        perm, ids, sizes = _grouped(indexes, stable=ties != "torchmetrics")
        if perm is not None:
            preds, target = preds[perm], target[perm]
    n_q = len(sizes)
    offsets_dev = torch.from_numpy(np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)).to(device)
    one_block = len(np.unique(sizes)) == 1
    num_pos = torch.empty(n_q, dtype=torch.long, device=device)
    target_sum = torch.empty(n_q, dtype=torch.float64, device=device)
    blocks = []
    distinct = np.zeros(n_q, dtype=np.int64)
    for n, rows in _size_blocks(sizes):
        rows_dev = torch.from_numpy(rows).to(device)
        if one_block:
            block_preds, block_target = preds.reshape(n_q, n), target.reshape(n_q, n)
        else:
            cells = offsets_dev[rows_dev][:, None] + torch.arange(n, device=device)
            block_preds, block_target = preds[cells], target[cells]
        hits = block_target if block_target.dtype == torch.bool else block_target.ne(0)
        num_pos[rows_dev] = _row_counts(hits)
        if not graded:  # 0/1 targets: the sum is the count
            target_sum[rows_dev] = num_pos[rows_dev].double()
        elif block_target.is_floating_point():
            target_sum[rows_dev] = block_target.sum(dim=1, dtype=torch.float64)
        else:
            target_sum[rows_dev] = block_target.sum(dim=1).double()  # int64: exact, no float64 copy
        carried = block_target if graded else hits
        cut = _row_cutoffs(prefix.k, n, num_pos[rows_dev])
        if ties != "torchmetrics":
            ranked = _stable_block(block_preds, carried, prefix, cut, ties)
        else:
            ranked = _torchmetrics_block(block_preds, carried, prefix, cut)
        ideal = group_sums = None
        if prefix.ideal:
            ideal = torch.topk(block_target, int(cut[0]) if len(rows) else 0, dim=-1).values
            distinct[rows] = _distinct_counts(block_preds)
            if block_target.is_floating_point():
                group_sums = _tie_group_sums(block_preds, block_target)
        ranked_values, ranked_carried, lengths = ranked
        blocks.append(_Block(rows, ranked_values, ranked_carried, lengths, ideal, group_sums))
    prefix_offsets, ranked_preds, ranked_target = _concatenated(blocks, n_q)
    groups = Groups(prefix_offsets, ranked_preds, ranked_target, sizes=sizes,
                    num_pos=num_pos.cpu().numpy(), target_sum=target_sum.cpu().numpy(), ids=ids)
    if prefix.ideal:
        groups.ideal = _ideal_gains(blocks, n_q)
        groups.distinct = distinct
        if any(block.group_sums is not None for block in blocks):
            groups.group_sums = _group_sums(blocks, distinct)
    return groups


def _tie_group_sums(values: Tensor, target: Tensor) -> np.ndarray:
    """Host float32 ``(rows, n)``: row ``r``'s targets summed per distinct value,
    largest value first (columns past the row's distinct count are 0).

    torchmetrics' ``_tie_average_dcg`` adds a query's float targets into its tie
    groups with a float32 ``scatter_add_`` in the query's entry order; a row of a
    2-D ``scatter_add_`` along dim 1 adds in the same order, so fractional targets
    get its bits.
    """
    ordered, order = torch.sort(values, dim=1, descending=True)
    starts = torch.ones_like(ordered, dtype=torch.long)
    starts[:, 1:] = (ordered[:, 1:] != ordered[:, :-1]).long()
    group = torch.empty_like(order).scatter_(1, order, starts.cumsum(dim=1) - 1)
    sums = torch.zeros(values.shape, dtype=torch.float32, device=values.device)
    return sums.scatter_add_(1, group, target.float()).cpu().numpy()


def _group_sums(blocks: list[_Block], distinct: np.ndarray) -> np.ndarray:
    """CSR float32 tie-group sums, ``distinct[q]`` per query."""
    offsets = np.concatenate(([0], np.cumsum(distinct))).astype(np.int64)
    sums = np.zeros(int(offsets[-1]), dtype=np.float32)
    for block in blocks:
        if block.group_sums is None:
            continue
        column = np.arange(block.group_sums.shape[1])
        inside = column < distinct[block.rows][:, None]
        sums[(offsets[block.rows][:, None] + column)[inside]] = block.group_sums[inside]
    return sums


def _distinct_counts(values: Tensor) -> np.ndarray:
    """Distinct values of each row (-0.0 and 0.0 one value, as ``torch.unique`` has it)."""
    if values.device.type == "cpu":
        ordered = np.sort(values.numpy(), axis=1)
        return np.count_nonzero(ordered[:, 1:] != ordered[:, :-1], axis=1) + 1
    on_device = torch.sort(values, dim=1).values
    return ((on_device[:, 1:] != on_device[:, :-1]).sum(dim=1) + 1).cpu().numpy()


def _concatenated(blocks: list[_Block], n_q: int):
    """CSR ``(offsets, values, carried)`` of the blocks' prefixes, queries in order."""
    lengths = np.zeros(n_q, dtype=np.int64)
    for block in blocks:
        lengths[block.rows] = block.lengths
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    if len(blocks) == 1 and (lengths == blocks[0].values.shape[1]).all():
        return offsets, blocks[0].values.reshape(-1), blocks[0].carried.reshape(-1)  # rows 0..Q-1
    values = np.empty(int(offsets[-1]), dtype=blocks[0].values.dtype)
    carried = np.empty(int(offsets[-1]), dtype=blocks[0].carried.dtype)
    for block in blocks:
        column = np.arange(block.values.shape[1])
        inside = column < block.lengths[:, None]
        destination = (offsets[block.rows][:, None] + column)[inside]
        values[destination] = block.values[inside]
        carried[destination] = block.carried[inside]
    return offsets, values, carried


def _ideal_gains(blocks: list[_Block], n_q: int):
    """CSR ``(offsets, gains)`` of each query's largest targets, descending."""
    ideals = [block.ideal for block in blocks if block.ideal is not None]  # all of them
    widths = np.zeros(n_q, dtype=np.int64)
    for block, ideal in zip(blocks, ideals):
        widths[block.rows] = ideal.shape[1]
    offsets = np.concatenate(([0], np.cumsum(widths))).astype(np.int64)
    gains = np.empty(int(offsets[-1]), dtype=np.float64)
    for block, ideal in zip(blocks, ideals):
        cells = offsets[block.rows][:, None] + np.arange(ideal.shape[1])
        gains[cells.reshape(-1)] = ideal.double().cpu().numpy().reshape(-1)
    return offsets, gains
