"""Judgments and runs in other tools' forms: ``irds:<dataset id>`` (the qrels of an
ir_datasets dataset, through the optional ``ir_datasets`` package) and ranx's JSON files
(``{query_id: {doc_id: value}}``).

:func:`external_qrels` is the one test every qrels input goes through (``evaluate``,
``Evaluator``, ``compare``, ``evaluate_grid``, ``agree`` and the CLI): it returns the
:class:`~irmetrics.Qrels` of such a source, or None for anything else.
"""

from __future__ import annotations

import contextlib
import math
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import json

    import polars as pl
else:
    from irmetrics.lazy import LazyModule
    from irmetrics.lazy import polars as pl  # imported on first use

    json = LazyModule("json")  # read with ranx's files only; the dict roads import this module

from irmetrics.containers import Qrels, Run
from irmetrics.exceptions import InputFormatError

__all__ = ["IRDS_PREFIX", "INSTALL_HINT", "is_irds", "is_json", "external_qrels",
           "read_irds_qrels", "read_ranx_qrels", "read_ranx_run", "read_autojudge_leaderboard",
           "AUTOJUDGE_FORMATS", "AUTOJUDGE_ALL"]

#: autojudge-evaluate's leaderboard files (``auto-judge-evaluate --eval-format``): ``tot``
#: lines ``run_id measure topic_id value``; ``jsonl`` objects with ``run_id``,
#: ``topic_id``, ``measure`` and ``value``.
AUTOJUDGE_FORMATS = ("tot", "jsonl")
#: The topic id of a run's aggregate row in those files.
AUTOJUDGE_ALL = "all"

#: What a qrels source names an ir_datasets dataset with: ``irds:msmarco-passage/dev``.
IRDS_PREFIX = "irds:"
#: How to install what ``irds:`` needs, for error messages.
INSTALL_HINT = 'pip install "irmetrics-exact[irds]"'


def is_irds(source: Any) -> bool:
    """Whether ``source`` names an ir_datasets dataset (``"irds:<id>"``)."""
    return isinstance(source, str) and source.startswith(IRDS_PREFIX)


def is_json(source: Any) -> bool:
    """Whether ``source`` is a path ending in ``.json`` (ranx's JSON form)."""
    return isinstance(source, (str, os.PathLike)) and \
        os.fsdecode(os.fspath(source)).lower().endswith(".json")


def external_qrels(source: Any, relevance: str = "int") -> Qrels | None:
    """The qrels ``source`` names when it is ``irds:<id>`` or a ``.json`` file; else None.

    >>> external_qrels("qrels.txt") is None
    True
    """
    if is_irds(source):
        return read_irds_qrels(source, relevance=relevance)
    if is_json(source):
        return read_ranx_qrels(source, relevance=relevance)
    return None


def read_irds_qrels(source: str, *, relevance: str = "int") -> Qrels:
    """The qrels of an ir_datasets dataset: ``read_irds_qrels("irds:<dataset id>")``.

    Needs the optional ``ir_datasets`` package (``pip install
    "irmetrics-exact[irds]"``); it downloads what the dataset needs on first use, and
    its messages (what it downloads, where) go to the log as ir_datasets writes them.

    Parameters
    ----------
    source : str
        ``"irds:"`` then the dataset id, e.g. ``"irds:msmarco-passage/trec-dl-2019/judged"``.
    relevance : {"int", "float"}
        As for :func:`irmetrics.io.read_qrels`.

    Returns
    -------
    Qrels
        query_id, iteration, doc_id, relevance in the dataset's order; ``path`` is
        ``source``.

    Raises
    ------
    ImportError
        ir_datasets is not installed (with the install hint).
    InputFormatError
        The id is unknown to ir_datasets, or its dataset has no qrels.

    Examples
    --------
    >>> read_irds_qrels("irds:")
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.InputFormatError: irds:: no dataset id after 'irds:'
    """
    name = source[len(IRDS_PREFIX):]
    if not name:
        raise InputFormatError(f"no dataset id after {IRDS_PREFIX!r}", path=source)
    try:
        import ir_datasets
    except ImportError as exc:
        raise ImportError(f"{source}: qrels by ir_datasets id need the ir_datasets"
                          f" package: {INSTALL_HINT}") from exc
    try:
        dataset = ir_datasets.load(name)
    except KeyError:
        raise InputFormatError("ir_datasets knows no dataset of this id", path=source) \
            from None
    if not dataset.has_qrels():
        raise InputFormatError("this ir_datasets dataset has no qrels", path=source)
    columns: list = list(zip(*((q.query_id, str(getattr(q, "iteration", "0")), q.doc_id,
                                q.relevance) for q in dataset.qrels_iter())))
    columns = columns or [(), (), (), ()]
    frame = pl.DataFrame({"query_id": pl.Series(columns[0], dtype=pl.String),
                          "iteration": pl.Series(columns[1], dtype=pl.String),
                          "doc_id": pl.Series(columns[2], dtype=pl.String),
                          "relevance": list(columns[3])})
    table = Qrels.from_df(frame, relevance_type=relevance)
    table.path = source  # a table of our own: named for messages and reports
    return table


def read_ranx_qrels(path: str | os.PathLike, *, relevance: str = "int") -> Qrels:
    """Qrels from ranx's JSON form ``{query_id: {doc_id: relevance}}`` (``Qrels.save``).

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "qrels.json")
    ...     with open(path, "w") as f:
    ...         _ = f.write('{"q1": {"d1": 1, "d2": 0}}')
    ...     read_ranx_qrels(path).df.select("query_id", "doc_id", "relevance").rows()
    [('q1', 'd1', 1), ('q1', 'd2', 0)]
    """
    data = _load_json(path)
    with _named(path):
        table = Qrels.from_dict(data, relevance_type=relevance)
    table.path = os.fsdecode(os.fspath(path))
    return table


