"""Judgments with uncertainty: label distributions per (query, doc), the expected value of
each measure under them (exact for P@k, sampled with a stated error elsewhere) and
intervals that carry both the topic sampling and the label sampling
(docs/incomplete_judgments.md)."""

from __future__ import annotations

import math
import os
import warnings
from typing import NamedTuple

import numpy as np
import polars as pl

from ..evaluate import as_qrels, as_run, evaluate
from ..checks import check_choice
from ..exceptions import InputFormatError, MissingQueriesWarning, ParameterError
from ..measures.parse import parse_measures
from ..parallel import block_generators, map_ordered
from ..results import Results
from ..stats import confidence_interval

__all__ = ["Expected", "as_label_distribution", "evaluate_uncertain", "label_standard_error"]

#: How far a (query, doc)'s probabilities may sum from 1.
TOLERANCE = 1e-6
#: Label samples drawn by one generator (a function of nothing else: same draws whatever
#: the thread count).
_BLOCK = 64
_KEY = ["query_id", "doc_id"]
_SCHEMA = {"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64,
           "prob": pl.Float64}
#: Where a row was read (1-based line of the file; null for dicts and frames).
_LINE = {"line": pl.Int64}


def _read_file(path) -> pl.DataFrame:
    """``query iter doc label prob`` lines, with each row's line number (``line``);
    errors name file and line."""
    rows: list = [[], [], [], [], []]
    name = os.fspath(path)
    # utf-8-sig: a BOM from a Windows editor would join the first query id
    with open(name, encoding="utf-8-sig") as f:
        try:
            lines = f.readlines()
        except UnicodeDecodeError:
            raise InputFormatError("not UTF-8 text", path=name) from None
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 5:
                raise InputFormatError("a label distribution line must be `query iter doc"
                                       f" label prob`; got {line.strip()!r}", path=name,
                                       line=number)
            try:
                label, prob = int(fields[3]), float(fields[4])
            except ValueError:
                raise InputFormatError("label must be an integer and prob a number; got"
                                       f" {fields[3]!r} {fields[4]!r}", path=name,
                                       line=number, query_id=fields[0],
                                       doc_id=fields[2]) from None
            for column, value in zip(rows, (fields[0], fields[2], label, prob, number)):
                column.append(value)
    return pl.DataFrame(dict(zip([*_SCHEMA, "line"], rows)), schema={**_SCHEMA, **_LINE})


def as_label_distribution(labels) -> pl.DataFrame:
    """Label distributions as a frame: ``query_id, doc_id, relevance, prob``, one row per
    (query, doc, label).

    Parameters
    ----------
    labels : path, dict or DataFrame
        A file of ``query iter doc label prob`` lines (TREC qrels with a probability
        column), ``{query: {doc: {label: prob}}}``, or a polars/pandas frame with those
        four columns.

    Returns
    -------
    polars.DataFrame
        Sorted by query, doc and label.

    Raises
    ------
    InputFormatError
        A (query, doc)'s probabilities do not sum to 1 (within 1e-6), a probability
        outside [0, 1], a negative label or one (query, doc, label) twice; the message
        names the query and the document. No distribution at all (an empty file).

    Examples
    --------
    >>> df = as_label_distribution({"q1": {"d1": {0: 0.25, 2: 0.75}}})
    >>> df.rows()
    [('q1', 'd1', 0, 0.25), ('q1', 'd1', 2, 0.75)]
    >>> as_label_distribution({"q1": {"d1": {1: 0.5}}})
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.InputFormatError: <dict>: `probabilities` must sum to 1; got 0.5 (query_id 'q1', doc_id 'd1')
    """
    return _distribution(labels)[0].drop("line")


def _distribution(labels) -> tuple[pl.DataFrame, str]:
    """:func:`as_label_distribution`'s frame with each row's file line (``line``), and
    the source's name for errors."""
    source = "<dict>" if isinstance(labels, dict) else "<DataFrame>"
    if isinstance(labels, (str, os.PathLike)):
        df, source = _read_file(labels), os.fspath(labels)
    elif isinstance(labels, dict):
        rows = [(str(q), str(d), int(label), float(p)) for q, docs in labels.items()
                for d, dist in docs.items() for label, p in dist.items()]
        df = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
    else:
        frame = labels if isinstance(labels, pl.DataFrame) else pl.from_pandas(labels)
        missing = [c for c in _SCHEMA if c not in frame.columns]
        if missing:
            raise ParameterError(f"`labels` must have the columns {list(_SCHEMA)}; got"
                                 f" {frame.columns!r}.")
        df = frame.select([pl.col(c).cast(t) for c, t in _SCHEMA.items()])
    if not df.height:  # nothing to sample (the engine's arrays would be empty)
        raise InputFormatError("no label distributions (an empty file, mapping or frame;"
                               " with nothing uncertain, irmetrics.evaluate gives the values)",
                               path=source)
    if "line" not in df.columns:
        df = df.with_columns(line=pl.lit(None, dtype=pl.Int64))
    df = df.sort(["query_id", "doc_id", "relevance"])
    _check(df, source)
    return df, source


