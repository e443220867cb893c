"""The docstring examples of the metric-learning modules are executed and must hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "irmetrics.measures.metric_learning", "irmetrics.measures.ltr",
    "irmetrics.measures.torchmetrics_family", "irmetrics.compat.oml",
    "irmetrics.compat.torchmetrics", "irmetrics.compat.tfsim", "irmetrics.compat.pytorchltr",
    "irmetrics.compat.pml", "irmetrics.compat.ranking_metrics",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
