"""Agreement between rankings of systems and between judges: arrays in, numbers out.

Rankings (the scores of ``m`` systems under two conditions: two sets of judgments, two
measures, a judgment set and a published leaderboard):

* :func:`kendall_tau_b`, :func:`spearman_rho`, :func:`pearson_r` -- the classic
  correlations (scipy's ``kendalltau``, ``spearmanr``, ``pearsonr``);
* :func:`tau_ap` -- Yilmaz, Aslam & Robertson's AP correlation, which weights swaps near
  the top of the ranking more;
* :func:`swapped_pairs` and :func:`top_k_overlap` -- the number of system pairs the two
  rankings order oppositely, and the share of the top ``k`` systems they agree on;
* :func:`ranking_agreement` -- all of them on per-topic scores, with a bootstrap
  confidence interval over topics (system means recomputed on every resample).

Every ranking function is vectorised over leading axes: ``x`` and ``y`` of shape
``(..., m)`` give a result of shape ``(...)`` (a numpy scalar for 1-D input). Pairs of
systems are compared directly (O(m^2) per ranking, in blocks of bounded memory): these
are meant for rankings of systems, thousands at most, not of documents.

Judges (two labels per judged item, e.g. a human and an LLM label per (query, doc)):

* :func:`confusion_matrix` -- label counts, optionally per group (query);
* :func:`cohen_kappa` / :func:`kappa_from_confusion` -- Cohen's kappa, unweighted or with
  linear or quadratic weights (scikit-learn's ``cohen_kappa_score``);
* :func:`krippendorff_alpha` / :func:`alpha_from_confusion` -- Krippendorff's alpha for
  two coders (nominal, ordinal, interval or ratio);
* :func:`jaccard` -- overlap of two sets given as membership flags.

With ``groups`` (an integer code per item), the judge statistics are computed per group
in one vectorised pass and returned as arrays of length ``n_groups``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from irmetrics.checks import check_bool, check_choice, check_int, parameter_error
from irmetrics.exceptions import ShapeError
from irmetrics.parallel import resolve_threads
from ._common import _Scratch, _check_level, _check_seed
from .paired import _bootstrap_blocks, _fixed_point_parts

#: The statistics :func:`ranking_agreement` reports, in order.
RANKING_STATISTICS = ("tau_b", "tau_ap", "spearman", "pearson", "swaps", "top_k")

#: Weights of :func:`cohen_kappa` (None: unweighted).
KAPPA_WEIGHTS = (None, "linear", "quadratic")

#: Levels of measurement of :func:`krippendorff_alpha`.
ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")

#: Pairwise comparisons per block (their int64 histogram indices: 16 MiB).
_PAIR_BLOCK = 1 << 21


# -- rankings ------------------------------------------------------------------------------

def _rankings(x: Any, y: Any, *, min_items: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` as finite float64 arrays of one shape ``(..., m)``, m >= min_items."""
    arrays = []
    for name, values in (("x", x), ("y", y)):
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise parameter_error(name, "an array of real numbers", values) from None
        if array.ndim == 0:
            raise ShapeError(f"`{name}` must have at least one axis (the systems); got a scalar.")
        bad = ~np.isfinite(array)
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise parameter_error(name, f"finite everywhere (element {at} is not)",
                                  float(array[at]))
        arrays.append(array)
    x, y = arrays
    if x.shape != y.shape:
        raise ShapeError(f"`y` must have the shape of `x` {x.shape}; got shape {y.shape}.")
    if x.shape[-1] < min_items:
        raise ShapeError(f"`x` and `y` must rank at least {min_items} items (last axis);"
                         f" got shape {x.shape}.")
    return x, y


@dataclass(frozen=True)
class _Tallies:
    """Pairwise counts of two score matrices ``x``, ``y`` of shape (B, m), per batch row
    ``r`` and item ``i`` (over the other items ``j``): every ranking statistic is read
    from them."""

    x_above: np.ndarray    # #{j: x_j > x_i}
    x_tied: np.ndarray     # #{j: x_j == x_i}, i itself included
    y_above: np.ndarray
    y_tied: np.ndarray
    both_above: np.ndarray  # #{j: x_j > x_i and y_j > y_i}
    concordant: np.ndarray  # #{j: (x_i - x_j)(y_i - y_j) > 0}
    discordant: np.ndarray  # #{j: (x_i - x_j)(y_i - y_j) < 0}


def _tallies(x: np.ndarray, y: np.ndarray, kept: _Scratch | None = None) -> _Tallies:
    """:class:`_Tallies` of ``x`` and ``y`` (B, m), comparing every pair of items once per
    block of rows and items (at most about :data:`_PAIR_BLOCK` comparisons at a time).
    Many rows of few items (a bootstrap's resamples of a few dozen systems) go to
    :func:`_tallies_rows_inner` (with ``kept``, its arrays); the same counts."""
    batch, m = x.shape
    if batch >= _ROWS_INNER and m * m * _ROWS_INNER <= _PAIR_BLOCK:
        return _tallies_rows_inner(x, y, kept)
    return _tallies_by_histogram(x, y)


