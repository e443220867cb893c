"""Adversarial review of the chunked road (engine/stream.py, io/trec.plain_chunks).

The claim under test: for any run/qrels FILE, the chunked road either declines (the caller
then reads the file whole with read_run/read_qrels) or gives exactly what the full readers
+ pack give; ``irmetrics.evaluate(qrels_path, run_path, ...)`` equals
``irmetrics.evaluate(read_qrels(...), read_run(...), ...)``, errors included.

Two discrepancies found on the reviewed code (stream-review @ 802910b) and fixed since;
their tests stay as regression tests:

* a path that can only be read once (a pipe: ``/dev/fd/N``, bash process substitution
  ``<(zcat run.gz)``, ``/dev/stdin`` fed by a pipe, a named FIFO): the chunked road read
  (part of) it, declined, and the fallback re-opened a drained pipe ("no data lines" for
  a valid file, or a hang for a FIFO). Only regular files take the chunked road now;
* a UTF-8 byte order mark at the start of a line that begins a chunk: polars dropped it,
  so ``"\\ufeff2"`` became query ``"2"``; the full readers keep it (they drop a BOM only
  at the very start of the file). A chunk starting with a BOM now declines.
"""

from __future__ import annotations

import gzip
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import irmetrics
from irmetrics import Evaluator
from irmetrics.containers import Run
from irmetrics.engine.pack import BOGUS_DOC_ID, encode_qrels, pack
from irmetrics.engine.stream import encode_qrels_file, pack_run_file
from irmetrics.containers import trec_text as trec
from irmetrics.io.trec import NotPlain, plain_chunks, read_qrels, read_run

BOM = b"\xef\xbb\xbf"
MEASURES = ["map", "P.1,2,5", "recall.5", "recip_rank", "ndcg", "ndcg_cut.3", "bpref",
            "num_ret", "num_rel", "num_rel_ret", "num_q", "runid", "success.1", "Rprec",
            "infAP", "relstring.10", "iprec_at_recall", "set_F", "unj"]
OPTIONS = [dict(), dict(complete=True), dict(max_docs=0, complete=True), dict(max_docs=2),
           dict(semantics="pytrec_eval"), dict(semantics="pytrec_eval", complete=True,
                                               max_docs=3)]
PACK_KEYS = ("max_docs", "complete", "semantics")
REPO = Path(__file__).resolve().parents[2]


# helpers --------------------------------------------------------------------------------

def _canon(x):
    if isinstance(x, dict):
        return {k: _canon(v) for k, v in x.items()}
    if isinstance(x, float):
        return "nan" if math.isnan(x) else repr(x)
    return x


def _outcome(fn):
    try:
        return ("ok", _canon(fn()))
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return ("error", type(e).__name__, str(e))


def full_road(qrels, run, measures=MEASURES, **options):
    """What the general road gives: whole readers, then evaluate; when a file is not
    UTF-8, both read as Latin-1 (what evaluate() does with paths)."""
    def evaluate(encoding):
        return irmetrics.evaluate(read_qrels(qrels, encoding=encoding),
                                  read_run(run, encoding=encoding), measures,
                                  **options).to_dict()

    def either():
        try:
            return evaluate("utf-8")
        except irmetrics.exceptions.NotUtf8Error:
            return evaluate("latin-1")
    return _outcome(either)


def path_road(qrels, run, measures=MEASURES, **options):
    """What irmetrics.evaluate gives for two paths (the chunked road when plain)."""
    return _outcome(lambda: irmetrics.evaluate(qrels, run, measures, **options).to_dict())


def _lists(lists):
    return (lists.query_ids.tolist(), lists.offsets.tolist(), lists.code.tolist(),
            lists.bogus.tolist(), lists.rel_hist.tolist(), lists.run_name,
            lists.qrels_positive_total)


