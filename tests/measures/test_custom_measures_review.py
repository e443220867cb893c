"""Regression tests of the review of user-defined measures (irm.define_measure): each test
is a case that gave a silent wrong number, a traceback or a message that did not say
what was wrong, and now gives the right number or a clear error."""

from __future__ import annotations

import decimal
import fractions
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.exceptions import ParameterError, UnknownMeasureError, UserMeasureError
from irmetrics.measures import REGISTRY
from tests._cases import qrels_and_run

QRELS = {"q1": {"d1": 3, "d2": 1, "d3": 0, "d4": 2}, "q2": {"d5": 1, "d6": -1}}
RUN = {"q1": {"d1": 0.9, "d3": 0.8, "d4": 0.7, "d9": 0.6, "d2": 0.5},
       "q2": {"d6": 2.0, "d7": 1.0, "d5": 0.5}}


@pytest.fixture
def scratch():
    """Names defined in a test, removed after it."""
    names = []

    def define(name, function, **options):
        irm.define_measure(name, function, **options)
        names.append(name)

    yield define
    for name in names:
        irm.remove_measure(name)


def evaluate(measures, qrels=QRELS, run=RUN, **options) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.evaluate(qrels, run, measures, **options).to_dict()


# ---- what a measure returns ------------------------------------------------------------


@pytest.mark.parametrize("per_query, returned", [
    (False, lambda view: np.ma.masked_array(np.ones(view.n_queries), mask=[True, False])),
    (True, lambda query: np.ma.masked),
    (True, lambda query: np.ma.masked_array([0.5], mask=[True])),
])
def test_a_masked_value_is_no_value(scratch, per_query, returned):
    # np.asarray drops the mask: the hidden 1.0 (or 0.0) was reported as the value.
    scratch("Masked", returned, per_query=per_query)
    with pytest.raises(UserMeasureError, match="'Masked' returned nan for query 'q1'"):
        evaluate(["Masked"])
    scratch("MaskedOk", returned, per_query=per_query, allow_nan=True)
    assert np.isnan(evaluate(["MaskedOk"])["q1"]["MaskedOk"])


@pytest.mark.parametrize("value, expected", [
    (decimal.Decimal("0.5"), 0.5), (fractions.Fraction(1, 3), 1 / 3), (2 ** 70, 2.0 ** 70),
])
def test_real_numbers_held_as_python_objects(scratch, value, expected):
    # Decimal and Fraction are real numbers: refused before as "returned Decimal;
    # expected one real number".
    scratch("Obj", lambda query: value, per_query=True)
    scratch("ObjVec", lambda view: [value] * view.n_queries)
    out = evaluate(["Obj", "ObjVec"])
    assert out == {q: {"Obj": expected, "ObjVec": expected} for q in ("q1", "q2")}


@pytest.mark.parametrize("per_query", [True, False])
def test_an_int_beyond_float64_is_infinite_for_its_query(scratch, per_query):
    # 10**400 was "returned int; expected one real number".
    huge = 10 ** 400
    if per_query:
        scratch("Huge", lambda query: huge if query.query_id == "q2" else 1, per_query=True)
    else:
        scratch("Huge", lambda view: [1, huge])
    with pytest.raises(UserMeasureError, match="'Huge' returned inf for query 'q2'"):
        evaluate(["Huge"])


# ---- measures files ----------------------------------------------------------------------


def run_cli(argv):
    import contextlib
    import io

    from irmetrics.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def trec_files(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items()
                             for d, r in docs.items()))
    run.write_text("".join(f"{q} Q0 {d} 1 {s} r\n" for q, docs in RUN.items()
                           for d, s in docs.items()))
    return str(qrels), str(run)


@pytest.mark.parametrize("code, shown", [("2", "sys.exit(2)"), ("'bye'", "sys.exit('bye')")])
def test_a_measures_file_that_calls_sys_exit(tmp_path, code, shown):
    # sys.exit('bye') ended the CLI with status 0 and no output (2: status 2, silently);
    # load_measures ended the calling program.
    path = tmp_path / "exits.py"
    path.write_text(f"import sys\nsys.exit({code})\n")
    with pytest.raises(UserMeasureError, match=rf"'.*exits.py' called {re.escape(shown)}"):
        irm.load_measures(path)
    status, out, err = run_cli(["eval", "--measures-from", str(path), "-m", "map",
                                *trec_files(tmp_path)])
    assert (status, out) == (4, "")
    assert f"called {shown}" in err


