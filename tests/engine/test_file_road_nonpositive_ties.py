"""The file road's tie order when every measure asked reads codes <= 0 alike.

When ``irmetrics.evaluate.nonpositive_alike`` says so for the measures asked, the file
road leaves the tie groups whose codes differ only among codes <= 0 (unjudged, judged 0,
negative labels) in the run's order (engine/stream.py, ``_order_mixed_ties``). That is
exact only if no measure asked can tell those entries apart or read their order: here
runs are dense with tied scores, unjudged, 0, negative and graded labels, cutoffs and
``max_docs`` that fall inside tie groups, measures drawn from the listed ones and from
others that read judgedness or gain tables; every value must be the one the road gives
with the shortcut off (which tests/engine/test_file_road_ties.py holds to the full sort),
on 1 and 4 threads, with chunks cut anywhere, from the file and from a table. Planted bugs fail it: ``bpref`` or
``num_nonrel_judged_ret`` listed as alike, or ``ndcg`` with a gain table let through.
The grid's fan-out road (one run, several qrels: ``evaluate_each``) is held to the same
rule, and ``unjudged="bounds"`` (an unjudged entry may be relevant) turns the shortcut off.
"""

from __future__ import annotations

import os
import sys
import tempfile
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from irmetrics import Evaluator
from irmetrics.io.trec import read_run
from irmetrics.measures.parse import parse_measures
from tests._file_road import plain_chunk_bytes, write_texts

import irmetrics.evaluate  # noqa: F401  (the module, which the name `evaluate` hides)

EVALUATE = sys.modules["irmetrics.evaluate"]

#: Measures listed as reading codes <= 0 alike, at cutoffs that fall inside tie groups.
ALIKE = ["map", "map_cut.2", "Rprec", "recip_rank", "P.1", "recall.3", "success.1",
         "ndcg", "ndcg_cut.2", "num_ret", "num_rel", "num_rel_ret"]
#: Measures that tell unjudged from judged non-relevant entries, or give label 0 a gain.
TELLING = ["bpref", "num_nonrel_judged_ret", "infAP", "judged_cut.1", "ndcg.0=2"]


@st.composite
def tied_runs(draw):
    """Qrels and run text whose queries rank their documents with few distinct scores,
    most of them unjudged or judged non-relevant (as in a deep run)."""
    queries = [f"q{i}" for i in range(draw(st.integers(1, 3)))]
    qrels, lines = [], []
    for q in queries:
        docs = [f"d{k}" for k in draw(st.lists(st.integers(0, 30), unique=True, min_size=1,
                                                max_size=8))]
        for d in docs:
            label = draw(st.sampled_from([None, None, -1, 0, 0, 1, 2]))
            if label is not None:
                qrels.append(f"{q} 0 {d} {label}\n")
        scores = sorted((draw(st.sampled_from([1.0, 1.0, 2.0])) for _ in docs), reverse=True)
        lines += [f"{q} Q0 {d} {rank} {s} run\n" for rank, (d, s) in enumerate(zip(docs, scores))]
    if not qrels:
        qrels.append(f"{queries[0]} 0 d0 1\n")
    return "".join(qrels), "".join(lines)


def _values(qrels_path, run_path, measures, options, threads, *, shortcut, table):
    patch = mock.patch.object(EVALUATE, "nonpositive_alike", lambda *a: False) \
        if not shortcut else mock.patch.dict({})
    run = read_run(run_path).df if table else run_path
    with patch:
        results = Evaluator(qrels_path, measures, threads=threads, **options).evaluate(run)
    assert results.road == ("table" if table else "file")  # the bounded roads
    return {name: np.asarray(results.values(name)).tobytes() for name in results.names}


#: A tie of a judged 0 (d1) and an unjudged entry (d2) at the top, in the run's order
#: (doc ids ascending): every measure of TELLING gives another value once it is reordered.
TIE_AT_TOP = ("q0 0 d1 0\nq0 0 d3 1\n",
              "q0 Q0 d1 1 2.0 r\nq0 Q0 d2 2 2.0 r\nq0 Q0 d3 3 1.0 r\n")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tied_runs(), threads=st.sampled_from([1, 4]),
       chunk_bytes=st.sampled_from([1, 40, 0]),
       measures=st.lists(st.sampled_from(ALIKE), max_size=2, unique=True).flatmap(
           lambda alike: st.sampled_from(ALIKE + TELLING).map(lambda m: sorted({m, *alike}))),
       level=st.sampled_from([1, 1, 2, 0]), max_docs=st.sampled_from([None, None, 2, 3]),
       complete=st.booleans(), table=st.booleans())
