"""tie_report(): how much of a score depends on how tied documents are ordered."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from ..checks import parameter_error
from ..engine.ranked import NOT_IN_POOL
from ..engine.ties import order_within_ties, tie_groups, truncated
from ..evaluate import Evaluator
from ..measures.dcg import gains_for, label_gain
from ..measures.expected import ORDER_FREE
from ..parallel import map_ordered, resolve_threads
from ..results import report_query_set

#: The four values reported per measure, in column order.
POLICIES = ("trec_eval", "expected", "best", "worst")


@dataclass(frozen=True)
class TieReport:
    """Values of every measure under each way of ordering tied documents.

    Attributes
    ----------
    summary : polars.DataFrame
        One row per output name: ``measure``, ``tied_entries`` (entries in tie groups
        whose documents differ for that measure), then the aggregate under each policy:
        ``trec_eval``, ``expected``, ``best``, ``worst``.
    results : dict of str to Results
        Per-query values under each policy (``"trec_eval"``, ``"expected"``,
        ``"best"``, ``"worst"``).
    """

    summary: pl.DataFrame
    results: dict

    def to_text(self) -> str:
        """The summary as an aligned text table (what ``irmetrics eval --tie-report``
        prints)."""
        head = ("measure", "tied", *POLICIES)
        rows = [head] + [
            (row["measure"], str(row["tied_entries"]),
             *(f"{row[p]:.4f}" for p in POLICIES))
            for row in self.summary.iter_rows(named=True)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        return "\n".join(
            "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                      for i, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in rows) + "\n"


def tie_report(qrels, run, measures, *, relevance_level=1, judged_only=False, max_docs=None,
               complete=False, semantics="trec_eval", relevance="int",
               threads=None) -> TieReport:
    """Each measure under trec_eval's tie order, in expectation, at best and at worst.

    A tie group is a set of documents of one query with equal scores. For every
    measure the report gives its value with trec_eval's order inside tie groups (doc
    id descending), its exact expected value over uniformly random orders
    (``ties="expected"``), and the best and worst values any order can give, with
    the number of tied entries whose order can matter.

    Parameters
    ----------
    qrels, run, measures
        As in :func:`irmetrics.evaluate`; measures must be among those
        ``ties="expected"`` accepts (:func:`irmetrics.measures.expected.accepted_names`).
    relevance_level, judged_only, max_docs, complete, semantics, relevance
        See :class:`irmetrics.Evaluator`.
    threads : int or None
        Threads computing the best and worst orders, a measure per thread at a time,
        and reading a qrels file (the run is read whole: every tie group's order is examined)
        (:func:`irmetrics.parallel.resolve_threads`); the report does not depend on it.

    Returns
    -------
    TieReport

    Notes
    -----
    *Best* puts, inside every tie group, the documents with the larger gain first:
    relevant before non-relevant (``label >= relevance_level``) for the binary
    measures, gains descending for dcg, ndcg and ndcg_cut (whose gains are the
    labels, or the ``ndcg.l=g`` table). *Worst* puts them last. Moving a relevant
    document (or a larger gain) up one place inside a group never lowers precision,
    recall, success, reciprocal rank, AP or DCG at any cutoff, so these orders attain
    the maximum and minimum over all tie orders. ``tied_entries`` counts entries of
    tie groups that mix such documents, among those starting within ``max_docs``.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 0}}
    >>> run = {"q": {"a": 1.0, "b": 1.0}}          # a tie: trec_eval ranks "b" first
    >>> report = irm.tie_report(qrels, run, ["P.1", "recip_rank"])
    >>> report.summary.rows()
    [('recip_rank', 2, 0.5, 0.75, 1.0, 0.5), ('P_1', 2, 0.0, 0.5, 1.0, 0.0)]
    """
    ev = Evaluator(qrels, measures, relevance_level=relevance_level,
                   judged_only=judged_only, max_docs=max_docs, complete=complete,
                   semantics=semantics, ties="expected", relevance=relevance,
                   threads=threads)
    return report_ties(ev, run, stacklevel=3, threads=threads)


def report_ties(ev: Evaluator, run, *, stacklevel: int = 2, threads=None) -> TieReport:
    """:func:`tie_report` of ``run`` with the qrels, measures and options of ``ev``
    (an :class:`~irmetrics.Evaluator` made with ``ties="expected"``), so that several
    runs share one reading of the qrels; ``threads`` as there."""
    threads = resolve_threads(threads)
    if not ev.requests:
        raise parameter_error("measures", "at least one measure name", [])
    run_query_ids = list(run) if isinstance(run, dict) else None
    whole, id_encoding = ev.ranked_lists(run, run_query_ids)  # not cut at max_docs
    results = {"expected": ev.results(whole, *ev.columns(whole, ev.requests, expected=True),
                                      id_encoding)}
    cut = truncated(whole, ev.max_docs)
    results["trec_eval"] = ev.results(cut, *ev.columns(cut, ev.requests, expected=False),
                                      id_encoding)
    report_query_set(results["trec_eval"], stacklevel=stacklevel)

    def bounded(req) -> tuple[dict, dict]:
        """The best and worst columns of one measure, and its tied entries."""
        level = ev.relevance_level if req.relevance_level is None else req.relevance_level
        key = _order_key(whole, req, level)
        columns = {policy: ev.columns(truncated(order_within_ties(
            whole, key, best=policy == "best"), ev.max_docs), [req], expected=False)
            for policy in ("best", "worst")}
        judged_only = ev.judged_only if req.judged_only is None else req.judged_only
        return columns, _tied_entries(whole, key, req, level, judged_only, ev.max_docs)

    # A measure per thread; merged in the measures' order.
    bounds: dict[str, tuple[dict, dict]] = {"best": ({}, {}), "worst": ({}, {})}
    tied = {}
    for columns_of, tied_of in map_ordered(bounded, ev.requests, threads=threads):
        for policy, (columns, specs) in bounds.items():
            more_columns, more_specs = columns_of[policy]
            columns.update(more_columns)
            specs.update(more_specs)
        tied.update(tied_of)
    for policy, (columns, specs) in bounds.items():
        results[policy] = ev.results(whole, columns, specs, id_encoding)
    summaries = {p: results[p].aggregate() for p in POLICIES}
    # Numbers only: runid's summary is the run's name
    names = [n for n in results["trec_eval"].names
             if isinstance(summaries["trec_eval"].get(n), (int, float))]
    summary = pl.DataFrame({
        "measure": names,
        "tied_entries": pl.Series([tied[n] for n in names], dtype=pl.Int64),
        **{p: pl.Series([float(summaries[p][n]) for n in names], dtype=pl.Float64)
           for p in POLICIES},
    })
    return TieReport(summary=summary, results=results)


def _order_key(lists, req, level) -> np.ndarray:
    """What the measure of ``req`` rewards near the top: its gain per entry for the
    DCG family, else relevance at ``level`` (0/1)."""
    name = req.measure.name
    if name in ("dcg", "ndcg", "ideal_dcg"):
        return gains_for(lists.view(level, False), req.params).entry_gain
    if name in _LABEL_GAIN:
        return label_gain(lists.code)
    if name in ("judged", "judged_cut"):
        return (lists.code != NOT_IN_POOL).astype(np.float64)
    return (lists.code >= level).astype(np.float64)


#: Measures whose gain grows with the label (best order: labels descending).
_LABEL_GAIN = frozenset({"ndcg_cut", "ndcg_exp_cut", "ndcg_burges", "ndcg_burges_cut", "SDCG",
                         "INSQ"})


#: Measures reading the number of relevant documents above a cut, not their order.
_COUNT_AT_CUT = frozenset({"P", "recall", "relative_P", "success", "judged_cut"})
#: Measures reading the order above a cut.
_ORDER_TO_CUT = frozenset({"map_cut", "ndcg_cut", "recip_rank_cut", "ndcg_exp_cut",
                           "ndcg_burges_cut"})


def _tied_entries(lists, key, req, level, judged_only, max_docs) -> dict:
    """Per output name of ``req``, the entries of tie groups whose order can change it:
    groups where ``key`` is not constant that hold the cut (measures counting hits
    above a cutoff, num_rel_ret at ``max_docs``, Rprec at R) or start above it
    (measures reading the order: AP, RR, DCG; their cut is ``max_docs``). Measures
    that ignore the order count none. Unjudged entries are dropped first under
    ``judged_only``."""
    name = req.measure.name
    if name in ORDER_FREE or name == "num_ret":
        return dict.fromkeys(req.output_names, 0)
    view = lists.view(level, judged_only)
    if judged_only:
        key = key[lists.code >= 0]
        lists = lists.judged_only()
    groups = tie_groups(lists)
    mixed = groups.mixed(key)
    depth = np.full(lists.n_queries, np.inf if max_docs is None else float(max_docs))
    if name in _COUNT_AT_CUT or name in _ORDER_TO_CUT:
        cuts = [np.minimum(depth, k) for k in req.params]
    elif name == "Rprec":
        cuts = [np.minimum(depth, view.num_rel)]
    else:
        cuts = [depth]
    straddle = name in _COUNT_AT_CUT or name in ("num_rel_ret", "Rprec")
    out = {}
    for output, cut in zip(req.output_names, cuts):
        cut = cut[groups.query]
        counted = mixed & (groups.start_rank < cut)
        if straddle:
            counted &= groups.start_rank + groups.size > cut
        out[output] = int(groups.size[counted].sum())
    return out


def per_query_frame(report: TieReport) -> pl.DataFrame:
    """Long per-query table: ``query_id``, ``measure`` and one column per policy."""
    frames = [report.results[p].per_query().rename({"value": p}) for p in POLICIES]
    out = frames[0]
    for frame in frames[1:]:
        out = out.join(frame, on=["query_id", "measure"], how="left", maintain_order="left")
    return out

