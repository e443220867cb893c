"""irmetrics.compat.torchmetrics with torch installed: real torchmetrics Metrics, checked
against torchmetrics 1.9.0 itself (ties included), plus the Metric machinery (device
moves, clones, pickles, TorchScript, MetricCollection, DDP) and the numpy face."""

from __future__ import annotations

import ast
import contextlib
import io
import itertools
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
tm_ref = pytest.importorskip("torchmetrics")

import torchmetrics.functional.retrieval as ref_functional
import torchmetrics.retrieval as ref_classes
from torchmetrics import Metric, MetricCollection

import irmetrics as irm
from irmetrics.adapters import from_flat
from irmetrics.compat import torchmetrics as ours
from irmetrics.compat.torchmetrics import _ordering
from irmetrics.exceptions import InputFormatError, ParameterError, ShapeError

ROOT = Path(__file__).resolve().parents[2]
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CLASSES = ["RetrievalMAP", "RetrievalMRR", "RetrievalPrecision", "RetrievalRecall",
           "RetrievalFallOut", "RetrievalHitRate", "RetrievalNormalizedDCG", "RetrievalRPrecision",
           "RetrievalAUROC", "RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"]
FUNCTIONS = ["retrieval_average_precision", "retrieval_reciprocal_rank", "retrieval_precision",
             "retrieval_recall", "retrieval_fall_out", "retrieval_hit_rate",
             "retrieval_normalized_dcg", "retrieval_r_precision", "retrieval_auroc",
             "retrieval_precision_recall_curve"]
IDX = torch.tensor([0, 0, 0, 1, 1, 1, 1])
PREDS = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
TARGET = torch.tensor([0, 0, 1, 0, 1, 0, 1])


def same(a, b, atol=2e-6):
    """Equal results: tensors of one shape and dtype kind within float32 rounding."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    assert isinstance(b, torch.Tensor), type(b)
    return (a.shape == b.shape and a.is_floating_point() == b.is_floating_point()
            and a.device == b.device and torch.allclose(a.double(), b.double(), atol=atol, rtol=0))


def options(name, draw_int):
    """Constructor options of class ``name`` from an index-drawing function."""
    kwargs = {"empty_target_action": ["neg", "pos", "skip"][draw_int(3)]}
    if name in ("RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"):
        kwargs["max_k"] = [None, 1, 3, 10][draw_int(4)]
        kwargs["adaptive_k"] = bool(draw_int(2))
        if name == "RetrievalRecallAtFixedPrecision":
            kwargs["min_precision"] = [0.0, 0.3, 0.5][draw_int(3)]
    elif name != "RetrievalRPrecision":
        kwargs["top_k"] = [None, 1, 2, 4, 10][draw_int(5)]
    if name == "RetrievalPrecision":
        kwargs["adaptive_k"] = bool(draw_int(2))
    if name == "RetrievalAUROC":
        kwargs["max_fpr"] = [None, 0.5][draw_int(2)]
    return kwargs


def both(name, kwargs, batches):
    """``(torchmetrics result, irmetrics result)`` of class ``name`` fed ``batches``."""
    results = []
    for library in (ref_classes, ours):
        metric = getattr(library, name)(**kwargs)
        for preds, target, indexes in batches:
            metric.update(preds, target, indexes=indexes)
        results.append(metric.compute())
    return results


def target_for(name, rng, n):
    if name == "RetrievalNormalizedDCG":
        return torch.tensor(rng.integers(-1, 4, n))  # graded, negative labels included
    return torch.tensor(rng.integers(0, 2, n))


@st.composite
def tied_batches(draw, name):
    """Batches of a few queries whose predictions tie a lot (negatives and 0 included)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sizes = rng.integers(1, draw(st.sampled_from([4, 12, 40])), int(rng.integers(1, 9)))
    indexes = np.repeat(rng.permutation(50)[:sizes.size], sizes)
    if draw(st.booleans()):
        indexes = rng.permutation(indexes)
    levels = draw(st.sampled_from([2, 3, 7, 1000]))
    preds = torch.tensor(rng.integers(-1, levels, indexes.size) / levels, dtype=torch.float32)
    target = target_for(name, rng, indexes.size)
    cuts = np.array_split(np.arange(indexes.size), draw(st.integers(1, 3)))
    return [(preds[c], target[c], torch.tensor(indexes[c])) for c in cuts if c.size]


