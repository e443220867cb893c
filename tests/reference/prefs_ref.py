"""Slow reference for trec_eval's preference (docs/reference/trec_eval.md §8.3) and judgment-group (§8.2) measures.

Plain Python, one query at a time, written from the specification's definitions in
the order trec_eval performs them: rank the run, assign docid ranks, walk each
judgment group in EC or PA mode filling the count matrix ``C``, then compute every
measure from the counts. Never imported by the package.

Inputs are plain data: prefs lines ``(qid, jg, jsg, docno, rel_level)``, qrels_jg lines
``(qid, jg, docno, rel)``, run lines ``(qid, docno, score)``. Results are
``{qid: {output name: value}}`` for the evaluated queries.
"""

from __future__ import annotations

import math
from collections import defaultdict

BOGUS = "ceci_nest_pas_un_docno"

PREFS_MEASURES = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
    "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
    "prefs_avgjg_imp",
)


class ReferenceError_(ValueError):
    """The reference refuses the input (trec_eval fails or has undefined behaviour)."""


def _b(s: str) -> bytes:
    return s.encode("utf-8")


def _queries(judged_qids, run, complete):
    run_qids = {q for q, _, _ in run}
    qids = sorted(set(judged_qids), key=_b)
    return [q for q in qids if complete or q in run_qids]


def _ranking(run, qid, max_docs, doc_descending):
    """Doc ids of query ``qid`` in final order (with the ``complete`` placeholder)."""
    rows = [(d, s) for q, d, s in run if q == qid]
    if not rows:
        rows = [(BOGUS, 1.0)]
    if doc_descending:
        rows.sort(key=lambda r: _b(r[0]), reverse=True)
    else:
        rows.sort(key=lambda r: _b(r[0]))
    rows.sort(key=lambda r: -r[1])  # stable: score descending, ties keep doc order
    if max_docs is not None:
        rows = rows[:max_docs]
    seen = set()
    for d, _ in rows:
        if d in seen:
            raise ReferenceError_(f"duplicate docs {d}")
        seen.add(d)
    return [d for d, _ in rows]


# ------------------------------------------------------------------------------- prefs


class JG:
    def __init__(self):
        self.ful_ret = self.ful_imp = self.poss_ret = self.poss_imp = self.notoccur = 0
        self.num_rel = self.num_rel_ret = self.num_nonrel = self.num_nonrel_ret = 0
        self.ecs = None  # EC mode: list of (level, [docid ranks])
        self.rel_array = None  # PA mode: docid -> last level seen (-1.0 if absent)
        self.pa = None  # PA mode: closed preference matrix


def _count(jg, a, b, njr, C):
    C[a][b] += 1
    if a < b:
        if b < njr:
            jg.ful_ret += 1
        elif a < njr:
            jg.ful_imp += 1
        else:
            jg.notoccur += 1
    else:
        if a < njr:
            jg.poss_ret += 1
        elif b < njr:
            jg.poss_imp += 1
        else:
            jg.notoccur += 1


def _ec_jg(lines, njr, C):
    jg = JG()
    jg.ecs = []
    for _, level, rank in lines:
        if not jg.ecs or jg.ecs[-1][0] != level:
            jg.ecs.append((level, []))
        jg.ecs[-1][1].append(rank)
    for e1, (level, ranks) in enumerate(jg.ecs):
        ret = sum(1 for r in ranks if r < njr)
        if level > 0.0:
            jg.num_rel += len(ranks)
            jg.num_rel_ret += ret
        else:
            jg.num_nonrel += len(ranks)
            jg.num_nonrel_ret += ret
        for e2 in range(e1 + 1, len(jg.ecs)):
            for a in ranks:
                for b in jg.ecs[e2][1]:
                    if a == b:
                        raise ReferenceError_("doc occurs with different rel_level in same jsg")
                    _count(jg, a, b, njr, C)
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    return jg


def _pa_jg(lines, nj, njr, C):
    jg = JG()
    rel = [-1.0] * nj
    pa = [[False] * nj for _ in range(nj)]
    for i, (jsg, level, rank) in enumerate(lines):
        if (rel[rank] > 0.0 and level == 0.0) or (rel[rank] == 0.0 and level > 0.0):
            raise ReferenceError_("doc has both 0 and non-0 rel_level assigned")
        rel[rank] = level
        j = i + 1
        while j < len(lines) and lines[j][0] == jsg and lines[j][1] == level:
            j += 1
        while j < len(lines) and lines[j][0] == jsg:
            pa[rank][lines[j][2]] = True
            j += 1
    for k in range(nj):  # Warshall transitive closure
        for i in range(nj):
            if pa[i][k]:
                for j in range(nj):
                    if pa[k][j]:
                        pa[i][j] = True
    for i in range(nj):
        pa[i][i] = False
    for i in range(nj):
        for j in range(nj):
            if i != j and pa[i][j] and pa[j][i]:
                raise ReferenceError_("Pref inconsistency found")
    for i in range(nj):
        if rel[i] > 0.0:
            jg.num_rel += 1
            jg.num_rel_ret += i < njr
        elif rel[i] == 0.0:
            jg.num_nonrel += 1
            jg.num_nonrel_ret += i < njr
    for i in range(nj):
        for j in range(nj):
            if pa[i][j]:
                _count(jg, i, j, njr, C)
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    jg.rel_array, jg.pa = rel, pa
    return jg


