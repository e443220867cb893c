"""Bounded-memory road (engine/stream.evaluate_run_file): per-query values and aggregates
bit-identical to the in-memory road, chunks evaluated and dropped, split query blocks
partitioned through temporary files, bad lines deep in a file reported whole."""

import os
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics
from irmetrics import Evaluator
from irmetrics.engine import stream
from irmetrics.engine.pack import encode_qrels
from irmetrics.containers import trec_text as trec
from irmetrics.io.trec import read_qrels, read_run

from tests._cases import qrels_and_run, same_value
from tests.engine.test_engine_stream import run_lines, write

#: Every kernel family trec_eval has, plus friendly cutoffs merged into one kernel call.
MEASURES = ["all_trec", "nDCG@3", "P@2", "P(rel=2)@5", "AP@4", "RR"]


def same_results(got, want) -> None:
    """Per-query values and aggregates equal bit for bit, queries in the same order."""
    assert got.query_ids.tolist() == want.query_ids.tolist()
    assert got.names == want.names
    for name in want.names:
        a, b = got._columns[name], want._columns[name]
        assert a.dtype == b.dtype, name
        assert all(same_value(x, y) for x, y in zip(a.tolist(), b.tolist())), name
    agg_got, agg_want = got.aggregate(), want.aggregate()
    assert list(agg_got) == list(agg_want)
    for name, value in agg_want.items():
        assert same_value(agg_got[name], value), name
    assert got.run_name == want.run_name
    assert got.missing_query_ids.tolist() == want.missing_query_ids.tolist()
    assert got.ignored_query_ids.tolist() == want.ignored_query_ids.tolist()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=qrels_and_run(max_queries=6, max_retrieved=12), seed=st.integers(0, 2**16),
       layout=st.sampled_from(["sorted", "unsorted", "split"]),
       chunk=st.sampled_from([1, 40, 200, 1 << 20]), partition=st.sampled_from([1, 64, 1 << 20]),
       max_docs=st.sampled_from([None, 0, 1, 3]), complete=st.booleans(),
       judged_only=st.booleans(), relevance_level=st.sampled_from([1, 2]),
       semantics=st.sampled_from(["trec_eval", "pytrec_eval"]),
       ties=st.sampled_from(["trec_eval", "input_order"]))
def test_chunked_road_is_bit_identical_to_the_in_memory_road(
        tmp_path, monkeypatch, data, seed, layout, chunk, partition, max_docs, complete,
        judged_only, relevance_level, semantics, ties):
    qrels, run = data
    run = {q: d for q, d in run.items() if d}  # a file has no empty rankings
    if not run:
        return
    path = write(tmp_path, run_lines(run, layout, np.random.default_rng(seed)))
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", chunk)
    monkeypatch.setattr(stream, "PARTITION_BYTES", partition)
    calls = []
    monkeypatch.setattr(Evaluator, "_ranked_lists", lambda *a, **k: calls.append(1) or
                        pytest.fail("the general road was taken"))
    options = dict(max_docs=max_docs, complete=complete, judged_only=judged_only,
                   relevance_level=relevance_level, semantics=semantics, ties=ties)
    if semantics == "pytrec_eval":
        measures = ["map", "P.2", "ndcg_cut.3", "bpref", "recip_rank", "iprec_at_recall"]
    else:
        measures = MEASURES
    ev = Evaluator(qrels, measures, **options)
    got = ev.evaluate_unchecked(path)
    assert got.road == "file"
    monkeypatch.undo()
    want = ev.evaluate_unchecked(read_run(path))
    same_results(got, want)


def _count_chunks(monkeypatch):
    """Record the size (queries, entries) of every RankedLists the kernels receive."""
    seen = []
    original = Evaluator._columns

    def spy(self, lists):
        seen.append((lists.n_queries, lists.code.size))
        return original(self, lists)

    monkeypatch.setattr(Evaluator, "_columns", spy)
    return seen


def _grouped_run(tmp_path, n_queries=50, depth=20, name="run.txt", split=False):
    rng = np.random.default_rng(7)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(0, depth, 3)}
             for i in range(n_queries)}
    lines = [f"q{i} Q0 d{j} 0 {rng.random():.6f} r" for i in range(n_queries)
             for j in range(depth)]
    if split:  # every query's lines in two blocks, far apart
        half = len(lines) // 2
        lines = lines[::2] + lines[1::2]
        assert half
    return qrels, write(tmp_path, lines, name)


def test_chunks_are_evaluated_and_dropped(tmp_path, monkeypatch):
    qrels, path = _grouped_run(tmp_path)
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", 1000)  # about 40 lines per chunk
    seen = _count_chunks(monkeypatch)
    got = irmetrics.evaluate(qrels, path, ["map", "ndcg_cut.10"])
    # Each kernel call saw one chunk's whole queries (a query waits for its end, so a
    # chunk holds at most its own lines plus one query), never the whole run.
    assert len(seen) > 10
    assert max(entries for _, entries in seen) <= 40 + 2 * 20
    assert sum(q for q, _ in seen) == 50
    monkeypatch.undo()
    same_results(got, irmetrics.evaluate(qrels, read_run(path), ["map", "ndcg_cut.10"]))


