"""Lowest and highest value of a measure over every labelling of the unjudged documents.

A retrieved document that is not in the query's qrels (trec_eval's code -1, "not in
pool") may carry any label of the grade range ``[lo, hi]``; judged documents keep their
labels. The bounds of a measure are its minimum and maximum over all those labellings
(every unjudged document of the evaluated ranking, below a cut-off too, since it can
raise R and the ideal DCG). Each family has its own extremal labelling, derived in
docs/incomplete_judgments.md; the kernels below evaluate the few candidate labellings of
every query at once (no loop over queries or documents) and tests/measures/test_unjudged_bounds.py
checks them against brute-force enumeration.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..engine import segments as sg
from ..engine.gains import log2_discount
from ..engine.ranked import NOT_IN_POOL, POOL_UNJUDGED
from ..exceptions import IrMetricsError, IrMetricsWarning, ParameterError
from ..measures.gdeval import err_running
from ..measures.incomplete import INFAP_EPSILON

__all__ = ["BOUNDED_MEASURES", "bound_columns", "grade_range"]

#: trec_eval measure names whose bounds are computed (their friendly spellings too).
BOUNDED_MEASURES = ("P", "success", "recip_rank", "recip_rank_cut", "recall", "Rprec",
                    "map", "map_cut", "bpref", "ndcg", "ndcg_cut", "err_cut",
                    "infAP", "judged_cut")

_INF = np.iinfo(np.int64).max // 4
#: infAP's exchange argument needs ``2 eps (q - i) <= i (i - 1)``: rankings shorter than
#: ``1 / eps`` documents (docs/incomplete_judgments.md).
_INFAP_EXACT_BELOW = 100_000


def grade_range(labels) -> tuple[int, int]:
    """The grade range unjudged documents may take: from 0 to the highest label of the
    qrels.

    Label 0 is always in the range (it is what trec_eval gives an unjudged document),
    so qrels that list only relevant documents still let the rest be non-relevant.
    Negative labels are not grades: trec_eval reads them as "pooled but not judged".

    Examples
    --------
    >>> grade_range([1, 1, 3])
    (0, 3)
    >>> grade_range([-1, 2])
    (0, 2)
    >>> grade_range([])
    (0, 0)
    """
    labels = np.asarray(labels)
    if labels.size == 0:
        return 0, 0
    return 0, int(max(0, labels.max()))


def _window(view, k, level: int) -> "_Window":
    """The view's :class:`_Window` for ``(k, level)``, made once per view."""
    key = ("unjudged_window", k, level)
    if key not in view.cache:
        view.cache[key] = _Window(view, k, level)
    return view.cache[key]


class _Window:
    """Per-entry arrays of one view cut at rank ``k`` (``None``: the whole ranking)."""

    def __init__(self, view, k, level: int):
        self.view = view
        n = view.num_ret
        self.k = n if k is None else np.minimum(n, k)
        self.inside = view.rank <= self.k[view.seg]
        self.free = view.code == NOT_IN_POOL
        self.jrel = (view.code >= 0) & (view.code >= level)
        self.free_in = self.free & self.inside
        self.u_in = view.count(self.free_in)
        self.u_out = view.count(self.free & ~self.inside)
        self.ordinal = sg.seg_cumcount(self.free_in, view.offsets)  # m at the m-th free doc


def _candidates(view, free_in):
    """Candidate labellings ``j = 0 .. u`` of every query, grouped by query in order of
    j: ``(query, j, entry)`` with ``entry`` the index of the j-th free entry in the window
    (-1 for ``j = 0``)."""
    free = np.flatnonzero(free_in)
    ordinal = sg.seg_cumcount(free_in, view.offsets)[free]
    owner = view.seg[free]
    per_query = np.bincount(owner, minlength=view.n_queries) + 1
    starts = np.concatenate(([0], np.cumsum(per_query)[:-1])).astype(np.int64)
    size = int(per_query.sum())
    query = np.repeat(np.arange(view.n_queries), per_query)
    j = np.zeros(size, dtype=np.int64)
    entry = np.full(size, -1, dtype=np.int64)
    j[starts[owner] + ordinal] = ordinal
    entry[starts[owner] + ordinal] = free
    return query, j, entry


