"""Label distribution files the review broke: an empty file (an internal error), a BOM
(it joined the first query id, then a wrong "must sum to 1"), a repeated line (the
error named the first line, not the repeat), non-UTF-8 bytes; and a hand-computed
expected value."""

from __future__ import annotations

from pathlib import Path

import pytest

from irmetrics.cli import main
from irmetrics.exceptions import InputFormatError
from irmetrics.judgment_formats import as_label_distribution, evaluate_uncertain

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "meta_evaluation"
HUMAN = str(FIXTURES / "qrels.human.txt")
LABELS = FIXTURES / "labels.llm.dist.txt"
DENSE = str(FIXTURES / "dense.run")
ARGS = ["eval", "--label-samples", "20", "-m", "map", "--label-distributions"]


def _one_line_error(capsys, labels) -> str:
    assert main([*ARGS, str(labels), HUMAN, DENSE]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err
    return err


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_an_empty_file_is_a_clear_error(tmp_path, capsys, text):
    empty = tmp_path / "e.dist"
    empty.write_text(text)
    assert f"{empty}: no label distributions" in _one_line_error(capsys, empty)


def test_an_empty_mapping_is_a_clear_error():
    with pytest.raises(InputFormatError, match="no label distributions"):
        evaluate_uncertain({"q": {"d1": 1}}, {}, {"q": {"d1": 1.0}}, ["map"], samples=4)


def test_a_bom_is_not_part_of_the_first_query_id(tmp_path, capsys):
    assert main([*ARGS, str(LABELS), HUMAN, DENSE]) == 0
    expected = capsys.readouterr().out
    bom = tmp_path / "bom.dist"
    bom.write_bytes(b"\xef\xbb\xbf" + LABELS.read_bytes())
    assert main([*ARGS, str(bom), HUMAN, DENSE]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out == expected


def test_a_repeated_line_is_named_where_it_repeats(tmp_path, capsys):
    text = LABELS.read_text()
    repeated = tmp_path / "dup.dist"
    repeated.write_text(text + text.splitlines()[0] + "\n")
    n = len(text.splitlines()) + 1
    assert f"dup.dist:{n}: `label` must appear once" in _one_line_error(capsys, repeated)


def test_non_utf8_bytes_are_a_clear_error(tmp_path, capsys):
    latin = tmp_path / "l.dist"
    latin.write_bytes("1001 0 doc\xe9 1 1.0\n".encode("latin-1"))
    assert "l.dist: not UTF-8 text" in _one_line_error(capsys, latin)


def test_expected_values_by_hand():
    # d3 relevant with p = 1/2: AP is (1 + 2/3) / 2 if it is, else 1; P@3 (1 + 1/2) / 3
    ex = evaluate_uncertain({"q": {"d1": 1, "d2": 0}}, {"q": {"d3": {0: 0.5, 1: 0.5}}},
                            {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}, ["map", "P.3"],
                            samples=4000)
    values = ex.results.to_dict()["q"]
    assert values["P_3"] == pytest.approx(0.5, abs=1e-12)
    assert values["map"] == pytest.approx((5 / 6 + 1) / 2, abs=4 * values["map_se"])
    assert as_label_distribution({"q": {"d3": {0: 0.5, 1: 0.5}}}).height == 2


def test_counts_and_geometric_means_get_no_interval_of_the_mean(capsys):
    # num_rel_ret's summary is a sum, gm_map's a geometric mean: the mean's standard
    # error and interval printed beside them (num_q 30 with [1, 1]) were another statistic
    assert main(["eval", "--label-samples", "20", "-m", "num_q", "-m", "num_rel_ret",
                 "-m", "gm_map", "-m", "map", "--label-distributions", str(LABELS), HUMAN,
                 DENSE]) == 0
    names = [line.split("\t")[0].strip() for line in capsys.readouterr().out.splitlines()]
    assert names == ["num_q", "num_rel_ret", "map", "map_se", "map_ci_low", "map_ci_high",
                     "gm_map"]
