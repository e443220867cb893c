"""The HTML report: self-contained, well-formed, deterministic, escaped, and its numbers
equal the comparison's (and independent evaluations')."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import warnings
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.io.trec import read_qrels, read_run

from tests.comparison.test_compare import cli

pytest.importorskip("matplotlib", reason="the report needs matplotlib (irmetrics-exact[plot])")

from irmetrics.comparison.report import TOP_QUERIES, letter_groups  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CMP = ROOT / "fixtures" / "compare"
QRELS = str(CMP / "qrels.txt")
NAMES = ("bm25", "dense", "tweak")
RUNS = {name: str(CMP / f"{name}.run") for name in NAMES}
MEASURES = ["map", "ndcg_cut.10"]

#: HTML elements that have no end tag.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Outline(HTMLParser):
    """Checks that every element is closed in order; collects ids, references, tables."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids, self.refs = [], [], [], []
        self.tags = []
        self.tables, self._table, self._row, self._cell = [], None, None, None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        for name in ("href", "src", "xlink:href", "action", "data", "poster"):
            if name in attrs:
                self.refs.append(attrs[name])
        if tag == "table":
            self._table = {"class": attrs.get("class"), "rows": []}
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        # <path ... /> in SVG: self-closing, nothing to close.
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table["rows"].append(self._row)
            self._row = None
        elif tag == "table" and self._table is not None:
            self.tables.append(self._table)
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def outline(page: str) -> Outline:
    parser = Outline()
    parser.feed(page)
    parser.close()
    return parser


@pytest.fixture(scope="module")
def baseline_cmp():
    return irm.compare(QRELS, RUNS, MEASURES, baseline="bm25")


@pytest.fixture(scope="module")
def baseline_page(baseline_cmp):
    return baseline_cmp.to_html()


@pytest.fixture(scope="module")
def tukey_cmp():
    return irm.compare(QRELS, RUNS, MEASURES, test="tukey", n_resamples=2000, seed=3)


@pytest.fixture(scope="module")
def tukey_page(tukey_cmp):
    return tukey_cmp.to_html()


# -- self-contained and well-formed ----------------------------------------------------------

def assert_self_contained(page: str) -> Outline:
    """No external reference: the writer strips SVG namespace declarations and the
    DOCTYPE's DTD URL, so no ``http(s)://`` appears anywhere in the file (a stricter test
    than "no src=/href= to the network"); every reference is a fragment or a data: URI;
    no script, no @import, no url() other than url(#...)."""
    assert re.search(r"https?:", page, re.IGNORECASE) is None
    assert re.search(r"//[a-z0-9.-]+\.[a-z]{2,}", page, re.IGNORECASE) is None
    assert "@import" not in page and "<script" not in page.lower()
    assert "<link" not in page.lower() and "<iframe" not in page.lower()
    assert re.findall(r"url\((?!#)", page) == []
    parsed = outline(page)
    assert parsed.errors == [] and parsed.stack == []
    assert all(r.startswith("#") or r.startswith("data:image/png;base64,") for r in parsed.refs)
    ids = parsed.ids
    assert len(ids) == len(set(ids)), "ids must be unique across the inline SVGs"
    for ref in parsed.refs:
        if ref.startswith("#"):
            assert ref[1:] in ids, ref
    return parsed


def test_report_of_the_fixtures_is_self_contained_and_has_every_plot(baseline_page,
                                                                     baseline_cmp):
    parsed = assert_self_contained(baseline_page)
    assert baseline_page.startswith("<!DOCTYPE html>\n<html lang=\"en\">")
    # Per measure: per-query differences and score distributions; then (three systems or
    # more) the rank intervals of each measure; then the PR curves.
    assert baseline_page.count("<svg") == 3 * len(baseline_cmp.measures) + 1
    assert parsed.tags.count("figure") == parsed.tags.count("figcaption") == 7
    assert "<h2>Rank intervals</h2>" in baseline_page and "Tied with the best:" in baseline_page
    for measure in baseline_cmp.measures:
        assert f"{measure}: dense.run - bm25.run" not in baseline_page  # names as given
        assert f"{measure}: dense - bm25" in baseline_page
        assert f"{measure}: tweak - bm25" in baseline_page
    assert "Interpolated precision at recall" in baseline_page
    # No matrix without all pairs; the settings are stated.
    assert 'id="pairs"' not in baseline_page
    for fact in ("Paired t-test", "Holm", "alpha = 0.05", "95% confidence intervals",
                 "50 common to every system", f"irmetrics</dt><dd>{irm.__version__}"):
        assert fact in baseline_page, fact
    assert "@media print" in baseline_page


