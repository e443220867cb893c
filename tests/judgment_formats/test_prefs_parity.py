"""Engine vs slow reference (tests/reference/prefs_ref.py), and properties, with hypothesis.

Inputs mix tied and signed-zero scores, unjudged and unretrieved documents, doc ids
whose byte order differs from their "natural" order, repeated prefs lines, negative
and fractional levels, several judgment groups and sub-groups (EC and PA mode, with
cycles and 0/non-0 conflicts that must raise), ``max_docs`` and ``complete``.
"""

import random

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.exceptions import IrMetricsError, NoQueriesError
from irmetrics.measures import NICKNAMES, REGISTRY
from tests.reference import prefs_ref as ref

DOCS = ["a", "B", "a1", "b", "é", "10", "9"]
UNJUDGED = ["u", "zz"]
QUERIES = ["1", "10", "2"]
GROUPS = ["u", "U", "v"]
SCORES = [0.0, -0.0, 1.0, 2.0, 2.5, -1.0]
PREF_MEASURES = NICKNAMES["all_prefs"][2:]
SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def prefs_lines(draw, levels=(0.0, 0.0, 1.0, 2.0, 3.0, 0.5, -1.0)):
    docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
    lines = []
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=3, unique=True)):
        for g in draw(st.lists(st.sampled_from(GROUPS), min_size=1, max_size=3, unique=True)):
            jsgs = draw(st.sampled_from([["s"], ["s"], ["s", "t"], ["t", "s", "x"]]))
            for s in jsgs:
                for d in draw(st.lists(st.sampled_from(docs), min_size=1, max_size=len(docs),
                                       unique=True)):
                    lines.append((q, g, s, d, draw(st.sampled_from(levels))))
    if draw(st.booleans()):  # repeat a line: counted twice in EC mode, once in PA mode
        lines.append(draw(st.sampled_from(lines)))
    if draw(st.integers(0, 4)) == 0:  # a doc at a second level of the same sub-group
        q, g, s, d, _ = draw(st.sampled_from(lines))
        lines.append((q, g, s, d, draw(st.sampled_from(levels))))
    return lines


@st.composite
def runs(draw):
    run = {}
    for q in draw(st.lists(st.sampled_from(QUERIES + ["7"]), max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS + UNJUDGED), max_size=7, unique=True))
        run[q] = {d: draw(st.sampled_from(SCORES)) for d in docs}
    return run


def run_lines(run):
    return [(q, d, s) for q, docs in run.items() for d, s in docs.items()]


def as_run_file(run):
    """The run as a file would carry it: a query without documents is absent."""
    return irm.Run.from_dict(run)


def engine_prefs(lines, run, **kw):
    try:
        res = irm.evaluate_prefs(irm.Prefs.from_records(lines), as_run_file(run),
                                 ["all_prefs"], **kw)
    except NoQueriesError:
        return {}  # the reference's answer when no query is evaluated
    except IrMetricsError as exc:
        return exc
    return {q: {n: v for n, v in d.items() if n in PREF_MEASURES}
            for q, d in res.to_dict().items()}


def as_dict(evaluation, *args, **kw) -> dict:
    """``evaluation(*args, **kw).to_dict()``, or ``{}`` (the reference's answer) when no
    query is evaluated, which irmetrics refuses with NoQueriesError."""
    try:
        return evaluation(*args, **kw).to_dict()
    except NoQueriesError:
        return {}


def reference_prefs(lines, run, **kw):
    try:
        return ref.evaluate_prefs(lines, run_lines(run), **kw)
    except ref.ReferenceError_ as exc:
        return exc


@SETTINGS
@given(lines=prefs_lines(), run=runs(),
       max_docs=st.one_of(st.none(), st.integers(0, 5)), complete=st.booleans())
def test_prefs_engine_matches_reference(lines, run, max_docs, complete):
    if not run and not complete:
        run = {"1": {"a": 1.0}}
    want = reference_prefs(lines, run, max_docs=max_docs, complete=complete)
    got = engine_prefs(lines, run, max_docs=max_docs, complete=complete)
    if isinstance(want, Exception) or isinstance(got, Exception):
        assert isinstance(want, Exception) and isinstance(got, Exception), (want, got)
        return
    assert got == want  # exact: same counts, same division and summation order


@SETTINGS
@given(lines=prefs_lines(levels=(0.0, 1.0, 2.0, 3.0)), run=runs(),
       max_docs=st.one_of(st.none(), st.integers(0, 5)))
