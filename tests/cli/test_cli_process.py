"""The command line's own process: ``python -m irmetrics`` and the console script
(``irmetrics.__main__.main``) hold OpenBLAS to one thread unless the user says otherwise,
size polars' pool to ``--threads`` (or ``IRMETRICS_THREADS``) unless the user sized it,
and the output is the same bytes either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")

#: Runs the command line as the console script does, then reports the BLAS setting the
#: process ended with: the variable, and OpenBLAS's thread count where numpy uses it.
PROBE = """\
import json, os, sys
{before}
sys.argv = ["irmetrics", *sys.argv[1:]]
import irmetrics.__main__
status = irmetrics.__main__.main()
from threadpoolctl import threadpool_info
pools = [p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]
import polars
sys.stderr.write("PROBE" + json.dumps([status, os.environ.get("OPENBLAS_NUM_THREADS"), pools,
                                       os.environ.get("POLARS_MAX_THREADS"),
                                       polars.thread_pool_size()]))
"""


def _probe(tmp_path, env_extra: dict, before: str = "", args=()) -> tuple[bytes, list]:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "run").write_text("q1 Q0 b 1 2.0 r\nq1 Q0 a 2 1.0 r\n")
    env = {k: v for k, v in os.environ.items()
           if k not in (*BLAS_VARIABLES, "POLARS_MAX_THREADS", "IRMETRICS_THREADS")}
    env.update(env_extra, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", PROBE.format(before=before), "eval", "-q",
                           *args, "-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")],
                          capture_output=True, env=env, cwd=tmp_path, timeout=120)
    return done.stdout, json.loads(done.stderr.decode().rsplit("PROBE", 1)[1])


def test_one_blas_thread_by_default_and_the_users_setting_kept(tmp_path):
    out, (status, variable, pools, _, _) = _probe(tmp_path, {})
    assert status == 0 and variable == "1"
    assert all(n == 1 for n in pools)
    for name in BLAS_VARIABLES:  # any of OpenBLAS's variables is the user's say
        same, (status, variable, *_) = _probe(tmp_path, {name: "2"})
        assert status == 0 and same == out
        assert variable == ("2" if name == "OPENBLAS_NUM_THREADS" else None)
    # numpy loaded before: setting the variable would change nothing, so it is not set
    same, (_, variable, *_) = _probe(tmp_path, {}, before="import numpy")
    assert same == out and variable is None
    assert out.split()[-1] == b"0.5000"  # map of b (non-relevant) then a (relevant)


def test_the_console_script_is_the_process_entry():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'irmetrics = "irmetrics.__main__:main"' in text


def test_polars_pool_sized_by_the_thread_count_asked(tmp_path):
    """``--threads 1`` runs on one core: polars' pool, which parses and joins for every
    irmetrics thread, is sized before polars loads; never against the user's setting."""
    out, (status, _, _, variable, pool) = _probe(tmp_path, {}, args=("--threads", "1"))
    assert status == 0 and (variable, pool) == ("1", 1)
    for env, args, expected in (({}, ("--threads=2",), ("2", 2)),
                                ({"IRMETRICS_THREADS": "1"}, (), ("1", 1)),
                                ({"POLARS_MAX_THREADS": "3"}, ("--threads", "1"), ("3", 3))):
        same, (status, _, _, variable, pool) = _probe(tmp_path, env, args=args)
        assert status == 0 and same == out and (variable, pool) == expected
    # no thread count asked: polars keeps its default; polars loaded before: not set
    same, (_, _, _, variable, _) = _probe(tmp_path, {})
    assert same == out and variable is None
    same, (_, _, _, variable, _) = _probe(tmp_path, {}, before="import polars",
                                          args=("--threads", "1"))
    assert same == out and variable is None


