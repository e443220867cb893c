"""Tests of irmetrics.containers (Qrels, Run), irmetrics.exceptions and irmetrics.checks."""

from __future__ import annotations

import math
import pickle

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from irmetrics import checks as v
from irmetrics.containers import Qrels, Run
from irmetrics.exceptions import (
    DuplicateEntryError,
    InputFormatError,
    IrMetricsError,
    ParameterError,
    ShapeError,
    UnknownMeasureError,
)
from irmetrics.io import read_qrels_bytes, read_run_bytes

QRELS_DICT = {"301": {"d1": 1, "d2": 0, "d3": 2}, "0301": {"d1": -1}, "302": {"d9": 1}}
QRELS_ROWS = [
    ("301", "0", "d1", 1),
    ("301", "0", "d2", 0),
    ("301", "0", "d3", 2),
    ("0301", "0", "d1", -1),
    ("302", "0", "d9", 1),
]
RUN_DICT = {"301": {"d1": 0.5, "d2": 1.5, "d3": -2.0}, "0301": {"d1": 3.0}, "302": {"d9": 1e-3}}


# ---------------------------------------------------------------------------------------
# Qrels
# ---------------------------------------------------------------------------------------


def test_qrels_from_dict():
    q = Qrels.from_dict(QRELS_DICT)
    assert q.df.rows() == QRELS_ROWS
    assert q.df.schema == pl.Schema(
        {"query_id": pl.String, "iteration": pl.String, "doc_id": pl.String, "relevance": pl.Int64}
    )
    assert q.to_dict() == QRELS_DICT
    assert q.query_ids == ["301", "0301", "302"]
    assert len(q) == 5 and q.path is None
    assert repr(q) == "Qrels(n_queries=3, n_judgments=5)"


def test_qrels_from_dict_from_df_from_records_agree():
    a = Qrels.from_dict(QRELS_DICT)
    b = Qrels.from_df(
        pl.DataFrame({"q": [r[0] for r in QRELS_ROWS], "d": [r[2] for r in QRELS_ROWS], "rel": [r[3] for r in QRELS_ROWS]}),
        query_id="q",
        doc_id="d",
        relevance="rel",
    )
    c = Qrels.from_records([(r[0], r[2], r[3]) for r in QRELS_ROWS])
    d = Qrels.from_records(QRELS_ROWS)
    e = read_qrels_bytes("".join(" ".join(map(str, r)) + "\n" for r in QRELS_ROWS).encode())
    for other in (b, c, d, e):
        assert_frame_equal(a.df, other.df)


def test_qrels_from_df_keeps_iteration_column_and_ignores_others():
    df = pl.DataFrame(
        {"query_id": ["1", "1"], "iteration": [0, 3], "doc_id": ["a", "b"], "relevance": [1, 0], "junk": [1.5, 2.5]}
    )
    q = Qrels.from_df(df)
    assert q.df.rows() == [("1", "0", "a", 1), ("1", "3", "b", 0)]


@pytest.mark.parametrize(
    "ids",
    [
        [301, 301, 302],
        np.array([301, 301, 302], dtype=np.int64),
        np.array([301, 301, 302], dtype=np.uint16),
        ["301", "301", "302"],
    ],
)
def test_qrels_integer_and_numpy_ids(ids):
    df = pl.DataFrame({"query_id": ids, "doc_id": [7, 8, 7], "relevance": np.array([1, 0, 2], dtype=np.int8)})
    q = Qrels.from_df(df)
    assert q.df.rows() == [("301", "0", "7", 1), ("301", "0", "8", 0), ("302", "0", "7", 2)]


def test_numpy_scalar_ids_and_values_in_dicts_and_records():
    d = {np.int64(301): {np.int32(7): np.int64(1), "x": np.uint8(2)}, 302: {np.str_("y"): np.float64(3.0)}}
    q = Qrels.from_dict(d)
    assert q.to_dict() == {"301": {"7": 1, "x": 2}, "302": {"y": 3}}
    r = Run.from_records([(np.int16(5), np.int64(9), np.float32(0.5)), (5, "a", np.int64(2))])
    assert r.to_dict() == {"5": {"9": 0.5, "a": 2.0}}
    assert all(type(k) is str for k in r.to_dict()["5"])


