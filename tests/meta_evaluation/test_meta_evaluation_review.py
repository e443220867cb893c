"""Regression tests of the review of the meta-evaluation (issue 28): every case gave a
crash, a silent wrong number or a weak message before its fix."""

from __future__ import annotations

import io
import sys
import warnings

import numpy as np
import pytest

import irmetrics as irm
from irmetrics import stats
from irmetrics.cli import main
from irmetrics.exceptions import ParameterError
from irmetrics.parallel import block_generators

HUMAN = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d1 1\nq2 0 d4 0\nq2 0 d2 2\nq3 0 d3 1\nq3 0 d1 0\n"
LLM = "q1 0 d1 2\nq1 0 d2 2\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 1\nq2 0 d2 2\nq3 0 d3 0\nq3 0 d1 1\n"
ORDERS = {"A": {"q1": ["d1", "d2", "d3"], "q2": ["d2", "d1", "d4"], "q3": ["d3", "d1"]},
          "B": {"q1": ["d2", "d1", "d3"], "q2": ["d1", "d2", "d4"], "q3": ["d1", "d3"]},
          "C": {"q1": ["d3", "d2", "d1"], "q2": ["d4", "d1", "d2"], "q3": ["d1", "d3"]},
          "D": {"q1": ["d3", "d1", "d2"], "q2": ["d4", "d2", "d1"], "q3": ["d3", "d1"]}}


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        status = main([str(a) for a in argv])
    finally:
        sys.stdout, sys.stderr = saved
    return status, out.getvalue(), err.getvalue()


@pytest.fixture()
def small(tmp_path):
    """A human and an LLM qrels of three topics and four runs, as files."""
    (tmp_path / "h.txt").write_text(HUMAN)
    (tmp_path / "l.txt").write_text(LLM)
    runs = []
    for name, order in ORDERS.items():
        lines = [f"{q} Q0 {d} {r + 1} {10 - r} {name}" for q, docs in order.items()
                 for r, d in enumerate(docs)]
        (tmp_path / f"{name}.run").write_text("\n".join(lines) + "\n")
        runs.append(tmp_path / f"{name}.run")
    return tmp_path, runs


def _agree(small, *extra, qrels=("h=h.txt", "l=l.txt")):
    tmp, runs = small
    named = [arg for q in qrels for arg in ("--qrels", q if "=" not in q else
                                            q.split("=")[0] + "=" + str(tmp / q.split("=")[1]))]
    return cli("agree", "--resamples", 20, "--swap-trials", 20, *named, *extra, *runs)


# -- swap rate: bounded bins and memory ------------------------------------------------------

def test_swap_rate_bin_width_far_below_the_differences_is_a_clear_error():
    scores = [[0.1, 0.9], [0.2, 0.7], [0.4, 0.3], [0.0, 1.0]]
    with pytest.raises(ParameterError, match="bin_width.*bins"):
        stats.swap_rate(scores, bin_width=1e-300)
    with pytest.raises(ParameterError, match="finite"):
        stats.swap_rate([[1.7e308, -1.7e308]] * 4)


def test_swap_rate_tallies_per_block_equal_one_histogram():
    rng = np.random.default_rng(3)
    scores = rng.random((12, 4))
    res = stats.swap_rate(scores, n_trials=700, bin_width=0.05, seed=5)
    # The same trials drawn as the function draws them, binned in one histogram.
    abs_d, swapped = [], []
    pairs = stats.system_pairs(4)
    # blocks of 256 trials, block i from generator i
    for start, draw in zip(range(0, 700, 256), block_generators(5, 3)):
        size = min(256, 700 - start)
        order = np.argsort(draw.random((size, 12)), axis=1, kind="stable")
        for row in order:
            q, r = scores[row[:6]].mean(axis=0), scores[row[6:12]].mean(axis=0)
            d = q[pairs[:, 0]] - q[pairs[:, 1]]
            d2 = r[pairs[:, 0]] - r[pairs[:, 1]]
            abs_d.extend(np.abs(d))
            swapped.extend(d * d2 < 0)
    bins = np.floor(np.asarray(abs_d) / 0.05).astype(int)
    np.testing.assert_array_equal(res.counts, np.bincount(bins))
    np.testing.assert_array_equal(res.swaps, np.bincount(bins, weights=swapped).astype(int))