def _refuse(df: pl.DataFrame, mask, reason: str, column: str, path: str = "<labels>") -> None:
    """A clear error naming the first (query, doc) of ``df`` where ``mask`` holds (and
    its file line, where ``df`` has one)."""
    bad = df.filter(mask)
    if bad.height:
        row = bad.sort("line", nulls_last=True).row(0, named=True) \
            if "line" in bad.columns else bad.row(0, named=True)
        raise InputFormatError(f"{reason}; got {row[column]!r}", path=path,
                               line=row.get("line"), query_id=row["query_id"],
                               doc_id=row["doc_id"])


def _check(df: pl.DataFrame, path: str) -> None:
    _refuse(df, (pl.col("prob") < 0) | (pl.col("prob") > 1) | pl.col("prob").is_nan(),
            "`prob` must be in [0, 1]", "prob", path)
    _refuse(df, pl.col("relevance") < 0, "`label` must be a grade (0 or more)", "relevance",
            path)
    triple = ["query_id", "doc_id", "relevance"]
    # name the repeat (a later line), not the first occurrence
    _refuse(df, pl.struct(triple).is_duplicated()
            & (pl.col("line").is_null() | (pl.col("line") > pl.col("line").min().over(triple))),
            "`label` must appear once per (query, doc)", "relevance", path)
    sums = df.group_by(_KEY, maintain_order=True).agg(pl.col("prob").sum(),
                                                      pl.col("line").min())
    _refuse(sums, (pl.col("prob") - 1).abs() > TOLERANCE,
            "`probabilities` must sum to 1", "prob", path)


class Expected(NamedTuple):
    """Expected values under label distributions.

    Attributes
    ----------
    results : Results
        Per query, for every output ``m``: ``m`` (its expected value) and ``m_se`` (the
        standard error of that value from the label samples; 0 where exact).
    intervals : dict
        ``{m: ConfidenceInterval}`` of the mean over topics, from the per-topic sampled
        means (topic and label sampling together; Student's t or a bootstrap over
        topics).
    se : dict
        ``{m: standard error of the mean from the label samples alone}`` (0 where exact;
        :func:`label_standard_error` of the per-query ``m_se``).
    exact : tuple of str
        The outputs computed exactly (P@k, linear in the labels).
    samples : int
        Label samples drawn.
    """

    results: Results
    intervals: dict
    se: dict
    exact: tuple
    samples: int


def label_standard_error(per_query_se) -> float:
    r"""Standard error, from the label samples alone, of a mean over topics.

    Each topic's labels are drawn independently of the others', so the per-topic
    errors :math:`se_q` add in quadrature:

    .. math:: se = \frac{1}{Q} \sqrt{\sum_q se_q^2}.

    Parameters
    ----------
    per_query_se : array_like
        The per-topic standard errors (``m_se`` of :func:`evaluate_uncertain`), on the
        topics the mean is over.

    Returns
    -------
    float
        0 for no topics.

    Examples
    --------
    >>> label_standard_error([0.3, 0.4])
    0.25
    """
    se = np.asarray(per_query_se, dtype=np.float64)
    return float(np.sqrt(np.sum(se ** 2)) / se.size) if se.size else 0.0


def _sampler(dist: pl.DataFrame):
    """``draw(rng, n) -> (n, G) labels`` of the G (query, doc) pairs, by inverse CDF."""
    q, d = dist["query_id"].to_numpy(), dist["doc_id"].to_numpy()
    new = np.r_[True, (q[1:] != q[:-1]) | (d[1:] != d[:-1])] if q.size else np.zeros(0, bool)
    pair = np.cumsum(new) - 1
    prob = dist["prob"].to_numpy()
    labels = dist["relevance"].to_numpy()
    n_pairs = int(pair.max()) + 1 if pair.size else 0
    within = pl.Series(prob).cum_sum().to_numpy() - np.repeat(
        np.concatenate(([0.0], np.bincount(pair, prob).cumsum()[:-1])),
        np.bincount(pair, minlength=n_pairs))
    # Global CDF: pair g covers (g, g + 1]; each pair's last step is set to g + 1 exactly.
    last = np.r_[pair[1:] != pair[:-1], True]
    cdf = np.where(last, pair + 1.0, pair + np.minimum(within, 1.0))

    def draw(rng, n):
        u = rng.random((n, n_pairs))
        idx = np.searchsorted(cdf, np.arange(n_pairs) + u, side="left")
        return labels[np.minimum(idx, labels.size - 1)]
    return draw