def assert_lists_agree(qrels_path, run_path, **options):
    """pack_run_file declines or equals pack(encode_qrels(read_qrels), read_run)."""
    enc = encode_qrels_file(qrels_path)
    if enc is None:
        try:
            enc = encode_qrels(read_qrels(qrels_path).df)
        except irmetrics.exceptions.NotUtf8Error:
            return False  # Latin-1 qrels: evaluate() takes the general road
    got = pack_run_file(enc, run_path, **options)
    if got is None:
        return False
    whole = read_run(run_path)
    want = pack(encode_qrels(read_qrels(qrels_path).df), whole.df, run_name=whole.name,
                **options)
    assert _lists(got) == _lists(want)
    assert got.scores is None and got.doc_ids is None
    return True


def assert_roads_agree(qrels_path, run_path, chunks=(1, 7, 64, 16 << 20), options=OPTIONS,
                       measures=MEASURES):
    """Every chunk size and option: same results (or the same error) on both roads.
    Returns whether the chunked road was taken (did not decline) at least once."""
    saved = trec.PLAIN_CHUNK_BYTES
    streamed = False
    want = [full_road(qrels_path, run_path, measures, **opts) for opts in options]
    try:
        for chunk in chunks:
            trec.PLAIN_CHUNK_BYTES = chunk
            for opts, expected in zip(options, want):
                assert path_road(qrels_path, run_path, measures, **opts) == expected, \
                    (chunk, opts)
                if expected[0] == "ok":  # lists compared only when both roads read it
                    streamed |= assert_lists_agree(
                        qrels_path, run_path, **{k: v for k, v in opts.items() if k in PACK_KEYS})
    finally:
        trec.PLAIN_CHUNK_BYTES = saved
    return streamed


def write(tmp_path, name, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


QRELS = (b"1 0 a 1\n1 0 b 0\n1 0 c 2\n1 0 d -1\n01 0 a 1\n10 0 x 3\n10 0 y 1\n"
         b"2 0 a 1\n2 0 b 200\n2 0 c -5\n3 0 z 1\n")
# ties with mixed codes (1 and 2), -0 vs 0, a query only in the run (7), "01" vs "1"
RUN = (b"1 Q0 a 1 1.0 r\n1 Q0 b 2 1.0 r\n1 Q0 c 3 1 r\n1 Q0 e 4 1e0 r\n1 Q0 d 5 0.5 r\n"
       b"7 Q0 a 1 3 r\n7 Q0 b 2 2 r\n"
       b"01 Q0 b 1 -0 r\n01 Q0 a 2 0 r\n"
       b"10 Q0 y 1 +.5 r\n10 Q0 x 2 .5 r\n10 Q0 w 3 5e-1 r\n"
       b"2 Q0 c 1 2 r\n2 Q0 a 2 3 r\n2 Q0 b 3 1 last\n")


# Fixed discrepancy 1: paths that can be read only once ---------------------------------------

pipes = pytest.mark.skipif(not os.path.isdir("/dev/fd") or sys.platform == "win32",
                           reason="needs /dev/fd")


def _pipe_path(data: bytes):
    """A /dev/fd path to a pipe holding ``data`` (writer closed: readers then see EOF)."""
    r, w = os.pipe()
    os.write(w, data)  # small: fits in the pipe buffer
    os.close(w)
    return r, f"/dev/fd/{r}"


@pipes
@pytest.mark.parametrize("piped", ["run", "qrels"])
@pytest.mark.parametrize("tabs", [False, True], ids=["plain", "tabs"])
def test_a_pipe_path_reads_like_the_file(tmp_path, piped, tabs):
    # e.g. irmetrics.evaluate("qrels", "/dev/fd/63") from bash's <(zcat run.gz). Was:
    # InputFormatError '/dev/fd/N: no data lines' -- the chunked road drained the pipe
    # (BufferedReader.read(2) pulls the whole buffer, then seek(0) fails -> NotPlain)
    # and the full reader re-opened an empty pipe.
    texts = {"qrels": QRELS, "run": RUN}
    if tabs:
        texts[piped] = texts[piped].replace(b" ", b"\t")
    files = {kind: write(tmp_path, kind, text) for kind, text in texts.items()}
    want = full_road(files["qrels"], files["run"])
    fd, files[piped] = _pipe_path(texts[piped])
    try:
        got = path_road(files["qrels"], files["run"])
    finally:
        os.close(fd)
    assert got == want


@pipes
def test_cli_process_substitution(tmp_path):
    # irmetrics eval -m map -m num_ret qrels <(cat run)   (worked before the stream road)
    qrels = write(tmp_path, "qrels", QRELS)
    run = write(tmp_path, "run", RUN)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "irmetrics", "eval", "-q", "-m", "map", "-m", "num_ret"]
    want = subprocess.run(cmd + [str(qrels), str(run)], capture_output=True, env=env)
    assert want.returncode == 0
    r, w = os.pipe()
    os.write(w, RUN)
    os.close(w)
    try:
        got = subprocess.run(cmd + [str(qrels), f"/dev/fd/{r}"], capture_output=True,
                             env=env, pass_fds=(r,))
    finally:
        os.close(r)
    assert (got.returncode, got.stdout) == (0, want.stdout), got.stderr.decode()


