"""irmetrics.rag against the real tools: castorini/nuggetizer's metric code and
autojudge-evaluate's correlation table; the readers' errors; the bundled fixtures."""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics import rag
from irmetrics.exceptions import InputFormatError, MissingQueriesWarning, ParameterError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "rag"
SCORES = ("strict_vital_score", "strict_all_score", "vital_score", "all_score")


def _write(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _nuggetizer():
    return pytest.importorskip("nuggetizer.core.metrics")


def _pyircore():
    """autojudge-evaluate's tau_AP_b module, loaded alone: importing the package needs
    NLTK data from the network (autojudge_base), its correlation code does not."""
    spec = importlib.util.find_spec("autojudge_evaluate")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("autojudge-evaluate is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "pyircore.py"
    module_spec = importlib.util.spec_from_file_location("autojudge_pyircore", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def _autojudge_correlation(a, b, method):
    # autojudge_evaluate.evaluation.correlation: pandas' DataFrame.corr of the two columns.
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame([{"a": i, "b": j} for i, j in zip(a, b)])
    return float(df.corr(method).iloc[0]["b"])


# -- nuggetizer -----------------------------------------------------------------------------

def _scored(records, tmp_path, run_id="r"):
    path = _write(tmp_path / "assign.jsonl", records)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        return rag.nugget_scores(rag.read_assignments(path, run_id=run_id))


def _assert_as_nuggetizer(scores, records) -> None:
    """Every answer's four scores equal nuggetizer's own, bit for bit (same counts, same
    divisions)."""
    metrics = _nuggetizer()
    for record in records:
        want = metrics.calculate_nugget_scores(record["qid"], record["nuggets"])
        row = scores.frame.filter(run_id=record["run_id"], topic_id=record["qid"]).row(
            0, named=True)
        assert [row[m] for m in SCORES] == [want.strict_vital_score, want.strict_all_score,
                                            want.vital_score, want.all_score]


def test_nuggetizer_fixture(tmp_path):
    # nuggetizer's tests/test_scripts.py: one answer, a vital supported and an okay partial.
    records = [{"qid": "q1", "nuggets": [
        {"text": "a", "importance": "vital", "assignment": "support"},
        {"text": "b", "importance": "okay", "assignment": "partial_support"}]}]
    row = _scored(records, tmp_path).frame.row(0, named=True)
    assert [row[m] for m in SCORES] == [1.0, 0.5, 1.0, 0.75]
    metrics = _nuggetizer()
    got = metrics.calculate_nugget_scores("q1", records[0]["nuggets"])
    assert [got.strict_vital_score, got.strict_all_score, got.vital_score,
            got.all_score] == [row[m] for m in SCORES]


_nugget = st.fixed_dictionaries({
    "text": st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"]),
    "importance": st.sampled_from(rag.IMPORTANCE),
    "assignment": st.sampled_from(rag.ASSIGNMENT)})


@st.composite
def _assignment_files(draw):
    records = []
    for run in draw(st.lists(st.sampled_from(["r1", "r2", "r3"]), min_size=1, max_size=3,
                             unique=True)):
        for topic in draw(st.lists(st.sampled_from([f"t{i}" for i in range(12)]),
                                   min_size=1, max_size=8, unique=True)):
            nuggets = draw(st.lists(_nugget, min_size=1, max_size=9))
            records.append({"qid": topic, "run_id": run, "nuggets": nuggets})
    return records


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_assignment_files())
def test_equals_nuggetizer_on_generated_assignments(records, tmp_path):
    metrics = _nuggetizer()
    scores = _scored(records, tmp_path)
    assert scores.frame.height == len(records)
    _assert_as_nuggetizer(scores, records)
    for run in scores.runs:
        mine = scores.means().filter(run_id=run).row(0, named=True)
        glob = metrics.calculate_global_metrics([r for r in records if r["run_id"] == run])
        for m in SCORES:
            assert mine[m] == pytest.approx(glob[m], abs=1e-15)


def test_generated_assignments_reach_every_branch():
    # The strategy above makes topics without vital nuggets and partial support: the
    # branches a wrong port (partial as full, vital scores NaN) would get wrong.
    from hypothesis import find
    find(_assignment_files(), lambda rs: any(
        all(n["importance"] == "okay" for n in r["nuggets"]) for r in rs))
    find(_assignment_files(), lambda rs: any(
        n["assignment"] == "partial_support" for r in rs for n in r["nuggets"]))


def test_equals_nuggetizer_on_the_bundled_fixture():
    _nuggetizer()
    with pytest.warns(MissingQueriesWarning, match="bm25-gen/2024-1021"):
        scores = rag.nugget_scores(FIX / "assignments.human.jsonl", FIX / "nuggets.jsonl")
    assert scores.unscored.rows() == [("bm25-gen", "2024-1021",
                                       "the answer was assessed against no nugget")]
    records = [json.loads(line) for line in
               (FIX / "assignments.human.jsonl").read_text().splitlines()]
    scored = [r for r in records if r["nuggets"]]
    assert scores.frame.height == len(scored) == 80
    _assert_as_nuggetizer(scores, scored)


def test_weighted_recall():
    frame = pl.DataFrame({"run_id": ["r"] * 3, "topic_id": ["q"] * 3, "line": [1] * 3,
                          "nugget": [0, 1, 2], "text": ["a", "b", "c"],
                          "importance": ["vital", "okay", "okay"],
                          "assignment": ["partial_support", "support", "not_support"]})
    got = rag.nugget_scores(frame, weights={"vital": 3.0, "okay": 1.0}).frame
    assert got["weighted_recall"][0] == pytest.approx((3 * 0.5 + 1) / 5)
    with pytest.raises(ParameterError, match="weights"):
        rag.nugget_scores(frame, weights={"vital": 1.0})
    with pytest.raises(ParameterError, match="positive"):
        rag.nugget_scores(frame, weights={"vital": 1.0, "okay": 0.0})


# -- bad input ------------------------------------------------------------------------------

def test_label_outside_the_scale_names_line_topic_and_run(tmp_path):
    path = _write(tmp_path / "a.jsonl", [
        {"qid": "q1", "run_id": "sysA", "nuggets": [
            {"text": "a", "importance": "vital", "assignment": "support"}]},
        {"qid": "q2", "run_id": "sysA", "nuggets": [
            {"text": "a", "importance": "vital", "assignment": "supported"}]}])
    with pytest.raises(InputFormatError) as err:
        rag.read_assignments(path)
    text = str(err.value)
    assert "a.jsonl:2" in text and "'q2'" in text and "'sysA'" in text and "'supported'" in text


def test_assignment_to_a_nugget_that_does_not_exist(tmp_path):
    nuggets = _write(tmp_path / "n.jsonl", [
        {"qid": "q1", "nuggets": [{"text": "a", "importance": "vital"}]}])
    assigned = _write(tmp_path / "a.jsonl", [
        {"qid": "q1", "run_id": "sysA", "nuggets": [
            {"text": "a", "importance": "vital", "assignment": "support"},
            {"text": "zzz", "importance": "okay", "assignment": "support"}]}])
    with pytest.raises(InputFormatError, match=r"a.jsonl:1: nugget 1 of run 'sysA' \('zzz'\)"
                                               r" is not a nugget.*query_id 'q1'"):
        rag.nugget_scores(assigned, nuggets)


def test_answers_without_nuggets_are_listed_not_scored(tmp_path):
    nuggets = _write(tmp_path / "n.jsonl", [
        {"qid": "q1", "nuggets": [{"text": "a", "importance": "vital"}]}])
    assigned = _write(tmp_path / "a.jsonl", [
        {"qid": "q1", "run_id": "s", "nuggets": [
            {"text": "a", "importance": "vital", "assignment": "support"}]},
        {"qid": "q9", "run_id": "s", "nuggets": [
            {"text": "a", "importance": "vital", "assignment": "support"}]},
        {"qid": "q2", "run_id": "s", "nuggets": []}])
    with pytest.warns(MissingQueriesWarning, match="2 answers"):
        scores = rag.nugget_scores(assigned, nuggets)
    assert scores.frame["topic_id"].to_list() == ["q1"]
    assert scores.unscored.select("topic_id").to_series().to_list() == ["q2", "q9"]


@pytest.mark.parametrize("text, match", [
    ("not json\n", r"f.jsonl:1: not a JSON object"),
    ('{"qid": "q", "nuggets": [{"text": "a", "importance": "high"}]}\n',
     r"`importance` must be one of vital, okay.*'high'"),
    ('{"qid": "q", "nuggets": []}\n{"qid": "q", "nuggets": []}\n',
     r"f.jsonl:2: topic given twice \(first on line 1\)"),
    ('{"nuggets": []}\n', r"f.jsonl:1: no topic id"),
    ("\n", r"no records"),
])
def test_nugget_file_errors(tmp_path, text, match):
    path = tmp_path / "f.jsonl"
    path.write_text(text)
    with pytest.raises(InputFormatError, match=match):
        rag.read_nuggets(path)


def _answer(**extra):
    record = {"run_id": "sysA", "topic_id": "2024-1",
              "references": ["msmarco_v2.1_doc_02_1767598871#0_2981309782", "d#2"],
              "answer": [{"text": "x", "citations": [0, 0]}, {"text": "y", "citations": [1]}]}
    record.update(extra)
    return record


def test_answers_keep_hash_in_segment_ids_and_2025_narrative_ids(tmp_path):
    rec25 = _answer(narrative_id="n7")
    del rec25["topic_id"]
    answers = rag.read_answers(_write(tmp_path / "a.jsonl", [_answer(), rec25]))
    assert answers.citations.filter(topic_id="2024-1")["segment_id"].to_list() == [
        "msmarco_v2.1_doc_02_1767598871#0_2981309782", "d#2"]   # the repeated 0 counts once
    assert answers.answers["topic_id"].to_list() == ["2024-1", "n7"]


def test_citation_out_of_references(tmp_path):
    bad = _answer(answer=[{"text": "x", "citations": [2]}])
    with pytest.raises(InputFormatError, match=r"a.jsonl:1: sentence 0 cites 2, which is not an"
                                               r" index into its 2 references in run 'sysA'"
                                               r" \(query_id '2024-1'\)"):
        rag.read_answers(_write(tmp_path / "a.jsonl", [bad]))


def test_citation_of_a_segment_not_in_the_run(tmp_path):
    answers = rag.read_answers(_write(tmp_path / "a.jsonl", [_answer()]))
    run = irm.Run.from_dict({"2024-1": {"msmarco_v2.1_doc_02_1767598871#0_2981309782": 2.0}})
    with pytest.raises(InputFormatError, match=r"a.jsonl:1: a cited segment is not in run"
                                               r" 'sysA' for the topic \(query_id '2024-1',"
                                               r" doc_id 'd#2'\)"):
        rag.check_citations(answers, {"sysA": run})
    with pytest.raises(ParameterError, match="lacking 'sysA'"):
        rag.check_citations(answers, {"other": run})


def test_citation_scores_on_the_fixture():
    answers = rag.read_answers(FIX / "answers.jsonl")
    runs = {r: FIX / f"{r}.run" for r in answers.answers["run_id"].unique()}
    got = rag.citation_scores(answers, runs)
    assert got.height == 80
    # Every answer ends with one uncited sentence; answers cite only the top 5 segments.
    assert (got["cited_sentences"] == got["sentences"] - 1).all()
    assert got["mean_cited_rank"].drop_nulls().is_between(1, 5).all()


# -- autojudge-evaluate ---------------------------------------------------------------------

# autojudge-evaluate's tests/test_correlations.py and test_tau_ap_correlations.py.
_AUTOJUDGE_CASES = [
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [10, 20, 30, 40, 50, 60, 70, 80, 100, 90],
     {"kendall": 0.9555555555, "tauap_b": 0.7777777777}),
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [20, 10, 30, 40, 50, 60, 70, 80, 90, 100],
     {"kendall": 0.9555555555, "tauap_b": 0.9753086}),
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10],
     {"kendall": -1.0, "tauap_b": -1.0}),
]


