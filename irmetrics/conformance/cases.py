"""The conformance corpus: small generated queries, each with irmetrics' value.

Every case is one query: its judgments and its retrieved documents. The generator is
seeded by the family, the cutoff and the input kind, so the corpus is the same on every
machine. Cases have ties, duplicates (only the "ids" input can hold them), graded, float
and negative labels, unjudged documents, judged documents never retrieved, queries without
judgments, without a relevant document and with an empty ranking; a few long ones reach
past the cutoff with more relevant documents than ``k``.

The reference value of each case is irmetrics' engine under trec_eval's semantics
(:func:`irmetrics.evaluate` on pytrec_eval's dicts); the value under every other variant
comes from the plain implementations of :mod:`irmetrics.conformance.spec`.
"""

from __future__ import annotations

import math
import random
import warnings
from dataclasses import dataclass

from ..evaluate import evaluate
from ..exceptions import MissingQueriesWarning
from .spec import SKIPPED, Family, floats_allowed, reference_choices, value

__all__ = ["Case", "INPUTS", "generate_cases", "reference_values"]

#: The input kinds a third-party callable can take (see :func:`~irmetrics.conformance.check`).
INPUTS = ("arrays", "ids", "dicts")

#: Random cases per corpus (templates come on top).
RANDOM_CASES = 240
#: Most orders a case's tie groups may have (the "averaged" variant visits every one).
MAX_TIE_ORDERS = 360
_DOC_NAMES = ("a", "b", "c", "d1", "d2", "d9", "d10", "d11", "x", "z", "Z", "e7", "q", "n3",
              "n30", "m", "k", "y", "w", "p")


@dataclass(frozen=True)
class Case:
    """One query of the corpus.

    Attributes
    ----------
    index : int
        Position in the corpus.
    labels : tuple of (str, label)
        The judgments, in the order given (a label is an int, or a float in float cases).
    ranking : tuple of (str, float)
        The retrieved documents in input order with their scores; for the "ids" input the
        input order is the rank order and a document may repeat.
    kind : str
        The input kind the case is written for.
    """

    index: int
    labels: tuple
    ranking: tuple
    kind: str

    @property
    def size(self) -> int:
        """Judgments plus retrieved documents: what "smallest" counterexample means."""
        return len(self.labels) + len(self.ranking)

    def describe(self) -> str:
        """The case as the callable receives it, on one line."""
        if self.kind == "arrays":
            return (f"labels={[g for _, g in self.labels]} "
                    f"scores={[s for _, s in self.ranking]}")
        if self.kind == "ids":
            return f"ranking={[d for d, _ in self.ranking]} labels={dict(self.labels)}"
        return f"qrels={{'1': {dict(self.labels)}}} run={{'1': {dict(self.ranking)}}}"


def generate_cases(family: Family, k: int | None, kind: str) -> list[Case]:
    """The corpus of one family, cutoff and input kind: templates, then random cases.

    Examples
    --------
    >>> from irmetrics.conformance.spec import FAMILIES
    >>> cases = generate_cases(FAMILIES["P"], 5, "ids")
    >>> len(cases) >= 200, cases[0].kind
    (True, 'ids')
    """
    rng = random.Random(f"irmetrics-conformance/{family.name}/{k}/{kind}")
    floats = floats_allowed(family, k)
    raw = list(_templates(family, k, kind, rng))
    while len(raw) < RANDOM_CASES + 40:
        raw.append(_random_case(family, k, kind, rng, floats))
    if kind == "arrays":
        raw = [_aligned(labels, ranking) for labels, ranking in raw]
        raw = [pair for pair in raw if pair is not None]
    return [Case(i, labels, ranking, kind) for i, (labels, ranking) in enumerate(raw)]


