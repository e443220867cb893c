"""One self-contained HTML page per comparison: the table, the significance, the pictures.

:func:`html_report` (also :meth:`Comparison.to_html` and ``irmetrics compare --format
html``) writes a single file that needs nothing else: plots are inline SVG drawn by
:mod:`irmetrics.plot`, styles are inline CSS, there is no script, font file or external
reference of any kind, so the page opens offline in any browser and prints well. The same
comparison gives the same bytes (no timestamp; SVG ids from a fixed salt).

Every run name, query id and measure name is HTML-escaped where it is written; SVG text
drawn by matplotlib is XML-escaped by matplotlib.
"""

from __future__ import annotations

import html
import io
import re
import warnings

import numpy as np

from .. import __version__
from ..exceptions import ComparisonError
from ..io.output import write_text
from . import formatting as fmt
from . import plot

#: Queries listed per comparison among the largest wins and among the largest losses.
TOP_QUERIES = 5

#: Comparisons drawn and listed per measure (an all-pairs comparison of many systems has
#: many; the table and the p-value matrix still show every one).
MAX_PAIRS = 12


#: From this many systems on, the page shows the rank interval of every system.
RANKED_SYSTEMS = 3

#: Resamples of the rank intervals at most (the comparison's own count when lower).
RANK_RESAMPLES = 2000


def html_report(comparison, path=None) -> str:
    """The comparison as one self-contained HTML page.

    The page holds, in order: the settings (test, correction, alpha, confidence level,
    resamples and seed, query counts, irmetrics version); a summary table of means with
    significance letters; per measure, the comparison table (difference, interval,
    Cohen's d_z, p-values, wins/ties/losses), the per-query differences against each
    baseline, the per-query score distributions and the queries with the largest wins and
    losses; for an all-pairs comparison, the matrix of adjusted p-values (and, with
    ``test="tukey"``, the Tukey HSD groups); the interpolated precision-recall curves when
    every system can be evaluated for them (otherwise the reason); the queries left out.

    Parameters
    ----------
    comparison : Comparison
    path : str or os.PathLike, optional
        Also write the page there (UTF-8), atomically (a failed write leaves no half
        page); a path that is one of the comparison's inputs is refused.

    Returns
    -------
    str

    Raises
    ------
    ParameterError
        ``path`` is one of the inputs (``comparison.sources``).
    ImportError
        matplotlib is not installed (the message says how to install it).

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    >>> a = {"q1": {"d1": 1.0, "x": 2.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}}
    >>> b = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"d2": 1.0, "y": 2.0}, "q3": {"d3": 1.0}}
    >>> page = irm.compare(qrels, {"A": a, "B": b}, "map", baseline="A").to_html()
    >>> page.startswith("<!DOCTYPE html>"), page.count("<svg"), "http://" in page
    (True, 3, False)
    """

    plot.require_matplotlib()  # fail early, with the install hint
    return finish_page(_Page(comparison).render(), path, inputs=comparison.sources)


def finish_page(text: str, path=None, *, inputs=None) -> str:
    """An HTML page as pure ASCII (other characters as references, which HTML reads back
    in text and attributes alike), also written to ``path`` when given: the page then
    survives any stdout encoding, such as a Windows console's cp1252, which cannot hold
    matplotlib's minus sign U+2212.

    Parameters
    ----------
    text : str
        The page.
    path : str or os.PathLike, optional
        Also written there, atomically (:func:`irmetrics.io.output.write_text`).
    inputs : dict of str to path, optional
        ``{description: path}`` of files the page must never overwrite.

    Returns
    -------
    str
        The ASCII page.

    Raises
    ------
    ParameterError
        ``path`` is one of ``inputs``.
    OSError
        ``path`` cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "page.html")
    ...     page = finish_page("<p>caf\\xe9 \\u2212 1</p>", path)
    ...     with open(path, "rb") as f:
    ...         f.read()
    b'<p>caf&#233; &#8722; 1</p>'
    >>> page
    '<p>caf&#233; &#8722; 1</p>'
    """
    text = text.encode("ascii", "xmlcharrefreplace").decode("ascii")
    if path is not None:
        write_text(path, text, inputs=inputs)
    return text


