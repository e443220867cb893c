"""Preference measures on hand-computed toy tables (docs/reference/trec_eval.md §8.3).

Docid ranks are worked out in each docstring: retrieved judged docs get 0..NJR-1 in
rank order, the others NJR.. in doc id order; a preference (a, b) is fulfilled when
a < b.
"""

import numpy as np
import polars as pl
import pytest

import irmetrics as irm
from irmetrics.engine.prefs import ranked_run
from irmetrics.exceptions import DuplicateEntryError, InputFormatError, ParameterError
from irmetrics.measures import NICKNAMES, REGISTRY
from irmetrics.measures.registry import LONG, MEAN, SUM


def prefs(*lines, jg="u", jsg="s", query="q"):
    """Lines ``(doc, level)`` of one judgment sub-group, or full 5-tuples."""
    rows = [line if len(line) == 5 else (query, jg, jsg, *line) for line in lines]
    return irm.Prefs.from_records(rows)


def values(p, run, measures=("all_prefs",), **kw):
    res = irm.evaluate_prefs(p, run, list(measures), **kw)
    return {name: v for name, v in res.to_dict()[res.query_ids[0]].items()}


def test_ec_mode_counts_and_every_measure():
    """a:2 > {b, c}:1 > d:0; ranking c, a, x (unjudged), d; b not retrieved.

    docids c=0 a=1 d=2 (NJR=3), b=3. Preferences: a>c (1,0) possible_ret, a>b (1,3)
    fulfilled_imp, a>d (1,2) fulfilled_ret, c>d (0,2) fulfilled_ret, b>d (3,2)
    possible_imp. R=3 (a, b, c), N=1, num_rel_ret=2, num_nonrel_ret=1.
    """
    p = prefs(("a", 2), ("b", 1), ("c", 1), ("d", 0))
    v = values(p, {"q": {"c": 4, "a": 3, "x": 2, "d": 1}})
    assert v["prefs_num_prefs_poss"] == 5
    assert v["prefs_num_prefs_ful"] == 3
    assert v["prefs_num_prefs_ful_ret"] == 2
    assert v["prefs_simp"] == pytest.approx(3 / 5)
    assert v["prefs_simp_ret"] == pytest.approx(2 / 3)
    assert v["prefs_simp_imp"] == pytest.approx(3 / 5)
    assert v["prefs_avgjg"] == pytest.approx(3 / 5)
    assert v["prefs_avgjg_ret"] == pytest.approx(2 / 3)
    assert v["prefs_avgjg_imp"] == pytest.approx(3 / 5)
    # pairs (0,1): 0, (0,2): 1, (1,2): 1 both retrieved; (1,3): 1, (2,3): 0 one retrieved
    assert v["prefs_pair_ret"] == pytest.approx(2 / 3)
    assert v["prefs_pair_imp"] == pytest.approx(3 / 5)
    assert v["prefs_pair"] == pytest.approx(3 / 5)
    # R >= N: (ful + num_rel_ret (R-N)) / (poss + num_rel (R-N)) = (3+4)/(5+6)
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx(7 / 11)
    # R' = 2 >= N' = 1: (ful_ret + 2*1) / (poss_ret + num_rel*1) = 4 / 6
    assert v["prefs_avgjg_Rnonrel_ret"] == pytest.approx(4 / 6)


def test_pa_mode_transitive_closure():
    """s1: d1 3 > d2 2 > d3 1; s2: d2 5 > d4 4. Closure adds d1 > d4 (5 preferences).

    Ranking d1, d4, d3 (d2 not retrieved): docids d1=0 d4=1 d3=2 (NJR=3), d2=3.
    d1>d2 (0,3) ful_imp; d1>d3 (0,2) ful_ret; d2>d3 (3,2) poss_imp; d2>d4 (3,1)
    poss_imp; d1>d4 (0,1) ful_ret (from the closure). Last-seen levels all > 0:
    R=4, num_rel_ret=3, N=0.
    """
    p = prefs(("d1", 3), ("d2", 2), ("d3", 1), jsg="s1")
    p = irm.Prefs.from_df(pl.concat([p.df, prefs(("d2", 5), ("d4", 4), jsg="s2").df]))
    v = values(p, {"q": {"d1": 4, "d4": 3, "d3": 2}})
    assert v["prefs_num_prefs_poss"] == 5
    assert v["prefs_num_prefs_ful"] == 3
    assert v["prefs_num_prefs_ful_ret"] == 2
    assert v["prefs_simp"] == pytest.approx(3 / 5)
    assert v["prefs_simp_ret"] == pytest.approx(1.0)
    assert v["prefs_simp_imp"] == pytest.approx(3 / 5)
    assert v["prefs_pair_ret"] == pytest.approx(1.0)  # (0,1), (0,2); d4 vs d3 unrelated
    assert v["prefs_pair"] == pytest.approx(3 / 5)  # + (0,3): 1, (1,3): 0, (2,3): 0
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx((3 + 3 * 4) / (5 + 4 * 4))
    assert v["prefs_avgjg_Rnonrel_ret"] == pytest.approx((2 + 3 * 3) / (2 + 4 * 3))