def test_whole_float_and_bool_relevance():
    q = Qrels.from_dict({"1": {"a": 1.0, "b": np.float32(2.0), "c": True, "d": -1.0}})
    assert q.to_dict() == {"1": {"a": 1, "b": 2, "c": 1, "d": -1}}
    q = Qrels.from_df(pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1.0, 0.0]}))
    assert q.df["relevance"].dtype == pl.Int64 and q.df["relevance"].to_list() == [1, 0]
    q = Qrels.from_df(pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [True]}))
    assert q.df["relevance"].to_list() == [1]


@pytest.mark.parametrize("bad", [1.5, float("nan"), float("inf"), "1", None, np.float64(0.25)])
def test_non_integer_relevance_named(bad):
    with pytest.raises(InputFormatError) as ei:
        Qrels.from_dict({"q1": {"ok": 1, "docX": bad}})
    e = ei.value
    assert (e.query_id, e.doc_id, e.path) == ("q1", "docX", "<dict>")
    assert "relevance must be an integer" in str(e)
    assert "(query_id 'q1', doc_id 'docX')" in str(e)


def test_non_integer_relevance_in_frame_and_records_names_row():
    df = pl.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "relevance": [1.0, 2.0, 1.5]})
    with pytest.raises(InputFormatError) as ei:
        Qrels.from_df(df)
    assert str(ei.value) == ("<DataFrame>:3: relevance must be an integer, found 1.5 (graded float"
                             " labels: relevance='float', or --float-relevance) (query_id '2',"
                             " doc_id 'c')")
    with pytest.raises(InputFormatError) as ei:
        Qrels.from_records([("1", "a", 1), ("1", "b", 0.5)])
    assert str(ei.value) == ("<records>:2: relevance must be an integer, found 0.5 (graded float"
                             " labels: relevance='float', or --float-relevance) (query_id '1',"
                             " doc_id 'b')")


@pytest.mark.parametrize("bad_id", [True, np.bool_(False), 1.0, None, b"bytes", ("t",)])
def test_bad_ids_rejected(bad_id):
    with pytest.raises(ParameterError, match=r"^`(query_id|doc_id)` must be a str or an integer"):
        Qrels.from_dict({bad_id: {"a": 1}})
    with pytest.raises(ParameterError):
        Run.from_dict({"q": {bad_id: 1.0}})
    with pytest.raises(ParameterError):
        Qrels.from_records([(bad_id, "a", 1)])


def test_bad_id_columns_rejected():
    with pytest.raises(ParameterError, match="`query_id column` must be of a string or integer dtype; got Boolean"):
        Qrels.from_df(pl.DataFrame({"query_id": [True], "doc_id": ["a"], "relevance": [1]}))
    with pytest.raises(ParameterError, match="Float64"):
        Run.from_df(pl.DataFrame({"query_id": ["1"], "doc_id": [1.0], "score": [1.0]}))
    with pytest.raises(InputFormatError, match=r"^<DataFrame>:2: missing doc_id$"):
        Qrels.from_df(pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", None], "relevance": [1, 1]}))


def test_categorical_ids_and_lazyframe():
    df = pl.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"], "relevance": [1, 0]}).with_columns(
        pl.col("query_id").cast(pl.Categorical)
    )
    assert Qrels.from_df(df.lazy()).df.rows() == [("1", "0", "a", 1), ("2", "0", "b", 0)]


