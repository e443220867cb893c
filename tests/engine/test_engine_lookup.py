"""Judgment lookup (pack.lookup_codes): the hash join and the binary search in the sorted
qrels keys give the same relevance codes as a plain dict lookup on the strings, key
collisions included (the fingerprints tell the documents apart), and the choice between
the two roads follows SortedKeys' rule."""

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics import Evaluator
from irmetrics.containers import Qrels, Run
from irmetrics.engine import pack as pack_module
from irmetrics.engine.pack import SortedKeys, encode_qrels, lookup_codes, pack, query_codes
from irmetrics.engine.ranked import NOT_IN_POOL, POOL_UNJUDGED
from irmetrics.containers import trec_text as trec

from tests._cases import qrels_and_run

ROADS = {"join": False, "search": True}
REAL_HASH = pack_module.doc_hash
QUERIES = ("1", "10", "2", "b", "a")
DOCS = tuple(f"d{i}" for i in range(12))


def force_road(monkeypatch, road: str) -> None:
    monkeypatch.setattr(SortedKeys, "worth_searching",
                        lambda self, keys, n_build, n_probes: ROADS[road])


@st.composite
def lookup_case(draw):
    """Judgments, looked-up (query, doc) pairs and a doc hash: the real one, or one drawn
    from four values per doc id, so that run docs collide with judgments (told apart by
    the fingerprint) and judgments of one query with each other (keys not unique: a join
    on key and fingerprint)."""
    judged = draw(st.dictionaries(st.tuples(st.sampled_from(QUERIES), st.sampled_from(DOCS)),
                                  st.integers(-1, 3), min_size=1, max_size=30))
    probes = draw(st.lists(st.tuples(st.sampled_from(QUERIES), st.sampled_from(DOCS)),
                           max_size=40))
    buckets = draw(st.none() | st.lists(st.integers(0, 3), min_size=len(DOCS),
                                        max_size=len(DOCS)))
    return judged, probes, buckets


def bucket_hash(buckets):
    table = dict(zip(DOCS, buckets))
    # Shifted past the bits _combine drops, so equal buckets give equal keys.
    return lambda s: np.array([table[d] << 40 for d in s.to_list()], dtype=np.uint64)


@pytest.mark.parametrize("road", ROADS)
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=lookup_case(), restrict=st.booleans())
def test_codes_equal_a_dict_lookup_on_the_strings(monkeypatch, road, case, restrict):
    judged, probes, buckets = case
    full_join = []
    with monkeypatch.context() as m:
        force_road(m, road)
        if buckets is not None:
            m.setattr(pack_module, "doc_hash", bucket_hash(buckets))
        qrels = encode_qrels(pl.DataFrame(
            {"query_id": [q for q, _ in judged], "doc_id": [d for _, d in judged],
             "relevance": list(judged.values())}))
        probes = [(q, d) for q, d in probes if q in set(qrels.query_ids)]
        qcode = query_codes(pl.Series([q for q, _ in probes], dtype=pl.String),
                            qrels.query_ids)
        docs = pl.Series([d for _, d in probes], dtype=pl.String)
        queries = np.unique(qcode) if restrict else None

        def doc_ids_at(rows):
            full_join.append(rows is None)
            return docs if rows is None else docs.gather(rows)

        got = lookup_codes(qrels, qcode, pack_module.doc_hash(docs).copy(),  # consumed
                           doc_ids_at, queries=queries)
        if qrels.unique_keys:  # the matched keys themselves, not only the codes
            keys = pack_module._combine(qcode, pack_module.doc_hash(docs).copy(),
                                        qrels.query_bits)
            position = {k: j for j, k in enumerate(qrels.keys.tolist())}
            hit, judgment = pack_module._match_keys(qrels, keys, queries)
            assert hit.tolist() == [i for i, k in enumerate(keys.tolist()) if k in position]
            assert judgment.tolist() == [position[k] for k in keys[hit].tolist()]
    want = [NOT_IN_POOL if p not in judged else POOL_UNJUDGED if judged[p] < 0 else judged[p]
            for p in probes]
    assert got.tolist() == want
    if buckets is None and probes:  # real 64-bit hashes of a few short ids never collide
        assert qrels.unique_keys and not any(full_join)


