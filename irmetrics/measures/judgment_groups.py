"""Measures averaged over judgment groups (trec_eval ``-R qrels_jg``; nickname ``qrels_jg``).

Each judgment group (JG) of a query is a separate set of qrels for the same ranking
(for instance one per assessor). A ``*_avgjg`` measure computes its standard
counterpart per JG, exactly as for qrels (relevance level, ``judged_only`` and
``max_docs`` apply per JG; a document judged in one JG only is unjudged in the
others), then adds the JG values in JG order and divides by the number of JGs when
there is more than one (docs/reference/trec_eval.md §8.2). Not available in pytrec_eval.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..engine.ranked import View
from .average_precision import precision_sum
from .context import columns, safe_div
from .params import DoubleCutoffs, LongCutoffs
from .precision import STANDARD_CUTOFFS
from .registry import measure
from .rel_format import QRELS_JG

if TYPE_CHECKING:  # (annotations only: the engine, with engine.prefs, loads with a jg run)
    from ..engine.judgment_groups import JudgmentGroupLists

_JG = (QRELS_JG,)

#: Default multiples of R of Rprec_mult and Rprec_mult_avgjg.
R_MULTIPLIERS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


@dataclass
class JudgmentGroupContext:
    """Kernel input for ``*_avgjg`` measures: per-JG rankings plus the request options.

    ``view`` is the standard :class:`~irmetrics.engine.ranked.View` with one segment
    per JG; :meth:`average` folds per-JG values into per-query values.
    """

    groups: JudgmentGroupLists
    relevance_level: int = 1
    judged_only: bool = False

    @property
    def n_queries(self) -> int:
        return self.groups.n_queries

    @cached_property
    def view(self) -> View:
        return self.groups.lists.view(self.relevance_level, self.judged_only)

    def average(self, per_jg: np.ndarray) -> np.ndarray:
        return self.groups.average(per_jg)


def precision_at_r_multiples(view: View, multipliers) -> list[np.ndarray]:
    """trec_eval's precision at ``c = trunc(x * R + 0.9)`` for each multiplier x.

    ``c <= 0`` gives 0; ``c > n`` gives ``num_rel_ret / c``; otherwise the relevant
    documents in the top c over c, plain (not interpolated) precision. trec_eval walks
    the ranking upwards from the end, counting down from num_rel_ret; that count is
    ``relat(c)`` except under ``relevance_level < 0`` (unjudged docs relevant), which
    is reproduced, including the walk stopping at a count of 0.
    """
    n = view.num_ret
    r = view.num_rel.astype(np.float64)
    rel_ret = view.num_rel_ret
    out = []
    for x in multipliers:
        c = np.trunc(x * r + 0.9).astype(np.int64)
        count_at_c = rel_ret - view.relat(n) + view.relat(np.maximum(c, 0))
        inside = np.maximum(count_at_c, 0) / np.maximum(c, 1)
        beyond = rel_ret / np.maximum(c, 1)
        out.append(np.where(c <= 0, 0.0, np.where(c > n, beyond, inside)))
    return out


@measure("map_avgjg", order=51, groups="J", pytrec_eval=False, rel_formats=_JG)
def map_avgjg(ctx, params):
    """Average precision per judgment group, averaged over the query's JGs.

    Per JG ``AP = (sum_{i: rel(i)} relat(i) / i) / R`` with that JG's judgments (0 when
    nothing relevant is retrieved); the query value is the JG mean. With a single JG
    it equals ``map``, except that trec_eval divides by ``R`` whenever something
    relevant was retrieved: a JG with ``R = 0`` (only negative labels, under a
    relevance level ``<= 0`` that counts unjudged documents as relevant) gives
    ``inf``, and so does the query's mean, as in trec_eval 10.

    Examples
    --------
    >>> import irmetrics as irm
    >>> jg = irm.JudgmentGroups.from_records([("q", "u1", "a", 1), ("q", "u2", "b", 1)])
    >>> res = irm.evaluate_jg(jg, {"q": {"a": 2.0, "b": 1.0}}, ["map_avgjg"])
    >>> res.aggregate()["map_avgjg"]   # u1: 1/1, u2: (1/2)/1
    0.75
    """
    v = ctx.view
    s = precision_sum(v)
    # trec_eval (m_map_avgjg.c) tests "relevant retrieved", not R, before dividing by R
    ap = np.where((v.num_rel == 0) & (s > 0), np.inf, safe_div(s, v.num_rel))
    return columns(ctx.average(ap))


@measure("P_avgjg", order=52, params=LongCutoffs(STANDARD_CUTOFFS), groups="J",
         pytrec_eval=False, rel_formats=_JG)
def precision_avgjg(ctx, cutoffs):
    """Precision at cutoff k per judgment group, averaged over the query's JGs.

    Per JG ``P@k = relat(k) / k`` (positions beyond the ranking are non-relevant).
    Names ``P_avgjg_<k>``; default cutoffs 5, 10, 15, 20, 30, 100, 200, 500, 1000.
    """
    v = ctx.view
    return columns(*(ctx.average(v.relat(k) / k) for k in cutoffs))


@measure("Rprec_mult_avgjg", order=53, params=DoubleCutoffs(R_MULTIPLIERS), groups="J",
         pytrec_eval=False, rel_formats=_JG)
def r_precision_multiples_avgjg(ctx, multipliers):
    """Precision at multiples of R per judgment group, averaged over the query's JGs.

    Per JG, R is that JG's number of relevant documents and the cutoff is
    ``c = trunc(x * R + 0.9)``; see :func:`precision_at_r_multiples`. Names
    ``Rprec_mult_avgjg_<x:%3.2f>``; default multipliers 0.2, 0.4, ..., 2.0.
    """
    return columns(*(ctx.average(v) for v in precision_at_r_multiples(ctx.view, multipliers)))
