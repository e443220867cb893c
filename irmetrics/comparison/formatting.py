"""Cells of the comparison tables, shared by every writer: numbers, p-values, system
letters, escaping for markdown and LaTeX, and the names of tests and corrections. Used by
the text, markdown, LaTeX and JSON writers of :class:`Comparison` and by the HTML report."""

from __future__ import annotations

import math

import numpy as np

RESAMPLING_TESTS = ("randomization", "bootstrap", "tukey")

TEST_NAMES = {
    "t": "Paired t-test", "randomization": "Paired randomisation (sign-flip) test",
    "bootstrap": "Paired bootstrap test", "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "Sign test", "tukey": "Randomised Tukey HSD blocked on queries",
}
CORRECTION_NAMES = {
    "none": "no", "bonferroni": "Bonferroni", "holm": "Holm", "holm-sidak": "Holm-Sidak",
    "hommel": "Hommel", "fdr_bh": "Benjamini-Hochberg", "fdr_by": "Benjamini-Yekutieli",
}


def mean_cells(comparison, digits: int) -> list[list[tuple[str, bool, list]]]:
    """Per system, per measure: ``(mean to digits, best of its column, letters of the
    systems it is significantly better than)`` -- the summary table of LaTeX and HTML."""
    labels = letters(len(comparison.systems))
    better = significant_improvements(comparison)
    means = {name: comparison.scores[name].mean(axis=1) for name in comparison.measures}
    rounded = {name: np.round(means[name], digits) for name in comparison.measures}
    return [[(f"{means[name][i]:.{digits}f}", bool(rounded[name][i] == rounded[name].max()),
              [labels[j] for j in sorted(better.get((name, i), ()))])
             for name in comparison.measures] for i in range(len(comparison.systems))]


def significant_improvements(comparison) -> dict:
    """``{(measure, system index): {indices of systems it is significantly better than}}``."""
    index = {s: i for i, s in enumerate(comparison.systems)}
    better: dict = {}
    for r in comparison.table().iter_rows(named=True):
        if not r["significant"] or r["diff"] == 0:
            continue
        s, b = index[r["system"]], index[r["baseline"]]
        winner, loser = (s, b) if r["diff"] > 0 else (b, s)
        better.setdefault((r["measure"], winner), set()).add(loser)
    return better


def caveat_text(caveat: str, test: str) -> str:
    """What a caveat of the table (``zero variance``, ``too few queries``, ``too few
    resamples``) means for ``test``, and what to do instead."""
    if caveat == "zero variance":
        return (f"the difference is the same on every query, so the {test} test's statistic"
                " is infinite and its p-value measures a variance of zero, not evidence; the"
                " randomization test (--test randomization, test='randomization'; exact up to"
                " 20 queries) tests such differences")
    if caveat == "too few queries":
        if test in ("t", "bootstrap"):
            return ("too few queries differ for any distribution-free test to reach alpha"
                    " (the exact randomization test cannot go below 2/2^m with m differing"
                    f" queries, before correction); a smaller p-value of the {test} test rests"
                    " on its assumptions alone; compare on more queries")
        if test == "tukey":
            return ("too few queries differ for the permutation p-value to reach alpha (it"
                    " cannot go below (k!)^(1-m) with k systems and m queries on which they"
                    " differ); compare on more queries")
        return (f"too few queries differ for the {test} test to reach alpha (it cannot go"
                " below 2/2^m with m differing queries, before correction); compare on more"
                " queries")
    if caveat == "too few resamples":
        return ("with B resamples no p-value goes below 1/(B+1), which cannot reach alpha;"
                " use more resamples (--resamples, n_resamples=)")
    return caveat


def mark(row) -> str:
    """The mark after a row's difference: ``*`` significant, ``!`` undecided (a caveat)."""
    return "*" if row["significant"] else "!" if row["caveat"] else " "


def footnotes(comparison) -> list[str]:
    """What the marks of a table mean, and that its intervals are unadjusted."""
    c = comparison
    if c.test == "tukey":
        adjusted = "by Tukey HSD over all pairs"
    elif c.correction == "none":
        adjusted = "without correction"
    else:
        adjusted = f"after the {CORRECTION_NAMES[c.correction]} correction"
    lines = [(f"* significant at alpha = {c.alpha:g} {adjusted}; d = Cohen's d_z;"
              " W/T/L = queries where the system wins/ties/loses.")]
    if c.test == "tukey" or c.correction != "none":
        lines.append("The stars use the adjusted p-values; the confidence intervals are not"
                     " adjusted for multiple comparisons (one may exclude 0 without a star).")
    caveats = sorted(set("; ".join(c.table()["caveat"].drop_nulls()).split("; ")) - {""})
    for caveat in caveats:
        lines.append(f"! not decided by the test ({caveat}): {caveat_text(caveat, c.test)}.")
    return lines


# -- formatting helpers -------------------------------------------------------------------

#: Control characters (a newline or an escape in a file name) as Python writes them, so
#: that a name stays on its line of a table and cannot drive the terminal.
_CONTROL = {i: repr(chr(i))[1:-1] for i in [*range(32), *range(127, 160)]}


def printable(text, *, keep: str = "") -> str:
    """``text`` with control characters (but those in ``keep``) escaped: ``'a\\nb'``
    for a newline."""
    table = {k: v for k, v in _CONTROL.items() if chr(k) not in keep} if keep else _CONTROL
    return str(text).translate(table)


def letters(n: int) -> list[str]:
    """a, b, ..., z, aa, ab, ... for labelling systems."""
    out = []
    for i in range(n):
        label = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            label = chr(ord("a") + r) + label
        out.append(label)
    return out


def number(value, digits: int = 4) -> str:
    if value is None or not math.isfinite(value):
        return "nan" if value is None or math.isnan(value) else ("inf" if value > 0 else "-inf")
    return f"{value:.{digits}f}"


def signed(value) -> str:
    if value is None or not math.isfinite(value):
        return number(value)
    # A difference that rounds to zero prints +0.0000, not -0.0000 from float noise.
    return f"{value:+.4f}" if round(value, 4) != 0 else "+0.0000"


def pvalue(value) -> str:
    if value is None or math.isnan(value):
        return "nan"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def percent(level: float) -> str:
    """95%, 99.9%: the confidence level without rounding it to a whole percent."""
    return f"{level * 100:.10g}%"


#: Characters that GitHub markdown would read as a cell border, emphasis, code, a link,
#: HTML or math inside a table cell; a backslash prints them literally.
_MARKDOWN_SPECIAL = frozenset("\\|*_`[]<>$~")


def markdown_escape(text: str) -> str:
    return "".join("\\" + c if c in _MARKDOWN_SPECIAL else c for c in printable(text))


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}",
                  # OT1, LaTeX's default font encoding, prints these as other glyphs.
                  "|": r"\textbar{}", "<": r"\textless{}", ">": r"\textgreater{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in printable(text))


def json_value(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
