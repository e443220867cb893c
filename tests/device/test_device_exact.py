"""float64 arithmetic on the device with numpy's bits (irmetrics.device.exact), and the
device's own scoring of kNN candidates, which relies on it: equal to the host's."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from irmetrics import device
from irmetrics.adapters import from_embeddings
from irmetrics.device import knn as device_knn

from tests._device_checks import assert_same_pair

FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("dim", list(range(1, 140)) + [255, 256, 257, 511, 512, 513, 1000,
                                                       1031, 4096, 8193, 20000])
def test_row_sums_are_numpys_bit_for_bit(dim):
    rng = np.random.default_rng(dim)
    rows = rng.standard_normal((20, dim)) * rng.choice([1.0, 1e12, 1e-9], size=(20, dim))
    rows[0] = -0.0  # a row of negative zeros sums to +0.0 in numpy
    got = device.numpy_row_sums(torch, torch.from_numpy(rows)).numpy()
    assert np.array_equal(bits(got), bits(np.add.reduce(rows, axis=-1)))


def test_square_roots_are_correctly_rounded_where_torch_cpu_is_not():
    values = np.array([8.0, 2.0, 3.0, 1e-300, 7.5e200, 0.0])
    got = device.exact_sqrt(torch, torch.from_numpy(values)).numpy()
    assert np.array_equal(bits(got), bits(np.sqrt(values)))


@FAST
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), dim=st.integers(1, 300))
def test_unit_rows_are_numpys_normalisation(seed, n, dim):
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, dim)) * 10.0 ** rng.integers(-30, 30)
    rows[rng.integers(n)] = 0.0
    unit, zero = device.unit_rows(torch, torch.from_numpy(rows))
    norms = np.linalg.norm(rows, axis=1)
    assert np.array_equal(zero.numpy(), norms == 0)
    kept = norms != 0
    assert np.array_equal(bits(unit.numpy()[kept]), bits(rows[kept] / norms[kept, None]))


@FAST
@given(seed=st.integers(0, 2**16), n=st.integers(2, 60), dim=st.integers(1, 40),
       k=st.integers(1, 70), metric=st.sampled_from(["cosine", "dot", "euclidean"]))
def test_device_scoring_equals_the_hosts(seed, n, dim, k, metric, monkeypatch):
    """The candidates scored on the device (the default) and on the host (a gallery
    too large for the device's float64 copy) give the numpy road's pair."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, (n, dim)) + rng.choice([0.0, 1e-6]) * rng.standard_normal((n, dim))
    x[rng.integers(n)] = x[rng.integers(n)]  # an exact tie
    if metric == "cosine":
        x[(x == 0).all(axis=1)] = 1.0
    tensor, labels = torch.from_numpy(x).float(), rng.integers(0, 4, n)
    want = from_embeddings(tensor, labels, k=k, metric=metric, backend="numpy")
    assert_same_pair(want, from_embeddings(tensor, labels, k=k, metric=metric, backend="torch"))
    monkeypatch.setattr(device_knn, "RESCORE_BYTES", 0)
    assert_same_pair(want, from_embeddings(tensor, labels, k=k, metric=metric, backend="torch"))


def test_rows_too_large_for_the_device_copy_are_made_on_the_host(monkeypatch):
    """A gallery whose float64 copy exceeds RESCORE_BYTES never gets one on the device."""
    rng = np.random.default_rng(3)
    tensor = torch.from_numpy(rng.standard_normal((50, 8)).astype(np.float32))
    labels = rng.integers(0, 5, 50)
    want = from_embeddings(tensor, labels, k=10, backend="numpy")
    monkeypatch.setattr(device_knn, "RESCORE_BYTES", 8 * 50 * 8 - 1)
    made = []
    original = device_knn._DeviceRescorer.__init__

    def spy(self, *args, **kwargs):
        made.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(device_knn._DeviceRescorer, "__init__", spy)
    assert_same_pair(want, from_embeddings(tensor, labels, k=10, backend="torch"))
    assert not made
