"""The fast road of fusion against plain Python: segment_order (each segment sorted as a
row of a padded table, packed integers, blocks, threads) against a sort per segment, and
the whole fused run (pairs, values, order, ranks) against a dict-by-dict reference on
runs with tied scores, queries missing from some runs, doc ids shared across queries,
runs of equal depth (the rectangular table) and colliding hashes."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics import Run
from irmetrics.exceptions import InputFormatError
from irmetrics.fusion import fuse
from irmetrics.fusion import lists as lists_module
from irmetrics.fusion.lists import segment_order


def reference_order(values: np.ndarray, offsets: np.ndarray) -> list[list]:
    """Each segment's values, ascending, by Python's sort."""
    return [sorted(values[a:b].tolist()) for a, b in zip(offsets[:-1], offsets[1:])]


def check_segment_order(values: np.ndarray, offsets: np.ndarray, fill, threads=1):
    order = segment_order(values, offsets, fill, threads=threads)
    assert sorted(order.tolist()) == list(range(len(values)))  # a permutation
    for a, b in zip(offsets[:-1], offsets[1:]):  # segments keep their places
        assert all(a <= i < b for i in order[a:b].tolist())
    assert [values[order[a:b]].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == \
        reference_order(values, offsets)
    return order


segment_lengths = st.lists(st.integers(0, 40), min_size=1, max_size=12)


@settings(max_examples=80, deadline=None)
@given(segment_lengths, st.sampled_from(["small", "large", "negative", "float", "ties",
                                         "near"]),
       st.data())
def test_segment_order_sorts_each_segment(lengths, kind, data):
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = int(offsets[-1])
    if kind == "small":      # packed with their column
        values = np.array(data.draw(st.lists(st.integers(0, 2**40), min_size=n, max_size=n)),
                          dtype=np.int64)
    elif kind == "large":    # too large to pack: argsorted
        values = np.array(data.draw(st.lists(st.integers(2**60, 2**62), min_size=n,
                                             max_size=n)), dtype=np.int64)
    elif kind == "negative":
        values = np.array(data.draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)),
                          dtype=np.int64)
    elif kind == "float":
        values = np.array(data.draw(st.lists(st.floats(-1e9, 1e9), min_size=n, max_size=n)),
                          dtype=np.float64) + 0.0
    elif kind == "ties":
        values = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.5]), min_size=n,
                                             max_size=n)), dtype=np.float64)
    else:  # floats a few hundred ulps apart: many share a truncated key, not a value
        base = np.array(data.draw(st.lists(st.sampled_from([-1.5, 0.0, 1 / 3, 7e10]),
                                           min_size=n, max_size=n)), dtype=np.float64)
        ulps = np.array(data.draw(st.lists(st.integers(-300, 300), min_size=n,
                                           max_size=n)), dtype=np.float64)
        values = base + ulps * np.spacing(base)
    fill = np.inf if values.dtype.kind == "f" else np.iinfo(np.int64).max
    order = check_segment_order(values, offsets, fill)
    if kind in ("small", "large"):
        # distinct values almost surely: the order itself does not depend on threads
        assert segment_order(values, offsets, fill, threads=2).tolist() == order.tolist()


@pytest.mark.parametrize("case", ["close", "wide", "huge", "inf", "equal"])
def test_segment_order_narrow_keys(monkeypatch, case):
    """Floats sorted on 32-bit keys scaled to each segment's range (the fused scores'
    road) are in exact order: values closer than a step of the scale share a key and
    are put in order after; a range that is not a finite float (or an infinite value)
    takes the 64-bit keys; a segment of equal values has one key."""
    rng = np.random.default_rng(7)
    lengths = [0, 300, 1, 2, 700, 0, 45]
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = int(offsets[-1])
    values = {
        # rrf-like sums: many exact ties, many values a few ulps apart
        "close": np.round(rng.random(n) * 8) / 61 + rng.integers(0, 4, n) * 2e-16,
        # one large value stretches the scale: the rest share a handful of keys
        "wide": np.where(rng.random(n) < 0.01, 1e300, rng.random(n)),
        "huge": np.where(rng.random(n) < 0.5, -1.7e308, 1.7e308) * rng.random(n),
        "inf": np.where(rng.random(n) < 0.1, np.inf, rng.random(n)),
        "equal": np.full(n, 0.25),
    }[case]
    narrow = []
    real = lists_module._narrow_keys
    monkeypatch.setattr(lists_module, "_narrow_keys",
                        lambda *args: narrow.append(real(*args)) or narrow[-1])
    order = check_segment_order(values, offsets, np.inf)
    assert (narrow[0] is None) == (case in ("huge", "inf"))
    # equal values keep their places' order, as the 64-bit keys keep them
    expected = np.lexsort((np.arange(n), values, np.repeat(np.arange(len(lengths)), lengths)))
    assert order.tolist() == expected.tolist()
    monkeypatch.setattr(lists_module, "NARROW_VALUE_BITS", 64)  # the 64-bit road
    assert segment_order(values, offsets, np.inf).tolist() == order.tolist()


@settings(max_examples=150, deadline=None)
@given(segment_lengths, st.integers(1, 12), st.integers(50, 63), st.data())
def test_order_near_ties_orders_every_run_of_equal_keys(lengths, distinct, shift, data):
    """Positions sorted on coarse keys (the top bits of the floats' keys; runs of equal
    keys that hold several values, across segment ends too) come out in the stable
    order of the values within each segment, as a full sort gives it."""
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = int(offsets[-1])
    values = np.array(data.draw(st.lists(st.integers(0, distinct), min_size=n, max_size=n)),
                      dtype=np.float64) / 7 - 0.5
    segment = np.repeat(np.arange(len(lengths)), lengths)
    keys = lists_module.float_keys(values, 63) >> shift
    order = np.lexsort((np.arange(n), keys, segment))
    sorted_values = lists_module._order_near_ties(values, order, keys[order], offsets)
    assert order.tolist() == np.lexsort((np.arange(n), values, segment)).tolist()
    assert sorted_values.tolist() == values[order].tolist()


@pytest.mark.parametrize("cells", [1, 7, 64])
def test_segment_order_blocks_classes_and_rectangles(monkeypatch, cells):
    rng = np.random.default_rng(cells)
    monkeypatch.setattr(lists_module, "BLOCK_CELLS", cells)
    # many empty segments among long ones: one table would more than double the
    # entries, so each width class gets its own (segments not consecutive)
    ragged = [0, 0, 0, 0, 0, 0, 0, 0, 33, 1, 0, 0, 0, 0, 0, 5, 70, 0, 0, 0, 0, 0, 2, 3]
    # equal lengths: the rectangular road (a reshaped view of the entries)
    for lengths in (ragged, [9] * 7, [9, 9, 8, 9, 9]):
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        n = int(offsets[-1])
        for values, fill in ((rng.integers(0, 50, n), np.iinfo(np.int64).max),
                             (rng.integers(0, 2**62, n), np.iinfo(np.int64).max),
                             (rng.random(n), np.inf)):
            check_segment_order(values, offsets, fill)
            check_segment_order(values, offsets, fill, threads=3)


# ---- the whole fused run against a reference -------------------------------------------------

def ranked(docs: dict) -> list:
    """trec_eval's order of one query of one run: score descending, doc id descending."""
    return sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True)


