"""Measures defined by the user: a Python function of the ranked lists, registered by name.

:func:`define_measure` declares a measure like the built-in ones: it gets a name, typed
keyword parameters (read from the function's signature) and an optional cutoff, so
``MyMeasure(alpha=0.5)@10`` is accepted wherever a measure name is: ``evaluate``,
``Evaluator``, ``compare``, the CLI (``--measures-from``), the pytrec_eval and
ir_measures drop-ins, the bounded-memory file road and Spark.

The function reads a :class:`Rankings`, the read-only view of every evaluated query's
ranking that the built-in kernels read (CSR: per-query ``offsets`` into arrays in final
rank order), and returns one number per query, vectorised over all queries. With
``per_query=True`` it is called once per query with a :class:`QueryRanking` instead: a
Python loop over queries, in the user's code, for quick experiments.

See docs/custom_measures.md.
"""

from __future__ import annotations

import contextvars
import itertools
import math
import numbers
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..checks import check_bool, check_choice, parameter_error
from ..engine import segments as sg
from ..engine.ranked import NOT_IN_POOL
from ..exceptions import ParameterError, UnknownMeasureError, UserMeasureError
from ..lazy import loaded
from .params import BINARY_OPTIONS, KeywordParams, Option
from .parse import printed_name_spec
from .registry import (DOUBLE, MEAN, NICKNAMES, REGISTRY, SUM, USER_FAMILY,  # noqa: F401
                       MeasureDef, is_user_measure, is_user_spelling, pytrec_eval_supported,
                       user_measures_of)

__all__ = ["QueryRanking", "Rankings", "UserMeasure", "define_measure", "load_measures",
           "remove_measure"]

#: User measures print after every built-in one, in the order they were defined.
_FIRST_ORDER = 100_000
_orders = itertools.count(_FIRST_ORDER)
#: Keyword names every friendly spelling already uses (or ``@k`` does).
_RESERVED = frozenset(BINARY_OPTIONS) | {"cutoff"}
_KINDS = {int: int, float: float, bool: bool, str: str,
          "int": int, "float": float, "bool": bool, "str": str}
_EXAMPLES = {int: 1, float: 0.5, bool: True, str: "x"}
_AGGREGATES = {"mean": MEAN, "sum": SUM}
#: Set while :func:`load_measures` runs a file: its measures replace earlier user ones.
_LOADING = contextvars.ContextVar("irmetrics_loading_measures", default=False)


def _read_only(array):
    """A read-only view of ``array`` (no copy): the engine's arrays stay untouched."""
    if array is None:
        return None
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view


