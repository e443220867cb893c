"""Holes filled by a judge (irmetrics.judgment_formats.filled): the merged qrels, and each
column of evaluate_filled against its definition computed plainly (seeded random cases
with ties, graded and negative labels, queries only one side judged)."""

import random

import pytest

import irmetrics as irm
from irmetrics.cli import main
from irmetrics.exceptions import ParameterError
from irmetrics.judgment_formats import evaluate_filled, fill

MEASURES = ["map", "P@3", "R@5", "nDCG@4", "ndcg", "Rprec", "recip_rank", "bpref",
            "err_cut.3", "success.2"]
DEPTH = {"map": None, "P@3": 3, "R@5": 5, "nDCG@4": 4, "ndcg": None, "Rprec": None,
         "recip_rank": None, "bpref": None, "err_cut_3": 3, "success_2": 2}


def _case(rng):
    docs = [f"d{i}" for i in range(8)]
    human, machine, run = {}, {}, {}
    for q in ("q1", "q2", "q3"):
        h = {d: rng.choice([-1, 0, 1, 2]) for d in rng.sample(docs, rng.randint(0, 5))}
        m = {d: rng.choice([-1, 0, 1, 2]) for d in rng.sample(docs, rng.randint(0, 6))}
        if h or q == "q1":
            human[q] = h
        if m:
            machine[q] = m
        run[q] = {d: float(rng.randint(0, 3)) for d in rng.sample(docs, rng.randint(1, 8))}
    return human, machine, run


def _merged(human, machine):
    out = {}
    for q in set(human) | set(machine):
        h, m = human.get(q, {}), machine.get(q, {})
        labels = {d: v for d, v in h.items()}
        for d, v in m.items():
            if v >= 0 and h.get(d, -1) < 0:
                labels[d] = v
        out[q] = labels
    return out


def _share(human, machine, ranking, depth):
    """Machine-labelled / judged documents in the top ``depth`` (trec_eval's order)."""
    order = sorted(ranking, key=lambda d: (-ranking[d], [-ord(c) for c in d]))[:depth]
    merged = _merged({0: human}, {0: machine})[0]
    judged = [d for d in order if d in merged]
    by_machine = [d for d in judged if human.get(d, -1) < 0 and machine.get(d, -1) >= 0]
    return len(by_machine) / len(judged) if judged else 0.0


def test_fill_human_wins_negative_human_is_a_hole_negative_machine_fills_nothing():
    f = fill({"q": {"a": 1, "b": -1, "c": 0, "e": -1}}, {"q": {"a": 0, "b": 2, "c": 2,
                                                               "d": 1, "e": -1, "f": -1}})
    assert f.qrels.to_dict() == {"q": {"a": 1, "c": 0, "e": -1, "b": 2, "d": 1}}
    assert f.human.to_dict() == {"q": {"a": 1, "c": 0, "e": -1}}
    assert f.machine.to_dict() == {"q": {"b": 2, "d": 1}}


@pytest.mark.parametrize("seed", range(40))
def test_every_column_is_its_definition(seed):
    rng = random.Random(seed)
    human, machine, run = _case(rng)
    merged = _merged(human, machine)
    res = evaluate_filled(human, machine, run, MEASURES)
    filled = irm.evaluate(merged, run, MEASURES, unjudged="bounds").to_dict()
    alone = irm.evaluate(human, run, MEASURES).to_dict()
    got = res.to_dict()
    assert sorted(got) == sorted(q for q in merged if merged[q] and q in run)
    for q, row in got.items():
        for name, depth in DEPTH.items():
            for suffix in ("", "_low", "_high"):
                assert row[name + suffix] == filled[q][name + suffix]
            assert row[name + "_human"] == alone.get(q, {}).get(name, 0.0)
            share = _share(human.get(q, {}), machine.get(q, {}), run[q], depth or 10**9)
            assert row[name + "_machine"] == pytest.approx(share, abs=1e-12)


def test_machine_share_planted_bug_is_seen():
    """A share that counted every judged document (not only the judge's) would be 1."""
    res = evaluate_filled({"q": {"a": 1}}, {"q": {"x": 1}}, {"q": {"a": 2.0, "x": 1.0,
                                                                    "y": 0.5}}, ["P@1", "map"])
    assert res.to_dict()["q"]["P@1_machine"] == 0.0
    assert res.to_dict()["q"]["map_machine"] == 0.5
    assert res.aggregate()["map_human"] == 1.0


@pytest.mark.parametrize("option", [{"unjudged": "bounds"}, {"judged_only": True}])
def test_options_it_sets_itself_are_refused(option):
    with pytest.raises(ParameterError, match=f"`{next(iter(option))}` must be left out"):
        evaluate_filled({"q": {"a": 1}}, {}, {"q": {"a": 1.0}}, ["map"], **option)


def test_measure_without_bounds_is_refused():
    with pytest.raises(ParameterError, match="gm_bpref"):
        evaluate_filled({"q": {"a": 1}}, {}, {"q": {"a": 1.0}}, ["gm_bpref"])


def test_cli_fill_from(capsys):
    root = "fixtures/meta_evaluation/"
    args = ["eval", "--fill-from", root + "qrels.llm.txt", "-m", "map", "-m",
            "ndcg_cut.10", root + "qrels.human.txt", root + "dense.run"]
    assert main(args) == 0
    lines = dict(line.split("\tall\t") for line in capsys.readouterr().out.splitlines())
    res = evaluate_filled(root + "qrels.human.txt", root + "qrels.llm.txt",
                          root + "dense.run", ["map", "ndcg_cut.10"])
    assert {k.strip(): float(v) for k, v in lines.items()} == pytest.approx(
        {k: round(v, 4) for k, v in res.aggregate().items()}, abs=1e-12)
    assert res.aggregate()["map_machine"] > 0
    assert main(["eval", "--fill-from", root + "qrels.llm.txt", "-J", root + "qrels.human.txt",
                 root + "dense.run"]) == 1
    assert "--fill-from takes no -J" in capsys.readouterr().err


def test_the_docs_page_shows_real_output():
    doc = open("docs/incomplete_judgments.md", encoding="utf-8").read()
    root = "fixtures/meta_evaluation/"
    res = evaluate_filled(root + "qrels.human.txt", root + "qrels.llm.txt",
                          root + "dense.run", ["map", "nDCG@10"])
    for name, value in res.aggregate().items():
        assert f"'{name}': {round(value, 4)}" in doc
    f = fill(root + "qrels.human.txt", root + "qrels.llm.txt")
    assert f"# ({len(f.human)}, {len(f.machine)})" in doc
