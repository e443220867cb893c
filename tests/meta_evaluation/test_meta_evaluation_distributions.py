"""``meta_evaluate`` / ``irmetrics agree`` with a judgment set given as label
distributions: values equal to :func:`evaluate_uncertain`, the same on any thread count,
the judges on the most likely label, the coverage of the leaderboard agreement's
interval, clear errors."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import irmetrics as irm
from irmetrics import stats
from irmetrics.exceptions import InputFormatError, ParameterError
from irmetrics.judgment_formats import evaluate_uncertain
from irmetrics.meta_evaluation import judge_agreement
from tests.meta_evaluation.test_meta_evaluation_cli import cli

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "meta_evaluation"
HUMAN = str(FIX / "qrels.human.txt")
DIST = str(FIX / "labels.llm.dist.txt")
RUNS = {r: str(FIX / f"{r}.run") for r in ("rerank", "dense", "bm25", "weak")}
MEASURES = ["map", "P.10", "ndcg_cut.10"]
SAMPLES = 24


def _meta(**options):
    options = {"label_samples": SAMPLES, "n_resamples": 200, "swap_trials": 50, **options}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.meta_evaluate({"human": HUMAN, "filled": HUMAN}, RUNS, MEASURES,
                                 label_distributions={"filled": DIST}, **options)


@pytest.fixture(scope="module")
def meta():
    return _meta()


def test_each_run_is_scored_by_its_expected_value(meta):
    for run, path in RUNS.items():
        ex = evaluate_uncertain(HUMAN, DIST, path, MEASURES, samples=SAMPLES, seed=0)
        cell = meta.grid.results[("filled", run)]
        assert cell.names == [n for n in ex.results.names if not n.endswith("_se")]
        for name in cell.names:
            np.testing.assert_array_equal(cell.values(name), ex.results.values(name))
        # the plain set is the plain evaluation
        plain = irm.evaluate(HUMAN, path, MEASURES)
        np.testing.assert_array_equal(meta.grid.results[("human", run)].values("map"),
                                      plain.values("map"))
        se = meta.uncertain.filter(meta.uncertain["run"] == run)
        for name, value in zip(se["measure"], se["label_se"]):
            assert value == ex.se[name]
            if name == "P_10":  # exact: no label-sampling error
                assert value == 0.0


def test_ranking_agreement_is_the_topic_bootstrap_of_the_expected_values(meta):
    names = list(RUNS)
    for measure in ("map", "ndcg_cut_10"):
        human = np.stack([irm.evaluate(HUMAN, RUNS[r], MEASURES).values(measure)
                          for r in names], axis=1)
        expected = np.stack([evaluate_uncertain(HUMAN, DIST, RUNS[r], MEASURES,
                                                samples=SAMPLES).results.values(measure)
                             for r in names], axis=1)
        res = stats.ranking_agreement(human, expected, k=3, n_resamples=200, seed=0)
        row = meta.rankings.filter(meta.rankings["measure"] == measure).row(0, named=True)
        assert (row["reference"], row["qrels"]) == ("human", "filled")
        for i, name in enumerate(res.statistics):
            assert row[name] == pytest.approx(float(res.estimate[i]), abs=0, nan_ok=True)
            assert row[f"{name}_low"] == float(res.ci_low[i])
            assert row[f"{name}_high"] == float(res.ci_high[i])


def test_identical_on_one_and_four_threads(meta):
    four = _meta(threads=4)
    one = _meta(threads=1)
    assert one.to_json() == four.to_json() == meta.to_json()
    assert one.to_csv() == four.to_csv()


def test_writers_say_how_the_distributions_were_used(meta):
    text = meta.to_text()
    assert "Qrels 'filled' as label distributions" in text
    assert "most likely label" in text
    assert "Label distributions: standard error" in text
    data = json.loads(meta.to_json())
    assert data["settings"]["label_distributions"] == ["filled"]
    assert data["settings"]["label_samples"] == SAMPLES
    assert {r["run"] for r in data["uncertain"]} == set(RUNS)
    assert "label_se" in meta.to_csv()
    assert "Label distributions: standard error" in meta.to_markdown()
    assert "label-distributions" in meta.to_html()


def test_judges_compare_the_most_likely_label():
    human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
    labels = {"q1": {"x": {0: 0.2, 2: 0.8}, "y": {1: 0.5, 2: 0.5}},
              "q2": {"z": {0: 0.6, 1: 0.4}}}
    llm = {"q1": {"a": 1, "x": 2, "y": 0}, "q2": {"c": 1, "z": 0}}
    runs = {"r1": {"q1": {"a": 3, "x": 2, "y": 1}, "q2": {"c": 2, "z": 1}},
            "r2": {"q1": {"y": 3, "x": 2, "a": 1}, "q2": {"z": 2, "c": 1}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = irm.meta_evaluate({"llm": llm, "mixed": human}, runs, "map", n_resamples=0,
                                 swap_trials=5, label_samples=4,
                                 label_distributions={"mixed": labels})
    # the most likely label; the lower of two equally likely ones (y: 1, not 2)
    modal = {"q1": {"a": 1, "b": 0, "x": 2, "y": 1}, "q2": {"c": 2, "z": 0}}
    direct = judge_agreement(llm, modal, names=("llm", "mixed"))
    got = meta.judges["mixed"]
    assert got.overall == direct.overall
    np.testing.assert_array_equal(got.confusion, direct.confusion)


def test_sets_made_of_distributions_only_and_a_new_name():
    labels_a = {"q1": {"a": {0: 0.5, 1: 0.5}, "b": {1: 1.0}},
                "q2": {"c": {0: 1.0}, "d": {1: 0.9, 0: 0.1}}}
    labels_b = {"q1": {"a": {1: 1.0}, "b": {0: 0.7, 1: 0.3}},
                "q2": {"c": {0: 0.5, 1: 0.5}, "d": {1: 1.0}}}
    runs = {"r1": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}},
            "r2": {"q1": {"b": 2, "a": 1}, "q2": {"d": 2, "c": 1}},
            "r3": {"q1": {"a": 2}, "q2": {"d": 2}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = irm.meta_evaluate(None, runs, "recip_rank", n_resamples=50, swap_trials=5,
                                 label_samples=16,
                                 label_distributions={"a": labels_a, "b": labels_b})
    assert meta.grid.qrels_names == ["a", "b"] and meta.reference == "a"
    for name, labels in (("a", labels_a), ("b", labels_b)):
        for run, ranking in runs.items():
            ex = evaluate_uncertain({}, labels, ranking, "recip_rank", samples=16)
            np.testing.assert_array_equal(meta.grid.results[(name, run)].values("recip_rank"),
                                          ex.results.values("recip_rank"))


def test_clear_errors():
    runs = {"r1": RUNS["bm25"], "r2": RUNS["weak"]}
    qrels = {"human": HUMAN, "filled": HUMAN}
    with pytest.raises(ParameterError, match="label_distributions"):
        irm.meta_evaluate(qrels, runs, "map", label_distributions=DIST)
    with pytest.raises(ParameterError, match="label_distributions"):
        irm.meta_evaluate(qrels, runs, "map", label_distributions={})
    with pytest.raises(ParameterError, match="label_samples"):
        irm.meta_evaluate(qrels, runs, "map", label_distributions={"filled": DIST},
                          label_samples=1)
    with pytest.raises(ParameterError, match="nugget"):
        irm.meta_evaluate(qrels, None, "all_score", nuggets="n.jsonl",
                          label_distributions={"filled": DIST})
    with pytest.raises(ParameterError, match="judged_only"):
        irm.meta_evaluate(qrels, runs, "map", label_distributions={"filled": DIST},
                          judged_only=True, label_samples=2)
    # a distribution for a document the plain qrels of that set judge: named
    with pytest.raises(InputFormatError, match=r"query_id '\w+', doc_id '[\w-]+'"):
        irm.meta_evaluate({"human": HUMAN, "llm": str(FIX / "qrels.llm.txt")}, runs, "map",
                          label_distributions={"llm": DIST}, label_samples=2)
    with pytest.raises(InputFormatError, match="must sum to 1"):
        irm.meta_evaluate(qrels, runs, "map", label_samples=2,
                          label_distributions={"filled": {"1001": {"new": {1: 0.5}}}})


# -- the coverage of the interval -------------------------------------------------------

def coverage(replications: int, *, topics: int = 30, samples: int = 4, seed: int = 0,
             label_sd: float = 0.3, gap: float = 0.04, noise: float = 0.1,
             resamples: int = 200) -> dict:
    """How often the 95 % interval of tau_b and tau_ap (reference: plain scores;
    other: per-topic means of ``samples`` noisy label samples, as meta_evaluate gives
    them) holds their value on the population means.

    Five systems ``gap`` apart; the other set swaps the second and third (true tau_b
    0.8, tau_ap 0.83); per-topic scores are system + topic + noise (sd ``noise``), and each
    label sample adds noise of sd ``label_sd``, so a topic's expected value carries an
    error of sd ``label_sd / sqrt(samples)`` (0.15: larger than the rest, on purpose)."""
    rng = np.random.default_rng(seed)
    reference = 0.3 + gap * np.arange(5.0)
    other = reference[[0, 2, 1, 3, 4]]
    truth = stats.ranking_agreement(reference, other, n_resamples=0).estimate
    hits = {"tau_b": 0, "tau_ap": 0}
    for _ in range(replications):
        topic = rng.normal(0, 0.15, (topics, 1))
        x = reference + topic + rng.normal(0, noise, (topics, 5))
        y = other + topic + rng.normal(0, noise, (topics, 5))
        y = y + rng.normal(0, label_sd, (samples, topics, 5)).mean(axis=0)
        res = stats.ranking_agreement(x, y, n_resamples=resamples,
                                      seed=int(rng.integers(2**31)))
        for i, name in enumerate(res.statistics[:2]):
            hits[name] += bool(res.ci_low[i] <= truth[i] <= res.ci_high[i])
    return {name: count / replications for name, count in hits.items()}


def test_the_interval_covers_the_agreement_of_the_expected_leaderboards():
    # 1000 replications (docs/meta_evaluation.md): tau_b 0.949, tau_ap 0.924
    got = coverage(60)
    assert got["tau_b"] >= 0.88 and got["tau_ap"] >= 0.88


# -- the command line ---------------------------------------------------------------------

def test_cli_equals_the_api(meta):
    status, out, err = cli("agree", "--qrels", f"human={HUMAN}", "--qrels", f"filled={HUMAN}",
                           "--label-distributions", f"filled={DIST}", "--label-samples",
                           str(SAMPLES), "--resamples", "200", "--swap-trials", "50",
                           "--format", "json", *[m for x in MEASURES for m in ("-m", x)],
                           *[f"{r}={p}" for r, p in RUNS.items()])
    assert status == 0, err
    assert json.loads(out) == json.loads(meta.to_json())


@pytest.mark.parametrize("extra, message", [
    (["--label-samples", "5"], "--label-samples goes with --label-distributions"),
    (["--label-distributions", f"filled={DIST}", "-J"], "neither -J"),
    (["--label-distributions", f"filled={DIST}", "--nuggets", "n.jsonl"], "give one"),
    (["--label-distributions", f"filled={DIST}", "--label-samples", "1"], "--label-samples"),
])
def test_cli_errors(extra, message):
    status, _, err = cli("agree", "--qrels", f"human={HUMAN}", "--qrels", f"filled={HUMAN}",
                         *extra, RUNS["bm25"], RUNS["weak"])
    assert status in (1, 2) and message in err and "Traceback" not in err


def test_cli_label_file_errors_name_line_query_and_doc(tmp_path):
    bad = tmp_path / "bad.dist"
    bad.write_text("1001 0 new 0 0.5\n1001 0 new 1 0.4\n")
    status, _, err = cli("agree", "--qrels", f"human={HUMAN}", "--label-distributions",
                         f"llm={bad}", RUNS["bm25"], RUNS["weak"])
    assert status == 2 and "must sum to 1" in err and "'new'" in err and "bad.dist" in err


def test_docs_example_is_current(monkeypatch):
    doc = (ROOT / "docs" / "meta_evaluation.md").read_text()
    section = doc.split("### Judgment sets as label distributions", 1)[1].split("\n### ", 1)[0]
    code = section.split("```python\n", 1)[1].split("\n```", 1)[0]
    monkeypatch.chdir(ROOT)
    shown = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    statements = [line for line in code.splitlines() if not line.startswith("# ")]
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec("\n".join(statements[:-2]), namespace)
        got = [repr(eval(statements[-2], namespace)), repr(eval(statements[-1], namespace))]
    assert got == shown


def test_one_distribution_set_against_a_leaderboard():
    runs = {r: RUNS[r] for r in ("rerank", "bm25", "weak")}
    board = {"rerank": 0.9, "bm25": 0.5, "weak": 0.7}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = irm.meta_evaluate(None, runs, "map", leaderboard=board, label_samples=4,
                                 label_distributions={"llm": DIST}, n_resamples=50,
                                 swap_trials=5)
    expected = [evaluate_uncertain({}, DIST, path, "map", samples=4).results.aggregate()["map"]
                for path in runs.values()]
    res = stats.ranking_agreement(np.array(list(board.values())), np.array(expected),
                                  n_resamples=0)
    row = meta.rankings.row(0, named=True)
    assert (row["reference"], row["qrels"]) == ("leaderboard", "llm")
    assert row["tau_b"] == pytest.approx(float(res.estimate[0]))
    assert meta.judges == {}
