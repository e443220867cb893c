"""Slow, plainly correct reference loops for the metric-learning and LTR measures.

One Python loop per query (and per rank), written straight from
``docs/reference/ml_measures.md``; the vectorised irmetrics code is
differential-tested against these. Never imported by the package.
"""

from __future__ import annotations

import math

import numpy as np


def log2p1(i):
    """``log2(i + 1)`` with libm, as the engine's discount table."""
    return math.log2(i + 1)


# ---------------------------------------------------------------- trec ranking of a run dict

def trec_ranking(run_q: dict, qrels_q: dict):
    """(doc, label or None) in trec_eval order: score desc, then doc id desc by bytes."""
    docs = sorted(run_q.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)
    return [(d, qrels_q.get(d)) for d, _ in docs]


def num_rel(qrels_q: dict, level=1):
    return sum(1 for v in qrels_q.values() if v >= level)


def num_nonrel(qrels_q: dict, level=1):
    return sum(1 for v in qrels_q.values() if 0 <= v < level)


# ---------------------------------------------------------------- OML single-query rules

def oml_cmc(g, n_gt, k):
    if len(g) == 0:
        return 1.0 if n_gt == 0 else 0.0
    return 1.0 if any(g[:k]) else 0.0


def oml_precision(g, n_gt, k):
    if len(g) == 0:
        return 1.0 if n_gt == 0 else 0.0
    kk = min(k, len(g))
    hits = sum(1 for x in g[:kk] if x)
    den = min(n_gt, kk)
    if den == 0:
        return math.nan if hits == 0 else math.inf
    return hits / den


def oml_map(g, n_gt, k):
    if len(g) == 0:
        return 1.0 if n_gt == 0 else 0.0
    kk = min(k, len(g))
    hits, total = 0, 0.0
    for i in range(kk):
        if g[i]:
            hits += 1
            total += hits / (i + 1)
    return total / hits if hits else 0.0


# ---------------------------------------------------------------- PML / Musgrave

def map_at_r(g, r):
    if r <= 0:
        return 0.0
    hits, total = 0, 0.0
    for i in range(min(r, len(g))):
        if g[i]:
            hits += 1
            total += hits / (i + 1)
    return total / r


def ml_r_precision(g, r):
    m = min(r, len(g))
    if m <= 0:
        return 0.0
    return sum(1 for x in g[:m] if x) / m


def average_precision(g, r):
    if r <= 0:
        return 0.0
    hits, total = 0, 0.0
    for i, x in enumerate(g):
        if x:
            hits += 1
            total += hits / (i + 1)
    return total / r


def reciprocal_rank(g, k=None):
    for i, x in enumerate(g if k is None else g[:k]):
        if x:
            return 1.0 / (i + 1)
    return 0.0


def hit(g, k):
    return 1.0 if any(g[:k]) else 0.0


# ---------------------------------------------------------------- TF-Similarity

def tfsim_bndcg(v, k):
    window = list(v[:k])
    dcg = sum(1.0 / log2p1(i + 1) for i, x in enumerate(window) if x)
    ideal = sum(1.0 / log2p1(i + 1) for i in range(sum(1 for x in window if x)))
    return dcg / ideal if ideal > 0 else 0.0


# ---------------------------------------------------------------- torchmetrics fall-out

def fall_out(judged_nonrel_flags, nr, k=None):
    """``judged_nonrel_flags``: per ranked item, True if judged non-relevant."""
    if nr == 0:
        return 0.0
    top = judged_nonrel_flags if k is None else judged_nonrel_flags[:k]
    return sum(1 for x in top if x) / nr


# ---------------------------------------------------------------- LTR

def ltr_arp(labels):
    total = sum(labels)
    if total == 0:
        return 0.0
    return sum((i + 1) * y for i, y in enumerate(labels)) / total


