"""The degrees of freedom of each measure family, and one plain implementation per choice.

A *variant* is a measure family with one choice per degree of freedom. trec_eval's
semantics is one variant (the reference); every other choice of every degree is written
here as plainly as possible, one query at a time, so that this module *is* the spec of what
each choice means (docs/conformance.md tells the same in prose). These are slow loops over
a handful of documents: they score the small conformance cases, never a real run.

Outcomes are floats, or :data:`SKIPPED` (the query gets no value) or :data:`RAISES` (the
implementation refuses the query).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import permutations, product

__all__ = ["SKIPPED", "RAISES", "Degree", "Family", "FAMILIES", "TIES", "value"]

#: The query gets no value (left out of the per-query output, as trec_eval leaves out a
#: query without judgments).
SKIPPED = "skipped"
#: The implementation raises on the query.
RAISES = "raises"

#: How documents with equal scores are ordered; ``averaged`` is the expected value over
#: every order of each group of tied documents (scikit-learn's ``ndcg_score``).
TIES = ("doc_id", "input", "optimistic", "pessimistic", "averaged")


@dataclass(frozen=True)
class Degree:
    """One degree of freedom: its name, its choices (trec_eval's first) and what it means."""

    name: str
    choices: tuple
    doc: str


@dataclass(frozen=True)
class Family:
    """A measure family: its degrees of freedom and how irmetrics names the reference."""

    name: str
    cutoff: str  # "required", "optional" or "none"
    degrees: tuple
    float_labels: bool = True  # the engine takes float labels for it (relevance="float")
    max_label: int = 3
    doc: str = ""
    engine: dict = field(default_factory=dict)  # {"k": "nDCG@{k}", "none": "nDCG"}

    def degree(self, name: str) -> Degree:
        return next(d for d in self.degrees if d.name == name)

    def engine_name(self, k: int | None) -> str:
        return self.engine["none"] if k is None else self.engine["k"].format(k=k)


_COMMON = (
    Degree("ties", TIES, "order of documents with equal scores: trec_eval's doc id descending"
                         " (bytes; for arrays, which carry no ids, the input order), the input"
                         " order, relevant first, relevant last, or the expected value over"
                         " the orders of each tie group"),
    Degree("duplicates", ("first", "counted", "held"),
           "a document retrieved twice: kept at its first rank, counted at every rank, or"
           " counted at its first rank while each repeat holds a rank as non-relevant"),
    Degree("unjudged", ("nonrelevant", "dropped"),
           "a retrieved document without a (non-negative) judgment: a non-relevant document"
           " that holds its rank, or removed from the ranking (trec_eval -J)"),
    Degree("no_judgments", (SKIPPED, "zero", "nan", RAISES),
           "a query without any judgment: not evaluated (trec_eval), 0, NaN, or an error"),
    Degree("no_relevant", ("zero", "nan", SKIPPED, RAISES),
           "a query whose judgments hold no relevant document: 0, NaN, left out, or an error"),
    Degree("empty_ranking", ("zero", "nan", SKIPPED, RAISES),
           "a query with relevant documents and an empty ranking: 0, NaN, left out, or an"
           " error"),
)
_THRESHOLD = Degree("threshold", (">=1", ">0", "judged"),
                    "which labels are relevant: at least 1 (trec_eval -l1), above 0 (float"
                    " labels such as 0.5), or any judged document (the label mapping's keys)")


def _family(name, cutoff, degrees, **kw) -> Family:
    return Family(name, cutoff, (*_COMMON, *degrees), **kw)


FAMILIES = {f.name: f for f in (
    _family("nDCG", "optional", (
        Degree("gain", ("linear", "exponential", "binary"),
               "gain of a label g > 0: g (trec_eval), 2^g - 1, or 1 for g >= 1"),
        Degree("discount", ("log2(i+1)", "max(1,log2(i))"),
               "discount at rank i: log2(i + 1) (any base gives the same ratio), or"
               " Jarvelin and Kekalainen's max(1, log2 i) (ranks 1 and 2 undiscounted)"),
        Degree("ideal", ("judged", "retrieved", "given"),
               "the ideal ranking: every judged document sorted by gain (trec_eval), the"
               " retrieved documents (top k) sorted, or the judged documents in the order"
               " given, unsorted"),
        Degree("ideal_cutoff", ("k", "all"),
               "the ideal DCG at k: cut at k (trec_eval) or over every judged document"),
    ), doc="normalised discounted cumulative gain (trec_eval ndcg, ndcg_cut)",
        engine={"k": "nDCG@{k}", "none": "nDCG"}),
    _family("DCG", "none", (
        Degree("gain", ("linear", "exponential", "binary"),
               "gain of a label g > 0: g (trec_eval), 2^g - 1, or 1 for g >= 1"),
        Degree("discount", ("log2(i+1)", "max(1,log2(i))", "ln(i+1)"),
               "discount at rank i: log2(i + 1), max(1, log2 i), or the natural log ln(i + 1)"
               " (unlike nDCG, DCG depends on the base)"),
    ), doc="discounted cumulative gain (trec_eval dcg)", engine={"none": "dcg"}),
    _family("AP", "optional", (
        _THRESHOLD,
        Degree("denominator", ("R", "min(R,k)", "hits", "k"),
               "what the sum of precisions at relevant ranks is divided by: every relevant"
               " document R (trec_eval), min(R, k), the relevant documents retrieved (in the"
               " top k), or k"),
    ), doc="average precision (trec_eval map, map_cut)", engine={"k": "AP@{k}", "none": "AP"}),
    _family("P", "required", (
        _THRESHOLD,
        Degree("denominator", ("k", "retrieved", "min(R,k)"),
               "precision at k divided by k (trec_eval), by the documents retrieved"
               " min(n, k), or by min(R, k)"),
    ), doc="precision at k (trec_eval P)", engine={"k": "P@{k}"}),
    _family("R", "required", (
        _THRESHOLD,
        Degree("denominator", ("R", "min(R,k)"),
               "recall at k divided by R (trec_eval) or by min(R, k)"),
    ), doc="recall at k (trec_eval recall)", engine={"k": "R@{k}"}),
    _family("RR", "optional", (_THRESHOLD,), doc="reciprocal rank (trec_eval recip_rank)",
            engine={"k": "RR@{k}", "none": "RR"}),
    _family("Rprec", "none", (
        _THRESHOLD,
        Degree("denominator", ("R", "retrieved"),
               "precision at rank R divided by R (trec_eval) or by min(n, R)"),
    ), doc="R-precision (trec_eval Rprec)", engine={"none": "Rprec"}),
    _family("bpref", "none", (
        _THRESHOLD,
        Degree("denominator", ("min(R,NR)", "R"),
               "the penalty 1 - min(nonrel above, R) / D: D = min(R, NR) (trec_eval 8 and"
               " later) or D = R (the original definition)"),
    ), doc="binary preference (trec_eval bpref)", engine={"none": "bpref"}),
    _family("Success", "required", (_THRESHOLD,),
            doc="success (hit rate) at k (trec_eval success)", engine={"k": "Success@{k}"}),
    _family("ERR", "required", (
        Degree("gain", ("exponential", "linear"),
               "stopping probability of label g: (2^g - 1) / 2^gmax (gdeval), or g / gmax"),
        Degree("max_grade", ("4", "query"),
               "gmax: gdeval's fixed 4, or the highest label of the query's judgments"),
    ), float_labels=False, max_label=4, doc="expected reciprocal rank at k (gdeval err)",
        engine={"k": "ERR@{k}"}),
)}

#: Families the engine refuses float labels for when a cutoff is given.
_NO_FLOAT_AT_K = ("RR",)


def floats_allowed(family: Family, k: int | None) -> bool:
    """Whether the engine's reference takes float labels for this family and cutoff."""
    return family.float_labels and not (k is not None and family.name in _NO_FLOAT_AT_K)


def reference_choices(family: Family, kind: str) -> dict:
    """trec_eval's choice of every degree; arrays carry no doc ids, so there the tie rule
    that stands for trec_eval's is the input order."""
    ref = {d.name: d.choices[0] for d in family.degrees}
    if kind == "arrays":
        ref["ties"] = "input"
    if family.name == "bpref":
        ref["unjudged"] = "dropped"  # trec_eval's bpref skips unjudged documents
    return ref


# --------------------------------------------------------------------------------------
# The plain implementations. A ranking is a list of labels in rank order, None for a
# document without a non-negative judgment; ``judged`` is the query's labels in the order
# given (negative labels included, as the input holds them).


def value(family: Family, k: int | None, choices: dict, labels, ranking, ordered: bool):
    """The value of one query under ``choices``.

    Parameters
    ----------
    family, k, choices
        The variant.
    labels : sequence of (doc_id, label)
        The query's judgments, in the order given.
    ranking : sequence of (doc_id, score)
        The retrieved documents in input order; ``ordered`` says the input order is
        already the rank order (the "ids" input, where scores are only for the reference).
    """
    if not labels:
        return _special(choices["no_judgments"])
    judged = [g for _, g in labels]
    if not any(_relevant(family, choices, g) for g in judged):
        return _special(choices["no_relevant"])
    if not ranking:
        return _special(choices["empty_ranking"])
    label_of = dict(labels)
    docs = list(ranking)
    if choices["duplicates"] == "first":
        firsts: dict = {}
        for doc in docs:
            firsts.setdefault(doc[0], doc)
        docs = list(firsts.values())
    rel = [_code(label_of.get(doc)) for doc, _ in docs]
    if choices["duplicates"] == "held":
        rel = [None if any(d[0] == doc for d in docs[:i]) else r
               for i, ((doc, _), r) in enumerate(zip(docs, rel))]
    if choices["unjudged"] == "dropped":
        keep = [r is not None for r in rel]
        docs = [d for d, kept in zip(docs, keep) if kept]
        rel = [r for r, kept in zip(rel, keep) if kept]
    scores = [s for _, s in docs]
    ids = [d for d, _ in docs]
    if ordered:
        return _measure(family, k, choices, rel, judged)
    if choices["ties"] == "averaged":
        orders = _tie_orders(rel, scores)
        return sum(_measure(family, k, choices, r, judged) for r in orders) / len(orders)
    return _measure(family, k, choices, _ordered(rel, scores, ids, choices["ties"]), judged)


def _special(choice):
    return {"zero": 0.0, "nan": math.nan}.get(choice, choice)


def _code(label):
    """A retrieved document's label; None when unjudged or judged negative (trec_eval's
    codes -1 and -2)."""
    return None if label is None or label < 0 else label


def _relevant(family: Family, choices: dict, g) -> bool:
    if g is None or g < 0:
        return False
    if family.name in ("nDCG", "DCG", "ERR"):
        return g > 0  # the gain families: a query with no positive label has ideal 0
    return {">=1": g >= 1, ">0": g > 0, "judged": True}[choices["threshold"]]


def _ordered(rel, scores, ids, ties):
    """Rank order under one tie rule: score descending, ties by the rule."""
    idx = list(range(len(rel)))
    if ties == "doc_id":
        # byte order of the doc ids, descending (trec_eval)
        idx.sort(key=lambda i: ids[i].encode("utf-8"), reverse=True)
    elif ties in ("optimistic", "pessimistic"):
        idx.sort(key=lambda i: -1.0 if rel[i] is None else float(rel[i]),
                 reverse=ties == "optimistic")
    idx.sort(key=lambda i: -scores[i])  # stable: the tie order above survives
    return [rel[i] for i in idx]


def _tie_orders(rel, scores):
    """Every distinct arrangement of the labels inside each group of equal scores, each
    once (they are equally likely under a uniformly random order of the group)."""
    idx = sorted(range(len(rel)), key=lambda i: -scores[i])
    groups: list = []
    for i in idx:
        if groups and scores[groups[-1][0]] == scores[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    options = [sorted(set(permutations([rel[i] for i in g])), key=repr) for g in groups]
    return [[r for part in combo for r in part] for combo in product(*options)]


def _measure(family: Family, k, c: dict, rel: list, judged: list) -> float:
    return _MEASURES[family.name](k, c, rel, judged, family)


def _binary(c, rel, judged, family):
    is_rel = [_relevant(family, c, r) for r in rel]
    n_rel = sum(_relevant(family, c, g) for g in judged)
    return is_rel, n_rel


def _ap(k, c, rel, judged, family):
    is_rel, n_rel = _binary(c, rel, judged, family)
    top = is_rel if k is None else is_rel[:k]
    hits, total = 0, 0.0
    for i, r in enumerate(top, 1):
        if r:
            hits += 1
            total += hits / i
    den = {"R": n_rel, "min(R,k)": n_rel if k is None else min(n_rel, k), "hits": hits,
           "k": n_rel if k is None else k}[c["denominator"]]
    return total / den if den else 0.0


def _precision(k, c, rel, judged, family):
    is_rel, n_rel = _binary(c, rel, judged, family)
    hits = sum(is_rel[:k])
    den = {"k": k, "retrieved": min(k, len(rel)), "min(R,k)": min(n_rel, k)}[c["denominator"]]
    return hits / den if den else 0.0


def _recall(k, c, rel, judged, family):
    is_rel, n_rel = _binary(c, rel, judged, family)
    den = {"R": n_rel, "min(R,k)": min(n_rel, k)}[c["denominator"]]
    return sum(is_rel[:k]) / den


def _rr(k, c, rel, judged, family):
    is_rel, _ = _binary(c, rel, judged, family)
    top = is_rel if k is None else is_rel[:k]
    return next((1.0 / i for i, r in enumerate(top, 1) if r), 0.0)


def _rprec(k, c, rel, judged, family):
    is_rel, n_rel = _binary(c, rel, judged, family)
    den = {"R": n_rel, "retrieved": min(len(rel), n_rel)}[c["denominator"]]
    return sum(is_rel[:n_rel]) / den if den else 0.0


def _bpref(k, c, rel, judged, family):
    _, n_rel = _binary(c, rel, judged, family)
    n_nonrel = sum(1 for g in judged if g >= 0 and not _relevant(family, c, g))
    den = {"min(R,NR)": min(n_rel, n_nonrel), "R": n_rel}[c["denominator"]]
    nonrel_above, total = 0, 0.0
    for r in rel:
        if r is None:
            # unjudged: skipped by trec_eval; "nonrelevant" counts it as judged non-relevant
            nonrel_above += c["unjudged"] == "nonrelevant"
        elif not _relevant(family, c, r):
            nonrel_above += 1
        else:
            total += 1.0 - min(nonrel_above, n_rel) / den if nonrel_above and den else 1.0
    return total / n_rel


def _success(k, c, rel, judged, family):
    is_rel, _ = _binary(c, rel, judged, family)
    return 1.0 if any(is_rel[:k]) else 0.0


def _gain(c, g) -> float:
    if g is None or g <= 0:
        return 0.0
    return {"linear": float(g), "exponential": 2.0 ** g - 1.0,
            "binary": 1.0 if g >= 1 else 0.0}[c["gain"]]


def _discount(c, i: int) -> float:
    if c["discount"] == "log2(i+1)":
        return math.log2(i + 1)
    if c["discount"] == "ln(i+1)":
        return math.log(i + 1)
    return max(1.0, math.log2(i))


def _dcg(c, gains) -> float:
    return sum(g / _discount(c, i) for i, g in enumerate(gains, 1) if g)


def _ndcg(k, c, rel, judged, family):
    top = rel if k is None else rel[:k]
    dcg = _dcg(c, [_gain(c, r) for r in top])
    if c["ideal"] == "judged":
        ideal = sorted((_gain(c, g) for g in judged), reverse=True)
    elif c["ideal"] == "retrieved":
        ideal = sorted((_gain(c, r) for r in top), reverse=True)
    else:  # the judged documents' gains in the order given (Spark's RankingMetrics)
        ideal = [_gain(c, g) for g in judged]
    if k is not None and c["ideal_cutoff"] == "k":
        ideal = ideal[:k]
    idcg = _dcg(c, ideal)
    return dcg / idcg if idcg > 0 else 0.0


def _dcg_measure(k, c, rel, judged, family):
    return _dcg(c, [_gain(c, r) for r in rel])


def _err(k, c, rel, judged, family):
    gmax = 4 if c["max_grade"] == "4" else max(g for g in judged if g is not None)
    total, reach = 0.0, 1.0
    for i, r in enumerate(rel[:k], 1):
        g = 0 if r is None or r <= 0 else r
        stop = (2.0 ** g - 1.0) / 2.0 ** gmax if c["gain"] == "exponential" else g / gmax
        total += reach * stop / i
        reach *= 1.0 - stop
    return total


_MEASURES = {"nDCG": _ndcg, "DCG": _dcg_measure, "AP": _ap, "P": _precision, "R": _recall, "RR": _rr,
             "Rprec": _rprec, "bpref": _bpref, "Success": _success, "ERR": _err}
