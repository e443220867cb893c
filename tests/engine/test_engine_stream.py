"""The chunked road from a run file to RankedLists equals read_run + pack."""

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics import Evaluator, evaluate
from irmetrics.containers import Qrels
from irmetrics.engine import pack as pack_module
from irmetrics.engine.pack import BOGUS_DOC_ID, encode_qrels, pack
from irmetrics.engine.stream import encode_qrels_file, pack_run_file
from irmetrics.exceptions import DuplicateEntryError
from irmetrics.containers import trec_text as trec
from irmetrics.io.trec import (NotPlain, plain_chunks, read_qrels, read_qrels_bytes, read_run,
                               read_run_bytes)

from tests._cases import qrels_and_run

MEASURES = ["map", "P.1,3,5", "recall.5", "recip_rank", "ndcg", "ndcg_cut.3", "bpref",
            "num_ret", "num_rel_ret", "runid", "success.1"]


def run_lines(run: dict, layout: str, rng) -> list[str]:
    """TREC lines of a run dict: ``sorted`` (blocks by query, scores descending, ties in
    random order), ``unsorted`` (blocks, rows in random order) or ``split`` (the first
    query in two blocks)."""
    blocks = []
    for qid, docs in run.items():
        rows = list(docs.items())
        rng.shuffle(rows)
        if layout == "sorted":
            rows.sort(key=lambda kv: -kv[1])
        blocks.append([f"{qid} Q0 {d} {i + 1} {s!r} r{qid}" for i, (d, s) in enumerate(rows)])
    rng.shuffle(blocks)
    if layout == "split" and len(blocks) > 1 and len(blocks[0]) > 1:
        head = blocks.pop(0)
        blocks.insert(1, head[:1])
        blocks.append(head[1:])
    return [line for block in blocks for line in block]


def write(tmp_path, lines, name="run.txt"):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.mark.parametrize("layout", ["sorted", "unsorted", "split"])
@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=qrels_and_run(max_queries=5, max_retrieved=12), seed=st.integers(0, 2**16),
       chunk=st.sampled_from([1, 40, 200, 1 << 20]),
       max_docs=st.sampled_from([None, 0, 1, 3]), complete=st.booleans(),
       semantics=st.sampled_from(["trec_eval", "pytrec_eval"]))
def test_stream_packs_like_read_run_and_pack(tmp_path, monkeypatch, layout, data, seed, chunk,
                                             max_docs, complete, semantics):
    qrels, run = data
    run = {q: d for q, d in run.items() if d}  # a file has no empty rankings
    if not run:
        return
    path = write(tmp_path, run_lines(run, layout, np.random.default_rng(seed)))
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", chunk)
    enc = encode_qrels(Qrels.from_dict(qrels).df)
    options = dict(max_docs=max_docs, complete=complete, semantics=semantics)
    got = pack_run_file(enc, path, **options)
    whole = read_run(path)
    want = pack(enc, whole.df, run_name=whole.name, **options)
    split = any(len(d) > 1 for d in run.values()) and layout == "split" and len(run) > 1
    if got is None:
        assert split, "a grouped plain file must take the chunked road"
        return
    assert got.query_ids.tolist() == want.query_ids.tolist()
    assert got.offsets.tolist() == want.offsets.tolist()
    assert got.code.tolist() == want.code.tolist()
    assert got.scores is None and got.doc_ids is None
    assert got.bogus.tolist() == want.bogus.tolist()
    assert got.rel_hist.tolist() == want.rel_hist.tolist()
    assert got.run_name == want.run_name
    assert got.qrels_positive_total == want.qrels_positive_total


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=qrels_and_run(max_queries=5, max_retrieved=12), seed=st.integers(0, 2**16),
       layout=st.sampled_from(["sorted", "unsorted", "split"]))
def test_evaluate_path_equals_evaluate_run(tmp_path, monkeypatch, data, seed, layout):
    qrels, run = data
    run = {q: d for q, d in run.items() if d}
    if not run:
        return
    path = write(tmp_path, run_lines(run, layout, np.random.default_rng(seed)))
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", 64)
    ev = Evaluator(qrels, MEASURES, complete=True)
    assert ev.evaluate(path).to_dict() == ev.evaluate(read_run(path)).to_dict()