def letter_groups(means, significant) -> list[str]:
    """Compact letter display: systems sharing a letter are not significantly different.

    Letters are assigned by Piepho's insert-and-absorb algorithm (Piepho, *J. Comput.
    Graph. Stat.* 2004): start with one group holding every system; for each significantly
    different pair, split every group holding both into one without each; drop groups
    contained in another. Two systems then share a letter exactly when they are not
    significantly different. Letters are ordered by the best mean in each group (``a``
    holds the best system).

    Parameters
    ----------
    means : array-like, shape (m,)
        Each system's mean (only orders the letters).
    significant : array-like of bool, shape (m, m)
        Symmetric: ``significant[i, j]`` when systems i and j differ significantly.

    Returns
    -------
    list of str
        Each system's letters.

    Examples
    --------
    >>> sig = [[False, True, True], [True, False, False], [True, False, False]]
    >>> letter_groups([0.5, 0.4, 0.3], sig)
    ['a', 'b', 'b']
    >>> letter_groups([0.5, 0.4, 0.3], [[False, False, True], [False, False, False],
    ...                                 [True, False, False]])
    ['a', 'ab', 'b']
    """
    means = np.asarray(means, dtype=np.float64)
    significant = np.asarray(significant, dtype=bool)
    m = len(means)
    groups = [frozenset(range(m))]
    # A few systems: a loop over pairs and groups is clearer than anything vectorised.
    for i in range(m):
        for j in range(i + 1, m):
            if not (significant[i, j] or significant[j, i]):
                continue
            split = []
            for group in groups:
                if i in group and j in group:
                    split += [group - {i}, group - {j}]
                else:
                    split.append(group)
            unique = set(split)
            groups = [g for g in unique if g and not any(g < other for other in unique)]
    rank = np.argsort(-means, kind="stable")
    position = np.empty(m, dtype=np.int64)
    position[rank] = np.arange(m)
    groups.sort(key=lambda g: sorted(position[list(g)].tolist()))
    letters = fmt.letters(len(groups))
    return ["".join(letter for letter, g in zip(letters, groups) if s in g) for s in range(m)]


# -- the page ---------------------------------------------------------------------------

def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _slug(index: int, measure: str) -> str:
    """An anchor id: the measure's position (ids stay valid whatever the name holds)."""
    return f"m{index}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", measure).strip("-")


