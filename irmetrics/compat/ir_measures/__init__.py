"""Drop-in replacement for ir_measures 0.4.3, computed by irmetrics' one engine.

Change one import and keep the code::

    from irmetrics.compat import ir_measures
    ir_measures.calc_aggregate([ir_measures.nDCG@10, ir_measures.AP(rel=2)], qrels, run)

The public API of ir_measures 0.4.3 is here: the measure objects (also as the module
``ir_measures.measures``), ``parse_measure``/``parse_trec_measure``, the TREC readers,
``calc_aggregate``/``iter_calc``/``calc``/``evaluator`` of the default pipeline, and the
provider objects (``ir_measures.pytrec_eval``, ``.gdeval``, ``.judged``, ``.msmarco``,
``.cwl_eval``, ``.pyndeval``, ``.ranx``, ``.trectools``, ``.compat``, ``.accuracy``,
``.runtime``), each with ``supports``/``calc_aggregate``/``iter_calc``/``evaluator``, and
measures written in Python: ir_measures' ``define``/``define_byquery`` and irmetrics' own
(:func:`irmetrics.define_measure`, as ``registered_measure("GradedP")`` or by name in
``parse_measure("GradedP@10")``), usable beside the built-in measures in one call
(:mod:`.custom`). Measure objects print, compare and hash like ir_measures'
(``str(nDCG@10) == 'nDCG@10'``; they also compare equal to the real ir_measures objects
with the same spelling).

Every measure is computed natively, with the definition, tie order and printed precision
of the provider that computes it (:mod:`.providers`): by default the one ir_measures
0.4.3's pipeline picks, the first that supports the measure among runtime, pytrec_eval,
cwl_eval, compat, pyndeval, judged, msmarco, gdeval, accuracy and ranx:

* runtime for the measures defined in Python (:mod:`.custom`): ``define``'s by their
  ``impl`` on pandas frames, as ir_measures computes them; irmetrics' user measures by
  the engine (irmetrics' defaults);
* pytrec_eval (trec_eval 9.0.8) for the trec_eval measures: irmetrics'
  ``semantics="pytrec_eval"`` (float32 scores; ties by doc id descending);
  ``nDCG(gains=...)`` on the qrels relabelled first, as ir_measures does;
* gdeval for ``ERR@k`` and ``nDCG(dcg='exp-log2')@k`` (ties by doc id descending,
  double scores), reported with gdeval's 5 printed decimals, as ir_measures parses them;
* its msmarco provider for ``RR@k`` and its judged provider for ``Judged@k``, which
  both break ties by doc id *ascending* (the run is re-ranked in that order here,
  vectorised, before the engine sees it);
* cwl_eval for ``RBP``, ``SDCG``, ``BPM``, ``INST``, ``INSQ``, ``NERR8``-``NERR11``,
  which keeps the run's input order for tied scores (``ties="input_order"``: a dict's
  insertion order, a DataFrame's row order and a file's line order are kept as
  ir_measures keeps them); ``RBP(rel=.., p=..)`` is irmetrics'
  ``RBP(model='cwl', ...)``, not trec_eval 10's ``rbp``;
* pyndeval (ndeval) for the diversity measures (``alpha_nDCG@k``, ``ERR_IA@k``,
  ``NRBP``, ...), ties by doc id ascending as pyndeval sorts. Their qrels are intent-aware:
  as in ir_measures the intent is the qrels' ``iteration`` (a DataFrame column, the
  field of :class:`Qrel`-shaped tuples, a TREC qrels file's second column); a dict of
  dicts has one intent, ``"0"``;
* ranx for ``nDCG(dcg='exp-log2')`` without a cutoff (ranx's ``ndcg_burges``).

As in ir_measures, every qrels query gets a value: a query the run lacks scores 0
(ir_measures' ``Measure.DEFAULT``), run queries absent from the qrels are ignored, and
aggregates are the mean over those queries (the sum for ``NumQ``, ``NumRel``, ``NumRet``).
``iter_calc``, ``calc``, ``calc_aggregate`` and the evaluators yield and return in
ir_measures' own order (its pipeline's sets of measures, each provider's order of queries
and measures, the queries a provider skipped last), and aggregates are summed one value
at a time in that order, as ir_measures does, so they agree to the last bit. Deliberate differences, and what is not
reproduced, are listed in docs/ir_measures.md.
"""

from __future__ import annotations

from . import measures, providers, util
from .measures import *  # noqa: F403  (every measure object, as ir_measures exports them)
from .measures import NOT_PROVIDED, BaseMeasure, MeanAgg, Measure, ParamInfo, SumAgg
from .providers import CwlMetric, DefaultPipeline, Evaluator, FallbackProvider, Provider
from .custom import define, define_byquery, registered_measure
from .util import (CalcResults, GenericQrel, GenericScoredDoc, Metric, Qrel, ScoredDoc,
                   convert_trec_name, parse_measure, parse_trec_measure, parse_trec_qrels,
                   parse_trec_run, read_trec_qrels, read_trec_run)

#: The ir_measures API version this drop-in reproduces.
__version__ = "0.4.3"

# The provider objects, as ``ir_measures.<name>``.
accuracy = providers.registry["accuracy"]
cwl_eval = providers.registry["cwl_eval"]
compat = providers.registry["compat"]
gdeval = providers.registry["gdeval"]
pytrec_eval = providers.registry["pytrec_eval"]
trectools = providers.registry["trectools"]
judged = providers.registry["judged"]
msmarco = providers.registry["msmarco"]
pyndeval = providers.registry["pyndeval"]
ranx = providers.registry["ranx"]
runtime = providers.registry["runtime"]  # measures defined in Python (module .custom)

evaluator = DefaultPipeline.evaluator
iter_calc = DefaultPipeline.iter_calc
calc_aggregate = DefaultPipeline.calc_aggregate
calc = DefaultPipeline.calc
calc_ctxt = DefaultPipeline.calc_ctxt  # deprecated; replaced by evaluator
run_inputs = DefaultPipeline.run_inputs
qrel_inputs = DefaultPipeline.qrel_inputs

__all__ = [
    "accuracy", "cwl_eval", "compat", "gdeval", "pytrec_eval", "trectools", "judged",
    "msmarco", "pyndeval", "ranx", "runtime", "define", "define_byquery",
    "registered_measure", "CwlMetric", "DefaultPipeline", "FallbackProvider",
    "evaluator", "calc_ctxt", "iter_calc", "calc_aggregate", "calc", "run_inputs",
    "qrel_inputs", "Measure", "BaseMeasure", "ParamInfo", "MeanAgg", "SumAgg", "NOT_PROVIDED",
    "Provider", "Evaluator", "Qrel", "ScoredDoc", "Metric", "CalcResults", "GenericQrel",
    "GenericScoredDoc", "convert_trec_name", "parse_trec_measure", "read_trec_qrels",
    "read_trec_run", "parse_measure", "parse_trec_qrels", "parse_trec_run", "util",
    "measures", "providers", "__version__",
]
__all__ += sorted(measures.registry)
