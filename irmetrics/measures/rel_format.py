"""Which judgment format (trec_eval ``-R``) each measure reads.

trec_eval computes a measure only from the rel_info format it was written for; any
other combination fails with a format mismatch. A measure declares its formats with
``@measure(..., rel_formats=(...))``; the default is standard qrels.
"""

from __future__ import annotations

from ..exceptions import ParameterError

QRELS, QRELS_JG, PREFS = "qrels", "qrels_jg", "prefs"

#: Intent-aware qrels (not a trec_eval format: ndeval's; :mod:`irmetrics.measures.diversity`).
DIVERSITY = "diversity"

#: nuggetizer's nugget files and assignments (:mod:`irmetrics.measures.nuggets`).
NUGGETS = "nuggets"

#: For measures that never look at judgments (runid, num_q).
ALL_REL_FORMATS = (QRELS, QRELS_JG, PREFS, DIVERSITY, NUGGETS)

#: The nickname that selects every measure of a format, for error hints.
_GROUP_OF_FORMAT = {QRELS: "official or all_trec", QRELS_JG: "qrels_jg", PREFS: "all_prefs",
                    DIVERSITY: "alpha_DCG@k, alpha_nDCG@k, ERR_IA@k, nERR_IA@k, NRBP, nNRBP,"
                    " AP_IA, P_IA@k, StRecall@k (irmetrics.evaluate_diversity)",
                    NUGGETS: "nugget_strict_vital, nugget_strict_all, nugget_vital, nugget_all,"
                    " nugget_weighted_recall (irmetrics.evaluate_nuggets)"}


def rel_formats_of(measure_def) -> tuple:
    """Judgment formats a measure can be computed from."""
    return tuple(measure_def.extra.get("rel_formats", (QRELS,)))


def check_rel_format(requests, rel_format: str) -> None:
    """Raise :class:`ParameterError` if a request cannot be computed from ``rel_format``.

    Examples
    --------
    >>> from irmetrics.measures.parse import parse_measures
    >>> check_rel_format(parse_measures(["map"]), "qrels")
    >>> check_rel_format(parse_measures(["map"]), "prefs")
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: measure 'map' cannot be computed from prefs judgments; it needs qrels (trec_eval: format mismatch). Measures for prefs judgments: all_prefs.
    """
    wrong = [r.measure.name for r in requests if rel_format not in rel_formats_of(r.measure)]
    if wrong:
        names = ", ".join(repr(n) for n in dict.fromkeys(wrong))
        needed = sorted({f for r in requests if r.measure.name in wrong
                         for f in rel_formats_of(r.measure)})
        hint = (" Evaluate them with irmetrics.evaluate_diversity (CLI: -R diversity)."
                if DIVERSITY in needed else
                " Evaluate them with irmetrics.evaluate_nuggets on a nugget file and"
                " assignments (CLI: -R nuggets)." if NUGGETS in needed else "")
        raise ParameterError(
            f"measure {names} cannot be computed from {rel_format} judgments; it needs"
            f" {' or '.join(needed)} (trec_eval: format mismatch). Measures for"
            f" {rel_format} judgments: {_GROUP_OF_FORMAT[rel_format]}.{hint}")