class Rankings:
    """The ranked lists of every evaluated query, read-only: what a user measure reads.

    Entries are the retrieved documents of all queries in final rank order (score
    descending, ties as the evaluation's ``ties`` says), query after query; entries of
    query ``q`` are ``offsets[q]:offsets[q + 1]``. Under a cutoff (``Name@k``) every
    ranking is already cut to its first ``k`` documents. Every array is read-only.

    Attributes
    ----------
    n_queries : int
        Q, the number of queries in this view.
    query_ids : ndarray of str, shape (Q,)
        Query ids, ascending byte order.
    offsets : ndarray of int64, shape (Q + 1,)
    label : ndarray of int64 (float64 under ``relevance="float"``), shape (N,)
        The document's judged label; 0 when it is unjudged (not in the qrels) or judged
        with a negative label (trec_eval reads both as not relevant).
    judged : ndarray of bool, shape (N,)
        In the qrels with a label ``>= 0``.
    pooled : ndarray of bool, shape (N,)
        In the qrels at all, negative labels included.
    is_rel : ndarray of bool, shape (N,)
        ``judged & (label >= relevance_level)``.
    score : ndarray of float64, shape (N,)
        The run's score (rounded to float32 under ``semantics="pytrec_eval"``, as the
        ranking was ordered).
    rank : ndarray of int64, shape (N,)
        1-based rank within the query.
    query : ndarray of int64, shape (N,)
        Query index (``0 .. Q-1``) of every entry.
    num_ret : ndarray of int64, shape (Q,)
        Documents in each ranking (after the cutoff).
    num_rel : ndarray of int64, shape (Q,)
        Judged documents with label ``>= relevance_level`` in the qrels (retrieved or
        not; not changed by the cutoff).
    label_counts : ndarray of int64, shape (Q, L)
        ``label_counts[q, j]``: documents of query ``q`` judged ``label_values[j]``
        (labels ``>= 0``; retrieved or not).
    label_values : ndarray, shape (L,)
        The distinct labels ``>= 0`` of the qrels, ascending.
    relevance_level : int
        The evaluation's ``relevance_level``, or the measure's ``rel=``.
    cutoff : int or None
        The ``@k`` of the spelling, None without one.

    Notes
    -----
    Under ``complete=True`` a qrels query absent from the run has an empty ranking here
    (trec_eval's placeholder document is not shown to user measures). Under
    ``judged_only=True`` unjudged documents are gone before ranks and the cutoff apply.

    Examples
    --------
    >>> import irmetrics as irm
    >>> @irm.define_measure("DocsAboveTwo", cutoff=False)
    ... def docs_above_two(view):
    ...     return view.count(view.label > 2)
    >>> irm.evaluate({"q": {"a": 3, "b": 1}}, {"q": {"a": 1.0, "b": 2.0}},
    ...              ["DocsAboveTwo"]).aggregate()
    {'DocsAboveTwo': 1.0}
    >>> irm.remove_measure("DocsAboveTwo")
    """

    def __init__(self, *, query_ids, offsets, code, scores, label_counts, label_values,
                 relevance_level: int, cutoff: int | None):
        self.query_ids = _read_only(query_ids)
        self.offsets = _read_only(offsets)
        self._code = code  # trec_eval's relevance code (ranked.py): label, -1 or -2
        self._scores = scores
        self.label_counts = _read_only(label_counts)
        self.label_values = _read_only(label_values)
        self.relevance_level = relevance_level
        self.cutoff = cutoff

    def __repr__(self) -> str:
        return (f"Rankings({self.n_queries} queries, {len(self._code)} ranked documents, "
                f"relevance_level={self.relevance_level}, cutoff={self.cutoff})")

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @cached_property
    def label(self) -> np.ndarray:
        return _read_only(np.maximum(self._code, 0))

    @cached_property
    def judged(self) -> np.ndarray:
        return _read_only(self._code >= 0)

    @cached_property
    def pooled(self) -> np.ndarray:
        return _read_only(self._code != NOT_IN_POOL)

    @cached_property
    def is_rel(self) -> np.ndarray:
        return _read_only(self.judged & (self.label >= self.relevance_level))

    @property
    def score(self) -> np.ndarray:
        if self._scores is None:
            raise UserMeasureError("this view has no scores (the ideal ranking of"
                                   " Rankings.ideal() is made of labels only).")
        return _read_only(self._scores)

    @cached_property
    def rank(self) -> np.ndarray:
        return _read_only(sg.ranks(self.offsets))

    @cached_property
    def query(self) -> np.ndarray:
        return _read_only(sg.segment_ids(self.offsets))

    @cached_property
    def num_ret(self) -> np.ndarray:
        return _read_only(np.diff(self.offsets))

    @cached_property
    def num_rel(self) -> np.ndarray:
        counted = self.label_values >= self.relevance_level
        return _read_only(self.label_counts[:, counted].sum(axis=1).astype(np.int64))

    def _entries(self, values, what: str) -> np.ndarray:
        values = np.asarray(values)
        if values.shape != self._code.shape:
            raise parameter_error(what, f"one value per ranked document, shape "
                                  f"{self._code.shape}", f"an array of shape {values.shape}")
        return values

    def sum(self, values) -> np.ndarray:
        """Per-query sum of per-document ``values`` (shape (N,)), added in rank order:
        float64, shape (Q,); 0 for an empty ranking.

        >>> view = Rankings.example()
        >>> view.sum(view.label / view.rank).tolist()   # 2/1 + 0/2 + 1/3
        [2.3333333333333335, 0.0]
        """
        values = self._entries(values, "values").astype(np.float64, copy=False)
        return sg.seg_sum(values, self.query, self.n_queries)

    def count(self, mask) -> np.ndarray:
        """Per-query number of documents where the boolean ``mask`` (shape (N,)) holds:
        int64, shape (Q,).

        >>> Rankings.example().count(Rankings.example().is_rel).tolist()
        [2, 0]
        """
        mask = self._entries(mask, "mask").astype(bool, copy=False)
        return sg.seg_count(mask, self.query, self.n_queries)

    def cumsum(self, values) -> np.ndarray:
        """Running sum of ``values`` (shape (N,)) within each query, in rank order
        (float64, shape (N,)): ``cumsum(is_rel)`` is the number of relevant documents
        at or above each rank.

        >>> view = Rankings.example()
        >>> view.cumsum(view.is_rel).tolist()
        [1.0, 1.0, 2.0, 0.0]
        """
        values = self._entries(values, "values").astype(np.float64, copy=False)
        return sg.seg_cumsum(values, self.offsets)

    def first_rank(self, mask) -> np.ndarray:
        """1-based rank of the first document where ``mask`` holds, per query; 0 where
        none does (int64, shape (Q,)).

        >>> view = Rankings.example()
        >>> view.first_rank(view.is_rel).tolist()
        [1, 0]
        """
        mask = self._entries(mask, "mask").astype(bool, copy=False)
        return sg.seg_first(mask, self.offsets)

    def ideal(self) -> Rankings:
        """The ideal rankings: every judged label ``>= 0`` of each query (from the qrels,
        retrieved or not) in descending order, cut at the same cutoff; every entry is
        judged and pooled, and there are no scores.

        >>> Rankings.example().ideal().label.tolist()
        [2, 1, 0, 1]
        """
        counts = self.label_counts[:, ::-1]
        code = np.repeat(np.tile(self.label_values[::-1], self.n_queries), counts.ravel())
        offsets = np.concatenate(([0], np.cumsum(counts.sum(axis=1)))).astype(np.int64)
        if self.cutoff is not None:
            offsets, top = sg.truncate(offsets, self.cutoff)
            code = code[top]
        return Rankings(query_ids=self.query_ids, offsets=offsets, code=code, scores=None,
                        label_counts=self.label_counts, label_values=self.label_values,
                        relevance_level=self.relevance_level, cutoff=self.cutoff)

    def queries(self):
        """Yield a :class:`QueryRanking` per query, in order (a Python loop: the
        per-query form of :func:`define_measure` runs on it).

        >>> [(q.query_id, q.label.tolist(), q.num_rel) for q in Rankings.example().queries()]
        [('q1', [2, 0, 1], 2), ('q2', [0], 1)]
        """
        ideal = self.ideal()
        label, judged, pooled, is_rel = self.label, self.judged, self.pooled, self.is_rel
        scores = None if self._scores is None else self.score
        offsets, ideal_offsets, ideal_label = self.offsets, ideal.offsets, ideal.label
        values = self.label_values.tolist()
        for q in range(self.n_queries):
            lo, hi = int(offsets[q]), int(offsets[q + 1])
            counts = self.label_counts[q].tolist()
            yield QueryRanking(
                query_id=str(self.query_ids[q]), label=label[lo:hi],
                score=None if scores is None else scores[lo:hi], judged=judged[lo:hi],
                pooled=pooled[lo:hi], is_rel=is_rel[lo:hi],
                rank=_read_only(np.arange(1, hi - lo + 1)),
                num_rel=int(self.num_rel[q]), num_ret=hi - lo,
                label_counts={v: c for v, c in zip(values, counts) if c},
                ideal_label=ideal_label[ideal_offsets[q]:ideal_offsets[q + 1]],
                relevance_level=self.relevance_level, cutoff=self.cutoff)

    def _subset(self, lo: int, hi: int) -> Rankings:
        """The view of queries ``lo .. hi-1`` alone (to find the query a measure fails on)."""
        start, stop = int(self.offsets[lo]), int(self.offsets[hi])
        return Rankings(query_ids=self.query_ids[lo:hi],
                        offsets=self.offsets[lo:hi + 1] - start,
                        code=self._code[start:stop],
                        scores=None if self._scores is None else self._scores[start:stop],
                        label_counts=self.label_counts[lo:hi], label_values=self.label_values,
                        relevance_level=self.relevance_level, cutoff=self.cutoff)

    @classmethod
    def of(cls, ctx, cutoff: int | None) -> Rankings:
        """The view of a kernel :class:`~irmetrics.measures.context.Context`: its level and
        judged-only choice, placeholder rankings (``complete=True``) emptied, cut at
        ``cutoff``."""
        lists = ctx.lists.judged_only() if ctx.judged_only else ctx.lists
        offsets, code, scores = lists.offsets, lists.code, lists.scores
        if lists.bogus.any():
            keep = ~lists.bogus[sg.segment_ids(offsets)]
            lengths = np.where(lists.bogus, 0, np.diff(offsets))
            offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
            code = code[keep]
            scores = None if scores is None else scores[keep]
        if cutoff is not None:
            offsets, top = sg.truncate(offsets, cutoff)
            code = code[top]
            scores = None if scores is None else scores[top]
        return cls(query_ids=lists.query_ids, offsets=offsets, code=code, scores=scores,
                   label_counts=lists.rel_hist, label_values=lists.levels,
                   relevance_level=ctx.relevance_level, cutoff=cutoff)

    @classmethod
    def example(cls) -> Rankings:
        """A small view for examples: query ``q1`` ranks labels 2, unjudged, 1 and has a
        document judged 0 it did not retrieve; ``q2`` ranks one unjudged document and
        has one judged 1."""
        return cls(query_ids=np.array(["q1", "q2"], dtype=object),
                   offsets=np.array([0, 3, 4]), code=np.array([2, NOT_IN_POOL, 1, -1]),
                   scores=np.array([3.0, 2.0, 1.0, 5.0]),
                   label_counts=np.array([[1, 1, 1], [0, 1, 0]]),
                   label_values=np.array([0, 1, 2]), relevance_level=1, cutoff=None)


