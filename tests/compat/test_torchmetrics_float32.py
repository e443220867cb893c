"""The torch face gives torchmetrics 1.9.0's float32 numbers bit for bit on CPU (issue 34
item 5): average precision, nDCG (fractional float targets included) and AUROC (partial
AUC and logits included) in torchmetrics' float32 order of operations, every other value
one correctly rounded division; ``exact=True`` keeps the exact value rounded once."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("torchmetrics")

import torchmetrics.functional.retrieval as ref_functional
import torchmetrics.retrieval as ref_classes

from irmetrics.compat import torchmetrics as ours
from irmetrics.compat.torchmetrics import _float32, numpy_api

FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CLASSES = [n for n in ours.__all__ if n.startswith("Retrieval")]
FUNCTIONS = [n for n in ours.__all__ if n.startswith("retrieval_")]


def bits(value) -> tuple:
    """Every float of a result as hex (sign of zero included), with dtypes and shapes."""
    parts = value if isinstance(value, tuple) else (value,)
    return tuple((str(p.dtype), tuple(p.shape), tuple(float(x).hex() for x in p.reshape(-1).tolist()))
                 for p in parts)


def assert_same(name, expected, got, context):
    assert bits(expected) == bits(got), (name, context, expected, got)


def tied_preds(rng, n, levels):
    return torch.tensor(rng.integers(-1, levels + 1, n) / levels, dtype=torch.float32)


def target_for(name, rng, n):
    if "dcg" in name.lower():
        return torch.tensor(rng.integers(-1, 5, n))  # graded, negative labels included
    return torch.tensor(rng.integers(0, 2, n))


@pytest.mark.parametrize("name", FUNCTIONS)
@FEW
@given(seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([1, 2, 5, 1000]),
       n=st.sampled_from([1, 2, 3, 7, 8, 15, 16, 17, 33, 64, 65, 130, 257, 600]),
       k=st.sampled_from([None, 1, 2, 5, 20, 100]))
def test_functions_are_torchmetrics_float32_bit_for_bit(name, seed, levels, n, k):
    rng = np.random.default_rng(seed)
    preds, target = tied_preds(rng, n, levels), target_for(name, rng, n)
    kwargs = {} if name == "retrieval_r_precision" else (
        {"max_k": k} if name.endswith("curve") else {"top_k": k})
    if name == "retrieval_auroc":
        kwargs["max_fpr"] = [None, 0.1, 0.5, 0.9][seed % 4]
    expected = getattr(ref_functional, name)(preds, target, **kwargs)
    got = getattr(ours, name)(preds, target, **kwargs)
    assert_same(name, expected, got, (kwargs, n, levels))


@FEW
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 5, 31, 32, 33, 40, 64, 65, 300]),
       scale=st.sampled_from([1.0, 10.0, 40.0]), k=st.sampled_from([None, 3, 20]),
       max_fpr=st.sampled_from([None, 0.05, 0.5]))
def test_auroc_of_logits_is_torchmetrics_float32_bit_for_bit(seed, n, scale, k, max_fpr):
    # Logits pass through torch.sigmoid, whose vectorised and scalar loops differ in the
    # last bit; large logits saturate to 1.0 and become ties there.
    rng = np.random.default_rng(seed)
    preds = torch.tensor(rng.standard_normal(n) * scale, dtype=torch.float32)
    target = torch.tensor(rng.integers(0, 2, n))
    kwargs = {"top_k": k, "max_fpr": max_fpr}
    assert_same("retrieval_auroc", ref_functional.retrieval_auroc(preds, target, **kwargs),
                ours.retrieval_auroc(preds, target, **kwargs), kwargs)


@FEW
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 2, 5, 17, 40, 100, 300]),
       levels=st.sampled_from([1, 2, 5, 1000]), scale=st.sampled_from([1.0, 3.0, 100.0]),
       k=st.sampled_from([None, 1, 5, 20]))
def test_ndcg_of_fractional_targets_is_torchmetrics_float32_bit_for_bit(seed, n, levels, scale, k):
    # torchmetrics adds tied items' float targets with a float32 scatter_add_ in entry order.
    rng = np.random.default_rng(seed)
    preds = tied_preds(rng, n, levels)
    target = torch.tensor(rng.random(n) * scale, dtype=torch.float32)
    assert_same("retrieval_normalized_dcg",
                ref_functional.retrieval_normalized_dcg(preds, target, top_k=k),
                ours.retrieval_normalized_dcg(preds, target, top_k=k), (n, levels, k))


@st.composite
def batches(draw, name):
    """Many queries of many lengths (so many length groups), tie-heavy, in 1-3 batches."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sizes = rng.integers(1, draw(st.sampled_from([4, 20, 70, 300])), int(rng.integers(1, 40)))
    indexes = np.repeat(rng.permutation(200)[:sizes.size], sizes)
    if draw(st.booleans()):
        indexes = rng.permutation(indexes)
    preds = tied_preds(rng, indexes.size, draw(st.sampled_from([2, 3, 7, 1000])))
    target = target_for(name, rng, indexes.size)
    cuts = np.array_split(np.arange(indexes.size), draw(st.integers(1, 3)))
    return [(preds[c], target[c], torch.tensor(indexes[c])) for c in cuts if c.size]