def _take(values, entry):
    """``values`` at each candidate's entry (0 for ``j = 0``, whose entry is -1)."""
    if values.size == 0:
        return np.zeros(entry.shape, dtype=values.dtype)
    return np.where(entry >= 0, values[np.maximum(entry, 0)], 0)


def _extremes(values, query, valid, n_queries):
    """Per-query minimum and maximum of the valid candidates; ``query`` is sorted and
    names every query (each has its ``j = 0`` candidate)."""
    if values.size == 0:
        return np.full(n_queries, np.inf), np.full(n_queries, -np.inf)
    starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
    low = np.minimum.reduceat(np.where(valid, values, np.inf), starts)
    high = np.maximum.reduceat(np.where(valid, values, -np.inf), starts)
    return low, high


def _ratio(num, den):
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape),
                     where=den > 0)


def _allowed(j, u, can_rel, can_non):
    """Whether ``j`` of ``u`` free documents may be relevant (the others not)."""
    ok = np.ones(j.shape, dtype=bool)
    if not can_rel:
        ok &= j == 0
    if not can_non:
        ok &= j == u
    return ok


def _cutoff_measure(name, view, k, level, lo, hi):
    """Measures whose extremal labelling is one fixed labelling per query."""
    w = _window(view, k, level)
    can_rel, can_non = hi >= level, lo < level
    top = view.count(w.jrel & w.inside)

    def first_rank(free_rel: bool):
        mask = w.jrel | (w.free if free_rel else np.zeros_like(w.free))
        return sg.seg_first(mask, view.offsets)

    out = []
    for free_rel in (not can_non, can_rel):  # low, then high
        if name == "P":
            out.append((top + (w.u_in if free_rel else 0)) / k)
        elif name == "success":
            out.append(((top + (w.u_in if free_rel else 0)) > 0).astype(np.float64))
        else:  # recip_rank, recip_rank_cut
            first = first_rank(free_rel)
            limit = view.num_ret if k is None else np.minimum(view.num_ret, k)
            hit = (first > 0) & (first <= limit)
            out.append(_ratio(hit.astype(np.float64), np.where(hit, first, 1)))
    return out[0], out[1]


def _recall(view, k, level, lo, hi):
    w = _window(view, k, level)
    can_rel, can_non = hi >= level, lo < level
    top = view.count(w.jrel & w.inside)
    r0 = view.num_rel
    # Low: free docs in the top k non-relevant, those below relevant; high: the reverse.
    in_lo = w.u_in if not can_non else 0
    out_lo = w.u_out if can_rel else 0
    in_hi = w.u_in if can_rel else 0
    out_hi = w.u_out if not can_non else 0
    low = _ratio((top + in_lo).astype(np.float64), r0 + in_lo + out_lo)
    high = _ratio((top + in_hi).astype(np.float64), r0 + in_hi + out_hi)
    return low, high


def _rprec(view, level, lo, hi):
    w = _window(view, None, level)
    can_rel, can_non = hi >= level, lo < level
    query, j, _ = _candidates(view, w.free_in)
    u = w.u_in[query]
    r = view.num_rel[query] + j
    pos = np.minimum(r, view.num_ret[query])
    offs = view.offsets[query]
    jcum = sg.seg_cumcount(w.jrel, view.offsets)
    ucum = w.ordinal

    def at(cum):
        if cum.size == 0:
            return np.zeros(pos.shape, dtype=np.int64)
        return np.where(pos >= 1, cum[np.minimum(offs + np.maximum(pos, 1) - 1,
                                                 cum.size - 1)], 0)

    jp, up = at(jcum), at(ucum)
    ok = _allowed(j, u, can_rel, can_non)
    # The j relevant free documents first (high) or last (low) among the free ones.
    high_v = _ratio((jp + np.minimum(j, up)).astype(np.float64), r)
    low_v = _ratio((jp + np.maximum(0, up - (u - j))).astype(np.float64), r)
    return (_extremes(low_v, query, ok, view.n_queries)[0],
            _extremes(high_v, query, ok, view.n_queries)[1])