def test_cli_swap_options_out_of_range(small):
    status, _, err = _agree(small, "--swap-trials", "100000000000")
    assert status == 2 and "--swap-trials" in err and "Traceback" not in err
    for width in ("-1", "0"):
        status, _, err = _agree(small, "--bin-width", width)
        assert status == 2 and "`--bin-width` must be a real number > 0" in err
    status, _, err = _agree(small, "--bin-width", "1e-300")
    assert status == 2 and "bins" in err and "internal error" not in err


# -- leaderboards ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("A.run 0.9\nA.run 0.1\nB.run 0.8\nC.run 0.5\nD.run 0.3\n",
     "board.txt:2: a second value for 'A.run' (the first is on line 1)"),
    ("A.run nan\nB.run 0.8\nC.run 0.5\nD.run 0.3\n", "board.txt:1: 'nan' is not a finite number"),
    ("A.run 0.9\nB.run -inf\nC.run 0.5\nD.run 0.3\n", "board.txt:2: '-inf' is not a finite number"),
    ("A.run map 0.9\nA.run map 0.8\n", "board.txt:2: a second value for 'A.run map'"),
])
def test_leaderboard_file_with_a_duplicate_or_a_non_finite_value(small, text, message):
    tmp, _ = small
    (tmp / "board.txt").write_text(text)
    status, out, err = _agree(small, "--leaderboard", tmp / "board.txt", qrels=("l=l.txt",))
    assert status == 2 and out == "" and message in err


def test_leaderboard_systems_that_are_not_runs_are_left_out(small):
    tmp, _ = small
    (tmp / "board.txt").write_text("A.run 0.9\nB.run 0.8\nC.run 0.5\nD.run 0.3\n")
    (tmp / "more.txt").write_text("A.run 0.9\nB.run 0.8\nC.run 0.5\nD.run 0.3\nZ.run 1\n")
    (_, out, _), (_, more, _) = (_agree(small, "--leaderboard", tmp / b, qrels=("l=l.txt",))
                                 for b in ("board.txt", "more.txt"))
    assert out == more and "A.run" in out


@pytest.mark.parametrize("value", ["x", None, float("nan"), float("inf"), True])
def test_leaderboard_values_must_be_finite_numbers(value):
    human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
    runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}},
            "y": {"q1": {"b": 2, "a": 1}, "q2": {"d": 2, "c": 1}}}
    grid = irm.evaluate_grid({"human": human}, runs, "P.1")
    with pytest.raises(ParameterError, match="a finite number for run 'x' on P_1"):
        grid.ranking_agreement(leaderboard={"x": value, "y": 0.5}, n_resamples=0)


# -- tau_AP against a reference that ties every system ---------------------------------------

def _tau_ap_brute(x, y):
    """Urbano & Marrero's direction y|x as docs/meta_evaluation.md defines it."""
    terms = []
    for i in range(len(x)):
        above = [j for j in range(len(x)) if y[j] > y[i]]
        if above:
            terms.append(sum(x[j] > x[i] for j in above) / len(above))
    return 2 * np.mean(terms) - 1 if terms else np.nan


def test_tau_ap_is_undefined_when_the_reference_ties_everything():
    assert np.isnan(stats.tau_ap([0.5, 0.5, 0.5, 0.5], [0.83, 1.0, 1.0, 0.83]))
    assert np.isnan(stats.tau_ap([0.5, 0.5, 0.5], [1, 2, 3], symmetric=True))
    # Partial ties in the reference keep the documented definition.
    for x, y in [([1, 1, 0], [2, 1, 0]), ([1, 1, 1, 0], [4, 3, 2, 1]), ([3, 1, 2], [1, 1, 2])]:
        assert stats.tau_ap(x, y) == pytest.approx(_tau_ap_brute(x, y), abs=1e-15)
    res = stats.ranking_agreement([0.5, 0.5, 0.5], [[0.1, 0.2, 0.3], [0.2, 0.3, 0.4]],
                                  n_resamples=50)
    assert np.isnan(res.as_dict()["tau_ap"]).all() and np.isnan(res.as_dict()["tau_b"]).all()


def test_constant_leaderboard_gives_no_tau_ap(small):
    tmp, _ = small
    (tmp / "board.txt").write_text("A.run 0.5\nB.run 0.5\nC.run 0.5\nD.run 0.5\n")
    status, out, _ = _agree(small, "-m", "map", "--format", "csv", "--leaderboard",
                            tmp / "board.txt", qrels=("l=l.txt",))
    assert status == 0 and 'rankings,leaderboard,l,"",map,tau_ap,NaN,NaN,NaN' in out


