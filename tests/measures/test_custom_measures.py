"""Measures defined by the user (irm.define_measure): equal to a plain Python loop on
hypothesis cases, the same per-query values on every road (evaluate, the file road, the
CLI, compare, Spark, the pytrec_eval and ir_measures drop-ins), clear errors, and
docs/custom_measures.md kept true."""

from __future__ import annotations

import contextlib
import doctest
import io
import json
import math
import re
import shlex
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.cli import main
from irmetrics.compat.ir_measures import registered_measure
from irmetrics.compat.pytrec_eval import RelevanceEvaluator
from irmetrics.exceptions import ParameterError, UnknownMeasureError, UserMeasureError
from irmetrics.measures import REGISTRY
from tests._cases import qrels_and_run

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "custom_measures.md"

#: The measures under test, as a user's file: loaded once (irm.load_measures) and given
#: to the CLI with --measures-from, so every road runs the same definitions.
SOURCE = '''
import numpy as np
import irmetrics as irm


@irm.define_measure("UmGraded")
def graded_precision(view, max_label: int = 2):
    gain = np.minimum(view.label, max_label) / max_label
    return view.sum(gain) / (view.cutoff or np.maximum(view.num_ret, 1))


@irm.define_measure("UmRbg")
def normalised_rank_biased_gain(view, p: float = 0.8):
    def rbg(v):
        return v.sum((2.0 ** v.label - 1) * p ** (v.rank - 1))
    ideal = rbg(view.ideal())
    return np.divide(rbg(view), ideal, out=np.zeros(view.n_queries), where=ideal > 0)


@irm.define_measure("UmScore", aggregate="sum")
def relevant_score_mass(view, weight: float = 1.0):
    return view.sum(view.score * view.is_rel) * weight


@irm.define_measure("UmFirst")
def first_relevant(view):
    first = view.first_rank(view.is_rel)
    return np.divide(1.0, first, out=np.zeros(view.n_queries), where=first > 0)


@irm.define_measure("UmPoolLoop", per_query=True, cutoff=False)
def pooled_unjudged_share(query):
    unjudged = query.pooled & ~query.judged
    return float(unjudged.sum()) / max(query.num_ret, 1) + query.num_rel
'''

#: (spelling template, reference) of the vectorised measures; {k} is the cutoff.
SPELLINGS = ["UmGraded@{k}", "UmGraded(max_label=1)@{k}", "UmRbg@{k}", "UmRbg(p=0.5)",
             "UmScore(weight=2.0)@{k}", "UmFirst@{k}", "UmFirst(rel=2)", "UmPoolLoop"]


@pytest.fixture(scope="module", autouse=True)
def measures_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("measures") / "mymeasures.py"
    path.write_text(SOURCE)
    names = irm.load_measures(path)
    assert names == ["UmGraded", "UmRbg", "UmScore", "UmFirst", "UmPoolLoop"]
    yield path
    for name in names:
        irm.remove_measure(name)


# ---- a plain Python loop, independent of irmetrics ------------------------------------


def ranked(docs: dict) -> list:
    """trec_eval's order: score descending, ties by doc id descending (bytes)."""
    return sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True)


