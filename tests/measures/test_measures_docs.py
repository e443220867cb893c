"""docs/measures.md is generated from the registry and must be up to date."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

from irmetrics.measures import REGISTRY
from irmetrics.measures.docs import render

DOC = Path(__file__).resolve().parents[2] / "docs" / "measures.md"


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


def test_every_family_has_a_page_with_references():
    from irmetrics.measures.docs import REFERENCES, families, render_family

    assert set(families()) == {m.family for m in REGISTRY.values()} == set(REFERENCES)
    for family in families():
        page = render_family(family)
        assert REFERENCES[family] and all(f"- {ref}" in page for ref in REFERENCES[family])
        for m in REGISTRY.values():
            if m.family == family:
                assert f"### `{m.name}`" in page and f"trec_eval name: `{m.name}`" in page


def test_family_pages_are_written_once(tmp_path):
    from irmetrics.measures.docs import families, write_family_pages

    write_family_pages(tmp_path)
    assert sorted(p.stem for p in tmp_path.glob("*.md")) == sorted(families() + ["index"])
    before = {p: p.stat().st_mtime_ns for p in tmp_path.glob("*.md")}
    write_family_pages(tmp_path)  # unchanged text: not rewritten (Sphinx reads nothing anew)
    assert before == {p: p.stat().st_mtime_ns for p in tmp_path.glob("*.md")}