# -- correlations: exact 1 for equal rankings, no overflow or underflow ---------------------

def test_equal_rankings_correlate_exactly_one():
    rng = np.random.default_rng(0)
    for m in range(2, 40):
        x = rng.integers(0, 5, m) / 7.0
        if np.all(x == x[0]):
            continue
        assert stats.kendall_tau_b(x, x) == 1.0
        assert stats.spearman_rho(x, x) == 1.0
        assert stats.pearson_r(x, x) == 1.0


def test_identical_qrels_pass_a_gate_at_one(small):
    status, _, err = _agree(small, "--fail-if", "tau_b<1", "--fail-if", "spearman<1",
                            "--fail-if", "pearson<1", qrels=("h=h.txt", "h2=h.txt"))
    assert status == 0, err


@pytest.mark.parametrize("x, y", [
    ([1e300, -1e300, 0.0], [1.0, 2.0, 3.0]),
    ([1.5e308, 1.6e308, -1.7e308], [1.0, 2.0, 3.0]),
    ([1e-320, 2e-320, 3e-320], [1.0, 2.0, 3.0]),
    ([1.0, 1.0 + 2 ** -50, 1.0 + 2 ** -51], [3.0, 1.0, 2.0]),
])
def test_pearson_near_the_float_limits_equals_exact_arithmetic(x, y):
    from fractions import Fraction

    fx, fy = [Fraction(v) for v in x], [Fraction(v) for v in y]
    mx, my = sum(fx) / len(fx), sum(fy) / len(fy)
    sxy = sum((a - mx) * (b - my) for a, b in zip(fx, fy))
    r_squared = sxy * sxy / (sum((a - mx) ** 2 for a in fx) * sum((b - my) ** 2 for b in fy))
    expected = (1 if sxy > 0 else -1) * float(r_squared) ** 0.5
    assert stats.pearson_r(x, y) == pytest.approx(expected, abs=1e-12)


# -- messages ---------------------------------------------------------------------------------

def test_topics_left_out_are_named_plainly_once_per_qrels_selection(small):
    tmp, _ = small
    (tmp / "q12.txt").write_text("".join(line + "\n" for line in HUMAN.splitlines()
                                         if not line.startswith("q3")))
    status, _, err = _agree(small, qrels=("h=h.txt", "q=q12.txt"))
    lines = [line for line in err.splitlines() if "left out" in line]
    assert status == 0 and "np.str_" not in err and all("'q3'" in line for line in lines)
    # once for the rankings under (h, q), not once per measure (map, ndcg_cut_10)
    assert len(lines) == 1


def test_nan_per_query_scores_are_refused_naming_the_cell():
    from irmetrics.measures.custom import define_measure, remove_measure

    def half_nan(rankings):
        values = np.ones(rankings.n_queries)
        values[-1] = np.nan
        return values

    define_measure("ReviewHalfNan", half_nan, allow_nan=True, cutoff=False, replace=True)
    try:
        human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
        runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}},
                "y": {"q1": {"b": 2, "a": 1}, "q2": {"d": 2, "c": 1}}}
        grid = irm.evaluate_grid({"human": human, "llm": human}, runs, "ReviewHalfNan")
        message = "ReviewHalfNan is nan for run 'x' on query 'q2' under qrels 'human'"
        with pytest.raises(ParameterError, match=message):
            grid.ranking_agreement(n_resamples=0)
        with pytest.raises(ParameterError, match=message):
            grid.discriminative_power()
    finally:
        remove_measure("ReviewHalfNan")


# -- judges: files that are not UTF-8 are read as the evaluation reads them ------------------

