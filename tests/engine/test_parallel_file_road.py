"""The bounded-memory roads on 1 and 4 threads (issue 33), and the one road planner
(issue 36 item 4).

Every test runs the same input on ``threads=1`` (no helper thread at all) and
``threads=4``, with chunks made small (``PLAIN_CHUNK_BYTES``, ``BATCH_ROWS``) so that
a few lines span many chunks, and asserts equal CLI bytes, equal Results and equal
errors; the values are also checked against the memory road (the file read whole by
the full reader), which is the reference for what a file means.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import threading
import warnings
from unittest import mock

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics import Evaluator, evaluate
from irmetrics.cli import main
from irmetrics.containers import trec_text
from irmetrics.engine.pack import encode_qrels
from irmetrics.engine.stream import encode_qrels_file
from irmetrics.evaluate import ROADS, evaluate_each
from irmetrics.exceptions import InputFormatError, MissingQueriesWarning, ParameterError
from irmetrics.io import columnar
from irmetrics.io.trec import read_qrels, read_run

MEASURES = ["map", "P.2", "ndcg_cut.3", "recip_rank", "num_ret", "num_rel_ret", "bpref",
            "Rprec"]
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def cli(*argv: str) -> tuple[int, str, str]:
    """``irmetrics eval`` in this process: status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["eval", *argv])
    return status, out.getvalue(), err.getvalue()


def small_chunks(chunk_bytes: int):
    """Chunks of ``chunk_bytes`` bytes for text files (then whole lines, whole queries)
    and of 3 rows for tables (0: the defaults)."""
    return contextlib.nullcontext() if chunk_bytes <= 0 else _patched(chunk_bytes)


@contextlib.contextmanager
def _patched(chunk_bytes: int):
    with mock.patch.object(trec_text, "PLAIN_CHUNK_BYTES", chunk_bytes), \
            mock.patch.object(columnar, "BATCH_ROWS", 3):
        yield


@st.composite
def judged_runs(draw):
    """Qrels and run text: ties, graded and negative labels, unjudged documents, a query
    outside the qrels, qrels queries without a ranking; run lines with tabs, CRLF,
    padded columns, comment and blank lines; query blocks sometimes split."""
    n_queries = draw(st.integers(1, 4))
    queries = [f"q{i}" for i in range(n_queries)]
    docs = [f"d{i}" for i in range(7)]
    judged = {q: {d: draw(st.integers(-1, 3))
                  for d in draw(st.lists(st.sampled_from(docs), unique=True, max_size=5))}
              for q in queries + ["lonely"]}
    judged["q0"].setdefault("d0", 1)  # at least one judgment of a query that is ranked
    sep, end = draw(st.sampled_from([(" ", "\n"), ("\t", "\n"), (" ", "\r\n"), ("\t", "\r\n")]))
    qrels = [sep.join([q, "0", d, str(label)]) + end for q, labels in judged.items()
             for d, label in labels.items()]
    blocks = []
    for q in draw(st.permutations(queries + ["unjudged"])):
        ranked = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=7))
        if q == "q0" and "d0" not in ranked:
            ranked.append("d0")
        blocks.append([(q, d, draw(st.sampled_from(["1", "2", "2.5", "-1", "0.25"])))
                       for d in ranked])
    if draw(st.booleans()) and len(blocks[0]) > 1:  # the first query split over the file
        first = blocks.pop(0)
        blocks = [first[:1]] + blocks + [first[1:]]
    style = draw(st.sampled_from(["plain", "tabs", "crlf", "mixed"]))
    lines = []
    for block in blocks:
        for q, d, score in block:
            sep = "\t" if style == "tabs" or (style == "mixed" and draw(st.booleans())) else " "
            end = "\r\n" if style == "crlf" or (style == "mixed" and draw(st.booleans())) \
                else "\n"
            if style == "mixed" and draw(st.booleans()):
                lines.append(draw(st.sampled_from(["# a comment\n", "\n", "  \n"])))
            pad = "  " if style == "mixed" and draw(st.booleans()) else ""
            lines.append(sep.join([q, "Q0", d, "1", score, "run"]) + pad + end)
    return "".join(qrels), "".join(lines)


def write(directory: str, name: str, text: str) -> str:
    path = os.path.join(directory, name)
    with open(path, "w", newline="") as fh:
        fh.write(text)
    return path


