"""Evaluation from trec_eval's other judgment formats (its ``-R`` rel_info_format).

* :mod:`~irmetrics.judgment_formats.diversity` -- intent-aware qrels (``-R diversity``):
  :func:`evaluate_diversity` for alpha-nDCG, ERR-IA, NRBP, ...
* :mod:`~irmetrics.judgment_formats.preferences` -- preference files (``-R prefs``) and
  judgment groups (``-R qrels_jg``): :func:`evaluate_prefs`, :func:`evaluate_jg`.
* :mod:`~irmetrics.judgment_formats.filled` -- human qrels whose holes a machine judge
  fills: :func:`fill`, :func:`evaluate_filled` (the machine's share of each score and
  the bounds of the rest).
* :mod:`~irmetrics.judgment_formats.uncertain` -- label distributions per (query, doc):
  :func:`evaluate_uncertain` (expected values, their error, intervals over topics and
  label samples), :func:`as_label_distribution`, :func:`label_standard_error`.

Each entry point takes its own judgments and options, runs its own pack step in
:mod:`irmetrics.engine` and returns the same :class:`~irmetrics.Results` as
:func:`irmetrics.evaluate`.
"""

from .diversity import as_diversity_qrels, evaluate_diversity
from .filled import Filled, evaluate_filled, fill
from .uncertain import Expected, as_label_distribution, evaluate_uncertain, label_standard_error
from .preferences import as_judgment_groups, as_prefs, evaluate_jg, evaluate_prefs

__all__ = ["Expected", "Filled", "as_diversity_qrels", "as_judgment_groups",
           "as_label_distribution", "as_prefs", "evaluate_diversity", "evaluate_filled",
           "evaluate_jg", "evaluate_prefs", "evaluate_uncertain", "fill",
           "label_standard_error"]
