"""Nugget and assignment files saved by a Windows editor (a UTF-8 BOM) read as without
one; a non-UTF-8 leaderboard file is a clear error (found by the review)."""

from __future__ import annotations

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
