"""Conformance: check anyone's ranking measure against trec_eval's semantics.

:func:`check` runs a third-party callable (scikit-learn's ``ndcg_score``, a RAG
framework's hit rate, your own MAP) on a corpus of small generated queries, compares it
with irmetrics' engine under trec_eval's semantics, and says exactly where it differs:
which choice it makes for every degree of freedom of the measure (gain, discount, ideal,
denominator, ties, duplicates, empty queries, ...), and the smallest case that shows it.

* :mod:`~irmetrics.conformance.spec` -- the degrees of freedom of each measure family and
  one plain implementation of every choice (docs/conformance.md in prose);
* :mod:`~irmetrics.conformance.cases` -- the seeded corpus and its reference values;
* :mod:`~irmetrics.conformance.checker` -- :func:`check`, :class:`Report`, :func:`corpus`.

The command line is ``irmetrics conform module:function --measure nDCG@10 --input arrays``;
the pytest fixture ``irmetrics_conformance`` comes with the installed distribution.
"""

from .cases import INPUTS, Case
from .checker import TOLERANCE, Corpus, Counterexample, Report, check, corpus, parse_measure
from .spec import FAMILIES, Degree, Family

__all__ = ["check", "corpus", "parse_measure", "Report", "Counterexample", "Corpus", "Case",
           "Family", "Degree", "FAMILIES", "INPUTS", "TOLERANCE"]