@example(data=TIE_AT_TOP, threads=1, chunk_bytes=0, measures=["P.2"], level=1,
         max_docs=None, complete=False, table=False)
@example(data=TIE_AT_TOP, threads=1, chunk_bytes=0, measures=["ndcg.0=2"], level=1,
         max_docs=None, complete=False, table=True)
@example(data=TIE_AT_TOP, threads=4, chunk_bytes=1, measures=["judged_cut.1", "map"],
         level=1, max_docs=None, complete=False, table=False)
@example(data=TIE_AT_TOP, threads=1, chunk_bytes=0, measures=["P.1"], level=0,
         max_docs=None, complete=False, table=True)
@example(data=TIE_AT_TOP, threads=1, chunk_bytes=0, measures=["num_nonrel_judged_ret"],
         level=1, max_docs=1, complete=False, table=False)
def test_the_shortcut_changes_no_value(data, threads, chunk_bytes, measures, level,
                                       max_docs, complete, table):
    qrels_text, run_text = data
    options = dict(relevance_level=level, max_docs=max_docs, complete=complete)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_texts(tmp, qrels=qrels_text, run=run_text)
        with plain_chunk_bytes(chunk_bytes):
            on = _values(*paths, measures, options, threads, shortcut=True, table=table)
            off = _values(*paths, measures, options, threads, shortcut=False, table=table)
    assert on == off


def test_which_requests_take_the_shortcut():
    def alike(names, level=1, judged_only=False, **unjudged):
        return EVALUATE.nonpositive_alike(parse_measures(names), level, judged_only,
                                          **unjudged)

    assert alike(["map", "P.10", "recall.1000", "recip_rank", "ndcg", "ndcg_cut.10"])
    assert alike(["nDCG@10", "AP", "R@100", "RR"])  # friendly names, same kernels
    assert not alike(["map"], level=0)  # label 0 is relevant
    assert not alike(["map"], judged_only=True)  # unjudged entries removed
    assert not alike(["map", "bpref"])
    assert not alike(["ndcg.1=3"])  # a gain table
    assert not alike(["P(model='cwl')@10"])  # options
    assert not alike(["judged_cut.10"])
    assert alike(["map"], unjudged="zero")
    assert not alike(["map", "P.10"], unjudged="bounds")  # an unjudged entry may be relevant


def test_bounds_keep_the_full_tie_order():
    # Under unjudged="bounds" the upper bound counts an unjudged entry as relevant: the
    # tie of d1 (judged 0) and d2 (unjudged) at the top then decides P.1's upper bound,
    # so the predicate must say no (forcing it on gives another value: the check bites).
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_texts(tmp, qrels=TIE_AT_TOP[0], run=TIE_AT_TOP[1])
        found = {}
        for forced in (None, True, False):
            patch = mock.patch.dict({}) if forced is None else \
                mock.patch.object(EVALUATE, "nonpositive_alike", lambda *a, f=forced: f)
            with patch:
                results = Evaluator(paths[0], ["P.1"], unjudged="bounds").evaluate(paths[1])
            assert results.road == "file"
            found[forced] = {n: np.asarray(results.values(n)).tolist() for n in results.names}
    assert found[None] == found[False]
    assert found[True] != found[False]


def test_a_tie_group_of_unjudged_and_non_relevant_keeps_the_run_order():
    # q1: d (label 1) first, then a (judged 0) and b (unjudged) tied at 1.0. With the
    # shortcut their codes stay in the run's order (a, b); without it, doc ids descending
    # (b, a). A tie of a relevant entry with others is ordered either way.
    import polars as pl

    from irmetrics.engine.pack import encode_qrels
    from irmetrics.engine.stream import evaluate_run_file

    qrels = encode_qrels(pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "d"],
                                       "relevance": [0, 1]}))

    def codes(lists):  # one query: its codes as columns
        return {f"at{i}": lists.code[i:i + 1] for i in range(len(lists.code))}

    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run")
        with open(path, "w") as fh:
            fh.write("q1 Q0 d 1 2.0 r\nq1 Q0 a 2 1.0 r\nq1 Q0 b 3 1.0 r\n"
                     "q1 Q0 e 4 0.5 r\nq1 Q0 f 5 0.5 r\n")
        for alike in (True, False):
            values = evaluate_run_file(qrels, path, codes, nonpositive_alike=alike, threads=1)
            found[alike] = [int(v[0]) for v in values.columns.values()]
    assert found[True] == [1, 0, -1, -1, -1]
    assert found[False] == [1, -1, 0, -1, -1]


