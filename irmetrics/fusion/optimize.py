"""optimize(): the weights and parameters of a fusion method that score best on qrels,
with a table of every configuration tried, and cross-validation over queries."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

from irmetrics.checks import check_choice, check_int, parameter_error
from irmetrics.evaluate import Evaluator, as_qrels
from irmetrics.exceptions import MissingQueriesWarning

from .fuse import METHODS, NORMS, Method, fuse_lists, prepare_runs, _params, _weights
from .lists import fusion_lists

__all__ = ["optimize", "Optimization", "default_grid", "weight_grid"]


@dataclass(frozen=True)
class Optimization:
    """What :func:`optimize` found.

    Attributes
    ----------
    method : str
    metric : str
        The output name optimised (e.g. ``ndcg_cut_10``).
    best : dict
        The best configuration on all queries: ``{"weights": [...], "k": ...}``.
    value : float
        Its mean metric over the queries.
    table : polars.DataFrame
        One row per configuration, in grid order: ``config`` (its text), a column per
        parameter (``weights`` as a list), ``value`` (mean metric over all queries) and
        ``best``.
    folds : polars.DataFrame or None
        With ``folds``: one row per fold, ``fold``, ``config`` chosen on the other folds,
        ``train`` (its mean there), ``test`` (its mean on the fold) and ``queries``.
    """

    method: str
    metric: str
    best: dict
    value: float
    table: pl.DataFrame
    folds: pl.DataFrame | None

    @property
    def cross_validated(self) -> float | None:
        """Mean of the test folds' values, each query counted once (None without folds)."""
        if self.folds is None:
            return None
        q = self.folds["queries"].to_numpy()
        return float((self.folds["test"].to_numpy() * q).sum() / q.sum())


def weight_grid(n_runs: int, step: float = 0.1) -> list[tuple[float, ...]]:
    """Every weight vector of ``n_runs`` multiples of ``step`` that sum to 1 (ranx's
    grid), in lexicographic order; computed in integers so that no vector is lost to
    rounding.

    >>> weight_grid(2, 0.25)
    [(0.0, 1.0), (0.25, 0.75), (0.5, 0.5), (0.75, 0.25), (1.0, 0.0)]
    """
    units = round(1 / step)
    if units < 1 or not np.isclose(units * step, 1.0):
        raise parameter_error("step", "1 / n for a whole n", step)
    return [tuple(round(u * step, 10) for u in combo)
            for combo in itertools.product(range(units + 1), repeat=n_runs)
            if sum(combo) == units]


def default_grid(method: Method, n_runs: int) -> dict[str, list]:
    """ranx's search space for ``method``: weights on the 0.1 simplex grid, ``k`` 10..100
    by 10, ``phi`` 0.01..0.99, ``gamma`` and ``sigma`` 0.01..1, ``n_segments`` and ``w``
    1..100; a method with nothing to tune has one configuration.

    >>> default_grid(METHODS["rrf"], 2)["k"][:3]
    [10, 20, 30]
    """
    hundredths = [round(0.01 * i, 2) for i in range(1, 101)]
    space: dict[str, list] = {"k": list(range(10, 101, 10)), "phi": hundredths[:-1], "gamma": hundredths,
             "sigma": hundredths, "n_segments": list(range(1, 101)), "w": list(range(1, 101))}
    grid: dict[str, list] = {p: space[p] for p in method.params if p in space}
    if method.weighted:
        grid["weights"] = [list(w) for w in weight_grid(n_runs)]
    return grid