@pipes
def test_named_fifo_run_does_not_hang(tmp_path):
    # mkfifo p; cat run > p & irmetrics eval qrels p: the chunked road opens the FIFO,
    # reads, cannot seek, declines; read_run opens the FIFO again and waits forever for
    # a second writer.
    qrels = write(tmp_path, "qrels", QRELS)
    want = full_road(qrels, write(tmp_path, "run", RUN))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "wb") as f:
            f.write(RUN)

    feeder = threading.Thread(target=writer, daemon=True)
    feeder.start()
    result = []
    worker = threading.Thread(target=lambda: result.append(path_road(qrels, fifo)),
                              daemon=True)
    worker.start()
    worker.join(timeout=1.5)
    hung = worker.is_alive()
    if hung:  # unblock the reader waiting in open(): a writer that writes nothing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=5)
    feeder.join(timeout=5)
    assert not hung, "evaluate(qrels, fifo) hangs (the fallback re-opens the FIFO)"
    assert result == [want]


# Fixed discrepancy 2: a byte order mark at the start of a later chunk ---

@pytest.mark.parametrize("chunk", [1, 13])
def test_bom_on_a_run_line_that_starts_a_chunk(tmp_path, monkeypatch, chunk):
    # Line 2 starts a chunk (every line does with 1-byte chunks; with 13 it is the first
    # line after the 13-byte first line). read_run keeps the BOM: query '\ufeff2', not in
    # the qrels. Got: polars drops the BOM at the start of the chunk -> query '2' is
    # evaluated (num_q 2 instead of 1).
    qrels = write(tmp_path, "qrels", b"1 0 a 1\n2 0 b 1\n")
    run = write(tmp_path, "run", b"1 Q0 a 1 2 r\n" + BOM + b"2 Q0 b 1 1 r\n")
    assert read_run(run).df["query_id"].to_list() == ["1", "\ufeff2"]
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", chunk)
    assert path_road(qrels, run) == full_road(qrels, run)


@pytest.mark.parametrize("chunk", [1, 8])
def test_bom_on_a_qrels_line_that_starts_a_chunk(tmp_path, monkeypatch, chunk):
    # read_qrels: judgments of '1' and '\ufeff1'; the chunked road: two judgments of '1'
    # (num_rel 2 instead of 1).
    qrels = write(tmp_path, "qrels", b"1 0 a 1\n" + BOM + b"1 0 b 1\n")
    run = write(tmp_path, "run", b"1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n")
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", chunk)
    assert path_road(qrels, run) == full_road(qrels, run)


def test_bom_mid_file_at_the_default_chunk_size(tmp_path):
    # No monkeypatching: the first 16 MiB (PLAIN_CHUNK_BYTES) end with a newline, so the
    # next line, '\ufeff2 ...' (e.g. from `cat a.run b.run` where b.run has a BOM),
    # starts the second chunk. Full reader: query '\ufeff2', not judged, num_q 1.
    # Got: query '2' evaluated too, num_q 2.
    size = trec.PLAIN_CHUNK_BYTES
    line = b"1 Q0 d%07d 1 1 r\n"
    n = size // len(line % 0)
    first = b"1 Q0 d" + b"x" * (7 + size - n * len(line % 0)) + b" 1 1 r\n"
    body = first + b"".join(line % i for i in range(1, n))
    assert len(body) == size
    run = write(tmp_path, "run", body + BOM + b"2 Q0 b 1 1 r\n")
    qrels = write(tmp_path, "qrels", b"1 0 d0000001 1\n2 0 b 1\n")
    want = full_road(qrels, run, ["num_q", "num_ret"])
    assert list(want[1]) == ["1"]  # only query '1' is evaluated
    assert path_road(qrels, run, ["num_q", "num_ret"]) == want