def _compressed(mask, view):
    """``(index, offsets)`` of the entries where ``mask`` holds, as segments per query."""
    index = np.flatnonzero(mask)
    counts = np.bincount(view.seg[index], minlength=view.n_queries)
    return index, np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def _infap_weights(view):
    """infAP's term at a relevant document of rank ``i`` once every document of the
    ranking is labelled: ``alpha_i + beta_i * a`` with ``a`` the relevant ones above.

    trec_eval's term is ``1/i + ((i-1)/i) * ((a + n + s)/(i-1)) * ((a + eps)/(a + n + 2 eps))``
    with ``n`` the judged non-relevant and ``s`` the sampled-but-unjudged (label < 0)
    documents above. When no document is left out of the qrels, ``a + n + s = i - 1``
    and ``a + n = d_i``, the ranks above that are not sampled-but-unjudged: a count fixed
    by the qrels, whatever the labelling. So

    .. math:: \\alpha_i = \\frac1i + \\frac{i-1}{i}\\,\\frac{\\epsilon}{d_i + 2\\epsilon},
              \\qquad \\beta_i = \\frac{i-1}{i}\\,\\frac{1}{d_i + 2\\epsilon}.
    """
    rank = view.rank.astype(np.float64)
    sampled = sg.seg_cumcount(view.code == POOL_UNJUDGED, view.offsets)
    d = rank - 1 - sampled  # at a labelled document, none of those counted is itself
    share = (rank - 1) / rank / (d + 2 * INFAP_EPSILON)
    return 1.0 / rank + share * INFAP_EPSILON, share


def _average_precision(view, k, level, lo, hi, weights=None):
    """AP's bounds, and infAP's with ``weights = (alpha, beta)``: the sum over relevant
    documents of ``alpha_i + beta_i * a_i`` (``a_i`` relevant above rank ``i``) divided
    by R. AP is ``alpha = beta = 1/i``. As long as a relevant label moved up never
    lowers the sum (it raises ``a`` of those it passes and the moved document's own
    term: ``beta_i`` falls with ``i`` faster than the precision rises, see
    docs/incomplete_judgments.md), the ``j`` highest free documents give the most and
    the ``j`` lowest the least for every ``j``; the bounds are extremes over ``j``."""
    w = _window(view, k, level)
    can_rel, can_non = hi >= level, lo < level
    if weights is None:
        alpha = beta = 1.0 / view.rank.astype(np.float64) if view.rank.size else np.zeros(0)
    else:
        alpha, beta = weights
    jin = w.jrel & w.inside
    jcum = sg.seg_cumcount(w.jrel, view.offsets)
    rel, rel_offsets = _compressed(jin, view)
    s0 = sg.seg_sum(alpha[rel] + beta[rel] * (jcum[rel] - 1), view.seg[rel], view.n_queries)
    # Suffix sums of beta over the judged relevant ranks (one past the end: 0).
    rel_suffix = np.append(sg.seg_accumulate(np.add, beta[rel], rel_offsets,
                                             reverse=True), 0.0)
    free, free_offsets = _compressed(w.free_in, view)
    query_f = view.seg[free]
    alpha_f, beta_f = alpha[free], beta[free]
    jcum_f = jcum[free]
    # T(p): beta over judged relevant ranks i > p (those after the jcum(p) above p).
    after = rel_offsets[query_f] + jcum_f
    after_rel = np.where(after < rel_offsets[query_f + 1], rel_suffix[after], 0.0)
    # High: the j highest free documents relevant; adding the m-th raises the term of
    # every judged relevant document below it and adds its own, with J(p) + m - 1 above.
    ordinal = w.ordinal[free]
    s_hi = s0[query_f] + sg.seg_cumsum(after_rel + alpha_f + beta_f * (jcum_f + ordinal - 1),
                                       free_offsets)
    # Low: the j lowest free documents relevant; adding one above those already added
    # raises the term of every relevant document below it, free ones included.
    after_free = sg.seg_accumulate(np.add, beta_f, free_offsets, reverse=True) - beta_f
    gain_lo = alpha_f + beta_f * jcum_f + after_rel + after_free
    s_lo = s0[query_f] + sg.seg_accumulate(np.add, gain_lo, free_offsets, reverse=True)
    extra_hi = 0 if can_non else w.u_out
    extra_lo = w.u_out if can_rel else 0
    r0 = view.num_rel
    query, j, entry = _candidates(view, w.free_in)
    u = w.u_in[query]
    ok = _allowed(j, u, can_rel, can_non)
    first = entry < 0
    # The candidates' free entries come in the order of ``free``.
    num_hi = s0[query]
    num_hi[~first] = s_hi
    high_v = _ratio(num_hi, r0[query] + j + np.broadcast_to(extra_hi, r0.shape)[query])
    # For the low side candidate j counts the free documents from the bottom: the entry
    # holding the m-th free document from the top stands for j = u - m + 1.
    j_lo = np.where(first, 0, u - j + 1)
    ok_lo = _allowed(j_lo, u, can_rel, can_non)
    num_lo = s0[query]
    num_lo[~first] = s_lo
    low_v = _ratio(num_lo, r0[query] + j_lo + np.broadcast_to(extra_lo, r0.shape)[query])
    return (_extremes(low_v, query, ok_lo, view.n_queries)[0],
            _extremes(high_v, query, ok, view.n_queries)[1])


