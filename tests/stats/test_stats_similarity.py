"""irmetrics.stats.similarity against its oracles.

RBO: Corsi & Urbano's reference script on tied rankings (its outputs recorded in
fixtures/similarity/rbo_corsi_urbano.json with their provenance), and Webber, Moffat &
Zobel's formulas (tests/reference/rbo_ref.py) on untied ones, both to 1e-12, every case
of a file in ONE batched call (so the CSR bookkeeping across rankings is tested too).
Overlap at k and the shared-item correlations against brute force and scipy.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from irmetrics import stats
from irmetrics.exceptions import ParameterError
from irmetrics.stats.similarity import rankings, rbo, rbo_rankings
from tests.reference import rbo_ref

VECTORS = Path(__file__).parents[2] / "fixtures" / "similarity" / "rbo_corsi_urbano.json"
FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def parse(text: str) -> list:
    """Corsi & Urbano's text form: ``a (b c) d`` (parentheses: a tie group)."""
    out = []
    for group, single in re.findall(r"\(([^)]*)\)|(\S+)", text):
        out.append(set(group.split()) if group else single)
    return out


def batch(lists: list[list], codes: dict):
    items, scores, offsets = [], [], [0]
    for ranking in lists:
        for position, entry in enumerate(ranking):
            for item in (sorted(entry) if isinstance(entry, set) else [entry]):
                items.append(codes.setdefault(item, len(codes)))
                scores.append(-position)
        offsets.append(len(items))
    return rankings(np.array(items, dtype=np.int64), offsets, np.array(scores, float))


def test_rbo_matches_corsi_urbano_reference_on_tied_rankings():
    cases = json.loads(VECTORS.read_text())["cases"]
    assert len(cases) >= 100 and any("(" in c["x"] for c in cases)
    for p in sorted({c["p"] for c in cases}):
        chosen = [c for c in cases if c["p"] == p]
        codes: dict = {}
        x = batch([parse(c["x"]) for c in chosen], codes)
        y = batch([parse(c["y"]) for c in chosen], codes)
        for ties in ("w", "a", "b"):
            got = rbo_rankings(x, y, p=p, ties=ties)
            for form in ("ext", "min", "max", "res"):
                want = np.array([c[ties][form] for c in chosen])
                np.testing.assert_allclose(getattr(got, form), want, rtol=0, atol=1e-12,
                                           err_msg=f"p={p} ties={ties} {form}")


def test_rbo_readme_example():
    x = ["red", {"blue", "green"}, "yellow", "pink"]
    y = [{"blue", "red"}, "white", {"yellow", "black", "purple"}, "green"]
    assert round(float(rbo(x, y, p=0.95, ties="w").ext), 7) == 0.7068257
    assert round(float(rbo(x, y, p=0.95, ties="b").max), 7) == 0.9129336


untied = st.lists(st.integers(0, 25), min_size=1, max_size=25, unique=True)


@FAST
@given(st.lists(st.tuples(untied, untied), min_size=1, max_size=6),
       st.sampled_from([0.5, 0.8, 0.9, 0.95]))