def test_bom_at_the_file_start_with_tiny_chunks(tmp_path, monkeypatch):
    # A 1- or 2-byte first chunk does not hold the whole BOM (the check misses it), but
    # polars drops it there, as read_run does: no discrepancy.
    qrels = write(tmp_path, "qrels", BOM + QRELS)
    run = write(tmp_path, "run", BOM + RUN)
    for chunk in (1, 2, 3, 4):
        monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", chunk)
        assert path_road(qrels, run) == full_road(qrels, run)


# passing adversarial checks (regression tests) -----------------------------------------

def test_mixed_ties_queries_and_options_over_many_chunk_sizes(tmp_path):
    qrels = write(tmp_path, "qrels", QRELS)
    run = write(tmp_path, "run", RUN)
    assert assert_roads_agree(qrels, run, chunks=(1, 3, 13, 40, 16 << 20))
    nofinal = write(tmp_path, "run2", RUN.rstrip(b"\n"))
    assert assert_roads_agree(qrels, nofinal, chunks=(1, 17), options=OPTIONS[:3])


def test_one_query_larger_than_a_chunk_and_a_very_long_line(tmp_path):
    lines = [f"q Q0 d{i:03d} {i} {(i // 7) / 4} r" for i in range(300)]  # runs of 7 ties
    lines.insert(150, "q Q0 " + "L" * 100_000 + " 0 18.5 r")
    lines.append("p Q0 d1 1 1 r")
    run = write(tmp_path, "run", ("\n".join(lines) + "\n").encode())
    judged = "".join(f"q 0 d{i:03d} {i % 4 - 1}\n" for i in range(0, 300, 3))
    qrels = write(tmp_path, "qrels", (judged + "q 0 " + "L" * 100_000 + " 2\np 0 d1 1\n").encode())
    assert assert_roads_agree(qrels, run, chunks=(1, 4096), options=OPTIONS[1:4])


def test_unsorted_blocks_and_many_queries(tmp_path):
    lines, judged = [], []
    for q in range(60):
        for d in range(6):
            lines.append(f"{q} Q0 d{(d * 7 + q) % 6} {d} {(d * 5 + q) % 3} r{q % 2}")
            if (d + q) % 2:
                judged.append(f"{q} 0 d{d} {(d + q) % 3}")
    qrels = write(tmp_path, "qrels", ("\n".join(judged) + "\n").encode())
    run = write(tmp_path, "run", ("\n".join(lines) + "\n").encode())
    assert assert_roads_agree(qrels, run, chunks=(50, 1000), options=OPTIONS[1::2])


def test_split_query_blocks_decline_and_agree(tmp_path):
    qrels = write(tmp_path, "qrels", QRELS)
    run = write(tmp_path, "run", b"1 Q0 a 1 2 r\n2 Q0 a 1 2 r\n1 Q0 b 2 1 r\n")
    enc = encode_qrels_file(qrels)
    assert pack_run_file(enc, run) is None
    # a query absent from the qrels split over two blocks also declines (only the whole
    # query can say whether it repeats a document); evaluate() partitions both by query
    run2 = write(tmp_path, "run2", b"9 Q0 a 1 2 r\n1 Q0 a 1 2 r\n9 Q0 b 2 1 r\n")
    assert pack_run_file(enc, run2) is None
    for path in (run, run2):
        assert_roads_agree(qrels, path, chunks=(1, 16 << 20))


