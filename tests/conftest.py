"""Fixtures shared by test modules."""

from __future__ import annotations

import shutil

import pytest


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
