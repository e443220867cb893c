"""Nugget scores of generated answers, per (run, topic), as per-query measures.

:func:`nugget_scores` computes castorini/nuggetizer's four scores exactly as its
``calculate_nugget_scores`` does, and an importance-weighted nugget recall, for every
answer of an assignment file in a few column operations. :class:`NuggetScores` hands
them on as :class:`~irmetrics.io.per_query.PerQueryScores`, one per run, which is what
:func:`irmetrics.compare` (paired tests, intervals, corrections, the HTML report) and
:func:`irmetrics.rag.assessor_agreement` take.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np
import polars as pl

from irmetrics.checks import check_float, parameter_error
from irmetrics.exceptions import InputFormatError, MissingQueriesWarning
from irmetrics.io.per_query import PerQueryScores
from irmetrics.measures.nuggets import DEFAULT_WEIGHTS, NUGGET_SCORES
from .formats import IMPORTANCE, read_assignments, read_nuggets

#: The measures of :func:`nugget_scores`, in output order (nuggetizer's names first).
NUGGET_MEASURES = ("strict_vital_score", "strict_all_score", "vital_score", "all_score",
                   "weighted_recall")


@dataclass(frozen=True)
class NuggetScores:
    """Result of :func:`nugget_scores`.

    Attributes
    ----------
    frame : polars.DataFrame
        ``run_id``, ``topic_id``, ``nuggets``, ``vital_nuggets`` and the
        :data:`NUGGET_MEASURES`; one row a scored answer, sorted by run then topic.
    unscored : polars.DataFrame
        ``run_id``, ``topic_id``, ``reason``: answers that were not scored because no nugget
        exists for their topic (they are listed here and warned about, never scored 0).
    """

    frame: pl.DataFrame
    unscored: pl.DataFrame

    @property
    def runs(self) -> list[str]:
        """The runs scored, in byte order."""
        return self.frame["run_id"].unique().sort().to_list()

    def per_query(self, run: str) -> PerQueryScores:
        """The per-topic scores of ``run`` as per-query values (topics in byte order)."""
        if run not in self.runs:
            raise parameter_error("run", f"one of the scored runs ({', '.join(self.runs)})",
                                  run)
        part = self.frame.filter(pl.col("run_id") == run)
        return PerQueryScores(query_ids=np.asarray(part["topic_id"].to_list(), dtype=object),
                              columns={m: part[m].to_numpy().astype(np.float64)
                                       for m in NUGGET_MEASURES},
                              run_name=run, source="nugget assignments")

    def systems(self) -> dict[str, PerQueryScores]:
        """``{run: per_query(run)}``: what :func:`irmetrics.compare` takes as ``runs``."""
        return {run: self.per_query(run) for run in self.runs}

    def write_per_query(self, run: str, path) -> None:
        """Write ``run``'s scores as a ``trec_eval -q`` file (``measure topic value``
        lines, values in full precision, then ``runid all <run>``), which ``irmetrics
        compare`` and :func:`~irmetrics.io.per_query.read_per_query` read.

        Examples
        --------
        >>> import os, tempfile, polars as pl
        >>> from irmetrics.io.per_query import read_per_query
        >>> a = pl.DataFrame({"run_id": ["r"], "topic_id": ["q1"], "line": [1],
        ...                   "nugget": [0], "text": ["a"], "importance": ["okay"],
        ...                   "assignment": ["partial_support"]})
        >>> path = os.path.join(tempfile.mkdtemp(), "r.eval")
        >>> nugget_scores(a).write_per_query("r", path)
        >>> read_per_query(path).values("all_score").tolist()
        [0.5]
        """
        scores = self.per_query(run)  # checks the run
        lines = (self.frame.filter(pl.col("run_id") == run)
                 .unpivot(on=list(NUGGET_MEASURES), index="topic_id")
                 .select(pl.col("variable"), pl.col("topic_id"),
                         pl.col("value").cast(pl.String)))  # shortest round-trip digits
        with open(os.fspath(path), "w", encoding="utf-8", newline="\n") as fh:
            lines.write_csv(fh, separator="\t", include_header=False, quote_style="never")
            fh.write(f"runid\tall\t{scores.run_name}\n")

    def means(self) -> pl.DataFrame:
        """Each run's mean of every measure over its scored topics (nuggetizer's
        ``calculate_global_metrics`` for a file of one run)."""
        return (self.frame.group_by("run_id").agg(pl.len().alias("topics"),
                                                  *[pl.col(m).mean() for m in NUGGET_MEASURES])
                .sort("run_id"))

    def matrix(self, measure: str, runs=None) -> tuple[np.ndarray, list, np.ndarray]:
        """``(topic_ids, runs, scores)``: scores of shape (topics, runs) over the topics
        every one of ``runs`` (default: all) answered, for the statistics of
        :mod:`irmetrics.stats`."""
        if measure not in NUGGET_MEASURES:
            raise parameter_error("measure", f"one of {', '.join(NUGGET_MEASURES)}", measure)
        runs = self.runs if runs is None else list(runs)
        wide = (self.frame.filter(pl.col("run_id").is_in(runs))
                .pivot(on="run_id", index="topic_id", values=measure)
                .drop_nulls().sort("topic_id"))
        lacking = [r for r in runs if r not in wide.columns]
        if lacking:
            raise parameter_error("runs", f"scored runs ({', '.join(self.runs)})", lacking)
        return (np.asarray(wide["topic_id"].to_list(), dtype=object), runs,
                wide.select(runs).to_numpy().astype(np.float64))


def _frame(value, reader, what: str) -> tuple[pl.DataFrame, str]:
    if isinstance(value, (str, os.PathLike)):
        return reader(value), os.fspath(value)
    if isinstance(value, pl.DataFrame):
        return value, f"<{what}>"
    raise parameter_error(what, f"a path or the DataFrame of read_{what}", type(value))


def nugget_scores(assignments, nuggets=None, *, weights=None) -> NuggetScores:
    r"""Nugget scores of every answer: nuggetizer's four and importance-weighted recall.

    For an answer with nuggets :math:`N` (:math:`V \subseteq N` vital), support
    :math:`s_i = 1` (``support``) else 0 and credit :math:`c_i = 1` (``support``),
    :math:`0.5` (``partial_support``) or 0 (``not_support``):

    .. math::
        \mathrm{strict\_vital} = \frac{\sum_{i \in V} s_i}{|V|}, \quad
        \mathrm{strict\_all} = \frac{\sum_{i \in N} s_i}{|N|}, \quad
        \mathrm{vital} = \frac{\sum_{i \in V} c_i}{|V|}, \quad
        \mathrm{all} = \frac{\sum_{i \in N} c_i}{|N|}, \quad
        \mathrm{weighted\_recall} = \frac{\sum_{i \in N} w_i c_i}{\sum_{i \in N} w_i}

    with :math:`w_i` the weight of the nugget's importance. As in nuggetizer, the vital
    scores are 0 when a topic has no vital nugget.

    Parameters
    ----------
    assignments : path or polars.DataFrame
        nuggetizer's assignment file, or what :func:`~irmetrics.rag.read_assignments`
        returns.
    nuggets : path or polars.DataFrame, optional
        nuggetizer's nugget file (:func:`~irmetrics.rag.read_nuggets`). When given, every
        assigned nugget must be one of its topic's nuggets (same text), and answers to
        topics it has no nugget for are unscored.
    weights : dict, optional
        Importance to a positive weight for ``weighted_recall``; default
        :data:`DEFAULT_WEIGHTS` (``vital`` 1, ``okay`` 0.5).

    Returns
    -------
    NuggetScores

    Raises
    ------
    InputFormatError
        An assigned nugget that is not among its topic's nuggets, naming the line, topic
        and run.

    Warns
    -----
    MissingQueriesWarning
        Answers that have no nugget (an empty list, or a topic the nugget file lacks):
        listed in ``NuggetScores.unscored`` rather than scored 0 as nuggetizer does.

    Examples
    --------
    >>> import polars as pl
    >>> a = pl.DataFrame({"run_id": ["r", "r"], "topic_id": ["q1", "q1"], "line": [1, 1],
    ...                   "nugget": [0, 1], "text": ["a", "b"],
    ...                   "importance": ["vital", "okay"],
    ...                   "assignment": ["support", "partial_support"]})
    >>> s = nugget_scores(a)
    >>> s.frame.select("strict_vital_score", "strict_all_score", "vital_score",
    ...                "all_score").row(0)
    (1.0, 0.5, 1.0, 0.75)
    >>> round(s.frame["weighted_recall"][0], 4)   # (1 * 1 + 0.5 * 0.5) / 1.5
    0.8333
    """
    frame, source = _frame(assignments, read_assignments, "assignments")
    weights = _check_weights(weights)
    frame, listed = scorable(frame, source, nuggets, stacklevel=3,
                             where="; they are in NuggetScores.unscored")
    scored = (frame.group_by("run_id", "topic_id")
              .agg(nuggets=pl.len(), vital_nuggets=(pl.col("importance") == "vital").sum(),
                   **{name: NUGGET_SCORES[name](weights) for name in NUGGET_MEASURES})
              .sort("run_id", "topic_id"))
    return NuggetScores(scored, listed)


def scorable(frame: pl.DataFrame, source: str, nuggets, *, stacklevel: int,
             where: str = "") -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(nugget rows to score, unscored answers)`` of an assignment frame: with a nugget
    file, an assigned nugget it lacks for the topic is an error naming the line, topic
    and run, and answers to topics it has no nugget for are unscored; answers assessed
    against no nugget are unscored too, listed and warned about (never scored 0)."""
    empty = frame.filter(pl.col("nugget").is_null())
    frame = frame.filter(pl.col("nugget").is_not_null())
    unscored = [empty.select("run_id", "topic_id",
                             reason=pl.lit("the answer was assessed against no nugget"))]
    if nuggets is not None:
        known, _ = _frame(nuggets, read_nuggets, "nuggets")
        topics = known.select("topic_id").unique()
        absent = frame.join(topics, on="topic_id", how="anti")
        unscored.append(absent.select("run_id", "topic_id").unique(maintain_order=True)
                        .with_columns(reason=pl.lit("the nugget file has no nugget for the"
                                                    " topic")))
        frame = frame.join(topics, on="topic_id", how="semi")
        stray = frame.join(known.select("topic_id", "text"), on=["topic_id", "text"],
                           how="anti")
        if stray.height:
            row = stray.row(0, named=True)
            raise InputFormatError(f"nugget {row['nugget']} of run {row['run_id']!r} ("
                                   f"{row['text']!r}) is not a nugget of the topic in the"
                                   " nugget file", path=source, line=row["line"],
                                   query_id=row["topic_id"])
        _check_against_nuggets(frame, known, source)
    listed = pl.concat(unscored).sort("run_id", "topic_id")
    if listed.height:
        shown = ", ".join(f"{r}/{t}" for r, t in listed.select("run_id", "topic_id").rows()[:5])
        warnings.warn(f"{listed.height} answers have no nugget for their topic and are not"
                      f" scored ({shown}{', ...' if listed.height > 5 else ''}){where}",
                      MissingQueriesWarning, stacklevel=stacklevel + 1)
    return frame, listed