def reference_fuse(runs: list[dict], method: str, k: float = 60.0) -> list[tuple]:
    """(query_id, doc_id, rank, score) of the fused run, dict by dict, with the
    arithmetic in the order irmetrics does it (run by run from 0.0)."""
    out = []
    for q in sorted(set().union(*runs), key=str.encode):
        lists = [ranked(run.get(q, {})) for run in runs]
        candidates = sorted(set().union(*lists), key=str.encode)
        scores = {}
        for d in candidates:
            total = 0.0
            count = 0.0
            for run, docs in zip(runs, lists):
                if method == "bordafuse":
                    total += float(len(candidates) - docs.index(d)) if d in docs \
                        else (len(candidates) - len(docs) + 1) / 2.0
                    continue
                if d not in docs:
                    total += 0.0
                    continue
                count += 1.0
                if method == "rrf":
                    total += 1.0 / (k + float(docs.index(d)) + 1)
                else:  # min-max
                    values = run[q]
                    top, bottom = values[docs[0]], values[docs[-1]]
                    if top - bottom <= 0:
                        raise ZeroDivisionError(q)
                    total += (values[d] - bottom) / (top - bottom)
            scores[d] = total * count if method == "mnz" else total
        fused = sorted(candidates, key=lambda d: (scores[d], d.encode()), reverse=True)
        out += [(q, d, i + 1, scores[d]) for i, d in enumerate(fused)]
    return out


