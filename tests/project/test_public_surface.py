"""The public surface, drawn with names: the modules the API reference documents
(docs/api/*.rst) are the public ones, each declares its names in ``__all__``, and what
the reference documents of it is exactly that ``__all__``. docs/check_api.py (run on the
built site in CI) checks the same modules, so the three lists cannot drift apart. Every
other module is internal, whatever its name (docs/api/index.md says so).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIRECTIVE = re.compile(r"^\.\. (automodule|autofunction|autoclass|autoexception|autodata):: "
                       r"([\w.]+)\n((?:[ \t]+:[\w-]+:.*\n)*)", re.M)


def documented() -> dict[str, set[str] | None]:
    """``{module: names the reference documents of it}``; None: every name of its
    ``__all__`` (``automodule`` with the default ``:members:``)."""
    out: dict[str, set[str] | None] = {}
    for rst in sorted((ROOT / "docs" / "api").glob("*.rst")):
        for kind, target, options in DIRECTIVE.findall(rst.read_text()):
            if kind == "automodule":
                members = re.search(r":members:(.*)", options)
                listed = members and members.group(1).strip()
                out[target] = ({n.strip() for n in listed.split(",")} if listed else None)
            else:
                module, _, name = target.rpartition(".")
                names = out.setdefault(module, set())
                if names is not None:
                    names.add(name)
    return out


def checked_by_check_api() -> set[str]:
    """The modules docs/check_api.py checks (read, not imported: it needs Sphinx)."""
    tree = ast.parse((ROOT / "docs" / "check_api.py").read_text())
    values = {t.id: ast.literal_eval(node.value) for node in tree.body
              if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)
              and t.id in ("MODULES", "COMPAT")}
    return set(values["MODULES"]) | {f"irmetrics.compat.{m}" for m in values["COMPAT"]}


DOCUMENTED = documented()
#: Modules that need an optional dependency to import are still public; the test imports
#: them only where it is installed.
OPTIONAL = {"irmetrics.plot": "matplotlib", "irmetrics.spark": "pyspark"}


def load(name: str):
    if name in OPTIONAL:
        pytest.importorskip(OPTIONAL[name])
    return importlib.import_module(name)


def test_the_documented_modules_are_the_checked_ones():
    modules = set(DOCUMENTED)
    # autofunction/autoclass of a package's re-exported name documents the package
    assert modules == checked_by_check_api(), (
        sorted(modules ^ checked_by_check_api()))


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_every_public_module_declares_its_names(name):
    module = load(name)
    names = getattr(module, "__all__", None)
    assert names is not None, f"{name} has no __all__"
    assert len(set(names)) == len(names), f"{name}.__all__ repeats a name"
    assert [n for n in names if not hasattr(module, n)] == []
    assert all(not n.startswith("_") or n == "__version__" for n in names)
    namespace: dict = {}
    exec(f"from {name} import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(names)


def documented_objects() -> set[int]:
    """``id`` of every function and class the reference documents, wherever."""
    out = set()
    for name, names in DOCUMENTED.items():
        if name in OPTIONAL and importlib.util.find_spec(OPTIONAL[name]) is None:
            continue
        module = importlib.import_module(name)
        for n in (module.__all__ if names is None else names):
            out.add(id(getattr(module, n)))
    return out


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_the_reference_documents_exactly_the_public_names(name):
    """What a page lists of a module is in its ``__all__``; every function and class of
    that ``__all__`` has a page (here or under the name it is re-exported as)."""
    module = load(name)
    wanted = DOCUMENTED[name]
    if wanted is None:  # automodule: autodoc documents __all__ itself
        return
    assert wanted <= set(module.__all__), sorted(wanted - set(module.__all__))
    pages = documented_objects()
    callables = {n for n in module.__all__
                 if inspect.isclass(getattr(module, n)) or inspect.isfunction(getattr(module, n))}
    assert sorted(n for n in callables if id(getattr(module, n)) not in pages) == []


def test_the_parser_reads_both_forms():
    text = (".. automodule:: a.b\n   :members: x, y\n\n.. automodule:: a.c\n\n"
            ".. autofunction:: a.f\n")
    found = {t: o for _, t, o in DIRECTIVE.findall(text)}
    assert set(found) == {"a.b", "a.c", "a.f"} and ":members: x, y" in found["a.b"]


@pytest.mark.parametrize("name", sorted(n for n, names in DOCUMENTED.items() if names is None))
def test_a_documented_module_hides_no_public_callable(name):
    """Where the page documents the whole module, every function and class it defines
    under a public name is in ``__all__`` (dropping one would drop its page silently)."""
    module = load(name)
    own = {n for n, v in vars(module).items() if not n.startswith("_")
           and (inspect.isclass(v) or inspect.isfunction(v)) and v.__module__ == name}
    assert sorted(own - set(module.__all__)) == []


def test_the_top_level_shows_no_standard_library_names():
    # dir() and tab completion on the package list what it offers, not the modules its
    # __init__ happens to use (Path, re, importlib, metadata showed there before).
    import irmetrics

    shown = {n for n in dir(irmetrics) if not n.startswith("_")}
    assert not shown & {"Path", "re", "importlib", "metadata"}
    assert set(irmetrics.__all__) <= shown
