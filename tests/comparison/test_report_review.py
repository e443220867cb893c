"""Review of the HTML report and its plots: names that matplotlib would misread or that
squeeze the figures, missing glyphs, empty arguments."""

from __future__ import annotations

import html
import io
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import irmetrics as irm

from tests.comparison.test_report import QRELS, RUNS, assert_self_contained, chromium

pytest.importorskip("matplotlib", reason="the report needs matplotlib (irmetrics-exact[plot])")

from irmetrics import plot  # noqa: E402

QRELS3 = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
RUN_A = {"q1": {"d1": 1.0, "x": 2.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}}
RUN_B = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"d2": 1.0, "y": 2.0}, "q3": {"d3": 1.0}}

#: Run names as the command line gives them: file paths, often long.
LONG = {"runs/2024-06/bm25_rm3_k1=0.9_b=0.4_fb_docs=10_terms=20.run": "bm25",
        "runs/2024-06/dense_contriever_msmarco_ft_ep3_lr=2e-5.run": "dense",
        "runs/2024-06/bm25_tweak_scores_nudged_by_noise.run": "tweak"}


def svg_texts(page: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", page)]


def test_dollar_signs_in_names_and_query_ids_are_drawn_as_typed():
    # matplotlib reads text between two "$" as mathtext: "$x$" drew an italic x and
    # "$\foo$" raised ValueError from savefig.
    bad = "$\\foo$"
    qrels = {bad: QRELS3["q1"], "q2": QRELS3["q2"], "q3": QRELS3["q3"]}
    a = {bad: RUN_A["q1"], "q2": RUN_A["q2"], "q3": RUN_A["q3"]}
    b = {bad: RUN_B["q1"], "q2": RUN_B["q2"], "q3": RUN_B["q3"]}
    cmp = irm.compare(qrels, {"$x$": a, bad: b}, "map", baseline="$x$")
    page = cmp.to_html()
    assert_self_contained(page)
    texts = svg_texts(page)
    assert f"map: {bad} - $x$" in texts and bad in texts and "$x$" in texts
    # The notebook path: Figures drawn later, outside the report's style context.
    for fig in (plot.per_query_differences(cmp), plot.score_distributions(cmp),
                plot.precision_recall(cmp)):
        fig.savefig(io.BytesIO(), format="png")
    assert fig.axes[0].get_legend().get_texts()[1].get_text() == bad


def long_comparison():
    runs = {name: RUNS[short] for name, short in LONG.items()}
    return irm.compare(QRELS, runs, ["map"], baseline=next(iter(LONG)))


def test_long_run_names_leave_the_figures_their_axes():
    cmp = long_comparison()
    with warnings.catch_warnings():
        # "constrained_layout not applied because axes sizes collapsed to zero"
        warnings.simplefilter("error")
        page = cmp.to_html()
    assert_self_contained(page)
    labels = [t.get_text() for t in plot.score_distributions(cmp).axes[0].get_xticklabels()]
    assert all(len(label) <= 24 for label in labels) and len(set(labels)) == 3
    assert labels[1].startswith("runs/2024-06") and labels[1].endswith("lr=2e-5.run")
    # The tables still give every name in full.
    for name in LONG:
        assert f"<td class=\"name\">{name}</td>" in page


def test_shortened_names_that_coincide_are_told_apart():
    names = [f"runs/experiment_{k}" + "x" * 30 + "_final.run" for k in range(2)]
    cmp = irm.compare(QRELS3, {names[0]: RUN_A, names[1]: RUN_B}, "map", baseline=names[0])
    labels = [t.get_text() for t in plot.score_distributions(cmp).axes[0].get_xticklabels()]
    assert labels[0].startswith("(a) ") and labels[1].startswith("(b) ")
    legend = plot.precision_recall(cmp).axes[0].get_legend().get_texts()
    assert [t.get_text() for t in legend] == labels


def page_width(page: str, tmp_path) -> tuple[int, int]:
    """(scroll width, window width) of the page laid out by headless Chromium at 1280 px."""
    browser = chromium()
    probe = page.replace(
        "</body>", "<script>document.body.setAttribute('data-widths',"
        " document.documentElement.scrollWidth + ' ' + document.documentElement.clientWidth)"
        "</script></body>")
    path = tmp_path / "report.html"
    path.write_text(probe, encoding="utf-8")
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND",
         "--hide-scrollbars", "--window-size=1280,1000", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    scroll, client = map(int, re.search(r'data-widths="(\d+) (\d+)"', done.stdout).groups())
    return scroll, client


def test_long_run_names_do_not_widen_the_page_past_the_window(tmp_path):
    scroll, client = page_width(long_comparison().to_html(), tmp_path)
    assert scroll <= client


def test_the_matrix_of_many_systems_does_not_widen_the_page_past_the_window(tmp_path):
    chromium()
    spec = irm.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "map").measure_of("map")
    rng = np.random.default_rng(0)
    ids = np.array([f"q{i}" for i in range(20)])
    runs = {f"system_{k:02d}": irm.Results(ids, {"map": rng.random(20)}, {"map": spec},
                                           run_name=f"s{k}") for k in range(24)}
    page = irm.compare(None, runs, "map", test="tukey", n_resamples=200).to_html()
    scroll, client = page_width(page, tmp_path)
    assert scroll <= client


