"""Comparing systems: is the difference real?

:func:`compare` evaluates several runs on one qrels (or takes per-query values already
computed), aligns their queries explicitly, and tests every system against one or more
baselines, or every pair, with :mod:`irmetrics.stats`. The result, a
:class:`Comparison`, is one table with a row per (measure, system, baseline) and writers
for the terminal, markdown, LaTeX, JSON and CSV.

Comparison never re-implements evaluation: runs go through :class:`~irmetrics.Evaluator`
(qrels encoded once), and everything after that reads per-query values only.
"""

from __future__ import annotations

import copy
import json
import math
import os
import sys
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from ..checks import check_bool, check_choice, check_float, check_int, parameter_error
from .. import stats
from ..evaluate import Evaluator
from ..exceptions import (ComparisonError, DegenerateTestWarning, IrMetricsError, brief_repr,
                          IrMetricsWarning, MissingQueriesWarning, QueryAlignmentWarning)
from ..measures.parse import parse_measures
from ..parallel import map_ordered_warnings, resolve_threads, split_threads
from ..measures.registry import GEOMETRIC, MEAN, STRING, SUM
from ..io.output import file_inputs
from ..io.per_query import PerQueryScores
from ..rag.evaluate import NuggetEvaluator, wants_nuggets
from ..results import Results, lacking_summary
from . import formatting as fmt
from .report import html_report

#: Tests :func:`compare` runs: the paired tests of :func:`irmetrics.stats.paired_test`,
#: and randomised Tukey HSD over all systems at once.
COMPARE_TESTS = ("t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey")

#: Multiple-testing corrections (statsmodels' names), applied per measure.
CORRECTIONS = ("none", "bonferroni", "holm", "holm-sidak", "hommel", "fdr_bh", "fdr_by")

#: The table's columns, in order.
COLUMNS = ("measure", "system", "baseline", "mean", "baseline_mean", "diff", "ci_low",
           "ci_high", "effect_size", "statistic", "p_value", "p_adjusted", "significant",
           "wins", "ties", "losses", "n_queries", "caveat")

#: Why a row's test cannot decide it (column ``caveat``; several join with "; "). Such a
#: row is never significant, whatever its p-value (see :func:`compare`, Notes).
ZERO_VARIANCE = "zero variance"
TOO_FEW_QUERIES = "too few queries"
TOO_FEW_RESAMPLES = "too few resamples"

#: Most resamples a comparison draws (beyond this, time or memory run out before any
#: gain in precision: the Monte Carlo error is already below 2e-4).
MAX_RESAMPLES = 10_000_000

#: Most resampled values the bootstrap test keeps in memory (n_resamples x comparisons):
#: 2 GiB of float64.
_MAX_BOOTSTRAP_VALUES = 2**28

#: How many ids a message lists before "and N more".
_LIST = 5




@dataclass
class Regression:
    """A candidate worse than its baseline (see :meth:`Comparison.regressions`)."""

    measure: str
    system: str
    baseline: str
    diff: float
    p_adjusted: float
    significant: bool

    def __str__(self) -> str:
        verdict = ("significantly worse than baseline {!r}" if self.significant
                   else "worse than baseline {!r} by more than the margin").format(self.baseline)
        return (f"{self.system!r} is {verdict} on {self.measure}: diff {self.diff:+.4f},"
                f" adjusted p {self.p_adjusted:.4g}")