@dataclass(frozen=True)
class QueryRanking:
    """One query's ranking, for the per-query form of :func:`define_measure`.

    The arrays are read-only slices of :class:`Rankings` (same meanings): ``label``,
    ``score``, ``judged``, ``pooled``, ``is_rel``, ``rank`` in rank order; ``num_rel``
    and ``num_ret`` are ints; ``label_counts`` is ``{label: number of judged documents}``
    (labels ``>= 0``, retrieved or not); ``ideal_label`` the judged labels ``>= 0`` in
    descending order, cut at ``cutoff``.

    Examples
    --------
    A reciprocal rank over the first ``k`` documents, :math:`1 / \\min\\{i : \\ell_i \\geq
    \\mathrm{rel}\\}` (0 when no relevant document is ranked):

    >>> import irmetrics as irm
    >>> @irm.define_measure("FirstHit", per_query=True)
    ... def first_hit(query):
    ...     hits = query.rank[query.is_rel]
    ...     return 1.0 / hits[0] if len(hits) else 0.0
    >>> irm.evaluate({"q": {"a": 0, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}},
    ...              ["FirstHit@1", "FirstHit"]).aggregate()
    {'FirstHit@1': 0.0, 'FirstHit': 0.5}
    >>> irm.remove_measure("FirstHit")
    """

    query_id: str
    label: np.ndarray
    score: np.ndarray | None
    judged: np.ndarray
    pooled: np.ndarray
    is_rel: np.ndarray
    rank: np.ndarray
    num_rel: int
    num_ret: int
    label_counts: dict
    ideal_label: np.ndarray
    relevance_level: int
    cutoff: int | None


