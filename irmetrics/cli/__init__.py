"""The ``irmetrics`` command: ``eval`` (trec_eval 10, byte for byte), ``validate``,
``compare``, ``agree`` and ``fuse``.

``main(argv)`` returns the exit status instead of exiting, so it can be called from
Python and tests. Every failure becomes one line on stderr and trec_eval's status
(1 usage or unknown measure, 2 unreadable/malformed input or bad parameter, 4 a
measure could not be computed); a traceback is shown only with ``IRMETRICS_DEBUG=1``.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

from ..exceptions import (DuplicateEntryError, InputFormatError, IrMetricsError,
                          ParameterError, UnknownMeasureError)
from .options import EXIT_COMPUTE, EXIT_INPUT, EXIT_OK, EXIT_USAGE, CliError, version_text

__all__ = ["main"]

#: Each command and the module whose ``run(argv, stdout, stderr)`` it is: imported when
#: that command runs, so that ``irmetrics eval`` does not load what compare, agree or fuse
#: need (statistics, reports, fusion).
COMMANDS = {"eval": "eval_cmd", "validate": "validate_cmd", "compare": "compare_cmd",
            "agree": "agree_cmd", "similarity": "similarity_cmd",
            "leaderboard": "leaderboard_cmd", "fuse": "fuse_cmd", "conform": "conform_cmd"}

#: Exit status of a process killed by SIGPIPE in a shell (128 + 13).
EXIT_SIGPIPE = 141
#: What every install hint of an optional dependency says (``irmetrics-exact[extra]``).
OPTIONAL_HINT = 'pip install "irmetrics-exact['


HELP = """\
usage: irmetrics <command> [options] ...

commands:
  eval       evaluate runs against qrels; output identical to trec_eval 10
             e.g.  irmetrics eval -q -m map -m P.10 qrels.txt run.txt
  validate   compare irmetrics with pytrec_eval on the same files
             e.g.  irmetrics validate qrels.txt run.txt
  compare    is the difference between runs real? paired tests, intervals, effect
             sizes, corrections, and a CI gate (--fail-if-worse)
             e.g.  irmetrics compare --baseline bm25.run qrels.txt bm25.run dense.run
  agree      do judgment sets (human, LLM) agree? leaderboard correlations with
             intervals, judge agreement, discriminative power, and a gate (--fail-if)
             e.g.  irmetrics agree --qrels human=h.txt --qrels llm=l.txt a.run b.run c.run
  similarity how alike are two runs? rank-biased overlap with ties, tau, Jaccard,
             overlap and recall at k, per query and with intervals over queries
             e.g.  irmetrics similarity bm25.run bm25-rerun.run
  leaderboard which ranks could each system hold? simultaneous rank intervals of a
             benchmark (long table, or MTEB result files), systems tied with the best
             e.g.  irmetrics leaderboard benchmark.csv
  fuse       fuse runs into one TREC run (rrf, CombSUM, ... ranx's 25 methods)
             e.g.  irmetrics fuse -m rrf -o fused.run a.run b.run c.run
  conform    does another library's measure implement trec_eval's semantics? the
             convention it follows per degree of freedom, the smallest counterexample
             e.g.  irmetrics conform mymetrics:ndcg --measure nDCG@10 --input arrays

options:
  -h, --help           show this help; 'irmetrics <command> --help' explains each option
  -v, -V, --version    show the version (after a command, e.g. 'irmetrics eval -v', it
                       goes to stderr, as trec_eval prints it)

See docs/cli.md for how 'irmetrics eval' relates to trec_eval.
"""


def main(argv=None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); return the exit status.

    Examples
    --------
    >>> main(["--version"])  # doctest: +ELLIPSIS
    irmetrics ...
    0
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    stdout, stderr = sys.stdout, sys.stderr
    if not argv:
        stderr.write(HELP)
        return EXIT_USAGE
    command = argv[0]
    if command in ("-h", "--help"):
        stdout.write(HELP)
        return EXIT_OK
    if command in ("-v", "-V", "--version"):
        stdout.write(version_text() + "\n")
        return EXIT_OK
    if command not in COMMANDS:
        stderr.write(f"irmetrics: unknown command {command!r}; expected one of"
                     f" {', '.join(COMMANDS)} (see 'irmetrics --help')\n")
        return EXIT_USAGE
    prog = f"irmetrics {command}"
    try:
        run = importlib.import_module(f"{__name__}.{COMMANDS[command]}").run
        return run(argv[1:], stdout, stderr)
    except SystemExit as exc:  # --help / --version inside argparse
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except CliError as exc:
        return _fail(stderr, exc if exc.verbatim else f"{prog}: {exc}", exc.status)
    except UnknownMeasureError as exc:
        hint = (f": {exc.note}" if exc.note else
                f"; closest names: {', '.join(exc.suggestions)}" if exc.suggestions else "")
        return _fail(stderr, f"{prog}: unknown measure {exc.name!r}{hint}", EXIT_USAGE)
    except DuplicateEntryError as exc:
        return _fail(stderr, f"{prog}: {exc}", EXIT_COMPUTE)
    except (InputFormatError, ParameterError) as exc:
        return _fail(stderr, f"{prog}: {exc}", EXIT_INPUT)
    except BrokenPipeError:
        # stdout closed early (``| head``): stop quietly, as a SIGPIPE would.
        _silence_stdout()
        return EXIT_SIGPIPE
    except OSError as exc:
        if exc.filename is None:
            return _fail(stderr, f"{prog}: I/O error: {exc}", EXIT_INPUT)
        return _fail(stderr, f"{prog}: cannot read {exc.filename!r}: {exc.strerror or exc}",
                     EXIT_INPUT)
    except IrMetricsError as exc:
        return _fail(stderr, f"{prog}: {exc}", EXIT_COMPUTE)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the CLI promises no traceback
        if isinstance(exc, ImportError) and OPTIONAL_HINT in str(exc):
            # an optional dependency the input needs (irds: qrels, plots): the user's
            # setup, said with its install hint, not an internal error
            return _fail(stderr, f"{prog}: {exc}", EXIT_USAGE)
        if os.environ.get("IRMETRICS_DEBUG"):
            traceback.print_exc()
        return _fail(stderr, f"{prog}: internal error ({type(exc).__name__}: {exc}); please"
                             " report it (IRMETRICS_DEBUG=1 shows the traceback)", EXIT_COMPUTE)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (captured in tests)
        pass


def _fail(stderr, message, status: int) -> int:
    stderr.write(f"{message}\n")
    return status
