"""Tests of irmetrics.io.trec: TREC qrels/run reading and writing."""

from __future__ import annotations

import contextlib
import gzip
import io
import math
import pathlib
import re
import sys
from unittest import mock

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from irmetrics.containers import Qrels, Run
from irmetrics.exceptions import DuplicateEntryError, InputFormatError, IrMetricsError, ParameterError
from irmetrics.io import read_qrels, read_qrels_bytes, read_run, read_run_bytes, write_qrels, write_run
from irmetrics.containers import trec_text as trec

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "io"


def put(tmp_path: pathlib.Path, content: bytes | str, name: str = "f.txt") -> str:
    p = tmp_path / name
    p.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(p)


# ---------------------------------------------------------------------------------------
# basic reading
# ---------------------------------------------------------------------------------------


def test_read_qrels_basic_schema_order_and_leading_zeros():
    q = read_qrels(FIXTURES / "qrels_basic.txt")
    assert isinstance(q, Qrels)
    assert q.df.schema == pl.Schema(
        {"query_id": pl.String, "iteration": pl.String, "doc_id": pl.String, "relevance": pl.Int64}
    )
    assert q.df.rows() == [
        ("301", "0", "FBIS3-10082", 1),
        ("301", "0", "FBIS3-10169", 0),
        ("301", "0", "FBIS3-10243", 2),
        ("0301", "0", "FBIS3-10082", 0),
        ("302", "1", "LA010189-0001", -1),
        ("302", "1", "LA010189-0002", 1),
    ]
    assert q.query_ids == ["301", "0301", "302"]
    assert q.path == str(FIXTURES / "qrels_basic.txt")
    assert len(q) == 6


def test_read_run_basic_schema_scores_and_name():
    r = read_run(str(FIXTURES / "run_basic.txt"))
    assert isinstance(r, Run)
    assert r.df.schema == pl.Schema(
        {
            "query_id": pl.String,
            "iteration": pl.String,
            "doc_id": pl.String,
            "rank": pl.Int64,
            "score": pl.Float64,
            "run_id": pl.String,
        }
    )
    assert r.df["score"].to_list() == [12.5, 10.0, -3.5, 5.0, 3.5, 0.0]
    assert r.df["rank"].to_list() == [1, 2, 3, 1, 1, 2]
    assert r.name == "runB"  # run_id of the last data line
    assert r.df["run_id"].to_list() == ["runA"] * 5 + ["runB"]
    assert r.query_ids == ["301", "0301", "302"]


def test_messy_whitespace_fixture_equals_clean_fixture():
    clean = read_run(FIXTURES / "run_basic.txt")
    messy = read_run(FIXTURES / "run_messy.txt")
    assert_frame_equal(messy.df, clean.df)
    assert messy.name == clean.name == "runB"
    qclean = read_qrels(FIXTURES / "qrels_basic.txt")
    # The qrels fixture also holds the lines trec_eval's qrels reader rejects or crashes on
    # (a blank line, an indented comment, a comment as the last line): each is refused,
    # naming its line, in file order. Without them, the messy whitespace reads as the clean file.
    lines = (FIXTURES / "qrels_messy.txt").read_bytes().split(b"\n")
    refused = [(4, "blank line"), (6, "an indented '#' line"), (10, "a comment as the last line")]
    for dropped, (line, reason) in enumerate(refused):
        data = b"\n".join(lines)
        with pytest.raises(InputFormatError) as ei:
            read_qrels_bytes(data, source="qrels_messy.txt")
        assert ei.value.line == line - dropped, str(ei.value)
        assert str(ei.value).startswith(f"qrels_messy.txt:{line - dropped}: {reason}")
        del lines[line - dropped - 1]
    qmessy = read_qrels_bytes(b"\n".join(lines) + b"\n")
    assert_frame_equal(qmessy.df.drop("iteration"), qclean.df.drop("iteration"))
    with pytest.raises(InputFormatError, match=r"qrels_messy\.txt:4: blank line"):
        read_qrels(FIXTURES / "qrels_messy.txt")


def test_gzip_by_suffix_and_by_magic():
    assert_frame_equal(read_run(FIXTURES / "run_basic.txt.gz").df, read_run(FIXTURES / "run_basic.txt").df)
    assert_frame_equal(
        read_qrels(FIXTURES / "qrels_basic_gzip_nosuffix.dat").df, read_qrels(FIXTURES / "qrels_basic.txt").df
    )
    gz = gzip.compress(b"1 Q0 a 1 1 r\n")
    assert read_run_bytes(gz).df["doc_id"].to_list() == ["a"]


def test_utf8_ids_and_non_ascii_whitespace_is_data():
    q = read_qrels(FIXTURES / "qrels_utf8_ids.txt")
    assert q.df["query_id"].to_list() == ["q\u00e9"] * 3
    assert q.df["doc_id"].to_list() == ["doc\u00a0one", "\u6587\u66f8", "d\x1cx"]


def test_pathlib_and_str_paths(tmp_path):
    p = put(tmp_path, "1 0 a 1\n")
    assert read_qrels(pathlib.Path(p)).path == p
    assert read_qrels(p).path == p


# ---------------------------------------------------------------------------------------
# whitespace, comments, blank lines
# ---------------------------------------------------------------------------------------

RUN_LINES = [("1", "Q0", "a", "1", "2.5", "r"), ("1", "Q0", "b", "2", "1.5", "r"), ("2", "Q0", "a", "1", "7", "s")]
QRELS_LINES = [("1", "0", "a", "1"), ("1", "0", "b", "0"), ("2", "0", "a", "-1")]


def _join(lines, sep, end="\n", lead="", trail=""):
    return "".join(lead + sep.join(f) + trail + end for f in lines)


