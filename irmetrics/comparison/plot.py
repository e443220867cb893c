"""Pictures of a comparison, as matplotlib Figures (the ones the HTML report embeds).

Needs the optional extra: ``pip install "irmetrics-exact[plot]"`` (matplotlib). Figures are
built with :class:`matplotlib.figure.Figure` directly, never with pyplot, so no figure is
registered with pyplot and no window opens (matplotlib's box plot reads every rcParam,
which imports pyplot to resolve the default backend, but nothing is drawn through it);
in a notebook the returned Figure displays itself. Importing :mod:`irmetrics` never imports matplotlib.

Names are drawn as typed (never as mathtext), on one line (a newline or other control
character but a tab is drawn escaped, ``\\n``); system names longer than 24 characters
and query ids longer than 20 are shortened to their start and end around an ellipsis.

* :func:`per_query_differences` -- per measure and comparison, the per-query differences
  ``system - baseline`` sorted from the largest win to the largest loss.
* :func:`score_distributions` -- per measure, each system's per-query scores as a box plot
  with every query as a point.
* :func:`precision_recall` -- interpolated precision-recall curves (trec_eval's
  ``iprec_at_recall``) of every system.
* :func:`rank_intervals` -- each system's simultaneous rank interval (best first), the
  systems tied with the best, the separable adjacent pairs.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..checks import check_int, parameter_error
from ..measures.parse import output_name
from . import formatting as fmt

#: How to install what this module needs, for error messages.
INSTALL_HINT = 'pip install "irmetrics-exact[plot]"'

#: Colours of wins, losses and ties (colour-blind safe: blue / vermilion / grey).
WIN, LOSS, TIE = "#0072b2", "#d55e00", "#8c8c8c"

#: The colours of up to eight systems, in the order of the comparison's systems
#: (Okabe-Ito: colour-blind safe); more systems get :func:`system_colours`.
SYSTEM_COLOURS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00",
                  "#f0e442", "#000000")

#: A measure whose per-query values take at most this many distinct values (P@1, RR on
#: MS MARCO: mostly 0 and 1) is drawn as value shares, not as a box plot.
DISCRETE_VALUES = 12

#: One marker per system, so that curves lying on one another stay apart.
SYSTEM_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")

#: Above this many queries, bars become one filled curve through sampled differences (an
#: SVG of thousands of bars is megabytes) and points one raster image inside the SVG.
_MANY_QUERIES = 300

#: Points that draw the sorted differences of many queries (about two per pixel).
_CURVE_SAMPLES = 1500

#: Query ids label the x axis up to this many queries (beyond, they would overlap).
_LABELLED_QUERIES = 60

#: Longest system name and query id a figure draws: longer ones keep their start and end
#: around an ellipsis (tables give them in full); a long file path as a tick label or
#: title squeezes the axes to nothing.
_NAME_CHARS = 24
_QUERY_CHARS = 20

#: matplotlib settings of every figure: a generic font stack (no font file is embedded:
#: SVG text stays text) and a fixed hash salt so that SVG ids, hence bytes, are
#: reproducible.
STYLE = {
    "font.family": ["sans-serif"],
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial", "Liberation Sans"],
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",
    "svg.hashsalt": "irmetrics",
    "svg.image_inline": True,
    # Run names and query ids are text, never mathtext: "$x$" must not turn into
    # italics, and "$\\foo$" must not fail.
    "text.parse_math": False,
}


def require_matplotlib():
    """The matplotlib module, or an ImportError that says in one line how to get it."""
    try:
        import matplotlib
        from matplotlib.figure import Figure  # noqa: F401  (fails on a broken install)
    except ImportError as exc:
        raise ImportError(f"plots need matplotlib: {INSTALL_HINT}") from exc
    return matplotlib


@contextlib.contextmanager
def style():
    """Context in which figures are drawn and saved with :data:`STYLE`.

    matplotlib's settings are restored on leaving it.

    Raises
    ------
    ImportError
        matplotlib is not installed (with the install hint).

    Examples
    --------
    >>> import matplotlib
    >>> with style():
    ...     matplotlib.rcParams["svg.hashsalt"], matplotlib.rcParams["text.parse_math"]
    ('irmetrics', False)
    >>> matplotlib.rcParams["svg.hashsalt"] == "irmetrics"
    False
    """
    with require_matplotlib().rc_context(STYLE):
        yield


def new_figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _measure(comparison, measure):
    if measure is None:
        return comparison.measures[0]
    # The spelling given to compare ("ndcg_cut.10") names the column "ndcg_cut_10".
    return output_name(measure, comparison.measures)


def system_colours(n: int) -> list[str]:
    """``n`` distinct colours, one per system: Okabe-Ito up to eight; beyond, ``n`` hues
    evenly spaced around the colour wheel at three alternating lightnesses, so no two
    systems ever share a colour (and neighbours differ in lightness too).

    Beyond eight, colour ``i`` is the HLS colour of hue ``i / n``, lightness
    ``(0.32, 0.47, 0.62)[i % 3]`` and saturation 0.8, each RGB channel rounded to
    ``round(255 * c)``.

    Parameters
    ----------
    n : int
        Number of systems, at least 0.

    Returns
    -------
    list of str
        ``"#rrggbb"`` colours, ``n`` of them.

    Raises
    ------
    ParameterError
        ``n`` is not a non-negative integer.

    Examples
    --------
    >>> system_colours(2)
    ['#0072b2', '#e69f00']
    >>> len(set(system_colours(40)))
    40
    """
    import colorsys

    n = check_int("n", n, min=0)
    if n <= len(SYSTEM_COLOURS):
        return list(SYSTEM_COLOURS[:n])
    colours = []
    for i in range(n):
        red, green, blue = colorsys.hls_to_rgb(i / n, (0.32, 0.47, 0.62)[i % 3], 0.8)
        colours.append("#{:02x}{:02x}{:02x}".format(*(round(255 * c) for c in (red, green, blue))))
    return colours


def _shorten(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and end around "…"."""
    if len(text) <= limit:
        return text
    head = limit // 2
    return text[:head] + "\u2026" + text[len(text) - (limit - head - 1):]