def _exact_p(plain: pl.DataFrame, dist: pl.DataFrame, run, requests, level_default,
             max_docs, base: Results) -> dict:
    """E[P@k] = P@k with every distributed document at label 0, plus, per distributed
    document in the top k, ``(P(label >= level) - [0 >= level]) / k``."""
    ranked = (run.df.sort(["query_id", "score", "doc_id"], descending=[False, True, True])
              .with_columns(rank=pl.int_range(1, pl.len() + 1).over("query_id")))
    if max_docs is not None:
        ranked = ranked.filter(pl.col("rank") <= max_docs)
    out = {}
    for req in requests:
        level = level_default if req.relevance_level is None else req.relevance_level
        p_rel = (dist.group_by(_KEY).agg(
            (pl.col("prob") * (pl.col("relevance") >= level)).sum().alias("p"))
            .with_columns(pl.col("p") - float(0 >= level)))
        hits = ranked.join(p_rel, on=_KEY, how="inner")
        for name, k in zip(req.output_names, req.params):
            add = (hits.filter(pl.col("rank") <= k).group_by("query_id")
                   .agg((pl.col("p").sum() / k).alias("a")))
            lookup = dict(zip(add["query_id"].to_list(), add["a"].to_list()))
            extra = np.array([lookup.get(q, 0.0) for q in base.query_ids])
            out[name] = base.values(name) + extra
    return out