def _err(view, k, lo, hi):
    """ERR@k (gdeval's): every stopping probability is below 1, so ERR rises with each
    label (``dERR/dR_j >= P_j (1/j - 1/(j+1)) >= 0``); the extremes label every free
    document ``lo``, then ``hi``."""
    free = view.code == NOT_IN_POOL
    judged = np.where(view.code > 0, view.code, 0)
    out = []
    for grade in (lo, hi):
        labels = np.where(free, max(grade, 0), judged)
        offsets, running = err_running(view.offsets, labels, k)
        out.append(sg.at_rank(running, offsets, k, fill=0.0))
    return out[0], out[1]


class _Grid:
    """Per-query functions of ``a = 0 .. U_q`` summed from linear pieces
    ``alpha + beta * a`` on ``[start, stop)``: difference arrays, then one running sum."""

    def __init__(self, u):
        self.u = u
        self.offsets = np.concatenate(([0], np.cumsum(u + 1))).astype(np.int64)
        self.size = int(self.offsets[-1]) + 1
        self.where: list = []
        self.alpha: list = []
        self.beta: list = []

    def add(self, query, start, stop, alpha, beta):
        start = np.clip(start, 0, self.u[query] + 1)
        stop = np.clip(stop, start, self.u[query] + 1)
        keep = stop > start
        base = self.offsets[query[keep]]
        alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), query.shape)[keep]
        beta = np.broadcast_to(np.asarray(beta, dtype=np.float64), query.shape)[keep]
        for where, sign in ((base + start[keep], 1.0), (base + stop[keep], -1.0)):
            self.where.append(where)
            self.alpha.append(sign * alpha)
            self.beta.append(sign * beta)

    def add_capped(self, query, start, r0, pieces):
        """``min(g(a), r0 + a)`` for ``a >= start``, with ``g`` non-increasing, given as
        two pieces ``(alpha1, beta1, until)`` then ``(alpha2, beta2)``: ``r0 + a`` up to
        the first ``a`` where it reaches ``g``, then ``g``."""
        (a1, b1, until), (a2, b2) = pieces
        first = np.maximum(0, np.ceil((a1 - r0) / (1 - b1))).astype(np.int64)
        second = np.maximum(until, np.ceil((a2 - r0) / (1 - b2))).astype(np.int64)
        cross = np.maximum(np.where(first < until, first, second), start)
        self.add(query, start, cross, r0, np.ones_like(r0))
        self.add(query, cross, until, a1, b1)
        self.add(query, np.maximum(cross, until), self.u[query] + 1, a2, b2)

    def values(self):
        """``(query, a, sum)`` over the grid."""
        where = np.concatenate(self.where) if self.where else np.zeros(0, dtype=np.int64)

        def summed(parts):
            weights = np.concatenate(parts) if parts else np.zeros(0)
            return np.cumsum(np.bincount(where, weights=weights, minlength=self.size))[:-1]

        alpha, beta = summed(self.alpha), summed(self.beta)
        query = np.repeat(np.arange(self.u.size), self.u + 1)
        a = np.arange(alpha.size) - self.offsets[query]
        return query, a, alpha + beta * a


