"""irmetrics: trec_eval-exact retrieval evaluation on a vectorised numpy engine."""

from .containers import Qrels, Run
from .evaluate import Evaluator, evaluate
from .results import Results

__version__ = "0.1.0"
__all__ = ["Evaluator", "Qrels", "Results", "Run", "evaluate"]