# ---------------------------------------------------------------- torchmetrics' numbers

@pytest.mark.parametrize("name", CLASSES)
@FAST
@given(data=st.data())
def test_classes_equal_torchmetrics_ties_included(name, data):
    batches = data.draw(tied_batches(name))
    kwargs = options(name, lambda n: data.draw(st.integers(0, n - 1)))
    expected, got = both(name, kwargs, batches)
    assert same(expected, got), (kwargs, expected, got)


@pytest.mark.parametrize("name", FUNCTIONS)
@FAST
@given(seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([1, 2, 5, 1000]),
       n=st.integers(1, 70), k=st.sampled_from([None, 1, 2, 5, 20]))
def test_functions_equal_torchmetrics_ties_included(name, seed, levels, n, k):
    rng = np.random.default_rng(seed)
    preds = torch.tensor(rng.integers(-1, levels + 1, n) / levels, dtype=torch.float32)
    target = target_for("RetrievalNormalizedDCG" if "dcg" in name else "", rng, n)
    kwargs = {} if name == "retrieval_r_precision" else (
        {"max_k": k} if name.endswith("curve") else {"top_k": k})
    expected = getattr(ref_functional, name)(preds, target, **kwargs)
    got = getattr(ours, name)(preds, target, **kwargs)
    assert same(expected, got), (kwargs, expected, got)


def test_the_issues_tie_examples():
    # torch's topk picks the middle one of three tied 0.9s; 17 ties put the hit 16th.
    assert ours.retrieval_precision(torch.tensor([0.5, 0.9, 0.9, 0.9]), torch.tensor([0, 0, 1, 0]),
                                    top_k=1) == 1.0
    assert ours.retrieval_reciprocal_rank(torch.tensor([1.0] * 17),
                                          torch.tensor([1] + [0] * 16)) == 0.0625
    # trec_eval's order: ties by doc id d0..d3 descending in bytes, so d3 first, then d2.
    assert ours.retrieval_precision(torch.tensor([0.5, 0.9, 0.9, 0.9]), torch.tensor([0, 0, 1, 0]),
                                    top_k=1, ties="trec_eval") == 0.0
    assert ours.retrieval_precision(torch.tensor([0.5, 0.9, 0.9, 0.9]), torch.tensor([0, 0, 1, 0]),
                                    top_k=2, ties="trec_eval") == 0.5
    assert ours.retrieval_reciprocal_rank(torch.tensor([1.0] * 17), torch.tensor([1] + [0] * 16),
                                          ties="trec_eval") == pytest.approx(1 / 17)  # "d0" is last


@pytest.mark.parametrize("shuffle", [False, True])
def test_long_inputs_take_the_fast_roads_and_stay_exact(shuffle):
    # 36 queries x 1,000 = 36,000 predictions (>= RADIX_SORT_MIN): nondecreasing indexes
    # skip torchmetrics' index sort; whole rows are key-sorted with torch.topk on the
    # rows that tie; set reads run argsort only where rank k ties rank k + 1.
    rng = np.random.default_rng(7)
    n_q, n = 36, 1000
    indexes = np.repeat(np.arange(n_q), n)
    if shuffle:
        indexes = rng.permutation(indexes)
    scale = np.where(np.arange(n_q) % 3 == 0, 50, 2**20)[indexes]  # some rows tie heavily
    preds = torch.tensor(rng.integers(-5, 2**20, indexes.size) % scale / scale, dtype=torch.float32)
    batches = [(preds, target_for(name, rng, indexes.size), torch.tensor(indexes))
               for name in ("", "RetrievalNormalizedDCG")]
    for name in CLASSES:
        for top_k in ([None, 10] if name != "RetrievalRPrecision" else [None]):
            kwargs = {} if top_k is None else (
                {"max_k": top_k} if "Curve" in name or "Fixed" in name else {"top_k": top_k})
            expected, got = both(name, kwargs, batches[name == "RetrievalNormalizedDCG":][:1])
            assert same(expected, got), (name, kwargs, expected, got)


