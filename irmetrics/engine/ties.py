"""Tie groups of a ranking, and exact expectations over their random orders.

A *tie group* is a maximal run of entries of one query with equal ordering scores
(``-0.0`` equals ``0.0``, as in trec_eval). Under ``ties="expected"`` every tie group
is shuffled uniformly at random, independently, and measures report their exact
expectation (McSherry & Najork, "Computing information retrieval performance
measures efficiently in the presence of tied scores", ECIR 2008). Everything here is
closed-form and vectorised over all entries; nothing is sampled.

Notation for an entry at 1-based rank ``i`` of a group of ``t`` entries, ``r`` of them
"hits" (relevant, for a 0/1 mask), that starts after ``c`` entries of its query and
after ``B`` hits: its offset in the group is ``j = i - c``, and

* ``P(hit at i) = r / t`` (every position of the group is equally likely to hold any
  of its entries);
* ``E[hit(i) * hits(1..i)] = (r / t) * (B + 1 + (j - 1)(r - 1) / (t - 1))``: given a
  hit at ``i``, the other ``j - 1`` places of the group above it hold
  hypergeometrically many of the remaining ``r - 1`` hits;
* the first hit of a group sits at offset ``j`` with probability
  ``C(t - j, r - 1) / C(t, r)``;
* none of the group's first ``m`` places is a hit with probability
  ``C(t - r, m) / C(t, m)``.

Best and worst orders (:func:`order_within_ties`) put larger keys first or last
inside every tie group; the exchange argument makes them optimal for every measure
that is monotone in moving a hit (or a larger gain) up by one place.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from . import segments as sg
from .ranked import RankedLists


@dataclass(frozen=True)
class TieGroups:
    """Tie groups of CSR rankings (entries in rank order).

    Attributes
    ----------
    offsets : ndarray of int64, shape (Q + 1,)
        The rankings' offsets.
    group : ndarray of int64, shape (N,)
        Group index of every entry; groups are numbered in entry order.
    first : ndarray of int64, shape (G,)
        Entry index of every group's first entry.
    size : ndarray of int64, shape (G,)
        Entries per group (``t``).
    """

    offsets: np.ndarray
    group: np.ndarray
    first: np.ndarray
    size: np.ndarray

    @classmethod
    def of(cls, offsets: np.ndarray, scores: np.ndarray) -> "TieGroups":
        """Group entries of equal score within each query.

        >>> g = TieGroups.of(np.array([0, 4, 6]), np.array([3.0, 2.0, 2.0, 1.0, 5.0, 5.0]))
        >>> g.group.tolist(), g.size.tolist()
        ([0, 1, 1, 2, 3, 3], [1, 2, 1, 2])
        """
        n = len(scores)
        new = np.ones(n, dtype=bool)
        if n > 1:
            new[1:] = scores[1:] != scores[:-1]
        starts = offsets[:-1]
        new[starts[starts < n]] = True  # a query's first entry starts a group
        first = np.flatnonzero(new)
        group = np.cumsum(new, dtype=np.int64) - 1
        size = np.diff(np.append(first, n)).astype(np.int64)
        return cls(offsets, group, first, size)

    @cached_property
    def start_rank(self) -> np.ndarray:
        """Entries of its query above every group (``c``), per group."""
        return self.first - np.repeat(self.offsets[:-1], np.diff(self.offsets))[self.first]

    @cached_property
    def query(self) -> np.ndarray:
        """Query (segment) of every group."""
        return np.searchsorted(self.offsets, self.first, side="right") - 1

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Hits per group (``r``)."""
        return np.bincount(self.group, weights=mask, minlength=len(self.size))

    def hits_before(self, mask: np.ndarray) -> np.ndarray:
        """Hits of the same query above every group (``B``)."""
        before = np.concatenate(([0], np.cumsum(mask, dtype=np.int64)))  # hits above entry
        return before[self.first] - before[self.offsets[:-1]][self.query]

    @cached_property
    def tied_entries(self) -> np.ndarray:
        """Entries in groups of two or more (the only ones an order can move)."""
        return np.flatnonzero(self.size[self.group] > 1)

    def mean(self, values: np.ndarray) -> np.ndarray:
        """Per entry, the mean of ``values`` over its tie group: the expected value at
        its place when the group is shuffled."""
        out = np.array(values, dtype=np.float64)
        tied = self.tied_entries
        if tied.size:
            g = self.group[tied]
            totals = np.bincount(g, weights=out[tied], minlength=len(self.size))
            out[tied] = totals[g] / self.size[g]
        return out

    def mixed(self, key: np.ndarray) -> np.ndarray:
        """Per group, whether ``key`` takes more than one value inside it (the group's
        order matters to a measure reading ``key``)."""
        high = np.full(len(self.size), -np.inf)
        low = np.full(len(self.size), np.inf)
        np.maximum.at(high, self.group, key)
        np.minimum.at(low, self.group, key)
        return high > low


def tie_groups(lists: RankedLists, judged_only: bool = False) -> TieGroups:
    """Tie groups of ``lists`` (of its judged entries only with ``judged_only``)."""
    if judged_only:
        lists = lists.judged_only()
    if lists.scores is None:
        raise ValueError("tie groups need the ranked scores")  # internal: pack keeps them
    return TieGroups.of(lists.offsets, lists.scores)


