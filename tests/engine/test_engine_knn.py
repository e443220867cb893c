"""The one exact kNN searcher (engine.knn.search) behind compat's knn and from_embeddings:
both entry points give what the searcher gives under their tie rule, on data full of ties."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.adapters import from_embeddings
from irmetrics.compat import _knn as compat_knn
from irmetrics.engine.knn import search

FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def integer_rows(n_min, n_max, dim):
    """Small integer coordinates: exact distances, and many equal ones."""
    return st.integers(n_min, n_max).flatmap(lambda n: st.lists(
        st.lists(st.integers(-2, 2), min_size=dim, max_size=dim), min_size=n, max_size=n
    ).map(lambda rows: np.array(rows, dtype=np.float64).reshape(n, dim)))


@st.composite
def query_reference(draw):
    dim = draw(st.integers(1, 3))
    # Up to 60 references: enough for the chunk-minima bound (G >= 4k) to be taken.
    return draw(integer_rows(0, 12, dim)), draw(integer_rows(1, 60, dim))


def brute_force_order(query, reference, ignored, tie_rank):
    """Per query, every non-ignored reference by (euclidean distance, tie_rank)."""
    dist = np.linalg.norm(query[:, None, :] - reference[None, :, :], axis=2)
    return [[j for j in np.lexsort((tie_rank, dist[i])) if not ignored[i, j]]
            for i in range(len(query))]


def lists(nn):
    return [nn.indices[a:b].tolist() for a, b in zip(nn.offsets[:-1], nn.offsets[1:])]


@FAST
@given(data=query_reference(), k=st.integers(1, 20), metric=st.sampled_from(["euclidean", "cosine"]),
       cells=st.sampled_from([1, 5, 64, 1 << 22]), n_ignore=st.integers(0, 2),
       seed=st.integers(0, 2**16))
def test_compat_knn_is_the_searcher_with_index_ties(monkeypatch, data, k, metric, cells, n_ignore,
                                                     seed):
    query, reference = data
    rng = np.random.default_rng(seed)
    # OML's kind of ignore pairs: same sequence (few values), the item itself (by index).
    ignore = [(rng.integers(0, 3, len(query)), rng.integers(0, 3, len(reference))),
              (np.arange(len(query)), np.arange(len(reference)))][:n_ignore]
    monkeypatch.setattr(compat_knn, "_BLOCK_CELLS", cells)
    got = compat_knn.knn(query, reference, k, metric=metric, ignore=ignore)
    want = search(query, reference, k, metric=metric, block_cells=cells, ignore=ignore)
    for field in ("offsets", "indices", "distances"):
        assert np.array_equal(getattr(got, field), getattr(want, field))
    # The k-list is the head of the full ranking (which takes the unbounded path).
    full = search(query, reference, len(reference), metric=metric, block_cells=cells,
                  ignore=ignore)
    assert lists(got) == [row[:k] for row in lists(full)]
    if metric == "euclidean":
        ignored = np.zeros((len(query), len(reference)), dtype=bool)
        for q_keys, r_keys in ignore:
            ignored |= q_keys[:, None] == r_keys[None, :]
        order = brute_force_order(query, reference, ignored, np.arange(len(reference)))
        assert lists(got) == [row[:k] for row in order]


@FAST
@given(data=query_reference(), k=st.integers(1, 20), metric=st.sampled_from(["euclidean", "dot"]),
       chunk=st.integers(1, 5), self_gallery=st.booleans(), exclude_self=st.booleans())
def test_from_embeddings_is_the_searcher_with_doc_id_ties(data, k, metric, chunk, self_gallery,
                                                          exclude_self):
    query, gallery = data
    if self_gallery or len(query) == 0:
        query = gallery
    args = (gallery, np.zeros(len(gallery))) if self_gallery else \
        (query, np.zeros(len(query)), gallery, np.zeros(len(gallery)))
    _, run = from_embeddings(*args, k=k, metric=metric, chunk_size=chunk,
                             exclude_self=exclude_self)
    got = {}
    for q, d, s in run.df.select("query_id", "doc_id", "score").iter_rows():
        got.setdefault(q, []).append((d, s))
    # trec_eval's tie rule: doc id descending in byte order ("d9" before "d10").
    ids = [f"d{j}" for j in range(len(gallery))]
    byte_rank = np.argsort(np.argsort(np.array([i.encode() for i in ids], dtype=object)))
    excluded = self_gallery and exclude_self
    nn = search(query, gallery, min(k, len(gallery) - excluded), metric=metric, block_rows=chunk,
                tie_rank=-byte_rank, exclude_self=excluded)
    want = {f"q{i}": [(ids[j], -d) for j, d in zip(nn.indices[a:b], nn.distances[a:b])]
            for i, (a, b) in enumerate(zip(nn.offsets[:-1], nn.offsets[1:])) if b > a}
    assert got == want
    if metric == "euclidean":
        ignored = np.eye(len(query), len(gallery), dtype=bool) if excluded else \
            np.zeros((len(query), len(gallery)), dtype=bool)
        order = brute_force_order(query, gallery, ignored, -byte_rank)
        assert [[int(d[1:]) for d, _ in got.get(f"q{i}", [])] for i in range(len(query))] == \
            [row[:k] for row in order]


# --------------------------------------------------------------------------- exact euclidean

def brute_force_distances(query, reference):
    """Every (query, reference) distance computed directly, as np.linalg.norm does."""
    return np.linalg.norm(query[:, None, :] - reference[None, :, :], axis=2)


def test_offset_embeddings_keep_their_exact_neighbours():
    """Issue 16 item 9: embeddings offset by 1e8 (|q|^2 - 2 q.g + |g|^2 cancels to noise)."""
    rng = np.random.default_rng(16)
    base = rng.standard_normal((300, 8))
    for offset in (0.0, 1e8, -3e9):
        emb = base + offset
        nn = search(emb[:40], emb, 5, exclude_self=True)
        dist = brute_force_distances(emb[:40], emb)
        np.fill_diagonal(dist[:, :40], np.inf)
        want = np.lexsort((np.broadcast_to(np.arange(300), dist.shape), dist), axis=1)[:, :5]
        assert lists(nn) == want.tolist()
        assert np.array_equal(nn.distances, np.take_along_axis(dist, want, axis=1).ravel())


def test_offset_embeddings_through_the_adapter_and_the_drop_ins():
    from irmetrics.compat.pml import AccuracyCalculator

    rng = np.random.default_rng(9)
    emb = rng.standard_normal((200, 4))
    labels = rng.integers(0, 5, 200)
    for metric in ("euclidean",):
        _, plain = from_embeddings(emb, labels, k=5, metric=metric)
        _, shifted = from_embeddings(emb + 1e8, labels, k=5, metric=metric)
        key = ["query_id", "doc_id"]
        assert plain.df.select(key).equals(shifted.df.select(key))
    calc = AccuracyCalculator(k=5, normalize_embeddings=False)
    assert calc.get_accuracy(emb + 1e8, labels) == calc.get_accuracy(emb, labels)


@st.composite
def offset_clusters(draw):
    """Near-duplicate points far from the origin: distances of 1e-3 under offsets up to 1e9,
    with exact duplicates (ties) among them."""
    n_ref, n_q, dim = draw(st.integers(1, 40)), draw(st.integers(1, 8)), draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    offset = draw(st.sampled_from([0.0, 1.0, 1e4, 1e8, -1e9]))
    scale = draw(st.sampled_from([1e-3, 1.0]))
    points = offset + scale * rng.integers(-3, 4, size=(n_ref + n_q, dim)) \
        + draw(st.sampled_from([0.0, 1e-7])) * rng.standard_normal((n_ref + n_q, dim))
    return points[:n_q], points[n_q:]


@FAST
@given(data=offset_clusters(), k=st.integers(1, 45), cells=st.sampled_from([1, 7, 1 << 21]),
       exclude=st.booleans(), exact_distances=st.booleans())
def test_euclidean_order_is_the_direct_distances_order(data, k, cells, exclude, exact_distances):
    query, reference = data
    if exclude:
        query = reference[: len(query)]
    nn = search(query, reference, k, block_cells=cells, exclude_self=exclude,
                exact_distances=exact_distances)
    ignored = np.eye(len(query), len(reference), dtype=bool) if exclude else \
        np.zeros((len(query), len(reference)), dtype=bool)
    order = brute_force_order(query, reference, ignored, np.arange(len(reference)))
    assert lists(nn) == [row[:k] for row in order]
    dist = brute_force_distances(query, reference)
    want = np.concatenate([dist[i, row[:k]] for i, row in enumerate(order)] or [np.zeros(0)])
    if exact_distances:
        assert np.array_equal(nn.distances, want)
    else:  # the expansion's value: its square within ~1e-13 of the squared spread
        spread = np.abs(np.concatenate([query, reference]) - reference.mean(axis=0)).max()
        np.testing.assert_allclose(nn.distances, want, rtol=0, atol=1e-6 * (1 + spread))
