"""Honest numbers under incomplete judgments: the bounds a measure can take over every
labelling of the retrieved documents nobody judged (:mod:`irmetrics.unjudged.bounds`)."""

from .bounds import BOUNDED_MEASURES, bound_columns, grade_range

__all__ = ["BOUNDED_MEASURES", "bound_columns", "grade_range"]