@pytest.mark.parametrize("a, b, expected", _AUTOJUDGE_CASES)
def test_autojudge_fixture_values(a, b, expected):
    table = rag.leaderboard_correlations(a, b)
    got = dict(zip(table["statistic"], table["estimate"]))
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-7)
        # both directions, as autojudge-evaluate's tests check
        again = dict(rag.leaderboard_correlations(b, a).select("statistic", "estimate").rows())
        assert again[name] == pytest.approx(value, abs=1e-7)


@settings(max_examples=80, deadline=None)
@given(pairs=st.integers(3, 12).flatmap(lambda m: st.tuples(
    st.lists(st.integers(0, 4).map(lambda v: v / 4), min_size=m, max_size=m),
    st.lists(st.integers(0, 4).map(lambda v: v / 4), min_size=m, max_size=m))))
def test_equals_autojudge_evaluate_with_ties(pairs):
    pyircore = _pyircore()
    a, b = pairs
    table = dict(rag.leaderboard_correlations(a, b).select("statistic", "estimate").rows())
    for method in ("kendall", "pearson", "spearman"):
        want = _autojudge_correlation(a, b, method)
        if np.isnan(want):
            assert np.isnan(table[method])
        else:
            assert table[method] == pytest.approx(want, abs=1e-12)
    if len(set(a)) > 1 and len(set(b)) > 1:
        assert table["tauap_b"] == pytest.approx(pyircore.tauap_b(a, b), abs=1e-12)


