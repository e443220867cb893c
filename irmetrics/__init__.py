"""irmetrics: trec_eval-exact retrieval evaluation on a vectorised numpy engine."""

import importlib

from .containers import Qrels, Run
from .evaluate import Evaluator, evaluate
from .results import Results

__version__ = "0.1.0"
__all__ = ["Comparison", "DiversityQrels", "Evaluator", "Grid", "JudgeAgreement", "JudgmentGroups",
           "MetaEvaluation", "Prefs", "Qrels", "Results", "Run", "adapters", "compare", "evaluate",
           "evaluate_diversity", "evaluate_grid", "evaluate_jg", "evaluate_prefs", "judge_agreement",
           "meta_evaluate", "plot", "read_per_query", "stats", "tie_report"]

#: Loaded on first use, so that ``import irmetrics`` stays light (PEP 562).
_LAZY = {
    "adapters": ("irmetrics.adapters", None),
    "stats": ("irmetrics.stats", None),
    "plot": ("irmetrics.comparison.plot", None),
    "compare": ("irmetrics.comparison", "compare"),
    "Comparison": ("irmetrics.comparison", "Comparison"),
    "read_per_query": ("irmetrics.io.per_query", "read_per_query"),
    "evaluate_diversity": ("irmetrics.judgment_formats", "evaluate_diversity"),
    "DiversityQrels": ("irmetrics.io.diversity", "DiversityQrels"),
    "evaluate_jg": ("irmetrics.judgment_formats", "evaluate_jg"),
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
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'irmetrics' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = importlib.import_module(module)
    return value if attribute is None else getattr(value, attribute)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