WHITESPACE_FORMS = {
    "single spaces": _join(RUN_LINES, " "),
    "no final newline": _join(RUN_LINES, " ").rstrip("\n"),
    "tabs": _join(RUN_LINES, "\t"),
    "tabs no final newline": _join(RUN_LINES, "\t").rstrip("\n"),
    "mixed tab/space runs": _join(RUN_LINES, " \t  "),
    "CRLF": _join(RUN_LINES, " ", end="\r\n"),
    "CRLF tabs": _join(RUN_LINES, "\t", end="\r\n"),
    "vertical tab and form feed": _join(RUN_LINES, "\x0b\x0c"),
    "lone CR as separator": _join(RUN_LINES, "\r"),
    "leading whitespace": _join(RUN_LINES, " ", lead=" \t "),
    "trailing whitespace": _join(RUN_LINES, " ", trail=" \t\r "),
    "double spaces": _join(RUN_LINES, "  "),
    "blank lines": "\n" + _join(RUN_LINES, " ", end="\n\n") + "\n\n",
    "whitespace-only lines": " \t\n" + _join(RUN_LINES, " ", end="\n \x0b\r\n"),
    "comments": "# head\n" + _join(RUN_LINES, " ", end="\n#c\n") + "# tail",
    "indented comments": "\t # head\n" + _join(RUN_LINES, " ", end="\n  #c 1 2 3\n"),
    "two comments in a row": "# one\n# x y z\n" + _join(RUN_LINES, " "),
    "utf8 bom": "\ufeff" + _join(RUN_LINES, " "),
}


@pytest.mark.parametrize("form", list(WHITESPACE_FORMS))
def test_run_whitespace_forms(form):
    r = read_run_bytes(WHITESPACE_FORMS[form].encode())
    assert r.df.select("query_id", "doc_id", "score").rows() == [("1", "a", 2.5), ("1", "b", 1.5), ("2", "a", 7.0)]
    assert r.name == "s"


#: Qrels forms trec_eval's qrels reader rejects or crashes on (docs/reference/trec_eval.md §2.1): refused, naming the
#: first such line and why. Runs accept them (test_run_whitespace_forms).
QRELS_REFUSED_FORMS = {
    "blank lines": (1, "blank line"),
    "whitespace-only lines": (1, "blank line"),
    "comments": (8, "a comment as the last line"),  # "# tail" after "#c": also a second comment
    "indented comments": (1, "an indented '#' line"),
    "two comments in a row": (2, "a comment line right after another one"),
}

#: Qrels comment forms trec_eval reads correctly: '#' in column 0, each followed by data.
QRELS_COMMENT_FORMS = {
    "comment before each data line": "".join(f"#c {i} x\n" + " ".join(f) + "\n" for i, f in enumerate(QRELS_LINES)),
    "comments between data lines": "# head\n" + "\n#\n".join(" ".join(f) for f in QRELS_LINES) + "\n",
    "comments CRLF": "# head\r\n" + "\r\n#c 1 2 3\r\n".join(" ".join(f) for f in QRELS_LINES),
    "comment after utf8 bom": "\ufeff# head\n" + _join(QRELS_LINES, " "),
    "comment holding four fields": "#1 0 a 1\n" + _join(QRELS_LINES, " "),
}


@pytest.mark.parametrize("form", [f for f in WHITESPACE_FORMS if f not in QRELS_REFUSED_FORMS] + list(QRELS_COMMENT_FORMS))
def test_qrels_whitespace_forms(form):
    data = QRELS_COMMENT_FORMS[form] if form in QRELS_COMMENT_FORMS else _qrels_variant(form)
    q = read_qrels_bytes(data.encode())
    assert q.df.select("query_id", "doc_id", "relevance").rows() == [("1", "a", 1), ("1", "b", 0), ("2", "a", -1)]


@pytest.mark.parametrize("form", list(QRELS_REFUSED_FORMS))
def test_qrels_refused_forms(tmp_path, form):
    line, reason = QRELS_REFUSED_FORMS[form]
    path = put(tmp_path, _qrels_variant(form))
    with pytest.raises(InputFormatError) as ei:
        read_qrels(path)
    assert ei.value.line == line and ei.value.path == path
    assert str(ei.value).startswith(f"{path}:{line}: {reason}"), str(ei.value)
    assert not isinstance(ei.value, DuplicateEntryError)


def _qrels_variant(form: str) -> str:
    builders = {
        "single spaces": lambda: _join(QRELS_LINES, " "),
        "no final newline": lambda: _join(QRELS_LINES, " ").rstrip("\n"),
        "tabs": lambda: _join(QRELS_LINES, "\t"),
        "tabs no final newline": lambda: _join(QRELS_LINES, "\t").rstrip("\n"),
        "mixed tab/space runs": lambda: _join(QRELS_LINES, " \t  "),
        "CRLF": lambda: _join(QRELS_LINES, " ", end="\r\n"),
        "CRLF tabs": lambda: _join(QRELS_LINES, "\t", end="\r\n"),
        "vertical tab and form feed": lambda: _join(QRELS_LINES, "\x0b\x0c"),
        "lone CR as separator": lambda: _join(QRELS_LINES, "\r"),
        "leading whitespace": lambda: _join(QRELS_LINES, " ", lead=" \t "),
        "trailing whitespace": lambda: _join(QRELS_LINES, " ", trail=" \t\r "),
        "double spaces": lambda: _join(QRELS_LINES, "  "),
        "blank lines": lambda: "\n" + _join(QRELS_LINES, " ", end="\n\n") + "\n\n",
        "whitespace-only lines": lambda: " \t\n" + _join(QRELS_LINES, " ", end="\n \x0b\r\n"),
        "comments": lambda: "# head\n" + _join(QRELS_LINES, " ", end="\n#c\n") + "# tail",
        "indented comments": lambda: "\t # head\n" + _join(QRELS_LINES, " ", end="\n  #c 1 2 3\n"),
        "two comments in a row": lambda: "# one\n# x y z\n" + _join(QRELS_LINES, " "),
        "utf8 bom": lambda: "\ufeff" + _join(QRELS_LINES, " "),
    }
    return builders[form]()


