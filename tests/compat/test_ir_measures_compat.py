"""The ir_measures drop-in's surface: measure objects, names, readers, evaluators."""

from __future__ import annotations

import pytest

from irmetrics.compat import ir_measures as ours
from irmetrics.exceptions import ParameterError, UnknownMeasureError

ir_measures = pytest.importorskip("ir_measures", reason="ir-measures 0.4.3 is the oracle")

QRELS = {"1": {"a": 2, "b": 0}, "2": {"c": 1}, "3": {"d": 1}}
RUN = {"1": {"a": 0.5, "b": 0.9}, "2": {"c": 0.1, "e": 0.3}, "4": {"a": 1.0}}

SPELLINGS = ["nDCG@10", "AP(rel=2)", "P(rel=2)@5", "ERR@20", "RBP(p=0.5)", "Judged@10",
             "alpha_nDCG(alpha=0.25)@20", "nDCG(dcg='exp-log2')@5", "SetF(beta=0.5)",
             "IPrec@0.3", "NumRet(rel=1)", "SetP(relative=True)", "Compat(p=0.8)",
             "nDCG(gains={0:0,1:2})", "RR(judged_only=True)@10", "NERR10(p=0.7)"]


def test_every_registry_measure_prints_like_ir_measures():
    for name, theirs in ir_measures.measures.registry.items():
        assert str(getattr(ours, name)) == str(theirs), name


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_parsed_measures_print_compare_and_hash_like_ir_measures(spelling):
    mine, theirs = ours.parse_measure(spelling), ir_measures.parse_measure(spelling)
    assert str(mine) == str(theirs) == repr(mine)
    assert mine == theirs and mine == ours.parse_measure(str(mine))
    assert hash(mine) == hash(ours.parse_measure(spelling))
    assert ours.parse_measure(theirs) == mine


def test_measure_objects_build_like_ir_measures():
    assert str(ours.nDCG @ 10) == "nDCG@10" and str(ours.AP(rel=2)) == "AP(rel=2)"
    assert str(ours.P(rel=2) @ 5) == "P(rel=2)@5" and ours.P(rel=1) == ours.P
    assert ours.IPrec @ 0.2 == ir_measures.IPrec @ 0.2
    assert ours.nDCG["dcg"] == "log2" and (ours.nDCG @ 5)["cutoff"] == 5
    assert {ours.nDCG @ 10: 1}[ours.parse_measure("nDCG@10")] == 1


@pytest.mark.parametrize("spec", ["P.5,10", "map", "ndcg_cut.3", "recip_rank", "set_F.0.5",
                                  "iprec_at_recall.0.1,0.5", "num_rel_ret", "set_relative_P",
                                  "success", "official"])
def test_parse_trec_measure_equals_ir_measures(spec):
    assert [str(m) for m in ours.parse_trec_measure(spec)] == \
        [str(m) for m in ir_measures.parse_trec_measure(spec)]


def test_readers_yield_ir_measures_tuples(tmp_path):
    qrels_text = "1 0 a 2\n1 0 b 0\n2 0 c 1\n"
    run_text = "1 Q0 a 1 0.5 r\n1 Q0 b 2 0.25 r\n"
    assert list(ours.read_trec_qrels(qrels_text)) == list(ir_measures.read_trec_qrels(qrels_text))
    assert list(ours.read_trec_run(run_text)) == list(ir_measures.read_trec_run(run_text))
    path = tmp_path / "run"
    path.write_text(run_text)
    assert list(ours.read_trec_run(str(path))) == list(ir_measures.read_trec_run(str(path)))
    with open(path) as f:
        assert [r.score for r in ours.read_trec_run(f)] == [0.5, 0.25]
    assert ours.read_trec_qrels(qrels_text).__next__()._fields == \
        ("query_id", "doc_id", "relevance", "iteration")