@dataclass(frozen=True)
class UserMeasure:
    """A user measure as registered: what :func:`define_measure` was given.

    It is what travels to Spark executors (pickled with its function), where
    :func:`install` registers it again.
    """

    name: str
    function: Callable
    options: dict  # {parameter: Option}, left unset so the spelling shows what was given
    defaults: dict  # {parameter: default} of those that have one
    per_query: bool = False
    cutoff: bool = True
    aggregate: str = "mean"
    allow_nan: bool = False

    def declaration(self, order: int) -> MeasureDef:
        """The registry entry: a friendly name with ``rel``/``judged_only`` and the
        function's own keyword parameters, ``@k`` optional when ``cutoff``."""
        def kernel(ctx, cutoff):
            return self.values(Rankings.of(ctx, cutoff), dict(ctx.options))[:, None]

        import inspect  # (here, as below: defining a measure is the only road that reads one)

        return MeasureDef(
            name=self.name, order=order, kernel=kernel,
            params=KeywordParams(cutoff=self.cutoff), printed=DOUBLE,
            summary=_AGGREGATES[self.aggregate], pytrec_eval=False, friendly=self.name,
            friendly_cutoff=self.cutoff, family=USER_FAMILY,
            doc=inspect.getdoc(self.function) or "",
            options={**BINARY_OPTIONS, **self.options},
            extra={"user_measure": self, "optional_cutoff": self.cutoff},
        )

    def spelling(self, params: dict, cutoff: int | None) -> str:
        """How the measure was asked for, for messages: ``GradedP(alpha=0.5)@10``."""
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return self.name + (f"({args})" if args else "") + (f"@{cutoff}" if cutoff else "")

    def values(self, view: Rankings, params: dict) -> np.ndarray:
        """One checked float64 value per query of ``view``."""
        spelling = self.spelling(params, view.cutoff)
        if view.n_queries == 0:
            return np.zeros(0)
        if self.per_query:
            out = np.empty(view.n_queries)
            for q, query in enumerate(view.queries()):  # the user's per-query code
                try:
                    value = self.function(query, **params)
                except Exception as err:
                    raise user_error(spelling, query.query_id, err) from err
                out[q] = one_number(value, spelling, query.query_id)
        else:
            try:
                raw = self.function(view, **params)
            except Exception as err:
                failing = self._failing_query(view, params)
                raise user_error(spelling, None if failing is None else str(view.query_ids[failing]),
                                 err, where=" (on all queries together, on no single"
                                 " query alone)") from err
            out = _per_query_array(raw, spelling, view.n_queries)
        self._check_finite(out, spelling, view.query_ids)
        return out

    def _failing_query(self, view: Rankings, params: dict) -> int | None:
        """The query whose view alone makes the vectorised function raise, found by
        halving (the error path only), or None when no single query does."""
        lo, hi = 0, view.n_queries  # invariant: the queries lo .. hi-1 raise together
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._raises(view._subset(lo, mid), params):
                hi = mid
            elif self._raises(view._subset(mid, hi), params):
                lo = mid
            else:
                return None
        return lo

    def _raises(self, view: Rankings, params: dict) -> bool:
        try:
            self.function(view, **params)
        except Exception:  # noqa: BLE001 - any failure of the user's code counts
            return True
        return False

    def _check_finite(self, out: np.ndarray, spelling: str, query_ids) -> None:
        bad = np.isinf(out) if self.allow_nan else ~np.isfinite(out)
        if bad.any():
            q = int(np.flatnonzero(bad)[0])
            allowed = "" if self.allow_nan else \
                " (NaN is allowed with define_measure(..., allow_nan=True))"
            raise UserMeasureError(
                f"user measure {spelling!r} returned {float(out[q])!r} for query"
                f" {str(query_ids[q])!r}; values must be finite numbers{allowed}.",
                measure=spelling, query_id=str(query_ids[q]))


