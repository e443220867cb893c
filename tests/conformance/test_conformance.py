"""irmetrics.conformance: the spec's plain implementations, the corpus, check() and its
surfaces (CLI, pytest plugin).

The planted implementations below are written here, independently of
irmetrics/conformance/spec.py: one function per family with a keyword per degree of
freedom, so that each wrong variant is the trec_eval one with one keyword changed.
"""

from __future__ import annotations

import math
import os
from importlib import metadata
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from irmetrics.cli import main
from irmetrics.conformance import FAMILIES, check, corpus, parse_measure
from irmetrics.conformance.cases import reference_plain
from irmetrics.conformance.spec import reference_choices, value
from irmetrics.exceptions import ParameterError, UnknownMeasureError

ROOT = Path(__file__).resolve().parents[2]

#: (measure, input) pairs whose corpus is checked whole; k = 10 and no k cover the
#: families' cutoff rules.
CORPORA = [(m, kind) for m in ("nDCG@10", "nDCG", "AP", "AP@10", "P@10", "R@10", "RR", "RR@10",
                               "Rprec", "bpref", "Success@10", "ERR@10", "P@3", "nDCG@3", "DCG")
           for kind in ("arrays", "ids", "dicts")]


# ---------------------------------------------------------------------------------------
# The corpus


@pytest.mark.parametrize("measure,kind", CORPORA)
def test_plain_trec_eval_variant_equals_the_engine(measure, kind):
    """The plain implementation of trec_eval's choices gives the engine's value on every
    case: the spec's code is checked against irmetrics (and so against trec_eval)."""
    data = corpus(measure, input=kind)
    assert len(data.cases) >= 200
    for case, ref in zip(data.cases, data.reference):
        plain = reference_plain(data.family, data.k, kind, case)
        assert plain == ref or abs(plain - ref) <= 1e-12, case.describe()


@pytest.mark.parametrize("measure,kind", CORPORA)
def test_corpus_separates_every_pair_of_variants(measure, kind):
    data = corpus(measure, input=kind)
    columns = {("trec_eval", ""): data.reference, **data.values}
    for (a, va), (b, vb) in combinations(columns.items(), 2):
        assert any(not _same(x, y) for x, y in zip(va, vb)), (a, b)


@pytest.mark.parametrize("measure", ["nDCG@10", "nDCG", "AP", "AP@10", "P@10", "R@10", "RR",
                                     "Rprec", "Success@10", "DCG"])