def test_asymmetric_tau_ap_would_fail_the_autojudge_check():
    # The planted bug "tau_AP one way" differs from autojudge's tau_AP_b where the swaps
    # are not mirror images, so the comparison above can catch it.
    pyircore = _pyircore()
    a, b = [1, 2, 3, 4, 5, 6], [3, 1, 2, 4, 6, 5]
    assert float(irm.stats.tau_ap(a, b)) != pytest.approx(pyircore.tauap_b(a, b), abs=1e-3)
    table = dict(rag.leaderboard_correlations(a, b).select("statistic", "estimate").rows())
    assert table["tauap_b"] == pytest.approx(pyircore.tauap_b(a, b), abs=1e-12)


def test_leaderboard_intervals_from_per_topic_scores():
    rng = np.random.default_rng(7)
    truth = rng.random((25, 5)) + np.arange(5) * 0.1
    judge = truth + rng.normal(0, 0.05, truth.shape)
    first = rag.leaderboard_correlations(truth, judge, n_resamples=300, seed=3)
    again = rag.leaderboard_correlations(truth, judge, n_resamples=300, seed=3)
    assert first.equals(again)
    on_means = rag.leaderboard_correlations(truth.mean(0), judge.mean(0))
    np.testing.assert_allclose(first["estimate"], on_means["estimate"], atol=1e-12)
    assert (first["ci_low"] <= first["estimate"] + 1e-12).all()
    assert (first["estimate"] <= first["ci_high"] + 1e-12).all()
    assert on_means["ci_low"].is_nan().all()
    with pytest.raises(irm.exceptions.ShapeError, match="at least 3 systems"):
        rag.leaderboard_correlations([1, 2], [2, 1])