def test_ties_with_different_labels_follow_doc_ids_across_chunks(tmp_path, monkeypatch):
    # One query of equal scores spread over many 1-byte chunks: the block waits for the
    # next chunk until it is whole, then its judged entries take their doc-id places.
    lines = [f"q Q0 d{i} 1 1.5 r" for i in (3, 7, 1, 9, 5)]
    path = write(tmp_path, lines)
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", 1)
    enc = encode_qrels(Qrels.from_dict({"q": {"d7": 1, "d1": 2, "d0": 0}}).df)
    lists = pack_run_file(enc, path)
    # doc ids descending: d9 d7 d5 d3 d1
    assert lists.code.tolist() == [-1, 1, -1, -1, 2]


def test_duplicates_take_the_general_road_and_unplain_lines_do_not(tmp_path):
    enc = encode_qrels(Qrels.from_dict({"q": {"a": 1}}).df)
    dup = write(tmp_path, ["q Q0 a 1 2 r", "q Q0 b 2 1 r", "q Q0 a 3 0 r"])
    assert pack_run_file(enc, dup) is None
    with pytest.raises(DuplicateEntryError):
        evaluate({"q": {"a": 1}}, dup, ["map"])
    # Tabs, CRLF, comment and blank lines are read on the bounded road, chunk by chunk.
    tabs = write(tmp_path, ["# made by hand", "q\tQ0\ta\t1\t2\tr\r", ""], "tabs.txt")
    assert pack_run_file(enc, tabs).code.tolist() == [1]
    result = evaluate({"q": {"a": 1}}, tabs, ["map"])
    assert result.aggregate()["map"] == 1.0


def test_judged_placeholder_takes_the_general_road(tmp_path):
    qrels = {"q": {"a": 1}, "p": {BOGUS_DOC_ID: 1}}
    path = write(tmp_path, ["q Q0 a 1 2 r"])
    enc = encode_qrels(Qrels.from_dict(qrels).df)
    assert pack_run_file(enc, path, complete=True) is None
    assert pack_run_file(enc, path) is not None
    res = evaluate(qrels, path, ["P.1"], complete=True).to_dict()
    assert res == evaluate(qrels, read_run(path), ["P.1"], complete=True).to_dict()
    assert res["p"]["P_1"] == 1.0  # the placeholder found its judgment


def test_gzip_runs_stream(tmp_path):
    import gzip

    path = tmp_path / "run.txt.gz"
    path.write_bytes(gzip.compress(b"q Q0 a 1 2 r\nq Q0 b 2 1 r\n"))
    enc = encode_qrels(Qrels.from_dict({"q": {"b": 1}}).df)
    assert pack_run_file(enc, path).code.tolist() == [-1, 1]


# plain_chunks: either "not plain" or exactly what read_run reads ---------------------

TOKENS = ["q1", "q2", "#c", "Q0", "d1", "d2", "1", "2.5", "-3e2", ".5", "5.", "nan", "inf",
          "0x1p3", "1e400", "abc", "é", ""]
SEPARATORS = [" ", " ", " ", "  ", "\t", "\r", "\x0b"]


def plain_frames(tmp_path, data: bytes, kind: str, chunk: int):
    """The plain chunks of ``data`` written to a file, or None when it is not plain."""
    path = tmp_path / f"{kind}.txt"
    path.write_bytes(data)
    try:
        return list(plain_chunks(path, kind, chunk_bytes=chunk))
    except NotPlain:
        return None