def test_averaged_ties_equal_the_engines_expected_value(measure):
    """The plain "averaged" tie rule (every order of each tie group) equals the engine's
    exact expected value over random tie orders (ties="expected")."""
    import warnings

    import irmetrics as irm
    from irmetrics.exceptions import MissingQueriesWarning

    data = corpus(measure, input="dicts")
    averaged = data.values[("ties", "averaged")]
    qrels = {f"c{c.index}": dict(c.labels) for c in data.cases}
    run = {f"c{c.index}": dict(c.ranking) for c in data.cases}
    name = data.family.engine_name(data.k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        got = irm.evaluate(qrels, run, [name], ties="expected", relevance="float").to_dict()
    for case, plain in zip(data.cases, averaged):
        engine = got.get(f"c{case.index}", {}).get(name, "skipped")
        assert _same(plain, engine), case.describe()


def test_corpus_keeps_every_choice_its_input_can_show():
    """Choices are left out of a corpus only where the input cannot hold them."""
    dicts = corpus("nDCG@10", input="dicts").degrees
    assert dicts["ties"] == ("doc_id", "input", "optimistic", "pessimistic", "averaged")
    assert dicts["ideal"] == ("judged", "retrieved", "given")
    assert dicts["gain"] == ("linear", "exponential", "binary")
    assert dicts["duplicates"] == ("first",)  # a dict cannot repeat a document
    ids = corpus("AP@10", input="ids").degrees
    assert ids["ties"] == ("doc_id",)  # a ranked list has no ties
    assert ids["duplicates"] == ("first", "counted", "held")
    assert ids["denominator"] == ("R", "min(R,k)", "hits", "k")
    arrays = corpus("P@10", input="arrays").degrees
    assert arrays["ties"] == ("input", "optimistic", "pessimistic", "averaged")
    assert arrays["empty_ranking"] == ("zero",)  # no labels without scores
    for measure in ("R@10", "Success@10", "RR@10", "bpref", "Rprec", "ERR@10"):
        degrees = corpus(measure, input="dicts").degrees
        assert len(degrees["ties"]) == 5 and len(degrees["unjudged"]) == 2, measure


def test_corpus_is_reproducible_and_has_the_hard_cases():
    from irmetrics.conformance.cases import generate_cases

    family, k = parse_measure("nDCG@10")
    a, b = generate_cases(family, k, "ids"), generate_cases(family, k, "ids")
    assert a == b
    labels = [g for c in a for _, g in c.labels]
    assert any(isinstance(g, float) for g in labels) and min(labels) < 0
    assert any(not c.labels for c in a) and any(not c.ranking for c in a)
    assert any(len({d for d, _ in c.ranking}) < len(c.ranking) for c in a)
    assert any(sum(g >= 1 for _, g in c.labels) > k for c in a)
    ties = generate_cases(family, k, "dicts")
    assert any(len({s for _, s in c.ranking}) < len(c.ranking) for c in ties)


# ---------------------------------------------------------------------------------------
# Each variant implementation against values computed by hand

L2 = math.log2
HAND = [
    # family, k, changed degrees, labels, ranking (doc, score) in input order, value
    ("nDCG", 2, {}, {"a": 2, "b": 1}, [("b", 2), ("a", 1)], (1 + 2 / L2(3)) / (2 + 1 / L2(3))),
    ("nDCG", 2, {"gain": "exponential"}, {"a": 2, "b": 1}, [("b", 2), ("a", 1)],
     (1 + 3 / L2(3)) / (3 + 1 / L2(3))),
    ("nDCG", 2, {"gain": "binary"}, {"a": 2, "b": 0}, [("b", 2), ("a", 1)], (1 / L2(3)) / 1),
    ("nDCG", 3, {"discount": "max(1,log2(i))"}, {"a": 1, "c": 1}, [("b", 3), ("c", 2), ("a", 1)],
     (1 + 1 / L2(3)) / 2),
    ("nDCG", 1, {"ideal": "retrieved"}, {"a": 1, "z": 3}, [("a", 1)], 1.0),
    ("nDCG", 2, {"ideal": "given"}, {"a": 0, "b": 1}, [("b", 1)], 1 / (1 / L2(3))),
    ("nDCG", 1, {"ideal_cutoff": "all"}, {"a": 1, "b": 1}, [("a", 1)], 1 / (1 + 1 / L2(3))),
    ("nDCG", None, {"ties": "averaged"}, {"a": 1, "b": 0}, [("a", 1), ("b", 1)],
     0.5 * (1 + 1 / L2(3))),
    ("nDCG", None, {"ties": "doc_id"}, {"a": 1, "b": 0}, [("a", 1), ("b", 1)], 1 / L2(3)),
    ("nDCG", None, {"ties": "input"}, {"a": 1, "b": 0}, [("a", 1), ("b", 1)], 1.0),
    ("nDCG", None, {"ties": "pessimistic"}, {"a": 1, "b": 0}, [("b", 1), ("a", 1)], 1 / L2(3)),
    ("nDCG", None, {"ties": "optimistic"}, {"a": 0, "b": 1}, [("a", 1), ("b", 1)], 1.0),
    ("DCG", None, {}, {"a": 2, "b": 1}, [("b", 2), ("a", 1)], 1 + 2 / L2(3)),
    ("DCG", None, {"discount": "ln(i+1)"}, {"a": 2, "b": 1}, [("b", 2), ("a", 1)],
     1 / math.log(2) + 2 / math.log(3)),
    ("DCG", None, {"gain": "exponential", "discount": "max(1,log2(i))"}, {"a": 2, "b": 1},
     [("b", 3), ("a", 2), ("c", 1)], 1 + 3),
    ("AP", None, {}, {"a": 1, "b": 1, "c": 0}, [("a", 3), ("c", 2), ("b", 1)], (1 + 2 / 3) / 2),
    ("AP", 2, {}, {"a": 1, "b": 1, "c": 1}, [("c", 3), ("x", 2), ("b", 1)], 1 / 3),
    ("AP", 2, {"denominator": "min(R,k)"}, {"a": 1, "b": 1, "c": 1}, [("c", 3), ("x", 2)], 1 / 2),
    ("AP", 2, {"denominator": "hits"}, {"a": 1, "b": 1, "c": 1}, [("c", 3), ("x", 2)], 1.0),
    ("AP", 4, {"denominator": "k"}, {"a": 1}, [("a", 3)], 1 / 4),
    ("AP", None, {"threshold": ">0"}, {"a": 0.5}, [("a", 1)], 1.0),
    ("AP", None, {"threshold": "judged"}, {"a": 0, "b": 1}, [("a", 2), ("b", 1)], 1.0),
    ("AP", None, {"unjudged": "dropped"}, {"a": 1}, [("u", 2), ("a", 1)], 1.0),
    ("AP", None, {}, {"a": 1}, [("u", 2), ("a", 1)], 0.5),
    ("P", 3, {}, {"a": 1}, [("a", 1)], 1 / 3),
    ("P", 3, {"denominator": "retrieved"}, {"a": 1}, [("a", 2), ("b", 1)], 1 / 2),
    ("P", 3, {"denominator": "min(R,k)"}, {"a": 1}, [("a", 2), ("b", 1)], 1.0),
    ("P", 2, {"duplicates": "counted"}, {"a": 1}, [("a", 2), ("a", 1)], 1.0),
    ("P", 2, {}, {"a": 1}, [("a", 2), ("a", 1)], 0.5),
    ("AP", None, {"duplicates": "held"}, {"b": 1}, [("a", 3), ("a", 2), ("b", 1)], 1 / 3),
    ("R", 2, {}, {"a": 1, "b": 1, "c": 1}, [("a", 2), ("b", 1)], 2 / 3),
    ("R", 2, {"denominator": "min(R,k)"}, {"a": 1, "b": 1, "c": 1}, [("a", 2), ("b", 1)], 1.0),
    ("R", 2, {"duplicates": "counted"}, {"a": 1}, [("a", 2), ("a", 1)], 2.0),
    ("RR", None, {}, {"b": 1}, [("a", 3), ("a", 2), ("b", 1)], 1 / 2),
    ("RR", None, {"duplicates": "counted"}, {"b": 1}, [("a", 3), ("a", 2), ("b", 1)], 1 / 3),
    ("RR", 1, {}, {"b": 1}, [("a", 2), ("b", 1)], 0.0),
    ("Rprec", None, {}, {"a": 1, "b": 1, "c": 1}, [("a", 2), ("b", 1)], 2 / 3),
    ("Rprec", None, {"denominator": "retrieved"}, {"a": 1, "b": 1, "c": 1},
     [("a", 2), ("b", 1)], 1.0),
    # bpref: R = 2, NR = 1; b is below one non-relevant: 1 - min(1, 2) / min(1, 2) = 0
    ("bpref", None, {}, {"a": 1, "b": 1, "n": 0}, [("a", 3), ("n", 2), ("b", 1)], 1 / 2),
    # original denominator R: 1 - 1/2
    ("bpref", None, {"denominator": "R"}, {"a": 1, "b": 1, "n": 0},
     [("a", 3), ("n", 2), ("b", 1)], (1 + 1 / 2) / 2),
    ("bpref", None, {}, {"a": 1, "n": 0}, [("u", 2), ("a", 1)], 1.0),
    ("bpref", None, {"unjudged": "nonrelevant"}, {"a": 1, "n": 0}, [("u", 2), ("a", 1)], 0.0),
    ("Success", 1, {}, {"b": 1}, [("a", 2), ("b", 1)], 0.0),
    ("Success", 2, {}, {"b": 1}, [("a", 2), ("b", 1)], 1.0),
    ("ERR", 2, {}, {"a": 4, "b": 1}, [("b", 2), ("a", 1)],
     1 / 16 + (15 / 16) * (15 / 16) / 2),
    ("ERR", 2, {"gain": "linear"}, {"a": 4, "b": 1}, [("b", 2), ("a", 1)], 1 / 4 + 3 / 4 / 2),
    ("ERR", 1, {"max_grade": "query"}, {"a": 2}, [("a", 1)], 3 / 4),
    ("P", 2, {"no_relevant": "nan"}, {"a": 0}, [("a", 1)], math.nan),
    ("P", 2, {}, {"a": 0}, [("a", 1)], 0.0),
    ("P", 2, {}, {}, [("a", 1)], "skipped"),
    ("P", 2, {"no_judgments": "zero"}, {}, [("a", 1)], 0.0),
    ("P", 2, {"empty_ranking": "raises"}, {"a": 1}, [], "raises"),
]


@pytest.mark.parametrize("family,k,changed,labels,ranking,expected", HAND)
def test_variant_implementation_by_hand(family, k, changed, labels, ranking, expected):
    fam = FAMILIES[family]
    choices = {**reference_choices(fam, "dicts"), **changed}
    got = value(fam, k, choices, tuple(labels.items()), tuple(ranking), ordered=False)
    assert _same(got, expected), (got, expected)


# ---------------------------------------------------------------------------------------
# Planted implementations, written here: trec_eval's by default, one degree off at a time


def _rel(g, threshold=">=1"):
    if g is None or g < 0:
        return False
    return g >= 1 if threshold == ">=1" else g > 0 if threshold == ">0" else True


def _prepare(ranking, labels, duplicates, unjudged):
    if duplicates == "first":
        ranking = list(dict.fromkeys(ranking))
    if duplicates == "held":  # a repeat keeps its rank, as an unjudged document
        ranking = [d if d not in ranking[:i] else None for i, d in enumerate(ranking)]
    if unjudged == "dropped":
        ranking = [d for d in ranking if labels.get(d, -1) >= 0]
    return [labels.get(d) for d in ranking]


def _empties(labels, relevant, ranking, no_judgments, no_relevant, empty_ranking):
    for cond, choice in ((not labels, no_judgments), (not relevant, no_relevant),
                         (not ranking, empty_ranking)):
        if cond:
            if choice == "raises":
                raise ValueError("planted")
            return {"skipped": None, "zero": 0.0, "nan": math.nan}[choice]
    return False


def planted(family, k, *, duplicates="first", unjudged="nonrelevant", threshold=">=1",
            denominator=None, gain=None, discount="log2(i+1)", ideal="judged",
            ideal_cutoff="k", max_grade="4", no_judgments="skipped", no_relevant="zero",
            empty_ranking="zero"):
    """A measure on the "ids" input: fn(ranking, labels)."""

    def fn(ranking, labels):
        graded = family in ("nDCG", "DCG", "ERR")
        rels = [g for g in labels.values() if (g is not None and g > 0) if graded] if graded \
            else [g for g in labels.values() if _rel(g, threshold)]
        special = _empties(labels, rels, ranking, no_judgments, no_relevant, empty_ranking)
        if special is not False:
            return special
        codes = _prepare(ranking, labels, duplicates, unjudged)
        hits = np.array([_rel(g, threshold) for g in codes], dtype=float)
        R = len(rels)
        cut = len(codes) if k is None else k
        top = hits[:cut]
        ranks = np.arange(1, len(top) + 1)
        if family == "P":
            den = {"k": k, "retrieved": min(k, len(codes)),
                   "min(R,k)": min(R, k)}[denominator or "k"]
            return top.sum() / den
        if family == "R":
            return top.sum() / (min(R, k) if denominator == "min(R,k)" else R)
        if family == "AP":
            s = (top * np.cumsum(top) / ranks).sum()
            den = {"R": R, "min(R,k)": min(R, cut), "hits": top.sum(), "k": cut}[denominator or "R"]
            return s / den if den else 0.0
        if family == "RR":
            found = np.flatnonzero(top)
            return 1.0 / (found[0] + 1) if found.size else 0.0
        if family == "Success":
            return float(top.any())
        if family in ("nDCG", "DCG"):
            def g(x):
                if x is None or x <= 0:
                    return 0.0
                return {"linear": x, "exponential": 2.0 ** x - 1,
                        "binary": float(x >= 1)}[gain or "linear"]

            def dcg(gs):
                gs = np.asarray(gs, dtype=float)
                i = np.arange(1, len(gs) + 1)
                d = {"log2(i+1)": np.log2(i + 1), "ln(i+1)": np.log(i + 1),
                     "max(1,log2(i))": np.maximum(1, np.log2(i))}[discount]
                return (gs / d).sum()
            got = [g(x) for x in codes[:cut]]
            if family == "DCG":
                return dcg(got)
            pool = {"judged": sorted(map(g, labels.values()), reverse=True),
                    "retrieved": sorted(got, reverse=True),
                    "given": [g(x) for x in labels.values()]}[ideal]
            best = dcg(pool[:cut] if ideal_cutoff == "k" else pool)
            return dcg(got) / best if best > 0 else 0.0
        if family == "ERR":
            top_grade = 4 if max_grade == "4" else max(labels.values())
            total, reach = 0.0, 1.0
            for i, x in enumerate(codes[:k], 1):
                x = x if x and x > 0 else 0
                stop = x / top_grade if gain == "linear" else (2.0 ** x - 1) / 2 ** top_grade
                total += reach * stop / i
                reach *= 1 - stop
            return total
        raise AssertionError(family)

    return fn


#: family, measure name, degree -> wrong choices to plant ("ids" input)
PLANTS = {
    ("nDCG", "nDCG@5"): {"gain": ["exponential", "binary"], "discount": ["max(1,log2(i))"],
                          "ideal": ["retrieved", "given"], "ideal_cutoff": ["all"],
                          "duplicates": ["counted"], "unjudged": ["dropped"],
                          "no_judgments": ["zero", "nan"], "no_relevant": ["nan", "skipped"],
                          "empty_ranking": ["nan", "raises"]},
    ("DCG", "DCG"): {"gain": ["exponential", "binary"],
                     "discount": ["max(1,log2(i))", "ln(i+1)"], "duplicates": ["counted", "held"],
                     "unjudged": ["dropped"], "no_judgments": ["zero"]},
    ("AP", "AP@5"): {"denominator": ["min(R,k)", "hits", "k"], "threshold": [">0", "judged"],
                     "duplicates": ["counted", "held"], "unjudged": ["dropped"]},
    ("P", "P@5"): {"denominator": ["retrieved", "min(R,k)"], "threshold": [">0", "judged"],
                   "duplicates": ["counted"], "no_relevant": ["raises"]},
    ("R", "R@5"): {"denominator": ["min(R,k)"], "duplicates": ["counted"],
                   "unjudged": ["dropped"]},
    ("RR", "RR"): {"threshold": [">0", "judged"], "duplicates": ["counted"],
                   "unjudged": ["dropped"]},
    ("Success", "Success@3"): {"duplicates": ["counted"], "unjudged": ["dropped"],
                               "threshold": [">0"]},
    ("ERR", "ERR@5"): {"gain": ["linear"], "max_grade": ["query"], "duplicates": ["counted"]},
}
PLANTED = [(fam, name, degree, choice) for (fam, name), degrees in PLANTS.items()
           for degree, choices in degrees.items() for choice in choices]


@pytest.mark.parametrize("fam,name", list(PLANTS))
def test_trec_eval_conformant_implementations_conform(fam, name):
    _, k = parse_measure(name)
    report = check(planted(fam, k), name, input="ids")
    assert report.conforms, str(report)
    assert report.departures == {} and report.counterexample is None
    assert "conforms" in str(report)


@pytest.mark.parametrize("fam,name,degree,choice", PLANTED)
def test_check_names_the_degree_of_a_planted_variant(fam, name, degree, choice):
    _, k = parse_measure(name)
    fn = planted(fam, k, **{degree: choice})
    report = check(fn, name, input="ids")
    assert not report.conforms
    assert report.departures == {degree: choice}, str(report)
    assert report.explained and report.unexplained == 0
    _assert_separates(fn, report)
    assert f"{degree} = {choice}" in str(report)


def _assert_separates(fn, report):
    """The counterexample is real: the callable, run again on it, gives the value shown,
    and that value is not trec_eval's."""
    ce = report.counterexample
    labels, ranking = dict(ce.case.labels), [d for d, _ in ce.case.ranking]
    try:
        again = fn(ranking, labels)
    except ValueError:
        again = "raises"
    again = "skipped" if again is None else again
    assert _same(again, ce.value) and not _same(ce.value, ce.expected)
    for example in report.examples.values():
        assert not _same(example.value, example.expected)


def _arrays_ndcg(ties, k=5):
    """nDCG@k on arrays with a tie rule, written here."""

    def fn(labels, scores):
        if labels.size == 0:
            return None
        gains = np.where(labels > 0, labels, 0).astype(float)
        if ties == "averaged":
            pytest.importorskip("sklearn")
            from sklearn.metrics import ndcg_score
            if gains.sum() == 0 or labels.size < 2:
                return 0.0
            return ndcg_score([gains], [scores], k=k)
        if ties == "input":
            order = np.argsort(-scores, kind="stable")
        else:
            key = gains if ties == "optimistic" else -gains
            order = np.lexsort((-key, -scores))
        d = 1 / np.log2(np.arange(2, k + 2))
        dcg = (gains[order][:k] * d[:min(k, len(order))]).sum()
        ideal = (np.sort(gains)[::-1][:k] * d[:min(k, len(order))]).sum()
        return dcg / ideal if ideal > 0 else 0.0

    return fn


@pytest.mark.parametrize("ties", ["input", "optimistic", "pessimistic", "averaged"])
def test_check_names_the_tie_rule_of_arrays(ties):
    report = check(_arrays_ndcg(ties), "nDCG@5", input="arrays", labels="natural")
    if ties == "input":
        assert report.conforms, str(report)
    else:
        assert report.departures.get("ties") == ties, str(report)
        assert not _same(report.counterexample.value, report.counterexample.expected)


def test_dicts_input_and_doc_id_ties():
    def p_at_2(qrels, run, order="doc_id"):
        out = {}
        for q, docs in run.items():
            if not qrels.get(q):
                continue
            ranked = sorted(docs, key=lambda d: d.encode(), reverse=True) if order == "doc_id" \
                else list(docs)
            ranked.sort(key=lambda d: -docs[d])
            out[q] = {"P_2": sum(qrels[q].get(d, 0) >= 1 for d in ranked[:2]) / 2}
        return out

    assert check(p_at_2, "P@2", input="dicts").conforms
    report = check(lambda q, r: p_at_2(q, r, "input"), "P@2", input="dicts")
    assert report.departures == {"ties": "input"}, str(report)


def test_real_pytrec_eval_conforms_and_sklearn_averages_ties():
    pytrec_eval = pytest.importorskip("pytrec_eval")

    def ndcg(qrels, run):
        return pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)

    assert check(ndcg, "nDCG@10", input="dicts", labels="int").conforms
    metrics = pytest.importorskip("sklearn.metrics")
    report = check(lambda y, s: metrics.ndcg_score([y], [s], k=10), "nDCG@10",
                   input="arrays", labels="natural")
    assert report.variant["ties"] == "averaged"


