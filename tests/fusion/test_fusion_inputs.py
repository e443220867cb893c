"""What fusion reads: runs that are not UTF-8 (read as eval reads them, Latin-1), and the
pairs of (query, document) found by a hash of the doc ids, confirmed by a second one
(the strings decide where the first collides)."""

from __future__ import annotations

import contextlib
import gzip
import io

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics import Run, evaluate
from irmetrics.cli import main
from irmetrics.fusion import fuse
from irmetrics.engine.pack import doc_fingerprint, doc_hash
from irmetrics.fusion import lists as lists_module
from irmetrics.fusion.lists import fusion_lists, pair_codes

LATIN1_RUN = b"q1 Q0 caf\xe9 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\n"
UTF8_RUN = "q1 Q0 café 1 3.0 b\nq1 Q0 d3 2 2.0 b\nq1 Q0 d4 3 1.0 b\n".encode()
OTHER_LATIN1_RUN = b"q1 Q0 d3 1 9.0 c\nq1 Q0 caf\xe9 2 8.0 c\n"


def cli(*argv):
    """Status, standard output as bytes, standard error."""
    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8")
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(err):
        status = main(list(argv))
    stdout.flush()
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, data in [("latin1.run", LATIN1_RUN), ("utf8.run", UTF8_RUN),
                       ("other.run", OTHER_LATIN1_RUN)]:
        paths[name] = tmp_path / name
        paths[name].write_bytes(data)
    return paths


def test_a_latin1_run_is_read_as_eval_reads_it(files):
    # Before: "invalid UTF-8 (byte 0xe9)". evaluate() reads the file as Latin-1 bytes.
    fused = fuse([files["latin1.run"], files["other.run"]], method="rrf", k=0)
    got = {d.encode("latin-1"): s for d, s in fused.df.select("doc_id", "score").rows()}
    assert got == pytest.approx({b"caf\xe9": 1 / 1 + 1 / 2, b"d3": 1 / 3 + 1 / 1,
                                 b"d2": 1 / 2})
    assert evaluate({"q1": {"café": 1}}, files["latin1.run"], ["num_ret"]) is not None


def test_latin1_and_utf8_runs_compare_ids_as_bytes(files):
    # "café" in UTF-8 is the bytes caf\xc3\xa9, another document than caf\xe9.
    fused = fuse([files["latin1.run"], files["utf8.run"]], method="rrf", k=0)
    docs = {d.encode("latin-1") for d in fused.df["doc_id"]}
    assert docs == {b"caf\xe9", "café".encode(), b"d2", b"d3", b"d4"}
    # All UTF-8: ids are read as UTF-8, as before.
    plain = fuse([files["utf8.run"], files["utf8.run"]], method="rrf")
    assert "café" in plain.df["doc_id"].to_list()


def test_cli_fuses_latin1_runs_and_writes_their_bytes(files, tmp_path):
    out = tmp_path / "fused.run"
    status, stdout, err = cli("fuse", "-m", "rrf", "-p", "k=0", "-o", str(out),
                              str(files["latin1.run"]), str(files["utf8.run"]))
    assert (status, err) == (0, "")
    data = out.read_bytes()
    assert data.splitlines()[0] == b"q1 Q0 caf\xe9 1 1.0 rrf"  # caf\xe9: 1/1; d3: 1/3 + 1/2
    assert "café".encode() + b" " in data
    # standard output: the same bytes; .gz: compressed
    status, stdout, _ = cli("fuse", "-m", "rrf", "-p", "k=0", str(files["latin1.run"]),
                            str(files["utf8.run"]))
    assert status == 0 and stdout == data
    status, _, _ = cli("fuse", "-m", "rrf", "-p", "k=0", "-o", str(tmp_path / "f.run.gz"),
                       str(files["latin1.run"]), str(files["utf8.run"]))
    assert status == 0 and gzip.decompress((tmp_path / "f.run.gz").read_bytes()) == data
    # eval reads the fused run back: the Latin-1 qrels judge caf\xe9
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"q1 0 caf\xe9 1\n")
    results = evaluate(str(qrels), str(out), ["num_rel_ret"])
    assert results.aggregate()["num_rel_ret"] == 1


def test_trained_methods_read_latin1_qrels_alike(files, tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"q1 0 caf\xe9 1\nq1 0 d2 0\n")
    fused = fuse([files["latin1.run"], files["other.run"]], method="posfuse", qrels=qrels)
    # rank 1 of latin1.run and rank 2 of other.run hold the relevant caf\xe9
    top = fused.df.row(0, named=True)
    assert top["doc_id"].encode("latin-1") == b"caf\xe9" and top["score"] == 2.0


# ---- pairs ------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", "c", "é", "ab", ""])),
                max_size=40), st.sampled_from([0, 1, 2, None]))
