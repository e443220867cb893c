"""Every in-memory input gives the numbers of the file road, bit for bit: dicts, polars
DataFrames and LazyFrames, pandas DataFrames (object, string and categorical columns,
integer ids, PyTerrier's column names) and records."""

import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.exceptions import InputFormatError, MissingQueriesWarning

from tests._cases import qrels_and_run, same_value

MEASURES = ["map", "P.1,3", "ndcg_cut.2,5", "recip_rank", "recall.4", "bpref", "ndcg",
            "num_rel_ret", "Rprec", "iprec_at_recall.0.5"]


def rows(qrels, run):
    """The case as rows, empty rankings left out (a file cannot hold them)."""
    qrel_rows = [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    run_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return qrel_rows, run_rows


def file_road(tmp_path, qrel_rows, run_rows, **options):
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrel_rows))
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s!r} irmetrics\n" for q, d, s in run_rows))
    return irm.evaluate(str(qrels_path), str(run_path), MEASURES, **options)


def assert_identical(ours, ref):
    assert ours.query_ids.tolist() == ref.query_ids.tolist()
    assert ours.names == ref.names
    for name in ref.names:
        assert all(map(same_value, ours.values(name), ref.values(name))), name
    ref_agg = ref.aggregate()
    assert ours.aggregate().keys() == ref_agg.keys()
    assert all(same_value(ours.aggregate()[k], v) for k, v in ref_agg.items()
               if not isinstance(v, str))


def inputs(qrel_rows, run_rows):
    """(name, qrels, run) of each in-memory road."""
    qp = pd.DataFrame(qrel_rows, columns=["query_id", "doc_id", "relevance"])
    rp = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    qrels_dict, run_dict = {}, {}
    for q, d, r in qrel_rows:
        qrels_dict.setdefault(q, {})[d] = r
    for q, d, s in run_rows:
        run_dict.setdefault(q, {})[d] = s
    yield "dicts", qrels_dict, run_dict
    yield "polars", pl.from_pandas(qp), pl.from_pandas(rp)
    yield "lazy", pl.from_pandas(qp).lazy(), pl.from_pandas(rp).lazy()
    yield "pandas", qp, rp
    yield "pandas strings", qp.astype({"query_id": "string", "doc_id": "string"}), \
        rp.astype({"query_id": "string", "doc_id": "category"})
    yield "pyterrier", qp.rename(columns={"query_id": "qid", "doc_id": "docno",
                                          "relevance": "label"}), \
        rp.rename(columns={"query_id": "qid", "doc_id": "docno"})
    yield "records", irm.Qrels.from_records(qrel_rows), irm.Run.from_records(run_rows)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=qrels_and_run(max_retrieved=12), options=st.sampled_from(
    [{}, {"max_docs": 2}, {"judged_only": True}, {"semantics": "pytrec_eval"},
     {"ties": "input_order"}, {"complete": True}]))
def test_every_road_gives_the_file_roads_numbers(tmp_path, case, options):
    qrel_rows, run_rows = rows(*case)
    if not any(q in {r[0] for r in qrel_rows} for q, _, _ in run_rows):
        return  # nothing in common: every road refuses alike (tested elsewhere)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        ref = file_road(tmp_path, qrel_rows, run_rows, **options)
        for name, qrels, run in inputs(qrel_rows, run_rows):
            if options.get("ties") == "input_order" and name == "pandas strings":
                continue  # a categorical column keeps its values, not their order
            assert_identical(irm.evaluate(qrels, run, MEASURES, **options), ref)


def test_integer_ids_in_frames_are_their_decimal_text(tmp_path):
    qrels = pd.DataFrame({"qid": [1, 1, 2], "docno": [10, 11, 10], "label": [1, 0, 2]})
    run = pd.DataFrame({"qid": [1, 1, 2], "docno": [11, 10, 10], "score": [2.0, 1.0, 0.5]})
    ref = file_road(tmp_path, [("1", "10", 1), ("1", "11", 0), ("2", "10", 2)],
                    [("1", "11", 2.0), ("1", "10", 1.0), ("2", "10", 0.5)])
    assert_identical(irm.evaluate(qrels, run, MEASURES), ref)


@pytest.mark.parametrize("run,match", [
    (pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", None], "score": [1.0, 2.0]}),
     r"<DataFrame>:2: missing doc_id"),
    (pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "score": [1.0, 2.0]}),
     r"<DataFrame>:2: duplicate"),
    (pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", 7.5], "score": [1.0, 2.0]}),
     r"doc_id"),
    (pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [np.nan]}),
     r"<DataFrame>:1: .*score"),
])
def test_bad_pandas_rows_are_named(run, match):
    with pytest.raises((InputFormatError, irm.exceptions.ParameterError), match=match):
        irm.evaluate({"q": {"a": 1}}, run, ["map"])


def test_pandas_frames_are_left_unchanged():
    run = pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    before = run.copy()
    irm.evaluate({"q": {"a": 1}}, run, ["map"])
    pd.testing.assert_frame_equal(run, before)