def _bpref(view, level, lo, hi):
    """bpref over labellings: with lo = 0 each free document is relevant or judged
    non-relevant. For a count ``a`` of relevant ones the top ``a`` free documents give the
    maximum and the bottom ``a`` the minimum (moving a relevant label up past a
    non-relevant one never adds a non-relevant document above a relevant one); the
    capped penalties ``min(n_r, R)`` are piecewise linear in ``a``, summed on a grid."""
    w = _window(view, None, level)
    can_rel, can_non = hi >= level, lo < level
    code = view.code
    jnon = (code >= 0) & (code < level)
    c = sg.seg_cumcount(jnon, view.offsets)  # judged non-relevant at or above
    f_above = w.ordinal - w.free  # free documents strictly above
    u = w.u_in
    r0 = view.num_rel.astype(np.float64)
    nr0 = view.num_nonrel
    rel_ret = view.count(w.jrel)
    jr = np.flatnonzero(w.jrel)
    fr = np.flatnonzero(w.free)
    qj, qf = view.seg[jr], view.seg[fr]
    cj, fj = c[jr].astype(np.float64), f_above[jr].astype(np.float64)
    cf, m = c[fr].astype(np.float64), w.ordinal[fr].astype(np.float64)
    uj, uf = u[qj].astype(np.float64), u[qf].astype(np.float64)
    out = []
    for side in ("low", "high"):
        grid = _Grid(u)
        if side == "high":  # the top a free documents relevant
            grid.add_capped(qj, np.zeros(jr.size, dtype=np.int64), r0[qj],
                            ((cj + fj, -1.0, fj.astype(np.int64)), (cj, 0.0)))
            grid.add_capped(qf, m.astype(np.int64), r0[qf],
                            ((cf, 0.0, np.zeros(fr.size, dtype=np.int64)), (cf, 0.0)))
        else:  # the bottom a free documents relevant, the top U - a non-relevant
            until = (uj - fj + 1).astype(np.int64)
            grid.add_capped(qj, np.zeros(jr.size, dtype=np.int64), r0[qj],
                            ((cj + fj, 0.0, until), (cj + uj, -1.0)))
            grid.add_capped(qf, (uf - m + 1).astype(np.int64), r0[qf],
                            ((cf + uf, -1.0, np.zeros(fr.size, dtype=np.int64)),
                             (cf + uf, -1.0)))
        query, a, penalty = grid.values()
        r = r0[query] + a
        den = np.minimum(nr0[query] + u[query] - a, r)
        value = _ratio(rel_ret[query] + a - _ratio(penalty, den), r)
        ok = _allowed(a, u[query], can_rel, can_non)
        out.append(_extremes(value, query, ok, view.n_queries)[0 if side == "low" else 1])
    return out[0], out[1]