def test_numbers_in_the_page_equal_the_table(baseline_page, baseline_cmp):
    rows = [t for t in outline(baseline_page).tables if t["class"] == "rows"]
    assert len(rows) == len(baseline_cmp.measures)
    expected = baseline_cmp.table().iter_rows(named=True)
    printed = [r for t in rows for r in t["rows"][1:]]
    for cells, row in zip(printed, expected, strict=True):
        assert cells[:2] == [row["system"], row["baseline"]]
        assert float(cells[2]) == pytest.approx(row["mean"], abs=5e-5)
        assert float(cells[3]) == pytest.approx(row["baseline_mean"], abs=5e-5)
        assert cells[4].endswith("*") == row["significant"]
        assert float(cells[4].rstrip("*")) == pytest.approx(row["diff"], abs=5e-5)
        low, high = (float(x) for x in cells[5].strip("[]").split(","))
        assert (low, high) == pytest.approx((row["ci_low"], row["ci_high"]), abs=5e-5)
        assert float(cells[7]) == pytest.approx(row["p_value"], rel=1e-3, abs=5e-5)
        assert float(cells[8]) == pytest.approx(row["p_adjusted"], rel=1e-3, abs=5e-5)
        assert cells[9] == f"{row['wins']} / {row['ties']} / {row['losses']}"


def test_summary_marks_the_same_cells_as_the_latex_table(baseline_page, baseline_cmp):
    latex_rows = [line for line in baseline_cmp.to_latex().splitlines()
                  if line.startswith("(")]
    (summary,) = re.findall(r'<table class="summary">.*?</table>', baseline_page, re.S)
    html_rows = re.findall(r"<tr><td class=\"label\">.*?</tr>", summary, re.S)
    assert len(html_rows) == len(latex_rows) == 3
    for latex, row in zip(latex_rows, html_rows):
        expected = [re.sub(r"\\textbf\{(.*?)\}", r"<strong>\1</strong>", cell.strip())
                    .replace("$^{", "<sup>").replace("}$", "</sup>")
                    for cell in latex.rstrip(" \\").split("&")[1:]]
        cells = re.findall(r'<td class="num">(.*?)</td>', row)
        assert cells == expected
    assert "<strong>" in summary and "<sup>a</sup>" in summary


def test_largest_wins_and_losses_equal_an_independent_evaluation(baseline_page):
    # Oracle: per-query values from irm.evaluate, sorted in plain Python.
    values = {}
    for name in NAMES:
        res = irm.evaluate(QRELS, RUNS[name], ["map"])
        values[name] = dict(zip(res.query_ids.tolist(), res.values("map").tolist()))
    tables = [t for t in outline(baseline_page).tables if t["class"] == "extremes"]
    # map comes first: dense vs bm25 (wins, losses), tweak vs bm25 (wins, losses).
    for k, system in enumerate(("dense", "tweak")):
        diffs = {q: values[system][q] - values["bm25"][q] for q in values["bm25"]}
        by_gain = sorted(diffs, key=lambda q: (-diffs[q], q))
        by_loss = sorted(diffs, key=lambda q: (diffs[q], q))
        wins = [q for q in by_gain[:TOP_QUERIES] if diffs[q] > 0]
        losses = [q for q in by_loss[:TOP_QUERIES] if diffs[q] < 0]
        win_table, loss_table = tables[2 * k], tables[2 * k + 1]
        assert win_table["rows"][0] == ["query", system, "bm25", "difference"]
        assert [r[0] for r in win_table["rows"][1:]] == wins
        assert [r[0] for r in loss_table["rows"][1:]] == losses
        for r in win_table["rows"][1:] + loss_table["rows"][1:]:
            assert float(r[3]) == pytest.approx(diffs[r[0]], abs=5e-5)
            assert float(r[1]) == pytest.approx(values[system][r[0]], abs=5e-5)