def user_error(spelling: str, query_id: str | None, err: Exception, *,
               where: str = "") -> UserMeasureError:
    """The error raised when the user's function raised ``err`` (raise it ``from err``):
    names the measure and the query; ``where`` says more when no query is named."""
    where = f" on query {query_id!r}" if query_id is not None else where
    return UserMeasureError(f"user measure {spelling!r} failed{where}: "
                            f"{type(err).__name__}: {err}", measure=spelling,
                            query_id=query_id)


def _numbers(value, spelling: str, query_id: str | None, expected: str) -> np.ndarray:
    """``value`` as a float64 array if it holds real numbers, else a UserMeasureError.

    A masked entry (``numpy.ma``) has no value: it becomes NaN, an error unless the
    measure allows NaN (``np.asarray`` would drop the mask and keep the hidden number).
    Real numbers numpy holds as objects (``Decimal``, ``Fraction``, ints past int64)
    are read with ``float``; one past float64's range becomes infinite."""
    where = f" for query {query_id!r}" if query_id is not None else ""
    try:
        if np.ma.isMaskedArray(value):
            value = np.ma.filled(np.ma.asarray(value).astype(np.float64), np.nan)
        array = np.asarray(value)
        if array.dtype.kind == "O" and array.size and all(
                isinstance(x, _real_objects()) for x in array.flat):  # the rare object path
            array = np.array([_as_float(x) for x in array.flat]).reshape(array.shape)
    except Exception:  # noqa: BLE001 - anything numpy cannot read is the wrong type
        array = np.asarray(None)
    if array.dtype.kind not in "biuf":
        raise UserMeasureError(
            f"user measure {spelling!r} returned {type(value).__name__}{where}; expected"
            f" {expected}.", measure=spelling, query_id=query_id)
    return array.astype(np.float64)


def _real_objects() -> tuple:
    """Real numbers numpy keeps as Python objects; a user measure may return them. No
    object is a Decimal before anyone imported decimal (1-2 ms this road need not pay)."""
    return (numbers.Real, sys.modules["decimal"].Decimal) if loaded("decimal") else (numbers.Real,)


def _as_float(x) -> float:
    try:
        return float(x)
    except OverflowError:  # an int past float64's range
        return math.inf if x > 0 else -math.inf