def test_split_blocks_are_partitioned_in_the_temporary_directory(tmp_path, monkeypatch):
    qrels, path = _grouped_run(tmp_path, split=True)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # what TMPDIR sets
    monkeypatch.setattr(stream, "PARTITION_BYTES", 4000)  # several partitions
    made = []
    original = stream.partition_by_query

    def spy(frames, directory, **kw):
        made.append(directory)
        paths, name = original(frames, directory, **kw)
        made.append(sum(os.path.getsize(p) for p in paths))
        made.append(len(paths))
        return paths, name

    monkeypatch.setattr(stream, "partition_by_query", spy)
    seen = _count_chunks(monkeypatch)
    got = irmetrics.evaluate(qrels, path, ["map", "P.5", "ndcg"])
    directory, size, parts = made
    assert os.path.dirname(directory) == str(scratch)
    assert not os.path.exists(directory)  # removed once evaluated
    assert parts > 1 and len(seen) == parts
    assert size <= os.path.getsize(path)  # rank field written as 0: never larger
    monkeypatch.undo()
    same_results(got, irmetrics.evaluate(qrels, read_run(path), ["map", "P.5", "ndcg"]))


def test_partitions_keep_scores_bit_for_bit(tmp_path):
    rng = np.random.default_rng(3)
    scores = np.concatenate([rng.standard_normal(500) * 10.0 ** rng.integers(-300, 300, 500),
                             [5e-324, 1.7976931348623157e308, 0.1 + 0.2, -0.0, 1e16]])
    lines = [f"q{i % 7} Q0 d{i} 1 {float(s)!r} r" for i, s in enumerate(scores)]
    path = write(tmp_path, lines)
    paths, name = stream.partition_by_query(trec.plain_chunks(path, "run"), str(tmp_path),
                                            n_parts=3)
    back = [f for p in paths if os.path.getsize(p) for f in trec.plain_chunks(p, "run")]
    got = {(q, d): s for f in back for q, d, s in f.select("query_id", "doc_id", "score")
           .iter_rows()}
    want = read_run(path).df
    assert name == "r" and len(got) == want.height
    for q, d, s in want.select("query_id", "doc_id", "score").iter_rows():
        assert same_value(got[q, d], s)


def test_a_bad_line_deep_in_a_file_names_its_line_and_prints_nothing(tmp_path, capsys):
    from irmetrics.cli import main

    qrels, path = _grouped_run(tmp_path, n_queries=400, depth=50)
    lines = path.read_text().splitlines()
    lines[17_345] = "q346 Q0 d45 0 not-a-number r"
    path.write_text("\n".join(lines) + "\n")
    qrels_path = tmp_path / "qrels.txt"
    irmetrics.Qrels.from_dict(qrels).write(qrels_path)
    code = main(["eval", "-q", "-m", "map", str(qrels_path), str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""  # nothing printed as if complete
    assert f"{path}:17346:" in err and "q346" in err


def test_chunked_and_in_memory_roads_agree_on_a_generated_file(tmp_path):
    """The benchmark's generator (graded labels, -1 labels, ties, queries missing on
    either side): every output of the official measures, -c and -M, bit for bit."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
    try:
        from generate import generate
    finally:
        sys.path.pop(0)
    generate(tmp_path, queries=60, depth=200, seed=5, collection=20_000, verbose=False)
    qrels = encode_qrels(read_qrels(tmp_path / "qrels.txt").df)
    assert qrels.unique_keys
    for options in ({}, {"complete": True, "max_docs": 50}, {"judged_only": True}):
        ev = Evaluator(tmp_path / "qrels.txt", ["all_trec"], **options)
        same_results(ev.evaluate_unchecked(tmp_path / "run.txt"),
                     ev.evaluate_unchecked(read_run(tmp_path / "run.txt")))


#: Lines the plain reader refuses: most are errors, a rank that is not a number and a tab
#: are not (the full reader reads them). Doc "zz" is in no ranking: no duplicate.
BAD_LINES = ["q3 Q0 zz 0 not-a-number r", "q3 Q0 zz", "q3 Q0 zz 0 1.0", "q3 Q0 zz x 1.0 r",
             "q3 Q0 zz 0 inf r", "q3 Q0 zz 0 1.0 r\tx"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.integers(0, 299), bad=st.sampled_from(BAD_LINES),
       chunk=st.sampled_from([64, 500, 1 << 20]), split=st.booleans(),
       duplicate=st.sampled_from([None, "same", "earlier"]))
def test_a_bad_line_is_reported_from_its_chunk_as_the_full_reader_reports_it(
        tmp_path, monkeypatch, where, bad, chunk, split, duplicate):
    from irmetrics.exceptions import InputFormatError

    qrels, path = _grouped_run(tmp_path, n_queries=15, depth=20, split=split)
    lines = path.read_text().splitlines()
    if duplicate == "same":  # a repeated pair just before the bad line: reported first
        lines[max(where - 1, 0)] = lines[max(where - 2, 0)]
    elif duplicate == "earlier":
        lines[where // 2] = lines[0]
    lines[where] = bad
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", chunk)
    try:
        read_run(path)
    except InputFormatError as exc:
        want = (type(exc), str(exc))
    else:
        want = None  # a line the full reader accepts (a tab): the general road reads it
    whole = []
    evaluate_module = sys.modules["irmetrics.evaluate"]
    original = evaluate_module.read_utf8_or_latin1
    monkeypatch.setattr(evaluate_module, "read_utf8_or_latin1",
                        lambda *a, **k: whole.append(1) or original(*a, **k))
    try:
        irmetrics.evaluate(qrels, path, ["map"])
    except InputFormatError as exc:
        got = (type(exc), str(exc))
    else:
        got = None
    assert got == want
    if want is not None and not duplicate and not split:
        assert not whole, "a bad line in a grouped file is explained from its chunk"
