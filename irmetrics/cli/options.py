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
import math
import re
import sys

from ..checks import parameter_error
from ..engine.ordering import SEMANTICS, TIES
from ..exceptions import ParameterError, brief_repr
from ..parallel import MAX_THREADS

#: trec_eval's exit statuses (docs/reference/trec_eval.md §1).
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


#: trec_eval 10's own long options (its ``getopt_long`` table). A prefix unique among
#: them means that option, as in trec_eval, even where an irmetrics option shares it
#: (``--meas`` is ``--measure``, not ``--measures-from``; ``--q`` is
#: ``--query_eval_wanted``, not ``--quiet``).
TREC_EVAL_LONG_OPTIONS = (
    "--help", "--version", "--query_eval_wanted", "--measure", "--complete_rel_info_wanted",
    "--level_for_rel", "--nosummary", "--Debug_level", "--Judged_docs_only",
    "--Number_docs_in_coll", "--Max_retrieved_per_topic", "--Rel_info_format",
    "--Results_format", "--Zscore", "--Output_old_results_format",
)


class CliParser(argparse.ArgumentParser):
    """argparse with trec_eval's usage status and a one-line error message."""

    def error(self, message):
        # argparse takes a value that starts with '-' (``-w -1,1``) for an option and says
        # only "expected one argument": name the spelling that works.
        found = re.match(r"argument (?:\S+/)?(--?[\w-]+): expected one argument$", message)
        if found and any(re.match(r"-\.?\d", token) for token in getattr(self, "_argv", ())):
            message += f"; a value that starts with '-' is written {found.group(1)}=VALUE"
        raise CliError(f"{message} (see '{self.prog} --help')", EXIT_USAGE)

    def parse(self, argv):
        """Parse with GNU permutation; ``--help``/``--version`` raise SystemExit(0)."""
        self._argv = list(argv)
        return self.parse_intermixed_args(self._trec_eval_prefixes(argv))

    def _trec_eval_prefixes(self, argv):
        """``argv`` with each long-option prefix that only trec_eval's table resolves
        (:data:`TREC_EVAL_LONG_OPTIONS`) spelled out; ``--`` ends the options."""
        known = set(self._option_string_actions)
        own = [o for o in TREC_EVAL_LONG_OPTIONS if o in known]
        out = []
        for i, token in enumerate(argv):
            if token == "--":
                return out + list(argv[i:])
            option, equals, value = token.partition("=")
            if option.startswith("--") and len(option) > 2 and option not in known:
                matches = [o for o in known if o.startswith(option)]
                trec_eval = [o for o in own if o.startswith(option)]
                if len(matches) > 1 and len(trec_eval) == 1:
                    token = trec_eval[0] + equals + value
            out.append(token)
        return out