def test_precision_recall_curves_equal_irm_evaluate_with_the_same_options(baseline_cmp):
    curves = baseline_cmp.precision_recall_curves()
    assert curves.columns == ["system", "recall", "precision"]
    assert curves["recall"].to_list()[:11] == pytest.approx(np.linspace(0, 1, 11).tolist())
    cut = irm.compare(QRELS, RUNS, "map", max_docs=5, relevance_level=2)
    for comparison, options in ((baseline_cmp, {}), (cut, {"max_docs": 5, "relevance_level": 2})):
        curves = comparison.precision_recall_curves()
        for name in NAMES:
            ours = curves.filter(system=name)["precision"].to_numpy()
            res = irm.evaluate(QRELS, RUNS[name], ["iprec_at_recall"], **options)
            expected = np.array([res.values(n).mean() for n in res.names])
            np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-15)
    assert not np.allclose(cut.precision_recall_curves()["precision"],
                           baseline_cmp.precision_recall_curves()["precision"])


def test_the_page_lists_the_curves_values(baseline_page, baseline_cmp):
    (table,) = [t for t in outline(baseline_page).tables if t["class"] == "curves"]
    assert table["rows"][0] == ["recall", *baseline_cmp.systems]
    curves = baseline_cmp.precision_recall_curves()
    printed = np.array([[float(c) for c in row] for row in table["rows"][1:]])
    np.testing.assert_allclose(printed[:, 0], np.linspace(0, 1, 11))
    for k, system in enumerate(baseline_cmp.systems):
        np.testing.assert_allclose(printed[:, k + 1],
                                   curves.filter(system=system)["precision"], atol=5e-5)


def test_precision_recall_curves_equal_pytrec_eval_under_its_semantics():
    import pytrec_eval

    # pytrec-eval-terrier 0.5.11 interpolates iprec_at_recall differently from
    # trec_eval 10 (see the spec); semantics="pytrec_eval" reproduces it.
    cmp = irm.compare(QRELS, RUNS, "map", semantics="pytrec_eval")
    curves = cmp.precision_recall_curves()
    evaluator = pytrec_eval.RelevanceEvaluator(read_qrels(QRELS).to_dict(), {"iprec_at_recall"})
    levels = [f"iprec_at_recall_{x:.2f}" for x in np.linspace(0, 1, 11)]
    worst = 0.0
    for name in NAMES:
        theirs = evaluator.evaluate(read_run(RUNS[name]).to_dict())
        reference = np.array([np.mean([theirs[q][level] for q in cmp.query_ids])
                              for level in levels])
        ours = curves.filter(system=name)["precision"].to_numpy()
        worst = max(worst, float(np.abs(ours - reference).max()))
    assert worst <= 1e-12


