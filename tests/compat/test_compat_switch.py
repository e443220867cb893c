"""The switch (irmetrics.compat.install / uninstall, irmetrics.compat.auto, python -m
irmetrics.compat.run): ``import pytrec_eval`` and ``import ir_measures``, submodules
included, give the drop-ins inside unchanged code, and a library already imported is
refused. Each case runs in a fresh interpreter (this one has imported the real ones).

The PyTerrier- and MTEB-shaped calls of tests/_shaped_callers.py print their tables,
orders and values; run with the real libraries and through each door, the outputs must
be the same bytes (after the first line, which names the modules used).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from irmetrics.compat import switch
from irmetrics.exceptions import ParameterError

ROOT = Path(__file__).resolve().parents[2]
CALLERS = str(ROOT / "tests" / "_shaped_callers.py")


def python(*args: str, env: dict | None = None, seed: str = "0") -> subprocess.CompletedProcess:
    """``python ARGS`` in a fresh interpreter, irmetrics importable, a fixed hash seed
    (ir_measures' orders are a set's)."""
    environ = {k: v for k, v in os.environ.items() if k != switch.ENVIRONMENT_VARIABLE}
    environ.update({"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed, **(env or {})})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env=environ, cwd=str(ROOT), timeout=600)


def check(code: str, **kwargs) -> str:
    done = python("-c", code, **kwargs)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_install_maps_the_names_and_their_submodules():
    out = check("""
from irmetrics.compat import install, installed, uninstall
install()
import pytrec_eval, ir_measures
from ir_measures.measures import Judged
from ir_measures.measures.base import Measure, BaseMeasure
from ir_measures.providers.base import Provider
from ir_measures.providers.pytrec_eval_provider import PytrecEvalProvider
import ir_measures.util
from irmetrics.compat import ir_measures as drop, pytrec_eval as pte
assert pytrec_eval is pte and ir_measures is drop and Judged is drop.Judged
assert Measure is drop.Measure and Provider is drop.Provider and ir_measures.util is drop.util
assert pytrec_eval.__name__ == "irmetrics.compat.pytrec_eval"  # its own name, untouched
assert pytrec_eval.__version__ == "0.5.11"  # ir_measures checks it is set
try:
    import ir_measures.nothing
except ModuleNotFoundError as err:
    print(err)
print(installed())
uninstall()
import sys
assert "pytrec_eval" not in sys.modules and "ir_measures.measures.base" not in sys.modules
import pytrec_eval, ir_measures
print(pytrec_eval.__name__, ir_measures.__name__, installed())
""")
    assert out.splitlines() == ["No module named 'ir_measures.nothing'",
                                "['ir_measures', 'pytrec_eval']",
                                "pytrec_eval ir_measures []"]


def test_a_library_already_imported_is_refused():
    out = check("""
import pytrec_eval
from irmetrics.compat import install, installed
from irmetrics.exceptions import AlreadyImportedError
try:
    install("ir_measures", "pytrec_eval")
except AlreadyImportedError as err:
    assert isinstance(err, ImportError) and err.name == "pytrec_eval"
    print(err)
print(installed())
install("ir_measures")  # the other one is free
import ir_measures
print(ir_measures.__name__)
""")
    first, rest = out.splitlines()[0], out.splitlines()[1:]
    assert first.startswith("cannot install irmetrics' drop-in as 'pytrec_eval': the real"
                            " pytrec_eval is already imported ('pytrec_eval')")
    assert rest == ["[]", "irmetrics.compat.ir_measures"]


def test_real_ir_measures_over_the_pytrec_eval_drop_in():
    # Only pytrec_eval switched: the real ir_measures takes the drop-in as its provider.
    out = check("""