def system_labels(systems) -> list[str]:
    """Each system's name as a figure draws it: shortened, and still telling systems apart
    (a letter, as in the report's summary table, when two shortened names coincide)."""

    labels = [_shorten(fmt.printable(s, keep="\t"), _NAME_CHARS) for s in systems]
    if len(set(labels)) < len(labels):
        labels = [f"({letter}) {label}" for letter, label in zip(fmt.letters(len(labels)), labels)]
    return labels


def comparison_pairs(comparison, measure: str) -> list[tuple[str, str]]:
    """``(system, baseline)`` of every row of ``measure`` in the comparison's table."""
    rows = comparison.table().filter(measure=measure)
    return list(zip(rows["system"].to_list(), rows["baseline"].to_list()))


def per_query_differences(comparison, measure=None, *, pairs=None, max_pairs=12):
    r"""Per-query differences against each baseline, sorted from largest win to largest loss.

    For a comparison row ``(system, baseline)`` of ``measure`` the bars are
    :math:`d_q = \text{system}_q - \text{baseline}_q` over the comparison's common queries,
    sorted by :math:`d_q` descending (ties by query id): wins (:math:`d_q > 0`) in blue on
    the left, losses in vermilion on the right, and the queries where both score the same
    as a grey band on the zero line in between. With at most 60 queries the x axis names
    them. Every panel has the same y-scale (the largest difference drawn), so bars of
    different panels compare.

    Parameters
    ----------
    comparison : Comparison
    measure : str, optional
        One of ``comparison.measures``, or its name as given to compare (``ndcg_cut.10``);
        default: the first.
    pairs : list of (system, baseline), optional
        Which rows to draw (default: every row of ``measure``, in table order).
    max_pairs : int, default 12
        Draw at most this many rows (an all-pairs comparison of many systems has many).

    Returns
    -------
    matplotlib.figure.Figure
        One axes per pair, stacked.

    Examples
    --------
    >>> import irmetrics as irm
    >>> from irmetrics import plot
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    >>> a = {"q1": {"d1": 1.0, "x": 2.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}}
    >>> b = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"d2": 1.0, "y": 2.0}, "q3": {"d3": 1.0}}
    >>> cmp = irm.compare(qrels, {"A": a, "B": b}, "map", baseline="A")
    >>> fig = plot.per_query_differences(cmp)
    >>> fig.axes[0].get_title(loc="left")
    'map: B - A'
    """
    require_matplotlib()
    measure = _measure(comparison, measure)
    max_pairs = check_int("max_pairs", max_pairs, min=1)
    every = comparison_pairs(comparison, measure)
    if pairs is None:
        pairs = every
    else:
        pairs = [tuple(p) for p in pairs]
        if not pairs:
            raise parameter_error("pairs", "a non-empty list of rows of the comparison",
                                  pairs)
        for pair in pairs:
            if pair not in every:
                raise parameter_error("pairs", f"rows of the comparison of {measure}"
                                      f" ({', '.join(map(repr, every))})", pair)
    pairs = pairs[:max_pairs]
    scores = comparison.scores[measure]
    query_ids = np.asarray(comparison.query_ids, dtype=str)
    names = dict(zip(comparison.systems, system_labels(comparison.systems)))
    n = len(query_ids)
    labelled = n <= _LABELLED_QUERIES
    row_height = 2.3 if labelled else 1.9
    differences = [scores[comparison.systems.index(system)]
                   - scores[comparison.systems.index(baseline)] for system, baseline in pairs]
    # One y-scale for every panel: bars that differ fourfold must look it.
    top = max(float(np.abs(d).max()) if n else 0.0 for d in differences) or 1.0
    with style():
        fig = new_figure(9.0, 0.4 + row_height * len(pairs))
        axes = fig.subplots(len(pairs), 1, squeeze=False)[:, 0]
        for ax, (system, baseline), diff in zip(axes, pairs, differences):
            # Stable sort: equal differences keep query-id order, so the picture is unique.
            order = np.argsort(-diff, kind="stable")
            labels = ([_shorten(fmt.printable(q, keep="\t"), _QUERY_CHARS)
                       for q in query_ids[order]] if labelled else None)
            _difference_axes(ax, diff[order], labels, top)
            wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
            ax.set_title(f"{measure}: {names[system]} - {names[baseline]}", loc="left")
            ax.set_title(f"{wins} wins, {n - wins - losses} ties, {losses} losses;"
                         f" mean {diff.mean():+.4f}", loc="right", fontsize=8.5)
            ax.set_ylabel(f"difference in {measure}")
        axes[-1].set_xlabel("queries, sorted by difference" if not labelled
                            else "query id (sorted by difference)")
    return fig