def _tallies_by_histogram(x: np.ndarray, y: np.ndarray) -> _Tallies:
    """:func:`_tallies` with the rows outermost (few rows, or many items)."""
    batch, m = x.shape
    # Per (row, item), a histogram of the 9 sign pairs (sign(x_i - x_j), sign(y_i - y_j))
    # over j, coded (sx + 1) * 3 + (sy + 1): one bincount per block gives every tally.
    histogram = np.zeros((batch, m, 9), dtype=np.int64)
    per_item = max(1, _PAIR_BLOCK // max(1, m))
    items_per_block = min(m, per_item)
    rows_per_block = max(1, per_item // max(1, m)) if items_per_block == m else 1
    for r0 in range(0, batch, rows_per_block):
        rows = slice(r0, min(batch, r0 + rows_per_block))
        for i0 in range(0, m, items_per_block):
            items = slice(i0, min(m, i0 + items_per_block))
            xi, xj = x[rows, items, None], x[rows, None, :]
            yi, yj = y[rows, items, None], y[rows, None, :]
            code = (3 * ((xi > xj).view(np.int8) - (xi < xj).view(np.int8))
                    + (yi > yj).view(np.int8) - (yi < yj).view(np.int8) + 4)
            cells = code.shape[0] * code.shape[1]
            flat = np.arange(cells, dtype=np.int64)[:, None] * 9 + code.reshape(cells, m)
            histogram[rows, items] = np.bincount(flat.ravel(), minlength=cells * 9).reshape(
                code.shape[0], code.shape[1], 9)
    h = histogram
    counts = {
        "x_above": h[..., 0] + h[..., 1] + h[..., 2],   # sx = -1: x_j > x_i
        "x_tied": h[..., 3] + h[..., 4] + h[..., 5],
        "y_above": h[..., 0] + h[..., 3] + h[..., 6],
        "y_tied": h[..., 1] + h[..., 4] + h[..., 7],
        "both_above": h[..., 0],
        "concordant": h[..., 0] + h[..., 8],
        "discordant": h[..., 2] + h[..., 6],
    }
    return _Tallies(**counts)


#: :func:`_tallies` compares rows innermost from this many rows of at most
#: ``sqrt(_PAIR_BLOCK / _ROWS_INNER)`` (181) items.
_ROWS_INNER = 64


def _tallies_rows_inner(x: np.ndarray, y: np.ndarray, kept: _Scratch | None = None) -> _Tallies:
    """:func:`_tallies` with the rows innermost: ``(items i, items j, rows)``, so that every
    comparison and every sum over ``j`` runs along contiguous rows. With the rows outermost
    each step's innermost loop is ``m`` items long, and numpy's per-loop cost dominated:
    the 4 comparisons of 314 rows x 20 x 20 items took 0.61 ms that way, 0.16 ms this way
    (the whole tally 1.72 -> about 0.4 ms). Counts per ``(i, r)`` of 8 pair relations:
    ``x_j > x_i``, ``x_j < x_i``, the same of ``y``, and the 4 joint ones, each written into
    one of 5 arrays (``kept``'s, when a caller that tallies again and again keeps them:
    arrays above glibc's mmap threshold are otherwise faulted in afresh each time, which
    cost 20,000 page faults per ``ranking_agreement`` of 30 systems); int16 sums, widened
    to int64 as the histogram gave them."""
    batch, m = x.shape
    get = kept.get if kept is not None else (lambda _, shape, dtype: np.empty(shape, dtype))
    xt, yt = np.ascontiguousarray(x.T), np.ascontiguousarray(y.T)   # (m, batch)
    counts = get("counts", (8, m, batch), np.int16)
    step = max(1, _PAIR_BLOCK // (m * m))
    arrays = [get(name, (m, m, min(step, batch)), np.bool_)
              for name in ("x_above", "x_below", "y_above", "y_below", "joint")]
    for r0 in range(0, batch, step):
        rows = slice(r0, min(batch, r0 + step))
        x_above, x_below, y_above, y_below, joint = (a[:, :, :rows.stop - r0] for a in arrays)
        xi, xj = xt[:, None, rows], xt[None, :, rows]
        yi, yj = yt[:, None, rows], yt[None, :, rows]
        np.greater(xj, xi, out=x_above)
        np.less(xj, xi, out=x_below)
        np.greater(yj, yi, out=y_above)
        np.less(yj, yi, out=y_below)
        for k, relation in enumerate((x_above, x_below, y_above, y_below)):
            np.add.reduce(relation.view(np.int8), axis=1, dtype=np.int16,
                          out=counts[k, :, rows])
        for k, (p, q) in enumerate(((x_above, y_above), (x_below, y_below),
                                    (x_above, y_below), (x_below, y_above)), start=4):
            np.add.reduce(np.logical_and(p, q, out=joint).view(np.int8), axis=1,
                          dtype=np.int16, out=counts[k, :, rows])
    c = get("tallies", (8, batch, m), np.int64)
    np.copyto(c, counts.transpose(0, 2, 1))
    return _Tallies(x_above=c[0], x_tied=m - c[0] - c[1], y_above=c[2],
                    y_tied=m - c[2] - c[3], both_above=c[4], concordant=c[4] + c[5],
                    discordant=c[6] + c[7])


def _flat(x: np.ndarray, y: np.ndarray):
    lead = x.shape[:-1]
    m = x.shape[-1]
    return x.reshape(-1, m), y.reshape(-1, m), lead


def _shaped(values: np.ndarray, lead: tuple) -> Any:
    out = values.reshape(lead)
    return out[()] if out.ndim == 0 else out


def _tau_b_rows(t: _Tallies) -> np.ndarray:
    """Kendall's tau-b of each row from its tallies (every unordered pair counted twice)."""
    m = t.x_tied.shape[1]
    total = m * (m - 1) // 2
    s = (t.concordant.sum(axis=1) - t.discordant.sum(axis=1)) // 2
    tied_x = (t.x_tied.sum(axis=1) - m) // 2
    tied_y = (t.y_tied.sum(axis=1) - m) // 2
    with np.errstate(divide="ignore", invalid="ignore"):
        # One square root of the (exact, integer) product: rankings with the same ties
        # and no discordant pair give exactly 1, so a gate 'tau_b < 1' holds only when
        # the rankings differ.
        return np.clip(s / np.sqrt(((total - tied_x) * (total - tied_y)).astype(np.float64)),
                       -1.0, 1.0)


def _swaps_rows(t: _Tallies) -> np.ndarray:
    return t.discordant.sum(axis=1) // 2


def kendall_tau_b(x: Any, y: Any) -> Any:
    r"""Kendall's :math:`\tau_b` between two rankings, ties included.

    Over the :math:`n_0 = m(m-1)/2` pairs of items, with :math:`n_c` concordant pairs
    (ordered the same way by ``x`` and ``y``), :math:`n_d` discordant ones, :math:`t_x`
    pairs tied in ``x`` and :math:`t_y` pairs tied in ``y``:

    .. math:: \tau_b = \frac{n_c - n_d}{\sqrt{n_0 - t_x}\,\sqrt{n_0 - t_y}}

    This is ``scipy.stats.kendalltau(x, y).statistic`` (variant "b").

    Parameters
    ----------
    x, y : array-like, shape (..., m)
        Scores of ``m`` items (systems); leading axes are independent rankings.

    Returns
    -------
    float or ndarray
        In [-1, 1]; NaN when ``x`` or ``y`` is constant (every pair tied) or ``m < 2``.

    Examples
    --------
    >>> round(float(kendall_tau_b([0.3, 0.2, 0.1, 0.4], [0.31, 0.25, 0.11, 0.2])), 12)
    0.333333333333
    >>> kendall_tau_b([[1, 2, 3], [1, 2, 3]], [[1, 2, 3], [3, 2, 1]]).tolist()
    [1.0, -1.0]
    """
    x, y, lead = _flat(*_rankings(x, y))
    return _shaped(_tau_b_rows(_tallies(x, y)), lead)


def swapped_pairs(x: Any, y: Any) -> Any:
    r"""Number of pairs of items that ``x`` and ``y`` order oppositely.

    .. math:: \mathrm{swaps} = \#\{i < j : (x_i - x_j)(y_i - y_j) < 0\}

    A pair tied in ``x`` or in ``y`` is not a swap.

    Parameters
    ----------
    x, y : array-like, shape (..., m)

    Returns
    -------
    int or ndarray of int

    Examples
    --------
    >>> int(swapped_pairs([0.4, 0.3, 0.2, 0.1], [0.4, 0.2, 0.3, 0.3]))
    2
    """
    x, y, lead = _flat(*_rankings(x, y))
    return _shaped(_swaps_rows(_tallies(x, y)), lead)


def _tau_ap_rows(above: np.ndarray, both_above: np.ndarray,
                 reference_above: np.ndarray) -> np.ndarray:
    """tau_AP of each row of the ranking whose items have ``above`` items strictly above
    them, ``both_above`` of which the reference also puts strictly above; NaN where the
    reference (``reference_above``: items strictly above in it) ties every item."""
    counted = above > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(counted, both_above / np.where(counted, above, 1), 0.0)
        value = 2.0 * share.sum(axis=1) / counted.sum(axis=1) - 1.0
    # A reference that ties everything orders nothing: no agreement to measure (the
    # formula would call any ranking of it fully reversed, -1).
    return np.where(reference_above.any(axis=1), value, np.nan)


def tau_ap(x: Any, y: Any, *, symmetric: bool = False) -> Any:
    r"""AP correlation :math:`\tau_{AP}` of a ranking ``y`` against a reference ``x``.

    Yilmaz, Aslam & Robertson (SIGIR 2008). Items are ordered by ``y`` (highest first);
    for the item at position :math:`i`, :math:`C(i)` counts the items above it in ``y``
    that ``x`` also ranks above it:

    .. math:: \tau_{AP} = \frac{2}{m - 1} \sum_{i=2}^{m} \frac{C(i)}{i - 1} - 1

    A swap near the top of ``y`` costs more than one near the bottom. :math:`\tau_{AP}` is
    not symmetric: ``x`` is the reference (e.g. the human judgments), ``y`` the ranking
    being assessed; ``symmetric=True`` gives the mean of both directions.

    Parameters
    ----------
    x : array-like, shape (..., m)
        Reference scores.
    y : array-like, shape (..., m)
        Scores whose ranking is assessed.
    symmetric : bool, default False
        ``(tau_ap(x, y) + tau_ap(y, x)) / 2``.

    Returns
    -------
    float or ndarray
        In [-1, 1]; NaN when every item is tied in ``y`` or in ``x`` (a reference that
        orders nothing).

    Notes
    -----
    Ties (the paper assumes none) are treated as in Urbano & Marrero's
    :math:`\tau_{AP,b}` (ICTIR 2017): an item counts only the items *strictly* above it
    in ``y``, :math:`p_i = \#\{j: y_j > y_i\}`, of which :math:`C_i` are also strictly
    above it in ``x`` (a pair tied in ``x`` is not concordant); items with
    :math:`p_i = 0` (the top tie group of ``y``) are left out of the average:

    .. math:: \tau_{AP} = \frac{2}{\#\{i: p_i > 0\}} \sum_{i: p_i > 0}
              \frac{C_i}{p_i} - 1

    Without ties this is the formula above (:math:`p_i = i - 1`); with
    ``symmetric=True`` it is :math:`\tau_{AP,b}`.

    Examples
    --------
    >>> reference = [0.5, 0.4, 0.3, 0.2, 0.1]
    >>> round(float(tau_ap(reference, [0.5, 0.4, 0.3, 0.1, 0.2])), 4)   # swap at the bottom
    0.875
    >>> round(float(tau_ap(reference, [0.4, 0.5, 0.3, 0.2, 0.1])), 4)   # swap at the top
    0.5
    """
    symmetric = check_bool("symmetric", symmetric)
    x, y, lead = _flat(*_rankings(x, y))
    t = _tallies(x, y)
    value = _tau_ap_rows(t.y_above, t.both_above, t.x_above)
    if symmetric:
        value = (value + _tau_ap_rows(t.x_above, t.both_above, t.y_above)) / 2.0
    return _shaped(value, lead)


def _power_of_two_scale(x: np.ndarray) -> np.ndarray:
    """Per row, the power of two at or below its largest magnitude (at most 2 after the
    division, which is exact)."""
    return np.ldexp(1.0, np.frexp(np.abs(x).max(axis=1, keepdims=True))[1] - 1)


def _centred(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` minus their means, each row scaled by a power of two near its largest
    magnitude before and after centring (exact; r does not depend on the scale): no
    overflow of sums or squares near the float limits, no underflow of tiny values."""
    x = x / _power_of_two_scale(x)
    centred = x - x.mean(axis=1, keepdims=True)
    return centred / _power_of_two_scale(centred)


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    constant = np.all(x == x[:, :1], axis=1) | np.all(y == y[:, :1], axis=1)
    xm, ym = _centred(x), _centred(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        # sqrt of the product of the sums of squares: equal inputs give exactly 1.
        r = (xm * ym).sum(axis=1) / np.sqrt((xm * xm).sum(axis=1) * (ym * ym).sum(axis=1))
        r = np.clip(r, -1.0, 1.0)
    return np.where(constant | (x.shape[1] < 2), np.nan, r)


def pearson_r(x: Any, y: Any) -> Any:
    r"""Pearson's linear correlation of two score vectors.

    .. math:: r = \frac{\sum_i (x_i - \bar x)(y_i - \bar y)}
              {\sqrt{\sum_i (x_i - \bar x)^2}\,\sqrt{\sum_i (y_i - \bar y)^2}}

    ``scipy.stats.pearsonr(x, y).statistic``.

    Parameters
    ----------
    x, y : array-like, shape (..., m)

    Returns
    -------
    float or ndarray
        In [-1, 1]; NaN when ``x`` or ``y`` is constant or ``m < 2``.

    Examples
    --------
    >>> round(float(pearson_r([0.1, 0.2, 0.3, 0.4], [0.15, 0.2, 0.35, 0.3])), 4)
    0.8485
    """
    x, y, lead = _flat(*_rankings(x, y))
    return _shaped(_pearson_rows(x, y), lead)


def _average_ranks(above: np.ndarray, tied: np.ndarray) -> np.ndarray:
    """1-based ascending ranks, tied items sharing the mean of the ranks they span
    (``scipy.stats.rankdata(x, method="average", axis=1)``), from the tallies: the items
    below, plus half of the items tied (itself included), plus a half."""
    below = above.shape[1] - above - tied
    return below + (tied + 1) / 2.0


def spearman_rho(x: Any, y: Any) -> Any:
    r"""Spearman's rank correlation: Pearson's r of the average ranks.

    .. math:: \rho = r\big(\mathrm{rank}(x), \mathrm{rank}(y)\big)

    where tied items share the mean of the ranks they span.
    ``scipy.stats.spearmanr(x, y).statistic``.

    Parameters
    ----------
    x, y : array-like, shape (..., m)

    Returns
    -------
    float or ndarray
        In [-1, 1]; NaN when ``x`` or ``y`` is constant or ``m < 2``.

    Examples
    --------
    >>> float(spearman_rho([0.1, 0.2, 0.3, 0.4], [0.15, 0.2, 0.35, 0.3]))
    0.8
    """
    x, y, lead = _flat(*_rankings(x, y))
    t = _tallies(x, y)
    return _shaped(_pearson_rows(_average_ranks(t.x_above, t.x_tied),
                                 _average_ranks(t.y_above, t.y_tied)), lead)


def top_k_overlap(x: Any, y: Any, k: int) -> Any:
    r"""Share of the top ``k`` items that two rankings agree on.

    With :math:`T_k(x) = \{i : \#\{j : x_j > x_i\} < k\}` (the ``k`` highest items,
    and every item tied with the ``k``-th):

    .. math:: \mathrm{overlap@}k = \frac{|T_k(x) \cap T_k(y)|}{\max(|T_k(x)|, |T_k(y)|)}

    Without ties at the ``k``-th place this is :math:`|T_k(x) \cap T_k(y)| / k`; it is 1
    exactly when both rankings have the same top set, and ``k = 1`` asks whether they
    agree on the best item.

    Parameters
    ----------
    x, y : array-like, shape (..., m)
    k : int
        1 <= k <= m.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> float(top_k_overlap([0.5, 0.4, 0.3, 0.2], [0.5, 0.2, 0.3, 0.4], 2))
    0.5
    """
    x, y, lead = _flat(*_rankings(x, y))
    k = check_int("k", k, min=1, max=x.shape[1])
    return _shaped(_overlap_rows(_tallies(x, y), k), lead)


def _overlap_rows(t: _Tallies, k: int) -> np.ndarray:
    # Top k: the items with fewer than k items strictly above them.
    tx, ty = t.x_above < k, t.y_above < k
    return (tx & ty).sum(axis=1) / np.maximum(tx.sum(axis=1), ty.sum(axis=1))


@dataclass(frozen=True, eq=False)
class RankingAgreement:
    """Result of :func:`ranking_agreement`.

    Attributes
    ----------
    statistics : tuple of str
        :data:`RANKING_STATISTICS`: ``tau_b``, ``tau_ap``, ``spearman``, ``pearson``,
        ``swaps`` (swapped system pairs), ``top_k`` (overlap of the top ``k``).
    estimate, ci_low, ci_high : ndarray, shape (6,)
        Each statistic on the system means over all topics, and its percentile bootstrap
        interval at ``level`` (NaN when nothing was resampled).
    x_means, y_means : ndarray, shape (m,)
        The system means compared.
    n_systems, n_topics, n_resamples, k, seed : int
        ``n_topics`` is 0 when both sides were given as means.
    level : float
    """

    statistics: tuple
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    x_means: np.ndarray
    y_means: np.ndarray
    n_systems: int
    n_topics: int
    n_resamples: int
    k: int
    level: float
    seed: Any

    def as_dict(self) -> dict:
        """``{statistic: (estimate, ci_low, ci_high)}`` as Python floats."""
        return {name: (float(e), float(lo), float(hi)) for name, e, lo, hi in
                zip(self.statistics, self.estimate, self.ci_low, self.ci_high)}


def _all_statistics(x: np.ndarray, y: np.ndarray, k: int,
                    kept: _Scratch | None = None) -> np.ndarray:
    """The :data:`RANKING_STATISTICS` of rows of means ``x`` (reference) and ``y``:
    shape (B, 6); ``kept``: as for :func:`_tallies`."""
    t = _tallies(x, y, kept)
    return np.stack([_tau_b_rows(t), _tau_ap_rows(t.y_above, t.both_above, t.x_above),
                     _pearson_rows(_average_ranks(t.x_above, t.x_tied),
                                   _average_ranks(t.y_above, t.y_tied)),
                     _pearson_rows(x, y), _swaps_rows(t).astype(np.float64),
                     _overlap_rows(t, k)], axis=1)


def _exact_means(scores: np.ndarray) -> np.ndarray:
    """Column means from sums of fixed-point parts: exact sums, so columns holding the
    same values in any order get the same mean (a tie stays a tie)."""
    n = scores.shape[0]
    return sum(part.sum(axis=0) * scale for part, scale in _fixed_point_parts(scores)) / n


def _as_scores(name: str, values: Any) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter_error(name, "an array of real numbers", values) from None
    if array.ndim not in (1, 2):
        raise ShapeError(f"`{name}` must be (m,) system means or (n, m) per-topic scores;"
                         f" got shape {array.shape}.")
    if array.shape[0] < 1 or array.shape[-1] < 1:
        raise ShapeError(f"`{name}` must not be empty; got shape {array.shape}.")
    bad = ~np.isfinite(array)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise parameter_error(name, f"finite everywhere (element {at} is not)",
                              float(array[at]))
    return array


def ranking_agreement(x: Any, y: Any, *, k: int = 3, n_resamples: int = 1000,
                      seed: Any = 0, level: float = 0.95,
                      threads: int | None = None) -> RankingAgreement:
    r"""Agreement between two rankings of the same systems, with bootstrap intervals.

    ``x`` and ``y`` give the scores of ``m`` systems under two conditions, ``x`` being the
    reference (two judgment sets, two measures, or a published leaderboard). Each is
    either per-topic scores, shape ``(n, m)`` with topics aligned between ``x`` and
    ``y``, or system means, shape ``(m,)``. The statistics are computed on the system
    means: :func:`kendall_tau_b`, :func:`tau_ap` (``y`` assessed against ``x``),
    :func:`spearman_rho`, :func:`pearson_r`, :func:`swapped_pairs` and
    :func:`top_k_overlap`.

    The confidence interval of each statistic comes from a bootstrap over topics: each of
    ``B = n_resamples`` resamples draws ``n`` topics with replacement (the same topics for
    ``x`` and ``y``), recomputes every system's mean on them and the statistic on those
    means; the interval is the percentile interval
    :math:`[\theta^*_{((1-\mathrm{level})/2)}, \theta^*_{((1+\mathrm{level})/2)}]`
    (linear interpolation, resamples where the statistic is undefined left out).

    Parameters
    ----------
    x, y : array-like, shape (n, m) or (m,)
        Per-topic scores (rows topics, columns systems) or system means. When only one
        side has per-topic scores, only that side is resampled (the other is a fixed
        leaderboard); when neither has, the intervals are NaN.
    k : int, default 3
        The ``k`` of :func:`top_k_overlap` (at most ``m``).
    n_resamples : int, default 1000
    seed : int, numpy.random.Generator or None, default 0
        Same inputs and seed give identical results on any machine and thread count.
    level : float, default 0.95
    threads : int or None
        Threads drawing the resamples (:func:`irmetrics.parallel.resolve_threads`); the
        result does not depend on it.

    Returns
    -------
    RankingAgreement

    Notes
    -----
    System means are computed from exact sums (fixed-point parts, as the bootstrap of
    :func:`paired_test`), so systems whose per-topic scores are the same values tie
    exactly, whatever the order of the topics; the bootstrap draws the same indices as
    ``scipy.stats.bootstrap`` (``rng.integers(0, n, (B, n))``) in blocks whose size depends
    on the data shape and ``n_resamples`` only, block ``i`` from generator ``i`` of
    :func:`irmetrics.parallel.block_generators`.

    Examples
    --------
    >>> human = [[0.5, 0.4, 0.2], [0.6, 0.3, 0.4], [0.4, 0.5, 0.1], [0.7, 0.2, 0.3]]
    >>> llm = [[0.6, 0.5, 0.1], [0.5, 0.4, 0.5], [0.5, 0.4, 0.2], [0.8, 0.1, 0.3]]
    >>> res = ranking_agreement(human, llm, k=1, n_resamples=200, seed=1)
    >>> res.statistics[:2], [round(float(v), 4) for v in res.estimate[:2]]
    (('tau_b', 'tau_ap'), [1.0, 1.0])
    >>> float(res.ci_low[0]) <= 1.0 == float(res.ci_high[0])
    True
    """
    x = _as_scores("x", x)
    y = _as_scores("y", y)
    if x.shape[-1] != y.shape[-1]:
        raise ShapeError(f"`x` and `y` must score the same systems (last axis); got"
                         f" {x.shape[-1]} and {y.shape[-1]}.")
    if x.ndim == 2 and y.ndim == 2 and x.shape[0] != y.shape[0]:
        raise ShapeError(f"`x` and `y` must hold the same topics (rows, aligned); got"
                         f" {x.shape[0]} and {y.shape[0]}.")
    m = x.shape[-1]
    if m < 2:
        raise ShapeError(f"at least 2 systems are needed to compare rankings; got {m}.")
    k = check_int("k", k, min=1, max=m)
    n_resamples = check_int("n_resamples", n_resamples, min=0)
    level = _check_level(level)
    _check_seed(seed)
    resolve_threads(threads)
    x_means = _exact_means(x) if x.ndim == 2 else x
    y_means = _exact_means(y) if y.ndim == 2 else y
    estimate = _all_statistics(x_means[None], y_means[None], k)[0]
    resampled = [side for side in (x, y) if side.ndim == 2]
    n = resampled[0].shape[0] if resampled else 0
    if not resampled or n_resamples == 0:
        nan = np.full(len(RANKING_STATISTICS), np.nan)
        return RankingAgreement(RANKING_STATISTICS, estimate, nan, nan.copy(), x_means,
                                y_means, m, n, 0, k, level, seed)
    joined = np.hstack(resampled)  # the resampled sides' columns, resampled together
    kept = _Scratch()  # each thread's tally arrays, for all its runs of blocks

    def block(sums, _):
        means = sums / n
        bx = means[:, :m] if x.ndim == 2 else np.broadcast_to(x_means, (len(means), m))
        by = means[:, -m:] if y.ndim == 2 else np.broadcast_to(y_means, (len(means), m))
        return _all_statistics(np.ascontiguousarray(bx), np.ascontiguousarray(by), k, kept)

    samples = np.concatenate(_bootstrap_blocks(joined, n_resamples, seed, threads, block,
                                               squares=False))
    tail = (1.0 - level) / 2.0
    low, high = _finite_quantiles(samples, tail), _finite_quantiles(samples, 1.0 - tail)
    return RankingAgreement(RANKING_STATISTICS, estimate, low, high, x_means, y_means, m, n,
                            n_resamples, k, level, seed)


def _finite_quantiles(samples: np.ndarray, q: float) -> np.ndarray:
    """Per column, the ``q`` quantile of the finite values (type 7); NaN when none."""
    out = np.full(samples.shape[1], np.nan)
    for j in range(samples.shape[1]):
        finite = samples[:, j][np.isfinite(samples[:, j])]
        if finite.size:
            out[j] = np.quantile(finite, q)
    return out


# -- judges --------------------------------------------------------------------------------

def _labels_pair(a: Any, b: Any, labels: Any):
    """``(a, b)`` as finite float arrays of one length, the sorted label list and the
    positions of ``a`` and ``b`` in it."""
    arrays = []
    for name, values in (("a", a), ("b", b)):
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise parameter_error(name, "a 1-D array of labels (numbers)", values) from None
        if array.ndim != 1:
            raise ShapeError(f"`{name}` must be 1-D; got shape {array.shape}.")
        if not np.isfinite(array).all():
            raise parameter_error(name, "finite labels", float(array[~np.isfinite(array)][0]))
        arrays.append(array)
    a, b = arrays
    if a.shape != b.shape:
        raise ShapeError(f"`b` must have the length of `a` ({a.size}); got {b.size}.")
    if labels is None:
        values = np.unique(np.concatenate([a, b]))
    else:
        values = np.asarray(labels, dtype=np.float64).ravel()
        if values.size == 0 or np.unique(values).size != values.size:
            raise parameter_error("labels", "distinct label values", labels)
        unknown = np.setdiff1d(np.concatenate([a, b]), values)
        if unknown.size:
            raise parameter_error("labels", "every label of `a` and `b`", float(unknown[0]))
    # Positions in the label list as given (scikit-learn's order for weighted kappa).
    order = np.argsort(values, kind="stable")
    ia = order[np.searchsorted(values[order], a)]
    ib = order[np.searchsorted(values[order], b)]
    return values, ia, ib


def _groups(groups: Any, size: int, n_groups: int | None):
    if groups is None:
        return None, None
    codes = np.asarray(groups)
    if codes.shape != (size,) or not np.issubdtype(codes.dtype, np.integer):
        raise parameter_error("groups", f"an integer code per item (shape ({size},))", groups)
    if size and codes.min() < 0:
        raise parameter_error("groups", "codes >= 0", int(codes.min()))
    count = (int(codes.max()) + 1 if size else 0) if n_groups is None else \
        check_int("n_groups", n_groups, min=int(codes.max()) + 1 if size else 0)
    return codes.astype(np.int64), count


def confusion_matrix(a: Any, b: Any, *, labels: Any = None, groups: Any = None,
                     n_groups: int | None = None):
    r"""Counts of each pair of labels: ``C[i, j] = #{items: a = labels[i], b = labels[j]}``.

    Rows are ``a``'s labels, columns ``b``'s (scikit-learn's ``confusion_matrix(a, b)``).

    Parameters
    ----------
    a, b : array-like, shape (n,)
        Two labels per item.
    labels : array-like, optional
        The label list (rows and columns, in this order); default: every label of ``a``
        and ``b``, ascending.
    groups : array-like of int, shape (n,), optional
        A group code per item (e.g. a query): one matrix per group.
    n_groups : int, optional
        Number of groups (default ``max(groups) + 1``).

    Returns
    -------
    (ndarray, ndarray)
        The counts, shape ``(L, L)`` or ``(n_groups, L, L)`` (int64), and the labels.

    Examples
    --------
    >>> counts, labels = confusion_matrix([0, 1, 2, 2], [0, 2, 2, 1])
    >>> labels.tolist(), counts.tolist()
    ([0.0, 1.0, 2.0], [[1, 0, 0], [0, 0, 1], [0, 1, 1]])
    """
    values, ia, ib = _labels_pair(a, b, labels)
    codes, count = _groups(groups, ia.size, n_groups)
    n_labels = values.size
    cell = ia * n_labels + ib
    if codes is None:
        return np.bincount(cell, minlength=n_labels * n_labels).reshape(n_labels, n_labels), values
    flat = np.bincount(codes * n_labels * n_labels + cell, minlength=count * n_labels * n_labels)
    return flat.reshape(count, n_labels, n_labels), values


def _kappa_weights(n_labels: int, weights) -> np.ndarray:
    distance = np.abs(np.arange(n_labels)[:, None] - np.arange(n_labels)[None, :])
    if weights is None:
        return (distance > 0).astype(np.float64)
    return distance.astype(np.float64) ** (1 if weights == "linear" else 2)


def kappa_from_confusion(confusion: Any, *, weights: str | None = None) -> Any:
    r"""Cohen's kappa of confusion matrices ``(..., L, L)`` (see :func:`cohen_kappa`).

    Examples
    --------
    >>> round(float(kappa_from_confusion([[20, 5], [10, 15]])), 4)
    0.4
    """
    weights = check_choice("weights", weights, KAPPA_WEIGHTS)
    counts = np.asarray(confusion, dtype=np.float64)
    if counts.ndim < 2 or counts.shape[-1] != counts.shape[-2]:
        raise ShapeError(f"`confusion` must be (..., L, L); got shape {counts.shape}.")
    w = _kappa_weights(counts.shape[-1], weights)
    total = counts.sum(axis=(-2, -1))
    rows, cols = counts.sum(axis=-1), counts.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = rows[..., :, None] * cols[..., None, :] / total[..., None, None]
        kappa = 1.0 - (w * counts).sum(axis=(-2, -1)) / (w * expected).sum(axis=(-2, -1))
    return kappa[()] if kappa.ndim == 0 else kappa


def cohen_kappa(a: Any, b: Any, *, weights: str | None = None, labels: Any = None,
                groups: Any = None, n_groups: int | None = None) -> Any:
    r"""Cohen's kappa between two labellings of the same items.

    With the confusion matrix :math:`O` of the labels (:func:`confusion_matrix`, ``L``
    labels in ascending order), :math:`E = r c^\top / N` the counts expected from the
    margins (:math:`r` row sums, :math:`c` column sums, :math:`N` items), and disagreement
    weights :math:`w_{ij}` (unweighted: :math:`[i \ne j]`; ``"linear"``: :math:`|i - j|`;
    ``"quadratic"``: :math:`(i - j)^2`, on the positions ``i``, ``j`` of the labels in
    the label list):

    .. math:: \kappa = 1 - \frac{\sum_{ij} w_{ij} O_{ij}}{\sum_{ij} w_{ij} E_{ij}}

    scikit-learn's ``cohen_kappa_score(a, b, weights=weights, labels=labels)``.

    Parameters
    ----------
    a, b : array-like, shape (n,)
        Labels of the same ``n`` items by two judges.
    weights : {None, "linear", "quadratic"}
        Weighted kappa for graded labels: the distance between labels is the distance
        between their positions in the label list (with labels 0, 1, 3 and no 2, 1 and 3
        are one step apart unless ``labels=[0, 1, 2, 3]``).
    labels : array-like, optional
        The label list (default: every label of ``a`` and ``b``, ascending).
    groups, n_groups
        Per-group kappas (see :func:`confusion_matrix`); the label list is shared.

    Returns
    -------
    float or ndarray
        In [-1, 1] (unweighted); NaN when the expected disagreement is 0 (both judges use
        one and the same label) or there is no item.

    Examples
    --------
    >>> a = [0, 1, 2, 2, 1, 0, 3]
    >>> b = [0, 1, 1, 2, 2, 0, 3]
    >>> round(float(cohen_kappa(a, b)), 4), round(float(cohen_kappa(a, b, weights="quadratic")), 4)
    (0.6111, 0.8654)
    """
    weights = check_choice("weights", weights, KAPPA_WEIGHTS)
    counts, _ = confusion_matrix(a, b, labels=labels, groups=groups, n_groups=n_groups)
    return kappa_from_confusion(counts, weights=weights)


def _alpha_distances(totals: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """Squared distances :math:`\\delta^2_{ck}` between labels, shape (..., L, L);
    ``totals`` (..., L) are the label counts (the ordinal metric depends on them)."""
    vc, vk = values[:, None], values[None, :]
    if level == "nominal":
        return np.broadcast_to((vc != vk).astype(np.float64), totals.shape[:-1] + vc.shape[:1] * 2)
    if level == "interval":
        return np.broadcast_to((vc - vk) ** 2, totals.shape[:-1] + vc.shape[:1] * 2)
    if level == "ratio":
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(vc + vk == 0, 0.0, ((vc - vk) / (vc + vk)) ** 2)
        return np.broadcast_to(ratio, totals.shape[:-1] + vc.shape[:1] * 2)
    # ordinal: (sum of n_g for g from c to k) - (n_c + n_k) / 2, squared
    order = np.argsort(values, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(values.size)
    ranked = totals[..., order]
    cumulative = np.concatenate([np.zeros(ranked.shape[:-1] + (1,)), np.cumsum(ranked, axis=-1)],
                                axis=-1)
    lo = np.minimum(position[:, None], position[None, :])
    hi = np.maximum(position[:, None], position[None, :])
    span = cumulative[..., hi + 1] - cumulative[..., lo]
    return (span - (totals[..., :, None] + totals[..., None, :]) / 2.0) ** 2


def alpha_from_confusion(confusion: Any, values: Any, *, level: str = "ordinal") -> Any:
    r"""Krippendorff's alpha of two coders from their confusion matrices ``(..., L, L)``
    over the label ``values`` (see :func:`krippendorff_alpha`).

    Examples
    --------
    >>> round(float(alpha_from_confusion([[20, 5], [10, 15]], [0, 1], level="nominal")), 4)
    0.4
    """
    level = check_choice("level", level, ALPHA_LEVELS)
    counts = np.asarray(confusion, dtype=np.float64)
    labels = np.asarray(values, dtype=np.float64).ravel()
    if counts.ndim < 2 or counts.shape[-1] != counts.shape[-2] or counts.shape[-1] != labels.size:
        raise ShapeError(f"`confusion` must be (..., L, L) with L = {labels.size} labels;"
                         f" got shape {counts.shape}.")
    # Coincidences: each item gives the ordered pairs (a, b) and (b, a).
    coincidence = counts + np.swapaxes(counts, -1, -2)
    totals = coincidence.sum(axis=-1)
    n = totals.sum(axis=-1)
    delta = _alpha_distances(totals, labels, level)
    observed = (coincidence * delta).sum(axis=(-2, -1))
    expected = (totals[..., :, None] * totals[..., None, :] * delta).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    alpha = np.where(n > 1, alpha, np.nan)
    return alpha[()] if alpha.ndim == 0 else alpha


def krippendorff_alpha(a: Any, b: Any, *, level: str = "ordinal", labels: Any = None,
                       groups: Any = None, n_groups: int | None = None) -> Any:
    r"""Krippendorff's alpha between two coders who labelled the same items.

    Every item gives two pairable values; the coincidence matrix is
    :math:`o_{ck} = O_{ck} + O_{kc}` (:math:`O` the confusion matrix), with label totals
    :math:`n_c = \sum_k o_{ck}` and :math:`n = \sum_c n_c = 2N`:

    .. math:: \alpha = 1 - (n - 1)\,\frac{\sum_{c,k} o_{ck}\,\delta^2_{ck}}
              {\sum_{c,k} n_c\, n_k\, \delta^2_{ck}}

    with :math:`\delta^2_{ck}` = :math:`[c \ne k]` (nominal),
    :math:`\big(\sum_{g=c}^{k} n_g - (n_c + n_k)/2\big)^2` (ordinal, ``g`` running over the
    labels between ``c`` and ``k`` in value order), :math:`(c - k)^2` (interval) or
    :math:`((c - k)/(c + k))^2` (ratio). This is the ``krippendorff`` package's
    ``alpha(reliability_data=[a, b], level_of_measurement=level)``.

    Parameters
    ----------
    a, b : array-like, shape (n,)
        Labels of the same items by two coders (no missing value: give the items both
        labelled).
    level : {"nominal", "ordinal", "interval", "ratio"}, default "ordinal"
    labels : array-like, optional
        The label values (default: those in ``a`` and ``b``); a label no item has changes
        nothing.
    groups, n_groups
        Per-group alphas (see :func:`confusion_matrix`).

    Returns
    -------
    float or ndarray
        At most 1; NaN when there is no disagreement to expect (one label only) or fewer
        than one item.

    Examples
    --------
    >>> a = [0, 1, 2, 2, 1, 0, 3]
    >>> b = [0, 1, 1, 2, 2, 0, 3]
    >>> round(float(krippendorff_alpha(a, b)), 4)
    0.8598
    """
    level = check_choice("level", level, ALPHA_LEVELS)
    counts, values = confusion_matrix(a, b, labels=labels, groups=groups, n_groups=n_groups)
    return alpha_from_confusion(counts, values, level=level)


def jaccard(a: Any, b: Any, *, groups: Any = None, n_groups: int | None = None) -> Any:
    r"""Jaccard overlap of two sets given as membership flags over the same items.

    .. math:: J = \frac{|A \cap B|}{|A \cup B|}

    Parameters
    ----------
    a, b : array-like of bool, shape (n,)
        Whether each item is in ``A`` (in ``B``); e.g. ``label >= relevance_level``.
    groups, n_groups
        Per-group overlaps (see :func:`confusion_matrix`).

    Returns
    -------
    float or ndarray
        NaN when both sets are empty.

    Examples
    --------
    >>> float(jaccard([True, True, False, False], [True, False, True, False]))
    0.3333333333333333
    """
    flags = []
    for name, values in (("a", a), ("b", b)):
        array = np.asarray(values)
        if array.ndim != 1 or array.dtype != bool:
            raise parameter_error(name, "a 1-D array of booleans", values)
        flags.append(array)
    a, b = flags
    if a.shape != b.shape:
        raise ShapeError(f"`b` must have the length of `a` ({a.size}); got {b.size}.")
    codes, count = _groups(groups, a.size, n_groups)
    both: np.ndarray | np.integer
    either: np.ndarray | np.integer
    if codes is None:
        both, either = np.count_nonzero(a & b), np.count_nonzero(a | b)
    else:
        both = np.bincount(codes, weights=a & b, minlength=count)
        either = np.bincount(codes, weights=a | b, minlength=count)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.float64(both) / either
    return value


__all__ = ["ALPHA_LEVELS", "KAPPA_WEIGHTS", "RANKING_STATISTICS", "RankingAgreement",
           "alpha_from_confusion", "cohen_kappa", "confusion_matrix", "jaccard",
           "kappa_from_confusion", "kendall_tau_b", "krippendorff_alpha", "pearson_r",
           "ranking_agreement", "spearman_rho", "swapped_pairs", "tau_ap", "top_k_overlap"]

