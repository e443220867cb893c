"""One self-contained HTML page per meta-evaluation (``irmetrics agree --format html``).

Built like the comparison report (:mod:`irmetrics.comparison.report`): its stylesheet,
inline SVG figures (:mod:`irmetrics.meta_evaluation.plot`), no script and no external
reference, the same meta-evaluation giving the same bytes. Every name is HTML-escaped.
"""

from __future__ import annotations

import html
import warnings

from .. import __version__
from ..comparison.report import CSS, RANK_RESAMPLES, RANKED_SYSTEMS, figure_html, figure_svg, finish_page
from ..comparison.plot import rank_intervals as rank_interval_plot, require_matplotlib
from ..stats.rank_intervals import rank_intervals
from . import plot
from .cells import FOOTNOTE, cell


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _table(head, rows, align) -> str:
    css = {"r": "num", "l": "name"}
    heads = "".join(f"<th class=\"{css[a]}\">{_e(h)}</th>" for h, a in zip(head, align))
    body = "".join(
        "<tr>" + "".join(f"<td class=\"{css[a]}\">{_e(cell(v))}</td>"
                         for v, a in zip(row, align)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>"


def html_page(meta, path=None) -> str:
    """The meta-evaluation as one self-contained HTML page.

    The page holds the settings; the ranking agreement table and, per measure, the
    scatter of every system's mean under each qrels set against the reference; the judges'
    agreement table and the label confusion matrix of each qrels set against the judges'
    reference; the stability table (discriminative power, swap rate); the leaderboards.

    Parameters
    ----------
    meta : MetaEvaluation
    path : str or os.PathLike, optional
        Also write the page there (UTF-8, atomically; never over one of the inputs,
        :attr:`Grid.sources`).

    Returns
    -------
    str

    Raises
    ------
    ImportError
        matplotlib is not installed (the message says how to install it).
    ParameterError
        ``path`` is one of the qrels or run files read.

    Examples
    --------
    >>> import irmetrics as irm
    >>> human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
    >>> llm = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1, "d": 0}}
    >>> runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}},
    ...         "y": {"q1": {"b": 2, "a": 1}, "q2": {"d": 2, "c": 1}}}
    >>> page = irm.meta_evaluate({"human": human, "llm": llm}, runs, "P.1",
    ...                          n_resamples=20, swap_trials=5).to_html()
    >>> page.startswith("<!DOCTYPE html>"), page.count("<svg"), "http://" in page
    (True, 2, False)
    """
    require_matplotlib()  # fail early, with the install hint
    figures = 0

    def svg(fig, caption: str) -> str:
        nonlocal figures
        figures += 1
        return figure_html(figure_svg(fig, f"f{figures}-"), caption)

    tables = meta.tables()
    by_title = {title: (head, rows, align) for title, head, rows, align in tables}
    sections = []
    ranking_title = next((t for t, *_ in tables if t.startswith("Ranking agreement")), None)
    if ranking_title is not None:
        parts = [f"<section id=\"rankings\">\n<h2>{_e(ranking_title)}</h2>",
                 _table(*by_title[ranking_title])]
        for measure in meta.measures:
            parts.append(f"<h3>{_e(measure)}</h3>")
            scatter = plot.means_scatter(meta, measure)
            # At most about its drawn size: one panel stretched to the page's width would
            # fill the screen.
            width = int(scatter.get_size_inches()[0] * 130)
            parts.append(f"<div style=\"max-width: {width}px\">" + svg(
                scatter, f"Mean {measure} of each run under each qrels set (y) against the"
                " reference (x), on the topics both share. On the dashed line the two agree;"
                " two runs in the wrong order are a swap.") + "</div>")
        parts.append("</section>")
        sections.append("\n".join(parts))
    if meta.judges:
        title = next(t for t, *_ in tables if t.startswith("Judges"))
        parts = [f"<section id=\"judges\">\n<h2>{_e(title)}</h2>", _table(*by_title[title]),
                 "<div class=\"plots curves\">"]
        for qrels, agreement in meta.judges.items():
            parts.append(svg(plot.label_confusion(agreement),
                             f"Labels of the (query, doc) pairs judged by both"
                             f" {meta.judges_reference} (rows) and {qrels} (columns); shade:"
                             " share of the row."))
        parts.append("</div>\n</section>")
        sections.append("\n".join(parts))
    title = "Stability: discriminative power and swap rate"
    sections.append(f"<section id=\"stability\">\n<h2>{_e(title)}</h2>\n"
                    f"{_table(*by_title[title])}\n</section>")
    boards = [t for t, *_ in tables if t.startswith("Leaderboard:")]
    sections.append("<section id=\"leaderboards\">\n<h2>Leaderboards</h2>\n" + "\n".join(
        f"<h3>{_e(t)}</h3>{_table(*by_title[t])}" for t in boards)
        + _rank_interval_figures(meta, svg) + "\n</section>")
    label_title = next((t for t, *_ in tables if t.startswith("Label distributions")), None)
    if label_title is not None:
        sections.append(f"<section id=\"label-distributions\">\n<h2>{_e(label_title)}</h2>\n"
                        f"{_table(*by_title[label_title])}\n</section>")
    grid = meta.grid
    page_title = f"Meta-evaluation of {', '.join(grid.qrels_names)}"
    settings = [("Qrels sets", ", ".join(grid.qrels_names)), ("Reference", meta.reference),
                ("Runs", ", ".join(grid.run_names)), ("Measures", ", ".join(meta.measures)),
                ("irmetrics", __version__)]
    cells = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in settings)
    links = [("rankings", "Rankings")] if ranking_title else []
    links += [("judges", "Judges")] if meta.judges else []
    links += [("stability", "Stability"), ("leaderboards", "Leaderboards")]
    nav = "<nav>" + " ".join(f"<a href=\"#{a}\">{t}</a>" for a, t in links) + "</nav>"
    text = (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta name=\"generator\" content=\"irmetrics {_e(__version__)}\">\n"
        f"<title>{_e(page_title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<header>\n<h1>{_e(page_title)}</h1>\n<dl class=\"settings\">{cells}</dl>\n"
        f"<p class=\"lead\">{_e(meta.describe())}</p>\n</header>\n{nav}\n<main>\n"
        + "\n".join(sections) + "\n</main>\n"
        f"<footer>Made by irmetrics {_e(__version__)} (<code>irmetrics agree --format"
        f" html</code>). {_e(FOOTNOTE)}</footer>\n"
        "</body>\n</html>\n")
    return finish_page(text, path, inputs=meta.grid.sources)


def _rank_interval_figures(meta, svg) -> str:
    """Per measure and qrels set, the runs' simultaneous rank intervals (three runs or
    more): does a judgment set separate the systems it ranks?"""
    grid = meta.grid
    settings = meta.settings
    if len(grid.run_names) < RANKED_SYSTEMS or settings.get("n_resamples", 1000) < 1:
        return ""
    figures = []
    for measure in meta.measures:
        with warnings.catch_warnings():  # left-out queries were reported with the tables
            warnings.simplefilter("ignore")
            _, scores = grid.scores(measure)
        for qrels, matrix in scores.items():
            intervals = rank_intervals(
                matrix, level=settings.get("level", 0.95),
                n_resamples=max(1, min(settings.get("n_resamples", 1000), RANK_RESAMPLES)),
                seed=settings.get("seed", 0))
            figures.append(svg(
                rank_interval_plot(intervals, grid.run_names,
                                   title=f"{measure} under {qrels}: rank intervals"),
                f"Ranks each run could hold by {measure} under {qrels}, all at once (bootstrap"
                f" over the shared queries; Mogstad et al. 2024); dot: observed rank;"
                f" {intervals.n_separable} of {len(grid.run_names) - 1} adjacent pairs"
                " separable."))
    return "<h3>Rank intervals</h3>\n<div class=\"plots\">" + "".join(figures) + "</div>"


__all__ = ["html_page"]
