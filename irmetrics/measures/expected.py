"""Expected values over random orders of tied documents (``ties="expected"``).

One kernel per measure that has an exact closed form (see
:mod:`irmetrics.engine.ties` for the formulas). A kernel is called as
``kernel(ctx, params, depth)`` on rankings that were *not* cut at ``max_docs``:
``depth`` (per query: ``min(n, max_docs)``) is where the cut falls, so a tie group
straddling it contributes the expectation over which of its documents land above.
Measures that do not read the order (``num_rel``, ``ideal_dcg``, ...) keep their
ordinary kernel.
"""

from __future__ import annotations

import numpy as np

from ..checks import parameter_error
from ..engine import segments as sg
from ..engine.gains import log2_discount
from ..engine.ties import (expected_hits_at, expected_precision_terms,
                           expected_reciprocal_first_hit, prob_no_hit_in_top, tie_groups)
from ..engine.ranked import NOT_IN_POOL
from ..exceptions import ParameterError
from .context import columns, safe_div
from .dcg import (gains_for, ideal_dcg_values, ideal_gains_for, ideal_sequence, label_gain,
                  running_ideal_of)
from .gdeval import exp_dcg_running, gdeval_labels
from .ranx import burges_running
from .user_model import FIXED_MODELS, fixed_utility

#: Measures whose value does not depend on the order of the ranking nor its length.
ORDER_FREE = frozenset({"runid", "num_q", "num_rel", "ideal_dcg"})

EXPECTED_KERNELS: dict = {}


def expected(name: str):
    """Register the decorated ``kernel(ctx, params, depth)`` as the expected-value
    kernel of ``name``, called as ``(ctx, params, max_docs)``."""
    def register(kernel):
        def with_depth(ctx, params, max_docs):
            n = ctx.view.num_ret
            return kernel(ctx, params, n if max_docs is None else np.minimum(n, max_docs))
        EXPECTED_KERNELS[name] = with_depth
        return kernel
    return register


def accepted_names() -> list[str]:
    """trec_eval names of the measures ``ties="expected"`` accepts, sorted."""
    return sorted(ORDER_FREE | set(EXPECTED_KERNELS))


def _groups(ctx):
    v = ctx.view
    if "tie_groups" not in v.cache:
        v.cache["tie_groups"] = tie_groups(ctx.lists, ctx.judged_only)
    return v.cache["tie_groups"]


def _terms(ctx, name, per_entry):
    """Cached per-entry expectation ``name``: ``(entries where it is not 0, values)``."""
    v = ctx.view
    key = ("expected", name)
    if key not in v.cache:
        values = per_entry()
        at = np.flatnonzero(values)  # most entries contribute nothing (non-relevant)
        v.cache[key] = (at, values[at])
    return v.cache[key]


def _at(ctx, name, per_entry, k, depth):
    """Sum of a per-entry expectation over ranks ``<= min(k, depth)``, per query,
    added in rank order."""
    v = ctx.view
    at, values = _terms(ctx, name, per_entry)
    seg = v.seg[at]
    within = v.rank[at] <= np.minimum(k, depth)[seg]  # depth: one per query
    return sg.seg_sum(values[within], seg[within], v.n_queries)


def _hits(ctx, k, depth):
    """``E[relat(min(k, depth))]``."""
    v = ctx.view
    return _at(ctx, "hits", lambda: expected_hits_at(_groups(ctx), v.is_rel), k, depth)


@expected("P")
def precision(ctx, cutoffs, depth):
    return columns(*(_hits(ctx, k, depth) / k for k in cutoffs))


@expected("recall")
def recall(ctx, cutoffs, depth):
    return columns(*(safe_div(_hits(ctx, k, depth), ctx.view.num_rel) for k in cutoffs))


@expected("relative_P")
def relative_precision(ctx, cutoffs, depth):
    v = ctx.view
    return columns(*(safe_div(_hits(ctx, k, depth), np.minimum(k, v.num_rel))
                     for k in cutoffs))