def evaluate_uncertain(qrels, labels, run, measures, *, samples=1000, seed=0, level=0.95,
                       grades=None, exact=True, interval="t", n_resamples=10_000,
                       threads=None, **options) -> Expected:
    r"""Expected value of each measure when some labels are distributions.

    Every (query, doc) of ``labels`` takes label ``l`` with probability ``p_l``,
    independently; the other labels are ``qrels``'. For each output ``m`` and query q

    .. math:: E[m_q] = \sum_{\text{labellings } L} \Pr(L)\, m_q(L),

    exact for P@k (linear in each document's relevance:
    :math:`E[P@k] = \frac{1}{k}\sum_{i \le k} \Pr(\text{label}_i \ge \text{level})`),
    otherwise the mean over ``samples`` seeded labellings with the standard error
    :math:`s_q / \sqrt{S}`. The interval of the mean over topics is a percentile bootstrap
    over topics of the per-topic sampled means, so it carries the topic sampling and the
    error of the label sampling together. Simulated coverage at a nominal 95 %
    (docs/incomplete_judgments.md, Coverage): 0.938, 0.945, 0.932 at 10, 20, 40 topics
    with ``interval="t"``; 0.925, 0.935, 0.932 with the BCa bootstrap.

    Parameters
    ----------
    qrels : Qrels, path, dict or DataFrame
        The plain labels (may be ``{}``).
    labels : path, dict or DataFrame
        The label distributions (:func:`as_label_distribution`).
    run, measures, **options
        As :func:`irmetrics.evaluate` (not ``judged_only``, ``unjudged``, ``ties``).
    samples : int
        Labellings drawn (in blocks of 64, each from its own generator of
        :func:`irmetrics.parallel.block_generators`: the same draws whatever ``threads``).
    seed : int
    level : float
        Confidence level of the intervals.
    grades : (int, int) or None
        The grade range labels must lie in; None: 0 to the plain qrels' highest label
        (no upper limit when the plain qrels are empty).
    exact : bool
        False samples P@k too.
    interval : {"t", "bootstrap"}
        The interval over topics of the per-topic sampled means: Student's t, or a BCa
        bootstrap (:func:`irmetrics.stats.confidence_interval`).
    n_resamples : int
        Bootstrap resamples of the topics (``interval="bootstrap"``).
    threads : int or None
        :func:`irmetrics.parallel.resolve_threads`; the result does not depend on it.

    Returns
    -------
    Expected

    Raises
    ------
    InputFormatError
        A distribution for a (query, doc) the plain qrels also judge, a label outside the
        grade range, or a malformed distribution (:func:`as_label_distribution`); the
        message names the query and the document.

    Examples
    --------
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    >>> labels = {"q1": {"x": {0: 0.5, 1: 0.5}}, "q2": {"y": {0: 0.2, 1: 0.8}}}
    >>> run = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"y": 2.0, "b": 1.0}}
    >>> ex = evaluate_uncertain(qrels, labels, run, ["P@2", "recip_rank"], samples=200)
    >>> ex.results.to_dict()["q1"]["P@2"], ex.exact
    (0.75, ('P@2',))
    >>> round(ex.results.to_dict()["q2"]["recip_rank"], 1)   # 0.8 in expectation
    0.8
    """
    for option in ("judged_only", "unjudged", "ties"):
        if option in options:
            raise ParameterError(f"`{option}` must be left out of evaluate_uncertain; got"
                                 f" {options[option]!r}.")
    check_choice("interval", interval, ("t", "bootstrap"))
    samples = int(samples)
    if samples < 2:
        raise ParameterError(f"`samples` must be an integer >= 2; got {samples!r}.")
    dist, source = _distribution(labels)
    plain = as_qrels(qrels).df
    both = dist.join(plain.select(_KEY).unique(), on=_KEY, how="semi").join(
        plain.select([*_KEY, pl.col("relevance").alias("plain")]), on=_KEY)
    _refuse(both, pl.lit(True), "a label distribution must not be given for a document the"
            " qrels judge plainly (plain label)", "plain", source)
    lo, hi = grades if grades is not None else (
        0, max(0, int(plain["relevance"].to_numpy().max())) if plain.height else math.inf)
    _refuse(dist, (pl.col("relevance") < lo) | (pl.col("relevance") > hi),
            f"`label` must be in the grade range [{lo}, {hi}]", "relevance", source)
    run = as_run(run)
    requests = parse_measures(measures)
    # The exact P@k ranks as trec_eval does; other semantics (float32 scores) sample it.
    linear = [r for r in requests if exact and r.measure.name == "P"
              and options.get("semantics", "trec_eval") == "trec_eval"]
    exact_names = tuple(n for r in linear for n in r.output_names)
    pairs = dist.unique(_KEY, maintain_order=True).select(_KEY)
    draw = _sampler(dist)

    def one(sampled) -> Results:
        q = pl.concat([plain.select(["query_id", "doc_id", "relevance"]),
                       pairs.with_columns(relevance=pl.Series(sampled, dtype=pl.Int64))])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)
            return evaluate(q.with_columns(iteration=pl.lit("0")), run, measures,
                            **options)

    n_blocks = -(-samples // _BLOCK)
    gens = block_generators(seed, n_blocks)
    blocks = [(g, min(_BLOCK, samples - i * _BLOCK)) for i, g in enumerate(gens)]
    drawn = np.concatenate([draw(g, n) for g, n in blocks]) if pairs.height else \
        np.zeros((samples, 0), dtype=np.int64)
    base = one(np.zeros(pairs.height, dtype=np.int64))  # warns as evaluate does, once
    runs = map_ordered(one, list(drawn), threads=threads)
    out_cols: dict = {}
    specs: dict = {}
    intervals, se = {}, {}
    exact_values = _exact_p(plain, dist, run, linear, options.get("relevance_level", 1),
                            options.get("max_docs"), base) if linear else {}
    for name in base.names:
        matrix = np.stack([r.values(name) for r in runs])  # (S, Q)
        if name in exact_values:
            mean, sd = exact_values[name], np.zeros(matrix.shape[1])
            per_topic = mean
        else:
            mean, sd = matrix.mean(axis=0), matrix.std(axis=0, ddof=1)
            per_topic = mean
        out_cols[name], out_cols[name + "_se"] = mean, sd / math.sqrt(samples)
        se[name] = label_standard_error(out_cols[name + "_se"])
        specs[name] = specs[name + "_se"] = base.measure_of(name)
        intervals[name] = confidence_interval(per_topic, method=interval, level=level,
                                              n_resamples=n_resamples, seed=seed,
                                              threads=threads)
    results = Results(base.query_ids, out_cols, specs, run_name=base.run_name,
                      missing_query_ids=base.missing_query_ids,
                      ignored_query_ids=base.ignored_query_ids, road=base.road)
    return Expected(results, intervals, se, exact_names, samples)
