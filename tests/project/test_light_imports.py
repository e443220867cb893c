"""What a fresh interpreter imports (issue 34 item 6, issue 33's serial share): ``import
irmetrics`` nothing heavy, the drop-ins' dict road neither polars nor scipy, ``irmetrics
eval`` only what eval needs.

Each check runs its code in a fresh ``python -c`` (an import already made by another test
would hide one) and reads the process's ``sys.modules`` at its end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import irmetrics
from irmetrics.lazy import LazyModule, loaded

#: The tree under test (a source checkout or the installed wheel), first on the path.
TREE = str(Path(irmetrics.__file__).resolve().parents[1])
ROOT = Path(__file__).resolve().parents[2]
#: Libraries none of the roads below needs: tables (polars, pandas, pyarrow), statistics
#: (scipy), devices (torch), the distribution's metadata (only ``__version__`` reads it).
HEAVY = ("polars", "pandas", "pyarrow", "scipy", "torch", "importlib.metadata")


def modules_after(code: str) -> set[str]:
    """``sys.modules`` of a fresh interpreter once ``code`` has run (its stdout ignored)."""
    probe = ("import contextlib, io, sys\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             + "".join(f"    {line}\n" for line in code.strip().splitlines())
             + "print('\\n' + repr(sorted(sys.modules)))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [TREE, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", probe], env=env, cwd=str(ROOT),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(eval(done.stdout.strip().splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return [name for name in HEAVY if name in modules]


def test_the_checker_sees_a_heavy_import():
    # the probe would report one (a test that could not fail would prove nothing)
    assert "polars" in heavy(modules_after("import irmetrics\nimport polars"))


def test_import_irmetrics_imports_nothing_heavy():
    modules = modules_after("import irmetrics")
    assert heavy(modules) == []
    assert "numpy" not in modules
    assert sorted(m for m in modules if m.startswith("irmetrics")) == ["irmetrics"]


def test_every_public_name_loads_on_first_use():
    code = """
import irmetrics
names = dir(irmetrics)
assert set(irmetrics.__all__) <= set(names) and "__version__" in names, names
import irmetrics.evaluate   # binds the submodule to the package: the name stays the function
from irmetrics.evaluate import Evaluator
assert callable(irmetrics.evaluate) and irmetrics.evaluate.__name__ == "evaluate"
assert irmetrics.Evaluator is Evaluator
assert irmetrics.evaluate({"q": {"a": 1}}, {"q": {"a": 0.5}}, ["P.1"]).aggregate() == {"P_1": 1.0}
assert isinstance(irmetrics.__version__, str) and irmetrics.__version__
for name in irmetrics.__all__:
    if name not in ("plot",):   # plot needs matplotlib (an extra)
        getattr(irmetrics, name)
try:
    irmetrics.no_such_name
except AttributeError as exc:
    assert "no_such_name" in str(exc)
else:
    raise AssertionError("no AttributeError")
