"""The judgment store (pack.EncodedQrels): numbers only, about 17 bytes per judgment,
filled chunk by chunk in the order given, and looked up like the strings themselves."""

import os
import tempfile

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from irmetrics import Evaluator
from irmetrics.engine import pack as pack_module
from irmetrics.engine.pack import JudgmentChunk, encode_judgments, encode_qrels, lookup_codes, query_codes
from irmetrics.engine.ranked import NOT_IN_POOL, POOL_UNJUDGED
from irmetrics.engine.stream import encode_qrels_file
from irmetrics.exceptions import DuplicateEntryError

from tests._cases import DOC_IDS, QUERY_IDS, qrels_and_run


@st.composite
def chunked_qrels(draw):
    """Qrels rows in a drawn order (a query's rows may be scattered over the table) and
    the cut points of the chunks they are given in."""
    qrels, _ = draw(qrels_and_run(max_queries=6, max_judged=10, min_label=-2, max_label=5))
    rows = [(q, d, v) for q, docs in qrels.items() for d, v in docs.items()]
    rows = draw(st.permutations(rows))
    cuts = sorted(draw(st.lists(st.integers(0, len(rows)), max_size=4)))
    return rows, cuts


def frame(rows) -> pl.DataFrame:
    return pl.DataFrame({"query_id": [q for q, _, _ in rows], "doc_id": [d for _, d, _ in rows],
                         "relevance": [v for _, _, v in rows]},
                        schema={"query_id": pl.String, "doc_id": pl.String,
                                "relevance": pl.Int64})


def judgments(enc) -> list:
    """Every judgment as (query code, key, fingerprint, code), in a canonical order."""
    return sorted(zip(enc.judgment_query.tolist(), enc.keys.tolist(),
                      enc.fingerprints.tolist(), enc.codes.tolist()))


@settings(max_examples=80, deadline=None)
@given(case=chunked_qrels(), capacity=st.sampled_from([0, 1, 3, 10_000]))
def test_chunks_in_any_order_and_capacity_encode_like_one_table(case, capacity):
    rows, cuts = case
    whole = encode_qrels(frame(rows))
    bounds = [0, *cuts, len(rows)]
    parts = [frame(rows[a:b]) for a, b in zip(bounds, bounds[1:]) if b > a]
    got = encode_judgments((JudgmentChunk.of(p) for p in parts), capacity=capacity)
    assert got.query_ids.tolist() == whole.query_ids.tolist()
    assert got.rel_hist.tolist() == whole.rel_hist.tolist()
    assert got.rel_levels.tolist() == whole.rel_levels.tolist()
    assert got.positive_total == whole.positive_total == sum(v > 0 for _, _, v in rows)
    assert got.unique_keys and judgments(got) == judgments(whole)
    # Every query's judgments are found through its blocks, wherever its rows were.
    for enc in (got, whole):
        for code, qid in enumerate(enc.query_ids.tolist()):
            at = enc.judgments_of(np.array([code]))
            assert sorted(enc.codes[at].tolist()) == sorted(
                v if v >= 0 else POOL_UNJUDGED for q, _, v in rows if q == qid)
            assert len(at) == enc.query_judgments[code]


@settings(max_examples=80, deadline=None)
@given(case=chunked_qrels(),
       probes=st.lists(st.tuples(st.sampled_from(QUERY_IDS),
                                 st.sampled_from(DOC_IDS + ("d99", "x"))), max_size=40))
def test_lookups_on_scattered_judgments_equal_a_dict_of_the_strings(case, probes):
    rows, _ = case
    qrels = encode_qrels(frame(rows))
    judged = {(q, d): v for q, d, v in rows}
    probes = [(q, d) for q, d in probes if q in set(qrels.query_ids)]
    qcode = query_codes(pl.Series([q for q, _ in probes], dtype=pl.String), qrels.query_ids)
    docs = pl.Series([d for _, d in probes], dtype=pl.String)
    got = lookup_codes(qrels, qcode, pack_module.doc_hash(docs).copy(),
                       lambda rows: docs if rows is None else docs.gather(rows),
                       queries=np.unique(qcode))
    assert got.tolist() == [NOT_IN_POOL if p not in judged else
                            POOL_UNJUDGED if judged[p] < 0 else judged[p] for p in probes]


