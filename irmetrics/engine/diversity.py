"""Intent-aware rankings for the diversity measures (ndeval's, through pyndeval).

The run side takes the one road: :func:`~irmetrics.engine.pack.rank_run` orders the
run (score descending, ties by doc id *ascending*, which is how pyndeval ranks a run
before ndeval reads the ranks) and the segment primitives compute over its CSR layout.
The judgments get their own encoded table: one row per ``(query, intent, doc)``
judgment, intents coded by first appearance (ndeval's subtopic numbers), and the
run's ``(entry, intent)`` relevance pairs joined to it once.

:class:`IntentStats` holds what every diversity measure reads at one relevance level
and one redundancy penalty ``alpha``: per ranked entry the novelty-discounted gain
``sum over its relevant intents i of (1 - alpha) ** (earlier entries relevant to i)``
(added in intent order, as ndeval does), the same for ndeval's greedy ideal ranking of
the judged documents, and the per-intent counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from . import segments as sg
from .pack import rank_run
from .prefs import evaluated_queries


@dataclass(eq=False)
class DiversityLists:
    """A run ranked against intent-aware judgments.

    Attributes
    ----------
    query_ids : ndarray of str, shape (Q,)
        Evaluated queries, ascending byte order.
    offsets : ndarray of int64, shape (Q + 1,)
        Ranked entries of query ``q`` are ``offsets[q]:offsets[q + 1]`` (CSR).
    pair_entry, pair_intent, pair_relevance : ndarray, shape (P,)
        One row per judgment of a ranked document: its entry, the intent's code and
        the label; sorted by entry, then intent code.
    judgment_query, judgment_intent, judgment_doc, judgment_relevance : ndarray, shape (J,)
        The judgments of the evaluated queries, sorted by query, then doc id (bytes),
        then intent; doc: the number of the (query, doc id) pair in that order.
    n_intents : int
        Number of intent codes (all queries).
    run_name : str
    """

    query_ids: np.ndarray
    offsets: np.ndarray
    pair_entry: np.ndarray
    pair_intent: np.ndarray
    pair_relevance: np.ndarray
    judgment_query: np.ndarray
    judgment_intent: np.ndarray
    judgment_doc: np.ndarray
    judgment_relevance: np.ndarray
    n_intents: int
    run_name: str = "irmetrics"

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @cached_property
    def entry_query(self) -> np.ndarray:
        return sg.segment_ids(self.offsets)

    @cached_property
    def entry_rank(self) -> np.ndarray:
        return sg.ranks(self.offsets)

    def stats(self, relevance_level: int, alpha: float) -> "IntentStats":
        return IntentStats(self, relevance_level, alpha)


def pack_diversity(judgments: pl.DataFrame, run: pl.DataFrame, *, judged_only: bool = False,
                   complete: bool = False, run_query_ids=None,
                   run_name: str = "irmetrics") -> DiversityLists:
    """Rank ``run`` and join it to intent-aware ``judgments``.

    Parameters
    ----------
    judgments : polars.DataFrame
        ``query_id, intent, doc_id`` (String), ``relevance`` (Int64), unique per
        ``(query_id, intent, doc_id)``; intents are coded in order of first appearance.
    run : polars.DataFrame
        ``query_id, doc_id, score``.
    judged_only : bool
        Drop the run's documents judged for no intent before ranking.
    complete : bool
        Evaluate every judged query; those absent from the run get an empty ranking.
    run_query_ids : list, optional
        Queries present with an empty ranking (a dict's ``{qid: {}}``).
    """
    query_ids, _ = evaluated_queries(judgments["query_id"], run, complete, run_query_ids)
    lookup = pl.DataFrame({"query_id": pl.Series(list(query_ids), dtype=pl.String),
                           "qcode": np.arange(len(query_ids), dtype=np.int64)})
    intents = judgments["intent"].unique(maintain_order=True)
    intent_codes = pl.DataFrame({"intent": intents,
                                 "icode": np.arange(len(intents), dtype=np.int64)})
    coded = (judgments.join(lookup, on="query_id", how="inner")
             .join(intent_codes, on="intent", how="left")
             .sort(["qcode", "doc_id", "icode"]))
    if judged_only:
        run = run.join(coded.select("query_id", "doc_id").unique(), on=["query_id", "doc_id"],
                       how="semi")
    # No placeholder documents: a query without a ranking is an empty segment. Run
    # tables hold each (query, doc) once (the Run containers refuse repeats).
    ranked = rank_run(run, query_ids, np.zeros(len(query_ids), dtype=bool),
                      doc_id_descending=False)
    entries = pl.DataFrame({"qcode": ranked.query.astype(np.int64),
                            "doc_id": ranked.doc_col.gather(ranked.order)})
    pairs = (entries.with_row_index("entry")
             .join(coded.select("qcode", "doc_id", "icode", "relevance"),
                   on=["qcode", "doc_id"], how="inner")
             .sort(["entry", "icode"]))
    # Judged documents numbered in (query, doc id) order: a new number where either changes.
    qcode, doc_col = coded["qcode"], coded["doc_id"]
    new_doc = np.ones(coded.height, dtype=bool)
    if coded.height > 1:
        new_doc[1:] = ((qcode.slice(1) != qcode.slice(0, coded.height - 1))
                       | (doc_col.slice(1) != doc_col.slice(0, coded.height - 1))).to_numpy()
    return DiversityLists(
        query_ids=query_ids,
        offsets=ranked.offsets,
        pair_entry=pairs["entry"].to_numpy().astype(np.int64),
        pair_intent=pairs["icode"].to_numpy(),
        pair_relevance=pairs["relevance"].to_numpy(),
        judgment_query=coded["qcode"].to_numpy(),
        judgment_intent=coded["icode"].to_numpy(),
        judgment_doc=np.cumsum(new_doc) - 1,
        judgment_relevance=coded["relevance"].to_numpy(),
        n_intents=len(intents),
        run_name=run_name,
    )


def discounts(n: int) -> np.ndarray:
    """ndeval's rank discount ``log(2) / log(i + 2)`` for 0-based ranks ``i < n`` (libm)."""
    return np.array([math.log(2.0) / math.log(i + 2.0) for i in range(n)], dtype=np.float64)


def repeated_products(factor: float, n: int) -> np.ndarray:
    """``[1, f, f*f, ...]`` (n values) by repeated multiplication, as ndeval updates its
    gains (``gain *= f``), which can differ from ``f ** k`` in the last bit."""
    steps = np.full(n, factor, dtype=np.float64)
    if n:
        steps[0] = 1.0
    return np.multiply.accumulate(steps)


class IntentStats:
    """Novelty-discounted gains of a ranking and of its ideal at one level and alpha.

    A judgment is relevant when its label is ``>= relevance_level`` (pyndeval's
    binarisation; negative labels are never relevant).
    """

    def __init__(self, lists: DiversityLists, relevance_level: int, alpha: float):
        self.lists = lists
        self.alpha = float(alpha)
        n_q = lists.n_queries
        rel = lists.judgment_relevance >= relevance_level
        q, i = lists.judgment_query[rel], lists.judgment_intent[rel]
        # Relevant (query, intent) cells, sorted by query then intent code.
        cell_key = q * lists.n_intents + i
        self.cells, self.cell_nrel = np.unique(cell_key, return_counts=True)
        self.cell_query = self.cells // max(lists.n_intents, 1)
        #: Intents with a relevant judgment (ndeval's actualSubtopics), per query.
        self.n_intents = np.bincount(self.cell_query, minlength=n_q).astype(np.int64)
        self._rel_judgments = (q, lists.judgment_doc[rel], cell_key)

        keep = lists.pair_relevance >= relevance_level
        entry, intent = lists.pair_entry[keep], lists.pair_intent[keep]
        query = lists.entry_query[entry].astype(np.int64)
        # Earlier entries relevant to the same (query, intent): pairs in (cell, rank) order.
        key = query * lists.n_intents + intent
        by_cell = np.lexsort((entry, key))
        seen = _count_before(key[by_cell])
        self.pair_seen = np.empty_like(seen)
        self.pair_seen[by_cell] = seen
        self.pair_entry, self.pair_cell = entry, key
        gains = repeated_products(1.0 - self.alpha, int(seen.max(initial=-1)) + 1)
        n_entries = int(lists.offsets[-1])
        # Pairs are in (entry, intent) order, so bincount adds each entry's gains in
        # intent order, as ndeval's loop over subtopics.
        self.entry_gain = np.bincount(entry, weights=gains[self.pair_seen],
                                      minlength=n_entries)

    # ------------------------------------------------------------------ run side

    def at_cutoff(self, per_entry: np.ndarray, k: int) -> np.ndarray:
        """Running sum (rank order) of ``per_entry`` at rank ``min(k, n)``, 0 if empty."""
        cum = sg.seg_cumsum(per_entry, self.lists.offsets)
        return sg.at_rank(cum, self.lists.offsets, k, fill=0.0)

    def count_at_cutoff(self, pair_mask: np.ndarray, k: int) -> np.ndarray:
        """Number of relevant pairs selected by ``pair_mask`` within the top ``k``."""
        n_entries = int(self.lists.offsets[-1])
        per_entry = np.bincount(self.pair_entry[pair_mask], minlength=n_entries)
        # Integer running sums are exact, so a global cumsum minus the segment base is safe.
        total = np.cumsum(per_entry, dtype=np.int64)
        base = np.concatenate(([0], total))[self.lists.offsets[:-1]]
        running = total - np.repeat(base, np.diff(self.lists.offsets))
        return sg.at_rank(running, self.lists.offsets, k, fill=0)

    # ---------------------------------------------------------------- ideal side

    def ideal_gains(self, depth: int | None) -> np.ndarray:
        """Gains of ndeval's greedy ideal ranking, shape (Q, T), zero-padded.

        ndeval fills every rank with the judged document of the highest current gain
        (ties: the greatest doc id by bytes), then discounts the gains of that
        document's intents by ``1 - alpha``. Documents relevant to no intent add
        nothing, so only the others are ranked. ``depth`` limits the ranks computed
        (None: all, as NRBP needs).

        The greedy choice at a rank depends on every earlier one, so this loops over
        rank positions (at most the largest number of relevant documents of a query),
        each step vectorised over all queries; queries run out of candidates in order,
        so each step works on a shrinking prefix of the arrays.
        """
        key = (depth,)
        cache = self.__dict__.setdefault("_ideal", {})
        if key in cache:
            return cache[key]
        n_q = self.lists.n_queries
        q, doc, cell = self._rel_judgments
        # Candidates: (query, doc) with a relevant intent; queries ordered by their
        # number of candidates (descending) so the live ones are always a prefix.
        # Judged documents are numbered in (query, doc id) order, so candidates sort so too.
        cand, first, pair_cand = np.unique(doc, return_index=True, return_inverse=True)
        cand_query = q[first]
        n_cand = np.bincount(cand_query, minlength=n_q)
        q_order = np.argsort(-n_cand, kind="stable")
        q_pos = np.empty(n_q, dtype=np.int64)
        q_pos[q_order] = np.arange(n_q)
        # Candidate rows ordered by (query position, doc ascending).
        row_order = np.lexsort((cand, q_pos[cand_query]))
        row_of_cand = np.empty_like(row_order)
        row_of_cand[row_order] = np.arange(len(row_order))
        pair_row = row_of_cand[pair_cand]
        cell_index = np.searchsorted(self.cells, cell)
        # Pairs ordered by (row, intent): gains added in intent order per candidate.
        p_order = np.lexsort((cell_index, pair_row))
        pair_row, pair_cellidx = pair_row[p_order], cell_index[p_order]
        sorted_counts = n_cand[q_order]
        row_starts = np.concatenate(([0], np.cumsum(sorted_counts))).astype(np.int64)
        pair_starts = np.searchsorted(pair_row, np.arange(len(row_order) + 1))
        steps = int(sorted_counts.max(initial=0))
        if depth is not None:
            steps = min(steps, depth)
        out = np.zeros((n_q, max(steps, 0)))
        cell_gain = np.ones(len(self.cells))
        taken = np.zeros(len(row_order), dtype=bool)
        factor = 1.0 - self.alpha
        live = n_q
        for t in range(steps):
            while live and sorted_counts[live - 1] <= t:
                live -= 1
            n_rows = int(row_starts[live])
            n_pairs = int(pair_starts[n_rows])
            score = np.bincount(pair_row[:n_pairs], weights=cell_gain[pair_cellidx[:n_pairs]],
                                minlength=n_rows)
            score[taken[:n_rows]] = -1.0  # gains are >= 0, so a taken row never wins
            starts = row_starts[:live]
            best = np.maximum.reduceat(score, starts)
            lens = np.diff(row_starts[:live + 1])
            at_best = score == np.repeat(best, lens)
            # Ties go to the greatest doc id: the last best row of each query.
            pick = np.maximum.reduceat(np.where(at_best, np.arange(n_rows), -1), starts)
            out[q_order[:live], t] = best
            taken[pick] = True
            lo, hi = pair_starts[pick], pair_starts[pick + 1]
            picked_pairs = np.repeat(lo, hi - lo) + sg.ranks(
                np.concatenate(([0], np.cumsum(hi - lo)))) - 1
            cell_gain[pair_cellidx[picked_pairs]] *= factor
        cache[key] = out
        return out


def _count_before(sorted_keys: np.ndarray) -> np.ndarray:
    """For keys sorted into groups: how many earlier rows share each row's key."""
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.ones(n, dtype=bool)
    start[1:] = sorted_keys[1:] != sorted_keys[:-1]
    first = np.flatnonzero(start)
    return np.arange(n) - np.repeat(first, np.diff(np.append(first, n)))