def one_number(value, spelling: str, query_id: str) -> float:
    """``value``, what a measure gave for one query, as a float: a UserMeasureError
    naming the measure and the query unless it is one real number (NaN and infinity
    pass: the caller decides).

    >>> one_number(np.float32(0.5), "Mine@10", "q1")
    0.5
    >>> one_number(None, "Mine@10", "q1")
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.UserMeasureError: user measure 'Mine@10' returned NoneType for query 'q1'; expected one real number.
    """
    array = _numbers(value, spelling, query_id, "one real number")
    if array.size != 1 or array.ndim > 1:
        raise UserMeasureError(
            f"user measure {spelling!r} returned shape {array.shape} for query"
            f" {query_id!r}; expected one real number.", measure=spelling,
            query_id=query_id)
    return float(array.reshape(()))


def _per_query_array(raw, spelling: str, n_queries: int) -> np.ndarray:
    array = _numbers(raw, spelling, None, f"an array of {n_queries} real numbers,"
                     " one per query")
    if array.shape == (n_queries, 1):
        array = array[:, 0]
    if array.shape != (n_queries,):
        raise UserMeasureError(
            f"user measure {spelling!r} returned shape {array.shape}; expected"
            f" ({n_queries},): one value per query of the view (Rankings.n_queries).",
            measure=spelling)
    return array


# ---- registration --------------------------------------------------------------------


def define_measure(name: str, function: Callable | None = None, *, per_query: bool = False,
                   cutoff: bool = True, aggregate: str = "mean", allow_nan: bool = False,
                   replace: bool = False):
    r"""Register ``function`` as measure ``name``; usable as a decorator.

    The function's first parameter receives the rankings: a :class:`Rankings` of every
    evaluated query (vectorised form, the default), or one :class:`QueryRanking` per
    call with ``per_query=True``. Its other parameters become the measure's typed
    keyword parameters, ``Name(alpha=0.5)``: each needs an annotation ``int``,
    ``float``, ``bool`` or ``str``, or a default of one of those types; one without a
    default must be given in every spelling. Every measure also takes ``rel=`` (the
    relevance level for it alone) and ``judged_only=``, like the built-in friendly names.

    Parameters
    ----------
    name : str
        A Python identifier that is not the name of a built-in measure, any of its
        friendly names or a trec_eval output name (``P_10``), compared case-blind.
        Spelled ``name``, ``name@k``, ``name(alpha=0.5)@k`` (no trec_eval ``name.k``).
    function : callable, optional
        ``function(rankings, **params)`` returning one real number per query (an array
        of shape (Q,); (Q, 1) is accepted), or with ``per_query=True``
        ``function(query, **params)`` returning one real number. Omitted: returns a
        decorator. ``@define_measure`` without parentheses registers the decorated
        function under its own name (``def GradedP(...)`` is ``GradedP``).
    per_query : bool, default False
        Call ``function`` once per query (a Python loop over queries, for quick
        experiments; the vectorised form is the fast one).
    cutoff : bool, default True
        The measure takes an optional ``@k``: the rankings are cut to their first ``k``
        documents before ``function`` sees them (``Rankings.cutoff`` is ``k``).
    aggregate : {"mean", "sum"}, default "mean"
        How per-query values are summarised over queries.
    allow_nan : bool, default False
        Accept NaN values (they make the mean NaN). Otherwise NaN, and always infinity,
        is an error naming the query.
    replace : bool, default False
        Replace a user measure of the same name (a built-in one is never replaced).

    Returns
    -------
    callable
        ``function`` itself (or a decorator that registers and returns it).

    Raises
    ------
    ParameterError
        A bad name, a name of a built-in measure or of a user measure already defined
        (without ``replace``), a parameter without a usable type.
    UserMeasureError
        At evaluation: the function raised (the message names the measure and the query,
        the original exception is the ``__cause__``) or returned values that are not one
        finite number per query.

    Notes
    -----
    A graded precision, the mean gain of the top k with gains scaled to [0, 1]:

    .. math:: \mathrm{GradedP}@k = \frac{1}{k}\sum_{i=1}^{\min(k, n)}
              \frac{\min(\ell_i, m)}{m}

    where :math:`\ell_i` is the label at rank :math:`i` (0 when unjudged) and :math:`m`
    the parameter ``max_label``. Measures are evaluated on the same rankings as the
    built-in ones (trec_eval's order, ``max_docs``, ``judged_only``), and anywhere a
    measure name is accepted; Spark executors receive the function pickled by value.

    Examples
    --------
    >>> import irmetrics as irm
    >>> @irm.define_measure("GradedP")
    ... def graded_precision(view, max_label: int = 2):
    ...     gain = np.minimum(view.label, max_label) / max_label
    ...     return view.sum(gain) / (view.cutoff or np.maximum(view.num_ret, 1))
    >>> qrels = {"q1": {"a": 2, "b": 1, "c": 0}}
    >>> run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}}
    >>> irm.evaluate(qrels, run, ["GradedP@2", "GradedP(max_label=1)@2"]).aggregate()
    {'GradedP@2': 0.75, 'GradedP(max_label=1)@2': 1.0}
    >>> irm.remove_measure("GradedP")
    """
    if function is None and callable(name):
        # the bare decorator, ``@define_measure`` on ``def GradedP(...)``: its own name
        return define_measure(getattr(name, "__name__", name), name, per_query=per_query,
                              cutoff=cutoff, aggregate=aggregate, allow_nan=allow_nan,
                              replace=replace)
    if function is None:
        _checked_name(name)  # at the decoration, not at the first evaluation
        return lambda f: define_measure(name, f, per_query=per_query, cutoff=cutoff,
                                        aggregate=aggregate, allow_nan=allow_nan,
                                        replace=replace)
    if not callable(function):
        raise parameter_error("function", "a callable", function)
    options, defaults = _options_of(function, name)
    spec = UserMeasure(
        name=_checked_name(name), function=function, options=options, defaults=defaults,
        per_query=check_bool("per_query", per_query), cutoff=check_bool("cutoff", cutoff),
        aggregate=check_choice("aggregate", aggregate, tuple(_AGGREGATES)),
        allow_nan=check_bool("allow_nan", allow_nan))
    install(spec, replace=check_bool("replace", replace) or _LOADING.get())
    return function


