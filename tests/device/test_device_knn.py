"""The device road of from_embeddings and of the kNN drop-ins equals the numpy road, bit
for bit, run here on torch CPU tensors with backend="torch" (the code a GPU runs)."""

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from irmetrics import device
from irmetrics.adapters import from_embeddings
from irmetrics.device.knn import _DeviceSide
from irmetrics.engine.knn import normalize_rows, pair_distances, search
from irmetrics.exceptions import ParameterError

from tests._device_checks import assert_same_pair

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
          "float64": torch.float64}


@st.composite
def embeddings(draw):
    """Rows with exact ties (duplicates, multiples), huge offsets, coarse and fine values,
    in any dtype; labels with few classes."""
    n = draw(st.integers(1, 40))
    dim = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["integers", "normal", "clusters"]))
    if kind == "integers":
        x = rng.integers(-2, 3, size=(n, dim)).astype(np.float64)
    elif kind == "normal":
        x = rng.standard_normal((n, dim))
    else:  # near-duplicates: gaps far below float32's resolution of the offset
        x = rng.integers(-2, 3, size=(n, dim)) + 1e-6 * rng.standard_normal((n, dim))
    copies = draw(st.integers(0, n // 2))
    for i in range(copies):  # exact duplicates and exact cosine ties (scaled copies)
        x[rng.integers(n)] = x[rng.integers(n)] * draw(st.sampled_from([1.0, 2.0, 0.5]))
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    huge = -1e3 if dtype == "float16" else -1e7  # float16 ends at 65504
    x = x + draw(st.sampled_from([0.0, 0.0, 1.0, 1e3, huge]))
    tensor = torch.from_numpy(x).to(DTYPES[dtype])
    labels = rng.integers(0, draw(st.integers(1, 4)), n)
    return tensor, labels


def pair(tensor, labels, backend, **kwargs):
    return from_embeddings(tensor, labels, backend=backend, **kwargs)


def usable(tensor, metric):
    """Cosine refuses zero rows, on both roads alike (checked separately)."""
    return metric != "cosine" or bool((tensor.double().norm(dim=1) > 0).all())


@FAST
@given(data=embeddings(), k=st.integers(1, 45), metric=st.sampled_from(["cosine", "dot",
                                                                          "euclidean"]),
       chunk=st.sampled_from([None, 1, 3, 17]), exclude_self=st.booleans())
def test_self_gallery_equals_the_numpy_road(data, k, metric, chunk, exclude_self):
    tensor, labels = data
    if not usable(tensor, metric):
        return
    opts = {"k": k, "metric": metric, "exclude_self": exclude_self, "chunk_size": chunk}
    assert_same_pair(pair(tensor, labels, "numpy", **opts), pair(tensor, labels, "torch", **opts))


@FAST
@given(queries=embeddings(), gallery=embeddings(), k=st.integers(1, 45),
       metric=st.sampled_from(["cosine", "dot", "euclidean"]))
def test_separate_gallery_equals_the_numpy_road(queries, gallery, k, metric):
    (q, q_labels), (g, g_labels) = queries, gallery
    dim = min(q.shape[1], g.shape[1])
    q, g = q[:, :dim].contiguous(), g[:, :dim].contiguous()
    if not (usable(q, metric) and usable(g, metric)):
        return
    want = from_embeddings(q, q_labels, g, g_labels, k=k, metric=metric, backend="numpy")
    got = from_embeddings(q, q_labels, g, g_labels, k=k, metric=metric, backend="torch")
    assert_same_pair(want, got)


@pytest.mark.parametrize("precision", ["high", "medium"])
def test_reduced_precision_products_keep_the_result(precision):
    """TF32/bfloat16 products (where torch allows them) widen the margin, not the result."""
    rng = np.random.default_rng(5)
    x = torch.from_numpy(rng.standard_normal((300, 24)).astype(np.float32))
    x[7] = x[3]
    labels = rng.integers(0, 9, 300)
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision(precision)
        assert device.arrays.matmul_rounding(torch, torch.float32, x.device) >= 2.0**-10
        for metric in ("cosine", "euclidean", "dot"):  # the numpy road never reads torch's
            assert_same_pair(pair(x, labels, "numpy", k=20, metric=metric),
                             pair(x, labels, "torch", k=20, metric=metric))
    finally:
        torch.set_float32_matmul_precision(before)


@FAST
@given(data=embeddings(), metric=st.sampled_from(["cosine", "dot", "euclidean"]),
       precision=st.sampled_from(["highest", "medium"]))
def test_the_bound_holds(data, metric, precision):
    """Every fast device distance is within the bound of the exact one (what the host
    measures), so the candidate set always holds the exact first k."""
    tensor, _ = data
    if not usable(tensor, metric):
        return
    host = tensor.double().numpy()
    if metric == "cosine":
        host = normalize_rows(host)
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision(precision)
        side = _DeviceSide(torch, tensor, tensor, metric, metric == "cosine")
        fast, q_norm = side.block(tensor)
        error = side.error(q_norm)
    finally:
        torch.set_float32_matmul_precision(before)
    n = len(host)
    rows, cols = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    values, bound = side.to_host_space(fast.double().numpy().reshape(-1), np.repeat(error, n))
    measured = pair_distances(host, host, rows, cols, metric)
    if metric == "euclidean":
        measured = measured ** 2
    assert (np.abs(values - measured) <= bound).all()


def test_search_equals_the_engine_with_ignore_keys_and_tie_ranks():
    rng = np.random.default_rng(11)
    reference = rng.integers(-2, 3, size=(60, 3)).astype(np.float64)
    query = reference[:25]
    tie_rank = rng.permutation(60)
    ignore = [(rng.integers(0, 4, 25), rng.integers(0, 4, 60))]
    for metric in ("euclidean", "cosine", "dot"):
        host_q = normalize_rows(query) if metric == "cosine" else query
        host_r = normalize_rows(reference) if metric == "cosine" else reference
        for exact_distances in (True, False):
            want = search(query, reference, 9, metric=metric, tie_rank=tie_rank, ignore=ignore,
                          exclude_self=True, exact_distances=exact_distances)
            got = device.search(torch.from_numpy(query).float(), torch.from_numpy(reference),
                                9, host_query=host_q, host_reference=host_r, metric=metric,
                                tie_rank=tie_rank, ignore=ignore, exclude_self=True,
                                exact_distances=exact_distances, block_rows=4)
            assert np.array_equal(want.offsets, got.offsets)
            assert np.array_equal(want.indices, got.indices)
            if exact_distances:
                assert np.array_equal(want.distances, got.distances)


def test_block_memory_does_not_change_the_result():
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.standard_normal((200, 16)).astype(np.float32))
    labels = rng.integers(0, 20, 200)
    want = pair(x, labels, "numpy", k=15)
    for budget in (1, 5000, 1 << 30):
        got = from_embeddings(x, labels, k=15, backend="torch")
        nn = device.search(x, x, 15, host_query=x.double().numpy(),
                           host_reference=x.double().numpy(), block_bytes=budget)
        assert len(nn.offsets) == 201
        assert_same_pair(want, got)



def test_the_device_form_makes_no_float64_copy_of_the_gallery(monkeypatch):
    """The rows' device form (centred, unit or scaled; the mean; the norms) is made in
    pieces of FORM_CELLS coordinates: no float64 temporary of the whole gallery (three
    of them at once, 8x a float32 gallery), and the same pair as in one piece."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from irmetrics.device import knn as device_knn

    class LargestFloat64(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.largest = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for value in out if isinstance(out, (tuple, list)) else [out]:
                if isinstance(value, torch.Tensor) and value.dtype == torch.float64:
                    self.largest = max(self.largest, value.numel())
            return out

    rng = np.random.default_rng(12)
    gallery = torch.from_numpy(rng.standard_normal((2000, 16)).astype(np.float32)) + 100
    labels = rng.integers(0, 9, 2000)
    want = {m: pair(gallery, labels, "torch", k=7, metric=m) for m in ("cosine", "dot",
                                                                          "euclidean")}
    monkeypatch.setattr(device_knn, "FORM_CELLS", 4096, raising=False)
    for metric, unit in (("euclidean", False), ("dot", False), ("cosine", True)):
        with LargestFloat64() as seen:
            device_knn._DeviceSide(torch, gallery[:30], gallery, metric, unit)
        assert seen.largest <= 4096, (metric, seen.largest)
        assert_same_pair(want[metric], pair(gallery, labels, "torch", k=7, metric=metric))

def test_huge_offsets_keep_the_exact_neighbours():
    rng = np.random.default_rng(16)
    base = rng.standard_normal((150, 8))
    labels = rng.integers(0, 5, 150)
    for offset in (1e8, -3e9):
        x = torch.from_numpy(base + offset)
        assert_same_pair(pair(x, labels, "numpy", k=5, metric="euclidean"),
                         pair(x, labels, "torch", k=5, metric="euclidean"))



def same_outcome(call):
    """``call(backend)`` on both roads: the same pair, or the same error (type, message)."""
    outcomes = []
    for backend in ("numpy", "torch"):
        try:
            outcomes.append(call(backend))
        except (ValueError, TypeError) as exc:
            outcomes.append((type(exc), str(exc)))
    if isinstance(outcomes[0][0], type) or isinstance(outcomes[1][0], type):
        assert outcomes[0] == outcomes[1]
    else:
        assert_same_pair(*outcomes)


@pytest.mark.parametrize("scale", [1e-13, 1e-100, 1e-160, 1e-200, 1e-310, 1e150, 1e160, 1e308])
@pytest.mark.parametrize("metric", ["cosine", "dot", "euclidean"])
def test_tiny_and_huge_embeddings_equal_the_numpy_road(scale, metric):
    """Norms below 1e-12 (the device clamped them, the adapter does not), float64 products
    that underflow to ties on the host, subnormal rows (2**1029 overflowed a Python
    float), and coordinates whose squares or mean overflow (the device returned an empty
    run where the host refuses): the numpy road's pair, or its error."""
    rng = np.random.default_rng(21)
    x = rng.uniform(-1.0, 1.0, (40, 4)) * scale
    x[5] = x[6]
    labels = rng.integers(0, 3, 40)
    with np.errstate(over="ignore"):
        same_outcome(lambda backend: pair(torch.from_numpy(x), labels, backend, k=3,
                                          metric=metric))
    same = torch.from_numpy(np.full((3, 2), scale))  # equal rows: every distance 0
    with np.errstate(over="ignore"):
        same_outcome(lambda backend: pair(same, [0, 1, 0], backend, k=1, metric=metric))



@pytest.mark.parametrize("make", [lambda: np.array([["a", "b"], ["c", "d"]]),
                                  lambda: [[1.0, None], [1.0, 2.0]],
                                  lambda: iter([[1.0], [2.0]])], ids=["text", "None", "iterator"])
def test_host_embeddings_are_refused_in_the_numpy_roads_words(make):
    """Text, objects and iterators taken to the device road (backend="torch") are refused
    as the numpy road refuses them (not "must hold numbers on the device road")."""
    same_outcome(lambda backend: pair(make(), [0, 1], backend, k=1))

@pytest.mark.parametrize("scale", [1e-160, 1e-310])
def test_tiny_embeddings_in_the_drop_ins(scale):
    """PML's cosine reads ``x / max(|x|, 1e-12)``: near-zero unit rows, whose distances
    ``1 - dot`` all round to 1 on the host (ties by index)."""
    from irmetrics.compat.pml import AccuracyCalculator

    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.standard_normal((60, 5)) * scale)
    labels = np.arange(60) % 4
    for normalize in (False, True):
        got = [AccuracyCalculator(k=5, distance="cosine", normalize_embeddings=normalize,
                                  backend=backend).get_accuracy(x, labels)
               for backend in ("numpy", "torch")]
        assert got[0] == got[1]