def read_ranx_run(path: str | os.PathLike, *, name: str | None = None) -> Run:
    """A run from ranx's JSON form ``{query_id: {doc_id: score}}`` (``Run.save``).

    ``name`` defaults to the file name without ``.json``.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "bm25.json")
    ...     with open(path, "w") as f:
    ...         _ = f.write('{"q1": {"d1": 2.5, "d2": 1.0}}')
    ...     run = read_ranx_run(path)
    >>> run.name, run.to_dict()
    ('bm25', {'q1': {'d1': 2.5, 'd2': 1.0}})
    """
    data = _load_json(path)
    if name is None:
        name = os.path.basename(os.fsdecode(os.fspath(path)))[:-len(".json")] or "run"
    with _named(path):
        return Run.from_dict(data, name=name)


@contextlib.contextmanager
def _named(path):
    """Errors in the JSON's values name the file, not the ``<dict>`` the reader was given."""
    try:
        yield
    except InputFormatError as error:
        if error.path == "<dict>":
            error.path = os.fsdecode(os.fspath(path))
            error.args = (str(error),)
        raise


def _load_json(path) -> dict:
    source = os.fsdecode(os.fspath(path))
    with open(path, "rb") as f:
        try:
            data = json.loads(f.read())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputFormatError(f"not JSON: {exc}", path=source) from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise InputFormatError("expected a JSON object {query_id: {doc_id: value}} (ranx's"
                               " form)", path=source)
    return data


def read_autojudge_leaderboard(path: str | os.PathLike, kind: str, *,
                               measure: str | None = None) -> dict:
    """A leaderboard of autojudge-evaluate (TREC AutoJudge): ``{run: value}``, or
    ``{measure: {run: value}}`` when the file holds several measures and ``measure`` is
    None.

    A run's value is its ``all`` row when the file has one, else the mean of its topics'
    values (autojudge-evaluate's aggregate).

    Parameters
    ----------
    path : str or os.PathLike
    kind : {"tot", "jsonl"}
        ``tot``: whitespace-separated ``run_id measure topic_id value``; ``jsonl``: one
        JSON object per line with ``run_id``, ``topic_id``, ``measure``, ``value``.
    measure : str, optional
        Keep this measure only (then the result is ``{run: value}``).

    Raises
    ------
    InputFormatError
        A malformed line (file and line named), a value that is not a finite number, a
        repeated (run, measure, topic), no line, or ``measure`` absent.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "board.eval.txt")
    ...     with open(path, "w") as f:
    ...         _ = f.write("bm25 NUGGET 1 0.5\\nbm25 NUGGET 2 0.7\\ndense NUGGET all 0.9\\n")
    ...     read_autojudge_leaderboard(path, "tot")
    {'bm25': 0.6, 'dense': 0.9}
    """
    source = os.fsdecode(os.fspath(path))
    rows = []
    seen: dict = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            run, name, topic, value = _autojudge_row(line, kind, source, number)
            if (run, name, topic) in seen:
                raise InputFormatError(f"a second value for run {run!r}, measure {name!r},"
                                       f" topic {topic!r} (the first is on line"
                                       f" {seen[run, name, topic]})", path=source, line=number)
            seen[run, name, topic] = number
            rows.append((run, name, topic, value))
    if measure is not None:
        rows = [r for r in rows if r[1] == measure]
    if not rows:
        raise InputFormatError("no leaderboard line" + (f" for measure {measure!r}"
                               if measure is not None else ""), path=source)
    frame = pl.DataFrame(rows, schema=["run", "measure", "topic", "value"], orient="row")
    given = frame.filter(pl.col("topic") == AUTOJUDGE_ALL)
    computed = frame.filter(pl.col("topic") != AUTOJUDGE_ALL) \
        .group_by("run", "measure", maintain_order=True).agg(pl.col("value").mean()) \
        .join(given.select("run", "measure"), on=["run", "measure"], how="anti")
    board = pl.concat([given.select("run", "measure", "value"), computed])
    first: dict[str, int] = {}
    for run, *_ in rows:
        first.setdefault(run, len(first))
    nested: dict = {}
    for run, name, value in sorted(board.rows(), key=lambda r: first[r[0]]):
        nested.setdefault(name, {})[run] = value
    return next(iter(nested.values())) if len(nested) == 1 else nested


def _autojudge_row(line: str, kind: str, source: str, number: int):
    if kind == "jsonl":
        try:
            obj = json.loads(line)
            run, name, topic, value = (obj["run_id"], obj["measure"], obj["topic_id"],
                                       obj["value"])
        except (json.JSONDecodeError, KeyError, TypeError):
            raise InputFormatError("expected a JSON object with run_id, topic_id, measure"
                                   " and value", path=source, line=number) from None
    else:
        fields = line.split()
        if len(fields) != 4:
            raise InputFormatError(f"expected 4 fields (run_id measure topic_id value),"
                                   f" found {len(fields)}", path=source, line=number)
        run, name, topic, value = fields
    try:
        number_value = float(value)
    except (TypeError, ValueError):
        number_value = float("nan")
    if not math.isfinite(number_value) or isinstance(value, bool):
        raise InputFormatError(f"value {value!r} is not a finite number", path=source,
                               line=number)
    return str(run), str(name), str(topic), number_value

