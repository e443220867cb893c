"""Adapters: score matrices, flat tensors, neighbour lists and embeddings → (Qrels, Run).

Every adapter returns a ``(Qrels, Run)`` pair that :func:`irmetrics.evaluate` takes
directly (evaluated numerically, without building string tables) and whose
``to_dict()`` gives pytrec_eval's ``{query_id: {doc_id: value}}`` dicts.
See docs/adapters.md.
"""

from .arrays import as_array
from ._lists import to_ranked
from .embeddings import from_embeddings
from .flat import from_flat
from .matrix import from_match_mask, from_matrix
from .neighbours import from_neighbours

__all__ = ["as_array", "from_embeddings", "from_flat", "from_match_mask", "from_matrix",
           "from_neighbours", "to_ranked"]