def test_hash_inside_fields_is_data():
    r = read_run_bytes(b"1 Q0 doc#1 1 2 run#x\n1# Q0 a 1 1 r\n")
    assert r.df["doc_id"].to_list() == ["doc#1", "a"]
    assert r.df["query_id"].to_list() == ["1", "1#"]


def test_run_extra_fields_ignored_and_iteration_rank_kept():
    r = read_run_bytes(b"1 it7 a 5 2.5 r x y z\n1 it8 b notarank 1.5 r2 extra\n")
    assert r.df.rows() == [("1", "it7", "a", 5, 2.5, "r"), ("1", "it8", "b", None, 1.5, "r2")]
    assert r.name == "r2"


def test_non_integer_rank_is_null():
    r = read_run_bytes(b"1 Q0 a 1.0 2 r\n1 Q0 b x 1 r\n1 Q0 c 3 0 r\n")
    assert r.df["rank"].to_list() == [None, None, 3]


def test_run_id_comes_from_last_data_line_not_last_line():
    r = read_run_bytes(b"1 Q0 a 1 2 first\n1 Q0 b 2 1 last extra\n# trailing comment\n\n")
    assert r.name == "last"


# ---------------------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "token,value",
    [
        ("1e2", 100.0),
        ("-3.5", -3.5),
        (".5e1", 5.0),
        ("+3.5", 3.5),
        ("5.", 5.0),
        ("1E+2", 100.0),
        ("1e-2", 0.01),
        ("0001", 1.0),
        ("-0", -0.0),
        ("-.5", -0.5),
        ("1e-400", 0.0),  # underflow is fine, as with strtod
        ("0.1", 0.1),
        ("123456789012345678901234567890", 1.2345678901234568e29),
    ],
)
def test_score_forms(token, value):
    r = read_run_bytes(f"1 Q0 a 1 {token} r\n".encode())
    assert r.df["score"][0] == value


@pytest.mark.parametrize("token,value", [("1", 1), ("+3", 3), ("-1", -1), ("-5", -5), ("012", 12), ("-0", 0)])
def test_relevance_forms(token, value):
    assert read_qrels_bytes(f"1 0 a {token}\n".encode()).df["relevance"][0] == value


_FLOAT_GRAMMAR = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _expected_score(token: str):
    """The documented rule: a C decimal literal (whole token) that is finite."""
    if _FLOAT_GRAMMAR.fullmatch(token):
        v = float(token)
        return v if math.isfinite(v) else None
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(alphabet="0123456789.+-eEinfaINFAx_", min_size=1, max_size=7), min_size=1, max_size=8))
def test_score_grammar_fast_and_string_paths_agree(tokens):
    """polars' parsers (typed CSV path, string cast path) accept exactly the grammar."""
    for token in tokens:
        expected = _expected_score(token)
        line = f"1 Q0 a 1 {token} r\n".encode()
        for data in (line, b"# a comment line forces the string path\n" + line):
            if expected is None:
                with pytest.raises(InputFormatError) as ei:
                    read_run_bytes(data)
                assert ei.value.line == data.count(b"\n")
            else:
                got = read_run_bytes(data).df["score"][0]
                assert got == expected and math.copysign(1, got) == math.copysign(1, expected)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="0123456789.+-eax_ ", min_size=1, max_size=6).filter(str.strip), max_size=6))
def test_relevance_grammar_fast_and_string_paths_agree(tokens):
    for token in tokens:
        token = token.strip()
        if " " in token:
            continue
        ok = re.fullmatch(r"[+-]?[0-9]+", token) is not None
        for data in (f"1 0 a {token}\n".encode(), f"#\n1 0 a {token}\n".encode()):
            if ok:
                assert read_qrels_bytes(data).df["relevance"][0] == int(token)
            else:
                with pytest.raises(InputFormatError, match="relevance"):
                    read_qrels_bytes(data)


_ID = st.text(alphabet="abcXYZ019-_.#\u00e9\u00a0", min_size=1, max_size=5).filter(lambda s: not s.startswith("#"))
_SEP = st.text(alphabet=" \t\x0b\x0c\r", min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(_ID, _ID, st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False)),
        min_size=1,
        max_size=8,
        unique_by=lambda t: (t[0], t[1]),
    ),
    seps=st.lists(_SEP, min_size=8, max_size=8),
    lead=st.sampled_from(["", " ", "\t", " \x0b"]),
    extra=st.sampled_from(["", "\n", "#c\n", " #c\n", "\r\n \n"]),
)
def test_random_whitespace_same_as_clean(rows, seps, lead, extra):
    clean = "".join(f"{q} Q0 {d} {k} {s!r} run\n" for q, d, k, s in rows).encode()
    messy = ("\n" + extra).join(
        lead + seps[0].join([q, "Q0", d, str(k), repr(s), "run"]) + seps[1] for q, d, k, s in rows
    ).encode()
    a, b = read_run_bytes(clean), read_run_bytes(messy)
    assert_frame_equal(a.df, b.df)
    assert a.df["score"].to_list() == [s for *_, s in rows]


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------