def exp_dcg(labels, k=None):
    k = len(labels) if k is None else k
    return sum((2.0**y - 1.0) / log2p1(i + 1) for i, y in enumerate(labels[:k]))


def exp_ndcg(labels, ideal_labels, k=None):
    ideal = sorted((y for y in ideal_labels if y > 0), reverse=True)
    kk = len(ideal) if k is None else k
    idcg = exp_dcg(ideal, kk)
    return exp_dcg(labels, k) / idcg if idcg > 0 else 0.0


# ---------------------------------------------------------------- torchmetrics functional

def tm_order(preds):
    """Indices by pred descending (float32), ties by position."""
    p = [float(np.float32(x)) for x in preds]
    return sorted(range(len(p)), key=lambda i: (-p[i], i)), p


def tm_average_precision(preds, target, top_k=None, filt=True):
    order, p = tm_order(preds)
    k = len(order) if top_k is None else min(top_k, len(order))
    hits, total = 0, 0.0
    for rank, i in enumerate(order[:k], start=1):
        if target[i] and (p[i] > 0 or not filt):
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def tm_reciprocal_rank(preds, target, top_k=None, filt=True):
    order, p = tm_order(preds)
    k = len(order) if top_k is None else min(top_k, len(order))
    for rank, i in enumerate(order[:k], start=1):
        if target[i] and (p[i] > 0 or not filt):
            return 1.0 / rank
    return 0.0


def tm_precision(preds, target, top_k=None, adaptive_k=False, filt=True):
    order, p = tm_order(preds)
    n = len(order)
    if top_k is None or (adaptive_k and top_k > n):
        top_k = n
    if sum(target) == 0:
        return 0.0
    hits = sum(1 for i in order[:min(top_k, n)] if target[i] and (p[i] > 0 or not filt))
    return hits / top_k


def tm_recall(preds, target, top_k=None, filt=True):
    order, p = tm_order(preds)
    if sum(target) == 0:
        return 0.0
    top = order if top_k is None else order[:top_k]
    return sum(1 for i in top if target[i] and (p[i] > 0 or not filt)) / sum(target)


def tm_r_precision(preds, target):
    order, _ = tm_order(preds)
    r = sum(target)
    if r == 0:
        return 0.0
    return sum(1 for i in order[:r] if target[i]) / r


def tm_hit_rate(preds, target, top_k=None):
    order, _ = tm_order(preds)
    top = order if top_k is None else order[:top_k]
    return 1.0 if any(target[i] for i in top) else 0.0


def tm_fall_out(preds, target, top_k=None):
    order, _ = tm_order(preds)
    neg = sum(1 for t in target if not t)
    if neg == 0:
        return 0.0
    top = order if top_k is None else order[:top_k]
    return sum(1 for i in top if not target[i]) / neg


def tm_ndcg(preds, target, top_k=None):
    """Tie-averaged DCG@k / ideal DCG@k, linear gain, straight from the definition."""
    n = len(preds)
    k = n if top_k is None else top_k
    p = [float(np.float32(x)) for x in preds]
    disc = [1.0 / log2p1(i + 1) if i + 1 <= k else 0.0 for i in range(n)]
    values = sorted(set(p), reverse=True)
    dcg, start = 0.0, 0
    for v in values:
        members = [i for i in range(n) if p[i] == v]
        mean_gain = sum(target[i] for i in members) / len(members)
        dcg += mean_gain * sum(disc[start:start + len(members)])
        start += len(members)
    ideal = sorted(target, reverse=True)
    idcg = sum(ideal[i] * disc[i] for i in range(n))
    return 0.0 if idcg == 0 else dcg / idcg


def roc_curve_points(scores, y):
    """sklearn ``roc_curve(drop_intermediate=False)`` points: origin + each distinct score."""
    pts = [(0, 0)]
    for t in sorted(set(scores), reverse=True):
        tp = sum(1 for s, v in zip(scores, y) if s >= t and v)
        fp = sum(1 for s, v in zip(scores, y) if s >= t and not v)
        pts.append((tp, fp))
    return pts


