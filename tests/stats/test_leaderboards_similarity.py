"""irmetrics.leaderboards (long table, MTEB layout, Results) and irmetrics.similarity /
``irmetrics similarity`` on the bundled fixtures: what is read, what is left out and said,
and that the glue gives the statistics of irmetrics.stats on the lined-up rankings."""

from __future__ import annotations

import json
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics import leaderboards as lb
from irmetrics.cli import main
from irmetrics.exceptions import DegenerateTestWarning, InputFormatError
from irmetrics.similarity import run_similarity
from irmetrics.stats import rbo

FIX = "fixtures/leaderboards"
RUNS = "fixtures/compare"


def test_long_table_lists_what_it_leaves_out():
    b = lb.from_long_table(f"{FIX}/benchmark.csv")
    assert len(b.systems) == 11 and "sys-l" not in b.systems and len(b.tasks) == 8
    assert b.left_out["systems"] == [("sys-l", ["t8"])]
    assert b.describe_left_out() == ["1 systems left out (missing from some tasks): sys-l (no t8)"]
    frame = pl.read_csv(f"{FIX}/benchmark.csv")
    want = frame.filter((pl.col("task") == "t3") & (pl.col("system") == "sys-c"))["score"].mean()
    assert b.scores[2][:, 2].mean() == pytest.approx(want, abs=1e-12)


def test_long_table_errors():
    rows = pl.DataFrame({"task": ["t", "t"], "topic": ["1", "1"], "system": ["a", "a"],
                         "score": [0.1, 0.2]})
    with pytest.raises(InputFormatError, match="topic '1', system 'a' appears twice"):
        lb.from_long_table(rows)
    with pytest.raises(InputFormatError, match="no column 'score'"):
        lb.from_long_table(rows.drop("score"))


def test_mteb_layout_and_ranking():
    b = lb.from_mteb(f"{FIX}/mteb")
    assert len(b.systems) == 8 and len(b.tasks) == 12 and all(m.shape == (1, 8) for m in b.scores)
    data = json.loads(open(f"{FIX}/mteb/example-org__model-a/0123456789abcdef0123456789abcdef01234567"
                           "/SciFact.json").read())
    assert b.scores[b.tasks.index("SciFact")][0, 0] == data["scores"]["test"][0]["main_score"]
    r = lb.rank_systems(b, n_resamples=500)
    assert r.resampling == "tasks" and r.n_separable <= 7
    assert r.tied_with_best[r.order[0]]


