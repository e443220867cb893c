"""judge_agreement(): do two sets of judgments agree on the documents both judged?

The two qrels sets are joined on (query, doc); the pairs both judged go to the pure
statistics of :mod:`irmetrics.stats.agreement` (Cohen's kappa, Krippendorff's alpha,
Jaccard, the confusion matrix), per query in one vectorised pass (query codes as groups)
and over all pairs; the pairs only one side judged are the coverage.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import polars as pl

from .. import stats
from ..checks import check_int, parameter_error
from ..containers.trec_text import LATIN1, UTF8, latin1_ids
from ..evaluate import as_qrels
from ..io.columnar import is_columnar
from ..io.external import external_qrels
from ..io.trec import read_utf8_or_latin1

#: Per-query and overall columns of :class:`JudgeAgreement`, in order.
JUDGE_COLUMNS = ("both", "only_a", "only_b", "agreement", "kappa", "kappa_linear",
                 "kappa_quadratic", "alpha", "jaccard")


@dataclass(frozen=True, eq=False)
class JudgeAgreement:
    """Agreement between two judgment sets ``a`` and ``b`` (:func:`judge_agreement`).

    Attributes
    ----------
    names : tuple of str
        The names of ``a`` and ``b``.
    labels : ndarray
        Every label either side uses on the pairs both judged, ascending.
    confusion : ndarray of int, shape (L, L)
        ``confusion[i, j]``: pairs labelled ``labels[i]`` by ``a`` and ``labels[j]`` by
        ``b``.
    overall : dict
        The columns of :data:`JUDGE_COLUMNS` over all pairs: ``both`` (pairs both
        judged), ``only_a``, ``only_b`` (coverage), ``agreement`` (share of pairs with
        the same label), ``kappa``, ``kappa_linear``, ``kappa_quadratic`` (Cohen),
        ``alpha`` (Krippendorff, ordinal), ``jaccard`` (of the relevant sets,
        ``label >= relevance_level``, on the pairs both judged).
    relevance_level : int or float
    """

    names: tuple
    labels: np.ndarray
    confusion: np.ndarray
    overall: dict
    relevance_level: float
    _per_query: pl.DataFrame

    def per_query(self) -> pl.DataFrame:
        """``query_id`` and the columns of :data:`JUDGE_COLUMNS`, one row per query
        either side judged (byte order); statistics of a query without a pair both
        judged are NaN."""
        return self._per_query

    def confusion_frame(self) -> pl.DataFrame:
        """The confusion matrix as a table: a row per label of ``a`` (column ``label``,
        named after ``a``), a column per label of ``b``."""
        a, b = self.names
        head = [_label_text(v) for v in self.labels]
        data: dict[str, list[str] | np.ndarray] = {f"{a} \\ {b}": head}
        for j, label in enumerate(head):
            data[label] = self.confusion[:, j].astype(np.int64)
        return pl.DataFrame(data)


def _label_text(value: float) -> str:
    """A label as written in tables: ``2``, ``0.5``, ``9999999999`` (exact, never
    rounded: two labels never print alike)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def judge_agreement(a, b, *, relevance_level=1, relevance="int", names=("a", "b"),
                    qrels_columns=None) -> JudgeAgreement:
    r"""Agreement between two judgment sets on the (query, doc) pairs both judged.

    Parameters
    ----------
    a, b : Qrels, path, dict or DataFrame
        Two judgment sets (e.g. human and LLM labels of the same pool), as for
        :func:`irmetrics.evaluate`.
    relevance_level : int or float, default 1
        Lowest label counted as relevant, for the Jaccard overlap of the relevant sets.
    relevance : {"int", "float"}, default "int"
        How labels are read (see :class:`irmetrics.Evaluator`).
    names : (str, str)
        Names of ``a`` and ``b`` in tables.
    qrels_columns
        Column names of tables (see :func:`irmetrics.evaluate`).

    Returns
    -------
    JudgeAgreement
        ``overall``, ``per_query()``, ``confusion`` / ``confusion_frame()``.

    Notes
    -----
    On the :math:`N` pairs both judged (labels :math:`a_i`, :math:`b_i`):

    * ``agreement`` :math:`= \#\{a_i = b_i\} / N`;
    * ``kappa``, ``kappa_linear``, ``kappa_quadratic``: Cohen's kappa, unweighted and with
      linear and quadratic weights (:func:`irmetrics.stats.cohen_kappa`; the distance
      between labels is that of their positions among :attr:`JudgeAgreement.labels`);
    * ``alpha``: Krippendorff's alpha, ordinal (:func:`irmetrics.stats.krippendorff_alpha`);
    * ``jaccard`` :math:`= |R_a \cap R_b| / |R_a \cup R_b|` with
      :math:`R = \{i : \mathrm{label}_i \ge \mathrm{relevance\_level}\}`.

    Per query, the label list is the overall one. Every qrels line is a judgment,
    negative labels included (trec_eval reads a negative label as "pooled, not judged";
    drop those lines first if that is what they mean). Statistics that are undefined (no
    pair, or a single label on both sides for kappa and alpha, no relevant pair for
    Jaccard) are NaN.

    Examples
    --------
    >>> import irmetrics as irm
    >>> human = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 0}}
    >>> llm = {"q1": {"d1": 2, "d2": 1, "d3": 1}, "q2": {"d4": 1, "d6": 1}}
    >>> agree = irm.judge_agreement(human, llm, names=("human", "llm"))
    >>> {k: agree.overall[k] for k in ("both", "only_a", "only_b", "agreement")}
    {'both': 4, 'only_a': 1, 'only_b': 1, 'agreement': 0.75}
    >>> round(agree.overall["kappa"], 4), round(agree.overall["jaccard"], 4)
    (0.5556, 0.75)
    >>> agree.per_query().select("query_id", "both", "only_a", "only_b").rows()
    [('q1', 3, 0, 0), ('q2', 1, 1, 1)]
    """
    if not (isinstance(names, (tuple, list)) and len(names) == 2
            and all(isinstance(n, str) and n for n in names) and names[0] != names[1]):
        raise parameter_error("names", "two distinct non-empty names", names)
    if isinstance(relevance_level, (bool, np.bool_)) or not isinstance(
            relevance_level, (int, float, np.integer, np.floating)):
        raise parameter_error("relevance_level", "a number", relevance_level)
    if relevance == "int":
        relevance_level = check_int("relevance_level", relevance_level)
    judged = [_judgments(q, qrels_columns, relevance) for q in (a, b)]
    mixed = judged[0][1] != judged[1][1]
    # One file is not UTF-8: compare ids as bytes, as the evaluation does (the UTF-8
    # side's ids in their Latin-1 view).
    frames = [f.with_columns(latin1_ids(f["query_id"]), latin1_ids(f["doc_id"]))
              if mixed and e != LATIN1 else f for f, e in judged]
    joined = frames[0].join(frames[1], on=["query_id", "doc_id"], how="full", coalesce=True,
                            suffix="_b")
    query_ids, codes = np.unique(joined["query_id"].to_numpy().astype(object).astype(str),
                                 return_inverse=True)
    label_a = joined["relevance"].cast(pl.Float64).to_numpy()
    label_b = joined["relevance_b"].cast(pl.Float64).to_numpy()
    in_a, in_b = ~np.isnan(label_a), ~np.isnan(label_b)
    both = in_a & in_b
    n_queries = len(query_ids)
    per_query = {
        "both": np.bincount(codes, weights=both, minlength=n_queries).astype(np.int64),
        "only_a": np.bincount(codes, weights=in_a & ~in_b, minlength=n_queries).astype(np.int64),
        "only_b": np.bincount(codes, weights=in_b & ~in_a, minlength=n_queries).astype(np.int64),
    }
    la, lb, groups = label_a[both], label_b[both], codes[both]
    # Counts stay ints; the statistics added below are floats.
    overall: dict[str, float] = {k: int(v.sum()) for k, v in per_query.items()}
    if la.size:
        confusion, labels = stats.confusion_matrix(la, lb)
        per_confusion, _ = stats.confusion_matrix(la, lb, labels=labels, groups=groups,
                                                  n_groups=n_queries)
    else:
        labels = np.zeros(0)
        confusion = np.zeros((0, 0), dtype=np.int64)
        per_confusion = np.zeros((n_queries, 0, 0), dtype=np.int64)
    for counts, out in ((per_confusion, per_query), (confusion, overall)):
        values = _statistics(counts, labels)
        out.update(values)
    relevant = (la >= relevance_level), (lb >= relevance_level)
    per_query["jaccard"] = np.asarray(stats.jaccard(*relevant, groups=groups,
                                                    n_groups=n_queries), dtype=np.float64)
    overall["jaccard"] = float(stats.jaccard(*relevant))
    for key in ("agreement", "kappa", "kappa_linear", "kappa_quadratic", "alpha"):
        overall[key] = float(overall[key])
    frame = pl.DataFrame({"query_id": pl.Series(query_ids.tolist(), dtype=pl.String),
                          **{c: per_query[c] for c in JUDGE_COLUMNS}})
    return JudgeAgreement(names=tuple(names), labels=labels, confusion=confusion,
                          overall={c: overall[c] for c in JUDGE_COLUMNS},
                          relevance_level=relevance_level, _per_query=frame)