@dataclass
class Comparison:
    """Systems compared measure by measure on the same queries.

    Attributes
    ----------
    systems : list of str
        System names, in the order given.
    baselines : list of str or None
        The baselines; None when every pair was compared.
    measures : list of str
        Output names compared (``map``, ``P_10``, ``nDCG@10``).
    query_ids : ndarray of str
        The queries every system was scored on (byte order).
    scores : dict of str to ndarray
        Measure to per-query values, shape ``(n_systems, n_queries)``.
    missing_queries : dict of str to list of str
        System to the queries it lacks that some other system has; they are left out.
    test, correction, alpha, level, n_resamples, seed
        How the table was computed (``level`` is the confidence level of the intervals,
        ``1 - alpha``).
    notes : list of str
        The warnings :func:`compare` issued (queries left out, rows the test cannot
        decide, ...), as text: the report repeats them on the page.
    sources : dict of str to path
        The files read (``{"qrels": path, "run 'bm25'": path, ...}``): :meth:`to_html`
        refuses to write over one of them.
    bounds : polars.DataFrame or None
        Under ``unjudged="bounds"``, per row of the table: ``diff_low`` and
        ``diff_high`` (the difference at both ends of the bounds over unjudged
        documents), ``p_low_end``, ``p_high_end`` and ``holds`` (the conclusion holds at
        its unfavourable end); None otherwise. See docs/incomplete_judgments.md.
    filled : polars.DataFrame or None
        With ``fill_from``: per (measure, system) and query (``"all"``: the mean over
        the common queries), ``value`` (on the filled qrels), ``human`` (on the human
        qrels alone) and ``machine_share`` (the share of the judged documents in the
        measure's depth labelled by the machine), from
        :func:`irmetrics.judgment_formats.evaluate_filled`; None otherwise.
    uncertain : polars.DataFrame or None
        With ``label_distributions``: per (measure, system), the mean over the common
        queries of the expected values, ``label_se`` (its standard error from the label
        samples alone) and ``ci_low``, ``ci_high`` (Student's t over the per-topic
        expected values: topic and label sampling together), from
        :func:`irmetrics.judgment_formats.evaluate_uncertain`; None otherwise. The
        table's ``ci_low``, ``ci_high`` are then the paired difference's interval over
        the per-topic expected differences, both systems scored on the same label
        samples.

    Notes
    -----
    A comparison keeps what its per-query values came from (the runs as given and the
    Evaluator holding the encoded qrels), so that :meth:`precision_recall_curves` and
    :meth:`to_html` can evaluate the runs again with the same options.
    """

    systems: list
    baselines: list | None
    measures: list
    query_ids: np.ndarray
    scores: dict
    missing_queries: dict
    test: str
    correction: str
    alpha: float
    level: float
    n_resamples: int
    seed: int
    notes: list = field(default_factory=list)
    sources: dict = field(default_factory=dict)
    _table: pl.DataFrame = field(repr=False, default=None)  # type: ignore[assignment]
    # What the per-query values came from, kept for the precision-recall curves of a
    # report: {system: Results or PerQueryScores}, {system: the run as given}, and the
    # Evaluator (qrels already encoded) that scored the runs given as runs.
    _scored: dict | None = field(repr=False, default=None)
    _runs: dict | None = field(repr=False, default=None)
    _evaluator: Any = field(repr=False, default=None)
    #: Under ``unjudged="bounds"``: whether each row's conclusion holds at both ends.
    bounds: pl.DataFrame | None = None
    #: With ``fill_from``: per query and overall, how much rests on machine labels.
    filled: pl.DataFrame | None = None
    #: With ``label_distributions``: expected means, label-sampling error, intervals.
    uncertain: pl.DataFrame | None = None

    def table(self) -> pl.DataFrame:
        """One row per (measure, system, baseline); see docs/compare.md for each column."""
        return self._table

    def means(self) -> pl.DataFrame:
        """Mean of every system (rows) on every measure (columns) over the common queries."""
        data = {"system": self.systems}
        for name in self.measures:
            data[name] = self.scores[name].mean(axis=1)
        return pl.DataFrame(data)

    def rank_intervals(self, measure: str | None = None, *, n_resamples: int = 2000,
                       threads: Any = None) -> stats.RankIntervals:
        """Simultaneous rank intervals of the systems by ``measure`` (default: the first),
        at the comparison's confidence level and seed, from a bootstrap over its common
        queries (:func:`irmetrics.stats.rank_intervals.rank_intervals`); ``rows(self.systems)``
        names them. The HTML report draws them for three systems or more."""
        from ..stats.rank_intervals import rank_intervals

        name = self.measures[0] if measure is None else check_choice("measure", measure,
                                                                      self.measures)
        return rank_intervals(self.scores[name].T, level=self.level, n_resamples=n_resamples,
                              seed=self.seed, threads=threads)

    def regressions(self, *, margin: float | None = None) -> list[Regression]:
        """Rows where the system is worse than its baseline: significantly worse
        (``diff < 0`` and ``significant``: ``p_adjusted <= alpha`` on a row the test can
        decide, see the ``caveat`` column), or, with ``margin``, worse by more than
        ``margin`` whatever the p-value. Every measure counts higher as better."""
        if margin is not None:
            margin = check_float("margin", margin, min=0.0)
        out = []
        for row in self._table.iter_rows(named=True):
            worse_significantly = row["diff"] < 0 and row["significant"]
            worse_by_margin = margin is not None and row["diff"] < -margin
            if worse_significantly or worse_by_margin:
                out.append(Regression(row["measure"], row["system"], row["baseline"],
                                      row["diff"], row["p_adjusted"], bool(row["significant"])))
        return out

    def precision_recall_curves(self) -> pl.DataFrame:
        """Interpolated precision at trec_eval's eleven recall levels, per system.

        ``precision`` is the mean over the comparison's common queries of trec_eval's
        ``iprec_at_recall`` at ``recall`` (0.0, 0.1, ..., 1.0): the highest precision at
        any rank where recall is at least that level. Values are taken from the per-query
        values when the runs already have them (``-m official``, a ``trec_eval -q`` file
        with ``iprec_at_recall``); otherwise the runs are evaluated again with the
        comparison's options (same qrels, ``-c -J -M -l``, semantics).

        Returns
        -------
        polars.DataFrame
            Columns ``system``, ``recall``, ``precision``; 11 rows per system, in the
            order of :attr:`systems`.

        Raises
        ------
        ComparisonError
            A system has no ranking to evaluate: it was given as per-query values without
            ``iprec_at_recall``, or read from standard input (which cannot be read twice).

        Examples
        --------
        >>> import irmetrics as irm
        >>> qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
        >>> a = {"q1": {"d1": 2.0, "x": 1.0, "d2": 0.5}, "q2": {"d3": 1.0}}
        >>> b = {"q1": {"x": 2.0, "d1": 1.0, "d2": 0.5}, "q2": {"y": 2.0, "d3": 1.0}}
        >>> curves = irm.compare(qrels, {"A": a, "B": b}, "map").precision_recall_curves()
        >>> [(s, round(p, 4)) for s, r, p in curves.filter(recall=1.0).rows()]
        [('A', 0.8333), ('B', 0.5833)]
        """

        if self.uncertain is not None:
            raise ComparisonError("the runs were scored under label distributions, whose"
                                  " expected precision-recall curves are not computed")
        request = parse_measures(["iprec_at_recall"])[0]
        names = list(request.output_names)
        levels = [float(n.rsplit("_", 1)[1]) for n in names]
        scored = {}
        for system in self.systems:
            given = (self._scored or {}).get(system)
            if given is not None and all(n in given.names for n in names):
                scored[system] = given
                continue
            run = (self._runs or {}).get(system)
            if run is None or isinstance(run, (Results, PerQueryScores)) \
                    or self._evaluator is None:
                raise ComparisonError(f"run {system!r} was given as per-query values without"
                                      " iprec_at_recall; give its run file to draw its curve")
            if isinstance(run, str) and run == "-":
                raise ComparisonError(f"run {system!r} was read from standard input, which"
                                      " cannot be read a second time for its curve")
            # The comparison's Evaluator with other measures: qrels and options shared.
            evaluator = copy.copy(self._evaluator)
            evaluator.requests = [request]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingQueriesWarning)
                scored[system] = evaluator.evaluate(run)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", QueryAlignmentWarning)  # reported by compare()
            query_ids, values, _ = _align(scored, self.systems, names)
        if not np.array_equal(query_ids, self.query_ids):
            raise ComparisonError("the runs evaluated again do not answer the queries they"
                                  " answered for the comparison (were the files changed?)")
        precision = np.stack([values[n].mean(axis=1) for n in names], axis=1)  # (systems, levels)
        return pl.DataFrame({
            "system": np.repeat(np.asarray(self.systems, dtype=object), len(levels)).tolist(),
            "recall": np.tile(levels, len(self.systems)),
            "precision": precision.reshape(-1),
        })

    # -- writers ---------------------------------------------------------------------

    def describe(self) -> str:
        """One sentence: which test, which correction, alpha, how many queries."""
        test = fmt.TEST_NAMES[self.test]
        if self.test in fmt.RESAMPLING_TESTS:
            test += f", {self.n_resamples:,} resamples, seed {self.seed}"
        correction = ("no correction" if self.correction == "none" or self.test == "tukey"
                      else f"{fmt.CORRECTION_NAMES[self.correction]} correction per measure")
        against = ("every pair of systems" if self.baselines is None
                   else "baseline " + ", ".join(repr(b) for b in self.baselines))
        return (f"{test}; {correction}; alpha = {self.alpha:g}; {fmt.percent(self.level)} confidence"
                f" intervals; {len(self.query_ids)} queries; against {against}.")

    def __str__(self) -> str:
        return self.to_text()

    def to_text(self) -> str:
        """A table for the terminal: per measure, each system against its baseline."""
        head = ["system", "baseline", "mean", "base", "diff", "95% CI", "d", "p", "p_adj",
                "W/T/L"]
        head[5] = f"{fmt.percent(self.level)} CI"
        caveats = self._table["caveat"].drop_nulls().len() > 0
        if caveats:
            head.append("note")
        blocks = [fmt.printable(self.describe()), ""]
        for name in self.measures:
            rows = self._table.filter(pl.col("measure") == name)
            cells = [head] + [[
                fmt.printable(r["system"]), fmt.printable(r["baseline"]), fmt.number(r["mean"]),
                fmt.number(r["baseline_mean"]), fmt.signed(r["diff"]) + fmt.mark(r),
                f"[{fmt.signed(r['ci_low'])}, {fmt.signed(r['ci_high'])}]",
                fmt.number(r["effect_size"], 2), fmt.pvalue(r["p_value"]), fmt.pvalue(r["p_adjusted"]),
                f"{r['wins']}/{r['ties']}/{r['losses']}"] + ([r["caveat"] or ""] if caveats else [])
                for r in rows.iter_rows(named=True)]
            widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
            blocks.append(fmt.printable(name))
            for row in cells:
                blocks.append("  " + "  ".join(
                    c.ljust(w) if i < 2 or i == 10 else c.rjust(w)
                    for i, (c, w) in enumerate(zip(row, widths))).rstrip())
            blocks.append("")
        if self.bounds is not None:
            blocks += bounds_lines(self.bounds)
        if self.filled is not None:
            blocks += filled_lines(self.filled)
        if self.uncertain is not None:
            blocks += uncertain_lines(self.uncertain, self.level)
        blocks += fmt.footnotes(self)
        return "\n".join(blocks) + "\n"

    def to_markdown(self) -> str:
        """The table as GitHub-flavoured markdown, one row per comparison."""
        head = ["measure", "system", "baseline", "mean", "baseline mean", "diff",
                f"{fmt.percent(self.level)} CI", "d_z", "p", "p adj.", "sig.", "W/T/L"]
        lines = ["| " + " | ".join(head) + " |",
                 "|" + "|".join(["---"] * 3 + ["---:"] * 8 + ["---"]) + "|"]
        for r in self._table.iter_rows(named=True):
            # Names are escaped; the numbers are markdown-safe as they are.
            significance = ("yes" if r["significant"] else
                            f"no ({r['caveat']})" if r["caveat"] else "no")
            cells = [fmt.markdown_escape(r["measure"]), fmt.markdown_escape(r["system"]),
                     fmt.markdown_escape(r["baseline"]), fmt.number(r["mean"]),
                     fmt.number(r["baseline_mean"]), fmt.signed(r["diff"]),
                     f"[{fmt.signed(r['ci_low'])}, {fmt.signed(r['ci_high'])}]",
                     fmt.number(r["effect_size"], 2), fmt.pvalue(r["p_value"]), fmt.pvalue(r["p_adjusted"]),
                     significance, f"{r['wins']}/{r['ties']}/{r['losses']}"]
            lines.append("| " + " | ".join(cells) + " |")
        notes = "\n\n".join(fmt.markdown_escape(line) for line in fmt.footnotes(self))
        return "\n".join(lines) + f"\n\n{fmt.markdown_escape(self.describe())}\n\n{notes}\n"

    def to_latex(self, *, digits: int = 4) -> str:
        """A booktabs table as IR papers print it: systems as rows, measures as columns.

        The best mean of each column is bold. Each system is labelled with a letter; a
        superscript letter on a score marks a significant improvement over the system
        with that letter (after correction). The caption names the test and correction.
        """
        check_int("digits", digits, min=0, max=12)
        letters = fmt.letters(len(self.systems))
        # Beyond 26 systems labels have two letters: commas keep "n, w, aa" readable.
        separator = "," if len(self.systems) > 26 else ""
        lines = [r"\begin{table}[t]", r"\centering",
                 r"\begin{tabular}{l" + "r" * len(self.measures) + "}", r"\toprule",
                 "System & " + " & ".join(fmt.latex_escape(m) for m in self.measures) + r" \\",
                 r"\midrule"]
        for i, (system, row) in enumerate(zip(self.systems, fmt.mean_cells(self, digits))):
            cells = [f"({letters[i]}) {fmt.latex_escape(system)}"]
            for value, best, marks in row:
                value = rf"\textbf{{{value}}}" if best else value
                letters_ = separator.join(marks)
                cells.append(value + (rf"$^{{{letters_}}}$" if letters_ else ""))
            lines.append(" & ".join(cells) + r" \\")
        caption = (f"Mean over {len(self.query_ids)} queries. Bold: best per measure. A"
                   " superscript letter marks a significant improvement over the system with"
                   f" that letter ({self.describe()[:-1]}).")
        undecided = sorted(set("; ".join(self._table["caveat"].drop_nulls()).split("; ")) - {""})
        if undecided:
            caption += (" No significance is claimed where the test cannot decide"
                        f" ({', '.join(undecided)}).")
        lines += [r"\bottomrule", r"\end{tabular}",
                  rf"\caption{{{fmt.latex_escape(caption)}}}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict:
        """Settings, query alignment and rows as plain Python (NaN and infinities as None)."""
        def plain(table):
            return [{k: fmt.json_value(v) for k, v in r.items()}
                    for r in table.iter_rows(named=True)]

        bounds = {key: plain(table) for key, table in (
            ("bounds", self.bounds), ("filled", self.filled), ("uncertain", self.uncertain))
            if table is not None}
        return {
            "test": self.test, "correction": self.correction, "alpha": self.alpha,
            "level": self.level, "n_resamples": self.n_resamples, "seed": self.seed,
            "systems": self.systems, "baselines": self.baselines, "measures": self.measures,
            "n_queries": len(self.query_ids), "missing_queries": self.missing_queries,
            "notes": list(self.notes), "rows": plain(self._table), **bounds,
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON (strict: no NaN literals)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    def to_csv(self, *, separator: str = ",") -> str:
        """The table as CSV; floats round-trip exactly, NaN as ``NaN``."""
        return self._table.write_csv(separator=separator, float_precision=None)

    def to_html(self, path=None) -> str:
        """A self-contained HTML report: the table, per-query plots, precision-recall
        curves, the all-pairs p-value matrix and the queries won and lost the most.

        Needs matplotlib (``pip install "irmetrics-exact[plot]"``); plots are inline SVG and
        the page has no external reference, so it opens offline and prints well. The same
        comparison gives the same bytes. See :func:`irmetrics.comparison.html_report`.

        Parameters
        ----------
        path : str or os.PathLike, optional
            Also write the page there (UTF-8, atomically; never over one of
            :attr:`sources`).

        Returns
        -------
        str
            The page.
        """

        return html_report(self, path)




def compare(qrels, runs, measures, *, baseline=None, test="t", correction="holm",
            alpha=0.05, n_resamples=10_000, seed=0, progress=None, threads=None,
            fill_from=None, label_distributions=None, label_samples=1000,
            **evaluate_options) -> Comparison:
    """Test whether systems differ, measure by measure, on the same queries.

    Parameters
    ----------
    qrels : Qrels, path, dict, DataFrame or None
        Judgments for the runs that need evaluating; None when every run is given as
        per-query values (:class:`~irmetrics.Results` or
        :class:`~irmetrics.io.per_query.PerQueryScores`). For nugget measures
        (``all_score``, ``nugget_vital``, ...): nuggetizer's nugget file, the runs being
        assignment files (one holding several runs gives each system the run of its
        name; :class:`irmetrics.rag.NuggetEvaluator`).
    runs : dict or list
        ``{name: run}`` with each run a path, dict, Run, Results or PerQueryScores; or a
        list of paths (names from the file names) or of Results (names from their run
        tags). At least two.
    measures : str or list of str
        Measure names as for :func:`~irmetrics.evaluate` (``"map"``, ``"P.10"``,
        ``"nDCG@10"``). Bookkeeping outputs (``runid``, ``num_q``, ``relstring``) are
        skipped; geometric means (``gm_map``) have no per-query values to test.
    baseline : str, list of str or None
        Test every other system against this baseline (or each of these); None tests
        every pair.
    test : {"t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey"}
        Paired test (:func:`irmetrics.stats.paired_test`), or ``"tukey"`` for randomised
        Tukey HSD over all systems (:func:`irmetrics.stats.tukey_hsd`), which controls the
        family-wise error itself (no further correction).
    correction : {"none", "bonferroni", "holm", "holm-sidak", "hommel", "fdr_bh", "fdr_by"}
        Multiple-testing correction over the comparisons of each measure.
    alpha : float
        Significance level in (0, 1); confidence intervals are at ``1 - alpha``.
    n_resamples, seed : int
        For the resampling tests. Same inputs and seed give identical results.
    progress : bool, optional
        Report evaluation progress on stderr; default: when stderr is a terminal.
    threads : int or None
        Threads evaluating the runs (a run per thread at a time, each read once) and
        drawing the resamples (:func:`irmetrics.parallel.resolve_threads`: default every
        core the process may use; 1 runs in the caller's thread). The comparison, its
        warnings and errors do not depend on it.
    **evaluate_options
        ``relevance_level``, ``judged_only``, ``max_docs``, ``complete``, ``semantics``,
        ``num_docs_in_coll``, ``qrels_columns``, ``run_columns``, ``ties``, ``relevance`` as
        for :func:`~irmetrics.evaluate` (runs and qrels may be Parquet / Arrow IPC files or
        LazyFrames). ``unjudged="bounds"`` also fills :attr:`Comparison.bounds`: whether
        each conclusion holds at both ends of the bounds over unjudged documents
        (docs/incomplete_judgments.md; runs given as evaluated values must carry
        ``<measure>_low`` and ``<measure>_high``).
    fill_from : Qrels, path, dict or DataFrame, optional
        A judge's (machine) qrels filling the holes of ``qrels``: every run is scored by
        :func:`irmetrics.judgment_formats.evaluate_filled`; fills
        :attr:`Comparison.filled` (how much of each score rests on machine labels) and
        :attr:`Comparison.bounds` (whether each conclusion holds at both ends of the
        bounds over the documents still unjudged). Measures must have bounds.
    label_distributions : path, dict or DataFrame, optional
        Label distributions (:func:`irmetrics.judgment_formats.as_label_distribution`):
        every run is scored by its expected values
        (:func:`irmetrics.judgment_formats.evaluate_uncertain`, ``label_samples``
        labellings drawn with ``seed``, the same for every run); fills
        :attr:`Comparison.uncertain`. The paired tests and intervals then run on the
        per-topic expected values, so they carry the topic and the label sampling.
    label_samples : int
        Labellings drawn under ``label_distributions``.

    Returns
    -------
    Comparison

    Notes
    -----
    For each comparison the per-query differences are ``d_q = system_q - baseline_q``;
    ``diff`` is their mean, ``effect_size`` is Cohen's :math:`d_z = \\bar d / s_d`, and
    wins/ties/losses count :math:`d_q > 0`, :math:`= 0`, :math:`< 0`. A row is
    significant when its adjusted p-value is at most ``alpha``.

    Queries are those of :func:`~irmetrics.evaluate` for each run (qrels queries the
    run answers, or every qrels query with ``complete=True``); the comparison keeps
    the queries every system has, warns with :class:`QueryAlignmentWarning` about the
    others and lists them in ``Comparison.missing_queries``. Dropping a query a system
    did not answer flatters that system: ``complete=True`` scores it as trec_eval -c
    does instead.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}, "q3": {"d4": 1, "d5": 1}}
    >>> a = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0, "x": 2.0},
    ...      "q3": {"d4": 1.0, "y": 3.0, "d5": 0.5}}
    >>> b = {"q1": {"d1": 1.0, "d2": 2.0}, "q2": {"d3": 1.0, "x": 3.0, "z": 4.0},
    ...      "q3": {"y": 1.0, "d4": 3.0, "d5": 2.0}}
    >>> cmp = irm.compare(qrels, {"A": a, "B": b}, ["map"], baseline="A")
    >>> row = cmp.table().row(0, named=True)
    >>> row["system"], row["baseline"], round(row["diff"], 4), row["wins"], row["losses"]
    ('B', 'A', -0.0833, 1, 2)
    """
    check_choice("test", test, COMPARE_TESTS)
    check_choice("correction", correction, CORRECTIONS)
    alpha = check_alpha("alpha", alpha)
    n_resamples = check_int("n_resamples", n_resamples, min=1)
    if n_resamples > MAX_RESAMPLES:
        raise parameter_error("n_resamples", f"at most {MAX_RESAMPLES:,} (the Monte Carlo error"
                              " is already below 2e-4)", n_resamples)
    seed = check_int("seed", seed, min=0)
    threads = resolve_threads(threads)
    if progress is not None:
        progress = check_bool("progress", progress)
    else:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())

    if not (isinstance(measures, str) or (isinstance(measures, (list, tuple))
                                          and all(isinstance(m, str) for m in measures))):
        raise parameter_error("measures", "a measure name or a list of measure names",
                              measures)
    named = _named_runs(runs)
    systems = list(named)
    baselines = _baselines(baseline, systems)
    # Every warning is recorded so that the comparison (and its report) can repeat it,
    # then issued again through the caller's filters.
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scorer = _judge_scorer(qrels, measures, evaluate_options, fill_from,
                                   label_distributions, label_samples, seed)
            given = [n for n, r in named.items() if isinstance(r, (Results, PerQueryScores))]
            if scorer is not None and given:
                raise parameter_error("runs", "rankings to score under fill_from or"
                                      " label_distributions (run files, Runs or dicts), not"
                                      f" per-query values (run {given[0]!r})", type(named[given[0]]))
            scored, evaluator = _score_systems(qrels, named, measures, evaluate_options, progress,
                                               threads, scorer)
            names = _comparable_measures(scored, measures)
            query_ids, scores, missing = _align(scored, systems, names)
            if len(query_ids) < 2 and test in ("t", "bootstrap"):
                warnings.warn(f"the systems share {len(query_ids)} query: the {test} test needs two"
                              " or more to estimate a variance (its p-value and interval are NaN)",
                              IrMetricsWarning, stacklevel=2)
            pairs = _pairs(systems, baselines)
            n_tests = len(pairs) * len(names)
            if test == "bootstrap" and n_resamples * n_tests > _MAX_BOOTSTRAP_VALUES:
                raise parameter_error(
                    "n_resamples", f"at most {_MAX_BOOTSTRAP_VALUES // n_tests:,} for the bootstrap"
                    f" test over {n_tests} comparisons (every resampled mean is kept for the"
                    " interval)", n_resamples)
            if progress:
                resampled = f" x {n_resamples:,} resamples" if test in fmt.RESAMPLING_TESTS else ""
                sys.stderr.write(f"irmetrics compare: {test} test, {len(pairs) * len(names)}"
                                 f" comparisons on {len(query_ids)} queries{resampled}\n")
            table = _test_pairs(scores, names, systems, pairs, test=test, correction=correction,
                                alpha=alpha, n_resamples=n_resamples, seed=seed,
                                threads=threads)
            _warn_undecided(table, test)
            bounds = None
            if evaluate_options.get("unjudged") == "bounds" or fill_from is not None:
                bounds = _bounds_table(scored, systems, names, pairs, table, test=test,
                                       correction=correction, alpha=alpha,
                                       n_resamples=n_resamples, seed=seed, threads=threads)
            filled = None if fill_from is None else _filled_table(scored, systems, names,
                                                                  query_ids, scores)
            uncertain = None if label_distributions is None else _uncertain_table(
                scored, systems, names, scores, alpha)
    finally:
        for warning in caught:
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno, source=warning.source)
    notes = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    return Comparison(systems=systems, baselines=baselines, measures=names,
                      query_ids=query_ids, scores=scores, missing_queries=missing, test=test,
                      correction="none" if test == "tukey" else correction, alpha=alpha,
                      level=1.0 - alpha, n_resamples=n_resamples, seed=seed, notes=notes,
                      sources=_sources(qrels, named), _table=table, _scored=scored,
                      _runs=named, _evaluator=evaluator, bounds=bounds, filled=filled,
                      uncertain=uncertain)


