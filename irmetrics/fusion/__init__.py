"""Run fusion: many runs into one (ranx's 25 methods and 6 normalisations), in trec_eval's
order with one tie rule, and the search for a method's weights and parameters.

>>> from irmetrics.fusion import fuse
>>> fuse([{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 3.0}}], method="rrf").to_dict()["q"]
{'b': 0.03252247488101534, 'a': 0.01639344262295082}
"""

from .fuse import METHODS, NORMS, Method, fuse
from .optimize import Optimization, default_grid, optimize, weight_grid

__all__ = ["fuse", "optimize", "Optimization", "METHODS", "NORMS", "Method", "default_grid",
           "weight_grid"]
