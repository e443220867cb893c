"""How alike two runs are, query by query: did a rerun, a new index or an ANN search change
*what* is retrieved, not only the score?

:func:`run_similarity` takes two runs of any shape (TREC files, Parquet/Arrow, pytrec_eval
dicts, DataFrames, :class:`~irmetrics.Run`, or 2-D arrays/tensors of neighbour ids, one row
per query best first) and gives, per query, rank-biased overlap with ties (Corsi & Urbano's
:math:`RBO^a`, :math:`RBO^w` or :math:`RBO^b`: extrapolated, min, max, residual), Kendall's
tau-b and tau_AP on the documents both runs retrieved, Jaccard, overlap and recall at k
(recall reads the first run as the exact neighbour list), with the mean of each over the
queries and a percentile bootstrap interval over queries. The numbers come from
:mod:`irmetrics.stats.similarity`; this module only lines the runs up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from irmetrics.checks import check_bool, check_positive_int
from irmetrics.containers import Run
from irmetrics.containers.trec_text import LATIN1, UTF8, latin1_ids
from irmetrics.device.arrays import as_array
from irmetrics.evaluate import as_run
from irmetrics.exceptions import NoQueriesError, ShapeError
from irmetrics.io.columnar import is_columnar
from irmetrics.io.external import is_json
from irmetrics.io.trec import read_utf8_or_latin1
from irmetrics.stats.rank_intervals import bootstrap_mean_intervals
from irmetrics.stats.similarity import (TiedRankings, overlap_at_k, rankings, rbo_rankings,
                                        shared_items, shared_rank_correlation)

__all__ = ["RunSimilarity", "run_similarity", "SIMILARITY_STATISTICS"]

#: The per-query columns of :attr:`RunSimilarity.per_query`, in order.
SIMILARITY_STATISTICS = ("rbo", "rbo_min", "rbo_max", "rbo_res", "tau_b", "tau_ap",
                         "jaccard", "overlap", "recall")


@dataclass(frozen=True, eq=False)
class RunSimilarity:
    """Result of :func:`run_similarity`.

    Attributes
    ----------
    per_query : polars.DataFrame
        ``query_id``, the columns of :data:`SIMILARITY_STATISTICS` (``rbo`` is the
        extrapolated RBO), ``shared`` (documents both runs retrieved, within ``depth``);
        the queries both runs answer, in query-id order.
    summary : polars.DataFrame
        ``statistic``, ``mean``, ``low``, ``high`` (bootstrap over queries), ``queries``
        (those where the statistic is defined: tau needs two shared documents).
    only_a, only_b : list of str
        Queries only one run answers: left out, listed here.
    p : float
    ties : str
    k : int
    depth : int or None
    level : float
    id_encoding : {"utf-8", "latin-1"}
        How the ids were decoded: ``"latin-1"`` when a TREC run file was not UTF-8 (then
        each character of an id stands for one byte of the file, ``id.encode("latin-1")``).
    """

    per_query: pl.DataFrame
    summary: pl.DataFrame
    only_a: list = field(default_factory=list)
    only_b: list = field(default_factory=list)
    p: float = 0.9
    ties: str = "a"
    k: int = 10
    depth: int | None = None
    level: float = 0.95
    id_encoding: str = UTF8


def _neighbour_frame(value: Any, name: str) -> pl.DataFrame | None:
    """A 2-D integer array (or tensor) of neighbour ids as a run frame, else None."""
    if isinstance(value, (str, bytes, dict, Run, pl.DataFrame, pl.LazyFrame)) or hasattr(value, "columns"):
        return None
    if not (hasattr(value, "shape") or hasattr(value, "__array__") or isinstance(value, list)):
        return None
    array = as_array(value, name)
    if array.ndim != 2 or not np.issubdtype(array.dtype, np.integer):
        raise ShapeError(f"`{name}` as an array must be 2-D integer neighbour ids (one row per"
                         f" query, best first); got shape {array.shape}, dtype {array.dtype}.")
    n_q, k = array.shape
    return pl.DataFrame({
        "query_id": pl.Series(np.repeat(np.arange(n_q), k)).cast(pl.String),
        "doc_id": pl.Series(array.ravel()).cast(pl.String),
        "score": pl.Series(-np.tile(np.arange(k, dtype=np.float64), n_q)),
    })


def _frame(value: Any, name: str) -> tuple[pl.DataFrame, str]:
    """``(query_id, doc_id, score)`` of a run and the encoding of its ids: a TREC text file
    that is not UTF-8 is read as Latin-1 bytes, by the reader ``irmetrics eval`` uses."""
    frame = _neighbour_frame(value, name)
    if frame is not None:
        return frame, UTF8
    if isinstance(value, (str, os.PathLike)) and not is_columnar(value) and not is_json(value):
        run, encoding = read_utf8_or_latin1(value, "run")
    else:
        run, encoding = as_run(value), UTF8
    return run.df.select("query_id", "doc_id", "score"), encoding


def _frames(a: Any, b: Any) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    """Both runs and the encoding of their ids; when only one is Latin-1, the other's ids
    in their Latin-1 view, so that ids compare as bytes (as the evaluation compares a run
    with Latin-1 qrels)."""
    (fa, ea), (fb, eb) = _frame(a, "a"), _frame(b, "b")
    if ea == eb:
        return fa, fb, ea
    fa, fb = (f if e == LATIN1 else f.with_columns(latin1_ids(f["query_id"]),
                                                  latin1_ids(f["doc_id"]))
              for f, e in ((fa, ea), (fb, eb)))
    return fa, fb, LATIN1


def _ranked_order(seg: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Rows by ranking (``seg``) then score descending. Runs usually come that way query
    by query (each query's rows together, best first), only the queries in another
    order: then the query blocks are put in order, without sorting the rows."""
    n = seg.size
    starts = np.flatnonzero(np.concatenate([[True], seg[1:] != seg[:-1]]))
    in_blocks = np.unique(seg[starts]).size == starts.size
    if in_blocks and np.all((score[1:] <= score[:-1]) | (seg[1:] != seg[:-1])):
        sizes = np.diff(np.append(starts, n))
        by_seg = np.argsort(seg[starts], kind="stable")
        first, size = starts[by_seg], sizes[by_seg]
        # the rows of block after block: each block's first row plus 0 .. size - 1
        return np.repeat(first - np.cumsum(size) + size, size) + np.arange(n)
    return (pl.DataFrame({"seg": seg, "score": score})
            .select(pl.arg_sort_by(["seg", "score"], descending=[False, True]))
            .to_series().to_numpy().astype(np.int64))


