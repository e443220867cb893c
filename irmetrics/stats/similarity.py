"""How alike two rankings of items are, query by query: rank-biased overlap with ties,
Kendall's tau-b and tau_AP on the shared items, Jaccard and overlap at k, recall at k.

Arrays go in, numbers come out. Many rankings (one per query) travel together in CSR form:
``items`` holds the item codes of every ranking one after the other, ``offsets`` (Q + 1)
says where ranking ``q`` starts and ends, and the optional ``scores`` say which items are
tied (equal score) and in which order they come (highest first; without scores the order
given is the ranking and nothing is tied). Every function is vectorised over the
rankings: no Python loop runs per query or per item.

Rank-biased overlap (Webber, Moffat & Zobel, TOIS 2010) with ties follows Corsi & Urbano,
"The Treatment of Ties in Rank-Biased Overlap" (SIGIR 2024): :math:`RBO^w` (a tie is
equality), :math:`RBO^a` (a tie is uncertainty: the expected RBO when ties are broken at
random) and :math:`RBO^b` (:math:`RBO^a` corrected so that a ranking with ties is fully
similar to itself), each in its extrapolated (``ext``), lower bound (``min``), upper bound
(``max``) and residual (``res = max - min``) forms. Without ties the three variants are
Webber et al.'s RBO.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from irmetrics.checks import check_choice, check_float, check_positive_int, parameter_error
from irmetrics.exceptions import ShapeError
from irmetrics.parallel import map_ordered

__all__ = [
    "RBO_TIES",
    "RBOResult",
    "TiedRankings",
    "rankings",
    "rbo",
    "rbo_rankings",
    "overlap_at_k",
    "shared_items",
    "shared_rank_correlation",
]

#: The tie-aware variants of RBO (Corsi & Urbano 2024): equality, average, corrected.
RBO_TIES = ("w", "a", "b")

#: Depths (slots of the longer ranking of each pair) per block of :func:`rbo_rankings`:
#: bounds its working memory (a few dozen arrays of this many elements).
_SLOT_BLOCK = 1 << 18


@dataclass(frozen=True, eq=False)
class TiedRankings:
    """Q rankings with ties, in CSR form, each sorted best first.

    Attributes
    ----------
    offsets : ndarray of int64, shape (Q + 1,)
        Ranking ``q`` is entries ``offsets[q]:offsets[q + 1]``.
    items : ndarray of int64
        Item codes, best first within each ranking; unique within a ranking.
    top, bottom : ndarray of int64
        0-based positions of the first and the last entry of each entry's tie group
        (equal for an untied entry).
    by_item : ndarray of int64
        The entries ordered by (ranking, item) (to match the items of two rankings
        without sorting again).
    """

    offsets: np.ndarray
    items: np.ndarray
    top: np.ndarray
    bottom: np.ndarray
    by_item: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def seg(self) -> np.ndarray:
        """The ranking (query index) of each entry (computed once)."""
        return np.repeat(np.arange(len(self.offsets) - 1, dtype=np.int64), self.lengths)


def rankings(items: Any, offsets: Any, scores: Any = None, *, name: str = "items") -> TiedRankings:
    """Q rankings from item codes, CSR offsets and optional scores (equal score: tied).

    Parameters
    ----------
    items : array-like of int, shape (N,)
        Item codes, ranking after ranking.
    offsets : array-like of int, shape (Q + 1,)
        Non-decreasing, from 0 to N.
    scores : array-like of float, shape (N,), optional
        Higher is better; items with equal scores are tied. Without scores the order given
        is the ranking and no two items are tied.
    name : str
        The parameter name errors use.

    Returns
    -------
    TiedRankings

    Raises
    ------
    irmetrics.exceptions.ParameterError
        Offsets that do not cut ``items``, a NaN score, or an item twice in one ranking
        (the message names the ranking and the item).

    Examples
    --------
    >>> r = rankings([7, 8, 9], [0, 3], scores=[0.5, 0.9, 0.5])
    >>> r.items.tolist(), r.top.tolist(), r.bottom.tolist()
    ([8, 7, 9], [0, 1, 1], [0, 2, 2])
    """
    codes = np.asarray(items)
    if codes.ndim != 1 or (codes.size and not np.issubdtype(codes.dtype, np.integer)):
        raise parameter_error(name, "a 1-D array of integer item codes", items)
    codes = codes.astype(np.int64, copy=False)
    cuts = np.asarray(offsets)
    if (cuts.ndim != 1 or cuts.size < 1 or not np.issubdtype(cuts.dtype, np.integer)
            or cuts[0] != 0 or cuts[-1] != codes.size or np.any(np.diff(cuts) < 0)):
        raise parameter_error(f"{name} offsets", f"non-decreasing integers from 0 to {codes.size}",
                              offsets)
    cuts = cuts.astype(np.int64)
    n_rankings = cuts.size - 1
    seg = np.repeat(np.arange(n_rankings, dtype=np.int64), np.diff(cuts))
    if scores is None:
        order = np.arange(codes.size, dtype=np.int64)
        value = -order.astype(np.float64)
    else:
        value = np.asarray(scores, dtype=np.float64)
        if value.shape != codes.shape:
            raise ShapeError(f"`{name} scores` must have the shape of `{name}` {codes.shape};"
                             f" got shape {value.shape}.")
        if np.isnan(value).any():
            at = int(np.flatnonzero(np.isnan(value))[0])
            raise parameter_error(f"{name} scores", f"free of NaN (ranking {int(seg[at])}, "
                                  f"item {int(codes[at])} is NaN)", float(value[at]))
        descending = np.ones(codes.size, dtype=bool)
        descending[1:] = (value[1:] <= value[:-1]) | (seg[1:] != seg[:-1])
        # runs come best first already (the usual case): no sort needed
        order = np.arange(codes.size) if descending.all() else np.lexsort((-value, seg))
    codes, value = codes[order], value[order]
    by_item, keys = _item_keys(seg, codes)
    twice = np.diff(keys) == 0
    if twice.any():
        at = by_item[int(np.flatnonzero(twice)[0])]
        raise parameter_error(name, f"unique within each ranking (ranking {int(seg[at])} holds "
                              f"item {int(codes[at])} twice)", int(codes[at]))
    position = np.arange(codes.size, dtype=np.int64) - cuts[seg]
    starts = np.ones(codes.size, dtype=bool)
    starts[1:] = (seg[1:] != seg[:-1]) | (value[1:] != value[:-1])
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    last = np.append(first[1:], codes.size)[:first.size] - 1
    top = position[first][group]
    bottom = position[last][group]
    result = TiedRankings(offsets=cuts, items=codes, top=top, bottom=bottom, by_item=by_item)
    result.__dict__["seg"] = seg  # the cached property, already at hand (order keeps seg)
    return result


def _item_keys(seg: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Entries ordered by (ranking, item), and their sort keys ``(ranking, item)``
    packed in one int64 (one integer sort instead of a two-key one)."""
    if not codes.size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    low = int(codes.min())
    span = int(codes.max()) - low + 1
    if span * (int(seg[-1]) + 1) >= 2**62:  # codes too spread to pack: two keys
        order = np.lexsort((codes, seg))
        ranks = np.cumsum(np.concatenate([[0], (np.diff(codes[order]) != 0)
                                          | (np.diff(seg[order]) != 0)]))
        return order, ranks.astype(np.int64)
    packed = seg * span + (codes - low)
    order = np.argsort(packed, kind="stable")
    return order, packed[order]


