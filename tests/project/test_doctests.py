"""Every docstring example in the package is executed and must hold."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
import re

import pytest

import irmetrics

ALL_MODULES = sorted(
    info.name for info in pkgutil.walk_packages(irmetrics.__path__, prefix="irmetrics.")
    # __main__: running it would start the CLI; compat.auto: importing it installs the
    # drop-ins for the whole test process (tests/compat/test_compat_switch.py runs it apart)
    if info.name not in ("irmetrics.__main__", "irmetrics.compat.auto")
)

#: Modules whose public functions carry worked examples from the spec: they must have some.
MUST_HAVE_EXAMPLES = {
    "irmetrics.evaluate", "irmetrics.compat.pytrec_eval",
    "irmetrics.measures.metric_learning", "irmetrics.measures.ltr",
    "irmetrics.measures.torchmetrics_family", "irmetrics.compat.oml",
    "irmetrics.compat.torchmetrics.numpy_api", "irmetrics.compat.torchmetrics.metrics",
    "irmetrics.compat.tfsim", "irmetrics.compat.pytorchltr",
    "irmetrics.compat.pml", "irmetrics.compat.ranking_metrics",
}


#: Optional dependencies an example may import: where one is not installed (CI's wheel
#: step has no torch), the module's examples are skipped rather than failed.
OPTIONAL_IMPORTS = ("torch", "torchmetrics", "pyspark", "matplotlib")


def _missing_optional(module) -> str | None:
    """The first optional dependency the module's examples import that is not installed."""
    sources = [example.source for test in doctest.DocTestFinder().find(module)
               for example in test.examples]
    for name in OPTIONAL_IMPORTS:
        imported = re.compile(rf"^\s*(import|from)\s+{name}\b", re.MULTILINE)
        if any(imported.search(s) for s in sources) and importlib.util.find_spec(name) is None:
            return name
    return None


#: Modules that import torch and torchmetrics (the torch face of the torchmetrics drop-in).
TORCH_MODULES = {"irmetrics.compat.torchmetrics.metrics", "irmetrics.compat.torchmetrics._ordering"}


@pytest.mark.parametrize("name", ALL_MODULES)
def test_docstring_examples(name):
    if name in TORCH_MODULES:
        pytest.importorskip("torchmetrics", reason="needs torch and torchmetrics (irmetrics-exact[torchmetrics])")
    module = importlib.import_module(name)
    missing = _missing_optional(module)
    if missing:
        pytest.skip(f"the examples of {name} import {missing}, which is not installed")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if name in MUST_HAVE_EXAMPLES:
        assert result.attempted > 0


def test_every_module_is_collected():
    assert MUST_HAVE_EXAMPLES <= set(ALL_MODULES)
    assert "irmetrics.engine.pack" in ALL_MODULES
