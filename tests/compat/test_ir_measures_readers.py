"""The drop-in's TREC readers on their fast roads: ``read_trec_qrels``/``read_trec_run``
hand the lines not yet yielded to the drop-in as one table, and a plain text is split by
polars' CSV reader; both must give exactly what the line-by-line roads give."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.compat import ir_measures as ours
from irmetrics.exceptions import InputFormatError
from irmetrics.io import prefs

NAMES = ("query_id", "iteration", "doc_id", "relevance")


def split_both(text: str, monkeypatch):
    """split_fields' answer (a frame or the error message) with and without the plain
    road."""
    out = []
    for plain in (True, False):
        with monkeypatch.context() as patch:
            if not plain:
                patch.setattr(prefs, "_plain_fields", lambda text, names: None)
            try:
                out.append(prefs.split_fields(text, NAMES, source="<text>"))
            except InputFormatError as err:
                out.append(str(err))
    return out


TOKENS = st.sampled_from(["q1", "0", "d1", "1", "#", "#x", "é", "2.5", "Q0"])
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\t", " \t"])
LINES = st.lists(TOKENS, min_size=0, max_size=5).flatmap(
    lambda toks: st.tuples(st.just(toks), st.lists(SEPARATORS, min_size=len(toks) + 1,
                                                    max_size=len(toks) + 1)))


def line_text(parts) -> str:
    tokens, seps = parts
    lead = seps[0] if seps[0] != " " else ""
    return lead + "".join(t + (s if i < len(tokens) - 1 else "") for i, (t, s) in
                          enumerate(zip(tokens, seps[1:])))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES.map(line_text), max_size=6), end=st.sampled_from(["", "\n", " \n"]))
def test_a_plain_text_splits_as_the_general_road_splits_it(lines, end, monkeypatch):
    fast, general = split_both("\n".join(lines) + end, monkeypatch)
    if isinstance(general, str):
        assert fast == general
    else:
        assert fast.schema == general.schema and fast.equals(general)


def test_the_usual_file_takes_the_plain_road(monkeypatch):
    text = "".join(f"q{i} 0 d{j} {j % 3}\n" for i in range(50) for j in range(20))
    calls = []
    real = prefs._plain_fields
    monkeypatch.setattr(prefs, "_plain_fields", lambda *a: calls.append(1) or real(*a))
    fast, general = split_both(text, monkeypatch)
    assert calls and fast.equals(general) and fast.height == 1000


QRELS = "q1 0 a 1\nq1 0 b 0\n\nq2 0 c 2\nq2 0 a 1\n"
RUN = "q1 Q0 a 1 0.5 r\nq1 Q0 b 2 0.25 r\nq2 Q0 a 1 1.0 r\nq2 Q0 c 2 1.0 r\n"


def test_readers_are_iterators_whose_rest_is_one_table():
    rows = ours.read_trec_qrels(QRELS)
    assert iter(rows) is rows
    first = next(rows)
    assert first == ours.Qrel("q1", "a", 1, "0")
    rest = rows.rest()
    assert rest.columns == ["query_id", "doc_id", "relevance", "iteration"]
    assert [ours.Qrel(*r) for r in rest.rows()] == list(ours.read_trec_qrels(QRELS))[1:]
    assert list(rows) == [] and rows.rest().height == 0  # consumed, as a generator
    with pytest.raises(InputFormatError):  # the file is read on first use, as a generator
        next(ours.read_trec_run("/no/such/file"))


@pytest.mark.parametrize("consumed", [0, 1, 3])
def test_a_reader_gives_what_its_tuples_give(consumed):
    measures = [ours.P @ 1, ours.AP, ours.nDCG @ 2, ours.RR @ 1, ours.RBP(rel=1),
                ours.define_byquery(lambda qrels, run: float(len(run)), name="Len")]
    qrels_rows, run_rows = ours.read_trec_qrels(QRELS), ours.read_trec_run(RUN)
    skipped = [next(run_rows) for _ in range(consumed)]
    assert len(skipped) == consumed
    want_run = list(ours.read_trec_run(RUN))[consumed:]
    got = ours.calc_aggregate(measures, qrels_rows, run_rows)
    want = ours.calc_aggregate(measures, list(ours.read_trec_qrels(QRELS)), want_run)
    assert got == want
    got = list(ours.iter_calc(measures, ours.read_trec_qrels(QRELS), iter(want_run)))
    assert got == list(ours.iter_calc(measures, ours.read_trec_qrels(QRELS),
                                      ours.read_trec_run(RUN) if not consumed else want_run))


def test_none_reads_as_nothing_as_in_ir_measures():
    # PyTerrier-style callers pass None for a missing file; ir_measures yields nothing.
    real = pytest.importorskip("ir_measures")
    for reader in ("read_trec_qrels", "read_trec_run"):
        assert list(getattr(ours, reader)(None)) == list(getattr(real, reader)(None)) == []
    assert list(ours.iter_calc([ours.P @ 5], ours.read_trec_qrels(None),
                               ours.read_trec_run(None))) == []