@pytest.mark.parametrize("key_block", [_ordering.KEY_BLOCK, 700])  # 700: two rows a block
def test_topk_ranked_equals_torch_topk_row_for_row(key_block, monkeypatch):
    monkeypatch.setattr(_ordering, "KEY_BLOCK", key_block)
    rng = np.random.default_rng(3)
    for levels, rows in itertools.product((3, 40, 2**24), (50, 200)):  # > 64 rows: sampled
        values = torch.tensor(rng.integers(0, levels, (rows, 300)) / levels, dtype=torch.float32)
        values[0] = -0.0  # -0.0 and 0.0 tie, as in torch
        values[1, ::2] = 0.0
        values[2] = -values[2]
        hits = torch.from_numpy(rng.random((rows, 300)) < 0.3)  # rides in the keys
        gains = torch.from_numpy(rng.integers(0, 4, (rows, 300)))  # gathered by column
        for k in (5, 299, 300):
            local = torch.topk(values, k, dim=-1, sorted=True).indices
            for carried in (hits, gains):
                ranked_values, ranked_carried = _ordering._topk_ranked(values, carried, k)
                assert torch.equal(torch.from_numpy(ranked_values), values.gather(1, local))
                assert torch.equal(torch.from_numpy(ranked_carried), carried.gather(1, local))


