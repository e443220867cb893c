"""benchmarks/check_device.py compares the torch face with torchmetrics by exact bits
(issue 34): it passes on CPU tensors here and reports a planted one-ulp difference."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("torchmetrics")

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location("check_device", ROOT / "benchmarks" / "check_device.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_device_finds_every_bit_equal_on_cpu(capsys):
    assert load_script().main(["--device", "cpu", "--cases", "torchmetrics,fractional",
                               "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "DIFFERS" not in out and "torchmetrics: " in out and "fractional: " in out


def test_check_device_reports_a_one_ulp_difference(monkeypatch, capsys):
    from irmetrics.compat.torchmetrics import _float32

    real = _float32.auroc

    def one_ulp_up(*args, **kwargs):
        values = real(*args, **kwargs)
        return np.where(values > 0, np.nextafter(values, np.float32(2)), values)

    monkeypatch.setattr(_float32, "auroc", one_ulp_up)
    assert load_script().main(["--device", "cpu", "--cases", "torchmetrics", "--rounds", "2"]) == 1
    out = capsys.readouterr().out
    assert "DIFFERS [torchmetrics] RetrievalAUROC" in out or "DIFFERS [torchmetrics] retrieval_auroc" in out
