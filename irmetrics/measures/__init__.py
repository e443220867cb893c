"""Measure registry and the measure families (importing a family registers it)."""

from . import (  # noqa: F401  (imported for their registrations)
    average_precision,
    counts,
    dcg,
    interpolated,
    ltr,
    metric_learning,
    precision,
    rank,
    recall,
    torchmetrics_family,
)
from .registry import NICKNAMES, REGISTRY, MeasureDef, names

__all__ = ["NICKNAMES", "REGISTRY", "MeasureDef", "names"]
