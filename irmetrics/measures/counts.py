"""Counting measures: runid, num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret."""

from __future__ import annotations

import numpy as np

from .context import columns
from .params import BINARY_OPTIONS
from .registry import HIDDEN, LONG, NUM_Q, RESET_ALWAYS, RUNID, SUM, measure
from .rel_format import ALL_REL_FORMATS


@measure("runid", order=1, printed=HIDDEN, summary=RUNID, groups="O T S Pa Pr J",
         rel_formats=ALL_REL_FORMATS)
def runid(ctx, params):
    """Run name: the run_id field of the last data line of the run file.

    Printed on the summary line only; per query the value is 0.0 (as pytrec_eval returns).
    """
    return columns(np.zeros(ctx.n_queries))


@measure("num_q", order=2, printed=HIDDEN, summary=NUM_Q, groups="O T S Pa Pr J",
         friendly="NumQ", aliases={'ir_measures': 'NumQ'}, rel_formats=ALL_REL_FORMATS)
def num_q(ctx, params):
    """Number of evaluated queries: 1 per query, summed over queries."""
    return columns(np.ones(ctx.n_queries))


@measure("num_ret", order=3, printed=LONG, summary=SUM, groups="O T S", friendly="NumRet",
         options={"judged_only": BINARY_OPTIONS["judged_only"]},
         complete_reset=RESET_ALWAYS,
         aliases={'ir_measures': 'NumRet'})
def num_ret(ctx, params):
    """Retrieved documents ``n`` after ``max_docs`` and ``judged_only``.

    ``num_ret = n``; unjudged documents count. Summary: sum over queries.
    """
    return columns(ctx.view.num_ret)


@measure("num_rel", order=4, printed=LONG, summary=SUM, groups="O T S", friendly="NumRel",
         aliases={'ir_measures': 'NumRel'})
def num_rel(ctx, params):
    """Relevant documents ``R``: qrels lines with label ``>= relevance_level``.

    Independent of the run. Summary: sum, except under ``complete=True`` where
    trec_eval prints the number of qrels lines with label > 0 over the whole qrels.
    """
    return columns(ctx.view.num_rel)


@measure("num_rel_ret", order=5, printed=LONG, summary=SUM, groups="O T S",
         friendly="NumRelRet", friendly_aliases=("NumRet",),  # ir_measures: NumRet(rel=1)
         aliases={'ir_measures': 'NumRelRet', 'ranx': 'hits'})
def num_rel_ret(ctx, params):
    """Relevant retrieved documents: ranked documents with a judged label ``>= level``."""
    return columns(ctx.view.num_rel_ret)


@measure("num_nonrel_judged_ret", order=36, printed=LONG, summary=SUM, groups="T",
         friendly="NumNonRelJudgedRet")
def num_nonrel_judged_ret(ctx, params):
    """Retrieved documents judged non-relevant: codes in ``[0, level)``."""
    v = ctx.view
    return columns(v.count((v.code >= 0) & ~v.is_rel))