def test_pa_mode_duplicate_preference_counted_once():
    """d1 > d2 stated in two sub-groups is one preference in PA mode."""
    p = prefs(("q", "u", "s1", "d1", 2), ("q", "u", "s1", "d2", 1),
              ("q", "u", "s2", "d1", 2), ("q", "u", "s2", "d2", 1))
    assert values(p, {"q": {"d1": 1}})["prefs_num_prefs_poss"] == 1


def test_ec_mode_repeated_line_counts_twice():
    p = prefs(("a", 1), ("a", 1), ("b", 0))
    v = values(p, {"q": {"b": 2, "a": 1}})
    assert v["prefs_num_prefs_poss"] == 2
    assert v["prefs_simp"] == 0.0


def test_prefs_pair_across_conflicting_judgment_groups():
    """u1: a > b, u2: b > a, u3: a > b > c. Ranking a, b (c not retrieved).

    C[a][b] = 2, C[b][a] = 1: pair (a, b) scores 2/3; (a, c) and (b, c) score 1.
    """
    p = irm.Prefs.from_records([
        ("q", "u1", "s", "a", 1), ("q", "u1", "s", "b", 0),
        ("q", "u2", "s", "b", 1), ("q", "u2", "s", "a", 0),
        ("q", "u3", "s", "a", 2), ("q", "u3", "s", "b", 1), ("q", "u3", "s", "c", 0)])
    v = values(p, {"q": {"a": 2, "b": 1}})
    assert v["prefs_pair"] == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert v["prefs_pair_ret"] == pytest.approx(2 / 3)
    assert v["prefs_pair_imp"] == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert v["prefs_simp"] == pytest.approx(4 / 5)
    assert v["prefs_avgjg"] == pytest.approx((1 + 0 + 1) / 3)


def test_rnonrel_ec_recount_pairs_lowest_class_with_itself():
    """a:1 and n1, n2, n3 at 0; ranking a, n2, n1 (n3 not retrieved).

    docids a=0 n2=1 n1=2 (NJR=3), n3=3. R=1 < N=3: the new non-relevant class is the
    first R=1 line of the level-0 class, [1]. Pairs with it: a (0,1) fulfilled, and
    the quirk pairs the level-0 class itself with it: (1,1), (2,1), (3,1) possible.
    So 1 / 4. Retrieved only: R'=1 < N'=2, new class [1]; (0,1) fulfilled, (1,1),
    (2,1) possible: 1 / 3.
    """
    p = prefs(("a", 1), ("n1", 0), ("n2", 0), ("n3", 0))
    v = values(p, {"q": {"a": 5, "n2": 4, "n1": 3}})
    assert v["prefs_simp"] == 1.0
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx(1 / 4)
    assert v["prefs_avgjg_Rnonrel_ret"] == pytest.approx(1 / 3)


def test_rnonrel_pa_recount_keeps_num_rel_nonrelevant():
    """PA: s1 a:2 > b:1 > n1, n2 (0); s2 b:1 > n3, n4 (0). R=2 (a, b), N=4.

    Ranking n3, a, n1, n2: docids n3=0 a=1 n1=2 n2=3 (NJR=4), b=4, n4=5.
    Full recount: the zero-level docs in docid order are n3, n1, n2, n4; docs after the
    R-th (n2, n4) are dropped. Kept preferences: a>b (1,4) ful, a>n1 (1,2) ful, b>n1
    poss, b>n3 poss, a>n3 (1,0) poss: 2 / 5.
    Retrieved recount (num_rel_ret=1 < num_nonrel_ret=3): trec_eval still keeps
    num_rel=2 zero docs (n3, n1), so a>n1 ful and a>n3 poss: 1 / 2 (keeping
    num_rel_ret=1 would give 0).
    """
    p = irm.Prefs.from_records([
        ("q", "u", "s1", "a", 2), ("q", "u", "s1", "b", 1), ("q", "u", "s1", "n1", 0),
        ("q", "u", "s1", "n2", 0), ("q", "u", "s2", "b", 1), ("q", "u", "s2", "n3", 0),
        ("q", "u", "s2", "n4", 0)])
    v = values(p, {"q": {"n3": 7, "a": 6, "n1": 3, "n2": 2}})
    assert v["prefs_num_prefs_poss"] == 9
    assert v["prefs_simp"] == pytest.approx(4 / 9)
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx(2 / 5)
    assert v["prefs_avgjg_Rnonrel_ret"] == pytest.approx(1 / 2)


