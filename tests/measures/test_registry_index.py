"""The registry's index (irmetrics/measures/declared.py) against the ``@measure``
declarations in the family modules (issue 34 item 6): the registry lists every measure
without importing a family, so the index must be exactly what the declarations say.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import irmetrics
from irmetrics.measures import NICKNAMES, REGISTRY
from irmetrics.measures import registry
from irmetrics.measures.index import FAMILIES, PATH, index_source
from irmetrics.measures.params import LongCutoffs

TREE = str(Path(irmetrics.__file__).resolve().parents[1])


def _fresh(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [TREE, os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_index_is_what_the_declarations_generate():
    # a fresh process: the generator imports the families in its own order
    done = _fresh("import sys; from irmetrics.measures.index import index_source;"
                  " sys.stdout.write(index_source())")
    assert done.returncode == 0, done.stderr
    assert done.stdout == PATH.read_text(encoding="utf-8"), (
        "irmetrics/measures/declared.py is stale; run `python -m irmetrics.measures.index`")


def test_every_family_completes_its_entries_in_place():
    before = {name: m for name, m in REGISTRY.items()}
    registry.load_all()
    builtin = {name: m for name, m in REGISTRY.items() if m.family in FAMILIES}
    # declarations made by other tests (their own modules, not families) are not the index's
    assert set(builtin) == {name for name, m in registry.DECLARATIONS.items()
                            if m.family in FAMILIES}
    for name, m in builtin.items():
        assert m is before[name]  # requests made before the load stay valid
        declared = registry.DECLARATIONS[name]
        assert m == declared, name  # every field, kernel and docstring included
        assert not isinstance(m.kernel, registry.Deferred)
    assert {n for members in NICKNAMES.values() for n in members} >= {
        n for n, m in builtin.items() if m.groups}


def test_a_declaration_that_differs_from_its_entry_is_refused():
    name = "test_registry_index_planted"
    REGISTRY[name] = registry.MeasureDef(name=name, order=999,
                                         kernel=registry.Deferred("precision", name),
                                         family="test_registry_index",
                                         params=LongCutoffs((5,)))
    try:
        def kernel(ctx, params):
            """A planted declaration."""
        kernel.__module__ = "irmetrics.measures.test_registry_index"
        with pytest.raises(RuntimeError, match=r"differs from its entry.*\(params\)"):
            registry.measure(name, order=999, params=LongCutoffs((10,)))(kernel)
        assert isinstance(REGISTRY[name].kernel, registry.Deferred)
    finally:
        REGISTRY.pop(name, None)
        registry.DECLARATIONS.pop(name, None)


def test_a_declaration_missing_from_the_index_is_refused():
    def kernel(ctx, params):
        """Declared in a family module but not indexed."""
    kernel.__module__ = "irmetrics.measures.precision"
    with pytest.raises(RuntimeError, match="is not in the index"):
        registry.measure("test_registry_index_unindexed", order=998)(kernel)
    registry.DECLARATIONS.pop("test_registry_index_unindexed", None)
    assert "test_registry_index_unindexed" not in REGISTRY


def test_the_index_generator_sees_a_change():
    # index_source() reads the declarations, not the file: a changed declaration changes it
    text = index_source()
    assert "('precision', 'P', {'order': 12," in text
    spec = registry.DECLARATIONS["P"]
    registry.DECLARATIONS["P"] = registry.MeasureDef(**{**spec.__dict__, "order": 13})
    try:
        assert "('precision', 'P', {'order': 13," in index_source()
    finally:
        registry.DECLARATIONS["P"] = spec


def test_listing_and_parsing_import_no_family():
    done = _fresh(
        "import sys\n"
        "from irmetrics.measures import REGISTRY, names\n"
        "from irmetrics.measures.parse import parse_measures, known_names\n"
        "names(); known_names(); parse_measures(['P.5,10', 'nDCG@10', 'official', 'AP_IA'])\n"
        "print(sorted(m for m in sys.modules if m.rsplit('.', 1)[-1] in "
        f"{FAMILIES!r}))\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_copied_kernel_not_yet_imported_is_the_same_kernel():
    # requests are pickled (Spark) or copied before their family is imported
    import copy
    import pickle

    deferred = registry.Deferred("precision", "P")
    assert pickle.loads(pickle.dumps(deferred)) == deferred == copy.deepcopy(deferred)
    assert deferred != registry.Deferred("precision", "success")
    import irmetrics as irm

    lists, _ = irm.Evaluator({"q": {"a": 1}}, ["P.1"]).ranked_lists({"q": {"a": 1.0}})
    from irmetrics.measures.context import Context

    assert deferred(Context(lists), (1, 2)).tolist() == [[1.0, 0.5]]


def test_a_measure_computed_while_another_thread_imports_its_family_waits_for_it():
    # Thread a imports irmetrics.measures.user_model (its first SDCG) and is held just
    # after SDCG is declared, while the module's lower half (fixed_utility, which the
    # kernel calls) is not yet run; thread b then computes SDCG. It must wait for the
    # import (or use the finished module), not call a kernel of a half-run module
    # (planted: completing entries as each declaration runs gives b a NameError).
    done = _fresh(
        "import threading\n"
        "import irmetrics as irm\n"
        "from irmetrics.measures import registry\n"
        "declared, finished = threading.Event(), threading.Event()\n"
        "class Held(dict):\n"
        "    def __setitem__(self, name, spec):\n"
        "        super().__setitem__(name, spec)\n"
        "        if 'SDCG' in self and name != 'SDCG' and not declared.is_set():\n"
        "            declared.set(); finished.wait(1.0)\n"
        "registry.DECLARATIONS = Held(registry.DECLARATIONS)\n"
        "qrels, run = {'1': {'a': 1, 'c': 2}}, {'1': {'a': 1.0, 'b': 0.5}}\n"
        "got = {}\n"
        "def compute(who):\n"
        "    if who == 'b':\n"
        "        declared.wait(10)\n"
        "    try:\n"
        "        got[who] = irm.evaluate(qrels, run, ['SDCG(max_rel=2)@3']).to_dict()\n"
        "    except Exception as error:\n"
        "        got[who] = repr(error)\n"
        "    finished.set()\n"
        "threads = [threading.Thread(target=compute, args=(w,)) for w in 'ab']\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "assert declared.is_set()\n"
        "print(got['a'] == got['b'], got['b'])\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True"), done.stdout