def test_all_pairs_matrix_and_tukey_groups(tukey_page, tukey_cmp):
    assert_self_contained(tukey_page)
    matrices = [t for t in outline(tukey_page).tables if t["class"] == "matrix"]
    assert len(matrices) == len(tukey_cmp.measures)
    systems = tukey_cmp.systems
    table = tukey_cmp.table()
    for measure, matrix in zip(tukey_cmp.measures, matrices):
        assert matrix["rows"][0] == ["", "mean", *systems, "group"]
        p = np.ones((3, 3))
        for r in table.filter(measure=measure).iter_rows(named=True):
            i, j = systems.index(r["system"]), systems.index(r["baseline"])
            p[i, j] = p[j, i] = r["p_adjusted"]
        for i, cells in enumerate(matrix["rows"][1:]):
            assert cells[0] == systems[i]
            for j in range(3):
                if i != j:
                    assert float(cells[2 + j].split()[0]) == pytest.approx(p[i, j], rel=1e-3)
            groups = letter_groups(tukey_cmp.scores[measure].mean(axis=1), p <= tukey_cmp.alpha)
            assert cells[-1] == groups[i]
        # dense differs from both, which do not differ from each other.
        assert [r[-1] for r in matrix["rows"][1:]] == ["b", "a", "b"]
    assert "Randomised Tukey HSD" in tukey_page and "2,000 resamples, seed 3" in tukey_page


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 7).flatmap(lambda m: st.tuples(
    st.lists(st.floats(0, 1), min_size=m, max_size=m),
    st.lists(st.booleans(), min_size=m * (m - 1) // 2, max_size=m * (m - 1) // 2))))
def test_letter_groups_share_a_letter_exactly_when_not_significant(case):
    means, flags = case
    m = len(means)
    significant = np.zeros((m, m), dtype=bool)
    significant[np.triu_indices(m, 1)] = flags
    significant |= significant.T
    groups = letter_groups(means, significant)
    assert all(groups)
    for i in range(m):
        for j in range(i + 1, m):
            assert bool(set(groups[i]) & set(groups[j])) == (not significant[i, j])
    # The best system carries the first letter.
    assert "a" in groups[int(np.argmax(means))] or len(set("".join(groups))) == 0


# -- escaping ---------------------------------------------------------------------------------

def test_names_and_query_ids_are_escaped():
    evil = '<script>alert("x")</script>'
    qid = 'q<b>&"1'
    qrels = {qid: {"d1": 1, "d2": 1}, "q2": {"d3": 1}, "q3": {"d4": 1}}
    a = {qid: {"d1": 2.0, "x": 1.0, "d2": 0.5}, "q2": {"d3": 1.0}, "q3": {"x": 1.0, "d4": 0.5}}
    b = {qid: {"x": 2.0, "d1": 1.0, "d2": 0.5}, "q2": {"y": 2.0, "d3": 1.0}, "q3": {"d4": 1.0}}
    cmp = irm.compare(qrels, {evil: a, "b&<i>": b}, ["map", "P.5"])
    page = cmp.to_html()
    assert_self_contained(page)
    assert "<script" not in page and "<b>" not in page and "<i>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "q&lt;b&gt;&amp;&quot;1" in page
    # Text is back to the original once parsed: escaped exactly once.
    cells = [c for t in outline(page).tables for r in t["rows"] for c in r]
    assert evil in cells and qid in cells and "b&<i>" in cells


def test_svg_rewriting_touches_tags_never_text():
    # Ids are prefixed per figure; a run name that looks like an attribute stays as is
    # (24 characters: figures draw longer names shortened).
    name = 'id="b" url(#c) href="#d"'
    runs = {"base": {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}},
            name: {"q1": {"x": 2.0, "d1": 1.0}, "q2": {"d2": 1.0}}}
    page = irm.compare({"q1": {"d1": 1}, "q2": {"d2": 1}}, runs, "map",
                       baseline="base").to_html()
    assert_self_contained(page)
    svg_text = re.findall(r"<text[^>]*>([^<]*)</text>", page)
    assert f"map: {name} - base" in svg_text
    ids = re.findall(r'<[a-z][^<>]*\sid="([^"]*)"', page)
    assert "b" not in ids and "f1-b" not in ids  # the text was not read as a tag
    assert sum(i.startswith("f1-") for i in ids) > 10


# -- determinism ------------------------------------------------------------------------------

def test_same_inputs_give_identical_bytes_across_processes(tmp_path):
    # One page from another process (another hash seed), one from this one.
    args = ["compare", "--baseline", "bm25.run", "-m", "map", "--format", "html", QRELS,
            RUNS["bm25"], RUNS["dense"], RUNS["tweak"]]
    out = tmp_path / "other.html"
    subprocess.run([sys.executable, "-m", "irmetrics", *args, "-o", str(out)], check=True,
                   env={**os.environ, "PYTHONHASHSEED": "12345"})
    status, here, _ = cli(*args)
    assert status == 0
    assert out.read_bytes() == here.encode("utf-8")
    assert_self_contained(here)


def test_many_queries_draw_one_filled_curve_and_a_raster_and_stay_deterministic():
    rng = np.random.default_rng(5)
    n = 400
    runs = {}
    for name, shift in (("a", 0.0), ("b", 0.03)):
        values = np.clip(rng.random(n) + shift, 0, 1).round(2)
        values[:40] = 0.5  # ties
        runs[name] = irm.Results(np.array([f"q{i:04d}" for i in range(n)]),
                                 {"map": values}, {"map": irm.evaluate(
                                     {"q": {"d": 1}}, {"q": {"d": 1.0}}, "map").measure_of("map")},
                                 run_name=name)
    cmp = irm.compare(None, runs, "map", baseline="a")
    page = cmp.to_html()
    assert page == cmp.to_html()
    assert_self_contained(page)
    # Bars become one filled outline per colour; the 2 x 400 points one embedded PNG.
    assert page.count("data:image/png;base64,") == 1
    assert page.count("<path") < 400
    assert "given as per-query values without iprec_at_recall" in page
    assert len(page) < 600_000


# -- precision-recall: when it cannot be drawn ----------------------------------------------

def eval_file(path: Path, measures) -> str:
    status, out, err = cli("eval", "-q", *[a for m in measures for a in ("-m", m)], QRELS,
                           RUNS[path.stem])
    assert status == 0, err
    path.write_text(out)
    return str(path)


def test_q_files_with_iprec_draw_curves_and_without_say_why(tmp_path, baseline_cmp):
    with_iprec = [eval_file(tmp_path / f"{n}.eval", ["map", "iprec_at_recall"])
                  for n in ("bm25", "dense")]
    cmp = irm.compare(None, {n: irm.read_per_query(p) for n, p in zip(("bm25", "dense"),
                                                                     with_iprec)}, "map")
    curves = cmp.precision_recall_curves()
    expected = baseline_cmp.precision_recall_curves().filter(
        pl.col("system").is_in(["bm25", "dense"]))
    # trec_eval -q prints 4 decimals: the curves are those of the rounded values.
    np.testing.assert_allclose(curves["precision"].to_numpy(),
                               expected["precision"].to_numpy(), atol=5e-5)
    plain = tmp_path / "plain"
    plain.mkdir()
    without = [eval_file(plain / f"{n}.eval", ["map"]) for n in ("bm25", "dense")]
    status, out, err = cli("compare", "--format", "html", *without)
    assert status == 0, err
    assert 'class="omitted">Not drawn: run' in out and "without iprec_at_recall" in out
    assert out.count("<svg") == 2


def test_a_run_read_from_stdin_has_no_curve_and_the_page_says_why(monkeypatch):
    text = Path(RUNS["dense"]).read_bytes()
    stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(text)))
    monkeypatch.setattr(sys, "stdin", stdin)
    status, out, err = cli("compare", "-m", "map", "--format", "html", QRELS, RUNS["bm25"],
                           "-")
    assert status == 0, err
    assert "read from standard input, which cannot be read a second time" in out
    assert_self_contained(out)


