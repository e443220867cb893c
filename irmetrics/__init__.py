"""irmetrics: trec_eval-exact retrieval evaluation on a vectorised numpy engine."""

from . import adapters
from .containers import Qrels, Run
from .evaluate import Evaluator, evaluate
from .evaluate_formats import evaluate_jg, evaluate_prefs
from .io.prefs import JudgmentGroups, Prefs
from .results import Results

__version__ = "0.1.0"
__all__ = ["Evaluator", "adapters", "JudgmentGroups", "Prefs", "Qrels", "Results", "Run", "evaluate",
           "evaluate_jg", "evaluate_prefs"]
