"""irmetrics.fusion without the oracle: hand-computed values, the tie rule, inputs of every
kind, bad input, optimize() and its folds, and the `irmetrics fuse` command."""

from __future__ import annotations

import io
import json

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irmetrics import Run, evaluate
from irmetrics.cli import main
from irmetrics.exceptions import InputFormatError, ParameterError
from irmetrics.fusion import METHODS, NORMS, fuse, optimize, weight_grid
from irmetrics.io import write_run

A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"x": 2.0, "y": 1.0}}
B = {"q1": {"d3": 0.9, "d1": 0.5, "d4": 0.1}, "q2": {"y": 5.0, "z": 4.0}}


def rows(run, q):
    return [(d, s) for qq, d, s in run.df.select("query_id", "doc_id", "score").rows() if qq == q]


def test_rrf_by_hand():
    fused = fuse([A, B], method="rrf", k=60)
    got = dict(rows(fused, "q1"))
    assert got == pytest.approx({"d1": 1 / 61 + 1 / 62, "d3": 1 / 63 + 1 / 61, "d2": 1 / 62,
                                 "d4": 1 / 63}, rel=1e-15)
    assert [d for d, _ in rows(fused, "q1")] == ["d1", "d3", "d2", "d4"]
    assert fused.name == "rrf" and set(fused.df["run_id"]) == {"rrf"}
    assert fused.df.filter(pl.col("query_id") == "q1")["rank"].to_list() == [1, 2, 3, 4]


def test_combsum_mnz_and_min_max_by_hand():
    # min-max: A.q1 d1 1, d2 .5, d3 0; B.q1 d3 1, d1 .5, d4 0
    total = dict(rows(fuse([A, B], method="sum"), "q1"))
    assert total == pytest.approx({"d1": 1.5, "d2": 0.5, "d3": 1.0, "d4": 0.0})
    mnz = dict(rows(fuse([A, B], method="mnz"), "q1"))
    assert mnz == pytest.approx({"d1": 3.0, "d2": 0.5, "d3": 2.0, "d4": 0.0})
    raw = dict(rows(fuse([A, B], method="max", norm=None), "q1"))
    assert raw == {"d1": 3.0, "d2": 2.0, "d3": 1.0, "d4": 0.1}


def test_bordafuse_counts_missing_documents_as_ranx():
    # q1 has 4 candidates; A lacks d4: (4 - 3 + 1) / 2 = 1 point; B lacks d2: 1 point
    got = dict(rows(fuse([A, B], method="bordafuse"), "q1"))
    assert got == {"d1": 4 + 3, "d2": 3 + 1, "d3": 2 + 4, "d4": 1 + 2}


def test_ties_follow_one_documented_rule():
    # Inside a run, tied scores are ranked by doc id descending (trec_eval): in "a",
    # d2 (rank 1) before d1 (rank 2). In the fused run, equal fused scores go by doc id
    # descending too.
    a = {"q": {"d1": 1.0, "d2": 1.0, "d3": 0.5}}
    b = {"q": {"d3": 1.0, "d1": 1.0, "d2": 1.0}}       # b ranks d3, d2, d1
    got = dict(rows(fuse([a, b], method="rrf", k=0), "q"))
    assert got["d2"] == pytest.approx(1 / 1 + 1 / 2)      # a: rank 1, b: rank 2
    assert got["d1"] == pytest.approx(1 / 2 + 1 / 3)
    assert got["d3"] == pytest.approx(1 / 3 + 1 / 1)
    # mirrored runs: every fused score ties, the fused run lists doc ids descending
    mirror = fuse([{"q": {"a1": 2.0, "b2": 1.0, "c3": 0.0}},
                   {"q": {"c3": 2.0, "b2": 1.0, "a1": 0.0}}], method="rrf")
    assert len(set(mirror.df["score"].to_list())) == 2
    assert [d for d, _ in rows(mirror, "q")] == ["c3", "a1", "b2"]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_fused_run_does_not_depend_on_row_order(data):
    # Heavily tied scores: the output is the same whatever order the rows come in.
    docs = [f"d{i}" for i in range(6)]
    runs = []
    for _ in range(data.draw(st.integers(2, 3))):
        picked = data.draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
        runs.append([("q", d, float(data.draw(st.integers(0, 2)))) for d in picked])
    method = data.draw(st.sampled_from(["rrf", "sum", "bordafuse", "condorcet", "med"]))
    norm = "rank" if method in ("sum", "med") else None
    first = fuse([Run.from_records(r) for r in runs], method=method, norm=norm)
    shuffled = [data.draw(st.permutations(r)) for r in runs]
    second = fuse([Run.from_records(r) for r in shuffled], method=method, norm=norm)
    assert first.df.equals(second.df)
    scores = first.df["score"].to_list()
    ids = first.df["doc_id"].to_list()
    for i in range(len(ids) - 1):
        assert scores[i] > scores[i + 1] or (scores[i] == scores[i + 1] and ids[i] > ids[i + 1])