def reference(spelling: str, qrels: dict, run: dict, *, level=1, judged_only=False,
              max_docs=None) -> dict:
    """``{query_id: value}`` of a SPELLINGS measure, query by query."""
    match = re.fullmatch(r"(\w+)(?:\((.*)\))?(?:@(\d+))?", spelling)
    name, args, k = match.group(1), match.group(2), match.group(3)
    params = eval(f"dict({args or ''})")
    level = params.pop("rel", level)
    k = None if k is None else int(k)
    out = {}
    for q in sorted(set(qrels) & set(run), key=str.encode):
        judgments = qrels[q]
        ranking = ranked(run[q])[:max_docs]  # -M first, then -J, then the cutoff
        if judged_only:
            ranking = [d for d in ranking if judgments.get(d, -1) >= 0]
        ranking = ranking[:k]
        labels = [judgments[d] if judgments.get(d, -1) >= 0 else 0 for d in ranking]
        judged = [judgments.get(d, -1) >= 0 for d in ranking]
        relevant = [j and lab >= level for j, lab in zip(judged, labels)]
        ideal = sorted((v for v in judgments.values() if v >= 0), reverse=True)[:k]
        num_rel = sum(1 for v in judgments.values() if v >= 0 and v >= level)
        if name == "UmGraded":
            m = params.get("max_label", 2)
            total = 0.0
            for lab in labels:
                total += min(lab, m) / m
            value = total / (k or max(len(ranking), 1))
        elif name == "UmRbg":
            p = params.get("p", 0.8)
            gain = sum((2.0 ** lab - 1) * p ** i for i, lab in enumerate(labels))
            best = sum((2.0 ** lab - 1) * p ** i for i, lab in enumerate(ideal))
            value = gain / best if best > 0 else 0.0
        elif name == "UmScore":
            total = 0.0
            for d, rel in zip(ranking, relevant):
                if rel:
                    total += run[q][d]
            value = total * params.get("weight", 1.0)
        elif name == "UmFirst":
            value = next((1.0 / (i + 1) for i, rel in enumerate(relevant) if rel), 0.0)
        else:  # UmPoolLoop
            unjudged = sum(1 for d in ranking if d in judgments and judgments[d] < 0)
            value = unjudged / max(len(ranking), 1) + num_rel
        out[q] = value
    return out


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def evaluate_quietly(qrels, run, measures, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.evaluate(qrels, run, measures, **options)


FEW = settings(max_examples=60, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FEW
@given(case=qrels_and_run(max_label=3), k=st.integers(1, 12), level=st.integers(1, 2),
       judged_only=st.booleans(), max_docs=st.one_of(st.none(), st.integers(0, 6)))
def test_equal_to_a_plain_loop(case, k, level, judged_only, max_docs):
    qrels, run = case
    if not set(qrels) & set(run):
        return
    specs = [s.format(k=k) for s in SPELLINGS]
    res = evaluate_quietly(qrels, run, specs, relevance_level=level,
                           judged_only=judged_only, max_docs=max_docs)
    for spec in specs:
        want = reference(spec, qrels, run, level=level, judged_only=judged_only,
                         max_docs=max_docs)
        got = dict(zip(res.query_ids.tolist(), res.values(spec).tolist()))
        assert got.keys() == want.keys()
        for q in want:
            assert close(got[q], want[q]), (spec, q, got[q], want[q])


PER_QUERY_SOURCE = '''
@irm.define_measure("UmGradedLoop", per_query=True)
def graded_loop(query, max_label: int = 2):
    return sum(min(x, max_label) / max_label for x in query.label) / (
        query.cutoff or max(query.num_ret, 1))


@irm.define_measure("UmRbgLoop", per_query=True)
def rbg_loop(query, p: float = 0.8):
    gain = sum((2.0 ** x - 1) * p ** (r - 1) for x, r in zip(query.label, query.rank))
    best = sum((2.0 ** x - 1) * p ** i for i, x in enumerate(query.ideal_label))
    return gain / best if best > 0 else 0.0


@irm.define_measure("UmScoreLoop", per_query=True)
def score_loop(query):
    return float(query.score[query.is_rel].sum())
'''


@pytest.fixture(scope="module")
def per_query_measures():
    namespace = {"irm": irm}
    exec(PER_QUERY_SOURCE, namespace)  # noqa: S102 - the test's own source, as a user's
    yield
    for name in ("UmGradedLoop", "UmRbgLoop", "UmScoreLoop"):
        irm.remove_measure(name)


@FEW
@given(case=qrels_and_run(max_label=3), k=st.integers(1, 12))
def test_per_query_form_equals_the_vectorised_form(per_query_measures, case, k):
    qrels, run = case
    if not set(qrels) & set(run):
        return
    pairs = [(f"UmGradedLoop@{k}", f"UmGraded@{k}"), (f"UmRbgLoop(p=0.7)@{k}", f"UmRbg(p=0.7)@{k}"),
             (f"UmScoreLoop@{k}", f"UmScore@{k}")]
    res = evaluate_quietly(qrels, run, [s for pair in pairs for s in pair])
    for loop, vectorised in pairs:
        assert all(close(a, b) for a, b in zip(res.values(loop), res.values(vectorised)))


# ---- one definition, every road ---------------------------------------------------------

#: Ties, graded and negative labels, unjudged documents, an empty ranking (q3), a qrels
#: query missing from the run (q4), a run query without judgments (q9), rankings shorter
#: than k. Scores are exact in float32, so pytrec_eval's rounding changes nothing.
QRELS = {"q1": {"a": 2, "b": 1, "c": 0, "d": -1, "e": 2},
         "q2": {"a": 1, "x": 3, "y": 0},
         "q3": {"z": 1},
         "q4": {"a": 1},
         "q10": {"m": 2, "n": 1}}
RUN_A = {"q1": {"a": 0.5, "b": 0.5, "c": 0.25, "d": 2.0, "u": 0.5, "e": 0.125},
         "q2": {"y": 1.0, "x": 1.0, "a": -1.0},
         "q3": {},
         "q9": {"a": 1.0},
         "q10": {"n": 3.0, "m": 2.0, "o": 1.0, "p": 0.5}}
RUN_B = {"q1": {"e": 3.0, "a": 2.0, "u": 1.0},
         "q2": {"x": 0.75, "a": 0.75},
         "q3": {"z": 1.0},
         "q10": {"m": 1.0}}
ROAD_SPECS = [s.format(k=3) for s in SPELLINGS] + ["UmGraded@50"]


def write_trec(qrels, run, directory: Path, name="run"):
    qrels_path, run_path = directory / "qrels.txt", directory / f"{name}.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items()
                                  for d, r in docs.items()))
    run_path.write_text("".join(f"{q} Q0 {d} {i} {s!r} {name}\n" for q, docs in run.items()
                                for i, (d, s) in enumerate(docs.items(), 1)))
    return qrels_path, run_path


