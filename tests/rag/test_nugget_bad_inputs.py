"""Nugget and assignment files saved by a Windows editor (a UTF-8 BOM) read as without
one; a non-UTF-8 leaderboard file is a clear error (found by the review)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from irmetrics.cli import main
from irmetrics.exceptions import InputFormatError
from irmetrics.rag.formats import read_leaderboard

RAG = Path(__file__).resolve().parents[2] / "fixtures" / "rag"


@pytest.mark.parametrize("which", ["nuggets", "assignments"])
def test_a_bom_is_not_content(tmp_path, capsys, which):
    nuggets, assignments = RAG / "nuggets.jsonl", RAG / "assignments.human.jsonl"
    args = ["eval", "-R", "nuggets", "-m", "all_score", "-m", "vital_score"]
    assert main(args + [str(nuggets), str(assignments)]) == 0
    expected = capsys.readouterr().out
    src = nuggets if which == "nuggets" else assignments
    bom = tmp_path / src.name
    bom.write_bytes(b"\xef\xbb\xbf" + src.read_bytes())
    files = [bom, assignments] if which == "nuggets" else [nuggets, bom]
    assert main(args + [str(f) for f in files]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out == expected


def test_a_latin1_leaderboard_is_a_clear_error(tmp_path):
    bad = tmp_path / "lb.tot"
    bad.write_bytes("run\xe9 all_score 1 0.5\n".encode("latin-1"))
    with pytest.raises(InputFormatError, match="lb.tot: not UTF-8 text"):
        read_leaderboard(bad)


def test_compare_nuggets_names_an_unknown_baseline(capsys):
    # it was an internal error (the runs of an assignment file have no path of their own)
    args = ["compare", "--nuggets", str(RAG / "nuggets.jsonl"), "-m", "all_score",
            "--baseline"]
    assert main([*args, "nosuch", str(RAG / "assignments.human.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert "--baseline 'nosuch' is not one of the runs ('bm25-gen', 'dense-gen'," in err
    assert main([*args, "dense-gen", str(RAG / "assignments.human.jsonl")]) == 0
    assert "against baseline 'dense-gen'" in capsys.readouterr().out


def _first_answer(tmp_path, edit) -> Path:
    record = json.loads((RAG / "assignments.human.jsonl").read_text().splitlines()[0])
    edit(record)
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def _eval_error(capsys, assignments) -> str:
    assert main(["eval", "-R", "nuggets", "-m", "all_score", str(RAG / "nuggets.jsonl"),
                 str(assignments)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err
    return err


def test_an_answer_that_leaves_nuggets_out_is_refused(tmp_path, capsys):
    # scored over the 2 assessed nuggets it read (0.5 + 1) / 2 = 0.75 in silence; over
    # the topic's 6 it is (0.5 + 5) / 6 = 0.9167
    path = _first_answer(tmp_path, lambda r: r.update(nuggets=r["nuggets"][:2]))
    err = _eval_error(capsys, path)
    assert "a.jsonl:1: the answer of run 'bm25-gen' leaves out 4 of the topic's nuggets" in err
    assert "(query_id '2024-1001')" in err
    full = _first_answer(tmp_path, lambda r: None)
    assert main(["eval", "-R", "nuggets", "-m", "all_score", str(RAG / "nuggets.jsonl"),
                 str(full)]) == 0
    assert capsys.readouterr().out.split()[-1] == f"{(0.5 + 5) / 6:.4f}"


def test_an_importance_other_than_the_nugget_files_is_refused(tmp_path, capsys):
    path = _first_answer(tmp_path, lambda r: r["nuggets"][0].update(importance="okay"))
    err = _eval_error(capsys, path)
    assert ("a.jsonl:1: nugget 0 of run 'bm25-gen' ('fact 1 of topic 2024-1001') is 'okay'"
            " here but 'vital' in the nugget file") in err


def test_no_measure_is_refused_as_evaluate_refuses_it():
    # an empty Results came back in silence
    import irmetrics as irm
    from irmetrics import rag
    from irmetrics.exceptions import ParameterError
    nuggets, assignments = RAG / "nuggets.jsonl", RAG / "assignments.human.jsonl"
    with pytest.raises(ParameterError, match="`measures` must be at least one measure name"):
        irm.evaluate_nuggets(nuggets, assignments, [], run_id="bm25-gen")
    with pytest.raises(ParameterError, match="`measures` must be at least one measure name"):
        rag.evaluate_nugget_runs(nuggets, assignments, [])
