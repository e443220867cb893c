"""Columnar inputs (io/columnar.py): Parquet, Arrow IPC, LazyFrames and DataFrames give
what the same run and qrels give as dicts, bit for bit; column names by default, by
PyTerrier's names or given; errors name the file, the column and the row."""

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics
from irmetrics import Evaluator
from irmetrics.cli import main
from irmetrics.exceptions import (DuplicateEntryError, InputFormatError, ParameterError,
                                  ParameterTypeError)
from irmetrics.io import columnar

from tests._cases import qrels_and_run
from tests.io.test_scale import same_results

MEASURES = ["all_trec", "nDCG@3", "P@2"]

#: Column names of a table: our defaults, PyTerrier's, and names only a mapping finds.
NAMINGS = {
    "default": (("query_id", "doc_id", "score"), ("query_id", "doc_id", "relevance")),
    "pyterrier": (("qid", "docno", "score"), ("qid", "docno", "label")),
    "custom": (("topic", "pid", "sim"), ("topic", "pid", "grade")),
}


def run_table(run: dict, names, rng) -> pl.DataFrame:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    rng.shuffle(rows)  # queries split over the table, scores in no order
    q, d, s = names
    return pl.DataFrame(rows, schema={q: pl.String, d: pl.String, s: pl.Float64},
                        orient="row")


def qrels_table(qrels: dict, names) -> pl.DataFrame:
    rows = [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    q, d, r = names
    return pl.DataFrame(rows, schema={q: pl.String, d: pl.String, r: pl.Int64}, orient="row")


def write_table(frame: pl.DataFrame, path):
    if str(path).endswith(".parquet"):
        frame.write_parquet(path, row_group_size=4)
    else:
        frame.write_ipc(path)
    return path


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=qrels_and_run(max_queries=5, max_retrieved=10), seed=st.integers(0, 2**16),
       naming=st.sampled_from(sorted(NAMINGS)),
       kind=st.sampled_from(["parquet", "arrow", "lazy"]),
       batch=st.sampled_from([1, 3, 1 << 20]), complete=st.booleans(),
       max_docs=st.sampled_from([None, 2]), ties=st.sampled_from(["trec_eval", "input_order"]))
def test_columnar_runs_and_qrels_equal_the_dict_road(tmp_path, monkeypatch, data, seed,
                                                       naming, kind, batch, complete, max_docs,
                                                       ties):
    qrels, run = data
    run = {q: d for q, d in run.items() if d}
    if not run:
        return
    run_names, qrels_names = NAMINGS[naming]
    runs = run_table(run, run_names, np.random.default_rng(seed))
    judged = qrels_table(qrels, qrels_names)
    if kind == "lazy":
        run_source, qrels_source = runs.lazy(), judged.lazy()
    else:
        run_source = write_table(runs, tmp_path / f"run.{kind}")
        qrels_source = write_table(judged, tmp_path / f"qrels.{kind}")
    monkeypatch.setattr(columnar, "BATCH_ROWS", batch)
    columns = {}
    if naming == "custom":
        columns = dict(run_columns=run_names, qrels_columns=dict(zip(
            ("query_id", "doc_id", "relevance"), qrels_names)))
    options = dict(complete=complete, max_docs=max_docs, ties=ties)
    got = Evaluator(qrels_source, MEASURES, **options, **columns).evaluate_unchecked(
        run_source)
    in_table_order = {}  # the table's row order, which input_order keeps inside ties
    for q, d, s in runs.rows():
        in_table_order.setdefault(q, {})[d] = s
    want = Evaluator(qrels, MEASURES, **options).evaluate_unchecked(in_table_order)
    want.run_name = got.run_name = "same"  # a dict run has no run_id column either
    same_results(got, want)