@pytest.mark.parametrize("run", [
    b"1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n1 Q0 a 3 0 r\n",              # in a judged query
    b"1 Q0 a 1 2 r\n9 Q0 x 1 2 r\n9 Q0 y 2 1 r\n9 Q0 x 3 0 r\n",  # only in an unjudged query
    b"9 Q0 x 1 2 r\n9 Q0 x 2 2 r\n",                             # same score, unjudged query
    b"1 Q0 a 1 2 r\n1 Q0 a 2 2 r\n",                             # consecutive
])
def test_run_duplicates_report_the_full_readers_error(tmp_path, run):
    qrels = write(tmp_path, "qrels", QRELS)
    path = write(tmp_path, "run", run)
    for chunk in (1, 13, 16 << 20):
        saved, trec.PLAIN_CHUNK_BYTES = trec.PLAIN_CHUNK_BYTES, chunk
        try:
            got = path_road(qrels, path)
        finally:
            trec.PLAIN_CHUNK_BYTES = saved
        assert got[:2] == ("error", "DuplicateEntryError")
        assert got == full_road(qrels, path)
        assert "run:" in got[2]  # file and line


@pytest.mark.parametrize("qrels", [
    b"1 0 a 1\n1 0 b 0\n1 0 a 1\n",
    b"1 0 a 1\n3 0 z 0\n3 0 z 1\n",          # a query no run line has
    b"1 0 a 1\n2 0 b 0\n1 0 a 0\n",          # across blocks
    b"1 0 a 1\n1 1 a 1\n",                   # the iteration field does not separate them
])
def test_qrels_duplicates_report_the_full_readers_error(tmp_path, qrels):
    path = write(tmp_path, "qrels", qrels)
    run = write(tmp_path, "run", RUN)
    assert encode_qrels_file(path) is None
    got = path_road(path, run)
    assert got[:2] == ("error", "DuplicateEntryError") and got == full_road(path, run)


RUN_VARIANTS = {
    "crlf": RUN.replace(b"\n", b"\r\n"),
    "tabs": RUN.replace(b" ", b"\t"),
    "bom": BOM + RUN,
    "empty": b"",
    "newline_only": b"\n",
    "blank_line_inside": RUN.replace(b"\n7 ", b"\n\n7 ", 1),
    "blank_line_at_end": RUN + b"\n",
    "whitespace_line": RUN + b"   \n",
    "comment": b"# comment\n" + RUN,
    "leading_space": b" " + RUN,
    "double_space": RUN.replace(b"Q0 a", b"Q0  a", 1),
    "trailing_space": RUN.replace(b" r\n", b" r \n"),
    "extra_fields": RUN.replace(b" r\n", b" r extra fields\n"),
    "five_fields": RUN.replace(b" 0.5 r\n", b" 0.5\n"),
    "nan": RUN.replace(b"0.5 r", b"nan r"),
    "inf_unjudged_query": RUN.replace(b"7 Q0 a 1 3", b"7 Q0 a 1 inf"),
    "1e400": RUN.replace(b"0.5 r", b"1e400 r"),
    "hex": RUN.replace(b"0.5 r", b"0x1p3 r"),
    "comma": RUN.replace(b"0.5 r", b"0,5 r"),
    "rank_not_an_int": RUN.replace(b"1 Q0 d 5", b"1 Q0 d x"),
    "bad_utf8_doc": RUN.replace(b"Q0 e", b"Q0 \xff"),
    "bad_utf8_extra_field": RUN.replace(b" last\n", b" last \xff\n"),
    "bad_utf8_rank": RUN.replace(b"1 Q0 d 5", b"1 Q0 d \xff"),
    "utf8_ids": RUN.replace(b"Q0 e", "Q0 é\u00a0Ω".encode()),
    "nul_byte": RUN.replace(b"Q0 e", b"Q0 e\x00"),
    "quote": RUN.replace(b"Q0 e", b'Q0 "e'),
    "vertical_tab": RUN.replace(b" r\n", b" r\x0b\n", 1),
    "hash_inside_id": RUN.replace(b"Q0 e", b"Q0 e#1"),
    "tiny_and_huge_scores": RUN.replace(b"0.5 r", b"1e-400 r").replace(b"3 r", b"1e39 r"),
}


