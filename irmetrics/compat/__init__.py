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

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .switch import install, installed, uninstall

__all__ = ["install", "installed", "uninstall"]


def __getattr__(name: str):
    # The switch on first use (PEP 562): its import machinery (importlib.abc, about 20 ms)
    # is not paid by a script that imports one drop-in.
    if name in __all__:
        from . import switch

        return getattr(switch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
