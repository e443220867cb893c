"""Score matrices and flat predictions ordered on the device (torch CPU tensors with
backend="torch": the code a GPU runs) give the numpy road's pair, bit for bit."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from irmetrics import device
from irmetrics.adapters import from_flat, from_matrix
from irmetrics.exceptions import ParameterError, ShapeError

from tests._device_checks import assert_same_pair

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
SCORE_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int64,
                torch.bool]


def tied_scores(rng, shape, dtype):
    """Few distinct values (ties everywhere), both zeros (-0.0 equals 0.0)."""
    values = rng.integers(-3, 4, size=shape) / 2.0
    values[rng.random(shape) < 0.2] = -0.0
    return torch.from_numpy(values).to(dtype)


@st.composite
def matrices(draw):
    rows, cols = draw(st.integers(0, 12)), draw(st.integers(1, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    scores = tied_scores(rng, (rows, cols), draw(st.sampled_from(SCORE_DTYPES)))
    graded = draw(st.booleans())
    if graded:
        labels = torch.from_numpy(rng.integers(-1, 3, (rows, cols)) * 0.5)
    else:
        labels = torch.from_numpy(rng.integers(-2, 4, (rows, cols)))
    n = rng.integers(0, cols + 1, rows) if draw(st.booleans()) else None
    return scores, labels, n, "float" if graded else "int"


@FAST
@given(data=matrices(), k=st.integers(1, 35))
def test_matrix_top_k_equals_the_numpy_road(data, k):
    scores, labels, n, relevance_type = data
    opts = {"k": k, "relevance_type": relevance_type}
    want = from_matrix(scores, labels, n, backend="numpy", **opts)
    got = from_matrix(scores, labels, n, backend="torch", **opts)
    assert_same_pair(want, got)


def test_matrix_with_custom_ids_and_a_3d_score_tensor():
    rng = np.random.default_rng(1)
    scores = tied_scores(rng, (5, 12, 1), torch.float32)
    labels = torch.from_numpy(rng.integers(0, 3, (5, 12)))
    opts = {"k": 4, "query_ids": [f"x{i}" for i in range(5)],
            "doc_ids": [9, 10, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12]}
    assert_same_pair(from_matrix(scores, labels, **opts, backend="numpy"),
                     from_matrix(scores, labels, **opts, backend="torch"))


def test_matrix_errors_are_the_numpy_roads():
    scores = torch.tensor([[0.5, math.nan], [1.0, 2.0]])
    labels = torch.tensor([[1, 0], [0, 1]])
    messages = []
    for backend in ("numpy", "torch"):
        with pytest.raises(ParameterError) as info:
            from_matrix(scores, labels, k=1, backend=backend)
        messages.append(str(info.value))
        with pytest.raises(ParameterError, match="integers"):
            from_matrix(scores.nan_to_num(), labels + 0.5, k=1, backend=backend)
        with pytest.raises(ShapeError):
            from_matrix(scores, labels[:1], k=1, backend=backend)
    assert messages[0] == messages[1] and "(0, 1)" in messages[0]
    # NaN in padding is ignored on both roads.
    for backend in ("numpy", "torch"):
        from_matrix(scores, labels, [1, 2], k=1, backend=backend)


def test_matrix_without_k_copies_to_the_host():
    scores, labels = torch.tensor([[0.5, 0.5, 1.0]]), torch.tensor([[1, 0, 1]])
    assert_same_pair(from_matrix(scores, labels, backend="numpy"),
                     from_matrix(scores, labels, backend="torch"))


@st.composite
def flats(draw):
    size = draw(st.integers(0, 80))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    preds = tied_scores(rng, (size,), draw(st.sampled_from(SCORE_DTYPES)))
    target = torch.from_numpy(rng.integers(-1, 3, size))
    # Sparse, unsorted query numbers, with many single-digit and multi-digit ids
    # (q9 after q10 in byte order).
    indexes = torch.from_numpy(rng.choice([0, 1, 2, 9, 10, 11, 100, 7], size))
    return preds, target, indexes


@FAST
@given(data=flats(), ignore=st.sampled_from([None, -1, 2]),
       graded=st.booleans())
def test_flat_equals_the_numpy_road(data, ignore, graded):
    preds, target, indexes = data
    if graded:
        target = target * 0.5
    opts = {"ignore_index": ignore, "relevance_type": "float" if graded else "int"}
    want = from_flat(preds, target, indexes, backend="numpy", **opts)
    got = from_flat(preds, target, indexes, backend="torch", **opts)
    if want[1].df.height == 0:
        assert got[1].df.height == 0
        return
    assert_same_pair(want, got)


def test_flat_errors_are_the_numpy_roads():
    preds, target = torch.tensor([0.5, math.inf, 0.1]), torch.tensor([1, 0, 1])
    indexes = torch.tensor([0, 0, 1])
    messages = []
    for backend in ("numpy", "torch"):
        with pytest.raises(ParameterError) as info:
            from_flat(preds, target, indexes, backend=backend)
        messages.append(str(info.value))
        with pytest.raises(ParameterError, match="integers"):
            from_flat(preds.nan_to_num(posinf=1.0), target, indexes + 0.5, backend=backend)
        with pytest.raises(ParameterError, match="integers"):
            from_flat(preds.nan_to_num(posinf=1.0), target + 0.5, indexes, backend=backend)
    assert messages[0] == messages[1]



def test_complex_labels_and_indexes_are_refused_in_the_numpy_roads_words():
    """Complex labels and query indexes: "must hold integers" (real numbers for graded
    labels), as the host's checks say it, not the device intake's own words."""
    cplx = torch.ones(2, 3, dtype=torch.complex64)
    calls = [lambda rt, be: from_matrix(torch.rand(2, 3), cplx, k=1, relevance_type=rt,
                                        backend=be),
             lambda rt, be: from_flat(torch.rand(6), cplx.reshape(-1), torch.arange(6),
                                      relevance_type=rt, backend=be),
             lambda rt, be: from_flat(torch.rand(6), torch.arange(6), cplx.reshape(-1),
                                      relevance_type=rt, backend=be)]
    for call in calls:
        for relevance_type in ("int", "float"):
            messages = set()
            for backend in ("numpy", "torch"):
                with pytest.raises(ParameterError) as info:
                    call(relevance_type, backend)
                messages.add(str(info.value))
            assert len(messages) == 1, messages


def same_outcome(call):
    """``call(backend)`` on both roads: the same pair, or the same error and message."""
    outcomes = []
    for backend in ("numpy", "torch"):
        try:
            outcomes.append(call(backend))
        except (ValueError, TypeError, NotImplementedError) as exc:
            outcomes.append((type(exc), str(exc)))
    if isinstance(outcomes[0][0], type) or isinstance(outcomes[1][0], type):
        assert outcomes[0] == outcomes[1]
    else:
        assert_same_pair(*outcomes)


TEXT = np.array(["a", "b"])


@pytest.mark.parametrize("relevance_type", ["int", "float"])
@pytest.mark.parametrize("case", [
    lambda rt, be: from_matrix(TEXT[None, :], [[0, 1]], k=1, relevance_type=rt, backend=be),
    lambda rt, be: from_matrix([[0.1, 0.2]], TEXT[None, :], k=1, relevance_type=rt, backend=be),
    lambda rt, be: from_matrix([[0.1, 0.2]], [[1, None]], k=1, relevance_type=rt, backend=be),
    lambda rt, be: from_matrix([[math.nan, 0.2]], [[1, 0]], k=1, relevance_type=rt, backend=be),
    lambda rt, be: from_matrix([[0.1, 0.2]], [[0.5, 1]], k=1, relevance_type=rt, backend=be),
    lambda rt, be: from_flat(TEXT, [0, 1], [0, 0], relevance_type=rt, backend=be),
    lambda rt, be: from_flat([0.1, 0.2], TEXT, [0, 0], relevance_type=rt, backend=be),
    lambda rt, be: from_flat([0.1, 0.2], [0, 1], TEXT, relevance_type=rt, backend=be),
    lambda rt, be: from_flat(iter([0.1]), [0], [0], relevance_type=rt, backend=be),
], ids=["text scores", "text labels", "None label", "NaN in a list", "fractional label",
        "text preds", "text target", "text indexes", "iterator"])
def test_host_inputs_are_refused_in_the_numpy_roads_words(case, relevance_type):
    """Lists and numpy arrays taken to the device road (backend="torch"): text, objects
    and iterators were refused in the device intake's own words ("must hold numbers on
    the device road"), and a NaN in a list made the host check fail to read the list."""
    same_outcome(lambda backend: case(relevance_type, backend))


