"""irmetrics: trec_eval-exact retrieval evaluation on a vectorised numpy engine.

Where things live (imports run one way: engine ← measures ← road ← capabilities ← cli):

* the road -- :mod:`~irmetrics.containers` (``Qrels``, ``Run``, TREC text),
  :mod:`~irmetrics.engine` (pack → ``RankedLists`` → kernels' primitives),
  :mod:`~irmetrics.measures` (one declaration per measure), :mod:`~irmetrics.evaluate`
  (``evaluate``, ``Evaluator``), :mod:`~irmetrics.results` (``Results``);
* inputs -- :mod:`~irmetrics.io` (files, Parquet/Arrow), :mod:`~irmetrics.adapters`
  (matrices, tensors, neighbour lists, embeddings), :mod:`~irmetrics.judgment_formats`
  (intent-aware qrels, preferences, judgment groups);
* capabilities -- :mod:`~irmetrics.stats`, :mod:`~irmetrics.comparison` (``compare``,
  plots, the HTML report), :mod:`~irmetrics.meta_evaluation` (``tie_report``),
  :mod:`~irmetrics.fusion` (``fuse``, ``optimize``),
  :mod:`~irmetrics.spark`, :mod:`~irmetrics.compat` (library drop-ins),
  :mod:`~irmetrics.crosscheck` (against pytrec_eval), :mod:`~irmetrics.conformance`
  (anyone's measure against trec_eval's semantics);
* the command line -- :mod:`~irmetrics.cli`.

``import irmetrics`` loads the road only; everything else loads on first use.
"""

# Private aliases, so that dir(irmetrics) and tab completion show only the package's names.
# Nothing heavy here: every public name is imported on first use (PEP 562), so that a
# script using one drop-in or one subcommand pays for what it uses only.
import importlib as _importlib
import sys as _sys
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING as _TYPE_CHECKING

if _TYPE_CHECKING:  # what type checkers and IDEs see; the same names as _LAZY below
    from . import adapters, fusion, stats
    from .comparison import Comparison, compare
    from .comparison import plot as plot
    from .containers import Qrels, Run
    from .evaluate import BOUNDED_ROADS, ROADS, Evaluator, RoadPlan, evaluate
    from .fusion import fuse
    from .io.diversity import DiversityQrels
    from .io.per_query import read_per_query
    from .io.prefs import JudgmentGroups, Prefs
    from .judgment_formats import evaluate_diversity, evaluate_jg, evaluate_prefs
    from .measures.custom import (QueryRanking, Rankings, define_measure, load_measures,
                                  remove_measure)
    from .meta_evaluation import (Grid, JudgeAgreement, MetaEvaluation, evaluate_grid,
                                  judge_agreement, meta_evaluate, tie_report)
    from .rag import evaluate_nuggets
    from .results import Results

#: The distribution's name on PyPI (``pip install irmetrics-exact``); the import name is
#: ``irmetrics``. PyPI refuses ``irmetrics``: it normalises names by dropping ``-``, ``_``
#: and ``.``, and ``ir-metrics`` exists.
DISTRIBUTION = "irmetrics-exact"


def _version() -> str:
    """The installed distribution's version, or, in a source tree that is not installed,
    the one pyproject.toml declares (the only place the version is written)."""
    import re
    from importlib import metadata  # about 20 ms: only when the version is asked for
    from pathlib import Path

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        found = re.search(r'(?m)^version\s*=\s*"([^"]+)"', pyproject.read_text("utf-8"))
    except OSError:
        found = None
    return found.group(1) if found else "0+unknown"


__all__ = ["BOUNDED_ROADS", "ROADS", "RoadPlan", "Comparison", "DiversityQrels", "Evaluator", "Grid", "JudgeAgreement", "JudgmentGroups",
           "MetaEvaluation", "Prefs", "Qrels", "QueryRanking", "Rankings", "Results", "Run",
           "adapters", "compare", "define_measure", "evaluate", "evaluate_diversity",
           "evaluate_grid", "evaluate_jg", "evaluate_nuggets", "evaluate_prefs", "fuse", "fusion", "judge_agreement",
           "load_measures",
           "meta_evaluate", "plot", "read_per_query", "remove_measure", "stats", "tie_report"]

