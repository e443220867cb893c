"""Preference measures (trec_eval ``-R prefs`` / ``-R qrels_prefs``; nickname ``all_prefs``).

Notation (docs/reference/trec_eval.md §8.3), per judgment group (JG), each preference "a over b" between
judged documents classified by where a and b were ranked:

* ``ful_ret``: fulfilled (a above b), both retrieved;
* ``ful_imp``: fulfilled by implication (a retrieved, b not);
* ``poss_ret``, ``poss_imp``: possible in the same areas, *including* the fulfilled
  ones (``poss_imp`` adds "b retrieved, a not");
* ``no``: neither retrieved (never fulfilled).

The ``_ret`` variants count only preferences between two retrieved documents, the
``_imp`` variants ignore preferences with neither retrieved. Judgment-group averages
(``*_avgjg*``) weigh every JG equally; the others pool all preferences of the query.
Levels of ``relevance_level`` and ``judged_only`` do not apply. None of these measures
is available in pytrec_eval.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from .context import columns, safe_div
from .registry import LONG, SUM, measure
from .rel_format import PREFS

if TYPE_CHECKING:  # (annotations only: the engine loads with the first preference run)
    from ..engine.prefs import PrefLists, PrefStatistics

_PREFS = (PREFS,)


@dataclass
class PrefsContext:
    """Kernel input for preference measures.

    ``needs`` holds the optional statistics the requested measures declared
    (``"pairs"``, ``"rnonrel"``), so one counting pass serves them all.
    """

    prefs: PrefLists
    needs: frozenset = frozenset()

    @property
    def n_queries(self) -> int:
        return self.prefs.n_queries

    @cached_property
    def stats(self) -> PrefStatistics:
        return self.prefs.statistics(pairs="pairs" in self.needs,
                                     rnonrel="rnonrel" in self.needs)

    @cached_property
    def _jg_query(self) -> np.ndarray:
        return self.prefs.jg_query

    def jg_sum(self, per_jg) -> np.ndarray:
        """Per-query sum over JGs, added in JG order (NaN propagates, as in C)."""
        return np.bincount(self._jg_query, weights=np.asarray(per_jg, dtype=np.float64),
                           minlength=self.n_queries)

    def jg_average(self, per_jg) -> np.ndarray:
        """trec_eval's JG average: ``sum / n_jgs`` if the sum is > 0, else 0."""
        total = self.jg_sum(per_jg)
        n = np.diff(self.prefs.jg_offsets)
        return np.where(total > 0, total / np.maximum(n, 1), 0.0)


def _full(s: PrefStatistics):
    """Fulfilled and possible preferences over all areas."""
    return s.ful_ret + s.ful_imp, s.poss_ret + s.poss_imp + s.notoccur


def _implied(s: PrefStatistics):
    """Fulfilled and possible preferences with at least one document retrieved."""
    return s.ful_ret + s.ful_imp, s.poss_ret + s.poss_imp


def _retrieved(s: PrefStatistics):
    """Fulfilled and possible preferences with both documents retrieved."""
    return s.ful_ret, s.poss_ret


def _pooled(ctx, area) -> np.ndarray:
    fulfilled, possible = area(ctx.stats)
    return safe_div(ctx.jg_sum(fulfilled), ctx.jg_sum(possible))


def _per_jg(ctx, area) -> np.ndarray:
    fulfilled, possible = area(ctx.stats)
    return ctx.jg_average(safe_div(fulfilled, possible))


@measure("prefs_num_prefs_poss", order=37, printed=LONG, summary=SUM, groups="Pa Pr",
         pytrec_eval=False, rel_formats=_PREFS)
def prefs_num_prefs_poss(ctx, params):
    """Number of possible preferences: ``sum over JGs of poss_ret + poss_imp + no``.

    Every preference of the judgments, whether or not its documents were retrieved.
    Summary: sum over queries.

    Examples
    --------
    >>> import irmetrics as irm
    >>> prefs = irm.Prefs.from_records([("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1),
    ...                                 ("q", "u", "s", "c", 0)])
    >>> res = irm.evaluate_prefs(prefs, {"q": {"b": 3.0, "a": 2.0}}, ["prefs_num_prefs_poss"])
    >>> res.aggregate()["prefs_num_prefs_poss"]   # a>b, a>c, b>c
    3
    """
    return columns(ctx.jg_sum(_full(ctx.stats)[1]))


@measure("prefs_num_prefs_ful", order=38, printed=LONG, summary=SUM, groups="Pa Pr",
         pytrec_eval=False, rel_formats=_PREFS)
def prefs_num_prefs_ful(ctx, params):
    """Number of fulfilled preferences: ``sum over JGs of ful_ret + ful_imp``.

    A preference with only the preferred document retrieved counts as fulfilled.
    Summary: sum over queries.
    """
    return columns(ctx.jg_sum(_full(ctx.stats)[0]))


@measure("prefs_num_prefs_ful_ret", order=39, printed=LONG, summary=SUM, groups="Pa Pr",
         pytrec_eval=False, rel_formats=_PREFS)
def prefs_num_prefs_ful_ret(ctx, params):
    """Number of fulfilled preferences between two retrieved documents: ``sum ful_ret``."""
    return columns(ctx.jg_sum(ctx.stats.ful_ret))


