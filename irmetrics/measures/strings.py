"""String-valued measures: relstring."""

from __future__ import annotations

import numpy as np

from .params import DoubleParams
from .registry import NONE, RESET_UNPARAMETERISED, STRING, measure

#: Character of each relevance code (docs/reference/trec_eval.md §3.3): index = code + 2.
_CODE_CHARS = np.frombuffer(b".-0123456789", dtype=np.uint8)
_ABOVE_NINE = ord(">")


@measure("relstring", order=13, params=DoubleParams((10.0,)), printed=STRING, summary=NONE,
         groups="T", complete_reset=RESET_UNPARAMETERISED)
def relevance_string(ctx, params):
    """The relevance codes of the top ``length`` documents as a string (default 10).

    One character per document in rank order: the label ``0``-``9``, ``>`` above 9,
    ``-`` not in the qrels, ``.`` in the qrels with a negative label (unjudged).
    ``length`` is the (first) parameter truncated to an integer; zero or negative
    gives ``''``. Per query only (no summary); the kernel returns an object array of
    str. ``complete=True`` gives ``''`` on placeholder queries for the
    unparameterised name only.

    Examples
    --------
    >>> import irmetrics as irm
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 12}}
    >>> run = {"q": {"a": 4.0, "x": 3.0, "b": 2.0, "c": 1.0}}
    >>> irm.evaluate(qrels, run, ["relstring"]).to_dict()["q"]["relstring"]
    '1-0>'
    """
    v = ctx.view
    length = max(int(np.trunc(params[0])) if np.isfinite(params[0]) else 0, 0)
    width = min(length, int(v.num_ret.max(initial=0)))
    out = np.empty((v.n_queries, 1), dtype=object)
    if width == 0:
        out[:, 0] = ""
        return out
    keep = v.rank <= width
    code = v.code[keep]
    chars = np.where(code > 9, _ABOVE_NINE, _CODE_CHARS[np.clip(code, -2, 9) + 2])
    # One fixed-width byte row per query; NUL padding is dropped by the 'S' dtype.
    block = np.zeros((v.n_queries, width), dtype=np.uint8)
    block[v.seg[keep], v.rank[keep] - 1] = chars
    out[:, 0] = block.view(f"S{width}").ravel().astype(str)
    return out