class _VersionToStderr(argparse.Action):
    """``-v``: trec_eval prints its version on stderr and exits 0."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text(), file=sys.stderr)
        parser.exit(0)


def version_text() -> str:
    from .. import __version__  # read from the distribution's metadata: only when asked

    return f"irmetrics {__version__} (output of trec_eval version {TREC_EVAL_VERSION})"


def add_version(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument("-v", "-V", "--version", action=_VersionToStderr,
                        help="print the version on stderr (as trec_eval does) and exit")


#: ``--label-samples``' default (eval, compare and agree), as argparse hands it over.
LABEL_SAMPLES_DEFAULT = "1000"


def label_samples(args: argparse.Namespace, distributions: bool) -> int | None:
    """``--label-samples`` as an int when label distributions are given; without them None,
    and a ``--label-samples`` set on its own is refused (it would change nothing)."""
    if not distributions:
        if args.label_samples != LABEL_SAMPLES_DEFAULT:
            raise CliError("--label-samples goes with --label-distributions", EXIT_USAGE)
        return None
    return parse_int("--label-samples", args.label_samples, minimum=2)


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


def add_threads(group) -> None:
    """``--threads N``: how many threads the heavy work runs on (one rule for every
    command: :func:`irmetrics.parallel.resolve_threads`)."""
    group.add_argument("--threads", metavar="N",
                       help="threads for the heavy work (reading, packing and evaluating"
                            " chunks of the files); default every core this process may use"
                            " (IRMETRICS_THREADS overrides), 1 runs it all in one thread;"
                            " the output is the same bytes for any N (e.g. --threads 4)")


def parse_threads(text: str | None) -> int | None:
    """The ``--threads`` value (None when not given: the default of
    :func:`irmetrics.parallel.resolve_threads`).

    >>> parse_threads("4"), parse_threads(None)
    (4, None)
    """
    return None if text is None else parse_int("--threads", text, minimum=1,
                                               maximum=MAX_THREADS)


def add_measures_from(group) -> None:
    """``--measures-from FILE``: Python files that define measures (eval and compare)."""
    group.add_argument("--measures-from", action="append", default=[], metavar="FILE",
                       help="run a Python file that defines measures with"
                            " irmetrics.define_measure, then name them with -m; repeatable"
                            " (e.g. --measures-from mymeasures.py -m GradedP@10)")


def load_measure_files(paths, stderr, prog: str) -> None:
    """Run the ``--measures-from`` files, in order (see docs/custom_measures.md); warn
    about a file that defines no measure (its -m names would be "unknown")."""
    from ..measures.custom import load_measures

    for path in paths:
        if not load_measures(path):
            stderr.write(f"{prog}: warning: the measures file {path!r} defines no measure"
                         " (it should call irmetrics.define_measure)\n")


#: Outputs of the commands that write tables (``compare``, ``agree``).
OUTPUT_FORMATS = ("table", "markdown", "latex", "json", "csv", "html")


def add_output(group, *, html: str) -> None:
    """``--format`` (:data:`OUTPUT_FORMATS`; ``html`` described by ``html``) and ``-o``."""
    group.add_argument("--format", choices=OUTPUT_FORMATS, default="table",
                       help="output: table (terminal, default), markdown, latex, json, csv, or"
                            f" html ({html}; needs irmetrics-exact[plot])")
    group.add_argument("-o", "--output", metavar="FILE",
                       help="write the output to FILE instead of standard output (never one of"
                            " the inputs; written whole or not at all)")


#: Outputs of the commands that print a bootstrap summary (``leaderboard``, ``similarity``).
SUMMARY_FORMATS = ("table", "markdown", "json", "csv")


def add_bootstrap(group, *, resamples: int) -> None:
    """``--format`` (:data:`SUMMARY_FORMATS`), ``-o``, and the bootstrap's ``--level``,
    ``--resamples`` (default ``resamples``), ``--seed`` and ``--threads`` (``leaderboard``
    and ``similarity``; :func:`bootstrap_options` reads them)."""
    group.add_argument("--format", default="table", choices=SUMMARY_FORMATS, help="output format")
    group.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    group.add_argument("--level", default="0.95", help="interval level (default 0.95)")
    group.add_argument("--resamples", default=str(resamples),
                       help=f"bootstrap resamples (default {resamples})")
    group.add_argument("--seed", default="0", help="random seed (default 0)")
    group.add_argument("--threads", metavar="N", help="threads (default: every core)")


def bootstrap_options(args) -> dict:
    """``level``, ``n_resamples``, ``seed`` and ``threads`` from :func:`add_bootstrap`'s
    options, checked (a level strictly between 0 and 1, at most 1,000,000 resamples)."""
    try:
        level: float | str = float(args.level)
    except ValueError:
        level = args.level
    if isinstance(level, str) or not 0.0 < level < 1.0:
        raise parameter_error("--level", "a number strictly between 0 and 1", args.level)
    return dict(level=level,
                n_resamples=parse_int("--resamples", args.resamples, minimum=1,
                                      maximum=1_000_000),
                seed=parse_int("--seed", args.seed, minimum=0),
                threads=parse_threads(args.threads))


def add_evaluation(parser, *, complete: str, level: str) -> None:
    """The evaluation options of ``eval`` that ``compare`` and ``agree`` take: -c -J -M -l
    --semantics --ties --float-relevance (``complete`` and ``level`` end the help of -c
    and -l)."""
    e = parser.add_argument_group("evaluation (as in irmetrics eval / trec_eval)")
    e.add_argument("-c", "--complete_rel_info_wanted", action="store_true",
                   help="score qrels queries a run did not answer as trec_eval -c does"
                        + complete)
    e.add_argument("-J", "--Judged_docs_only", action="store_true",
                   help="drop unjudged documents from every ranking")
    e.add_argument("-M", "--Max_retrieved_per_topic", metavar="N",
                   help="keep only the top N documents of each ranking")
    e.add_argument("-l", "--level_for_rel", metavar="L", default="1",
                   help="lowest label counted as relevant (default 1)" + level)
    e.add_argument("--semantics", choices=SEMANTICS, default="trec_eval",
                   help="trec_eval (default) or pytrec_eval")
    add_ties(e)
    add_float_relevance(e)
    add_measures_from(e)


def evaluation_options(args) -> dict:
    """The keyword options of :func:`irmetrics.evaluate` that :func:`add_evaluation`'s
    options give."""
    max_docs = (None if args.Max_retrieved_per_topic is None
                else parse_int("-M", args.Max_retrieved_per_topic, minimum=0))
    return dict(relevance_level=parse_int("-l", args.level_for_rel),
                judged_only=args.Judged_docs_only, max_docs=max_docs,
                complete=args.complete_rel_info_wanted, semantics=args.semantics,
                ties=args.ties, relevance="float" if args.float_relevance else "int")


def parse_tolerance(text: str) -> float:
    """``--tolerance``: a finite number >= 0 (NaN or inf would accept any difference)."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value < 0:
        raise parameter_error("--tolerance", "a finite number >= 0", text)
    return value