def test_layout_never_changes_the_scores():
    """numpy sums a row pairwise only where it is contiguous: a transposed (Fortran
    order) input gave the numpy road other cosine bits than the same values in C order
    (and than the device road)."""
    rng = np.random.default_rng(8)
    x = torch.from_numpy(rng.standard_normal((8, 300)).astype(np.float32)).T  # (300, 8)
    labels = np.arange(300) % 7
    want = pair(x.contiguous(), labels, "numpy", k=5)
    for tensor in (x, x.numpy()):
        assert_same_pair(want, pair(tensor, labels, "numpy", k=5))
        assert_same_pair(want, pair(tensor, labels, "torch", k=5))

def test_k_beyond_the_gallery_and_tiny_galleries():
    x = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    labels = [0, 1, 0]
    for k in (1, 2, 5):
        for metric in ("cosine", "dot", "euclidean"):
            assert_same_pair(pair(x, labels, "numpy", k=k, metric=metric),
                             pair(x, labels, "torch", k=k, metric=metric))
    one = torch.tensor([[3.0]])
    _, run = pair(one, [0], "torch", k=3)
    assert run.df.height == 0


def test_auto_keeps_cpu_tensors_on_the_numpy_road(monkeypatch):
    x = torch.randn(30, 4)
    labels = np.arange(30) % 3

    def refuse(*args, **kwargs):
        raise AssertionError("the device road was taken")

    monkeypatch.setattr(device, "search", refuse)
    from_embeddings(x, labels, k=3)  # auto: CPU tensor, numpy road
    with pytest.raises(AssertionError):
        from_embeddings(x, labels, k=3, backend="torch")