def _ec_recount(jg, njr, retrieved_only):
    """trec_eval's recount with the lowest class cut to its first R lines."""
    r = jg.num_rel_ret if retrieved_only else jg.num_rel
    last = jg.ecs[-1][1]

    def members(ranks, limit=None):
        out = []
        for k, x in enumerate(ranks if limit is None else range(limit)):
            if limit is not None:
                if k >= len(ranks):
                    raise ReferenceError_("recount reads past the lowest class")
                x = ranks[k]
            if retrieved_only and x >= njr:
                break
            out.append(x)
        return out

    def fulfilled(a, b):
        return a < b if retrieved_only else (a < b and a < njr)

    ful = poss = 0
    n = len(jg.ecs)
    for e1 in range(n):
        for e2 in range(e1 + 1, n - 1):
            for a in members(jg.ecs[e1][1]):
                for b in members(jg.ecs[e2][1]):
                    if fulfilled(a, b):
                        ful += 1
                    else:
                        poss += 1
    new_class = members(last, limit=r)
    for e1 in range(n):
        for a in members(jg.ecs[e1][1]):
            for b in new_class:
                if fulfilled(a, b):
                    ful += 1
                else:
                    poss += 1
    return ful, poss + ful


def _pa_recount(jg, nj, njr, retrieved_only):
    scan = njr if retrieved_only else nj
    seen, first_discarded = 0, scan
    for i in range(scan):
        if jg.rel_array[i] == 0.0:
            seen += 1
            if seen == jg.num_rel + 1:
                first_discarded = i
                break
    def dropped(i):
        return i >= first_discarded and jg.rel_array[i] == 0.0
    ful = poss = 0
    limit = njr if retrieved_only else nj
    for i in range(limit):
        for j in range(limit):
            if i == j or dropped(i) or dropped(j) or not jg.pa[i][j]:
                continue
            if i < njr and (i < j):
                ful += 1  # A1 (both retrieved) or A3 (j not retrieved)
            else:
                poss += 1
    return ful, poss + ful


def _div(a, b):
    return a / b if b else 0.0


def _nan_div(a, b):
    return a / b if b else math.nan  # C's 0/0 (never x/0 with x > 0 here)


def prefs_query(lines, ranking):
    """Every prefs_* measure of one query. ``lines``: (jg, jsg, docno, level)."""
    judged = sorted({d for _, _, d, _ in lines}, key=_b)
    judged_set = set(judged)
    retrieved = [d for d in ranking if d in judged_set]
    rank = {d: i for i, d in enumerate(retrieved)}
    njr = len(retrieved)
    for d in judged:
        if d not in rank:
            rank[d] = len(rank)
    nj = len(judged)
    C = [[0] * nj for _ in range(nj)]
    by_jg = defaultdict(list)
    for jgid, jsg, d, level in lines:
        by_jg[jgid].append((jsg, level, rank[d]))
    jgs = []
    for jgid in sorted(by_jg, key=_b):
        jl = sorted(by_jg[jgid], key=lambda t: (_b(t[0]), -t[1], t[2]))
        if len({t[0] for t in jl}) == 1:
            jgs.append(_ec_jg(jl, njr, C))
        else:
            jgs.append(_pa_jg(jl, nj, njr, C))

    out = {}
    poss_all = sum(g.poss_ret + g.poss_imp + g.notoccur for g in jgs)
    ful_all = sum(g.ful_ret + g.ful_imp for g in jgs)
    out["prefs_num_prefs_poss"] = float(poss_all)
    out["prefs_num_prefs_ful"] = float(ful_all)
    out["prefs_num_prefs_ful_ret"] = float(sum(g.ful_ret for g in jgs))
    out["prefs_simp"] = _div(ful_all, poss_all)
    out["prefs_simp_ret"] = _div(sum(g.ful_ret for g in jgs), sum(g.poss_ret for g in jgs))
    out["prefs_simp_imp"] = _div(ful_all, sum(g.poss_ret + g.poss_imp for g in jgs))

    def avg(terms):
        total = 0.0
        for t in terms:
            total += t
        return total / len(jgs) if total > 0.0 else 0.0

    out["prefs_avgjg"] = avg(_div(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp + g.notoccur)
                             for g in jgs)
    out["prefs_avgjg_ret"] = avg(_div(g.ful_ret, g.poss_ret) for g in jgs)
    out["prefs_avgjg_imp"] = avg(_div(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp)
                                 for g in jgs)

    def rnonrel(g):
        r, n = g.num_rel, g.num_nonrel
        if r >= n:
            return _nan_div(g.ful_ret + g.ful_imp + g.num_rel_ret * (r - n),
                            g.poss_ret + g.poss_imp + g.notoccur + g.num_rel * (r - n))
        ful, poss = (_ec_recount(g, njr, False) if g.ecs is not None
                     else _pa_recount(g, nj, njr, False))
        return _nan_div(ful, poss)

    def rnonrel_ret(g):
        r, n = g.num_rel_ret, g.num_nonrel_ret
        if r >= n:
            return _nan_div(g.ful_ret + g.num_rel_ret * (r - n),
                            g.poss_ret + g.num_rel * (r - n))
        ful, poss = (_ec_recount(g, njr, True) if g.ecs is not None
                     else _pa_recount(g, nj, njr, True))
        return _nan_div(ful, poss)

    out["prefs_avgjg_Rnonrel"] = avg(rnonrel(g) for g in jgs)
    out["prefs_avgjg_Rnonrel_ret"] = avg(rnonrel_ret(g) for g in jgs)

    def score(i, j):
        return C[i][j] / (C[i][j] + C[j][i])

    def judged_pairs(i_range, j_range_of):
        return [(i, j) for i in i_range for j in j_range_of(i) if C[i][j] or C[j][i]]

    both = judged_pairs(range(njr), lambda i: range(i + 1, njr))
    one = judged_pairs(range(njr), lambda i: range(njr, nj))
    neither = judged_pairs(range(njr, nj), lambda i: range(i + 1, nj))
    total = 0.0
    for i, j in both:  # trec_eval's summation order: both retrieved, then one retrieved
        total += score(i, j)
    out["prefs_pair_ret"] = total / len(both) if both else 0.0
    for i, j in one:
        total += score(i, j)
    n_imp = len(both) + len(one)
    out["prefs_pair_imp"] = total / n_imp if n_imp else 0.0
    out["prefs_pair"] = total / (n_imp + len(neither)) if n_imp + len(neither) else 0.0
    return out