def expected_hits_at(groups: TieGroups, mask: np.ndarray) -> np.ndarray:
    """Per entry, ``E[hit(i)] = r / t``: a running sum of it gives expected hits in
    the top k."""
    return groups.mean(mask.astype(np.float64))


def expected_precision_terms(groups: TieGroups, mask: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Per entry at rank ``i``, ``E[hit(i) * hits(1..i)] / i`` (AP's summands)."""
    mask = mask.astype(bool)
    r = groups.count(mask)
    t = groups.size.astype(np.float64)
    before = groups.hits_before(mask)
    out = np.zeros(len(groups.group))
    at = np.flatnonzero(r[groups.group] > 0)  # only groups holding a hit contribute
    g = groups.group[at]
    j = at - groups.first[g] + 1
    # (j - 1)(r - 1) / (t - 1) is 0 for a group of one (then j = 1)
    others = np.divide((j - 1) * (r[g] - 1), t[g] - 1, out=np.zeros(len(g)),
                       where=t[g] > 1)
    out[at] = (r[g] / t[g]) * (before[g] + 1 + others) / rank[at]
    return out


def _log_comb(n, k):
    """``ln C(n, k)``, elementwise."""
    from scipy.special import gammaln  # lazy: scipy.special is not light to import

    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def prob_no_hit_in_top(groups: TieGroups, mask: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Per query, ``P(no hit among the first depth entries)`` (0 <= depth <= n).

    Hits above the group holding place ``depth`` make it 0; otherwise it is the chance
    that the ``m`` places of that group above the cut hold none of its ``r`` hits.
    """
    mask = mask.astype(bool)
    offsets = groups.offsets
    out = np.ones(len(offsets) - 1)
    cut = np.flatnonzero(depth >= 1)
    if cut.size == 0:
        return out
    last = offsets[cut] + depth[cut] - 1  # entry at the cut
    g = groups.group[last]
    r = groups.count(mask)[g]
    t = groups.size[g]
    m = depth[cut] - groups.start_rank[g]
    before = groups.hits_before(mask)[g]
    with np.errstate(invalid="ignore"):
        none = np.where(m <= t - r, np.exp(_log_comb(t - r, np.minimum(m, t - r))
                                           - _log_comb(t, m)), 0.0)
    out[cut] = np.where(before > 0, 0.0, none)
    return out


def expected_reciprocal_first_hit(groups: TieGroups, mask: np.ndarray,
                                  depth: np.ndarray) -> np.ndarray:
    """Per query, ``E[1 / rank of the first hit]``, 0 when it falls below ``depth``.

    The first hit lies in the first group with a hit (``r`` of ``t``, after ``c``
    entries): at rank ``c + j`` with probability ``C(t - j, r - 1) / C(t, r)``,
    ``j = 1 .. t - r + 1``. The terms are expanded per query (at most that group's
    size each, so at most one term per entry).
    """
    mask = mask.astype(bool)
    n_q = len(groups.offsets) - 1
    out = np.zeros(n_q)
    r_all = groups.count(mask)
    with_hit = np.flatnonzero(r_all > 0)
    if with_hit.size == 0:
        return out
    owner = groups.query[with_hit]
    keep = np.ones(len(owner), dtype=bool)
    keep[1:] = owner[1:] != owner[:-1]  # first group with a hit per query
    g, q = with_hit[keep], owner[keep]
    r, t, c = r_all[g], groups.size[g], groups.start_rank[g]
    n_terms = (t - r + 1).astype(np.int64)
    term_owner = np.repeat(np.arange(len(g)), n_terms)
    j = sg.ranks(np.concatenate(([0], np.cumsum(n_terms)))).astype(np.float64)
    tg, rg = t[term_owner], r[term_owner]
    prob = np.exp(_log_comb(tg - j, rg - 1) - _log_comb(tg, rg))
    rank = c[term_owner] + j
    prob = np.where(rank <= depth[q][term_owner], prob, 0.0)
    out[q] = np.bincount(term_owner, weights=prob / rank, minlength=len(g))
    return out


def order_within_ties(lists: RankedLists, key: np.ndarray, *, best: bool) -> RankedLists:
    """``lists`` with every tie group reordered by ``key`` (one value per entry):
    largest first when ``best``, else smallest first. Scores and the order between
    groups are unchanged; inside a group, equal keys keep their order."""
    groups = tie_groups(lists)
    signed = -key if best else key
    return _entries(lists, lists.offsets, np.lexsort((signed, groups.group)))


def truncated(lists: RankedLists, max_docs: int | None) -> RankedLists:
    """The first ``max_docs`` entries of every ranking (all for None)."""
    if max_docs is None:
        return lists
    return _entries(lists, *sg.truncate(lists.offsets, max_docs))


def _entries(lists: RankedLists, offsets: np.ndarray, index) -> RankedLists:
    """``lists`` with entries ``index`` (in that order) under new ``offsets``; fresh
    caches, since views of the old entries no longer apply."""
    return replace(
        lists, offsets=offsets, code=lists.code[index],
        doc_ids=None if lists.doc_ids is None else lists.doc_ids[index],
        scores=None if lists.scores is None else lists.scores[index],
        _views={}, _judged=None)
