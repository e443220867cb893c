"""``irmetrics validate``: irmetrics against pytrec_eval on the same files."""

from __future__ import annotations

import argparse

from ..crosscheck import TOLERANCE, crosscheck, default_measures
from ..measures.parse import parse_measures
from .inputs import read_judgments, read_run
from .options import (EXIT_OK, CliParser, add_version, check_measure_syntax, parse_int,
                      parse_tolerance)

#: Exit status when some value differs (same as a usage error: trec_eval has no other).
EXIT_DIFFERS = 1

DESCRIPTION = """\
Evaluate a run with irmetrics (semantics pytrec_eval) and with pytrec_eval, and compare
every per-query value. Prints one line per output with the largest absolute difference
and the number of queries compared, and lists the queries that differ.

  irmetrics validate [options] qrels run"""

EPILOG = """\
examples:
  irmetrics validate qrels.txt run.txt                  every pytrec_eval measure
  irmetrics validate -m map -m ndcg_cut.10 qrels run    chosen measures
  irmetrics validate -l2 -J qrels.txt run.txt.gz        relevance level 2, judged only

exit status: 0 all outputs agree within the tolerance; 1 some output differs, the two
evaluated different queries, or nothing was compared (no query in common, no numeric
output), or a usage error; 2 unreadable or malformed input, bad parameter."""


def build_parser() -> CliParser:
    p = CliParser(prog="irmetrics validate", description=DESCRIPTION, epilog=EPILOG,
                  formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    p.add_argument("-h", "--help", action="help", help="show this help and exit")
    add_version(p)
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure to compare, repeatable; default: every measure pytrec_eval"
                        " supports, default parameters (e.g. -m map -m P.5,10)")
    p.add_argument("-l", "--level_for_rel", metavar="L", default="1",
                   help="lowest label counted as relevant; default 1 (e.g. -l2)")
    p.add_argument("-J", "--Judged_docs_only", action="store_true",
                   help="drop unjudged documents from every ranking (e.g. -J)")
    p.add_argument("--tolerance", default=repr(TOLERANCE), metavar="TOL",
                   help="largest absolute difference accepted, a finite number >= 0;"
                        f" default {TOLERANCE:g} (e.g. --tolerance 1e-12)")
    p.add_argument("qrels", help="judgments file (e.g. qrels.txt)")
    p.add_argument("run", help="run file in TREC format; '-' reads stdin (e.g. run.txt)")
    return p


def run(argv: list[str], stdout, stderr) -> int:
    args = build_parser().parse(argv)
    level = parse_int("-l", args.level_for_rel)
    tolerance = parse_tolerance(args.tolerance)
    measures = args.measures or default_measures()
    check_measure_syntax(measures)
    parse_measures(measures, supported=lambda m: m.pytrec_eval)
    qrels = read_judgments(args.qrels, "qrels")
    run_ = read_run(args.run)
    report = crosscheck(qrels, run_, measures, relevance_level=level,
                        judged_only=args.Judged_docs_only, tolerance=tolerance)
    stdout.write(report.format())
    return EXIT_OK if report.ok else EXIT_DIFFERS

