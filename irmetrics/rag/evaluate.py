"""Nugget measures on the road every measure takes: judgments, a run, Results.

The judgments ("qrels") are a nugget file, nuggetizer's ``create`` output: the topics and
their nuggets. The "run" is an assessor's assignment file, nuggetizer's ``assign``
output: which nuggets each of a run's answers supports. :func:`evaluate_nuggets` gives
the :class:`~irmetrics.results.Results` of one run, :func:`evaluate_nugget_runs` those of
every run in an assignment file, and :class:`NuggetEvaluator` is what
:func:`irmetrics.compare` and :func:`irmetrics.meta_evaluate` evaluate with when the
measures asked for are nugget measures (:mod:`irmetrics.measures.nuggets`).

The kind of the inputs is stated by the measures (or ``-R nuggets``), never guessed from
the files: :func:`irmetrics.evaluate` refuses a nugget measure, naming this module.
"""

from __future__ import annotations

import inspect
import os

import polars as pl

from irmetrics.checks import parameter_error
from irmetrics.engine.ranked import sorted_query_ids
from irmetrics.evaluate import Evaluator
from irmetrics.exceptions import InputFormatError
from irmetrics.measures.nuggets import NuggetContext
from irmetrics.measures.parse import parse_measures
from irmetrics.measures.rel_format import NUGGETS, QRELS, check_rel_format, rel_formats_of
from irmetrics.results import Results, report_query_set
from .formats import ASSIGNMENT, read_assignments, read_nuggets
from .nuggets import scorable


def wants_nuggets(measures) -> bool:
    """Whether ``measures`` ask for a nugget measure (one only nugget judgments give):
    then the judgments are a nugget file and the runs assignments.

    >>> wants_nuggets(["all_score"]), wants_nuggets(["map", "num_q"])
    (True, False)
    """
    return any(NUGGETS in formats and QRELS not in formats
               for formats in (rel_formats_of(r.measure) for r in parse_measures(measures)))


def _json_lines(value, reader, what: str, shape: str):
    """``(frame, source)`` of a path (read by ``reader``) or a frame; a file that is not
    JSON Lines (a TREC qrels or run file) is refused by name before the reader sees it."""
    if isinstance(value, pl.DataFrame):
        return value, f"<{what}>"
    if not isinstance(value, (str, os.PathLike)):
        raise parameter_error(what, f"a path or the DataFrame of read_{what}", type(value))
    source = os.fspath(value)
    try:
        with open(source, "rb") as fh:
            head = fh.read(4096)
    except OSError as err:
        raise InputFormatError(f"cannot read the file ({err.strerror})", path=source) from None
    # a BOM from a Windows editor is not content (the readers decode it away too)
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if head and not head.startswith(b"{"):
        raise InputFormatError(f"nugget measures read {shape} (JSON Lines) as the {what};"
                               " this file is not JSON Lines (TREC qrels or a run? those go"
                               " with the other measures, through irmetrics.evaluate)",
                               path=source, line=1)
    return reader(source), source


def _nugget_frame(nuggets):
    if nuggets is None:
        return None
    return _json_lines(nuggets, read_nuggets, "nuggets", "nuggetizer's nugget file")[0]


def _assignment_frame(assignments):
    return _json_lines(assignments, read_assignments, "assignments",
                       "nuggetizer's assignment file")


def _evaluate(known, frame: pl.DataFrame, source: str, requests, runs,
              stacklevel: int) -> dict[str, Results]:
    """``{run: Results}`` of ``requests`` for each of ``runs`` in the assignments."""
    frame = frame.filter(pl.col("run_id").is_in(runs))
    answered = frame.select("run_id", "topic_id").unique()
    frame, _ = scorable(frame, source, known, stacklevel=stacklevel + 1)
    judged = set((known if known is not None else frame)["topic_id"].to_list())
    out = {}
    for run in runs:  # a loop over runs; each run's topics are column operations
        part = frame.filter(pl.col("run_id") == run)
        query_ids = sorted_query_ids(part["topic_id"].to_list())
        columns, specs = {}, {}
        for req in requests:
            block = req.measure.kernel(NuggetContext(part, query_ids, dict(req.options)),
                                       req.params)
            for j, name in enumerate(req.output_names):
                columns[name] = block[:, j]
                specs[name] = req.measure
        topics = set(answered.filter(pl.col("run_id") == run)["topic_id"].to_list())
        results = Results(query_ids, columns, specs, run_name=run,
                          missing_query_ids=sorted_query_ids(judged - set(query_ids.tolist())),
                          ignored_query_ids=sorted_query_ids(topics - judged))
        out[run] = report_query_set(results, stacklevel=stacklevel + 1)
    return out


def _requests(measures):
    requests = parse_measures(measures)
    if not requests:  # as irmetrics.evaluate: not an empty Results in silence
        raise parameter_error("measures", "at least one measure name", measures)
    check_rel_format(requests, NUGGETS)
    return requests