#: The matches of :func:`_match` already made, by ``x`` then ``y`` (weakly held: they go
#: with the rankings); RBO, the sets at k and tau of one pair of runs share one.
_MATCHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _match(x: TiedRankings, y: TiedRankings) -> tuple[np.ndarray, np.ndarray]:
    """Entries of ``x`` and ``y`` holding the same item in the same ranking: index pairs,
    in ``x``'s entry order (made once per pair of rankings)."""
    known = _MATCHES.setdefault(x, weakref.WeakKeyDictionary())
    found = known.get(y)
    if found is None:
        found = known[y] = _match_items(x, y)
    return found


def _match_items(x: TiedRankings, y: TiedRankings) -> tuple[np.ndarray, np.ndarray]:
    seg = np.concatenate([x.seg, y.seg])
    codes = np.concatenate([x.items, y.items])
    n_x = x.items.size
    if not codes.size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    low = int(codes.min())
    span = int(codes.max()) - low + 1
    if span * (int(seg.max()) + 1) < 2**62:
        # both sides sorted by one packed key: a merge by binary search, no new sort
        key_x = x.seg[x.by_item] * span + (x.items[x.by_item] - low)
        key_y = y.seg[y.by_item] * span + (y.items[y.by_item] - low)
        at = np.searchsorted(key_y, key_x)
        found = at < key_y.size
        found[found] = key_y[at[found]] == key_x[found]
        from_x, from_y = x.by_item[found], y.by_item[at[found]]
    else:
        order = np.lexsort((codes, seg))
        same = (np.diff(codes[order]) == 0) & (np.diff(seg[order]) == 0)
        left, right = order[:-1][same], order[1:][same]
        # items are unique within a ranking, so a pair is one x entry and one y entry
        from_x = np.where(left < n_x, left, right)
        from_y = np.where(left < n_x, right, left) - n_x
    # x's entries match at most once: x's order by a scatter, not a sort
    partner = np.full(n_x, -1, dtype=np.int64)
    partner[from_x] = from_y
    found_x = np.flatnonzero(partner >= 0)
    return found_x, partner[found_x]


