"""Rank-biased overlap of untied rankings from Webber, Moffat & Zobel (TOIS 2010), plainly.

``rbo_ext`` is their equation (32) for rankings of lengths s <= l. ``rbo_min`` and
``rbo_max`` are the infinite sums of (1 - p) p^(d-1) X_d / d over explicitly extended
rankings: for the minimum both go on with items nobody else has; for the maximum the
shorter one goes on with the longer one's missing items, the longer one with the shorter
one's, and then both with the same new items at the same depths (their section 4.2). The
sums are cut where p^d falls below 1e-18.
"""

from __future__ import annotations

import math




def _x(short: list, long: list, d: int) -> int:
    return len(set(short[:d]) & set(long[:d]))


def _order(x: list, y: list) -> tuple[list, list]:
    return (y, x) if len(x) >= len(y) else (x, y)


def rbo_ext(x: list, y: list, p: float) -> float:
    s_list, l_list = _order(x, y)
    s, n = len(s_list), len(l_list)
    xs = _x(s_list, l_list, s)
    total = sum(_x(s_list, l_list, d) / d * p**d for d in range(1, n + 1))
    total += sum(xs * (d - s) / (s * d) * p**d for d in range(s + 1, n + 1))
    xl = _x(s_list, l_list, n)
    return (1 - p) / p * total + ((xl - xs) / n + xs / s) * p**n


def _sum(a: list, b: list, p: float) -> float:
    horizon = int(math.log(1e-18) / math.log(p)) + 2
    total = 0.0
    for d in range(1, max(horizon, len(a), len(b)) + 1):
        total += (1 - p) * p ** (d - 1) * _x(a, b, d) / d
    return total


def rbo_min(x: list, y: list, p: float) -> float:
    s_list, l_list = _order(x, y)
    horizon = int(math.log(1e-18) / math.log(p)) + 2 + len(l_list)
    a = s_list + [("new-s", i) for i in range(horizon)]
    b = l_list + [("new-l", i) for i in range(horizon)]
    return _sum(a[:horizon], b[:horizon], p)


def rbo_max(x: list, y: list, p: float) -> float:
    s_list, l_list = _order(x, y)
    horizon = int(math.log(1e-18) / math.log(p)) + 2 + 2 * len(l_list)
    a = s_list + [i for i in l_list if i not in s_list]
    b = l_list + [i for i in s_list if i not in l_list]
    fresh = [("new", i) for i in range(horizon)]
    return _sum((a + fresh)[:horizon], (b + fresh)[:horizon], p)