ERROR_TABLE = [
    # (kind, content, line, expected substring)
    ("qrels", "1 0 a 1\n1 0 b\n", 2, "expected 4 fields (query_id iteration doc_id relevance), found 3"),
    ("qrels", "1 0 a 1 x\n", 1, "expected 4 fields (query_id iteration doc_id relevance), found 5"),
    ("qrels", "1 0 a 1 # trailing comment\n", 1, "found 7"),
    ("qrels", "# c\n1 0 a 1\n# d\n1 0 b 1.9\n", 4, "relevance must be an integer, found '1.9'"),
    ("qrels", "1 0 a abc\n", 1, "relevance must be an integer, found 'abc'"),
    ("qrels", "1 0 a 2x\n", 1, "relevance must be an integer, found '2x'"),
    ("qrels", "1 0 a 1\n1 0 b 99999999999999999999\n", 2, "out of the 64-bit integer range"),
    ("qrels", "1 0 a 1\n1 0 b 0\n1 1 a 0\n", 3, "duplicate (query_id, doc_id); first seen on line 1"),
    ("qrels", "1 0 a 1\n1 0 \xff 0\n", 2, "invalid UTF-8"),
    ("run", "1 Q0 a 1 1.0\n", 1, "expected at least 6 fields (query_id iteration doc_id rank score run_id), found 5"),
    ("run", "1 Q0 a 1 1.0 r\n\n  1 Q0 b\n", 3, "found 3"),
    ("run", "1 Q0 a 1 abc r\n", 1, "score is not a number, found 'abc'"),
    ("run", "1 Q0 a 1 1,5 r\n", 1, "score is not a number, found '1,5'"),
    ("run", "1 Q0 a 1 1e r\n", 1, "score is not a number, found '1e'"),
    ("run", "1 Q0 a 1 nan r\n", 1, "NaN and infinity are not allowed"),
    ("run", "1 Q0 a 1 -inf r\n", 1, "NaN and infinity are not allowed), found '-inf'"),
    ("run", "1 Q0 a 1 Infinity r\n", 1, "NaN and infinity are not allowed"),
    ("run", "1 Q0 a 1 1e400 r\n", 1, "overflows float64"),
    ("run", "1 Q0 a 1 0x10 r\n", 1, "hexadecimal is not supported"),
    ("run", "#\n1 Q0 a 1 1 r\n1 Q0 b 2 1 r\n1 Q0 a 3 0 r\n", 4, "duplicate (query_id, doc_id); first seen on line 2"),
    ("run", "1 Q0 a 1 1 r\n1\tQ0\ta\t1\t1\tr\n", 2, "duplicate (query_id, doc_id); first seen on line 1"),
]


@pytest.mark.parametrize("kind,content,line,expected", ERROR_TABLE)
def test_error_table(tmp_path, kind, content, line, expected):
    path = put(tmp_path, content.encode("latin-1") if "\xff" in content else content.encode())
    reader = read_qrels if kind == "qrels" else read_run
    with pytest.raises(InputFormatError) as ei:
        reader(path)
    err = ei.value
    msg = str(err)
    assert msg.startswith(f"{path}:{line}: "), msg
    assert expected in msg
    assert "\n" not in msg
    assert err.path == path and err.line == line
    assert isinstance(err, ValueError) and isinstance(err, IrMetricsError)


def test_error_names_query_and_doc():
    with pytest.raises(InputFormatError) as ei:
        read_run_bytes(b"301 Q0 a 1 1 r\n302 Q0 doc9 1 oops r\n", source="run.txt")
    e = ei.value
    assert (e.query_id, e.doc_id, e.line, e.path) == ("302", "doc9", 2, "run.txt")
    assert str(e) == "run.txt:2: score is not a number, found 'oops' (query_id '302', doc_id 'doc9')"
    assert e.reason == "score is not a number, found 'oops'"


def test_duplicate_error_class_and_ids():
    with pytest.raises(DuplicateEntryError) as ei:
        read_qrels_bytes(b"1 0 a 1\n1 0 b 0\n1 1 a 0\n", source="q")
    assert (ei.value.query_id, ei.value.doc_id, ei.value.line) == ("1", "a", 3)


def test_fixture_first_error_counts_comment_and_blank_lines():
    with pytest.raises(InputFormatError) as ei:
        read_run(FIXTURES / "run_bad_score_line4.txt")
    assert ei.value.line == 4 and "'abc'" in str(ei.value)


@pytest.mark.parametrize(
    "content,line,what",
    [
        ("1 0 a 1\n1 0 a 1\n1 0 x\n", 2, "duplicate"),  # duplicate before a malformed line
        ("1 0 a 1\n1 0 x\n1 0 a 1\n", 2, "expected 4 fields"),  # malformed before a duplicate
        ("1 0 a 1\n1 0 b 1.5\n1 0 \xff 1\n", 2, "relevance"),  # bad value before bad UTF-8
        ("1 0 a 1\n1 0 \xff 1\n1 0 b 1.5\n", 2, "UTF-8"),  # bad UTF-8 before bad value
        ("1 0 a 1\n1 0 b 1\n1 0 c 1\n1 0 c 1\n1 0 b 1\n", 4, "first seen on line 3"),  # first repeat wins
    ],
)
def test_first_bad_line_in_file_order(content, line, what):
    with pytest.raises(InputFormatError) as ei:
        read_qrels_bytes(content.encode("latin-1"), source="q")
    assert ei.value.line == line and what in str(ei.value)


@pytest.mark.parametrize("content", [b"1 0 a\n1 0 b 1\n\n", b"1 0 a 1.5\n1 0 b 1\n# end\n"])
def test_qrels_layout_error_after_bad_data_line(content):
    with pytest.raises(InputFormatError) as ei:
        read_qrels_bytes(content)
    assert ei.value.line == 1


def test_missing_file_is_input_format_error(tmp_path):
    missing = str(tmp_path / "nope.txt")
    with pytest.raises(InputFormatError) as ei:
        read_run(missing)
    assert ei.value.line is None and ei.value.path == missing
    assert str(ei.value).startswith(f"{missing}: cannot read file: ")
    assert isinstance(ei.value.__cause__, FileNotFoundError)
    with pytest.raises(InputFormatError, match="cannot read file"):
        read_qrels(tmp_path)  # a directory