def test_missing_column_and_wrong_input_type():
    df = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "rel": [1]})
    with pytest.raises(ParameterError, match=r"^`relevance` must be a column of the frame"):
        Qrels.from_df(df)
    with pytest.raises(ParameterError, match="`df` must be a polars or pandas DataFrame; got 'dict'"):
        Qrels.from_df({"query_id": ["1"]})
    with pytest.raises(ParameterError, match=r"^`d` must be a mapping"):
        Qrels.from_dict([("1", "a", 1)])
    with pytest.raises(ParameterError, match=r"^`d\['1'\]` must be a mapping"):
        Qrels.from_dict({"1": [("a", 1)]})
    with pytest.raises(ParameterError, match=r"^`records\[1\]` must be a tuple"):
        Qrels.from_records([("1", "a", 1), ("1", "a")])


def test_input_frame_not_modified():
    df = pl.DataFrame({"query_id": [1, 1, 1], "doc_id": ["a", "b", "a"], "relevance": [1.0, 0.0, 2.0]})
    snapshot = df.clone()
    Qrels.from_df(df, on_duplicate="max")
    Run.from_df(df.rename({"relevance": "score"}), on_duplicate="last")
    assert_frame_equal(df, snapshot)


def test_dict_not_modified():
    d = {"1": {"a": 1, "b": 2}}
    Qrels.from_dict(d)
    Run.from_dict(d)
    assert d == {"1": {"a": 1, "b": 2}}


@pytest.mark.parametrize(
    "policy,expected",
    [("first", [("1", "a", 1), ("1", "b", 0)]), ("last", [("1", "b", 0), ("1", "a", 0)]), ("max", [("1", "b", 0), ("1", "a", 3)])],
)
def test_qrels_from_df_duplicate_policies(policy, expected):
    df = pl.DataFrame({"query_id": ["1", "1", "1", "1"], "doc_id": ["a", "b", "a", "a"], "relevance": [1, 0, 3, 0]})
    assert Qrels.from_df(df, on_duplicate=policy).df.select("query_id", "doc_id", "relevance").rows() == expected
    assert Qrels.from_records(df.rows(), on_duplicate=policy).df.select("query_id", "doc_id", "relevance").rows() == expected


def test_duplicate_errors_in_memory():
    df = pl.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 3]})
    with pytest.raises(DuplicateEntryError) as ei:
        Qrels.from_df(df)
    assert str(ei.value) == "<DataFrame>:3: duplicate (query_id, doc_id); first seen on row 1 (query_id '1', doc_id 'a')"
    with pytest.raises(DuplicateEntryError, match=r"^<records>:2: duplicate .* first seen on record 1"):
        Run.from_records([("1", "a", 1.0), (1, "a", 2.0)])
    # two keys that are different objects but the same id string
    with pytest.raises(DuplicateEntryError, match=r"^<dict>: duplicate \(query_id, doc_id\) \(query_id '1', doc_id 'a'\)$"):
        Qrels.from_dict({1: {"a": 1}, "1": {"a": 0}})
    with pytest.raises(DuplicateEntryError):
        Run.from_dict({"1": {7: 1.0, "7": 2.0}})


def test_empty_containers_allowed_in_memory():
    for q in (Qrels.from_dict({}), Qrels.from_records([]), Qrels.from_dict({"1": {}})):
        assert len(q) == 0 and q.query_ids == [] and q.to_dict() == {}
        assert q.df.schema == pl.Schema(
            {"query_id": pl.String, "iteration": pl.String, "doc_id": pl.String, "relevance": pl.Int64}
        )
    r = Run.from_dict({})
    assert len(r) == 0 and r.name == "irmetrics" and r.df["score"].dtype == pl.Float64
    r = Run.from_df(pl.DataFrame({"query_id": [], "doc_id": [], "score": []}, schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}))
    assert len(r) == 0 and r.name == "irmetrics"


def test_qrels_constructor_validates():
    good = Qrels.from_dict(QRELS_DICT).df
    assert_frame_equal(Qrels(good).df, good)
    with pytest.raises(ParameterError, match="`df.schema` must be exactly"):
        Qrels(good.drop("iteration"))
    with pytest.raises(ParameterError, match="`df` must be a polars DataFrame"):
        Qrels({"a": 1})
    with pytest.raises(DuplicateEntryError):
        Qrels(pl.concat([good, good.head(1)]))
    with pytest.raises(InputFormatError, match="missing doc_id"):
        Qrels(good.with_columns(doc_id=pl.lit(None, dtype=pl.String)))


