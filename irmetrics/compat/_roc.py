"""ROC points and trapezoid areas for many segments at once (no sklearn, no torch).

A segment is one ranking sorted by score descending. Its ROC points are the
origin followed by one point per distinct score (the last entry of each run of
equal scores), as ``sklearn.metrics.roc_curve(drop_intermediate=False)`` and
torchmetrics' exact binary ROC produce them: ``tps`` and ``fps`` count the
positives and negatives scored at or above that value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import segments as sg


@dataclass
class RocPoints:
    """CSR ROC points: segment ``s`` owns points ``offsets[s]:offsets[s + 1]``, origin first."""

    offsets: np.ndarray
    tps: np.ndarray
    fps: np.ndarray
    positives: np.ndarray  # per segment
    negatives: np.ndarray  # per segment

    @property
    def seg(self) -> np.ndarray:
        return sg.segment_ids(self.offsets)


def roc_points(offsets: np.ndarray, scores: np.ndarray, positive: np.ndarray) -> RocPoints:
    """ROC points of every segment (entries sorted by score descending inside a segment)."""
    n_seg = len(offsets) - 1
    seg = sg.segment_ids(offsets)
    positive = np.asarray(positive, dtype=bool)
    tp_running = sg.seg_cumcount(positive, offsets)
    fp_running = sg.seg_cumcount(~positive, offsets)
    run_end = np.ones(scores.size, dtype=bool)
    if scores.size > 1:
        run_end[:-1] = (scores[1:] != scores[:-1]) | (seg[1:] != seg[:-1])
    ends = np.flatnonzero(run_end)
    per_seg = np.bincount(seg[ends], minlength=n_seg)
    point_offsets = np.concatenate(([0], np.cumsum(per_seg + 1))).astype(np.int64)
    n_points = int(point_offsets[-1])
    tps = np.zeros(n_points, dtype=np.int64)
    fps = np.zeros(n_points, dtype=np.int64)
    # Run ends fill each segment's slots after its origin, in order.
    slot = np.arange(ends.size) - np.repeat(np.cumsum(per_seg) - per_seg, per_seg) \
        + np.repeat(point_offsets[:-1] + 1, per_seg)
    tps[slot] = tp_running[ends]
    fps[slot] = fp_running[ends]
    positives = np.bincount(seg[positive], minlength=n_seg).astype(np.int64)
    negatives = (np.diff(offsets) - positives).astype(np.int64)
    return RocPoints(point_offsets, tps, fps, positives, negatives)


def trapezoid_area(offsets: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per segment ``sum_j (x_j - x_{j-1}) (y_j + y_{j-1}) / 2`` over consecutive points."""
    n_seg = len(offsets) - 1
    if x.size < 2:
        return np.zeros(n_seg)
    seg = sg.segment_ids(offsets)
    same = seg[1:] == seg[:-1]
    terms = np.where(same, (x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0, 0.0)
    return sg.seg_sum(terms, seg[1:], n_seg)


def partial_area(offsets: np.ndarray, x: np.ndarray, y: np.ndarray, x_max: float) -> np.ndarray:
    """Area under each curve over ``[0, x_max]`` with ``y`` interpolated at ``x_max``.

    Every segment must reach ``x > x_max`` (true for ROC curves with negatives when
    ``x_max < 1``): the curve is cut after its last point with ``x <= x_max`` and a
    point ``(x_max, lerp)`` is appended, as torchmetrics' partial AUC does.
    """
    n_seg = len(offsets) - 1
    if x.size < 2:
        return np.zeros(n_seg)
    seg = sg.segment_ids(offsets)
    same = seg[1:] == seg[:-1]
    inside = x[1:] <= x_max
    crossing = same & (x[:-1] <= x_max) & ~inside
    full = np.where(same & inside, (x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = (x_max - x[:-1]) / (x[1:] - x[:-1])
    y_cut = y[:-1] + weight * (y[1:] - y[:-1])
    cut = np.where(crossing, (x_max - x[:-1]) * (y_cut + y[:-1]) / 2.0, 0.0)
    return sg.seg_sum(full + cut, seg[1:], n_seg)