def test_rnonrel_zero_possible_in_one_jg_zeroes_the_query():
    """u2 (PA mode, c:1 and d:0 in separate sub-groups) has R = N = 1 and no preference.

    Its Rnonrel ratio is 0/0 in trec_eval, which poisons the JG sum: the query gets 0.
    """
    p = irm.Prefs.from_records([("q", "u1", "s", "a", 1), ("q", "u1", "s", "b", 0),
                                ("q", "u2", "s1", "c", 1), ("q", "u2", "s2", "d", 0)])
    v = values(p, {"q": {"a": 2, "b": 1}})
    assert v["prefs_avgjg"] == pytest.approx(1 / 2)  # u2 has no preference: skipped
    assert v["prefs_avgjg_Rnonrel"] == 0.0
    assert v["prefs_avgjg_Rnonrel_ret"] == 0.0


def test_ties_broken_by_doc_id_ascending():
    run = {"q": {"a": 1.0, "b": 1.0}}
    assert values(prefs(("a", 1), ("b", 0)), run)["prefs_simp"] == 1.0
    assert values(prefs(("b", 1), ("a", 0)), run)["prefs_simp"] == 0.0
    # -0.0 and 0.0 tie as well
    assert values(prefs(("a", 1), ("b", 0)), {"q": {"a": -0.0, "b": 0.0}})["prefs_simp"] == 1.0


def test_max_docs_truncates_before_docid_ranks():
    """-M1 on ranking b, a: only b is retrieved; a > b becomes implied-possible."""
    p = prefs(("a", 1), ("b", 0))
    v = values(p, {"q": {"b": 2, "a": 1}}, max_docs=1)
    assert v["prefs_num_prefs_ful"] == 0
    assert v["prefs_simp_imp"] == 0.0
    assert values(p, {"q": {"b": 2, "a": 1}}, max_docs=0)["prefs_simp_imp"] == 0.0


def test_queries_and_complete():
    p = irm.Prefs.from_records([("2", "u", "s", "a", 1), ("2", "u", "s", "b", 0),
                                ("10", "u", "s", "a", 1), ("10", "u", "s", "b", 0)])
    run = {"2": {"a": 1.0}, "99": {"a": 1.0}}
    res = irm.evaluate_prefs(p, run, ["num_q", "prefs_simp", "prefs_num_prefs_poss"])
    assert list(res.query_ids) == ["2"]
    res = irm.evaluate_prefs(p, run, ["num_q", "prefs_simp", "prefs_num_prefs_poss"],
                             complete=True)
    assert list(res.query_ids) == ["10", "2"]  # byte order
    assert res.aggregate() == {"num_q": 2, "prefs_simp": 0.5, "prefs_num_prefs_poss": 2}
    # the placeholder ranking retrieves nothing judged: the preference never occurs
    assert res.to_dict()["10"]["prefs_simp"] == 0.0