def test_results_input_and_resampling_disagreements():
    q = {"1": {"d": 1}, "2": {"e": 1}, "3": {"f": 1}}
    runs = {"a": {"1": {"d": 1.0}, "2": {"e": 1.0}, "3": {"f": 1.0}},
            "b": {"1": {"x": 1.0}, "2": {"e": 1.0}, "3": {"x": 1.0}}}
    res = {"t": {name: irm.evaluate(q, run, ["map"]) for name, run in runs.items()}}
    b = lb.from_results(res, "map")
    assert b.scores[0].tolist() == [[1.0, 0.0], [1.0, 1.0], [1.0, 0.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateTestWarning)
        table = lb.resampling_disagreements(lb.from_long_table(f"{FIX}/benchmark.csv"),
                                            n_resamples=300)
    assert table["differ"].any() and table.height == 11


def test_run_similarity_equals_stats_on_each_query():
    a = irm.Run.read(f"{RUNS}/bm25.run")
    b = irm.Run.read(f"{RUNS}/dense.run")
    s = run_similarity(a, b, k=5, n_resamples=200, threads=1)
    da, db = a.to_dict(), b.to_dict()
    for row in s.per_query.head(5).iter_rows(named=True):
        qa, qb = da[row["query_id"]], db[row["query_id"]]
        items_a, items_b = list(qa), list(qb)
        want = rbo(items_a, items_b, x_scores=[qa[d] for d in items_a],
                   y_scores=[qb[d] for d in items_b])
        assert row["rbo"] == pytest.approx(float(want.ext), abs=1e-12)
        top = lambda q: [d for d, _ in sorted(q.items(), key=lambda t: (-t[1], [-ord(c) for c in t[0]]))][:5]  # noqa: E731
        assert row["overlap"] == len(set(top(qa)) & set(top(qb))) / 5
    assert s.summary["queries"].to_list()[0] == s.per_query.height


def test_neighbour_arrays_and_queries_only_in_one_run():
    exact = np.array([[1, 2, 3], [4, 5, 6]])
    ann = np.array([[2, 1, 9], [4, 5, 6]])
    s = run_similarity(exact, ann, k=3, n_resamples=50)
    assert s.per_query["recall"].to_list() == [2 / 3, 1.0]
    a = {"q1": {"d": 1.0}, "q2": {"d": 1.0}}
    b = {"q1": {"d": 1.0}, "q3": {"d": 1.0}}
    s = run_similarity(a, b, n_resamples=50)
    assert s.only_a == ["q2"] and s.only_b == ["q3"] and s.per_query.height == 1


def test_cli_similarity(capsys, tmp_path):
    assert main(["similarity", f"{RUNS}/bm25.run", f"{RUNS}/tweak.run", "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("RBO p=0.9 ties=a") and "tau_ap" in out
    target = tmp_path / "s.json"
    assert main(["similarity", "--format", "json", "-q", "-o", str(target), "--resamples", "50",
                 f"{RUNS}/bm25.run", f"{RUNS}/dense.run"]) == 0
    data = json.loads(target.read_text())
    assert len(data["per_query"]) == 50 and data["summary"][0]["statistic"] == "rbo"
    assert main(["similarity", "-p", "1.5", f"{RUNS}/bm25.run", f"{RUNS}/dense.run"]) == 2
    assert "`p` must be a number strictly between 0 and 1" in capsys.readouterr().err


def test_neighbour_tensors():
    torch = pytest.importorskip("torch")
    exact = torch.tensor([[1, 2, 3], [4, 5, 6]])
    ann = torch.tensor([[2, 1, 9], [6, 5, 4]])
    s = run_similarity(exact, ann, k=3, n_resamples=50)
    assert s.per_query["recall"].to_list() == [2 / 3, 1.0]
    assert s.per_query["tau_b"].to_list()[1] == -1.0
    with pytest.raises(irm.exceptions.ShapeError, match="2-D integer neighbour ids"):
        run_similarity(torch.zeros(3), ann)


def test_comparison_rank_intervals_are_the_stats_ones():
    from irmetrics.stats.rank_intervals import rank_intervals

    runs = {n: f"{RUNS}/{n}.run" for n in ("bm25", "dense", "tweak")}
    c = irm.compare(f"{RUNS}/qrels.txt", runs, ["map"])
    got = c.rank_intervals("map", n_resamples=300)
    want = rank_intervals(c.scores["map"].T, level=c.level, n_resamples=300, seed=c.seed)
    assert got.low.tolist() == want.low.tolist() and got.high.tolist() == want.high.tolist()
    assert [row["system"] for row in got.rows(c.systems)][0] == "dense"


def test_similarity_errors_are_clear():
    from irmetrics.exceptions import NoQueriesError, ParameterError

    with pytest.raises(NoQueriesError, match="the runs share no query"):
        run_similarity({"q1": {"d": 1.0}}, {"q2": {"d": 1.0}})
    with pytest.raises(ParameterError, match="`k` must be a positive integer"):
        run_similarity({"q1": {"d": 1.0}}, {"q1": {"d": 1.0}}, k=0)
    with pytest.raises(ParameterError, match="'a' is there twice"):
        rbo(["a", "b", "a"], ["a"])


def test_mteb_two_revisions_of_one_model_are_refused(tmp_path):
    import shutil

    model = tmp_path / "example-org__model-a"
    source = f"{FIX}/mteb/example-org__model-a/0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(source, model / "rev1")
    shutil.copytree(source, model / "rev2")
    with pytest.raises(InputFormatError, match="pass one revision folder per model"):
        lb.from_mteb(tmp_path)
    with pytest.raises(InputFormatError, match="fewer than two systems"):  # one model alone
        lb.from_mteb(model / "rev1")


def test_cli_leaderboard(capsys, tmp_path):
    assert main(["leaderboard", "--resamples", "300", f"{FIX}/benchmark.csv"]) == 0
    captured = capsys.readouterr()
    assert "tied with the best: sys-a" in captured.out and "adjacent pairs separable" in captured.out
    assert "sys-l (no t8)" in captured.err and "warning: only 8 tasks" in captured.err
    target = tmp_path / "board.json"
    assert main(["leaderboard", "--mteb", "--format", "json", "-o", str(target),
                 "--resamples", "300", f"{FIX}/mteb"]) == 0
    data = json.loads(target.read_text())
    assert data["resampling"] == "tasks" and data["adjacent_pairs"] == 7
    assert len(data["systems"]) == 8 and data["systems"][0]["rank"] == 1
    assert main(["leaderboard", "--all-resamplings", "--format", "csv", "--resamples", "200",
                 f"{FIX}/benchmark.csv"]) == 0
    assert capsys.readouterr().out.startswith("system,rank,low_two-level")
    assert main(["leaderboard", "--columns", "a,b", f"{FIX}/benchmark.csv"]) == 2
    assert "`--columns` must be four or five comma-separated column names" in capsys.readouterr().err


def _latin1_runs(tmp_path):
    """The same run twice, once with Latin-1 ids (bytes 0xE9, not UTF-8) and once with the
    ids as UTF-8 text; and a second Latin-1 run that swaps two documents of q\\xe9."""
    lines = [b"q\xe9 Q0 caf\xe9 1 3.0 r", b"q\xe9 Q0 d2 2 2.0 r", b"q\xe9 Q0 d3 3 1.0 r",
             b"q2 Q0 d1 1 2.0 r", b"q2 Q0 d4 2 1.0 r"]
    latin = tmp_path / "latin.run"
    latin.write_bytes(b"\n".join(lines) + b"\n")
    utf8 = tmp_path / "utf8.run"
    utf8.write_bytes(b"\n".join(line.decode("latin-1").encode("utf-8") for line in lines) + b"\n")
    swapped = tmp_path / "swapped.run"
    swapped.write_bytes(b"\n".join([lines[1].replace(b"2.0", b"3.0"),
                                    lines[0].replace(b"3.0", b"2.0")] + lines[2:]) + b"\n")
    return latin, utf8, swapped


def test_similarity_reads_latin1_runs_as_eval_does(tmp_path):
    """issue 38: `similarity` refused a Latin-1 run that `eval` reads; it now reads it with
    eval's reader, and compares ids as bytes when only one run is Latin-1."""
    latin, utf8, swapped = _latin1_runs(tmp_path)
    same = run_similarity(latin, latin, n_resamples=20)
    assert same.id_encoding == "latin-1"
    assert same.per_query["query_id"].to_list() == ["q2", "q\xe9"]
    assert same.per_query["rbo"].to_list() == pytest.approx([1.0, 1.0], abs=1e-12)
    # one run Latin-1, one UTF-8: the UTF-8 ids in their Latin-1 view, so "caf\xc3\xa9"
    # (UTF-8 é) is not the Latin-1 "caf\xe9" and q\xe9 shares no query either
    mixed = run_similarity(latin, utf8, n_resamples=20)
    assert mixed.id_encoding == "latin-1" and mixed.per_query["query_id"].to_list() == ["q2"]
    assert mixed.only_a == ["q\xe9"] and mixed.only_b == ["q\xc3\xa9"]
    moved = run_similarity(latin, swapped, n_resamples=20)
    want = rbo(["caf\xe9", "d2", "d3"], ["d2", "caf\xe9", "d3"], p=0.9)
    got = moved.per_query.filter(pl.col("query_id") == "q\xe9")
    assert got["rbo"][0] == pytest.approx(float(want.ext), abs=1e-12)


def test_cli_similarity_latin1_writes_the_bytes_it_read(tmp_path, capsysbinary):
    latin, _, swapped = _latin1_runs(tmp_path)
    assert main(["similarity", "-q", "--format", "csv", "--resamples", "20", str(latin),
                 str(swapped)]) == 0
    assert b"\nq\xe9," in capsysbinary.readouterr().out
    assert main(["similarity", "--level", "1.5", str(latin), str(swapped)]) == 2


def test_bootstrap_options_are_one_helper(capsys):
    """The options `leaderboard` and `similarity` share are parsed by one helper: the same
    words for the same bad value in both."""
    for command in (["similarity", f"{RUNS}/bm25.run", f"{RUNS}/dense.run"],
                    ["leaderboard", f"{FIX}/benchmark.csv"]):
        for option, value, words in (("--level", "x", "`--level` must be a number strictly"
                                      " between 0 and 1; got 'x'"),
                                     ("--resamples", "0", "`--resamples`"),
                                     ("--threads", "0", "`--threads`")):
            assert main(command + [option, value]) == 2
            assert words in capsys.readouterr().err


# ids whose byte order is not their length or numeric order ("d10" < "d2" < "Z" < "z" <
# "é" < "€"): tied scores are broken by these, and the ids become integer codes first
_run = st.dictionaries(st.sampled_from(["q1", "q2", "q10", "qé"]),
                       st.dictionaries(st.sampled_from([f"d{i}" for i in range(12)]
                                                       + ["Z", "z", "é", "€"]),
                                       st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=1,
                                       max_size=9),
                       min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(_run, _run, st.integers(1, 6), st.one_of(st.none(), st.integers(1, 7)))
def test_run_similarity_lines_runs_up_as_trec_eval_orders_them(a, b, k, depth):
    """The numeric sort with doc ids ordering only tied scores gives trec_eval's order
    (score descending, doc id descending): the sets at k and the depth cut, where that
    order decides, against a plain loop."""
    common = sorted(set(a) & set(b))
    if not common:
        return
    s = run_similarity(a, b, k=k, depth=depth, n_resamples=5)
    assert s.per_query["query_id"].to_list() == common

    def ranked(run, q):
        docs = sorted(run[q], key=lambda d: (run[q][d], d), reverse=True)
        return docs[:depth] if depth else docs

    for row, q in zip(s.per_query.iter_rows(named=True), common):
        ra, rb = ranked(a, q), ranked(b, q)
        inter = len(set(ra[:k]) & set(rb[:k]))
        assert row["overlap"] == inter / k
        assert row["jaccard"] == inter / len(set(ra[:k]) | set(rb[:k]))
        assert row["shared"] == len(set(ra) & set(rb))
        want = rbo(ra, rb, x_scores=[a[q][d] for d in ra], y_scores=[b[q][d] for d in rb])
        assert row["rbo"] == pytest.approx(float(want.ext), abs=1e-12)
    # runs that come query by query, best first (queries in reverse id order): the
    # blocks are put in order without a row sort, and give the same numbers
    def blocks(run):
        rows = [(q, d, run[q][d]) for q in sorted(run, reverse=True)
                for d in sorted(run[q], key=lambda d: -run[q][d])]
        return pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")

    fast = run_similarity(blocks(a), blocks(b), k=k, depth=depth, n_resamples=5)
    assert fast.per_query.equals(s.per_query)
