"""Reading the CLI's input files: the ``-R`` format switch and the run.

The readers reject malformed lines and duplicate (query, document) pairs with the file
and line in the message (:mod:`irmetrics.io`). trec_eval only refuses a duplicate run
document inside the top ``-M``; irmetrics refuses it anywhere (docs/semantics.md).
"""

from __future__ import annotations

import gzip
import importlib
import os

from ..containers import Run
from ..exceptions import brief_repr
from .options import EXIT_INPUT, EXIT_USAGE, CliError

#: ``-R`` values trec_eval accepts (docs/reference/trec_eval.md §2.5), and their readers
#: (module, function), imported when that format is read; ``diversity`` (ndeval's
#: intent-aware qrels) is irmetrics' own.
REL_INFO_READERS: dict[str, tuple[str, str]] = {
    "qrels": ("irmetrics.io.trec", "read_qrels"),  # a file, irds:<dataset id>, ranx's JSON
    "qrels_jg": ("irmetrics.io.prefs", "read_qrels_jg"),
    "prefs": ("irmetrics.io.prefs", "read_prefs"),
    "qrels_prefs": ("irmetrics.io.prefs", "read_qrels_prefs"),
    "diversity": ("irmetrics.io.diversity", "read_diversity_qrels"),
    # read by irmetrics.rag.NuggetEvaluator (eval_cmd)
    "nuggets": ("irmetrics.rag.formats", "read_nuggets"),
}
REL_INFO_FORMATS = tuple(REL_INFO_READERS)

#: ``-T`` values trec_eval accepts.
RESULTS_FORMATS = ("trec_results",)


def read_judgments(path: str, rel_format: str):
    """The rel_info file in format ``rel_format`` (trec_eval ``-R``)."""
    if rel_format not in REL_INFO_READERS:
        raise CliError(f"illegal rel_info format {rel_format!r} for -R; expected one of "
                       f"{', '.join(REL_INFO_FORMATS)}", EXIT_INPUT)
    module, reader = REL_INFO_READERS[rel_format]
    return getattr(importlib.import_module(module), reader)(path)


def read_run(path: str) -> Run:
    return Run.read(path)


def open_lines(path: str):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as fh:
        yield from fh


def split_name(text: str, option: str = "") -> tuple[str | None, str]:
    """``NAME=PATH`` as ``(NAME, PATH)``; ``(None, text)`` for a plain path: one without
    ``=``, ``-``, an existing file, or one whose ``=`` follows a folder separator
    (``runs/a=b.run``). ``compare``'s runs and ``agree``'s ``--qrels`` and runs read
    their arguments with it; ``option`` (``"--qrels "``) starts the error message.

    Raises
    ------
    CliError
        ``=PATH`` or ``NAME=``: "NAME=PATH needs a name and a path" (exit 1).
    """
    name, equals, path = text.partition("=")
    if not equals or text == "-" or os.path.exists(text) or "/" in name or os.sep in name:
        return None, text
    if not name or not path:
        example = "--qrels human=qrels.txt" if option else "BM25=bm25.run"
        raise CliError(f"{option}{brief_repr(text)}: NAME=PATH needs a name and a path (e.g."
                       f" {example})", EXIT_USAGE)
    return name, path


def split_names(texts: list[str], option: str = "") -> tuple[list, list[str]]:
    """:func:`split_name` of every argument: ``(names, paths)``, None where no name is
    given."""
    pairs = [split_name(text, option) for text in texts]
    return [name for name, _ in pairs], [path for _, path in pairs]


def read_files(paths: list[str], measures_from: list[str]) -> dict:
    """``{description: path}`` of every file a command reads, the ``--measures-from``
    files included: what its ``-o`` must never overwrite."""
    return {**{f"input {p!r}": p for p in paths},
            **{f"measures file {p!r}": p for p in measures_from}}
