"""Recorded goldens: inputs and outputs captured once from the real libraries
(torchmetrics 1.9.0, pytorch-metric-learning 2.9.0, open-metric-learning 4.0.0,
pytorchltr 0.2.1, tensorflow-similarity 0.17.1; recorder: tests/golden_libs/record.py),
replayed through irmetrics.compat everywhere, without torch or TensorFlow."""

from __future__ import annotations

import glob
import importlib
import json
import math
import os

import numpy as np
import pytest

from irmetrics.exceptions import IrMetricsError

from tests.golden_libs.record import CASES as CASE_GENERATORS
from tests.golden_libs.record import COMPARISONS, make_converter, original, plain

#: The recorder's input decoding, with numpy arrays where it builds tensors.
convert = make_converter(lambda array: array)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDENS = os.path.join(ROOT, "fixtures", "golden_libs")
#: torchmetrics: its numpy face (the torch face, with torch installed, is checked against
#: torchmetrics itself in tests/compat/test_torchmetrics_metrics.py).
MODULES = {"torchmetrics": "torchmetrics.numpy_api", "pml": "pml", "oml": "oml",
           "pytorchltr": "pytorchltr", "tfsim": "tfsim"}
#: The originals compute in float32.
TOLERANCE = 2e-6


def load_cases():
    out = []
    for path in sorted(glob.glob(os.path.join(GOLDENS, "*.json"))):
        with open(path) as fh:
            golden = json.load(fh)
        for i, c in enumerate(golden["cases"]):
            out.append(pytest.param(golden["library"], c,
                                    id=f"{golden['library']}-{i}-{c['name']}"))
    return out


CASES = load_cases()


def test_goldens_cover_every_library_and_stay_small():
    files = glob.glob(os.path.join(GOLDENS, "*.json"))
    assert {json.load(open(p))["library"] for p in files} == set(MODULES)
    assert sum(os.path.getsize(p) for p in files) < 2 * 2**20
    assert len(CASES) >= 250


def assert_close(got, want, where="output"):
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for key in want:
            assert_close(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got), (where, got, want)
    else:
        assert got == pytest.approx(want, rel=TOLERANCE, abs=TOLERANCE), (where, got, want)


def replay(library, c):
    module = importlib.import_module(f"irmetrics.compat.{MODULES[library]}")
    target = getattr(module, c["name"])
    args = {k: convert(v) for k, v in c["args"].items()}
    init = dict(c["init"])
    if "r" in init and isinstance(init["r"], dict):  # JSON keys are strings
        init["r"] = {int(k): v for k, v in init["r"].items()}
    if "label_comparison_fn" in init:
        init["label_comparison_fn"] = COMPARISONS[init["label_comparison_fn"]]
    if c["kind"] == "function":
        return target(**args)
    if c["kind"] == "compute":
        return target(**init).compute(**args)
    if c["kind"] == "accuracy":
        return target(**init).get_accuracy(**args)
    metric = target(**init)  # update_compute
    for batch in c["batches"]:
        metric.update(**{k: convert(v) for k, v in batch.items()})
    return metric.compute()


@pytest.mark.parametrize("library, c", CASES)
def test_replay_golden(library, c):
    if "error" in c:
        with pytest.raises(IrMetricsError):
            replay(library, c)
        return
    assert_close(plain(replay(library, c)), c["output"])


@pytest.mark.parametrize("library", sorted(MODULES))
def test_live_against_the_original_when_installed(library):
    """Optional: fresh seeded cases through the real library, when it is installed."""
    try:
        _, run = original(library)
    except ImportError as exc:
        pytest.skip(f"{library} is not installed: {exc}")
    for seed in range(3):
        for c in CASE_GENERATORS[library](np.random.default_rng(1000 + seed)):
            try:
                want = plain(run(c))
            except Exception:  # noqa: BLE001 - the original refuses: irmetrics must too
                with pytest.raises(IrMetricsError):
                    replay(library, c)
                continue
            assert_close(plain(replay(library, c)), want)
