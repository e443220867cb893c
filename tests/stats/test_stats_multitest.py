"""adjust_pvalues against statsmodels.stats.multitest.multipletests (the test oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.exceptions import ParameterError
from irmetrics.stats import CORRECTIONS, adjust_pvalues

multitest = pytest.importorskip("statsmodels.stats.multitest")

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
METHODS = [m for m in CORRECTIONS if m != "none"]

#: Values that make ties and boundary cases likely, mixed with arbitrary ones.
p_value = st.one_of(st.sampled_from([0.0, 1e-12, 0.001, 0.01, 0.02, 0.04, 0.05, 0.2, 0.5, 0.9, 1.0]),
                    st.floats(0, 1, allow_nan=False))


def _oracle(p, method):
    with np.errstate(divide="ignore"):  # statsmodels' holm-sidak takes log1p(-1) for p = 1
        return multitest.multipletests(np.asarray(p, float), method=method)[1]


@FAST
@given(p=st.lists(p_value, min_size=1, max_size=40), method=st.sampled_from(METHODS))
def test_one_family_matches_statsmodels(p, method):
    np.testing.assert_allclose(adjust_pvalues(p, method), _oracle(p, method), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("p", [[0.0], [1.0], [0.03], [0.0, 0.0], [1.0, 1.0, 1.0], [0.01, 0.01, 0.04, 0.04]])
def test_edge_families(method, p):
    np.testing.assert_allclose(adjust_pvalues(p, method), _oracle(p, method), rtol=1e-12, atol=1e-12)


@FAST
@given(p=st.lists(st.one_of(p_value, st.just(float("nan"))), min_size=1, max_size=25),
       method=st.sampled_from(METHODS))
def test_nan_is_kept_and_left_out_of_the_family(p, method):
    p = np.array(p)
    out = adjust_pvalues(p, method)
    present = ~np.isnan(p)
    assert np.array_equal(np.isnan(out), ~present)
    if present.any():
        np.testing.assert_allclose(out[present], _oracle(p[present], method), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_families_along_any_axis(method, axis):
    rng = np.random.default_rng(1)
    p = np.round(rng.random((4, 5, 6)) ** 3, 3)  # rounding makes ties
    p[1, 2, 3] = np.nan
    out = adjust_pvalues(p, method, axis=axis)
    moved_in, moved_out = np.moveaxis(p, axis, -1), np.moveaxis(out, axis, -1)
    for index in np.ndindex(moved_in.shape[:-1]):
        family = moved_in[index]
        keep = ~np.isnan(family)
        np.testing.assert_allclose(moved_out[index][keep], _oracle(family[keep], method), rtol=1e-12, atol=1e-12)
        assert np.isnan(moved_out[index][~keep]).all()


def test_none_returns_a_copy_and_scalars_are_families_of_one():
    p = np.array([0.2, 0.01])
    out = adjust_pvalues(p, "none")
    assert np.array_equal(out, p) and out is not p
    out[0] = 0.5
    assert p[0] == 0.2
    assert adjust_pvalues(0.03, "bonferroni") == 0.03 and adjust_pvalues(0.03).shape == ()
    assert adjust_pvalues(np.empty((0,)), "holm").shape == (0,)


def test_adjusted_values_are_monotone_and_not_below_raw():
    rng = np.random.default_rng(5)
    p = rng.random(30) ** 2
    order = np.argsort(p)
    for method in METHODS:
        out = adjust_pvalues(p, method)
        assert np.all(out >= p - 1e-15) and np.all(out <= 1)
        assert np.all(np.diff(out[order]) >= -1e-15), method


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(p=[0.2, 1.5]), r"^`p` must be p-values in \[0, 1\] \(or NaN\); got 1\.5\.$"),
    (dict(p=[-0.1]), r"^`p` must be p-values in \[0, 1\] \(or NaN\); got -0\.1\.$"),
    (dict(p=[np.inf]), r"^`p` must be p-values"),
    (dict(p=["a"]), r"^`p` must be an array of p-values in \[0, 1\]; got"),
    (dict(p=[0.2], method="BH"), r"^`method` must be one of 'none', 'bonferroni', 'holm'"),
    (dict(p=[[0.2]], axis=2), r"^`axis` must be an integer between -2 and 1; got 2\.$"),
])
def test_bad_input(kwargs, pattern):
    with pytest.raises(ParameterError, match=pattern):
        adjust_pvalues(**kwargs)