@pytest.mark.parametrize("name", CLASSES)
@FEW
@given(data=st.data())
def test_classes_are_torchmetrics_float32_bit_for_bit(name, data):
    fed = data.draw(batches(name))
    kwargs = {"empty_target_action": data.draw(st.sampled_from(["neg", "pos", "skip"]))}
    if name in ("RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"):
        kwargs["max_k"] = data.draw(st.sampled_from([None, 1, 3, 10]))
    elif name != "RetrievalRPrecision":
        kwargs["top_k"] = data.draw(st.sampled_from([None, 1, 2, 4, 10, 50]))
    if name == "RetrievalAUROC":
        kwargs["max_fpr"] = data.draw(st.sampled_from([None, 0.2, 0.5]))
    if name == "RetrievalNormalizedDCG" and data.draw(st.booleans()):
        scale = data.draw(st.sampled_from([1.0, 7.0]))
        fed = [(p, torch.rand(t.shape, generator=torch.Generator().manual_seed(len(t))) * scale, i)
               for p, t, i in fed]  # fractional float targets
    if data.draw(st.booleans()):  # entries dropped by ignore_index (never a whole batch)
        kwargs["ignore_index"] = -100
        fed = [(p, torch.where((torch.arange(len(t)) % 7 == 3), -100, t) if len(t) > 1 else t, i)
               for p, t, i in fed]
    results = []
    for library in (ref_classes, ours):
        metric = getattr(library, name)(**kwargs)
        for preds, target, indexes in fed:
            metric.update(preds, target, indexes=indexes)
        results.append(metric.compute())
    assert_same(name, *results, kwargs)


def test_the_issues_ndcg_example():
    preds, target = torch.tensor([0.9, 0.1]), torch.tensor([0, 1])
    assert ours.retrieval_normalized_dcg(preds, target).item() == 0.630929708480835
    assert ours.retrieval_normalized_dcg(preds, target, exact=True).item() == 0.6309297680854797
    assert ref_functional.retrieval_normalized_dcg(preds, target).item() == 0.630929708480835


@pytest.mark.parametrize("name", ["retrieval_average_precision", "retrieval_normalized_dcg",
                                  "retrieval_auroc"])
@FEW
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 80), k=st.sampled_from([None, 1, 3, 10]))
def test_exact_is_the_exact_value_rounded_once(name, seed, n, k):
    rng = np.random.default_rng(seed)
    preds, target = tied_preds(rng, n, 1000), target_for(name, rng, n)
    # Input order inside ties is the numpy face's order; it computes in float64.
    got = getattr(ours, name)(preds, target, top_k=k, exact=True, ties="input_order")
    want = getattr(numpy_api, name)(preds.numpy(), target.numpy(), top_k=k)
    assert got.item() == float(np.float32(want))