ids = st.sampled_from(["a", "b", "c", "d1", "d10", "d2", "é", "ab", "B"])
queries = st.sampled_from(["q1", "q2", "q10", "ü"])
a_run = st.dictionaries(queries, st.dictionaries(ids, st.integers(0, 3).map(float),
                                                 min_size=1), max_size=4)


@settings(max_examples=120, deadline=None)
@given(st.lists(a_run, min_size=2, max_size=4),
       st.sampled_from(["rrf", "sum", "mnz", "bordafuse"]))
def test_fused_run_equals_the_reference(runs, method):
    # Tied scores everywhere (integers 0..3), queries missing from some runs, ids shared
    # across queries: pairs, values, the fused order and ranks, exactly.
    norm = "min-max" if method in ("sum", "mnz") else None
    try:
        expected = reference_fuse(runs, method)
    except ZeroDivisionError:
        with pytest.raises(InputFormatError, match="divides by zero"):
            fuse(runs, method=method, norm=norm)
        return
    got = fuse(runs, method=method, norm=norm)
    assert got.df.select("query_id", "doc_id", "rank", "score").rows() == expected


def test_runs_of_equal_depth_take_the_rectangular_road():
    # every query of every run 30 deep: the pairs' table is the entries themselves
    rng = np.random.default_rng(7)
    runs = [{f"q{q}": {f"d{d}": float(rng.integers(0, 5)) for d in rng.permutation(60)[:30]}
             for q in range(12)} for _ in range(3)]
    for method in ("rrf", "mnz", "bordafuse"):
        norm = "min-max" if method == "mnz" else None
        got = fuse(runs, method=method, norm=norm)
        assert got.df.select("query_id", "doc_id", "rank", "score").rows() == \
            reference_fuse(runs, method)


def test_every_hash_colliding_gives_the_same_fused_run(monkeypatch):
    # A first hash that maps every doc id to one number: the fingerprints differ, so the
    # strings decide every pair.
    rng = np.random.default_rng(3)
    runs = [Run.from_dict({f"q{q}": {f"d{d}": float(rng.random()) for d in
                                     rng.permutation(40)[:25]} for q in range(5)})
            for _ in range(3)]
    expected = {m: fuse(runs, method=m).df for m in ("rrf", "sum")}
    monkeypatch.setattr(lists_module, "doc_hash", lambda ids: np.zeros(len(ids), np.uint64))
    assert lists_module.doc_hash(pl.Series(["x", "y"])).tolist() == [0, 0]
    for method, frame in expected.items():
        assert fuse(runs, method=method).df.equals(frame)


def test_a_query_with_one_document_under_min_max_is_refused_by_name():
    runs = {"a": {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 1.0, "d2": 0.5}},
            "b": {"q1": {"d3": 1.0, "d1": 0.0}, "q2": {"only": 3.0}}}
    with pytest.raises(InputFormatError, match=r"run 'b'.*min-max.*divides by zero"
                                               r".*query_id 'q2'"):
        fuse(runs, method="sum", norm="min-max")
    # rank-based methods read no scores: one document is a list like any other
    assert fuse(runs, method="rrf").to_dict()["q2"]["only"] == pytest.approx(1 / 61)


