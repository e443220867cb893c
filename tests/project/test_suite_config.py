"""The test run's own rules: the ``slow`` marker is set and leaves out what it names, and
a deprecation warning attributed to irmetrics fails the run (pyproject.toml)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.conftest import SLOW

ROOT = Path(__file__).resolve().parents[2]


def collected(*args: str) -> set[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", *args], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode in (0, 5), out.stdout[-2000:] + out.stderr[-2000:]
    return {line.split("[")[0] for line in out.stdout.splitlines() if "::" in line}


def test_slow_tests_are_marked_and_deselectable():
    files = sorted({s.split("::")[0] for s in SLOW}) + ["tests/spark/test_spark.py"]
    every = collected(*files)
    quick = collected("-m", "not slow", *files)
    slow = collected("-m", "slow", *files)
    assert SLOW <= every, sorted(SLOW - every)  # no entry names a test that is gone
    assert SLOW <= slow and not SLOW & quick
    assert quick and quick | slow == every
    assert {t for t in every if t.startswith("tests/spark/test_spark.py")} <= slow  # a JVM


def test_a_deprecation_in_irmetrics_is_an_error():
    for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        with pytest.raises(category):
            warnings.warn_explicit("old call", category, "irmetrics/engine/pack.py", 1,
                                   module="irmetrics.engine.pack")
    with warnings.catch_warnings(record=True) as caught:
        # elsewhere it is a warning as before (not an error)
        warnings.warn_explicit("old call", DeprecationWarning, "other.py", 1, module="other")
    assert [w.category for w in caught] in ([], [DeprecationWarning])