@expected("Rprec")
def r_precision(ctx, params, depth):
    v = ctx.view
    return columns(safe_div(_hits(ctx, np.minimum(depth, v.num_rel), depth), v.num_rel))


@expected("success")
def success(ctx, cutoffs, depth):
    v = ctx.view
    return columns(*(1.0 - prob_no_hit_in_top(_groups(ctx), v.is_rel,
                                              np.minimum(np.minimum(k, depth), v.num_ret))
                     for k in cutoffs))


@expected("num_ret")
def num_ret(ctx, params, depth):
    return columns(np.minimum(depth, ctx.view.num_ret))


def _rel_ret(ctx, depth):
    """``E[num_rel_ret]`` in the top ``depth``: judged relevant documents."""
    v = ctx.view
    judged_rel = lambda: expected_hits_at(_groups(ctx), (v.code >= 0) & v.is_rel)  # noqa: E731
    return _at(ctx, "judged_hits", judged_rel, depth, depth)


@expected("num_rel_ret")
def num_rel_ret(ctx, params, depth):
    return columns(_rel_ret(ctx, depth))


# The set measures are linear in num_rel_ret once the set size n = depth is fixed.

@expected("set_P")
def set_precision(ctx, params, depth):
    return columns(safe_div(_rel_ret(ctx, depth), depth))


@expected("set_relative_P")
def set_relative_precision(ctx, params, depth):
    return columns(safe_div(_rel_ret(ctx, depth), np.minimum(depth, ctx.view.num_rel)))


@expected("set_recall")
def set_recall(ctx, params, depth):
    return columns(safe_div(_rel_ret(ctx, depth), ctx.view.num_rel))


@expected("set_F")
def set_f_measure(ctx, params, depth):
    # (x + 1) P Rc / (x P + Rc) = (x + 1) a / (x R + n) for a > 0, and 0 = 0 for a = 0
    x = params[0]
    return columns(safe_div((x + 1.0) * _rel_ret(ctx, depth), x * ctx.view.num_rel + depth))


def _judged(ctx, k, depth):
    """``E[#judged documents in the top min(k, depth)]`` (negative labels are judged)."""
    v = ctx.view
    return _at(ctx, "judged", lambda: expected_hits_at(_groups(ctx), v.code != NOT_IN_POOL),
               k, depth)


@expected("judged_cut")
def judged_at_cutoffs(ctx, cutoffs, depth):
    return columns(*(safe_div(_judged(ctx, k, depth), np.minimum(k, depth)) for k in cutoffs))


@expected("judged")
def judged_whole_ranking(ctx, params, depth):
    return columns(safe_div(_judged(ctx, depth, depth), depth))


@expected("recip_rank")
def reciprocal_rank(ctx, params, depth):
    return columns(expected_reciprocal_first_hit(_groups(ctx), ctx.view.is_rel, depth))


@expected("recip_rank_cut")
def reciprocal_rank_at_cutoffs(ctx, cutoffs, depth):
    v = ctx.view
    if v.level < 0:
        raise ParameterError(f"`rel` of RR@k must be >= 0; got {v.level!r}.")
    hit = v.is_rel & (v.code >= 0)
    return columns(*(expected_reciprocal_first_hit(_groups(ctx), hit, np.minimum(k, depth))
                     for k in cutoffs))


def _precision_sum(ctx, k, depth):
    v = ctx.view
    terms = lambda: expected_precision_terms(_groups(ctx), v.is_rel, v.rank)  # noqa: E731
    return _at(ctx, "precision_sum", terms, k, depth)


@expected("map")
def average_precision(ctx, params, depth):
    return columns(safe_div(_precision_sum(ctx, depth, depth), ctx.view.num_rel))


@expected("map_cut")
def average_precision_at_cutoffs(ctx, cutoffs, depth):
    return columns(*(safe_div(_precision_sum(ctx, k, depth), ctx.view.num_rel)
                     for k in cutoffs))


def _dcg(ctx, name, entry_gain, k, depth):
    """``E[DCG@min(k, depth)]``: each place gets its tie group's mean gain."""
    v = ctx.view
    terms = lambda: _groups(ctx).mean(entry_gain()) / log2_discount(v.rank)  # noqa: E731
    return _at(ctx, name, terms, k, depth)


