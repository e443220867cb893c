"""Measure registry and the measure families.

The registry lists every measure from its index (:mod:`irmetrics.measures.declared`);
a family module is imported when one of its measures is first computed
(:func:`irmetrics.measures.registry.load`).
"""

from .registry import NICKNAMES, REGISTRY, MeasureDef, names

__all__ = ["NICKNAMES", "REGISTRY", "MeasureDef", "names"]
