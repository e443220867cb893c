"""The file road's reading half (issue 33, the 7M-line file on 2 cores).

A plain file is mapped and cut into spans by the reading thread, each copied out once by
the thread that parses it (:func:`irmetrics.containers.trec_text.raw_chunks`); a run
chunk whose fields are all non-empty ASCII is parsed reading only the four fields the
engine keeps. Each must give exactly what the older roads give:

* the spans of a mapped file are the chunks the stream reader cuts from the same bytes
  (a gzip copy of the file is still read as a stream), for any chunk size, by query or not;
* a run chunk parsed on either road equals the full reader's rows for the same lines,
  or is refused (then the chunk's own full read, or the whole file's, decides);
* the mapped pages leave the resident set once a span is taken; without ``os.pread``
  (Windows) spans are copied from the mapping alike; a file that shrinks while read is
  left to the full reader;
* whatever the chunk size and thread count, ``irmetrics eval`` prints the same bytes.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from irmetrics.cli import main
from irmetrics.containers import trec_text
from irmetrics.containers.trec_text import NotPlain, chunk_frame, raw_chunks
from irmetrics.exceptions import DuplicateEntryError
from irmetrics.io.trec import read_run_bytes

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

#: Fields of run lines, ASCII only (so that the projected road is tried), with what
#: shifts columns when a field is empty: doubled spaces, leading spaces, short lines.
FIELDS = ["q1", "q2", "q10", "Q0", "0", "d1", "d2", "7", "1", "2.5", "-3e2", ".5", "x",
          "nan", "", "r", "run"]


@st.composite
def ascii_run_bytes(draw) -> bytes:
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        fields = [draw(st.sampled_from(["q1", "q2"])), "Q0",
                  draw(st.sampled_from(["d1", "d2", "d3", "7"])), "1",
                  draw(st.sampled_from(["1", "2.5", "-0", "3e-2"])), "r"]
        for _ in range(draw(st.integers(0, 2))):  # a field changed, dropped or added
            at = draw(st.integers(0, len(fields)))
            token = draw(st.sampled_from(FIELDS))
            change = draw(st.sampled_from(["set", "drop", "add"]))
            if change == "add" or at == len(fields):
                fields.insert(at, token)
            elif change == "drop":
                del fields[at]
            else:
                fields[at] = token
        line = fields[0] if fields else ""
        for field in fields[1:]:
            line += draw(st.sampled_from([" ", " ", " ", "  "])) + field
        lines.append(draw(st.sampled_from(["", "", " "])) + line
                     + draw(st.sampled_from(["", "", " "])))
    return ("\n".join(lines) + draw(st.sampled_from(["", "\n"]))).encode()


@settings(max_examples=300, deadline=None)
@given(data=ascii_run_bytes())
@example(data=b"q1 Q0 d1  1 2.5 r\n")  # an empty rank: every field after it shifts
@example(data=b"q1  d1 1 2.5 r\nq1 Q0 d2 1 2 r")  # an empty iteration field
def test_a_projected_run_chunk_is_what_the_full_reader_reads_or_refused(data):
    try:
        frame, lines = chunk_frame(data, "run")
    except NotPlain:
        return  # refused: the whole file's full reader explains it
    try:
        want = read_run_bytes(data).df
    except DuplicateEntryError:
        return  # the engine checks repeated documents, not the parser
    assert frame.select("query_id", "doc_id", "score").rows() == \
        want.select("query_id", "doc_id", "score").rows()
    assert lines == data.count(b"\n") + (not data.endswith(b"\n"))


def test_the_projected_road_is_taken_and_refused_where_it_must_be():
    read = []
    real = trec_text._read_typed

    def spy(data, schema, exact, sep, fields=None):
        read.append(fields)
        return real(data, schema, exact, sep, fields)

    with mock.patch.object(trec_text, "_read_typed", spy):
        chunk_frame(b"q1 Q0 d1 x 2.5 r\n", "run")  # a rank no one reads: still plain
        with pytest.raises(NotPlain):  # an empty iteration field would shift the columns
            chunk_frame(b"q1  d1 1 2.5 r\n", "run")
        chunk_frame("q1 Q0 d\u00e9 1 2.5 r\n".encode(), "run")  # not ASCII: every field
    assert read[0] == trec_text._RUN_FIELDS and read[-1] is None
    # the doubled space was read whole (every field), which shows the empty one
    assert read[1] is None


def _chunks(path, **options) -> list[bytes]:
    """The chunks of ``path`` as the parsing threads get them."""
    return [trec_text._joined(chunk) for chunk in raw_chunks(path, joined=False, **options)]


@SETTINGS
@given(data=st.lists(st.tuples(st.sampled_from(["1", "2", "10", "#c", "", " 2"]),
                               st.sampled_from(["a", "b b", "\t3", ""])), max_size=40),
       chunk=st.integers(1, 64), by_query=st.booleans(), end=st.sampled_from(["", "\n"]))
def test_mapped_spans_are_the_chunks_the_stream_reader_cuts(data, chunk, by_query, end):
    text = ("\n".join(f"{q} {rest}" for q, rest in data) + end).encode()
    if not text:
        return
    with tempfile.TemporaryDirectory() as tmp:
        plain, packed = os.path.join(tmp, "run.txt"), os.path.join(tmp, "run.txt.gz")
        with open(plain, "wb") as fh:
            fh.write(text)
        with gzip.open(packed, "wb") as fh:
            fh.write(text)
        read = []
        mapped = _chunks(plain, chunk_bytes=chunk, by_query=by_query, on_read=read.append)
        streamed = _chunks(packed, chunk_bytes=chunk, by_query=by_query)
        joined = list(raw_chunks(plain, chunk_bytes=chunk, by_query=by_query))
    assert mapped == streamed == joined
    assert b"".join(mapped) == text
    assert read == [sum(map(len, mapped[:i + 1])) for i in range(len(mapped))]


def _resident_file_kib() -> int | None:
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("RssFile:"))
    except (OSError, StopIteration):
        return None


@pytest.mark.skipif(_resident_file_kib() is None or trec_text._DONTNEED is None,
                    reason="needs /proc/self/status and madvise (Linux)")
def test_taken_spans_leave_the_resident_set(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d1 1 2.5 r\n" * (3 << 20))  # 51 MiB
    before = _resident_file_kib()
    peak = 0
    for chunk in raw_chunks(path, joined=False, chunk_bytes=4 << 20):
        data = trec_text._joined(chunk)
        peak = max(peak, _resident_file_kib() - before)
        del data
    assert peak < 24 << 10  # a few chunks' pages at most, not the file's 51 MiB


def cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["eval", *argv])
    return status, out.getvalue(), err.getvalue()


@SETTINGS
@given(n_queries=st.integers(1, 12), depth=st.integers(1, 9), data=st.data(),
       chunk_bytes=st.sampled_from([1, 23, 200, 0]))
def test_any_chunk_size_and_thread_count_print_the_same_bytes(n_queries, depth, data,
                                                              chunk_bytes):
    scores = data.draw(st.lists(st.sampled_from(["1", "2", "2.5", "0"]),
                                min_size=n_queries * depth, max_size=n_queries * depth))
    labels = data.draw(st.lists(st.sampled_from([0, 1, 2, -1]), min_size=n_queries * depth,
                                max_size=n_queries * depth))
    docs = data.draw(st.permutations(range(depth)))  # doc ids against tie order
    doubled = data.draw(st.booleans())  # the whole-field parse, tie order and all
    run = "".join(f"{q} Q0 d{docs[i]} {i}{'  ' if doubled and i == 1 else ' '}"
                  f"{scores[q * depth + i]} r\n"
                  for q in range(n_queries) for i in range(depth))
    qrels = "".join(f"{q} 0 d{i} {labels[q * depth + i]}\n"
                    for q in range(n_queries) for i in range(depth) if i % 2 == 0)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, text in (("qrels.txt", qrels), ("run.txt", run)):
            paths.append(os.path.join(tmp, name))
            with open(paths[-1], "w") as fh:
                fh.write(text)
        measures = ["-m", "map", "-m", "P.2", "-m", "ndcg_cut.3"]
        whole = cli("-q", *measures, *paths)  # one chunk
        with mock.patch.object(trec_text, "PLAIN_CHUNK_BYTES", chunk_bytes or 1 << 24), \
                mock.patch.object(trec_text, "MIN_CHUNK_BYTES", chunk_bytes or 1 << 24):
            outs = [cli("-q", "--threads", str(n), *measures, *paths) for n in (1, 4)]
    assert outs[0] == outs[1] == whole
    assert whole[0] == 0, whole[2]


def test_without_pread_spans_are_copied_from_the_mapping(tmp_path, monkeypatch):
    path = tmp_path / "run.txt"
    text = b"".join(b"q%d Q0 d%d 1 2.5 r\n" % (i // 3, i) for i in range(40))
    path.write_bytes(text)
    with_pread = _chunks(path, chunk_bytes=50, by_query=True)
    monkeypatch.delattr(os, "pread")  # Windows has none
    assert _chunks(path, chunk_bytes=50, by_query=True) == with_pread
    assert b"".join(with_pread) == text and len(with_pread) > 3


@pytest.mark.skipif(not hasattr(os, "pread"), reason="a shrinking mapped file is read by pread only")
def test_a_file_that_shrinks_while_read_is_left_to_the_full_reader(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d1 1 2.5 r\n" * 1000)
    chunks = raw_chunks(path, joined=False, chunk_bytes=4000)
    first, second = next(chunks), next(chunks)
    assert len(trec_text._joined(first)) >= 4000
    os.truncate(path, 6000)  # the second span (from about 4000 to 8000) now ends early
    with pytest.raises(NotPlain):
        trec_text._joined(second)
    chunks.close()
