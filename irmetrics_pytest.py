"""The pytest plugin of irmetrics-exact: one fixture, ``irmetrics_conformance``.

pytest loads it in every project where irmetrics-exact is installed (entry point
``pytest11``), so it imports nothing but pytest until the fixture is used, and registers
nothing else: no option, no hook, no marker.

    def test_ndcg(irmetrics_conformance):
        irmetrics_conformance(my_ndcg, "nDCG@10", input="ids")

fails the test with the verdict of :func:`irmetrics.conformance.check` (the convention
the measure follows per degree of freedom, the smallest counterexample) unless the
measure conforms to trec_eval's semantics.
"""

from __future__ import annotations

import pytest

__all__ = ["irmetrics_conformance"]


@pytest.fixture
def irmetrics_conformance():
    """A function ``(fn, measure, *, input="ids", labels="any", tolerance=1e-6)`` that
    checks ``fn`` with :func:`irmetrics.conformance.check`, fails the test with the
    verdict unless it conforms, and returns the report."""

    def conform(fn, measure, *, input="ids", labels="any", tolerance=1e-6):
        from irmetrics.conformance import check

        report = check(fn, measure, input=input, labels=labels, tolerance=tolerance)
        if not report.conforms:
            pytest.fail(str(report), pytrace=False)
        return report

    return conform