@pytest.mark.parametrize("content", [b"", b"\n\n", b"# only a comment\n", b"  \t\r\n# c\n\n"])
def test_no_data_lines_is_an_error(tmp_path, content):
    path = put(tmp_path, content)
    with pytest.raises(InputFormatError) as ei:
        read_run(path)
    assert ei.value.line is None
    assert str(ei.value) == f"{path}: no data lines (the file is empty or holds only blank and comment lines)"


@pytest.mark.parametrize(
    "content,line,reason",
    [
        (b"", None, "no data lines (the file is empty or holds only blank and comment lines)"),
        (b"\xef\xbb\xbf", None, "no data lines (the file is empty or holds only blank and comment lines)"),
        # qrels without data lines are refused at their first line trec_eval rejects
        (b"\n\n", 1, "blank line (trec_eval rejects blank lines in qrels)"),
        (b"# only a comment\n", 1, "a comment as the last line (trec_eval crashes on it)"),
        (b"  \t\r\n# c\n\n", 1, "blank line (trec_eval rejects blank lines in qrels)"),
        (b"# c\n\n", 2, "blank line (trec_eval rejects blank lines in qrels)"),
    ],
)
def test_qrels_without_data_lines_is_an_error(tmp_path, content, line, reason):
    path = put(tmp_path, content)
    with pytest.raises(InputFormatError) as ei:
        read_qrels(path)
    assert ei.value.line == line
    assert str(ei.value) == (f"{path}: {reason}" if line is None else f"{path}:{line}: {reason}")


def test_corrupt_gzip(tmp_path):
    path = put(tmp_path, gzip.compress(b"1 0 a 1\n")[:-6], name="q.gz")
    with pytest.raises(InputFormatError, match="cannot decompress gzip data"):
        read_qrels(path)
    path = put(tmp_path, b"1 0 a 1\n", name="plain.gz")
    with pytest.raises(InputFormatError, match="cannot decompress gzip data"):
        read_qrels(path)


def test_bad_arguments():
    with pytest.raises(ParameterError, match=r"^`on_duplicate` must be one of 'error', 'first', 'last', 'max'; got 'keep'\.$"):
        read_run_bytes(b"1 Q0 a 1 1 r\n", on_duplicate="keep")
    with pytest.raises(ParameterError, match="`path`"):
        read_run(42)
    with pytest.raises(ParameterError, match="`data` must be bytes"):
        read_qrels_bytes("1 0 a 1\n")


# ---------------------------------------------------------------------------------------
# duplicates
# ---------------------------------------------------------------------------------------

DUP_RUN = b"1 Q0 a 1 1.0 r\n1 Q0 b 2 0.5 r\n1 Q0 a 3 3.0 r\n2 Q0 a 1 9 r\n1 Q0 a 4 2.0 r\n1 Q0 b 5 0.5 r\n"


@pytest.mark.parametrize(
    "policy,expected",
    [
        ("first", [("1", "a", 1, 1.0), ("1", "b", 2, 0.5), ("2", "a", 1, 9.0)]),
        ("last", [("2", "a", 1, 9.0), ("1", "a", 4, 2.0), ("1", "b", 5, 0.5)]),
        ("max", [("1", "b", 2, 0.5), ("1", "a", 3, 3.0), ("2", "a", 1, 9.0)]),  # b: tie keeps first
    ],
)
def test_run_duplicate_policies(policy, expected):
    r = read_run_bytes(DUP_RUN, on_duplicate=policy)
    assert r.df.select("query_id", "doc_id", "rank", "score").rows() == expected
    assert r.name == "r"


DUP_QRELS = b"1 0 a 1\n1 0 b 0\n1 1 a 2\n1 2 a 0\n2 0 a 1\n"


@pytest.mark.parametrize(
    "policy,expected",
    [
        ("first", [("1", "0", "a", 1), ("1", "0", "b", 0), ("2", "0", "a", 1)]),
        ("last", [("1", "0", "b", 0), ("1", "2", "a", 0), ("2", "0", "a", 1)]),
        ("max", [("1", "0", "b", 0), ("1", "1", "a", 2), ("2", "0", "a", 1)]),
    ],
)
def test_qrels_duplicate_policies(policy, expected):
    assert read_qrels_bytes(DUP_QRELS, on_duplicate=policy).df.rows() == expected


def test_duplicate_policy_does_not_hide_format_errors():
    with pytest.raises(InputFormatError, match="found 3"):
        read_qrels_bytes(b"1 0 a 1\n1 0 a 2\n1 0 x\n", on_duplicate="first")


@pytest.mark.parametrize("last_resort", [False, True])
def test_duplicates_in_general_path_use_physical_lines(last_resort):
    data = b"# c\n1 0 a 1\n# d\n1 0 b 1\n\t1 0 a 1\n"
    with mock.patch.object(trec, "_string_parse", lambda *a: trec._FAILED) if last_resort else contextlib.nullcontext():
        with pytest.raises(DuplicateEntryError) as ei:
            read_qrels_bytes(data)
        assert ei.value.line == 5 and "first seen on line 2" in str(ei.value)
        # a blank line in qrels is refused before any duplicate after it
        with pytest.raises(InputFormatError, match="^<bytes>:3: blank line") as ei:
            read_qrels_bytes(data.replace(b"# d\n", b"\n"))
        assert not isinstance(ei.value, DuplicateEntryError)
    with pytest.raises(DuplicateEntryError) as ei:  # runs skip blank lines and count them
        read_run_bytes(b"# c\n1 Q0 a 1 1 r\n\n1 Q0 b 1 1 r\n\t1 Q0 a 1 1 r\n")
    assert ei.value.line == 5 and "first seen on line 2" in str(ei.value)


