"""trec_eval's own test suite (its Makefile's ``quicktest``), byte for byte through
``irmetrics eval``, when a trec_eval source tree is at hand.

The suite's files are trec_eval's, not this project's, so they are not in the repository:
set ``IRMETRICS_TREC_EVAL_SRC`` to a checkout of usnistgov/trec_eval (the directory that
holds ``test/``) to run it. Each command's output must equal the suite's expected file.
"""

import os
import shlex
from pathlib import Path

import pytest

from irmetrics.cli import main

SOURCE = os.environ.get("IRMETRICS_TREC_EVAL_SRC")

#: (trec_eval arguments, expected output file): the quicktest commands of trec_eval 10.
COMMANDS = [
    ("test/qrels.test test/results.test", "out.test"),
    ("test/qrels.test.with-comments test/results.test", "out.test"),
    ("test/qrels.comment.test test/results.comment.test", "out.comment.test"),
    ("-m all_trec test/qrels.test test/results.test", "out.test.a"),
    ("-m all_trec -q test/qrels.test test/results.test", "out.test.aq"),
    ("-m all_trec -q -c test/qrels.test test/results.trunc", "out.test.aqc"),
    ("-m all_trec -q -c -M100 test/qrels.test test/results.trunc", "out.test.aqcM"),
    ("-m all_trec -mrelstring.20 -q -l2 test/qrels.rel_level test/results.test",
     "out.test.aql"),
    ("-m all_prefs -q -R prefs test/prefs.test test/prefs.results.test", "out.test.prefs"),
    ("-m all_prefs -q -R prefs test/prefs.comment.test test/prefs.results.test",
     "out.test.prefs"),
    ("-m all_prefs -q -R qrels_prefs test/qrels.test test/results.test",
     "out.test.qrels_prefs"),
    ("-m qrels_jg -q -R qrels_jg test/qrels.123 test/results.test", "out.test.qrels_jg"),
    ("-m qrels_jg -q -R qrels_jg test/qrels.comments.123 test/results.test",
     "out.test.qrels_jg"),
    ("-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000"
     " -m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75"
     " -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20"
     " test/qrels.test test/results.test", "out.test.meas_params"),
    ("-q -m all_trec -Z test/zscores_file test/qrels.test test/results.test",
     "out.test.aqZ"),
]


@pytest.mark.skipif(not SOURCE, reason="IRMETRICS_TREC_EVAL_SRC (a trec_eval checkout) "
                                       "is not set")
@pytest.mark.parametrize("args,expected", COMMANDS, ids=[e for _, e in COMMANDS])
def test_quicktest_byte_equal(args, expected, capsysbinary, monkeypatch):
    monkeypatch.chdir(SOURCE)
    status = main(["eval", *shlex.split(args)])
    out, err = capsysbinary.readouterr()
    assert status == 0, err
    assert out == (Path(SOURCE) / "test" / expected).read_bytes()