def test_rbo_equals_webber_on_untied_rankings(pairs, p):
    codes: dict = {}
    x = batch([a for a, _ in pairs], codes)
    y = batch([b for _, b in pairs], codes)
    for ties in ("w", "a", "b"):  # without ties the three variants are Webber's RBO
        got = rbo_rankings(x, y, p=p, ties=ties)
        np.testing.assert_allclose(got.ext, [rbo_ref.rbo_ext(a, b, p) for a, b in pairs],
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(got.min, [rbo_ref.rbo_min(a, b, p) for a, b in pairs],
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(got.max, [rbo_ref.rbo_max(a, b, p) for a, b in pairs],
                                   rtol=0, atol=1e-12)


def test_rbo_identity_and_empty_rankings():
    tied = ["a", {"b", "c"}, "d"]
    assert float(rbo(tied, tied, ties="b").ext) == pytest.approx(1.0, abs=1e-12)
    assert float(rbo(tied, tied, ties="a").ext) < 1.0  # random tie breaks disagree
    assert float(rbo(["a", "b"], ["a", "b"], ties="w").min) < 1.0 < 1.0 + 1e-9
    r = rbo_rankings(rankings(np.array([1, 2], np.int64), [0, 0, 2]),
                     rankings(np.array([], np.int64), [0, 0, 0]))
    assert np.isnan(r.ext[0]) and r.ext[1] == 0.0 and r.min[1] == 0.0


def test_rbo_rejects_bad_input():
    with pytest.raises(ParameterError, match="`p` must be a number strictly between 0 and 1"):
        rbo(["a"], ["a"], p=1.0)
    with pytest.raises(ParameterError, match="ranking 0 holds item 3 twice"):
        rankings(np.array([3, 4, 3], np.int64), [0, 3])
    with pytest.raises(ParameterError, match="free of NaN"):
        rankings(np.array([3, 4], np.int64), [0, 2], [0.5, np.nan])
    with pytest.raises(ParameterError, match="`ties` must be one of"):
        rbo(["a"], ["a"], ties="z")


scored = st.lists(st.tuples(st.integers(0, 15), st.integers(0, 4)), max_size=14,
                  unique_by=lambda t: t[0])


@FAST
@given(st.lists(st.tuples(scored, scored), min_size=1, max_size=5), st.integers(1, 8))
def test_overlap_and_correlations_against_brute_force(pairs, k):
    def build(side):
        items = [i for pair in pairs for i, _ in pair[side]]
        scores = [float(s) for pair in pairs for _, s in pair[side]]
        offsets = np.cumsum([0] + [len(pair[side]) for pair in pairs])
        return rankings(np.array(items, np.int64), offsets, np.array(scores))

    x, y = build(0), build(1)
    got = stats.similarity.overlap_at_k(x, y, k)
    corr = stats.similarity.shared_rank_correlation(x, y)
    for q, (a, b) in enumerate(pairs):
        order_a = [i for i, _ in sorted(a, key=lambda t: -t[1])]  # stable, as lexsort
        order_b = [i for i, _ in sorted(b, key=lambda t: -t[1])]
        top_a, top_b = set(order_a[:k]), set(order_b[:k])
        inter = len(top_a & top_b)
        assert got["overlap"][q] == inter / k
        if top_a or top_b:
            assert got["jaccard"][q] == inter / len(top_a | top_b)
        if top_a:
            assert got["recall"][q] == inter / len(top_a)
        shared = sorted(set(dict(a)) & set(dict(b)))
        assert corr["shared"][q] == len(shared)
        sa = [dict(a)[i] for i in shared]
        sb = [dict(b)[i] for i in shared]
        want_tau = sps.kendalltau(sa, sb).statistic if len(shared) >= 2 else np.nan
        np.testing.assert_allclose(corr["tau_b"][q], want_tau, atol=1e-12)
        want_ap = stats.tau_ap(sa, sb) if len(shared) >= 2 else np.nan
        np.testing.assert_allclose(corr["tau_ap"][q], want_ap, atol=1e-12)


def test_blocks_and_threads_give_the_same_numbers(monkeypatch):
    from irmetrics.stats import similarity as sim

    rng = np.random.default_rng(4)

    def draw():
        lengths = rng.integers(0, 30, size=60)
        items = np.concatenate([rng.permutation(50)[:n] for n in lengths]).astype(np.int64)
        scores = rng.integers(0, 6, size=items.size).astype(float)
        return rankings(items, np.concatenate([[0], np.cumsum(lengths)]), scores)

    x, y = draw(), draw()
    whole = rbo_rankings(x, y, p=0.8, ties="b", threads=1)
    monkeypatch.setattr(sim, "_SLOT_BLOCK", 37)  # many blocks, cut between rankings
    for threads in (1, 3):
        cut = rbo_rankings(x, y, p=0.8, ties="b", threads=threads)
        for form in ("ext", "min", "max", "res"):
            np.testing.assert_array_equal(getattr(cut, form), getattr(whole, form))
