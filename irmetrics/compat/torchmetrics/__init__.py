"""Drop-in for torchmetrics 1.9.0's retrieval metrics, computed by irmetrics.

Two faces, each imported by its own name, so that a name never changes type or number
with what is installed:

* **this package's names** (``RetrievalMAP`` ... ``retrieval_auroc``) are torchmetrics'
  face, and only it (:mod:`irmetrics.compat.torchmetrics.metrics`): real
  :class:`torchmetrics.Metric` objects and functions of tensors, with torchmetrics' own
  numbers, ties and float32 results included; ``.to(device)``, ``clone``,
  ``state_dict``, ``MetricCollection``, Lightning logging and DDP synchronisation work as
  in torchmetrics. They need torch and torchmetrics
  (``pip install "irmetrics-exact[torchmetrics]"``); without them, reading a name raises
  ImportError saying so;
* **the numpy face**, floats in and out, exact float64 values, without torch:
  ``from irmetrics.compat.torchmetrics.numpy_api import RetrievalMAP``
  (:mod:`irmetrics.compat.torchmetrics.numpy_api`).

Importing :mod:`irmetrics` never imports this package, nor torch; importing this package
imports torch only when one of its names is read.
"""

from __future__ import annotations

__all__ = [
    "RetrievalAUROC", "RetrievalFallOut", "RetrievalHitRate", "RetrievalMAP", "RetrievalMRR",
    "RetrievalNormalizedDCG", "RetrievalPrecision", "RetrievalPrecisionRecallCurve",
    "RetrievalRPrecision", "RetrievalRecall", "RetrievalRecallAtFixedPrecision",
    "retrieval_auroc", "retrieval_average_precision", "retrieval_fall_out",
    "retrieval_hit_rate", "retrieval_normalized_dcg", "retrieval_precision",
    "retrieval_precision_recall_curve", "retrieval_r_precision", "retrieval_recall",
    "retrieval_reciprocal_rank",
]

_HINT = ("irmetrics.compat.torchmetrics.{name} is torchmetrics' face (Metrics, tensors in"
         " and out) and needs torch and torchmetrics: pip install"
         " irmetrics-exact[torchmetrics]. The numpy face, floats in and out, is"
         " irmetrics.compat.torchmetrics.numpy_api.{name}.")


def __getattr__(name: str):
    """torchmetrics' face, imported when one of its names is first read."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from . import metrics
    except ImportError as err:
        raise ImportError(_HINT.format(name=name), name="torchmetrics") from err
    value = getattr(metrics, name)
    globals()[name] = value  # read once
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "metrics", "numpy_api"])
