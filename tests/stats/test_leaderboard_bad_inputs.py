"""Malformed leaderboard inputs found by the review (a folder given as a file, a task
given two types, a row without a type, a BOM): each a one-line InputFormatError naming
the file, never a folder read as one table or a last-one-wins type."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from irmetrics import leaderboards as lb
from irmetrics.cli import main
from irmetrics.exceptions import InputFormatError

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "fixtures" / "leaderboards" / "benchmark.csv"
TYPES = ROOT / "fixtures" / "leaderboards" / "task_types.csv"


def _err(capsys, args) -> str:
    assert main(["leaderboard", "--summary", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


def test_a_folder_of_csv_files_is_not_one_benchmark(tmp_path, capsys):
    # polars read the folder as the concatenation of its files (a duplicate error at
    # best, a silently merged benchmark at worst)
    shutil.copy(BENCH, tmp_path / "a.csv")
    with pytest.raises(InputFormatError, match="is a directory"):
        lb.from_long_table(tmp_path)
    assert "is a directory" in _err(capsys, [str(tmp_path)])


def test_a_folder_as_task_types_is_refused(tmp_path, capsys):
    shutil.copy(TYPES, tmp_path / "types.csv")
    err = _err(capsys, ["--task-types", str(tmp_path), str(BENCH)])
    assert f"{tmp_path}: is a directory" in err


def test_a_task_with_two_types_is_refused(tmp_path, capsys):
    bad = tmp_path / "types.csv"
    bad.write_text(TYPES.read_text() + "t1,STS\n")
    err = _err(capsys, ["--task-types", str(bad), str(BENCH)])
    assert "task 't1' has two types, 'Retrieval' and 'STS'" in err


def test_a_row_without_a_type_is_refused(tmp_path, capsys):
    bad = tmp_path / "types.csv"
    bad.write_text(TYPES.read_text().replace("t1,Retrieval", "t1,"))
    assert "every row needs a task and a type" in _err(capsys, ["--task-types", str(bad),
                                                                 str(BENCH)])


def test_a_bom_in_json_task_types_is_not_content(tmp_path, capsys):
    types = dict(line.split(",") for line in TYPES.read_text().split()[1:])
    plain, bom = tmp_path / "t.json", tmp_path / "bom.json"
    text = "{" + ", ".join(f'"{k}": "{v}"' for k, v in types.items()) + "}"
    plain.write_text(text, encoding="utf-8")
    bom.write_text(text, encoding="utf-8-sig")
    assert main(["leaderboard", "--summary", "--task-types", str(plain), str(BENCH)]) == 0
    expected = capsys.readouterr().out
    assert main(["leaderboard", "--summary", "--task-types", str(bom), str(BENCH)]) == 0
    assert capsys.readouterr().out == expected


@pytest.mark.parametrize("value", ["inf", "-inf"])
def test_an_infinite_score_is_refused_with_its_line(tmp_path, capsys, value):
    # it was taken for a missing score: its topic left out as "no score or NaN"
    lines = BENCH.read_text().splitlines()
    lines[4] = ",".join(lines[4].split(",")[:3] + [value])
    bad = tmp_path / "b.csv"
    bad.write_text("\n".join(lines) + "\n")
    err = _err(capsys, [str(bad)])
    assert f"b.csv:5: score must be a finite number (NaN for none); got {float(value)!r}" in err


def test_a_task_with_one_topic_is_named_in_the_warning(tmp_path):
    # The warning named tasks by position ("tasks [0]"), which a user of a long table
    # or of MTEB's files cannot map back; it names them as the input does.
    import warnings as _warnings

    import numpy as np

    from irmetrics.exceptions import DegenerateTestWarning, ParameterError
    from irmetrics.stats.rank_intervals import aggregate_rank_intervals

    rows = ["task,topic,system,score", "solo,q1,A,0.5", "solo,q1,B,0.4"]
    rows += [f"wide,q{i},{s},{0.1 * i + (0.3 if s == 'A' else 0.0)}"
             for i in range(1, 4) for s in "AB"]
    path = tmp_path / "long.csv"
    path.write_text("\n".join(rows) + "\n")
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        lb.rank_systems(lb.from_long_table(path), n_resamples=50)
    messages = [str(w.message) for w in caught if issubclass(w.category, DegenerateTestWarning)]
    assert any(m.startswith("tasks ['solo'] have one topic") for m in messages), messages
    with pytest.raises(ParameterError, match=r"^`task_names` must be one name per task"):
        aggregate_rank_intervals([np.ones((2, 2)), np.ones((3, 2))], task_names=["a"])
