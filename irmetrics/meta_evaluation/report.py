"""meta_evaluate(): a grid of qrels x runs and every statistic of its leaderboards and
judges in one object, with the writers of ``irmetrics agree`` and its ``--fail-if`` gate.

The tables are those of :class:`~irmetrics.meta_evaluation.grid.Grid` (leaderboards,
ranking agreement, discriminative power, swap rate) and of
:func:`~irmetrics.meta_evaluation.judges.judge_agreement`; the writers share the cells of
:mod:`irmetrics.comparison.formatting` with ``irmetrics compare``.
"""

from __future__ import annotations

import difflib
import inspect
import json
import math
import re
import warnings
from dataclasses import dataclass, field

import polars as pl

from ..checks import check_choice, check_int, parameter_error
from ..comparison import MAX_RESAMPLES
from ..comparison import formatting as fmt
from ..exceptions import MissingQueriesWarning, ParameterTypeError, QueryAlignmentWarning
from ..parallel import resolve_threads
from ..stats import POWER_TESTS, RANKING_STATISTICS
from ..rag.evaluate import assessor_labels, wants_nuggets
from .grid import EVALUATE_OPTIONS, LEADERBOARD, Grid, evaluate_grid, named_inputs, nugget_grid
from .cells import FOOTNOTE, cell, printable
from ._distributions import checked, distribution_grid, most_likely, plain_qrels
from .judges import JUDGE_COLUMNS, _label_text, judge_agreement

#: Statistics a ``--fail-if`` condition can name, by table.
GATE_STATISTICS = {
    "rankings": tuple(f"{s}{end}" for s in RANKING_STATISTICS for end in ("", "_low", "_high")),
    "judges": JUDGE_COLUMNS,
    "stability": ("power", "significant", "swap_rate", "min_difference"),
}

_CONDITION = re.compile(r"^\s*([A-Za-z_]+)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$")
_OPERATORS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
              ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}

#: Statistics that count (pairs, systems): a gate message writes them as numbers of things.
_COUNTS = ("swaps", "swaps_low", "swaps_high", "both", "only_a", "only_b", "significant")

#: Columns of :meth:`MetaEvaluation.to_csv`.
CSV_COLUMNS = ("section", "reference", "qrels", "run", "measure", "statistic", "value",
               "ci_low", "ci_high")


@dataclass(frozen=True)
class Condition:
    """A ``--fail-if`` condition: ``statistic operator threshold`` (``tau_b<0.9``)."""

    statistic: str
    operator: str
    threshold: float

    @classmethod
    def parse(cls, text: str) -> "Condition":
        """Read ``"tau_b < 0.9"`` (operators ``<``, ``<=``, ``>``, ``>=``).

        Examples
        --------
        >>> Condition.parse("kappa<=0.4")
        Condition(statistic='kappa', operator='<=', threshold=0.4)
        """
        found = _CONDITION.match(text) if isinstance(text, str) else None
        known = [s for names in GATE_STATISTICS.values() for s in names]
        if found is None:
            raise parameter_error("condition", "STATISTIC OP NUMBER such as 'tau_b<0.9'"
                                  " (OP one of <, <=, >, >=)", text)
        name, operator, number = found.groups()
        if name not in known:
            raise parameter_error("condition", f"a statistic among {', '.join(known)}", name)
        try:
            threshold = float(number)
        except ValueError:
            raise parameter_error("condition", "a number after the operator", number) from None
        if not math.isfinite(threshold):
            raise parameter_error("condition", "a finite threshold", number)
        return cls(name, operator, threshold)

    def __str__(self) -> str:
        return f"{self.statistic} {self.operator} {self.threshold:g}"


