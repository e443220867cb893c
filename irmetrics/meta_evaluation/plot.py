"""Pictures of a meta-evaluation, as matplotlib Figures (the ones its HTML page embeds).

Needs the optional extra: ``pip install "irmetrics-exact[plot]"`` (matplotlib); built like the
figures of :mod:`irmetrics.comparison.plot` (no pyplot, names drawn as typed).

* :func:`means_scatter` -- per measure, each system's mean under a qrels set against its
  mean under the reference: points on the diagonal agree, points off it move, and a pair
  of points in the wrong order is a swap.
* :func:`label_confusion` -- the confusion matrix of the labels two judgment sets gave to
  the (query, doc) pairs both judged.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import stats
from ..comparison.plot import SYSTEM_COLOURS, new_figure, require_matplotlib, system_labels
from ..exceptions import QueryAlignmentWarning
from .judges import _label_text


def compared_means(meta, measure: str):
    """``[(qrels, reference means, qrels means)]`` of ``measure``: the system means each
    row of ``meta.rankings`` compared (topics shared by both sides, exact sums)."""
    grid = meta.grid
    out = []
    rows = meta.rankings.filter(measure=measure)
    for qrels, reference in zip(rows["qrels"].to_list(), rows["reference"].to_list()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", QueryAlignmentWarning)  # meta_evaluate said it
            if meta.leaderboard is not None:  # (a qrels set may be named "leaderboard")
                _, scores = grid.scores(measure, [qrels])
                board = grid.leaderboard_values(meta.leaderboard, measure)
                res = stats.ranking_agreement(board, scores[qrels], k=1, n_resamples=0)
            else:
                _, scores = grid.scores(measure, [reference, qrels])
                res = stats.ranking_agreement(scores[reference], scores[qrels], k=1,
                                              n_resamples=0)
        out.append((qrels, res.x_means, res.y_means))
    return out


def means_scatter(meta, measure: str):
    """System means of ``measure`` under each compared qrels set (y) against the
    reference (x), one panel per qrels set, with the diagonal ``y = x`` and Kendall's
    tau-b in the title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    require_matplotlib()
    panels = compared_means(meta, measure)
    labels = system_labels(meta.grid.run_names)
    reference = ("leaderboard" if meta.leaderboard is not None else meta.reference)
    fig = new_figure(4.2 * max(1, len(panels)), 4.0)
    axes = fig.subplots(1, max(1, len(panels)), squeeze=False)[0]
    taus = dict(zip(meta.rankings.filter(measure=measure)["qrels"].to_list(),
                    meta.rankings.filter(measure=measure)["tau_b"].to_list()))
    for ax, (qrels, x, y) in zip(axes, panels):
        low = float(min(x.min(), y.min()))
        high = float(max(x.max(), y.max()))
        pad = (high - low) * 0.08 or 0.05
        ax.plot([low - pad, high + pad], [low - pad, high + pad], color="#9aa0a6",
                linestyle="--", linewidth=0.8, zorder=1)
        for i, (xi, yi) in enumerate(zip(x, y)):
            ax.scatter([xi], [yi], s=28, color=SYSTEM_COLOURS[i % len(SYSTEM_COLOURS)],
                       edgecolor="white", linewidth=0.5, zorder=3)
            if len(x) <= 20:
                ax.annotate(labels[i], (xi, yi), textcoords="offset points", xytext=(4, 3),
                            fontsize=7, color="#5f6368")
        ax.set_xlim(low - pad, high + pad)
        ax.set_ylim(low - pad, high + pad)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel(f"{measure} under {reference}")
        ax.set_ylabel(f"{measure} under {qrels}")
        tau = taus.get(qrels)
        ax.set_title(f"{qrels} vs {reference}: tau_b = {tau:.3f}" if tau is not None
                     and np.isfinite(tau) else f"{qrels} vs {reference}")
    return fig


def label_confusion(agreement):
    """The confusion matrix of a :class:`~irmetrics.meta_evaluation.JudgeAgreement`:
    rows the first judgment set's labels, columns the second's, each cell's count
    written in it, shaded by its share of its row.

    Returns
    -------
    matplotlib.figure.Figure
    """
    require_matplotlib()
    counts = np.asarray(agreement.confusion, dtype=np.float64)
    names = [_label_text(v) for v in agreement.labels]
    size = max(2.6, 0.55 * len(names) + 1.6)
    fig = new_figure(size + 0.6, size)
    ax = fig.subplots()
    a, b = agreement.names
    if not names:  # no (query, doc) pair judged by both: nothing to draw
        ax.set_axis_off()
        ax.text(0.5, 0.5, f"no (query, doc) pair\njudged by both {a} and {b}", ha="center",
                va="center", fontsize=9, color="#5f6368", transform=ax.transAxes)
        return fig
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.nan_to_num(counts / counts.sum(axis=1, keepdims=True))
    ax.imshow(share, cmap="Blues", vmin=0.0, vmax=1.0)
    for i in range(counts.shape[0]):
        for j in range(counts.shape[1]):
            ax.text(j, i, f"{int(counts[i, j]):,}", ha="center", va="center", fontsize=8,
                    color="white" if share[i, j] > 0.6 else "#1d1d1f")
    ax.set_xticks(range(len(names)), names)
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel(f"label by {b}")
    ax.set_ylabel(f"label by {a}")
    ax.spines[:].set_visible(False)
    ax.set_title(f"{a} x {b}: kappa = {agreement.overall['kappa']:.3f}")
    return fig


__all__ = ["compared_means", "label_confusion", "means_scatter"]