class _Page:
    def __init__(self, comparison):
        self.cmp = comparison
        self.figures = 0

    # Each figure gets its own id prefix: several inline SVGs in one page must not share
    # ids (matplotlib numbers them per figure).
    def svg(self, fig, caption: str) -> str:

        self.figures += 1
        return figure_html(figure_svg(fig, f"f{self.figures}-"), caption)

    def render(self) -> str:
        c = self.cmp
        sections = [self.notes()] if c.notes else []
        sections.append(self.summary())
        for index, measure in enumerate(c.measures):
            sections.append(self.measure_section(index, measure))
        if c.baselines is None:
            sections.append(self.pairs_section())
        if len(c.systems) >= RANKED_SYSTEMS:
            sections.append(self.ranks_section())
        sections.append(self.curves_section())
        if c.missing_queries:
            sections.append(self.missing_section())
        title = f"Comparison of {', '.join(c.systems)}"
        return (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<meta name=\"generator\" content=\"irmetrics {_e(__version__)}\">\n"
            f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"<header>\n<h1>{_e(title)}</h1>\n{self.settings()}\n</header>\n"
            f"{self.navigation()}\n<main>\n" + "\n".join(sections) + "\n</main>\n"
            f"<footer>{self.footer()}</footer>\n</body>\n</html>\n")

    def settings(self) -> str:
        c = self.cmp
        n_left_out = len({q for qids in c.missing_queries.values() for q in qids})
        test = fmt.TEST_NAMES[c.test]
        correction = ("none (Tukey HSD controls the family-wise error over all pairs)"
                      if c.test == "tukey" else
                      "none" if c.correction == "none" else
                      f"{fmt.CORRECTION_NAMES[c.correction]}, over the comparisons of each measure")
        resampling = (f"{c.n_resamples:,} resamples, seed {c.seed}"
                      if c.test in ("randomization", "bootstrap", "tukey")
                      else f"not resampled (seed {c.seed} unused)")
        against = ("every pair of systems" if c.baselines is None
                   else "every other system against " + " and against ".join(c.baselines))
        queries = f"{len(c.query_ids):,} common to every system"
        if n_left_out:
            queries += f"; {n_left_out:,} left out (see <a href=\"#left-out\">below</a>)"
        rows = [("Test", _e(test)), ("Correction", _e(correction)),
                ("Significance", f"alpha = {c.alpha:g}; {fmt.percent(c.level)} confidence"
                                 " intervals"),
                ("Resampling", _e(resampling)),
                ("Compared", _e(against)),
                ("Queries", queries),
                ("Measures", _e(", ".join(c.measures))),
                ("irmetrics", _e(__version__))]
        cells = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
        return f"<dl class=\"settings\">{cells}</dl>\n<p class=\"lead\">{_e(c.describe())}</p>"

    def notes(self) -> str:
        """The warnings compare() printed on stderr, repeated where the reader looks."""
        items = "".join(f"<li>{_e(note)}</li>" for note in self.cmp.notes)
        return ("<section id=\"warnings\" class=\"warnings\">\n<h2>Warnings</h2>\n"
                f"<ul>{items}</ul>\n</section>")

    def navigation(self) -> str:
        c = self.cmp
        links = ["<a href=\"#warnings\">Warnings</a>"] if c.notes else []
        links.append("<a href=\"#summary\">Summary</a>")
        links += [f"<a href=\"#{_slug(i, m)}\">{_e(m)}</a>" for i, m in enumerate(c.measures)]
        if c.baselines is None:
            links.append("<a href=\"#pairs\">All pairs</a>")
        if len(c.systems) >= RANKED_SYSTEMS:
            links.append("<a href=\"#ranks\">Rank intervals</a>")
        links.append("<a href=\"#curves\">Precision-recall</a>")
        if c.missing_queries:
            links.append("<a href=\"#left-out\">Queries left out</a>")
        return "<nav>" + " ".join(links) + "</nav>"

    def summary(self) -> str:
        """Means per system and measure, best in bold, letters of significant improvements."""
        c = self.cmp
        letters = fmt.letters(len(c.systems))
        head = "".join(f"<th class=\"num\">{_e(m)}</th>" for m in c.measures)
        body = []
        colours = plot.system_colours(len(c.systems))
        for i, (system, row) in enumerate(zip(c.systems, fmt.mean_cells(c, 4))):
            role = (" <span class=\"tag\">baseline</span>"
                    if c.baselines and system in c.baselines else "")
            cells = [f"<td class=\"label\">({letters[i]})</td>",
                     f"<th scope=\"row\"><span class=\"swatch\" style=\"background:"
                     f"{colours[i]}\"></span>{_e(system)}{role}</th>"]
            for value, best, marks in row:
                value = f"<strong>{value}</strong>" if best else value
                cells.append(f"<td class=\"num\">{value}"
                             + (f"<sup>{','.join(marks)}</sup>" if marks else "") + "</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        return (f"<section id=\"summary\">\n<h2>Summary</h2>\n"
                f"<p>Mean over the {len(c.query_ids):,} common queries. Bold: best per measure."
                " A superscript letter marks a significant improvement over the system with"
                f" that letter (adjusted p &le; {c.alpha:g}).</p>\n"
                f"<table class=\"summary\"><thead><tr><th></th><th>system</th>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>\n</section>")

    def measure_section(self, index: int, measure: str) -> str:

        c = self.cmp
        rows = list(c.table().filter(measure=measure).iter_rows(named=True))
        parts = [f"<section id=\"{_slug(index, measure)}\">", f"<h2>{_e(measure)}</h2>",
                 self.rows_table(rows)]
        if c.bounds is not None:
            parts.append(self.bounds_table(measure))
        if c.filled is not None:
            parts.append(self.filled_table(measure))
        if c.uncertain is not None:
            parts.append(self.uncertain_table(measure))
        shown = [(r["system"], r["baseline"]) for r in rows][:MAX_PAIRS]
        more = (f" The first {MAX_PAIRS} of {len(rows)} comparisons are drawn."
                if len(rows) > MAX_PAIRS else "")
        shared = " Every panel has the same y-scale." if len(shown) > 1 else ""
        differences = self.svg(
            plot.per_query_differences(c, measure, pairs=shown, max_pairs=MAX_PAIRS),
            f"Per-query differences in {measure}, sorted from the largest win (left) to the"
            f" largest loss (right): blue bars are queries the system wins, vermilion bars"
            f" queries it loses, the grey band on the zero line queries where both score the"
            f" same.{shared}{more}")
        if plot.discrete_values(c.scores[measure]) is None:
            described = ("box from the first to the third quartile, line at the median,"
                         " whiskers to the furthest score within 1.5 interquartile ranges, one"
                         " dot per query, white diamond at the mean.")
        else:
            described = ("the values are few, so each disc is one value, its area the share"
                         " of the system's queries with that value (labelled from 10%); white"
                         " diamond at the mean.")
        distributions = self.svg(plot.score_distributions(c, measure),
                                 f"{measure} per query and system: {described}")
        parts.append(f"<div class=\"plots\">{differences}{distributions}</div>")
        parts.append(self.extremes(measure, shown))
        parts.append("</section>")
        return "\n".join(parts)

    def bounds_table(self, measure: str) -> str:
        """Each conclusion at both ends of the bounds over unjudged documents."""
        body = []
        for r in self.cmp.bounds.filter(measure=measure).iter_rows(named=True):
            verdict = "holds" if r["holds"] else "<strong>does not hold</strong>"
            body.append(
                f"<tr><td>{_e(r['system'])}</td><td>{_e(r['baseline'])}</td>"
                f"<td class=\"num\">{_e(fmt.signed(r['diff']))}</td>"
                f"<td class=\"num\">[{_e(fmt.signed(r['diff_low']))},"
                f" {_e(fmt.signed(r['diff_high']))}]</td>"
                f"<td class=\"num\">{_e(fmt.pvalue(r['p_low_end']))},"
                f" {_e(fmt.pvalue(r['p_high_end']))}</td><td>{verdict}</td></tr>")
        head = ("<tr><th>system</th><th>baseline</th><th class=\"num\">difference</th>"
                "<th class=\"num\">at the ends</th><th class=\"num\">p at the ends</th>"
                "<th>conclusion</th></tr>")
        return ("<h3>Over every labelling of the unjudged documents</h3>\n"
                f"<table class=\"rows\"><thead>{head}</thead><tbody>{''.join(body)}</tbody>"
                "</table>\n<p class=\"note\">The ends pair the system's lowest value with the"
                " baseline's highest and the reverse (each run's unjudged documents labelled on"
                " their own: conservative); a conclusion holds when its direction, and its"
                " significance where the row is significant, hold at its unfavourable end."
                "</p>")

    def filled_table(self, measure: str) -> str:
        """How much of each system's score rests on the judge's labels."""
        rows = self.cmp.filled.filter(measure=measure, query_id="all").iter_rows(named=True)
        return _system_table(
            "Holes filled by a judge", ["filled", "human labels only", "machine share"],
            [(r["system"], [fmt.number(r["value"]), fmt.number(r["human"]),
                            fmt.number(r["machine_share"])]) for r in rows],
            "Means over the common queries: on the human qrels filled with the judge's"
            " labels where humans did not judge, on the human labels alone, and the share"
            " of the judged documents in the measure's depth that the judge labelled (per"
            " query in the comparison's <code>filled</code> table).")

    def uncertain_table(self, measure: str) -> str:
        """Expected values under the label distributions, with their intervals."""
        rows = self.cmp.uncertain.filter(measure=measure).iter_rows(named=True)
        return _system_table(
            "Under the label distributions",
            ["expected mean", "label s.e.", f"{fmt.percent(self.cmp.level)} interval"],
            [(r["system"], [fmt.number(r["mean"]), fmt.number(r["label_se"], 5),
                            f"[{fmt.number(r['ci_low'])}, {fmt.number(r['ci_high'])}]"])
             for r in rows],
            "Expected values over labellings drawn from the label distributions (the same"
            " draws for every system); the intervals are over topics of the per-topic"
            " expected values, so they carry the topic and the label sampling, and the"
            " differences' intervals above are over the per-topic expected differences.")

    def rows_table(self, rows) -> str:
        c = self.cmp
        head = ("<tr><th>system</th><th>baseline</th><th class=\"num\">mean</th>"
                "<th class=\"num\">baseline mean</th><th class=\"num\">difference</th>"
                f"<th class=\"num\">{fmt.percent(c.level)} CI</th><th class=\"num\">d<sub>z</sub></th>"
                "<th class=\"num\">p</th><th class=\"num\">p adjusted</th>"
                "<th class=\"num\">wins / ties / losses</th></tr>")
        body = []
        for r in rows:
            mark = ""
            css = ""
            if r["significant"]:
                mark = "<span class=\"sig\" title=\"significant\">*</span>"
                css = " class=\"better\"" if r["diff"] > 0 else " class=\"worse\""
            elif r["caveat"]:
                mark = (f"<span class=\"undecided\" title=\"not decided by the test:"
                        f" {_e(r['caveat'])}\">!</span>")
            body.append(
                f"<tr{css}><td class=\"name\">{_e(r['system'])}</td>"
                f"<td class=\"name\">{_e(r['baseline'])}</td>"
                f"<td class=\"num\">{fmt.number(r['mean'])}</td>"
                f"<td class=\"num\">{fmt.number(r['baseline_mean'])}</td>"
                f"<td class=\"num\">{fmt.signed(r['diff'])}{mark}</td>"
                f"<td class=\"num\">[{fmt.signed(r['ci_low'])}, {fmt.signed(r['ci_high'])}]</td>"
                f"<td class=\"num\">{fmt.number(r['effect_size'], 2)}</td>"
                f"<td class=\"num\">{fmt.pvalue(r['p_value'])}</td>"
                f"<td class=\"num\">{fmt.pvalue(r['p_adjusted'])}</td>"
                f"<td class=\"num\">{r['wins']} / {r['ties']} / {r['losses']}</td></tr>")
        notes = "".join(f"<br>{_e(line)}" for line in fmt.footnotes(c)[1:])
        return (f"<table class=\"rows\"><thead>{head}</thead><tbody>{''.join(body)}</tbody>"
                "</table>\n<p class=\"note\"><span class=\"sig\">*</span> significant at"
                f" alpha = {c.alpha:g} after correction; d<sub>z</sub> = Cohen's d<sub>z</sub>"
                " (mean difference / its standard deviation); differences are system minus"
                f" baseline.{notes}</p>")

    def extremes(self, measure: str, pairs) -> str:
        """Per comparison, the queries with the largest wins and the largest losses."""
        c = self.cmp
        scores = c.scores[measure]
        query_ids = np.asarray(c.query_ids, dtype=object)
        blocks = []
        for system, baseline in pairs:
            a = scores[c.systems.index(system)]
            b = scores[c.systems.index(baseline)]
            diff = a - b
            order = np.argsort(-diff, kind="stable")
            wins = order[:TOP_QUERIES][diff[order[:TOP_QUERIES]] > 0]
            losing = np.argsort(diff, kind="stable")[:TOP_QUERIES]
            losses = losing[diff[losing] < 0]
            tables = []
            for title, picked in (("largest wins", wins), ("largest losses", losses)):
                if not len(picked):
                    tables.append(f"<div><h4>{title}</h4><p class=\"note\">none</p></div>")
                    continue
                body = "".join(
                    f"<tr><td class=\"qid\">{_e(query_ids[q])}</td>"
                    f"<td class=\"num\">{fmt.number(a[q])}</td><td class=\"num\">{fmt.number(b[q])}</td>"
                    f"<td class=\"num {'win' if diff[q] > 0 else 'loss'}\">{fmt.signed(diff[q])}</td></tr>"
                    for q in picked)
                tables.append(
                    f"<div><h4>{title}</h4><table class=\"extremes\"><thead><tr><th>query</th>"
                    f"<th class=\"num name\">{_e(system)}</th>"
                    f"<th class=\"num name\">{_e(baseline)}</th>"
                    f"<th class=\"num\">difference</th></tr></thead><tbody>{body}</tbody>"
                    "</table></div>")
            blocks.append(f"<div class=\"pair\"><h3>{_e(system)} vs {_e(baseline)}</h3>"
                          f"<div class=\"tables\">{''.join(tables)}</div></div>")
        return ("<h3 class=\"extremes-title\">Queries won and lost the most</h3>\n"
                "<div class=\"pairs\">" + "\n".join(blocks) + "</div>")

    def pairs_section(self) -> str:
        """Matrix of adjusted p-values of every pair; Tukey HSD groups for test='tukey'."""
        c = self.cmp
        m = len(c.systems)
        table = c.table()
        parts = ["<section id=\"pairs\">", "<h2>All pairs</h2>",
                 "<p>Adjusted p-value of every pair of systems"
                 + (" (randomised Tukey HSD: already adjusted for all pairs)" if c.test == "tukey"
                    else "") + f". Shaded: significant at alpha = {c.alpha:g}; the arrow points"
                 " to the better system of the pair.</p>"]
        if c.test == "tukey":
            parts.append("<p>Groups: systems that share a letter are not significantly"
                         " different (compact letter display; <em>a</em> holds the best"
                         " mean).</p>")
        for measure in c.measures:
            p = np.full((m, m), np.nan)
            diff = np.zeros((m, m))
            significant = np.zeros((m, m), dtype=bool)
            for r in table.filter(measure=measure).iter_rows(named=True):
                i, j = c.systems.index(r["system"]), c.systems.index(r["baseline"])
                p[i, j] = p[j, i] = r["p_adjusted"]
                diff[i, j], diff[j, i] = r["diff"], -r["diff"]
                # The table's verdict: a row the test cannot decide is never significant.
                significant[i, j] = significant[j, i] = r["significant"]
            means = c.scores[measure].mean(axis=1)
            groups = letter_groups(means, significant) if c.test == "tukey" else None
            head = "".join(f"<th class=\"num name\">{_e(s)}</th>" for s in c.systems)
            if groups is not None:
                head += "<th>group</th>"
            body = []
            for i, system in enumerate(c.systems):
                cells = [f"<th scope=\"row\">{_e(system)}</th>",
                         f"<td class=\"num\">{fmt.number(means[i])}</td>"]
                for j in range(m):
                    if i == j:
                        cells.append("<td class=\"num diag\">&mdash;</td>")
                        continue
                    arrow = "&larr;" if diff[i, j] > 0 else "&uarr;" if diff[i, j] < 0 else ""
                    css = "num sig-cell" if significant[i, j] else "num"
                    cells.append(f"<td class=\"{css}\">{fmt.pvalue(p[i, j])}"
                                 + (f" {arrow}" if significant[i, j] else "") + "</td>")
                if groups is not None:
                    cells.append(f"<td class=\"group\">{groups[i]}</td>")
                body.append("<tr>" + "".join(cells) + "</tr>")
            parts.append(f"<h3>{_e(measure)}</h3>\n<table class=\"matrix\"><thead><tr><th></th>"
                         f"<th class=\"num\">mean</th>{head}</tr></thead>"
                         f"<tbody>{''.join(body)}</tbody></table>")
        parts.append("<p class=\"note\">&larr;: the row's system is better; &uarr;: the"
                     " column's system is better.</p>")
        parts.append("</section>")
        return "\n".join(parts)

    def ranks_section(self) -> str:
        """Per measure, the simultaneous rank interval of every system (topic bootstrap)."""
        c = self.cmp
        figures = []
        for measure in c.measures:
            if c.scores[measure].shape[1] < 2:
                continue
            intervals = c.rank_intervals(measure,
                                         n_resamples=max(1, min(c.n_resamples, RANK_RESAMPLES)))
            tied = [c.systems[j] for j in intervals.order if intervals.tied_with_best[j]]
            figures.append(self.svg(
                plot.rank_intervals(intervals, c.systems, title=f"{measure}: rank intervals"),
                f"Ranks each system could hold by {measure}, all at once with"
                f" {fmt.percent(c.level)} confidence (bootstrap over queries, max-t over all"
                f" pairs; Mogstad et al. 2024); dot: observed rank. Tied with the best:"
                f" {', '.join(tied)}. Separable adjacent pairs: {intervals.n_separable} of"
                f" {len(c.systems) - 1}."))
        if not figures:
            return ""
        return ("<section id=\"ranks\">\n<h2>Rank intervals</h2>\n"
                f"<div class=\"plots\">{''.join(figures)}</div>\n</section>")

    def curves_section(self) -> str:

        head = "<section id=\"curves\">\n<h2>Interpolated precision-recall</h2>\n"
        try:
            curves = self.cmp.precision_recall_curves()
        except ComparisonError as exc:
            return (head + "<p class=\"omitted\">Not drawn: " + _e(str(exc)) + ".</p>\n"
                    "</section>")
        caption = ("Mean interpolated precision at recall 0.0, 0.1, ..., 1.0 (trec_eval's"
                   " iprec_at_recall) over the common queries, with the comparison's"
                   " evaluation options.")
        figure = self.svg(plot.precision_recall(self.cmp), caption)
        systems = self.cmp.systems
        recall = curves.filter(system=systems[0])["recall"].to_list()
        precision = {s: curves.filter(system=s)["precision"].to_list() for s in systems}
        body = "".join(
            f"<tr><td class=\"num\">{level:.1f}</td>"
            + "".join(f"<td class=\"num\">{fmt.number(precision[s][k])}</td>" for s in systems)
            + "</tr>" for k, level in enumerate(recall))
        values = ("<table class=\"curves\"><thead><tr><th class=\"num\">recall</th>"
                  + "".join(f"<th class=\"num name\">{_e(s)}</th>" for s in systems)
                  + f"</tr></thead><tbody>{body}</tbody></table>")
        return head + f"<div class=\"plots curves\">{figure}{values}</div>\n</section>"

    def missing_section(self) -> str:
        c = self.cmp
        items = "".join(
            f"<li><strong>{_e(system)}</strong> lacks {len(qids):,}: "
            f"<span class=\"qid\">{_e(', '.join(map(str, qids)))}</span></li>"
            for system, qids in c.missing_queries.items())
        return ("<section id=\"left-out\">\n<h2>Queries left out</h2>\n<p>These queries are"
                " not scored for every system and are not in the comparison (leaving out a"
                " query a system did not answer flatters that system; <code>-c</code> scores"
                " it as an empty ranking instead).</p>\n"
                f"<ul>{items}</ul>\n</section>")

    def footer(self) -> str:
        return (f"Made by irmetrics {_e(__version__)} (<code>irmetrics compare --format"
                " html</code>). Every measure is read as higher-is-better. A p-value says a"
                " difference is probably not zero, not that it matters: read the interval and"
                " the effect size first.")