@pytest.mark.parametrize("fake_hash", [
    None,
    lambda s: np.zeros(len(s), np.uint64),  # every judgment collides: keys unusable
    lambda s: s.str.len_bytes().cast(pl.UInt64).to_numpy() << np.uint64(30),  # run docs collide
])
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=qrels_and_run(max_queries=6, max_judged=10, max_retrieved=12))
def test_both_roads_pack_like_the_join(monkeypatch, fake_hash, data):
    qrels, run = data
    packed = {}
    for road in ROADS:
        with monkeypatch.context() as m:
            force_road(m, road)
            if fake_hash is not None:
                m.setattr(pack_module, "doc_hash", fake_hash)
            packed[road] = pack(encode_qrels(Qrels.from_dict(qrels).df),
                                Run.from_dict(run).df, keep_doc_ids=True).code.tolist()
    assert packed["search"] == packed["join"]


def test_sorted_keys_rule_joins_until_the_sort_pays_then_searches():
    keys = np.random.default_rng(0).permutation(np.arange(100, dtype=np.uint64) * 7919)
    index = SortedKeys()
    # Deep rankings: a build side under half the probes is always joined, never counted.
    assert not index.worth_searching(keys, 50, 100)
    assert index.index is None and index.joined_rows == 0
    # Shallow ones: joins until their build rows reach a quarter of all keys.
    assert [index.worth_searching(keys, 10, 15) for _ in range(3)] == [False, False, True]
    assert index.joined_rows == 30
    sorted_keys, judgment = index.built(keys)
    assert np.array_equal(sorted_keys, np.sort(keys))
    assert np.array_equal(keys[judgment], sorted_keys)
    assert index.built(keys) is index.index  # sorted once
    assert index.worth_searching(keys, 1, 1)
    assert not index.worth_searching(keys, 1, 2)
    assert SortedKeys().worth_searching(keys, 25, 10)  # a large build side sorts at once


def _write(path, rows):
    path.write_text("".join(" ".join(map(str, r)) + "\n" for r in rows))
    return path


def test_evaluator_sorts_the_qrels_keys_once_and_every_run_agrees_with_the_join(
        tmp_path, monkeypatch):
    # Shallow runs (5 docs) against many judgments per query, in chunks of a few queries:
    # what makes the join rebuild most of the qrels for every run.
    rng = np.random.default_rng(7)
    qids = [str(q) for q in rng.choice(10_000, 300, replace=False)]
    qrels = _write(tmp_path / "qrels", [(q, 0, f"doc{d}", int(rng.integers(-1, 3)))
                                        for q in qids
                                        for d in rng.choice(500, 40, replace=False)])
    runs = []
    for i in range(3):
        rows = []
        for q in qids[i:]:  # runs miss some queries
            docs = rng.choice(60, 5, replace=False)
            scores = np.sort(rng.integers(0, 4, 5))[::-1]  # ties with mixed codes
            rows += [(q, "Q0", f"doc{d}", r + 1, s, f"r{i}")
                     for r, (d, s) in enumerate(zip(docs, scores))]
        runs.append(_write(tmp_path / f"run{i}", rows))
    measures = ["map", "P.5", "ndcg", "bpref", "recip_rank", "num_rel_ret"]
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", 1500)

    natural = Evaluator(qrels, measures)
    got = [natural.evaluate(run).to_dict() for run in runs]
    sorted_index = natural._encoded.sorted_keys.index
    assert sorted_index is not None
    natural.evaluate(runs[0])
    assert natural._encoded.sorted_keys.index is sorted_index  # built once, then reused

    for road in ROADS:
        with monkeypatch.context() as m:
            force_road(m, road)
            forced = Evaluator(qrels, measures)
            assert [forced.evaluate(run).to_dict() for run in runs] == got, road
