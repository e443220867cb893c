"""evaluate_grid's stacked road (irmetrics.engine.stacked): qrels sets of one query set
packed once as label vectors and measured at once give every cell's values bit for bit,
on any thread count."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import importlib

import irmetrics as irm
from irmetrics.engine.stacked import stacked_qrels
from irmetrics.exceptions import MissingQueriesWarning
from tests._cases import QUERY_IDS, SCORES

#: The module (``irmetrics.evaluate`` is the function).
evaluate_module = importlib.import_module("irmetrics.evaluate")
stacked_module = importlib.import_module("irmetrics.engine.stacked")

MEASURES = ["map", "P.2,5,20", "ndcg_cut.3,30", "ndcg", "recip_rank", "Rprec", "bpref",
            "recall.5,100", "num_ret", "num_rel", "num_rel_ret", "infAP", "success.1",
            "set_F", "gm_map", "11pt_avg", "ERR@5", "RBP(p=0.8)", "Judged@5"]
DOCS = [f"d{i}" for i in range(9)]


@st.composite
def grids(draw):
    """2-4 qrels sets of the same queries (each set judging its own subset of a pool, or
    relabelling the set before it: the same pairs in the same order; its own top label:
    some sets stack apart), 1-3 runs with ties, unjudged documents, qrels queries they
    lack and a query no set judges."""
    queries = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=4, unique=True))
    sets: list = []
    for _ in range(draw(st.integers(2, 4))):
        top = draw(st.integers(1, 3))
        relabel = bool(sets) and draw(st.booleans())
        qrels = {}
        for q in queries:
            if relabel:
                judged = {d: draw(st.integers(-1, top)) for d in sets[-1][q]}
            else:
                judged = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, top),
                                              min_size=1, max_size=6))
            if all(v < 0 for v in judged.values()):  # trec_eval: undefined otherwise
                judged[next(iter(judged))] = draw(st.integers(0, top))
            qrels[q] = judged
        sets.append(qrels)
    runs = []
    for _ in range(draw(st.integers(1, 3))):
        run = {}
        chosen = draw(st.lists(st.sampled_from(queries), min_size=1, max_size=4, unique=True))
        for q in chosen + (["zz"] if draw(st.booleans()) else []):
            run[q] = draw(st.dictionaries(st.sampled_from(DOCS + ["x1", "x2"]),
                                          st.sampled_from(SCORES), min_size=1, max_size=9))
        runs.append(run)
    return sets, runs


def _write(folder: Path, sets, runs):
    qrels, run_paths = {}, {}
    for i, q in enumerate(sets):
        path = folder / f"set{i}.qrels"
        path.write_text("".join(f"{qid} 0 {d} {v}\n" for qid, ds in q.items()
                                for d, v in ds.items()))
        qrels[f"set{i}"] = str(path)
    for i, r in enumerate(runs):
        path = folder / f"run{i}.txt"
        path.write_text("".join(f"{qid} Q0 {d} 0 {v!r} r{i}\n" for qid, ds in r.items()
                                for d, v in ds.items()))
        run_paths[f"run{i}"] = str(path)
    return qrels, run_paths


@settings(max_examples=15, deadline=None)
@given(data=grids(), complete=st.booleans(), max_docs=st.sampled_from([None, 3]),
       ties=st.sampled_from(["trec_eval", "input_order"]), level=st.sampled_from([1, 2]),
       judged_only=st.booleans(), budget=st.sampled_from([None, 1, 9]))
def test_stacked_grid_equals_each_cell_alone_on_any_thread_count(
        data, complete, max_docs, ties, level, judged_only, budget):
    sets, runs = data
    options = dict(complete=complete, max_docs=max_docs, ties=ties, relevance_level=level,
                   judged_only=judged_only)
    stacked_runs = []
    real = evaluate_module.split_values

    def spy(stacked, values):
        stacked_runs.append(1)
        return real(stacked, values)

    with pytest.MonkeyPatch.context() as monkeypatch, tempfile.TemporaryDirectory() as folder, \
            warnings.catch_warnings():
        monkeypatch.setattr(evaluate_module, "split_values", spy)
        if budget is not None:  # a set or a few per measure pass, not all at once
            monkeypatch.setattr(stacked_module, "STACK_ENTRIES", budget)
        warnings.simplefilter("ignore", MissingQueriesWarning)
        qrels, run_paths = _write(Path(folder), sets, runs)
        one = irm.evaluate_grid(qrels, run_paths, MEASURES, threads=1, **options)
        assert len(stacked_runs) == len(runs)  # the stacked road ran, once per run
        four = irm.evaluate_grid(qrels, run_paths, MEASURES, threads=4, **options)
        for (q_name, r_name), res in one.results.items():
            alone = irm.evaluate(qrels[q_name], run_paths[r_name], MEASURES, **options)
            assert res.query_ids.tolist() == alone.query_ids.tolist()
            assert res.missing_query_ids.tolist() == alone.missing_query_ids.tolist()
            assert res.names == alone.names
            for name in alone.names:
                assert res.values(name).tobytes() == alone.values(name).tobytes(), name
            assert res.aggregate() == alone.aggregate() or \
                str(res.aggregate()) == str(alone.aggregate())  # NaN-safe
    a, b = one.per_query(), four.per_query()
    assert a.equals(b)
    assert a["value"].to_numpy().tobytes() == b["value"].to_numpy().tobytes()


def test_what_is_not_stacked_declines():
    from irmetrics.engine.pack import encode_qrels
    import polars as pl

    def encoded(queries, labels):
        return encode_qrels(pl.DataFrame({"query_id": queries, "doc_id": ["a"] * len(queries),
                                          "relevance": labels}))

    assert stacked_qrels([encoded(["q1"], [1])]) is None  # one set: nothing to stack
    assert stacked_qrels([encoded(["q1"], [1]), encoded(["q2"], [1])]) is None  # queries
    assert stacked_qrels([encoded(["q1"], [1]), encoded(["q1"], [2])]) is not None
    one, other = irm.Evaluator({"q1": {"a": 1}}, "P.1"), irm.Evaluator({"q1": {"a": 1}}, "map")
    assert evaluate_module.stacked_for([one, other]) is None  # other measures
    deeper = irm.Evaluator({"q1": {"a": 1}}, "P.1", max_docs=5)
    assert evaluate_module.stacked_for([one, deeper]) is None  # other options


def test_a_label_vector_table_maps_codes_per_set():
    from irmetrics.engine.pack import encode_qrels
    import polars as pl

    a = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["x", "y", "z"], "relevance": [1, 0, -1]})
    b = pl.DataFrame({"query_id": ["q1"] * 2, "doc_id": ["y", "w"], "relevance": [3, 0]})
    stacked = stacked_qrels([encode_qrels(a), encode_qrels(b)])
    rows = {tuple(r) for r in stacked.table[1:].tolist()}
    # x: 1 / unjudged; y: 0 / 3; z: negative (-2) / unjudged; w: unjudged / 0
    assert rows == {(1, -1), (0, 3), (-2, -1), (-1, 0)}
    assert stacked.table[0].tolist() == [-1, -1]
    assert [g.tolist() for g in stacked.groups] == [[0], [1]]  # levels 0-1 vs 0, 3
    assert np.array_equal(stacked.merged.query_ids, encode_qrels(a).query_ids)


@pytest.mark.parametrize("threads", [1, 4])
def test_a_grid_of_other_query_sets_is_evaluated_per_set(tmp_path, threads):
    (tmp_path / "a.qrels").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "b.qrels").write_text("q1 0 d1 0\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2.0 r\nq2 Q0 d2 2 1.0 r\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        grid = irm.evaluate_grid([str(tmp_path / "a.qrels"), str(tmp_path / "b.qrels")],
                                 [str(tmp_path / "r.txt")], "P.1", threads=threads)
    assert grid.means("P_1").rows() == [("r.txt", 1.0, 0.0)]


def test_labels_beyond_a_byte_stack_exactly(tmp_path):
    (tmp_path / "a.qrels").write_text("q1 0 d1 300\nq1 0 d2 0\nq1 0 d3 -1\n")
    (tmp_path / "b.qrels").write_text("q1 0 d1 1\nq1 0 d2 70000\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 2.0 r\nq1 Q0 d3 3 1.0 r\n")
    qrels = {"a": str(tmp_path / "a.qrels"), "b": str(tmp_path / "b.qrels")}
    grid = irm.evaluate_grid(qrels, [str(tmp_path / "r.txt")], ["ndcg", "map", "P.2"])
    for name, path in qrels.items():
        alone = irm.evaluate(path, str(tmp_path / "r.txt"), ["ndcg", "map", "P.2"])
        for measure in alone.names:
            assert grid.results[(name, "r.txt")].values(measure).tobytes() == \
                alone.values(measure).tobytes()


def test_the_merged_qrels_do_not_hold_a_histogram_of_label_vectors():
    # Defect: the merged qrels were encoded with the vector codes as labels, so their
    # label histogram had a column per distinct vector (queries x vectors int64: 760 MB
    # for 1,000 queries of 100 pairs in 10 sets), gathered for every chunk.
    from irmetrics.engine.pack import encode_qrels
    import polars as pl

    rng = np.random.default_rng(0)
    queries = np.repeat([f"q{i}" for i in range(40)], 30)
    docs = np.tile([f"d{i}" for i in range(30)], 40)
    sets = [encode_qrels(pl.DataFrame({"query_id": queries, "doc_id": docs,
                                       "relevance": rng.integers(0, 4, len(queries))}))
            for _ in range(6)]
    stacked = stacked_qrels(sets)
    assert len(stacked.table) > 1000  # nearly every pair its own vector
    assert stacked.merged.rel_hist.size <= 40 * 5  # not 40 x 1,000+
    # the codes still name each pair's vector, in the merged keys' order
    for i, s in enumerate(sets):
        order = np.argsort(s.keys)
        assert np.array_equal(s.keys[order], stacked.merged.keys)
        assert np.array_equal(stacked.table[stacked.merged.codes + 1, i], s.codes[order])


def _overlapping_sets(seed: int, n_sets: int = 5):
    """Sets judging overlapping random subsets of a pool of 20 queries x 40 documents."""
    from irmetrics.engine.pack import encode_qrels
    import polars as pl

    rng = np.random.default_rng(seed)
    queries = np.repeat([f"q{i}" for i in range(20)], 40)
    docs = np.tile([f"d{i}" for i in range(40)], 20)
    sets = []
    for _ in range(n_sets):
        keep = rng.random(len(queries)) < 0.5
        keep[::40] = True  # every query judged in every set
        sets.append(encode_qrels(pl.DataFrame({
            "query_id": queries[keep], "doc_id": docs[keep],
            "relevance": rng.integers(-1, 4, int(keep.sum()))})))
    return sets


def _same_stack(a, b) -> bool:
    return (np.array_equal(a.table, b.table) and np.array_equal(a.merged.keys, b.merged.keys)
            and np.array_equal(a.merged.fingerprints, b.merged.fingerprints)
            and np.array_equal(a.merged.codes, b.merged.codes)
            and all(np.array_equal(x, y) for x, y in zip(a.by_group, b.by_group)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_merging_by_key_equals_the_joins(seed, monkeypatch):
    # The key road (_vectors_by_key: sorted keys and binary searches) gives the stack the
    # joins on (key, fingerprint) give, bit for bit; a merge in several steps too.
    sets = _overlapping_sets(seed)
    by_key = stacked_qrels(sets)
    monkeypatch.setattr(stacked_module, "_MERGE_KEYS", 500)  # the union grown in steps
    assert _same_stack(stacked_qrels(sets), by_key)
    monkeypatch.setattr(stacked_module, "_vectors_by_key", lambda sets, dtype: None)
    assert _same_stack(stacked_qrels(sets), by_key)


def test_a_key_of_two_documents_takes_the_joins(monkeypatch):
    # Two documents of one query with the same 64-bit key (a hash collision) are two
    # pairs: the key road must see it and leave the merge to the joins on (key,
    # fingerprint). Planted: one set's document given another fingerprint.
    from dataclasses import replace

    sets = _overlapping_sets(3, n_sets=3)
    fingerprints = sets[1].fingerprints.copy()
    fingerprints[0] ^= np.uint64(1)
    sets[1] = replace(sets[1], fingerprints=fingerprints)
    assert stacked_module._vectors_by_key(sets, np.int8) is None
    merged = stacked_qrels(sets)
    assert len(merged.merged.keys) == len(np.unique(np.concatenate([s.keys for s in sets]))) + 1
    joins = []
    monkeypatch.setattr(stacked_module, "_judged_pairs",
                        lambda s, real=stacked_module._judged_pairs: joins.append(1) or real(s))
    assert _same_stack(stacked_qrels(sets), merged) and joins


def _relabelled_pools(seed: int, order: str):
    """Sets naming their pool by letter in ``order`` ("AABAB"): each pool a random subset
    of 20 queries x 40 documents, each set of it a relabelling (the same pairs, in the
    same order, other labels)."""
    from irmetrics.engine.pack import encode_qrels
    import polars as pl

    rng = np.random.default_rng(seed)
    queries = np.repeat([f"q{i}" for i in range(20)], 40)
    docs = np.tile([f"d{i}" for i in range(40)], 20)
    pools = {}
    for name in sorted(set(order)):
        keep = rng.random(len(queries)) < 0.5
        keep[::40] = True  # every query judged in every set
        pools[name] = keep
    return [encode_qrels(pl.DataFrame({
        "query_id": queries[pools[p]], "doc_id": docs[pools[p]],
        "relevance": rng.integers(-1, 4, int(pools[p].sum()))})) for p in order]


@pytest.mark.parametrize("order", ["AAAA", "AABAB", "ABBBA", "ABCAB"])
def test_relabellings_of_one_pool_merge_as_the_joins(order, monkeypatch):
    # Sets of one pool share their keys, which are searched once for a run of them
    # (_vectors_by_key); pools interleaved in any order give the joins' stack bit for bit.
    # Planted (every set given the rows of the set before it): AABAB, ABBBA and ABCAB fail.
    sets = _relabelled_pools(len(order), order)
    assert [np.array_equal(a.keys, b.keys) for a, b in zip(sets, sets[1:])] == \
        [a == b for a, b in zip(order, order[1:])]
    assert stacked_module._vectors_by_key(sets, np.int8) is not None  # the key road
    by_key = stacked_qrels(sets)
    monkeypatch.setattr(stacked_module, "_MERGE_KEYS", 300)  # the union grown in steps
    assert _same_stack(stacked_qrels(sets), by_key)
    monkeypatch.setattr(stacked_module, "_vectors_by_key", lambda sets, dtype: None)
    assert _same_stack(stacked_qrels(sets), by_key)


def test_a_relabelling_with_another_document_under_a_key_takes_the_joins():
    # A set whose keys equal the set before it is still checked document by document:
    # one fingerprint changed (two documents under one key) leaves the key road.
    from dataclasses import replace

    sets = _relabelled_pools(7, "AAA")
    fingerprints = sets[2].fingerprints.copy()
    fingerprints[5] ^= np.uint64(1)
    sets[2] = replace(sets[2], fingerprints=fingerprints)
    assert np.array_equal(sets[1].keys, sets[2].keys)
    assert stacked_module._vectors_by_key(sets, np.int8) is None
    assert stacked_module._vectors_by_key(sets[:2], np.int8) is not None