@pytest.fixture(scope="module")
def expected():
    """Per-query values of irm.evaluate on dicts: what every other road must give."""
    res = evaluate_quietly(QRELS, RUN_A, ROAD_SPECS)
    out = {spec: dict(zip(res.query_ids.tolist(), res.values(spec).tolist()))
           for spec in ROAD_SPECS}
    for spec in ROAD_SPECS:  # and those equal the loop
        want = reference(spec, QRELS, RUN_A)
        assert out[spec].keys() == want.keys() == {"q1", "q2", "q3", "q10"}
        assert all(close(out[spec][q], want[q]) for q in want), spec
    return out


def test_the_file_road(expected, tmp_path, monkeypatch):
    import importlib

    evaluate_module = importlib.import_module("irmetrics.evaluate")
    streamed = []
    original = evaluate_module.evaluate_run_file

    def spy(*args, **kwargs):
        streamed.append(original(*args, **kwargs))
        return streamed[-1]

    monkeypatch.setattr(evaluate_module, "evaluate_run_file", spy)
    qrels_path, run_path = write_trec(QRELS, RUN_A, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = irm.Evaluator(qrels_path, ROAD_SPECS).evaluate(run_path)
    assert streamed and streamed[0] is not None  # bounded-memory road, scores kept
    assert _values(res) == {s: {q: v for q, v in expected[s].items() if q != "q3"}
                            for s in ROAD_SPECS}  # q3's empty ranking has no line


def test_the_file_road_in_chunks_with_split_queries(tmp_path):
    import polars as pl

    from irmetrics.engine.pack import encode_qrels
    from irmetrics.engine.stream import evaluate_run_batches

    rows = [(q, d, s, "r") for q, docs in RUN_A.items() for d, s in docs.items()]
    rows = rows[::2] + rows[1::2]  # every query split over the batches
    frame = pl.DataFrame(rows, schema=["query_id", "doc_id", "score", "run_id"], orient="row")
    ev = irm.Evaluator(QRELS, ROAD_SPECS)
    qrels = encode_qrels(irm.Qrels.from_dict(QRELS).df)
    values = evaluate_run_batches(qrels, lambda: iter([frame[:5], frame[5:9], frame[9:]]),
                                  ev._columns, keep_scores=True)
    res = evaluate_quietly(QRELS, RUN_A, ROAD_SPECS)
    keep = [q for q in res.query_ids.tolist() if q != "q3"]
    for spec in ROAD_SPECS:
        got = dict(zip(values.query_ids.tolist(), values.columns[spec].tolist()))
        assert got == {q: v for q, v in zip(res.query_ids.tolist(), res.values(spec).tolist())
                       if q in keep}


def _values(res) -> dict:
    return {spec: dict(zip(res.query_ids.tolist(), res.values(spec).tolist()))
            for spec in ROAD_SPECS}


def test_evaluator_and_tables(expected):
    import polars as pl

    qrels = pl.DataFrame([(q, d, r) for q, docs in QRELS.items() for d, r in docs.items()],
                         schema=["query_id", "doc_id", "relevance"], orient="row")
    run = pl.DataFrame([(q, d, s) for q, docs in RUN_A.items() for d, s in docs.items()],
                       schema=["query_id", "doc_id", "score"], orient="row")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy = irm.Evaluator(qrels, ROAD_SPECS).evaluate(run.lazy())
        in_memory = irm.Evaluator(QRELS, ROAD_SPECS).evaluate(RUN_A)
    assert _values(in_memory) == expected
    assert _values(lazy) == {s: {q: v for q, v in expected[s].items() if q != "q3"}
                             for s in ROAD_SPECS}


def test_the_cli(expected, measures_file, tmp_path):
    qrels_path, run_path = write_trec(QRELS, RUN_A, tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main(["eval", "-q", "--format", "json", "--measures-from", str(measures_file),
                       *[a for s in ROAD_SPECS for a in ("-m", s)], str(qrels_path),
                       str(run_path)])
    assert status == 0
    per_query = json.loads(out.getvalue())["runs"][0]["per_query"]
    for spec in ROAD_SPECS:
        assert {q: v[spec] for q, v in per_query.items()} == \
            {q: v for q, v in expected[spec].items() if q != "q3"}


def test_the_cli_compare_and_errors(measures_file, tmp_path):
    qrels_path, a_path = write_trec(QRELS, RUN_A, tmp_path, "a")
    _, b_path = write_trec(QRELS, RUN_B, tmp_path, "b")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["compare", "--format", "json", "--measures-from", str(measures_file),
                       "-m", "UmGraded@3", "-m", "map", str(qrels_path), str(a_path),
                       str(b_path)])
    assert status == 0, err.getvalue()
    assert "UmGraded@3" in out.getvalue()
    bad = tmp_path / "bad.py"
    bad.write_text("import irmetrics as irm\nirm.define_measure('UmBad', lambda v: 1 / 0)\n")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(["eval", "--measures-from", str(bad), "-m", "UmBad", str(qrels_path),
                       str(a_path)])
    assert status == 4
    assert "user measure 'UmBad' failed on query 'q1': ZeroDivisionError" in err.getvalue()
    irm.remove_measure("UmBad")
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('typo')\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["eval", "--measures-from", str(broken), "-m", "map", str(qrels_path),
                       str(a_path)])
    assert status == 4 and "broken.py" in err.getvalue() and "typo" in err.getvalue()