def _difference_axes(ax, diff: np.ndarray, labels, top: float) -> None:
    """Bars of sorted differences; ties as a band on the zero line; y from -top to top."""
    n = len(diff)
    x = np.arange(n)
    if n <= _MANY_QUERIES:
        colours = np.where(diff > 0, WIN, LOSS)
        nonzero = diff != 0
        ax.bar(x[nonzero], diff[nonzero], width=0.8, color=colours[nonzero], linewidth=0)
    else:
        # Sorted differences form a monotone curve: sampled at about two points per pixel
        # it looks the same and the SVG stays small (each sample lies between its
        # neighbours, so nothing between two samples can stick out).
        x, y = _monotone_samples(diff, _CURVE_SAMPLES)
        ax.fill_between(x, 0.0, y, where=y > 0, color=WIN, linewidth=0, interpolate=True)
        ax.fill_between(x, 0.0, y, where=y < 0, color=LOSS, linewidth=0, interpolate=True)
    ax.axhline(0.0, color="#444444", linewidth=0.6)
    tied = np.flatnonzero(diff == 0)
    if len(tied):
        # Sorted differences put every tie in one run of queries.
        ax.hlines(0.0, tied[0] - 0.45, tied[-1] + 0.45, color=TIE, linewidth=5,
                  label="ties")
    ax.set_xlim(-0.8, n - 0.2)
    ax.set_ylim(-top * 1.1, top * 1.1)
    ax.grid(axis="y", color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)
    if labels is not None:
        ax.set_xticks(x, labels, rotation=90, fontsize=6.5)
    else:
        ax.set_xticks([])