@pytest.mark.parametrize("name", sorted(RUN_VARIANTS))
def test_odd_run_files_agree_with_the_full_reader(tmp_path, name):
    qrels = write(tmp_path, "qrels", QRELS)
    run = write(tmp_path, "run", RUN_VARIANTS[name])
    assert_roads_agree(qrels, run, chunks=(1, 16 << 20), options=OPTIONS[:2],
                       measures=["map", "P.2", "num_ret", "num_q", "runid", "relstring.5"])


QRELS_VARIANTS = {
    "crlf": QRELS.replace(b"\n", b"\r\n"),
    "tabs": QRELS.replace(b" ", b"\t"),
    "bom": BOM + QRELS,
    "empty": b"",
    "blank_line_at_end": QRELS + b"\n",
    "whitespace_last_line": QRELS + b"  ",
    "no_final_newline": QRELS.rstrip(b"\n"),
    "trailing_space": QRELS.replace(b" 1\n", b" 1 \n"),
    "extra_field_first_line": b"1 0 a 1 x\n" + QRELS,
    "extra_field_last_line": QRELS + b"4 0 a 1 x\n",
    "short_line": QRELS + b"4 0 a\n",
    "comment": b"# c\n" + QRELS,
    "label_not_int": QRELS.replace(b"3 0 z 1", b"3 0 z 1.0"),
    "label_plus_and_zeros": QRELS.replace(b"3 0 z 1", b"3 0 z +01"),
    "label_int64_max": QRELS.replace(b"3 0 z 1", b"3 0 z 9223372036854775808"),
    "bad_utf8": QRELS.replace(b"0 z", b"0 \xfe"),
}


@pytest.mark.parametrize("name", sorted(QRELS_VARIANTS))
def test_odd_qrels_files_agree_with_the_full_reader(tmp_path, name):
    qrels = write(tmp_path, "qrels", QRELS_VARIANTS[name])
    run = write(tmp_path, "run", RUN)
    assert_roads_agree(qrels, run, chunks=(1, 16 << 20), options=OPTIONS[:2],
                       measures=["map", "P.2", "num_rel", "num_q", "ndcg"])


def test_score_tokens_read_as_read_run_reads_them(tmp_path):
    # rank 'x' sends read_run to its string path (a different float parser than the CSV
    # reader's): plain_chunks must refuse or give read_run's values.
    tokens = ["-0", "+0", "+.5", ".5", "5.", "1e+5", "1E5", "00.5", "1.e5", "1e-400",
              "4.9e-324", "1.7976931348623157e308", "1.7976931348623159e308", "3.4028236e38",
              "99999999999999999999999999", "1e400", "nan", "-nan", "inf", "Infinity",
              "0x1p3", "1_000", "1,5", "1d5", "1.5f", "+-1", ".", "e5", "1e", "٣", "１"]
    for token in tokens:
        for rank in ("1", "x"):
            path = write(tmp_path, "run", f"1 Q0 a {rank} {token} r\n1 Q0 b 2 0.25 r\n".encode())
            try:
                got = [s for f in plain_chunks(path, "run") for s in f["score"].to_list()]
            except NotPlain:
                continue
            assert got == read_run(path).df["score"].to_list(), (token, rank)