@dataclass
class MetaEvaluation:
    """Judgment sets compared through the leaderboards they give and the labels they hold.

    Attributes
    ----------
    grid : Grid
        Every run evaluated against every qrels set.
    reference : str
        The reference: a qrels name, or ``"leaderboard"``.
    measures : list of str
        The measures whose leaderboards are compared.
    rankings : polars.DataFrame
        :meth:`Grid.ranking_agreement` against the reference.
    judges : dict of str to JudgeAgreement
        Each other qrels set against the judges' reference (the reference qrels, or the
        first qrels set when the reference is a leaderboard); empty for one qrels set.
    stability : polars.DataFrame
        Per (qrels, measure): ``power``, ``significant``, ``pairs``
        (:meth:`Grid.discriminative_power`), ``swap_rate`` and ``min_difference``
        (:meth:`Grid.swap_rate`).
    settings : dict
        How everything was computed (k, resamples, seed, level, test, alpha, ...).
    leaderboard : mapping or None
        The reference leaderboard, when the reference is one.
    uncertain : polars.DataFrame or None
        With ``label_distributions``: per (qrels, run, measure) of each distribution set,
        ``label_se``, the standard error of the run's mean expected value from the label
        samples alone (:func:`irmetrics.judgment_formats.label_standard_error`).
    """

    grid: Grid
    reference: str
    measures: list
    rankings: pl.DataFrame
    judges: dict
    judges_reference: str | None
    stability: pl.DataFrame
    settings: dict
    leaderboard: object = None
    uncertain: pl.DataFrame | None = None
    _tables: list = field(default_factory=list, repr=False)

    # -- the gate ------------------------------------------------------------------------

    def failures(self, conditions) -> list[str]:
        """One message per row where a condition holds (or its statistic is undefined):
        ``qrels 'llm' vs 'human' on map: tau_b = 0.8000 < 0.9``. Conditions are
        :class:`Condition` objects or their text (``"tau_b<0.9"``); each is checked on
        the table that has its statistic (rankings, judges or stability). A condition on
        a table that has no row (the judges of one qrels set against a leaderboard)
        fails too: a gate that checks nothing must not pass."""
        out = []
        for condition in conditions:
            if not isinstance(condition, Condition):
                condition = Condition.parse(condition)
            values = list(self._values_of(condition.statistic))
            if not values:
                out.append(f"no table has {condition.statistic} (no judges are compared"
                           f" when one qrels set faces a leaderboard), so '{condition}'"
                           " cannot be ruled out")
            for where, value in values:
                if value is None or not math.isfinite(value):
                    out.append(f"{where}: {condition.statistic} is undefined (NaN), so"
                               f" '{condition}' cannot be ruled out")
                elif _OPERATORS[condition.operator](value, condition.threshold):
                    shown = (_label_text(value) if condition.statistic in _COUNTS
                             else fmt.number(value))
                    out.append(f"{where}: {condition.statistic} = {shown}"
                               f" {condition.operator} {condition.threshold:g}")
        return out

    def _values_of(self, statistic: str):
        if statistic in GATE_STATISTICS["rankings"]:
            for r in self.rankings.iter_rows(named=True):
                yield (f"qrels {r['qrels']!r} vs {r['reference']!r} on {r['measure']}",
                       r[statistic])
        elif statistic in GATE_STATISTICS["judges"]:
            for qrels, agreement in self.judges.items():
                yield (f"judges {qrels!r} vs {self.judges_reference!r}",
                       float(agreement.overall[statistic]))
        else:
            for r in self.stability.iter_rows(named=True):
                yield f"qrels {r['qrels']!r} on {r['measure']}", r[statistic]

    # -- the tables every writer shares ----------------------------------------------------

    def describe(self) -> str:
        """One sentence: what was compared, and how the intervals and tests were made."""
        s = self.settings
        grid = self.grid
        reference = ("a reference leaderboard" if self.leaderboard is not None
                     else f"reference {self.reference!r}")
        intervals = (f"{fmt.percent(s['level'])} bootstrap intervals over topics"
                     f" ({s['n_resamples']:,} resamples, seed {s['seed']})"
                     if s["n_resamples"] else "no bootstrap intervals (0 resamples)")
        return (f"{len(grid.qrels_names)} qrels sets x {len(grid.run_names)} runs; {reference};"
                f" {intervals}; tau_ap against the"
                f" reference; top-{s['k']} overlap; {fmt.TEST_NAMES.get(s['test'], s['test'])}"
                f" at alpha = {s['alpha']:g} ({_correction(s)}); swap rate over"
                f" {s['swap_trials']:,} splits into two disjoint halves of the topics."
                + _distributions_note(s))

    def tables(self) -> list[tuple[str, list[str], list[list], str]]:
        """``(title, header, rows, alignment)`` of each table the writers print; rows hold
        numbers or strings, alignment one ``l``/``r`` per column."""
        if self._tables:
            return self._tables
        out = []
        grid = self.grid
        for measure in self.measures:
            means = grid.means(measure)
            head = ["run"] + list(grid.qrels_names)
            rows = [[r[0]] + list(r[1:]) for r in means.rows()]
            out.append((f"Leaderboard: {measure} (mean per run)", head, rows,
                        "l" + "r" * len(grid.qrels_names)))
        if self.uncertain is not None:
            chosen = self.uncertain.filter(pl.col("measure").is_in(self.measures))
            out.append(("Label distributions: standard error of each mean from the label"
                        " samples alone", ["qrels", "run", "measure", "label s.e."],
                        [list(r) for r in chosen.rows()], "lllr"))
        if self.rankings.height:
            k = self.settings["k"]
            head = ["qrels", "measure", "systems", "topics", "tau_b", "CI", "tau_ap", "CI",
                    "spearman", "pearson", "swaps", f"top-{k}"]
            rows = [[r["qrels"], r["measure"], r["n_systems"], r["n_topics"],
                     r["tau_b"], (r["tau_b_low"], r["tau_b_high"]), r["tau_ap"],
                     (r["tau_ap_low"], r["tau_ap_high"]), r["spearman"], r["pearson"],
                     int(r["swaps"]), r["top_k"]] for r in self.rankings.iter_rows(named=True)]
            against = ("the reference leaderboard" if self.leaderboard is not None
                       else repr(self.reference))
            out.append((f"Ranking agreement with {against}", head, rows, "llrrrrrrrrrr"))
        if self.judges:
            head = ["qrels", "both judged", f"only {self.judges_reference}", "only qrels",
                    "agreement", "kappa", "kappa lin.", "kappa quad.", "alpha", "jaccard"]
            rows = []
            for qrels, agreement in self.judges.items():
                o = agreement.overall
                rows.append([qrels, o["both"], o["only_a"], o["only_b"], o["agreement"],
                             o["kappa"], o["kappa_linear"], o["kappa_quadratic"], o["alpha"],
                             o["jaccard"]])
            out.append((f"Judges: agreement with {self.judges_reference!r} on the (query, doc)"
                        " pairs both judged", head, rows, "lrrrrrrrrr"))
            for qrels, agreement in self.judges.items():
                frame = agreement.confusion_frame()
                out.append((f"Labels: {self.judges_reference!r} (rows) x {qrels!r} (columns)",
                            frame.columns, [list(r) for r in frame.rows()],
                            "l" + "r" * (frame.width - 1)))
        head = ["qrels", "measure", "significant", "pairs", "power", "swap rate",
                "min. difference"]
        rows = [[r["qrels"], r["measure"], r["significant"], r["pairs"], r["power"],
                 r["swap_rate"], r["min_difference"]] for r in self.stability.iter_rows(named=True)]
        out.append(("Stability: discriminative power and swap rate", head, rows, "llrrrrr"))
        self._tables = out
        return out

    # -- writers ---------------------------------------------------------------------------

    def __str__(self) -> str:
        return self.to_text()

    def to_text(self) -> str:
        """Aligned tables for the terminal, one per section."""
        blocks = [self.describe(), ""]
        for title, head, rows, align in self.tables():
            cells = [[printable(h) for h in head]] + [[cell(v) for v in row] for row in rows]
            widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
            blocks.append(printable(title))
            for row in cells:
                blocks.append("  " + "  ".join(c.ljust(w) if a == "l" else c.rjust(w)
                                               for c, w, a in zip(row, widths, align)).rstrip())
            blocks.append("")
        blocks.append(FOOTNOTE)
        return "\n".join(blocks) + "\n"

    def to_markdown(self) -> str:
        """The tables as GitHub-flavoured markdown."""
        blocks = [fmt.markdown_escape(self.describe()), ""]
        for title, head, rows, align in self.tables():
            blocks.append(f"**{fmt.markdown_escape(printable(title))}**")
            blocks.append("")
            blocks.append("| " + " | ".join(fmt.markdown_escape(printable(h)) for h in head)
                          + " |")
            blocks.append("|" + "|".join("---" if a == "l" else "---:" for a in align) + "|")
            for row in rows:
                blocks.append("| " + " | ".join(
                    fmt.markdown_escape(cell(v)) if isinstance(v, str) else cell(v)
                    for v in row) + " |")
            blocks.append("")
        blocks.append(fmt.markdown_escape(FOOTNOTE))
        return "\n".join(blocks) + "\n"

    def to_latex(self) -> str:
        """One booktabs table per section, as papers print them."""
        out = []
        for title, head, rows, align in self.tables():
            out += [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{align}}}",
                    r"\toprule", " & ".join(fmt.latex_escape(printable(h)) for h in head)
                    + r" \\", r"\midrule"]
            for row in rows:
                out.append(" & ".join(fmt.latex_escape(cell(v)) for v in row) + r" \\")
            out += [r"\bottomrule", r"\end{tabular}",
                    rf"\caption{{{fmt.latex_escape(printable(title))}.}}",
                    r"\end{table}", ""]
        out.append("% " + self.describe())
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict:
        """Settings and every table as plain Python (NaN and infinities as None)."""
        def rows(frame: pl.DataFrame) -> list:
            return [{k: fmt.json_value(v) for k, v in r.items()}
                    for r in frame.iter_rows(named=True)]

        grid = self.grid
        return {
            "settings": dict(self.settings), "reference": self.reference,
            "qrels": grid.qrels_names, "runs": grid.run_names, "measures": self.measures,
            "means": rows(grid.aggregate().filter(pl.col("measure").is_in(self.measures))),
            "rankings": rows(self.rankings),
            "judges": {q: {"reference": self.judges_reference,
                           "overall": {k: fmt.json_value(float(v)) if isinstance(v, float)
                                       else v for k, v in a.overall.items()},
                           "labels": [fmt.json_value(float(v)) for v in a.labels],
                           "confusion": a.confusion.tolist(),
                           "per_query": rows(a.per_query())}
                       for q, a in self.judges.items()},
            "stability": rows(self.stability),
            "uncertain": None if self.uncertain is None else rows(self.uncertain),
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON (strict: no NaN literals)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    def to_csv(self, *, separator: str = ",") -> str:
        """Every number in one long table (:data:`CSV_COLUMNS`); floats round-trip
        exactly, NaN as ``NaN``."""
        rows: list[tuple] = []
        means = self.grid.aggregate().filter(pl.col("measure").is_in(self.measures))
        for r in means.iter_rows(named=True):
            rows.append(("means", "", r["qrels"], r["run"], r["measure"], "mean", r["value"],
                         None, None))
        if self.uncertain is not None:
            for r in self.uncertain.iter_rows(named=True):
                rows.append(("label_se", "", r["qrels"], r["run"], r["measure"], "label_se",
                             r["label_se"], None, None))
        for r in self.rankings.iter_rows(named=True):
            for s in RANKING_STATISTICS:
                rows.append(("rankings", r["reference"], r["qrels"], "", r["measure"], s, r[s],
                             r[f"{s}_low"], r[f"{s}_high"]))
            for s in ("n_systems", "n_topics"):
                rows.append(("rankings", r["reference"], r["qrels"], "", r["measure"], s,
                             float(r[s]), None, None))
        for qrels, agreement in self.judges.items():
            for s in JUDGE_COLUMNS:
                rows.append(("judges", self.judges_reference, qrels, "", "", s,
                             float(agreement.overall[s]), None, None))
            for i, a in enumerate(agreement.labels):
                for j, b in enumerate(agreement.labels):
                    rows.append(("confusion", self.judges_reference, qrels, "", "",
                                 f"{_label_text(a)}|{_label_text(b)}",
                                 float(agreement.confusion[i, j]), None, None))
        for r in self.stability.iter_rows(named=True):
            for s in ("power", "significant", "pairs", "swap_rate", "min_difference"):
                rows.append(("stability", "", r["qrels"], "", r["measure"], s, float(r[s]),
                             None, None))
        frame = pl.DataFrame(rows, schema={c: pl.Float64 if c in ("value", "ci_low", "ci_high")
                                           else pl.String for c in CSV_COLUMNS}, orient="row")
        return frame.write_csv(separator=separator, float_precision=None)

    def to_html(self, path=None) -> str:
        """A self-contained HTML page: the tables, the scatter of the system means under
        each qrels set against the reference, and the label confusion matrices. Needs
        matplotlib (``pip install "irmetrics-exact[plot]"``); see
        :func:`irmetrics.meta_evaluation.page.html_page`."""
        from .page import html_page

        return html_page(self, path)


def _distributions_note(settings: dict) -> str:
    names = settings.get("label_distributions")
    if not names:
        return ""
    return (f" Qrels {', '.join(map(repr, names))} as label distributions: each run scored"
            f" by its expected value over {settings['label_samples']:,} label samples (seed"
            f" {settings['seed']}, the same for every run); the intervals resample the topics"
            " of the per-topic expected values, so they carry the label-sampling error too;"
            " the judges compare each distribution's most likely label.")


def _correction(settings: dict) -> str:
    if settings["test"] == "tukey" or settings["correction"] == "none":
        return "no correction"
    return f"{fmt.CORRECTION_NAMES[settings['correction']]} correction"


def meta_evaluate(qrels, runs, measures, *, reference=None, leaderboard=None, k: int = 3,
                  n_resamples: int = 1000, seed=0, level: float = 0.95, test: str = "t",
                  alpha: float = 0.05, correction: str = "none", swap_trials: int = 1000,
                  swap_bin_width: float = 0.01, judge_relevance_level=None,
                  threads=None, nuggets=None, label_distributions=None,
                  label_samples: int = 1000, **evaluate_options) -> MetaEvaluation:
    r"""Compare judgment sets through the leaderboards they give and the labels they hold.

    Evaluates every run against every qrels set (:func:`evaluate_grid`, each run read
    once), then for each measure compares every qrels set's leaderboard with the
    reference's (:meth:`Grid.ranking_agreement`), compares the labels of every qrels set
    with the reference's on the documents both judged (:func:`judge_agreement`), and
    measures each leaderboard's discriminative power and swap rate.

    Parameters
    ----------
    qrels : dict or list
        ``{name: qrels}`` or a list of paths: the judgment sets (e.g. human and LLM).
    runs : dict or list
        ``{name: run}`` or a list of paths: the systems ranked.
    measures : str or list of str
        As for :func:`irmetrics.evaluate`; bookkeeping outputs and counts are evaluated
        but not ranked.
    reference : str, optional
        The reference qrels set (default: the first).
    leaderboard : mapping, optional
        A published leaderboard to compare every qrels set with instead:
        ``{run: value}`` or ``{measure: {run: value}}`` (see
        :meth:`Grid.ranking_agreement`).
    k, n_resamples, seed, level
        Top-``k`` overlap and the bootstrap over topics
        (:func:`irmetrics.stats.ranking_agreement`).
    test, alpha, correction
        Discriminative power (:func:`irmetrics.stats.discriminative_power`).
    swap_trials, swap_bin_width
        Swap rate (:func:`irmetrics.stats.swap_rate`), disjoint halves of the topics.
    judge_relevance_level : int or float, optional
        Lowest relevant label for the judges' Jaccard overlap (default: the evaluation's
        ``relevance_level``, 1).
    nuggets : path or polars.DataFrame, optional
        For nugget measures (``all_score``, ``nugget_vital``, ...): the qrels are then
        nugget assessors' assignment files, the runs run ids (None: those every assessor
        assessed), ``nuggets`` the nugget file they share (:func:`nugget_grid`), and the
        judges' labels are their assignments, not_support < partial_support < support
        (:func:`irmetrics.rag.evaluate.assessor_labels`).
    label_distributions : dict, optional
        ``{name: labels}``: judgment sets whose labels are distributions (a path, dict or
        frame as :func:`irmetrics.judgment_formats.as_label_distribution` reads). The
        qrels set ``name`` of ``qrels``, if any, holds the plain labels they complete
        (otherwise the set is new, placed after those of ``qrels``, and ``qrels`` may be
        None). Each run is scored by its expected value
        (:func:`irmetrics.judgment_formats.evaluate_uncertain`, ``label_samples``
        labellings, ``seed``: the same labellings for every run); the leaderboard is made
        of the per-topic expected values, so the bootstrap over topics of the ranking
        agreement carries the label-sampling error with the topic sampling (see Notes);
        the judges compare each distribution's most likely label (the lower of two equally
        likely). :attr:`MetaEvaluation.uncertain` holds each mean's label standard error.
    label_samples : int, default 1000
        Labellings drawn under ``label_distributions`` (at least 2).
    threads : int or None
        Threads for the grid's runs and the statistics' cells and resamples
        (:func:`irmetrics.parallel.resolve_threads`: default every core the process may
        use). The tables do not depend on it, byte for byte.
    **evaluate_options
        ``relevance_level``, ``judged_only``, ``max_docs``, ``complete``, ``semantics``,
        ``num_docs_in_coll``, ``qrels_columns``, ``run_columns``, ``ties``, ``relevance``
        as for :func:`irmetrics.evaluate`; ``progress`` as for :func:`evaluate_grid`.

    Returns
    -------
    MetaEvaluation
        Tables, writers (``to_text``, ``to_markdown``, ``to_latex``, ``to_json``,
        ``to_csv``, ``to_html``) and :meth:`MetaEvaluation.failures` for a gate.

    Notes
    -----
    Under ``label_distributions`` a topic's score is its mean over the label samples,
    :math:`\bar m_q = m_q + e_q` with a label-sampling error :math:`e_q` independent
    between topics (each topic's labels are drawn on their own). Resampling topics then
    resamples :math:`e_q` with them: the spread of the bootstrap statistics carries both
    sources, as the interval of :func:`~irmetrics.judgment_formats.evaluate_uncertain`
    does; resampling the label samples as well would count :math:`e_q` twice. A
    simulation of the coverage is in docs/meta_evaluation.md.

    Examples
    --------
    >>> import irmetrics as irm
    >>> human = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1, "d": 0}, "q3": {"e": 1, "f": 0}}
    >>> llm = {"q1": {"a": 2, "b": 1, "c": 1}, "q2": {"a": 1, "d": 0}, "q3": {"e": 1, "f": 1}}
    >>> runs = {"good": {"q1": {"a": 3, "c": 2, "b": 1}, "q2": {"a": 2, "d": 1},
    ...                  "q3": {"e": 2, "f": 1}},
    ...         "fair": {"q1": {"c": 3, "a": 2, "b": 1}, "q2": {"d": 2, "a": 1},
    ...                  "q3": {"e": 2, "f": 1}},
    ...         "poor": {"q1": {"b": 3, "c": 2, "a": 1}, "q2": {"d": 2, "a": 1},
    ...                  "q3": {"f": 2, "e": 1}}}
    >>> meta = irm.meta_evaluate({"human": human, "llm": llm}, runs, "P.1", n_resamples=100)
    >>> meta.rankings.select("qrels", "measure", "tau_b", "swaps").rows()
    [('llm', 'P_1', 0.8164965809277261, 0.0)]
    >>> meta.failures(["tau_b<0.9"])
    ["qrels 'llm' vs 'human' on P_1: tau_b = 0.8165 < 0.9"]
    """
    unknown = [name for name in evaluate_options if name not in EVALUATE_OPTIONS]
    if unknown:
        # resamples= for n_resamples=: name the parameter meant, not only the options
        own = [name for name in inspect.signature(meta_evaluate).parameters
               if name not in ("qrels", "runs", "measures", "evaluate_options")]
        close = difflib.get_close_matches(unknown[0], [*own, *EVALUATE_OPTIONS], n=1)
        meant = f"did you mean {close[0]!r}? " if close else ""
        raise ParameterTypeError(f"meta_evaluate() got an unexpected keyword argument {unknown[0]!r}"
                        f" ({meant}its parameters are {', '.join(own)}; the evaluation"
                        f" options are {', '.join(EVALUATE_OPTIONS)})")
    check_choice("test", test, POWER_TESTS)
    # Before the grid is evaluated (the tables check them again).
    check_int("swap_trials", swap_trials, min=1, max=MAX_RESAMPLES)
    check_int("n_resamples", n_resamples, min=0, max=MAX_RESAMPLES)
    distributions: dict = {}
    if label_distributions is not None:
        distributions, label_samples = checked(label_distributions, label_samples, nuggets,
                                              evaluate_options)
        named_qrels = {} if qrels is None else named_inputs(qrels, "qrels")
    else:
        named_qrels = named_inputs(qrels, "qrels")
    threads = resolve_threads(threads)
    uncertain = None
    with warnings.catch_warnings():
        # Queries left out are said once, below (Grid.alignment_note), with the runs
        # that lack them.
        warnings.simplefilter("ignore", MissingQueriesWarning)
        if distributions:
            if wants_nuggets(measures):
                raise parameter_error("label_distributions", "None with nugget measures"
                                      " (labels of documents, not of nuggets)",
                                      "<label distributions>")
            grid, uncertain = distribution_grid(
                named_qrels, distributions, runs, measures, samples=label_samples,
                seed=seed, threads=threads, options=evaluate_options)
            for name, labels in distributions.items():
                named_qrels[name] = most_likely(
                    plain_qrels(named_qrels, name, evaluate_options), labels)
        elif wants_nuggets(measures):
            grid = nugget_grid(named_qrels, runs, measures, nuggets=nuggets,
                               **evaluate_options)
            named_qrels = {name: assessor_labels(value) for name, value in named_qrels.items()}
        else:
            if nuggets is not None:
                raise parameter_error("nuggets", "given only with nugget measures (all_score,"
                                      " nugget_vital, ...)", nuggets)
            grid = evaluate_grid(named_qrels, runs, measures, threads=threads,
                                 **evaluate_options)
    ranked = grid.scored_measures()
    if not ranked:
        raise parameter_error("measures", "at least one measure averaged over queries"
                              " (map, P.10, ndcg_cut.10, ...)", measures)
    if leaderboard is None and len(grid.qrels_names) < 2:
        raise parameter_error("qrels", "two or more qrels sets (or a leaderboard to compare"
                              " one with)", grid.qrels_names)
    with warnings.catch_warnings():
        # Topics left out of a comparison are said once, below, not per table.
        warnings.simplefilter("ignore", QueryAlignmentWarning)
        rankings = grid.ranking_agreement(reference, leaderboard=leaderboard, measures=ranked,
                                          k=k, n_resamples=n_resamples, seed=seed, level=level,
                                          threads=threads)
        power = grid.discriminative_power(measures=ranked, test=test, alpha=alpha,
                                          correction=correction, seed=seed, threads=threads)
        swaps = grid.swap_rate(measures=ranked, n_trials=swap_trials,
                               bin_width=swap_bin_width, seed=seed, threads=threads)
    note = grid.alignment_note()
    if note is not None:
        warnings.warn(note, QueryAlignmentWarning, stacklevel=2)
    stability = power.join(swaps, on=["qrels", "measure"], how="left", maintain_order="left")
    reference_name = LEADERBOARD if leaderboard is not None else (
        grid.qrels_names[0] if reference is None else reference)
    # A qrels set may be named "leaderboard": what the reference is, the argument says.
    judges_reference = reference_name if leaderboard is None else grid.qrels_names[0]
    judges = {}
    if len(grid.qrels_names) > 1:
        level_for_judges = evaluate_options.get("relevance_level", 1) \
            if judge_relevance_level is None else judge_relevance_level
        for name in grid.qrels_names:
            if name == judges_reference:
                continue
            judges[name] = judge_agreement(
                named_qrels[judges_reference], named_qrels[name],
                relevance_level=level_for_judges,
                relevance=evaluate_options.get("relevance", "int"),
                names=(judges_reference, name),
                qrels_columns=evaluate_options.get("qrels_columns"))
    settings = dict(k=min(k, len(grid.run_names)), n_resamples=n_resamples, seed=seed,
                    level=level, test=test, alpha=alpha, correction=correction,
                    swap_trials=swap_trials, swap_bin_width=swap_bin_width)
    if distributions:
        settings.update(label_distributions=list(distributions), label_samples=label_samples)
    return MetaEvaluation(grid=grid, reference=reference_name, measures=ranked,
                          rankings=rankings, judges=judges,
                          judges_reference=judges_reference if judges else None,
                          stability=stability, settings=settings, leaderboard=leaderboard,
                          uncertain=uncertain)


__all__ = ["CSV_COLUMNS", "Condition", "GATE_STATISTICS", "MetaEvaluation", "meta_evaluate"]
