"""docs/measures.md is generated from the registry and must be up to date."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

from irmetrics.measures import REGISTRY
from irmetrics.measures.docs import render

DOC = Path(__file__).resolve().parent.parent / "docs" / "measures.md"


def test_measures_reference_is_up_to_date():
    assert DOC.read_text() == render(), (
        "docs/measures.md is stale; run `python -m irmetrics.measures.docs > docs/measures.md`")


def test_every_measure_is_documented_with_its_formula():
    text = render()
    for name, m in REGISTRY.items():
        assert f"### `{name}`" in text
        assert m.kernel.__doc__ and m.kernel.__doc__.strip(), name
        assert m.params.describe() in text


def test_aliases_name_known_tools():
    for m in REGISTRY.values():
        assert set(m.aliases) <= {"ir_measures", "ranx", "torchmetrics"}, m.name


@pytest.mark.parametrize("family", sorted({m.family for m in REGISTRY.values()}))
def test_docstring_examples_run(family):
    module = importlib.import_module(f"irmetrics.measures.{family}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
