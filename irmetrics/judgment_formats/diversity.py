"""evaluate_diversity(): a run against intent-aware qrels, for the diversity measures.

A separate entry point rather than qrels sniffing in :func:`irmetrics.evaluate`: intent
qrels have four columns like TREC qrels (whose second column is an ignored iteration),
so the judgments' kind is stated, never guessed (CLI: ``-R diversity``).
"""

from __future__ import annotations

from ..checks import check_bool, check_int
from ..engine.diversity import pack_diversity
from ..evaluate import coerce_input, as_run
from .preferences import _results, _run_query_ids
from ..io.diversity import DiversityQrels, read_diversity_qrels
from ..measures.diversity import DiversityContext
from ..measures.parse import parse_measures
from ..measures.rel_format import DIVERSITY, check_rel_format
from ..results import Results


def as_diversity_qrels(qrels) -> DiversityQrels:
    """Accept DiversityQrels, a path to an intent-aware qrels file, or a DataFrame."""
    return coerce_input(qrels, DiversityQrels, "qrels", read_diversity_qrels)


def evaluate_diversity(qrels, run, measures, *, relevance_level=1, judged_only=False,
                       complete=False) -> Results:
    """Evaluate a run with the diversity measures on intent-aware qrels.

    Parameters
    ----------
    qrels : DiversityQrels, path or DataFrame
        ``query_id, intent, doc_id, relevance`` (ndeval's ``topic subtopic docno
        judgment``; a DataFrame may call the intent column ``iteration``, as
        ir_measures does). A path is read with
        :func:`~irmetrics.io.read_diversity_qrels`.
    run : Run, path, dict or DataFrame
        Ranked by score descending, ties by doc id **ascending** (pyndeval's order).
    measures : str or list of str
        ir_measures spellings: ``alpha_nDCG@20``, ``alpha_nDCG(alpha=0.3)@10``,
        ``alpha_DCG@k``, ``ERR_IA@k``, ``nERR_IA@k``, ``NRBP``, ``nNRBP(alpha=0.5,
        beta=0.8)``, ``AP_IA``, ``P_IA@k``, ``StRecall@k``; ``rel=`` and
        ``judged_only=`` arguments override the keywords below for one measure.
    relevance_level : int, default 1
        Minimum label counted as relevant to an intent.
    judged_only : bool, default False
        Drop documents judged for no intent before ranking.
    complete : bool, default False
        Evaluate every qrels query; a query absent from the run ranks nothing and
        scores 0 (what ir_measures reports for it). Otherwise the queries in both
        are evaluated and the others reported as for :func:`irmetrics.evaluate`.

    Returns
    -------
    Results

    Raises
    ------
    ParameterError
        A measure that needs standard qrels (``map``), or a bad parameter.
    NoQueriesError
        Qrels and run share no query id.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = irm.DiversityQrels.from_records(
    ...     [("q", "1", "a", 1), ("q", "2", "b", 1), ("q", "1", "c", 1)])
    >>> res = irm.evaluate_diversity(qrels, {"q": {"a": 2.0, "c": 1.0, "b": 0.5}},
    ...                              ["StRecall@2", "P_IA@2"])
    >>> res.aggregate()   # top 2 cover intent 1 only; 2 relevant pairs of 2 x 2
    {'P_IA@2': 0.5, 'StRecall@2': 0.5}
    """
    qrels = as_diversity_qrels(qrels)
    present = list(run) if isinstance(run, dict) else None  # {qid: {}}: an empty ranking
    run = as_run(run)
    relevance_level = check_int("relevance_level", relevance_level)
    judged_only = check_bool("judged_only", judged_only)
    complete = check_bool("complete", complete)
    requests = parse_measures(measures)
    check_rel_format(requests, DIVERSITY)
    wanted = {bool(judged_only)} | {r.judged_only for r in requests if r.judged_only is not None}
    packed = {flag: pack_diversity(qrels.df, run.df, judged_only=flag, complete=complete,
                                   run_query_ids=present, run_name=run.name)
              for flag in sorted(wanted)}

    def context_for(req):
        level = relevance_level if req.relevance_level is None else req.relevance_level
        judged = judged_only if req.judged_only is None else req.judged_only
        return DiversityContext(packed, level, judged, dict(req.options))

    return _results(requests, context_for, packed[bool(judged_only)].query_ids, run.name,
                    judged=qrels.df["query_id"], run_ids=_run_query_ids(run, present),
                    complete=complete)