_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')

#: A tag of matplotlib's SVG: its text content has ``<`` and ``>`` escaped, so this never
#: reaches into text (a run name such as ``a id="b"`` stays as it is).
_TAG = re.compile(r"<[^<>]+>")


def _system_table(title: str, columns: list, rows: list, note: str) -> str:
    """A titled table with a row per system (``(system, [cells])``, cells plain text)
    and a note (HTML) below it."""
    head = "<tr><th>system</th>" + "".join(f"<th class=\"num\">{_e(c)}</th>"
                                            for c in columns) + "</tr>"
    body = "".join(f"<tr><td>{_e(system)}</td>"
                   + "".join(f"<td class=\"num\">{_e(cell)}</td>" for cell in cells) + "</tr>"
                   for system, cells in rows)
    return (f"<h3>{_e(title)}</h3>\n<table class=\"rows\"><thead>{head}</thead>"
            f"<tbody>{body}</tbody></table>\n<p class=\"note\">{note}</p>")


def inline_svg(svg: str, prefix: str) -> str:
    """matplotlib's SVG document as an element for an HTML page.

    The XML prolog and DOCTYPE go (the DOCTYPE names a DTD by URL), and so do the
    namespace declarations, which the HTML parser supplies itself for inline SVG;
    ``xlink:href`` becomes SVG 2's ``href``. Every id, and every reference to one, gets
    ``prefix`` so that the figures of one page never share an id. Only tags are
    rewritten, never text.

    Parameters
    ----------
    svg : str
        An SVG document as matplotlib writes it.
    prefix : str
        Put before every id and reference, unique per figure of the page (``"f1-"``).

    Returns
    -------
    str
        The ``<svg>`` element, with ``role="img"``.

    Examples
    --------
    >>> doc = ('<?xml version="1.0"?>\\n<!DOCTYPE svg>\\n<svg width="9pt"'
    ...        ' xmlns="http://www.w3.org/2000/svg"'
    ...        ' xmlns:xlink="http://www.w3.org/1999/xlink">'
    ...        '<defs><path id="m"/></defs><use xlink:href="#m"/><text>id="m"</text></svg>\\n')
    >>> inline_svg(doc, "f1-")
    '<svg role="img" width="9pt"><defs><path id="f1-m"/></defs><use href="#f1-m"/><text>id="m"</text></svg>'
    """
    def rewrite(tag: re.Match) -> str:
        text = _XMLNS.sub("", tag.group(0)).replace("xlink:href=", "href=")
        text = re.sub(r'(\sid=")', rf"\1{prefix}", text)
        return text.replace('href="#', f'href="#{prefix}').replace("url(#", f"url(#{prefix}")

    svg = _TAG.sub(rewrite, svg[svg.index("<svg"):])
    return svg.replace("<svg ", "<svg role=\"img\" ", 1).rstrip()


