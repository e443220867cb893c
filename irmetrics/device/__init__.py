"""Device arrays (torch on CUDA or MPS, CuPy) in, trec_eval-exact numbers out.

The device does what it is fast at: matrix products, sorts and top-k, in blocks of
bounded memory. Exactness never depends on it: candidates are kept with a proven
margin (every item that could be among the first k, the tie group at the cut
included) and measured in float64 with numpy's own operations in numpy's order
(:mod:`irmetrics.device.exact`, on the device where its float64 is IEEE, else on the
host), then ordered in trec_eval's order. Only ``O(Q x k)`` values cross. Nothing here imports torch until a tensor (or ``backend="torch"``) is
given; ``import irmetrics`` never does.

* :func:`search`: exact k-nearest neighbours (what :func:`irmetrics.engine.knn.search`
  returns, bit for bit), behind :func:`irmetrics.adapters.from_embeddings` and the
  metric-learning drop-ins.
* :func:`top_k_rows`: the k best cells of every row of a score matrix, ties at the cut
  included, behind :func:`irmetrics.adapters.from_matrix`.
* :func:`sort_groups`: flat predictions grouped and ordered on the device (group, score
  descending, a tie rank), behind :func:`irmetrics.adapters.from_flat`.
* :func:`numpy_row_sums`, :func:`exact_sqrt`, :func:`unit_rows`: float64 sums, square
  roots and unit rows on a device, equal to numpy's bit for bit.
* :func:`on_device`, :func:`wants_device`, :func:`as_tensor`, :func:`to_host`: where an
  array lives, which road an adapter takes (``backend="auto" | "numpy" | "torch"``), a
  tensor on its device, a copy on the host.

See docs/adapters.md ("Device tensors").
"""

from .arrays import (
    BACKENDS,
    array_library,
    as_tensor,
    import_torch,
    on_device,
    to_host,
    wants_device,
    wide_integers,
)
from .knn import search
from .exact import EXACT_DEVICES, exact_sqrt, numpy_row_sums, unit_rows
from .labels import LabelTable
from .order import GroupOrder, sort_groups, top_k_rows

__all__ = ["BACKENDS", "EXACT_DEVICES", "GroupOrder", "LabelTable", "array_library", "as_tensor", "import_torch",
           "exact_sqrt", "numpy_row_sums", "on_device", "search", "sort_groups", "unit_rows",
           "to_host", "top_k_rows", "wants_device", "wide_integers"]
