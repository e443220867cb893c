"""Regression tests of the review of user-defined measures (irm.define_measure): each test
is a case that gave a silent wrong number, a traceback or a message that did not say
what was wrong, and now gives the right number or a clear error."""

from __future__ import annotations

import decimal
import fractions
import warnings

import numpy as np
import pytest

import irmetrics as irm
from irmetrics.exceptions import UserMeasureError

QRELS = {"q1": {"d1": 3, "d2": 1, "d3": 0, "d4": 2}, "q2": {"d5": 1, "d6": -1}}
RUN = {"q1": {"d1": 0.9, "d3": 0.8, "d4": 0.7, "d9": 0.6, "d2": 0.5},
       "q2": {"d6": 2.0, "d7": 1.0, "d5": 0.5}}


@pytest.fixture
def scratch():
    """Names defined in a test, removed after it."""
    names = []

    def define(name, function, **options):
        irm.define_measure(name, function, **options)
        names.append(name)

    yield define
    for name in names:
        irm.remove_measure(name)


def evaluate(measures, qrels=QRELS, run=RUN, **options) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.evaluate(qrels, run, measures, **options).to_dict()


# ---- what a measure returns ------------------------------------------------------------


@pytest.mark.parametrize("per_query, returned", [
    (False, lambda view: np.ma.masked_array(np.ones(view.n_queries), mask=[True, False])),
    (True, lambda query: np.ma.masked),
    (True, lambda query: np.ma.masked_array([0.5], mask=[True])),
])
def test_a_masked_value_is_no_value(scratch, per_query, returned):
    # np.asarray drops the mask: the hidden 1.0 (or 0.0) was reported as the value.
    scratch("Masked", returned, per_query=per_query)
    with pytest.raises(UserMeasureError, match="'Masked' returned nan for query 'q1'"):
        evaluate(["Masked"])
    scratch("MaskedOk", returned, per_query=per_query, allow_nan=True)
    assert np.isnan(evaluate(["MaskedOk"])["q1"]["MaskedOk"])


@pytest.mark.parametrize("value, expected", [
    (decimal.Decimal("0.5"), 0.5), (fractions.Fraction(1, 3), 1 / 3), (2 ** 70, 2.0 ** 70),
])
def test_real_numbers_held_as_python_objects(scratch, value, expected):
    # Decimal and Fraction are real numbers: refused before as "returned Decimal;
    # expected one real number".
    scratch("Obj", lambda query: value, per_query=True)
    scratch("ObjVec", lambda view: [value] * view.n_queries)
    out = evaluate(["Obj", "ObjVec"])
    assert out == {q: {"Obj": expected, "ObjVec": expected} for q in ("q1", "q2")}


@pytest.mark.parametrize("per_query", [True, False])
def test_an_int_beyond_float64_is_infinite_for_its_query(scratch, per_query):
    # 10**400 was "returned int; expected one real number".
    huge = 10 ** 400
    if per_query:
        scratch("Huge", lambda query: huge if query.query_id == "q2" else 1, per_query=True)
    else:
        scratch("Huge", lambda view: [1, huge])
    with pytest.raises(UserMeasureError, match="'Huge' returned inf for query 'q2'"):
        evaluate(["Huge"])
