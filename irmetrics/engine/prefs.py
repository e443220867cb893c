"""Preference judgments against a run: packing and preference counting (docs/reference/trec_eval.md §8.3).

trec_eval's ``-R prefs`` / ``-R qrels_prefs`` measures never look at a relevance code
per ranked document; they count *preferences* ("a is preferred to b") that a ranking
fulfils. Everything here works on integers called **docid ranks**, assigned per query:

* the judged documents (every doc id named by a prefs line of the query) that were
  retrieved get ``0 .. NJR-1`` in rank order (run ordered by score descending, ties by
  doc id **ascending**, the opposite of qrels; then ``max_docs``);
* judged documents that were not retrieved get ``NJR .. NJ-1`` in doc id byte order.

A preference ``a > b`` between docid ranks is *fulfilled* when ``a < b``; it lies in
the retrieved area when both are ``< NJR``. Each judgment group (JG) yields a list of
preferences in one of two modes:

* **EC mode** (one judgment sub-group): equivalence classes of equal ``rel_level``;
  every line of a higher class is preferred to every line of a lower class (a doc
  listed twice counts twice). A doc at two levels is an error.
* **PA mode** (several sub-groups): inside each sub-group a doc is preferred to every
  doc with a strictly lower level; the transitive closure over the JG gives the
  preferences (each ordered pair once). A cycle, or a doc with level 0 in one
  sub-group and > 0 in the next one it appears in, is an error (trec_eval aborts).

Both modes reduce to a list of ``(jg, a, b)`` preference pairs; every measure is a
count over these pairs (per JG, or summed into the per-query matrix ``C[a][b]``).
Pairs are enumerated vectorised (``repeat``/``arange``, no per-document Python code)
in blocks of whole queries holding about ``_PAIR_BUDGET`` pairs; a single query with
more pairs is one block, so peak memory is about 40 bytes per pair of the largest
query. Like trec_eval, the cost is linear in the number of preferences (EC mode:
product of class sizes). PA closures are batched boolean matrix products over JGs of
similar size; the only Python loops are over query blocks and closure chunks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from ..exceptions import DuplicateEntryError
from ..io.prefs import input_error
from .pack import rank_run

#: Upper bound on enumerated pairs (or closure-matrix cells) held at once.
_PAIR_BUDGET = 1 << 21


# ----------------------------------------------------------------------------- ranking


def evaluated_queries(judged_query_ids: pl.Series, run: pl.DataFrame, complete: bool,
                      run_query_ids=None):
    """Evaluated query ids (ascending byte order) and which of them are absent from the run.

    Without ``complete`` the judged queries present in the run are evaluated; with it
    every judged query, the absent ones on trec_eval's one-document placeholder (``-c``).
    ``run_query_ids`` adds queries present with an empty ranking (a dict's ``{qid: {}}``).
    """
    judged = judged_query_ids.unique().sort()
    run_ids = run["query_id"]
    if run_query_ids is not None:
        run_ids = pl.concat([run_ids, pl.Series([str(q) for q in run_query_ids],
                                                dtype=pl.String)])
    run_ids = run_ids.unique().implode()
    in_run = judged.is_in(run_ids)
    ids = judged if complete else judged.filter(in_run)
    bogus = ~ids.is_in(run_ids)
    return np.asarray(ids.to_list(), dtype=object), bogus.to_numpy().astype(bool)


def ranked_run(run: pl.DataFrame, query_ids: np.ndarray, bogus: np.ndarray, *,
               doc_id_descending: bool, max_docs: int | None) -> pl.DataFrame:
    """The run of the evaluated queries in final rank order, cut at ``max_docs``.

    The ordering is :func:`~irmetrics.engine.pack.rank_run`'s, the one shared with pack.

    Order: query code, score descending, doc id (bytes) descending for qrels and
    qrels_jg, ascending for prefs. Placeholder rows (``complete``) are added for
    ``bogus`` queries. A doc id repeated inside the kept top ``max_docs`` of a query
    raises :class:`DuplicateEntryError` (trec_eval: ``duplicate docs``); repeats below
    the cut are allowed, as in trec_eval.

    Returns
    -------
    polars.DataFrame
        ``qcode`` (Int64), ``query_id``, ``doc_id``, ``score`` in rank order.
    """
    ranked = rank_run(run, query_ids, bogus, max_docs=max_docs,
                      doc_id_descending=doc_id_descending)
    table = pl.DataFrame({
        "qcode": ranked.query,
        "query_id": pl.Series(query_ids[ranked.query].tolist(), dtype=pl.String),
        "doc_id": ranked.doc_col.gather(ranked.order),
        "score": ranked.scores,
    })
    dup = table.filter(pl.struct("qcode", "doc_id").is_duplicated())
    if dup.height:
        raise input_error(
            "doc retrieved twice within the evaluated ranking (trec_eval: duplicate docs)",
            path="<run>", query_id=dup["query_id"][0], doc_id=dup["doc_id"][0],
            cls=DuplicateEntryError)
    return table.select("qcode", "query_id", "doc_id", "score")


# ----------------------------------------------------------------------------- packing


@dataclass(eq=False)
class PrefLists:
    """Preference lines of every evaluated query in docid-rank form.

    Judgment groups are CSR over queries, prefs lines (entries) CSR over judgment
    groups. Entries of a JG are sorted as trec_eval processes them: sub-group (byte
    order), ``rel_level`` descending, docid rank ascending.

    Attributes
    ----------
    query_ids : ndarray of str, shape (Q,)
    bogus : ndarray of bool, shape (Q,)
        Queries evaluated on the ``complete`` placeholder ranking.
    num_judged, num_judged_ret : ndarray of int64, shape (Q,)
        NJ and NJR.
    jg_offsets : ndarray of int64, shape (Q + 1,)
    jg_ids : ndarray of str, shape (J,)
    jg_is_pa : ndarray of bool, shape (J,)
        The JG has more than one judgment sub-group (PA mode).
    entry_offsets : ndarray of int64, shape (J + 1,)
    entry_jsg : ndarray of int64, shape (E,)
        Sub-group code, increasing in byte order inside each JG.
    entry_level : ndarray of float64, shape (E,)
    entry_docid : ndarray of int64, shape (E,)
    doc_ids : ndarray of str, shape (sum NJ,)
        Doc id of docid rank ``r`` of query ``q`` at ``doc_offsets[q] + r``.
    doc_offsets : ndarray of int64, shape (Q + 1,)
    run_name : str
    """

    query_ids: np.ndarray
    bogus: np.ndarray
    num_judged: np.ndarray
    num_judged_ret: np.ndarray
    jg_offsets: np.ndarray
    jg_ids: np.ndarray
    jg_is_pa: np.ndarray
    entry_offsets: np.ndarray
    entry_jsg: np.ndarray
    entry_level: np.ndarray
    entry_docid: np.ndarray
    doc_ids: np.ndarray
    doc_offsets: np.ndarray
    run_name: str = "irmetrics"
    _statistics: dict = field(default_factory=dict, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def n_jgs(self) -> int:
        return len(self.jg_ids)

    @property
    def jg_query(self) -> np.ndarray:
        """Query index of every JG."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.jg_offsets))

    @property
    def entry_jg(self) -> np.ndarray:
        """JG index of every entry."""
        return np.repeat(np.arange(self.n_jgs), np.diff(self.entry_offsets))

    def doc_name(self, query: int, docid: int) -> str:
        return self.doc_ids[self.doc_offsets[query] + docid]

    def statistics(self, *, pairs: bool = False, rnonrel: bool = False) -> "PrefStatistics":
        """Preference counts for the measures (computed once, cached).

        ``pairs`` adds the per-query doc-pair scores (prefs_pair*), ``rnonrel`` the
        recounted per-JG ratios of prefs_avgjg_Rnonrel*.
        """
        for (has_pairs, has_rnonrel), stats in self._statistics.items():
            if has_pairs >= pairs and has_rnonrel >= rnonrel:
                return stats
        stats = _PreferenceCounter(self, pairs=pairs, rnonrel=rnonrel).run()
        self._statistics[(pairs, rnonrel)] = stats
        return stats


def pack_prefs(prefs: pl.DataFrame, run: pl.DataFrame, *, max_docs: int | None = None,
               complete: bool = False, run_name: str = "irmetrics",
               run_query_ids=None) -> PrefLists:
    """Rank a run against preference judgments and assign docid ranks.

    Parameters
    ----------
    prefs : polars.DataFrame
        ``query_id, jg, jsg, doc_id`` (String), ``rel_level`` (Float64).
    run : polars.DataFrame
        ``query_id, doc_id, score``.
    max_docs : int, optional
        Keep the first ``max_docs`` ranked documents per query (``-M``).
    complete : bool
        Evaluate every prefs query, absent ones on the placeholder ranking (``-c``).
    """
    query_ids, bogus = evaluated_queries(prefs["query_id"], run, complete, run_query_ids)
    n_q = len(query_ids)
    lookup = pl.DataFrame({"query_id": pl.Series(list(query_ids), dtype=pl.String),
                           "qcode": np.arange(n_q, dtype=np.int64)})
    ranked = ranked_run(run, query_ids, bogus, doc_id_descending=False, max_docs=max_docs)
    entries = prefs.join(lookup, on="query_id", how="inner")
    judged = entries.select("qcode", "doc_id").unique()

    retrieved = (ranked.with_row_index("pos")
                 .join(judged, on=["qcode", "doc_id"], how="semi")
                 .sort("pos")
                 .select("qcode", "doc_id", pl.int_range(pl.len()).over("qcode").alias("docid")))
    njr = np.bincount(retrieved["qcode"].to_numpy(), minlength=n_q).astype(np.int64)
    unretrieved = (judged.join(retrieved, on=["qcode", "doc_id"], how="anti")
                   .sort(["qcode", "doc_id"]))
    unretrieved = unretrieved.with_columns(
        (pl.Series("base", njr[unretrieved["qcode"].to_numpy()])
         + unretrieved.select(pl.int_range(pl.len()).over("qcode"))[:, 0]).alias("docid"))
    docids = pl.concat([retrieved, unretrieved.select("qcode", "doc_id", "docid")]).sort(
        ["qcode", "docid"])
    nj = np.bincount(docids["qcode"].to_numpy(), minlength=n_q).astype(np.int64)

    entries = entries.join(docids, on=["qcode", "doc_id"], how="left")
    jgs = entries.select("qcode", "jg").unique().sort(["qcode", "jg"]).with_row_index("jg_index")
    jsgs = (entries.select("qcode", "jg", "jsg").unique().sort(["qcode", "jg", "jsg"])
            .with_columns(pl.int_range(pl.len()).over(["qcode", "jg"]).alias("jsg_code")))
    entries = (entries.join(jgs, on=["qcode", "jg"], how="left")
               .join(jsgs, on=["qcode", "jg", "jsg"], how="left")
               .with_columns((pl.col("rel_level") + 0.0).alias("level"))  # -0.0 ties 0.0
               .sort(["jg_index", "jsg_code", "level", "docid"],
                     descending=[False, False, True, False]))

    jg_query = jgs["qcode"].to_numpy()
    n_jsg = np.bincount(jsgs.join(jgs, on=["qcode", "jg"])["jg_index"].to_numpy().astype(np.int64),
                        minlength=jgs.height)
    entry_jg = entries["jg_index"].to_numpy().astype(np.int64)
    return PrefLists(
        query_ids=query_ids,
        bogus=bogus,
        num_judged=nj,
        num_judged_ret=njr,
        jg_offsets=_offsets(np.bincount(jg_query, minlength=n_q)),
        jg_ids=np.asarray(jgs["jg"].to_list(), dtype=object),
        jg_is_pa=n_jsg > 1,
        entry_offsets=_offsets(np.bincount(entry_jg, minlength=jgs.height)),
        entry_jsg=entries["jsg_code"].to_numpy().astype(np.int64),
        entry_level=entries["level"].to_numpy().astype(np.float64),
        entry_docid=entries["docid"].to_numpy().astype(np.int64),
        doc_ids=np.asarray(docids["doc_id"].to_list(), dtype=object),
        doc_offsets=_offsets(nj),
        run_name=run_name,
    )


def _offsets(counts: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def _ranges(starts: np.ndarray, counts: np.ndarray):
    """Concatenate the ranges ``[starts[i], starts[i] + counts[i])``.

    Returns ``(owner, values)``: for every produced value, the index ``i`` it came from.
    """
    counts = counts.astype(np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts) - counts
    return owner, starts[owner] + (np.arange(int(counts.sum())) - first[owner])


# ----------------------------------------------------------------------------- counting


@dataclass
class PrefStatistics:
    """Per-JG preference counts (trec_eval's JG fields) and optional extras.

    All count arrays have shape (J,); the ``poss_*`` counts include the fulfilled
    ones, as in trec_eval (``possible += fulfilled`` after counting).
    """

    ful_ret: np.ndarray
    ful_imp: np.ndarray
    poss_ret: np.ndarray
    poss_imp: np.ndarray
    notoccur: np.ndarray
    num_rel: np.ndarray
    num_rel_ret: np.ndarray
    num_nonrel: np.ndarray
    num_nonrel_ret: np.ndarray
    #: (Q, 3): prefs_pair, prefs_pair_ret, prefs_pair_imp (when requested).
    pair_values: np.ndarray | None = None
    #: (J,) per-JG ratios of prefs_avgjg_Rnonrel and _ret (NaN for 0/0), when requested.
    rnonrel_ratio: np.ndarray | None = None
    rnonrel_ret_ratio: np.ndarray | None = None


class _PreferenceCounter:
    """One pass over all preference pairs, in blocks of whole queries."""

    def __init__(self, lists: PrefLists, *, pairs: bool, rnonrel: bool):
        self.lists = lists
        self.want_pairs = pairs
        self.want_rnonrel = rnonrel
        self.jg_query = lists.jg_query
        self.entry_jg = lists.entry_jg
        self.jg_njr = lists.num_judged_ret[self.jg_query]
        self.entry_njr = self.jg_njr[self.entry_jg]
        self.entry_pa = lists.jg_is_pa[self.entry_jg]
        # Narrow copies halve the memory traffic of the per-pair arrays.
        self.entry_jg32 = self.entry_jg.astype(np.int32)
        self.entry_docid32 = lists.entry_docid.astype(np.int32)
        self.entry_njr32 = self.entry_njr.astype(np.int32)
        self._classes()
        self._pa_docs()

    # -- structure shared by both modes ------------------------------------------------

    def _classes(self):
        """Runs of equal (JG, sub-group, level): EC classes, or PA level tiers."""
        ls = self.lists
        n = len(ls.entry_level)
        new = np.ones(n, dtype=bool)
        if n:
            new[1:] = ((self.entry_jg[1:] != self.entry_jg[:-1])
                       | (ls.entry_jsg[1:] != ls.entry_jsg[:-1])
                       | (ls.entry_level[1:] != ls.entry_level[:-1]))
        self.entry_class = np.cumsum(new) - 1
        class_start = np.flatnonzero(new)
        self.class_start = class_start
        self.class_end = np.append(class_start[1:], n).astype(np.int64)
        # End of each entry's (JG, sub-group) segment: every later class in it is lower.
        seg_new = np.ones(n, dtype=bool)
        if n:
            seg_new[1:] = ((self.entry_jg[1:] != self.entry_jg[:-1])
                           | (ls.entry_jsg[1:] != ls.entry_jsg[:-1]))
        seg_id = np.cumsum(seg_new) - 1
        seg_end = np.append(np.flatnonzero(seg_new)[1:], n).astype(np.int64)
        self.entry_seg_end = seg_end[seg_id]
        # Entries below each entry's class inside its segment: its lower partners.
        self.entry_n_lower = self.entry_seg_end - self.class_end[self.entry_class]
        jg_last_class = self.entry_class[np.maximum(ls.entry_offsets[1:] - 1, 0)]
        self.is_last_class = (self.entry_class == jg_last_class[self.entry_jg]) & ~self.entry_pa
        self.pos_in_class = np.arange(n) - self.class_start[self.entry_class]

    def _pa_docs(self):
        """Distinct docs of PA-mode JGs with their last-seen level (trec_eval's rel_array)."""
        ls = self.lists
        idx = np.flatnonzero(self.entry_pa)
        order = idx[np.lexsort((idx, ls.entry_docid[idx], self.entry_jg[idx]))]
        jg, docid = self.entry_jg[order], ls.entry_docid[order]
        last = np.ones(len(order), dtype=bool)
        if len(order):
            last[:-1] = (jg[1:] != jg[:-1]) | (docid[1:] != docid[:-1])
        self._check_zero_nonzero(order, last)
        self.pd_entry = order[last]  # an entry of each (JG, doc), the last one seen
        self.pd_jg = jg[last]
        self.pd_docid = docid[last]
        self.pd_level = ls.entry_level[self.pd_entry]
        self.pd_start = np.searchsorted(self.pd_jg, np.arange(ls.n_jgs), side="left")
        self.pd_count = np.bincount(self.pd_jg, minlength=ls.n_jgs).astype(np.int64)
        self.key_scale = int(ls.num_judged.max(initial=0)) + 1
        self.pd_key = self.pd_jg * self.key_scale + self.pd_docid

    def _check_zero_nonzero(self, order, last):
        """trec_eval compares each line of a doc with the previous one it saw in the JG."""
        ls = self.lists
        level = ls.entry_level[order]
        same_doc = ~last[:-1]
        prev, cur = level[:-1], level[1:]
        bad = same_doc & (((prev > 0) & (cur == 0)) | ((prev == 0) & (cur > 0)))
        if bad.any():
            e = order[1:][bad][np.argmin(self.entry_jg[order[1:][bad]])]
            g = self.entry_jg[e]
            raise self._error(g, "has both 0 and non-0 rel_level assigned (trec_eval: fatal)",
                              ls.entry_docid[e])

    def _doc(self, g, docid):
        return self.lists.doc_name(self.jg_query[g], int(docid))

    def _error(self, g, reason, docid=None):
        ls = self.lists
        return input_error(f"judgment group {ls.jg_ids[g]!r}: {reason}", path="<prefs>",
                           query_id=ls.query_ids[self.jg_query[g]],
                           doc_id=None if docid is None else self._doc(g, docid))

    def _check_ec_levels(self):
        """In EC mode a doc may appear at only one level."""
        ls = self.lists
        idx = np.flatnonzero(~self.entry_pa)
        order = idx[np.lexsort((ls.entry_level[idx], ls.entry_docid[idx], self.entry_jg[idx]))]
        jg, docid, level = self.entry_jg[order], ls.entry_docid[order], ls.entry_level[order]
        bad = (jg[1:] == jg[:-1]) & (docid[1:] == docid[:-1]) & (level[1:] != level[:-1])
        if bad.any():
            e = order[1:][bad][0]
            g = self.entry_jg[e]
            raise self._error(g, "doc occurs with different rel_level in the same judgment"
                              " sub-group (trec_eval: fatal)", ls.entry_docid[e])

    # -- the pass ------------------------------------------------------------------------

    def run(self) -> PrefStatistics:
        ls = self.lists
        self._check_ec_levels()
        n_jg = ls.n_jgs
        self.code_counts = np.zeros(8 * n_jg, dtype=np.int64)
        self._relevance_counts()
        if self.want_pairs:
            self.pair_sums = np.zeros((3, ls.n_queries))
            self.pair_n = np.zeros((3, ls.n_queries), dtype=np.int64)
            self.simple_pairs = self._simple_pair_queries()
        if self.want_rnonrel:
            self._prepare_rnonrel()
        for q0, q1 in self._query_blocks():
            self._block(q0, q1)
        codes = self.code_counts.reshape(n_jg, 8)
        ful_ret, ful_imp, poss_ret0, poss_imp0 = codes[:, 7], codes[:, 6], codes[:, 3], codes[:, 1]
        notoccur = codes[:, 4] + codes[:, 0]
        stats = PrefStatistics(
            ful_ret=ful_ret, ful_imp=ful_imp, poss_ret=poss_ret0 + ful_ret,
            poss_imp=poss_imp0 + ful_imp, notoccur=notoccur,
            num_rel=self.num_rel, num_rel_ret=self.num_rel_ret,
            num_nonrel=self.num_nonrel, num_nonrel_ret=self.num_nonrel_ret)
        if self.want_pairs:
            pair = np.where(self.pair_n > 0, self.pair_sums / np.maximum(self.pair_n, 1), 0.0)
            simple = self.simple_pairs
            first_jg = ls.jg_offsets[:-1][simple]
            fulfilled = (stats.ful_ret + stats.ful_imp)[first_jg]
            pair[0, simple] = _ratio(fulfilled, (stats.poss_ret + stats.poss_imp
                                                 + stats.notoccur)[first_jg])
            pair[1, simple] = _ratio(stats.ful_ret[first_jg], stats.poss_ret[first_jg])
            pair[2, simple] = _ratio(fulfilled, (stats.poss_ret + stats.poss_imp)[first_jg])
            stats.pair_values = pair.T.copy()
        if self.want_rnonrel:
            stats.rnonrel_ratio, stats.rnonrel_ret_ratio = self._rnonrel_ratios(stats)
        return stats

    def _relevance_counts(self):
        """num_rel / num_nonrel (+ retrieved): EC per line, PA per doc by last-seen level."""
        ls = self.lists
        n_jg = ls.n_jgs
        ec = ~self.entry_pa
        level, ret = ls.entry_level, ls.entry_docid < self.entry_njr
        rel = ec & (level > 0)
        nonrel = ec & ~(level > 0)
        pd_ret = self.pd_docid < self.jg_njr[self.pd_jg]
        pd_rel, pd_nonrel = self.pd_level > 0, self.pd_level == 0

        def per_jg(entry_mask, doc_mask):
            return (np.bincount(self.entry_jg[entry_mask], minlength=n_jg)
                    + np.bincount(self.pd_jg[doc_mask], minlength=n_jg)).astype(np.int64)

        self.num_rel = per_jg(rel, pd_rel)
        self.num_rel_ret = per_jg(rel & ret, pd_rel & pd_ret)
        self.num_nonrel = per_jg(nonrel, pd_nonrel)
        self.num_nonrel_ret = per_jg(nonrel & ret, pd_nonrel & pd_ret)

    def _query_blocks(self):
        """Consecutive query ranges whose pairs and closure cells fit the budget."""
        ls = self.lists
        entry_query = self.jg_query[self.entry_jg]
        cost = np.bincount(entry_query, weights=self.entry_n_lower, minlength=ls.n_queries)
        cost += np.bincount(self.jg_query, weights=self.pd_count.astype(np.float64) ** 2,
                            minlength=ls.n_queries)
        bucket = (np.cumsum(cost) - cost) // _PAIR_BUDGET
        starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]]) if ls.n_queries else []
        bounds = list(starts) + [ls.n_queries]
        return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]

    def _block(self, q0: int, q1: int):
        ls = self.lists
        g0, g1 = ls.jg_offsets[q0], ls.jg_offsets[q1]
        e0, e1 = ls.entry_offsets[g0], ls.entry_offsets[g1]
        entries = np.arange(e0, e1)
        pa = self.entry_pa[e0:e1]
        n_lower = self.entry_n_lower[e0:e1]
        # EC mode: x is preferred to every line y of a lower class of its JG. The pairs of
        # one x are the contiguous entries after its class, so repeat/arange build them.
        xe, count = entries[~pa], n_lower[~pa]
        first = np.cumsum(count) - count
        y = (np.arange(int(count.sum()), dtype=np.int64)
             + np.repeat(self.class_end[self.entry_class[xe]] - first, count))
        jg = np.repeat(self.entry_jg32[xe], count)
        a = np.repeat(self.entry_docid32[xe], count)
        b = self.entry_docid32[y]
        key = self._category_key(jg, a, b, np.repeat(self.entry_njr32[xe], count))
        self.code_counts += np.bincount(key, minlength=8 * ls.n_jgs)
        if self.want_rnonrel and self.any_recount:
            self._recount_ec(key, y)
        # PA mode: edges inside each sub-group, then the transitive closure.
        owner, yp = _ranges(self.class_end[self.entry_class[entries[pa]]], n_lower[pa])
        pa_jg, pa_a, pa_b, pa_i, pa_j = self._closure(entries[pa][owner], yp)
        pa_key = self._category_key(pa_jg, pa_a, pa_b, self.jg_njr[pa_jg])
        self.code_counts += np.bincount(pa_key, minlength=8 * ls.n_jgs)
        if self.want_rnonrel and self.any_recount:
            self._recount_pa(pa_key, pa_a, pa_b, pa_i, pa_j)
        if self.want_pairs and not self.simple_pairs[q0:q1].all():
            self._pairs(np.concatenate([jg, pa_jg]), np.concatenate([a, pa_a]),
                        np.concatenate([b, pa_b]), q0)

    @staticmethod
    def _category_key(jg, a, b, njr) -> np.ndarray:
        """``8 jg + code`` with code bits 4: fulfilled (a < b), 2: a retrieved, 1: b retrieved.

        Codes: 7 fulfilled both retrieved, 6 fulfilled implied, 3 possible both retrieved,
        1 possible implied, 4 and 0 neither retrieved (5 and 2 cannot occur).
        """
        key = jg.astype(np.int64) * 8
        key += (a < b) * 4
        key += (a < njr) * 2
        key += b < njr
        return key

    # -- PA closure ----------------------------------------------------------------------

    def _closure(self, x, y):
        """Transitive closure of the PA edges ``x -> y`` (entries), per JG, batched.

        Returns the preference pairs as (jg, docid a, docid b, local a, local b), where
        the local indices point into the JG's distinct-doc table.
        """
        ls = self.lists
        empty = np.zeros(0, dtype=np.int64)
        if not len(x):
            return empty, empty, empty, empty, empty
        jg = self.entry_jg[x]
        li = np.searchsorted(self.pd_key, jg * self.key_scale + ls.entry_docid[x]) - self.pd_start[jg]
        lj = np.searchsorted(self.pd_key, jg * self.key_scale + ls.entry_docid[y]) - self.pd_start[jg]
        groups = np.unique(jg)
        sizes = self.pd_count[groups]
        order = np.argsort(sizes, kind="stable")
        groups, sizes = groups[order], sizes[order]
        # Chunks of JGs in the same power-of-two size class whose (B, n, n) stack fits
        # the budget; one Python iteration per chunk, never per JG.
        size_class = np.ceil(np.log2(np.maximum(sizes, 1))).astype(np.int64)
        per_chunk = np.maximum(1, _PAIR_BUDGET // (1 << (2 * size_class)))
        class_first = np.searchsorted(size_class, size_class, side="left")
        chunk_key = size_class * (len(groups) + 1) + (np.arange(len(groups)) - class_first) // per_chunk
        new_chunk = np.r_[True, chunk_key[1:] != chunk_key[:-1]]
        chunk_id = np.cumsum(new_chunk) - 1
        starts = np.flatnonzero(new_chunk)
        bounds = list(zip(starts, np.append(starts[1:], len(groups))))
        slot = np.full(ls.n_jgs, -1, dtype=np.int64)
        slot[groups] = np.arange(len(groups)) - starts[chunk_id]
        chunk_of_jg = np.full(ls.n_jgs, -1, dtype=np.int64)
        chunk_of_jg[groups] = chunk_id
        edge_order = np.argsort(chunk_of_jg[jg], kind="stable")
        edge_chunk = chunk_of_jg[jg][edge_order]
        out = []
        for c, (s0, s1) in enumerate(bounds):
            lo, hi = np.searchsorted(edge_chunk, [c, c + 1])
            sel = edge_order[lo:hi]
            members = groups[s0:s1]
            n = int(sizes[s1 - 1])
            reach = np.zeros((len(members), n, n), dtype=bool)
            reach[slot[jg[sel]], li[sel], lj[sel]] = True
            diag = np.arange(n)
            reach[:, diag, diag] = True
            while True:  # repeated squaring of (A | I): at most ceil(log2 n) + 1 rounds
                square = np.matmul(reach.astype(np.float32), reach.astype(np.float32)) > 0
                if np.array_equal(square, reach):
                    break
                reach = square
            reach[:, diag, diag] = False
            conflict = reach & reach.transpose(0, 2, 1)
            if conflict.any():
                k, i, j = (v[0] for v in np.nonzero(conflict))
                g = members[k]
                other = self._doc(g, self.pd_docid[self.pd_start[g] + j])
                raise self._error(
                    g, f"inconsistent preferences: doc and {other!r} are each preferred to the"
                    " other (trec_eval: Pref inconsistency found, abort)",
                    self.pd_docid[self.pd_start[g] + i])
            k, i, j = np.nonzero(reach)
            g = members[k]
            out.append((g, self.pd_docid[self.pd_start[g] + i],
                        self.pd_docid[self.pd_start[g] + j], i, j))
        return tuple(np.concatenate([o[t] for o in out]).astype(np.int64) for t in range(5))

    # -- prefs_pair ----------------------------------------------------------------------

    def _simple_pair_queries(self) -> np.ndarray:
        """Queries whose C matrix holds only 0/1 cells pointing one way.

        With a single JG and no doc listed twice in an EC-mode JG, every judged doc pair
        carries at most one preference, so each pair scores exactly 1 (fulfilled) or 0
        and prefs_pair equals prefs_simp (likewise _ret, _imp), bit for bit: the
        sums are exact integers. Those queries skip the pair aggregation.
        """
        ls = self.lists
        entries_per_jg = np.diff(ls.entry_offsets)
        distinct = np.bincount(
            np.unique(self.entry_jg * self.key_scale + ls.entry_docid) // self.key_scale,
            minlength=ls.n_jgs) if len(self.entry_jg) else np.zeros(ls.n_jgs, np.int64)
        unique_lines = ls.jg_is_pa | (distinct == entries_per_jg)
        one_jg = np.diff(ls.jg_offsets) == 1
        simple = one_jg.copy()
        simple[one_jg] = unique_lines[ls.jg_offsets[:-1][one_jg]]
        return simple

    def _pairs(self, jg, a, b, q0):
        """Fold the pairs into ``C[i][j]`` and score each unordered doc pair.

        Pair scores ``C[i][j] / (C[i][j] + C[j][i])`` (i the lower docid) are summed in
        trec_eval's loop order: both retrieved by (i, j), then one retrieved by (i, j);
        pairs with neither retrieved only count (score 0). One sort on the key
        (query, area, i, j) groups the cells and gives that order.
        """
        ls = self.lists
        keep = ~self.simple_pairs[self.jg_query[jg]]
        jg, a, b = jg[keep], a[keep], b[keep]
        if not len(jg):
            return
        q = self.jg_query[jg]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        njr = ls.num_judged_ret[q]
        area = np.where(hi < njr, 0, np.where(lo < njr, 1, 2))
        scale = self.key_scale
        key = (((q - q0) * 3 + area) * scale + lo) * scale + hi
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
        forward = np.add.reduceat((a < b)[order].astype(np.float64), starts)
        total = np.diff(np.append(starts, len(key))).astype(np.float64)
        pq, area = q[order[starts]], area[order[starts]]
        score = forward / total
        n_q = ls.n_queries
        for row, mask in enumerate((area <= 1, area == 0, area <= 1)):  # pair, _ret, _imp
            self.pair_sums[row] += np.bincount(pq[mask], weights=score[mask], minlength=n_q)
        self.pair_n[0] += np.bincount(pq, minlength=n_q)
        self.pair_n[1] += np.bincount(pq[area == 0], minlength=n_q)
        self.pair_n[2] += np.bincount(pq[area <= 1], minlength=n_q)

    # -- prefs_avgjg_Rnonrel recounts ----------------------------------------------------

    def _prepare_rnonrel(self):
        """Which JGs are recounted, the truncated non-relevant sets, trec_eval's UB guard."""
        ls = self.lists
        n_jg = ls.n_jgs
        self.recount = np.zeros((4, n_jg), dtype=np.int64)  # full ful/poss, ret ful/poss
        self.need_full = self.num_rel < self.num_nonrel
        self.need_ret = self.num_rel_ret < self.num_nonrel_ret
        ec = ~self.entry_pa
        last = self.is_last_class
        retrieved = ls.entry_docid < self.entry_njr
        r_full = self.num_rel[self.entry_jg]
        r_ret = self.num_rel_ret[self.entry_jg]
        # EC: the new non-relevant class is the first R lines of the lowest class.
        self.in_new_full = last & (self.pos_in_class < r_full)
        # _ret: its retrieved lines among the first num_rel_ret (they form a prefix).
        self.in_new_ret = last & (self.pos_in_class < r_ret) & retrieved
        # Lines of the lowest class outside the new class are never a pair's lower doc.
        self.drop_y_full = last & ~self.in_new_full
        self.drop_y_ret = last & ~self.in_new_ret
        self.any_recount = bool(self.need_full.any() or self.need_ret.any())
        last_size = np.bincount(self.entry_jg[last], minlength=n_jg)
        last_ret = np.bincount(self.entry_jg[last & retrieved], minlength=n_jg)
        ec_jg = ~ls.jg_is_pa
        for need, ub, name in (
            (self.need_full, last_size < self.num_rel, "prefs_avgjg_Rnonrel"),
            (self.need_ret, (last_size < self.num_rel_ret) & (last_ret == last_size),
             "prefs_avgjg_Rnonrel_ret"),
        ):
            bad = np.flatnonzero(ec_jg & need & ub)
            if len(bad):
                g = bad[0]
                raise self._error(
                    g, f"{name} is undefined: its lowest rel_level class has fewer lines than"
                    " the relevant count and trec_eval reads past it (several non-positive"
                    " rel_levels in one judgment sub-group)")
        # Lines of the lowest class below the new class (x) vs the new class (y), counted
        # by binary search: x ranges over the whole lowest class, itself included.
        key = self.entry_class * self.key_scale + ls.entry_docid
        new_full = np.flatnonzero(ec & self.in_new_full & self.need_full[self.entry_jg])
        below = (np.searchsorted(key, self.entry_class[new_full] * self.key_scale
                                 + np.minimum(ls.entry_docid[new_full], self.entry_njr[new_full]))
                 - self.class_start[self.entry_class[new_full]])
        self.recount[0] += np.bincount(self.entry_jg[new_full], weights=below,
                                       minlength=n_jg).astype(np.int64)
        self.recount[1] += np.bincount(self.entry_jg[new_full], weights=last_size[
            self.entry_jg[new_full]], minlength=n_jg).astype(np.int64)
        new_ret = np.flatnonzero(ec & self.in_new_ret & self.need_ret[self.entry_jg])
        below = (np.searchsorted(key, self.entry_class[new_ret] * self.key_scale
                                 + ls.entry_docid[new_ret])
                 - self.class_start[self.entry_class[new_ret]])
        self.recount[2] += np.bincount(self.entry_jg[new_ret], weights=below,
                                       minlength=n_jg).astype(np.int64)
        self.recount[3] += np.bincount(self.entry_jg[new_ret], weights=last_ret[
            self.entry_jg[new_ret]], minlength=n_jg).astype(np.int64)
        # PA: zero-level docs beyond the first num_rel (in docid order) are dropped; the
        # _ret variant looks at retrieved docs only, but still keeps num_rel of them.
        zero = self.pd_level == 0
        pd_ret = self.pd_docid < self.jg_njr[self.pd_jg]
        self.pd_drop_full = zero & (_rank_within(self.pd_jg, zero) >= self.num_rel[self.pd_jg])
        zero_ret = zero & pd_ret
        self.pd_drop_ret = zero_ret & (_rank_within(self.pd_jg, zero_ret)
                                       >= self.num_rel[self.pd_jg])

    def _recount_ec(self, key, y):
        """Recount the EC pairs: pairs into the lowest class keep only its new part."""
        n_jg = self.lists.n_jgs
        jg = key // 8
        sel = self.need_full[jg] & ~self.drop_y_full[y]
        h = np.bincount(key[sel], minlength=8 * n_jg).reshape(n_jg, 8)
        self.recount[0] += h[:, 7] + h[:, 6]  # fulfilled: a < b and a retrieved
        self.recount[1] += h.sum(axis=1)
        sel = self.need_ret[jg] & ~self.drop_y_ret[y]
        h = np.bincount(key[sel], minlength=8 * n_jg).reshape(n_jg, 8)
        self.recount[2] += h[:, 7]  # both retrieved (codes 7 and 3 only)
        self.recount[3] += h[:, 7] + h[:, 3]

    def _recount_pa(self, key, a, b, i, j):
        n_jg = self.lists.n_jgs
        if not len(key):
            return
        jg = key // 8
        di, dj = self.pd_start[jg] + i, self.pd_start[jg] + j
        sel = self.need_full[jg] & ~self.pd_drop_full[di] & ~self.pd_drop_full[dj]
        h = np.bincount(key[sel], minlength=8 * n_jg).reshape(n_jg, 8)
        self.recount[0] += h[:, 7] + h[:, 6]
        self.recount[1] += h.sum(axis=1)
        sel = self.need_ret[jg] & ~self.pd_drop_ret[di] & ~self.pd_drop_ret[dj]
        h = np.bincount(key[sel], minlength=8 * n_jg).reshape(n_jg, 8)
        self.recount[2] += h[:, 7]
        self.recount[3] += h[:, 7] + h[:, 3]

    def _rnonrel_ratios(self, s: PrefStatistics):
        """Per-JG ratio: R >= N adds R-N fulfilled preferences per relevant doc, else recount."""
        r, n = s.num_rel, s.num_nonrel
        with np.errstate(invalid="ignore", divide="ignore"):
            full = np.where(
                r >= n,
                (s.ful_ret + s.ful_imp + s.num_rel_ret * (r - n))
                / (s.poss_ret + s.poss_imp + s.notoccur + s.num_rel * (r - n)).astype(np.float64),
                self.recount[0] / self.recount[1].astype(np.float64))
            r, n = s.num_rel_ret, s.num_nonrel_ret
            ret = np.where(
                r >= n,
                (s.ful_ret + s.num_rel_ret * (r - n))
                / (s.poss_ret + s.num_rel * (r - n)).astype(np.float64),
                self.recount[2] / self.recount[3].astype(np.float64))
        return full, ret


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` where ``den > 0``, else 0."""
    out = np.zeros(len(num))
    np.divide(num, den, out=out, where=den > 0)
    return out


def _rank_within(group: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """0-based rank of each masked element among masked elements of its (sorted) group."""
    counts = np.cumsum(mask) - mask  # masked elements strictly before, globally
    starts = np.searchsorted(group, group, side="left")
    before_group = np.concatenate(([0], np.cumsum(mask)))[starts]
    return counts - before_group
