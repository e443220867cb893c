"""The ordering key every road ranks by: score, tie rule, semantics, in one place.

trec_eval ranks the documents of a query by score descending, then by doc id in byte
(strcmp) order, descending (ascending for its preference formats). Every road of
irmetrics takes its key from this module: the table road (:mod:`irmetrics.engine.pack`),
the bounded-memory file road (:mod:`irmetrics.engine.stream`), the dict road
(:mod:`irmetrics.engine.dicts`), the array adapters (``irmetrics.adapters``) and the
device (:mod:`irmetrics.device.order`). Each road finds the order its own fast way;
``tests/engine/test_ordering_roads.py`` runs them all on the same inputs, for every tie policy
and semantics, against :func:`rank_order`, the rule written as one sort.

* **Score** (:func:`ordering_scores`): as read (``semantics="trec_eval"``, trec_eval
  10), or rounded to float32 (``"pytrec_eval"``: trec_eval 9.0.8 inside
  pytrec-eval-terrier reads scores into a C ``float``; :func:`float32_scores`).
  ``-0.0`` equals ``0.0``.
* **Tie rule** (:func:`doc_id_tiebreak`): doc id for ``ties="trec_eval"`` and
  ``"expected"`` (whose measures never read the order inside a tie), the input's own
  order for ``"input_order"``.
* **Integer keys** whose ascending order is score descending, for roads that sort
  keys rather than floats: :func:`descending_bits` / :func:`descending_keys` (float32)
  and :func:`descending64_keys` (float64).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

__all__ = ["SEMANTICS", "TIES", "ordering_scores", "float32_scores", "doc_id_tiebreak",
           "rank_order", "break_ties_by_doc_id", "descending_bits", "descending_keys",
           "descending64_keys", "scores_from_descending_bits"]

#: Evaluation semantics: what a score is before it is compared.
SEMANTICS = ("trec_eval", "pytrec_eval")
#: Tie policies, the order of entries with equal ordering scores: trec_eval's doc id
#: descending, the run's own order, or the expectation over all orders
#: (:mod:`irmetrics.engine.ties`).
TIES = ("trec_eval", "input_order", "expected")


def float32_scores(scores):
    """Scores rounded to float32 as C's ``double`` → ``float`` conversion does
    (round to nearest; beyond float32's range a score becomes ``+-inf``).

    A numpy array (or anything numpy reads) gives a float32 array (the array itself if
    it is one already); a torch tensor (anything with ``.float()`` that is not a numpy
    array) stays a tensor on its device.

    >>> float32_scores(np.array([0.1, 1e39, -1e39])).tolist()
    [0.10000000149011612, inf, -inf]
    """
    if not isinstance(scores, np.ndarray) and hasattr(scores, "float"):
        return scores.float()  # torch: float32, on the tensor's device
    with np.errstate(over="ignore"):
        return np.asarray(scores).astype(np.float32, copy=False)


def ordering_scores(scores: np.ndarray, semantics: str) -> np.ndarray:
    """The float64 scores trec_eval orders by: as read (trec_eval 10), or their float32
    rounding (``semantics="pytrec_eval"``, trec_eval 9.0.8 in pytrec-eval-terrier).

    >>> ordering_scores(np.array([1.0, 1.0 + 2**-30]), "pytrec_eval").tolist()
    [1.0, 1.0]
    """
    if semantics != "pytrec_eval":
        return scores
    return float32_scores(scores).astype(np.float64)


def doc_id_tiebreak(ties: str) -> bool:
    """Whether equal ordering scores are ordered by doc id (``ties="trec_eval"`` and
    ``"expected"``) rather than kept in the input's order (``"input_order"``).

    >>> doc_id_tiebreak("trec_eval"), doc_id_tiebreak("input_order")
    (True, False)
    """
    return ties != "input_order"


def rank_order(query_rank: np.ndarray, scores: np.ndarray, tie_key: np.ndarray | None = None,
               *, semantics: str = "trec_eval") -> np.ndarray:
    """The rule itself: the permutation putting entries in rank order.

    Order: ``query_rank`` ascending, then ordering score descending (``-0.0`` equal to
    ``0.0``), then ``tie_key`` ascending (for trec_eval's rule, minus each doc id's
    byte rank), then input position. Formally, entry ``i`` precedes ``j`` when
    ``(q_i, -s_i, t_i, i) < (q_j, -s_j, t_j, j)`` lexicographically, with
    ``s = ordering_scores(scores, semantics)``.

    >>> rank_order(np.array([0, 0, 0]), np.array([1.0, 2.0, 1.0]), np.array([5, 0, 3]))
    array([1, 2, 0])
    """
    keys = [-ordering_scores(np.asarray(scores, dtype=np.float64), semantics) + 0.0,
            np.asarray(query_rank)]
    if tie_key is not None:
        keys.insert(0, np.asarray(tie_key))
    return np.lexsort(keys)


def break_ties_by_doc_id(order, q, s, doc_col: pl.Series,
                         descending=True) -> tuple[np.ndarray, np.ndarray]:
    """Within runs of equal (query, score) of entries already in (query, score) order,
    order entries by doc id (bytes), descending unless ``descending`` is False.

    ``order``: run rows in rank order; ``q``, ``s``: their query codes and ordering
    scores; ``doc_col``: the run's doc ids by row. Most tie groups are pairs: they need
    one vectorised string comparison each. Larger groups are ordered together by one
    sort on (group, doc id).

    Returns ``(order, s)`` reordered alike (the inputs are not modified): each row keeps
    its own score. Equal scores differ in their bytes only for ``-0.0`` tied with
    ``0.0``, whose sign would otherwise pass to the other document.

    >>> order, s = break_ties_by_doc_id(np.arange(3), np.zeros(3), np.array([1.0, -0.0, 0.0]),
    ...                                 pl.Series(["a", "c", "b"]))
    >>> order.tolist(), s.tolist()
    ([0, 1, 2], [1.0, -0.0, 0.0])
    >>> order, s = break_ties_by_doc_id(np.arange(3), np.zeros(3), np.array([0.0, -0.0, 0.0]),
    ...                                 pl.Series(["a", "c", "b"]))
    >>> order.tolist(), s.tolist()
    ([1, 2, 0], [-0.0, 0.0, 0.0])
    """
    if len(order) < 2:
        return order, s
    tied = (q[1:] == q[:-1]) & (s[1:] == s[:-1])  # entry i+1 ties with entry i
    if not tied.any():
        return order, s
    first = np.flatnonzero(tied & ~np.concatenate(([False], tied[:-1])))
    last = np.flatnonzero(tied & ~np.concatenate((tied[1:], [False]))) + 1
    size = last - first + 1
    order = order.copy()
    s = s.copy()

    pairs = first[size == 2]
    upper, lower = order[pairs], order[pairs + 1]
    above, below = doc_col.gather(upper), doc_col.gather(lower)
    swap = pairs[np.flatnonzero(((above < below) if descending else (above > below)).to_numpy())]
    order[swap], order[swap + 1] = order[swap + 1], order[swap]
    s[swap], s[swap + 1] = s[swap + 1], s[swap]

    big = size > 2
    if big.any():
        g_first, g_size = first[big], size[big]
        slots = np.repeat(g_first - np.concatenate(([0], np.cumsum(g_size)[:-1])), g_size) \
            + np.arange(int(g_size.sum()))
        group = np.repeat(np.arange(len(g_size)), g_size)
        ties = pl.DataFrame({"group": group, "doc": doc_col.gather(order[slots]),
                             "slot": slots})
        resorted = ties.sort(["group", "doc"], descending=[False, descending])["slot"].to_numpy()
        order[slots] = order[resorted]
        s[slots] = s[resorted]
    return order, s


def descending_keys(scores: np.ndarray) -> np.ndarray:
    """uint64 keys of float32 scores (any shape) whose ascending order is score descending.

    :func:`descending_bits` widened to uint64, so that a caller can pack a tie-break
    into the bits above them. Values fit in the low 32 bits.

    >>> descending_keys(np.array([1.0, -0.0, 0.0, -2.0], dtype=np.float32)).argsort(kind="stable")
    array([0, 1, 2, 3])
    """
    return descending_bits(scores).astype(np.uint64)


def descending_bits(scores: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """uint32 keys of float32 scores (any shape) whose ascending order is score descending.

    IEEE-754 bits ``b`` of a float32 order like the floats once negatives have all
    bits flipped and positives the sign bit set; complementing that reverses the
    order: ``b ^ 0x7FFFFFFF`` for positives, ``b`` for negatives. ``-0.0`` is first
    folded into ``+0.0`` because trec_eval compares them equal.
    :func:`scores_from_descending_bits` inverts the map. ``out`` (uint32, the
    scores' shape, any strides) receives the keys, saving a copy.

    >>> descending_bits(np.array([1.0, 0.0, -2.0], dtype=np.float32))
    array([1082130431, 2147483647, 3221225472], dtype=uint32)
    """
    bits = (np.asarray(scores, dtype=np.float32) + np.float32(0.0)).view(np.int32)
    flip = bits >> 31  # -1 for negatives, 0 for positives (arithmetic shift)
    np.invert(flip, out=flip)
    flip &= 0x7FFFFFFF
    if out is None:
        out = flip
    np.bitwise_xor(flip, bits, out=out.view(np.int32))
    return out.view(np.uint32)


def scores_from_descending_bits(keys: np.ndarray) -> np.ndarray:
    """The float32 scores whose :func:`descending_bits` are ``keys`` (uint32, any shape
    or strides); ``-0.0`` comes back as ``+0.0``.

    A key below ``0x80000000`` is a non-negative score's ``b ^ 0x7FFFFFFF``; any other
    is a negative score's own bits.

    >>> scores_from_descending_bits(descending_bits(np.array([1.5, -0.0, -2.0], dtype=np.float32)))
    array([ 1.5,  0. , -2. ], dtype=float32)
    """
    keys = np.asarray(keys, dtype=np.uint32)
    bits = keys ^ np.uint32(0x7FFFFFFF)
    np.copyto(bits, keys, where=keys >= np.uint32(0x80000000))
    return bits.view(np.float32)


def descending64_keys(values: np.ndarray) -> np.ndarray:
    """uint64 keys ascending as the float64 ``values`` descend (``-0.0`` equal to ``0.0``).

    The float32 map of :func:`descending_bits` on 64 bits.

    >>> descending64_keys(np.array([2.0, -0.0, 0.0, -1.0])).argsort(kind="stable").tolist()
    [0, 1, 2, 3]
    """
    bits = (np.asarray(values, dtype=np.float64) + 0.0).view(np.uint64)
    sign = np.uint64(1 << 63)
    ascending = np.where(bits >= sign, ~bits, bits | sign)
    return ~ascending