def _monotone_samples(values: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """About ``count`` evenly spaced positions of a descending array, with both ends and
    the last win and first loss, so the extremes and the sign changes are exact."""
    n = len(values)
    boundaries = [np.count_nonzero(values > 0) - 1, n - np.count_nonzero(values < 0)]
    positions = np.concatenate([np.linspace(0, n - 1, count).round().astype(np.int64),
                                [b for b in boundaries if 0 <= b < n]])
    positions = np.unique(positions)
    return positions, values[positions]


def discrete_values(scores) -> np.ndarray | None:
    r"""The distinct values of ``scores`` when they are few and repeat (at most
    :data:`DISCRETE_VALUES`, each query's value shared with others on average: P@1, or
    RR on MS MARCO, mostly 0 and 1); None otherwise.

    With ``U`` the distinct values and ``m`` the number of queries (the last axis), the
    values are discrete when :math:`|U| \le` :data:`DISCRETE_VALUES` and
    :math:`m > 2 |U|`.

    Parameters
    ----------
    scores : array-like of float, shape (systems, queries) or (queries,)
        Per-query scores.

    Returns
    -------
    ndarray of float64 or None
        ``U``, ascending.

    Examples
    --------
    >>> discrete_values([[0, 1, 1, 0, 1, 1], [1, 1, 0, 1, 1, 1]]).tolist()
    [0.0, 1.0]
    >>> discrete_values([[0.1, 0.2, 0.3]]) is None
    True
    """
    scores = np.asarray(scores, dtype=np.float64)
    values = np.unique(scores)
    if len(values) <= DISCRETE_VALUES and scores.shape[-1] > 2 * len(values):
        return values
    return None


def score_distributions(comparison, measure=None):
    """Each system's per-query scores: a box plot with every query as a point, or, for
    a measure with few distinct values, the share of queries at each value.

    The box spans the quartiles with the median inside, whiskers reach the most extreme
    score within 1.5 interquartile ranges, and a white diamond marks the mean (the
    number the comparison tests). Points are spread sideways by a fixed pattern (no
    randomness: the same comparison gives the same picture). When the values are few
    and repeat (:func:`discrete_values`: P@1, RR on MS MARCO), a box collapses to a line
    and the points to a strip, so each (system, value) is drawn instead as a disc whose
    area is the share of queries with that value (labelled from 10%), with the mean
    diamond.

    Parameters
    ----------
    comparison : Comparison
    measure : str, optional
        One of ``comparison.measures``, or its name as given to compare (``ndcg_cut.10``);
        default: the first.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import irmetrics as irm
    >>> from irmetrics import plot
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> a = {"q1": {"d1": 1.0, "x": 2.0}, "q2": {"d2": 1.0}}
    >>> b = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"d2": 1.0, "y": 2.0}}
    >>> fig = plot.score_distributions(irm.compare(qrels, {"A": a, "B": b}, "map"))
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['A', 'B']
    """
    require_matplotlib()
    measure = _measure(comparison, measure)
    scores = comparison.scores[measure]
    n_systems, n = scores.shape
    colours = system_colours(n_systems)
    values = discrete_values(scores)
    with style():
        fig = new_figure(max(3.2, 1.0 + 0.9 * n_systems), 3.6)
        ax = fig.add_subplot()
        positions = np.arange(1, n_systems + 1)
        if values is None:
            _box_plot(ax, scores, positions, colours)
            subtitle = f"{n} queries; diamond: mean"
        else:
            _value_shares(ax, scores, values, positions, colours)
            subtitle = f"{n} queries; disc area: share of queries; diamond: mean"
        ax.scatter(positions, scores.mean(axis=1), marker="D", s=28, color="white",
                   edgecolors="#222222", linewidths=0.9, zorder=5)
        labels = system_labels(comparison.systems)
        slanted = max(map(len, labels)) > 10
        ax.set_xticks(positions, labels, rotation=30 if slanted else 0,
                      ha="right" if slanted else "center")
        ax.set_ylabel(measure)
        ax.set_title(f"{measure} per query\n{subtitle}", loc="left", fontsize=9)
        ax.grid(axis="y", color="#dddddd", linewidth=0.5)
        ax.set_axisbelow(True)
    return fig


def _box_plot(ax, scores, positions, colours) -> None:
    """Box plot over every query drawn as a point."""
    n = scores.shape[1]
    # Golden-ratio offsets: evenly spread, deterministic, no two points on one vertical.
    offsets = ((np.arange(n) * 0.6180339887498949) % 1.0 - 0.5) * 0.5
    many = n > _MANY_QUERIES
    # The box is drawn over the points, see-through, so neither hides the other.
    ax.boxplot(list(scores), positions=positions, widths=0.6, showfliers=False,
               patch_artist=True, zorder=4,
               medianprops={"color": "#222222", "linewidth": 1.4},
               boxprops={"facecolor": (1.0, 1.0, 1.0, 0.35), "edgecolor": "#333333"},
               whiskerprops={"color": "#333333"}, capprops={"color": "#333333"})
    for i, colour in enumerate(colours):
        ax.scatter(positions[i] + offsets, scores[i], s=2.5 if many else 9,
                   color=colour, alpha=0.35 if many else 0.8, linewidths=0,
                   zorder=3, rasterized=many)


def _value_shares(ax, scores, values, positions, colours) -> None:
    """One disc per (system, value), its area the share of queries with that value."""
    n = scores.shape[1]
    # Share of each system's queries at each value: (systems, values).
    shares = (scores[:, :, None] == values[None, None, :]).sum(axis=1) / n
    for i, colour in enumerate(colours):
        present = shares[i] > 0
        ax.scatter(np.full(int(present.sum()), positions[i]), values[present],
                   s=900 * shares[i][present], color=colour, alpha=0.75, linewidths=0.6,
                   edgecolors="#333333", zorder=3)
        for value, share in zip(values[present], shares[i][present]):
            if share >= 0.1:
                ax.annotate(f"{share:.0%}", (positions[i], value), xytext=(11, 0),
                            textcoords="offset points", va="center", fontsize=7.5,
                            color="#333333")
    ax.set_xlim(positions[0] - 0.7, positions[-1] + 0.9)
    span = float(values[-1] - values[0]) or 1.0
    ax.set_ylim(values[0] - 0.12 * span, values[-1] + 0.12 * span)


def precision_recall(comparison):
    """Interpolated precision-recall curves of every system (trec_eval's ``iprec_at_recall``).

    Each curve joins the mean interpolated precision at recall 0.0, 0.1, ..., 1.0 over
    the comparison's common queries (:meth:`Comparison.precision_recall_curves`).

    Parameters
    ----------
    comparison : Comparison

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ComparisonError
        A system cannot be evaluated again for its curve (see
        :meth:`Comparison.precision_recall_curves`).

    Examples
    --------
    >>> import irmetrics as irm
    >>> from irmetrics import plot
    >>> qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
    >>> a = {"q1": {"d1": 2.0, "x": 1.0, "d2": 0.5}, "q2": {"d3": 1.0}}
    >>> b = {"q1": {"x": 2.0, "d1": 1.0, "d2": 0.5}, "q2": {"y": 2.0, "d3": 1.0}}
    >>> fig = plot.precision_recall(irm.compare(qrels, {"A": a, "B": b}, "map"))
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['A', 'B']
    """
    require_matplotlib()
    curves = comparison.precision_recall_curves()
    with style():
        fig = new_figure(5.6, 4.0)
        ax = fig.add_subplot()
        labels = system_labels(comparison.systems)
        colours = system_colours(len(comparison.systems))
        for i, system in enumerate(comparison.systems):
            rows = curves.filter(system=system)
            ax.plot(rows["recall"].to_numpy(), rows["precision"].to_numpy(),
                    marker=SYSTEM_MARKERS[i % len(SYSTEM_MARKERS)], markersize=4.5,
                    markerfacecolor="none", linewidth=1.5, color=colours[i], label=labels[i])
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(0.0, 1.02)
        ax.set_xticks(np.linspace(0.0, 1.0, 11))
        ax.set_xlabel("recall")
        ax.set_ylabel("interpolated precision")
        ax.set_title(f"Interpolated precision at recall ({len(comparison.query_ids)} queries)",
                     loc="left")
        ax.grid(color="#dddddd", linewidth=0.5)
        ax.legend(loc="lower left", frameon=False)
    return fig


__all__ = ["DISCRETE_VALUES", "INSTALL_HINT", "STYLE", "discrete_values", "per_query_differences",
           "precision_recall", "rank_intervals", "score_distributions", "style",
           "system_colours"]


def rank_intervals(intervals, systems, *, title: str = "Rank intervals"):
    """Each system's simultaneous rank interval as a bar, best first, observed rank a dot.

    Systems statistically tied with the best (interval reaching rank 1) are drawn in
    blue, the others in grey; a horizontal rule marks each separable adjacent pair.

    Parameters
    ----------
    intervals : irmetrics.stats.RankIntervals
        From :func:`irmetrics.stats.rank_intervals.rank_intervals` or
        :func:`irmetrics.stats.aggregate_rank_intervals`.
    systems : sequence of str
        The systems' names, in the columns' order.
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from irmetrics.stats.rank_intervals import rank_intervals as intervals_of
    >>> r = intervals_of([[0.9, 0.5, 0.1], [0.8, 0.4, 0.2], [0.7, 0.6, 0.3]], n_resamples=200)
    >>> fig = rank_intervals(r, ["a", "b", "c"])
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['a', 'b', 'c']
    """
    require_matplotlib()
    order = np.asarray(intervals.order)
    m = len(order)
    labels = system_labels([systems[j] for j in order])
    with style():
        fig = new_figure(5.6, max(1.8, 0.8 + 0.28 * m))
        ax = fig.add_subplot()
        y = np.arange(m)
        colours = [WIN if intervals.tied_with_best[j] else TIE for j in order]
        ax.hlines(y, intervals.low[order] - 0.35, intervals.high[order] + 0.35, colors=colours,
                  linewidth=6, alpha=0.55)
        ax.scatter(intervals.rank[order], y, color="#222222", s=14, zorder=3)
        for i in np.flatnonzero(intervals.separable):
            ax.axhline(i + 0.5, color="#bbbbbb", linewidth=0.6, linestyle="--")
        ax.set_yticks(y, labels)
        ax.invert_yaxis()
        ax.set_xlim(0.4, m + 0.6)
        ticks = np.arange(1, m + 1) if m <= 20 else np.unique(np.linspace(1, m, 11).round())
        ax.set_xticks(ticks)
        ax.set_xlabel("rank (1 = best)")
        ax.set_title(f"{title}\n{fmt.percent(intervals.level)} simultaneous; blue: tied with the"
                     f" best; dashed: separable pairs ({intervals.n_separable} of {m - 1})",
                     loc="left", fontsize=9)
        ax.grid(axis="x", color="#dddddd", linewidth=0.5)
        ax.set_axisbelow(True)
    return fig