@st.composite
def messy_run_bytes(draw):
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        n = draw(st.integers(0, 8))
        fields = [draw(st.sampled_from(TOKENS)) for _ in range(n)]
        if n >= 6 and draw(st.booleans()):
            fields[4] = draw(st.sampled_from(["1", "2.5", "-0", "3e-2"]))
        line = ""
        for f in fields:
            line += f + draw(st.sampled_from(SEPARATORS))
        lines.append(draw(st.sampled_from(["", " "])) + line.rstrip(" ") if n else "")
    data = "\n".join(lines) + draw(st.sampled_from(["", "\n"]))
    return draw(st.sampled_from([b"", b"\xef\xbb\xbf"])) + data.encode()


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=messy_run_bytes(), chunk=st.sampled_from([1, 16, 1 << 20]))
def test_plain_chunks_read_what_read_run_reads(tmp_path, data, chunk):
    frames = plain_frames(tmp_path, data, "run", chunk)
    if frames is None:
        return
    run = read_run_bytes(data)  # a plain file is a valid file
    got = [row for f in frames for row in f.select("query_id", "doc_id", "score").rows()]
    want = run.df.select("query_id", "doc_id", "score").rows()
    assert got == want
    assert frames[-1]["run_id"][-1] == run.name


# qrels ---------------------------------------------------------------------------------

QRELS_TOKENS = ["1", "2", "10", "#c", "0", "d1", "d2", "é", "-1", "3", "2.5", "abc", ""]


@st.composite
def messy_qrels_bytes(draw):
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        n = draw(st.integers(0, 6))
        fields = [draw(st.sampled_from(QRELS_TOKENS)) for _ in range(n)]
        if n == 4 and draw(st.booleans()):
            fields[3] = draw(st.sampled_from(["0", "1", "-1", "+2"]))
        line = "".join(f + draw(st.sampled_from(SEPARATORS)) for f in fields)
        lines.append(line.rstrip(" ") if draw(st.booleans()) else line)
    return "\n".join(lines).encode() + draw(st.sampled_from([b"", b"\n"]))


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=messy_qrels_bytes(), chunk=st.sampled_from([1, 16, 1 << 20]))
def test_plain_qrels_chunks_read_what_read_qrels_reads(tmp_path, data, chunk):
    frames = plain_frames(tmp_path, data, "qrels", chunk)
    if frames is None:
        return
    want = read_qrels_bytes(data, on_duplicate="first").df  # a plain file is a valid file
    got = [row for f in frames for row in f.rows()]
    if len(got) == len(set((q, d) for q, d, _ in got)):
        assert got == want.select("query_id", "doc_id", "relevance").rows()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=qrels_and_run(max_queries=5), seed=st.integers(0, 2**16))
def test_qrels_file_encodes_like_read_qrels(tmp_path, data, seed):
    qrels, _ = data
    rng = np.random.default_rng(seed)
    rows = [(q, d, v) for q, docs in qrels.items() for d, v in docs.items()]
    rng.shuffle(rows)
    path = write(tmp_path, [f"{q} 0 {d} {v}" for q, d, v in rows], "qrels.txt")
    got = encode_qrels_file(path)
    want = encode_qrels(read_qrels(path).df)
    assert got.query_ids.tolist() == want.query_ids.tolist()
    assert got.rel_hist.tolist() == want.rel_hist.tolist()
    assert got.positive_total == want.positive_total
    assert got.unique_keys and got.query_bits == want.query_bits
    expected = sorted((want.query_ids.tolist().index(q), d, v if v >= 0 else -2)
                      for q, d, v in rows)
    docs = pl.Series([d for _, d, _ in expected], dtype=pl.String)
    hashes = pack_module.doc_hash(docs)
    keys = pack_module._combine(np.array([q for q, _, _ in expected]), hashes.copy(),
                                want.query_bits)
    fingerprints = pack_module.doc_fingerprint(docs)
    for enc in (got, want):  # the same judgments, whatever order the keys are in
        judgments = sorted(zip(enc.keys.tolist(), enc.fingerprints.tolist(),
                               enc.judgment_query.tolist(), enc.codes.tolist()))
        assert judgments == sorted(zip(keys.tolist(), fingerprints.tolist(),
                                       [q for q, _, _ in expected],
                                       [v for _, _, v in expected]))


def test_qrels_duplicates_are_reported_by_the_full_reader(tmp_path):
    path = write(tmp_path, ["1 0 a 1", "1 0 b 0", "1 0 a 0"], "qrels.txt")
    assert encode_qrels_file(path) is None
    with pytest.raises(DuplicateEntryError, match=r"qrels.txt:3: duplicate"):
        Evaluator(path, ["map"])