class _JudgeScorer:
    """``score(run, threads) -> Results``, and the qrels the report's precision-recall
    curves evaluate the runs on (None: no curves)."""

    def __init__(self, score, curves_qrels):
        self.score, self.curves_qrels = score, curves_qrels

    def __call__(self, run, threads):
        return self.score(run, threads)


def _judge_scorer(qrels, measures, options: dict, fill_from, labels, samples, seed):
    """The :class:`_JudgeScorer` under a judge's labels (``fill_from``) or label
    distributions; None for a plain evaluation. Each is computed in one place:
    :mod:`irmetrics.judgment_formats`."""
    if fill_from is None and labels is None:
        return None
    if fill_from is not None and labels is not None:
        raise parameter_error("label_distributions", "None when fill_from is given (one"
                              " kind of machine judgments at a time)", "<label distributions>")
    if qrels is None:
        raise parameter_error("qrels", "the human judgments that fill_from or"
                              " label_distributions complete", qrels)
    from ..judgment_formats import evaluate_filled, evaluate_uncertain, fill
    if fill_from is not None:
        return _JudgeScorer(lambda run, threads: evaluate_filled(
            qrels, fill_from, run, measures, threads=threads, **options),
            fill(qrels, fill_from).qrels)
    samples = check_int("label_samples", samples, min=2)
    # trec_eval's defaults, as the command line passes them, mean "not set" here.
    defaults = {"judged_only": False, "ties": "trec_eval", "unjudged": "zero"}
    options = {k: v for k, v in options.items() if defaults.get(k, object()) != v}
    return _JudgeScorer(lambda run, threads: evaluate_uncertain(
        qrels, labels, run, measures, samples=samples, seed=seed, threads=threads,
        **options).results, None)