def test_index_sort_is_skipped_only_where_it_is_the_identity():
    indexes = torch.repeat_interleave(torch.arange(20), _ordering.RADIX_SORT_MIN // 10)
    if _ordering._cpu_index_sort_is_stable():
        perm, ids, sizes = _ordering._grouped(indexes, stable=False)
        assert perm is None and ids.tolist() == list(range(20)) and set(sizes) == {indexes.numel() // 20}
        assert torch.equal(torch.sort(indexes).indices, torch.arange(indexes.numel()))
    short = torch.tensor([0, 0, 1, 1, 1])  # below the radix threshold: torch's own sort
    assert _ordering._grouped(short, stable=False)[0] is not None
    assert _ordering._grouped(short, stable=True)[0] is None
    perm, ids, sizes = _ordering._grouped(torch.tensor([3, 1, 3, 2, 1]), stable=True)
    assert perm.tolist() == [1, 4, 3, 0, 2] and ids.tolist() == [1, 2, 3] and sizes.tolist() == [2, 1, 2]


def test_nonpositive_predictions_are_not_retrieved():
    preds, target = torch.tensor([0.5, -0.2, 0.3]), torch.tensor([1, 1, 0])
    assert ours.retrieval_average_precision(preds, target) == 1.0
    assert torch.isclose(ours.retrieval_average_precision(preds, target, filter_nonpositive=False),
                         torch.tensor(5 / 6))
    assert ours.retrieval_reciprocal_rank(torch.tensor([-0.5, -0.2, 0.3]), target) == 0.0
    assert ours.retrieval_recall(preds, target, top_k=3) == 0.5
    assert ours.retrieval_recall(preds, target, top_k=3, filter_nonpositive=False) == 1.0
    m = ours.RetrievalPrecision(top_k=3, filter_nonpositive=False)
    assert torch.isclose(m(preds, target, indexes=torch.zeros(3, dtype=torch.long)),
                         torch.tensor(2 / 3))


@FAST
@given(seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([2, 4, 1000]))
def test_trec_eval_ties_equal_irmetrics_evaluate_on_from_flat(seed, levels):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 15, int(rng.integers(1, 7)))
    indexes = rng.permutation(np.repeat(np.arange(sizes.size), sizes))
    preds = rng.integers(1, levels + 1, indexes.size) / levels  # positive: no filter question
    target = rng.integers(0, 2, indexes.size)
    results = irm.evaluate(*from_flat(preds, target, indexes),
                           ["P.3", "recall.3", "recip_rank", "map"]).aggregate()
    tensors = (torch.tensor(preds, dtype=torch.float32), torch.tensor(target), torch.tensor(indexes))
    for metric, key in [(ours.RetrievalPrecision(top_k=3, ties="trec_eval"), "P_3"),
                        (ours.RetrievalRecall(top_k=3, ties="trec_eval"), "recall_3"),
                        (ours.RetrievalMRR(ties="trec_eval"), "recip_rank"),
                        (ours.RetrievalMAP(ties="trec_eval"), "map")]:
        metric.update(*tensors)
        assert metric.compute().item() == pytest.approx(results[key], abs=1e-6), key


@pytest.mark.parametrize("name", CLASSES)
@FAST
@given(data=st.data())
def test_input_order_ties_equal_the_numpy_face(name, data):
    from irmetrics.compat.torchmetrics import numpy_api

    batches = data.draw(tied_batches(name))
    kwargs = options(name, lambda n: data.draw(st.integers(0, n - 1)))
    metric, reference = getattr(ours, name)(ties="input_order", **kwargs), getattr(numpy_api, name)(**kwargs)
    for preds, target, indexes in batches:
        metric.update(preds, target, indexes=indexes)
        reference.update(preds.numpy(), target.numpy(), indexes.numpy())
    got, expected = metric.compute(), reference.compute()
    if name == "RetrievalRecallAtFixedPrecision":
        # The Metric compares float32 precisions with min_precision (as torchmetrics),
        # the numpy face float64 ones: a precision within float32 rounding of the
        # threshold may be kept by one and not the other, both correctly.
        curve = numpy_api.RetrievalPrecisionRecallCurve(
            max_k=kwargs["max_k"], adaptive_k=kwargs["adaptive_k"],
            empty_target_action=kwargs["empty_target_action"])
        for preds, target, indexes in batches:
            curve.update(preds.numpy(), target.numpy(), indexes.numpy())
        precisions = np.asarray(curve.compute()[0], dtype=np.float64)
        assume(not np.any(np.abs(precisions - kwargs["min_precision"]) < 1e-6))
    expected = tuple(torch.as_tensor(np.asarray(e)).float() for e in expected) \
        if isinstance(expected, tuple) else torch.tensor(expected, dtype=torch.float32)
    got = tuple(g.float() for g in got) if isinstance(got, tuple) else got
    assert same(expected, got), (kwargs, expected, got)


# ---------------------------------------------------------------- the Metric machinery

@pytest.mark.parametrize("name", CLASSES)
def test_every_class_is_a_torchmetrics_metric(name):
    metric = getattr(ours, name)()
    assert isinstance(metric, Metric) and isinstance(metric, torch.nn.Module)
    assert metric.is_differentiable is False and metric.full_state_update is False
    with pytest.raises(RuntimeError):
        metric.higher_is_better = not metric.higher_is_better
    torch.jit.script(metric)
    clone = metric.clone()
    assert type(clone) is type(metric) and clone is not metric
    assert metric.state_dict() == {}
    assert set(metric._defaults) == {"indexes", "preds", "target"}
    metric = pickle.loads(pickle.dumps(metric.to("cpu")))
    batch_value = metric(PREDS, TARGET, indexes=IDX)
    metric.update(PREDS[:3].double(), TARGET[:3].bool(), indexes=IDX[:3] + 5)
    assert [t.dtype for t in (metric.preds[0], metric.target[1], metric.indexes[1])] == \
        [torch.float32, torch.int64, torch.int64]
    reference = getattr(ref_classes, name)()
    assert same(reference(PREDS, TARGET, indexes=IDX), batch_value)
    reference.update(PREDS[:3].double(), TARGET[:3].bool(), indexes=IDX[:3] + 5)
    assert same(reference.compute(), metric.compute())
    assert hash(metric)


def test_half_precision_and_compute_on_cpu():
    m = ours.RetrievalMAP(compute_on_cpu=True)
    m.update(PREDS.half(), TARGET, indexes=IDX)
    value = m.compute()
    assert value.dtype == torch.float32 and value.device.type == "cpu"
    assert torch.isclose(value, torch.tensor(0.7917), atol=1e-4)


def test_metric_collection_with_compute_groups_and_forward():
    def collection(library):
        return MetricCollection({"map": library.RetrievalMAP(), "mrr": library.RetrievalMRR(),
                                 "p2": library.RetrievalPrecision(top_k=2),
                                 "ndcg": library.RetrievalNormalizedDCG(top_k=3)}, prefix="val/")

    expected, got = collection(ref_classes), collection(ours)
    for step in range(3):
        shift = torch.tensor(10 * step)
        a = expected(PREDS.roll(step), TARGET, indexes=IDX + shift)
        b = got(PREDS.roll(step), TARGET, indexes=IDX + shift)
        assert a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    final_a, final_b = expected.compute(), got.compute()
    assert all(same(final_a[k], final_b[k]) for k in final_a)
    got.reset()
    assert all(len(m.preds) == 0 for m in got.values())
    # update() merges metrics with equal states into one compute group, as torchmetrics does
    expected, got = collection(ref_classes), collection(ours)
    for c in (expected, got):
        c.update(PREDS, TARGET, indexes=IDX)
        c.update(PREDS.flip(0), TARGET, indexes=IDX + 2)
    assert list(got.compute_groups.values()) == list(expected.compute_groups.values()) \
        == [["map", "mrr", "ndcg", "p2"]]
    final_a, final_b = expected.compute(), got.compute()
    assert all(same(final_a[k], final_b[k]) for k in final_a)


def _rank_batch(rank):
    rng = np.random.default_rng(rank)
    return (torch.tensor(rng.integers(0, 4, 40) / 4, dtype=torch.float32),
            torch.tensor(rng.integers(0, 2, 40)), torch.tensor(rng.integers(0, 6, 40)))


def _ddp_worker(rank, world_size, init_file):
    """One DDP process: both libraries see this rank's batch (queries shared across ranks);
    compute() gathers the states, so both equal one process fed every rank's batch."""
    torch.distributed.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                                         world_size=world_size)
    try:
        for name in ("RetrievalMAP", "RetrievalRecall", "RetrievalPrecisionRecallCurve"):
            expected, got = both(name, {}, [_rank_batch(rank)])
            assert same(expected, got), (rank, name, expected, got)
            alone = getattr(ours, name)(sync_on_compute=False)
            for other in range(world_size):
                alone.update(*_rank_batch(other))
            assert same(alone.compute(), got), (rank, name)
    finally:
        torch.distributed.destroy_process_group()


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed unavailable")
def test_ddp_synchronisation_matches_torchmetrics(tmp_path):
    torch.multiprocessing.spawn(_ddp_worker, args=(2, str(tmp_path / "init")), nprocs=2, join=True)


