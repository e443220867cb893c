"""The package's import graph: layers, no circles, no private name taken across packages.

The layers are a contract (``LAYERS``, lowest first): a module may import its own layer
and the layers below it, never one above. A new top-level module or package must be
placed in a layer here.

Every ``import``/``from ... import`` in every module of ``irmetrics`` counts, inside
functions too (an import inside a function still makes a circle, it only hides it until
run time). Importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``, so those are
edges too. A leading underscore means "this module, or this package, only": a private
name (or a private module) may be imported from the same package, never from another one;
the top level is not a package for this purpose (``irmetrics._x`` is private to its module).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "irmetrics"

#: The layers, lowest first: ``(name, top-level modules and packages of irmetrics)``.
#: README.md's "engine <- measures <- road <- capabilities <- cli", with what sits under
#: the engine (the shared checks, the containers, the readers it streams from) and the
#: drop-ins between the capabilities and the faces.
LAYERS = [
    ("foundation: errors, checks, threads, progress, statistics without IR, lazy imports",
     {"exceptions", "checks", "parallel", "progress", "stats", "lazy"}),
    ("containers: Qrels, Run and their text form", {"containers"}),
    ("readers and writers", {"io"}),
    ("engine", {"engine"}),
    ("measures and the device", {"measures", "device", "unjudged"}),
    ("the road: evaluate, Evaluator, Results", {"evaluate", "results"}),
    ("capabilities", {"adapters", "judgment_formats", "comparison", "meta_evaluation",
                      "spark", "crosscheck", "plot", "leaderboards", "similarity", "fusion",
                      "conformance", "rag"}),
    ("drop-ins", {"compat"}),
    ("faces: the package, the command line", {"irmetrics", "cli", "__main__"}),
]


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _package_of(name: str) -> str:
    """The package a module belongs to (a package belongs to itself)."""
    return name if _is_package(name) else name.rpartition(".")[0]


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _package_of(module).split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str):
    """``(target module, imported name or None, line)`` for every import in ``module``."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "irmetrics":
                    yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if target.split(".")[0] != "irmetrics":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:  # "from pkg import module"
                    yield sub, None, node.lineno
                else:
                    yield target, alias.name, node.lineno


def _with_parents(target: str) -> list[str]:
    parts = target.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in MODULES]


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module in MODULES:
        for target, _, _ in _imports(module):
            assert target in MODULES, f"{module} imports {target}, which does not exist"
            for t in _with_parents(target):
                # A module's own package is already being imported when the module runs.
                if t != module and not module.startswith(t + "."):
                    graph[module].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_circle():
    cycles = _cycles(_graph())
    assert not cycles, "import circles: " + "; ".join(" <-> ".join(c) for c in cycles)


def _private_owner(target: str, name: str | None) -> str | None:
    """The package inside which ``target``/``name`` may be used, or None if it is public."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and part != "__init__":
            return _package_of(".".join(parts[:i])) if i > 1 else ".".join(parts[: i + 1])
    if name is not None and name.startswith("_") and not name.startswith("__"):
        # A private name of a module is shared with the module's own package, except at
        # the top level, where the package is the whole project.
        owner = _package_of(target)
        return target if owner == "irmetrics" else owner
    return None


def test_no_private_name_is_taken_across_packages():
    offences = []
    for module in sorted(MODULES):
        for target, name, line in _imports(module):
            owner = _private_owner(target, name)
            if owner is None:
                continue
            if module != owner and not module.startswith(owner + "."):
                shown = f"{target}.{name}" if name else target
                offences.append(f"{MODULES[module].relative_to(ROOT.parent)}:{line} takes {shown}")
    assert not offences, "private names taken across packages:\n" + "\n".join(offences)


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "irmetrics"
    for i, (_, members) in enumerate(LAYERS):
        if top in members:
            return i
    raise AssertionError(f"{module}: {top!r} is in no layer of LAYERS")


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} ({LAYERS[_layer(m)][0]}) imports {t} ({LAYERS[_layer(t)][0]})"
                  for m, targets in graph.items() for t in targets if _layer(t) > _layer(m))


def test_every_module_imports_only_its_layer_and_below():
    graph = _graph()
    upward = _upward(graph)
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_the_layer_checker_finds_an_upward_import():
    assert _upward({"irmetrics.engine.pack": {"irmetrics.evaluate"}}) != []
    assert _upward({"irmetrics.evaluate": {"irmetrics.engine.pack"}}) == []
    assert {top for _, members in LAYERS for top in members} >= {
        m.split(".")[1] for m in MODULES if m.count(".") >= 1}


def test_the_top_level_is_small():
    # 11: the foundation's modules (checks, exceptions, parallel, progress, lazy), the
    # road's (evaluate, results), the faces (__init__, __main__, the plot alias) and
    # crosscheck. A twelfth belongs in a package.
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(top) <= 11, top


def test_the_checker_finds_what_it_should():
    # The private-name rule: same package allowed, other package refused, top level strict.
    assert _private_owner("irmetrics.stats._common", "x") == "irmetrics.stats"
    assert _private_owner("irmetrics.stats.paired", "_bootstrap_sums") == "irmetrics.stats"
    assert _private_owner("irmetrics.evaluate", "_helper") == "irmetrics.evaluate"
    assert _private_owner("irmetrics.evaluate", "evaluate") is None
    # The cycle finder.
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
