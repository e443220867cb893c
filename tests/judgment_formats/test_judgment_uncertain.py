"""Judgments with uncertainty (irmetrics.judgment_formats.uncertain): expected values
against enumeration of every labelling, the sampler's frequencies, clear errors naming
query and document, and a small coverage simulation of the intervals."""

import itertools
import random

import numpy as np
import pytest

import irmetrics as irm
from irmetrics.exceptions import InputFormatError, ParameterError
from irmetrics.judgment_formats import as_label_distribution, evaluate_uncertain
from irmetrics.judgment_formats.uncertain import _sampler

MEASURES = ["P@2", "P@5", "map", "recip_rank", "nDCG@3", "R@3", "P(rel=2)@3"]


def _case(rng):
    docs = [f"d{i}" for i in range(6)]
    qrels, labels, run = {}, {}, {}
    for q in ("q1", "q2"):
        chosen = rng.sample(docs, 5)
        qrels[q] = {d: rng.choice([0, 1, 2]) for d in chosen[:2]}
        labels[q] = {}
        for d in chosen[2:2 + rng.randint(1, 3)]:
            support = rng.sample([0, 1, 2], rng.randint(1, 3))
            w = [rng.random() + 0.05 for _ in support]
            labels[q][d] = {g: x / sum(w) for g, x in zip(support, w)}
        run[q] = {d: float(rng.randint(0, 2)) for d in rng.sample(docs, rng.randint(2, 6))}
    return qrels, labels, run


def _enumerated(qrels, labels, run, measures, **options):
    """E[m_q] summed over every labelling (plainly, one evaluate per labelling)."""
    cells = [(q, d, dist) for q, docs in labels.items() for d, dist in docs.items()]
    total: dict = {}
    for choice in itertools.product(*[list(dist.items()) for _, _, dist in cells]):
        full = {q: dict(v) for q, v in qrels.items()}
        weight = 1.0
        for (q, d, _), (g, p) in zip(cells, choice):
            full.setdefault(q, {})[d] = g
            weight *= p
        for q, row in irm.evaluate(full, run, measures, **options).to_dict().items():
            for name, v in row.items():
                total[(q, name)] = total.get((q, name), 0.0) + weight * v
    return total


@pytest.mark.parametrize("seed", range(8))
def test_expected_values_match_enumeration(seed):
    qrels, labels, run = _case(random.Random(seed))
    truth = _enumerated(qrels, labels, run, MEASURES)
    ex = evaluate_uncertain(qrels, labels, run, MEASURES, samples=400, seed=seed, grades=(0, 2),
                            n_resamples=200)
    assert ex.exact == ("P@2", "P@5", "P(rel=2)@3")
    for q, row in ex.results.to_dict().items():
        for name in ex.results.names:
            if name.endswith("_se"):
                continue
            if name in ex.exact:
                assert row[name] == pytest.approx(truth[(q, name)], abs=1e-12)
                assert row[name + "_se"] == 0.0
            else:  # sampled: within 5 standard errors (+ rounding when the se is 0)
                assert abs(row[name] - truth[(q, name)]) <= 5 * row[name + "_se"] + 1e-12


@pytest.mark.filterwarnings("ignore::irmetrics.exceptions.MissingQueriesWarning")
@pytest.mark.parametrize("options", [{"max_docs": 3}, {"relevance_level": 2},
                                     {"complete": True}])
def test_exact_p_under_options(options):
    qrels, labels, run = _case(random.Random(11))
    run["q3"] = {"d0": 1.0}  # not judged: ignored
    labels["q4"] = {"d0": {0: 0.5, 1: 0.5}}  # not retrieved: evaluated under complete
    truth = _enumerated(qrels, labels, run, ["P@2", "P@4"], **options)
    ex = evaluate_uncertain(qrels, labels, run, ["P@2", "P@4"], samples=2, grades=(0, 2),
                            n_resamples=10, **options)
    got = ex.results.to_dict()
    assert ex.exact == ("P@2", "P@4") and len(got) == len({q for q, _ in truth})
    for (q, name), value in truth.items():
        assert got[q][name] == pytest.approx(value, abs=1e-12)


def test_sampled_p_agrees_with_exact_p():
    qrels, labels, run = _case(random.Random(3))
    exact = evaluate_uncertain(qrels, labels, run, ["P@5"], samples=600, n_resamples=100,
                               grades=(0, 2))
    sampled = evaluate_uncertain(qrels, labels, run, ["P@5"], samples=600, exact=False, grades=(0, 2),
                                 n_resamples=100)
    assert sampled.exact == () and exact.exact == ("P@5",)
    a, b = exact.results.values("P@5"), sampled.results.values("P@5")
    assert np.all(np.abs(a - b) <= 5 * sampled.results.values("P@5_se") + 1e-12)