# ---------------------------------------------------------------------------------------
# Run
# ---------------------------------------------------------------------------------------


def test_run_from_dict():
    r = Run.from_dict(RUN_DICT)
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
    assert r.name == "irmetrics"
    assert r.df["iteration"].unique().to_list() == ["Q0"]
    assert r.df["rank"].null_count() == len(r) == 5
    assert r.df["run_id"].unique().to_list() == ["irmetrics"]
    assert r.to_dict() == RUN_DICT
    assert r.query_ids == ["301", "0301", "302"]
    assert repr(r) == "Run(name='irmetrics', n_queries=3, n_rows=5)"
    assert Run.from_dict(RUN_DICT, name="bm25").df["run_id"].unique().to_list() == ["bm25"]


def test_run_constructors_agree():
    rows = [(q, d, s) for q, docs in RUN_DICT.items() for d, s in docs.items()]
    a = Run.from_dict(RUN_DICT)
    b = Run.from_records(rows)
    c = Run.from_df(pl.DataFrame(rows, schema=["qid", "docno", "sim"], orient="row"), query_id="qid", doc_id="docno", score="sim")
    for other in (b, c):
        assert_frame_equal(a.df, other.df)
        assert other.name == "irmetrics"


def test_run_from_records_six_tuples_and_name():
    r = Run.from_records([("1", "Q0", "a", 1, 2.5, "x"), ("1", "Q0", "b", None, 1.5, "y")])
    assert r.df.rows() == [("1", "Q0", "a", 1, 2.5, "x"), ("1", "Q0", "b", None, 1.5, "y")]
    assert r.name == "y"
    assert Run.from_records([("1", "a", 1.0)], name="n").df["run_id"].to_list() == ["n"]
    with pytest.raises(ParameterError, match="`rank` must be an integer or None"):
        Run.from_records([("1", "Q0", "a", 1.5, 2.5, "x")])


def test_run_from_df_optional_columns_and_name():
    df = pl.DataFrame(
        {
            "query_id": ["1", "1"],
            "iteration": ["it", None],
            "doc_id": ["a", "b"],
            "rank": [1, None],
            "score": [1, 2],
            "run_id": ["r1", "r2"],
        }
    )
    r = Run.from_df(df)
    assert r.df.rows() == [("1", "it", "a", 1, 1.0, "r1"), ("1", "Q0", "b", None, 2.0, "r2")]
    assert r.name == "r2"
    assert Run.from_df(df, name="explicit").name == "explicit"
    r = Run.from_df(df.drop("run_id", "rank"), name="mine")
    assert r.df["run_id"].to_list() == ["mine", "mine"] and r.df["rank"].null_count() == 2
    with pytest.raises(ParameterError, match="`rank column` must be of an integer dtype"):
        Run.from_df(df.with_columns(rank=pl.lit(1.5)))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -np.inf, np.float32("nan")])
def test_non_finite_scores_rejected(bad):
    with pytest.raises(InputFormatError) as ei:
        Run.from_dict({"q": {"a": 1.0, "zz": bad}})
    assert (ei.value.query_id, ei.value.doc_id) == ("q", "zz")
    assert "score must be finite" in str(ei.value)
    df = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "zz"], "score": [1.0, float(bad)]})
    with pytest.raises(InputFormatError, match=r"^<DataFrame>:2: score must be finite"):
        Run.from_df(df)


@pytest.mark.parametrize("bad", ["1.0", None, [1.0], object()])
def test_non_numeric_scores_rejected(bad):
    with pytest.raises(InputFormatError, match="score must be a real number") as ei:
        Run.from_dict({"q": {"a": 1.0, "zz": bad}})
    assert ei.value.doc_id == "zz"


