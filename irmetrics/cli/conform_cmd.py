"""``irmetrics conform``: does a third-party measure implement trec_eval's semantics?"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from ..conformance import check
from ..conformance.cases import INPUTS
from ..conformance.checker import LABELS, TOLERANCE
from .options import EXIT_OK, EXIT_USAGE, CliError, CliParser, add_version, parse_tolerance

#: Exit status when the callable does not conform (as ``irmetrics validate``).
EXIT_DIFFERS = 1

DESCRIPTION = """\
Run a ranking measure of any library on irmetrics' conformance corpus (about 250 small
queries with ties, duplicates, graded, float and negative labels, unjudged documents and
empty queries), compare it with trec_eval's semantics, and print which convention it
implements for each degree of freedom, with the smallest counterexample.

  irmetrics conform [options] module:function --measure MEASURE"""

EPILOG = """\
the callable takes one query, by --input:
  arrays   fn(labels, scores): two aligned 1-D numpy arrays (scikit-learn, torchmetrics)
  ids      fn(ranking, labels): doc ids in rank order and a dict doc id -> label (RAG)
  dicts    fn(qrels, run): pytrec_eval's dicts holding the one query "1"
and returns a number, a one-element array, or {"1": value}.

examples:
  irmetrics conform mymetrics:ndcg_at_10 --measure nDCG@10 --input arrays
  irmetrics conform rag.eval:hit_rate --measure Success@5 --input ids --labels natural

exit status: 0 the callable conforms; 1 it does not, or a usage error (unknown measure,
a module or function that cannot be loaded); 2 a bad parameter."""


def build_parser() -> CliParser:
    p = CliParser(prog="irmetrics conform", description=DESCRIPTION, epilog=EPILOG,
                  formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    p.add_argument("-h", "--help", action="help", help="show this help and exit")
    add_version(p)
    p.add_argument("-m", "--measure", required=True, metavar="MEASURE",
                   help="what the callable computes, e.g. nDCG@10, AP, P@5, R@100, RR,"
                        " Rprec, bpref, Success@10, ERR@20 (trec_eval names too: ndcg_cut.10)")
    p.add_argument("--input", default="ids", choices=INPUTS, metavar="KIND",
                   help="how the callable takes a query: arrays, ids or dicts; default ids")
    p.add_argument("--labels", default="any", choices=LABELS, metavar="KIND",
                   help="labels it accepts: any (default), int (no float labels) or"
                        " natural (integers >= 0)")
    p.add_argument("--tolerance", default=repr(TOLERANCE), metavar="TOL",
                   help=f"largest absolute difference taken as equal; default {TOLERANCE:g}")
    p.add_argument("target", metavar="module:function",
                   help="the callable, importable from the current directory"
                        " (e.g. mymetrics:ndcg_at_10 or package.module:Class.method)")
    return p


def run(argv: list[str], stdout, stderr) -> int:
    args = build_parser().parse(argv)
    tolerance = parse_tolerance(args.tolerance)
    fn = load_callable(args.target)
    report = check(fn, args.measure, input=args.input, labels=args.labels,
                   tolerance=tolerance)
    stdout.write(str(report))
    return EXIT_OK if report.conforms else EXIT_DIFFERS


def load_callable(target: str):
    """``module:attribute.path`` -> the object, the current directory importable first.

    Raises
    ------
    CliError
        Not ``module:name``, the module cannot be imported, or it has no such name.
    """
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise CliError(f"the callable must be given as module:function; got {target!r}",
                       EXIT_USAGE)
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any failure while importing the user's module
        raise CliError(f"cannot import {module_name!r}: {type(exc).__name__}: {exc}",
                       EXIT_USAGE) from None
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise CliError(f"{module_name!r} has no attribute {attribute!r}",
                           EXIT_USAGE) from None
    if not callable(obj):
        raise CliError(f"{target!r} is not callable", EXIT_USAGE)
    return obj