def test_exact_classes_round_per_query_values_once():
    rng = np.random.default_rng(3)
    indexes = torch.tensor(np.repeat(np.arange(50), 9))
    preds, target = tied_preds(rng, 450, 1000), target_for("dcg", rng, 450)
    for name in ("RetrievalMAP", "RetrievalNormalizedDCG"):
        fast, exact = getattr(ours, name)(), getattr(ours, name)(exact=True)
        for metric in (fast, exact):
            metric.update(preds, (target > 1).long() if name == "RetrievalMAP" else target, indexes)
        assert abs(fast.compute().item() - exact.compute().item()) < 1e-6
        assert exact.exact and not fast.exact


@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_row_reductions_are_torchs_1d_reductions(reduce):
    rng = np.random.default_rng(0)
    lengths = np.array([1, 2, 3, 7, 8, 9, 31, 32, 33, 100, 257, 1000, 4099, 7, 33, 1000,
                        _float32.SPLIT_REDUCTION + 5])
    terms = (rng.random(lengths.sum()) / rng.random(lengths.sum())).astype(np.float32)
    got = _float32.row_reduced(terms, lengths, torch.device("cpu"), reduce)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    want = [getattr(torch.from_numpy(terms[a:b]), reduce)().item() for a, b in zip(offsets, offsets[1:])]
    assert [float(x).hex() for x in got] == [float(x).hex() for x in want]


def test_padding_a_row_would_change_the_bits():
    # Why row_reduced groups queries by length: zeros appended to a row change torch's
    # summation order, so a padded 2-D reduction is not torchmetrics' 1-D sum.
    rng = np.random.default_rng(1)
    differ = 0
    for length in range(2, 200):
        row = torch.from_numpy((rng.random(length) / rng.random(length)).astype(np.float32))
        differ += row.sum().item() != torch.cat([row, torch.zeros(200 - length)]).sum().item()
    assert differ > 10


def test_auroc_float64_road_differs_from_torchmetrics_somewhere():
    # The bit-for-bit tests above can fail: the float64 value rounded once (exact=True)
    # is not torchmetrics' number for a good share of partial AUCs.
    rng = np.random.default_rng(1)
    differ = 0
    for _ in range(100):
        preds = torch.tensor(rng.standard_normal(300) * 10, dtype=torch.float32)
        target = torch.tensor(rng.integers(0, 2, 300))
        want = ref_functional.retrieval_auroc(preds, target, max_fpr=0.9)
        differ += want.item() != ours.retrieval_auroc(preds, target, max_fpr=0.9, exact=True).item()
        assert want.item() == ours.retrieval_auroc(preds, target, max_fpr=0.9).item()
    assert differ > 5


def test_row_mapped_gives_each_rows_1d_call_bits():
    # torch.sigmoid's vectorised and scalar loops differ in the last bit, so one call over
    # the concatenated rows would not give each row's bits; the padded rows do.
    rng = np.random.default_rng(2)
    lengths = np.array([1, 7, 31, 32, 33, 65, 100, 33, 1000, 3])
    values = (rng.standard_normal(lengths.sum()) * 10).astype(np.float32)
    got = _float32.row_mapped(torch.sigmoid, values, lengths, torch.device("cpu"))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    want = np.concatenate([torch.sigmoid(torch.from_numpy(values[a:b])).numpy()
                           for a, b in zip(offsets, offsets[1:])])
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    many = (rng.standard_normal(100_000) * 10).astype(np.float32)
    one_call = torch.sigmoid(torch.from_numpy(many)).numpy()
    rows = _float32.row_mapped(torch.sigmoid, many, np.full(100_000, 1), torch.device("cpu"))
    if not (one_call != rows).any():
        pytest.skip("this CPU's vectorised and scalar sigmoid loops agree")
