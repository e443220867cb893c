"""Issue 32: nothing silent, no crash -- user measures, ``agree`` and the meta-evaluation
API, the device road, the torchmetrics Metrics, the pytrec_eval drop-in and the release,
used as a new user would. One test (or a few) per item of the issue; each failed before
its fix.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import irmetrics as irm
from irmetrics.exceptions import (MissingQueriesWarning, ParameterError, ParameterTypeError,
                                  QueryAlignmentWarning)
from tests.comparison.test_hardening_26 import cli  # the CLI in-process: (status, stdout, stderr)

ROOT = Path(__file__).resolve().parents[2]
META = ROOT / "fixtures" / "meta_evaluation"
HUMAN, LLM = META / "qrels.human.txt", META / "qrels.llm.txt"
CMP = ROOT / "fixtures" / "compare"
EXAMPLE = ROOT / "fixtures" / "example"


@pytest.fixture
def run_missing_a_query(tmp_path):
    """bm25.run without its first query (1001): one query missing from one run."""
    lines = (META / "bm25.run").read_text().splitlines(keepends=True)
    first = lines[0].split()[0]
    path = tmp_path / "miss.run"
    path.write_text("".join(line for line in lines if line.split()[0] != first))
    return path, first


# -- crashes: the torchmetrics drop-in on predictions that require grad ----------------------

def test_torchmetrics_metrics_and_functions_take_predictions_that_require_grad():
    torch = pytest.importorskip("torch")
    tm = pytest.importorskip("torchmetrics")
    from irmetrics.compat import torchmetrics as drop_in

    assert isinstance(drop_in.RetrievalMAP(), tm.Metric)  # the torch face
    generator = torch.Generator().manual_seed(32)
    weight = torch.randn(4, requires_grad=True)
    features = torch.randn(60, 4, generator=generator)
    target = torch.randint(0, 2, (60,), generator=generator)
    indexes = torch.arange(6).repeat_interleave(10)
    logits = features @ weight  # a training step's predictions: they require grad
    assert logits.requires_grad
    for name in ("RetrievalMAP", "RetrievalMRR", "RetrievalNormalizedDCG", "RetrievalPrecision",
                 "RetrievalRecall", "RetrievalHitRate", "RetrievalRPrecision",
                 "RetrievalFallOut", "RetrievalAUROC"):
        ours, theirs = getattr(drop_in, name)(), getattr(tm.retrieval, name)()
        got = ours(logits, target, indexes=indexes)  # forward, as in training_step
        expected = theirs(logits, target, indexes=indexes)
        assert not got.requires_grad
        torch.testing.assert_close(got, expected.float(), rtol=0, atol=1e-6)
        torch.testing.assert_close(ours.compute(), theirs.compute().float(), rtol=0, atol=1e-6)
    single = torch.rand(7, generator=generator).requires_grad_()
    relevant = torch.tensor([1, 0, 1, 0, 0, 1, 0])
    for name in ("retrieval_average_precision", "retrieval_reciprocal_rank",
                 "retrieval_normalized_dcg", "retrieval_precision", "retrieval_recall",
                 "retrieval_hit_rate", "retrieval_r_precision", "retrieval_fall_out",
                 "retrieval_auroc"):
        got = getattr(drop_in, name)(single, relevant)
        expected = getattr(tm.functional.retrieval, name)(single, relevant)
        torch.testing.assert_close(got, expected.float(), rtol=0, atol=1e-6)
    precision, recall, top_k = drop_in.retrieval_precision_recall_curve(single, relevant, max_k=3)
    assert precision.shape == recall.shape == top_k.shape == (3,)
    # the numpy face (importable beside torch) reads such tensors too
    from irmetrics.compat.torchmetrics import numpy_api

    assert numpy_api.retrieval_average_precision(single, relevant) == pytest.approx(
        float(drop_in.retrieval_average_precision(single, relevant)), abs=1e-6)
    # the graph the metrics read from is untouched: a real backward pass next to them
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target.float())
    loss.backward()
    assert weight.grad is not None and torch.isfinite(weight.grad).all()


# -- crashes and weak spots of the pytrec_eval drop-in --------------------------------------

def test_pytrec_eval_drop_in_names_a_data_frame_and_a_string_of_measures():
    pd = pytest.importorskip("pandas")
    from irmetrics.compat.pytrec_eval import RelevanceEvaluator

    qrels = {"q1": {"d1": 1, "d2": 0}}
    evaluator = RelevanceEvaluator(qrels, {"map"})
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})
    for table in (frame, frame.iloc[:0], np.zeros(3)):
        with pytest.raises(ParameterTypeError, match=r"`scores` must be a mapping .*"
                           r"irmetrics.evaluate"):
            evaluator.evaluate(table)
    assert evaluator.evaluate(None) == evaluator.evaluate({}) == {}  # as pytrec_eval
    assert evaluator.evaluate({"q1": {"d1": 2.0, "d2": 1.0}}) == {"q1": {"map": 1.0}}
    with pytest.raises(ParameterTypeError, match=r"`measures` must be a set or list of measure"
                       r" names.*; got 'map'"):
        RelevanceEvaluator(qrels, "map")
    assert RelevanceEvaluator(qrels, ["map"]).evaluate({"q1": {"d1": 1.0}}) == {"q1": {"map": 1.0}}


# -- silent: -o over the measures file ------------------------------------------------------

@pytest.mark.parametrize("command", ["compare", "agree"])
def test_output_never_overwrites_the_measures_file(tmp_path, command):
    measures = tmp_path / "mym.py"
    text = ("import irmetrics as irm\n\n@irm.define_measure('HardeningHits', replace=True)\n"
            "def hits(view):\n    return view.count(view.is_rel)\n")
    measures.write_text(text)
    if command == "compare":
        inputs = [CMP / "qrels.txt", CMP / "bm25.run", CMP / "dense.run"]
    else:
        inputs = ["--qrels", f"h={HUMAN}", "--qrels", f"l={LLM}", META / "bm25.run",
                  META / "dense.run"]
    try:
        for output in (measures, tmp_path / "." / "mym.py"):
            status, out, err = cli(command, "-o", output, "--measures-from", measures,
                                   "-m", "HardeningHits@5", *inputs)
            assert status == 2 and "`-o` must be a file other than the inputs (it is measures" \
                " file" in err, err
            assert measures.read_text() == text
        status, _, err = cli(command, "-o", tmp_path / "out.txt", "--measures-from", measures,
                             "-m", "HardeningHits@5", "--quiet" if command == "agree" else "-c",
                             *inputs)
        assert status == 0 and (tmp_path / "out.txt").stat().st_size > 0, err
    finally:
        irm.remove_measure("HardeningHits")


# -- silent: the release ----------------------------------------------------------------------

def test_license_text_ships_in_the_wheel_and_the_sdist():
    if not (ROOT / "pyproject.toml").exists():
        pytest.skip("needs the source tree")
    license_text = (ROOT / "LICENSE").read_text()
    assert license_text.startswith("MIT License") and "irmetrics contributors" in license_text
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'(?m)^license = "MIT"$', pyproject)
    assert re.search(r'(?m)^license-files = \["LICENSE"\]$', pyproject)
    manifest = (ROOT / "MANIFEST.in").read_text()
    for line in ("graft tests", "graft fixtures", "graft docs", "prune benchmarks/data"):
        assert line in manifest.splitlines()
    wheel = os.environ.get("IRMETRICS_WHEEL")
    if wheel:  # CI's wheel step
        with zipfile.ZipFile(wheel) as archive:
            assert any(n.endswith(".dist-info/licenses/LICENSE") for n in archive.namelist())


@pytest.mark.slow
def test_sdist_holds_the_license_the_fixtures_and_the_tests(tmp_path):
    """The sdist built from this tree (setuptools, no network) holds what its tests read;
    CI also runs a subset of them from the unpacked sdist (.ci/run)."""
    if not (ROOT / "pyproject.toml").exists() or not (ROOT / ".git").exists():
        pytest.skip("needs the source checkout")
    # build.__main__, not build: `pip install .` leaves a build/ folder in the checkout, which
    # imports as an empty namespace package.
    if (importlib.util.find_spec("build") is None or importlib.util.find_spec("build.__main__") is None
            or importlib.util.find_spec("setuptools") is None):
        pytest.skip("needs build and setuptools (the dev extra)")
    source = tmp_path / "source"
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    done = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation",
                           "--outdir", str(tmp_path / "dist"), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (sdist,) = (tmp_path / "dist").glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    expected = {n for n in tracked if n.startswith(("fixtures/", "tests/"))}
    assert {"LICENSE", "CHANGELOG.md", "README.md", "docs/custom_measures.md"} <= names
    assert expected - names == set()
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


# -- silent: a stray bullet in a worked example -----------------------------------------------

_LIST_MARKER = re.compile(r"^\s*([-+*]|\d+[.)])\s+\S")


def stray_list_markers(text: str) -> list[str]:
    """Lines of a Markdown page that start with ``+``, ``-``, ``*`` or ``1.`` inside a
    paragraph (one that is not a list): Markdown starts a list there, so a wrapped
    formula (``... (7 + 0.8 * 3`` / ``+ 0.8^2 * 1)``) renders as a bullet."""
    found, block, fence = [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence, block = not fence, []
            continue
        if fence:
            continue
        if not line.strip():
            block = []
            continue
        if _LIST_MARKER.match(line) and block and not any(map(_LIST_MARKER.match, block)) \
                and not block[0].lstrip().startswith(("#", "|", ">", "<", ":", ".. ", "$")):
            found.append(line)
        block.append(line)
    return found


def test_no_page_starts_a_line_of_a_paragraph_with_a_list_marker():
    planted = "of `q1`: `(7 + 0.8^2 * 3) / (7 + 0.8 * 3\n+ 0.8^2 * 1) = 8.92`\n"
    assert stray_list_markers(planted) == ["+ 0.8^2 * 1) = 8.92`"]
    assert stray_list_markers("Options:\n\n- a\n- b\n  continued\n- c\n") == []
    pages = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md", ROOT / "CHANGELOG.md"]
    pages = [p for p in pages if p.exists()]
    if not pages:
        pytest.skip("needs the documentation pages")
    assert {p.name: stray_list_markers(p.read_text()) for p in pages
            if stray_list_markers(p.read_text())} == {}


# -- silent: agree shows progress on a terminal -----------------------------------------------

def test_agree_shows_progress_on_a_terminal_and_quiet_silences_it(tmp_path):
    from tests.io.test_progress import _cli_on_a_terminal, write_inputs

    qrels, run = write_inputs(tmp_path, queries=200, depth=60)
    shutil.copy(run, tmp_path / "other.run")
    shutil.copy(qrels, tmp_path / "llm.txt")
    args = ["-m", "map", "--resamples", "0", "--swap-trials", "1", "--qrels", f"h={qrels}",
            "--qrels", f"l={tmp_path / 'llm.txt'}", str(run), str(tmp_path / "other.run")]
    status, shown = _cli_on_a_terminal("agree", *args)
    assert status == 0 and "reading run.txt" in shown and "reading other.run" in shown
    assert "200 queries" in shown and "lines" in shown
    status, shown = _cli_on_a_terminal("agree", "--quiet", *args)
    assert status == 0 and shown == ""


def test_evaluate_grid_progress_keeps_the_numbers(tmp_path):
    from tests.io.test_progress import write_inputs

    qrels, run = write_inputs(tmp_path, split=True)  # the partitioned road too
    kwargs = dict(qrels={"a": str(qrels), "b": str(qrels)}, runs=[str(run)], measures=["map"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quiet = irm.evaluate_grid(**kwargs)
        shown = irm.evaluate_grid(**kwargs, progress=True)
    assert quiet.per_query().equals(shown.per_query())
    with pytest.raises(ParameterError, match="`progress` must be"):
        irm.evaluate_grid(**kwargs, progress="yes")


# -- weak: trec_eval's long-option prefixes ---------------------------------------------------

def test_trec_eval_long_option_prefixes_keep_working():
    files = [EXAMPLE / "qrels.txt", EXAMPLE / "run.txt"]
    _, expected, _ = cli("eval", "-q", "-m", "map", "-m", "P.5", *files)
    for argv in (["--meas=map", "--meas", "P.5", "--q"], ["--measure=map", "--m=P.5", "--qu"],
                 ["--me", "map", "--measu=P.5", "--query"]):
        status, out, err = cli("eval", *argv, *files)
        assert status == 0 and out == expected, (argv, err)
    status, out, _ = cli("eval", "--Max=1", "-m", "num_ret", *files)
    assert status == 0 and out.split()[-1] == "3"  # three queries, one document each
    # irmetrics' own options by a unique prefix, and a prefix trec_eval too finds ambiguous
    status, _, err = cli("eval", "--measures-f", "/nonexistent/mym.py", "-m", "map", *files)
    assert status == 2 and "mym.py" in err
    status, _, err = cli("eval", "--R", "qrels", *files)
    assert status == 1 and "ambiguous option: --R" in err
    status, out, _ = cli("compare", "--meas=map", CMP / "qrels.txt", CMP / "bm25.run",
                         CMP / "dense.run")
    assert status == 0 and "map" in out


# -- weak: user measures ------------------------------------------------------------------------

def test_define_measure_without_parentheses_registers_the_function():
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}}
    try:
        @irm.define_measure
        def HardeningBare(view):
            return view.count(view.is_rel)

        assert callable(HardeningBare) and HardeningBare.__name__ == "HardeningBare"
        res = irm.evaluate(qrels, run, ["HardeningBare@1", "HardeningBare"])
        assert res.aggregate() == {"HardeningBare@1": 1.0, "HardeningBare": 1.0}
    finally:
        irm.remove_measure("HardeningBare")
    with pytest.raises(ParameterError, match="`name` must be a Python identifier.*'<lambda>'"):
        irm.define_measure(lambda view: view.num_ret)
    with pytest.raises(ParameterError, match="`name` must be a Python identifier"):
        irm.define_measure("not a name")  # at once, not at the first evaluation


def test_a_measure_without_cutoff_says_so_for_name_at_k():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    try:
        irm.define_measure("HardeningDocs", lambda view: view.num_ret * 1.0, cutoff=False)
        with pytest.raises(ParameterError, match=r"'HardeningDocs@10': HardeningDocs takes no"
                           r" cutoff \(@k\), it is spelled 'HardeningDocs.*'; got @10"):
            irm.evaluate(qrels, run, ["HardeningDocs@10"])
        status, _, err = cli("eval", "-m", "HardeningDocs@10", EXAMPLE / "qrels.txt",
                             EXAMPLE / "run.txt")
        assert status != 0 and "takes no cutoff" in err and "unknown measure" not in err
        assert irm.evaluate(qrels, run, ["HardeningDocs"]).aggregate() == {"HardeningDocs": 1.0}
    finally:
        irm.remove_measure("HardeningDocs")


# -- weak: every spelling of a measure ----------------------------------------------------------

def test_every_method_that_takes_a_measure_takes_every_spelling():
    human = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"d": 1, "e": 0}}
    runs = {"x": {"q1": {"a": 3, "b": 2, "c": 1}, "q2": {"d": 2, "e": 1}},
            "y": {"q1": {"b": 3, "c": 2, "a": 1}, "q2": {"e": 2, "d": 1}}}
    grid = irm.evaluate_grid({"h": human, "l": human}, runs, ["P.10", "map", "ndcg_cut.10"])
    for spelling in ("P.10", "P_10", "P@10"):
        assert grid.means(spelling).equals(grid.means("P_10"))
        assert grid.scores(spelling)[1]["h"].tolist() == grid.scores("P_10")[1]["h"].tolist()
    assert grid.means("AP").equals(grid.means("map"))
    assert grid.means("nDCG@10").equals(grid.means("ndcg_cut_10"))
    table = grid.ranking_agreement(measures=["P.10", "nDCG@10"], n_resamples=0)
    assert table["measure"].to_list() == ["P_10", "ndcg_cut_10"]
    with pytest.raises(ParameterError, match="`measure` must be one of .*got 'P.5'"):
        grid.means("P.5")
    res = grid.results[("h", "x")]
    assert res.values("P.10") is res.values("P_10")
    assert res.summary_value("P@10") == res.summary_value("P_10") == 0.15000000000000002
    with pytest.raises(ParameterError, match="an output of this evaluation"):
        res.values("P_5")


def test_meta_evaluate_names_n_resamples_for_resamples():
    human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
    runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}},
            "y": {"q1": {"b": 2, "a": 1}, "q2": {"d": 2, "c": 1}}}
    with pytest.raises(TypeError, match=r"'resamples' \(did you mean 'n_resamples'\?") as info:
        irm.meta_evaluate({"h": human, "l": human}, runs, "P.1", resamples=100)
    assert isinstance(info.value, ParameterError)


# -- weak: agree reads its arguments as compare does, and warns once --------------------------

def test_agree_takes_name_equals_path_runs_and_refuses_a_nameless_qrels(run_missing_a_query):
    run, _ = run_missing_a_query
    qrels = ["--qrels", f"human={HUMAN}", "--qrels", f"llm={LLM}"]
    status, out, err = cli("agree", "-m", "map", "--resamples", "0", "--swap-trials", "1",
                           *qrels, f"BM25={run}", f"Dense={META / 'dense.run'}")
    assert status == 0, err
    assert re.search(r"(?m)^\s*BM25\s", out) and re.search(r"(?m)^\s*Dense\s", out)
    for bad in (f"={HUMAN}", "human="):
        status, _, err = cli("agree", "--qrels", bad, "--qrels", f"llm={LLM}", run,
                             META / "dense.run")
        assert status == 1 and "NAME=PATH needs a name and a path" in err, err
    status, _, err = cli("agree", *qrels, f"={run}", META / "dense.run")
    assert status == 1 and "NAME=PATH needs a name and a path" in err
    status, _, err = cli("agree", *qrels, f"A={run}", f"A={META / 'dense.run'}")
    assert status == 1 and "two runs are named 'A'" in err
    # compare reads NAME=PATH with the same parser
    status, _, err = cli("compare", CMP / "qrels.txt", f"={CMP / 'bm25.run'}", CMP / "dense.run")
    assert status == 1 and "NAME=PATH needs a name and a path" in err


def test_one_query_missing_from_one_run_is_reported_once(run_missing_a_query):
    run, query = run_missing_a_query
    status, _, err = cli("agree", "-m", "map", "-m", "P.10", "--resamples", "0",
                         "--swap-trials", "1", "--qrels", f"human={HUMAN}", "--qrels",
                         f"llm={LLM}", run, META / "dense.run")
    assert status == 0
    warned = [line for line in err.splitlines() if "warning" in line]
    assert len(warned) == 1, err
    assert f"run 'miss.run' lacks 1 ('{query}')" in warned[0] and "complete=True" in warned[0]
    _, _, compare_err = cli("compare", "-m", "map", HUMAN, run, META / "dense.run")
    assert len([line for line in compare_err.splitlines() if "warning" in line]) == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.meta_evaluate({"human": str(HUMAN), "llm": str(LLM)},
                          {"bm25": str(run), "dense": str(META / "dense.run")}, ["map"],
                          n_resamples=0, swap_trials=1)
    kinds = [w.category for w in caught if issubclass(w.category, MissingQueriesWarning)
             or issubclass(w.category, QueryAlignmentWarning)]
    assert kinds == [QueryAlignmentWarning]


# -- weak: install hints name the distribution ------------------------------------------------

def test_install_hints_name_the_distribution(monkeypatch):
    from irmetrics.device import arrays

    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed
    with pytest.raises(ImportError, match=r"pip install \"irmetrics-exact\[torch\]\"") as info:
        arrays.import_torch()
    assert "'irmetrics[" not in str(info.value)
    hint = re.compile(r"pip install[^\n]*\birmetrics\[")
    sources = [*(ROOT / "irmetrics").rglob("*.py"), *(ROOT / "docs").glob("*.md"),
               ROOT / "README.md"]
    wrong = [str(p.relative_to(ROOT)) for p in sources if p.exists() and hint.search(p.read_text())]
    assert wrong == []


# -- the README's test command is what CI runs --------------------------------------------------

@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_readme_test_command_is_what_ci_runs():
    import tomllib

    if not (ROOT / ".ci" / "run").exists():
        pytest.skip("needs the source checkout")
    readme = (ROOT / "README.md").read_text()
    command = 'pip install ".[test]" && python -m pytest'
    assert command in readme
    ci = (ROOT / ".ci" / "run").read_text()
    step = ci.split('step "README command 2', 1)[1].split("step_done", 1)[0]
    installs = re.findall(r"(?m)^\s*(?:python -m )?pip install .*$", step)
    assert installs == ['pip install --quiet ".[test]"'], installs  # nothing beside it
    assert re.search(r"(?m)^python -m pytest$", step)
    test_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["test"]
    assert "torchmetrics==1.9.0" in test_extra and any(d.startswith("torch==") for d in test_extra)
    assert re.search(r"about \d+ minutes", readme)
