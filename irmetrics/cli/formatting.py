"""Output writers: trec_eval 10's text byte for byte, plus json, csv, tsv and markdown.

Everything is driven by :class:`~irmetrics.results.Results` and the measure declarations
it carries (``measure_of(name).printed`` / ``.summary``); there is no list of measure
names here.

trec_eval's line formats (docs/reference/trec_eval.md §7.1)::

    double      "%-22s\t%s\t%6.4f"     name, qid or "all", value
    long        "%-22s\t%s\t%ld"       value truncated toward zero
    runid       "%-22s\t%s\t%s"        the run_id string
    relstring   "%-22s\t%s\t'%s'"      per query only
    -Z          "Z%-22s\t%s\t%6.4f"    every number, long ones included

A NaN made by 0/0 on x86 has its sign bit set and C prints it ``-nan``; Python prints
``nan`` for both signs, so NaN is formatted here from its sign.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass

from ..measures.registry import DOUBLE, HIDDEN, LONG, NUM_Q, RUNID, STRING
from ..results import Results

FORMATS = ("trec", "json", "csv", "tsv", "markdown")


@dataclass
class RunBlock:
    """One evaluated run: where it came from and its results."""

    path: str
    results: Results


def c_double(value: float) -> str:
    """C's ``%6.4f``, including ``  -nan`` / ``   nan``."""
    if math.isnan(value):
        return "%6s" % ("-nan" if math.copysign(1.0, value) < 0 else "nan")
    return "%6.4f" % value


def c_long(value) -> str:
    """C's ``%ld`` of a double truncated by ``(long)``."""
    return "%d" % math.trunc(value)


def _per_query_kind(results: Results, name: str) -> str:
    return results.measure_of(name).printed


def _summary_kind(results: Results, name: str) -> str:
    m = results.measure_of(name)
    if m.summary == RUNID:
        return STRING
    if m.summary == NUM_Q or m.printed == LONG:
        return LONG
    return DOUBLE


def trec_text(results: Results, *, per_query: bool, summary: bool, zscore: bool = False,
              before_query: str | None = None) -> str:
    """trec_eval's stdout for one run.

    Parameters
    ----------
    per_query : bool
        ``-q``: every query's lines, queries in byte order, measures in table order.
    summary : bool
        The ``all`` lines (``-n`` turns them off).
    zscore : bool
        ``-Z`` printing: ``Z`` before the name and every number as ``%6.4f``.
    before_query : str, optional
        Print only queries whose id sorts before this one and no summary: what
        trec_eval 10 has printed when it stops on a query missing from the run.
    """
    head = "Z%-22s\t%s\t" if zscore else "%-22s\t%s\t"
    plain = "%-22s\t%s\t"
    lines: list[str] = []
    if per_query:
        qids = list(results.query_ids)
        if before_query is not None:
            qids = [q for q in qids if q < before_query]
        columns = []
        for name in results.names:
            kind = _per_query_kind(results, name)
            if kind == HIDDEN:
                continue
            values = results.values(name)[:len(qids)]
            if kind == STRING:
                cells = [plain % (name, q) + "'%s'" % v for q, v in zip(qids, values)]
            elif kind == LONG and not zscore:
                cells = [head % (name, q) + c_long(v) for q, v in zip(qids, values)]
            else:
                cells = [head % (name, q) + c_double(v) for q, v in zip(qids, values)]
            columns.append(cells)
        for row in zip(*columns):
            lines.extend(row)
    if summary and before_query is None:
        for name in results.names:
            value = results.summary_value(name)
            if value is None:
                continue
            kind = _summary_kind(results, name)
            if kind == STRING:
                lines.append(plain % (name, "all") + str(value))
            elif kind == LONG and not zscore:
                lines.append(head % (name, "all") + c_long(value))
            else:
                lines.append(head % (name, "all") + c_double(float(value)))
    return "".join(line + "\n" for line in lines)


# -- machine-readable and markdown formats -----------------------------------------------
#
# A summary line is marked by its scope, never by the query id "all": a query may be
# called "all" (trec_eval's text format cannot tell them apart; these formats can).

#: ``scope`` of a per-query record and of a summary record.
QUERY_SCOPE, SUMMARY_SCOPE = "query", "all"


def _records(results: Results, *, per_query: bool, summary: bool):
    """``(scope, query_id, name, value)`` in trec_eval's line order; ``query_id`` is None
    on summary records. Values typed for output: int for counts, str for
    runid/relstring, float otherwise."""
    if per_query:
        cols = []
        for name in results.names:
            kind = _per_query_kind(results, name)
            if kind == HIDDEN:
                continue
            values = results.values(name)
            cols.append([(QUERY_SCOPE, q, name, _typed(v, kind))
                         for q, v in zip(results.query_ids, values)])
        for row in zip(*cols):
            yield from row
    if summary:
        for name in results.names:
            value = results.summary_value(name)
            if value is not None:
                yield SUMMARY_SCOPE, None, name, _typed(value, _summary_kind(results, name))