def test_threads_asked_reads_the_command_line_then_the_environment():
    from irmetrics.__main__ import prepare_environment, threads_asked

    assert threads_asked(["eval", "--threads", "4", "--threads", "2"], {}) == 2  # last wins
    assert threads_asked(["eval", "--threads=3"], {"IRMETRICS_THREADS": "5"}) == 3
    assert threads_asked(["eval"], {"IRMETRICS_THREADS": "5"}) == 5
    for bad in ("0", "-1", "x", "1025", "2.0", ""):  # the command reports these itself
        assert threads_asked(["eval", "--threads", bad], {}) is None
    assert threads_asked(["eval", "--threads"], {}) is None
    env: dict = {}
    prepare_environment(["eval", "--threads", "1"], env, {})
    assert env == {"OPENBLAS_NUM_THREADS": "1", "POLARS_MAX_THREADS": "1"}
    env = {"POLARS_MAX_THREADS": "8"}
    prepare_environment(["eval", "--threads", "1"], env, {"numpy": None})
    assert env == {"POLARS_MAX_THREADS": "8"}


def test_threads_asked_reads_the_value_as_the_command_does():
    # The pool is sized to the count the command runs with, or left alone: never a crash
    # before the command's own error ('²' is a digit to str.isdigit, not to int; int()
    # refuses over 4300 digits), nor a count the command did not take (a file after --).
    from irmetrics.__main__ import threads_asked

    for text, expected in (("\u00b2", None), ("9" * 5000, None), ("+2", 2), ("1_0", 10),
                           (" 2 ", 2), ("02", 2), ("\u0663", 3), ("1e3", None)):
        assert threads_asked(["eval", "--threads", text], {}) == expected, text
        assert threads_asked(["eval"], {"IRMETRICS_THREADS": text}) == expected, text
    # argparse's abbreviations of --threads (no other option starts with --th)
    assert threads_asked(["eval", "--thr", "1"], {}) == 1
    assert threads_asked(["eval", "--threa=3", "q", "r"], {}) == 3
    assert threads_asked(["eval", "--t", "1"], {}) is None  # --ties too: argparse refuses
    # after --, only file names
    assert threads_asked(["eval", "-q", "--", "qrels", "--threads=3"], {}) is None
    assert threads_asked(["eval", "--", "--threads", "3"], {"IRMETRICS_THREADS": "2"}) == 2


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=6),
                      st.text(alphabet="0123456789 +-_\u00b2\u0663\u00a0e.", max_size=6)))
def test_threads_asked_agrees_with_the_commands_parser(text):
    # threads_asked is the command's --threads (parse_threads) and IRMETRICS_THREADS
    # (resolve_threads) read before polars loads: where they take a count it is the
    # same, where they refuse the value it is None.
    from irmetrics.__main__ import threads_asked
    from irmetrics.cli.options import parse_threads
    from irmetrics.exceptions import ParameterError

    try:
        taken = parse_threads(text)
    except ParameterError:
        taken = None
    assert threads_asked(["eval", f"--threads={text}"], {}) == taken
    assert threads_asked(["eval", "--threads", text], {"IRMETRICS_THREADS": "7"}) == taken


def test_a_bad_or_abbreviated_thread_count_in_the_process(tmp_path):
    # '²': the command's own error (status 1, its message, no traceback), the pool left alone
    env = {k: v for k, v in os.environ.items() if k not in ("POLARS_MAX_THREADS",
                                                           "IRMETRICS_THREADS")}
    done = subprocess.run([sys.executable, "-m", "irmetrics", "eval", "--threads", "\u00b2",
                           "-m", "map", "qrels", "run"], capture_output=True, timeout=120,
                          env={**env, "PYTHONPATH": str(ROOT)}, cwd=tmp_path)
    assert b"Traceback" not in done.stderr and done.stdout == b""
    assert b"`--threads` must be an integer between 1 and 1024" in done.stderr
    out, (status, _, _, variable, pool) = _probe(tmp_path, {}, args=("--thr", "1"))
    assert status == 0 and (variable, pool) == ("1", 1)