# -- the fixtures end to end ----------------------------------------------------------------

def _fixture_scores(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        return rag.nugget_scores(FIX / f"assignments.{name}.jsonl", FIX / "nuggets.jsonl")


def test_compare_two_rag_systems():
    scores = _fixture_scores("human")
    systems = scores.systems()
    cmp = irm.compare(None, {k: systems[k] for k in ("bm25-gen", "dense-gen")},
                      ["all_score", "vital_score"], baseline="bm25-gen")
    table = cmp.table()
    assert table.height == 2 and table["n_queries"].to_list() == [20, 20]
    row = table.filter(measure="all_score").row(0, named=True)
    means = scores.means()
    assert row["diff"] == pytest.approx(
        means.filter(run_id="dense-gen")["all_score"][0]
        - means.filter(run_id="bm25-gen")["all_score"][0])


def test_human_and_llm_assessors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        human = rag.read_assignments(FIX / "assignments.human.jsonl")
        llm = rag.read_assignments(FIX / "assignments.llm.jsonl")
        agree = rag.assessor_agreement(human, llm, n_resamples=200)
    labels = agree.labels
    a = labels["reference"].to_numpy()
    b = labels["other"].to_numpy()
    sklearn = pytest.importorskip("sklearn.metrics")
    assert agree.kappa == pytest.approx(sklearn.cohen_kappa_score(a, b), abs=1e-12)
    assert 0.5 < agree.kappa < 1 and agree.runs == sorted(agree.runs)
    assert agree.ranking.n_topics == 20 and agree.ranking.n_systems == 4


def test_retrieval_vs_generation_on_the_fixture():
    scores = _fixture_scores("human")
    retrieval = {r: irm.evaluate(FIX / "qrels.txt", FIX / f"{r}.run", ["ndcg_cut_10"])
                 for r in scores.runs}
    rv = rag.retrieval_vs_generation(retrieval, scores, retrieval_measure="ndcg_cut_10",
                                     n_resamples=200)
    assert rv.per_topic.height == 80
    row = rv.per_topic.row(0, named=True)
    assert row["retrieval"] == pytest.approx(
        float(retrieval[row["run_id"]].values("ndcg_cut_10")[0]))
    assert rv.across_topics.height == 12 and rv.across_systems is not None
    # across systems: the correlation of the two leaderboards
    x = np.array([retrieval[r].values("ndcg_cut_10").mean() for r in scores.runs])
    y = scores.means()["all_score"].to_numpy()
    want = _autojudge_correlation(x, y, "pearson")
    got = rv.across_systems.filter(statistic="pearson")["estimate"][0]
    assert got == pytest.approx(want, abs=1e-12)


def test_fixtures_are_what_make_py_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("make_rag_fixtures", FIX / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.HERE = tmp_path
    module.main()
    for path in sorted(tmp_path.iterdir()):
        assert path.read_bytes() == (FIX / path.name).read_bytes(), path.name


def test_docs_worked_example_prints_what_the_page_shows(monkeypatch, capsys):
    import re

    doc = (FIX.parents[1] / "docs" / "rag.md").read_text()
    code = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    shown = re.search(r"prints\n\n```text\n(.*?)```", doc, re.S).group(1)
    monkeypatch.chdir(FIX)
    with warnings.catch_warnings():
        exec(compile(code, "docs/rag.md", "exec"), {})
    assert capsys.readouterr().out == shown


def test_cli_compare_reads_written_nugget_scores(tmp_path, capsys):
    from irmetrics.cli import main

    scores = _fixture_scores("human")
    paths = []
    for run in ("bm25-gen", "dense-gen"):
        scores.write_per_query(run, tmp_path / f"{run}.eval")
        paths.append(str(tmp_path / f"{run}.eval"))
        back = irm.io.per_query.read_per_query(tmp_path / f"{run}.eval")
        for m in rag.NUGGET_MEASURES:   # full precision: the same numbers come back
            assert back.values(m).tolist() == scores.per_query(run).values(m).tolist()
    status = main(["compare", "-m", "all_score", "--format", "csv", *paths])
    out = capsys.readouterr().out
    assert status in (0, None), out
    systems = scores.systems()
    want = irm.compare(None, {k: systems[k] for k in ("bm25-gen", "dense-gen")},
                       ["all_score"], baseline="bm25-gen").table().row(0, named=True)
    import io
    got = pl.read_csv(io.StringIO(out)).row(0, named=True)
    assert (got["system"], got["baseline"]) == ("dense-gen.eval", "bm25-gen.eval")
    for column in ("diff", "ci_low", "ci_high", "p_value"):
        assert got[column] == pytest.approx(want[column], rel=1e-12)


# autojudge-evaluate's tests/test_evaluation.py: two "tot" leaderboards and its table.
_EXAMPLE_01 = """
run_01 ORACLE query-01 1
run_02 ORACLE query-01 2
run_03 ORACLE query-01 3
run_04 ORACLE query-01 4
run_01 ORACLE all 1
run_02 ORACLE all 2
run_03 ORACLE all 3
run_04 ORACLE all 4
"""
_EXAMPLE_02 = "".join(
    f"run_0{r} {m} {t} {v}\n" for m, values in (("M1", (1, 3, 2, 4)), ("M2", (4, 3, 2, 1)))
    for t in ("query-01", "all") for r, v in zip(range(1, 5), values))


@pytest.mark.parametrize("truth, judge, truth_m, judge_m, expected", [
    ("l1", "l2", "ORACLE", "M1", (0.666666666, 0.8, 0.8, 0.666666666)),
    ("l1", "l2", "ORACLE", "M2", (-1.0, -1.0, -1.0, -1.0)),
    ("l2", "l2", "M2", "M1", (-0.666666666, -0.8, -0.8, -0.666666666)),
    ("l2", "l1", "M2", "ORACLE", (-1.0, -1.0, -1.0, -1.0)),
    ("l1", "l1", "ORACLE", "ORACLE", (1.0, 1.0, 1.0, 1.0)),
])
def test_autojudge_meta_evaluate_table(tmp_path, truth, judge, truth_m, judge_m, expected):
    (tmp_path / "l1").write_text(_EXAMPLE_01)
    (tmp_path / "l2").write_text(_EXAMPLE_02)
    table = rag.judge_correlations(tmp_path / truth, tmp_path / judge, truth_measure=truth_m,
                                   judge_measure=judge_m)
    assert table["statistic"].to_list() == ["kendall", "pearson", "spearman", "tauap_b"]
    np.testing.assert_allclose(table["estimate"], expected, atol=1e-5)
    # one topic: every resample is that topic, the interval is the point
    np.testing.assert_allclose(table["ci_low"], expected, atol=1e-5)


def test_judge_correlations_intervals_and_formats(tmp_path):
    rng = np.random.default_rng(11)
    runs, topics = [f"r{i}" for i in range(6)], [f"t{j}" for j in range(15)]
    truth = rng.random((15, 6)) + np.linspace(0, 0.5, 6)
    judge = truth + rng.normal(0, 0.1, truth.shape)
    lines = [f"{r} {t} nugget_coverage {float(truth[j, i])!r}" for j, t in enumerate(topics)
             for i, r in enumerate(runs)]
    (tmp_path / "truth.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "judge.jsonl").write_text("".join(
        json.dumps({"run_id": r, "topic_id": t, "measure": "score", "value": float(judge[j, i])})
        + "\n" for j, t in enumerate(topics) for i, r in enumerate(runs)))
    t = rag.read_leaderboard(tmp_path / "truth.txt", format="ir_measures")
    j = rag.read_leaderboard(tmp_path / "judge.jsonl", format="jsonl")
    got = rag.judge_correlations(t, j, truth_measure="nugget_coverage", judge_measure="score",
                                 n_resamples=200)
    want = rag.leaderboard_correlations(truth, judge, n_resamples=200)
    np.testing.assert_allclose(got["estimate"], want["estimate"], atol=1e-12)
    np.testing.assert_allclose(got["ci_low"], want["ci_low"], atol=1e-12)
    with pytest.raises(ParameterError, match=r"only in truth: \['r5'\]"):
        rag.judge_correlations(t, j.filter(pl.col("run_id") != "r5"),
                               truth_measure="nugget_coverage", judge_measure="score")
    with pytest.raises(ParameterError, match="truth_measure"):
        rag.judge_correlations(t, j, truth_measure="nope", judge_measure="score")


@pytest.mark.parametrize("text, match", [
    ("r1 M t1\n", r"b.txt:1: a tot line has 4 fields"),
    ("r1 M t1 x\n", r"b.txt:1: the value 'x' of measure 'M' in run 'r1' is not a number"
                    r" \(query_id 't1'\)"),
    ("r1 M t1 1\nr1 M t1 2\n", r"b.txt:2: measure 'M' of run 'r1' given twice"),
])
def test_leaderboard_errors(tmp_path, text, match):
    (tmp_path / "b.txt").write_text(text)
    with pytest.raises(InputFormatError, match=match):
        rag.read_leaderboard(tmp_path / "b.txt")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_assignment_files(), marks=st.lists(st.tuples(st.integers(0, 100),
                                                           st.sampled_from(["importance",
                                                                            "assignment"])),
                                                  max_size=6))