def _checked_name(name) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise parameter_error("name", "a Python identifier (letters, digits and _, not"
                              " starting with a digit)", name)
    return name


def _options_of(function, name: str) -> tuple[dict, dict]:
    """``({parameter: Option}, {parameter: default})`` of the function's parameters
    after the first."""
    import inspect

    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        raise parameter_error("function", "a function whose signature Python can read",
                              function) from None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if not parameters or parameters[0].kind not in positional:
        raise ParameterError(f"the function of measure {name!r} must take the rankings as"
                             " its first positional parameter.")
    options, defaults = {}, {}
    for p in parameters[1:]:
        if p.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          inspect.Parameter.KEYWORD_ONLY):
            raise ParameterError(f"parameter {p.name!r} of measure {name!r} must be one that"
                                 " can be given by keyword (no *args, **kwargs or"
                                 " positional-only parameters after the first).")
        if p.name in _RESERVED:
            raise ParameterError(f"parameter {p.name!r} of measure {name!r} is reserved"
                                 f" ({', '.join(sorted(_RESERVED))} are every measure's own);"
                                 " rename it.")
        has_default = p.default is not inspect.Parameter.empty
        # A numpy scalar default (np.float64(0.5), np.int64(2)) types it as its Python kin.
        default = p.default.item() if isinstance(p.default, np.generic) else p.default
        kind = _KINDS.get(p.annotation) if isinstance(p.annotation, (type, str)) else None
        if kind is None and has_default:
            kind = _KINDS.get(type(default))
        if kind is None:
            raise ParameterError(
                f"parameter {p.name!r} of measure {name!r} needs a type: annotate it int,"
                " float, bool or str, or give it a default of one of those types.")
        option = Option(kind, required=not has_default, example=_EXAMPLES[kind],
                        doc=f"{kind.__name__} parameter of the user measure {name}")
        if has_default:
            defaults[p.name] = option.convert(f"{name} (its default)", p.name, default)
        options[p.name] = option
    return options, defaults


def _builtin_clash(name: str) -> str | None:
    """How a built-in measure already spells ``name`` (case-blind), or None."""
    lower = name.lower()
    for key, m in REGISTRY.items():
        if is_user_measure(m):
            continue
        spellings = [key, *((m.friendly, *m.extra.get("friendly_aliases", ()))
                            if m.friendly else ())]
        for spelling in spellings:
            if spelling.lower() == lower:
                return f"the built-in measure {key!r}" + \
                    (f" (friendly name {spelling!r})" if spelling != key else "")
    if lower in {n.lower() for n in NICKNAMES}:
        return "a trec_eval nickname"
    # Output names too, case-blind like the rest (p_10 would sit beside P_10).
    for key in REGISTRY:
        if lower.startswith(key.lower() + "_"):
            spec = printed_name_spec(key + name[len(key):])
            if spec is not None:
                return f"trec_eval's output name for {spec!r}"
    return None