def _discount_table(size: int) -> np.ndarray:
    """``D[m] = sum_{i <= m} 1 / log2(i + 1)``, ``D[0] = 0``."""
    ranks = np.arange(1, size + 1, dtype=np.int64)
    return np.concatenate(([0.0], np.cumsum(1.0 / log2_discount(ranks))))


def _ndcg(view, k, lo, hi):
    """nDCG (trec_eval's gains: the label where positive) over labellings in [lo, hi].

    Low: the j lowest free documents of the window at ``hi``, every free document below
    the window at ``hi`` (it only raises the ideal). High: :func:`_ndcg_high`, started
    from the best labelling with the j highest free documents at ``hi``.
    """
    w = _window(view, k, 1)
    rank = view.rank
    disc = 1.0 / log2_discount(rank) if rank.size else np.zeros(0)
    g_lo, g_hi = max(lo, 0), max(hi, 0)
    judged_gain = np.where(view.code > 0, view.code, 0).astype(np.float64)
    dcg0 = view.sum(np.where(w.inside, judged_gain * disc, 0.0))
    free_disc = np.where(w.free_in, disc, 0.0)
    base = dcg0 + g_lo * view.sum(free_disc)
    top_sum = sg.seg_cumsum(free_disc, view.offsets)
    bottom_sum = sg.seg_accumulate(np.add, free_disc, view.offsets, reverse=True)
    query, j, entry = _candidates(view, w.free_in)
    first = entry < 0
    u = w.u_in[query]
    j_lo = np.where(first, 0, u - j + 1)
    dcg_hi = base[query] + (g_hi - g_lo) * _take(top_sum, entry)
    dcg_lo = base[query] + (g_hi - g_lo) * _take(bottom_sum, entry)
    levels = np.asarray(view.rel_levels, dtype=np.int64)
    values = np.unique(np.concatenate((levels, [lo, hi])))[::-1]
    values = values[values > 0]
    hist = np.zeros((view.n_queries, values.size), dtype=np.int64)
    for col, value in enumerate(values):
        hist[:, col] = view.rel_hist[:, levels == value].sum(axis=1)
    table = _discount_table(int((hist.sum(axis=1) + view.num_ret).max(initial=0)) + 1)
    limit = _INF if k is None else k

    def ideal(n_hi, n_lo):
        total = np.zeros(n_hi.shape)
        start = np.zeros(n_hi.shape, dtype=np.int64)
        for col, value in enumerate(values):
            count = hist[query, col] + (n_hi if value == hi else 0) + (
                n_lo if value == lo else 0)
            end = start + count
            total += value * (table[np.minimum(end, limit)] - table[np.minimum(start, limit)])
            start = end
        return total

    u_out = w.u_out[query]
    high_v = _ratio(dcg_hi, ideal(j, (u - j) + u_out))
    low_v = _ratio(dcg_lo, ideal(j_lo + u_out, u - j_lo))
    ok = np.ones(query.shape, dtype=bool)
    if lo == hi:
        ok = first
    low = _extremes(low_v, query, ok, view.n_queries)[0]
    high = _extremes(high_v, query, ok, view.n_queries)[1]
    if hi - lo > 1:  # a middle grade may do better than the vertices
        high = _ndcg_high(view, w, k, lo, hi, dcg0, top_sum, query, j, entry, table, high)
    return low, high


