"""docs/ir_measures.md: its example prints what the docs say, and its catalogue of every
ir_measures 0.4.3 measure matches ir_measures itself."""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest

import irmetrics as irm
from irmetrics.compat import ir_measures as ours

DOC = (Path(__file__).resolve().parents[2] / "docs" / "ir_measures.md").read_text()


def example_chunks(index=0):
    """Python block ``index`` as (code, expected output lines): each run of ``# ...``
    comment lines is the output of the code above it (a bare expression shows its repr)."""
    block = DOC.split("```python\n")[index + 1].split("```", 1)[0]
    chunks, code, out = [], [], []
    for line in block.splitlines():
        if line.startswith("# "):
            out.append(line[2:])
        else:
            if out:
                chunks.append(("\n".join(code), out))
                code, out = [], []
            code.append(line)
    if out:
        chunks.append(("\n".join(code), out))
    return chunks


@pytest.mark.parametrize("index, least", [(0, 5), (1, 2), (2, 2)])  # drop-in; diversity; define
def test_the_example_prints_what_the_docs_say(index, least):
    namespace = {}
    chunks = example_chunks(index)
    assert len(chunks) >= least
    for code, expected in chunks:
        tree = ast.parse(code)
        last = tree.body[-1]
        head = ast.Module(body=tree.body[:-1], type_ignores=[])
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            exec(compile(head, "<doc>", "exec"), namespace)
            if isinstance(last, ast.Expr):
                shown = [repr(eval(compile(ast.Expression(last.value), "<doc>", "eval"),
                                   namespace))]
            else:
                exec(compile(ast.Module(body=[last], type_ignores=[]), "<doc>", "exec"),
                     namespace)
                shown = None
        got = shown if shown is not None else printed.getvalue().splitlines()
        # ir_measures' aggregate dicts come in a set's order (it changes with
        # PYTHONHASHSEED, in ir_measures as in the drop-in): compared as sets of items
        assert [_items(line) for line in got] == [_items(line) for line in expected], code


def _items(line: str):
    """A printed dict as the set of its ``key: value`` items; another line as itself."""
    if line.startswith("{") and line.endswith("}") and ": " in line:
        return frozenset(line[1:-1].split(", "))
    return line


def catalogue():
    rows = []
    for line in DOC.split("<!-- catalogue", 1)[1].splitlines():
        m = re.fullmatch(r"\| (\S+) \| `([^`]+)` \| (\w+) \| (.+) \|", line)
        if m:
            rows.append(m.groups())
    return rows


def test_catalogue_lists_every_registry_measure_with_its_provider():
    ir_measures = pytest.importorskip("ir_measures", reason="ir-measures 0.4.3 is the oracle")
    rows = catalogue()
    assert sorted(r[0] for r in rows) == sorted(ir_measures.measures.registry)
    for name, example, provider, _ in rows:
        measure = ir_measures.parse_measure(example)
        assert measure.NAME == ir_measures.measures.registry[name].NAME, name
        picked = next(p.NAME for p in ir_measures.DefaultPipeline.providers
                      if p.supports(measure))
        assert picked == provider, (name, picked)


def test_native_rows_evaluate_and_the_others_say_why():
    qrels = {"1": {"a": 2, "b": 0}, "2": {"c": 1}}
    run = {"1": {"a": 1.0, "b": 2.0}, "2": {"c": 1.0, "d": 0.5}}
    intent_qrels = irm.DiversityQrels.from_records([("1", "x", "a", 2), ("1", "y", "b", 1),
                                                    ("2", "x", "c", 1)])
    for name, example, provider, status in catalogue():
        if status.startswith("native") and provider == "pyndeval":
            assert irm.evaluate_diversity(intent_qrels, run, [example]).aggregate(), name
            assert ours.calc_aggregate([ours.parse_measure(example)], intent_qrels, run), name
        elif status.startswith("native"):
            assert irm.evaluate(qrels, run, [example]).aggregate(), name
            assert ours.calc_aggregate([ours.parse_measure(example)], qrels, run), name
        else:
            assert status.startswith("not "), name
            assert len(status) > 25, name  # a reason, not a bare "no"