def install(spec: UserMeasure, *, replace: bool = False) -> None:
    """Put ``spec`` in the registry (:func:`define_measure`'s last step; also run on
    Spark executors with the measures shipped to them)."""
    clash = _builtin_clash(spec.name)
    if clash is not None:
        raise parameter_error("name", f"a name no built-in measure uses ({spec.name!r} is"
                              f" {clash})", spec.name)
    same = [key for key, m in REGISTRY.items()
            if is_user_measure(m) and key.lower() == spec.name.lower()]
    if same and not replace:
        raise parameter_error("name", f"a name not yet defined ({same[0]!r} is a user"
                              " measure already; pass replace=True to redefine it, or"
                              " remove_measure() it first)", spec.name)
    for key in same:
        del REGISTRY[key]
    REGISTRY[spec.name] = spec.declaration(next(_orders))


def remove_measure(name: str) -> None:
    """Remove the user measure ``name`` (defined by :func:`define_measure`).

    ``name`` is compared case-blind, as it is when the measure is defined or spelled.

    Raises
    ------
    UnknownMeasureError
        No user measure has that name.
    ParameterError
        ``name`` is a built-in measure (they cannot be removed), or not a str.

    Examples
    --------
    >>> import irmetrics as irm
    >>> from irmetrics.measures import REGISTRY
    >>> _ = irm.define_measure("Hits", lambda view: view.count(view.is_rel))
    >>> irm.remove_measure("Hits")
    >>> "Hits" in REGISTRY
    False
    """
    if not isinstance(name, str):
        raise parameter_error("name", "the name of a user measure (a str)", name)
    if name in REGISTRY and not is_user_measure(REGISTRY[name]):
        raise parameter_error("name", "a user measure (built-in ones cannot be removed)",
                              name)
    # Case-blind, as names are defined and spelled (GradedP@10 is gradedp@10).
    same = [k for k, m in REGISTRY.items() if is_user_measure(m) and k.lower() == name.lower()]
    if not same:
        raise UnknownMeasureError(name, suggestions=[k for k, m in REGISTRY.items()
                                                     if is_user_measure(m)][:5])
    del REGISTRY[same[0]]


_loaded = itertools.count()


def load_measures(path) -> list[str]:
    """Run the Python file ``path`` that defines measures (with :func:`define_measure`),
    as ``irmetrics eval --measures-from path`` does; its measures replace user measures
    of the same names defined before. Returns the names of the user measures defined.

    The file runs as a module of its own that is not put in ``sys.modules``, so its
    functions are pickled by value (they reach Spark executors without the file).

    Raises
    ------
    OSError
        The file cannot be read.
    UserMeasureError
        The file failed to run or called ``sys.exit`` (names the file; the error is the
        ``__cause__``); the user measures are then those before the call.
    ParameterError
        ``path`` is not a path.

    Examples
    --------
    >>> import os, tempfile, irmetrics as irm
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "mine.py")
    ...     with open(path, "w") as f:
    ...         _ = f.write("import irmetrics as irm\\n"
    ...                     "irm.define_measure('Hits', lambda v: v.count(v.is_rel))\\n")
    ...     irm.load_measures(path)
    ['Hits']
    >>> irm.remove_measure("Hits")
    """
    if not isinstance(path, (str, os.PathLike)):
        raise parameter_error("path", "the path of a Python file (str or os.PathLike)", path)
    path = os.fsdecode(path)
    with open(path, "rb"):
        pass  # an unreadable file is an OSError naming it, before anything runs
    import importlib.machinery
    import importlib.util

    name = f"irmetrics_user_measures_{next(_loaded)}"
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader, origin=path)
    assert spec is not None  # a SourceFileLoader always gives a spec
    module = importlib.util.module_from_spec(spec)
    before = {k: m for k, m in REGISTRY.items() if is_user_measure(m)}
    token = _LOADING.set(True)
    try:
        loader.exec_module(module)
    except (Exception, SystemExit) as err:
        # A file that fails defines nothing: the measures it defined before failing go,
        # and those it replaced come back. sys.exit() in it is a failure too (it would
        # end the CLI silently, with status 0 for a message).
        for key in [k for k, m in REGISTRY.items() if is_user_measure(m)]:
            del REGISTRY[key]
        REGISTRY.update(before)
        what = (f"called sys.exit({err.code!r})" if isinstance(err, SystemExit)
                else f"failed: {type(err).__name__}: {err}")
        raise UserMeasureError(f"the measures file {path!r} {what}") from err
    finally:
        _LOADING.reset(token)
    return [k for k, m in REGISTRY.items() if is_user_measure(m) and before.get(k) is not m]
