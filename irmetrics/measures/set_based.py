"""Set-based measures: the retrieved list as an unordered set.

utility, set_P, set_relative_P, set_recall, set_map and set_F read only the counts
``n`` (num_ret), ``R`` (num_rel) and ``num_rel_ret``; ranks do not matter.
"""

from __future__ import annotations

import numpy as np

from .context import columns, safe_div
from .params import DoubleParams, Option, with_binary
from .registry import RESET_UNPARAMETERISED, measure


def _counts(view):
    return (view.num_ret.astype(np.float64), view.num_rel.astype(np.float64),
            view.num_rel_ret.astype(np.float64))


@measure("utility", order=18, params=DoubleParams((1.0, -1.0, 0.0, 0.0), count=4),
         groups="T S", complete_reset=RESET_UNPARAMETERISED)
def utility(ctx, coefficients):
    """Linear utility ``p1*a + p2*b + p3*c + p4*d`` (default coefficients ``1,-1,0,0``).

    ``a = num_rel_ret`` (relevant retrieved), ``b = n - a`` (other retrieved, unjudged
    included), ``c = R - a`` (relevant missed), ``d = N + a - n - R`` with ``N`` the
    collection size ``num_docs_in_coll`` (default 0, so d is usually negative). Exactly
    four coefficients are required. Summary: mean. ``complete=True`` resets the
    unparameterised ``utility`` to 0 on placeholder queries (trec_eval's ``-c``).

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "x": 1.0}}, ["utility"])
    >>> res.aggregate()   # 1*1 - 1*1
    {'utility': 0.0}
    """
    p1, p2, p3, p4 = coefficients
    v = ctx.view
    n, r, a = v.num_ret, v.num_rel, v.num_rel_ret
    # Integer counts first, then one double product per term (trec_eval's expression).
    not_retrieved_nonrel = ctx.num_docs_in_coll + a - n - r
    return columns(p1 * a.astype(np.float64) + p2 * (n - a).astype(np.float64)
                   + p3 * (r - a).astype(np.float64)
                   + p4 * not_retrieved_nonrel.astype(np.float64))


@measure("set_P", order=31, groups="T S", friendly="SetP",
         options=with_binary(relative=Option(bool, choices=(False,))),
         aliases={'ir_measures': 'SetP'})
def set_precision(ctx, params):
    """Precision of the retrieved set: ``num_rel_ret / n``, 0 when ``n = 0``.

    Unlike ``P@k`` with ``max_docs=k``, short rankings are not padded.
    """
    n, _, a = _counts(ctx.view)
    return columns(safe_div(a, n))


@measure("set_relative_P", order=32, groups="T S", friendly="SetRelP",
         friendly_aliases=("SetP",),  # ir_measures: SetP(relative=True)
         options=with_binary(relative=Option(bool, choices=(True,))))
def set_relative_precision(ctx, params):
    """``num_rel_ret / min(n, R)``, 0 when either is 0."""
    n, r, a = _counts(ctx.view)
    return columns(safe_div(a, np.minimum(n, r)))


@measure("set_recall", order=33, groups="T S", friendly="SetR",
         aliases={'ir_measures': 'SetR'})
def set_recall(ctx, params):
    """Recall of the retrieved set: ``num_rel_ret / R``, 0 when R = 0."""
    _, r, a = _counts(ctx.view)
    return columns(safe_div(a, r))


@measure("set_map", order=34, groups="T S", friendly="SetAP",
         aliases={'ir_measures': 'SetAP'})
def set_average_precision(ctx, params):
    """Unranked AP, i.e. set precision times set recall: ``num_rel_ret^2 / (n * R)``.

    0 when ``n = 0`` or ``R = 0``.
    """
    n, r, a = _counts(ctx.view)
    return columns(safe_div(a * a, n * r))


@measure("set_F", order=35, params=DoubleParams((1.0,)), groups="T S", friendly="SetF",
         options=with_binary(beta=Option(float, raw=True)),
         aliases={'ir_measures': 'SetF'})
def set_f_measure(ctx, params):
    """F-measure of the retrieved set: ``(x + 1) * P * Rc / (x * P + Rc)``.

    ``P = num_rel_ret / n``, ``Rc = num_rel_ret / R`` and x the (first) parameter,
    default 1.0 (the harmonic mean). 0 when nothing relevant is retrieved. Note that
    x weighs like beta squared in van Rijsbergen's F-beta.

    Examples
    --------
    >>> import irmetrics as irm
    >>> res = irm.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "x": 1.0}}, ["set_F"])
    >>> res.aggregate()   # P = 1/2, Rc = 1/2
    {'set_F': 0.5}
    """
    x = params[0]
    n, r, a = _counts(ctx.view)
    hit = a > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        p = a / n
        rc = a / r
        f = (x + 1.0) * p * rc / (x * p + rc)
    return columns(np.where(hit, f, 0.0))