@pytest.mark.parametrize("relevance_type", ["int", "float"])
def test_uint64_labels_and_indexes(relevance_type):
    """uint64 labels crashed the device (torch has no uint64 comparison on the CPU);
    uint64 query indexes beyond int64 were taken as negative numbers; float indexes
    beyond int64 wrapped silently on both roads. Now the numpy road's pair or error,
    in its order (target before indexes)."""
    big = 2**64 - 1
    scores = [[0.1, 0.2, 0.3]]
    for labels in ([[3, 0, 1]], [[big, 0, 1]]):
        relevance = np.array(labels, dtype=np.uint64)
        same_outcome(lambda backend: from_matrix(scores, relevance, k=2, backend=backend,
                                                 relevance_type=relevance_type))
    padded = np.array([[3, 0, big]], dtype=np.uint64)  # padding is never read
    same_outcome(lambda backend: from_matrix(scores, padded, [2], k=2, backend=backend,
                                             relevance_type=relevance_type))
    for target in ([1, 0], [big, 0]):
        for indexes in ([0, 1], [big, 1]):
            same_outcome(lambda backend: from_flat(
                [0.1, 0.2], np.array(target, dtype=np.uint64), np.array(indexes, np.uint64),
                relevance_type=relevance_type, backend=backend))
    for index in (2.0**63, -2.0**64, 1e30, -2.0**63, 2.0**62):
        same_outcome(lambda backend: from_flat([0.1, 0.2], [1, 0], np.array([index, 0.0]),
                                               relevance_type=relevance_type, backend=backend))
    with pytest.raises(ParameterError, match="fit in int64"):
        from_flat([0.1], [1], [1e30])