@expected("dcg")
def discounted_cumulative_gain(ctx, pairs, depth):
    v = ctx.view
    return columns(_dcg(ctx, ("dcg", tuple(pairs)), lambda: gains_for(v, pairs).entry_gain,
                        depth, depth))


@expected("ndcg")
def ndcg(ctx, pairs, depth):
    v = ctx.view
    dcg = _dcg(ctx, ("dcg", tuple(pairs)), lambda: gains_for(v, pairs).entry_gain,
               depth, depth)
    return columns(safe_div(dcg, ideal_dcg_values(v, gains_for(v, pairs))))


@expected("ndcg_cut")
def ndcg_at_cutoffs(ctx, cutoffs, depth):
    v = ctx.view
    if ctx.options.get("gains"):
        raise parameter_error("measures", "nDCG@k without gains= under ties='expected'",
                              ctx.options["gains"])
    g = ideal_gains_for(v)
    ideal, ideal_offsets = running_ideal_of(g), g.ideal_offsets
    out = []
    for k in cutoffs:
        dcg = _dcg(ctx, "label_dcg", lambda: label_gain(v.code), k, depth)
        idcg = sg.at_rank(ideal, ideal_offsets, k, fill=0.0)
        out.append(np.where(idcg > 0, safe_div(dcg, idcg), dcg))
    return columns(*out)


def _expected_exp_ndcg(ctx, cutoffs, depth, name, labels, running_of, discount):
    """``E[DCG@k] / IDCG@k`` with exponential gains ``2^g - 1`` of ``labels`` (per entry)
    and ``discount(rank)``: each place gets its tie group's mean gain; the ideal is the
    query's positive labels descending (``running_of`` over them), 0 when none."""
    v = ctx.view
    with np.errstate(over="ignore"):  # a huge label's gain is inf, as without ties
        gain = np.exp2(labels.astype(np.float64)) - 1.0
    terms = lambda: _groups(ctx).mean(gain) / discount(v.rank)  # noqa: E731
    ideal_offsets, ideal = running_of(*ideal_sequence(v), max(cutoffs))
    return columns(*(safe_div(_at(ctx, name, terms, k, depth),
                              sg.at_rank(ideal, ideal_offsets, k, fill=0.0))
                     for k in cutoffs))


@expected("ndcg_exp_cut")
def ndcg_exponential_at_cutoffs(ctx, cutoffs, depth):
    _, labels = gdeval_labels(ctx)  # gdeval's labels, refusing those above 4
    return _expected_exp_ndcg(ctx, cutoffs, depth, "gdeval_dcg", labels, exp_dcg_running,
                              lambda rank: np.log(rank + 1.0))


def _burges(ctx, cutoffs, depth):
    labels = np.where(ctx.view.code > 0, ctx.view.code, 0)
    return _expected_exp_ndcg(ctx, cutoffs, depth, "burges_dcg", labels, burges_running,
                              log2_discount)


@expected("ndcg_burges_cut")
def ndcg_burges_at_cutoffs(ctx, cutoffs, depth):
    return _burges(ctx, cutoffs, depth)


@expected("ndcg_burges")
def ndcg_burges(ctx, params, depth):
    return _burges(ctx, (np.iinfo(np.int64).max,), depth)


def _fixed_user_model(name: str) -> None:
    """The expected-value kernel of a C/W/L measure whose continuation does not depend on
    the gains: its value is linear in them, so each place gets its tie group's mean gain
    (and none below the cut at ``max_docs``)."""
    @expected(name)
    def kernel(ctx, params, depth):
        c, gain = FIXED_MODELS[name](ctx, params)
        v = ctx.view
        mean = np.where(v.rank <= depth[v.seg], _groups(ctx).mean(gain), 0.0)
        return columns(fixed_utility(ctx, c, mean, name=name))


for _name in FIXED_MODELS:
    _fixed_user_model(_name)