def test_a_parquet_run_is_streamed_in_batches(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(0, 30, 4)}
             for i in range(40)}
    run = {q: {f"d{j}": float(rng.random()) for j in range(30)} for q in qrels}
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]  # grouped
    path = tmp_path / "run.parquet"
    pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row").write_parquet(
        path, row_group_size=100)
    monkeypatch.setattr(columnar, "BATCH_ROWS", 100)
    seen = []
    original = Evaluator._columns
    monkeypatch.setattr(Evaluator, "_columns",
                        lambda self, lists: seen.append(lists.code.size) or original(self, lists))
    got = irmetrics.evaluate(qrels, path, ["map", "ndcg_cut.10"])
    assert len(seen) >= 10 and max(seen) <= 100 + 30
    monkeypatch.undo()
    same_results(got, irmetrics.evaluate(qrels, run, ["map", "ndcg_cut.10"]))


def test_integer_and_categorical_ids_read_as_their_text(tmp_path):
    runs = pl.DataFrame({"qid": [301, 301, 302], "docno": ["a", "b", "a"],
                         "score": [3, 2, 1]}).with_columns(pl.col("docno").cast(pl.Categorical))
    path = write_table(runs, tmp_path / "run.arrow")
    res = irmetrics.evaluate({"301": {"b": 1}, "302": {"a": 1}}, path, ["recip_rank"])
    assert res.to_dict() == {"301": {"recip_rank": 0.5}, "302": {"recip_rank": 1.0}}


def test_run_id_column_names_the_run(tmp_path):
    runs = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 2.0],
                         "run_id": ["x", "bm25"]})
    path = write_table(runs, tmp_path / "run.parquet")
    res = irmetrics.evaluate({"q": {"a": 1}}, path, ["runid", "map"])
    assert res.run_name == "bm25" and res.aggregate()["map"] == 0.5


@pytest.mark.parametrize("frame, columns, message", [
    (pl.DataFrame({"q": ["1"], "doc_id": ["a"], "score": [1.0]}), None,
     "no query_id column: neither 'query_id' nor 'qid'"),
    (pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}),
     {"query_id": "topic", "doc_id": "doc_id", "score": "score"},
     "no column 'topic' (given for query_id)"),
    (pl.DataFrame({"query_id": [1.5], "doc_id": ["a"], "score": [1.0]}), None,
     "column 'query_id' (query_id) must hold strings or integers; got Float64"),
    (pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": ["high"]}), None,
     "column 'score' (score) must hold numbers; got String"),
])
def test_column_errors_name_the_file_and_the_column(tmp_path, frame, columns, message):
    path = write_table(frame, tmp_path / "run.parquet")
    with pytest.raises(InputFormatError) as err:
        irmetrics.evaluate({"1": {"a": 1}}, path, ["map"], run_columns=columns)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)


@pytest.mark.parametrize("batch", [2, 1 << 20])
@pytest.mark.parametrize("bad, message", [
    ({"score": None}, "run.parquet:5: missing score (column 'score') (query_id 'q2',"
                      " doc_id 'd4')"),
    ({"doc_id": None}, "run.parquet:5: missing doc_id (column 'doc_id') (query_id 'q2')"),
    ({"score": float("nan")}, "run.parquet:5: score must be finite, found"),
    ({"score": float("inf")}, "run.parquet:5: score must be finite, found"),
])
def test_row_errors_name_the_file_column_and_row(tmp_path, monkeypatch, batch, bad, message):
    rows = {"query_id": ["q1", "q1", "q2", "q2", "q2", "q3"],
            "doc_id": ["d1", "d2", "d1", "d3", "d4", "d1"],
            "score": [3.0, 2.0, 1.0, 0.5, 0.25, 1.0]}
    for column, value in bad.items():
        rows[column][4] = value
    path = write_table(pl.DataFrame(rows), tmp_path / "run.parquet")
    monkeypatch.setattr(columnar, "BATCH_ROWS", batch)
    with pytest.raises(InputFormatError) as err:
        irmetrics.evaluate({"q1": {"d1": 1}}, path, ["map"])
    assert str(err.value).startswith(str(tmp_path)) and message in str(err.value)