def test_a_measures_file_that_fails_defines_nothing(tmp_path, scratch):
    scratch("Kept", lambda view: view.num_ret)
    path = tmp_path / "partial.py"
    path.write_text("import irmetrics as irm\n"
                    "irm.define_measure('PartA', lambda v: v.num_ret)\n"
                    "irm.define_measure('Kept', lambda v: v.num_ret * 0)\n"
                    "raise RuntimeError('later')\n")
    with pytest.raises(UserMeasureError, match="failed: RuntimeError: later"):
        irm.load_measures(path)
    # PartA stayed registered and Kept stayed replaced by the half-run file.
    assert "PartA" not in REGISTRY
    assert evaluate(["Kept"])["q1"]["Kept"] == 5.0


def test_a_measures_file_that_defines_no_measure(tmp_path):
    # The CLI then said only "unknown measure 'GradedP@3'; closest names: RelP...".
    path = tmp_path / "nothing.py"
    path.write_text("x = 1\n")
    status, _, err = run_cli(["eval", "--measures-from", str(path), "-m", "map",
                              *trec_files(tmp_path)])
    assert status == 0
    assert f"warning: the measures file {str(path)!r} defines no measure" in err
    status, _, err = run_cli(["compare", "--measures-from", str(path), "-m", "map",
                              *trec_files(tmp_path), trec_files(tmp_path)[1]])
    assert "irmetrics compare: warning: the measures file" in err


@pytest.mark.parametrize("path", [None, 3, ["a.py"]])
def test_load_measures_needs_a_path(path):
    # None was "TypeError: expected str, bytes or os.PathLike object, not NoneType".
    with pytest.raises(ParameterError, match="`path` must be the path of"):
        irm.load_measures(path)


# ---- names --------------------------------------------------------------------------------


@pytest.mark.parametrize("name, printed", [("p_10", "P.10"), ("Ndcg_Cut_10", "ndcg_cut.10"),
                                           ("SUCCESS_1", "success.1"),
                                           ("MAP_CUT_5", "map_cut.5")])
def test_output_names_of_built_in_measures_are_compared_case_blind(name, printed):
    # The docs say names are compared case-blind; p_10 was accepted beside P_10.
    with pytest.raises(ParameterError, match=f"output name for '{re.escape(printed)}'"):
        irm.define_measure(name, lambda view: view.num_ret)
    assert name not in REGISTRY


def test_remove_measure_is_case_blind_as_names_are():
    # "hits@2" evaluates the measure Hits, but remove_measure("hits") was "unknown".
    irm.define_measure("Hits", lambda view: view.count(view.is_rel))
    assert evaluate(["hits@2"])["q1"]["hits@2"] == 1.0
    irm.remove_measure("hits")
    assert "Hits" not in REGISTRY


@pytest.mark.parametrize("name", [["x"], 3, None])
def test_remove_measure_needs_a_name(name):
    # ["x"] was "TypeError: unhashable type: 'list'", 3 "unknown measure 3".
    with pytest.raises(ParameterError, match="`name` must be the name of a user measure"):
        irm.remove_measure(name)


@pytest.mark.parametrize("default, spelling, expected", [
    (np.float64(0.5), "NpDefault(a=0.25)", 0.25), (np.int64(2), "NpDefault(a=3)", 3.0),
    (np.float64(0.5), "NpDefault", 0.5)])
def test_a_numpy_default_types_its_parameter(scratch, default, spelling, expected):
    # np.float64 is a float, yet "parameter 'a' needs a type: ... or give it a default
    # of one of those types".
    def measure(view, a=default):
        return np.full(view.n_queries, float(a))

    scratch("NpDefault", measure)
    assert evaluate([spelling])["q1"][spelling] == expected
    kind = "an integer" if isinstance(default, np.integer) else "a number"
    with pytest.raises(ParameterError, match=f"`a` in .* must be {kind}"):
        evaluate(["NpDefault(a='x')"])


# ---- the pytrec_eval drop-in ----------------------------------------------------------------