def figure_svg(fig, prefix: str) -> str:
    """A matplotlib figure as an inline SVG element (:func:`inline_svg`), drawn with
    :data:`irmetrics.comparison.plot.STYLE` and no date or creator metadata, so the same
    figure gives the same bytes.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    prefix : str
        As for :func:`inline_svg`.

    Returns
    -------
    str
        The ``<svg>`` element.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> def line():
    ...     fig = Figure(figsize=(2, 1.5))
    ...     _ = fig.subplots().plot([0, 1], [0, 1])
    ...     return fig
    >>> svg = figure_svg(line(), "f1-")
    >>> svg.startswith('<svg role="img"'), 'id="f1-axes_1"' in svg
    (True, True)
    >>> svg == figure_svg(line(), "f1-")
    True
    """
    buffer = io.StringIO()
    with plot.style(), warnings.catch_warnings():
        # SVG text stays text that the browser draws with its own fonts: a glyph
        # matplotlib's font lacks (CJK, emoji, tab) is no loss here, only noise.
        warnings.filterwarnings("ignore", r"Glyph \d+ .* missing from font", UserWarning)
        fig.savefig(buffer, format="svg",
                    metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    return inline_svg(buffer.getvalue(), prefix)


def figure_html(svg: str, caption: str) -> str:
    """An HTML ``<figure>``: ``svg`` as it is, then ``caption`` (HTML-escaped).

    Parameters
    ----------
    svg : str
        An inline SVG element (:func:`figure_svg`).
    caption : str
        Plain text.

    Returns
    -------
    str

    Examples
    --------
    >>> figure_html("<svg></svg>", "P@10 <by> system")
    '<figure><svg></svg><figcaption>P@10 &lt;by&gt; system</figcaption></figure>'
    """
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


CSS = """
:root { --ink: #1d1d1f; --muted: #5f6368; --rule: #d9dce1; --band: #f5f6f8;
        --win: #0072b2; --loss: #d55e00; --sig: #fff2cc; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 24px 28px 48px; color: var(--ink);
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
       Arial, sans-serif; background: #fff; }
h1 { font-size: 1.6em; margin: 0 0 12px; overflow-wrap: anywhere; }
h2 { font-size: 1.3em; margin: 36px 0 10px; padding-bottom: 4px;
     border-bottom: 2px solid var(--rule); overflow-wrap: anywhere; }
h3 { font-size: 1.05em; margin: 22px 0 8px; overflow-wrap: anywhere; }
h4 { font-size: 0.9em; margin: 4px 0; color: var(--muted); font-weight: 600; }
.settings { display: grid; grid-template-columns: max-content 1fr; gap: 2px 18px;
            margin: 0 0 10px; font-size: 0.92em; }
.settings dt { color: var(--muted); }
.settings dd { margin: 0; overflow-wrap: anywhere; }
.lead { color: var(--muted); font-size: 0.9em; margin: 6px 0 0; }
nav { position: sticky; top: 0; background: #fff; padding: 8px 0;
      border-bottom: 1px solid var(--rule); z-index: 1; font-size: 0.92em; }
nav a { margin-right: 14px; color: var(--win); text-decoration: none; }
nav a:hover { text-decoration: underline; }
/* A table wider than the page (many measures, the matrix of many systems) scrolls by
   itself rather than widening the page. */
table { border-collapse: collapse; margin: 8px 0; font-size: 0.9em; display: block;
        max-width: 100%; overflow-x: auto; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--rule); text-align: left;
         vertical-align: top; }
thead th { border-bottom: 2px solid #9aa0a6; font-weight: 600; }
tbody tr:nth-child(even) { background: var(--band); }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.label { color: var(--muted); }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
          margin-right: 6px; }
.tag { font-size: 0.75em; color: var(--muted); border: 1px solid var(--rule);
       border-radius: 3px; padding: 0 4px; margin-left: 6px; font-weight: normal; }
sup { color: var(--win); font-weight: 600; }
.sig { color: var(--ink); font-weight: 700; }
.undecided { color: var(--loss); font-weight: 700; cursor: help; }
.warnings { background: #fff8e6; border-left: 4px solid #e69f00; padding: 4px 14px; }
.warnings h2 { border: none; margin-top: 12px; }
.warnings li { overflow-wrap: anywhere; }
tr.better td:nth-child(5) { color: var(--win); font-weight: 600; }
tr.worse td:nth-child(5) { color: var(--loss); font-weight: 600; }
td.win { color: var(--win); }
td.loss { color: var(--loss); }
/* Run names are often file paths: let them wrap anywhere rather than widen the page. */
.name, th[scope="row"] { overflow-wrap: anywhere; min-width: 7em; white-space: normal; }
.qid { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
       overflow-wrap: anywhere; }
.note { color: var(--muted); font-size: 0.85em; margin: 4px 0 12px; }
.omitted { background: var(--band); border-left: 4px solid var(--rule); padding: 8px 12px; }
.plots { display: grid; grid-template-columns: minmax(0, 2.2fr) minmax(0, 1fr); gap: 18px;
         align-items: start; margin: 12px 0; }
.plots.curves { display: flex; flex-wrap: wrap; gap: 24px; }
.plots.curves figure { flex: 0 1 600px; }
figure { margin: 0; }
.plots > figure + figure { max-width: 440px; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 0.82em; margin-top: 4px; }
.pairs { display: flex; flex-wrap: wrap; gap: 8px 40px; }
table.extremes th, table.extremes td { padding: 3px 6px; }
.pair h3 { margin: 8px 0 2px; font-size: 0.95em; }
.tables { display: flex; flex-wrap: wrap; gap: 20px; }
.matrix td.sig-cell { background: var(--sig); font-weight: 600; }
.matrix td.diag { color: var(--rule); }
.group { font-weight: 700; letter-spacing: 0.1em; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }
footer { margin-top: 40px; padding-top: 10px; border-top: 1px solid var(--rule);
         color: var(--muted); font-size: 0.82em; }
@media (max-width: 820px) { .plots { grid-template-columns: minmax(0, 1fr); } }
@media print {
  @page { margin: 14mm; }
  body { max-width: none; padding: 0; font-size: 10.5pt; }
  nav { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  h3, h4 { break-after: avoid; page-break-after: avoid; }
  figure, table, .pair { break-inside: avoid; page-break-inside: avoid; }
  table { font-size: 8pt; }
  th, td, table.extremes th, table.extremes td { padding: 2px 4px; }
  thead th.num { white-space: normal; }
  .plots { grid-template-columns: minmax(0, 1fr); }
  tbody tr:nth-child(even), .matrix td.sig-cell { -webkit-print-color-adjust: exact;
                                                   print-color-adjust: exact; }
  a { color: inherit; text-decoration: none; }
  table { display: table; overflow: visible; }
}
"""

__all__ = ["CSS", "MAX_PAIRS", "TOP_QUERIES", "figure_html", "figure_svg", "finish_page",
           "html_report", "inline_svg", "letter_groups"]
