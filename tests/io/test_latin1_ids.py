"""Ids that are not UTF-8 (issue 16 item 13a): evaluated as bytes, as trec_eval does.

When the qrels or a run file is not UTF-8, both sides of that evaluation are decoded
byte by byte as Latin-1; ``irmetrics eval`` writes the ids back as the same bytes. The
oracle is the spec reference (tests/reference/trec_eval_ref.py), which works on str and
orders ids by their UTF-8 bytes: fed the Latin-1 decoding of both files, it orders them
by the files' bytes, and its output encoded as Latin-1 is what trec_eval prints.
"""

import json
import subprocess
import sys
import warnings

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.cli import main
from irmetrics.exceptions import InputFormatError, MissingQueriesWarning, NotUtf8Error
from irmetrics.io import read_qrels, read_run
from irmetrics.io.trec import latin1_ids, read_qrels_bytes, read_run_bytes

from tests.cli.test_cli_reference_parity import MEASURES, _argv  # noqa: E402  (same options)

ref = pytest.importorskip("tests.reference.trec_eval_ref")

#: Ids that are valid UTF-8, and ids that are not (Latin-1 bytes, lone UTF-8 pieces).
#: ``caf\xe9`` (Latin-1) and ``caf\xc3\xa9`` (UTF-8) are different ids, as for trec_eval;
#: ``\xc3\xa9`` sorts between ``\x80`` and ``\xe9``, ``\xff`` after everything.
UTF8_QIDS = [b"1", b"10", b"2", b"caf\xc3\xa9", b"z\xe2\x82\xac"]
BYTE_QIDS = UTF8_QIDS + [b"caf\xe9", b"\xff", b"\xc3", b"1\xa0"]
UTF8_DOCS = [b"d1", b"e", b"d\xc3\xa9", b"\xc3\xa9", b"d\xe2\x82\xac", b"\xc3\xbf"]
BYTE_DOCS = UTF8_DOCS + [b"d\xe9", b"\xe9", b"\xff\xfe", b"\x80", b"\xc3", b"\xa0x"]


def _decoded(lines):
    """{qid: {doc: field}} of byte lines, ids decoded as Latin-1 (the reference's input)."""
    table = {}
    for line in lines:
        fields = line.split()
        table.setdefault(fields[0].decode("latin-1"), {})[fields[2].decode("latin-1")] = \
            fields[3 if len(fields) == 4 else 4].decode()
    return table


@st.composite
def files(draw):
    qids, docs = draw(st.sampled_from([(UTF8_QIDS, UTF8_DOCS), (BYTE_QIDS, BYTE_DOCS)]))
    qrels = []
    for q in draw(st.lists(st.sampled_from(qids), min_size=1, max_size=4, unique=True)):
        for d in draw(st.lists(st.sampled_from(docs), min_size=1, max_size=6, unique=True)):
            qrels.append(b"%s 0 %s %d" % (q, d, draw(st.integers(-1, 3))))
    qids, docs = draw(st.sampled_from([(UTF8_QIDS, UTF8_DOCS), (BYTE_QIDS, BYTE_DOCS)]))
    run_id = draw(st.sampled_from([b"r", b"r\xe9", b"r\xc3\xa9"]))
    run = []
    for q in draw(st.lists(st.sampled_from(qids), min_size=1, max_size=4, unique=True)):
        for d in draw(st.lists(st.sampled_from(docs), min_size=1, max_size=8, unique=True)):
            # quarter scores: many ties, broken by doc id bytes
            run.append(b"%s Q0 %s 0 %s %s" % (q, d, str(draw(st.integers(0, 4)) / 4).encode(),
                                              run_id))
    options = {
        "per_query": draw(st.booleans()),
        "complete": draw(st.booleans()),
        "judged_only": draw(st.booleans()),
        "max_docs": draw(st.one_of(st.none(), st.integers(0, 4))),
        "relevance_level": draw(st.integers(0, 2)),
    }
    return qrels, run, run_id, options


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files())
def test_cli_bytes_equal_the_reference_on_byte_ids(tmp_path, capsysbinary, data):
    qrels_lines, run_lines, run_id, options = data
    (tmp_path / "q").write_bytes(b"\n".join(qrels_lines) + b"\n")
    (tmp_path / "r").write_bytes(b"\n".join(run_lines) + b"\n")
    qrels = {q: {d: int(v) for d, v in docs.items()}
             for q, docs in _decoded(qrels_lines).items()}
    run = {q: {d: float(v) for d, v in docs.items()} for q, docs in _decoded(run_lines).items()}
    kwargs = {k: v for k, v in options.items() if k != "per_query"}
    argv = ["eval", *_argv(options), str(tmp_path / "q"), str(tmp_path / "r")]
    try:
        expected = ref.evaluate(qrels, run, MEASURES, run_id=run_id.decode("latin-1"), **kwargs)
    except ValueError:  # no query in both files
        assert main(argv) == 7
        capsysbinary.readouterr()
        return
    status = main(argv)
    out, err = capsysbinary.readouterr()
    assert status == 0, err
    assert out == expected.format_trec(per_query=options["per_query"]).encode("latin-1")