def _filled_table(scored, systems, names, query_ids, scores) -> pl.DataFrame:
    """:attr:`Comparison.filled`: per (measure, system), per query then ``"all"``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, extra, _ = _align(scored, systems, [n + e for n in names
                                               for e in ("_human", "_machine")])
    frames = []
    for name in names:
        for i, system in enumerate(systems):
            values = [scores[name][i], extra[name + "_human"][i], extra[name + "_machine"][i]]
            frames.append(pl.DataFrame({
                "measure": name, "system": system,
                "query_id": [str(q) for q in query_ids] + ["all"],
                **{column: np.append(v, v.mean() if v.size else np.nan)
                   for column, v in zip(("value", "human", "machine_share"), values)}}))
    return pl.concat(frames)


def _uncertain_table(scored, systems, names, scores, alpha) -> pl.DataFrame:
    """:attr:`Comparison.uncertain`: per (measure, system) the mean expected value, its
    label-sampling standard error and the t interval over topics, on the common queries."""
    from ..judgment_formats import label_standard_error

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, errors, _ = _align(scored, systems, [n + "_se" for n in names])
    rows = []
    for name in names:
        for i, system in enumerate(systems):
            values, se = scores[name][i], errors[name + "_se"][i]
            interval = stats.confidence_interval(values, method="t", level=1 - alpha)
            rows.append({"measure": name, "system": system, "mean": float(values.mean()),
                         "label_se": label_standard_error(se),
                         "ci_low": float(interval.low), "ci_high": float(interval.high)})
    return pl.DataFrame(rows)


def _bounds_table(scored, systems, names, pairs, table, *, test, correction, alpha,
                  n_resamples, seed, threads) -> pl.DataFrame:
    """Each row's conclusion at both ends of the bounds over unjudged documents.

    The system's low against the baseline's high is the end least favourable to "the
    system is better" (``diff_low``, ``p_low_end``), the reverse the end least favourable
    to "worse"; a conclusion (the sign of ``diff``, and significance where the row is
    significant) ``holds`` when it holds at its unfavourable end. Each run's bounds
    label the unjudged documents on their own, so a document both runs retrieved may
    take different labels at the two ends: the ends are conservative.
    """
    if test == "tukey":
        raise parameter_error("test", "a paired test under unjudged='bounds'", test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, ends, _ = _align(scored, systems, [n + e for n in names for e in ("_low", "_high")])
    low_high = {n: ends[n + "_low"] for n in names}
    high_low = {n: ends[n + "_high"] for n in names}
    swapped = [(j + len(systems), i) for j, i in pairs]
    rows = {}
    for end, first, second in (("low", low_high, high_low), ("high", high_low, low_high)):
        stacked = {n: np.vstack((second[n], first[n])) for n in names}
        rows[end] = _test_pairs(stacked, names, systems + systems, swapped, test=test,
                                correction=correction, alpha=alpha,
                                n_resamples=n_resamples, seed=seed, threads=threads)
    low, high = rows["low"], rows["high"]
    better = table["diff"].to_numpy() > 0
    worse = table["diff"].to_numpy() < 0
    significant = table["significant"].to_numpy()
    unfavourable_diff = np.where(better, low["diff"].to_numpy(), high["diff"].to_numpy())
    unfavourable_sig = np.where(better, low["significant"].to_numpy(),
                                high["significant"].to_numpy())
    holds = ((better & (unfavourable_diff > 0)) | (worse & (unfavourable_diff < 0))) & (
        ~significant | unfavourable_sig)
    return pl.DataFrame({
        "measure": table["measure"], "system": table["system"],
        "baseline": table["baseline"], "diff": table["diff"],
        "diff_low": low["diff"], "diff_high": high["diff"],
        "p_low_end": low["p_adjusted"], "p_high_end": high["p_adjusted"],
        "significant": table["significant"], "holds": pl.Series(holds, dtype=pl.Boolean),
    })


def bounds_lines(bounds: pl.DataFrame) -> list[str]:
    """The text lines of :attr:`Comparison.bounds`: per row, the difference at both ends
    of the bounds over unjudged documents and whether the conclusion holds."""
    lines = ["Over every labelling of the unjudged documents (system low vs baseline high,"
             " system high vs baseline low):"]
    for r in bounds.iter_rows(named=True):
        verdict = "holds at both ends" if r["holds"] else "does NOT hold at both ends"
        lines.append(f"  {fmt.printable(r['measure'])}: {fmt.printable(r['system'])} vs"
                     f" {fmt.printable(r['baseline'])}: diff {fmt.signed(r['diff'])}"
                     f" in [{fmt.signed(r['diff_low'])}, {fmt.signed(r['diff_high'])}];"
                     f" p at the ends {fmt.pvalue(r['p_low_end'])},"
                     f" {fmt.pvalue(r['p_high_end'])}: {verdict}")
    return lines + [""]


def filled_lines(filled: pl.DataFrame) -> list[str]:
    """The text lines of :attr:`Comparison.filled`: per measure and system, the mean on
    the filled qrels, on the human labels alone and the machine labels' share."""
    lines = ["Holes filled by a judge (mean on the filled qrels; on the human labels"
             " alone; share of the judged documents labelled by the machine):"]
    for r in filled.filter(pl.col("query_id") == "all").iter_rows(named=True):
        lines.append(f"  {fmt.printable(r['measure'])}: {fmt.printable(r['system'])}"
                     f" {fmt.number(r['value'])}; human only {fmt.number(r['human'])};"
                     f" machine share {fmt.number(r['machine_share'])}")
    return lines + [""]


