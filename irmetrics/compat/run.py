"""``python -m irmetrics.compat.run [--only NAMES] MODULE|SCRIPT [ARGS ...]``: run a
program with irmetrics' drop-ins under the names of the libraries they replace.

Installs the drop-ins (:func:`irmetrics.compat.install`; ``--only pytrec_eval`` or
``--only pytrec_eval,ir_measures``, default both), then runs ``MODULE`` as
``python -m MODULE ARGS`` would, or ``SCRIPT`` (a path ending in ``.py``, or an existing
file) as ``python SCRIPT ARGS`` would: ``python -m irmetrics.compat.run pytest tests/``
runs a project's tests with the drop-ins underneath.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys

from ..checks import parameter_error
from ..exceptions import IrMetricsError
from .switch import install

__all__ = ["main"]

PROG = "python -m irmetrics.compat.run"
USAGE = "usage: python -m irmetrics.compat.run [--only NAMES] MODULE|SCRIPT [ARGS ...]"


def main(argv: list[str] | None = None) -> None:
    """Install the drop-ins and run the module or script named first in ``argv``
    (default ``sys.argv[1:]``) with the rest as its arguments.

    Examples
    --------
    >>> from irmetrics.compat.run import main
    >>> main(["--only"])
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `--only` must be names separated by commas, then a module or script; got [].
    """
    args = list(sys.argv[1:] if argv is None else argv)
    names: list[str] = []
    if args and (args[0] == "--only" or args[0].startswith("--only=")):
        value = args.pop(0).partition("=")[2] or (args.pop(0) if len(args) > 1 else None)
        if value is None:
            raise parameter_error("--only", "names separated by commas, then a module or"
                                  " script", args)
        names = [n.strip() for n in value.split(",") if n.strip()]
        if not names:  # install() with no names installs both: not what --only asked
            raise parameter_error("--only", "names separated by commas, then a module or"
                                  " script", value)
    if not args or args[0].startswith("-"):
        raise SystemExit(USAGE)
    install(*names)
    target = args[0]
    if target.endswith(".py") or os.path.isfile(target):
        if not os.path.isfile(target):  # as python says it, not a runpy traceback
            raise SystemExit(f"{PROG}: can't open file {target!r}: no such file")
        sys.argv = args
        runpy.run_path(target, run_name="__main__")
    else:
        try:
            found = importlib.util.find_spec(target)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise SystemExit(f"{PROG}: no module named {target!r} (nor a file of that name)")
        sys.argv = args  # runpy puts the module's file first
        runpy.run_module(target, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    try:
        main()
    except IrMetricsError as error:  # the runner's own arguments; the program's errors pass
        raise SystemExit(f"{PROG}: {error}") from None