def evaluate_nugget_runs(nuggets, assignments, measures) -> dict[str, Results]:
    r"""Every run of an assignment file, evaluated with nugget measures.

    Parameters
    ----------
    nuggets : path, polars.DataFrame or None
        The judgments: nuggetizer's nugget file (:func:`~irmetrics.rag.read_nuggets`).
        Its topics are the judged ones (a topic a run did not answer is reported missing,
        an answer to a topic it lacks is ignored), and every assigned nugget must be one
        of its topic's nuggets. None: the topics and nuggets of the assignments.
    assignments : path or polars.DataFrame
        nuggetizer's assignment file (:func:`~irmetrics.rag.read_assignments`), one line
        per (run, topic): the "runs".
    measures : str or list of str
        Nugget measures (:mod:`irmetrics.measures.nuggets`): ``nugget_strict_vital``,
        ``nugget_strict_all``, ``nugget_vital``, ``nugget_all``,
        ``nugget_weighted_recall``, or nuggetizer's names ``strict_vital_score``,
        ``strict_all_score``, ``vital_score``, ``all_score``, and ``weighted_recall``
        (``weighted_recall(okay=0.25)``); ``runid`` and ``num_q``.

    Returns
    -------
    dict of str to Results
        ``{run_id: Results}``, runs in byte order; per topic the measures of
        :func:`irmetrics.rag.nugget_scores` (equal to nuggetizer's).

    Raises
    ------
    ParameterError
        A measure that needs other judgments (``map``).
    InputFormatError
        A file that is not JSON Lines (TREC qrels or a run given by mistake), an assigned
        nugget the nugget file lacks, a bad label; naming file, line, topic and run.

    Warns
    -----
    MissingQueriesWarning
        Answers assessed against no nugget (listed, not scored 0), and judged topics a
        run did not answer.

    Examples
    --------
    >>> import polars as pl
    >>> a = pl.DataFrame({"run_id": ["r", "r", "s"], "topic_id": ["q1"] * 3,
    ...                   "line": [1, 1, 2], "nugget": [0, 1, 0], "text": ["a", "b", "a"],
    ...                   "importance": ["vital", "okay", "vital"],
    ...                   "assignment": ["support", "partial_support", "not_support"]})
    >>> runs = evaluate_nugget_runs(None, a, ["all_score", "nugget_vital"])
    >>> {run: res.aggregate() for run, res in runs.items()}
    {'r': {'nugget_vital': 1.0, 'all_score': 0.75}, 's': {'nugget_vital': 0.0, 'all_score': 0.0}}
    """
    return NuggetEvaluator(nuggets, measures).evaluate_all(assignments)


def evaluate_nuggets(nuggets, assignments, measures, *, run_id: str | None = None) -> Results:
    r"""Evaluate one run's answers with nugget measures: nuggetizer's scores per topic.

    For an answer with nuggets :math:`N` (:math:`V \subseteq N` vital), support
    :math:`s_i = 1` (``support``) else 0, credit :math:`c_i` = 1 (``support``), 0.5
    (``partial_support``) or 0, and importance weights :math:`w_i`:
    ``nugget_strict_vital`` :math:`= \sum_V s_i / |V|`, ``nugget_strict_all``
    :math:`= \sum_N s_i / |N|`, ``nugget_vital`` :math:`= \sum_V c_i / |V|`,
    ``nugget_all`` :math:`= \sum_N c_i / |N|` (vital scores 0 without vital nugget, as
    nuggetizer), ``nugget_weighted_recall`` :math:`= \sum_N w_i c_i / \sum_N w_i`.

    Parameters
    ----------
    nuggets, assignments, measures
        As for :func:`evaluate_nugget_runs`.
    run_id : str, optional
        The run to evaluate when the assignments hold several.

    Returns
    -------
    Results
        As :func:`irmetrics.evaluate` gives them: ``aggregate()``, ``per_query()``, and
        what :func:`irmetrics.compare` and the writers take.

    Raises
    ------
    ParameterError
        Several runs in the assignments and no ``run_id`` (or one they lack), a measure
        that needs other judgments.
    InputFormatError
        As for :func:`evaluate_nugget_runs`.

    Examples
    --------
    >>> import polars as pl
    >>> a = pl.DataFrame({"run_id": ["r", "r"], "topic_id": ["q1", "q1"], "line": [1, 1],
    ...                   "nugget": [0, 1], "text": ["a", "b"],
    ...                   "importance": ["vital", "okay"],
    ...                   "assignment": ["support", "partial_support"]})
    >>> res = evaluate_nuggets(None, a, ["strict_vital_score", "all_score",
    ...                                  "weighted_recall(okay=1.0)"])
    >>> res.aggregate()
    {'strict_vital_score': 1.0, 'all_score': 0.75, 'weighted_recall(okay=1.0)': 0.75}
    """
    return NuggetEvaluator(nuggets, measures).evaluate(assignments, run_id=run_id)