# -- CLI and the optional dependency ---------------------------------------------------------

def test_the_docs_command_writes_the_report_and_o_serves_other_formats(
        tmp_path, baseline_page, monkeypatch):
    # The README's example comparison, run as docs/compare.md gives it.
    doc = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    (command,) = [line for line in doc.splitlines()
                  if line.startswith("irmetrics compare") and "--format html -o" in line]
    argv = command.split()[1:]
    target = tmp_path / "report.html"
    argv[argv.index("-o") + 1] = str(target)
    monkeypatch.chdir(ROOT)
    status, out, err = cli(*argv)
    assert (status, out, err) == (0, "", "")
    page = target.read_text(encoding="utf-8")
    # The CLI names runs by their file names.
    assert "map: dense.run - bm25.run" in page and "every other system against bm25.run" in page
    assert page.count("<svg") == baseline_page.count("<svg")
    assert_self_contained(page)
    csv_target = tmp_path / "table.csv"
    status, out, _ = cli("compare", "--format", "csv", "-o", str(csv_target), QRELS,
                         RUNS["bm25"], RUNS["dense"])
    assert status == 0 and out == ""
    assert csv_target.read_text().startswith("measure,system,baseline")
    status, _, err = cli("compare", "-o", str(tmp_path / "no" / "such" / "dir.html"), QRELS,
                         RUNS["bm25"], RUNS["dense"])
    assert status == 2 and err.count("\n") == 1 and "cannot write" in err


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=False)