from irmetrics.compat import install
install("pytrec_eval")
import ir_measures
print(ir_measures.__name__, ir_measures.pytrec_eval.pytrec_eval is None)
print(ir_measures.calc_aggregate([ir_measures.P@1], {"q": {"a": 1}}, {"q": {"a": 1.0}}))
print(ir_measures.pytrec_eval.pytrec_eval.__name__)
""")
    assert out.splitlines() == ["ir_measures True", "{P@1: 1.0}", "irmetrics.compat.pytrec_eval"]


def test_auto_reads_the_environment():
    code = ("import irmetrics.compat.auto, sys\n"
            "import pytrec_eval, ir_measures\n"
            "print(pytrec_eval.__name__, ir_measures.__name__)")
    assert check(code, env={switch.ENVIRONMENT_VARIABLE: "pytrec_eval"}).split() == \
        ["irmetrics.compat.pytrec_eval", "ir_measures"]
    assert check(code, env={switch.ENVIRONMENT_VARIABLE: "all"}).split() == \
        ["irmetrics.compat.pytrec_eval", "irmetrics.compat.ir_measures"]
    done = python("-c", code, env={switch.ENVIRONMENT_VARIABLE: "trec_eval"})
    assert done.returncode == 1
    assert "`IRMETRICS_DROPINS` must be 'all' or names among ['ir_measures'," \
           " 'pytrec_eval'] separated by commas; got 'trec_eval'." in done.stderr


def test_names_from_environment_and_bad_names():
    assert switch.names_from_environment({}) == ["pytrec_eval", "ir_measures"]
    assert switch.names_from_environment({"IRMETRICS_DROPINS": " ir_measures , "}) == \
        ["ir_measures"]
    with pytest.raises(ParameterError, match="`names` must be among"):
        switch.install("pytrec-eval")
    with pytest.raises(ParameterError, match="`names` must be among"):
        switch.uninstall("ranx")


def test_the_runner_runs_modules_and_scripts(tmp_path):
    script = tmp_path / "show.py"
    script.write_text("import sys, pytrec_eval\n"
                      "print(__name__, pytrec_eval.__name__, sys.argv[1:])\n")
    out = check(f"import runpy, sys; sys.argv = ['run', '--only', 'pytrec_eval', {str(script)!r},"
                " 'a', '-b']; runpy.run_module('irmetrics.compat.run', run_name='__main__')")
    assert out.split() == ["__main__", "irmetrics.compat.pytrec_eval", "['a',", "'-b']"]
    done = python("-m", "irmetrics.compat.run", "json.tool", "--help")  # a module, as -m
    assert done.returncode == 0 and "usage" in done.stdout.lower()
    done = python("-m", "irmetrics.compat.run")
    assert done.returncode == 1 and "usage: python -m irmetrics.compat.run" in done.stderr


@pytest.mark.parametrize("value", ["--only=", "--only= , "])
def test_the_runner_refuses_an_empty_only(value):
    # an empty --only installed both drop-ins (install() with no names)
    from irmetrics.compat.run import main
    with pytest.raises(ParameterError, match="`--only` must be names separated by commas"):
        main([value, "json.tool"])
    assert "pytrec_eval" not in sys.modules or not sys.modules["pytrec_eval"].__name__ \
        .startswith("irmetrics")


@pytest.fixture(scope="module")
def real_output():
    pytest.importorskip("pandas")
    pytest.importorskip("ir_measures")
    pytest.importorskip("pytrec_eval")
    done = python(CALLERS)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("door", ["install", "runner", "auto"])
def test_shaped_calls_through_each_door_print_the_same_bytes(real_output, door):
    """pt.Experiment tables (means and per-query rows), pt.Evaluate's dict, MTEB's
    per-query scores and rounded means: same orders, values bit for bit (their reprs)."""
    args = {"install": [CALLERS, "--install"],
            "runner": ["-m", "irmetrics.compat.run", CALLERS],
            "auto": ["-c", f"import irmetrics.compat.auto, runpy; runpy.run_path({CALLERS!r},"
                     " run_name='__main__')"]}[door]
    done = python(*args)
    assert done.returncode == 0, done.stderr
    ours = done.stdout.splitlines()
    assert real_output[0] == "ir_measures pytrec_eval"
    assert ours[0] == "irmetrics.compat.ir_measures irmetrics.compat.pytrec_eval"
    assert len(ours) == len(real_output) == 6
    for got, want in zip(ours[1:], real_output[1:]):
        assert got == want


def test_shaped_calls_under_another_hash_seed(real_output):
    # ir_measures' orders follow the hash seed; the drop-in's follow it the same way.
    real = python(CALLERS, seed="11")
    ours = python(CALLERS, "--install", seed="11")
    assert real.returncode == ours.returncode == 0, ours.stderr
    assert real.stdout.splitlines()[1:] == ours.stdout.splitlines()[1:]


def test_real_pyterrier_experiment_through_install():
    # PyTerrier's own pt.Experiment (installed: python-terrier; no Java needed for runs
    # given as frames): tables, per-query rows, baseline columns, the same bytes.
    pytest.importorskip("pyterrier")
    real = python(CALLERS, "--pyterrier")
    ours = python(CALLERS, "--pyterrier", "--install")
    assert real.returncode == ours.returncode == 0, ours.stderr
    assert len(real.stdout.splitlines()) == 9
    assert real.stdout.splitlines()[1:] == ours.stdout.splitlines()[1:]


def test_real_mteb_retrieval_scores_through_install():
    # MTEB's own scoring (mteb 2.x calculate_retrieval_scores: per-query pytrec_eval
    # values, means, MRR, hit rate, nAUCs), the same bytes.
    pytest.importorskip("mteb")
    real = python(CALLERS, "--mteb")
    ours = python(CALLERS, "--mteb", "--install")
    assert real.returncode == ours.returncode == 0, ours.stderr
    assert len(real.stdout.splitlines()) == 8
    assert real.stdout.splitlines()[1:] == ours.stdout.splitlines()[1:]