def _typed(value, kind):
    if kind == STRING:
        return str(value)
    if kind == LONG:
        return math.trunc(value)
    return float(value)


def _json_value(value):
    return None if isinstance(value, float) and not math.isfinite(value) else value


def render_json(blocks: list[RunBlock], *, per_query: bool, summary: bool) -> str:
    """``{"runs": [{"file", "run_id", "id_encoding", "summary": {...},
    "per_query": {qid: {...}}}]}``.

    Runs are listed in command-line order, each with its file and run tag; a query
    whose id is ``all`` is an ordinary ``per_query`` key. NaN and infinities become
    ``null`` (JSON has no NaN). ``id_encoding`` (``Results.id_encoding``) says how the
    ids were decoded: under ``"latin-1"`` each character of an id (and of the run tag)
    stands for one byte of the files, ``id.encode("latin-1")``.
    """
    runs = []
    for block in blocks:
        entry = {"file": block.path, "run_id": block.results.run_name,
                 "id_encoding": block.results.id_encoding}
        per_q: dict = {}
        summ: dict = {}
        for scope, qid, name, value in _records(block.results, per_query=per_query,
                                                summary=summary):
            target = summ if scope == SUMMARY_SCOPE else per_q.setdefault(qid, {})
            target[name] = _json_value(value)
        if summary:
            entry["summary"] = summ
        if per_query:
            entry["per_query"] = per_q
        runs.append(entry)
    return json.dumps({"runs": runs}, indent=2, ensure_ascii=False) + "\n"


#: Header of ``--format csv``/``tsv``.
DELIMITED_HEADER = ("run", "file", "scope", "query_id", "measure", "value")


def render_delimited(blocks: list[RunBlock], *, per_query: bool, summary: bool,
                     delimiter: str) -> str:
    """Long format ``run,file,scope,query_id,measure,value``.

    ``run`` is the run tag and ``file`` the run file (``<stdin>`` for ``-``), so runs
    with the same tag stay apart. ``scope`` is ``query`` on per-query rows and ``all``
    on summary rows, whose ``query_id`` is empty (a query may be called ``all``).
    Floats are written with ``repr`` (round-trip exact); NaN as ``nan``.
    """
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(DELIMITED_HEADER)
    for block in blocks:
        label = block.results.run_name
        for scope, qid, name, value in _records(block.results, per_query=per_query,
                                                summary=summary):
            writer.writerow([label, block.path, scope, "" if qid is None else qid, name,
                             repr(value) if isinstance(value, float) else value])
    return out.getvalue()


#: Characters escaped in markdown cells: the cell separator and inline markup, so that
#: an id is shown as typed and never read as a table border or as emphasis.
_MARKDOWN_SPECIAL = re.compile(r"([\\|*`])")

#: The query cell of a summary row: bold, so that a query called "all" (shown plain)
#: is not mistaken for it.
_MD_SUMMARY = "**all**"


def md_escape(text: str) -> str:
    """``text`` for a markdown table cell: ``|``, ``\\``, ``*`` and backticks escaped with
    a backslash (``_`` is left alone: inside a word, as in ``P_5``, it is not markup).

    >>> print(md_escape("a|b*c_d"))
    a\\|b\\*c_d
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _md_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return c_double(value).strip()
    return md_escape(str(value))


def _column_labels(blocks: list[RunBlock]) -> list[str]:
    """Run ids as column headers; file names where run ids collide."""
    names = [b.results.run_name for b in blocks]
    return [b.path if names.count(n) > 1 else n for b, n in zip(blocks, names)]


def render_markdown(blocks: list[RunBlock], *, per_query: bool, summary: bool) -> str:
    """One table, a column per run: rows are measures (summary), plus one row per
    (query, measure) with ``-q``, where summary rows show ``**all**`` as the query.
    Numbers print ``%.4f`` as trec_eval does; ids and names are escaped (:func:`md_escape`).
    """
    tables = [{(qid, n): v for _, qid, n, v in
               _records(b.results, per_query=per_query, summary=summary)} for b in blocks]
    keys: list = []
    if per_query:
        qids = sorted({q for b in blocks for q in b.results.query_ids})
        names = [n for n in blocks[0].results.names
                 if _per_query_kind(blocks[0].results, n) != HIDDEN]
        keys += [(q, n) for q in qids for n in names]
    if summary:
        seen = set()
        for table in tables:
            for key in table:
                if key[0] is None and key not in seen:
                    seen.add(key)
                    keys.append(key)
    header = ["measure", "query"] if per_query else ["measure"]
    header += [md_escape(label) for label in _column_labels(blocks)]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] * (len(header) - len(blocks)) + ["---:"] * len(blocks)) + "|"]
    for q, n in keys:
        row = [md_escape(n)]
        if per_query:
            row.append(_MD_SUMMARY if q is None else md_escape(q))
        row += [_md_cell(t.get((q, n))) for t in tables]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"
