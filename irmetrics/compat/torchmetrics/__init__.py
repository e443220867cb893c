"""Drop-in for torchmetrics 1.9.0's retrieval metrics, computed by irmetrics.

Two faces, one set of names (``RetrievalMAP`` ... ``retrieval_auroc``):

* with **torch and torchmetrics installed** (``pip install "irmetrics-exact[torchmetrics]"``)
  the classes are real :class:`torchmetrics.Metric` objects and the functions take
  and return tensors (:mod:`irmetrics.compat.torchmetrics.metrics`): ``.to(device)``,
  ``clone``, ``state_dict``, ``MetricCollection``, Lightning logging and DDP
  synchronisation work as in torchmetrics, and the numbers are torchmetrics' own,
  ties included;
* **without them** the same names are a numpy API, floats in and floats out
  (:mod:`irmetrics.compat.torchmetrics.numpy_api`, always importable as such).

``BACKEND`` says which face was loaded (``"torch"`` or ``"numpy"``). Importing
:mod:`irmetrics` never imports this package, nor torch.
"""

from __future__ import annotations

from importlib.util import find_spec

__all__ = [
    "BACKEND",
    "RetrievalAUROC", "RetrievalFallOut", "RetrievalHitRate", "RetrievalMAP", "RetrievalMRR",
    "RetrievalNormalizedDCG", "RetrievalPrecision", "RetrievalPrecisionRecallCurve",
    "RetrievalRPrecision", "RetrievalRecall", "RetrievalRecallAtFixedPrecision",
    "retrieval_auroc", "retrieval_average_precision", "retrieval_fall_out",
    "retrieval_hit_rate", "retrieval_normalized_dcg", "retrieval_precision",
    "retrieval_precision_recall_curve", "retrieval_r_precision", "retrieval_recall",
    "retrieval_reciprocal_rank",
]

if find_spec("torch") is not None and find_spec("torchmetrics") is not None:
    BACKEND = "torch"
    from .metrics import (
        RetrievalAUROC,
        RetrievalFallOut,
        RetrievalHitRate,
        RetrievalMAP,
        RetrievalMRR,
        RetrievalNormalizedDCG,
        RetrievalPrecision,
        RetrievalPrecisionRecallCurve,
        RetrievalRecall,
        RetrievalRecallAtFixedPrecision,
        RetrievalRPrecision,
        retrieval_auroc,
        retrieval_average_precision,
        retrieval_fall_out,
        retrieval_hit_rate,
        retrieval_normalized_dcg,
        retrieval_precision,
        retrieval_precision_recall_curve,
        retrieval_r_precision,
        retrieval_recall,
        retrieval_reciprocal_rank,
    )
else:
    BACKEND = "numpy"
    # The numpy face: the same names, floats in and floats out (other types, by design).
    from .numpy_api import (  # type: ignore[assignment]
        RetrievalAUROC,
        RetrievalFallOut,
        RetrievalHitRate,
        RetrievalMAP,
        RetrievalMRR,
        RetrievalNormalizedDCG,
        RetrievalPrecision,
        RetrievalPrecisionRecallCurve,
        RetrievalRecall,
        RetrievalRecallAtFixedPrecision,
        RetrievalRPrecision,
        retrieval_auroc,
        retrieval_average_precision,
        retrieval_fall_out,
        retrieval_hit_rate,
        retrieval_normalized_dcg,
        retrieval_precision,
        retrieval_precision_recall_curve,
        retrieval_r_precision,
        retrieval_recall,
        retrieval_reciprocal_rank,
    )