def test_judges_of_a_latin1_qrels_file_compare_ids_as_bytes(tmp_path):
    (tmp_path / "utf8.txt").write_bytes(b"q1 0 d\xc3\xa9 1\nq1 0 d1 0\nq2 0 d2 1\n")
    (tmp_path / "latin1.txt").write_bytes(b"q1 0 d\xe9 1\nq1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "latin1b.txt").write_bytes(b"q1 0 d\xe9 0\nq1 0 d1 1\nq2 0 d2 1\n")
    same = irm.judge_agreement(tmp_path / "latin1.txt", tmp_path / "latin1b.txt")
    assert same.overall["both"] == 3 and same.overall["agreement"] == pytest.approx(2 / 3)
    mixed = irm.judge_agreement(str(tmp_path / "utf8.txt"), str(tmp_path / "latin1.txt"))
    # b"d\xc3\xa9" and b"d\xe9" are different documents, as for trec_eval
    assert (mixed.overall["both"], mixed.overall["only_a"], mixed.overall["only_b"]) == (2, 1, 1)
    (tmp_path / "A.run").write_bytes(b"q1 Q0 d\xe9 1 3 A\nq1 Q0 d1 2 2 A\nq2 Q0 d2 1 1 A\n")
    (tmp_path / "B.run").write_bytes(b"q1 Q0 d1 1 3 B\nq1 Q0 d\xe9 2 2 B\nq2 Q0 d2 1 1 B\n")
    status, out, err = cli("agree", "--resamples", 10, "--swap-trials", 10, "-m", "P.1",
                           "--qrels", f"x={tmp_path / 'latin1.txt'}",
                           "--qrels", f"y={tmp_path / 'latin1b.txt'}",
                           tmp_path / "A.run", tmp_path / "B.run")
    assert status == 0, err
    assert "y                3       0           0     0.6667" in out


# -- names with control characters cannot break a table --------------------------------------

@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_a_name_with_a_newline_or_tab_is_escaped_in_tables(small, fmt):
    status, out, err = _agree(small, "--format", fmt, "-m", "map",
                              qrels=("h\tx=h.txt", "l\nx=l.txt"))
    assert status == 0, err
    assert not any(line.startswith("x") for line in out.splitlines())
    escaped = {"table": "l\\nx", "markdown": "l\\\\nx", "latex": r"l\textbackslash{}nx"}[fmt]
    assert escaped in out and "\t" not in out


def test_huge_labels_are_written_exactly_in_csv_and_the_confusion_figure(small):
    tmp, _ = small
    (tmp / "g.txt").write_text(HUMAN.replace("q1 0 d1 2", "q1 0 d1 9999999999")
                               .replace("q2 0 d2 2", "q2 0 d2 9999999998"))
    status, out, err = _agree(small, "--format", "csv", "-m", "map",
                              qrels=("h=h.txt", "g=g.txt"))
    assert status == 0, err
    cells = {line.split(",")[5]: line.split(",")[6] for line in out.splitlines()
             if line.startswith("confusion,")}
    assert cells["2|9999999999"] == "1.0" and cells["2|9999999998"] == "1.0"
    assert len(cells) == 25   # 5 labels; rounded ('1e+10') two of them made one
    pytest.importorskip("matplotlib")
    from irmetrics.meta_evaluation import plot

    judges = irm.judge_agreement(str(tmp / "h.txt"), str(tmp / "g.txt"))
    figure = plot.label_confusion(judges)
    ticks = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert ticks == ["0", "1", "2", "9999999998", "9999999999"]


def test_meta_evaluate_names_an_unknown_option():
    human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
    runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}},
            "y": {"q1": {"b": 2, "a": 1}, "q2": {"d": 2, "c": 1}}}
    with pytest.raises(TypeError, match=r"meta_evaluate\(\) got an unexpected keyword argument"
                                        r" 'relevance_levle' \(did you mean 'relevance_level'\?.*"
                                        r" the evaluation options are"):
        irm.meta_evaluate({"h": human, "l": human}, runs, "P.1", relevance_levle=2)


def test_no_resamples_says_there_are_no_intervals(small):
    status, out, _ = _agree(small, "--resamples", 0, "-m", "map")
    assert status == 0 and "no bootstrap intervals (0 resamples)" in out.splitlines()[0]
    assert "[nan, nan]" in out