def optimize(runs, qrels, method: str, *, metric: str = "ndcg_cut.10", grid=None,
             norm: str | None = "min-max", folds: int | None = None, seed: int = 0,
             relevance_level: int = 1) -> Optimization:
    """Search a fusion method's weights and parameters for the best mean ``metric``.

    Parameters
    ----------
    runs : list or dict
        As :func:`irmetrics.fusion.fuse` takes them.
    qrels
        The judgments (anything :func:`irmetrics.evaluate` takes, ``irds:<id>``
        included); they score every configuration and train the trained methods.
    method : str
        A fusion method (:data:`irmetrics.fusion.METHODS`).
    metric : str, default "ndcg_cut.10"
        One irmetrics measure with one output (trec_eval's names and the others).
    grid : dict, optional
        ``{parameter: [values]}``; ``"weights"`` maps to a list of weight vectors.
        Parameters left out keep their defaults; default :func:`default_grid`.
    norm : str or None, default "min-max"
        As for :func:`~irmetrics.fusion.fuse`.
    folds : int, optional
        Cross-validate over queries: the qrels' queries shuffled with ``seed`` and cut
        into ``folds`` parts; each part is scored with the configuration that is best
        on the others (trained methods learn from the other parts only).
    seed : int, default 0
    relevance_level : int, default 1
        As for :func:`irmetrics.evaluate`.

    Returns
    -------
    Optimization

    Notes
    -----
    The value of a configuration is the mean over the evaluated queries (those of the
    qrels that some run retrieves for), as :func:`irmetrics.evaluate` averages them.
    Configurations are tried in grid order (the product of the parameters' lists, in
    the order given); among equal values the first wins (ranx keeps the last).

    .. math:: \\hat\\theta = \\arg\\max_\\theta \\frac{1}{|Q|}\\sum_{q \\in Q} m_q(\\mathrm{fuse}_\\theta)

    Examples
    --------
    >>> qrels = {"q1": {"d1": 1, "d4": 1}}
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d4": 1.0}}
    >>> b = {"q1": {"d4": 3.0, "d3": 2.0, "d1": 1.0}}
    >>> found = optimize([a, b], qrels, "wsum", metric="P.2",
    ...                  grid={"weights": [[1, 0], [0.5, 0.5], [0, 1]]})
    >>> found.best, found.value
    ({'weights': [0.5, 0.5]}, 1.0)
    >>> found.table.select("config", "value").rows()
    [('weights=[1, 0]', 0.5), ('weights=[0.5, 0.5]', 1.0), ('weights=[0, 1]', 0.5)]
    """
    method_ = METHODS[check_choice("method", method, tuple(METHODS))]
    if norm is not None:
        check_choice("norm", norm, tuple(NORMS))
    prepared, qrels_, _ = prepare_runs(runs, qrels)
    if qrels_ is None:
        raise parameter_error("qrels", "the judgments the metric is computed on", None)
    configs = _configs(method_, grid, len(prepared))
    evaluator = Evaluator(qrels_, [metric], relevance_level=relevance_level)
    lists = fusion_lists(prepared)
    query_ids = np.intersect1d(lists.query_ids,
                               qrels_.df["query_id"].unique().to_numpy().astype(object))
    if not len(query_ids):
        raise parameter_error("qrels", "judgments for some query of the runs",
                              "no query in common")
    fold_of = _folds(query_ids, folds, seed)

    def scores(config, train_qrels):
        weights = _weights(method_, config.get("weights"), len(prepared))
        params = _params(method_, {k: v for k, v in config.items() if k != "weights"})
        run = fuse_lists(lists, method_, norm=norm, weights=weights, params=params,
                         qrels=train_qrels, name=method_.name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)
            results = evaluator.evaluate(run)
        name = _one_output(results, metric)
        # Both id lists ascend (byte order); a query the fused run lacks scores 0.
        evaluated = np.asarray(results.query_ids, dtype=object)
        at = np.minimum(np.searchsorted(evaluated, query_ids), max(len(evaluated) - 1, 0))
        found = (evaluated[at] == query_ids) if len(evaluated) else \
            np.zeros(len(query_ids), dtype=bool)
        return name, np.where(found, results.values(name)[at] if len(evaluated) else 0.0, 0.0)

    train_all = qrels_ if method_.trained else None
    per_config = [scores(config, train_all) for config in configs]
    name = per_config[0][0]
    means = np.array([v.mean() for _, v in per_config])
    best = int(np.argmax(means))
    texts = [_text(c) for c in configs]
    table = pl.DataFrame({"config": texts, **_param_columns(configs),
                          "value": means, "best": np.arange(len(configs)) == best})
    fold_table = None
    if fold_of is not None:
        rows = []
        for f in range(int(fold_of.max()) + 1):
            test = fold_of == f
            if method_.trained:
                train_qrels = as_qrels(qrels_.df.filter(pl.col("query_id").is_in(
                    pl.Series(query_ids[~test], dtype=pl.String).implode())))
                values = [scores(c, train_qrels)[1] for c in configs]
            else:
                values = [v for _, v in per_config]
            train_means = np.array([v[~test].mean() for v in values])
            chosen = int(np.argmax(train_means))
            rows.append({"fold": f, "config": texts[chosen], "train": train_means[chosen],
                         "test": float(values[chosen][test].mean()),
                         "queries": int(test.sum())})
        fold_table = pl.DataFrame(rows)
    return Optimization(method=method_.name, metric=name, best=dict(configs[best]),
                        value=float(means[best]), table=table, folds=fold_table)


def _configs(method: Method, grid, n_runs: int) -> list[dict]:
    if grid is None:
        grid = default_grid(method, n_runs)
    if not isinstance(grid, Mapping):
        raise parameter_error("grid", "a dict {parameter: [values]}", type(grid).__name__)
    allowed = set(method.params) | ({"weights"} if method.weighted else set())
    for key, values in grid.items():
        if key not in allowed:
            raise parameter_error("grid", f"keys among the parameters of {method.name!r}"
                                  f" ({', '.join(sorted(allowed)) or 'none'})", key)
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not values:
            raise parameter_error(f"grid[{key!r}]", "a non-empty list of values", values)
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def _folds(query_ids: np.ndarray, folds, seed) -> np.ndarray | None:
    if folds is None:
        return None
    folds = check_int("folds", folds, min=2, max=max(2, len(query_ids)))
    seed = check_int("seed", seed, min=0)
    order = np.random.default_rng(seed).permutation(len(query_ids))
    fold_of = np.empty(len(query_ids), dtype=np.int64)
    for f, part in enumerate(np.array_split(order, folds)):
        fold_of[part] = f
    return fold_of


def _one_output(results, metric: str) -> str:
    names = [n for n in results.names if not results.is_bookkeeping(n)]
    if len(names) != 1:
        raise parameter_error("metric", "one measure with one output", metric)
    return names[0]


def _text(config: dict) -> str:
    return ", ".join(f"{k}={list(v) if k == 'weights' else v}" for k, v in config.items())


def _param_columns(configs: list[dict]) -> dict:
    keys = list(configs[0]) if configs else []
    return {k: [list(map(float, c[k])) if k == "weights" else c[k] for c in configs]
            for k in keys}