@SETTINGS
@given(data=judged_runs(), chunk_bytes=st.sampled_from([1, 7, 40, 0]))
def test_threads_give_the_same_bytes_results_and_values(data, chunk_bytes):
    qrels_text, run_text = data
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        qrels, run = write(tmp, "qrels.txt", qrels_text), write(tmp, "run.txt", run_text)
        with small_chunks(chunk_bytes):
            outs = [cli("-q", "-c", "--threads", str(n), *[f"-m{m}" for m in MEASURES],
                        qrels, run) for n in (1, 4)]
            results = [evaluate(qrels, run, MEASURES, threads=n) for n in (1, 4)]
            tables = [evaluate(qrels, read_run(run).df.to_pandas(), MEASURES, threads=n)
                      for n in (1, 4)]
            each = [evaluate_each([Evaluator(qrels, MEASURES, threads=n),
                                   Evaluator({"q0": {"d0": 2}}, ["P.1"], threads=n)], run)
                    for n in (1, 4)]
        whole = evaluate(qrels, read_run(run), MEASURES)  # the full reader's table
    assert outs[0] == outs[1] and outs[0][0] == 0, outs[0][2]
    assert results[0].to_dict() == results[1].to_dict() == whole.to_dict()
    assert results[0].road == results[1].road == "file"  # never left the bounded road
    assert whole.road == "memory"
    assert tables[0].to_dict() == tables[1].to_dict() == whole.to_dict()
    assert tables[0].road == "table"
    assert [r.to_dict() for r in each[0]] == [r.to_dict() for r in each[1]]
    assert each[0][0].to_dict() == whole.to_dict() and each[0][0].road == "file"


def bad_run(n_queries: int, bad_query: int, messy: bool) -> str:
    """A run of ``n_queries`` queries of three lines; the second line of query
    ``bad_query`` has a score that is not a number. ``messy`` adds tabs, CRLF, comment
    and blank lines before it."""
    lines = []
    for q in range(n_queries):
        for rank, d in enumerate("abc"):
            score = "high" if (q, rank) == (bad_query, 1) else f"{3 - rank}.5"
            if messy and q % 2:
                lines.append(f"{q}\tQ0\t{d}\t{rank}\t{score}\trun\r\n")
                lines.append("# between\n\n")
            else:
                lines.append(f"{q} Q0 {d} {rank} {score} run\n")
    return "".join(lines)


def errors_on_1_and_4_threads(qrels: str, run: str, chunk_bytes: int):
    """The error of ``evaluate`` (its text) and the CLI's (status, stdout, stderr) for
    ``map`` of ``run`` against ``qrels`` on 1 and 4 threads, chunks of ``chunk_bytes``."""
    errors, outs = [], []
    with small_chunks(chunk_bytes):
        for n in (1, 4):
            with pytest.raises(InputFormatError) as caught:
                evaluate(qrels, run, ["map"], threads=n)
            errors.append(str(caught.value))
            outs.append(cli("--threads", str(n), "-m", "map", qrels, run))
    return errors, outs


@SETTINGS
@given(n_queries=st.integers(2, 30), data=st.data(), messy=st.booleans(),
       chunk_bytes=st.sampled_from([1, 30, 100, 0]))
def test_a_bad_line_in_a_later_chunk_is_reported_alike(n_queries, data, messy, chunk_bytes):
    bad = data.draw(st.integers(0, n_queries - 1))
    with tempfile.TemporaryDirectory() as tmp:
        qrels = write(tmp, "qrels.txt", "".join(f"{q} 0 b 1\n" for q in range(n_queries)))
        run = write(tmp, "run.txt", bad_run(n_queries, bad, messy))
        with pytest.raises(InputFormatError) as full:
            read_run(run)
        errors, outs = errors_on_1_and_4_threads(qrels, run, chunk_bytes)
    assert errors[0] == errors[1] == str(full.value)
    assert f"run.txt:{full.value.line}: score is not a number" in errors[0]
    assert outs[0] == outs[1]
    status, stdout, stderr = outs[0]
    assert status == 2 and stdout == "" and str(full.value) in stderr  # nothing half-written