def uncertain_lines(uncertain: pl.DataFrame, level: float) -> list[str]:
    """The text lines of :attr:`Comparison.uncertain`."""
    lines = [f"Under the label distributions (mean expected value; its standard error from"
             f" the label samples; {fmt.percent(level)} interval over topics and label"
             " samples):"]
    for r in uncertain.iter_rows(named=True):
        lines.append(f"  {fmt.printable(r['measure'])}: {fmt.printable(r['system'])}"
                     f" {fmt.number(r['mean'])}; s.e. {fmt.number(r['label_se'], 5)};"
                     f" [{fmt.number(r['ci_low'])}, {fmt.number(r['ci_high'])}]")
    return lines + ["  (the differences' intervals above are over the per-topic expected"
                    " differences, both systems on the same label samples)", ""]


def check_alpha(name: str, alpha) -> float:
    """``alpha`` as a float in (0, 1) whose confidence level ``1 - alpha`` is below 1."""
    alpha = check_float(name, alpha)
    if not (0.0 < alpha < 1.0 and 1.0 - alpha < 1.0):
        raise parameter_error(name, "a real number strictly between 0 and 1 (at least 1e-16,"
                              " so that the confidence level 1 - alpha is below 1)", alpha)
    return alpha


# -- inputs --------------------------------------------------------------------------

