"""evaluate_grid, judge_agreement and the Grid's leaderboard statistics.

The grid is checked against one ``irmetrics.evaluate`` per (qrels, run), bit for bit, on
every road a run can take (plain files chunk by chunk, split query blocks partitioned,
files that need the full reader, Latin-1 files, tables, dicts, Parquet) and under the
evaluation options; reading is counted to show each run is read once.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics import stats
from irmetrics.exceptions import MissingQueriesWarning, NoQueriesError, ParameterError

MEASURES = ["map", "P.5", "ndcg_cut.10", "recip_rank", "num_rel_ret", "gm_map", "runid"]


def _write_qrels(path, rng, topics, docs, *, labels=(0, 0, 1, 1, 2, 3, -1), skip=()):
    lines = []
    for t in topics:
        if t in skip:
            continue
        for d in rng.choice(docs, size=min(len(docs), 12), replace=False):
            lines.append(f"{t} 0 {d} {rng.choice(labels)}")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _write_run(path, rng, topics, docs, name, *, split=False, comment=False):
    blocks = []
    for t in topics:
        chosen = rng.choice(docs, size=int(rng.integers(1, len(docs))), replace=False)
        scores = np.round(rng.random(len(chosen)) * 4) / 4  # many ties
        order = np.argsort(-scores, kind="stable")
        blocks.append([f"{t} Q0 {chosen[i]} {r} {scores[i]} {name}"
                       for r, i in enumerate(order, 1)])
    if split:  # the first query's lines in two blocks: the partition road
        first = blocks.pop(0)
        blocks = [first[: len(first) // 2]] + blocks + [first[len(first) // 2:]]
    lines = [line for block in blocks for line in block]
    if comment:
        lines.insert(1, "# a comment: the file needs the full reader")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grid")
    rng = np.random.default_rng(17)
    topics = [str(t) for t in (3, 10, 2, 41, 7, 15)]
    docs = np.array([f"d{i}" for i in range(15)])
    qrels = {
        "human": _write_qrels(tmp / "human.txt", rng, topics, docs),
        "llm": _write_qrels(tmp / "llm.txt", rng, topics, docs, labels=(0, 1, 2, 3),
                            skip=("41",)),
        "binary": _write_qrels(tmp / "binary.txt", rng, topics + ["99"], docs, labels=(0, 1)),
    }
    runs = {
        "plain": _write_run(tmp / "plain.run", rng, topics[:5] + ["88"], docs, "plain"),
        "split": _write_run(tmp / "split.run", rng, topics, docs, "split", split=True),
        "comment": _write_run(tmp / "comment.run", rng, topics[1:], docs, "comment",
                              comment=True),
    }
    return qrels, runs


def _assert_same(grid, qrels, runs, measures, **options):
    for q_name, q in qrels.items():
        for r_name, r in runs.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingQueriesWarning)
                expected = irm.evaluate(q, r, measures, **options)
            got = grid.results[(q_name, r_name)]
            assert got.names == expected.names
            assert list(got.query_ids) == list(expected.query_ids)
            assert list(got.missing_query_ids) == list(expected.missing_query_ids)
            assert list(got.ignored_query_ids) == list(expected.ignored_query_ids)
            assert got.run_name == expected.run_name and got.id_encoding == expected.id_encoding
            for name in expected.names:
                a, b = got.values(name), expected.values(name)
                if a.dtype == object:
                    assert a.tolist() == b.tolist()
                else:
                    np.testing.assert_array_equal(a, b, err_msg=f"{q_name} {r_name} {name}")
            assert got.aggregate() == expected.aggregate()


@pytest.mark.parametrize("options", [
    {}, {"complete": True}, {"max_docs": 3}, {"judged_only": True, "relevance_level": 2},
    {"ties": "input_order"}, {"semantics": "pytrec_eval"}, {"ties": "expected"},
    {"relevance": "float"},
])
def test_grid_equals_one_evaluate_per_cell(files, options):
    qrels, runs = files
    measures = ["map", "P.5", "ndcg_cut.10", "recip_rank"] if options.get("ties") == "expected" \
        or options.get("relevance") == "float" else MEASURES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        grid = irm.evaluate_grid(qrels, runs, measures, **options)
    assert grid.qrels_names == list(qrels) and grid.run_names == list(runs)
    _assert_same(grid, qrels, runs, measures, **options)


@pytest.mark.parametrize("chunk", [1, 97, 700])
def test_grid_equals_evaluate_when_runs_come_in_many_chunks(files, monkeypatch, chunk):
    # Query blocks straddle chunk boundaries: each packer keeps its unfinished block.
    from irmetrics.containers import trec_text

    qrels, runs = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        expected = {(q, r): irm.evaluate(qp, rp, MEASURES) for q, qp in qrels.items()
                    for r, rp in runs.items()}
        monkeypatch.setattr(trec_text, "PLAIN_CHUNK_BYTES", chunk)
        grid = irm.evaluate_grid(qrels, runs, MEASURES, max_docs=7)
        capped = {(q, r): irm.evaluate(qp, rp, MEASURES, max_docs=7) for q, qp in qrels.items()
                  for r, rp in runs.items()}
        plain = irm.evaluate_grid(qrels, runs, MEASURES)
    for key, res in expected.items():
        for name in res.names:
            assert plain.results[key].values(name).tolist() == res.values(name).tolist()
            assert grid.results[key].values(name).tolist() == \
                capped[key].values(name).tolist()


def test_each_run_is_read_once_and_each_qrels_encoded_once(files, monkeypatch):
    import importlib

    from irmetrics.engine import fanout

    evaluate_module = importlib.import_module("irmetrics.evaluate")  # the module, not the function

    qrels, runs = files
    opened, read_whole, encoded = [], [], []
    real_chunks, real_read = fanout.raw_chunks, evaluate_module.read_utf8_or_latin1
    real_encode = evaluate_module.encode_qrels_file

    def chunks(path, **kw):
        opened.append(str(path))
        return real_chunks(path, **kw)

    def read(path, kind, **kw):
        if kind == "run":
            read_whole.append(str(path))
        return real_read(path, kind, **kw)

    def encode(path, *args, **kw):
        encoded.append(str(path))
        return real_encode(path, *args, **kw)

    monkeypatch.setattr(fanout, "raw_chunks", chunks)
    monkeypatch.setattr(evaluate_module, "read_utf8_or_latin1", read)
    monkeypatch.setattr(evaluate_module, "encode_qrels_file", encode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        irm.evaluate_grid(qrels, runs, ["map"])
    assert sorted(encoded) == sorted(qrels.values())
    # plain: one pass; split: one pass that finds the split, one to partition;
    # comment: one pass too (comment lines stay on the bounded road).
    assert opened.count(runs["plain"]) == 1 and runs["plain"] not in read_whole
    assert opened.count(runs["split"]) == 2 and runs["split"] not in read_whole
    assert opened.count(runs["comment"]) == 1 and read_whole == []


def test_a_chunk_is_packed_once_for_every_qrels_set(files, monkeypatch):
    # What does not depend on the qrels (blocks, doc-id hashes, the repeat check, the
    # order) is worked out once per chunk and shared by every qrels set's packer.
    from irmetrics.engine import stream

    qrels, runs = files
    hashed = []
    real = stream.doc_hash
    monkeypatch.setattr(stream, "doc_hash", lambda ids: hashed.append(len(ids)) or real(ids))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        irm.evaluate_grid(qrels, {"plain": runs["plain"]}, ["map"], threads=1)
    assert len(qrels) == 3 and len(hashed) == 1  # one chunk, hashed once, not 3 times


def test_grid_of_tables_dicts_parquet_and_latin1(tmp_path, files):
    qrels, runs = files
    run_frame = irm.Run.read(runs["plain"]).df
    parquet = tmp_path / "run.parquet"
    run_frame.write_parquet(parquet)
    latin1 = tmp_path / "latin1.run"
    latin1.write_bytes(Path(runs["plain"]).read_bytes() + b"3 Q0 caf\xe9 1 9.0 plain\n")
    latin1_qrels = tmp_path / "latin1_qrels.txt"
    latin1_qrels.write_bytes(Path(qrels["human"]).read_bytes() + b"3 0 caf\xe9 2\n")
    as_dict = irm.Run.read(runs["split"]).to_dict()
    as_dict["999"] = {}  # a query with an empty ranking
    many = {"frame": run_frame, "dict": as_dict, "parquet": str(parquet),
            "lazy": run_frame.lazy(), "latin1": str(latin1)}
    qrels = {"human": qrels["human"], "latin1": str(latin1_qrels),
             "table": irm.Qrels.read(qrels["llm"]),
             "dict": irm.Qrels.read(qrels["binary"]).to_dict()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        grid = irm.evaluate_grid(qrels, many, MEASURES)
    _assert_same(grid, qrels, many, MEASURES)
    assert grid.results[("latin1", "frame")].id_encoding == "latin-1"
    assert grid.results[("human", "latin1")].id_encoding == "latin-1"


def test_tidy_table_and_aggregates(files):
    qrels, runs = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        grid = irm.evaluate_grid(qrels, runs, ["map", "P.5", "num_ret"])
    tidy = grid.per_query()
    assert tidy.columns == ["qrels", "run", "query_id", "measure", "value"]
    res = grid.results[("llm", "split")]
    part = tidy.filter(qrels="llm", run="split").drop("qrels", "run")
    assert part.equals(res.per_query())
    agg = grid.aggregate().filter(qrels="llm", run="split")
    assert dict(zip(agg["measure"], agg["value"])) == {k: float(v) for k, v in
                                                       res.aggregate().items()}
    assert grid.means("map")["human"].to_list() == [
        grid.results[("human", r)].aggregate()["map"] for r in runs]
    assert grid.scored_measures() == ["map", "P_5"]


def test_grid_warns_once_and_names_the_cell_without_queries(tmp_path, files):
    qrels, runs = files
    with pytest.warns(MissingQueriesWarning, match=r"of 9 \(qrels, run\)") as caught:
        irm.evaluate_grid(qrels, runs, ["map"])
    assert len([w for w in caught if w.category is MissingQueriesWarning]) == 1
    other = tmp_path / "other.run"
    other.write_text("nope Q0 d1 1 1.0 x\n")
    with pytest.raises(NoQueriesError, match="qrels 'human' and run 'other'"):
        irm.evaluate_grid({"human": qrels["human"]}, {"other": str(other)}, ["map"])
    with pytest.raises(ParameterError, match="measures"):
        irm.evaluate_grid(qrels, runs, [])
    with pytest.raises(ParameterError, match="qrels"):
        irm.evaluate_grid({}, runs, ["map"])


# -- the leaderboard statistics read from the grid -----------------------------------------

@pytest.fixture(scope="module")
def grid(files):
    qrels, runs = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.evaluate_grid(qrels, runs, ["map", "P.5"], complete=True)


def test_ranking_agreement_is_the_statistic_on_the_aligned_scores(grid):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = grid.ranking_agreement("human", n_resamples=200, seed=5, k=2)
        _, scores = grid.scores("map", ["human", "llm"])
    assert table.height == 4  # (llm, binary) x (map, P_5)
    row = table.filter(qrels="llm", measure="map").row(0, named=True)
    res = stats.ranking_agreement(scores["human"], scores["llm"], n_resamples=200, seed=5, k=2)
    for name, value, low, high in zip(res.statistics, res.estimate, res.ci_low, res.ci_high):
        assert row[name] == value and row[f"{name}_low"] == low and row[f"{name}_high"] == high
    assert row["n_systems"] == 3 and row["n_topics"] == scores["human"].shape[0] == 5


def test_scores_align_queries_and_warn(grid):
    from irmetrics.exceptions import QueryAlignmentWarning

    with pytest.warns(QueryAlignmentWarning, match="'41'"):
        ids, scores = grid.scores("map", ["human", "llm"])  # llm has no topic 41
    assert "41" not in ids.tolist() and scores["llm"].shape == (len(ids), 3)
    res = grid.results[("human", "split")]
    position = list(res.query_ids).index(ids[0])
    assert scores["human"][0, 1] == res.values("map")[position]


def test_leaderboard_and_measure_agreement(grid):
    board = {"plain": 0.3, "split": 0.2, "comment": 0.1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = grid.ranking_agreement(leaderboard=board, measures="map", n_resamples=100)
        _, scores = grid.scores("map", ["human"])
    assert table["reference"].to_list() == ["leaderboard"] * 3
    row = table.filter(qrels="human").row(0, named=True)
    expected = stats.ranking_agreement([0.3, 0.2, 0.1], scores["human"], n_resamples=100)
    assert row["tau_b"] == expected.estimate[0] and row["tau_b_low"] == expected.ci_low[0]
    with pytest.raises(ParameterError, match="lacks"):
        grid.ranking_agreement(leaderboard={"plain": 1.0})
    with pytest.raises(ParameterError, match="values of 'map'"):
        grid.ranking_agreement(leaderboard={"P_5": board})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        measures = grid.measure_agreement("map", "P_5", qrels="human", n_resamples=50)
    assert measures.row(0, named=True)["reference"] == "map"
    assert measures.row(0, named=True)["measure"] == "P_5"


def test_discriminative_power_and_swap_rate_from_the_grid(grid):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        power = grid.discriminative_power(measures="map", test="t")
        swaps = grid.swap_rate(measures="map", n_trials=50, bin_width=0.05)
        bins = grid.swap_rate(measures="map", n_trials=50, bin_width=0.05, per_bin=True)
        _, scores = grid.scores("map", ["binary"])
    row = power.filter(qrels="binary").row(0, named=True)
    expected = stats.discriminative_power(scores["binary"], test="t")
    assert row["pairs"] == 3 and row["significant"] == expected.count
    assert row["power"] == expected.power
    expected = stats.swap_rate(scores["binary"], n_trials=50, bin_width=0.05)
    assert swaps.filter(qrels="binary")["swap_rate"].item() == expected.overall
    assert bins.filter(qrels="binary")["count"].to_list() == expected.counts.tolist()


# -- judges ----------------------------------------------------------------------------------

def test_judge_agreement_equals_the_statistics_per_query_and_overall(files):
    from sklearn.metrics import cohen_kappa_score

    qrels, _ = files
    agree = irm.judge_agreement(qrels["human"], qrels["llm"], names=("human", "llm"))
    a = irm.Qrels.read(qrels["human"]).df
    b = irm.Qrels.read(qrels["llm"]).df
    joined = a.join(b, on=["query_id", "doc_id"], how="inner")
    la = joined["relevance"].to_numpy()
    lb = joined["relevance_right"].to_numpy()
    labels = np.unique(np.concatenate([la, lb]))
    assert agree.overall["both"] == joined.height
    assert agree.overall["only_a"] == a.height - joined.height
    assert agree.overall["only_b"] == b.height - joined.height
    assert agree.overall["kappa"] == pytest.approx(cohen_kappa_score(la, lb), abs=1e-12)
    assert agree.overall["kappa_quadratic"] == pytest.approx(
        cohen_kappa_score(la, lb, weights="quadratic"), abs=1e-12)
    assert agree.confusion.sum() == joined.height
    per = agree.per_query()
    assert per["query_id"].to_list() == sorted(set(a["query_id"]) | set(b["query_id"]))
    for row in per.iter_rows(named=True):
        part = joined.filter(query_id=row["query_id"])
        assert row["both"] == part.height
        if part.height == 0:
            assert np.isnan(row["kappa"])
            continue
        x, y = part["relevance"].to_numpy(), part["relevance_right"].to_numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = cohen_kappa_score(x, y, weights="linear", labels=labels)
        assert (np.isnan(expected) and np.isnan(row["kappa_linear"])) or \
            row["kappa_linear"] == pytest.approx(expected, abs=1e-12)
        assert row["agreement"] == pytest.approx(np.mean(x == y), abs=1e-15)
        ra, rb = x >= 1, y >= 1
        union = np.count_nonzero(ra | rb)
        assert (union == 0 and np.isnan(row["jaccard"])) or \
            row["jaccard"] == np.count_nonzero(ra & rb) / union
    frame = agree.confusion_frame()
    assert frame.columns[0] == "human \\ llm" and frame.height == len(agree.labels)


def test_judge_agreement_without_common_pairs_and_bad_names():
    agree = irm.judge_agreement({"q": {"a": 1}}, {"q": {"b": 1}})
    assert agree.overall["both"] == 0 and np.isnan(agree.overall["kappa"])
    assert agree.overall["only_a"] == 1 and agree.overall["only_b"] == 1
    with pytest.raises(ParameterError, match="names"):
        irm.judge_agreement({"q": {"a": 1}}, {"q": {"a": 1}}, names=("x", "x"))


def test_tidy_frames_have_stable_schemas(grid):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = grid.ranking_agreement("human", n_resamples=10)
    assert table.schema["tau_b"] == pl.Float64 and table.schema["n_systems"] == pl.Int64


@st.composite
def judged_runs(draw):
    """Two qrels sets and two runs over a few queries: graded and negative labels, ties,
    unjudged documents, queries on one side only, an empty ranking."""
    queries = ["q1", "q2", "q10"]
    docs = [f"d{i}" for i in range(6)]
    labels = st.integers(-1, 3)

    def qrels():
        return {q: draw(st.dictionaries(st.sampled_from(docs), labels, min_size=1, max_size=5))
                for q in draw(st.lists(st.sampled_from(queries), min_size=1, max_size=3,
                                       unique=True))}

    def run():
        return {q: draw(st.dictionaries(st.sampled_from(docs + ["x", "y"]),
                                        st.sampled_from([0.0, 0.5, 1.0, 2.0]), max_size=6))
                for q in draw(st.lists(st.sampled_from(queries + ["q99"]), min_size=1,
                                       max_size=4, unique=True))}

    return {"a": qrels(), "b": qrels()}, {"r": run(), "s": run()}


def _as_files(tmp, qrels, runs):
    paths = {}
    for name, q in qrels.items():
        path = tmp / f"{name}.qrels"
        path.write_text("".join(f"{qid} 0 {d} {v}\n" for qid, ds in q.items()
                                for d, v in ds.items()))
        paths[name] = str(path)
    run_paths = {}
    for name, r in runs.items():
        lines = "".join(f"{qid} Q0 {d} 0 {v} {name}\n" for qid, ds in r.items()
                        for d, v in ds.items())
        if not lines:
            continue
        path = tmp / f"{name}.run"
        path.write_text(lines)
        run_paths[name] = str(path)
    return paths, run_paths


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=judged_runs(), complete=st.booleans(), max_docs=st.sampled_from([None, 2]))
def test_grid_equals_evaluate_on_generated_inputs(tmp_path_factory, data, complete, max_docs):
    qrels, runs = data
    options = dict(complete=complete, max_docs=max_docs)
    measures = ["map", "P.2", "ndcg_cut.3", "recip_rank", "num_ret"]
    files = _as_files(tmp_path_factory.mktemp("gen"), qrels, runs)
    for q_in, r_in in ((qrels, runs), files):
        if not r_in:
            continue
        expected, failed = {}, False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)
            try:
                for qn, q in q_in.items():
                    for rn, r in r_in.items():
                        expected[(qn, rn)] = irm.evaluate(q, r, measures, **options)
            except NoQueriesError:
                failed = True
            if failed:
                with pytest.raises(NoQueriesError):
                    irm.evaluate_grid(q_in, r_in, measures, **options)
                continue
            grid = irm.evaluate_grid(q_in, r_in, measures, **options)
        for key, res in expected.items():
            assert list(grid.results[key].query_ids) == list(res.query_ids)
            for name in res.names:
                assert grid.results[key].values(name).tolist() == res.values(name).tolist()


def test_the_html_page_is_never_written_over_an_input(files, tmp_path):
    pytest.importorskip("matplotlib")
    qrels, runs = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = irm.meta_evaluate(qrels, runs, "P.5", n_resamples=10, swap_trials=2)
    assert set(meta.grid.sources) == {f"qrels {n!r}" for n in qrels} | \
        {f"run {n!r}" for n in runs}
    for path in [qrels["llm"], runs["split"]]:
        before = Path(path).read_bytes()
        with pytest.raises(ParameterError, match="other than the inputs"):
            meta.to_html(path)
        assert Path(path).read_bytes() == before
    page = meta.to_html(tmp_path / "page.html")
    assert (tmp_path / "page.html").read_text() == page