def _check_against_nuggets(frame: pl.DataFrame, known: pl.DataFrame, source: str) -> None:
    """The nugget file is the judgments: an assigned nugget of another importance than
    there, or an answer that leaves some of its topic's nuggets out, would change the
    score's weights or denominator without a word; each is an error naming the line."""
    other = frame.join(known.select("topic_id", "text", pl.col("importance").alias("known")),
                       on=["topic_id", "text"]).filter(pl.col("importance") != pl.col("known"))
    if other.height:
        row = other.sort("line").row(0, named=True)
        raise InputFormatError(f"nugget {row['nugget']} of run {row['run_id']!r} ("
                               f"{row['text']!r}) is {row['importance']!r} here but"
                               f" {row['known']!r} in the nugget file", path=source,
                               line=row["line"], query_id=row["topic_id"])
    answers = frame.select("run_id", "topic_id", "line").unique()
    left_out = (answers.join(known.select("topic_id", "nugget", "text"), on="topic_id")
                .join(frame.select("run_id", "topic_id", "text"),
                      on=["run_id", "topic_id", "text"], how="anti"))
    if left_out.height:
        row = left_out.sort("line", "nugget").row(0, named=True)
        count = left_out.filter((pl.col("run_id") == row["run_id"])
                                & (pl.col("topic_id") == row["topic_id"])).height
        raise InputFormatError(f"the answer of run {row['run_id']!r} leaves out {count} of"
                               f" the topic's nuggets in the nugget file (first: nugget"
                               f" {row['nugget']}, {row['text']!r}); every nugget needs an"
                               " assignment, or the score's denominator is wrong",
                               path=source, line=row["line"], query_id=row["topic_id"])


def _check_weights(weights) -> dict:
    if weights is None:
        return dict(DEFAULT_WEIGHTS)
    if not isinstance(weights, dict) or set(weights) != set(IMPORTANCE):
        raise parameter_error("weights", f"a dict with the keys {', '.join(IMPORTANCE)}",
                              weights)
    checked = {k: check_float(f"weights[{k!r}]", v, min=0.0) for k, v in weights.items()}
    for k, v in checked.items():
        if v == 0.0:
            raise parameter_error(f"weights[{k!r}]", "positive", v)
    return checked


__all__ = ["DEFAULT_WEIGHTS", "NUGGET_MEASURES", "NuggetScores", "nugget_scores"]
