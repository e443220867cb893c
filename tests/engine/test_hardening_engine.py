"""Regression tests for issue 16, engine and input side (items 1, 3, 7, 10, 13).

Each test uses the inputs the issue reports. Large labels are checked against the slow
reference loop (tests/reference/trec_eval_ref.py), against pytrec_eval where pytrec_eval
itself can hold the labels, and against the formula where neither can (trec_eval's
reference allocates one counter per level up to the largest label).
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.compat.pytrec_eval import RelevanceEvaluator
from irmetrics.engine.gains import DENSE_TABLE_LIMIT
from irmetrics.engine.ranked import label_histogram
from irmetrics.exceptions import ParameterError
from irmetrics.io import read_qrels_bytes

from tests._cases import qrels_and_run, same_value
from tests.reference import trec_eval_ref as ref


def _peak_mib(fn):
    """Peak traced allocation of ``fn()`` in MiB (numpy's buffers are traced)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


# --------------------------------------------------------------------------------------
# item 1: memory proportional to the number of distinct labels, not their values
# --------------------------------------------------------------------------------------

RUN_DE = {"q": {"d": 1.0, "e": 2.0}}


@pytest.mark.parametrize("big", [2**31, 2**40, 2**63 - 1])
def test_big_label_evaluates_in_small_memory(big):
    measures = ["map", "P.1", "ndcg", "dcg", "ndcg_cut.1", "rbp", "G", "Rndcg", "relstring"]
    peak = _peak_mib(lambda: irm.evaluate({"q": {"d": big, "e": 1}}, RUN_DE, measures))
    assert peak < 64
    got = irm.evaluate({"q": {"d": big, "e": 1}}, RUN_DE, measures).to_dict()["q"]
    # Binary measures see a relevant document, whatever its label.
    small = irm.evaluate({"q": {"d": 1, "e": 1}}, RUN_DE, ["map", "P.1"]).to_dict()["q"]
    assert got["map"] == small["map"] == 1.0 and got["P_1"] == small["P_1"]
    # Gain = the label as a double (trec_eval: (double) of a long); e ranks first.
    gain = float(big)
    dcg = 1.0 / math.log2(2) + gain / math.log2(3)
    ideal = gain / math.log2(2) + 1.0 / math.log2(3)
    assert got["dcg"] == dcg
    assert got["ndcg"] == dcg / ideal
    assert got["relstring"] == "1>"


def test_every_qrels_measure_takes_a_huge_label_quietly():
    import warnings
    from irmetrics.measures import REGISTRY
    from irmetrics.measures.params import KeywordParams
    from irmetrics.measures.parse import example_spelling
    from irmetrics.measures.rel_format import QRELS, rel_formats_of
    # gdeval's measures refuse labels above 4 by design (tests/compat/test_ir_measures_names.py);
    # measures with required keywords (ir_measures spellings) are asked for by an example.
    names = [example_spelling(m) if isinstance(m.params, KeywordParams) else n
             for n, m in REGISTRY.items()
             if QRELS in rel_formats_of(m) and "max_label" not in m.extra]
    assert len(names) > 40
    qrels = {"q": {"d": 2**62, "e": 1, "f": -1}, "r": {"g": 0}}
    run = {"q": {"d": 1.0, "e": 2.0, "x": 3.0}, "r": {"g": 1.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = irm.evaluate(qrels, run, names)
    small = irm.evaluate({**qrels, "q": {"d": 2, "e": 1, "f": -1}}, run, ["map", "P.5"])
    assert res.to_dict()["q"]["map"] == small.to_dict()["q"]["map"] == (1 / 2 + 2 / 3) / 2
    assert res.to_dict()["q"]["P_5"] == small.to_dict()["q"]["P_5"]
    assert res.to_dict()["q"]["ltr_dcg"] == math.inf  # 2**(2**62) - 1 overflows, as in float


def test_big_label_issue_inputs():
    # RelevanceEvaluator({'q': {'d': 2**40, 'e': 1}}, {'map'}) asked for 8 TiB.
    peak = _peak_mib(lambda: RelevanceEvaluator({"q": {"d": 2**40, "e": 1}}, {"map"})
                     .evaluate(RUN_DE))
    assert peak < 64
    assert RelevanceEvaluator({"q": {"d": 2**40, "e": 1}}, {"map"}).evaluate(RUN_DE) == \
        {"q": {"map": 1.0}}
    # One qrels line `1 0 d1 2147483648` got the process OOM-killed.
    qrels = read_qrels_bytes(b"1 0 d1 2147483648\n1 0 d2 1\n")
    run = irm.Run.from_dict({"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
    peak = _peak_mib(lambda: irm.evaluate(qrels, run, ["map", "ndcg", "relstring"]))
    assert peak < 64
    res = irm.evaluate(qrels, run, ["map", "ndcg", "relstring"]).to_dict()["1"]
    assert res == {"map": 1.0, "ndcg": 1.0, "relstring": ">1-"}
    # from_matrix with labels 1e6 raised a raw MemoryError.
    scores = np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]])
    labels = np.array([[10**6, 0, 1], [0, 2**62, 1]])
    peak = _peak_mib(lambda: irm.evaluate(*irm.adapters.from_matrix(scores, labels), ["ndcg"]))
    assert peak < 64
    got = irm.evaluate(*irm.adapters.from_matrix(scores, labels), ["map", "ndcg"]).to_dict()
    want = ref.evaluate({"q0": {"d0": 10**6, "d1": 0, "d2": 1}},
                        {"q0": {"d0": 3.0, "d1": 2.0, "d2": 1.0}}, ["map"]).per_query
    assert got["q0"]["map"] == want["q0"]["map"]


def _shift_labels(qrels, shift):
    """Labels >= 2 moved up by ``shift``: the same binary judgments, gaps of unused levels."""
    return {q: {d: v + shift if v >= 2 else v for d, v in docs.items()}
            for q, docs in qrels.items()}


#: Gain pairs with whole-number gains (exactly ordered: the compact table applies).
BIG_LABEL_MEASURES = ["all_trec", "dcg", "ideal_dcg", "G", "Rndcg", "ndcg_rel", "rbp",
                      "rbp_resid", "yaap", "relstring.5"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=qrels_and_run(max_label=5), level=st.integers(-1, 3),
       shift=st.sampled_from([0, 7, 250]), judged_only=st.booleans())
def test_sparse_labels_match_the_reference(case, level, shift, judged_only):
    """Labels with long gaps of unused levels: the compact gain table drops the gaps.
    (The reference builds trec_eval's full table in quadratic time, hence small gaps.)"""
    qrels, run = case
    qrels = _shift_labels(qrels, shift)
    try:
        want = ref.evaluate(qrels, run, BIG_LABEL_MEASURES, relevance_level=level,
                            judged_only=judged_only)
    except ValueError:
        return  # no query evaluated
    got = irm.evaluate(qrels, run, BIG_LABEL_MEASURES, relevance_level=level,
                       judged_only=judged_only)
    per_query = got.to_dict()
    for qid, values in want.per_query.items():
        for name, value in values.items():
            if name != "runid":
                assert same_value(per_query[qid][name], value), (qid, name)


@given(query=st.lists(st.integers(0, 3), min_size=1, max_size=30),
       labels=st.lists(st.integers(-2, 6), min_size=30, max_size=30),
       shift=st.sampled_from([0, 2**16, 2**40, 2**62]))
def test_label_histogram_depends_on_distinct_labels_only(query, labels, shift):
    """The sorting road (labels >= 2**16) and the counting road agree, and a histogram
    is the same whatever the values of the labels above 0."""
    query = np.array(query)
    labels = np.array(labels[: len(query)])
    small, small_levels = label_histogram(query, labels, 4)
    moved = np.where(labels > 0, labels + shift, labels)
    big, big_levels = label_histogram(query, moved, 4)
    assert big.tolist() == small.tolist()
    assert big_levels.tolist() == [v + shift if v > 0 else v for v in small_levels.tolist()]
    want = {}
    for q, v in zip(query.tolist(), labels.tolist()):
        if v >= 0:
            want[q, v] = want.get((q, v), 0) + 1
    got = {(q, int(small_levels[j])): int(small[q, j]) for q in range(4)
           for j in range(len(small_levels)) if small[q, j]}
    assert got == want


QRELS_BIG = {"1": {"a": 30000, "b": 1, "c": 0, "d": -1}, "2": {"a": 2, "e": 1, "f": 30000},
             "3": {"x": 0}}
RUN_BIG = {"1": {"a": 1.0, "b": 2.0, "z": 3.0, "c": 0.5}, "2": {"e": 2.0, "f": 1.0},
           "3": {"x": 1.0}}


@pytest.mark.parametrize("pairs", ["ndcg.1=3,2=9,-1=2", "ndcg.0=-2,300=1", "ndcg.300=0,3=301",
                                   "rbp.p=0.8,300=-5", "Rndcg.300=1,0=2", "G.1=4"])
def test_label_300_matches_reference(pairs):
    # the reference builds trec_eval's full gain table (quadratic in the largest label)
    qrels = {q: {d: 300 if v == 30000 else v for d, v in docs.items()}
             for q, docs in QRELS_BIG.items()}
    measures = ["map", "ndcg", "ndcg_cut.1,2", "Rprec", "bpref", "P.2", "rbp", pairs]
    want = ref.evaluate(qrels, RUN_BIG, measures).per_query
    got = irm.evaluate(qrels, RUN_BIG, measures).to_dict()
    for qid, values in want.items():
        for name, value in values.items():
            if name != "runid":
                assert same_value(got[qid][name], value), (qid, name)


def test_label_30000_matches_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    measures = {"map", "ndcg", "ndcg_cut", "Rprec", "bpref", "P", "Rndcg", "ndcg_rel", "G",
                "binG", "infAP"}
    measures &= set(pytrec_eval.supported_measures)
    expected = pytrec_eval.RelevanceEvaluator(QRELS_BIG, measures).evaluate(RUN_BIG)
    mine = irm.evaluate(QRELS_BIG, RUN_BIG, sorted(measures), semantics="pytrec_eval").to_dict()
    cells = 0
    for qid, values in expected.items():
        for name, value in values.items():
            assert mine[qid][name] == pytest.approx(value, rel=1e-12, abs=1e-12), (qid, name)
            cells += 1
    assert cells > 30


def test_fractional_gains_with_a_huge_label_are_refused():
    qrels = {"q": {"d": DENSE_TABLE_LIMIT, "e": 1}}
    with pytest.raises(ParameterError, match="gain values.*whole numbers.*got 0.5"):
        irm.evaluate(qrels, RUN_DE, ["ndcg.1=0.5"])
    # below the limit, trec_eval's full table (truncating comparator) is reproduced
    qrels = {"q": {"d": 300, "e": 1, "f": 2}}
    run = {"q": {"d": 1.0, "e": 2.0, "f": 0.5}}
    want = ref.evaluate(qrels, run, ["ndcg.1=0.5,2=1.5"]).per_query["q"]
    got = irm.evaluate(qrels, run, ["ndcg.1=0.5,2=1.5"]).to_dict()["q"]
    assert got == {k: v for k, v in want.items() if k != "runid"}


# --------------------------------------------------------------------------------------
# item 3: boolean options are validated, not taken by truthiness
# --------------------------------------------------------------------------------------

QRELS_MAP = {"q": {"a": 1, "b": 0, "c": 1}, "r": {"a": 1}}
RUN_MAP = {"q": {"a": 1.0, "b": 2.0, "c": 0.5}}


@pytest.mark.parametrize("option", ["complete", "judged_only"])
@pytest.mark.parametrize("value", ["no", "False", 0, 1, None, 0.0, [True]])
def test_boolean_options_refuse_non_booleans(option, value):
    with pytest.raises(ParameterError, match=f"`{option}` must be True or False; got"):
        irm.evaluate(QRELS_MAP, RUN_MAP, ["map"], **{option: value})
    with pytest.raises(ParameterError, match=f"`{option}` must be True or False"):
        irm.Evaluator(QRELS_MAP, ["map"], **{option: value})


def test_boolean_options_accept_numpy_bools():
    # complete='no' used to mean True: map 0.5833 became 0.2917
    assert irm.evaluate(QRELS_MAP, RUN_MAP, ["map"], complete=np.bool_(False)).aggregate() == \
        irm.evaluate(QRELS_MAP, RUN_MAP, ["map"], complete=False).aggregate()
    got = irm.evaluate(QRELS_MAP, RUN_MAP, ["map"], complete=np.bool_(True)).aggregate()["map"]
    assert got == irm.evaluate(QRELS_MAP, RUN_MAP, ["map"], complete=True).aggregate()["map"]
    assert got == pytest.approx((1 / 2 + 2 / 3) / 2 / 2)  # query r counts as 0


def test_boolean_options_of_formats_adapters_and_dropin():
    jg = irm.JudgmentGroups.from_records([("q", "u1", "a", 1)])
    with pytest.raises(ParameterError, match="`judged_only` must be True or False"):
        irm.evaluate_jg(jg, {"q": {"a": 1.0}}, ["P_avgjg.1"], judged_only="yes")
    with pytest.raises(ParameterError, match="`complete` must be True or False"):
        irm.evaluate_jg(jg, {"q": {"a": 1.0}}, ["P_avgjg.1"], complete="no")
    prefs = irm.Prefs.from_records([("q", "g", "1", "a", 2), ("q", "g", "1", "b", 1)])
    with pytest.raises(ParameterError, match="`complete` must be True or False"):
        irm.evaluate_prefs(prefs, {"q": {"a": 1.0}}, ["prefs_simp"], complete="no")
    emb = np.eye(3)
    with pytest.raises(ParameterError, match="`exclude_self` must be True or False"):
        irm.adapters.from_embeddings(emb, [0, 1, 0], k=2, exclude_self="no")
    with pytest.raises(ParameterError, match="`keep_doc_ids` must be True or False"):
        irm.adapters.to_ranked(QRELS_MAP, RUN_MAP, keep_doc_ids="yes")
    # pytrec_eval's flag is a C int: ints are fine (non-zero is True), 'no' is refused
    for bad in ("no", None, 1.0):
        with pytest.raises(ParameterError, match="`judged_docs_only_flag` must be an integer"):
            RelevanceEvaluator(QRELS_MAP, {"map"}, judged_docs_only_flag=bad)
    run = {"q": {"a": 1.0, "x": 3.0}}
    for flag, judged in ((2, True), (0, False), (np.bool_(True), True)):
        assert RelevanceEvaluator(QRELS_MAP, {"P_1"}, judged_docs_only_flag=flag).evaluate(run) \
            == RelevanceEvaluator(QRELS_MAP, {"P_1"}, judged_docs_only_flag=judged).evaluate(run)


# --------------------------------------------------------------------------------------
# item 10: typed errors instead of raw Python exceptions
# --------------------------------------------------------------------------------------


def test_measures_none_is_a_parameter_error():
    with pytest.raises(ParameterError, match="`measures` must be a measure name or a list"):
        irm.evaluate(QRELS_MAP, RUN_MAP, None)


def test_huge_python_int_score_is_an_input_error():
    with pytest.raises(irm.exceptions.InputFormatError,
                       match=r"score overflows float64 .*332 digits.*query_id 'q', doc_id 'a'"):
        irm.evaluate(QRELS_MAP, {"q": {"a": 2**1100}}, ["map"])
    with pytest.raises(irm.exceptions.InputFormatError, match="relevance out of the 64-bit"):
        irm.evaluate({"q": {"a": 2**1100}}, RUN_MAP, ["map"])


@pytest.mark.parametrize("where", ["qrels_query", "qrels_doc", "run_doc", "run_query"])
def test_lone_surrogate_in_an_id_is_a_parameter_error(where):
    bad = "x\ud800"
    qrels = {bad if where == "qrels_query" else "q": {bad if where == "qrels_doc" else "a": 1}}
    run = {bad if where == "run_query" else "q": {bad if where == "run_doc" else "a": 1.0}}
    with pytest.raises(ParameterError, match=r"must be valid Unicode text .*'x\\ud800'"):
        irm.evaluate(qrels, run, ["map"])


@pytest.mark.parametrize("value", [[1, 2], None, "q 0 d 1"])
def test_pytrec_eval_dropin_refuses_non_mappings(value):
    with pytest.raises(ParameterError, match="`query_relevance` must be a mapping"):
        RelevanceEvaluator(value, {"map"})


def test_cutoff_beyond_long_saturates_like_atol():
    # trec_eval reads cutoffs with atol, which saturates at LONG_MAX
    res = irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P.99999999999999999999"])
    (name,) = res.names
    assert name == "P_9223372036854775807"
    assert res.to_dict()["q"][name] == 1 / (2**63 - 1)
    with pytest.raises(ParameterError, match="must be positive"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P.-99999999999999999999"])


# --------------------------------------------------------------------------------------
# item 7: wrong or endless files fail at the first bad line, in bounded memory and time
# --------------------------------------------------------------------------------------

QRELS_TEXT = "1 0 d 1\n1 0 e 0\n"
RUN_TEXT = "1 Q0 d 1 2.5 r\n1 Q0 e 2 1 r\n"


def _written(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)


def _eval_error(qrels, run):
    with pytest.raises(irm.exceptions.InputFormatError) as info:
        irm.evaluate(qrels, run, ["map"])
    return str(info.value)


def test_binary_run_fails_on_the_first_piece(tmp_path):
    rng = np.random.default_rng(16)
    run = _written(tmp_path, "run.bin", rng.integers(0, 256, 40 << 20, dtype=np.uint8).tobytes())
    qrels = _written(tmp_path, "qrels.txt", QRELS_TEXT)
    peak = _peak_mib(lambda: pytest.raises(irm.exceptions.InputFormatError,
                                           irm.evaluate, qrels, run, ["map"]))
    assert peak < 120  # the 40 MiB file is never read whole
    message = _eval_error(qrels, run)
    assert message.startswith(f"{run}:1: ") and "binary file, not a TREC run file" in message


def test_endless_nul_device_fails_fast():
    if not __import__("os").path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    from irmetrics.io import read_qrels, read_run
    for read, kind in ((read_run, "run"), (read_qrels, "qrels")):
        with pytest.raises(irm.exceptions.InputFormatError,
                           match=f"/dev/zero:1: a NUL byte: this looks like a binary file, "
                                 f"not a TREC {kind} file"):
            read("/dev/zero")


def test_gzip_of_nul_bytes_stops_after_one_piece():
    import gzip
    from irmetrics.io import read_run_bytes
    bomb = gzip.compress(b"\0" * (64 << 20))
    peak = _peak_mib(lambda: pytest.raises(irm.exceptions.InputFormatError, read_run_bytes, bomb))
    assert peak < 100


def test_nul_after_good_lines_reports_an_earlier_error_first(tmp_path):
    run = _written(tmp_path, "run.txt", b"1 Q0 d 1 2.5 r\n1 Q0 e 2 x r\n1 Q0 \0 3 1 r\n")
    assert "run.txt:2: score is not a number" in _eval_error({"1": {"d": 1}}, run)
    run = _written(tmp_path, "run2.txt", b"1 Q0 d 1 2.5 r\n1 Q0 \0 3 1 r\n")
    assert "run2.txt:2: a NUL byte" in _eval_error({"1": {"d": 1}}, run)


@pytest.mark.parametrize("encoding, expected", [
    ("utf-16", "UTF-16 text (byte order mark FF FE)"),
    ("utf-16-be", "this looks like UTF-16 text"),
    ("utf-16-le", "this looks like UTF-16 text"),
])
def test_utf16_files_are_named(tmp_path, encoding, expected):
    qrels = _written(tmp_path, "qrels.txt", QRELS_TEXT.encode(encoding))
    run = _written(tmp_path, "run.txt", RUN_TEXT.encode(encoding))
    good_qrels = _written(tmp_path, "q.txt", QRELS_TEXT)
    good_run = _written(tmp_path, "r.txt", RUN_TEXT)
    for q, r, bad in ((qrels, good_run, qrels), (good_qrels, run, run)):
        message = _eval_error(q, r)
        assert message.startswith(f"{bad}:1: ") and expected in message and "iconv" in message


def test_carriage_return_only_line_ends_are_named(tmp_path):
    qrels = _written(tmp_path, "qrels.txt", QRELS_TEXT.replace("\n", "\r"))
    run = _written(tmp_path, "run.txt", RUN_TEXT.replace("\n", "\r"))
    good_qrels = _written(tmp_path, "q.txt", QRELS_TEXT)
    good_run = _written(tmp_path, "r.txt", RUN_TEXT)
    for q, r in ((qrels, good_run), (good_qrels, run)):
        assert "lines end with a carriage return only" in _eval_error(q, r)
    # CRLF and a CR used as a blank inside one line stay fine (trec_eval's whitespace)
    crlf = _written(tmp_path, "crlf.txt", RUN_TEXT.replace("\n", "\r\n"))
    one = _written(tmp_path, "one.txt", "1\rQ0 d 1 2.5 r\r")
    assert irm.evaluate(good_qrels, crlf, ["map"]).aggregate() == {"map": 1.0}
    assert irm.evaluate(good_qrels, one, ["map"]).aggregate() == {"map": 1.0}


@pytest.mark.parametrize("space, name", [("\u00a0", "U+00A0 NO-BREAK SPACE"),
                                         ("\u3000", "U+3000 IDEOGRAPHIC SPACE"),
                                         ("\u2009", "U+2009 THIN SPACE")])
def test_non_ascii_separators_are_named(tmp_path, space, name):
    qrels = _written(tmp_path, "qrels.txt", QRELS_TEXT.replace(" ", space, 1))
    run = _written(tmp_path, "run.txt", RUN_TEXT.replace(" ", space, 2))
    good_qrels = _written(tmp_path, "q.txt", QRELS_TEXT)
    good_run = _written(tmp_path, "r.txt", RUN_TEXT)
    for q, r in ((qrels, good_run), (good_qrels, run)):
        message = _eval_error(q, r)
        assert ":1: expected" in message and f"the line holds {name}" in message


def test_swapped_qrels_and_run_are_named(tmp_path):
    qrels = _written(tmp_path, "qrels.txt", QRELS_TEXT)
    run = _written(tmp_path, "run.txt", RUN_TEXT)
    assert "this looks like a run file; the qrels come first, the run second" in \
        _eval_error(run, qrels)
    assert "this looks like a qrels file; the qrels come first, the run second" in \
        _eval_error(qrels, qrels)
    # a short run line that is no qrels line gets no such hint
    short = _written(tmp_path, "short.txt", "1 Q0 d x\n")
    assert "looks like" not in _eval_error(qrels, short)


def test_latin1_ids_are_named_by_the_reader_and_evaluated_as_bytes(tmp_path):
    # issue 16 item 13a: trec_eval compares ids as bytes (tests/io/test_latin1_ids.py)
    qrels = _written(tmp_path, "qrels.txt", b"1 0 caf\xe9 1\n")
    run = _written(tmp_path, "run.txt", b"1 Q0 caf\xe9 1 1 r\n")
    with pytest.raises(irm.exceptions.NotUtf8Error) as info:
        irm.io.read_qrels(qrels)
    assert str(info.value).startswith(f"{qrels}:1: invalid UTF-8 (byte 0xe9)")
    res = irm.evaluate(qrels, run, ["map"])
    assert res.id_encoding == "latin-1" and res.aggregate() == {"map": 1.0}


# --------------------------------------------------------------------------------------
# item 13: the last differences from trec_eval 10
# --------------------------------------------------------------------------------------


def _cli(tmp_path, qrels, run, *args):
    from irmetrics.cli import main
    q = _written(tmp_path, "qrels.txt", qrels)
    r = _written(tmp_path, "run.txt", run)
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["eval", *args, q, r])
    assert code in (0, None)
    return out.getvalue()


def test_summary_of_negative_zeros_is_positive_zero(tmp_path):
    # every query -0.0: trec_eval's sum starts at +0.0, so the summary prints 0.0000
    out = _cli(tmp_path, "1 0 a -1\n2 0 b -1\n", "1 Q0 x 1 5 r\n2 Q0 y 1 5 r\n",
               "-q", "-J", "-m", "utility.-1,-1,-1,-1")
    assert out.splitlines() == [
        "utility_-1,-1,-1,-1   \t1\t-0.0000",
        "utility_-1,-1,-1,-1   \t2\t-0.0000",
        "utility_-1,-1,-1,-1   \tall\t0.0000",
    ]
    res = irm.evaluate({"1": {"a": -1}}, {"1": {"x": 5.0}}, ["utility.-1,-1,-1,-1"],
                       judged_only=True)
    assert math.copysign(1.0, res.aggregate()["utility_-1,-1,-1,-1"]) == 1.0


def test_yaap_log_of_a_negative_ratio_is_negative_nan(tmp_path):
    # -l -1: five unpooled documents count as relevant, S = 5 > 1 + R: log(-3) = -nan (glibc)
    run = "".join(f"1 Q0 {d} {i} {9 - i} r\n" for i, d in enumerate("vwxyz", 1))
    out = _cli(tmp_path, "1 0 a 0\n1 0 b 1\n", run, "-q", "-l", "-1", "-m", "yaap")
    assert out.splitlines() == ["yaap                  \t1\t  -nan",
                                "yaap                  \tall\t  -nan"]
    from irmetrics.engine.libm import libm_log, libm_log2
    got = np.concatenate([libm_log([-3.0, -np.inf, -0.5]), libm_log2([-3.0, -1e-300])])
    assert np.isnan(got).all() and np.signbit(got).all()
    assert libm_log([-0.0])[0] == -np.inf and libm_log([0.0])[0] == -np.inf


def test_map_avgjg_divides_by_zero_like_trec_eval(tmp_path):
    # JG u1 has only a negative label: under -l -1 the unpooled b is relevant, R = 0,
    # and trec_eval's m_map_avgjg.c divides anyway: inf for u1, and for the JG mean.
    qrels = "q u1 a -1\nq u2 b 1\n"
    run = "q Q0 a 1 2 r\nq Q0 b 2 1 r\n"
    out = _cli(tmp_path, qrels, run, "-R", "qrels_jg", "-q", "-l", "-1", "-m", "map_avgjg")
    assert out.splitlines() == ["map_avgjg             \tq\t   inf",
                                "map_avgjg             \tall\t   inf"]
    # at the default level nothing changes: u1 0 (nothing relevant), u2 1/2
    out = _cli(tmp_path, qrels, run, "-R", "qrels_jg", "-q", "-m", "map_avgjg")
    assert out.splitlines()[-1] == "map_avgjg             \tall\t0.2500"


def test_large_file_wrong_from_its_first_line_fails_on_the_head(tmp_path):
    from irmetrics.io import read_qrels, read_run
    prose = b"lorem ipsum dolor sit amet\n" * (1 << 20)  # 27 MiB of valid UTF-8, no TREC
    path = _written(tmp_path, "prose.txt", prose)
    peak = _peak_mib(lambda: pytest.raises(irm.exceptions.InputFormatError, read_run, path))
    assert peak < 2.5 * len(prose) / 2**20  # the bytes, not a parse of all of them
    with pytest.raises(irm.exceptions.InputFormatError, match=r"prose.txt:1: expected at least"):
        read_run(path)
    # errors past the head, and duplicates before a bad line, are still found in file order
    good = b"".join(b"q%d Q0 d%d 1 1.0 r\n" % (i // 100, i) for i in range(60000))
    path = _written(tmp_path, "late.txt", good + b"q 0 d x\n")
    with pytest.raises(irm.exceptions.InputFormatError, match=r"late.txt:60001: expected"):
        read_run(path)
    first = good.split(b"\n", 10)
    head = b"\n".join(first[:10]) + b"\n"
    path = _written(tmp_path, "dup.txt", head + first[0] + b"\nbad\n" + good)
    with pytest.raises(irm.exceptions.DuplicateEntryError, match="dup.txt:11"):
        read_run(path)
    qrels = b"".join(b"q%d 0 d%d 1\n" % (i // 100, i) for i in range(80000))
    path = _written(tmp_path, "qrels.txt", qrels[:5000] + b"q 0 d 1 x\n" + qrels)
    with pytest.raises(irm.exceptions.InputFormatError, match=r"qrels.txt:\d+: expected 4"):
        read_qrels(path)