@dataclass(frozen=True, eq=False)
class RBOResult:
    """Result of :func:`rbo` and :func:`rbo_rankings`.

    Attributes
    ----------
    ext, min, max, res : ndarray
        Extrapolated RBO, its lower and upper bounds and the residual ``max - min``; shape
        ``()`` for one pair of rankings, ``(Q,)`` for Q pairs. NaN where both rankings
        are empty.
    p : float
    ties : str
    """

    ext: np.ndarray
    min: np.ndarray
    max: np.ndarray
    res: np.ndarray
    p: float
    ties: str

    def as_dict(self) -> dict:
        return {"ext": self.ext, "min": self.min, "max": self.max, "res": self.res}


def _check_p(p: Any) -> float:
    value = check_float("p", p)
    if not 0.0 < value < 1.0:
        raise parameter_error("p", "a number strictly between 0 and 1", p)
    return value


def _segment_sum(values: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(seg, weights=values, minlength=n)


def rbo_rankings(x: TiedRankings, y: TiedRankings, *, p: float = 0.9, ties: str = "a",
                 threads: Any = None) -> RBOResult:
    r"""Rank-biased overlap of Q pairs of rankings with ties, every form at once.

    With :math:`X_d` the overlap of the two rankings at depth :math:`d` and :math:`A_d`
    the agreement there, RBO is the weighted mean

    .. math:: RBO = (1 - p) \sum_{d \ge 1} p^{d-1} A_d

    of which a finite ranking only shows the first :math:`l` terms (Webber et al. 2010):
    ``min`` assumes no further overlap, ``max`` the most possible, ``ext`` that the
    agreement seen at the end of the shorter ranking goes on. With ties (Corsi & Urbano
    2024) an item in a tie group of size :math:`g` starting at position :math:`t`
    contributes at depth :math:`d` the share :math:`c(d)` of itself seen there:
    :math:`c(d) = 1` for :math:`d \ge t` (``ties="w"``), or the linear ramp
    :math:`c(d) = \min(1, \max(0, (d - t + 1) / g))` (``"a"``, ``"b"``);
    :math:`X_d = \sum_i c^S_i(d)\, c^L_i(d)` and

    .. math:: A^w_d = \frac{2 X_d}{\sum_i c^S_i(d) + \sum_i c^L_i(d)}, \quad
              A^a_d = \frac{X_d}{d}, \quad
              A^b_d = \frac{X_d}{\sqrt{\sum_i c^S_i(d)^2}\sqrt{\sum_i c^L_i(d)^2}}

    Parameters
    ----------
    x, y : TiedRankings
        The same number Q of rankings (:func:`rankings`).
    p : float, default 0.9
        Persistence, in (0, 1): the top :math:`1/(1-p)` ranks carry most of the weight.
    ties : {"a", "w", "b"}, default "a"
        ``"w"`` when a tie means equality, ``"a"`` when it means "order unknown" (the
        expected RBO over random tie breaks), ``"b"`` to also correct for the
        information the ties lose (:math:`RBO^b(X, X) = 1`).
    threads : int or None
        Blocks of rankings run on this many threads
        (:func:`irmetrics.parallel.resolve_threads`); the numbers do not depend on it.

    Returns
    -------
    RBOResult
        Fields of shape (Q,).

    Notes
    -----
    Rankings are processed in blocks of about :data:`_SLOT_BLOCK` depths, so memory stays
    bounded whatever Q. The sums run in :math:`O(N)` for N entries whatever the ties: at
    a depth at most one
    tie group of each ranking is partly seen, so :math:`X_d` is four integer counts (items
    fully seen in both, partly in one, partly in both) weighted by the two ramps.
    Equal to Corsi & Urbano's reference script to 1e-12 (tests record its outputs) and to
    Webber et al.'s closed forms on untied rankings. An empty ranking against a non-empty
    one gives ``ext = min = 0``; two empty rankings give NaN.

    Examples
    --------
    >>> x = rankings([0, 1, 2, 3], [0, 4])
    >>> y = rankings([1, 0, 2, 4], [0, 4])
    >>> r = rbo_rankings(x, y, p=0.9)
    >>> round(float(r.ext[0]), 6), round(float(r.min[0]), 6), round(float(r.res[0]), 6)
    (0.71775, 0.422528, 0.459247)
    """
    p = _check_p(p)
    ties = check_choice("ties", ties, RBO_TIES)
    n_q = len(x.offsets) - 1
    if len(y.offsets) - 1 != n_q:
        raise ShapeError(f"`y` must hold as many rankings as `x` ({n_q}); got {len(y.offsets) - 1}.")
    slots = np.cumsum(np.maximum(x.lengths, y.lengths))
    cuts = [0]
    while cuts[-1] < n_q:  # blocks of whole rankings, about _SLOT_BLOCK depths each
        done = slots[cuts[-1] - 1] if cuts[-1] else 0
        cuts.append(max(cuts[-1] + 1, int(np.searchsorted(slots, done + _SLOT_BLOCK, "right"))))
    ix, iy = _match(x, y)  # once for every block (and for the other statistics of x, y)
    at = np.searchsorted(ix, x.offsets[cuts])

    def block(b: int) -> tuple:
        q0, q1 = cuts[b], cuts[b + 1]
        pairs = (ix[at[b]:at[b + 1]] - x.offsets[q0], iy[at[b]:at[b + 1]] - y.offsets[q0])
        return _rbo_block(_rows(x, q0, q1), _rows(y, q0, q1), pairs, p, ties)

    parts = map_ordered(block, range(len(cuts) - 1), threads=threads)
    if not parts:
        parts = [_rbo_block(x, y, (ix, iy), p, ties)]
    ext, low, high = (np.concatenate([part[i] for part in parts]) for i in range(3))
    return RBOResult(ext=ext, min=low, max=high, res=high - low, p=p, ties=ties)


def _rows(r: TiedRankings, q0: int, q1: int) -> TiedRankings:
    """Rankings q0 .. q1 - 1 of ``r``, their own CSR (entries of a ranking are contiguous
    both in rank order and in (ranking, item) order)."""
    lo, hi = int(r.offsets[q0]), int(r.offsets[q1])
    return TiedRankings(offsets=r.offsets[q0:q1 + 1] - lo, items=r.items[lo:hi],
                        top=r.top[lo:hi], bottom=r.bottom[lo:hi], by_item=r.by_item[lo:hi] - lo)


def _rbo_block(x: TiedRankings, y: TiedRankings, pairs: tuple, p: float, ties: str) -> tuple:
    """(ext, min, max) of the rankings of one block (see :func:`rbo_rankings`); ``pairs``
    are :func:`_match`'s entry pairs of the block."""
    n_q = len(x.offsets) - 1
    len_x, len_y = x.lengths, y.lengths
    swap = len_x >= len_y  # the reference's choice: S is y unless y is longer
    s = np.where(swap, len_y, len_x)
    l_ = np.where(swap, len_x, len_y)
    # Depth grid: ranking q owns slots start[q] .. start[q] + l_q - 1 (0-based depth d).
    start = np.concatenate([[0], np.cumsum(l_)])
    n_slots = int(start[-1])
    q_of = np.repeat(np.arange(n_q, dtype=np.int64), l_)
    d = np.arange(n_slots, dtype=np.int64) - start[q_of]
    df = d.astype(np.float64)
    s_of = s[q_of]

    def per_depth(r: TiedRankings) -> tuple[np.ndarray, np.ndarray]:
        """Per slot: top and size of the tie group at depth d of ``r``'s ranking; beyond
        its end, top = its length and size 0 (every item fully seen)."""
        own_len = r.lengths[q_of]
        inside = d < own_len
        if not r.items.size:
            return own_len, np.zeros(n_slots, dtype=np.int64)
        entry = np.where(inside, r.offsets[q_of] + d, 0)
        t = np.where(inside, r.top[entry], own_len)
        g = np.where(inside, r.bottom[entry] - r.top[entry] + 1, 0)
        return t, g

    tx, gx = per_depth(x)
    ty, gy = per_depth(y)
    on_y = swap[q_of]
    tS_d, gS_d = np.where(on_y, ty, tx), np.where(on_y, gy, gx)
    tL_d, gL_d = np.where(on_y, tx, ty), np.where(on_y, gx, gy)

    with np.errstate(divide="ignore", invalid="ignore"):
        rS = np.where(gS_d > 0, (df - tS_d + 1) / np.maximum(gS_d, 1), 1.0)
        rL = np.where(gL_d > 0, (df - tL_d + 1) / np.maximum(gL_d, 1), 1.0)

    # Shared items: their tie spans on each side.
    ix, iy = pairs
    q_m = x.seg[ix]
    sw = swap[q_m]
    tS = np.where(sw, y.top[iy], x.top[ix])
    bS = np.where(sw, y.bottom[iy], x.bottom[ix])
    tL = np.where(sw, x.top[ix], y.top[iy])
    bL = np.where(sw, x.bottom[ix], y.bottom[iy])
    base = start[q_m]

    def count(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Per slot, how many shared items have lo <= d <= hi (empty intervals skipped)."""
        ok = lo <= hi
        diff = (np.bincount(base[ok] + lo[ok], minlength=n_slots + 1)
                - np.bincount(base[ok] + hi[ok] + 1, minlength=n_slots + 1))
        return np.cumsum(diff)[:n_slots]

    last = l_[q_m] - 1
    if ties == "w":
        overlap = count(np.maximum(tS, tL), last).astype(np.float64)
    else:
        both_done = count(np.maximum(bS, bL) + 1, last)
        s_part = count(np.maximum(tS, bL + 1), bS)
        l_part = count(np.maximum(tL, bS + 1), bL)
        both_part = count(np.maximum(tS, tL), np.minimum(bS, bL))
        overlap = both_done + rS * s_part + rL * l_part + rS * rL * both_part

    # Per-side sums of contributions at each depth.
    in_s = d < s_of
    if ties == "w":
        sum_s = np.where(in_s, tS_d + gS_d, s_of).astype(np.float64)
        sum_l = (tL_d + gL_d).astype(np.float64)
    elif ties == "b":
        sq_s = np.where(in_s, tS_d + gS_d * rS**2, s_of)
        sq_l = tL_d + gL_d * rL**2
    depth = df + 1.0

    first = in_s
    with np.errstate(divide="ignore", invalid="ignore"):
        if ties == "w":
            a1 = 2.0 * overlap / (sum_s + sum_l)
        elif ties == "a":
            a1 = overlap / depth
        else:
            a1 = overlap / np.sqrt(sq_s) / np.sqrt(sq_l)
    a1 = np.where(first, a1, 0.0)
    # A at depth s (1-based) of each ranking pair: the agreement the extrapolation carries.
    a_last = np.zeros(n_q)
    has_s = s > 0
    a_last[has_s] = a1[start[:-1][has_s] + s[has_s] - 1]

    # Second section, depths s+1 .. l: the shorter ranking is exhausted.
    second = ~first
    if ties == "w":
        den2 = depth + sum_l
        norm = 2.0 / den2
    elif ties == "a":
        norm = 1.0 / depth
    else:
        norm = 1.0 / np.sqrt(depth) / np.sqrt(sq_l)
    # L's items the shorter ranking lacks (in L's order), fully seen (before the tie
    # group at depth d) and partly seen (in it): prefix counts of unmatched entries, at
    # the depths of the second section only (none when the rankings are equally long).
    u_done = np.zeros(n_slots, dtype=np.int64)
    u_cur = np.zeros(n_slots, dtype=np.int64)
    beyond = np.flatnonzero(second)
    for longer, r, matched in ((on_y, x, ix), (~on_y, y, iy)):
        at = beyond[longer[beyond]]
        if not at.size:
            continue
        flag = np.ones(r.items.size, dtype=bool)
        flag[matched] = False
        prefix = np.concatenate([[0], np.cumsum(flag)])
        q_at = q_of[at]
        off, own = r.offsets[q_at], r.lengths[q_at]
        u_done[at] = prefix[off + np.minimum(tL_d[at], own)] - prefix[off]
        u_cur[at] = prefix[off + np.minimum(tL_d[at] + gL_d[at], own)] - prefix[off] - u_done[at]
    k = (d - s_of + 1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if ties == "w":
            unseen_max = np.minimum(k, u_done + u_cur)
            mean_seen = np.ones(n_slots)
        else:
            unseen_max = (np.minimum(k, u_done)
                          + rL * np.minimum(np.maximum(k - u_done, 0.0), u_cur))
            mean_seen = (u_done + rL * u_cur) / (u_done + u_cur)
    a2_min = np.where(second, overlap * norm, 0.0)
    a2_max = np.where(second, (overlap + unseen_max) * norm, 0.0)
    with np.errstate(invalid="ignore"):
        a2_ext = np.where(second, (overlap + k * a_last[q_of] * mean_seen) * norm, 0.0)

    max_len = int(l_.max()) if n_q else 0
    powers = p ** np.arange(1, 2 * max_len + 2, dtype=np.float64)
    weight = powers[d] if n_slots else np.zeros(0)
    base_min = _segment_sum((a1 + a2_min) * weight, q_of, n_q)
    base_max = _segment_sum((a1 + a2_max) * weight, q_of, n_q)
    base_ext = _segment_sum((a1 + a2_ext) * weight, q_of, n_q)

    # Third section, depths beyond l, in closed form.
    x_l = np.bincount(q_m, minlength=n_q).astype(np.float64)
    harmonic = np.concatenate([[0.0], np.cumsum(powers[:max_len] / np.arange(1, max_len + 1))])
    sec3_min = x_l * (np.log(1.0 / (1.0 - p)) - harmonic[l_])
    f = (l_ + s - x_l.astype(np.int64))
    extra = f - l_
    e_start = np.concatenate([[0], np.cumsum(extra)])
    e_q = np.repeat(np.arange(n_q, dtype=np.int64), extra)
    e_d = (np.arange(int(e_start[-1]), dtype=np.int64) - e_start[e_q]) + l_[e_q] + 1
    e_df = e_d.astype(np.float64)
    sec3_max = (_segment_sum((2 * e_df - l_[e_q] - s[e_q] + x_l[e_q]) / e_df * powers[e_d - 1],
                             e_q, n_q)
                + p ** (f + 1).astype(np.float64) / (1.0 - p))
    with np.errstate(divide="ignore", invalid="ignore"):
        sec3_ext = (x_l + (l_ - s) * a_last) / l_ * p ** (l_ + 1).astype(np.float64) / (1.0 - p)
    scale = (1.0 - p) / p
    rbo_min = scale * (base_min + sec3_min)
    rbo_max = scale * (base_max + sec3_max)
    rbo_ext = scale * (base_ext + sec3_ext)
    empty = l_ == 0
    return tuple(np.where(empty, np.nan, v) for v in (rbo_ext, rbo_min, rbo_max))


def _one_ranking(name: str, ranking: Any, scores: Any, codes: dict) -> tuple[list, list]:
    """A ranking given as items (with tie groups as sets) or items with scores, coded."""
    items: list = []
    values: list = []
    if scores is not None:
        score_list = list(np.asarray(scores, dtype=np.float64).ravel())
        ranking = list(ranking)
        if len(score_list) != len(ranking):
            raise ShapeError(f"`{name}_scores` must have one score per item of `{name}`"
                             f" ({len(ranking)}); got {len(score_list)}.")
        for item, score in zip(ranking, score_list):
            items.append(codes.setdefault(item, len(codes)))
            values.append(score)
        return items, values
    seen: set = set()
    for position, entry in enumerate(ranking):
        group = entry if isinstance(entry, (set, frozenset)) else [entry]
        for item in group:
            if not isinstance(item, Hashable):
                raise parameter_error(name, "a sequence of items or sets of tied items", entry)
            if item in seen:
                raise parameter_error(name, f"a ranking holding each item once ({item!r} is"
                                      " there twice)", item)
            seen.add(item)
            items.append(codes.setdefault(item, len(codes)))
            values.append(-float(position))
    return items, values


def rbo(x: Any, y: Any, *, p: float = 0.9, ties: str = "a", x_scores: Any = None,
        y_scores: Any = None) -> RBOResult:
    r"""Rank-biased overlap of two rankings that may hold ties (Corsi & Urbano 2024).

    The formula, variants and forms are those of :func:`rbo_rankings`, for one pair.

    Parameters
    ----------
    x, y : sequence
        Items best first; a ``set`` (or ``frozenset``) in the sequence is a group of tied
        items, as in Corsi & Urbano's script: ``["a", {"b", "c"}, "d"]``. With
        ``x_scores`` (``y_scores``), a flat sequence of items ordered by those scores
        (highest first, equal scores tied).
    p : float, default 0.9
    ties : {"a", "w", "b"}, default "a"
    x_scores, y_scores : array-like, optional

    Returns
    -------
    RBOResult
        0-d fields.

    Examples
    --------
    >>> r = rbo(["red", {"blue", "green"}, "yellow", "pink"],
    ...         [{"blue", "red"}, "white", {"yellow", "black", "purple"}, "green"], p=0.95)
    >>> round(float(r.ext), 7), round(float(r.min), 7), round(float(r.max), 7)
    (0.6922853, 0.3310519, 0.8930692)
    """
    codes: dict = {}
    xi, xv = _one_ranking("x", x, x_scores, codes)
    yi, yv = _one_ranking("y", y, y_scores, codes)
    rx = rankings(np.asarray(xi, dtype=np.int64), [0, len(xi)], np.asarray(xv), name="x")
    ry = rankings(np.asarray(yi, dtype=np.int64), [0, len(yi)], np.asarray(yv), name="y")
    r = rbo_rankings(rx, ry, p=p, ties=ties)
    return RBOResult(ext=r.ext.reshape(()), min=r.min.reshape(()), max=r.max.reshape(()),
                     res=r.res.reshape(()), p=r.p, ties=r.ties)


def shared_items(x: TiedRankings, y: TiedRankings) -> np.ndarray:
    """Items both rankings of each pair hold: shape (Q,).

    Examples
    --------
    >>> shared_items(rankings([0, 1, 2], [0, 3]), rankings([2, 5, 0], [0, 3])).tolist()
    [2]
    """
    ix, _ = _match(x, y)
    return np.bincount(x.seg[ix], minlength=len(x.offsets) - 1)


def overlap_at_k(x: TiedRankings, y: TiedRankings, k: int) -> dict[str, np.ndarray]:
    r"""Set overlap of the top ``k`` of Q pairs of rankings.

    With :math:`X_k` and :math:`Y_k` the first ``k`` items of each ranking (in their
    order; a tie group cut by ``k`` is cut where the order puts it):

    .. math:: \mathrm{jaccard@k} = \frac{|X_k \cap Y_k|}{|X_k \cup Y_k|}, \quad
              \mathrm{overlap@k} = \frac{|X_k \cap Y_k|}{k}, \quad
              \mathrm{recall@k} = \frac{|X_k \cap Y_k|}{|X_k|}

    ``recall@k`` reads ``x`` as the exact neighbour list and ``y`` as the approximate one
    (the recall of an ANN search).

    Parameters
    ----------
    x, y : TiedRankings
    k : int
        Positive.

    Returns
    -------
    dict of str to ndarray, shape (Q,)
        ``"jaccard"``, ``"overlap"``, ``"recall"``; NaN where the denominator is 0
        (both empty for Jaccard, ``x`` empty for recall).

    Examples
    --------
    >>> x = rankings([0, 1, 2], [0, 3])
    >>> y = rankings([2, 5, 0], [0, 3])
    >>> {key: v.round(4).tolist() for key, v in overlap_at_k(x, y, 2).items()}
    {'jaccard': [0.0], 'overlap': [0.0], 'recall': [0.0]}
    """
    k = check_positive_int("k", k)
    n_q = len(x.offsets) - 1
    ix, iy = _match(x, y)
    pos_x = np.arange(x.items.size) - x.offsets[x.seg]
    pos_y = np.arange(y.items.size) - y.offsets[y.seg]
    both = (pos_x[ix] < k) & (pos_y[iy] < k)
    inter = np.bincount(x.seg[ix][both], minlength=n_q).astype(np.float64)
    size_x = np.minimum(x.lengths, k).astype(np.float64)
    size_y = np.minimum(y.lengths, k).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "jaccard": inter / (size_x + size_y - inter),
            "overlap": inter / k,
            "recall": inter / size_x,
        }


def _smaller_before(values: np.ndarray, start: np.ndarray, size: np.ndarray) -> np.ndarray:
    r"""For each entry of contiguous segments (entry ``i`` lies in ``start[i] ..
    start[i] + size[i] - 1``), how many earlier entries of its segment hold a smaller
    value (non-negative integers).

    A most-significant-bit-first radix partition that counts as it goes: at each bit, the
    entries of a group (same segment, same higher bits; still in their first order) are
    stably split into those with the bit 0 and those with it 1, and an entry with the bit
    1 counts the 0s before it in its group. :math:`O(N \log_2 \max v)` in
    :math:`\lceil\log_2 \max v\rceil` vectorised passes, whatever the segments: the
    2-D dominance counts that Kendall's tau and tau_AP need without comparing every pair.
    """
    n = values.size
    count = np.zeros(n, dtype=np.int64)
    if not n or int(values.max()) == 0:
        return count
    # 32-bit indices when they fit: the passes are memory-bound, half the bytes to move
    kind = np.int32 if n < 2**31 - 1 and int(values.max()) < 2**31 else np.int64
    index = np.arange(n, dtype=kind)
    entry = index.copy()  # which entry sits at each place of the partition
    value = values.astype(kind)
    lo = start.astype(kind)  # each entry's group: places lo .. hi - 1
    hi = lo + size.astype(kind)
    counted = np.zeros(n, dtype=kind)  # count of the entry at each place
    zeros = np.zeros(n + 1, dtype=kind)
    source = np.empty(n, dtype=kind)
    for bit in range(int(value.max()).bit_length() - 1, -1, -1):
        one = ((value >> bit) & 1).astype(bool)
        np.cumsum(~one, out=zeros[1:])
        zeros_lo = zeros[lo]
        before = zeros[:-1] - zeros_lo  # 0s of the group before each place
        mid = lo + zeros[hi] - zeros_lo  # where the group's 1s will start
        counted += np.where(one, before, 0)
        place = np.where(one, mid + (index - lo - before), lo + before)
        # gathers through the inverse permutation: cheaper than scattering each array
        source[place] = index
        lo, hi = np.where(one, mid, lo).take(source), np.where(one, hi, mid).take(source)
        entry, value, counted = entry.take(source), value.take(source), counted.take(source)
    count[entry] = counted
    return count


def shared_rank_correlation(x: TiedRankings, y: TiedRankings) -> dict[str, np.ndarray]:
    r"""Kendall's tau-b and tau_AP of Q pairs of rankings on the items both hold.

    Each item shared by the two rankings of a pair gets its position in each (tied items
    share a position: the top of their group); over the shared items, with
    :func:`~irmetrics.stats.kendall_tau_b`'s and :func:`~irmetrics.stats.tau_ap`'s
    definitions (``x`` the reference of tau_AP, ties as in Urbano & Marrero's
    :math:`\tau_{AP}` with ties):

    .. math:: \tau_b = \frac{n_c - n_d}{\sqrt{n_0 - t_x}\sqrt{n_0 - t_y}}, \qquad
              \tau_{AP} = \frac{2}{\#\{i: p_i > 0\}} \sum_{i: p_i > 0} \frac{C_i}{p_i} - 1

    with :math:`C_i` the shared items above item :math:`i` in both rankings and
    :math:`p_i` those above it in ``y``; :math:`n_c = \sum_i C_i` and
    :math:`n_d = n_0 - t_x - t_y + t_{xy} - n_c` (:math:`t_{xy}`: pairs tied in both).

    Parameters
    ----------
    x, y : TiedRankings

    Returns
    -------
    dict of str to ndarray, shape (Q,)
        ``"tau_b"``, ``"tau_ap"`` and ``"shared"`` (the number of shared items); NaN
        where fewer than 2 items are shared or one side ties them all.

    Notes
    -----
    :math:`O(N \log L)` for N shared items and rankings of at most L items, vectorised
    over all the rankings: the counts :math:`C_i` come from one radix partition of the
    shared items by their ``y`` position (:func:`_smaller_before`), not from comparing
    pairs.

    Examples
    --------
    >>> x = rankings([0, 1, 2, 3], [0, 4])
    >>> y = rankings([1, 0, 2, 9], [0, 4])
    >>> r = shared_rank_correlation(x, y)
    >>> round(float(r["tau_b"][0]), 4), round(float(r["tau_ap"][0]), 4), int(r["shared"][0])
    (0.3333, 0.0, 3)
    """
    n_q = len(x.offsets) - 1
    ix, iy = _match(x, y)  # in x's order: by ranking, then x position
    q = x.seg[ix]
    a, b = x.top[ix], y.top[iy]
    n = ix.size
    shared = np.bincount(q, minlength=n_q)
    starts = np.concatenate([[0], np.cumsum(shared)])
    # x tie groups of the shared items (a never decreases within a ranking)
    new_a = np.ones(n, dtype=bool)
    new_a[1:] = (q[1:] != q[:-1]) | (a[1:] != a[:-1])
    group_a = np.cumsum(new_a) - 1
    tie_x = np.bincount(q, weights=np.bincount(group_a)[group_a] - 1.0, minlength=n_q) / 2
    # y tie groups: the entry index of the group's top in y is its id
    group_b = y.offsets[q] + b
    tie_y = np.bincount(q, weights=np.bincount(group_b, minlength=y.items.size)[group_b] - 1.0,
                        minlength=n_q) / 2
    # Within an x tie group, y position descending: then the earlier shared items with a
    # smaller y position are exactly those above in both rankings.
    span = int(b.max()) + 1 if n else 1
    order = np.argsort(group_a * span + (span - 1 - b), kind="stable")
    both_above = np.zeros(n, dtype=np.int64)
    both_above[order] = _smaller_before(b[order], starts[q[order]], shared[q[order]])
    ab = (group_a * span + b)[order]
    new_ab = np.ones(n, dtype=bool)
    new_ab[1:] = ab[1:] != ab[:-1]
    group_ab = np.cumsum(new_ab) - 1
    tie_xy = np.bincount(q[order], weights=np.bincount(group_ab)[group_ab] - 1.0,
                         minlength=n_q) / 2
    n_c = np.bincount(q, weights=both_above, minlength=n_q)
    total = shared * (shared - 1) / 2.0
    n_d = total - tie_x - tie_y + tie_xy - n_c
    # tau_AP: shared items above each one in y, from a prefix count over y's entries
    matched = np.zeros(y.items.size + 1, dtype=np.int64)
    matched[iy + 1] = 1
    prefix = np.cumsum(matched)
    above = prefix[group_b] - prefix[y.offsets[q]]
    counted = above > 0
    share = np.where(counted, both_above / np.maximum(above, 1), 0.0)
    ap_sum = np.bincount(q, weights=share, minlength=n_q)
    ap_cnt = np.bincount(q, weights=counted, minlength=n_q)
    x_orders = np.bincount(q, weights=new_a, minlength=n_q) > 1
    with np.errstate(divide="ignore", invalid="ignore"):
        tau_b = (n_c - n_d) / np.sqrt((total - tie_x) * (total - tie_y))
        tau_b = np.clip(tau_b, -1.0, 1.0)
        tap = 2.0 * ap_sum / ap_cnt - 1.0
    tap = np.where(x_orders, tap, np.nan)
    return {"tau_b": tau_b, "tau_ap": tap, "shared": shared}