def test_iter_calc_yields_every_qrels_query_in_ir_measures_order():
    metrics = list(ours.iter_calc([ours.P @ 1, ours.RR], QRELS, RUN))
    assert metrics[0]._fields == ("query_id", "measure", "value")
    assert metrics[-1].value == 0.0  # query 3 has no ranking: ir_measures' default
    expected = [(m.query_id, str(m.measure), m.value)
                for m in ir_measures.iter_calc([ir_measures.P @ 1, ir_measures.RR], QRELS, RUN)]
    assert [(m.query_id, str(m.measure), m.value) for m in metrics] == expected


def test_evaluator_reuses_qrels_across_runs():
    ev = ours.evaluator([ours.nDCG @ 2, ours.Judged @ 2, ours.NumQ], QRELS)
    ref = ir_measures.evaluator([ir_measures.nDCG @ 2, ir_measures.Judged @ 2,
                                 ir_measures.NumQ], QRELS)
    for run in (RUN, {"1": {"b": 1.0}}, {"2": {"c": 1.0, "a": 2.0}}):
        got = {str(k): v for k, v in ev.calc_aggregate(run).items()}
        assert got == pytest.approx({str(k): v for k, v in ref.calc_aggregate(run).items()})
    agg, per_query = ev.calc(RUN)
    assert len(per_query) == 9 and set(map(str, agg)) == {"nDCG@2", "Judged@2", "NumQ"}


def test_bad_input_is_a_one_line_error():
    with pytest.raises(UnknownMeasureError, match="did you mean 'nDCG'"):
        ours.parse_measure("nDGC@10")
    with pytest.raises(ParameterError, match="nDCG's parameters"):
        ours.nDCG(foo=1)
    with pytest.raises(ParameterError, match="measures"):
        ours.calc_aggregate(ours.nDCG @ 10, QRELS, RUN)
    with pytest.raises(ParameterError, match="query_id, doc_id and score"):
        ours.calc_aggregate([ours.P @ 1], QRELS, [("1", "a", 1.0)])


def test_every_provider_plan_reaches_its_providers_declaration():
    # A provider view computes with the declaration that follows its tool, never with a
    # same-named irmetrics measure of another definition (RBP is cwl_eval's, not rbp).
    from irmetrics.measures.parse import parse_measures
    examples = {"pytrec_eval": ["P@5", "RR", "AP@3", "nDCG@5", "NumRel(rel=2)", "IPrec@0.25"],
                "gdeval": ["ERR@5", "nDCG@5"], "judged": ["Judged@3", "Judged"],
                "msmarco": ["RR@10", "RR"], "cwl_eval": ["P@5", "RR", "AP", "RBP(rel=1)",
                                                        "SDCG(max_rel=3)@5"],
                "pyndeval": ["alpha_nDCG@5"], "ranx": ["nDCG(dcg='exp-log2')@5"]}
    for name, spellings in examples.items():
        provider = getattr(ours, name)
        for spelling in spellings:
            (req,) = parse_measures([provider.plan(ours.parse_measure(spelling)).native])
            tool = "pytrec_eval" if req.measure.pytrec_eval \
                else req.measure.extra["ir_measures_provider"]
            assert tool == name, (name, spelling, req.measure.name)


def test_rbp_is_cwl_evals_and_needs_rel_as_in_ir_measures():
    # ir_measures takes RBP from cwl_eval (rel required); irmetrics' rbp is trec_eval 10's.
    with pytest.raises(ParameterError, match=r"RBP is computed by cwl_eval \(no cutoff, rel"
                                             r" required\)"):
        ours.calc_aggregate([ours.RBP(p=0.8)], QRELS, RUN)
    got = ours.calc_aggregate([ours.RBP(rel=1, p=0.5)], {"q": {"a": 1}}, {"q": {"a": 1.0}})
    assert got == {ours.RBP(rel=1, p=0.5): pytest.approx(0.5 / (1 - 0.5 ** 1000) * 1.0)}


def test_trec_file_paths_are_read_by_irmetrics(tmp_path):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items()
                                  for d, r in docs.items()))
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in RUN.items()
                                for d, s in docs.items()))
    measures = [ours.nDCG @ 10, ours.RR @ 10, ours.Judged @ 1, ours.ERR @ 5]
    assert ours.calc_aggregate(measures, str(qrels_path), run_path) == \
        ours.calc_aggregate(measures, QRELS, RUN)