def test_pair_codes_are_the_distinct_query_doc_pairs(entries, hash_bits):
    # Few hash bits make documents collide: the strings decide, never the hash.
    query = np.array([q for q, _ in entries], dtype=np.int64)
    doc = pl.Series([d for _, d in entries], dtype=pl.String)
    pair, first, pair_query = pair_codes(query, doc, 4, hash_bits=hash_bits)
    keys = list(zip(query.tolist(), doc.to_list()))
    assert len(first) == len(set(keys))
    for i, key in enumerate(keys):
        assert keys[first[pair[i]]] == key
    assert pair_query.tolist() == sorted(pair_query.tolist())  # grouped by query
    assert pair_query.tolist() == [keys[f][0] for f in first]
    # doc ids read through rows (fusion keeps them in the runs' row order): the same pairs
    rows = np.arange(len(entries))[::-1].copy()
    by_rows = pair_codes(query, doc.gather(rows), 4, rows=rows, hash_bits=hash_bits)
    assert by_rows[0].tolist() == pair.tolist()


some_docs = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(
    ["a", "b", "c", "é", "ab", "", "ba", "bb"])), max_size=40)


def assert_distinct_pairs(query, doc, codes):
    pair, first, pair_query = codes
    keys = list(zip(query.tolist(), doc.to_list()))
    assert len(first) == len(set(keys))
    assert all(keys[first[pair[i]]] == key for i, key in enumerate(keys))
    assert pair_query.tolist() == [keys[f][0] for f in first]


@settings(max_examples=60, deadline=None)
@given(some_docs, st.sampled_from(["zero", "first character"]))
def test_a_first_hash_colliding_for_different_docs_gives_the_right_pairs(entries, planted):
    # The first hash planted to collide (every doc id, or those of one first character):
    # the fingerprints differ, so the strings decide. Planted bug: trusting equal first
    # hashes (lists._first_hash_collides always False) merges "a" and "b" here.
    query = np.array([q for q, _ in entries], dtype=np.int64)
    doc = pl.Series([d for _, d in entries], dtype=pl.String)
    hashes = np.zeros(len(doc), np.uint64) if planted == "zero" \
        else doc_hash(doc.str.slice(0, 1))
    assert_distinct_pairs(query, doc, pair_codes(query, doc, 4, hashes=hashes))


@settings(max_examples=60, deadline=None)
@given(some_docs)
def test_equal_doc_ids_agree_on_both_hashes_and_no_string_is_sorted(entries):
    # Real hashes: every entry the sort puts in one pair has its pair's fingerprint, so
    # the strings are never read; the pairs are the distinct (query, doc id), as many per
    # query as the strings give (no hash bits).
    query = np.array([q for q, _ in entries], dtype=np.int64)
    doc = pl.Series([d for _, d in entries], dtype=pl.String)
    checked = []
    real = lists_module._first_hash_collides
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lists_module, "_first_hash_collides",
                      lambda *a: checked.append(real(*a)) or checked[-1])
        codes = pair_codes(query, doc, 4)
    assert True not in checked
    assert_distinct_pairs(query, doc, codes)
    by_strings = pair_codes(query, doc, 4, hash_bits=0)  # numbered in another order
    assert codes[2].tolist() == by_strings[2].tolist()


@settings(max_examples=40, deadline=None)
@given(some_docs, st.sampled_from([1, None]))
def test_64_bit_keys_give_the_pairs_of_32_bit_ones(entries, hash_bits):
    # Queries past about a million entries sort 64-bit keys: forced here on small ones.
    query = np.array([q for q, _ in entries], dtype=np.int64)
    doc = pl.Series([d for _, d in entries], dtype=pl.String)
    narrow = pair_codes(query, doc, 4, hash_bits=hash_bits)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lists_module, "NARROW_BITS", 10)
        wide = pair_codes(query, doc, 4, hash_bits=hash_bits)
    assert_distinct_pairs(query, doc, wide)
    assert wide[2].tolist() == narrow[2].tolist()


def test_both_hashes_agreeing_is_taken_for_one_document():
    # What the 2^-104 argument accepts: equal first hash and equal fingerprint are one
    # document, read without its string (here planted: two ids share both).
    query, doc = np.zeros(2, dtype=np.int64), pl.Series(["a", "b"])
    same = np.zeros(2, np.uint64)
    assert len(pair_codes(query, doc, 1, hashes=same, fingerprints=same)[1]) == 1
    assert len(pair_codes(query, doc, 1, hashes=same)[1]) == 2
    assert (doc_fingerprint(doc) != doc_hash(doc)).all()  # two seeds, two hashes


def test_colliding_hashes_give_the_same_fusion(monkeypatch):
    import irmetrics.fusion.lists as lists_module

    runs = [Run.from_dict({"q": {f"d{i}": float(i) for i in range(0, 30, r + 1)},
                           "p": {f"d{i}": float(-i) for i in range(r, 9)}}) for r in range(3)]
    expected = fuse(runs, method="sum", norm="rank")
    real = lists_module.pair_codes
    monkeypatch.setattr(lists_module, "pair_codes",
                        lambda *a, **k: real(*a, **k, hash_bits=1))
    assert fusion_lists(runs).n_pairs == 30 + 9
    assert fuse(runs, method="sum", norm="rank").df.equals(expected.df)