def evaluate_prefs(prefs_lines, run, *, max_docs=None, complete=False):
    """``{qid: {measure: value}}`` for every prefs_* measure."""
    by_q = defaultdict(list)
    for q, jgid, jsg, d, level in prefs_lines:
        by_q[q].append((jgid, jsg, d, float(level) + 0.0))
    out = {}
    for q in _queries(by_q, run, complete):
        ranking = _ranking(run, q, max_docs, doc_descending=False)
        out[q] = prefs_query(by_q[q], ranking)
    return out


# ----------------------------------------------------------------------------- qrels_jg


def _jg_measures(codes, judgments, level, cutoffs, multipliers):
    """map, P and Rprec_mult (``*_avgjg`` names) of one JG's rel list, as trec_eval's loops compute them."""
    num_ret = len(codes)
    num_rel = sum(1 for r in judgments.values() if r >= 0 and r >= level)
    num_rel_ret = sum(1 for c in codes if c >= 0 and c >= level)
    out = {}
    rel_so_far, total = 0, 0.0
    for i, c in enumerate(codes):
        if c >= level:
            rel_so_far += 1
            total += rel_so_far / (i + 1)
    out["map_avgjg"] = total / num_rel if rel_so_far else 0.0
    for k in cutoffs:
        out[f"P_avgjg_{k}"] = sum(1 for c in codes[:k] if c >= level) / k
    for x in multipliers:
        cut = int(x * num_rel + 0.9)  # C (long) truncates toward zero
        value = 0.0
        if cut > num_ret:
            value = num_rel_ret / cut
        else:
            rel_so_far = num_rel_ret
            for i in range(num_ret, 0, -1):
                if rel_so_far <= 0:
                    break
                if i == cut:
                    value = rel_so_far / i
                if codes[i - 1] >= level:
                    rel_so_far -= 1
        out[f"Rprec_mult_avgjg_{x:3.2f}"] = value
    return out


def evaluate_jg(jg_lines, run, *, relevance_level=1, judged_only=False, max_docs=None,
                complete=False, cutoffs=(5, 10, 15, 20, 30, 100, 200, 500, 1000),
                multipliers=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)):
    """``{qid: {name: value}}`` for map_avgjg, P_avgjg_k and Rprec_mult_avgjg_x."""
    by_q = defaultdict(lambda: defaultdict(dict))
    for q, jgid, d, rel in jg_lines:
        by_q[q][jgid][d] = int(rel)
    out = {}
    for q in _queries(by_q, run, complete):
        ranking = _ranking(run, q, max_docs, doc_descending=True)
        sums = defaultdict(float)
        groups = sorted(by_q[q], key=_b)
        for jgid in groups:
            judgments = by_q[q][jgid]
            codes = [(-1 if d not in judgments else (-2 if judgments[d] < 0 else judgments[d]))
                     for d in ranking]
            if judged_only:
                codes = [c for c in codes if c >= 0]
            for name, v in _jg_measures(codes, judgments, relevance_level, cutoffs,
                                        multipliers).items():
                sums[name] += v
        values = {}
        for name, total in sums.items():
            if len(groups) > 1:
                total /= len(groups)
            values[name] = total
        out[q] = values
    return out