def test_confusion_figure_of_judges_without_a_common_pair():
    pytest.importorskip("matplotlib")
    from irmetrics.meta_evaluation import plot

    judges = irm.judge_agreement({"q1": {"a": 1}}, {"q1": {"b": 1}}, names=("h", "n"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # matplotlib warned about a singular empty image
        figure = plot.label_confusion(judges)
    assert "no (query, doc) pair" in figure.axes[0].texts[0].get_text()


def test_html_scatter_is_drawn_at_about_its_size(small):
    pytest.importorskip("matplotlib")
    status, out, err = _agree(small, "--format", "html", "-m", "map")
    assert status == 0, err
    # one panel (4.2 in) is not stretched to the page's width
    assert out.count('<div style="max-width: 546px"><figure><svg') == 1
    assert "<script" not in out and "http://" not in out.replace("http://www.w3.org/", "")


# -- a qrels set named "leaderboard" ----------------------------------------------------------

def test_a_qrels_set_named_leaderboard_is_a_qrels_set(small):
    status, out, err = _agree(small, "-m", "map", qrels=("leaderboard=h.txt", "l=l.txt"))
    assert status == 0, err
    assert "reference 'leaderboard'" in out and "Ranking agreement with 'leaderboard'" in out
    status, out, err = _agree(small, "-m", "map", "--reference", "leaderboard",
                              qrels=("h=h.txt", "leaderboard=l.txt"))
    assert status == 0 and "Judges: agreement with 'leaderboard'" in out
    pytest.importorskip("matplotlib")
    status, out, err = _agree(small, "-m", "map", "--format", "html",
                              qrels=("leaderboard=h.txt", "l=l.txt"))
    assert status == 0 and "l vs leaderboard: tau_b" in out, err


def test_qrels_option_without_a_file(small):
    tmp, runs = small
    status, _, err = cli("agree", "--qrels", "human=", "--qrels", tmp / "l.txt", *runs)
    assert status == 1 and "--qrels 'human=': NAME=PATH needs a name and a path" in err


def test_gate_messages_write_counts_as_counts(small):
    status, _, err = _agree(small, "-m", "map", "--fail-if", "swaps>0", "--fail-if", "both<100",
                            "--fail-if", "significant<3", "--fail-if", "tau_b<0.9")
    assert status == 3
    assert "swaps = 3 > 0" in err and "both = 8 < 100" in err and "significant = 1 < 3" in err
    assert "tau_b = -0.4082 < 0.9" in err


def test_a_qrels_set_of_one_topic_has_no_swap_rate_but_the_rest_is_reported(small):
    tmp, _ = small
    (tmp / "one.txt").write_text("q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\n")
    status, out, err = _agree(small, "-m", "map", "--format", "json",
                              qrels=("h=h.txt", "o=one.txt"))
    assert status == 0, err
    import json

    stability = {r["qrels"]: r for r in json.loads(out)["stability"]}
    assert stability["o"]["swap_rate"] is None and stability["o"]["min_difference"] is None
    assert stability["h"]["swap_rate"] is not None
    status, _, err = _agree(small, "-m", "map", "--fail-if", "swap_rate>0.5",
                            qrels=("h=h.txt", "o=one.txt"))
    assert status == 3 and "qrels 'o' on map: swap_rate is undefined" in err


def test_output_over_an_input_file_is_refused(small):
    tmp, runs = small
    before = {p: p.read_bytes() for p in [tmp / "h.txt", tmp / "l.txt", *runs]}
    for target in (runs[0], tmp / "l.txt"):
        status, out, err = _agree(small, "-o", target)
        assert status in (1, 2) and out == "" and "input" in err
    assert {p: p.read_bytes() for p in before} == before


def test_resample_counts_are_bounded_as_for_compare():
    human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
    runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}},
            "y": {"q1": {"b": 2, "a": 1}, "q2": {"d": 2, "c": 1}}}
    grid = irm.evaluate_grid({"h": human, "l": human}, runs, "P.1")
    too_many = 10 ** 9   # (B, 6) float64 samples: 48 GB
    for call in (lambda: grid.ranking_agreement(n_resamples=too_many),
                 lambda: grid.measure_agreement("P_1", "P_1", n_resamples=too_many),
                 lambda: grid.discriminative_power(n_resamples=too_many),
                 lambda: grid.swap_rate(n_trials=too_many),
                 lambda: irm.meta_evaluate({"h": human, "l": human}, runs, "P.1",
                                           n_resamples=too_many),
                 lambda: irm.meta_evaluate({"h": human, "l": human}, runs, "P.1",
                                           swap_trials=too_many)):
        with pytest.raises(ParameterError, match="between [01] and 10000000"):
            call()


def test_a_gate_on_a_table_without_rows_fails(small):
    tmp, _ = small
    (tmp / "board.txt").write_text("A.run 0.9\nB.run 0.8\nC.run 0.5\nD.run 0.3\n")
    status, _, err = _agree(small, "-m", "map", "--leaderboard", tmp / "board.txt",
                            "--fail-if", "kappa<0.6", qrels=("l=l.txt",))
    assert status == 3 and "FAIL: no table has kappa" in err
    status, _, err = _agree(small, "-m", "map", "--leaderboard", tmp / "board.txt",
                            "--fail-if", "tau_b<-2", qrels=("l=l.txt",))
    assert status == 0, err
