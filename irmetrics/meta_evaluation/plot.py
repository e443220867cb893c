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
    r"""The system means of ``measure`` that each row of ``meta.rankings`` compared.

    Each system's mean over the topics ``T`` both sides evaluated (exact sums), under
    the reference (or the leaderboard's value) and under the compared qrels set:

    .. math:: \bar{x}_s = \frac{1}{|T|} \sum_{t \in T} x_{s,t}

    Parameters
    ----------
    meta : MetaEvaluation
        What :func:`~irmetrics.meta_evaluation.meta_evaluate` returned.
    measure : str
        An output name of ``meta.rankings`` (``"P_1"``, ``"map"``).

    Returns
    -------
    list of (str, ndarray, ndarray)
        ``(qrels, reference means, qrels means)`` per compared qrels set, the means in
        ``meta.grid.run_names`` order.

    Examples
    --------
    >>> import irmetrics as irm
    >>> human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}, "q3": {"e": 1, "f": 0}}
    >>> llm = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1, "d": 0}, "q3": {"e": 0, "f": 1}}
    >>> runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}, "q3": {"e": 2, "f": 1}},
    ...         "y": {"q1": {"a": 1, "b": 2}, "q2": {"c": 1, "d": 2}, "q3": {"e": 2, "f": 1}}}
    >>> meta = irm.meta_evaluate({"human": human, "llm": llm}, runs, "P.1", n_resamples=0)
    >>> [(q, x.round(4).tolist(), y.round(4).tolist()) for q, x, y in compared_means(meta, "P_1")]
    [('llm', [1.0, 0.3333], [0.6667, 0.3333])]
    """
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

    Parameters
    ----------
    meta : MetaEvaluation
        What :func:`~irmetrics.meta_evaluation.meta_evaluate` returned.
    measure : str
        An output name of ``meta.rankings`` (``"P_1"``, ``"map"``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ImportError
        matplotlib is not installed (with the install hint).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import irmetrics as irm
    >>> human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}, "q3": {"e": 1, "f": 0}}
    >>> llm = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1, "d": 0}, "q3": {"e": 0, "f": 1}}
    >>> runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}, "q3": {"e": 2, "f": 1}},
    ...         "y": {"q1": {"a": 1, "b": 2}, "q2": {"c": 1, "d": 2}, "q3": {"e": 2, "f": 1}}}
    >>> meta = irm.meta_evaluate({"human": human, "llm": llm}, runs, "P.1", n_resamples=0)
    >>> fig = means_scatter(meta, "P_1")
    >>> isinstance(fig, Figure), len(fig.axes), fig.axes[0].get_title()
    (True, 1, 'llm vs human: tau_b = 1.000')
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

    Parameters
    ----------
    agreement : JudgeAgreement
        What :func:`~irmetrics.meta_evaluation.judge_agreement` returned.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; a note instead of a matrix when no pair was judged by both.

    Raises
    ------
    ImportError
        matplotlib is not installed (with the install hint).

    Examples
    --------
    >>> import irmetrics as irm
    >>> from matplotlib.figure import Figure
    >>> human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
    >>> llm = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1, "d": 0}}
    >>> fig = label_confusion(irm.judge_agreement(human, llm, names=("human", "llm")))
    >>> isinstance(fig, Figure), len(fig.axes), [t.get_text() for t in fig.axes[0].texts]
    (True, 1, ['1', '1', '0', '2'])
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