@settings(max_examples=40, deadline=None)
@given(st.lists(a_run, min_size=2, max_size=3), st.integers(1, 12),
       st.sampled_from(["rrf", "sum", "condorcet", "med", "bordafuse"]))
def test_blocks_of_queries_give_the_same_fused_run(runs, entries, method):
    # fuse() fuses queries in blocks of lists.BLOCK_ENTRIES entries: tiny blocks here
    norm = "rank" if method in ("sum", "med") else None
    whole = fuse(runs, method=method, norm=norm)
    original = lists_module.BLOCK_ENTRIES
    try:
        lists_module.BLOCK_ENTRIES = entries
        assert fuse(runs, method=method, norm=norm).df.equals(whole.df)
    finally:
        lists_module.BLOCK_ENTRIES = original


def test_blocks_name_the_first_query_a_normalisation_refuses(monkeypatch):
    runs = {"a": {"q1": {"x": 1.0, "y": 0.0}, "q2": {"x": 1.0}, "q3": {"x": 2.0, "y": 1.0}},
            "b": {"q1": {"x": 1.0, "y": 0.0}, "q3": {"x": 1.0}}}
    monkeypatch.setattr(lists_module, "BLOCK_ENTRIES", 2)
    with pytest.raises(InputFormatError, match=r"run 'a'.*query_id 'q2'"):
        fuse(runs, method="sum", norm="min-max")


@pytest.mark.parametrize("entries", [None, 1, 3])
def test_a_refused_normalisation_names_the_same_run_and_query_in_any_blocks(
        monkeypatch, entries):
    # Defect: whole, fuse() named the first run that refuses (its first query); in blocks
    # of queries (over BLOCK_ENTRIES entries), the first block's: the same input named
    # run 'c', query 'q0' or run 'b', query 'q3' depending on its size. Now the first
    # query, then the first run, either way.
    runs = {"a": {"q0": {"x": 1.0, "y": 0.5}, "q3": {"x": 2.0, "y": 1.0}},
            "b": {"q0": {"x": 1.0, "y": 0.0}, "q3": {"x": 1.0}},
            "c": {"q0": {"x": 1.0}, "q3": {"x": 2.0, "y": 1.0}}}
    if entries is not None:
        monkeypatch.setattr(lists_module, "BLOCK_ENTRIES", entries)
    with pytest.raises(InputFormatError, match=r"run 'c'.*min-max.*query_id 'q0'"):
        fuse(runs, method="sum", norm="min-max")


# ---- runs ranked once, fused in spans of queries on threads ---------------------------------