def test_score_column_must_be_numeric():
    with pytest.raises(ParameterError, match="`score column` must be of a numeric dtype; got String"):
        Run.from_df(pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": ["1.0"]}))


def test_run_from_df_duplicates():
    df = pl.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "a"], "score": [1.0, 5.0, 3.0]})
    assert Run.from_df(df, on_duplicate="max").df.select("doc_id", "score").rows() == [("b", 5.0), ("a", 3.0)]
    assert Run.from_df(df, on_duplicate="first").df.select("doc_id", "score").rows() == [("a", 1.0), ("b", 5.0)]
    with pytest.raises(ParameterError, match="`on_duplicate`"):
        Run.from_df(df, on_duplicate="sum")


def test_run_constructor_validates():
    good = Run.from_dict(RUN_DICT).df
    assert Run(good).name == "irmetrics"
    assert Run(good, name="x", path="p.txt").path == "p.txt"
    with pytest.raises(InputFormatError, match="score must be finite"):
        Run(good.with_columns(score=pl.lit(float("nan"))))
    with pytest.raises(ParameterError):
        Run(good.select("query_id", "doc_id", "score"))


def test_read_classmethods(tmp_path):
    p = tmp_path / "r.txt"
    p.write_text("1 Q0 a 1 1 r\n1 Q0 a 2 2 r\n")
    assert Run.read(p, on_duplicate="max").to_dict() == {"1": {"a": 2.0}}
    p = tmp_path / "q.txt"
    p.write_text("1 0 a 1\n")
    q = Qrels.read(p)
    assert q.path == str(p) and repr(q) == f"Qrels(n_queries=1, n_judgments=1, path={str(p)!r})"


def test_run_to_dict_matches_file_reader():
    r = read_run_bytes(b"1 Q0 a 1 1.5 r\n2 Q0 b 1 -2 r\n1 Q0 c 2 0.25 r\n")
    assert r.to_dict() == {"1": {"a": 1.5, "c": 0.25}, "2": {"b": -2.0}}


def test_query_ids_returns_a_copy():
    q = Qrels.from_dict(QRELS_DICT)
    q.query_ids.append("x")
    assert q.query_ids == ["301", "0301", "302"]


# ---------------------------------------------------------------------------------------
# pandas (optional)
# ---------------------------------------------------------------------------------------


def test_pandas_frames():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"qid": [301, 301, 302], "docno": ["a", "b", "a"], "rel": [1.0, 0.0, 2.0]})
    snapshot = df.copy()
    q = Qrels.from_df(df, query_id="qid", doc_id="docno", relevance="rel")
    assert q.df.rows() == [("301", "0", "a", 1), ("301", "0", "b", 0), ("302", "0", "a", 2)]
    assert df.equals(snapshot)
    r = Run.from_df(df.rename(columns={"rel": "score"}), query_id="qid", doc_id="docno")
    assert r.to_dict() == {"301": {"a": 1.0, "b": 0.0}, "302": {"a": 2.0}}
    with pytest.raises(InputFormatError, match="relevance must be an integer"):
        Qrels.from_df(df.assign(rel=[1.0, 0.5, 2.0]), query_id="qid", doc_id="docno", relevance="rel")


def test_pandas_extension_dtypes():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {
            "query_id": pd.Categorical(["x", "y", "x"]),
            "doc_id": pd.array(["a", "b", "c"], dtype="string"),
            "relevance": pd.array([1, 0, 2], dtype="Int64"),
        }
    )
    assert Qrels.from_df(df).df.rows() == [("x", "0", "a", 1), ("y", "0", "b", 0), ("x", "0", "c", 2)]
    with pytest.raises(InputFormatError, match=r"^<DataFrame>:2: "):
        Qrels.from_df(df.assign(relevance=pd.array([1, None, 2], dtype="Int64")))
    with pytest.raises(InputFormatError, match=r"^<DataFrame>:3: missing query_id$"):
        Qrels.from_df(df.assign(query_id=["1", "2", None]))
    r = Run.from_df(df.rename(columns={"relevance": "score"}).assign(score=pd.array([1.5, 2.5, 0.0], dtype="Float64")))
    assert r.df["score"].to_list() == [1.5, 2.5, 0.0]