def _sorted_codes(ids: pl.Series) -> np.ndarray:
    """Integer codes of string ids whose order is the strings' byte order (polars sorts
    strings by their bytes): one sort of the distinct ids, never of the rows (an Enum's
    codes are the positions of its categories)."""
    return ids.cast(pl.Enum(ids.unique().sort())).to_physical().to_numpy().astype(np.int64)


def _lined_up(fa: pl.DataFrame, fb: pl.DataFrame, common: list,
              depth: int | None) -> tuple[TiedRankings, TiedRankings]:
    """Both runs' rankings of the ``common`` queries (in that order), each in trec_eval's
    order (score descending, then doc id descending), cut at ``depth``.

    Every sort is numeric: doc ids become codes in their byte order once, and those codes
    order the rows whose score is tied (then the codes are the rankings' items)."""
    n_q = len(common)
    both = pl.concat([fa.with_columns(side=pl.lit(0, pl.Int64)),
                      fb.with_columns(side=pl.lit(1, pl.Int64))])
    # runs come query by query: the ids are matched to ``common`` once per block of equal
    # ids (rows of queries only one run answers get -1 and go)
    query_id = both["query_id"]
    block = query_id.rle_id().to_numpy()
    heads = np.flatnonzero(np.concatenate([[True], block[1:] != block[:-1]]))
    query = query_id.gather(heads).replace_strict(
        pl.Series(common, dtype=pl.String), pl.Series(np.arange(n_q, dtype=np.int64)),
        default=-1, return_dtype=pl.Int64).to_numpy()[block]
    answered = query >= 0
    if not answered.all():
        both, query = both.filter(pl.Series(answered)), query[answered]
    seg = both["side"].to_numpy() * n_q + query
    score = both["score"].to_numpy()
    doc = _sorted_codes(both["doc_id"])
    order = _ranked_order(seg, score)
    seg, score = seg[order], score[order]
    same = (seg[1:] == seg[:-1]) & (score[1:] == score[:-1])
    if same.any():  # tied scores: doc id descending within each tie
        tied = np.zeros(seg.size, dtype=bool)
        tied[1:] |= same
        tied[:-1] |= same
        at = np.flatnonzero(tied)
        tie = np.cumsum(np.concatenate([[True], ~same]))[at]
        tied_doc = doc[order[at]]
        span = int(tied_doc.max()) + 1
        if span * (int(tie[-1]) + 1) < 2**62:  # one integer sort of (tie, doc descending)
            within = np.argsort(tie * span + (span - 1 - tied_doc), kind="stable")
        else:
            within = np.lexsort((-tied_doc, tie))
        order[at] = order[at][within]
    counts = np.bincount(seg, minlength=2 * n_q)
    if depth is not None:
        starts = np.concatenate([[0], np.cumsum(counts)])
        keep = np.arange(seg.size) - starts[seg] < depth
        order, score = order[keep], score[keep]
        counts = np.minimum(counts, depth)
    doc = doc[order]
    cut = int(counts[:n_q].sum())

    def side(lo: int, hi: int, sizes: np.ndarray, name: str) -> TiedRankings:
        return rankings(doc[lo:hi], np.concatenate([[0], np.cumsum(sizes)]), score[lo:hi],
                        name=name)

    return side(0, cut, counts[:n_q], "a"), side(cut, doc.size, counts[n_q:], "b")