lists_of_queries = st.lists(st.lists(st.tuples(st.integers(0, 4), st.lists(
    st.sampled_from(["a", "b", "c", "é", "ab", ""]), unique=True, max_size=5)),
    max_size=5), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(lists_of_queries, st.sampled_from([None, 1]))
def test_pairs_from_list_lengths_equal_pairs_from_a_sort(lists, hash_bits):
    # R lists one after another, each in query order: grouped by arithmetic on their
    # lengths, not by a stable sort on the query codes; the same pairs, the same codes.
    n_queries = 5
    query, docs, lengths = [], [], np.zeros((len(lists), n_queries), dtype=np.int64)
    for r, entries in enumerate(lists):
        per_query = {}
        for q, ds in entries:
            per_query.setdefault(q, ds)  # one list per query
        for q in sorted(per_query):
            query += [q] * len(per_query[q])
            docs += per_query[q]
            lengths[r, q] = len(per_query[q])
    query = np.array(query, dtype=np.int64)
    doc = pl.Series(docs, dtype=pl.String)
    plain = lists_module.pair_codes(query, doc, n_queries, hash_bits=hash_bits)
    fast = lists_module.pair_codes(query, doc, n_queries, lengths=lengths,
                                   hash_bits=hash_bits)
    for a, b in zip(plain, fast):
        assert a.tolist() == b.tolist()
    keys = list(zip(query.tolist(), docs))
    pair, first, _ = fast
    assert len(first) == len(set(keys))
    assert all(keys[first[pair[i]]] == key for i, key in enumerate(keys))


def restricted(run: dict, queries) -> dict:
    return {q: docs for q, docs in run.items() if q in queries}


@settings(max_examples=40, deadline=None)
@given(st.lists(a_run, min_size=2, max_size=3), st.integers(1, 12))
def test_spans_cut_the_queries_and_their_lists_are_the_runs_restricted(runs, entries):
    tables = [Run.from_dict(run, name=f"r{i}") for i, run in enumerate(runs)]
    ranked = lists_module.rank_runs(tables)
    spans = ranked.spans(entries)
    n_queries = len(ranked.query_ids)
    assert [lo for lo, _ in spans] == [0] + [hi for _, hi in spans[:-1]]
    assert spans[-1][1] == n_queries and all(lo < hi for lo, hi in spans if n_queries)
    sizes = ranked.query_sizes()
    for lo, hi in spans:  # at most the limit, and one query more
        assert sizes[lo:hi - 1].sum() <= entries
    for lo, hi in spans:
        part = ranked.lists(lo, hi, threads=2)
        queries = set(ranked.query_ids[lo:hi].tolist())
        alone = lists_module.fusion_lists(
            [Run.from_dict(restricted(run, queries), name=f"r{i}")
             for i, run in enumerate(runs)])
        assert part.query_ids.tolist() == alone.query_ids.tolist()
        assert part.n_pairs == alone.n_pairs
        assert part.rank.tolist() == alone.rank.tolist()
        assert part.score.tolist() == alone.score.tolist()
        assert part.doc.to_list() == alone.doc.to_list()
        assert part.pair_doc.gather(part.pair).to_list() == part.doc.to_list()
        assert part.pair_query.tolist() == alone.pair_query.tolist()


@settings(max_examples=30, deadline=None)
@given(st.lists(a_run, min_size=2, max_size=3), st.integers(1, 8), st.data(),
       st.sampled_from(["rrf", "sum", "mnz", "bordafuse"]))
def test_runs_out_of_trec_eval_order_fuse_as_the_reference(runs, entries, data, method):
    # Rows shuffled (queries interleaved, each query's documents in any order), fused in
    # spans of a few entries on 1 and 3 threads: the reference's run, exactly.
    norm = "min-max" if method in ("sum", "mnz") else None
    tables = []
    for i, run in enumerate(runs):
        records = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
        tables.append(Run.from_records(data.draw(st.permutations(records))))
    try:
        expected = reference_fuse(runs, method)
    except ZeroDivisionError:
        expected = None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lists_module, "BLOCK_ENTRIES", entries)
        for threads in ("1", "3"):
            patch.setenv("IRMETRICS_THREADS", threads)
            if expected is None:
                with pytest.raises(InputFormatError, match="divides by zero"):
                    fuse(tables, method=method, norm=norm)
                continue
            got = fuse(tables, method=method, norm=norm)
            assert got.df.select("query_id", "doc_id", "rank", "score").rows() == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(a_run, min_size=2, max_size=3), st.integers(1, 12), st.data())