def test_the_issue_example_through_a_real_stdout(tmp_path):
    # trec_eval: café (Latin-1 E9) is judged; cafe and the UTF-8 café are unjudged.
    (tmp_path / "q").write_bytes(b"1 0 caf\xe9 1\n")
    (tmp_path / "r").write_bytes(b"1 Q0 caf\xc3\xa9 1 2 r\xe9\n1 Q0 caf\xe9 2 1 r\xe9\n"
                                 b"1 Q0 cafe 3 1 r\xe9\n")
    proc = subprocess.run([sys.executable, "-m", "irmetrics", "eval", "-q", "-m", "map",
                           "-m", "runid", "-m", "relstring.3", str(tmp_path / "q"),
                           str(tmp_path / "r")], capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    # ranking: caf\xc3\xa9 (2), then the tie at 1 in byte order descending: caf\xe9, cafe
    assert proc.stdout == (b"map                   \t1\t0.5000\n"
                           b"relstring_3           \t1\t'-1-'\n"
                           b"runid                 \tall\tr\xe9\n"
                           b"map                   \tall\t0.5000\n")


@pytest.mark.parametrize("qrels, run, tag", [
    # the file on stdin is the one that is not UTF-8: it cannot be read a second time
    (b"1 0 b 1\n1 0 caf\xe9 1\n", b"1 Q0 caf\xc3\xa9 1 1 r\xc3\xa9\n1 Q0 b 2 0.5 r\xc3\xa9\n",
     "qrels"),
    (b"1 0 b 1\n1 0 caf\xc3\xa9 1\n", b"1 Q0 caf\xe9 1 1 r\xe9\n1 Q0 b 2 0.5 r\xe9\n", "run"),
])
def test_standard_input_is_read_once(tmp_path, qrels, run, tag):
    (tmp_path / "f").write_bytes(run if tag == "qrels" else qrels)
    files = ["-", str(tmp_path / "f")] if tag == "qrels" else [str(tmp_path / "f"), "-"]
    proc = subprocess.run([sys.executable, "-m", "irmetrics", "eval", "-m", "map", "-m",
                           "runid", *files], input=qrels if tag == "qrels" else run,
                          capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    # caf\xe9 and caf\xc3\xa9 differ: b, relevant at rank 2, is the only match
    assert proc.stdout == (b"runid                 \tall\t" + run.split()[5] + b"\n"
                           b"map                   \tall\t0.2500\n")


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no named pipes")
def test_a_pipe_is_read_once(tmp_path):
    import os
    import threading
    (tmp_path / "q").write_bytes(b"1 0 caf\xe9 1\n1 0 b 1\n".replace(b"\xe9", b"\xc3\xa9"))
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(b"1 Q0 caf\xe9 1 1 r\n",))
    writer.start()
    try:
        res = irm.evaluate(str(tmp_path / "q"), str(fifo), ["map"])
    finally:
        writer.join(timeout=10)
    assert res.id_encoding == "latin-1" and res.aggregate() == {"map": 0.0}


def test_readers_name_the_encoding_and_read_latin1_on_request():
    with pytest.raises(NotUtf8Error, match=r"q:1: invalid UTF-8 \(byte 0xe9\); ids that "
                                           r"are not UTF-8 are read as Latin-1"):
        read_qrels_bytes(b"1 0 caf\xe9 1\n", source="q")
    qrels = read_qrels_bytes(b"\xef\xbb\xbf1 0 caf\xe9 1\n1 0 caf\xc3\xa9 0\n",
                             encoding="latin-1")
    assert qrels.df["query_id"].to_list() == ["1", "1"]  # the UTF-8 byte order mark goes
    assert [d.encode("latin-1") for d in qrels.df["doc_id"]] == [b"caf\xe9", b"caf\xc3\xa9"]
    run = read_run_bytes(b"1 Q0 \xff 1 1.5 r\xe9\n", encoding="latin-1")
    assert run.name == "r\xe9" and run.df["doc_id"].to_list() == ["\xff"]
    with pytest.raises(irm.exceptions.ParameterError, match="`encoding` must be one of"):
        read_qrels_bytes(b"1 0 a 1\n", encoding="cp1252")


@pytest.mark.parametrize("qrels, run, reason", [
    (b"1 0 caf\xe9 1\n1 0 \x00 1\n", b"1 Q0 d 1 1 r\n", "q:2: a NUL byte"),
    (b"1 0 d 1\n", b"1 Q0 caf\xe9 1 1 r\n1 Q0 \x00 1 1 r\n", "r:2: a NUL byte"),
    (b"1 0 caf\xe9 1\n1 0 a x\n", b"1 Q0 d 1 1 r\n", "q:2: relevance must be an integer"),
    (b"1 0 d 1\n", b"1 Q0 caf\xe9 1 x r\n", "r:1: score is not a number"),
    (b"1 0 \x01\x02\xe9 1\n", b"1 Q0 d 1 1 r\n", "q:1: invalid UTF-8 .* binary file"),
    (b"1 0 d 1\n", b"1 Q0 \x7f\xe9 1 1 r\n", "r:1: invalid UTF-8 .* binary file"),
    ("1 0 d 1\n".encode("utf-16"), b"1 Q0 d 1 1 r\n", "q:1: UTF-16 text"),
    (b"1 0 d 1\n", "1 Q0 d 1 1 r\n".encode("utf-16"), "r:1: UTF-16 text"),
])
def test_what_is_really_wrong_is_still_refused(tmp_path, qrels, run, reason):
    (tmp_path / "q").write_bytes(qrels)
    (tmp_path / "r").write_bytes(run)
    with pytest.raises(InputFormatError, match=reason) as info:
        irm.evaluate(str(tmp_path / "q"), str(tmp_path / "r"), ["map"])
    assert not isinstance(info.value, NotUtf8Error)


def _latin1_files(tmp_path):
    (tmp_path / "q").write_bytes(b"1 0 caf\xe9 1\n1 0 b 1\n2 0 \xff 1\n")
    (tmp_path / "r").write_bytes(b"1 Q0 caf\xe9 1 1 r\n1 Q0 b 1 2 r\n2 Q0 \xff 1 1 r\n")
    (tmp_path / "u").write_bytes(b"1 Q0 caf\xc3\xa9 1 1 u\n1 Q0 b 1 2 u\n2 Q0 x 1 1 u\n")
    return str(tmp_path / "q"), str(tmp_path / "r"), str(tmp_path / "u")


def test_python_api_results_carry_the_encoding(tmp_path):
    qrels, latin_run, utf8_run = _latin1_files(tmp_path)
    res = irm.evaluate(qrels, latin_run, ["map", "runid"])
    assert res.id_encoding == "latin-1" and res.aggregate()["map"] == 1.0
    assert [q.encode("latin-1") for q in res.query_ids] == [b"1", b"2"]
    # ids given as str count as their UTF-8 bytes: "café" here is C3 A9, not E9
    res = irm.evaluate(qrels, {"1": {"café": 1.0, "b": 2.0}, "2": {"\xff": 1.0}}, ["map"])
    assert res.id_encoding == "latin-1"
    assert res.to_dict() == {"1": {"map": 0.5}, "2": {"map": 0.0}}
    # a UTF-8 qrels table against a Latin-1 run: the qrels' Latin-1 view is used
    table = {"1": {"café": 1, "b": 0}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        res = irm.evaluate(table, latin_run, ["map"])
    assert res.id_encoding == "latin-1" and res.to_dict() == {"1": {"map": 0.0}}
    res = irm.evaluate(table, utf8_run, ["map"])
    assert res.id_encoding == "utf-8" and res.to_dict() == {"1": {"map": 0.5}}


def test_one_evaluator_decides_per_run(tmp_path):
    qrels, latin_run, utf8_run = _latin1_files(tmp_path)
    (tmp_path / "uq").write_bytes(b"1 0 caf\xc3\xa9 1\n1 0 b 1\n2 0 x 1\n")
    ev = irm.Evaluator(str(tmp_path / "uq"), ["map", "P.1"])
    for run in (utf8_run, latin_run, utf8_run, latin_run):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)
            alone = irm.evaluate(str(tmp_path / "uq"), run, ["map", "P.1"])
            got = ev.evaluate(run)
        assert got.id_encoding == alone.id_encoding == ("utf-8" if run == utf8_run
                                                        else "latin-1")
        assert got.to_dict() == alone.to_dict()
    # a Latin-1 qrels file makes every run of the evaluator a Latin-1 evaluation
    ev = irm.Evaluator(qrels, ["map"])
    assert ev.evaluate(utf8_run).id_encoding == "latin-1"


def test_json_names_the_encoding(tmp_path, capsysbinary):
    qrels, latin_run, utf8_run = _latin1_files(tmp_path)
    assert main(["eval", "-q", "-m", "map", "--format", "json", qrels, latin_run]) == 0
    entry = json.loads(capsysbinary.readouterr().out.decode("utf-8"))["runs"][0]
    assert entry["id_encoding"] == "latin-1"
    assert sorted(entry["per_query"]) == ["1", "2"]


@given(st.lists(st.text(min_size=0, max_size=6), max_size=20))
def test_latin1_ids_is_the_latin1_decoding_of_the_utf8_bytes(ids):
    series = pl.Series(ids, dtype=pl.String)
    assert latin1_ids(series).to_list() == [s.encode("utf-8").decode("latin-1") for s in ids]


def test_a_large_latin1_file_reads_whole(tmp_path):
    # the UTF-8 screening stops at the first bad 16 MiB piece; Latin-1 reads to the end
    line = b"1 Q0 d%07d 1 %d r\n"
    body = b"".join(line % (i, i) for i in range(1_200_000))
    (tmp_path / "r").write_bytes(b"1 Q0 caf\xe9 1 0 r\n" + body)
    (tmp_path / "q").write_bytes(b"1 0 d1199999 1\n")
    assert read_run(tmp_path / "r", encoding="latin-1").df.height == 1_200_001
    res = irm.evaluate(str(tmp_path / "q"), str(tmp_path / "r"), ["map", "num_ret"])
    assert res.aggregate() == {"num_ret": 1_200_001, "map": 1.0}
    assert read_qrels(tmp_path / "q").df.height == 1