@pytest.mark.parametrize("spelling, error, match", [
    ("Gp(max_label='x')@3", ParameterError, "`max_label` in .* must be an integer"),
    ("Gp@0", ParameterError, "cutoff of 'Gp' must be a positive integer"),
    ("Gp(nope=1)", ParameterError, "Gp takes no argument 'nope'"),
    ("Gp.3", UnknownMeasureError, "unknown measure 'Gp.3'"),
])
def test_pytrec_eval_drop_in_says_what_is_wrong_with_a_user_spelling(scratch, spelling,
                                                                      error, match):
    # Each was "unknown measure '...'" with no suggestion: the name was known.
    from irmetrics.compat.pytrec_eval import RelevanceEvaluator

    scratch("Gp", lambda view, max_label=3: view.sum(np.minimum(view.label, max_label)))
    with pytest.raises(error, match=match) as raised:
        RelevanceEvaluator(QRELS, {"map", spelling}).evaluate(RUN)
    if error is UnknownMeasureError:  # the spelling to use is suggested
        assert any(s.startswith("Gp(max_label=<int>") for s in raised.value.suggestions)
    assert RelevanceEvaluator(QRELS, {"map", "gp(max_label=1)@3"}).evaluate(RUN)["q1"] == \
        {"map": evaluate(["map"])["q1"]["map"], "gp(max_label=1)@3": 2.0}


# ---- the ir_measures objects ------------------------------------------------------------------


@pytest.mark.parametrize("by_query", [True, False])
@pytest.mark.parametrize("value, shown", [(None, "NoneType"), ("0.5", "str"), ([1, 2], "shape")])
def test_define_values_that_are_not_numbers(by_query, value, shown):
    # Was "TypeError: unsupported operand type(s) for +=: 'float' and 'NoneType'" from
    # the aggregation, a traceback naming neither the measure nor the query.
    from irmetrics.compat.ir_measures import define, define_byquery

    if by_query:
        measure = define_byquery(lambda qrels, run: value, name="Odd")
    else:
        measure = define(lambda qrels, run: [(q, value) for q in run["query_id"].unique()],
                         name="Odd")
    with pytest.raises(UserMeasureError, match=f"'Odd@2' returned {shown}.* for query 'q1'"):
        (measure @ 2).calc_aggregate(QRELS, RUN)
    # ir_measures' own values pass as they are (an int stays an int, NaN stays NaN).
    counted = define_byquery(lambda qrels, run: len(run), name="Count")
    assert [m.value for m in (counted @ 2).iter_calc(QRELS, RUN)] == [2, 2]


def test_a_numpy_integer_cutoff(scratch):
    # np.int64(3) was refused: "`cutoff` must be a non-negative integer; got np.int64(3)".
    from irmetrics.compat.ir_measures import registered_measure

    scratch("Hits", lambda view: view.count(view.is_rel))
    hits = registered_measure("Hits")
    assert str(hits @ np.int64(3)) == "Hits@3"
    assert (hits @ np.int64(3)).calc_aggregate(QRELS, RUN) == (hits @ 3).calc_aggregate(QRELS, RUN)
    with pytest.raises(ParameterError, match="`cutoff` must be a non-negative integer"):
        hits @ np.bool_(True)


# ---- spellings --------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["Gx(p=float('nan'))", "Gx(p=__import__('os').getpid())",
                                      "P(rel=int(2))@5"])
def test_arguments_that_are_not_literals(scratch, spelling):
    # Was "unknown measure ...; did you mean 'Gx(p=<float>, ...)'": the measure is known,
    # the argument is what is wrong.
    scratch("Gx", lambda view, p=0.5: view.num_ret * p)
    with pytest.raises(ParameterError, match="must be name=value pairs with literal values"):
        evaluate([spelling])


def test_literal_arguments_in_parentheses(scratch):
    scratch("Gx", lambda view, p=0.5: view.num_ret * p)
    out = evaluate(["Gx(p=(0.25))", "P(rel=(2))@5", "P(rel=2)@5"])["q1"]
    assert out["Gx(p=(0.25))"] == 5 * 0.25
    assert out["P(rel=(2))@5"] == out["P(rel=2)@5"] == 0.4  # d1 (3) and d4 (2) in 5


# ---- docstrings ----------------------------------------------------------------------------


def test_public_docstrings_have_an_example_and_the_measures_a_formula():
    # define_byquery had no formula, QueryRanking and Rankings.queries no example.
    from irmetrics.compat import ir_measures as imd
    from irmetrics.measures import custom

    with_formula = [custom.define_measure, custom.QueryRanking, imd.define, imd.define_byquery]
    others = [custom.Rankings, custom.Rankings.queries, custom.Rankings.sum,
              custom.Rankings.ideal, custom.remove_measure, custom.load_measures,
              custom.one_number, custom.is_user_spelling, imd.registered_measure]
    for obj in with_formula + others:
        assert ">>>" in obj.__doc__, obj
    for obj in with_formula:
        assert ":math:" in obj.__doc__, obj