def test_inputs_of_every_kind_give_one_answer(tmp_path):
    pa, pb = tmp_path / "a.run", tmp_path / "b.run"
    write_run(A, pa, run_id="a")
    write_run(B, pb, run_id="b")
    (tmp_path / "b.json").write_text(json.dumps(B))
    frame = Run.from_dict(B).df
    expected = fuse([A, B], method="wsum", weights=[0.6, 0.4])
    for runs in ([str(pa), str(pb)], [Run.from_dict(A), frame], {"x": A, "y": pb},
                 [pa, str(tmp_path / "b.json")]):
        assert fuse(runs, method="wsum", weights=[0.6, 0.4]).df["score"].to_list() == \
            pytest.approx(expected.df["score"].to_list(), rel=1e-15)


def test_a_query_missing_from_a_run_is_an_empty_list():
    fused = fuse([A, {"q1": B["q1"]}], method="rrf")
    assert dict(rows(fused, "q2")) == pytest.approx({"x": 1 / 61, "y": 1 / 62})
    # the empty run gives every candidate (C - 0 + 1) / 2 = 2 points
    assert fuse([A, {}], method="bordafuse").to_dict()["q1"] == {"d1": 5.0, "d2": 4.0, "d3": 3.0}
    for method in ("rrf", "sum", "condorcet", "med", "posfuse"):
        empty = fuse([{}, {}], method=method, qrels=A if method == "posfuse" else None)
        assert empty.df.height == 0 and empty.name == method


@pytest.mark.parametrize("norm", ["min-max", "sum", "zmuv"])
def test_a_normalisation_that_divides_by_zero_names_run_and_query(norm):
    one = {"q1": {"d1": 1.0, "d2": 0.5}, "q7": {"only": 2.0}}
    with pytest.raises(InputFormatError, match=r"run 'second'.*divides by zero.*query_id 'q7'"):
        fuse({"first": A, "second": one}, method="sum", norm=norm)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("norm", ["min-max", "sum", "zmuv"])
def test_a_normalisation_whose_denominator_overflows_names_run_and_query(norm):
    # max - min, sum(s - min) and the variance of 1e308 and -1e308 are beyond float64:
    # zmuv gave a silent 0 for the run's scores, min-max and sum a NaN and a warning.
    wide = {"q1": {"d1": 1.0, "d2": 0.5}, "q7": {"d1": 1e308, "d2": -1e308}}
    with pytest.raises(InputFormatError, match=r"run 'second'.*overflows.*query_id 'q7'"):
        fuse({"first": A, "second": wide}, method="sum", norm=norm)
    # the first query refused is named, whichever of the two checks refuses it
    both = {"q1": {"d1": 1e308, "d2": -1e308}, "q7": {"only": 2.0}}
    with pytest.raises(InputFormatError, match=r"overflows.*query_id 'q1'"):
        fuse({"first": A, "second": both}, method="sum", norm=norm)


def test_max_norm_needs_a_positive_maximum():
    with pytest.raises(InputFormatError, match=r"needs a positive largest score.*'q1'"):
        fuse({"a": A, "neg": {"q1": {"d1": -1.0, "d2": -2.0}}}, method="sum", norm="max")


def test_rank_methods_ignore_norm():
    one = {"q1": {"d1": 1.0}}
    assert fuse([A, one], method="rrf", norm="min-max").df.equals(
        fuse([A, one], method="rrf", norm=None).df)


