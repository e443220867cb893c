"""The run's first chunks parsed while the qrels are encoded (issue 33,
``Evaluator(first_run=)``, what ``irmetrics eval`` and ``evaluate`` do): the same bytes
on 1 and 4 threads, a qrels error still first and worded as without the prefetch, a run
error held until the run is evaluated, nothing started on one thread."""

from __future__ import annotations

import tempfile
import threading
import warnings
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from irmetrics import Evaluator, evaluate
from irmetrics.engine import stream
from irmetrics.exceptions import InputFormatError, MissingQueriesWarning
from irmetrics.io.trec import read_qrels, read_run
from irmetrics.parallel import Prefetch, imap_ordered
from tests.engine.test_parallel_file_road import (MEASURES, SETTINGS, cli, judged_runs,
                                                  small_chunks, write)


def started_chunks():
    """Patch :meth:`RunPrefetch._parse` to count the chunks parsed ahead (any thread)."""
    parsed: list[int] = []
    real = stream.RunPrefetch._parse

    def parse(self, data):
        parsed.append(1)
        return real(self, data)

    return parsed, mock.patch.object(stream.RunPrefetch, "_parse", parse)


@SETTINGS
@given(data=judged_runs(), chunk_bytes=st.sampled_from([1, 7, 40]))
def test_prefetched_chunks_give_the_same_bytes_on_any_thread_count(data, chunk_bytes):
    qrels_text, run_text = data
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        qrels, run = write(tmp, "qrels.txt", qrels_text), write(tmp, "run.txt", run_text)
        parsed, patch = started_chunks()
        with small_chunks(chunk_bytes), patch:
            outs = [cli("-q", "-c", "--threads", str(n), *[f"-m{m}" for m in MEASURES],
                        qrels, run) for n in (1, 4)]
            assert 0 < len(parsed) <= 4  # a chunk per thread at most, on 4 threads only
            on = Evaluator(qrels, MEASURES, threads=4, first_run=run).evaluate(run)
            off = Evaluator(qrels, MEASURES, threads=4).evaluate(run)
    assert outs[0] == outs[1] and outs[0][0] == 0
    assert on.road == off.road
    assert on.per_query().equals(off.per_query())


def bad_files(tmp: str, n_queries: int, bad_query: int, *, bad_qrels: bool):
    """Qrels (a label that is no integer on one line when ``bad_qrels``) and a run whose
    query ``bad_query`` has a score that is no number."""
    qrels = "".join(f"{q} 0 b {'x' if bad_qrels and q == n_queries // 2 else 1}\n"
                    for q in range(n_queries))
    run = "".join(f"{q} Q0 a 1 3 run\n{q} Q0 b 2 {'y' if q == bad_query else '2.5'} run\n"
                  for q in range(n_queries))
    return write(tmp, "qrels.txt", qrels), write(tmp, "run.txt", run), \
        write(tmp, "good_run.txt", run.replace(" y ", " 2.5 "))


def failures(qrels: str, runs: list[str]) -> tuple[list[str], list[tuple[int, str, str]]]:
    """The error messages of ``evaluate`` and ``Evaluator(first_run=)`` and the CLI's
    outcome, for each run on 1 and 4 threads."""
    errors, outs = [], []
    for n in (1, 4):
        for path in runs:
            for call in (lambda: evaluate(qrels, path, ["map"], threads=n),
                         lambda: Evaluator(qrels, ["map"], threads=n,
                                           first_run=path).evaluate(path)):
                with pytest.raises(InputFormatError) as caught:
                    call()
                errors.append(str(caught.value))
            outs.append(cli("--threads", str(n), "-m", "map", qrels, path))
    return errors, outs