# ---------------------------------------------------------------------------------------
# exceptions and _validation
# ---------------------------------------------------------------------------------------


def test_exception_hierarchy():
    for cls in (InputFormatError, DuplicateEntryError, UnknownMeasureError, ParameterError, ShapeError):
        assert issubclass(cls, IrMetricsError) and issubclass(cls, ValueError)
    assert issubclass(DuplicateEntryError, InputFormatError)


@pytest.mark.parametrize(
    "kw,text",
    [
        (dict(path="f.txt", line=3), "f.txt:3: bad"),
        (dict(path="f.txt"), "f.txt: bad"),
        (dict(path="f.txt", line=3, query_id="q"), "f.txt:3: bad (query_id 'q')"),
        (dict(path="f.txt", line=3, query_id="q", doc_id="d"), "f.txt:3: bad (query_id 'q', doc_id 'd')"),
        (dict(), "<input>: bad"),
    ],
)
def test_input_format_error_str(kw, text):
    e = InputFormatError("bad", **kw)
    assert str(e) == text and e.reason == "bad"
    e2 = pickle.loads(pickle.dumps(e))
    assert str(e2) == text and (e2.path, e2.line) == (e.path, e.line)
    d = pickle.loads(pickle.dumps(DuplicateEntryError("dup", path="x", line=1)))
    assert type(d) is DuplicateEntryError and d.line == 1


def test_unknown_measure_error():
    e = UnknownMeasureError("mapp", ["map", "gm_map"])
    assert e.suggestions == ["map", "gm_map"] and e.name == "mapp"
    assert str(e) == "unknown measure 'mapp'; did you mean 'map' or 'gm_map'?"
    assert str(UnknownMeasureError("x")) == "unknown measure 'x'."
    assert str(UnknownMeasureError("x", ("P",))) == "unknown measure 'x'; did you mean 'P'?"


def test_validation_template():
    assert v.check_choice("mode", "a", ["a", "b"]) == "a"
    with pytest.raises(ParameterError) as ei:
        v.check_choice("mode", "c", ("a", "b"))
    assert str(ei.value) == "`mode` must be one of 'a', 'b'; got 'c'."
    with pytest.raises(ParameterError, match="got True"):
        v.check_choice("k", True, (1, 2))
    with pytest.raises(ParameterError):
        v.check_choice("k", [1], (1, 2))  # unhashable is fine to test
    assert v.check_int("k", np.int64(3)) == 3 and type(v.check_int("k", np.int64(3))) is int
    for bad in (3.0, True, "3", None):
        with pytest.raises(ParameterError, match=r"^`k` must be an integer; got "):
            v.check_int("k", bad)
    with pytest.raises(ParameterError) as ei:
        v.check_positive_int("cutoff", 0)
    assert str(ei.value) == "`cutoff` must be a positive integer; got 0."
    with pytest.raises(ParameterError, match="`max_docs` must be a non-negative integer; got -1."):
        v.check_nonnegative_int("max_docs", -1)
    with pytest.raises(ParameterError, match="between 1 and 3"):
        v.check_int("k", 5, min=1, max=3)
    assert v.check_float("beta", 1) == 1.0
    with pytest.raises(ParameterError, match="`beta` must be a finite real number >= 0; got nan."):
        v.check_float("beta", math.nan, min=0)
    with pytest.raises(ParameterError):
        v.check_float("beta", True)
    assert v.check_float("x", math.inf, finite=False) == math.inf
    assert v.check_bool("flag", np.bool_(True)) is True
    with pytest.raises(ParameterError, match="`flag` must be True or False; got 1."):
        v.check_bool("flag", 1)
    assert v.check_str("s", "x") == "x"
    with pytest.raises(ParameterError, match="`s` must be a non-empty string; got ''."):
        v.check_str("s", "")
    assert str(v.parameter_error("p", "positive", -2)) == "`p` must be positive; got -2."