def test_duplicate_pairs_and_bad_labels_name_the_row(tmp_path):
    runs = pl.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "a"],
                         "score": [3.0, 2.0, 1.0]})
    path = write_table(runs, tmp_path / "run.parquet")
    with pytest.raises(DuplicateEntryError, match=r"run\.parquet:3: .*'a'"):
        irmetrics.evaluate({"q": {"a": 1}}, path, ["map"])
    qrels = write_table(pl.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"],
                                      "label": [1.0, 0.5]}), tmp_path / "qrels.parquet")
    with pytest.raises(InputFormatError, match=r"qrels\.parquet:2: relevance must be an integer"):
        irmetrics.evaluate(qrels, {"q": {"a": 1.0}}, ["map"])


def test_unreadable_and_missing_files(tmp_path):
    fake = tmp_path / "run.parquet"
    fake.write_text("q Q0 a 1 1.0 r\n")
    with pytest.raises(InputFormatError, match=r"run\.parquet: not a readable Parquet file"):
        irmetrics.evaluate({"q": {"a": 1}}, fake, ["map"])
    with pytest.raises(InputFormatError, match=r"nope\.arrow: no such file"):
        irmetrics.evaluate({"q": {"a": 1}}, tmp_path / "nope.arrow", ["map"])


def test_bad_column_specs_are_parameter_errors():
    for spec in (["qid", "docno"], {"query_id": "qid"}, 3, {"query_id": "", "doc_id": "d",
                                                            "score": "s"}):
        with pytest.raises(ParameterError, match="`run_columns` must be a dict"):
            Evaluator({"q": {"a": 1}}, ["map"], run_columns=spec)


def test_pandas_frames_with_pyterrier_names():
    pd = pytest.importorskip("pandas", reason="pandas frames are PyTerrier's")
    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 2.0],
                        "rank": [1, 0], "query": ["x", "x"]})
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1]})
    assert irmetrics.evaluate(qrels, run, ["map"]).aggregate()["map"] == 0.5


def test_compare_reads_parquet_runs(tmp_path):
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    paths = {}
    for name, scores in {"one": [2.0, 1.0], "two": [1.0, 2.0]}.items():
        frame = pl.DataFrame({"qid": ["q1", "q1", "q2", "q2"], "docno": ["a", "b", "a", "b"],
                              "score": scores + scores[::-1]})
        paths[name] = write_table(frame, tmp_path / f"{name}.parquet")
    cmp = irmetrics.compare(qrels, paths, ["recip_rank"], test="t")
    means = dict(cmp.means().select("system", "recip_rank").iter_rows())
    assert means == {"one": 1.0, "two": 0.5}


def test_cli_columnar_files_print_what_the_text_files_print(tmp_path, capsys):
    rng = np.random.default_rng(4)
    qrels = {f"{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(0, 20, 3)}
             for i in range(8)}
    run = {q: {f"d{j}": float(rng.integers(0, 5)) for j in range(20)} for q in qrels}
    write_table(qrels_table(qrels, ("qid", "docno", "label")), tmp_path / "qrels.parquet")
    write_table(run_table(run, ("topic", "pid", "sim"), rng).with_columns(
        pl.lit("r1").alias("run_id")), tmp_path / "run.feather")
    irmetrics.Qrels.from_dict(qrels).df.write_csv(tmp_path / "qrels.txt", separator=" ",
                                                  include_header=False)
    irmetrics.Run.from_dict(run, name="r1").df.with_columns(pl.lit(0).alias("rank")).write_csv(
        tmp_path / "run.txt", separator=" ", include_header=False)
    assert main(["eval", "-q", "-m", "all_trec", str(tmp_path / "qrels.txt"),
                 str(tmp_path / "run.txt")]) == 0
    want = capsys.readouterr().out
    assert main(["eval", "-q", "-m", "all_trec", "--run-columns", "topic,pid,sim",
                 str(tmp_path / "qrels.parquet"), str(tmp_path / "run.feather")]) == 0
    assert capsys.readouterr().out == want
    code = main(["eval", "-m", "map", "--run-columns", "topic,pid",
                 str(tmp_path / "qrels.parquet"), str(tmp_path / "run.feather")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "`--run-columns` must be" in err


def test_docs_scale_example_prints_what_it_says(tmp_path, monkeypatch, capsys):
    import re
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "scale.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "write_parquet" in b)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/scale.md", "exec"), {})
    printed = capsys.readouterr().out.strip()
    shown = re.search(r"print\(res\.aggregate\(\)\)\s+# (.*)", block).group(1)
    assert printed == shown