def test_names_without_glyphs_in_matplotlibs_font_do_not_warn():
    # The browser draws SVG text with its own fonts: matplotlib's missing glyphs are noise
    # on the terminal of `irmetrics compare --format html`.
    cmp = irm.compare(QRELS3, {"系统A": RUN_A, "システムB\t🙂": RUN_B}, "map")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = cmp.to_html()
    assert "システムB\t🙂" in svg_texts(page)


def test_an_empty_list_of_pairs_is_a_parameter_error():
    cmp = irm.compare(QRELS3, {"A": RUN_A, "B": RUN_B}, "map", baseline="A")
    with pytest.raises(irm.exceptions.ParameterError, match="`pairs` must be a non-empty"):
        plot.per_query_differences(cmp, pairs=[])


def test_a_measure_can_be_named_as_it_was_given_to_compare():
    cmp = irm.compare(QRELS, {name: RUNS[name] for name in ("bm25", "dense")},
                      ["map", "ndcg_cut.10"], baseline="bm25")
    fig = plot.per_query_differences(cmp, "ndcg_cut.10")
    assert fig.axes[0].get_title(loc="left") == "ndcg_cut_10: dense - bm25"
    assert plot.score_distributions(cmp, "ndcg_cut.10").axes[0].get_ylabel() == "ndcg_cut_10"
    for bad in ("P.5,10", "P.5", "nosuch", 3):
        with pytest.raises(irm.exceptions.ParameterError, match="`measure` must be one of"):
            plot.score_distributions(cmp, bad)


def test_a_summary_of_many_measures_does_not_widen_the_page_past_the_window(tmp_path):
    chromium()
    runs = {name: RUNS[name] for name in ("bm25", "dense")}
    page = irm.compare(QRELS, runs, "iprec_at_recall").to_html()  # 11 long column names
    assert page.count("<section id=\"m") == 11
    scroll, client = page_width(page, tmp_path)
    assert scroll <= client


def test_the_page_prints_to_a_stdout_that_cannot_encode_unicode(tmp_path):
    # matplotlib's tick labels use U+2212 for minus: `--format html > report.html` on a
    # cp1252 console (Windows) failed with an internal error.
    env = dict(os.environ, PYTHONIOENCODING="cp1252", PYTHONUTF8="0")
    done = subprocess.run(
        [sys.executable, "-m", "irmetrics", "compare", "--baseline", "bm25.run", "-m", "map",
         "--format", "html", QRELS, RUNS["bm25"], RUNS["dense"]],
        capture_output=True, env=env, timeout=300, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    page = done.stdout.decode("ascii")
    assert_self_contained(page)
    assert "&#8722;" in page  # the minus signs of the difference axes, as references
    # A name outside ASCII comes back as itself once the page is parsed.
    cmp = irm.compare(QRELS3, {"système": RUN_A, "系统": RUN_B}, "map")
    cells = [c for t in assert_self_contained(cmp.to_html()).tables for r in t["rows"]
             for c in r]
    assert "système" in cells and "系统" in cells
