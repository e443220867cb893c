"""Heavy dependencies imported on first use, so that light roads stay light.

``import polars`` costs 0.1-0.2 s of one core (more than numpy, which every road needs,
and more than ir_measures' whole first call on 50 queries), and the roads that never
touch a table -- ``import irmetrics``, the pytrec_eval and ir_measures drop-ins on dicts
-- should not pay it. A module that uses polars writes::

    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        import polars as pl
    else:
        from irmetrics.lazy import polars as pl

and then ``pl.DataFrame(...)`` as usual: the first attribute read imports polars (type
checkers see the real module). A question such as "is this object a polars frame?" asks
:func:`loaded` first: no object is a polars frame while polars has not been imported, so
the answer costs no import.

>>> from irmetrics.lazy import LazyModule
>>> json = LazyModule("json")
>>> json.dumps([1])
'[1]'
>>> loaded("json")
True
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

__all__ = ["LazyModule", "loaded", "polars"]


class LazyModule:
    """A module imported on the first read of one of its attributes.

    Parameters
    ----------
    name : str
        The module's import name (``"polars"``).

    Examples
    --------
    >>> math = LazyModule("math")
    >>> math.sqrt(4.0)
    2.0
    """

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        # Only called for what the slots do not hold: the module's own attributes, read
        # from it each time (not copied), so that a patched attribute is seen.
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r} ({state})>"


def loaded(name: str) -> bool:
    """Whether module ``name`` has been imported (by anyone): an object can be one of its
    types only then.

    Examples
    --------
    >>> loaded("sys")
    True
    """
    return name in sys.modules


#: polars, imported on first use (the file, frame and Parquet roads; never the dicts').
polars = LazyModule("polars")