def test_cli_compare_reads_parquet_runs(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\nq3 0 a 1\n")
    for name, scores in {"one": [2.0, 1.0], "two": [1.0, 2.0]}.items():
        frame = pl.DataFrame({"qid": ["q1", "q1", "q2", "q2", "q3", "q3"],
                              "docno": ["a", "b"] * 3, "score": scores * 3})
        write_table(frame, tmp_path / f"{name}.parquet")
    code = main(["compare", "-m", "recip_rank", str(qrels), str(tmp_path / "one.parquet"),
                 str(tmp_path / "two.parquet")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "one.parquet" in out and "two.parquet" in out


@pytest.mark.parametrize("doc", ["a 5", "a\tb", "", "#x", "a\u00a0b"])
def test_ids_that_are_no_text_field_survive_a_split_table(tmp_path, monkeypatch, doc):
    # Query q1 split over the table: partitioned through text files, which cannot hold
    # such ids; the table is then read whole, never misread.
    runs = pl.DataFrame({"query_id": ["q1", "q2", "q1"], "doc_id": [doc, "b", "c"],
                         "score": [3.0, 2.0, 1.0], "run_id": ["r 1"] * 3})
    path = write_table(runs, tmp_path / "run.parquet")
    qrels = {"q1": {doc: 1, "c": 0}, "q2": {"b": 1}}
    monkeypatch.setattr(columnar, "BATCH_ROWS", 1)
    got = irmetrics.evaluate(qrels, path, ["map", "num_rel_ret", "runid"])
    want = irmetrics.evaluate(qrels, runs, ["map", "num_rel_ret", "runid"])
    same_results(got, want)
    assert got.to_dict()["q1"]["map"] == 1.0


def test_missing_column_message_names_each_candidate_once(tmp_path):
    """A run table without a score column: the default and PyTerrier name coincide
    ('score'), so the message names it once."""
    path = tmp_path / "run.parquet"
    pl.DataFrame({"qid": ["q"], "docno": ["d"], "rank": [1]}).write_parquet(path)
    with pytest.raises(InputFormatError) as info:
        irmetrics.evaluate({"q": {"d": 1}}, str(path), ["map"])
    message = str(info.value)
    assert "no score column among ['qid', 'docno', 'rank']" in message
    assert "nor 'score'" not in message


@pytest.mark.parametrize("which", ["run", "qrels"])
def test_an_object_with_columns_that_is_no_frame_is_a_clear_error(which):
    # Defect: an object with ``columns`` that is neither polars nor pandas (a pyarrow
    # Table) reached os.fspath: a bare "TypeError: expected str, bytes or os.PathLike".
    class Table:
        columns = ["query_id", "doc_id", "score", "relevance"]

    qrels, run = {"q1": {"a": 1}}, {"q1": {"a": 1.0}}
    args = (Table(), run) if which == "qrels" else (qrels, Table())
    with pytest.raises(ParameterTypeError, match=rf"^`{which}` must be a path, .*"
                       r"polars\.from_arrow\(table\)\); got <class '.*Table'>\.$"):
        irmetrics.evaluate(*args, "map")
