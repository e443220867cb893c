"""``irmetrics similarity``: how alike two runs are (RBO with ties, tau, Jaccard, overlap,
recall at k), per query and on average with bootstrap intervals over queries.
See docs/leaderboards.md."""

from __future__ import annotations

import argparse
import json
import math

from ..io.output import check_not_input
from ..similarity import run_similarity
from ..stats.similarity import RBO_TIES
from .compare_cmd import _parse_float, _write
from .eval_cmd import write_as_read
from .inputs import read_files
from .options import EXIT_OK, CliParser, add_bootstrap, add_version, bootstrap_options, parse_int

DESCRIPTION = """\
How alike are two runs? Per query: rank-biased overlap with ties (Corsi & Urbano), Kendall's
tau-b and tau_AP on the documents both retrieved, Jaccard, overlap and recall at k (A read
as the exact neighbours); then the mean of each over the queries both runs answer, with a
bootstrap interval over queries.

  irmetrics similarity [options] A.run B.run"""

EPILOG = """\
examples:
  irmetrics similarity bm25.run bm25-rerun.run
  irmetrics similarity -p 0.98 --ties w -k 100 exact.run ann.run
  irmetrics similarity -q --format csv -o per_query.csv a.run b.run

Queries only one run answers are left out and listed on stderr. A run file that is not
UTF-8 is read as Latin-1 bytes, as irmetrics eval reads it.
exit status: 0 ok; 1 usage; 2 unreadable or malformed input, bad parameter."""


def build_parser() -> CliParser:
    p = CliParser(prog="irmetrics similarity", description=DESCRIPTION, epilog=EPILOG,
                  formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    g = p.add_argument_group("similarity")
    g.add_argument("-h", "--help", action="help", help="show this help and exit")
    add_version(g)
    g.add_argument("-p", "--persistence", default="0.9", metavar="P",
                   help="RBO persistence in (0, 1) (default 0.9)")
    g.add_argument("--ties", default="a", choices=RBO_TIES,
                   help="RBO with ties: a = expected over random tie breaks (default),"
                        " w = ties are equal, b = corrected so RBO(X, X) = 1")
    g.add_argument("-k", "--cutoff", default="10", metavar="K",
                   help="k of Jaccard, overlap and recall (default 10)")
    g.add_argument("--depth", metavar="N", help="cut both runs at depth N first")
    g.add_argument("--no-tau", action="store_true",
                   help="skip tau-b and tau_AP (quadratic in the shared documents)")
    g.add_argument("-q", "--per-query", action="store_true", help="one row per query too")
    add_bootstrap(g, resamples=1000)
    p.add_argument("a", help="run A (the exact or reference one)")
    p.add_argument("b", help="run B")
    return p


def _cell(value) -> str:
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def _render(result, args) -> str:
    summary = result.summary.to_dicts()
    rows = result.per_query.to_dicts() if args.per_query else []
    if args.format == "json":
        def clean(d):
            return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}
        return json.dumps({"p": result.p, "ties": result.ties, "k": result.k, "level": result.level,
                           "id_encoding": result.id_encoding,
                           "summary": [clean(d) for d in summary],
                           "per_query": [clean(d) for d in rows],
                           "only_a": result.only_a, "only_b": result.only_b}, indent=1) + "\n"
    if args.format == "csv":
        if args.per_query:
            header = list(result.per_query.columns)
            return "\n".join([",".join(header)] + [",".join(_cell(r[c]) if c != "query_id" else
                                                            str(r[c]) for c in header)
                                                   for r in rows]) + "\n"
        header = list(result.summary.columns)
        return "\n".join([",".join(header)] + [",".join(_cell(r[c]) for c in header)
                                               for r in summary]) + "\n"
    lines = []
    sep = " | " if args.format == "markdown" else "  "
    head = ["statistic", "mean", f"{result.level:.0%} low", "high", "queries"]
    table = [head] + [[d["statistic"], _cell(d["mean"]), _cell(d["low"]), _cell(d["high"]),
                       str(d["queries"])] for d in summary]
    if args.per_query:
        cols = list(result.per_query.columns)
        per = [cols] + [[_cell(r[c]) for c in cols] for r in rows]
    else:
        per = []
    for block in (table, per):
        if not block:
            continue
        widths = [max(len(r[i]) for r in block) for i in range(len(block[0]))]
        for i, row in enumerate(block):
            text = sep.join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
            lines.append(f"| {text} |" if args.format == "markdown" else text)
            if i == 0 and args.format == "markdown":
                lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        lines.append("")
    title = (f"RBO p={result.p} ties={result.ties}; sets at k={result.k}"
             + (f"; depth {result.depth}" if result.depth else ""))
    return title + "\n\n" + "\n".join(lines)


def run(argv: list[str], stdout, stderr) -> int:
    args = build_parser().parse(argv)
    p = _parse_float("-p", args.persistence)
    k = parse_int("-k", args.cutoff, minimum=1)
    depth = None if args.depth is None else parse_int("--depth", args.depth, minimum=1)
    options = bootstrap_options(args)
    if args.output is not None:
        check_not_input("-o", args.output, {"run A": args.a, "run B": args.b})
    result = run_similarity(args.a, args.b, p=p, ties=args.ties, k=k, depth=depth,
                            correlations=not args.no_tau, **options)
    for name, missing in (("A", result.only_a), ("B", result.only_b)):
        if missing:
            shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
            stderr.write(f"irmetrics similarity: {len(missing)} queries only in run {name},"
                         f" left out: {shown}\n")
    text = _render(result, args)
    if args.output is None:  # Latin-1 ids go back out as the bytes they were read from
        write_as_read(stdout, text, result.id_encoding)
    else:
        _write(text, args.output, stdout, read_files([args.a, args.b], []))
    return EXIT_OK