def _named_runs(runs) -> dict:
    """``{name: run}`` from a dict, or from a list of paths / Results."""
    if isinstance(runs, dict):
        named = dict(runs)
        for name in named:
            if not isinstance(name, str) or not name:
                raise parameter_error("runs", "a dict with non-empty string names", name)
    elif isinstance(runs, (list, tuple)):
        labels = [_label_of(run) for run in runs]
        if len(set(labels)) < len(labels):
            # Same file names in different folders: the paths as given tell them apart.
            labels = [os.fspath(r) if isinstance(r, (str, os.PathLike)) else label
                      for r, label in zip(runs, labels)]
        if len(set(labels)) < len(labels):
            raise parameter_error("runs", "runs with distinct names (pass a dict to name"
                                  " them)", labels)
        named = dict(zip(labels, runs))
    else:
        raise parameter_error("runs", "a dict {name: run} or a list of paths", type(runs))
    if len(named) < 2:
        raise parameter_error("runs", "at least two runs to compare", list(named))
    return named


def _sources(qrels, named: dict) -> dict:
    """``{what: path}`` of every input read from a file."""
    qrels_path = {"qrels": qrels} if isinstance(qrels, (str, os.PathLike)) else {}
    return {**qrels_path, **file_inputs("run", named)}


def _label_of(run) -> str:
    if isinstance(run, (str, os.PathLike)):
        return os.path.basename(os.fspath(run)) or os.fspath(run)
    if isinstance(run, (Results, PerQueryScores)):
        return run.run_name
    raise parameter_error("runs", "a list of paths or Results (or a dict {name: run})",
                          type(run))


def _baselines(baseline, systems: list) -> list | None:
    if baseline is None:
        return None
    if not isinstance(baseline, (str, list, tuple)):
        raise parameter_error("baseline", "a run name, a list of run names or None", baseline)
    chosen = [baseline] if isinstance(baseline, str) else list(baseline)
    if not chosen:
        raise parameter_error("baseline", "a run name, a list of run names or None", baseline)
    for name in chosen:
        if name not in systems:
            raise parameter_error("baseline", f"one of the runs ({', '.join(map(repr, systems))})",
                                  name)
    if len(set(chosen)) < len(chosen):
        raise parameter_error("baseline", "distinct run names", chosen)
    return chosen


def _score_systems(qrels, named: dict, measures, evaluate_options: dict, progress: bool,
                   threads: int = 1, scorer=None):
    """Per-query values of every system: evaluated (one Evaluator, qrels encoded once;
    a run per thread at a time, each read once) or taken as given; and that Evaluator
    (None when nothing needed evaluating)."""

    unknown = set(evaluate_options) - {"relevance_level", "judged_only", "max_docs",
                                       "complete", "semantics", "num_docs_in_coll",
                                       "qrels_columns", "run_columns", "ties", "relevance",
                                       "unjudged"}
    if unknown:
        raise TypeError(f"compare() got unexpected keyword argument(s): {sorted(unknown)}")
    evaluator = None
    inner = 1
    to_evaluate = [name for name, run in named.items()
                   if not isinstance(run, (Results, PerQueryScores))]
    if to_evaluate:
        if qrels is None:
            raise parameter_error("qrels", f"judgments to evaluate run {to_evaluate[0]!r} (None"
                                  " only when every run is given as per-query values)", qrels)
        # runs side by side, each read on the threads left over (never threads x threads)
        threads, inner = split_threads(threads, len(to_evaluate))
        if scorer is None:
            # Nugget measures: the qrels are a nugget file, the runs assignments (rag.evaluate).
            evaluator = (NuggetEvaluator(qrels, measures, **evaluate_options)
                         if wants_nuggets(measures) else
                         Evaluator(qrels, measures, threads=inner, **evaluate_options))
        elif scorer.curves_qrels is not None:  # this Evaluator only draws the curves
            evaluator = Evaluator(scorer.curves_qrels, measures, threads=inner,
                                  **evaluate_options)
    done = iter(range(1, len(to_evaluate) + 1))
    lock = threading.Lock()

    def evaluate(name: str):
        if scorer is not None:
            result = scorer(named[name], inner)
        else:
            assert evaluator is not None  # made above whenever a run needs evaluating
            result = (evaluator.evaluate_named(name, named[name])
                      if isinstance(evaluator, NuggetEvaluator)
                      else evaluator.evaluate(named[name]))
        if progress:
            with lock:  # runs finish in any order: count them as they do
                sys.stderr.write(f"\rirmetrics compare: evaluated {next(done)}/"
                                 f"{len(to_evaluate)} runs: {name}\x1b[K")
                sys.stderr.flush()
        return result

    # The alignment below reports every missing query once, naming the run.
    evaluated = dict(zip(to_evaluate, map_ordered_warnings(
        evaluate, to_evaluate, threads=threads, ignore=(MissingQueriesWarning,))))
    if progress and evaluator is not None:
        sys.stderr.write("\n")
    return {name: evaluated.get(name, run) for name, run in named.items()}, evaluator