def test_the_store_holds_numbers_only():
    qrels = encode_qrels(frame([("q1", "a-long-document-identifier", 2), ("q1", "b", 0),
                                ("q2", "a-long-document-identifier", -1)]))
    for name, value in vars(qrels).items():
        assert not isinstance(value, pl.Series), name
        if isinstance(value, np.ndarray) and name != "query_ids":
            assert value.dtype.kind in "iuf", name
    # 8-byte key + 8-byte fingerprint + 1-byte code per judgment, whatever the ids' length
    assert qrels.keys.nbytes + qrels.fingerprints.nbytes + qrels.codes.nbytes == 3 * 17


def test_a_key_collision_is_told_apart_by_the_fingerprint(monkeypatch):
    # Every doc id gets the same key: judgments of one query share it (lookups join on
    # key and fingerprint) and every run doc collides with every judgment.
    monkeypatch.setattr(pack_module, "doc_hash", lambda s: np.zeros(len(s), np.uint64))
    qrels = encode_qrels(frame([("1", "a", 1), ("1", "b", 2), ("2", "z", 0)]))
    assert not qrels.unique_keys
    ev = Evaluator({"1": {"a": 1, "b": 2}, "2": {"z": 0}}, ["num_rel_ret", "ndcg"])
    res = ev.evaluate({"1": {"c": 3.0, "b": 2.0, "a": 1.0}, "2": {"y": 1.0}}).to_dict()
    assert res["1"]["num_rel_ret"] == 2 and res["2"]["num_rel_ret"] == 0


def test_judgments_that_cannot_be_told_apart_are_an_error_not_a_wrong_number(monkeypatch):
    for name in ("doc_hash", "doc_fingerprint"):
        monkeypatch.setattr(pack_module, name, lambda s: np.zeros(len(s), np.uint64))
    with pytest.raises(DuplicateEntryError, match=r"judged twice .*query_id '1'"):
        encode_qrels(frame([("0", "a", 1), ("1", "a", 1), ("1", "b", 2)]))
    with tempfile.TemporaryDirectory() as tmp:  # the file road leaves it to the full reader
        path = os.path.join(tmp, "qrels.txt")
        with open(path, "w") as f:
            f.write("1 0 a 1\n1 0 b 2\n")
        assert encode_qrels_file(path) is None


@pytest.mark.parametrize("shift", [48, 0])  # the fingerprint's top and low 16 bits
def test_the_fingerprint_is_independent_of_the_key_hash(shift):
    # Were the two hashes related (e.g. one seed XORed into the same hash), doc ids that
    # agree on the key's bits would agree on the fingerprint far more often than chance.
    docs = pl.Series([f"clueweb12-{i:07d}" for i in range(1 << 18)])
    key_bits = pack_module.doc_hash(docs) >> np.uint64(48)
    fingerprint_bits = (pack_module.doc_fingerprint(docs) >> np.uint64(shift)) \
        & np.uint64(0xFFFF)
    order = np.argsort(key_bits, kind="stable")
    same_key = key_bits[order][1:] == key_bits[order][:-1]
    same_both = same_key & (fingerprint_bits[order][1:] == fingerprint_bits[order][:-1])
    expected = same_key.sum() / 65536  # about 3.6 for 2**18 ids
    assert same_key.sum() > 100_000 and same_both.sum() < 4 * expected + 10


@st.composite
def colliding_chunks(draw):
    """Judgment chunks made from drawn hashes, so that keys collide on purpose: within a
    query, two hashes that differ only in their lowest bits (dropped by the key: the
    same key), the same hash and fingerprint twice (the same doc judged twice), rows of
    a query in several blocks and chunks. Returns (rows, cuts): rows of (query id,
    hash, fingerprint, label)."""
    n = draw(st.integers(1, 24))
    queries = draw(st.lists(st.sampled_from(["1", "2", "10", "q", "é"]), min_size=n,
                            max_size=n))
    high = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    low = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    fps = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    labels = draw(st.lists(st.integers(-2, 3), min_size=n, max_size=n))
    rows = [(q, (h << 40) | lo, fp, v) for q, h, lo, fp, v in zip(queries, high, low, fps, labels)]
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
    return rows, cuts


