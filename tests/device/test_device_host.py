"""The host side of the device road keeps up: neighbour lists by label (no per-query
lists), ranked runs that are only re-blocked (no sort), pair keys instead of pair sorts;
every fast path equals the general one."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.adapters import from_embeddings, from_neighbours
from irmetrics.exceptions import DuplicateEntryError, ParameterError

from tests._device_checks import assert_same_pair

FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def run_lists(run, n_queries):
    j = run._judgments
    return ([j.run_doc[j.run_query == i] for i in range(n_queries)],
            [j.run_score[j.run_query == i] for i in range(n_queries)])


@FAST
@given(seed=st.integers(0, 2**16), n=st.integers(2, 40), k=st.integers(1, 12),
       metric=st.sampled_from(["euclidean", "dot", "cosine"]))
def test_neighbours_by_label_is_the_embeddings_closed_world(seed, n, k, metric):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, (n, 3)).astype(np.float64) + 0.25
    labels = rng.integers(0, 4, n)
    want = from_embeddings(x, labels, k=k, metric=metric)
    # A top-(k+1) search that keeps each query itself (as torch.topk does), self dropped.
    wider = from_embeddings(x, labels, k=min(k + 1, n), metric=metric, exclude_self=False)
    ids, scores = run_lists(wider[1], n)
    cut = [np.flatnonzero(i != q)[:k] for q, i in enumerate(ids)]
    ids = [i[c] for i, c in zip(ids, cut)]
    scores = [s[c] for s, c in zip(scores, cut)]
    assert_same_pair(want, from_neighbours(ids, query_labels=labels, gallery_labels=labels,
                                           scores=scores, exclude_self=True))
    # With each query itself in front of its list: dropped, the rest moves up.
    front = [np.concatenate(([q], i)) for q, i in enumerate(ids)]
    front_scores = [np.concatenate((s[:1] if len(s) else [0.0], s)) for s in scores]
    assert_same_pair(want, from_neighbours(front, query_labels=labels, gallery_labels=labels,
                                           scores=front_scores, exclude_self=True))


def test_neighbours_needs_one_kind_of_relevance():
    with pytest.raises(ParameterError, match="gt_ids"):
        from_neighbours([[0, 1]])
    with pytest.raises(ParameterError, match="both"):
        from_neighbours([[0, 1]], [[1]], query_labels=[0], gallery_labels=[0, 1])
    with pytest.raises(ParameterError, match="gt_ids"):
        from_neighbours([[0, 1]], query_labels=[0])


@FAST
@given(seed=st.integers(0, 2**16), wide=st.booleans())
def test_pair_keys_equal_pair_sorts(seed, wide):
    """Gallery indices near 2**62 take the pair-sort road: same qrels and run."""
    rng = np.random.default_rng(seed)
    n_q, k = rng.integers(1, 8), rng.integers(1, 6)
    base = rng.permutation(30)[: n_q * k].reshape(n_q, -1) if n_q * k <= 30 else \
        np.stack([rng.permutation(30)[:k] for _ in range(n_q)])
    gt = [rng.permutation(30)[: rng.integers(0, 5)] for _ in range(n_q)]
    offset = 2**61 if wide else 0
    q1, r1 = from_neighbours(base, gt)
    q2, r2 = from_neighbours(base + offset, [g + offset for g in gt])
    d1, d2 = r1.to_dict(), r2.to_dict()
    shift = {f"d{i}": f"d{i + offset}" for i in range(30)}
    assert d2 == {q: {shift[d]: s for d, s in docs.items()} for q, docs in d1.items()}
    assert q2.to_dict() == {q: {shift[d]: s for d, s in docs.items()}
                            for q, docs in q1.to_dict().items()}


def test_duplicates_are_found_on_both_key_roads():
    for offset in (0, 2**61):
        with pytest.raises(DuplicateEntryError, match="twice for query 1"):
            from_neighbours(np.array([[1, 2], [3, 3]]) + offset, [[1], [2]])
        with pytest.raises(DuplicateEntryError, match="twice for query 0"):
            from_neighbours([[1, 2]], [np.array([5, 5]) + offset])


def test_ranked_runs_are_reblocked_and_anything_else_sorted(monkeypatch):
    """Lists in final order (searches, top-k) skip the sort; lists with ties in another
    order do not; both give the same run and the same ranked lists."""
    rng = np.random.default_rng(8)
    n_q, k = 30, 9
    ids = np.stack([rng.permutation(40)[:k] for _ in range(n_q)])
    scores = -np.sort(rng.integers(0, 4, (n_q, k)), axis=1).astype(np.float64)  # ties
    gt = [rng.permutation(40)[:5] for _ in range(n_q)]
    byte_rank = np.argsort(np.argsort(np.array([f"d{i}".encode() for i in range(40)])))
    order = np.lexsort((-byte_rank[ids], -scores), axis=1)  # trec_eval's order per row
    ranked = (np.take_along_axis(ids, order, axis=1), np.take_along_axis(scores, order, axis=1))
    q1, r1 = from_neighbours(ids, gt, scores=scores)
    q2, r2 = from_neighbours(ranked[0], gt, scores=ranked[1])
    assert r1.df.equals(r2.df) and q1.to_dict() == q2.to_dict()
    for semantics in ("trec_eval", "pytrec_eval"):
        a = r1._judgments.sorted_run(semantics)
        with monkeypatch.context() as m:
            m.setattr(np, "lexsort", None)  # the ranked lists must not be sorted again
            b = r2._judgments.sorted_run(semantics)
        assert all(np.array_equal(x, y) for x, y in zip(a, b))