def _aligned(labels, ranking):
    """Arrays hold one label per scored document, in the same order: the labels put in
    the ranking's order, or None when the case cannot be written as two aligned arrays."""
    label_of = dict(labels)
    if sorted(label_of) != sorted(d for d, _ in ranking) or len(label_of) != len(ranking):
        return None
    return tuple((d, label_of[d]) for d, _ in ranking), tuple(ranking)


def _labels_pool(family: Family, floats: bool):
    pool: list = list(range(family.max_label + 1)) + [0, 1]
    if floats:
        pool += [0.5, 1.5, 2.5]
    return pool


def _random_case(family, k, kind, rng, floats):
    reach = (k if k is not None and k <= 8 else 8) + 3
    n = rng.choice([0, 1, 2, 2, 3, 3, 4, 4, 5, 6]) if rng.random() < 0.5 else rng.randint(0, reach)
    names = rng.sample(_DOC_NAMES, min(len(_DOC_NAMES), n + 3))
    pool = _labels_pool(family, floats and rng.random() < 0.3)
    negative = rng.random() < 0.15
    retrieved = names[:n]
    labels = []
    for doc in retrieved:
        if kind == "arrays" or rng.random() > 0.2:
            labels.append((doc, -1 if negative and rng.random() < 0.2 else rng.choice(pool)))
    if kind != "arrays":
        for doc in names[n:n + rng.choice([0, 0, 1, 2])]:
            labels.append((doc, rng.choice(pool)))
        rng.shuffle(labels)
    if rng.random() < 0.06:
        labels = []
    ranking = _scores(retrieved, kind, rng)
    if kind == "ids" and ranking and rng.random() < 0.35:
        for _ in range(rng.randint(1, 2)):
            at = rng.randrange(len(ranking) + 1)
            ranking.insert(at, (rng.choice(retrieved), 0.0))
        ranking = [(d, float(len(ranking) - i)) for i, (d, _) in enumerate(ranking)]
    return tuple(labels), tuple(_bounded_ties(labels, ranking))


def _scores(docs, kind, rng):
    if kind == "ids":
        return [(d, float(len(docs) - i)) for i, d in enumerate(docs)]
    levels = rng.choice([(1.0,), (1.0, 2.0), (0.5, 1.0, 2.0), (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)])
    return [(d, rng.choice(levels)) for d in docs]


def _bounded_ties(labels, ranking):
    """Keep the "averaged" variant cheap: while a case has too many tie orders, the
    largest tie group gets distinct scores (in input order)."""
    ranking = list(ranking)
    while _tie_orders(labels, ranking) > MAX_TIE_ORDERS:
        groups: dict = {}
        for doc, score in ranking:
            groups.setdefault(score, []).append(doc)
        big = max(groups, key=lambda s: len(groups[s]))
        n = len(groups[big])
        seen = iter(range(n))
        ranking = [(d, s + (n - next(seen)) / (n + 1) / 8 if s == big else s)
                   for d, s in ranking]
    return ranking


def _tie_orders(labels, ranking) -> int:
    label_of = dict(labels)
    groups: dict = {}
    for doc, score in ranking:
        groups.setdefault(score, []).append(label_of.get(doc))
    total = 1
    for members in groups.values():
        counts: dict = {}
        for g in members:
            counts[repr(g)] = counts.get(repr(g), 0) + 1
        orders = math.factorial(len(members))
        for c in counts.values():
            orders //= math.factorial(c)
        total *= orders
    return total