def test_gzip_variants(tmp_path):
    qrels = write(tmp_path, "qrels", QRELS)
    packed = gzip.compress(RUN)
    variants = {"run.gz": packed, "run_no_suffix": packed,
                "trailing_zeros.gz": packed + b"\0" * 8,
                "trailing_garbage.gz": packed + b"garbage",
                "multi_member.gz": gzip.compress(RUN[:20]) + gzip.compress(RUN[20:]),
                "truncated.gz": packed[:-4], "half.gz": packed[: len(packed) // 2],
                "plain_named.gz": RUN, "double.gz": gzip.compress(packed),
                "empty.gz": b""}
    for name, data in variants.items():
        assert_roads_agree(qrels, write(tmp_path, name, data), chunks=(5, 16 << 20),
                           options=OPTIONS[:2], measures=["map", "num_ret"])
    gz_qrels = write(tmp_path, "qrels.gz", gzip.compress(QRELS))
    assert_roads_agree(gz_qrels, write(tmp_path, "run.txt", RUN), chunks=(5, 16 << 20),
                       options=OPTIONS[:2], measures=["map", "num_rel"])


def test_placeholder_doc_judged_and_in_the_run(tmp_path):
    qrels = write(tmp_path, "qrels", QRELS + f"5 0 {BOGUS_DOC_ID} 1\n1 0 {BOGUS_DOC_ID} 2\n"
                  .encode())
    run = write(tmp_path, "run", RUN + f"1 Q0 {BOGUS_DOC_ID} 9 0.1 r\n".encode())
    assert_roads_agree(qrels, run, chunks=(1, 16 << 20))


def test_forty_bit_key_collision_between_run_and_qrels(tmp_path):
    # d32037 and d1473850 share the 40-bit doc part of the (query, doc) key: the match
    # must be verified on the strings (and both judged: keys unusable, exact joins).
    a, b = "d32037", "d1473850"
    run = write(tmp_path, "run", f"q Q0 {b} 1 3 r\nq Q0 {a} 2 3 r\nq Q0 d1 3 1 r\n".encode())
    for judged in (f"q 0 {a} 2\nq 0 d1 1\n", f"q 0 {a} 2\nq 0 {b} 1\nq 0 d1 0\n"):
        qrels = write(tmp_path, "qrels", judged.encode())
        assert_roads_agree(qrels, run, chunks=(1, 16 << 20))


def test_pathlib_and_str_paths_and_evaluator_with_other_runs(tmp_path, monkeypatch):
    qrels = write(tmp_path, "qrels", QRELS)
    run = write(tmp_path, "run", RUN)
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", 3)  # a qrels frame of many chunks
    want = full_road(qrels, run)
    assert path_road(qrels, run) == want == path_road(str(qrels), str(run))
    ev = Evaluator(qrels, MEASURES)
    ref = Evaluator(read_qrels(qrels), MEASURES)
    for other in (read_run(run), Run.read(run), {"1": {"a": 1.0, "b": 1.0, "c": 0.5}}):
        assert _canon(ev.evaluate(other).to_dict()) == _canon(ref.evaluate(other).to_dict())


def test_cli_plain_files_equal_the_full_road(tmp_path):
    # The same files made tab-separated take the general road inside the CLI.
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for sub, data in (("plain", lambda b: b), ("tabs", lambda b: b.replace(b" ", b"\t"))):
        (tmp_path / sub).mkdir()
        write(tmp_path / sub, "qrels", data(QRELS))
        write(tmp_path / sub, "run", data(RUN))
    script = ("import sys\nfrom irmetrics.cli.eval_cmd import run\n"
              "for args in [['-q','-c','-M2','-J','-l2'], ['-q','--semantics','pytrec_eval'],"
              " ['-q','-m','all_trec','-c'], ['-q','-M0','-c','-m','official']]:\n"
              "    sys.stdout.write(repr(args) + '\\n')\n"
              "    run(args + ['qrels', 'run'], sys.stdout, sys.stdout)\n")
    outs = [subprocess.run([sys.executable, "-c", script], capture_output=True, env=env,
                           cwd=tmp_path / sub) for sub in ("plain", "tabs")]
    assert outs[0].returncode == outs[1].returncode == 0, outs[0].stderr + outs[1].stderr
    assert outs[0].stdout == outs[1].stdout
    stdin = subprocess.run([sys.executable, "-m", "irmetrics", "eval", "-q", "qrels", "-"],
                           input=RUN, capture_output=True, env=env, cwd=tmp_path / "plain")
    path = subprocess.run([sys.executable, "-m", "irmetrics", "eval", "-q", "qrels", "run"],
                          capture_output=True, env=env, cwd=tmp_path / "plain")
    assert (stdin.returncode, stdin.stdout) == (path.returncode, path.stdout)


def test_missing_file_and_directory_give_the_full_readers_error(tmp_path):
    qrels = write(tmp_path, "qrels", QRELS)
    run = write(tmp_path, "run", RUN)
    for bad in (tmp_path / "missing", tmp_path):
        for q, r in ((qrels, bad), (bad, run)):
            got = path_road(q, r, ["map"])
            assert got[:2] == ("error", "InputFormatError") and got == full_road(q, r, ["map"])
