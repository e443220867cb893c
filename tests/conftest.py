"""Fixtures shared by test modules."""

from __future__ import annotations

import shutil

import pytest

#: Tests of many seconds each (one process, this machine kind: 6-15 s); with every test
#: that starts Spark (the ``spark`` fixture: a JVM, 35 s to start, then 2-70 s a test)
#: they carry the ``slow`` marker, so ``pytest -m "not slow"`` is the quick run.
SLOW = {
    "tests/measures/test_reference_vs_pytrec_eval.py::test_reference_matches_pytrec_eval",
    "tests/compat/test_crosscheck_pytrec_eval.py::test_matches_pytrec_eval",
    "tests/compat/test_crosscheck_pytrec_eval.py::test_matches_pytrec_eval_many_levels",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if (item.nodeid.split("[")[0] in SLOW
                or "spark" in getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def spark():
    """One local[2] Spark session for the whole run (Spark starts in ~10 s); skipped, with
    the reason, when pyspark, pyarrow or Java is missing."""
    pytest.importorskip("pyarrow", reason="the Spark tests need pyarrow (irmetrics-exact[spark])")
    pytest.importorskip("pyspark", reason="the Spark tests need pyspark (irmetrics-exact[spark])")
    if shutil.which("java") is None:
        pytest.skip("pyspark needs Java: no `java` on PATH")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("irmetrics-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "3")
               .config("spark.default.parallelism", "2")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _user_measures_do_not_leak():
    """Measures a test defines (docs examples included) are removed after it, so that a
    later test, in any order, starts from the built-in registry."""
    from irmetrics.measures.custom import is_user_measure, remove_measure
    from irmetrics.measures.registry import REGISTRY

    before = {name for name, m in REGISTRY.items() if is_user_measure(m)}
    yield
    for name in [n for n, m in REGISTRY.items() if is_user_measure(m) and n not in before]:
        remove_measure(name)