# ---------------------------------------------------------------------------------------
# Bad callables and bad arguments


@pytest.mark.parametrize("bad,kind", [
    (lambda r, lab: 1 / 0, "raises"),
    (lambda r, lab: "high", "invalid"),
    (lambda r, lab: [0.5, 0.5], "invalid"),
    (lambda r, lab: {"other": 1.0}, "invalid"),
    (lambda r, lab: math.nan, None),
])
def test_a_bad_callable_is_reported_with_its_case(bad, kind):
    report = check(bad, "P@3", input="ids")
    assert not report.conforms
    text = str(report)
    assert "case " in text and "Traceback" not in text
    if kind is not None:
        assert report.failures and report.failures[0].value == kind
    if kind == "raises":
        assert "ZeroDivisionError" in text


def test_outputs_of_every_shape_are_read():
    fn = planted("P", 5)
    shapes = [lambda r, lab: fn(r, lab),
              lambda r, lab: np.array([] if fn(r, lab) is None else [fn(r, lab)]),
              lambda r, lab: None if fn(r, lab) is None else {"1": {"P@5": fn(r, lab)}}]
    for shape in shapes:
        assert check(shape, "P@5").conforms


def test_bad_arguments():
    with pytest.raises(UnknownMeasureError):
        check(planted("P", 5), "nDGC@5")
    with pytest.raises(ParameterError, match="conformance spec"):
        check(planted("P", 5), "infAP")
    with pytest.raises(ParameterError, match="with a cutoff"):
        check(planted("P", 5), "P")
    with pytest.raises(ParameterError, match="without a cutoff"):
        check(planted("P", 5), "bpref@5")
    with pytest.raises(ParameterError, match="`input`"):
        check(planted("P", 5), "P@5", input="tensors")
    with pytest.raises(ParameterError, match="`tolerance`"):
        check(planted("P", 5), "P@5", tolerance=-1)
    with pytest.raises(ParameterError, match="`fn`"):
        check("not callable", "P@5")
    assert parse_measure("ndcg_cut.10")[1] == 10 and parse_measure("map")[1] is None


