"""Every statistics, grid and comparison road gives the same bytes on 1 and on 4 threads.

Issue 33: ``threads=`` on the resampling statistics, ``evaluate_grid``, ``compare``,
``meta_evaluate``, ``tie_report`` and ``--threads`` on ``irmetrics compare`` / ``agree``.
Each test runs one road with ``threads=1`` (the caller's thread only) and ``threads=4``
on hypothesis inputs (tied, graded and negative scores, unjudged documents, queries a
run lacks) and compares the outputs byte for byte: p-values, intervals, tables, CLI
output, warnings and errors. Resamples are cut into blocks by the data and the number
of resamples only; a fixture makes the blocks small, so that 4 threads really do share
them (the tests assert more than one block), and one test plants a thread-dependent
block size to show the comparison catches it.
"""

from __future__ import annotations

import concurrent.futures
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
import irmetrics.stats as ist
from irmetrics.exceptions import InputFormatError, ParameterError
from irmetrics import parallel
from irmetrics.parallel import map_ordered_warnings

from tests.comparison.test_compare import cli

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "meta_evaluation"

#: Few examples: every example runs a road twice, and grids read files.
FEW = settings(max_examples=6, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow,
                                      HealthCheck.function_scoped_fixture])

#: Values with ties (repeats), exact binary fractions and negative scores.
VALUES = st.sampled_from([0.0, 0.0, 0.1, 0.25, 0.5, 0.5, 1.0 / 3.0, 0.75, 1.0, -0.2])


#: parallel.MIN_THREAD_WORK as shipped (the fixture below lowers it in every test).
SHIPPED_MIN_WORK = parallel.MIN_THREAD_WORK


@pytest.fixture(autouse=True)
def any_work_is_shared(monkeypatch):
    """Every job worth threads (parallel.threads_for_work), however small: these tests'
    inputs are small, and 4 threads must really share them to compare anything."""
    monkeypatch.setattr(parallel, "MIN_THREAD_WORK", 1)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few resamples, so that even small inputs make many blocks."""
    monkeypatch.setattr(ist._common, "_MIN_BLOCK_ELEMENTS", 64)


def _fields(result) -> bytes:
    """Every array (and scalar) field of a statistics result, as bytes."""
    out = []
    for name, value in sorted(vars(result).items()):
        if isinstance(value, np.ndarray) or np.isscalar(value):
            out.append(name.encode() + np.ascontiguousarray(np.asarray(value)).tobytes())
    return b"|".join(out)


def _frame(df: pl.DataFrame) -> bytes:
    """A table as bytes: column names, types and every value's bytes (NaN included)."""
    out = [repr(df.schema).encode()]
    for column in df.columns:
        series = df[column]
        if series.dtype.is_numeric():
            out.append(series.to_numpy().tobytes())
        else:
            out.append(repr(series.to_list()).encode())
    return b"|".join(out)


def _matrix(draw, rows, columns):
    return np.array(draw(st.lists(st.lists(VALUES, min_size=columns, max_size=columns),
                                  min_size=rows, max_size=rows)), dtype=np.float64)


@st.composite
def topic_scores(draw, min_topics=2):
    n = draw(st.integers(min_topics, 24))
    m = draw(st.integers(2, 5))
    scores = _matrix(draw, n, m)
    # Some noise on some columns: not every difference is on the grid.
    noise = draw(st.integers(0, 2**16))
    return scores + np.random.default_rng(noise).normal(scale=0.01, size=scores.shape) * (
        np.arange(m) % 2)


def _both(fn, **kwargs):
    """``fn`` on 1 and on 4 threads."""
    return fn(threads=1, **kwargs), fn(threads=4, **kwargs)