def test_numpy_inputs_take_the_device_road_when_asked():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 5))
    labels = rng.integers(0, 3, 40)
    assert_same_pair(from_embeddings(x, labels, k=4), from_embeddings(x, labels, k=4,
                                                                      backend="torch"))


def test_errors_are_one_line_and_the_numpy_roads():
    x = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    for backend in ("numpy", "torch"):
        with pytest.raises(ParameterError, match="zero row at index 1"):
            from_embeddings(x, [0, 1], k=1, backend=backend)
        with pytest.raises(ParameterError, match="NaN at index"):
            from_embeddings(torch.tensor([[math.nan], [1.0]]), [0, 1], k=1, backend=backend)
        with pytest.raises(ParameterError, match="finite"):
            from_embeddings(torch.tensor([[math.inf], [1.0]]), [0, 1], k=1, backend=backend)
    messages = set()
    for backend in ("numpy", "torch"):
        with pytest.raises(ParameterError, match="real numbers") as info:
            from_embeddings(torch.ones(3, 2, dtype=torch.complex64), [0, 1, 2], k=1,
                            backend=backend)
        messages.add(str(info.value))
    assert messages == {"`query_embeddings` must hold real numbers; got dtype complex64."}


class _FarArray:
    """An array on a device nobody here can read (DLPack device type 2: CUDA)."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, **kwargs):
        raise BufferError("no CUDA here")


def test_detection_reads_modules_and_dlpack_without_importing():
    far = _FarArray()
    assert device.on_device(far)
    assert not device.on_device(np.zeros(2)) and not device.on_device(torch.zeros(2))
    assert device.array_library(torch.zeros(1)) == "torch"
    assert device.wants_device("auto", far) and not device.wants_device("auto", np.zeros(1))
    with pytest.raises(ParameterError) as info:
        from_embeddings(far, [0], k=1, backend="numpy")
    assert "\n" not in str(info.value) and "readable on the CPU" in str(info.value)


def test_importing_irmetrics_never_imports_torch():
    code = ("import sys, numpy as np, irmetrics, irmetrics.device, irmetrics.adapters as a; "
            "a.from_embeddings(np.eye(3), [0, 1, 0], k=1); a.from_matrix(np.eye(2), np.eye(2), "
            "k=1); a.from_flat([0.5], [1], [0]); assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_drop_ins_search_on_the_device():
    from irmetrics.compat.oml import EmbeddingMetrics
    from irmetrics.compat.pml import AccuracyCalculator

    rng = np.random.default_rng(4)
    x = rng.standard_normal((120, 6)).astype(np.float32)
    x[9] = x[4]
    labels = rng.integers(0, 5, 120)
    for distance in ("euclidean", "cosine"):
        for normalize in (False, True):
            for k in (None, 7):
                opts = {"k": k, "distance": distance, "normalize_embeddings": normalize}
                assert AccuracyCalculator(**opts, backend="numpy").get_accuracy(x, labels) == \
                    AccuracyCalculator(**opts, backend="torch").get_accuracy(
                        torch.from_numpy(x), labels)

    class Data:
        extra_data = {"sequence": rng.integers(0, 20, 120)}  # noqa: RUF012 (OML's shape)

        def __len__(self):
            return 120

        def get_labels(self):
            return labels

        def get_query_ids(self):
            return np.arange(0, 120, 3)

        def get_gallery_ids(self):
            return np.arange(120)

    results = []
    for backend in ("numpy", "torch"):
        em = EmbeddingMetrics(Data(), cmc_top_k=(1, 5), precision_top_k=(5,), map_top_k=(10,),
                              pcf_variance=(0.5,), verbose=False, backend=backend)
        em.setup()
        em.update(torch.from_numpy(x[:60]).half(), np.arange(60))
        em.update(torch.from_numpy(x[60:]), np.arange(60, 120))
        results.append((em.compute_metrics(), em.retrieval_results))
    assert results[0][0] == results[1][0]
    for field in ("offsets", "retrieved_flat", "distances_flat", "gt_offsets", "gt_flat"):
        assert np.array_equal(getattr(results[0][1], field), getattr(results[1][1], field))


def test_the_docs_gpu_example_runs_and_holds():
    """docs/adapters.md's device example, as written (on CPU tensors here)."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[2] / "docs" / "adapters.md").read_text()
    section = text.split("## Device tensors (GPU)", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    exec(compile(code, "docs/adapters.md", "exec"), {})  # noqa: S102 (our own docs)


def test_auto_takes_the_device_road_for_device_arrays(monkeypatch):
    """With torch tensors seen as device arrays (what a GPU tensor is), "auto" takes the
    device road and every other intake (labels, TF-Similarity lookups) copies them."""
    from irmetrics.compat.tfsim import BNDCG

    calls = []
    real_search = device.search

    def spy(*args, **kwargs):
        calls.append(1)
        return real_search(*args, **kwargs)

    monkeypatch.setattr(device.arrays, "on_device",
                        lambda value: device.array_library(value) == "torch")
    monkeypatch.setattr(device, "search", spy)
    rng = np.random.default_rng(6)
    x = torch.from_numpy(rng.standard_normal((50, 4)))
    labels = torch.from_numpy(rng.integers(0, 3, 50))
    got = from_embeddings(x, labels, k=5)
    assert calls
    assert_same_pair(from_embeddings(x.numpy(), labels.numpy(), k=5), got)
    mask = rng.random((6, 4)) < 0.5
    dist = np.sort(rng.random((6, 4)), axis=1)
    metric = BNDCG(k=3, distance_threshold=0.5)
    assert metric.compute(query_labels=torch.arange(6), lookup_distances=torch.from_numpy(dist),
                          match_mask=torch.from_numpy(mask)) == \
        metric.compute(query_labels=np.arange(6), lookup_distances=dist, match_mask=mask)