def assessor_labels(assignments) -> pl.DataFrame:
    """An assessor's labels as a qrels table, for :func:`irmetrics.judge_agreement`:
    ``query_id`` the topic, ``doc_id`` the run and the nugget's text (``run<TAB>text``:
    the same nugget of the same answer under two assessors), ``relevance`` the label's
    position in not_support < partial_support < support (0, 1, 2). Nuggets nuggetizer
    failed to label (``failed``) have no label and are left out.

    >>> import polars as pl
    >>> a = pl.DataFrame({"run_id": ["r"], "topic_id": ["q1"], "line": [1], "nugget": [0],
    ...                   "text": ["a"], "importance": ["vital"], "assignment": ["support"]})
    >>> assessor_labels(a).rows()
    [('q1', 'r\\ta', 2)]
    """
    frame, _ = _assignment_frame(assignments)
    codes = {label: i for i, label in enumerate(ASSIGNMENT)}
    return (frame.filter(pl.col("assignment").is_in(list(ASSIGNMENT)))
            .select(query_id="topic_id",
                    doc_id=pl.concat_str("run_id", pl.lit("\t"), "text"),
                    relevance=pl.col("assignment").replace_strict(codes,
                                                                  return_dtype=pl.Int64)))


#: The options of :class:`irmetrics.Evaluator` and their defaults: nugget measures take
#: none of them (what they mean for rankings, answers do not have).
_RANKING_OPTIONS = {name: p.default for name, p in
                    inspect.signature(Evaluator).parameters.items()
                    if p.default is not inspect.Parameter.empty}


class NuggetEvaluator:
    """A nugget file read once, measures parsed once, evaluated against many runs'
    assignments: what :func:`irmetrics.compare` and :func:`irmetrics.meta_evaluate`
    use when the measures are nugget measures (:func:`wants_nuggets`).

    Parameters
    ----------
    nuggets : path, polars.DataFrame or None
        The judgments (see :func:`evaluate_nugget_runs`).
    measures : str or list of str
    **options
        :class:`irmetrics.Evaluator`'s options, accepted at their defaults only (they
        say how rankings are cut and ordered; an answer has no ranking): another value
        is a ParameterError naming it.

    Examples
    --------
    >>> import polars as pl
    >>> a = pl.DataFrame({"run_id": ["r"], "topic_id": ["q1"], "line": [1], "nugget": [0],
    ...                   "text": ["a"], "importance": ["okay"],
    ...                   "assignment": ["partial_support"]})
    >>> NuggetEvaluator(None, "all_score").evaluate(a).aggregate()
    {'all_score': 0.5}
    """

    def __init__(self, nuggets, measures, **options):
        for name, value in options.items():
            if name not in _RANKING_OPTIONS:
                raise parameter_error("options", "options of irmetrics.Evaluator", name)
            if name not in ("threads", "progress") and value != _RANKING_OPTIONS[name]:
                raise parameter_error(name, f"{_RANKING_OPTIONS[name]!r} for nugget measures"
                                      " (answers have no ranking to cut, order or judge by"
                                      " relevance level)", value)
        self.requests = _requests(measures)
        self._nuggets = _nugget_frame(nuggets)
        topics = [] if self._nuggets is None else self._nuggets["topic_id"].to_list()
        self.query_ids = sorted_query_ids(topics)

    def evaluate(self, assignments, *, run_id: str | None = None) -> Results:
        """The :class:`~irmetrics.results.Results` of the run of ``assignments`` (a path
        or a frame of :func:`~irmetrics.rag.read_assignments`; ``run_id`` picks one of
        several runs)."""
        frame, source = _assignment_frame(assignments)
        runs = frame["run_id"].unique().sort().to_list()
        if run_id is None:
            if len(runs) > 1:
                raise parameter_error("run_id", f"one of the {len(runs)} runs of the"
                                      f" assignments ({', '.join(runs[:5])}"
                                      f"{', ...' if len(runs) > 5 else ''}), or a file of one"
                                      " run (evaluate_nugget_runs evaluates them all)", run_id)
            run_id = runs[0]
        elif run_id not in runs:
            raise parameter_error("run_id", f"a run of the assignments ({', '.join(runs[:5])}"
                                  f"{', ...' if len(runs) > 5 else ''})", run_id)
        return _evaluate(self._nuggets, frame, source, self.requests, [run_id],
                         stacklevel=3)[run_id]

    def evaluate_named(self, name: str, assignments) -> Results:
        """:meth:`evaluate` of the run called ``name`` when ``assignments`` hold several
        runs and one of them is ``name`` (how :func:`irmetrics.compare` names systems);
        otherwise of the one run they hold."""
        frame, source = _assignment_frame(assignments)
        runs = frame["run_id"].unique().sort().to_list()
        if len(runs) > 1 and name not in runs:
            raise parameter_error("runs", f"named by the runs of {source} when it holds"
                                  f" several ({', '.join(runs[:5])}"
                                  f"{', ...' if len(runs) > 5 else ''})", name)
        return self.evaluate(frame, run_id=name if len(runs) > 1 else None)

    def evaluate_all(self, assignments) -> dict[str, Results]:
        """``{run_id: Results}`` of every run of ``assignments``."""
        frame, source = _assignment_frame(assignments)
        runs = frame["run_id"].unique().sort().to_list()
        return _evaluate(self._nuggets, frame, source, self.requests, runs, stacklevel=3)


__all__ = ["NuggetEvaluator", "assessor_labels", "evaluate_nugget_runs", "evaluate_nuggets", "wants_nuggets"]
