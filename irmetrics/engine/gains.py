"""trec_eval's gain table and ideal ranking (spec §8.0), vectorised over queries.

The table of a query holds the user's ``level=gain`` pairs in the order given
(only names that are decimal integers), then every level ``0 .. nlev-1`` not
already named, with gain = level. It is sorted by ascending gain with a stable
merge sort whose comparator truncates the gain difference to an integer, so gains
less than 1 apart compare equal; the order it yields is reproduced exactly.
Because the table depends on a query only through ``nlev`` (1 + its largest
judged label), it is built once per distinct ``nlev``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .libm import log2_int_table
from .ranked import NOT_IN_POOL

_INT_NAME = re.compile(r"[+-]?[0-9]+\Z")

#: Lowest relevance code a gain can be looked up for (POOL_UNJUDGED).
_CODE_BASE = -2


def _truncating_cmp(a: float, b: float) -> int:
    # C's (int)(a - b): truncation toward zero.
    d = a - b
    return int(d) if math.isfinite(d) else (1 if d > 0 else -1)


def _merge_sort(entries: list) -> list:
    """glibc's stable top-down merge sort: split at n/2, take left on cmp <= 0."""
    n = len(entries)
    if n <= 1:
        return list(entries)
    left = _merge_sort(entries[: n // 2])
    right = _merge_sort(entries[n // 2:])
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if _truncating_cmp(left[i][1], right[j][1]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


@lru_cache(maxsize=256)
def sorted_table(pairs: tuple, nlev: int) -> tuple:
    """Sorted gain table for one ``nlev``: tuple of ``(level, gain, counted)``.

    ``counted`` marks the entry that receives the query's count for its level
    (the first entry naming it, for levels ``0 .. nlev-1``).
    """
    entries = []
    seen = set()
    for name, gain in pairs:
        if not _INT_NAME.match(name):
            continue  # trec_eval ignores non-integer names silently (e.g. rbp's "p")
        level = int(name)
        counted = 0 <= level < nlev and level not in seen
        if counted:
            seen.add(level)
        entries.append((level, float(gain), counted))
    for level in range(nlev):
        if level not in seen:
            entries.append((level, float(level), True))
    return tuple(_merge_sort(entries))


@dataclass
class Gains:
    """Gains of the retrieved documents and the ideal sequence, for every query.

    Attributes
    ----------
    entry_gain : ndarray, shape (N,)
        Gain of each ranked document.
    ideal_offsets : ndarray, shape (Q + 1,)
    ideal_gain : ndarray
        Per query, the positive ideal gains ``I_1, I_2, ...`` (CSR).
    stop_gain : ndarray, shape (Q,)
        The ideal cursor's gain once the positive gains are used up (the ``<= 0``
        gain that stopped the walk, or 0 after the bottom of the table).
    top_gain : ndarray, shape (Q,)
        Gain of the top table entry: the ideal cursor's gain before its first step
        (0 for an empty table), even when that entry has no judged documents.
    table_min, table_max : ndarray, shape (Q,)
        Smallest and largest gain in each query's table (rbp's normalisation);
        ``table_size`` is 0 where the table is empty.
    entry_in_table : ndarray of bool, shape (N,)
        The document's code has a table entry (codes without one have gain 0 that no
        normalisation changes).
    """

    entry_gain: np.ndarray
    ideal_offsets: np.ndarray
    ideal_gain: np.ndarray
    stop_gain: np.ndarray
    top_gain: np.ndarray
    table_min: np.ndarray
    table_max: np.ndarray
    table_size: np.ndarray
    entry_in_table: np.ndarray

    @property
    def ideal_count(self) -> np.ndarray:
        """``idealpos``: number of positive ideal gains per query."""
        return np.diff(self.ideal_offsets)


def compute_gains(pairs: tuple, rel_hist: np.ndarray, code: np.ndarray, seg: np.ndarray) -> Gains:
    """Build gains for ranked entries ``code`` (query ``seg``) and the ideal sequences."""
    n_q, width = rel_hist.shape
    nz = rel_hist > 0
    # nlev = 1 + largest label with a qrels line; 0 for a query with none.
    nlev = np.where(nz.any(axis=1), width - np.argmax(nz[:, ::-1], axis=1), 0)
    distinct = np.unique(nlev)
    # Codes are -2, -1 or a label below ``width``; entries for other levels never match.
    max_code = width
    lookup = np.zeros((len(distinct), max_code - _CODE_BASE + 1), dtype=np.float64)
    in_table = np.zeros(lookup.shape, dtype=bool)
    table_min = np.zeros(n_q)
    table_max = np.zeros(n_q)
    table_size = np.zeros(n_q, dtype=np.int64)
    stop_gain = np.zeros(n_q)
    top_gain = np.zeros(n_q)
    ideal_parts_q, ideal_parts_g = [], []
    group_of_query = np.searchsorted(distinct, nlev)
    for g, lev in enumerate(distinct):
        table = sorted_table(tuple(pairs), int(lev))
        rows = np.flatnonzero(nlev == lev)
        if not table:
            continue
        levels = np.array([e[0] for e in table], dtype=np.int64)
        gains = np.array([e[1] for e in table], dtype=np.float64)
        counted = np.array([e[2] for e in table], dtype=bool)
        # Gain lookup: the first entry in sorted order naming the code wins.
        for level, gain in zip(levels[::-1], gains[::-1]):
            if _CODE_BASE <= level < max_code:
                lookup[g, level - _CODE_BASE] = gain
                in_table[g, level - _CODE_BASE] = True
        table_min[rows] = gains.min()
        table_max[rows] = gains.max()
        table_size[rows] = len(table)
        top_gain[rows] = gains[-1]
        # Walk from the top entry down (reverse table order).
        top_down = slice(None, None, -1)
        lv, gn, ct = levels[top_down], gains[top_down], counted[top_down]
        counts = np.zeros((len(rows), len(lv)), dtype=np.int64)
        cols = np.flatnonzero(ct)
        counts[:, cols] = rel_hist[rows][:, lv[cols]]
        if gn[0] <= 0:
            stop_gain[rows] = gn[0]
            continue
        stops = (counts >= 1) & (gn <= 0)[None, :]
        has_stop = stops.any(axis=1)
        stop_at = np.where(has_stop, np.argmax(stops, axis=1), len(lv))
        stop_gain[rows] = np.where(has_stop, gn[np.minimum(stop_at, len(lv) - 1)], 0.0)
        emit = (np.arange(len(lv))[None, :] < stop_at[:, None]) & (gn > 0)[None, :]
        reps = (counts * emit).ravel()
        ideal_parts_q.append(np.repeat(np.repeat(rows, len(lv)), reps))
        ideal_parts_g.append(np.repeat(np.tile(gn, len(rows)), reps))
    entry_gain, entry_in_table = _entry_lookup(lookup, in_table, group_of_query, seg, code,
                                               max_code)
    if ideal_parts_q:
        iq = np.concatenate(ideal_parts_q)
        ig = np.concatenate(ideal_parts_g)
        order = np.argsort(iq, kind="stable")
        iq, ig = iq[order], ig[order]
    else:
        iq, ig = np.zeros(0, np.int64), np.zeros(0)
    ideal_offsets = np.concatenate(([0], np.cumsum(np.bincount(iq, minlength=n_q)))).astype(np.int64)
    return Gains(entry_gain, ideal_offsets, ig, stop_gain, top_gain, table_min, table_max,
                 table_size, entry_in_table)


def _entry_lookup(lookup, in_table, group_of_query, seg, code, max_code):
    """Gain and table membership of every entry: ``lookup[group of its query, code]``.

    Most retrieved documents are outside the pool (code -1); when no table names -1,
    they all get gain 0 and no entry, and only the other entries are looked up.
    """
    gain = np.zeros(code.size)
    member = np.zeros(code.size, dtype=bool)
    if code.size == 0:
        return gain, member
    unpooled = NOT_IN_POOL - _CODE_BASE
    if lookup[:, unpooled].any() or in_table[:, unpooled].any():
        at = slice(None)
    else:
        at = np.flatnonzero(code != NOT_IN_POOL)
    cell = (group_of_query[seg[at]], np.clip(code[at], _CODE_BASE, max_code) - _CODE_BASE)
    gain[at] = lookup[cell]
    member[at] = in_table[cell]
    return gain, member


def log2_discount(rank: np.ndarray) -> np.ndarray:
    """``log2(rank + 1)`` computed with libm (Python's math.log2), via a cached table."""
    need = int(rank.max()) + 2 if rank.size else 2
    return log2_int_table(need)[rank + 1]