def _ndcg_high(view, w, k, lo, hi, dcg0, top_sum, query, j, entry, table, start):
    """The highest nDCG over labellings in ``[lo, hi]`` (integer grades), exactly.

    With gain = label, ``DCG = dcg0 + sum_v S(T_v)`` and ``IDCG = sum_v D(min(C_v, K))``
    over the levels ``v >= 1``, where ``T_v`` is the number of free documents of the
    window labelled ``>= v`` (at the maximum they are the ``T_v`` highest ranked, so
    ``S(T)`` sums the first T free discounts) and ``C_v`` the number of documents with
    label ``>= v`` in the ideal. Both are sums over levels of a function of one ``T_v``;
    Dinkelbach's iteration maximises ``DCG - t IDCG`` level by level (the largest
    maximisers nest, ``T_v`` falling with ``v``, because ``D`` is concave) and sets
    ``t`` to the ratio found, until ``t`` stops rising: ``t`` is then the maximum.
    """
    levels = np.asarray(view.rel_levels, dtype=np.int64)
    judged = levels[(levels > 0) & (view.rel_hist.sum(axis=0) > 0)]
    edges = np.unique(np.concatenate(([0, max(lo, 0), hi], judged)))
    u_all = (w.u_in + w.u_out)[query]
    limit = _INF if k is None else k
    s_t = _take(top_sum, entry)
    t_cand = j  # candidate T: the number of free documents labelled >= v
    const_n = dcg0.copy()
    const_i = np.zeros(view.n_queries)
    free_groups = []  # (weight, judged count with label >= the group's levels)
    for a, b in zip(edges[:-1], edges[1:]):
        weight = float(b - a)
        above = view.rel_hist[:, levels >= b].sum(axis=1)
        if b <= lo:  # every free document has label >= these levels
            n_first = np.bincount(query, weights=np.where(t_cand == w.u_in[query], s_t, 0),
                                  minlength=view.n_queries)
            const_n += weight * n_first
            n_all = np.bincount(query, weights=np.where(entry < 0, u_all, 0),
                                minlength=view.n_queries).astype(np.int64)
            const_i += weight * table[np.minimum(above + n_all, limit)]
        elif a >= hi:  # above every grade: judged documents only
            const_i += weight * table[np.minimum(above, limit)]
        else:
            free_groups.append((weight, above))
    t = start.copy()
    n_q = view.n_queries
    for _ in range(64):
        num, den = const_n.copy(), const_i.copy()
        for weight, above in free_groups:
            value = s_t - t[query] * table[np.minimum(above[query] + t_cand, limit)]
            best = np.full(n_q, -np.inf)
            np.maximum.at(best, query, value)
            chosen = np.zeros(n_q, dtype=np.int64)
            np.maximum.at(chosen, query, np.where(value == best[query], t_cand, 0))
            pick = value == best[query]
            picked = pick & (t_cand == chosen[query])
            num += weight * np.bincount(query[picked], weights=s_t[picked], minlength=n_q)
            den += weight * table[np.minimum(above + chosen, limit)]
        ratio = _ratio(num, den)
        rising = ratio > t * (1 + 1e-15)
        t = np.maximum(t, ratio)
        if not rising.any():
            return t
    # Dinkelbach's iteration gains digits superlinearly: never seen; never silent.
    raise IrMetricsError("the upper bound of nDCG did not converge for queries "
                         f"{np.flatnonzero(rising)[:5].tolist()} (row numbers); please report")