def test_importing_irmetrics_and_comparing_never_imports_matplotlib():
    code = (
        "import sys, irmetrics, irmetrics.comparison, irmetrics.plot, irmetrics.comparison.report\n"
        f"c = irmetrics.compare({QRELS!r}, {RUNS!r}, 'map')\n"
        "c.to_text(); c.to_json(); c.precision_recall_curves()\n"
        "from irmetrics.cli import main\n"
        f"main(['compare', '--format', 'markdown', {QRELS!r}, {RUNS['bm25']!r}, {RUNS['dense']!r}])\n"
        "assert not [m for m in sys.modules if m.startswith('matplotlib')], 'imported'\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr


def test_without_matplotlib_html_fails_in_one_line_and_other_formats_work():
    # sys.modules[name] = None makes "import matplotlib" raise ImportError.
    code = (
        "import sys; sys.modules['matplotlib'] = None; sys.modules['matplotlib.figure'] = None\n"
        "from irmetrics.cli import main\n"
        f"args = [{QRELS!r}, {RUNS['bm25']!r}, {RUNS['dense']!r}]\n"
        "status = main(['compare', '--format', 'html', '-o', 'never.html', *args])\n"
        "print('html', status)\n"
        "print('csv', main(['compare', '-m', 'map', '--format', 'csv', *args]))\n"
        "import irmetrics\n"
        "try:\n"
        "    irmetrics.compare(args[0], args[1:], 'map').to_html()\n"
        "except ImportError as exc:\n"
        "    print('api', exc)\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert "html 1" in done.stdout and "csv 0" in done.stdout
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("irmetrics compare: --format html draws plots with"
                                  " matplotlib, which is not installed:")
    assert 'pip install "irmetrics-exact[plot]"' in done.stderr
    assert 'api plots need matplotlib: pip install "irmetrics-exact[plot]"' in done.stdout
    assert not (ROOT / "never.html").exists()


# -- a real browser -----------------------------------------------------------------------

def chromium() -> str:
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no headless Chromium installed (apt-get install chromium); the browser"
                " test needs one, the other report tests do not")


def test_chromium_loads_the_report_without_console_errors(tmp_path, baseline_page):
    browser = chromium()
    page = tmp_path / "report.html"
    page.write_text(baseline_page, encoding="utf-8")
    shot = tmp_path / "report.png"
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
         "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1280,2400",
         page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000  # a page, not a blank


# -- edge cases ---------------------------------------------------------------------------

def per_query_results(values: dict, ids=None) -> dict:
    """{name: Results} with map values given per system (queries q0, q1, ...)."""
    spec = irm.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "map").measure_of("map")
    out = {}
    for name, column in values.items():
        column = np.asarray(column, dtype=np.float64)
        query_ids = np.array(ids[name] if ids else [f"q{i}" for i in range(len(column))])
        out[name] = irm.Results(query_ids, {"map": column}, {"map": spec}, run_name=name)
    return out


def test_identical_runs_a_single_query_and_left_out_queries_render():
    same = irm.compare(None, per_query_results({"a": [0.5, 0.2], "b": [0.5, 0.2]}), "map")
    page = same.to_html()
    assert_self_contained(page)
    assert "0 wins, 2 ties, 0 losses" in page and page.count("<p class=\"note\">none</p>") == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = irm.compare(None, per_query_results({"a": [0.5], "b": [0.25]}), "map")
    assert_self_contained(one.to_html())
    runs = per_query_results({"a": [0.5, 0.2, 0.1], "b": [0.4, 0.3]},
                             ids={"a": ["q1", "q2", "q<3>"], "b": ["q1", "q2"]})
    with pytest.warns(irm.comparison.QueryAlignmentWarning):
        missing = irm.compare(None, runs, "map")
    page = missing.to_html()
    assert_self_contained(page)
    assert 'id="left-out"' in page and "lacks 1: <span class=\"qid\">q&lt;3&gt;</span>" in page
    assert "1 left out" in page


def test_all_pairs_of_many_systems_draw_the_first_twelve():
    rng = np.random.default_rng(2)
    runs = per_query_results({f"s{k:02d}": rng.random(20) for k in range(8)})
    cmp = irm.compare(None, runs, "map")  # 28 pairs
    page = cmp.to_html()
    assert_self_contained(page)
    assert "The first 12 of 28 comparisons are drawn." in page
    assert page.count("<div class=\"pair\">") == 12
    (matrix,) = [t for t in outline(page).tables if t["class"] == "matrix"]
    assert len(matrix["rows"]) == 9 and len(matrix["rows"][0]) == 10  # no group column