def test_the_cli_names_the_run_a_user_measure_failed_on(tmp_path):
    # With several runs the message named the measure and the query, not the run.
    path = tmp_path / "mine.py"
    path.write_text("import irmetrics as irm\n"
                    "def only_first(view):\n"
                    "    if view.n_queries and view.num_ret[0] == 2:\n"
                    "        raise KeyError('k')\n"
                    "    return view.num_ret\n"
                    "irm.define_measure('OnlyFirst', only_first)\n")
    qrels, run = trec_files(tmp_path)
    other = tmp_path / "other.txt"
    other.write_text("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\n")
    try:
        status, _, err = run_cli(["eval", "--measures-from", str(path), "-m", "OnlyFirst",
                                    qrels, run, str(other)])
    finally:
        irm.remove_measure("OnlyFirst")
    assert status == 4
    assert err == (f"irmetrics eval: {other}: user measure 'OnlyFirst' failed on query 'q1':"
                   " KeyError: 'k'\n")


def test_an_evaluator_keeps_the_definitions_it_was_made_with(scratch):
    # Undocumented before: a redefinition did not reach an Evaluator made earlier.
    scratch("Kept", lambda view: view.num_ret)
    before = irm.Evaluator(QRELS, ["Kept"])
    irm.define_measure("Kept", lambda view: view.num_ret * 0, replace=True)
    assert before.evaluate(RUN).to_dict()["q1"]["Kept"] == 5.0
    assert irm.Evaluator(QRELS, ["Kept"]).evaluate(RUN).to_dict()["q1"]["Kept"] == 0.0


# ---- every field of the view against a plain loop, under every option ------------------------
#
# Not a regression (these held): the review's differential check, kept. The plain loop
# reads the docs' definitions; the measures read every field of Rankings / QueryRanking.

FIELDS = 7


def _fields(view):
    ideal = view.ideal()
    counts = np.asarray(view.label_counts, dtype=float)
    return np.stack([
        view.sum(view.label / view.rank),
        view.count(view.judged) * 1e6 + view.count(view.pooled) * 1e4
        + view.count(view.is_rel) * 1e2 + view.num_ret,
        view.num_rel * 1e3 + view.first_rank(view.is_rel),
        view.sum(view.score / view.rank),
        ideal.sum(ideal.label / ideal.rank) + 1e3 * ideal.num_ret,
        (counts * np.asarray(view.label_values, dtype=float)).sum(axis=1) + 1e3 * counts.sum(1),
        view.sum(view.cumsum(view.is_rel) * view.is_rel / view.rank),
    ])


def _fields_of_one(query):
    cum = np.cumsum(query.is_rel)
    first = int(np.argmax(query.is_rel)) + 1 if query.is_rel.any() else 0
    return [
        sum(float(label) / rank for label, rank in zip(query.label, query.rank)),
        query.judged.sum() * 1e6 + query.pooled.sum() * 1e4 + query.is_rel.sum() * 1e2
        + query.num_ret,
        query.num_rel * 1e3 + first,
        sum(float(s) / rank for s, rank in zip(query.score, query.rank)),
        sum(float(g) / (i + 1) for i, g in enumerate(query.ideal_label))
        + 1e3 * len(query.ideal_label),
        sum(float(g) * c for g, c in query.label_counts.items())
        + 1e3 * sum(query.label_counts.values()),
        float(sum(c / r for c, x, r in zip(cum, query.is_rel, query.rank) if x)),
    ]


def _loop(qrels, run, *, k=None, relevance_level=1, judged_only=False, max_docs=None,
          complete=False, ties="trec_eval", semantics="trec_eval", relevance="int"):
    out = {}
    for q in sorted(qrels if complete else set(qrels) & set(run), key=str.encode):
        judged, docs = qrels[q], run.get(q, {})
        score = {d: float(np.float32(s)) if semantics == "pytrec_eval" else s
                 for d, s in docs.items()}
        if ties == "trec_eval":
            ranking = sorted(docs, key=lambda d: (score[d], d.encode()), reverse=True)
        else:
            ranking = sorted(docs, key=lambda d: -score[d])  # stable: input order
        ranking = ranking[:max_docs]
        if judged_only:
            ranking = [d for d in ranking if judged.get(d, -1) >= 0]
        ranking = ranking[:k]
        label = [judged[d] if judged.get(d, -1) >= 0 else 0 for d in ranking]
        is_judged = [judged.get(d, -1) >= 0 for d in ranking]
        is_rel = [j and g >= relevance_level for j, g in zip(is_judged, label)]
        kept = [g for g in judged.values() if g >= 0]
        ideal = sorted(kept, reverse=True)[:k]
        first = next((i + 1 for i, x in enumerate(is_rel) if x), 0)
        hits, ap = 0, 0.0
        for i, x in enumerate(is_rel):
            hits += x
            ap += hits / (i + 1) if x else 0.0
        out[q] = [
            sum(g / (i + 1) for i, g in enumerate(label)),
            sum(is_judged) * 1e6 + sum(d in judged for d in ranking) * 1e4 + sum(is_rel) * 1e2
            + len(ranking),
            sum(g >= relevance_level for g in kept) * 1e3 + first,
            sum(score[d] / (i + 1) for i, d in enumerate(ranking)),
            sum(g / (i + 1) for i, g in enumerate(ideal)) + 1e3 * len(ideal),
            sum(kept) + 1e3 * len(kept),
            ap,
        ]
    return out