# ---------------------------------------------------------------------------------------
# stdin
# ---------------------------------------------------------------------------------------


class _FakeStdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


def test_read_run_from_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _FakeStdin(b"1 Q0 a 1 1 r\n"))
    r = read_run("-")
    assert r.df["doc_id"].to_list() == ["a"] and r.path == "-"


def test_read_gzip_qrels_from_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _FakeStdin(gzip.compress(b"1 0 a 1\n")))
    assert read_qrels("-").df["doc_id"].to_list() == ["a"]


def test_stdin_errors_name_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _FakeStdin(b"1 0 a\n"))
    with pytest.raises(InputFormatError) as ei:
        read_qrels("-")
    assert str(ei.value).startswith("<stdin>:1: expected 4 fields")


def test_text_only_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("1 0 a 1\n"))
    assert read_qrels("-").df["relevance"].to_list() == [1]


# ---------------------------------------------------------------------------------------
# writing and round trips
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["q.txt", "q.txt.gz"])
def test_qrels_round_trip(tmp_path, name):
    q = read_qrels(FIXTURES / "qrels_basic.txt")
    out = tmp_path / name
    write_qrels(q, out)
    q2 = read_qrels(out)
    assert_frame_equal(q.df, q2.df)
    assert "0301" in q2.query_ids and "301" in q2.query_ids
    if name.endswith(".gz"):
        assert out.read_bytes()[:2] == b"\x1f\x8b"
    else:
        assert out.read_bytes() == (FIXTURES / "qrels_basic.txt").read_bytes()


@pytest.mark.parametrize("name", ["r.txt", "r.txt.gz"])
def test_run_round_trip(tmp_path, name):
    r = read_run(FIXTURES / "run_messy.txt")
    out = tmp_path / name
    r.write(out)
    r2 = read_run(out)
    assert_frame_equal(r.df, r2.df)
    assert r2.name == r.name == "runB"


def test_write_run_clean_output(tmp_path):
    out = tmp_path / "r.txt"
    write_run(read_run(FIXTURES / "run_basic.txt"), out)
    assert out.read_text() == (
        "301 Q0 FBIS3-10082 1 12.5 runA\n"
        "301 Q0 FBIS3-10243 2 10.0 runA\n"
        "301 Q0 FBIS3-99999 3 -3.5 runA\n"
        "0301 Q0 FBIS3-10082 1 5.0 runA\n"
        "302 Q0 LA010189-0002 1 3.5 runA\n"
        "302 Q0 LA010189-0001 2 0.0 runB\n"
    )


def test_write_run_computes_trec_eval_ranks_when_missing(tmp_path):
    run = Run.from_dict(
        {
            "q2": {"a": 1.0, "B": 1.0, "\u00e9": 1.0, "z": 0.0, "y": -0.0, "top": 5.0},
            "q1": {"x": 0.5, "w": 0.75},
        },
        name="mine",
    )
    out = tmp_path / "r.txt"
    write_run(run, out)
    assert out.read_text(encoding="utf-8").splitlines() == [
        "q2 Q0 top 1 5.0 mine",
        "q2 Q0 \u00e9 2 1.0 mine",  # ties: doc_id descending by bytes (0xc3 > 'a' > 'B')
        "q2 Q0 a 3 1.0 mine",
        "q2 Q0 B 4 1.0 mine",
        "q2 Q0 z 5 0.0 mine",  # -0.0 ties with 0.0 and falls through to doc_id
        "q2 Q0 y 6 -0.0 mine",
        "q1 Q0 w 1 0.75 mine",
        "q1 Q0 x 2 0.5 mine",
    ]
    back = read_run(out)
    assert back.to_dict() == run.to_dict()
    assert back.name == "mine"


def test_write_run_run_id_override_and_dict_input(tmp_path):
    out = tmp_path / "r.txt"
    write_run({"1": {"a": 1}}, out, run_id="other")
    assert out.read_text() == "1 Q0 a 1 1.0 other\n"
    with pytest.raises(ParameterError, match="`run_id`"):
        write_run({"1": {"a": 1}}, out, run_id="has space")


def test_write_scores_round_trip_exactly(tmp_path):
    scores = [0.1, 1 / 3, 1e-300, 5e-324, 1.7976931348623157e308, -2.5e-7, 123456789.123456789, 1e16, -0.0]
    run = Run.from_dict({"q": {f"d{i}": s for i, s in enumerate(scores)}})
    out = tmp_path / "r.txt"
    run.write(out)
    back = read_run(out).to_dict()["q"]
    for i, s in enumerate(scores):
        assert back[f"d{i}"] == s and math.copysign(1, back[f"d{i}"]) == math.copysign(1, s)


@pytest.mark.parametrize(
    "d,match",
    [
        ({"a b": {"d": 1}}, "`query_id values`"),
        ({"q": {"d\tx": 1}}, "`doc_id values`"),
        ({"q": {"": 1}}, "`doc_id values`"),
        ({"#q": {"d": 1}}, "comment"),
    ],
)
def test_write_refuses_unreadable_ids(tmp_path, d, match):
    with pytest.raises(ParameterError, match=match):
        write_qrels(Qrels.from_dict(d), tmp_path / "q.txt")
    with pytest.raises(ParameterError, match=match):
        write_run(Run.from_dict(d), tmp_path / "r.txt")


def test_write_to_stdout(capsysbinary):
    write_qrels({"1": {"a": 2}}, "-")
    assert capsysbinary.readouterr().out == b"1 0 a 2\n"


def test_write_bad_container(tmp_path):
    with pytest.raises(ParameterError, match="`qrels` must be a Qrels or a dict"):
        write_qrels([("1", "a", 1)], tmp_path / "q.txt")
    with pytest.raises(ParameterError, match="`run` must be a Run or a dict"):
        write_run(pl.DataFrame(), tmp_path / "r.txt")