def test_sampler_frequencies_and_thread_invariance():
    dist = as_label_distribution({"q": {"a": {0: 0.1, 1: 0.6, 2: 0.3}, "b": {2: 1.0}}})
    draws = _sampler(dist)(np.random.default_rng(0), 20000)
    assert draws.shape == (20000, 2) and np.all(draws[:, 1] == 2)
    freq = np.bincount(draws[:, 0], minlength=3) / 20000
    assert freq == pytest.approx([0.1, 0.6, 0.3], abs=0.015)
    qrels, labels, run = _case(random.Random(1))
    one = evaluate_uncertain(qrels, labels, run, ["map"], samples=130, threads=1, grades=(0, 2),
                             n_resamples=100)
    two = evaluate_uncertain(qrels, labels, run, ["map"], samples=130, threads=2, grades=(0, 2),
                             n_resamples=100)
    assert one.results.to_dict() == two.results.to_dict() and one.se == two.se


def test_file_form_equals_dict_form(tmp_path):
    path = tmp_path / "labels.txt"
    path.write_text("q1 0 d1 0 0.25\nq1 0 d1 2 0.75\n\nq2 0 d9 1 1\n")
    assert as_label_distribution(path).rows() == as_label_distribution(
        {"q1": {"d1": {2: 0.75, 0: 0.25}}, "q2": {"d9": {1: 1.0}}}).rows()
    path.write_text("q1 0 d1 0 0.25\nq1 0 d1 2\n")
    with pytest.raises(InputFormatError, match=r"labels.txt:2: a label distribution line"):
        as_label_distribution(path)
    path.write_text("q1 0 d1 0 0.25\nq1 0 d1 2 0.5\n")
    with pytest.raises(InputFormatError, match=r"labels.txt:1: `probabilities` must sum to 1;"
                       r" got 0.75 \(query_id 'q1', doc_id 'd1'\)"):
        as_label_distribution(path)


@pytest.mark.parametrize("qrels, labels, message", [
    ({}, {"q": {"d": {1: 0.5, 0: 0.4}}}, r"must sum to 1; got 0.9.*'q'.*'d'"),
    ({}, {"q": {"d": {1: 1.5, 0: -0.5}}}, r"`prob` must be in \[0, 1\]; got -0.5.*'q'.*'d'"),
    ({}, {"q": {"d": {-1: 1.0}}}, r"must be a grade.*'q'.*'d'"),
    ({"q": {"a": 1}}, {"q": {"d": {0: 0.5, 3: 0.5}}},
     r"grade range \[0, 1\]; got 3.*'q'.*'d'"),
    ({"q": {"d": 1}}, {"q": {"d": {0: 0.5, 1: 0.5}}}, r"judge plainly.*'q'.*'d'"),
])
def test_bad_distributions_name_query_and_doc(qrels, labels, message):
    with pytest.raises(InputFormatError, match=message):
        evaluate_uncertain(qrels, labels, {"q": {"d": 1.0}}, ["P@1"], samples=4)


def test_options_refused():
    with pytest.raises(ParameterError, match="`judged_only` must be left out"):
        evaluate_uncertain({}, {"q": {"d": {1: 1.0}}}, {"q": {"d": 1.0}}, ["P@1"],
                           judged_only=True)
    with pytest.raises(ParameterError, match="`samples` must be an integer >= 2"):
        evaluate_uncertain({}, {"q": {"d": {1: 1.0}}}, {"q": {"d": 1.0}}, ["P@1"], samples=1)


def coverage(reps, topics, samples, seed=0, interval="t"):
    """Share of ``reps`` intervals (nominal 95 %) of mean RR that hold its population
    value. A topic ranks 3 documents whose relevance is uncertain: doc i is relevant with
    probability ``p_i`` ~ U(0, 1) (labels drawn from the distribution), so a topic's
    expected RR is ``p1 + (1-p1) p2 / 2 + (1-p1)(1-p2) p3 / 3`` and the population mean
    is ``1/2 + 1/8 + 1/24``."""
    mu = 1 / 2 + 1 / 8 + 1 / 24
    rng = np.random.default_rng(seed)
    hits = 0
    for rep in range(reps):
        p = rng.random((topics, 3))
        labels = {f"t{t}": {f"d{i}": {0: 1 - p[t, i], 1: p[t, i]} for i in range(3)}
                  for t in range(topics)}
        run = {f"t{t}": {"d0": 3.0, "d1": 2.0, "d2": 1.0} for t in range(topics)}
        ex = evaluate_uncertain({}, labels, run, ["recip_rank"], samples=samples,
                                seed=rep, interval=interval, n_resamples=2000)
        ci = ex.intervals["recip_rank"]
        hits += float(ci.low) <= mu <= float(ci.high)
    return hits / reps


def test_coverage_of_the_intervals_small():
    """The recorded figure (benchmarks/bench_uncertain_coverage.py, docs) uses more reps."""
    assert coverage(reps=100, topics=20, samples=16) >= 0.93


def test_the_docs_page_shows_real_output():
    doc = open("docs/incomplete_judgments.md", encoding="utf-8").read()
    root = "fixtures/meta_evaluation/"
    ex = evaluate_uncertain(root + "qrels.human.txt", root + "labels.llm.dist.txt",
                            root + "dense.run", ["P@10", "map", "nDCG@10"], samples=200)
    for m in ("P@10", "map", "nDCG@10"):
        shown = (round(ex.results.aggregate()[m], 4), round(ex.se[m], 5),
                 round(float(ex.intervals[m].low), 4), round(float(ex.intervals[m].high), 4))
        assert f"'{m}': {shown}" in doc
