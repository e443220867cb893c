"""Flat ``preds`` / ``target`` / ``indexes`` arrays (torchmetrics retrieval style)."""

from __future__ import annotations

import numpy as np

from .. import device
from ..checks import check_choice
from ..engine import segments as sg
from ..exceptions import ShapeError
from .arrays import as_array, check_integral, check_labels, check_numeric
from ._ids import IdVocab
from ._lists import SparseJudgments, label_histogram, make_pair


def group_ordinals(groups: np.ndarray, n_groups: int) -> np.ndarray:
    """0-based position of every element among the elements of its group, in input order."""
    order = np.argsort(groups, kind="stable")
    offsets = np.concatenate(([0], np.cumsum(np.bincount(groups, minlength=n_groups))))
    ordinal = np.empty(len(groups), dtype=np.int64)
    ordinal[order] = sg.ranks(offsets) - 1
    return ordinal


def from_flat(preds, target, indexes, *, ignore_index=None, relevance_type="int",
              backend="auto"):
    """Qrels and run from flat predictions grouped by query index (torchmetrics style).

    Element ``t`` is a document of query ``q{indexes[t]}``; within a query, documents
    are numbered in input order: ``d0, d1, ...``. So ``from_flat(S.ravel(), R.ravel(),
    np.repeat(np.arange(B), L))`` is ``from_matrix(S, R)``. Every element is judged
    (its target goes into the qrels, zeros included) and retrieved with its score.

    Parameters
    ----------
    preds : array_like of float, any shape
        Finite scores, higher is better. Flattened.
    target : array_like of int, same shape as ``preds``
        Graded labels (bool, integers or integral floats).
    indexes : array_like of int, same shape as ``preds``
        Query index of every element; need not be sorted or contiguous.
    ignore_index : int, optional
        Drop every element whose target equals this value before anything else (a
        query whose elements are all dropped disappears).
    relevance_type : {"int", "float"}, default "int"
        ``"float"`` accepts finite real targets (graded judgments such as 0.5), used
        as gains by nDCG (see ``relevance="float"`` of :func:`irmetrics.evaluate`).
    backend : {"auto", "numpy", "torch"}, default "auto"
        ``preds`` on a device (torch CUDA/MPS tensors, CuPy arrays) are grouped and
        ordered there (``"torch"``: whatever the inputs, CPU tensors included), by
        stable sorts that keep trec_eval's order of equal scores; every element is in
        the run, so all cross, already in their final order (the host does not sort
        them again). The same pair as numpy's road, bit for bit.

    Returns
    -------
    (Qrels, Run)

    Notes
    -----
    Ties: score descending, then doc id descending in byte order (trec_eval), e.g.
    ``d9`` ranks before ``d10``; not torch's arbitrary order. torchmetrics measure
    options (``empty_target_action``, ``top_k``, its ``pred <= 0`` filter) are measure
    semantics, not adapter input: a query whose targets are all 0 is evaluated by
    trec_eval's rules (e.g. map 0).

    Examples
    --------
    >>> import irmetrics as irm
    >>> from irmetrics.adapters import from_flat
    >>> qrels, run = from_flat([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
    ...                        [0, 0, 1, 0, 1, 0, 1], [0, 0, 0, 1, 1, 1, 1])
    >>> irm.evaluate(qrels, run, ["P.2"]).to_dict()
    {'q0': {'P_2': 0.5}, 'q1': {'P_2': 0.5}}
    """
    check_choice("backend", backend, device.BACKENDS)
    if device.wants_device(backend, preds, target, indexes):
        return _device_flat(preds, target, indexes, ignore_index, relevance_type)
    preds, target, indexes = _flat_arrays(as_array(preds, "preds"), as_array(target, "target"),
                                          as_array(indexes, "indexes"), ignore_index)
    scores = check_numeric(preds, "preds", finite=True)
    labels = check_labels(target, "target", relevance_type)
    numbers, query = np.unique(check_integral(indexes, "indexes"), return_inverse=True)
    query = query.reshape(-1).astype(np.int64, copy=False)
    doc = group_ordinals(query, len(numbers))
    n_docs = int(doc.max()) + 1 if len(doc) else 0
    rel_hist, rel_levels, has_qrels, positive_total = label_histogram(query, labels, len(numbers))
    judgments = SparseJudgments(
        IdVocab.numbered("q", numbers), IdVocab.numbered("d", np.arange(n_docs)),
        query, doc, scores, labels, rel_hist, rel_levels, has_qrels, positive_total,
        lambda: (query, doc, labels),
    )
    return make_pair(judgments)


