"""compare under machine judgments: holes filled by a judge (``fill_from``) and label
distributions (``label_distributions``).

Each number of the comparison must be the one :mod:`irmetrics.judgment_formats`
computes for each run alone (one place computes it): the filled table against
evaluate_filled, the expected values and the paired difference's interval against
evaluate_uncertain with the same seed (the same label samples for both runs).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import irmetrics as irm
from irmetrics import stats
from irmetrics.cli import main
from irmetrics.exceptions import ParameterError
from irmetrics.judgment_formats import evaluate_filled, evaluate_uncertain

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "meta_evaluation"
HUMAN = str(FIXTURES / "qrels.human.txt")
MACHINE = str(FIXTURES / "qrels.llm.txt")
LABELS = str(FIXTURES / "labels.llm.dist.txt")
RUNS = {name: str(FIXTURES / f"{name}.run") for name in ("dense", "bm25", "splade")}


def test_filled_table_is_evaluate_filled_per_query_and_overall():
    cmp = irm.compare(HUMAN, RUNS, ["map", "P.10", "nDCG@10"], baseline="bm25",
                      fill_from=MACHINE)
    assert cmp.filled is not None and cmp.bounds is not None
    for system, path in RUNS.items():
        alone = evaluate_filled(HUMAN, MACHINE, path, ["map", "P.10", "nDCG@10"]).to_dict()
        for name in ("map", "P_10", "nDCG@10"):
            rows = cmp.filled.filter(measure=name, system=system)
            per_query = {r["query_id"]: r for r in rows.iter_rows(named=True)}
            for q in cmp.query_ids:
                r = per_query[q]
                assert (r["value"], r["human"], r["machine_share"]) == (
                    alone[q][name], alone[q][name + "_human"], alone[q][name + "_machine"])
            overall = per_query["all"]
            shares = [per_query[q]["machine_share"] for q in cmp.query_ids]
            assert overall["machine_share"] == pytest.approx(np.mean(shares), abs=1e-15)
            assert 0 < overall["machine_share"] < 1
    # The table compares the filled values; the bounds are those of the filled qrels.
    row = cmp.table().filter(measure="map", system="dense").row(0, named=True)
    dense = evaluate_filled(HUMAN, MACHINE, RUNS["dense"], ["map"]).aggregate()
    assert row["mean"] == pytest.approx(dense["map"], abs=1e-15)
    for r in cmp.bounds.iter_rows(named=True):
        assert r["diff_low"] <= r["diff"] <= r["diff_high"]


def test_filled_comparison_in_text_json_and_report():
    cmp = irm.compare(HUMAN, {k: RUNS[k] for k in ("dense", "bm25")}, ["map"],
                      baseline="bm25", fill_from=MACHINE)
    text = cmp.to_text()
    assert "Holes filled by a judge" in text and "holds at both ends" in text
    assert "  map: dense 0.8136; human only 0.8425; machine share 0.0389" in text
    assert {"filled", "bounds"} <= set(cmp.to_dict())
    pytest.importorskip("matplotlib")
    page = cmp.to_html()
    assert "<h3>Holes filled by a judge</h3>" in page and "0.0389" in page
    assert "Over every labelling of the unjudged documents" in page
    plain = irm.compare(HUMAN, {k: RUNS[k] for k in ("dense", "bm25")}, ["map"]).to_html()
    assert "Holes filled by a judge" not in plain and "label distributions" not in plain


def test_uncertain_comparison_is_the_paired_expected_difference():
    runs = {k: RUNS[k] for k in ("dense", "bm25")}
    cmp = irm.compare(HUMAN, runs, ["map", "P.10"], baseline="bm25",
                      label_distributions=LABELS, label_samples=100, seed=3)
    ex = {k: evaluate_uncertain(HUMAN, LABELS, path, ["map", "P.10"], samples=100, seed=3)
          for k, path in runs.items()}
    for name in ("map", "P_10"):
        dense, bm25 = (ex[k].results.values(name) for k in ("dense", "bm25"))
        row = cmp.table().filter(measure=name).row(0, named=True)
        assert row["diff"] == pytest.approx(float(np.mean(dense - bm25)), abs=1e-12)
        # The paired difference's interval: t over the per-topic expected differences.
        diff = stats.confidence_interval(dense - bm25, method="t", level=0.95)
        assert (row["ci_low"], row["ci_high"]) == (pytest.approx(float(diff.low), abs=1e-12),
                                                   pytest.approx(float(diff.high), abs=1e-12))
        for system in runs:
            r = cmp.uncertain.filter(measure=name, system=system).row(0, named=True)
            interval = ex[system].intervals[name]
            assert r["mean"] == pytest.approx(float(interval.mean), abs=1e-12)
            assert (r["ci_low"], r["ci_high"]) == (pytest.approx(float(interval.low), abs=1e-12),
                                                   pytest.approx(float(interval.high), abs=1e-12))
            se = ex[system].results.values(name + "_se")
            assert r["label_se"] == pytest.approx(np.sqrt(np.sum(se ** 2)) / se.size)
    # P@10 is exact (its label error 0); map is sampled.
    assert cmp.uncertain.filter(measure="P_10")["label_se"].to_list() == [0.0, 0.0]
    assert all(v > 0 for v in cmp.uncertain.filter(measure="map")["label_se"].to_list())


def test_uncertain_shares_the_label_samples_between_systems():
    # The same run twice: with the same draws the difference is exactly 0 on every topic
    # (independent draws would leave label noise in it). A planted bug, a different seed
    # per system, is seen by the same check.
    runs = {"a": RUNS["dense"], "b": RUNS["dense"]}
    cmp = irm.compare(HUMAN, runs, ["map"], label_distributions=LABELS, label_samples=20)
    assert cmp.table()["diff"].to_list() == [0.0]
    a = evaluate_uncertain(HUMAN, LABELS, RUNS["dense"], ["map"], samples=20, seed=0)
    b = evaluate_uncertain(HUMAN, LABELS, RUNS["dense"], ["map"], samples=20, seed=1)
    assert np.any(a.results.values("map") != b.results.values("map"))


def test_uncertain_report_and_curves():
    pytest.importorskip("matplotlib")
    cmp = irm.compare(HUMAN, {k: RUNS[k] for k in ("dense", "bm25")}, ["map"],
                      label_distributions=LABELS, label_samples=20)
    page = cmp.to_html()
    assert "<h3>Under the label distributions</h3>" in page
    assert "expected precision-recall curves are not computed" in page
    assert "Under the label distributions" in cmp.to_text() and "uncertain" in cmp.to_dict()


def test_refusals():
    runs = {k: RUNS[k] for k in ("dense", "bm25")}
    with pytest.raises(ParameterError, match="`label_distributions` must be None"):
        irm.compare(HUMAN, runs, ["map"], fill_from=MACHINE, label_distributions=LABELS)
    with pytest.raises(ParameterError, match="`qrels` must be"):
        res = {k: irm.evaluate(HUMAN, v, ["map"]) for k, v in runs.items()}
        irm.compare(None, res, ["map"], fill_from=MACHINE)
    evaluated = {"a": irm.evaluate(HUMAN, RUNS["bm25"], ["map"]), "b": RUNS["dense"]}
    for judge in ({"fill_from": MACHINE}, {"label_distributions": LABELS}):
        with pytest.raises(ParameterError, match="`runs` must be rankings to score"):
            irm.compare(HUMAN, evaluated, ["map"], **judge)
    with pytest.raises(ParameterError, match="`label_samples` must be"):
        irm.compare(HUMAN, runs, ["map"], label_distributions=LABELS, label_samples=1)
    with pytest.raises(ParameterError, match="measures with bounds"):
        irm.compare(HUMAN, runs, ["gm_bpref", "map"], fill_from=MACHINE)


def _cli(capsys, *argv):
    code = main(["compare", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_compare_fill_from_prints_the_library_numbers(capsys):
    code, out, _ = _cli(capsys, "--fill-from", MACHINE, "-m", "map", "-m", "P.10",
                        "--baseline", "bm25", HUMAN, f"dense={RUNS['dense']}",
                        f"bm25={RUNS['bm25']}")
    assert code == 0
    block = out[out.index("Holes filled by a judge"):].split("\n\n")[0].splitlines()
    assert block[1:] == [
        "  map: dense 0.8136; human only 0.8425; machine share 0.0389",
        "  map: bm25 0.6598; human only 0.6777; machine share 0.0551",
        "  P_10: dense 0.9400; human only 0.9400; machine share 0.0133",
        "  P_10: bm25 0.7967; human only 0.7933; machine share 0.0274"]
    assert "map: dense vs bm25: diff +0.1539 in [" in out


def test_cli_compare_label_distributions(capsys):
    code, out, _ = _cli(capsys, "--label-distributions", LABELS, "--label-samples", "50",
                        "-m", "P.10", "--baseline", "bm25", HUMAN, f"dense={RUNS['dense']}",
                        f"bm25={RUNS['bm25']}")
    assert code == 0
    assert "  P_10: dense 0.9440; s.e. 0.00000; [0.9158, 0.9722]\n" in out
    assert "  P_10: bm25 0.8027; s.e. 0.00000; [0.7576, 0.8478]\n" in out


@pytest.mark.parametrize("extra, message", [
    (["--fill-from", MACHINE, "--label-distributions", LABELS], "give one"),
    (["--fill-from", MACHINE, "-J"], "take neither -J"),
    (["--label-distributions", LABELS, "--bounds"], "take neither -J, --bounds"),
    (["--label-samples", "10"], "--label-samples goes with --label-distributions"),
    (["--label-distributions", LABELS, "--label-samples", "1"], "--label-samples"),
])
def test_cli_compare_refusals(capsys, extra, message):
    code, _, err = _cli(capsys, *extra, "-m", "map", HUMAN, RUNS["dense"], RUNS["bm25"])
    assert code in (1, 2) and message in err


def test_the_docs_page_shows_real_output(capsys):
    doc = (FIXTURES.parents[1] / "docs" / "incomplete_judgments.md").read_text()
    shown = {line[2:] for line in doc.splitlines() if line.startswith("# ")}
    _, out, _ = _cli(capsys, "--fill-from", MACHINE, "-m", "map", "-m", "P.10",
                     "--baseline", "bm25", HUMAN,
                     *(f"{n}={RUNS[n]}" for n in ("dense", "bm25", "splade")))
    wanted = [line for line in out.splitlines()
              if line.startswith("  map: ") or line.startswith("Holes filled")]
    assert len(wanted) == 6 and all(line in shown for line in wanted)
    _, out, _ = _cli(capsys, "--label-distributions", LABELS, "--label-samples", "200",
                     "-m", "map", "--baseline", "bm25", HUMAN, f"dense={RUNS['dense']}",
                     f"bm25={RUNS['bm25']}")
    wanted = [line for line in out.splitlines() if line.startswith("  map: ")
              or line.startswith("  dense ") or line.startswith("Under the label")]
    assert len(wanted) == 4 and all(line in shown for line in wanted)
    assert main(["eval", "--label-distributions", LABELS, "--label-samples", "200", "-m",
                 "map", "-m", "P.10", HUMAN, RUNS["dense"]]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 8 and all(line in shown for line in lines)


def paired_coverage(reps, topics, samples, seed=0):
    """Share of ``reps`` paired-difference intervals (nominal 95 %) that hold the
    population mean of the expected difference in RR. A topic has 3 documents, doc i
    relevant with probability ``p_i`` (p0 ~ U(0, 1), p1 ~ U(0, 1/2), p2 ~ U(0, 1)); A
    ranks d0 d1 d2, B ranks d1 d0 d2, so ``E[RR_A] - E[RR_B] = (p0 - p1) / 2`` per topic
    and its population mean is 1/8."""
    rng = np.random.default_rng(seed)
    hits = 0
    for rep in range(reps):
        p = rng.random((topics, 3)) * np.array([1.0, 0.5, 1.0])
        labels = {f"t{t}": {f"d{i}": {0: 1 - p[t, i], 1: p[t, i]} for i in range(3)}
                  for t in range(topics)}
        runs = {"A": {f"t{t}": {"d0": 3.0, "d1": 2.0, "d2": 1.0} for t in range(topics)},
                "B": {f"t{t}": {"d1": 3.0, "d0": 2.0, "d2": 1.0} for t in range(topics)}}
        cmp = irm.compare({}, runs, ["recip_rank"], baseline="B", label_distributions=labels,
                          label_samples=samples, seed=rep, threads=1)
        row = cmp.table().row(0, named=True)
        hits += row["ci_low"] <= 1 / 8 <= row["ci_high"]
    return hits / reps


def test_coverage_of_the_paired_difference_small():
    assert paired_coverage(reps=60, topics=20, samples=16) >= 0.93