def test_compare_statistics_and_report(expected, tmp_path):
    specs = ["UmGraded@3", "UmRbg@3", "UmScore(weight=2.0)@3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = irm.compare(QRELS, {"a": RUN_A, "b": RUN_B}, specs)
    b = evaluate_quietly(QRELS, RUN_B, specs)
    for spec in specs:
        assert comparison.measures.count(spec) == 1
        for row, values in ((0, expected[spec]), (1, dict(zip(b.query_ids.tolist(),
                                                                b.values(spec).tolist())))):
            got = dict(zip(comparison.query_ids.tolist(), comparison.scores[spec][row].tolist()))
            assert got == {q: values[q] for q in got}
    table = comparison.table()
    assert set(table["measure"].to_list()) >= set(specs)
    pytest.importorskip("matplotlib")
    html = comparison.to_html()
    assert "UmGraded@3" in html


def test_the_pytrec_eval_drop_in(expected):
    specs = set(ROAD_SPECS) | {"map"}
    got = RelevanceEvaluator(QRELS, specs).evaluate(RUN_A)
    for spec in ROAD_SPECS:
        assert {q: v[spec] for q, v in got.items()} == expected[spec]
    pytrec_map = evaluate_quietly(QRELS, RUN_A, ["map"], semantics="pytrec_eval").to_dict()
    assert {q: v["map"] for q, v in got.items()} == {q: v["map"] for q, v in pytrec_map.items()}


def test_the_ir_measures_drop_in(expected):
    graded = registered_measure("UmGraded")
    measures = [graded @ 3, graded(max_label=1) @ 3, registered_measure("UmRbg")(p=0.5),
                registered_measure("UmFirst")(rel=2), registered_measure("UmPoolLoop")]
    assert [str(m) for m in measures] == ["UmGraded@3", "UmGraded(max_label=1)@3",
                                          "UmRbg(p=0.5)", "UmFirst(rel=2)", "UmPoolLoop"]
    metrics = list((graded @ 3).evaluator(QRELS).iter_calc(RUN_A))
    from irmetrics.compat.ir_measures import calc_aggregate, iter_calc
    got = {}
    for metric in iter_calc(measures, QRELS, RUN_A):
        got.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    # Every qrels query; q4 (not in the run) and q3 (an empty ranking) get ir_measures'
    # default 0.0, as the built-in measures of the drop-in do.
    for m in measures:
        assert got[str(m)] == {**expected[str(m)], "q3": 0.0, "q4": 0.0}
    assert metrics == [metric for metric in iter_calc([graded @ 3], QRELS, RUN_A)]
    aggregate = calc_aggregate(measures, QRELS, RUN_A)
    assert aggregate[graded @ 3] == sum(got["UmGraded@3"][q] for q in
                                        ["q1", "q10", "q2", "q3", "q4"]) / 5
    assert (graded @ 3).calc_aggregate(QRELS, RUN_A) == aggregate[graded @ 3]
    with pytest.raises(UnknownMeasureError):
        registered_measure("map")
    with pytest.raises(ParameterError):
        graded(alpha=1)
    with pytest.raises(ParameterError):
        registered_measure("UmPoolLoop") @ 3  # defined with cutoff=False


def test_spark(spark, expected):
    import polars as pl

    import irmetrics.spark as irm_spark

    def frame(rows, schema):
        return spark.createDataFrame(pl.DataFrame(rows, schema=schema, orient="row").to_arrow())

    qrels = frame([(q, d, r) for q, docs in QRELS.items() for d, r in docs.items()],
                  ["query_id", "doc_id", "relevance"])
    run = frame([(q, d, s) for q, docs in RUN_A.items() for d, s in docs.items()],
                ["query_id", "doc_id", "score"])

    @irm.define_measure("UmInline")  # defined here, in a test module: travels by value
    def inline(view, scale: float = 1.0):
        return view.count(view.pooled) * scale

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = irm_spark.evaluate(qrels, run, ROAD_SPECS + ["UmInline(scale=0.5)@2"])
            want = evaluate_quietly(QRELS, RUN_A, ["UmInline(scale=0.5)@2"])
        for spec in ROAD_SPECS:
            assert dict(zip(got.results.query_ids.tolist(), got.results.values(spec).tolist())) \
                == {q: v for q, v in expected[spec].items() if q != "q3"}
        assert got.results.values("UmInline(scale=0.5)@2").tolist() == \
            [v for q, v in zip(want.query_ids, want.values("UmInline(scale=0.5)@2"))
             if q != "q3"]

        @irm.define_measure("UmInline", replace=True)
        def failing(view):
            raise KeyError("deliberate")

        with pytest.raises(UserMeasureError, match="'UmInline' failed on query 'q1'"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            irm_spark.evaluate(qrels, run, ["UmInline"])
    finally:
        irm.remove_measure("UmInline")


# ---- options the evaluation passes to the view ------------------------------------------


def test_complete_relevance_float_and_max_docs():
    # complete=True: q4, absent from the run, is seen with an empty ranking.
    res = evaluate_quietly(QRELS, RUN_A, ["UmPoolLoop", "UmGraded@3"], complete=True)
    values = dict(zip(res.query_ids.tolist(), res.values("UmPoolLoop").tolist()))
    assert values["q4"] == 1.0  # no document ranked, num_rel = 1
    float_qrels = {"q1": {"a": 0.5, "b": 1.5, "c": 3.0}}
    res = evaluate_quietly(float_qrels, {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}},
                           ["UmGraded(max_label=3)@3"], relevance="float")
    assert res.values("UmGraded(max_label=3)@3").tolist() == [(0.5 / 3 + 1.5 / 3 + 1.0) / 3]
    capped = evaluate_quietly(QRELS, RUN_A, ["UmGraded@3"], max_docs=1)
    assert capped.values("UmGraded@3").tolist() == \
        list(reference("UmGraded@3", QRELS, RUN_A, max_docs=1).values())
    with pytest.raises(ParameterError, match="exact expected value"):
        irm.evaluate(QRELS, RUN_A, ["UmGraded@3"], ties="expected")


def test_the_view_is_read_only_and_complete():
    seen = {}

    @irm.define_measure("UmPeek")
    def peek(view):
        seen["view"] = view
        return np.zeros(view.n_queries)

    try:
        evaluate_quietly(QRELS, RUN_A, ["UmPeek@2"])
    finally:
        irm.remove_measure("UmPeek")
    view = seen["view"]
    assert view.cutoff == 2 and view.relevance_level == 1
    assert view.query_ids.tolist() == ["q1", "q10", "q2", "q3"]
    assert view.offsets.tolist() == [0, 2, 4, 6, 6]
    # q1 ranks d (2.0, judged -1), then the 0.5 tie in doc id descending order: u, b, a
    assert view.label.tolist() == [0, 0, 1, 2, 0, 3]
    assert view.pooled.tolist() == [True, False, True, True, True, True]
    assert view.judged.tolist() == [False, False, True, True, True, True]
    assert view.score.tolist() == [2.0, 0.5, 3.0, 2.0, 1.0, 1.0]
    assert view.num_rel.tolist() == [3, 2, 2, 1] and view.num_ret.tolist() == [2, 2, 2, 0]
    assert view.ideal().label.tolist() == [2, 2, 2, 1, 3, 1, 1]
    for name in ("label", "judged", "pooled", "is_rel", "score", "rank", "query", "offsets",
                 "num_rel", "num_ret", "label_counts"):
        array = getattr(view, name)
        with pytest.raises(ValueError, match="read-only"):
            array[...] = 0


# ---- errors --------------------------------------------------------------------------


@pytest.fixture
def scratch():
    names = []

    def define(name, function, **options):
        irm.define_measure(name, function, **options)
        names.append(name)

    yield define
    for name in names:
        if name in REGISTRY:
            irm.remove_measure(name)


def test_an_error_names_the_measure_and_the_query(scratch):
    def fails_on_q2(view):
        if "q2" in view.query_ids.tolist():
            raise ZeroDivisionError("boom")
        return view.num_ret

    scratch("UmFailsQ2", fails_on_q2)
    with pytest.raises(UserMeasureError, match=r"'UmFailsQ2@3' failed on query 'q2':"
                                               r" ZeroDivisionError: boom") as info:
        evaluate_quietly(QRELS, RUN_A, ["UmFailsQ2@3"])
    assert info.value.query_id == "q2" and info.value.measure == "UmFailsQ2@3"
    assert isinstance(info.value.__cause__, ZeroDivisionError)

    scratch("UmTogether", lambda view: 1 / 0 if view.n_queries > 1 else view.num_ret)
    with pytest.raises(UserMeasureError, match="on no single query alone") as info:
        evaluate_quietly(QRELS, RUN_A, ["UmTogether"])
    assert info.value.query_id is None

    def per_query_fails(query, limit: int = 1):
        if query.num_ret > limit:
            raise IndexError("too long")
        return 0.0

    scratch("UmLoopFails", per_query_fails, per_query=True)
    with pytest.raises(UserMeasureError, match=r"'UmLoopFails\(limit=2\)' failed on query "
                                               "'q1': IndexError: too long"):
        evaluate_quietly(QRELS, RUN_A, ["UmLoopFails(limit=2)"])


@pytest.mark.parametrize("returned, match", [
    (lambda v: np.zeros(v.n_queries + 1), r"returned shape \(5,\); expected \(4,\)"),
    (lambda v: 1.0, r"returned shape \(\); expected \(4,\)"),
    (lambda v: np.array(["x"] * v.n_queries), "returned ndarray; expected an array"),
    (lambda v: None, "returned NoneType; expected"),
    (lambda v: np.where(v.query_ids == "q10", np.nan, 0.0),
     r"returned nan for query 'q10'; values must be finite numbers \(NaN is allowed"),
    (lambda v: np.where(v.query_ids == "q2", -np.inf, 0.0), "returned -inf for query 'q2'"),
])
def test_values_of_the_wrong_shape_or_not_finite(scratch, returned, match):
    scratch("UmWrong", returned)
    with pytest.raises(UserMeasureError, match=match):
        evaluate_quietly(QRELS, RUN_A, ["UmWrong"])


def test_column_vectors_and_allowed_nan(scratch):
    scratch("UmColumn", lambda v: v.num_ret[:, None])
    scratch("UmNan", lambda v: np.where(v.query_ids == "q2", np.nan, 1.0), allow_nan=True)
    scratch("UmLoopNan", lambda q: float("nan"), per_query=True)
    scratch("UmLoopList", lambda q: [1.0, 2.0], per_query=True)
    res = evaluate_quietly(QRELS, RUN_A, ["UmColumn", "UmNan"])
    assert res.values("UmColumn").tolist() == [6, 4, 3, 0]
    assert np.isnan(res.values("UmNan")).tolist() == [False, False, True, False]
    assert math.isnan(res.aggregate()["UmNan"])
    with pytest.raises(UserMeasureError, match="returned nan for query 'q1'"):
        evaluate_quietly(QRELS, RUN_A, ["UmLoopNan"])
    with pytest.raises(UserMeasureError, match=r"returned shape \(2,\) for query 'q1'"):
        evaluate_quietly(QRELS, RUN_A, ["UmLoopList"])


@pytest.mark.parametrize("name, match", [
    ("map", "'map' is the built-in measure 'map'"),
    ("MAP", "built-in measure"),
    ("nDCG", "built-in measure"),
    ("mrr", "friendly name 'MRR'"),
    ("P_10", "trec_eval's output name for 'P.10'"),
    ("official", "a trec_eval nickname"),
    ("UmGraded", "is a user measure already; pass replace=True"),
    ("umgraded", "is a user measure already"),
    ("1st", "a Python identifier"),
    ("with space", "a Python identifier"),
    (3, "a Python identifier"),
])
def test_names_that_clash_or_are_not_names(name, match):
    with pytest.raises(ParameterError, match=match):
        irm.define_measure(name, lambda view: view.num_ret)


def test_parameters_must_be_typed_and_free(scratch):
    for function, match in [
        (lambda view, alpha: view.num_ret, "needs a type"),
        (lambda view, rel=2: view.num_ret, "'rel' .* is reserved"),
        (lambda view, cutoff=2: view.num_ret, "'cutoff' .* is reserved"),
        (lambda view, *more: view.num_ret, "can be given by keyword"),
        (lambda view, **more: view.num_ret, "can be given by keyword"),
        (lambda: 0, "first positional parameter"),
        (lambda view, values=[1]: view.num_ret, "needs a type"),
    ]:
        with pytest.raises(ParameterError, match=match):
            irm.define_measure("UmTyped", function)
    with pytest.raises(ParameterError, match="`function` must be a callable"):
        irm.define_measure("UmTyped", 3)
    with pytest.raises(ParameterError, match="`aggregate` must be one of"):
        irm.define_measure("UmTyped", lambda view: view.num_ret, aggregate="median")

    def needs(view, alpha: float, flag: bool = False, label: str = "x", count: int = 1):
        return view.num_ret * alpha + flag + len(label) + count

    scratch("UmTyped", needs, cutoff=False)
    typed = "UmTyped(alpha=0.5, flag=True, label='abc', count=2)"
    res = evaluate_quietly(QRELS, RUN_A, ["UmTyped(alpha=1)", typed])
    assert res.values(typed).tolist() == [3.0 + 1 + 3 + 2, 2.0 + 6, 1.5 + 6, 0.0 + 6]
    assert res.values("UmTyped(alpha=1)").tolist() == [8.0, 6.0, 5.0, 2.0]
    with pytest.raises(ParameterError, match="needs alpha"):
        irm.evaluate(QRELS, RUN_A, ["UmTyped"])
    with pytest.raises(ParameterError, match="`count` in .* must be an integer"):
        irm.evaluate(QRELS, RUN_A, ["UmTyped(alpha=1, count=1.5)"])
    with pytest.raises(ParameterError, match=r"takes no cutoff .* spelled 'UmTyped\(alpha=<float>"):
        irm.evaluate(QRELS, RUN_A, ["UmTyped(alpha=1)@3"])  # defined with cutoff=False
    # replace=True redefines; remove_measure refuses built-in and unknown names
    irm.define_measure("UmTyped", lambda view: view.num_ret * 0.0, replace=True)
    assert evaluate_quietly(QRELS, RUN_A, ["UmTyped"]).values("UmTyped").tolist() == [0.0] * 4
    with pytest.raises(ParameterError, match="built-in ones cannot be removed"):
        irm.remove_measure("map")
    with pytest.raises(UnknownMeasureError):
        irm.remove_measure("UmNeverDefined")


def test_rel_and_judged_only_apply_to_the_measure_alone():
    res = evaluate_quietly(QRELS, RUN_A, ["UmFirst(rel=2)", "UmFirst(judged_only=True)@2",
                                          "UmFirst"])
    assert dict(zip(res.query_ids.tolist(), res.values("UmFirst(rel=2)").tolist())) == \
        reference("UmFirst", QRELS, RUN_A, level=2)
    assert dict(zip(res.query_ids.tolist(),
                    res.values("UmFirst(judged_only=True)@2").tolist())) == \
        reference("UmFirst@2", QRELS, RUN_A, judged_only=True)


# ---- the docs page --------------------------------------------------------------------


def test_the_docs_page_examples():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # Fragile's deliberate 1 / 0
        result = doctest.testfile(str(DOC), module_relative=False,
                                  optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 15


def test_the_docs_page_command_line(tmp_path):
    text = DOC.read_text()
    source = text.split("<!-- mymeasures.py -->\n```\n", 1)[1].split("```", 1)[0]
    shown = text.split("<!-- cli -->\n```\n", 1)[1].split("```", 1)[0].splitlines()
    (tmp_path / "mymeasures.py").write_text(source)
    qrels = {"q1": {"d1": 3, "d2": 1, "d3": 0, "d4": 2}, "q2": {"d5": 1, "d6": -1}}
    run = {"q1": {"d1": 0.9, "d3": 0.8, "d4": 0.7, "d9": 0.6, "d2": 0.5},
           "q2": {"d6": 2.0, "d7": 1.0, "d5": 0.5}}
    qrels_path, run_path = write_trec(qrels, run, tmp_path)
    command = shlex.split(shown[0].removeprefix("$ irmetrics "))
    argv = [str(tmp_path / a) if a == "mymeasures.py" else a for a in command[:-2]]
    argv += [str(qrels_path), str(run_path)]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            assert main(argv) == 0
    finally:
        irm.remove_measure("GradedP")
    assert out.getvalue().splitlines() == shown[1:]