def test_bad_arguments_are_named():
    with pytest.raises(ParameterError, match="`method` must be one of"):
        fuse([A, B], method="combsum")
    with pytest.raises(ParameterError, match="`norm` must be one of"):
        fuse([A, B], method="sum", norm="l2")
    with pytest.raises(ParameterError, match=r"`weights` must be one number per run \(2 runs\)"):
        fuse([A, B], method="wsum", weights=[1.0])
    with pytest.raises(ParameterError, match="weights.*None for method 'sum'"):
        fuse([A, B], method="sum", weights=[1.0, 2.0])
    with pytest.raises(ParameterError, match=r"`weights\[1\]` must be a finite"):
        fuse([A, B], method="wsum", weights=[1.0, float("nan")])
    with pytest.raises(ParameterError, match="`phi` must be given for method 'rbc'"):
        fuse([A, B], method="rbc")
    with pytest.raises(ParameterError, match=r"`kk` must be a parameter of method 'rrf'"):
        fuse([A, B], method="rrf", kk=3)
    with pytest.raises(ParameterError, match="`qrels` must be given for the trained"):
        fuse([A, B], method="posfuse")
    with pytest.raises(ParameterError, match="`qrels` must be None for method 'rrf'"):
        fuse([A, B], method="rrf", qrels={"q1": {"d1": 1}})
    with pytest.raises(ParameterError, match="`runs` must be two or more runs"):
        fuse([A], method="rrf")


def test_nan_and_infinite_scores_are_refused_with_their_ids():
    with pytest.raises(InputFormatError, match=r"finite.*query_id 'q1', doc_id 'd2'"):
        fuse([A, {"q1": {"d1": 1.0, "d2": float("nan")}}], method="sum")
    with pytest.raises(InputFormatError, match=r"not finite.*query_id 'q1', doc_id 'd1'"):
        fuse([{"q1": {"d1": 1e308, "d2": 0.0}}, {"q1": {"d1": 1e308, "d2": 0.0}}],
             method="sum", norm=None)


def test_every_method_and_norm_is_declared():
    assert len(METHODS) == 25 and set(NORMS) == {"min-max", "max", "sum", "zmuv", "rank",
                                                 "borda"}
    qrels = {"q1": {"d1": 1, "d3": 1}, "q2": {"y": 1}}
    for name, method in METHODS.items():
        params = {p: {"phi": 0.5, "gamma": 1.0, "n_segments": 2, "w": 1}[p]
                  for p, v in method.params.items() if v is not None and not
                  isinstance(v, (int, float))}
        for norm in [None, *NORMS] if method.reads_scores else ["min-max"]:
            fused = fuse([A, B], method=name, norm=norm,
                         qrels=qrels if method.trained else None, **params)
            assert fused.df.height == 7, (name, norm)


def test_weight_grid_is_ranx_grid_without_rounding_losses():
    grid = weight_grid(3)
    assert len(grid) == 66 and all(abs(sum(w) - 1) < 1e-12 for w in grid)
    assert (0.1, 0.2, 0.7) in grid  # 0.1 + 0.2 + 0.7 != 1.0 in floats: ranx drops it


def test_optimize_table_is_fuse_then_evaluate():
    qrels = {"q1": {"d1": 1, "d4": 2}, "q2": {"z": 1}}
    grid = {"weights": [[1.0, 0.0], [0.5, 0.5], [0.2, 0.8]]}
    found = optimize([A, B], qrels, "wsum", metric="ndcg_cut.3", grid=grid)
    for row in found.table.iter_rows(named=True):
        run = fuse([A, B], method="wsum", weights=row["weights"])
        assert row["value"] == evaluate(qrels, run, ["ndcg_cut.3"]).aggregate()["ndcg_cut_3"]
    best = found.table.filter(pl.col("best"))
    assert best["value"][0] == found.value == found.table["value"].max()
    assert found.best == {"weights": best["weights"][0].to_list()}
    assert found.metric == "ndcg_cut_3"


def test_optimize_default_grid_and_folds():
    rng = np.random.default_rng(3)
    runs = [{f"q{q}": {f"d{d}": float(rng.random()) for d in range(8)} for q in range(10)}
            for _ in range(2)]
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in range(8)} for q in range(10)}
    found = optimize(runs, qrels, "rrf", metric="P.3", folds=5, seed=1)
    assert found.table["k"].to_list() == list(range(10, 101, 10))
    folds = found.folds
    assert folds["queries"].sum() == 10 and folds.height == 5
    again = optimize(runs, qrels, "rrf", metric="P.3", folds=5, seed=1)
    assert again.folds.equals(folds)
    assert 0.0 <= found.cross_validated <= 1.0


