"""Intent-aware (subtopic) qrels for the diversity measures: ``query_id intent doc_id relevance``.

This is ndeval's qrels format (``topic subtopic docno judgment``; TREC Web track
diversity qrels). It has four fields like standard TREC qrels, whose second field is an
unused iteration number, so a file is never guessed to be one or the other: read it with
:func:`read_diversity_qrels` (CLI: ``-R diversity``).

Line syntax is the package's (:mod:`irmetrics.io.prefs`): fields separated by runs of
C whitespace, blank and ``#`` comment lines skipped, gzip recognised, errors naming the
file, the 1-based line, the query id and the doc id. ``relevance`` is an integer; a
repeated ``(query_id, intent, doc_id)`` is an error (ndeval would count the document
twice for that intent).
"""

from __future__ import annotations

from .prefs import GroupedJudgments, _as_polars


class DiversityQrels(GroupedJudgments):
    """Relevance judgments per query intent (subtopic), for the diversity measures.

    A document may be judged for several intents of a query; a document judged for
    none is unjudged. Intents are kept in order of first appearance: ndeval adds the
    intents' gains in that order, which decides exact ties of its ideal ranking.

    Attributes
    ----------
    df : polars.DataFrame
        Columns ``query_id, intent, doc_id`` (String) and ``relevance`` (Int64); unique
        per ``(query_id, intent, doc_id)``.
    path : str or None
        File the judgments were read from.

    Examples
    --------
    >>> qrels = DiversityQrels.from_records([("q1", "1", "d1", 1), ("q1", "2", "d1", 0)])
    >>> qrels.df["intent"].to_list()
    ['1', '2']
    """

    GROUP = "intent"
    GROUP_NAME = "intent"

    @classmethod
    def from_df(cls, df) -> "DiversityQrels":
        """Build from a frame with columns ``query_id, intent, doc_id, relevance``.

        ir_measures' name for the intent column, ``iteration``, is accepted too. Ids
        may be strings or integers; the frame is not modified.
        """
        df = _as_polars(df, "df")
        if "intent" not in df.columns and "iteration" in df.columns:
            df = df.rename({"iteration": "intent"})
        return cls(df)

    @classmethod
    def read(cls, path) -> "DiversityQrels":
        """Read an intent-aware qrels file; see :func:`read_diversity_qrels`."""
        return read_diversity_qrels(path)

    def __repr__(self) -> str:
        n_q = self.df["query_id"].n_unique()
        n_i = self.df.select("query_id", "intent").unique().height
        return f"DiversityQrels({self.df.height} judgments, {n_q} queries, {n_i} intents)"


def read_diversity_qrels(path) -> DiversityQrels:
    """Read intent-aware qrels: ``query_id intent doc_id relevance`` per line.

    Parameters
    ----------
    path : str or os.PathLike
        Plain text, or gzip when the name ends in ``.gz``.

    Returns
    -------
    DiversityQrels

    Raises
    ------
    InputFormatError
        Empty file, a line without exactly four fields, a non-integer relevance (file,
        1-based line, query id and doc id named).
    DuplicateEntryError
        The same ``(query_id, intent, doc_id)`` appears twice.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".qrels", delete=False) as f:
    ...     _ = f.write("1 1 d1 1\\n1 2 d1 0\\n1 2 d2 1\\n")
    >>> read_diversity_qrels(f.name)
    DiversityQrels(3 judgments, 1 queries, 2 intents)
    >>> os.unlink(f.name)
    """
    return DiversityQrels._read_file(path)
