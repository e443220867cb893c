"""Argument checks shared by both faces of the torchmetrics drop-in.

Messages start with torchmetrics 1.9.0's own words (code matching them keeps
working) and end with the value received, as the rest of irmetrics does.
"""

from __future__ import annotations

import numbers

from ...exceptions import ParameterError
from ._kernels import AGGREGATIONS, EMPTY_TARGET_ACTIONS


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_top_k(top_k, name: str = "top_k"):
    """None or a positive int (``name``: ``top_k`` or ``max_k``)."""
    if top_k is None:
        return None
    if not _is_int(top_k) or top_k <= 0:
        raise ParameterError(f"`{name}` has to be a positive integer or None; got {top_k!r}.")
    return int(top_k)


def check_adaptive_k(adaptive_k) -> bool:
    if not isinstance(adaptive_k, bool):
        raise ParameterError(f"`adaptive_k` has to be a boolean; got {adaptive_k!r}.")
    return adaptive_k


def check_max_fpr(max_fpr):
    if max_fpr is None:
        return None
    if not isinstance(max_fpr, numbers.Real) or isinstance(max_fpr, bool) or not 0 < max_fpr <= 1:
        raise ParameterError(f"`max_fpr` should be a float in range (0, 1] or None; got {max_fpr!r}.")
    return float(max_fpr)


def check_min_precision(min_precision) -> float:
    if not isinstance(min_precision, numbers.Real) or isinstance(min_precision, bool) \
            or not 0.0 <= float(min_precision) <= 1.0:
        raise ParameterError("`min_precision` has to be a positive float between 0 and 1; "
                             f"got {min_precision!r}.")
    return float(min_precision)


def check_empty_target_action(action) -> str:
    if action not in EMPTY_TARGET_ACTIONS:
        raise ParameterError(f"Argument `empty_target_action` received a wrong value `{action}`: "
                             f"it must be one of {', '.join(map(repr, EMPTY_TARGET_ACTIONS))}.")
    return action


def check_ignore_index(ignore_index):
    if ignore_index is not None and not _is_int(ignore_index):
        raise ParameterError(f"Argument `ignore_index` must be an integer or None; got {ignore_index!r}.")
    return ignore_index


def check_aggregation(aggregation):
    if not (callable(aggregation) or aggregation in AGGREGATIONS):
        raise ParameterError("Argument `aggregation` must be one of `mean`, `median`, `min`, `max` "
                             f"or a callable taking a tensor of values; got {aggregation!r}.")
    return aggregation
