"""Evaluation from trec_eval's other judgment formats: preferences and judgment groups.

Two entry points rather than a ``rel_format=`` switch on :func:`irmetrics.evaluate`,
because each format takes different judgments and different options (preferences
have no relevance level or judged-only mode). Both return the same
:class:`~irmetrics.results.Results` as :func:`irmetrics.evaluate`.
"""

from __future__ import annotations

import polars as pl

from ..checks import check_bool, check_int
from ..engine.judgment_groups import pack_judgment_groups
from ..engine.prefs import pack_prefs
from ..engine.ranked import sorted_query_ids
from ..evaluate import coerce_input, as_run
from ..io.prefs import JudgmentGroups, Prefs, read_prefs, read_qrels_jg
from ..measures.judgment_groups import JudgmentGroupContext
from ..measures.parse import parse_measures
from ..measures.prefs import PrefsContext
from ..measures.rel_format import PREFS, QRELS_JG, check_rel_format
from ..results import Results, report_query_set


def as_prefs(prefs) -> Prefs:
    """Accept Prefs, a path to a ``prefs`` file, or a DataFrame."""
    return coerce_input(prefs, Prefs, "prefs", read_prefs)


def as_judgment_groups(jg) -> JudgmentGroups:
    """Accept JudgmentGroups, a path to a ``qrels_jg`` file, or a DataFrame."""
    return coerce_input(jg, JudgmentGroups, "jg", read_qrels_jg)


def _results(requests, context_for, query_ids, run_name, *, judged: pl.Series,
             run_ids: pl.Series, complete: bool) -> Results:
    """Results of ``requests``; skipped (``judged`` but not evaluated) and ignored (run
    only) queries are reported as :func:`irmetrics.evaluate` reports them."""
    columns, specs = {}, {}
    for req in requests:
        block = req.measure.kernel(context_for(req), req.params)
        for j, name in enumerate(req.output_names):
            columns[name] = block[:, j]
            specs[name] = req.measure
    judged_ids = judged.unique().to_list()
    missing = [] if complete else set(judged_ids) - set(query_ids.tolist())
    results = Results(query_ids, columns, specs, run_name=run_name,
                      missing_query_ids=sorted_query_ids(missing),
                      ignored_query_ids=sorted_query_ids(set(run_ids.unique().to_list())
                                                         - set(judged_ids)))
    return report_query_set(results, stacklevel=3)


def evaluate_prefs(prefs, run, measures, *, max_docs=None, complete=False) -> Results:
    """Evaluate a run against preference judgments (trec_eval ``-R prefs``/``qrels_prefs``).

    Parameters
    ----------
    prefs : Prefs, path or DataFrame
        Preference lines ``query_id, jg, jsg, doc_id, rel_level``; a path is read with
        :func:`~irmetrics.io.read_prefs` (use :func:`~irmetrics.io.read_qrels_prefs`
        for a qrels-shaped file).
    run : Run, path, dict or DataFrame
        Ranked by score descending, ties by doc id **ascending** (trec_eval's rule for
        preferences, the reverse of qrels).
    measures : str or list of str
        ``prefs_*`` measures, ``runid``, ``num_q`` or the nicknames ``all_prefs`` and
        ``prefs``. Standard qrels measures raise :class:`ParameterError`.
    max_docs : int, optional
        Evaluate only the top ``max_docs`` documents of each ranking (``-M``).
    complete : bool, default False
        Evaluate every prefs query; queries absent from the run score on trec_eval's
        one-document placeholder ranking (``-c``). Otherwise queries in both are
        evaluated.

    Returns
    -------
    Results

    Raises
    ------
    InputFormatError
        Inconsistent preferences, as trec_eval (which aborts): a preference cycle
        inside a judgment group, a doc at two levels of one sub-group in a
        single-sub-group JG, a doc with level 0 after a level > 0 (or the reverse)
        in a multi-sub-group JG; prefs_avgjg_Rnonrel* where trec_eval reads past its
        buffer.
    DuplicateEntryError
        A doc retrieved twice within the evaluated top ``max_docs`` of a query.

    Examples
    --------
    >>> import irmetrics as irm
    >>> prefs = irm.Prefs.from_records([("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0)])
    >>> res = irm.evaluate_prefs(prefs, {"q": {"a": 1.0, "b": 1.0}}, ["prefs_simp"])
    >>> res.aggregate()["prefs_simp"]   # tie broken by doc id ascending: a above b
    1.0
    """
    prefs = as_prefs(prefs)
    present = list(run) if isinstance(run, dict) else None  # {qid: {}}: an empty ranking
    run = as_run(run)
    if max_docs is not None:
        check_int("max_docs", max_docs, min=0)
    requests = parse_measures(measures)
    check_rel_format(requests, PREFS)
    lists = pack_prefs(prefs.df, run.df, max_docs=max_docs,
                       complete=check_bool("complete", complete),
                       run_query_ids=present,
                       run_name=run.name)
    needs = frozenset(n for r in requests for n in r.measure.extra.get("needs", ()))
    ctx = PrefsContext(lists, needs)
    return _results(requests, lambda req: ctx, lists.query_ids, run.name,
                    judged=prefs.df["query_id"], run_ids=_run_query_ids(run, present),
                    complete=bool(complete))


