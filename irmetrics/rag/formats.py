"""Readers for the files of retrieval-augmented generation evaluation.

* :func:`read_nuggets` -- castorini/nuggetizer's nugget file (``create`` output): one JSON
  object per line, ``{"qid", "query", "nuggets": [{"text", "importance"}]}``;
* :func:`read_assignments` -- nuggetizer's assignment file (``assign`` output, answers
  mode): ``{"qid", "run_id", "answer_text", "nuggets": [{"text", "importance",
  "assignment"}]}``, one line per (run, topic);
* :func:`read_leaderboard` -- autojudge-evaluate's leaderboard files (``tot``,
  ``ir_measures``, ``jsonl``): one value per (run, measure, topic), ``all`` the aggregate;
* :func:`read_answers` -- the TREC RAG answer format (castorini/ragnarok, TREC RAG 2024 and
  2025): ``{"run_id", "topic_id" | "narrative_id", "references": [segment ids], "answer":
  [{"text", "citations": [indices into references]}]}``.

Each returns polars DataFrames with one row per nugget (or citation), so that the measures
of :mod:`irmetrics.rag.nuggets` are column operations. Every error names the file, the
1-based line and the topic, and the run where the line has one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
import polars as pl

from irmetrics.exceptions import InputFormatError
# nuggetizer's labels and its mark of a failed LLM call (refused here unless
# ``failed="keep"``) are the measures' own.
from irmetrics.measures.nuggets import ASSIGNMENT, FAILED, IMPORTANCE


def _records(path):
    """``(line number, object)`` of every non-blank line of a JSON Lines file."""
    source = os.fspath(path)
    try:
        # utf-8-sig: a BOM from a Windows editor is not part of the first record
        with open(source, encoding="utf-8-sig") as fh:
            text = fh.read()
    except OSError as err:
        raise InputFormatError(f"cannot read the file ({err.strerror})", path=source) from None
    except UnicodeDecodeError:
        raise InputFormatError("not UTF-8 text (JSON Lines are UTF-8)", path=source) from None
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputFormatError(f"not a JSON object ({err.msg})", path=source,
                                   line=number) from None
        if not isinstance(record, dict):
            raise InputFormatError(f"expected a JSON object, found {type(record).__name__}",
                                   path=source, line=number)
        out.append((number, record))
    if not out:
        raise InputFormatError("no records (an empty file)", path=source)
    return source, out


def _field(record: dict, names: tuple, source: str, line: int, what: str):
    for name in names:
        if name in record:
            value = record[name]
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
                return str(value)
            raise InputFormatError(f"`{name}` must be a non-empty string; got {value!r}",
                                   path=source, line=line)
    raise InputFormatError(f"no {what} (expected the field {' or '.join(map(repr, names))})",
                           path=source, line=line)


def _nugget_list(record: dict, source: str, line: int, topic: str, run: str | None,
                 failed: bool = False):
    nuggets = record.get("nuggets")
    if not isinstance(nuggets, list):
        raise InputFormatError(f"`nuggets` must be a list{_of_run(run)}; got {nuggets!r}",
                               path=source, line=line, query_id=topic)
    for i, nugget in enumerate(nuggets):
        if not isinstance(nugget, dict) or not isinstance(nugget.get("text"), str):
            raise InputFormatError(f"nugget {i} must be an object with a string `text`"
                                   f"{_of_run(run)}; got {nugget!r}", path=source, line=line,
                                   query_id=topic)
        if nugget.get("importance") not in IMPORTANCE + ((FAILED,) if failed else ()):
            raise InputFormatError(f"nugget {i} `importance` must be one of"
                                   f" {', '.join(IMPORTANCE)}{_of_run(run)}; got"
                                   f" {nugget.get('importance')!r}{_failed_hint(nugget)}",
                                   path=source, line=line, query_id=topic)
    return nuggets


def _failed_hint(nugget: dict) -> str:
    if FAILED in (nugget.get("importance"), nugget.get("assignment")):
        return (" (nuggetizer's mark of a failed LLM call; failed='keep' scores it as"
                " nuggetizer does)")
    return ""


def _of_run(run: str | None) -> str:
    return f" in run {run!r}" if run is not None else ""


def read_nuggets(path, *, failed: str = "error") -> pl.DataFrame:
    """Read nuggetizer's nugget file: the nuggets of every topic.

    Parameters
    ----------
    path : str or os.PathLike
        JSON Lines, one topic a line: ``{"qid": ..., "nuggets": [{"text": ...,
        "importance": "vital" | "okay"}, ...]}`` (other fields, such as ``query``, are
        ignored).
    failed : {"error", "keep"}, default "error"
        Refuse nuggetizer's ``failed`` importance (a nugget its scorer did not grade), or
        keep it (scored as nuggetizer does: not vital).

    Returns
    -------
    polars.DataFrame
        ``topic_id``, ``nugget`` (position in the topic's list, from 0), ``text``,
        ``importance``; one row a nugget, in file order.

    Raises
    ------
    InputFormatError
        A line that is not a JSON object, no ``qid``, ``nuggets`` not a list, an importance
        other than ``vital``/``okay``, a topic given twice; naming file, line and topic.

    Examples
    --------
    >>> import tempfile, os
    >>> line = '{"qid": "q1", "nuggets": [{"text": "a", "importance": "vital"}]}\\n'
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
    ...     _ = fh.write(line)
    >>> read_nuggets(fh.name).rows()
    [('q1', 0, 'a', 'vital')]
    >>> os.unlink(fh.name)
    """
    from irmetrics.checks import check_choice

    keep = check_choice("failed", failed, ("error", "keep")) == "keep"
    source, records = _records(path)
    topics: list[str] = []
    positions: list[int] = []
    texts: list[str] = []
    importance: list[str] = []
    seen: dict[str, int] = {}
    for line, record in records:
        topic = _field(record, ("qid",), source, line, "topic id")
        if topic in seen:
            raise InputFormatError(f"topic given twice (first on line {seen[topic]})",
                                   path=source, line=line, query_id=topic)
        seen[topic] = line
        nuggets = _nugget_list(record, source, line, topic, None, keep)
        topics += [topic] * len(nuggets)
        positions += range(len(nuggets))
        texts += [n["text"] for n in nuggets]
        importance += [n["importance"] for n in nuggets]
    return pl.DataFrame({"topic_id": topics, "nugget": positions, "text": texts,
                         "importance": importance},
                        schema={"topic_id": pl.String, "nugget": pl.Int64, "text": pl.String,
                                "importance": pl.String})


def read_assignments(path, *, run_id: str | None = None, failed: str = "error") -> pl.DataFrame:
    """Read nuggetizer's assignment file: which nuggets each answer supports.

    Parameters
    ----------
    path : str or os.PathLike
        JSON Lines, one answer a line: ``{"qid": ..., "run_id": ..., "nuggets": [{"text":
        ..., "importance": ..., "assignment": "support" | "partial_support" |
        "not_support"}, ...]}``.
    run_id : str, optional
        The run of lines without a ``run_id`` field (nuggetizer writes one only in
        answers mode); default: the file name without its suffixes.
    failed : {"error", "keep"}, default "error"
        What to do with nuggetizer's ``failed`` mark (an importance or assignment its LLM
        call did not give): refuse it, or keep it and score it as nuggetizer does (a
        ``failed`` assignment earns no credit, a ``failed`` importance is not vital and
        weighs as ``okay``).

    Returns
    -------
    polars.DataFrame
        ``run_id``, ``topic_id``, ``line``, ``nugget`` (position in the answer's list),
        ``text``, ``importance``, ``assignment``; one row a nugget. An answer with an
        empty nugget list has one row with ``nugget``, ``text``, ``importance`` and
        ``assignment`` null, so that it is listed, not lost.

    Raises
    ------
    InputFormatError
        A label outside support/partial_support/not_support, a bad importance, no
        ``qid``, an answer given twice for a (run, topic); naming file, line, topic
        and run.

    Examples
    --------
    >>> import tempfile, os
    >>> line = ('{"qid": "q1", "run_id": "r", "nuggets": [{"text": "a", "importance":'
    ...         ' "vital", "assignment": "support"}]}\\n')
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
    ...     _ = fh.write(line)
    >>> read_assignments(fh.name).rows()
    [('r', 'q1', 1, 0, 'a', 'vital', 'support')]
    >>> os.unlink(fh.name)
    """
    from irmetrics.checks import check_choice

    keep = check_choice("failed", failed, ("error", "keep")) == "keep"
    labels = ASSIGNMENT + ((FAILED,) if keep else ())
    source, records = _records(path)
    default_run = run_id if run_id is not None else os.path.basename(source).split(".")[0]
    answers: dict[str, list] = {k: [] for k in ("run_id", "topic_id", "line", "nuggets")}
    texts: list = []
    importance: list = []
    assignment: list = []
    seen: dict[tuple, int] = {}
    for line, record in records:
        topic = _field(record, ("qid", "topic_id"), source, line, "topic id")
        run = (_field(record, ("run_id",), source, line, "run id") if "run_id" in record
               else default_run)
        if (run, topic) in seen:
            raise InputFormatError(f"a second answer of run {run!r} for this topic (first on"
                                   f" line {seen[run, topic]})", path=source, line=line,
                                   query_id=topic)
        seen[run, topic] = line
        nuggets = record.get("nuggets")
        try:  # the values as they are; checked below, column by column
            texts += [n["text"] for n in nuggets]
            importance += [n["importance"] for n in nuggets]
            assignment += [n["assignment"] for n in nuggets]
        except (TypeError, KeyError):
            _check_assigned(record, source, line, topic, run, keep, labels)
            raise _malformed(source, line, topic, run) from None
        for key, value in (("run_id", run), ("topic_id", topic), ("line", line),
                           ("nuggets", len(nuggets))):
            answers[key].append(value)
    counts = np.asarray(answers["nuggets"], dtype=np.int64)
    try:
        columns = {key: pl.Series(key, values, dtype=pl.String) for key, values in
                   (("text", texts), ("importance", importance), ("assignment", assignment))}
    except (TypeError, pl.exceptions.PolarsError):
        columns = {}
    allowed = {"importance": IMPORTANCE + ((FAILED,) if keep else ()), "assignment": labels}
    bad = np.zeros(len(texts), dtype=bool)
    for key, values in columns.items():
        bad |= values.is_null().to_numpy()
        if key in allowed:
            bad |= ~values.is_in(list(allowed[key])).to_numpy()
    if bad.any() or not columns:
        # From the answer of the first bad nugget on (any answer when a column held a
        # value that is not a string), answers are checked alone for a precise message.
        first = int(np.searchsorted(np.cumsum(counts), int(np.argmax(bad)), side="right"))
        for at in range(first if columns else 0, len(records)):
            line, record = records[at]
            _check_assigned(record, source, line, answers["topic_id"][at],
                            answers["run_id"][at], keep, labels)
        raise _malformed(source, records[first][0], answers["topic_id"][first],
                         answers["run_id"][first])
    # One row a nugget; an answer without nuggets keeps one row of nulls (listed, not lost).
    rows = np.maximum(counts, 1)
    starts = np.repeat(np.cumsum(counts) - counts, rows)
    position = np.arange(int(rows.sum())) - np.repeat(np.cumsum(rows) - rows, rows)
    has = np.repeat(counts > 0, rows)
    taken = np.where(has, starts + position, 0)
    frame = pl.DataFrame({
        "run_id": pl.Series(answers["run_id"], dtype=pl.String).gather(np.repeat(
            np.arange(len(counts)), rows)),
        "line": np.repeat(np.asarray(answers["line"], dtype=np.int64), rows),
        "nugget": position.astype(np.int64), "has": has,
        **{key: (columns[key].gather(taken) if len(texts)
                 else pl.Series([None] * len(taken), dtype=pl.String))
           for key in ("text", "importance", "assignment")}})
    topic = pl.Series(answers["topic_id"], dtype=pl.String).gather(
        np.repeat(np.arange(len(counts)), rows))
    nullable = ["nugget", "text", "importance", "assignment"]
    return (frame.with_columns(topic_id=topic)
            .with_columns(pl.when(pl.col("has")).then(pl.col(c)).alias(c) for c in nullable)
            .select("run_id", "topic_id", "line", *nullable))


def _check_assigned(record: dict, source: str, line: int, topic: str, run: str, keep: bool,
                    labels: tuple) -> None:
    """Raise the error of an answer's first bad nugget, if it has one."""
    nuggets = _nugget_list(record, source, line, topic, run, keep)
    for i, nugget in enumerate(nuggets):
        if nugget.get("assignment") not in labels:
            raise InputFormatError(f"nugget {i} `assignment` must be one of"
                                   f" {', '.join(ASSIGNMENT)} in run {run!r}; got"
                                   f" {nugget.get('assignment')!r}{_failed_hint(nugget)}",
                                   path=source, line=line, query_id=topic)


def _malformed(source: str, line: int, topic: str, run: str) -> InputFormatError:
    return InputFormatError(f"a nugget of run {run!r} is not an object with string `text`,"
                            " `importance` and `assignment`", path=source, line=line,
                            query_id=topic)


@dataclass(frozen=True)
class Answers:
    """Generated answers in the TREC RAG format (:func:`read_answers`).

    Attributes
    ----------
    answers : polars.DataFrame
        One row an answer: ``run_id``, ``topic_id``, ``line``, ``sentences``,
        ``cited_sentences`` (sentences with at least one citation), ``references``.
    citations : polars.DataFrame
        One row a citation: ``run_id``, ``topic_id``, ``line``, ``sentence`` (from 0),
        ``segment_id`` (the reference it points to).
    source : str
    """

    answers: pl.DataFrame
    citations: pl.DataFrame
    source: str


def read_answers(path) -> Answers:
    """Read generated answers in the TREC RAG format (ragnarok's output).

    Parameters
    ----------
    path : str or os.PathLike
        JSON Lines, one answer a line: ``{"run_id": ..., "topic_id": ... (TREC RAG 2024) or
        "narrative_id": ... (2025), "references": [segment ids], "answer": [{"text": ...,
        "citations": [indices into references]}]}``. Segment ids are taken whole: a ``#``
        inside one (``msmarco_v2.1_doc_02_1767598871#0_2981309782``) is no comment.

    Returns
    -------
    Answers

    Raises
    ------
    InputFormatError
        No run or topic id, ``references`` not a list of strings, a citation that is not
        an index into ``references``, a (run, topic) answered twice; naming file, line,
        topic and run.

    Examples
    --------
    >>> import tempfile, os
    >>> line = ('{"run_id": "r", "topic_id": "t1", "references": ["d#0_1", "d#1_2"],'
    ...         ' "answer": [{"text": "x", "citations": [1]}, {"text": "y", "citations": []}]}\\n')
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
    ...     _ = fh.write(line)
    >>> a = read_answers(fh.name)
    >>> a.citations.select("topic_id", "sentence", "segment_id").rows()
    [('t1', 0, 'd#1_2')]
    >>> a.answers.select("sentences", "cited_sentences").row(0)
    (2, 1)
    >>> os.unlink(fh.name)
    """
    source, records = _records(path)
    answers: dict[str, list] = {k: [] for k in ("run_id", "topic_id", "line", "sentences",
                                                "cited_sentences", "references")}
    cites: dict[str, list] = {k: [] for k in ("run_id", "topic_id", "line", "sentence",
                                              "segment_id")}
    seen: dict[tuple, int] = {}
    for line, record in records:
        run = _field(record, ("run_id",), source, line, "run id")
        topic = _field(record, ("topic_id", "narrative_id"), source, line, "topic id")
        if (run, topic) in seen:
            raise InputFormatError(f"a second answer of run {run!r} for this topic (first on"
                                   f" line {seen[run, topic]})", path=source, line=line,
                                   query_id=topic)
        seen[run, topic] = line
        refs = record.get("references", [])
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            raise InputFormatError(f"`references` must be a list of segment ids in run"
                                   f" {run!r}; got {refs!r}", path=source, line=line,
                                   query_id=topic)
        sentences = record.get("answer")
        if not isinstance(sentences, list):
            raise InputFormatError(f"`answer` must be a list of sentences in run {run!r};"
                                   f" got {sentences!r}", path=source, line=line,
                                   query_id=topic)
        cited = 0
        for s, sentence in enumerate(sentences):
            indices = sentence.get("citations", []) if isinstance(sentence, dict) else None
            if not isinstance(indices, list):
                raise InputFormatError(f"sentence {s} must be an object with a list"
                                       f" `citations` in run {run!r}; got {sentence!r}",
                                       path=source, line=line, query_id=topic)
            for index in indices:
                if (not isinstance(index, int) or isinstance(index, bool)
                        or not 0 <= index < len(refs)):
                    raise InputFormatError(f"sentence {s} cites {index!r}, which is not an"
                                           f" index into its {len(refs)} references in run"
                                           f" {run!r}", path=source, line=line,
                                           query_id=topic)
            # A segment cited twice by one sentence counts once (ragnarok's validator).
            unique = list(dict.fromkeys(indices))
            cited += bool(unique)
            cites["run_id"] += [run] * len(unique)
            cites["topic_id"] += [topic] * len(unique)
            cites["line"] += [line] * len(unique)
            cites["sentence"] += [s] * len(unique)
            cites["segment_id"] += [refs[i] for i in unique]
        answers["run_id"].append(run)
        answers["topic_id"].append(topic)
        answers["line"].append(line)
        answers["sentences"].append(len(sentences))
        answers["cited_sentences"].append(cited)
        answers["references"].append(len(refs))
    return Answers(
        pl.DataFrame(answers, schema={"run_id": pl.String, "topic_id": pl.String,
                                      "line": pl.Int64, "sentences": pl.Int64,
                                      "cited_sentences": pl.Int64, "references": pl.Int64}),
        pl.DataFrame(cites, schema={"run_id": pl.String, "topic_id": pl.String,
                                    "line": pl.Int64, "sentence": pl.Int64,
                                    "segment_id": pl.String}),
        source)


#: autojudge-evaluate's leaderboard formats read by :func:`read_leaderboard`: the order
#: of the fields of a text line (``jsonl`` has them by name).
LEADERBOARD_FORMATS = {"tot": ("run_id", "measure", "topic_id", "value"),
                       "ir_measures": ("run_id", "topic_id", "measure", "value"),
                       "jsonl": ()}


def read_leaderboard(path, *, format: str = "tot") -> pl.DataFrame:
    """Read a leaderboard file of autojudge-evaluate (TREC AutoJudge).

    Parameters
    ----------
    path : str or os.PathLike
        ``tot``: ``run_id measure topic_id value`` lines; ``ir_measures``: ``run_id topic_id
        measure value``; ``jsonl``: objects with ``run_id``, ``topic_id``, ``measure``,
        ``value``. The topic ``all`` holds a run's aggregate.
    format : {"tot", "ir_measures", "jsonl"}, default "tot"

    Returns
    -------
    polars.DataFrame
        ``run_id``, ``measure``, ``topic_id``, ``value`` (float), ``line``.

    Raises
    ------
    InputFormatError
        A line with the wrong number of fields, a value that is not a number, a (run,
        measure, topic) given twice; naming file, line, topic and run.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
    ...     _ = fh.write("run_01 M1 query-01 1\\nrun_01 M1 all 1\\n")
    >>> read_leaderboard(fh.name).select("run_id", "measure", "topic_id", "value").rows()
    [('run_01', 'M1', 'query-01', 1.0), ('run_01', 'M1', 'all', 1.0)]
    >>> os.unlink(fh.name)
    """
    from irmetrics.checks import check_choice

    check_choice("format", format, tuple(LEADERBOARD_FORMATS))
    source = os.fspath(path)
    rows: dict[str, list] = {k: [] for k in ("run_id", "measure", "topic_id", "value", "line")}
    if format == "jsonl":
        _, records = _records(path)
        for line, record in records:
            for key in ("run_id", "measure", "topic_id"):
                rows[key].append(_field(record, (key,), source, line, key))
            rows["value"].append(record.get("value"))
            rows["line"].append(line)
    else:
        order = LEADERBOARD_FORMATS[format]
        try:
            with open(source, encoding="utf-8-sig") as fh:
                lines = fh.read().splitlines()
        except OSError as err:
            raise InputFormatError(f"cannot read the file ({err.strerror})",
                                   path=source) from None
        except UnicodeDecodeError:
            raise InputFormatError("not UTF-8 text", path=source) from None
        for number, text in enumerate(lines, start=1):
            parts = text.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise InputFormatError(f"a {format} line has 4 fields ({' '.join(order)});"
                                       f" found {len(parts)}", path=source, line=number)
            for key, value in zip(order, parts):
                rows[key].append(value)
            rows["line"].append(number)
    values = []
    for i, value in enumerate(rows["value"]):
        try:
            values.append(float(value))
        except (TypeError, ValueError):
            raise InputFormatError(f"the value {value!r} of measure {rows['measure'][i]!r} in"
                                   f" run {rows['run_id'][i]!r} is not a number",
                                   path=source, line=rows["line"][i],
                                   query_id=rows["topic_id"][i]) from None
    rows["value"] = values
    frame = pl.DataFrame(rows, schema={"run_id": pl.String, "measure": pl.String,
                                       "topic_id": pl.String, "value": pl.Float64,
                                       "line": pl.Int64})
    twice = frame.filter(pl.struct("run_id", "measure", "topic_id").is_duplicated())
    if twice.height:
        row = twice.row(1, named=True)
        raise InputFormatError(f"measure {row['measure']!r} of run {row['run_id']!r} given"
                               " twice for the topic", path=source, line=row["line"],
                               query_id=row["topic_id"])
    return frame


__all__ = ["ASSIGNMENT", "FAILED", "IMPORTANCE", "LEADERBOARD_FORMATS", "Answers", "read_answers",
           "read_assignments", "read_leaderboard", "read_nuggets"]