def test_runs_in_blocks_rank_span_by_span_as_rank_run_ranks_them_whole(runs, entries, data):
    # Each query's rows together, scores descending, ties (integer scores) in any order,
    # queries in any order: ranked span by span (RankedRuns.starts), trec_eval's tie
    # rule applied per span; the same tables ranked whole by rank_run: the same lists.
    tables = []
    for i, run in enumerate(runs):
        records = []
        for q in data.draw(st.permutations(sorted(run))):
            by_score = sorted(data.draw(st.permutations(sorted(run[q].items()))),
                              key=lambda item: -item[1])  # stable: ties stay shuffled
            records += [(q, d, score) for d, score in by_score]
        tables.append(Run.from_records(records, name=f"r{i}"))
    spans = lists_module.rank_runs(tables)
    assert all(starts is not None for starts in spans.starts)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lists_module, "_ranked_blocks", lambda *a: None)
        whole = lists_module.rank_runs(tables)
    assert all(starts is None for starts in whole.starts)
    for lo, hi in spans.spans(entries):
        got, expected = spans.lists(lo, hi), whole.lists(lo, hi)
        assert got.rank.tolist() == expected.rank.tolist()
        assert got.score.tolist() == expected.score.tolist()
        assert got.doc.to_list() == expected.doc.to_list()
        assert got.pair_doc.gather(got.pair).to_list() == got.doc.to_list()


def test_some_hashes_colliding_give_the_same_fused_run(monkeypatch):
    # A first hash of the first character only: documents of a query collide by dozens,
    # not all; the strings decide, in spans on threads as in one.
    rng = np.random.default_rng(5)
    runs = [Run.from_dict({f"q{q}": {f"{c}{d}": float(rng.random()) for c in "xyz"
                                     for d in rng.permutation(30)[:12]} for q in range(9)},
                          name=f"r{i}") for i in range(3)]
    expected = {m: fuse(runs, method=m).df for m in ("rrf", "mnz")}
    real = lists_module.doc_hash
    monkeypatch.setattr(lists_module, "doc_hash", lambda ids: real(ids.str.slice(0, 1)))
    monkeypatch.setattr(lists_module, "BLOCK_ENTRIES", 100)
    monkeypatch.setenv("IRMETRICS_THREADS", "2")
    for method, frame in expected.items():
        assert fuse(runs, method=method).df.equals(frame)


def test_a_refused_normalisation_on_threads_names_the_first_query_then_run(monkeypatch):
    # Spans of one query each, fused on 4 threads: whichever span fails first in time,
    # the error names the first query that has a one-document list, then its first run.
    runs = {name: {f"q{q}": ({"x": 1.0} if (q, name) in bad else {"x": 1.0, "y": 0.5})
                   for q in range(8)} for name in "abc"
            for bad in [{(6, "c"), (3, "c"), (3, "b"), (7, "a")}]}
    monkeypatch.setattr(lists_module, "BLOCK_ENTRIES", 1)
    monkeypatch.setenv("IRMETRICS_THREADS", "4")
    with pytest.raises(InputFormatError, match=r"run 'b'.*min-max.*query_id 'q3'"):
        fuse(runs, method="sum", norm="min-max")


@pytest.mark.parametrize("entries", [None, 1, 3])
@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 1.0 / 5e-324 overflows
def test_a_score_not_finite_before_a_refused_normalisation_is_named_in_any_spans(
        monkeypatch, entries, threads):
    # Defect: whole, fuse() named run 'a''s refused norm 'max' at q2 (normalisations are
    # checked before scores are combined); in spans of queries (over BLOCK_ENTRIES
    # entries), q1's span failed first, on its -inf score: the same input named another
    # error depending on its size. Now the first query's error, either way.
    runs = {"a": {"q1": {"x": 5e-324, "y": -1.0}, "q2": {"x": -1.0, "y": -2.0}},
            "b": {"q1": {"x": 1.0}, "q2": {"x": 1.0}}}
    if entries is not None:
        monkeypatch.setattr(lists_module, "BLOCK_ENTRIES", entries)
    monkeypatch.setenv("IRMETRICS_THREADS", threads)
    with pytest.raises(InputFormatError, match=r"not finite.*query_id 'q1', doc_id 'y'"):
        fuse(runs, method="sum", norm="max")