def _chunk(rows) -> JudgmentChunk:
    ids = pl.Series([q for q, *_ in rows], dtype=pl.String)
    blocks = pack_module.run_blocks(pl.DataFrame({"query_id": ids}))
    return JudgmentChunk(blocks.query_ids, blocks.lengths,
                         np.array([v for *_, v in rows], dtype=np.int64),
                         np.array([h for _, h, _, _ in rows], dtype=np.uint64),
                         np.array([f for _, _, f, _ in rows], dtype=np.uint64), False)


@pytest.mark.parametrize("shift", [24, 1])  # 1: keys keep fewer hash bits than checked
@settings(max_examples=60, deadline=None)
@given(case=colliding_chunks())
# a chunk of negative labels only beside one without 0: no level 0
@example(case=([("1", 0, 0, -1), ("2", 1 << 40, 0, 2)], [1]))
def test_repeated_keys_are_found_inside_and_across_blocks(case, shift):
    # Chunks check their own blocks for repeated keys (JudgmentChunk.may_repeat) and
    # encoding checks only the queries of several blocks: together, what checking every
    # query finds (a brute-force reading of the same rows).
    rows, cuts = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pack_module, "_REPEAT_SHIFT", shift)
        bounds = [0, *cuts, len(rows)]
        chunks = [_chunk(rows[a:b]) for a, b in zip(bounds, bounds[1:]) if b > a]
        ids = sorted({q for q, *_ in rows}, key=lambda q: q.encode())
        bits = pack_module._query_bits(len(ids))
        seen_key, seen_both, repeat, twice = {}, set(), False, None
        for q, h, f, _ in rows:
            key = (q, h >> bits)
            repeat |= key in seen_key
            if (key, f) in seen_both and (twice is None or ids.index(q) < ids.index(twice)):
                twice = q
            seen_key[key] = True
            seen_both.add((key, f))
        if twice is not None:
            with pytest.raises(DuplicateEntryError, match=f"query_id '{twice}'"):
                encode_judgments(chunks)
            return
        got = encode_judgments(chunks)
    assert got.unique_keys == (not repeat)
    hist = {q: {} for q in ids}
    for q, _, _, v in rows:
        if v >= 0:
            hist[q][v] = hist[q].get(v, 0) + 1
    levels = sorted({v for *_, v in rows if v >= 0}) or [0]
    assert got.rel_levels.tolist() == levels
    assert got.rel_hist.tolist() == [[hist[q].get(v, 0) for v in levels] for q in ids]
    assert got.positive_total == sum(v > 0 for *_, v in rows)


def test_keys_that_keep_fewer_hash_bits_than_the_chunks_compared_are_checked(monkeypatch):
    # Chunks compare hash >> _REPEAT_SHIFT; with 3 queries keys drop 2 bits of the hash.
    # Hashes 0 and 2 differ in the chunk's comparison (shift 1) but not in the keys: the
    # query of one block must still be checked.
    monkeypatch.setattr(pack_module, "_REPEAT_SHIFT", 1)
    chunks = [_chunk([("1", 0, 0, 1), ("1", 2, 1, 1)]), _chunk([("2", 4, 0, 1)]),
              _chunk([("3", 8, 0, 1)])]
    assert not any(c.may_repeat for c in chunks)
    assert not encode_judgments(chunks).unique_keys


def _held_bytes(chunk: JudgmentChunk) -> int:
    arrays = [a for v in vars(chunk).values() for a in (v if isinstance(v, tuple) else (v,))
              if isinstance(a, np.ndarray)]
    return sum(a.nbytes for a in arrays)


def test_a_chunk_holds_memory_in_proportion_to_its_lines_whatever_its_levels():
    # Two queries interleaved line by line (every line a block of its own) with a label
    # of its own each: a block x level table would hold lines**2 cells (32 MB here, and
    # every chunk's is kept until the file is read); the chunk holds its lines' worth.
    n = 2000
    rows = [(str(i % 2), f"d{i}", i) for i in range(n)]
    chunk = JudgmentChunk.of(frame(rows))
    assert _held_bytes(chunk) < 100 * n
    got, want = encode_judgments([chunk, JudgmentChunk.of(frame(rows[:0]))]), encode_qrels(frame(rows))
    assert got.rel_levels.tolist() == want.rel_levels.tolist() == list(range(n))
    assert got.rel_hist.tolist() == [[int(v % 2 == q) for v in range(n)] for q in (0, 1)]