def bound_columns(lists, requests, values: dict, *, relevance_level: int = 1,
                  judged_only: bool = False, grades: tuple[int, int] = (0, 1)) -> dict:
    """Per-query bounds of ``requests`` over the labellings of the unjudged documents.

    For every output name ``m`` of a request, returns ``m + "_low"`` and ``m + "_high"``:
    ``min`` and ``max`` of the measure over every assignment of a label in
    ``grades = (lo, hi)`` to each retrieved document absent from the qrels,

    .. math:: \\mathrm{low}_q = \\min_{x \\in [lo, hi]^{U_q}} M_q(x), \\qquad
              \\mathrm{high}_q = \\max_{x \\in [lo, hi]^{U_q}} M_q(x).

    ``values`` (the trec_eval values, unjudged = 0) are kept inside the bounds when label
    0 is in the range and not relevant, so rounding never puts the value outside its
    interval. (Under ``relevance_level <= 0`` every label of ``[0, hi]`` is relevant, and
    trec_eval's value, which counts an unjudged document non-relevant, may lie outside.)

    Parameters
    ----------
    lists : RankedLists
        The packed rankings (after ``max_docs``).
    requests : list of Request
        Parsed measures; each must be one of :data:`BOUNDED_MEASURES`.
    values : dict
        ``{output name: per-query trec_eval values}`` of the same requests.
    relevance_level, judged_only : as in :func:`irmetrics.evaluate`.
    grades : (int, int)
        The lowest and highest label an unjudged document may take.

    Raises
    ------
    ParameterError
        A measure has no bounds here, or nDCG with more than two grades.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 2, "x": 1}}, ["P@2"],
    ...                    unjudged="bounds")
    >>> res.to_dict()["q"]
    {'P@2': 0.5, 'P@2_low': 0.5, 'P@2_high': 1.0}
    """
    lo, hi = grades
    out: dict = {}
    for req in requests:
        name = req.measure.name
        if name not in BOUNDED_MEASURES:
            raise ParameterError(
                f"`measures` must be measures with bounds over unjudged documents "
                f"({', '.join(BOUNDED_MEASURES)}); got {req.output_names[0]!r}.")
        if req.options:
            raise ParameterError(f"`measures` must take no options under "
                                 f"unjudged='bounds'; got {req.output_names[0]!r}.")
        level = relevance_level if req.relevance_level is None else req.relevance_level
        if level < 0:
            raise ParameterError(f"`relevance_level` must be >= 0 under unjudged='bounds'"
                                 f"; got {level!r}.")
        jo = judged_only if req.judged_only is None else req.judged_only
        view = lists.view(level, jo)
        cutoffs = req.params if isinstance(req.params, tuple) and req.params else (None,)
        if name == "ndcg" and req.params:
            raise ParameterError("`measures` must use trec_eval's gains (no gain "
                                 f"parameters) under unjudged='bounds'; got {req.raw!r}.")
        for out_name, k in zip(req.output_names, cutoffs if name != "ndcg" else (None,)):
            value = values[out_name]
            if name in ("P", "success", "recip_rank", "recip_rank_cut"):
                low, high = _cutoff_measure(name, view, k, level, lo, hi)
            elif name == "recall":
                low, high = _recall(view, k, level, lo, hi)
            elif name == "Rprec":
                low, high = _rprec(view, level, lo, hi)
            elif name in ("map", "map_cut"):
                low, high = _average_precision(view, k, level, lo, hi)
            elif name == "infAP":
                if view.num_ret.max(initial=0) >= _INFAP_EXACT_BELOW:
                    warnings.warn("infAP's bounds are proven exact for rankings shorter than"
                                  f" {_INFAP_EXACT_BELOW:,} documents (its smoothing constant"
                                  " enters the argument); a longer ranking's may be off by"
                                  " that constant's share", IrMetricsWarning, stacklevel=3)
                low, high = _average_precision(view, None, level, lo, hi,
                                               _infap_weights(view))
            elif name == "bpref":
                low, high = _bpref(view, level, lo, hi)
            elif name == "err_cut":
                low, high = _err(view, k, lo, hi)
            elif name in ("ndcg", "ndcg_cut"):
                low, high = _ndcg(view, k, lo, hi)
            else:  # judged_cut: a fact about the judgments, reported alongside
                low, high = value, value
            if name not in ("bpref", "infAP") and (level >= 1 or name in ("ndcg", "ndcg_cut", "err_cut")):
                # Label 0 counts as trec_eval counts an unjudged document: the value is
                # one of the labellings, kept inside its bounds whatever the rounding.
                # (Not for bpref: a document judged 0 raises NR, an unjudged one not; nor
                # for infAP: a judged 0 enters its sample, an unjudged one stays out.)
                low, high = np.minimum(low, value), np.maximum(high, value)
            # A query absent from the run (complete=True) retrieved nothing: its
            # placeholder document is trec_eval's device, not a document to label.
            low = np.where(lists.bogus, value, low)
            high = np.where(lists.bogus, value, high)
            out[out_name + "_low"] = np.asarray(low, dtype=np.float64)
            out[out_name + "_high"] = np.asarray(high, dtype=np.float64)
    return out
