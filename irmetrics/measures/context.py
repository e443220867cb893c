"""What a kernel receives: the packed rankings plus the request's options."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..engine.ranked import RankedLists, View


@dataclass
class Context:
    """Kernel input for one request group.

    ``view`` is the :class:`~irmetrics.engine.ranked.View` at the request's relevance
    level (a friendly name such as ``P(rel=2)@5`` overrides the evaluation's level).
    ``options`` holds the request's declared keyword options (``Compat(p=0.8)``).
    """

    lists: RankedLists
    relevance_level: int = 1
    judged_only: bool = False
    semantics: str = "trec_eval"
    num_docs_in_coll: int = 0
    options: dict = field(default_factory=dict)

    @cached_property
    def view(self) -> View:
        return self.lists.view(self.relevance_level, self.judged_only)

    @property
    def n_queries(self) -> int:
        return self.lists.n_queries


def safe_div(num, den) -> np.ndarray:
    """``num / den`` where ``den > 0``, else 0 (trec_eval's "leave the value at 0")."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    with np.errstate(invalid="ignore"):  # inf / inf (gains of huge labels) is NaN, quietly
        np.divide(num, den, out=out, where=den > 0)
    return out


def columns(*cols) -> np.ndarray:
    """Stack per-query vectors into the (Q, n_outputs) kernel result."""
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in cols])