def test_round_trip_from_dict_with_leading_zero_ids(tmp_path):
    q = Qrels.from_dict({"0301": {"007": 1, "7": 0}, "301": {"007": 2}})
    p = tmp_path / "q.txt"
    q.write(p)
    assert read_qrels(p).to_dict() == {"0301": {"007": 1, "7": 0}, "301": {"007": 2}}


# ---------------------------------------------------------------------------------------
# internals worth pinning
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data,expected",
    [
        (b"", b""),
        (b"a b\n", b"a b\n"),
        (b"  a  b \n\n  \n c\n ", b"a b\n\n\nc\n"),
        (b" ", b""),
        (b"a   ", b"a"),
    ],
)
def test_collapse_spaces(data, expected):
    assert trec._collapse_spaces(data) == expected


class _PathSpy:
    """Count calls of the three reading paths."""

    def __init__(self, monkeypatch):
        self.calls: list[str] = []
        for name in ("_fast_parse", "_string_parse", "_general_parse"):
            real = getattr(trec, name)
            monkeypatch.setattr(trec, name, self._wrap(name, real))

    def _wrap(self, name, real):
        def spy(*args):
            self.calls.append(name)
            return real(*args)

        return spy

    def take(self) -> list[str]:
        calls, self.calls = self.calls, []
        return calls


def test_paths_taken(monkeypatch):
    spy = _PathSpy(monkeypatch)
    for clean in (
        b"1 Q0 a 1 1 r\n1 Q0 b 2 0.5 r\n",
        b"1\tQ0\ta\t1\t1\tr\r\n",
        b"1 Q0 a 1 1 r\n\n \n1 Q0 b 2 0.5 r\n\n",
        b"1 Q0 a 1 1 r x y\n1 Q0 b 2 0.5 r\n",
    ):
        read_run_bytes(clean)
        assert spy.take() == ["_fast_parse"]
    with pytest.raises(DuplicateEntryError, match="^<bytes>:4: .* first seen on line 1"):
        read_run_bytes(b"1 Q0 a 1 1 r\n\n\n1 Q0 a 2 0.5 r\n")
    assert spy.take() == ["_fast_parse"]
    read_run_bytes(b"# comment\n1 Q0 a 1 1 r\n#x\n1 Q0 b 2 0.5 r\n#")  # comments: string path
    assert spy.take() == ["_string_parse"]
    read_run_bytes(b"  1 Q0\t a 1 1 r  \n")  # padded: collapse, then the typed path again
    assert spy.take() == ["_fast_parse", "_fast_parse"]
    late = b"".join(b"1 Q0 d%d 1 1 r\n" % i for i in range(10000)) + b"1 Q0  b 1 1 r\n"
    assert len(read_run_bytes(late)) == 10001  # padding only after the first 64 KiB
    assert spy.take() == ["_fast_parse", "_string_parse", "_string_parse"]
    read_qrels_bytes(b"1 0 a 1\r\n1 0 b 1\r\n")  # qrels CRLF: trailing blank after translation
    assert spy.take() == ["_fast_parse", "_fast_parse"]
    with pytest.raises(DuplicateEntryError, match="^<bytes>:4: .* first seen on line 2"):
        read_run_bytes(b"# c\n1 Q0 a 1 1 r\n\t#\n1 Q0 a 2 0.5 r\n")
    with pytest.raises(InputFormatError, match="^<bytes>:3: score is not a number"):
        read_run_bytes(b"1 Q0 a 1 1 r\n\n1 Q0 b 1 x r\n")
    with pytest.raises(InputFormatError, match="^<bytes>:2: invalid UTF-8"):
        read_run_bytes(b"1 Q0 a 1 1 r\n1 Q0 \xff 1 1 r\n")
    assert "_general_parse" not in spy.take()


def test_qrels_too_many_fields_counted_exactly():
    with pytest.raises(InputFormatError, match=r"^<bytes>:3: expected 4 fields .*, found 7 "):
        read_qrels_bytes(b"1 0 a 1\n#\n1 0 b 1 x y  z\n")


# ---------------------------------------------------------------------------------------
# differential test against a slow, plainly written reference reader
# ---------------------------------------------------------------------------------------

_WS_BYTES = b" \t\x0b\x0c\r"


