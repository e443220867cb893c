"""Reading the CLI's input files: the ``-R`` format switch and the run.

The readers reject malformed lines and duplicate (query, document) pairs with the file
and line in the message (:mod:`irmetrics.io`). trec_eval only refuses a duplicate run
document inside the top ``-M``; irmetrics refuses it anywhere (docs/semantics.md).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable

from ..containers import Run
from ..io.diversity import read_diversity_qrels
from ..io.trec import read_qrels
from ..io.prefs import read_prefs, read_qrels_jg, read_qrels_prefs
from .options import EXIT_INPUT, CliError

#: ``-R`` values trec_eval accepts (spec §2.5), and their readers; ``diversity`` (ndeval's
#: intent-aware qrels) is irmetrics' own.
REL_INFO_READERS: dict[str, Callable] = {
    "qrels": read_qrels,  # a file, or irds:<dataset id>, or ranx's JSON
    "qrels_jg": read_qrels_jg,
    "prefs": read_prefs,
    "qrels_prefs": read_qrels_prefs,
    "diversity": read_diversity_qrels,
}
REL_INFO_FORMATS = tuple(REL_INFO_READERS)

#: ``-T`` values trec_eval accepts.
RESULTS_FORMATS = ("trec_results",)


def read_judgments(path: str, rel_format: str):
    """The rel_info file in format ``rel_format`` (trec_eval ``-R``)."""
    if rel_format not in REL_INFO_READERS:
        raise CliError(f"illegal rel_info format {rel_format!r} for -R; expected one of "
                       f"{', '.join(REL_INFO_FORMATS)}", EXIT_INPUT)
    return REL_INFO_READERS[rel_format](path)


def read_run(path: str) -> Run:
    return Run.read(path)


def open_lines(path: str):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as fh:
        yield from fh