def _judgments(qrels, columns, relevance):
    """``(query_id, doc_id, relevance frame, encoding)`` of a judgment set: a TREC text
    file that is not UTF-8 is read as Latin-1 bytes, as :class:`~irmetrics.Evaluator`
    reads it."""
    external = external_qrels(qrels, relevance)
    if external is not None:
        table, encoding = external, UTF8
    elif isinstance(qrels, (str, os.PathLike)) and not is_columnar(qrels):
        table, encoding = read_utf8_or_latin1(qrels, "qrels", relevance=relevance)
    else:
        table, encoding = as_qrels(qrels, columns, relevance), UTF8
    return table.df.select("query_id", "doc_id", "relevance"), encoding


def _statistics(counts: np.ndarray, labels: np.ndarray) -> dict:
    """Observed agreement, the three kappas and ordinal alpha of confusion matrices."""
    if counts.shape[-1] == 0:
        nan = np.full(counts.shape[:-2], np.nan)
        return {k: nan for k in ("agreement", "kappa", "kappa_linear", "kappa_quadratic",
                                 "alpha")}
    total = counts.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = np.trace(counts, axis1=-2, axis2=-1) / total
    return {"agreement": agreement,
            "kappa": stats.kappa_from_confusion(counts),
            "kappa_linear": stats.kappa_from_confusion(counts, weights="linear"),
            "kappa_quadratic": stats.kappa_from_confusion(counts, weights="quadratic"),
            "alpha": stats.alpha_from_confusion(counts, labels, level="ordinal")}


__all__ = ["JUDGE_COLUMNS", "JudgeAgreement", "judge_agreement"]
