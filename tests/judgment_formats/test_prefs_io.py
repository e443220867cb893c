"""Readers and containers of the prefs, qrels_prefs and qrels_jg formats."""

import gzip

import polars as pl
import pytest

import irmetrics as irm
from irmetrics.exceptions import DuplicateEntryError, InputFormatError
from irmetrics.io import JudgmentGroups, Prefs, read_prefs, read_qrels_jg, read_qrels_prefs


def write(tmp_path, data: bytes, name="judgments.txt"):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_read_prefs_whitespace_comments_and_blank_lines(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbf# header\n q1\tu1 s1  d1 2 \r\n\n   # indented\n"
                           b"q1 u1 s1 d2 0.5\x0b\nq2 u1 s2 d1 -1")
    p = read_prefs(path)
    assert p.path == path
    assert p.df.schema == pl.Schema({"query_id": pl.String, "jg": pl.String, "jsg": pl.String,
                                     "doc_id": pl.String, "rel_level": pl.Float64})
    assert p.df.rows() == [("q1", "u1", "s1", "d1", 2.0), ("q1", "u1", "s1", "d2", 0.5),
                           ("q2", "u1", "s2", "d1", -1.0)]
    assert Prefs.read(path).df.equals(p.df)


@pytest.mark.parametrize("data, line, words", [
    (b"q u s d 1\nq u s e\n", 2, "expected 5 fields"),
    (b"q u s d 1\n\nq u s d 1 extra\n", 3, "found 6"),
    (b"q u s d abc\n", 1, "rel_level must be a number"),
    (b"q u s d 1\nq u s e nan\n", 2, "rel_level must be a number"),
])
def test_read_prefs_errors_name_file_and_line(tmp_path, data, line, words):
    path = write(tmp_path, data)
    with pytest.raises(InputFormatError, match=words) as err:
        read_prefs(path)
    assert f"{path}:{line}:" in str(err.value)


@pytest.mark.parametrize("data", [b"", b"# only a comment\n\n"])
def test_empty_files_are_errors(tmp_path, data):
    path = write(tmp_path, data)
    for reader in (read_prefs, read_qrels_prefs, read_qrels_jg):
        with pytest.raises(InputFormatError, match="no data lines"):
            reader(path)


def test_missing_and_undecodable_files(tmp_path):
    with pytest.raises(InputFormatError, match="cannot read file"):
        read_prefs(str(tmp_path / "absent"))
    path = write(tmp_path, b"q u s d 1\nq u s \xff 1\n")
    with pytest.raises(InputFormatError, match="UTF-8") as err:
        read_prefs(path)
    assert f"{path}:2:" in str(err.value)


def test_gzip_input(tmp_path):
    path = write(tmp_path, gzip.compress(b"q 0 d 1.5\n"), "qrels.gz")
    assert read_qrels_prefs(path).df.rows() == [("q", "0", "0", "d", 1.5)]


def test_read_qrels_prefs_gives_sub_group_zero_and_real_levels(tmp_path):
    path = write(tmp_path, b"q1 0 d1 1.5\nq1 0 d2 0\nq1 7 d1 2\n")
    assert read_qrels_prefs(path).df.rows() == [
        ("q1", "0", "0", "d1", 1.5), ("q1", "0", "0", "d2", 0.0), ("q1", "7", "0", "d1", 2.0)]
    with pytest.raises(InputFormatError, match="expected 4 fields"):
        read_qrels_prefs(write(tmp_path, b"q1 u s d1 1\n"))


def test_read_qrels_jg(tmp_path):
    path = write(tmp_path, b"q1 u1 d1 1\nq1 u2 d1 0\nq1 u1 d2 -1\n")
    jg = read_qrels_jg(path)
    assert jg.df.schema == pl.Schema({"query_id": pl.String, "jg": pl.String,
                                      "doc_id": pl.String, "relevance": pl.Int64})
    assert jg.df.rows() == [("q1", "u1", "d1", 1), ("q1", "u2", "d1", 0), ("q1", "u1", "d2", -1)]
    assert JudgmentGroups.read(path).df.equals(jg.df)
    with pytest.raises(InputFormatError, match="relevance must be an integer") as err:
        read_qrels_jg(write(tmp_path, b"q1 u1 d1 1\nq1 u1 d2 1.5\n"))
    assert ":2:" in str(err.value)


def test_qrels_jg_duplicate_is_an_error_naming_both_lines(tmp_path):
    path = write(tmp_path, b"q1 u1 d1 1\nq1 u2 d1 1\n# c\nq1 u1 d1 0\n")
    with pytest.raises(DuplicateEntryError, match="first seen on line 1") as err:
        read_qrels_jg(path)
    assert f"{path}:4:" in str(err.value) and "'d1'" in str(err.value)
    with pytest.raises(DuplicateEntryError, match="first seen on row 1"):
        JudgmentGroups.from_records([("q", "u", "d", 1), ("q", "u", "d", 0)])


def test_from_records_and_from_df_validate():
    p = Prefs.from_records([(1, "u", "s", 7, 2), ("1", "u", "s", "8", "0.5")])
    assert p.df.rows() == [("1", "u", "s", "7", 2.0), ("1", "u", "s", "8", 0.5)]
    assert Prefs.from_df(p.df).df.equals(p.df)
    with pytest.raises(InputFormatError, match="expected 5 fields"):
        Prefs.from_records([("q", "u", "s", "d")])
    with pytest.raises(InputFormatError, match="missing column"):
        Prefs.from_df(pl.DataFrame({"query_id": ["q"], "doc_id": ["d"]}))
    with pytest.raises(InputFormatError, match="NaN"):
        Prefs.from_records([("q", "u", "s", "d", float("nan"))])
    with pytest.raises(InputFormatError, match="missing jsg"):
        Prefs.from_records([("q", "u", None, "d", 1.0)])
    with pytest.raises(InputFormatError, match="relevance must be an integer"):
        JudgmentGroups.from_df(pl.DataFrame({"query_id": ["q"], "jg": ["u"], "doc_id": ["d"],
                                             "relevance": [1.5]}))
    jg = JudgmentGroups.from_df(pl.DataFrame({"query_id": ["q"], "jg": ["u"], "doc_id": ["d"],
                                              "relevance": [2.0]}))
    assert jg.df["relevance"].to_list() == [2]
    assert repr(p) == "Prefs(2 lines, 1 queries)" and len(jg) == 1
    assert JudgmentGroups.from_records([]).df.height == 0


def test_evaluate_reads_paths(tmp_path):
    prefs_path = write(tmp_path, b"q u s a 1\nq u s b 0\n", "p.txt")
    jg_path = write(tmp_path, b"q u a 1\nq v b 1\n", "jg.txt")
    run = {"q": {"a": 2.0, "b": 1.0}}
    assert irm.evaluate_prefs(prefs_path, run, ["prefs_simp"]).aggregate()["prefs_simp"] == 1.0
    assert irm.evaluate_jg(jg_path, run, ["map_avgjg"]).aggregate()["map_avgjg"] == 0.75
    with pytest.raises(TypeError, match="`prefs` must be"):
        irm.evaluate_prefs(42, run, ["prefs_simp"])