@SETTINGS
@given(n_queries=st.integers(2, 30), data=st.data(), chunk_bytes=st.sampled_from([1, 30, 0]))
def test_a_bad_qrels_line_wins_over_a_bad_run_line(n_queries, data, chunk_bytes):
    bad = data.draw(st.integers(0, n_queries - 1))
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run, good_run = bad_files(tmp, n_queries, bad, bad_qrels=True)
        with pytest.raises(InputFormatError) as full:
            read_qrels(qrels)
        parsed, patch = started_chunks()
        with small_chunks(chunk_bytes), patch:
            errors, outs = failures(qrels, [run, good_run])
        assert parsed  # the bad run line was (or may have been) parsed before the qrels
    assert set(errors) == {str(full.value)} and "qrels.txt" in errors[0]
    assert len(set(outs)) == 1
    status, stdout, stderr = outs[0]
    assert status == 2 and stdout == "" and str(full.value) in stderr


@SETTINGS
@given(n_queries=st.integers(2, 30), data=st.data(), chunk_bytes=st.sampled_from([1, 30, 0]))
def test_a_bad_run_line_in_a_prefetched_chunk_is_reported_as_read(n_queries, data,
                                                                   chunk_bytes):
    bad = data.draw(st.integers(0, n_queries - 1))
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run, _ = bad_files(tmp, n_queries, bad, bad_qrels=False)
        with pytest.raises(InputFormatError) as full:
            read_run(run)
        with small_chunks(chunk_bytes):
            errors, outs = failures(qrels, [run])
    assert errors == [str(full.value)] * 4
    assert f"run.txt:{full.value.line}: score is not a number" in errors[0]
    assert outs[0] == outs[1] and outs[0][0] == 2 and str(full.value) in outs[0][2]


def test_the_run_error_is_held_until_the_run_is_evaluated(tmp_path):
    qrels, run, good_run = bad_files(str(tmp_path), 3, 0, bad_qrels=False)
    ev = Evaluator(qrels, ["map"], threads=4, first_run=run)  # no error yet
    assert ev.evaluate(good_run).aggregate()["map"] == 0.5  # another run: not the prefetch
    ev = Evaluator(qrels, ["map"], threads=4, first_run=run)
    with pytest.raises(InputFormatError, match="run.txt:2: score"):
        ev.evaluate(run)


def test_one_thread_starts_and_takes_nothing(tmp_path):
    qrels, run, _ = bad_files(str(tmp_path), 3, 99, bad_qrels=False)
    taken: list[int] = []

    def items():
        for k in range(3):
            taken.append(k)
            yield k

    started = []
    real = threading.Thread.start

    def start(self):
        started.append(self.name)
        real(self)

    with mock.patch.object(threading.Thread, "start", start):
        Prefetch(str, items(), threads=1, count=2)
        result = Evaluator(qrels, ["map"], threads=1, first_run=run).evaluate(run)
    assert taken == [] and started == [] and result.aggregate()["map"] == 0.5


def test_prefetch_takes_count_items_and_holds_their_errors():
    taken: list[int] = []

    def items(fail=False):
        for k in range(6):
            taken.append(k)
            if fail and k == 2:
                raise ValueError("cut at item 2")
            yield k

    def fn(k):
        if k == 1:
            raise KeyError("item 1")
        return k * 10

    ahead = Prefetch(fn, items(), threads=4, count=2)
    assert taken == [0, 1]  # count items taken, no more
    results = imap_ordered(ahead.call, ahead.items(), threads=2)
    assert next(results) == 0
    with pytest.raises(KeyError):  # fn's error, at its item
        next(results)
    ahead = Prefetch(fn, iter([5, 6, 7]), threads=2, count=2)
    assert list(imap_ordered(ahead.call, ahead.items(), threads=2)) == [50, 60, 70]
    taken.clear()
    ahead = Prefetch(lambda k: k, items(fail=True), threads=4, count=4)  # fails at 2
    assert taken == [0, 1, 2]
    got = []
    with pytest.raises(ValueError, match="cut at item 2"):
        for value in imap_ordered(ahead.call, ahead.items(), threads=1):
            got.append(value)
    assert got == [0, 1]  # raised where it was met
