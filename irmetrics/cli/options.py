"""Command-line parsing shared by the subcommands: trec_eval's GNU getopt conventions.

trec_eval parses its options with GNU ``getopt_long``: arguments attached (``-M100``)
or separate (``-M 100``), combined flags (``-qc``), options after the file names
(argument permutation), ``--`` ending the options, and long options by any
unambiguous prefix (``--meas=map``). ``argparse`` with ``parse_intermixed_args``
gives all of that; what it does differently is fixed here: errors exit with
trec_eval's status 1 (not 2) and one line on stderr, and ``-v`` prints the version
to stderr as trec_eval does.
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..engine.pack import TIES
from ..exceptions import ParameterError, brief_repr

#: trec_eval's exit statuses (spec §1).
EXIT_OK, EXIT_USAGE, EXIT_INPUT, EXIT_COMPUTE, EXIT_NO_QUERIES = 0, 1, 2, 4, 7

#: The trec_eval release whose output ``irmetrics eval`` reproduces.
TREC_EVAL_VERSION = "10.0-rc3"


class CliError(Exception):
    """A failure reported as one line on stderr with exit status ``status``.

    ``verbatim`` messages are printed as they are (trec_eval's own wording); others
    are prefixed with the command name.
    """

    def __init__(self, message: str, status: int, *, verbatim: bool = False):
        super().__init__(message)
        self.status = status
        self.verbatim = verbatim


class CliParser(argparse.ArgumentParser):
    """argparse with trec_eval's usage status and a one-line error message."""

    def error(self, message):
        raise CliError(f"{message} (see '{self.prog} --help')", EXIT_USAGE)

    def parse(self, argv):
        """Parse with GNU permutation; ``--help``/``--version`` raise SystemExit(0)."""
        return self.parse_intermixed_args(argv)


class _VersionToStderr(argparse.Action):
    """``-v``: trec_eval prints its version on stderr and exits 0."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text(), file=sys.stderr)
        parser.exit(0)


def version_text() -> str:
    return f"irmetrics {__version__} (output of trec_eval version {TREC_EVAL_VERSION})"


def add_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-v", "-V", "--version", action=_VersionToStderr,
                        help="print the version on stderr (as trec_eval does) and exit")


def parse_int(option: str, text: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """An integer option value, strictly (trec_eval's ``atol`` would read ``abc`` as 0).

    Raises
    ------
    ParameterError
        "`-M` must be an integer >= 0; got 'abc'."
    """
    if maximum is not None:
        constraint = f"an integer between {minimum} and {maximum}"
    else:
        constraint = "an integer" if minimum is None else f"an integer >= {minimum}"
    error = ParameterError(f"`{option}` must be {constraint}; got {brief_repr(text)}.")
    digits = text.strip().lstrip("+-")
    if digits.isdigit() and len(digits.lstrip("0")) > 100:
        raise error  # far beyond any count (and beyond what int() converts quickly)
    try:
        value = int(text.strip(), 10)
    except ValueError:
        raise error from None
    if minimum is not None and value < minimum or maximum is not None and value > maximum:
        raise error
    return value


def check_measure_syntax(specs: list[str]) -> None:
    """trec_eval rejects ``-m P.`` (an empty parameter string) as an illegal measure (exit 1)."""
    for spec in specs:
        name, dot, raw = spec.partition(".")
        if not name or (dot and not raw):
            raise CliError(f"illegal measure {spec!r}: empty measure name or parameter string",
                           EXIT_USAGE)


def add_float_relevance(group) -> None:
    """``--float-relevance``: qrels labels read as real numbers (shared by eval and compare)."""
    group.add_argument("--float-relevance", action="store_true",
                       help="read qrels labels as real numbers (0.5, 2.75): the gains of ndcg,"
                            " ndcg_cut, dcg; binary measures count label >= -l; without it a"
                            " non-integer label is an error (e.g. --float-relevance)")


def add_ties(group) -> None:
    """``--ties``: how documents with equal scores are ordered (shared by eval and compare)."""
    group.add_argument("--ties", choices=TIES, default="trec_eval",
                       help="order of documents with equal scores: trec_eval (doc id"
                            " descending, default), input_order (the run file's line order)"
                            " or expected (each measure's exact expected value over random"
                            " orders of the tied documents) (e.g. --ties expected)")
