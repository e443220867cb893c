"""Citations of generated answers against the retrieval run that fed them.

:func:`check_citations` refuses an answer that cites a segment its retrieval run did not
retrieve for the topic; :func:`citation_scores` gives per answer how much of it is cited
and where its citations sit in the run.
"""

from __future__ import annotations

import polars as pl

from irmetrics.checks import parameter_error
from irmetrics.containers import Run
from irmetrics.exceptions import InputFormatError
from .formats import Answers


def _runs(runs, answers: Answers) -> dict:
    if not isinstance(runs, dict) or not runs:
        raise parameter_error("runs", "a dict {run_id: Run or path}", type(runs))
    needed = answers.answers["run_id"].unique().sort().to_list()
    lacking = [r for r in needed if r not in runs]
    if lacking:
        raise parameter_error("runs", f"a retrieval run for every answering run (lacking"
                              f" {', '.join(map(repr, lacking))})", sorted(runs))
    return {name: run if isinstance(run, Run) else Run.read(run)
            for name, run in runs.items() if name in needed}


def _ranked(runs: dict) -> pl.DataFrame:
    """``run_id``, ``topic_id``, ``segment_id``, ``rank`` (1 = best score; ties in the
    run's score broken by doc id descending, trec_eval's order)."""
    frames = []
    for name, run in runs.items():
        frames.append(run.df.select(topic_id="query_id", segment_id="doc_id", score="score")
                      .sort(["topic_id", "score", "segment_id"], descending=[False, True, True])
                      .with_columns(rank=pl.int_range(1, pl.len() + 1).over("topic_id"),
                                    run_id=pl.lit(name))
                      .drop("score"))
    return pl.concat(frames)


def check_citations(answers: Answers, runs: dict) -> None:
    """Refuse citations of segments the answer's retrieval run did not retrieve.

    Parameters
    ----------
    answers : Answers
        From :func:`~irmetrics.rag.read_answers`.
    runs : dict
        ``{run_id: Run or path of a TREC run}``: the retrieval run of each answering run.

    Raises
    ------
    InputFormatError
        The first citation of a segment absent from the run for its topic, naming the
        answer file, its line, the topic, the segment and the run.

    Examples
    --------
    >>> import tempfile, os
    >>> from irmetrics.rag import read_answers
    >>> line = ('{"run_id": "r", "topic_id": "t1", "references": ["d#1"],'
    ...         ' "answer": [{"text": "x", "citations": [0]}]}\\n')
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
    ...     _ = fh.write(line)
    >>> a = read_answers(fh.name)
    >>> check_citations(a, {"r": Run.from_dict({"t1": {"d#1": 1.0}})})
    >>> check_citations(a, {"r": Run.from_dict({"t1": {"d#2": 1.0}})})
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.InputFormatError: ...: a cited segment is not in run 'r' for the topic (query_id 't1', doc_id 'd#1')
    >>> os.unlink(fh.name)
    """
    ranked = _ranked(_runs(runs, answers))
    stray = answers.citations.join(ranked, on=["run_id", "topic_id", "segment_id"],
                                   how="anti").sort("line", "sentence")
    if stray.height:
        row = stray.row(0, named=True)
        raise InputFormatError(f"a cited segment is not in run {row['run_id']!r} for the"
                               f" topic ({stray.height} such citations)"
                               if stray.height > 1 else
                               f"a cited segment is not in run {row['run_id']!r} for the"
                               " topic", path=answers.source, line=row["line"],
                               query_id=row["topic_id"], doc_id=row["segment_id"])


def citation_scores(answers: Answers, runs: dict | None = None) -> pl.DataFrame:
    r"""Per answer: the share of its sentences that cite, and where the citations rank.

    .. math:: \mathrm{cited\_share} = \frac{\#\{\text{sentences with a citation}\}}
              {\#\{\text{sentences}\}}

    With ``runs``, also ``mean_cited_rank``, the mean rank in the retrieval run of the
    segments the answer cites (after :func:`check_citations`).

    Parameters
    ----------
    answers : Answers
    runs : dict, optional
        ``{run_id: Run or path}`` as for :func:`check_citations`.

    Returns
    -------
    polars.DataFrame
        ``run_id``, ``topic_id``, ``sentences``, ``cited_sentences``, ``citations``,
        ``cited_share`` (null for an answer without sentences) and, with ``runs``,
        ``mean_cited_rank`` (null for an answer without citations).

    Examples
    --------
    >>> import tempfile, os
    >>> from irmetrics.rag import read_answers
    >>> line = ('{"run_id": "r", "topic_id": "t1", "references": ["d#1", "d#2"],'
    ...         ' "answer": [{"text": "x", "citations": [0, 1]}, {"text": "y", "citations": []}]}\n')
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
    ...     _ = fh.write(line)
    >>> run = Run.from_dict({"t1": {"d#1": 2.0, "d#2": 1.0}})
    >>> citation_scores(read_answers(fh.name), {"r": run}).drop("run_id").row(0)
    ('t1', 2, 1, 2, 0.5, 1.5)
    >>> os.unlink(fh.name)
    """
    counts = answers.citations.group_by("run_id", "topic_id").agg(citations=pl.len())
    out = (answers.answers.select("run_id", "topic_id", "sentences", "cited_sentences")
           .join(counts, on=["run_id", "topic_id"], how="left")
           .with_columns(pl.col("citations").fill_null(0),
                         cited_share=pl.when(pl.col("sentences") > 0)
                         .then(pl.col("cited_sentences") / pl.col("sentences")))
           .sort("run_id", "topic_id"))
    if runs is None:
        return out
    check_citations(answers, runs)
    ranks = (answers.citations.join(_ranked(_runs(runs, answers)),
                                    on=["run_id", "topic_id", "segment_id"])
             .group_by("run_id", "topic_id").agg(mean_cited_rank=pl.col("rank").mean()))
    return out.join(ranks, on=["run_id", "topic_id"], how="left").sort("run_id", "topic_id")


__all__ = ["check_citations", "citation_scores"]
