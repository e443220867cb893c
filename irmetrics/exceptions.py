"""Exceptions raised by irmetrics.

Every error raised on purpose by irmetrics derives from :class:`IrMetricsError`. The
concrete classes also derive from :class:`ValueError`, so code written against plain Python
conventions (``except ValueError``) keeps working.

==========================  ===========================================================
class                       raised when
==========================  ===========================================================
``InputFormatError``        a qrels/run file (or in-memory table) is malformed; names
                            the source, the 1-based line, the query id and doc id
``DuplicateEntryError``     a (query_id, doc_id) pair occurs twice and
                            ``on_duplicate="error"``
``NotUtf8Error``            a text file read as UTF-8 holds ids that are not UTF-8
                            (Latin-1 collections); ``evaluate`` then reads the files
                            as Latin-1 bytes instead
``UnknownMeasureError``     a measure name is not known; carries close matches
``ParameterError``          an argument has a bad value (one message template, see
                            :mod:`irmetrics.checks`)
``InputTypeError``          an in-memory value of the wrong type (a str label, a None
                            score): an ``InputFormatError`` that is also a ``TypeError``
``ParameterTypeError``      an argument of the wrong type (a list where a dict is
                            expected): a ``ParameterError`` that is also a ``TypeError``
``ShapeError``              arrays or tables have incompatible shapes
``NoQueriesError``          no query is evaluated: qrels and run share no query id
``UserMeasureError``        a measure defined by the user failed or returned values of
                            the wrong shape, NaN or infinity; names the measure and the
                            query
``AlreadyImportedError``    :func:`irmetrics.compat.install` cannot put a drop-in under
                            a library's name: the real library is already imported (an
                            ``ImportError``)
==========================  ===========================================================

Warnings derive from :class:`IrMetricsWarning` (a ``UserWarning``), so one filter
silences or escalates all of them (``warnings.simplefilter("error", IrMetricsWarning)``):

==========================  ===========================================================
class                       warned when
==========================  ===========================================================
``MissingQueriesWarning``   qrels queries have no ranking in the run and were not
                            evaluated (``complete=False``); the ids are in
                            ``Results.missing_query_ids``
``QueryAlignmentWarning``   a comparison left out queries some system lacks
``DegenerateTestWarning``   a comparison's test cannot decide some rows (no variance,
                            too few queries); they are not marked significant
==========================  ===========================================================
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "brief_repr",
    "IrMetricsError",
    "InputFormatError",
    "DuplicateEntryError",
    "NotUtf8Error",
    "UnknownMeasureError",
    "ParameterError",
    "InputTypeError",
    "ParameterTypeError",
    "ShapeError",
    "NoQueriesError",
    "UserMeasureError",
    "AlreadyImportedError",
    "IrMetricsWarning",
    "MissingQueriesWarning",
    "QueryAlignmentWarning",
    "DegenerateTestWarning",
    "ComparisonError",
]


#: Most characters of a value (an id, a parameter) a message quotes; a longer one keeps
#: its start and end, and says how long it is, so a message stays one readable line.
BRIEF_CHARS = 80


def brief_repr(value, limit: int = BRIEF_CHARS) -> str:
    """``repr(value)``, cut around "..." when longer than ``limit`` characters.

    A cut repr keeps its first ``limit * 2 // 3`` and last ``max(1, limit // 6)``
    characters and says how long the value was.

    Parameters
    ----------
    value : object
    limit : int, default BRIEF_CHARS
        Longest repr kept whole.

    Returns
    -------
    str

    Examples
    --------
    >>> brief_repr("q" * 1000, limit=20)
    "'qqqqqqqqqqqq...qq' (1,000 characters)"
    >>> brief_repr("q1")
    "'q1'"
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, max(1, limit // 6)
    size = (f"{len(value):,} characters" if isinstance(value, (str, bytes))
            else f"{len(text):,} characters as text")
    return f"{text[:head]}...{text[-tail:]} ({size})"


class IrMetricsError(Exception):
    """Base class of every error raised deliberately by irmetrics."""


class InputFormatError(IrMetricsError, ValueError):
    """Malformed input data: a TREC file, or an in-memory qrels/run table.

    Parameters
    ----------
    reason : str
        What is wrong, e.g. ``"expected 4 fields (query_id iteration doc_id relevance),
        found 3"``.
    path : str, optional
        The file (``"<stdin>"`` for standard input) or a description of an in-memory
        source such as ``"<dict>"``, ``"<DataFrame>"`` or ``"<records>"``.
    line : int, optional
        1-based physical line number in the file (every line counts, comments and blank
        lines included); for in-memory tables the 1-based row/record number. ``None`` when
        the error is not tied to one line (missing file, empty file).
    query_id, doc_id : str, optional
        The ids on the offending line, when known.

    Notes
    -----
    ``str(err)`` is a single line::

        <path>:<line>: <reason> (query_id '<q>', doc_id '<d>')

    where ``:<line>`` is left out when ``line`` is None and the parenthesised part lists only
    the ids that are known.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | None = None,
        line: int | None = None,
        query_id: str | None = None,
        doc_id: str | None = None,
    ) -> None:
        self.reason = reason
        self.path = path
        self.line = line
        self.query_id = query_id
        self.doc_id = doc_id
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path if self.path is not None else "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        ids = []
        if self.query_id is not None:
            ids.append(f"query_id {brief_repr(self.query_id)}")
        if self.doc_id is not None:
            ids.append(f"doc_id {brief_repr(self.doc_id)}")
        suffix = f" ({', '.join(ids)})" if ids else ""
        return f"{where}: {self.reason}{suffix}"

    def __str__(self) -> str:
        return self._format()

    def __reduce__(self):  # keyword-only constructor: keep the error picklable
        kwargs = dict(path=self.path, line=self.line, query_id=self.query_id, doc_id=self.doc_id)
        return (_rebuild, (type(self), self.reason, kwargs))


def _rebuild(cls, reason, kwargs):
    return cls(reason, **kwargs)


class DuplicateEntryError(InputFormatError):
    """A (query_id, doc_id) pair occurs more than once and ``on_duplicate="error"``.

    ``line`` is the second occurrence (the first in input order that repeats an earlier
    pair); the reason names the line of the first occurrence when it is known.
    """


class NotUtf8Error(InputFormatError):
    """A text file read with ``encoding="utf-8"`` holds bytes that are not UTF-8 (but no
    NUL or other sign of binary data): typically the ids of a Latin-1 collection.

    :func:`~irmetrics.evaluate` and :class:`~irmetrics.Evaluator` catch it and evaluate
    such files byte for byte, as trec_eval does (``Results.id_encoding == "latin-1"``).
    """


class UnknownMeasureError(IrMetricsError, ValueError):
    """A measure name that the registry does not know.

    Parameters
    ----------
    name : str
        The name as the user wrote it.
    suggestions : sequence of str, optional
        Close matches, best first; kept in the ``suggestions`` attribute (a list).
    note : str, optional
        Why a name that another tool knows is not computed here (replaces the
        suggestions in the message).

    Examples
    --------
    >>> str(UnknownMeasureError("mapp", ["map", "map_cut"]))
    "unknown measure 'mapp'; did you mean 'map' or 'map_cut'?"
    """

    def __init__(self, name: str, suggestions: Sequence[str] = (), note: str = "") -> None:
        self.name = name
        self.suggestions = list(suggestions)
        self.note = note  # why a name known elsewhere (ir_measures) is not computed here
        super().__init__(name, self.suggestions)

    def __str__(self) -> str:
        msg = f"unknown measure {self.name!r}"
        if self.note:
            return f"{msg}: {self.note}."
        if self.suggestions:
            quoted = [repr(s) for s in self.suggestions]
            alts = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
            return f"{msg}; did you mean {alts}?"
        return msg + "."


class ParameterError(IrMetricsError, ValueError):
    """An argument has an invalid value.

    Messages follow one template, ``"`<param>` must be <constraint>; got <value!r>."``;
    build them with :func:`irmetrics.checks.parameter_error`.
    """


class InputTypeError(InputFormatError, TypeError):
    """An in-memory qrels or run holds a value of the wrong type: a label that is not an
    integer (``"1"``, ``None``, ``1.5``), a score that is not a real number.

    Also a :class:`TypeError`, which is what pytrec_eval raises for the same input, so
    code written against pytrec_eval (``except TypeError``) keeps working.
    """


class ParameterTypeError(ParameterError, TypeError):
    """An argument of the wrong type (``[...]`` where a dict is expected, ``"yes"`` for
    a flag, ``1.5`` for a relevance level); also a :class:`TypeError`, as in pytrec_eval.
    """


class ShapeError(IrMetricsError, ValueError):
    """Arrays or tables whose shapes do not fit together."""


class NoQueriesError(IrMetricsError, ValueError):
    """Nothing to evaluate: no query of the run is in the qrels (or the input is empty).

    trec_eval exits with status 7 here; a mean over zero queries would be NaN by accident.
    """


class UserMeasureError(IrMetricsError, ValueError):
    """A user-defined measure (:func:`irmetrics.define_measure`) failed on a query or
    returned values that are not one finite number per query.

    ``measure`` is its spelling (``"GradedP(alpha=0.5)@10"``), ``query_id`` the query it
    failed on (None when no single query can be named); the user's own exception, if
    any, is the ``__cause__``.
    """

    def __init__(self, message: str, *, measure: str | None = None,
                 query_id: str | None = None) -> None:
        self.measure = measure
        self.query_id = query_id
        super().__init__(message)

    def __reduce__(self):  # keyword-only fields: keep the error picklable (Spark)
        return (_rebuild_user_error, (type(self), str(self), self.measure, self.query_id))


def _rebuild_user_error(cls, message, measure, query_id):
    return cls(message, measure=measure, query_id=query_id)


class AlreadyImportedError(IrMetricsError, ImportError):
    """A drop-in cannot take a library's name (:func:`irmetrics.compat.install`): the real
    library is already imported, and its callers may hold its objects.

    ``name`` is the library's module name (``"pytrec_eval"``).
    """


class IrMetricsWarning(UserWarning):
    """Base class of every warning issued by irmetrics."""


class MissingQueriesWarning(IrMetricsWarning):
    """Qrels queries absent from the run were skipped (not evaluated, not averaged).

    trec_eval 9 and pytrec_eval skip them silently, trec_eval 10 stops; ``complete=True``
    (trec_eval ``-c``) evaluates them instead. The skipped ids are
    ``Results.missing_query_ids``.
    """


class QueryAlignmentWarning(IrMetricsWarning):
    """Some queries are not evaluated for every system and were left out of a comparison."""


class DegenerateTestWarning(IrMetricsWarning):
    """A comparison's test cannot decide some rows: the differences have no variance (the
    t test's t is infinite), or too few queries (or resamples) differ for any
    distribution-free test to reach alpha. Those rows are not marked significant; the
    table's ``caveat`` column says why."""


class ComparisonError(IrMetricsError, ValueError):
    """The systems cannot be compared (no common query, a NaN per-query value, ...)."""