def test_prefs_consistent_inputs_match_reference(lines, run, max_docs):
    """Single-sub-group judgment groups with one line per doc: never an error."""
    seen, clean = set(), []
    for q, g, _, d, level in lines:
        if (q, g, d) not in seen:
            seen.add((q, g, d))
            clean.append((q, g, "s", d, level))
    run = run or {"1": {"a": 1.0}}
    want = reference_prefs(clean, run, max_docs=max_docs)
    got = engine_prefs(clean, run, max_docs=max_docs)
    assert not isinstance(want, Exception)
    assert got == want
    for values in got.values():
        for name, v in values.items():
            if "num_prefs" not in name:
                assert 0.0 <= v <= 1.0
        assert values["prefs_num_prefs_ful_ret"] <= values["prefs_num_prefs_ful"]
        assert values["prefs_num_prefs_ful"] <= values["prefs_num_prefs_poss"]


@st.composite
def consistent_pa_lines(draw):
    """PA-mode judgment groups drawn from a hidden order, so they never conflict.

    Each doc has a hidden value; the lowest ones are non-relevant (level 0 in every
    sub-group), the others get ``value * factor`` with a per-sub-group factor, so levels
    differ between sub-groups but never contradict each other.
    """
    lines = []
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=2, unique=True)):
        for g in draw(st.lists(st.sampled_from(GROUPS), min_size=1, max_size=2, unique=True)):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=2, max_size=7, unique=True))
            n_nonrel = draw(st.integers(0, len(docs)))
            hidden = {d: i for i, d in enumerate(docs)}
            for s in ["s", "t", "x"][: draw(st.integers(2, 3))]:
                factor = draw(st.sampled_from([0.5, 1.0, 3.0]))
                for d in draw(st.lists(st.sampled_from(docs), min_size=1, unique=True)):
                    level = 0.0 if hidden[d] < n_nonrel else (hidden[d] + 1) * factor
                    lines.append((q, g, s, d, level))
    return lines


@SETTINGS
@given(lines=consistent_pa_lines(), run=runs(),
       max_docs=st.one_of(st.none(), st.integers(0, 5)))
def test_prefs_consistent_pa_mode_matches_reference(lines, run, max_docs):
    run = run or {"1": {"a": 1.0}}
    want = reference_prefs(lines, run, max_docs=max_docs)
    got = engine_prefs(lines, run, max_docs=max_docs)
    assert not isinstance(want, Exception), want
    assert got == want


@SETTINGS
@given(lines=prefs_lines(), run=runs(), seed=st.integers(0, 2**32 - 1))
def test_prefs_row_order_invariance(lines, run, seed):
    run = run or {"1": {"a": 1.0}}
    rng = random.Random(seed)
    shuffled = lines[:]
    rng.shuffle(shuffled)
    run_items = list(run.items())
    rng.shuffle(run_items)
    a = engine_prefs(lines, run)
    b = engine_prefs(shuffled, dict(run_items))
    if isinstance(a, Exception):
        assert isinstance(b, Exception)
    else:
        assert a == b


@SETTINGS
@given(levels=st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=2, max_size=6))
def test_prefs_ideal_ranking_scores_one(levels):
    """Ranking one sub-group's docs by level fulfils every preference."""
    lines = [("q", "u", "s", f"d{i}", lvl) for i, lvl in enumerate(levels)]
    run = {"q": {f"d{i}": lvl for i, lvl in enumerate(levels)}}
    res = irm.evaluate_prefs(irm.Prefs.from_records(lines), run, ["all_prefs"]).to_dict()["q"]
    if len(set(levels)) > 1:
        for name in ("prefs_simp", "prefs_simp_ret", "prefs_simp_imp", "prefs_pair",
                     "prefs_pair_ret", "prefs_avgjg", "prefs_avgjg_ret"):
            assert res[name] == 1.0
        assert res["prefs_num_prefs_ful_ret"] == res["prefs_num_prefs_poss"]
    else:
        assert res["prefs_num_prefs_poss"] == 0 and res["prefs_simp"] == 0.0


# ----------------------------------------------------------------------------- qrels_jg

JG_CUTOFFS = (1, 2, 3, 5)
JG_MULTIPLIERS = (0.2, 0.5, 1.0, 1.5, 2.0)
JG_MEASURES = ["map_avgjg", "P_avgjg.1,2,3,5", "Rprec_mult_avgjg.0.2,0.5,1.0,1.5,2.0"]


@st.composite
def jg_lines(draw, max_groups=3):
    docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
    lines = []
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=3, unique=True)):
        groups = draw(st.lists(st.sampled_from(GROUPS), min_size=1, max_size=max_groups,
                               unique=True))
        for g in groups:
            for d in draw(st.lists(st.sampled_from(docs), min_size=1, max_size=len(docs),
                                   unique=True)):
                lines.append((q, g, d, draw(st.sampled_from([-1, 0, 0, 1, 2, 3]))))
    return lines


@SETTINGS
@given(lines=jg_lines(), run=runs(), max_docs=st.one_of(st.none(), st.integers(0, 5)),
       complete=st.booleans(), level=st.integers(0, 3), judged_only=st.booleans())
