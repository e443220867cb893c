"""trec_eval's gain table and ideal ranking (docs/reference/trec_eval.md §8.0), vectorised over queries.

The table of a query holds the user's ``level=gain`` pairs in the order given
(only names that are decimal integers), then every level ``0 .. nlev-1`` not
already named, with gain = level. It is sorted by ascending gain with a stable
merge sort whose comparator truncates the gain difference to an integer, so gains
less than 1 apart compare equal; the order it yields is reproduced exactly.
Because the table depends on a query only through ``nlev`` (1 + its largest
judged label), it is built once per distinct ``nlev``.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..checks import parameter_error
from . import segments as sg
from .libm import log2_int_table
from .ranked import NOT_IN_POOL

_INT_NAME = re.compile(r"[+-]?[0-9]+\Z")

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


#: Largest label for which a gain table with fractional gains is built in full.
DENSE_TABLE_LIMIT = 1 << 16


@lru_cache(maxsize=256)
def sorted_table(pairs: tuple, nlev: int, unnamed: tuple | None = None) -> tuple:
    """Sorted gain table for one ``nlev``: tuple of ``(level, gain, counted)``.

    ``counted`` marks the entry that receives the query's count for its level
    (the first entry naming it, for levels ``0 .. nlev-1``). ``unnamed`` lists the
    levels not named by ``pairs`` that get an entry (``gain = level``); None means all
    of ``0 .. nlev-1`` (trec_eval's table).
    """
    entries = []
    seen = set()
    for level, gain in named_entries(pairs):
        counted = 0 <= level < nlev and level not in seen
        if counted:
            seen.add(level)
        entries.append((level, gain, counted))
    levels = range(nlev) if unnamed is None else unnamed
    entries.extend((level, float(level), True) for level in levels if level not in seen)
    return tuple(_merge_sort(entries))


def named_entries(pairs: tuple) -> list:
    """``(level, gain)`` of the pairs whose names are decimal integers, in order."""
    # trec_eval ignores non-integer names silently (e.g. rbp's "p")
    return [(int(name), float(gain)) for name, gain in pairs if _INT_NAME.match(name)]


def _exact_order(gains) -> bool:
    """Whether the truncating comparator orders these gains (and any integer gain)
    consistently: whole numbers or infinities, whose differences truncate exactly.
    Then the sorted table is a plain stable sort by gain, and leaving out entries
    without judgments leaves the others in the same order."""
    return all(math.isinf(g) or (math.isfinite(g) and g == int(g)) for g in gains)


def table_levels(pairs: tuple, top: int, present: np.ndarray) -> tuple | None:
    """The unnamed levels a query whose largest judged label is ``top`` needs in its
    table, or None for all of ``0 .. top`` (trec_eval's full table).

    With exactly ordered gains, the levels nobody judged (count 0) change neither the
    order of the others, nor the ideal walk, nor the gains of judged documents; of
    them only the smallest and largest are kept, for the table's minimum, maximum and
    top entry (rbp and the walk read those). ``present`` are the judged labels.
    """
    named = named_entries(pairs)
    if not _exact_order([g for _, g in named]):
        if top >= DENSE_TABLE_LIMIT:
            bad = next(g for _, g in named if not _exact_order([g]))
            raise parameter_error(
                "gain values", f"whole numbers when a judged label exceeds "
                f"{DENSE_TABLE_LIMIT - 1} (trec_eval's gain table would need one entry "
                f"per level up to {top}, ordered by a truncating comparator)", bad)
        return None
    names = {level for level, _ in named}
    keep = {int(v) for v in present[present <= top]} - names
    low = next((v for v in range(len(names) + 1) if v not in names), None)
    high = next((top - i for i in range(len(names) + 1) if top - i not in names), None)
    keep.update(v for v in (low, high) if v is not None and 0 <= v <= top)
    return tuple(sorted(keep))


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
    #: What measures derive from these gains alone (e.g. the running ideal DCG), kept
    #: with them: an ideal shared by several calls (:func:`ideal_memo`) is derived once.
    derived: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def ideal_count(self) -> np.ndarray:
        """``idealpos``: number of positive ideal gains per query."""
        return np.diff(self.ideal_offsets)


def compute_gains(pairs: tuple, rel_hist: np.ndarray, code: np.ndarray, seg: np.ndarray,
                  rel_levels: np.ndarray | None = None) -> Gains:
    """Build gains for ranked entries ``code`` (query ``seg``) and the ideal sequences.

    ``rel_hist`` counts judgments per query and label ``rel_levels`` (default
    ``0 .. width - 1``). Work and memory grow with the number of distinct labels, not
    with their values (see :func:`table_levels`).
    """
    if code.size == 0 and seg.size == 0:  # the ideal alone: the qrels' rows decide it
        store = getattr(_IDEAL, "store", None)
        if store is not None:
            return _remembered(store, pairs, rel_hist, rel_levels)
    return _gains(pairs, rel_hist, code, seg, rel_levels)


#: The store of :func:`ideal_memo` in effect in this thread, if any.
_IDEAL = threading.local()

#: The most bytes of arrays one :func:`ideal_memo` store keeps (beyond it, ideals are
#: computed and not kept): a grid's query blocks x sets batches, usually a few MiB.
IDEAL_MEMO_BYTES = 1 << 26


@contextlib.contextmanager
def ideal_memo(store: dict) -> Iterator[None]:
    """While the body runs in this thread, :func:`compute_gains` of an ideal alone (no
    ranked entries) gives the :class:`Gains` kept in ``store`` for the same rows of
    label counts, levels and gain pairs, computing and keeping it the first time.

    A grid measures every run against the same qrels sets: the ideal of a query block
    (its gain table walk, a short loop of small numpy steps under the interpreter
    lock) is the same for every run that ranks those queries, so it is computed once
    per grid instead of once per run. The gains are a function of their inputs, so the
    values do not change; the kept arrays are read-only (a caller that wrote into a
    shared one would fail, not change another run's numbers). ``store`` may be shared
    by threads; at most :data:`IDEAL_MEMO_BYTES` of arrays are kept in it.

    Examples
    --------
    >>> hist = np.array([[3, 1, 2]])
    >>> empty = np.zeros(0, dtype=np.int64)
    >>> store = {}
    >>> with ideal_memo(store):
    ...     first = compute_gains((), hist, empty, empty)
    ...     again = compute_gains((), hist.copy(), empty, empty)
    >>> again is first, first.ideal_gain.tolist()
    (True, [2.0, 2.0, 1.0])
    """
    outer = getattr(_IDEAL, "store", None)
    _IDEAL.store = store
    try:
        yield
    finally:
        _IDEAL.store = outer


def _remembered(store: dict, pairs: tuple, rel_hist: np.ndarray,
                rel_levels: np.ndarray | None) -> Gains:
    """The ideal :class:`Gains` of these inputs from ``store``, computed once."""
    key = (tuple(pairs), rel_hist.shape, rel_hist.dtype.str, rel_hist.tobytes(),
           None if rel_levels is None else (rel_levels.dtype.str, rel_levels.tobytes()))
    found = store.get(key)
    if found is not None:
        return found
    empty = np.zeros(0, dtype=np.int64)
    gains = _gains(pairs, rel_hist, empty, empty, rel_levels)
    arrays = [value for value in vars(gains).values() if isinstance(value, np.ndarray)]
    for array in arrays:
        array.flags.writeable = False
    size = sum(a.nbytes for a in arrays) + len(key[3])
    with _MEMO_LOCK:  # the byte count is shared by the threads of one grid
        held = store.get(_HELD, 0)
        if held + size <= IDEAL_MEMO_BYTES:
            store[key] = gains
            store[_HELD] = held + size
    return gains


#: The key under which a store counts the bytes it keeps.
_HELD = "bytes held"
_MEMO_LOCK = threading.Lock()


def _gains(pairs: tuple, rel_hist: np.ndarray, code: np.ndarray, seg: np.ndarray,
           rel_levels: np.ndarray | None) -> Gains:
    """:func:`compute_gains` itself."""
    if rel_levels is not None and rel_levels.dtype.kind == "f":
        return label_gains(rel_hist, rel_levels, code)
    n_q, width = rel_hist.shape
    levels = np.arange(width, dtype=np.int64) if rel_levels is None else rel_levels
    nz = rel_hist > 0
    has_judged = nz.any(axis=1)
    # The largest judged label (nlev - 1, kept below 2**63); -1 for a query with none.
    top = np.where(has_judged, levels[width - 1 - np.argmax(nz[:, ::-1], axis=1)], -1)
    distinct = sg.distinct(top)
    named = named_entries(tuple(pairs))
    # Named levels that can be codes (int64), for the entry lookup below.
    lookup_levels = np.array(sorted({lv for lv, _ in named if -2**63 <= lv < 2**63}),
                             dtype=np.int64)
    lookup = np.zeros((len(distinct), len(lookup_levels)), dtype=np.float64)
    table_min = np.zeros(n_q)
    table_max = np.zeros(n_q)
    table_size = np.zeros(n_q, dtype=np.int64)
    stop_gain = np.zeros(n_q)
    top_gain = np.zeros(n_q)
    ideal_parts_q, ideal_parts_g = [], []
    group_of_query = np.searchsorted(distinct, top)
    for g, t in enumerate(distinct.tolist()):
        table = sorted_table(tuple(pairs), t + 1, table_levels(tuple(pairs), t, levels))
        if not table:
            continue
        rows = np.flatnonzero(top == t)
        lv = [e[0] for e in table]
        gains = np.array([e[1] for e in table], dtype=np.float64)
        counted = np.array([e[2] for e in table], dtype=bool)
        # Gain lookup of named levels: the first entry in sorted order naming it wins.
        for level, gain in zip(lv[::-1], gains[::-1]):
            if -2**63 <= level < 2**63 and level in lookup_levels:
                lookup[g, np.searchsorted(lookup_levels, level)] = gain
        table_min[rows] = gains.min()
        table_max[rows] = gains.max()
        named_in_range = len({lv_ for lv_, _ in named if 0 <= lv_ <= t})
        table_size[rows] = min(len(named) + t + 1 - named_in_range, 2**63 - 1)
        top_gain[rows] = gains[-1]
        if gains[-1] <= 0:
            stop_gain[rows] = gains[-1]
            continue
        # Walk from the top entry down (reverse table order) over the entries holding
        # judgments: the others neither emit a gain nor stop the walk.
        level_arr = np.array([min(max(v, -1), 2**63 - 1) for v in lv], dtype=np.int64)
        column = np.minimum(np.searchsorted(levels, level_arr), width - 1)
        walk = np.flatnonzero(counted & (levels[column] == level_arr))[::-1]
        counts = rel_hist[rows][:, column[walk]]
        gn = gains[walk]
        stops = (counts >= 1) & (gn <= 0)[None, :]
        has_stop = stops.any(axis=1)
        # (no entry holds a judgment when every label is negative: nothing to walk)
        first_stop = np.argmax(stops, axis=1) if len(walk) else 0
        stop_at = np.where(has_stop, first_stop, len(walk))
        if len(walk):
            stop_gain[rows] = np.where(has_stop, gn[np.minimum(stop_at, len(walk) - 1)], 0.0)
        emit = (np.arange(len(walk))[None, :] < stop_at[:, None]) & (gn > 0)[None, :]
        reps = (counts * emit).ravel()
        ideal_parts_q.append(np.repeat(np.repeat(rows, len(walk)), reps))
        ideal_parts_g.append(np.repeat(np.tile(gn, len(rows)), reps))
    entry_gain, entry_in_table = _entry_lookup(lookup, lookup_levels, group_of_query,
                                               top, seg, code)
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


def label_gains(rel_hist: np.ndarray, levels: np.ndarray, code: np.ndarray) -> Gains:
    """Gains of float labels (``relevance="float"``): the label itself when positive,
    else 0; the ideal sequence is every positive judged label, descending.

    trec_eval's gain table (integer levels, a truncating comparator) has no meaning for
    labels such as 0.5; a label is its gain and the ideal sorts the labels exactly.
    Gain parameters (``ndcg.1=3``) are refused before this is reached.

    >>> g = label_gains(np.array([[1, 2, 1]]), np.array([0.0, 0.5, 2.5]),
    ...                 np.array([0.5, -1.0, 2.5, 0.0]))
    >>> g.entry_gain.tolist(), g.ideal_gain.tolist()
    ([0.5, 0.0, 2.5, 0.0], [2.5, 0.5, 0.5])
    """
    n_q = rel_hist.shape[0]
    positive = np.flatnonzero(levels > 0)[::-1]  # descending labels
    counts = rel_hist[:, positive]
    reps = counts.ravel()
    ideal_gain = np.repeat(np.tile(levels[positive], n_q), reps).astype(np.float64)
    per_query = counts.sum(axis=1)
    ideal_offsets = np.concatenate(([0], np.cumsum(per_query))).astype(np.int64)
    judged = rel_hist > 0
    has = judged.any(axis=1)
    table_max = np.where(has, np.max(np.where(judged, levels, -np.inf), axis=1), 0.0)
    table_min = np.where(has, np.min(np.where(judged, levels, np.inf), axis=1), 0.0)
    return Gains(
        entry_gain=np.where(code > 0, code, 0.0).astype(np.float64),
        ideal_offsets=ideal_offsets, ideal_gain=ideal_gain, stop_gain=np.zeros(n_q),
        top_gain=np.maximum(table_max, 0.0), table_min=table_min, table_max=table_max,
        table_size=judged.sum(axis=1).astype(np.int64), entry_in_table=code >= 0)


def _entry_lookup(lookup, lookup_levels, group_of_query, top, seg, code):
    """Gain and table membership of every entry.

    A code named by a pair takes the gain of its first entry in the sorted table of
    its query's group; any other judged code ``c`` (at most the query's top label) has
    its own entry with gain ``c`` (the label as a double, as in trec_eval); codes -1
    and -2 without a pair have neither.
    """
    gain = np.zeros(code.size)
    member = np.zeros(code.size, dtype=bool)
    if code.size == 0:
        return gain, member
    # Most retrieved documents are outside the pool (code -1): unless a pair names -1,
    # only the other entries are looked up.
    if NOT_IN_POOL in lookup_levels:
        at = np.arange(code.size)
    else:
        at = np.flatnonzero(code != NOT_IN_POOL)
    c = code[at]
    judged = (c >= 0) & (c <= top[seg[at]])
    gain[at] = np.where(judged, c, 0.0)
    member[at] = judged
    if lookup_levels.size:
        k = np.minimum(np.searchsorted(lookup_levels, c), lookup_levels.size - 1)
        is_named = lookup_levels[k] == c
        hit = at[is_named]
        gain[hit] = lookup[group_of_query[seg[hit]], k[is_named]]
        member[hit] = True
    return gain, member


def log2_discount(rank: np.ndarray) -> np.ndarray:
    """``log2(rank + 1)`` computed with libm (Python's math.log2), via a cached table."""
    need = int(rank.max()) + 2 if rank.size else 2
    return log2_int_table(need)[rank + 1]