def test_output_names_order_and_aggregation():
    p = prefs(("a", 1), ("b", 0))
    res = irm.evaluate_prefs(p, {"q": {"a": 1}}, ["prefs_avgjg", "all_prefs"])
    assert res.names == ["runid", "num_q"] + NICKNAMES["all_prefs"][2:]
    assert NICKNAMES["all_prefs"][2:] == [
        "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
        "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
        "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
        "prefs_pair_imp", "prefs_avgjg_imp"]
    assert NICKNAMES["prefs"] == ["runid", "num_q", "prefs_num_prefs_poss",
                                  "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                                  "prefs_simp", "prefs_pair", "prefs_avgjg"]
    for name in NICKNAMES["all_prefs"][2:]:
        m = REGISTRY[name]
        assert not m.pytrec_eval
        assert (m.printed, m.summary) == ((LONG, SUM) if "num_prefs" in name else ("double", MEAN))
    agg = res.aggregate()
    assert agg["prefs_num_prefs_poss"] == 1 and isinstance(agg["prefs_num_prefs_poss"], int)
    assert agg["runid"] == "irmetrics"


def test_errors_cycle_zero_nonzero_two_levels():
    run = {"q": {"a": 1.0}}
    cycle = irm.Prefs.from_records([("q", "u", "s1", "a", 2), ("q", "u", "s1", "b", 1),
                                    ("q", "u", "s2", "b", 2), ("q", "u", "s2", "a", 1)])
    with pytest.raises(InputFormatError, match="inconsistent preferences"):
        irm.evaluate_prefs(cycle, run, ["prefs_simp"])
    long_cycle = irm.Prefs.from_records([
        ("q", "u", "s1", "a", 2), ("q", "u", "s1", "b", 1), ("q", "u", "s2", "b", 2),
        ("q", "u", "s2", "c", 1), ("q", "u", "s3", "c", 2), ("q", "u", "s3", "a", 1)])
    with pytest.raises(InputFormatError, match="Pref inconsistency"):
        irm.evaluate_prefs(long_cycle, run, ["prefs_simp"])
    zero = irm.Prefs.from_records([("q", "u", "s1", "c", 1), ("q", "u", "s1", "a", 0),
                                   ("q", "u", "s2", "a", 1), ("q", "u", "s2", "b", 0)])
    with pytest.raises(InputFormatError, match="both 0 and non-0") as err:
        irm.evaluate_prefs(zero, run, ["prefs_simp"])
    assert "'a'" in str(err.value) and "'q'" in str(err.value)
    two_levels = prefs(("a", 1), ("a", 2), ("b", 0))
    with pytest.raises(InputFormatError, match="different rel_level"):
        irm.evaluate_prefs(two_levels, run, ["prefs_num_prefs_poss"])
    # Same judgments in separate judgment groups are not inconsistent.
    ok = irm.Prefs.from_records([("q", "u1", "s", "a", 2), ("q", "u1", "s", "b", 1),
                                 ("q", "u2", "s", "b", 2), ("q", "u2", "s", "a", 1)])
    assert values(ok, run)["prefs_simp"] == 0.5
    # num_q and runid never build the preferences, like trec_eval.
    assert irm.evaluate_prefs(cycle, run, ["num_q"]).aggregate() == {"num_q": 1}


def test_zero_nonzero_check_compares_with_the_previous_line_only():
    """trec_eval checks each line against the level it saw last: 0, then -1, then 1 passes."""
    p = irm.Prefs.from_records([
        ("q", "u", "s1", "c", 1), ("q", "u", "s1", "a", 0),
        ("q", "u", "s2", "a", -1), ("q", "u", "s2", "d", -2),
        ("q", "u", "s3", "a", 1), ("q", "u", "s3", "b", 0)])
    v = values(p, {"q": {"a": 3, "b": 2, "c": 1, "d": 0}})
    # c>a, a>d, a>b and by closure c>d, c>b: 5 preferences; a's last level is 1.
    assert v["prefs_num_prefs_poss"] == 5


def test_rnonrel_undefined_case_is_an_error():
    """Levels 1 (x3), 0 (x3) and -1 (x1): R=3 < N=4 and the lowest class has 1 line."""
    p = prefs(("a", 1), ("b", 1), ("c", 1), ("n1", 0), ("n2", 0), ("n3", 0), ("m", -1))
    run = {"q": {"a": 3, "b": 2, "n1": 1}}
    assert values(p, run, ["prefs_simp"])["prefs_simp"] > 0
    with pytest.raises(InputFormatError, match="prefs_avgjg_Rnonrel is undefined"):
        irm.evaluate_prefs(p, run, ["prefs_avgjg_Rnonrel"])


def test_format_mismatch_is_an_error():
    p = prefs(("a", 1), ("b", 0))
    with pytest.raises(ParameterError, match="format mismatch"):
        irm.evaluate_prefs(p, {"q": {"a": 1}}, ["map"])
    with pytest.raises(ParameterError, match="map_avgjg"):
        irm.evaluate_prefs(p, {"q": {"a": 1}}, ["qrels_jg"])
    with pytest.raises(ParameterError, match="prefs_simp"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1}}, ["all_prefs"])
    with pytest.raises(ParameterError, match="map_avgjg"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1}}, ["map_avgjg"])
    # standard evaluation is unchanged
    assert irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1}}, ["map"]).aggregate()["map"] == 1.0


def test_duplicate_run_docs_checked_within_the_kept_ranking():
    run = pl.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "a"],
                        "score": [3.0, 2.0, 1.0]})
    ids, bogus = np.array(["q"], dtype=object), np.array([False])
    with pytest.raises(DuplicateEntryError, match="duplicate docs"):
        ranked_run(run, ids, bogus, doc_id_descending=False, max_docs=None)
    kept = ranked_run(run, ids, bogus, doc_id_descending=False, max_docs=2)
    assert kept["doc_id"].to_list() == ["a", "b"]


def test_inputs_are_not_modified():
    p = prefs(("a", 1), ("b", 0))
    before = p.df.clone()
    run = {"q": {"b": 1.0, "a": -0.0}}
    irm.evaluate_prefs(p, run, ["all_prefs"])
    assert p.df.equals(before) and run == {"q": {"b": 1.0, "a": -0.0}}