def test_jg_engine_matches_reference(lines, run, max_docs, complete, level, judged_only):
    kw = dict(max_docs=max_docs, complete=complete, relevance_level=level,
              judged_only=judged_only)
    want = ref.evaluate_jg(lines, run_lines(run), cutoffs=JG_CUTOFFS,
                           multipliers=JG_MULTIPLIERS, **kw)
    res = as_dict(irm.evaluate_jg, irm.JudgmentGroups.from_records(lines), as_run_file(run),
                  JG_MEASURES, **kw)
    got = {q: {n: v for n, v in d.items() if "avgjg" in n} for q, d in res.items()}
    assert got == want


@SETTINGS
@given(lines=jg_lines(max_groups=1), run=runs(), max_docs=st.one_of(st.none(), st.integers(0, 5)),
       level=st.integers(0, 3), judged_only=st.booleans())
def test_single_jg_equals_standard_measures(lines, run, max_docs, level, judged_only):
    """One judgment group: map_avgjg == map, P_avgjg_k == P_k, Rprec_mult_avgjg == Rprec_mult.

    Rprec_mult is compared only when it is registered (it lives on another branch).
    """
    qrels = {}
    for q, _, d, rel in lines:
        qrels.setdefault(q, {})[d] = rel
    kw = dict(relevance_level=level, judged_only=judged_only, max_docs=max_docs)
    standard = ["map", "P.1,2,3,5"]
    pairs = [("map_avgjg", "map")] + [(f"P_avgjg_{k}", f"P_{k}") for k in JG_CUTOFFS]
    if "Rprec_mult" in REGISTRY:
        standard.append("Rprec_mult.0.2,0.5,1.0,1.5,2.0")
        pairs += [(f"Rprec_mult_avgjg_{x:3.2f}", f"Rprec_mult_{x:3.2f}") for x in JG_MULTIPLIERS]
    got = as_dict(irm.evaluate_jg, irm.JudgmentGroups.from_records(lines), run, JG_MEASURES,
                  **kw)
    want = as_dict(irm.evaluate, qrels, run, standard, **kw)
    assert got.keys() == want.keys()
    for q in want:
        for mine, theirs in pairs:
            assert got[q][mine] == want[q][theirs], (q, mine)


@SETTINGS
@given(lines=jg_lines(), run=runs(), seed=st.integers(0, 2**32 - 1))
def test_jg_row_order_invariance_and_bounds(lines, run, seed):
    rng = random.Random(seed)
    shuffled = lines[:]
    rng.shuffle(shuffled)
    a = as_dict(irm.evaluate_jg, irm.JudgmentGroups.from_records(lines), run, JG_MEASURES)
    b = as_dict(irm.evaluate_jg, irm.JudgmentGroups.from_records(shuffled), run, JG_MEASURES)
    assert a == b
    for values in a.values():
        for name, v in values.items():
            if "avgjg" in name:
                assert 0.0 <= v <= 1.0


def test_prefs_from_dataframe_matches_records():
    lines = [("1", "u", "s", "a", 1.0), ("1", "u", "s", "b", 0.0)]
    df = pl.DataFrame(lines, schema=["query_id", "jg", "jsg", "doc_id", "rel_level"],
                      orient="row")
    run = {"1": {"b": 1.0, "a": 0.5}}
    assert engine_prefs(lines, run) == {
        q: {n: v for n, v in d.items() if n in PREF_MEASURES}
        for q, d in irm.evaluate_prefs(df, run, ["all_prefs"]).to_dict().items()}


@pytest.mark.parametrize("seed", range(3))
def test_larger_random_inputs_match_reference(seed):
    """Bigger judgment groups than hypothesis draws (dozens of docs, several JGs)."""
    rng = random.Random(seed)
    docs = [f"d{i:02d}" for i in range(40)]
    lines = []
    for q in ("1", "2"):
        for g in ("u", "v", "w"):
            if g == "w":  # PA mode from a hidden total order: consistent by construction
                order = rng.sample(docs, 12)
                for s in ("s1", "s2", "s3"):
                    chosen = sorted(rng.sample(range(12), 5))
                    for rank_in_order in chosen:
                        lines.append((q, g, s, order[rank_in_order], float(12 - rank_in_order)))
            else:
                for d in rng.sample(docs, 25):
                    lines.append((q, g, "s", d, float(rng.choice([0, 0, 0, 1, 2]))))
    run = {q: {d: float(rng.randint(0, 5)) for d in rng.sample(docs, 30)} for q in ("1", "2")}
    want = reference_prefs(lines, run, max_docs=25)
    got = engine_prefs(lines, run, max_docs=25)
    assert not isinstance(want, Exception)
    assert got == want
