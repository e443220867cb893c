"""Check that the built site documents every public function and class.

    python docs/check_api.py docs/_build/html/objects.inv

The public surface is the ``__all__`` of ``irmetrics`` and of its public modules, plus
the public classes and functions defined in each ``irmetrics.compat`` module. Exits 1 and
lists what has no entry in the site's inventory.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sphinx.util.inventory import InventoryFile  # noqa: E402

MODULES = ["irmetrics", "irmetrics.adapters", "irmetrics.stats", "irmetrics.plot",
           "irmetrics.spark", "irmetrics.io", "irmetrics.exceptions", "irmetrics.progress",
           "irmetrics.containers", "irmetrics.judgment_formats", "irmetrics.measures.custom",
           "irmetrics.meta_evaluation", "irmetrics.device", "irmetrics.parallel",
           "irmetrics.leaderboards", "irmetrics.similarity", "irmetrics.stats.rank_intervals",
           "irmetrics.stats.topic_set_size", "irmetrics.stats.similarity",
           "irmetrics.crosscheck", "irmetrics.io.columnar", "irmetrics.cli",
           "irmetrics.fusion", "irmetrics.fusion.condorcet", "irmetrics.io.external",
           "irmetrics.conformance",
           "irmetrics.rag",
           "irmetrics.unjudged"]
COMPAT = ["pytrec_eval", "ir_measures", "torchmetrics", "oml", "pml", "tfsim", "pytorchltr",
          "ranking_metrics", "spark", "switch", "run"]


def public(module_name: str) -> dict[str, object]:
    """``{qualified name: object}`` of the module's public functions and classes."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:  # no __all__: what the module defines itself
        names = [n for n, v in vars(module).items() if not n.startswith("_")
                 and getattr(v, "__module__", None) == module_name]
    out = {}
    for name in names:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            out[f"{module_name}.{name}"] = value
    return out


def main(inventory_path: str) -> int:
    with open(inventory_path, "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    documented = {name for kind, entries in inventory.items() if kind.startswith("py:")
                  for name in entries}
    wanted = {}
    for name in MODULES + [f"irmetrics.compat.{m}" for m in COMPAT]:
        wanted.update(public(name))
    missing = []
    for name, value in sorted(wanted.items()):
        canonical = f"{value.__module__}.{value.__qualname__}"
        short = f"irmetrics.{value.__name__}"
        if not {name, canonical, short} & documented:
            missing.append(name)
    print(f"{len(wanted) - len(missing)} of {len(wanted)} public functions and classes have"
          " a page")
    for name in missing:
        print(f"  not documented: {name}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
