"""Measure registry and the measure families (importing a family registers it)."""

from . import (  # noqa: F401  (imported for their registrations)
    average_precision,
    counts,
    dcg,
    diversity,
    gain_based,
    gdeval,
    incomplete,
    interpolated,
    judged,
    judgment_groups,
    ltr,
    metric_learning,
    msmarco,
    nuggets,
    precision,
    prefs,
    rank,
    ranx,
    recall,
    set_based,
    strings,
    torchmetrics_family,
    user_model,
)
from .registry import NICKNAMES, REGISTRY, MeasureDef, names

__all__ = ["NICKNAMES", "REGISTRY", "MeasureDef", "names"]
