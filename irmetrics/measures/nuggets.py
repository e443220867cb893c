"""Nugget measures of generated answers: castorini/nuggetizer's scores, per topic.

Source tool: nuggetizer 0.0.5 (``calculate_nugget_scores``). Judgments are a nugget file
(the "qrels" side: each topic's nuggets, ``vital`` or ``okay``) and an assessor's
assignments of those nuggets to one run's answers (the "run" side: ``support``,
``partial_support`` or ``not_support``); evaluate with :func:`irmetrics.evaluate_nuggets`
(CLI: ``-R nuggets``). A topic is one answer; its values are aggregations over the
answer's assigned nuggets, one polars expression per measure (:data:`NUGGET_SCORES`),
which :func:`irmetrics.rag.nugget_scores` evaluates too, so both give the same numbers.

Notation, per answer: :math:`N` its nuggets, :math:`V \\subseteq N` the vital ones,
support :math:`s_i = 1` for ``support`` else 0, credit :math:`c_i` = 1 (``support``),
0.5 (``partial_support``) or 0, :math:`w_i` the weight of the nugget's importance.
As nuggetizer, the vital scores are 0 for a topic without vital nugget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from ..checks import parameter_error
from .params import Option
from .registry import measure
from .rel_format import NUGGETS

#: nuggetizer's importance labels.
IMPORTANCE = ("vital", "okay")

#: nuggetizer's assignment labels, from no support to full support.
ASSIGNMENT = ("not_support", "partial_support", "support")

#: The label nuggetizer writes for an importance or an assignment its LLM call failed to
#: give: no credit, not vital, weighed as ``okay``.
FAILED = "failed"

#: Default importance weights of ``nugget_weighted_recall``.
DEFAULT_WEIGHTS = {"vital": 1.0, "okay": 0.5}

# The expressions the scores share, made when a score is (polars is imported then).
def _credit() -> pl.Expr:
    return (pl.when(pl.col("assignment") == "support").then(1.0)
            .when(pl.col("assignment") == "partial_support").then(0.5).otherwise(0.0))


def _strict() -> pl.Expr:
    return (pl.col("assignment") == "support").cast(pl.Float64)


def _vital() -> pl.Expr:
    return pl.col("importance") == "vital"


def _n_vital() -> pl.Expr:
    return _vital().cast(pl.Int64).sum()


def _share(part: pl.Expr, count: pl.Expr) -> pl.Expr:
    return pl.when(count > 0).then(part / count).otherwise(0.0)


def _weighted_recall(weights: dict) -> pl.Expr:
    weight = pl.col("importance").replace_strict(
        {**weights, FAILED: weights["okay"]}, return_dtype=pl.Float64)
    return (weight * _credit()).sum() / weight.sum()


#: Per answer, each score as an aggregation over its nugget rows (``importance``,
#: ``assignment``): ``{output name: function(weights) -> polars expression}``, in
#: :data:`irmetrics.rag.NUGGET_MEASURES` order. The one home of the formulas.
NUGGET_SCORES = {
    "strict_vital_score": lambda weights: _share(_strict().filter(_vital()).sum(), _n_vital()),
    "strict_all_score": lambda weights: _strict().sum() / pl.len(),
    "vital_score": lambda weights: _share(_credit().filter(_vital()).sum(), _n_vital()),
    "all_score": lambda weights: _credit().sum() / pl.len(),
    "weighted_recall": _weighted_recall,
}


@dataclass
class NuggetContext:
    """Kernel input: one run's assigned nuggets, row per (topic, nugget).

    ``frame`` holds ``topic_id``, ``importance``, ``assignment`` for the evaluated topics
    only (each with at least one nugget); ``query_ids`` the evaluated topics in byte
    order; ``options`` the request's keyword options (the weights of
    ``nugget_weighted_recall``).
    """

    frame: pl.DataFrame
    query_ids: np.ndarray
    options: dict = field(default_factory=dict)
    relevance_level: int = 1
    judged_only: bool = False

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @cached_property
    def _order(self) -> pl.DataFrame:
        return pl.DataFrame({"topic_id": pl.Series(self.query_ids.tolist(), dtype=pl.String)})

    def score(self, name: str, weights: dict | None = None) -> np.ndarray:
        """:data:`NUGGET_SCORES` ``[name]`` per evaluated topic, shape (Q, 1)."""
        per_topic = self.frame.group_by("topic_id").agg(
            NUGGET_SCORES[name](weights or DEFAULT_WEIGHTS).alias("value"))
        values = self._order.join(per_topic, on="topic_id", how="left")["value"]
        return values.to_numpy().astype(np.float64)[:, None]


#: Every declaration here: nugget judgments, nuggetizer 0.0.5's definition.
_NUGGETIZER: dict[str, Any] = {"rel_formats": (NUGGETS,), "source": "nuggetizer 0.0.5"}
_NO_OPTIONS: dict = {}


@measure("nugget_strict_vital", order=1200, options=_NO_OPTIONS,
         pytrec_eval=False, friendly="strict_vital_score", **_NUGGETIZER)
def nugget_strict_vital(ctx, params):
    """Share of the vital nuggets the answer fully supports (nuggetizer's
    ``strict_vital_score``): ``sum_{i in V} s_i / |V|``, 0 without vital nugget."""
    return ctx.score("strict_vital_score")


@measure("nugget_strict_all", order=1201, options=_NO_OPTIONS,
         pytrec_eval=False, friendly="strict_all_score", **_NUGGETIZER)
def nugget_strict_all(ctx, params):
    """Share of all nuggets the answer fully supports (nuggetizer's
    ``strict_all_score``): ``sum_{i in N} s_i / |N|``."""
    return ctx.score("strict_all_score")


@measure("nugget_vital", order=1202, options=_NO_OPTIONS,
         pytrec_eval=False, friendly="vital_score", **_NUGGETIZER)
def nugget_vital(ctx, params):
    """Credit of the vital nuggets, half for partial support (nuggetizer's
    ``vital_score``): ``sum_{i in V} c_i / |V|``, 0 without vital nugget."""
    return ctx.score("vital_score")


@measure("nugget_all", order=1203, options=_NO_OPTIONS,
         pytrec_eval=False, friendly="all_score", **_NUGGETIZER)
def nugget_all(ctx, params):
    """Credit of all nuggets, half for partial support (nuggetizer's ``all_score``):
    ``sum_{i in N} c_i / |N|``."""
    return ctx.score("all_score")


_WEIGHTS = {key: Option(float, default=value, low=0.0,
                        doc=f"weight of a{'n' if key == 'okay' else ''} {key} nugget (> 0)")
            for key, value in DEFAULT_WEIGHTS.items()}


@measure("nugget_weighted_recall", order=1204, options=_WEIGHTS,
         pytrec_eval=False, friendly="weighted_recall", rel_formats=(NUGGETS,),
         source="irmetrics (nuggetizer's credit, weighted by importance)")
def nugget_weighted_recall(ctx, params):
    """Credit weighted by importance (not a nuggetizer score):
    ``sum_{i in N} w_i c_i / sum_{i in N} w_i``, with ``vital`` weighing 1 and
    ``okay`` 0.5 unless ``weighted_recall(vital=..., okay=...)`` says otherwise (a
    ``failed`` importance weighs as ``okay``)."""
    weights = {key: float(ctx.options.get(key, default))
               for key, default in DEFAULT_WEIGHTS.items()}
    for key, value in weights.items():
        if value <= 0.0:
            raise parameter_error(f"weighted_recall({key}=...)", "a weight > 0", value)
    return ctx.score("weighted_recall", weights)


__all__ = ["ASSIGNMENT", "DEFAULT_WEIGHTS", "FAILED", "IMPORTANCE", "NUGGET_SCORES",
           "NuggetContext"]