def _blocks(row_elements, total):
    return -(-total // ist._common._block_rows(row_elements, total))


# --------------------------------------------------------------------------- statistics


@FEW
@given(scores=topic_scores(), test=st.sampled_from(["randomization", "bootstrap"]),
       alternative=st.sampled_from(["two-sided", "less", "greater"]),
       kind=st.sampled_from(["bca", "percentile"]))
def test_paired_tests_same_bytes(small_blocks, scores, test, alternative, kind):
    a, b = scores[:, :-1], scores[:, 1:]
    n, k = a.shape
    assert _blocks(n + k, 600) > 4
    one, four = _both(lambda threads: ist.paired_test(
        a, b, test=test, n_resamples=600, seed=5, alternative=alternative, exact=(
            False if test == "randomization" else None), bootstrap_ci=kind, threads=threads))
    assert _fields(one) == _fields(four)


@FEW
@given(scores=topic_scores(min_topics=1), kind=st.sampled_from(["bca", "percentile"]))
def test_confidence_interval_same_bytes(small_blocks, scores, kind):
    one, four = _both(lambda threads: ist.confidence_interval(
        scores, method="bootstrap", n_resamples=500, seed=2, bootstrap_ci=kind,
        threads=threads))
    assert _fields(one) == _fields(four)


@FEW
@given(scores=topic_scores(min_topics=1))
def test_tukey_same_bytes(small_blocks, scores):
    cube = np.stack([scores.T, scores.T[::-1]], axis=-1)      # (m, n, 2): two measures
    one, four = _both(lambda threads: ist.tukey_hsd(cube, n_resamples=400, seed=3,
                                                    threads=threads))
    assert _fields(one) == _fields(four)


@FEW
@given(x=topic_scores(), k=st.integers(1, 2))
def test_ranking_agreement_same_bytes(small_blocks, x, k):
    y = x[:, ::-1] + 0.01 * np.arange(x.shape[1])
    one, four = _both(lambda threads: ist.ranking_agreement(x, y, k=k, n_resamples=300,
                                                            seed=4, threads=threads))
    assert _fields(one) == _fields(four)
    fixed = _both(lambda threads: ist.ranking_agreement(x.mean(axis=0), y, k=k,
                                                        n_resamples=300, threads=threads))
    assert _fields(fixed[0]) == _fields(fixed[1])


@FEW
@given(scores=topic_scores(), test=st.sampled_from(["randomization", "bootstrap", "tukey",
                                                    "wilcoxon"]))
def test_discriminative_power_same_bytes(small_blocks, scores, test):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the test was asked for by name: no warning
        one, four = _both(lambda threads: ist.discriminative_power(
            scores, test=test, correction="holm", n_resamples=500, seed=6, threads=threads))
    assert _fields(one) == _fields(four)


@FEW
@given(scores=topic_scores(), trials=st.integers(1, 1300))
def test_swap_rate_same_bytes(scores, trials):
    one, four = _both(lambda threads: ist.swap_rate(scores, n_trials=trials, bin_width=0.05,
                                                    seed=7, threads=threads))
    assert _fields(one) == _fields(four)


def test_swap_rate_error_is_the_same_on_any_thread_count():
    # A bin width too small for the differences fails in some block: one thread and four
    # (blocks streamed through one pool) raise the same error, from the first such block.
    rng = np.random.default_rng(3)
    scores = rng.random((30, 4)) * 1e6
    messages = []
    for threads in (1, 4):
        with pytest.raises(ParameterError) as caught:
            ist.swap_rate(scores, n_trials=2000, bin_width=1e-3, seed=2, threads=threads)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "`bin_width` must be" in messages[0]


@st.composite
def task_scores(draw):
    m = draw(st.integers(2, 5))
    return [_matrix(draw, draw(st.integers(2, 9)), m) for _ in range(draw(st.integers(1, 3)))]


@FEW
@given(tasks=task_scores(), resampling=st.sampled_from(["two-level", "tasks", "topics"]),
       aggregation=st.sampled_from(["mean", "borda", "mean_rank"]))
def test_rank_intervals_same_bytes(tasks, resampling, aggregation):
    # 300 resamples: three blocks of 128 drawn, and the max-t pass in three pieces.
    from irmetrics.stats.rank_intervals import (aggregate_rank_intervals,
                                                bootstrap_mean_intervals, rank_intervals)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one, four = _both(lambda threads: rank_intervals(tasks[0], n_resamples=300, seed=4,
                                                         threads=threads))
        assert _fields(one) == _fields(four)
        one, four = _both(lambda threads: aggregate_rank_intervals(
            tasks, aggregation=aggregation, resampling=resampling, n_resamples=300, seed=4,
            threads=threads))
        assert _fields(one) == _fields(four)
        with_nan = np.vstack(tasks)
        with_nan[0, 0] = np.nan
        one, four = _both(lambda threads: bootstrap_mean_intervals(
            with_nan, n_resamples=300, seed=4, threads=threads))
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(one, four))


