"""irmetrics: trec_eval-exact retrieval evaluation on a vectorised numpy engine."""

import importlib
import re
from importlib import metadata
from pathlib import Path

from .containers import Qrels, Run
from .evaluate import Evaluator, evaluate
from .results import Results

#: The distribution's name on PyPI (``pip install irmetrics-exact``); the import name is
#: ``irmetrics``. PyPI refuses ``irmetrics``: it normalises names by dropping ``-``, ``_``
#: and ``.``, and ``ir-metrics`` exists.
DISTRIBUTION = "irmetrics-exact"


def _version() -> str:
    """The installed distribution's version, or, in a source tree that is not installed,
    the one pyproject.toml declares (the only place the version is written)."""
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


__version__ = _version()
__all__ = ["Comparison", "DiversityQrels", "Evaluator", "adapters", "JudgmentGroups", "Prefs",
           "Qrels", "Results", "Run", "compare", "evaluate", "evaluate_diversity", "evaluate_jg",
           "evaluate_prefs", "plot", "read_per_query", "stats", "tie_report"]

#: Loaded on first use, so that ``import irmetrics`` stays light (PEP 562).
_LAZY = {
    "adapters": ("irmetrics.adapters", None),
    "stats": ("irmetrics.stats", None),
    "plot": ("irmetrics.plot", None),
    "compare": ("irmetrics.comparison", "compare"),
    "Comparison": ("irmetrics.comparison", "Comparison"),
    "read_per_query": ("irmetrics.io.per_query", "read_per_query"),
    "evaluate_diversity": ("irmetrics.evaluate_intent", "evaluate_diversity"),
    "DiversityQrels": ("irmetrics.io.diversity", "DiversityQrels"),
    "evaluate_jg": ("irmetrics.evaluate_formats", "evaluate_jg"),
    "evaluate_prefs": ("irmetrics.evaluate_formats", "evaluate_prefs"),
    "JudgmentGroups": ("irmetrics.io.prefs", "JudgmentGroups"),
    "Prefs": ("irmetrics.io.prefs", "Prefs"),
    "tie_report": ("irmetrics.tie_analysis", "tie_report"),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'irmetrics' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = importlib.import_module(module)
    return value if attribute is None else getattr(value, attribute)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