def reference_read(data: bytes, kind: str, on_duplicate: str = "error"):
    """Line-by-line reading of the documented rules. Returns ("ok", rows, run_name) or
    ("error", line, kind_of_error)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    # trec_eval's qrels layout rules (blank lines, comments): whichever bad line comes
    # first in the file, layout or fields, is the one reported.
    layout = reference_qrels_layout(data) if kind == "qrels" else None
    rows: list[tuple] = []
    for i, raw in enumerate(data.split(b"\n"), 1):
        if layout is not None and i >= layout:
            return ("error", layout, "layout")
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return ("error", i, "utf8")
        toks = [t.decode() for t in re.split(rb"[ \t\x0b\x0c\r]+", raw.strip(_WS_BYTES)) if t]
        if not toks or toks[0].startswith("#"):
            continue
        if kind == "qrels":
            if len(toks) != 4:
                return ("error", i, "fields")
            if not re.fullmatch(r"[+-]?[0-9]+", toks[3]) or not -(2**63) <= int(toks[3]) < 2**63:
                return ("error", i, "value")
            row = (toks[0], toks[1], toks[2], int(toks[3]))
        else:
            if len(toks) < 6:
                return ("error", i, "fields")
            if _expected_score(toks[4]) is None:
                return ("error", i, "value")
            rank = int(toks[3]) if re.fullmatch(r"[+-]?[0-9]+", toks[3]) and abs(int(toks[3])) < 2**63 else None
            row = (toks[0], toks[1], toks[2], rank, float(toks[4]), toks[5])
        if on_duplicate == "error" and any((r[0], r[2]) == (row[0], row[2]) for r in rows):
            return ("error", i, "duplicate")
        rows.append(row)
    if not rows:
        return ("error", None, "empty")
    name = rows[-1][5] if kind == "run" else None
    value = 3 if kind == "qrels" else 4
    kept = []
    for j, row in enumerate(rows):
        same = [k for k, r in enumerate(rows) if (r[0], r[2]) == (row[0], row[2])]
        if on_duplicate == "first":
            keep = j == same[0]
        elif on_duplicate == "last":
            keep = j == same[-1]
        elif on_duplicate == "max":
            best = max(rows[k][value] for k in same)
            keep = j == next(k for k in same if rows[k][value] == best)
        else:
            keep = True
        if keep:
            kept.append(row)
    return ("ok", kept, name)


def reference_qrels_layout(data: bytes):
    """The first line (1-based) that trec_eval's qrels reader rejects or crashes on, or None:
    a blank or whitespace-only line, a comment ('#' as the very first byte) after a comment
    or as the last line, an indented '#' line. The text after the last newline is a line
    only if it is not empty; when it is the only line and whitespace-only, the file merely
    holds no data lines.

    reference_read reports it unless a malformed data line comes earlier (see
    test_qrels_layout_error_after_bad_data_line)."""
    pieces = data.split(b"\n")
    lines = pieces if pieces[-1] else pieces[:-1]
    for i, line in enumerate(lines, 1):
        stripped = line.strip(_WS_BYTES)
        comment = line.startswith(b"#")
        if not stripped and (i < len(pieces) or i > 1):
            return i
        if stripped.startswith(b"#") and not comment:
            return i
        if comment and (i == len(lines) or (i > 1 and lines[i - 2].startswith(b"#"))):
            return i
    return None


def _classify(err: InputFormatError) -> str:
    s = str(err)
    if isinstance(err, DuplicateEntryError):
        return "duplicate"
    if err.reason.startswith(("blank line", "a comment", "an indented '#' line")):
        return "layout"
    if "UTF-8" in s:
        return "utf8"
    if "fields" in s:
        return "fields"
    if "no data lines" in s:
        return "empty"
    return "value"


_SEPS = st.sampled_from([" ", " ", " ", "\t", "  ", " \t", "\x0b", "\x0c", "\r"])
_QID = st.sampled_from(["1", "01", "2", "q\u00e9"])
_DOC = st.sampled_from(["a", "b", "c#", "D"])


@st.composite
def _line(draw, kind: str):
    choice = draw(st.integers(0, 9))
    sep = draw(_SEPS)
    lead = draw(st.sampled_from(["", "", "", " ", "\t"]))
    trail = draw(st.sampled_from(["", "", "", " ", "\r", " \t"]))
    if choice == 0:
        return lead + draw(st.sampled_from(["", "#", "# c 1 2", "#1 0 a 1"])) + trail
    if choice == 1:
        return draw(st.sampled_from(["", " ", "\t\r", "\x0b"]))
    if kind == "qrels":
        fields = [draw(_QID), draw(st.sampled_from(["0", "Q0", "1"])), draw(_DOC)]
        fields.append(draw(st.sampled_from(["0", "1", "2", "-1", "+3", "1.5", "x", "99999999999999999999"] if choice == 2 else ["0", "1", "2", "-1", "+3"])))
    else:
        fields = [draw(_QID), "Q0", draw(_DOC), draw(st.sampled_from(["1", "2", "x", "1.0"]))]
        fields.append(draw(st.sampled_from(["1", "2.5", "-1e3", ".5", "+0", "-0", "5."] + (["nan", "abc", "1e400", "0x1", "inf"] if choice == 2 else []))))
        fields.append(draw(st.sampled_from(["r", "s"])))
        if choice == 3:
            fields.append(draw(st.sampled_from(["extra", "x y"])))
    if choice == 4:
        fields = fields[: draw(st.integers(1, len(fields) - 1))]
    if choice == 5 and kind == "qrels":
        fields.append("z")
    text = lead + sep.join(fields) + trail
    if choice == 6 and draw(st.integers(0, 3)) == 0:
        text += "\udcff"  # becomes an invalid UTF-8 byte below
    return text


def _encode(lines: list[str], end: str) -> bytes:
    return end.join(lines).encode("utf-8", "surrogateescape")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["qrels", "run"]),
    data=st.data(),
    end=st.sampled_from(["\n", "\r\n"]),
    final=st.sampled_from(["", "\n"]),
    policy=st.sampled_from(["error", "error", "first", "last", "max"]),
)
def test_matches_reference_reader(kind, data, end, final, policy):
    lines = data.draw(st.lists(_line(kind), min_size=0, max_size=9))
    raw = _encode(lines, end) + final.encode()
    expected = reference_read(raw.replace(b"\r\n", b"\n"), kind, policy)
    reader = read_qrels_bytes if kind == "qrels" else read_run_bytes
    check_against_reference(reader, raw, kind, policy, expected)
    with mock.patch.object(trec, "_string_parse", lambda *a: trec._FAILED):  # the last resort
        check_against_reference(reader, raw, kind, policy, expected)


def check_against_reference(reader, raw, kind, policy, expected):
    try:
        got = reader(raw, on_duplicate=policy)
    except InputFormatError as e:
        assert expected[0] == "error", (raw, expected, str(e))
        assert (e.line, _classify(e)) == (expected[1], expected[2]), (raw, str(e))
        return
    assert expected[0] == "ok", (raw, expected)
    assert got.df.rows() == expected[1]
    if kind == "run":
        assert got.name == expected[2]
