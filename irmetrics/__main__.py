"""``python -m irmetrics`` and the ``irmetrics`` console script: the command line."""

import os
import sys
from collections.abc import Mapping, MutableMapping, Sequence

#: The variables by which a user says how many threads OpenBLAS (the BLAS of numpy's
#: wheels) starts, in the order it reads them.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")

#: The variable polars reads, once, when it is imported, to size its thread pool.
POLARS_THREAD_VARIABLE = "POLARS_MAX_THREADS"


def threads_asked(argv: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """The thread count a command line asks for: ``--threads N`` (or ``--threads=N``,
    or a prefix argparse takes for it, ``--thr N``), else the environment's
    ``IRMETRICS_THREADS``; None when neither is an integer from 1 to 1024 (the command
    itself reports a bad value). Nothing after ``--`` is an option: a file may be named
    ``--threads=3``.

    The value is read as the command reads it (``int(text.strip(), 10)``: ``+2``, ``02``
    and ``1_0`` are numbers; ``\u00b2``, a digit to ``str.isdigit``, is not), so that the
    pool is sized to the count the command runs with, or left alone.

    >>> threads_asked(["eval", "--threads", "1", "q", "r"], {}), threads_asked(["eval"], {})
    (1, None)
    >>> threads_asked(["eval", "--thr=+2"], {}), threads_asked(["eval", "--threads", "\u00b2"], {})
    (2, None)
    >>> threads_asked(["eval", "--threads=x"], {"IRMETRICS_THREADS": "3"})
    """
    text = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        option, equals, value = arg.partition("=")
        # argparse takes any prefix that names one option: no other starts with --th
        if len(option) >= 4 and "--threads".startswith(option):
            if equals:
                text = value
            elif i + 1 < len(argv):
                text = argv[i + 1]
    if text is None:
        text = environ.get("IRMETRICS_THREADS")
    try:
        n = int(text.strip(), 10)  # type: ignore[union-attr]
    except (AttributeError, ValueError):  # None, not a number, or over int's 4300 digits
        return None
    return n if 1 <= n <= 1024 else None


def prepare_environment(argv: Sequence[str], environ: MutableMapping[str, str],
                        loaded: Mapping[str, object]) -> None:
    """Thread settings of the command's own process, set before numpy and polars load
    (``loaded``: the modules already imported), never against a user's setting.

    The command line never wants BLAS's own threads: irmetrics runs its work on its own
    threads (:mod:`irmetrics.parallel`), and the statistics hold BLAS to one thread
    anyway. Left to its default, OpenBLAS starts one thread per core when numpy is
    imported: measured on a 2-core machine, 0.05 s more wall to import numpy and 0.06-0.3
    s more CPU in ``irmetrics eval``, the same bytes. polars' pool runs the parsing and
    joins of every irmetrics thread and is sized once, at import: ``--threads N`` (or
    ``IRMETRICS_THREADS``) sizes it to N, so that ``--threads 1`` runs on one core as
    it says.

    >>> env = {}
    >>> prepare_environment(["eval", "--threads", "1"], env, {})
    >>> env == {"OPENBLAS_NUM_THREADS": "1", "POLARS_MAX_THREADS": "1"}
    True
    >>> env = {"POLARS_MAX_THREADS": "8"}
    >>> prepare_environment(["eval", "--threads", "1"], env, {"numpy": None})
    >>> env
    {'POLARS_MAX_THREADS': '8'}
    """
    if "numpy" not in loaded and not any(v in environ for v in BLAS_THREAD_VARIABLES):
        environ["OPENBLAS_NUM_THREADS"] = "1"
    threads = threads_asked(argv, environ)
    if threads is not None and "polars" not in loaded and POLARS_THREAD_VARIABLE not in environ:
        environ[POLARS_THREAD_VARIABLE] = str(threads)


def main() -> int:
    """Run the command line (:func:`irmetrics.cli.main`) in a process of its own."""
    prepare_environment(sys.argv[1:], os.environ, sys.modules)
    from .cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