# ---------------------------------------------------------------------------------------
# The command line and the pytest plugin


def test_cli_conform(tmp_path, capsys, monkeypatch):
    (tmp_path / "mymetrics.py").write_text(
        "def p3(ranking, labels):\n"
        "    return sum(labels.get(d, 0) >= 1 for d in ranking[:3]) / 3\n"
        "def p3_first(ranking, labels):\n"
        "    if not labels:\n        return None\n"
        "    ranking = list(dict.fromkeys(ranking))\n"
        "    return sum(labels.get(d, 0) >= 1 for d in ranking[:3]) / 3\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["conform", "mymetrics:p3_first", "--measure", "P@3"]) == 0
    assert "conforms" in capsys.readouterr().out
    assert main(["conform", "mymetrics:p3_first", "-m", "P@3", "--labels", "natural"]) == 0
    assert "conforms" in capsys.readouterr().out
    assert main(["conform", "mymetrics:p3_first", "-m", "P@3", "--labels", "float"]) == 1
    assert "--labels" in capsys.readouterr().err
    assert main(["conform", "mymetrics:p3", "-m", "P@3", "--input", "ids"]) == 1
    out = capsys.readouterr().out
    assert "duplicates = counted" in out
    assert main(["conform", "mymetrics:nope", "-m", "P@3"]) == 1
    assert "no attribute" in capsys.readouterr().err
    assert main(["conform", "mymetrics", "-m", "P@3"]) == 1
    assert main(["conform", "mymetrics:p3", "-m", "infAP"]) == 2
    assert "conformance spec" in capsys.readouterr().err
    assert main(["conform", "mymetrics:p3", "-m", "P@3", "--tolerance", "nan"]) == 2


def test_pytest_plugin_fixture(tmp_path):
    (tmp_path / "test_theirs.py").write_text(
        "def p3(ranking, labels):\n"
        "    return sum(labels.get(d, 0) >= 1 for d in ranking[:3]) / 3\n"
        "def test_p3(irmetrics_conformance):\n"
        "    irmetrics_conformance(p3, 'P@3', input='ids')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # installed (CI): pytest loads the plugin by its entry point; a source tree: by -p
    installed = any(e.value == "irmetrics_pytest"
                    for e in metadata.entry_points(group="pytest11"))
    load = [] if installed else ["-p", "irmetrics_pytest"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", *load,
                           "-p", "no:cacheprovider", str(tmp_path / "test_theirs.py")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "duplicates = counted" in proc.stdout
    assert "Traceback" not in proc.stdout
    light = subprocess.run([sys.executable, "-c", "import sys, irmetrics_pytest;"
                            " print('irmetrics' in sys.modules)"],
                           capture_output=True, text=True, env=env, timeout=60)
    assert light.stdout.strip() == "False"


def _same(a, b):
    if isinstance(a, (float, int, np.floating)) and isinstance(b, (float, int, np.floating)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= 1e-9
    return a == b