def tm_auroc(preds, target, top_k=None, max_fpr=None):
    order, p = tm_order(preds)
    k = len(order) if top_k is None else min(top_k, len(order))
    sel = order[:k]
    s = [p[i] for i in sel]
    y = [bool(target[i]) for i in sel]
    if not any(y) or all(y):
        return 0.0
    if any(v < 0 or v > 1 for v in s):
        s = [float(np.float32(1) / (np.float32(1) + np.exp(-np.float32(v)))) for v in s]
    pts = roc_curve_points(s, y)
    pos, neg = sum(y), len(y) - sum(y)
    fpr = [fp / neg for _, fp in pts]
    tpr = [tp / pos for tp, _ in pts]
    if max_fpr is None or max_fpr == 1:
        return sum((fpr[j] - fpr[j - 1]) * (tpr[j] + tpr[j - 1]) / 2 for j in range(1, len(pts)))
    stop = next(j for j in range(len(fpr)) if fpr[j] > max_fpr)
    w = (max_fpr - fpr[stop - 1]) / (fpr[stop] - fpr[stop - 1])
    xs = fpr[:stop] + [max_fpr]
    ys = tpr[:stop] + [tpr[stop - 1] + w * (tpr[stop] - tpr[stop - 1])]
    partial = sum((xs[j] - xs[j - 1]) * (ys[j] + ys[j - 1]) / 2 for j in range(1, len(xs)))
    m = 0.5 * max_fpr**2
    return 0.5 * (1 + (partial - m) / (max_fpr - m))


def tm_pr_curve(preds, target, max_k, adaptive_k=False):
    order, _ = tm_order(preds)
    n = len(order)
    total = sum(target)
    prec, rec = [], []
    for k in range(1, max_k + 1):
        den = min(k, n) if adaptive_k else k
        h = sum(1 for i in order[:k] if target[i])
        prec.append(h / den if total else 0.0)
        rec.append(h / total if total else 0.0)
    return prec, rec


