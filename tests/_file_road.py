"""Helpers shared by the tests of the file road: text written to files, and the size of
its plain chunks made small so that short files are read in many chunks."""

from __future__ import annotations

import contextlib
import os
from unittest import mock

from irmetrics.containers import trec_text


def write_texts(directory, **texts: str) -> list[str]:
    """Each text written as it is (UTF-8, line ends untouched) to a file named by its
    keyword in ``directory``; the paths, in the keywords' order."""
    paths = []
    for name, text in texts.items():
        paths.append(os.path.join(directory, name))
        with open(paths[-1], "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    return paths


def plain_chunk_bytes(chunk_bytes: int):
    """A context in which the file road cuts plain text into chunks of ``chunk_bytes``
    (0: its own size, nothing patched)."""
    if not chunk_bytes:
        return contextlib.nullcontext()
    return mock.patch.object(trec_text, "PLAIN_CHUNK_BYTES", chunk_bytes)