def run_similarity(a: Any, b: Any, *, p: float = 0.9, ties: str = "a", k: int = 10,
                   depth: int | None = None, correlations: bool = True,
                   n_resamples: int = 1000, level: float = 0.95, seed: Any = 0,
                   threads: Any = None) -> RunSimilarity:
    r"""Per-query similarity of two runs, with means and bootstrap intervals over queries.

    Each run's documents for a query are ordered as trec_eval orders them (score
    descending, then doc id descending); documents with equal scores are *tied* for RBO
    (:func:`irmetrics.stats.similarity.rbo_rankings`) and for tau (which compares tie-group
    positions), and cut in that order at ``k`` and ``depth``. Per query:

    * ``rbo`` (extrapolated), ``rbo_min``, ``rbo_max``, ``rbo_res`` at persistence ``p``;
    * ``tau_b`` and ``tau_ap`` (``a`` the reference) on the documents both retrieved;
    * ``jaccard`` :math:`= |A_k \cap B_k| / |A_k \cup B_k|`, ``overlap``
      :math:`= |A_k \cap B_k| / k`, ``recall`` :math:`= |A_k \cap B_k| / |A_k|` (``a``
      the exact neighbours, ``b`` the approximate ones).

    Parameters
    ----------
    a, b : Run, path, dict, DataFrame, or 2-D integer array/tensor
        The runs; an array holds neighbour ids, row i for query ``"i"``, best first. A
        TREC run file that is not UTF-8 is read as Latin-1 bytes, as ``evaluate`` reads
        it (:func:`irmetrics.io.trec.read_utf8_or_latin1`).
    p : float, default 0.9
    ties : {"a", "w", "b"}, default "a"
    k : int, default 10
    depth : int, optional
        Cut both runs at this depth first (every statistic then compares the top
        ``depth`` only).
    correlations : bool, default True
        Compute tau-b and tau_AP (quadratic in the shared documents of a query).
    n_resamples : int, default 1000
    level : float, default 0.95
    seed : int, numpy.random.Generator or None
    threads : int or None

    Returns
    -------
    RunSimilarity

    Raises
    ------
    irmetrics.exceptions.NoQueriesError
        The runs share no query.

    Examples
    --------
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d1": 1.0, "d4": 0.5}}
    >>> b = {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}, "q2": {"d1": 1.0, "d4": 0.5}}
    >>> s = run_similarity(a, b, k=2, n_resamples=100)
    >>> s.per_query["jaccard"].to_list(), round(s.per_query["tau_b"][0], 4)
    ([1.0, 1.0], 0.3333)
    """
    k = check_positive_int("k", k)
    if depth is not None:
        depth = check_positive_int("depth", depth)
    correlations = check_bool("correlations", correlations)
    fa, fb, encoding = _frames(a, b)
    queries_a = set(fa["query_id"].unique().to_list())
    queries_b = set(fb["query_id"].unique().to_list())
    common = sorted(queries_a & queries_b)
    if not common:
        raise NoQueriesError(f"the runs share no query (A has {len(queries_a)}, B has "
                             f"{len(queries_b)}): nothing to compare")
    x, y = _lined_up(fa, fb, common, depth)
    r = rbo_rankings(x, y, p=p, ties=ties, threads=threads)
    sets = overlap_at_k(x, y, k)
    columns: dict[str, Any] = {"query_id": common, "rbo": r.ext, "rbo_min": r.min,
                               "rbo_max": r.max, "rbo_res": r.res}
    n_q = len(common)
    if correlations:
        corr = shared_rank_correlation(x, y)
        columns.update(tau_b=corr["tau_b"], tau_ap=corr["tau_ap"])
        shared = corr["shared"]
    else:
        columns.update(tau_b=np.full(n_q, np.nan), tau_ap=np.full(n_q, np.nan))
        shared = shared_items(x, y)
    columns.update(jaccard=sets["jaccard"], overlap=sets["overlap"], recall=sets["recall"],
                   shared=shared)
    per_query = pl.DataFrame(columns).with_columns(pl.col("shared").cast(pl.Int64))
    matrix = per_query.select(SIMILARITY_STATISTICS).to_numpy().astype(np.float64)
    mean, low, high = bootstrap_mean_intervals(matrix, level=level, n_resamples=n_resamples,
                                               seed=seed, threads=threads)
    summary = pl.DataFrame({"statistic": list(SIMILARITY_STATISTICS), "mean": mean, "low": low,
                            "high": high,
                            "queries": np.isfinite(matrix).sum(axis=0).astype(np.int64)})
    return RunSimilarity(per_query=per_query, summary=summary,
                         only_a=sorted(queries_a - queries_b), only_b=sorted(queries_b - queries_a),
                         p=r.p, ties=r.ties, k=k, depth=depth, level=level,
                         id_encoding=encoding)