"""
    modules = modules_after(code)
    assert "irmetrics.stats" in modules and "irmetrics.comparison" in modules  # loaded


#: The dict road of every drop-in and of irmetrics' own API, with values checked here.
DICT_ROADS = """
from irmetrics.compat.pytrec_eval import RelevanceEvaluator
from irmetrics.compat import ir_measures
import irmetrics
qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}, "q3": {"y": 0}}
run = {"q1": {"a": 0.2, "b": 0.9, "c": 0.5, "z": 0.5}, "q2": {"x": 1.0, "y": 3.0}}
out = {}
out["pytrec_eval"] = RelevanceEvaluator(qrels, {"map", "ndcg_cut.2", "P.1"}).evaluate(run)
measures = [ir_measures.parse_measure(m) for m in ("AP", "nDCG@2", "P@1", "R@2")]
out["calc_aggregate"] = {str(k): v for k, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
out["iter_calc"] = [(m.query_id, str(m.measure), m.value) for m in ir_measures.iter_calc(measures, qrels, run)]
out["evaluate"] = irmetrics.evaluate(qrels, run, ["map", "ndcg_cut.2"]).aggregate()
out["Evaluator"] = irmetrics.Evaluator(qrels, ["recip_rank"]).evaluate(run).aggregate()
"""


def test_the_dict_roads_import_neither_polars_nor_scipy():
    code = DICT_ROADS + "import json, sys\nprint(json.dumps(out), file=sys.stderr)"
    modules = modules_after(code)
    assert heavy(modules) == []
    # and the values are those of the same calls in this process (polars loaded here)
    namespace: dict = {}
    exec(DICT_ROADS, namespace)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [TREE, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(ROOT),
                          capture_output=True, text=True, timeout=300, check=True)
    fresh = json.loads(done.stderr.strip().splitlines()[-1])
    assert fresh == json.loads(json.dumps(namespace["out"]))


#: What the dict roads never use: the diversity, preference and judgment-group engines
#: (loaded with such a measure's first run), thread pools (one thread on small calls),
#: temporary files (the file road's partitions), reading signatures (defining a measure),
#: gzip and json (reading files), difflib (suggesting a name), decimal (a user measure's
#: Decimal values: none exist before decimal is imported).
NOT_ON_THE_DICT_ROADS = ("irmetrics.engine.diversity", "irmetrics.engine.prefs",
                         "irmetrics.engine.judgment_groups", "concurrent.futures", "tempfile",
                         "shutil", "inspect", "importlib.util", "gzip", "json", "difflib",
                         "decimal")


def imported_by_irmetrics(code: str) -> tuple[set[str], set[str]]:
    """(``sys.modules`` at the end, the modules irmetrics' own code asked for) of a fresh
    interpreter running ``code``: numpy itself imports ``inspect``, so ``sys.modules``
    alone cannot tell whether irmetrics would have."""
    hook = """
import builtins
_import, _asked = builtins.__import__, set()
def _record(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and str((globals or {}).get("__name__", "")).startswith("irmetrics"):
        _asked.update((name, *(f"{name}.{f}" for f in fromlist or ())))
    return _import(name, globals, locals, fromlist, level)
builtins.__import__ = _record
"""
    modules = modules_after(hook + code + "\nprint(sorted(_asked))")
    # the probe's stdout is swallowed: ask again for the names, on stderr
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [TREE, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", hook + code
                           + "\nimport sys\nprint(repr(sorted(_asked)), file=sys.stderr)"],
                          env=env, cwd=str(ROOT), capture_output=True, text=True,
                          timeout=300, check=True)
    asked = set(eval(done.stderr.strip().splitlines()[-1]))
    return modules, asked


def test_the_checker_sees_a_module_numpy_already_imported():
    # irmetrics.measures.docs reads signatures: its `import inspect` is seen although
    # numpy has imported inspect before (the checker can fail)
    modules, asked = imported_by_irmetrics("import numpy\nimport irmetrics.measures.docs")
    assert "inspect" in modules and "inspect" in asked
    modules, asked = imported_by_irmetrics("import numpy\nimport irmetrics.engine.prefs")
    assert "irmetrics.engine.prefs" in modules


def test_the_dict_roads_import_only_what_they_use():
    # the calls of DICT_ROADS (values checked above) with Context measures of every
    # family registered but not run: registering diversity measures loads no engine
    modules, asked = imported_by_irmetrics(DICT_ROADS)
    loaded_by_us = modules - modules_after("import numpy")  # numpy loads inspect itself
    assert [m for m in NOT_ON_THE_DICT_ROADS if m in loaded_by_us or m in asked] == []


def test_a_first_diversity_run_loads_its_engine():
    # the engines left out above are there when a measure needs them
    modules, _ = imported_by_irmetrics("""
from irmetrics.compat import ir_measures
qrels = [ir_measures.GenericQrel("q", "a", 1)]
run = [ir_measures.ScoredDoc("q", "a", 1.0)]
ir_measures.calc_aggregate([ir_measures.parse_measure("alpha_nDCG@5")], qrels, run)
""")
    assert "irmetrics.engine.diversity" in modules


#: The file road: the TREC text reader (and irmetrics.io.trec on it), the chunked
#: streaming and packing of tables, the stacked qrels of many evaluators. A dict of dicts
#: runs none of them (the sinks it shares with the file road are irmetrics.engine.sinks).
FILE_ROAD = ("irmetrics.containers.trec_text", "irmetrics.io.trec", "irmetrics.engine.stream",
             "irmetrics.engine.pack", "irmetrics.engine.stacked", "irmetrics.engine.fanout")

#: repro_eval's call (benchmarks/bench_dropins.py --small): 58 measures on 50 queries.
REPRO_EVAL = """
from irmetrics.compat import ir_measures
cutoffs = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
names = ([f"{m}@{k}" for m in ("P", "R", "nDCG", "AP") for k in cutoffs]
         + [f"IPrec@{r / 10:.1f}" for r in range(11)]
         + ["AP", "nDCG", "RR", "Rprec", "Bpref", "SetP", "SetR", "SetF", "NumRel", "NumRet",
            "NumRet(rel=1)"])
qrels = {str(q): {f"d{d}": (q + d) % 3 for d in range(0, 40, 2)} for q in range(50)}
run = {str(q): {f"d{d}": round((q * d) % 17 / 17, 3) for d in range(30)} for q in range(50)}
ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, run)
"""


def test_the_dict_roads_import_no_file_road():
    # the drop-ins' and irmetrics' own dict calls (DICT_ROADS) and repro_eval's
    for code in (DICT_ROADS, REPRO_EVAL):
        modules = modules_after(code)
        assert [m for m in FILE_ROAD if m in modules] == []
        assert "irmetrics.engine.sinks" in modules  # the road ran
    # and the checker sees the file road once a file is read (it can fail)
    qrels, run = ROOT / "fixtures" / "example" / "qrels.txt", ROOT / "fixtures" / "example" / "run.txt"
    modules = modules_after(f"import irmetrics\nirmetrics.evaluate({str(qrels)!r}, {str(run)!r}, ['map'])")
    assert {"irmetrics.containers.trec_text", "irmetrics.engine.stream",
            "irmetrics.engine.pack"} <= modules


def test_the_file_road_names_stay_where_they_were():
    # names moved out of the file road's modules are still read from there
    from irmetrics.engine import pack, ranked, sinks, stream
    from irmetrics.containers import schema, trec_text
    import irmetrics.io as io
    import irmetrics.io.trec

    assert pack.BOGUS_DOC_ID == ranked.BOGUS_DOC_ID and pack.block_move is sinks.block_move
    assert stream.StreamedValues is sinks.StreamedValues
    assert (trec_text.UTF8, trec_text.LATIN1, trec_text.RELEVANCE_TYPES) == \
        (schema.UTF8, schema.LATIN1, schema.RELEVANCE_TYPES)
    assert io.read_qrels is irmetrics.io.trec.read_qrels and "read_qrels" in dir(io)
    with pytest.raises(AttributeError, match="no_such_name"):
        io.no_such_name


#: Measure families P@10 never needs: each is imported when one of its measures is first
#: computed (the registry lists every measure from irmetrics/measures/declared.py).
OTHER_FAMILIES = ("average_precision", "dcg", "diversity", "gain_based", "gdeval",
                  "incomplete", "judged", "judgment_groups", "ltr", "metric_learning",
                  "msmarco", "nuggets", "prefs", "ranx", "strings", "torchmetrics_family",
                  "user_model")


def _families(modules: set[str]) -> list[str]:
    return sorted(m.rsplit(".", 1)[1] for m in modules
                  if m.startswith("irmetrics.measures.") and m.rsplit(".", 1)[1] in
                  OTHER_FAMILIES + ("precision",))


def test_a_measure_imports_its_own_family_only():
    # P@10 through the ir_measures drop-in and pytrec_eval's: the precision family alone
    # (no bpref/infAP, gain, diversity, ... code); the user-measure module neither
    for code in ("""
from irmetrics.compat import ir_measures
ir_measures.calc_aggregate([ir_measures.P@10], {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}})
""", """
from irmetrics.compat.pytrec_eval import RelevanceEvaluator
RelevanceEvaluator({"q": {"a": 1}}, {"P.10"}).evaluate({"q": {"a": 1.0}})
"""):
        modules = modules_after(code)
        assert _families(modules) == ["precision"]
        assert "irmetrics.measures.custom" not in modules
        assert "irmetrics.measures.expected" not in modules
    # and the checker sees a family once its measure runs (it can fail)
    modules = modules_after(
        "import irmetrics\nirmetrics.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, ['bpref'])")
    assert _families(modules) == ["average_precision", "precision"]


def test_importing_the_drop_ins_imports_no_family():
    modules = modules_after("import irmetrics.compat.ir_measures\n"
                            "import irmetrics.compat.pytrec_eval\nimport irmetrics.evaluate")
    assert _families(modules) == []
    assert [m for m in ("irmetrics.measures.custom", "irmetrics.measures.expected",
                        "irmetrics.unjudged", "irmetrics.engine.fanout") if m in modules] == []


def test_irmetrics_eval_imports_what_eval_needs():
    qrels, run = ROOT / "fixtures" / "example" / "qrels.txt", ROOT / "fixtures" / "example" / "run.txt"
    modules = modules_after(f"""
from irmetrics.cli import main
assert main(["eval", "-q", "-m", "map", "-m", "P.10", {str(qrels)!r}, {str(run)!r}]) == 0
""")
    # (polars, which reads the file, imports importlib.metadata itself)
    assert [m for m in ("scipy", "pandas", "torch") if m in modules] == []
    others = ("stats", "comparison", "meta_evaluation", "fusion", "judgment_formats", "rag",
              "conformance", "similarity", "leaderboards", "adapters", "device")
    assert sorted(m for m in modules if m.split(".")[1:2] and m.split(".")[1] in others
                  and m.startswith("irmetrics.")) == []
    assert sorted(m for m in modules if m.startswith("irmetrics.cli.")
                  and m.endswith("_cmd")) == ["irmetrics.cli.eval_cmd"]


def test_the_version_is_read_when_asked_for():
    from irmetrics.cli import main

    modules = modules_after("from irmetrics.cli import main\nmain(['--version'])")
    assert "importlib.metadata" in modules
    assert main(["--version"]) == 0


def test_a_lazy_module_imports_on_first_read(monkeypatch):
    lazy = LazyModule("colorsys")
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    assert "not imported yet" in repr(lazy) and not loaded("colorsys")
    assert lazy.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    assert loaded("colorsys") and "(imported)" in repr(lazy)
    # read from the module each time: a patched attribute is seen
    monkeypatch.setattr(sys.modules["colorsys"], "ONE_THIRD", 0.5)
    assert lazy.ONE_THIRD == 0.5
    with pytest.raises(AttributeError):
        lazy.no_such_function