def test_default_blocks_on_a_realistic_size():
    # 20 systems, every pair, 10,000 resamples, 50 topics: the default block layout.
    rng = np.random.default_rng(0)
    scores = np.round(rng.random((50, 20)) * 40) / 40
    pairs = ist.system_pairs(20)
    a, b = scores[:, pairs[:, 0]], scores[:, pairs[:, 1]]
    assert _blocks(50 + len(pairs), 10_000) >= 16
    for test in ("randomization", "bootstrap"):
        one, four = _both(lambda threads: ist.paired_test(a, b, test=test, seed=1,
                                                          threads=threads))
        assert _fields(one) == _fields(four)


def test_a_thread_dependent_block_size_is_caught(small_blocks, monkeypatch):
    # The planted bug: blocks sized by the thread count. The comparison above must see it.
    rng = np.random.default_rng(1)
    a, b = rng.random((20, 3)), rng.random((20, 3))
    honest = ist._common._block_rows

    def by_threads(row_elements, total):
        return max(1, honest(row_elements, total) // by_threads.threads)

    monkeypatch.setattr(ist._common, "_block_rows", by_threads)
    results = []
    for threads in (1, 4):
        by_threads.threads = threads
        results.append(ist.paired_test(a, b, test="bootstrap", n_resamples=600, seed=5,
                                       threads=threads))
    assert _fields(results[0]) != _fields(results[1])


def test_one_thread_starts_no_pool(monkeypatch):
    class NoPool:
        def __init__(self, *args, **kwargs):
            raise AssertionError("threads=1 started a thread pool")

    # (irmetrics.parallel reads the class from concurrent.futures when it starts a pool)
    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", NoPool)
    rng = np.random.default_rng(2)
    x = rng.random((30, 4))
    ist.paired_test(x[:, :2], x[:, 2:], test="bootstrap", n_resamples=3000, threads=1)
    ist.tukey_hsd(x.T, n_resamples=3000, threads=1)
    ist.swap_rate(x, n_trials=1000, threads=1)


def _tiny_jobs():
    """Statistics small enough for parallel.threads_for_work to keep on one thread."""
    rng = np.random.default_rng(3)
    x = np.round(rng.random((20, 6)), 2)
    from irmetrics.stats.rank_intervals import bootstrap_mean_intervals, rank_intervals

    return [ist.paired_test(x[:, :3], x[:, 3:], test="randomization", exact=False,
                            n_resamples=500, seed=2, threads=4),
            ist.paired_test(x[:, :3], x[:, 3:], test="bootstrap", n_resamples=500, seed=2,
                            threads=4),
            ist.tukey_hsd(x.T, n_resamples=500, seed=2, threads=4),
            rank_intervals(x, n_resamples=500, seed=2, threads=4),
            bootstrap_mean_intervals(x, n_resamples=500, seed=2, threads=4)]


def test_tiny_jobs_stay_on_the_callers_thread_with_the_same_bytes(monkeypatch):
    # The rule that keeps a job too small to gain from threads on one thread (never
    # slower than threads=1): with the default MIN_THREAD_WORK no helper thread starts...
    monkeypatch.setattr(parallel, "MIN_THREAD_WORK", SHIPPED_MIN_WORK)
    started = []
    real = parallel._pulled
    monkeypatch.setattr(parallel, "_pulled", lambda *a: started.append(a[2]) or real(*a))
    alone = _tiny_jobs()
    assert started == []
    # ...and with every job shared (the tests' default here), 4 threads do start, and
    # give the same numbers: the rule decides the threads, never the results.
    monkeypatch.setattr(parallel, "MIN_THREAD_WORK", 1)
    shared = _tiny_jobs()
    assert started and max(started) == 4
    for a, b in zip(alone, shared):
        if isinstance(a, tuple):
            assert all(np.array_equal(x, y) for x, y in zip(a, b))
        else:
            assert _fields(a) == _fields(b)


def test_threads_for_work_rule(monkeypatch):
    monkeypatch.setattr(parallel, "MIN_THREAD_WORK", SHIPPED_MIN_WORK)
    assert parallel.threads_for_work(4, 0) == 1
    assert parallel.threads_for_work(4, parallel.MIN_THREAD_WORK * 2 + 1) == 2
    assert parallel.threads_for_work(4, parallel.MIN_THREAD_WORK * 100) == 4
    assert parallel.threads_for_work(1, parallel.MIN_THREAD_WORK * 100) == 1
    with pytest.raises(ParameterError):
        parallel.threads_for_work(0, 10)  # validated even for a tiny job
    for n in (0, 1, 7, 64, 65):
        for threads in (1, 2, 3, 16):
            runs = parallel.item_runs(n, threads)
            assert [i for run in runs for i in run] == list(range(n))
            assert len(runs) <= max(1, parallel.RUNS_PER_THREAD * threads)


def test_map_in_runs_is_the_items_in_order_whatever_the_threads():
    for n in (0, 1, 7, 65):
        for threads in (1, 2, 4):
            for most in (None, 1, 3):
                assert parallel.map_in_runs(lambda i: i * i, n, threads=threads,
                                            most=most) == [i * i for i in range(n)]
                runs = parallel.item_runs(n, threads, most)
                joined = parallel.map_in_runs(lambda i: [i], n, threads=threads, most=most,
                                              join=lambda parts: sum(parts, []))
                assert joined == [list(run) for run in runs]


@pytest.mark.parametrize("bad", [0, -1, 1025, 2.0, True, "4"])
def test_bad_thread_counts_are_clear_errors(bad):
    x = np.random.default_rng(3).random((10, 3))
    calls = [
        lambda: ist.paired_test(x[:, 0], x[:, 1], test="bootstrap", threads=bad),
        lambda: ist.paired_test(x[:, 0], x[:, 1], test="t", threads=bad),
        lambda: ist.confidence_interval(x, threads=bad),
        lambda: ist.tukey_hsd(x.T, threads=bad),
        lambda: ist.ranking_agreement(x, x, threads=bad),
        lambda: ist.discriminative_power(x, threads=bad),
        lambda: ist.swap_rate(x, threads=bad),
        lambda: irm.evaluate_grid({"q": {"q1": {"d": 1}}}, {"r": {"q1": {"d": 1.0}}}, "P.1",
                                  threads=bad),
        lambda: irm.tie_report({"q1": {"d": 1}}, {"q1": {"d": 1.0}}, "P.1", threads=bad),
    ]
    for call in calls:
        with pytest.raises(ParameterError, match=r"^`threads` must be an integer between 1"
                                                 r" and 1024; got "):
            call()


# --------------------------------------------------------------------------- warnings


@pytest.mark.parametrize("threads", [1, 4])
def test_warnings_come_in_item_order_whatever_the_timing(threads):
    import time

    def fn(i):
        time.sleep(0.002 * (8 - i))  # later items finish first
        warnings.warn(f"item {i}", UserWarning)
        if i % 3 == 0:
            warnings.warn(f"dropped {i}", DeprecationWarning)
        if i == 6:
            raise ValueError("item 6 fails")
        return i

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert map_ordered_warnings(fn, range(6), threads=threads,
                                    ignore=(DeprecationWarning,)) == list(range(6))
        with pytest.raises(ValueError, match="item 6 fails"):
            map_ordered_warnings(fn, range(8), threads=threads)
    messages = [str(w.message) for w in caught]
    # The failing call: items 0..6 warned (a sequential loop stops at 6), 7 is not told.
    assert messages == [f"item {i}" for i in range(6)] + [
        m for i in range(7) for m in (f"item {i}",) + ((f"dropped {i}",) if i % 3 == 0 else ())]


@pytest.mark.parametrize("threads", [1, 4])
def test_nested_calls_keep_the_order(threads):
    import time

    def inner(pair):
        i, j = pair
        time.sleep(0.001 * (6 - i - j))
        warnings.warn(f"{i}.{j}", UserWarning)
        return i * 10 + j

    def outer(i):
        warnings.warn(f"{i} starts", UserWarning)
        return map_ordered_warnings(inner, [(i, j) for j in range(3)], threads=threads)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert map_ordered_warnings(outer, range(3), threads=threads) == [
            [10 * i + j for j in range(3)] for i in range(3)]
    assert [str(w.message) for w in caught] == [
        m for i in range(3) for m in [f"{i} starts"] + [f"{i}.{j}" for j in range(3)]]


# --------------------------------------------------------------------------- grids


def _write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


@st.composite
def collections(draw):
    """Qrels sets (graded, negative, some documents unjudged) and runs (ties, queries
    missing, documents the qrels never saw) as TREC text."""
    queries = [f"q{i}" for i in range(draw(st.integers(2, 6)))]
    docs = [f"d{i}" for i in range(8)]
    label = st.sampled_from([-1, 0, 0, 1, 2, 3])
    qrels = {}
    for name in ("human", "llm", "other")[:draw(st.integers(2, 3))]:
        lines = [f"{q} 0 {d} {draw(label)}" for q in queries for d in docs
                 if draw(st.booleans()) or d == "d0"]
        qrels[name] = "\n".join(lines) + "\n"
    runs = {}
    for r in range(draw(st.integers(2, 4))):
        lines = []
        for q in queries[:len(queries) - draw(st.integers(0, 1))]:
            chosen = draw(st.lists(st.sampled_from(docs + ["x1", "x2"]), min_size=1,
                                   max_size=8, unique=True))
            lines += [f"{q} Q0 {d} {i} {draw(VALUES)} run{r}" for i, d in enumerate(chosen)]
        runs[f"run{r}"] = "\n".join(lines) + "\n"
    return qrels, runs


def _same_on_one_and_four(data, road):
    """``road(qrels paths, run paths, threads)`` on 1 and on 4 threads, the collection
    written to files: the same output (or error) and the same warnings in the same order."""
    qrels, runs = data
    with tempfile.TemporaryDirectory() as folder:
        named_qrels = {n: _write(folder, f"{n}.qrels", t) for n, t in qrels.items()}
        named_runs = {n: _write(folder, f"{n}.run", t) for n, t in runs.items()}
        outputs = []
        for threads in (1, 4):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    out = road(named_qrels, named_runs, threads)
                except irm.exceptions.IrMetricsError as error:  # e.g. no query in common
                    out = (type(error), str(error))
            outputs.append((out, [(w.category, str(w.message)) for w in caught]))
    assert outputs[0] == outputs[1]


@FEW
@given(data=collections())
def test_grid_and_its_tables_same_bytes(small_blocks, data):
    def road(qrels, runs, threads):
        grid = irm.evaluate_grid(qrels, runs, ["map", "P.5", "ndcg_cut.10"], threads=threads)
        return [_frame(table) for table in (
            grid.per_query(), grid.aggregate(),
            grid.ranking_agreement(n_resamples=200, threads=threads),
            grid.measure_agreement("map", "P_5", n_resamples=200, threads=threads),
            grid.discriminative_power(test="randomization", n_resamples=300, threads=threads),
            grid.swap_rate(n_trials=300, per_bin=True, threads=threads))]

    _same_on_one_and_four(data, road)


@FEW
@given(data=collections(), test=st.sampled_from(["t", "randomization", "bootstrap", "tukey"]))
def test_compare_same_bytes(small_blocks, data, test):
    def road(qrels, runs, threads):
        cmp = irm.compare(qrels["human"], runs, ["map", "P.5"], test=test, n_resamples=500,
                          threads=threads)
        return cmp.to_json(), cmp.notes

    _same_on_one_and_four(data, road)


@FEW
@given(data=collections())
def test_meta_evaluate_and_tie_report_same_bytes(small_blocks, data):
    def road(qrels, runs, threads):
        meta = irm.meta_evaluate(qrels, runs, ["map", "P.5"], n_resamples=200,
                                 swap_trials=200, test="randomization", threads=threads)
        ties = irm.tie_report(qrels["human"], runs["run0"],
                              ["map", "P.5", "ndcg_cut.10", "recip_rank"], threads=threads)
        return meta.to_json(), _frame(ties.summary)

    _same_on_one_and_four(data, road)


def test_a_bad_line_is_the_same_error_on_any_thread_count(tmp_path):
    qrels = _write(tmp_path, "qrels", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    good = "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.4 r\nq2 Q0 d3 1 0.9 r\n"
    runs = {"a": _write(tmp_path, "a.run", good),
            "b": _write(tmp_path, "b.run", good + "q2 Q0 d4 2 not-a-score r\n"),
            "c": _write(tmp_path, "c.run", good),
            "d": _write(tmp_path, "d.run", "q1 Q0 d1\n" + good)}
    for call in (lambda t: irm.evaluate_grid({"h": qrels}, runs, "map", threads=t),
                 lambda t: irm.compare(qrels, runs, "map", threads=t)):
        errors = []
        for threads in (1, 4):
            with pytest.raises(InputFormatError) as caught:
                call(threads)
            errors.append(str(caught.value))
        # The first bad run in the order given, named with its line, whatever finished first.
        assert errors[0] == errors[1] and errors[0].endswith(
            "b.run:4: score is not a number, found 'not-a-score' (query_id 'q2', doc_id 'd4')")


# --------------------------------------------------------------------------- CLI


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=collections(), test=st.sampled_from(["randomization", "bootstrap", "tukey"]))
def test_cli_compare_and_agree_same_bytes(small_blocks, data, test):
    qrels, runs = data
    with tempfile.TemporaryDirectory() as folder:
        qrels_paths = [f"{n}={_write(folder, f'{n}.qrels', t)}" for n, t in qrels.items()]
        run_paths = [_write(folder, f"{n}.run", t) for n, t in runs.items()]
        for argv in (["compare", "--test", test, "--resamples", "500", "-m", "map", "-m",
                      "P.5", qrels_paths[0].split("=", 1)[1], *run_paths],
                     ["agree", *[a for q in qrels_paths for a in ("--qrels", q)],
                      "--resamples", "200", "--swap-trials", "200", "-m", "map",
                      *run_paths]):
            one = cli(*argv[:1], "--threads", "1", *argv[1:])
            four = cli(*argv[:1], "--threads", "4", *argv[1:])
            assert one == four


def test_cli_fixture_bytes_on_one_and_four_threads():
    qrels = [a for q in (f"human={FIX / 'qrels.human.txt'}", f"llm={FIX / 'qrels.llm.txt'}")
             for a in ("--qrels", q)]
    runs = [str(FIX / f"{r}.run") for r in ("rerank", "dense", "splade", "bm25", "rm3",
                                            "weak")]
    for argv in (["agree", *qrels, "-m", "ndcg_cut.10", "-m", "map", *runs],
                 ["compare", "--test", "randomization", "--format", "json",
                  str(FIX / "qrels.human.txt"), *runs]):
        one = cli(argv[0], "--threads", "1", *argv[1:])
        four = cli(argv[0], "--threads", "4", *argv[1:])
        assert one[0] == 0 and one == four


@pytest.mark.parametrize("command", ["compare", "agree"])
@pytest.mark.parametrize("bad", ["0", "1025", "two", "1.5"])
def test_cli_bad_threads(command, bad):
    qrels = str(FIX / "qrels.human.txt")
    args = ([qrels] if command == "compare" else ["--qrels", f"a={qrels}", "--qrels",
                                                  f"b={qrels}"])
    status, out, err = cli(command, "--threads", bad, *args, str(FIX / "bm25.run"),
                           str(FIX / "rm3.run"))
    assert status == 2 and out == ""
    assert err == (f"irmetrics {command}: `--threads` must be an integer between 1 and 1024;"
                   f" got {bad!r}.\n")


def test_docs_page_sessions_run(monkeypatch):
    import doctest

    doc = (ROOT / "docs" / "all_cores.md").read_text()
    sessions = [part.split("\n```", 1)[0] for part in doc.split("```pycon\n")[1:]]
    assert len(sessions) == 2
    monkeypatch.chdir(ROOT)
    for i, session in enumerate(sessions):
        test = doctest.DocTestParser().get_doctest(session, {}, f"all_cores.md[{i}]", None, 0)
        runner = doctest.DocTestRunner()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runner.run(test)
        assert runner.failures == 0 and runner.tries >= 7


# --------------------------------------------------------------------------- Spark


def test_spark_without_a_session_starts_local_on_every_core(monkeypatch):
    sql = pytest.importorskip("pyspark.sql")
    from irmetrics.spark import partitioned

    started = []

    class Builder:
        def master(self, master):
            started.append(master)
            return self

        def appName(self, name):  # noqa: N802 - pyspark's name
            return self

        def getOrCreate(self):  # noqa: N802 - pyspark's name
            return "session"

    monkeypatch.setattr(sql.SparkSession, "getActiveSession", staticmethod(lambda: None))
    monkeypatch.setattr(sql.SparkSession, "builder", Builder())
    assert partitioned._session("run.parquet", "qrels.parquet") == "session"
    assert started == ["local[*]"]
