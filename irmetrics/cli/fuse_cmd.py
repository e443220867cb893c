"""``irmetrics fuse``: many runs into one TREC run (:func:`irmetrics.fusion.fuse`)."""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import tempfile

from ..checks import check_choice, parameter_error
from ..containers.trec_text import LATIN1
from ..fusion import METHODS, NORMS, fuse
from ..fusion.fuse import prepare_runs
from ..io.output import check_not_input
from .options import EXIT_INPUT, EXIT_OK, EXIT_USAGE, CliError, CliParser, add_version

DESCRIPTION = """\
Fuse two or more runs into one run, written in TREC format (query_id Q0 doc_id rank
score run_id) in trec_eval's order: fused score descending, then doc id descending.

  irmetrics fuse [options] run run [run ...]"""

EPILOG = f"""\
methods (ranx's names): {', '.join(METHODS)}
normalisations: {', '.join(NORMS)}, none

examples:
  irmetrics fuse -m rrf -o fused.run a.run b.run c.run
  irmetrics fuse -m rrf -p k=10 a.run b.run > fused.run
  irmetrics fuse -m wsum --norm zmuv -w 0.6,0.4 -o fused.run bm25.run dense.run
  irmetrics fuse -m posfuse --qrels train.qrels -o fused.run a.run b.run
  irmetrics fuse -m probfuse -p n_segments=10 --qrels irds:msmarco-passage/dev a.run b.run

Runs are TREC files, Parquet / Arrow IPC tables or ranx JSON (.json). See docs/fusion.md.

exit status: 0 fused; 1 usage error; 2 unreadable or malformed input, bad parameter (a
normalisation dividing by zero names the run and the query)."""


def build_parser() -> CliParser:
    p = CliParser(prog="irmetrics fuse", description=DESCRIPTION, epilog=EPILOG,
                  formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    p.add_argument("-h", "--help", action="help", help="show this help and exit")
    add_version(p)
    p.add_argument("-m", "--method", default="rrf", metavar="METHOD",
                   help="fusion method; default rrf (e.g. -m wsum)")
    p.add_argument("--norm", default="min-max", metavar="NORM",
                   help="score normalisation per run and query, for the methods that read"
                        " scores; 'none' for raw scores; default min-max (e.g. --norm zmuv)")
    p.add_argument("-w", "--weights", metavar="W,W,...",
                   help="one weight per run, in order, for the weighted methods"
                        " (e.g. -w 0.7,0.3)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a method parameter, repeatable (e.g. -p k=60, -p phi=0.8)")
    p.add_argument("--qrels", metavar="FILE",
                   help="training judgments of the trained methods (a file, or"
                        " irds:<dataset id>)")
    p.add_argument("--name", metavar="NAME",
                   help="run_id of the fused run; default the method's name")
    p.add_argument("-o", "--output", metavar="FILE", default="-",
                   help="where to write the fused run; default standard output")
    p.add_argument("runs", nargs="+", help="two or more runs (e.g. a.run b.run)")
    return p


def run(argv: list[str], stdout, stderr) -> int:
    args = build_parser().parse(argv)
    if len(args.runs) < 2:
        raise CliError("give two or more runs to fuse (irmetrics fuse run run ...)", EXIT_USAGE)
    if args.output != "-":
        check_not_input("-o", args.output, {f"run {p!r}": p for p in args.runs}
                        | ({"--qrels": args.qrels} if args.qrels else {}))
    # Read here, as eval reads: a file that is not UTF-8 is read as Latin-1, and the
    # fused run is then written in Latin-1, giving the files' bytes back.
    method = METHODS[check_choice("-m", args.method, tuple(METHODS))]
    runs, qrels, encoding = prepare_runs(list(args.runs), args.qrels if method.trained else None)
    fused = fuse(dict(zip(args.runs, runs)), args.method,
                 norm=None if args.norm == "none" else args.norm,
                 weights=_weights(args.weights), qrels=qrels if qrels is not None else args.qrels,
                 name=args.name, **dict(_param(text) for text in args.param))
    latin1 = encoding == LATIN1
    if args.output != "-" and not latin1:
        _write(fused, args.output)
        return EXIT_OK
    # The writer takes paths and writes UTF-8; standard output here is whatever stream
    # main() was given.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fused.run")
        fused.write(path)
        with open(path, encoding="utf-8") as f:
            text = f.read() if latin1 else None
            if text is None:
                shutil.copyfileobj(f, stdout)
                return EXIT_OK
    data = text.encode("latin-1")
    if args.output != "-":
        _write(data, args.output)
    elif hasattr(stdout, "buffer"):
        stdout.flush()
        stdout.buffer.write(data)
    else:
        stdout.write(text)
    return EXIT_OK


def _write(fused, output: str) -> None:
    """The fused run (or its bytes) to ``output`` (``.gz`` compresses)."""
    try:
        if isinstance(fused, bytes):
            opener = gzip.open if output.endswith(".gz") else open
            with opener(output, "wb") as f:
                f.write(fused)
        else:
            fused.write(output)
    except OSError as exc:  # main() would say "cannot read" of the output
        raise CliError(f"cannot write {output!r}: {exc.strerror or exc}", EXIT_INPUT) from None


def _weights(text: str | None):
    if text is None:
        return None
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise parameter_error("-w", "numbers separated by commas", text) from None


def _param(text: str) -> tuple[str, float | int]:
    name, eq, value = text.partition("=")
    if not eq or not name:
        raise parameter_error("-p", "NAME=VALUE (e.g. k=60)", text)
    try:
        return name, int(value)
    except ValueError:
        pass
    try:
        return name, float(value)
    except ValueError:
        raise parameter_error(f"-p {name}", "a number", value) from None
