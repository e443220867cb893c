"""irmetrics.fusion against ranx (the oracle), on inputs without tied scores.

Every method and every normalisation ranx has, on hypothesis runs with documents missing
from some runs: the fused value of every (query, document) equals ranx's (relative 1e-9:
sums may be added in another order), and the fused run lists each query by that value
descending, then doc id descending. ranx compiles with numba on first use (tens of
seconds, cached on disk afterwards), so the examples are few by default.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.fusion import METHODS, fuse

ranx = pytest.importorskip("ranx", reason="the fusion oracle tests need ranx")

EXAMPLES = int(os.environ.get("IRMETRICS_FUSION_EXAMPLES", "6"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
RANX_NAMES = {"weighted_bordafuse": "w_bordafuse", "weighted_condorcet": "w_condorcet"}
POOL = [f"d{i}" for i in range(9)]
QUERIES = ["q1", "q2", "q3"]
SCORE_METHODS = ["sum", "mnz", "anz", "max", "min", "med", "gmnz", "wsum", "wmnz", "mixed"]
RANK_METHODS = ["rrf", "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "weighted_bordafuse"]
NORMS = [None, "min-max", "max", "sum", "zmuv", "rank", "borda"]
PARAMS = {"gmnz": {"gamma": 0.7}, "rbc": {"phi": 0.8}, "rrf": {"k": 10},
          "logn_isr": {"sigma": 0.05}}
WEIGHTED = {"wsum", "wmnz", "mixed", "weighted_bordafuse", "weighted_condorcet"}


@st.composite
def tie_free_runs(draw, n_runs=None, full=False):
    """Runs over QUERIES, each query's list at least 2 long with distinct positive
    scores; documents missing from some runs unless ``full``."""
    n_runs = n_runs or draw(st.integers(2, 4))
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in QUERIES:
            docs = POOL if full else draw(st.lists(st.sampled_from(POOL), min_size=2,
                                                   max_size=len(POOL), unique=True))
            scores = draw(st.lists(st.integers(1, 10**6), min_size=len(docs),
                                   max_size=len(docs), unique=True))
            order = draw(st.permutations(range(len(docs))))
            run[q] = {docs[i]: scores[j] / 1000.0 for j, i in enumerate(order)}
        runs.append(run)
    return runs


def _ranx_run(d, name):
    return ranx.Run({q: dict(docs) for q, docs in d.items()}, name=name)


def _ranx_fuse(runs, method, norm, params):
    rruns = [_ranx_run(r, f"r{i}") for i, r in enumerate(runs)]
    out = ranx.fuse(rruns, norm=norm, method=RANX_NAMES.get(method, method), params=params)
    return {q: dict(docs) for q, docs in out.to_dict().items()}


def _check(ours, theirs):
    got = ours.to_dict()
    assert set(got) == set(theirs)
    for q in got:
        assert set(got[q]) == set(theirs[q]), q
        docs = sorted(got[q])
        np.testing.assert_allclose([got[q][d] for d in docs], [theirs[q][d] for d in docs],
                                   rtol=1e-9, atol=1e-12, err_msg=q)
    # the documented order: fused score descending, then doc id descending
    for q, frame in ours.df.group_by("query_id", maintain_order=True):
        rows = list(zip(frame["score"].to_list(), frame["doc_id"].to_list()))
        assert rows == sorted(rows, key=lambda t: (-t[0], [-ord(c) for c in t[1]]))
        assert frame["rank"].to_list() == list(range(1, len(rows) + 1))


def _weights(n):
    return [round(0.9 ** i + 0.1 * i, 3) for i in range(n)]


@pytest.mark.parametrize("method", SCORE_METHODS)
@pytest.mark.parametrize("norm", NORMS)
@SETTINGS
@given(runs=tie_free_runs())
def test_score_methods_equal_ranx(method, norm, runs):
    params = dict(PARAMS.get(method, {}))
    kwargs = {}
    if method in WEIGHTED:
        params["weights"] = kwargs["weights"] = _weights(len(runs))
    ours = fuse(runs, method, norm=norm, **kwargs, **PARAMS.get(method, {}))
    _check(ours, _ranx_fuse(runs, method, norm, params))


@pytest.mark.parametrize("method", RANK_METHODS)
@SETTINGS
@given(runs=tie_free_runs())
def test_rank_methods_equal_ranx(method, runs):
    params = dict(PARAMS.get(method, {}))
    kwargs = {}
    if method in WEIGHTED:
        params["weights"] = kwargs["weights"] = _weights(len(runs))
    ours = fuse(runs, method, norm=None, **kwargs, **PARAMS.get(method, {}))
    _check(ours, _ranx_fuse(runs, method, None, params))


@st.composite
def near_orders(draw):
    """Three runs ranking every document, each a base order with disjoint adjacent
    swaps: the pairwise majority is then a strict order (a pair two or more places
    apart keeps the base order in every run), the one case where ranx's sort with the
    pairwise comparison gives one answer."""
    runs = [{} for _ in range(3)]
    for q in QUERIES:
        base = draw(st.permutations(POOL))
        for run in runs:
            order = list(base)
            i = 0
            while i < len(order) - 1:
                if draw(st.booleans()):
                    order[i], order[i + 1] = order[i + 1], order[i]
                    i += 1
                i += 1
            run[q] = {d: float(len(order) - j) for j, d in enumerate(order)}
    return runs


@pytest.mark.parametrize("method", ["condorcet", "weighted_condorcet"])
@SETTINGS
@given(runs=near_orders())
def test_condorcet_equals_ranx_without_cycles(method, runs):
    # Odd weights with no subset summing to half: no tied vote.
    params = {"weights": [0.45, 0.35, 0.2]} if method == "weighted_condorcet" else {}
    ours = fuse(runs, method, norm=None, **params)
    _check(ours, _ranx_fuse(runs, method, None, params))


@st.composite
def runs_and_qrels(draw):
    runs = draw(tie_free_runs())
    qrels = {q: {d: draw(st.integers(0, 2)) for d in
                 draw(st.lists(st.sampled_from(POOL), min_size=1, unique=True))}
             for q in QUERIES}
    return runs, qrels


@pytest.mark.parametrize("method", ["posfuse", "probfuse", "segfuse", "slidefuse",
                                    "bayesfuse", "mapfuse"])
@SETTINGS
@given(data=runs_and_qrels())
def test_trained_methods_equal_ranx(method, data):
    runs, qrels = data
    from ranx import fusion as rf

    norm = "min-max" if method == "segfuse" else None
    rruns = [_ranx_run(r, f"r{i}") for i, r in enumerate(runs)]
    if norm:
        rruns = [ranx.normalize(r, norm) for r in rruns]
    rqrels = ranx.Qrels(qrels)
    params, ours_params = {}, {}
    if method == "posfuse":
        params["probs"] = rf.posfuse_train(rqrels, rruns)
    elif method == "probfuse":
        params["probs"] = rf.probfuse_train(rqrels, rruns, 3)
        ours_params["n_segments"] = 3
    elif method == "segfuse":
        params["probs"] = rf.segfuse_train(rqrels, rruns)
    elif method == "slidefuse":
        params["probs"], params["w"] = rf.slidefuse_train(rqrels, rruns), 2
        ours_params["w"] = 2
    elif method == "bayesfuse":
        params["log_odds"] = rf.bayesfuse_train(rqrels, rruns)
    else:
        params["map_scores"] = rf.mapfuse_train(rqrels, rruns)
    theirs = ranx.fuse(rruns, norm=None, method=method, params=params)
    ours = fuse(runs, method, norm=norm or "min-max", qrels=qrels, **ours_params)
    _check(ours, {q: dict(d) for q, d in theirs.to_dict().items()})


def test_every_method_is_tested_against_ranx():
    covered = set(SCORE_METHODS) | set(RANK_METHODS) | {
        "condorcet", "weighted_condorcet", "posfuse", "probfuse", "segfuse", "slidefuse",
        "bayesfuse", "mapfuse"}
    assert covered == set(METHODS)