def _comparable_measures(scored: dict, measures) -> list[str]:
    """Output names to compare, less the bookkeeping outputs; every system must have them.

    A name every system already has as an output (``P_10`` from a ``trec_eval -q``
    file) is taken as it is; others are parsed as measure names (``P.10``, ``official``).
    """

    def testable(measure) -> bool:
        if measure.summary == GEOMETRIC:
            raise parameter_error(
                "measures", "measures with per-query values to test"
                f" ({measure.name} is a geometric mean; compare its arithmetic counterpart)",
                measure.name)
        # runid, num_q, relstring: bookkeeping, not a score.
        return measure.summary in (MEAN, SUM) and measure.printed != STRING

    asked = [measures] if isinstance(measures, str) else list(measures or [])
    names = []
    for text in asked:
        if isinstance(text, str) and all(text in values.names for values in scored.values()):
            specs = [v.measure_of(text) for v in scored.values() if isinstance(v, Results)]
            if all(testable(spec) for spec in specs) and text not in names:
                names.append(text)
            continue
        requests = parse_measures([text])
        for request in requests:
            if len(requests) > 1 and request.measure.summary != MEAN:
                continue  # a set (official, all_trec): its scores, not its counts or gm_*
            if testable(request.measure):
                outputs = request.output_names
                if not all(all(n in v.names for v in scored.values()) for n in outputs):
                    # nDCG@10 is ndcg_cut_10 in a trec_eval -q file.
                    outputs = _trec_eval_names(request, scored) or outputs
                names.extend(n for n in outputs if n not in names)
    if not names:
        raise parameter_error("measures", "at least one measure with per-query scores",
                              measures)
    for system, values in scored.items():
        lacking = [n for n in names if n not in values.names]
        if lacking:
            raise ComparisonError(f"run {system!r} has no per-query values of"
                                  f" {', '.join(map(repr, lacking))} (it has"
                                  f" {', '.join(map(repr, values.names[:8]))})")
    return names


def _trec_eval_names(request, scored: dict):
    """The output names of a friendly request (``nDCG@10``) in trec_eval's spelling
    (``ndcg_cut_10``) when every system has those and they are the same measure (no
    option, relevance level or judged_only of its own); else None."""
    if not request.friendly or request.options or request.relevance_level is not None \
            or request.judged_only is not None:
        return None
    params = request.params
    text = request.measure.name + ("" if params is None else
                                   "." + ",".join(str(p) for p in np.atleast_1d(params)))
    try:
        spelled = parse_measures([text])[0]
    except IrMetricsError:
        return None
    same = spelled.measure is request.measure and spelled.params == params
    names = spelled.output_names
    if same and all(all(n in v.names for v in scored.values()) for n in names):
        return names
    return None


def _align(scored: dict, systems: list, names: list):
    """Restrict every system to the queries all of them have; report the others."""
    # Runs read as Latin-1 (ids that are not UTF-8) carry ids as decoded bytes: when
    # some runs are and some are not, every id is compared by its bytes.
    latin1 = any(getattr(scored[s], "id_encoding", "utf-8") == "latin-1" for s in systems)

    def as_read(system, values):
        if latin1 and getattr(scored[system], "id_encoding", "utf-8") != "latin-1":
            values = [q.encode("utf-8").decode("latin-1") for q in values]
        return np.asarray(values, dtype=str)

    ids = {s: as_read(s, list(scored[s].query_ids)) for s in systems}
    # Qrels queries a run did not answer count as missing even when no run answered them.
    unanswered = [as_read(s, list(getattr(scored[s], "missing_query_ids", ())))
                  for s in systems]
    union = np.unique(np.concatenate(list(ids.values()) + unanswered))
    common = union
    for v in ids.values():
        common = np.intersect1d(common, v, assume_unique=True)
    missing = {}
    for s in systems:
        lacking = np.setdiff1d(union, ids[s], assume_unique=True)
        if len(lacking):
            missing[s] = lacking.tolist()
    if len(common) == 0:
        raise ComparisonError("the runs have no query in common, nothing to compare:"
                              + lacking_summary(missing))
    if missing:
        warnings.warn(f"{len(union) - len(common)} of {len(union)} queries are not scored for"
                      " every system and are left out of the comparison:"
                      f"{lacking_summary(missing)}; complete=True (trec_eval -c) scores a"
                      " query a run did not answer as an empty ranking",
                      QueryAlignmentWarning, stacklevel=3)
    positions = {}
    for s in systems:
        order = np.argsort(ids[s], kind="stable")
        positions[s] = order[np.searchsorted(ids[s][order], common)]
    scores = {}
    for name in names:
        rows = []
        for s in systems:
            position = positions[s]
            values = np.asarray(scored[s].values(name), dtype=np.float64)[position]
            bad = ~np.isfinite(values)
            if bad.any():
                shown = ", ".join(brief_repr(str(q)) for q in common[bad][:_LIST])
                raise ComparisonError(f"run {s!r}: {name} is not a finite number on"
                                      f" {int(bad.sum())} queries ({shown}); a paired test"
                                      " needs a value for every query")
            rows.append(values)
        scores[name] = np.vstack(rows)
    return common.astype(object), scores, missing


def _pairs(systems: list, baselines: list | None) -> list[tuple[int, int]]:
    """(system index, baseline index) of every comparison, in table order."""
    if baselines is None:
        return [(j, i) for i in range(len(systems)) for j in range(i + 1, len(systems))]
    return [(j, systems.index(b)) for b in baselines
            for j in range(len(systems)) if systems[j] != b]


# -- statistics -------------------------------------------------------------------------