#: Every public name: ``(module, attribute)``, imported on first use (PEP 562); attribute
#: None: the module itself.
_LAZY = {
    "BOUNDED_ROADS": ("irmetrics.evaluate", "BOUNDED_ROADS"),
    "ROADS": ("irmetrics.evaluate", "ROADS"),
    "RoadPlan": ("irmetrics.evaluate", "RoadPlan"),
    "Evaluator": ("irmetrics.evaluate", "Evaluator"),
    "evaluate": ("irmetrics.evaluate", "evaluate"),
    "Qrels": ("irmetrics.containers", "Qrels"),
    "Run": ("irmetrics.containers", "Run"),
    "Results": ("irmetrics.results", "Results"),
    "QueryRanking": ("irmetrics.measures.custom", "QueryRanking"),
    "Rankings": ("irmetrics.measures.custom", "Rankings"),
    "define_measure": ("irmetrics.measures.custom", "define_measure"),
    "load_measures": ("irmetrics.measures.custom", "load_measures"),
    "remove_measure": ("irmetrics.measures.custom", "remove_measure"),
    "adapters": ("irmetrics.adapters", None),
    "stats": ("irmetrics.stats", None),
    "plot": ("irmetrics.comparison.plot", None),
    "compare": ("irmetrics.comparison", "compare"),
    "Comparison": ("irmetrics.comparison", "Comparison"),
    "read_per_query": ("irmetrics.io.per_query", "read_per_query"),
    "evaluate_diversity": ("irmetrics.judgment_formats", "evaluate_diversity"),
    "DiversityQrels": ("irmetrics.io.diversity", "DiversityQrels"),
    "evaluate_jg": ("irmetrics.judgment_formats", "evaluate_jg"),
    "evaluate_nuggets": ("irmetrics.rag", "evaluate_nuggets"),
    "evaluate_prefs": ("irmetrics.judgment_formats", "evaluate_prefs"),
    "JudgmentGroups": ("irmetrics.io.prefs", "JudgmentGroups"),
    "Prefs": ("irmetrics.io.prefs", "Prefs"),
    "tie_report": ("irmetrics.meta_evaluation", "tie_report"),
    "evaluate_grid": ("irmetrics.meta_evaluation", "evaluate_grid"),
    "Grid": ("irmetrics.meta_evaluation", "Grid"),
    "judge_agreement": ("irmetrics.meta_evaluation", "judge_agreement"),
    "JudgeAgreement": ("irmetrics.meta_evaluation", "JudgeAgreement"),
    "meta_evaluate": ("irmetrics.meta_evaluation", "meta_evaluate"),
    "MetaEvaluation": ("irmetrics.meta_evaluation", "MetaEvaluation"),
    "fusion": ("irmetrics.fusion", None),
    "fuse": ("irmetrics.fusion", "fuse"),
}


def __getattr__(name):
    if name == "__version__":
        value = globals()["__version__"] = _version()
        return value
    if name not in _LAZY:
        raise AttributeError(f"module 'irmetrics' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = _importlib.import_module(module)
    return value if attribute is None else getattr(value, attribute)


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


class _Package(_ModuleType):
    """This package's module type: ``irmetrics.evaluate`` stays the function.

    Importing the submodule ``irmetrics.evaluate`` (which the road does on first use)
    binds the submodule to the package's attribute of that name; the public name is the
    function, as it was when the package root imported it eagerly. (The submodule stays
    reachable as ``sys.modules["irmetrics.evaluate"]`` and through ``from
    irmetrics.evaluate import ...``.)"""

    def __setattr__(self, name, value):
        if name == "evaluate" and isinstance(value, _ModuleType):
            value = value.evaluate
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
