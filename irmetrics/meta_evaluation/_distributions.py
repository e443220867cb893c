"""Judgment sets given as label distributions in :func:`irmetrics.meta_evaluate`.

Each run is scored by its expected value under the distributions, computed in one place
(:func:`irmetrics.judgment_formats.evaluate_uncertain`), with the same seed and so the
same label samples for every run. The leaderboards are made of the per-topic expected
values; the judges compare each distribution's most likely label.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from ..checks import check_int, parameter_error
from ..containers import Qrels
from ..evaluate import as_qrels, as_run
from ..io.output import file_inputs
from ..judgment_formats import as_label_distribution, evaluate_uncertain, label_standard_error
from ..results import Results
from .grid import Grid, evaluate_grid, named_inputs

#: evaluate()'s defaults as evaluate_grid passes them: "not set" for evaluate_uncertain,
#: which refuses these options outright.
_DEFAULTS = {"judged_only": False, "ties": "trec_eval"}


def checked(label_distributions, label_samples, nuggets, options: dict) -> tuple[dict, int]:
    """``{name: labels}`` and the number of label samples, checked before any work (with
    the evaluation ``options`` that :func:`evaluate_uncertain` refuses)."""
    if not isinstance(label_distributions, Mapping) or not label_distributions:
        raise parameter_error("label_distributions", "a dict {qrels name: label"
                              " distributions} with at least one entry", label_distributions)
    for name in label_distributions:
        if not isinstance(name, str) or not name:
            raise parameter_error("label_distributions", "a dict with non-empty string"
                                  " names", name)
    if nuggets is not None:
        raise parameter_error("label_distributions", "None with nugget measures (label"
                              " distributions are per (query, doc))", "<label distributions>")
    for name, default in (*_DEFAULTS.items(), ("relevance", "int")):
        if options.get(name, default) != default:
            raise parameter_error(name, f"{default!r} (its default) with label_distributions",
                                  options[name])
    samples = check_int("label_samples", label_samples, min=2)
    return dict(label_distributions), samples


def _expected_only(res: Results) -> Results:
    """The expected values of :func:`evaluate_uncertain`'s results, without the ``_se``
    columns (a grid's cells must share their outputs)."""
    names = [n for n in res.names if not (n.endswith("_se") and n[:-3] in res.names)]
    return Results(res.query_ids, {n: res.values(n) for n in names},
                   {n: res.measure_of(n) for n in names}, run_name=res.run_name,
                   missing_query_ids=res.missing_query_ids,
                   ignored_query_ids=res.ignored_query_ids, road=res.road)


def plain_qrels(named_qrels: dict, name: str, options: dict) -> Qrels:
    """The plain labels a distribution set completes: the qrels set of that name, or
    none."""
    if name not in named_qrels:
        return as_qrels({})
    return as_qrels(named_qrels[name], options.get("qrels_columns"),
                    options.get("relevance", "int"))


def expected_cells(named_qrels: dict, distributions: dict, named_runs: dict, measures, *,
                   samples: int, seed, threads, options: dict) -> tuple[dict, list]:
    """``{(qrels, run): Results}`` of the expected values, and the rows of the label
    standard errors (``qrels``, ``run``, ``measure``, ``label_se``: the error of the run's
    mean from the label samples, :func:`label_standard_error`)."""
    kept = {k: v for k, v in options.items()
            if k not in ("qrels_columns", "run_columns", "progress") and _DEFAULTS.get(k, object()) != v}
    plain = {name: plain_qrels(named_qrels, name, options) for name in distributions}
    cells, rows = {}, []
    for run_name, run in named_runs.items():
        run = as_run(run, options.get("run_columns"))
        for name, labels in distributions.items():
            res = evaluate_uncertain(plain[name], labels, run, measures, samples=samples,
                                     seed=seed, threads=threads, **kept).results
            cells[(name, run_name)] = _expected_only(res)
            rows += [{"qrels": name, "run": run_name, "measure": n,
                      "label_se": label_standard_error(res.values(n + "_se"))}
                     for n in cells[(name, run_name)].names]
    return cells, rows


def most_likely(plain: Qrels, labels) -> Qrels:
    """The plain labels with each distribution's most likely label (the lower of two
    equally likely ones): what the judges' agreement (kappa, ...) compares."""
    dist = as_label_distribution(labels)
    modal = (dist.sort(["query_id", "doc_id", "prob", "relevance"],
                       descending=[False, False, True, False])
             .unique(["query_id", "doc_id"], keep="first", maintain_order=True))
    dtype = plain.df["relevance"].dtype if plain.df.height else pl.Int64
    frames = [t.select(pl.col("query_id").cast(pl.String), pl.lit("0").alias("iteration"),
                       pl.col("doc_id").cast(pl.String), pl.col("relevance").cast(dtype))
              for t in (plain.df, modal) if t.height]
    return as_qrels(pl.concat(frames))


def distribution_grid(named_qrels: dict, distributions: dict, runs, measures, *,
                      samples: int, seed, threads, options: dict):
    """The :class:`~irmetrics.meta_evaluation.grid.Grid` of the plain qrels sets
    (:func:`evaluate_grid`) and of the distribution sets (their expected values), the
    qrels in the order given (a distribution set not among ``qrels`` last), and the
    frame of :attr:`MetaEvaluation.uncertain`."""
    named_runs = named_inputs(runs, "runs")
    order = list(named_qrels) + [n for n in distributions if n not in named_qrels]
    plain_sets = {n: q for n, q in named_qrels.items() if n not in distributions}
    results, sources = {}, {}
    if plain_sets:
        grid = evaluate_grid(plain_sets, named_runs, measures, threads=threads, **options)
        results.update(grid.results)
        sources.update(grid.sources)
    cells, rows = expected_cells(named_qrels, distributions, named_runs, measures,
                                 samples=samples, seed=seed, threads=threads, options=options)
    results.update(cells)
    sources.update(file_inputs("qrels", named_qrels))
    sources.update(file_inputs("label distributions", distributions))
    ordered = {(q, r): results[(q, r)] for q in order for r in named_runs}
    frame = pl.DataFrame(rows, schema={"qrels": pl.String, "run": pl.String,
                                       "measure": pl.String, "label_se": pl.Float64})
    return Grid(order, list(named_runs), ordered, sources=sources), frame