def test_float_keys_order_like_the_floats():
    values = np.array([-np.inf, -1e308, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1e-300, 0.1,
                       0.1 + 2e-17, 1.0, 1e308, np.inf])
    for bits in (63, 40, 8, 1):
        keys = lists_module.float_keys(values, bits)
        assert (np.diff(keys) >= 0).all() and keys.min() >= 0 and keys.max() < 2**bits
    # 63 bits drop one: floats two ulps apart have two keys, one ulp apart may share
    two_ulps = np.array([0.1, np.nextafter(np.nextafter(0.1, 1.0), 1.0), -0.1,
                         np.nextafter(np.nextafter(-0.1, -1.0), -1.0)])
    keys = lists_module.float_keys(two_ulps)
    assert keys[0] < keys[1] and keys[3] < keys[2]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=30), st.data())
def test_block_stretch_reads_each_block_where_it_lies(lengths, data):
    # A run's query blocks in any row order, some queries absent (no rows), gaps of
    # rows of other queries between blocks: the slices hold every row asked for.
    n = np.array(lengths, dtype=np.int64)
    gaps = np.array(data.draw(st.lists(st.integers(0, 2), min_size=len(n), max_size=len(n))))
    placed = np.array(data.draw(st.permutations(range(len(n)))))
    starts = np.zeros(len(n), dtype=np.int64)
    starts[placed] = np.cumsum(gaps + n[placed]) - n[placed]
    docs = pl.Series([f"d{i}" for i in range(int((gaps + n).sum()))])
    rows = np.concatenate([starts[q] + np.array(data.draw(st.permutations(range(n[q]))),
                                                 dtype=np.int64)
                           for q in range(len(n))] + [np.zeros(0, dtype=np.int64)])
    found = lists_module.block_stretch(docs, starts, n, rows)
    if found is None:  # more than 8 slices on a few entries
        assert ((np.diff(np.sort(starts[n > 0])) != n[n > 0][np.argsort(starts[n > 0])][:-1])
                .sum() + 1 > 8)
        return
    ids, at = found
    assert ids.gather(at).to_list() == docs.gather(rows).to_list()
    assert len(ids) == int(n.sum())  # slices of the blocks only, no row copied twice


def test_runs_in_numeric_query_order_fuse_from_slices_as_from_gathered_ids(monkeypatch):
    # Queries "1".."60" in numeric order (a span, in the ids' byte order, holds
    # "1", "10", "11", ...: blocks apart in the run), one run in reverse and one in
    # random query order; integer scores (ties in the runs and in the fused scores);
    # documents shared across queries. Spans read their rows as slices and fuse as the
    # gathered road does, and as the reference.
    rng = np.random.default_rng(11)
    query_orders = [list(range(1, 61)), list(range(60, 0, -1)),
                    rng.permutation(np.arange(1, 61)).tolist()]
    runs, tables = [], []
    for i, order in enumerate(query_orders):
        run = {str(q): {f"d{d}": float(rng.integers(0, 4)) for d in rng.permutation(40)[:25]}
               for q in order}
        runs.append(run)
        tables.append(Run.from_records(
            [(q, d, s) for q, docs in run.items()
             for d, s in sorted(docs.items(), key=lambda item: -item[1])], name=f"r{i}"))
    monkeypatch.setattr(lists_module, "BLOCK_ENTRIES", 900)
    monkeypatch.setattr(lists_module, "ENTRIES_PER_SLICE", 8)
    sliced = []
    real = lists_module.block_stretch

    def spy(docs, starts, lengths, rows):
        found = real(docs, starts, lengths, rows)
        sliced.append(found is not None and found[0].n_chunks() > 1)
        return found

    monkeypatch.setattr(lists_module, "block_stretch", spy)
    got = {m: fuse(tables, method=m, norm=None).df for m in ("rrf", "bordafuse")}
    assert any(sliced)  # blocks apart, read as several slices
    monkeypatch.setattr(lists_module, "block_stretch", lambda *args: None)
    for method, frame in got.items():
        assert fuse(tables, method=method, norm=None).df.equals(frame)
        assert frame.select("query_id", "doc_id", "rank", "score").rows() == \
            reference_fuse(runs, method)