# ---------------------------------------------------------------- errors and faces

def test_errors_use_torchmetrics_words_and_value_errors():
    cases = [
        (lambda: ours.RetrievalMAP()(PREDS, TARGET, indexes=None), "`indexes` cannot be None"),
        (lambda: ours.RetrievalMAP(empty_target_action="casual_argument"),
         "`empty_target_action` received a wrong value `casual_argument`."),
        (lambda: ours.RetrievalMAP(ignore_index=-100.0),
         "Argument `ignore_index` must be an integer or None."),
        (lambda: ours.RetrievalMAP()(PREDS, TARGET, indexes=IDX[:-1]),
         "`indexes`, `preds` and `target` must be of the same shape"),
        (lambda: ours.RetrievalMAP()(PREDS, TARGET, indexes=IDX.bool()),
         "`indexes` must be a tensor of long integers"),
        (lambda: ours.RetrievalMAP()(PREDS.bool(), TARGET, indexes=IDX),
         "`preds` must be a tensor of floats"),
        (lambda: ours.RetrievalMAP()(torch.rand(0), torch.rand(0), indexes=torch.zeros(0).long()),
         "`indexes`, `preds` and `target` must be non-empty and non-scalar tensors"),
        (lambda: ours.RetrievalMAP(empty_target_action="error")(PREDS, TARGET * 0, indexes=IDX),
         "`compute` method was provided with a query with no positive target."),
        (lambda: ours.RetrievalFallOut(empty_target_action="error")(PREDS, TARGET * 0 + 1, indexes=IDX),
         "`compute` method was provided with a query with no negative target."),
        (lambda: ours.retrieval_precision(PREDS, TARGET, top_k=-10),
         "`top_k` has to be a positive integer or None"),
        (lambda: ours.retrieval_precision(PREDS, TARGET, adaptive_k=None), "`adaptive_k` has to be a boolean"),
        (lambda: ours.retrieval_recall(PREDS, TARGET[:-1]), "`preds` and `target` must be of the same shape"),
        (lambda: ours.retrieval_recall(PREDS, TARGET * 3), "`target` must contain `binary` values"),
        (lambda: ours.retrieval_recall(PREDS, TARGET * 0.5), "fractional float targets"),
        (lambda: ours.retrieval_recall(PREDS * float("nan"), TARGET), "NaN"),
        (lambda: ours.RetrievalMAP(ties="random"), "`ties` must be one of"),
        (lambda: ours.RetrievalMAP(unknown=1), "Unexpected keyword arguments"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(InputFormatError, match=r"\(index 0\)"):
        ours.RetrievalMAP(empty_target_action="error")(PREDS, TARGET * 0, indexes=IDX)
    assert issubclass(ShapeError, ValueError) and issubclass(ParameterError, ValueError)
    with pytest.raises(ValueError, match="No samples to concatenate"), pytest.warns(UserWarning):
        ours.RetrievalMAP().compute()


def test_results_live_on_the_metrics_device_and_lists_are_accepted():
    m = ours.RetrievalNormalizedDCG()
    value = m([0.1, 0.2, 0.3, 4.0, 70.0], [10, 0, 0, 1, 5], indexes=[0, 0, 0, 0, 0])
    assert isinstance(value, torch.Tensor) and value.dtype == torch.float32
    assert torch.isclose(value, torch.tensor(0.6957), atol=1e-4)
    precision, recall, top_k = ours.RetrievalPrecisionRecallCurve(max_k=4, adaptive_k=True)(
        PREDS, TARGET, indexes=IDX)
    assert top_k.tolist() == [1, 2, 3, 4] and precision.shape == recall.shape == (4,)
    p, _r, k = ours.retrieval_precision_recall_curve(PREDS[:3], TARGET[:3], max_k=5, adaptive_k=True)
    assert k.tolist() == [1, 2, 3, 3, 3] and p.dtype == torch.float32


def test_import_irmetrics_never_imports_torch_and_the_faces_are_explicit():
    # Without torch the package's names refuse (never a numpy stand-in of other types
    # and numbers); the numpy face is imported by its own name.
    code = ("import sys, irmetrics; assert 'torch' not in sys.modules, 'torch imported'; "
            "sys.modules['torch'] = None; "  # as if not installed
            "from irmetrics.compat import torchmetrics as tm; "
            "from irmetrics.compat.torchmetrics import numpy_api as np_face; "
            "v = np_face.retrieval_precision([0.2, 0.3, 0.5], [True, False, True], top_k=2); "
            "assert type(v) is float and v == 0.5, v; "
            "assert np_face.RetrievalMAP()([0.2, 0.3, 0.5], [1, 0, 1], [0, 0, 0]) == 0.8333333333333333; "
            "assert 'torchmetrics' not in sys.modules\n"
            "try:\n    tm.RetrievalMAP\n"
            "except ImportError as err:\n    print(err)")
    done = subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "irmetrics.compat.torchmetrics.RetrievalMAP is torchmetrics' face (Metrics, tensors in"
        " and out) and needs torch and torchmetrics: pip install irmetrics-exact[torchmetrics]."
        " The numpy face, floats in and out, is irmetrics.compat.torchmetrics.numpy_api.RetrievalMAP.")
    from irmetrics.compat.torchmetrics import metrics

    assert isinstance(ours.RetrievalMAP(), Metric)
    assert ours.retrieval_precision is metrics.retrieval_precision
    with pytest.raises(AttributeError, match="has no attribute 'BACKEND'"):
        ours.BACKEND  # noqa: B018


# ---------------------------------------------------------------- docs/metric_learning.md

def test_the_lightning_style_example_prints_what_the_docs_say():
    doc = (ROOT / "docs" / "metric_learning.md").read_text()
    block = doc.split("<!-- lightning-example -->\n```python\n")[1].split("```", 1)[0]
    code, expected, printing = [], [], False
    for line in block.splitlines():  # "# " lines right after a print(...) line are its output
        if line.startswith("# ") and printing:
            expected.append(line[2:])
            continue
        code.append(line)
        printing = "print(" in line
    tree = ast.parse("\n".join(code))
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(compile(tree, "<metric_learning.md>", "exec"), {})
    assert printed.getvalue().splitlines() == expected