def _flat_arrays(preds, target, indexes, ignore_index):
    """The three arrays flattened, of one shape, without the ignored elements (numpy
    arrays or tensors alike)."""
    for name, array in (("target", target), ("indexes", indexes)):
        if tuple(array.shape) != tuple(preds.shape):
            raise ShapeError(f"`{name}` must have the shape of `preds` {tuple(preds.shape)}; "
                             f"got {tuple(array.shape)}.")
    preds, target, indexes = preds.reshape(-1), target.reshape(-1), indexes.reshape(-1)
    if ignore_index is not None:
        kept = target != ignore_index
        preds, target, indexes = preds[kept], target[kept], indexes[kept]
    return preds, target, indexes


def _device_flat(preds, target, indexes, ignore_index, relevance_type):
    """:func:`from_flat` on the device road: the same pair, ordered on the device."""
    torch = device.import_torch()
    preds = device.as_tensor(preds, "preds")
    target = device.as_tensor(target, "target", like=preds, integers=relevance_type == "int")
    indexes = device.as_tensor(indexes, "indexes", like=preds, integers=True)
    preds, target, indexes = _flat_arrays(preds, target, indexes, ignore_index)
    # Where the device finds a bad element, the host's checks name the first one, in the
    # numpy road's order: preds, target, indexes.
    if preds.is_floating_point() and not bool(torch.isfinite(preds).all()):
        check_numeric(device.to_host(preds, "preds"), "preds", finite=True)
    # Integer labels need no check: they are gathered in the final order on the device
    # and cross once. Others are checked on the host in input order (exact messages).
    integral = relevance_type == "int" and target.dtype in (torch.int8, torch.int16, torch.int32,
                                                            torch.int64, torch.uint8)
    labels = None if integral else check_labels(device.to_host(target, "target"), "target",
                                                relevance_type)

    def check_indexes():
        check_integral(device.to_host(indexes, "indexes"), "indexes")

    if indexes.is_floating_point() and not bool(
            ((indexes >= -2.0**63) & (indexes < 2.0**63) & (indexes == torch.round(indexes))).all()):
        check_indexes()
    if indexes.dtype == getattr(torch, "uint64", None):
        indexes = device.wide_integers(torch, indexes, check_indexes)
    if indexes.is_floating_point() or indexes.dtype == torch.bool:
        indexes = indexes.to(torch.int64)
    vocab = {}

    def query_rank(numbers):
        vocab["queries"] = IdVocab.numbered("q", numbers)
        return vocab["queries"].byte_rank

    def doc_rank(n_docs):
        vocab["docs"] = IdVocab.numbered("d", np.arange(n_docs))
        return vocab["docs"].byte_rank

    grouped = device.sort_groups(preds, indexes, group_rank=query_rank,
                                 ordinal_tie_rank=doc_rank, carry=[target] if integral else [])
    query, doc = grouped.codes, grouped.ordinals
    ranked_labels = (grouped.carried[0].astype(np.int64) if integral
                     else labels[grouped.order])
    rel_hist, rel_levels, has_qrels, positive_total = label_histogram(query, ranked_labels,
                                                                      len(grouped.ids))

    def in_input_order():  # read only by callers that want the pair in input order
        back = np.empty(len(query), np.int64)
        back[grouped.order] = np.arange(len(query))
        return query[back], doc[back], ranked_labels[back]

    judgments = SparseJudgments(
        vocab["queries"], vocab["docs"], query, doc, grouped.values, ranked_labels, rel_hist,
        rel_levels, has_qrels, positive_total, in_input_order,
        presorted=True, input_position=grouped.order)
    return make_pair(judgments)