@pytest.fixture(scope="module")
def field_measures():
    names = []
    for i in range(FIELDS):
        irm.define_measure(f"RvV{i}", lambda view, i=i: _fields(view)[i])
        irm.define_measure(f"RvL{i}", lambda query, i=i: _fields_of_one(query)[i],
                           per_query=True)
        names += [f"RvV{i}", f"RvL{i}"]
    yield names
    for name in names:
        irm.remove_measure(name)


def _check_fields(got: dict, want: dict, names, cut: str):
    assert got.keys() == want.keys()
    for q, values in want.items():
        for i, value in enumerate(values):
            for kind in ("RvV", "RvL"):
                assert got[q][f"{kind}{i}{cut}"] == pytest.approx(value, rel=1e-12,
                                                                  abs=1e-12), (q, kind, i)


OPTIONS = st.fixed_dictionaries({}, optional={
    "relevance_level": st.sampled_from([0, 1, 2]), "judged_only": st.booleans(),
    "max_docs": st.sampled_from([1, 2, 5]), "complete": st.booleans(),
    "ties": st.sampled_from(["trec_eval", "input_order"]),
    "semantics": st.sampled_from(["trec_eval", "pytrec_eval"])})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=qrels_and_run(), k=st.sampled_from([None, 1, 3, 20]), options=OPTIONS,
       scale=st.sampled_from([None, 0.5, 0.25]))
def test_every_field_equals_a_plain_loop(field_measures, case, k, options, scale):
    qrels, run = case
    if scale is not None:  # float labels
        qrels = {q: {d: g * scale for d, g in docs.items()} for q, docs in qrels.items()}
        options = {**options, "relevance": "float"}
    cut = "" if k is None else f"@{k}"
    want = _loop(qrels, run, k=k, **options)
    if not want:
        return
    _check_fields(evaluate([n + cut for n in field_measures], qrels, run, **options),
                  want, field_measures, cut)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=qrels_and_run(), chunk=st.sampled_from([8, 64]), seed=st.integers(0, 3),
       options=OPTIONS.map(lambda o: {k: v for k, v in o.items() if k != "semantics"}))
def test_the_file_road_in_small_chunks_equals_the_loop(field_measures, tmp_path_factory,
                                                       monkeypatch, case, chunk, seed,
                                                       options):
    import importlib
    import random

    import irmetrics.containers.trec_text as trec_text

    qrels, run = case
    lines = [f"{q} Q0 {d} 1 {s!r} r\n" for q, docs in run.items() for d, s in docs.items()]
    random.Random(seed).shuffle(lines)  # queries split over the file
    if options.get("ties") == "input_order" or not lines:
        return  # the loop's input order is the dict's, not the shuffled file's
    path = tmp_path_factory.mktemp("road")
    (path / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                                            for d, g in docs.items()))
    (path / "run.txt").write_text("".join(lines))
    want = _loop(qrels, {q: docs for q, docs in run.items() if docs}, k=3, **options)
    if not want:
        return
    monkeypatch.setattr(trec_text, "PLAIN_CHUNK_BYTES", chunk)
    road = importlib.import_module("irmetrics.evaluate")
    streamed = []
    original = road.evaluate_run_file
    monkeypatch.setattr(road, "evaluate_run_file",
                        lambda *a, **kw: streamed.append(original(*a, **kw)) or streamed[-1])
    got = evaluate([n + "@3" for n in field_measures], str(path / "qrels.txt"),
                   str(path / "run.txt"), **options)
    assert streamed and streamed[0] is not None  # the bounded-memory road, in chunks
    _check_fields(got, want, field_measures, "@3")