def tm_module(values_fn, groups, empty_fn, action, aggregation="mean"):
    """Module semantics over ``groups = {index: (preds, target)}``."""
    res = []
    for idx in sorted(groups):
        preds, target = groups[idx]
        if empty_fn(target):
            if action == "error":
                raise ValueError("empty")
            if action == "pos":
                res.append(1.0)
            elif action == "neg":
                res.append(0.0)
        else:
            res.append(values_fn(preds, target))
    if not res:
        return 0.0
    if aggregation == "mean":
        return sum(res) / len(res)
    if aggregation == "median":
        return sorted(res)[(len(res) - 1) // 2]
    return min(res) if aggregation == "min" else max(res)


# ---------------------------------------------------------------- pytorchltr

def ltr_row_order(scores, n):
    real = sorted(range(n), key=lambda j: (-scores[j], j))
    return real + list(range(n, len(scores)))


def ltr_dcg_row(scores, rel, n, exp=True):
    out, total = [], 0.0
    for i, j in enumerate(ltr_row_order(scores, n)):
        y = rel[j]
        total += ((2.0**y - 1.0) if exp else y) / log2p1(i + 1)
        out.append(total)
    return out


def ltr_ndcg_row(scores, rel, n, exp=True):
    dcg = ltr_dcg_row(scores, rel, n, exp)
    ideal = ltr_dcg_row([float(r) for r in rel], rel, n, exp)
    return [d / (i if i != 0 else 1.0) for d, i in zip(dcg, ideal)]


def ltr_arp_row(scores, rel, n):
    order = ltr_row_order(scores, n)
    num = sum((i + 1) * rel[j] for i, j in enumerate(order) if j < n)
    den = sum(rel[j] for j in order if j < n)
    return num / (den if den != 0 else 1.0)


# ---------------------------------------------------------------- pytorch-metric-learning

def pml_accuracy(query, labels, reference=None, ref_labels=None, ref_includes_query=False,
                 k=None, normalize=True, avg_of_avgs=False):
    """Brute-force PML metrics (euclidean, ties by reference index)."""
    q = np.asarray(query, dtype=np.float64)
    self_ref = reference is None
    if self_ref:
        ref, rl, ref_includes_query = q, labels, True
    else:
        ref, rl = np.asarray(reference, dtype=np.float64), ref_labels
    if normalize:
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        ref = q if self_ref else ref / np.maximum(np.linalg.norm(ref, axis=1, keepdims=True), 1e-12)
    own = 1 if ref_includes_query else 0
    nk = len(ref) - own if k is None else k
    per = {m: [] for m in ("mean_average_precision", "mean_average_precision_at_r",
                           "mean_reciprocal_rank", "precision_at_1", "r_precision")}
    kept_labels = []
    for i in range(len(q)):
        r = sum(1 for x in rl if x == labels[i]) - own
        if r <= 0:
            continue
        cands = []
        for j in range(len(ref)):
            if self_ref and j == i:
                continue
            cands.append((float(np.linalg.norm(q[i] - ref[j])), j))
        cands.sort()
        if self_ref:
            chosen = cands[:nk]
        else:
            chosen = cands[:nk + own][own:]
        g = [rl[j] == labels[i] for _, j in chosen]
        per["precision_at_1"].append(hit(g, 1))
        per["r_precision"].append(ml_r_precision(g, r))
        per["mean_average_precision_at_r"].append(map_at_r(g, r))
        per["mean_average_precision"].append(average_precision(g, r))
        per["mean_reciprocal_rank"].append(reciprocal_rank(g))
        kept_labels.append(labels[i])
    out = {}
    for m, vals in per.items():
        if not vals:
            out[m] = math.nan
        elif avg_of_avgs:
            classes = sorted(set(kept_labels))
            means = [np.mean([v for v, lb in zip(vals, kept_labels) if lb == c]) for c in classes]
            out[m] = float(np.mean(means))
        else:
            out[m] = float(np.mean(vals))
    return out


# ---------------------------------------------------------------- ranking-metrics

def erc(scores, confs):
    n = len(scores)
    order = sorted(range(n), key=lambda i: (-confs[i], i))
    curve, acc = [], 0.0
    for m, i in enumerate(order, start=1):
        acc += 1.0 - scores[i]
        curve.append(acc / m)
    return sum(curve) / n


def conf_vs_recall_at_1(matches_at_1, confs):
    p = sum(matches_at_1) / len(matches_at_1)
    pts = roc_curve_points(list(confs), [bool(x) for x in matches_at_1])
    pos = sum(1 for x in matches_at_1 if x)
    neg = len(matches_at_1) - pos
    vals = []
    for tp, fp in pts:
        tpr = tp / pos if pos else math.nan
        fpr = fp / neg if neg else math.nan
        vals.append(p * tpr + (1 - p) * (1 - fpr))
    return sum(vals) / len(vals)


# ---------------------------------------------------------------- OML PCF / FNMR

def pcf(x, rs):
    x = np.asarray(x, dtype=np.float64)
    n, d = x.shape
    s = np.linalg.svd(x - x.mean(axis=0), compute_uv=False)
    ev = [float(v) ** 2 / (n - 1) if n > 1 else math.nan for v in s]
    total = sum(ev)
    running, cum = 0.0, []
    for v in ev:
        running += v
        cum.append(running / total if total else math.nan)
    out = []
    for r in rs:
        count = sum(1 for c in cum if not (c > r))
        out.append((1 + count) / d)
    return out


def fnmr_at_fmr(pos, neg, fmr_vals):
    out = []
    for q in fmr_vals:
        t = float(np.quantile(np.asarray(neg, dtype=np.float64), q))
        out.append(sum(1 for v in pos if v >= t) / len(pos))
    return out