def _relabelled(qrels_text: str, labels: dict) -> str:
    """The qrels with each label replaced by ``labels[label]`` (a second judgment set of
    the same pool, as a grid holds)."""
    return "".join(f"{q} 0 {d} {labels[int(label)]}\n" for q, _, d, label in
                   (line.split() for line in qrels_text.splitlines()))


def _fanout_values(paths, measures, options, threads, *, shortcut, table):
    """Values of the run against both qrels through the fan-out road (each qrels packed
    on its own: no stacking), every output of each, as bytes."""
    patch = mock.patch.dict({}) if shortcut is None else \
        mock.patch.object(EVALUATE, "nonpositive_alike", lambda *a: shortcut)
    run = read_run(paths[-1]).df if table else paths[-1]
    evaluators = [Evaluator(path, measures[i], threads=threads, **options)
                  for i, path in enumerate(paths[:2])]
    with patch:
        found = EVALUATE.evaluate_each(evaluators, run, stacked=None)
    assert {r.road for r in found} == {"table" if table else "file"}
    return [{name: np.asarray(r.values(name)).tobytes() for name in r.names} for r in found]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tied_runs(), labels=st.permutations([-1, 0, 1, 2]),
       threads=st.sampled_from([1, 4]), chunk_bytes=st.sampled_from([1, 40, 0]),
       measures=st.lists(st.lists(st.sampled_from(ALIKE), min_size=1, max_size=2, unique=True),
                         min_size=2, max_size=2),
       telling=st.sampled_from([None, *TELLING]), level=st.sampled_from([1, 1, 2, 0]),
       max_docs=st.sampled_from([None, None, 2, 3]), table=st.booleans())
@example(data=TIE_AT_TOP, labels=[-1, 0, 1, 2], threads=1, chunk_bytes=0,
         measures=[["P.1"], ["map"]], telling="judged_cut.1", level=1, max_docs=None,
         table=False)
@example(data=TIE_AT_TOP, labels=[-1, 0, 1, 2], threads=4, chunk_bytes=1,
         measures=[["P.1"], ["map"]], telling="num_nonrel_judged_ret", level=1, max_docs=1,
         table=True)
def test_the_fanout_shortcut_changes_no_value(data, labels, threads, chunk_bytes, measures,
                                              telling, level, max_docs, table):
    # The grid's fan-out road (several qrels, the run read once) takes the same shortcut
    # when every Evaluator's measures allow it; a measure that tells codes <= 0 apart
    # in either Evaluator turns it off for all.
    qrels_text, run_text = data
    second = _relabelled(qrels_text, dict(zip([-1, 0, 1, 2], labels)))
    if telling is not None:
        measures = [measures[0], sorted({telling, *measures[1]})]
    options = dict(relevance_level=level, max_docs=max_docs)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_texts(tmp, qrels=qrels_text, second=second, run=run_text)
        with plain_chunk_bytes(chunk_bytes):
            on = _fanout_values(paths, measures, options, threads, shortcut=None, table=table)
            off = _fanout_values(paths, measures, options, threads, shortcut=False, table=table)
    assert on == off


@pytest.mark.parametrize("table", [False, True])
def test_the_fanout_road_reads_the_flag(table):
    # Forced on with judged_cut.1 (which tells the judged 0 of d1 from the unjudged d2
    # tied with it at the top), the fan-out road gives another value: the flag reaches
    # its packers, so the test above would see a predicate that let such a measure through.
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_texts(tmp, qrels=TIE_AT_TOP[0], second=TIE_AT_TOP[0], run=TIE_AT_TOP[1])
        measures = [["judged_cut.1"], ["judged_cut.1"]]
        forced = _fanout_values(paths, measures, {}, 1, shortcut=True, table=table)
        real = _fanout_values(paths, measures, {}, 1, shortcut=None, table=table)
        off = _fanout_values(paths, measures, {}, 1, shortcut=False, table=table)
    assert real == off
    assert forced != off