def test_top_k_rows_against_a_sort():
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, (30, 50)).astype(np.float64)
    tie = rng.permutation(50)
    rows, cols, values = device.top_k_rows(torch.from_numpy(scores), 6, tie_rank=tie,
                                           block_rows=7)
    for i in range(30):
        order = np.lexsort((-tie, -scores[i]))[:6]
        assert cols[rows == i].tolist() == order.tolist()
        assert values[rows == i].tolist() == scores[i, order].tolist()


def test_sort_groups_against_lexsort():
    rng = np.random.default_rng(4)
    values = (rng.integers(0, 5, 200) / 4).astype(np.float64)
    values[::9] = -0.0
    groups = rng.integers(-3, 6, 200) * 1000
    carried = rng.integers(0, 2, 200)
    got = device.sort_groups(torch.from_numpy(values), torch.from_numpy(groups),
                             carry=[torch.from_numpy(carried)])
    want = np.lexsort((np.arange(200), -(values + 0.0), groups))
    assert np.array_equal(got.order, want)
    assert np.array_equal(got.carried[0], carried[want])
    assert np.array_equal(got.ids, np.unique(groups))
    assert np.array_equal(got.counts, np.unique(groups, return_counts=True)[1])
    # float32: values that differ in float64 only are equal there (input order keeps).
    close = torch.tensor([1.0, 1.0 + 1e-12, 0.5], dtype=torch.float64)
    g32 = device.sort_groups(close, torch.zeros(3, dtype=torch.int64), float32=True)
    assert g32.order.tolist() == [0, 1, 2]
    g64 = device.sort_groups(close, torch.zeros(3, dtype=torch.int64))
    assert g64.order.tolist() == [1, 0, 2]