@measure("prefs_simp", order=40, groups="Pa Pr", pytrec_eval=False, rel_formats=_PREFS)
def prefs_simp(ctx, params):
    """Fraction of preferences fulfilled: ``sum(ful_ret + ful_imp) / sum(poss_ret + poss_imp + no)``.

    Sums run over the query's JGs; 0 when there is no preference. Preferences with
    neither document retrieved count as failures.

    Examples
    --------
    >>> import irmetrics as irm
    >>> prefs = irm.Prefs.from_records([("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1),
    ...                                 ("q", "u", "s", "c", 0)])
    >>> res = irm.evaluate_prefs(prefs, {"q": {"b": 3.0, "a": 2.0}}, ["prefs_simp"])
    >>> round(res.aggregate()["prefs_simp"], 4)   # b>c (retrieved over not) and a>c of 3
    0.6667
    """
    return columns(_pooled(ctx, _full))


@measure("prefs_pair", order=41, groups="Pa Pr", pytrec_eval=False, rel_formats=_PREFS,
         needs=("pairs",))
def prefs_pair(ctx, params):
    """Mean over document pairs of the fraction of JGs agreeing with the ranking.

    With ``C[i][j]`` the number of JGs preferring docid i to docid j, each unordered
    pair ``i < j`` (docid ranks: retrieved first, in rank order) with
    ``C[i][j] + C[j][i] > 0`` scores ``C[i][j] / (C[i][j] + C[j][i])`` if at least one
    is retrieved and 0 if neither is; the value is the mean score, 0 without pairs.
    """
    return columns(ctx.stats.pair_values[:, 0])


@measure("prefs_avgjg", order=42, groups="Pa Pr", pytrec_eval=False, rel_formats=_PREFS)
def prefs_avgjg(ctx, params):
    """Fraction of preferences fulfilled per JG, averaged over JGs.

    ``(sum over JGs with poss > 0 of ful / poss) / n_JGs`` with the full counts
    (``ful = ful_ret + ful_imp``, ``poss = poss_ret + poss_imp + no``); 0 when the
    sum is not positive.
    """
    return columns(_per_jg(ctx, _full))


@measure("prefs_avgjg_Rnonrel", order=43, groups="Pa", pytrec_eval=False,
         rel_formats=_PREFS, needs=("rnonrel",))
def prefs_avgjg_rnonrel(ctx, params):
    """prefs_avgjg with the number of non-relevant docs of each JG set to R.

    Per JG with R relevant (level > 0) and N non-relevant documents: if ``R >= N``,
    ``(ful + num_rel_ret (R - N)) / (poss + num_rel (R - N))``; otherwise the
    preferences are recounted keeping only the first R non-relevant documents
    (trec_eval's recount, quirks included: in EC mode the lowest class is also paired
    with its own first R lines). A JG with no preference gives 0/0, which makes the
    query's value 0.
    """
    return columns(ctx.jg_average(ctx.stats.rnonrel_ratio))


@measure("prefs_simp_ret", order=44, groups="Pa", pytrec_eval=False, rel_formats=_PREFS)
def prefs_simp_ret(ctx, params):
    """prefs_simp over preferences between two retrieved documents: ``sum ful_ret / sum poss_ret``."""
    return columns(_pooled(ctx, _retrieved))


@measure("prefs_pair_ret", order=45, groups="Pa", pytrec_eval=False, rel_formats=_PREFS,
         needs=("pairs",))
def prefs_pair_ret(ctx, params):
    """prefs_pair over document pairs with both documents retrieved."""
    return columns(ctx.stats.pair_values[:, 1])


@measure("prefs_avgjg_ret", order=46, groups="Pa", pytrec_eval=False, rel_formats=_PREFS)
def prefs_avgjg_ret(ctx, params):
    """prefs_avgjg with the retrieved counts: mean over JGs of ``ful_ret / poss_ret``."""
    return columns(_per_jg(ctx, _retrieved))


@measure("prefs_avgjg_Rnonrel_ret", order=47, groups="Pa", pytrec_eval=False,
         rel_formats=_PREFS, needs=("rnonrel",))
def prefs_avgjg_rnonrel_ret(ctx, params):
    """prefs_avgjg_Rnonrel over retrieved documents.

    With ``R = num_rel_ret`` and ``N = num_nonrel_ret``: if ``R >= N``,
    ``(ful_ret + num_rel_ret (R - N)) / (poss_ret + num_rel (R - N))`` (the
    denominator uses num_rel, as trec_eval does); otherwise a recount over retrieved
    documents (PA mode still keeps num_rel non-relevant documents).
    """
    return columns(ctx.jg_average(ctx.stats.rnonrel_ret_ratio))


@measure("prefs_simp_imp", order=48, groups="Pa", pytrec_eval=False, rel_formats=_PREFS)
def prefs_simp_imp(ctx, params):
    """prefs_simp ignoring preferences with neither document retrieved."""
    return columns(_pooled(ctx, _implied))


@measure("prefs_pair_imp", order=49, groups="Pa", pytrec_eval=False, rel_formats=_PREFS,
         needs=("pairs",))
def prefs_pair_imp(ctx, params):
    """prefs_pair over document pairs with at least one document retrieved."""
    return columns(ctx.stats.pair_values[:, 2])


@measure("prefs_avgjg_imp", order=50, groups="Pa", pytrec_eval=False, rel_formats=_PREFS)
def prefs_avgjg_imp(ctx, params):
    """prefs_avgjg ignoring preferences with neither document retrieved."""
    return columns(_per_jg(ctx, _implied))