#: A bad qrels line of each kind, given the query and the doc id of the line it replaces
#: (the repeat judges a doc id of its query's first line again: the duplicate rule).
BAD_QRELS_LINES = {
    "label": lambda q, d: f"{q} 0 {d} x",
    "fields": lambda q, d: f"{q} 0 {d} 1 5",
    "repeat": lambda q, d: f"{q} 0 d0 2",
}


@SETTINGS
@given(n_queries=st.integers(2, 30), bad=st.integers(0, 29),
       kind=st.sampled_from(sorted(BAD_QRELS_LINES)), messy=st.booleans(),
       chunk_bytes=st.sampled_from([1, 30, 100, 0]))
@example(n_queries=3, bad=2, kind="repeat", messy=False, chunk_bytes=0)  # one chunk, one block
@example(n_queries=30, bad=29, kind="label", messy=True, chunk_bytes=100)
def test_a_bad_qrels_line_in_a_later_chunk_is_reported_alike(n_queries, bad, kind, messy,
                                                            chunk_bytes):
    # The qrels are encoded chunk by chunk on the threads: a bad line in any chunk (the
    # last query's, past the first chunk whenever chunks are small) gives the full
    # reader's error (file, line, query, doc) on 1 and 4 threads, in the API and the CLI.
    bad %= n_queries
    lines, bad_line = [], None
    for q in range(n_queries):
        for d in range(2 + q % 3):
            line = f"{q} 0 d{d} {d % 2}"
            if (q, d) == (bad, 1 + q % 3):  # the query's last line
                line, bad_line = BAD_QRELS_LINES[kind](q, f"d{d}"), len(lines) + 1
            lines.append(line.replace(" ", "\t") + "\r\n" if messy and q % 2 else line + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        qrels = write(tmp, "qrels.txt", "".join(lines))
        run = write(tmp, "run.txt", "".join(f"{q} Q0 d0 1 1.5 run\n" for q in range(n_queries)))
        with pytest.raises(InputFormatError) as full:
            read_qrels(qrels)
        errors, outs = errors_on_1_and_4_threads(qrels, run, chunk_bytes)
    assert errors[0] == errors[1] == str(full.value)
    assert f"qrels.txt:{bad_line}: " in errors[0] and f"query_id '{bad}'" in errors[0]
    assert outs[0] == outs[1]
    status, stdout, stderr = outs[0]
    assert status == (4 if kind == "repeat" else 2)  # the CLI's status for a duplicate: 4
    assert stdout == "" and str(full.value) in stderr  # nothing half-written


def test_the_bad_line_of_the_earliest_chunk_wins(tmp_path):
    # Two bad lines in different chunks: the first in file order is reported, whatever
    # chunk a thread finishes first.
    qrels = write(str(tmp_path), "qrels.txt", "".join(f"{q} 0 b 1\n" for q in range(40)))
    text = bad_run(40, 30, False).replace("5 Q0 b 1 2.5 run", "5 Q0 b 1 x run")
    run = write(str(tmp_path), "run.txt", text)
    with small_chunks(50):
        for n in (1, 2, 4, 8):
            with pytest.raises(InputFormatError, match="run.txt:17: score"):
                evaluate(qrels, run, ["map"], threads=n)


@pytest.mark.parametrize("sep, end", [(" ", "\n"), ("\t", "\r\n")])
def test_qrels_chunks_encode_alike_on_any_thread_count(tmp_path, sep, end):
    lines = [sep.join([str(q), "0", f"d{d}", str((q * d) % 4 - 1)]) + end
             for q in range(50) for d in range(q % 7 + 1)]
    path = write(str(tmp_path), "qrels.txt", "".join(lines))
    with small_chunks(64):
        one, four = encode_qrels_file(path, threads=1), encode_qrels_file(path, threads=4)
    for name in ("query_ids", "rel_hist", "keys", "codes", "query_judgments"):
        assert (getattr(one, name) == getattr(four, name)).all(), name
    # A comment sends the qrels file to the full reader (rules across lines).
    commented = write(str(tmp_path), "commented.txt", "# judged by hand\n" + "".join(lines))
    assert encode_qrels_file(commented, threads=4) is None


def test_threads_one_starts_no_thread(tmp_path):
    qrels = write(str(tmp_path), "qrels.txt", "q 0 a 1\nq 0 b 0\n")
    run = write(str(tmp_path), "run.txt", "q Q0 b 1 2 r\nq\tQ0\ta\t2\t1\tr\r\n")
    started = []
    real = threading.Thread.start

    def start(self):
        started.append(self.name)
        real(self)

    with small_chunks(1), mock.patch.object(threading.Thread, "start", start):
        result = evaluate(qrels, run, ["map"], threads=1)
    assert result.aggregate()["map"] == 0.5 and started == []


def test_a_run_with_tabs_crlf_and_comments_keeps_memory_bounded_by_its_chunks(tmp_path):
    # The chunk reader hands the full reader one chunk at a time: no frame ever holds
    # more than a chunk's lines (plus the query that ends it).
    lines = "".join(f"{q}\tQ0\td{d}\t{d}\t{1 / (d + 1)}\trun\r\n# q {q}\n"
                    for q in range(20) for d in range(10))
    run = write(str(tmp_path), "run.txt", lines)
    qrels = write(str(tmp_path), "qrels.txt", "".join(f"{q} 0 d1 1\n" for q in range(20)))
    seen = []
    real = trec_text.chunk_frame

    def chunk_frame(data, kind):
        frame, n = real(data, kind)
        if kind == "run":
            seen.append(frame.height)
        return frame, n

    with small_chunks(200), mock.patch("irmetrics.engine.stream.chunk_frame", chunk_frame):
        result = evaluate(qrels, run, ["P.2"], threads=2)
    assert result.road == "file" and result.aggregate()["P_2"] == 0.5
    assert seen == [10] * 20  # one query (10 lines and its comments) per chunk


# -- the planner ---------------------------------------------------------------------

def test_the_planner_names_every_road(tmp_path):
    qrels = {"q": {"a": 1, "b": 0}}
    run_dict = {"q": {"a": 1.0, "b": 2.0}}
    path = write(str(tmp_path), "run.txt", "q Q0 a 1 1 r\nq Q0 b 2 2 r\n")
    ev = Evaluator(qrels, ["P.1"])
    frame = read_run(path).df
    parquet = str(tmp_path / "run.parquet")
    frame.write_parquet(parquet)
    cases = {"dict": run_dict, "file": path, "table": frame, "memory": read_run(path)}
    for road, run in [*cases.items(), ("table", parquet), ("table", frame.lazy())]:
        assert ev.plan(run).road == road
        result = ev.evaluate(run)
        assert result.road == road and result.aggregate()["P_1"] == 0.0
    adapters = pytest.importorskip("irmetrics.adapters")
    import numpy as np

    q, r = adapters.from_matrix(np.array([[0.2, 0.9]]), np.array([[1, 0]]))
    assert irm.evaluate(q, r, ["P.1"]).road == "direct"
    assert set(ROADS) == {"dict", "file", "table", "memory", "direct"}


def test_what_leaves_the_bounded_road_and_why(tmp_path):
    path = write(str(tmp_path), "run.txt", "q Q0 a 1 1 r\n")
    qrels = {"q": {"a": 1}}
    for options, reason in [(dict(ties="expected"), "ties='expected'"),
                            (dict(relevance="float"), "relevance='float'")]:
        plan = Evaluator(qrels, ["P.1"], **options).plan(path)
        assert plan.road == "memory" and plan.bounded_input and reason in plan.reason
        with pytest.raises(ParameterError, match=r"`strict` must be False to read this"):
            evaluate(qrels, path, ["P.1"], strict=True, **options)
        assert evaluate(qrels, path, ["P.1"], **options).road == "memory"
    assert Evaluator(qrels, ["P.1"]).plan("/dev/stdin").reason.startswith("standard input")
    # A file the chunk road gives back at run time (a duplicate document).
    dup = write(str(tmp_path), "dup.txt", "q Q0 a 1 1 r\nq Q0 b 1 1 r\nq Q0 a 1 0 r\n")
    with pytest.raises(ParameterError, match="repeated in a query"):
        evaluate(qrels, dup, ["P.1"], strict=True)
    # In memory already: strict has nothing to refuse.
    assert evaluate(qrels, read_run(path), ["P.1"], strict=True).road == "memory"


def test_cli_threads_verbose_and_strict_road(tmp_path):
    qrels = write(str(tmp_path), "qrels.txt", "q 0 a 1\n")
    run = write(str(tmp_path), "run.txt", "q\tQ0\ta\t1\t1\tr\r\n")
    status, out, err = cli("--verbose", "--threads", "3", "-m", "P.1", qrels, run)
    assert status == 0 and err == f"irmetrics eval: {run}: road file (3 threads)\n"
    status, out2, err = cli("--strict-road", "--ties", "expected", "-m", "P.1", qrels, run)
    assert status == 2 and out2 == ""
    assert "--strict-road refuses to read this run whole (ties='expected' (expected" in err
    for bad in ("0", "1025", "two"):
        status, _, err = cli("--threads", bad, "-m", "P.1", qrels, run)
        assert status == 2 and f"`--threads` must be an integer between 1 and 1024; got" \
            f" {bad!r}" in err
    with pytest.raises(ParameterError, match="`threads` must be an integer"):
        evaluate({"q": {"a": 1}}, run, ["P.1"], threads=0)


def test_a_split_query_is_partitioned_on_threads_with_equal_values(tmp_path):
    lines = [f"q{q % 5} Q0 d{q} 1 {q % 3} r\n" for q in range(60)]  # every query split
    run = write(str(tmp_path), "run.txt", "".join(lines))
    qrels = write(str(tmp_path), "qrels.txt", "".join(f"q{q} 0 d{q} 1\n" for q in range(5)))
    with small_chunks(30):
        got = [evaluate(qrels, run, MEASURES, threads=n) for n in (1, 4)]
    assert got[0].to_dict() == got[1].to_dict() == \
        evaluate(qrels, read_run(run), MEASURES).to_dict()
    assert got[0].road == "file"


def test_a_table_cut_into_batches_mid_query(tmp_path):
    frame = pl.DataFrame({"query_id": ["a"] * 5 + ["b"] * 4, "doc_id": list("vwxyzvwxy"),
                          "score": [5.0, 4, 4, 2, 1, 3, 3, 3, 1]})
    qrels = {"a": {"x": 1, "w": 2}, "b": {"y": 1}}
    with small_chunks(1):
        got = [evaluate(qrels, frame, MEASURES, threads=n) for n in (1, 4)]
    want = evaluate(qrels, {q: dict(zip(g["doc_id"], g["score"]))
                            for (q,), g in frame.group_by("query_id")}, MEASURES)
    assert got[0].to_dict() == got[1].to_dict() == want.to_dict()


@SETTINGS
@given(rows=st.lists(st.tuples(st.sampled_from(["1", "2", "10", "q"]),
                               st.sampled_from(["a", "b", "c", "d", "ab"]),
                               st.integers(-1, 3)), min_size=1, max_size=14),
       chunk_bytes=st.sampled_from([1, 7, 20, 0]))
@example(rows=[("1", "a", 1), ("1", "b", 0), ("1", "a", 0)], chunk_bytes=0)  # one block
@example(rows=[("1", "a", 1), ("2", "b", 0), ("1", "a", 0)], chunk_bytes=0)  # two blocks
def test_qrels_repeats_are_found_wherever_chunks_cut_on_any_thread_count(rows, chunk_bytes):
    # A (query, doc) pair judged twice, in one block of lines or in two (a query cut by
    # a chunk boundary, or scattered over the file), sends the qrels to the full reader
    # on 1 and 4 threads alike; without one, both encode what the whole table encodes.
    text = "".join(f"{q} 0 {d} {v}\n" for q, d, v in rows)
    repeated = len({(q, d) for q, d, _ in rows}) < len(rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, "qrels.txt", text)
        with small_chunks(chunk_bytes):
            got = [encode_qrels_file(path, threads=n) for n in (1, 4)]
        if repeated:
            assert got == [None, None]
            return
        want = encode_qrels(read_qrels(path).df)
    for enc in got:
        assert enc.query_ids.tolist() == want.query_ids.tolist()
        assert enc.rel_hist.tolist() == want.rel_hist.tolist()
        assert enc.rel_levels.tolist() == want.rel_levels.tolist()
        assert enc.positive_total == want.positive_total and enc.unique_keys
        assert sorted(zip(enc.keys.tolist(), enc.codes.tolist())) == \
            sorted(zip(want.keys.tolist(), want.codes.tolist()))