def _test_pairs(scores: dict, names: list, systems: list, pairs: list, *, test: str,
                correction: str, alpha: float, n_resamples: int, seed: int,
                threads: int) -> pl.DataFrame:
    """Every (measure, pair) tested in one vectorised call; corrections per measure."""

    n_pairs = len(pairs)
    system_index = np.array([p[0] for p in pairs])
    baseline_index = np.array([p[1] for p in pairs])
    # Columns: measure-major, then pair: shape (n_queries, n_measures * n_pairs).
    a = np.hstack([scores[n][system_index].T for n in names])
    b = np.hstack([scores[n][baseline_index].T for n in names])
    paired = stats.paired_test(a, b, test="t" if test == "tukey" else test,
                               n_resamples=n_resamples, seed=seed, level=1.0 - alpha,
                               threads=threads)
    p_value = np.asarray(paired.p_value, dtype=np.float64).reshape(len(names), n_pairs)
    statistic = np.asarray(paired.statistic, dtype=np.float64).reshape(len(names), n_pairs)
    if test == "tukey":
        stacked = np.stack([scores[n] for n in names], axis=-1)  # (systems, queries, measures)
        hsd = stats.tukey_hsd(stacked, n_resamples=n_resamples, seed=seed, threads=threads)
        hsd_p = np.asarray(hsd.p_values)
        p_value = np.stack([hsd_p[system_index, baseline_index, m] for m in range(len(names))])
        statistic = np.stack([np.asarray(hsd.statistic)[system_index, baseline_index, m]
                              for m in range(len(names))])
        p_adjusted = p_value.copy()
    else:
        p_adjusted = stats.adjust_pvalues(p_value, method=correction, axis=-1)
    caveat = _caveats(paired, scores, names, n_pairs, p_adjusted, test=test,
                      correction=correction, alpha=alpha, n_resamples=n_resamples)
    significant = (p_adjusted <= alpha) & np.array([c is None for c in caveat.flat]).reshape(caveat.shape)

    def flat(values):
        return np.asarray(values).reshape(-1)

    n_rows = len(names) * n_pairs
    mean_a = a.mean(axis=0)
    mean_b = b.mean(axis=0)
    return pl.DataFrame({
        "measure": np.repeat(np.asarray(names, dtype=object), n_pairs).tolist(),
        "system": [systems[i] for i in system_index] * len(names),
        "baseline": [systems[i] for i in baseline_index] * len(names),
        "mean": mean_a, "baseline_mean": mean_b,
        "diff": flat(paired.mean_diff), "ci_low": flat(paired.ci_low),
        "ci_high": flat(paired.ci_high), "effect_size": flat(paired.effect_size),
        "statistic": statistic.reshape(-1), "p_value": p_value.reshape(-1),
        "p_adjusted": np.asarray(p_adjusted, dtype=np.float64).reshape(-1),
        "significant": significant.reshape(-1),
        "wins": flat(paired.wins).astype(np.int64), "ties": flat(paired.ties).astype(np.int64),
        "losses": flat(paired.losses).astype(np.int64),
        "n_queries": np.full(n_rows, a.shape[0], dtype=np.int64),
        "caveat": caveat.reshape(-1).tolist(),
    }, schema={**{c: pl.Float64 for c in COLUMNS}, "measure": pl.String, "system": pl.String,
               "baseline": pl.String, "significant": pl.Boolean, "wins": pl.Int64,
               "ties": pl.Int64, "losses": pl.Int64, "n_queries": pl.Int64,
               "caveat": pl.String})


def _caveats(paired, scores: dict, names: list, n_pairs: int, p_adjusted: np.ndarray, *,
             test: str, correction: str, alpha: float, n_resamples: int) -> np.ndarray:
    """Per (measure, pair), why the test cannot decide the row, or None.

    * zero variance (t and bootstrap): every difference is the same, so t is infinite
      and the p-value (0, or 1/(B+1)) measures a variance of zero, not evidence.
    * too few queries: even at the smallest p-value a distribution-free test allows on
      the row's differences (:func:`irmetrics.stats.smallest_p_value`, :math:`2^{1-m}`
      with m differing queries;
      Tukey HSD: the ``k!`` relabellings of ``(k!)^m`` permutations), the corrected
      p-value would exceed alpha, and either the row is below alpha all the same (its
      p-value comes from the test's assumptions alone) or the comparison has so few
      queries that no row could reach alpha (say so rather than print no star).
    * too few resamples: a Monte Carlo p-value is at least 1/(B+1), above alpha
      (after correction).
    """
    shape = (len(names), n_pairs)
    n_queries = scores[names[0]].shape[1]
    reasons: list[list[list[str]]] = [[[] for _ in range(n_pairs)] for _ in names]

    def add(where, reason):
        for m, j in zip(*np.nonzero(where)):
            reasons[m][j].append(reason)

    def smallest(differing):
        """Smallest corrected p-value a distribution-free test allows (per row)."""
        if test == "tukey":
            k = scores[names[0]].shape[0]
            return np.exp(np.minimum(0.0, (1.0 - differing) * math.lgamma(k + 1)))
        return stats.adjust_pvalues(stats.smallest_p_value(differing), method=correction,
                                    axis=-1)

    if test in ("t", "bootstrap"):
        add(np.asarray(paired.zero_variance).reshape(shape), ZERO_VARIANCE)
    if test == "tukey":
        differing = np.array([np.count_nonzero(np.ptp(scores[n], axis=0) > 0) for n in names])
        differing = np.repeat(differing[:, None], n_pairs, axis=1)
    else:
        differing = (np.asarray(paired.wins) + np.asarray(paired.losses)).reshape(shape)
    unreachable = smallest(differing) > alpha
    add(unreachable & ((p_adjusted <= alpha) | (smallest(np.full(shape, n_queries)) > alpha)),
        TOO_FEW_QUERIES)
    if test in ("bootstrap", "tukey") or (test == "randomization" and not paired.exact):
        resample_floor = np.full(shape, 1.0 / (n_resamples + 1.0))
        if test != "tukey":
            resample_floor = stats.adjust_pvalues(resample_floor, method=correction, axis=-1)
        add(resample_floor > alpha, TOO_FEW_RESAMPLES)
    out = np.full(shape, None, dtype=object)
    for m in range(len(names)):
        for j in range(n_pairs):
            if reasons[m][j]:
                out[m, j] = "; ".join(reasons[m][j])
    return out


def _warn_undecided(table: pl.DataFrame, test: str) -> None:
    """One :class:`DegenerateTestWarning` per kind of undecided row, with an example row
    and what to do instead."""
    rows = table.filter(pl.col("caveat").is_not_null())
    if not rows.height:
        return
    for caveat in (ZERO_VARIANCE, TOO_FEW_QUERIES, TOO_FEW_RESAMPLES):
        hit = rows.filter(pl.col("caveat").str.contains(caveat, literal=True))
        if not hit.height:
            continue
        first = hit.row(0, named=True)
        example = (f"{first['measure']}: {first['system']!r} vs {first['baseline']!r},"
                   f" {first['n_queries']} queries, {first['wins'] + first['losses']} differing,"
                   f" diff {first['diff']:+.4f}, p {fmt.pvalue(first['p_value'])}")
        more = f" and {hit.height - 1} more" if hit.height > 1 else ""
        message = (f"{hit.height} comparison{'s' if hit.height > 1 else ''} not marked"
                   f" significant ({example}{more}): {fmt.caveat_text(caveat, test)}")
        warnings.warn(message, DegenerateTestWarning, stacklevel=3)


__all__ = ["COLUMNS", "COMPARE_TESTS", "CORRECTIONS", "MAX_RESAMPLES", "TOO_FEW_QUERIES",
           "TOO_FEW_RESAMPLES", "ZERO_VARIANCE", "Comparison", "ComparisonError",
           "DegenerateTestWarning", "QueryAlignmentWarning", "Regression", "compare"]
