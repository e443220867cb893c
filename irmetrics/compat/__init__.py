"""Drop-in replacements for other libraries' evaluation APIs, computed by irmetrics.

Each module mirrors one library's public signatures, takes numpy arrays (or any
object with ``__array__``, e.g. CPU tensors) and returns numpy arrays or Python
numbers; none imports torch or TensorFlow, except :mod:`.torchmetrics`, whose
classes are real torchmetrics Metrics (tensors in and out; the numpy API is
:mod:`.torchmetrics.numpy_api`).

:func:`install` puts the pytrec_eval and ir_measures drop-ins under those libraries'
own names, so that other people's code (MTEB, BEIR, PyTerrier) computes with irmetrics
unchanged (:mod:`.switch`; also ``import irmetrics.compat.auto`` and
``python -m irmetrics.compat.run``).
"""

from .switch import install, installed, uninstall

__all__ = ["install", "installed", "uninstall"]