def test_failed_marks_kept_are_scored_as_nuggetizer_does(records, marks, tmp_path):
    _nuggetizer()
    flat = [n for r in records for n in r["nuggets"]]
    for at, key in marks:
        flat[at % len(flat)][key] = rag.FAILED
    path = _write(tmp_path / "assign.jsonl", records)
    if marks:
        with pytest.raises(InputFormatError, match="failed='keep'"):
            rag.read_assignments(path)
    _assert_as_nuggetizer(rag.nugget_scores(rag.read_assignments(path, failed="keep")),
                          records)


@pytest.mark.parametrize("nuggets, match", [
    (["just text"], r"nugget 0 must be an object with a string `text` in run 's'"),
    ([{"text": 3, "importance": "vital", "assignment": "support"}],
     r"nugget 0 must be an object with a string `text`"),
    ([{"text": "a", "importance": "vital"}], r"nugget 0 `assignment` must be one of.*None"),
    ([{"text": "a", "importance": "vital", "assignment": "support"},
      {"text": "b", "importance": "high", "assignment": "support"}],
     r"nugget 1 `importance` must be one of vital, okay in run 's'; got 'high'"),
    ([{"text": "a", "importance": "vital", "assignment": "failed"}],
     r"got 'failed' \(nuggetizer's mark of a failed LLM call"),
    ("none", r"`nuggets` must be a list in run 's'"),
])
def test_bad_nuggets_in_assignments(tmp_path, nuggets, match):
    good = {"qid": "q0", "run_id": "s", "nuggets": [
        {"text": "a", "importance": "okay", "assignment": "support"}]}
    path = _write(tmp_path / "a.jsonl", [good, {"qid": "q1", "run_id": "s",
                                                "nuggets": nuggets}])
    with pytest.raises(InputFormatError, match=match) as err:
        rag.read_assignments(path)
    assert "a.jsonl:2" in str(err.value) and "query_id 'q1'" in str(err.value)


def test_assignments_of_answers_without_nuggets_only(tmp_path):
    path = _write(tmp_path / "a.jsonl", [{"qid": "q1", "nuggets": []},
                                         {"qid": "q2", "nuggets": []}])
    frame = rag.read_assignments(path)
    assert frame.rows() == [("a", "q1", 1, None, None, None, None),
                            ("a", "q2", 2, None, None, None, None)]


def test_html_report_of_rag_systems(tmp_path):
    pytest.importorskip("matplotlib")
    scores = _fixture_scores("human")
    cmp = irm.compare(None, scores.systems(), ["all_score", "weighted_recall"],
                      baseline="bm25-gen")
    cmp.to_html(tmp_path / "rag.html")
    page = (tmp_path / "rag.html").read_text()
    assert "all_score" in page and "weighted_recall" in page and "dense-gen" in page
