"""The cells of the meta-evaluation tables, shared by the text, markdown and LaTeX writers
(:mod:`irmetrics.meta_evaluation.report`) and the HTML page
(:mod:`irmetrics.meta_evaluation.page`)."""

from __future__ import annotations

import numpy as np

from ..comparison import formatting as fmt

#: The note under the text and markdown tables (and in the HTML page's footer).
FOOTNOTE = ("CI: percentile bootstrap interval; swaps: system pairs ordered oppositely;"
            " top-k: overlap of the top k systems; power: share of system pairs a paired"
            " test separates; min. difference: the difference from which on the swap rate"
            " stays at most 5%.")


def printable(text) -> str:
    """``text`` with control characters (a newline or tab in a run or qrels name) written
    as escapes, so that a name cannot break a table's rows."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def cell(value) -> str:
    """A table cell: numbers to 4 digits, intervals as ``[low, high]``, ints as they are,
    names with their control characters escaped (:func:`printable`)."""
    if isinstance(value, tuple):
        return f"[{fmt.number(value[0], 2)}, {fmt.number(value[1], 2)}]"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return fmt.number(float(value))
    return printable(value)