def test_optimize_trained_method_learns_from_training_folds_only():
    rng = np.random.default_rng(4)
    runs = [{f"q{q}": {f"d{d}": float(rng.random()) for d in range(6)} for q in range(6)}
            for _ in range(2)]
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 2)) for d in range(6)} for q in range(6)}
    found = optimize(runs, qrels, "posfuse", metric="P.2", folds=3)
    # fold values computed by hand: posfuse trained on the other folds' qrels
    order = np.random.default_rng(0).permutation(6)
    ids = np.array(sorted(qrels), dtype=object)
    for f, part in enumerate(np.array_split(order, 3)):
        test = set(ids[part])
        train = {q: v for q, v in qrels.items() if q not in test}
        run = fuse(runs, method="posfuse", qrels=train)
        per_query = evaluate({q: qrels[q] for q in test}, run, ["P.2"]).values("P_2")
        assert found.folds["test"][f] == pytest.approx(per_query.mean(), rel=1e-15)


def test_optimize_bad_arguments():
    with pytest.raises(ParameterError, match="grid"):
        optimize([A, B], {"q1": {"d1": 1}}, "rrf", grid={"phi": [0.5]})
    with pytest.raises(ParameterError, match="`metric` must be one measure with one output"):
        optimize([A, B], {"q1": {"d1": 1}}, "rrf", metric="P.1,2", grid={"k": [1]})
    with pytest.raises(ParameterError, match="`folds`"):
        optimize([A, B], {"q1": {"d1": 1}}, "rrf", folds=1, grid={"k": [1]})


# ---- irmetrics fuse ---------------------------------------------------------------------------

def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_cli_writes_the_fused_trec_run(tmp_path):
    pa, pb, out = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "fused.run"
    write_run(A, pa, run_id="a")
    write_run(B, pb, run_id="b")
    status, stdout, err = cli("fuse", "-m", "rrf", "-p", "k=60", "-o", str(out), str(pa),
                              str(pb))
    assert (status, stdout, err) == (0, "", "")
    expected = fuse([A, B], method="rrf")
    assert Run.read(str(out)).df.equals(expected.df)
    status, stdout, _ = cli("fuse", "-m", "wsum", "--norm", "none", "-w", "0.5,2",
                            "--name", "mix", str(pa), str(pb))
    assert status == 0 and stdout.splitlines()[0] == "q1 Q0 d1 1 2.5 mix"


def test_cli_errors_are_one_line(tmp_path):
    pa, pb = tmp_path / "a.run", tmp_path / "b.run"
    write_run(A, pa, run_id="a")
    write_run({"q1": {"d1": 1.0}}, pb, run_id="b")
    status, _, err = cli("fuse", "-m", "sum", str(pa), str(pb))
    assert status == 2 and err.count("\n") == 1
    assert f"run '{pb}': norm 'min-max' divides by zero" in err and "'q1'" in err
    status, _, err = cli("fuse", "-m", "rrf", "-o", str(pa), str(pa), str(pb))
    assert status == 2 and "would be overwritten" in err
    status, _, err = cli("fuse", "-m", "rrf", str(pa))
    assert status == 1 and "two or more runs" in err
    status, _, err = cli("fuse", "-m", "rrf", "-p", "k=x", str(pa), str(pb))
    assert status == 2 and "`-p k` must be a number" in err


def test_condorcet_blocks_and_row_slices_give_the_same_scores(monkeypatch):
    # Queries of different lengths, compared in one padded block, and (with a tiny
    # budget) one query at a time in slices of rows: the same scores.
    import irmetrics.fusion.condorcet as condorcet

    rng = np.random.default_rng(7)
    runs = [{f"q{q}": {f"d{d}": float(rng.random()) for d in rng.choice(12, 2 + q, replace=False)}
             for q in range(8)} for _ in range(3)]
    whole = fuse(runs, method="weighted_condorcet", weights=[0.5, 0.3, 0.2])
    monkeypatch.setattr(condorcet, "BLOCK_CELLS", 5)
    sliced = fuse(runs, method="weighted_condorcet", weights=[0.5, 0.3, 0.2])
    assert whole.df.equals(sliced.df)


def test_cli_help_lists_methods_and_norms():
    status, out, _ = cli("fuse", "--help")
    assert status == 0
    assert all(name in out for name in METHODS) and "min-max" in out and "irds:" in out
