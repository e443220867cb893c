"""The columns of qrels and runs, their defaults, and what a repeated (query_id, doc_id)
pair does: shared by the containers (:mod:`irmetrics.containers.tables`) and the TREC text
reader (:mod:`irmetrics.containers.trec_text`), below both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl
else:
    from irmetrics.lazy import polars as pl  # imported on first use

from irmetrics.exceptions import DuplicateEntryError

__all__ = ["DEFAULT_QRELS_ITERATION", "DEFAULT_RUN_ITERATION", "DEFAULT_RUN_NAME",
           "DUPLICATE_POLICIES", "FLOAT_LABEL_HINT", "QRELS_DTYPES", "QRELS_SCHEMA",
           "RUN_DTYPES", "RUN_SCHEMA", "polars_schema", "resolve_duplicates"]

#: How the bytes of ids become str: UTF-8 (the default), or Latin-1, the one decoding
#: of any byte string that keeps byte order (trec_eval compares ids as bytes).
UTF8, LATIN1 = "utf-8", "latin-1"
ENCODINGS = (UTF8, LATIN1)

#: How qrels labels are read: integers as trec_eval (default), or finite floats.
RELEVANCE_TYPES = ("int", "float")

#: Accepted values of every ``on_duplicate`` argument.
DUPLICATE_POLICIES = ("error", "first", "last", "max")

#: The columns of a qrels table and of a run, in order, with the name of each one's polars
#: type. :data:`QRELS_SCHEMA` and :data:`RUN_SCHEMA`, the types themselves, are made from
#: them on first use, so that ``import irmetrics`` and the dict road do not import polars.
QRELS_DTYPES = {"query_id": "String", "iteration": "String", "doc_id": "String",
                "relevance": "Int64"}
RUN_DTYPES = {"query_id": "String", "iteration": "String", "doc_id": "String",
              "rank": "Int64", "score": "Float64", "run_id": "String"}
_SCHEMAS = {"QRELS_SCHEMA": QRELS_DTYPES, "RUN_SCHEMA": RUN_DTYPES}
if TYPE_CHECKING:  # made by __getattr__ below
    QRELS_SCHEMA: dict[str, pl.DataType]
    RUN_SCHEMA: dict[str, pl.DataType]


def polars_schema(dtypes: Mapping[str, str]) -> dict[str, pl.DataType]:
    """``{column: polars type}`` from ``{column: name of the type}``.

    Examples
    --------
    >>> polars_schema({"doc_id": "String", "score": "Float64"})
    {'doc_id': String, 'score': Float64}
    """
    return {name: getattr(pl, dtype)() for name, dtype in dtypes.items()}


def __getattr__(name: str):
    # QRELS_SCHEMA and RUN_SCHEMA (PEP 562): polars' types, made and kept on first use.
    if name in _SCHEMAS:
        value = globals()[name] = polars_schema(_SCHEMAS[name])
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


DEFAULT_QRELS_ITERATION = "0"
DEFAULT_RUN_ITERATION = "Q0"
DEFAULT_RUN_NAME = "irmetrics"

#: Appended to "relevance must be an integer" when the label is a real number.
FLOAT_LABEL_HINT = " (graded float labels: relevance='float', or --float-relevance)"

_KEYS = ["query_id", "doc_id"]




def resolve_duplicates(
    df: pl.DataFrame,
    *,
    value: str,
    policy: str,
    source: str | None,
    line_col: str | None = None,
    unit: str | None = "line",
) -> pl.DataFrame:
    """Apply an ``on_duplicate`` policy to repeated (query_id, doc_id) pairs.

    Parameters
    ----------
    df : polars.DataFrame
        Has ``query_id`` and ``doc_id`` columns, in input order.
    value : str
        Column maximised by ``policy="max"`` (``"relevance"`` or ``"score"``).
    policy : {"error", "first", "last", "max"}
        ``"error"`` raises :class:`DuplicateEntryError` naming the first repeated row in
        input order and, when ``unit`` is given, where the pair was first seen. The others
        keep one row per pair, at that row's own position: the first, the last, or the one
        with the largest ``value`` (the first of those on ties).
    source : str or None
        ``path`` of the error.
    line_col : str, optional
        Column with the line number of each row; by default row ``i`` is line ``i + 1``.
    unit : str or None
        Word used in the message ("line", "row", "record"); None: no position is reported.

    Returns
    -------
    polars.DataFrame
        ``df`` itself when no pair repeats; else its kept rows, in input order.

    Raises
    ------
    DuplicateEntryError
        Under ``policy="error"``, for the first repeated pair.

    Notes
    -----
    Cost on the common path (no duplicates) is two string hashes per row plus
    ``n_unique`` of their combination; the exact comparison only runs when two combined
    hashes collide.

    Examples
    --------
    >>> df = pl.DataFrame({"query_id": ["q1", "q1", "q1"], "doc_id": ["a", "b", "a"],
    ...                    "score": [1.0, 3.0, 2.0]})
    >>> resolve_duplicates(df, value="score", policy="first", source=None).rows()
    [('q1', 'a', 1.0), ('q1', 'b', 3.0)]
    >>> resolve_duplicates(df, value="score", policy="max", source=None).rows()
    [('q1', 'b', 3.0), ('q1', 'a', 2.0)]
    >>> resolve_duplicates(df, value="score", policy="error", source="run.txt")
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.DuplicateEntryError: run.txt:3: duplicate (query_id, doc_id); first seen on line 1 (query_id 'q1', doc_id 'a')
    """
    if df.height < 2:
        return df
    pair_hash = pl.col("query_id").hash(seed=0x5EED) ^ pl.col("doc_id").hash(seed=0xD0C5)
    n_hashes = df.select(pair_hash.n_unique()).item()
    if n_hashes == df.height:
        return df
    first = df.select(pl.struct(_KEYS).is_first_distinct()).to_series()
    if first.all():  # a hash collision, no real duplicate
        return df
    if policy == "error":
        i = int((~first).arg_true()[0])
        q, d = df["query_id"][i], df["doc_id"][i]
        j = int(
            df.select(((pl.col("query_id") == q) & (pl.col("doc_id") == d)).arg_true().first()).item()
        )
        if unit is None:
            raise DuplicateEntryError(
                "duplicate (query_id, doc_id)", path=source, query_id=q, doc_id=d
            )
        line_i = int(df[line_col][i]) if line_col else i + 1
        line_j = int(df[line_col][j]) if line_col else j + 1
        raise DuplicateEntryError(
            f"duplicate (query_id, doc_id); first seen on {unit} {line_j}",
            path=source,
            line=line_i,
            query_id=q,
            doc_id=d,
        )
    if policy == "first":
        return df.filter(first)
    if policy == "last":
        return df.filter(pl.struct(_KEYS).is_last_distinct())
    if policy == "max":
        best = df.filter(pl.col(value) == pl.col(value).max().over(_KEYS))
        return best.filter(pl.struct(_KEYS).is_first_distinct())
    raise AssertionError(policy)  # pragma: no cover - validated by callers