def _templates(family, k, kind, rng):
    """Cases that random draws rarely make: long rankings with more relevant documents
    than k, a duplicate of a non-relevant document above a relevant one, a query without
    judgments, one without a relevant document, one with an empty ranking."""
    top = family.max_label
    yield (), (("a", 1.0),)
    yield (("a", 0),), (("a", 1.0),)
    yield (("a", 0), ("b", 0)), ()
    if kind != "arrays":
        yield (("a", 1),), ()
        yield (("a", 2), ("b", 1)), ()
    yield (("b", 1), ("a", top)), (("b", 2.0), ("a", 1.0))
    yield (("a", 1), ("b", 0)), (("a", 1.0), ("b", 1.0))
    yield (("b", 1), ("a", 0)), (("a", 1.0), ("b", 1.0))
    if kind == "ids":
        yield (("a", 0), ("b", 1)), (("a", 3.0), ("a", 2.0), ("b", 1.0))
        yield (("b", 1),), (("b", 3.0), ("b", 2.0), ("a", 1.0))
    if kind != "arrays":
        yield (("b", 1),), (("u", 2.0), ("b", 1.0))
    cut = k or 4
    fillers = [(f"f{i}", 0) for i in range(cut - 1)]
    scored = [(d, float(cut + 5 - i)) for i, (d, _) in enumerate(fillers)]
    for group in ((0, 1, 0, 1), (1, 0, 1, 0)):
        # a tie group across the cutoff: input order, doc id order, relevant first and
        # relevant last put different labels at rank k
        tied = [(f"t{i}", g) for i, g in enumerate(group, 1)]
        yield tuple(fillers + tied), tuple(scored + [(d, 1.0) for d, _ in tied])
    # the only relevant document at rank k + 1, below a repeated or an unjudged document
    below = [(f"f{i}", float(2 * cut - i)) for i in range(cut - 1)] + [("r", 1.0)]
    labels = tuple(fillers + [("r", top)])
    if kind == "ids":
        yield labels, (("f0", 9e9),) + tuple(below)
    if kind == "arrays":
        yield labels[:1] + (("u", -1),) + labels[1:], (below[0], ("u", 9e9)) + tuple(below[1:])
    else:
        yield labels, (("u", 9e9),) + tuple(below)
    reach = (k or 6) + 2
    for _ in range(8):
        docs = [f"r{i}" for i in range(reach)]
        labels = [(d, rng.randint(1, top)) for d in docs]
        ranked = docs[:reach - 1] if kind != "arrays" else docs
        rng.shuffle(ranked)
        ranking = [(d, float(len(ranked) - i)) for i, d in enumerate(ranked)]
        yield tuple(labels), tuple(ranking)


def reference_values(family: Family, k: int | None, kind: str, cases) -> list:
    """irmetrics' engine under trec_eval's semantics, one value per case (or ``SKIPPED``
    where trec_eval evaluates no query).

    The cases become the queries of one pair of pytrec_eval dicts. An "ids" ranking keeps
    the first occurrence of a repeated document and gets falling scores; arrays, which
    carry no doc ids, keep ties in input order (``ties="input_order"``).
    """
    qrels, run = {}, {}
    for case in cases:
        qid = f"c{case.index}"
        qrels[qid] = dict(case.labels)
        ranking = case.ranking
        if kind == "ids":
            firsts = list(dict.fromkeys(d for d, _ in ranking))
            ranking = tuple((d, float(len(firsts) - i)) for i, d in enumerate(firsts))
        run[qid] = dict(ranking)
    floats = any(isinstance(g, float) for c in cases for _, g in c.labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        name = family.engine_name(k)
        results = evaluate(qrels, run, [name], relevance="float" if floats else "int",
                           ties="input_order" if kind == "arrays" else "trec_eval")
    per_query = results.to_dict()
    return [per_query[f"c{c.index}"][name] if f"c{c.index}" in per_query else SKIPPED
            for c in cases]


def variant_value(family: Family, k: int | None, kind: str, choices: dict, case: Case):
    """The value of ``case`` under ``choices`` (the plain implementation)."""
    return value(family, k, choices, case.labels, case.ranking, ordered=kind == "ids")


def reference_plain(family: Family, k: int | None, kind: str, case: Case):
    """trec_eval's value of ``case`` by the plain implementation (tests compare it with
    :func:`reference_values`)."""
    return variant_value(family, k, kind, reference_choices(family, kind), case)