def evaluate_jg(jg, run, measures, *, relevance_level=1, judged_only=False, max_docs=None,
                complete=False) -> Results:
    """Evaluate a run against judgment groups (trec_eval ``-R qrels_jg``).

    Each judgment group is a separate set of qrels; ``map_avgjg``, ``P_avgjg`` and
    ``Rprec_mult_avgjg`` compute map, P and Rprec_mult per group and average the
    groups of each query (a single group gives the standard value).

    Parameters
    ----------
    jg : JudgmentGroups, path or DataFrame
        ``query_id, jg, doc_id, relevance``; a path is read with
        :func:`~irmetrics.io.read_qrels_jg`.
    run : Run, path, dict or DataFrame
        Ranked as for qrels: score descending, ties by doc id descending.
    measures : str or list of str
        ``map_avgjg``, ``P_avgjg[.k,...]``, ``Rprec_mult_avgjg[.x,...]``, ``runid``,
        ``num_q`` or the nickname ``qrels_jg``.
    relevance_level, judged_only, max_docs, complete
        As for :func:`irmetrics.evaluate`, applied per judgment group.

    Returns
    -------
    Results

    Examples
    --------
    >>> import irmetrics as irm
    >>> jg = irm.JudgmentGroups.from_records([("q", "u1", "a", 1), ("q", "u2", "b", 1)])
    >>> res = irm.evaluate_jg(jg, {"q": {"a": 2.0, "b": 1.0}}, ["P_avgjg.1"])
    >>> res.aggregate()["P_avgjg_1"]   # u1: 1, u2: 0
    0.5
    """
    jg = as_judgment_groups(jg)
    present = list(run) if isinstance(run, dict) else None  # {qid: {}}: an empty ranking
    run = as_run(run)
    relevance_level = check_int("relevance_level", relevance_level)
    judged_only = check_bool("judged_only", judged_only)
    if max_docs is not None:
        check_int("max_docs", max_docs, min=0)
    requests = parse_measures(measures)
    check_rel_format(requests, QRELS_JG)
    groups = pack_judgment_groups(jg.df, run.df, max_docs=max_docs,
                                  complete=check_bool("complete", complete),
                                  run_name=run.name, run_query_ids=present)
    contexts: dict = {}

    def context_for(req):
        level = relevance_level if req.relevance_level is None else req.relevance_level
        if level not in contexts:
            contexts[level] = JudgmentGroupContext(groups, level, bool(judged_only))
        return contexts[level]

    return _results(requests, context_for, groups.query_ids, run.name,
                    judged=jg.df["query_id"], run_ids=_run_query_ids(run, present),
                    complete=bool(complete))


def _run_query_ids(run, present) -> pl.Series:
    """The run's query ids, those of empty rankings (``present``) included."""
    ids = run.df["query_id"]
    return ids if present is None else pl.concat([ids, pl.Series([str(q) for q in present],
                                                                 dtype=pl.String)])
